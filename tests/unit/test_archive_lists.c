/*
 * test_archive_lists.c - a small multi-list archive written as three
 * mboxes (linux-pwm, linux-leds, linux-spi) and imported as one
 * (scoring/lists/archive.c, outcome*.c, archive_lists.c): the exact
 * applied commit ids, who applied them, when and where, from b4 tys, a
 * patchwork-bot notice and digest (one item "(no matching commit)") and a notice
 * of Mark Brown's older kind; a Fixes: on one list naming another
 * list's applied commit by id prefix, one naming a posting by subject,
 * one naming nothing known, and a comment-only (trivial) fix; a v1/v2
 * pair with review; an Outlook reply pasting the patch unquoted; an
 * [RFC 2/2] series; a message cross-posted to two lists; the per-list
 * stats and the features of listfeat.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archivefx.h"
#include "scoring/lists/archive.h"
#include "scoring/lists/outcome.h"
#include "scoring/model/listfeat.h"
#include "scoring/store/db.h"
#include "scoring/util/pt.h"

#define PWM "linux-pwm.vger.kernel.org"
#define LEDS "linux-leds.vger.kernel.org"
#define SPI "linux-spi.vger.kernel.org"

static const char *const ALICE = "Alice Author <alice@example.org>";
static const char *const BOB = "Bob Reviewer <bob@example.org>";
static const char *const CAROL = "Carol Rfc <carol@example.org>";
static const char *const DAVE = "Dave Fixer <dave@example.org>";
static const char *const EVE = "Eve Outlook <eve@example.org>";
static const char *const UWE = "Uwe Maintainer <uwe@example.org>";
static const char *const MARK = "Mark Brown <broonie@kernel.org>";
static const char *const LEE = "Lee Leds <lee@example.org>";
static const char *const PWBOT = "patchwork-bot+linux-spi@kernel.org";

#define SHA_A "1111111111111111111111111111111111111111"
#define SHA_FIX "3333333333333333333333333333333333333333"
#define SHA_L "5555555555555555555555555555555555555555"

/* One message of list LIST on day DAY (NULL irt: not a reply). */
static void mail(struct buf *b, const char *list, const char *id,
		 const char *from, int day, const char *subj, const char *irt,
		 const char *body)
{
	char date[64];
	time_t t = (time_t)(T0 + (int64_t)day * DAY);
	struct tm tm;
	const char *s, *e;

	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	buf_addf(b,
		 "From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: %s\n"
		 "Date: %s\nSubject: %s\nMessage-ID: <%s>\n",
		 from, date, subj, id);
	if (irt)
		buf_addf(b, "In-Reply-To: <%s>\nReferences: <%s>\n", irt, irt);
	buf_addf(b,
		 "List-Id: <%s>\nMIME-Version: 1.0\n"
		 "Content-Type: text/plain; charset=utf-8\n\n",
		 list);
	for (s = body; *s; s = e) { /* mboxrd: >*From gains a '>' */
		e = strchr(s, '\n');
		e = e ? e + 1 : s + strlen(s);
		if (!strncmp(s + strspn(s, ">"), "From ", 5))
			buf_addch(b, '>');
		buf_add(b, s, (size_t)(e - s));
	}
	buf_addstr(b, "\n");
}

/* A patch body: LOG, its trailers, a one-line change to FILE. */
static char *patch_body(const char *from, const char *log, const char *tags,
			const char *file, const char *line)
{
	struct buf b = BUF_INIT;

	buf_addf(&b,
		 "%s\n\n%sSigned-off-by: %s\n---\n"
		 " %s | 1 +\n 1 file changed, 1 insertion(+)\n\n"
		 "diff --git a/%s b/%s\nindex 1111111..2222222 100644\n"
		 "--- a/%s\n+++ b/%s\n@@ -1,3 +1,4 @@\n a\n+%s\n b\n c\n"
		 "-- \n2.43.0\n",
		 log, tags, from, file, file, file, file, file, line);
	return buf_detach(&b, NULL);
}

static void patch(struct buf *b, const char *list, const char *id,
		  const char *from, int day, const char *subj, const char *irt,
		  const char *log, const char *tags, const char *file,
		  const char *line)
{
	char *body = patch_body(from, log, tags, file, line);

	mail(b, list, id, from, day, subj, irt, body);
	free(body);
}

