/*
 * test_archive.c - list archives (scoring/lists/archive.c) and what is derived
 * from them (scoring/lists/outcome.c, scoring/model/listfeat.c).  The test builds a
 * public-inbox with two epochs with libgit2 in a temporary directory: a
 * series posted as v1, v2 and v3 with reviews, a maintainer's b4-style
 * "Applied, thanks!" on v3, a patch applied by a bare "Applied to ...",
 * a later Fixes: posting, a revert, a comment-only fix (trivial), a
 * removal commit and a message with no Message-ID; then the same mail as
 * mboxrd, mboxo and gzip'd mbox.  It asserts the exact series, versions,
 * outcomes, labels and features, and incremental re-import.  On the real
 * 2024 linux-pwm archive (when present) it asserts the counts found.
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
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "scoring/patch/mbox.h"
#include "scoring/lists/archive.h"
#include "scoring/store/db.h"
#include "scoring/model/features.h"
#include "scoring/model/listfeat.h"
#include "scoring/lists/outcome.h"
#include "scoring/util/pt.h"
#include "scoring/model/schema.h"
#include "dbq.h"

#define T0 1704103200 /* 2024-01-01 10:00 UTC */
#define DAY 86400

struct fx {
	char dir[64];
	struct db *db;
};

/* ---- building mail ------------------------------------------------- */

static void add_headers(struct buf *b, const char *id, const char *from,
			int day, const char *subj, const char *irt)
{
	char date[64];
	time_t t = (time_t)(T0 + (int64_t)day * DAY);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	buf_addf(b, "From: %s\nDate: %s\nSubject: %s\n", from, date, subj);
	if (id)
		buf_addf(b, "Message-ID: <%s>\n", id);
	if (irt)
		buf_addf(b, "In-Reply-To: <%s>\nReferences: <%s>\n", irt, irt);
	buf_addstr(b, "List-Id: <linux-pwm.vger.kernel.org>\n"
		      "MIME-Version: 1.0\n"
		      "Content-Type: text/plain; charset=utf-8\n\n");
}

static const char *const ALICE = "Alice Author <alice@example.org>";
static const char *const BOB = "Bob Reviewer <bob@example.org>";
static const char *const CAROL = "Carol Tester <carol@example.org>";
static const char *const UWE = "Uwe Maintainer <uwe@example.org>";
static const char *const DAVE = "Dave Fixer <dave@example.org>";

/*
 * A patch mail with a one-line change to FILE (added line LINE).  Tags
 * after a blank line in LOG join the Signed-off-by paragraph, as in real
 * patches.
 */
static char *patch_mail(const char *id, const char *from, int day,
			const char *subj, const char *irt, const char *log,
			const char *file, const char *line)
{
	struct buf b = BUF_INIT;
	const char *tags = strstr(log, "\n\n");

	add_headers(&b, id, from, day, subj, irt);
	if (tags)
		buf_addf(&b, "%.*s\n\n%s\n", (int)(tags - log), log, tags + 2);
	else
		buf_addf(&b, "%s\n\n", log);
	buf_addf(&b, "Signed-off-by: %s\n---\n"
		     " %s | 1 +\n 1 file changed, 1 insertion(+)\n\n"
		     "diff --git a/%s b/%s\nindex 1111111..2222222 100644\n"
		     "--- a/%s\n+++ b/%s\n@@ -1,3 +1,4 @@\n a\n+%s\n b\n c\n"
		     "-- \n2.43.0\n",
		 from, file, file, file, file, file, line);
	return buf_detach(&b, NULL);
}

static char *text_mail(const char *id, const char *from, int day,
		       const char *subj, const char *irt, const char *body)
{
	struct buf b = BUF_INIT;

	add_headers(&b, id, from, day, subj, irt);
	buf_addstr(&b, body);
	return buf_detach(&b, NULL);
}

#define FOO "drivers/pwm/pwm-foo.c"

