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
 * suggestion and the marker parser.
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

static char dir[64];

static void sh(const char *fmt, ...)
{
	char cmd[2048], full[2300];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "cd '%s' && (%s) >/dev/null 2>&1", dir,
		 cmd);
	rc = system(full);
	if (rc)
		fprintf(stderr, "failed: %s\n", cmd);
	assert_int_equal(rc, 0);
}

static void rev(char out[41], const char *name)
{
	char cmd[256];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "git -C '%s' rev-parse '%s'", dir, name);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, 41, f));
	pclose(f);
	assert_int_equal(strlen(out), 40);
}

static void vcommit(const char *fmt, va_list ap)
{
	char msg[1024], path[128];
	FILE *f;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(path, sizeof(path), "%s/.msg", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(msg, f);
	fclose(f);
	sh("git add -A . ':!.msg' && git commit -q -F .msg");
}

/* Commit all changes with a message given as printf arguments. */
static void commit(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcommit(fmt, ap);
	va_end(ap);
}

static void set_line(const char *file, int line, const char *text)
{
	sh("sed -i '%ds/.*/%s/' %s", line, text, file);
}

/* Set file's line to text, commit (printf message), its id in out if any. */
static void edit(char out[41], const char *file, int line, const char *text,
		 const char *fmt, ...)
{
	va_list ap;

	set_line(file, line, text);
	va_start(ap, fmt);
	vcommit(fmt, ap);
	va_end(ap);
	if (out)
		rev(out, "HEAD");
}

struct names {
	char c1[41], c2[41], m1[41], m2[41], m3[41], m4[41], m5[41], m6[41];
	char m7[41], m8[41], m9[41], m10[41], m11[41], m12[41], m13[41];
	char m14[41], m15[41], m16[41], m17[41];
};

static struct names N;

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s", "/tmp/pt-stable-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	setenv("GIT_AUTHOR_NAME", "Ann Author", 1);
	setenv("GIT_AUTHOR_EMAIL", "ann@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "Ann Author", 1);
	setenv("GIT_COMMITTER_EMAIL", "ann@example.org", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("HOME", dir, 1);
	git_libgit2_init();
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	git_libgit2_shutdown();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void build_repo(void)
{
	sh("git init -q -b main . && git config commit.gpgsign false");
	sh("for f in a b c d g; do seq 1 20 > $f.c; done");
	commit("base: initial import\n");
	edit(N.c1, "a.c", 10, "int check(void) { return x < 10; }",
	     "a: add the bound check\n");
	edit(N.c2, "g.c", 20, "knob twenty", "g: add the knob\n");
	sh("git tag v1");
	sh("git branch stable v1");

	/* the stable branch's own change to c.c line 15 */
	sh("git checkout -q stable");
	edit(NULL, "c.c", 15, "stable only", "c: stable-only tweak\n");
	sh("git checkout -q main");

	edit(N.m1, "a.c", 3, "fixed three",
	     "a: fix off-by-one in the loop\n\nSigned-off-by: Ann "
	     "<ann@example.org>\n");
	edit(N.m2, "b.c", 5, "freed five", "b: fix a leak on the error path\n");
	edit(N.m3, "c.c", 5, "checked five", "c: fix a crash on close\n");
	edit(N.m4, "d.c", 7, "bounded seven", "d: fix the loop bound\n");
	sh("printf 'int e(void)\\n{\\n\\treturn 0;\\n}\\n' > e.c");
	commit("e: add a new feature\n");
	rev(N.m5, "HEAD");
	sh("sed -i 's/return 0/return p ? 0 : -1/' e.c");
	commit("e: fix a NULL dereference\n\nFixes: %.12s (\"e: add a new "
	       "feature\")\nSigned-off-by: Ann <ann@example.org>\n", N.m5);
	rev(N.m6, "HEAD");
	edit(N.m7, "a.c", 10, "int check(void) { return x <= 9; }",
	     "a: fix the bound check\n\nFixes: %.12s (\"a: add the bound "
	     "check\")\nCc: stable@vger.kernel.org\nSigned-off-by: Ann "
	     "<ann@example.org>\n", N.c1);
	edit(N.m8, "a.c", 10,
	     "int check(void) { return x >= 0 \\&\\& x <= 9; }",
	     "a: also reject negative values\n");
	edit(N.m9, "c.c", 15, "main fifteen",
	     "c: fix the timeout\n\nCc: stable@dpdk.org\n");
	edit(N.m10, "b.c", 18, "ordered eighteen", "b: fix memory ordering\n");
	edit(N.m11, "d.c", 15, "fifteen fixed",
	     "d: fix the fix of the bound check\n\nFixes: %.12s (\"a: fix "
	     "the bound check\")\n", N.m7);
	/* fixes a commit the branch took as a patch-id-only backport */
	edit(N.m12, "g.c", 2, "two fixed",
	     "g: fix the loop bound fix\n\nFixes: %.12s (\"d: fix the loop "
	     "bound\")\n", N.m4);
	/* DPDK style: the tags in a paragraph above the sign-offs */
	edit(N.m13, "g.c", 8, "eight fixed",
	     "g: fix the stats reset\n\nThe counters were not cleared.\n\n"
	     "Fixes: %.12s (\"a: add the bound check\")\nCc: "
	     "stable@dpdk.org\n\nSigned-off-by: Ann <ann@example.org>\n"
	     "Acked-by: Bob <bob@example.org>\n", N.c1);
	/* a Fixes: naming no commit of the repository */
	edit(N.m14, "g.c", 14, "fourteen fixed",
	     "g: fix a race\n\nFixes: deadbeef0123 (\"an old commit\")\n");
	edit(N.m15, "g.c", 17, "debug seventeen", "g: add a debug knob\n");
	sh("git revert --no-edit %s", N.m15);
	rev(N.m16, "HEAD");
	sh("git revert --no-edit %s", N.c2);
	rev(N.m17, "HEAD");

	/* the backports */
	sh("git checkout -q stable");
	sh("git cherry-pick -x %s", N.m1);
	edit(NULL, "b.c", 5, "freed five",
	     "b: fix a leak on the error path\n\n[ upstream commit %s ]\n",
	     N.m2);
	edit(NULL, "c.c", 5, "checked five",
	     "c: fix a crash on close\n\ncommit %s upstream.\n", N.m3);
	sh("git cherry-pick %s && git commit -q --amend -m 'd: loop bound "
	   "(backport)'", N.m4);
	edit(NULL, "b.c", 18, "ordered eighteen",
	     "b: fix memory ordering\n\nUpstream commit %.12s.\n", N.m10);
	sh("git checkout -q main");
}

static struct stable_commit *find(struct stable_set *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].id, id))
			return &s->c[i];
	fail_msg("commit %s not in the range", id);
	return NULL;
}

