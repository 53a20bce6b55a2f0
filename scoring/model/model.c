/*
 * model.c - the classifiers (see model.h for the recipe): liblinear
 * logistic regression on hashed sparse rows, XGBoost on the tabular part
 * plus the out-of-fold text score, a Platt or isotonic calibration, and
 * the model directory (manifest.json, text.model, trees.json).  This file
 * owns the training rows (struct model_data), the parameters, the
 * model's accessors and prediction and explanation; the parts are in
 * model_linear.c (liblinear, the trees' offset), model_trees.c (XGBoost),
 * model_calib.c (calibration), model_train.c (the training protocol) and
 * model_dir.c (the on-disk format), sharing model_int.h.
 */
#include "scoring/model/model.h"

#include <jansson.h>
#include <linear.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

#include "scoring/model/model_int.h"

/* ---- data -------------------------------------------------------------- */

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
		return pt_error_set(PT_ETOOBIG,
				    "%zu tabular features, more "
				    "than %u",
				    ntab, MODEL_MAX_TAB);
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

#define GROW(field, count)                                                 \
	do {                                                               \
		p = pt_reallocarray(d->field, (count), sizeof(*d->field)); \
		if (!p)                                                    \
			return PT_ENOMEM;                                  \
		d->field = p;                                              \
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

static void rev_sparse(struct model_sparse *a, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		struct model_sparse t = a[i];

		a[i] = a[n - 1 - i];
		a[n - 1 - i] = t;
	}
}

#define SWAP(T, a, b)       \
	do {                \
		T t_ = (a); \
		(a) = (b);  \
		(b) = t_;   \
	} while (0)

void model_data_reverse(struct model_data *d)
{
	size_t i, j, k, n = d->n;

	/*
	 * The whole sparse part backwards, then each row forwards again:
	 * row j of the result is row n-1-j, which starts where row n-j
	 * ended, counted from the end.
	 */
	rev_sparse(d->sp, d->nsp);
	for (i = 0, j = n; i < j; i++, j--)
		SWAP(size_t, d->sp_start[i], d->sp_start[j]);
	for (i = 0; i <= n; i++)
		d->sp_start[i] = d->nsp - d->sp_start[i];
	for (i = 0; i < n; i++)
		rev_sparse(d->sp + d->sp_start[i],
			   d->sp_start[i + 1] - d->sp_start[i]);
	for (i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
		for (k = 0; k < d->ntab; k++)
			SWAP(float, d->tab[i * d->ntab + k],
			     d->tab[j * d->ntab + k]);
		SWAP(int, d->y[i], d->y[j]);
		SWAP(int64_t, d->time[i], d->time[j]);
		SWAP(double, d->effort[i], d->effort[j]);
	}
}

size_t model_data_bytes(const struct model_data *d)
{
	return d->n * (d->ntab * sizeof(*d->tab) + sizeof(*d->sp_start) +
		       sizeof(*d->y) + sizeof(*d->time) + sizeof(*d->effort)) +
	       d->nsp * sizeof(*d->sp);
}

/* ---- params ------------------------------------------------------------ */

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
	p->jobs = 1;
	p->max_rounds = 300;
	p->depth = 5;
	p->nthread = 1; /* OpenMP threads spin badly on a busy machine */
	p->eta = 0.08;
	p->min_child_weight = 2;
	p->seed = 0;
}

/* ---- the model --------------------------------------------------------- */

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
			       ? PT_ENOMEM
			       : 0;
	return json_object_set_new(m->metrics, name, json_real(value))
		       ? PT_ENOMEM
		       : 0;
}

int model_set_note(struct pt_model *m, const char *name, const char *value)
{
	if (!m->notes && !(m->notes = json_object()))
		return PT_ENOMEM;
	return json_object_set_new(m->notes, name, json_string(value))
		       ? PT_ENOMEM
		       : 0;
}

const char *model_note(const struct pt_model *m, const char *name)
{
	return m->notes ? json_string_value(json_object_get(m->notes, name))
			: NULL;
}

/* ---- prediction -------------------------------------------------------- */

/* The trees' input: N (1 or 2) rows of tab, text score text[i]; columns. */
static size_t xgb_input(float *x, const struct pt_model *m, const float *tab,
			const double *text, size_t n)
{
	size_t i, j, k = 0;

	for (i = 0; i < n && i < 2; i++) {
		for (j = 0; j < m->ntab; j++)
			if (m->tab_use[j])
				x[k++] = tab[j];
		x[k++] = (float)text[i];
	}
	return k / n;
}

