/*
 * http.c - the HTTP client (see http.h): one libcurl easy handle per
 * client, reset before each request (curl keeps its live connections,
 * DNS and TLS session caches across curl_easy_reset), header capture
 * per response (a redirect chain starts a new block at each status
 * line), a capped body, origins compared through curl's URL parser,
 * and the retry loop with its time budget; a transfer is aborted as soon
 * as the bot is asked to stop.  Error messages go through one function
 * that strips the Authorization value should it ever appear.
 */
#include "bot/patchwork/http.h"

#include <curl/curl.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bot/sys/daemon.h"

/* What the curl callbacks fill in for one transfer. */
struct xfer {
	struct http_response *r;
	size_t max;
	int too_big;
};

/* One transfer of http_do_many(): a handle of the client's multi. */
struct slot {
	CURL *h;
	struct xfer *x; /* NULL: free */
	struct curl_slist *hl;
	size_t i; /* the request's index */
	long start;
	char err[CURL_ERROR_SIZE + 1];
};

struct http_client {
	CURL *h;
	CURLM *m; /* http_do_many()'s, with its own connections */
	struct slot slots[HTTP_MANY_WIDTH];
	struct http_opts o;
	char *auth;	  /* "Authorization: <value>" header line */
	size_t auth_vlen; /* length of the value part */
	unsigned seed;
};

static void wipe_free(char *s)
{
	volatile char *p = s;

	if (!s)
		return;
	while (*p)
		*p++ = '\0';
	free(s);
}

/* Set the error, with the Authorization value replaced if present. */
static int fail(struct http_client *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct http_client *c, int code, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	const char *val = NULL;
	char *hit;
	va_list ap;

	va_start(ap, fmt);
	if (buf_addvf(&b, fmt, ap)) {
		va_end(ap);
		return PT_ENOMEM;
	}
	va_end(ap);
	if (c && c->auth)
		val = c->auth + strlen("Authorization: ");
	while (val && *val && (hit = strstr(b.ptr, val)))
		memset(hit, '*', strlen(val));
	code = pt_error_set(code, "%s", b.ptr);
	buf_free(&b);
	return code;
}

char *http_url_for_message(const char *url)
{
	const char *scheme, *at, *end;
	struct buf b = BUF_INIT;

	if (!url)
		return pt_strdup("(no url)");
	scheme = strstr(url, "://");
	if (!scheme)
		return pt_strdup(url);
	scheme += 3;
	end = scheme + strcspn(scheme, "/?#");
	at = memchr(scheme, '@', (size_t)(end - scheme));
	if (!at)
		return pt_strdup(url);
	if (buf_add(&b, url, (size_t)(scheme - url)) || buf_addstr(&b, at + 1))
		return NULL;
	return buf_detach(&b, NULL);
}

char *http_origin(const char *url)
{
	char *scheme = NULL, *host = NULL, *port = NULL, *out = NULL;
	struct buf b = BUF_INIT;
	CURLU *u = curl_url();
	unsigned fl = CURLU_DEFAULT_PORT;

	if (!u || curl_url_set(u, CURLUPART_URL, url, 0) ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) ||
	    curl_url_get(u, CURLUPART_PORT, &port, fl))
		goto out;
	if ((!strcasecmp(scheme, "http") || !strcasecmp(scheme, "https")) &&
	    !buf_addf(&b, "%s://%s:%s", scheme, host, port))
		out = buf_detach(&b, NULL);
out:
	buf_free(&b);
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return out;
}

int http_same_origin(const char *a, const char *b)
{
	char *oa = http_origin(a), *ob = http_origin(b);
	int same = oa && ob && !strcasecmp(oa, ob);

	free(oa);
	free(ob);
	return same;
}

int http_client_new(struct http_client **out, const struct http_opts *opts)
{
	static const struct http_opts none;
	struct http_client *c;

	*out = NULL;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	c = pt_calloc(1, sizeof(*c));
	if (!c)
		return PT_ENOMEM;
	c->o = opts ? *opts : none;
	if (c->o.connect_timeout_ms <= 0)
		c->o.connect_timeout_ms = 10000;
	if (c->o.timeout_ms <= 0)
		c->o.timeout_ms = 60000;
	if (c->o.max_attempts <= 0)
		c->o.max_attempts = 5;
	if (c->o.max_total_ms <= 0)
		c->o.max_total_ms = 120000;
	if (c->o.backoff_ms <= 0)
		c->o.backoff_ms = 500;
	if (c->o.max_backoff_ms <= 0)
		c->o.max_backoff_ms = 30000;
	if (!c->o.max_body)
		c->o.max_body = PT_MAX_HTTP_BODY;
	c->o.ca_file = NULL; /* copied below */
	if (opts && opts->ca_file) {
		c->o.ca_file = pt_strdup(opts->ca_file);
		if (!c->o.ca_file)
			goto nomem;
	}
	c->seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 16);
	c->h = curl_easy_init();
	if (!c->h) {
		http_client_free(c);
		return pt_error_set(PT_ENOMEM, "cannot create an HTTP handle");
	}
	*out = c;
	return 0;
