/*
 * metrics.h - the numbers a classifier is judged by: ranking (ROC-AUC,
 * average precision, precision at k), effort-aware ranking (recall at a
 * share of changed lines, Popt), probability quality (Brier score,
 * expected calibration error), a percentile bootstrap for intervals and
 * the AUC's standard errors (Hanley-McNeil, DeLong's paired difference).
 * Everything here is pure arithmetic on arrays: scores (higher = more
 * likely positive), labels 0/1, and, for the effort-aware metrics, an
 * effort per item (changed lines).  A metric that is undefined for its
 * input (no positives, or no negatives) returns NAN, never an error, so
 * that a report can print "n/a".
 */
#ifndef PT_METRICS_H
#define PT_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/util/progress.h"
#include "scoring/util/pt.h"

/* Default number of equal-width bins of metrics_ece(). */
#define METRICS_ECE_BINS 10

/*
 * ROC-AUC by the Mann-Whitney statistic with mid-ranks, so a tie between
 * a positive and a negative counts one half.  NAN without both classes.
 */
double metrics_roc_auc(const double *score, const int *y, size_t n);

/*
 * Average precision (area under the precision-recall curve, step-wise as
 * scikit-learn computes it): sum over distinct score thresholds of
 * (recall gained) * (precision at that threshold).  Tied scores form one
 * threshold.  NAN without positives.
 */
double metrics_avg_precision(const double *score, const int *y, size_t n);

/*
 * Share of positives among the k highest scores (fewer when n < k; ties
 * broken by position, earlier first).  NAN when n == 0 or k == 0.
 */
double metrics_precision_at_k(const double *score, const int *y, size_t n,
			      size_t k);

/*
 * Mean over groups (e.g. days) of precision at k within each group;
 * group[i] is any integer key.  Groups are weighted equally.
 */
double metrics_precision_at_k_grouped(const double *score, const int *y,
				      const int64_t *group, size_t n, size_t k);

/*
 * Effort-aware recall: inspect items by descending score (ties: smaller
 * effort first) while the cumulative effort stays within frac of the
 * total; the share of all positives found.  effort[i] >= 0.  NAN without
 * positives or with zero total effort.
 */
double metrics_recall_at_effort(const double *score, const int *y,
				const double *effort, size_t n, double frac);

/*
 * Popt (Mende and Koschke 2010, as used by Kamei et al. 2013): with the
 * curve "share of positives found" against "share of effort spent",
 * Popt = 1 - (A_opt - A_model) / (A_opt - A_worst), where the optimal
 * order is by actual density y/effort descending and the worst by it
 * ascending; areas by the trapezoidal rule from 0 to 1.  The model order
 * is by descending score (pass score/effort to rank by predicted density).
 * NAN without positives, or when the optimal and worst curves coincide.
 */
double metrics_popt(const double *score, const int *y, const double *effort,
		    size_t n);

/* Mean of (p - y)^2.  NAN when n == 0. */
double metrics_brier(const double *p, const int *y, size_t n);

/*
 * Expected calibration error with nbins equal-width bins over [0, 1]:
 * bin b holds p in [b/nbins, (b+1)/nbins) (the last bin includes 1);
 * ECE = sum over bins of (n_b / n) * |mean p_b - mean y_b|.  Out-of-range
 * p are clamped to [0, 1].  NAN when n == 0.
 */
double metrics_ece(const double *p, const int *y, size_t n, unsigned nbins);

/* One reliability bin, for plots. */
struct metrics_bin {
	double lo, hi; /* the bin's p range */
	double mean_p; /* NAN when empty */
	double mean_y; /* NAN when empty */
	size_t count;
};

/* Fill bins[0..nbins) as metrics_ece() sees them. */
void metrics_reliability(struct metrics_bin *bins, unsigned nbins,
			 const double *p, const int *y, size_t n);

/*
 * Curve points for plots: ROC (fpr, tpr) and precision-recall (recall,
 * precision) at every distinct threshold, starting at (0,0) for ROC and
 * (0,1) for PR.  *x and *y are malloc'd arrays of *npoints; free() them.
 */
int metrics_roc_curve(double **x, double **yv, size_t *npoints,
		      const double *score, const int *y, size_t n);
int metrics_pr_curve(double **x, double **yv, size_t *npoints,
		     const double *score, const int *y, size_t n);

/*
 * Percentile bootstrap: draw B resamples of 0..n-1 with replacement (a
 * fixed-seed splitmix64, so the interval is reproducible), evaluate fn on
 * each and return the (alpha/2, 1-alpha/2) percentiles of the values that
 * are not NAN.  fn gets the resampled indices.  *lo = *hi = NAN when no
 * resample gave a number.  progress (may be NULL) hears "bootstrap:
 * done/B resamples" after each.
 */
typedef double (*metrics_stat_fn)(const size_t *idx, size_t n, void *ctx);
int metrics_bootstrap(double *lo, double *hi, metrics_stat_fn fn, void *ctx,
		      size_t n, unsigned B, double alpha, uint64_t seed,
		      const struct pt_progress *progress);

/*
 * Hanley and McNeil's (1982) standard error of an AUC of auc from npos
 * positives and nneg negatives; 0 when either is 0.
 */
double metrics_auc_se(double auc, size_t npos, size_t nneg);

/*
 * The standard error of the difference of the AUCs of two scores a and b
 * of the same n rows (DeLong, DeLong and Clarke-Pearson 1988) into *se:
 * the paired yardstick, far smaller than either AUC's own when the scores
 * agree.  *se = 0 without both classes; PT_ENOMEM.
 */
int metrics_auc_diff_se(double *se, const double *a, const double *b,
			const int *y, size_t n);

/*
 * metrics_bootstrap() interval of the ROC-AUC of score a, or, with b (NULL:
 * none), of AUC(a) - AUC(b) on the same resamples; PT_ENOMEM.
 */
int metrics_auc_interval(double *lo, double *hi, const double *a,
			 const double *b, const int *y, size_t n, unsigned B,
			 double alpha, uint64_t seed,
			 const struct pt_progress *progress);

/* splitmix64 step, shared by everything that needs reproducible draws. */
uint64_t metrics_rand(uint64_t *state);

/*
 * Sort idx[0..n) by score descending, ties by tiebreak ascending (NULL:
 * by index).  Stable and deterministic.
 */
void metrics_order(size_t *idx, const double *score, const double *tiebreak,
		   size_t n);

#endif
