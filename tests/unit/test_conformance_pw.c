/*
 * test_conformance_pw.c - patch_from_mail() against what a real Patchwork
 * 3.1.3 recorded for the same mails ($PT_SHARED_DIR/fixtures/
 * patchwork-3.1.3/: mail/NN-*.eml and patch-N.json, N = the Nth mail
 * with a diff, in file order).  Compared: the name (prefix list and clean
 * subject), msgid, date (UTC), submitter, the diff (text and, parsed by
 * the same diff_parse, files and lines) and the content (message, "---",
 * notes).  Exits 77 (skip) when the fixtures are not there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/patch/patch.h"

#define NPATCHES 9

static char fixdir[1024];

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The mail/NN-*.eml names, sorted. */
static size_t list_mails(char ***out)
{
	char path[1100], **v = NULL;
	struct dirent *de;
	size_t n = 0, len;
	DIR *d;

	snprintf(path, sizeof(path), "%s/mail", fixdir);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d))) {
		len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".eml"))
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		assert_non_null(v);
		v[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_names);
	*out = v;
	return n;
}

static struct patch *parse_mail(const char *name)
{
	struct buf b = BUF_INIT;
	struct patch *p = NULL;
	char path[1400];

	snprintf(path, sizeof(path), "%s/mail/%s", fixdir, name);
	assert_int_equal(pt_read_file(&b, path, PT_MAX_MAIL_SIZE), 0);
	if (patch_from_mail(&p, b.ptr, b.len))
		fail_msg("%s: %s", name, pt_error_last());
	buf_free(&b);
	return p;
}

static const char *jget(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	if (!s)
		fail_msg("no string '%s' in the recording", key);
	return s;
}

/* "[net-next,v2,1/3] clean" against the parsed subject. */
static void check_name(const struct patch *p, json_t *pw)
{
	const char *name = jget(pw, "name"), *end;
	json_t *prefixes = json_object_get(pw, "prefixes"), *v;
	struct buf joined = BUF_INIT;
	size_t i, others = 0;
	unsigned a, b;
	char c;

	assert_true(name[0] == '[');
	end = strstr(name, "] ");
	assert_non_null(end);
	assert_string_equal(end + 2, p->subject.clean);
	assert_true(p->subject.is_patch);
	json_array_foreach (prefixes, i, v) {
		const char *s = json_string_value(v);

		assert_non_null(s);
		if (sscanf(s, "v%u%c", &a, &c) == 1) {
			assert_int_equal(p->subject.version, a);
		} else if (sscanf(s, "%u/%u%c", &a, &b, &c) == 2) {
			assert_int_equal(p->subject.number, a);
			assert_int_equal(p->subject.total, b);
		} else if (!strcmp(s, "RFC")) {
			assert_true(p->subject.is_rfc);
		} else {
			assert_true(others < p->subject.ntags);
			assert_string_equal(p->subject.tags[others], s);
			others++;
		}
	}
	assert_int_equal(others, p->subject.ntags);
	/* the name's brackets hold the prefixes, comma-joined */
	assert_true(json_array_size(prefixes) > 0);
	json_array_foreach (prefixes, i, v)
		assert_int_equal(buf_addf(&joined, "%s%s", i ? "," : "",
					  json_string_value(v)),
				 0);
	assert_int_equal(joined.len, (size_t)(end - name - 1));
	assert_memory_equal(joined.ptr, name + 1, joined.len);
	buf_free(&joined);
}

/* Patchwork's dates are UTC without a zone: 2026-11-01T11:00:01. */
static int64_t pw_date(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	assert_non_null(strptime(s, "%Y-%m-%dT%H:%M:%S", &tm));
	return (int64_t)timegm(&tm);
}

static void check_files(const struct patch *p, const char *diff)
{
	struct patch_file *f = NULL;
	size_t n = 0, i, h, l;

	assert_int_equal(diff_parse(&f, &n, diff, strlen(diff)), 0);
	assert_int_equal(n, p->nfiles);
	for (i = 0; i < n; i++) {
		assert_string_equal(f[i].new_path, p->files[i].new_path);
		assert_int_equal(f[i].status, p->files[i].status);
		assert_int_equal(f[i].added, p->files[i].added);
		assert_int_equal(f[i].removed, p->files[i].removed);
		assert_int_equal(f[i].nhunks, p->files[i].nhunks);
		for (h = 0; h < f[i].nhunks; h++) {
			const struct patch_hunk *x = &f[i].hunks[h];
			const struct patch_hunk *y = &p->files[i].hunks[h];

			assert_int_equal(x->nlines, y->nlines);
			for (l = 0; l < x->nlines; l++) {
				assert_int_equal(x->lines[l].kind,
						 y->lines[l].kind);
				assert_int_equal(x->lines[l].len,
						 y->lines[l].len);
				assert_memory_equal(x->lines[l].text,
						    y->lines[l].text,
						    x->lines[l].len);
			}
		}
	}
	diff_files_free(f, n);
}

/* Patchwork's content: the message, and "---" + notes when there are. */
static void check_content(const struct patch *p, json_t *pw)
{
	struct buf b = BUF_INIT;

	assert_int_equal(buf_addstr(&b, p->message), 0);
	if (p->notes)
		assert_int_equal(buf_addf(&b, "\n---\n%s", p->notes), 0);
	assert_string_equal(b.ptr, jget(pw, "content"));
	buf_free(&b);
}

static void check_patch(const struct patch *p, json_t *pw)
{
	json_t *sub = json_object_get(pw, "submitter");
	const char *msgid = jget(pw, "msgid"), *diff = jget(pw, "diff");

	check_name(p, pw);
	assert_true(strlen(msgid) > 2);
	assert_int_equal(strlen(p->message_id), strlen(msgid) - 2);
	assert_memory_equal(p->message_id, msgid + 1, strlen(msgid) - 2);
	assert_int_equal(p->author_date, pw_date(jget(pw, "date")));
	assert_string_equal(p->author.name, jget(sub, "name"));
	assert_string_equal(p->author.email, jget(sub, "email"));
	assert_int_equal(p->diff_len, strlen(diff));
	assert_memory_equal(p->diff, diff, p->diff_len);
	check_files(p, diff);
	check_content(p, pw);
}

static void test_patchwork_agrees(void **state)
{
	char **mails, path[1100];
	size_t n, i, npatch = 0;
	json_error_t err;
	json_t *pw;

	(void)state;
	n = list_mails(&mails);
	assert_int_equal(n, 15);
	for (i = 0; i < n; i++) {
		struct patch *p = parse_mail(mails[i]);

		/* Patchwork makes a patch of each mail with a diff */
		if (p->nfiles) {
			npatch++;
			snprintf(path, sizeof(path), "%s/patch-%zu.json",
				 fixdir, npatch);
			pw = json_load_file(path, 0, &err);
			if (!pw)
				fail_msg("%s: %s", path, err.text);
			print_message("%s = patch %zu\n", mails[i], npatch);
			check_patch(p, pw);
			json_decref(pw);
		}
		patch_free(p);
		free(mails[i]);
	}
	free(mails);
	assert_int_equal(npatch, NPATCHES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patchwork_agrees),
	};
	const char *shared = getenv("PT_SHARED_DIR");
	DIR *d;

	if (!shared || !*shared)
		return 77;
	snprintf(fixdir, sizeof(fixdir), "%s/fixtures/patchwork-3.1.3", shared);
	d = opendir(fixdir);
	if (!d) {
		printf("skip: no '%s'\n", fixdir);
		return 77;
	}
	closedir(d);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
