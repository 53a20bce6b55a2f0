/*
 * smtp.c - SMTP submission through libcurl (see smtp.h).  curl does the
 * protocol, TLS and dot-stuffing; this file maps our options onto it and
 * curl's errors onto ours, telling apart failures before the message was
 * handed over or a 4yz answer to its end (retry is safe) from those
 * after it with no answer (it may have gone out).  A kept connection is
 * a curl handle whose connection cache holds it; it is dropped after
 * any failure, so that the next message starts on a clean session.
 */
#include "bot/mail/smtp.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The connection kept between sends (smtp_keep_open()). */
struct smtp_conn {
	CURL *h; /* NULL: none open */
};

void smtp_opts_clear(struct smtp_opts *o)
{
	smtp_close(o);
	free(o->conn);
	free(o->url);
	free(o->ca_file);
	free(o->user);
	pt_secret_free(o->password);
	memset(o, 0, sizeof(*o));
}

int smtp_opts_from_config(struct smtp_opts *o, struct config *cfg)
{
	int rc;

	memset(o, 0, sizeof(*o));
	rc = config_get_string(cfg, "smtp.url", NULL, &o->url);
	if (!rc && !o->url)
		rc = pt_error_set(PT_EINVAL, "config '%s': smtp.url is not set",
				  config_path(cfg));
	if (!rc && strncmp(o->url, "smtp://", 7) &&
	    strncmp(o->url, "smtps://", 8))
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': smtp.url '%s' is "
				  "not smtp:// or smtps://",
				  config_path(cfg), o->url);
	if (!rc)
		rc = config_get_bool(cfg, "smtp.starttls", 1, &o->starttls);
	if (!rc)
		rc = config_get_bool(cfg, "smtp.ssl-verify", 1, &o->ssl_verify);
	if (!rc)
		rc = config_get_string(cfg, "smtp.ca-file", NULL, &o->ca_file);
	if (!rc)
		rc = config_get_int_range(cfg, "smtp.timeout", 60, 1,
					  CONFIG_MAX_SECONDS, &o->timeout);
	if (!rc)
		rc = config_get_string(cfg, "smtp.user", NULL, &o->user);
	if (!rc && o->user && !o->starttls && !strncmp(o->url, "smtp://", 7))
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': smtp.user is set "
				  "with smtp.starttls = false on '%s': the "
				  "password would cross the network in clear; "
				  "use STARTTLS or smtps://",
				  config_path(cfg), o->url);
	if (!rc && o->user) {
		rc = config_read_secret(cfg, "smtp", &o->password);
		if (rc == PT_ENOTFOUND)
			rc = pt_error_set(PT_EINVAL,
					  "config '%s': smtp.user "
					  "is set but no smtp.token-file or "
					  "smtp.password-command",
					  config_path(cfg));
	}
	if (rc)
		smtp_opts_clear(o);
	return rc;
}

struct upload {
	const char *p;
	size_t left;
	size_t sent;
	smtp_data_cb on_data;
	void *ctx;
	int started;
};

static size_t read_cb(char *dst, size_t size, size_t n, void *ctx)
{
	struct upload *u = ctx;
	size_t k = size * n < u->left ? size * n : u->left;

	if (!u->started) {
		/* the server said 354: from here on the message may arrive */
		u->started = 1;
		if (u->on_data && u->on_data(u->ctx))
			return CURL_READFUNC_ABORT;
	}

	memcpy(dst, u->p, k);
	u->p += k;
	u->left -= k;
	u->sent += k;
	return k;
}

/*
 * The whole message went out and the server answered its final dot
 * with a 4yz or 5yz: not accepted (RFC 5321 4.2.5), so a later try
 * cannot duplicate it.  Returns that code, else 0 (a dropped connection
 * leaves curl's last code at DATA's 354).
 */
static long refused_after_dot(CURL *h, const struct upload *u)
{
	long code = 0;

	if (!u->started || u->left ||
	    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK)
		return 0;
	return code >= 400 && code < 600 ? code : 0;
}

