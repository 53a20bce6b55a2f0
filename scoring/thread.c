/*
 * thread.c - threading list mail into series, versions and review (see
 * thread.h).  A series is keyed by its thread root (the first entry of
 * References, else In-Reply-To, else the message itself), its version,
 * its size m and its author, so that the n/m patches of one posting meet
 * whatever order they arrive in, and a v2 posted in reply to v1 is still
 * its own series.  Replies attach to the nearest patch or cover letter
 * in their In-Reply-To/References chain; a reply that arrives before its
 * patch is kept with its references and adopted when the patch comes.
 * Each message is one transaction.  It owns the SQL of the threading
 * tables; it does not parse mail (patch_from_mail does) nor score.
 */
#include "thread.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "strmap.h"

#define THREAD_MAX_LEXICON (1u << 20)

struct thread {
	struct db *db;
	struct strmap lex;  /* word -> score * 1000 */
};

const char *thread_kind_name(enum thread_kind k)
{
	switch (k) {
	case THREAD_PATCH:
		return "patch";
	case THREAD_COVER:
		return "cover";
	case THREAD_REPLY:
		return "reply";
	default:
		return "other";
	}
}

void thread_result_clear(struct thread_result *r)
{
	if (!r)
		return;
	free(r->message_id);
	memset(r, 0, sizeof(*r));
}

/* ---- lexicon ------------------------------------------------------- */

static int lexicon_line(struct thread *t, const char *s, size_t n)
{
	struct strmap_entry *e;
	size_t w = 0;
	char *end;
	double v;
	int added, rc;

	while (w < n && !isspace((unsigned char)s[w]))
		w++;
	if (!w || s[0] == '#' || w == n)
		return 0;
	v = strtod(s + w, &end);
	if (end == s + w)
		return 0;
	rc = strmap_put(&e, &added, &t->lex, s, w);
	if (rc)
		return rc;
	e->v.i = (int64_t)(v * 1000.0);
	return 0;
}

static int lexicon_load(struct thread *t, const char *path)
{
	struct buf b = BUF_INIT;
	size_t i = 0, j;
	int rc;

	rc = pt_read_file(&b, path, THREAD_MAX_LEXICON);
	if (rc) {
		buf_free(&b);
		return pt_error_wrap(rc, "sentiment word list '%s'", path);
	}
	while (!rc && i < b.len) {
		for (j = i; j < b.len && b.ptr[j] != '\n'; j++)
			b.ptr[j] = (char)tolower((unsigned char)b.ptr[j]);
		rc = lexicon_line(t, b.ptr + i, j - i);
		i = j + 1;
	}
	buf_free(&b);
	return rc;
}