/* linux-pwm: v1 with review, v2 reviewed, an Outlook paste, a b4 ty. */
static void pwm_list(struct buf *b)
{
	patch(b, PWM, "a1@x", ALICE, 0, "[PATCH] pwm: foo: Add bar", NULL,
	      "Add bar.", "", "drivers/pwm/pwm-foo.c", "bar();");
	mail(b, PWM, "ra1@x", BOB, 1, "Re: [PATCH] pwm: foo: Add bar", "a1@x",
	     "On Mon, Alice wrote:\n> +bar();\n\nWhy not later?\n"
	     "Please split the init.\n\nBob\n");
	patch(b, PWM, "a2@x", ALICE, 3, "[PATCH v2] pwm: foo: Add bar", NULL,
	      "Add bar.\n\nv2: split the init.", "", "drivers/pwm/pwm-foo.c",
	      "bar(1);");
	mail(b, PWM, "ra2@x", BOB, 4, "Re: [PATCH v2] pwm: foo: Add bar",
	     "a2@x",
	     "> +bar(1);\n\nLooks good.\n\n"
	     "Reviewed-by: Bob Reviewer <bob@example.org>\n");
	mail(b, PWM, "oa2@x", EVE, 4, "RE: [PATCH v2] pwm: foo: Add bar",
	     "a2@x",
	     "Works for us, thanks.\n\n-----Original Message-----\n"
	     "From: Alice Author <alice@example.org>\n"
	     "Sent: Thursday, January 4, 2024 10:00 AM\n"
	     "Subject: [PATCH v2] pwm: foo: Add bar\n\nAdd bar.\n\n"
	     "Suggested-by: Zed Idea <zed@example.org>\n"
	     "Signed-off-by: Alice Author <alice@example.org>\n---\n"
	     " drivers/pwm/pwm-foo.c | 1 +\n");
	mail(b, PWM, "ty2@x", UWE, 5, "Re: [PATCH v2] pwm: foo: Add bar",
	     "a2@x",
	     "On Thu, 04 Jan 2024, Alice Author wrote:\n> Add bar.\n\n"
	     "Applied to\n\n   https://git.kernel.org/pub/scm/linux/kernel/"
	     "git/ukleinek/linux.git pwm/for-next\n\nThanks!\n\n"
	     "[1/1] pwm: foo: Add bar\n      commit: " SHA_A "\n\n"
	     "Best regards,\n-- \nUwe Maintainer <uwe@example.org>\n");
}

/*
 * linux-leds: a fix of pwm's applied commit by a 10-digit id, cross-
 * posted to linux-spi; a comment-only fix naming it by subject; a patch
 * whose b4 ty list says "it has been applied to my local branch".
 */
static void leds_fix(struct buf *b, const char *list)
{
	patch(b, list, "f1@x", DAVE, 20, "[PATCH] leds: foo: Fix bar use", NULL,
	      "Do not call bar() twice.",
	      "Fixes: 1111111111 (\"pwm: foo: Add bar\")\n"
	      "Cc: stable@vger.kernel.org\n",
	      "drivers/leds/leds-foo.c", "baz();");
}

static void leds_list(struct buf *b)
{
	leds_fix(b, LEDS);
	patch(b, LEDS, "f2@x", DAVE, 21, "[PATCH] leds: foo: Reword comment",
	      NULL, "Say what bar does.",
	      "Fixes: 4444444 (\"pwm: foo: Add bar\")\n",
	      "drivers/leds/leds-foo.c", "/* bar */");
	patch(b, LEDS, "l1@x", ALICE, 9, "[PATCH] leds: foo: Add baz", NULL,
	      "Add baz.", "", "drivers/leds/leds-foo.c", "baz(0);");
	mail(b, LEDS, "tyl1@x", LEE, 10, "Re: [PATCH] leds: foo: Add baz",
	     "l1@x",
	     "On Tue, 09 Jan 2024, Alice Author wrote:\n> Add baz.\n\n"
	     "Thank you for your contribution, it has been applied to my "
	     "local\nreview-next branch.\n\nThe list of commits applied:\n"
	     "[1/1] leds: foo: Add baz\n      commit: " SHA_L "\n\n--\n Lee\n");
}

