/*
 * test_subject.c - subject_parse: bracket prefixes, reply markers, odd
 * nesting, the PT_MAX_PREFIXES bound and subject_normalise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/patch.h"

struct scase {
	const char *in;
	const char *clean;
	unsigned version, number, total, reply_depth;
	unsigned patch, rfc, resend, autosel, pull, cover;
	const char *tags; /* space-joined */
};

static const struct scase cases[] = {
	{ "[PATCH net-next v3 2/7] net: foo: bar", "net: foo: bar", 3, 2, 7, 0,
	  1, 0, 0, 0, 0, 0, "net-next" },
	{ "[RFC PATCH v2 0/5] mm: thing", "mm: thing", 2, 0, 5, 0, 1, 1, 0, 0,
	  0, 1, "" },
	{ "[PATCH AUTOSEL 6.6 03/12] drm/amd: fix x", "drm/amd: fix x", 1, 3,
	  12, 0, 1, 0, 0, 1, 0, 0, "6.6" },
	{ "[PATCH v2 RESEND] foo: bar", "foo: bar", 2, 0, 0, 0, 1, 0, 1, 0, 0,
	  0, "" },
	{ "[PATCH 1/2 v2] foo", "foo", 2, 1, 2, 0, 1, 0, 0, 0, 0, 0, "" },
	{ "[GIT PULL] Networking for 6.7", "Networking for 6.7", 1, 0, 0, 0, 0,
	  0, 0, 0, 1, 0, "" },
	{ "Re: [PATCH] foo", "foo", 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, "" },
	{ "RE: Aw: AW: Fwd: [PATCH] foo", "foo", 1, 0, 0, 4, 1, 0, 0, 0, 0, 0,
	  "" },
	{ "Re[2]: Re: foo", "foo", 1, 0, 0, 3, 0, 0, 0, 0, 0, 0, "" },
	{ "Re: Re: Re: [PATCH v4 1/1] x", "x", 4, 1, 1, 3, 1, 0, 0, 0, 0, 0,
	  "" },
	{ "[PATCH] [net] foo", "foo", 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, "net" },
	{ "[[PATCH]] foo", "foo", 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, "" },
	{ "[net-next,v2,1/3] foo", "foo", 2, 1, 3, 0, 0, 0, 0, 0, 0, 0,
	  "net-next" },
	{ "[PATCH bpf-next,V4, 10/11] bpf: x", "bpf: x", 4, 10, 11, 0, 1, 0, 0,
	  0, 0, 0, "bpf-next" },
	{ "[PATCHv5 3/4] usb: y", "usb: y", 5, 3, 4, 0, 1, 0, 0, 0, 0, 0, "" },
	{ "[patch] lower case", "lower case", 1, 0, 0, 0, 1, 0, 0, 0, 0, 0,
	  "" },
	{ "[PATCH 5.10 012/345] z", "z", 1, 12, 345, 0, 1, 0, 0, 0, 0, 0,
	  "5.10" },
	{ "[PATCH] Revert \"foo [bar]\"", "Revert \"foo [bar]\"", 1, 0, 0, 0, 1,
	  0, 0, 0, 0, 0, "" },
	{ "  plain subject  ", "plain subject", 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	  "" },
	{ "[unclosed bracket", "[unclosed bracket", 1, 0, 0, 0, 0, 0, 0, 0, 0,
	  0, "" },
	{ "Revert: not a reply", "Revert: not a reply", 1, 0, 0, 0, 0, 0, 0, 0,
	  0, 0, "" },
	{ "Re: [PATCH] Re: nested reply", "nested reply", 1, 0, 0, 2, 1, 0, 0,
	  0, 0, 0, "" },
	{ "[PATCH v12345678901] huge", "huge", 1, 0, 0, 0, 1, 0, 0, 0, 0, 0,
	  "v12345678901" },
	{ "", "", 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, "" },
};

static char *join_tags(const struct subject *s)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < s->ntags; i++) {
		if (i)
			buf_addch(&b, ' ');
		buf_addstr(&b, s->tags[i]);
	}
	return buf_detach(&b, NULL);
}

static void test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct scase *c = &cases[i];
		struct subject s;
		char *tags;

		print_message("case %zu: %s\n", i, c->in);
		assert_int_equal(subject_parse(&s, c->in, strlen(c->in)), 0);
		assert_string_equal(s.raw, c->in);
		assert_string_equal(s.clean, c->clean);
		assert_int_equal(s.version, c->version);
		assert_int_equal(s.number, c->number);
		assert_int_equal(s.total, c->total);
		assert_int_equal(s.reply_depth, c->reply_depth);
		assert_int_equal(s.is_patch, c->patch);
		assert_int_equal(s.is_rfc, c->rfc);
		assert_int_equal(s.is_resend, c->resend);
		assert_int_equal(s.is_autosel, c->autosel);
		assert_int_equal(s.is_pull, c->pull);
		assert_int_equal(s.is_cover, c->cover);
		tags = join_tags(&s);
		assert_string_equal(tags, c->tags);
		free(tags);
		subject_clear(&s);
	}
}

static void test_folded_and_not_terminated(void **state)
{
	const char in[] = "[PATCH v2]\r\n foo:\n\tbar XXXX";
	struct subject s;

	(void)state;
	/* the length excludes " XXXX": no reading past it */
	assert_int_equal(subject_parse(&s, in, strlen(in) - 5), 0);
	assert_string_equal(s.raw, "[PATCH v2] foo:\tbar");
	assert_string_equal(s.clean, "foo:\tbar");
	assert_int_equal(s.version, 2);
	subject_clear(&s);
	subject_clear(&s); /* cleared twice is fine */
}

static void test_many_prefixes_bounded(void **state)
{
	struct buf b = BUF_INIT;
	struct subject s;
	unsigned i;

	(void)state;
	for (i = 0; i < 10000; i++)
		buf_addf(&b, "[t%u] Re: ", i);
	buf_addstr(&b, "tail");
	assert_int_equal(subject_parse(&s, b.ptr, b.len), 0);
	assert_true(s.ntags <= PT_MAX_PREFIXES);
	assert_true(s.reply_depth <= PT_MAX_PREFIXES);
	assert_non_null(strstr(s.clean, "tail"));
	subject_clear(&s);
	buf_free(&b);
}

static void test_invalid_utf8_kept(void **state)
{
	const char in[] = "[PATCH] caf\xc3\xa9 \xff\xfe x";
	struct subject s;

	(void)state;
	assert_int_equal(subject_parse(&s, in, strlen(in)), 0);
	assert_string_equal(s.clean, "caf\xc3\xa9 \xff\xfe x");
	subject_clear(&s);
}

static void test_normalise(void **state)
{
	char *n;

	(void)state;
	n = subject_normalise("  Net:  FOO\t bar \n");
	assert_string_equal(n, "net: foo bar");
	free(n);
	n = subject_normalise("");
	assert_string_equal(n, "");
	free(n);
	assert_null(subject_normalise(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_folded_and_not_terminated),
		cmocka_unit_test(test_many_prefixes_bounded),
		cmocka_unit_test(test_invalid_utf8_kept),
		cmocka_unit_test(test_normalise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
