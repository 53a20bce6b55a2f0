/*
 * features.c - one patch to one feature vector (feat.h; not "features.h", which is glibc's), as of the
 * patch's date.  It owns the feature names, the text normalisation for
 * the model (trailer-like lines dropped: the fix label is defined by
 * Fixes:/Cc: stable, so the text must not carry them), the hashed
 * n-grams, the code-pattern detectors, and the as-of queries against the
 * miner's tables (history.h).  Detectors are plain substring tests on
 * the added/removed lines; they are features, not verdicts.
 */
#include "scoring/model/features.h"
#include "scoring/model/histsum.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/model/bughist.h"
#include "scoring/util/fnv.h"

#define MAX_CODE_LINES 4000u   /* lines of a diff looked at for tokens */
#define MAX_TOKENS 20000u      /* hashed entries before de-duplication */
#define REV_PRIOR_RATE 0.1     /* smoothing: prior bug rate of a reviewer */
#define REV_PRIOR_WEIGHT 5.0   /* ... worth this many reviewed commits */
#define FREQUENT_REVIEWER 50
#define LATE_RC 4              /* -rc4 and later count as late */
#define DAY 86400.0

static const struct feat_info {
	const char *name, *desc;
	enum feat_group group;
} infos[FEAT_NTAB] = {
#define FEAT_INFO(id, name, group, desc) [FEAT_##id] = { name, desc, group },
	FEAT_TABLE(FEAT_INFO)
#undef FEAT_INFO
};

static const char *const group_names[FEAT_NGROUPS] = {
	"size", "history", "experience", "code", "review", "testing",
	"process", "conversation", "label", "text",
};

static const char *name_list[FEAT_NTAB + 1];

const char *feat_name(enum feat_id id)
{
	return id < FEAT_NTAB ? infos[id].name : "?";
}

const char *feat_desc(enum feat_id id)
{
	return id < FEAT_NTAB ? infos[id].desc : "?";
}

enum feat_group feat_group_of(enum feat_id id)
{
	return id < FEAT_NTAB ? infos[id].group : FEAT_G_TEXT;
}

const char *feat_group_name(enum feat_group g)
{
	return g < FEAT_NGROUPS ? group_names[g] : "?";
}

const char *const *feat_names(void)
{
	size_t i;

	if (!name_list[0])
		for (i = 0; i < FEAT_NTAB; i++)
			name_list[i] = infos[i].name;
	return name_list;
}

int feat_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < FEAT_NTAB; i++)
		if (!strcmp(infos[i].name, name))
			return (int)i;
	return -1;
}

void feat_vec_free(struct feat_vec *v)
{
	size_t i;

	if (!v)
		return;
	if (v->sp_names)
		for (i = 0; i < v->nsp; i++)
			free(v->sp_names[i]);
	free(v->sp_names);
	free(v->sp);
	free(v->release_tag);
	free(v->top_dir);
	free(v->phrase);
	memset(v, 0, sizeof(*v));
}

uint32_t feat_hash(const char *ns, const char *tok, size_t len,
		   unsigned hash_bits)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (; *ns; ns++) {
		h ^= (unsigned char)*ns;
		h *= 16777619u;
	}
	h ^= ':';
	h *= 16777619u;
	for (i = 0; i < len; i++) {
		h ^= (unsigned char)tok[i];
		h *= 16777619u;
	}
	return h & ((1u << hash_bits) - 1);
}

/* ---- the database side ------------------------------------------------- */

enum {
	Q_COMMIT, Q_FEATURES, Q_REVIEWS, Q_TAG, Q_RELEASE, Q_AUTHOR,
	Q_REVIEWER, Q_FILE, Q_AUTHOR_FILES, NQ
};

static const char *const queries[NQ] = {
	[Q_COMMIT] = "SELECT id FROM commits WHERE repo_id = ? AND sha = ?",
	[Q_FEATURES] = "SELECT lt, ndev, age, nuc, exp, rexp, sexp "
		       "FROM features WHERE commit_id = ?",
	[Q_REVIEWS] = "SELECT kind, is_maintainer, prior, prior_bug "
		      "FROM reviews WHERE commit_id = ?",
	[Q_TAG] = "SELECT name, rc, date FROM tags WHERE repo_id = ? AND "
		  "date < ? ORDER BY date DESC, ord DESC LIMIT 1",
	[Q_RELEASE] = "SELECT date FROM tags WHERE repo_id = ? AND rc = 0 "
		      "AND date < ? ORDER BY date DESC LIMIT 1",
	[Q_AUTHOR] = "SELECT c.commit_date FROM commits c JOIN people p ON "
		     "p.id = c.author_id WHERE c.repo_id = ? AND p.email = ? "
		     "AND c.commit_date < ?",
	[Q_REVIEWER] = "SELECT count(*), coalesce(sum(l.bug = 1 AND "
		       "l.discovered < ?3), 0) FROM trailers t "
		       "JOIN people p ON p.id = t.person_id "
		       "JOIN commits c ON c.id = t.commit_id "
		       "LEFT JOIN labels l ON l.commit_id = c.id "
		       "WHERE p.email = ?2 AND t.kind IN (2, 3, 4) AND "
		       "c.commit_date < ?3 AND c.repo_id = ?1",
	/* a path's earlier changes, newest first */
	[Q_FILE] = "SELECT c.id, c.author_id, c.commit_date, f.status, "
		   "f.old_lines, f.added, f.removed, f.binary, f.uncounted "
		   "FROM commit_files f JOIN commits c ON c.id = f.commit_id "
		   "WHERE f.path = ? AND c.repo_id = ? AND c.commit_date < ? "
		   "ORDER BY c.commit_date DESC, c.seq DESC",
	[Q_AUTHOR_FILES] = "SELECT c.id, f.path FROM commits c JOIN people p "
			   "ON p.id = c.author_id JOIN commit_files f ON "
			   "f.commit_id = c.id WHERE c.repo_id = ? AND "
			   "p.email = ? AND c.commit_date < ? ORDER BY c.id",
};

