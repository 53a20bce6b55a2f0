/*
 * test_archive_mbox.c - list archives read from mbox files
 * (scoring/lists/archive.c): the story of tests/lib/archivefx.c written
 * as mboxrd, mboxo and gzip'd mbox must give the same rows as the
 * public-inbox of test_archive.c; the From-line escapes of each format, a
 * gzip stream cut short, and on the real 2024 linux-pwm archive (when
 * present) the counts found.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "scoring/lists/archive.h"
#include "scoring/store/db.h"
#include "scoring/util/pt.h"
#include "archivefx.h"

static void write_mbox(const char *path, int rd, int gz)
{
	struct buf b = BUF_INIT, line = BUF_INIT;
	size_t n, i;
	char **m = afx_story(&n);
	const char *s, *e;
	gzFile z;
	FILE *fp;

	for (i = 0; i < n; i++) {
		if (!m[i])
			continue;
		buf_addstr(&b, rd ? "From mboxrd@z Thu Jan  1 00:00:00 1970\n"
				  : "From alice@example.org Mon Jan  1 "
				    "10:00:00 2024\n");
		for (s = m[i]; *s; s = e) {
			e = strchr(s, '\n');
			e = e ? e + 1 : s + strlen(s);
			buf_reset(&line);
			buf_add(&line, s, (size_t)(e - s));
			if ((rd && strspn(s, ">") < (size_t)(e - s) &&
			     !strncmp(s + strspn(s, ">"), "From ", 5)) ||
			    (!rd && !strncmp(s, "From ", 5)))
				buf_addch(&b, '>');
			buf_add(&b, line.ptr, line.len);
		}
		buf_addch(&b, '\n');
	}
	if (gz) {
		z = gzopen(path, "wb");
		assert_non_null(z);
		assert_int_equal(gzwrite(z, b.ptr, (unsigned)b.len),
				 (int)b.len);
		gzclose(z);
	} else {
		fp = fopen(path, "w");
		assert_non_null(fp);
		assert_int_equal(fwrite(b.ptr, 1, b.len, fp), b.len);
		fclose(fp);
	}
	buf_free(&b);
	buf_free(&line);
	afx_story_free(m, n);
}

static void import_mbox(struct fx *f, const char *name, int rd, int gz)
{
	struct archive_result r;
	struct archive *a;
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	write_mbox(path, rd, gz);
	assert_int_equal(archive_open(&a, f->db, NULL), 0);
	assert_int_equal(archive_import_mbox(a, path), 0);
	assert_int_equal(archive_finish(a, &r), 0);
	archive_free(a);
	assert_int_equal(r.messages, 21);
	assert_int_equal(r.skipped, 1);
	assert_int_equal(r.imported, 20);
	afx_assert_story(f);
}

static void test_mboxrd(void **state)
{
	import_mbox(*state, "list.mbox", 1, 0);
}

static void test_mboxo(void **state)
{
	import_mbox(*state, "list.mboxo", 0, 0);
}

static void test_mbox_gz(void **state)
{
	import_mbox(*state, "list.mbox.gz", 1, 1);
}

struct collect {
	struct buf all;
	size_t n;
};

static int collect_cb(const char *msg, size_t len, const char *pos, void *ctx)
{
	struct collect *c = ctx;
	char want[16];

	snprintf(want, sizeof(want), "#%zu", c->n++);
	assert_string_equal(pos, want);
	assert_non_null(msg);
	buf_add(&c->all, msg, len);
	buf_addstr(&c->all, "\n=====\n");
	return 0;
}

/* Escapes: mboxrd drops one '>' of any >*From, mboxo only of >From. */
static void test_mbox_escapes(void **state)
{
	struct fx *f = *state;
	static const char rd[] = "From mboxrd@z Thu Jan  1 00:00:00 1970\n"
				 "Subject: a\n\n>From here\n>>From there\n\n"
				 "From mboxrd@z Thu Jan  1 00:00:00 1970\n"
				 "Subject: b\n\nbody\n";
	static const char o[] = "From a@b Mon Jan  1 10:00:00 2024\n"
				"Subject: a\n\n>From here\n>>From there\n";
	struct archive_walk w;
	struct collect c;
	char path[128];
	FILE *fp;
	gzFile z;

	snprintf(path, sizeof(path), "%s/esc.mbox.gz", f->dir);
	z = gzopen(path, "wb");
	gzwrite(z, rd, sizeof(rd) - 1);
	gzclose(z);
	memset(&c, 0, sizeof(c));
	buf_init(&c.all, 0);
	assert_int_equal(archive_mbox_foreach(&w, path, collect_cb, &c), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(w.truncated, 0);
	assert_string_equal(c.all.ptr, "Subject: a\n\nFrom here\n>From there"
				       "\n\n=====\nSubject: b\n\nbody\n"
				       "\n=====\n");
	buf_free(&c.all);

	snprintf(path, sizeof(path), "%s/esc.mboxo", f->dir);
	fp = fopen(path, "w");
	fputs(o, fp);
	fclose(fp);
	memset(&c, 0, sizeof(c));
	buf_init(&c.all, 0);
	assert_int_equal(archive_mbox_foreach(&w, path, collect_cb, &c), 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.all.ptr, "Subject: a\n\nFrom here\n>>From there"
				       "\n\n=====\n");
	buf_free(&c.all);
}

/*
 * A file whose first line is no separator is one message, as
 * mbox_foreach() says: a "From x ... hh:mm" line after a blank line in
 * its body does not cut it.
 */
static void test_mbox_single(void **state)
{
	struct fx *f = *state;
	static const char one[] = "Subject: a\n\nquoted:\n\n"
				  "From a@b Mon Jan  1 10:00:00 2024\nend\n";
	struct archive_walk w;
	struct collect c;
	char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/one.eml", f->dir);
	fp = fopen(path, "w");
	fputs(one, fp);
	fclose(fp);
	memset(&c, 0, sizeof(c));
	buf_init(&c.all, 0);
	assert_int_equal(archive_mbox_foreach(&w, path, collect_cb, &c), 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.all.ptr, "Subject: a\n\nquoted:\n\n"
				       "From a@b Mon Jan  1 10:00:00 2024\n"
				       "end\n\n=====\n");
	buf_free(&c.all);
}

/* A gzip stream cut short: what arrived is read, the end is recorded. */
static void test_mbox_gz_truncated(void **state)
{
	struct fx *f = *state;
	struct archive_result r;
	struct archive *a;
	char path[128], cut[160];
	struct stat st;

	snprintf(path, sizeof(path), "%s/cut.mbox.gz", f->dir);
	write_mbox(path, 1, 1);
	assert_int_equal(stat(path, &st), 0);
	snprintf(cut, sizeof(cut), "%s/cut2.mbox.gz", f->dir);
	{
		FILE *in = fopen(path, "rb"), *out = fopen(cut, "wb");
		char *b = malloc((size_t)st.st_size);

		assert_int_equal(fread(b, 1, (size_t)st.st_size, in),
				 (size_t)st.st_size);
		fwrite(b, 1, (size_t)st.st_size - 20, out);
		fclose(in);
		fclose(out);
		free(b);
	}
	assert_int_equal(archive_open(&a, f->db, NULL), 0);
	assert_int_equal(archive_import_mbox(a, cut), 0);
	assert_int_equal(archive_finish(a, &r), 0);
	archive_free(a);
	assert_true(r.messages >= 18);
	assert_int_equal(afx_q(f, "SELECT count(*) FROM archive_skips WHERE "
				  "reason = 'compressed stream ends early'"),
			 1);
}

/* The real list: nothing crashes, counts as measured. */
static void test_linux_pwm_2024(void **state)
{
	struct fx *f = *state;
	const char *shared = getenv("PT_SHARED_DIR");
	struct archive_result r;
	struct archive_stats s;
	struct archive *a;
	struct buf path = BUF_INIT;

	if (!shared)
		skip();
	buf_addf(&path, "%s/corpora/linux-pwm-2024.mboxrd.gz", shared);
	if (access(path.ptr, R_OK)) {
		buf_free(&path);
		skip();
	}
	assert_int_equal(archive_open(&a, f->db, NULL), 0);
	assert_int_equal(archive_import_mbox(a, path.ptr), 0);
	assert_int_equal(archive_finish(a, &r), 0);
	archive_free(a);
	buf_free(&path);
	assert_int_equal(archive_stats(&s, f->db), 0);
	assert_int_equal(r.messages, 3879);
	assert_int_equal(r.skipped, 0);
	assert_int_equal(r.imported + r.duplicates, 3879);
	/* measured with the parsers and threading of this tree */
	assert_in_range(s.series, 340, 375);	      /* 357 */
	assert_in_range(s.versions_linked, 160, 200); /* 178 */
	assert_in_range(s.reviews, 290, 345);	      /* 318 */
	assert_in_range(s.patches, 1380, 1440);	      /* 1410 */
	assert_in_range(s.notices, 90, 110);	      /* 99 */
	assert_in_range(s.applied, 140, 175);	      /* 156 */
	assert_in_range(s.superseded, 650, 750);      /* 701 */
	assert_in_range(s.fixes, 55, 70);	      /* 61 */
	assert_in_range(s.bugs, 3, 12);		      /* 7 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mboxrd, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_mboxo, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_mbox_gz, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_mbox_escapes, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_mbox_single, afx_setup,
						afx_teardown),
		cmocka_unit_test_setup_teardown(test_mbox_gz_truncated,
						afx_setup, afx_teardown),
		cmocka_unit_test_setup_teardown(test_linux_pwm_2024, afx_setup,
						afx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
