/*
 * patchwork.c - the Patchwork REST client (see patchwork.h).  It owns the
 * mapping from Patchwork's answers to clear errors (403 "Invalid token."
 * versus a user who maintains nothing, 400 field errors, 404 with the
 * URL), the Link-header walk that every list goes through (only to the
 * same server, so the token never leaves it), the event position in the
 * state database (tables pw_positions and pw_events_seen), and the check
 * dedupe rule that reads the server's checks before a post (before every
 * retry too; the first post of a check the caller knows is new goes
 * unread).
 */
#include "scoring/patch/mbox.h"
#include "bot/patchwork/patchwork.h"

#include <ctype.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/sys/log.h"

static const char *const pw_versions[] = { "1.3", "1.2", "1.1" };

struct pw {
	char *base;     /* "https://host[:port][/prefix]" without final / */
	char *origin;   /* "https://host[:port]" */
	char *project;
	char *version;
	char *api_root; /* base + "/api/" + version + "/" */
	size_t description_max;
	unsigned per_page;
	int max_attempts;
	int has_token;
	struct http_client *http;
};

/* ---- small helpers ------------------------------------------------- */

static const char *str_or(const json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : def;
}

static int64_t int_of(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_object(v))
		v = json_object_get(v, "id");
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

int pw_url_encode(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;

	for (; *s && !rc; s++) {
		unsigned char ch = (unsigned char)*s;

		if (isalnum(ch) || strchr("-._~", ch))
			rc = buf_addch(b, ch);
		else
			rc = buf_addf(b, "%%%c%c", hex[ch >> 4], hex[ch & 15]);
	}
	return rc;
}

static char *dupstr(const char *s)
{
	return s ? pt_strdup(s) : NULL;
}

/* ---- construction -------------------------------------------------- */

int pw_new(struct pw **out, const struct pw_opts *o)
{
	struct buf auth = BUF_INIT;
	struct pw *pw;
	const char *host;
	size_t len;
	int rc;

	*out = NULL;
	if (!o->url || (strncmp(o->url, "http://", 7) &&
			strncmp(o->url, "https://", 8)))
		return pt_error_set(PT_EINVAL,
				    "patchwork url '%s' is not an http(s) URL",
				    o->url ? o->url : "");
	pw = pt_calloc(1, sizeof(*pw));
	if (!pw)
		return PT_ENOMEM;
	len = strlen(o->url);
	while (len > 8 && o->url[len - 1] == '/')
		len--;
	pw->base = pt_strndup(o->url, len);
	pw->project = pt_strdup(o->project ? o->project : "");
	if (!pw->base || !pw->project) {
		rc = PT_ENOMEM;
		goto fail;
	}
	host = strstr(pw->base, "://") + 3;
	pw->origin = pt_strndup(pw->base,
				(size_t)(host - pw->base) + strcspn(host, "/"));
	if (!pw->origin) {
		rc = PT_ENOMEM;
		goto fail;
	}
	pw->description_max = o->description_max ? o->description_max
						 : PW_DEFAULT_DESCRIPTION_MAX;
	pw->per_page = o->per_page ? o->per_page : 100;
	if (pw->per_page > 250)
		pw->per_page = 250;
	pw->max_attempts = o->http.max_attempts > 0 ? o->http.max_attempts : 5;
	rc = http_client_new(&pw->http, &o->http);
	if (rc)
		goto fail;
	if (o->token && *o->token) {
		pw->has_token = 1;
		rc = buf_addf(&auth, "Token %s", o->token);
		if (!rc)
			rc = http_client_set_auth(pw->http, auth.ptr);
		if (auth.cap)
			memset(auth.ptr, 0, auth.cap);
		buf_free(&auth);
		if (rc)
			goto fail;
	}
	if (o->api_version) {
		pw->version = pt_strdup(o->api_version);
		if (!pw->version || buf_addf(&auth, "%s/api/%s/", pw->base,
					     pw->version)) {
			rc = PT_ENOMEM;
			goto fail;
		}
		pw->api_root = buf_detach(&auth, NULL);
	}
	*out = pw;
	return 0;
fail:
	pw_free(pw);
	return rc;
}

void pw_free(struct pw *pw)
{
	if (!pw)
		return;
	http_client_free(pw->http);
	free(pw->base);
	free(pw->origin);
	free(pw->project);
	free(pw->version);
	free(pw->api_root);
	free(pw);
}

struct http_client *pw_http(struct pw *pw)
{
	return pw->http;
}

/* ---- answers to errors --------------------------------------------- */

/* "field: msg; field: msg" from a 400 body, or the raw body. */
static void field_errors(struct buf *b, const json_t *j, const char *raw)
{
	const char *key;
	json_t *v, *m;
	size_t i;

	if (!json_is_object(j)) {
		buf_add(b, raw, strnlen(raw, 200));
		return;
	}
	json_object_foreach((json_t *)j, key, v) {
		if (b->len)
			buf_addstr(b, "; ");
		if (json_is_string(v)) {
			buf_addf(b, "%s: %s", key, json_string_value(v));
			continue;
		}
		buf_addf(b, "%s:", key);
		json_array_foreach(v, i, m)
			if (json_is_string(m))
				buf_addf(b, " %s", json_string_value(m));
	}
}

