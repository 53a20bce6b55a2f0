/*
 * test_template.c - the template engine and the 72-column wrapper
 * (scoring/util/template.c), and the shipped reply templates rendering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/util/pt.h"
#include "scoring/util/template.h"

static char *render(const char *tpl, struct tpl_vars *v, int *rc)
{
	struct buf out = BUF_INIT;

	*rc = tpl_render(&out, tpl, strlen(tpl), v, "test");
	return buf_detach(&out, NULL);
}

static void test_vars_if_each(void **state)
{
	struct tpl_vars *v, *it;
	char *s;
	int rc;

	(void)state;
	assert_int_equal(tpl_vars_new(&v), 0);
	tpl_set(v, "name", "Jane");
	tpl_set(v, "empty", "");
	assert_int_equal(tpl_list_add(v, "reasons", &it), 0);
	tpl_set(it, "text", "large diff");
	assert_int_equal(tpl_list_add(v, "reasons", &it), 0);
	tpl_set(it, "text", "no review");

	s = render("Hi {{ name }}!\n"
		   "{{#if empty}}\nnot shown\n{{else}}\nshown\n{{/if}}\n"
		   "{{#each reasons}}\n"
		   "{{@number}}. {{text}} for {{name}}\n"
		   "{{/each}}\n"
		   "{{#if missing}}x{{/if}}end {{#if name}}yes{{/if}}\n",
		   v, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s, "Hi Jane!\nshown\n"
			       "1. large diff for Jane\n"
			       "2. no review for Jane\n"
			       "end yes\n");
	free(s);
	tpl_vars_free(v);
}

static void test_nested(void **state)
{
	struct tpl_vars *v, *it;
	char *s;
	int rc;

	(void)state;
	tpl_vars_new(&v);
	tpl_list_add(v, "l", &it);
	tpl_set(it, "ok", "1");
	tpl_list_add(v, "l", &it);
	tpl_set(it, "ok", "0");
	s = render("{{#each l}}[{{#if ok}}y{{else}}n{{/if}}]{{/each}}", v, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s, "[y][n]");
	free(s);
	tpl_vars_free(v);
}

static void test_errors(void **state)
{
	struct tpl_vars *v;
	char *s;
	int rc;

	(void)state;
	tpl_vars_new(&v);
	s = render("a\n{{nope}}", v, &rc);
	assert_int_equal(rc, PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "line 2: unknown variable "
						"'nope'"));
	free(s);
	s = render("{{#if x}}open", v, &rc);
	assert_int_equal(rc, PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "not closed"));
	free(s);
	s = render("{{/each}}", v, &rc);
	assert_int_equal(rc, PT_EINVAL);
	free(s);
	s = render("{{#if x}}{{/each}}", v, &rc);
	assert_int_equal(rc, PT_EINVAL);
	free(s);
	s = render("{{x", v, &rc);
	assert_int_equal(rc, PT_EINVAL);
	free(s);
	tpl_vars_free(v);
}

static void check_width(const char *s, size_t width)
{
	const char *l = s, *e;
	size_t c;

	for (; *l; l = *e ? e + 1 : e) {
		e = strchr(l, '\n');
		if (!e)
			e = l + strlen(l);
		for (c = 0; l < e; l++)
			c += ((unsigned char)*l & 0xC0) != 0x80;
		assert_true(c <= width);
	}
}

static void test_wrap(void **state)
{
	struct buf out = BUF_INIT;
	const char *text =
		"Short line.\n"
		"\n"
		"A rather long line of text that certainly goes past the "
		"seventy-two column limit of mail bodies and must wrap.\n"
		"\n"
		"  1. A numbered reason that is also long enough to need a "
		"second line, indented under its text.\n"
		"> a quoted line is never rewrapped even when it is longer "
		"than seventy-two columns wide\n"
		"\n"
		"Ünïcödé wörds cöunt äs öne cölümn each, sö this line of "
		"seventy chars ok\n";

	(void)state;
	assert_int_equal(tpl_wrap(&out, text, strlen(text), 72), 0);
	assert_non_null(strstr(out.ptr, "Short line.\n"));
	assert_non_null(strstr(out.ptr, "  1. A numbered reason that is also "
					"long enough to need a second line,\n"
					"     indented under its text.\n"));
	assert_non_null(strstr(out.ptr, "> a quoted line is never rewrapped "
					"even when it is longer than "
					"seventy-two columns wide\n"));
	assert_non_null(strstr(out.ptr, "Ünïcödé wörds cöunt äs öne cölümn "
					"each, sö this line of seventy chars "
					"ok\n"));
	/* lines of one paragraph are refilled */
	buf_reset(&out);
	text = "one two\nthree four\n\n- item one\n- item two\n";
	assert_int_equal(tpl_wrap(&out, text, strlen(text), 72), 0);
	assert_string_equal(out.ptr, "one two three four\n\n- item one\n"
				     "- item two\n");
	buf_reset(&out);
	text = "word https://lore.kernel.org/linux-pwm/20240101000000.12345"
	       "-1-someone@example.org/T/#u and more words after the url\n";
	assert_int_equal(tpl_wrap(&out, text, strlen(text), 72), 0);
	assert_string_equal(out.ptr,
			    "word\nhttps://lore.kernel.org/linux-pwm/"
			    "20240101000000.12345-1-someone@example.org/T/#u\n"
			    "and more words after the url\n");
	buf_reset(&out);
	text = "x y z\n";
	assert_int_equal(tpl_wrap(&out, text, strlen(text), 72), 0);
	check_width(out.ptr, 72);
	buf_free(&out);
}

