/*
 * test_thread.c - threading mail into series, versions and review
 * (scoring/lists/thread.c) on hand-written mails in tests/data/thread/, fed
 * out of order, a series posted without the word PATCH, replies that
 * paste the original unquoted, and on the real 2024 linux-pwm archive
 * when present.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scoring/patch/mbox.h"
#include "scoring/store/db.h"
#include "scoring/patch/patch.h"
#include "scoring/util/pt.h"
#include "scoring/lists/thread.h"
#include "scoring/model/schema.h"
#include "dbq.h"

struct fx {
	struct db *db;
	struct thread *t;
};

static char *data_path(const char *name)
{
	const char *src = getenv("PT_SOURCE_DIR");
	struct buf b = BUF_INIT;

	buf_addf(&b, "%s/tests/data/thread/%s", src ? src : ".", name);
	return buf_detach(&b, NULL);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *src = getenv("PT_SOURCE_DIR");
	struct buf lex = BUF_INIT;

	buf_addf(&lex, "%s/conf/sentiment.txt", src ? src : ".");
	assert_int_equal(db_open(&f->db, ":memory:", &scoring_db_owners), 0);
	assert_int_equal(thread_open(&f->t, f->db, lex.ptr), 0);
	buf_free(&lex);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	thread_free(f->t);
	db_close(f->db);
	free(f);
	return 0;
}

static void add(struct fx *f, const char *name, struct thread_result *r)
{
	struct buf b = BUF_INIT;
	char *path = data_path(name);

	assert_int_equal(pt_read_file(&b, path, 1 << 20), 0);
	if (thread_add_mail(f->t, b.ptr, b.len, name, r))
		fail_msg("%s: %s", name, pt_error_last());
	buf_free(&b);
	free(path);
}

static int64_t q(struct fx *f, const char *sql)
{
	return dbq_int(f->db, sql);
}

static int64_t patch_id(struct fx *f, const char *msgid)
{
	int64_t p, s;

	assert_int_equal(thread_find_patch(f->t, msgid, &p, &s), 0);
	return p;
}

/* 3/3, a reply to 2/3, 1/3, the cover, then 2/3: one complete series */
static void test_out_of_order(void **state)
{
	struct fx *f = *state;
	struct thread_result r;
	int64_t sid;

	add(f, "v1-3.eml", &r);
	assert_int_equal(r.kind, THREAD_PATCH);
	assert_false(r.complete);
	sid = r.series_id;
	thread_result_clear(&r);

	add(f, "r1-2.eml", &r); /* its patch is not there yet */
	assert_int_equal(r.kind, THREAD_REPLY);
	assert_int_equal(r.series_id, 0);
	thread_result_clear(&r);

	add(f, "v1-1.eml", &r);
	assert_int_equal(r.series_id, sid);
	assert_false(r.complete);
	thread_result_clear(&r);

	add(f, "v1-0.eml", &r);
	assert_int_equal(r.kind, THREAD_COVER);
	assert_int_equal(r.series_id, sid);
	assert_int_equal(r.attached, 1); /* r1-2 held by the series */
	thread_result_clear(&r);

	add(f, "v1-2.eml", &r);
	assert_int_equal(r.series_id, sid);
	assert_true(r.complete);
	assert_int_equal(r.attached, 1); /* r1-2 moves to its patch */
	thread_result_clear(&r);

	assert_int_equal(q(f, "SELECT count(*) FROM series"), 1);
	assert_int_equal(q(f, "SELECT received FROM series"), 3);
	assert_int_equal(q(f, "SELECT count(*) FROM series WHERE subject = "
			      "'pwm: foo: add bar support' AND cover_msgid = "
			      "'v1-0@example.org'"),
			 1);
	assert_int_equal(q(f, "SELECT patch_id FROM replies WHERE message_id "
			      "= 'r1-2@example.com'"),
			 patch_id(f, "v1-2@example.org"));
	/* the Tested-by given in the early reply follows it */
	assert_int_equal(q(f, "SELECT count(*) FROM mail_reviews WHERE kind "
			      "= 'Tested-by' AND email = 'rev@example.com' "
			      "AND patch_id > 0"),
			 1);
}

/*
 * A series posted without the word PATCH ("[RFC 0/2]", "[RFC 1/2]"):
 * a cover and two patches, not three replies, and the patches' own
 * trailers are not review acts.
 */
