/*
 * test_history.c - mining, release phases, labels and history features
 * over the synthetic repository of tests/data/history/mkrepo.sh (built
 * with the git CLI in a temporary directory): exact phases and soak
 * times, labels from full, abbreviated, ambiguous, wrong and missing ids
 * and a revert, the three trivial-fix rules, the horizon, Kamei features,
 * reviewer track records as of each commit, .mailmap, MAINTAINERS, and an
 * incremental second run.
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
#include <unistd.h>

#include "scoring/history/cycle.h"
#include "scoring/store/db.h"
#include "scoring/history/history.h"
#include "scoring/model/histsum.h"
#include "scoring/history/labels.h"
#include "scoring/model/schema.h"

#define DAY 86400
#define T0 1577836800 /* commit n is dated T0 + n days */

struct fx {
	char dir[64];
	char repo[96];
	struct db *db;
	struct mine_result res;
};

__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int mine(struct fx *f)
{
	struct mine_opts o;

	memset(&o, 0, sizeof(o));
	o.repo = f->repo;
	o.threads = 2;
	o.horizon_days = 3;
	o.summarise = histsum_build;
	return mine_run(&f->res, f->db, &o);
}

static int setup(void **state)
{
	const char *src = getenv("PT_SOURCE_DIR");
	struct fx *f = calloc(1, sizeof(*f));
	char path[160];

	if (!f || !src)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/pt-history-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->repo, sizeof(f->repo), "%s/repo", f->dir);
	if (run("mkdir %s && sh %s/tests/data/history/mkrepo.sh %s "
		">/dev/null 2>&1",
		f->repo, src, f->repo))
		return -1;
	snprintf(path, sizeof(path), "%s/state.db", f->dir);
	if (db_open(&f->db, path, &scoring_db_owners) || mine(f))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	db_close(f->db);
	run("rm -rf %s", f->dir);
	free(f);
	return 0;
}