/* Turn a non-2xx answer into an error; 0 for 2xx/3xx. */
static int answer_error(struct pw *pw, const char *url,
			const struct http_response *r)
{
	struct buf b = BUF_INIT;
	json_t *j;
	const char *detail;
	char *u;
	int rc;

	if (r->status >= 200 && r->status < 400)
		return 0;
	u = http_url_for_message(url);
	if (!u)
		return PT_ENOMEM;
	j = json_loadb(r->body.ptr, r->body.len, 0, NULL);
	detail = str_or(j, "detail", NULL);
	if (r->status == 403 && detail && !strcmp(detail, "Invalid token."))
		rc = pt_error_set(PT_EAUTH,
				  "patchwork '%s' refused the token for "
				  "project '%s': check patchwork.token-file",
				  pw->base, pw->project);
	else if (r->status == 403 && !pw->has_token)
		rc = pt_error_set(PT_EAUTH,
				  "patchwork '%s' needs a token for '%s': set "
				  "patchwork.token-file (Patchwork: %s)",
				  pw->base, u, detail ? detail : "forbidden");
	else if (r->status == 403)
		rc = pt_error_set(PT_EAUTH,
				  "patchwork '%s' refused '%s': the token's "
				  "user is not a maintainer of project '%s' "
				  "(Patchwork: %s)",
				  pw->base, u, pw->project,
				  detail ? detail : "forbidden");
	else if (r->status == 400) {
		field_errors(&b, j, r->body.ptr);
		rc = pt_error_set(PT_EINVAL, "patchwork rejected '%s': %s", u,
				  b.ptr);
	} else if (r->status == 404)
		rc = pt_error_set(PT_ENOTFOUND,
				  "patchwork has no '%s' (404%s%s)", u,
				  detail ? ": " : "", detail ? detail : "");
	else if (r->status == 401)
		rc = pt_error_set(PT_EAUTH,
				  "patchwork '%s' asks for authentication on "
				  "'%s': check patchwork.token-file",
				  pw->base, u);
	else
		rc = pt_error_set(PT_ENET, "patchwork '%s' answered HTTP %ld%s%s",
				  u, r->status, detail ? ": " : "",
				  detail ? detail : "");
	json_decref(j);
	buf_free(&b);
	free(u);
	return rc;
}

/* The absolute URL of path, which must be on this server. */
static int resolve(struct pw *pw, const char *path, char **out)
{
	size_t olen = strlen(pw->origin);
	struct buf b = BUF_INIT;

	*out = NULL;
	if (!strncmp(path, "http://", 7) || !strncmp(path, "https://", 8)) {
		const char *auth = strstr(path, "://") + 3;
		const char *ours = strstr(pw->origin, "://") + 3;
		size_t alen = strcspn(auth, "/?#");

		/*
		 * Only this server gets the token.  A proxy that makes
		 * Patchwork build http:// links for an https:// site only
		 * changes the scheme: keep ours.
		 */
		if (alen != strlen(ours) || strncmp(auth, ours, alen))
			return pt_error_set(PT_EINVAL,
					    "patchwork '%s' pointed to another "
					    "server: '%s'",
					    pw->base, path);
		if (buf_add(&b, pw->origin, olen) ||
		    buf_addstr(&b, auth + alen))
			return PT_ENOMEM;
		*out = buf_detach(&b, NULL);
		return 0;
	}
	if (!pw->api_root) {
		const char *v;
		int rc = pw_api_version(pw, &v);

		if (rc)
			return rc;
	}
	if (buf_addstr(&b, pw->api_root) || buf_addstr(&b, path))
		return PT_ENOMEM;
	*out = buf_detach(&b, NULL);
	return 0;
}

static int request(struct pw *pw, const char *method, const char *url,
		   const char *body, int once, struct http_response *r)
{
	struct http_request req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	req.accept = "application/json";
	if (body) {
		req.content_type = "application/json";
		req.body = body;
		req.body_len = strlen(body);
	}
	req.once = once ? 1 : 0;
	rc = http_do(pw->http, &req, r);
	if (rc)
		return pt_error_wrap(rc, "patchwork");
	return answer_error(pw, url, r);
}

static int parse_json(const char *url, const struct http_response *r,
		      json_t **out)
{
	json_error_t err;
	char *u;
	int rc;

	*out = json_loadb(r->body.ptr, r->body.len, 0, &err);
	if (*out)
		return 0;
	u = http_url_for_message(url);
	rc = pt_error_set(PT_EINVAL,
			  "patchwork sent invalid JSON for '%s' (HTTP %ld, "
			  "%s, %zu bytes): %s at byte %d",
			  u ? u : url, r->status,
			  r->content_type ? r->content_type : "no type",
			  r->body.len, err.text, err.position);
	free(u);
	return rc;
}

static int get_json_url(struct pw *pw, const char *url, json_t **out,
			struct http_response *r)
{
	int rc;

	rc = request(pw, "GET", url, NULL, 0, r);
	if (!rc)
		rc = parse_json(url, r, out);
	return rc;
}

/* ---- API version --------------------------------------------------- */

