/*
 * test_diff.c - diff_parse on real git output (tests/data/diff/, made
 * with git format-patch -M -C --binary), plain and quilt diffs, mail
 * damage (eaten context spaces, signatures, CRLF), truncation and the
 * size limits.
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

struct parsed {
	struct patch_file *f;
	size_t n;
};

static void read_data(struct buf *b, const char *name)
{
	const char *dir = getenv("PT_SOURCE_DIR");
	struct buf path = BUF_INIT;

	assert_non_null(dir);
	buf_addf(&path, "%s/tests/data/diff/%s", dir, name);
	assert_int_equal(pt_read_file(b, path.ptr, 0), 0);
	buf_free(&path);
}

static void parse_text(struct parsed *p, const char *text, size_t len)
{
	int rc = diff_parse(&p->f, &p->n, text, len);

	if (rc)
		print_message("diff_parse: %s\n", pt_error_last());
	assert_int_equal(rc, 0);
}

static void done(struct parsed *p)
{
	diff_files_free(p->f, p->n);
}

#define assert_str_or_null(a, b)                   \
	do {                                       \
		if (b)                             \
			assert_string_equal(a, b); \
		else                               \
			assert_null(a);            \
	} while (0)

static void check_file(const struct patch_file *f, const char *old,
		       const char *new, enum patch_file_status st,
		       unsigned added, unsigned removed, size_t nhunks)
{
	assert_str_or_null(f->old_path, old);
	assert_str_or_null(f->new_path, new);
	assert_int_equal(f->status, st);
	assert_int_equal(f->added, added);
	assert_int_equal(f->removed, removed);
	assert_int_equal(f->nhunks, nhunks);
}

static int line_is(const struct patch_line *l, char kind, const char *text)
{
	return l->kind == kind && l->len == strlen(text) &&
	       !memcmp(l->text, text, l->len);
}

static void test_git_kinds(void **state)
{
	struct buf b = BUF_INIT;
	struct parsed p;
	const struct patch_file *f;
	const struct patch_hunk *h;

	(void)state;
	read_data(&b, "git-kinds.patch");
	parse_text(&p, b.ptr, b.len);
	assert_int_equal(p.n, 9);
	f = p.f;
	check_file(&f[0], "blob.bin", "blob.bin", PATCH_FILE_MODIFIED, 0, 0, 0);
	assert_true(f[0].binary);
	assert_int_equal(f[0].old_mode, 0100644);
	check_file(&f[1], "src.c", "copied.c", PATCH_FILE_COPIED, 1, 0, 1);
	assert_int_equal(f[1].similarity, 86);
	check_file(&f[2], "deleted.txt", NULL, PATCH_FILE_DELETED, 0, 2, 1);
	assert_int_equal(f[2].old_mode, 0100644);
	check_file(&f[3], NULL, "new.txt", PATCH_FILE_ADDED, 1, 0, 1);
	assert_int_equal(f[3].new_mode, 0100644);
	assert_int_equal(f[3].old_mode, 0);
	check_file(&f[4], "nonl.txt", "nonl.txt", PATCH_FILE_MODIFIED, 1, 1, 1);
	h = &f[4].hunks[0];
	assert_int_equal(h->nlines, 4);
	assert_true(line_is(&h->lines[0], '-', "no newline"));
	assert_int_equal(h->lines[1].kind, '\\');
	assert_true(line_is(&h->lines[2], '+', "no newline either"));
	assert_int_equal(h->lines[3].kind, '\\');
	check_file(&f[5], "moved.c", "renamed.c", PATCH_FILE_RENAMED, 1, 1, 1);
	assert_int_equal(f[5].similarity, 89);
	h = &f[5].hunks[0];
	assert_int_equal(h->old_start, 2);
	assert_int_equal(h->old_lines, 7);
	assert_string_equal(h->heading, "one");
	check_file(&f[6], "script.sh", "script.sh", PATCH_FILE_MODIFIED, 0, 0,
		   0);
	assert_int_equal(f[6].old_mode, 0100644);
	assert_int_equal(f[6].new_mode, 0100755);
	check_file(&f[7], "tab\there.txt", "tab\there.txt", PATCH_FILE_MODIFIED,
		   1, 0, 1);
	check_file(&f[8], "with space.txt", "with space.txt",
		   PATCH_FILE_MODIFIED, 1, 0, 1);
	done(&p);
	buf_free(&b);
}

static void test_pure_rename_and_signature(void **state)
{
	struct buf b = BUF_INIT;
	struct parsed p;

	(void)state;
	read_data(&b, "pure-rename.patch");
	parse_text(&p, b.ptr, b.len);
	assert_int_equal(p.n, 1);
	check_file(&p.f[0], "renamed.c", "pure.c", PATCH_FILE_RENAMED, 0, 0, 0);
	assert_int_equal(p.f[0].similarity, 100);
	done(&p);
	buf_free(&b);
}

static void test_plain_and_quilt(void **state)
{
	struct buf b = BUF_INIT;
	struct parsed p;

	(void)state;
	read_data(&b, "plain-u.diff");
	parse_text(&p, b.ptr, b.len);
	assert_int_equal(p.n, 1);
	/* -p1 and the timestamp after the TAB dropped */
	check_file(&p.f[0], "f.c", "f.c", PATCH_FILE_MODIFIED, 2, 1, 1);
	done(&p);
	buf_reset(&b);
	read_data(&b, "quilt.diff");
	parse_text(&p, b.ptr, b.len);
	assert_int_equal(p.n, 2);
	check_file(&p.f[0], "kernel/sched.c", "kernel/sched.c",
		   PATCH_FILE_MODIFIED, 1, 0, 1);
	assert_null(p.f[0].hunks[0].heading);
	check_file(&p.f[1], NULL, "kernel/new.c", PATCH_FILE_ADDED, 2, 0, 1);
	done(&p);
	buf_free(&b);
}

