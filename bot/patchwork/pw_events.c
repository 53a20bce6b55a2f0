/*
 * pw_events.c - Patchwork events (see patchwork.h): the per-project
 * poll, oldest first, and its restart-safe position in the state
 * database (tables pw_positions and pw_events_seen): each event is
 * handled in the transaction that marks it seen.  An event that cannot
 * be handled (no numeric id, no date, a NUL in a string, a payload
 * naming no usable object) is logged and skipped, not marked seen, and
 * the rest of its page goes on.  For patchwork.hold-bad-events seconds
 * (table pw_events_held) it also holds the position: the position does
 * not pass it, so every poll reads it again and a fault that was only
 * passing (a proxy, a server bug fixed) loses nothing; after that it is
 * given up, said once, and the position moves on.
 */
#include "bot/patchwork/patchwork.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/util/fnv.h"
#include "bot/patchwork/patchwork_int.h"
#include "bot/sys/log.h"

/* A date as a sortable string: "YYYY-MM-DDTHH:MM:SS.ffffff". */
static int date_key(const char *s, char out[96])
{
	int64_t secs;
	long us;
	struct tm tm;
	time_t t;
	int rc;

	rc = pw_parse_date(s, &secs, &us);
	if (rc)
		return rc;
	t = (time_t)secs;
	gmtime_r(&t, &tm);
	snprintf(out, 96, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, us);
	return 0;
}

/* ---- events -------------------------------------------------------- */

int pw_events_position(struct pw *pw, struct db *db, const char *project,
		       int64_t *last_id, char **last_date)
{
	sqlite3_stmt *st;
	int rc;

	*last_date = NULL;
	rc = db_prepare(&st, db,
			"SELECT last_id, last_date FROM pw_positions "
			"WHERE url = ? AND project = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, pw->base, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, project, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*last_id = sqlite3_column_int64(st, 0);
		*last_date =
			pt_strdup((const char *)sqlite3_column_text(st, 1));
		rc = *last_date ? 0 : PT_ENOMEM;
	} else if (rc == SQLITE_DONE) {
		rc = PT_ENOTFOUND;
	} else {
		rc = db_error(db, "reading the patchwork position");
	}
	sqlite3_finalize(st);
	return rc;
}

enum {
	POLL_SEEN,
	POLL_MARK,
	POLL_POSITION,
	POLL_FORGET,
	POLL_HELD_GET,
	POLL_HELD_PUT,
	POLL_HELD_GIVE_UP,
	POLL_HELD_UNMET,
	POLL_HELD_CLEAN,
	POLL_NSTMT
};

static const char *const poll_sql[POLL_NSTMT] = {
	"SELECT 1 FROM pw_events_seen WHERE url = ?1 AND project = ?2 AND"
	" event_id = ?3",
	"INSERT OR IGNORE INTO pw_events_seen (url, project, event_id, date)"
	" VALUES (?1, ?2, ?3, ?4)",
	"INSERT INTO pw_positions (url, project, last_id, last_date, updated)"
	" VALUES (?1, ?2, ?3, ?4, strftime('%s','now')) ON CONFLICT(url,"
	" project) DO UPDATE SET last_id = excluded.last_id, last_date ="
	" excluded.last_date, updated = excluded.updated",
	"DELETE FROM pw_events_seen WHERE url = ?1 AND project = ?2 AND"
	" ?3 >= 0 AND date < ?4",
	"SELECT first_seen, given_up FROM pw_events_held WHERE url = ?1 AND"
	" project = ?2 AND fp = ?3",
	"INSERT INTO pw_events_held (url, project, fp, first_seen, last_seen,"
	" met) VALUES (?1, ?2, ?3, ?4, ?4, 1) ON CONFLICT(url, project, fp) DO"
	" UPDATE SET last_seen = excluded.last_seen, met = 1",
	"UPDATE pw_events_held SET given_up = 1 WHERE url = ?1 AND"
	" project = ?2 AND fp = ?3",
	"UPDATE pw_events_held SET met = 0 WHERE url = ?1 AND project = ?2"
	" AND ?3 >= 0",
	/* after a whole walk: holds not met again are over; given-up ones
	 * are kept while their event may still come back */
	"DELETE FROM pw_events_held WHERE url = ?1 AND project = ?2 AND"
	" ?3 >= 0 AND met = 0 AND (given_up = 0 OR"
	" last_seen < ?4 - 30 * 86400)",
};

