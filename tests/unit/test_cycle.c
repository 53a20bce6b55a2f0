/*
 * test_cycle.c - the release cycle by the first mainline release tag
 * containing each commit, over the tree of tests/data/cycle/mkrepo.sh:
 * commits first released in -rc1 (the merge window), -rc3, -rc6 and in
 * the final; the stable tags v1.0.1 (a side branch) and v1.0.0.1 (a
 * fourth component) placing no commit and never the mainline's tag as of
 * a date; the version-shape fallback when the first parents cannot be
 * walked; the stats cycle rows, ratio and --late threshold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <git2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/history/cycle.h"
#include "scoring/model/schema.h"
#include "scoring/history/history.h"
#include "scoring/model/histsum.h"
#include "scoring/store/db.h"

#define DAY 86400
#define T0 1577836800 /* commit n is dated T0 + n days */
#define FOUR "^v([0-9]+(\\.[0-9]+)*)(-rc([0-9]+))?$"

struct fx {
	char dir[64];
	char repo[96];
	struct db *db;
	struct mine_result res;
};

static int mine(struct fx *f, const char *pattern)
{
	struct mine_opts o;

	memset(&o, 0, sizeof(o));
	o.repo = f->repo;
	o.threads = 2;
	o.horizon_days = 3;
	o.tag_pattern = pattern;
	o.summarise = histsum_build;
	return mine_run(&f->res, f->db, &o);
}

static int setup(void **state)
{
	const char *src = getenv("PT_SOURCE_DIR");
	struct fx *f = calloc(1, sizeof(*f));
	char cmd[512], path[160];

	if (!f || !src)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/pt-cycle-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->repo, sizeof(f->repo), "%s/repo", f->dir);
	snprintf(cmd, sizeof(cmd),
		 "mkdir %s && sh %s/tests/data/cycle/"
		 "mkrepo.sh %s >/dev/null 2>&1",
		 f->repo, src, f->repo);
	if (system(cmd))
		return -1;
	snprintf(path, sizeof(path), "%s/state.db", f->dir);
	if (db_open(&f->db, path, &scoring_db_owners) || mine(f, NULL))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	db_close(f->db);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

/* One text (or "(null)") from SQL with one '?' bound to ARG. */
static void expect_text(struct fx *f, const char *sql, const char *arg,
			const char *want)
{
	sqlite3_stmt *st;
	const char *v;

	assert_int_equal(db_prepare(&st, f->db, sql), 0);
	sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		v = (const char *)sqlite3_column_text(st, 0);
		assert_string_equal(v ? v : "(null)", want);
	} else {
		assert_string_equal("(no row)", want);
	}
	sqlite3_finalize(st);
}

#define TAG_OF "SELECT tag FROM commits WHERE subject = ?"
#define MAINLINE "SELECT mainline FROM tags WHERE name = ?"

static void test_first_release(void **state)
{
	struct fx *f = *state;

	expect_text(f, TAG_OF, "mw: one 4", "v1.1-rc1");
	expect_text(f, TAG_OF, "mw: two 6", "v1.1-rc1");
	expect_text(f, TAG_OF, "rc3: three 3", "v1.1-rc3");
	expect_text(f, TAG_OF, "rc6: six 15", "v1.1-rc6");
	expect_text(f, TAG_OF, "final: seven 7", "v1.1");
	expect_text(f, TAG_OF, "initial", "v1.0");
	expect_text(f, TAG_OF, "fix: rc6: six 15", "(null)");
	/* the stable branch's commit is not mined (HEAD is main) */
	expect_text(f, TAG_OF, "stable: backport 3", "(no row)");
}

static void test_stable_tags(void **state)
{
	struct fx *f = *state;

	/* v1.0.1 is off main's first parents; v1.0.0.1 no default match */
	assert_int_equal(f->res.tags, 9);
	assert_int_equal(f->res.mainline_tags, 8);
	expect_text(f, MAINLINE, "v1.0.1", "0");
	expect_text(f, MAINLINE, "v1.1-rc1", "1");
	expect_text(f, MAINLINE, "v1.0.0.1", "(no row)");
	/* a pattern with a fourth component: on the side branch, stable */
	assert_int_equal(mine(f, FOUR), 0);
	assert_int_equal(f->res.tags, 10);
	assert_int_equal(f->res.mainline_tags, 8);
	expect_text(f, MAINLINE, "v1.0.0.1", "0");
	expect_text(f, TAG_OF, "rc3: three 3", "v1.1-rc3");
	assert_int_equal(mine(f, NULL), 0);
}

/* The first parents cannot be walked: the version's shape decides. */
static void test_shape_fallback(void **state)
{
	struct fx *f = *state;
	git_repository *repo;
	size_t n, nmain;

	git_libgit2_init();
	assert_int_equal(git_repository_open(&repo, f->repo), 0);
	assert_int_equal(cycle_assign(&n, &nmain, f->db, repo, f->res.repo_id,
				      "refs/heads/none", FOUR),
			 0);
	assert_int_equal(n, 10);
	assert_int_equal(nmain, 8);
	expect_text(f, MAINLINE, "v1.0.1", "0");   /* point release of v1.0 */
	expect_text(f, MAINLINE, "v1.0.0.1", "0"); /* four components */
	expect_text(f, MAINLINE, "v1.1", "1");
	expect_text(f, TAG_OF, "rc6: six 15", "v1.1-rc6");
	git_repository_free(repo);
	git_libgit2_shutdown();
	assert_int_equal(mine(f, NULL), 0);
}

