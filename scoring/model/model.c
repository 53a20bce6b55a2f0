/*
 * model.c - the classifiers (see model.h for the recipe): liblinear
 * logistic regression on hashed sparse rows, XGBoost on the tabular part
 * plus the out-of-fold text score, a Platt or isotonic calibration, and
 * the model directory (manifest.json, text.model, trees.json).  This file
 * owns the training protocol (time-ordered fit | validation | calibration
 * slices, the C grid, the round count, the trees' linear offset) and the
 * on-disk format; it knows no feature's meaning but the two size columns
 * the size offset is made of.
 */
#include "scoring/model/model.h"

#include <errno.h>
#include <jansson.h>
#include <linear.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <xgboost/c_api.h>

#include "scoring/util/fnv.h"
#include "scoring/model/metrics.h"

#define TEXT_FILE "text.model"
#define TREES_FILE "trees.json"
#define ROUND_STEP 10
#define P_EPS 1e-6
#define OFFSET_C 1.0
#define SIZE_ADDED "size.lines_added"
#define SIZE_REMOVED "size.lines_removed"

static const double c_grid[] = { 0.1, 0.5, 2.0, 8.0 };
#define NC (sizeof(c_grid) / sizeof(c_grid[0]))

static const char *const kind_names[] = { "full", "text", "tablr" };
static const char *const offset_names[] = { "auto", "none", "size",
					    "tabular" };

/*
 * The trees' offset: w[0..nw-1] weights of the standardised inputs, then
 * the intercept.  SIZE: one input, (log1p(added + removed) - mean) / sd;
 * TABULAR: the used columns under tab_z().
 */
struct offset {
	enum model_offset kind;   /* NONE, SIZE or TABULAR */
	double *w;
	size_t nw;                /* inputs (w holds nw + 1) */
	double mean, sd;          /* SIZE only */
};

struct pt_model {
	enum model_kind kind;
	enum model_calib calib;
	char *task;
	char version[64];
	unsigned hash_bits;
	size_t ntab;
	char **tab_names;
	unsigned char *tab_use;
	size_t nused;          /* used tab columns */
	struct model *lr;      /* liblinear: text model, or tablr's model */
	double lr_sign;        /* +1 when lr's label[0] is the positive class */
	double C;
	double *mean, *sd;     /* tablr and the tabular offset: per column */
	struct offset off;     /* full: the trees' linear offset */
	enum model_offset offset_ask;  /* what the parameters asked for */
	size_t col_added, col_removed; /* the size columns (ntab: none) */
	BoosterHandle bst;
	unsigned rounds, max_rounds, depth, nthread, oof_folds;
	double eta, min_child_weight, val_frac, cal_frac;
	uint64_t seed;
	double platt_a, platt_b;
	double *iso_x, *iso_y;
	size_t niso;
	int64_t t_first, t_last;
	size_t nrows, npos, nfit, nval, ncal;
	json_t *metrics;
	json_t *notes;     /* words about the training data; NULL: none */
};

/* ---- data ------------------------------------------------------------ */

void model_data_free(struct model_data *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->ntab; i++)
		free(d->tab_names[i]);
	free(d->tab_names);
	free(d->tab);
	free(d->sp_start);
	free(d->sp);
	free(d->y);
	free(d->time);
	free(d->effort);
	free(d);
}

int model_data_new(struct model_data **out, const char *const *tab_names,
		   size_t ntab)
{
	struct model_data *d;
	size_t i;

	*out = NULL;
	if (ntab > MODEL_MAX_TAB)
		return pt_error_set(PT_ETOOBIG, "%zu tabular features, more "
				    "than %u", ntab, MODEL_MAX_TAB);
	d = pt_calloc(1, sizeof(*d));
	if (!d)
		return PT_ENOMEM;
	d->ntab = ntab;
	d->tab_names = pt_calloc(ntab ? ntab : 1, sizeof(char *));
	d->sp_start = pt_calloc(1, sizeof(size_t));
	if (!d->tab_names || !d->sp_start)
		goto fail;
	for (i = 0; i < ntab; i++)
		if (!(d->tab_names[i] = pt_strdup(tab_names[i])))
			goto fail;
	*out = d;
	return 0;
fail:
	model_data_free(d);
	return PT_ENOMEM;
}

static int grow_rows(struct model_data *d)
{
	size_t cap = d->cap ? d->cap * 2 : 256;
	void *p;

#define GROW(field, count)                                                   \
	do {                                                                 \
		p = pt_reallocarray(d->field, (count), sizeof(*d->field));   \
		if (!p)                                                      \
			return PT_ENOMEM;                                    \
		d->field = p;                                                \
	} while (0)
	GROW(tab, cap * (d->ntab ? d->ntab : 1));
	GROW(sp_start, cap + 1);
	GROW(y, cap);
	GROW(time, cap);
	GROW(effort, cap);
#undef GROW
	d->cap = cap;
	return 0;
}

static int cmp_sparse(const void *a, const void *b)
{
	const struct model_sparse *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

int model_data_add(struct model_data *d, const float *tab,
		   const struct model_sparse *sp, size_t nsp, int y,
		   int64_t time, double effort)
{
	struct model_sparse *row;
	size_t i, m = 0;
	int rc;

	if (d->n == d->cap && (rc = grow_rows(d)))
		return rc;
	if (d->nsp + nsp > d->spcap) {
		size_t cap = d->spcap ? d->spcap : 4096;
		void *p;

		while (cap < d->nsp + nsp)
			cap *= 2;
		p = pt_reallocarray(d->sp, cap, sizeof(*d->sp));
		if (!p)
			return PT_ENOMEM;
		d->sp = p;
		d->spcap = cap;
	}
	/* sorted, duplicates summed: liblinear wants ascending indices */
	row = d->sp + d->nsp;
	if (nsp) {
		memcpy(row, sp, nsp * sizeof(*sp));
		qsort(row, nsp, sizeof(*row), cmp_sparse);
	}
	for (i = 0; i < nsp; i++) {
		if (m && row[m - 1].index == row[i].index)
			row[m - 1].value += row[i].value;
		else
			row[m++] = row[i];
	}
	if (d->ntab)
		memcpy(d->tab + d->n * d->ntab, tab, d->ntab * sizeof(*tab));
	d->nsp += m;
	d->y[d->n] = y != 0;
	d->time[d->n] = time;
	d->effort[d->n] = effort;
	d->n++;
	d->sp_start[d->n] = d->nsp;
	return 0;
}

/* ---- params ---------------------------------------------------------- */

void model_params_default(struct model_params *p, enum model_kind kind)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->calib = MODEL_CALIB_PLATT;
	p->task = "task";
	p->hash_bits = MODEL_HASH_BITS;
	p->val_frac = 0.15;
	p->cal_frac = 0.15;
	p->oof_folds = 4;
	p->max_rounds = 300;
	p->depth = 5;
	p->nthread = 1;   /* OpenMP threads spin badly on a busy machine */
	p->eta = 0.08;
	p->min_child_weight = 2;
	p->seed = 0;
}

/* ---- small helpers ----------------------------------------------------- */

static void quiet_print(const char *s)
{
	(void)s;
}

static int xgb_error(const char *what)
{
	return pt_error_set(PT_ERROR, "xgboost: %s: %s", what,
			    XGBGetLastError());
}

static double sigmoid(double x)
{
	if (x >= 0)
		return 1.0 / (1.0 + exp(-x));
	return exp(x) / (1.0 + exp(x));
}

static void progress(const struct model_params *p, const char *phase,
		     double done)
{
	if (p->progress)
		p->progress(phase, done, p->progress_ctx);
}


void model_free(struct pt_model *m)
{
	size_t i;

	if (!m)
		return;
	if (m->lr)
		free_and_destroy_model(&m->lr);
	if (m->bst)
		XGBoosterFree(m->bst);
	for (i = 0; i < m->ntab; i++)
		free(m->tab_names[i]);
	free(m->tab_names);
	free(m->tab_use);
	free(m->task);
	free(m->mean);
	free(m->sd);
	free(m->off.w);
	free(m->iso_x);
	free(m->iso_y);
	json_decref(m->metrics);
	json_decref(m->notes);
	free(m);
}

const char *model_version(const struct pt_model *m)
{
	return m->version;
}

const char *model_task(const struct pt_model *m)
{
	return m->task;
}

size_t model_ntab(const struct pt_model *m)
{
	return m->ntab;
}

enum model_offset model_offset(const struct pt_model *m)
{
	return m->off.kind;
}

const char *model_tab_name(const struct pt_model *m, size_t i)
{
	return i < m->ntab ? m->tab_names[i] : "text.score";
}

int model_set_metric(struct pt_model *m, const char *name, double value)
{
	if (isnan(value) || isinf(value))
		return json_object_set_new(m->metrics, name, json_null())
			       ? PT_ENOMEM : 0;
	return json_object_set_new(m->metrics, name, json_real(value))
		       ? PT_ENOMEM : 0;
}

int model_set_note(struct pt_model *m, const char *name, const char *value)
{
	if (!m->notes && !(m->notes = json_object()))
		return PT_ENOMEM;
	return json_object_set_new(m->notes, name, json_string(value))
		       ? PT_ENOMEM : 0;
}

