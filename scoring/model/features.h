/*
 * feat.h - what the classifiers see of a patch.  feat_compute() turns
 * a struct patch plus the state database *as of the patch's date* into a
 * feature vector: a dense tabular part whose every column has a stable
 * name (the table below, in order; explanations and the model manifest
 * use these names) and a sparse hashed part (word uni/bigrams of the
 * subject and changelog, code tokens of added and removed lines).  The
 * same code serves commits (training) and mails (serving).  History
 * columns come from the miner's tables (history.h): a mined commit reads
 * its own rows there, which the miner computed from strictly earlier
 * commits; a patch that is not mined gets them from SQL over commits
 * dated before it.  Nothing later than the patch's date is read.
 *
 * Conversation columns (replies, reviewers in the thread, vN) come from
 * struct feat_thread when the mail layer has one; otherwise they are
 * missing (NAN), which the tree model handles natively.
 */
#ifndef PT_FEATURES_H
#define PT_FEATURES_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/model/model.h"
#include "scoring/patch/patch.h"
#include "scoring/patch/trailer.h"
#include "scoring/util/pt.h"

enum feat_group {
	FEAT_G_SIZE = 0,   /* size and diffusion */
	FEAT_G_HISTORY,	   /* history of the touched files */
	FEAT_G_EXPERIENCE, /* the author's */
	FEAT_G_CODE,	   /* patterns in the added/removed lines */
	FEAT_G_REVIEW,	   /* review trailers and reviewers' records */
	FEAT_G_TESTING,	   /* Tested-by, tested-on claims, bots, arch */
	FEAT_G_PROCESS,	   /* release cycle, timing, iteration */
	FEAT_G_CONV,	   /* the mail thread (when known) */
	FEAT_G_LABEL, /* the label's own trailers: never for the fix task */
	FEAT_G_TEXT,  /* the sparse part */
	FEAT_NGROUPS,
};

/*
 * X(id, name, group, description): the description completes "the patch
 * has <value> ..." loosely and is what `explain` prints.  Append only:
 * a saved model names its columns, so reordering is safe but renaming is
 * not.
 */
