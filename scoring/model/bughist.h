/*
 * bughist.h - the past-bug columns of a feature vector: how bug-prone
 * the touched files, the author and the subject's component have been,
 * as known at the patch's date.  A change counts as known buggy only
 * when the commit that fixes or reverts it (labels.discovered) is dated
 * before the patch.  A mined commit reads the counts histfeat.c stored
 * in the features table (from strictly earlier commits); a patch that is
 * not mined gets the same counts from SQL over the commits dated before
 * it.  The smoothed rates are computed here for both paths.
 */
#ifndef PT_BUGHIST_H
#define PT_BUGHIST_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/patch/patch.h"
#include "scoring/util/pt.h"

#define BUGHIST_PRIOR_RATE 0.1	 /* smoothing: the prior bug rate ... */
#define BUGHIST_PRIOR_WEIGHT 5.0 /* ... worth this many earlier changes */

/* (bugs + prior rate * weight) / (n + weight) */
double bughist_rate(double bugs, double n);

struct bughist;

/* Statements on DB for repository REPO_ID, prepared once. */
int bughist_new(struct bughist **out, struct db *db, int64_t repo_id);
void bughist_free(struct bughist *b);

/* Mined commit ID: the miner's counts into the columns of t (feat.h). */
void bughist_mined(struct bughist *b, int64_t id, float *t);

/* A patch that is not mined, as of DATE, into the columns of t. */
int bughist_unmined(struct bughist *b, const struct patch *p, int64_t date,
		    float *t);

#endif