struct poll {
	struct pw *pw;
	struct db *db;
	const char *project;
	pw_event_cb cb;
	void *ctx;
	size_t handled;
	int64_t now;		      /* when the poll started */
	int held;		      /* an unusable event holds the position */
	char hold[96];		      /* ... at this date_key */
	char last_key[96];	      /* of the last usable event met */
	char boundary[96];	      /* date_key of the stored position */
	sqlite3_stmt *st[POLL_NSTMT]; /* poll_sql, prepared once a poll */
};

/* Run poll statement k with (url, project, id, a); *row: a row came. */
static int poll_step(struct poll *p, int k, int64_t id, const char *a, int *row)
{
	sqlite3_stmt *st = p->st[k];
	int rc;

	sqlite3_bind_text(st, 1, p->pw->base, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, p->project, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, id);
	if (a)
		sqlite3_bind_text(st, 4, a, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (row)
		*row = rc == SQLITE_ROW;
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE
		     ? 0
		     : db_error(p->db, "saving the patchwork position");
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

static int seen(struct poll *p, int64_t id, int *out)
{
	return poll_step(p, POLL_SEEN, id, NULL, out);
}

/* Record ev as seen and move the position, inside the open transaction. */
static int mark(struct poll *p, int64_t id, const char *date, const char *key)
{
	int rc;

	rc = poll_step(p, POLL_MARK, id, key, NULL);
	if (rc || strcmp(key, p->boundary) < 0)
		return rc;
	if (p->held && strcmp(key, p->hold) > 0)
		return 0; /* an unusable event before it holds the position */
	rc = poll_step(p, POLL_POSITION, id, date, NULL);
	if (rc)
		return rc;
	if (strcmp(key, p->boundary) > 0) {
		snprintf(p->boundary, sizeof(p->boundary), "%s", key);
		/* ids below the new boundary can never come back */
		rc = poll_step(p, POLL_FORGET, 0, key, NULL);
	}
	return rc;
}

void pw_event_from_json(struct pw_event *ev, const json_t *e)
{
	const json_t *pl = json_object_get(e, "payload");

	memset(ev, 0, sizeof(*ev));
	ev->json = e;
	ev->id = pw_int_of(e, "id");
	ev->category = pw_str_or(e, "category", "");
	ev->date = pw_str_or(e, "date", "");
	pw_parse_date(ev->date, &ev->time, NULL);
	ev->patch_id = pw_int_of(pl, "patch");
	ev->series_id = pw_int_of(pl, "series");
	ev->cover_id = pw_int_of(pl, "cover");
	ev->comment_id = pw_int_of(pl, "comment");
	ev->check_id = pw_int_of(pl, "check");
	ev->previous_state = pw_str_or(pl, "previous_state", NULL);
	ev->current_state = pw_str_or(pl, "current_state", NULL);
}

/*
 * One event: the callback's work and the event marked seen, in a
 * savepoint of the page's transaction, so that a failing event is
 * undone alone.
 */
static int poll_one(struct poll *p, const struct pw_event *ev, const char *key)
{
	int rc, own;

	rc = db_savepoint(p->db, "pw_event", &own);
	if (rc)
		return rc;
	rc = p->cb ? p->cb(ev, p->ctx) : 0;
	if (!rc)
		rc = mark(p, ev->id, ev->date, key);
	return db_release(p->db, "pw_event", own, rc);
}

/* 1 when a string in j holds a NUL (which C code would cut it at). */
static int has_nul(const json_t *j)
{
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_string(j))
		return strlen(json_string_value(j)) != json_string_length(j);
	if (json_is_object(j)) {
		json_object_foreach ((json_t *)j, key, v)
			if (has_nul(v))
				return 1;
	}
	json_array_foreach (j, i, v)
		if (has_nul(v))
			return 1;
	return 0;
}

/*
 * The payload objects an event names, and the category prefix that
 * needs each: a "series-completed" must name a series, and whatever is
 * named (absent and null aside) must have a positive id.
 */
static const struct {
	const char *key, *needed_by;
} payload_ids[] = {
	{ "series", "series-" }, { "patch", "patch-" }, { "cover", "cover-" },
	{ "comment", NULL },	 { "check", "check-" },
};

/* Why the payload of ev (from e) names no usable object, or NULL. */
static const char *bad_payload(const json_t *e, const struct pw_event *ev)
{
	static char why[64];
	const json_t *pl = json_object_get(e, "payload"), *v;
	const char *pre;
	size_t i;

	for (i = 0; i < sizeof(payload_ids) / sizeof(payload_ids[0]); i++) {
		v = json_object_get(pl, payload_ids[i].key);
		pre = payload_ids[i].needed_by;
		if ((!v || json_is_null(v)) &&
		    (!pre || strncmp(ev->category, pre, strlen(pre))))
			continue;
		if (pw_int_of(pl, payload_ids[i].key) > 0)
			continue;
		snprintf(why, sizeof(why), "its payload names no usable %s",
			 payload_ids[i].key);
		return why;
	}
	return NULL;
}

/*
 * Why ev (from e) cannot be handled, or NULL when it can.  *have_key:
 * key holds the event's date_key (also for some unusable ones).
 */
static const char *unusable(const json_t *e, const struct pw_event *ev,
			    char key[96], int *have_key)
{
	*have_key = !date_key(ev->date, key);
	if (!*have_key) {
		pt_error_clear();
		return "no valid date";
	}
	if (ev->id <= 0)
		return "no numeric id";
	if (has_nul(e))
		return "a NUL in a string";
	return bad_payload(e, ev);
}

/* The event's fingerprint: its project and its whole text. */
static uint64_t event_hash(const char *project, const json_t *e)
{
	char *text = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS);
	uint64_t h = fnv_bytes(FNV_INIT, project, strlen(project) + 1);

	if (text)
		h = fnv_bytes(h, text, strlen(text));
	free(text);
	return h;
}

