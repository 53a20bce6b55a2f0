/*
 * patchwork.h - the Patchwork REST client: API version negotiation, list
 * paging through the Link header, per-project event polling with a
 * persisted, restart-safe position, series retrieval (patches, cover,
 * comments, each patch's mbox parsed into a struct patch; or only the
 * mails, from the series mbox) and checks (post with a dedupe rule, list
 * for reconciling).  HTTP, retries and secrets are bot/patchwork/http.c's; JSON is
 * jansson's.  Error messages name the server, the project and what to
 * fix, never the token.
 */
#ifndef PT_PATCHWORK_H
#define PT_PATCHWORK_H

#include <jansson.h>
#include <stdint.h>

#include "scoring/store/config.h"
#include "scoring/store/db.h"
#include "scoring/patch/patch.h"
#include "scoring/util/pt.h"
#include "bot/patchwork/http.h"

#define PW_DEFAULT_DESCRIPTION_MAX 2000u
#define PW_MAX_LIST_ITEMS 1000000u /* items one list walk may return */
#define PW_MAX_REDIRECTS 5	   /* redirects one pw_get_text() follows */
#define PW_MAX_LIST_PAGES 20000u   /* pages one list walk may fetch */

/*
 * Caps of one answer's body by what it is, far below the HTTP client's
 * PT_MAX_HTTP_BODY: what a daemon reading Patchwork holds at a time.
 */
#define PW_DEFAULT_MAX_PAGE (8u << 20)	/* a page of a list (events...) */
#define PW_DEFAULT_MAX_DOC (32u << 20)	/* one series, patch, cover */
#define PW_DEFAULT_MAX_MBOX (64u << 20) /* one patch or series mbox */
/* How long an event that cannot be handled holds its project's position. */
#define PW_DEFAULT_HOLD_BAD (6L * 3600)

struct pw_opts {
	const char *url;	 /* e.g. "https://patchwork.kernel.org" */
	const char *token;	 /* NULL: anonymous, read only */
	const char *project;	 /* link name; named in messages */
	const char *api_version; /* NULL: negotiate */
	size_t description_max;	 /* 0: PW_DEFAULT_DESCRIPTION_MAX */
	unsigned per_page;	 /* 0: 100 */
	size_t max_page;	 /* 0: PW_DEFAULT_MAX_PAGE */
	size_t max_doc;		 /* 0: PW_DEFAULT_MAX_DOC */
	size_t max_mbox;	 /* 0: PW_DEFAULT_MAX_MBOX */
	long hold_bad;		 /* s; 0: PW_DEFAULT_HOLD_BAD; < 0: none */
	struct http_opts http;
};

struct pw;

int pw_new(struct pw **out, const struct pw_opts *opts);
void pw_free(struct pw *pw);
/* The negotiated API version ("1.3"); negotiates on first use. */
int pw_api_version(struct pw *pw, const char **out);
struct http_client *pw_http(struct pw *pw);

/*
 * GET a JSON document: PATH is relative to the versioned API root
 * ("patches/7/") or an absolute URL on the same server.
 */
int pw_get_json(struct pw *pw, const char *path, json_t **out);
/* Every page of a list, concatenated into one array (rel="next"). */
int pw_get_list(struct pw *pw, const char *path, json_t **out);
/*
 * Raw text (an mbox), following redirects only on the server's origin
 * (same scheme, host and port; at most PW_MAX_REDIRECTS): one to
 * another origin is an error naming the URL and that origin.
 */
int pw_get_text(struct pw *pw, const char *url, struct buf *out);

