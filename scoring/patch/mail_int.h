/*
 * mail_int.h - what the files of the mail parser share: the unfolded
 * header fields, the MIME parts that matter, the line helpers and the
 * functions one part calls in another.  Private to scoring/patch's
 * mail.c, mail_text.c, mail_hdr.c and mail_mime.c: only they include it;
 * the API is mail.h and patch_from_mail() in patch.h.
 */
#ifndef PT_MAIL_INT_H
#define PT_MAIL_INT_H

#include <stddef.h>
#include <string.h>

#include "scoring/patch/mail.h"
#include "scoring/patch/patch.h"
#include "scoring/util/pt.h"

struct hdr {
	const char *name;
	size_t name_len;
	char *value; /* unfolded, NUL-terminated, raw bytes */
	size_t len;
};

struct headers {
	struct hdr *h;
	size_t n, cap;
};

/* The MIME parts that matter: the body text and a diff attachment. */
struct parts {
	struct buf body; /* first text/plain part, decoded, LF */
	char *body_cs;
	int have_body;
	struct buf attach; /* first other text part holding a diff */
	int have_attach;
	size_t nparts;
};

static inline int is_wsp(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static inline size_t line_end(const char *s, size_t len, size_t off)
{
	const char *nl = memchr(s + off, '\n', len - off);

	return nl ? (size_t)(nl - s) : len;
}

static inline size_t next_line(const char *s, size_t len, size_t off)
{
	size_t e = line_end(s, len, off);

	return e < len ? e + 1 : len;
}

/* ---- mail_text.c: UTF-8, charsets, RFC 2047, line endings --------- */

/* Append s to out with every invalid UTF-8 byte as U+FFFD. */
int mail_add_utf8(struct buf *out, const char *s, size_t len);
/*
 * Decode a header value: encoded words to UTF-8, whitespace between two
 * adjacent encoded words dropped (RFC 2047 6.2), other text read in
 * charset cs (raw 8-bit headers, RFC 6532 or mislabelled).
 */
int mail_decode_2047(struct buf *out, const char *s, size_t len,
		     const char *cs);
/* CRLF to LF (a lone CR is kept); no line may pass PT_MAX_LINE_LEN. */
int mail_add_lf(struct buf *out, const char *s, size_t len);

/* ---- mail_hdr.c: header fields, ids, people, dates ------------------ */

/*
 * Split the header block into unfolded fields; *body gets the offset of
 * the body.  A line that is neither a field nor a continuation ends the
 * headers as a blank line would (docs/VIOLATIONS.md).
 */
int mail_headers_parse(struct headers *hs, size_t *body, const char *s,
		       size_t len);
void mail_headers_free(struct headers *hs);
/* The first field called name (any case), or NULL. */
const struct hdr *mail_header_get(const struct headers *hs, const char *name);
/* The charset= parameter of a Content-Type value, for raw 8-bit text. */
void mail_header_charset(char *out, size_t size, const struct hdr *h);
/* Ids, author, date and subject of p from the fields (raw text in cs). */
int mail_headers_fill(struct patch *p, const struct headers *hs,
		      const char *cs);

/* ---- mail_mime.c: MIME parts ---------------------------------------- */

/*
 * The body text and a diff attachment of the body (len bytes) under the
 * MIME fields of hs, into ps.
 */
int mail_mime_parts(struct parts *ps, const struct headers *hs,
		    const char *body, size_t len);

/* ---- mail.c: the body ----------------------------------------------- */

/* git mailinfo's patch start: "diff -", "Index: " or "--- " + "+++ ". */
size_t mail_diff_start(const char *s, size_t len);

#endif
