/*
 * lookup.c - what the daemon asks of the threading tables (see
 * lookup.h).  The SQL here reads the tables thread.c owns and keeps the
 * raw mails of mail_raw; threading itself, and every write to the other
 * tables, stays in thread.c.
 */
#include "scoring/lists/lookup.h"

#include <stdlib.h>
#include <string.h>

struct lookup {
	struct db *db;
	sqlite3_stmt *mail_kind; /* lookup_message's, prepared once */
	sqlite3_stmt *mail_keep; /* lookup_keep_raw's */
};

int lookup_new(struct lookup **out, struct db *db)
{
	struct lookup *lk;

	*out = NULL;
	lk = pt_calloc(1, sizeof(*lk));
	if (!lk)
		return PT_ENOMEM;
	lk->db = db;
	*out = lk;
	return 0;
}

void lookup_free(struct lookup *lk)
{
	if (!lk)
		return;
	sqlite3_finalize(lk->mail_kind);
	sqlite3_finalize(lk->mail_keep);
	free(lk);
}

/* Prepare *st from sql the first time; later calls reuse it. */
static int cached(struct lookup *lk, sqlite3_stmt **st, const char *sql)
{
	return *st ? 0 : db_prepare(st, lk->db, sql);
}

int lookup_list_reviews(struct lookup *lk, int64_t patch_id,
			lookup_review_cb cb, void *ctx)
{
	sqlite3_stmt *st;
	int rc, step;

	rc = db_prepare(&st, lk->db,
			"SELECT kind, name, email FROM mail_reviews WHERE"
			" patch_id = ?1 OR (patch_id = 0 AND series_id ="
			" (SELECT series_id FROM patches WHERE id = ?1))"
			" ORDER BY id");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, patch_id);
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW)
		rc = cb((const char *)sqlite3_column_text(st, 0),
			(const char *)sqlite3_column_text(st, 1),
			(const char *)sqlite3_column_text(st, 2), ctx);
	if (!rc && step != SQLITE_DONE)
		rc = db_error(lk->db, "reading list reviews");
	sqlite3_finalize(st);
	return rc;
}

int lookup_raw_patch(struct lookup *lk, const char *msgid, struct patch **out)
{
	sqlite3_stmt *st;
	int rc;

	*out = NULL;
	rc = db_prepare(&st, lk->db,
			"SELECT raw FROM mail_raw WHERE message_id = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, msgid, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		rc = patch_from_mail(out, sqlite3_column_blob(st, 0),
				     (size_t)sqlite3_column_bytes(st, 0));
	else
		rc = rc == SQLITE_DONE ? pt_error_set(PT_ENOTFOUND,
						      "no raw mail '%s'", msgid)
				       : db_error(lk->db, "reading raw mail");
	sqlite3_finalize(st);
	return rc;
}

int lookup_series_head(struct lookup *lk, int64_t sid, char **cover,
		       int *complete)
{
	sqlite3_stmt *st;
	int rc;

	*cover = NULL;
	*complete = 0;
	rc = db_prepare(&st, lk->db,
			"SELECT cover_msgid, complete FROM series"
			" WHERE id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, sid);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 0);

		*complete = sqlite3_column_int(st, 1);
		*cover = c ? pt_strdup(c) : NULL;
		rc = c && !*cover ? PT_ENOMEM : 0;
	} else {
		rc = rc == SQLITE_DONE
			     ? pt_error_set(PT_ENOTFOUND, "no series %lld",
					    (long long)sid)
			     : db_error(lk->db, "reading series");
	}
	sqlite3_finalize(st);
	return rc;
}

int lookup_series_patches(struct lookup *lk, int64_t sid, lookup_msgid_cb cb,
			  void *ctx)
{
	sqlite3_stmt *st;
	int rc, step;

	rc = db_prepare(&st, lk->db,
			"SELECT message_id FROM patches WHERE series_id = ?"
			" ORDER BY number, id");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, sid);
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW)
		rc = cb((const char *)sqlite3_column_text(st, 0), ctx);
	if (!rc && step != SQLITE_DONE)
		rc = db_error(lk->db, "reading the patches of a series");
	sqlite3_finalize(st);
	return rc;
}

