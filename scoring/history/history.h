/*
 * history.h - mining a git repository's history into the state database
 * (`patchtriage mine`).  history.c owns the walk (libgit2 revwalk, no
 * merges, optional first parent), the per-file numstat computed by worker
 * threads (one git_repository per thread) and the single writer that
 * stores commits, files, trailers and people.  After the walk it runs the
 * passes that are recomputed over the whole mined history on every run:
 * cycle.c (release and phase of each commit), labels.c (fix and
 * bug-introducing labels) and histfeat.c (Kamei features, reviewer track
 * records).  It does not print; progress goes to a callback.
 *
 * Schema (schema.c, step 4).  Dates are seconds since the epoch (UTC),
 * time zones minutes east of UTC.  Text columns hold the bytes as found
 * in the repository (not necessarily UTF-8).
 *
 * repos        one row per mined repository.
 *   path       absolute path given to --repo (the key)
 *   tip        40-hex id of the last mined tip; the next run hides it
 *   mined_at   when the last run finished
 *   newest     newest commit_date mined (label horizon reference)
 * people       identities after .mailmap (git_mailmap_resolve).
 *   email      canonical email, lowercased (UNIQUE); name: canonical name
 * commits      one row per non-merge commit mined.
 *   sha, parent (first parent, NULL for a root), nparents
 *   seq        mining order per repository: topological, oldest first
 *              (ties by date); "before a commit" always means lower seq
 *   author_id, committer_id -> people; author_date/_tz, commit_date/_tz
 *   subject    git's summary (first paragraph, whitespace folded)
 *   message    the whole raw message; body_len: bytes before the trailer
 *              block (trailers_parse), so message[0, body_len) is the
 *              changelog the model may see
 *   nfiles, added, removed   numstat totals (binary files count 0 lines)
 *   uncounted  files whose lines could not be counted (blob missing from
 *              the object database); their added/removed are 0
 *   doc_only   1 when every changed line is documentation, a comment or
 *              whitespace (trivial-fix rule "nocode"), else 0
 *   maint_blob id of the MAINTAINERS blob in this commit's tree, or NULL
 *   tag        first matching tag (rc or final) that contains the commit
 *   release    the final release name of that tag (v23.11 for v23.11-rc2)
 *   rc         0 = merged in the merge window (first tag is -rc1),
 *              N = merged after -rcN (first tag is rc N+1, or the final
 *              release when N is the last rc); NULL when unreleased or
 *              the release had no rcs
 *   phase      'merge-window', 'rcN', 'no-rc' or 'unreleased'
 *   after_last_rc 1 when the first tag is the final release after rcs
 *   soak       tag date minus commit_date (seconds), NULL if unreleased
 * commit_files one row per changed file of a commit (renames detected).
 *   path (new path; old path for a deletion), old_path (renames/copies),
 *   status 'A' 'D' 'M' 'R' 'C' 'T'; added, removed; binary; uncounted
 *   (blob missing); old_lines: lines of the file before the change (0
 *   when added); doc_only as above for this file; subsystem: the deepest
 *   matching section of that commit's MAINTAINERS, else the top-level
 *   directory ("" for files at the root)
 * trailers     every trailer of every commit (trailers_parse), in order.
 *   idx, kind (enum trailer_kind of patch.h), key, value; person_id for
 *   person trailers (mailmap'd); is_stable (Cc: stable); fixes_sha and
 *   fixes_subject for Fixes:
 * tags         tags matching the cycle pattern (cycle.c).
 *   name, sha (peeled commit), date (tagger date, else commit date),
 *   release (final name), rc (0 = the final release), ord (version order),
 *   mainline (1: a mainline release tag; 0: a stable-branch tag, which
 *   places no commit)
 * fix_refs     one row per reference from a fixing commit to the commit it
 *   fixes or reverts (labels.c).  commit_id: the fixing commit; kind
 *   'fixes' or 'revert'; ref: the id as written; ref_subject: the quoted
 *   subject; target_id: the mined commit it resolves to (NULL when not
 *   resolved or not mined), target_sha; how: 'full', 'prefix', 'subject'
 *   or 'unresolved'; why: for unresolved or odd ones 'missing',
 *   'ambiguous', 'not-commit', 'not-mined', 'no-id', 'self', 'later';
 *   trivial: the name of the trivial-fix rule ('nocode', 'spelling',
 *   'race') that keeps this reference from labelling, NULL when it counts
 * labels       one row per commit.
 *   is_fix     has Fixes: or Cc: stable (is_stable: the latter)
 *   bug        bug-introducing: target of >= 1 counting fix_refs row
 *   nfixes     number of counting references to it
 *   discovered commit_date of the earliest counting fixing commit: the
 *              label is known only from that date on (as-of training)
 *   trivial_only 1 when only trivial fixes point at it (bug = 0)
 *   negative_ok 1 when the commit is older than the label horizon (default
 *              12 months before repos.newest) or bug = 1: usable as a
 *              training negative/positive; 0 = too young to be a negative
 * features     Kamei et al. 2013 features from strictly earlier commits
 *   (lower seq); see histfeat.c for exact definitions.
 *   ns nd nf entropy la ld lt ndev age nuc exp rexp sexp; and (step
 *   10) the past bugs known at the commit's date, i.e. of commits whose
 *   labels.discovered is before its commit_date: file_bugs and file_fixes
 *   (of NUC's commits, the known buggy ones and the fixes), author_bugs
 *   (of EXP's; NULL without an author), comp_changes and comp_bugs (the
 *   earlier commits whose subject has the same first component, and the
 *   known buggy ones; NULL when the subject has none)
 * reviews      one row per (commit, person, kind) for Reviewed-by,
 *   Acked-by and Tested-by.  is_maintainer: the person is an M: or R: of
 *   a MAINTAINERS section matching a touched file (NULL when the tree has
 *   no MAINTAINERS); prior: commits with lower seq this person reviewed,
 *   acked or tested; prior_bug: of those, how many had labels.discovered
 *   < this commit's commit_date (known bug-introducing at the time).
 */