struct feat_ctx {
	struct db *db;
	int64_t repo_id;
	sqlite3_stmt *st[NQ];
	struct histsum *hs;  /* summaries for unmined patches (histsum.c) */
	struct bughist *bh;  /* the past-bug columns (bughist.c) */
};

void feat_ctx_free(struct feat_ctx *c)
{
	if (!c)
		return;
	db_finalize_all(c->st, NQ);
	histsum_free(c->hs);
	bughist_free(c->bh);
	free(c);
}

int feat_ctx_new(struct feat_ctx **out, struct db *db, int64_t repo_id)
{
	struct feat_ctx *c;
	int rc;

	*out = NULL;
	c = pt_calloc(1, sizeof(*c));
	if (!c)
		return PT_ENOMEM;
	c->db = db;
	c->repo_id = repo_id;
	if (db && (rc = db_prepare_all(c->st, db, queries, NQ))) {
		feat_ctx_free(c);
		return rc;
	}
	if (db && (rc = bughist_new(&c->bh, db, repo_id))) {
		feat_ctx_free(c);
		return rc;
	}
	if (db && (rc = histsum_open(&c->hs, db, repo_id))) {
		feat_ctx_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void feat_ctx_no_summary(struct feat_ctx *c)
{
	histsum_free(c->hs);
	c->hs = NULL;
}

static sqlite3_stmt *q(struct feat_ctx *c, int which)
{
	sqlite3_stmt *st = c->st[which];

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

static double col_or_nan(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL
		       ? NAN
		       : sqlite3_column_double(st, i);
}

/* The mined commit's id, or 0. */
static int64_t mined_id(struct feat_ctx *c, const struct patch *p)
{
	sqlite3_stmt *st;

	if (!c->db || !p->commit_id)
		return 0;
	st = q(c, Q_COMMIT);
	sqlite3_bind_int64(st, 1, c->repo_id);
	sqlite3_bind_text(st, 2, p->commit_id, -1, SQLITE_STATIC);
	return sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0)
					      : 0;
}

static void history_mined(struct feat_ctx *c, int64_t id, float *t)
{
	sqlite3_stmt *st = q(c, Q_FEATURES);

	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW)
		return;
	t[FEAT_LT] = (float)col_or_nan(st, 0);
	t[FEAT_NDEV] = (float)col_or_nan(st, 1);
	t[FEAT_AGE] = (float)col_or_nan(st, 2);
	t[FEAT_NUC] = (float)col_or_nan(st, 3);
	t[FEAT_EXP] = (float)col_or_nan(st, 4);
	t[FEAT_REXP] = (float)col_or_nan(st, 5);
	t[FEAT_SEXP] = (float)col_or_nan(st, 6);
}

/* A patch that is not mined: the author's record from earlier commits. */
static void history_unmined(struct feat_ctx *c, const struct patch *p,
			    int64_t date, float *t)
{
	sqlite3_stmt *st;
	double exp = 0, rexp = 0;

	if (!p->author.email)
		return;
	if (c->hs) {
		histsum_experience(c->hs, p->author.email, date, &exp, &rexp);
		t[FEAT_EXP] = (float)exp;
		t[FEAT_REXP] = (float)rexp;
		return;
	}
	st = q(c, Q_AUTHOR);
	sqlite3_bind_int64(st, 1, c->repo_id);
	sqlite3_bind_text(st, 2, p->author.email, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, date);
	while (sqlite3_step(st) == SQLITE_ROW) {
		double y = (double)(date - sqlite3_column_int64(st, 0)) /
			   (365.25 * DAY);

		exp++;
		rexp += 1.0 / (1.0 + (y > 0 ? y : 0));
	}
	t[FEAT_EXP] = (float)exp;
	t[FEAT_REXP] = (float)rexp;
}

#define MAX_FILE_ROWS 20000u   /* earlier changes read per file */

struct ids {
	int64_t *v;
	size_t n, cap;
};

static int ids_add(struct ids *s, int64_t id)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		void *np = pt_reallocarray(s->v, cap, sizeof(*s->v));

		if (!np)
			return PT_ENOMEM;
		s->v = np;
		s->cap = cap;
	}
	s->v[s->n++] = id;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t ids_unique(struct ids *s)
{
	size_t i, m = 0;

	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_i64);
	for (i = 0; i < s->n; i++)
		if (!m || s->v[m - 1] != s->v[i])
			s->v[m++] = s->v[i];
	return s->n = m;
}

static const char *file_path(const struct patch_file *f)
{
	return f->old_path ? f->old_path : f->new_path;
}

/* The top-level directory of a path, "" at the root (NS, SEXP). */
static size_t top_len(const char *path)
{
	const char *sl = strchr(path, '/');

	return sl ? (size_t)(sl - path) : 0;
}