int thread_open(struct thread **out, struct db *db, const char *lexicon)
{
	struct thread *t;
	int rc = 0;

	*out = NULL;
	t = pt_calloc(1, sizeof(*t));
	if (!t)
		return PT_ENOMEM;
	t->db = db;
	if (lexicon)
		rc = lexicon_load(t, lexicon);
	if (rc) {
		thread_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void thread_free(struct thread *t)
{
	if (!t)
		return;
	strmap_free(&t->lex);
	free(t);
}

/* ---- text analysis ------------------------------------------------- */

static int line_quoted(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i < n && (s[i] == '>' || s[i] == '|');
}

static int line_blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	return 1;
}

/* "On Mon, 1 Jan 2024, Jane wrote:" introduces a quote; not a comment */
static int line_attribution(const char *s, size_t n)
{
	return n > 6 && (!strncmp(s + n - 6, "wrote:", 6) ||
			 (n > 7 && !strncmp(s + n - 7, "wrote: ", 7)));
}

static const char *const tested_phrases[] = {
	"tested on", "tested it on", "tested this on", "tested with",
	"tested it with", "tested this with", "tested against",
	"boot-tested", "boot tested", "runtime tested", "runtime-tested",
	"tested-on:", "i have tested", "i've tested", "we tested",
	"tested the series", "tested the patch",
};

static int has_tested_claim(const char *s, size_t n)
{
	char low[512];
	size_t i;

	if (n >= sizeof(low))
		n = sizeof(low) - 1;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[n] = '\0';
	if (strstr(low, "not tested") || strstr(low, "untested") ||
	    strstr(low, "tested-by:"))
		return 0;
	for (i = 0; i < sizeof(tested_phrases) / sizeof(*tested_phrases); i++)
		if (strstr(low, tested_phrases[i]))
			return 1;
	return 0;
}

static void score_words(struct thread *t, const char *s, size_t n,
			struct thread_text *o)
{
	struct strmap_entry *e;
	char w[64];
	size_t i = 0, k;

	if (!t || !t->lex.len)
		return;
	while (i < n) {
		while (i < n && !isalpha((unsigned char)s[i]))
			i++;
		for (k = 0; i < n && (isalpha((unsigned char)s[i]) ||
				      s[i] == '\'' || s[i] == '-');
		     i++)
			if (k < sizeof(w) - 1)
				w[k++] = (char)tolower((unsigned char)s[i]);
		while (k && (w[k - 1] == '\'' || w[k - 1] == '-'))
			k--;
		if (!k)
			continue;
		e = strmap_get(&t->lex, w, k);
		if (e) {
			o->sentiment_words++;
			o->sentiment_sum += (double)e->v.i / 1000.0;
		}
	}
}

void thread_analyse_text(struct thread *t, const char *text, size_t len,
			 struct thread_text *o)
{
	size_t i = 0, e;
	int seen_quote = 0, pending = 0;

	memset(o, 0, sizeof(*o));
	while (i < len) {
		const char *s = text + i;
		size_t n;

		for (e = i; e < len && text[e] != '\n'; e++)
			;
		n = e - i;
		if (n && s[n - 1] == '\r')
			n--;
		i = e + 1;
		if (n == 3 && !strncmp(s, "-- ", 3))
			break; /* signature */
		if (line_quoted(s, n)) {
			if (pending)
				o->inline_comments++;
			pending = 0;
			seen_quote = 1;
			continue;
		}
		if (line_blank(s, n) || line_attribution(s, n))
			continue;
		o->new_lines++;
		if (seen_quote)
			pending = 1;
		o->tested_claims += (unsigned)has_tested_claim(s, n);
		score_words(t, s, n, o);
	}
}

/* ---- test bots ----------------------------------------------------- */

static const char *find_ci(const char *hay, const char *needle)
{
	return hay ? strcasestr(hay, needle) : NULL;
}

/* Architectures named by "config: ARCH-..." / "arch: ARCH" lines. */
static void bot_archs(const char *text, const char *key, char *out,
		      size_t cap)
{
	const char *p = text;
	size_t used = 0, n;
	char arch[32];

	out[0] = '\0';
	while (p && (p = strcasestr(p, key))) {
		p += strlen(key);
		while (*p == ' ' || *p == '\t')
			p++;
		for (n = 0; n < sizeof(arch) - 1 &&
			    (isalnum((unsigned char)p[n]) || p[n] == '_');
		     n++)
			arch[n] = p[n];
		arch[n] = '\0';
		if (!n || strstr(out, arch))
			continue;
		if (used + n + 2 > cap)
			break;
		used += (size_t)snprintf(out + used, cap - used, "%s%s",
					 used ? " " : "", arch);
	}
}

void thread_detect_bot(const struct patch *p, const char *text,
		       struct thread_bot *o)
{
	const char *email = p->author.email ? p->author.email : "";
	const char *name = p->author.name ? p->author.name : "";
	const char *subj = p->subject.raw ? p->subject.raw : "";

	memset(o, 0, sizeof(*o));
	if (!strcmp(email, "lkp@intel.com") ||
	    find_ci(name, "kernel test robot")) {
		o->name = "0day";
		if (find_ci(text, "BUILD SUCCESS"))
			o->verdict = "success";
		else if (find_ci(text, "error:") || find_ci(subj, "error"))
			o->verdict = "error";
		else if (find_ci(text, "warning:") || find_ci(subj, "warning"))
			o->verdict = "warning";
		else if (find_ci(text, "regression"))
			o->verdict = "failure";
		else
			o->verdict = "report";
		bot_archs(text, "config:", o->arch, sizeof(o->arch));
	} else if (strstr(email, "kernelci")) {
		o->name = "kernelci";
		o->verdict = find_ci(text, "fail") || find_ci(subj, "regression")
				     ? "failure"
				     : "report";
		bot_archs(text, "arch:", o->arch, sizeof(o->arch));
	} else if (!strncmp(email, "syzbot", 6) && strstr(email, "syzkaller")) {
		o->name = "syzbot";
		o->verdict = find_ci(text, "did not trigger any issue")
				     ? "success"
				     : "failure";
		bot_archs(text, "arch:", o->arch, sizeof(o->arch));
	} else if (!strncmp(email, "patchwork-bot", 13)) {
		o->name = "patchwork-bot";
		o->verdict = find_ci(text, "was applied to") ||
					     find_ci(text, "were applied to")
				     ? "applied"
				     : "report";
	}
}

/* ---- SQL helpers --------------------------------------------------- */

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_id(sqlite3_stmt *st, int i, int64_t v)
{
	if (v)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int step_done(struct db *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	return db_error(db, what);
}

/* Run a statement that returns one integer (0 when no row). */
static int query_i64(struct db *db, sqlite3_stmt *st, int64_t *out,
		     const char *what)
{
	int rc = sqlite3_step(st);

	*out = 0;
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		return 0;
	}
	return rc == SQLITE_DONE ? 0 : db_error(db, what);
}

/* ---- classification ------------------------------------------------ */

static enum thread_kind classify(const struct patch *p)
{
	const struct subject *s = &p->subject;

	if (s->is_patch && !s->reply_depth && !s->is_pull)
		return s->number == 0 && s->total > 0 ? THREAD_COVER
						      : THREAD_PATCH;
	if (s->reply_depth || p->in_reply_to || p->nreferences)
		return THREAD_REPLY;
	return THREAD_OTHER;
}

static const char *thread_root(const struct patch *p)
{
	if (p->nreferences)
		return p->references[0];
	if (p->in_reply_to)
		return p->in_reply_to;
	return p->message_id;
}

/* ---- messages ------------------------------------------------------ */

static int insert_message(struct thread *t, const struct patch *p,
			  enum thread_kind kind, const char *source,
			  int *dup)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, t->db,
			"INSERT INTO messages (message_id, in_reply_to, "
			"list_id, author_name, author_email, date, subject, "
			"kind, source, received) VALUES (?,?,?,?,?,?,?,?,?,?) "
			"ON CONFLICT(message_id) DO NOTHING");
	if (rc)
		return rc;
	bind_str(st, 1, p->message_id);
	bind_str(st, 2, p->in_reply_to);
	bind_str(st, 3, p->list_id);
	bind_str(st, 4, p->author.name);
	bind_str(st, 5, p->author.email);
	sqlite3_bind_int64(st, 6, p->author_date);
	bind_str(st, 7, p->subject.raw);
	bind_str(st, 8, thread_kind_name(kind));
	bind_str(st, 9, source);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)time(NULL));
	rc = step_done(t->db, st, "storing message");
	*dup = !rc && sqlite3_changes(t->db->h) == 0;
	sqlite3_finalize(st);
	return rc;
}