/* One integer (or -1 for NULL) from SQL with one '?' bound to ARG. */
static long long q_int(struct fx *f, const char *sql, const char *arg)
{
	sqlite3_stmt *st;
	long long v = -2;

	assert_int_equal(db_prepare(&st, f->db, sql), 0);
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL
			    ? -1
			    : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static double q_real(struct fx *f, const char *sql, const char *arg)
{
	sqlite3_stmt *st;
	double v = -2;

	assert_int_equal(db_prepare(&st, f->db, sql), 0);
	sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

static char *q_text(struct fx *f, const char *sql, const char *arg)
{
	sqlite3_stmt *st;
	char *v = NULL;

	assert_int_equal(db_prepare(&st, f->db, sql), 0);
	sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v ? v : strdup("(null)");
}

#define LABEL(col)                                                 \
	"SELECT l." col " FROM labels l JOIN commits c ON c.id = " \
	"l.commit_id WHERE c.subject = ?"
#define COMMIT(col) "SELECT " col " FROM commits WHERE subject = ?"
#define FEAT(col)                                                    \
	"SELECT f." col " FROM features f JOIN commits c ON c.id = " \
	"f.commit_id WHERE c.subject = ?"

static void expect_text(struct fx *f, const char *sql, const char *arg,
			const char *want)
{
	char *v = q_text(f, sql, arg);

	if (strcmp(v, want))
		fail_msg("%s [%s]: got '%s', want '%s'", sql, arg, v, want);
	free(v);
}

static void test_counts(void **state)
{
	struct fx *f = *state;

	assert_int_equal(f->res.walked, 16);
	assert_int_equal(f->res.commits, 16);
	assert_int_equal(f->res.tags, 8);
	assert_int_equal(f->res.uncounted, 0);
	assert_int_equal(f->res.with_fixes, 8);
	assert_int_equal(f->res.fixes, 9); /* + Cc: stable@dpdk.org */
	assert_int_equal(f->res.refs, 9);
	assert_int_equal(f->res.refs_full, 3);
	assert_int_equal(f->res.refs_prefix, 3);
	assert_int_equal(f->res.refs_subject, 2);
	assert_int_equal(f->res.refs_unresolved, 1);
	assert_int_equal(f->res.trivial_nocode, 1);
	assert_int_equal(f->res.trivial_spelling, 1);
	assert_int_equal(f->res.trivial_race, 1);
	assert_int_equal(f->res.bugs, 5);
}

static void test_phases(void **state)
{
	static const struct {
		const char *subject, *tag, *phase;
		int rc, after_last;
		long long soak;
	} want[] = {
		{ "initial", "v1.0", "no-rc", -1, 0, 0 },
		{ "a: add feature", "v1.1-rc1", "merge-window", 0, 0, DAY },
		{ "x: add helper", "v1.1-rc1", "merge-window", 0, 0, 0 },
		{ "x: tweak", "v1.1-rc2", "rc1", 1, 0, 0 },
		{ "b: add b", "v1.1-rc3", "rc2", 2, 0, DAY },
		{ "x: fix helper", "v1.1-rc4", "rc3", 3, 0, 0 },
		{ "b: fix b", "v1.1-rc5", "rc4", 4, 0, 0 },
		{ "a: fix comment", "v1.1-rc6", "rc5", 5, 0, 3 * DAY },
		{ "a: add more", "v1.1", "rc6", 6, 1, 2 * DAY },
		{ "b: stable thing", "(null)", "unreleased", -1, -1, -1 },
	};
	struct fx *f = *state;
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *s = want[i].subject;

		expect_text(f, COMMIT("tag"), s, want[i].tag);
		expect_text(f, COMMIT("phase"), s, want[i].phase);
		assert_int_equal(q_int(f, COMMIT("coalesce(rc, -1)"), s),
				 want[i].rc);
		assert_int_equal(q_int(f,
				       COMMIT("coalesce(after_last_rc, "
					      "-1)"),
				       s),
				 want[i].after_last);
		assert_int_equal(q_int(f, COMMIT("coalesce(soak, -1)"), s),
				 want[i].soak);
	}
	expect_text(f, COMMIT("release"), "x: tweak", "v1.1");
}

static void test_refs(void **state)
{
	static const struct {
		const char *fixer, *how, *why, *trivial, *target;
	} want[] = {
		{ "a: fix feature", "full", "(null)", "(null)",
		  "a: add feature" },
		{ "x: fix helper", "prefix", "(null)", "(null)",
		  "x: add helper" },
		{ "x: fix tweak", "subject", "ambiguous", "(null)",
		  "x: tweak" },
		{ "b: fix b", "subject", "missing", "(null)", "b: add b" },
		{ "a: fix comment", "prefix", "(null)", "nocode",
		  "a: add feature" },
		{ "README: fix spelling", "full", "(null)", "spelling",
		  "initial" },
		{ "x: avoid a race", "prefix", "(null)", "race", "x: tweak" },
		{ "b: rework", "unresolved", "missing", "(null)", "(null)" },
		{ "Revert \"a: add more\"", "full", "(null)", "(null)",
		  "a: add more" },
	};
	struct fx *f = *state;
	size_t i;

#define REF(col)                                                       \
	"SELECT " col " FROM fix_refs r JOIN commits c ON c.id = "     \
	"r.commit_id LEFT JOIN commits t ON t.id = r.target_id WHERE " \
	"c.subject = ?"
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		expect_text(f, REF("r.how"), want[i].fixer, want[i].how);
		expect_text(f, REF("r.why"), want[i].fixer, want[i].why);
		expect_text(f, REF("r.trivial"), want[i].fixer,
			    want[i].trivial);
		expect_text(f, REF("t.subject"), want[i].fixer, want[i].target);
	}
	expect_text(f, REF("r.kind"), "Revert \"a: add more\"", "revert");
}