int pw_api_version(struct pw *pw, const char **out)
{
	struct http_response r;
	struct buf url = BUF_INIT;
	json_t *j = NULL;
	size_t i;
	int rc;

	if (pw->version) {
		*out = pw->version;
		return 0;
	}
	http_response_init(&r);
	rc = buf_addf(&url, "%s/api/", pw->base);
	if (!rc)
		rc = get_json_url(pw, url.ptr, &j, &r);
	if (!rc && !json_object_get(j, "patches"))
		rc = pt_error_set(PT_EINVAL,
				  "'%s' does not look like Patchwork: no "
				  "'patches' in its API root",
				  url.ptr);
	json_decref(j);
	for (i = 0; !rc && i < sizeof(pw_versions) / sizeof(*pw_versions);
	     i++) {
		buf_reset(&url);
		http_response_clear(&r);
		rc = buf_addf(&url, "%s/api/%s/", pw->base, pw_versions[i]);
		if (!rc)
			rc = request(pw, "GET", url.ptr, NULL, 0, &r);
		if (rc == PT_ENOTFOUND) {
			rc = 0;
			continue;
		}
		if (rc)
			break;
		pw->version = pt_strdup(pw_versions[i]);
		pw->api_root = buf_detach(&url, NULL);
		if (!pw->version || !pw->api_root)
			rc = PT_ENOMEM;
		break;
	}
	if (!rc && !pw->version)
		rc = pt_error_set(PT_ENOTFOUND,
				  "patchwork '%s' offers no API version 1.1 "
				  "or newer (events need 1.1)",
				  pw->base);
	http_response_clear(&r);
	buf_free(&url);
	if (!rc)
		*out = pw->version;
	return rc;
}

/* ---- documents and lists ------------------------------------------- */

int pw_get_json(struct pw *pw, const char *path, json_t **out)
{
	struct http_response r;
	char *url = NULL;
	int rc;

	*out = NULL;
	http_response_init(&r);
	rc = resolve(pw, path, &url);
	if (!rc)
		rc = get_json_url(pw, url, out, &r);
	http_response_clear(&r);
	free(url);
	return rc;
}

int pw_get_text(struct pw *pw, const char *url, struct buf *out)
{
	struct http_request req;
	struct http_response r;
	char *abs = NULL;
	int rc;

	http_response_init(&r);
	rc = resolve(pw, url, &abs);
	if (rc)
		goto out;
	memset(&req, 0, sizeof(req));
	req.url = abs;
	req.follow = 1;
	rc = http_do(pw->http, &req, &r);
	if (rc)
		rc = pt_error_wrap(rc, "patchwork");
	else
		rc = answer_error(pw, abs, &r);
	if (!rc)
		rc = buf_add(out, r.body.ptr, r.body.len);
out:
	http_response_clear(&r);
	free(abs);
	return rc;
}

char *pw_link_next(const char *link)
{
	const char *p = link, *lt, *gt, *end;

	while (p && (lt = strchr(p, '<'))) {
		gt = strchr(lt, '>');
		if (!gt)
			return NULL;
		end = strchr(gt, '<');
		if (!end)
			end = gt + strlen(gt);
		/* the parameters between '>' and the next '<' */
		{
			char *params = pt_strndup(gt + 1, (size_t)(end - gt - 1));
			int hit;

			if (!params)
				return NULL;
			hit = strstr(params, "rel=\"next\"") ||
			      strstr(params, "rel=next");
			free(params);
			if (hit)
				return pt_strndup(lt + 1,
						  (size_t)(gt - lt - 1));
		}
		p = end;
	}
	return NULL;
}

typedef int (*page_cb)(json_t *items, void *ctx);

/* Add per_page to a URL that has none. */
static int with_per_page(struct pw *pw, const char *url, char **out)
{
	struct buf b = BUF_INIT;

	if (buf_addstr(&b, url))
		return PT_ENOMEM;
	if (!strstr(url, "per_page=") &&
	    buf_addf(&b, "%cper_page=%u", strchr(url, '?') ? '&' : '?',
		     pw->per_page))
		return PT_ENOMEM;
	*out = buf_detach(&b, NULL);
	return 0;
}

static int walk_list(struct pw *pw, const char *path, page_cb cb, void *ctx)
{
	struct http_response r;
	char *url = NULL, *abs = NULL, *next;
	json_t *page = NULL;
	size_t items = 0;
	int rc;

	http_response_init(&r);
	rc = resolve(pw, path, &abs);
	if (!rc)
		rc = with_per_page(pw, abs, &url);
	while (!rc && url) {
		http_response_clear(&r);
		rc = get_json_url(pw, url, &page, &r);
		if (rc)
			break;
		if (!json_is_array(page)) {
			rc = pt_error_set(PT_EINVAL,
					  "patchwork sent no list for '%s'",
					  url);
			break;
		}
		items += json_array_size(page);
		if (items > PW_MAX_LIST_ITEMS) {
			rc = pt_error_set(PT_ETOOBIG,
					  "patchwork list '%s' has more than "
					  "%u items",
					  abs, PW_MAX_LIST_ITEMS);
			break;
		}
		rc = cb(page, ctx);
		json_decref(page);
		page = NULL;
		if (rc)
			break;
		next = r.link ? pw_link_next(r.link) : NULL;
		free(url);
		url = NULL;
		if (next) {
			rc = resolve(pw, next, &url);
			free(next);
		}
	}
	json_decref(page);
	http_response_clear(&r);
	free(url);
	free(abs);
	return rc;
}

