/*
 * dbq.h - a unit test's look at the state database: the first column
 * of the first row of a query.
 */
#ifndef PT_DBQ_H
#define PT_DBQ_H

#include <stdint.h>

#include "scoring/store/db.h"

/* SQL's first value as an integer, -1 when it returns no row. */
int64_t dbq_int(struct db *db, const char *sql);

#endif