/*
 * Found by fuzz_template: a loop over a list inside a loop over the same
 * list made the item its own parent, so looking up a name that was not
 * there never ended ("{{#each reasons}}{{#each reasons}}{{nope}}...").
 */
static void test_loop_in_same_loop(void **state)
{
	struct tpl_vars *v, *it;
	char *s;
	int rc;

	(void)state;
	tpl_vars_new(&v);
	tpl_set(v, "name", "Jane");
	tpl_list_add(v, "l", &it);
	tpl_set(it, "t", "a");
	tpl_list_add(v, "l", &it);
	tpl_set(it, "t", "b");
	s = render("{{#each l}}{{#each l}}{{nope}}{{/each}}{{/each}}", v, &rc);
	assert_int_equal(rc, PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "unknown variable 'nope'"));
	free(s);
	/* inner @number and t are the inner item's; outer scope intact */
	s = render("{{#each l}}{{#each l}}{{t}}{{@number}} {{/each}}"
		   "{{t}}{{@number}} {{name}}|{{/each}}",
		   v, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s, "a1 b2 a1 Jane|a1 b2 b2 Jane|");
	free(s);
	/* a render leaves the variables as they were: no @number outside */
	s = render("{{@number}}", v, &rc);
	assert_int_equal(rc, PT_EINVAL);
	free(s);
	tpl_vars_free(v);
}

/*
 * Found by fuzz_template: loops nested 15 deep over a 3-item list with
 * nothing to print ran 3^15 bodies, since only output was capped.
 */
