/*
 * store.h - the bot's durable state in SQLite: the work queue (what is to
 * be scored or re-scored, claimed by the loop, retried with backoff) and
 * the outbox of outgoing actions (Patchwork checks, mail replies).  An
 * action is written here as 'intended' before it is sent, marked
 * 'sending' just before the network call and 'sent' after, so that a
 * crash at any moment can be reconciled on restart and nothing is sent
 * twice: the dedupe key is unique.
 */
#ifndef PT_STORE_H
#define PT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"

struct store_item {
	int64_t id;
	char *kind;
	char *key;
	char *payload;
	int attempts;
	int64_t created; /* when first queued */
};

void store_item_clear(struct store_item *it);

/*
 * Queue (kind, key).  An existing row is made pending again with the new
 * payload (a re-score when review arrives); a running row stays running
 * but is flagged to run once more when finished.
 */
int store_enqueue(struct db *db, const char *kind, const char *key,
		  const char *payload);
/* store_enqueue, due at not_before (seconds since the epoch). */
int store_enqueue_at(struct db *db, const char *kind, const char *key,
		     const char *payload, int64_t not_before);
/* *pending is 1 when (kind, key) is queued to run (again). */
int store_pending(struct db *db, const char *kind, const char *key,
		  int *pending);
/* Claim the oldest ready item (state pending, not_before <= now). */
int store_claim(struct db *db, int64_t now, struct store_item *out);
/* The same, among the items of one kind only. */
int store_claim_kind(struct db *db, const char *kind, int64_t now,
		     struct store_item *out);
/* Done (or pending again when re-queued meanwhile); its error is cleared. */
int store_finish(struct db *db, int64_t id);
/*
 * Pending items (kind, keys[i]) are done without running: the caller did
 * what they ask for already.  Running items are left alone.
 */
int store_skip(struct db *db, const char *kind, const char *const *keys,
	       size_t n);
/* Failed attempt: back off until not_before; give up after max_attempts. */
int store_retry(struct db *db, int64_t id, int64_t not_before,
		const char *error, int max_attempts);
/* At start-up: items left 'running' by a crash become pending again. */
int store_recover(struct db *db, int *recovered);
int store_queue_depth(struct db *db, long *pending, long *failed);

enum outbox_state {
	OUTBOX_INTENDED = 0,
	OUTBOX_SENDING,
	OUTBOX_SENT,
	OUTBOX_FAILED,
	OUTBOX_SKIPPED, /* reconciled: already on the remote side */
	OUTBOX_WAITING, /* a reply held: for approval or an embargo */
	OUTBOX_DROPPED, /* a held reply that will never be sent */
};

const char *outbox_state_name(enum outbox_state s);

struct outbox_row {
	int64_t id;
	char *kind;
	char *dedupe_key;
	char *subsystem;
	char *target;
	char *payload;
	enum outbox_state state;
	char *remote_ref;
	int64_t created;
	char *hold;	    /* held replies: "approve" or "embargo" */
	int64_t release_at; /* embargo: when it is due */
	char *about;	    /* held replies: the patch's Message-ID */
	char *approved_by;  /* who approved it, or NULL */
	char *note;	    /* last_error: why failed or dropped */
};

void outbox_row_clear(struct outbox_row *r);

/*
 * Record an action as intended.  Returns PT_EEXISTS (with *id set) when
 * the dedupe key is already in the outbox, whatever its state.
 */
int store_outbox_intend(struct db *db, const char *kind, const char *dedupe_key,
			const char *subsystem, const char *target,
			const char *payload, int64_t *id);
int store_outbox_set(struct db *db, int64_t id, enum outbox_state state,
		     const char *remote_ref, const char *error);
int store_outbox_get(struct db *db, const char *dedupe_key,
		     struct outbox_row *out);
typedef int (*outbox_cb)(const struct outbox_row *r, void *ctx);
/* Rows in a state, oldest first; a non-zero return from cb stops. */
int store_outbox_foreach(struct db *db, enum outbox_state state, outbox_cb cb,
			 void *ctx);
/*
 * Hold an intended reply: 'waiting', for approval (hold "approve") or
 * until release_at (hold "embargo"); about is the patch it answers.
 */
int store_outbox_hold(struct db *db, int64_t id, const char *hold,
		      int64_t release_at, const char *about);
/* The row of id; PT_ENOTFOUND naming it when there is none. */
int store_outbox_by_id(struct db *db, int64_t id, struct outbox_row *out);
/*
 * A waiting row to 'intended' (approved by who: the next flush sends
 * it) or to 'dropped', note kept as the row's error.  PT_ENOTFOUND for
 * no such row, PT_EINVAL naming its state for a row not waiting.
 */
int store_outbox_release(struct db *db, int64_t id, enum outbox_state to,
			 const char *who, const char *note);
/*
 * Drop the waiting replies about patch about (or, about NULL, every
 * waiting reply of subsystem), note kept as their error; *n counts them.
 */
int store_outbox_drop_waiting(struct db *db, const char *about,
			      const char *subsystem, const char *note, int *n);
/* Actions of kind for subsystem created at or after since (rate limit). */
int store_outbox_count_since(struct db *db, const char *subsystem,
			     const char *kind, int64_t since, long *n);

#endif
