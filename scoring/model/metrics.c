/*
 * metrics.c - ranking, effort-aware and calibration metrics, curves, the
 * bootstrap and the AUC's standard errors and intervals (see metrics.h
 * for the definitions).  Sorting is by
 * qsort_r with an explicit tie-break so that every number is the same on
 * every run; ties in score are handled as the definitions say (mid-ranks
 * for AUC, one threshold per distinct score for AP and the curves).
 */
#include "scoring/model/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct order_ctx {
	const double *score;
	const double *tiebreak;
};

static int cmp_order(const void *a, const void *b, void *vctx)
{
	const struct order_ctx *c = vctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	double si = c->score[i], sj = c->score[j];

	if (si > sj)
		return -1;
	if (si < sj)
		return 1;
	if (c->tiebreak) {
		if (c->tiebreak[i] < c->tiebreak[j])
			return -1;
		if (c->tiebreak[i] > c->tiebreak[j])
			return 1;
	}
	return i < j ? -1 : i > j;
}

void metrics_order(size_t *idx, const double *score, const double *tiebreak,
		   size_t n)
{
	struct order_ctx c = { score, tiebreak };
	size_t i;

	for (i = 0; i < n; i++)
		idx[i] = i;
	if (n > 1)
		qsort_r(idx, n, sizeof(*idx), cmp_order, &c);
}

static size_t *sorted_index(const double *score, const double *tiebreak,
			    size_t n)
{
	size_t *idx = pt_calloc(n ? n : 1, sizeof(*idx));

	if (idx)
		metrics_order(idx, score, tiebreak, n);
	return idx;
}

double metrics_roc_auc(const double *score, const int *y, size_t n)
{
	size_t *idx, i, j, npos = 0, nneg;
	double rank_sum = 0, auc;

	idx = sorted_index(score, NULL, n);
	if (!idx)
		return NAN;
	/* ranks ascending: the item at sorted position i has rank n - i */
	for (i = 0; i < n; i = j) {
		size_t pos_in_group = 0;
		double mid;

		for (j = i; j < n && score[idx[j]] == score[idx[i]]; j++)
			pos_in_group += y[idx[j]] != 0;
		/* ranks of the group: n-j+1 .. n-i; their mean */
		mid = ((double)(n - j + 1) + (double)(n - i)) / 2.0;
		rank_sum += mid * (double)pos_in_group;
		npos += pos_in_group;
	}
	free(idx);
	nneg = n - npos;
	if (!npos || !nneg)
		return NAN;
	auc = (rank_sum - (double)npos * ((double)npos + 1) / 2.0) /
	      ((double)npos * (double)nneg);
	return auc;
}

double metrics_avg_precision(const double *score, const int *y, size_t n)
{
	size_t *idx, i, j, tp = 0, npos = 0;
	double ap = 0, prev_recall = 0;

	for (i = 0; i < n; i++)
		npos += y[i] != 0;
	if (!npos)
		return NAN;
	idx = sorted_index(score, NULL, n);
	if (!idx)
		return NAN;
	for (i = 0; i < n; i = j) {
		double recall;

		for (j = i; j < n && score[idx[j]] == score[idx[i]]; j++)
			tp += y[idx[j]] != 0;
		recall = (double)tp / (double)npos;
		ap += (recall - prev_recall) * ((double)tp / (double)j);
		prev_recall = recall;
	}
	free(idx);
	return ap;
}

double metrics_precision_at_k(const double *score, const int *y, size_t n,
			      size_t k)
{
	size_t *idx, i, hit = 0;

	if (!n || !k)
		return NAN;
	if (k > n)
		k = n;
	idx = sorted_index(score, NULL, n);
	if (!idx)
		return NAN;
	for (i = 0; i < k; i++)
		hit += y[idx[i]] != 0;
	free(idx);
	return (double)hit / (double)k;
}

struct group_ctx {
	const int64_t *group;
	const double *score;
};

