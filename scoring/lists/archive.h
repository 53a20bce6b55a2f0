/*
 * archive.h - mailing-list archives as a source of list mail: public-inbox
 * git repositories (one commit per message, the raw message in the blob
 * `m`; several epochs read in order, each remembered by its last commit
 * so that the next import only reads what is new) and mbox files (mboxrd
 * and mboxo, plain or gzip'd).  Every message goes through the same
 * threading as the IMAP path (thread.c) and then through outcome.c, which
 * notes what the message says about outcomes (applied notices, Fixes:,
 * reverts, what reviewers asked for).  A message that cannot be parsed is
 * counted and recorded with its reason in archive_skips, never fatal.
 *
 * Tables (schema.c, step 6):
 * archive_sources  one row per epoch or mbox file imported.
 *   path         absolute path (the key); kind 'public-inbox' or 'mbox'
 *   last_commit  public-inbox: 40-hex id of the newest commit read; the
 *                next import hides it (a rewritten epoch whose last
 *                commit is gone is read again in full; duplicates of
 *                messages already stored are recognised by Message-ID)
 *   messages, skipped   totals over all imports of this source
 * archive_skips    one row per skipped message: source, pos (commit id
 *                  or "#N", the message's index in the mbox), reason.
 *
 * gzip: an .mbox.gz is inflated with zlib's gzread in 1 MiB blocks and
 * cut into messages as it streams, so memory stays at one message (at
 * most PT_MAX_MAIL_SIZE) plus one block however big the archive is.  A
 * message over the limit is skipped up to the next separator.  Plain
 * files go through the same path (gzread reads them as they are).
 */
#ifndef PT_ARCHIVE_H
#define PT_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/patch/mbox.h"
#include "scoring/store/db.h"
#include "scoring/util/progress.h"
#include "scoring/util/pt.h"

/* ---- readers ------------------------------------------------------- */

/*
 * Called for each raw message; pos names it within its source (the
 * commit id for public-inbox, "#N" for an mbox).  Return non-zero to
 * stop the walk (a negative value is returned by the reader).
 */
typedef int (*archive_msg_cb)(const char *msg, size_t len, const char *pos,
			      void *ctx);
/*
 * msg is NULL for a message that cannot be read: len is its size when it
 * is over PT_MAX_MAIL_SIZE, or ARCHIVE_MSG_ABSENT when a public-inbox
 * commit names a blob the object database lacks (a partial snapshot).
 */
#define ARCHIVE_MSG_ABSENT ((size_t)-1)

struct archive_walk {
	size_t commits; /* commits walked */
	size_t deleted; /* public-inbox commits without `m` (removals) */
	size_t too_big; /* mbox messages over PT_MAX_MAIL_SIZE */
	size_t absent;	/* public-inbox messages whose blob is missing */
	int truncated;	/* the gzip stream ended early */
	int restarted;	/* public-inbox: `since` not found, read all */
	char last[41];	/* newest commit walked, "" when none */
	/* mbox: bytes of the file read so far and its size (0: unknown) */
	uint64_t read, size;
};

/*
 * Walk one public-inbox epoch (a bare git repository) oldest first,
 * from after commit `since` (40-hex, or NULL for all).
 */
int archive_pi_foreach(struct archive_walk *out, const char *gitdir,
		       const char *since, archive_msg_cb cb, void *ctx);

/*
 * The epochs of a public-inbox: PATH itself when it is a git directory,
 * else PATH/git/N.git in numeric order.  *out is a NULL-terminated array
 * of malloc'd paths (free with archive_paths_free).
 */
int archive_pi_epochs(char ***out, const char *path);
void archive_paths_free(char **paths);

/*
 * Split an mbox file (plain or gzip'd; "-" is stdin) into messages,
 * streaming: memory stays at one message and one block.  As with
 * mbox_foreach(), a stream whose first line is not a separator is one
 * message.
 */
int archive_mbox_foreach(struct archive_walk *out, const char *path,
			 archive_msg_cb cb, void *ctx);

/* ---- import -------------------------------------------------------- */

