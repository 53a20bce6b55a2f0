/*
 * archds.c - the rows of the archive model (see archds.h): applied
 * postings with their size, their list features as of the apply date
 * (listfeat.c) and their subject's words, labelled bug-introducing with
 * the date that became known.
 */
#include "scoring/model/archds.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/model/features.h"
#include "scoring/store/db_row.h"

#define ARCHDS_MAX_WORDS 64

static const char *const size_names[ARCHDS_NSIZE] = {
	"size.lines_added",
	"size.lines_removed",
	"size.files",
	"size.series_patches",
};

static const char *const size_descs[ARCHDS_NSIZE] = {
	"lines added",
	"lines removed",
	"files touched",
	"patches in the series",
};

static const char *all_names[ARCHDS_NTAB];

const char *const *archds_names(void)
{
	size_t i;

	if (!all_names[0]) {
		for (i = 0; i < LISTFEAT_N; i++)
			all_names[ARCHDS_NSIZE + i] =
				listfeat_name((enum listfeat_id)i);
		for (i = 0; i < ARCHDS_NSIZE; i++)
			all_names[i] = size_names[i];
	}
	return all_names;
}

const char *archds_desc(size_t col)
{
	if (col < ARCHDS_NSIZE)
		return size_descs[col];
	return col < ARCHDS_NTAB
		       ? listfeat_desc((enum listfeat_id)(col - ARCHDS_NSIZE))
		       : "?";
}

int archds_group(size_t col)
{
	if (col < ARCHDS_NSIZE || col >= ARCHDS_NTAB)
		return ARCHDS_G_SIZE;
	return (int)listfeat_group_of((enum listfeat_id)(col - ARCHDS_NSIZE));
}

/* ---- one posting ----------------------------------------------------- */

static int cmp_sp(const void *a, const void *b)
{
	const struct model_sparse *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

size_t archds_next_word(const char **s, char *tok, size_t cap)
{
	const char *p = *s ? *s : "";
	size_t len;

	do {
		len = 0;
		while (*p && !isalnum((unsigned char)*p) && *p != '_')
			p++;
		while (*p && (isalnum((unsigned char)*p) || *p == '_'))
			if (len + 1 < cap)
				tok[len++] = (char)tolower((unsigned char)*p++);
			else
				p++;
	} while (*p && len < 2);
	*s = p;
	return len < 2 ? 0 : len;
}

/* The subject's words (archds_next_word), unique, 1/sqrt(n) each. */
static int subject_words(struct model_sparse **out, size_t *n, const char *subj,
			 unsigned bits)
{
	struct model_sparse *sp;
	char tok[64];
	size_t k = 0, m = 0, i;

	*out = NULL;
	*n = 0;
	sp = pt_calloc(ARCHDS_MAX_WORDS + 1, sizeof(*sp));
	if (!sp)
		return PT_ENOMEM;
	while (k < ARCHDS_MAX_WORDS) {
		size_t len = archds_next_word(&subj, tok, sizeof(tok));

		if (!len)
			break;
		sp[k++].index = feat_hash("w", tok, len, bits);
	}
	if (k)
		qsort(sp, k, sizeof(*sp), cmp_sp);
	for (i = 0; i < k; i++)
		if (!m || sp[m - 1].index != sp[i].index)
			sp[m++] = sp[i];
	for (i = 0; i < m; i++)
		sp[i].value = (float)(1.0 / sqrt((double)m));
	*out = sp;
	*n = m;
	return 0;
}

struct post_size {
	int64_t added, removed, files, total;
	char *subject;
};

static int post_size(struct post_size *s, struct db *db, int64_t patch_id)
{
	sqlite3_stmt *st;
	const unsigned char *t;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = db_prepare(&st, db,
			"SELECT added, removed, files, total, subject FROM "
			"patches WHERE id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, patch_id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = pt_error_set(PT_ENOTFOUND, "no posting %lld",
				  (long long)patch_id);
	} else {
		s->added = sqlite3_column_int64(st, 0);
		s->removed = sqlite3_column_int64(st, 1);
		s->files = sqlite3_column_int64(st, 2);
		s->total = sqlite3_column_int64(st, 3);
		t = sqlite3_column_text(st, 4);
		s->subject = pt_strdup(t ? (const char *)t : "");
		if (!s->subject)
			rc = PT_ENOMEM;
	}
	sqlite3_finalize(st);
	return rc;
}

int archds_vector(float *tab, struct model_sparse **sp, size_t *nsp,
		  char **subject, struct db *db, int64_t patch_id,
		  int64_t as_of, unsigned hash_bits)
{
	struct post_size s;
	struct listfeat f;
	size_t i;
	int rc;

	*sp = NULL;
	*nsp = 0;
	rc = post_size(&s, db, patch_id);
	if (!rc)
		rc = listfeat_compute(&f, db, patch_id, as_of);
	if (!rc) {
		tab[ARCHDS_LINES_ADDED] = (float)s.added;
		tab[ARCHDS_LINES_REMOVED] = (float)s.removed;
		tab[ARCHDS_FILES] = (float)s.files;
		tab[ARCHDS_SERIES_PATCHES] = (float)(s.total ? s.total : 1);
		for (i = 0; i < LISTFEAT_N; i++)
			tab[ARCHDS_NSIZE + i] = (float)f.v[i];
		rc = subject_words(sp, nsp, s.subject, hash_bits);
	}
	if (!rc && subject) {
		*subject = s.subject;
		s.subject = NULL;
	}
	free(s.subject);
	return rc;
}

/* ---- the rows -------------------------------------------------------- */

struct cand {
	int64_t id, at, discovered;
	int bug;
};

