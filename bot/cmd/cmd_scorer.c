/*
 * cmd_scorer.c - the shared half of `patchtriage score` and `explain` (see
 * cmd_scorer.h): argument parsing, reading a mail or a commit, and the
 * scores and reasons of triage_score(), as the daemon computes them.
 */
#include "bot/cmd/cmd_scorer.h"

#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/cmd/opt.h"

int scorer_model_dir(struct buf *out, struct cli_ctx *ctx, const char *task)
{
	const char *dir;
	int rc = cli_state_dir(ctx, &dir);

	return rc ? rc : buf_addf(out, "%s/models/%s", dir, task);
}

void scorer_free(struct scorer *s)
{
	triage_result_clear(&s->res);
	triage_free(s->tri);
	patch_free(s->patch);
	memset(s, 0, sizeof(*s));
}

int scorer_put_json(json_t *j, const struct scorer *s, int digits)
{
	char *text;

	json_object_set_new(j, "history", json_boolean(s->have_history));
	text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(digits));
	json_decref(j);
	if (!text)
		return cli_fail("out of memory");
	puts(text);
	free(text);
	return EXIT_OK;
}

/* The models and the mined history, as the daemon opens them. */
static int open_triage(struct scorer *s, struct cli_ctx *ctx,
		       const char *repo)
{
	struct triage_opts o = { .repo = repo };
	struct db *db = NULL;
	int rc = cli_db(ctx, &db);

	if (!rc)
		rc = triage_open_opts(&s->tri, db, ctx->state_dir, &o);
	return rc;
}

static int read_commit(struct patch **out, const char *repo_dir,
		       const char *rev)
{
	git_repository *repo = NULL;
	git_object *obj = NULL;
	int rc = 0;

	git_libgit2_init();
	if (git_repository_open(&repo, repo_dir) ||
	    git_revparse_single(&obj, repo, rev) ||
	    git_object_type(obj) != GIT_OBJECT_COMMIT)
		rc = pt_error_set(PT_ENOTFOUND, "cannot read commit '%s' in "
				  "'%s': %s", rev, repo_dir,
				  git_error_last() ? git_error_last()->message
						   : "not a commit");
	else
		rc = patch_from_commit(out, repo, (git_commit *)obj);
	git_object_free(obj);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}

static int read_mail(struct patch **out, const char *file)
{
	struct buf b = BUF_INIT;
	int rc = pt_read_file(&b, file, PT_MAX_MAIL_SIZE);

	if (!rc)
		rc = patch_from_mail(out, b.ptr, b.len);
	if (!rc && !(*out)->nfiles)
		rc = pt_error_set(PT_EINVAL, "'%s' has no diff", file);
	buf_free(&b);
	return rc;
}

static int score(struct scorer *s)
{
	const char *why;
	size_t t;
	int rc;

	s->have_history = triage_history(s->tri, &why);
	if (!s->have_history && why)
		cli_warn("%s; scoring without history", why);
	rc = triage_score(&s->res, s->tri, s->patch, NULL);

	for (t = 0; !rc && t < SCORER_NTASKS; t++) {
		const struct triage_score *ts = &s->res.task[t];

		s->model[t] = triage_model(s->tri, (enum triage_task)t);
		s->p[t] = ts->p;
		s->why[t] = ts->why;
		s->nwhy[t] = ts->nwhy;
		s->bias[t] = ts->bias;
	}
	return rc;
}

int scorer_run(struct scorer *s, int *json, int argc, char **argv,
	       struct cli_ctx *ctx, const char *cmd)
{
	const char *repo = NULL, *rev = NULL, *file = NULL;
	size_t npos;
	int rc;
	const struct opt opts[] = {
		OPTION_FLAG(0, "json", json),
		OPTION_STRING(0, "repo", &repo),
		OPTION_STRING(0, "commit", &rev),
		OPTION_END,
	};

	memset(s, 0, sizeof(*s));
	*json = 0;
	rc = opt_parse(cmd, opts, argc, argv, &file, 1, &npos);
	if (rc)
		return rc;
	if (!!rev == !!file)
		return cli_usage(cmd, "give a FILE, '-' or --commit REV");
	if (rev && !repo)
		return cli_usage(cmd, "--commit needs --repo DIR");
	rc = open_triage(s, ctx, repo);
	if (!rc)
		rc = rev ? read_commit(&s->patch, repo, rev)
			 : read_mail(&s->patch, file);
	if (!rc)
		rc = score(s);
	if (rc) {
		scorer_free(s);
		return cli_fail_last();
	}
	return EXIT_OK;
}
