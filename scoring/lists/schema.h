/*
 * schema.h - the tables scoring/lists owns (schema.c), for db_open().
 */
#ifndef PT_LISTS_SCHEMA_H
#define PT_LISTS_SCHEMA_H

#include "scoring/store/schema.h"

extern const struct db_schema lists_schema;

#endif
