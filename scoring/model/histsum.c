/*
 * histsum.c - the as-of history summaries of histsum.h: it owns the
 * hist_files, hist_author_tops, hist_reviewers and hist_state tables
 * (schema.c, step 11) and their rebuild from the mined tables; the lookups
 * that turn them into feature columns are histsum_query.c's.  Each blob is an array of
 * fixed-size little-endian records sorted by commit date (then seq or
 * id), so "dated before D" is a prefix found by binary search:
 *
 *   hist_files       per path, one record per commit_files row: commit
 *                    date, the date its bug label became known (NEVER
 *                    when it is not bug-introducing), commit id, author
 *                    id (0 = none), the file's lines after the change as
 *                    features.c counts them (0 for a deletion, a binary
 *                    or an uncounted file), is-fix flag
 *   hist_author_tops per author and top-level directory ("" at the
 *                    root): date and id of each of the author's commits
 *                    that changed a file there
 *   hist_reviewers   per person: date and known-bug date of each
 *                    Reviewed-by, Acked-by and Tested-by trailer row
 *   hist_authors     per author: date and known-bug date of each commit
 *   hist_components  per subject component (subject_component(), as
 *                    "net/mlx5"): the same for each commit that has it
 *
 * The definitions are those of the SQL in features.c and bughist.c
 * (renames not followed, addresses as stored), not histfeat.c's.  It
 * does not own that reference SQL; the test compares the two.
 */
#include "scoring/model/histsum.h"
#include "scoring/model/histsum_int.h"

#include <stdlib.h>
#include <string.h>

#include "scoring/model/bughist.h"
#include "scoring/model/features.h"
#include "scoring/patch/trailer.h"
#include "scoring/store/db_row.h"
#include "scoring/util/strmap.h"

#define NEVER INT64_MAX

/* ---- records -------------------------------------------------------- */

static void put64(unsigned char *p, int64_t v)
{
	uint64_t u = (uint64_t)v;
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(u >> (8 * i));
}

static int add64(struct buf *b, int64_t v)
{
	unsigned char r[8];

	put64(r, v);
	return buf_add(b, r, sizeof(r));
}

static int64_t known_date(sqlite3_stmt *st, int bug, int disc)
{
	return sqlite3_column_type(st, bug) != SQLITE_NULL &&
			       sqlite3_column_int(st, bug) == 1 &&
			       sqlite3_column_type(st, disc) != SQLITE_NULL
		       ? sqlite3_column_int64(st, disc)
		       : NEVER;
}

/* ---- building -------------------------------------------------------- */

static int step_done(struct db *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(db, what);

	sqlite3_reset(st);
	return rc;
}

static int put_blob(struct db *db, sqlite3_stmt *ins, int64_t repo_id,
		    int64_t key, const char *text, size_t tlen,
		    const struct buf *rows, size_t n)
{
	int i = 1;

	sqlite3_bind_int64(ins, i++, repo_id);
	if (key)
		sqlite3_bind_int64(ins, i++, key);
	if (text)
		sqlite3_bind_text(ins, i++, text, (int)tlen, SQLITE_STATIC);
	sqlite3_bind_int64(ins, i++, (int64_t)n);
	sqlite3_bind_blob(ins, i, rows->ptr, (int)rows->len, SQLITE_STATIC);
	return step_done(db, ins, "saving a history summary");
}

/* A builder's query (?1 bound to repo_id) and insert, to finalise. */
static int prepare_build(sqlite3_stmt **st, sqlite3_stmt **ins, struct db *db,
			 int64_t repo_id, const char *sel, const char *ins_sql)
{
	int rc = db_prepare(st, db, sel);

	if (!rc)
		rc = db_prepare(ins, db, ins_sql);
	if (!rc)
		sqlite3_bind_int64(*st, 1, repo_id);
	return rc;
}

