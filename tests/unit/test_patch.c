/*
 * test_patch.c - struct patch: setting message and diff (and setting
 * them again), the trailer questions, freeing every field, and the JSON
 * shape of docs/patch-json.md read back with jansson.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/patch.h"

static const char msg[] = "The xmit path leaked an skb on error.\n"
			  "\n"
			  "Fixes: 0123456789ab (\"net: foo: add xmit path\")\n"
			  "Cc: stable@vger.kernel.org # 5.10+\n"
			  "Reviewed-by: Rev <rev@example.org>\n"
			  "Reviewed-by: Two <two@example.org>\n"
			  "Signed-off-by: Jane Doe <jane@example.org>\n";

static const char diff[] =
	"diff --git a/drivers/net/foo.c b/drivers/net/foo.c\n"
	"index 1111111..2222222 100644\n"
	"--- a/drivers/net/foo.c\n"
	"+++ b/drivers/net/foo.c\n"
	"@@ -1,3 +1,4 @@ int foo_xmit(void)\n"
	" a\n"
	"-b\n"
	"+c\n"
	"+kfree_skb(skb);\n"
	" d\n"
	"diff --git a/new.c b/new.c\n"
	"new file mode 100644\n"
	"--- /dev/null\n"
	"+++ b/new.c\n"
	"@@ -0,0 +1 @@\n"
	"+caf\xff\n";

static struct patch *full_patch(void)
{
	struct patch *p;
	const char subj[] = "[PATCH net v2 1/3] net: foo: fix leak";

	assert_int_equal(patch_new(&p), 0);
	p->source = PATCH_FROM_MAIL;
	p->message_id = strdup("1@example.org");
	p->in_reply_to = strdup("0@example.org");
	p->references = calloc(2, sizeof(char *));
	p->references[0] = strdup("0@example.org");
	p->references[1] = strdup("0b@example.org");
	p->nreferences = 2;
	p->list_id = strdup("netdev.vger.kernel.org");
	p->commit_id = strdup("0123456789abcdef0123456789abcdef01234567");
	p->parent_id = strdup("89abcdef0123456789abcdef0123456789abcdef");
	p->author.name = strdup("Jane Doe");
	p->author.email = strdup("jane@example.org");
	p->committer.name = strdup("Maint");
	p->committer.email = strdup("maint@example.org");
	p->author_date = 1794322800; /* 2026-11-10T15:00:00Z */
	p->commit_date = 1794326400;
	p->notes = strdup(" drivers/net/foo.c | 2 +-\n");
	assert_int_equal(subject_parse(&p->subject, subj, strlen(subj)), 0);
	assert_int_equal(patch_set_message(p, msg, strlen(msg)), 0);
	assert_int_equal(patch_set_diff(p, diff, strlen(diff)), 0);
	return p;
}

static void test_message_and_diff(void **state)
{
	struct patch *p = full_patch();

	(void)state;
	assert_string_equal(p->message, msg);
	assert_string_equal(p->changelog,
			    "The xmit path leaked an skb on error.");
	assert_int_equal(p->ntrailers, 5);
	assert_int_equal(patch_count_trailers(p, TRAILER_REVIEWED), 2);
	assert_int_equal(patch_count_trailers(p, TRAILER_ACKED), 0);
	assert_true(patch_is_tagged_fix(p));
	assert_int_equal(p->nfiles, 2);
	assert_int_equal(p->added, 3);
	assert_int_equal(p->removed, 1);
	/* lines point into the patch's own copy of the diff */
	assert_true(p->files[0].hunks[0].lines[0].text >= p->diff &&
		    p->files[0].hunks[0].lines[0].text < p->diff + p->diff_len);
	/* setting again replaces, without leaks */
	assert_int_equal(patch_set_message(p, "No trailers.\n", 13), 0);
	assert_int_equal(p->ntrailers, 0);
	assert_false(patch_is_tagged_fix(p));
	assert_string_equal(p->changelog, "No trailers.");
	assert_int_equal(patch_set_diff(p, "", 0), 0);
	assert_int_equal(p->nfiles, 0);
	assert_int_equal(p->added, 0);
	patch_free(p);
	patch_free(NULL);
}

static void test_failed_diff_keeps_old(void **state)
{
	struct patch *p = full_patch();
	size_t big = PT_MAX_LINE_LEN + 10;
	char *d = malloc(big);

	(void)state;
	memset(d, '+', big);
	assert_int_equal(patch_set_diff(p, d, big), PT_ETOOBIG);
	assert_int_equal(p->nfiles, 2);
	assert_int_equal(p->added, 3);
	free(d);
	patch_free(p);
}

static void test_stable_only_is_fix(void **state)
{
	struct patch *p;
	const char m[] = "x\n\nCc: <stable@kernel.org>\n";

	(void)state;
	assert_int_equal(patch_new(&p), 0);
	assert_false(patch_is_tagged_fix(p));
	assert_int_equal(patch_set_message(p, m, strlen(m)), 0);
	assert_true(patch_is_tagged_fix(p));
	assert_int_equal(patch_count_trailers(p, TRAILER_CC), 1);
	patch_free(p);
}

