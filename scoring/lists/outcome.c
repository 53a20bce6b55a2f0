/*
 * outcome.c - outcomes and list labels of postings (see outcome.h).  The
 * note side runs once per message while it is threaded and keeps small
 * facts in list_posts, list_fixrefs, list_notices and list_asks; the
 * compute side rebuilds posting_outcomes and posting_labels from them,
 * from the threading tables and, when history has been mined, from the
 * commits and their trailers and labels.  It owns the SQL of those
 * tables; the trivial-fix rules are labels.c's.
 */
#include "scoring/lists/outcome.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/history/labels.h"
#include "scoring/util/strmap.h"

#define OUTCOME_MAX_ITEMS 256
#define OUTCOME_ITEM_UNNUMBERED 1000
#define OUTCOME_MAX_COLS 10
#define OUTCOME_BATCH 1024

/*
 * A row noted but not yet written: the threading commits once per
 * message, and one more autocommit per message for these rows would cost
 * as much again, so they are written OUTCOME_BATCH at a time.
 */
struct drow {
	sqlite3_stmt *st;
	const char *what;
	struct {
		int type;     /* 0 NULL, 1 integer, 2 text */
		int64_t i;
		char *s;
	} v[OUTCOME_MAX_COLS];
};

struct outcome {
	struct db *db;
	struct labels_conf *lconf;
	sqlite3_stmt *post, *fixref, *notice, *ask;
	struct drow *rows;
	size_t nrows, caprows;
	int nomem;
};

int outcome_open(struct outcome **out, struct db *db,
		 const char *labels_conf)
{
	struct outcome *o;
	int rc;

	*out = NULL;
	o = pt_calloc(1, sizeof(*o));
	if (!o)
		return PT_ENOMEM;
	o->db = db;
	rc = labels_conf_load(&o->lconf, labels_conf);
	if (!rc)
		rc = db_prepare(&o->post, db,
				"INSERT OR IGNORE INTO list_posts (message_id, "
				"date, author_email, norm_subject, is_fix, "
				"is_stable, is_revert, reviewed, acked, tested)"
				" VALUES (?,?,?,?,?,?,?,?,?,?)");
	if (!rc)
		rc = db_prepare(&o->fixref, db,
				"INSERT OR IGNORE INTO list_fixrefs (message_id,"
				" kind, ref, ref_subject, norm_subject, date, "
				"trivial) VALUES (?,?,?,?,?,?,?)");
	if (!rc)
		rc = db_prepare(&o->notice, db,
				"INSERT OR IGNORE INTO list_notices (message_id,"
				" kind, who, date, item, item_subject, "
				"commit_sha, branch) VALUES (?,?,?,?,?,?,?,?)");
	if (!rc)
		rc = db_prepare(&o->ask, db,
				"INSERT OR IGNORE INTO list_asks (message_id, "
				"questions, requests, nits) VALUES (?,?,?,?)");
	if (rc) {
		outcome_free(o);
		return rc;
	}
	*out = o;
	return 0;
}

static void rows_clear(struct outcome *o)
{
	size_t i;
	int k;

	for (i = 0; i < o->nrows; i++)
		for (k = 0; k < OUTCOME_MAX_COLS; k++)
			free(o->rows[i].v[k].s);
	o->nrows = 0;
	o->nomem = 0;
}

void outcome_free(struct outcome *o)
{
	if (!o)
		return;
	rows_clear(o);
	free(o->rows);
	sqlite3_finalize(o->post);
	sqlite3_finalize(o->fixref);
	sqlite3_finalize(o->notice);
	sqlite3_finalize(o->ask);
	labels_conf_free(o->lconf);
	free(o);
}

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static int step_reset(struct outcome *o, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : db_error(o->db, what);
}

/* A new pending row for st; NULL (and o->nomem) when out of memory. */
static struct drow *row_new(struct outcome *o, sqlite3_stmt *st,
			    const char *what)
{
	struct drow *r;

	if (o->nrows == o->caprows) {
		size_t cap = o->caprows ? 2 * o->caprows : 64;

		r = pt_reallocarray(o->rows, cap, sizeof(*r));
		if (!r) {
			o->nomem = 1;
			return NULL;
		}
		o->rows = r;
		o->caprows = cap;
	}
	r = &o->rows[o->nrows++];
	memset(r, 0, sizeof(*r));
	r->st = st;
	r->what = what;
	return r;
}

static void row_text(struct outcome *o, struct drow *r, int col,
		     const char *s)
{
	if (!r || !s)
		return;
	r->v[col - 1].type = 2;
	r->v[col - 1].s = strdup(s);
	if (!r->v[col - 1].s)
		o->nomem = 1;
}

static void row_int(struct drow *r, int col, int64_t v)
{
	if (!r)
		return;
	r->v[col - 1].type = 1;
	r->v[col - 1].i = v;
}

