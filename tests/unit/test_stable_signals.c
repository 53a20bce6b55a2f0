/*
 * test_stable_signals.c - what marks an untagged commit as a backport
 * candidate, each case in a repository of its own built with the git
 * CLI: a series around a tagged fix, fix wording of the subject, a
 * changelog citing a commit the branch has; the build facts of a
 * commit's subject and paths; the prerequisites a tagged fix needs to
 * apply; and a fix of an untagged commit that keeps the build working,
 * kept and pending on it.  The range and flags of the ordinary cases are
 * test_stable.c's; the helpers, tests/lib/stablefx.c.
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

#include "scoring/stable/stable.h"
#include "stablefx.h"

/* Commit as author email at a committer time (seconds after 2024-01-01). */
static void commit_at(const char *email, long t, const char *msg)
{
	char date[64];

	snprintf(date, sizeof(date), "@%ld +0000", 1704067200L + t);
	setenv("GIT_COMMITTER_DATE", date, 1);
	setenv("GIT_AUTHOR_EMAIL", email, 1);
	sfx_commit("%s", msg);
	setenv("GIT_AUTHOR_EMAIL", "ann@example.org", 1);
	unsetenv("GIT_COMMITTER_DATE");
}

/* Set a line of file, commit it as email at time t, name it in out. */
static void line_change(char out[41], const char *file, int line,
			const char *text, const char *email, long t,
			const char *msg)
{
	sfx_set_line(file, line, text);
	commit_at(email, t, msg);
	sfx_rev(out, "HEAD");
}

/*
 * On top of HEAD, a commit whose 12-digit abbreviation is all digits
 * (one in about 280: a bounded search over its message), named in out.
 */
static void digits_commit(char out[41])
{
	size_t i;

	sfx_sh("t=$(git rev-parse 'HEAD^{tree}') p=$(git rev-parse HEAD) "
	       "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); "
	       "c=$(echo \"base: note $i\" | git commit-tree $t -p $p); "
	       "expr \"$c\" : '[0-9]\\{12\\}' >/dev/null && break; done; "
	       "git reset -q --hard $c");
	sfx_rev(out, "HEAD");
	for (i = 0; i < 12; i++)
		assert_true(out[i] >= '0' && out[i] <= '9');
}

/*
 * The untagged-backport signals: a series (same author and committer,
 * committed within STABLE_SERIES_GAP of each other) around a tagged fix,
 * another author's commit in between that is not of it, the fix wording
 * of the subject, and a changelog naming a commit the branch has (by an
 * abbreviation of 12 digits).
 */