struct archive_progress {
	const char *source;
	size_t messages; /* read so far in this import */
	size_t skipped;
	double elapsed; /* seconds */
	/* read so far from this source, and the share of it read (an
	   mbox's bytes; 0 when not known) */
	size_t source_messages;
	double share;
};

typedef void (*archive_progress_cb)(const struct archive_progress *p,
				    void *ctx);

struct archive_opts {
	const char *lexicon;	 /* sentiment word list (thread_open) */
	const char *labels_conf; /* trivial-fix lists; NULL = built in */
	int full;		 /* ignore remembered epoch positions */
	archive_progress_cb progress;
	void *progress_ctx;
	/* archive_finish(): "outcomes: done/total steps" (outcome.h) */
	struct pt_progress finish_progress;
};

struct archive_result {
	size_t sources;
	size_t messages;   /* raw messages read */
	size_t imported;   /* new messages threaded */
	size_t duplicates; /* Message-ID already stored */
	size_t skipped;	   /* malformed or too large, see archive_skips */
	size_t deleted;	   /* public-inbox removal commits */
	size_t absent;	   /* ... whose message blob is missing (skipped) */
	size_t patches, covers, replies, other;
};

struct archive;

int archive_open(struct archive **out, struct db *db,
		 const struct archive_opts *opts);
void archive_free(struct archive *a);

/* Import one epoch (incrementally) or one mbox; counts add to a's. */
int archive_import_pi(struct archive *a, const char *gitdir);
int archive_import_mbox(struct archive *a, const char *path);
/*
 * After archive_import_mbox(): 1 when the file ended early (a gzip
 * stream cut short; what was read is stored, the cut message is not,
 * and archive_skips has the row "end") with *nread the messages read
 * in full, else 0.
 */
int archive_source_cut(const struct archive *a, size_t *nread);
struct maint;
/*
 * The maintainers (M: of every section of a MAINTAINERS file, named
 * source in messages) whose plain "Applied, thanks" makes a posting
 * applied, as a notice naming the commit does; replaces the set stored
 * before.  Others' replies count only when they name commits or come
 * from someone who said "applied" in three threads or more.
 */
int archive_set_maintainers(struct archive *a, const struct maint *m,
			    const char *source);
/*
 * Recompute outcomes and list labels over everything imported (and any
 * mined history in the database) and give the totals of this import.
 */
int archive_finish(struct archive *a, struct archive_result *out);

/* ---- stats --------------------------------------------------------- */

struct archive_stats {
	int64_t sources, messages, skipped;
	int64_t series, series_complete, versions_linked;
	int64_t patches, replies, reviews, notices;
	int64_t applied, applied_reply, applied_bot, applied_commit;
	int64_t superseded, neither;
	int64_t fixes, bugs, trivial_only;
};

int archive_stats(struct archive_stats *out, struct db *db);
/* The stats as one JSON object (keys as the field names). */
int archive_stats_json(struct buf *out, const struct archive_stats *s);

/*
 * Per list (archive_lists.c): a posting's list is the List-Id of its
 * stored message, else the archive source it was read from; a message
 * cross-posted to two imported lists is stored once and counts under
 * the List-Id of the copy imported first.
 */
struct archive_list_stats {
	char *list;	    /* List-Id or source; "(total)" for all */
	int64_t postings;   /* patches */
	int64_t applied;    /* applied by any way */
	int64_t applied_id; /* ... with a commit id */
	int64_t applied_reply, applied_bot; /* ... by a reply, by the bot */
	int64_t bugs;			    /* bug-introducing */
	int64_t fixes;			    /* carry Fixes: or Cc: stable */
	int64_t unresolved; /* distinct Fixes: ids that name no applied
				commit id nor, by subject, applied posting */
};

/* Its count columns, in order; the last entry has name NULL. */
struct archive_list_col {
	const char *name;
	size_t off;
};
extern const struct archive_list_col archive_list_cols[];

/* One row per list, by name, then "(total)". */
int archive_stats_lists(struct archive_list_stats **out, size_t *n,
			struct db *db);
void archive_stats_lists_free(struct archive_list_stats *rows, size_t n);
/* The rows as a JSON array of objects ("list" and the column names). */
int archive_stats_lists_json(struct buf *out,
			     const struct archive_list_stats *rows, size_t n);

#endif
