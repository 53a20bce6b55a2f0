/*
 * features_db.c - the columns a patch gets from the state database as of
 * its date: a mined commit's own rows (features, reviews), and for a
 * patch that is not mined the author's, the files' and the reviewers'
 * earlier records (from histsum.c's summaries when there are some, by
 * SQL otherwise), and the mainline's release cycle as of the patch's
 * author date (a mail's Date:).  The past-bug columns are bughist.c's.
 */
#include "scoring/model/features.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/history/cycle.h"
#include "scoring/model/bughist.h"
#include "scoring/model/features_int.h"
#include "scoring/model/histsum.h"
#include "scoring/patch/trailer.h"

#define REV_PRIOR_RATE 0.1   /* smoothing: prior bug rate of a reviewer */
#define REV_PRIOR_WEIGHT 5.0 /* ... worth this many reviewed commits */
#define FREQUENT_REVIEWER 50

static const char *const queries[NQ] = {
	[Q_COMMIT] = "SELECT id FROM commits WHERE repo_id = ? AND sha = ?",
	[Q_FEATURES] = "SELECT lt, ndev, age, nuc, exp, rexp, sexp "
		       "FROM features WHERE commit_id = ?",
	[Q_REVIEWS] = "SELECT kind, is_maintainer, prior, prior_bug "
		      "FROM reviews WHERE commit_id = ?",
	[Q_TAG] = CYCLE_MAINLINE_AT_SQL,
	[Q_RELEASE] = CYCLE_RELEASE_AT_SQL,
	[Q_AUTHOR] = "SELECT c.commit_date FROM commits c JOIN people p ON "
		     "p.id = c.author_id WHERE c.repo_id = ? AND p.email = ? "
		     "AND c.commit_date < ?",
	[Q_REVIEWER] = "SELECT count(*), coalesce(sum(l.bug = 1 AND "
		       "l.discovered < ?3), 0) FROM trailers t "
		       "JOIN people p ON p.id = t.person_id "
		       "JOIN commits c ON c.id = t.commit_id "
		       "LEFT JOIN labels l ON l.commit_id = c.id "
		       "WHERE p.email = ?2 AND t.kind IN (?4, ?5, ?6) AND "
		       "c.commit_date < ?3 AND c.repo_id = ?1",
	/* a path's earlier changes, newest first */
	[Q_FILE] = "SELECT c.id, c.author_id, c.commit_date, f.status, "
		   "f.old_lines, f.added, f.removed, f.binary, f.uncounted "
		   "FROM commit_files f JOIN commits c ON c.id = f.commit_id "
		   "WHERE f.path = ? AND c.repo_id = ? AND c.commit_date < ? "
		   "ORDER BY c.commit_date DESC, c.seq DESC",
	[Q_AUTHOR_FILES] = "SELECT c.id, f.path FROM commits c JOIN people p "
			   "ON p.id = c.author_id JOIN commit_files f ON "
			   "f.commit_id = c.id WHERE c.repo_id = ? AND "
			   "p.email = ? AND c.commit_date < ? ORDER BY c.id",
};

void feat_ctx_free(struct feat_ctx *c)
{
	if (!c)
		return;
	db_finalize_all(c->st, NQ);
	histsum_free(c->hs);
	bughist_free(c->bh);
	free(c);
}

