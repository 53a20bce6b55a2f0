/*
 * lookup.h - what the daemon asks of the threading tables (messages,
 * series, patches and mail_reviews, which thread.c fills, and mail_raw,
 * the raw patch and cover mails the IMAP path keeps for scoring): a
 * message's kind and series, a series' cover and completeness, its
 * patches in order, the reviews given on the list, and the raw mails.
 * Pure SQL on the state database; no network, nothing printed.
 */
#ifndef PT_LOOKUP_H
#define PT_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/patch/patch.h"
#include "scoring/util/pt.h"

struct lookup;

/*
 * A lookup on db (borrowed; it must outlive the lookup).  The
 * statements lookup_message and lookup_keep_raw run for every mail are
 * prepared on their first use and kept until lookup_free.
 */
int lookup_new(struct lookup **out, struct db *db);
void lookup_free(struct lookup *lk);

/*
 * Called for each review trailer (kind "Reviewed-by" and so on, name
 * and email may be NULL); a non-zero return stops the walk with it.
 */
typedef int (*lookup_review_cb)(const char *kind, const char *name,
				const char *email, void *ctx);
/*
 * The trailers given on the list for patch patch_id (a threading
 * patches.id): on the patch itself and, for the whole series, on its
 * cover letter, in the order they were threaded.
 */
int lookup_list_reviews(struct lookup *lk, int64_t patch_id,
			lookup_review_cb cb, void *ctx);

/*
 * The kept raw mail of msgid (without <>) parsed into *out (fresh);
 * PT_ENOTFOUND, *out NULL, when none is kept.
 */
int lookup_raw_patch(struct lookup *lk, const char *msgid, struct patch **out);

/*
 * Series sid: its cover letter's Message-ID (*cover fresh, NULL when it
 * has none) and whether all its patches have arrived (*complete).
 * PT_ENOTFOUND when there is no such series.
 */
int lookup_series_head(struct lookup *lk, int64_t sid, char **cover,
		       int *complete);

/* Called for each patch's Message-ID; non-zero stops the walk with it. */
typedef int (*lookup_msgid_cb)(const char *message_id, void *ctx);
/* The Message-IDs of series sid's patches, ordered by number. */
int lookup_series_patches(struct lookup *lk, int64_t sid, lookup_msgid_cb cb,
			  void *ctx);

/*
 * A threaded message: *keep is 1 when it is a patch or a cover letter
 * (the mails whose raw text the daemon keeps), *series_id its series (0
 * when none) and *complete whether that series is complete.  A message
 * the tables do not know (or a failed read) leaves all three 0.
 */
int lookup_message(struct lookup *lk, const char *msgid, int *keep,
		   int64_t *series_id, int *complete);

/*
 * Keep the raw mail of msgid, received at the given time (seconds since
 * the epoch); a mail already kept stays as it is.
 */
int lookup_keep_raw(struct lookup *lk, const char *msgid, const char *raw,
		    size_t len, int64_t received);

/*
 * Whether email (any case) has been seen applying patches on the list
 * list_id: a maintainer's "applied" reply (list_notices of kind
 * 'reply', which the archive import keeps) on a message of that list.
 */
int lookup_applies_on_list(struct lookup *lk, const char *email,
			   const char *list_id, int *yes);

/*
 * What happened in the thread of patch msgid since a time (seconds,
 * when the mails were threaded): *newer is 1 when a later version of
 * its series is linked, *replier (fresh, NULL when none) the address of
 * a person who replied in the series' thread since then (not the
 * series' author, not a known bot, not exclude).  A patch the tables do
 * not know leaves both empty.
 */
int lookup_thread_news(struct lookup *lk, const char *msgid, int64_t since,
		       const char *exclude, int *newer, char **replier);

#endif
