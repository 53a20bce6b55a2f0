/*
 * triage.h - the one path that scores a patch with the trained models:
 * the daemon, `score`, `explain` and `stable` all load the models of a
 * state directory here once and, for each patch, compute its features as
 * of its date (feat_compute), the calibrated probabilities and the
 * reasons in words (explain_vec), so that what the CLI shows is what the
 * bot posts.  The conversation a mail thread carries comes in as struct
 * thread_features.  A worker (triage_worker_new) is a feature context of
 * its own for one more thread over the same, read-only models.  Pure: no
 * network, no printing.
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
	int have;	     /* a model for this task was loaded */
	double p;	     /* calibrated probability */
	const char *version; /* the model's version id (owned by triage) */
	const struct pt_model *model; /* the model that scored (triage's) */
	struct explain_reason *why;   /* strongest first */
	size_t nwhy;
	double bias;
};

struct triage_result {
	struct triage_score task[TRIAGE_NTASKS];
	struct feat_vec vec;
};

enum {
	TRIAGE_WANT_FIX = 1 << TRIAGE_FIX,
	TRIAGE_WANT_RISK = 1 << TRIAGE_RISK,
};

struct triage_opts {
	const char *repo; /* the mined repository (its path as mined or
			       real); NULL = the one repository mined */
	unsigned tasks;	  /* TRIAGE_WANT_*; 0 = every task */
};

/*
 * Load STATE_DIR/models/fix and STATE_DIR/models/risk, and with the risk
 * task models/risk-archive (any may be missing; PT_ENOTFOUND when all
 * are, or when a task asked for alone is).
 * db may be NULL (no history).  When the repository is not mined, the
 * patch is scored without its history columns (triage_history says why).
 */
int triage_open(struct triage **out, struct db *db, const char *state_dir);
int triage_open_opts(struct triage **out, struct db *db, const char *state_dir,
		     const struct triage_opts *o);
void triage_free(struct triage *t);
/*
 * 1 when patches are scored against the mined history; else 0, with
 * *why (may be NULL) the reason when a database was given.
 */
int triage_history(const struct triage *t, const char **why);

/* A feature context of its own, for scoring on another thread. */
struct triage_worker;
int triage_worker_new(struct triage_worker **out, const struct triage *t);
void triage_worker_free(struct triage_worker *w);
/* "fix <id>, risk <id>" for logs and check descriptions. */
const char *triage_version(const struct triage *t);
const char *triage_task_version(const struct triage *t, enum triage_task k);
/* The loaded model of a task (owned by t), or NULL. */
const struct pt_model *triage_model(const struct triage *t, enum triage_task k);

/* Score p; tf (may be NULL) is what its thread says. */
int triage_score(struct triage_result *out, struct triage *t,
		 const struct patch *p, const struct thread_features *tf);

enum { TRIAGE_NO_REASONS = 1 }; /* probabilities only: no names, no why */
/* triage_score on worker w (NULL = t's own context) with TRIAGE_* flags. */
int triage_score_with(struct triage_result *out, const struct triage *t,
		      struct triage_worker *w, const struct patch *p,
		      const struct thread_features *tf, unsigned flags);
void triage_result_clear(struct triage_result *r);

/*
 * The archive model (`train --archive`, STATE_DIR/models/risk-archive)
 * is loaded with the risk task when present.  It scores list mail: a
 * patch whose posting the thread tables know, from what the lists said
 * of it as of a moment (archds.h).  1 when loaded (and a db was given).
 */
#define TRIAGE_ARCHIVE_TASK "risk-archive"
int triage_has_archive(const struct triage *t);
/*
 * Replace out's risk score, version and reasons with the archive
 * model's for posting posting_id (patches.id) as of as_of; nothing when
 * no archive model is loaded or posting_id is 0.
 */
int triage_score_archive(struct triage_result *out, const struct triage *t,
			 int64_t posting_id, int64_t as_of);

/* The strongest reason of a task in words, or "" when none. */
const char *triage_top_reason(const struct triage_result *r,
			      enum triage_task k);

#endif