static void test_labels(void **state)
{
	static const struct {
		const char *subject;
		int fix, stable, bug, trivial_only, negative_ok;
		long long discovered; /* days after T0, -1 = NULL */
	} want[] = {
		{ "initial", 0, 0, 0, 1, 1, -1 },
		{ "a: add feature", 0, 0, 1, 0, 1, 6 },
		{ "x: add helper", 0, 0, 1, 0, 1, 7 },
		{ "x: tweak", 0, 0, 1, 0, 1, 8 },
		{ "b: add b", 0, 0, 1, 0, 1, 9 },
		{ "a: fix feature", 1, 0, 0, 0, 1, -1 },
		{ "x: fix helper", 1, 1, 0, 0, 1, -1 },
		{ "b: rework", 1, 0, 0, 0, 1, -1 },
		{ "a: add more", 0, 0, 1, 0, 1, 15 },
		/* younger than the 3-day horizon: not a negative */
		{ "Revert \"a: add more\"", 0, 0, 0, 0, 0, -1 },
		{ "b: stable thing", 1, 1, 0, 0, 0, -1 },
	};
	struct fx *f = *state;
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *s = want[i].subject;
		long long d = q_int(f, LABEL("discovered"), s);

		assert_int_equal(q_int(f, LABEL("is_fix"), s), want[i].fix);
		assert_int_equal(q_int(f, LABEL("is_stable"), s),
				 want[i].stable);
		assert_int_equal(q_int(f, LABEL("bug"), s), want[i].bug);
		assert_int_equal(q_int(f, LABEL("trivial_only"), s),
				 want[i].trivial_only);
		assert_int_equal(q_int(f, LABEL("negative_ok"), s),
				 want[i].negative_ok);
		assert_int_equal(d, want[i].discovered < 0
					    ? -1
					    : T0 + want[i].discovered * DAY);
	}
	assert_int_equal(q_int(f, COMMIT("doc_only"), "a: fix comment"), 1);
	assert_int_equal(q_int(f, COMMIT("doc_only"), "a: fix feature"), 0);
}

static void test_features(void **state)
{
	struct fx *f = *state;
	const char *s = "b: rework"; /* Carol, src/b.c and lib/x.c, day 13 */
	double rexp = 1.0 / (1.0 + 8.0 / 365.25) + 1.0 / (1.0 + 1.0 / 365.25);

	assert_int_equal(q_int(f, FEAT("ns"), s), 2);
	assert_int_equal(q_int(f, FEAT("nd"), s), 2);
	assert_int_equal(q_int(f, FEAT("nf"), s), 2);
	assert_true(fabs(q_real(f, FEAT("entropy"), s) - 1.0) < 1e-9);
	assert_int_equal(q_int(f, FEAT("la"), s), 2);
	assert_int_equal(q_int(f, FEAT("ld"), s), 2);
	assert_int_equal(q_int(f, FEAT("lt"), s), 9);
	assert_int_equal(q_int(f, FEAT("ndev"), s), 3);
	assert_true(fabs(q_real(f, FEAT("age"), s) - 2.5) < 1e-9);
	assert_int_equal(q_int(f, FEAT("nuc"), s), 7);
	assert_int_equal(q_int(f, FEAT("exp"), s), 2);
	assert_true(fabs(q_real(f, FEAT("rexp"), s) - rexp) < 1e-9);
	assert_int_equal(q_int(f, FEAT("sexp"), s), 2);

	/* Alice through .mailmap: "initial" was alice@old.example */
	s = "a: fix feature";
	assert_int_equal(q_int(f, FEAT("exp"), s), 2);
	assert_int_equal(q_int(f, FEAT("sexp"), s), 1);
	assert_int_equal(q_int(f, FEAT("ndev"), s), 2);
	assert_int_equal(q_int(f, FEAT("nuc"), s), 2);
	assert_int_equal(q_int(f, FEAT("lt"), s), 12);
	assert_true(fabs(q_real(f, FEAT("age"), s) - 4.0) < 1e-9);
	assert_int_equal(q_int(f,
			       "SELECT count(*) FROM people WHERE email "
			       "LIKE '%old.example'",
			       NULL),
			 0);
}