static int collect(json_t *items, void *ctx)
{
	return json_array_extend(ctx, items) ? PT_ENOMEM : 0;
}

int pw_get_list(struct pw *pw, const char *path, json_t **out)
{
	json_t *all = json_array();
	int rc;

	*out = NULL;
	if (!all)
		return PT_ENOMEM;
	rc = walk_list(pw, path, collect, all);
	if (rc) {
		json_decref(all);
		return rc;
	}
	*out = all;
	return 0;
}

/* ---- dates --------------------------------------------------------- */

int pw_parse_date(const char *s, int64_t *secs, long *usec)
{
	struct tm tm;
	const char *p;
	long us = 0;
	int n = 0, digits = 0;

	memset(&tm, 0, sizeof(tm));
	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year,
			 &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
			 &tm.tm_sec, &n) != 6 || n != 19)
		return pt_error_set(PT_EINVAL, "bad patchwork date '%s'",
				    s ? s : "");
	p = s + n;
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, digits++)
			if (digits < 6)
				us = us * 10 + (*p - '0');
		if (!digits)
			return pt_error_set(PT_EINVAL,
					    "bad patchwork date '%s'", s);
		for (; digits < 6; digits++)
			us *= 10;
	}
	if (*p == 'Z')
		p++;
	else if (!strcmp(p, "+00:00"))
		p += 6;
	if (*p || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
	    tm.tm_sec > 60)
		return pt_error_set(PT_EINVAL, "bad patchwork date '%s'", s);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*secs = (int64_t)timegm(&tm);
	if (usec)
		*usec = us;
	return 0;
}

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
		*last_date = pt_strdup(
			(const char *)sqlite3_column_text(st, 1));
		rc = *last_date ? 0 : PT_ENOMEM;
	} else if (rc == SQLITE_DONE) {
		rc = PT_ENOTFOUND;
	} else {
		rc = db_error(db, "reading the patchwork position");
	}
	sqlite3_finalize(st);
	return rc;
}

enum { POLL_SEEN, POLL_MARK, POLL_POSITION, POLL_FORGET, POLL_NSTMT };

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
};

struct poll {
	struct pw *pw;
	struct db *db;
	const char *project;
	pw_event_cb cb;
	void *ctx;
	size_t handled;
	char boundary[96];  /* date_key of the stored position */
	sqlite3_stmt *st[POLL_NSTMT]; /* poll_sql, prepared once a poll */
};

/* Run poll statement k with (url, project, id, a); *row: a row came. */
static int poll_step(struct poll *p, int k, int64_t id, const char *a,
		     int *row)
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
		     ? 0 : db_error(p->db, "saving the patchwork position");
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

static int seen(struct poll *p, int64_t id, int *out)
{
	return poll_step(p, POLL_SEEN, id, NULL, out);
}

/* Record ev as seen and move the position, inside the open transaction. */
static int mark(struct poll *p, int64_t id, const char *date,
		const char *key)
{
	int rc;

	rc = poll_step(p, POLL_MARK, id, key, NULL);
	if (rc || strcmp(key, p->boundary) < 0)
		return rc;
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
	ev->id = int_of(e, "id");
	ev->category = str_or(e, "category", "");
	ev->date = str_or(e, "date", "");
	pw_parse_date(ev->date, &ev->time, NULL);
	ev->patch_id = int_of(pl, "patch");
	ev->series_id = int_of(pl, "series");
	ev->cover_id = int_of(pl, "cover");
	ev->comment_id = int_of(pl, "comment");
	ev->check_id = int_of(pl, "check");
	ev->previous_state = str_or(pl, "previous_state", NULL);
	ev->current_state = str_or(pl, "current_state", NULL);
}

/*
 * One event: the callback's work and the event marked seen, in a
 * savepoint of the page's transaction, so that a failing event is
 * undone alone.
 */
