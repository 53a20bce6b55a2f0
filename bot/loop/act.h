/*
 * act.h - the bot's outgoing actions, made crash safe through the outbox
 * (bot/outbox/store.c): Patchwork checks, posted only when a patch's state or
 * description for a context changes, and the one reply per series
 * version and kind, whose patch and model version are pinned in a slot
 * before anything is sent.  Every action is recorded as intended before
 * it is sent; act_flush() re-sends what a crash or an outage left
 * behind (checks against Patchwork's own list, so none is doubled;
 * replies only when never handed to SMTP).  With dry_run nothing leaves
 * the process: each action goes to the report callback instead.
 */
#ifndef PT_ACT_H
#define PT_ACT_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/lists/lookup.h"
#include "scoring/patch/patch.h"
#include "bot/patchwork/patchwork.h"
#include "bot/outbox/policy.h"
#include "bot/mail/reply.h"
#include "bot/mail/smtp.h"

/* what: "check" or "reply"; text: a one-line summary or the message */
typedef void (*act_report_fn)(void *ctx, const char *what, const char *text);

struct act_stats {
	size_t checks_posted, checks_unchanged, checks_reconciled;
	size_t replies_sent, replies_already, replies_limited;
	size_t replies_muted; /* held back by a mute or mute-list */
	size_t replies_held;  /* put in the outbox to wait (approve, embargo) */
	size_t replies_dropped; /* embargo over, the thread had moved on */
	size_t checks_failed, replies_failed;	 /* attempts that failed */
	char check_error[256], reply_error[256]; /* the last of each */
	size_t auth_failed;   /* of any kind: credentials refused (PT_EAUTH) */
	char auth_error[256]; /* the last of them */
};

/*
 * When rc (or, with rc 0, the last error) is PT_EAUTH, count it in st
 * and keep its message: a refused token or login ends a --once pass
 * non-zero even when other actions succeeded.
 */
void act_note_auth(struct act_stats *st, int rc);

struct act_pending;

struct act {
	struct db *db;
	struct pw *pw; /* NULL: no Patchwork configured */
	const struct policy *pol;
	const struct smtp_opts *smtp; /* NULL: no SMTP configured */
	struct lookup *lk; /* the threading, for embargoes; may be NULL */
	int dry_run;
	act_report_fn report;
	void *report_ctx;
	struct act_stats st;
	/*
	 * defer: act_check() records a check and leaves its post to
	 * act_post_checks(), which posts those waiting at once.
	 */
	int defer;
	struct act_pending *pend;
	size_t npend, cappend;
};

/* Free what a holds beside its fields (checks left waiting stay so). */
void act_clear(struct act *a);

/*
 * Set the check (context, state, description) on Patchwork patch
 * patch_id of project unless the last one this bot set there had the
 * same state and description.  The outbox row and the new "last" are
 * written in one transaction, then the check is posted: without reading
 * the patch's checks first when the outbox holds every earlier revision
 * as sent, and not at all when the newest of them had this state and
 * description (capped as Patchwork stores it).  A failed post stays
 * intended for act_flush(); that is not an error here.
 */
int act_check(struct act *a, const struct policy_subsys *s, const char *project,
	      int64_t patch_id, const char *context, const char *state,
	      const char *description);

/*
 * Post the checks act_check() left waiting (defer), up to
 * HTTP_MANY_WIDTH at a time, each recorded as a lone post would be.
 * Not 0 only for a database error (the rest stay 'sending', for
 * act_flush()).
 */
int act_post_checks(struct act *a);

/*
 * act_check, unless a check of this context was set on the patch
 * already (by the Patchwork path or the mail path): one check per patch
 * and context, whichever path sees the patch first; the Patchwork
 * path's re-scores update it.
 */
int act_check_first(struct act *a, const struct policy_subsys *s,
		    const char *project, int64_t patch_id, const char *context,
		    const char *state, const char *description);

/* One patch of a series that may get the series' reply of a kind. */
struct act_candidate {
	const struct patch *p;
	struct reply_in in; /* kind, probability, model version, reasons */
};

/*
 * The reply of kind for the series whose first message is series_key:
 * the candidate with the highest probability among those policy lets
 * through, pinned in a slot (kv "slot/KIND/KEY" = "VERSION\tMSGID") so
 * that a re-score, a new model or a crash never makes a second one.
 * *st says what happened (REPLY_RATE_LIMITED: try again later).
 */
int act_reply(struct act *a, const char *series_key, const char *kind,
	      const struct act_candidate *c, size_t n, enum reply_status *st);

/*
 * Send what the outbox holds as intended (and, for checks, sending):
 * checks are posted with Patchwork's dedupe, at once as by
 * act_post_checks() and before the replies, replies re-sent from the
 * stored message.  Replies left 'sending' are never sent again.
 */
int act_flush(struct act *a);

/*
 * Release or drop the replies whose embargo is over (bot/loop/hold.h).
 * The loop calls it after reading its sources, so that what arrived
 * while the bot was down counts; nothing in a dry run.
 */
int act_release(struct act *a);

#endif
