/*
 * store.c - the work queue and the outbox (see store.h).  Each function
 * is one statement or one short transaction, so a SIGKILL between any
 * two calls leaves a consistent database; the meaning of each state
 * after a crash is decided by the caller's reconcile step, not here.
 */
#include "bot/outbox/store.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const outbox_names[] = { "intended", "sending", "sent",
					    "failed",	"skipped", "waiting",
					    "dropped" };
#define NSTATES (sizeof(outbox_names) / sizeof(outbox_names[0]))

const char *outbox_state_name(enum outbox_state s)
{
	return (unsigned)s < NSTATES ? outbox_names[s] : "unknown";
}

static int outbox_state_parse(const char *s)
{
	int i;

	for (i = 0; s && i < (int)NSTATES; i++)
		if (!strcmp(s, outbox_names[i]))
			return i;
	return OUTBOX_FAILED;
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? pt_strdup((const char *)t) : NULL;
}

static int step_done(struct db *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(db, what);

	sqlite3_finalize(st);
	return rc;
}

void store_item_clear(struct store_item *it)
{
	free(it->kind);
	free(it->key);
	free(it->payload);
	memset(it, 0, sizeof(*it));
}

int store_enqueue(struct db *db, const char *kind, const char *key,
		  const char *payload)
{
	return store_enqueue_at(db, kind, key, payload, 0);
}

int store_enqueue_at(struct db *db, const char *kind, const char *key,
		     const char *payload, int64_t not_before)
{
	sqlite3_stmt *st;
	int64_t now = time(NULL);
	int rc;

	rc = db_prepare(&st, db,
			"INSERT INTO work_queue (kind, key, payload,"
			" not_before, created, updated)"
			" VALUES (?1, ?2, ?3, ?5, ?4, ?4)"
			" ON CONFLICT(kind, key) DO UPDATE SET"
			" payload = excluded.payload, updated = ?4,"
			" attempts = 0, not_before = ?5, last_error = NULL,"
			" state = CASE WHEN state = 'running' THEN 'rerun'"
			" ELSE 'pending' END");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, payload, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now);
	sqlite3_bind_int64(st, 5, not_before);
	return step_done(db, st, "queueing work");
}

int store_pending(struct db *db, const char *kind, const char *key,
		  int *pending)
{
	sqlite3_stmt *st;
	int rc;

	*pending = 0;
	rc = db_prepare(&st, db,
			"SELECT 1 FROM work_queue WHERE kind = ?1 AND"
			" key = ?2 AND state IN ('pending', 'rerun')");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	*pending = rc == SQLITE_ROW;
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE
		     ? 0
		     : db_error(db, "reading the queue");
	sqlite3_finalize(st);
	return rc;
}

static int claim(struct db *db, const char *kind, int64_t now,
		 struct store_item *out)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = db_prepare(&st, db,
			"UPDATE work_queue SET state = 'running', updated = ?1"
			" WHERE id = (SELECT id FROM work_queue"
			" WHERE state = 'pending' AND not_before <= ?1"
			" AND (?2 IS NULL OR kind = ?2)"
			" ORDER BY not_before, id LIMIT 1)"
			" RETURNING id, kind, key, payload, attempts, created");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->id = sqlite3_column_int64(st, 0);
		out->kind = col_dup(st, 1);
		out->key = col_dup(st, 2);
		out->payload = col_dup(st, 3);
		out->attempts = sqlite3_column_int(st, 4);
		out->created = sqlite3_column_int64(st, 5);
		rc = out->kind && out->key ? 0 : PT_ENOMEM;
		if (!rc && sqlite3_step(st) != SQLITE_DONE)
			rc = db_error(db, "claiming work");
	} else {
		rc = rc == SQLITE_DONE ? PT_ENOTFOUND
				       : db_error(db, "claiming work");
	}
	sqlite3_finalize(st);
	if (rc)
		store_item_clear(out);
	return rc;
}

int store_claim(struct db *db, int64_t now, struct store_item *out)
{
	return claim(db, NULL, now, out);
}

int store_claim_kind(struct db *db, const char *kind, int64_t now,
		     struct store_item *out)
{
	return claim(db, kind, now, out);
}

int store_finish(struct db *db, int64_t id)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"UPDATE work_queue SET updated = ?2, last_error = NULL,"
			" state = CASE WHEN state = 'rerun' THEN 'pending'"
			" ELSE 'done' END WHERE id = ?1");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, time(NULL));
	return step_done(db, st, "finishing work");
}