static int cmp_group(const void *a, const void *b, void *vctx)
{
	const struct group_ctx *c = vctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (c->group[i] != c->group[j])
		return c->group[i] < c->group[j] ? -1 : 1;
	if (c->score[i] != c->score[j])
		return c->score[i] > c->score[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

double metrics_precision_at_k_grouped(const double *score, const int *y,
				      const int64_t *group, size_t n, size_t k)
{
	struct group_ctx c = { group, score };
	size_t *idx, i, j, ngroups = 0;
	double sum = 0;

	if (!n || !k)
		return NAN;
	idx = pt_calloc(n, sizeof(*idx));
	if (!idx)
		return NAN;
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_group, &c);
	for (i = 0; i < n; i = j) {
		size_t hit = 0, m;

		for (j = i; j < n && group[idx[j]] == group[idx[i]]; j++)
			;
		m = j - i < k ? j - i : k;
		for (size_t t = 0; t < m; t++)
			hit += y[idx[i + t]] != 0;
		sum += (double)hit / (double)m;
		ngroups++;
	}
	free(idx);
	return sum / (double)ngroups;
}

double metrics_recall_at_effort(const double *score, const int *y,
				const double *effort, size_t n, double frac)
{
	size_t *idx, i, npos = 0, found = 0;
	double total = 0, spent = 0, budget;

	for (i = 0; i < n; i++) {
		npos += y[i] != 0;
		total += effort[i];
	}
	if (!npos || total <= 0)
		return NAN;
	idx = sorted_index(score, effort, n);
	if (!idx)
		return NAN;
	budget = frac * total;
	for (i = 0; i < n; i++) {
		if (spent + effort[idx[i]] > budget * (1 + 1e-12))
			break;
		spent += effort[idx[i]];
		found += y[idx[i]] != 0;
	}
	free(idx);
	return (double)found / (double)npos;
}

/* Area under (cum effort share, cum positive share) in the given order. */
static double effort_area(const size_t *idx, const int *y, const double *effort,
			  size_t n, double total, size_t npos)
{
	double area = 0, x0 = 0, y0 = 0, x1, y1, cx = 0;
	size_t i, cy = 0;

	for (i = 0; i < n; i++) {
		cx += effort[idx[i]];
		cy += y[idx[i]] != 0;
		x1 = cx / total;
		y1 = (double)cy / (double)npos;
		area += (x1 - x0) * (y0 + y1) / 2.0;
		x0 = x1;
		y0 = y1;
	}
	return area;
}

double metrics_popt(const double *score, const int *y, const double *effort,
		    size_t n)
{
	size_t *idx = NULL, i, npos = 0;
	double *density = NULL, *neg_effort = NULL;
	double total = 0, a_model, a_opt, a_worst, r = NAN;

	for (i = 0; i < n; i++) {
		npos += y[i] != 0;
		total += effort[i];
	}
	if (!npos || total <= 0)
		return NAN;
	idx = pt_calloc(n, sizeof(*idx));
	density = pt_calloc(n, sizeof(*density));
	neg_effort = pt_calloc(n, sizeof(*neg_effort));
	if (!idx || !density || !neg_effort)
		goto out;
	metrics_order(idx, score, effort, n);
	a_model = effort_area(idx, y, effort, n, total, npos);
	for (i = 0; i < n; i++) {
		double e = effort[i] > 0 ? effort[i] : 1e-9;

		density[i] = (y[i] != 0) / e;
		neg_effort[i] = -effort[i];
	}
	/* optimal: densest first, among equals the smaller effort first */
	metrics_order(idx, density, effort, n);
	a_opt = effort_area(idx, y, effort, n, total, npos);
	/* worst: least dense first, among equals the larger effort first */
	for (i = 0; i < n; i++)
		density[i] = -density[i];
	metrics_order(idx, density, neg_effort, n);
	a_worst = effort_area(idx, y, effort, n, total, npos);
	if (a_opt - a_worst > 1e-12)
		r = 1.0 - (a_opt - a_model) / (a_opt - a_worst);
out:
	free(idx);
	free(density);
	free(neg_effort);
	return r;
}

double metrics_brier(const double *p, const int *y, size_t n)
{
	double s = 0;
	size_t i;

	if (!n)
		return NAN;
	for (i = 0; i < n; i++) {
		double d = p[i] - (y[i] != 0);

		s += d * d;
	}
	return s / (double)n;
}

static unsigned bin_of(double p, unsigned nbins)
{
	unsigned b;

	if (!(p > 0))
		return 0;
	if (p >= 1)
		return nbins - 1;
	b = (unsigned)(p * nbins);
	return b >= nbins ? nbins - 1 : b;
}

void metrics_reliability(struct metrics_bin *bins, unsigned nbins,
			 const double *p, const int *y, size_t n)
{
	unsigned b;
	size_t i;

	for (b = 0; b < nbins; b++) {
		bins[b].lo = (double)b / nbins;
		bins[b].hi = (double)(b + 1) / nbins;
		bins[b].mean_p = 0;
		bins[b].mean_y = 0;
		bins[b].count = 0;
	}
	for (i = 0; i < n; i++) {
		double pi = p[i] < 0 ? 0 : p[i] > 1 ? 1 : p[i];

		b = bin_of(pi, nbins);
		bins[b].mean_p += pi;
		bins[b].mean_y += y[i] != 0;
		bins[b].count++;
	}
	for (b = 0; b < nbins; b++) {
		if (bins[b].count) {
			bins[b].mean_p /= (double)bins[b].count;
			bins[b].mean_y /= (double)bins[b].count;
		} else {
			bins[b].mean_p = bins[b].mean_y = NAN;
		}
	}
}

double metrics_ece(const double *p, const int *y, size_t n, unsigned nbins)
{
	struct metrics_bin *bins;
	double ece = 0;
	unsigned b;

	if (!n || !nbins)
		return NAN;
	bins = pt_calloc(nbins, sizeof(*bins));
	if (!bins)
		return NAN;
	metrics_reliability(bins, nbins, p, y, n);
	for (b = 0; b < nbins; b++)
		if (bins[b].count)
			ece += (double)bins[b].count / (double)n *
			       fabs(bins[b].mean_p - bins[b].mean_y);
	free(bins);
	return ece;
}

/* Shared by the two curves: cumulative counts at each distinct score. */
static int curve(double **xo, double **yo, size_t *npoints, const double *score,
		 const int *y, size_t n, int pr)
{
	size_t *idx = NULL, i, j, m = 0, tp = 0, fp = 0, npos = 0, nneg;
	double *x = NULL, *yy = NULL;
	int rc = PT_ENOMEM;

	*xo = *yo = NULL;
	*npoints = 0;
	for (i = 0; i < n; i++)
		npos += y[i] != 0;
	nneg = n - npos;
	idx = sorted_index(score, NULL, n);
	x = pt_calloc(n + 1, sizeof(*x));
	yy = pt_calloc(n + 1, sizeof(*yy));
	if (!idx || !x || !yy)
		goto out;
	x[m] = 0;
	yy[m++] = pr ? 1 : 0;
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && score[idx[j]] == score[idx[i]]; j++) {
			if (y[idx[j]])
				tp++;
			else
				fp++;
		}
		if (pr) {
			x[m] = npos ? (double)tp / (double)npos : 0;
			yy[m] = (double)tp / (double)(tp + fp);
		} else {
			x[m] = nneg ? (double)fp / (double)nneg : 0;
			yy[m] = npos ? (double)tp / (double)npos : 0;
		}
		m++;
	}
	*xo = x;
	*yo = yy;
	*npoints = m;
	x = yy = NULL;
	rc = 0;
