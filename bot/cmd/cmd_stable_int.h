/*
 * cmd_stable_int.h - what the files of `patchtriage stable` share: the
 * options, the ranked candidates and the run that holds them, and the
 * output functions of cmd_stable_out.c that cmd_stable.c calls (the
 * table, the --json, and the signals and dependencies its --mbox mails
 * carry too).  Private to bot/cmd's cmd_stable.c and cmd_stable_out.c:
 * only they include it.
 */
#ifndef PT_CMD_STABLE_INT_H
#define PT_CMD_STABLE_INT_H

#include <git2.h>

#include "scoring/model/model.h"
#include "scoring/model/triage.h"
#include "scoring/stable/stable.h"
#include "bot/cmd/progress.h"

struct opts {
	const char *repo, *range, *branch, *mbox, *version;
	size_t top, jobs;
	double threshold;
	int json;
};

struct cand {
	size_t idx;	/* in the stable set */
	int tier;	/* stable_tier(), the first sort key */
	int hint;	/* stable_hint(), the second */
	int build;	/* stable_build(), the third */
	double p;	/* calibrated p(fix) */
	double keyword; /* the keyword baseline, for comparison */
	char **why;	/* NREASONS texts (or fewer), owned */
	size_t nwhy;
};

struct run {
	struct opts o;
	git_repository *repo;
	struct stable_set *set;
	struct triage *tri;	      /* the fix model and the mined history */
	const struct pt_model *model; /* owned by tri */
	struct cand *c;		      /* candidates, ranked */
	size_t n, shown;
	char *version;
	struct progress line; /* on a terminal */
};

/*
 * What must go to the branch first, ids cut to width and joined by sep:
 * the commit before the range that a pending fix needs, then the earlier
 * candidates on the same lines.
 */
int stable_cmd_add_needs(struct buf *b, const struct stable_set *s,
			 const struct stable_commit *sc, int width,
			 const char *sep);

/* The untagged-backport signals of sc as one line of facts, or "". */
int stable_cmd_add_signals(struct buf *b, const struct stable_set *s,
			   const struct stable_commit *sc);

/* The shown candidates on stdout, as a table or as one JSON object. */
int stable_cmd_print_table(struct run *r);
int stable_cmd_print_json(struct run *r);

#endif
