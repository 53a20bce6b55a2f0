/*
 * dataset.h - the training and evaluation rows of a mined repository:
 * every mined commit (oldest first by commit date) as a feature vector
 * (feat.h) with its labels from the miner (labels table: fix, bug and
 * the date the bug became known, whether it is old enough to be a
 * negative).  Also the task definitions shared by train and eval (which
 * columns each task may use, the Kamei et al. column set), the
 * AUTOSEL-like keyword/size baseline and the label regime (from when a
 * repository's commits carry the trailers the labels come from).  Reads
 * git objects with libgit2 and the state database; writes nothing.
 */
#ifndef PT_DATASET_H
#define PT_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/model/features.h"
#include "scoring/model/model.h"
#include "scoring/util/progress.h"
#include "scoring/util/pt.h"

enum dataset_task { TASK_FIX = 0, TASK_RISK = 1 };

/*
 * The label regime.  A repository that adopted Fixes: (or Cc: stable)
 * late has years of commits that can never be labelled fixes, and whose
 * bugs were mostly fixed before anyone named the commit they fixed:
 * under-labelled for both tasks.  The regime start is the first calendar
 * month (UTC) from which, at every later month, the share of commits
 * with Fixes:/Cc: stable over the trailing DATASET_REGIME_WINDOW months
 * is at least 1/DATASET_REGIME_DIV of that share over all commits from
 * that month on (months whose window or remainder has fewer than
 * DATASET_REGIME_MIN_WINDOW commits are not judged).  The trailing
 * window makes the start late rather than early: a kept row is one the
 * trailers were already in use for.  Fewer than DATASET_REGIME_MIN_ROWS
 * commits or DATASET_REGIME_MIN_FIXES fixes after the start (or in all):
 * no start, every row is kept.
 */
#define DATASET_REGIME_WINDOW 12
#define DATASET_REGIME_DIV 3
#define DATASET_REGIME_MIN_WINDOW 30
#define DATASET_REGIME_MIN_ROWS 200
#define DATASET_REGIME_MIN_FIXES 20
#define DATASET_SINCE_AUTO INT64_MIN /* dataset_opts.since: the regime */

enum dataset_regime_how {
	REGIME_FOUND,	   /* rows before the start left out */
	REGIME_THROUGHOUT, /* trailers throughout: nothing left out */
	REGIME_TOO_LITTLE, /* too little data to tell: nothing left out */
	REGIME_SINCE,	   /* --since DAY: rows before it left out */
	REGIME_ALL,	   /* --since all: nothing left out */
};

struct dataset_regime {
	enum dataset_regime_how how;
	int64_t start;		   /* first commit date kept; 0 = every row */
	int64_t rule_start;	   /* what the rule gives (0 = no cut) */
	size_t before, before_fix; /* commits before start, with trailers */
	size_t after, after_fix;   /* from start on */
	char why[480];		   /* one sentence for reports and manifests */
};

/*
 * The regime of repository REPO_ID from its commits and labels tables.
 * SINCE: DATASET_SINCE_AUTO (the rule), 0 (every row, "--since all") or
 * a commit date (the override); the rule's own answer is always in
 * rule_start and named in why.
 */
int dataset_regime(struct dataset_regime *out, struct db *db, int64_t repo_id,
		   int64_t since);

/*
 * --since as given: "auto" (DATASET_SINCE_AUTO), "all" (0) or a day
 * YYYY-MM-DD (its midnight UTC).
 */
int dataset_parse_since(int64_t *out, const char *s);

struct dataset {
	struct model_data *d; /* d->y is scratch: set per task */
	size_t n;
	int64_t *commit_id;
	int *fix, *bug;
	int64_t *discovered;  /* INT64_MAX when never */
	unsigned char *negok; /* labels.negative_ok */
	double *keyword;      /* keyword baseline score of the fix task */
	unsigned char *has_reviewed, *has_tested;
	int64_t newest;		      /* repos.newest */
	struct dataset_regime regime; /* the rows' start and why */
	/*
	 * The labelled commits from the regime start (regime.after) are
	 * n rows plus those left out: the oldest past max_rows, and those
	 * that cannot be read as a patch (not in the object database, or
	 * a diff over a limit of pt.h), the first of these and why.
	 */
	size_t considered, capped, unreadable;
	int budget_bound; /* capped by max_bytes, not by max_rows */
	char unreadable_why[160];
};