static void test_signals(void **state)
{
	struct stable_opts o = { "v1..main", "stable", 0, 0, 1, { NULL, NULL } };
	char top[64], base[41], msg[512];
	char s1[41], s2[41], s3[41], d1[41], o1[41], o2[41], o3[41], c1[41];
	char c2[41], dg[41];
	struct stable_set *s;
	git_repository *repo;
	struct stable_commit *c;

	(void)state;
	memcpy(top, sfx_dir, sizeof(top));
	sfx_sh("mkdir sig");
	snprintf(sfx_dir, sizeof(sfx_dir), "%.48s/sig", top);
	sfx_sh("git init -q -b main . && git config commit.gpgsign false");
	sfx_sh("for f in a b c d; do seq 1 20 > $f.c; done");
	commit_at("ann@example.org", 0, "base: initial import\n");
	sfx_rev(base, "HEAD");
	digits_commit(dg);
	sfx_sh("git tag v1 && git branch stable v1");
	line_change(s1, "a.c", 2, "prepared", "ann@example.org", 1000,
		    "a: prepare the helper\n");
	line_change(d1, "d.c", 2, "knob", "bob@example.org", 1030,
		    "d: add a knob\n");
	snprintf(msg, sizeof(msg),
		 "a: repair the helper\n\nFixes: %.12s "
		 "(\"base: initial import\")\nCc: stable@dpdk.org\n",
		 base);
	line_change(s2, "a.c", 4, "fixed", "ann@example.org", 1060, msg);
	line_change(s3, "a.c", 6, "documented", "ann@example.org", 1300,
		    "a: document the helper\n");
	line_change(o1, "b.c", 2, "parsed", "ann@example.org", 5000,
		    "b: fix the parser\n");
	line_change(o2, "b.c", 4, "styled", "ann@example.org", 9000,
		    "b: fixup the style\n");
	line_change(o3, "b.c", 6, "typo", "ann@example.org", 13000,
		    "Fixed typo in the man page\n");
	snprintf(msg, sizeof(msg),
		 "c: handle the empty case\n\nThe "
		 "crash came with commit %.12s (\"base: note\").\n",
		 dg);
	line_change(c1, "c.c", 2, "handled", "ann@example.org", 17000, msg);
	line_change(c2, "c.c", 4, "tidied", "ann@example.org", 21000,
		    "c: tidy\n\nAs deadbeef12 did, "
		    "see v1.2-abc1234 and /p/0123abcd.\n");

	assert_int_equal(git_repository_open(&repo, sfx_dir), 0);
	assert_int_equal(stable_analyse(&s, repo, &o), 0);
	assert_int_equal(s->n, 9);

	/* the series of three around the tagged fix; Bob's is not of it */
	c = sfx_find(s, s1);
	assert_true(c->has_sibling);
	assert_int_equal(c->sibling, sfx_index_of(s, s2));
	assert_int_equal(c->series_len, 3);
	c = sfx_find(s, s3);
	assert_true(c->has_sibling);
	assert_int_equal(c->sibling, sfx_index_of(s, s2));
	assert_int_equal(c->series_len, 3);
	c = sfx_find(s, s2);
	assert_false(c->has_sibling);
	assert_int_equal(c->series_len, 3);
	assert_int_equal(stable_tier(c), 3);
	c = sfx_find(s, d1);
	assert_false(c->has_sibling);
	assert_int_equal(c->series_len, 1);
	/* an hour later: a series of its own */
	assert_false(sfx_find(s, o1)->has_sibling);
	assert_int_equal(sfx_find(s, o1)->series_len, 1);

	/* fix wording: a word of the subject, not "fixup"; the hint only
	   for an untagged candidate */
	assert_true(sfx_find(s, o1)->fix_subject);
	assert_false(sfx_find(s, o2)->fix_subject);
	assert_true(sfx_find(s, o3)->fix_subject);
	assert_false(sfx_find(s, s2)->fix_subject);
	assert_int_equal(stable_hint(sfx_find(s, o1)), 1);
	assert_int_equal(stable_hint(sfx_find(s, o3)), 1);
	assert_int_equal(stable_hint(sfx_find(s, o2)), 0);
	assert_int_equal(stable_hint(sfx_find(s, s1)), 0);
	assert_int_equal(stable_hint(sfx_find(s, s2)), 0);

	/* a named commit the branch has; ids that resolve to nothing or
	   sit in a version or a path are not read */
	c = sfx_find(s, c1);
	assert_string_equal(c->cites, dg);
	assert_true(c->cites_present);
	assert_false(c->has_fixes);
	assert_false(c->fix_subject);
	assert_int_equal(stable_hint(c), 1);
	c = sfx_find(s, c2);
	assert_string_equal(c->cites, "");
	assert_false(c->cites_present);
	assert_int_equal(stable_hint(c), 0);
	/* the Fixes: line is not a citation */
	assert_string_equal(sfx_find(s, s2)->cites, "");

	stable_set_free(s);
	git_repository_free(repo);
	memcpy(sfx_dir, top, sizeof(top));
}

/* Run cmd, commit the result with msg and name it in out. */
static void change(char out[41], const char *cmd, const char *msg)
{
	sfx_sh("%s", cmd);
	sfx_commit("%s", msg);
	sfx_rev(out, "HEAD");
}

/* A commit's build facts and stable_build() in one call. */
static void want_build(struct stable_set *s, const char *id, int ci, int comp,
		       int words, int files, int ranks)
{
	const struct stable_commit *c = sfx_find(s, id);

	assert_int_equal(c->build_ci, ci);
	assert_int_equal(c->build_comp, comp);
	assert_int_equal(c->build_words, words);
	assert_int_equal(c->build_files, files);
	assert_int_equal(stable_build(c), ranks);
}

/* A new repository NAME inside the test's; top keeps the test's dir. */
static void sub_repo(char top[64], const char *name)
{
	memcpy(top, sfx_dir, 64);
	sfx_sh("mkdir %s", name);
	snprintf(sfx_dir, sizeof(sfx_dir), "%.48s/%s", top, name);
	sfx_sh("git init -q -b main . && git config commit.gpgsign false");
}

/* A commit that fixes another, with its Fixes: line. */
static void commit_fix(char out[41], const char *target, const char *cmd,
		       const char *subject)
{
	sfx_sh("%s", cmd);
	sfx_commit("%s\n\nFixes: %.12s (\"...\")\n", subject, target);
	sfx_rev(out, "HEAD");
}

