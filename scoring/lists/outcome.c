/*
 * outcome.c - outcomes and list labels of postings (see outcome.h).  The
 * note side runs once per message while it is threaded and keeps small
 * facts in list_posts, list_fixrefs, list_notices and list_asks; the
 * compute side (outcome_compute.c) rebuilds posting_outcomes and
 * posting_labels from them, from the threading tables and, when history
 * has been mined, from the commits and their trailers and labels.  This
 * file owns struct outcome, the note side and its batched rows; the text
 * rules are outcome_text.c's, the trivial-fix rules labels.c's.
 */
#include "scoring/lists/outcome.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/history/labels.h"
#include "scoring/lists/outcome_int.h"
#include "scoring/lists/thread.h"

#define OUTCOME_MAX_ITEMS 256
#define OUTCOME_ITEM_UNNUMBERED 1000
#define OUTCOME_ITEM_DIGEST 100000
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
		int type; /* 0 NULL, 1 integer, 2 text */
		int64_t i;
		char *s;
	} v[OUTCOME_MAX_COLS];
};

int outcome_open(struct outcome **out, struct db *db, const char *labels_conf)
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
				"commit_sha, branch, tree, target) VALUES "
				"(?,?,?,?,?,?,?,?,?,?)");
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

int outcome_step_reset(struct outcome *o, sqlite3_stmt *st, const char *what)
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

static void row_text(struct outcome *o, struct drow *r, int col, const char *s)
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
		rc = outcome_step_reset(o, r->st, r->what);
	}
	rc = db_release(o->db, "outcome_flush", own, rc);
	rows_clear(o);
	return rc;
}

/* ---- noting messages ----------------------------------------------- */

static int comment_line(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return !n || (n >= 2 && (!memcmp(s, "/*", 2) || !memcmp(s, "//", 2))) ||
	       *s == '*' || (n >= 2 && !memcmp(s + n - 2, "*/", 2));
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
		if (labels_doc_path(o->lconf,
				    f->new_path ? f->new_path : f->old_path))
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

static const char *trivial_rule(const struct outcome *o, const struct patch *p,
				const char *kind)
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
	if (n >= 7 && outcome_is_hex(m, n)) {
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
	row_int(r, 8, (int)patch_count_trailers(p, TRAILER_REVIEWED));
	row_int(r, 9, (int)patch_count_trailers(p, TRAILER_ACKED));
	row_int(r, 10, (int)patch_count_trailers(p, TRAILER_TESTED));
	rc = row_done(o);
	for (i = 0; !rc && i < p->ntrailers; i++)
		if (p->trailers[i].kind == TRAILER_FIXES)
			rc = note_fixref(o, p, "fixes",
					 p->trailers[i].fixes_sha,
					 p->trailers[i].fixes_subject);
	if (!rc && rev) {
		revert_sha(p, sha);
		rc = note_fixref(o, p, "revert", sha, rev);
	}
	free(rev);
	free(norm);
	return rc;
}

/* A notice's item: what it applied, where, by whom. */
struct notice_row {
	const char *kind; /* 'reply' or 'bot' */
	const struct outcome_dest *dest;
	unsigned item;
	const char *subject, *sha;
	const char *target; /* a digest's item: the posting it names */
};

static int store_notice(struct outcome *o, const struct patch *p,
			const struct notice_row *nr)
{
	const struct outcome_dest *d = nr->dest;
	struct drow *r;
	char *norm = NULL;
	int rc;

	if (nr->subject && !(norm = subject_normalise(nr->subject)))
		return PT_ENOMEM;
	r = row_new(o, o->notice, "storing an applied notice");
	row_text(o, r, 1, p->message_id);
	row_text(o, r, 2, nr->kind);
	row_text(o, r, 3, d->by[0] ? d->by : p->author.email);
	row_int(r, 4, p->author_date);
	row_int(r, 5, (int)nr->item);
	row_text(o, r, 6, norm);
	row_text(o, r, 7, nr->sha && *nr->sha ? nr->sha : NULL);
	row_text(o, r, 8, d->branch[0] ? d->branch : NULL);
	row_text(o, r, 9, d->tree[0] ? d->tree : NULL);
	row_text(o, r, 10, nr->target);
	rc = row_done(o);
	free(norm);
	return rc;
}

/* Strip "[PATCH v2 1/3] " style prefixes off a listed subject. */
static int item_subject(struct subject *s, const struct outcome_item *it)
{
	return subject_parse(s, it->subject, strlen(it->subject));
}

static int store_items(struct outcome *o, const struct patch *p,
		       struct notice_row *nr, const struct outcome_item *items,
		       size_t n)
{
	struct subject s;
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < n; i++) {
		if (items[i].unmatched)
			continue; /* patchwork-bot found no commit for it */
		memset(&s, 0, sizeof(s));
		rc = item_subject(&s, &items[i]);
		nr->item = items[i].number
				   ? items[i].number
				   : OUTCOME_ITEM_UNNUMBERED + (unsigned)i;
		nr->subject = s.clean ? s.clean : items[i].subject;
		nr->sha = items[i].sha;
		if (!rc)
			rc = store_notice(o, p, nr);
		subject_clear(&s);
	}
	return rc;
}