static void test_reviews(void **state)
{
	static const struct {
		const char *subject, *email;
		int maint, prior, prior_bug;
	} want[] = {
		/* Carol wrote carol@old.example; R: of LIB ("F: lib") */
		{ "x: tweak", "carol@example.org", 1, 0, 0 },
		{ "a: fix feature", "dave@example.org", 1, 0, 0 },
		/* "x: tweak" was found buggy on day 8, after this (day 6) */
		{ "a: fix feature", "carol@example.org", 0, 1, 0 },
		{ "a: add more", "carol@example.org", 0, 2, 1 },
	};
	struct fx *f = *state;
	char sql[512];
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *cols[] = { "r.is_maintainer", "r.prior",
				       "r.prior_bug" };
		int vals[] = { want[i].maint, want[i].prior,
			       want[i].prior_bug };
		size_t k;

		for (k = 0; k < 3; k++) {
			snprintf(sql, sizeof(sql),
				 "SELECT %s FROM reviews r JOIN commits c ON "
				 "c.id = r.commit_id JOIN people p ON p.id = "
				 "r.person_id WHERE c.subject = ? AND "
				 "p.email = '%s'",
				 cols[k], want[i].email);
			assert_int_equal(q_int(f, sql, want[i].subject),
					 vals[k]);
		}
	}
	assert_int_equal(q_int(f, "SELECT count(*) FROM reviews", NULL), 4);
	expect_text(f,
		    "SELECT subsystem FROM commit_files WHERE path = ? "
		    "LIMIT 1",
		    "lib/x.c", "LIB");
	expect_text(f,
		    "SELECT subsystem FROM commit_files WHERE path = ? "
		    "LIMIT 1",
		    "src/a.c", "SRC");
	expect_text(f,
		    "SELECT subsystem FROM commit_files WHERE path = ? "
		    "LIMIT 1",
		    "README", "");
}

static void test_report(void **state)
{
	struct fx *f = *state;
	struct buf b = BUF_INIT;

	assert_int_equal(labels_report(&b, f->db, f->res.repo_id), 0);
	assert_non_null(strstr(b.ptr, "unresolved 1"));
	assert_non_null(strstr(b.ptr, "fixes '0123456789ab' (\"no such "
				      "commit\") missing"));
	assert_non_null(strstr(b.ptr, "nocode 1, spelling 1, race 1"));
	buf_free(&b);
}

static void test_cycle_stats(void **state)
{
	struct fx *f = *state;
	struct cycle_stats s;
	struct buf b = BUF_INIT;

	/* horizon 0: all released commits; late = first released in rc5+ */
	assert_int_equal(cycle_stats(&s, f->db, f->res.repo_id, 5, 0, 200, 7),
			 0);
	assert_int_equal(s.nphases, 6);
	/* merge window: "a: add feature" (3+1) and "x: add helper" (5) */
	assert_string_equal(s.phases[0].name, "merge-window");
	assert_int_equal(s.phases[0].commits, 2);
	assert_int_equal(s.phases[0].lines, 9);
	assert_int_equal(s.phases[0].bugs, 2);
	/* rc5+: the two commits of rc5 (2+2), the four of rc6 (1+2+2+4) */
	assert_string_equal(s.phases[4].name, "rc5+");
	assert_true(s.phases[4].late);
	assert_int_equal(s.phases[4].commits, 6);
	assert_int_equal(s.phases[4].lines, 13);
	assert_int_equal(s.phases[4].bugs, 0);
	/* final: "a: add more" (2), reverted */
	assert_string_equal(s.phases[5].name, "final");
	assert_false(s.phases[5].late);
	assert_int_equal(s.phases[5].commits, 1);
	assert_int_equal(s.phases[5].lines, 2);
	assert_int_equal(s.phases[5].bugs, 1);
	assert_true(fabs(s.ratio) < 1e-9);
	assert_int_equal(cycle_stats_svg(&b, &s), 0);
	assert_non_null(strstr(b.ptr, "<svg"));
	assert_non_null(strstr(b.ptr, ">rc5+</text>"));
	buf_reset(&b);
	assert_int_equal(cycle_stats_table(&b, &s), 0);
	assert_non_null(strstr(b.ptr, "merge-window         2          9"));
	buf_free(&b);
	cycle_stats_clear(&s);
}

/*
 * A mirror whose folder holds no config (no core.bare), as a fetched
 * snapshot does: git takes it for a bare repository and reads no
 * .gitattributes from the folder above it; libgit2, left alone, takes
 * that folder for the work tree.  A "* binary" there must not make every
 * file binary: the numstat is the same as the work tree clone's.
 */
