/*
 * explain.c - contributions to sentences (see explain.h).  The wording
 * lives here, keyed by feature id, so a new feature gets a sentence from
 * its description in features.h until it earns its own; the text model's
 * part is told by the patch's own tokens that carry it.
 */
#include "scoring/model/explain.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/trailer.h"
#include "scoring/util/strmap.h"

#define TEXT_TOKENS 12 /* text tokens listed at most */

void explain_free(struct explain_reason *r, size_t n)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < n; i++)
		free(r[i].text);
	free(r);
}

static const char *dir_or(const struct feat_vec *v)
{
	return v->top_dir && *v->top_dir ? v->top_dir : "the touched files";
}

/* The other side of a yes/no column, said as plainly as its yes. */
static const char *negation(enum feat_id id)
{
	switch (id) {
	case FEAT_HAS_FIXES:
		return "no Fixes: tag";
	case FEAT_CC_STABLE:
		return "no Cc: stable";
	case FEAT_BOT_REPORT:
		return "not reported by a bot";
	case FEAT_TESTED_CLAIM:
		return "changelog does not say how it was tested";
	case FEAT_ARCH:
		return "touches no architecture-specific code";
	case FEAT_REVERT:
		return "not a revert";
	case FEAT_BUGZILLA:
		return "refers to no bug tracker entry";
	case FEAT_AUTHOR_IS_COMMITTER:
		return "committed by someone other than the author";
	case FEAT_REV_FREQUENT:
		return "no reviewer with 50 or more earlier reviews";
	case FEAT_RESEND:
		return "not a RESEND";
	case FEAT_COMMENT_ONLY:
		return "changes more than comments and blank lines";
	case FEAT_WS_ONLY:
		return "changes more than whitespace";
	case FEAT_DOC_ONLY:
		return "changes more than documentation";
	case FEAT_TEST_ONLY:
		return "changes more than tests";
	case FEAT_BUILD_ONLY:
		return "changes more than build files";
	case FEAT_SMALL_FIX:
		return "changes more than two lines of code";
	default:
		return feat_desc(id);
	}
}

