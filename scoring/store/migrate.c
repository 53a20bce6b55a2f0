/*
 * migrate.c - the schema runner of schema.h.  It gathers the store's own
 * kv table and the owners db_open() was given, reads where each owner
 * stands in schema_versions (or, in a database made before that table,
 * in PRAGMA user_version), and runs every pending step in version order,
 * all in one transaction, so that a failure leaves the database as it
 * was.  A database already up to date is only read.
 */
#include "scoring/store/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/store/db.h"

/* The row keeping the user_version a database had before schema_versions. */
#define BASE_ROW "user_version"

/* 1: the key/value state of db_kv_get() and db_kv_set() */
static const struct db_step store_steps[] = {
	{ 1, "CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);" },
};

static const struct db_schema store_schema = {
	"scoring/store",
	store_steps,
	sizeof(store_steps) / sizeof(store_steps[0]),
};

/* One owner while migrating: the version it has reached. */
struct mig {
	const struct db_schema *s;
	int version;
};

static int latest(const struct db_schema *s)
{
	return s->nsteps ? s->steps[s->nsteps - 1].version : 0;
}

static int check_schema(const struct db_schema *s, const struct mig *m,
			size_t n)
{
	size_t i;

	if (!s || !s->owner || !strcmp(s->owner, BASE_ROW))
		return pt_error_set(PT_EINVAL, "a schema owner has no name");
	for (i = 0; i < n; i++)
		if (!strcmp(m[i].s->owner, s->owner))
			return pt_error_set(PT_EINVAL,
					    "schema owner '%s' listed twice",
					    s->owner);
	for (i = 0; i < s->nsteps; i++)
		if (s->steps[i].version <= (i ? s->steps[i - 1].version : 0))
			return pt_error_set(PT_EINVAL,
					    "schema of '%s': step %zu is out "
					    "of order",
					    s->owner, i);
	return 0;
}

/* The store's schema, then each list's owners, top layer first. */
static int gather(struct mig **out, size_t *nout,
		  const struct db_owners *owners)
{
	const struct db_owners *o;
	size_t n = 1, i;
	struct mig *m;
	int rc = 0;

	*out = NULL;
	for (o = owners; o; o = o->below)
		n += o->n;
	m = pt_calloc(n, sizeof(*m));
	if (!m)
		return PT_ENOMEM;
	m[0].s = &store_schema;
	*nout = 1;
	for (o = owners; o && !rc; o = o->below)
		for (i = 0; i < o->n && !rc; i++) {
			rc = check_schema(o->schemas[i], m, *nout);
			if (!rc)
				m[(*nout)++].s = o->schemas[i];
		}
	if (rc) {
		free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* *out = the first column of the first row, *found = 1, if there is one. */
static int query_int(struct db *db, const char *sql, const char *arg, int *out,
		     int *found)
{
	sqlite3_stmt *st;
	int rc;

	*found = 0;
	rc = db_prepare(&st, db, sql);
	if (rc)
		return rc;
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int(st, 0);
		*found = 1;
		rc = 0;
	} else if (rc == SQLITE_DONE) {
		rc = 0;
	} else {
		rc = db_error(db, "reading the schema version");
	}
	sqlite3_finalize(st);
	return rc;
}

static int newer(struct db *db, const char *owner, int v, int max)
{
	return pt_error_set(PT_EINVAL,
			    "database '%s' has %s%sschema %d, newer than this "
			    "patchtriage (%d)",
			    db->path, owner, *owner ? " " : "", v, max);
}

/* Where the database stands, as plan() reads it. */
struct state {
	int user_version;
	int has_table; /* schema_versions exists */
	int todo;      /* anything to write */
};

static int owner_version(struct db *db, struct mig *m, int base,
			 struct state *s)
{
	int v = 0, found = 0, last = latest(m->s), rc = 0;

	if (s->has_table)
		rc = query_int(db,
			       "SELECT version FROM schema_versions"
			       " WHERE owner = ?",
			       m->s->owner, &v, &found);
	if (rc)
		return rc;
	if (!found) {
		v = base < last ? base : last;
		s->todo = 1;
	} else if (v > last) {
		return newer(db, m->s->owner, v, last);
	}
	m->version = v;
	if (v < last)
		s->todo = 1;
	return 0;
}

static int plan(struct db *db, struct mig *m, size_t n, struct state *s)
{
	int base = 0, found, rc;
	size_t i;

	s->user_version = 0;
	s->has_table = 0;
	rc = query_int(db, "PRAGMA user_version", NULL, &s->user_version,
		       &found);
	if (rc)
		return rc;
	if (s->user_version > DB_USER_VERSION)
		return newer(db, "", s->user_version, DB_USER_VERSION);
	rc = query_int(db,
		       "SELECT count(*) FROM sqlite_master WHERE"
		       " type = 'table' AND name = 'schema_versions'",
		       NULL, &s->has_table, &found);
	if (!rc && s->has_table)
		rc = query_int(db,
			       "SELECT version FROM schema_versions"
			       " WHERE owner = '" BASE_ROW "'",
			       NULL, &base, &found);
	else
		base = s->user_version;
	s->todo = !s->has_table || s->user_version != DB_USER_VERSION;
	for (i = 0; i < n && !rc; i++)
		rc = owner_version(db, &m[i], base, s);
	return rc;
}

static int set_version(struct db *db, const char *owner, int v)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"INSERT INTO schema_versions (owner, version)"
			" VALUES (?, ?) ON CONFLICT(owner)"
			" DO UPDATE SET version = excluded.version");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, v);
	rc = sqlite3_step(st) == SQLITE_DONE
		     ? 0
		     : db_error(db, "saving a schema version");
	sqlite3_finalize(st);
	return rc;
}

