/*
 * deps.c - depends on: earlier candidates of the range whose zero-context
 * hunks overlap a candidate's, per path.  The hunks are diffed on
 * priv->jobs threads, each with its own repository handle, and merged
 * in commit order.
 */
#include "scoring/stable/stable_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- depends on ------------------------------------------------------- */

struct hrec {
	const char *path;		  /* owned by the commit's changes */
	size_t idx;			  /* commit index */
	unsigned long olo, ohi, nlo, nhi; /* [lo, hi) old and new lines */
};

struct hcollect {
	struct hrec *r;
	size_t n, cap;
	size_t idx;
	const char *cur;
	unsigned added, removed;
};

static int hunk_cb(const git_diff_delta *d, const git_diff_hunk *hk, void *ctx)
{
	struct hcollect *h = ctx;
	struct hrec *r;

	(void)d;
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 1024;

		r = pt_reallocarray(h->r, cap, sizeof(*r));
		if (!r)
			return -1;
		h->r = r;
		h->cap = cap;
	}
	r = &h->r[h->n++];
	r->path = h->cur;
	r->idx = h->idx;
	/* a zero-length side (pure add or delete) still marks its place */
	r->olo = (unsigned long)hk->old_start;
	r->ohi = r->olo + (hk->old_lines ? (unsigned long)hk->old_lines : 1);
	r->nlo = (unsigned long)hk->new_start;
	r->nhi = r->nlo + (hk->new_lines ? (unsigned long)hk->new_lines : 1);
	return 0;
}

static int line_cb(const git_diff_delta *d, const git_diff_hunk *hk,
		   const git_diff_line *l, void *ctx)
{
	struct hcollect *h = ctx;

	(void)d;
	(void)hk;
	if (l->origin == GIT_DIFF_LINE_ADDITION)
		h->added++;
	else if (l->origin == GIT_DIFF_LINE_DELETION)
		h->removed++;
	return 0;
}

static int collect_hunks(struct stable_set *s, git_repository *repo,
			 struct hcollect *h, size_t i)
{
	const struct changes *ch = &s->priv->rch[i];
	size_t k;
	int rc = 0;

	h->idx = i;
	h->added = h->removed = 0;
	for (k = 0; k < ch->n && !rc; k++) {
		h->cur = ch->f[k].path;
		rc = stable_diff_file(repo, &ch->f[k], hunk_cb, line_cb, h);
	}
	s->c[i].added = h->added;
	s->c[i].removed = h->removed;
	return rc;
}

/* One thread's share: consecutive commits, their hunks in order. */
struct hjob {
	struct stable_set *s;
	git_repository *repo; /* its own handle (the caller's for 0) */
	const size_t *todo;
	size_t n;
	struct hcollect h;
	pthread_t t;
	int started, rc;
	char *err; /* the error, copied out of the thread */
};

static void *hjob_run(void *arg)
{
	struct hjob *j = arg;
	size_t i;

	for (i = 0; i < j->n && !j->rc; i++)
		j->rc = collect_hunks(j->s, j->repo, &j->h, j->todo[i]);
	if (j->rc)
		j->err = pt_strdup(pt_error_last());
	return NULL;
}

static int hjob_start(struct hjob *j)
{
	const char *path = git_repository_path(j->s->priv->repo);

	if (git_repository_open(&j->repo, path))
		return stable_git_fail("cannot open repository", path);
	if (pthread_create(&j->t, NULL, hjob_run, j))
		return pt_error_set(PT_ERROR,
				    "cannot start a thread to diff "
				    "in '%s'",
				    path);
	j->started = 1;
	return 0;
}

/* Append j's hunks to h and free them; keep j's error. */
static int hjob_finish(struct hcollect *h, struct hjob *j, int rc)
{
	struct hrec *r;

	if (!rc && j->rc)
		rc = pt_error_set(j->rc, "%s",
				  j->err ? j->err : "out of memory");
	if (!rc && j->h.n) {
		r = pt_reallocarray(h->r, h->n + j->h.n, sizeof(*r));
		if (!r)
			rc = PT_ENOMEM;
		else {
			memcpy(r + h->n, j->h.r, j->h.n * sizeof(*r));
			h->r = r;
			h->n += j->h.n;
			h->cap = h->n;
		}
	}
	free(j->h.r);
	free(j->err);
	return rc;
}

