/*
 * command.h - acting on maintainers' commands (bot/outbox/control.h
 * parses them and keeps the table): who may give which, on which series
 * and subsystem, recorded once whichever path brings the message (IMAP
 * or a Patchwork comment), and what a reply must ask before it goes out.
 *
 * Authority: "mute" and "wrong" from the author of a patch of the series
 * or a maintainer of its subsystem; "mute-list" from a maintainer only.
 * A maintainer is an M: or R: person of a MAINTAINERS entry
 * (policy.maintainers-file) covering a file the series touches, or
 * someone seen applying patches on the subsystem's list (an "applied"
 * reply in the imported archive).  Anyone else's command is recorded as
 * ignored, with the reason, and logged.  A mute (mute-list) acted on
 * also drops the replies of the series (subsystem) that wait in the
 * outbox for approval or an embargo.
 */
#ifndef PT_COMMAND_H
#define PT_COMMAND_H

#include <stddef.h>

#include "scoring/store/db.h"
#include "scoring/lists/lookup.h"
#include "scoring/patch/patch.h"
#include "bot/outbox/policy.h"

struct command_env {
	struct db *db;
	const struct policy *pol;
	struct lookup *lk;
};

/* The message that may carry commands. */
struct command_msg {
	const char *message_id; /* without <> */
	const char *from;	/* the sender's address */
	const char *text;	/* its new text (quoted lines are skipped) */
	const char *source;	/* "imap" or "patchwork" */
};

/* The series the message answers (n 0: not known). */
struct command_series {
	const char *key; /* its first message: the replies' slot key */
	const struct patch *const *patches;
	size_t n;
	const char *pw_project; /* may be NULL */
};

/*
 * Act on the commands of m about s, each once: record it acted on or
 * ignored and log it.  *n (may be NULL) counts the commands recorded
 * now.  A message without a command costs one scan of its text.
 */
int command_handle(const struct command_env *e, const struct command_msg *m,
		   const struct command_series *s, size_t *n);

/*
 * 1 when a reply on series_key in subsystem s must not go out (the
 * series or the subsystem is muted), with *who (fresh) the person who
 * muted it and *what "series" or "list"; 0 when it may.
 */
int command_muted(struct db *db, const struct policy_subsys *s,
		  const char *series_key, char **who, const char **what);

/* At load and reload: lift mute-lists whose subsystem's config changed. */
int command_lift_stale(struct db *db, const struct policy *pol);

#endif
