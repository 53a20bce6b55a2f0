/*
 * histfeat_kamei.c - the Kamei et al. features of one commit (NS, ND, NF,
 * entropy, LA, LD, LT, NDEV, AGE, NUC, EXP, REXP, SEXP) and the past bugs
 * of its files and author, each from strictly earlier commits only; the
 * exact definitions are in histfeat.c's header comment.  The running
 * state per file (a rename carries it to the new path) and per author
 * lives in struct hctx (histfeat_int.h).
 */
#include "scoring/history/histfeat_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/util/strmap.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t uniq_i64(int64_t *v, size_t n)
{
	size_t i, k = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_i64);
	for (i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

/* ---- Kamei features -------------------------------------------------------- */

static int intern(int *out, struct strmap *m, const char *s, size_t n)
{
	struct strmap_entry *e;
	int added, rc;

	rc = strmap_put(&e, &added, m, s, n);
	if (rc)
		return rc;
	if (added)
		e->v.i = (int64_t)m->len - 1;
	*out = (int)e->v.i;
	return 0;
}

static int fstate_get(struct fstate **out, struct hctx *x,
		      const struct hfile *f)
{
	struct strmap_entry *e, *old;
	int added, rc;

	rc = strmap_put(&e, &added, &x->files, f->path, strlen(f->path));
	if (rc)
		return rc;
	if (added && f->old_path &&
	    (old = strmap_get(&x->files, f->old_path, strlen(f->old_path))) &&
	    old->v.p) {
		e->v.p = old->v.p; /* the rename carries the history */
		old->v.p = NULL;
	}
	if (!e->v.p) {
		e->v.p = pt_calloc(1, sizeof(struct fstate));
		if (!e->v.p)
			return PT_ENOMEM;
	}
	*out = e->v.p;
	return 0;
}

static int dev_add(struct fstate *s, int64_t author)
{
	size_t i;

	for (i = 0; i < s->ndevs; i++)
		if (s->devs[i] == author)
			return 0;
	if (push(&s->devs, &s->ndevs, sizeof(*s->devs)))
		return PT_ENOMEM;
	s->devs[s->ndevs - 1] = author;
	return 0;
}

/* Of the earlier changes CMS to the files: known buggy, and fixes. */
static void file_bugs(struct feat *ft, const struct hctx *x,
		      const struct hcommit *c, const int64_t *cms, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct hcommit *e = &x->c[cms[i]];

		ft->file_bugs += e->bug && e->discovered < c->cdate;
		ft->file_fixes += e->is_fix != 0;
	}
}

/* NDEV, AGE, NUC from the files' state; then record this change. */
static int file_history(struct feat *ft, struct hctx *x, size_t ci,
			struct fstate **st)
{
	struct hcommit *c = &x->c[ci];
	int64_t *devs = NULL, *cms = NULL;
	size_t nd = 0, nc = 0, i, k, nold = 0;
	double age = 0;
	int rc = 0;

	for (i = 0; i < c->nfiles && !rc; i++) {
		struct fstate *s = st[i];

		if (!s->ncommits)
			continue;
		nold++;
		age += c->cdate > s->last_date
			       ? (double)(c->cdate - s->last_date) / 86400.0
			       : 0.0;
		for (k = 0; k < s->ndevs && !rc; k++)
			if (!(rc = push(&devs, &nd, sizeof(*devs))))
				devs[nd - 1] = s->devs[k];
		for (k = 0; k < s->ncommits && !rc; k++)
			if (!(rc = push(&cms, &nc, sizeof(*cms))))
				cms[nc - 1] = s->commits[k];
	}
	if (!rc) {
		ft->ndev = (int)uniq_i64(devs, nd);
		ft->nuc = (int)uniq_i64(cms, nc);
		ft->age = nold ? age / (double)nold : 0.0;
		file_bugs(ft, x, c, cms, (size_t)ft->nuc);
	}
	free(devs);
	free(cms);
	for (i = 0; i < c->nfiles && !rc; i++) {
		struct fstate *s = st[i];

		if (s->ncommits && s->commits[s->ncommits - 1] == (int32_t)ci)
			continue; /* the same file twice (copy) */
		s->last_date = c->cdate;
		rc = c->author ? dev_add(s, c->author) : 0;
		if (!rc && !(rc = push(&s->commits, &s->ncommits,
				       sizeof(*s->commits))))
			s->commits[s->ncommits - 1] = (int32_t)ci;
	}
	return rc;
}

