/*
 * cmd_mine.c - `patchtriage mine`: mine a repository's history into the
 * state database (scoring/history/history.c) and print what was found; progress
 * on a terminal, the label report with --report.
 */
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

struct progress {
	int tty;
	int shown;
	int verbose;        /* print each stage's start time */
	const char *stage;
};

static void show_progress(const struct mine_progress *p, void *ctx)
{
	struct progress *pr = ctx;
	double rate, eta;

	if (pr->verbose && pr->stage != p->stage) {
		fprintf(stderr, "%s%s at %.2f s\n", pr->shown ? "\r\033[K" : "",
			p->stage, p->elapsed);
		pr->stage = p->stage;
	}
	if (!pr->tty)
		return;
	if (!p->total) {
		fprintf(stderr, "\r\033[K%s...", p->stage);
		pr->shown = 1;
		return;
	}
	rate = p->elapsed > 0 ? (double)p->done / p->elapsed : 0;
	eta = rate > 0 ? (double)(p->total - p->done) / rate : 0;
	fprintf(stderr, "\r\033[K%s: %zu/%zu commits, %.0f/s, ETA %d:%02d",
		p->stage, p->done, p->total, rate, (int)eta / 60,
		(int)eta % 60);
	pr->shown = 1;
}

/* YYYY-MM-DD[THH:MM[:SS]] in UTC, or @EPOCH. */
static int parse_date(int64_t *out, const char *s)
{
	struct tm tm;
	const char *end;
	char *e;

	if (*s == '@') {
		*out = strtoll(s + 1, &e, 10);
		return *e || e == s + 1 ? -1 : 0;
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

static int need(int argc, char **argv, int i)
{
	return i + 1 < argc ? 0
			    : cli_usage("mine", "%s needs a value", argv[i]);
}

static int parse_args(struct mine_args *a, int argc, char **argv,
		      struct cli_ctx *ctx)
{
	const char *repo = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (!strcmp(s, "--first-parent")) {
			a->o.first_parent = 1;
		} else if (!strcmp(s, "--report")) {
			a->report = 1;
		} else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
			ctx->quiet = 1;
		} else if (!strcmp(s, "--repo") || !strcmp(s, "--rev") ||
			   !strcmp(s, "--since") || !strcmp(s, "--threads") ||
			   !strcmp(s, "--tag-pattern") ||
			   !strcmp(s, "--labels") || !strcmp(s, "--horizon")) {
			if (need(argc, argv, i))
				return EXIT_USAGE;
			if (!strcmp(s, "--repo")) {
				repo = argv[++i];
			} else if (!strcmp(s, "--rev")) {
				a->o.rev = argv[++i];
			} else if (!strcmp(s, "--since")) {
				if (parse_date(&a->o.since, argv[++i]))
					return cli_usage("mine", "bad date "
							 "'%s'", argv[i]);
			} else if (!strcmp(s, "--threads")) {
				a->o.threads = (unsigned)atoi(argv[++i]);
			} else if (!strcmp(s, "--tag-pattern")) {
				a->o.tag_pattern = argv[++i];
			} else if (!strcmp(s, "--labels")) {
				a->o.labels_conf = argv[++i];
			} else {
				a->o.horizon_days = atoi(argv[++i]);
				if (a->o.horizon_days <= 0)
					return cli_usage("mine", "bad horizon "
							 "'%s'", argv[i]);
			}
		} else {
			return cli_usage("mine", "unexpected argument '%s'",
					 s);
		}
	}
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
	printf("tags:        %zu release tags\n", r->tags);
	printf("fixes:       %zu commits with Fixes: (%.1f%%), %zu labelled "
	       "fix\n", r->with_fixes,
	       r->commits ? 100.0 * (double)r->with_fixes / (double)r->commits
			  : 0.0, r->fixes);
	printf("bugs:        %zu commits labelled bug-introducing\n", r->bugs);
	printf("references:  %zu (full id %zu, prefix %zu, subject %zu, "
	       "unresolved %zu)\n", r->refs, r->refs_full, r->refs_prefix,
	       r->refs_subject, r->refs_unresolved);
	printf("trivial:     nocode %zu, spelling %zu, race %zu "
	       "(references dropped)\n", r->trivial_nocode,
	       r->trivial_spelling, r->trivial_race);
}

int cmd_mine(int argc, char **argv, struct cli_ctx *ctx)
{
	struct mine_args a;
	struct mine_result r;
	struct progress pr = { 0, 0, 0, NULL };
	struct db *db;
	struct buf rep = BUF_INIT;
	int rc;

	if (cli_wants_help(argc, argv, "mine"))
		return EXIT_OK;
	memset(&a, 0, sizeof(a));
	rc = parse_args(&a, argc, argv, ctx);
	if (rc)
		goto out;
	if (cli_db(ctx, &db)) {
		rc = cli_fail_last();
		goto out;
	}
	pr.tty = !ctx->quiet && isatty(STDERR_FILENO);
	pr.verbose = ctx->verbose;
	a.o.progress = show_progress;
	a.o.progress_ctx = &pr;
	a.o.summarise = histsum_build;
	rc = mine_run(&r, db, &a.o);
	if (pr.shown)
		fputs("\r\033[K", stderr);
	if (rc) {
		rc = cli_fail_last();
		goto out;
	}
	if (r.uncounted)
		cli_warn("%zu file changes not counted: their blobs are "
			 "missing from the object database", r.uncounted);
	if (!ctx->quiet)
		print_result(&r, a.repo);
	if (a.report) {
		if (labels_report(&rep, db, r.repo_id)) {
			rc = cli_fail_last();
			goto out;
		}
		fputs(rep.ptr, stdout);
	}
	rc = EXIT_OK;
out:
	buf_free(&rep);
	free(a.repo);
	return rc;
}
