/*
 * schema.h - the tables bot/mail owns (schema.c), for db_open().
 */
#ifndef PT_MAIL_SCHEMA_H
#define PT_MAIL_SCHEMA_H

#include "scoring/store/schema.h"

extern const struct db_schema mail_schema;

#endif