static int row_done(struct outcome *o)
{
	if (o->nomem) {
		rows_clear(o);
		return pt_error_set(PT_ENOMEM, "out of memory");
	}
	return o->nrows >= OUTCOME_BATCH ? outcome_flush(o) : 0;
}

int outcome_flush(struct outcome *o)
{
	struct drow *r;
	size_t i;
	int k, rc, own = 0;

	if (!o->nrows)
		return 0;
	/* inside the archive import's batch when it holds one */
	rc = db_savepoint(o->db, "outcome_flush", &own);
	for (i = 0; !rc && i < o->nrows; i++) {
		r = &o->rows[i];
		for (k = 0; k < OUTCOME_MAX_COLS; k++) {
			if (r->v[k].type == 1)
				sqlite3_bind_int64(r->st, k + 1, r->v[k].i);
			else if (r->v[k].type == 2)
				sqlite3_bind_text(r->st, k + 1, r->v[k].s, -1,
						  SQLITE_STATIC);
		}
		rc = step_reset(o, r->st, r->what);
	}
	rc = db_release(o->db, "outcome_flush", own, rc);
	rows_clear(o);
	return rc;
}

/* ---- text rules ---------------------------------------------------- */

struct line {
	const char *s;
	size_t n;
};

/* Next line of text[*pos..len) with leading blanks dropped. */
static int next_line(const char *text, size_t len, size_t *pos,
		     struct line *l)
{
	const char *nl;
	size_t end;

	if (*pos >= len)
		return 0;
	nl = memchr(text + *pos, '\n', len - *pos);
	end = nl ? (size_t)(nl - text) : len;
	l->s = text + *pos;
	l->n = end - *pos;
	*pos = nl ? end + 1 : len;
	while (l->n && (*l->s == ' ' || *l->s == '\t')) {
		l->s++;
		l->n--;
	}
	while (l->n && isspace((unsigned char)l->s[l->n - 1]))
		l->n--;
	return 1;
}

static int has_ci(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w), i;

	for (i = 0; i + k <= n; i++)
		if (!strncasecmp(s + i, w, k))
			return 1;
	return 0;
}

/* A word that may stand before "applied": greetings, which patches. */
static int lead_word(const char *w, size_t n)
{
	static const char *const ok[] = {
		"thanks", "thank", "you", "hello", "hi", "and", "now", "i've",
		"i", "have", "so", "ok", "okay", "the", "whole", "series",
		"patches", "patch", "all", "both", "two", "three", "four",
		"five", "six", "for", "this", "never", "mind", "dt", "first",
		"rest", "of", "it", NULL,
	};
	const char *const *k;
	size_t i;

	for (i = 0; i < n && (isdigit((unsigned char)w[i]) || w[i] == ',' ||
			      w[i] == '-' || w[i] == '#');
	     i++)
		;
	if (i == n)
		return 1; /* "1,2", "1-3", "#2" */
	while (n && strchr(",.!:;", w[n - 1]))
		n--;
	for (k = ok; *k; k++)
		if (strlen(*k) == n && !strncasecmp(w, *k, n))
			return 1;
	return 0;
}

/* Up to 7 lead words, then the verb: "Both patches applied, thanks." */
static int applied_verb(const struct line *l, size_t *at)
{
	static const char *const verbs[] = {
		"applied", "queued", "picked up", "picked", NULL,
	};
	const char *const *v;
	size_t i = 0, w, k;
	int words = 0;

	while (i < l->n && words <= 7) {
		for (v = verbs; *v; v++) {
			k = strlen(*v);
			if (l->n - i < k || strncasecmp(l->s + i, *v, k))
				continue;
			if (l->n - i == k ||
			    !isalpha((unsigned char)l->s[i + k])) {
				*at = i;
				return 1;
			}
		}
		for (w = i; w < l->n && l->s[w] != ' '; w++)
			;
		if (!lead_word(l->s + i, w - i))
			return 0;
		words++;
		for (i = w; i < l->n && l->s[i] == ' '; i++)
			;
	}
	return 0;
}

static int applied_line(struct line l)
{
	static const char *const spoil[] = {
		"not ", "n't", "on top", "test", "locally", "boot", "compile",
		"build", "cleanly", "if ", "once ", "when ", NULL,
	};
	const char *const *w;
	size_t at;

	if (!applied_verb(&l, &at) || (l.n && l.s[l.n - 1] == '?'))
		return 0;
	for (w = spoil; *w; w++)
		if (has_ci(l.s, l.n, *w))
			return 0;
	return 1;
}

int outcome_says_applied(const char *text, size_t len)
{
	struct line l;
	size_t pos = 0;

	while (next_line(text, len, &pos, &l)) {
		if (!l.n || l.s[0] == '>')
			continue;
		if (l.n >= 2 && !memcmp(l.s, "--", 2))
			break; /* signature or the diff of a posting */
		if (applied_line(l))
			return 1;
	}
	return 0;
}

static int is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return n > 0;
}

