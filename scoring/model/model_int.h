/*
 * model_int.h - what the files of the model share: struct pt_model, the
 * trees' offset, the pool of liblinear rows, a few small helpers and the
 * functions one part calls in another.  Private to model.c,
 * model_linear.c, model_trees.c, model_calib.c, model_train.c and
 * model_dir.c: only they include it; the API is model.h.
 */
#ifndef PT_MODEL_INT_H
#define PT_MODEL_INT_H

#include <jansson.h>
#include <linear.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <xgboost/c_api.h>

#include "scoring/model/model.h"
#include "scoring/util/pt.h"

#define SIZE_ADDED "size.lines_added"
#define SIZE_REMOVED "size.lines_removed"

/* The manifest's names of enum model_kind and enum model_offset. */
extern const char *const model_kind_names[];
extern const char *const model_offset_names[];

/*
 * The trees' offset: w[0..nw-1] weights of the standardised inputs, then
 * the intercept.  SIZE: one input, (log1p(added + removed) - mean) / sd;
 * TABULAR: the used columns under tab_z().
 */
struct offset {
	enum model_offset kind; /* NONE, SIZE or TABULAR */
	double *w;
	size_t nw;	 /* inputs (w holds nw + 1) */
	double mean, sd; /* SIZE only */
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
	size_t nused;	  /* used tab columns */
	struct model *lr; /* liblinear: text model, or tablr's model */
	double lr_sign;	  /* +1 when lr's label[0] is the positive class */
	double C;
	double *mean, *sd; /* tablr and the tabular offset: per column */
	struct offset off; /* full: the trees' linear offset */
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
	json_t *notes; /* words about the training data; NULL: none */
};

/* liblinear rows for idx[0..n): one pool of nodes, one pointer per row. */
struct lr_pool {
	struct feature_node *nodes;
	struct feature_node **rows;
	double *yv;
	int dim;
};

/* ---- small helpers ----------------------------------------------------- */

static inline int xgb_error(const char *what)
{
	return pt_error_set(PT_ERROR, "xgboost: %s: %s", what,
			    XGBGetLastError());
}

static inline void progress(const struct model_params *p, const char *phase,
			    double done)
{
	if (p->progress)
		p->progress(phase, done, p->progress_ctx);
}

/* The log1p-with-sign transform of tablr: counts and sizes are skewed. */
static inline double slog(double x)
{
	return x >= 0 ? log1p(x) : -log1p(-x);
}

static inline double tab_z(const struct pt_model *m, const float *tab, size_t j)
{
	double x = tab[j];

	if (isnan(x))
		return 0;
	return (slog(x) - m->mean[j]) / m->sd[j];
}

static inline size_t *range(size_t from, size_t to)
{
	size_t *r = pt_calloc(to > from ? to - from : 1, sizeof(*r)), i;

	if (r)
		for (i = from; i < to; i++)
			r[i - from] = i;
	return r;
}

static inline void dm_free(DMatrixHandle h)
{
	if (h)
		XGDMatrixFree(h);
}

/* ---- model_linear.c ---------------------------------------------------- */

double model_text_logit(const struct pt_model *m, const struct model_sparse *sp,
			size_t nsp);
double model_tab_logit(const struct pt_model *m, const float *tab);
void model_pool_free(struct lr_pool *p);
/* The rows idx[0..n) of d: sparse, or dense for tablr. */
int model_pool_build(struct lr_pool *p, const struct pt_model *m,
		     const struct model_data *d, const size_t *idx, size_t n);
/*
 * Train liblinear on pool rows pos[0..n); *sign as pt_model.lr_sign.
 * Call model_lr_quiet() first (once: it sets liblinear's print
 * function, which threads must not race on).
 */
int model_lr_fit_quiet(struct model **out, double *sign,
		       const struct lr_pool *p, const size_t *pos, size_t n,
		       double C);
void model_lr_quiet(void);
double model_pool_logit(const struct model *lr, double sign,
			const struct feature_node *x);

/*
 * fn(k, ctx) for k in [0, n) on up to `jobs` threads (model_par.c), and
 * tick(ctx, jobs done) from the calling thread as they finish and every
 * quarter second; on one thread when jobs is 1 or no thread starts.
 */
void model_par_run(size_t n, unsigned jobs, void (*fn)(size_t k, void *ctx),
		   void (*tick)(void *ctx, size_t done), void *ctx);

/* One fit of a batch (model_par.c): pool rows pos[0..n) at C. */
struct lr_fit {
	const size_t *pos;
	size_t n;
	double C;
	struct model *lr; /* out: NULL if the fit failed */
	double sign;	  /* out, as pt_model.lr_sign */
	int rc;
	char err[256];
};

#define MODEL_MAX_JOBS 64
/*
 * Run fits[0..n) on up to p->jobs threads, saying `phase` through p's
 * progress as they finish; the same models as one at a time.  On a
 * failure the first failed fit's error is set (the others' models are
 * still there for model_lr_fits_free).
 */
int model_lr_fit_all(struct lr_fit *fits, size_t n, const struct lr_pool *pool,
		     const struct model_params *p, const char *phase);
void model_lr_fits_free(struct lr_fit *fits, size_t n);
/* The size columns, when both are there and used; ntab otherwise. */
void model_size_cols(struct pt_model *m);
double model_offset_value(const struct pt_model *m, const struct offset *o,
			  const float *tab);
/* Each used column's term of the offset added to col[], the bias's. */
void model_offset_terms(double *col, double *bias, const struct pt_model *m,
			const float *tab);
/* Fit the offset of this kind on the fit slice (after tab_stats()). */
int model_offset_fit(struct offset *o, const struct pt_model *m,
		     const struct model_data *d, const size_t *idx,
		     enum model_offset kind);

/* ---- model_calib.c ----------------------------------------------------- */

/* The probability of raw score f, kept off 0 and 1. */
double model_calibrate(const struct pt_model *m, double f);
/* Platt or isotonic on the calibration slice's scores f and labels y. */
int model_fit_calibration(struct pt_model *m, const double *f, const int *y,
			  size_t n);
/* cal_auc, cal_brier and cal_ece into the model's metrics. */
int model_calib_metrics(struct pt_model *m, const double *f, const int *y,
			size_t n);

/* ---- model_trees.c ----------------------------------------------------- */

int model_xgb_matrix(DMatrixHandle *out, const struct pt_model *m,
		     const struct model_data *d, const size_t *idx,
		     const size_t *pos, size_t n, const double *text,
		     const double *off);
int model_xgb_margin(double *outv, BoosterHandle b, DMatrixHandle dm,
		     unsigned rounds, int contribs);
/* Offset, depth and rounds on val, then the trees on fit+val. */
int model_fit_trees(struct pt_model *m, const struct model_data *d,
		    const size_t *idx, const double *text,
		    const struct model_params *p, double *cal_margin,
		    double *val_auc);

#endif
