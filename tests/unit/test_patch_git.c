/*
 * test_patch_git.c - patch_from_commit() on a repository built here with
 * the git CLI, and "the two paths agree": git format-patch of the same
 * commit through patch_from_mail() gives the same subject, trailers,
 * files and lines.  HOME and the GIT_* identity variables point at the
 * test's temporary directory so no user configuration leaks in.
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

#include <git2.h>

#include "scoring/patch/patch.h"

static char tmpdir[] = "/tmp/pt-mime-git-XXXXXX";
static char repodir[300];

__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", repodir);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void write_file(const char *rel, const char *data, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", repodir, rel);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void write_lines(const char *rel, const char *prefix, int n)
{
	char buf[8192];
	size_t len = 0;
	int i;

	for (i = 1; i <= n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%s line %d\n", prefix, i);
	write_file(rel, buf, len);
}

static const char msg2[] =
	"acme: fix the ring accounting after a rename of the documentation and\n"
	"a mode change\n"
	"\n"
	"The ring counter was not reset when the device went down, so the\n"
	"next ifup used a stale index.\n"
	"\n"
	"Fixes: 0123456789ab (\"acme: add driver\")\n"
	"Cc: stable@vger.kernel.org # 6.1+\n"
	"Reviewed-by: Grace Hopper <grace@example.org>\n"
	"Signed-off-by: Ada Lovelace <ada@example.com>\n";

static int setup(void **state)
{
	static const char bin1[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\x01\x02";
	static const char bin2[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\x03\x04";
	char path[400];

	(void)state;
	assert_non_null(mkdtemp(tmpdir));
	snprintf(repodir, sizeof(repodir), "%s/repo", tmpdir);
	setenv("HOME", tmpdir, 1);
	setenv("XDG_CONFIG_HOME", tmpdir, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "Ada Lovelace", 1);
	setenv("GIT_AUTHOR_EMAIL", "Ada@Example.com", 1);
	setenv("GIT_COMMITTER_NAME", "Jakub Kicinski", 1);
	setenv("GIT_COMMITTER_EMAIL", "kuba@kernel.org", 1);
	snprintf(path, sizeof(path), "git init -q '%s'", repodir);
	assert_int_equal(system(path), 0);
	assert_int_equal(run("mkdir -p src docs"), 0);
	write_lines("src/acme.c", "int acme", 20);
	write_lines("docs/old-name.txt", "The acme documentation,", 30);
	write_lines("acme.sh", "echo", 3);
	write_file("logo.png", bin1, sizeof(bin1) - 1);
	assert_int_equal(run("git add . && GIT_AUTHOR_DATE='2026-10-01T10:00:00"
			     "+0200' GIT_COMMITTER_DATE='2026-10-01T11:00:00"
			     "+0200' git commit -q -m 'acme: add driver'"),
			 0);

	/* the commit under test: edit, rename + edit, mode, binary */
	write_lines("src/acme.c", "int acme", 18);
	write_file("src/acme.c.tmp", "int ring_reset;\n", 16);
	assert_int_equal(run("cat src/acme.c.tmp >> src/acme.c && "
			     "rm src/acme.c.tmp && "
			     "git mv docs/old-name.txt docs/new-name.txt && "
			     "echo 'One more line.' >> docs/new-name.txt && "
			     "chmod +x acme.sh"),
			 0);
	write_file("logo.png", bin2, sizeof(bin2) - 1);
	write_file("msg.txt", msg2, sizeof(msg2) - 1);
	assert_int_equal(
		run("git add -A . ':!msg.txt' && "
		    "GIT_AUTHOR_DATE='2026-11-02T09:00:01+0100' "
		    "GIT_COMMITTER_DATE='2026-11-03T18:30:00-0800' "
		    "git commit -q -F msg.txt && "
		    "git format-patch -q -1 --stdout HEAD > ../0001.mbox"),
		0);
	git_libgit2_init();
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	(void)state;
	git_libgit2_shutdown();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

static struct patch *commit_patch(const char *rev)
{
	git_repository *repo = NULL;
	git_object *obj = NULL;
	struct patch *p = NULL;

	assert_int_equal(git_repository_open(&repo, repodir), 0);
	assert_int_equal(git_revparse_single(&obj, repo, rev), 0);
	assert_int_equal(git_object_type(obj), GIT_OBJECT_COMMIT);
	assert_int_equal(patch_from_commit(&p, repo, (git_commit *)obj), 0);
	git_object_free(obj);
	git_repository_free(repo);
	return p;
}

static struct patch *mail_patch(const char *rel)
{
	struct buf b = BUF_INIT;
	struct patch *p = NULL;
	char path[400];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	assert_int_equal(pt_read_file(&b, path, PT_MAX_MAIL_SIZE), 0);
	assert_int_equal(patch_from_mail(&p, b.ptr, b.len), 0);
	buf_free(&b);
	return p;
}