/* A commit id in "commit: <sha>", ".../c/<sha>", "?id=<sha>". */
static int line_sha(const struct line *l, char sha[41])
{
	static const char *const keys[] = { "commit: ", "/c/", "id=",
					    "/commit/", NULL };
	const char *const *k;
	const char *p;
	size_t i, n;

	for (k = keys; *k; k++) {
		for (i = 0; i + strlen(*k) <= l->n; i++) {
			if (strncasecmp(l->s + i, *k, strlen(*k)))
				continue;
			p = l->s + i + strlen(*k);
			for (n = 0; p + n < l->s + l->n && n < 40 &&
				    isxdigit((unsigned char)p[n]);
			     n++)
				;
			if (n >= 7 && (p + n == l->s + l->n ||
				       !isalnum((unsigned char)p[n]))) {
				memcpy(sha, p, n);
				sha[n] = '\0';
				return 1;
			}
		}
	}
	return 0;
}

/* "[v2,1/3] subject" or "- [PATCH v2 1/3] subject" */
static int line_item(const struct line *l, struct outcome_item *it)
{
	const char *s = l->s, *e = l->s + l->n, *rb, *p;
	size_t n;

	if (s < e && (*s == '-' || *s == '*'))
		for (s++; s < e && *s == ' '; s++)
			;
	if (s >= e || *s != '[' || !(rb = memchr(s, ']', (size_t)(e - s))))
		return 0;
	memset(it, 0, sizeof(*it));
	for (p = rb; p > s && (isdigit((unsigned char)p[-1]) || p[-1] == '/');
	     p--)
		;
	if (p < rb && isdigit((unsigned char)*p))
		it->number = (unsigned)strtoul(p, NULL, 10);
	for (p = rb + 1; p < e && *p == ' '; p++)
		;
	n = (size_t)(e - p);
	if (!n)
		return 0;
	if (n >= sizeof(it->subject))
		n = sizeof(it->subject) - 1;
	memcpy(it->subject, p, n);
	it->subject[n] = '\0';
	return 1;
}

size_t outcome_parse_items(struct outcome_item *items, size_t max,
			   const char *text, size_t len)
{
	struct line l;
	size_t pos = 0, n = 0;
	char sha[41];

	while (next_line(text, len, &pos, &l)) {
		if (!l.n || l.s[0] == '>')
			continue;
		if (n < max && line_item(&l, &items[n])) {
			n++;
			if (line_sha(&l, sha))
				memcpy(items[n - 1].sha, sha, sizeof(sha));
			continue;
		}
		if (n && !items[n - 1].sha[0] && line_sha(&l, sha))
			memcpy(items[n - 1].sha, sha, sizeof(sha));
	}
	return n;
}

char *outcome_revert_subject(const char *clean)
{
	size_t n;

	if (!clean || strncasecmp(clean, "Revert \"", 8))
		return NULL;
	n = strlen(clean);
	if (n < 10 || clean[n - 1] != '"')
		return NULL;
	return pt_strndup(clean + 8, n - 9);
}

/* ---- noting messages ----------------------------------------------- */

static int comment_line(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return !n || (n >= 2 && (!memcmp(s, "/*", 2) || !memcmp(s, "//", 2)))
	       || *s == '*' || (n >= 2 && !memcmp(s + n - 2, "*/", 2));
}

/* Docs, comments or whitespace only: the "nocode" trivial rule. */
static int patch_nocode(const struct outcome *o, const struct patch *p)
{
	const struct patch_file *f;
	const struct patch_hunk *h;
	size_t i, j, k;

	if (!p->nfiles)
		return 0;
	for (i = 0; i < p->nfiles; i++) {
		f = &p->files[i];
		if (labels_doc_path(o->lconf, f->new_path ? f->new_path
							  : f->old_path))
			continue;
		if (f->binary)
			return 0;
		for (j = 0; j < f->nhunks; j++) {
			h = &f->hunks[j];
			for (k = 0; k < h->nlines; k++)
				if ((h->lines[k].kind == '+' ||
				     h->lines[k].kind == '-') &&
				    !comment_line(h->lines[k].text,
						  h->lines[k].len))
					return 0;
		}
	}
	return 1;
}

static const char *trivial_rule(const struct outcome *o,
				const struct patch *p, const char *kind)
{
	struct buf t = BUF_INIT;
	int r = -1;

	if (patch_nocode(o, p))
		return labels_rule_name(LABELS_NOCODE);
	if (strcmp(kind, "fixes"))
		return NULL;
	if (!buf_addf(&t, "%s\n%s", p->subject.clean ? p->subject.clean : "",
		      p->changelog ? p->changelog : ""))
		r = labels_word_rule(o->lconf, t.ptr, t.len);
	buf_free(&t);
	return r < 0 ? NULL : labels_rule_name((enum labels_rule)r);
}