static int map_error(CURL *h, CURLcode c, const struct upload *u,
		     const char *url, const char *detail)
{
	const char *why = *detail ? detail : curl_easy_strerror(c);
	long code;

	if (c == CURLE_LOGIN_DENIED)
		return pt_error_set(PT_EAUTH, "smtp '%s': login refused: %s",
				    url, why);
	/* before any byte of the message left, a retry cannot duplicate */
	if (!u->sent || c == CURLE_COULDNT_CONNECT ||
	    c == CURLE_COULDNT_RESOLVE_HOST || c == CURLE_USE_SSL_FAILED ||
	    c == CURLE_SSL_CONNECT_ERROR || c == CURLE_PEER_FAILED_VERIFICATION)
		return pt_error_set(PT_EAGAIN, "smtp '%s': %s", url, why);
	code = refused_after_dot(h, u);
	if (code >= 500)
		return pt_error_set(PT_ERROR,
				    "smtp '%s': the server answered %ld to "
				    "the end of the message (refused for good, "
				    "not tried again): %s",
				    url, code, why);
	if (code)
		return pt_error_set(PT_EAGAIN,
				    "smtp '%s': the server answered %ld to "
				    "the end of the message (not accepted, "
				    "to be tried again): %s",
				    url, code, why);
	return pt_error_set(PT_ENET,
			    "smtp '%s': %s (the message may have "
			    "been sent)",
			    url, why);
}

int smtp_send(const struct smtp_opts *o, const char *from, char *const *rcpts,
	      const char *msg, size_t len)
{
	return smtp_send_cb(o, from, rcpts, msg, len, NULL, NULL);
}

int smtp_send_cb(const struct smtp_opts *o, const char *from,
		 char *const *rcpts, const char *msg, size_t len,
		 smtp_data_cb on_data, void *ctx)
{
	return smtp_send_ex(o, from, rcpts, msg, len, on_data, ctx, NULL);
}

/*
 * The recipients the server refused, read from curl's protocol trace:
 * curl sends one RCPT TO and waits for its answer before the next, so
 * the first answer line after a RCPT TO is that recipient's.  Only RCPT
 * lines are looked at (never AUTH's).
 */
enum { SMTP_TRACE_LINE = 512 };

struct rcpt_trace {
	char addr[SMTP_TRACE_LINE];
	int pending;
	struct buf refused;
};

static void trace_line(char *dst, size_t n, const char *s, size_t len)
{
	while (len && (s[len - 1] == '\r' || s[len - 1] == '\n'))
		len--;
	if (len >= n)
		len = n - 1;
	memcpy(dst, s, len);
	dst[len] = '\0';
}

static int trace_cb(CURL *h, curl_infotype type, char *data, size_t size,
		    void *ctx)
{
	struct rcpt_trace *t = ctx;
	char line[SMTP_TRACE_LINE];

	if (type == CURLINFO_HEADER_OUT && size > 8 &&
	    !strncasecmp(data, "RCPT TO:", 8)) {
		trace_line(t->addr, sizeof(t->addr), data + 8, size - 8);
		if (t->addr[0] == '<')
			memmove(t->addr, t->addr + 1, strlen(t->addr));
		t->addr[strcspn(t->addr, ">")] = '\0';
		t->pending = 1;
	} else if (type == CURLINFO_HEADER_IN && t->pending) {
		t->pending = 0;
		if (size && (data[0] == '4' || data[0] == '5')) {
			trace_line(line, sizeof(line), data, size);
			buf_addf(&t->refused, "%s'%s' (%s)",
				 t->refused.len ? ", " : "", t->addr, line);
		}
	}
	return 0;
}

int smtp_keep_open(struct smtp_opts *o)
{
	if (o->conn)
		return 0;
	o->conn = pt_calloc(1, sizeof(*o->conn));
	return o->conn ? 0 : PT_ENOMEM;
}

void smtp_close(struct smtp_opts *o)
{
	if (!o->conn || !o->conn->h)
		return;
	curl_easy_cleanup(o->conn->h); /* QUIT on the open connection */
	o->conn->h = NULL;
}

struct envelope {
	struct curl_slist *to;
	struct buf from;
};

static void envelope_clear(struct envelope *e)
{
	curl_slist_free_all(e->to);
	buf_free(&e->from);
}

static int envelope_init(struct envelope *e, const char *from,
			 char *const *rcpts)
{
	struct curl_slist *t;
	size_t i;

	e->to = NULL;
	buf_init(&e->from, 0);
	for (i = 0; rcpts[i]; i++) {
		t = curl_slist_append(e->to, rcpts[i]);
		if (!t)
			return PT_ENOMEM;
		e->to = t;
	}
	return buf_addf(&e->from, "<%s>", from);
}

