/*
 * thread.c - threading list mail into series, versions and review (see
 * thread.h).  A series is keyed by its thread root (the first entry of
 * References, else In-Reply-To, else the message itself), its version,
 * its size m and its author, so that the n/m patches of one posting meet
 * whatever order they arrive in, and a v2 posted in reply to v1 is still
 * its own series.  Replies attach to the nearest patch or cover letter
 * in their In-Reply-To/References chain; a reply that arrives before its
 * patch is kept with its references and adopted when the patch comes.
 * Each message is one transaction, or a savepoint when the caller holds
 * one (the archive import batches messages that way).  Its statements
 * are prepared once per struct thread and kept: preparing them anew for
 * each message used to cost more than running them.  It owns the SQL of
 * the threading tables; it does not parse mail (patch_from_mail does)
 * nor score.
 */
#include "scoring/lists/thread.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "scoring/util/strmap.h"

#define THREAD_MAX_LEXICON (1u << 20)

/* ---- statements ---------------------------------------------------- */

enum thread_sql {
	SQL_INSERT_MESSAGE,
	SQL_INSERT_REF,
	SQL_LINK_MESSAGE,
	SQL_SERIES_GET,
	SQL_SUBJECT_COVER,
	SQL_SUBJECT_PATCH,
	SQL_SERIES_COUNT,
	SQL_VERSION_INSERT,
	SQL_VERSION_OF_MSG,
	SQL_VERSION_BY_SUBJECT,
	SQL_VERSION_PATCHES,
	SQL_VERSION_EXISTING,
	SQL_INSERT_PATCH,
	SQL_TARGET_OF,
	SQL_INSERT_REVIEW,
	SQL_INSERT_REPLY,
	SQL_LOAD_REFS,
	SQL_RELINK_REPLY,   /* these three in this order: relink_reply() */
	SQL_RELINK_REVIEWS,
	SQL_RELINK_MESSAGE,
	SQL_ORPHANS,
	SQL_FIND_PATCH,
	SQL_FEAT_PATCH,
	SQL_FEAT_REPLIES,
	SQL_FEAT_ARCHS,
	SQL_FEAT_REVIEWS,
	SQL_FEAT_VERSIONS,
	SQL_COUNT
};

/* Replies on the patch itself or on its series' cover letter. */
#define ON_PATCH " (patch_id = ?1 OR (series_id = ?2 AND patch_id = 0)) "

