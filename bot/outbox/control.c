/*
 * control.c - maintainers' commands (see control.h): the line parser and
 * the table control_commands.  The parser reads untrusted mail text:
 * every loop is bounded by len and nothing is copied.
 */
#include "bot/outbox/control.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const struct {
	unsigned bit;
	const char *name;
} cmds[] = {
	{ CONTROL_MUTE, "mute" },
	{ CONTROL_WRONG, "wrong" },
	{ CONTROL_MUTE_LIST, "mute-list" },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const char *const state_names[] = { "acted", "ignored", "lifted" };

const char *control_name(unsigned cmd)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (cmds[i].bit == cmd)
			return cmds[i].name;
	return NULL;
}

static unsigned control_bit(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return cmds[i].bit;
	return 0;
}

const char *control_state_name(enum control_state s)
{
	return (unsigned)s < 3 ? state_names[s] : "unknown";
}

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The command of one line [p, e) without its line end; 0 when none. */
static unsigned parse_line(const char *p, const char *e)
{
	static const char tag[] = "patchtriage";
	char word[16];
	size_t n = 0;
	size_t i;

	while (p < e && blank(*p))
		p++;
	if ((size_t)(e - p) < sizeof(tag) - 1 ||
	    strncasecmp(p, tag, sizeof(tag) - 1))
		return 0;
	p += sizeof(tag) - 1;
	while (p < e && blank(*p))
		p++;
	if (p == e || *p++ != ':')
		return 0;
	while (p < e && blank(*p))
		p++;
	while (p < e && !blank(*p)) {
		if (n + 1 >= sizeof(word))
			return 0;
		word[n++] = *p++;
	}
	word[n] = '\0';
	while (p < e && blank(*p))
		p++;
	if (p != e)
		return 0; /* more on the line: prose, not a command */
	for (i = 0; i < n; i++)
		if (word[i] >= 'A' && word[i] <= 'Z')
			word[i] = (char)(word[i] - 'A' + 'a');
	return control_bit(word);
}

unsigned control_parse(const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl, *e;
	unsigned mask = 0;

	while (text && p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		e = nl ? nl : end;
		if (e > p && e[-1] == '\r')
			e--;
		if (e - p == 3 && !memcmp(p, "-- ", 3))
			break; /* the signature */
		if (p < e && *p != '>')
			mask |= parse_line(p, e);
		p = nl ? nl + 1 : end;
	}
	return mask;
}

/* ---- the table ------------------------------------------------------ */

static int step_done(struct db *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(db, what);

	sqlite3_finalize(st);
	return rc;
}

int control_seen(struct db *db, const char *message_id, unsigned cmd, int *seen)
{
	sqlite3_stmt *st;
	int rc;

	*seen = 0;
	rc = db_prepare(&st, db,
			"SELECT 1 FROM control_commands"
			" WHERE message_id = ? AND command = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, message_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, control_name(cmd), -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*seen = 1;
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE
		     ? 0
		     : db_error(db, "reading control_commands");
	sqlite3_finalize(st);
	return rc;
}

int control_record(struct db *db, const struct control_row *r)
{
	sqlite3_stmt *st;
	int rc;

	if (!control_name(r->cmd))
		return pt_error_set(PT_EINVAL, "unknown control command %u",
				    r->cmd);
	rc = db_prepare(
		&st, db,
		"INSERT INTO control_commands (message_id, command,"
		" source, series_key, subsystem, conf_hash, who, state,"
		" reason, detail, created) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
		" ON CONFLICT (message_id, command) DO NOTHING");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, r->message_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, control_name(r->cmd), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, r->source, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, r->series_key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, r->subsystem, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, r->conf_hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, r->who, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, control_state_name(r->state), -1,
			  SQLITE_STATIC);
	sqlite3_bind_text(st, 9, r->reason, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, r->detail, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 11, r->created ? r->created : time(NULL));
	rc = step_done(db, st, "recording a control command");
	if (!rc && !sqlite3_changes(db->h))
		rc = pt_error_set(PT_EEXISTS,
				  "command '%s' of <%s> is "
				  "recorded already",
				  control_name(r->cmd), r->message_id);
	return rc;
}

