/*
 * schema.h - the tables bot/patchwork owns (schema.c), for db_open().
 */
#ifndef PT_PATCHWORK_SCHEMA_H
#define PT_PATCHWORK_SCHEMA_H

#include "scoring/store/schema.h"

extern const struct db_schema patchwork_schema;

#endif