int store_skip(struct db *db, const char *kind, const char *const *keys,
	       size_t n)
{
	sqlite3_stmt *st;
	size_t i;
	int rc, own;

	if (!n)
		return 0;
	rc = db_savepoint(db, "store_skip", &own);
	if (rc)
		return rc;
	rc = db_prepare(&st, db,
			"UPDATE work_queue SET state = 'done', updated = ?3"
			" WHERE kind = ?1 AND key = ?2 AND state = 'pending'");
	for (i = 0; !rc && i < n; i++) {
		sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, keys[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, time(NULL));
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = db_error(db, "skipping work");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return db_release(db, "store_skip", own, rc);
}

int store_retry(struct db *db, int64_t id, int64_t not_before,
		const char *error, int max_attempts)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"UPDATE work_queue SET attempts = attempts + 1,"
			" not_before = ?2, last_error = ?3, updated = ?5,"
			" state = CASE WHEN attempts + 1 >= ?4 THEN 'failed'"
			" ELSE 'pending' END WHERE id = ?1");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, not_before);
	sqlite3_bind_text(st, 3, error, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, max_attempts);
	sqlite3_bind_int64(st, 5, time(NULL));
	return step_done(db, st, "rescheduling work");
}

int store_recover(struct db *db, int *recovered)
{
	int rc;

	rc = db_exec(db, "UPDATE work_queue SET state = 'pending'"
			 " WHERE state IN ('running', 'rerun')");
	if (!rc && recovered)
		*recovered = sqlite3_changes(db->h);
	return rc;
}

static int count(struct db *db, const char *sql, long *out)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db, sql);
	if (rc)
		return rc;
	rc = sqlite3_step(st) == SQLITE_ROW ? 0 : db_error(db, "counting");
	*out = rc ? 0 : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

int store_queue_depth(struct db *db, long *pending, long *failed)
{
	int rc;

	rc = count(db,
		   "SELECT count(*) FROM work_queue WHERE state IN"
		   " ('pending', 'running', 'rerun')",
		   pending);
	if (!rc)
		rc = count(db,
			   "SELECT count(*) FROM work_queue WHERE state ="
			   " 'failed'",
			   failed);
	return rc;
}

void outbox_row_clear(struct outbox_row *r)
{
	free(r->kind);
	free(r->dedupe_key);
	free(r->subsystem);
	free(r->target);
	free(r->payload);
	free(r->remote_ref);
	free(r->hold);
	free(r->about);
	free(r->approved_by);
	free(r->note);
	memset(r, 0, sizeof(*r));
}

int store_outbox_intend(struct db *db, const char *kind, const char *dedupe_key,
			const char *subsystem, const char *target,
			const char *payload, int64_t *id)
{
	sqlite3_stmt *st;
	int rc;

	*id = 0;
	rc = db_prepare(&st, db,
			"INSERT INTO outbox (kind, dedupe_key, subsystem,"
			" target, payload, created, updated)"
			" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
			" ON CONFLICT(dedupe_key) DO NOTHING RETURNING id");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, dedupe_key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, subsystem, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, target, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, payload, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, time(NULL));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0
			     : db_error(db, "recording an action");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "recording an action");
	rc = db_prepare(&st, db, "SELECT id FROM outbox WHERE dedupe_key = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, dedupe_key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return PT_EEXISTS;
}

int store_outbox_set(struct db *db, int64_t id, enum outbox_state state,
		     const char *remote_ref, const char *error)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"UPDATE outbox SET state = ?2, updated = ?3,"
			" remote_ref = coalesce(?4, remote_ref),"
			" last_error = ?5 WHERE id = ?1");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, outbox_state_name(state), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, time(NULL));
	sqlite3_bind_text(st, 4, remote_ref, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, error, -1, SQLITE_STATIC);
	rc = sqlite3_step(st) == SQLITE_DONE
		     ? 0
		     : db_error(db, "updating an action");
	if (!rc && sqlite3_changes(db->h) == 0)
		rc = PT_ENOTFOUND;
	sqlite3_finalize(st);
	if (rc == PT_ENOTFOUND)
		pt_error_set(rc, "no action %lld in the outbox", (long long)id);
	return rc;
}

#define OUTBOX_COLS                                                   \
	"id, kind, dedupe_key, subsystem, target, payload, state,"    \
	" remote_ref, created, hold, release_at, about, approved_by," \
	" last_error"

static int read_row(sqlite3_stmt *st, struct outbox_row *r)
{
	r->id = sqlite3_column_int64(st, 0);
	r->kind = col_dup(st, 1);
	r->dedupe_key = col_dup(st, 2);
	r->subsystem = col_dup(st, 3);
	r->target = col_dup(st, 4);
	r->payload = col_dup(st, 5);
	r->state = outbox_state_parse((const char *)sqlite3_column_text(st, 6));
	r->remote_ref = col_dup(st, 7);
	r->created = sqlite3_column_int64(st, 8);
	r->hold = col_dup(st, 9);
	r->release_at = sqlite3_column_int64(st, 10);
	r->about = col_dup(st, 11);
	r->approved_by = col_dup(st, 12);
	r->note = col_dup(st, 13);
	return r->kind && r->dedupe_key && r->target && r->payload ? 0
								   : PT_ENOMEM;
}

