/*
 * daemon.h - process-level concerns of the long-running bot: one instance
 * per state directory (an flock'ed lock file holding the pid), signal
 * flags (SIGTERM/SIGINT: drain and stop; SIGHUP: reload configuration),
 * and an interruptible sleep.  Nothing here knows about Patchwork or mail.
 */
#ifndef PT_DAEMON_H
#define PT_DAEMON_H

struct daemon_lock;

/* Take STATE_DIR/lock; PT_EEXISTS names the pid that holds it. */
int daemon_lock_acquire(struct daemon_lock **out, const char *state_dir);
void daemon_lock_release(struct daemon_lock *l);

/* Install the handlers (SA_RESTART off, so blocking calls wake up). */
int daemon_signals_install(void);
int daemon_should_stop(void);
/* True once per SIGHUP received since the last call. */
int daemon_take_reload(void);
/* Ask the loop to stop (as SIGTERM would); used by --once and tests. */
void daemon_request_stop(void);
/* Sleep up to ms milliseconds; returns early on a signal. */
void daemon_sleep_ms(long ms);

#endif