int feat_ctx_new(struct feat_ctx **out, struct db *db, int64_t repo_id)
{
	struct feat_ctx *c;
	int rc;

	*out = NULL;
	c = pt_calloc(1, sizeof(*c));
	if (!c)
		return PT_ENOMEM;
	c->db = db;
	c->repo_id = repo_id;
	if (db && (rc = db_prepare_all(c->st, db, queries, NQ))) {
		feat_ctx_free(c);
		return rc;
	}
	if (db && (rc = bughist_new(&c->bh, db, repo_id))) {
		feat_ctx_free(c);
		return rc;
	}
	if (db && (rc = histsum_open(&c->hs, db, repo_id))) {
		feat_ctx_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void feat_ctx_no_summary(struct feat_ctx *c)
{
	histsum_free(c->hs);
	c->hs = NULL;
}

static sqlite3_stmt *q(struct feat_ctx *c, int which)
{
	sqlite3_stmt *st = c->st[which];

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

static double col_or_nan(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL
		       ? NAN
		       : sqlite3_column_double(st, i);
}

/* The mined commit's id, or 0. */
int64_t feat_mined_id(struct feat_ctx *c, const struct patch *p)
{
	sqlite3_stmt *st;

	if (!c->db || !p->commit_id)
		return 0;
	st = q(c, Q_COMMIT);
	sqlite3_bind_int64(st, 1, c->repo_id);
	sqlite3_bind_text(st, 2, p->commit_id, -1, SQLITE_STATIC);
	return sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
}

void feat_history_mined(struct feat_ctx *c, int64_t id, float *t)
{
	sqlite3_stmt *st = q(c, Q_FEATURES);

	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW)
		return;
	t[FEAT_LT] = (float)col_or_nan(st, 0);
	t[FEAT_NDEV] = (float)col_or_nan(st, 1);
	t[FEAT_AGE] = (float)col_or_nan(st, 2);
	t[FEAT_NUC] = (float)col_or_nan(st, 3);
	t[FEAT_EXP] = (float)col_or_nan(st, 4);
	t[FEAT_REXP] = (float)col_or_nan(st, 5);
	t[FEAT_SEXP] = (float)col_or_nan(st, 6);
}

/* A patch that is not mined: the author's record from earlier commits. */
void feat_history_unmined(struct feat_ctx *c, const struct patch *p,
			  int64_t date, float *t)
{
	sqlite3_stmt *st;
	double exp = 0, rexp = 0;

	if (!p->author.email)
		return;
	if (c->hs) {
		histsum_experience(c->hs, p->author.email, date, &exp, &rexp);
		t[FEAT_EXP] = (float)exp;
		t[FEAT_REXP] = (float)rexp;
		return;
	}
	st = q(c, Q_AUTHOR);
	sqlite3_bind_int64(st, 1, c->repo_id);
	sqlite3_bind_text(st, 2, p->author.email, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, date);
	while (sqlite3_step(st) == SQLITE_ROW) {
		double y = (double)(date - sqlite3_column_int64(st, 0)) /
			   (365.25 * DAY);

		exp++;
		rexp += 1.0 / (1.0 + (y > 0 ? y : 0));
	}
	t[FEAT_EXP] = (float)exp;
	t[FEAT_REXP] = (float)rexp;
}

#define MAX_FILE_ROWS 20000u /* earlier changes read per file */

struct ids {
	int64_t *v;
	size_t n, cap;
};

static int ids_add(struct ids *s, int64_t id)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		void *np = pt_reallocarray(s->v, cap, sizeof(*s->v));

		if (!np)
			return PT_ENOMEM;
		s->v = np;
		s->cap = cap;
	}
	s->v[s->n++] = id;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t ids_unique(struct ids *s)
{
	size_t i, m = 0;

	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_i64);
	for (i = 0; i < s->n; i++)
		if (!m || s->v[m - 1] != s->v[i])
			s->v[m++] = s->v[i];
	return s->n = m;
}

static const char *file_path(const struct patch_file *f)
{
	return f->old_path ? f->old_path : f->new_path;
}

/* The top-level directory of a path, "" at the root (NS, SEXP). */
static size_t top_len(const char *path)
{
	const char *sl = strchr(path, '/');

	return sl ? (size_t)(sl - path) : 0;
}

static int same_top(const struct patch *p, const char *path)
{
	size_t i, n = top_len(path);

	for (i = 0; i < p->nfiles; i++) {
		const char *q = file_path(&p->files[i]);

		if (q && top_len(q) == n && !strncmp(q, path, n))
			return 1;
	}
	return 0;
}