static void test_unworded_series(void **state)
{
	static const char *const mails[] = { "rfc-0.eml", "rfc-1.eml",
					     "rfc-2.eml" };
	static const enum thread_kind want[] = { THREAD_COVER, THREAD_PATCH,
						 THREAD_PATCH };
	struct fx *f = *state;
	struct thread_result r;
	size_t i;

	for (i = 0; i < 3; i++) {
		add(f, mails[i], &r);
		assert_int_equal(r.kind, want[i]);
		if (i == 2)
			assert_true(r.complete);
		thread_result_clear(&r);
	}
	assert_int_equal(q(f, "SELECT count(*) FROM series WHERE received = 2"
			      " AND cover_msgid = 'rfc-0@example.org'"),
			 1);
	assert_int_equal(q(f, "SELECT count(*) FROM replies"), 0);
	assert_int_equal(q(f, "SELECT count(*) FROM mail_reviews"), 0);
}

static void add_all_v1(struct fx *f)
{
	static const char *const v1[] = { "v1-0.eml",	"v1-1.eml", "v1-2.eml",
					  "v1-3.eml",	"r1-2.eml", "r1-0.eml",
					  "bot1-3.eml", "r2-2.eml" };
	struct thread_result r;
	size_t i;

	for (i = 0; i < sizeof(v1) / sizeof(*v1); i++) {
		add(f, v1[i], &r);
		assert_false(r.duplicate);
		thread_result_clear(&r);
	}
}

static void test_review_features(void **state)
{
	struct fx *f = *state;
	struct thread_features ft;

	add_all_v1(f);
	/* patch 2: the review, the nested reply, and the cover's ack */
	assert_int_equal(thread_patch_features(f->t,
					       patch_id(f, "v1-2@example.org"),
					       &ft),
			 0);
	assert_int_equal(ft.replies, 3);
	assert_int_equal(ft.reviewers, 2); /* rev and Uwe, not Jane */
	assert_int_equal(ft.inline_comments, 2);
	assert_int_equal(ft.tested_claims, 1);
	assert_int_equal(ft.tested_by, 1);
	assert_int_equal(ft.acked_by, 1);
	assert_int_equal(ft.bot_reports, 0);
	assert_true(ft.sentiment != 0.0);

	/* patch 1: only the ack on the cover letter applies */
	assert_int_equal(thread_patch_features(f->t,
					       patch_id(f, "v1-1@example.org"),
					       &ft),
			 0);
	assert_int_equal(ft.replies, 1);
	assert_int_equal(ft.acked_by, 1);
	assert_int_equal(ft.tested_by, 0);
	assert_true(ft.sentiment > 0.0);

	/* patch 3: the kernel test robot's build error on arm64 */
	assert_int_equal(thread_patch_features(f->t,
					       patch_id(f, "v1-3@example.org"),
					       &ft),
			 0);
	assert_int_equal(ft.bot_reports, 1);
	assert_int_equal(ft.bot_failures, 1);
	assert_string_equal(ft.bot_archs, "arm64");
	assert_int_equal(ft.reviewers, 1);
	assert_int_equal(q(f, "SELECT count(*) FROM replies WHERE bot = "
			      "'0day' AND bot_verdict = 'error'"),
			 1);
}

/*
 * The original pasted below a reply without quote markers (Outlook's
 * "-----Original Message-----"), or a patch's trailer block pasted in
 * it, is not the replier's: its Suggested-by and Acked-by are no review
 * acts, its lines are not the reply's.
 */
static void test_pasted_original(void **state)
{
	struct fx *f = *state;
	struct thread_result r;

	add_all_v1(f);
	add(f, "outlook-2.eml", &r);
	assert_int_equal(r.kind, THREAD_REPLY);
	assert_int_equal(r.patch_id, patch_id(f, "v1-2@example.org"));
	thread_result_clear(&r);
	add(f, "paste-2.eml", &r);
	thread_result_clear(&r);
	assert_int_equal(q(f, "SELECT count(*) FROM mail_reviews WHERE "
			      "reply_msgid = 'outlook-2@example.com'"),
			 1);
	assert_int_equal(q(f,
			   "SELECT count(*) FROM mail_reviews WHERE "
			   "reply_msgid = 'outlook-2@example.com' AND kind = "
			   "'Reviewed-by' AND email = 'out@example.com'"),
			 1);
	assert_int_equal(q(f, "SELECT count(*) FROM mail_reviews WHERE "
			      "reply_msgid = 'paste-2@example.com'"),
			 1);
	assert_int_equal(q(f, "SELECT count(*) FROM mail_reviews WHERE "
			      "reply_msgid = 'paste-2@example.com' AND kind = "
			      "'Acked-by' AND email = 'paster@example.com'"),
			 1);
	assert_int_equal(q(f, "SELECT count(*) FROM mail_reviews WHERE email"
			      " IN ('sug@example.com', 'some@example.com',"
			      " 'jane@example.org')"),
			 0);
	/* the reply's own two lines and its tag, not the pasted ten */
	assert_in_range(q(f, "SELECT lines FROM replies WHERE message_id = "
			     "'outlook-2@example.com'"),
			1, 3);
}

