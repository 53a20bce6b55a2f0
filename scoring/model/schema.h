/*
 * schema.h - the tables scoring/model owns (schema.c), for db_open().
 */
#ifndef PT_MODEL_SCHEMA_H
#define PT_MODEL_SCHEMA_H

#include "scoring/store/schema.h"

extern const struct db_schema model_schema;

/* Every owner of the scoring library: model, lists and history. */
extern const struct db_owners scoring_db_owners;

#endif