/* Append s percent-encoded for a query value (all but A-Za-z0-9-._~). */
int pw_url_encode(struct buf *b, const char *s);
/* The URL of rel="next" in a Link header (fresh), or NULL. */
char *pw_link_next(const char *link);
/* "2026-11-01T11:00:00[.ffffff]" (UTC, no zone) to seconds and micros. */
int pw_parse_date(const char *s, int64_t *secs, long *usec);
/*
 * A date for since=/before= as Patchwork 3.1 takes it: a day
 * (YYYY-MM-DD, midnight UTC) or any date pw_parse_date() reads, written
 * "YYYY-MM-DDTHH:MM:SS[.ffffff]" without a zone; PT_EINVAL otherwise.
 */
#define PW_SINCE_MAX 32
int pw_since_param(const char *s, char out[PW_SINCE_MAX]);

/* ---- events -------------------------------------------------------- */

struct pw_event {
	int64_t id;
	const char *category;
	const char *date;
	int64_t time; /* date in seconds since the epoch, UTC */
	int64_t patch_id, series_id, cover_id, comment_id, check_id;
	const char *previous_state, *current_state;
	const json_t *json; /* the whole event, borrowed */
};

/* Fill ev from one event of /api/events/ (ev borrows from e). */
void pw_event_from_json(struct pw_event *ev, const json_t *e);

/*
 * Called for each new event, oldest first, inside a transaction on db
 * that also records the event as seen: work the callback does in db
 * (queueing, say) commits with it, so an event is handled exactly once
 * across crashes and restarts.  A non-zero return rolls back that event
 * and stops the poll with that code.
 */
typedef int (*pw_event_cb)(const struct pw_event *ev, void *ctx);

/*
 * Poll the project's events from the stored position (inclusive since=,
 * ids already seen at the boundary skipped).  With no stored position,
 * start at initial_since (NULL: the oldest event the server keeps; any
 * form pw_since_param() takes, sent as it writes it).
 * *handled counts the events given to cb.
 */
int pw_events_poll(struct pw *pw, struct db *db, const char *project,
		   const char *initial_since, pw_event_cb cb, void *ctx,
		   size_t *handled);
/* The stored position; PT_ENOTFOUND when none. */
int pw_events_position(struct pw *pw, struct db *db, const char *project,
		       int64_t *last_id, char **last_date);

/* ---- series -------------------------------------------------------- */

struct pw_patch {
	int64_t id;
	json_t *json;	  /* /patches/ID/ */
	json_t *comments; /* array */
	char *mbox;	  /* the patch mbox (via /patch/ID/mbox/) */
	size_t mbox_len;
	struct patch *parsed; /* the mbox through patch_from_mail() */
};

struct pw_series {
	int64_t id;
	json_t *json;		/* /series/ID/ */
	json_t *cover;		/* /covers/ID/ or NULL */
	json_t *cover_comments; /* array or NULL */
	struct pw_patch *patches;
	size_t npatches;
};

int pw_series_fetch(struct pw *pw, int64_t id, struct pw_series **out);
/*
 * The mails of a series, for scoring, in two requests: /series/ID/ and
 * the series mbox (Patchwork's patch mboxes, review trailers merged),
 * each message matched to its patch by Message-ID; a patch the series
 * mbox lacks is read from its own mbox URL.  No patch, comment or cover
 * documents: patches[].json and .comments are NULL and s->cover is the
 * series' cover_letter summary (id, msgid, name).  While the series is
 * not complete (received_all false) no mbox is read and npatches is 0.
 */
int pw_series_fetch_mails(struct pw *pw, int64_t id, struct pw_series **out);
/*
 * pw_series_fetch_mails, reading the mails of the patches present while
 * the series is not complete: what a series that never completes (a
 * cross-posting the list got part of) is scored from.
 */
int pw_series_fetch_present(struct pw *pw, int64_t id, struct pw_series **out);
/*
 * What pw_series_fetch follows in a /series/ID/ document: the patches'
 * ids in order (*ids fresh, NULL when there are none) and the cover
 * letter's id (*cover_id 0 when there is none).  A patch or cover
 * letter without a positive id is an error.
 */
int pw_series_ids(int64_t **ids, size_t *n, int64_t *cover_id,
		  const json_t *series);