static json_t *to_json(const struct patch *p)
{
	struct buf b = BUF_INIT;
	json_error_t err;
	json_t *j;

	assert_int_equal(patch_to_json(&b, p), 0);
	j = json_loadb(b.ptr, b.len, 0, &err);
	if (!j)
		print_message("bad JSON: %s\n%s\n", err.text, b.ptr);
	assert_non_null(j);
	buf_free(&b);
	return j;
}

static const char *jget_str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_non_null(v);
	return json_string_value(v);
}

static void test_json(void **state)
{
	struct patch *p = full_patch();
	json_t *j = to_json(p), *s, *t, *f;

	(void)state;
	assert_string_equal(jget_str(j, "source"), "mail");
	assert_string_equal(jget_str(j, "message_id"), "1@example.org");
	assert_string_equal(jget_str(j, "in_reply_to"), "0@example.org");
	assert_int_equal(json_array_size(json_object_get(j, "references")), 2);
	assert_string_equal(jget_str(j, "list_id"), "netdev.vger.kernel.org");
	assert_int_equal(strlen(jget_str(j, "commit")), 40);
	assert_int_equal(strlen(jget_str(j, "parent")), 40);
	assert_string_equal(jget_str(json_object_get(j, "author"), "email"),
			    "jane@example.org");
	assert_string_equal(jget_str(json_object_get(j, "committer"), "name"),
			    "Maint");
	assert_string_equal(jget_str(j, "author_date"), "2026-11-10T15:00:00Z");
	assert_string_equal(jget_str(j, "commit_date"), "2026-11-10T16:00:00Z");
	s = json_object_get(j, "subject");
	assert_string_equal(jget_str(s, "clean"), "net: foo: fix leak");
	assert_int_equal(json_integer_value(json_object_get(s, "version")), 2);
	assert_int_equal(json_integer_value(json_object_get(s, "number")), 1);
	assert_int_equal(json_integer_value(json_object_get(s, "total")), 3);
	assert_string_equal(json_string_value(
				    json_array_get(json_object_get(s, "tags"),
						   0)),
			    "net");
	assert_true(json_is_false(json_object_get(s, "is_rfc")));
	assert_string_equal(jget_str(j, "changelog"),
			    "The xmit path leaked an skb on error.");
	assert_non_null(jget_str(j, "notes"));
	t = json_object_get(j, "trailers");
	assert_int_equal(json_array_size(t), 5);
	assert_string_equal(jget_str(json_array_get(t, 0), "kind"), "fixes");
	assert_string_equal(jget_str(json_array_get(t, 0), "fixes_sha"),
			    "0123456789ab");
	assert_true(
		json_is_null(json_object_get(json_array_get(t, 0), "email")));
	assert_true(json_is_true(
		json_object_get(json_array_get(t, 1), "is_stable")));
	assert_string_equal(jget_str(json_array_get(t, 1), "comment"), "5.10+");
	assert_string_equal(jget_str(json_array_get(t, 4), "kind"),
			    "signed-off-by");
	f = json_object_get(j, "files");
	assert_int_equal(json_array_size(f), 2);
	assert_string_equal(jget_str(json_array_get(f, 0), "status"),
			    "modified");
	assert_int_equal(json_integer_value(
				 json_object_get(json_array_get(f, 0),
						 "hunks")),
			 1);
	assert_int_equal(json_integer_value(
				 json_object_get(json_array_get(f, 0),
						 "old_mode")),
			 0100644);
	assert_true(json_is_null(
		json_object_get(json_array_get(f, 1), "old_path")));
	assert_string_equal(jget_str(json_array_get(f, 1), "status"), "added");
	assert_int_equal(json_integer_value(json_object_get(j, "added")), 3);
	assert_int_equal(json_integer_value(json_object_get(j, "removed")), 1);
	json_decref(j);
	patch_free(p);
}

static void test_json_empty_and_bad_utf8(void **state)
{
	struct patch *p;
	const char subj[] = "caf\xff \xc3\xa9 \xe0\x80\x80 \xed\xa0\x80";
	json_t *j;

	(void)state;
	assert_int_equal(patch_new(&p), 0);
	j = to_json(p);
	assert_true(json_is_null(json_object_get(j, "source")));
	assert_true(json_is_null(json_object_get(j, "author_date")));
	assert_true(json_is_null(json_object_get(j, "changelog")));
	assert_int_equal(json_array_size(json_object_get(j, "files")), 0);
	json_decref(j);
	assert_int_equal(subject_parse(&p->subject, subj, strlen(subj)), 0);
	/* the struct keeps the bytes; JSON gets U+FFFD for each bad one */
	assert_string_equal(p->subject.clean, subj);
	j = to_json(p);
	assert_string_equal(jget_str(json_object_get(j, "subject"), "raw"),
			    "caf\xef\xbf\xbd \xc3\xa9 "
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	json_decref(j);
	patch_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_message_and_diff),
		cmocka_unit_test(test_failed_diff_keeps_old),
		cmocka_unit_test(test_stable_only_is_fix),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_empty_and_bad_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
