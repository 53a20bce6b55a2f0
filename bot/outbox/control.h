/*
 * control.h - what maintainers tell the bot, in the conventions kernel
 * lists already use (NIPA's "pw-bot:" lines, syzbot's "#syz"): a line
 * "patchtriage: mute" (no more replies on this series),
 * "patchtriage: wrong" (the verdict was wrong: kept as feedback) or
 * "patchtriage: mute-list" (no more replies in this subsystem until its
 * configuration changes) in a reply on the list or a Patchwork comment.
 * This module parses such lines (pure) and keeps every command seen in
 * the table control_commands, once per (Message-ID, command): acted on,
 * ignored (with the reason) or, for a mute-list, lifted.  Who may give
 * which command is the loop's decision (bot/loop/control.c).
 */
#ifndef PT_CONTROL_H
#define PT_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"

enum {
	CONTROL_MUTE = 1,
	CONTROL_WRONG = 2,
	CONTROL_MUTE_LIST = 4,
};
#define CONTROL_ALL (CONTROL_MUTE | CONTROL_WRONG | CONTROL_MUTE_LIST)

/*
 * The commands the new text of a message gives, as a mask: lines
 * "patchtriage: WORD" (case-insensitive, blanks allowed before the
 * line, around the colon and after the word, nothing else on the line).
 * Quoted lines ("> ...") and the signature (after "-- ") do not count.
 */
unsigned control_parse(const char *text, size_t len);
/* "mute", "wrong", "mute-list" for one CONTROL_* bit; NULL otherwise. */
const char *control_name(unsigned cmd);

enum control_state { CONTROL_ACTED = 0, CONTROL_IGNORED, CONTROL_LIFTED };

const char *control_state_name(enum control_state s);

struct control_row {
	int64_t id;
	const char *message_id; /* of the mail or comment that gave it */
	unsigned cmd;		/* one CONTROL_* bit */
	const char *source;	/* "imap" or "patchwork" */
	const char *series_key; /* first message of the series, may be NULL */
	const char *subsystem;	/* may be NULL */
	const char *conf_hash;	/* mute-list: the subsystem's config hash */
	const char *who;	/* the sender's address */
	enum control_state state;
	const char *reason; /* why acted on or ignored */
	const char *detail; /* wrong: what the bot had said, may be NULL */
	int64_t created;
};

/*
 * Whether (message_id, cmd) was recorded already: a command is acted on
 * once, whichever path (IMAP, Patchwork) brings it first.
 */
int control_seen(struct db *db, const char *message_id, unsigned cmd,
		 int *seen);
/* Record r (id and created are set here); PT_EEXISTS when seen. */
int control_record(struct db *db, const struct control_row *r);

/* *who (fresh) set when series_key is muted; NULL when it is not. */
int control_series_muted(struct db *db, const char *series_key, char **who);
/*
 * *who (fresh) set when subsystem is muted under the configuration
 * whose hash is conf_hash; NULL when it is not.
 */
int control_list_muted(struct db *db, const char *subsystem,
		       const char *conf_hash, char **who);
/*
 * Lift the mute-lists of subsystem given under another configuration
 * than conf_hash; *lifted counts them.
 */
int control_lift_stale(struct db *db, const char *subsystem,
		       const char *conf_hash, int *lifted);

typedef int (*control_cb)(const struct control_row *r, void *ctx);
/*
 * Rows of the commands in mask and in state (-1: any), oldest first; a
 * non-zero return from cb stops the walk with it.
 */
int control_foreach(struct db *db, unsigned mask, int state, control_cb cb,
		    void *ctx);

#endif
