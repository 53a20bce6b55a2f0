/*
 * test_archive.c - list archives (scoring/lists/archive.c) and what is derived
 * from them (scoring/lists/outcome.c, scoring/model/listfeat.c), read from a
 * public-inbox of two epochs built with libgit2 in a temporary directory
 * (the story of tests/lib/archivefx.c: a series posted as v1, v2 and v3
 * with reviews, a maintainer's b4-style "Applied, thanks!" on v3, a patch
 * applied by a bare "Applied to ...", a later Fixes: posting, a revert, a
 * comment-only fix (trivial), a removal commit and a message with no
 * Message-ID).  It asserts the exact series, versions, outcomes, labels
 * and features, incremental re-import, the join of mined commits, and the
 * text rules of the outcomes.  The same mail as mbox, and the real list,
 * are test_archive_mbox.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <git2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/history/maintainers.h"
#include "scoring/lists/archive.h"
#include "scoring/store/db.h"
#include "scoring/model/features.h"
#include "scoring/model/listfeat.h"
#include "scoring/lists/outcome.h"
#include "scoring/util/pt.h"
#include "archivefx.h"

static void test_public_inbox(void **state)
{
	struct fx *f = *state;
	struct archive_result r;
	struct archive_stats s;
	git_repository *repo;
	char path[128], *m;

	afx_build_inbox(f);
	afx_import_inbox(f, &r);
	assert_int_equal(r.sources, 2);
	assert_int_equal(r.messages, 21); /* and one commit without `m` */
	assert_int_equal(r.deleted, 1);
	assert_int_equal(r.skipped, 1);
	assert_int_equal(r.imported, 20);
	assert_int_equal(r.patches, 10);
	assert_int_equal(r.covers, 3);
	assert_int_equal(r.replies, 7);
	afx_assert_q_str(f, "SELECT reason FROM archive_skips",
			 "no Message-ID");
	afx_assert_story(f);

	/* incremental: nothing new is read again */
	afx_import_inbox(f, &r);
	assert_int_equal(r.messages, 0);
	afx_assert_story(f);

	/* one more message in the last epoch: exactly it is read */
	snprintf(path, sizeof(path), "%s/inbox/git/1.git", f->dir);
	assert_int_equal(git_repository_open(&repo, path), 0);
	m = afx_text_mail("late@x", AFX_BOB, 30,
			  "Re: [PATCH] pwm: foo: Fix "
			  "bar overflow",
			  "f1@x",
			  "Reviewed-by: Bob Reviewer "
			  "<bob@example.org>\n");
	afx_pi_commit(repo, "m", m, strlen(m));
	free(m);
	git_repository_free(repo);
	afx_import_inbox(f, &r);
	assert_int_equal(r.messages, 1);
	assert_int_equal(r.imported, 1);
	assert_int_equal(archive_stats(&s, f->db), 0);
	assert_int_equal(s.sources, 2);
	assert_int_equal(s.messages, 21);
	assert_int_equal(s.skipped, 1);
	assert_int_equal(s.applied, 3);
	assert_int_equal(s.applied_reply, 3);
	assert_int_equal(s.superseded, 4);
	assert_int_equal(s.neither, 3);
	assert_int_equal(s.bugs, 2);
	assert_int_equal(s.trivial_only, 1);
	assert_int_equal(s.notices, 3); /* Eve's has no authority */
	assert_int_equal(s.versions_linked, 2);
}

/*
 * A partial snapshot (a fetched mirror without its biggest blobs): a
 * commit whose message blob is missing is skipped with its reason, the
 * rest is imported, and the import succeeds.
 */
