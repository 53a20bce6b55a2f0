/*
 * triage.h - scoring one patch with the trained models, as the bot does
 * for every patch it sees: load the fix and risk models of a state
 * directory once, then for each patch compute its features as of its
 * date (feat_compute), the calibrated probabilities and the reasons in
 * words (explain_vec).  The conversation a mail thread carries comes in
 * as struct thread_features.  Pure: no network, no printing.
 */
#ifndef PT_TRIAGE_H
#define PT_TRIAGE_H

#include <stddef.h>

#include "scoring/store/db.h"
#include "scoring/model/explain.h"
#include "scoring/model/features.h"
#include "scoring/model/model.h"
#include "scoring/patch/patch.h"
#include "scoring/lists/thread.h"

enum triage_task { TRIAGE_FIX = 0, TRIAGE_RISK = 1, TRIAGE_NTASKS };

struct triage;

struct triage_score {
	int have;               /* a model for this task was loaded */
	double p;               /* calibrated probability */
	const char *version;    /* the model's version id (owned by triage) */
	struct explain_reason *why; /* strongest first */
	size_t nwhy;
	double bias;
};

struct triage_result {
	struct triage_score task[TRIAGE_NTASKS];
	struct feat_vec vec;
};

/*
 * Load STATE_DIR/models/fix and STATE_DIR/models/risk (either may be
 * missing; PT_ENOTFOUND when both are).  db may be NULL (no history).
 */
int triage_open(struct triage **out, struct db *db, const char *state_dir);
void triage_free(struct triage *t);
/* "fix <id>, risk <id>" for logs and check descriptions. */
const char *triage_version(const struct triage *t);
const char *triage_task_version(const struct triage *t, enum triage_task k);

/* Score p; tf (may be NULL) is what its thread says. */
int triage_score(struct triage_result *out, struct triage *t,
		 const struct patch *p, const struct thread_features *tf);
void triage_result_clear(struct triage_result *r);

/* The strongest reason of a task in words, or "" when none. */
const char *triage_top_reason(const struct triage_result *r,
			      enum triage_task k);

#endif