static int poll_one(struct poll *p, const struct pw_event *ev,
		    const char *key)
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
	json_t *e;
	size_t i, done = 0;
	int rc, crc, dup;

	rc = db_begin(p->db);
	if (rc)
		return rc;
	json_array_foreach(items, i, e) {
		pw_event_from_json(&ev, e);
		if (ev.id <= 0 || date_key(ev.date, key)) {
			rc = pt_error_set(PT_EINVAL,
					  "patchwork '%s' sent an event "
					  "without id or date",
					  p->pw->base);
			break;
		}
		rc = seen(p, ev.id, &dup);
		if (!rc && !dup)
			rc = poll_one(p, &ev, key);
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

int pw_events_poll(struct pw *pw, struct db *db, const char *project,
		   const char *initial_since, pw_event_cb cb, void *ctx,
		   size_t *handled)
{
	struct poll p;
	struct buf path = BUF_INIT;
	char *last = NULL;
	const char *since, *ver;
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
	if (!rc && (strncmp(ver, "1.", 2) || atoi(ver + 2) < 1))
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
	if (since && date_key(since, p.boundary)) {
		rc = pt_error_wrap(PT_EINVAL, "events of '%s'", project);
		goto out;
	}
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
	if (!rc)
		rc = walk_list(pw, path.ptr, poll_page, &p);
	if (handled)
		*handled = p.handled;
out:
	db_finalize_all(p.st, POLL_NSTMT);
	free(last);
	buf_free(&path);
	return rc;
}

/* ---- series and patches -------------------------------------------- */

void pw_patch_clear(struct pw_patch *p)
{
	if (!p)
		return;
	json_decref(p->json);
	json_decref(p->comments);
	free(p->mbox);
	patch_free(p->parsed);
	memset(p, 0, sizeof(*p));
}

/* The first message of the mbox to out->parsed. */
static int parse_first(const char *msg, size_t len, size_t index, void *ctx)
{
	struct pw_patch *p = ctx;
	int rc;

	(void)index;
	rc = patch_from_mail(&p->parsed, msg, len);
	return rc ? rc : 1;
}

static int parse_mbox(struct pw_patch *p)
{
	int rc;

	rc = mbox_foreach(p->mbox, p->mbox_len, parse_first, p);
	if (rc < 0)
		return pt_error_wrap(rc, "mbox of patch %lld",
				     (long long)p->id);
	if (!p->parsed)
		return pt_error_set(PT_EINVAL,
				    "mbox of patch %lld has no message",
				    (long long)p->id);
	return 0;
}

/* GET an mbox into p->mbox and parse its first message. */
static int get_mbox(struct pw *pw, const char *url, struct pw_patch *p)
{
	struct buf m = BUF_INIT;
	int rc;

	buf_init(&m, PT_MAX_MAIL_SIZE);
	rc = pw_get_text(pw, url, &m);
	if (!rc) {
		p->mbox = buf_detach(&m, &p->mbox_len);
		rc = p->mbox ? parse_mbox(p) : PT_ENOMEM;
	}
	buf_free(&m);
	return rc;
}

int pw_patch_fetch(struct pw *pw, int64_t id, struct pw_patch *out)
{
	struct buf b = BUF_INIT;
	const char *curl;
	int rc;

	memset(out, 0, sizeof(*out));
	out->id = id;
	rc = buf_addf(&b, "patches/%lld/", (long long)id);
	if (!rc)
		rc = pw_get_json(pw, b.ptr, &out->json);
	if (rc)
		goto out;
	curl = str_or(out->json, "comments", NULL);
	buf_reset(&b);
	if (!curl)
		rc = buf_addf(&b, "patches/%lld/comments/", (long long)id);
	if (!rc)
		rc = pw_get_list(pw, curl ? curl : b.ptr, &out->comments);
	if (rc)
		goto out;
	/* /patch/ID/mbox/ redirects to the project's msgid URL */
	buf_reset(&b);
	rc = buf_addf(&b, "%s/patch/%lld/mbox/", pw->base, (long long)id);
	if (!rc)
		rc = get_mbox(pw, b.ptr, out);
out:
	buf_free(&b);
	if (rc)
		pw_patch_clear(out);
	return rc;
}

void pw_series_free(struct pw_series *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->npatches; i++)
		pw_patch_clear(&s->patches[i]);
	free(s->patches);
	json_decref(s->json);
	json_decref(s->cover);
	json_decref(s->cover_comments);
	free(s);
}

/* A positive "id" of o (an object) into *id; 0 when o is not an object. */
static int id_of(const json_t *o, const char *what, int64_t *id)
{
	const json_t *v = json_object_get(o, "id");

	*id = 0;
	if (!json_is_object(o))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) <= 0)
		return pt_error_set(PT_EINVAL, "patchwork %s without a "
				    "positive id", what);
	*id = (int64_t)json_integer_value(v);
	return 0;
}

int pw_series_ids(int64_t **ids, size_t *n, int64_t *cover_id,
		  const json_t *series)
{
	const json_t *list = json_object_get(series, "patches"), *mini;
	size_t i;
	int rc;

	*ids = NULL;
	*n = 0;
	rc = id_of(json_object_get(series, "cover_letter"), "cover letter",
		   cover_id);
	if (rc || !json_array_size(list))
		return rc;
	*ids = pt_calloc(json_array_size(list), sizeof(**ids));
	if (!*ids)
		return PT_ENOMEM;
	json_array_foreach(list, i, mini) {
		rc = id_of(mini, "series patch", &(*ids)[i]);
		if (!rc && !(*ids)[i])
			rc = pt_error_set(PT_EINVAL, "patchwork series patch "
					  "is not an object");
		if (rc)
			break;
	}
	if (rc) {
		free(*ids);
		*ids = NULL;
		return rc;
	}
	*n = json_array_size(list);
	return 0;
}

/* A new *s with /series/ID/ and the ids it lists (see pw_series_ids). */
static int series_doc(struct pw *pw, int64_t id, struct pw_series **s,
		      int64_t **ids, size_t *n, int64_t *cover)
{
	struct buf b = BUF_INIT;
	int rc;

	*ids = NULL;
	*n = 0;
	*cover = 0;
	*s = pt_calloc(1, sizeof(**s));
	if (!*s)
		return PT_ENOMEM;
	(*s)->id = id;
	rc = buf_addf(&b, "series/%lld/", (long long)id);
	if (!rc)
		rc = pw_get_json(pw, b.ptr, &(*s)->json);
	if (!rc)
		rc = pw_series_ids(ids, n, cover, (*s)->json);
	buf_free(&b);
	return rc;
}

