/*
 * run_int.h - what the daemon's loop (run.c) and its worker
 * (run_work.c) share: the configuration in force, the loop's state and
 * the drain of the work queue; and where run_cmd.c finds maintainers'
 * commands.  Private to bot/loop: included only by run.c, run_work.c
 * and run_cmd.c; the API is run.h.
 */
#ifndef PT_RUN_INT_H
#define PT_RUN_INT_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "scoring/store/config.h"
#include "scoring/store/db.h"
#include "bot/loop/act.h"
#include "bot/loop/run.h"
#include "bot/mail/imap.h"
#include "bot/mail/smtp.h"

/* What the configuration file gives; swapped whole on reload. */
struct run_conf {
	struct config *cfg;
	struct policy *pol;
	struct pw *pw;
	char **projects; /* NULL-terminated */
	char *since;	 /* first poll of a project, first sync of a folder */
	int64_t since_secs; /* the same, seconds */
	int have_imap;
	struct imap_opts imap;
	int have_smtp;
	struct smtp_opts smtp;
	git_repository *repo; /* run.repo, for blame; may be NULL */
	long poll_interval, max_attempts;
	int64_t reply_max_age, check_max_age; /* seconds */
	int64_t series_wait;		      /* run.series-wait, seconds */
};

struct run {
	char *config_path;
	char *state_dir;
	struct db *db;
	struct run_opts o;
	struct run_conf c;
	struct triage *tri;
	struct thread *th;
	struct imap *is;
	long imap_backoff;
	int64_t imap_next_try;
	int last_source_rc;
	char last_error[512]; /* message of last_source_rc */
	char work_error[256]; /* message of the last failed work item */
	size_t batch;	      /* mails in the open folder transaction */
	struct lookup *lk;    /* what the loop asks of the threading */
	struct run_stats st;
	size_t old_noted[2]; /* old_checks, old_replies kept in the state */
	struct act act;
};

/*
 * Claim and work queue items that are due, at most RUN_DRAIN_MAX a
 * pass, until the queue is empty or stop() (may be NULL) or a signal
 * says to stop; a failed item is retried later, a database error ends
 * the drain.
 */
int run_drain(struct run *r, int (*stop)(void));

/*
 * A patch of project arrived (Patchwork's patch-created, at time t):
 * queue "pw-wait" for it, due run.series-wait later, in case its series
 * never completes.
 */
int run_queue_series_wait(struct run *r, const char *project, int64_t patch_id,
			  int64_t t);

struct thread_result;
struct pw_event;
struct pw_series;
/* A threaded IMAP mail: act on the commands of a reply (run_cmd.c). */
int run_mail_command(struct run *r, const struct thread_result *res,
		     const char *raw, size_t len);
/* A comment event: queue its "pw-comment" work (none without a comment). */
int run_queue_comment(struct run *r, const char *project,
		      const struct pw_event *ev);
/* The "pw-comment" work item of key: act on the comment's commands. */
int run_pw_comment(struct run *r, const char *key);
/* A Patchwork series' key as the replies use it (fresh; run_work.c). */
char *run_pw_series_key(const struct pw_series *s);

#endif
