/*
 * patchwork_int.h - what the Patchwork client's files share: the client
 * itself, the JSON helpers, requests with Patchwork's errors and the
 * Link-header walk.  Private to bot/patchwork: included only by
 * patchwork.c, pw_list.c, pw_events.c, pw_series.c and pw_checks.c; the
 * API is patchwork.h.
 */
#ifndef PT_PATCHWORK_INT_H
#define PT_PATCHWORK_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "bot/patchwork/http.h"

/* How many skipped events a client remembers, to warn of each once. */
#define PW_SKIPPED_RING 64u

struct pw {
	char *base;   /* "https://host[:port][/prefix]" without final / */
	char *origin; /* "https://host[:port]" */
	char *project;
	char *version;
	char *api_root; /* base + "/api/" + version + "/" */
	size_t description_max;
	unsigned per_page;
	size_t max_page, max_doc, max_mbox; /* body caps by kind */
	long hold_bad; /* s an unusable event holds the position; 0: none */
	uint64_t skipped[PW_SKIPPED_RING]; /* events warned of (hashes) */
	unsigned nskipped;
	int max_attempts;
	int has_token;
	struct http_client *http;
};

/* The string at key of o, or def. */
const char *pw_str_or(const json_t *o, const char *key, const char *def);
/* The integer at key of o (or its "id" when an object); 0 when none. */
int64_t pw_int_of(const json_t *o, const char *key);

/* The absolute URL of path, which must be on this server (*out fresh). */
int pw_resolve(struct pw *pw, const char *path, char **out);
/*
 * One request (once: no retries) with the answer in *r, its body capped
 * at cap bytes; a non-2xx answer becomes Patchwork's error.
 */
int pw_request(struct pw *pw, const char *method, const char *url,
	       const char *body, int once, size_t cap, struct http_response *r);
/*
 * The n requests reqs at once (http_do_many(), one attempt each; their
 * Accept, Content-Type and body_len set here), each answer judged as
 * pw_request() does: done gets that rc, its message set.
 */
int pw_request_many(struct pw *pw, struct http_request *reqs,
		    struct http_response *outs, size_t n, http_done_fn done,
		    void *ctx);
/*
 * r's body as JSON (*out fresh), or an error naming url.  A string may
 * hold "\u0000": C code reading it sees it cut at the NUL.
 */
int pw_parse_json(const char *url, const struct http_response *r, json_t **out);

/* GET url (with retries, at most cap bytes) as JSON (*out fresh). */
int pw_get_json_url(struct pw *pw, const char *url, size_t cap, json_t **out,
		    struct http_response *r);

typedef int (*pw_page_cb)(json_t *items, void *ctx);
/*
 * Every page of the list at path to cb, following rel="next" on this
 * server: never to a page fetched before in the walk, at most
 * PW_MAX_LIST_PAGES, and no further once the bot is asked to stop
 * (PT_EAGAIN).
 */
int pw_walk_list(struct pw *pw, const char *path, pw_page_cb cb, void *ctx);

#endif
