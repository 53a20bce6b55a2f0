/*
 * cmd_archeval.c - the `--archive` forms of `train` and `eval`: the
 * archive model learnt from the imported list archives (applied
 * postings, their list features as of the apply date, labelled by later
 * Fixes: and reverts; scoring/model/archds.h), evaluated walk-forward
 * against its baselines (scoring/model/archeval.h) or fitted and saved
 * under <state>/models/risk-archive, where the daemon finds it.
 * Progress on a terminal (progress.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "scoring/model/archds.h"
#include "scoring/model/archeval.h"
#include "bot/cmd/cli.h"
#include "bot/cmd/cmd_scorer.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/cmd/progress.h"

#define ARCHIVE_TASK "risk-archive"

int cmd_archive_given(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--archive"))
			return 1;
	return 0;
}

static void command_line(struct buf *b, int argc, char **argv)
{
	int i;

	buf_addstr(b, "patchtriage");
	for (i = 0; i < argc; i++)
		buf_addf(b, " %s", argv[i]);
}

static void rows_report(const struct pt_progress_report *r, void *ctx)
{
	progress_show(ctx, r);
}

/* A day YYYY-MM-DD as its midnight UTC; "all" (or NULL) as 0. */
static int parse_day(int64_t *out, const char *cmd, const char *opt,
		     const char *s)
{
	struct tm tm;
	char *end;

	*out = 0;
	if (!s || !strcmp(s, "all"))
		return EXIT_OK;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (!end || *end)
		return cli_usage(cmd, "--%s is YYYY-MM-DD or all, not '%s'",
				 opt, s);
	*out = (int64_t)timegm(&tm);
	return EXIT_OK;
}

static int build_rows(struct archds **ds, struct cli_ctx *ctx,
		      struct progress *pr, const char *cmd, const char *since,
		      const char *until)
{
	struct pt_progress cb = { rows_report, pr };
	struct db *db;
	int64_t from, to;
	int rc;

	rc = parse_day(&from, cmd, "since", since);
	if (rc == EXIT_OK)
		rc = parse_day(&to, cmd, "until", until);
	if (rc != EXIT_OK)
		return rc;
	rc = cli_db_existing(ctx, &db);
	if (!rc)
		rc = archds_build(ds, db, from, to, &cb);
	progress_end(pr);
	return rc ? cli_fail_last() : EXIT_OK;
}

int cmd_eval_archive(int argc, char **argv, struct cli_ctx *ctx)
{
	struct archeval_opts o;
	struct archds *ds = NULL;
	struct buf md = BUF_INIT, out = BUF_INIT, cmdline = BUF_INIT;
	const char *outdir = NULL, *title = NULL, *since = NULL, *until = NULL;
	struct progress pr;
	long long folds, horizon = -1, depth = 0;
	double mcw = 0;
	int archive = 0, rc;
	size_t npos;
	const struct opt opts[] = {
		OPTION_FLAG(0, "archive", &archive),
		OPTION_STRING(0, "out", &outdir),
		OPTION_STRING(0, "title", &title),
		OPTION_STRING(0, "since", &since),
		OPTION_STRING(0, "until", &until),
		OPTION_INT(0, "folds", &folds, 1, 16),
		OPTION_INT(0, "horizon", &horizon, 0, INT_MAX),
		OPTION_INT(0, "depth", &depth, 0, 16),
		OPTION_DOUBLE(0, "min-child-weight", &mcw, 0, 1e6),
		OPTION_END,
	};

	archeval_opts_default(&o);
	folds = o.folds;
	rc = opt_parse("eval", opts, argc, argv, NULL, 0, &npos);
	if (rc)
		return opt_exit(rc);
	o.folds = (unsigned)folds;
	if (depth)
		o.depth = (unsigned)depth;
	if (mcw > 0)
		o.min_child_weight = mcw;
	if (horizon >= 0)
		o.horizon = (int64_t)horizon * 86400;
	command_line(&cmdline, argc, argv);
	o.command = cmdline.ptr;
	o.title = title ? title : "imported list archives";
	progress_init(&pr, ctx);
	o.progress = progress_cb(&pr);
	rc = build_rows(&ds, ctx, &pr, "eval", since, until);
	if (rc == EXIT_OK && !outdir) {
		buf_addf(&out, "%s/eval-archive", ctx->state_dir);
		outdir = out.ptr;
	}
	if (rc == EXIT_OK && archeval_run(&md, ds, &o, outdir))
		rc = cli_fail_last();
	progress_end(&pr);
	if (rc == EXIT_OK && !ctx->quiet)
		fputs(md.ptr, stdout);
	archds_free(ds);
	buf_free(&md);
	buf_free(&out);
	buf_free(&cmdline);
	return rc;
}

