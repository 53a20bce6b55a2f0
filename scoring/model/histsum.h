/*
 * histsum.h - as-of history summaries for patches that are not mined (a
 * mail).  Such a patch gets its file history (LT, NDEV, NUC, AGE, SEXP),
 * its reviewers' records and its past-bug columns (bughist.h) from the
 * mined commits dated before it; features.c and bughist.c define them by
 * SQL over commit_files, trailers, commits and labels, which reads every
 * earlier change of every touched file, every earlier commit of the
 * author and the component, row by row (18 ms a patch on DPDK).
 * histsum.c keeps the same rows in date order, one blob per path
 * (hist_files), per author and top-level directory (hist_author_tops),
 * per reviewer (hist_reviewers), per author (hist_authors) and per
 * subject component (hist_components), so any as-of date is a few
 * primary-key lookups and a binary search, and the values are exactly
 * the SQL's (tests/unit/test_histsum.c compares both).  The summary is
 * rebuilt after each `mine` (history.c) and, when it does not match the
 * last mine run (hist_state: repos.tip and mined_at, and the blob
 * format), when a feature context opens it.
 */
#ifndef PT_HISTSUM_H
#define PT_HISTSUM_H

#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/patch/patch.h"
#include "scoring/util/pt.h"

/* Bump when a blob's layout changes: older summaries are then rebuilt. */
#define HISTSUM_FORMAT 2

/* Rebuild the summary of repository REPO_ID from the mined tables. */
int histsum_build(struct db *db, int64_t repo_id);

/* *out = 1 when the summary reflects REPO_ID's last mine run. */
int histsum_current(int *out, struct db *db, int64_t repo_id);

struct histsum;

/*
 * Lookups on REPO_ID's summary, built first when it is not current.  When
 * it cannot be built (a read-only or busy database) *out is NULL and 0 is
 * returned: the caller keeps the SQL path, which gives the same values.
 */
int histsum_open(struct histsum **out, struct db *db, int64_t repo_id);
void histsum_free(struct histsum *h);

/*
 * LT, NDEV, NUC, AGE and (with an author address) SEXP of p as of DATE
 * into t (feat.h's columns), as features.c's files_unmined() computes
 * them.
 */
int histsum_files(struct histsum *h, const struct patch *p, int64_t date,
		  float *t);

/*
 * The Reviewed-by/Acked-by/Tested-by trailers of EMAIL on commits dated
 * before DATE (*prior) and how many of those commits were known to be
 * bug-introducing then (*bugs); 0 and 0 for an unknown address.
 */
void histsum_reviewer(struct histsum *h, const char *email, int64_t date,
		      double *prior, double *bugs);

/*
 * EMAIL's commits dated before DATE (*exp) and the sum over them of
 * 1 / (1 + age in years at DATE) (*rexp), features.c's EXP and REXP.
 */
void histsum_experience(struct histsum *h, const char *email, int64_t date,
			double *exp, double *rexp);

/*
 * bughist.h's columns of p as of DATE into t, as bughist_unmined()
 * computes them: the touched files' known bugs, fixes and rate, the
 * author's known bugs and rate, the subject component's changes and rate.
 */
int histsum_bugs(struct histsum *h, const struct patch *p, int64_t date,
		 float *t);

#endif
