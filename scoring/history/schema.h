/*
 * schema.h - the tables scoring/history owns (schema.c), for db_open().
 */
#ifndef PT_HISTORY_SCHEMA_H
#define PT_HISTORY_SCHEMA_H

#include "scoring/store/schema.h"

extern const struct db_schema history_schema;

#endif