static void test_mirror_attributes(void **state)
{
	struct fx *f = *state, m;
	char path[160];
	const char *sql = "SELECT sum(added) * 1000 + sum(removed) + "
			  "1000000 * sum(binary) FROM commit_files";

	memset(&m, 0, sizeof(m));
	snprintf(m.repo, sizeof(m.repo), "%s/m/mirror", f->dir);
	assert_int_equal(run("mkdir -p %s && cp -R %s/.git/. %s && "
			     "rm %s/config && echo '* binary' > %s/m/"
			     ".gitattributes",
			     m.repo, f->repo, m.repo, m.repo, f->dir),
			 0);
	snprintf(path, sizeof(path), "%s/m/state.db", f->dir);
	assert_int_equal(db_open(&m.db, path, &scoring_db_owners), 0);
	assert_int_equal(mine(&m), 0);
	assert_int_equal(m.res.commits, 16);
	assert_true(q_int(f, sql, NULL) > 0);
	assert_int_equal(q_int(&m, sql, NULL), q_int(f, sql, NULL));
	db_close(m.db);
}

static void test_incremental(void **state)
{
	struct fx *f = *state;
	const char *src = getenv("PT_SOURCE_DIR");

	assert_int_equal(run("sh %s/tests/data/history/mkrepo.sh %s more", src,
			     f->repo),
			 0);
	assert_int_equal(mine(f), 0);
	assert_int_equal(f->res.walked, 1);
	assert_int_equal(f->res.commits, 17);
	assert_int_equal(q_int(f, COMMIT("seq"), "b: one more"), 16);
	assert_int_equal(q_int(f, FEAT("exp"), "b: one more"), 6);
	/* labels are recomputed over the whole history, not duplicated */
	assert_int_equal(q_int(f, "SELECT count(*) FROM fix_refs", NULL), 9);
	assert_int_equal(mine(f), 0);
	assert_int_equal(f->res.walked, 0);
}

static void test_tag_parse(void **state)
{
	static const struct {
		const char *name, *release;
		int rc;
	} want[] = {
		{ "v6.7-rc3", "v6.7", 3 },     { "v6.7", "v6.7", 0 },
		{ "v23.11-rc1", "v23.11", 1 }, { "v8.2.0-rc1", "v8.2.0", 1 },
		{ "v8.2.0", "v8.2.0", 0 },     { "v2.6.39", "v2.6.39", 0 },
	};
	struct cycle_tag a, b;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(cycle_parse_tag(&a, want[i].name, NULL), 1);
		assert_string_equal(a.release, want[i].release);
		assert_int_equal(a.rc, want[i].rc);
		cycle_tag_clear(&a);
	}
	assert_int_equal(cycle_parse_tag(&a, "v1.2.3r0", NULL), 0);
	assert_int_equal(cycle_parse_tag(&a, "next-20240101", NULL), 0);
	assert_true(cycle_parse_tag(&a, "x", "([") < 0);
	/* the rc number: up to INT_MAX; past it the tag does not parse */
	assert_int_equal(cycle_parse_tag(&a, "v6.7-rc2147483647", NULL), 1);
	assert_int_equal(a.rc, 2147483647);
	cycle_tag_clear(&a);
	assert_int_equal(cycle_parse_tag(&a, "v6.7-rc2147483648", NULL), 0);
	assert_int_equal(cycle_parse_tag(&a, "v6.7-rc99999999999999999999",
					 NULL),
			 0);
	/* version order: rc9 < rc10 < final < next rc1 */
	assert_int_equal(cycle_parse_tag(&a, "v6.7-rc9", NULL), 1);
	assert_int_equal(cycle_parse_tag(&b, "v6.7-rc10", NULL), 1);
	assert_true(cycle_tag_cmp(&a, &b) < 0);
	cycle_tag_clear(&b);
	assert_int_equal(cycle_parse_tag(&b, "v6.7", NULL), 1);
	assert_true(cycle_tag_cmp(&a, &b) < 0);
	cycle_tag_clear(&a);
	assert_int_equal(cycle_parse_tag(&a, "v6.10-rc1", NULL), 1);
	assert_true(cycle_tag_cmp(&b, &a) < 0);
	cycle_tag_clear(&a);
	cycle_tag_clear(&b);
}

