/*
 * db_row.c - one-row queries (see db_row.h).
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
