/*
 * archexplain.c - why the archive model (archds.h) gave a posting its
 * score, in a maintainer's words: each column's contribution to the
 * log-odds (model_explain) as a sentence from the column and its value
 * ("earlier versions drew 14 requests from reviewers", "no Reviewed-by
 * given on the list", "its reviewers' earlier reviewed postings: a
 * smoothed bug rate of 2% (the highest of them)"), the subject's words
 * by their hashed index.  The rows
 * are explain.h's, so the verdict shows them as it shows the git
 * model's.  It does not print.
 */
#include "scoring/model/archds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/model/explain.h"
#include "scoring/model/features.h"
#include "scoring/store/db_row.h"

/* Columns whose value is a share, shown as a percentage. */
static int is_rate(size_t col)
{
	return col == ARCHDS_NSIZE + LISTFEAT_REV_BUGRATE;
}

static char *col_text(size_t col, double v)
{
	struct buf b = BUF_INIT;
	const char *d = archds_desc(col);
	long long n = (long long)llround(v);

	if (is_rate(col))
		buf_addf(&b,
			 "its reviewers' earlier reviewed postings: a "
			 "smoothed bug rate of %.0f%% (the highest of them)",
			 100 * v);
	else if (col == ARCHDS_NSIZE + LISTFEAT_PREV_ASKS && n)
		buf_addf(&b,
			 "earlier versions drew %lld requests from "
			 "reviewers",
			 n);
	else if (col == ARCHDS_NSIZE + LISTFEAT_VERSION)
		buf_addf(&b, "this is v%lld", n);
	else if (col == ARCHDS_NSIZE + LISTFEAT_DAYS_FIRST)
		buf_addf(&b, "%.0f days on the list since the first version",
			 v);
	else if (col == ARCHDS_NSIZE + LISTFEAT_TESTED_SCALE && n)
		buf_addf(&b,
			 "a reviewer says it was tested on %lld "
			 "machine%s",
			 n, n == 1 ? "" : "s");
	else if (col == ARCHDS_NSIZE + LISTFEAT_SENTIMENT)
		buf_addf(&b, "mean sentiment of replies %+.2f", v);
	else if (!n)
		buf_addf(&b, "no %s", d);
	else
		buf_addf(&b, "%s: %lld", d, n);
	return buf_detach(&b, NULL);
}

/* The subject word behind hashed index ix, or NULL. */
static int word_of(char *out, size_t cap, uint32_t ix, const char *subj)
{
	char tok[64];
	size_t len;

	while ((len = archds_next_word(&subj, tok, sizeof(tok))))
		if (feat_hash("w", tok, len, MODEL_HASH_BITS) == ix) {
			snprintf(out, cap, "%.*s", (int)len, tok);
			return 1;
		}
	return 0;
}

static int cmp_weight(const void *a, const void *b)
{
	double x = fabs(((const struct explain_reason *)a)->weight);
	double y = fabs(((const struct explain_reason *)b)->weight);

	if (isnan(x))
		x = 0;
	if (isnan(y))
		y = 0;
	return x < y ? 1 : x > y ? -1 : 0;
}

static int one(struct explain_reason *r, const struct model_contrib *c,
	       const float *tab, const char *subject, double *other)
{
	const char *const *names = archds_names();
	char w[64];

	memset(r, 0, sizeof(*r));
	r->weight = c->value;
	if (!c->is_sparse) {
		r->feature = names[c->index];
		r->value = tab[c->index];
		r->text = col_text(c->index, r->value);
		return r->text ? 0 : PT_ENOMEM;
	}
	if (!word_of(w, sizeof(w), c->index, subject)) {
		*other += c->value;
		return 1; /* folded into text.other */
	}
	r->feature = "text";
	r->is_text = 1;
	r->value = 1;
	{
		struct buf b = BUF_INIT;

		buf_addf(&b, "subject says '%s'", w);
		r->text = buf_detach(&b, NULL);
	}
	return r->text ? 0 : PT_ENOMEM;
}

int archds_explain(struct explain_reason **out, size_t *n, double *bias,
		   const struct pt_model *m, const float *tab,
		   const struct model_sparse *sp, size_t nsp,
		   const char *subject)
{
	struct model_contrib *c = NULL;
	struct explain_reason *r;
	double other = 0;
	size_t nc = 0, i, k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	rc = model_explain(&c, &nc, bias, m, tab, sp, nsp);
	if (rc)
		return rc;
	r = pt_calloc(nc + 1, sizeof(*r));
	if (!r) {
		free(c);
		return PT_ENOMEM;
	}
	for (i = 0; i < nc && rc >= 0; i++) {
		rc = one(&r[k], &c[i], tab, subject, &other);
		if (!rc)
			k++;
	}
	free(c);
	if (rc < 0) {
		explain_free(r, k);
		return rc;
	}
	r[k].feature = "text.other";
	r[k].is_text = 1;
	r[k].weight = other;
	r[k].value = NAN;
	r[k].text = pt_strdup("the subject's other words");
	if (!r[k].text) {
		explain_free(r, k);
		return PT_ENOMEM;
	}
	k++;
	qsort(r, k, sizeof(*r), cmp_weight);
	*out = r;
	*n = k;
	return 0;
}

static int is_applied(struct db *db, int64_t patch_id)
{
	int64_t n = 0;

	return !db_get_int64(&n, db,
			     "SELECT count(*) FROM posting_outcomes WHERE "
			     "patch_id = ? AND outcome = 'applied'",
			     patch_id) &&
	       n > 0;
}

int archds_score(double *p, struct explain_reason **why, size_t *nwhy,
		 double *bias, const struct pt_model *m, struct db *db,
		 int64_t patch_id, int64_t as_of)
{
	float tab[ARCHDS_NTAB];
	struct model_sparse *sp = NULL;
	char *subject = NULL;
	int64_t applied = 0;
	size_t nsp = 0;
	int rc;

	*why = NULL;
	*nwhy = 0;
	if (model_ntab(m) != ARCHDS_NTAB)
		return pt_error_set(PT_EINVAL,
				    "model %s has %zu columns, not the %d of "
				    "the archive rows: retrain it "
				    "(train --archive)",
				    model_version(m), model_ntab(m),
				    (int)ARCHDS_NTAB);
	/* an applied posting as the model learnt it: at its apply date */
	rc = listfeat_moment(&applied, db, patch_id, LISTFEAT_AT_APPLY);
	if (!rc && applied && applied < as_of && is_applied(db, patch_id))
		as_of = applied;
	if (!rc)
		rc = archds_vector(tab, &sp, &nsp, &subject, db, patch_id,
				   as_of, MODEL_HASH_BITS);
	if (!rc)
		rc = model_predict(p, m, tab, sp, nsp);
	if (!rc)
		rc = archds_explain(why, nwhy, bias, m, tab, sp, nsp, subject);
	free(sp);
	free(subject);
	return rc;
}
