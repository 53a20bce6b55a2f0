/*
 * cmd_eval.c - `patchtriage eval`: walk-forward evaluation of both
 * classifiers and every baseline on the mined repository
 * (scoring/model/eval.c) on the rows from the label-regime start on (--since
 * overrides it); writes eval.md and SVG plots to --out DIR (default
 * <state>/eval) and prints the Markdown.  Progress on a terminal
 * (progress.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scoring/model/dataset.h"
#include "scoring/model/eval.h"
#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/cmd/progress.h"

/* eval_run() makes at most this many test periods */
#define MAX_FOLDS 16

static int command_line(struct buf *b, int argc, char **argv)
{
	int i;

	buf_addstr(b, "patchtriage");
	for (i = 0; i < argc; i++)
		buf_addf(b, " %s", argv[i]);
	return 0;
}

int cmd_eval(int argc, char **argv, struct cli_ctx *ctx)
{
	struct dataset_opts dopt = { .since = DATASET_SINCE_AUTO };
	struct eval_opts o;
	struct dataset *ds = NULL;
	struct buf md = BUF_INIT, out = BUF_INIT, cmdline = BUF_INIT;
	const char *repo = NULL, *outdir = NULL, *task = "all", *title = NULL;
	const char *since = NULL;
	struct progress pr;
	struct db *db;
	int64_t repo_id;
	long long folds, horizon, max_rows = 0;
	long long max_mib = DATASET_DEFAULT_MIB, jobs = cli_default_jobs();
	size_t npos;
	int rc;
	const struct opt opts[] = {
		OPTION_STRING(0, "out", &outdir),
		OPTION_STRING(0, "repo", &repo),
		OPTION_STRING(0, "title", &title),
		OPTION_STRING(0, "task", &task),
		OPTION_INT(0, "folds", &folds, 1, MAX_FOLDS),
		OPTION_INT(0, "horizon", &horizon, 0, INT_MAX),
		OPTION_INT(0, "max-rows", &max_rows, 0, OPT_NOMAX),
		OPTION_INT(0, "max-memory", &max_mib, 0, 1 << 20),
		OPTION_INT(0, "jobs", &jobs, 1, CLI_MAX_JOBS),
		OPTION_STRING(0, "since", &since),
		OPTION_END,
	};

	if (cmd_archive_given(argc, argv))
		return cmd_eval_archive(argc, argv, ctx);

	eval_opts_default(&o);
	folds = o.folds;
	horizon = -1; /* not given: the default of eval_opts_default() */
	rc = opt_parse("eval", opts, argc, argv, NULL, 0, &npos);
	if (rc)
		return opt_exit(rc);
	if (since && dataset_parse_since(&dopt.since, since))
		return cli_usage("eval", "%s", pt_error_last());
	o.folds = (unsigned)folds;
	if (horizon >= 0)
		o.horizon = (int64_t)horizon * 86400;
	dopt.max_rows = (size_t)max_rows;
	dopt.max_bytes = (size_t)max_mib << 20;
	dopt.jobs = (unsigned)jobs;
	o.jobs = (unsigned)jobs;
	if (!strcmp(task, "fix"))
		o.tasks = 1;
	else if (!strcmp(task, "risk"))
		o.tasks = 2;
	else if (strcmp(task, "all"))
		return cli_usage("eval", "--task is fix, risk or all");
	progress_init(&pr, ctx);
	command_line(&cmdline, argc, argv);
	o.command = cmdline.ptr;
	o.title = title ? title : repo ? repo : "mined repository";
	o.progress = progress_cb(&pr);
	dopt.hash_bits = MODEL_HASH_BITS;
	dopt.progress = o.progress;
	rc = cli_db(ctx, &db);
	if (!rc)
		rc = dataset_repo(&repo_id, db, repo);
	if (!rc && !outdir) {
		rc = buf_addf(&out, "%s/eval", ctx->state_dir);
		outdir = out.ptr;
	}
	if (!rc)
		rc = dataset_build(&ds, db, repo_id, &dopt);
	if (!rc)
		rc = eval_run(&md, ds, &o, outdir);
	progress_end(&pr);
	if (!rc && !ctx->quiet)
		fputs(md.ptr, stdout);
	dataset_free(ds);
	buf_free(&md);
	buf_free(&out);
	buf_free(&cmdline);
	return rc ? cli_fail_last() : EXIT_OK;
}
