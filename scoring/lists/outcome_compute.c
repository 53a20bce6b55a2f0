/*
 * outcome_compute.c - outcome_compute() (see outcome.h): rebuilds
 * posting_outcomes (applied by a notice, by a mined commit's Link: or by
 * its subject; superseded; none) and posting_labels (fix, stable, bug by
 * a later Fixes: or revert) from what outcome.c noted, the threading
 * tables and, when history has been mined, the commits and their labels.
 * It owns the SQL that derives those two tables.
 */
#include "scoring/lists/outcome.h"

#include <stdlib.h>
#include <string.h>

#include "scoring/lists/outcome_int.h"
#include "scoring/util/strmap.h"

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* ---- computing outcomes -------------------------------------------- */

static int exec_all(struct outcome *o, const char *const *sql)
{
	int rc = 0;

	for (; !rc && *sql; sql++)
		rc = db_exec(o->db, *sql);
	return rc;
}

#define APPLIED_COLS                                                         \
	"INSERT OR IGNORE INTO posting_outcomes (patch_id, outcome, how, "   \
	"notice_msgid, applied_date, commit_sha, applied_by, applied_tree, " \
	"applied_branch) SELECT p.id, 'applied', n.kind, n.message_id, "     \
	"n.date, n.commit_sha, n.who, n.tree, n.branch"
#define NOTICE_FROM                                                        \
	" FROM list_notices n JOIN messages m ON m.message_id = "          \
	"n.message_id AND n.target IS NULL JOIN patches p ON p.series_id " \
	"= m.series_id "

/*
 * Who applies patches: a reply says "applied" with authority only when
 * it names the commit, or its writer does that in some notice of the
 * imported lists, or has said "applied" in at least three threads, or
 * is an M: of the MAINTAINERS given to archive import.  A tester's "I
 * applied it" once, or a stranger's, makes nothing applied.
 */
#define BY_APPLIER                                                          \
	" AND (n.kind != 'reply' OR n.commit_sha IS NOT NULL OR n.who IN "  \
	"(SELECT who FROM list_notices WHERE commit_sha IS NOT NULL AND "   \
	"who IS NOT NULL UNION SELECT who FROM list_notices WHERE who IS "  \
	"NOT NULL GROUP BY who HAVING count(DISTINCT message_id) >= 3) OR " \
	"lower(n.who) IN (SELECT email FROM list_maintainers)) "

/*
 * The ways a notice names its postings; SHA is "n.commit_sha IS NOT
 * NULL" for the pass over notices that name the commit, "1" for all.
 * A bare notice on a patch applies to that patch; on the cover letter,
 * to the whole series; listed items match by subject within the series,
 * then by number.
 */
#define WAY_PATCH(SHA)                                                     \
	APPLIED_COLS NOTICE_FROM "AND p.id = m.patch_id WHERE n.item = 0 " \
				 "AND " SHA BY_APPLIER "ORDER BY n.date"
#define WAY_COVER(SHA)                                            \
	APPLIED_COLS NOTICE_FROM                                  \
		"WHERE n.item = 0 AND "                           \
		"COALESCE(m.patch_id, 0) = 0 AND " SHA BY_APPLIER \
		"ORDER BY n.date"
#define WAY_SUBJECT(SHA)                                                \
	APPLIED_COLS NOTICE_FROM "AND p.norm_subject = n.item_subject " \
				 "WHERE n.item > 0 AND " SHA BY_APPLIER \
				 "ORDER BY n.date"
#define WAY_NUMBER(SHA)                                                             \
	APPLIED_COLS NOTICE_FROM                                                    \
		"AND p.number = n.item WHERE n.item > 0 AND n.item < 1000 AND " SHA \
		" AND NOT EXISTS (SELECT 1 FROM list_notices x JOIN patches y ON "  \
		"y.series_id = m.series_id AND y.norm_subject = x.item_subject "    \
		"WHERE x.message_id = n.message_id)" BY_APPLIER                     \
		"ORDER BY n.date"
#define APPLIED_WAYS(SHA) \
	WAY_PATCH(SHA), WAY_COVER(SHA), WAY_SUBJECT(SHA), WAY_NUMBER(SHA)

