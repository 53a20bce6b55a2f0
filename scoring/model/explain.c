/*
 * explain.c - contributions to sentences (see explain.h).  The wording
 * lives here, keyed by feature id, so a new feature gets a sentence from
 * its description in feat.h until it earns its own.
 */
#include "scoring/model/explain.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/trailer.h"

#define TEXT_TOKENS 12   /* text tokens listed at most */

void explain_free(struct explain_reason *r, size_t n)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < n; i++)
		free(r[i].text);
	free(r);
}

/* "v23.11-rc3" -> "v23.11-rc4": the rc a commit after the tag lands in. */
static void next_rc(struct buf *b, const char *tag)
{
	const char *rc = strstr(tag, "-rc");
	char *end;
	long n;

	if (!rc) {
		buf_addf(b, "merged in the merge window after %s", tag);
		return;
	}
	n = strtol(rc + 3, &end, 10);
	if (end == rc + 3 || *end) {
		buf_addf(b, "merged after %s", tag);
		return;
	}
	buf_addf(b, "merged in %.*s-rc%ld", (int)(rc - tag), tag, n + 1);
}

static const char *dir_or(const struct feat_vec *v)
{
	return v->top_dir && *v->top_dir ? v->top_dir : "the touched files";
}

static int sentence(struct buf *b, enum feat_id id, double x,
		    const struct feat_vec *v)
{
	const char *desc = feat_desc(id);

	if (isnan(x))
		return buf_addf(b, "%s: unknown", desc);
	switch (id) {
	case FEAT_RC:
	case FEAT_LATE_RC:
		if (v->release_tag)
			next_rc(b, v->release_tag);
		else
			buf_addf(b, "before the first release tag");
		return 0;
	case FEAT_MAINT_REVIEW:
		return buf_addf(b, x > 0 ? "reviewed by a maintainer of %s"
				       : "no " TRAILER_KEY_REVIEWED " from a "
					 "maintainer of %s", dir_or(v));
	case FEAT_N_REVIEWED:
	case FEAT_N_ACKED:
	case FEAT_N_TESTED:
	case FEAT_N_REPORTED:
	case FEAT_N_SUGGESTED:
	case FEAT_N_SIGNOFF:
		if (x == 0)
			return buf_addf(b, "no %s", desc);
		return buf_addf(b, "%g %s", x, desc);
	case FEAT_REV_BUGRATE:
		return buf_addf(b, "reviewers' past bug rate %.0f%%", 100 * x);
	case FEAT_FILE_BUGS:
		return buf_addf(b, "the touched files had %g known bug%s "
				"before", x, x == 1 ? "" : "s");
	case FEAT_FILE_FIXES:
		return buf_addf(b, "the touched files had %g fix%s before", x,
				x == 1 ? "" : "es");
	case FEAT_FILE_BUGRATE:
		return buf_addf(b, "the touched files' past bug rate %.0f%%",
				100 * x);
	case FEAT_AUTHOR_BUGS:
		return buf_addf(b, "the author had %g known bug%s before", x,
				x == 1 ? "" : "s");
	case FEAT_AUTHOR_BUGRATE:
		return buf_addf(b, "the author's past bug rate %.0f%%", 100 * x);
	case FEAT_COMP_CHANGES:
		return buf_addf(b, "%g earlier commits to this component", x);
	case FEAT_COMP_BUGRATE:
		return buf_addf(b, "this component's past bug rate %.0f%%",
				100 * x);
	case FEAT_HAS_FIXES:
	case FEAT_CC_STABLE:
	case FEAT_BOT_REPORT:
	case FEAT_TESTED_CLAIM:
	case FEAT_ARCH:
	case FEAT_REVERT:
	case FEAT_BUGZILLA:
	case FEAT_AUTHOR_IS_COMMITTER:
	case FEAT_REV_FREQUENT:
	case FEAT_RESEND:
	case FEAT_COMMENT_ONLY:
	case FEAT_WS_ONLY:
	case FEAT_DOC_ONLY:
	case FEAT_TEST_ONLY:
	case FEAT_BUILD_ONLY:
	case FEAT_SMALL_FIX:
		return buf_addf(b, "%s%s", x > 0 ? "" : "not: ", desc);
	case FEAT_DAYS_TAG:
	case FEAT_DAYS_RELEASE:
	case FEAT_LATENCY:
	case FEAT_AGE:
		return buf_addf(b, "%s: %.1f", desc, x);
	case FEAT_HOUR:
		return buf_addf(b, "authored at %02.0f:00 local time", x);
	case FEAT_ENTROPY:
	case FEAT_REXP:
		return buf_addf(b, "%s: %.2f", desc, x);
	default:
		if (feat_group_of(id) == FEAT_G_CODE)
			return x > 0 ? buf_addf(b, "%s (%g)", desc, x)
				     : buf_addf(b, "no %s", desc);
		return buf_addf(b, "%s: %g", desc, x);
	}
}