/* The first column of a one-row query with two text parameters. */
static int who_of(struct db *db, const char *sql, const char *a, const char *b,
		  char **who)
{
	sqlite3_stmt *st;
	const unsigned char *t;
	int rc;

	*who = NULL;
	rc = db_prepare(&st, db, sql);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		t = sqlite3_column_text(st, 0);
		*who = pt_strdup(t ? (const char *)t : "?");
		rc = *who ? 0 : PT_ENOMEM;
	} else {
		rc = rc == SQLITE_DONE
			     ? 0
			     : db_error(db, "reading control_commands");
	}
	sqlite3_finalize(st);
	return rc;
}

int control_series_muted(struct db *db, const char *series_key, char **who)
{
	return who_of(db,
		      "SELECT who FROM control_commands WHERE command = 'mute'"
		      " AND state = 'acted' AND series_key = ?1 AND ?2 IS NULL"
		      " ORDER BY id LIMIT 1",
		      series_key, NULL, who);
}

int control_list_muted(struct db *db, const char *subsystem,
		       const char *conf_hash, char **who)
{
	return who_of(db,
		      "SELECT who FROM control_commands WHERE command ="
		      " 'mute-list' AND state = 'acted' AND subsystem = ?1"
		      " AND conf_hash = ?2 ORDER BY id LIMIT 1",
		      subsystem, conf_hash, who);
}

int control_lift_stale(struct db *db, const char *subsystem,
		       const char *conf_hash, int *lifted)
{
	sqlite3_stmt *st;
	int rc;

	*lifted = 0;
	rc = db_prepare(&st, db,
			"UPDATE control_commands SET state = 'lifted',"
			" reason = 'the subsystem''s configuration changed'"
			" WHERE command = 'mute-list' AND state = 'acted'"
			" AND subsystem = ? AND conf_hash IS NOT ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, subsystem, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, conf_hash, -1, SQLITE_STATIC);
	rc = step_done(db, st, "lifting mute-lists");
	if (!rc)
		*lifted = sqlite3_changes(db->h);
	return rc;
}

static const char *col(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static enum control_state state_parse(const char *s)
{
	int i;

	for (i = 0; s && i < 3; i++)
		if (!strcmp(s, state_names[i]))
			return (enum control_state)i;
	return CONTROL_IGNORED;
}

int control_foreach(struct db *db, unsigned mask, int state, control_cb cb,
		    void *ctx)
{
	struct control_row r;
	sqlite3_stmt *st;
	int rc, s;

	rc = db_prepare(&st, db,
			"SELECT id, message_id, command, source, series_key,"
			" subsystem, conf_hash, who, state, reason, detail,"
			" created FROM control_commands ORDER BY id");
	if (rc)
		return rc;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&r, 0, sizeof(r));
		r.id = sqlite3_column_int64(st, 0);
		r.message_id = col(st, 1);
		r.cmd = control_bit(col(st, 2) ? col(st, 2) : "");
		r.source = col(st, 3);
		r.series_key = col(st, 4);
		r.subsystem = col(st, 5);
		r.conf_hash = col(st, 6);
		r.who = col(st, 7);
		r.state = state_parse(col(st, 8));
		r.reason = col(st, 9);
		r.detail = col(st, 10);
		r.created = sqlite3_column_int64(st, 11);
		if (!(r.cmd & mask) || (state >= 0 && (int)r.state != state))
			continue;
		rc = cb(&r, ctx);
		if (rc)
			break;
	}
	if (!rc && s != SQLITE_DONE)
		rc = db_error(db, "reading control_commands");
	sqlite3_finalize(st);
	return rc;
}
