/*
 * cmd_scorer.c - the shared half of `patchtriage score` and `explain` (see
 * cmd_scorer.h): argument parsing, model loading, reading a mail or a
 * commit, features as of the patch, predictions and reasons.
 */
#include "bot/cmd/cmd_scorer.h"

#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/model/dataset.h"

static const char *const tasks[SCORER_NTASKS] = { "fix", "risk" };

int scorer_model_dir(struct buf *out, struct cli_ctx *ctx, const char *task)
{
	const char *dir;
	int rc = cli_state_dir(ctx, &dir);

	return rc ? rc : buf_addf(out, "%s/models/%s", dir, task);
}

void scorer_free(struct scorer *s)
{
	size_t i;

	for (i = 0; i < SCORER_NTASKS; i++) {
		model_free(s->model[i]);
		explain_free(s->why[i], s->nwhy[i]);
	}
	feat_vec_free(&s->vec);
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

static int load_models(struct scorer *s, struct cli_ctx *ctx)
{
	struct buf dir = BUF_INIT;
	size_t i, found = 0;
	int rc = 0;

	for (i = 0; i < SCORER_NTASKS && !rc; i++) {
		buf_reset(&dir);
		rc = scorer_model_dir(&dir, ctx, tasks[i]);
		if (rc || access(dir.ptr, F_OK))
			continue;
		rc = model_load(&s->model[i], dir.ptr);
		found += !rc;
	}
	buf_free(&dir);
	if (!rc && !found)
		rc = pt_error_set(PT_ENOTFOUND, "no trained model in '%s/models'"
				  "; run 'patchtriage train'", ctx->state_dir);
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

static int features(struct scorer *s, struct cli_ctx *ctx, const char *repo)
{
	struct feat_ctx *fc = NULL;
	struct db *db = NULL;
	int64_t repo_id = 0;
	int rc;

	rc = cli_db(ctx, &db);
	if (!rc && dataset_repo(&repo_id, db, repo)) {
		cli_warn("%s; scoring without history", pt_error_last());
		db = NULL;
	}
	s->have_history = db != NULL;
	if (!rc)
		rc = feat_ctx_new(&fc, db, repo_id);
	if (!rc)
		rc = feat_compute(&s->vec, fc, s->patch, NULL,
				  MODEL_HASH_BITS, FEAT_NAMES);
	feat_ctx_free(fc);
	return rc;
}

int scorer_run(struct scorer *s, int *json, int argc, char **argv,
	       struct cli_ctx *ctx, const char *cmd)
{
	const char *repo = NULL, *rev = NULL, *file = NULL;
	size_t t;
	int i, rc;

	memset(s, 0, sizeof(*s));
	*json = 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			*json = 1;
		else if (!strcmp(argv[i], "--repo") && i + 1 < argc)
			repo = argv[++i];
		else if (!strcmp(argv[i], "--commit") && i + 1 < argc)
			rev = argv[++i];
		else if (argv[i][0] == '-' && strcmp(argv[i], "-"))
			return cli_usage(cmd, "unknown option '%s'", argv[i]);
		else if (!file)
			file = argv[i];
		else
			return cli_usage(cmd, "unexpected argument '%s'",
					 argv[i]);
	}
	if (!!rev == !!file)
		return cli_usage(cmd, "give a FILE, '-' or --commit REV");
	if (rev && !repo)
		return cli_usage(cmd, "--commit needs --repo DIR");
	rc = load_models(s, ctx);
	if (!rc)
		rc = rev ? read_commit(&s->patch, repo, rev)
			 : read_mail(&s->patch, file);
	if (!rc)
		rc = features(s, ctx, repo);
	for (t = 0; !rc && t < SCORER_NTASKS; t++) {
		if (!s->model[t])
			continue;
		rc = model_predict(&s->p[t], s->model[t], s->vec.tab,
				   s->vec.sp, s->vec.nsp);
		if (!rc)
			rc = explain_vec(&s->why[t], &s->nwhy[t], &s->bias[t],
					 s->model[t], &s->vec);
	}
	if (rc) {
		scorer_free(s);
		return cli_fail_last();
	}
	return EXIT_OK;
}
