/*
 * smtp.h - sending one message by SMTP through libcurl: smtp:// with
 * STARTTLS required (unless smtp.starttls = false), or smtps://; the
 * certificate verified against smtp.ca-file or the system store (off
 * only with smtp.ssl-verify = false); AUTH when smtp.user is set, the
 * password read with config_read_secret().  After smtp_keep_open() the
 * sends share one connection until smtp_close() (a loop's pass), a new
 * one after any failure.  It does not build messages (reply.c does) and
 * does not decide whether to send (policy.c does).
 */
#ifndef PT_SMTP_H
#define PT_SMTP_H

#include <stddef.h>

#include "scoring/store/config.h"
#include "scoring/util/pt.h"

struct smtp_opts {
	char *url;	/* smtp://host:port or smtps://host:port */
	int starttls;	/* smtp://: require STARTTLS (default on) */
	int ssl_verify; /* default on */
	char *ca_file;
	char *user; /* NULL: no AUTH */
	char *password;
	long timeout;		/* seconds */
	struct smtp_conn *conn; /* NULL: a connection a message */
};

int smtp_opts_from_config(struct smtp_opts *o, struct config *cfg);
void smtp_opts_clear(struct smtp_opts *o);

/*
 * From now on the messages sent with o share one connection (opened at
 * the first send, dropped and opened again after a failed one), until
 * smtp_close(); smtp_opts_clear() closes it too.  A send on a kept
 * connection the server has closed meanwhile (cut before the message
 * started) is tried once more on a new one.
 */
int smtp_keep_open(struct smtp_opts *o);
/* QUIT and close the kept connection, if any; sends go on opening one. */
void smtp_close(struct smtp_opts *o);

/*
 * Send msg (CRLF line ends) from the envelope sender to rcpts
 * (NULL-terminated).  PT_EAGAIN: nothing was handed over (connect, TLS
 * or login failed) or the server answered the end of the message with a
 * 4yz (not accepted), safe to retry; PT_EAUTH: credentials refused;
 * PT_ENET: failed during or after the transfer with no answer, the
 * message may have gone out.
 */
int smtp_send(const struct smtp_opts *o, const char *from, char *const *rcpts,
	      const char *msg, size_t len);

/*
 * As smtp_send, calling on_data(ctx) once when the server has accepted
 * the envelope and DATA, just before the first byte of the message goes
 * out: up to then nothing can have been delivered, so a caller that
 * records "sending" there keeps the unknown window small.  A non-zero
 * return from on_data aborts the transfer (PT_EAGAIN).
 */
typedef int (*smtp_data_cb)(void *ctx);
int smtp_send_cb(const struct smtp_opts *o, const char *from,
		 char *const *rcpts, const char *msg, size_t len,
		 smtp_data_cb on_data, void *ctx);

/*
 * As smtp_send_cb; a recipient the server refuses while it accepts
 * others does not fail the send, and *refused (if refused is not NULL)
 * gets them with the server's answer, "'a@b' (550 5.1.1 unknown)",
 * comma-separated, or NULL when every recipient was taken.  The caller
 * frees it, also on failure.
 */
int smtp_send_ex(const struct smtp_opts *o, const char *from,
		 char *const *rcpts, const char *msg, size_t len,
		 smtp_data_cb on_data, void *ctx, char **refused);

#endif