static void test_mainline_tag_at(void **state)
{
	struct fx *f = *state;
	struct cycle_mainline m;

	/* v1.0 at T0 + 1 day, v1.0.1 at + 2, v1.1-rc1 at + 4 */
	assert_int_equal(cycle_mainline_tag_at(&m, f->db, f->res.repo_id,
					       T0 + DAY),
			 0);
	assert_null(m.name);
	assert_int_equal(cycle_mainline_tag_at(&m, f->db, f->res.repo_id,
					       T0 + 3 * DAY),
			 1);
	assert_string_equal(m.name, "v1.0");
	assert_int_equal(m.rc, 0);
	assert_int_equal(m.date, T0 + DAY);
	cycle_mainline_clear(&m);
	assert_int_equal(cycle_mainline_tag_at(&m, f->db, f->res.repo_id,
					       T0 + 4 * DAY + 1),
			 1);
	assert_string_equal(m.name, "v1.1-rc1");
	assert_string_equal(m.release, "v1.1");
	assert_int_equal(m.rc, 1);
	cycle_mainline_clear(&m);
}

static void expect_row(const struct cycle_phase *p, const char *name,
		       size_t commits, int64_t lines, size_t bugs)
{
	assert_string_equal(p->name, name);
	assert_int_equal(p->commits, commits);
	assert_int_equal(p->lines, lines);
	assert_int_equal(p->bugs, bugs);
}

static void test_stats_rows(void **state)
{
	struct fx *f = *state;
	struct cycle_stats s;
	struct buf b = BUF_INIT;

	assert_int_equal(cycle_stats(&s, f->db, f->res.repo_id, 5, 0, 200, 7),
			 0);
	assert_int_equal(s.nphases, 6);
	expect_row(&s.phases[0], "merge-window", 2, 10, 1);
	expect_row(&s.phases[1], "rc2", 1, 2, 0);
	expect_row(&s.phases[2], "rc3", 1, 3, 1);
	expect_row(&s.phases[3], "rc4", 1, 4, 0);
	expect_row(&s.phases[4], "rc5+", 2, 20, 1); /* rc5 and rc6 */
	expect_row(&s.phases[5], "final", 1, 7, 1); /* not late */
	assert_true(s.phases[4].late);
	assert_false(s.phases[5].late);
	assert_string_equal(s.phases[0].what, "first released in -rc1 "
					      "(merged in the merge window)");
	assert_string_equal(s.phases[2].what, "first released in -rc3 "
					      "(merged for rc3)");
	assert_string_equal(s.phases[4].what,
			    "first released in -rc5 or "
			    "a later rc (merged for a late rc)");
	assert_string_equal(s.phases[5].what,
			    "first released in the "
			    "final release (merged after its last rc)");
	assert_true(s.has_ratio);
	assert_true(fabs(s.ratio - 0.5) < 1e-9);
	assert_true(s.lo <= s.ratio && s.ratio <= s.hi + 1e-9);
	assert_int_equal(cycle_stats_table(&b, &s), 0);
	assert_non_null(strstr(b.ptr, "rc5+                 2         20      "
				      "1    50.000  first released in -rc5"));
	assert_non_null(strstr(b.ptr, "rc5+/merge-window: 0.50"));
	buf_reset(&b);
	assert_int_equal(cycle_stats_json(&b, &s), 0);
	assert_non_null(strstr(b.ptr,
			       "{\"phase\":\"final\",\"what\":\"first "
			       "released in the final release (merged "
			       "after its last rc)\",\"first_released_"
			       "in_rc\":0,\"late\":false,\"commits\":1,"));
	buf_free(&b);
	cycle_stats_clear(&s);
}

static void test_late_threshold(void **state)
{
	struct fx *f = *state;
	struct cycle_stats s;
	struct buf b = BUF_INIT;

	assert_int_equal(cycle_stats(&s, f->db, f->res.repo_id, 3, 0, 100, 7),
			 0);
	assert_int_equal(s.nphases, 4);
	expect_row(&s.phases[2], "rc3+", 4, 27, 2); /* rc3 .. rc6 */
	expect_row(&s.phases[3], "final", 1, 7, 1);
	assert_true(fabs(s.ratio - (2.0 / 27) / (1.0 / 10)) < 1e-9);
	cycle_stats_clear(&s);
	assert_int_equal(cycle_stats(&s, f->db, f->res.repo_id, 7, 0, 100, 7),
			 0);
	assert_int_equal(s.nphases, 8);
	expect_row(&s.phases[5], "rc6", 1, 15, 1);
	expect_row(&s.phases[6], "rc7+", 0, 0, 0);
	expect_row(&s.phases[7], "final", 1, 7, 1);
	assert_false(s.has_ratio); /* no commit first released in rc7+ */
	assert_int_equal(cycle_stats_table(&b, &s), 0);
	assert_non_null(strstr(b.ptr, "rc7+/merge-window: n/a (no commits "
				      "first released in a late rc)"));
	buf_reset(&b);
	assert_int_equal(cycle_stats_json(&b, &s), 0);
	assert_non_null(strstr(b.ptr, "\"ratio\":null,\"ci95\":null,"));
	buf_free(&b);
	cycle_stats_clear(&s);
	assert_int_equal(cycle_stats(&s, f->db, f->res.repo_id, 1, 0, 100, 7),
			 PT_EINVAL);
	assert_int_equal(cycle_stats(&s, f->db, f->res.repo_id, 65, 0, 100, 7),
			 PT_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_release),
		cmocka_unit_test(test_stable_tags),
		cmocka_unit_test(test_shape_fallback),
		cmocka_unit_test(test_mainline_tag_at),
		cmocka_unit_test(test_stats_rows),
		cmocka_unit_test(test_late_threshold),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
