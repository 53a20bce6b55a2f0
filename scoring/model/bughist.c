/*
 * bughist.c - the past-bug columns of feat.h (see bughist.h): the
 * touched files' known bugs, rate and earlier fixes, the author's known
 * bugs and rate, and the subject component's changes and rate.  For a
 * mined commit it reads the counts histfeat.c stored; for a patch that
 * is not mined it counts them with SQL over the commits dated before the
 * patch, with the definitions of histfeat.c except that renames are not
 * followed and addresses are not folded through .mailmap (as for the
 * other history columns of an unmined patch).
 */
#include "scoring/model/bughist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/model/features.h"

#define MAX_FILE_ROWS 20000u /* earlier changes read per file */

enum { B_MINED, B_FILE, B_AUTHOR, B_COMP, NB };

static const char *const bsql[NB] = {
	[B_MINED] = "SELECT nuc, exp, file_bugs, file_fixes, author_bugs, "
		    "comp_changes, comp_bugs FROM features "
		    "WHERE commit_id = ?",
	/* a path's earlier changes (newest first, as features.c reads) */
	[B_FILE] = "SELECT c.id, coalesce(l.bug = 1 AND l.discovered < ?3, 0),"
		   " coalesce(l.is_fix, 0) FROM commit_files f "
		   "JOIN commits c ON c.id = f.commit_id "
		   "LEFT JOIN labels l ON l.commit_id = c.id "
		   "WHERE f.path = ?1 AND c.repo_id = ?2 AND "
		   "c.commit_date < ?3 "
		   "ORDER BY c.commit_date DESC, c.seq DESC",
	[B_AUTHOR] = "SELECT count(*), coalesce(sum(l.bug = 1 AND "
		     "l.discovered < ?3), 0) FROM commits c "
		     "JOIN people p ON p.id = c.author_id "
		     "LEFT JOIN labels l ON l.commit_id = c.id "
		     "WHERE c.repo_id = ?1 AND p.email = ?2 AND "
		     "c.commit_date < ?3",
	/* subjects in ["comp: ", "comp:!"): exactly those of component */
	[B_COMP] = "SELECT count(*), coalesce(sum(l.bug = 1 AND "
		   "l.discovered < ?4), 0) FROM commits c "
		   "LEFT JOIN labels l ON l.commit_id = c.id "
		   "WHERE c.repo_id = ?1 AND c.subject >= ?2 AND "
		   "c.subject < ?3 AND c.commit_date < ?4",
};

struct bughist {
	int64_t repo_id;
	sqlite3_stmt *st[NB];
};

double bughist_rate(double bugs, double n)
{
	return (bugs + BUGHIST_PRIOR_RATE * BUGHIST_PRIOR_WEIGHT) /
	       (n + BUGHIST_PRIOR_WEIGHT);
}

void bughist_free(struct bughist *b)
{
	if (!b)
		return;
	db_finalize_all(b->st, NB);
	free(b);
}

int bughist_new(struct bughist **out, struct db *db, int64_t repo_id)
{
	struct bughist *b;
	int rc;

	*out = NULL;
	b = pt_calloc(1, sizeof(*b));
	if (!b)
		return PT_ENOMEM;
	b->repo_id = repo_id;
	rc = db_prepare_all(b->st, db, bsql, NB);
	if (rc) {
		bughist_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

static sqlite3_stmt *stmt(struct bughist *b, int which)
{
	sqlite3_stmt *st = b->st[which];

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

static int is_null(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL;
}

static void store_files(float *t, double bugs, double fixes, double n)
{
	t[FEAT_FILE_BUGS] = (float)bugs;
	t[FEAT_FILE_FIXES] = (float)fixes;
	t[FEAT_FILE_BUGRATE] = (float)bughist_rate(bugs, n);
}

static void store_author(float *t, double bugs, double n)
{
	t[FEAT_AUTHOR_BUGS] = (float)bugs;
	t[FEAT_AUTHOR_BUGRATE] = (float)bughist_rate(bugs, n);
}

static void store_comp(float *t, double bugs, double n)
{
	t[FEAT_COMP_CHANGES] = (float)n;
	t[FEAT_COMP_BUGRATE] = (float)bughist_rate(bugs, n);
}

void bughist_mined(struct bughist *b, int64_t id, float *t)
{
	sqlite3_stmt *st = stmt(b, B_MINED);

	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW)
		return;
	/* NULL: mined before these columns existed, until the next mine */
	if (!is_null(st, 0) && !is_null(st, 2) && !is_null(st, 3))
		store_files(t, sqlite3_column_double(st, 2),
			    sqlite3_column_double(st, 3),
			    sqlite3_column_double(st, 0));
	if (!is_null(st, 1) && !is_null(st, 4))
		store_author(t, sqlite3_column_double(st, 4),
			     sqlite3_column_double(st, 1));
	if (!is_null(st, 5) && !is_null(st, 6))
		store_comp(t, sqlite3_column_double(st, 6),
			   sqlite3_column_double(st, 5));
}

/* One earlier change to a touched file: bit 0 known buggy, bit 1 fix. */
struct change {
	int64_t id;
	int flags;
};

struct changes {
	struct change *v;
	size_t n, cap;
};

static int changes_add(struct changes *s, int64_t id, int flags)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		void *np = pt_reallocarray(s->v, cap, sizeof(*s->v));

		if (!np)
			return PT_ENOMEM;
		s->v = np;
		s->cap = cap;
	}
	s->v[s->n].id = id;
	s->v[s->n++].flags = flags;
	return 0;
}