static const char *const thread_sql[SQL_COUNT] = {
	[SQL_INSERT_MESSAGE] =
		"INSERT INTO messages (message_id, in_reply_to, list_id, "
		"author_name, author_email, date, subject, kind, source, "
		"received) VALUES (?,?,?,?,?,?,?,?,?,?) "
		"ON CONFLICT(message_id) DO NOTHING",
	[SQL_INSERT_REF] =
		"INSERT OR IGNORE INTO message_refs (message_id, ref, pos) "
		"VALUES (?,?,?)",
	[SQL_LINK_MESSAGE] =
		"UPDATE messages SET series_id = ?, patch_id = ? "
		"WHERE message_id = ?",
	[SQL_SERIES_GET] =
		"INSERT INTO series (thread_key, author_name, author_email, "
		"list_id, version, total, first_date, last_date) VALUES "
		"(?,?,?,?,?,?,?,?) ON CONFLICT(thread_key) DO UPDATE SET "
		"first_date = min(first_date, excluded.first_date), "
		"last_date = max(last_date, excluded.last_date) RETURNING id",
	/* a cover letter's subject wins over a patch's */
	[SQL_SUBJECT_COVER] =
		"UPDATE series SET subject = ?, norm_subject = ?, "
		"cover_msgid = ? WHERE id = ?",
	[SQL_SUBJECT_PATCH] =
		"UPDATE series SET subject = ?, norm_subject = ? "
		"WHERE id = ? AND cover_msgid IS NULL",
	[SQL_SERIES_COUNT] =
		"UPDATE series SET received = (SELECT count(DISTINCT number) "
		"FROM patches WHERE series_id = ?1 AND number >= 1 AND number "
		"<= series.total), complete = ((SELECT count(DISTINCT number) "
		"FROM patches WHERE series_id = ?1 AND number >= 1 AND number "
		"<= series.total) >= total) WHERE id = ?1 RETURNING complete",
	[SQL_VERSION_INSERT] =
		"INSERT OR IGNORE INTO series_versions (series_id, "
		"prev_series_id, reason) VALUES (?,?,?)",
	/* the series of message ?1 when its version is below ?2 */
	[SQL_VERSION_OF_MSG] =
		"SELECT s.id FROM messages m JOIN series s ON s.id = "
		"m.series_id WHERE m.message_id = ? AND s.version < ? "
		"AND s.id != ? AND m.kind IN ('patch', 'cover')",
	[SQL_VERSION_BY_SUBJECT] =
		"SELECT s.id FROM series s WHERE s.author_email = ?1 "
		"AND s.version < ?2 AND s.id != ?3 AND (s.norm_subject "
		"= (SELECT norm_subject FROM series WHERE id = ?3) OR "
		"EXISTS (SELECT 1 FROM patches a JOIN patches b ON "
		"a.norm_subject = b.norm_subject WHERE a.series_id = "
		"s.id AND b.series_id = ?3)) ORDER BY s.version DESC, "
		"s.first_date DESC LIMIT 1",
	[SQL_VERSION_PATCHES] =
		"UPDATE patches SET prev_patch_id = (SELECT o.id FROM "
		"patches o WHERE o.series_id = ?2 AND o.norm_subject "
		"= patches.norm_subject ORDER BY o.id LIMIT 1) WHERE "
		"series_id = ?1 AND prev_patch_id IS NULL",
	[SQL_VERSION_EXISTING] =
		"SELECT prev_series_id FROM series_versions WHERE "
		"series_id = ?",
	[SQL_INSERT_PATCH] =
		"INSERT INTO patches (message_id, series_id, number, total, "
		"version, subject, norm_subject, author_name, author_email, "
		"date, files, added, removed) VALUES "
		"(?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
	[SQL_TARGET_OF] =
		"SELECT series_id, patch_id FROM messages WHERE "
		"message_id = ? AND series_id IS NOT NULL",
	[SQL_INSERT_REVIEW] =
		"INSERT OR IGNORE INTO mail_reviews (reply_msgid, series_id, "
		"patch_id, kind, name, email, date) VALUES (?,?,?,?,?,?,?)",
	[SQL_INSERT_REPLY] =
		"INSERT OR IGNORE INTO replies (message_id, series_id, "
		"patch_id, author_name, author_email, date, lines, "
		"inline_comments, tested_claims, sentiment, bot, "
		"bot_verdict, bot_arch) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[SQL_LOAD_REFS] =
		"SELECT ref FROM message_refs WHERE message_id = ? "
		"ORDER BY pos",
	[SQL_RELINK_REPLY] =
		"UPDATE replies SET series_id = ?1, patch_id = ?2 WHERE "
		"message_id = ?3",
	[SQL_RELINK_REVIEWS] =
		"UPDATE mail_reviews SET series_id = ?1, patch_id = ?2 WHERE "
		"reply_msgid = ?3",
	[SQL_RELINK_MESSAGE] =
		"UPDATE messages SET series_id = ?1, patch_id = ?2 WHERE "
		"message_id = ?3",
	[SQL_ORPHANS] =
		"SELECT DISTINCT r.message_id FROM message_refs mr "
		"JOIN replies r ON r.message_id = mr.message_id WHERE "
		"mr.ref = ? AND (r.series_id IS NULL OR r.patch_id = 0)",
	[SQL_FIND_PATCH] =
		"SELECT id, series_id FROM patches WHERE message_id = ?",
	[SQL_FEAT_PATCH] =
		"SELECT series_id, version, author_email FROM patches "
		"WHERE id = ?",
	[SQL_FEAT_REPLIES] =
		"SELECT count(*), count(DISTINCT CASE WHEN bot IS NULL "
		"AND author_email != ?3 THEN author_email END), "
		"coalesce(sum(inline_comments), 0), "
		"coalesce(sum(tested_claims), 0), "
		"coalesce(avg(CASE WHEN sentiment != 0 THEN sentiment "
		"END), 0), count(bot), count(CASE WHEN bot_verdict IN "
		"('failure', 'error', 'warning') THEN 1 END) FROM "
		"replies WHERE" ON_PATCH,
	[SQL_FEAT_ARCHS] =
		"SELECT DISTINCT bot_arch FROM replies WHERE bot_arch "
		"IS NOT NULL AND" ON_PATCH,
	[SQL_FEAT_REVIEWS] =
		"SELECT kind, count(DISTINCT email) FROM mail_reviews "
		"WHERE" ON_PATCH "GROUP BY kind",
	[SQL_FEAT_VERSIONS] =
		"WITH RECURSIVE chain(id, depth) AS (SELECT ?1, 0 "
		"UNION SELECT v.prev_series_id, depth + 1 FROM "
		"series_versions v JOIN chain c ON v.series_id = c.id "
		"WHERE depth < 100) SELECT max(depth) FROM chain",
};