int pw_series_fetch(struct pw *pw, int64_t id, struct pw_series **out)
{
	struct pw_series *s;
	struct buf b = BUF_INIT;
	int64_t *ids = NULL, cover;
	size_t i, n;
	int rc;

	*out = NULL;
	rc = series_doc(pw, id, &s, &ids, &n, &cover);
	if (rc)
		goto out;
	if (cover) {
		buf_reset(&b);
		rc = buf_addf(&b, "covers/%lld/", (long long)cover);
		if (!rc)
			rc = pw_get_json(pw, b.ptr, &s->cover);
		if (!rc)
			rc = pw_get_list(pw,
					 str_or(s->cover, "comments", ""),
					 &s->cover_comments);
		if (rc)
			goto out;
	}
	if (n) {
		s->patches = pt_calloc(n, sizeof(*s->patches));
		if (!s->patches) {
			rc = PT_ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		rc = pw_patch_fetch(pw, ids[i], &s->patches[i]);
		if (rc)
			goto out;
		s->npatches++;
	}
out:
	free(ids);
	buf_free(&b);
	if (rc) {
		pw_series_free(s);
		return pt_error_wrap(rc, "series %lld", (long long)id);
	}
	*out = s;
	return 0;
}

/* ---- a series' mails only ----------------------------------------- */

/* "<id>" of a series patch against a parsed Message-ID without angles. */
static int same_msgid(const char *listed, const char *parsed)
{
	size_t n;

	if (!listed || !parsed)
		return 0;
	if (*listed == '<')
		listed++;
	n = strlen(parsed);
	return !strncmp(listed, parsed, n) &&
	       (!listed[n] || (listed[n] == '>' && !listed[n + 1]));
}

struct mail_map {
	struct pw_series *s;
	const json_t *list;   /* the series' "patches" */
};

/* A message of the series mbox to the patch with its Message-ID. */
static int map_mail(const char *msg, size_t len, size_t index, void *ctx)
{
	struct mail_map *m = ctx;
	struct patch *tmp = NULL;
	size_t i;

	(void)index;
	if (patch_from_mail(&tmp, msg, len)) {
		pt_error_clear(); /* left to the patch's own mbox */
		return 0;
	}
	for (i = 0; i < m->s->npatches; i++) {
		struct pw_patch *p = &m->s->patches[i];
		const char *id = str_or(json_array_get(m->list, i), "msgid",
					NULL);

		if (p->parsed || !same_msgid(id, tmp->message_id))
			continue;
		p->mbox = pt_strndup(msg, len);
		if (!p->mbox) {
			patch_free(tmp);
			return PT_ENOMEM;
		}
		p->mbox_len = len;
		p->parsed = tmp;
		return 0;
	}
	patch_free(tmp);
	return 0;
}

/* Patches the series mbox did not give, from their own mbox URL. */
static int fetch_missing(struct pw *pw, struct pw_series *s,
			 const json_t *list)
{
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < s->npatches; i++) {
		struct pw_patch *p = &s->patches[i];
		const char *url = str_or(json_array_get(list, i), "mbox", NULL);

		if (p->parsed)
			continue;
		if (!url)
			return pt_error_set(PT_EINVAL, "patchwork series patch "
					    "%lld has no mbox",
					    (long long)p->id);
		rc = get_mbox(pw, url, p);
	}
	return rc;
}

/* The series mbox split onto s->patches (ids set), then what is missing. */
static int series_mails(struct pw *pw, struct pw_series *s)
{
	const json_t *list = json_object_get(s->json, "patches");
	const char *url = str_or(s->json, "mbox", NULL);
	struct mail_map map = { s, list };
	struct buf b = BUF_INIT, m = BUF_INIT;
	int rc = 0;

	if (!url) {
		rc = buf_addf(&b, "%s/series/%lld/mbox/", pw->base,
			      (long long)s->id);
		url = b.ptr;
	}
	buf_init(&m, PT_MAX_HTTP_BODY);
	if (!rc)
		rc = pw_get_text(pw, url, &m);
	if (!rc && m.len)
		rc = mbox_foreach(m.ptr, m.len, map_mail, &map);
	buf_free(&m);
	buf_free(&b);
	if (!rc)
		rc = fetch_missing(pw, s, list);
	return rc;
}

int pw_series_fetch_mails(struct pw *pw, int64_t id, struct pw_series **out)
{
	struct pw_series *s;
	int64_t *ids = NULL, cover;
	size_t i, n = 0;
	int rc;

	*out = NULL;
	rc = series_doc(pw, id, &s, &ids, &n, &cover);
	if (!rc && cover)
		s->cover = json_incref(json_object_get(s->json,
						       "cover_letter"));
	if (rc || !n ||
	    !json_is_true(json_object_get(s->json, "received_all")))
		goto out;
	s->patches = pt_calloc(n, sizeof(*s->patches));
	if (!s->patches) {
		rc = PT_ENOMEM;
		goto out;
	}
	s->npatches = n;
	for (i = 0; i < n; i++)
		s->patches[i].id = ids[i];
	rc = series_mails(pw, s);
out:
	free(ids);
	if (rc) {
		pw_series_free(s);
		return pt_error_wrap(rc, "series %lld", (long long)id);
	}
	*out = s;
	return 0;
}

/* ---- checks -------------------------------------------------------- */

