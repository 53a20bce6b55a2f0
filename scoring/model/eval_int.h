/*
 * eval_int.h - what the two files of the evaluation share: the models
 * compared (their enum and names), the pooled test predictions of a task
 * and the run that fills them, and the functions the walk-forward calls
 * in the report.  Private to scoring/model's eval.c and eval_report.c:
 * only they include it; the API is eval.h.
 */
#ifndef PT_EVAL_INT_H
#define PT_EVAL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/model/dataset.h"
#include "scoring/model/eval.h"
#include "scoring/util/pt.h"

#define DAY 86400

enum { M_FULL, M_NOREVIEW, M_TEXT, M_KAMEI, M_KEYWORD, M_RANDOM, NMODELS };

/* The models' names in the report's table, and short, in plots and
   progress messages. */
extern const char *const eval_mnames[NMODELS];
extern const char *const eval_mshort[NMODELS];

/* The test rows of every fold of a task, each model's prediction. */
struct pool {
	size_t n, cap;
	size_t *row;
	int *y;
	unsigned *fold;
	double *p[NMODELS];
	unsigned nfolds_run;
	double fold_auc[16][NMODELS];
	size_t fold_n[16], fold_pos[16];
	int64_t fold_from[16], fold_to[16];
	size_t fold_train[16];
};

/* One task's evaluation: the data, the options and what the folds gave. */
struct run {
	struct dataset *ds;
	const struct eval_opts *o;
	enum dataset_task task;
	struct pool pool;
	uint64_t rng;
	struct buf notes;
	size_t step0; /* models trained in the tasks before this one */
};

/* The day of t as YYYY-MM-DD (UTC). */
void eval_day_str(char *out, size_t cap, int64_t t);
/* A row of the odds table: bugs with and without the flag has[]. */
void eval_odds_row(struct buf *md, const char *what, struct dataset *ds,
		   const unsigned char *has);
/* The task's section of the report from r's pool, its plots into dir. */
int eval_report_task(struct buf *md, struct run *r, const char *dir);

#endif