/* A kept fix of a range commit: pending, tier 2, depending on it. */
static void want_pending(struct stable_set *s, const char *id,
			 const char *target)
{
	const struct stable_commit *c = sfx_find(s, id);

	assert_int_equal(c->target, STABLE_TARGET_PENDING);
	assert_false(c->dropped);
	assert_true(stable_is_candidate(s, sfx_index_of(s, id)));
	assert_int_equal(stable_tier(c), 2);
	assert_int_equal(c->ndeps >= 1, 1);
	assert_int_equal(c->deps[0], sfx_index_of(s, target));
	assert_string_equal(c->needs, "");
}

/* A fix of a range commit, dropped; the commit itself a candidate. */
static void want_dropped(struct stable_set *s, const char *id,
			 const char *target)
{
	const struct stable_commit *c = sfx_find(s, id);

	assert_int_equal(c->target, STABLE_TARGET_ABSENT);
	assert_true(c->dropped);
	assert_string_equal(c->targets[0], target);
	assert_false(stable_is_candidate(s, sfx_index_of(s, id)));
	assert_true(stable_is_candidate(s, sfx_index_of(s, target)));
}

/*
 * The build facts of a subject and its paths (CI or packaging
 * component, build component, toolchain words, build files only), and
 * the prerequisites: an untagged commit without which a tagged fix
 * conflicts on the branch, one that does not help a fix that conflicts
 * anyway, and one that a fix applying cleanly does not need.
 */
static void test_build_prereqs(void **state)
{
	struct stable_opts o = { "v1..main", "stable", 0, 0, 1, { NULL, NULL } };
	char top[64], ci[41], bf[41], cm[41], deb[41], sus[41], mnt[41];
	char cpp[41], p1[41], f1[41], p2[41], f2[41], p3[41], f3[41];
	struct stable_set *s;
	git_repository *repo;
	const struct stable_commit *c;

	(void)state;
	sub_repo(top, "bld");
	sfx_sh("mkdir .ci debian suse drivers && for f in p q; do seq 1 20 > "
	       "$f.c; done && echo x > .ci/run.sh && echo x > meson.build && "
	       "echo x > debian/control && echo x > suse/pkg.spec && "
	       "echo x > drivers/foo.c && echo x > drivers/meson.build && "
	       "echo x > MAINTAINERS");
	sfx_commit("base: initial import\n");
	sfx_sh("git tag v1 && git branch stable v1");
	sfx_sh("git checkout -q stable");
	sfx_edit(NULL, "p.c", 3, "branch3", "p: the branch's own change\n");
	sfx_sh("git checkout -q main");

	change(ci, "echo y >> .ci/run.sh && echo y >> MAINTAINERS",
	       "ci: hook to the runner\n");
	change(bf, "echo y >> meson.build",
	       "build: fix compilation with gcc 14\n");
	change(cm, "echo y >> drivers/foo.c && echo y >> drivers/meson.build",
	       "net/foo: make compatible with libbar 2\n");
	change(deb, "echo y >> debian/control",
	       "debian: drop an old dependency\n");
	change(sus, "echo y >> suse/pkg.spec",
	       "suse: repair the spec\n\nCc: stable@example.org\n");
	change(mnt, "echo z >> MAINTAINERS", "maintainers: add a reviewer\n");
	change(cpp, "echo z >> drivers/foo.c", "eal: keep C++20 happy\n");

	change(p1, "sed -i 6s/.*/refactored6/ p.c", "p: refactor the helper\n");
	change(f1, "sed -i 6s/.*/fixed6/ p.c",
	       "p: repair the helper\n\nCc: stable@example.org\n");
	change(p2, "sed -i 12s/.*/renamed12/ p.c", "p: rename the counter\n");
	change(f2, "sed -i '12s/.*/fixed12/; 3s/.*/main3/' p.c",
	       "p: repair the counter\n\nCc: stable@example.org\n");
	change(p3, "sed -i 2s/.*/tidy2/ q.c", "q: tidy\n");
	change(f3, "sed -i 10s/.*/fixed10/ q.c",
	       "q: repair\n\nCc: stable@example.org\n");

	sfx_sh("git count-objects > .objects");
	assert_int_equal(git_repository_open(&repo, sfx_dir), 0);
	assert_int_equal(stable_analyse(&s, repo, &o), 0);
	assert_int_equal(s->n, 13);

	/*            commit  ci comp words files ranks */
	want_build(s, ci, 1, 1, 0, 1, 1); /* MAINTAINERS aside */
	want_build(s, bf, 0, 1, 1, 1, 1);
	want_build(s, cm, 0, 0, 1, 0, 1);
	want_build(s, deb, 1, 1, 0, 1, 1);
	want_build(s, sus, 1, 1, 0, 1, 0); /* tagged: no rank */
	want_build(s, mnt, 0, 0, 0, 0, 0);
	want_build(s, cpp, 0, 0, 1, 0, 1);
	want_build(s, p1, 0, 0, 0, 0, 0);

	/* before stable_prereqs() nothing is marked */
	assert_false(sfx_find(s, p1)->prereq);
	assert_int_equal(stable_prereqs(s, NULL), 0);
	c = sfx_find(s, f1);
	assert_int_equal(c->ndeps, 1);
	assert_int_equal(c->deps[0], sfx_index_of(s, p1));
	c = sfx_find(s, p1);
	assert_true(c->prereq);
	assert_int_equal(c->prereq_of, sfx_index_of(s, f1));
	/* f2 conflicts on line 3 with or without p2 */
	assert_int_equal(sfx_find(s, f2)->ndeps, 1);
	assert_int_equal(sfx_find(s, f2)->deps[0], sfx_index_of(s, p2));
	assert_false(sfx_find(s, p2)->prereq);
	/* f3 applies as it is */
	assert_false(sfx_find(s, p3)->prereq);
	assert_int_equal(sfx_find(s, f3)->ndeps, 0);
	/* a tagged commit is never one */
	assert_false(sfx_find(s, f1)->prereq);
	/* nothing was written: no new object, the work tree untouched */
	sfx_sh("git count-objects | cmp - .objects && git diff --quiet HEAD");

	stable_set_free(s);
	git_repository_free(repo);
	memcpy(sfx_dir, top, sizeof(top));
}

