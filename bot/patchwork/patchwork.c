/*
 * patchwork.c - the Patchwork REST client (see patchwork.h): client
 * setup and configuration, the mapping from Patchwork's answers to clear
 * errors (403 "Invalid token." versus a user who maintains nothing, 400
 * field errors, 404 with the URL, an unexpected redirect), API version
 * negotiation, URLs resolved only on this server (so the token never
 * leaves it), text fetched through same-origin redirects only, JSON
 * helpers and dates.  The Link-header walk of lists is pw_list.c's,
 * events pw_events.c's, series and mboxes pw_series.c's, checks
 * pw_checks.c's; what they share is in patchwork_int.h.
 */
#include "bot/patchwork/patchwork.h"

#include <ctype.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/sys/log.h"
#include "bot/patchwork/patchwork_int.h"

static const char *const pw_versions[] = { "1.3", "1.2", "1.1" };

/* ---- small helpers ------------------------------------------------- */

const char *pw_str_or(const json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : def;
}

int64_t pw_int_of(const json_t *o, const char *key)
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

/* ---- construction -------------------------------------------------- */

int pw_new(struct pw **out, const struct pw_opts *o)
{
	struct buf auth = BUF_INIT;
	struct pw *pw;
	const char *host;
	size_t len;
	int rc;

	*out = NULL;
	if (!o->url ||
	    (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8)))
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
	pw->max_page = o->max_page ? o->max_page : PW_DEFAULT_MAX_PAGE;
	pw->max_doc = o->max_doc ? o->max_doc : PW_DEFAULT_MAX_DOC;
	pw->max_mbox = o->max_mbox ? o->max_mbox : PW_DEFAULT_MAX_MBOX;
	pw->hold_bad = o->hold_bad < 0 ? 0
		       : o->hold_bad   ? o->hold_bad
				       : PW_DEFAULT_HOLD_BAD;
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
		if (!pw->version ||
		    buf_addf(&auth, "%s/api/%s/", pw->base, pw->version)) {
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
	json_object_foreach ((json_t *)j, key, v) {
		if (b->len)
			buf_addstr(b, "; ");
		if (json_is_string(v)) {
			buf_addf(b, "%s: %s", key, json_string_value(v));
			continue;
		}
		buf_addf(b, "%s:", key);
		json_array_foreach (v, i, m)
			if (json_is_string(m))
				buf_addf(b, " %s", json_string_value(m));
	}
}

/* Turn a non-2xx answer into an error; 0 for 2xx. */
static int answer_error(struct pw *pw, const char *url,
			const struct http_response *r)
{
	struct buf b = BUF_INIT;
	json_t *j;
	const char *detail;
	char *u;
	int rc;

	if (r->status >= 200 && r->status < 300)
		return 0;
	u = http_url_for_message(url);
	if (!u)
		return PT_ENOMEM;
	j = json_loadb(r->body.ptr, r->body.len, 0, NULL);
	detail = pw_str_or(j, "detail", NULL);
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
	else if (r->status >= 300 && r->status < 400)
		rc = pt_error_set(PT_ENET,
				  "patchwork '%s' answered HTTP %ld, an "
				  "unexpected redirect (to '%s')",
				  u, r->status,
				  r->location ? r->location : "nowhere");
	else if (r->status == 401)
		rc = pt_error_set(PT_EAUTH,
				  "patchwork '%s' asks for authentication on "
				  "'%s': check patchwork.token-file",
				  pw->base, u);
	else
		rc = pt_error_set(PT_ENET,
				  "patchwork '%s' answered HTTP %ld%s%s", u,
				  r->status, detail ? ": " : "",
				  detail ? detail : "");
	json_decref(j);
	buf_free(&b);
	free(u);
	return rc;
}

/* The absolute URL of path, which must be on this server. */
int pw_resolve(struct pw *pw, const char *path, char **out)
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

int pw_request(struct pw *pw, const char *method, const char *url,
	       const char *body, int once, size_t cap, struct http_response *r)
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
	req.max_body = cap;
	rc = http_do(pw->http, &req, r);
	if (rc)
		return pt_error_wrap(rc, "patchwork");
	return answer_error(pw, url, r);
}

struct many {
	struct pw *pw;
	const struct http_request *reqs;
	struct http_response *outs;
	http_done_fn done;
	void *ctx;
};

