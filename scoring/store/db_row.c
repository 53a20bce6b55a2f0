/*
 * db_row.c - statements run once with integer parameters (db_row.h).
 */
#include "scoring/store/db_row.h"

int db_row_int64(int64_t *v, size_t n, struct db *db, const char *sql,
		 const int64_t *args, size_t nargs)
{
	sqlite3_stmt *st;
	size_t i;
	int rc, row;

	for (i = 0; i < n; i++)
		v[i] = 0;
	rc = db_prepare(&st, db, sql);
	if (rc)
		return rc;
	for (i = 0; i < nargs; i++)
		sqlite3_bind_int64(st, (int)i + 1, args[i]);
	row = sqlite3_step(st) == SQLITE_ROW;
	for (i = 0; row && i < n; i++)
		v[i] = sqlite3_column_int64(st, (int)i);
	sqlite3_finalize(st);
	return row;
}

int db_get_int64(int64_t *out, struct db *db, const char *sql, int64_t arg)
{
	int rc = db_row_int64(out, 1, db, sql, &arg, 1);

	return rc < 0 ? rc : 0;
}

int db_exec_id(struct db *db, const char *sql, int64_t arg, const char *what)
{
	sqlite3_stmt *st;
	int rc = db_prepare(&st, db, sql);

	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, arg);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(db, what);
	sqlite3_finalize(st);
	return rc;
}
