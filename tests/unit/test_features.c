/*
 * test_features.c - the feature vector: code patterns and the cleaned
 * text of a hand-written patch (no Fixes:/Cc: stable/sign-off words reach
 * the model), and the as-of property on a real mined repository: a
 * commit's vector is the same before and after later commits (a fix of
 * an earlier commit its reviewer reviewed, a new tag, more work by its
 * author) are mined, while a later commit does see them.  The past-bug
 * columns (bughist.h) have their exact values on that history, a fix
 * dated after a commit leaves them alone, the mined and the unmined path
 * agree, and a state mined before they existed gets them on the next
 * mine run.  The release-cycle columns are the mainline's (no stable
 * tag) as of the author date, for a commit and for it as a mail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <git2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scoring/model/bughist.h"
#include "scoring/store/db.h"
#include "scoring/model/features.h"
#include "scoring/history/history.h"
#include "scoring/model/histsum.h"
#include "scoring/patch/patch.h"
#include "scoring/model/schema.h"
#include "dbq.h"
#include "tmpdir.h"

static const char msg[] =
	"The probe path dereferences the pointer returned by\n"
	"foo_alloc() without checking it, a NULL pointer dereference.\n"
	"Tested on x86 with the loopback driver.\n"
	"\n"
	"Fixes: 0123456789ab (\"net: add foo\")\n"
	"Cc: stable@dpdk.org\n"
	"\n"
	"Reported-by: syzbot+1234@syzkaller.appspotmail.com\n"
	"Reviewed-by: Cy Reviewer <cy@example.org>\n"
	"Signed-off-by: Ann Author <ann@example.org>\n";

static const char diff[] =
	"diff --git a/drivers/net/foo.c b/drivers/net/foo.c\n"
	"--- a/drivers/net/foo.c\n"
	"+++ b/drivers/net/foo.c\n"
	"@@ -1,4 +1,8 @@\n"
	" int foo_probe(struct dev *d)\n"
	" {\n"
	"+\tif (!d->priv)\n"
	"+\t\treturn -ENOMEM;\n"
	"+\tspin_lock(&d->lock);\n"
	"+\tspin_unlock(&d->lock);\n"
	" \treturn 0;\n"
	" }\n";

static const char ws_diff[] = "diff --git a/lib/a.c b/lib/a.c\n"
			      "--- a/lib/a.c\n"
			      "+++ b/lib/a.c\n"
			      "@@ -1,2 +1,2 @@\n"
			      "-int  x = 1;\n"
			      "+int x = 1;\n"
			      " int y;\n";

static struct patch *make_patch(const char *subject, const char *m,
				const char *d)
{
	struct patch *p;

	assert_int_equal(patch_new(&p), 0);
	p->source = PATCH_FROM_MAIL;
	p->author_date = 1700000000;
	assert_int_equal(subject_parse(&p->subject, subject, strlen(subject)),
			 0);
	assert_int_equal(patch_set_message(p, m, strlen(m)), 0);
	assert_int_equal(patch_set_diff(p, d, strlen(d)), 0);
	return p;
}

static void test_patterns_and_text(void **state)
{
	struct patch *p = make_patch("[PATCH v3 2/5] net/foo: fix probe crash",
				     msg, diff);
	struct feat_vec v;
	size_t i;
	int saw_null = 0, saw_verb = 0, saw_pair = 0, saw_prefix = 0;

	(void)state;
	assert_int_equal(feat_compute(&v, NULL, p, NULL, 16, FEAT_NAMES), 0);
	assert_true(v.tab[FEAT_NULL_GUARD] == 1);
	assert_true(v.tab[FEAT_ERR_RETURN] == 1);
	assert_true(v.tab[FEAT_LOCK_ADD] == 2);
	assert_true(v.tab[FEAT_LA] == 4 && v.tab[FEAT_LD] == 0);
	assert_true(v.tab[FEAT_NF] == 1 && v.tab[FEAT_NS] == 1);
	assert_true(v.tab[FEAT_N_REVIEWED] == 1);
	assert_true(v.tab[FEAT_BOT_REPORT] == 1);
	assert_true(v.tab[FEAT_TESTED_CLAIM] == 1);
	assert_true(v.tab[FEAT_HAS_FIXES] == 1);
	assert_true(v.tab[FEAT_CC_STABLE] == 1);
	assert_true(v.tab[FEAT_VERSION] == 3 && v.tab[FEAT_SERIES] == 5);
	assert_true(v.tab[FEAT_WS_ONLY] == 0 && v.tab[FEAT_DOC_ONLY] == 0);
	/* no database: history is missing, not zero */
	assert_true(isnan(v.tab[FEAT_EXP]) && isnan(v.tab[FEAT_RC]));
	assert_string_equal(v.phrase, "null pointer dereference");
	assert_string_equal(v.top_dir, "drivers/net/");
	for (i = 0; i < v.nsp; i++) {
		const char *n = v.sp_names[i];

		assert_true(v.sp[i].index < (1u << 16));
		/* the label's trailers never reach the text */
		assert_null(strstr(n, "stable"));
		assert_null(strstr(n, "0123456789ab"));
		assert_null(strstr(n, "signed"));
		assert_null(strstr(n, "syzkaller"));
		if (!strcmp(n, "w:null"))
			saw_null = 1;
		/* the subject's kind of change, apart from its words */
		saw_verb += !strcmp(n, "v:fix");
		saw_pair += !strcmp(n, "v:fix_probe");
		saw_prefix += !strcmp(n, "p:net/foo");
		assert_false(n[0] == 'v' && strstr(n, "net"));
	}
	assert_true(saw_null);
	assert_int_equal(saw_verb, 1);
	assert_int_equal(saw_pair, 1);
	assert_int_equal(saw_prefix, 1);
	feat_vec_free(&v);
	patch_free(p);

	p = make_patch("lib: reformat",
		       "Whitespace.\n\nSigned-off-by: A "
		       "<a@example.org>\n",
		       ws_diff);
	assert_int_equal(feat_compute(&v, NULL, p, NULL, 16, 0), 0);
	assert_true(v.tab[FEAT_WS_ONLY] == 1);
	assert_null(v.sp_names);
	feat_vec_free(&v);
	patch_free(p);
}

