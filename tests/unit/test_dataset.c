/*
 * test_dataset.c - the label regime of dataset.h on synthetic mined
 * states (repos, commits and labels rows in an in-memory database): a
 * history that has no Fixes:/Cc: stable for its first years gets its
 * start where the trailers came into use, one that has them throughout
 * (with a month-long gap) gets no cut, too little data keeps every row,
 * and --since (a day, "all") overrides the rule while naming it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/model/dataset.h"
#include "scoring/store/db.h"
#include "scoring/model/schema.h"

#define DAY 86400

struct fx {
	struct db *db;
	int64_t next_id;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || db_open(&f->db, ":memory:", &scoring_db_owners) ||
	    db_exec(f->db, "INSERT INTO repos (id, path) VALUES (1, '/r')")) {
		free(f);
		return -1;
	}
	f->next_id = 1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	db_close(f->db);
	free(f);
	return 0;
}

/* Midnight UTC of the first day of month MON (0-11) of YEAR. */
static int64_t month_start(int year, int mon)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = year - 1900 + mon / 12;
	tm.tm_mon = mon % 12;
	tm.tm_mday = 1;
	return (int64_t)timegm(&tm);
}

/*
 * PER commits in each of MONTHS months from YEAR-01, one a day, the
 * first FIXES of each month labelled fixes.
 */
static void add_months(struct fx *f, int year, int months, int per, int fixes)
{
	char sql[512];
	int m, k;

	assert_int_equal(db_exec(f->db, "BEGIN"), 0);
	for (m = 0; m < months; m++) {
		int nf = fixes;

		for (k = 0; k < per; k++) {
			int64_t id = f->next_id++;

			snprintf(sql, sizeof(sql),
				 "INSERT INTO commits (id, repo_id, sha, seq, "
				 "nparents, commit_date) VALUES (%lld, 1, "
				 "'%040lld', %lld, 1, %lld);"
				 "INSERT INTO labels (commit_id, is_fix, "
				 "is_stable, bug, nfixes, trivial_only, "
				 "negative_ok) VALUES (%lld, %d, 0, 0, 0, 0, 1)",
				 (long long)id, (long long)id, (long long)id,
				 (long long)(month_start(year, m) +
					     (int64_t)k * DAY),
				 (long long)id, k < nf);
			assert_int_equal(db_exec(f->db, sql), 0);
		}
	}
	assert_int_equal(db_exec(f->db, "COMMIT"), 0);
}

/*
 * Six years of 10 commits a month without trailers, then four of 20 a
 * month, 5 of them with trailers: the share over all later commits is
 * 25% from the adoption on.  j months after it the trailing 12-month
 * window holds 10 (12 - j) + 20 j commits and 5 j fixes; it reaches a
 * third of 25% when 15 j >= 30 + 2.5 j, at j = 3: the start is
 * 2011-03-01, after two months of 2011 (40 commits, 10 fixes).
 */
static void late_adoption(struct fx *f)
{
	add_months(f, 2005, 72, 10, 0);
	add_months(f, 2011, 48, 20, 5);
}

static void test_late_adoption(void **state)
{
	struct fx *f = *state;
	struct dataset_regime r;

	late_adoption(f);
	assert_int_equal(dataset_regime(&r, f->db, 1, DATASET_SINCE_AUTO), 0);
	assert_int_equal(r.how, REGIME_FOUND);
	assert_int_equal(r.start, month_start(2011, 2));
	assert_int_equal(r.rule_start, r.start);
	assert_int_equal(r.before, 720 + 40);
	assert_int_equal(r.before_fix, 10);
	assert_int_equal(r.after, 46 * 20);
	assert_int_equal(r.after_fix, 46 * 5);
	assert_non_null(strstr(r.why, "rows before 2011-03-01 left out"));
	assert_non_null(strstr(r.why, "1.3% of the 760 commits before it"));
	assert_non_null(strstr(r.why, "25.0% of the 920 from it on"));
}

/*
 * Trailers throughout, with one month in the middle that has none: the
 * window that holds it still has 55 of 240 (23%), above a third of 25%.
 */