nomem:
	http_client_free(c);
	return PT_ENOMEM;
}

static void many_free(struct http_client *c)
{
	size_t i;

	for (i = 0; i < HTTP_MANY_WIDTH; i++)
		if (c->slots[i].h)
			curl_easy_cleanup(c->slots[i].h);
	if (c->m)
		curl_multi_cleanup(c->m);
}

void http_client_free(struct http_client *c)
{
	if (!c)
		return;
	if (c->h)
		curl_easy_cleanup(c->h);
	many_free(c);
	wipe_free(c->auth);
	free((char *)c->o.ca_file);
	free(c);
}

int http_client_set_auth(struct http_client *c, const char *value)
{
	struct buf b = BUF_INIT;

	wipe_free(c->auth);
	c->auth = NULL;
	c->auth_vlen = 0;
	if (!value)
		return 0;
	if (strpbrk(value, "\r\n"))
		return pt_error_set(PT_EINVAL,
				    "the Authorization value has a line break");
	if (buf_addstr(&b, "Authorization: ") || buf_addstr(&b, value))
		return PT_ENOMEM;
	c->auth_vlen = strlen(value);
	c->auth = buf_detach(&b, NULL);
	return 0;
}

void http_response_init(struct http_response *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->body, 0);
}

static void clear_headers(struct http_response *r)
{
	free(r->content_type);
	free(r->link);
	free(r->location);
	free(r->retry_after);
	r->content_type = r->link = r->location = r->retry_after = NULL;
}

void http_response_clear(struct http_response *r)
{
	if (!r)
		return;
	clear_headers(r);
	buf_free(&r->body);
	free(r->url);
	free(r->redirect_url);
	r->url = r->redirect_url = NULL;
	r->status = 0;
}

static size_t on_body(char *ptr, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;

	if (x->r->body.len + len > x->max) {
		x->too_big = 1;
		return 0;
	}
	if (buf_add(&x->r->body, ptr, len))
		return 0;
	return len;
}

static size_t on_header(char *ptr, size_t size, size_t n, void *ud)
{
	static const char *const names[] = { "content-type", "link", "location",
					     "retry-after" };
	struct xfer *x = ud;
	size_t len = size * n, klen, i;
	const char *colon, *v, *end;
	char **dst[4];

	dst[0] = &x->r->content_type;
	dst[1] = &x->r->link;
	dst[2] = &x->r->location;
	dst[3] = &x->r->retry_after;
	if (len >= 5 && !memcmp(ptr, "HTTP/", 5)) {
		clear_headers(x->r);
		return len;
	}
	colon = memchr(ptr, ':', len);
	if (!colon)
		return len;
	klen = (size_t)(colon - ptr);
	v = colon + 1;
	end = ptr + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && isspace((unsigned char)end[-1]))
		end--;
	for (i = 0; i < 4; i++) {
		if (klen != strlen(names[i]) ||
		    strncasecmp(ptr, names[i], klen))
			continue;
		free(*dst[i]);
		*dst[i] = pt_strndup(v, (size_t)(end - v));
		if (!*dst[i])
			return 0;
	}
	return len;
}

long http_backoff_ms(struct http_client *c, int attempt)
{
	long d = c->o.backoff_ms;
	int i;

	for (i = 2; i < attempt && d < c->o.max_backoff_ms; i++)
		d *= 2;
	if (d > c->o.max_backoff_ms)
		d = c->o.max_backoff_ms;
	/* "equal jitter": half fixed, half random */
	return d / 2 + (long)(rand_r(&c->seed) % (unsigned)(d / 2 + 1));
}

long http_retry_after_ms(const char *value, long now_s)
{
	const char *p;
	time_t t;
	long s;

	if (!value || !*value)
		return -1;
	for (p = value; *p && isdigit((unsigned char)*p); p++)
		;
	if (!*p) {
		if (p - value > 6)
			return -1;
		s = strtol(value, NULL, 10);
		return s * 1000;
	}
	t = curl_getdate(value, NULL);
	if (t == (time_t)-1)
		return -1;
	return t <= now_s ? 0 : ((long)t - now_s) * 1000;
}

