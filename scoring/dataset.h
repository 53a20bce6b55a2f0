/*
 * dataset.h - the training and evaluation rows of a mined repository:
 * every mined commit (oldest first by commit date) as a feature vector
 * (feat.h) with its labels from the miner (labels table: fix, bug and
 * the date the bug became known, whether it is old enough to be a
 * negative).  Also the task definitions shared by train and eval (which
 * columns each task may use, the Kamei et al. column set) and the
 * AUTOSEL-like keyword/size baseline.  Reads git objects with libgit2
 * and the state database; writes nothing.
 */
#ifndef PT_DATASET_H
#define PT_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "feat.h"
#include "model.h"
#include "pt.h"

enum dataset_task { TASK_FIX = 0, TASK_RISK = 1 };

struct dataset {
	struct model_data *d;    /* d->y is scratch: set per task */
	size_t n;
	int64_t *commit_id;
	int *fix, *bug;
	int64_t *discovered;     /* INT64_MAX when never */
	unsigned char *negok;    /* labels.negative_ok */
	double *keyword;         /* keyword baseline score of the fix task */
	unsigned char *has_reviewed, *has_tested;
	int64_t newest;          /* repos.newest */
};

struct dataset_opts {
	int64_t since;           /* commit_date >= since; 0 = all */
	size_t max_rows;         /* keep the newest max_rows; 0 = all */
	unsigned hash_bits;
	void (*progress)(size_t done, size_t total, void *ctx);
	void *progress_ctx;
};

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
void dataset_set_labels(struct dataset *ds, enum dataset_task t,
			int64_t asof);

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