static void test_mail_mangled(void **state)
{
	struct buf b = BUF_INIT;
	struct parsed p;
	const struct patch_hunk *h;

	(void)state;
	read_data(&b, "mail-mangled.patch");
	parse_text(&p, b.ptr, b.len);
	assert_int_equal(p.n, 1);
	check_file(&p.f[0], "drivers/net/foo.c", "drivers/net/foo.c",
		   PATCH_FILE_MODIFIED, 3, 2, 2);
	h = &p.f[0].hunks[0];
	assert_int_equal(h->nlines, 9);
	assert_false(h->truncated);
	/* the empty line that lost its space is context */
	assert_true(line_is(&h->lines[1], ' ', ""));
	assert_true(line_is(&h->lines[6], ' ', ""));
	h = &p.f[0].hunks[1];
	assert_int_equal(h->nlines, 2);
	assert_true(line_is(&h->lines[0], '-',
			    "-- removed line that starts with dashes"));
	assert_true(line_is(&h->lines[1], '+',
			    "++ added line that starts with pluses"));
	/* and "-- \n2.43.0" after it is not a removed line */
	assert_int_equal(h->removed, 1);
	done(&p);
	buf_free(&b);
}

/* Truncated hunks are kept, with the lines present, and flagged. */
static void test_truncated(void **state)
{
	struct buf b = BUF_INIT;
	struct parsed p;
	const struct patch_hunk *h;

	(void)state;
	read_data(&b, "truncated.patch");
	parse_text(&p, b.ptr, b.len);
	assert_int_equal(p.n, 1);
	h = &p.f[0].hunks[0];
	assert_int_equal(h->nlines, 5);
	assert_true(h->truncated);
	assert_int_equal(p.f[0].added, 2);
	assert_int_equal(p.f[0].removed, 1);
	done(&p);
	/* cut in the middle of the last line, and of a header */
	parse_text(&p, b.ptr, b.len - 3);
	assert_int_equal(p.f[0].hunks[0].nlines, 5);
	assert_true(line_is(&p.f[0].hunks[0].lines[4], ' ', "thr"));
	done(&p);
	parse_text(&p, b.ptr, 30);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.f[0].nhunks, 0);
	done(&p);
	/* a line that cannot belong ends the hunk early */
	parse_text(&p, "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\nZZZ\n",
		   strlen("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\nZZZ\n"));
	assert_int_equal(p.f[0].hunks[0].nlines, 1);
	assert_true(p.f[0].hunks[0].truncated);
	done(&p);
	buf_free(&b);
}