static void test_versions_linked(void **state)
{
	struct fx *f = *state;
	struct thread_result r;
	struct thread_features ft;
	int64_t v1;

	add_all_v1(f);
	v1 = q(f, "SELECT series_id FROM patches WHERE message_id = "
		  "'v1-1@example.org'");
	add(f, "v2-2.eml", &r); /* before its cover: linked by subject */
	assert_int_equal(r.prev_series_id, v1);
	thread_result_clear(&r);
	add(f, "v2-0.eml", &r);
	assert_int_equal(r.prev_series_id, v1);
	thread_result_clear(&r);
	add(f, "v2-1.eml", &r);
	thread_result_clear(&r);
	add(f, "v2-3.eml", &r);
	assert_true(r.complete);
	thread_result_clear(&r);

	assert_int_equal(q(f, "SELECT count(*) FROM series"), 2);
	assert_int_equal(q(f, "SELECT count(*) FROM series_versions WHERE "
			      "prev_series_id = (SELECT series_id FROM patches "
			      "WHERE message_id = 'v1-1@example.org')"),
			 1);
	assert_int_equal(q(f, "SELECT count(*) FROM patches WHERE version = "
			      "2 AND prev_patch_id IS NOT NULL"),
			 3);
	assert_int_equal(thread_patch_features(f->t,
					       patch_id(f, "v2-2@example.org"),
					       &ft),
			 0);
	assert_int_equal(ft.version, 2);
	assert_int_equal(ft.versions_before, 1);
	assert_int_equal(ft.replies, 0);
}

static void test_cover_link_only(void **state)
{
	struct fx *f = *state;
	struct thread_result r;

	add(f, "v1-0.eml", &r);
	thread_result_clear(&r);
	/* the v2 cover alone shares no patch subject yet: the lore link */
	add(f, "v2-0.eml", &r);
	assert_int_not_equal(r.prev_series_id, 0);
	thread_result_clear(&r);
	assert_int_equal(q(f, "SELECT count(*) FROM series_versions WHERE "
			      "reason = 'cover-link'"),
			 1);
}

static void test_duplicate(void **state)
{
	struct fx *f = *state;
	struct thread_result r;

	add(f, "v1-1.eml", &r);
	assert_false(r.duplicate);
	thread_result_clear(&r);
	add(f, "v1-1.eml", &r);
	assert_true(r.duplicate);
	assert_string_equal(r.message_id, "v1-1@example.org");
	thread_result_clear(&r);
	assert_int_equal(q(f, "SELECT count(*) FROM patches"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM messages"), 1);
}

static void test_text_analysis(void **state)
{
	struct fx *f = *state;
	static const char txt[] = "On Mon, Jan 1, Jane wrote:\n"
				  "> a\n"
				  "> b\n"
				  "\n"
				  "Comment one.\n"
				  "> c\n"
				  "Comment two, this is wrong.\n"
				  "\n"
				  "> d\n"
				  "Boot-tested on x86_64 and arm64, nice.\n"
				  "-- \n"
				  "sig: tested on everything, wrong wrong\n";
	struct thread_text tx;

	thread_analyse_text(f->t, txt, strlen(txt), &tx);
	assert_int_equal(tx.new_lines, 3);
	assert_int_equal(tx.inline_comments, 2);
	assert_int_equal(tx.tested_claims, 1);
	assert_int_equal(tx.tested_scale, 1); /* no number of machines */
	assert_int_equal(tx.quoted_lines, 4);
	assert_int_equal(tx.sentiment_words, 2); /* wrong, nice */
	assert_true(tx.sentiment_sum == 0.0);
}

/* Without a word list named, conf/sentiment.txt as built in scores. */
static void test_builtin_lexicon(void **state)
{
	struct fx *f = *state;
	static const char txt[] = "NAK, this is wrong.\n";
	struct thread_text tx;
	struct thread *t;

	assert_int_equal(thread_open(&t, f->db, NULL), 0);
	thread_analyse_text(t, txt, strlen(txt), &tx);
	assert_int_equal(tx.sentiment_words, 2); /* nak, wrong */
	assert_true(tx.sentiment_sum < 0);
	thread_free(t);
	assert_non_null(strstr(thread_builtin_lexicon, "\nnak "));
	assert_int_equal(thread_builtin_lexicon_len,
			 strlen(thread_builtin_lexicon));
}

/* The machines a tested claim names: the most of its lines'. */
static void test_tested_scale(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *text;
		unsigned scale;
	} lines[] = {
		{ "Tested on 3 boards.\n", 3 },
		{ "Tested on three different boards, works.\n", 3 },
		{ "I tested this on my board.\n", 1 },
		{ "Tested with 2 configs\nand tested on 12 machines\n", 12 },
		{ "Tested on v6.8-rc3, 5 times.\n", 1 },
		{ "Not tested on 4 boards yet.\n", 0 },
		{ "Looks fine to me.\n", 0 },
	};
	struct thread_text tx;
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		thread_analyse_text(f->t, lines[i].text, strlen(lines[i].text),
				    &tx);
		assert_int_equal(tx.tested_scale, lines[i].scale);
	}
}