int store_outbox_get(struct db *db, const char *dedupe_key,
		     struct outbox_row *out)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = db_prepare(&st, db,
			"SELECT " OUTBOX_COLS
			" FROM outbox WHERE dedupe_key = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, dedupe_key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		rc = read_row(st, out);
	else
		rc = rc == SQLITE_DONE ? PT_ENOTFOUND
				       : db_error(db, "reading an action");
	sqlite3_finalize(st);
	if (rc)
		outbox_row_clear(out);
	return rc;
}

int store_outbox_foreach(struct db *db, enum outbox_state state, outbox_cb cb,
			 void *ctx)
{
	struct outbox_row r;
	sqlite3_stmt *st;
	int rc, step;

	rc = db_prepare(&st, db,
			"SELECT " OUTBOX_COLS " FROM outbox WHERE state = ?"
			" ORDER BY id");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, outbox_state_name(state), -1, SQLITE_STATIC);
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&r, 0, sizeof(r));
		rc = read_row(st, &r);
		if (!rc)
			rc = cb(&r, ctx);
		outbox_row_clear(&r);
	}
	if (!rc && step != SQLITE_DONE)
		rc = db_error(db, "listing actions");
	sqlite3_finalize(st);
	return rc;
}

int store_outbox_count_since(struct db *db, const char *subsystem,
			     const char *kind, int64_t since, long *n)
{
	sqlite3_stmt *st;
	int rc;

	*n = 0;
	rc = db_prepare(&st, db,
			"SELECT count(*) FROM outbox WHERE subsystem IS ?1"
			" AND kind = ?2 AND created >= ?3"
			" AND state IN ('intended', 'sending', 'sent')");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, subsystem, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, since);
	rc = sqlite3_step(st) == SQLITE_ROW ? 0 : db_error(db, "counting");
	if (!rc)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

int store_outbox_hold(struct db *db, int64_t id, const char *hold,
		      int64_t release_at, const char *about)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"UPDATE outbox SET state = 'waiting', hold = ?2,"
			" release_at = ?3, about = ?4, updated = ?5"
			" WHERE id = ?1 AND state = 'intended'");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, hold, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, release_at);
	sqlite3_bind_text(st, 4, about, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, time(NULL));
	return step_done(db, st, "holding an action");
}

int store_outbox_by_id(struct db *db, int64_t id, struct outbox_row *out)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = db_prepare(&st, db,
			"SELECT " OUTBOX_COLS " FROM outbox WHERE id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		rc = read_row(st, out);
	else if (rc == SQLITE_DONE)
		rc = pt_error_set(PT_ENOTFOUND, "no action %lld in the outbox",
				  (long long)id);
	else
		rc = db_error(db, "reading an action");
	sqlite3_finalize(st);
	if (rc)
		outbox_row_clear(out);
	return rc;
}

int store_outbox_release(struct db *db, int64_t id, enum outbox_state to,
			 const char *who, const char *note)
{
	struct outbox_row r;
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"UPDATE outbox SET state = ?2, updated = ?3,"
			" approved_by = CASE WHEN ?2 = 'intended' THEN ?4"
			" ELSE approved_by END, last_error = ?5"
			" WHERE id = ?1 AND state = 'waiting'");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, outbox_state_name(to), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, time(NULL));
	sqlite3_bind_text(st, 4, who, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, note, -1, SQLITE_STATIC);
	rc = step_done(db, st, "releasing an action");
	if (rc || sqlite3_changes(db->h))
		return rc;
	rc = store_outbox_by_id(db, id, &r);
	if (!rc)
		rc = pt_error_set(PT_EINVAL, "action %lld is %s, not waiting",
				  (long long)id, outbox_state_name(r.state));
	outbox_row_clear(&r);
	return rc;
}

int store_outbox_drop_waiting(struct db *db, const char *about,
			      const char *subsystem, const char *note, int *n)
{
	sqlite3_stmt *st;
	int rc;

	*n = 0;
	rc = db_prepare(&st, db,
			"UPDATE outbox SET state = 'dropped', updated = ?3,"
			" last_error = ?4 WHERE state = 'waiting' AND"
			" (CASE WHEN ?1 IS NOT NULL THEN about = ?1"
			" ELSE subsystem IS ?2 END)");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, about, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, subsystem, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, time(NULL));
	sqlite3_bind_text(st, 4, note, -1, SQLITE_STATIC);
	rc = step_done(db, st, "dropping held replies");
	if (!rc)
		*n = sqlite3_changes(db->h);
	return rc;
}