static int note_fixref(struct outcome *o, const struct patch *p,
		       const char *kind, const char *ref, const char *subj)
{
	struct drow *r;
	char *norm = NULL;
	int rc;

	if (subj && !(norm = subject_normalise(subj)))
		return PT_ENOMEM;
	r = row_new(o, o->fixref, "storing a fix reference");
	row_text(o, r, 1, p->message_id);
	row_text(o, r, 2, kind);
	row_text(o, r, 3, ref ? ref : "");
	row_text(o, r, 4, subj);
	row_text(o, r, 5, norm ? norm : "");
	row_int(r, 6, p->author_date);
	row_text(o, r, 7, trivial_rule(o, p, kind));
	rc = row_done(o);
	free(norm);
	return rc;
}

/* "This reverts commit <sha>." in the changelog. */
static void revert_sha(const struct patch *p, char sha[41])
{
	const char *m = p->message ? strstr(p->message, "reverts commit ")
				   : NULL;
	size_t n = 0;

	sha[0] = '\0';
	if (!m)
		return;
	m += 15;
	while (n < 40 && isxdigit((unsigned char)m[n]))
		n++;
	if (n >= 7 && is_hex(m, n)) {
		memcpy(sha, m, n);
		sha[n] = '\0';
	}
}

static int note_patch(struct outcome *o, const struct patch *p)
{
	struct drow *r;
	char *norm, *rev;
	char sha[41];
	size_t i;
	int rc, stable = 0;

	norm = subject_normalise(p->subject.clean ? p->subject.clean : "");
	if (!norm)
		return PT_ENOMEM;
	rev = outcome_revert_subject(p->subject.clean);
	for (i = 0; i < p->ntrailers; i++)
		stable |= p->trailers[i].is_stable;
	r = row_new(o, o->post, "storing a posting");
	row_text(o, r, 1, p->message_id);
	row_int(r, 2, p->author_date);
	row_text(o, r, 3, p->author.email);
	row_text(o, r, 4, norm);
	row_int(r, 5, patch_is_tagged_fix(p) ? 1 : 0);
	row_int(r, 6, stable);
	row_int(r, 7, rev != NULL);
	row_int(r, 8,
			 (int)patch_count_trailers(p, TRAILER_REVIEWED));
	row_int(r, 9,
			 (int)patch_count_trailers(p, TRAILER_ACKED));
	row_int(r, 10,
			 (int)patch_count_trailers(p, TRAILER_TESTED));
	rc = row_done(o);
	for (i = 0; !rc && i < p->ntrailers; i++)
		if (p->trailers[i].kind == TRAILER_FIXES)
			rc = note_fixref(o, p, "fixes", p->trailers[i].fixes_sha,
					 p->trailers[i].fixes_subject);
	if (!rc && rev) {
		revert_sha(p, sha);
		rc = note_fixref(o, p, "revert", sha, rev);
	}
	free(rev);
	free(norm);
	return rc;
}

static int reply_text(struct buf *out, const struct patch *p)
{
	int rc = 0;

	if (p->message)
		rc = buf_addstr(out, p->message);
	if (!rc && p->notes)
		rc = buf_addf(out, "\n---\n%s", p->notes);
	return rc;
}

static int store_notice(struct outcome *o, const struct patch *p,
			const char *kind, unsigned item, const char *subj,
			const char *sha)
{
	struct drow *r;
	char *norm = NULL;
	int rc;

	if (subj && !(norm = subject_normalise(subj)))
		return PT_ENOMEM;
	r = row_new(o, o->notice, "storing an applied notice");
	row_text(o, r, 1, p->message_id);
	row_text(o, r, 2, kind);
	row_text(o, r, 3, p->author.email);
	row_int(r, 4, p->author_date);
	row_int(r, 5, (int)item);
	row_text(o, r, 6, norm);
	row_text(o, r, 7, sha && *sha ? sha : NULL);
	rc = row_done(o);
	free(norm);
	return rc;
}

/* Strip "[PATCH v2 1/3] " style prefixes off a listed subject. */
static int item_subject(struct subject *s, const struct outcome_item *it)
{
	return subject_parse(s, it->subject, strlen(it->subject));
}

static int note_notice(struct outcome *o, const struct patch *p,
		       const char *kind, const char *text)
{
	struct outcome_item *items;
	struct subject s;
	size_t n, i;
	unsigned key;
	int rc = 0;

	items = pt_calloc(OUTCOME_MAX_ITEMS, sizeof(*items));
	if (!items)
		return PT_ENOMEM;
	n = outcome_parse_items(items, OUTCOME_MAX_ITEMS, text, strlen(text));
	if (!n)
		rc = store_notice(o, p, kind, 0, NULL, NULL);
	for (i = 0; !rc && i < n; i++) {
		memset(&s, 0, sizeof(s));
		rc = item_subject(&s, &items[i]);
		key = items[i].number ? items[i].number
				      : OUTCOME_ITEM_UNNUMBERED + (unsigned)i;
		if (!rc)
			rc = store_notice(o, p, kind, key,
					  s.clean ? s.clean : items[i].subject,
					  items[i].sha);
		subject_clear(&s);
	}
	free(items);
	return rc;
}

