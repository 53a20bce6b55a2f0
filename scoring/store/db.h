/*
 * db.h - the state database (SQLite).  Opening it turns on WAL and a busy
 * timeout and brings the schema of the given owners up to date (each
 * room's schema.c holds its tables' steps; schema.h describes the runner
 * and the versions kept per owner in schema_versions).  SQL lives only
 * here, in the modules that own tables, and in those that read them.
 */
#ifndef PT_DB_H
#define PT_DB_H

#include <sqlite3.h>

#include "scoring/util/pt.h"

struct db {
	sqlite3 *h;
	char *path;
};

struct db_owners;

/*
 * Open (creating) PATH and migrate the tables of the store and of OWNERS
 * (NULL: the store's alone).  A program passes the owners of everything
 * it links: scoring_db_owners (scoring/model/schema.h) for the scoring
 * library, bot_db_owners (bot/cmd/schema.h) for the bot.  Tables of other
 * owners already in the file are left alone.  ":memory:" works for tests.
 */
int db_open(struct db **out, const char *path, const struct db_owners *owners);
void db_close(struct db *db);
/* The PRAGMA user_version this build leaves (DB_USER_VERSION, for the
 * binaries before schema_versions). */
int db_schema_version(void);

/* Run SQL with no result rows; the error names the statement's purpose. */
int db_exec(struct db *db, const char *sql);
int db_begin(struct db *db); /* BEGIN IMMEDIATE */
int db_commit(struct db *db);
int db_rollback(struct db *db); /* never fails the caller */
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
int db_prepare_all(sqlite3_stmt **st, struct db *db, const char *const *sql,
		   size_t n);
/* Finalise st[0..n) (NULL entries are fine). */
void db_finalize_all(sqlite3_stmt **st, size_t n);
/* Set the pt error from the database's message; returns PT_EIO. */
int db_error(struct db *db, const char *what);

/* Key/value table for small bits of state (positions, versions). */
int db_kv_get(struct db *db, const char *key, char **out);
int db_kv_set(struct db *db, const char *key, const char *value);

#endif