/* ---- as of ------------------------------------------------------------- */

static const char script[] =
	"set -e\n"
	"cd \"$1\"\n"
	"c() { GIT_AUTHOR_DATE=\"@$1 +0000\" GIT_COMMITTER_DATE=\"@$1 +0000\""
	" GIT_AUTHOR_NAME=\"$2\" GIT_AUTHOR_EMAIL=\"$3\" git commit -q -a -F ../m; }\n"
	"if [ \"$2\" = 1 ]; then\n"
	"git init -q -b main .\n"
	"git config user.name Ann; git config user.email ann@example.org\n"
	"mkdir -p drivers/net\n"
	"printf 'int foo(int *p)\\n{\\n\\treturn 0;\\n}\\n' > drivers/net/foo.c\n"
	"git add .\n"
	"printf 'net: add foo\\n\\nSigned-off-by: Ann <ann@example.org>\\n' > ../m\n"
	"c 1000000 Ann ann@example.org; git tag v1.0\n"
	"printf 'int foo(int *p)\\n{\\n\\treturn *p;\\n}\\n' > drivers/net/foo.c\n"
	"printf 'net: rework foo\\n\\nReviewed-by: Cy <cy@example.org>\\n"
	"Signed-off-by: Bob <bob@example.org>\\n' > ../m\n"
	"c 2000000 Bob bob@example.org; git tag v1.1-rc1\n"
	"printf 'int foo(int *p)\\n{\\n\\tif (!p)\\n\\t\\treturn -EINVAL;\\n"
	"\\treturn *p;\\n}\\n' > drivers/net/foo.c\n"
	"printf 'net: check foo argument\\n\\nAvoid a crash.\\n\\n"
	"Reviewed-by: Cy <cy@example.org>\\nTested-by: Dee <dee@example.org>\\n"
	"Signed-off-by: Ann <ann@example.org>\\n' > ../m\n"
	"c 3000000 Ann ann@example.org\n"
	"git rev-parse HEAD > ../x.sha\n"
	"else\n"
	"printf 'int foo(int *p)\\n{\\n\\tif (!p)\\n\\t\\treturn -EINVAL;\\n"
	"\\treturn p[0];\\n}\\n' > drivers/net/foo.c\n"
	"printf 'net: fix foo rework\\n\\nFixes: %s (\"net: rework foo\")\\n"
	"Reviewed-by: Cy <cy@example.org>\\nSigned-off-by: Bob <bob@example.org>"
	"\\n' $(git rev-parse HEAD~1) > ../m\n"
	"c 4000000 Bob bob@example.org; git tag v1.1-rc2\n"
	"echo '/* more */' >> drivers/net/foo.c\n"
	"printf 'net: more foo\\n\\nReviewed-by: Cy <cy@example.org>\\n"
	"Signed-off-by: Ann <ann@example.org>\\n' > ../m\n"
	"c 5000000 Ann ann@example.org\n"
	"git rev-parse HEAD > ../y.sha\n"
	"echo 'int bar;' >> drivers/net/foo.c\n"
	"printf 'net: fix the check\\n\\nFixes: %s (\"net: check foo argument\")"
	"\\nSigned-off-by: Bob <bob@example.org>\\n' $(cat ../x.sha) > ../m\n"
	"c 6000000 Bob bob@example.org\n"
	"git rev-parse HEAD > ../z.sha\n"
	"fi\n";