/* The whole story, oldest first; NULL entries mark epoch boundaries. */
static char **story(size_t *n)
{
	char **m = calloc(40, sizeof(*m));
	size_t k = 0;

	/* v1 */
	m[k++] = text_mail("c1@x", ALICE, 0, "[PATCH 0/2] pwm: foo: bar",
			   NULL, "This adds bar.\n");
	m[k++] = patch_mail("p11@x", ALICE, 0, "[PATCH 1/2] pwm: foo: Add bar",
			    "c1@x", "Add bar.", FOO, "bar();");
	m[k++] = patch_mail("p12@x", ALICE, 0, "[PATCH 2/2] pwm: foo: Use baz",
			    "c1@x", "Use baz.", FOO, "baz();");
	m[k++] = text_mail("r11@x", BOB, 1, "Re: [PATCH 1/2] pwm: foo: Add bar",
			   "p11@x",
			   "On Mon, Alice wrote:\n> +bar();\n\n"
			   "Why not call bar() later?\n"
			   "Please split the init.\n> b\n\nBob\n");
	/* v2 */
	m[k++] = text_mail("c2@x", ALICE, 3, "[PATCH v2 0/2] pwm: foo: bar",
			   NULL, "Changes since v1: split.\n");
	m[k++] = patch_mail("p21@x", ALICE, 3,
			    "[PATCH v2 1/2] pwm: foo: Add bar", "c2@x",
			    "Add bar.", FOO, "bar(1);");
	m[k++] = patch_mail("p22@x", ALICE, 3,
			    "[PATCH v2 2/2] pwm: foo: Use baz", "c2@x",
			    "Use baz.", FOO, "baz(1);");
	m[k++] = text_mail("r21@x", BOB, 4,
			   "Re: [PATCH v2 1/2] pwm: foo: Add bar", "p21@x",
			   "> +bar(1);\n\nLooks good.\n\n"
			   "Reviewed-by: Bob Reviewer <bob@example.org>\n");
	m[k++] = text_mail(NULL, BOB, 4, "Re: no id", "p21@x",
			   "This message has no Message-ID.\n");
	m[k++] = NULL; /* next epoch */
	/* v3 */
	m[k++] = text_mail("c3@x", ALICE, 6, "[PATCH v3 0/2] pwm: foo: bar",
			   NULL, "Changes since v2: nothing.\n");
	m[k++] = patch_mail("p31@x", ALICE, 6,
			    "[PATCH v3 1/2] pwm: foo: Add bar", "c3@x",
			    "Add bar.\n\nReviewed-by: Bob Reviewer "
			    "<bob@example.org>", FOO, "bar(2);");
	m[k++] = patch_mail("p32@x", ALICE, 6,
			    "[PATCH v3 2/2] pwm: foo: Use baz", "c3@x",
			    "Use baz.", FOO, "baz(2);");
	m[k++] = text_mail("r31@x", CAROL, 7,
			   "Re: [PATCH v3 1/2] pwm: foo: Add bar", "p31@x",
			   "Tested on my board, works.\n\n"
			   "Tested-by: Carol Tester <carol@example.org>\n");
	m[k++] = text_mail("a3@x", UWE, 8, "Re: [PATCH v3 0/2] pwm: foo: bar",
			   "c3@x",
			   "On Sun, Alice wrote:\n> This adds bar.\n\n"
			   "Applied, thanks!\n\n"
			   "[1/2] pwm: foo: Add bar\n"
			   "      commit: 1234567890ab\n"
			   "[2/2] pwm: foo: Use baz\n"
			   "      commit: abcdef123456\n\nBest regards,\n"
			   "-- \nUwe\n");
	/* a single patch applied by a bare notice */
	m[k++] = patch_mail("q1@x", DAVE, 9, "[PATCH] pwm: qux: Add qux", NULL,
			    "Add qux.", "drivers/pwm/pwm-qux.c", "qux();");
	m[k++] = text_mail("aq@x", UWE, 10, "Re: [PATCH] pwm: qux: Add qux",
			   "q1@x", "Applied to\nhttps://git.example.org/pwm.git "
			   "pwm/for-next\n\nUwe\n");
	/* later: a real fix, a revert and a comment-only fix */
	m[k++] = patch_mail("f1@x", DAVE, 20,
			    "[PATCH] pwm: foo: Fix bar overflow", NULL,
			    "Fix an overflow.\n\nFixes: 1234567890ab (\"pwm: foo: "
			    "Add bar\")\nCc: stable@vger.kernel.org", FOO,
			    "if (x > 1) return;");
	m[k++] = patch_mail("v1@x", DAVE, 21,
			    "[PATCH] Revert \"pwm: foo: Use baz\"", NULL,
			    "This reverts commit abcdef123456, it broke "
			    "things.", FOO, "old();");
	m[k++] = patch_mail("t1@x", DAVE, 22,
			    "[PATCH] pwm: qux: Fix a comment", NULL,
			    "Fix a comment.\n\nFixes: 0000000 (\"pwm: qux: Add "
			    "qux\")", "drivers/pwm/pwm-qux.c",
			    "/* the right words */");
	*n = k;
	return m;
}

