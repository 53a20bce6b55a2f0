/*
 * trailer.h - git's trailer rules and the kernel's trailer keys
 * (trailer.c): the trailer block of a changelog, parsed.
 */
#ifndef PT_TRAILER_H
#define PT_TRAILER_H

#include <stddef.h>

enum trailer_kind {
	TRAILER_OTHER = 0,
	TRAILER_SIGNED_OFF,
	TRAILER_REVIEWED,
	TRAILER_ACKED,
	TRAILER_TESTED,
	TRAILER_REPORTED,
	TRAILER_SUGGESTED,
	TRAILER_FIXES,
	TRAILER_CC,
	TRAILER_LINK,
	TRAILER_CLOSES,
	TRAILER_CO_DEVELOPED,
};

struct trailer {
	enum trailer_kind kind;
	char *key;          /* as written, e.g. "Reviewed-by" */
	char *value;        /* continuation lines joined by one space */
	char *name;         /* person trailers: "Jane Doe" (or NULL) */
	char *email;        /* person trailers: "jane@example.org" (or NULL) */
	char *comment;      /* text after '#' (Cc: stable # 5.10+), or NULL */
	char *fixes_sha;    /* Fixes: the id as written */
	char *fixes_subject;/* Fixes: the quoted subject, without ("") */
	unsigned is_stable : 1; /* Cc: stable@vger.kernel.org (any form) */
};

/*
 * Parse the trailer block of a commit message / changelog by git's
 * interpret-trailers rules: the last paragraph, when all of its lines are
 * "Key: value" trailers, or when one line has a recognised key (git's
 * Signed-off-by and "(cherry picked from commit", the kernel's keys) and
 * 25% or more of its lines are trailers; continuation lines (leading
 * whitespace) are joined and keys compared case-insensitively.  msg is
 * the message WITHOUT its subject line (a lone "net: foo" line would read
 * as a trailer).  *body_len receives the length of msg before the trailer
 * block (trailing blank lines removed), so the caller can split changelog
 * from trailers.  On error *out is NULL and *n 0.
 */
int trailers_parse(struct trailer **out, size_t *n, size_t *body_len,
		   const char *msg, size_t len);
void trailers_free(struct trailer *t, size_t n);

#endif
