/*
 * listfeat.h - review and process features of a posting from the list
 * history, as of a moment: what the thread of the posting (and of its
 * series' cover letter) said up to that moment, what happened to its
 * earlier versions, and the track records of its reviewers computed only
 * from list history before that moment.  It reads the threading tables
 * (thread.c), list_posts/list_asks and posting_outcomes/posting_labels
 * (outcome.c); it writes nothing.
 *
 * For the classifier (scoring/model/features.c):
 *
 *   int64_t pid;  struct feat_thread th;
 *   listfeat_posting_of_commit(&pid, db, commit_id);   // 0: none
 *   listfeat_fill_thread(&th, db, pid, LISTFEAT_AT_APPLY);
 *   feat_compute(&vec, ctx, patch, &th, bits, 0);
 *
 * listfeat_fill_thread() fills feat.h's struct feat_thread (known = 1
 * when the posting exists); listfeat_compute() gives every column of
 * LISTFEAT_TABLE for models or evaluations that want all of them.
 */
#ifndef PT_LISTFEAT_H
#define PT_LISTFEAT_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/patch/trailer.h"
#include "scoring/util/pt.h"

struct feat_thread;

enum listfeat_moment {
	LISTFEAT_AT_POSTING = 0, /* the posting's Date: */
	LISTFEAT_AT_APPLY,	 /* posting_outcomes.applied_date; the
				    posting's date when it was not applied */
};

/* Reviewer track record smoothing: prior rate worth this many reviews. */
#define LISTFEAT_PRIOR_RATE 0.05
#define LISTFEAT_PRIOR_WEIGHT 5.0

#define LISTFEAT_ON_LIST " given on the list"

/*
 * The feature groups of the ablation (`eval --archive`): what the seed
 * names as review content, the reviewers' record and role, testing,
 * iterations, test bots, and the author's own record.
 */
enum listfeat_group {
	LISTFEAT_G_REVIEW = 0, /* what the replies say and how much */
	LISTFEAT_G_RECORD,     /* reviewers' track record and role */
	LISTFEAT_G_TESTING,    /* Tested-by and "tested on" claims */
	LISTFEAT_G_ITER,       /* versions and what earlier ones drew */
	LISTFEAT_G_BOTS,       /* test-bot reports */
	LISTFEAT_G_AUTHOR,     /* the author's earlier postings */
	LISTFEAT_NGROUPS,
};