static int insert_refs(struct thread *t, const struct patch *p)
{
	sqlite3_stmt *st;
	size_t i, n = p->nreferences;
	int rc, have_irt = 0;

	rc = db_prepare(&st, t->db,
			"INSERT OR IGNORE INTO message_refs (message_id, ref, "
			"pos) VALUES (?,?,?)");
	if (rc)
		return rc;
	for (i = 0; !rc && i <= n; i++) {
		const char *ref = i < n ? p->references[i] : p->in_reply_to;

		if (!ref || (i == n && have_irt))
			continue;
		if (p->in_reply_to && !strcmp(ref, p->in_reply_to))
			have_irt = 1;
		sqlite3_reset(st);
		bind_str(st, 1, p->message_id);
		bind_str(st, 2, ref);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)i);
		rc = step_done(t->db, st, "storing references");
	}
	sqlite3_finalize(st);
	return rc;
}

static int set_message_link(struct thread *t, const char *msgid,
			    int64_t series, int64_t patch)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, t->db,
			"UPDATE messages SET series_id = ?, patch_id = ? "
			"WHERE message_id = ?");
	if (rc)
		return rc;
	bind_id(st, 1, series);
	sqlite3_bind_int64(st, 2, patch);
	bind_str(st, 3, msgid);
	rc = step_done(t->db, st, "linking message");
	sqlite3_finalize(st);
	return rc;
}

/* ---- series -------------------------------------------------------- */

static int series_key(struct buf *key, const struct patch *p)
{
	unsigned total = p->subject.total ? p->subject.total : 1;

	return buf_addf(key, "%s|v%u|%u|%s", thread_root(p),
			p->subject.version ? p->subject.version : 1, total,
			p->author.email ? p->author.email : "");
}

static int series_get(struct thread *t, const struct patch *p, int64_t *id)
{
	struct buf key = BUF_INIT;
	sqlite3_stmt *st = NULL;
	int rc;

	rc = series_key(&key, p);
	if (!rc)
		rc = db_prepare(&st, t->db,
				"INSERT INTO series (thread_key, author_name, "
				"author_email, list_id, version, total, "
				"first_date, last_date) VALUES (?,?,?,?,?,?,?,?) "
				"ON CONFLICT(thread_key) DO UPDATE SET "
				"first_date = min(first_date, excluded.first_date),"
				" last_date = max(last_date, excluded.last_date) "
				"RETURNING id");
	if (rc)
		goto out;
	bind_str(st, 1, key.ptr);
	bind_str(st, 2, p->author.name);
	bind_str(st, 3, p->author.email);
	bind_str(st, 4, p->list_id);
	sqlite3_bind_int(st, 5, (int)(p->subject.version ? p->subject.version
							 : 1));
	sqlite3_bind_int(st, 6, (int)(p->subject.total ? p->subject.total : 1));
	sqlite3_bind_int64(st, 7, p->author_date);
	sqlite3_bind_int64(st, 8, p->author_date);
	rc = query_i64(t->db, st, id, "storing series");
out:
	sqlite3_finalize(st);
	buf_free(&key);
	return rc;
}

static int series_set_subject(struct thread *t, int64_t id,
			      const struct patch *p, int is_cover)
{
	sqlite3_stmt *st;
	char *norm;
	int rc;

	norm = subject_normalise(p->subject.clean ? p->subject.clean : "");
	if (!norm)
		return PT_ENOMEM;
	/* a cover letter's subject wins over a patch's */
	rc = db_prepare(&st, t->db,
			is_cover ? "UPDATE series SET subject = ?, "
				   "norm_subject = ?, cover_msgid = ? WHERE id = ?"
				 : "UPDATE series SET subject = ?, norm_subject = ? "
				   "WHERE id = ? AND cover_msgid IS NULL");
	if (!rc) {
		bind_str(st, 1, p->subject.clean);
		bind_str(st, 2, norm);
		if (is_cover) {
			bind_str(st, 3, p->message_id);
			sqlite3_bind_int64(st, 4, id);
		} else {
			sqlite3_bind_int64(st, 3, id);
		}
		rc = step_done(t->db, st, "storing series subject");
		sqlite3_finalize(st);
	}
	free(norm);
	return rc;
}

static int series_count(struct thread *t, int64_t id, int *complete)
{
	sqlite3_stmt *st;
	int64_t c = 0;
	int rc;

	rc = db_prepare(&st, t->db,
			"UPDATE series SET received = (SELECT count(DISTINCT "
			"number) FROM patches WHERE series_id = ?1 AND number "
			">= 1 AND number <= series.total), complete = ((SELECT "
			"count(DISTINCT number) FROM patches WHERE series_id = "
			"?1 AND number >= 1 AND number <= series.total) >= "
			"total) WHERE id = ?1 RETURNING complete");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	rc = query_i64(t->db, st, &c, "counting series");
	sqlite3_finalize(st);
	*complete = (int)c;
	return rc;
}

