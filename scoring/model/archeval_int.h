/*
 * archeval_int.h - what archeval.c and archeval_report.c share: the
 * models compared, the pooled test predictions and the run.  Private to
 * those two files; the API is archeval.h.
 */
#ifndef PT_ARCHEVAL_INT_H
#define PT_ARCHEVAL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/model/archeval.h"

#define AE_MAX_FOLDS 16

enum {
	AE_FULL,
	AE_NO_REVIEW,
	AE_NO_RECORD,
	AE_NO_TESTING,
	AE_NO_ITER,
	AE_NO_BOTS,
	AE_NO_AUTHOR,
	AE_NO_REVTEST,
	AE_NO_LIST,
	AE_LR_ALL, /* a logistic regression on every column */
	AE_SIZE,
	AE_TEXT,
	AE_RULE,   /* scores only: changed lines */
	AE_RANDOM, /* scores only */
	AE_NMODELS,
};
#define AE_TRAINED AE_RULE /* the models each fold trains */

extern const char *const archeval_mnames[AE_NMODELS];
extern const char *const archeval_mshort[AE_NMODELS];

struct aepool {
	size_t n, cap;
	size_t *row;
	int *y;
	unsigned *fold;
	double *p[AE_NMODELS];
	unsigned nfolds_run;
	double fold_auc[AE_MAX_FOLDS][AE_NMODELS];
	size_t fold_n[AE_MAX_FOLDS], fold_pos[AE_MAX_FOLDS];
	size_t fold_train[AE_MAX_FOLDS];
	int64_t fold_from[AE_MAX_FOLDS], fold_to[AE_MAX_FOLDS];
};

struct aerun {
	struct archds *ds;
	const struct archeval_opts *o;
	struct aepool pool;
	uint64_t rng;
	struct buf notes;
};

/* The report of a finished run into md and OUT_DIR (eval.md, plots). */
int archeval_report(struct buf *md, struct aerun *r, const char *out_dir);

#endif