/* One row's DMatrix for the trees (SHAP values need one). */
static int xgb_row(DMatrixHandle *dm, const struct pt_model *m,
		   const float *tab, double text)
{
	float x[MODEL_MAX_TAB + 1];
	size_t cols = xgb_input(x, m, tab, &text, 1);

	if (XGDMatrixCreateFromMat(x, 1, cols, NAN, dm))
		return xgb_error("building a row");
	return 0;
}

/*
 * Every DMatrix XGBoost 1.6 builds, proxies included, reads the
 * cgroup's CPU quota from /sys (GenericParameter): 13% of a patch's
 * scoring time on DPDK.  The margins are predicted in place through one
 * proxy per thread (the models are shared between threads, a proxy is
 * not).  A thread that predicted frees its proxy with model_thread_done()
 * before it ends: freeing it from the key's destructor would call into
 * XGBoost after glibc ran the thread's C++ thread_local destructors, and
 * the thread_local XGBoost then makes is never freed.  The key's
 * destructor stays as the last resort for a thread that forgot.
 */
static pthread_key_t proxy_key;
static pthread_once_t proxy_once = PTHREAD_ONCE_INIT;

static void proxy_free(void *p)
{
	XGDMatrixFree(p);
}

static void proxy_key_init(void)
{
	if (pthread_key_create(&proxy_key, proxy_free))
		abort();
}

void model_thread_done(void)
{
	DMatrixHandle p;

	pthread_once(&proxy_once, proxy_key_init);
	p = pthread_getspecific(proxy_key);
	if (p) {
		pthread_setspecific(proxy_key, NULL);
		XGDMatrixFree(p);
	}
}

static DMatrixHandle thread_proxy(void)
{
	DMatrixHandle p;

	pthread_once(&proxy_once, proxy_key_init);
	p = pthread_getspecific(proxy_key);
	if (!p && !XGProxyDMatrixCreate(&p) &&
	    pthread_setspecific(proxy_key, p)) {
		XGDMatrixFree(p);
		p = NULL;
	}
	return p;
}

/* The trees' margins of N (1 or 2) rows, the DMatrix path's values. */
static int xgb_margins(double *f, const struct pt_model *m, const float *tab,
		       const double *text, size_t n)
{
	static const char cfg[] =
		"{\"type\": 1, \"training\": false, \"iteration_begin\": 0,"
		" \"iteration_end\": 0, \"strict_shape\": false,"
		" \"missing\": NaN, \"cache_id\": 0}";
	float x[2 * (MODEL_MAX_TAB + 1)];
	size_t cols = xgb_input(x, m, tab, text, n), i;
	DMatrixHandle proxy = thread_proxy();
	const bst_ulong *shape;
	bst_ulong dim;
	const float *res;
	char arr[160];

	if (!proxy)
		return xgb_error("a proxy matrix");
	snprintf(arr, sizeof(arr),
		 "{\"data\": [%lu, true], \"shape\": [%zu, %zu], "
		 "\"typestr\": \"<f4\", \"version\": 3}",
		 (unsigned long)(uintptr_t)x, n, cols);
	if (XGBoosterPredictFromDense(m->bst, arr, cfg, proxy, &shape, &dim,
				      &res))
		return xgb_error("predicting");
	for (i = 0; i < n; i++)
		f[i] = res[i];
	return 0;
}

static int raw_score(double *f, const struct pt_model *m, const float *tab,
		     const struct model_sparse *sp, size_t nsp)
{
	double s;
	int rc;

	if (m->kind == MODEL_KIND_TABLR) {
		*f = model_tab_logit(m, tab);
		return 0;
	}
	*f = s = model_text_logit(m, sp, nsp);
	if (m->kind == MODEL_KIND_TEXT)
		return 0;
	rc = xgb_margins(f, m, tab, &s, 1);
	if (!rc)
		*f += model_offset_value(m, &m->off, tab);
	return rc;
}

int model_predict(double *p, const struct pt_model *m, const float *tab,
		  const struct model_sparse *sp, size_t nsp)
{
	double f;
	int rc = raw_score(&f, m, tab, sp, nsp);

	*p = rc ? NAN : model_calibrate(m, f);
	return rc;
}

