/*
 * histsum.c - the as-of history summaries of histsum.h: it owns the
 * hist_files, hist_author_tops, hist_reviewers and hist_state tables
 * (schema.c, step 11), their rebuild from the mined tables and the lookups
 * that turn them into feature columns.  Each blob is an array of
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

#include <stdlib.h>
#include <string.h>

#include "scoring/model/bughist.h"
#include "scoring/model/features.h"
#include "scoring/patch/trailer.h"
#include "scoring/store/db_row.h"
#include "scoring/util/strmap.h"

#define MAX_FILE_ROWS 20000u /* as features.c: newest changes per file */
#define DAY 86400.0
#define NEVER INT64_MAX

enum {
	FROW = 41, /* date, known, commit, author, lines (8 each), fix */
	AROW = 16, /* date, commit */
	RROW = 16, /* date, known (reviewers, authors, components) */
};

/* ---- records -------------------------------------------------------- */

static void put64(unsigned char *p, int64_t v)
{
	uint64_t u = (uint64_t)v;
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(u >> (8 * i));
}

static int64_t get64(const unsigned char *p)
{
	uint64_t u = 0;
	int i;

	for (i = 7; i >= 0; i--)
		u = u << 8 | p[i];
	return (int64_t)u;
}

static int add64(struct buf *b, int64_t v)
{
	unsigned char r[8];

	put64(r, v);
	return buf_add(b, r, sizeof(r));
}

/* Records of size SZ dated before DATE: the first field is the date. */
static size_t before(const unsigned char *rows, size_t n, size_t sz,
		     int64_t date)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (get64(rows + mid * sz) < date)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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

/* ---- lookups ----------------------------------------------------------- */

enum { H_FILE, H_PERSON, H_TOP, H_REV, H_AUTHOR, H_COMP, NH };

static const char *const hsql[NH] = {
	[H_FILE] = "SELECT rows FROM hist_files WHERE repo_id = ? AND "
		   "path = ?",
	[H_PERSON] = "SELECT id FROM people WHERE email = ?",
	[H_TOP] = "SELECT rows FROM hist_author_tops WHERE repo_id = ? AND "
		  "author_id = ? AND top = ?",
	[H_REV] = "SELECT rows FROM hist_reviewers WHERE repo_id = ? AND "
		  "person_id = ?",
	[H_AUTHOR] = "SELECT rows FROM hist_authors WHERE repo_id = ? AND "
		     "author_id = ?",
	[H_COMP] = "SELECT rows FROM hist_components WHERE repo_id = ? AND "
		   "component = ?",
};

/* A set of ids (commits, authors): open addressing, 0 is free. */
struct idset {
	int64_t *v;
	size_t cap, n;
};

struct histsum {
	int64_t repo_id;
	sqlite3_stmt *st[NH];
	struct idset a, b; /* reused between patches */
};

void histsum_free(struct histsum *h)
{
	if (!h)
		return;
	db_finalize_all(h->st, NH);
	free(h->a.v);
	free(h->b.v);
	free(h);
}