/*
 * Earliest notice first: INSERT OR IGNORE keeps the first per patch.
 * Notices that name the commit go first, so that an earlier plain
 * "Applied" does not hide the commit id a later b4 ty gives; an item
 * naming a commit whose thread is not in the archive (or holds another
 * series) then finds the latest posting of that subject within
 * OUTCOME_ITEM_WINDOW before the notice, on any list.  Then notices
 * without a commit id; a patchwork-bot digest names its postings by
 * Message-ID.
 */
#define OUTCOME_ITEM_WINDOW "(90 * 86400)"
static const char *const applied_sql[] = {
	"DELETE FROM posting_outcomes",
	"DELETE FROM posting_labels",
	APPLIED_WAYS("n.commit_sha IS NOT NULL"),
	APPLIED_COLS
	" FROM list_notices n JOIN patches p ON p.id = (SELECT "
	"q.id FROM patches q WHERE q.norm_subject = n.item_subject "
	"AND q.date <= n.date AND q.date > n.date - " OUTCOME_ITEM_WINDOW
	" ORDER BY q.date DESC LIMIT 1) WHERE "
	"n.item > 0 AND n.commit_sha IS NOT NULL AND NOT EXISTS "
	"(SELECT 1 FROM posting_outcomes x WHERE x.commit_sha = "
	"n.commit_sha) ORDER BY n.date",
	APPLIED_WAYS("1"),
	/* a patchwork-bot digest's items, by subject in the series named */
	APPLIED_COLS " FROM list_notices n JOIN messages m ON m.message_id = "
		     "n.target JOIN patches p ON p.series_id = m.series_id AND "
		     "p.norm_subject = n.item_subject ORDER BY n.date",
	NULL,
};

static const char *const superseded_sql[] = {
	"INSERT OR IGNORE INTO posting_outcomes (patch_id, outcome, "
	"superseded_by) SELECT q.prev_patch_id, 'superseded', min(q.id) FROM "
	"patches q WHERE q.prev_patch_id IS NOT NULL GROUP BY "
	"q.prev_patch_id",
	"INSERT OR IGNORE INTO posting_outcomes (patch_id, outcome) SELECT "
	"p.id, 'superseded' FROM patches p JOIN series_versions v ON "
	"v.prev_series_id = p.series_id",
	"INSERT OR IGNORE INTO posting_outcomes (patch_id, outcome) SELECT "
	"id, 'none' FROM patches",
	NULL,
};

/* The Message-ID a Link: (lore, patch.msgid.link) or Message-ID names. */
static char *link_msgid(const char *v)
{
	static const char *const keys[] = { "patch.msgid.link/",
					    "lore.kernel.org/r/",
					    "lkml.kernel.org/r/", "/r/", NULL };
	const char *const *k, *p = NULL, *e;

	for (k = keys; *k && !p; k++)
		if ((p = strstr(v, *k)))
			p += strlen(*k);
	if (!p && (p = strstr(v, "lore.kernel.org/"))) {
		p = strchr(p + 16, '/'); /* skip the list name */
		p = p ? p + 1 : NULL;
	}
	if (!p) {
		p = v;
		while (*p == ' ' || *p == '<')
			p++;
		if (!strchr(p, '@'))
			return NULL;
	}
	for (e = p; *e && *e != '/' && *e != '>' && *e != ' ' && *e != '#'; e++)
		;
	return e > p ? pt_strndup(p, (size_t)(e - p)) : NULL;
}

static int have_commits(struct outcome *o, int *yes)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, o->db, "SELECT EXISTS (SELECT 1 FROM commits)");
	if (rc)
		return rc;
	*yes = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return 0;
}

#define UPSERT_COMMIT                                                         \
	"INSERT INTO posting_outcomes (patch_id, outcome, how, "              \
	"applied_date, commit_sha, commit_id) VALUES (?1, 'applied', ?2, ?3," \
	" ?4, ?5) ON CONFLICT(patch_id) DO UPDATE SET outcome = 'applied', "  \
	"how = CASE WHEN outcome = 'applied' THEN how ELSE ?2 END, "          \
	"applied_date = CASE WHEN outcome = 'applied' THEN applied_date "     \
	"ELSE ?3 END, commit_sha = ?4, commit_id = ?5 WHERE commit_id IS NULL"

