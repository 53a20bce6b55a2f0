/*
 * progress.h - the one progress line of the long commands (mine, eval,
 * train, archive import, stable): "stage: done/total unit, rate/s, ETA
 * m:ss" on stderr when it is a terminal and --quiet is not given,
 * nothing otherwise.  Drawn at most PROGRESS_INTERVAL_MS apart, and at
 * the first and the last item of a stage; progress_end() clears it.
 */
#ifndef PT_CMD_PROGRESS_H
#define PT_CMD_PROGRESS_H

#include "scoring/util/progress.h"

#define PROGRESS_INTERVAL_MS 250

struct cli_ctx;

struct progress {
	int tty;	/* draw at all */
	int shown;	/* a line is on the terminal */
	double t0;	/* when the stage started (seconds, monotonic) */
	double last;	/* when the line was last drawn */
	char stage[96]; /* the current stage */
};

/* tty is set from stderr and ctx->quiet. */
void progress_init(struct progress *pr, const struct cli_ctx *ctx);
/* Draw r if it is time to (the first of a stage always is). */
void progress_show(struct progress *pr, const struct pt_progress_report *r);
/* A struct pt_progress that draws on pr. */
struct pt_progress progress_cb(struct progress *pr);
/* Clear the line, if one is shown. */
void progress_end(struct progress *pr);

#endif
