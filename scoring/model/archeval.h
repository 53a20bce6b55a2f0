/*
 * archeval.h - the archive model's training and honest measurement
 * (`patchtriage train --archive`, `eval --archive`): walk-forward time
 * splits over the applied postings of the imported lists (archds.h),
 * never random cross-validation.  Each test period is scored by models
 * trained only on postings applied before it, labelled as known at the
 * cut (postings younger than the label horizon at the cut are not used
 * as negatives); test periods end a horizon before the newest message.
 * Compared on the same test rows: the full model, the full model without
 * each feature group in turn (and without review and testing together),
 * a size-only logistic regression, a text-only model (subject words),
 * the size rule (more changed lines = riskier) and random.  The report
 * (Markdown, with SVG plots) gives ROC-AUC with bootstrap intervals,
 * PR-AUC, ECE, recall of bug-introducing postings when the top 10% are
 * flagged, the ablation, and the odds of a bug with and without each
 * seed signal.
 */
#ifndef PT_ARCHEVAL_H
#define PT_ARCHEVAL_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/model/archds.h"
#include "scoring/model/model.h"
#include "scoring/util/progress.h"
#include "scoring/util/pt.h"

/* The share of postings flagged for the recall target. */
#define ARCHEVAL_FLAG_SHARE 0.10

struct archeval_opts {
	unsigned folds;	   /* test periods (4) */
	double test_share; /* share of the span tested (0.5) */
	int64_t horizon;   /* label horizon in seconds (365 days) */
	uint64_t seed;
	unsigned bootstrap; /* resamples for intervals (200) */
	/* the trees of the full models (3 and 20; 0: model.h's) */
	unsigned depth;
	double min_child_weight;
	const char *title, *command;
	struct pt_progress progress; /* "evaluating: done/total models" */
};

void archeval_opts_default(struct archeval_opts *o);

/*
 * Evaluate on ds; write OUT_DIR/eval.md and the plots (archive-roc.svg,
 * archive-pr.svg); the Markdown is also appended to md.
 */
int archeval_run(struct buf *md, struct archds *ds,
		 const struct archeval_opts *o, const char *out_dir);

/*
 * The deployed model: the full model fitted on every row whose label is
 * final now (a known bug, or applied at least horizon before the newest
 * message), with its task "risk-archive"; *rows the rows it was fitted
 * on.
 */
int archeval_train(struct pt_model **out, size_t *rows, struct archds *ds,
		   const struct archeval_opts *o,
		   void (*progress)(const char *phase, double done, void *ctx),
		   void *progress_ctx);

#endif
