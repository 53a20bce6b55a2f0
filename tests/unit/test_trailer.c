/*
 * test_trailer.c - trailers_parse: which paragraph is a trailer block
 * (git's rules), continuation lines, key forms, person/Fixes/stable
 * splitting and body_len; the trailer vocabulary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/patch/patch.h"

struct parsed {
	struct trailer *t;
	size_t n;
	size_t body;
};

static void parse(struct parsed *p, const char *msg)
{
	assert_int_equal(trailers_parse(&p->t, &p->n, &p->body, msg,
					strlen(msg)),
			 0);
}

static void done(struct parsed *p)
{
	trailers_free(p->t, p->n);
}

/* Parse a trailer block of LINE and a sign-off; LINE must be of KIND. */
static void parse_line(struct parsed *p, const char *line,
		       enum trailer_kind kind)
{
	struct buf b = BUF_INIT;

	assert_int_equal(buf_addf(&b, "body\n\n%s\nSigned-off-by: A <a@b>\n",
				  line),
			 0);
	parse(p, b.ptr);
	buf_free(&b);
	assert_int_equal(p->n, 2);
	assert_int_equal(p->t[0].kind, kind);
}

#define assert_str_or_null(a, b)                   \
	do {                                       \
		if (b)                             \
			assert_string_equal(a, b); \
		else                               \
			assert_null(a);            \
	} while (0)

static void test_kernel_block(void **state)
{
	const char *msg =
		"net: foo: fix the thing\n"
		"\n"
		"The thing was broken.\n"
		"\n"
		"Fixes: 0123456789ab (\"net: foo: add xmit path\")\n"
		"Cc: stable@vger.kernel.org # 5.10+\n"
		"Reported-by: syzbot+1234@syzkaller.appspotmail.com\n"
		"Closes: https://lore.kernel.org/r/x@y/\n"
		"Link: https://lore.kernel.org/r/20261110.1@z # v1\n"
		"Suggested-by: Bob <bob@example.org>\n"
		"Co-developed-by: \"Doe, Jane\" <Jane.Doe@Example.ORG>\n"
		"Signed-off-by: Jane Doe <jane@example.org>\n"
		"Reviewed-by: Rev Iewer <rev@example.org>\n"
		"Acked-by: ack@example.org\n"
		"Tested-by: Tess Ter <tess@example.org> # on arm64\n"
		"Signed-off-by: Maint Ainer <maint@example.org>\n"
		"\n\n";
	struct parsed p;

	(void)state;
	parse(&p, msg);
	assert_int_equal(p.n, 12);
	assert_int_equal(p.body, strlen("net: foo: fix the thing\n\n"
					"The thing was broken."));
	assert_int_equal(p.t[0].kind, TRAILER_FIXES);
	assert_string_equal(p.t[0].fixes_sha, "0123456789ab");
	assert_string_equal(p.t[0].fixes_subject, "net: foo: add xmit path");
	assert_int_equal(p.t[1].kind, TRAILER_CC);
	assert_true(p.t[1].is_stable);
	assert_string_equal(p.t[1].comment, "5.10+");
	assert_string_equal(p.t[1].email, "stable@vger.kernel.org");
	assert_int_equal(p.t[2].kind, TRAILER_REPORTED);
	assert_string_equal(p.t[2].email,
			    "syzbot+1234@syzkaller.appspotmail.com");
	assert_null(p.t[2].name);
	assert_int_equal(p.t[3].kind, TRAILER_CLOSES);
	assert_string_equal(p.t[3].value, "https://lore.kernel.org/r/x@y/");
	assert_int_equal(p.t[4].kind, TRAILER_LINK);
	assert_string_equal(p.t[4].comment, "v1");
	assert_int_equal(p.t[5].kind, TRAILER_SUGGESTED);
	assert_string_equal(p.t[5].name, "Bob");
	assert_int_equal(p.t[6].kind, TRAILER_CO_DEVELOPED);
	assert_string_equal(p.t[6].name, "Doe, Jane");
	assert_string_equal(p.t[6].email, "jane.doe@example.org");
	assert_int_equal(p.t[7].kind, TRAILER_SIGNED_OFF);
	assert_string_equal(p.t[7].key, "Signed-off-by");
	assert_int_equal(p.t[8].kind, TRAILER_REVIEWED);
	assert_int_equal(p.t[9].kind, TRAILER_ACKED);
	assert_string_equal(p.t[9].email, "ack@example.org");
	assert_int_equal(p.t[10].kind, TRAILER_TESTED);
	assert_string_equal(p.t[10].comment, "on arm64");
	assert_string_equal(p.t[10].name, "Tess Ter");
	assert_int_equal(p.t[11].kind, TRAILER_SIGNED_OFF);
	done(&p);
}

