/*
 * progress.h - how a long job below the CLI says how far it has got: a
 * callback struct it is given and calls, never a print.  The CLI
 * (bot/cmd/progress.c) turns the reports into one line on a terminal
 * and limits how often it is drawn, so a job may report every item.
 */
#ifndef PT_PROGRESS_H
#define PT_PROGRESS_H

#include <stddef.h>

struct pt_progress_report {
	const char *stage;  /* what runs ("features"); a new one restarts
			      the rate */
	const char *unit;   /* what done counts ("commits"); NULL when
			      done/total is only a share of the work */
	size_t done, total; /* total 0: not known */
	double share;	    /* 0..1 of the stage done, when total is not
			       known but the share is (bytes read); 0: not */
	const char *note;   /* a detail shown after ("fold 2 of 4"), or
			       NULL */
};

struct pt_progress {
	void (*fn)(const struct pt_progress_report *r, void *ctx);
	void *ctx;
};

static inline void pt_progress_report(const struct pt_progress *p,
				      const struct pt_progress_report *r)
{
	if (p && p->fn)
		p->fn(r, p->ctx);
}

#endif