static void story_free(char **m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(m[i]);
	free(m);
}

/* ---- building a public-inbox --------------------------------------- */

static void pi_commit(git_repository *r, const char *name, const char *msg,
		      size_t len)
{
	git_treebuilder *tb;
	git_oid blob, tree, commit, parent;
	git_tree *t;
	git_commit *pc = NULL;
	git_signature *sig;
	int has_parent;

	has_parent = !git_reference_name_to_id(&parent, r, "refs/heads/master");
	if (has_parent)
		assert_int_equal(git_commit_lookup(&pc, r, &parent), 0);
	git_error_clear();
	assert_int_equal(git_blob_create_from_buffer(&blob, r, msg, len), 0);
	assert_int_equal(git_treebuilder_new(&tb, r, NULL), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, name, &blob,
						GIT_FILEMODE_BLOB), 0);
	assert_int_equal(git_treebuilder_write(&tree, tb), 0);
	git_treebuilder_free(tb);
	assert_int_equal(git_tree_lookup(&t, r, &tree), 0);
	assert_int_equal(git_signature_new(&sig, "list", "list@example.org",
					   T0, 0), 0);
	assert_int_equal(git_commit_create_v(&commit, r, "refs/heads/master",
					     sig, sig, NULL, "m", t,
					     has_parent ? 1 : 0, pc), 0);
	git_signature_free(sig);
	git_tree_free(t);
	git_commit_free(pc);
}

static git_repository *pi_epoch(struct fx *f, int n)
{
	git_repository *r;
	char path[128];

	snprintf(path, sizeof(path), "%s/inbox/git/%d.git", f->dir, n);
	assert_int_equal(git_repository_init(&r, path, 1), 0);
	return r;
}