static int same_top(const struct patch *p, const char *path)
{
	size_t i, n = top_len(path);

	for (i = 0; i < p->nfiles; i++) {
		const char *q = file_path(&p->files[i]);

		if (q && top_len(q) == n && !strncmp(q, path, n))
			return 1;
	}
	return 0;
}

/*
 * The file history of a patch that is not mined, as histfeat.c defines
 * it for mined commits but from the stored file changes dated before
 * the patch: LT, NDEV, NUC, AGE and SEXP.  Renames are not followed
 * and addresses are not folded through .mailmap, so a value can differ
 * from the miner's for the same change; missing would differ more.
 */
static int files_unmined(struct feat_ctx *c, const struct patch *p,
			 int64_t date, float *t)
{
	struct ids devs = { 0 }, cms = { 0 };
	double lt = 0, age = 0;
	size_t i, nold = 0, rows;
	int64_t last = -1;
	unsigned sexp = 0;
	int rc = 0;

	if (c->hs)
		return histsum_files(c->hs, p, date, t);
	for (i = 0; i < p->nfiles && !rc; i++) {
		const struct patch_file *f = &p->files[i];
		const char *path = file_path(f);
		sqlite3_stmt *st;

		if (!path || f->status == PATCH_FILE_ADDED)
			continue;
		st = q(c, Q_FILE);
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, c->repo_id);
		sqlite3_bind_int64(st, 3, date);
		for (rows = 0; !rc && rows < MAX_FILE_ROWS &&
			       sqlite3_step(st) == SQLITE_ROW; rows++) {
			if (!rows) {
				const char *status = (const char *)
					sqlite3_column_text(st, 3);
				double d = (double)(date -
					sqlite3_column_int64(st, 2)) / DAY;

				age += d > 0 ? d : 0;
				nold++;
				if (status && *status != 'D' &&
				    !sqlite3_column_int(st, 7) &&
				    !sqlite3_column_int(st, 8))
					lt += sqlite3_column_double(st, 4) +
					      sqlite3_column_double(st, 5) -
					      sqlite3_column_double(st, 6);
			}
			rc = ids_add(&cms, sqlite3_column_int64(st, 0));
			if (!rc && sqlite3_column_type(st, 1) != SQLITE_NULL)
				rc = ids_add(&devs,
					     sqlite3_column_int64(st, 1));
		}
	}
	if (!rc && p->author.email) {
		sqlite3_stmt *st = q(c, Q_AUTHOR_FILES);

		sqlite3_bind_int64(st, 1, c->repo_id);
		sqlite3_bind_text(st, 2, p->author.email, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, date);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0);
			const char *path =
				(const char *)sqlite3_column_text(st, 1);

			if (id != last && path && same_top(p, path)) {
				sexp++;
				last = id;
			}
		}
		t[FEAT_SEXP] = (float)sexp;
	}
	if (!rc) {
		t[FEAT_LT] = (float)(lt > 0 ? lt : 0);
		t[FEAT_NDEV] = (float)ids_unique(&devs);
		t[FEAT_NUC] = (float)ids_unique(&cms);
		t[FEAT_AGE] = (float)(nold ? age / (double)nold : 0);
	}
	free(devs.v);
	free(cms.v);
	return rc;
}

struct rev_acc {
	double prior, bug, max_prior;
	int n, maint, maint_known;
};

static void rev_add(struct rev_acc *a, double prior, double bug)
{
	a->prior += prior;
	a->bug += bug;
	if (prior > a->max_prior)
		a->max_prior = prior;
	a->n++;
}

static void rev_store(const struct rev_acc *a, float *t)
{
	if (!a->n)
		return;
	t[FEAT_REV_BUGRATE] =
		(float)((a->bug + REV_PRIOR_RATE * REV_PRIOR_WEIGHT) /
			(a->prior + REV_PRIOR_WEIGHT));
	t[FEAT_REV_PRIOR] = (float)a->prior;
	t[FEAT_REV_FREQUENT] = a->max_prior >= FREQUENT_REVIEWER;
}

static void reviews_mined(struct feat_ctx *c, int64_t id, float *t)
{
	sqlite3_stmt *st = q(c, Q_REVIEWS);
	struct rev_acc a = { 0 };
	int reviewed = 0;

	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int kind = sqlite3_column_int(st, 0);

		rev_add(&a, sqlite3_column_double(st, 2),
			sqlite3_column_double(st, 3));
		if (kind != TRAILER_REVIEWED && kind != TRAILER_ACKED)
			continue;
		reviewed = 1;
		if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
			a.maint_known = 1;
			a.maint |= sqlite3_column_int(st, 1) != 0;
		}
	}
	rev_store(&a, t);
	if (!reviewed)
		t[FEAT_MAINT_REVIEW] = 0;
	else if (a.maint_known)
		t[FEAT_MAINT_REVIEW] = (float)a.maint;
}

/* A reviewer's earlier reviews and the known bugs among them; 0: none. */
static int reviewer_asof(struct feat_ctx *c, const char *email, int64_t date,
			 double *prior, double *bugs)
{
	sqlite3_stmt *st;

	if (c->hs) {
		histsum_reviewer(c->hs, email, date, prior, bugs);
		return 1;
	}
	st = q(c, Q_REVIEWER);
	sqlite3_bind_int64(st, 1, c->repo_id);
	sqlite3_bind_text(st, 2, email, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, date);
	if (sqlite3_step(st) != SQLITE_ROW)
		return 0;
	*prior = sqlite3_column_double(st, 0);
	*bugs = sqlite3_column_double(st, 1);
	return 1;
}