static int grow(struct archds *ds, size_t cap)
{
	void *p;

#define R(f)                                             \
	do {                                             \
		p = pt_reallocarray(f, cap, sizeof(*f)); \
		if (!p)                                  \
			return PT_ENOMEM;                \
		f = p;                                   \
	} while (0)
	R(ds->patch_id);
	R(ds->bug);
	R(ds->discovered);
#undef R
	return 0;
}

static int candidates(struct cand **out, size_t *n, struct db *db,
		      int64_t since, int64_t until)
{
	sqlite3_stmt *st;
	struct cand *v = NULL;
	size_t cap = 0;
	int rc;

	*n = 0;
	rc = db_prepare(&st, db,
			"SELECT p.id, o.applied_date, coalesce(l.bug, 0), "
			"l.discovered FROM patches p JOIN posting_outcomes o "
			"ON o.patch_id = p.id LEFT JOIN posting_labels l ON "
			"l.patch_id = p.id WHERE o.outcome = 'applied' AND "
			"o.applied_date >= ? AND o.applied_date < ? ORDER BY "
			"o.applied_date, p.id");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, since);
	sqlite3_bind_int64(st, 2, until);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			void *p = pt_reallocarray(v, cap ? cap * 2 : 1024,
						  sizeof(*v));

			if (!p) {
				rc = PT_ENOMEM;
				break;
			}
			v = p;
			cap = cap ? cap * 2 : 1024;
		}
		v[*n].id = sqlite3_column_int64(st, 0);
		v[*n].at = sqlite3_column_int64(st, 1);
		v[*n].bug = sqlite3_column_int(st, 2);
		v[*n].discovered = sqlite3_column_type(st, 3) == SQLITE_NULL
					   ? INT64_MAX
					   : sqlite3_column_int64(st, 3);
		if (v[*n].discovered >= until)
			v[*n].bug = 0; /* not known at until */
		(*n)++;
	}
	rc = rc == SQLITE_DONE ? 0
	     : rc == PT_ENOMEM ? rc
			       : db_error(db, "reading applied postings");
	sqlite3_finalize(st);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	return 0;
}

static int add_row(struct archds *ds, struct db *db, const struct cand *c)
{
	float tab[ARCHDS_NTAB];
	struct model_sparse *sp = NULL;
	size_t nsp;
	int rc;

	rc = archds_vector(tab, &sp, &nsp, NULL, db, c->id, c->at,
			   MODEL_HASH_BITS);
	if (!rc)
		rc = model_data_add(ds->d, tab, sp, nsp, c->bug, c->at,
				    (double)(tab[ARCHDS_LINES_ADDED] +
					     tab[ARCHDS_LINES_REMOVED]) +
					    1);
	if (!rc) {
		ds->patch_id[ds->n] = c->id;
		ds->bug[ds->n] = c->bug;
		ds->discovered[ds->n] = c->bug ? c->discovered : INT64_MAX;
		ds->n++;
	}
	free(sp);
	return rc;
}

static void say(const struct pt_progress *pr, size_t done, size_t total)
{
	struct pt_progress_report r = { "features", "postings", done,
					total,	    0,		NULL };

	pt_progress_report(pr, &r);
}

int archds_build(struct archds **out, struct db *db, int64_t since,
		 int64_t until, const struct pt_progress *progress)
{
	struct archds *ds;
	struct cand *c = NULL;
	size_t n = 0, i;
	int64_t v;
	int rc;

	*out = NULL;
	ds = pt_calloc(1, sizeof(*ds));
	if (!ds)
		return PT_ENOMEM;
	rc = model_data_new(&ds->d, archds_names(), ARCHDS_NTAB);
	if (!rc)
		rc = db_get_int64(&v, db,
				  "SELECT coalesce(max(date), 0) FROM messages "
				  "WHERE date <= ?",
				  until ? until : (int64_t)time(NULL));
	ds->newest = v;
	if (!rc)
		rc = db_get_int64(&v, db,
				  "SELECT count(*) FROM patches WHERE ?1 = ?1",
				  0);
	ds->postings = (size_t)v;
	if (!rc)
		rc = candidates(&c, &n, db, since, until ? until : INT64_MAX);
	if (!rc && n)
		rc = grow(ds, n);
	for (i = 0; !rc && i < n; i++) {
		if (!c[i].at) {
			ds->unreadable++;
			continue;
		}
		rc = add_row(ds, db, &c[i]);
		say(progress, i + 1, n);
	}
	free(c);
	if (rc) {
		archds_free(ds);
		return rc;
	}
	*out = ds;
	return 0;
}

void archds_free(struct archds *ds)
{
	if (!ds)
		return;
	model_data_free(ds->d);
	free(ds->patch_id);
	free(ds->bug);
	free(ds->discovered);
	free(ds);
}

void archds_set_labels(struct archds *ds, int64_t asof)
{
	size_t i;

	for (i = 0; i < ds->n; i++)
		ds->d->y[i] = ds->bug[i] && ds->discovered[i] < asof;
}

int archds_rows(size_t **idx, size_t *n, const struct archds *ds, int64_t from,
		int64_t before, int64_t asof, int64_t horizon)
{
	size_t i, k = 0;

	*n = 0;
	*idx = pt_calloc(ds->n + 1, sizeof(**idx));
	if (!*idx)
		return PT_ENOMEM;
	for (i = 0; i < ds->n; i++) {
		int64_t t = ds->d->time[i];

		if (t < from || t >= before)
			continue;
		/* a row younger than the horizon may still turn out buggy,
		   and keeping only its known bugs would make the newest
		   slice, where calibration is fitted, mostly bugs */
		if (asof != INT64_MAX && t > asof - horizon)
			continue;
		(*idx)[k++] = i;
	}
	*n = k;
	return 0;
}