/* patchwork-bot's digest: not a reply, names postings by Message-ID */
#define DIGEST                                                                   \
	"Hello:\n\nThe following patches were marked \"accepted\", because "     \
	"they were applied to\nbroonie/spi.git (for-next):\n\n"                  \
	"Patch: [v2] spi: baz: Tidy up\n"                                        \
	"  Submitter: Carol Rfc <carol@example.org>\n"                           \
	"  Committer: Mark Brown <broonie@kernel.org>\n"                         \
	"  Patchwork: https://patchwork.kernel.org/project/spi/list/?series=1\n" \
	"  Lore link: https://lore.kernel.org/r/t1@x\n\n"                        \
	"Series: spi: old: stuff\n"                                              \
	"  Submitter: Xavier <x@example.org>\n"                                  \
	"  Committer: Other One <other@example.org>\n"                           \
	"  Lore link: https://lore.kernel.org/r/notstored@x\n"                   \
	"    Patches: [v3,1/2] spi: old: A\n"                                    \
	"             [v3,2/2] spi: old: B\n\n\nTotal patches: 3\n\n"            \
	"-- \nDeet-doot-dot, I am a bot.\n"

/*
 * linux-spi: an [RFC 0-2/2] series (no word PATCH) with its own tags,
 * a patchwork-bot notice with a link for 1/2 and none for 2/2, a fix
 * of RFC 1/2 by subject with Mark Brown's older notice, a Fixes: of an
 * unknown commit, a patch applied by a patchwork-bot digest, and the
 * copy of the leds fix.
 */
static void spi_list(struct buf *b)
{
	mail(b, SPI, "rc@x", CAROL, 2, "[RFC 0/2] spi: baz: qux", NULL,
	     "This adds qux.\n");
	patch(b, SPI, "r1@x", CAROL, 2, "[RFC 1/2] spi: baz: Add qux", "rc@x",
	      "Add qux.", "Reviewed-by: Dan Inhouse <dan@example.org>\n",
	      "drivers/spi/spi-baz.c", "qux();");
	patch(b, SPI, "r2@x", CAROL, 2, "[RFC 2/2] spi: baz: Use qux", "rc@x",
	      "Use qux.", "", "drivers/spi/spi-baz.c", "qux(1);");
	mail(b, SPI, "bot@x", PWBOT, 6, "Re: [RFC 0/2] spi: baz: qux", "rc@x",
	     "Hello:\n\nThis series was applied to broonie/spi.git "
	     "(for-next)\nby Mark Brown <broonie@kernel.org>:\n\n"
	     "On Wed, 03 Jan 2024 you wrote:\n> This adds qux.\n\n"
	     "Here is the summary with links:\n"
	     "  - [RFC,1/2] spi: baz: Add qux\n"
	     "    https://git.kernel.org/broonie/spi/c/222222222222\n"
	     "  - [RFC,2/2] spi: baz: Use qux\n    (no matching commit)\n\n"
	     "You are awesome, thank you!\n-- \nDeet-doot-dot, I am a bot.\n"
	     "https://korg.docs.kernel.org/patchwork/pwbot.html\n");
	patch(b, SPI, "t1@x", CAROL, 8, "[PATCH v2] spi: baz: Tidy up", NULL,
	      "Tidy up.", "", "drivers/spi/spi-baz.c", "tidy();");
	mail(b, SPI, "dg@x", PWBOT, 12, "Patchwork summary for: spi-devel",
	     NULL, DIGEST);
	leds_fix(b, SPI);
	patch(b, SPI, "s1@x", DAVE, 22, "[PATCH] spi: baz: Fix qux", NULL,
	      "Check qux() fails.",
	      "Fixes: deadbee0000 (\"spi: baz: Add qux\")\n"
	      "Fixes: 0123456789ab (\"spi: old: Gone\")\n",
	      "drivers/spi/spi-baz.c", "if (qux()) return;");
	mail(b, SPI, "ms1@x", MARK, 23,
	     "Applied \"spi: baz: Fix qux\" to the spi tree", "s1@x",
	     "The patch\n\n   spi: baz: Fix qux\n\nhas been applied to the "
	     "spi tree at\n\n   https://git.kernel.org/pub/scm/linux/kernel/"
	     "git/broonie/spi.git for-5.9\n\nThanks,\nMark\n\n"
	     "From " SHA_FIX " Mon Sep 17 00:00:00 2001\n"
	     "From: Dave Fixer <dave@example.org>\n"
	     "Subject: [PATCH] spi: baz: Fix qux\n\nCheck qux() fails.\n");
}

static void write_list(struct fx *f, const char *name,
		       void (*fill)(struct buf *))
{
	struct buf b = BUF_INIT, p = BUF_INIT;

	fill(&b);
	FILE *fp;

	assert_int_equal(buf_addf(&p, "%s/%s.mbox", f->dir, name), 0);
	fp = fopen(p.ptr, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(b.ptr, 1, b.len, fp), b.len);
	assert_int_equal(fclose(fp), 0);
	buf_free(&p);
	buf_free(&b);
}