struct fx {
	char dir[64], repo[96], db[96];
};

/* The fixture's folder, /tmp/pt-feat-XXXXXX, with repo/ made. */
static void fx_make(struct fx *f)
{
	assert_int_equal(tmpdir_make(f->dir, sizeof(f->dir), "feat"), 0);
	snprintf(f->repo, sizeof(f->repo), "%s/repo", f->dir);
	snprintf(f->db, sizeof(f->db), "%s/state.db", f->dir);
	assert_int_equal(mkdir(f->repo, 0700), 0);
}

static int sh_script(struct fx *f, const char *text, int phase)
{
	char cmd[512], path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/mk.sh", f->dir);
	fp = fopen(path, "w");
	if (!fp)
		return -1;
	fputs(text, fp);
	fclose(fp);
	snprintf(cmd, sizeof(cmd), "sh %s %s %d >/dev/null 2>&1", path, f->repo,
		 phase);
	return system(cmd);
}

static int sh(struct fx *f, int phase)
{
	return sh_script(f, script, phase);
}

static void mine(struct fx *f, struct db *db)
{
	struct mine_result res;
	struct mine_opts o;

	memset(&o, 0, sizeof(o));
	o.repo = f->repo;
	o.threads = 1;
	o.summarise = histsum_build;
	assert_int_equal(mine_run(&res, db, &o), 0);
}

/*
 * as_mail: forget the commit id, so the patch takes the unmined path;
 * 2: and read it as a mail
 */
static void vec_of(struct feat_vec *v, struct fx *f, struct db *db,
		   const char *shafile, int as_mail)
{
	char path[128], sha[64] = "";
	struct feat_ctx *c;
	git_repository *repo;
	git_commit *commit;
	struct patch *p;
	git_oid oid;
	int64_t repo_id;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->dir, shafile);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(sha, sizeof(sha), fp));
	fclose(fp);
	sha[40] = '\0';
	assert_int_equal(git_repository_open(&repo, f->repo), 0);
	assert_int_equal(git_oid_fromstr(&oid, sha), 0);
	assert_int_equal(git_commit_lookup(&commit, repo, &oid), 0);
	assert_int_equal(patch_from_commit(&p, repo, commit), 0);
	if (as_mail) {
		free(p->commit_id);
		p->commit_id = NULL;
	}
	if (as_mail > 1)
		p->source =
			PATCH_FROM_MAIL; /* as posted: Date: = author date */
	assert_int_equal(mine_repo_id(&repo_id, db, f->repo), 0);
	assert_int_equal(feat_ctx_new(&c, db, repo_id), 0);
	assert_int_equal(feat_compute(v, c, p, NULL, 16, 0), 0);
	feat_ctx_free(c);
	patch_free(p);
	git_commit_free(commit);
	git_repository_free(repo);
}

static int same_vec(const struct feat_vec *a, const struct feat_vec *b)
{
	size_t i;

	for (i = 0; i < FEAT_NTAB; i++) {
		if (isnan(a->tab[i]) != isnan(b->tab[i]))
			return 0;
		if (!isnan(a->tab[i]) && a->tab[i] != b->tab[i]) {
			fprintf(stderr, "%s: %g != %g\n", feat_name(i),
				a->tab[i], b->tab[i]);
			return 0;
		}
	}
	return a->nsp == b->nsp &&
	       !memcmp(a->sp, b->sp, a->nsp * sizeof(*a->sp));
}

/* The smoothed rate of bughist.h, written out: prior 0.1 worth 5. */
static float rate(double bugs, double n)
{
	return (float)((bugs + 0.5) / (n + 5));
}

struct bugs_want {
	float file_bugs, file_fixes, nuc, author_bugs, exp, comp, comp_bugs;
};