/*
 * The file history of a patch that is not mined, as histfeat.c defines
 * it for mined commits but from the stored file changes dated before
 * the patch: LT, NDEV, NUC, AGE and SEXP.  Renames are not followed
 * and addresses are not folded through .mailmap, so a value can differ
 * from the miner's for the same change; missing would differ more.
 */
int feat_files_unmined(struct feat_ctx *c, const struct patch *p, int64_t date,
		       float *t)
{
	struct ids devs = { 0 }, cms = { 0 };
	double lt = 0, age = 0;
	size_t i, nold = 0, rows;
	int64_t last = -1;
	unsigned sexp = 0;
	int rc = 0;

	if (c->hs)
		return histsum_files(c->hs, p, date, t);
	for (i = 0; i < p->nfiles && !rc; i++) {
		const struct patch_file *f = &p->files[i];
		const char *path = file_path(f);
		sqlite3_stmt *st;

		if (!path || f->status == PATCH_FILE_ADDED)
			continue;
		st = q(c, Q_FILE);
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, c->repo_id);
		sqlite3_bind_int64(st, 3, date);
		for (rows = 0; !rc && rows < MAX_FILE_ROWS &&
			       sqlite3_step(st) == SQLITE_ROW;
		     rows++) {
			if (!rows) {
				const char *status =
					(const char *)sqlite3_column_text(st,
									  3);
				double d =
					(double)(date -
						 sqlite3_column_int64(st, 2)) /
					DAY;

				age += d > 0 ? d : 0;
				nold++;
				if (status && *status != 'D' &&
				    !sqlite3_column_int(st, 7) &&
				    !sqlite3_column_int(st, 8))
					lt += sqlite3_column_double(st, 4) +
					      sqlite3_column_double(st, 5) -
					      sqlite3_column_double(st, 6);
			}
			rc = ids_add(&cms, sqlite3_column_int64(st, 0));
			if (!rc && sqlite3_column_type(st, 1) != SQLITE_NULL)
				rc = ids_add(&devs,
					     sqlite3_column_int64(st, 1));
		}
	}
	if (!rc && p->author.email) {
		sqlite3_stmt *st = q(c, Q_AUTHOR_FILES);

		sqlite3_bind_int64(st, 1, c->repo_id);
		sqlite3_bind_text(st, 2, p->author.email, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, date);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0);
			const char *path =
				(const char *)sqlite3_column_text(st, 1);

			if (id != last && path && same_top(p, path)) {
				sexp++;
				last = id;
			}
		}
		t[FEAT_SEXP] = (float)sexp;
	}
	if (!rc) {
		t[FEAT_LT] = (float)(lt > 0 ? lt : 0);
		t[FEAT_NDEV] = (float)ids_unique(&devs);
		t[FEAT_NUC] = (float)ids_unique(&cms);
		t[FEAT_AGE] = (float)(nold ? age / (double)nold : 0);
	}
	free(devs.v);
	free(cms.v);
	return rc;
}

struct rev_acc {
	double prior, bug, max_prior;
	int n, maint, maint_known;
};

static void rev_add(struct rev_acc *a, double prior, double bug)
{
	a->prior += prior;
	a->bug += bug;
	if (prior > a->max_prior)
		a->max_prior = prior;
	a->n++;
}

static void rev_store(const struct rev_acc *a, float *t)
{
	if (!a->n)
		return;
	t[FEAT_REV_BUGRATE] =
		(float)((a->bug + REV_PRIOR_RATE * REV_PRIOR_WEIGHT) /
			(a->prior + REV_PRIOR_WEIGHT));
	t[FEAT_REV_PRIOR] = (float)a->prior;
	t[FEAT_REV_FREQUENT] = a->max_prior >= FREQUENT_REVIEWER;
}