int http_sleep_ms(long ms)
{
	long end = pt_now_ms() + ms, left;

	while ((left = end - pt_now_ms()) > 0) {
		if (daemon_should_stop())
			return pt_error_set(PT_EAGAIN, "interrupted");
		daemon_sleep_ms(left > 200 ? 200 : left);
	}
	return daemon_should_stop() ? pt_error_set(PT_EAGAIN, "interrupted")
				    : 0;
}

static int transient_curl(CURLcode e)
{
	switch (e) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

/* Abort a transfer once the bot is asked to stop (SIGTERM mid-answer). */
static int on_progress(void *ud, curl_off_t dlt, curl_off_t dln, curl_off_t ult,
		       curl_off_t uln)
{
	(void)ud;
	(void)dlt;
	(void)dln;
	(void)ult;
	(void)uln;
	return daemon_should_stop() ? 1 : 0;
}

/* The request's headers: NULL when out of memory. */
static struct curl_slist *headers(struct http_client *c,
				  const struct http_request *req)
{
	struct curl_slist *hl = NULL, *t;
	char line[256];

	t = curl_slist_append(hl, "Expect:");
	if (t && req->accept) {
		hl = t;
		snprintf(line, sizeof(line), "Accept: %s", req->accept);
		t = curl_slist_append(hl, line);
	}
	if (t && req->content_type) {
		hl = t;
		snprintf(line, sizeof(line), "Content-Type: %s",
			 req->content_type);
		t = curl_slist_append(hl, line);
	}
	if (t && c->auth) {
		hl = t;
		t = curl_slist_append(hl, c->auth);
	}
	if (!t)
		curl_slist_free_all(hl);
	return t;
}

static void set_method(CURL *h, const struct http_request *req)
{
	const char *method = req->method ? req->method : "GET";

	if (!strcmp(method, "GET")) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	} else if (!strcmp(method, "HEAD")) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else {
		/*
		 * curl silently sends a request again when a reused
		 * connection turns out dead; for a POST that may have been
		 * carried out already, so these never reuse one.
		 */
		curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
		if (strcmp(method, "POST"))
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)req->body_len);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS,
				 req->body ? req->body : "");
	}
}

/* Reset h for req; *hl gets its header list (the caller frees it). */
static CURLcode setup(struct http_client *c, CURL *h,
		      const struct http_request *req, struct xfer *x,
		      long timeout_ms, char *err, struct curl_slist **hl)
{
	curl_easy_reset(h);
	err[0] = '\0';
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(h, CURLOPT_URL, req->url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_USERAGENT, "patchtriage/" PT_VERSION);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->o.connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER,
			 c->o.no_ssl_verify ? 0L : 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST,
			 c->o.no_ssl_verify ? 0L : 2L);
	if (c->o.ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->o.ca_file);
	if (c->o.ca_file) /* instead of the system store, not beside it */
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	*hl = headers(c, req);
	if (!*hl) {
		snprintf(err, CURL_ERROR_SIZE, "out of memory");
		return CURLE_OUT_OF_MEMORY;
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hl);
	set_method(h, req);
	return CURLE_OK;
}

/* After a transfer: its status and URLs into x->r; hl freed. */
static void finish(CURL *h, struct xfer *x, struct curl_slist *hl)
{
	char *eff = NULL;

	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x->r->status);
	if (curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK &&
	    eff) {
		free(x->r->url);
		x->r->url = pt_strdup(eff);
	}
	eff = NULL;
	free(x->r->redirect_url);
	x->r->redirect_url = NULL;
	if (curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &eff) == CURLE_OK &&
	    eff)
		x->r->redirect_url = pt_strdup(eff);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(hl);
}

static CURLcode perform(struct http_client *c, const struct http_request *req,
			struct xfer *x, long timeout_ms, char *err)
{
	struct curl_slist *hl = NULL;
	CURLcode e;

	e = setup(c, c->h, req, x, timeout_ms, err, &hl);
	if (e != CURLE_OK)
		return e;
	e = curl_easy_perform(c->h);
	finish(c->h, x, hl);
	return e;
}

/*
 * The error of a request that ended with e (or a transient status)
 * after attempt attempts and ms milliseconds.
 */
