/*
 * hold.h - replies held in the outbox ('waiting'): by reply.mode =
 * approve until a maintainer runs `patchtriage outbox approve ID`, or by
 * reply.embargo-hours until the embargo ends.  When it ends the reply
 * is dropped if, since it was held, a newer version of the series was
 * linked or a person other than the series' author (and not a bot)
 * replied in its thread: a reviewer has spoken, or the patch it is
 * about is gone; otherwise it becomes 'intended' and the flush sends it.
 * The embargo check reads the threading tables, which the IMAP path
 * fills: with Patchwork alone a held reply is sent when its time comes.
 */
#ifndef PT_HOLD_H
#define PT_HOLD_H

#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/lists/lookup.h"
#include "bot/outbox/policy.h"

struct hold_stats {
	size_t released, dropped;
};

/* Release or drop the embargoed replies due at now. */
int hold_release_due(struct db *db, struct lookup *lk, const struct policy *pol,
		     int64_t now, struct hold_stats *st);

#endif