static void import_lists(struct fx *f)
{
	static const char *const names[] = { "pwm", "leds", "spi" };
	struct archive_result r;
	struct archive *a;
	char path[128];
	size_t i;

	write_list(f, "pwm", pwm_list);
	write_list(f, "leds", leds_list);
	write_list(f, "spi", spi_list);
	assert_int_equal(archive_open(&a, f->db, NULL), 0);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s.mbox", f->dir, names[i]);
		assert_int_equal(archive_import_mbox(a, path), 0);
	}
	assert_int_equal(archive_finish(a, &r), 0);
	archive_free(a);
	assert_int_equal(r.messages, 19);
	assert_int_equal(r.duplicates, 1); /* the cross-posted fix */
	assert_int_equal(r.patches, 9);
}

#define APPLIED(col, id)                                                   \
	"SELECT " col " FROM posting_outcomes o JOIN patches p ON p.id = " \
	"o.patch_id WHERE p.message_id = '" id "'"

static void assert_applied(struct fx *f, const char *id, const char *how,
			   const char *sha, const char *by, const char *tree,
			   const char *branch, int day)
{
	struct buf q = BUF_INIT;
	static const char *const cols[] = { "outcome",	    "how",
					    "commit_sha",   "applied_by",
					    "applied_tree", "applied_branch" };
	const char *want[] = { "applied", how, sha, by, tree, branch };
	size_t i;

	for (i = 0; i < 6; i++) {
		buf_reset(&q);
		buf_addf(&q,
			 "SELECT COALESCE(%s, '') FROM posting_outcomes o JOIN"
			 " patches p ON p.id = o.patch_id WHERE p.message_id"
			 " = '%s'",
			 cols[i], id);
		afx_assert_q_str(f, q.ptr, want[i]);
	}
	buf_reset(&q);
	buf_addf(&q,
		 "SELECT applied_date FROM posting_outcomes o JOIN patches p "
		 "ON p.id = o.patch_id WHERE p.message_id = '%s'",
		 id);
	assert_int_equal(afx_q(f, q.ptr), T0 + (int64_t)day * DAY);
	buf_free(&q);
}

/* Who applied what, when and where; what was not applied. */
static void test_applied_ids(void **state)
{
	struct fx *f = *state;

	import_lists(f);
	assert_applied(f, "a2@x", "reply", SHA_A, "uwe@example.org",
		       "ukleinek/linux.git", "pwm/for-next", 5);
	assert_applied(f, "r1@x", "bot", "222222222222", "broonie@kernel.org",
		       "broonie/spi.git", "for-next", 6);
	assert_applied(f, "s1@x", "reply", SHA_FIX, "broonie@kernel.org",
		       "broonie/spi.git", "for-5.9", 23);
	assert_applied(f, "t1@x", "bot", "", "broonie@kernel.org",
		       "broonie/spi.git", "for-next", 12);
	assert_applied(f, "l1@x", "reply", SHA_L, "lee@example.org", "", "",
		       10);
	/* the bot found no commit for 2/2 */
	afx_assert_q_str(f, OUTCOME("r2@x"), "none");
	afx_assert_q_str(f, OUTCOME("a1@x"), "superseded");
	afx_assert_q_str(f, OUTCOME("f1@x"), "none");
	assert_int_equal(afx_q(f, "SELECT count(*) FROM posting_outcomes "
				  "WHERE outcome = 'applied'"),
			 5);
	/* RFC patches are patches; their own Reviewed-by is no review act */
	afx_assert_q_str(f,
			 "SELECT kind FROM messages WHERE message_id = 'r2@x'",
			 "patch");
	assert_int_equal(afx_q(f, "SELECT count(*) FROM mail_reviews WHERE "
				  "email IN ('dan@example.org', "
				  "'zed@example.org', 'eve@example.org', "
				  "'alice@example.org')"),
			 0);
}