static void test_crlf(void **state)
{
	struct buf lf = BUF_INIT, crlf = BUF_INIT;
	struct parsed a, c;
	size_t i, j, k;

	(void)state;
	read_data(&lf, "git-kinds.patch");
	for (i = 0; i < lf.len; i++) {
		if (lf.ptr[i] == '\n')
			buf_addch(&crlf, '\r');
		buf_addch(&crlf, lf.ptr[i]);
	}
	parse_text(&a, lf.ptr, lf.len);
	parse_text(&c, crlf.ptr, crlf.len);
	assert_int_equal(a.n, c.n);
	for (i = 0; i < a.n; i++) {
		assert_str_or_null(c.f[i].old_path, a.f[i].old_path);
		assert_str_or_null(c.f[i].new_path, a.f[i].new_path);
		assert_int_equal(c.f[i].added, a.f[i].added);
		assert_int_equal(c.f[i].removed, a.f[i].removed);
		assert_int_equal(c.f[i].nhunks, a.f[i].nhunks);
		for (j = 0; j < a.f[i].nhunks; j++) {
			const struct patch_hunk *ha = &a.f[i].hunks[j];
			const struct patch_hunk *hc = &c.f[i].hunks[j];

			assert_str_or_null(hc->heading, ha->heading);
			assert_int_equal(hc->nlines, ha->nlines);
			for (k = 0; k < ha->nlines; k++) {
				assert_int_equal(hc->lines[k].len,
						 ha->lines[k].len);
				assert_memory_equal(hc->lines[k].text,
						    ha->lines[k].text,
						    ha->lines[k].len);
			}
		}
	}
	done(&a);
	done(&c);
	buf_free(&lf);
	buf_free(&crlf);
}

/* In an LF diff a CR is content (a file with CRLF lines): keep it. */
static void test_content_cr_and_bytes_kept(void **state)
{
	const char d[] = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-dos\r\n"
			 "+caf\xff\xfe\n";
	struct parsed p;

	(void)state;
	parse_text(&p, d, sizeof(d) - 1);
	assert_true(line_is(&p.f[0].hunks[0].lines[0], '-', "dos\r"));
	assert_true(line_is(&p.f[0].hunks[0].lines[1], '+', "caf\xff\xfe"));
	done(&p);
}

static void test_hunk_headers(void **state)
{
	const char d[] = "--- a/x\n+++ b/x\n"
			 "@@ -3 +3 @@\n-a\n+b\n"
			 "@@ -10,0 +11,2 @@ void f(int x)\n+c\n+d\n"
			 "@@ -20,1 +22 @@\n-e\n+f\n"
			 "@@ -99999999999999999999999,1 +1 @@\n-g\n"
			 "@@ bogus @@\n"
			 "@@ -30,1 +30,1 @@\n-h\n+i\n";
	struct parsed p;
	const struct patch_hunk *h;

	(void)state;
	parse_text(&p, d, sizeof(d) - 1);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.f[0].nhunks, 4);
	h = p.f[0].hunks;
	assert_int_equal(h[0].old_lines, 1);
	assert_int_equal(h[0].new_lines, 1);
	assert_null(h[0].heading);
	assert_int_equal(h[1].old_lines, 0);
	assert_int_equal(h[1].new_start, 11);
	assert_string_equal(h[1].heading, "void f(int x)");
	assert_int_equal(h[1].added, 2);
	assert_int_equal(h[2].new_lines, 1);
	/* the overflowing header was skipped, the next one parsed */
	assert_int_equal(h[3].old_start, 30);
	assert_int_equal(p.f[0].added, 5);
	assert_int_equal(p.f[0].removed, 3);
	done(&p);
}

static void test_empty_and_no_diff(void **state)
{
	struct parsed p;

	(void)state;
	parse_text(&p, "", 0);
	assert_int_equal(p.n, 0);
	assert_null(p.f);
	done(&p);
	parse_text(&p, "just a reply\n\n> quoted\n-- \nsig\n",
		   strlen("just a reply\n\n> quoted\n-- \nsig\n"));
	assert_int_equal(p.n, 0);
	done(&p);
	diff_files_free(NULL, 0);
}

