/*
 * run.h - the daemon's loop (`patchtriage run`): Patchwork events and
 * IMAP folders in, a durable work queue in SQLite, every complete series
 * scored with the trained models (and re-scored when review arrives),
 * and the actions policy allows out through bot/loop/act.c (checks, one reply
 * per series version and kind).  It owns the order of things and their
 * crash safety: an event or a mail is queued in the same transaction
 * that records it as handled, work is claimed and finished in the queue,
 * and at start-up the queue is recovered and the outbox flushed.
 * Printing is the CLI's; the loop logs.
 */
#ifndef PT_RUN_H
#define PT_RUN_H

#include <stddef.h>

#include "scoring/store/config.h"
#include "scoring/store/db.h"
#include "bot/loop/act.h"

struct run_opts {
	int once;	      /* one pass: poll, drain the queue, stop */
	int dry_run;	      /* actions to report(), nothing sent */
	long run_for;	      /* stop after this many seconds; 0: never */
	act_report_fn report; /* dry-run actions; may be NULL */
	void *report_ctx;
};

struct run_stats {
	size_t events; /* Patchwork events handled */
	size_t mails;  /* IMAP messages threaded */
	size_t series_scored;
	size_t patches_scored;
	size_t work_done;     /* work items finished */
	size_t work_failed;   /* work items that failed an attempt */
	size_t source_errors; /* failed polls (network) */
	size_t old_checks;    /* checks not set: patch over check.max-age */
	size_t old_replies;   /* replies not sent: over reply.max-age */
	struct act_stats act;
};

struct run;

/*
 * Everything from the configuration file at config_path (re-read on
 * run_reload) and the models of state_dir; db is the state database.
 */
int run_open(struct run **out, const char *config_path, struct db *db,
	     const char *state_dir, const struct run_opts *o);
void run_free(struct run *r);

/* Re-read the configuration; on error the old one stays in force. */
int run_reload(struct run *r);

/*
 * Run until stop() (may be NULL) says so, SIGTERM, --once or run_for.
 * Between passes it waits run.poll-interval (IMAP IDLE while it can),
 * except after a pass that read Patchwork events and had no source
 * fail: a burst goes on arriving, so the next pass starts at once.  SIGHUP
 * (daemon_take_reload) reloads.  Run with once, the pass fails
 * when credentials were refused anywhere (PT_EAUTH: the Patchwork token,
 * the SMTP or IMAP login, even if other actions succeeded), when a
 * source could not be read (its error), or when a kind of action
 * was tried and never succeeded: every reply, every check or every work
 * item failed (the last error of that kind).  Else 0 or a database error.
 */
int run_loop(struct run *r, int (*stop)(void));

void run_get_stats(const struct run *r, struct run_stats *out);

#endif