static void test_work_cap(void **state)
{
	struct tpl_vars *v, *it;
	struct buf tpl = BUF_INIT;
	char *s;
	int rc, i;

	(void)state;
	tpl_vars_new(&v);
	for (i = 0; i < 3; i++)
		tpl_list_add(v, "l", &it);
	for (i = 0; i < 15; i++)
		buf_addstr(&tpl, "{{#each l}}");
	for (i = 0; i < 15; i++)
		buf_addstr(&tpl, "{{/each}}");
	s = render(tpl.ptr, v, &rc);
	assert_int_equal(rc, PT_ETOOBIG);
	assert_non_null(strstr(pt_error_last(), "to scan"));
	free(s);
	/* four deep is 81 bodies: fine */
	buf_reset(&tpl);
	buf_addstr(&tpl, "{{#each l}}{{#each l}}{{#each l}}{{#each l}}x"
			 "{{/each}}{{/each}}{{/each}}{{/each}}");
	s = render(tpl.ptr, v, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(strlen(s), 81);
	free(s);
	buf_free(&tpl);
	tpl_vars_free(v);
}

/*
 * Found by fuzz_template: wrapping counted the columns of the rest of
 * the line again for every line it cut, quadratic in a paragraph as
 * long as TPL_MAX_OUTPUT.
 */
static void test_wrap_long_paragraph(void **state)
{
	struct buf in = BUF_INIT, out = BUF_INIT;
	size_t words = 0, i;

	(void)state;
	while (in.len < TPL_MAX_OUTPUT / 2)
		buf_addstr(&in, "w\xc3\xa9rd ");
	assert_int_equal(tpl_wrap(&out, in.ptr, in.len, 72), 0);
	check_width(out.ptr, 72);
	for (i = 0; i < out.len; i++)
		words += out.ptr[i] == 'w';
	assert_int_equal(words, in.len / 6);
	buf_free(&in);
	buf_free(&out);
}

static void render_file(const char *name, struct tpl_vars *v, struct buf *out)
{
	struct buf path = BUF_INIT, t = BUF_INIT, raw = BUF_INIT;
	const char *src = getenv("PT_SOURCE_DIR");

	buf_addf(&path, "%s/templates/%s", src ? src : ".", name);
	assert_int_equal(pt_read_file(&t, path.ptr, 1 << 20), 0);
	if (tpl_render(&raw, t.ptr, t.len, v, name))
		fail_msg("%s", pt_error_last());
	assert_int_equal(tpl_wrap(out, raw.ptr, raw.len, 72), 0);
	buf_free(&path);
	buf_free(&t);
	buf_free(&raw);
}

static void test_shipped_templates(void **state)
{
	struct tpl_vars *v, *it;
	struct buf out = BUF_INIT;

	(void)state;
	tpl_vars_new(&v);
	tpl_set(v, "author_first", "Jane");
	tpl_set(v, "subsystem", "pwm");
	tpl_set(v, "subject",
		"pwm: foo: add bar support for the new "
		"revision of the controller");
	tpl_set(v, "risk_percent", "41");
	tpl_set(v, "stable_percent", "77");
	tpl_set(v, "threshold_percent", "30");
	tpl_set(v, "model_version", "risk-2024.1-abc123");
	tpl_set(v, "tool_version", PT_VERSION);
	tpl_set(v, "review", "no Reviewed-by yet, 1 reply");
	tpl_set(v, "has_fixes", "");
	tpl_list_add(v, "reasons", &it);
	tpl_set(it, "text",
		"touches locking in an interrupt handler, "
		"which earlier fixes in this driver often did");
	tpl_set(it, "direction", "raises");
	render_file("risk-reply.txt", v, &out);
	check_width(out.ptr, 72);
	assert_non_null(strstr(out.ptr, "41%"));
	assert_non_null(strstr(out.ptr, "model risk-2024.1-abc123"));
	assert_non_null(strstr(out.ptr, "  1. touches locking"));
	assert_non_null(strstr(out.ptr, "remove \"reply\""));
	assert_null(strstr(out.ptr, "{{"));
	assert_null(strstr(out.ptr, "\n\n\n"));
	buf_reset(&out);
	render_file("stable-reply.txt", v, &out);
	check_width(out.ptr, 72);
	assert_non_null(strstr(out.ptr, "77%"));
	assert_non_null(strstr(out.ptr, "  Cc: stable@vger.kernel.org\n"));
	assert_non_null(strstr(out.ptr, "  Fixes: "));
	assert_null(strstr(out.ptr, "{{"));
	buf_free(&out);
	tpl_vars_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vars_if_each),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_shipped_templates),
		cmocka_unit_test(test_loop_in_same_loop),
		cmocka_unit_test(test_work_cap),
		cmocka_unit_test(test_wrap_long_paragraph),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