static int note_notice(struct outcome *o, const struct patch *p,
		       const char *kind, const char *text)
{
	struct outcome_item *items;
	struct outcome_dest dest;
	struct notice_row nr = { kind, &dest, 0, NULL, NULL, NULL };
	char sha[41];
	size_t n;
	int rc;

	items = pt_calloc(OUTCOME_MAX_ITEMS, sizeof(*items));
	if (!items)
		return PT_ENOMEM;
	outcome_parse_dest(&dest, text, strlen(text));
	n = outcome_parse_items(items, OUTCOME_MAX_ITEMS, text, strlen(text),
				!strcmp(kind, "bot"));
	if (!n) {
		outcome_notice_sha(text, strlen(text), sha);
		nr.sha = sha;
		rc = store_notice(o, p, &nr);
	} else {
		rc = store_items(o, p, &nr, items, n);
	}
	free(items);
	return rc;
}

/*
 * A patchwork-bot digest: each item names its posting by Message-ID
 * (target), never the thread the digest may hang in.  Items are keyed
 * OUTCOME_ITEM_DIGEST + i, apart from the numbered items of a notice.
 */
static int note_digest(struct outcome *o, const struct patch *p,
		       const char *text, int *done)
{
	struct outcome_digest_item *items;
	struct outcome_dest dest;
	struct notice_row nr = { "bot", &dest, 0, NULL, NULL, NULL };
	struct subject s;
	size_t n, i;
	int rc = 0;

	*done = 0;
	if (!p->author.email || strncmp(p->author.email, "patchwork-bot", 13))
		return 0;
	items = pt_calloc(OUTCOME_MAX_ITEMS, sizeof(*items));
	if (!items)
		return PT_ENOMEM;
	n = outcome_parse_digest(items, OUTCOME_MAX_ITEMS, text, strlen(text));
	*done = outcome_has_ci(text, strlen(text), "marked \"accepted\"");
	outcome_parse_dest(&dest, text, strlen(text));
	for (i = 0; !rc && i < n; i++) {
		memset(&s, 0, sizeof(s));
		rc = subject_parse(&s, items[i].subject,
				   strlen(items[i].subject));
		memcpy(dest.by, items[i].by, sizeof(dest.by));
		nr.item = OUTCOME_ITEM_DIGEST + (unsigned)i;
		nr.subject = s.clean ? s.clean : items[i].subject;
		nr.target = items[i].target;
		if (!rc)
			rc = store_notice(o, p, &nr);
		subject_clear(&s);
	}
	free(items);
	return rc;
}

