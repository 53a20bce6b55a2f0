/*
 * thread_sql.c - the SQL of the threading tables (schema 3) and the
 * helpers that run it, for the files of thread.c's module (see
 * thread_int.h).  The statements are prepared once per struct thread, on
 * first use, and kept: preparing them anew for each message used to cost
 * more than running them.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "scoring/lists/thread_int.h"

/* ---- statements ---------------------------------------------------- */

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
	[SQL_LINK_MESSAGE] = "UPDATE messages SET series_id = ?, patch_id = ? "
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
	[SQL_SUBJECT_PATCH] = "UPDATE series SET subject = ?, norm_subject = ? "
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
	[SQL_TARGET_OF] = "SELECT series_id, patch_id FROM messages WHERE "
			  "message_id = ? AND series_id IS NOT NULL",
	[SQL_INSERT_REVIEW] =
		"INSERT OR IGNORE INTO mail_reviews (reply_msgid, series_id, "
		"patch_id, kind, name, email, date) VALUES (?,?,?,?,?,?,?)",
	[SQL_INSERT_REPLY] =
		"INSERT OR IGNORE INTO replies (message_id, series_id, "
		"patch_id, author_name, author_email, date, lines, "
		"inline_comments, tested_claims, sentiment, bot, "
		"bot_verdict, bot_arch, quoted_lines, tested_scale) VALUES "
		"(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[SQL_LOAD_REFS] = "SELECT ref FROM message_refs WHERE message_id = ? "
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

/* ---- SQL helpers --------------------------------------------------- */

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	/* static: every use ends in thread_stmt_end() while s is still alive */
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
static void bind_args(sqlite3_stmt *st, int first, const char *fmt, va_list ap)
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

void thread_stmt_bind(sqlite3_stmt *st, int first, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bind_args(st, first, fmt, ap);
	va_end(ap);
}

/* Ready for the next use; what it bound goes with it. */
void thread_stmt_end(sqlite3_stmt *st)
{
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

static int stmt_get(sqlite3_stmt **out, struct thread *t, enum thread_sql id)
{
	if (!t->st[id] && sqlite3_prepare_v3(t->db->h, thread_sql[id], -1,
					     SQLITE_PREPARE_PERSISTENT,
					     &t->st[id], NULL) != SQLITE_OK)
		return pt_error_set(PT_EIO, "database '%s': %s", t->db->path,
				    sqlite3_errmsg(t->db->h));
	*out = t->st[id];
	return 0;
}

static int stmt_vstart(sqlite3_stmt **out, struct thread *t, enum thread_sql id,
		       const char *fmt, va_list ap)
{
	int rc = stmt_get(out, t, id);

	if (!rc)
		bind_args(*out, 1, fmt, ap);
	return rc;
}

/*
 * Statement id with fmt's arguments bound; the caller steps it and ends
 * it with thread_stmt_end().
 */
int thread_stmt_start(sqlite3_stmt **out, struct thread *t, enum thread_sql id,
		      const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = stmt_vstart(out, t, id, fmt, ap);
	va_end(ap);
	return rc;
}

/* Step a started statement once (a row or the end is fine) and end it. */
int thread_stmt_run(struct thread *t, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : db_error(t->db, what);
	thread_stmt_end(st);
	return rc;
}

/* Run statement id with fmt's arguments; no result wanted. */
int thread_stmt_exec(struct thread *t, enum thread_sql id, const char *what,
		     const char *fmt, ...)
{
	sqlite3_stmt *st = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = stmt_vstart(&st, t, id, fmt, ap);
	va_end(ap);
	return rc ? rc : thread_stmt_run(t, st, what);
}

/* Run statement id for the integer in its first row (0 when no row). */
int thread_stmt_i64(struct thread *t, int64_t *out, enum thread_sql id,
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
	thread_stmt_end(st);
	return rc;
}

/*
 * The text of column 0 of every row of a started statement, which it
 * ends; *out is a malloc'd array of n malloc'd strings.
 */
int thread_stmt_strings(struct thread *t, sqlite3_stmt *st, char ***out,
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
	rc = rc == SQLITE_DONE	? 0
	     : rc == SQLITE_ROW ? PT_ENOMEM
				: db_error(t->db, what);
	thread_stmt_end(st);
	*out = v;
	return rc;
}

void thread_strings_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
