/*
 * schema.h - the owners the bot opens its database with (schema.c).
 */
#ifndef PT_BOT_SCHEMA_H
#define PT_BOT_SCHEMA_H

#include "scoring/store/schema.h"

/* bot/outbox, bot/patchwork and bot/mail, on top of scoring_db_owners. */
extern const struct db_owners bot_db_owners;

#endif
