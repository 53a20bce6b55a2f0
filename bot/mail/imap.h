/*
 * imap.h - reading list mail over IMAP (libetpan's mailimap): TLS
 * (imaps:// or STARTTLS on imap://) with certificate verification,
 * LOGIN or AUTHENTICATE PLAIN, one folder per list, UIDVALIDITY and the
 * last UID handled per folder kept in the state database, UID FETCH of
 * new messages (size first; over the cap: skipped and logged, never
 * loaded), IDLE where offered (re-issued before the 29-minute limit) and
 * polling otherwise, and a run loop that reconnects with backoff.  What
 * a message means is not known here: each one goes to a callback.
 */
#ifndef PT_IMAP_H
#define PT_IMAP_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/config.h"
#include "scoring/store/db.h"
#include "scoring/util/pt.h"

enum imap_auth { IMAP_AUTH_LOGIN = 0, IMAP_AUTH_PLAIN };

struct imap_opts {
	char *host;
	unsigned port;
	int implicit_tls; /* imaps:// */
	int starttls;	  /* imap://: STARTTLS required (default on) */
	int ssl_verify;	  /* verify chain and host name (default on) */
	char *ca_file;	  /* NULL: the system trust store */
	char *user;
	char *password;
	enum imap_auth auth;
	char **folders; /* NULL-terminated; default {"INBOX"} */
	size_t max_message_size;
	long timeout;	    /* network timeout, seconds */
	long idle_restart;  /* re-issue IDLE after this many seconds */
	long poll_interval; /* seconds between polls without IDLE */
	long backoff_max;   /* reconnect backoff cap, seconds */
	char *account;	    /* key in imap_folders: user@host:port */
	/*
	 * A folder's first sync (no position stored yet) takes only mail
	 * that arrived (INTERNALDATE) at or after this time, seconds since
	 * the epoch, and records the folder's end as its position; 0: the
	 * whole folder.  Not from [imap]: the daemon sets it (run.since).
	 */
	int64_t first_since;
};

/*
 * Fill o from [imap]: url, user, password (token-file/password-command),
 * auth = login|plain, folder (multivar), ca-file, ssl-verify, starttls,
 * max-message-size, timeout, idle-restart, poll-interval, backoff-max.
 */
int imap_opts_from_config(struct imap_opts *o, struct config *cfg);
int imap_opts_parse_url(struct imap_opts *o, const char *url);
void imap_opts_clear(struct imap_opts *o);

struct imap;

int imap_connect(struct imap **out, const struct imap_opts *o);
void imap_free(struct imap *s);
int imap_has_idle(const struct imap *s);

/*
 * One message: raw bytes (RFC 5322, CRLF as the server sent them).
 * Return 0 when it is handled (the UID is then recorded), negative to
 * stop the sync with that error (the message will be offered again).
 */
typedef int (*imap_msg_cb)(const char *folder, uint32_t uid, const char *msg,
			   size_t len, void *ctx);

struct imap_stats {
	size_t fetched; /* messages given to the callback */
	size_t skipped; /* over max_message_size */
	size_t bytes;
	size_t resyncs; /* UIDVALIDITY changes seen */
	size_t old;	/* first sync: arrived before first_since, left */
};

/*
 * Fetch everything new in folder and give it to cb, oldest first; on the
 * folder's first sync only what arrived since o->first_since.
 */
int imap_sync_folder(struct imap *s, struct db *db, const char *folder,
		     imap_msg_cb cb, void *ctx, struct imap_stats *st);

/*
 * Wait on the selected folder until the server reports a change or
 * timeout seconds pass: IDLE when offered, else a NOOP after sleeping.
 * *changed is 1 when the server said something changed (or on poll).
 */
int imap_wait(struct imap *s, long timeout, int (*stop)(void), int *changed);

/*
 * The daemon's mail loop: connect, sync every folder, wait, repeat;
 * reconnect with exponential backoff (1s doubling to backoff_max) when
 * the connection fails.  Returns when *stop becomes non-zero or after
 * run_for seconds (0: no limit).  Errors of the callback end the run.
 */
int imap_run(const struct imap_opts *o, struct db *db, imap_msg_cb cb,
	     void *ctx, int (*stop)(void), long run_for, struct imap_stats *st);

#endif