/* ---- version links ------------------------------------------------- */

static int link_insert(struct thread *t, int64_t id, int64_t prev,
		       const char *reason)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, t->db,
			"INSERT OR IGNORE INTO series_versions (series_id, "
			"prev_series_id, reason) VALUES (?,?,?)");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, prev);
	bind_str(st, 3, reason);
	rc = step_done(t->db, st, "linking versions");
	sqlite3_finalize(st);
	return rc;
}

/* The series of message msgid when its version is below ver. */
static int series_of_msg(struct thread *t, const char *msgid, int ver,
			 int64_t self, int64_t *out)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, t->db,
			"SELECT s.id FROM messages m JOIN series s ON s.id = "
			"m.series_id WHERE m.message_id = ? AND s.version < ? "
			"AND s.id != ? AND m.kind IN ('patch', 'cover')");
	if (rc)
		return rc;
	bind_str(st, 1, msgid);
	sqlite3_bind_int(st, 2, ver);
	sqlite3_bind_int64(st, 3, self);
	rc = query_i64(t->db, st, out, "finding a version");
	sqlite3_finalize(st);
	return rc;
}

/* Message-ids written in a cover letter: lore links and <id> forms. */
static int link_from_text(struct thread *t, const char *text, int ver,
			  int64_t self, int64_t *prev)
{
	const char *p = text, *s, *e;
	char id[512];
	size_t n;
	int rc = 0;

	*prev = 0;
	while (!rc && !*prev && p && (p = strchr(p, '@'))) {
		for (s = p; s > text && !strchr(" \t\n</\"(", s[-1]); s--)
			;
		for (e = p; *e && !strchr(" \t\n>/\")", *e); e++)
			;
		p = e;
		n = (size_t)(e - s);
		if (n < 3 || n >= sizeof(id))
			continue;
		memcpy(id, s, n);
		id[n] = '\0';
		rc = series_of_msg(t, id, ver, self, prev);
	}
	return rc;
}

static int link_by_subject(struct thread *t, int64_t self, int ver,
			   const char *email, int64_t *prev)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, t->db,
			"SELECT s.id FROM series s WHERE s.author_email = ?1 "
			"AND s.version < ?2 AND s.id != ?3 AND (s.norm_subject "
			"= (SELECT norm_subject FROM series WHERE id = ?3) OR "
			"EXISTS (SELECT 1 FROM patches a JOIN patches b ON "
			"a.norm_subject = b.norm_subject WHERE a.series_id = "
			"s.id AND b.series_id = ?3)) ORDER BY s.version DESC, "
			"s.first_date DESC LIMIT 1");
	if (rc)
		return rc;
	bind_str(st, 1, email);
	sqlite3_bind_int(st, 2, ver);
	sqlite3_bind_int64(st, 3, self);
	rc = query_i64(t->db, st, prev, "finding a version");
	sqlite3_finalize(st);
	return rc;
}

static int link_patches(struct thread *t, int64_t self, int64_t prev)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, t->db,
			"UPDATE patches SET prev_patch_id = (SELECT o.id FROM "
			"patches o WHERE o.series_id = ?2 AND o.norm_subject "
			"= patches.norm_subject ORDER BY o.id LIMIT 1) WHERE "
			"series_id = ?1 AND prev_patch_id IS NULL");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, self);
	sqlite3_bind_int64(st, 2, prev);
	rc = step_done(t->db, st, "linking patch versions");
	sqlite3_finalize(st);
	return rc;
}

static int existing_link(struct thread *t, int64_t self, int64_t *prev)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, t->db,
			"SELECT prev_series_id FROM series_versions WHERE "
			"series_id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, self);
	rc = query_i64(t->db, st, prev, "reading versions");
	sqlite3_finalize(st);
	return rc;
}

/* Try the three ways a new version names its predecessor. */
static int link_versions(struct thread *t, int64_t self,
			 const struct patch *p, const char *text,
			 int64_t *prev)
{
	int ver = (int)(p->subject.version ? p->subject.version : 1);
	const char *reason = NULL;
	size_t i;
	int rc;

	rc = existing_link(t, self, prev);
	if (rc || *prev || ver < 2)
		goto out;
	for (i = 0; !rc && !*prev && i < p->nreferences; i++)
		rc = series_of_msg(t, p->references[i], ver, self, prev);
	if (!rc && !*prev && p->in_reply_to)
		rc = series_of_msg(t, p->in_reply_to, ver, self, prev);
	reason = "in-reply-to";
	if (!rc && !*prev && text) {
		rc = link_from_text(t, text, ver, self, prev);
		reason = "cover-link";
	}
	if (!rc && !*prev) {
		rc = link_by_subject(t, self, ver, p->author.email, prev);
		reason = "subject";
	}
	if (!rc && *prev)
		rc = link_insert(t, self, *prev, reason);
out:
	if (!rc && *prev)
		rc = link_patches(t, self, *prev);
	return rc;
}

/* ---- patches ------------------------------------------------------- */