#ifndef PT_HISTORY_H
#define PT_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/util/pt.h"

struct mine_progress {
	size_t done, total; /* commits diffed / to diff in this run */
	double elapsed;	    /* seconds since the walk started */
	const char *stage;  /* "walking", "diffing", "labels", ... */
};

typedef void (*mine_progress_cb)(const struct mine_progress *p, void *ctx);

struct mine_opts {
	const char *repo; /* path of the repository (bare or not) */
	const char *rev;  /* revision to mine up to; NULL = HEAD */
	int64_t since;	  /* only commits committed at/after; 0 = all */
	int first_parent;
	unsigned threads;	 /* diff workers; 0 = online CPUs */
	const char *tag_pattern; /* ERE; NULL = CYCLE_DEFAULT_PATTERN */
	const char *labels_conf; /* trivial-fix word lists; NULL = built in */
	int horizon_days;	 /* label horizon; 0 = 365 */
	mine_progress_cb progress;
	void *progress_ctx;
	/*
	 * The last step, after labels and history features: the as-of
	 * summaries the scorer reads (scoring/model's histsum_build).  A hook
	 * so that history does not include the model room; NULL = none.
	 */
	int (*summarise)(struct db *db, int64_t repo_id);
};

struct mine_result {
	int64_t repo_id;
	size_t walked;	   /* new commits mined in this run */
	size_t commits;	   /* commits of this repository in the db */
	size_t uncounted;  /* file changes whose blob was missing */
	size_t with_fixes; /* commits with a Fixes: trailer */
	size_t fixes;	   /* commits labelled fix */
	size_t refs, refs_full, refs_prefix, refs_subject, refs_unresolved;
	size_t trivial_nocode, trivial_spelling, trivial_race;
	size_t bugs;	      /* commits labelled bug-introducing */
	size_t tags;	      /* tags matching the pattern */
	size_t mainline_tags; /* of those, the mainline's releases */
};

/*
 * Mine opts->repo into db: walk new commits, then recompute cycle, labels
 * and features.  The counts of this run and the totals go to *res.
 */
int mine_run(struct mine_result *res, struct db *db,
	     const struct mine_opts *opts);

/* Look up a repository's id by path (as given to mine_run). */
int mine_repo_id(int64_t *out, struct db *db, const char *repo);

#endif