static void test_only_trailers(void **state)
{
	struct parsed p;

	(void)state;
	/* a body that is nothing but a sign-off (the subject is not here) */
	parse(&p, "Signed-off-by: A <a@b>\n");
	assert_int_equal(p.n, 1);
	assert_int_equal(p.body, 0);
	done(&p);
}

static void test_not_a_block(void **state)
{
	struct parsed p;

	(void)state;
	/* prose with one "word: text" line and no known key */
	parse(&p, "Intro.\n\nThis fixes it.\nNote: see below\nmore\nmore\n");
	assert_int_equal(p.n, 0);
	assert_int_equal(p.body, strlen("Intro.\n\nThis fixes it.\n"
					"Note: see below\nmore\nmore"));
	done(&p);
	/* a known key but under 25% of the lines: git says no */
	parse(&p, "x\n\nline one\nline two\nline three\nline four\n"
		  "Signed-off-by: A <a@b>\n");
	assert_int_equal(p.n, 0);
	done(&p);
	/* the block must be the LAST paragraph */
	parse(&p, "x\n\nSigned-off-by: A <a@b>\n\nA closing remark.\n");
	assert_int_equal(p.n, 0);
	done(&p);
	/* a bare URL is not a trailer keyed "https" */
	parse(&p, "x\n\nhttps://example.org/bug/1\n");
	assert_int_equal(p.n, 0);
	done(&p);
	parse(&p, "");
	assert_int_equal(p.n, 0);
	assert_int_equal(p.body, 0);
	done(&p);
	parse(&p, "\n\n  \n");
	assert_int_equal(p.n, 0);
	assert_int_equal(p.body, 0);
	done(&p);
}

static void test_unknown_keys_all_trailers(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "body\n\nChange-Id: I123\nX-Foo : bar\n");
	assert_int_equal(p.n, 2);
	assert_string_equal(p.t[1].key, "X-Foo");
	assert_string_equal(p.t[1].value, "bar");
	assert_int_equal(p.t[1].kind, TRAILER_OTHER);
	done(&p);
}

static void test_continuation_and_case(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "body\n\n"
		  "fixes: abcdef012345 (\"a very long subject that\n"
		  "  wraps onto the next line\")\n"
		  "SIGNED-OFF-BY: A <a@b>\n"
		  "Reviewed-By : R <r@b>\n"
		  "\tcontinued here\n");
	assert_int_equal(p.n, 3);
	assert_int_equal(p.t[0].kind, TRAILER_FIXES);
	assert_string_equal(p.t[0].key, "fixes");
	assert_string_equal(p.t[0].fixes_subject,
			    "a very long subject that wraps onto the next "
			    "line");
	assert_int_equal(p.t[1].kind, TRAILER_SIGNED_OFF);
	assert_int_equal(p.t[2].kind, TRAILER_REVIEWED);
	assert_string_equal(p.t[2].key, "Reviewed-By");
	assert_string_equal(p.t[2].value, "R <r@b> continued here");
	done(&p);
}

static void test_backport_lines(void **state)
{
	struct parsed p;

	(void)state;
	/* stable backports: non-trailer lines inside the block */
	parse(&p,
	      "body\n\n"
	      "[ Upstream commit 0123456789abcdef0123456789abcdef01234567 ]\n"
	      "Signed-off-by: A <a@b>\n"
	      "[ backport: dropped the hunk for foo.c ]\n"
	      "(cherry picked from commit 0123456789abcdef)\n"
	      "Signed-off-by: Stable Maint <s@b>\n");
	assert_int_equal(p.n, 2);
	assert_int_equal(p.body, 4);
	assert_string_equal(p.t[1].name, "Stable Maint");
	done(&p);
}

