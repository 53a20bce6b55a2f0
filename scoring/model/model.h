/*
 * model.h - training, saving, loading and applying the classifiers.  A
 * data set (struct model_data) is rows of a sparse hashed part (text and
 * code n-grams, indices below 2^hash_bits) and a dense tabular part
 * (float, NAN = missing) with a label, a time and an effort (changed
 * lines).  model.c knows nothing about patches: scoring/model/features.c makes
 * the rows, this module fits
 *
 *   text:  L2 logistic regression (liblinear, primal trust-region solver,
 *          deterministic) on the sparse part; C chosen on a later slice;
 *   full:  the text model's out-of-fold score joins the tabular part in a
 *          gradient-boosted tree model (XGBoost C API, fixed seed and
 *          thread count, rounds chosen on the same later slice); the
 *          trees start from a linear offset (XGBoost's base_margin) fit
 *          on the fit slice: none, a logistic regression on the log of
 *          the changed lines, or one on all used columns (tablr's
 *          transform), chosen on the same later slice;
 *   tablr: logistic regression on chosen tabular columns (log1p and
 *          standardised), the Kamei et al. baseline;
 *
 * and calibrates the final score (Platt, or isotonic) on the slice after
 * that.  Training rows are used in time order: fit | validation |
 * calibration.  A saved model is a directory: manifest.json (version id =
 * hash of the training data, its range and the parameters; the range;
 * the parameters; the feature spec; the metrics on its slices), text.model
 * (liblinear's format) and trees.json (XGBoost's JSON), written to a
 * temporary directory and renamed into place.
 */
#ifndef PT_MODEL_H
#define PT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/util/pt.h"

#define MODEL_HASH_BITS 18
#define MODEL_MAX_TAB 512u
#define MODEL_MANIFEST "manifest.json"
#define MODEL_FORMAT 1

struct model_sparse {
	uint32_t index; /* < 2^hash_bits */
	float value;
};

struct model_data {
	size_t n, cap;
	size_t ntab;
	char **tab_names; /* ntab names, owned */
	float *tab;	  /* n * ntab, row-major */
	size_t *sp_start; /* n + 1 offsets into sp */
	struct model_sparse *sp;
	size_t nsp, spcap;
	int *y;		/* 0/1 */
	int64_t *time;	/* seconds since the epoch */
	double *effort; /* changed lines (>= 1) */
};

int model_data_new(struct model_data **out, const char *const *tab_names,
		   size_t ntab);
void model_data_free(struct model_data *d);
/* Append a row; tab has ntab values, sp is copied. */
int model_data_add(struct model_data *d, const float *tab,
		   const struct model_sparse *sp, size_t nsp, int y,
		   int64_t time, double effort);
/*
 * Reverse the order of the rows in place (a data set read newest first
 * is put back in time order); each row's sparse part stays sorted.
 */
void model_data_reverse(struct model_data *d);
/* Bytes the rows of D hold (tabular, sparse and per-row parts). */
size_t model_data_bytes(const struct model_data *d);

enum model_kind {
	MODEL_KIND_FULL = 0,
	MODEL_KIND_TEXT,
	MODEL_KIND_TABLR,
};

enum model_calib { MODEL_CALIB_PLATT = 0, MODEL_CALIB_ISOTONIC };

/*
 * The linear offset the trees of a full model start from: chosen on the
 * validation slice (AUTO), or one asked for.  SIZE needs the columns
 * size.lines_added and size.lines_removed.
 */
enum model_offset {
	MODEL_OFFSET_AUTO = 0,
	MODEL_OFFSET_NONE,
	MODEL_OFFSET_SIZE,
	MODEL_OFFSET_TABULAR,
};

struct model_params {
	enum model_kind kind;
	enum model_calib calib;
	const char *task;	   /* "fix", "risk", ... recorded only */
	unsigned hash_bits;	   /* MODEL_HASH_BITS */
	double val_frac, cal_frac; /* 0.15 and 0.15 */
	unsigned oof_folds;	   /* folds for the out-of-fold text score */
	unsigned jobs; /* threads for the liblinear fits (1); same model */
	/* XGBoost */
	unsigned max_rounds, depth, nthread;
	double eta, min_child_weight;
	uint64_t seed;
	enum model_offset offset; /* full models only */
	/* tabular columns to use (NULL: all); kept by name in the manifest */
	const unsigned char *tab_use;
	/* progress: called with a short phase name; may be NULL */
	void (*progress)(const char *phase, double done, void *ctx);
	void *progress_ctx;
};

void model_params_default(struct model_params *p, enum model_kind kind);

struct pt_model; /* not "struct model": liblinear has that name */

/*
 * Fit on the rows idx[0..n) of d, which must be in time order.  Needs
 * both classes in every slice; *out = NULL and PT_EINVAL otherwise.
 */
int model_train(struct pt_model **out, const struct model_data *d,
		const size_t *idx, size_t n, const struct model_params *p);
void model_free(struct pt_model *m);

/* Save to DIR (created; replaced atomically) / load from DIR. */
int model_save(const struct pt_model *m, const char *dir);
int model_load(struct pt_model **out, const char *dir);

/* The version id ("fix-1a2b3c4d5e6f7a8b") and the feature spec. */
const char *model_version(const struct pt_model *m);
const char *model_task(const struct pt_model *m);
size_t model_ntab(const struct pt_model *m);
const char *model_tab_name(const struct pt_model *m, size_t i);
/* The offset the trees start from (NONE for text and tablr models). */
enum model_offset model_offset(const struct pt_model *m);

/*
 * Record a metric in the manifest (eval and train put the held-out
 * numbers there); saved with the model.
 */
int model_set_metric(struct pt_model *m, const char *name, double value);
/*
 * A sentence about the training data (train puts the label regime
 * there), saved in the manifest's "notes"; model_note() is NULL when
 * there is none.
 */
int model_set_note(struct pt_model *m, const char *name, const char *value);
const char *model_note(const struct pt_model *m, const char *name);

/*
 * Free what the calling thread keeps for predicting.  A thread other
 * than main that predicted calls it before it returns.
 */
void model_thread_done(void);

/* Calibrated probability of one row; tab has model_ntab() values. */

int model_predict(double *p, const struct pt_model *m, const float *tab,
		  const struct model_sparse *sp, size_t nsp);
/* Probabilities of rows idx[0..n) of d (same feature spec). */
int model_predict_rows(double *p, const struct pt_model *m,
		       const struct model_data *d, const size_t *idx, size_t n);

/*
 * Contributions to the (uncalibrated) log-odds of one row: one per used
 * tabular column (XGBoost's SHAP values plus the column's term of the
 * trees' offset, or weight * standardised value for tablr), and one per
 * sparse index of the patch: for the text model weight * value; for the
 * tree model the text score's effect, f(s) - f(s0) with s0 the score of
 * a changelog with no token, shared out as each token's term of s - s0
 * times the trees' average slope over that step.  The bias holds the
 * rest: the base log-odds, the offset's intercept and what the text
 * score gives a changelog with no token.  Entries and bias sum to the
 * log-odds.  The size offset's term is shared between size.lines_added
 * and size.lines_removed in proportion to their lines.  The caller maps
 * indices to names.
 */
struct model_contrib {
	int is_sparse; /* 1: index is a hashed index; 0: a tab column */
	uint32_t index;
	double value; /* contribution to the log-odds */
};

int model_explain(struct model_contrib **out, size_t *n, double *bias,
		  const struct pt_model *m, const float *tab,
		  const struct model_sparse *sp, size_t nsp);

#endif