void feat_reviews_mined(struct feat_ctx *c, int64_t id, float *t)
{
	sqlite3_stmt *st = q(c, Q_REVIEWS);
	struct rev_acc a = { 0 };
	int reviewed = 0;

	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int kind = sqlite3_column_int(st, 0);

		rev_add(&a, sqlite3_column_double(st, 2),
			sqlite3_column_double(st, 3));
		if (kind != TRAILER_REVIEWED && kind != TRAILER_ACKED)
			continue;
		reviewed = 1;
		if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
			a.maint_known = 1;
			a.maint |= sqlite3_column_int(st, 1) != 0;
		}
	}
	rev_store(&a, t);
	if (!reviewed)
		t[FEAT_MAINT_REVIEW] = 0;
	else if (a.maint_known)
		t[FEAT_MAINT_REVIEW] = (float)a.maint;
}

/* A reviewer's earlier reviews and the known bugs among them; 0: none. */
static int reviewer_asof(struct feat_ctx *c, const char *email, int64_t date,
			 double *prior, double *bugs)
{
	sqlite3_stmt *st;

	if (c->hs) {
		histsum_reviewer(c->hs, email, date, prior, bugs);
		return 1;
	}
	st = q(c, Q_REVIEWER);
	sqlite3_bind_int64(st, 1, c->repo_id);
	sqlite3_bind_text(st, 2, email, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, date);
	sqlite3_bind_int(st, 4, TRAILER_REVIEWED);
	sqlite3_bind_int(st, 5, TRAILER_ACKED);
	sqlite3_bind_int(st, 6, TRAILER_TESTED);
	if (sqlite3_step(st) != SQLITE_ROW)
		return 0;
	*prior = sqlite3_column_double(st, 0);
	*bugs = sqlite3_column_double(st, 1);
	return 1;
}

void feat_reviews_unmined(struct feat_ctx *c, const struct patch *p,
			  int64_t date, float *t)
{
	struct rev_acc a = { 0 };
	double prior, bugs;
	size_t i;

	for (i = 0; i < p->ntrailers; i++) {
		const struct trailer *tr = &p->trailers[i];

		if (!(trailer_kind_flags(tr->kind) & TRAILER_F_REVIEW) ||
		    !tr->email)
			continue;
		if (reviewer_asof(c, tr->email, date, &prior, &bugs))
			rev_add(&a, prior, bugs);
	}
	rev_store(&a, t);
}

static float days_between(int64_t date, int64_t then)
{
	return (float)((double)(date - then) / DAY);
}

/*
 * The mainline's state at DATE: its newest tag (cycle.h: never a
 * stable-branch tag) and its newest final release.  After a final
 * release rc is 0: the next release's merge window.
 */
int feat_cycle_asof(struct feat_ctx *c, int64_t date, float *t,
		    struct feat_vec *v)
{
	sqlite3_stmt *st = q(c, Q_TAG);
	const char *name;

	sqlite3_bind_int64(st, 1, c->repo_id);
	sqlite3_bind_int64(st, 2, date);
	if (sqlite3_step(st) == SQLITE_ROW) {
		int rc = sqlite3_column_int(st, 2);

		name = (const char *)sqlite3_column_text(st, 0);
		t[FEAT_RC] = (float)rc;
		t[FEAT_LATE_RC] = rc >= CYCLE_LATE_RC;
		t[FEAT_DAYS_TAG] =
			days_between(date, sqlite3_column_int64(st, 3));
		if (name && !(v->release_tag = pt_strdup(name)))
			return PT_ENOMEM;
	}
	st = q(c, Q_RELEASE);
	sqlite3_bind_int64(st, 1, c->repo_id);
	sqlite3_bind_int64(st, 2, date);
	if (sqlite3_step(st) == SQLITE_ROW) {
		name = (const char *)sqlite3_column_text(st, 0);
		t[FEAT_DAYS_RELEASE] =
			days_between(date, sqlite3_column_int64(st, 1));
		if (name && !(v->release = pt_strdup(name)))
			return PT_ENOMEM;
	}
	return 0;
}