const char *model_note(const struct pt_model *m, const char *name)
{
	return m->notes ? json_string_value(json_object_get(m->notes, name))
			: NULL;
}

/* ---- the linear part --------------------------------------------------- */

/* The log1p-with-sign transform of tablr: counts and sizes are skewed. */
static double slog(double x)
{
	return x >= 0 ? log1p(x) : -log1p(-x);
}

static double tab_z(const struct pt_model *m, const float *tab, size_t j)
{
	double x = tab[j];

	if (isnan(x))
		return 0;
	return (slog(x) - m->mean[j]) / m->sd[j];
}

static double text_logit(const struct pt_model *m,
			 const struct model_sparse *sp, size_t nsp)
{
	const double *w = m->lr->w;
	size_t dim = (size_t)1 << m->hash_bits, i;
	double s = w[dim];

	for (i = 0; i < nsp; i++)
		if (sp[i].index < dim)
			s += w[sp[i].index] * sp[i].value;
	return m->lr_sign * s;
}

static double tab_logit(const struct pt_model *m, const float *tab)
{
	const double *w = m->lr->w;
	size_t j, k = 0;
	double s;

	for (j = 0; j < m->ntab; j++)
		if (m->tab_use[j])
			k++;
	s = w[k];
	for (j = 0, k = 0; j < m->ntab; j++)
		if (m->tab_use[j])
			s += w[k++] * tab_z(m, tab, j);
	return m->lr_sign * s;
}

/* liblinear rows for idx[0..n): one pool of nodes, one pointer per row. */
struct lr_pool {
	struct feature_node *nodes;
	struct feature_node **rows;
	double *yv;
	int dim;
};

static void pool_free(struct lr_pool *p)
{
	free(p->nodes);
	free(p->rows);
	free(p->yv);
	memset(p, 0, sizeof(*p));
}

static int pool_dense(struct lr_pool *p, const struct pt_model *m,
		      const struct offset *o, const struct model_data *d,
		      const size_t *idx, size_t n);

/* Room for n rows of dim columns in total nodes (bias and ends counted). */
static int pool_alloc(struct lr_pool *p, int dim, size_t total, size_t n)
{
	memset(p, 0, sizeof(*p));
	p->dim = dim;
	p->nodes = pt_calloc(total ? total : 1, sizeof(*p->nodes));
	p->rows = pt_calloc(n ? n : 1, sizeof(*p->rows));
	p->yv = pt_calloc(n ? n : 1, sizeof(*p->yv));
	if (!p->nodes || !p->rows || !p->yv) {
		pool_free(p);
		return PT_ENOMEM;
	}
	return 0;
}

static int pool_build(struct lr_pool *p, const struct pt_model *m,
		      const struct model_data *d, const size_t *idx, size_t n)
{
	const struct offset all = { .kind = MODEL_OFFSET_TABULAR, .sd = 1 };
	size_t i, j, total = 0, at = 0;
	int rc;

	if (m->kind == MODEL_KIND_TABLR)
		return pool_dense(p, m, &all, d, idx, n);
	for (i = 0; i < n; i++)
		total += d->sp_start[idx[i] + 1] - d->sp_start[idx[i]] + 2;
	rc = pool_alloc(p, 1 << m->hash_bits, total, n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		size_t r = idx[i];

		p->rows[i] = p->nodes + at;
		p->yv[i] = d->y[r] ? 1 : -1;
		for (j = d->sp_start[r]; j < d->sp_start[r + 1]; j++) {
			p->nodes[at].index = (int)d->sp[j].index + 1;
			p->nodes[at++].value = d->sp[j].value;
		}
		p->nodes[at].index = p->dim + 1;
		p->nodes[at++].value = 1.0;
		p->nodes[at++].index = -1;
	}
	return 0;
}

/* Train liblinear on pool rows pos[0..n). */
static int lr_fit(struct model **out, double *sign, const struct lr_pool *p,
		  const size_t *pos, size_t n, double C)
{
	struct parameter param;
	struct problem prob;
	const char *err;
	size_t i;
	int rc = 0, npos = 0;

	*out = NULL;
	memset(&param, 0, sizeof(param));
	param.solver_type = L2R_LR;
	param.eps = 0.01;
	param.C = C;
	param.p = 0.1;
	memset(&prob, 0, sizeof(prob));
	prob.l = (int)n;
	prob.n = p->dim + 1;
	prob.bias = 1.0;
	prob.y = pt_calloc(n ? n : 1, sizeof(double));
	prob.x = pt_calloc(n ? n : 1, sizeof(struct feature_node *));
	if (!prob.y || !prob.x) {
		rc = PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		prob.y[i] = p->yv[pos[i]];
		prob.x[i] = p->rows[pos[i]];
		npos += prob.y[i] > 0;
	}
	if (!npos || npos == (int)n) {
		rc = pt_error_set(PT_EINVAL, "logistic regression needs both "
				  "classes (%d of %zu rows positive)", npos, n);
		goto out;
	}
	set_print_string_function(quiet_print);
	err = check_parameter(&prob, &param);
	if (err) {
		rc = pt_error_set(PT_EINVAL, "liblinear: %s", err);
		goto out;
	}
	*out = train(&prob, &param);
	if (!*out) {
		rc = pt_error_set(PT_ENOMEM, "liblinear: training failed");
		goto out;
	}
	*sign = (*out)->label[0] == 1 ? 1.0 : -1.0;
out:
	free(prob.y);
	free(prob.x);
	return rc;
}

static double pool_logit(const struct model *lr, double sign,
			 const struct feature_node *x)
{
	double s = 0;

	for (; x->index != -1; x++)
		s += lr->w[x->index - 1] * x->value;
	return sign * s;
}

/* ---- the trees' offset ------------------------------------------------ */

static size_t *range(size_t from, size_t to)
{
	size_t *r = pt_calloc(to > from ? to - from : 1, sizeof(*r)), i;

	if (r)
		for (i = from; i < to; i++)
			r[i - from] = i;
	return r;
}

/* The size columns, when both are there and used; ntab otherwise. */
static void size_cols(struct pt_model *m)
{
	size_t j;

	m->col_added = m->col_removed = m->ntab;
	for (j = 0; j < m->ntab; j++) {
		if (!m->tab_use[j])
			continue;
		if (!strcmp(m->tab_names[j], SIZE_ADDED))
			m->col_added = j;
		else if (!strcmp(m->tab_names[j], SIZE_REMOVED))
			m->col_removed = j;
	}
	if (m->col_added == m->ntab || m->col_removed == m->ntab)
		m->col_added = m->col_removed = m->ntab;
}

static double lines(const float *tab, size_t j)
{
	double x = tab[j];

	return isnan(x) || x < 0 ? 0 : x;
}

/* The offset's standardised inputs of one row into z; returns how many. */
static size_t offset_inputs(double *z, const struct pt_model *m,
			    const struct offset *o, const float *tab)
{
	size_t j, k = 0;

	if (o->kind == MODEL_OFFSET_SIZE) {
		z[0] = (log1p(lines(tab, m->col_added) +
			      lines(tab, m->col_removed)) - o->mean) / o->sd;
		return 1;
	}
	for (j = 0; j < m->ntab; j++)
		if (m->tab_use[j])
			z[k++] = tab_z(m, tab, j);
	return k;
}

/*
 * Dense liblinear rows of idx[0..n): the inputs of o (offset_inputs: the
 * size column, or every used column as tablr has them), then the bias.
 */
static int pool_dense(struct lr_pool *p, const struct pt_model *m,
		      const struct offset *o, const struct model_data *d,
		      const size_t *idx, size_t n)
{
	double z[MODEL_MAX_TAB];
	size_t i, k, nf = o->kind == MODEL_OFFSET_SIZE ? 1 : m->nused, at = 0;
	int rc = pool_alloc(p, (int)nf, n * (nf + 2) + 1, n);

	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		size_t r = idx[i];

		offset_inputs(z, m, o, d->tab + r * d->ntab);
		p->rows[i] = p->nodes + at;
		p->yv[i] = d->y[r] ? 1 : -1;
		for (k = 0; k < nf; k++) {
			p->nodes[at].index = (int)k + 1;
			p->nodes[at++].value = z[k];
		}
		p->nodes[at].index = (int)nf + 1;
		p->nodes[at++].value = 1.0;
		p->nodes[at++].index = -1;
	}
	return 0;
}

static double offset_value(const struct pt_model *m, const struct offset *o,
			   const float *tab)
{
	double z[MODEL_MAX_TAB], s;
	size_t k, n;

	if (o->kind != MODEL_OFFSET_SIZE && o->kind != MODEL_OFFSET_TABULAR)
		return 0;
	n = offset_inputs(z, m, o, tab);
	s = o->w[o->nw];
	for (k = 0; k < n; k++)
		s += o->w[k] * z[k];
	return s;
}

/*
 * Each used column's term of the offset added to col[], the intercept to
 * *bias.  The size term goes to the two size columns in proportion to
 * their lines (all of it to lines added when there are none).
 */