static void test_absent_blob(void **state)
{
	struct fx *f = *state;
	struct archive_result r;
	struct archive *a;
	git_repository *repo;
	git_oid oid;
	char path[160], hex[GIT_OID_HEXSZ + 1], *m1, *m2;

	snprintf(path, sizeof(path), "%s/part.git", f->dir);
	assert_int_equal(git_repository_init(&repo, path, 1), 0);
	m1 = afx_text_mail("big@x", AFX_BOB, 1, "[PATCH] pwm: big one", NULL,
			   "a diff too big for the snapshot\n");
	m2 = afx_text_mail("small@x", AFX_BOB, 2, "Re: [PATCH] pwm: big one",
			   "big@x", "Looks fine.\n");
	afx_pi_commit(repo, "m", m1, strlen(m1));
	afx_pi_commit(repo, "m", m2, strlen(m2));
	assert_int_equal(git_odb_hash(&oid, m1, strlen(m1), GIT_OBJECT_BLOB),
			 0);
	git_oid_tostr(hex, sizeof(hex), &oid);
	git_repository_free(repo);
	snprintf(path, sizeof(path), "%s/part.git/objects/%.2s/%s", f->dir, hex,
		 hex + 2);
	assert_int_equal(remove(path), 0);

	snprintf(path, sizeof(path), "%s/part.git", f->dir);
	assert_int_equal(archive_open(&a, f->db, &(struct archive_opts){ 0 }),
			 0);
	assert_int_equal(archive_import_pi(a, path), 0);
	assert_int_equal(archive_finish(a, &r), 0);
	archive_free(a);
	assert_int_equal(r.messages, 2);
	assert_int_equal(r.absent, 1);
	assert_int_equal(r.skipped, 1);
	assert_int_equal(r.imported, 1);
	afx_assert_q_str(f, "SELECT reason FROM archive_skips",
			 "message blob missing from the repository "
			 "(a partial snapshot)");
	free(m1);
	free(m2);
}

/* Review and process features, as of posting and as of apply. */
/*
 * Eve's "Applied, thanks!" on the revert carries no authority (she never
 * named a commit nor applied in three threads) until a MAINTAINERS file
 * names her an M:, and only as long as it does.
 */
static void test_maintainers(void **state)
{
	static const char text[] = "PWM\n"
				   "M:\tEve Bystander <EVE@example.org>\n"
				   "R:\tBob Reviewer <bob@example.org>\n"
				   "F:\tdrivers/pwm/\n";
	static const char other[] = "PWM\nM:\tUwe <uwe@example.org>\n"
				    "F:\tdrivers/pwm/\n";
	struct fx *f = *state;
	struct archive_result r;
	struct archive *a;
	struct maint *m;

	afx_build_inbox(f);
	afx_import_inbox(f, &r);
	afx_assert_q_str(f, OUTCOME("v1@x"), "none");
	assert_int_equal(maint_parse(&m, text, strlen(text), NULL, NULL), 0);
	assert_int_equal(archive_open(&a, f->db, NULL), 0);
	assert_int_equal(archive_set_maintainers(a, m, "MAINTAINERS"), 0);
	assert_int_equal(archive_finish(a, &r), 0);
	archive_free(a);
	maint_free(m);
	afx_assert_q_str(f, OUTCOME("v1@x"), "applied");
	/* the R: is no maintainer; the M: is stored lowercased */
	assert_int_equal(afx_q(f, "SELECT count(*) FROM list_maintainers"), 1);
	/* a tester's "I applied the patch and ran it" stays no notice */
	afx_assert_q_str(f, OUTCOME("t1@x"), "none");
	assert_int_equal(maint_parse(&m, other, strlen(other), NULL, NULL), 0);
	assert_int_equal(archive_open(&a, f->db, NULL), 0);
	assert_int_equal(archive_set_maintainers(a, m, "MAINTAINERS"), 0);
	assert_int_equal(archive_finish(a, &r), 0);
	archive_free(a);
	maint_free(m);
	afx_assert_q_str(f, OUTCOME("v1@x"), "none");
}