/* Labels across lists: by id prefix, by subject; trivial; unresolved. */
static void test_labels(void **state)
{
	struct fx *f = *state;

	import_lists(f);
	assert_int_equal(afx_q(f, LABEL("bug", "a2@x")), 1);
	afx_assert_q_str(f, LABEL("how", "a2@x"), "sha");
	assert_int_equal(afx_q(f, LABEL("nfixes", "a2@x")), 1); /* f2 trivial */
	assert_int_equal(afx_q(f, LABEL("discovered", "a2@x")), T0 + 20 * DAY);
	assert_int_equal(afx_q(f, LABEL("bug", "r1@x")), 1);
	afx_assert_q_str(f, LABEL("how", "r1@x"), "subject");
	assert_int_equal(afx_q(f, LABEL("bug", "a1@x")), 0);
	assert_int_equal(afx_q(f, LABEL("bug", "r2@x")), 0);
	assert_int_equal(afx_q(f, LABEL("is_fix", "f1@x")), 1);
	assert_int_equal(afx_q(f, LABEL("is_stable", "f1@x")), 1);
	assert_int_equal(afx_q(f, LABEL("is_fix", "s1@x")), 1);
	assert_int_equal(afx_q(f, LABEL("is_fix", "a2@x")), 0);
	afx_assert_q_str(f,
			 "SELECT list_id FROM messages WHERE message_id = "
			 "'f1@x'",
			 LEDS);
}

static const struct archive_list_stats *
find_list(const struct archive_list_stats *rows, size_t n, const char *list)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].list, list))
			return &rows[i];
	fail_msg("no stats row for %s", list);
	return NULL;
}

static void assert_row(const struct archive_list_stats *r, int64_t postings,
		       int64_t applied, int64_t by_id, int64_t by_reply,
		       int64_t by_bot, int64_t bugs, int64_t fixes,
		       int64_t unresolved)
{
	assert_int_equal(r->postings, postings);
	assert_int_equal(r->applied, applied);
	assert_int_equal(r->applied_id, by_id);
	assert_int_equal(r->applied_reply, by_reply);
	assert_int_equal(r->applied_bot, by_bot);
	assert_int_equal(r->bugs, bugs);
	assert_int_equal(r->fixes, fixes);
	assert_int_equal(r->unresolved, unresolved);
}

/* The per-list table; the cross-posted fix counts under leds alone. */
static void test_list_stats(void **state)
{
	struct fx *f = *state;
	struct archive_list_stats *rows;
	struct buf j = BUF_INIT;
	size_t n;

	import_lists(f);
	assert_int_equal(archive_stats_lists(&rows, &n, f->db), 0);
	assert_int_equal(n, 4);
	assert_string_equal(rows[n - 1].list, "(total)");
	assert_row(find_list(rows, n, PWM), 2, 1, 1, 1, 0, 1, 0, 0);
	assert_row(find_list(rows, n, LEDS), 3, 1, 1, 1, 0, 0, 2, 0);
	assert_row(find_list(rows, n, SPI), 4, 3, 2, 1, 2, 1, 1, 1);
	assert_row(&rows[n - 1], 9, 5, 4, 3, 2, 2, 3, 1);
	assert_int_equal(archive_stats_lists_json(&j, rows, n), 0);
	assert_non_null(strstr(j.ptr, "{\"list\": \"" SPI "\", \"postings\": 4,"
				      " \"applied\": 3, \"applied_id\": 2, "
				      "\"applied_reply\": 1, \"applied_bot\":"
				      " 2, \"bugs\": 1, \"fixes\": 1, "
				      "\"unresolved\": 1}"));
	buf_free(&j);
	archive_stats_lists_free(rows, n);
}

static double feat(struct fx *f, const char *id, enum listfeat_moment m,
		   enum listfeat_id k)
{
	struct listfeat lf;
	int64_t pid = afx_pid(f, id), at;

	assert_int_equal(listfeat_moment(&at, f->db, pid, m), 0);
	assert_int_equal(listfeat_compute(&lf, f->db, pid, at), 0);
	return lf.v[k];
}

