/*
 * cmd_scorer.c - the shared half of `patchtriage score` and `explain` (see
 * cmd_scorer.h): argument parsing, reading a mail or a commit, and the
 * scores, reasons and check descriptions of verdict_score(), as the
 * daemon computes them.
 */
#include "bot/cmd/cmd_scorer.h"

#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/lists/archive.h"
#include "scoring/stable/stable.h"
#include "bot/cmd/opt.h"

int scorer_model_dir(struct buf *out, struct cli_ctx *ctx, const char *task)
{
	const char *dir;
	int rc = cli_state_dir(ctx, &dir);

	return rc ? rc : buf_addf(out, "%s/models/%s", dir, task);
}

void scorer_free(struct scorer *s)
{
	size_t t;

	for (t = 0; t < SCORER_NTASKS; t++)
		free(s->check[t]);
	verdict_clear(&s->v);
	lookup_free(s->lists.lk);
	thread_free(s->lists.th);
	triage_free(s->tri);
	patch_free(s->patch);
	memset(s, 0, sizeof(*s));
}

int scorer_put_json(json_t *j, const struct scorer *s, int digits)
{
	static const char *const keys[SCORER_NTASKS] = { "fix", "risk" };
	json_t *check = json_object(), *uncounted;
	char *text;
	size_t t, i;

	for (t = 0; t < SCORER_NTASKS; t++)
		if (s->model[t])
			json_object_set_new(check, keys[t],
					    s->check[t]
						    ? json_string(s->check[t])
						    : json_null());
	json_object_set_new(j, "check", check);
	json_object_set_new(j, "history", json_boolean(s->have_history));
	json_object_set_new(j, "merge",
			    s->nparents > 1
				    ? json_pack("{s:i, s:s}", "parents",
						(int)s->nparents, "against",
						s->patch->parent_id)
				    : json_null());
	uncounted = json_array();
	for (i = 0; i < s->patch->nuncounted; i++)
		json_array_append_new(uncounted,
				      json_string(s->patch->uncounted[i]));
	json_object_set_new(j, "uncounted", uncounted);
	text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(digits));
	json_decref(j);
	if (!text)
		return cli_fail("out of memory");
	puts(text);
	free(text);
	return EXIT_OK;
}

/*
 * The models, the mined history and the threading tables, as the daemon
 * opens them (thread features are read back, so no sentiment lexicon).
 */
static int open_triage(struct scorer *s, struct cli_ctx *ctx, const char *repo)
{
	struct triage_opts o = { .repo = repo };
	struct db *db = NULL;
	int rc = cli_db(ctx, &db);

	if (!rc)
		rc = triage_open_opts(&s->tri, db, ctx->state_dir, &o);
	if (!rc)
		rc = thread_open(&s->lists.th, db, NULL);
	if (!rc)
		rc = lookup_new(&s->lists.lk, db);
	return rc;
}

static int read_commit(struct scorer *s, const char *repo_dir, const char *rev)
{
	git_repository *repo = NULL;
	git_object *obj = NULL;
	int rc = 0;

	git_libgit2_init();
	if (git_repository_open(&repo, repo_dir) ||
	    git_revparse_single(&obj, repo, rev) ||
	    git_object_type(obj) != GIT_OBJECT_COMMIT)
		rc = pt_error_set(PT_ENOTFOUND,
				  "cannot read commit '%s' in "
				  "'%s': %s",
				  rev, repo_dir,
				  git_error_last() ? git_error_last()->message
						   : "not a commit");
	else
		rc = patch_from_commit(&s->patch, repo, (git_commit *)obj);
	if (!rc)
		s->nparents = git_commit_parentcount((git_commit *)obj);
	git_object_free(obj);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}

/* What the scores of a commit leave out: unread files, other parents. */
static void warn_commit(const struct scorer *s)
{
	cli_warn_uncounted(s->patch);
	if (s->nparents > 1)
		cli_warn("commit %.12s is a merge of %u parents: scored as "
			 "its diff against the first parent, %.12s",
			 s->patch->commit_id, s->nparents, s->patch->parent_id);
}

/* The first message of a mail file or mbox, parsed as it streams by. */
struct first_mail {
	struct patch *p;
	size_t n;    /* messages seen (stops at the second) */
	int rc;	     /* the first one's parse error */
	char *why;   /* ... its message */
	size_t size; /* of the first one, when it is over the limit */
};

static int first_cb(const char *msg, size_t len, const char *pos, void *ctx)
{
	struct first_mail *f = ctx;

	(void)pos;
	if (f->n++)
		return 1; /* a second message: stop reading */
	if (!msg) {
		f->size = len;
		return 0;
	}
	f->rc = patch_from_mail(&f->p, msg, len);
	if (f->rc)
		f->why = pt_strdup(pt_error_last());
	return 0;
}