static void offset_terms(double *col, double *bias, const struct pt_model *m,
			 const float *tab)
{
	const struct offset *o = &m->off;
	double z[MODEL_MAX_TAB], t, a, r, share;
	size_t j, k = 0;

	if (o->kind != MODEL_OFFSET_SIZE && o->kind != MODEL_OFFSET_TABULAR)
		return;
	offset_inputs(z, m, o, tab);
	*bias += o->w[o->nw];
	if (o->kind == MODEL_OFFSET_SIZE) {
		t = o->w[0] * z[0];
		a = lines(tab, m->col_added);
		r = lines(tab, m->col_removed);
		share = a + r > 0 ? a / (a + r) : 1;
		col[m->col_added] += t * share;
		col[m->col_removed] += t * (1 - share);
		return;
	}
	for (j = 0; j < m->ntab; j++)
		if (m->tab_use[j]) {
			col[j] += o->w[k] * z[k];
			k++;
		}
}

/*
 * Fit the offset of this kind on the fit slice (rows idx[0..nfit)) into
 * *o; the tabular one needs tab_stats() first.
 */
static int offset_fit(struct offset *o, const struct pt_model *m,
		      const struct model_data *d, const size_t *idx,
		      enum model_offset kind)
{
	struct lr_pool pool;
	struct model *lr = NULL;
	size_t nf, i, k, *pos = NULL;
	double s = 0, ss = 0, sign = 1, var;
	int rc = PT_ENOMEM;

	memset(o, 0, sizeof(*o));
	memset(&pool, 0, sizeof(pool));
	o->kind = kind;
	o->sd = 1;
	if (kind != MODEL_OFFSET_SIZE && kind != MODEL_OFFSET_TABULAR)
		return 0;
	nf = kind == MODEL_OFFSET_SIZE ? 1 : m->nused;
	if (kind == MODEL_OFFSET_SIZE) {
		for (i = 0; i < m->nfit; i++) {
			const float *tab = d->tab + idx[i] * d->ntab;
			double x = log1p(lines(tab, m->col_added) +
					 lines(tab, m->col_removed));

			s += x;
			ss += x * x;
		}
		o->mean = s / (double)m->nfit;
		var = ss / (double)m->nfit - o->mean * o->mean;
		o->sd = var > 1e-12 ? sqrt(var) : 1;
	}
	o->w = pt_calloc(nf + 1, sizeof(*o->w));
	pos = range(0, m->nfit);
	if (!o->w || !pos)
		goto out;
	rc = pool_dense(&pool, m, o, d, idx, m->nfit);
	if (!rc)
		rc = lr_fit(&lr, &sign, &pool, pos, m->nfit, OFFSET_C);
	if (rc)
		goto out;
	for (k = 0; k <= nf; k++)
		o->w[k] = sign * lr->w[k];
	o->nw = nf;
out:
	if (lr)
		free_and_destroy_model(&lr);
	if (rc) {
		free(o->w);
		o->w = NULL;
	}
	pool_free(&pool);
	free(pos);
	return rc;
}

/* ---- calibration ----------------------------------------------------- */

/* Platt scaling, the Lin, Lin and Weng (2007) Newton method. */
static void platt_fit(double *a_out, double *b_out, const double *f,
		      const int *y, size_t n)
{
	double prior1 = 0, prior0 = 0, hi, lo, A, B, fval = 0;
	size_t i;
	int it;

	for (i = 0; i < n; i++) {
		if (y[i])
			prior1++;
		else
			prior0++;
	}
	hi = (prior1 + 1) / (prior1 + 2);
	lo = 1 / (prior0 + 2);
	A = 0;
	B = log((prior0 + 1) / (prior1 + 1));
	for (i = 0; i < n; i++) {
		double t = y[i] ? hi : lo, z = f[i] * A + B;

		fval += z >= 0 ? t * z + log1p(exp(-z))
			       : (t - 1) * z + log1p(exp(z));
	}
	for (it = 0; it < 100; it++) {
		double h11 = 1e-12, h22 = 1e-12, h21 = 0, g1 = 0, g2 = 0;
		double det, dA, dB, gd, step;

		for (i = 0; i < n; i++) {
			double t = y[i] ? hi : lo, z = f[i] * A + B, p, q;

			if (z >= 0) {
				p = exp(-z) / (1 + exp(-z));
				q = 1 / (1 + exp(-z));
			} else {
				p = 1 / (1 + exp(z));
				q = exp(z) / (1 + exp(z));
			}
			h11 += f[i] * f[i] * p * q;
			h22 += p * q;
			h21 += f[i] * p * q;
			g1 += f[i] * (t - p);
			g2 += t - p;
		}
		if (fabs(g1) < 1e-5 && fabs(g2) < 1e-5)
			break;
		det = h11 * h22 - h21 * h21;
		dA = -(h22 * g1 - h21 * g2) / det;
		dB = -(-h21 * g1 + h11 * g2) / det;
		gd = g1 * dA + g2 * dB;
		for (step = 1; step >= 1e-10; step /= 2) {
			double nA = A + step * dA, nB = B + step * dB, nf = 0;

			for (i = 0; i < n; i++) {
				double t = y[i] ? hi : lo, z = f[i] * nA + nB;

				nf += z >= 0 ? t * z + log1p(exp(-z))
					     : (t - 1) * z + log1p(exp(z));
			}
			if (nf < fval + 0.0001 * step * gd) {
				A = nA;
				B = nB;
				fval = nf;
				break;
			}
		}
		if (step < 1e-10)
			break;
	}
	*a_out = A;
	*b_out = B;
}

/* Isotonic regression by pool-adjacent-violators; blocks kept as points. */
static int isotonic_fit(struct pt_model *m, const double *f, const int *y,
			size_t n)
{
	size_t *idx, i, nb = 0;
	double *bx, *by, *bw;
	int rc = PT_ENOMEM;

	idx = pt_calloc(n, sizeof(*idx));
	bx = pt_calloc(n, sizeof(*bx));
	by = pt_calloc(n, sizeof(*by));
	bw = pt_calloc(n, sizeof(*bw));
	if (!idx || !bx || !by || !bw)
		goto out;
	metrics_order(idx, f, NULL, n);
	/* ascending by score: walk the descending order backwards */
	for (i = n; i-- > 0;) {
		size_t r = idx[i];

		if (nb && bx[nb - 1] == f[r]) {
			/* a tie joins the block of equal score */
			by[nb - 1] = (by[nb - 1] * bw[nb - 1] + y[r]) /
				     (bw[nb - 1] + 1);
			bw[nb - 1] += 1;
		} else {
			bx[nb] = f[r];
			by[nb] = y[r];
			bw[nb++] = 1;
		}
		while (nb > 1 && by[nb - 2] >= by[nb - 1]) {
			double w = bw[nb - 2] + bw[nb - 1];

			bx[nb - 2] = (bx[nb - 2] * bw[nb - 2] +
				      bx[nb - 1] * bw[nb - 1]) / w;
			by[nb - 2] = (by[nb - 2] * bw[nb - 2] +
				      by[nb - 1] * bw[nb - 1]) / w;
			bw[nb - 2] = w;
			nb--;
		}
	}
	m->iso_x = bx;
	m->iso_y = by;
	m->niso = nb;
	bx = by = NULL;
	rc = 0;
out:
	free(idx);
	free(bx);
	free(by);
	free(bw);
	return rc;
}

static double calibrate(const struct pt_model *m, double f)
{
	double p;

	if (m->calib == MODEL_CALIB_PLATT) {
		p = sigmoid(-(m->platt_a * f + m->platt_b));
	} else if (!m->niso) {
		p = sigmoid(f);
	} else if (f <= m->iso_x[0]) {
		p = m->iso_y[0];
	} else if (f >= m->iso_x[m->niso - 1]) {
		p = m->iso_y[m->niso - 1];
	} else {
		size_t lo = 0, hi = m->niso - 1;

		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;

			if (m->iso_x[mid] <= f)
				lo = mid;
			else
				hi = mid;
		}
		p = m->iso_y[lo] + (m->iso_y[hi] - m->iso_y[lo]) *
					   (f - m->iso_x[lo]) /
					   (m->iso_x[hi] - m->iso_x[lo]);
	}
	if (p < P_EPS)
		p = P_EPS;
	if (p > 1 - P_EPS)
		p = 1 - P_EPS;
	return p;
}

/* ---- the tree part ----------------------------------------------------- */

static size_t xgb_ncol(const struct pt_model *m)
{
	return m->nused + 1;   /* used tab columns, then the text score */
}

/*
 * Dense rows for XGBoost: used tab columns, then text[i]; off (NULL:
 * none) is the base margin the trees are fit from.
 */
