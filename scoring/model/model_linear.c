/*
 * model_linear.c - the liblinear part of the classifiers: the text
 * model's and tablr's logits, the pool of liblinear rows and the fit of
 * one logistic regression, and the trees' linear offset (none, the size
 * columns, or every used column standardised as tablr has them).  It
 * knows no feature's meaning but the two size columns the size offset is
 * made of.
 */
#include <linear.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/model/model_int.h"

#define OFFSET_C 1.0

/* ---- the linear part --------------------------------------------------- */

static void quiet_print(const char *s)
{
	(void)s;
}

double model_text_logit(const struct pt_model *m, const struct model_sparse *sp,
			size_t nsp)
{
	const double *w = m->lr->w;
	size_t dim = (size_t)1 << m->hash_bits, i;
	double s = w[dim];

	for (i = 0; i < nsp; i++)
		if (sp[i].index < dim)
			s += w[sp[i].index] * sp[i].value;
	return m->lr_sign * s;
}

double model_tab_logit(const struct pt_model *m, const float *tab)
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

void model_pool_free(struct lr_pool *p)
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
		model_pool_free(p);
		return PT_ENOMEM;
	}
	return 0;
}

int model_pool_build(struct lr_pool *p, const struct pt_model *m,
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

void model_lr_quiet(void)
{
	set_print_string_function(quiet_print);
}

/* Train liblinear on pool rows pos[0..n). */
int model_lr_fit_quiet(struct model **out, double *sign,
		       const struct lr_pool *p, const size_t *pos, size_t n,
		       double C)
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
		rc = pt_error_set(PT_EINVAL,
				  "logistic regression needs both "
				  "classes (%d of %zu rows positive)",
				  npos, n);
		goto out;
	}
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

double model_pool_logit(const struct model *lr, double sign,
			const struct feature_node *x)
{
	double s = 0;

	for (; x->index != -1; x++)
		s += lr->w[x->index - 1] * x->value;
	return sign * s;
}

/* ---- the trees' offset ------------------------------------------------- */

/* The size columns, when both are there and used; ntab otherwise. */
void model_size_cols(struct pt_model *m)
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
			      lines(tab, m->col_removed)) -
			o->mean) /
		       o->sd;
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

double model_offset_value(const struct pt_model *m, const struct offset *o,
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
void model_offset_terms(double *col, double *bias, const struct pt_model *m,
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
int model_offset_fit(struct offset *o, const struct pt_model *m,
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
		rc = model_lr_fit_quiet(&lr, &sign, &pool, pos, m->nfit,
					OFFSET_C);
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
	model_pool_free(&pool);
	free(pos);
	return rc;
}
