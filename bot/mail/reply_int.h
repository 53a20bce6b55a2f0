/*
 * reply_int.h - what the files of the replies share: the header block
 * (reply_hdr.c: struct hdrs, the message id check, reply_headers()) and
 * the body (reply_body.c: the rendered template and its two encodings),
 * both put together by reply_build() in reply.c.  Private to bot/mail's
 * reply.c, reply_hdr.c and reply_body.c: only they include it; the API
 * is reply.h.
 */
#ifndef PT_REPLY_INT_H
#define PT_REPLY_INT_H

#include "bot/mail/reply.h"

struct hdrs {
	struct buf *b;
	const char *msgid; /* of the patch, for errors */
};

/* A message id that fits on one header line; no CR, LF, space or <>. */
int reply_id_ok(const struct hdrs *h, const char *name, const char *id);

/*
 * From, To (the author by name), Cc, Subject, Date, Message-ID (msgid),
 * In-Reply-To, References and the fixed headers, then the blank line;
 * qp: the body is quoted-printable, else 8bit.
 */
int reply_headers(struct hdrs *h, const struct policy *pol,
		  const struct patch *p, char **to, char **cc,
		  const char *msgid, int qp);

/* The template of in->kind filled in and wrapped; LF line ends. */
int reply_render_body(struct buf *out, const struct policy *pol,
		      const struct policy_subsys *s, const struct patch *p,
		      const struct reply_in *in);

/* Whether a line of s would pass SMTP's 998-byte limit. */
int reply_long_lines(const char *s);

/* s quoted-printable, CRLF line ends. */
int reply_add_qp(struct buf *b, const char *s);

/* LF to CRLF; a CR (a template saved with CRLF ends) is dropped. */
int reply_add_crlf(struct buf *b, const char *s);

#endif