static int xgb_matrix(DMatrixHandle *out, const struct pt_model *m,
		      const struct model_data *d, const size_t *idx,
		      const size_t *pos, size_t n, const double *text,
		      const double *off)
{
	size_t nc = xgb_ncol(m), i, j, k;
	float *x, *lab, *base;
	int rc = 0;

	*out = NULL;
	x = pt_calloc(n * nc + 1, sizeof(*x));
	lab = pt_calloc(n ? n : 1, sizeof(*lab));
	base = pt_calloc(n ? n : 1, sizeof(*base));
	if (!x || !lab || !base) {
		rc = PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		size_t r = idx[pos[i]];
		const float *tab = d->tab + r * d->ntab;

		for (j = 0, k = 0; j < d->ntab; j++)
			if (m->tab_use[j])
				x[i * nc + k++] = tab[j];
		x[i * nc + k] = (float)text[pos[i]];
		lab[i] = (float)d->y[r];
		base[i] = off ? (float)off[pos[i]] : 0;
	}
	if (XGDMatrixCreateFromMat(x, n, nc, NAN, out) ||
	    XGDMatrixSetFloatInfo(*out, "label", lab, n) ||
	    (off && XGDMatrixSetFloatInfo(*out, "base_margin", base, n)))
		rc = xgb_error("building the training matrix");
out:
	free(x);
	free(lab);
	free(base);
	return rc;
}

static int xgb_set_params(BoosterHandle b, const struct pt_model *m)
{
	char v[64];

#define SET(k, val)                                                          \
	do {                                                                 \
		if (XGBoosterSetParam(b, k, val))                            \
			return xgb_error("setting " k);                      \
	} while (0)
	SET("objective", "binary:logistic");
	SET("eval_metric", "logloss");
	SET("tree_method", "hist");
	SET("verbosity", "0");
	SET("base_score", "0.5");
	SET("subsample", "1");
	snprintf(v, sizeof(v), "%u", m->depth);
	SET("max_depth", v);
	snprintf(v, sizeof(v), "%.17g", m->eta);
	SET("eta", v);
	snprintf(v, sizeof(v), "%.17g", m->min_child_weight);
	SET("min_child_weight", v);
	snprintf(v, sizeof(v), "%u", m->nthread ? m->nthread : 1);
	SET("nthread", v);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)m->seed);
	SET("seed", v);
#undef SET
	return 0;
}

static int xgb_new(BoosterHandle *out, DMatrixHandle train_m,
		   const struct pt_model *m)
{
	int rc;

	*out = NULL;
	if (XGBoosterCreate(&train_m, 1, out))
		return xgb_error("creating a booster");
	rc = xgb_set_params(*out, m);
	if (rc) {
		XGBoosterFree(*out);
		*out = NULL;
	}
	return rc;
}

/* Margins of dm's rows with the first `rounds` trees (0: all). */
static int xgb_margin(double *outv, BoosterHandle b, DMatrixHandle dm,
		      unsigned rounds, int contribs)
{
	char cfg[160];
	const bst_ulong *shape;
	bst_ulong dim, total = 1, i;
	const float *res;

	snprintf(cfg, sizeof(cfg),
		 "{\"type\": %d, \"training\": false, \"iteration_begin\": 0,"
		 " \"iteration_end\": %u, \"strict_shape\": false}",
		 contribs ? 2 : 1, rounds);
	if (XGBoosterPredictFromDMatrix(b, dm, cfg, &shape, &dim, &res))
		return xgb_error("predicting");
	for (i = 0; i < dim; i++)
		total *= shape[i];
	for (i = 0; i < total; i++)
		outv[i] = res[i];
	return 0;
}

static void dm_free(DMatrixHandle h)
{
	if (h)
		XGDMatrixFree(h);
}

static int xgb_boost(BoosterHandle b, DMatrixHandle dm, unsigned from,
		     unsigned to)
{
	unsigned r;

	for (r = from; r < to; r++)
		if (XGBoosterUpdateOneIter(b, (int)r, dm))
			return xgb_error("boosting");
	return 0;
}

/* ---- training ---------------------------------------------------------- */

static void set_version(struct pt_model *m, const struct model_data *d,
			const size_t *idx, size_t n)
{
	struct buf b = BUF_INIT;
	uint64_t h = FNV_INIT;
	size_t i, j;

	buf_addf(&b, "format=%d kind=%s calib=%d bits=%u val=%.17g "
		 "cal=%.17g folds=%u rounds=%u depth=%u eta=%.17g "
		 "mcw=%.17g seed=%llu nthread=%u offset=%s",
		 MODEL_FORMAT, kind_names[m->kind], m->calib, m->hash_bits,
		 m->val_frac, m->cal_frac, m->oof_folds, m->max_rounds,
		 m->depth, m->eta, m->min_child_weight,
		 (unsigned long long)m->seed, m->nthread,
		 offset_names[m->offset_ask]);
	for (i = 0; i < m->ntab; i++)
		buf_addf(&b, " %s%s", m->tab_names[i],
			 m->tab_use[i] ? "" : "(unused)");
	h = fnv_bytes(h, b.ptr, b.len);
	buf_free(&b);
	for (i = 0; i < n; i++) {
		size_t r = idx[i];

		h = fnv_bytes(h, &d->time[r], sizeof(d->time[r]));
		h = fnv_bytes(h, &d->y[r], sizeof(d->y[r]));
		h = fnv_bytes(h, d->tab + r * d->ntab, d->ntab * sizeof(float));
		for (j = d->sp_start[r]; j < d->sp_start[r + 1]; j++) {
			h = fnv_bytes(h, &d->sp[j].index,
				      sizeof(d->sp[j].index));
			h = fnv_bytes(h, &d->sp[j].value,
				      sizeof(d->sp[j].value));
		}
	}
	snprintf(m->version, sizeof(m->version), "%s-%016llx", m->task,
		 (unsigned long long)h);
}

static int slices_ok(const struct model_data *d, const size_t *idx,
		     size_t from, size_t to, const char *what)
{
	size_t i, pos = 0;

	for (i = from; i < to; i++)
		pos += d->y[idx[i]] != 0;
	if (to - from < 2 || !pos || pos == to - from)
		return pt_error_set(PT_EINVAL,
				    "the %s slice needs both classes "
				    "(%zu of %zu rows positive)",
				    what, pos, to - from);
	return 0;
}

static void tab_stats(struct pt_model *m, const struct model_data *d,
		      const size_t *idx, size_t nfit)
{
	size_t i, j;

	for (j = 0; j < d->ntab; j++) {
		double s = 0, ss = 0, c = 0, mu, var;

		for (i = 0; i < nfit; i++) {
			double x = d->tab[idx[i] * d->ntab + j];

			if (isnan(x))
				continue;
			x = slog(x);
			s += x;
			ss += x * x;
			c++;
		}
		mu = c ? s / c : 0;
		var = c ? ss / c - mu * mu : 0;
		m->mean[j] = mu;
		m->sd[j] = var > 1e-12 ? sqrt(var) : 1;
	}
}

static struct pt_model *model_alloc(const struct model_params *p,
				    const struct model_data *d)
{
	struct pt_model *m = pt_calloc(1, sizeof(*m));
	size_t j;

	if (!m)
		return NULL;
	m->kind = p->kind;
	m->calib = p->calib;
	m->hash_bits = p->hash_bits ? p->hash_bits : MODEL_HASH_BITS;
	m->val_frac = p->val_frac;
	m->cal_frac = p->cal_frac;
	m->oof_folds = p->oof_folds < 2 ? 2 : p->oof_folds;
	m->max_rounds = p->max_rounds ? p->max_rounds : 1;
	m->depth = p->depth;
	m->nthread = p->nthread;
	m->eta = p->eta;
	m->min_child_weight = p->min_child_weight;
	m->seed = p->seed;
	m->ntab = d->ntab;
	m->lr_sign = 1;
	m->task = pt_strdup(p->task ? p->task : "task");
	m->tab_names = pt_calloc(d->ntab + 1, sizeof(char *));
	m->tab_use = pt_calloc(d->ntab + 1, 1);
	m->mean = pt_calloc(d->ntab + 1, sizeof(double));
	m->sd = pt_calloc(d->ntab + 1, sizeof(double));
	m->metrics = json_object();
	if (!m->task || !m->tab_names || !m->tab_use || !m->mean || !m->sd ||
	    !m->metrics)
		goto fail;
	for (j = 0; j < d->ntab; j++) {
		if (!(m->tab_names[j] = pt_strdup(d->tab_names[j])))
			goto fail;
		m->tab_use[j] = p->tab_use ? p->tab_use[j] != 0 : 1;
		m->nused += m->tab_use[j];
		m->sd[j] = 1;
	}
	m->off.kind = MODEL_OFFSET_NONE;
	m->off.sd = 1;
	m->offset_ask = p->offset;
	size_cols(m);
	return m;
fail:
	model_free(m);
	return NULL;
}

/* AUC of the logits of pool rows pos[0..n) under lr. */
static double lr_auc(const struct model *lr, double sign,
		     const struct lr_pool *pool, const size_t *pos, size_t n)
{
	double *s = pt_calloc(n, sizeof(*s)), auc;
	int *y = pt_calloc(n, sizeof(*y));
	size_t i;

	if (!s || !y) {
		free(s);
		free(y);
		return NAN;
	}
	for (i = 0; i < n; i++) {
		s[i] = pool_logit(lr, sign, pool->rows[pos[i]]);
		y[i] = pool->yv[pos[i]] > 0;
	}
	auc = metrics_roc_auc(s, y, n);
	free(s);
	free(y);
	return auc;
}

