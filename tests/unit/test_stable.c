/*
 * test_stable.c - stable backport candidates on a repository built with
 * the git CLI: a main line and a stable branch with cherry-picks (-x),
 * "[ Upstream commit X ]", "commit X upstream." and "Upstream commit X"
 * lines, a patch-id-only backport, a fix whose target the branch never
 * had, a candidate that conflicts, two candidates touching the same
 * lines, a fix of a backported commit, DPDK's tag paragraph above the
 * sign-offs, a Fixes: that names no commit, and reverts of a commit the
 * branch has and of one it never had.  The exact candidate list and the
 * flags of every commit are asserted, then the blame-based Fixes:
 * suggestion and the marker parser.  The signals of untagged
 * backports are test_stable_signals.c's; the helpers that build the
 * repositories, tests/lib/stablefx.c.
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

#include "scoring/patch/patch.h"
#include "scoring/stable/stable.h"
#include "stablefx.h"

struct names {
	char c1[41], c2[41], m1[41], m2[41], m3[41], m4[41], m5[41], m6[41];
	char m7[41], m8[41], m9[41], m10[41], m11[41], m12[41], m13[41];
	char m14[41], m15[41], m16[41], m17[41];
};

static struct names N;

static void build_repo(void)
{
	sfx_sh("git init -q -b main . && git config commit.gpgsign false");
	sfx_sh("for f in a b c d g; do seq 1 20 > $f.c; done");
	sfx_commit("base: initial import\n");
	sfx_edit(N.c1, "a.c", 10, "int check(void) { return x < 10; }",
		 "a: add the bound check\n");
	sfx_edit(N.c2, "g.c", 20, "knob twenty", "g: add the knob\n");
	sfx_sh("git tag v1");
	sfx_sh("git branch stable v1");

	/* the stable branch's own change to c.c line 15 */
	sfx_sh("git checkout -q stable");
	sfx_edit(NULL, "c.c", 15, "stable only", "c: stable-only tweak\n");
	sfx_sh("git checkout -q main");

	sfx_edit(N.m1, "a.c", 3, "fixed three",
		 "a: fix off-by-one in the loop\n\nSigned-off-by: Ann "
		 "<ann@example.org>\n");
	sfx_edit(N.m2, "b.c", 5, "freed five",
		 "b: fix a leak on the error path\n");
	sfx_edit(N.m3, "c.c", 5, "checked five", "c: fix a crash on close\n");
	sfx_edit(N.m4, "d.c", 7, "bounded seven", "d: fix the loop bound\n");
	sfx_sh("printf 'int e(void)\\n{\\n\\treturn 0;\\n}\\n' > e.c");
	sfx_commit("e: add a new feature\n");
	sfx_rev(N.m5, "HEAD");
	sfx_sh("sed -i 's/return 0/return p ? 0 : -1/' e.c");
	sfx_commit("e: fix a NULL dereference\n\nFixes: %.12s (\"e: add a new "
		   "feature\")\nSigned-off-by: Ann <ann@example.org>\n",
		   N.m5);
	sfx_rev(N.m6, "HEAD");
	sfx_edit(N.m7, "a.c", 10, "int check(void) { return x <= 9; }",
		 "a: fix the bound check\n\nFixes: %.12s (\"a: add the bound "
		 "check\")\nCc: stable@vger.kernel.org\nSigned-off-by: Ann "
		 "<ann@example.org>\n",
		 N.c1);
	sfx_edit(N.m8, "a.c", 10,
		 "int check(void) { return x >= 0 \\&\\& x <= 9; }",
		 "a: also reject negative values\n");
	sfx_edit(N.m9, "c.c", 15, "main fifteen",
		 "c: fix the timeout\n\nCc: stable@dpdk.org\n");
	sfx_edit(N.m10, "b.c", 18, "ordered eighteen",
		 "b: fix memory ordering\n");
	sfx_edit(N.m11, "d.c", 15, "fifteen fixed",
		 "d: fix the fix of the bound check\n\nFixes: %.12s (\"a: fix "
		 "the bound check\")\n",
		 N.m7);
	/* fixes a commit the branch took as a patch-id-only backport */
	sfx_edit(N.m12, "g.c", 2, "two fixed",
		 "g: fix the loop bound fix\n\nFixes: %.12s (\"d: fix the loop "
		 "bound\")\n",
		 N.m4);
	/* DPDK style: the tags in a paragraph above the sign-offs */
	sfx_edit(N.m13, "g.c", 8, "eight fixed",
		 "g: fix the stats reset\n\nThe counters were not cleared.\n\n"
		 "Fixes: %.12s (\"a: add the bound check\")\nCc: "
		 "stable@dpdk.org\n\nSigned-off-by: Ann <ann@example.org>\n"
		 "Acked-by: Bob <bob@example.org>\n",
		 N.c1);
	/* a Fixes: naming no commit of the repository */
	sfx_edit(N.m14, "g.c", 14, "fourteen fixed",
		 "g: fix a race\n\nFixes: deadbeef0123 (\"an old commit\")\n");
	sfx_edit(N.m15, "g.c", 17, "debug seventeen", "g: add a debug knob\n");
	sfx_sh("git revert --no-edit %s", N.m15);
	sfx_rev(N.m16, "HEAD");
	sfx_sh("git revert --no-edit %s", N.c2);
	sfx_rev(N.m17, "HEAD");

	/* the backports */
	sfx_sh("git checkout -q stable");
	sfx_sh("git cherry-pick -x %s", N.m1);
	sfx_edit(NULL, "b.c", 5, "freed five",
		 "b: fix a leak on the error path\n\n[ upstream commit %s ]\n",
		 N.m2);
	sfx_edit(NULL, "c.c", 5, "checked five",
		 "c: fix a crash on close\n\ncommit %s upstream.\n", N.m3);
	sfx_sh("git cherry-pick %s && git commit -q --amend -m 'd: loop bound "
	       "(backport)'",
	       N.m4);
	sfx_edit(NULL, "b.c", 18, "ordered eighteen",
		 "b: fix memory ordering\n\nUpstream commit %.12s.\n", N.m10);
	sfx_sh("git checkout -q main");
}