static void build_inbox(struct fx *f)
{
	git_repository *r;
	size_t n, i;
	char **m = story(&n), path[128];
	int epoch = 0;

	snprintf(path, sizeof(path), "%s/inbox", f->dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/inbox/git", f->dir);
	mkdir(path, 0700);
	r = pi_epoch(f, epoch);
	for (i = 0; i < n; i++) {
		if (!m[i]) {
			/* a removal commit ends the epoch */
			pi_commit(r, "d", "gone\n", 5);
			git_repository_free(r);
			r = pi_epoch(f, ++epoch);
			continue;
		}
		pi_commit(r, "m", m[i], strlen(m[i]));
	}
	git_repository_free(r);
	story_free(m, n);
}

/* ---- fixtures ------------------------------------------------------ */

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	git_libgit2_init();
	snprintf(f->dir, sizeof(f->dir), "%s", "/tmp/pt-archive-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(db_open(&f->db, ":memory:", &scoring_db_owners), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	db_close(f->db);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	git_libgit2_shutdown();
	return 0;
}

static int64_t q(struct fx *f, const char *sql)
{
	return dbq_int(f->db, sql);
}

static char *qs(struct fx *f, const char *sql)
{
	sqlite3_stmt *st;
	char *v = NULL;

	assert_int_equal(db_prepare(&st, f->db, sql), 0);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

static void assert_q_str(struct fx *f, const char *sql, const char *want)
{
	char *got = qs(f, sql);

	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static int64_t pid(struct fx *f, const char *msgid)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "SELECT id FROM patches WHERE message_id "
		 "= '%s'", msgid);
	return q(f, sql);
}

#define OUTCOME(id) \
	"SELECT outcome FROM posting_outcomes o JOIN patches p ON p.id = " \
	"o.patch_id WHERE p.message_id = '" id "'"
#define LABEL(col, id) \
	"SELECT " col " FROM posting_labels l JOIN patches p ON p.id = " \
	"l.patch_id WHERE p.message_id = '" id "'"

static void import_inbox(struct fx *f, struct archive_result *res)
{
	struct archive *a;
	char path[128], **ep, **e;

	snprintf(path, sizeof(path), "%s/inbox", f->dir);
	assert_int_equal(archive_pi_epochs(&ep, path), 0);
	assert_int_equal(archive_open(&a, f->db, NULL), 0);
	for (e = ep; *e; e++)
		assert_int_equal(archive_import_pi(a, *e), 0);
	assert_int_equal(archive_finish(a, res), 0);
	archive_free(a);
	archive_paths_free(ep);
}

/* What the story must give, however it was read. */
static void assert_story(struct fx *f)
{
	/* series: v1, v2, v3, qux, the fix, the revert, the comment fix */
	assert_int_equal(q(f, "SELECT count(*) FROM series"), 7);
	assert_int_equal(q(f, "SELECT count(*) FROM series WHERE complete"),
			 7);
	assert_int_equal(q(f, "SELECT count(*) FROM series_versions"), 2);
	assert_int_equal(q(f, "SELECT count(*) FROM series_versions v JOIN "
			      "series s ON s.id = v.series_id JOIN series p ON"
			      " p.id = v.prev_series_id WHERE s.version = "
			      "p.version + 1"), 2);
	assert_int_equal(q(f, "SELECT count(*) FROM patches"), 10);
	/* reviews given on the list */
	assert_int_equal(q(f, "SELECT count(*) FROM mail_reviews WHERE kind = "
			      "'Reviewed-by' AND email = 'bob@example.org'"),
			 1);
	assert_int_equal(q(f, "SELECT count(*) FROM mail_reviews WHERE kind = "
			      "'Tested-by'"), 1);
	/* outcomes */
	assert_q_str(f, OUTCOME("p31@x"), "applied");
	assert_q_str(f, OUTCOME("p32@x"), "applied");
	assert_q_str(f, OUTCOME("q1@x"), "applied");
	assert_q_str(f, OUTCOME("p11@x"), "superseded");
	assert_q_str(f, OUTCOME("p12@x"), "superseded");
	assert_q_str(f, OUTCOME("p21@x"), "superseded");
	assert_q_str(f, OUTCOME("p22@x"), "superseded");
	assert_q_str(f, OUTCOME("f1@x"), "none");
	assert_q_str(f, OUTCOME("v1@x"), "none");
	assert_q_str(f, OUTCOME("t1@x"), "none");
	assert_q_str(f, "SELECT commit_sha FROM posting_outcomes o JOIN "
			"patches p ON p.id = o.patch_id WHERE p.message_id = "
			"'p32@x'", "abcdef123456");
	assert_q_str(f, "SELECT how FROM posting_outcomes o JOIN patches p ON "
			"p.id = o.patch_id WHERE p.message_id = 'q1@x'",
		     "reply");
	assert_int_equal(q(f, "SELECT superseded_by FROM posting_outcomes "
			      "WHERE patch_id = (SELECT id FROM patches WHERE "
			      "message_id = 'p11@x')"), pid(f, "p21@x"));
	/* labels */
	assert_int_equal(q(f, LABEL("bug", "p31@x")), 1);
	assert_q_str(f, LABEL("how", "p31@x"), "sha");
	assert_int_equal(q(f, LABEL("discovered", "p31@x")), T0 + 20 * DAY);
	assert_int_equal(q(f, LABEL("bug", "p32@x")), 1);
	assert_q_str(f, LABEL("how", "p32@x"), "revert");
	assert_int_equal(q(f, LABEL("bug", "q1@x")), 0);
	assert_int_equal(q(f, LABEL("trivial_only", "q1@x")), 1);
	assert_int_equal(q(f, LABEL("bug", "p21@x")), 0); /* not applied */
	assert_int_equal(q(f, LABEL("is_fix", "f1@x")), 1);
	assert_int_equal(q(f, LABEL("is_stable", "f1@x")), 1);
	assert_int_equal(q(f, LABEL("is_fix", "t1@x")), 1);
	assert_int_equal(q(f, LABEL("is_fix", "v1@x")), 0);
	assert_int_equal(q(f, "SELECT sum(bug) FROM posting_labels"), 2);
	assert_int_equal(q(f, "SELECT sum(is_fix) FROM posting_labels"), 2);
}

static void test_public_inbox(void **state)
{
	struct fx *f = *state;
	struct archive_result r;
	struct archive_stats s;
	git_repository *repo;
	char path[128], *m;

	build_inbox(f);
	import_inbox(f, &r);
	assert_int_equal(r.sources, 2);
	assert_int_equal(r.messages, 19); /* and one commit without `m` */
	assert_int_equal(r.deleted, 1);
	assert_int_equal(r.skipped, 1);
	assert_int_equal(r.imported, 18);
	assert_int_equal(r.patches, 10);
	assert_int_equal(r.covers, 3);
	assert_int_equal(r.replies, 5);
	assert_q_str(f, "SELECT reason FROM archive_skips", "no Message-ID");
	assert_story(f);

	/* incremental: nothing new is read again */
	import_inbox(f, &r);
	assert_int_equal(r.messages, 0);
	assert_story(f);

	/* one more message in the last epoch: exactly it is read */
	snprintf(path, sizeof(path), "%s/inbox/git/1.git", f->dir);
	assert_int_equal(git_repository_open(&repo, path), 0);
	m = text_mail("late@x", BOB, 30, "Re: [PATCH] pwm: foo: Fix bar "
		      "overflow", "f1@x", "Reviewed-by: Bob Reviewer "
		      "<bob@example.org>\n");
	pi_commit(repo, "m", m, strlen(m));
	free(m);
	git_repository_free(repo);
	import_inbox(f, &r);
	assert_int_equal(r.messages, 1);
	assert_int_equal(r.imported, 1);
	assert_int_equal(archive_stats(&s, f->db), 0);
	assert_int_equal(s.sources, 2);
	assert_int_equal(s.messages, 19);
	assert_int_equal(s.skipped, 1);
	assert_int_equal(s.applied, 3);
	assert_int_equal(s.applied_reply, 3);
	assert_int_equal(s.superseded, 4);
	assert_int_equal(s.neither, 3);
	assert_int_equal(s.bugs, 2);
	assert_int_equal(s.trivial_only, 1);
	assert_int_equal(s.notices, 2);
	assert_int_equal(s.versions_linked, 2);
}

/* Review and process features, as of posting and as of apply. */
static void test_features(void **state)
{
	struct fx *f = *state;
	struct archive_result r;
	struct listfeat lf;
	struct feat_thread th;
	int64_t p31, at;

	build_inbox(f);
	import_inbox(f, &r);
	p31 = pid(f, "p31@x");
	assert_int_equal(listfeat_moment(&at, f->db, p31, LISTFEAT_AT_APPLY),
			 0);
	assert_int_equal(at, T0 + 8 * DAY);
	assert_int_equal(listfeat_compute(&lf, f->db, p31, at), 0);
	assert_int_equal((int)lf.v[LISTFEAT_VERSION], 3);
	assert_int_equal((int)lf.v[LISTFEAT_VERSIONS_BEFORE], 2);
	assert_int_equal((int)lf.v[LISTFEAT_TESTED], 1);
	assert_int_equal((int)lf.v[LISTFEAT_TESTED_CLAIMS], 1);
	assert_int_equal((int)lf.v[LISTFEAT_CARRIED], 1);
	/* v1 was asked a question and a request; v2 got a review */
	assert_int_equal((int)lf.v[LISTFEAT_PREV_QUESTIONS], 1);
	assert_int_equal((int)lf.v[LISTFEAT_PREV_ASKS], 1);
	assert_int_equal((int)lf.v[LISTFEAT_PREV_REPLIES], 2);
	assert_true(fabs(lf.v[LISTFEAT_DAYS_FIRST] - 8.0) < 1e-9);
	/* the reviewer (Carol) had reviewed nothing before */
	assert_int_equal((int)lf.v[LISTFEAT_REV_PRIOR], 0);
	assert_true(fabs(lf.v[LISTFEAT_REV_BUGRATE] - LISTFEAT_PRIOR_RATE) <
		    1e-9);
	/* at posting, the Tested-by of the next day is not known yet */
	assert_int_equal(listfeat_compute(&lf, f->db, p31, T0 + 6 * DAY), 0);
	assert_int_equal((int)lf.v[LISTFEAT_TESTED], 0);
	assert_int_equal((int)lf.v[LISTFEAT_REPLIES], 0);
	assert_true(isnan(lf.v[LISTFEAT_REV_BUGRATE]));
	/* Bob reviewed v2 1/2 before; its bug was found later, not counted */
	assert_int_equal(listfeat_compute(&lf, f->db, pid(f, "p21@x"),
					  T0 + 30 * DAY), 0);
	assert_int_equal((int)lf.v[LISTFEAT_REVIEWED], 1);
	assert_int_equal(listfeat_fill_thread(&th, f->db, p31,
					      LISTFEAT_AT_APPLY), 0);
	assert_int_equal(th.known, 1);
	assert_int_equal(th.versions, 3);
	assert_int_equal(th.replies, 2);
	assert_int_equal(listfeat_fill_thread(&th, f->db, 0,
					      LISTFEAT_AT_APPLY), 0);
	assert_int_equal(th.known, 0);
}

/* Mined commits join postings by Link: and by subject, author and date. */
static void test_commit_join(void **state)
{
	struct fx *f = *state;
	struct archive_result r;
	struct archive *a;
	int64_t posting;
	char sql[1024];

	build_inbox(f);
	import_inbox(f, &r);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO repos (id, path) VALUES (1, '/r');"
		 "INSERT INTO people (id, email) VALUES (1, 'dave@example.org');"
		 "INSERT INTO commits (id, repo_id, sha, seq, nparents, "
		 "author_id, author_date, commit_date, subject) VALUES "
		 "(1, 1, '%040d', 1, 1, 1, %d, %d, 'pwm: qux: Add qux'),"
		 "(2, 1, '%039d2', 2, 1, 1, %d, %d, 'pwm: foo: Fix bar "
		 "overflow'),"
		 "(3, 1, '%039d3', 3, 1, 1, %d, %d, 'pwm: qux: Add qux');"
		 "INSERT INTO trailers (commit_id, idx, kind, key, value) VALUES"
		 " (2, 0, %d, 'Link', 'https://lore.kernel.org/r/f1@x');"
		 "INSERT INTO labels (commit_id, is_fix, is_stable, bug, nfixes,"
		 " trivial_only, negative_ok) VALUES (1, 0, 0, 1, 1, 0, 1);",
		 0, T0 + 9 * DAY, T0 + 10 * DAY, 0, T0 + 40 * DAY,
		 T0 + 41 * DAY, 0, T0 + 200 * DAY, T0 + 200 * DAY,
		 TRAILER_LINK);
	assert_int_equal(db_exec(f->db, sql), 0);
	assert_int_equal(archive_open(&a, f->db, NULL), 0);
	assert_int_equal(archive_finish(a, &r), 0);
	archive_free(a);
	/* applied by a reply already: the commit joins, the evidence stays */
	assert_q_str(f, "SELECT how FROM posting_outcomes o JOIN patches p ON "
			"p.id = o.patch_id WHERE p.message_id = 'q1@x'",
		     "reply");
	assert_int_equal(q(f, "SELECT commit_id FROM posting_outcomes o JOIN "
			      "patches p ON p.id = o.patch_id WHERE "
			      "p.message_id = 'q1@x'"), 1);
	assert_int_equal(q(f, LABEL("commit_bug", "q1@x")), 1);
	/* the fix was applied: its commit's Link: names it */
	assert_q_str(f, OUTCOME("f1@x"), "applied");
	assert_q_str(f, "SELECT how FROM posting_outcomes o JOIN patches p ON "
			"p.id = o.patch_id WHERE p.message_id = 'f1@x'",
		     "link");
	assert_int_equal(q(f, "SELECT applied_date FROM posting_outcomes o "
			      "JOIN patches p ON p.id = o.patch_id WHERE "
			      "p.message_id = 'f1@x'"), T0 + 41 * DAY);
	/* commit 3 is outside the date window of every posting */
	assert_int_equal(q(f, "SELECT count(*) FROM posting_outcomes WHERE "
			      "commit_id = 3"), 0);
	assert_int_equal(listfeat_posting_of_commit(&posting, f->db, 2), 0);
	assert_int_equal(posting, pid(f, "f1@x"));
}