struct corpus {
	struct thread *t;
	size_t n, bad, kinds[4];
};

static int corpus_cb(const char *msg, size_t len, size_t i, void *ctx)
{
	struct corpus *c = ctx;
	struct thread_result r;

	(void)i;
	c->n++;
	if (thread_add_mail(c->t, msg, len, "linux-pwm-2024", &r)) {
		c->bad++;
		return 0;
	}
	c->kinds[r.kind]++;
	thread_result_clear(&r);
	return 0;
}

/* The real list: every message threads, and the shape is as measured. */
static void test_linux_pwm_2024(void **state)
{
	struct fx *f = *state;
	const char *shared = getenv("PT_SHARED_DIR");
	struct buf cmd = BUF_INIT, mbox = BUF_INIT;
	struct corpus c;
	char chunk[65536];
	FILE *p;
	size_t n;

	if (!shared)
		skip();
	buf_addf(&cmd, "%s/corpora/linux-pwm-2024.mboxrd.gz", shared);
	if (access(cmd.ptr, R_OK)) {
		buf_free(&cmd);
		skip();
	}
	buf_reset(&cmd);
	buf_addf(&cmd, "gzip -dc '%s/corpora/linux-pwm-2024.mboxrd.gz'",
		 shared);
	p = popen(cmd.ptr, "r");
	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		assert_int_equal(buf_add(&mbox, chunk, n), 0);
	assert_int_equal(pclose(p), 0);
	memset(&c, 0, sizeof(c));
	c.t = f->t;
	assert_int_equal(mbox_foreach(mbox.ptr, mbox.len, corpus_cb, &c), 0);

	assert_int_equal(c.n, 3879);
	assert_int_equal(c.bad, 0);
	print_message("linux-pwm 2024: %zu patches, %zu covers, %zu replies, "
		      "%lld Reviewed-by, %lld review acts, %lld reply "
		      "lines\n",
		      c.kinds[THREAD_PATCH], c.kinds[THREAD_COVER],
		      c.kinds[THREAD_REPLY],
		      (long long)q(f, "SELECT count(*) FROM mail_reviews WHERE "
				      "kind = 'Reviewed-by'"),
		      (long long)q(f, "SELECT count(*) FROM mail_reviews"),
		      (long long)q(f, "SELECT sum(lines) FROM replies"));
	/* measured on this archive with the parsers of this tree */
	assert_in_range(c.kinds[THREAD_PATCH], 1380, 1440); /* 1413 */
	assert_in_range(c.kinds[THREAD_COVER], 210, 225);   /* 219 */
	assert_in_range(c.kinds[THREAD_REPLY], 2180, 2260); /* 2217 */
	assert_in_range(q(f, "SELECT count(*) FROM series"), 340, 375);
	assert_in_range(q(f, "SELECT sum(complete) FROM series"), 320, 355);
	assert_in_range(q(f, "SELECT count(*) FROM series_versions"), 160, 200);
	/* nearly every reply finds its patch or cover letter */
	assert_in_range(q(f, "SELECT count(series_id) FROM replies"), 2060,
			2160);
	assert_in_range(q(f, "SELECT count(*) FROM mail_reviews WHERE kind = "
			     "'Reviewed-by'"),
			200, 240);
	assert_in_range(q(f, "SELECT count(*) FROM replies WHERE bot = "
			     "'0day'"),
			45, 70);
	buf_free(&cmd);
	buf_free(&mbox);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_out_of_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_review_features, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unworded_series, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pasted_original, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_versions_linked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cover_link_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_duplicate, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_text_analysis, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tested_scale, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_builtin_lexicon, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_linux_pwm_2024, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
