/*
 * explain.h - why a model gave a patch its score, in a maintainer's
 * words.  Contributions come from model_explain() (XGBoost's SHAP values
 * for the tree model, weight times value for the linear ones); this
 * module turns each into a sentence from the feature's name, value and
 * the facts feat_compute() kept (the release tag, the most-changed
 * directory, the telling phrase of the changelog, the tokens behind the
 * hashed text entries).  It does not print.
 */
#ifndef PT_EXPLAIN_H
#define PT_EXPLAIN_H

#include <stddef.h>

#include "scoring/model/features.h"
#include "scoring/model/model.h"
#include "scoring/util/pt.h"

struct explain_reason {
	char *text;         /* "merged in v23.11-rc4" */
	const char *feature;/* stable column name, "text.score" or "text" */
	double value;       /* the column's value (NAN = missing) */
	double weight;      /* contribution to the log-odds */
	int is_text;        /* a token of the text model */
};

/*
 * All reasons for v under m, strongest (by |weight|) first: one per
 * tabular column the model uses, and for the text model its strongest
 * tokens (v must come from feat_compute(..., FEAT_NAMES) for them to
 * have words).  *bias: the model's base log-odds.
 */
int explain_vec(struct explain_reason **out, size_t *n, double *bias,
		const struct pt_model *m, const struct feat_vec *v);
void explain_free(struct explain_reason *r, size_t n);

/*
 * Append "  +0.84  merged in v23.11-rc4\n" lines for the first k reasons
 * (text tokens only when with_text: for the tree model they weigh inside
 * the text score, not beside it).
 */
int explain_format(struct buf *out, const struct explain_reason *r,
		   size_t n, size_t k, int with_text);

#endif
