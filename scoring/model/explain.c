/*
 * explain.c - contributions to sentences (see explain.h).  The wording
 * lives here, keyed by feature id, so a new feature gets a sentence from
 * its description in features.h until it earns its own; the text model's
 * part is told by the patch's own tokens that carry it.
 */
#include "scoring/model/explain.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/trailer.h"

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

/*
 * An open-addressing table of positions (position + 1; 0 is free) in an
 * array the caller owns: the words, the vector's entries.  The keys stay
 * in that array, so nothing is copied; cap is a power of two.
 */
struct slots {
	size_t *v;
	size_t cap, n;
};

static uint64_t fnv(uint64_t h, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

#define FNV0 0xcbf29ce484222325ull

/* Room for one more: *grown says the positions must be placed again. */
static int slots_room(struct slots *t, int *grown)
{
	size_t cap;

	*grown = 0;
	if (2 * (t->n + 1) <= t->cap)
		return 0;
	cap = t->cap ? 2 * t->cap : 256;
	free(t->v);
	t->v = pt_calloc(cap, sizeof(*t->v));
	t->cap = t->v ? cap : 0;
	t->n = 0;
	*grown = 1;
	return t->v ? 0 : PT_ENOMEM;
}

/* Put position POS at the first free slot from hash H. */
static void slots_put(struct slots *t, uint64_t h, size_t pos)
{
	size_t k = (size_t)h & (t->cap - 1);

	while (t->v[k])
		k = (k + 1) & (t->cap - 1);
	t->v[k] = pos + 1;
	t->n++;
}

struct words {
	struct word *v;
	size_t n, cap;
	double other; /* function words and the rest */
	size_t nother;
	struct slots at;   /* the words by class and word */
	struct slots toks; /* the vector's entries by name ("w:word") */
	struct slots idx;  /* the vector's entries by index, first only */
	const struct feat_vec *vec;
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

static uint64_t word_hash(int class, const char *s, size_t len)
{
	char c = (char)('0' + class);

	return fnv(fnv(FNV0, &c, 1), s, len);
}

/* The word's position in ws->v, or ws->n when it has none yet. */
static size_t word_find(const struct words *ws, int class, const char *key,
			size_t len)
{
	const struct slots *t = &ws->at;
	size_t k;

	if (!t->cap)
		return ws->n;
	k = (size_t)word_hash(class, key, len) & (t->cap - 1);
	for (; t->v[k]; k = (k + 1) & (t->cap - 1)) {
		const struct word *w = &ws->v[t->v[k] - 1];

		if (word_class(w->at) == class && !strncmp(w->key, key, len) &&
		    !w->key[len])
			return t->v[k] - 1;
	}
	return ws->n;
}

/* Make room for a new word in ws->v and its table. */
static int word_room(struct words *ws)
{
	size_t i;
	int grown, rc = slots_room(&ws->at, &grown);

	for (i = 0; !rc && grown && i < ws->n; i++)
		slots_put(&ws->at,
			  word_hash(word_class(ws->v[i].at), ws->v[i].key,
				    strlen(ws->v[i].key)),
			  i);
	if (!rc && ws->n == ws->cap) {
		size_t c = ws->cap ? ws->cap * 2 : 32;
		void *p = pt_reallocarray(ws->v, c, sizeof(*ws->v));

		if (!p)
			return PT_ENOMEM;
		ws->v = p;
		ws->cap = c;
	}
	return rc;
}

/* A word of a class is one row: the first time it is seen, in order. */
static int word_add(struct words *ws, const char *key, size_t len, unsigned at,
		    double w)
{
	int class = word_class(at), rc;
	size_t i = word_find(ws, class, key, len);

	if (i < ws->n) {
		ws->v[i].at |= at;
		ws->v[i].w += w;
		return 0;
	}
	rc = word_room(ws);
	if (rc)
		return rc;
	ws->v[ws->n].key = pt_strndup(key, len);
	if (!ws->v[ws->n].key)
		return PT_ENOMEM;
	slots_put(&ws->at, word_hash(class, key, len), ws->n);
	ws->v[ws->n].at = at;
	ws->v[ws->n++].w = w;
	return 0;
}

/* Whether "ns:word" is one of the patch's tokens (ws->toks). */
static int has_token(const struct words *ws, char ns, const char *w, size_t len)
{
	const struct slots *t = &ws->toks;
	char pre[2] = { ns, ':' };
	size_t k;

	if (!t->cap)
		return 0;
	k = (size_t)fnv(fnv(FNV0, pre, 2), w, len) & (t->cap - 1);
	for (; t->v[k]; k = (k + 1) & (t->cap - 1)) {
		const char *n = ws->vec->sp_names[t->v[k] - 1];

		if (n[0] == ns && n[1] == ':' && !strncmp(n + 2, w, len) &&
		    !n[2 + len])
			return 1;
	}
	return 0;
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

static uint64_t index_hash(uint32_t idx)
{
	return (uint64_t)idx * 0x9e3779b97f4a7c15ull >> 17;
}

/* The first of the vector's entries with sparse index idx, or SIZE_MAX. */
static size_t token_at(const struct words *ws, uint32_t idx)
{
	const struct slots *t = &ws->idx;
	size_t k;

	if (!t->cap)
		return SIZE_MAX;
	k = (size_t)index_hash(idx) & (t->cap - 1);
	for (; t->v[k]; k = (k + 1) & (t->cap - 1))
		if (ws->vec->sp[t->v[k] - 1].index == idx)
			return t->v[k] - 1;
	return SIZE_MAX;
}

/* Size a table for N entries at most half full. */
static int slots_init(struct slots *t, size_t n)
{
	t->cap = 256;
	while (t->cap < 2 * n)
		t->cap *= 2;
	t->v = pt_calloc(t->cap, sizeof(*t->v));
	return t->v ? 0 : PT_ENOMEM;
}

/* The vector's entries by name and by index (the first of an index). */
static int index_tokens(struct words *ws, const struct feat_vec *v)
{
	size_t j;
	int rc;

	ws->vec = v;
	if (!v->sp_names || !v->nsp)
		return 0;
	rc = slots_init(&ws->toks, v->nsp) ?: slots_init(&ws->idx, v->nsp);
	for (j = 0; j < v->nsp && !rc; j++) {
		const char *n = v->sp_names[j];

		if (token_at(ws, v->sp[j].index) == SIZE_MAX)
			slots_put(&ws->idx, index_hash(v->sp[j].index), j);
		if (n)
			slots_put(&ws->toks, fnv(FNV0, n, strlen(n)), j);
	}
	return rc;
}

static int group_tokens(struct words *ws, const struct model_contrib *c,
			size_t nc, const struct feat_vec *v)
{
	size_t i;
	int rc = index_tokens(ws, v);

	for (i = 0; i < nc && !rc; i++) {
		const char *name = NULL;
		size_t j;

		if (!c[i].is_sparse || c[i].value == 0)
			continue;
		j = token_at(ws, c[i].index);
		if (j != SIZE_MAX)
			name = v->sp_names[j];
		if (!name) {
			ws->other += c[i].value;
			ws->nother++;
			continue;
		}
		rc = token_add(ws, name, c[i].value);
	}
	return rc;
}

static int text_rows(struct explain_reason **r, size_t *n, size_t *cap,
		     const struct model_contrib *c, size_t nc,
		     const struct feat_vec *v)
{
	struct words ws = { 0 };
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
	free(ws.at.v);
	free(ws.toks.v);
	free(ws.idx.v);
	buf_free(&b);
	return rc;
}

/*
 * Rows that say the same thing become one, their weights summed, so the
 * rows and the bias still add up to the log-odds (the newest tag being
 * the release makes proc.days_since_tag and proc.days_since_release one
 * sentence).  The first row keeps its column.
 */
static int merge_same(struct explain_reason *r, size_t *n)
{
	struct slots t = { 0 };
	size_t j, m = 0, k;
	int rc = slots_init(&t, *n);

	for (j = 0; j < *n && !rc; j++) {
		uint64_t h = fnv(FNV0, r[j].text, strlen(r[j].text));

		k = (size_t)h & (t.cap - 1);
		for (; t.v[k]; k = (k + 1) & (t.cap - 1))
			if (!strcmp(r[t.v[k] - 1].text, r[j].text))
				break;
		if (t.v[k]) { /* the first row of that text takes it */
			r[t.v[k] - 1].weight += r[j].weight;
			free(r[j].text);
			continue;
		}
		r[m] = r[j];
		slots_put(&t, h, m++);
	}
	if (!rc)
		*n = m;
	free(t.v);
	return rc;
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
	if (!rc)
		rc = merge_same(r, n);
	if (rc) {
		explain_free(r, *n);
		*n = 0;
		return rc;
	}
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