static int build_files(struct db *db, int64_t repo_id)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	struct buf rows = BUF_INIT;
	char *path = NULL;
	size_t n = 0;
	int rc;

	rc = prepare_build(&st, &ins, db, repo_id,
			   "SELECT f.path, c.commit_date, c.id, "
			   "coalesce(c.author_id, 0), f.status, "
			   "coalesce(f.old_lines, 0), f.added, f.removed, "
			   "f.binary, f.uncounted, l.bug, l.discovered, "
			   "coalesce(l.is_fix, 0) FROM commit_files f JOIN "
			   "commits c ON c.id = f.commit_id LEFT JOIN labels "
			   "l ON l.commit_id = c.id WHERE c.repo_id = ? AND "
			   "c.commit_date IS NOT NULL ORDER BY f.path, "
			   "c.commit_date, c.seq",
			   "INSERT INTO hist_files (repo_id, path, n, rows) "
			   "VALUES (?, ?, ?, ?)");
	if (rc)
		goto out;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(st, 0);
		const char *status = (const char *)sqlite3_column_text(st, 4);
		int64_t lines = 0;
		unsigned char fix;

		if (!p)
			continue;
		if (path && strcmp(path, p)) {
			rc = put_blob(db, ins, repo_id, 0, path, strlen(path),
				      &rows, n);
			buf_reset(&rows);
			n = 0;
			free(path);
			path = NULL;
		}
		if (!rc && !path && !(path = pt_strdup(p)))
			rc = PT_ENOMEM;
		if (rc)
			break;
		if (status && *status != 'D' && !sqlite3_column_int(st, 8) &&
		    !sqlite3_column_int(st, 9))
			lines = sqlite3_column_int64(st, 5) +
				sqlite3_column_int64(st, 6) -
				sqlite3_column_int64(st, 7);
		fix = sqlite3_column_int(st, 12) != 0;
		rc = add64(&rows, sqlite3_column_int64(st, 1)) ?:
		     add64(&rows, known_date(st, 10, 11)) ?:
		     add64(&rows, sqlite3_column_int64(st, 2)) ?:
		     add64(&rows, sqlite3_column_int64(st, 3)) ?:
		     add64(&rows, lines) ?: buf_add(&rows, &fix, 1);
		n++;
	}
	if (!rc && path)
		rc = put_blob(db, ins, repo_id, 0, path, strlen(path), &rows,
			      n);
out:
	free(path);
	buf_free(&rows);
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	return rc;
}

/* The records gathered for one key: an author's directory, a component. */
struct topacc {
	struct buf rows;
	size_t n;
	int64_t last; /* the last commit added: one record a commit */
};

/* The accumulator of KEY in M, added when missing. */
static int acc_get(struct topacc **out, struct strmap *m, const char *key,
		   size_t len)
{
	struct strmap_entry *e;
	int rc = strmap_put(&e, NULL, m, key, len);

	if (!rc && !e->v.p) {
		if (!(e->v.p = pt_calloc(1, sizeof(**out))))
			rc = PT_ENOMEM;
		else
			buf_init(&((struct topacc *)e->v.p)->rows, 0);
	}
	*out = rc ? NULL : e->v.p;
	return rc;
}

/*
 * Save (unless INS is NULL) and free the accumulators of M, each under
 * KEY (the author; 0: none) and its own text key.
 */
static int flush_accs(struct db *db, sqlite3_stmt *ins, int64_t repo_id,
		      int64_t author, struct strmap *tops)
{
	struct strmap_entry *e;
	int rc = 0;

	strmap_for_each(tops, e)
	{
		struct topacc *a = e->v.p;

		if (!rc && a && ins)
			rc = put_blob(db, ins, repo_id, author, e->key, e->klen,
				      &a->rows, a->n);
		if (a)
			buf_free(&a->rows);
		free(a);
	}
	strmap_free(tops);
	return rc;
}