static int give_up(struct http_client *c, const char *url, CURLcode e,
		   const char *err, const struct http_response *out,
		   int attempt, long ms)
{
	if (e == CURLE_ABORTED_BY_CALLBACK)
		return fail(c, PT_EAGAIN,
			    "request to '%s' interrupted: the bot is asked to "
			    "stop",
			    url);
	if (e == CURLE_OPERATION_TIMEDOUT)
		return fail(c, PT_ENET,
			    "'%s' did not answer in time (%d attempt%s in "
			    "%.1fs)",
			    url, attempt, attempt == 1 ? "" : "s", ms / 1000.0);
	if (e != CURLE_OK)
		return fail(c, PT_ENET,
			    "cannot reach '%s': %s (%d attempt%s in "
			    "%.1fs)",
			    url, *err ? err : curl_easy_strerror(e), attempt,
			    attempt == 1 ? "" : "s", ms / 1000.0);
	/* 429: asked to wait, not a failure; 5xx: the server fails */
	return fail(c, out->status == 429 ? PT_EAGAIN : PT_ENET,
		    "'%s' answered HTTP %ld%s%s%s%s (%d attempt%s in "
		    "%.1fs)",
		    url, out->status, out->content_type ? " (" : "",
		    out->content_type ? out->content_type : "",
		    out->content_type ? ")" : "",
		    out->status == 429 && out->retry_after
			    ? ", asked to retry later"
			    : "",
		    attempt, attempt == 1 ? "" : "s", ms / 1000.0);
}

/* An answer that needs no retry: any but 429 and 5xx, whole. */
static int answered(CURLcode e, const struct http_response *out)
{
	return e == CURLE_OK && out->status != 429 && out->status < 500;
}

int http_do(struct http_client *c, const struct http_request *req,
	    struct http_response *out)
{
	char err[CURL_ERROR_SIZE + 1];
	struct xfer x;
	long start = pt_now_ms(), left, wait, ra;
	char *url;
	CURLcode e = CURLE_OK;
	int attempt, rc = 0;

	url = http_url_for_message(req->url);
	if (!url)
		return PT_ENOMEM;
	memset(&x, 0, sizeof(x));
	x.r = out;
	x.max = req->max_body ? req->max_body : c->o.max_body;
	for (attempt = 1;; attempt++) {
		clear_headers(out);
		buf_reset(&out->body);
		out->status = 0;
		out->attempts = attempt;
		x.too_big = 0;
		left = c->o.max_total_ms - (pt_now_ms() - start);
		if (left < 1)
			left = 1;
		e = perform(c, req, &x,
			    left < c->o.timeout_ms ? left : c->o.timeout_ms,
			    err);
		if (x.too_big) {
			rc = fail(c, PT_ETOOBIG,
				  "response from '%s' is larger than %zu bytes",
				  url, x.max);
			goto out;
		}
		if (answered(e, out)) {
			rc = 0;
			goto out;
		}
		if (e != CURLE_OK && !transient_curl(e))
			break;
		if (req->once || attempt >= c->o.max_attempts)
			break;
		wait = http_backoff_ms(c, attempt + 1);
		ra = e == CURLE_OK ? http_retry_after_ms(out->retry_after,
							 (long)time(NULL))
				   : -1;
		if (ra >= 0)
			wait = ra;
		if (pt_now_ms() - start + wait >= c->o.max_total_ms)
			break;
		rc = http_sleep_ms(wait);
		if (rc) {
			rc = fail(c, PT_EAGAIN, "request to '%s' interrupted",
				  url);
			goto out;
		}
	}
	rc = give_up(c, url, e, err, out, attempt, pt_now_ms() - start);
out:
	free(url);
	return rc;
}

/* ---- concurrent requests ------------------------------------------- */

static int many_init(struct http_client *c)
{
	size_t i;

	if (!c->m)
		c->m = curl_multi_init();
	if (c->m)
		curl_multi_setopt(c->m, CURLMOPT_MAXCONNECTS,
				  (long)HTTP_MANY_WIDTH);
	for (i = 0; c->m && i < HTTP_MANY_WIDTH; i++)
		if (!c->slots[i].h && !(c->slots[i].h = curl_easy_init()))
			break;
	if (!c->m || i < HTTP_MANY_WIDTH)
		return pt_error_set(PT_ENOMEM, "cannot create HTTP handles");
	return 0;
}

/* Start request i on the free slot s (one attempt). */
static int many_start(struct http_client *c, struct slot *s,
		      const struct http_request *req, struct http_response *out,
		      struct xfer *x, size_t i)
{
	CURLcode e;