/* Pick C on the validation slice, then fit on fit+val into m->lr. */
static int fit_linear(struct pt_model *m, const struct lr_pool *pool,
		      const struct model_params *p, double *val_auc)
{
	size_t *fv = range(0, m->nfit + m->nval);
	double best = -1;
	size_t c;
	int rc = PT_ENOMEM;

	if (!fv)
		goto out;
	for (c = 0; c < NC; c++) {
		struct model *lr;
		double sign, auc;

		progress(p, "choosing C", (double)c / NC);
		rc = lr_fit(&lr, &sign, pool, fv, m->nfit, c_grid[c]);
		if (rc)
			goto out;
		auc = lr_auc(lr, sign, pool, fv + m->nfit, m->nval);
		free_and_destroy_model(&lr);
		if (auc > best + 1e-9) {
			best = auc;
			m->C = c_grid[c];
		}
	}
	*val_auc = best;
	progress(p, "fitting the linear model", 1);
	rc = lr_fit(&m->lr, &m->lr_sign, pool, fv, m->nfit + m->nval, m->C);
out:
	free(fv);
	return rc;
}

/* Out-of-fold text logits for fit+val rows, final-model ones for cal. */
static int oof_scores(double *text, struct pt_model *m,
		      const struct lr_pool *pool,
		      const struct model_params *p)
{
	size_t nfv = m->nfit + m->nval, k, i, K = m->oof_folds;
	size_t *train_pos = pt_calloc(nfv, sizeof(size_t));
	int rc = 0;

	if (!train_pos)
		return PT_ENOMEM;
	for (k = 0; k < K && !rc; k++) {
		size_t lo = nfv * k / K, hi = nfv * (k + 1) / K, nt = 0;
		struct model *lr;
		double sign;

		progress(p, "out-of-fold text scores", (double)k / K);
		for (i = 0; i < nfv; i++)
			if (i < lo || i >= hi)
				train_pos[nt++] = i;
		rc = lr_fit(&lr, &sign, pool, train_pos, nt, m->C);
		if (rc)
			break;
		for (i = lo; i < hi; i++)
			text[i] = pool_logit(lr, sign, pool->rows[i]);
		free_and_destroy_model(&lr);
	}
	for (i = nfv; i < m->nrows; i++)
		text[i] = pool_logit(m->lr, m->lr_sign, pool->rows[i]);
	free(train_pos);
	return rc;
}

/*
 * Best rounds (and its validation AUC) of trees of the current depth;
 * voff is the validation rows' offset (NULL: none); bestmv (NULL: not
 * wanted) gets the validation margins of the best round.
 */
static int tree_rounds(unsigned *rounds, double *best, double *bestmv,
		       struct pt_model *m, DMatrixHandle dfit,
		       DMatrixHandle dval, double *mv, const double *voff,
		       const int *yv, const struct model_params *p)
{
	BoosterHandle b = NULL;
	unsigned r;
	size_t i;
	int rc;

	*best = -1;
	*rounds = ROUND_STEP;
	rc = xgb_new(&b, dfit, m);
	for (r = 0; !rc && r < m->max_rounds; r += ROUND_STEP) {
		unsigned to = r + ROUND_STEP;
		double auc;

		if (to > m->max_rounds)
			to = m->max_rounds;
		progress(p, "choosing the number of trees",
			 (double)r / m->max_rounds);
		rc = xgb_boost(b, dfit, r, to);
		if (!rc)
			rc = xgb_margin(mv, b, dval, to, 0);
		if (rc)
			break;
		for (i = 0; voff && i < m->nval; i++)
			mv[i] += voff[i];
		auc = metrics_roc_auc(mv, yv, m->nval);
		if (auc > *best + 1e-9) {
			*best = auc;
			*rounds = to;
			if (bestmv)
				memcpy(bestmv, mv, m->nval * sizeof(*mv));
		}
		r = to - ROUND_STEP;
	}
	if (b)
		XGBoosterFree(b);
	return rc;
}

/* What the validation slice chose for one offset. */
struct tree_choice {
	unsigned depth, rounds;
	double auc;
	double *val;   /* the validation margins (nval, owned) */
};

/*
 * Depth and rounds chosen on val with trees fit on fit from the offset
 * off (the rows' values; NULL: none).  Depths 2, 3 and p->depth are
 * tried; the shallowest whose validation AUC is within one standard
 * error of the best one wins (a small history cannot tell deep trees
 * from noise, and a deep tree that is no better on the validation
 * slice only adds variance).
 */
static int choose_depth(struct tree_choice *out, struct pt_model *m,
			const struct model_data *d, const size_t *idx,
			const double *text, const double *off, const int *yv,
			size_t np, const struct model_params *p)
{
	DMatrixHandle dfit = NULL, dval = NULL;
	size_t *all = range(0, m->nrows);
	double *mv = pt_calloc(m->nval, sizeof(*mv)), best = -1, auc[3], se;
	double *bm[3] = { NULL, NULL, NULL };
	unsigned depth[3] = { 2, 3, p->depth }, rounds[3], k, nd = 3;
	int rc = PT_ENOMEM;

	out->val = NULL;
	for (k = 0; k < 3; k++)
		if (!(bm[k] = pt_calloc(m->nval + 1, sizeof(double))))
			goto out;
	if (!all || !mv)
		goto out;
	rc = xgb_matrix(&dfit, m, d, idx, all, m->nfit, text, off);
	if (!rc)
		rc = xgb_matrix(&dval, m, d, idx, all + m->nfit, m->nval,
				text, NULL);
	if (p->depth <= 3)
		nd = 1;   /* asked for shallow trees: no search */
	if (nd == 1)
		depth[0] = p->depth;
	for (k = 0; k < nd && !rc; k++) {
		m->depth = depth[k];
		rc = tree_rounds(&rounds[k], &auc[k], bm[k], m, dfit, dval,
				 mv, off ? off + m->nfit : NULL, yv, p);
		if (auc[k] > best)
			best = auc[k];
	}
	if (rc)
		goto out;
	se = metrics_auc_se(best, np, m->nval - np);
	for (k = 0; k < nd && auc[k] < best - se; k++)
		;
	out->depth = depth[k];
	out->rounds = rounds[k];
	out->auc = auc[k];
	out->val = bm[k];
	bm[k] = NULL;
out:
	for (k = 0; k < 3; k++)
		free(bm[k]);
	dm_free(dfit);
	dm_free(dval);
	free(all);
	free(mv);
	return rc;
}

/* The offsets to try, simplest first; returns how many (0: error). */
static size_t offset_kinds(enum model_offset *k, const struct pt_model *m,
			   const struct model_params *p)
{
	size_t n = 0;
	int size = m->col_added < m->ntab;

	if (p->offset != MODEL_OFFSET_AUTO) {
		if (p->offset == MODEL_OFFSET_SIZE && !size) {
			pt_error_set(PT_EINVAL, "a size offset needs the "
				     "columns '" SIZE_ADDED "' and '"
				     SIZE_REMOVED "'");
			return 0;
		}
		k[n++] = p->offset;
		return n;
	}
	k[n++] = MODEL_OFFSET_NONE;
	if (size)
		k[n++] = MODEL_OFFSET_SIZE;
	k[n++] = MODEL_OFFSET_TABULAR;
	return n;
}

/* Every training row's value of offset o (NULL for none). */
static int offset_rows(double **out, const struct pt_model *m,
		       const struct offset *o, const struct model_data *d,
		       const size_t *idx)
{
	size_t i;

	*out = NULL;
	if (o->kind == MODEL_OFFSET_NONE)
		return 0;
	*out = pt_calloc(m->nrows, sizeof(**out));
	if (!*out)
		return PT_ENOMEM;
	for (i = 0; i < m->nrows; i++)
		(*out)[i] = offset_value(m, o, d->tab + idx[i] * d->ntab);
	return 0;
}

/*
 * The offset, depth and rounds chosen on val with trees fit on fit;
 * final trees on fit+val from the same offset (fit on fit alone).  The
 * offsets are tried simplest first (none, size, every used column) and,
 * as for the depth, the first whose validation AUC is within one
 * standard error of the best one wins; the standard error is that of
 * the paired difference (DeLong), as the candidates score the same rows.
 */
