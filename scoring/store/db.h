/*
 * db.h - the state database (SQLite).  Opening it turns on WAL and a busy
 * timeout and brings the schema up to date with the migrations in db.c,
 * counted by PRAGMA user_version.  SQL lives only here, in the scoring/
 * modules that call these helpers, and in bot/outbox/store.c.
 */
#ifndef PT_DB_H
#define PT_DB_H

#include <sqlite3.h>

#include "scoring/util/pt.h"

struct db {
	sqlite3 *h;
	char *path;
};

/* Open (creating) PATH and migrate it.  ":memory:" works for tests. */
int db_open(struct db **out, const char *path);
void db_close(struct db *db);
/* The schema version this build migrates to. */
int db_schema_version(void);

/* Run SQL with no result rows; the error names the statement's purpose. */
int db_exec(struct db *db, const char *sql);
int db_begin(struct db *db);      /* BEGIN IMMEDIATE */
int db_commit(struct db *db);
int db_rollback(struct db *db);   /* never fails the caller */
/*
 * A unit of work that nests: its own transaction (BEGIN IMMEDIATE) when
 * none is open, else SAVEPOINT name inside the caller's, so that a
 * caller may batch many units in one transaction.  db_release() ends it
 * with the unit's result rc: on 0 it commits (or releases the savepoint)
 * and returns that step's error; otherwise it rolls the unit back and
 * returns rc.  name must be a plain SQL identifier.
 */
int db_savepoint(struct db *db, const char *name, int *own);
int db_release(struct db *db, const char *name, int own, int rc);
/* Prepare with a clear error. */
int db_prepare(sqlite3_stmt **out, struct db *db, const char *sql);
/*
 * Prepare sql[0..n) into st[0..n), a module's statements prepared once.
 * On failure the ones prepared are finalised and st is all NULL.
 */
int db_prepare_all(sqlite3_stmt **st, struct db *db,
		   const char *const *sql, size_t n);
/* Finalise st[0..n) (NULL entries are fine). */
void db_finalize_all(sqlite3_stmt **st, size_t n);
/* Set the pt error from the database's message; returns PT_EIO. */
int db_error(struct db *db, const char *what);

/* Key/value table for small bits of state (positions, versions). */
int db_kv_get(struct db *db, const char *key, char **out);
int db_kv_set(struct db *db, const char *key, const char *value);

#endif