static void test_long_line(void **state)
{
	size_t big = 50u << 20, i;
	char *d = malloc(big + 64);
	struct patch_file *f = (void *)1;
	size_t n = 99;
	int rc;

	(void)state;
	assert_non_null(d);
	i = (size_t)snprintf(d, big + 64, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n+");
	memset(d + i, 'x', big - i);
	rc = diff_parse(&f, &n, d, big);
	assert_int_equal(rc, PT_ETOOBIG);
	assert_null(f);
	assert_int_equal(n, 0);
	assert_non_null(strstr(pt_error_last(), "line 4 of the diff"));
	/* just under the limit is fine */
	memset(d + i, 'y', PT_MAX_LINE_LEN);
	d[PT_MAX_LINE_LEN] = '\n';
	rc = diff_parse(&f, &n, d, PT_MAX_LINE_LEN + 1);
	assert_int_equal(rc, 0);
	assert_int_equal(f[0].hunks[0].lines[0].len, PT_MAX_LINE_LEN - i);
	diff_files_free(f, n);
	free(d);
}

static void test_too_many_files(void **state)
{
	struct buf b = BUF_INIT;
	struct patch_file *f;
	size_t n, i;

	(void)state;
	for (i = 0; i <= PT_MAX_FILES; i++)
		buf_addstr(&b, "--- a/x\n+++ b/x\n");
	assert_int_equal(diff_parse(&f, &n, b.ptr, b.len), PT_ETOOBIG);
	assert_null(f);
	assert_non_null(strstr(pt_error_last(), "files"));
	buf_free(&b);
}

static void test_quoted_paths(void **state)
{
	const char d[] = "diff --git \"a/caf\\303\\251 \\\"q\\\".c\" "
			 "\"b/caf\\303\\251 \\\"q\\\".c\"\n"
			 "new file mode 100644\n"
			 "--- /dev/null\n"
			 "+++ \"b/caf\\303\\251 \\\"q\\\".c\"\n"
			 "@@ -0,0 +1 @@\n+x\n"
			 "diff --git a/a b/b c/d b/a b/b c/d\n"
			 "deleted file mode 100644\n"
			 "diff --git \"a/bad\\q\" b/bad\n"
			 "old mode 100644\n"
			 "new mode 100755\n";
	struct parsed p;

	(void)state;
	parse_text(&p, d, sizeof(d) - 1);
	assert_int_equal(p.n, 3);
	check_file(&p.f[0], NULL, "caf\xc3\xa9 \"q\".c", PATCH_FILE_ADDED, 1, 0,
		   1);
	/* names with " b/" inside: split where both sides agree */
	check_file(&p.f[1], "a b/b c/d", NULL, PATCH_FILE_DELETED, 0, 0, 0);
	/* a broken quote does not stop the parse */
	assert_int_equal(p.f[2].new_mode, 0100755);
	done(&p);
}

/*
 * fuzz_diff found this: the rename fallback of the "diff --git" name
 * split read 1-2 bytes past a header line that ends the input.  Each
 * prefix is parsed from an exact-size copy so ASan sees any over-read.
 */
static void test_git_line_at_end(void **state)
{
	const char d[] = "diff --git a/moved.c b/renamed.c";
	struct parsed p;
	size_t len;
	char *copy;

	(void)state;
	for (len = 0; len <= sizeof(d) - 1; len++) {
		copy = malloc(len ? len : 1);
		memcpy(copy, d, len);
		parse_text(&p, copy, len);
		if (len >= strlen("diff --git "))
			assert_int_equal(p.n, 1);
		done(&p);
		free(copy);
	}
	parse_text(&p, d, sizeof(d) - 1);
	check_file(&p.f[0], "moved.c", "renamed.c", PATCH_FILE_MODIFIED, 0, 0,
		   0);
	done(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_git_kinds),
		cmocka_unit_test(test_pure_rename_and_signature),
		cmocka_unit_test(test_plain_and_quilt),
		cmocka_unit_test(test_mail_mangled),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_content_cr_and_bytes_kept),
		cmocka_unit_test(test_hunk_headers),
		cmocka_unit_test(test_empty_and_no_diff),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_too_many_files),
		cmocka_unit_test(test_quoted_paths),
		cmocka_unit_test(test_git_line_at_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
