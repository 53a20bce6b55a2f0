/*
 * test_histsum.c - the as-of history summaries (histsum.h) give exactly
 * the values of the SQL over earlier commits they replace: on a
 * synthetic mined history (commits sharing dates, dates out of seq
 * order, a commit without a date or author, deletions, renames, binary
 * and uncounted files, repeated reviewers, bug labels known before and
 * after the patch, a second repository over the same paths), random
 * unmined patches get the same feature vector from feat_compute() with
 * the summary and with feat_ctx_no_summary(), the past-bug columns of
 * bughist.c included (subjects with and without a component).  A new
 * mine run makes the summary stale; the next feature context rebuilds
 * it.  `mine`, first and incremental, leaves it current and equal to
 * the SQL.  A patch over a long history (its id sets grown past 1024
 * commits) and the small patches after it get the SQL's values too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scoring/store/db.h"
#include "scoring/model/features.h"
#include "scoring/model/histsum.h"
#include "scoring/history/history.h"
#include "scoring/patch/patch.h"
#include "scoring/model/schema.h"

#define BASE 1600000000
#define NCOMMITS 400
#define NPEOPLE 9

static const char *const paths[] = {
	"MAINTAINERS", "README",	  "lib/a.c",	     "lib/b.c",
	"lib/sub/c.c", "drivers/net/x.c", "drivers/net/y.c", "drivers/z.c",
	"doc/g.rst",   "app/t.c",	  "lib/b.h",	     "x/y",
};
#define NPATHS (sizeof(paths) / sizeof(paths[0]))

/* components "net/x", "lib", "doc"; none in the last three */
static const char *const subjects[] = {
	"net/x: fix a leak",
	"net/x: add a queue",
	"lib: fix b",
	"lib: c",
	"doc: d",
	"net/x:y: e",
	"no component",
	"lib:f",
};
#define NSUBJECTS (sizeof(subjects) / sizeof(subjects[0]))

static uint64_t seed = 88172645463325252ull;

static unsigned rnd(unsigned n)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (unsigned)(seed % n);
}