static int upsert_commit(struct outcome *o, sqlite3_stmt *up, int64_t pid,
			 const char *how, sqlite3_stmt *c)
{
	sqlite3_bind_int64(up, 1, pid);
	bind_str(up, 2, how);
	sqlite3_bind_int64(up, 3, sqlite3_column_int64(c, 3));
	bind_str(up, 4, (const char *)sqlite3_column_text(c, 2));
	sqlite3_bind_int64(up, 5, sqlite3_column_int64(c, 0));
	return outcome_step_reset(o, up, "storing a commit outcome");
}

/* Mined commits whose Link:/Message-ID trailer names a posting. */
static int match_links(struct outcome *o, size_t *n)
{
	sqlite3_stmt *st = NULL, *find = NULL, *up = NULL;
	char *id;
	int rc;

	rc = db_prepare(&st, o->db,
			"SELECT c.id, t.value, c.sha, c.commit_date FROM "
			"trailers t JOIN commits c ON c.id = t.commit_id WHERE"
			" t.kind = ?1 OR lower(t.key) = 'message-id'");
	if (!rc)
		rc = db_prepare(&find, o->db,
				"SELECT id FROM patches WHERE message_id = ?");
	if (!rc)
		rc = db_prepare(&up, o->db, UPSERT_COMMIT);
	if (rc)
		goto out;
	sqlite3_bind_int(st, 1, TRAILER_LINK);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		id = link_msgid((const char *)sqlite3_column_text(st, 1));
		if (!id)
			continue;
		sqlite3_bind_text(find, 1, id, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(find) == SQLITE_ROW) {
			rc = upsert_commit(o, up, sqlite3_column_int64(find, 0),
					   "link", st);
			(*n)++;
		}
		sqlite3_reset(find);
		free(id);
	}
out:
	sqlite3_finalize(st);
	sqlite3_finalize(find);
	sqlite3_finalize(up);
	return rc;
}

/*
 * Postings without a commit, by normalised subject, same author email and
 * author date within the window (git am keeps the mail's date): the
 * closest one wins, so the version that was applied is the one matched.
 */
