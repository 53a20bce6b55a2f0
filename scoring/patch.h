/*
 * patch.h - struct patch, the one model of a patch however it arrived: a
 * mail (RFC 5322 + MIME, parsed with libetpan), one message of an mbox, or
 * a git commit (libgit2).  Features, training and serving all read this
 * struct, so a patch that came by mail and the same change as a commit
 * must parse to the same subject, trailers, files and lines.  The parsers
 * of the parts (subject prefixes, trailers, unified diff) are here too, so
 * that every source uses the same rules.  A struct patch owns all of its
 * memory; patch_free() releases it.
 */
#ifndef PT_PATCH_H
#define PT_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "pt.h"

/* ---- subject ------------------------------------------------------- */

/*
 * What the bracket prefixes of a subject say.  "[RFC PATCH net-next v3
 * 2/7] foo: bar" gives is_patch, is_rfc, version 3, number 2, total 7,
 * tags {"net-next"}, clean "foo: bar".  Reply markers (Re:, RE:, Aw:,
 * Fwd:) are stripped and counted in reply_depth.
 */
struct subject {
	char *raw;          /* the subject as given, unfolded, UTF-8 */
	char *clean;        /* without reply markers and bracket prefixes */
	char **tags;        /* other prefix tokens, e.g. "net-next", "6.6" */
	size_t ntags;
	unsigned version;   /* vN; 1 when absent */
	unsigned number;    /* n of n/m; 0 when absent */
	unsigned total;     /* m of n/m; 0 when absent */
	unsigned reply_depth;
	unsigned is_patch : 1, is_rfc : 1, is_resend : 1, is_autosel : 1,
		is_pull : 1, is_cover : 1; /* is_cover: number == 0 && total */
};

int subject_parse(struct subject *out, const char *s, size_t len);
void subject_clear(struct subject *s);
/* clean subject lowercased with whitespace folded: for matching versions */
char *subject_normalise(const char *clean);

/* ---- trailers ------------------------------------------------------ */

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

/* ---- diff ---------------------------------------------------------- */

struct patch_line {
	char kind;          /* '+', '-', ' ', or '\\' (no newline at end) */
	const char *text;   /* points into patch->diff; not NUL-terminated */
	size_t len;         /* without the kind character and the newline */
};

struct patch_hunk {
	unsigned long old_start, old_lines, new_start, new_lines;
	char *heading;      /* text after the closing @@, or NULL */
	struct patch_line *lines;
	size_t nlines;
	unsigned added, removed;
	unsigned truncated : 1; /* the text ended before the counts were met */
};

enum patch_file_status {
	PATCH_FILE_MODIFIED = 0,
	PATCH_FILE_ADDED,
	PATCH_FILE_DELETED,
	PATCH_FILE_RENAMED,
	PATCH_FILE_COPIED,
};

struct patch_file {
	char *old_path;     /* NULL for an added file */
	char *new_path;     /* NULL for a deleted file */
	enum patch_file_status status;
	unsigned old_mode, new_mode;  /* 0 when not given */
	unsigned similarity;          /* rename/copy similarity %, 0 if none */
	unsigned binary : 1;
	struct patch_hunk *hunks;
	size_t nhunks;
	unsigned added, removed;
};

/*
 * Parse a unified diff (git's extended headers understood; plain
 * "--- a\n+++ b" diffs too).  Lines in the result point into text, which
 * must outlive the files (patch_set_diff copies it into the patch).
 */
int diff_parse(struct patch_file **out, size_t *n, const char *text,
	       size_t len);
void diff_files_free(struct patch_file *f, size_t n);

/* ---- the patch ----------------------------------------------------- */

struct person {
	char *name;         /* UTF-8, may be NULL */
	char *email;        /* lowercased, may be NULL */
};

enum patch_source { PATCH_FROM_MAIL = 1, PATCH_FROM_GIT = 2 };

struct patch {
	enum patch_source source;
	char *message_id;   /* without <>, NULL for commits */
	char *in_reply_to;  /* without <> */
	char **references;  /* without <>, oldest first */
	size_t nreferences;
	char *list_id;      /* List-Id without <> and display name */
	char *commit_id;    /* 40-hex, commits only */
	char *parent_id;    /* first parent, commits only */

	struct person author;    /* From: for mail */
	struct person committer; /* commits only */
	int64_t author_date;     /* seconds since the epoch, UTC */
	int author_tz;           /* minutes east of UTC */
	int64_t commit_date;
	int commit_tz;

	struct subject subject;
	char *message;      /* full message after the subject line (commit
			       message body / mail body up to the "---") */
	char *changelog;    /* message without the trailer block */
	char *notes;        /* mail: between "---" and the diff (diffstat,
			       changes since vN); NULL for commits */
	struct trailer *trailers;
	size_t ntrailers;

	char *diff;         /* the unified diff text, owned */
	size_t diff_len;
	struct patch_file *files;
	size_t nfiles;
	unsigned added, removed;
};

int patch_new(struct patch **out);
void patch_free(struct patch *p);

/* Take a copy of the diff text and parse it into p->files. */
int patch_set_diff(struct patch *p, const char *diff, size_t len);
/* Split p->message into changelog and trailers. */
int patch_set_message(struct patch *p, const char *msg, size_t len);

/*
 * One RFC 5322 message (raw bytes, LF or CRLF) to a patch.  A message
 * with no diff is still returned (nfiles == 0): replies and cover letters
 * are messages too; callers that need a diff check nfiles.
 */
int patch_from_mail(struct patch **out, const char *buf, size_t len);

/*
 * An mbox (mboxo or mboxrd; "From " separators, >From unescaped) split
 * into messages.  The callback gets each raw message (index from 0; msg
 * is valid only during the call); return non-zero from it to stop: a
 * negative return is returned by mbox_foreach, a positive one gives 0.
 * A buffer not starting with a "From " line is one message.  Messages
 * are not parsed here so that a malformed one can be skipped by the
 * caller.
 */
typedef int (*mbox_cb)(const char *msg, size_t len, size_t index, void *ctx);
int mbox_foreach(const char *buf, size_t len, mbox_cb cb, void *ctx);

struct git_repository;
struct git_commit;
/* A commit to a patch: message, author/committer, diff to first parent. */
int patch_from_commit(struct patch **out, struct git_repository *repo,
		      const struct git_commit *commit);

/* Count trailers of a kind. */
size_t patch_count_trailers(const struct patch *p, enum trailer_kind kind);
/* Has Fixes: or Cc: stable. */
int patch_is_tagged_fix(const struct patch *p);

/* The JSON shape documented in the man page (patchtriage-show(1)). */
int patch_to_json(struct buf *out, const struct patch *p);

#endif
