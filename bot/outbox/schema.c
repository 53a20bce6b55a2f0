/*
 * schema.c - the tables bot/outbox owns: work_queue, the durable queue of
 * work (a series to score, a reply to send), and outbox, the actions
 * intended, sent or failed, with their dedupe keys; both read and written
 * by store.c (and read by bot/loop/status.c); control_commands, the
 * maintainers' commands and what became of each (control.c).
 */
#include "bot/outbox/schema.h"

static const struct db_step outbox_steps[] = {
	/* 2: the durable work queue and the outbox of actions */
	{ 2,
	  "CREATE TABLE work_queue ("
	  " id INTEGER PRIMARY KEY, kind TEXT NOT NULL, key TEXT NOT NULL,"
	  " payload TEXT, state TEXT NOT NULL DEFAULT 'pending',"
	  " attempts INTEGER NOT NULL DEFAULT 0, not_before INTEGER NOT NULL"
	  " DEFAULT 0, last_error TEXT, created INTEGER NOT NULL,"
	  " updated INTEGER NOT NULL, UNIQUE (kind, key));"
	  "CREATE INDEX work_queue_ready ON work_queue (state, not_before);"
	  "CREATE TABLE outbox ("
	  " id INTEGER PRIMARY KEY, kind TEXT NOT NULL, dedupe_key TEXT NOT NULL"
	  " UNIQUE, subsystem TEXT, target TEXT NOT NULL, payload TEXT NOT NULL,"
	  " state TEXT NOT NULL DEFAULT 'intended', remote_ref TEXT,"
	  " last_error TEXT, created INTEGER NOT NULL, updated INTEGER NOT NULL);"
	  "CREATE INDEX outbox_state ON outbox (state);"
	  "CREATE INDEX outbox_rate ON outbox (subsystem, kind, created);" },
	/* 16: maintainers' commands (control.c) */
	{ 16, "CREATE TABLE control_commands ("
	      " id INTEGER PRIMARY KEY, message_id TEXT NOT NULL,"
	      " command TEXT NOT NULL, source TEXT NOT NULL, series_key TEXT,"
	      " subsystem TEXT, conf_hash TEXT, who TEXT,"
	      " state TEXT NOT NULL, reason TEXT, detail TEXT,"
	      " created INTEGER NOT NULL, UNIQUE (message_id, command));"
	      "CREATE INDEX control_commands_series ON control_commands"
	      " (command, state, series_key);" },
	/* 17: replies held for approval or an embargo (reply.mode,
	 * reply.embargo-hours): why, until when, about which patch, and
	 * who approved */
	{ 17, "ALTER TABLE outbox ADD COLUMN hold TEXT;"
	      "ALTER TABLE outbox ADD COLUMN release_at INTEGER;"
	      "ALTER TABLE outbox ADD COLUMN about TEXT;"
	      "ALTER TABLE outbox ADD COLUMN approved_by TEXT;" },
};

const struct db_schema outbox_schema = {
	"bot/outbox",
	outbox_steps,
	sizeof(outbox_steps) / sizeof(outbox_steps[0]),
};