static int token_sentence(struct buf *b, const char *name)
{
	const char *tok = name + 2;

	if (!name[0] || name[1] != ':')
		return buf_addf(b, "text '%s'", name);
	switch (name[0]) {
	case 's':
		return buf_addf(b, "subject says '%s'", tok);
	case 'w':
		return buf_addf(b, "changelog says '%s'", tok);
	case 'b': {
		struct buf t = BUF_INIT;
		size_t i;
		int rc = buf_addstr(&t, tok);

		for (i = 0; i < t.len; i++)
			if (t.ptr[i] == '_' && i && tok[i - 1] != '_')
				t.ptr[i] = ' ';
		rc = rc ?: buf_addf(b, "changelog says '%s'", t.ptr);
		buf_free(&t);
		return rc;
	}
	case 'v': {
		const char *us = strchr(tok, '_');

		if (us)
			return buf_addf(b, "subject starts with '%.*s %s'",
					(int)(us - tok), tok, us + 1);
		return buf_addf(b, "subject starts with '%s'", tok);
	}
	case 'p':
		return buf_addf(b, "a change to '%s'", tok);
	case '+':
		return buf_addf(b, "adds code with '%s'", tok);
	case '-':
		return buf_addf(b, "removes code with '%s'", tok);
	}
	return buf_addf(b, "text '%s'", name);
}

static int push(struct explain_reason **v, size_t *n, size_t *cap,
		struct buf *text, const char *feature, double value,
		double weight, int is_text)
{
	struct explain_reason *r;

	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *p = pt_reallocarray(*v, c, sizeof(**v));

		if (!p)
			return PT_ENOMEM;
		*v = p;
		*cap = c;
	}
	r = &(*v)[(*n)++];
	r->text = buf_detach(text, NULL);
	r->feature = feature;
	r->value = value;
	r->weight = weight;
	r->is_text = is_text;
	return r->text ? 0 : PT_ENOMEM;
}

/* |weight|, NaN as 0: qsort needs a total order (glibc's may overrun) */
static double abs_weight(double w)
{
	return isnan(w) ? 0 : fabs(w);
}

static int cmp_weight(const void *a, const void *b)
{
	double x = abs_weight(((const struct explain_reason *)a)->weight);
	double y = abs_weight(((const struct explain_reason *)b)->weight);

	return x > y ? -1 : x < y;
}

/* Strongest |contribution| first; ties in index order, for stable output. */
static int cmp_contrib(const void *a, const void *b)
{
	const struct model_contrib *p = a, *q = b;
	double x = fabs(p->value), y = fabs(q->value);

	if (x != y)
		return x > y ? -1 : 1;
	if (p->is_sparse != q->is_sparse)
		return p->is_sparse - q->is_sparse;
	return p->index < q->index ? -1 : p->index > q->index;
}

static int text_summary(struct buf *b, const struct model_contrib *c,
			size_t nc, const struct feat_vec *v, double w)
{
	if (w > 0 && v->phrase)
		return buf_addf(b, "changelog says '%s'", v->phrase);
	(void)c;
	(void)nc;
	return buf_addstr(b, w > 0 ? "the changelog and code read like one"
				   : "the changelog and code do not read "
				     "like one");
}

int explain_vec(struct explain_reason **out, size_t *n, double *bias,
		const struct pt_model *m, const struct feat_vec *v)
{
	struct model_contrib *c = NULL;
	struct explain_reason *r = NULL;
	struct buf b = BUF_INIT;
	size_t nc = 0, cap = 0, i, ntext = 0;
	int rc;

	*out = NULL;
	*n = 0;
	rc = model_explain(&c, &nc, bias, m, v->tab, v->sp, v->nsp);
	if (rc)
		return rc;
	/* strongest text tokens first, so the cap keeps the best ones */
	qsort(c, nc, sizeof(*c), cmp_contrib);
	for (i = 0; i < nc && !rc; i++) {
		const struct model_contrib *k = &c[i];

		buf_reset(&b);
		if (k->is_sparse) {
			size_t j;
			const char *name = NULL;

			if (ntext >= TEXT_TOKENS || !v->sp_names)
				continue;
			for (j = 0; j < v->nsp && !name; j++)
				if (v->sp[j].index == k->index)
					name = v->sp_names[j];
			if (!name)
				continue;
			ntext++;
			rc = token_sentence(&b, name);
			if (!rc)
				rc = push(&r, n, &cap, &b, "text", 1, k->value,
					  1);
		} else if (k->index >= FEAT_NTAB) {
			rc = text_summary(&b, c, nc, v, k->value);
			if (!rc)
				rc = push(&r, n, &cap, &b, "text.score", NAN,
					  k->value, 0);
		} else {
			enum feat_id id = (enum feat_id)k->index;

			rc = sentence(&b, id, v->tab[id], v);
			if (!rc)
				rc = push(&r, n, &cap, &b, feat_name(id),
					  v->tab[id], k->value, 0);
		}
	}
	buf_free(&b);
	free(c);
	if (rc) {
		explain_free(r, *n);
		*n = 0;
		return rc;
	}
	qsort(r, *n, sizeof(*r), cmp_weight);
	*out = r;
	return 0;
}

int explain_format(struct buf *out, const struct explain_reason *r,
		   size_t n, size_t k, int with_text)
{
	size_t i, shown = 0;
	int rc = 0;

	for (i = 0; i < n && shown < k && !rc; i++) {
		if (r[i].weight == 0 || (r[i].is_text && !with_text))
			continue;
		rc = buf_addf(out, "  %+6.2f  %s%s\n", r[i].weight,
			      r[i].is_text ? "(text) " : "", r[i].text);
		shown++;
	}
	return rc;
}