struct thread {
	struct db *db;
	struct strmap lex;  /* word -> score * 1000 */
	sqlite3_stmt *st[SQL_COUNT];  /* prepared on first use */
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
	size_t i;

	if (!t)
		return;
	for (i = 0; i < SQL_COUNT; i++)
		sqlite3_finalize(t->st[i]);
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
	/* static: every use ends in stmt_end() while s is still alive */
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/*
 * Bind the arguments from parameter first on, one per letter of fmt:
 * s = const char * (NULL binds NULL), i = int64_t, n = int64_t bound as
 * NULL when 0 (an id that is not there), d = double.
 */
static void bind_args(sqlite3_stmt *st, int first, const char *fmt,
		      va_list ap)
{
	int64_t v;
	int i = first;

	for (; *fmt; fmt++, i++) {
		switch (*fmt) {
		case 's':
			bind_str(st, i, va_arg(ap, const char *));
			break;
		case 'd':
			sqlite3_bind_double(st, i, va_arg(ap, double));
			break;
		default: /* 'i', 'n' */
			v = va_arg(ap, int64_t);
			if (v || *fmt == 'i')
				sqlite3_bind_int64(st, i, v);
			else
				sqlite3_bind_null(st, i);
			break;
		}
	}
}

static void stmt_bind(sqlite3_stmt *st, int first, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bind_args(st, first, fmt, ap);
	va_end(ap);
}

/* Ready for the next use; what it bound goes with it. */
static void stmt_end(sqlite3_stmt *st)
{
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

static int stmt_get(sqlite3_stmt **out, struct thread *t, enum thread_sql id)
{
	if (!t->st[id] &&
	    sqlite3_prepare_v3(t->db->h, thread_sql[id], -1,
			       SQLITE_PREPARE_PERSISTENT, &t->st[id],
			       NULL) != SQLITE_OK)
		return pt_error_set(PT_EIO, "database '%s': %s", t->db->path,
				    sqlite3_errmsg(t->db->h));
	*out = t->st[id];
	return 0;
}

static int stmt_vstart(sqlite3_stmt **out, struct thread *t,
		       enum thread_sql id, const char *fmt, va_list ap)
{
	int rc = stmt_get(out, t, id);

	if (!rc)
		bind_args(*out, 1, fmt, ap);
	return rc;
}

/*
 * Statement id with fmt's arguments bound; the caller steps it and ends
 * it with stmt_end().
 */
static int stmt_start(sqlite3_stmt **out, struct thread *t,
		      enum thread_sql id, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = stmt_vstart(out, t, id, fmt, ap);
	va_end(ap);
	return rc;
}

/* Step a started statement once (a row or the end is fine) and end it. */
static int stmt_run(struct thread *t, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : db_error(t->db, what);
	stmt_end(st);
	return rc;
}

/* Run statement id with fmt's arguments; no result wanted. */
static int stmt_exec(struct thread *t, enum thread_sql id, const char *what,
		     const char *fmt, ...)
{
	sqlite3_stmt *st = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = stmt_vstart(&st, t, id, fmt, ap);
	va_end(ap);
	return rc ? rc : stmt_run(t, st, what);
}

/* Run statement id for the integer in its first row (0 when no row). */
static int stmt_i64(struct thread *t, int64_t *out, enum thread_sql id,
		    const char *what, const char *fmt, ...)
{
	sqlite3_stmt *st = NULL;
	va_list ap;
	int rc;

	*out = 0;
	va_start(ap, fmt);
	rc = stmt_vstart(&st, t, id, fmt, ap);
	va_end(ap);
	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_error(t->db, what);
	stmt_end(st);
	return rc;
}

/*
 * The text of column 0 of every row of a started statement, which it
 * ends; *out is a malloc'd array of n malloc'd strings.
 */
static int stmt_strings(struct thread *t, sqlite3_stmt *st, char ***out,
			size_t *n, const char *what)
{
	char **v = NULL, **nv;
	int rc;

	*n = 0;
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
						     : db_error(t->db, what);
	stmt_end(st);
	*out = v;
	return rc;
}

static void strings_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
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

/* The subject's version, size and number, 1 when it names none. */
static int64_t or_one(unsigned v)
{
	return v ? (int64_t)v : 1;
}

/* ---- messages ------------------------------------------------------ */

static int insert_message(struct thread *t, const struct patch *p,
			  enum thread_kind kind, const char *source,
			  int *dup)
{
	int rc;

	rc = stmt_exec(t, SQL_INSERT_MESSAGE, "storing message", "sssssisssi",
		       p->message_id, p->in_reply_to, p->list_id,
		       p->author.name, p->author.email,
		       (int64_t)p->author_date, p->subject.raw,
		       thread_kind_name(kind), source, (int64_t)time(NULL));
	*dup = !rc && sqlite3_changes(t->db->h) == 0;
	return rc;
}

static int insert_refs(struct thread *t, const struct patch *p)
{
	size_t i, n = p->nreferences;
	int rc = 0, have_irt = 0;

	for (i = 0; !rc && i <= n; i++) {
		const char *ref = i < n ? p->references[i] : p->in_reply_to;

		if (!ref || (i == n && have_irt))
			continue;
		if (p->in_reply_to && !strcmp(ref, p->in_reply_to))
			have_irt = 1;
		rc = stmt_exec(t, SQL_INSERT_REF, "storing references", "ssi",
			       p->message_id, ref, (int64_t)i);
	}
	return rc;
}

static int set_message_link(struct thread *t, const char *msgid,
			    int64_t series, int64_t patch)
{
	return stmt_exec(t, SQL_LINK_MESSAGE, "linking message", "nis",
			 series, patch, msgid);
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
	int rc;

	rc = series_key(&key, p);
	if (!rc)
		rc = stmt_i64(t, id, SQL_SERIES_GET, "storing series",
			      "ssssiiii", key.ptr, p->author.name,
			      p->author.email, p->list_id,
			      or_one(p->subject.version),
			      or_one(p->subject.total),
			      (int64_t)p->author_date,
			      (int64_t)p->author_date);
	buf_free(&key);
	return rc;
}

static int series_set_subject(struct thread *t, int64_t id,
			      const struct patch *p, int is_cover)
{
	char *norm;
	int rc;

	norm = subject_normalise(p->subject.clean ? p->subject.clean : "");
	if (!norm)
		return PT_ENOMEM;
	if (is_cover)
		rc = stmt_exec(t, SQL_SUBJECT_COVER, "storing series subject",
			       "sssi", p->subject.clean, norm, p->message_id,
			       id);
	else
		rc = stmt_exec(t, SQL_SUBJECT_PATCH, "storing series subject",
			       "ssi", p->subject.clean, norm, id);
	free(norm);
	return rc;
}

static int series_count(struct thread *t, int64_t id, int *complete)
{
	int64_t c = 0;
	int rc;

	rc = stmt_i64(t, &c, SQL_SERIES_COUNT, "counting series", "i", id);
	*complete = (int)c;
	return rc;
}

/* ---- version links ------------------------------------------------- */

static int series_of_msg(struct thread *t, const char *msgid, int ver,
			 int64_t self, int64_t *out)
{
	return stmt_i64(t, out, SQL_VERSION_OF_MSG, "finding a version",
			"sii", msgid, (int64_t)ver, self);
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

/* Try the three ways a new version names its predecessor. */
static int link_versions(struct thread *t, int64_t self,
			 const struct patch *p, const char *text,
			 int64_t *prev)
{
	int ver = (int)(p->subject.version ? p->subject.version : 1);
	const char *reason = NULL;
	size_t i;
	int rc;

	rc = stmt_i64(t, prev, SQL_VERSION_EXISTING, "reading versions", "i",
		      self);
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
		rc = stmt_i64(t, prev, SQL_VERSION_BY_SUBJECT,
			      "finding a version", "sii", p->author.email,
			      (int64_t)ver, self);
		reason = "subject";
	}
	if (!rc && *prev)
		rc = stmt_exec(t, SQL_VERSION_INSERT, "linking versions",
			       "iis", self, *prev, reason);
out:
	if (!rc && *prev)
		rc = stmt_exec(t, SQL_VERSION_PATCHES,
			       "linking patch versions", "ii", self, *prev);
	return rc;
}

/* ---- patches ------------------------------------------------------- */

static int insert_patch(struct thread *t, const struct patch *p,
			int64_t series, int64_t *id)
{
	char *norm;
	int rc;

	norm = subject_normalise(p->subject.clean ? p->subject.clean : "");
	if (!norm)
		return PT_ENOMEM;
	rc = stmt_i64(t, id, SQL_INSERT_PATCH, "storing patch",
		      "siiiissssiiii", p->message_id, series,
		      or_one(p->subject.number), or_one(p->subject.total),
		      or_one(p->subject.version), p->subject.clean, norm,
		      p->author.name, p->author.email,
		      (int64_t)p->author_date, (int64_t)p->nfiles,
		      (int64_t)p->added, (int64_t)p->removed);
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
	rc = stmt_start(&st, t, SQL_TARGET_OF, "s", msgid);
	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		o->series = sqlite3_column_int64(st, 0);
		o->patch = sqlite3_column_int64(st, 1);
		*found = 1;
		rc = 0;
	} else {
		rc = rc == SQLITE_DONE ? 0 : db_error(t->db, "finding parent");
	}
	stmt_end(st);
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

static int store_review(struct thread *t, const struct patch *p,
			const struct target *tg, const char *kind,
			const char *v, size_t n)
{
	struct buf name = BUF_INIT, email = BUF_INIT;
	int rc;

	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	split_person(v, n, &name, &email);
	rc = stmt_exec(t, SQL_INSERT_REVIEW, "storing review", "snisssi",
		       p->message_id, tg->series, tg->patch, kind,
		       name.len ? name.ptr : NULL, email.ptr,
		       (int64_t)p->author_date);
	buf_free(&name);
	buf_free(&email);
	return rc;
}

/* Trailers given on the list: "Reviewed-by: ..." lines not quoted. */
static int store_reviews(struct thread *t, const struct patch *p,
			 const char *text, const struct target *tg)
{
	const char *s = text, *e;
	size_t i, k, n;
	int rc = 0;

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
			rc = store_review(t, p, tg, review_keys[k].kind,
					  s + i, (size_t)(e - s) - i);
			break;
		}
	}
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
	rc = stmt_start(&st, t, SQL_INSERT_REPLY, "sn", p->message_id,
			tg->series);
	if (rc)
		return rc;
	/* an orphan has no patch either; 0 is the cover of a series */
	if (tg->series)
		sqlite3_bind_int64(st, 3, tg->patch);
	stmt_bind(st, 4, "ssiiiidsss", p->author.name, p->author.email,
		  (int64_t)p->author_date, (int64_t)tx.new_lines,
		  (int64_t)tx.inline_comments, (int64_t)tx.tested_claims,
		  tx.sentiment_words ? tx.sentiment_sum / tx.sentiment_words
				     : 0.0,
		  bot.name, bot.verdict, bot.arch[0] ? bot.arch : NULL);
	return stmt_run(t, st, "storing reply");
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

static int relink_reply(struct thread *t, const char *msgid,
			const struct target *tg)
{
	int i, rc = 0;

	for (i = SQL_RELINK_REPLY; !rc && i <= SQL_RELINK_MESSAGE; i++)
		rc = stmt_exec(t, (enum thread_sql)i, "adopting a reply",
			       "iis", tg->series, tg->patch, msgid);
	return rc;
}

static int adopt_one(struct thread *t, const char *msgid, size_t *done)
{
	struct target tg;
	sqlite3_stmt *st;
	char **refs = NULL;
	size_t n = 0;
	int rc;

	rc = stmt_start(&st, t, SQL_LOAD_REFS, "s", msgid);
	if (!rc)
		rc = stmt_strings(t, st, &refs, &n, "refs");
	/* message_refs holds In-Reply-To last; resolve newest first */
	if (!rc)
		rc = resolve_refs(t, refs, n, NULL, &tg);
	if (!rc && tg.series) {
		rc = relink_reply(t, msgid, &tg);
		(*done)++;
	}
	strings_free(refs, n);
	return rc;
}

/*
 * Replies stored before msgid (a patch or cover) arrived: orphans, and
 * replies held by the cover letter until the patch they answer came.
 */
static int adopt_orphans(struct thread *t, const char *msgid, size_t *done)
{
	sqlite3_stmt *st;
	char **ids = NULL;
	size_t n = 0, i;
	int rc;

	rc = stmt_start(&st, t, SQL_ORPHANS, "s", msgid);
	if (!rc)
		rc = stmt_strings(t, st, &ids, &n, "orphans");
	for (i = 0; !rc && i < n; i++)
		rc = adopt_one(t, ids[i], done);
	strings_free(ids, n);
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
	int rc, own = 0;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	if (!p->message_id || !*p->message_id)
		return pt_error_set(PT_EINVAL, "message from '%s' has no "
				    "Message-ID", source ? source : "?");
	res->message_id = pt_strdup(p->message_id);
	if (!res->message_id)
		return PT_ENOMEM;
	rc = db_savepoint(t->db, "thread_add", &own);
	if (!rc)
		rc = db_release(t->db, "thread_add", own,
				add_in_txn(t, p, source, res));
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
	rc = stmt_start(&st, t, SQL_FIND_PATCH, "s", message_id);
	if (rc)
		return rc;
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
	stmt_end(st);
	return rc;
}

static int feat_replies(struct thread *t, int64_t pid, int64_t sid,
			const char *author, struct thread_features *o)
{
	sqlite3_stmt *st;
	int rc;

	rc = stmt_start(&st, t, SQL_FEAT_REPLIES, "iis", pid, sid,
			author ? author : "");
	if (rc)
		return rc;
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
	stmt_end(st);
	return rc;
}

static int feat_archs(struct thread *t, int64_t pid, int64_t sid,
		      struct thread_features *o)
{
	sqlite3_stmt *st;
	size_t used = 0;
	int rc;

