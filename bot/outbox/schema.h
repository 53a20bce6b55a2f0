/*
 * schema.h - the tables bot/outbox owns (schema.c), for db_open().
 */
#ifndef PT_OUTBOX_SCHEMA_H
#define PT_OUTBOX_SCHEMA_H

#include "scoring/store/schema.h"

extern const struct db_schema outbox_schema;

#endif