static const struct db_step *next_step(const struct mig *m)
{
	size_t i;

	for (i = 0; i < m->s->nsteps; i++)
		if (m->s->steps[i].version > m->version)
			return &m->s->steps[i];
	return NULL;
}

/* Every pending step: the lowest version first, owners in list order. */
static int run_steps(struct db *db, struct mig *m, size_t n)
{
	const struct db_step *st;
	size_t i;
	int v, rc;

	for (;;) {
		v = 0;
		for (i = 0; i < n; i++) {
			st = next_step(&m[i]);
			if (st && (!v || st->version < v))
				v = st->version;
		}
		if (!v)
			return 0;
		for (i = 0; i < n; i++) {
			st = next_step(&m[i]);
			if (!st || st->version != v)
				continue;
			rc = db_exec(db, st->sql);
			if (rc)
				return pt_error_wrap(rc,
						     "migrating %s to "
						     "schema %d",
						     m[i].s->owner, v);
			m[i].version = v;
		}
	}
}

static int apply(struct db *db, struct mig *m, size_t n, const struct state *s)
{
	char pragma[64];
	size_t i;
	int rc = 0;

	if (!s->has_table) {
		rc = db_exec(db, "CREATE TABLE schema_versions ("
				 " owner TEXT PRIMARY KEY,"
				 " version INTEGER NOT NULL);");
		if (!rc)
			rc = set_version(db, BASE_ROW, s->user_version);
	}
	if (!rc)
		rc = run_steps(db, m, n);
	for (i = 0; i < n && !rc; i++)
		rc = set_version(db, m[i].s->owner, m[i].version);
	if (!rc && s->user_version != DB_USER_VERSION) {
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
			 DB_USER_VERSION);
		rc = db_exec(db, pragma);
	}
	return rc;
}

/* Plan again under the write lock: another process may have migrated. */
static int migrate_locked(struct db *db, struct mig *m, size_t n)
{
	struct state s;
	int rc;

	rc = db_begin(db);
	if (rc)
		return rc;
	rc = plan(db, m, n, &s);
	if (!rc && s.todo)
		rc = apply(db, m, n, &s);
	if (!rc)
		rc = db_commit(db);
	if (rc)
		db_rollback(db);
	return rc;
}

int db_migrate(struct db *db, const struct db_owners *owners)
{
	struct state s;
	struct mig *m;
	size_t n;
	int rc;

	rc = gather(&m, &n, owners);
	if (rc)
		return rc;
	rc = plan(db, m, n, &s);
	if (!rc && s.todo)
		rc = migrate_locked(db, m, n);
	free(m);
	return rc;
}