int lookup_message(struct lookup *lk, const char *msgid, int *keep,
		   int64_t *series_id, int *complete)
{
	sqlite3_stmt *st;
	const char *kind;
	int rc;

	*keep = 0;
	*series_id = 0;
	*complete = 0;
	rc = cached(lk, &lk->mail_kind,
		    "SELECT m.kind, m.series_id, s.complete FROM messages m"
		    " LEFT JOIN series s ON s.id = m.series_id"
		    " WHERE m.message_id = ?");
	if (rc)
		return rc;
	st = lk->mail_kind;
	sqlite3_bind_text(st, 1, msgid, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		kind = (const char *)sqlite3_column_text(st, 0);
		*series_id = sqlite3_column_int64(st, 1);
		*complete = sqlite3_column_int(st, 2);
		*keep = kind &&
			(!strcmp(kind, "patch") || !strcmp(kind, "cover"));
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return 0;
}

int lookup_keep_raw(struct lookup *lk, const char *msgid, const char *raw,
		    size_t len, int64_t received)
{
	sqlite3_stmt *st;
	int rc;

	rc = cached(lk, &lk->mail_keep,
		    "INSERT OR IGNORE INTO mail_raw (message_id, raw,"
		    " received) VALUES (?, ?, ?)");
	if (rc)
		return rc;
	st = lk->mail_keep;
	sqlite3_bind_text(st, 1, msgid, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, raw, (int)len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, received);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = db_error(lk->db, "storing raw mail");
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

int lookup_applies_on_list(struct lookup *lk, const char *email,
			   const char *list_id, int *yes)
{
	sqlite3_stmt *st;
	int rc;

	*yes = 0;
	if (!email || !list_id)
		return 0;
	rc = db_prepare(&st, lk->db,
			"SELECT 1 FROM list_notices n JOIN messages m"
			" ON m.message_id = n.message_id WHERE n.kind = 'reply'"
			" AND lower(n.who) = lower(?) AND m.list_id = ?"
			" LIMIT 1");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, list_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	*yes = rc == SQLITE_ROW;
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE
		     ? 0
		     : db_error(lk->db, "reading list_notices");
	sqlite3_finalize(st);
	return rc;
}

int lookup_thread_news(struct lookup *lk, const char *msgid, int64_t since,
		       const char *exclude, int *newer, char **replier)
{
	sqlite3_stmt *st;
	const unsigned char *t;
	int rc;

	*newer = 0;
	*replier = NULL;
	rc = db_prepare(&st, lk->db,
			"SELECT EXISTS (SELECT 1 FROM series_versions v"
			"  WHERE v.prev_series_id = p.series_id),"
			" (SELECT r.author_email FROM replies r JOIN messages m"
			"  ON m.message_id = r.message_id JOIN series s"
			"  ON s.id = p.series_id WHERE r.series_id = p.series_id"
			"  AND r.bot IS NULL AND m.received >= ?2"
			"  AND lower(coalesce(r.author_email, '')) !="
			"  lower(coalesce(s.author_email, ''))"
			"  AND lower(coalesce(r.author_email, '')) !="
			"  lower(coalesce(?3, '')) ORDER BY m.received LIMIT 1)"
			" FROM patches p WHERE p.message_id = ?1");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, msgid, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_text(st, 3, exclude, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*newer = sqlite3_column_int(st, 0);
		t = sqlite3_column_text(st, 1);
		*replier = t ? pt_strdup((const char *)t) : NULL;
		rc = t && !*replier ? PT_ENOMEM : 0;
	} else {
		rc = rc == SQLITE_DONE ? 0
				       : db_error(lk->db, "reading a thread");
	}
	sqlite3_finalize(st);
	return rc;
}