static void check_bugs(const struct feat_vec *v, const struct bugs_want *w)
{
	assert_true(v->tab[FEAT_NUC] == w->nuc);
	assert_true(v->tab[FEAT_FILE_BUGS] == w->file_bugs);
	assert_true(v->tab[FEAT_FILE_FIXES] == w->file_fixes);
	assert_true(fabsf(v->tab[FEAT_FILE_BUGRATE] -
			  rate(w->file_bugs, w->nuc)) < 1e-6);
	assert_true(v->tab[FEAT_EXP] == w->exp);
	assert_true(v->tab[FEAT_AUTHOR_BUGS] == w->author_bugs);
	assert_true(fabsf(v->tab[FEAT_AUTHOR_BUGRATE] -
			  rate(w->author_bugs, w->exp)) < 1e-6);
	assert_true(v->tab[FEAT_COMP_CHANGES] == w->comp);
	assert_true(fabsf(v->tab[FEAT_COMP_BUGRATE] -
			  rate(w->comp_bugs, w->comp)) < 1e-6);
}

static const enum feat_id hist[] = {
	FEAT_LT,
	FEAT_NDEV,
	FEAT_AGE,
	FEAT_NUC,
	FEAT_EXP,
	FEAT_SEXP,
	FEAT_FILE_BUGS,
	FEAT_FILE_BUGRATE,
	FEAT_FILE_FIXES,
	FEAT_AUTHOR_BUGS,
	FEAT_AUTHOR_BUGRATE,
	FEAT_COMP_CHANGES,
	FEAT_COMP_BUGRATE,
};

/* The commit in SHAFILE as a mail gets the history the miner computed. */
static void check_mail(struct fx *f, struct db *db, const char *shafile,
		       const struct feat_vec *mined)
{
	struct feat_vec mail;
	size_t i;

	vec_of(&mail, f, db, shafile, 1);
	for (i = 0; i < sizeof(hist) / sizeof(hist[0]); i++) {
		if (mail.tab[hist[i]] != mined->tab[hist[i]])
			fprintf(stderr, "%s %s: mail %g, mined %g\n", shafile,
				feat_name(hist[i]), mail.tab[hist[i]],
				mined->tab[hist[i]]);
		assert_true(mail.tab[hist[i]] == mined->tab[hist[i]]);
	}
	feat_vec_free(&mail);
}

static void test_as_of(void **state)
{
	/* X: foo.c changed by 2 (none known buggy yet), Ann's 1, net's 2 */
	static const struct bugs_want wx = { 0, 0, 2, 0, 1, 2, 0 };
	/* Y: the rework's fix is known, X's fix is not (dated after Y) */
	static const struct bugs_want wy = { 1, 1, 4, 0, 2, 4, 1 };
	/* Z, the fix of X by Bob: X counts from the day after, not Z's */
	static const struct bugs_want wz = { 1, 1, 5, 1, 2, 5, 1 };
	struct feat_vec before, after, later, z, refilled;
	struct fx f;
	struct db *db;
	size_t i;

	(void)state;
	git_libgit2_init();
	fx_make(&f);
	assert_int_equal(sh(&f, 1), 0);
	assert_int_equal(db_open(&db, f.db, &scoring_db_owners), 0);
	mine(&f, db);
	vec_of(&before, &f, db, "x.sha", 0);
	check_bugs(&before, &wx);
	/* as of X: after -rc1, 1e6 s later; Ann has one earlier commit */
	assert_true(before.tab[FEAT_RC] == 1);
	assert_true(fabsf(before.tab[FEAT_DAYS_TAG] - 1e6f / 86400) < 1e-3);
	assert_true(before.tab[FEAT_EXP] == 1);
	assert_true(before.tab[FEAT_NULL_GUARD] == 1);
	/* Cy reviewed one commit before, not yet known buggy; Dee none */
	assert_true(fabsf(before.tab[FEAT_REV_BUGRATE] - 0.5f / 6) < 1e-6);
	assert_true(before.tab[FEAT_N_TESTED] == 1);

	assert_int_equal(sh(&f, 2), 0);
	mine(&f, db);
	vec_of(&after, &f, db, "x.sha", 0);
	/* the rework X changed and X itself are now known buggy, later */
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM labels WHERE bug "
				     "AND discovered > 3000000"),
			 2);
	assert_true(same_vec(&before, &after));
	check_bugs(&after, &wx);
	/*
	 * Not mined (a mail): the file history comes from the stored file
	 * changes dated before it, and is what the miner computed.
	 */
	check_mail(&f, db, "x.sha", &before);
	/* the later commit sees the fix of Cy's reviewed commit, the tag */
	vec_of(&later, &f, db, "y.sha", 0);
	assert_true(later.tab[FEAT_RC] == 2);
	assert_true(later.tab[FEAT_EXP] == 2);
	assert_true(fabsf(later.tab[FEAT_REV_BUGRATE] - 1.5f / 8) < 1e-6);
	check_bugs(&later, &wy);
	check_mail(&f, db, "y.sha", &later);
	vec_of(&z, &f, db, "z.sha", 0);
	check_bugs(&z, &wz);
	check_mail(&f, db, "z.sha", &z);
	feat_vec_free(&z);
	/* mined before the columns existed: missing, then the next mine */
	assert_int_equal(db_exec(db, "UPDATE features SET file_bugs = NULL, "
				     "file_fixes = NULL, author_bugs = NULL, "
				     "comp_changes = NULL, comp_bugs = NULL"),
			 0);
	vec_of(&refilled, &f, db, "y.sha", 0);
	for (i = FEAT_FILE_BUGS; i <= FEAT_COMP_BUGRATE; i++)
		assert_true(isnan(refilled.tab[i]));
	feat_vec_free(&refilled);
	mine(&f, db);
	vec_of(&refilled, &f, db, "y.sha", 0);
	assert_true(same_vec(&later, &refilled));
	feat_vec_free(&refilled);
	feat_vec_free(&before);
	feat_vec_free(&after);
	feat_vec_free(&later);
	db_close(db);
	assert_int_equal(tmpdir_remove(f.dir), 0);
	git_libgit2_shutdown();
}