/* What every commit of the range must look like. */
struct want {
	const char *id;
	enum stable_match match;
	unsigned cc, fixes, revert, dropped;
	enum stable_target target;
	enum stable_apply apply;
	size_t ndeps;
};

static void check_all(struct stable_set *s)
{
#define W(id, m, cc, fx, rv, dr, t, a, nd)                                 \
	{                                                                  \
		N.id, STABLE_MATCH_##m, cc, fx, rv, dr, STABLE_TARGET_##t, \
			STABLE_APPLY_##a, nd                               \
	}
	const struct want want[] = {
		W(m1, CHERRY, 0, 0, 0, 0, NONE, UNCHECKED, 0),
		W(m2, UPSTREAM, 0, 0, 0, 0, NONE, UNCHECKED, 0),
		W(m3, COMMIT_UP, 0, 0, 0, 0, NONE, UNCHECKED, 0),
		W(m4, PATCHID, 0, 0, 0, 0, NONE, UNCHECKED, 0),
		W(m5, NONE, 0, 0, 0, 0, NONE, CLEAN, 0),
		W(m6, NONE, 0, 1, 0, 1, ABSENT, UNCHECKED, 0),
		W(m7, NONE, 1, 1, 0, 0, PRESENT, CLEAN, 0),
		W(m8, NONE, 0, 0, 0, 0, NONE, CONFLICT, 1),
		W(m9, NONE, 1, 0, 0, 0, NONE, CONFLICT, 0),
		W(m10, UPSTREAM, 0, 0, 0, 0, NONE, UNCHECKED, 0),
		W(m11, NONE, 0, 1, 0, 0, PENDING, CLEAN, 1),
		W(m12, NONE, 0, 1, 0, 0, PRESENT, CLEAN, 0),
		W(m13, NONE, 1, 1, 0, 0, PRESENT, CLEAN, 0),
		W(m14, NONE, 0, 1, 0, 0, UNKNOWN, CLEAN, 0),
		W(m15, NONE, 0, 0, 0, 0, NONE, CLEAN, 0),
		W(m16, NONE, 0, 0, 1, 1, ABSENT, UNCHECKED, 0),
		W(m17, NONE, 0, 0, 1, 0, PRESENT, CLEAN, 0),
	};
#undef W
	size_t i;

	assert_int_equal(s->n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < s->n; i++) {
		const struct stable_commit *c = &s->c[i];

		/* oldest first: the order of the table */
		assert_string_equal(c->id, want[i].id);
		assert_int_equal(c->match, want[i].match);
		assert_int_equal(c->cc_stable, want[i].cc);
		assert_int_equal(c->has_fixes, want[i].fixes);
		assert_int_equal(c->is_revert, want[i].revert);
		assert_int_equal(c->dropped, want[i].dropped);
		assert_int_equal(c->target, want[i].target);
		assert_int_equal(c->apply, want[i].apply);
		assert_int_equal(c->ndeps, want[i].ndeps);
		assert_int_equal(stable_is_candidate(s, i),
				 want[i].match == STABLE_MATCH_NONE &&
					 !want[i].dropped);
		assert_int_equal(c->backport[0] != '\0',
				 want[i].match != STABLE_MATCH_NONE);
	}
}