int histsum_open(struct histsum **out, struct db *db, int64_t repo_id)
{
	struct histsum *h;
	int cur = 0, rc;

	*out = NULL;
	rc = histsum_current(&cur, db, repo_id);
	if (!rc && !cur)
		rc = histsum_build(db, repo_id);
	if (rc == PT_ENOMEM)
		return rc;
	if (rc) /* not writable now: the SQL path has the same values */
		return 0;
	h = pt_calloc(1, sizeof(*h));
	if (!h)
		return PT_ENOMEM;
	h->repo_id = repo_id;
	rc = db_prepare_all(h->st, db, hsql, NH);
	if (rc) {
		histsum_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

static uint64_t mix(int64_t x)
{
	uint64_t z = (uint64_t)x * 0x9e3779b97f4a7c15ull;

	return z ^ (z >> 29);
}

static void idset_clear(struct idset *s)
{
	if (s->n && s->v)
		memset(s->v, 0, s->cap * sizeof(*s->v));
	s->n = 0;
}

static int idset_grow(struct idset *s)
{
	size_t cap = s->cap ? 2 * s->cap : 1024, i, k;
	int64_t *v = pt_calloc(cap, sizeof(*v));

	if (!v)
		return PT_ENOMEM;
	for (i = 0; i < s->cap; i++) {
		if (!s->v[i])
			continue;
		k = mix(s->v[i]) & (cap - 1);
		while (v[k])
			k = (k + 1) & (cap - 1);
		v[k] = s->v[i];
	}
	free(s->v);
	s->v = v;
	s->cap = cap;
	return 0;
}

/* Add ID (> 0; ids of mined rows are): 1 when new, 0 when there. */
static int idset_add(struct idset *s, int64_t id)
{
	size_t k;

	if (id <= 0)
		return 0;
	if (2 * (s->n + 1) > s->cap && idset_grow(s))
		return PT_ENOMEM;
	for (k = mix(id) & (s->cap - 1); s->v[k]; k = (k + 1) & (s->cap - 1))
		if (s->v[k] == id)
			return 0;
	s->v[k] = id;
	s->n++;
	return 1;
}

static sqlite3_stmt *q(struct histsum *h, int which)
{
	sqlite3_stmt *st = h->st[which];

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

/* The blob of the row the statement finds, records of size SZ. */
static const unsigned char *rows_of(sqlite3_stmt *st, size_t sz, size_t *n)
{
	const unsigned char *r = NULL;

	*n = 0;
	if (sqlite3_step(st) == SQLITE_ROW) {
		r = sqlite3_column_blob(st, 0);
		*n = r ? (size_t)sqlite3_column_bytes(st, 0) / sz : 0;
	}
	return *n ? r : NULL;
}

static int64_t person_id(struct histsum *h, const char *email)
{
	sqlite3_stmt *st = q(h, H_PERSON);

	sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
	return sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
}

static const char *file_path(const struct patch_file *f)
{
	return f->old_path ? f->old_path : f->new_path;
}

static size_t top_len(const char *path)
{
	const char *sl = strchr(path, '/');

	return sl ? (size_t)(sl - path) : 0;
}

/* SEXP: the author's earlier commits in one of p's top directories. */
static int author_tops(struct histsum *h, const struct patch *p, int64_t date,
		       float *t)
{
	int64_t who = person_id(h, p->author.email);
	size_t i, k, n, end;
	int rc = 0;

	idset_clear(&h->a);
	for (i = 0; who && i < p->nfiles && !rc; i++) {
		const char *path = file_path(&p->files[i]);
		const unsigned char *r;
		sqlite3_stmt *st;
		size_t len;

		if (!path)
			continue;
		len = top_len(path);
		for (k = 0; k < i; k++) {
			const char *o = file_path(&p->files[k]);

			if (o && top_len(o) == len && !strncmp(o, path, len))
				break;
		}
		if (k < i)
			continue; /* that directory is counted */
		st = q(h, H_TOP);
		sqlite3_bind_int64(st, 1, h->repo_id);
		sqlite3_bind_int64(st, 2, who);
		sqlite3_bind_text(st, 3, path, (int)len, SQLITE_STATIC);
		r = rows_of(st, AROW, &n);
		end = r ? before(r, n, AROW, date) : 0;
		for (k = 0; k < end && rc >= 0; k++)
			rc = idset_add(&h->a, get64(r + k * AROW + 8));
		rc = rc < 0 ? rc : 0;
	}
	t[FEAT_SEXP] = (float)h->a.n;
	return rc;
}

int histsum_files(struct histsum *h, const struct patch *p, int64_t date,
		  float *t)
{
	double lt = 0, age = 0;
	size_t i, k, n, end, nold = 0;
	int rc = 0;

	idset_clear(&h->a);
	idset_clear(&h->b);
	for (i = 0; i < p->nfiles && !rc; i++) {
		const struct patch_file *f = &p->files[i];
		const char *path = file_path(f);
		const unsigned char *r, *last;
		sqlite3_stmt *st;
		double d;

		if (!path || f->status == PATCH_FILE_ADDED)
			continue;
		st = q(h, H_FILE);
		sqlite3_bind_int64(st, 1, h->repo_id);
		sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
		r = rows_of(st, FROW, &n);
		end = r ? before(r, n, FROW, date) : 0;
		if (!end)
			continue;
		/* the newest change before DATE: its age and lines */
		last = r + (end - 1) * FROW;
		d = (double)(date - get64(last)) / DAY;
		age += d > 0 ? d : 0;
		nold++;
		lt += (double)get64(last + 32);
		k = end > MAX_FILE_ROWS ? end - MAX_FILE_ROWS : 0;
		for (; k < end && rc >= 0; k++) {
			rc = idset_add(&h->a, get64(r + k * FROW + 16));
			if (rc >= 0)
				rc = idset_add(&h->b, get64(r + k * FROW + 24));
		}
		rc = rc < 0 ? rc : 0;
	}
	if (rc)
		return rc;
	t[FEAT_LT] = (float)(lt > 0 ? lt : 0);
	t[FEAT_NDEV] = (float)h->b.n;
	t[FEAT_NUC] = (float)h->a.n;
	t[FEAT_AGE] = (float)(nold ? age / (double)nold : 0);
	return p->author.email ? author_tops(h, p, date, t) : 0;
}

/* Records dated before DATE (*n) and known buggy before it (*bugs). */
static void count_dated(sqlite3_stmt *st, int64_t date, double *n, double *bugs)
{
	const unsigned char *r;
	size_t nr, end, k;

	r = rows_of(st, RROW, &nr);
	end = r ? before(r, nr, RROW, date) : 0;
	*n = (double)end;
	*bugs = 0;
	for (k = 0; k < end; k++)
		*bugs += get64(r + k * RROW + 8) < date;
}

void histsum_reviewer(struct histsum *h, const char *email, int64_t date,
		      double *prior, double *bugs)
{
	int64_t who = person_id(h, email);
	sqlite3_stmt *st = q(h, H_REV);

	sqlite3_bind_int64(st, 1, h->repo_id);
	sqlite3_bind_int64(st, 2, who);
	count_dated(st, date, prior, bugs);
}

void histsum_experience(struct histsum *h, const char *email, int64_t date,
			double *exp, double *rexp)
{
	int64_t who = person_id(h, email);
	sqlite3_stmt *st = q(h, H_AUTHOR);
	const unsigned char *r;
	size_t n, end, k;

	sqlite3_bind_int64(st, 1, h->repo_id);
	sqlite3_bind_int64(st, 2, who);
	r = rows_of(st, RROW, &n);
	end = r ? before(r, n, RROW, date) : 0;
	*exp = (double)end;
	*rexp = 0;
	for (k = 0; k < end; k++) {
		double y =
			(double)(date - get64(r + k * RROW)) / (365.25 * DAY);

		*rexp += 1.0 / (1.0 + (y > 0 ? y : 0));
	}
}

/* The touched files' distinct earlier commits, known bugs and fixes. */
static int file_bugs(struct histsum *h, const struct patch *p, int64_t date,
		     float *t)
{
	double bugs = 0, fixes = 0;
	size_t i, k, n, end;
	int rc = 0;

	idset_clear(&h->a);
	for (i = 0; i < p->nfiles && rc >= 0; i++) {
		const struct patch_file *f = &p->files[i];
		const char *path = file_path(f);
		const unsigned char *r;
		sqlite3_stmt *st;

		if (!path || f->status == PATCH_FILE_ADDED)
			continue;
		st = q(h, H_FILE);
		sqlite3_bind_int64(st, 1, h->repo_id);
		sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
		r = rows_of(st, FROW, &n);
		end = r ? before(r, n, FROW, date) : 0;
		k = end > MAX_FILE_ROWS ? end - MAX_FILE_ROWS : 0;
		for (; k < end && rc >= 0; k++) {
			const unsigned char *row = r + k * FROW;

			rc = idset_add(&h->a, get64(row + 16));
			if (rc > 0) {
				bugs += get64(row + 8) < date;
				fixes += row[40] != 0;
			}
		}
	}
	if (rc < 0)
		return rc;
	t[FEAT_FILE_BUGS] = (float)bugs;
	t[FEAT_FILE_FIXES] = (float)fixes;
	t[FEAT_FILE_BUGRATE] = (float)bughist_rate(bugs, (double)h->a.n);
	return 0;
}

int histsum_bugs(struct histsum *h, const struct patch *p, int64_t date,
		 float *t)
{
	const char *subj = p->subject.clean;
	size_t len = subject_component(subj);
	double n, bugs;
	int rc = file_bugs(h, p, date, t);
	sqlite3_stmt *st;

	if (rc)
		return rc;
	if (p->author.email) {
		int64_t who = person_id(h, p->author.email);

		st = q(h, H_AUTHOR);
		sqlite3_bind_int64(st, 1, h->repo_id);
		sqlite3_bind_int64(st, 2, who);
		count_dated(st, date, &n, &bugs);
		t[FEAT_AUTHOR_BUGS] = (float)bugs;
		t[FEAT_AUTHOR_BUGRATE] = (float)bughist_rate(bugs, n);
	}
	if (len) {
		st = q(h, H_COMP);
		sqlite3_bind_int64(st, 1, h->repo_id);
		sqlite3_bind_text(st, 2, subj, (int)len, SQLITE_STATIC);
		count_dated(st, date, &n, &bugs);
		t[FEAT_COMP_CHANGES] = (float)n;
		t[FEAT_COMP_BUGRATE] = (float)bughist_rate(bugs, n);
	}
	return 0;
}
