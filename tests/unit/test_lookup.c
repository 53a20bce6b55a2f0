/*
 * test_lookup.c - what the daemon asks of the threading tables
 * (scoring/lists/lookup.c), on the hand-written series of
 * tests/data/thread/ threaded into an in-memory database: a message's
 * kind and series, a series' head and patches in order, the reviews
 * given on the list, and the raw mails kept for scoring.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/lists/lookup.h"
#include "scoring/lists/thread.h"
#include "scoring/patch/patch.h"
#include "scoring/store/db.h"
#include "scoring/util/pt.h"
#include "scoring/model/schema.h"

struct fx {
	struct db *db;
	struct thread *t;
	struct lookup *lk;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(db_open(&f->db, ":memory:", &scoring_db_owners), 0);
	assert_int_equal(thread_open(&f->t, f->db, NULL), 0);
	assert_int_equal(lookup_new(&f->lk, f->db), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	lookup_free(f->lk);
	thread_free(f->t);
	db_close(f->db);
	free(f);
	return 0;
}

static void read_mail(struct buf *b, const char *name)
{
	const char *src = getenv("PT_SOURCE_DIR");
	struct buf path = BUF_INIT;

	assert_int_equal(buf_addf(&path, "%s/tests/data/thread/%s",
				  src ? src : ".", name),
			 0);
	assert_int_equal(pt_read_file(b, path.ptr, 1 << 20), 0);
	buf_free(&path);
}

static void add(struct fx *f, const char *name)
{
	struct thread_result r;
	struct buf b = BUF_INIT;

	read_mail(&b, name);
	if (thread_add_mail(f->t, b.ptr, b.len, name, &r))
		fail_msg("%s: %s", name, pt_error_last());
	thread_result_clear(&r);
	buf_free(&b);
}

static void add_v1(struct fx *f)
{
	static const char *const v1[] = { "v1-0.eml", "v1-1.eml", "v1-2.eml",
					  "v1-3.eml", "r1-2.eml", "r1-0.eml" };
	size_t i;

	for (i = 0; i < sizeof(v1) / sizeof(*v1); i++)
		add(f, v1[i]);
}

/* A list of strings joined by '|', for the callbacks. */
static int join(struct buf *b, const char *s)
{
	return buf_addf(b, "%s%s", b->len ? "|" : "", s ? s : "(null)");
}

static int on_review(const char *kind, const char *name, const char *email,
		     void *ctx)
{
	struct buf *b = ctx;

	(void)name;
	return join(b, kind) || join(b, email) ? PT_ENOMEM : 0;
}

static int on_msgid(const char *id, void *ctx)
{
	return join(ctx, id);
}

static int stop_at_first(const char *id, void *ctx)
{
	(void)id;
	++*(int *)ctx;
	return 7;
}

static void test_message(void **state)
{
	struct fx *f = *state;
	int64_t sid, sid2;
	int keep, done;

	add(f, "v1-1.eml");
	assert_int_equal(lookup_message(f->lk, "v1-1@example.org", &keep, &sid,
					&done),
			 0);
	assert_int_equal(keep, 1);
	assert_true(sid > 0);
	assert_int_equal(done, 0);

	add(f, "v1-0.eml");
	add(f, "v1-2.eml");
	add(f, "v1-3.eml");
	add(f, "r1-2.eml");
	assert_int_equal(lookup_message(f->lk, "v1-0@example.org", &keep, &sid2,
					&done),
			 0);
	assert_int_equal(keep, 1); /* the cover letter is kept too */
	assert_int_equal(sid2, sid);
	assert_int_equal(done, 1);
	assert_int_equal(lookup_message(f->lk, "r1-2@example.com", &keep, &sid2,
					&done),
			 0);
	assert_int_equal(keep, 0); /* a reply is not */

	/* unknown: nothing, and no error */
	assert_int_equal(lookup_message(f->lk, "nobody@example.org", &keep,
					&sid2, &done),
			 0);
	assert_int_equal(keep, 0);
	assert_int_equal(sid2, 0);
	assert_int_equal(done, 0);
}

static void test_series(void **state)
{
	struct fx *f = *state;
	struct buf b = BUF_INIT;
	char *cover = NULL;
	int64_t pid, sid;
	int done, calls = 0;

	add_v1(f);
	assert_int_equal(thread_find_patch(f->t, "v1-2@example.org", &pid,
					   &sid),
			 0);
	assert_int_equal(lookup_series_head(f->lk, sid, &cover, &done), 0);
	assert_string_equal(cover, "v1-0@example.org");
	assert_int_equal(done, 1);
	free(cover);

	assert_int_equal(lookup_series_patches(f->lk, sid, on_msgid, &b), 0);
	assert_string_equal(b.ptr, "v1-1@example.org|v1-2@example.org|"
				   "v1-3@example.org");
	buf_free(&b);
	assert_int_equal(lookup_series_patches(f->lk, sid, stop_at_first,
					       &calls),
			 7);
	assert_int_equal(calls, 1);

	assert_int_equal(lookup_series_head(f->lk, sid + 100, &cover, &done),
			 PT_ENOTFOUND);
	assert_null(cover);
	assert_int_equal(done, 0);
	pt_error_clear();
}

static void test_list_reviews(void **state)
{
	struct fx *f = *state;
	struct buf b = BUF_INIT;
	int64_t pid, sid;

	add_v1(f);
	/* patch 2: its own Tested-by, then the cover letter's Acked-by */
	assert_int_equal(thread_find_patch(f->t, "v1-2@example.org", &pid,
					   &sid),
			 0);
	assert_int_equal(lookup_list_reviews(f->lk, pid, on_review, &b), 0);
	assert_string_equal(b.ptr, "Tested-by|rev@example.com|"
				   "Acked-by|ukleinek@kernel.org");
	buf_reset(&b);
	/* patch 1: only what the cover letter got */
	assert_int_equal(thread_find_patch(f->t, "v1-1@example.org", &pid,
					   &sid),
			 0);
	assert_int_equal(lookup_list_reviews(f->lk, pid, on_review, &b), 0);
	assert_string_equal(b.ptr, "Acked-by|ukleinek@kernel.org");
	buf_free(&b);
}

static void test_raw(void **state)
{
	struct fx *f = *state;
	struct buf one = BUF_INIT, two = BUF_INIT;
	struct patch *p = NULL;
	sqlite3_stmt *st;

	assert_int_equal(lookup_raw_patch(f->lk, "v1-1@example.org", &p),
			 PT_ENOTFOUND);
	assert_null(p);
	pt_error_clear();

	read_mail(&one, "v1-1.eml");
	read_mail(&two, "v1-2.eml");
	assert_int_equal(lookup_keep_raw(f->lk, "v1-1@example.org", one.ptr,
					 one.len, 100),
			 0);
	/* kept once: a second copy changes nothing */
	assert_int_equal(lookup_keep_raw(f->lk, "v1-1@example.org", two.ptr,
					 two.len, 200),
			 0);
	assert_int_equal(lookup_raw_patch(f->lk, "v1-1@example.org", &p), 0);
	assert_string_equal(p->message_id, "v1-1@example.org");
	patch_free(p);

	assert_int_equal(db_prepare(&st, f->db,
				    "SELECT received, length(raw)"
				    " FROM mail_raw"),
			 0);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(st, 0), 100);
	assert_int_equal(sqlite3_column_int64(st, 1), (int64_t)one.len);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	buf_free(&one);
	buf_free(&two);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_series, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_reviews, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_raw, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