static void reviews_unmined(struct feat_ctx *c, const struct patch *p,
			    int64_t date, float *t)
{
	struct rev_acc a = { 0 };
	double prior, bugs;
	size_t i;

	for (i = 0; i < p->ntrailers; i++) {
		const struct trailer *tr = &p->trailers[i];

		if ((tr->kind != TRAILER_REVIEWED &&
		     tr->kind != TRAILER_ACKED && tr->kind != TRAILER_TESTED) ||
		    !tr->email)
			continue;
		if (reviewer_asof(c, tr->email, date, &prior, &bugs))
			rev_add(&a, prior, bugs);
	}
	rev_store(&a, t);
}

static int cycle_asof(struct feat_ctx *c, int64_t date, float *t,
		      struct feat_vec *v)
{
	sqlite3_stmt *st = q(c, Q_TAG);

	sqlite3_bind_int64(st, 1, c->repo_id);
	sqlite3_bind_int64(st, 2, date);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		int rc = sqlite3_column_int(st, 1);

		/* after a final release: the next cycle's merge window */
		t[FEAT_RC] = (float)rc;
		t[FEAT_LATE_RC] = rc >= LATE_RC;
		t[FEAT_DAYS_TAG] =
			(float)((double)(date - sqlite3_column_int64(st, 2)) /
				DAY);
		if (name && !(v->release_tag = pt_strdup(name)))
			return PT_ENOMEM;
	}
	st = q(c, Q_RELEASE);
	sqlite3_bind_int64(st, 1, c->repo_id);
	sqlite3_bind_int64(st, 2, date);
	if (sqlite3_step(st) == SQLITE_ROW)
		t[FEAT_DAYS_RELEASE] =
			(float)((double)(date - sqlite3_column_int64(st, 0)) /
				DAY);
	return 0;
}

/* ---- sparse entries ---------------------------------------------------- */

struct tok {
	uint32_t index;
	unsigned char ns;      /* namespace number, for per-namespace scaling */
	char *name;            /* with FEAT_NAMES */
};

struct toks {
	struct tok *v;
	size_t n, cap;
	unsigned bits;
	int names;
};

static const char *const ns_names[] = { "s", "w", "b", "+", "-", "v", "p" };
enum {
	NS_SUBJ, NS_WORD, NS_BIGRAM, NS_ADD, NS_DEL,
	NS_VERB,   /* the subject's first word after its prefix, and pair */
	NS_PREFIX, /* the subject's component prefix ("net/ice") */
	NNS
};

static int tok_add(struct toks *t, int ns, const char *s, size_t len)
{
	struct tok *k;

	if (t->n >= MAX_TOKENS)
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		void *p = pt_reallocarray(t->v, cap, sizeof(*t->v));

		if (!p)
			return PT_ENOMEM;
		t->v = p;
		t->cap = cap;
	}
	k = &t->v[t->n];
	k->index = feat_hash(ns_names[ns], s, len, t->bits);
	k->ns = (unsigned char)ns;
	k->name = NULL;
	if (t->names) {
		struct buf b = BUF_INIT;

		if (buf_addf(&b, "%s:%.*s", ns_names[ns], (int)len, s))
			return PT_ENOMEM;
		k->name = buf_detach(&b, NULL);
	}
	t->n++;
	return 0;
}