static int fit_trees(struct pt_model *m, const struct model_data *d,
		     const size_t *idx, const double *text,
		     const struct model_params *p, double *cal_margin,
		     double *val_auc)
{
	DMatrixHandle dfv = NULL, dcal = NULL;
	enum model_offset kinds[3];
	struct offset cand[3];
	struct tree_choice ch[3];
	double *off[3] = { NULL, NULL, NULL }, best = -1, se = 0;
	size_t *all = range(0, m->nrows), nk, i, c, np = 0, top = 0;
	size_t base = m->nfit + m->nval;
	int *yv = pt_calloc(m->nval, sizeof(*yv));
	char name[64];
	int rc = PT_ENOMEM;

	memset(cand, 0, sizeof(cand));
	memset(ch, 0, sizeof(ch));
	nk = offset_kinds(kinds, m, p);
	if (!nk) {
		rc = PT_EINVAL;
		goto out;
	}
	if (!all || !yv)
		goto out;
	for (i = 0; i < m->nval; i++)
		np += (yv[i] = d->y[idx[m->nfit + i]]) != 0;
	for (c = 0, rc = 0; c < nk && !rc; c++) {
		progress(p, "choosing the offset", (double)c / (double)nk);
		rc = offset_fit(&cand[c], m, d, idx, kinds[c]);
		if (!rc)
			rc = offset_rows(&off[c], m, &cand[c], d, idx);
		if (!rc)
			rc = choose_depth(&ch[c], m, d, idx, text, off[c], yv,
					  np, p);
		if (rc)
			break;
		if (ch[c].auc > best + 1e-9) {
			best = ch[c].auc;
			top = c;
		}
		snprintf(name, sizeof(name), "val_auc_offset_%s",
			 offset_names[kinds[c]]);
		rc = model_set_metric(m, name, ch[c].auc);
	}
	for (c = 0; !rc && c < top; c++) {
		rc = metrics_auc_diff_se(&se, ch[c].val, ch[top].val, yv,
					 m->nval);
		if (!rc && ch[c].auc >= best - se)
			break;
	}
	if (rc)
		goto out;
	m->off = cand[c];
	memset(&cand[c], 0, sizeof(cand[c]));
	m->depth = ch[c].depth;
	m->rounds = ch[c].rounds;
	*val_auc = ch[c].auc;
	rc = model_set_metric(m, "trees_depth", (double)m->depth);
	if (!rc)
		rc = model_set_metric(m, "trees_offset", (double)m->off.kind);
	if (rc)
		goto out;
	progress(p, "fitting the trees", 1);
	rc = xgb_matrix(&dfv, m, d, idx, all, base, text, off[c]);
	if (!rc)
		rc = xgb_new(&m->bst, dfv, m);
	if (!rc)
		rc = xgb_boost(m->bst, dfv, 0, m->rounds);
	if (!rc)
		rc = xgb_matrix(&dcal, m, d, idx, all + base, m->ncal, text,
				NULL);
	if (!rc)
		rc = xgb_margin(cal_margin, m->bst, dcal, 0, 0);
	for (i = 0; !rc && off[c] && i < m->ncal; i++)
		cal_margin[i] += off[c][base + i];
out:
	for (i = 0; i < 3; i++) {
		free(cand[i].w);
		free(off[i]);
		free(ch[i].val);
	}
	dm_free(dfv);
	dm_free(dcal);
	free(all);
	free(yv);
	return rc;
}

static int fit_calibration(struct pt_model *m, const double *f, const int *y,
			   size_t n)
{
	if (m->calib == MODEL_CALIB_ISOTONIC)
		return isotonic_fit(m, f, y, n);
	platt_fit(&m->platt_a, &m->platt_b, f, y, n);
	return 0;
}

static int calib_metrics(struct pt_model *m, const double *f, const int *y,
			 size_t n)
{
	double *pc = pt_calloc(n, sizeof(*pc));
	size_t i;
	int rc;

	if (!pc)
		return PT_ENOMEM;
	for (i = 0; i < n; i++)
		pc[i] = calibrate(m, f[i]);
	rc = model_set_metric(m, "cal_auc", metrics_roc_auc(f, y, n));
	if (!rc)
		rc = model_set_metric(m, "cal_brier", metrics_brier(pc, y, n));
	if (!rc)
		rc = model_set_metric(m, "cal_ece",
				      metrics_ece(pc, y, n, METRICS_ECE_BINS));
	free(pc);
	return rc;
}

int model_train(struct pt_model **out, const struct model_data *d,
		const size_t *idx, size_t n, const struct model_params *p)
{
	struct pt_model *m;
	struct lr_pool pool;
	double *logit = NULL, *calf = NULL, val_lin = NAN, val_tree = NAN;
	int *caly = NULL;
	size_t i, base;
	int rc;

	*out = NULL;
	memset(&pool, 0, sizeof(pool));
	if (p->kind == MODEL_KIND_FULL && p->val_frac <= 0)
		return pt_error_set(PT_EINVAL, "no validation slice");
	m = model_alloc(p, d);
	if (!m)
		return PT_ENOMEM;
	m->nrows = n;
	m->nfit = (size_t)((double)n * (1 - p->val_frac - p->cal_frac));
	m->nval = (size_t)((double)n * p->val_frac);
	m->ncal = n - m->nfit - m->nval;
	base = m->nfit + m->nval;
	rc = slices_ok(d, idx, 0, m->nfit, "fit");
	if (!rc)
		rc = slices_ok(d, idx, m->nfit, base, "validation");
	if (!rc)
		rc = slices_ok(d, idx, base, n, "calibration");
	if (rc)
		goto out;
	m->t_first = d->time[idx[0]];
	m->t_last = d->time[idx[n - 1]];
	for (i = 0; i < n; i++)
		m->npos += d->y[idx[i]] != 0;
	if (m->kind != MODEL_KIND_TEXT)
		tab_stats(m, d, idx, m->nfit);
	logit = pt_calloc(n, sizeof(*logit));
	calf = pt_calloc(m->ncal, sizeof(*calf));
	caly = pt_calloc(m->ncal, sizeof(*caly));
	rc = logit && calf && caly ? pool_build(&pool, m, d, idx, n)
				   : PT_ENOMEM;
	if (!rc)
		rc = fit_linear(m, &pool, p, &val_lin);
	if (rc)
		goto out;
	for (i = 0; i < m->ncal; i++)
		caly[i] = d->y[idx[base + i]];
	if (m->kind == MODEL_KIND_FULL) {
		rc = oof_scores(logit, m, &pool, p);
		pool_free(&pool);
		if (!rc)
			rc = fit_trees(m, d, idx, logit, p, calf, &val_tree);
	} else {
		for (i = 0; i < m->ncal; i++)
			calf[i] = pool_logit(m->lr, m->lr_sign,
					     pool.rows[base + i]);
	}
	if (!rc)
		rc = fit_calibration(m, calf, caly, m->ncal);
	if (!rc)
		rc = model_set_metric(m, "val_auc_linear", val_lin);
	if (!rc && m->kind == MODEL_KIND_FULL)
		rc = model_set_metric(m, "val_auc_trees", val_tree);
	if (!rc)
		rc = calib_metrics(m, calf, caly, m->ncal);
	if (rc)
		goto out;
	set_version(m, d, idx, n);
	*out = m;
	m = NULL;
out:
	pool_free(&pool);
	free(logit);
	free(calf);
	free(caly);
	model_free(m);
	return rc;
}

/* ---- prediction -------------------------------------------------------- */

/* One row's DMatrix for the trees. */
static int xgb_row(DMatrixHandle *dm, const struct pt_model *m,
		   const float *tab, double text)
{
	float x[MODEL_MAX_TAB + 1];
	size_t j, k = 0;

	for (j = 0; j < m->ntab; j++)
		if (m->tab_use[j])
			x[k++] = tab[j];
	x[k++] = (float)text;
	if (XGDMatrixCreateFromMat(x, 1, k, NAN, dm))
		return xgb_error("building a row");
	return 0;
}

static int raw_score(double *f, const struct pt_model *m, const float *tab,
		     const struct model_sparse *sp, size_t nsp)
{
	DMatrixHandle dm = NULL;
	int rc;

	if (m->kind == MODEL_KIND_TABLR) {
		*f = tab_logit(m, tab);
		return 0;
	}
	*f = text_logit(m, sp, nsp);
	if (m->kind == MODEL_KIND_TEXT)
		return 0;
	rc = xgb_row(&dm, m, tab, *f);
	if (!rc)
		rc = xgb_margin(f, m->bst, dm, 0, 0);
	if (!rc)
		*f += offset_value(m, &m->off, tab);
	dm_free(dm);
	return rc;
}

int model_predict(double *p, const struct pt_model *m, const float *tab,
		  const struct model_sparse *sp, size_t nsp)
{
	double f;
	int rc = raw_score(&f, m, tab, sp, nsp);

	*p = rc ? NAN : calibrate(m, f);
	return rc;
}

static int check_spec(const struct pt_model *m, const struct model_data *d)
{
	size_t j;

	if (d->ntab != m->ntab)
		return pt_error_set(PT_EINVAL, "model '%s' has %zu tabular "
				    "features, the data %zu", m->version,
				    m->ntab, d->ntab);
	for (j = 0; j < m->ntab; j++)
		if (strcmp(d->tab_names[j], m->tab_names[j]))
			return pt_error_set(PT_EINVAL,
					    "model '%s' feature %zu is '%s', "
					    "the data's '%s'", m->version, j,
					    m->tab_names[j], d->tab_names[j]);
	return 0;
}

