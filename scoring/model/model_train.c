/*
 * model_train.c - the training protocol: time-ordered fit | validation |
 * calibration slices, the C grid, the out-of-fold text scores the trees
 * are stacked on, and the model's version (a hash of the parameters and
 * the training rows).
 */
#include "scoring/model/model.h"

#include <linear.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/model/metrics.h"
#include "scoring/model/model_int.h"
#include "scoring/util/fnv.h"

static const double c_grid[] = { 0.1, 0.5, 2.0, 8.0 };
#define NC (sizeof(c_grid) / sizeof(c_grid[0]))

/* ---- training ---------------------------------------------------------- */

static void set_version(struct pt_model *m, const struct model_data *d,
			const size_t *idx, size_t n)
{
	struct buf b = BUF_INIT;
	uint64_t h = FNV_INIT;
	size_t i, j;

	buf_addf(&b,
		 "format=%d kind=%s calib=%d bits=%u val=%.17g "
		 "cal=%.17g folds=%u rounds=%u depth=%u eta=%.17g "
		 "mcw=%.17g seed=%llu nthread=%u offset=%s",
		 MODEL_FORMAT, model_kind_names[m->kind], m->calib,
		 m->hash_bits, m->val_frac, m->cal_frac, m->oof_folds,
		 m->max_rounds, m->depth, m->eta, m->min_child_weight,
		 (unsigned long long)m->seed, m->nthread,
		 model_offset_names[m->offset_ask]);
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

static int slices_ok(const struct model_data *d, const size_t *idx, size_t from,
		     size_t to, const char *what)
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
	model_size_cols(m);
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
		s[i] = model_pool_logit(lr, sign, pool->rows[pos[i]]);
		y[i] = pool->yv[pos[i]] > 0;
	}
	auc = metrics_roc_auc(s, y, n);
	free(s);
	free(y);
	return auc;
}

/* Pick C on the validation slice: the grid's fits side by side. */
static int choose_c(struct pt_model *m, const struct lr_pool *pool,
		    const size_t *fv, const struct model_params *p,
		    double *val_auc)
{
	struct lr_fit f[NC];
	double best = -1;
	size_t c;
	int rc;

	for (c = 0; c < NC; c++) {
		f[c].pos = fv;
		f[c].n = m->nfit;
		f[c].C = c_grid[c];
	}
	rc = model_lr_fit_all(f, NC, pool, p, "choosing C");
	for (c = 0; c < NC && !rc; c++) {
		double auc =
			lr_auc(f[c].lr, f[c].sign, pool, fv + m->nfit, m->nval);

		if (auc > best + 1e-9) {
			best = auc;
			m->C = c_grid[c];
		}
	}
	model_lr_fits_free(f, NC);
	*val_auc = best;
	return rc;
}

/*
 * The final linear model on fit+val into m->lr and, when text is not
 * NULL, the out-of-fold folds beside it: text[] gets each fit+val row's
 * logit from the fold that left it out, and the calibration rows' from
 * the final model.
 */
static int final_and_folds(struct pt_model *m, const struct lr_pool *pool,
			   const size_t *fv, const struct model_params *p,
			   double *text)
{
	size_t nfv = m->nfit + m->nval, K = text ? m->oof_folds : 0, k, i;
	struct lr_fit *f = pt_calloc(K + 1, sizeof(*f));
	size_t *pos = pt_calloc(K * nfv + 1, sizeof(size_t));
	int rc = f && pos ? 0 : PT_ENOMEM;

	for (k = 0; k < K && !rc; k++) {
		size_t lo = nfv * k / K, hi = nfv * (k + 1) / K, nt = 0;

		f[k + 1].pos = pos + k * nfv;
		for (i = 0; i < nfv; i++)
			if (i < lo || i >= hi)
				pos[k * nfv + nt++] = i;
		f[k + 1].n = nt;
		f[k + 1].C = m->C;
	}
	if (!rc) {
		f[0].pos = fv;
		f[0].n = nfv;
		f[0].C = m->C;
		rc = model_lr_fit_all(f, K + 1, pool, p,
				      text ? "out-of-fold text scores"
					   : "fitting the linear model");
	}
	for (k = 0; k < K && !rc; k++)
		for (i = nfv * k / K; i < nfv * (k + 1) / K; i++)
			text[i] = model_pool_logit(f[k + 1].lr, f[k + 1].sign,
						   pool->rows[i]);
	if (!rc) {
		m->lr = f[0].lr;
		m->lr_sign = f[0].sign;
		f[0].lr = NULL;
	}
	for (i = nfv; !rc && text && i < m->nrows; i++)
		text[i] = model_pool_logit(m->lr, m->lr_sign, pool->rows[i]);
	if (f)
		model_lr_fits_free(f, K + 1);
	free(f);
	free(pos);
	return rc;
}

/*
 * C on the validation slice, then the final fit on fit+val into m->lr
 * (and the out-of-fold text scores when text is not NULL).
 */
static int fit_linear(struct pt_model *m, const struct lr_pool *pool,
		      const struct model_params *p, double *val_auc,
		      double *text)
{
	size_t *fv = range(0, m->nfit + m->nval);
	int rc;

	if (!fv)
		return PT_ENOMEM;
	rc = choose_c(m, pool, fv, p, val_auc);
	if (!rc)
		rc = final_and_folds(m, pool, fv, p, text);
	free(fv);
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
	rc = logit && calf && caly ? model_pool_build(&pool, m, d, idx, n)
				   : PT_ENOMEM;
	if (!rc)
		rc = fit_linear(m, &pool, p, &val_lin,
				m->kind == MODEL_KIND_FULL ? logit : NULL);
	if (rc)
		goto out;
	for (i = 0; i < m->ncal; i++)
		caly[i] = d->y[idx[base + i]];
	if (m->kind == MODEL_KIND_FULL) {
		model_pool_free(&pool);
		if (!rc)
			rc = model_fit_trees(m, d, idx, logit, p, calf,
					     &val_tree);
	} else {
		for (i = 0; i < m->ncal; i++)
			calf[i] = model_pool_logit(m->lr, m->lr_sign,
						   pool.rows[base + i]);
	}
	if (!rc)
		rc = model_fit_calibration(m, calf, caly, m->ncal);
	if (!rc)
		rc = model_set_metric(m, "val_auc_linear", val_lin);
	if (!rc && m->kind == MODEL_KIND_FULL)
		rc = model_set_metric(m, "val_auc_trees", val_tree);
	if (!rc)
		rc = model_calib_metrics(m, calf, caly, m->ncal);
	if (rc)
		goto out;
	set_version(m, d, idx, n);
	*out = m;
	m = NULL;
out:
	model_pool_free(&pool);
	free(logit);
	free(calf);
	free(caly);
	model_free(m);
	return rc;
}