static int cmp_tok(const void *a, const void *b)
{
	const struct tok *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Unique per namespace, each worth 1/sqrt(unique tokens in the
 * namespace): long changelogs and big diffs do not drown short ones.
 */
static int toks_to_vec(struct toks *t, struct feat_vec *v)
{
	size_t i, m = 0, count[NNS] = { 0 };

	qsort(t->v, t->n, sizeof(*t->v), cmp_tok);
	for (i = 0; i < t->n; i++) {
		if (m && t->v[m - 1].ns == t->v[i].ns &&
		    t->v[m - 1].index == t->v[i].index) {
			free(t->v[i].name);
			continue;
		}
		t->v[m++] = t->v[i];
		count[t->v[i].ns]++;
	}
	t->n = m;
	v->sp = pt_calloc(m + 1, sizeof(*v->sp));
	if (!v->sp)
		return PT_ENOMEM;
	if (t->names && !(v->sp_names = pt_calloc(m + 1, sizeof(char *))))
		return PT_ENOMEM;
	for (i = 0; i < m; i++) {
		v->sp[i].index = t->v[i].index;
		v->sp[i].value = (float)(1.0 / sqrt((double)count[t->v[i].ns]));
		if (v->sp_names) {
			v->sp_names[i] = t->v[i].name;
			t->v[i].name = NULL;
		}
	}
	v->nsp = v->spcap = m;
	return 0;
}

static void toks_free(struct toks *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
}

/* ---- text ------------------------------------------------------------------ */

/*
 * Lines that look like trailers or tags of the fix label, wherever they
 * are in the message (DPDK puts Fixes: and Cc: stable in a paragraph of
 * their own above the sign-offs).
 */
static const char *const dropped_keys[] = {
	"fixes", "cc", "link", "closes", "signed-off-by", "reviewed-by",
	"acked-by", "tested-by", "reported-by", "suggested-by",
	"co-developed-by", "reported-and-tested-by", "bugzilla id",
	"coverity issue", "message-id", "change-id", "bug", "buglink",
	NULL,
};

static int is_dropped_line(const char *s, size_t len)
{
	const char *colon = memchr(s, ':', len);
	size_t k, klen;

	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	colon = memchr(s, ':', len);
	if (!colon)
		return 0;
	klen = (size_t)(colon - s);
	for (k = 0; dropped_keys[k]; k++)
		if (strlen(dropped_keys[k]) == klen &&
		    !strncasecmp(s, dropped_keys[k], klen))
			return 1;
	return 0;
}

static int word_char(int c)
{
	return isalnum(c) || c == '_';
}

/* Lowercased words of s into ns (and bigrams into NS_BIGRAM). */
static int add_words(struct toks *t, int ns, const char *s, size_t len,
		     int bigrams)
{
	char prev[64], cur[64];
	size_t i = 0, plen = 0;
	int rc = 0;

	while (i < len && !rc) {
		size_t n = 0;

		while (i < len && !word_char((unsigned char)s[i]))
			i++;
		while (i < len && word_char((unsigned char)s[i])) {
			if (n < sizeof(cur) - 1)
				cur[n++] = (char)tolower((unsigned char)s[i]);
			i++;
		}
		if (n < 2)
			continue;
		rc = tok_add(t, ns, cur, n);
		if (!rc && bigrams && plen) {
			char bi[130];
			int bl = snprintf(bi, sizeof(bi), "%.*s_%.*s",
					  (int)plen, prev, (int)n, cur);

			rc = tok_add(t, NS_BIGRAM, bi, (size_t)bl);
		}
		memcpy(prev, cur, n);
		plen = n;
	}
	return rc;
}

/*
 * "net/ice: fix Tx descriptor" -> prefix "net/ice", verb "fix" and the
 * pair "fix_tx": by convention the subject's first word says what kind
 * of change it is, which a bag of words loses (a "fix" anywhere in the
 * subject is not the same as starting with it).  The prefix is the
 * run of space-free "part: " components at the start.
 */
static int subject_tokens(struct toks *t, const char *subj)
{
	char w[2][64], pair[130];
	size_t pos = 0, plen = 0, i, k;
	int rc = 0, pl;

	for (;;) {
		size_t j = pos;

		while (subj[j] && subj[j] != ' ' && subj[j] != ':')
			j++;
		if (j == pos || subj[j] != ':' || subj[j + 1] != ' ')
			break;
		plen = j;
		pos = j + 2;
	}
	if (plen)
		rc = tok_add(t, NS_PREFIX, subj, plen);
	for (k = 0; k < 2 && !rc; k++) {
		char *o = w[k];
		size_t n = 0;

		while (subj[pos] && !word_char((unsigned char)subj[pos]))
			pos++;
		for (i = pos; word_char((unsigned char)subj[i]); i++)
			if (n < sizeof(w[k]) - 1)
				o[n++] = (char)tolower((unsigned char)subj[i]);
		o[n] = '\0';
		pos = i;
		if (!n)
			break;
		if (k == 0)
			rc = tok_add(t, NS_VERB, w[0], n);
		else {
			pl = snprintf(pair, sizeof(pair), "%s_%s", w[0], w[1]);
			rc = tok_add(t, NS_VERB, pair, (size_t)pl);
		}
	}
	return rc;
}

/* The changelog the model may read, in cl (subject not included). */
static int clean_changelog(struct buf *cl, const struct patch *p)
{
	const char *s = p->message ? p->message : "";
	const char *end = s + strlen(s);
	int rc = 0;

	while (s < end && !rc) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);

		if (!is_dropped_line(s, len))
			rc = buf_add(cl, s, len) ?: buf_addch(cl, '\n');
		s += len + (nl != NULL);
	}
	return rc;
}

static const char *const phrases[] = {
	"null pointer dereference", "use-after-free", "use after free",
	"double free", "memory leak", "out-of-bounds", "out of bounds",
	"buffer overflow", "integer overflow", "deadlock", "race condition",
	"uninitialized", "segmentation fault", "segfault", "crash", "hang",
	"corruption", "kasan", "regression", "leak", "overflow", "fix",
	NULL,
};

static int find_phrase(struct feat_vec *v, const char *subj, const char *cl)
{
	size_t i;

	for (i = 0; phrases[i]; i++)
		if (strcasestr(subj, phrases[i]) || strcasestr(cl, phrases[i]))
			return (v->phrase = pt_strdup(phrases[i])) ? 0
								   : PT_ENOMEM;
	return 0;
}

static const char *const tested_words[] = {
	"tested on", "tested with", "tested it", "tested by running",
	"tested using", "i tested", "was tested", "testing on", "test result",
	"tested-on", "verified on", "reproduced on", NULL,
};

static const char *const bot_words[] = {
	"syzbot", "syzkaller", "kernel test robot", "lkp@intel.com", "0day",
	"kernelci", "coverity", "oss-fuzz", "clusterfuzz", NULL,
};

static int any_word(const char *s, const char *const *w)
{
	for (; *w; w++)
		if (strcasestr(s, *w))
			return 1;
	return 0;
}

