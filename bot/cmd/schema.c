/*
 * schema.c - the bot's list of table owners: the bot rooms that keep
 * state (bot/outbox, bot/patchwork, bot/mail), then the whole scoring
 * library's.  cli_db() and run's --dry-run copy open with it.  It owns
 * no table of its own.
 */
#include "bot/cmd/schema.h"

#include "bot/mail/schema.h"
#include "bot/outbox/schema.h"
#include "bot/patchwork/schema.h"
#include "scoring/model/schema.h"

/* Within one version, before scoring's: the order of schema 12 (schema.h). */
static const struct db_schema *const bot_schemas[] = {
	&outbox_schema,
	&patchwork_schema,
	&mail_schema,
};

const struct db_owners bot_db_owners = {
	bot_schemas,
	sizeof(bot_schemas) / sizeof(bot_schemas[0]),
	&scoring_db_owners,
};