void pw_checks_free(struct pw_check *c, size_t n)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < n; i++) {
		free(c[i].state);
		free(c[i].context);
		free(c[i].description);
		free(c[i].target_url);
		free(c[i].date);
		free(c[i].user);
	}
	free(c);
}

static int check_from_json(struct pw_check *c, const json_t *j)
{
	c->id = int_of(j, "id");
	c->state = dupstr(str_or(j, "state", ""));
	c->context = dupstr(str_or(j, "context", ""));
	c->description = dupstr(str_or(j, "description", NULL));
	c->target_url = dupstr(str_or(j, "target_url", NULL));
	c->date = dupstr(str_or(j, "date", ""));
	c->user = dupstr(str_or(json_object_get(j, "user"), "username", ""));
	return c->state && c->context && c->date && c->user ? 0 : PT_ENOMEM;
}

int pw_checks_from_json(struct pw_check **out, size_t *n, const json_t *list)
{
	struct pw_check *c = NULL;
	const json_t *j;
	size_t i, len = json_array_size(list);
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!json_is_array(list))
		return pt_error_set(PT_EINVAL, "patchwork checks are not a "
				    "list");
	if (len) {
		c = pt_calloc(len, sizeof(*c));
		if (!c)
			return PT_ENOMEM;
	}
	json_array_foreach(list, i, j) {
		rc = check_from_json(&c[i], j);
		if (rc)
			break;
	}
	if (rc) {
		pw_checks_free(c, len);
		return rc;
	}
	*out = c;
	*n = len;
	return 0;
}

int pw_checks_list(struct pw *pw, int64_t patch_id, struct pw_check **out,
		   size_t *n)
{
	struct buf b = BUF_INIT;
	json_t *list = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	rc = buf_addf(&b, "patches/%lld/checks/", (long long)patch_id);
	if (!rc)
		rc = pw_get_list(pw, b.ptr, &list);
	if (!rc)
		rc = pw_checks_from_json(out, n, list);
	json_decref(list);
	buf_free(&b);
	return rc;
}

char *pw_description_cap(const char *d, size_t max)
{
	size_t len;

	if (!d)
		return NULL;
	len = strlen(d);
	if (len <= max)
		return pt_strdup(d);
	/*
	 * Do not cut a UTF-8 sequence: back up over at most three
	 * continuation bytes to the lead byte.  Anything else is not
	 * UTF-8 and is cut at max.
	 */
	for (len = max; len > 0 && max - len < 3 &&
			((unsigned char)d[len] & 0xc0) == 0x80;
	     len--)
		;
	if (((unsigned char)d[len] & 0xc0) != 0xc0)
		len = ((unsigned char)d[max] & 0xc0) == 0x80 ? max : len;
	return pt_strndup(d, len);
}