static void set_tls(CURL *h, const struct smtp_opts *o)
{
	if (!strncmp(o->url, "smtp://", 7))
		curl_easy_setopt(h, CURLOPT_USE_SSL,
				 o->starttls ? (long)CURLUSESSL_ALL
					     : (long)CURLUSESSL_NONE);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, o->ssl_verify ? 1L : 0L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, o->ssl_verify ? 2L : 0L);
	if (o->ca_file) {
		/* instead of the system store, not beside it: no CA path */
		curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file);
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	}
	if (o->user) {
		curl_easy_setopt(h, CURLOPT_USERNAME, o->user);
		curl_easy_setopt(h, CURLOPT_PASSWORD,
				 o->password ? o->password : "");
	}
}

static void set_options(CURL *h, const struct smtp_opts *o,
			const struct envelope *e, struct upload *u, size_t len,
			char *err, struct rcpt_trace *tr)
{
	curl_easy_setopt(h, CURLOPT_URL, o->url);
	curl_easy_setopt(h, CURLOPT_MAIL_FROM, e->from.ptr);
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT, e->to);
	/*
	 * One address the relay refuses (a maintainer who left) must not
	 * cost everyone else the message: curl goes on with the accepted
	 * ones and fails only when none is.
	 */
#if LIBCURL_VERSION_NUM >= 0x080200
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT_ALLOWFAILS, 1L);
#else
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT_ALLLOWFAILS, 1L);
#endif
	curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(h, CURLOPT_READFUNCTION, read_cb);
	curl_easy_setopt(h, CURLOPT_READDATA, u);
	curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, o->timeout > 0 ? o->timeout : 60);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	set_tls(h, o);
	if (tr) {
		curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, trace_cb);
		curl_easy_setopt(h, CURLOPT_DEBUGDATA, tr);
		curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);
	}
}

/* The kept connection's handle (reset), or a handle for one message. */
static CURL *take_handle(const struct smtp_opts *o)
{
	if (!o->conn)
		return curl_easy_init();
	if (!o->conn->h)
		o->conn->h = curl_easy_init();
	else
		curl_easy_reset(o->conn->h); /* keeps the connection */
	return o->conn->h;
}

/*
 * After a send: a kept handle forgets this message's options (they
 * point into the caller's stack) and keeps its connection when the
 * send succeeded; any other handle, and any failed one, is closed.
 */
static void give_back(const struct smtp_opts *o, CURL *h, CURLcode c)
{
	if (o->conn && c == CURLE_OK) {
		curl_easy_reset(h);
		return;
	}
	curl_easy_cleanup(h);
	if (o->conn)
		o->conn->h = NULL;
}

/*
 * A kept connection the server closed since the last message: the send
 * failed in transport, on a connection not opened for it, before the
 * message started.  Nothing was handed over; a new connection may go.
 */
static int stale_conn(const struct smtp_opts *o, CURL *h, CURLcode c,
		      const struct upload *u)
{
	long fresh = 1;

	if (!o->conn || u->started ||
	    (c != CURLE_SEND_ERROR && c != CURLE_RECV_ERROR &&
	     c != CURLE_GOT_NOTHING))
		return 0;
	return curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &fresh) ==
		       CURLE_OK &&
	       fresh == 0;
}

int smtp_send_ex(const struct smtp_opts *o, const char *from,
		 char *const *rcpts, const char *msg, size_t len,
		 smtp_data_cb on_data, void *ctx, char **refused)
{
	char err[CURL_ERROR_SIZE] = "";
	struct rcpt_trace tr = { "", 0, BUF_INIT };
	struct upload u = { msg, len, 0, on_data, ctx, 0 };
	struct envelope e;
	CURL *h = NULL;
	CURLcode c = CURLE_OK;
	int rc, attempt;

	if (refused)
		*refused = NULL;
	rc = envelope_init(&e, from, rcpts);
	for (attempt = 1; !rc; attempt++) {
		h = take_handle(o);
		if (!h) {
			rc = pt_error_set(PT_ENOMEM, "smtp: cannot start curl");
			break;
		}
		u = (struct upload){ msg, len, 0, on_data, ctx, 0 };
		tr.pending = 0;
		buf_reset(&tr.refused);
		err[0] = '\0';
		set_options(h, o, &e, &u, len, err, refused ? &tr : NULL);
		c = curl_easy_perform(h);
		if (c == CURLE_OK || attempt > 1 || !stale_conn(o, h, c, &u))
			break;
		give_back(o, h, c); /* and once more on a new connection */
		h = NULL;
	}
	if (!rc && c != CURLE_OK)
		rc = map_error(h, c, &u, o->url, err);
	if (refused && tr.refused.len)
		*refused = buf_detach(&tr.refused, NULL);
	if (h)
		give_back(o, h, c);
	envelope_clear(&e);
	buf_free(&tr.refused);
	return rc;
}