static int note_asks(struct outcome *o, const struct patch *p,
		     const char *text)
{
	struct line l;
	size_t pos = 0, len = strlen(text);
	struct drow *r;
	int q = 0, asks = 0, nits = 0;

	while (next_line(text, len, &pos, &l)) {
		if (!l.n || l.s[0] == '>')
			continue;
		if (l.n >= 2 && !memcmp(l.s, "--", 2))
			break;
		q += l.s[l.n - 1] == '?';
		asks += has_ci(l.s, l.n, "please") || has_ci(l.s, l.n, "should")
		     || has_ci(l.s, l.n, "could you") ||
		     has_ci(l.s, l.n, "instead") ||
		     has_ci(l.s, l.n, "would be better");
		nits += has_ci(l.s, l.n, "nit");
	}
	r = row_new(o, o->ask, "storing review asks");
	row_text(o, r, 1, p->message_id);
	row_int(r, 2, q);
	row_int(r, 3, asks);
	row_int(r, 4, nits);
	return row_done(o);
}

static int note_reply(struct outcome *o, const struct patch *p)
{
	struct buf text = BUF_INIT;
	struct thread_bot bot;
	int rc;

	rc = reply_text(&text, p);
	if (rc)
		goto out;
	thread_detect_bot(p, text.ptr, &bot);
	if (bot.name && !strcmp(bot.name, "patchwork-bot")) {
		if (bot.verdict && !strcmp(bot.verdict, "applied"))
			rc = note_notice(o, p, "bot", text.ptr);
	} else if (!bot.name) {
		if (outcome_says_applied(text.ptr, text.len))
			rc = note_notice(o, p, "reply", text.ptr);
		if (!rc)
			rc = note_asks(o, p, text.ptr);
	}
out:
	buf_free(&text);
	return rc;
}

int outcome_note(struct outcome *o, const struct patch *p,
		 const struct thread_result *res)
{
	if (!p->message_id)
		return 0;
	switch (res->kind) {
	case THREAD_PATCH:
		return note_patch(o, p);
	case THREAD_REPLY:
		return note_reply(o, p);
	default:
		return 0;
	}
}

/* ---- computing outcomes -------------------------------------------- */

static int exec_all(struct outcome *o, const char *const *sql)
{
	int rc = 0;

	for (; !rc && *sql; sql++)
		rc = db_exec(o->db, *sql);
	return rc;
}

#define APPLIED_COLS \
	"INSERT OR IGNORE INTO posting_outcomes (patch_id, outcome, how, " \
	"notice_msgid, applied_date, commit_sha) "
#define NOTICE_FROM \
	" FROM list_notices n JOIN messages m ON m.message_id = " \
	"n.message_id JOIN patches p ON p.series_id = m.series_id "

/* Earliest notice first: INSERT OR IGNORE keeps the first per patch. */
static const char *const applied_sql[] = {
	"DELETE FROM posting_outcomes",
	"DELETE FROM posting_labels",
	/* a bare notice on a patch applies to that patch */
	APPLIED_COLS "SELECT p.id, 'applied', n.kind, n.message_id, n.date, "
	"n.commit_sha" NOTICE_FROM "AND p.id = m.patch_id WHERE n.item = 0 "
	"ORDER BY n.date",
	/* a bare notice on the cover letter applies to the whole series */
	APPLIED_COLS "SELECT p.id, 'applied', n.kind, n.message_id, n.date, "
	"n.commit_sha" NOTICE_FROM "WHERE n.item = 0 AND "
	"COALESCE(m.patch_id, 0) = 0 ORDER BY n.date",
	/* listed items: by subject within the series, then by number */
	APPLIED_COLS "SELECT p.id, 'applied', n.kind, n.message_id, n.date, "
	"n.commit_sha" NOTICE_FROM "AND p.norm_subject = n.item_subject "
	"WHERE n.item > 0 ORDER BY n.date",
	APPLIED_COLS "SELECT p.id, 'applied', n.kind, n.message_id, n.date, "
	"n.commit_sha" NOTICE_FROM "AND p.number = n.item WHERE n.item > 0 "
	"AND n.item < 1000 AND NOT EXISTS (SELECT 1 FROM list_notices x "
	"JOIN patches y ON y.series_id = m.series_id AND y.norm_subject = "
	"x.item_subject WHERE x.message_id = n.message_id) ORDER BY n.date",
	NULL,
};