static void test_fixes_forms(void **state)
{
	static const struct {
		const char *line, *sha, *subject;
	} c[] = {
		{ "Fixes: 0123456789ab (\"net: foo: add xmit path\")",
		  "0123456789ab", "net: foo: add xmit path" },
		{ "Fixes: 0123456789ab (\"Revert \"x (y)\"\")", "0123456789ab",
		  "Revert \"x (y)\"" },
		{ "Fixes: 0123456789ab (net: no quotes)", "0123456789ab",
		  "net: no quotes" },
		{ "Fixes: 0123456789AB \"only quotes\"", "0123456789AB",
		  "only quotes" },
		{ "Fixes: commit 0123456789ab (\"with commit word\")",
		  "0123456789ab", "with commit word" },
		{ "Fixes: 0123456789ab(\"no space\")", "0123456789ab",
		  "no space" },
		{ "Fixes: 0123456789ab (\"unclosed", "0123456789ab",
		  "unclosed" },
		{ "Fixes: 0123456789ab", "0123456789ab", NULL },
		{ "Fixes: https://bugzilla.kernel.org/1", NULL,
		  "https://bugzilla.kernel.org/1" },
		/* forms real trees write (issue 26) */
		{ "Fixes: <8bfc288c3955> (\"usb: gadget: add x\")",
		  "8bfc288c3955", "usb: gadget: add x" },
		{ "Fixes: Fixes: 8bfc288c3955 (\"doubled keyword\")",
		  "8bfc288c3955", "doubled keyword" },
		{ "Fixes: 8bfc288c3955: (\"colon after id\")", "8bfc288c3955",
		  "colon after id" },
		{ "Fixes: \"8bfc288c3955\": quoted id", "8bfc288c3955",
		  "quoted id" },
		{ "Fixes: 8bfc288c3955 \"no parentheses\"", "8bfc288c3955",
		  "no parentheses" },
		{ "Fixes: (\"\xe2\x80\x9c"
		  "ARM: dts: curly\xe2\x80\x9d\")",
		  NULL, "ARM: dts: curly" },
		{ "Fixes: cafe: not an id", NULL, "cafe: not an id" },
		{ "Fixes: Coverity CID 1234567", NULL, "Coverity CID 1234567" },
	};
	struct parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		parse_line(&p, c[i].line, TRAILER_FIXES);
		assert_str_or_null(p.t[0].fixes_sha, c[i].sha);
		assert_str_or_null(p.t[0].fixes_subject, c[i].subject);
		done(&p);
	}
}

static void test_stable_forms(void **state)
{
	static const struct {
		const char *line, *comment;
		int stable;
	} c[] = {
		{ "Cc: stable@vger.kernel.org", NULL, 1 },
		{ "Cc: <stable@vger.kernel.org> # 4.19.x", "4.19.x", 1 },
		{ "Cc: stable@kernel.org", NULL, 1 },
		{ "CC: Stable <STABLE@vger.kernel.org> #v6.1+", "v6.1+", 1 },
		{ "Cc: stable@vger.kernel.org\t# 5.4: 1234abcd: x",
		  "5.4: "
		  "1234abcd: x",
		  1 },
		{ "Cc: netdev@vger.kernel.org", NULL, 0 },
		{ "Cc: notstable@vger.kernel.org", NULL, 0 },
	};
	struct parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		parse_line(&p, c[i].line, TRAILER_CC);
		assert_int_equal(p.t[0].is_stable, c[i].stable);
		assert_str_or_null(p.t[0].comment, c[i].comment);
		done(&p);
	}
}

static void test_persons(void **state)
{
	static const struct {
		const char *v, *name, *email;
	} c[] = {
		{ "Jane Doe <jane@x.org>", "Jane Doe", "jane@x.org" },
		{ "<jane@x.org>", NULL, "jane@x.org" },
		{ "jane@x.org", NULL, "jane@x.org" },
		{ "\"Doe, J. \\\"JD\\\"\" <jd@x.org>", "Doe, J. \"JD\"",
		  "jd@x.org" },
		{ "syzbot", "syzbot", NULL },
		{ "J\xc3\xb6rg M\xc3\xbcller <j@x.de>",
		  "J\xc3\xb6rg M\xc3\xbcller", "j@x.de" },
		{ "Broken \xff Name <b@x>", "Broken \xff Name", "b@x" },
	};
	struct buf b = BUF_INIT;
	struct parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		buf_reset(&b);
		buf_addf(&b, "body\n\nReviewed-by: %s\n", c[i].v);
		parse(&p, b.ptr);
		assert_int_equal(p.n, 1);
		assert_str_or_null(p.t[0].name, c[i].name);
		assert_str_or_null(p.t[0].email, c[i].email);
		done(&p);
	}
	buf_free(&b);
}