static int subsys_of(int *out, struct hctx *x, const char *path)
{
	const char *sl = strchr(path, '/');

	return intern(out, &x->subs, path, sl ? (size_t)(sl - path) : 0);
}

static int has_common(const int *a, const int *b)
{
	const int *p;

	for (; *a >= 0; a++)
		for (p = b; *p >= 0; p++)
			if (*a == *p)
				return 1;
	return 0;
}

/* EXP, REXP, SEXP; then record this commit for the author. */
static int experience(struct feat *ft, struct hctx *x, size_t ci, int *subs)
{
	struct hcommit *c = &x->c[ci];
	struct strmap_entry *e;
	struct astate *a;
	size_t i;
	int rc;

	if (!c->author) {
		free(subs);
		return 0;
	}
	rc = strmap_put_id(&e, NULL, &x->authors, c->author);
	if (!rc && !e->v.p && !(e->v.p = pt_calloc(1, sizeof(*a))))
		rc = PT_ENOMEM;
	if (rc) {
		free(subs);
		return rc;
	}
	a = e->v.p;
	ft->exp = (int)a->n;
	ft->has_author = 1;
	ft->author_bugs = known_before(a->bug_dates, a->nbug, c->cdate);
	if (c->bug) {
		i = a->nbug;
		rc = push(&a->bug_dates, &i, sizeof(*a->bug_dates));
		if (rc) {
			free(subs);
			return rc;
		}
		a->bug_dates[a->nbug++] = c->discovered;
	}
	for (i = 0; i < a->n; i++) {
		double y = c->cdate > a->dates[i]
				   ? (double)(c->cdate - a->dates[i]) /
					     (365.25 * 86400.0)
				   : 0.0;

		ft->rexp += 1.0 / (1.0 + y);
		ft->sexp += has_common(a->subs[i], subs);
	}
	i = a->n;
	rc = push(&a->dates, &i, sizeof(*a->dates));
	if (!rc) {
		i = a->n;
		rc = push(&a->subs, &i, sizeof(*a->subs));
	}
	if (rc) {
		free(subs);
		return rc;
	}
	a->dates[a->n] = c->cdate;
	a->subs[a->n] = subs;
	a->n++;
	return 0;
}

int histfeat_kamei(struct feat *ft, struct hctx *x, size_t ci)
{
	struct hcommit *c = &x->c[ci];
	struct fstate **st = NULL;
	struct strmap dirs = STRMAP_INIT;
	int *subs = NULL, *tmp;
	size_t i, k, nsubs = 0;
	double churn = 0;
	int rc = 0;

	memset(ft, 0, sizeof(*ft));
	ft->nf = (int)c->nfiles;
	st = pt_calloc(c->nfiles + 1, sizeof(*st));
	subs = pt_calloc(c->nfiles + 1, sizeof(*subs));
	if (!st || !subs) {
		rc = PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < c->nfiles && !rc; i++) {
		const struct hfile *f = &c->files[i];
		const char *sl = strrchr(f->path, '/');
		struct strmap_entry *e;
		int s;

		ft->la += (int)f->added;
		ft->ld += (int)f->removed;
		ft->lt += f->old_lines;
		churn += f->added + f->removed;
		rc = strmap_put(&e, NULL, &dirs, f->path,
				sl ? (size_t)(sl - f->path) : 0);
		if (!rc)
			rc = subsys_of(&s, x, f->path);
		for (k = 0; !rc && k < nsubs && subs[k] != s; k++)
			;
		if (!rc && k == nsubs)
			subs[nsubs++] = s;
		if (!rc)
			rc = fstate_get(&st[i], x, f);
	}
	if (rc)
		goto out;
	subs[nsubs] = -1;
	ft->ns = (int)nsubs;
	ft->nd = (int)dirs.len;
	for (i = 0; i < c->nfiles && churn > 0; i++) {
		double p = (c->files[i].added + c->files[i].removed) / churn;

		if (p > 0)
			ft->entropy -= p * log2(p);
	}
	rc = file_history(ft, x, ci, st);
	tmp = subs;
	subs = NULL;
	if (!rc)
		rc = experience(ft, x, ci, tmp);
	else
		free(tmp);
out:
	free(subs);
	free(st);
	strmap_free(&dirs);
	return rc;
}
