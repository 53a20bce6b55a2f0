/*
 * schema.c - the tables bot/patchwork owns: pw_positions, the restart-safe
 * position in each project's event stream, and pw_events_seen, the events
 * already handled, and pw_events_held, the events that could not be
 * handled and hold a position for a while (pw_events.c; bot/loop/status.c
 * reads the positions).
 */
#include "bot/patchwork/schema.h"

static const struct db_step patchwork_steps[] = {
	/* 5: event positions and the events already seen */
	{ 5,
	  "CREATE TABLE pw_positions ("
	  " url TEXT NOT NULL, project TEXT NOT NULL, last_id INTEGER NOT NULL,"
	  " last_date TEXT NOT NULL, updated INTEGER NOT NULL,"
	  " PRIMARY KEY (url, project));"
	  "CREATE TABLE pw_events_seen ("
	  " url TEXT NOT NULL, project TEXT NOT NULL, event_id INTEGER NOT NULL,"
	  " date TEXT NOT NULL, PRIMARY KEY (url, project, event_id));" },
	/* 15: events that could not be handled, holding the position */
	{ 15, "CREATE TABLE pw_events_held ("
	      " url TEXT NOT NULL, project TEXT NOT NULL, fp INTEGER NOT NULL,"
	      " first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
	      " given_up INTEGER NOT NULL DEFAULT 0,"
	      " met INTEGER NOT NULL DEFAULT 0,"
	      " PRIMARY KEY (url, project, fp));" },
};

const struct db_schema patchwork_schema = {
	"bot/patchwork",
	patchwork_steps,
	sizeof(patchwork_steps) / sizeof(patchwork_steps[0]),
};