static void test_throughout(void **state)
{
	struct fx *f = *state;
	struct dataset_regime r;

	add_months(f, 2005, 60, 20, 5);
	add_months(f, 2010, 1, 20, 0);
	add_months(f, 2010 + 1, 59, 20, 5);
	assert_int_equal(dataset_regime(&r, f->db, 1, DATASET_SINCE_AUTO), 0);
	assert_int_equal(r.how, REGIME_THROUGHOUT);
	assert_int_equal(r.start, 0);
	assert_int_equal(r.rule_start, 0);
	assert_int_equal(r.before, 0);
	assert_int_equal(r.after, 120 * 20);
	assert_int_equal(r.after_fix, 119 * 5);
	assert_non_null(strstr(r.why, "every row kept: the trailing"));
}

/*
 * A whole year without trailers late in the history (10 commits a
 * month) is a regime change too: the rows before it go.  The window
 * after it is the one of test_late_adoption: the start is 2011-03-01.
 */
static void test_late_gap(void **state)
{
	struct fx *f = *state;
	struct dataset_regime r;

	add_months(f, 2005, 60, 20, 5);
	add_months(f, 2010, 12, 10, 0);
	add_months(f, 2011, 48, 20, 5);
	assert_int_equal(dataset_regime(&r, f->db, 1, DATASET_SINCE_AUTO), 0);
	assert_int_equal(r.how, REGIME_FOUND);
	assert_int_equal(r.start, month_start(2011, 2));
	assert_int_equal(r.before_fix, 60 * 5 + 10);
}

static void test_since_overrides(void **state)
{
	struct fx *f = *state;
	struct dataset_regime r;
	int64_t day = month_start(2013, 0) + 14 * DAY;

	late_adoption(f);
	/* a day: rows before it go, whatever the rule says */
	assert_int_equal(dataset_regime(&r, f->db, 1, day), 0);
	assert_int_equal(r.how, REGIME_SINCE);
	assert_int_equal(r.start, day);
	assert_int_equal(r.rule_start, month_start(2011, 2));
	/* 2013-01-15: 72 months of 10, 24 of 20, 14 days of 2013 */
	assert_int_equal(r.before, 720 + 24 * 20 + 14);
	assert_non_null(strstr(r.why, "rows before 2013-01-15 left out "
				      "(--since"));
	assert_non_null(strstr(r.why, "rule gives 2011-03-01"));
	/* all: nothing goes, and the rule is still named */
	assert_int_equal(dataset_regime(&r, f->db, 1, 0), 0);
	assert_int_equal(r.how, REGIME_ALL);
	assert_int_equal(r.start, 0);
	assert_int_equal(r.after, 720 + 48 * 20);
	assert_non_null(strstr(r.why, "every row kept (--since all)"));
	assert_non_null(strstr(r.why, "2011-03-01"));
}

/* Too few commits (or fixes) after the cut: every row stays. */
static void test_too_little(void **state)
{
	struct fx *f = *state;
	struct dataset_regime r;

	add_months(f, 2005, 36, 20, 0);
	add_months(f, 2008, 3, 20, 5); /* 15 fixes in all */
	assert_int_equal(dataset_regime(&r, f->db, 1, DATASET_SINCE_AUTO), 0);
	assert_int_equal(r.how, REGIME_TOO_LITTLE);
	assert_int_equal(r.start, 0);
	assert_int_equal(r.before, 0);
	assert_int_equal(r.after, 39 * 20);
	assert_non_null(strstr(r.why, "too little data"));
}

/* An empty repository: no rows, no start, no error. */
static void test_empty(void **state)
{
	struct fx *f = *state;
	struct dataset_regime r;

	assert_int_equal(dataset_regime(&r, f->db, 1, DATASET_SINCE_AUTO), 0);
	assert_int_equal(r.how, REGIME_TOO_LITTLE);
	assert_int_equal(r.start, 0);
	assert_int_equal(r.after, 0);
}

static void test_parse_since(void **state)
{
	int64_t t;

	(void)state;
	assert_int_equal(dataset_parse_since(&t, "all"), 0);
	assert_int_equal(t, 0);
	assert_int_equal(dataset_parse_since(&t, "auto"), 0);
	assert_true(t == DATASET_SINCE_AUTO);
	assert_int_equal(dataset_parse_since(&t, "2017-07-01"), 0);
	assert_int_equal(t, month_start(2017, 6));
	assert_int_equal(dataset_parse_since(&t, "2017-07"), PT_EINVAL);
	assert_int_equal(dataset_parse_since(&t, "yesterday"), PT_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_late_adoption, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_throughout, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_late_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_since_overrides, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_too_little, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test(test_parse_since),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