static void test_range(void **state)
{
	struct stable_opts o = { "v1..main", "stable", 1, 0, 1, { NULL, NULL } };
	struct stable_set *s, *t;
	git_repository *repo;
	struct stable_commit *c;
	const char *cands[10];
	size_t i, k, n = 0;

	(void)state;
	build_repo();
	assert_int_equal(git_repository_open(&repo, sfx_dir), 0);
	assert_int_equal(stable_analyse(&s, repo, &o), 0);
	assert_int_equal(s->n, 17);
	assert_int_equal(s->branch_commits, 6);
	assert_int_equal(s->branch_marked, 4);
	assert_int_equal(s->nmarkers, 4);
	check_all(s);

	/* in the branch, each by its own kind of evidence */
	assert_int_equal(sfx_find(s, N.m1)->match, STABLE_MATCH_CHERRY);
	assert_int_equal(sfx_find(s, N.m2)->match, STABLE_MATCH_UPSTREAM);
	assert_int_equal(sfx_find(s, N.m3)->match, STABLE_MATCH_COMMIT_UP);
	assert_int_equal(sfx_find(s, N.m4)->match, STABLE_MATCH_PATCHID);
	assert_int_equal(sfx_find(s, N.m10)->match, STABLE_MATCH_UPSTREAM);
	assert_int_not_equal(sfx_find(s, N.m4)->backport[0], '\0');

	/* the fix for code the branch never had is dropped */
	c = sfx_find(s, N.m6);
	assert_true(c->has_fixes);
	assert_int_equal(c->target, STABLE_TARGET_ABSENT);
	assert_true(c->dropped);
	assert_int_equal(c->ntargets, 1);
	assert_string_equal(c->targets[0], N.m5);

	/* the exact candidate list, oldest first */
	for (i = 0; i < s->n; i++)
		if (stable_is_candidate(s, i)) {
			assert_true(n < 10);
			cands[n++] = s->c[i].id;
		}
	assert_int_equal(n, 10);
	assert_string_equal(cands[0], N.m5);
	assert_string_equal(cands[1], N.m7);
	assert_string_equal(cands[2], N.m8);
	assert_string_equal(cands[3], N.m9);
	assert_string_equal(cands[4], N.m11);
	assert_string_equal(cands[5], N.m12);
	assert_string_equal(cands[6], N.m13);
	assert_string_equal(cands[7], N.m14);
	assert_string_equal(cands[8], N.m15);
	assert_string_equal(cands[9], N.m17);

	/* applies-to: the patch-id backport counts as present */
	c = sfx_find(s, N.m12);
	assert_int_equal(c->ntargets, 1);
	assert_string_equal(c->targets[0], N.m4);
	/* the tag paragraph above the sign-offs is read */
	assert_string_equal(sfx_find(s, N.m13)->targets[0], N.c1);
	/* an id that resolves to nothing: kept, target unknown */
	assert_int_equal(sfx_find(s, N.m14)->ntargets, 0);
	/* reverts: of a commit the branch never had (dropped), of one it
	   has (kept) */
	assert_string_equal(sfx_find(s, N.m16)->targets[0], N.m15);
	assert_string_equal(sfx_find(s, N.m17)->targets[0], N.c2);

	/* the tiers of the ranking: Cc: stable, Fixes: of code the branch
	   has (or of a tagged candidate), other Fixes:, untagged */
	assert_int_equal(stable_tier(sfx_find(s, N.m7)), 3);
	assert_int_equal(stable_tier(sfx_find(s, N.m9)), 3);
	assert_int_equal(stable_tier(sfx_find(s, N.m13)), 3);
	assert_int_equal(stable_tier(sfx_find(s, N.m11)), 2);
	assert_int_equal(stable_tier(sfx_find(s, N.m12)), 2);
	assert_int_equal(stable_tier(sfx_find(s, N.m14)), 1);
	assert_int_equal(stable_tier(sfx_find(s, N.m6)), 1);
	assert_int_equal(stable_tier(sfx_find(s, N.m5)), 0);
	assert_int_equal(stable_tier(sfx_find(s, N.m17)), 0);

	c = sfx_find(s, N.m5);
	assert_false(c->cc_stable || c->has_fixes);
	assert_int_equal(c->target, STABLE_TARGET_NONE);
	assert_int_equal(c->apply, STABLE_APPLY_CLEAN);
	assert_int_equal(c->ndeps, 0);

	c = sfx_find(s, N.m7);
	assert_true(c->cc_stable && c->has_fixes);
	assert_int_equal(c->target, STABLE_TARGET_PRESENT);
	assert_string_equal(c->targets[0], N.c1);
	assert_int_equal(c->apply, STABLE_APPLY_CLEAN);
	assert_int_equal(c->ndeps, 0);

	/* touches the line m7 changed: depends on it, conflicts alone */
	c = sfx_find(s, N.m8);
	assert_false(c->cc_stable || c->has_fixes);
	assert_int_equal(c->ndeps, 1);
	assert_int_equal(c->deps[0], sfx_index_of(s, N.m7));
	assert_int_equal(c->apply, STABLE_APPLY_CONFLICT);
	assert_int_equal(c->nfiles, 1);
	assert_int_equal(c->added, 1);
	assert_int_equal(c->removed, 1);

	/* Cc: stable at any domain; conflicts with the stable-only change */
	c = sfx_find(s, N.m9);
	assert_true(c->cc_stable);
	assert_false(c->has_fixes);
	assert_int_equal(c->apply, STABLE_APPLY_CONFLICT);
	assert_int_equal(c->ndeps, 0);

	/* its target is not in the branch but is a tagged candidate: kept,
	   and it depends on it */
	c = sfx_find(s, N.m11);
	assert_int_equal(c->target, STABLE_TARGET_PENDING);
	assert_false(c->dropped);
	assert_int_equal(c->ndeps, 1);
	assert_int_equal(c->deps[0], sfx_index_of(s, N.m7));
	assert_int_equal(c->apply, STABLE_APPLY_CLEAN);

	assert_string_equal(stable_match_name(STABLE_MATCH_PATCHID),
			    "patch-id");

	/* three diffing threads: the same hunks, the deps in the same order */
	o.jobs = 3;
	assert_int_equal(stable_analyse(&t, repo, &o), 0);
	assert_int_equal(t->n, s->n);
	for (i = 0; i < s->n; i++) {
		assert_int_equal(t->c[i].added, s->c[i].added);
		assert_int_equal(t->c[i].removed, s->c[i].removed);
		assert_int_equal(t->c[i].ndeps, s->c[i].ndeps);
		for (k = 0; k < s->c[i].ndeps; k++)
			assert_int_equal(t->c[i].deps[k], s->c[i].deps[k]);
	}
	stable_set_free(t);
	o.jobs = 1;
	stable_set_free(s);

	/* the range starts after m7 (Cc: stable, not in the branch yet):
	   m11, its fix, is kept and needs it; m6, the fix of the untagged
	   m5 before its range, is still dropped */
	{
		char r7[100];

		snprintf(r7, sizeof(r7), "%s..main", N.m7);
		o.range = r7;
		assert_int_equal(stable_analyse(&t, repo, &o), 0);
	}
	assert_int_equal(t->n, 10);
	c = sfx_find(t, N.m11);
	assert_int_equal(c->target, STABLE_TARGET_PENDING);
	assert_false(c->dropped);
	assert_string_equal(c->needs, N.m7);
	assert_int_equal(c->ndeps, 0);
	assert_true(stable_is_candidate(t, sfx_index_of(t, N.m11)));
	assert_int_equal(stable_tier(c), 2);
	for (i = 0; i < t->n; i++)
		if (&t->c[i] != c)
			assert_string_equal(t->c[i].needs, "");
	stable_set_free(t);
	{
		char r5[100];

		snprintf(r5, sizeof(r5), "%s..main", N.m5);
		o.range = r5;
		assert_int_equal(stable_analyse(&t, repo, &o), 0);
	}
	c = sfx_find(t, N.m6);
	assert_int_equal(c->target, STABLE_TARGET_ABSENT);
	assert_true(c->dropped);
	assert_string_equal(c->needs, "");
	/* m7 is in this range: m11 depends on it as before */
	c = sfx_find(t, N.m11);
	assert_int_equal(c->target, STABLE_TARGET_PENDING);
	assert_string_equal(c->needs, "");
	assert_int_equal(c->deps[0], sfx_index_of(t, N.m7));
	stable_set_free(t);
	o.range = "v1..main";

	/* a range that is already all in the branch has no candidate */
	o.range = "v1";
	assert_int_equal(stable_analyse(&s, repo, &o), 0);
	assert_int_equal(s->n, 3);
	for (i = 0; i < s->n; i++) {
		assert_int_equal(s->c[i].match, STABLE_MATCH_ANCESTOR);
		assert_false(stable_is_candidate(s, i));
	}
	stable_set_free(s);

	o.branch = "no-such-branch";
	assert_int_not_equal(stable_analyse(&s, repo, &o), 0);
	assert_null(s);
	assert_non_null(strstr(pt_error_last(), "'no-such-branch'"));
	git_repository_free(repo);
}