/* The hunks of the needed commits in index order, on priv->jobs threads. */
static int collect_all(struct stable_set *s, struct hcollect *h,
		       const unsigned char *need)
{
	struct hjob *j = NULL;
	size_t *todo, n = 0, i, k, nj = s->priv->jobs, at = 0;
	int rc = 0;

	todo = pt_calloc(s->n + 1, sizeof(*todo));
	for (i = 0; todo && i < s->n; i++)
		if (need[i])
			todo[n++] = i;
	if (nj > n)
		nj = n ? n : 1;
	j = todo ? pt_calloc(nj, sizeof(*j)) : NULL;
	if (!j) {
		free(todo);
		return PT_ENOMEM;
	}
	for (k = 0; k < nj; k++) {
		j[k].s = s;
		j[k].todo = todo + at;
		j[k].n = (n - at) / (nj - k);
		at += j[k].n;
	}
	j[0].repo = s->priv->repo;
	for (k = 1; k < nj && !rc; k++)
		rc = hjob_start(&j[k]);
	if (!rc)
		hjob_run(&j[0]);
	for (k = 0; k < nj; k++) {
		if (j[k].started)
			pthread_join(j[k].t, NULL);
		rc = hjob_finish(h, &j[k], rc);
		if (k)
			git_repository_free(j[k].repo);
	}
	free(j);
	free(todo);
	return rc;
}

static int hrec_cmp(const void *a, const void *b)
{
	const struct hrec *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int stable_add_dep(struct stable_commit *sc, size_t dep)
{
	size_t *d;
	size_t k;

	for (k = 0; k < sc->ndeps; k++)
		if (sc->deps[k] == dep)
			return 0;
	d = pt_reallocarray(sc->deps, sc->ndeps + 1, sizeof(*d));
	if (!d)
		return PT_ENOMEM;
	d[sc->ndeps++] = dep;
	sc->deps = d;
	return 0;
}

static int dep_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Hunks of one path sorted by commit: link the selected to earlier. */
static int link_group(struct stable_set *s, const struct hrec *r, size_t n,
		      const unsigned char *sel)
{
	size_t i, j, seen, last;
	int rc;

	for (i = 0; i < n; i++) {
		if (!sel[r[i].idx])
			continue;
		seen = 0;
		last = (size_t)-1;
		for (j = i; j-- > 0;) {
			if (r[j].idx == r[i].idx)
				continue;
			if (r[j].idx != last && ++seen > STABLE_DEP_WINDOW)
				break;
			last = r[j].idx;
			if (r[j].nlo < r[i].ohi && r[i].olo < r[j].nhi) {
				rc = stable_add_dep(&s->c[r[i].idx], r[j].idx);
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}

/*
 * Mark the commits whose hunks are needed: the selected ones and, per
 * path, the STABLE_DEP_WINDOW candidates before each selected one.
 */
static int mark_needed(unsigned char *need, struct stable_set *s,
		       const unsigned char *sel)
{
	struct hrec *r = NULL;
	size_t n = 0, cap = 0, i, k, start, j, lo;
	int rc = 0;

	for (i = 0; i < s->n; i++) {
		const struct changes *ch = &s->priv->rch[i];

		if (!stable_is_candidate(s, i))
			continue;
		for (k = 0; k < ch->n; k++) {
			if (n == cap) {
				struct hrec *nr;

				cap = cap ? cap * 2 : 1024;
				nr = pt_reallocarray(r, cap, sizeof(*r));
				if (!nr) {
					rc = PT_ENOMEM;
					goto out;
				}
				r = nr;
			}
			memset(&r[n], 0, sizeof(r[n]));
			r[n].path = ch->f[k].path;
			r[n++].idx = i;
		}
	}
	if (n)
		qsort(r, n, sizeof(*r), hrec_cmp);
	for (start = 0; start < n; start = i) {
		for (i = start; i < n && !strcmp(r[i].path, r[start].path); i++)
			;
		for (j = start; j < i; j++) {
			if (!sel[r[j].idx])
				continue;
			lo = j - start > STABLE_DEP_WINDOW
				     ? j - STABLE_DEP_WINDOW
				     : start;
			for (k = lo; k <= j; k++)
				need[r[k].idx] = 1;
		}
	}
out:
	free(r);
	return rc;
}

int stable_deps(struct stable_set *s, const unsigned char *select)
{
	struct hcollect h;
	unsigned char *sel = NULL, *need = NULL;
	size_t i, start;
	int rc = 0;

	memset(&h, 0, sizeof(h));
	sel = pt_calloc(s->n + 1, 1);
	need = pt_calloc(s->n + 1, 1);
	if (!sel || !need) {
		rc = PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < s->n; i++)
		sel[i] = stable_is_candidate(s, i) && (!select || select[i]);
	rc = mark_needed(need, s, sel);
	if (!rc)
		rc = collect_all(s, &h, need);
	if (rc)
		goto out;
	if (h.n)
		qsort(h.r, h.n, sizeof(*h.r), hrec_cmp);
	for (start = 0; start < h.n && !rc; start = i) {
		for (i = start;
		     i < h.n && !strcmp(h.r[i].path, h.r[start].path); i++)
			;
		rc = link_group(s, h.r + start, i - start, sel);
	}
	for (i = 0; i < s->n; i++)
		if (s->c[i].ndeps > 1)
			qsort(s->c[i].deps, s->c[i].ndeps, sizeof(size_t),
			      dep_cmp);
out:
	free(h.r);
	free(sel);
	free(need);
	return rc;
}
