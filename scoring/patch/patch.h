/*
 * patch.h - struct patch, the one model of a patch however it arrived: a
 * mail (RFC 5322 + MIME, parsed with libetpan), one message of an mbox, or
 * a git commit (libgit2).  Features, training and serving all read this
 * struct, so a patch that came by mail and the same change as a commit
 * must parse to the same subject, trailers, files and lines.  The parsers
 * of the parts (subject prefixes, trailers, unified diff) are shared, so
 * that every source uses the same rules; each has its own header
 * (subject.h, trailer.h, diff.h, mbox.h).  A struct patch owns all of its
 * memory; patch_free() releases it.
 */
#ifndef PT_PATCH_H
#define PT_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/util/pt.h"
#include "scoring/patch/diff.h"
#include "scoring/patch/subject.h"
#include "scoring/patch/trailer.h"

/* ---- the patch ----------------------------------------------------- */

struct person {
	char *name;  /* UTF-8, may be NULL */
	char *email; /* lowercased, may be NULL */
};

enum patch_source { PATCH_FROM_MAIL = 1, PATCH_FROM_GIT = 2 };

struct patch {
	enum patch_source source;
	char *message_id;  /* without <>, NULL for commits */
	char *in_reply_to; /* without <> */
	char **references; /* without <>, oldest first */
	size_t nreferences;
	char *list_id;	 /* List-Id without <> and display name */
	char *commit_id; /* 40-hex, commits only */
	char *parent_id; /* first parent, commits only */

	struct person author;	 /* From: for mail */
	struct person committer; /* commits only */
	int64_t author_date;	 /* seconds since the epoch, UTC */
	int author_tz;		 /* minutes east of UTC */
	int64_t commit_date;
	int commit_tz;

	struct subject subject;
	char *message;	 /* full message after the subject line (commit
			       message body / mail body up to the "---") */
	char *changelog; /* message without the trailer block */
	char *notes;	 /* mail: between "---" and the diff (diffstat,
			       changes since vN); NULL for commits */
	struct trailer *trailers;
	size_t ntrailers;

	char *diff; /* the unified diff text, owned */
	size_t diff_len;
	struct patch_file *files;
	size_t nfiles;
	unsigned added, removed;
	/* commits only: the paths whose change could not be read (a blob
	   missing from the object database), not in files and not counted,
	   as `mine` counts them; NULL when there is none */
	char **uncounted;
	size_t nuncounted;
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