static const char *const superseded_sql[] = {
	"INSERT OR IGNORE INTO posting_outcomes (patch_id, outcome, "
	"superseded_by) SELECT q.prev_patch_id, 'superseded', min(q.id) FROM "
	"patches q WHERE q.prev_patch_id IS NOT NULL GROUP BY "
	"q.prev_patch_id",
	"INSERT OR IGNORE INTO posting_outcomes (patch_id, outcome) SELECT "
	"p.id, 'superseded' FROM patches p JOIN series_versions v ON "
	"v.prev_series_id = p.series_id",
	"INSERT OR IGNORE INTO posting_outcomes (patch_id, outcome) SELECT "
	"id, 'none' FROM patches",
	NULL,
};

/* The Message-ID a Link: (lore, patch.msgid.link) or Message-ID names. */
static char *link_msgid(const char *v)
{
	static const char *const keys[] = { "patch.msgid.link/",
					    "lore.kernel.org/r/",
					    "lkml.kernel.org/r/",
					    "/r/", NULL };
	const char *const *k, *p = NULL, *e;

	for (k = keys; *k && !p; k++)
		if ((p = strstr(v, *k)))
			p += strlen(*k);
	if (!p && (p = strstr(v, "lore.kernel.org/"))) {
		p = strchr(p + 16, '/'); /* skip the list name */
		p = p ? p + 1 : NULL;
	}
	if (!p) {
		p = v;
		while (*p == ' ' || *p == '<')
			p++;
		if (!strchr(p, '@'))
			return NULL;
	}
	for (e = p; *e && *e != '/' && *e != '>' && *e != ' ' && *e != '#';
	     e++)
		;
	return e > p ? pt_strndup(p, (size_t)(e - p)) : NULL;
}

static int have_commits(struct outcome *o, int *yes)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, o->db, "SELECT EXISTS (SELECT 1 FROM commits)");
	if (rc)
		return rc;
	*yes = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return 0;
}

#define UPSERT_COMMIT \
	"INSERT INTO posting_outcomes (patch_id, outcome, how, " \
	"applied_date, commit_sha, commit_id) VALUES (?1, 'applied', ?2, ?3," \
	" ?4, ?5) ON CONFLICT(patch_id) DO UPDATE SET outcome = 'applied', " \
	"how = CASE WHEN outcome = 'applied' THEN how ELSE ?2 END, " \
	"applied_date = CASE WHEN outcome = 'applied' THEN applied_date " \
	"ELSE ?3 END, commit_sha = ?4, commit_id = ?5 WHERE commit_id IS NULL"

static int upsert_commit(struct outcome *o, sqlite3_stmt *up, int64_t pid,
			 const char *how, sqlite3_stmt *c)
{
	sqlite3_bind_int64(up, 1, pid);
	bind_str(up, 2, how);
	sqlite3_bind_int64(up, 3, sqlite3_column_int64(c, 3));
	bind_str(up, 4, (const char *)sqlite3_column_text(c, 2));
	sqlite3_bind_int64(up, 5, sqlite3_column_int64(c, 0));
	return step_reset(o, up, "storing a commit outcome");
}

/* Mined commits whose Link:/Message-ID trailer names a posting. */
static int match_links(struct outcome *o, size_t *n)
{
	sqlite3_stmt *st = NULL, *find = NULL, *up = NULL;
	char *id;
	int rc;

	rc = db_prepare(&st, o->db,
			"SELECT c.id, t.value, c.sha, c.commit_date FROM "
			"trailers t JOIN commits c ON c.id = t.commit_id WHERE"
			" t.kind = ?1 OR lower(t.key) = 'message-id'");
	if (!rc)
		rc = db_prepare(&find, o->db,
				"SELECT id FROM patches WHERE message_id = ?");
	if (!rc)
		rc = db_prepare(&up, o->db, UPSERT_COMMIT);
	if (rc)
		goto out;
	sqlite3_bind_int(st, 1, TRAILER_LINK);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		id = link_msgid((const char *)sqlite3_column_text(st, 1));
		if (!id)
			continue;
		sqlite3_bind_text(find, 1, id, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(find) == SQLITE_ROW) {
			rc = upsert_commit(o, up, sqlite3_column_int64(find, 0),
					   "link", st);
			(*n)++;
		}
		sqlite3_reset(find);
		free(id);
	}
out:
	sqlite3_finalize(st);
	sqlite3_finalize(find);
	sqlite3_finalize(up);
	return rc;
}

/*
 * Postings without a commit, by normalised subject, same author email and
 * author date within the window (git am keeps the mail's date): the
 * closest one wins, so the version that was applied is the one matched.
 */