#define FEAT_TABLE(X)                                                          \
	X(LA, "size.lines_added", FEAT_G_SIZE, "lines added")                  \
	X(LD, "size.lines_removed", FEAT_G_SIZE, "lines removed")              \
	X(LT, "size.lines_before", FEAT_G_SIZE,                                \
	  "lines in the touched files before the change")                      \
	X(NF, "size.files", FEAT_G_SIZE, "files touched")                      \
	X(ND, "size.dirs", FEAT_G_SIZE, "directories touched")                 \
	X(NS, "size.subsystems", FEAT_G_SIZE, "subsystems touched")            \
	X(ENTROPY, "size.entropy", FEAT_G_SIZE,                                \
	  "spread of the change over files (entropy)")                         \
	X(HUNKS, "size.hunks", FEAT_G_SIZE, "hunks")                           \
	X(NEWFILES, "size.new_files", FEAT_G_SIZE, "new files")                \
	X(NDEV, "hist.developers", FEAT_G_HISTORY,                             \
	  "earlier developers of the touched files")                           \
	X(AGE, "hist.age_days", FEAT_G_HISTORY,                                \
	  "days since the touched files last changed")                         \
	X(NUC, "hist.changes", FEAT_G_HISTORY,                                 \
	  "earlier changes to the touched files")                              \
	X(EXP, "exp.author_commits", FEAT_G_EXPERIENCE,                        \
	  "earlier commits by the author")                                     \
	X(REXP, "exp.author_recent", FEAT_G_EXPERIENCE,                        \
	  "recent experience of the author")                                   \
	X(SEXP, "exp.author_subsystem", FEAT_G_EXPERIENCE,                     \
	  "earlier commits by the author in these subsystems")                 \
	X(NULL_GUARD, "code.added_null_check", FEAT_G_CODE,                    \
	  "added NULL checks")                                                 \
	X(ERR_RETURN, "code.added_error_return", FEAT_G_CODE,                  \
	  "added error returns")                                               \
	X(IS_ERR, "code.added_is_err", FEAT_G_CODE, "added IS_ERR() checks")   \
	X(GOTO, "code.added_goto_unwind", FEAT_G_CODE,                         \
	  "added goto-unwind paths")                                           \
	X(LOCK_ADD, "code.added_locking", FEAT_G_CODE, "added locking calls")  \
	X(LOCK_DEL, "code.removed_locking", FEAT_G_CODE,                       \
	  "removed locking calls")                                             \
	X(BOUNDS, "code.added_bounds_check", FEAT_G_CODE,                      \
	  "added bounds checks")                                               \
	X(WARN, "code.added_warn", FEAT_G_CODE,                                \
	  "added WARN_ON/BUG_ON/assertions")                                   \
	X(FREE_ADD, "code.added_free", FEAT_G_CODE, "added frees")             \
	X(NULL_AFTER, "code.added_null_after_free", FEAT_G_CODE,               \
	  "pointers cleared after free")                                       \
	X(INIT, "code.added_init", FEAT_G_CODE,                                \
	  "added memset/zero initialisers")                                    \
	X(COMMENT_ONLY, "code.comment_only", FEAT_G_CODE,                      \
	  "only comments or blank lines change")                               \
	X(WS_ONLY, "code.whitespace_only", FEAT_G_CODE,                        \
	  "only whitespace changes")                                           \
	X(DOC_ONLY, "code.doc_only", FEAT_G_CODE,                              \
	  "only documentation files change")                                   \
	X(TEST_ONLY, "code.test_only", FEAT_G_CODE, "only test files change")  \
	X(BUILD_ONLY, "code.build_only", FEAT_G_CODE,                          \
	  "only build files change")                                           \
	X(SMALL_FIX, "code.one_line", FEAT_G_CODE,                             \
	  "changes at most two lines of code")                                 \
	X(N_REVIEWED, "review.reviewed_by", FEAT_G_REVIEW,                     \
	  TRAILER_KEY_REVIEWED)                                                \
	X(N_ACKED, "review.acked_by", FEAT_G_REVIEW, TRAILER_KEY_ACKED)        \
	X(N_REPORTED, "review.reported_by", FEAT_G_REVIEW,                     \
	  TRAILER_KEY_REPORTED)                                                \
	X(N_SUGGESTED, "review.suggested_by", FEAT_G_REVIEW,                   \
	  TRAILER_KEY_SUGGESTED)                                               \
	X(N_SIGNOFF, "review.signed_off_by", FEAT_G_REVIEW,                    \
	  TRAILER_KEY_SIGNED_OFF)                                              \
	X(MAINT_REVIEW, "review.maintainer_reviewed", FEAT_G_REVIEW,           \
	  TRAILER_KEY_REVIEWED "/" TRAILER_KEY_ACKED                           \
			       " from a maintainer of the touched files")      \
	X(REV_BUGRATE, "review.reviewer_bug_rate", FEAT_G_REVIEW,              \
	  "reviewers' past bug rate (smoothed)")                               \
	X(REV_PRIOR, "review.reviewer_prior", FEAT_G_REVIEW,                   \
	  "commits the reviewers reviewed before")                             \
	X(REV_FREQUENT, "review.reviewer_frequent", FEAT_G_REVIEW,             \
	  "a reviewer is a frequent reviewer (50+ earlier)")                   \
	X(AUTHOR_IS_COMMITTER, "review.self_committed", FEAT_G_REVIEW,         \
	  "author committed it themselves")                                    \
	X(N_TESTED, "test.tested_by", FEAT_G_TESTING, TRAILER_KEY_TESTED)      \
	X(TESTED_CLAIM, "test.tested_claim", FEAT_G_TESTING,                   \
	  "changelog says how it was tested")                                  \
	X(BOT_REPORT, "test.bot_report", FEAT_G_TESTING,                       \
	  "reported by a bot (syzbot, 0day, KernelCI, Coverity)")              \
	X(ARCH, "test.arch_specific", FEAT_G_TESTING,                          \
	  "touches architecture-specific code")                                \
	X(RC, "proc.rc", FEAT_G_PROCESS,                                       \
	  "the mainline's -rc when written (0: a final release)")              \
	X(LATE_RC, "proc.late_rc", FEAT_G_PROCESS,                             \
	  "the mainline was at a late -rc (rc5 or later)")                     \
	X(DAYS_TAG, "proc.days_since_tag", FEAT_G_PROCESS,                     \
	  "days since the mainline's newest tag")                              \
	X(DAYS_RELEASE, "proc.days_since_release", FEAT_G_PROCESS,             \
	  "days since the mainline's newest release")                          \
	X(LATENCY, "proc.review_days", FEAT_G_PROCESS,                         \
	  "days from authoring to commit")                                     \
	X(HOUR, "proc.author_hour", FEAT_G_PROCESS, "author's local hour")     \
	X(VERSION, "proc.version", FEAT_G_PROCESS, "iteration vN")             \
	X(SERIES, "proc.series_size", FEAT_G_PROCESS, "patches in the series") \
	X(RESEND, "proc.resend", FEAT_G_PROCESS, "a RESEND")                   \
	X(REVERT, "proc.revert", FEAT_G_PROCESS, "a revert")                   \
	X(BUGZILLA, "proc.bug_tracker", FEAT_G_PROCESS,                        \
	  "refers to a bug tracker entry")                                     \
	X(C_REPLIES, "conv.replies", FEAT_G_CONV, "replies in the thread")     \
	X(C_REVIEWERS, "conv.reviewers", FEAT_G_CONV,                          \
	  "distinct reviewers in the thread")                                  \
	X(C_INLINE, "conv.inline_comments", FEAT_G_CONV,                       \
	  "quoted inline comments")                                            \
	X(C_VERSIONS, "conv.versions", FEAT_G_CONV, "series versions posted")  \
	X(C_NEGATIVE, "conv.negative_words", FEAT_G_CONV,                      \
	  "critical words in replies")                                         \
	X(HAS_FIXES, "label.fixes_tag", FEAT_G_LABEL, "a Fixes: tag")          \
	X(CC_STABLE, "label.cc_stable", FEAT_G_LABEL, "Cc: stable")            \
	X(FILE_BUGS, "hist.file_bugs", FEAT_G_HISTORY,                         \
	  "earlier changes to the touched files known to be buggy")            \
	X(FILE_BUGRATE, "hist.file_bug_rate", FEAT_G_HISTORY,                  \
	  "share of earlier changes to the touched files known buggy "         \
	  "(smoothed)")                                                        \
	X(FILE_FIXES, "hist.file_fixes", FEAT_G_HISTORY,                       \
	  "earlier fixes (Fixes:/Cc: stable) to the touched files")            \
	X(AUTHOR_BUGS, "exp.author_bugs", FEAT_G_EXPERIENCE,                   \
	  "earlier commits by the author known to be buggy")                   \
	X(AUTHOR_BUGRATE, "exp.author_bug_rate", FEAT_G_EXPERIENCE,            \
	  "author's past bug rate (smoothed)")                                 \
	X(COMP_CHANGES, "hist.component_changes", FEAT_G_HISTORY,              \
	  "earlier commits to the subject's component (its prefix)")           \
	X(COMP_BUGRATE, "hist.component_bug_rate", FEAT_G_HISTORY,             \
	  "past bug rate of the subject's component (smoothed)")