static int insert_patch(struct thread *t, const struct patch *p,
			int64_t series, int64_t *id)
{
	sqlite3_stmt *st;
	char *norm;
	int rc;

	norm = subject_normalise(p->subject.clean ? p->subject.clean : "");
	if (!norm)
		return PT_ENOMEM;
	rc = db_prepare(&st, t->db,
			"INSERT INTO patches (message_id, series_id, number, "
			"total, version, subject, norm_subject, author_name, "
			"author_email, date, files, added, removed) VALUES "
			"(?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id");
	if (!rc) {
		bind_str(st, 1, p->message_id);
		sqlite3_bind_int64(st, 2, series);
		sqlite3_bind_int(st, 3, (int)(p->subject.number
						      ? p->subject.number
						      : 1));
		sqlite3_bind_int(st, 4, (int)(p->subject.total
						      ? p->subject.total
						      : 1));
		sqlite3_bind_int(st, 5, (int)(p->subject.version
						      ? p->subject.version
						      : 1));
		bind_str(st, 6, p->subject.clean);
		bind_str(st, 7, norm);
		bind_str(st, 8, p->author.name);
		bind_str(st, 9, p->author.email);
		sqlite3_bind_int64(st, 10, p->author_date);
		sqlite3_bind_int64(st, 11, (sqlite3_int64)p->nfiles);
		sqlite3_bind_int64(st, 12, p->added);
		sqlite3_bind_int64(st, 13, p->removed);
		rc = query_i64(t->db, st, id, "storing patch");
		sqlite3_finalize(st);
	}
	free(norm);
	return rc;
}

/* ---- replies ------------------------------------------------------- */

struct target {
	int64_t series;
	int64_t patch;  /* 0: the cover letter, i.e. the whole series */
};

/* What message msgid is in the threading: a patch, a cover, a reply. */
static int target_of(struct thread *t, const char *msgid, struct target *o,
		     int *found)
{
	sqlite3_stmt *st;
	int rc;

	*found = 0;
	rc = db_prepare(&st, t->db,
			"SELECT series_id, patch_id FROM messages WHERE "
			"message_id = ? AND series_id IS NOT NULL");
	if (rc)
		return rc;
	bind_str(st, 1, msgid);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		o->series = sqlite3_column_int64(st, 0);
		o->patch = sqlite3_column_int64(st, 1);
		*found = 1;
		rc = 0;
	} else {
		rc = rc == SQLITE_DONE ? 0 : db_error(t->db, "finding parent");
	}
	sqlite3_finalize(st);
	return rc;
}

/* Nearest known ancestor: In-Reply-To, then References newest first. */
static int resolve_refs(struct thread *t, char **refs, size_t nrefs,
			const char *irt, struct target *o)
{
	size_t i;
	int rc = 0, found = 0;

	memset(o, 0, sizeof(*o));
	if (irt)
		rc = target_of(t, irt, o, &found);
	for (i = nrefs; !rc && !found && i > 0; i--)
		rc = target_of(t, refs[i - 1], o, &found);
	return rc;
}

static const struct {
	const char *key;
	const char *kind;
} review_keys[] = {
	{ "reviewed-by:", "Reviewed-by" },
	{ "acked-by:", "Acked-by" },
	{ "tested-by:", "Tested-by" },
	{ "nacked-by:", "Nacked-by" },
	{ "reported-by:", "Reported-by" },
	{ "suggested-by:", "Suggested-by" },
	{ "reviewed-and-tested-by:", "Reviewed-by" },
};

static void split_person(const char *v, size_t n, struct buf *name,
			 struct buf *email)
{
	const char *lt = memchr(v, '<', n), *gt;
	size_t k;

	buf_reset(name);
	buf_reset(email);
	if (!lt || !(gt = memchr(lt, '>', n - (size_t)(lt - v)))) {
		buf_add(email, v, n);
		buf_rtrim(email);
		return;
	}
	for (k = (size_t)(lt - v); k && isspace((unsigned char)v[k - 1]);
	     k--)
		;
	buf_add(name, v, k);
	for (k = 1; lt + k < gt; k++)
		buf_addch(email, tolower((unsigned char)lt[k]));
}

static int store_review(struct thread *t, sqlite3_stmt *st,
			const struct patch *p, const struct target *tg,
			const char *kind, const char *v, size_t n)
{
	struct buf name = BUF_INIT, email = BUF_INIT;
	int rc;

	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	split_person(v, n, &name, &email);
	sqlite3_reset(st);
	bind_str(st, 1, p->message_id);
	bind_id(st, 2, tg->series);
	sqlite3_bind_int64(st, 3, tg->patch);
	bind_str(st, 4, kind);
	bind_str(st, 5, name.len ? name.ptr : NULL);
	bind_str(st, 6, email.ptr);
	sqlite3_bind_int64(st, 7, p->author_date);
	rc = step_done(t->db, st, "storing review");
	buf_free(&name);
	buf_free(&email);
	return rc;
}

