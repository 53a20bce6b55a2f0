/*
 * status.c - what `patchtriage status` reports, read from the state
 * database alone (no network): whether a bot holds the state's lock, the
 * position in each Patchwork project's event stream and in each IMAP
 * folder, the work queue by kind and state, the actions of the day (UTC)
 * by kind and state (a check found on Patchwork already is 'skipped',
 * not 'sent'), the most recent current errors of work items and of
 * outgoing actions (an error older than the last success of its family
 * is only counted), how many checks and replies were left out for the
 * patch's age, and the maintainers' commands: the series and the
 * subsystems muted, the verdicts called wrong, every command by state.
 * One JSON object; the CLI prints it or a text view.
 */
#include "bot/loop/status.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/sys/daemon.h"

/* Each row of sql as an object keyed by the result's column names. */
static int rows(json_t *arr, struct db *db, const char *sql, int64_t arg)
{
	sqlite3_stmt *st;
	int rc, step, i, n;

	rc = db_prepare(&st, db, sql);
	if (rc)
		return rc;
	if (sqlite3_bind_parameter_count(st))
		sqlite3_bind_int64(st, 1, arg);
	n = sqlite3_column_count(st);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_object();

		for (i = 0; o && i < n; i++) {
			json_t *v;

			switch (sqlite3_column_type(st, i)) {
			case SQLITE_INTEGER:
				v = json_integer(sqlite3_column_int64(st, i));
				break;
			case SQLITE_NULL:
				v = json_null();
				break;
			default:
				v = json_string(
					(const char *)sqlite3_column_text(st,
									  i));
				if (!v) /* not UTF-8: keep it readable */
					v = json_string("(not UTF-8)");
			}
			json_object_set_new(o, sqlite3_column_name(st, i), v);
		}
		if (!o || json_array_append_new(arr, o)) {
			rc = PT_ENOMEM;
			break;
		}
	}
	if (!rc && step != SQLITE_DONE)
		rc = db_error(db, "reading the status");
	sqlite3_finalize(st);
	return rc;
}

static int add_rows(json_t *root, const char *key, struct db *db,
		    const char *sql, int64_t arg)
{
	json_t *arr = json_array();
	int rc = arr ? rows(arr, db, sql, arg) : PT_ENOMEM;

	if (!rc && json_object_set_new(root, key, arr))
		return PT_ENOMEM;
	if (rc)
		json_decref(arr);
	return rc;
}

static int64_t utc_midnight(void)
{
	time_t now = time(NULL);

	return (int64_t)(now - now % 86400);
}

static int add_lock(json_t *root, const char *state_dir)
{
	struct daemon_lock *l = NULL;
	int rc = daemon_lock_acquire(&l, state_dir);
	json_t *o = json_object();

	if (!o)
		return PT_ENOMEM;
	json_object_set_new(o, "running", json_boolean(rc == PT_EEXISTS));
	if (rc == PT_EEXISTS)
		json_object_set_new(o, "detail", json_string(pt_error_last()));
	daemon_lock_release(l);
	pt_error_clear();
	return json_object_set_new(root, "daemon", o) ? PT_ENOMEM : 0;
}

static int add_kv(json_t *root, struct db *db, const char *key,
		  const char *name)
{
	char *v = NULL;
	int rc = db_kv_get(db, key, &v);

	if (rc == PT_ENOTFOUND) {
		pt_error_clear();
		return json_object_set_new(root, name, json_null()) ? PT_ENOMEM
								    : 0;
	}
	if (!rc)
		rc = json_object_set_new(root, name, json_string(v)) ? PT_ENOMEM
								     : 0;
	free(v);
	return rc;
}