static void trailer_counts(const struct patch *p, const char *msg, float *t)
{
	size_t i;
	int bot = 0, fixes = 0, stable = 0;

	t[FEAT_N_REVIEWED] = (float)patch_count_trailers(p, TRAILER_REVIEWED);
	t[FEAT_N_ACKED] = (float)patch_count_trailers(p, TRAILER_ACKED);
	t[FEAT_N_TESTED] = (float)patch_count_trailers(p, TRAILER_TESTED);
	t[FEAT_N_REPORTED] = (float)patch_count_trailers(p, TRAILER_REPORTED);
	t[FEAT_N_SUGGESTED] =
		(float)patch_count_trailers(p, TRAILER_SUGGESTED);
	t[FEAT_N_SIGNOFF] = (float)patch_count_trailers(p, TRAILER_SIGNED_OFF);
	for (i = 0; i < p->ntrailers; i++) {
		const struct trailer *tr = &p->trailers[i];

		if (tr->kind == TRAILER_REPORTED && tr->value &&
		    any_word(tr->value, bot_words))
			bot = 1;
		fixes |= tr->kind == TRAILER_FIXES;
		stable |= tr->kind == TRAILER_CC && tr->is_stable;
	}
	/* the same facts when they sit in the body (DPDK's layout) */
	if (strcasestr(msg, "coverity issue:") || strcasestr(msg, "syzbot"))
		bot = 1;
	if (!strncasecmp(msg, "fixes:", 6) || strcasestr(msg, "\nfixes:"))
		fixes = 1;
	if (strcasestr(msg, "cc: stable@"))
		stable = 1;
	t[FEAT_BOT_REPORT] = (float)bot;
	t[FEAT_HAS_FIXES] = (float)fixes;
	t[FEAT_CC_STABLE] = (float)stable;
	t[FEAT_TESTED_CLAIM] = (float)any_word(msg, tested_words);
	t[FEAT_BUGZILLA] = strcasestr(msg, "bugzilla") ||
			   strcasestr(msg, "bugs.dpdk.org") ||
			   strcasestr(msg, "bugzilla.kernel.org");
	t[FEAT_REVERT] = strcasestr(msg, "this reverts commit") != NULL ||
			 !strncmp(p->subject.clean ? p->subject.clean : "",
				  "Revert \"", 8);
}

/* ---- code -------------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

static int is_doc(const char *path)
{
	return !strncmp(path, "doc/", 4) || !strncmp(path, "Documentation/", 14) ||
	       strstr(path, "/doc/") || has_suffix(path, ".rst") ||
	       has_suffix(path, ".md") || has_suffix(path, ".txt") ||
	       has_suffix(path, ".html") || has_suffix(path, ".svg");
}

static int is_test(const char *path)
{
	return !strncmp(path, "test/", 5) || !strncmp(path, "tests/", 6) ||
	       !strncmp(path, "app/test", 8) || strstr(path, "/selftests/") ||
	       strstr(path, "/test/") || strstr(path, "/tests/");
}

static int is_build(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "meson.build") || !strcmp(base, "Makefile") ||
	       !strncmp(base, "Kconfig", 7) || !strcmp(base, "Kbuild") ||
	       !strcmp(base, "CMakeLists.txt") || has_suffix(base, ".mk") ||
	       !strcmp(base, "meson_options.txt") || has_suffix(base, ".map");
}

static int is_arch(const char *path)
{
	static const char *const parts[] = {
		"/x86", "/arm", "/ppc", "/powerpc", "/riscv", "/loongarch",
		"/aarch64", "/mips", "/s390", "/sparc", NULL,
	};
	size_t i;

	if (!strncmp(path, "arch/", 5))
		return 1;
	for (i = 0; parts[i]; i++)
		if (strstr(path, parts[i]))
			return 1;
	return 0;
}

struct code_acc {
	unsigned lines, code_lines, comment_lines;
	uint64_t ws_add, ws_del;   /* order-free sums of stripped lines */
	unsigned nws_add, nws_del, ws_diff;
	int all_doc, all_test, all_build, any_file;
};

static int contains(const char *s, size_t len, const char *w)
{
	size_t wl = strlen(w), i;

	if (wl > len)
		return 0;
	for (i = 0; i + wl <= len; i++)
		if (s[i] == w[0] && !memcmp(s + i, w, wl))
			return 1;
	return 0;
}

static int is_comment_or_blank(const char *s, size_t len)
{
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	return !len || *s == '*' || (len >= 2 && s[0] == '/' &&
				     (s[1] == '*' || s[1] == '/')) ||
	       (len >= 2 && s[len - 2] == '*' && s[len - 1] == '/' &&
		contains(s, len, "/*"));
}

static uint64_t stripped_hash(const char *s, size_t len, unsigned *nonblank)
{
	return fnv_nospace(FNV_INIT, s, len, nonblank);
}

