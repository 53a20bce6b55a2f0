/*
 * reply.h - the bot's answer on the list: a reply to a patch mail built
 * from a template (templates/<kind>-reply.txt), threaded under the patch
 * (Re: subject, In-Reply-To, References), marked as automatic
 * (Auto-Submitted, X-Patchwork-Hint), with a Message-ID derived from
 * (patch Message-ID, model version, kind) so that the same reply can
 * never be sent twice: it is recorded in the outbox as intended, then
 * sending, then sent, and a Message-ID already there is not sent again.
 * Policy (opt-in, thresholds, rate limit, recipients) is asked first.
 */
#ifndef PT_REPLY_H
#define PT_REPLY_H

#include "scoring/store/db.h"
#include "scoring/patch/patch.h"
#include "bot/outbox/policy.h"
#include "bot/mail/smtp.h"

struct reply_reason {
	const char *text;
	const char *direction; /* "raises" / "lowers", may be NULL */
};

struct reply_in {
	const char *kind; /* "risk" or "stable" */
	double probability;
	const char *model_version;
	const struct reply_reason *reasons;
	size_t nreasons;
	const char *review;	     /* "2 replies, no Reviewed-by", or NULL */
	const char *pw_project;	     /* for policy matching, may be NULL */
	const char *suggested_fixes; /* stable: "Fixes: <sha> (\"...\")" */
};

enum reply_status {
	REPLY_SENT = 0,
	REPLY_DRY_RUN, /* built, not sent */
	REPLY_ALREADY, /* in the outbox already: not sent again */
	REPLY_NOT_OPTED_IN,
	REPLY_ACTION_OFF, /* the subsystem has no "reply" action */
	REPLY_BELOW_THRESHOLD,
	REPLY_RATE_LIMITED,
	REPLY_MUTED, /* the series or its subsystem was muted (act.c) */
	REPLY_HELD,  /* in the outbox, waiting: approval or an embargo */
};

const char *reply_status_name(enum reply_status s);

struct reply_out {
	enum reply_status status;
	char *message_id; /* without <> */
	char *message;	  /* the whole message, CRLF line ends */
	char *subsystem;
	char **rcpts;  /* envelope recipients */
	char *refused; /* sent, but these recipients refused */
};

void reply_out_clear(struct reply_out *o);

/* <pt-KIND-HEX@DOMAIN>, hex of SHA-256 over the three strings. */
int reply_message_id(struct buf *out, const char *patch_msgid,
		     const char *model_version, const char *kind,
		     const char *domain);

/*
 * Build the message (no policy, no sending).  Any header value with CR
 * or LF is refused with PT_EINVAL naming the header.
 */
int reply_build(struct reply_out *out, const struct policy *pol,
		const struct policy_subsys *s, const struct patch *p,
		const struct reply_in *in);

/*
 * Decide, build and (unless dry_run or policy.dry-run) send the reply to
 * patch p.  out->status says what happened; the return is an error only
 * when something failed.
 */
int reply_for_patch(struct reply_out *out, const struct policy *pol,
		    const struct smtp_opts *smtp, struct db *db,
		    const struct patch *p, const struct reply_in *in,
		    int dry_run);

/*
 * What reply_for_patch would decide before building anything: returns 1
 * when a reply is due (*s its subsystem), 0 with *st saying why not
 * (not opted in, action off, below threshold or already tagged).
 */
int reply_decide(enum reply_status *st, const struct policy *pol,
		 const struct patch *p, const struct reply_in *in,
		 const struct policy_subsys **s);

/*
 * Send an outbox row left 'intended' (a crash before sending, or the
 * server was down): the message and recipients stored in the row, marked
 * sending, then sent.  A row in any other state is refused.
 */
struct outbox_row;
int reply_resend(const struct policy *pol, const struct smtp_opts *smtp,
		 struct db *db, const struct outbox_row *row);

#endif