static size_t index_of(struct stable_set *s, const char *id)
{
	return (size_t)(find(s, id) - s->c);
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
#define W(id, m, cc, fx, rv, dr, t, a, nd)                                   \
	{ N.id, STABLE_MATCH_##m, cc, fx, rv, dr, STABLE_TARGET_##t,        \
	  STABLE_APPLY_##a, nd }
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
	struct stable_opts o = { "v1..main", "stable", 1, 0, 1 };
	struct stable_set *s, *t;
	git_repository *repo;
	struct stable_commit *c;
	const char *cands[10];
	size_t i, k, n = 0;

	(void)state;
	build_repo();
	assert_int_equal(git_repository_open(&repo, dir), 0);
	assert_int_equal(stable_analyse(&s, repo, &o), 0);
	assert_int_equal(s->n, 17);
	assert_int_equal(s->branch_commits, 6);
	assert_int_equal(s->branch_marked, 4);
	assert_int_equal(s->nmarkers, 4);
	check_all(s);

	/* in the branch, each by its own kind of evidence */
	assert_int_equal(find(s, N.m1)->match, STABLE_MATCH_CHERRY);
	assert_int_equal(find(s, N.m2)->match, STABLE_MATCH_UPSTREAM);
	assert_int_equal(find(s, N.m3)->match, STABLE_MATCH_COMMIT_UP);
	assert_int_equal(find(s, N.m4)->match, STABLE_MATCH_PATCHID);
	assert_int_equal(find(s, N.m10)->match, STABLE_MATCH_UPSTREAM);
	assert_int_not_equal(find(s, N.m4)->backport[0], '\0');

	/* the fix for code the branch never had is dropped */
	c = find(s, N.m6);
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
	c = find(s, N.m12);
	assert_int_equal(c->ntargets, 1);
	assert_string_equal(c->targets[0], N.m4);
	/* the tag paragraph above the sign-offs is read */
	assert_string_equal(find(s, N.m13)->targets[0], N.c1);
	/* an id that resolves to nothing: kept, target unknown */
	assert_int_equal(find(s, N.m14)->ntargets, 0);
	/* reverts: of a commit the branch never had (dropped), of one it
	   has (kept) */
	assert_string_equal(find(s, N.m16)->targets[0], N.m15);
	assert_string_equal(find(s, N.m17)->targets[0], N.c2);

	/* the tiers of the ranking: Cc: stable, Fixes: of code the branch
	   has (or of a tagged candidate), other Fixes:, untagged */
	assert_int_equal(stable_tier(find(s, N.m7)), 3);
	assert_int_equal(stable_tier(find(s, N.m9)), 3);
	assert_int_equal(stable_tier(find(s, N.m13)), 3);
	assert_int_equal(stable_tier(find(s, N.m11)), 2);
	assert_int_equal(stable_tier(find(s, N.m12)), 2);
	assert_int_equal(stable_tier(find(s, N.m14)), 1);
	assert_int_equal(stable_tier(find(s, N.m6)), 1);
	assert_int_equal(stable_tier(find(s, N.m5)), 0);
	assert_int_equal(stable_tier(find(s, N.m17)), 0);

	c = find(s, N.m5);
	assert_false(c->cc_stable || c->has_fixes);
	assert_int_equal(c->target, STABLE_TARGET_NONE);
	assert_int_equal(c->apply, STABLE_APPLY_CLEAN);
	assert_int_equal(c->ndeps, 0);

	c = find(s, N.m7);
	assert_true(c->cc_stable && c->has_fixes);
	assert_int_equal(c->target, STABLE_TARGET_PRESENT);
	assert_string_equal(c->targets[0], N.c1);
	assert_int_equal(c->apply, STABLE_APPLY_CLEAN);
	assert_int_equal(c->ndeps, 0);

	/* touches the line m7 changed: depends on it, conflicts alone */
	c = find(s, N.m8);
	assert_false(c->cc_stable || c->has_fixes);
	assert_int_equal(c->ndeps, 1);
	assert_int_equal(c->deps[0], index_of(s, N.m7));
	assert_int_equal(c->apply, STABLE_APPLY_CONFLICT);
	assert_int_equal(c->nfiles, 1);
	assert_int_equal(c->added, 1);
	assert_int_equal(c->removed, 1);

	/* Cc: stable at any domain; conflicts with the stable-only change */
	c = find(s, N.m9);
	assert_true(c->cc_stable);
	assert_false(c->has_fixes);
	assert_int_equal(c->apply, STABLE_APPLY_CONFLICT);
	assert_int_equal(c->ndeps, 0);

	/* its target is not in the branch but is a tagged candidate: kept,
	   and it depends on it */
	c = find(s, N.m11);
	assert_int_equal(c->target, STABLE_TARGET_PENDING);
	assert_false(c->dropped);
	assert_int_equal(c->ndeps, 1);
	assert_int_equal(c->deps[0], index_of(s, N.m7));
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
	c = find(t, N.m11);
	assert_int_equal(c->target, STABLE_TARGET_PENDING);
	assert_false(c->dropped);
	assert_string_equal(c->needs, N.m7);
	assert_int_equal(c->ndeps, 0);
	assert_true(stable_is_candidate(t, index_of(t, N.m11)));
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
	c = find(t, N.m6);
	assert_int_equal(c->target, STABLE_TARGET_ABSENT);
	assert_true(c->dropped);
	assert_string_equal(c->needs, "");
	/* m7 is in this range: m11 depends on it as before */
	c = find(t, N.m11);
	assert_int_equal(c->target, STABLE_TARGET_PENDING);
	assert_string_equal(c->needs, "");
	assert_int_equal(c->deps[0], index_of(t, N.m7));
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
	static const char ctx_only[] =
		"diff --git a/b.c b/b.c\n"
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
	assert_int_equal(git_repository_open(&repo, dir), 0);
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
	assert_int_equal(patch_set_diff(p, ctx_only, sizeof(ctx_only) - 1),
			 0);
	assert_int_equal(stable_suggest_fixes(&line, repo, p, "main"), 0);
	/* lines 4 ("4", the import) and 5 ("freed five", m2) tie: the
	   first seen wins */
	rev(base, "v1~2");
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

/* Commit as author email at a committer time (seconds after 2024-01-01). */
static void commit_at(const char *email, long t, const char *msg)
{
	char date[64];

	snprintf(date, sizeof(date), "@%ld +0000", 1704067200L + t);
	setenv("GIT_COMMITTER_DATE", date, 1);
	setenv("GIT_AUTHOR_EMAIL", email, 1);
	commit("%s", msg);
	setenv("GIT_AUTHOR_EMAIL", "ann@example.org", 1);
	unsetenv("GIT_COMMITTER_DATE");
}

/* Set a line of file, commit it as email at time t, name it in out. */
static void line_change(char out[41], const char *file, int line,
			const char *text, const char *email, long t,
			const char *msg)
{
	set_line(file, line, text);
	commit_at(email, t, msg);
	rev(out, "HEAD");
}

/*
 * The untagged-backport signals: a series (same author and committer,
 * committed within STABLE_SERIES_GAP of each other) around a tagged fix,
 * another author's commit in between that is not of it, the fix wording
 * of the subject, and a changelog naming a commit the branch has.
 */
static void test_signals(void **state)
{
	struct stable_opts o = { "v1..main", "stable", 0, 0, 1 };
	char top[64], base[41], msg[512];
	char s1[41], s2[41], s3[41], d1[41], o1[41], o2[41], o3[41], c1[41];
	char c2[41];
	struct stable_set *s;
	git_repository *repo;
	struct stable_commit *c;

	(void)state;
	memcpy(top, dir, sizeof(top));
	sh("mkdir sig");
	snprintf(dir, sizeof(dir), "%.48s/sig", top);
	sh("git init -q -b main . && git config commit.gpgsign false");
	sh("for f in a b c d; do seq 1 20 > $f.c; done");
	commit_at("ann@example.org", 0, "base: initial import\n");
	rev(base, "HEAD");
	sh("git tag v1 && git branch stable v1");
	line_change(s1, "a.c", 2, "prepared", "ann@example.org", 1000,
		    "a: prepare the helper\n");
	line_change(d1, "d.c", 2, "knob", "bob@example.org", 1030,
		    "d: add a knob\n");
	snprintf(msg, sizeof(msg), "a: repair the helper\n\nFixes: %.12s "
		 "(\"base: initial import\")\nCc: stable@dpdk.org\n", base);
	line_change(s2, "a.c", 4, "fixed", "ann@example.org", 1060, msg);
	line_change(s3, "a.c", 6, "documented", "ann@example.org", 1300,
		    "a: document the helper\n");
	line_change(o1, "b.c", 2, "parsed", "ann@example.org", 5000,
		    "b: fix the parser\n");
	line_change(o2, "b.c", 4, "styled", "ann@example.org", 9000,
		    "b: fixup the style\n");
	line_change(o3, "b.c", 6, "typo", "ann@example.org", 13000,
		    "Fixed typo in the man page\n");
	snprintf(msg, sizeof(msg), "c: handle the empty case\n\nThe "
		 "crash came with commit %.12s (\"base: initial import\").\n",
		 base);
	line_change(c1, "c.c", 2, "handled", "ann@example.org", 17000, msg);
	line_change(c2, "c.c", 4, "tidied", "ann@example.org", 21000,
		    "c: tidy\n\nAs deadbeef12 did, "
		    "see v1.2-abc1234 and /p/0123abcd.\n");

	assert_int_equal(git_repository_open(&repo, dir), 0);
	assert_int_equal(stable_analyse(&s, repo, &o), 0);
	assert_int_equal(s->n, 9);

	/* the series of three around the tagged fix; Bob's is not of it */
	c = find(s, s1);
	assert_true(c->has_sibling);
	assert_int_equal(c->sibling, index_of(s, s2));
	assert_int_equal(c->series_len, 3);
	c = find(s, s3);
	assert_true(c->has_sibling);
	assert_int_equal(c->sibling, index_of(s, s2));
	assert_int_equal(c->series_len, 3);
	c = find(s, s2);
	assert_false(c->has_sibling);
	assert_int_equal(c->series_len, 3);
	assert_int_equal(stable_tier(c), 3);
	c = find(s, d1);
	assert_false(c->has_sibling);
	assert_int_equal(c->series_len, 1);
	/* an hour later: a series of its own */
	assert_false(find(s, o1)->has_sibling);
	assert_int_equal(find(s, o1)->series_len, 1);

	/* fix wording: a word of the subject, not "fixup"; the hint only
	   for an untagged candidate */
	assert_true(find(s, o1)->fix_subject);
	assert_false(find(s, o2)->fix_subject);
	assert_true(find(s, o3)->fix_subject);
	assert_false(find(s, s2)->fix_subject);
	assert_int_equal(stable_hint(find(s, o1)), 1);
	assert_int_equal(stable_hint(find(s, o3)), 1);
	assert_int_equal(stable_hint(find(s, o2)), 0);
	assert_int_equal(stable_hint(find(s, s1)), 0);
	assert_int_equal(stable_hint(find(s, s2)), 0);

	/* a named commit the branch has; ids that resolve to nothing or
	   sit in a version or a path are not read */
	c = find(s, c1);
	assert_string_equal(c->cites, base);
	assert_true(c->cites_present);
	assert_false(c->has_fixes);
	assert_false(c->fix_subject);
	assert_int_equal(stable_hint(c), 1);
	c = find(s, c2);
	assert_string_equal(c->cites, "");
	assert_false(c->cites_present);
	assert_int_equal(stable_hint(c), 0);
	/* the Fixes: line is not a citation */
	assert_string_equal(find(s, s2)->cites, "");

	stable_set_free(s);
	git_repository_free(repo);
	memcpy(dir, top, sizeof(top));
}

/* Run cmd, commit the result with msg and name it in out. */
static void change(char out[41], const char *cmd, const char *msg)
{
	sh("%s", cmd);
	commit("%s", msg);
	rev(out, "HEAD");
}

/* A commit's build facts and stable_build() in one call. */
static void want_build(struct stable_set *s, const char *id, int ci,
		       int comp, int words, int files, int ranks)
{
	const struct stable_commit *c = find(s, id);

	assert_int_equal(c->build_ci, ci);
	assert_int_equal(c->build_comp, comp);
	assert_int_equal(c->build_words, words);
	assert_int_equal(c->build_files, files);
	assert_int_equal(stable_build(c), ranks);
}

/* A new repository NAME inside the test's; top keeps the test's dir. */
static void sub_repo(char top[64], const char *name)
{
	memcpy(top, dir, 64);
	sh("mkdir %s", name);
	snprintf(dir, sizeof(dir), "%.48s/%s", top, name);
	sh("git init -q -b main . && git config commit.gpgsign false");
}

/* A commit that fixes another, with its Fixes: line. */
static void commit_fix(char out[41], const char *target, const char *cmd,
		       const char *subject)
{
	sh("%s", cmd);
	commit("%s\n\nFixes: %.12s (\"...\")\n", subject, target);
	rev(out, "HEAD");
}

/* A kept fix of a range commit: pending, tier 2, depending on it. */
static void want_pending(struct stable_set *s, const char *id,
			 const char *target)
{
	const struct stable_commit *c = find(s, id);

	assert_int_equal(c->target, STABLE_TARGET_PENDING);
	assert_false(c->dropped);
	assert_true(stable_is_candidate(s, index_of(s, id)));
	assert_int_equal(stable_tier(c), 2);
	assert_int_equal(c->ndeps >= 1, 1);
	assert_int_equal(c->deps[0], index_of(s, target));
	assert_string_equal(c->needs, "");
}

/* A fix of a range commit, dropped; the commit itself a candidate. */
static void want_dropped(struct stable_set *s, const char *id,
			 const char *target)
{
	const struct stable_commit *c = find(s, id);

	assert_int_equal(c->target, STABLE_TARGET_ABSENT);
	assert_true(c->dropped);
	assert_string_equal(c->targets[0], target);
	assert_false(stable_is_candidate(s, index_of(s, id)));
	assert_true(stable_is_candidate(s, index_of(s, target)));
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
	struct stable_opts o = { "v1..main", "stable", 0, 0, 1 };
	char top[64], ci[41], bf[41], cm[41], deb[41], sus[41], mnt[41];
	char cpp[41], p1[41], f1[41], p2[41], f2[41], p3[41], f3[41];
	struct stable_set *s;
	git_repository *repo;
	const struct stable_commit *c;

	(void)state;
	sub_repo(top, "bld");
	sh("mkdir .ci debian suse drivers && for f in p q; do seq 1 20 > "
	   "$f.c; done && echo x > .ci/run.sh && echo x > meson.build && "
	   "echo x > debian/control && echo x > suse/pkg.spec && "
	   "echo x > drivers/foo.c && echo x > drivers/meson.build && "
	   "echo x > MAINTAINERS");
	commit("base: initial import\n");
	sh("git tag v1 && git branch stable v1");
	sh("git checkout -q stable");
	edit(NULL, "p.c", 3, "branch3", "p: the branch's own change\n");
	sh("git checkout -q main");

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

	change(p1, "sed -i 6s/.*/refactored6/ p.c",
	       "p: refactor the helper\n");
	change(f1, "sed -i 6s/.*/fixed6/ p.c",
	       "p: repair the helper\n\nCc: stable@example.org\n");
	change(p2, "sed -i 12s/.*/renamed12/ p.c", "p: rename the counter\n");
	change(f2, "sed -i '12s/.*/fixed12/; 3s/.*/main3/' p.c",
	       "p: repair the counter\n\nCc: stable@example.org\n");
	change(p3, "sed -i 2s/.*/tidy2/ q.c", "q: tidy\n");
	change(f3, "sed -i 10s/.*/fixed10/ q.c",
	       "q: repair\n\nCc: stable@example.org\n");

	sh("git count-objects > .objects");
	assert_int_equal(git_repository_open(&repo, dir), 0);
	assert_int_equal(stable_analyse(&s, repo, &o), 0);
	assert_int_equal(s->n, 13);

	/*            commit  ci comp words files ranks */
	want_build(s, ci,     1, 1,   0,    1,    1); /* MAINTAINERS aside */
	want_build(s, bf,     0, 1,   1,    1,    1);
	want_build(s, cm,     0, 0,   1,    0,    1);
	want_build(s, deb,    1, 1,   0,    1,    1);
	want_build(s, sus,    1, 1,   0,    1,    0); /* tagged: no rank */
	want_build(s, mnt,    0, 0,   0,    0,    0);
	want_build(s, cpp,    0, 0,   1,    0,    1);
	want_build(s, p1,     0, 0,   0,    0,    0);

	/* before stable_prereqs() nothing is marked */
	assert_false(find(s, p1)->prereq);
	assert_int_equal(stable_prereqs(s, NULL), 0);
	c = find(s, f1);
	assert_int_equal(c->ndeps, 1);
	assert_int_equal(c->deps[0], index_of(s, p1));
	c = find(s, p1);
	assert_true(c->prereq);
	assert_int_equal(c->prereq_of, index_of(s, f1));
	/* f2 conflicts on line 3 with or without p2 */
	assert_int_equal(find(s, f2)->ndeps, 1);
	assert_int_equal(find(s, f2)->deps[0], index_of(s, p2));
	assert_false(find(s, p2)->prereq);
	/* f3 applies as it is */
	assert_false(find(s, p3)->prereq);
	assert_int_equal(find(s, f3)->ndeps, 0);
	/* a tagged commit is never one */
	assert_false(find(s, f1)->prereq);
	/* nothing was written: no new object, the work tree untouched */
	sh("git count-objects | cmp - .objects && git diff --quiet HEAD");

	stable_set_free(s);
	git_repository_free(repo);
	memcpy(dir, top, sizeof(top));
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
	struct stable_opts o = { "v1..main", "stable", 0, 0, 1 };
	char top[64], ci[41], cf[41], cf2[41], wd[41], wf[41], fs[41];
	char fsf[41], kn[41], knf[41];
	struct stable_set *s;
	git_repository *repo;

	(void)state;
	sub_repo(top, "pend");
	sh("mkdir .ci && echo x > .ci/run.sh && for f in p q r; do seq 1 20 "
	   "> $f.c; done");
	commit("base: initial import\n");
	sh("git tag v1 && git branch stable v1");

	change(ci, "echo y >> .ci/run.sh", "ci: hook to the runner\n");
	commit_fix(cf, ci, "echo z >> .ci/run.sh", "ci: fix the runner hook");
	commit_fix(cf2, cf, "echo w >> .ci/run.sh", "ci: retry the hook");
	change(wd, "sed -i 4s/.*/quiet4/ p.c", "p: silence a gcc warning\n");
	commit_fix(wf, wd, "sed -i 5s/.*/quiet5/ p.c", "p: the other one");
	change(fs, "sed -i 6s/.*/better6/ q.c", "q: fix the slow path\n");
	commit_fix(fsf, fs, "sed -i 7s/.*/better7/ q.c", "q: tune it");
	change(kn, "sed -i 8s/.*/new8/ r.c", "r: add a knob\n");
	commit_fix(knf, kn, "sed -i 9s/.*/new9/ r.c", "r: tune the knob");

	assert_int_equal(git_repository_open(&repo, dir), 0);
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
	memcpy(dir, top, sizeof(top));
}

static void test_markers(void **state)
{
	static const struct {
		const char *msg;
		enum stable_match kind;
		const char *hex;
	} cases[] = {
		{ "x\n\n(cherry picked from commit 0123456789abcdef0123456789"
		  "abcdef01234567)\n", STABLE_MATCH_CHERRY,
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
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_build_prereqs),
		cmocka_unit_test(test_pending_build),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