/*
 * A fix of an untagged commit of the range is kept, depending on it, when
 * that commit keeps the build working (a CI component, toolchain words):
 * who takes it needs the fix too.  A fix of any other untagged commit of
 * the range, fix wording or not, is still a fix for code the branch
 * never had.
 */
static void test_pending_build(void **state)
{
	struct stable_opts o = { "v1..main", "stable", 0, 0, 1, { NULL, NULL } };
	char top[64], ci[41], cf[41], cf2[41], wd[41], wf[41], fs[41];
	char fsf[41], kn[41], knf[41];
	struct stable_set *s;
	git_repository *repo;

	(void)state;
	sub_repo(top, "pend");
	sfx_sh("mkdir .ci && echo x > .ci/run.sh && for f in p q r; do seq 1 "
	       "20 > $f.c; done");
	sfx_commit("base: initial import\n");
	sfx_sh("git tag v1 && git branch stable v1");

	change(ci, "echo y >> .ci/run.sh", "ci: hook to the runner\n");
	commit_fix(cf, ci, "echo z >> .ci/run.sh", "ci: fix the runner hook");
	commit_fix(cf2, cf, "echo w >> .ci/run.sh", "ci: retry the hook");
	change(wd, "sed -i 4s/.*/quiet4/ p.c", "p: silence a gcc warning\n");
	commit_fix(wf, wd, "sed -i 5s/.*/quiet5/ p.c", "p: the other one");
	change(fs, "sed -i 6s/.*/better6/ q.c", "q: fix the slow path\n");
	commit_fix(fsf, fs, "sed -i 7s/.*/better7/ q.c", "q: tune it");
	change(kn, "sed -i 8s/.*/new8/ r.c", "r: add a knob\n");
	commit_fix(knf, kn, "sed -i 9s/.*/new9/ r.c", "r: tune the knob");

	assert_int_equal(git_repository_open(&repo, sfx_dir), 0);
	assert_int_equal(stable_analyse(&s, repo, &o), 0);
	assert_int_equal(s->n, 9);
	/* each fix of a build-keeping commit: pending on it, tier 2 */
	want_pending(s, cf, ci);  /* a CI component */
	want_pending(s, cf2, cf); /* the fix of that fix (tagged) */
	want_pending(s, wf, wd);  /* toolchain words */
	/* fix wording, and neither: the fix is dropped, its target kept */
	want_dropped(s, fsf, fs);
	want_dropped(s, knf, kn);
	stable_set_free(s);
	git_repository_free(repo);
	memcpy(sfx_dir, top, sizeof(top));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_build_prereqs),
		cmocka_unit_test(test_pending_build),
	};

	return cmocka_run_group_tests(tests, sfx_setup, sfx_teardown);
}
