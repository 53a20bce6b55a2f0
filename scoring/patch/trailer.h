/*
 * trailer.h - git's trailer rules and the kernel's trailer keys
 * (trailer.c): the trailer block of a changelog, parsed.
 */
#ifndef PT_TRAILER_H
#define PT_TRAILER_H

#include <stddef.h>

/*
 * The kinds of trailer the scorer tells apart.  The values are stored in
 * the history database (trailers.kind): append, never renumber.
 */
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
	TRAILER_NKINDS
};

/*
 * The canonical spellings, for static tables and SQL text; at run time
 * trailer_kind_name() gives the same strings.  Nacked-by has no kind of
 * its own: it is a review act of the lists, not of git's trailer block.
 */
#define TRAILER_KEY_SIGNED_OFF "Signed-off-by"
#define TRAILER_KEY_REVIEWED "Reviewed-by"
#define TRAILER_KEY_ACKED "Acked-by"
#define TRAILER_KEY_TESTED "Tested-by"
#define TRAILER_KEY_REPORTED "Reported-by"
#define TRAILER_KEY_SUGGESTED "Suggested-by"
#define TRAILER_KEY_FIXES "Fixes"
#define TRAILER_KEY_CC "Cc"
#define TRAILER_KEY_LINK "Link"
#define TRAILER_KEY_CLOSES "Closes"
#define TRAILER_KEY_CO_DEVELOPED "Co-developed-by"
#define TRAILER_KEY_NACKED "Nacked-by"

/* Attributes of a kind, trailer_kind_flags(). */
#define TRAILER_F_PERSON 1u /* the value names a person, "Name <email>" */
#define TRAILER_F_REVIEW 2u /* a review: Reviewed-by, Acked-by, Tested-by */

/*
 * The kind trailers_parse() gives a trailer with this key, compared
 * case-insensitively ("Reported-and-tested-by" is TRAILER_REPORTED);
 * TRAILER_OTHER for any other key, and for NULL.
 */
enum trailer_kind trailer_kind_of(const char *key);
/* "Reviewed-by"; NULL for TRAILER_OTHER and values out of range. */
const char *trailer_kind_name(enum trailer_kind k);
/* "reviewed-by", as in patch JSON and show; "other" for TRAILER_OTHER. */
const char *trailer_kind_json(enum trailer_kind k);
unsigned trailer_kind_flags(enum trailer_kind k);

/*
 * The review acts recognised in list replies ("Reviewed-by: ..." lines),
 * for i = 0, 1, ... until NULL: returns the act as stored and counted
 * ("Reviewed-and-tested-by" is a "Reviewed-by"), *key the spelling to
 * match case-insensitively before the ':'.
 */
const char *trailer_reply_act(size_t i, const char **key);

struct trailer {
	enum trailer_kind kind;
	char *key;	     /* as written, e.g. "Reviewed-by" */
	char *value;	     /* continuation lines joined by one space */
	char *name;	     /* person trailers: "Jane Doe" (or NULL) */
	char *email;	     /* person trailers: "jane@example.org" (or NULL) */
	char *comment;	     /* text after '#' (Cc: stable # 5.10+), or NULL */
	char *fixes_sha;     /* Fixes: the id as written */
	char *fixes_subject; /* Fixes: the quoted subject, without ("") */
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

/*
 * Split a Fixes: trailer's value into the id as written (*sha) and the
 * quoted subject (*subject), either NULL when absent; both malloc'd.
 * Besides `<sha> ("subject")` it reads the forms real trees write: the
 * id in <>, [] or quotes, a ':' after the id, "commit " or a doubled
 * "Fixes:" before it, no parentheses, curly quotes around the subject.
 */
int trailer_fixes_split(const char *value, char **sha, char **subject);

#endif
