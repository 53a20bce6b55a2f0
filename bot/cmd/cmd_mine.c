/*
 * cmd_mine.c - `patchtriage mine`: mine a repository's history into the
 * state database (scoring/history/history.c) and print what was found; progress
 * on a terminal (progress.c), the label report with --report.
 */
#include <limits.h>
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scoring/history/history.h"
#include "scoring/history/labels.h"
#include "scoring/model/histsum.h"
#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/cmd/progress.h"

struct mine_show {
	struct progress line;
	int verbose; /* print each stage's start time */
	const char *stage;
};

static void show_progress(const struct mine_progress *p, void *ctx)
{
	struct mine_show *pr = ctx;
	struct pt_progress_report r = { p->stage, p->total ? "commits" : NULL,
					p->done,  p->total,
					0,	  NULL };

	if (pr->verbose && pr->stage != p->stage) {
		fprintf(stderr, "%s%s at %.2f s\n",
			pr->line.shown ? "\r\033[K" : "", p->stage, p->elapsed);
		pr->line.shown = 0;
		pr->stage = p->stage;
	}
	progress_show(&pr->line, &r);
}

/* YYYY-MM-DD[THH:MM[:SS]] in UTC, or @EPOCH. */
static int parse_date(int64_t *out, const char *s)
{
	struct tm tm;
	const char *end;
	char *e;

	if (*s == '@') {
		errno = 0;
		*out = strtoll(s + 1, &e, 10);
		return *e || e == s + 1 || errno ? -1 : 0;
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (end && (*end == 'T' || *end == ' ')) {
		const char *t = strptime(end + 1, "%H:%M:%S", &tm);

		end = t ? t : strptime(end + 1, "%H:%M", &tm);
	}
	if (!end || *end)
		return -1;
	*out = (int64_t)timegm(&tm);
	return 0;
}

struct mine_args {
	struct mine_opts o;
	int report;
	char *repo;
};

/* The most diff threads --threads takes; mining uses at most 16. */
#define MAX_THREADS 1024

static int parse_args(struct mine_args *a, int argc, char **argv,
		      struct cli_ctx *ctx)
{
	const char *repo = NULL, *since = NULL;
	long long threads = 0, horizon = 0;
	size_t npos;
	int rc;
	const struct opt opts[] = {
		OPTION_FLAG(0, "first-parent", &a->o.first_parent),
		OPTION_FLAG(0, "report", &a->report),
		OPTION_FLAG('q', "quiet", &ctx->quiet),
		OPTION_STRING(0, "repo", &repo),
		OPTION_STRING(0, "rev", &a->o.rev),
		OPTION_STRING(0, "since", &since),
		OPTION_INT(0, "threads", &threads, 0, MAX_THREADS),
		OPTION_STRING(0, "tag-pattern", &a->o.tag_pattern),
		OPTION_STRING(0, "labels", &a->o.labels_conf),
		OPTION_INT(0, "horizon", &horizon, 1, INT_MAX),
		OPTION_END,
	};

	rc = opt_parse("mine", opts, argc, argv, NULL, 0, &npos);
	if (rc)
		return rc;
	if (since && parse_date(&a->o.since, since))
		return cli_usage("mine", "bad date '%s'", since);
	a->o.threads = (unsigned)threads;
	a->o.horizon_days = (int)horizon;
	if (!repo)
		return cli_usage("mine", "--repo is required");
	a->repo = realpath(repo, NULL);
	if (!a->repo)
		return cli_fail("cannot open repository '%s'", repo);
	a->o.repo = a->repo;
	return 0;
}

static void print_result(const struct mine_result *r, const char *repo)
{
	printf("mined %zu new commits from '%s' (%zu in the database)\n",
	       r->walked, repo, r->commits);
	printf("tags:        %zu release tags, %zu of the mainline (the "
	       "others, of stable branches, place no commit)\n",
	       r->tags, r->mainline_tags);
	printf("fixes:       %zu commits with Fixes: (%.1f%%), %zu labelled "
	       "fix\n",
	       r->with_fixes,
	       r->commits ? 100.0 * (double)r->with_fixes / (double)r->commits
			  : 0.0,
	       r->fixes);
	printf("bugs:        %zu commits labelled bug-introducing\n", r->bugs);
}

/*
 * Every file diff reads two blobs into fresh buffers.  glibc serves
 * ones above 128 KiB (its threshold grows only as such blocks are freed)
 * with mmap and gives freed memory at the top of a heap back at once, so
 * the next blob faults in zeroed pages again: 5.7% of mining's samples
 * on rdma-core.  Keep blocks up to 4 MiB on the heaps and up to 8 MiB
 * free at a heap's top: on DPDK, sys time 5.6 -> 4.1 s and the same
 * peak RSS (16 and 32 MiB raised it by 40 MiB).
 */
static void tune_malloc(void)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
}

int cmd_mine(int argc, char **argv, struct cli_ctx *ctx)
{
	struct mine_args a;
	struct mine_result r;
	struct mine_show pr = { { 0 }, 0, NULL };
	struct db *db;
	struct buf rep = BUF_INIT;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = parse_args(&a, argc, argv, ctx);
	if (rc) {
		rc = opt_exit(rc);
		goto out;
	}
	if (cli_db(ctx, &db)) {
		rc = cli_fail_last();
		goto out;
	}
	tune_malloc();
	progress_init(&pr.line, ctx);
	pr.verbose = ctx->verbose;
	a.o.progress = show_progress;
	a.o.progress_ctx = &pr;
	a.o.summarise = histsum_build;
	rc = mine_run(&r, db, &a.o);
	progress_end(&pr.line);
	if (rc) {
		rc = cli_fail_last();
		goto out;
	}
	if (r.uncounted)
		cli_warn("%zu file changes not counted: their blobs are "
			 "missing from the object database",
			 r.uncounted);
	if (!ctx->quiet)
		print_result(&r, a.repo);
	/* one block: the summary lines, or the report that starts with them */
	if (a.report)
		rc = labels_report(&rep, db, r.repo_id);
	else if (!ctx->quiet)
		rc = labels_summary(&rep, db, r.repo_id);
	if (rc) {
		rc = cli_fail_last();
		goto out;
	}
	if (rep.ptr)
		fputs(rep.ptr, stdout);
	rc = EXIT_OK;
out:
	buf_free(&rep);
	free(a.repo);
	return rc;
}