static int same_text(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/*
 * Whether the newest check in this context (the one Patchwork shows)
 * has this state and description.  An older one with the same text does
 * not count: after A, B, posting A again must reach the server.
 */
static int find_same(struct pw *pw, int64_t patch_id, const char *state,
		     const char *context, const char *desc, int64_t *id,
		     int *found)
{
	struct pw_check *c;
	size_t n, i, newest = SIZE_MAX;
	int rc;

	*found = 0;
	rc = pw_checks_list(pw, patch_id, &c, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++)
		if (!strcmp(c[i].context, context) &&
		    (newest == SIZE_MAX || c[i].id > c[newest].id))
			newest = i;
	if (newest != SIZE_MAX && !strcmp(c[newest].state, state) &&
	    same_text(c[newest].description, desc)) {
		*found = 1;
		*id = c[newest].id;
	}
	pw_checks_free(c, n);
	return 0;
}

static int check_body(struct buf *b, const char *state, const char *context,
		      const char *desc, const char *target_url)
{
	json_t *o = json_object();
	char *s;
	int rc = 0;

	if (!o)
		return PT_ENOMEM;
	if (json_object_set_new(o, "state", json_string(state)) ||
	    json_object_set_new(o, "context", json_string(context)) ||
	    (desc && json_object_set_new(o, "description",
					 json_string(desc))) ||
	    (target_url && json_object_set_new(o, "target_url",
					       json_string(target_url))))
		rc = pt_error_set(PT_EINVAL,
				  "check text is not valid UTF-8");
	s = rc ? NULL : json_dumps(o, JSON_COMPACT);
	if (!rc && !s)
		rc = PT_ENOMEM;
	if (!rc)
		rc = buf_addstr(b, s);
	free(s);
	json_decref(o);
	return rc;
}

static int check_post(struct pw *pw, int64_t patch_id, const char *state,
		      const char *context, const char *description,
		      const char *target_url, int read_first, int *posted,
		      int64_t *check_id)
{
	struct http_response r;
	struct buf body = BUF_INIT, path = BUF_INIT;
	char *desc = NULL, *url = NULL;
	json_t *j = NULL;
	int64_t id = 0;
	int rc, attempt, found;
	long wait;

	*posted = 0;
	http_response_init(&r);
	desc = pw_description_cap(description, pw->description_max);
	if (description && !desc)
		return PT_ENOMEM;
	rc = check_body(&body, state, context, desc, target_url);
	if (!rc)
		rc = buf_addf(&path, "patches/%lld/checks/",
			      (long long)patch_id);
	if (!rc)
		rc = resolve(pw, path.ptr, &url);
	for (attempt = 1; !rc; attempt++) {
		found = 0;
		if (read_first || attempt > 1)
			rc = find_same(pw, patch_id, state, context, desc, &id,
				       &found);
		if (rc || found)
			break;
		http_response_clear(&r);
		rc = request(pw, "POST", url, body.ptr, 1, &r);
		if (!rc) {
			rc = parse_json(url, &r, &j);
			if (!rc) {
				id = int_of(j, "id");
				*posted = 1;
			}
			break;
		}
		if ((rc != PT_EAGAIN && rc != PT_ENET) ||
		    attempt >= pw->max_attempts)
			break;
		wait = http_retry_after_ms(r.retry_after, (long)time(NULL));
		if (wait < 0)
			wait = http_backoff_ms(pw->http, attempt + 1);
		rc = http_sleep_ms(wait);
	}
	if (rc)
		rc = pt_error_wrap(rc, "posting check '%s' on patch %lld",
				   context, (long long)patch_id);
	else if (check_id)
		*check_id = id;
	json_decref(j);
	http_response_clear(&r);
	buf_free(&body);
	buf_free(&path);
	free(desc);
	free(url);
	return rc;
}

int pw_check_post(struct pw *pw, int64_t patch_id, const char *state,
		  const char *context, const char *description,
		  const char *target_url, int *posted, int64_t *check_id)
{
	return check_post(pw, patch_id, state, context, description,
			  target_url, 1, posted, check_id);
}

int pw_check_post_new(struct pw *pw, int64_t patch_id, const char *state,
		      const char *context, const char *description,
		      const char *target_url, int *posted, int64_t *check_id)
{
	return check_post(pw, patch_id, state, context, description,
			  target_url, 0, posted, check_id);
}

int pw_same_description(const struct pw *pw, const char *a, const char *b)
{
	char *ca = pw_description_cap(a, pw->description_max);
	char *cb = pw_description_cap(b, pw->description_max);
	int same = same_text(ca, cb);

	free(ca);
	free(cb);
	return same;
}

/* ---- configuration ------------------------------------------------ */

int pw_from_config(struct pw **out, struct config *cfg, const char *project,
		   char **project_out, int *insecure)
{
	struct pw_opts o;
	char *url = NULL, *token = NULL, *ver = NULL;
	long timeout, ctimeout, attempts, budget, backoff, dmax, per_page;
	int verify, rc;

	*out = NULL;
	*project_out = NULL;
	*insecure = 0;
	memset(&o, 0, sizeof(o));
	rc = config_get_string(cfg, "patchwork.url", NULL, &url);
	if (!rc && !url)
		rc = pt_error_set(PT_EINVAL,
				  "no patchwork.url in the configuration "
				  "'%s'",
				  config_path(cfg));
	if (!rc)
		rc = config_get_string(cfg, "patchwork.project", NULL,
				       project_out);
	if (!rc && project) {
		free(*project_out);
		*project_out = pt_strdup(project);
		rc = *project_out ? 0 : PT_ENOMEM;
	}
	if (!rc)
		rc = config_get_string(cfg, "patchwork.api-version", NULL,
				       &ver);
	if (!rc)
		rc = config_get_bool(cfg, "patchwork.ssl-verify", 1, &verify);
	if (!rc)
		rc = config_get_int(cfg, "patchwork.timeout", 60, &timeout);
	if (!rc)
		rc = config_get_int(cfg, "patchwork.connect-timeout", 10,
				    &ctimeout);
	if (!rc)
		rc = config_get_int(cfg, "patchwork.max-attempts", 5,
				    &attempts);
	if (!rc)
		rc = config_get_int(cfg, "patchwork.retry-budget", 120,
				    &budget);
	if (!rc)
		rc = config_get_int(cfg, "patchwork.backoff-ms", 500, &backoff);
	if (!rc)
		rc = config_get_int(cfg, "patchwork.description-max",
				    PW_DEFAULT_DESCRIPTION_MAX, &dmax);
	if (!rc)
		rc = config_get_int(cfg, "patchwork.per-page", 100, &per_page);
	if (!rc) {
		rc = config_read_secret(cfg, "patchwork", &token);
		if (rc == PT_ENOTFOUND) {
			pt_error_clear();
			rc = 0;
		}
	}
	if (!rc && token)
		log_register_secret(token); /* redacted from every log line */
	if (!rc && (dmax < 1 || per_page < 1 || attempts < 1))
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': patchwork.description-max, "
				  "per-page and max-attempts must be positive",
				  config_path(cfg));
	if (!rc) {
		o.url = url;
		o.token = token;
		o.project = *project_out;
		o.api_version = ver;
		o.description_max = (size_t)dmax;
		o.per_page = (unsigned)per_page;
		o.http.no_ssl_verify = !verify;
		o.http.timeout_ms = timeout * 1000;
		o.http.connect_timeout_ms = ctimeout * 1000;
		o.http.max_attempts = (int)attempts;
		o.http.max_total_ms = budget * 1000;
		o.http.backoff_ms = backoff;
		rc = pw_new(out, &o);
	}
	if (!rc)
		*insecure = !verify;
	free(url);
	free(ver);
	pt_secret_free(token);
	if (rc) {
		free(*project_out);
		*project_out = NULL;
	}
	return rc;
}
