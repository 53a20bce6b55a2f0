/*
 * test_mbox.c - mbox_foreach on lore mboxrd, mboxo, git format-patch
 * output (tests/data/mbox/), a lone message, CRLF and early stop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/mbox.h"
#include "scoring/patch/patch.h"

#define MAXMSG 16

struct seen {
	char *msg[MAXMSG];
	size_t n;
	size_t stop_after; /* 0: never */
	int ret;	   /* returned when stopping */
};

static int collect(const char *msg, size_t len, size_t index, void *ctx)
{
	struct seen *s = ctx;

	assert_int_equal(index, s->n);
	assert_true(s->n < MAXMSG);
	s->msg[s->n] = pt_strndup(msg, len);
	assert_non_null(s->msg[s->n]);
	/* the message is exactly len bytes: no NUL inside for our data */
	assert_int_equal(strlen(s->msg[s->n]), len);
	s->n++;
	if (s->stop_after && s->n == s->stop_after)
		return s->ret;
	return 0;
}

static void seen_free(struct seen *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->msg[i]);
	memset(s, 0, sizeof(*s));
}

static int split_file(struct seen *s, const char *name)
{
	const char *dir = getenv("PT_SOURCE_DIR");
	struct buf path = BUF_INIT, b = BUF_INIT;
	int rc;

	assert_non_null(dir);
	buf_addf(&path, "%s/tests/data/mbox/%s", dir, name);
	assert_int_equal(pt_read_file(&b, path.ptr, 0), 0);
	rc = mbox_foreach(b.ptr, b.len, collect, s);
	buf_free(&path);
	buf_free(&b);
	return rc;
}

static void test_lore_mboxrd(void **state)
{
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(split_file(&s, "lore.mbox"), 0);
	assert_int_equal(s.n, 2);
	assert_non_null(strstr(s.msg[0], "Subject: [PATCH 1/2] foo: first\n"));
	assert_non_null(strstr(s.msg[0], "\nFrom the start of a body"));
	assert_non_null(strstr(s.msg[0], "\n>From an already quoted"));
	assert_non_null(strstr(s.msg[0], "\n>>From three."));
	assert_non_null(strstr(s.msg[0], "\n> From is not escaped"));
	/* prose "From " after a blank line without a time: no split */
	assert_non_null(strstr(s.msg[0], "\nFrom here the prose"));
	/* the separator line is not part of a message */
	assert_null(strstr(s.msg[0], "mboxrd@z"));
	assert_int_equal(strncmp(s.msg[0], "From: Jane", 10), 0);
	/* the blank line before the next separator is dropped */
	assert_non_null(strstr(s.msg[0], "no separator\n"));
	assert_null(strstr(s.msg[0], "no separator\n\n"));
	assert_non_null(strstr(s.msg[1], "Body of two.\n"));
	seen_free(&s);
}

static void test_mboxo(void **state)
{
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(split_file(&s, "mboxo.mbox"), 0);
	assert_int_equal(s.n, 2);
	assert_non_null(strstr(s.msg[0], "\nFrom mboxo unescapes"));
	assert_non_null(strstr(s.msg[0], "\n>>From and leaves"));
	assert_non_null(strstr(s.msg[1], "Subject: mboxo two\n"));
	assert_non_null(strstr(s.msg[1], "final blank line.\n"));
	seen_free(&s);
}

static void test_format_patch(void **state)
{
	struct seen s = { 0 };
	size_t i;

	(void)state;
	assert_int_equal(split_file(&s, "format-patch.mbox"), 0);
	/* cover letter + 3 patches; "From the changelog" does not split */
	assert_int_equal(s.n, 4);
	assert_non_null(strstr(s.msg[0], "[PATCH 0/3]"));
	for (i = 1; i < 4; i++) {
		assert_non_null(strstr(s.msg[i], "\nFrom the changelog"));
		assert_non_null(strstr(s.msg[i], "diff --git a/series.txt"));
		assert_int_equal(strncmp(s.msg[i], "From: ", 6), 0);
	}
	seen_free(&s);
}

static void test_single_message(void **state)
{
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(split_file(&s, "single.eml"), 0);
	assert_int_equal(s.n, 1);
	assert_non_null(strstr(s.msg[0], "\nFrom 12:00 on we talk.\n"));
	seen_free(&s);
	assert_int_equal(mbox_foreach("", 0, collect, &s), 0);
	assert_int_equal(mbox_foreach(" \n\r\n", 4, collect, &s), 0);
	assert_int_equal(s.n, 0);
}

static void test_crlf(void **state)
{
	const char m[] = "From x@y Tue Nov 10 15:00:00 2026\r\n"
			 "Subject: a\r\n\r\n>From body\r\n\r\n"
			 "From x@y Tue Nov 10 15:01:00 2026\r\n"
			 "Subject: b\r\n\r\nbody\r\n";
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(mbox_foreach(m, sizeof(m) - 1, collect, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.msg[0], "Subject: a\r\n\r\nFrom body\r\n");
	assert_string_equal(s.msg[1], "Subject: b\r\n\r\nbody\r\n");
	seen_free(&s);
}

static void test_stop_and_error(void **state)
{
	struct seen s = { 0 };

	(void)state;
	s.stop_after = 1;
	s.ret = 1;
	assert_int_equal(split_file(&s, "lore.mbox"), 0);
	assert_int_equal(s.n, 1);
	seen_free(&s);
	s.stop_after = 1;
	s.ret = PT_EINVAL;
	assert_int_equal(split_file(&s, "format-patch.mbox"), PT_EINVAL);
	assert_int_equal(s.n, 1);
	seen_free(&s);
}

static void test_empty_messages(void **state)
{
	const char m[] = "From a@b Tue Nov 10 15:00:00 2026\n"
			 "From a@b Tue Nov 10 15:00:00 2026\n"
			 "\n"
			 "From a@b Tue Nov 10 15:00:00 2026";
	struct seen s = { 0 };

	(void)state;
	/* a separator right after a separator is a line of the message */
	assert_int_equal(mbox_foreach(m, sizeof(m) - 1, collect, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.msg[0], "From a@b Tue Nov 10 15:00:00 2026\n");
	assert_string_equal(s.msg[1], "");
	seen_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lore_mboxrd),
		cmocka_unit_test(test_mboxo),
		cmocka_unit_test(test_format_patch),
		cmocka_unit_test(test_single_message),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_stop_and_error),
		cmocka_unit_test(test_empty_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