/* Each list of the status: its key and the query whose columns name it. */
static const struct {
	const char *key, *sql;
} lists[] = {
	{ "patchwork", "SELECT url, project, last_id, last_date, updated"
		       " FROM pw_positions ORDER BY url, project" },
	{ "imap", "SELECT account, folder, uidvalidity, last_uid, updated"
		  " FROM imap_folders ORDER BY account, folder" },
	{ "queue", "SELECT kind, state, count(*) AS count FROM work_queue"
		   " WHERE state != 'done' GROUP BY kind, state"
		   " ORDER BY kind, state" },
	/* ?1: midnight UTC */
	{ "actions_today", "SELECT kind, state, count(*) AS count FROM outbox"
			   " WHERE created >= ?1 GROUP BY kind, state"
			   " ORDER BY kind, state" },
	/*
	 * Current errors only.  A kind's family is its name up to the first
	 * '-' (pw-series and pw-patch: Patchwork; reply-risk and
	 * reply-stable: SMTP), the peer an error most likely came from.  An
	 * error is current unless work (an action) of its family finished
	 * (was sent, or found on the server) after the error was recorded;
	 * older ones are only counted (older_errors).
	 */
	{ "work_errors",
	  "WITH ok AS (SELECT substr(kind, 1, instr(kind || '-', '-') - 1)"
	  " AS family, max(updated) AS t FROM work_queue WHERE state = 'done'"
	  " GROUP BY family)"
	  " SELECT w.kind, w.key, w.state, w.attempts, w.last_error AS error,"
	  " w.updated FROM work_queue w LEFT JOIN ok ON ok.family ="
	  " substr(w.kind, 1, instr(w.kind || '-', '-') - 1)"
	  " WHERE w.last_error IS NOT NULL AND w.updated >= coalesce(ok.t, 0)"
	  " ORDER BY w.updated DESC, w.id DESC LIMIT 10" },
	{ "action_errors",
	  "WITH ok AS (SELECT substr(kind, 1, instr(kind || '-', '-') - 1)"
	  " AS family, max(updated) AS t FROM outbox WHERE state IN ('sent',"
	  " 'skipped') AND last_error IS NULL GROUP BY family)"
	  " SELECT o.kind, o.dedupe_key AS key, o.state, o.last_error AS error,"
	  " o.updated FROM outbox o LEFT JOIN ok ON ok.family ="
	  " substr(o.kind, 1, instr(o.kind || '-', '-') - 1)"
	  " WHERE o.last_error IS NOT NULL AND o.updated >= coalesce(ok.t, 0)"
	  " ORDER BY o.updated DESC, o.id DESC LIMIT 10" },
	{ "older_errors",
	  "WITH wok AS (SELECT substr(kind, 1, instr(kind || '-', '-') - 1)"
	  " AS family, max(updated) AS t FROM work_queue WHERE state = 'done'"
	  " GROUP BY family),"
	  " aok AS (SELECT substr(kind, 1, instr(kind || '-', '-') - 1)"
	  " AS family, max(updated) AS t FROM outbox WHERE state IN ('sent',"
	  " 'skipped') AND last_error IS NULL GROUP BY family)"
	  " SELECT 'work' AS of, count(*) AS count FROM work_queue w JOIN wok"
	  " ON wok.family = substr(w.kind, 1, instr(w.kind || '-', '-') - 1)"
	  " WHERE w.last_error IS NOT NULL AND w.updated < wok.t"
	  " UNION ALL SELECT 'actions', count(*) FROM outbox o JOIN aok"
	  " ON aok.family = substr(o.kind, 1, instr(o.kind || '-', '-') - 1)"
	  " WHERE o.last_error IS NOT NULL AND o.updated < aok.t" },
	/* maintainers' commands (bot/outbox/control.h) */
	{ "muted_series", "SELECT series_key AS series, subsystem, who,"
			  " message_id, source, created FROM control_commands"
			  " WHERE command = 'mute' AND state = 'acted'"
			  " ORDER BY id" },
	{ "muted_lists", "SELECT subsystem, who, message_id, source, created"
			 " FROM control_commands WHERE command = 'mute-list'"
			 " AND state = 'acted' ORDER BY id" },
	{ "commands", "SELECT command, state, count(*) AS count FROM"
		      " control_commands GROUP BY command, state"
		      " ORDER BY command, state" },
};

/* What the bot left out for age, over every pass of this state. */
static int add_old(json_t *root, struct db *db)
{
	static const char *const keys[2][2] = {
		{ "run/old-checks", "checks" }, { "run/old-replies", "replies" }
	};
	json_t *o = json_object();
	char *v;
	int i, rc = o ? 0 : PT_ENOMEM;

	for (i = 0; !rc && i < 2; i++) {
		v = NULL;
		rc = db_kv_get(db, keys[i][0], &v);
		if (rc == PT_ENOTFOUND) {
			pt_error_clear();
			rc = 0;
		}
		if (!rc &&
		    json_object_set_new(o, keys[i][1],
					json_integer(v ? strtoll(v, NULL, 10)
						       : 0)))
			rc = PT_ENOMEM;
		free(v);
	}
	if (!rc && json_object_set_new(root, "skipped_for_age", o))
		return PT_ENOMEM;
	if (rc)
		json_decref(o);
	return rc;
}

/* The count of "patchtriage: wrong" acted on: the verdicts called wrong. */
static int add_wrong(json_t *root, struct db *db)
{
	sqlite3_stmt *st;
	long long n = 0;
	int rc;

	rc = db_prepare(&st, db,
			"SELECT count(*) FROM control_commands WHERE"
			" command = 'wrong' AND state = 'acted'");
	if (rc)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	else
		rc = db_error(db, "reading control_commands");
	sqlite3_finalize(st);
	if (!rc && json_object_set_new(root, "wrong_verdicts", json_integer(n)))
		rc = PT_ENOMEM;
	return rc;
}

int status_collect(json_t **out, struct db *db, const char *state_dir)
{
	json_t *root = json_object();
	size_t i;
	int rc = root ? 0 : PT_ENOMEM;

	*out = NULL;
	if (!rc)
		rc = add_lock(root, state_dir);
	if (!rc)
		rc = add_kv(root, db, "run/last-pass", "last_pass");
	if (!rc)
		rc = add_old(root, db);
	if (!rc)
		rc = add_wrong(root, db);
	for (i = 0; !rc && i < sizeof(lists) / sizeof(*lists); i++)
		rc = add_rows(root, lists[i].key, db, lists[i].sql,
			      utc_midnight());
	if (rc)
		json_decref(root);
	else
		*out = root;
	return rc;
}
