/*
 * eval.h - honest measurement of the classifiers (`patchtriage eval`):
 * walk-forward time splits over a mined repository's rows (train on
 * everything before a cut, as labelled at the cut; test on the next
 * period; slide), never random cross-validation.  Risk test periods end
 * a label horizon before the newest commit, and training rows younger
 * than the horizon at the cut are not used as negatives.  Every run
 * scores the same test rows with the full model, an ablation without the
 * review/testing group, the text-only model, a Kamei et al. logistic
 * regression, the AUTOSEL-like keyword/size rules and random, and writes
 * a Markdown report with hand-written SVG plots (ROC, precision-recall,
 * reliability, lift).
 */
#ifndef PT_EVAL_H
#define PT_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/model/dataset.h"
#include "scoring/util/progress.h"
#include "scoring/util/pt.h"

struct eval_opts {
	unsigned folds;	   /* test periods (default 4) */
	double test_share; /* share of the span tested (default 0.5) */
	int64_t horizon;   /* label horizon in seconds (365 days) */
	int tasks;	   /* 1 fix, 2 risk, 3 both */
	uint64_t seed;
	unsigned bootstrap;  /* resamples for intervals (200) */
	unsigned jobs;	     /* threads for the liblinear fits (1) */
	const char *title;   /* what was measured, for the report */
	const char *command; /* how, for the report */
	/*
	 * "evaluating: done/total models" (the note: task, model, fold
	 * and the phase of its fit), then for each task's report
	 * "TASK: metrics: done/6 models", "TASK: bootstrap: done/total
	 * resamples" and "TASK: plots"
	 */
	struct pt_progress progress;
};

void eval_opts_default(struct eval_opts *o);

/*
 * Run the evaluation on ds and write OUT_DIR/eval.md and the plots
 * (<task>-roc.svg, -pr.svg, -reliability.svg, -lift.svg).  The report's
 * Markdown is also appended to md.
 */
int eval_run(struct buf *md, struct dataset *ds, const struct eval_opts *o,
	     const char *out_dir);

/* One curve of a plot. */
struct eval_series {
	const char *name;
	const double *x, *y;
	size_t n;
};

/*
 * An SVG line plot of the series on [0,1] x [0,1] with axes, ticks, a
 * legend and (diagonal) a dashed y = x line.
 */
int eval_svg_plot(struct buf *out, const char *title, const char *xlabel,
		  const char *ylabel, const struct eval_series *s, size_t ns,
		  int diagonal);

#endif