static void code_patterns(const struct patch_line *l, float *t)
{
	const char *s = l->text;
	size_t n = l->len;
	int add = l->kind == '+';
	int is_if = contains(s, n, "if (") || contains(s, n, "if(");

	if (!add) {
		if (contains(s, n, "lock(") || contains(s, n, "mutex_"))
			t[FEAT_LOCK_DEL]++;
		return;
	}
	if (is_if && (contains(s, n, "(!") || contains(s, n, "== NULL") ||
		      contains(s, n, "NULL ==")))
		t[FEAT_NULL_GUARD]++;
	if (contains(s, n, "return -E") || contains(s, n, "return -1;") ||
	    contains(s, n, "= -E"))
		t[FEAT_ERR_RETURN]++;
	if (contains(s, n, "IS_ERR"))
		t[FEAT_IS_ERR]++;
	if (contains(s, n, "goto "))
		t[FEAT_GOTO]++;
	if (contains(s, n, "lock(") || contains(s, n, "mutex_") ||
	    contains(s, n, "_lock_"))
		t[FEAT_LOCK_ADD]++;
	if (is_if && (contains(s, n, ">") || contains(s, n, "<")) &&
	    (contains(s, n, "len") || contains(s, n, "size") ||
	     contains(s, n, "max") || contains(s, n, "MAX") ||
	     contains(s, n, "num") || contains(s, n, "count") ||
	     contains(s, n, "idx") || contains(s, n, "SIZE")))
		t[FEAT_BOUNDS]++;
	if (contains(s, n, "WARN_ON") || contains(s, n, "BUG_ON") ||
	    contains(s, n, "RTE_ASSERT") || contains(s, n, "assert(") ||
	    contains(s, n, "RTE_VERIFY"))
		t[FEAT_WARN]++;
	if (contains(s, n, "free("))
		t[FEAT_FREE_ADD]++;
	if (contains(s, n, "= NULL;"))
		t[FEAT_NULL_AFTER]++;
	if (contains(s, n, "memset(") || contains(s, n, "= {0}") ||
	    contains(s, n, "= { 0 }") || contains(s, n, "zalloc") ||
	    contains(s, n, "calloc("))
		t[FEAT_INIT]++;
}

static int code_tokens(struct toks *tk, const struct patch_line *l)
{
	const char *s = l->text;
	size_t i = 0, n = l->len;
	int ns = l->kind == '+' ? NS_ADD : NS_DEL, rc = 0;

	while (i < n && !rc) {
		size_t st;

		while (i < n && !(isalpha((unsigned char)s[i]) || s[i] == '_'))
			i++;
		st = i;
		while (i < n && word_char((unsigned char)s[i]))
			i++;
		if (i - st >= 2 && i - st <= 40)
			rc = tok_add(tk, ns, s + st, i - st);
	}
	return rc;
}

static int scan_file(const struct patch_file *f, struct code_acc *a,
		     struct toks *tk, float *t)
{
	const char *path = f->new_path ? f->new_path : f->old_path;
	int doc, rc = 0;
	size_t h, i;

	if (!path)
		return 0;
	doc = is_doc(path);
	a->any_file = 1;
	a->all_doc &= doc;
	a->all_test &= is_test(path);
	a->all_build &= is_build(path);
	if (is_arch(path))
		t[FEAT_ARCH] = 1;
	if (f->status == PATCH_FILE_ADDED)
		t[FEAT_NEWFILES]++;
	t[FEAT_HUNKS] += (float)f->nhunks;
	for (h = 0; h < f->nhunks && !rc; h++) {
		const struct patch_hunk *hk = &f->hunks[h];

		for (i = 0; i < hk->nlines && !rc; i++) {
			const struct patch_line *l = &hk->lines[i];
			unsigned nb;
			uint64_t sh;

			if (l->kind != '+' && l->kind != '-')
				continue;
			a->lines++;
			sh = stripped_hash(l->text, l->len, &nb);
			if (nb) {
				if (l->kind == '+') {
					a->ws_add += sh;
					a->nws_add++;
				} else {
					a->ws_del += sh;
					a->nws_del++;
				}
			}
			if (doc)
				continue;
			if (is_comment_or_blank(l->text, l->len))
				a->comment_lines++;
			else
				a->code_lines++;
			code_patterns(l, t);
			if (a->lines <= MAX_CODE_LINES)
				rc = code_tokens(tk, l);
		}
	}
	return rc;
}

static void dir_of(const char *path, char *out, size_t cap)
{
	const char *sl = strrchr(path, '/');
	size_t n = sl ? (size_t)(sl - path) + 1 : 0;

	if (n >= cap)
		n = cap - 1;
	memcpy(out, path, n);
	out[n] = '\0';
}

/* Kamei's size and diffusion measures from the diff itself. */
static int size_measures(const struct patch *p, struct feat_vec *v)
{
	char (*dirs)[256] = NULL, (*tops)[128] = NULL, best[256] = "";
	size_t i, j, nd = 0, ns = 0, bestlines = 0;
	double total = (double)p->added + (double)p->removed, ent = 0;
	float *t = v->tab;

	t[FEAT_LA] = (float)p->added;
	t[FEAT_LD] = (float)p->removed;
	t[FEAT_NF] = (float)p->nfiles;
	if (!p->nfiles)
		return 0;
	dirs = pt_calloc(p->nfiles, sizeof(*dirs));
	tops = pt_calloc(p->nfiles, sizeof(*tops));
	if (!dirs || !tops) {
		free(dirs);
		free(tops);
		return PT_ENOMEM;
	}
	for (i = 0; i < p->nfiles; i++) {
		const struct patch_file *f = &p->files[i];
		const char *path = f->new_path ? f->new_path : f->old_path;
		char d[256], top[128];
		const char *sl;
		size_t lines = f->added + f->removed;

		if (!path)
			continue;
		dir_of(path, d, sizeof(d));
		sl = strchr(path, '/');
		snprintf(top, sizeof(top), "%.*s", sl ? (int)(sl - path) : 0,
			 path);
		for (j = 0; j < nd && strcmp(dirs[j], d); j++)
			;
		if (j == nd)
			memcpy(dirs[nd++], d, sizeof(d));
		for (j = 0; j < ns && strcmp(tops[j], top); j++)
			;
		if (j == ns)
			memcpy(tops[ns++], top, sizeof(top));
		if (total > 0 && lines) {
			double pk = (double)lines / total;

			ent -= pk * log2(pk);
		}
		if (lines > bestlines || !best[0]) {
			bestlines = lines;
			memcpy(best, d, sizeof(best));
		}
	}
	t[FEAT_ND] = (float)nd;
	t[FEAT_NS] = (float)ns;
	t[FEAT_ENTROPY] = (float)ent;
	free(dirs);
	free(tops);
	v->top_dir = pt_strdup(best[0] ? best : "/");
	return v->top_dir ? 0 : PT_ENOMEM;
}