int model_predict_rows(double *p, const struct pt_model *m,
		       const struct model_data *d, const size_t *idx,
		       size_t n)
{
	DMatrixHandle dm = NULL;
	size_t *pos = NULL, i;
	double *f = NULL;
	int rc;

	rc = check_spec(m, d);
	if (rc || !n)
		return rc;
	f = pt_calloc(n, sizeof(*f));
	pos = range(0, n);
	if (!f || !pos) {
		rc = PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		size_t r = idx[i], s = d->sp_start[r];

		f[i] = m->kind == MODEL_KIND_TABLR
			       ? tab_logit(m, d->tab + r * d->ntab)
			       : text_logit(m, d->sp + s,
					    d->sp_start[r + 1] - s);
	}
	if (m->kind == MODEL_KIND_FULL) {
		rc = xgb_matrix(&dm, m, d, idx, pos, n, f, NULL);
		if (!rc)
			rc = xgb_margin(f, m->bst, dm, 0, 0);
		for (i = 0; !rc && i < n; i++)
			f[i] += offset_value(m, &m->off,
					     d->tab + idx[i] * d->ntab);
	}
	for (i = 0; !rc && i < n; i++)
		p[i] = calibrate(m, f[i]);
out:
	dm_free(dm);
	free(f);
	free(pos);
	return rc;
}

static int add_contrib(struct model_contrib **v, size_t *n, size_t *cap,
		       int is_sparse, uint32_t index, double value)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *p = pt_reallocarray(*v, c, sizeof(**v));

		if (!p)
			return PT_ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[*n].is_sparse = is_sparse;
	(*v)[*n].index = index;
	(*v)[(*n)++].value = value;
	return 0;
}

int model_explain(struct model_contrib **out, size_t *n, double *bias,
		  const struct pt_model *m, const float *tab,
		  const struct model_sparse *sp, size_t nsp)
{
	struct model_contrib *v = NULL;
	size_t cap = 0, i, j, k, dim = (size_t)1 << m->hash_bits;
	DMatrixHandle dm = NULL;
	double shap[MODEL_MAX_TAB + 2], col[MODEL_MAX_TAB];
	int rc = 0;

	*out = NULL;
	*n = 0;
	*bias = 0;
	if (m->kind == MODEL_KIND_TABLR) {
		for (j = 0, k = 0; j < m->ntab && !rc; j++)
			if (m->tab_use[j])
				rc = add_contrib(&v, n, &cap, 0, (uint32_t)j,
						 m->lr_sign * m->lr->w[k++] *
							 tab_z(m, tab, j));
		*bias = m->lr_sign * m->lr->w[k];
		goto out;
	}
	for (i = 0; i < nsp && !rc; i++)
		if (sp[i].index < dim)
			rc = add_contrib(&v, n, &cap, 1, sp[i].index,
					 m->lr_sign * m->lr->w[sp[i].index] *
						 sp[i].value);
	if (m->kind == MODEL_KIND_TEXT) {
		*bias = m->lr_sign * m->lr->w[dim];
		goto out;
	}
	if (!rc)
		rc = xgb_row(&dm, m, tab, text_logit(m, sp, nsp));
	if (!rc)
		rc = xgb_margin(shap, m->bst, dm, 0, 1);
	for (j = 0; j < m->ntab; j++)
		col[j] = 0;
	offset_terms(col, bias, m, tab);
	for (j = 0, k = 0; j < m->ntab && !rc; j++)
		if (m->tab_use[j])
			rc = add_contrib(&v, n, &cap, 0, (uint32_t)j,
					 shap[k++] + col[j]);
	if (!rc)
		rc = add_contrib(&v, n, &cap, 0, (uint32_t)m->ntab, shap[k]);
	if (!rc)
		*bias += shap[k + 1];
out:
	dm_free(dm);
	if (rc) {
		free(v);
		*n = 0;
		return rc;
	}
	*out = v;
	return 0;
}

/* ---- the model directory ----------------------------------------------- */

