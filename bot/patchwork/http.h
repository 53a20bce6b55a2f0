/*
 * http.h - an HTTP client on one reused libcurl easy handle (keep-alive,
 * connect and total timeouts, TLS verification on unless turned off
 * explicitly, User-Agent patchtriage/<version>).  It captures the
 * response headers callers need (Content-Type, Link, Location,
 * Retry-After, the absolute target of a redirect not followed), caps
 * the body, compares origins, and retries transient failures (transport
 * errors, timeouts, 5xx, 429 honouring Retry-After) with exponential
 * backoff and jitter, bounded in attempts and total time.  The
 * Authorization value set with http_client_set_auth() is sent but never
 * appears in an error message.  Requests other than GET and HEAD go on
 * a fresh connection, so that curl never resends one by itself.
 * http_do_many() runs up to HTTP_MANY_WIDTH requests at once, one
 * attempt each, on connections of their own.  It knows nothing about
 * Patchwork.
 */
#ifndef PT_HTTP_H
#define PT_HTTP_H

#include <stddef.h>

#include "scoring/util/pt.h"

struct http_opts {
	long connect_timeout_ms; /* 0: 10 s */
	long timeout_ms;	 /* one attempt, whole transfer; 0: 60 s */
	int max_attempts;	 /* 0: 5 */
	long max_total_ms;	 /* all attempts and waits; 0: 120 s */
	long backoff_ms;	 /* wait before the 2nd attempt; 0: 500 ms */
	long max_backoff_ms;	 /* cap of one wait; 0: 30 s */
	int no_ssl_verify;	 /* 1 only when configured explicitly */
	const char *ca_file;	 /* NULL: the system's CAs */
	size_t max_body;	 /* 0: PT_MAX_HTTP_BODY */
};

struct http_client;

/* opts may be NULL for the defaults. */
int http_client_new(struct http_client **out, const struct http_opts *opts);
void http_client_free(struct http_client *c);
/*
 * The Authorization header's value (e.g. "Token abc"), copied and wiped
 * on free; NULL removes it.  It is never part of an error message.
 */
int http_client_set_auth(struct http_client *c, const char *value);

struct http_request {
	const char *method; /* NULL: GET */
	const char *url;
	const char *accept;	  /* Accept header or NULL */
	const char *content_type; /* of body */
	const char *body;
	size_t body_len;
	unsigned once : 1; /* one attempt: the caller retries */
	size_t max_body;   /* cap of this answer's body; 0: the client's */
};

struct http_response {
	long status;
	struct buf body;
	char *content_type;
	char *link;
	char *location;
	char *retry_after;
	char *url;	    /* the URL that answered (after redirects) */
	char *redirect_url; /* of a 3xx not followed: Location, absolute */
	int attempts;
};

void http_response_init(struct http_response *r);
void http_response_clear(struct http_response *r);

/*
 * Send req.  0 when a response arrived whose status is not transient
 * (any 1xx-4xx but 429; the caller judges 4xx).  After the retries are
 * spent: PT_EAGAIN for a last answer of 429 (asked to come back later),
 * PT_ENET for a last answer of 5xx (out keeps either), for transport
 * errors and for timeouts, PT_ETOOBIG for a body over
 * the cap.  The messages name the URL (without userinfo) and the number
 * of attempts.
 */
int http_do(struct http_client *c, const struct http_request *req,
	    struct http_response *out);

/* Requests in flight at once in http_do_many(). */
#define HTTP_MANY_WIDTH 8

/*
 * Called as request i of http_do_many() ends, with rc what http_do()
 * would return after one attempt (its message set when not 0); not 0
 * from it stops the rest, unreported.
 */
typedef int (*http_done_fn)(void *ctx, size_t i, int rc);

/*
 * Send the n requests reqs, HTTP_MANY_WIDTH at a time, each once (no
 * retries: the caller decides; 'once' is implied), outs[i] getting
 * request i's answer; done reports each as it ends, in the caller's
 * thread.  Not 0: a callback's error or no transfer could run.
 */
int http_do_many(struct http_client *c, const struct http_request *reqs,
		 struct http_response *outs, size_t n, http_done_fn done,
		 void *ctx);

/* Wait before attempt n (n >= 2): exponential with jitter, capped. */
long http_backoff_ms(struct http_client *c, int attempt);
/* Retry-After (seconds or an HTTP date) in ms; -1 when absent/invalid. */
long http_retry_after_ms(const char *value, long now_s);
/* Sleep ms (interrupted by a stop request); 0, or PT_EAGAIN if stopped. */
int http_sleep_ms(long ms);

/* The URL without "user:password@", in a fresh string (for messages). */
char *http_url_for_message(const char *url);
/*
 * The origin of an http(s) URL, "scheme://host:port" with the port
 * always written (fresh; NULL when url is not one or out of memory).
 */
char *http_origin(const char *url);
/* 1 when a and b have the same scheme, host and port, else 0. */
int http_same_origin(const char *a, const char *b);

#endif
