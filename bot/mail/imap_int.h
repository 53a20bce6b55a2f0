/*
 * imap_int.h - what the files of the IMAP reader share: struct imap (the
 * libetpan session, the options and the selected folder) and the one
 * function every part calls in another, the mapping of libetpan's errors.
 * Private to bot/mail's imap.c, imap_conn.c and imap_sync.c: only they
 * include it; the API is imap.h.
 */
#ifndef PT_IMAP_INT_H
#define PT_IMAP_INT_H

#include <libetpan/libetpan.h>

#include "bot/mail/imap.h"

struct imap {
	mailimap *h;
	const struct imap_opts *o;
	char *selected;
};

/*
 * r, libetpan's answer to what: PT_EAUTH when the login was refused,
 * else PT_ENET (the run loop reconnects); the message names the server.
 */
int imap_etpan_err(struct imap *s, int r, const char *what);

#endif