/*
 * FILE is read as a stream (archive_mbox_foreach), so an mbox of any
 * size costs one message: its first message is scored and the reading
 * stops at the second, with a warning.
 */
static int read_mail(struct patch **out, const char *file)
{
	const char *name = strcmp(file, "-") ? file : "<stdin>";
	struct first_mail f = { NULL, 0, 0, NULL, 0 };
	struct archive_walk w;
	int rc = archive_mbox_foreach(&w, file, first_cb, &f);

	if (!rc && !f.n)
		rc = pt_error_set(PT_EINVAL, "no message in '%s'", name);
	else if (!rc && f.size)
		rc = pt_error_set(PT_ETOOBIG,
				  "cannot parse '%s': message of %zu bytes "
				  "is over the %u-byte limit",
				  name, f.size, PT_MAX_MAIL_SIZE);
	else if (!rc && f.rc)
		rc = pt_error_set(f.rc, "cannot parse '%s': %s", name,
				  f.why ? f.why : "out of memory");
	else if (!rc && !f.p->nfiles)
		rc = pt_error_set(PT_EINVAL, "'%s' has no diff", name);
	if (!rc && f.n > 1)
		cli_warn("'%s' holds more than one message: scoring the "
			 "first",
			 name);
	if (!rc) {
		*out = f.p;
		f.p = NULL;
	}
	patch_free(f.p);
	free(f.why);
	return rc;
}

/*
 * The Fixes: line the daemon suggests for an untagged fix, blaming in
 * the configured run.repo as it does; *out NULL when there is none.
 */
static int suggest_fixes(char **out, struct cli_ctx *ctx, const struct patch *p)
{
	struct config *cfg;
	git_repository *repo = NULL;
	char *path = NULL;
	int rc;

	*out = NULL;
	rc = cli_config(ctx, &cfg);
	if (!rc)
		rc = config_get_string(cfg, "run.repo", NULL, &path);
	if (rc || !path || patch_is_tagged_fix(p)) {
		free(path);
		return rc;
	}
	git_libgit2_init();
	if (git_repository_open(&repo, path))
		rc = pt_error_set(PT_ENOTFOUND,
				  "config '%s': run.repo '%s' is "
				  "not a git repository",
				  config_path(cfg), path);
	else
		rc = stable_suggest_fixes(out, repo, p, NULL);
	if (repo && (rc == PT_ENOTFOUND || rc == PT_EINVAL)) {
		pt_error_clear(); /* nothing to blame: "Fixes:" alone */
		rc = 0;
	}
	git_repository_free(repo);
	git_libgit2_shutdown();
	free(path);
	return rc;
}

static int describe_checks(struct scorer *s, struct cli_ctx *ctx)
{
	char *fixes = NULL;
	size_t t;
	int rc = 0;

	if (s->v.res.task[TRIAGE_FIX].have)
		rc = suggest_fixes(&fixes, ctx, s->patch);
	for (t = 0; !rc && t < SCORER_NTASKS; t++)
		rc = verdict_check(&s->check[t], &s->v, (enum triage_task)t,
				   s->patch, fixes);
	free(fixes);
	return rc;
}

static int score(struct scorer *s, struct cli_ctx *ctx)
{
	const char *why;
	size_t t;
	int rc;

	s->have_history = triage_history(s->tri, &why);
	if (!s->have_history && why)
		cli_warn("%s; scoring without history", why);
	rc = verdict_score(&s->v, s->tri, &s->lists, s->patch);
	for (t = 0; !rc && t < SCORER_NTASKS; t++) {
		const struct triage_score *ts = &s->v.res.task[t];

		s->model[t] = ts->have ? ts->model : NULL;
		s->p[t] = ts->p;
		s->why[t] = ts->why;
		s->nwhy[t] = ts->nwhy;
		s->bias[t] = ts->bias;
	}
	return rc ? rc : describe_checks(s, ctx);
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
		rc = rev ? read_commit(s, repo, rev)
			 : read_mail(&s->patch, file);
	if (!rc)
		rc = score(s, ctx);
	if (!rc)
		warn_commit(s);
	if (rc) {
		scorer_free(s);
		return cli_fail_last();
	}
	return EXIT_OK;
}

int scorer_main(int argc, char **argv, struct cli_ctx *ctx, const char *cmd,
		int (*json)(const struct scorer *s),
		void (*text)(struct buf *out, const struct scorer *s))
{
	struct scorer s;
	struct buf out = BUF_INIT;
	int want_json, rc;

	rc = scorer_run(&s, &want_json, argc, argv, ctx, cmd);
	if (rc)
		return opt_exit(rc);
	if (want_json) {
		rc = json(&s);
		scorer_free(&s);
		return rc;
	}
	text(&out, &s);
	fputs(out.ptr ? out.ptr : "", stdout);
	buf_free(&out);
	scorer_free(&s);
	return EXIT_OK;
}