static int check_spec(const struct pt_model *m, const struct model_data *d)
{
	size_t j;

	if (d->ntab != m->ntab)
		return pt_error_set(PT_EINVAL,
				    "model '%s' has %zu tabular "
				    "features, the data %zu",
				    m->version, m->ntab, d->ntab);
	for (j = 0; j < m->ntab; j++)
		if (strcmp(d->tab_names[j], m->tab_names[j]))
			return pt_error_set(PT_EINVAL,
					    "model '%s' feature %zu is '%s', "
					    "the data's '%s'",
					    m->version, j, m->tab_names[j],
					    d->tab_names[j]);
	return 0;
}

int model_predict_rows(double *p, const struct pt_model *m,
		       const struct model_data *d, const size_t *idx, size_t n)
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
			       ? model_tab_logit(m, d->tab + r * d->ntab)
			       : model_text_logit(m, d->sp + s,
						  d->sp_start[r + 1] - s);
	}
	if (m->kind == MODEL_KIND_FULL) {
		rc = model_xgb_matrix(&dm, m, d, idx, pos, n, f, NULL);
		if (!rc)
			rc = model_xgb_margin(f, m->bst, dm, 0, 0);
		for (i = 0; !rc && i < n; i++)
			f[i] += model_offset_value(m, &m->off,
						   d->tab + idx[i] * d->ntab);
	}
	for (i = 0; !rc && i < n; i++)
		p[i] = model_calibrate(m, f[i]);
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

/*
 * How much the patch's own tokens move the trees' margin: f(s) - f(s0),
 * where s0 is the text score of a changelog with no token (the text
 * model's intercept).  Every token's share is its term of s - s0 times
 * the trees' average slope over that step, so the shares sum to it.
 */
static int text_effect(double *delta, double *slope, const struct pt_model *m,
		       const float *tab, const struct model_sparse *sp,
		       size_t nsp)
{
	size_t dim = (size_t)1 << m->hash_bits;
	double s[2] = { model_text_logit(m, sp, nsp),
			m->lr_sign * m->lr->w[dim] };
	double f[2];
	int rc = xgb_margins(f, m, tab, s, 2); /* f(s) and f(s0) at once */

	if (rc)
		return rc;
	*delta = f[0] - f[1];
	*slope = fabs(s[0] - s[1]) > 1e-12 ? *delta / (s[0] - s[1]) : 0;
	if (!*slope)
		*delta = 0;
	return 0;
}

static int add_tokens(struct model_contrib **v, size_t *n, size_t *cap,
		      const struct pt_model *m, const struct model_sparse *sp,
		      size_t nsp, double scale)
{
	size_t dim = (size_t)1 << m->hash_bits, i;
	int rc = 0;

	for (i = 0; i < nsp && !rc; i++)
		if (sp[i].index < dim)
			rc = add_contrib(v, n, cap, 1, sp[i].index,
					 scale * m->lr_sign *
						 m->lr->w[sp[i].index] *
						 sp[i].value);
	return rc;
}

int model_explain(struct model_contrib **out, size_t *n, double *bias,
		  const struct pt_model *m, const float *tab,
		  const struct model_sparse *sp, size_t nsp)
{
	struct model_contrib *v = NULL;
	size_t cap = 0, j, k, dim = (size_t)1 << m->hash_bits;
	DMatrixHandle dm = NULL;
	double shap[MODEL_MAX_TAB + 2], col[MODEL_MAX_TAB], delta = 0,
							    slope = 0;
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
	if (m->kind == MODEL_KIND_TEXT) {
		rc = add_tokens(&v, n, &cap, m, sp, nsp, 1);
		*bias = m->lr_sign * m->lr->w[dim];
		goto out;
	}
	rc = xgb_row(&dm, m, tab, model_text_logit(m, sp, nsp));
	if (!rc)
		rc = model_xgb_margin(shap, m->bst, dm, 0, 1);
	if (!rc)
		rc = text_effect(&delta, &slope, m, tab, sp, nsp);
	if (!rc)
		rc = add_tokens(&v, n, &cap, m, sp, nsp, slope);
	for (j = 0; j < m->ntab; j++)
		col[j] = 0;
	model_offset_terms(col, bias, m, tab);
	for (j = 0, k = 0; j < m->ntab && !rc; j++)
		if (m->tab_use[j])
			rc = add_contrib(&v, n, &cap, 0, (uint32_t)j,
					 shap[k++] + col[j]);
	/* what a changelog with no token would give the text score */
	if (!rc)
		*bias += shap[k + 1] + shap[k] - delta;
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