static int match_subjects(struct outcome *o, size_t *n)
{
	sqlite3_stmt *cs = NULL, *find = NULL, *up = NULL;
	const char *subj;
	char *norm;
	int rc;

	rc = db_prepare(&cs, o->db,
			"SELECT c.id, c.subject, c.sha, c.commit_date, "
			"c.author_date, pe.email FROM commits c JOIN people pe"
			" ON pe.id = c.author_id");
	if (!rc)
		rc = db_prepare(&find, o->db,
				"SELECT p.id FROM patches p LEFT JOIN "
				"posting_outcomes x ON x.patch_id = p.id WHERE "
				"p.norm_subject = ?1 AND p.author_email = ?2 "
				"AND abs(p.date - ?3) <= ?4 AND x.commit_id IS "
				"NULL ORDER BY abs(p.date - ?3) LIMIT 1");
	if (!rc)
		rc = db_prepare(&up, o->db, UPSERT_COMMIT);
	while (!rc && sqlite3_step(cs) == SQLITE_ROW) {
		subj = (const char *)sqlite3_column_text(cs, 1);
		if (!subj || !sqlite3_column_text(cs, 5))
			continue;
		norm = subject_normalise(subj);
		if (!norm) {
			rc = PT_ENOMEM;
			break;
		}
		sqlite3_bind_text(find, 1, norm, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(find, 2,
				  (const char *)sqlite3_column_text(cs, 5), -1,
				  SQLITE_TRANSIENT);
		sqlite3_bind_int64(find, 3, sqlite3_column_int64(cs, 4));
		sqlite3_bind_int64(find, 4, OUTCOME_DATE_WINDOW);
		if (sqlite3_step(find) == SQLITE_ROW) {
			rc = upsert_commit(o, up, sqlite3_column_int64(find, 0),
					   "subject", cs);
			(*n)++;
		}
		sqlite3_reset(find);
		free(norm);
	}
	sqlite3_finalize(cs);
	sqlite3_finalize(find);
	sqlite3_finalize(up);
	return rc;
}

/* ---- list labels --------------------------------------------------- */

static const char *const labels_sql[] = {
	"INSERT INTO posting_labels (patch_id, is_fix, is_stable, bug, "
	"nfixes, trivial_only, commit_bug) SELECT p.id, "
	"COALESCE(lp.is_fix, 0), COALESCE(lp.is_stable, 0), 0, 0, 0, lb.bug "
	"FROM patches p LEFT JOIN list_posts lp ON lp.message_id = "
	"p.message_id LEFT JOIN posting_outcomes o ON o.patch_id = p.id "
	"LEFT JOIN labels lb ON lb.commit_id = o.commit_id",
	NULL,
};

/* The applied posting a reference names, 0 when none. */
static int ref_target(struct outcome *o, sqlite3_stmt *bysha,
		      sqlite3_stmt *bysubj, sqlite3_stmt *ref, int64_t *out,
		      const char **how)
{
	const char *sha = (const char *)sqlite3_column_text(ref, 2);
	const char *subj = (const char *)sqlite3_column_text(ref, 3);
	int64_t date = sqlite3_column_int64(ref, 4);

	*out = 0;
	if (sha && strlen(sha) >= 7 && is_hex(sha, strlen(sha))) {
		sqlite3_bind_text(bysha, 1, sha, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(bysha, 2, date);
		if (sqlite3_step(bysha) == SQLITE_ROW) {
			*out = sqlite3_column_int64(bysha, 0);
			*how = "sha";
		}
		sqlite3_reset(bysha);
	}
	if (!*out && subj && *subj) {
		sqlite3_bind_text(bysubj, 1, subj, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(bysubj, 2, date);
		if (sqlite3_step(bysubj) == SQLITE_ROW) {
			*out = sqlite3_column_int64(bysubj, 0);
			*how = "subject";
		}
		sqlite3_reset(bysubj);
	}
	if (*out && !strcmp((const char *)sqlite3_column_text(ref, 1),
			    "revert"))
		*how = "revert";
	(void)o;
	return 0;
}

/*
 * Per target: the distinct fixing postings (by their normalised subject,
 * so v1 and v2 of one fix count once), earliest date, trivial or not.
 */
static int label_one(struct outcome *o, sqlite3_stmt *up, struct strmap *seen,
		     int64_t target, const char *how, sqlite3_stmt *ref,
		     struct outcome_counts *c)
{
	struct strmap_entry *e;
	struct buf key = BUF_INIT;
	const char *fsubj = (const char *)sqlite3_column_text(ref, 5);
	int trivial = sqlite3_column_type(ref, 6) != SQLITE_NULL;
	int added, rc;

	rc = buf_addf(&key, "%lld %s", (long long)target, fsubj ? fsubj : "");
	if (!rc)
		rc = strmap_put(&e, &added, seen, key.ptr, key.len);
	buf_free(&key);
	if (rc)
		return rc;
	c->refs_matched++;
	c->refs_trivial += trivial;
	sqlite3_bind_int64(up, 1, target);
	sqlite3_bind_int(up, 2, !trivial);
	sqlite3_bind_int(up, 3, !trivial && added);
	sqlite3_bind_int64(up, 4, sqlite3_column_int64(ref, 4));
	bind_str(up, 5, how);
	return step_reset(o, up, "storing a list label");
}

static int compute_labels(struct outcome *o, struct outcome_counts *c)
{
	struct strmap seen = STRMAP_INIT;
	sqlite3_stmt *ref = NULL, *bysha = NULL, *bysubj = NULL, *up = NULL;
	const char *how = NULL;
	int64_t target;
	int rc;

	rc = exec_all(o, labels_sql);
	if (!rc)
		rc = db_prepare(&ref, o->db,
				"SELECT f.message_id, f.kind, f.ref, "
				"f.norm_subject, f.date, lp.norm_subject, "
				"f.trivial FROM list_fixrefs f LEFT JOIN "
				"list_posts lp ON lp.message_id = f.message_id"
				" ORDER BY f.date");
	if (!rc)
		rc = db_prepare(&bysha, o->db,
				"SELECT p.id FROM posting_outcomes x JOIN "
				"patches p ON p.id = x.patch_id WHERE "
				"x.outcome = 'applied' AND length(x.commit_sha)"
				" >= 7 AND (x.commit_sha LIKE ?1 || '%' OR ?1 "
				"LIKE x.commit_sha || '%') AND p.date < ?2 "
				"ORDER BY p.date DESC LIMIT 1");
	if (!rc)
		rc = db_prepare(&bysubj, o->db,
				"SELECT p.id FROM patches p JOIN "
				"posting_outcomes x ON x.patch_id = p.id WHERE "
				"p.norm_subject = ?1 AND x.outcome = 'applied' "
				"AND p.date < ?2 ORDER BY p.date DESC LIMIT 1");
	if (!rc)
		rc = db_prepare(&up, o->db,
				"UPDATE posting_labels SET "
				"bug = max(bug, ?2), nfixes = nfixes + ?3, "
				"discovered = CASE WHEN ?2 THEN "
				"min(COALESCE(discovered, ?4), ?4) ELSE "
				"discovered END, how = CASE WHEN ?2 AND how IS "
				"NULL THEN ?5 ELSE how END, trivial_only = "
				"CASE WHEN ?2 THEN 0 WHEN bug THEN 0 ELSE 1 END"
				" WHERE patch_id = ?1");
	while (!rc && sqlite3_step(ref) == SQLITE_ROW) {
		c->refs++;
		rc = ref_target(o, bysha, bysubj, ref, &target, &how);
		if (!rc && target)
			rc = label_one(o, up, &seen, target, how, ref, c);
	}
	strmap_free(&seen);
	sqlite3_finalize(ref);
	sqlite3_finalize(bysha);
	sqlite3_finalize(bysubj);
	sqlite3_finalize(up);
	return rc;
}

static int count_where(struct outcome *o, size_t *out, const char *sql)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, o->db, sql);
	if (rc)
		return rc;
	*out = sqlite3_step(st) == SQLITE_ROW
		       ? (size_t)sqlite3_column_int64(st, 0)
		       : 0;
	sqlite3_finalize(st);
	return 0;
}

static int final_counts(struct outcome *o, struct outcome_counts *c)
{
	static const struct {
		size_t off;
		const char *sql;
	} q[] = {
#define Q(f, w) { offsetof(struct outcome_counts, f), \
		  "SELECT count(*) FROM " w }
		Q(postings, "patches"),
		Q(applied, "posting_outcomes WHERE outcome = 'applied'"),
		Q(by_reply, "posting_outcomes WHERE how = 'reply'"),
		Q(by_bot, "posting_outcomes WHERE how = 'bot'"),
		Q(by_link, "posting_outcomes WHERE how = 'link'"),
		Q(by_subject, "posting_outcomes WHERE how = 'subject'"),
		Q(superseded, "posting_outcomes WHERE outcome = 'superseded'"),
		Q(neither, "posting_outcomes WHERE outcome = 'none'"),
		Q(fixes, "posting_labels WHERE is_fix"),
		Q(bugs, "posting_labels WHERE bug"),
		Q(commits_joined,
		  "posting_outcomes WHERE commit_id IS NOT NULL"),
#undef Q
	};
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < sizeof(q) / sizeof(q[0]); i++)
		rc = count_where(o, (size_t *)((char *)c + q[i].off),
				 q[i].sql);
	return rc;
}

int outcome_compute(struct outcome_counts *out, struct outcome *o)
{
	size_t links = 0, subjects = 0;
	int rc, mined = 0;

	memset(out, 0, sizeof(*out));
	rc = outcome_flush(o);
	if (!rc)
		rc = db_begin(o->db);
	if (rc)
		return rc;
	rc = exec_all(o, applied_sql);
	if (!rc)
		rc = have_commits(o, &mined);
	if (!rc && mined)
		rc = match_links(o, &links);
	if (!rc && mined)
		rc = match_subjects(o, &subjects);
	if (!rc)
		rc = exec_all(o, superseded_sql);
	if (!rc)
		rc = compute_labels(o, out);
	if (!rc)
		rc = final_counts(o, out);
	if (!rc)
		rc = db_commit(o->db);
	if (rc)
		db_rollback(o->db);
	return rc;
}