static void test_word_rules(void **state)
{
	struct labels_conf *c, *file;
	const char *src = getenv("PT_SOURCE_DIR");
	char path[512];
#define W(s) labels_word_rule(c, s, strlen(s))

	(void)state;
	assert_int_equal(labels_conf_load(&c, NULL), 0);
	assert_int_equal(W("net: fix typos in comments"), LABELS_SPELLING);
	assert_int_equal(W("Fix kernel-doc warnings"), LABELS_SPELLING);
	assert_int_equal(W("checkpatch: fix"), LABELS_SPELLING);
	assert_int_equal(W("Fix a potential race in open"), LABELS_RACE);
	assert_int_equal(W("Fix a potential race that leads to a crash"), -1);
	assert_int_equal(W("A race causes memory corruption"), -1);
	assert_int_equal(W("fix race; this is theoretical"), -1);
	assert_int_equal(W("fix the trace buffer"), -1);
	assert_int_equal(W("fix NULL dereference"), -1);
	assert_int_equal(labels_doc_path(c, "doc/guides/a.rst"), 1);
	assert_int_equal(labels_doc_path(c, "lib/a.c"), 0);
	/* the built-in lists are the shipped conf/labels.conf */
	snprintf(path, sizeof(path), "%s/conf/labels.conf", src);
	assert_int_equal(labels_conf_load(&file, path), 0);
	assert_true(labels_conf_equal(c, file));
	labels_conf_free(file);
	assert_true(labels_conf_load(&file, "/nonexistent/labels.conf") < 0);
	assert_null(file);
	labels_conf_free(c);
}

/* Two lines have the same code: only comments, string text, blanks differ. */
static int same_code(const char *a, const char *b, int hash)
{
	return labels_code_hash(1, a, strlen(a), hash) ==
	       labels_code_hash(1, b, strlen(b), hash);
}

static void test_code_lines(void **state)
{
	(void)state;
	/* a typo in a string or a comment is not code */
	assert_true(same_code("\tpr_info(\"recieve done\\n\");",
			      "\tpr_info(\"receive done\\n\");", 0));
	assert_true(
		same_code("x = 1; /* recieve */", "x = 1; /* receive */", 0));
	assert_true(same_code("x = 1; // recieve", "x=1; // receive", 0));
	assert_true(same_code("s = \"a \\\"qoute\\\"\";",
			      "s = \"a \\\"quote\\\"\";", 0));
	assert_true(same_code("echo 'helo' # helo", "echo 'hello' # hello", 1));
	/* one in an identifier, a number or a character is */
	assert_false(
		same_code("#define REG_CTRL 0x14", "#define REG_CTRL 0x41", 0));
	assert_false(same_code("recieve_buf(p);", "receive_buf(p);", 0));
	assert_false(same_code("c = '\"'; x = 1;", "c = '\"'; x = 2;", 0));
	assert_false(
		same_code("x = 1; /* a */ y = 2;", "x = 1; /* a */ y = 3;", 0));
	/* '#' is a comment only where the file type says so */
	assert_false(same_code("#define A 1", "#define A 2", 0));
	assert_true(same_code("#define A 1", "#define A 2", 1));
	assert_true(labels_hash_comments("scripts/Makefile.build"));
	assert_false(labels_hash_comments("src/a.c"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_refs),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_reviews),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_cycle_stats),
		cmocka_unit_test(test_mirror_attributes),
		cmocka_unit_test(test_incremental),
	};
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_tag_parse),
		cmocka_unit_test(test_word_rules),
		cmocka_unit_test(test_code_lines),
	};
	int rc;

	if (system("git --version >/dev/null 2>&1"))
		return 77;
	rc = cmocka_run_group_tests(pure, NULL, NULL);
	return rc | cmocka_run_group_tests(tests, setup, teardown);
}
