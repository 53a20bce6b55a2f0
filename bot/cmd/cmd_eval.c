/*
 * cmd_eval.c - `patchtriage eval`: walk-forward evaluation of both
 * classifiers and every baseline on the mined repository
 * (scoring/model/eval.c) on the rows from the label-regime start on (--since
 * overrides it); writes eval.md and SVG plots to --out DIR (default
 * <state>/eval) and prints the Markdown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scoring/model/dataset.h"
#include "scoring/model/eval.h"
#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"

static int tty;

static void rows_progress(size_t done, size_t total, void *ctx)
{
	(void)ctx;
	if (tty)
		fprintf(stderr, "\r\033[Kfeatures: %zu/%zu commits", done,
			total);
}

static void eval_progress(const char *what, void *ctx)
{
	(void)ctx;
	if (tty)
		fprintf(stderr, "\r\033[K%s", what);
}

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
	struct db *db;
	int64_t repo_id;
	int i, rc;

	if (cli_wants_help(argc, argv, "eval"))
		return EXIT_OK;
	eval_opts_default(&o);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--out") && v)
			outdir = argv[++i];
		else if (!strcmp(a, "--repo") && v)
			repo = argv[++i];
		else if (!strcmp(a, "--title") && v)
			title = argv[++i];
		else if (!strcmp(a, "--task") && v)
			task = argv[++i];
		else if (!strcmp(a, "--folds") && v)
			o.folds = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(a, "--horizon") && v)
			o.horizon = strtoll(argv[++i], NULL, 10) * 86400;
		else if (!strcmp(a, "--max-rows") && v)
			dopt.max_rows = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(a, "--since") && v) {
			if (dataset_parse_since(&dopt.since, argv[++i]))
				return cli_usage("eval", "%s",
						 pt_error_last());
		} else
			return cli_usage("eval", "unknown argument '%s'", a);
	}
	if (!strcmp(task, "fix"))
		o.tasks = 1;
	else if (!strcmp(task, "risk"))
		o.tasks = 2;
	else if (strcmp(task, "all"))
		return cli_usage("eval", "--task is fix, risk or all");
	if (!o.folds || o.folds > 16)
		return cli_usage("eval", "--folds is 1 to 16");
	tty = isatty(2) && !ctx->quiet;
	command_line(&cmdline, argc, argv);
	o.command = cmdline.ptr;
	o.title = title ? title : repo ? repo : "mined repository";
	o.progress = eval_progress;
	dopt.hash_bits = MODEL_HASH_BITS;
	dopt.progress = rows_progress;
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
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (!rc && !ctx->quiet)
		fputs(md.ptr, stdout);
	dataset_free(ds);
	buf_free(&md);
	buf_free(&out);
	buf_free(&cmdline);
	return rc ? cli_fail_last() : EXIT_OK;
}
