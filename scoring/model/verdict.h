/*
 * verdict.h - what the bot says of one patch, computed once for the
 * daemon and the CLI alike: the patch's mail thread looked up by
 * Message-ID (when a state database is open), the reviews given on the
 * list merged into its trailers, the scores of triage_score() with the
 * thread's features, the reasons worth showing (the filler words of the
 * text model left out) and the Patchwork check descriptions.  So what
 * `score` shows is byte for byte what the daemon posts.  Pure: no
 * network, no printing; whether a check is posted at all (the
 * subsystem's thresholds) is the caller's policy.
 */
#ifndef PT_VERDICT_H
#define PT_VERDICT_H

#include <stddef.h>

#include "scoring/lists/lookup.h"
#include "scoring/lists/thread.h"
#include "scoring/model/triage.h"
#include "scoring/patch/patch.h"

#define VERDICT_MAX_REASONS 5	/* shown in replies */
#define VERDICT_CHECK_REASONS 3 /* shown in a check description */

struct verdict_reason {
	const char *text;      /* owned by the verdict's res */
	const char *direction; /* "raises" / "lowers" */
};

struct verdict {
	struct triage_result res;
	int have_thread; /* the database knows the patch's thread */
	struct thread_features tf;
	struct verdict_reason why[TRIAGE_NTASKS][VERDICT_MAX_REASONS];
	size_t nwhy[TRIAGE_NTASKS];
	char review[160]; /* "3 replies from 2 reviewers, ..." */
};

/* Where the thread of a patch is looked up; both NULL: no database. */
struct verdict_lists {
	struct thread *th;
	struct lookup *lk;
};

/*
 * Score p with t: its thread (by Message-ID) when lists has one, the
 * list's reviews added to p's trailers (as maintainers' tools apply
 * them), the models, the shown reasons and the review summary.  A patch
 * whose thread is unknown is scored as one with no thread.
 */
int verdict_score(struct verdict *v, struct triage *t,
		  const struct verdict_lists *lists, struct patch *p);
void verdict_clear(struct verdict *v);

/*
 * The description of the Patchwork check of task k, fresh in *out:
 * risk "p(bug) 0.42 (model risk-...): reason; reason; reason", fix
 * "untagged fix? p(fix) ...; consider Cc: stable and FIXES" with fixes
 * the suggested "Fixes: ..." line (NULL: "Fixes:").  *out is NULL when
 * the bot never posts that check for p: no model for the task, or a fix
 * check for a patch tagged Fixes: or Cc: stable.
 */
int verdict_check(char **out, const struct verdict *v, enum triage_task k,
		  const struct patch *p, const char *fixes);

#endif