static void test_features(void **state)
{
	struct fx *f = *state;
	struct archive_result r;
	struct listfeat lf;
	struct feat_thread th;
	int64_t p31, at;

	afx_build_inbox(f);
	afx_import_inbox(f, &r);
	p31 = afx_pid(f, "p31@x");
	assert_int_equal(listfeat_moment(&at, f->db, p31, LISTFEAT_AT_APPLY),
			 0);
	assert_int_equal(at, T0 + 8 * DAY);
	assert_int_equal(listfeat_compute(&lf, f->db, p31, at), 0);
	assert_int_equal((int)lf.v[LISTFEAT_VERSION], 3);
	assert_int_equal((int)lf.v[LISTFEAT_VERSIONS_BEFORE], 2);
	assert_int_equal((int)lf.v[LISTFEAT_TESTED], 1);
	assert_int_equal((int)lf.v[LISTFEAT_TESTED_CLAIMS], 1);
	assert_int_equal((int)lf.v[LISTFEAT_CARRIED], 1);
	/* v1 was asked a question and a request; v2 got a review */
	assert_int_equal((int)lf.v[LISTFEAT_PREV_QUESTIONS], 1);
	assert_int_equal((int)lf.v[LISTFEAT_PREV_ASKS], 1);
	assert_int_equal((int)lf.v[LISTFEAT_PREV_REPLIES], 2);
	assert_true(fabs(lf.v[LISTFEAT_DAYS_FIRST] - 8.0) < 1e-9);
	/* the reviewer (Carol) had reviewed nothing before */
	assert_int_equal((int)lf.v[LISTFEAT_REV_PRIOR], 0);
	assert_true(fabs(lf.v[LISTFEAT_REV_BUGRATE] - LISTFEAT_PRIOR_RATE) <
		    1e-9);
	/* Carol's two lines; Uwe's notice is the moment, not seen */
	assert_int_equal((int)lf.v[LISTFEAT_REPLY_LINES], 2);
	assert_int_equal((int)lf.v[LISTFEAT_REPLIES], 1);
	assert_int_equal((int)lf.v[LISTFEAT_SIZE_CHANGE], 0);
	assert_int_equal((int)lf.v[LISTFEAT_PREV_BOT_FAILURES], 0);
	/* Uwe's notice is the moment itself: he had applied nothing before */
	assert_int_equal((int)lf.v[LISTFEAT_APPLIER_REPLIED], 0);
	assert_int_equal(listfeat_compute(&lf, f->db, p31, T0 + 30 * DAY), 0);
	assert_int_equal((int)lf.v[LISTFEAT_APPLIER_REPLIED], 1);
	assert_int_equal(listfeat_group_of(LISTFEAT_APPLIER_REPLIED),
			 LISTFEAT_G_RECORD);
	assert_string_equal(listfeat_group_name(LISTFEAT_G_ITER), "iterations");
	/* at posting, the Tested-by of the next day is not known yet */
	assert_int_equal(listfeat_compute(&lf, f->db, p31, T0 + 6 * DAY), 0);
	assert_int_equal((int)lf.v[LISTFEAT_TESTED], 0);
	assert_int_equal((int)lf.v[LISTFEAT_REPLIES], 0);
	assert_true(isnan(lf.v[LISTFEAT_REV_BUGRATE]));
	/* Bob reviewed v2 1/2 before; its bug was found later, not counted */
	assert_int_equal(listfeat_compute(&lf, f->db, afx_pid(f, "p21@x"),
					  T0 + 30 * DAY),
			 0);
	assert_int_equal((int)lf.v[LISTFEAT_REVIEWED], 1);
	assert_int_equal(listfeat_fill_thread(&th, f->db, p31,
					      LISTFEAT_AT_APPLY),
			 0);
	assert_int_equal(th.known, 1);
	assert_int_equal(th.versions, 3);
	assert_int_equal(th.replies, 1); /* Carol; the notice is the moment */
	assert_int_equal(listfeat_fill_thread(&th, f->db, 0, LISTFEAT_AT_APPLY),
			 0);
	assert_int_equal(th.known, 0);
}

/* Mined commits join postings by Link: and by subject, author and date. */
static void test_commit_join(void **state)
{
	struct fx *f = *state;
	struct archive_result r;
	struct archive *a;
	int64_t posting;
	char sql[1024];

	afx_build_inbox(f);
	afx_import_inbox(f, &r);
	snprintf(
		sql, sizeof(sql),
		"INSERT INTO repos (id, path) VALUES (1, '/r');"
		"INSERT INTO people (id, email) VALUES (1, 'dave@example.org');"
		"INSERT INTO commits (id, repo_id, sha, seq, nparents, "
		"author_id, author_date, commit_date, subject) VALUES "
		"(1, 1, '%040d', 1, 1, 1, %d, %d, 'pwm: qux: Add qux'),"
		"(2, 1, '%039d2', 2, 1, 1, %d, %d, 'pwm: foo: Fix bar "
		"overflow'),"
		"(3, 1, '%039d3', 3, 1, 1, %d, %d, 'pwm: qux: Add qux');"
		"INSERT INTO trailers (commit_id, idx, kind, key, value) VALUES"
		" (2, 0, %d, 'Link', 'https://lore.kernel.org/r/f1@x');"
		"INSERT INTO labels (commit_id, is_fix, is_stable, bug, nfixes,"
		" trivial_only, negative_ok) VALUES (1, 0, 0, 1, 1, 0, 1);",
		0, T0 + 9 * DAY, T0 + 10 * DAY, 0, T0 + 40 * DAY, T0 + 41 * DAY,
		0, T0 + 200 * DAY, T0 + 200 * DAY, TRAILER_LINK);
	assert_int_equal(db_exec(f->db, sql), 0);
	assert_int_equal(archive_open(&a, f->db, NULL), 0);
	assert_int_equal(archive_finish(a, &r), 0);
	archive_free(a);
	/* applied by a reply already: the commit joins, the evidence stays */
	afx_assert_q_str(f,
			 "SELECT how FROM posting_outcomes o JOIN patches p "
			 "ON p.id = o.patch_id WHERE p.message_id = 'q1@x'",
			 "reply");
	assert_int_equal(afx_q(f, "SELECT commit_id FROM posting_outcomes o "
				  "JOIN patches p ON p.id = o.patch_id WHERE "
				  "p.message_id = 'q1@x'"),
			 1);
	assert_int_equal(afx_q(f, LABEL("commit_bug", "q1@x")), 1);
	/* the fix was applied: its commit's Link: names it */
	afx_assert_q_str(f, OUTCOME("f1@x"), "applied");
	afx_assert_q_str(f,
			 "SELECT how FROM posting_outcomes o JOIN patches p "
			 "ON p.id = o.patch_id WHERE p.message_id = 'f1@x'",
			 "link");
	assert_int_equal(afx_q(f, "SELECT applied_date FROM posting_outcomes o "
				  "JOIN patches p ON p.id = o.patch_id WHERE "
				  "p.message_id = 'f1@x'"),
			 T0 + 41 * DAY);
	/* commit 3 is outside the date window of every posting */
	assert_int_equal(afx_q(f, "SELECT count(*) FROM posting_outcomes WHERE "
				  "commit_id = 3"),
			 0);
	assert_int_equal(listfeat_posting_of_commit(&posting, f->db, 2), 0);
	assert_int_equal(posting, afx_pid(f, "f1@x"));
}