/* Trailers given on the list: "Reviewed-by: ..." lines not quoted. */
static int store_reviews(struct thread *t, const struct patch *p,
			 const char *text, const struct target *tg)
{
	sqlite3_stmt *st;
	const char *s = text, *e;
	size_t i, k, n;
	int rc;

	rc = db_prepare(&st, t->db,
			"INSERT OR IGNORE INTO mail_reviews (reply_msgid, "
			"series_id, patch_id, kind, name, email, date) VALUES "
			"(?,?,?,?,?,?,?)");
	if (rc)
		return rc;
	for (; !rc && s && *s; s = *e ? e + 1 : e) {
		e = strchr(s, '\n');
		if (!e)
			e = s + strlen(s);
		for (i = 0; s + i < e && (s[i] == ' ' || s[i] == '\t'); i++)
			;
		for (k = 0; k < sizeof(review_keys) / sizeof(*review_keys);
		     k++) {
			n = strlen(review_keys[k].key);
			if ((size_t)(e - s) - i <= n ||
			    strncasecmp(s + i, review_keys[k].key, n))
				continue;
			i += n;
			while (s + i < e && s[i] == ' ')
				i++;
			rc = store_review(t, st, p, tg, review_keys[k].kind,
					  s + i, (size_t)(e - s) - i);
			break;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

static int reply_body(struct buf *out, const struct patch *p)
{
	int rc = 0;

	if (p->message)
		rc = buf_addstr(out, p->message);
	if (!rc && p->notes)
		rc = buf_addf(out, "\n---\n%s", p->notes);
	return rc;
}

static int insert_reply(struct thread *t, const struct patch *p,
			const char *text, const struct target *tg)
{
	struct thread_text tx;
	struct thread_bot bot;
	sqlite3_stmt *st;
	int rc;

	thread_analyse_text(t, text, strlen(text), &tx);
	thread_detect_bot(p, text, &bot);
	rc = db_prepare(&st, t->db,
			"INSERT OR IGNORE INTO replies (message_id, series_id, "
			"patch_id, author_name, author_email, date, lines, "
			"inline_comments, tested_claims, sentiment, bot, "
			"bot_verdict, bot_arch) VALUES (?,?,?,?,?,?,?,?,?,?,?,"
			"?,?)");
	if (rc)
		return rc;
	bind_str(st, 1, p->message_id);
	bind_id(st, 2, tg->series);
	if (tg->series)
		sqlite3_bind_int64(st, 3, tg->patch);
	else
		sqlite3_bind_null(st, 3);
	bind_str(st, 4, p->author.name);
	bind_str(st, 5, p->author.email);
	sqlite3_bind_int64(st, 6, p->author_date);
	sqlite3_bind_int(st, 7, (int)tx.new_lines);
	sqlite3_bind_int(st, 8, (int)tx.inline_comments);
	sqlite3_bind_int(st, 9, (int)tx.tested_claims);
	sqlite3_bind_double(st, 10, tx.sentiment_words
					    ? tx.sentiment_sum /
						      tx.sentiment_words
					    : 0.0);
	bind_str(st, 11, bot.name);
	bind_str(st, 12, bot.verdict);
	bind_str(st, 13, bot.arch[0] ? bot.arch : NULL);
	rc = step_done(t->db, st, "storing reply");
	sqlite3_finalize(st);
	return rc;
}

static int add_reply(struct thread *t, const struct patch *p,
		     struct thread_result *res)
{
	struct buf text = BUF_INIT;
	struct target tg;
	int rc;

	rc = resolve_refs(t, p->references, p->nreferences, p->in_reply_to,
			  &tg);
	if (!rc)
		rc = reply_body(&text, p);
	if (!rc)
		rc = insert_reply(t, p, text.ptr, &tg);
	if (!rc)
		rc = store_reviews(t, p, text.ptr, &tg);
	if (!rc && tg.series)
		rc = set_message_link(t, p->message_id, tg.series, tg.patch);
	res->series_id = tg.series;
	res->patch_id = tg.patch;
	buf_free(&text);
	return rc;
}

/* ---- adopting replies that came first ------------------------------ */

static int load_refs(struct thread *t, const char *msgid, char ***refs,
		     size_t *n)
{
	sqlite3_stmt *st;
	char **v = NULL, **nv;
	int rc;

	*refs = NULL;
	*n = 0;
	rc = db_prepare(&st, t->db,
			"SELECT ref FROM message_refs WHERE message_id = ? "
			"ORDER BY pos");
	if (rc)
		return rc;
	bind_str(st, 1, msgid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		nv = pt_reallocarray(v, *n + 1, sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[*n] = pt_strdup((const char *)sqlite3_column_text(st, 0));
		if (!v[*n])
			break;
		(*n)++;
	}
	rc = rc == SQLITE_DONE ? 0 : rc == SQLITE_ROW ? PT_ENOMEM
						     : db_error(t->db, "refs");
	sqlite3_finalize(st);
	*refs = v;
	return rc;
}

static int relink_reply(struct thread *t, const char *msgid,
			const struct target *tg)
{
	static const char *const sql[] = {
		"UPDATE replies SET series_id = ?1, patch_id = ?2 WHERE "
		"message_id = ?3",
		"UPDATE mail_reviews SET series_id = ?1, patch_id = ?2 WHERE "
		"reply_msgid = ?3",
		"UPDATE messages SET series_id = ?1, patch_id = ?2 WHERE "
		"message_id = ?3",
	};
	sqlite3_stmt *st;
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < 3; i++) {
		rc = db_prepare(&st, t->db, sql[i]);
		if (rc)
			break;
		sqlite3_bind_int64(st, 1, tg->series);
		sqlite3_bind_int64(st, 2, tg->patch);
		bind_str(st, 3, msgid);
		rc = step_done(t->db, st, "adopting a reply");
		sqlite3_finalize(st);
	}
	return rc;
}

static int adopt_one(struct thread *t, const char *msgid, size_t *done)
{
	struct target tg;
	char **refs = NULL;
	size_t n = 0, i;
	int rc;

	rc = load_refs(t, msgid, &refs, &n);
	/* message_refs holds In-Reply-To last; resolve newest first */
	if (!rc)
		rc = resolve_refs(t, refs, n, NULL, &tg);
	if (!rc && tg.series) {
		rc = relink_reply(t, msgid, &tg);
		(*done)++;
	}
	for (i = 0; i < n; i++)
		free(refs[i]);
	free(refs);
	return rc;
}

/*
 * Replies stored before msgid (a patch or cover) arrived: orphans, and
 * replies held by the cover letter until the patch they answer came.
 */
static int adopt_orphans(struct thread *t, const char *msgid, size_t *done)
{
	sqlite3_stmt *st;
	char **ids = NULL, **nv;
	size_t n = 0, i;
	int rc;

	rc = db_prepare(&st, t->db,
			"SELECT DISTINCT r.message_id FROM message_refs mr "
			"JOIN replies r ON r.message_id = mr.message_id WHERE "
			"mr.ref = ? AND (r.series_id IS NULL OR "
			"r.patch_id = 0)");
	if (rc)
		return rc;
	bind_str(st, 1, msgid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		nv = pt_reallocarray(ids, n + 1, sizeof(*ids));
		if (!nv)
			break;
		ids = nv;
		ids[n] = pt_strdup((const char *)sqlite3_column_text(st, 0));
		if (!ids[n])
			break;
		n++;
	}
	rc = rc == SQLITE_DONE ? 0 : rc == SQLITE_ROW ? PT_ENOMEM
						     : db_error(t->db, "orphans");
	sqlite3_finalize(st);
	for (i = 0; !rc && i < n; i++)
		rc = adopt_one(t, ids[i], done);
	for (i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	return rc;
}

/* ---- the entry points ---------------------------------------------- */

static int add_series_member(struct thread *t, const struct patch *p,
			     enum thread_kind kind, struct thread_result *res)
{
	struct buf text = BUF_INIT;
	int64_t series = 0, patch = 0, prev = 0;
	int rc, complete = 0;

	rc = series_get(t, p, &series);
	if (!rc && kind == THREAD_COVER)
		rc = series_set_subject(t, series, p, 1);
	else if (!rc && (p->subject.number <= 1 || p->subject.total <= 1))
		rc = series_set_subject(t, series, p, 0);
	if (!rc && kind == THREAD_PATCH)
		rc = insert_patch(t, p, series, &patch);
	if (!rc)
		rc = set_message_link(t, p->message_id, series, patch);
	if (!rc)
		rc = series_count(t, series, &complete);
	if (!rc && kind == THREAD_COVER)
		rc = reply_body(&text, p);
	if (!rc)
		rc = link_versions(t, series, p,
				   kind == THREAD_COVER ? text.ptr : NULL,
				   &prev);
	if (!rc)
		rc = adopt_orphans(t, p->message_id, &res->attached);
	res->series_id = series;
	res->patch_id = patch;
	res->complete = complete;
	res->prev_series_id = prev;
	buf_free(&text);
	return rc;
}

static int add_in_txn(struct thread *t, const struct patch *p,
		      const char *source, struct thread_result *res)
{
	int rc, dup = 0;

	res->kind = classify(p);
	rc = insert_message(t, p, res->kind, source, &dup);
	if (rc || dup) {
		res->duplicate = dup;
		return rc;
	}
	rc = insert_refs(t, p);
	if (rc)
		return rc;
	switch (res->kind) {
	case THREAD_PATCH:
	case THREAD_COVER:
		return add_series_member(t, p, res->kind, res);
	case THREAD_REPLY:
		return add_reply(t, p, res);
	default:
		return 0;
	}
}

int thread_add_patch(struct thread *t, const struct patch *p,
		     const char *source, struct thread_result *res)
{
	struct thread_result dummy;
	int rc;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	if (!p->message_id || !*p->message_id)
		return pt_error_set(PT_EINVAL, "message from '%s' has no "
				    "Message-ID", source ? source : "?");
	res->message_id = pt_strdup(p->message_id);
	if (!res->message_id)
		return PT_ENOMEM;
	rc = db_begin(t->db);
	if (rc)
		goto out;
	rc = add_in_txn(t, p, source, res);
	if (!rc)
		rc = db_commit(t->db);
	if (rc)
		db_rollback(t->db);
out:
	if (res == &dummy)
		thread_result_clear(res);
	return rc;
}

int thread_add_mail(struct thread *t, const char *raw, size_t len,
		    const char *source, struct thread_result *res)
{
	struct patch *p = NULL;
	int rc;

	if (res)
		memset(res, 0, sizeof(*res));
	rc = patch_from_mail(&p, raw, len);
	if (rc)
		return pt_error_wrap(rc, "message from '%s'",
				     source ? source : "?");
	rc = thread_add_patch(t, p, source, res);
	patch_free(p);
	return rc;
}

/* ---- reading back -------------------------------------------------- */

int thread_find_patch(struct thread *t, const char *message_id,
		      int64_t *patch_id, int64_t *series_id)
{
	sqlite3_stmt *st;
	int rc;

	*patch_id = *series_id = 0;
	rc = db_prepare(&st, t->db,
			"SELECT id, series_id FROM patches WHERE message_id = ?");
	if (rc)
		return rc;
	bind_str(st, 1, message_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*patch_id = sqlite3_column_int64(st, 0);
		*series_id = sqlite3_column_int64(st, 1);
		rc = 0;
	} else if (rc == SQLITE_DONE) {
		rc = pt_error_set(PT_ENOTFOUND, "no patch '%s'", message_id);
	} else {
		rc = db_error(t->db, "finding patch");
	}
	sqlite3_finalize(st);
	return rc;
}

/* Replies on the patch itself or on its series' cover letter. */
#define ON_PATCH " (patch_id = ?1 OR (series_id = ?2 AND patch_id = 0)) "

static int feat_replies(struct thread *t, int64_t pid, int64_t sid,
			const char *author, struct thread_features *o)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, t->db,
			"SELECT count(*), count(DISTINCT CASE WHEN bot IS NULL "
			"AND author_email != ?3 THEN author_email END), "
			"coalesce(sum(inline_comments), 0), "
			"coalesce(sum(tested_claims), 0), "
			"coalesce(avg(CASE WHEN sentiment != 0 THEN sentiment "
			"END), 0), count(bot), count(CASE WHEN bot_verdict IN "
			"('failure', 'error', 'warning') THEN 1 END) FROM "
			"replies WHERE" ON_PATCH);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, pid);
	sqlite3_bind_int64(st, 2, sid);
	bind_str(st, 3, author ? author : "");
	if (sqlite3_step(st) == SQLITE_ROW) {
		o->replies = (unsigned)sqlite3_column_int(st, 0);
		o->reviewers = (unsigned)sqlite3_column_int(st, 1);
		o->inline_comments = (unsigned)sqlite3_column_int(st, 2);
		o->tested_claims = (unsigned)sqlite3_column_int(st, 3);
		o->sentiment = sqlite3_column_double(st, 4);
		o->bot_reports = (unsigned)sqlite3_column_int(st, 5);
		o->bot_failures = (unsigned)sqlite3_column_int(st, 6);
	} else {
		rc = db_error(t->db, "reading replies");
	}
	sqlite3_finalize(st);
	return rc;
}

static int feat_archs(struct thread *t, int64_t pid, int64_t sid,
		      struct thread_features *o)
{
	sqlite3_stmt *st;
	size_t used = 0;
	int rc;

	rc = db_prepare(&st, t->db,
			"SELECT DISTINCT bot_arch FROM replies WHERE bot_arch "
			"IS NOT NULL AND" ON_PATCH);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, pid);
	sqlite3_bind_int64(st, 2, sid);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *a = (const char *)sqlite3_column_text(st, 0);
		size_t n = strlen(a);

		if (used + n + 2 > sizeof(o->bot_archs))
			break;
		used += (size_t)snprintf(o->bot_archs + used,
					 sizeof(o->bot_archs) - used, "%s%s",
					 used ? " " : "", a);
	}
	sqlite3_finalize(st);
	return 0;
}