out:
	free(idx);
	free(x);
	free(yy);
	return rc;
}

int metrics_roc_curve(double **x, double **yv, size_t *npoints,
		      const double *score, const int *y, size_t n)
{
	return curve(x, yv, npoints, score, y, n, 0);
}

int metrics_pr_curve(double **x, double **yv, size_t *npoints,
		     const double *score, const int *y, size_t n)
{
	return curve(x, yv, npoints, score, y, n, 1);
}

uint64_t metrics_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int metrics_bootstrap(double *lo, double *hi, metrics_stat_fn fn, void *ctx,
		      size_t n, unsigned B, double alpha, uint64_t seed,
		      const struct pt_progress *progress)
{
	struct pt_progress_report rep = { "bootstrap", "resamples", 0,
					  B,	       0,	    NULL };
	size_t *idx = NULL, i, m = 0;
	double *vals = NULL;
	uint64_t st = seed;
	unsigned b;
	int rc = PT_ENOMEM;

	*lo = *hi = NAN;
	if (!n || !B)
		return 0;
	idx = pt_calloc(n, sizeof(*idx));
	vals = pt_calloc(B, sizeof(*vals));
	if (!idx || !vals)
		goto out;
	for (b = 0; b < B; b++) {
		double v;

		for (i = 0; i < n; i++)
			idx[i] = (size_t)(metrics_rand(&st) % n);
		v = fn(idx, n, ctx);
		if (!isnan(v))
			vals[m++] = v;
		rep.done = b + 1;
		pt_progress_report(progress, &rep);
	}
	if (m) {
		size_t l, h;

		qsort(vals, m, sizeof(*vals), cmp_double);
		l = (size_t)floor(alpha / 2 * (double)(m - 1));
		h = (size_t)ceil((1 - alpha / 2) * (double)(m - 1));
		*lo = vals[l];
		*hi = vals[h];
	}
	rc = 0;
out:
	free(idx);
	free(vals);
	return rc;
}

/* ---- the AUC's standard errors and intervals ------------------------- */

/*
 * Hanley and McNeil's standard error of an AUC from np positives and nn
 * negatives.
 */
double metrics_auc_se(double a, size_t np, size_t nn)
{
	double q1 = a / (2 - a), q2 = 2 * a * a / (1 + a);

	if (!np || !nn)
		return 0;
	return sqrt((a * (1 - a) + ((double)np - 1) * (q1 - a * a) +
		     ((double)nn - 1) * (q2 - a * a)) /
		    ((double)np * (double)nn));
}

