/*
 * db.c - opening the state database: WAL, a busy timeout, foreign keys,
 * then the schema brought up to date by the runner of migrate.c for the
 * owners the caller names (schema.h); and the small helpers every module
 * runs its SQL through.
 */
#include "scoring/store/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/store/schema.h"

int db_schema_version(void)
{
	return DB_USER_VERSION;
}

/* The database's path last: a full disk must say which file it hit. */
int db_error(struct db *db, const char *what)
{
	if (!db || !db->h)
		return pt_error_set(PT_EIO, "%s: no db", what);
	return pt_error_set(PT_EIO, "%s: %s (database '%s')", what,
			    sqlite3_errmsg(db->h), db->path ? db->path : "?");
}

int db_exec(struct db *db, const char *sql)
{
	char *msg = NULL;
	int rc;

	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	rc = pt_error_set(PT_EIO, "database '%s': %s", db->path,
			  msg ? msg : sqlite3_errmsg(db->h));
	sqlite3_free(msg);
	return rc;
}

int db_begin(struct db *db)
{
	return db_exec(db, "BEGIN IMMEDIATE");
}

int db_commit(struct db *db)
{
	return db_exec(db, "COMMIT");
}

int db_rollback(struct db *db)
{
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return 0;
}

/*
 * The rollback runs through sqlite3_exec() so that it leaves the pt
 * error of the failure alone; ROLLBACK TO fails harmlessly when SQLite
 * has already rolled the whole transaction back (SQLITE_FULL and kin).
 */
int db_savepoint(struct db *db, const char *name, int *own)
{
	char sql[80];

	*own = sqlite3_get_autocommit(db->h);
	if (*own)
		return db_begin(db);
	snprintf(sql, sizeof(sql), "SAVEPOINT %s", name);
	return db_exec(db, sql);
}

int db_release(struct db *db, const char *name, int own, int rc)
{
	char sql[80];

	if (!rc && own) {
		rc = db_commit(db);
	} else if (!rc) {
		snprintf(sql, sizeof(sql), "RELEASE %s", name);
		rc = db_exec(db, sql);
	}
	if (rc && own) {
		db_rollback(db);
	} else if (rc) {
		snprintf(sql, sizeof(sql), "ROLLBACK TO %s; RELEASE %s", name,
			 name);
		sqlite3_exec(db->h, sql, NULL, NULL, NULL);
	}
	return rc;
}

int db_prepare(sqlite3_stmt **out, struct db *db, const char *sql)
{
	*out = NULL;
	if (sqlite3_prepare_v2(db->h, sql, -1, out, NULL) != SQLITE_OK)
		return pt_error_set(PT_EIO, "database '%s': %s", db->path,
				    sqlite3_errmsg(db->h));
	return 0;
}

int db_prepare_all(sqlite3_stmt **st, struct db *db, const char *const *sql,
		   size_t n)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n && !rc; i++)
		rc = db_prepare(&st[i], db, sql[i]);
	if (rc)
		db_finalize_all(st, n);
	return rc;
}

void db_finalize_all(sqlite3_stmt **st, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		sqlite3_finalize(st[i]);
		st[i] = NULL;
	}
}

int db_open(struct db **out, const char *path, const struct db_owners *owners)
{
	struct db *db;
	int rc;

	*out = NULL;
	db = pt_calloc(1, sizeof(*db));
	if (!db)
		return PT_ENOMEM;
	db->path = pt_strdup(path);
	if (!db->path) {
		free(db);
		return PT_ENOMEM;
	}
	if (sqlite3_open_v2(path, &db->h,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		rc = pt_error_set(PT_EIO, "cannot open database '%s': %s", path,
				  db->h ? sqlite3_errmsg(db->h) : "no memory");
		goto fail;
	}
	sqlite3_busy_timeout(db->h, 10000);
	rc = db_exec(db, "PRAGMA journal_mode = WAL");
	if (!rc)
		rc = db_exec(db, "PRAGMA foreign_keys = ON");
	if (!rc)
		rc = db_exec(db, "PRAGMA synchronous = NORMAL");
	if (!rc)
		rc = db_migrate(db, owners);
	if (rc)
		goto fail;
	*out = db;
	return 0;
fail:
	db_close(db);
	return rc;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	if (db->h)
		sqlite3_close_v2(db->h);
	free(db->path);
	free(db);
}

int db_kv_get(struct db *db, const char *key, char **out)
{
	sqlite3_stmt *st;
	int rc;

	*out = NULL;
	rc = db_prepare(&st, db, "SELECT value FROM kv WHERE key = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = pt_strdup((const char *)sqlite3_column_text(st, 0));
		rc = *out ? 0 : PT_ENOMEM;
	} else if (rc == SQLITE_DONE) {
		rc = PT_ENOTFOUND;
	} else {
		rc = db_error(db, "reading state");
	}
	sqlite3_finalize(st);
	return rc;
}

int db_kv_set(struct db *db, const char *key, const char *value)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"INSERT INTO kv (key, value) VALUES (?, ?) "
			"ON CONFLICT(key) DO UPDATE SET value = excluded.value");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(db, "saving state");
	sqlite3_finalize(st);
	return rc;
}