static int match_subjects(struct outcome *o, size_t *n)
{
	sqlite3_stmt *cs = NULL, *find = NULL, *up = NULL;
	const char *subj;
	char *norm;
	int rc;

	rc = db_prepare(&cs, o->db,
			"SELECT c.id, c.subject, c.sha, c.commit_date, "
			"c.author_date, pe.email FROM commits c JOIN people pe"
			" ON pe.id = c.author_id");
	if (!rc)
		rc = db_prepare(&find, o->db,
				"SELECT p.id FROM patches p LEFT JOIN "
				"posting_outcomes x ON x.patch_id = p.id WHERE "
				"p.norm_subject = ?1 AND p.author_email = ?2 "
				"AND abs(p.date - ?3) <= ?4 AND x.commit_id IS "
				"NULL ORDER BY abs(p.date - ?3) LIMIT 1");
	if (!rc)
		rc = db_prepare(&up, o->db, UPSERT_COMMIT);
	while (!rc && sqlite3_step(cs) == SQLITE_ROW) {
		subj = (const char *)sqlite3_column_text(cs, 1);
		if (!subj || !sqlite3_column_text(cs, 5))
			continue;
		norm = subject_normalise(subj);
		if (!norm) {
			rc = PT_ENOMEM;
			break;
		}
		sqlite3_bind_text(find, 1, norm, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(find, 2,
				  (const char *)sqlite3_column_text(cs, 5), -1,
				  SQLITE_TRANSIENT);
		sqlite3_bind_int64(find, 3, sqlite3_column_int64(cs, 4));
		sqlite3_bind_int64(find, 4, OUTCOME_DATE_WINDOW);
		if (sqlite3_step(find) == SQLITE_ROW) {
			rc = upsert_commit(o, up, sqlite3_column_int64(find, 0),
					   "subject", cs);
			(*n)++;
		}
		sqlite3_reset(find);
		free(norm);
	}
	sqlite3_finalize(cs);
	sqlite3_finalize(find);
	sqlite3_finalize(up);
	return rc;
}

/* ---- list labels --------------------------------------------------- */

static const char *const labels_sql[] = {
	"INSERT INTO posting_labels (patch_id, is_fix, is_stable, bug, "
	"nfixes, trivial_only, commit_bug) SELECT p.id, "
	"COALESCE(lp.is_fix, 0), COALESCE(lp.is_stable, 0), 0, 0, 0, lb.bug "
	"FROM patches p LEFT JOIN list_posts lp ON lp.message_id = "
	"p.message_id LEFT JOIN posting_outcomes o ON o.patch_id = p.id "
	"LEFT JOIN labels lb ON lb.commit_id = o.commit_id",
	NULL,
};

/* The applied posting a reference names, 0 when none. */
static int ref_target(struct outcome *o, sqlite3_stmt *bysha,
		      sqlite3_stmt *bysubj, sqlite3_stmt *ref, int64_t *out,
		      const char **how)
{
	const char *sha = (const char *)sqlite3_column_text(ref, 2);
	const char *subj = (const char *)sqlite3_column_text(ref, 3);
	int64_t date = sqlite3_column_int64(ref, 4);

	*out = 0;
	if (sha && strlen(sha) >= 7 && outcome_is_hex(sha, strlen(sha))) {
		sqlite3_bind_text(bysha, 1, sha, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(bysha, 2, date);
		if (sqlite3_step(bysha) == SQLITE_ROW) {
			*out = sqlite3_column_int64(bysha, 0);
			*how = "sha";
		}
		sqlite3_reset(bysha);
	}
	if (!*out && subj && *subj) {
		sqlite3_bind_text(bysubj, 1, subj, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(bysubj, 2, date);
		if (sqlite3_step(bysubj) == SQLITE_ROW) {
			*out = sqlite3_column_int64(bysubj, 0);
			*how = "subject";
		}
		sqlite3_reset(bysubj);
	}
	if (*out &&
	    !strcmp((const char *)sqlite3_column_text(ref, 1), "revert"))
		*how = "revert";
	(void)o;
	return 0;
}

/*
 * Per target: the distinct fixing postings (by their normalised subject,
 * so v1 and v2 of one fix count once), earliest date, trivial or not.
 */
static int label_one(struct outcome *o, sqlite3_stmt *up, struct strmap *seen,
		     int64_t target, const char *how, sqlite3_stmt *ref,
		     struct outcome_counts *c)
{
	struct strmap_entry *e;
	struct buf key = BUF_INIT;
	const char *fsubj = (const char *)sqlite3_column_text(ref, 5);
	int trivial = sqlite3_column_type(ref, 6) != SQLITE_NULL;
	int added, rc;

	rc = buf_addf(&key, "%lld %s", (long long)target, fsubj ? fsubj : "");
	if (!rc)
		rc = strmap_put(&e, &added, seen, key.ptr, key.len);
	buf_free(&key);
	if (rc)
		return rc;
	c->refs_matched++;
	c->refs_trivial += trivial;
	sqlite3_bind_int64(up, 1, target);
	sqlite3_bind_int(up, 2, !trivial);
	sqlite3_bind_int(up, 3, !trivial && added);
	sqlite3_bind_int64(up, 4, sqlite3_column_int64(ref, 4));
	bind_str(up, 5, how);
	return outcome_step_reset(o, up, "storing a list label");
}

static int compute_labels(struct outcome *o, struct outcome_counts *c)
{
	struct strmap seen = STRMAP_INIT;
	sqlite3_stmt *ref = NULL, *bysha = NULL, *bysubj = NULL, *up = NULL;
	const char *how = NULL;
	int64_t target;
	int rc;

	rc = exec_all(o, labels_sql);
	if (!rc)
		rc = db_prepare(&ref, o->db,
				"SELECT f.message_id, f.kind, f.ref, "
				"f.norm_subject, f.date, lp.norm_subject, "
				"f.trivial FROM list_fixrefs f LEFT JOIN "
				"list_posts lp ON lp.message_id = f.message_id"
				" ORDER BY f.date");
	if (!rc)
		rc = db_prepare(&bysha, o->db,
				"SELECT p.id FROM posting_outcomes x JOIN "
				"patches p ON p.id = x.patch_id WHERE "
				"x.outcome = 'applied' AND length(x.commit_sha)"
				" >= 7 AND (x.commit_sha LIKE ?1 || '%' OR ?1 "
				"LIKE x.commit_sha || '%') AND p.date < ?2 "
				"ORDER BY p.date DESC LIMIT 1");
	if (!rc)
		rc = db_prepare(&bysubj, o->db,
				"SELECT p.id FROM patches p JOIN "
				"posting_outcomes x ON x.patch_id = p.id WHERE "
				"p.norm_subject = ?1 AND x.outcome = 'applied' "
				"AND p.date < ?2 ORDER BY p.date DESC LIMIT 1");
	if (!rc)
		rc = db_prepare(&up, o->db,
				"UPDATE posting_labels SET "
				"bug = max(bug, ?2), nfixes = nfixes + ?3, "
				"discovered = CASE WHEN ?2 THEN "
				"min(COALESCE(discovered, ?4), ?4) ELSE "
				"discovered END, how = CASE WHEN ?2 AND how IS "
				"NULL THEN ?5 ELSE how END, trivial_only = "
				"CASE WHEN ?2 THEN 0 WHEN bug THEN 0 ELSE 1 END"
				" WHERE patch_id = ?1");
	while (!rc && sqlite3_step(ref) == SQLITE_ROW) {
		c->refs++;
		rc = ref_target(o, bysha, bysubj, ref, &target, &how);
		if (!rc && target)
			rc = label_one(o, up, &seen, target, how, ref, c);
	}
	strmap_free(&seen);
	sqlite3_finalize(ref);
	sqlite3_finalize(bysha);
	sqlite3_finalize(bysubj);
	sqlite3_finalize(up);
	return rc;
}

static int count_where(struct outcome *o, size_t *out, const char *sql)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, o->db, sql);
	if (rc)
		return rc;
	*out = sqlite3_step(st) == SQLITE_ROW
		       ? (size_t)sqlite3_column_int64(st, 0)
		       : 0;
	sqlite3_finalize(st);
	return 0;
}

static int final_counts(struct outcome *o, struct outcome_counts *c)
{
	static const struct {
		size_t off;
		const char *sql;
	} q[] = {
#define Q(f, w) \
	{ offsetof(struct outcome_counts, f), "SELECT count(*) FROM " w }
		Q(postings, "patches"),
		Q(applied, "posting_outcomes WHERE outcome = 'applied'"),
		Q(by_reply, "posting_outcomes WHERE how = 'reply'"),
		Q(by_bot, "posting_outcomes WHERE how = 'bot'"),
		Q(by_link, "posting_outcomes WHERE how = 'link'"),
		Q(by_subject, "posting_outcomes WHERE how = 'subject'"),
		Q(superseded, "posting_outcomes WHERE outcome = 'superseded'"),
		Q(neither, "posting_outcomes WHERE outcome = 'none'"),
		Q(fixes, "posting_labels WHERE is_fix"),
		Q(bugs, "posting_labels WHERE bug"),
		Q(commits_joined,
		  "posting_outcomes WHERE commit_id IS NOT NULL"),
#undef Q
	};
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < sizeof(q) / sizeof(q[0]); i++)
		rc = count_where(o, (size_t *)((char *)c + q[i].off), q[i].sql);
	return rc;
}