/* A validation score and its row, for the midranks of DeLong's test. */
struct ranked {
	double v;
	size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Midranks (1-based, ties averaged) of the k scores in t, into r[t.i]. */
static void midranks(double *r, struct ranked *t, size_t k)
{
	size_t i = 0, j, h;

	if (k)
		qsort(t, k, sizeof(*t), cmp_ranked);
	while (i < k) {
		for (j = i; j + 1 < k && t[j + 1].v == t[i].v; j++)
			;
		for (h = i; h <= j; h++)
			r[t[h].i] = (double)(i + j + 2) / 2;
		i = j + 1;
	}
}

/*
 * DeLong et al.'s structural components of one score's AUC: v[i] is the
 * share of the other class a row outranks (positives) or is outranked by
 * (negatives), ties counted half.  r and t are n-long scratch.
 */
static void delong_parts(double *v, const double *f, const int *y, size_t n,
			 size_t np, double *r, double *rc, struct ranked *t)
{
	size_t i, k;
	int cls;

	for (i = 0; i < n; i++)
		t[i] = (struct ranked){ f[i], i };
	midranks(r, t, n);
	for (cls = 0; cls < 2; cls++) {
		for (i = 0, k = 0; i < n; i++)
			if ((y[i] != 0) == cls)
				t[k++] = (struct ranked){ f[i], i };
		midranks(rc, t, k);
	}
	for (i = 0; i < n; i++)
		v[i] = y[i] ? (r[i] - rc[i]) / (double)(n - np)
			    : 1 - (r[i] - rc[i]) / (double)np;
}

/*
 * The standard error of the difference of the AUCs of two scores of the
 * same rows (DeLong, DeLong and Clarke-Pearson 1988): the paired
 * yardstick, far smaller than either AUC's own when the scores agree.
 */
int metrics_auc_diff_se(double *se, const double *a, const double *b,
			const int *y, size_t n)
{
	double *va = pt_calloc(n + 1, sizeof(double));
	double *vb = pt_calloc(n + 1, sizeof(double));
	double *r = pt_calloc(n + 1, sizeof(double));
	double *rc = pt_calloc(n + 1, sizeof(double));
	struct ranked *t = pt_calloc(n + 1, sizeof(*t));
	double mean[2] = { 0 }, ss[2] = { 0 }, var = 0;
	size_t i, cnt[2] = { 0 }, np = 0;
	int c, rc_ = PT_ENOMEM;

	*se = 0;
	if (!va || !vb || !r || !rc || !t)
		goto out;
	for (i = 0; i < n; i++)
		np += y[i] != 0;
	rc_ = 0;
	if (!np || np == n)
		goto out;
	delong_parts(va, a, y, n, np, r, rc, t);
	delong_parts(vb, b, y, n, np, r, rc, t);
	/* the variance of va - vb within each class */
	for (i = 0; i < n; i++) {
		c = y[i] != 0;
		mean[c] += va[i] - vb[i];
		cnt[c]++;
	}
	for (c = 0; c < 2; c++)
		mean[c] /= (double)cnt[c];
	for (i = 0; i < n; i++) {
		double dv;

		c = y[i] != 0;
		dv = va[i] - vb[i] - mean[c];
		ss[c] += dv * dv;
	}
	for (c = 0; c < 2; c++)
		if (cnt[c] > 1)
			var += ss[c] / (double)(cnt[c] - 1) / (double)cnt[c];
	*se = sqrt(var);
out:
	free(va);
	free(vb);
	free(r);
	free(rc);
	free(t);
	return rc_;
}

struct boot_ctx {
	const double *a, *b;
	const int *y;
	double *pa, *pb;
	int *yy;
	int diff;
};

static double boot_auc(const size_t *idx, size_t n, void *vctx)
{
	struct boot_ctx *c = vctx;
	size_t i;
	double x;

	for (i = 0; i < n; i++) {
		c->pa[i] = c->a[idx[i]];
		c->yy[i] = c->y[idx[i]];
		if (c->diff)
			c->pb[i] = c->b[idx[i]];
	}
	x = metrics_roc_auc(c->pa, c->yy, n);
	if (c->diff)
		x -= metrics_roc_auc(c->pb, c->yy, n);
	return x;
}

int metrics_auc_interval(double *lo, double *hi, const double *a,
			 const double *b, const int *y, size_t n, unsigned B,
			 double alpha, uint64_t seed,
			 const struct pt_progress *progress)
{
	struct boot_ctx c;
	int rc = PT_ENOMEM;

	memset(&c, 0, sizeof(c));
	c.a = a;
	c.b = b;
	c.y = y;
	c.diff = b != NULL;
	c.pa = pt_calloc(n + 1, sizeof(double));
	c.pb = pt_calloc(n + 1, sizeof(double));
	c.yy = pt_calloc(n + 1, sizeof(int));
	if (c.pa && c.pb && c.yy)
		rc = metrics_bootstrap(lo, hi, boot_auc, &c, n, B, alpha, seed,
				       progress);
	free(c.pa);
	free(c.pb);
	free(c.yy);
	return rc;
}
