/*
 * archivefx.c - the fixture of the list archive tests (see archivefx.h):
 * the mail of the story, the public-inbox built from it, the per-test
 * directory and database, the queries and the story's expected rows.
 * Moved from test_archive.c as it was when that file was split by theme.
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
#include <sys/stat.h>
#include <time.h>

#include "archivefx.h"
#include "dbq.h"
#include "scoring/lists/archive.h"
#include "scoring/model/schema.h"
#include "scoring/store/db.h"
#include "scoring/util/pt.h"

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
const char *const AFX_BOB = "Bob Reviewer <bob@example.org>";
static const char *const CAROL = "Carol Tester <carol@example.org>";
static const char *const UWE = "Uwe Maintainer <uwe@example.org>";
static const char *const DAVE = "Dave Fixer <dave@example.org>";
static const char *const EVE = "Eve Bystander <eve@example.org>";

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
	buf_addf(&b,
		 "Signed-off-by: %s\n---\n"
		 " %s | 1 +\n 1 file changed, 1 insertion(+)\n\n"
		 "diff --git a/%s b/%s\nindex 1111111..2222222 100644\n"
		 "--- a/%s\n+++ b/%s\n@@ -1,3 +1,4 @@\n a\n+%s\n b\n c\n"
		 "-- \n2.43.0\n",
		 from, file, file, file, file, file, line);
	return buf_detach(&b, NULL);
}

char *afx_text_mail(const char *id, const char *from, int day, const char *subj,
		    const char *irt, const char *body)
{
	struct buf b = BUF_INIT;

	add_headers(&b, id, from, day, subj, irt);
	buf_addstr(&b, body);
	return buf_detach(&b, NULL);
}

#define FOO "drivers/pwm/pwm-foo.c"

/* The whole story, oldest first; NULL entries mark epoch boundaries. */
char **afx_story(size_t *n)
{
	char **m = calloc(40, sizeof(*m));
	size_t k = 0;

	/* v1 */
	m[k++] = afx_text_mail("c1@x", ALICE, 0, "[PATCH 0/2] pwm: foo: bar",
			       NULL, "This adds bar.\n");
	m[k++] = patch_mail("p11@x", ALICE, 0, "[PATCH 1/2] pwm: foo: Add bar",
			    "c1@x", "Add bar.", FOO, "bar();");
	m[k++] = patch_mail("p12@x", ALICE, 0, "[PATCH 2/2] pwm: foo: Use baz",
			    "c1@x", "Use baz.", FOO, "baz();");
	m[k++] = afx_text_mail("r11@x", AFX_BOB, 1,
			       "Re: [PATCH 1/2] pwm: foo: Add bar", "p11@x",
			       "On Mon, Alice wrote:\n> +bar();\n\n"
			       "Why not call bar() later?\n"
			       "Please split the init.\n> b\n\nBob\n");
	/* v2 */
	m[k++] = afx_text_mail("c2@x", ALICE, 3, "[PATCH v2 0/2] pwm: foo: bar",
			       NULL, "Changes since v1: split.\n");
	m[k++] = patch_mail("p21@x", ALICE, 3,
			    "[PATCH v2 1/2] pwm: foo: Add bar", "c2@x",
			    "Add bar.", FOO, "bar(1);");
	m[k++] = patch_mail("p22@x", ALICE, 3,
			    "[PATCH v2 2/2] pwm: foo: Use baz", "c2@x",
			    "Use baz.", FOO, "baz(1);");
	m[k++] = afx_text_mail("r21@x", AFX_BOB, 4,
			       "Re: [PATCH v2 1/2] pwm: foo: Add bar", "p21@x",
			       "> +bar(1);\n\nLooks good.\n\n"
			       "Reviewed-by: Bob Reviewer <bob@example.org>\n");
	m[k++] = afx_text_mail(NULL, AFX_BOB, 4, "Re: no id", "p21@x",
			       "This message has no Message-ID.\n");
	m[k++] = NULL; /* next epoch */
	/* v3 */
	m[k++] = afx_text_mail("c3@x", ALICE, 6, "[PATCH v3 0/2] pwm: foo: bar",
			       NULL, "Changes since v2: nothing.\n");
	m[k++] = patch_mail("p31@x", ALICE, 6,
			    "[PATCH v3 1/2] pwm: foo: Add bar", "c3@x",
			    "Add bar.\n\nReviewed-by: Bob Reviewer "
			    "<bob@example.org>",
			    FOO, "bar(2);");
	m[k++] = patch_mail("p32@x", ALICE, 6,
			    "[PATCH v3 2/2] pwm: foo: Use baz", "c3@x",
			    "Use baz.", FOO, "baz(2);");
	m[k++] = afx_text_mail("r31@x", CAROL, 7,
			       "Re: [PATCH v3 1/2] pwm: foo: Add bar", "p31@x",
			       "Tested on my board, works.\n\n"
			       "Tested-by: Carol Tester <carol@example.org>\n");
	m[k++] = afx_text_mail("a3@x", UWE, 8,
			       "Re: [PATCH v3 0/2] pwm: foo: bar", "c3@x",
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
	m[k++] = afx_text_mail("aq@x", UWE, 10, "Re: [PATCH] pwm: qux: Add qux",
			       "q1@x",
			       "Applied to\nhttps://git.example.org/"
			       "pwm.git pwm/for-next\n\nUwe\n");
	/* later: a real fix, a revert and a comment-only fix */
	m[k++] = patch_mail(
		"f1@x", DAVE, 20, "[PATCH] pwm: foo: Fix bar overflow", NULL,
		"Fix an overflow.\n\nFixes: 1234567890ab (\"pwm: foo: "
		"Add bar\")\nCc: stable@vger.kernel.org",
		FOO, "if (x > 1) return;");
	m[k++] = patch_mail("v1@x", DAVE, 21,
			    "[PATCH] Revert \"pwm: foo: Use baz\"", NULL,
			    "This reverts commit abcdef123456, it broke "
			    "things.",
			    FOO, "old();");
	m[k++] = patch_mail("t1@x", DAVE, 22, "[PATCH] pwm: qux: Fix a comment",
			    NULL,
			    "Fix a comment.\n\nFixes: 0000000 (\"pwm: qux: Add "
			    "qux\")",
			    "drivers/pwm/pwm-qux.c", "/* the right words */");
	/* no authority: a tester's "I applied" on the comment fix, and
	 * a stranger's "Applied, thanks!" on the revert */
	m[k++] = afx_text_mail("e1@x", EVE, 23,
			       "Re: [PATCH] pwm: qux: Fix a comment", "t1@x",
			       "I applied the patch and ran it on my board.\n");
	m[k++] = afx_text_mail("e2@x", EVE, 23,
			       "Re: [PATCH] Revert \"pwm: foo: Use baz\"",
			       "v1@x", "Applied, thanks!\n");
	*n = k;
	return m;
}

void afx_story_free(char **m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(m[i]);
	free(m);
}

/* ---- building a public-inbox --------------------------------------- */

void afx_pi_commit(git_repository *r, const char *name, const char *msg,
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
						GIT_FILEMODE_BLOB),
			 0);
	assert_int_equal(git_treebuilder_write(&tree, tb), 0);
	git_treebuilder_free(tb);
	assert_int_equal(git_tree_lookup(&t, r, &tree), 0);
	assert_int_equal(git_signature_new(&sig, "list", "list@example.org", T0,
					   0),
			 0);
	assert_int_equal(git_commit_create_v(&commit, r, "refs/heads/master",
					     sig, sig, NULL, "m", t,
					     has_parent ? 1 : 0, pc),
			 0);
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