void pw_series_free(struct pw_series *s);
/*
 * The patches whose Message-ID is msgid (angles optional), in every
 * project the server has (the API's msgid filter, 1.2 and later; a
 * cross-posted patch is one per project): *out a fresh array.
 */
int pw_patches_by_msgid(struct pw *pw, const char *msgid, json_t **out);
int pw_patch_fetch(struct pw *pw, int64_t id, struct pw_patch *out);
void pw_patch_clear(struct pw_patch *p);

/* ---- checks -------------------------------------------------------- */

struct pw_check {
	int64_t id;
	char *state, *context, *description, *target_url, *date, *user;
};

int pw_checks_list(struct pw *pw, int64_t patch_id, struct pw_check **out,
		   size_t *n);
void pw_checks_free(struct pw_check *c, size_t n);
/* The checks of a /patches/ID/checks/ list (an array) as structs. */
int pw_checks_from_json(struct pw_check **out, size_t *n, const json_t *list);

/* description cut to at most max bytes on a UTF-8 boundary (fresh). */
char *pw_description_cap(const char *d, size_t max);

/*
 * Post a check on a patch unless one with the same (context, state,
 * description-after-capping) is already on the server: the patch's
 * checks are read first, and again before each retry, so a post that
 * reached the server before a failure or crash is never repeated.
 * *posted is 1 when this call created the check; *check_id (may be NULL)
 * gets the new or the existing check's id.
 */
int pw_check_post(struct pw *pw, int64_t patch_id, const char *state,
		  const char *context, const char *description,
		  const char *target_url, int *posted, int64_t *check_id);

/*
 * pw_check_post for a check the caller knows is not on the server (its
 * state database holds every check it set on the patch in this context,
 * all sent, none the same): the first attempt posts without reading the
 * patch's checks; every retry reads them first, as pw_check_post does.
 */
int pw_check_post_new(struct pw *pw, int64_t patch_id, const char *state,
		      const char *context, const char *description,
		      const char *target_url, int *posted, int64_t *check_id);

/* One check of pw_checks_post_many(). */
struct pw_check_job {
	int64_t patch_id;
	const char *state, *context, *description, *target_url;
	int read_first;	  /* 1: as pw_check_post; 0: as pw_check_post_new */
	int posted;	  /* out: as theirs */
	int64_t check_id; /* out */
};

/* A job's outcome, rc as pw_check_post's (its message set if not 0). */
typedef int (*pw_check_done_fn)(void *ctx, struct pw_check_job *job, int rc);

/*
 * Post the n checks of jobs as pw_check_post() or pw_check_post_new()
 * would one after the other, the first read and the first post of
 * each HTTP_MANY_WIDTH at a time: the same dedupe, retries and errors
 * (a first read that fails is done again with its retries).  done is
 * called once for each job as its outcome is known, in this thread.
 * Not 0: done's error (the jobs not yet reported are not).  Two jobs
 * must not be of one patch and context.
 */
int pw_checks_post_many(struct pw *pw, struct pw_check_job *jobs, size_t n,
			pw_check_done_fn done, void *ctx);
/* Whether two descriptions are the same once capped as posts cap them. */
int pw_same_description(const struct pw *pw, const char *a, const char *b);

/* ---- configuration ------------------------------------------------- */

/*
 * A client from [patchwork]: url, project, token-file/password-command,
 * api-version, ssl-verify, timeout, connect-timeout, max-attempts,
 * retry-budget, backoff-ms, description-max, per-page.  project (may be
 * NULL) overrides patchwork.project; *project_out gets the project in
 * use (owned, NULL when none).  *insecure is 1 when ssl-verify is off,
 * for the caller to warn about.  The token is registered with the log's
 * redaction (log_register_secret) and kept by the client only.
 */
int pw_from_config(struct pw **out, struct config *cfg, const char *project,
		   char **project_out, int *insecure);

#endif