/* ---- mbox ---------------------------------------------------------- */

static void write_mbox(const char *path, int rd, int gz)
{
	struct buf b = BUF_INIT, line = BUF_INIT;
	size_t n, i;
	char **m = story(&n);
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
	story_free(m, n);
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
	assert_int_equal(r.messages, 19);
	assert_int_equal(r.skipped, 1);
	assert_int_equal(r.imported, 18);
	assert_story(f);
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

static int collect_cb(const char *msg, size_t len, const char *pos,
		      void *ctx)
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
	static const char rd[] =
		"From mboxrd@z Thu Jan  1 00:00:00 1970\n"
		"Subject: a\n\n>From here\n>>From there\n\n"
		"From mboxrd@z Thu Jan  1 00:00:00 1970\n"
		"Subject: b\n\nbody\n";
	static const char o[] =
		"From a@b Mon Jan  1 10:00:00 2024\n"
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
	assert_int_equal(q(f, "SELECT count(*) FROM archive_skips WHERE "
			      "reason = 'compressed stream ends early'"), 1);
}

static void test_text_rules(void **state)
{
	struct outcome_item it[4];
	const char *ty = "Applied, thanks!\n\n[1/2] pwm: a: B\n"
			 "      commit: 0123456789abcdef\n"
			 "  - [v2,2/2] pwm: a: C\n"
			 "    https://git.kernel.org/x/c/fedcba9876\n";
	char *s;

	(void)state;
	assert_true(outcome_says_applied("Applied, thanks!\n", 17));
	assert_true(outcome_says_applied("> foo\n\nThanks, applied to "
					 "for-next.\n", 36));
	assert_true(outcome_says_applied("I've applied patches 1-3.\n", 26));
	assert_false(outcome_says_applied("> Applied, thanks\n", 18));
	assert_false(outcome_says_applied("This is not applied yet.\n", 25));
	assert_false(outcome_says_applied("Applied on top of next and "
					  "tested.\n", 35));
	assert_false(outcome_says_applied("Applied?\n", 9));
	assert_true(outcome_says_applied("Both patches applied, thanks.\n",
					 30));
	assert_true(outcome_says_applied("Patches 1,2 and 4,5,6 applied to "
					 "drm-misc-next.\n", 47));
	assert_true(outcome_says_applied("Never mind, applied after fixing "
					 "the above.\n", 44));
	assert_false(outcome_says_applied("With this applied, the display "
					  "works.\n", 38));
	assert_int_equal(outcome_parse_items(it, 4, ty, strlen(ty)), 2);
	assert_int_equal(it[0].number, 1);
	assert_string_equal(it[0].subject, "pwm: a: B");
	assert_string_equal(it[0].sha, "0123456789abcdef");
	assert_int_equal(it[1].number, 2);
	assert_string_equal(it[1].subject, "pwm: a: C");
	assert_string_equal(it[1].sha, "fedcba9876");
	s = outcome_revert_subject("Revert \"pwm: a: B\"");
	assert_string_equal(s, "pwm: a: B");
	free(s);
	assert_null(outcome_revert_subject("pwm: Revert a thing"));
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
	assert_in_range(s.series, 340, 375);           /* 357 */
	assert_in_range(s.versions_linked, 160, 200);  /* 178 */
	assert_in_range(s.reviews, 290, 345);          /* 318 */
	assert_in_range(s.patches, 1380, 1440);        /* 1410 */
	assert_in_range(s.notices, 90, 110);           /* 99 */
	assert_in_range(s.applied, 140, 175);          /* 156 */
	assert_in_range(s.superseded, 650, 750);       /* 701 */
	assert_in_range(s.fixes, 55, 70);              /* 61 */
	assert_in_range(s.bugs, 3, 12);                /* 7 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_rules),
		cmocka_unit_test_setup_teardown(test_public_inbox, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_features, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_commit_join, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mboxrd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mboxo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_gz, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbox_escapes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mbox_gz_truncated, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_linux_pwm_2024, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