static int feat_reviews(struct thread *t, int64_t pid, int64_t sid,
			struct thread_features *o)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, t->db,
			"SELECT kind, count(DISTINCT email) FROM mail_reviews "
			"WHERE" ON_PATCH "GROUP BY kind");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, pid);
	sqlite3_bind_int64(st, 2, sid);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		unsigned n = (unsigned)sqlite3_column_int(st, 1);

		if (!strcmp(k, "Reviewed-by"))
			o->reviewed_by = n;
		else if (!strcmp(k, "Acked-by"))
			o->acked_by = n;
		else if (!strcmp(k, "Tested-by"))
			o->tested_by = n;
		else if (!strcmp(k, "Nacked-by"))
			o->nacked_by = n;
	}
	sqlite3_finalize(st);
	return 0;
}

static int feat_versions(struct thread *t, int64_t sid,
			 struct thread_features *o)
{
	sqlite3_stmt *st;
	int64_t n = 0;
	int rc;

	rc = db_prepare(&st, t->db,
			"WITH RECURSIVE chain(id, depth) AS (SELECT ?1, 0 "
			"UNION SELECT v.prev_series_id, depth + 1 FROM "
			"series_versions v JOIN chain c ON v.series_id = c.id "
			"WHERE depth < 100) SELECT max(depth) FROM chain");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, sid);
	rc = query_i64(t->db, st, &n, "reading versions");
	sqlite3_finalize(st);
	o->versions_before = (unsigned)n;
	return rc;
}

int thread_patch_features(struct thread *t, int64_t patch_id,
			  struct thread_features *o)
{
	sqlite3_stmt *st;
	char *author = NULL;
	int64_t sid = 0;
	int rc;

	memset(o, 0, sizeof(*o));
	rc = db_prepare(&st, t->db,
			"SELECT series_id, version, author_email FROM patches "
			"WHERE id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, patch_id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		sid = sqlite3_column_int64(st, 0);
		o->version = (unsigned)sqlite3_column_int(st, 1);
		if (sqlite3_column_text(st, 2))
			author = pt_strdup(
				(const char *)sqlite3_column_text(st, 2));
	} else {
		rc = pt_error_set(PT_ENOTFOUND, "no patch %lld",
				  (long long)patch_id);
	}
	sqlite3_finalize(st);
	if (!rc)
		rc = feat_replies(t, patch_id, sid, author, o);
	if (!rc)
		rc = feat_archs(t, patch_id, sid, o);
	if (!rc)
		rc = feat_reviews(t, patch_id, sid, o);
	if (!rc)
		rc = feat_versions(t, sid, o);
	free(author);
	return rc;
}