#define FEAT(id, m, k, want)                                          \
	assert_true(fabs(feat(f, id, LISTFEAT_AT_##m, LISTFEAT_##k) - \
			 (want)) < 1e-9)

/* The features of the v2 posting and of the RFC patches. */
static void test_features(void **state)
{
	struct fx *f = *state;

	import_lists(f);
	FEAT("a2@x", POSTING, VERSION, 2);
	FEAT("a2@x", POSTING, VERSIONS_BEFORE, 1);
	FEAT("a2@x", POSTING, PREV_REPLIES, 1);
	FEAT("a2@x", POSTING, PREV_QUESTIONS, 1);
	FEAT("a2@x", POSTING, PREV_ASKS, 1);
	FEAT("a2@x", POSTING, REVIEWED, 0);
	FEAT("a2@x", POSTING, REPLIES, 0);
	FEAT("a2@x", APPLY, REVIEWED, 1); /* Bob; not Eve's paste */
	/* Bob and Eve; the applying notice is the moment, not before it */
	FEAT("a2@x", APPLY, REPLIES, 2);
	FEAT("a2@x", APPLY, REVIEWERS, 2);
	FEAT("a2@x", APPLY, DAYS_FIRST, 5);
	FEAT("r1@x", APPLY, CARRIED, 1); /* its own Reviewed-by */
	FEAT("r1@x", APPLY, REVIEWED, 0);
	FEAT("r1@x", APPLY, VERSION, 1);
	FEAT("r1@x", APPLY, VERSIONS_BEFORE, 0);
	FEAT("s1@x", APPLY, AUTHOR_PRIOR, 2); /* f1, f2 on other lists */
}

/* The text rules alone: destinations, bot items, lone ids, digests. */
static void test_notice_text(void **state)
{
	static const char b4[] = "Applied to\n\n   https://git.kernel.org/"
				 "pub/scm/linux/kernel/git/broonie/spi.git "
				 "for-next\n\nThanks!\n";
	static const char bot[] = "This patch was applied to chrome-platform/"
				  "linux.git (for-next)\nby Dmitry T <dt@x."
				  "org>:\n\nHere is the summary with links:\n"
				  "  - Input: foo - Drop bar\n    https://git."
				  "kernel.org/chrome-platform/c/5128de84d8fc\n"
				  "  - [v2,2/2] Input: foo - Use baz\n"
				  "    (no matching commit)\n-- \nbot\n";
	static const char mine[] = "Applied to the for-next branch of pwm.git"
				   " and pushed out as testing.\n";
	struct outcome_digest_item dg[4];
	struct outcome_item it[4];
	struct outcome_dest d;
	const char *t;
	char sha[41];

	(void)state;
	outcome_parse_dest(&d, b4, strlen(b4));
	assert_string_equal(d.tree, "broonie/spi.git");
	assert_string_equal(d.branch, "for-next");
	assert_string_equal(d.by, "");
	outcome_parse_dest(&d, bot, strlen(bot));
	assert_string_equal(d.tree, "chrome-platform/linux.git");
	assert_string_equal(d.branch, "for-next");
	assert_string_equal(d.by, "dt@x.org");
	outcome_parse_dest(&d, mine, strlen(mine));
	assert_string_equal(d.tree, "");
	/* unbracketed items count for the bot only */
	assert_int_equal(outcome_parse_items(it, 4, bot, strlen(bot), 0), 1);
	assert_int_equal(outcome_parse_items(it, 4, bot, strlen(bot), 1), 2);
	assert_string_equal(it[0].subject, "Input: foo - Drop bar");
	assert_string_equal(it[0].sha, "5128de84d8fc");
	assert_int_equal(it[0].unmatched, 0);
	assert_int_equal(it[1].number, 2);
	assert_string_equal(it[1].sha, "");
	assert_int_equal(it[1].unmatched, 1);
	outcome_notice_sha(bot, strlen(bot), sha);
	assert_string_equal(sha, "5128de84d8fc");
	outcome_notice_sha(b4, strlen(b4), sha);
	assert_string_equal(sha, "");
	assert_int_equal(outcome_parse_digest(dg, 4, DIGEST, strlen(DIGEST)),
			 3);
	assert_string_equal(dg[0].target, "t1@x");
	assert_string_equal(dg[0].subject, "[v2] spi: baz: Tidy up");
	assert_string_equal(dg[0].by, "broonie@kernel.org");
	assert_string_equal(dg[2].target, "notstored@x");
	assert_string_equal(dg[2].subject, "[v3,2/2] spi: old: B");
	assert_string_equal(dg[2].by, "other@example.org");
	assert_int_equal(outcome_parse_digest(dg, 4, b4, strlen(b4)), 0);
	/* Jiri Kosina's wordings */
	t = "This is now in hid.git#for-6.6/steelseries. Thanks,\n";
	assert_true(outcome_says_applied(t, strlen(t)));
	t = "Thanks, I am queuing this in for-5.5/upstream-fixes.\n";
	assert_true(outcome_says_applied(t, strlen(t)));
	t = "The fix is now in linux-next, please test.\n";
	assert_false(outcome_says_applied(t, strlen(t)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notice_text),
		cmocka_unit_test_setup_teardown(test_applied_ids, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_labels, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_list_stats, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_features, afx_setup,
						afx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
