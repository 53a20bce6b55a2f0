/*
 * cmd_stats.c - `patchtriage stats cycle`: where in the release cycle
 * bugs come from, over a mined repository (scoring/history/cycle.c computes it):
 * an aligned table, --json, and an SVG bar chart with --svg.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/history/cycle.h"
#include "scoring/history/history.h"
#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"

#define BOOT 1000
#define SEED 20231103ull

/* The repository to report on: --repo, else the last one mined. */
static int pick_repo(int64_t *id, struct db *db, const char *repo)
{
	sqlite3_stmt *st;
	char *path;
	int rc;

	if (repo) {
		path = realpath(repo, NULL);
		rc = mine_repo_id(id, db, path ? path : repo);
		free(path);
		return rc;
	}
	rc = db_prepare(&st, db,
			"SELECT id FROM repos ORDER BY mined_at "
			"DESC, id DESC LIMIT 1");
	if (rc)
		return rc;
	rc = sqlite3_step(st) == SQLITE_ROW
		     ? 0
		     : pt_error_set(PT_ENOTFOUND,
				    "no repository mined "
				    "yet; run 'patchtriage mine'");
	if (!rc)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

static int write_svg(const char *path, const struct cycle_stats *s)
{
	struct buf b = BUF_INIT;
	int rc;

	rc = cycle_stats_svg(&b, s);
	if (!rc)
		rc = pt_write_file_atomic(path, b.ptr, b.len);
	buf_free(&b);
	return rc;
}

int cmd_stats(int argc, char **argv, struct cli_ctx *ctx)
{
	const char *svg = NULL, *repo = NULL, *report = NULL;
	struct cycle_stats s;
	struct buf out = BUF_INIT;
	struct db *db;
	int64_t id;
	long long late = CYCLE_LATE_RC, horizon = 365;
	size_t npos;
	int json = 0, rc;
	const struct opt opts[] = {
		OPTION_FLAG(0, "json", &json),
		OPTION_STRING(0, "svg", &svg),
		OPTION_STRING(0, "repo", &repo),
		OPTION_INT(0, "late", &late, 2, 64),
		OPTION_INT(0, "horizon", &horizon, 0, INT_MAX),
		OPTION_END,
	};

	rc = opt_parse("stats", opts, argc, argv, &report, 1, &npos);
	if (rc)
		return opt_exit(rc);
	if (!report || strcmp(report, "cycle"))
		return cli_usage("stats", "unknown report '%s'",
				 report ? report : "");
	if (cli_db_existing(ctx, &db) || pick_repo(&id, db, repo) ||
	    cycle_stats(&s, db, id, (int)late, (int)horizon, BOOT, SEED))
		return cli_fail_last();
	rc = json ? cycle_stats_json(&out, &s) : cycle_stats_table(&out, &s);
	if (!rc && svg)
		rc = write_svg(svg, &s);
	cycle_stats_clear(&s);
	if (rc) {
		buf_free(&out);
		return cli_fail_last();
	}
	fputs(out.ptr, stdout);
	buf_free(&out);
	return EXIT_OK;
}
