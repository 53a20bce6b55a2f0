/*
 * histsum_query.c - the lookups of histsum.h: open the summaries of a
 * repository (building them when stale) and turn the records dated
 * before a patch into feature columns (files, author, reviewers,
 * components).  The records and their building are histsum.c's.
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

/*
 * A set of ids (commits, authors): open addressing, 0 is free; at[] the
 * slots taken, so clearing a set grown by one large patch does not cost
 * every later small one a pass over all its slots.
 */
struct idset {
	int64_t *v;
	size_t *at;
	size_t cap, n;
};

/*
 * The last addresses found in people: a patch asks for its author's id
 * three times.  Only found ones: a row of people is never changed or
 * deleted, but one may be added while the context is open.
 */
#define PERSON_CACHE 8

struct person_hit {
	char *email;
	int64_t id;
};

struct histsum {
	int64_t repo_id;
	sqlite3_stmt *st[NH];
	struct idset a, b; /* reused between patches */
	struct person_hit people[PERSON_CACHE];
	unsigned next_person;
};

void histsum_free(struct histsum *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < PERSON_CACHE; i++)
		free(h->people[i].email);
	db_finalize_all(h->st, NH);
	free(h->a.v);
	free(h->a.at);
	free(h->b.v);
	free(h->b.at);
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
	size_t i;

	for (i = 0; i < s->n; i++)
		s->v[s->at[i]] = 0;
	s->n = 0;
}

static int idset_grow(struct idset *s)
{
	size_t cap = s->cap ? 2 * s->cap : 1024, i, k;
	int64_t *v = pt_calloc(cap, sizeof(*v));
	size_t *at = pt_calloc(cap / 2, sizeof(*at));

	if (!v || !at) {
		free(v);
		free(at);
		return PT_ENOMEM;
	}
	for (i = 0; i < s->n; i++) {
		int64_t id = s->v[s->at[i]];

		k = mix(id) & (cap - 1);
		while (v[k])
			k = (k + 1) & (cap - 1);
		v[k] = id;
		at[i] = k;
	}
	free(s->v);
	free(s->at);
	s->v = v;
	s->at = at;
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
	s->at[s->n++] = k;
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

/* The hist_files records of PATH dated before DATE (*end of them). */
static const unsigned char *file_rows(struct histsum *h, const char *path,
				      int64_t date, size_t *end)
{
	sqlite3_stmt *st = q(h, H_FILE);
	const unsigned char *r;
	size_t n;

	sqlite3_bind_int64(st, 1, h->repo_id);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	r = rows_of(st, FROW, &n);
	*end = r ? before(r, n, FROW, date) : 0;
	return r;
}

static int64_t person_id(struct histsum *h, const char *email)
{
	struct person_hit *c = h->people;
	sqlite3_stmt *st;
	int64_t id;
	size_t i;

	for (i = 0; i < PERSON_CACHE; i++)
		if (c[i].email && !strcmp(c[i].email, email))
			return c[i].id;
	st = q(h, H_PERSON);
	sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
	id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	if (id > 0) {
		c = &h->people[h->next_person++ % PERSON_CACHE];
		free(c->email);
		c->email = pt_strdup(email); /* NULL: not remembered */
		c->id = id;
	}
	return id;
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
	size_t i, k, end, nold = 0;
	int rc = 0;

	idset_clear(&h->a);
	idset_clear(&h->b);
	for (i = 0; i < p->nfiles && !rc; i++) {
		const struct patch_file *f = &p->files[i];
		const char *path = file_path(f);
		const unsigned char *r, *last;
		double d;

		if (!path || f->status == PATCH_FILE_ADDED)
			continue;
		r = file_rows(h, path, date, &end);
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
	size_t i, k, end;
	int rc = 0;

	idset_clear(&h->a);
	for (i = 0; i < p->nfiles && rc >= 0; i++) {
		const struct patch_file *f = &p->files[i];
		const char *path = file_path(f);
		const unsigned char *r;

		if (!path || f->status == PATCH_FILE_ADDED)
			continue;
		r = file_rows(h, path, date, &end);
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