static int build_author_tops(struct db *db, int64_t repo_id)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	struct strmap tops = STRMAP_INIT;
	int64_t author = 0;
	int rc;

	rc = prepare_build(&st, &ins, db, repo_id,
			   "SELECT c.author_id, c.id, c.commit_date, f.path "
			   "FROM commits c JOIN commit_files f ON "
			   "f.commit_id = c.id WHERE c.repo_id = ? AND "
			   "c.author_id IS NOT NULL AND c.commit_date IS NOT "
			   "NULL ORDER BY c.author_id, c.commit_date, c.id",
			   "INSERT INTO hist_author_tops (repo_id, "
			   "author_id, top, n, rows) VALUES (?, ?, ?, ?, ?)");
	if (rc)
		goto out;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		int64_t a = sqlite3_column_int64(st, 0);
		int64_t id = sqlite3_column_int64(st, 1);
		const char *p = (const char *)sqlite3_column_text(st, 3);
		const char *sl;
		struct topacc *acc;

		if (!p)
			continue;
		if (a != author) {
			rc = flush_accs(db, ins, repo_id, author, &tops);
			author = a;
		}
		sl = strchr(p, '/');
		if (!rc)
			rc = acc_get(&acc, &tops, p, sl ? (size_t)(sl - p) : 0);
		if (rc)
			break;
		if (acc->n && acc->last == id)
			continue;
		acc->last = id;
		acc->n++;
		rc = add64(&acc->rows, sqlite3_column_int64(st, 2))
			     ?: add64(&acc->rows, id);
	}
	if (!rc)
		rc = flush_accs(db, ins, repo_id, author, &tops);
	else
		flush_accs(db, NULL, repo_id, author, &tops);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	return rc;
}

/*
 * One blob of (date, known) records per key: SEL gives key, date, bug,
 * discovered ordered by key and date; INS stores repo, key, n, rows.
 */
static int build_dated(struct db *db, int64_t repo_id, const char *sel,
		       const char *ins_sql)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	struct buf rows = BUF_INIT;
	int64_t key = 0;
	size_t n = 0;
	int rc;

	rc = prepare_build(&st, &ins, db, repo_id, sel, ins_sql);
	if (rc)
		goto out;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(st, 0);

		if (n && k != key) {
			rc = put_blob(db, ins, repo_id, key, NULL, 0, &rows, n);
			buf_reset(&rows);
			n = 0;
		}
		key = k;
		n++;
		if (!rc)
			rc = add64(&rows, sqlite3_column_int64(st, 1))
				     ?: add64(&rows, known_date(st, 2, 3));
	}
	if (!rc && n)
		rc = put_blob(db, ins, repo_id, key, NULL, 0, &rows, n);
out:
	buf_free(&rows);
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	return rc;
}

/* The review kinds (trailers.kind), as features_db.c's. */
static int build_reviewers(struct db *db, int64_t repo_id)
{
	struct buf sel = BUF_INIT;
	int rc = buf_addf(&sel,
			  "SELECT t.person_id, c.commit_date, l.bug, "
			  "l.discovered FROM trailers t JOIN commits c ON "
			  "c.id = t.commit_id LEFT JOIN labels l ON "
			  "l.commit_id = c.id WHERE c.repo_id = ? AND "
			  "t.kind IN (%d, %d, %d) AND t.person_id IS NOT "
			  "NULL AND c.commit_date IS NOT NULL ORDER BY "
			  "t.person_id, c.commit_date",
			  TRAILER_REVIEWED, TRAILER_ACKED, TRAILER_TESTED);

	if (!rc)
		rc = build_dated(db, repo_id, sel.ptr,
				 "INSERT INTO hist_reviewers (repo_id, "
				 "person_id, n, rows) VALUES (?, ?, ?, ?)");
	buf_free(&sel);
	return rc;
}