static int code_features(const struct patch *p, struct feat_vec *v,
			 struct toks *tk)
{
	struct code_acc a = { 0 };
	float *t = v->tab;
	size_t i;
	int rc = 0;

	a.all_doc = a.all_test = a.all_build = 1;
	t[FEAT_HUNKS] = t[FEAT_NEWFILES] = t[FEAT_ARCH] = 0;
	for (i = FEAT_NULL_GUARD; i <= FEAT_INIT; i++)
		t[i] = 0;
	for (i = 0; i < p->nfiles && !rc; i++)
		rc = scan_file(&p->files[i], &a, tk, t);
	if (rc)
		return rc;
	t[FEAT_DOC_ONLY] = a.any_file && a.all_doc;
	t[FEAT_TEST_ONLY] = a.any_file && a.all_test;
	t[FEAT_BUILD_ONLY] = a.any_file && a.all_build;
	t[FEAT_COMMENT_ONLY] = a.lines && !a.code_lines && !a.all_doc;
	t[FEAT_WS_ONLY] = a.lines && a.ws_add == a.ws_del &&
			  a.nws_add == a.nws_del;
	t[FEAT_SMALL_FIX] = a.code_lines > 0 && a.code_lines <= 2;
	return size_measures(p, v);
}

/* ---- the vector ------------------------------------------------------------ */

static int64_t asof_date(const struct patch *p)
{
	if (p->source == PATCH_FROM_GIT && p->commit_date)
		return p->commit_date;
	return p->author_date;
}

static void patch_process(const struct patch *p, float *t)
{
	int64_t local = p->author_date + (int64_t)p->author_tz * 60;

	t[FEAT_HOUR] = (float)(((local % 86400) + 86400) % 86400 / 3600);
	if (p->source == PATCH_FROM_GIT) {
		t[FEAT_LATENCY] =
			(float)((double)(p->commit_date - p->author_date) / DAY);
		t[FEAT_AUTHOR_IS_COMMITTER] =
			p->author.email && p->committer.email &&
			!strcasecmp(p->author.email, p->committer.email);
	} else {
		t[FEAT_VERSION] = (float)p->subject.version;
		t[FEAT_SERIES] = (float)(p->subject.total ? p->subject.total : 1);
		t[FEAT_RESEND] = p->subject.is_resend;
	}
}

static void thread_features(const struct feat_thread *th, float *t)
{
	if (!th || !th->known)
		return;
	t[FEAT_C_REPLIES] = (float)th->replies;
	t[FEAT_C_REVIEWERS] = (float)th->reviewers;
	t[FEAT_C_INLINE] = (float)th->inline_comments;
	t[FEAT_C_VERSIONS] = (float)th->versions;
	t[FEAT_C_NEGATIVE] = (float)th->negative;
	if (th->versions)
		t[FEAT_VERSION] = (float)th->versions;
}

int feat_compute(struct feat_vec *out, struct feat_ctx *c,
		 const struct patch *p, const struct feat_thread *thread,
		 unsigned hash_bits, unsigned flags)
{
	struct toks tk = { NULL, 0, 0, hash_bits, (flags & FEAT_NAMES) != 0 };
	struct buf cl = BUF_INIT;
	const char *subj = p->subject.clean ? p->subject.clean : "";
	float *t = out->tab;
	int64_t id = 0;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < FEAT_NTAB; i++)
		t[i] = NAN;
	out->date = asof_date(p);
	rc = clean_changelog(&cl, p);
	if (!rc)
		rc = add_words(&tk, NS_SUBJ, subj, strlen(subj), 0);
	if (!rc)
		rc = subject_tokens(&tk, subj);
	if (!rc)
		rc = add_words(&tk, NS_WORD, subj, strlen(subj), 1);
	if (!rc)
		rc = add_words(&tk, NS_WORD, cl.ptr, cl.len, 1);
	if (!rc)
		rc = find_phrase(out, subj, cl.ptr);
	if (!rc)
		rc = code_features(p, out, &tk);
	if (rc)
		goto out;
	trailer_counts(p, p->message ? p->message : "", t);
	patch_process(p, t);
	thread_features(thread, t);
	if (c && c->db) {
		id = mined_id(c, p);
		if (id) {
			history_mined(c, id, t);
			reviews_mined(c, id, t);
			bughist_mined(c->bh, id, t);
		} else {
			history_unmined(c, p, out->date, t);
			reviews_unmined(c, p, out->date, t);
			rc = files_unmined(c, p, out->date, t);
			if (!rc && c->hs)
				rc = histsum_bugs(c->hs, p, out->date, t);
			else if (!rc)
				rc = bughist_unmined(c->bh, p, out->date, t);
		}
		if (!rc)
			rc = cycle_asof(c, out->date, t, out);
	}
	if (!rc)
		rc = toks_to_vec(&tk, out);
out:
	toks_free(&tk);
	buf_free(&cl);
	if (rc)
		feat_vec_free(out);
	return rc;
}