static const struct patch_file *file_named(const struct patch *p,
					   const char *path)
{
	size_t i;

	for (i = 0; i < p->nfiles; i++)
		if (p->files[i].new_path && !strcmp(p->files[i].new_path, path))
			return &p->files[i];
	fail_msg("no file '%s'", path);
	return NULL;
}

static void test_commit_fields(void **state)
{
	struct patch *p = commit_patch("HEAD");
	const struct patch_file *f;

	(void)state;
	assert_int_equal(p->source, PATCH_FROM_GIT);
	assert_int_equal(strlen(p->commit_id), 40);
	assert_non_null(p->parent_id);
	assert_null(p->message_id);
	assert_null(p->notes);
	assert_string_equal(p->author.name, "Ada Lovelace");
	assert_string_equal(p->author.email, "ada@example.com");
	assert_string_equal(p->committer.name, "Jakub Kicinski");
	assert_string_equal(p->committer.email, "kuba@kernel.org");
	/* 2026-11-02T08:00:01Z and 2026-11-04T02:30:00Z */
	assert_int_equal(p->author_date, 1793606401);
	assert_int_equal(p->author_tz, 60);
	assert_int_equal(p->commit_date, 1793759400);
	assert_int_equal(p->commit_tz, -480);
	assert_string_equal(p->subject.raw,
			    "acme: fix the ring accounting after a rename of "
			    "the documentation and a mode change");
	assert_string_equal(p->changelog,
			    "The ring counter was not reset when the device "
			    "went down, so the\nnext ifup used a stale index.");
	assert_int_equal(p->ntrailers, 4);
	assert_int_equal(p->trailers[0].kind, TRAILER_FIXES);
	assert_string_equal(p->trailers[0].fixes_sha, "0123456789ab");
	assert_int_equal(p->trailers[1].is_stable, 1);
	assert_int_equal(p->trailers[2].kind, TRAILER_REVIEWED);
	assert_int_equal(p->trailers[3].kind, TRAILER_SIGNED_OFF);
	assert_true(patch_is_tagged_fix(p));

	assert_int_equal(p->nfiles, 4);
	f = file_named(p, "src/acme.c");
	assert_int_equal(f->status, PATCH_FILE_MODIFIED);
	assert_int_equal(f->added, 1);
	assert_int_equal(f->removed, 2);
	f = file_named(p, "docs/new-name.txt");
	assert_int_equal(f->status, PATCH_FILE_RENAMED);
	assert_string_equal(f->old_path, "docs/old-name.txt");
	assert_true(f->similarity >= 90);
	assert_int_equal(f->added, 1);
	assert_int_equal(f->removed, 0);
	f = file_named(p, "acme.sh");
	assert_int_equal(f->old_mode, 0100644);
	assert_int_equal(f->new_mode, 0100755);
	assert_int_equal(f->nhunks, 0);
	f = file_named(p, "logo.png");
	assert_true(f->binary);
	assert_int_equal(f->added + f->removed, 0);
	assert_int_equal(p->added, 2);
	assert_int_equal(p->removed, 2);
	patch_free(p);
}

static void test_root_commit(void **state)
{
	struct patch *p = commit_patch("HEAD~1");
	size_t i;

	(void)state;
	assert_null(p->parent_id);
	assert_string_equal(p->subject.raw, "acme: add driver");
	assert_string_equal(p->message, "");
	assert_int_equal(p->ntrailers, 0);
	assert_int_equal(p->nfiles, 4);
	for (i = 0; i < p->nfiles; i++) {
		assert_int_equal(p->files[i].status, PATCH_FILE_ADDED);
		assert_null(p->files[i].old_path);
	}
	assert_int_equal(p->added, 20 + 30 + 3);
	assert_int_equal(p->removed, 0);
	patch_free(p);
}

static void assert_same_files(const struct patch *a, const struct patch *b)
{
	size_t i, h, l;

	assert_int_equal(a->nfiles, b->nfiles);
	for (i = 0; i < a->nfiles; i++) {
		const struct patch_file *x = &a->files[i], *y = &b->files[i];

		assert_string_equal(x->new_path ? x->new_path : "-",
				    y->new_path ? y->new_path : "-");
		assert_string_equal(x->old_path ? x->old_path : "-",
				    y->old_path ? y->old_path : "-");
		assert_int_equal(x->status, y->status);
		assert_int_equal(x->old_mode, y->old_mode);
		assert_int_equal(x->new_mode, y->new_mode);
		assert_int_equal(x->binary, y->binary);
		assert_int_equal(x->added, y->added);
		assert_int_equal(x->removed, y->removed);
		assert_int_equal(x->nhunks, y->nhunks);
		for (h = 0; h < x->nhunks; h++) {
			const struct patch_hunk *u = &x->hunks[h];
			const struct patch_hunk *v = &y->hunks[h];

			assert_int_equal(u->old_start, v->old_start);
			assert_int_equal(u->new_lines, v->new_lines);
			assert_int_equal(u->nlines, v->nlines);
			for (l = 0; l < u->nlines; l++) {
				assert_int_equal(u->lines[l].kind,
						 v->lines[l].kind);
				assert_int_equal(u->lines[l].len,
						 v->lines[l].len);
				assert_memory_equal(u->lines[l].text,
						    v->lines[l].text,
						    u->lines[l].len);
			}
		}
	}
}

