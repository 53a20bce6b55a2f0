/*
 * test_buf.c - struct buf, the error convention and the file helpers.
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

#include "scoring/util/pt.h"

static void test_grow_and_format(void **state)
{
	struct buf b = BUF_INIT;
	int i;

	(void)state;
	assert_string_equal(b.ptr, "");
	for (i = 0; i < 1000; i++)
		assert_int_equal(buf_addf(&b, "%d,", i), 0);
	assert_int_equal(strncmp(b.ptr, "0,1,2,", 6), 0);
	assert_int_equal(b.len, strlen(b.ptr));
	buf_addstr(&b, "  \r\n");
	buf_rtrim(&b);
	assert_int_equal(b.ptr[b.len - 1], ',');
	buf_free(&b);
	assert_int_equal(b.len, 0);
}

/*
 * buf_addf formats a short string once on the stack and a long one in
 * place: both, and the boundary between them, give the same text, and
 * the buffer's limit holds either way.
 */
static void test_format_lengths(void **state)
{
	static const size_t lens[] = { 0, 1, 254, 255, 256, 257, 1000 };
	char s[1001];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(*lens); i++) {
		struct buf b = BUF_INIT;

		memset(s, 'a' + (int)i, lens[i]);
		s[lens[i]] = '\0';
		assert_int_equal(buf_addstr(&b, "x:"), 0);
		assert_int_equal(buf_addf(&b, "%s", s), 0);
		assert_int_equal(b.len, lens[i] + 2);
		assert_int_equal(strlen(b.ptr), lens[i] + 2);
		assert_string_equal(b.ptr + 2, s);
		buf_free(&b);
	}
	for (i = 0; i < 2; i++) {
		struct buf b;

		buf_init(&b, i ? 300 : 8);
		memset(s, 'z', 400);
		s[i ? 301 : 9] = '\0';
		assert_int_equal(buf_addf(&b, "%s", s), PT_ETOOBIG);
		assert_int_equal(b.len, 0);
		buf_free(&b);
	}
}

static void test_max_refuses(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 8);
	assert_int_equal(buf_addstr(&b, "12345678"), 0);
	assert_int_equal(buf_addch(&b, 'x'), PT_ETOOBIG);
	assert_string_equal(b.ptr, "12345678");
	assert_non_null(strstr(pt_error_last(), "more than 8"));
	buf_free(&b);
}

static void test_detach_empty(void **state)
{
	struct buf b = BUF_INIT;
	size_t len = 99;
	char *p;

	(void)state;
	p = buf_detach(&b, &len);
	assert_non_null(p);
	assert_int_equal(len, 0);
	assert_string_equal(p, "");
	free(p);
}

static void test_error_wrap(void **state)
{
	(void)state;
	pt_error_clear();
	assert_int_equal(pt_error_set(PT_EINVAL, "no diff found"), PT_EINVAL);
	pt_error_wrap(PT_EINVAL, "cannot parse '%s'", "x.mbox");
	assert_string_equal(pt_error_last(),
			    "cannot parse 'x.mbox': no diff found");
	assert_int_equal(pt_error_last_code(), PT_EINVAL);
}

static void test_atomic_write(void **state)
{
	char dir[] = "/tmp/pt-buf-XXXXXX", path[64];
	struct buf b = BUF_INIT;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_int_equal(pt_write_file_atomic(path, "hello", 5), 0);
	assert_int_equal(pt_read_file(&b, path, 0), 0);
	assert_string_equal(b.ptr, "hello");
	buf_reset(&b);
	assert_int_equal(pt_read_file(&b, path, 3), PT_ETOOBIG);
	buf_free(&b);
	unlink(path);
	rmdir(dir);
	assert_int_equal(pt_read_file(&b, path, 0), PT_EIO);
	assert_non_null(strstr(pt_error_last(), path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_and_format),
		cmocka_unit_test(test_format_lengths),
		cmocka_unit_test(test_max_refuses),
		cmocka_unit_test(test_detach_empty),
		cmocka_unit_test(test_error_wrap),
		cmocka_unit_test(test_atomic_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