static int many_done(void *ctx, size_t i, int rc)
{
	struct many *m = ctx;

	if (rc)
		rc = pt_error_wrap(rc, "patchwork");
	else
		rc = answer_error(m->pw, m->reqs[i].url, &m->outs[i]);
	return m->done(m->ctx, i, rc);
}

int pw_request_many(struct pw *pw, struct http_request *reqs,
		    struct http_response *outs, size_t n, http_done_fn done,
		    void *ctx)
{
	struct many m = { pw, reqs, outs, done, ctx };
	size_t i;

	for (i = 0; i < n; i++) {
		reqs[i].accept = "application/json";
		reqs[i].content_type = reqs[i].body ? "application/json" : NULL;
		reqs[i].body_len = reqs[i].body ? strlen(reqs[i].body) : 0;
		reqs[i].once = 1;
	}
	return http_do_many(pw->http, reqs, outs, n, many_done, &m);
}

int pw_parse_json(const char *url, const struct http_response *r, json_t **out)
{
	json_error_t err;
	char *u;
	int rc;

	/* a NUL escaped in one string must not cost the whole answer */
	*out = json_loadb(r->body.ptr, r->body.len, JSON_ALLOW_NUL, &err);
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

int pw_get_json_url(struct pw *pw, const char *url, size_t cap, json_t **out,
		    struct http_response *r)
{
	int rc;

	rc = pw_request(pw, "GET", url, NULL, 0, cap, r);
	if (!rc)
		rc = pw_parse_json(url, r, out);
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
		rc = pw_get_json_url(pw, url.ptr, pw->max_page, &j, &r);
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
			rc = pw_request(pw, "GET", url.ptr, NULL, 0,
					pw->max_page, &r);
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
	rc = pw_resolve(pw, path, &url);
	if (!rc)
		rc = pw_get_json_url(pw, url, pw->max_doc, out, &r);
	http_response_clear(&r);
	free(url);
	return rc;
}

/* Where r redirects from url, if on this server (*next fresh). */
static int redirect_target(struct pw *pw, const char *url,
			   const struct http_response *r, int hops, char **next)
{
	char *u, *o;
	int rc;

	if (!r->redirect_url)
		return answer_error(pw, url, r);
	if (hops >= PW_MAX_REDIRECTS)
		return pt_error_set(PT_ENET,
				    "patchwork: '%s' redirected more than %d "
				    "times",
				    url, PW_MAX_REDIRECTS);
	if (http_same_origin(r->redirect_url, pw->origin)) {
		*next = pt_strdup(r->redirect_url);
		return *next ? 0 : PT_ENOMEM;
	}
	u = http_url_for_message(url);
	o = http_origin(r->redirect_url);
	rc = pt_error_set(PT_EINVAL,
			  "patchwork: '%s' redirected to another origin, "
			  "'%s', not followed (only '%s' is)",
			  u ? u : url, o ? o : "(not http)", pw->origin);
	free(u);
	free(o);
	return rc;
}

/*
 * GET url, following redirects by hand: only to this server's origin
 * (scheme, host and port), at most PW_MAX_REDIRECTS.
 */
static int get_text_url(struct pw *pw, const char *url, struct http_response *r)
{
	struct http_request req;
	char *cur = pt_strdup(url), *next = NULL;
	int hops, rc = cur ? 0 : PT_ENOMEM;

	for (hops = 0; !rc; hops++) {
		memset(&req, 0, sizeof(req));
		req.url = cur;
		req.max_body = pw->max_mbox;
		http_response_clear(r);
		rc = http_do(pw->http, &req, r);
		if (rc) {
			rc = pt_error_wrap(rc, "patchwork");
			break;
		}
		if (r->status < 300 || r->status >= 400) {
			rc = answer_error(pw, cur, r);
			break;
		}
		rc = redirect_target(pw, cur, r, hops, &next);
		free(cur);
		cur = next;
		next = NULL;
	}
	free(cur);
	return rc;
}

int pw_get_text(struct pw *pw, const char *url, struct buf *out)
{
	struct http_response r;
	char *abs = NULL;
	int rc;

	http_response_init(&r);
	rc = pw_resolve(pw, url, &abs);
	if (!rc)
		rc = get_text_url(pw, abs, &r);
	if (!rc)
		rc = buf_add(out, r.body.ptr, r.body.len);
	http_response_clear(&r);
	free(abs);
	return rc;
}

/* ---- dates --------------------------------------------------------- */

int pw_parse_date(const char *s, int64_t *secs, long *usec)
{
	struct tm tm;
	const char *p;
	long us = 0;
	int n = 0, digits = 0;

	memset(&tm, 0, sizeof(tm));
	if (!s ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    n != 19)
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

/*
 * Patchwork 3.1 compares since= naively: a zone suffix (Z, +00:00) makes
 * it answer 500 and a date-only value an empty list.  So a day is its
 * midnight and a time loses its zone, as the server writes its dates.
 */
int pw_since_param(const char *s, char out[PW_SINCE_MAX])
{
	struct tm tm;
	int64_t secs;
	long us;
	int n = 0;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	if (s && strlen(s) == 10 &&
	    sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &n) == 3 &&
	    n == 10) {
		char day[32];

		snprintf(day, sizeof(day), "%.10sT00:00:00", s);
		return pw_since_param(day, out);
	}
	if (pw_parse_date(s, &secs, &us))
		return pt_error_set(PT_EINVAL,
				    "'%s' is not a date (YYYY-MM-DD or "
				    "YYYY-MM-DDTHH:MM:SS, UTC)",
				    s ? s : "");
	t = (time_t)secs;
	gmtime_r(&t, &tm);
	n = (int)strftime(out, PW_SINCE_MAX, "%Y-%m-%dT%H:%M:%S", &tm);
	if (us)
		snprintf(out + n, PW_SINCE_MAX - (size_t)n, ".%06ld", us);
	return 0;
}

/* ---- configuration ------------------------------------------------ */

/* patchwork.max-{page,document,mbox}-size in MiB, 1 to the HTTP cap. */
static int caps_from_config(struct config *cfg, long caps[3])
{
	static const char *const keys[3] = { "patchwork.max-page-size",
					     "patchwork.max-document-size",
					     "patchwork.max-mbox-size" };
	const long defs[3] = { PW_DEFAULT_MAX_PAGE >> 20,
			       PW_DEFAULT_MAX_DOC >> 20,
			       PW_DEFAULT_MAX_MBOX >> 20 };
	int i, rc = 0;

	for (i = 0; !rc && i < 3; i++)
		rc = config_get_int_range(cfg, keys[i], defs[i], 1,
					  PT_MAX_HTTP_BODY >> 20, &caps[i]);
	return rc;
}

int pw_from_config(struct pw **out, struct config *cfg, const char *project,
		   char **project_out, int *insecure)
{
	struct pw_opts o;
	char *url = NULL, *token = NULL, *ver = NULL;
	long timeout, ctimeout, attempts, budget, backoff, dmax, per_page;
	long hold;
	long caps[3];
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
		rc = config_get_int_range(cfg, "patchwork.timeout", 60, 1,
					  CONFIG_MAX_SECONDS, &timeout);
	if (!rc)
		rc = config_get_int_range(cfg, "patchwork.connect-timeout", 10,
					  1, CONFIG_MAX_SECONDS, &ctimeout);
	if (!rc)
		rc = config_get_int(cfg, "patchwork.max-attempts", 5,
				    &attempts);
	if (!rc)
		rc = config_get_int_range(cfg, "patchwork.retry-budget", 120, 0,
					  CONFIG_MAX_SECONDS, &budget);
	if (!rc)
		rc = config_get_int_range(cfg, "patchwork.backoff-ms", 500, 0,
					  CONFIG_MAX_SECONDS * 1000L, &backoff);
	if (!rc)
		rc = config_get_int(cfg, "patchwork.description-max",
				    PW_DEFAULT_DESCRIPTION_MAX, &dmax);
	if (!rc)
		rc = config_get_int(cfg, "patchwork.per-page", 100, &per_page);
	if (!rc)
		rc = caps_from_config(cfg, caps);
	if (!rc)
		rc = config_get_int_range(cfg, "patchwork.hold-bad-events",
					  PW_DEFAULT_HOLD_BAD, 0,
					  CONFIG_MAX_SECONDS, &hold);
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
		o.max_page = (size_t)caps[0] << 20;
		o.max_doc = (size_t)caps[1] << 20;
		o.max_mbox = (size_t)caps[2] << 20;
		o.hold_bad = hold ? hold : -1;
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
