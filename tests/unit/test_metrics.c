/*
 * test_metrics.c - every metric against values worked out by hand in the
 * comments, including ties, the effort-aware ones, the bootstrap and the
 * AUC's standard errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "scoring/model/metrics.h"

#define EPS 1e-12

static const double s4[] = { 0.9, 0.8, 0.7, 0.6 };
static const int y4[] = { 1, 0, 1, 0 };

static void test_roc_auc(void **state)
{
	/* ties: a positive and a negative at 0.5 count one half */
	static const double st[] = { 0.5, 0.5, 0.2 };
	static const int yt[] = { 1, 0, 0 };
	static const int none[] = { 0, 0, 0 };

	(void)state;
	/* pairs: 0.9>0.8, 0.9>0.6, 0.7<0.8, 0.7>0.6 -> 3/4 */
	assert_true(fabs(metrics_roc_auc(s4, y4, 4) - 0.75) < EPS);
	/* (0.5 + 1) / 2 */
	assert_true(fabs(metrics_roc_auc(st, yt, 3) - 0.75) < EPS);
	assert_true(isnan(metrics_roc_auc(st, none, 3)));
}

static void test_avg_precision(void **state)
{
	static const double st[] = { 0.5, 0.5, 0.2 };
	static const int yt[] = { 1, 0, 0 };

	(void)state;
	/* 0.5 * 1 (at 0.9) + 0.5 * 2/3 (at 0.7) */
	assert_true(fabs(metrics_avg_precision(s4, y4, 4) - 5.0 / 6) < EPS);
	/* one threshold holding both tied items: recall 1 at precision 1/2 */
	assert_true(fabs(metrics_avg_precision(st, yt, 3) - 0.5) < EPS);
}

static void test_precision_at_k(void **state)
{
	static const int64_t g[] = { 1, 1, 2, 2 };

	(void)state;
	assert_true(fabs(metrics_precision_at_k(s4, y4, 4, 2) - 0.5) < EPS);
	assert_true(fabs(metrics_precision_at_k(s4, y4, 4, 3) - 2.0 / 3) < EPS);
	assert_true(fabs(metrics_precision_at_k(s4, y4, 4, 9) - 0.5) < EPS);
	/* each day's top item is a positive */
	assert_true(fabs(metrics_precision_at_k_grouped(s4, y4, g, 4, 1) -
			 1.0) < EPS);
	assert_true(fabs(metrics_precision_at_k_grouped(s4, y4, g, 4, 2) -
			 0.5) < EPS);
}

static void test_effort(void **state)
{
	static const int ye[] = { 0, 1, 1, 0 };
	static const double eff[] = { 10, 10, 10, 70 };

	(void)state;
	/* 20% of 100 lines: items 0 and 1, one of two positives */
	assert_true(fabs(metrics_recall_at_effort(s4, ye, eff, 4, 0.2) - 0.5) <
		    EPS);
	assert_true(fabs(metrics_recall_at_effort(s4, ye, eff, 4, 0.3) - 1.0) <
		    EPS);
	/*
	 * model curve (.1,0) (.2,.5) (.3,1) (1,1): area 0.8; optimal
	 * (.1,.5) (.2,1) ... : 0.9; worst (.7,0) (.8,0) (.9,.5) (1,1): 0.1;
	 * Popt = 1 - 0.1 / 0.8
	 */
	assert_true(fabs(metrics_popt(s4, ye, eff, 4) - 0.875) < EPS);
}

static void test_brier_ece(void **state)
{
	static const double p2[] = { 0.8, 0.3 };
	static const int y2[] = { 1, 0 };
	static const double p[] = { 0.05, 0.15, 0.15, 0.95 };
	static const int y[] = { 0, 0, 1, 1 };
	static const double pe[] = { 0.0, 1.0, 0.1 };
	static const int ye[] = { 0, 1, 0 };
	struct metrics_bin bins[10];

	(void)state;
	assert_true(fabs(metrics_brier(p2, y2, 2) - 0.065) < EPS);
	/* 1/4*.05 + 2/4*|.15-.5| + 1/4*.05 */
	assert_true(fabs(metrics_ece(p, y, 4, 10) - 0.2) < EPS);
	/* edges: 0 in bin 0, 1 in the last bin, 0.1 in bin 1 */
	metrics_reliability(bins, 10, pe, ye, 3);
	assert_int_equal(bins[0].count, 1);
	assert_int_equal(bins[1].count, 1);
	assert_int_equal(bins[9].count, 1);
	assert_true(isnan(bins[5].mean_p));
	/* 1/3 * 0.1 */
	assert_true(fabs(metrics_ece(pe, ye, 3, 10) - 0.1 / 3) < EPS);
}

