/*
 * archds.h - the rows of the archive model: every posting an imported
 * list applied (posting_outcomes), oldest first by apply date, as what
 * the lists knew when it was applied.  The tabular part is the diff's
 * size and spread (lines added and removed, files, patches in its
 * series) and every column of listfeat.h as of the apply date; the
 * sparse part is the words of the subject (the archive keeps no patch
 * text).  The label is bug-introducing (posting_labels.bug) with the
 * date it became known, so a model trained at a cut sees only the bugs
 * known then.  Shared by `train --archive`, `eval --archive` and the
 * daemon's archive scorer (archds_vector() of one posting as of now).
 * Reads the state database; writes nothing.
 */
#ifndef PT_ARCHDS_H
#define PT_ARCHDS_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/model/listfeat.h"
#include "scoring/model/model.h"
#include "scoring/store/db.h"
#include "scoring/util/progress.h"
#include "scoring/util/pt.h"

/* The size columns, before the listfeat.h ones. */
enum {
	ARCHDS_LINES_ADDED = 0,
	ARCHDS_LINES_REMOVED,
	ARCHDS_FILES,
	ARCHDS_SERIES_PATCHES,
	ARCHDS_NSIZE,
};
#define ARCHDS_NTAB (ARCHDS_NSIZE + LISTFEAT_N)
/* archds_group(): a size column */
#define ARCHDS_G_SIZE (-1)

/* The ARCHDS_NTAB column names, in order. */
const char *const *archds_names(void);
/* A column's description (for explain), and its group (ARCHDS_G_SIZE or
   an enum listfeat_group). */
const char *archds_desc(size_t col);
int archds_group(size_t col);

struct archds {
	struct model_data *d; /* d->y: set by archds_set_labels() */
	size_t n;
	int64_t *patch_id;
	int *bug;
	int64_t *discovered; /* INT64_MAX: not known to be a bug */
	int64_t newest;	     /* the newest message's date (a Date: in
				the future, as spam has, is not believed) */
	size_t postings;     /* all postings, applied or not */
	size_t unreadable;   /* applied postings left out (no date) */
};

/*
 * Build the rows from every applied posting; progress reports "features"
 * over the postings.  Postings applied before since (0: all) are left
 * out.  until (0: none) sets the clock back: only postings applied
 * before it, the newest date no later than it, and only bugs discovered
 * before it (a development period that never sees the test period).
 */
int archds_build(struct archds **out, struct db *db, int64_t since,
		 int64_t until, const struct pt_progress *progress);
void archds_free(struct archds *ds);

/*
 * One posting's vector as of as_of: tab has ARCHDS_NTAB values; *sp is
 * malloc'd (the subject's words, hashed with hash_bits); *subject (may
 * be NULL) the posting's subject, malloc'd.
 */
int archds_vector(float *tab, struct model_sparse **sp, size_t *nsp,
		  char **subject, struct db *db, int64_t patch_id,
		  int64_t as_of, unsigned hash_bits);

/*
 * The next word of a subject from *s on (letters, digits and '_',
 * lowercased, two characters or more, cut at cap - 1) into tok; its
 * length, 0 at the end.  The words are the archive model's sparse part.
 */
size_t archds_next_word(const char **s, char *tok, size_t cap);

struct explain_reason;
/*
 * Why the archive model m gave the row its score (archexplain.c):
 * explain.h's rows, strongest first, a sentence per column and per
 * subject word, the other words as one "text.other" row; *bias the rest
 * of the log-odds.
 */
int archds_explain(struct explain_reason **out, size_t *n, double *bias,
		   const struct pt_model *m, const float *tab,
		   const struct model_sparse *sp, size_t nsp,
		   const char *subject);
/*
 * Score posting patch_id as of as_of with the archive model m (as of its
 * apply date instead when it was applied before as_of: the moment the
 * model learnt from): the calibrated probability and the reasons
 * (archds_explain).  PT_EINVAL,
 * naming the model, when its columns are not the archive rows'.
 */
int archds_score(double *p, struct explain_reason **why, size_t *nwhy,
		 double *bias, const struct pt_model *m, struct db *db,
		 int64_t patch_id, int64_t as_of);

/* Labels into ds->d->y as known at asof (INT64_MAX: everything known). */
void archds_set_labels(struct archds *ds, int64_t asof);

/*
 * The rows with from <= apply date < before usable as known at asof:
 * those applied at least horizon seconds before asof (a younger one may
 * still be found buggy, and keeping only its known bugs would bias the
 * newest rows); their labels are archds_set_labels(asof)'s.  asof
 * INT64_MAX: every row.  *idx malloc'd, in time order.
 */
int archds_rows(size_t **idx, size_t *n, const struct archds *ds, int64_t from,
		int64_t before, int64_t asof, int64_t horizon);

#endif