enum feat_id {
#define FEAT_ENUM(id, name, group, desc) FEAT_##id,
	FEAT_TABLE(FEAT_ENUM)
#undef FEAT_ENUM
		FEAT_NTAB
};

const char *feat_name(enum feat_id id);
const char *feat_desc(enum feat_id id);
enum feat_group feat_group_of(enum feat_id id);
const char *feat_group_name(enum feat_group g);
/* All FEAT_NTAB names in order, for model_data_new(). */
const char *const *feat_names(void);
/* Column index of a name, or -1. */
int feat_lookup(const char *name);

/* What the mail layer knows of a patch's thread (thread.c fills it). */
struct feat_thread {
	int known; /* 0: leave the conversation columns NAN */
	unsigned replies, reviewers, inline_comments, versions, negative;
};

/* One computed vector. */
struct feat_vec {
	float tab[FEAT_NTAB];
	struct model_sparse *sp;
	size_t nsp, spcap;
	/* with FEAT_NAMES: the token behind each sparse entry ("w:null") */
	char **sp_names;
	/* facts for the explanations, owned */
	char *release_tag; /* newest mainline tag at the cycle date */
	char *release;	   /* newest mainline final release then */
	int from_mail;	   /* a mail (cycle date: its Date:) */
	char *top_dir;	   /* the most-changed directory ("drivers/net/") */
	char *phrase;	   /* a telling phrase of the changelog */
	int64_t date;	   /* the as-of date of the history columns */
};

void feat_vec_free(struct feat_vec *v); /* the contents; v itself not */

enum { FEAT_NAMES = 1 };

/*
 * As-of lookups in the state database, prepared once.  repo_id selects
 * the mined repository; db may be NULL (no history: those columns NAN).
 */
struct feat_ctx;
int feat_ctx_new(struct feat_ctx **out, struct db *db, int64_t repo_id);
void feat_ctx_free(struct feat_ctx *c);
/*
 * Score unmined patches by the SQL over earlier commits instead of
 * histsum.h's summary: the reference the summary is tested against.
 */
void feat_ctx_no_summary(struct feat_ctx *c);

/*
 * Compute p's vector as of its date (commit date for commits, the Date:
 * of a mail); the release-cycle columns (proc.rc .. days_since_release)
 * as of the author date, which for a mail is its Date:, so a commit and
 * the same patch posted get the mainline's state when it was written.
 * thread may be NULL.  flags: FEAT_NAMES.  hash_bits as
 * the model's.
 */
int feat_compute(struct feat_vec *out, struct feat_ctx *c,
		 const struct patch *p, const struct feat_thread *thread,
		 unsigned hash_bits, unsigned flags);

/* The hashed index of a token in a namespace ("w", "b", "s", "+", "-"). */
uint32_t feat_hash(const char *ns, const char *tok, size_t len,
		   unsigned hash_bits);

#endif