/* Mark Brown's 'Applied "subject" to the spi tree' with its commit. */
static int note_quoted(struct outcome *o, const struct patch *p,
		       const char *text, int *done)
{
	struct outcome_dest dest;
	struct notice_row nr = { "reply", &dest, OUTCOME_ITEM_UNNUMBERED,
				 NULL,	  NULL,	 NULL };
	char sha[41], *subj;
	int rc;

	*done = 0;
	subj = outcome_applied_quote(p->subject.raw, text, sha);
	if (!subj)
		return 0;
	*done = 1;
	outcome_parse_dest(&dest, text, strlen(text));
	nr.subject = subj;
	nr.sha = sha;
	rc = store_notice(o, p, &nr);
	free(subj);
	return rc;
}

static int note_asks(struct outcome *o, const struct patch *p, const char *text)
{
	struct line l;
	size_t pos = 0, len = strlen(text);
	struct drow *r;
	int q = 0, asks = 0, nits = 0;

	while (outcome_next_line(text, len, &pos, &l)) {
		if (!l.n || l.s[0] == '>')
			continue;
		if (l.n >= 2 && !memcmp(l.s, "--", 2))
			break;
		q += l.s[l.n - 1] == '?';
		asks += outcome_has_ci(l.s, l.n, "please") ||
			outcome_has_ci(l.s, l.n, "should") ||
			outcome_has_ci(l.s, l.n, "could you") ||
			outcome_has_ci(l.s, l.n, "instead") ||
			outcome_has_ci(l.s, l.n, "would be better");
		nits += outcome_has_ci(l.s, l.n, "nit");
	}
	r = row_new(o, o->ask, "storing review asks");
	row_text(o, r, 1, p->message_id);
	row_int(r, 2, q);
	row_int(r, 3, asks);
	row_int(r, 4, nits);
	return row_done(o);
}

/*
 * b4 ty's list ("[1/2] subject" then "commit: <id>") is a notice in any
 * wording: "it has been applied to my local review-ilpo-next branch".
 */
static int lists_commits(const char *text, size_t len)
{
	struct outcome_item it[4];
	size_t n, i;

	n = outcome_parse_items(it, 4, text, len, 0);
	for (i = 0; i < n; i++)
		if (it[i].sha[0])
			return 1;
	return 0;
}

static int note_reply(struct outcome *o, const struct patch *p)
{
	struct buf text = BUF_INIT;
	struct thread_bot bot;
	int rc, quoted = 0;

	rc = thread_reply_body(&text, p);
	if (!rc && text.ptr)
		rc = note_digest(o, p, text.ptr, &quoted);
	if (!rc && text.ptr && !quoted)
		rc = note_quoted(o, p, text.ptr, &quoted);
	if (rc || quoted)
		goto out;
	if (text.ptr) /* not what an original pasted below it says */
		buf_truncate(&text, thread_reply_own_len(text.ptr));
	thread_detect_bot(p, text.ptr, &bot);
	if (bot.name && !strcmp(bot.name, "patchwork-bot")) {
		if (bot.verdict && !strcmp(bot.verdict, "applied"))
			rc = note_notice(o, p, "bot", text.ptr);
	} else if (!bot.name) {
		if (outcome_says_applied(text.ptr, text.len) ||
		    lists_commits(text.ptr, text.len))
			rc = note_notice(o, p, "reply", text.ptr);
		if (!rc)
			rc = note_asks(o, p, text.ptr);
	}
out:
	buf_free(&text);
	return rc;
}

static int note_other(struct outcome *o, const struct patch *p)
{
	struct buf text = BUF_INIT;
	int rc, done = 0;

	if (!p->author.email || strncmp(p->author.email, "patchwork-bot", 13))
		return 0;
	rc = thread_reply_body(&text, p);
	if (!rc && text.ptr)
		rc = note_digest(o, p, text.ptr, &done);
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
	case THREAD_OTHER: /* patchwork-bot digests start their thread */
		return note_other(o, p);
	default:
		return 0;
	}
}
