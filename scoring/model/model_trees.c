/*
 * model_trees.c - the XGBoost stack: dense matrices of the used tabular
 * columns and the text score, boosting and margins, and the choice on
 * the validation slice of the trees' offset, depth and number of rounds
 * (each the simplest within one standard error of the best).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

#include "scoring/model/metrics.h"
#include "scoring/model/model_int.h"

#define ROUND_STEP 10

/* ---- the tree part ----------------------------------------------------- */

static size_t xgb_ncol(const struct pt_model *m)
{
	return m->nused + 1; /* used tab columns, then the text score */
}

/*
 * Dense rows for XGBoost: used tab columns, then text[i]; off (NULL:
 * none) is the base margin the trees are fit from.
 */
int model_xgb_matrix(DMatrixHandle *out, const struct pt_model *m,
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

#define SET(k, val)                                     \
	do {                                            \
		if (XGBoosterSetParam(b, k, val))       \
			return xgb_error("setting " k); \
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
int model_xgb_margin(double *outv, BoosterHandle b, DMatrixHandle dm,
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

static int xgb_boost(BoosterHandle b, DMatrixHandle dm, unsigned from,
		     unsigned to)
{
	unsigned r;

	for (r = from; r < to; r++)
		if (XGBoosterUpdateOneIter(b, (int)r, dm))
			return xgb_error("boosting");
	return 0;
}

/* ---- choosing the trees ------------------------------------------------ */

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
			rc = model_xgb_margin(mv, b, dval, to, 0);
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

/* Step k of n of an outer phase: (k + done) / n of it. */
struct sub_progress {
	const struct model_params *outer;
	unsigned k, n;
};

static void sub_say(const char *phase, double done, void *ctx)
{
	struct sub_progress *s = ctx;

	progress(s->outer, phase, ((double)s->k + done) / (double)s->n);
}

/* What the validation slice chose for one offset. */
struct tree_choice {
	unsigned depth, rounds;
	double auc;
	double *val; /* the validation margins (nval, owned) */
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
	rc = model_xgb_matrix(&dfit, m, d, idx, all, m->nfit, text, off);
	if (!rc)
		rc = model_xgb_matrix(&dval, m, d, idx, all + m->nfit, m->nval,
				      text, NULL);
	if (p->depth <= 3)
		nd = 1; /* asked for shallow trees: no search */
	if (nd == 1)
		depth[0] = p->depth;
	for (k = 0; k < nd && !rc; k++) {
		struct sub_progress sp = { p, k, nd };
		struct model_params q = *p;

		q.progress = p->progress ? sub_say : NULL;
		q.progress_ctx = &sp;
		m->depth = depth[k];
		rc = tree_rounds(&rounds[k], &auc[k], bm[k], m, dfit, dval, mv,
				 off ? off + m->nfit : NULL, yv, &q);
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
						"columns '" SIZE_ADDED
						"' and '" SIZE_REMOVED "'");
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
		(*out)[i] = model_offset_value(m, o, d->tab + idx[i] * d->ntab);
	return 0;
}

/* ---- the offsets side by side --------------------------------------------- */

struct cands;

/* One offset tried: its fit, its rows' values and its depth and rounds. */
struct cand {
	struct pt_model mc; /* a copy: choose_depth sets its depth */
	enum model_offset kind;
	struct offset o;
	double *off;
	struct tree_choice ch;
	int rc;
	char err[256];
	atomic_uint permille; /* its share done, for progress */
	struct cands *all;
};

struct cands {
	struct cand c[3];
	size_t n;
	const struct model_data *d;
	const size_t *idx;
	const double *text;
	const int *yv;
	size_t np;
	const struct model_params *p;
	pthread_t caller;
};

static void cands_say(struct cands *cs)
{
	unsigned sum = 0;
	size_t c;

	for (c = 0; c < cs->n; c++)
		sum += atomic_load(&cs->c[c].permille);
	progress(cs->p, "choosing the trees",
		 (double)sum / (1000.0 * (double)cs->n));
}

/* A candidate's progress; said at once when it runs on the caller. */
static void cand_say(const char *phase, double done, void *ctx)
{
	struct cand *c = ctx;

	(void)phase;
	atomic_store(&c->permille, (unsigned)(done * 999));
	if (pthread_equal(pthread_self(), c->all->caller))
		cands_say(c->all);
}

static void cand_tick(void *ctx, size_t done)
{
	(void)done;
	cands_say(ctx);
}

static void cand_job(size_t k, void *ctx)
{
	struct cands *cs = ctx;
	struct cand *c = &cs->c[k];
	struct model_params q = *cs->p;

	q.progress = cs->p->progress ? cand_say : NULL;
	q.progress_ctx = c;
	c->rc = model_offset_fit(&c->o, &c->mc, cs->d, cs->idx, c->kind);
	if (!c->rc)
		c->rc = offset_rows(&c->off, &c->mc, &c->o, cs->d, cs->idx);
	if (!c->rc)
		c->rc = choose_depth(&c->ch, &c->mc, cs->d, cs->idx, cs->text,
				     c->off, cs->yv, cs->np, &q);
	if (c->rc)
		snprintf(c->err, sizeof(c->err), "%s", pt_error_last());
	atomic_store(&c->permille, 1000);
}

/*
 * Every offset's choice, on up to p->jobs threads (each has its own
 * matrices and boosters, one XGBoost thread each): into cand, off and
 * ch in kinds' order.  The first failed one's error is set.
 */
static int run_candidates(struct offset *cand, double **off,
			  struct tree_choice *ch,
			  const enum model_offset *kinds, size_t nk,
			  const struct pt_model *m, const struct model_data *d,
			  const size_t *idx, const double *text, const int *yv,
			  size_t np, const struct model_params *p)
{
	struct cands *cs = pt_calloc(1, sizeof(*cs));
	size_t c;
	int rc = 0;

	if (!cs)
		return PT_ENOMEM;
	*cs = (struct cands){ .n = nk,
			      .d = d,
			      .idx = idx,
			      .text = text,
			      .yv = yv,
			      .np = np,
			      .p = p,
			      .caller = pthread_self() };
	for (c = 0; c < nk; c++) {
		cs->c[c].mc = *m;
		cs->c[c].kind = kinds[c];
		cs->c[c].all = cs;
		atomic_init(&cs->c[c].permille, 0);
	}
	model_lr_quiet();
	progress(p, "choosing the trees", 0);
	model_par_run(nk, p->jobs, cand_job, cand_tick, cs);
	for (c = 0; c < nk; c++) {
		cand[c] = cs->c[c].o;
		off[c] = cs->c[c].off;
		ch[c] = cs->c[c].ch;
		if (!rc && cs->c[c].rc)
			rc = pt_error_set(cs->c[c].rc, "%s", cs->c[c].err);
	}
	free(cs);
	return rc;
}

/*
 * The offset, depth and rounds chosen on val with trees fit on fit;
 * final trees on fit+val from the same offset (fit on fit alone).  The
 * offsets are tried simplest first (none, size, every used column) and,
 * as for the depth, the first whose validation AUC is within one
 * standard error of the best one wins; the standard error is that of
 * the paired difference (DeLong), as the candidates score the same rows.
 */
int model_fit_trees(struct pt_model *m, const struct model_data *d,
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
	rc = run_candidates(cand, off, ch, kinds, nk, m, d, idx, text, yv, np,
			    p);
	for (c = 0; c < nk && !rc; c++) {
		if (ch[c].auc > best + 1e-9) {
			best = ch[c].auc;
			top = c;
		}
		snprintf(name, sizeof(name), "val_auc_offset_%s",
			 model_offset_names[kinds[c]]);
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
	rc = model_xgb_matrix(&dfv, m, d, idx, all, base, text, off[c]);
	if (!rc)
		rc = xgb_new(&m->bst, dfv, m);
	if (!rc)
		rc = xgb_boost(m->bst, dfv, 0, m->rounds);
	if (!rc)
		rc = model_xgb_matrix(&dcal, m, d, idx, all + base, m->ncal,
				      text, NULL);
	if (!rc)
		rc = model_xgb_margin(cal_margin, m->bst, dcal, 0, 0);
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