	rc = stmt_start(&st, t, SQL_FEAT_ARCHS, "ii", pid, sid);
	if (rc)
		return rc;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *a = (const char *)sqlite3_column_text(st, 0);
		size_t n = strlen(a);

		if (used + n + 2 > sizeof(o->bot_archs))
			break;
		used += (size_t)snprintf(o->bot_archs + used,
					 sizeof(o->bot_archs) - used, "%s%s",
					 used ? " " : "", a);
	}
	stmt_end(st);
	return 0;
}

static int feat_reviews(struct thread *t, int64_t pid, int64_t sid,
			struct thread_features *o)
{
	sqlite3_stmt *st;
	int rc;

	rc = stmt_start(&st, t, SQL_FEAT_REVIEWS, "ii", pid, sid);
	if (rc)
		return rc;
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
	stmt_end(st);
	return 0;
}

int thread_patch_features(struct thread *t, int64_t patch_id,
			  struct thread_features *o)
{
	sqlite3_stmt *st;
	char *author = NULL;
	int64_t sid = 0, n = 0;
	int rc;

	memset(o, 0, sizeof(*o));
	rc = stmt_start(&st, t, SQL_FEAT_PATCH, "i", patch_id);
	if (rc)
		return rc;
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
	stmt_end(st);
	if (!rc)
		rc = feat_replies(t, patch_id, sid, author, o);
	if (!rc)
		rc = feat_archs(t, patch_id, sid, o);
	if (!rc)
		rc = feat_reviews(t, patch_id, sid, o);
	if (!rc)
		rc = stmt_i64(t, &n, SQL_FEAT_VERSIONS, "reading versions",
			      "i", sid);
	o->versions_before = (unsigned)n;
	free(author);
	return rc;
}