static void test_suggest_fixes(void **state)
{
	static const char diff[] =
		"diff --git a/a.c b/a.c\n"
		"--- a/a.c\n"
		"+++ b/a.c\n"
		"@@ -9,3 +9,3 @@\n"
		" 9\n"
		"-int check(void) { return x >= 0 && x <= 9; }\n"
		"+int check(void) { return x >= 0 && x < 10; }\n"
		" 11\n";
	static const char ctx_only[] = "diff --git a/b.c b/b.c\n"
				       "--- a/b.c\n"
				       "+++ b/b.c\n"
				       "@@ -4,2 +4,3 @@\n"
				       " 4\n"
				       "+int guard;\n"
				       " freed five\n";
	git_repository *repo;
	struct patch *p;
	static const char missing[] = "diff --git a/zz.c b/zz.c\n"
				      "--- a/zz.c\n+++ b/zz.c\n"
				      "@@ -1 +1 @@\n-x\n+y\n";
	char *line = NULL, expect[128], base[41];

	(void)state;
	assert_int_equal(git_repository_open(&repo, sfx_dir), 0);
	assert_int_equal(patch_new(&p), 0);
	assert_int_equal(patch_set_diff(p, diff, sizeof(diff) - 1), 0);
	assert_int_equal(stable_suggest_fixes(&line, repo, p, "main"), 0);
	snprintf(expect, sizeof(expect),
		 "Fixes: %.12s (\"a: also reject negative values\")", N.m8);
	assert_string_equal(line, expect);
	free(line);
	patch_free(p);

	/* no removed line: the hunk's context is blamed */
	assert_int_equal(patch_new(&p), 0);
	assert_int_equal(patch_set_diff(p, ctx_only, sizeof(ctx_only) - 1), 0);
	assert_int_equal(stable_suggest_fixes(&line, repo, p, "main"), 0);
	/* lines 4 ("4", the import) and 5 ("freed five", m2) tie: the
	   first seen wins */
	sfx_rev(base, "v1~2");
	snprintf(expect, sizeof(expect),
		 "Fixes: %.12s (\"base: initial import\")", base);
	assert_string_equal(line, expect);
	free(line);
	patch_free(p);

	/* a file the tree does not have: nothing to blame */
	assert_int_equal(patch_new(&p), 0);
	assert_int_equal(patch_set_diff(p, missing, sizeof(missing) - 1), 0);
	assert_int_equal(stable_suggest_fixes(&line, repo, p, "main"),
			 PT_ENOTFOUND);
	assert_null(line);
	patch_free(p);
	git_repository_free(repo);
}