static void exec(struct db *db, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void exec(struct db *db, const char *fmt, ...)
{
	char sql[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	assert_int_equal(db_exec(db, sql), 0);
}

/* NCOMMITS commits of repository REPO from seq FIRST on. */
static void add_commits(struct db *db, int repo, int first, int n)
{
	int i, k;

	for (i = first; i < first + n; i++) {
		/* ties and dates out of seq order; one commit without date */
		long date = BASE + (long)(i + (int)rnd(40) - 20) / 2 * 1000;
		int author = (int)rnd(NPEOPLE + 1); /* 0: no author */
		int nf = 1 + (int)rnd(4), id;
		unsigned p0, step;
		char dsql[32], asql[16];

		snprintf(dsql, sizeof(dsql), "%ld", date);
		snprintf(asql, sizeof(asql), "%d", author);
		exec(db,
		     "INSERT INTO commits (repo_id, sha, seq, nparents, "
		     "author_id, commit_date, subject) VALUES (%d, '%d-%d', "
		     "%d, 1, %s, %s, '%s')",
		     repo, repo, i, i, author ? asql : "NULL",
		     i == first + 7 ? "NULL" : dsql, subjects[rnd(NSUBJECTS)]);
		id = (int)sqlite3_last_insert_rowid(db->h);
		p0 = rnd(NPATHS);
		step = "\1\5\7\13"[rnd(4)]; /* prime to NPATHS */
		for (k = 0; k < nf; k++) {
			/* distinct: SQL orders a path twice arbitrarily */
			const char *path =
				paths[(p0 + (unsigned)k * step) % NPATHS];
			char st = "MMMMADR"[rnd(7)], old[40] = "NULL";

			if (st == 'R')
				snprintf(old, sizeof(old), "'%s'",
					 paths[rnd(NPATHS)]);
			exec(db,
			     "INSERT INTO commit_files (commit_id, path, "
			     "old_path, status, added, removed, binary, "
			     "uncounted, old_lines) VALUES (%d, '%s', %s, "
			     "'%c', %u, %u, %d, %d, %s)",
			     id, path, old, st, rnd(50), rnd(30), rnd(20) == 0,
			     rnd(20) == 0, rnd(10) ? "200" : "NULL");
		}
		for (k = 0; k < (int)rnd(4); k++) {
			static const int kinds[] = { 1, 2, 3, 4, 2, 3 };
			int who = (int)rnd(NPEOPLE + 1);

			snprintf(asql, sizeof(asql), "%d", who);
			exec(db,
			     "INSERT INTO trailers (commit_id, idx, kind, "
			     "person_id) VALUES (%d, %d, %d, %s)",
			     id, k, kinds[rnd(6)], who ? asql : "NULL");
		}
		if (rnd(3))
			exec(db,
			     "INSERT INTO labels (commit_id, is_fix, "
			     "is_stable, bug, nfixes, discovered, "
			     "trivial_only, negative_ok) VALUES (%d, %d, 0, "
			     "%d, 1, %s, 0, 1)",
			     id, rnd(3) == 0, rnd(3) == 0,
			     rnd(8) ? "0" : "NULL");
		if (rnd(4) == 0)
			exec(db,
			     "UPDATE labels SET discovered = %ld WHERE "
			     "commit_id = %d",
			     date + (long)rnd(200) * 1000, id);
	}
}

static void make_history(struct db *db)
{
	int i;

	assert_int_equal(db_begin(db), 0);
	exec(db, "INSERT INTO repos (id, path, tip, mined_at) VALUES "
		 "(1, '/syn/one', 'a1', 1), (2, '/syn/two', 'b1', 1)");
	for (i = 1; i <= NPEOPLE; i++)
		exec(db,
		     "INSERT INTO people (id, email) VALUES (%d, "
		     "'p%d@example.org')",
		     i, i);
	add_commits(db, 1, 0, NCOMMITS);
	add_commits(db, 2, 0, NCOMMITS / 4);
	assert_int_equal(db_commit(db), 0);
}

static void file_diff(struct buf *d, const char *path)
{
	const char *other = paths[rnd(NPATHS)];

	switch (rnd(5)) {
	case 0:
		buf_addf(d,
			 "diff --git a/%s b/%s\nnew file mode 100644\n"
			 "--- /dev/null\n+++ b/%s\n@@ -0,0 +1 @@\n+y\n",
			 path, path, path);
		break;
	case 1:
		buf_addf(d,
			 "diff --git a/%s b/%s\ndeleted file mode 100644\n"
			 "--- a/%s\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
			 path, path, path);
		break;
	case 2:
		buf_addf(d,
			 "diff --git a/%s b/%s\nsimilarity index 90%%\n"
			 "rename from %s\nrename to %s\n--- a/%s\n+++ b/%s\n"
			 "@@ -1 +1 @@\n-x\n+y\n",
			 path, other, path, other, path, other);
		break;
	default:
		buf_addf(d,
			 "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n"
			 "@@ -1 +1 @@\n-x\n+y\n",
			 path, path, path, path);
	}
}

static struct patch *random_patch(void)
{
	static const char *const keys[] = {
		"Reviewed-by",
		"Acked-by",
		"Tested-by",
		"Signed-off-by",
	};
	struct buf d = BUF_INIT, m = BUF_INIT;
	struct patch *p;
	unsigned i, nused = 0, n = 1 + rnd(4), who = rnd(NPEOPLE + 3);
	const char *used[4], *subj;

	assert_int_equal(patch_new(&p), 0);
	p->source = PATCH_FROM_MAIL;
	subj = subjects[rnd(NSUBJECTS)];
	subject_clear(&p->subject);
	assert_int_equal(subject_parse(&p->subject, subj, strlen(subj)), 0);
	/* p10, p11: unknown addresses; NPEOPLE + 2: none */
	if (who < NPEOPLE + 2) {
		char e[32];

		snprintf(e, sizeof(e), "p%u@example.org", who + 1);
		p->author.email = strdup(e);
	}
	/* before all, on a commit's date, between, after all */
	p->author_date = BASE + (int64_t)rnd(NCOMMITS / 2 + 40) * 1000 - 20000 +
			 (rnd(3) ? 0 : 500);
	for (i = 0; i < n; i++) {
		const char *path = rnd(8) ? paths[rnd(NPATHS)] : "new/file.c";
		unsigned k;

		for (k = 0; k < nused && strcmp(used[k], path); k++)
			;
		if (k < nused)
			continue; /* git names a path once */
		used[nused++] = path;
		file_diff(&d, path);
	}
	buf_addstr(&m, "Fix a thing.\n\n");
	for (i = rnd(4); i > 0; i--)
		buf_addf(&m, "%s: P <p%u@example.org>\n", keys[rnd(4)],
			 1 + rnd(NPEOPLE + 1));
	buf_addstr(&m, "Signed-off-by: Q <q@example.org>\n");
	assert_int_equal(patch_set_message(p, m.ptr, m.len), 0);
	assert_int_equal(patch_set_diff(p, d.ptr, d.len), 0);
	buf_free(&d);
	buf_free(&m);
	return p;
}

static int same_tab(const struct feat_vec *a, const struct feat_vec *b)
{
	size_t i;
	int same = 1;

	for (i = 0; i < FEAT_NTAB; i++) {
		if (isnan(a->tab[i]) && isnan(b->tab[i]))
			continue;
		if (a->tab[i] != b->tab[i]) {
			fprintf(stderr, "%s: summary %.9g, sql %.9g\n",
				feat_name(i), a->tab[i], b->tab[i]);
			same = 0;
		}
	}
	return same;
}

/*
 * N random patches, scored with and without the summary of REPO; how
 * many had all of the history columns below non-trivial, and in *seen a
 * bit for each column that was in some patch.
 */
static unsigned compare_repo(struct db *db, int64_t repo, unsigned n,
			     unsigned *seen)
{
	static const enum feat_id cols[] = {
		FEAT_NUC,	FEAT_SEXP,	  FEAT_REV_PRIOR,
		FEAT_FILE_BUGS, FEAT_AUTHOR_BUGS, FEAT_COMP_CHANGES,
	};
	unsigned k, all;
	struct feat_ctx *fast, *slow;
	unsigned i, hist = 0;

	assert_int_equal(feat_ctx_new(&fast, db, repo), 0);
	assert_int_equal(feat_ctx_new(&slow, db, repo), 0);
	feat_ctx_no_summary(slow);
	for (i = 0; i < n; i++) {
		struct patch *p = random_patch();
		struct feat_vec a, b;

		assert_int_equal(feat_compute(&a, fast, p, NULL, 12, 0), 0);
		assert_int_equal(feat_compute(&b, slow, p, NULL, 12, 0), 0);
		assert_true(same_tab(&a, &b));
		/* the cases must not be trivial: history found */
		for (k = 0, all = 1; k < sizeof(cols) / sizeof(cols[0]); k++)
			if (a.tab[cols[k]] > (cols[k] == FEAT_NUC))
				*seen |= 1u << k;
			else
				all = 0;
		hist += all;
		feat_vec_free(&a);
		feat_vec_free(&b);
		patch_free(p);
	}
	feat_ctx_free(fast);
	feat_ctx_free(slow);
	return hist;
}

static unsigned compare(struct db *db, unsigned n)
{
	unsigned seen = 0;

	return compare_repo(db, 1, n, &seen);
}

static void test_summary_is_the_sql(void **state)
{
	char dir[] = "/tmp/pt-histsum-XXXXXX", path[64], cmd[96];
	struct db *db;
	int cur = -1;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.db", dir);
	assert_int_equal(db_open(&db, path, &scoring_db_owners), 0);
	make_history(db);
	assert_int_equal(histsum_current(&cur, db, 1), 0);
	assert_int_equal(cur, 0);
	/* the first context builds it */
	assert_true(compare(db, 400) > 20);
	assert_int_equal(histsum_current(&cur, db, 1), 0);
	assert_int_equal(cur, 1);
	assert_int_equal(histsum_current(&cur, db, 2), 0);
	assert_int_equal(cur, 0);

	/* a later mine run: more commits, a new tip; stale, then rebuilt */
	add_commits(db, 1, NCOMMITS, NCOMMITS / 2);
	exec(db, "UPDATE repos SET tip = 'a2', mined_at = 2 WHERE id = 1");
	assert_int_equal(histsum_current(&cur, db, 1), 0);
	assert_int_equal(cur, 0);
	assert_true(compare(db, 300) > 20);
	assert_int_equal(histsum_current(&cur, db, 1), 0);
	assert_int_equal(cur, 1);
	/* labels changed by a run that did not rebuild: mined_at tells */
	exec(db,
	     "UPDATE labels SET bug = 1 - coalesce(bug, 0), discovered "
	     "= %d",
	     BASE + 50000);
	exec(db, "UPDATE repos SET mined_at = 3 WHERE id = 1");
	assert_true(compare(db, 200) > 20);
	db_close(db);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* A patch by p1 changing every path, dated DATE. */
static struct patch *every_path_patch(int64_t date)
{
	struct buf d = BUF_INIT;
	struct patch *p;
	size_t i;

	assert_int_equal(patch_new(&p), 0);
	p->source = PATCH_FROM_MAIL;
	assert_int_equal(subject_parse(&p->subject, subjects[0],
				       strlen(subjects[0])),
			 0);
	p->author.email = strdup("p1@example.org");
	p->author_date = date;
	for (i = 0; i < NPATHS; i++)
		file_diff(&d, paths[i]);
	assert_int_equal(patch_set_message(p, "Fix.\n", 5), 0);
	assert_int_equal(patch_set_diff(p, d.ptr, d.len), 0);
	buf_free(&d);
	return p;
}

/* The summary and the SQL agree on p; its NUC. */
static float compare_one(struct feat_ctx *fast, struct feat_ctx *slow,
			 struct patch *p)
{
	struct feat_vec a, b;
	float nuc;

	assert_int_equal(feat_compute(&a, fast, p, NULL, 12, 0), 0);
	assert_int_equal(feat_compute(&b, slow, p, NULL, 12, 0), 0);
	assert_true(same_tab(&a, &b));
	nuc = a.tab[FEAT_NUC];
	feat_vec_free(&a);
	feat_vec_free(&b);
	patch_free(p);
	return nuc;
}

/*
 * The lookups reuse their sets of commits and authors between patches:
 * a patch over a long history grows them (past 512 commits, twice),
 * and the small patches after it must find them empty.
 */
static void test_large_then_small(void **state)
{
	char dir[] = "/tmp/pt-histsum-XXXXXX", path[64], cmd[96];
	struct feat_ctx *fast, *slow;
	struct db *db;
	int round, i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.db", dir);
	assert_int_equal(db_open(&db, path, &scoring_db_owners), 0);
	assert_int_equal(db_begin(db), 0);
	exec(db, "INSERT INTO repos (id, path, tip, mined_at) VALUES "
		 "(1, '/syn/one', 'a1', 1)");
	for (i = 1; i <= NPEOPLE; i++)
		exec(db,
		     "INSERT INTO people (id, email) VALUES (%d, "
		     "'p%d@example.org')",
		     i, i);
	add_commits(db, 1, 0, 3 * NCOMMITS);
	assert_int_equal(db_commit(db), 0);
	assert_int_equal(feat_ctx_new(&fast, db, 1), 0);
	assert_int_equal(feat_ctx_new(&slow, db, 1), 0);
	feat_ctx_no_summary(slow);
	for (round = 0; round < 3; round++) {
		struct patch *big = every_path_patch(
			BASE + (int64_t)(3 * NCOMMITS + 40) * 1000 / 2 +
			round * 1000);

		assert_true(compare_one(fast, slow, big) > 2 * 512);
		for (i = 0; i < 30; i++)
			compare_one(fast, slow, random_patch());
	}
	feat_ctx_free(fast);
	feat_ctx_free(slow);
	db_close(db);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A git history over the same paths, people and subjects: phase 2 adds
 * commits, one of them fixing a phase 1 commit (a new bug label).
 */
static const char script[] =
	"set -e\n"
	"cd \"$1\"\n"
	"c() { printf '%s\\n\\nReviewed-by: R <p%s@example.org>\\n' \"$4\" "
	"\"$5\" > ../m; [ -z \"$6\" ] || printf 'Fixes: %s (\"x\")\\n' \"$6\" "
	">> ../m; git add -A; GIT_AUTHOR_DATE=\"@$1 +0000\" "
	"GIT_COMMITTER_DATE=\"@$1 +0000\" GIT_AUTHOR_NAME=\"$2\" "
	"GIT_AUTHOR_EMAIL=\"$3\" git commit -q -F ../m; }\n"
	"e() { mkdir -p \"$(dirname \"$1\")\"; echo \"$2\" >> \"$1\"; }\n"
	"if [ \"$2\" = 1 ]; then\n"
	"git init -q -b main .\n"
	"git config user.name C; git config user.email c@example.org\n"
	"e lib/a.c 1; e README 1; c 1600000000 A p1@example.org 'lib: a' 4\n"
	"e lib/a.c 2; e drivers/net/x.c 1; c 1600020000 B p2@example.org "
	"'net/x: add a queue' 5\n"
	"git rev-parse HEAD > ../bug.sha\n"
	"e drivers/net/x.c 2; e lib/b.c 1; c 1600040000 A p1@example.org "
	"'net/x: b' 4\n"
	"e lib/b.c 2; git rm -q README; c 1600060000 C p3@example.org "
	"'lib: c' 6\n"
	"else\n"
	"e drivers/net/x.c 3; c 1600080000 A p1@example.org "
	"'net/x: fix a leak' 5 $(cat ../bug.sha)\n"
	"git mv lib/b.c lib/b.h; e lib/a.c 3; c 1600100000 B p2@example.org "
	"'lib: d' 4\n"
	"e drivers/net/x.c 4; e MAINTAINERS 1; c 1600120000 B p2@example.org "
	"'net/x: e' 6\n"
	"fi\n";

static void mine_phase(const char *dir, struct db *db, int phase)
{
	char cmd[512], path[128];
	struct mine_result res;
	struct mine_opts o;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/mk.sh", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(script, fp);
	fclose(fp);
	snprintf(cmd, sizeof(cmd), "sh %s %s/repo %d >/dev/null 2>&1", path,
		 dir, phase);
	assert_int_equal(system(cmd), 0);
	memset(&o, 0, sizeof(o));
	snprintf(path, sizeof(path), "%s/repo", dir);
	o.repo = path;
	o.threads = 1;
	o.summarise = histsum_build;
	assert_int_equal(mine_run(&res, db, &o), 0);
}

static void test_mine_keeps_it_current(void **state)
{
	char dir[] = "/tmp/pt-histsum-XXXXXX", path[64], cmd[96];
	struct db *db;
	int64_t repo;
	unsigned seen = 0;
	int cur = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/repo", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/state.db", dir);
	assert_int_equal(db_open(&db, path, &scoring_db_owners), 0);
	mine_phase(dir, db, 1);
	snprintf(path, sizeof(path), "%s/repo", dir);
	assert_int_equal(mine_repo_id(&repo, db, path), 0);
	assert_int_equal(histsum_current(&cur, db, repo), 0);
	assert_int_equal(cur, 1);
	compare_repo(db, repo, 200, &seen);
	mine_phase(dir, db, 2);
	assert_int_equal(histsum_current(&cur, db, repo), 0);
	assert_int_equal(cur, 1);
	/* the fix of phase 2 is seen: past bugs, and equal to the SQL */
	seen = 0;
	compare_repo(db, repo, 300, &seen);
	assert_int_equal(seen, 0x3f);
	db_close(db);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_is_the_sql),
		cmocka_unit_test(test_large_then_small),
		cmocka_unit_test(test_mine_keeps_it_current),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