static int cmp_change(const void *a, const void *b)
{
	int64_t x = ((const struct change *)a)->id;
	int64_t y = ((const struct change *)b)->id;

	return x < y ? -1 : x > y;
}

/* Distinct earlier commits to the touched files, as features.c reads. */
static int files_asof(struct bughist *b, const struct patch *p, int64_t date,
		      float *t)
{
	struct changes cs = { 0 };
	double bugs = 0, fixes = 0, n = 0;
	size_t i, rows;
	int rc = 0;

	for (i = 0; i < p->nfiles && !rc; i++) {
		const struct patch_file *f = &p->files[i];
		const char *path = f->old_path ? f->old_path : f->new_path;
		sqlite3_stmt *st;

		if (!path || f->status == PATCH_FILE_ADDED)
			continue;
		st = stmt(b, B_FILE);
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, b->repo_id);
		sqlite3_bind_int64(st, 3, date);
		for (rows = 0; !rc && rows < MAX_FILE_ROWS &&
			       sqlite3_step(st) == SQLITE_ROW;
		     rows++)
			rc = changes_add(&cs, sqlite3_column_int64(st, 0),
					 (sqlite3_column_int(st, 1) !=
					  0) | (sqlite3_column_int(st, 2) != 0)
							 << 1);
	}
	if (!rc && cs.n)
		qsort(cs.v, cs.n, sizeof(*cs.v), cmp_change);
	for (i = 0; !rc && i < cs.n; i++) {
		if (i && cs.v[i].id == cs.v[i - 1].id)
			continue;
		n++;
		bugs += cs.v[i].flags & 1;
		fixes += (cs.v[i].flags & 2) != 0;
	}
	if (!rc)
		store_files(t, bugs, fixes, n);
	free(cs.v);
	return rc;
}

static void author_asof(struct bughist *b, const struct patch *p, int64_t date,
			float *t)
{
	sqlite3_stmt *st;

	if (!p->author.email)
		return;
	st = stmt(b, B_AUTHOR);
	sqlite3_bind_int64(st, 1, b->repo_id);
	sqlite3_bind_text(st, 2, p->author.email, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, date);
	if (sqlite3_step(st) == SQLITE_ROW)
		store_author(t, sqlite3_column_double(st, 1),
			     sqlite3_column_double(st, 0));
}

static int comp_asof(struct bughist *b, const struct patch *p, int64_t date,
		     float *t)
{
	const char *subj = p->subject.clean;
	size_t n = subject_component(subj);
	struct buf lo = BUF_INIT, hi = BUF_INIT;
	sqlite3_stmt *st;
	int rc;

	if (!n)
		return 0;
	rc = buf_addf(&lo, "%.*s: ", (int)n, subj);
	if (!rc)
		rc = buf_addf(&hi, "%.*s:!", (int)n, subj);
	if (!rc) {
		st = stmt(b, B_COMP);
		sqlite3_bind_int64(st, 1, b->repo_id);
		sqlite3_bind_text(st, 2, lo.ptr, (int)lo.len, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, hi.ptr, (int)hi.len, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, date);
		if (sqlite3_step(st) == SQLITE_ROW)
			store_comp(t, sqlite3_column_double(st, 1),
				   sqlite3_column_double(st, 0));
		sqlite3_reset(st);
	}
	buf_free(&lo);
	buf_free(&hi);
	return rc;
}

int bughist_unmined(struct bughist *b, const struct patch *p, int64_t date,
		    float *t)
{
	int rc = files_asof(b, p, date, t);

	if (!rc)
		author_asof(b, p, date, t);
	if (!rc)
		rc = comp_asof(b, p, date, t);
	return rc;
}
