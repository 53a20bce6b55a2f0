/*
 * test_treediff.c - the changed paths of a commit by tree comparison, and
 * treediff_diff() giving the same deltas as git_diff_tree_to_tree() on a
 * repository built with the git CLI: edits deep in a directory, added
 * and deleted files, a mode change, a file replaced by a directory, a
 * root commit and an empty commit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/treediff.h"

static char dir[64];
static git_repository *repo;

static void sh(const char *cmd)
{
	char full[1024];

	snprintf(full, sizeof(full), "cd '%s' && (%s) >/dev/null 2>&1", dir,
		 cmd);
	assert_int_equal(system(full), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s", "/tmp/pt-treediff-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	setenv("GIT_AUTHOR_NAME", "A", 1);
	setenv("GIT_AUTHOR_EMAIL", "a@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "A", 1);
	setenv("GIT_COMMITTER_EMAIL", "a@example.org", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("HOME", dir, 1);
	git_libgit2_init();
	sh("git init -q -b main . && mkdir -p a/b/c d && seq 1 9 > a/b/c/f && "
	   "echo x > a/g && echo y > d/h && echo z > top && "
	   "git add -A && git commit -qm root && git tag root");
	sh("seq 2 9 > a/b/c/f && rm d/h && echo n > a/b/new && chmod +x top "
	   "&& git add -A && git commit -qm edits && git tag edits");
	sh("git rm -q top && mkdir top && echo in > top/file && git add -A && "
	   "git commit -qm swap && git tag swap");
	sh("git commit -q --allow-empty -m empty && git tag empty");
	return git_repository_open(&repo, dir);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	git_repository_free(repo);
	git_libgit2_shutdown();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static git_commit *commit(const char *rev)
{
	git_object *o;

	assert_int_equal(git_revparse_single(&o, repo, rev), 0);
	return (git_commit *)o;
}

/* treediff_commit's paths joined by spaces. */
static void paths(char *out, size_t len, const char *rev)
{
	struct treediff d;
	git_commit *c = commit(rev);
	size_t i, k;

	assert_int_equal(treediff_commit(&d, repo, c), 0);
	out[0] = '\0';
	for (i = 0; i < d.n; i++) {
		k = strlen(out);
		snprintf(out + k, len - k, "%s%s", i ? " " : "", d.f[i].path);
	}
	treediff_clear(&d);
	git_commit_free(c);
}

static void test_paths(void **state)
{
	char buf[256];

	(void)state;
	paths(buf, sizeof(buf), "root");
	assert_string_equal(buf, "a/b/c/f a/g d/h top");
	paths(buf, sizeof(buf), "edits");
	assert_string_equal(buf, "a/b/c/f a/b/new d/h top");
	paths(buf, sizeof(buf), "swap");
	assert_string_equal(buf, "top top/file");
	paths(buf, sizeof(buf), "empty");
	assert_string_equal(buf, "");
}

static void test_sides(void **state)
{
	struct treediff d;
	git_commit *c = commit("edits");

	(void)state;
	assert_int_equal(treediff_commit(&d, repo, c), 0);
	assert_int_equal(d.n, 4);
	assert_true(!git_oid_is_zero(&d.f[0].old) &&
		    !git_oid_is_zero(&d.f[0].new));
	assert_true(git_oid_is_zero(&d.f[1].old)); /* added */
	assert_int_equal(d.f[1].old_mode, 0);
	assert_true(git_oid_is_zero(&d.f[2].new)); /* deleted */
	assert_int_equal(d.f[3].old_mode, GIT_FILEMODE_BLOB);
	assert_int_equal(d.f[3].new_mode, GIT_FILEMODE_BLOB_EXECUTABLE);
	treediff_clear(&d);
	treediff_clear(&d); /* cleared twice is fine */
	git_commit_free(c);
}

/* Same deltas, in the same order, as libgit2's full diff. */
static void same_as_libgit2(const char *rev)
{
	git_commit *c = commit(rev), *p = NULL;
	git_tree *old = NULL, *new = NULL;
	git_diff *a, *b;
	size_t i;

	if (git_commit_parentcount(c))
		assert_int_equal(git_commit_parent(&p, c, 0), 0);
	if (p)
		assert_int_equal(git_commit_tree(&old, p), 0);
	assert_int_equal(git_commit_tree(&new, c), 0);
	assert_int_equal(git_diff_tree_to_tree(&a, repo, old, new, NULL), 0);
	assert_int_equal(treediff_diff(&b, repo, old, new, NULL), 0);
	assert_int_equal(git_diff_num_deltas(a), git_diff_num_deltas(b));
	for (i = 0; i < git_diff_num_deltas(a); i++) {
		const git_diff_delta *x = git_diff_get_delta(a, i);
		const git_diff_delta *y = git_diff_get_delta(b, i);

		assert_string_equal(x->new_file.path, y->new_file.path);
		assert_int_equal(x->status, y->status);
		assert_true(git_oid_equal(&x->new_file.id, &y->new_file.id));
	}
	git_diff_free(a);
	git_diff_free(b);
	git_tree_free(old);
	git_tree_free(new);
	git_commit_free(p);
	git_commit_free(c);
}

static void test_diff(void **state)
{
	(void)state;
	same_as_libgit2("root");
	same_as_libgit2("edits");
	same_as_libgit2("swap");
	same_as_libgit2("empty");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_sides),
		cmocka_unit_test(test_diff),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