static int build_authors(struct db *db, int64_t repo_id)
{
	return build_dated(db, repo_id,
			   "SELECT c.author_id, c.commit_date, l.bug, "
			   "l.discovered FROM commits c LEFT JOIN labels l "
			   "ON l.commit_id = c.id WHERE c.repo_id = ? AND "
			   "c.author_id IS NOT NULL AND c.commit_date IS NOT "
			   "NULL ORDER BY c.author_id, c.commit_date",
			   "INSERT INTO hist_authors (repo_id, author_id, n, "
			   "rows) VALUES (?, ?, ?, ?)");
}

static int build_components(struct db *db, int64_t repo_id)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	struct strmap comps = STRMAP_INIT;
	int rc;

	rc = prepare_build(&st, &ins, db, repo_id,
			   "SELECT c.subject, c.commit_date, l.bug, "
			   "l.discovered FROM commits c LEFT JOIN labels l "
			   "ON l.commit_id = c.id WHERE c.repo_id = ? AND "
			   "c.commit_date IS NOT NULL ORDER BY "
			   "c.commit_date, c.seq",
			   "INSERT INTO hist_components (repo_id, component, "
			   "n, rows) VALUES (?, ?, ?, ?)");
	if (rc)
		goto out;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		const char *subj = (const char *)sqlite3_column_text(st, 0);
		size_t len = subject_component(subj);
		struct topacc *acc;

		if (!len)
			continue;
		rc = acc_get(&acc, &comps, subj, len);
		if (rc)
			break;
		acc->n++;
		rc = add64(&acc->rows, sqlite3_column_int64(st, 1))
			     ?: add64(&acc->rows, known_date(st, 2, 3));
	}
	rc = flush_accs(db, rc ? NULL : ins, repo_id, 0, &comps) ?: rc;
out:
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	return rc;
}

static int exec_repo(struct db *db, const char *sql, int64_t repo_id)
{
	sqlite3_stmt *st;
	int rc = db_prepare(&st, db, sql);

	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_int(st, 2, HISTSUM_FORMAT);
	rc = sqlite3_step(st) == SQLITE_DONE
		     ? 0
		     : db_error(db, "clearing a history summary");
	sqlite3_finalize(st);
	return rc;
}

int histsum_build(struct db *db, int64_t repo_id)
{
	static const char *const clear[] = {
		"DELETE FROM hist_files WHERE repo_id = ?1",
		"DELETE FROM hist_author_tops WHERE repo_id = ?1",
		"DELETE FROM hist_reviewers WHERE repo_id = ?1",
		"DELETE FROM hist_authors WHERE repo_id = ?1",
		"DELETE FROM hist_components WHERE repo_id = ?1",
		"DELETE FROM hist_state WHERE repo_id = ?1",
	};
	size_t i;
	int own, rc;

	rc = db_savepoint(db, "histsum", &own);
	if (rc)
		return rc;
	for (i = 0; i < sizeof(clear) / sizeof(clear[0]) && !rc; i++)
		rc = exec_repo(db, clear[i], repo_id);
	if (!rc)
		rc = build_files(db, repo_id);
	if (!rc)
		rc = build_author_tops(db, repo_id);
	if (!rc)
		rc = build_reviewers(db, repo_id);
	if (!rc)
		rc = build_authors(db, repo_id);
	if (!rc)
		rc = build_components(db, repo_id);
	if (!rc)
		rc = exec_repo(db,
			       "INSERT INTO hist_state (repo_id, tip, "
			       "mined_at, format) SELECT id, tip, mined_at, "
			       "?2 FROM repos WHERE id = ?1",
			       repo_id);
	return db_release(db, "histsum", own, rc);
}

int histsum_current(int *out, struct db *db, int64_t repo_id)
{
	const int64_t args[] = { repo_id, HISTSUM_FORMAT };
	int64_t v;
	int rc;

	rc = db_row_int64(&v, 1, db,
			  "SELECT h.format = ?2 AND h.tip IS r.tip AND "
			  "h.mined_at IS r.mined_at FROM repos r JOIN "
			  "hist_state h ON h.repo_id = r.id WHERE r.id = ?1",
			  args, 2);
	*out = (int)v;
	return rc < 0 ? rc : 0;
}