struct train_show {
	struct progress line;
	char stage[64];
};

static void model_progress(const char *phase, double done, void *ctx)
{
	struct train_show *pr = ctx;
	struct pt_progress_report r = { pr->stage, NULL, 0, 0, done, NULL };

	snprintf(pr->stage, sizeof(pr->stage), ARCHIVE_TASK ": %s", phase);
	progress_show(&pr->line, &r);
}

static int save(struct pt_model *m, struct cli_ctx *ctx, size_t rows,
		size_t applied)
{
	struct buf dir = BUF_INIT, models = BUF_INIT;
	const char *state;
	int rc;

	rc = cli_state_dir(ctx, &state);
	if (!rc)
		rc = buf_addf(&models, "%s/models", state);
	if (!rc)
		mkdir(models.ptr, 0700);
	if (!rc)
		rc = scorer_model_dir(&dir, ctx, ARCHIVE_TASK);
	if (!rc)
		rc = model_save(m, dir.ptr);
	if (!rc && !ctx->quiet)
		printf(ARCHIVE_TASK
		       " model %s: %zu of the %zu applied postings "
		       "(those with a final label), saved to %s\n",
		       model_version(m), rows, applied, dir.ptr);
	buf_free(&dir);
	buf_free(&models);
	return rc;
}

int cmd_train_archive(int argc, char **argv, struct cli_ctx *ctx)
{
	struct train_show pr;
	struct archds *ds = NULL;
	struct pt_model *m = NULL;
	const char *since = NULL;
	size_t rows = 0;
	struct archeval_opts o;
	long long horizon = 365, depth = 0;
	double mcw = 0;
	int archive = 0, rc;
	size_t npos;
	const struct opt opts[] = {
		OPTION_FLAG(0, "archive", &archive),
		OPTION_STRING(0, "since", &since),
		OPTION_INT(0, "horizon", &horizon, 0, INT_MAX),
		OPTION_INT(0, "depth", &depth, 0, 16),
		OPTION_DOUBLE(0, "min-child-weight", &mcw, 0, 1e6),
		OPTION_END,
	};

	rc = opt_parse("train", opts, argc, argv, NULL, 0, &npos);
	if (rc)
		return opt_exit(rc);
	archeval_opts_default(&o);
	o.horizon = (int64_t)horizon * 86400;
	if (depth)
		o.depth = (unsigned)depth;
	if (mcw > 0)
		o.min_child_weight = mcw;
	memset(&pr, 0, sizeof(pr));
	progress_init(&pr.line, ctx);
	rc = build_rows(&ds, ctx, &pr.line, "train", since, NULL);
	if (rc == EXIT_OK &&
	    (archeval_train(&m, &rows, ds, &o, model_progress, &pr) ||
	     model_set_note(m, "data",
			    "applied postings of the imported list archives; "
			    "features as of the apply date") ||
	     save(m, ctx, rows, ds->n)))
		rc = cli_fail_last();
	progress_end(&pr.line);
	model_free(m);
	archds_free(ds);
	return rc;
}