/* "outcomes: 3/7 steps (commits by subject)" */
static void step(const struct pt_progress *p, size_t done, const char *what)
{
	struct pt_progress_report r = { "outcomes", "steps", done, 7, 0, what };

	pt_progress_report(p, &r);
}

int outcome_compute(struct outcome_counts *out, struct outcome *o,
		    const struct pt_progress *progress)
{
	size_t links = 0, subjects = 0;
	int rc, mined = 0;

	memset(out, 0, sizeof(*out));
	step(progress, 0, "pending rows");
	rc = outcome_flush(o);
	if (!rc)
		rc = db_begin(o->db);
	if (rc)
		return rc;
	step(progress, 1, "applied notices");
	rc = exec_all(o, applied_sql);
	if (!rc)
		rc = have_commits(o, &mined);
	step(progress, 2, "commits by Link:");
	if (!rc && mined)
		rc = match_links(o, &links);
	step(progress, 3, "commits by subject");
	if (!rc && mined)
		rc = match_subjects(o, &subjects);
	step(progress, 4, "superseded");
	if (!rc)
		rc = exec_all(o, superseded_sql);
	step(progress, 5, "labels");
	if (!rc)
		rc = compute_labels(o, out);
	step(progress, 6, "counts");
	if (!rc)
		rc = final_counts(o, out);
	step(progress, 7, NULL);
	if (!rc)
		rc = db_commit(o->db);
	if (rc)
		db_rollback(o->db);
	return rc;
}