static json_t *real_array(const double *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

/* The trees' offset in the manifest (absent in older ones: none). */
static json_t *offset_json(const struct offset *o)
{
	return json_pack("{s:s, s:o, s:f, s:f}", "kind",
			 offset_names[o->kind], "w",
			 real_array(o->w, o->w ? o->nw + 1 : 0), "mean",
			 o->mean, "sd", o->sd);
}

static json_t *manifest(const struct pt_model *m)
{
	json_t *j, *names, *used;
	size_t i;

	names = json_array();
	used = json_array();
	for (i = 0; i < m->ntab; i++) {
		json_array_append_new(names, json_string(m->tab_names[i]));
		if (m->tab_use[i])
			json_array_append_new(used,
					      json_string(m->tab_names[i]));
	}
	j = json_pack(
		"{s:i, s:s, s:s, s:s, s:s,"
		" s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
		" s:{s:f, s:i, s:i, s:i, s:i, s:f, s:f, s:I, s:i, s:f, s:f},"
		" s:{s:i, s:o, s:o},"
		" s:{s:f, s:f}, s:{s:o, s:o}, s:{s:o, s:o}, s:O}",
		"format", MODEL_FORMAT, "version", m->version, "task", m->task,
		"kind", kind_names[m->kind], "calibration",
		m->calib == MODEL_CALIB_PLATT ? "platt" : "isotonic",
		"training", "first", (json_int_t)m->t_first, "last",
		(json_int_t)m->t_last, "rows", (json_int_t)m->nrows,
		"positives", (json_int_t)m->npos, "fit_rows",
		(json_int_t)m->nfit, "validation_rows", (json_int_t)m->nval,
		"calibration_rows", (json_int_t)m->ncal,
		"params", "C", m->C, "rounds", (int)m->rounds, "max_rounds",
		(int)m->max_rounds, "depth", (int)m->depth, "nthread",
		(int)m->nthread, "eta", m->eta, "min_child_weight",
		m->min_child_weight, "seed", (json_int_t)m->seed, "oof_folds",
		(int)m->oof_folds, "val_frac", m->val_frac, "cal_frac",
		m->cal_frac,
		"features", "hash_bits", (int)m->hash_bits, "tabular", names,
		"used", used,
		"platt", "a", m->platt_a, "b", m->platt_b,
		"isotonic", "x", real_array(m->iso_x, m->niso), "y",
		real_array(m->iso_y, m->niso),
		"standardise", "mean", real_array(m->mean, m->ntab), "sd",
		real_array(m->sd, m->ntab),
		"metrics", m->metrics);
	if (j && m->notes)
		json_object_set(j, "notes", m->notes);
	if (j && m->kind == MODEL_KIND_FULL &&
	    json_object_set_new(j, "offset", offset_json(&m->off))) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

static int remove_dir(const char *dir)
{
	struct buf path = BUF_INIT;
	struct dirent *e;
	DIR *dh = opendir(dir);

	if (!dh)
		return 0;
	while ((e = readdir(dh))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		buf_reset(&path);
		if (!buf_addf(&path, "%s/%s", dir, e->d_name))
			unlink(path.ptr);
	}
	closedir(dh);
	buf_free(&path);
	return rmdir(dir) ? pt_error_set(PT_EIO, "cannot remove '%s': %s",
					 dir, strerror(errno))
			  : 0;
}

static int write_parts(const struct pt_model *m, const char *tmp)
{
	struct buf path = BUF_INIT;
	json_t *j = manifest(m);
	char *text = NULL;
	const char *xbuf;
	bst_ulong xlen;
	int rc = PT_ENOMEM;

	if (!j)
		goto out;
	text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS |
				     JSON_REAL_PRECISION(17));
	if (!text || buf_addf(&path, "%s/" MODEL_MANIFEST, tmp))
		goto out;
	rc = pt_write_file_atomic(path.ptr, text, strlen(text));
	if (rc)
		goto out;
	if (m->lr) {
		buf_reset(&path);
		buf_addf(&path, "%s/" TEXT_FILE, tmp);
		if (save_model(path.ptr, m->lr)) {
			rc = pt_error_set(PT_EIO, "cannot write '%s'",
					  path.ptr);
			goto out;
		}
	}
	if (m->bst) {
		if (XGBoosterSaveModelToBuffer(m->bst, "{\"format\": \"json\"}",
					       &xlen, &xbuf)) {
			rc = xgb_error("saving");
			goto out;
		}
		buf_reset(&path);
		buf_addf(&path, "%s/" TREES_FILE, tmp);
		rc = pt_write_file_atomic(path.ptr, xbuf, xlen);
	}
out:
	json_decref(j);
	free(text);
	buf_free(&path);
	return rc;
}

int model_save(const struct pt_model *m, const char *dir)
{
	struct buf tmp = BUF_INIT, old = BUF_INIT;
	struct stat st;
	int rc;

	rc = buf_addf(&tmp, "%s.tmp.%ld", dir, (long)getpid());
	if (!rc)
		rc = buf_addf(&old, "%s.old.%ld", dir, (long)getpid());
	if (rc)
		goto out;
	remove_dir(tmp.ptr);
	if (mkdir(tmp.ptr, 0755)) {
		rc = pt_error_set(PT_EIO, "cannot create '%s': %s", tmp.ptr,
				  strerror(errno));
		goto out;
	}
	rc = write_parts(m, tmp.ptr);
	if (rc)
		goto out;
	if (!stat(dir, &st) && rename(dir, old.ptr)) {
		rc = pt_error_set(PT_EIO, "cannot move '%s' aside: %s", dir,
				  strerror(errno));
		goto out;
	}
	if (rename(tmp.ptr, dir)) {
		rc = pt_error_set(PT_EIO, "cannot rename '%s' to '%s': %s",
				  tmp.ptr, dir, strerror(errno));
		rename(old.ptr, dir);
		goto out;
	}
	remove_dir(old.ptr);
out:
	if (rc)
		remove_dir(tmp.ptr);
	buf_free(&tmp);
	buf_free(&old);
	return rc;
}

static int real_list(double **out, size_t *n, json_t *a)
{
	size_t i, len = json_array_size(a);

	*out = pt_calloc(len ? len : 1, sizeof(double));
	if (!*out)
		return PT_ENOMEM;
	for (i = 0; i < len; i++)
		(*out)[i] = json_number_value(json_array_get(a, i));
	if (n)
		*n = len;
	return 0;
}

static int parse_offset(struct pt_model *m, json_t *j, const char *path)
{
	struct offset *o = &m->off;
	const char *kind;
	json_error_t err;
	json_t *w;
	size_t k, nw;

	o->kind = MODEL_OFFSET_NONE;
	o->sd = 1;
	if (!j)
		return 0;
	if (json_unpack_ex(j, &err, 0, "{s:s, s:o, s:F, s:F}", "kind", &kind,
			   "w", &w, "mean", &o->mean, "sd", &o->sd))
		return pt_error_set(PT_EINVAL, "cannot read the offset of "
				    "'%s': %s", path, err.text);
	for (k = MODEL_OFFSET_NONE; k <= MODEL_OFFSET_TABULAR &&
				    strcmp(kind, offset_names[k]); k++)
		;
	if (k > MODEL_OFFSET_TABULAR)
		return pt_error_set(PT_EINVAL, "'%s': unknown offset '%s'",
				    path, kind);
	o->kind = (enum model_offset)k;
	if (o->kind == MODEL_OFFSET_NONE)
		return 0;
	nw = o->kind == MODEL_OFFSET_SIZE ? 1 : m->nused;
	if (json_array_size(w) != nw + 1 || !(o->sd > 0) ||
	    (o->kind == MODEL_OFFSET_SIZE && m->col_added == m->ntab))
		return pt_error_set(PT_EINVAL, "'%s': inconsistent offset",
				    path);
	o->nw = nw;
	return real_list(&o->w, NULL, w);
}

static int parse_manifest(struct pt_model *m, json_t *j, const char *path)
{
	json_t *names, *used, *iso_x, *iso_y, *mean, *sd, *metrics;
	const char *version, *task, *kind, *calib;
	json_int_t first, last, rows, npos, nfit, nval, ncal, seed;
	int format, rounds, maxr, depth, nthread, folds, bits;
	json_error_t err;
	size_t i, k;

	if (json_unpack_ex(
		    j, &err, 0,
		    "{s:i, s:s, s:s, s:s, s:s,"
		    " s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
		    " s:{s:F, s:i, s:i, s:i, s:i, s:F, s:F, s:I, s:i, s:F,"
		    " s:F},"
		    " s:{s:i, s:o, s:o},"
		    " s:{s:F, s:F}, s:{s:o, s:o}, s:{s:o, s:o}, s:o}",
		    "format", &format, "version", &version, "task", &task,
		    "kind", &kind, "calibration", &calib, "training", "first",
		    &first, "last", &last, "rows", &rows, "positives", &npos,
		    "fit_rows", &nfit, "validation_rows", &nval,
		    "calibration_rows", &ncal, "params", "C", &m->C, "rounds",
		    &rounds, "max_rounds", &maxr, "depth", &depth, "nthread",
		    &nthread, "eta", &m->eta, "min_child_weight",
		    &m->min_child_weight, "seed", &seed, "oof_folds", &folds,
		    "val_frac", &m->val_frac, "cal_frac", &m->cal_frac,
		    "features", "hash_bits", &bits, "tabular", &names, "used",
		    &used, "platt", "a", &m->platt_a, "b", &m->platt_b,
		    "isotonic", "x", &iso_x, "y", &iso_y, "standardise",
		    "mean", &mean, "sd", &sd, "metrics", &metrics))
		return pt_error_set(PT_EINVAL, "cannot read '%s': %s", path,
				    err.text);
	if (format != MODEL_FORMAT || bits < 1 || bits > 30 ||
	    json_array_size(names) > MODEL_MAX_TAB)
		return pt_error_set(PT_EINVAL, "'%s': unsupported model "
				    "(format %d)", path, format);
	for (i = 0; i < 3 && strcmp(kind, kind_names[i]); i++)
		;
	if (i == 3)
		return pt_error_set(PT_EINVAL, "'%s': unknown kind '%s'", path,
				    kind);
	m->kind = (enum model_kind)i;
	m->calib = strcmp(calib, "platt") ? MODEL_CALIB_ISOTONIC
					  : MODEL_CALIB_PLATT;
	snprintf(m->version, sizeof(m->version), "%s", version);
	m->task = pt_strdup(task);
	m->t_first = first;
	m->t_last = last;
	m->nrows = (size_t)rows;
	m->npos = (size_t)npos;
	m->nfit = (size_t)nfit;
	m->nval = (size_t)nval;
	m->ncal = (size_t)ncal;
	m->seed = (uint64_t)seed;
	m->rounds = (unsigned)rounds;
	m->max_rounds = (unsigned)maxr;
	m->depth = (unsigned)depth;
	m->nthread = (unsigned)nthread;
	m->oof_folds = (unsigned)folds;
	m->hash_bits = (unsigned)bits;
	m->ntab = json_array_size(names);
	m->tab_names = pt_calloc(m->ntab + 1, sizeof(char *));
	m->tab_use = pt_calloc(m->ntab + 1, 1);
	m->metrics = json_deep_copy(metrics);
	if (json_is_object(json_object_get(j, "notes")) &&
	    !(m->notes = json_deep_copy(json_object_get(j, "notes"))))
		return PT_ENOMEM;
	if (!m->task || !m->tab_names || !m->tab_use || !m->metrics)
		return PT_ENOMEM;
	for (i = 0; i < m->ntab; i++) {
		const char *s = json_string_value(json_array_get(names, i));

		if (!s || !(m->tab_names[i] = pt_strdup(s)))
			return PT_ENOMEM;
		for (k = 0; k < json_array_size(used); k++)
			if (!strcmp(s, json_string_value(
						json_array_get(used, k)) ?: ""))
				m->tab_use[i] = 1;
		m->nused += m->tab_use[i];
	}
	if (real_list(&m->iso_x, &m->niso, iso_x) ||
	    real_list(&m->iso_y, NULL, iso_y) ||
	    real_list(&m->mean, NULL, mean) || real_list(&m->sd, NULL, sd))
		return PT_ENOMEM;
	if (json_array_size(iso_y) != m->niso ||
	    json_array_size(mean) != m->ntab || json_array_size(sd) != m->ntab)
		return pt_error_set(PT_EINVAL, "'%s': inconsistent arrays",
				    path);
	size_cols(m);
	return parse_offset(m, json_object_get(j, "offset"), path);
}

static int load_parts(struct pt_model *m, const char *dir)
{
	struct buf path = BUF_INIT;
	char v[32];
	int rc = 0;

	buf_addf(&path, "%s/" TEXT_FILE, dir);
	m->lr = load_model(path.ptr);
	if (!m->lr) {
		rc = pt_error_set(PT_EIO, "cannot load '%s'", path.ptr);
		goto out;
	}
	m->lr_sign = m->lr->label[0] == 1 ? 1.0 : -1.0;
	if ((m->kind == MODEL_KIND_TABLR &&
	     m->lr->nr_feature != (int)m->nused) ||
	    (m->kind != MODEL_KIND_TABLR &&
	     m->lr->nr_feature != 1 << m->hash_bits)) {
		rc = pt_error_set(PT_EINVAL, "'%s' has %d features, the "
				  "manifest says otherwise", path.ptr,
				  m->lr->nr_feature);
		goto out;
	}
	if (m->kind != MODEL_KIND_FULL)
		goto out;
	buf_reset(&path);
	buf_addf(&path, "%s/" TREES_FILE, dir);
	snprintf(v, sizeof(v), "%u", m->nthread ? m->nthread : 1);
	if (XGBoosterCreate(NULL, 0, &m->bst) ||
	    XGBoosterLoadModel(m->bst, path.ptr) ||
	    XGBoosterSetParam(m->bst, "nthread", v) ||
	    XGBoosterSetParam(m->bst, "verbosity", "0"))
		rc = xgb_error(path.ptr);
out:
	buf_free(&path);
	return rc;
}

int model_load(struct pt_model **out, const char *dir)
{
	struct buf path = BUF_INIT;
	struct pt_model *m;
	json_error_t err;
	json_t *j = NULL;
	int rc;

	*out = NULL;
	m = pt_calloc(1, sizeof(*m));
	if (!m || buf_addf(&path, "%s/" MODEL_MANIFEST, dir)) {
		free(m);
		return PT_ENOMEM;
	}
	j = json_load_file(path.ptr, 0, &err);
	if (!j) {
		rc = pt_error_set(PT_EIO, "cannot read '%s': %s", path.ptr,
				  err.text);
		goto out;
	}
	rc = parse_manifest(m, j, path.ptr);
	if (!rc)
		rc = load_parts(m, dir);
	if (!rc) {
		*out = m;
		m = NULL;
	}
out:
	json_decref(j);
	buf_free(&path);
	model_free(m);
	return rc;
}