/* X(id, name, group, description); append only (models name columns) */
#define LISTFEAT_TABLE(X)                                                      \
	X(REPLIES, "list.replies", REVIEW, "replies in the thread")            \
	X(REVIEWERS, "list.reviewers", REVIEW, "distinct people who replied")  \
	X(INLINE, "list.inline_comments", REVIEW, "inline comments")           \
	X(TESTED_CLAIMS, "list.tested_claims", TESTING,                        \
	  "\"tested on\" claims")                                              \
	X(SENTIMENT, "list.sentiment", REVIEW, "mean sentiment of replies")    \
	X(NEGATIVE, "list.negative_replies", REVIEW,                           \
	  "replies with negative words")                                       \
	X(REVIEWED, "list.reviewed_by", REVIEW,                                \
	  TRAILER_KEY_REVIEWED LISTFEAT_ON_LIST)                               \
	X(ACKED, "list.acked_by", REVIEW, TRAILER_KEY_ACKED LISTFEAT_ON_LIST)  \
	X(TESTED, "list.tested_by", TESTING,                                   \
	  TRAILER_KEY_TESTED LISTFEAT_ON_LIST)                                 \
	X(NACKED, "list.nacked_by", REVIEW,                                    \
	  TRAILER_KEY_NACKED LISTFEAT_ON_LIST)                                 \
	X(CARRIED, "list.carried_tags", REVIEW,                                \
	  "review tags carried in the patch")                                  \
	X(BOT_REPORTS, "list.bot_reports", BOTS, "test-bot reports")           \
	X(BOT_FAILURES, "list.bot_failures", BOTS, "failing test-bot reports") \
	X(BOT_ARCHS, "list.bot_archs", BOTS, "architectures bots reported on") \
	X(VERSION, "list.version", ITER, "iteration vN")                       \
	X(VERSIONS_BEFORE, "list.versions_before", ITER,                       \
	  "earlier versions linked")                                           \
	X(PREV_REPLIES, "list.prev_replies", ITER,                             \
	  "replies to earlier versions")                                       \
	X(PREV_ASKS, "list.prev_requests", ITER,                               \
	  "requests reviewers made on earlier versions")                       \
	X(PREV_QUESTIONS, "list.prev_questions", ITER,                         \
	  "questions reviewers asked on earlier versions")                     \
	X(ASKS, "list.requests", REVIEW, "requests made on this version")      \
	X(QUESTIONS, "list.questions", REVIEW,                                 \
	  "questions asked on this version")                                   \
	X(NITS, "list.nits", REVIEW, "nits on this version")                   \
	X(DAYS_FIRST, "list.days_since_first", ITER,                           \
	  "days from the first version to the moment")                         \
	X(REV_PRIOR, "list.reviewer_prior", RECORD,                            \
	  "earlier reviews by its reviewers")                                  \
	X(REV_BUGRATE, "list.reviewer_bug_rate", RECORD,                       \
	  "highest smoothed bug rate of its reviewers' earlier reviews")       \
	X(AUTHOR_PRIOR, "list.author_postings", AUTHOR,                        \
	  "earlier postings by author")                                        \
	X(AUTHOR_APPLIED, "list.author_applied", AUTHOR,                       \
	  "earlier applied postings by author")                                \
	X(REPLY_LINES, "list.reply_lines", REVIEW,                             \
	  "lines reviewers wrote (not quoted) in replies")                     \
	X(APPLIER_REPLIED, "list.applier_replied", RECORD,                     \
	  "replies from people who had applied patches on this list")          \
	X(REV_TOP_PRIOR, "list.reviewer_top_prior", RECORD,                    \
	  "earlier reviews by its most practised reviewer")                    \
	X(PREV_BOT_FAILURES, "list.prev_bot_failures", BOTS,                   \
	  "failing test-bot reports on earlier versions")                      \
	X(SIZE_CHANGE, "list.size_change", ITER,                               \
	  "changed lines differing from the previous version")                 \
	X(QUOTED_LINES, "list.quoted_lines", REVIEW,                           \
	  "lines reviewers quoted in replies")                                 \
	X(TESTED_SCALE, "list.tested_scale", TESTING,                          \
	  "machines the largest tested claim names")

enum listfeat_id {
#define LISTFEAT_ENUM(id, name, group, desc) LISTFEAT_##id,
	LISTFEAT_TABLE(LISTFEAT_ENUM)
#undef LISTFEAT_ENUM
		LISTFEAT_N
};

const char *listfeat_name(enum listfeat_id id);
const char *listfeat_desc(enum listfeat_id id);
enum listfeat_group listfeat_group_of(enum listfeat_id id);
/* "review content", "reviewer record and role", ... */
const char *listfeat_group_name(enum listfeat_group g);

struct listfeat {
	int64_t patch_id;
	int64_t as_of; /* the moment, seconds since the epoch */
	double v[LISTFEAT_N];
};

/* The posting a mined commit was applied from (posting_outcomes), or 0. */
int listfeat_posting_of_commit(int64_t *patch_id, struct db *db,
			       int64_t commit_id);

/* The moment's date for a posting. */
int listfeat_moment(int64_t *as_of, struct db *db, int64_t patch_id,
		    enum listfeat_moment m);

/* Every column, from what the list knew at as_of. */
int listfeat_compute(struct listfeat *out, struct db *db, int64_t patch_id,
		     int64_t as_of);

/*
 * The conversation part the classifier takes (feat.h); patch_id 0
 * leaves out->known = 0.
 */
int listfeat_fill_thread(struct feat_thread *out, struct db *db,
			 int64_t patch_id, enum listfeat_moment m);

/* One posting with its outcome, labels and features (listfeat_foreach). */
struct listfeat_row {
	int64_t patch_id;
	const char *message_id;
	int64_t date;
	const char *outcome; /* 'applied', 'superseded', 'none' */
	int is_fix, bug;
	int64_t discovered; /* 0 when not a known bug */
	struct listfeat f;
};

typedef int (*listfeat_cb)(const struct listfeat_row *r, void *ctx);

/* Every posting oldest first, features as of moment m. */
int listfeat_foreach(struct db *db, enum listfeat_moment m, listfeat_cb cb,
		     void *ctx);

#endif
