/*
 * schema.h - who owns which tables, and the steps that made them.
 *
 * Each room that keeps tables in the state database describes them in its
 * own schema.c as one struct db_schema: the owner's name (its row in the
 * schema_versions table) and its steps, each with the version that first
 * ran it and its SQL.  A step touches only its owner's tables (a table's
 * indexes and ALTERs are steps of the table's owner).  Versions count on
 * from the user_version numbering of the single migrations array this
 * replaced (1..12), so a database made before schema_versions existed
 * maps onto the owners unchanged; a new step takes the next number above
 * every step of every owner.  Append steps; never edit one that shipped.
 *
 * A consumer opens the database with its owners (db_open() in db.h): a
 * struct db_owners lists the owners of one layer and points at those of
 * the layer below, so the bot's list is its own rooms' on top of the
 * scoring library's (scoring/model/schema.h).  The store's own kv table
 * is always included.
 */
#ifndef PT_SCHEMA_H
#define PT_SCHEMA_H

#include <stddef.h>

/* The user_version every database is left at, for the binaries before
 * schema_versions: they open a database at their own latest version. */
#define DB_USER_VERSION 12

struct db_step {
	int version;	 /* > 0, strictly increasing within an owner */
	const char *sql; /* one or more statements */
};

struct db_schema {
	const char *owner; /* the room, e.g. "scoring/history" */
	const struct db_step *steps;
	size_t nsteps;
};

/*
 * Within one version the owners' steps run in list order, this list's
 * before below's; since no step touches another owner's table, the order
 * only decides where each table stands in sqlite_master.
 */
struct db_owners {
	const struct db_schema *const *schemas;
	size_t n;
	const struct db_owners *below; /* NULL at the bottom */
};

struct db;

/*
 * Bring db's schema up to date for the store and owners (NULL: the store
 * alone), in one transaction, and record each owner's version.  A
 * database without schema_versions takes every owner's version from its
 * user_version; an owner first seen later starts from that same value,
 * kept as the row "user_version".  A version newer than this build's is
 * refused with PT_EINVAL.  db_open() calls it.
 */
int db_migrate(struct db *db, const struct db_owners *owners);

#endif