static void test_two_paths_agree(void **state)
{
	struct patch *c = commit_patch("HEAD");
	struct patch *m = mail_patch("0001.mbox");
	size_t i;

	(void)state;
	assert_int_equal(m->source, PATCH_FROM_MAIL);
	assert_null(m->message_id); /* format-patch without --thread */
	assert_string_equal(m->subject.raw,
			    "[PATCH] acme: fix the ring "
			    "accounting after a rename of the documentation "
			    "and a mode change");
	assert_string_equal(m->subject.clean, c->subject.raw);
	assert_string_equal(m->subject.clean, c->subject.clean);
	assert_string_equal(m->author.name, c->author.name);
	assert_string_equal(m->author.email, c->author.email);
	assert_int_equal(m->author_date, c->author_date);
	assert_int_equal(m->author_tz, c->author_tz);
	assert_string_equal(m->message, c->message);
	assert_string_equal(m->changelog, c->changelog);
	assert_int_equal(m->ntrailers, c->ntrailers);
	for (i = 0; i < m->ntrailers; i++) {
		assert_int_equal(m->trailers[i].kind, c->trailers[i].kind);
		assert_string_equal(m->trailers[i].key, c->trailers[i].key);
		assert_string_equal(m->trailers[i].value, c->trailers[i].value);
	}
	/* the mail has format-patch's diffstat as notes */
	assert_non_null(m->notes);
	assert_non_null(strstr(m->notes, "4 files changed"));
	assert_same_files(m, c);
	assert_int_equal(m->added, c->added);
	assert_int_equal(m->removed, c->removed);
	patch_free(c);
	patch_free(m);
}

static void test_latin1_commit(void **state)
{
	static const char msg[] = "acme: r\xe9"
				  "duire the ring\n\n"
				  "Caf\xe9 adapters need it.\n\n"
				  "Signed-off-by: Andr\xe9 Pirard "
				  "<andre@example.be>\n";
	struct patch *c, *m;

	(void)state;
	write_file("msg.txt", msg, sizeof(msg) - 1);
	assert_int_equal(run("echo x >> src/acme.c && git add src/acme.c && "
			     "GIT_AUTHOR_NAME=\"$(printf 'Andr\\351 Pirard')\" "
			     "git -c i18n.commitEncoding=ISO-8859-1 commit -q "
			     "-F msg.txt && git format-patch -q -1 --stdout "
			     "HEAD > ../0002.mbox"),
			 0);
	c = commit_patch("HEAD");
	m = mail_patch("0002.mbox");
	assert_string_equal(c->subject.raw, "acme: r\xc3\xa9"
					    "duire the ring");
	assert_string_equal(c->author.name, "Andr\xc3\xa9 Pirard");
	assert_string_equal(c->changelog, "Caf\xc3\xa9 adapters need it.");
	assert_string_equal(m->subject.clean, c->subject.raw);
	assert_string_equal(m->author.name, c->author.name);
	assert_string_equal(m->changelog, c->changelog);
	assert_string_equal(m->trailers[0].name, "Andr\xc3\xa9 Pirard");
	assert_same_files(m, c);
	patch_free(c);
	patch_free(m);
}

/*
 * A blob missing from the object database: the commit still reads, the
 * file is named in uncounted (as `mine` counts it) and the rest is there.
 */
static void test_missing_blob(void **state)
{
	struct patch *c;

	(void)state;
	write_lines("src/lost.c", "int lost", 4);
	assert_int_equal(run("echo 'int more;' >> src/acme.c && "
			     "git add src && git commit -q -m 'acme: more' && "
			     "b=$(git rev-parse HEAD:src/lost.c) && "
			     "rm .git/objects/$(echo $b | cut -c1-2)/"
			     "$(echo $b | cut -c3-) && "
			     "! git cat-file -e $b 2>/dev/null"),
			 0);
	c = commit_patch("HEAD");
	assert_int_equal(c->nuncounted, 1);
	assert_string_equal(c->uncounted[0], "src/lost.c");
	assert_int_equal(c->nfiles, 1);
	assert_int_equal(file_named(c, "src/acme.c")->added, 1);
	assert_int_equal(c->added, 1);
	patch_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commit_fields),
		cmocka_unit_test(test_root_commit),
		cmocka_unit_test(test_two_paths_agree),
		cmocka_unit_test(test_latin1_commit),
		cmocka_unit_test(test_missing_blob),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