static void test_markers(void **state)
{
	static const struct {
		const char *msg;
		enum stable_match kind;
		const char *hex;
	} cases[] = {
		{ "x\n\n(cherry picked from commit 0123456789abcdef0123456789"
		  "abcdef01234567)\n",
		  STABLE_MATCH_CHERRY,
		  "0123456789abcdef0123456789abcdef01234567" },
		{ "x\n\n[ Upstream commit abcdef012345 ]\n",
		  STABLE_MATCH_UPSTREAM, "abcdef012345" },
		{ "x\n\n[upstream commit ABCDEF0]\n", STABLE_MATCH_UPSTREAM,
		  "ABCDEF0" },
		{ "commit 0123456789abcdef0123456789abcdef01234567 upstream.\n",
		  STABLE_MATCH_COMMIT_UP,
		  "0123456789abcdef0123456789abcdef01234567" },
		{ "x\n\nUpstream commit: 1234567abc\n", STABLE_MATCH_UPSTREAM,
		  "1234567abc" },
		{ "commit 0123456 is broken\n", STABLE_MATCH_NONE, "" },
		{ "x\n\n[ Upstream commit xyz ]\n", STABLE_MATCH_NONE, "" },
		{ "x\n\nThe upstream commit 1234567 fixed this\n",
		  STABLE_MATCH_NONE, "" },
	};
	enum stable_match kind;
	char hex[41];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int found = stable_find_marker(hex, &kind, cases[i].msg,
					       strlen(cases[i].msg));

		assert_int_equal(found, cases[i].kind != STABLE_MATCH_NONE);
		if (found) {
			assert_int_equal(kind, cases[i].kind);
			assert_string_equal(hex, cases[i].hex);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_suggest_fixes),
		cmocka_unit_test(test_markers),
	};

	return cmocka_run_group_tests(tests, sfx_setup, sfx_teardown);
}