/*
 * The release cycle as of the author date on the mainline: W is written
 * after v1.1-rc1 and after a stable tag (v1.0.1, off main's first
 * parents), committed after v1.1-rc2.  Its columns are the mainline's
 * at rc1, for the commit and for the same patch as a mail.
 */
static const char cycle_script[] =
	"set -e\n"
	"cd \"$1\"\n"
	"c() { git add -A; GIT_AUTHOR_DATE=\"@$1 +0000\" "
	"GIT_COMMITTER_DATE=\"@$2 +0000\" git commit -q -m \"$3\"; }\n"
	"git init -q -b main .\n"
	"git config user.name Ann; git config user.email ann@example.org\n"
	"echo a > a.c; c 1000000 1000000 'lib: add a'; git tag v1.0\n"
	"echo b >> a.c; c 2000000 2000000 'lib: more'; git tag v1.1-rc1\n"
	"git checkout -q -b stable v1.0\n"
	"echo s > s.c; c 3000000 3000000 'lib: backport'; git tag v1.0.1\n"
	"git checkout -q main\n"
	"echo c >> a.c; c 4000000 4000000 'lib: again'; git tag v1.1-rc2\n"
	"echo d >> a.c; c 3500000 5000000 'lib: written at rc1'\n"
	"git rev-parse HEAD > ../w.sha\n";

static void check_cycle(const struct feat_vec *v, int from_mail)
{
	assert_true(v->tab[FEAT_RC] == 1);
	assert_true(v->tab[FEAT_LATE_RC] == 0);
	assert_true(fabsf(v->tab[FEAT_DAYS_TAG] - 1.5e6f / 86400) < 1e-3);
	assert_true(fabsf(v->tab[FEAT_DAYS_RELEASE] - 2.5e6f / 86400) < 1e-3);
	assert_string_equal(v->release_tag, "v1.1-rc1");
	assert_string_equal(v->release, "v1.0");
	assert_int_equal(v->from_mail, from_mail);
}

static void test_mainline_cycle(void **state)
{
	struct feat_vec commit, mail;
	struct fx f;
	struct db *db;

	(void)state;
	git_libgit2_init();
	fx_make(&f);
	assert_int_equal(sh_script(&f, cycle_script, 1), 0);
	assert_int_equal(db_open(&db, f.db, &scoring_db_owners), 0);
	mine(&f, db);
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM tags WHERE "
				     "mainline"),
			 3);
	vec_of(&commit, &f, db, "w.sha", 0);
	check_cycle(&commit, 0);
	vec_of(&mail, &f, db, "w.sha", 2);
	check_cycle(&mail, 1);
	feat_vec_free(&commit);
	feat_vec_free(&mail);
	db_close(db);
	assert_int_equal(tmpdir_remove(f.dir), 0);
	git_libgit2_shutdown();
}

static void test_component(void **state)
{
	(void)state;
	assert_int_equal(subject_component("net/mlx5: fix Rx"), 8);
	assert_int_equal(subject_component("net: common: x"), 3);
	assert_int_equal(subject_component("Revert \"net: x\""), 0);
	assert_int_equal(subject_component("fix the build"), 0);
	assert_int_equal(subject_component(": x"), 0);
	assert_int_equal(subject_component("net:x"), 0);
	assert_int_equal(subject_component("net:"), 0);
	assert_int_equal(subject_component(""), 0);
	assert_int_equal(subject_component(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patterns_and_text),
		cmocka_unit_test(test_component),
		cmocka_unit_test(test_as_of),
		cmocka_unit_test(test_mainline_cycle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