static void test_text_rules(void **state)
{
	struct outcome_item it[4];
	const char *ty = "Applied, thanks!\n\n[1/2] pwm: a: B\n"
			 "      commit: 0123456789abcdef\n"
			 "  - [v2,2/2] pwm: a: C\n"
			 "    https://git.kernel.org/x/c/fedcba9876\n";
	const char *t;
	char *s;

	(void)state;
	assert_true(outcome_says_applied("Applied, thanks!\n", 17));
	assert_true(outcome_says_applied("> foo\n\nThanks, applied to "
					 "for-next.\n",
					 36));
	assert_true(outcome_says_applied("I've applied patches 1-3.\n", 26));
	assert_false(outcome_says_applied("> Applied, thanks\n", 18));
	assert_false(outcome_says_applied("This is not applied yet.\n", 25));
	assert_false(outcome_says_applied("Applied on top of next and "
					  "tested.\n",
					  35));
	assert_false(outcome_says_applied("Applied?\n", 9));
	assert_true(
		outcome_says_applied("Both patches applied, thanks.\n", 30));
	assert_true(outcome_says_applied("Patches 1,2 and 4,5,6 applied to "
					 "drm-misc-next.\n",
					 47));
	assert_true(outcome_says_applied("Never mind, applied after fixing "
					 "the above.\n",
					 44));
	assert_false(outcome_says_applied("With this applied, the display "
					  "works.\n",
					  38));
	/* the destination's words do not spoil a maintainer's notice */
	t = "Applied to the for-next branch of pwm.git and pushed out as "
	    "testing for 0-day to poke at it.\n";
	assert_true(outcome_says_applied(t, strlen(t)));
	t = "Thanks, applied to my usb-testing tree.\n";
	assert_true(outcome_says_applied(t, strlen(t)));
	/* a tester's words are not a notice */
	t = "I applied the patch and ran it on my board.\n";
	assert_false(outcome_says_applied(t, strlen(t)));
	t = "I applied this and tried it, works for me.\n";
	assert_false(outcome_says_applied(t, strlen(t)));
	assert_int_equal(outcome_parse_items(it, 4, ty, strlen(ty), 0), 2);
	assert_int_equal(it[0].number, 1);
	assert_string_equal(it[0].subject, "pwm: a: B");
	assert_string_equal(it[0].sha, "0123456789abcdef");
	assert_int_equal(it[1].number, 2);
	assert_string_equal(it[1].subject, "pwm: a: C");
	assert_string_equal(it[1].sha, "fedcba9876");
	s = outcome_revert_subject("Revert \"pwm: a: B\"");
	assert_string_equal(s, "pwm: a: B");
	free(s);
	assert_null(outcome_revert_subject("pwm: Revert a thing"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_rules),
		cmocka_unit_test_setup_teardown(test_public_inbox, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_absent_blob, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_maintainers, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_features, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_commit_join, afx_setup,
						afx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