	http_response_clear(out);
	out->attempts = 1;
	x->r = out;
	x->max = req->max_body ? req->max_body : c->o.max_body;
	x->too_big = 0;
	s->x = x;
	s->i = i;
	s->start = pt_now_ms();
	e = setup(c, s->h, req, x,
		  c->o.timeout_ms < c->o.max_total_ms ? c->o.timeout_ms
						      : c->o.max_total_ms,
		  s->err, &s->hl);
	if (e == CURLE_OK && curl_multi_add_handle(c->m, s->h) == CURLM_OK)
		return 0;
	curl_slist_free_all(s->hl);
	s->hl = NULL;
	s->x = NULL;
	return pt_error_set(PT_ENOMEM, "cannot start an HTTP request");
}

/* The outcome of slot s's transfer, which ended with e (as http_do's). */
static int many_outcome(struct http_client *c, struct slot *s,
			const struct http_request *req, CURLcode e)
{
	char *url = http_url_for_message(req->url);
	int rc;

	if (!url)
		return PT_ENOMEM;
	if (s->x->too_big)
		rc = fail(c, PT_ETOOBIG,
			  "response from '%s' is larger than %zu bytes", url,
			  s->x->max);
	else if (answered(e, s->x->r))
		rc = 0;
	else
		rc = give_up(c, url, e, s->err, s->x->r, 1,
			     pt_now_ms() - s->start);
	free(url);
	return rc;
}

/* The slot whose handle is h. */
static struct slot *slot_of(struct http_client *c, CURL *h)
{
	size_t i;

	for (i = 0; i < HTTP_MANY_WIDTH; i++)
		if (c->slots[i].h == h && c->slots[i].x)
			return &c->slots[i];
	return NULL;
}

/* Hand each finished transfer to done; *active counts those running. */
static int many_reap(struct http_client *c, const struct http_request *reqs,
		     http_done_fn done, void *ctx, size_t *active)
{
	struct CURLMsg *m;
	struct slot *s;
	int left, rc = 0, drc;

	while ((m = curl_multi_info_read(c->m, &left))) {
		if (m->msg != CURLMSG_DONE || !(s = slot_of(c, m->easy_handle)))
			continue;
		curl_multi_remove_handle(c->m, s->h);
		finish(s->h, s->x, s->hl);
		s->hl = NULL;
		drc = many_outcome(c, s, &reqs[s->i], m->data.result);
		s->x = NULL;
		(*active)--;
		rc = done(ctx, s->i, drc);
		if (rc)
			break; /* many_abort() stops the rest */
	}
	return rc;
}

/* Stop what still runs (after a failed callback): none is reported. */
static void many_abort(struct http_client *c)
{
	size_t i;

	for (i = 0; i < HTTP_MANY_WIDTH; i++) {
		if (!c->slots[i].x)
			continue;
		curl_multi_remove_handle(c->m, c->slots[i].h);
		curl_easy_setopt(c->slots[i].h, CURLOPT_HTTPHEADER, NULL);
		curl_easy_setopt(c->slots[i].h, CURLOPT_ERRORBUFFER, NULL);
		curl_slist_free_all(c->slots[i].hl);
		c->slots[i].hl = NULL;
		c->slots[i].x = NULL;
	}
}

static struct slot *free_slot(struct http_client *c)
{
	size_t i;

	for (i = 0; i < HTTP_MANY_WIDTH; i++)
		if (!c->slots[i].x)
			return &c->slots[i];
	return NULL;
}

int http_do_many(struct http_client *c, const struct http_request *reqs,
		 struct http_response *outs, size_t n, http_done_fn done,
		 void *ctx)
{
	struct xfer x[HTTP_MANY_WIDTH];
	struct slot *s;
	size_t next = 0, active = 0;
	int rc, running;

	rc = n ? many_init(c) : 0;
	while (!rc && (next < n || active)) {
		while (!rc && next < n && (s = free_slot(c))) {
			rc = many_start(c, s, &reqs[next], &outs[next],
					&x[s - c->slots], next);
			active += !rc;
			next += !rc;
		}
		if (!rc && curl_multi_perform(c->m, &running) != CURLM_OK)
			rc = pt_error_set(PT_ENET, "HTTP transfers failed");
		if (!rc)
			rc = many_reap(c, reqs, done, ctx, &active);
		if (!rc && active &&
		    curl_multi_poll(c->m, NULL, 0, 200, NULL) != CURLM_OK)
			rc = pt_error_set(PT_ENET, "HTTP transfers failed");
	}
	if (rc)
		many_abort(c);
	return rc;
}