static void test_curves(void **state)
{
	double *x, *y;
	size_t n;

	(void)state;
	assert_int_equal(metrics_roc_curve(&x, &y, &n, s4, y4, 4), 0);
	assert_int_equal(n, 5);
	/* after 0.9: tpr .5 fpr 0; after 0.8: fpr .5 */
	assert_true(x[1] == 0 && y[1] == 0.5);
	assert_true(x[2] == 0.5 && y[2] == 0.5);
	assert_true(x[4] == 1 && y[4] == 1);
	free(x);
	free(y);
	assert_int_equal(metrics_pr_curve(&x, &y, &n, s4, y4, 4), 0);
	assert_true(x[3] == 1 && fabs(y[3] - 2.0 / 3) < EPS);
	free(x);
	free(y);
}

static double mean_stat(const size_t *idx, size_t n, void *ctx)
{
	const double *v = ctx;
	double s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += v[idx[i]];
	return s / (double)n;
}

struct heard {
	size_t calls, done, total;
	const char *unit;
};

static void hear(const struct pt_progress_report *r, void *ctx)
{
	struct heard *h = ctx;

	h->calls++;
	h->done = r->done;
	h->total = r->total;
	h->unit = r->unit;
}

static void test_bootstrap(void **state)
{
	double v[100], lo, hi, lo2, hi2;
	struct heard heard = { 0, 0, 0, NULL };
	struct pt_progress p = { hear, &heard };
	int i;

	(void)state;
	for (i = 0; i < 100; i++)
		v[i] = 3;
	assert_int_equal(metrics_bootstrap(&lo, &hi, mean_stat, v, 100, 200,
					   0.05, 1, NULL),
			 0);
	assert_true(lo == 3 && hi == 3);
	for (i = 0; i < 100; i++)
		v[i] = i;
	metrics_bootstrap(&lo, &hi, mean_stat, v, 100, 500, 0.05, 7, &p);
	/* every resample is reported, the last as 500/500 */
	assert_int_equal(heard.calls, 500);
	assert_int_equal(heard.done, 500);
	assert_int_equal(heard.total, 500);
	assert_string_equal(heard.unit, "resamples");
	/* the mean is 49.5, its standard error about 2.9 */
	assert_true(lo < 49.5 && hi > 49.5);
	assert_true(lo > 40 && hi < 59);
	assert_true(hi - lo > 6 && hi - lo < 16);
	metrics_bootstrap(&lo2, &hi2, mean_stat, v, 100, 500, 0.05, 7, NULL);
	assert_true(lo == lo2 && hi == hi2);
}

static void test_auc_se(void **state)
{
	static const double rev[] = { 0.6, 0.7, 0.8, 0.9 };
	static const int none[] = { 0, 0, 0, 0 };
	double se, lo, hi, lo2, hi2;

	(void)state;
	/* Hanley-McNeil, AUC 3/4 from 2 + 2: sqrt(0.30536 / 4) */
	assert_true(fabs(metrics_auc_se(0.75, 2, 2) - 0.27629564910487775) <
		    1e-9);
	assert_true(metrics_auc_se(0.75, 0, 2) == 0);
	/*
	 * DeLong: the components of s4 are 1, 1/2 (positives) and 1/2, 1
	 * (negatives), those of rev 0, 1/2 and 1/2, 0; the differences
	 * {1, 0} and {0, 1} each have variance 1/2: sqrt(1/4 + 1/4).
	 */
	assert_int_equal(metrics_auc_diff_se(&se, s4, rev, y4, 4), 0);
	assert_true(fabs(se - sqrt(0.5)) < EPS);
	assert_int_equal(metrics_auc_diff_se(&se, s4, s4, y4, 4), 0);
	assert_true(se == 0);
	assert_int_equal(metrics_auc_diff_se(&se, s4, rev, none, 4), 0);
	assert_true(se == 0);
	/* the same scores: every resample's difference is 0 or NAN */
	assert_int_equal(metrics_auc_interval(&lo, &hi, s4, s4, y4, 4, 100,
					      0.05, 3, NULL),
			 0);
	assert_true(lo == 0 && hi == 0);
	assert_int_equal(metrics_auc_interval(&lo, &hi, s4, NULL, y4, 4, 100,
					      0.05, 3, NULL),
			 0);
	assert_true(lo >= 0 && lo <= 0.75 && hi >= 0.75 && hi <= 1);
	metrics_auc_interval(&lo2, &hi2, s4, NULL, y4, 4, 100, 0.05, 3, NULL);
	assert_true(lo == lo2 && hi == hi2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roc_auc),
		cmocka_unit_test(test_avg_precision),
		cmocka_unit_test(test_precision_at_k),
		cmocka_unit_test(test_effort),
		cmocka_unit_test(test_brier_ece),
		cmocka_unit_test(test_curves),
		cmocka_unit_test(test_bootstrap),
		cmocka_unit_test(test_auc_se),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
