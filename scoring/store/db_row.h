/*
 * db_row.h - statements run once with an integer parameter: one-row
 * queries (a count, a date or a row of sums) and statements that return
 * no rows, the prepare/bind/step/finalize that every room repeated for
 * them.  As the query callers always did, a step that fails reads as no
 * row.
 */
#ifndef PT_DB_ROW_H
#define PT_DB_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"

/*
 * Run SQL with ?1.. bound to args[0..nargs) and read its first row's
 * first n columns into v[0..n) (NULL reads as 0; all 0 with no row).
 * Returns 1 when there was a row, 0 when there was none, or the error
 * of preparing SQL.
 */
int db_row_int64(int64_t *v, size_t n, struct db *db, const char *sql,
		 const int64_t *args, size_t nargs);
/* The one value SQL returns with ?1 bound to arg, 0 when no row; 0 or error. */
int db_get_int64(int64_t *out, struct db *db, const char *sql, int64_t arg);
/* Run SQL (no result rows) with ?1 bound to arg; 0, or an error naming what. */
int db_exec_id(struct db *db, const char *sql, int64_t arg, const char *what);

#endif
