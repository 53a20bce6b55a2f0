/*
 * explain.h - why a model gave a patch its score, in a maintainer's
 * words.  Contributions come from model_explain() (XGBoost's SHAP values
 * for the tree model, weight times value for the linear ones); this
 * module turns each into a sentence from the feature's name, value and
 * the facts feat_compute() kept (the mainline's tag, the most-changed
 * directory, the tokens behind the hashed text entries).  It does not
 * print.
 */
#ifndef PT_EXPLAIN_H
#define PT_EXPLAIN_H

#include <stddef.h>

#include "scoring/model/features.h"
#include "scoring/model/model.h"
#include "scoring/util/pt.h"

struct explain_reason {
	char *text;	     /* "no Fixes: tag" */
	const char *feature; /* column name; "text": a word or code token of
			     * this patch; "text.other": the text model's
			     * remaining tokens (function words, the rest) */
	double value;	     /* the column's value (NAN = missing); for
			     * "text.other" the number of tokens */
	double weight;	     /* contribution to the log-odds */
	int is_text;	     /* from the text model */
};

/*
 * All reasons for v under m, strongest (by |weight|) first: one per
 * tabular column the model uses, and the text model's part told by the
 * patch's own tokens (model_explain): one row a word of the subject or
 * changelog, a word of the added or removed code, or the subject's
 * prefix, at most 12, and one "text.other" row for function words and
 * the rest (v must come from feat_compute(..., FEAT_NAMES) for tokens to
 * have words).  Rows whose sentences are the same are one row, their
 * weights summed (the first keeps its column).  *bias: the rest of the
 * log-odds; bias plus every row's weight is the model's log-odds.
 */
int explain_vec(struct explain_reason **out, size_t *n, double *bias,
		const struct pt_model *m, const struct feat_vec *v);
void explain_free(struct explain_reason *r, size_t n);

/*
 * The sentence of a release-cycle column (FEAT_RC, FEAT_LATE_RC,
 * FEAT_DAYS_TAG, FEAT_DAYS_RELEASE) of value x: the mainline's state
 * when the patch was written, "authored while the mainline was at
 * v6.8-rc5" ("posted ..." for a mail), never a release it was merged
 * for (explain_cycle.c).
 */
int explain_cycle(struct buf *b, enum feat_id id, double x,
		  const struct feat_vec *v);

/*
 * Whether r may be shown as a reason (score, checks, replies): it moves
 * the score and states a fact of the patch.  A column whose value is
 * unknown for this patch, and the text model's remainder row, weigh in
 * the sum (explain lists them) but say nothing to a maintainer.
 */
int explain_shown(const struct explain_reason *r);

/*
 * The reasons a maintainer is shown: the indices into r (strongest
 * first, as explain_vec() sorts) of at most max rows explain_shown()
 * lets through, one per sentence (two columns that say the same thing
 * are one reason), only those raising the score when raising_only.
 * Returns how many.
 */
size_t explain_pick(size_t *idx, size_t max, const struct explain_reason *r,
		    size_t n, int raising_only);

#endif
