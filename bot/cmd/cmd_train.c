/*
 * cmd_train.c - `patchtriage train`: build the rows of the mined
 * repository from its label-regime start on (dataset.h; --since
 * overrides it), fit the fix and/or risk model (scoring/model/model.c) on them
 * in time order, and save each under <state>/models/<task> with the
 * start and its reason in the manifest.  Shows progress on a terminal
 * (progress.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scoring/model/dataset.h"
#include "bot/cmd/cli.h"
#include "bot/cmd/cmd_scorer.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/cmd/progress.h"

struct train_show {
	struct progress line;
	const char *task;
	unsigned jobs; /* --jobs: the liblinear fits side by side */
	char stage[64];
};

/* done is the share of the phase; a phase is a stage of its own */
static void model_progress(const char *phase, double done, void *ctx)
{
	struct train_show *pr = ctx;
	struct pt_progress_report r = { pr->stage, NULL, 0, 0, done, NULL };

	snprintf(pr->stage, sizeof(pr->stage), "%s: %s", pr->task, phase);
	progress_show(&pr->line, &r);
}

static int train_task(struct dataset *ds, enum dataset_task t,
		      struct cli_ctx *ctx, struct train_show *pr)
{
	unsigned char use[FEAT_NTAB];
	struct model_params p;
	struct pt_model *m = NULL;
	struct buf dir = BUF_INIT;
	size_t *idx = NULL, n;
	int rc;

	pr->task = dataset_task_name(t);
	dataset_task_mask(use, t);
	dataset_set_labels(ds, t, INT64_MAX);
	rc = dataset_rows(&idx, &n, ds, t, 0, INT64_MAX, INT64_MAX, 0);
	if (rc)
		goto out;
	model_params_default(&p, MODEL_KIND_FULL);
	p.task = pr->task;
	p.jobs = pr->jobs;
	p.tab_use = use;
	p.progress = model_progress;
	p.progress_ctx = pr;
	rc = model_train(&m, ds->d, idx, n, &p);
	if (!rc)
		rc = model_set_note(m, "label_regime", ds->regime.why);
	if (!rc)
		rc = scorer_model_dir(&dir, ctx, pr->task);
	if (!rc) {
		const char *state;

		/* models/ itself */
		rc = cli_state_dir(ctx, &state);
		if (!rc) {
			struct buf md = BUF_INIT;

			buf_addf(&md, "%s/models", state);
			mkdir(md.ptr, 0700);
			buf_free(&md);
		}
	}
	if (!rc)
		rc = model_save(m, dir.ptr);
	progress_end(&pr->line);
	if (!rc && !ctx->quiet)
		printf("%-4s model %s: %zu commits, saved to %s\n", pr->task,
		       model_version(m), n, dir.ptr);
out:
	model_free(m);
	free(idx);
	buf_free(&dir);
	return rc;
}

/*
 * The regime, then how the labelled commits from its start become the
 * rows the models count, so the two numbers can be told apart.
 */
static void print_rows(const struct dataset *ds)
{
	struct buf b = BUF_INIT;

	printf("label regime: %s\n", ds->regime.why);
	if (!dataset_rows_note(&b, ds))
		printf("rows:         %s\n", b.ptr);
	buf_free(&b);
}

int cmd_train(int argc, char **argv, struct cli_ctx *ctx)
{
	struct dataset_opts o = { .since = DATASET_SINCE_AUTO };
	struct train_show pr;
	struct dataset *ds = NULL;
	const char *task = "all", *repo = NULL, *since = NULL;
	struct db *db;
	int64_t repo_id;
	long long max_rows = 0, max_mib = DATASET_DEFAULT_MIB;
	long long jobs = cli_default_jobs();
	size_t npos;
	int rc;
	const struct opt opts[] = {
		OPTION_STRING(0, "task", &task),
		OPTION_STRING(0, "repo", &repo),
		OPTION_STRING(0, "since", &since),
		OPTION_INT(0, "max-rows", &max_rows, 0, OPT_NOMAX),
		OPTION_INT(0, "max-memory", &max_mib, 0, 1 << 20),
		OPTION_INT(0, "jobs", &jobs, 1, CLI_MAX_JOBS),
		OPTION_END,
	};

	if (cmd_archive_given(argc, argv))
		return cmd_train_archive(argc, argv, ctx);

	rc = opt_parse("train", opts, argc, argv, NULL, 0, &npos);
	if (rc)
		return opt_exit(rc);
	if (since && dataset_parse_since(&o.since, since))
		return cli_usage("train", "%s", pt_error_last());
	o.max_rows = (size_t)max_rows;
	o.max_bytes = (size_t)max_mib << 20;
	o.jobs = (unsigned)jobs;
	if (strcmp(task, "fix") && strcmp(task, "risk") && strcmp(task, "all"))
		return cli_usage("train", "--task is fix, risk or all");
	memset(&pr, 0, sizeof(pr));
	pr.jobs = o.jobs;
	progress_init(&pr.line, ctx);
	o.hash_bits = MODEL_HASH_BITS;
	o.progress = progress_cb(&pr.line);
	rc = cli_db(ctx, &db);
	if (!rc)
		rc = dataset_repo(&repo_id, db, repo);
	if (!rc)
		rc = dataset_build(&ds, db, repo_id, &o);
	progress_end(&pr.line);
	if (!rc && !ctx->quiet)
		print_rows(ds);
	if (!rc && strcmp(task, "risk"))
		rc = train_task(ds, TASK_FIX, ctx, &pr);
	if (!rc && strcmp(task, "fix"))
		rc = train_task(ds, TASK_RISK, ctx, &pr);
	dataset_free(ds);
	progress_end(&pr.line);
	return rc ? cli_fail_last() : EXIT_OK;
}
