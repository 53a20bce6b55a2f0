/*
 * outcome.h - what became of each posting on a list, and the labels the
 * list itself gives it.  While mail is threaded (archive.c, or any other
 * caller of thread.c), outcome_note() keeps what a message says that the
 * threading tables do not: the trailers a patch carries (Fixes:, Cc:
 * stable, reviews carried over from an earlier version), the commits it
 * reverts, applied notices (a maintainer's "Applied ..." reply, b4's
 * "[n/m] subject / commit: <sha>" list, patchwork-bot's "This series was
 * applied to ..." summary) and what reviewers asked for.  outcome_compute()
 * then derives, over everything stored:
 *
 * posting_outcomes  one row per patch (patches.id).
 *   outcome  'applied', 'superseded' (a later version was posted and this
 *            one was not applied) or 'none'
 *   how      applied: 'reply' (maintainer's reply), 'bot' (patchwork-bot),
 *            'link' (a mined commit's Link:/Message-ID trailer names the
 *            posting), 'subject' (a mined commit with the same subject and
 *            author within OUTCOME_DATE_WINDOW of the posting)
 *   notice_msgid, applied_date (the notice's date, else the commit's
 *   commit_date), commit_sha (from the notice or the commit), commit_id
 *   (commits.id when a mined commit matched), superseded_by (patches.id)
 * posting_labels    one row per patch.
 *   is_fix, is_stable   carries Fixes: / Cc: stable
 *   bug      applied and named by a later posting's Fixes: (its quoted
 *            subject, or its id as a prefix of the applied commit id) or
 *            by a later Revert "subject", counting only references that
 *            the trivial-fix rules of labels.c do not drop
 *   nfixes   distinct fixing postings (by normalised subject)
 *   discovered  date of the earliest counting fixing posting
 *   trivial_only  only trivial fixes point at it
 *   how      'subject', 'sha' or 'revert' for the first counting ref
 *   commit_bug  labels.bug of the matched mined commit (NULL: none)
 * list_posts, list_fixrefs, list_notices, list_asks: what outcome_note()
 * kept (see schema.c).
 */
#ifndef PT_OUTCOME_H
#define PT_OUTCOME_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/patch/patch.h"
#include "scoring/util/progress.h"
#include "scoring/util/pt.h"
#include "scoring/lists/thread.h"

/* A commit matches a posting by subject when dated within this window. */
#define OUTCOME_DATE_WINDOW (14 * 86400)

struct outcome;

int outcome_open(struct outcome **out, struct db *db, const char *labels_conf);
void outcome_free(struct outcome *o);

/*
 * Keep what message p (threaded as res) says about outcomes.  The rows
 * are written in batches of OUTCOME_BATCH messages' worth, each in its
 * own transaction, so call it outside a transaction; outcome_flush()
 * writes what is pending (outcome_compute() does so first).  Rows still
 * pending at outcome_free() are dropped.
 */
int outcome_note(struct outcome *o, const struct patch *p,
		 const struct thread_result *res);
int outcome_flush(struct outcome *o);

struct outcome_counts {
	size_t postings; /* patches */
	size_t applied, by_reply, by_bot, by_link, by_subject;
	size_t superseded, neither;
	size_t fixes;	       /* postings labelled fix */
	size_t refs;	       /* Fixes:/revert references seen */
	size_t refs_matched;   /* ... that matched an applied posting */
	size_t refs_trivial;   /* ... dropped by the trivial-fix rules */
	size_t bugs;	       /* postings labelled bug-introducing */
	size_t commits_joined; /* postings joined with a mined commit */
};

/*
 * Recompute posting_outcomes and posting_labels from scratch; progress
 * (may be NULL) hears "outcomes: done/7 steps" with the step's name.
 */
int outcome_compute(struct outcome_counts *out, struct outcome *o,
		    const struct pt_progress *progress);

/* ---- text rules (exposed for tests) -------------------------------- */

/*
 * 1 when the new (unquoted) text of a reply says the patch was applied:
 * a line whose verb "applied", "queued" or "picked up" comes after at
 * most seven words of greeting or of which patches ("Thanks, applied",
 * "Both patches applied", "Patches 1,2 and 4 applied to ..."), and that
 * is not negated, conditional or about testing ("not applied", "applied
 * on top of ... and tested", "Applied?").
 */
int outcome_says_applied(const char *text, size_t len);

/* One entry of an applied list (b4 ty / patchwork-bot summaries). */
struct outcome_item {
	unsigned number;   /* n of [n/m], 0 when absent */
	char subject[256]; /* the subject as listed, without prefixes */
	char sha[41];	   /* commit id as given, "" when none */
	int unmatched;	   /* patchwork-bot's "(no matching commit)" */
};

/*
 * Parse the list of applied patches of a thank-you reply into items (at
 * most max); returns how many were found.  Items are "[n/m] subject"
 * lines, each followed by its "commit: <id>" or link; with bot set, also
 * patchwork-bot's unbracketed "- subject" lines and their "(no matching
 * commit)".
 */
size_t outcome_parse_items(struct outcome_item *items, size_t max,
			   const char *text, size_t len, int bot);

/*
 * The commit id of a notice that lists no items (patchwork-bot's "  -
 * subject / https://git.kernel.org/<tree>/c/<id>", a maintainer's
 * "Applied as commit <id>" link) when it names exactly one; "" else.
 */
void outcome_notice_sha(const char *text, size_t len, char sha[41]);

/* Where a notice says the patches went, and who put them there. */
struct outcome_dest {
	char tree[128];	 /* "broonie/spi.git", "" when not named */
	char branch[64]; /* "for-next", "" when not named */
	char by[128];	 /* patchwork-bot's "by Name <email>": the email */
};

/*
 * Read "applied to <tree> (<branch>)\nby Name <email>:" (patchwork-bot)
 * or "Applied to\n\n   https://git.kernel.org/.../git/<tree> <branch>"
 * (b4 ty, and Mark Brown's older "has been applied to the spi tree at").
 */
void outcome_parse_dest(struct outcome_dest *d, const char *text, size_t len);

/* One series or patch of a patchwork-bot digest. */
struct outcome_digest_item {
	char target[256];  /* its Message-ID, from the "Lore link:" */
	char subject[256]; /* as listed, with its [v2,1/3] prefix */
	char by[128];	   /* the "Committer:" email, "" when none */
};

/*
 * patchwork-bot's digest ('The following patches were marked
 * "accepted", because they were applied to <tree> (<branch>):'), not a
 * reply in the thread it names: each "Patch: subject" or "Series: ..."
 * block with its "Committer:", "Lore link:" and "Patches: [n/m] subject"
 * lines gives one item per patch; blocks without a Lore link give none.
 * Returns the items found (at most max); 0 when text is no digest.
 */
size_t outcome_parse_digest(struct outcome_digest_item *items, size_t max,
			    const char *text, size_t len);

/*
 * Mark Brown's notices before b4 ('Applied "spi: foo" to the spi tree'
 * as the subject, the commit as a git format-patch below): the applied
 * subject (malloc'd) and the commit id in sha, or NULL.
 */
char *outcome_applied_quote(const char *subject, const char *text,
			    char sha[41]);

/*
 * Revert "subject": the reverted subject (malloc'd) of a subject line
 * such as 'Revert "pwm: foo: Bar"', or NULL.
 */
char *outcome_revert_subject(const char *clean);

#endif
