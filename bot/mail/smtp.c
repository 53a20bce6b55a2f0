/*
 * smtp.c - SMTP submission through libcurl (see smtp.h).  curl does the
 * protocol, TLS and dot-stuffing; this file maps our options onto it and
 * curl's errors onto ours, telling apart failures before the message was
 * handed over or a 4yz answer to its end (retry is safe) from those
 * after it with no answer (it may have gone out).
 */
#include "bot/mail/smtp.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void smtp_opts_clear(struct smtp_opts *o)
{
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

int smtp_send_ex(const struct smtp_opts *o, const char *from,
		 char *const *rcpts, const char *msg, size_t len,
		 smtp_data_cb on_data, void *ctx, char **refused)
{
	char err[CURL_ERROR_SIZE] = "";
	struct rcpt_trace tr = { "", 0, BUF_INIT };
	struct curl_slist *to = NULL, *t;
	struct upload u = { msg, len, 0, on_data, ctx, 0 };
	struct buf mf = BUF_INIT;
	CURL *h;
	CURLcode c;
	size_t i;
	int rc = 0;

	if (refused)
		*refused = NULL;
	h = curl_easy_init();
	if (!h)
		return pt_error_set(PT_ENOMEM, "smtp: cannot start curl");
	for (i = 0; rcpts[i] && !rc; i++) {
		t = curl_slist_append(to, rcpts[i]);
		if (!t)
			rc = PT_ENOMEM;
		else
			to = t;
	}
	if (!rc)
		rc = buf_addf(&mf, "<%s>", from);
	if (rc)
		goto out;
	curl_easy_setopt(h, CURLOPT_URL, o->url);
	curl_easy_setopt(h, CURLOPT_MAIL_FROM, mf.ptr);
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT, to);
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
	curl_easy_setopt(h, CURLOPT_READDATA, &u);
	curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, o->timeout > 0 ? o->timeout : 60);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
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
	if (refused) {
		curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, trace_cb);
		curl_easy_setopt(h, CURLOPT_DEBUGDATA, &tr);
		curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);
	}
	c = curl_easy_perform(h);
	if (c != CURLE_OK)
		rc = map_error(h, c, &u, o->url, err);
	if (refused && tr.refused.len)
		*refused = buf_detach(&tr.refused, NULL);
out:
	curl_slist_free_all(to);
	curl_easy_cleanup(h);
	buf_free(&mf);
	buf_free(&tr.refused);
	return rc;
}