/* 1 the first time this client meets the event of hash h (skipped). */
static int first_skip(struct pw *pw, uint64_t h)
{
	unsigned i, n;

	n = pw->nskipped < PW_SKIPPED_RING ? pw->nskipped : PW_SKIPPED_RING;
	for (i = 0; i < n; i++)
		if (pw->skipped[i] == h)
			return 0;
	pw->skipped[pw->nskipped++ % PW_SKIPPED_RING] = h;
	return 1;
}

/* Say that event i of a page is skipped, why, and what follows: once. */
static void log_skip(struct poll *p, uint64_t h, size_t i, const char *why,
		     const char *then)
{
	enum log_level lvl = first_skip(p->pw, h) ? LOG_LVL_WARN
						  : LOG_LVL_DEBUG;

	log_msg(lvl,
		"patchwork '%s': skipped event %zu of a page of project "
		"'%s': %s; %s",
		p->pw->base, i + 1, p->project, why, then);
}

/* Run a pw_events_held statement k for fingerprint fp at the poll's time. */
static int held_step(struct poll *p, int k, uint64_t fp, int64_t *first,
		     int *given_up, int *row)
{
	sqlite3_stmt *st = p->st[k];
	int rc;

	sqlite3_bind_text(st, 1, p->pw->base, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, p->project, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (int64_t)fp);
	if (sqlite3_bind_parameter_count(st) >= 4)
		sqlite3_bind_int64(st, 4, p->now);
	rc = sqlite3_step(st);
	if (row)
		*row = rc == SQLITE_ROW;
	if (rc == SQLITE_ROW && first) {
		*first = sqlite3_column_int64(st, 0);
		*given_up = sqlite3_column_int(st, 1);
	}
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE
		     ? 0
		     : db_error(p->db, "saving the held patchwork events");
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

/*
 * Event i (e) cannot be handled: skip it, and while it is younger than
 * the hold time, hold the position at its date (or, with no date, at
 * the last usable event before it).  Past that, give it up once.
 */
static int skip_event(struct poll *p, const json_t *e, size_t i,
		      const char *why, const char *key)
{
	uint64_t h = event_hash(p->project, e);
	int64_t first = p->now;
	int given_up = 0, row = 0, rc;

	if (!p->pw->hold_bad) {
		log_skip(p, h, i, why, "the position may pass it");
		return 0;
	}
	rc = held_step(p, POLL_HELD_GET, h, &first, &given_up, &row);
	if (!rc)
		rc = held_step(p, POLL_HELD_PUT, h, NULL, NULL, NULL);
	if (rc || given_up)
		return rc;
	if (p->now - first >= p->pw->hold_bad) {
		log_warn("patchwork '%s': gave up on event %zu of a page of "
			 "project '%s' (%s) after %lld s of polls; the "
			 "position moves past it",
			 p->pw->base, i + 1, p->project, why,
			 (long long)(p->now - first));
		return held_step(p, POLL_HELD_GIVE_UP, h, NULL, NULL, NULL);
	}
	log_skip(p, h, i, why,
		 "the position waits before it and it is read again each "
		 "poll (patchwork.hold-bad-events)");
	if (!p->held) {
		p->held = 1;
		snprintf(p->hold, sizeof(p->hold), "%s",
			 key ? key : p->last_key);
	}
	return 0;
}

/*
 * A page of events in one transaction: each event is handled exactly
 * once across crashes, as with one transaction each, for a commit a
 * page.  What came before a failing event commits; the error returns.
 */
static int poll_page(json_t *items, void *ctx)
{
	struct poll *p = ctx;
	struct pw_event ev;
	char key[96];
	const char *why;
	json_t *e;
	size_t i, done = 0;
	int rc, crc, dup, have_key;

	rc = db_begin(p->db);
	if (rc)
		return rc;
	json_array_foreach (items, i, e) {
		pw_event_from_json(&ev, e);
		why = unusable(e, &ev, key, &have_key);
		if (why) {
			rc = skip_event(p, e, i, why, have_key ? key : NULL);
			if (rc)
				break;
			continue;
		}
		snprintf(p->last_key, sizeof(p->last_key), "%s", key);
		rc = seen(p, ev.id, &dup);
		/* one seen before still moves the position (a hold is over) */
		if (!rc)
			rc = dup ? mark(p, ev.id, ev.date, key)
				 : poll_one(p, &ev, key);
		if (rc)
			break;
		done += !dup;
	}
	crc = db_commit(p->db);
	if (crc) {
		db_rollback(p->db);
		return crc;
	}
	p->handled += done;
	return rc;
}

/*
 * The N of an API version "1.N" as atoi read it: leading digits, 0 when
 * there are none; a number too large saturates (still a version >= 1).
 */
static long api_minor(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s)
		return 0;
	if (errno == ERANGE)
		return v > 0 ? LONG_MAX : 0;
	return v;
}