static void test_crlf_and_length(void **state)
{
	const char msg[] = "body\r\n\r\nSigned-off-by: A <a@b>\r\n"
			   "Acked-by: C <c@d>\r\nGARBAGE";
	struct parsed p;

	(void)state;
	/* len stops before GARBAGE: it must not be read */
	assert_int_equal(trailers_parse(&p.t, &p.n, &p.body, msg,
					strlen(msg) - 7),
			 0);
	assert_int_equal(p.n, 2);
	assert_int_equal(p.body, 4);
	assert_string_equal(p.t[0].value, "A <a@b>");
	assert_string_equal(p.t[1].email, "c@d");
	done(&p);
}

static void test_too_many(void **state)
{
	struct buf b = BUF_INIT;
	struct trailer *t;
	size_t n, body, i;

	(void)state;
	buf_addstr(&b, "body\n\n");
	for (i = 0; i <= PT_MAX_TRAILERS; i++)
		buf_addf(&b, "Acked-by: a%zu@b\n", i);
	assert_int_equal(trailers_parse(&t, &n, &body, b.ptr, b.len),
			 PT_ETOOBIG);
	assert_null(t);
	assert_int_equal(n, 0);
	assert_non_null(strstr(pt_error_last(), "trailers"));
	buf_free(&b);
	trailers_free(NULL, 0);
}

/* The vocabulary: lookup, names, attributes and the list's review acts. */
static void test_vocabulary(void **state)
{
	const char *key, *act;
	size_t i, k;

	(void)state;
	assert_int_equal(trailer_kind_of("Reviewed-by"), TRAILER_REVIEWED);
	assert_int_equal(trailer_kind_of("reviewed-BY"), TRAILER_REVIEWED);
	assert_int_equal(trailer_kind_of("CC"), TRAILER_CC);
	assert_int_equal(trailer_kind_of("Reported-and-tested-by"),
			 TRAILER_REPORTED);
	assert_int_equal(trailer_kind_of("Reviewed-by:"), TRAILER_OTHER);
	assert_int_equal(trailer_kind_of("Helped-by"), TRAILER_OTHER);
	assert_int_equal(trailer_kind_of("Nacked-by"), TRAILER_OTHER);
	assert_int_equal(trailer_kind_of("X-Unknown"), TRAILER_OTHER);
	assert_int_equal(trailer_kind_of(""), TRAILER_OTHER);
	assert_int_equal(trailer_kind_of(NULL), TRAILER_OTHER);
	assert_null(trailer_kind_name(TRAILER_OTHER));
	assert_string_equal(trailer_kind_json(TRAILER_OTHER), "other");
	assert_string_equal(trailer_kind_json(TRAILER_NKINDS), "other");
	for (k = 1; k < TRAILER_NKINDS; k++) {
		const char *name = trailer_kind_name((enum trailer_kind)k);

		assert_non_null(name);
		assert_int_equal(trailer_kind_of(name), k);
		assert_non_null(trailer_kind_json((enum trailer_kind)k));
		assert_int_equal(strcasecmp(trailer_kind_json(
						    (enum trailer_kind)k),
					    name),
				 0);
	}
	assert_string_equal(trailer_kind_name(TRAILER_CO_DEVELOPED),
			    TRAILER_KEY_CO_DEVELOPED);
	assert_true(trailer_kind_flags(TRAILER_ACKED) & TRAILER_F_REVIEW);
	assert_false(trailer_kind_flags(TRAILER_REPORTED) & TRAILER_F_REVIEW);
	assert_true(trailer_kind_flags(TRAILER_CC) & TRAILER_F_PERSON);
	assert_false(trailer_kind_flags(TRAILER_FIXES) & TRAILER_F_PERSON);
	for (i = 0; (act = trailer_reply_act(i, &key)); i++)
		assert_non_null(key);
	assert_int_equal(i, 7);
	assert_null(key);
	assert_string_equal(trailer_reply_act(0, &key), "Reviewed-by");
	assert_string_equal(trailer_reply_act(6, &key), "Reviewed-by");
	assert_string_equal(key, "Reviewed-and-tested-by");
	assert_string_equal(trailer_reply_act(5, &key), "Nacked-by");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_block),
		cmocka_unit_test(test_only_trailers),
		cmocka_unit_test(test_not_a_block),
		cmocka_unit_test(test_unknown_keys_all_trailers),
		cmocka_unit_test(test_continuation_and_case),
		cmocka_unit_test(test_backport_lines),
		cmocka_unit_test(test_fixes_forms),
		cmocka_unit_test(test_stable_forms),
		cmocka_unit_test(test_persons),
		cmocka_unit_test(test_crlf_and_length),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_vocabulary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