static int sentence(struct buf *b, enum feat_id id, double x,
		    const struct feat_vec *v)
{
	const char *desc = feat_desc(id);

	switch (id) {
	case FEAT_RC:
	case FEAT_LATE_RC:
	case FEAT_DAYS_TAG:
	case FEAT_DAYS_RELEASE:
		return explain_cycle(b, id, x, v);
	default:
		break;
	}
	if (isnan(x))
		return buf_addf(b, "%s: unknown", desc);
	switch (id) {
	case FEAT_MAINT_REVIEW:
		return buf_addf(b,
				x > 0 ? "reviewed by a maintainer of %s"
				      : "no " TRAILER_KEY_REVIEWED " from a "
					"maintainer of %s",
				dir_or(v));
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
		return buf_addf(b,
				"the touched files had %g known bug%s "
				"before",
				x, x == 1 ? "" : "s");
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
		return buf_addf(b, "the author's past bug rate %.0f%%",
				100 * x);
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
		return buf_addstr(b, x > 0 ? desc : negation(id));
	case FEAT_LATENCY:
	case FEAT_AGE:
		return buf_addf(b, "%s: %.1f", desc, x);
	case FEAT_HOUR:
		return buf_addf(b,
				"authored between %02.0f:00 and %02.0f:59, "
				"the author's local time",
				x, x);
	case FEAT_REV_PRIOR:
		return buf_addf(b,
				"the reviewers' earlier reviews, counted "
				"together: %g",
				x);
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

/*
 * The text model's rows.  Tokens are grouped by what a maintainer can
 * check: a word of the subject or changelog (the subject's first word,
 * its first pair and the changelog's bigrams shared out to their words),
 * a word of the added or removed code, the subject's prefix.  Function
 * words and what falls below the cap are one row that names no word, so
 * the rows still sum to the model's.
 */
/* AT_LOG: the model's word namespace, the subject's words and the
 * changelog's; AT_SUBJ: the subject's own */
enum { AT_SUBJ = 1, AT_LOG = 2, AT_ADD = 4, AT_DEL = 8, AT_PREFIX = 16 };

struct word {
	char *key;   /* the word as the tokenizer wrote it */
	unsigned at; /* AT_* where it occurs */
	double w;    /* its share of the log-odds */
};

struct words {
	struct word *v;
	size_t n, cap;
	double other; /* function words and the rest */
	size_t nother;
	struct strmap at;   /* class digit + word -> its index in v */
	struct strmap toks; /* the patch's token names ("w:word") */
	struct buf key;	    /* scratch for the keys */
};

static int is_function_word(const char *w)
{
	static const char *const fw[] = {
		"a",	 "an",	 "and",	  "are",    "as",    "at",     "be",
		"by",	 "for",	 "from",  "has",    "in",    "into",   "is",
		"it",	 "of",	 "on",	  "or",	    "that",  "the",    "this",
		"to",	 "was",	 "when",  "with",   "after", "before", "not",
		"no",	 "we",	 "if",	  "so",	    "but",   "can",    "its",
		"which", "also", "been",  "have",   "then",  "there",  "these",
		"those", "will", "would", "should", "could", "may",    "our",
		"than",
	};
	size_t i;

	for (i = 0; i < sizeof(fw) / sizeof(*fw); i++)
		if (!strcmp(w, fw[i]))
			return 1;
	return 0;
}

/* Text words, code words and the prefix are three kinds of fact. */
static int word_class(unsigned at)
{
	return at & AT_PREFIX ? 2 : at & (AT_ADD | AT_DEL) ? 1 : 0;
}

/* ws->key = C then LEN bytes of S. */
static int make_key(struct words *ws, char c, const char *s, size_t len)
{
	buf_reset(&ws->key);
	return buf_add(&ws->key, &c, 1) ?: buf_add(&ws->key, s, len);
}

/* A word of a class is one row: the first time it is seen, in order. */
static int word_add(struct words *ws, const char *key, size_t len, unsigned at,
		    double w)
{
	struct strmap_entry *e;
	int added, rc;

	rc = make_key(ws, (char)('0' + word_class(at)), key, len)
		     ?: strmap_put(&e, &added, &ws->at, ws->key.ptr,
				   ws->key.len);
	if (rc)
		return rc;
	if (!added) {
		ws->v[e->v.i].at |= at;
		ws->v[e->v.i].w += w;
		return 0;
	}
	if (ws->n == ws->cap) {
		size_t c = ws->cap ? ws->cap * 2 : 32;
		void *p = pt_reallocarray(ws->v, c, sizeof(*ws->v));

		if (!p)
			return PT_ENOMEM;
		ws->v = p;
		ws->cap = c;
	}
	ws->v[ws->n].key = pt_strndup(key, len);
	if (!ws->v[ws->n].key)
		return PT_ENOMEM;
	e->v.i = (int64_t)ws->n;
	ws->v[ws->n].at = at;
	ws->v[ws->n++].w = w;
	return 0;
}

/* Whether "ns:word" is one of the patch's tokens (ws->toks). */
static int has_token(struct words *ws, char ns, const char *w, size_t len)
{
	return !make_key(ws, ns, ":", 1) && !buf_add(&ws->key, w, len) &&
	       strmap_get(&ws->toks, ws->key.ptr, ws->key.len);
}

/*
 * A pair "a_b" (words may hold '_' themselves) shares its weight out to
 * its words: split where the first half is a token of ns1 (the subject's
 * first word is a 'v' token, a bigram's words are 'w' tokens); the
 * second half takes its share when it is a token of ns2, else (a word
 * too short to be one, the 't' of "don't") the first word takes it all;
 * a pair that splits nowhere is one word.
 */
static int pair_add(struct words *ws, const char *pair, char ns1, char ns2,
		    unsigned at, double w)
{
	size_t len = strlen(pair), i;

	for (i = 1; i + 1 < len; i++) {
		const char *b = pair + i + 1;
		size_t bl = len - i - 1;

		if (pair[i] != '_' || !has_token(ws, ns1, pair, i))
			continue;
		if (!has_token(ws, ns2, b, bl))
			return word_add(ws, pair, i, at, w);
		return word_add(ws, pair, i, at, w / 2)
			       ?: word_add(ws, b, bl, at, w / 2);
	}
	return word_add(ws, pair, len, at, w);
}

static int token_add(struct words *ws, const char *name, double w)
{
	const char *t = name + 2;

	if (!name[0] || name[1] != ':')
		return 0;
	switch (name[0]) {
	case 's':
		return word_add(ws, t, strlen(t), AT_SUBJ, w);
	case 'w':
		return word_add(ws, t, strlen(t), AT_LOG, w);
	case 'v':
		return pair_add(ws, t, 'v', 's', AT_SUBJ, w);
	case 'b':
		return pair_add(ws, t, 'w', 'w', AT_LOG, w);
	case '+':
		return word_add(ws, t, strlen(t), AT_ADD, w);
	case '-':
		return word_add(ws, t, strlen(t), AT_DEL, w);
	case 'p':
		return word_add(ws, t, strlen(t), AT_PREFIX, w);
	}
	return 0;
}

static int word_sentence(struct buf *b, const struct word *w)
{
	unsigned text = w->at & AT_SUBJ;
	unsigned code = w->at & (AT_ADD | AT_DEL);

	if (w->at & AT_PREFIX)
		return buf_addf(b, "subject prefix '%s'", w->key);
	if (code == (AT_ADD | AT_DEL))
		return buf_addf(b, "adds and removes code with '%s'", w->key);
	if (code)
		return buf_addf(b, "%s code with '%s'",
				code == AT_ADD ? "adds" : "removes", w->key);
	/* a changelog token may come from the subject's words: the subject
	 * is the one place certain when both namespaces have the word */
	return buf_addf(b, "%s says '%s'",
			text & AT_SUBJ ? "subject" : "changelog", w->key);
}

static int cmp_word(const void *a, const void *b)
{
	const struct word *p = a, *q = b;
	double x = fabs(p->w), y = fabs(q->w);

	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(p->key, q->key);
}

/* A sparse index and the first of v's entries that has it. */
struct tok_at {
	uint32_t index;
	size_t j;
};

static int cmp_tok_at(const void *a, const void *b)
{
	const struct tok_at *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->j < y->j ? -1 : x->j > y->j;
}

/* The name of sparse index idx (the first entry that has it), or NULL. */
static const char *token_name(const struct tok_at *by, size_t n,
			      const struct feat_vec *v, uint32_t idx)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (by[mid].index < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && by[lo].index == idx ? v->sp_names[by[lo].j] : NULL;
}

/* The patch's token names into ws->toks, its entries by index into *by. */
static int index_tokens(struct words *ws, struct tok_at **by,
			const struct feat_vec *v)
{
	struct strmap_entry *e;
	size_t j;
	int rc = 0;

	*by = NULL;
	if (!v->sp_names || !v->nsp)
		return 0;
	*by = pt_calloc(v->nsp, sizeof(**by));
	if (!*by)
		return PT_ENOMEM;
	for (j = 0; j < v->nsp && !rc; j++) {
		(*by)[j].index = v->sp[j].index;
		(*by)[j].j = j;
		if (v->sp_names[j])
			rc = strmap_put(&e, NULL, &ws->toks, v->sp_names[j],
					strlen(v->sp_names[j]));
	}
	qsort(*by, v->nsp, sizeof(**by), cmp_tok_at);
	return rc;
}

static int group_tokens(struct words *ws, const struct model_contrib *c,
			size_t nc, const struct feat_vec *v)
{
	struct tok_at *by = NULL;
	size_t i;
	int rc = index_tokens(ws, &by, v);

	for (i = 0; i < nc && !rc; i++) {
		const char *name;

		if (!c[i].is_sparse || c[i].value == 0)
			continue;
		name = by ? token_name(by, v->nsp, v, c[i].index) : NULL;
		if (!name) {
			ws->other += c[i].value;
			ws->nother++;
			continue;
		}
		rc = token_add(ws, name, c[i].value);
	}
	free(by);
	return rc;
}

static int text_rows(struct explain_reason **r, size_t *n, size_t *cap,
		     const struct model_contrib *c, size_t nc,
		     const struct feat_vec *v)
{
	struct words ws = { .at = STRMAP_INIT,
			    .toks = STRMAP_INIT,
			    .key = BUF_INIT };
	struct buf b = BUF_INIT;
	size_t i, shown = 0;
	int rc = group_tokens(&ws, c, nc, v);

	if (ws.n)
		qsort(ws.v, ws.n, sizeof(*ws.v), cmp_word);
	for (i = 0; i < ws.n && !rc; i++) {
		const struct word *w = &ws.v[i];
		int plain = !word_class(w->at);

		if (shown >= TEXT_TOKENS ||
		    (plain && is_function_word(w->key))) {
			ws.other += w->w;
			ws.nother++;
			continue;
		}
		buf_reset(&b);
		rc = word_sentence(&b, w)
			     ?: push(r, n, cap, &b, "text", 1, w->w, 1);
		shown++;
	}
	if (!rc && ws.nother) {
		buf_reset(&b);
		rc = buf_addf(&b,
			      "%zu other word%s of the subject, changelog "
			      "and code",
			      ws.nother, ws.nother == 1 ? "" : "s")
			     ?: push(r, n, cap, &b, "text.other",
				     (double)ws.nother, ws.other, 1);
	}
	for (i = 0; i < ws.n; i++)
		free(ws.v[i].key);
	free(ws.v);
	strmap_free(&ws.at);
	strmap_free(&ws.toks);
	buf_free(&ws.key);
	buf_free(&b);
	return rc;
}

/*
 * Rows that say the same thing become one, their weights summed, so the
 * rows and the bias still add up to the log-odds (the newest tag being
 * the release makes proc.days_since_tag and proc.days_since_release one
 * sentence).  The first row keeps its column.
 */
static void merge_same(struct explain_reason *r, size_t *n)
{
	size_t i, j, m;

	for (i = 0; i < *n; i++) {
		for (j = i + 1, m = i + 1; j < *n; j++) {
			if (!strcmp(r[i].text, r[j].text)) {
				r[i].weight += r[j].weight;
				free(r[j].text);
			} else {
				r[m++] = r[j];
			}
		}
		*n = m;
	}
}

int explain_vec(struct explain_reason **out, size_t *n, double *bias,
		const struct pt_model *m, const struct feat_vec *v)
{
	struct model_contrib *c = NULL;
	struct explain_reason *r = NULL;
	struct buf b = BUF_INIT;
	size_t nc = 0, cap = 0, i;
	int rc;

	*out = NULL;
	*n = 0;
	rc = model_explain(&c, &nc, bias, m, v->tab, v->sp, v->nsp);
	if (rc)
		return rc;
	for (i = 0; i < nc && !rc; i++) {
		enum feat_id id = (enum feat_id)c[i].index;

		if (c[i].is_sparse || c[i].index >= FEAT_NTAB)
			continue;
		buf_reset(&b);
		rc = sentence(&b, id, v->tab[id], v)
			     ?: push(&r, n, &cap, &b, feat_name(id), v->tab[id],
				     c[i].value, 0);
	}
	if (!rc)
		rc = text_rows(&r, n, &cap, c, nc, v);
	buf_free(&b);
	free(c);
	if (rc) {
		explain_free(r, *n);
		*n = 0;
		return rc;
	}
	merge_same(r, n);
	if (*n)
		qsort(r, *n, sizeof(*r), cmp_weight);
	*out = r;
	return 0;
}

int explain_shown(const struct explain_reason *r)
{
	if (r->weight == 0 || isnan(r->weight))
		return 0;
	if (r->is_text)
		return strcmp(r->feature, "text.other") != 0;
	return !isnan(r->value);
}

size_t explain_pick(size_t *idx, size_t max, const struct explain_reason *r,
		    size_t n, int raising_only)
{
	size_t i, j, m = 0;

	for (i = 0; i < n && m < max; i++) {
		if (!explain_shown(&r[i]) || (raising_only && r[i].weight < 0))
			continue;
		for (j = 0; j < m && strcmp(r[idx[j]].text, r[i].text); j++)
			;
		if (j == m)
			idx[m++] = i;
	}
	return m;
}