void afx_build_inbox(struct fx *f)
{
	git_repository *r;
	size_t n, i;
	char **m = afx_story(&n), path[128];
	int epoch = 0;

	snprintf(path, sizeof(path), "%s/inbox", f->dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/inbox/git", f->dir);
	mkdir(path, 0700);
	r = pi_epoch(f, epoch);
	for (i = 0; i < n; i++) {
		if (!m[i]) {
			/* a removal commit ends the epoch */
			afx_pi_commit(r, "d", "gone\n", 5);
			git_repository_free(r);
			r = pi_epoch(f, ++epoch);
			continue;
		}
		afx_pi_commit(r, "m", m[i], strlen(m[i]));
	}
	git_repository_free(r);
	afx_story_free(m, n);
}

/* ---- fixtures ------------------------------------------------------ */

int afx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	git_libgit2_init();
	snprintf(f->dir, sizeof(f->dir), "%s", "/tmp/pt-archive-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(db_open(&f->db, ":memory:", &scoring_db_owners), 0);
	*state = f;
	return 0;
}

int afx_teardown(void **state)
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

int64_t afx_q(struct fx *f, const char *sql)
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

void afx_assert_q_str(struct fx *f, const char *sql, const char *want)
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

int64_t afx_pid(struct fx *f, const char *msgid)
{
	char sql[128];

	snprintf(sql, sizeof(sql),
		 "SELECT id FROM patches WHERE message_id "
		 "= '%s'",
		 msgid);
	return afx_q(f, sql);
}

void afx_import_inbox(struct fx *f, struct archive_result *res)
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
void afx_assert_story(struct fx *f)
{
	/* series: v1, v2, v3, qux, the fix, the revert, the comment fix */
	assert_int_equal(afx_q(f, "SELECT count(*) FROM series"), 7);
	assert_int_equal(afx_q(f, "SELECT count(*) FROM series WHERE complete"),
			 7);
	assert_int_equal(afx_q(f, "SELECT count(*) FROM series_versions"), 2);
	assert_int_equal(afx_q(f, "SELECT count(*) FROM series_versions v "
				  "JOIN series s ON s.id = v.series_id JOIN "
				  "series p ON p.id = v.prev_series_id WHERE "
				  "s.version = p.version + 1"),
			 2);
	assert_int_equal(afx_q(f, "SELECT count(*) FROM patches"), 10);
	/* reviews given on the list */
	assert_int_equal(afx_q(f, "SELECT count(*) FROM mail_reviews WHERE "
				  "kind = 'Reviewed-by' AND email = "
				  "'bob@example.org'"),
			 1);
	assert_int_equal(afx_q(f, "SELECT count(*) FROM mail_reviews WHERE "
				  "kind = 'Tested-by'"),
			 1);
	/* outcomes */
	afx_assert_q_str(f, OUTCOME("p31@x"), "applied");
	afx_assert_q_str(f, OUTCOME("p32@x"), "applied");
	afx_assert_q_str(f, OUTCOME("q1@x"), "applied");
	afx_assert_q_str(f, OUTCOME("p11@x"), "superseded");
	afx_assert_q_str(f, OUTCOME("p12@x"), "superseded");
	afx_assert_q_str(f, OUTCOME("p21@x"), "superseded");
	afx_assert_q_str(f, OUTCOME("p22@x"), "superseded");
	afx_assert_q_str(f, OUTCOME("f1@x"), "none");
	afx_assert_q_str(f, OUTCOME("v1@x"), "none");
	afx_assert_q_str(f, OUTCOME("t1@x"), "none");
	afx_assert_q_str(f,
			 "SELECT commit_sha FROM posting_outcomes o JOIN "
			 "patches p ON p.id = o.patch_id WHERE "
			 "p.message_id = 'p32@x'",
			 "abcdef123456");
	afx_assert_q_str(f,
			 "SELECT how FROM posting_outcomes o JOIN patches p "
			 "ON p.id = o.patch_id WHERE p.message_id = 'q1@x'",
			 "reply");
	assert_int_equal(afx_q(f, "SELECT superseded_by FROM posting_outcomes "
				  "WHERE patch_id = (SELECT id FROM patches "
				  "WHERE message_id = 'p11@x')"),
			 afx_pid(f, "p21@x"));
	/* labels */
	assert_int_equal(afx_q(f, LABEL("bug", "p31@x")), 1);
	afx_assert_q_str(f, LABEL("how", "p31@x"), "sha");
	assert_int_equal(afx_q(f, LABEL("discovered", "p31@x")), T0 + 20 * DAY);
	assert_int_equal(afx_q(f, LABEL("bug", "p32@x")), 1);
	afx_assert_q_str(f, LABEL("how", "p32@x"), "revert");
	assert_int_equal(afx_q(f, LABEL("bug", "q1@x")), 0);
	assert_int_equal(afx_q(f, LABEL("trivial_only", "q1@x")), 1);
	assert_int_equal(afx_q(f, LABEL("bug", "p21@x")), 0); /* not applied */
	assert_int_equal(afx_q(f, LABEL("is_fix", "f1@x")), 1);
	assert_int_equal(afx_q(f, LABEL("is_stable", "f1@x")), 1);
	assert_int_equal(afx_q(f, LABEL("is_fix", "t1@x")), 1);
	assert_int_equal(afx_q(f, LABEL("is_fix", "v1@x")), 0);
	assert_int_equal(afx_q(f, "SELECT sum(bug) FROM posting_labels"), 2);
	assert_int_equal(afx_q(f, "SELECT sum(is_fix) FROM posting_labels"), 2);
}