struct dataset_opts {
	/* commit_date >= since; 0 = all; DATASET_SINCE_AUTO: the regime */
	int64_t since;
	size_t max_rows; /* keep the newest max_rows; 0 = all */
	/*
	 * Keep the newest rows that fit in max_bytes (dataset_bytes());
	 * 0 = no limit.  The rows are read newest first, so what a budget
	 * leaves out is the oldest, and a history of any length is read
	 * in bounded memory.
	 */
	size_t max_bytes;
	unsigned hash_bits;
	/*
	 * Threads that read the rows (each its own repository handle and
	 * feature statements); 0 or 1: this one only.  The rows are the
	 * same for any number.
	 */
	unsigned jobs;
	/*
	 * "reading the history" (the regime, the counts, the feature
	 * context) without a unit, then "features: done/total commits"
	 */
	struct pt_progress progress;
};

/*
 * Append to B how the labelled commits from the regime start became the
 * rows: "31 of the 32 labelled commits from the regime start; 1 left
 * out, not readable as a patch (first: ...)", so the regime's counts and
 * a model's row count can be told apart.
 */
int dataset_rows_note(struct buf *b, const struct dataset *ds);

/*
 * The default memory budget of the rows, in MiB (train and eval,
 * --max-memory).  Measured on a synthetic 100k-commit history
 * (tests/bench/kernelgen): rows 116 MiB, train's peak 436 MiB, the rest
 * being the fits' copies and libgit2; 640 MiB of rows is about 550k such
 * commits.  The peak at that size is not measured yet
 * (docs/BENCHMARKS.md, kernel-size rehearsal).
 */
#define DATASET_DEFAULT_MIB 640

/* Bytes the rows of DS hold. */
size_t dataset_bytes(const struct dataset *ds);

/* Build the rows of repository REPO_ID (its path is in repos.path). */
int dataset_build(struct dataset **out, struct db *db, int64_t repo_id,
		  const struct dataset_opts *o);
void dataset_free(struct dataset *ds);

/* The only mined repository, or the one whose path is REPO (may be NULL). */
int dataset_repo(int64_t *out, struct db *db, const char *repo);

/*
 * Labels of a task into ds->d->y.  Risk labels as known at ASOF (a bug
 * counts only when discovered before it; INT64_MAX = everything known).
 */
void dataset_set_labels(struct dataset *ds, enum dataset_task t, int64_t asof);

/* Column mask of a task: the fix task never sees the label group. */
void dataset_task_mask(unsigned char *use, enum dataset_task t);
/* Kamei et al.'s 14 columns (FIX only for the risk task). */
void dataset_kamei_mask(unsigned char *use, enum dataset_task t);
/* Drop a group from a mask (the ablation). */
void dataset_mask_drop(unsigned char *use, enum feat_group g);

/*
 * AUTOSEL-like rule score of the fix task: fix words in the subject and
 * changelog (crash, leak, NULL, overflow, race, ...), a small-change
 * bonus.  Higher = more likely a fix.
 */
double dataset_keyword_score(const struct patch *p);

const char *dataset_task_name(enum dataset_task t);

/*
 * The rows usable for a task among those with from <= time < before, as
 * known at ASOF: every row for the fix task; for the risk task a row at
 * least horizon seconds older than asof (young rows are not yet
 * trustworthy negatives, and keeping only their bugs would bias the
 * newest slice, where calibration is fitted).  asof ==
 * INT64_MAX: the miner's own horizon (labels.negative_ok).  *idx is
 * malloc'd, in time order.
 */
int dataset_rows(size_t **idx, size_t *n, const struct dataset *ds,
		 enum dataset_task t, int64_t from, int64_t before,
		 int64_t asof, int64_t horizon);

#endif