int pw_events_poll(struct pw *pw, struct db *db, const char *project,
		   const char *initial_since, pw_event_cb cb, void *ctx,
		   size_t *handled)
{
	struct poll p;
	struct buf path = BUF_INIT;
	char *last = NULL;
	const char *since, *ver;
	char since_buf[PW_SINCE_MAX];
	int64_t last_id = 0;
	int rc;

	memset(&p, 0, sizeof(p));
	p.pw = pw;
	p.db = db;
	p.project = project;
	p.cb = cb;
	p.ctx = ctx;
	if (handled)
		*handled = 0;
	rc = pw_api_version(pw, &ver);
	if (!rc && (strncmp(ver, "1.", 2) || api_minor(ver + 2) < 1))
		rc = pt_error_set(PT_EINVAL,
				  "patchwork '%s': API version %s has no "
				  "usable events; 1.1 or newer is needed",
				  pw->base, ver);
	if (rc)
		return rc;
	rc = pw_events_position(pw, db, project, &last_id, &last);
	if (rc == PT_ENOTFOUND)
		rc = 0;
	if (rc)
		return rc;
	since = last ? last : initial_since;
	if (since && (pw_since_param(since, since_buf) ||
		      date_key(since_buf, p.boundary))) {
		rc = pt_error_wrap(PT_EINVAL, "events of '%s'", project);
		goto out;
	}
	since = since ? since_buf : NULL;
	rc = buf_addstr(&path, "events/?project=");
	if (!rc)
		rc = pw_url_encode(&path, project);
	if (!rc)
		rc = buf_addstr(&path, "&order=date");
	if (!rc && since) {
		rc = buf_addstr(&path, "&since=");
		if (!rc)
			rc = pw_url_encode(&path, since);
	}
	if (!rc)
		rc = db_prepare_all(p.st, db, poll_sql, POLL_NSTMT);
	p.now = (int64_t)time(NULL);
	snprintf(p.last_key, sizeof(p.last_key), "%s", p.boundary);
	if (!rc)
		rc = held_step(&p, POLL_HELD_UNMET, 0, NULL, NULL, NULL);
	if (!rc)
		rc = pw_walk_list(pw, path.ptr, poll_page, &p);
	if (!rc) /* a whole walk: the holds not met again are over */
		rc = held_step(&p, POLL_HELD_CLEAN, 0, NULL, NULL, NULL);
	if (handled)
		*handled = p.handled;
out:
	db_finalize_all(p.st, POLL_NSTMT);
	free(last);
	buf_free(&path);
	return rc;
}
