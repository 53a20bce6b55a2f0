/*
 * histfeat.c - history features of each mined commit, from strictly
 * earlier commits (lower seq) only, after Kamei et al., "A Large-Scale
 * Empirical Study of Just-in-Time Quality Assurance", TSE 2013:
 *
 *   NS      distinct subsystems (top-level directories; "" for files at
 *           the root) of the changed files
 *   ND      distinct directories (path up to the last '/')
 *   NF      changed files
 *   entropy -sum p_k log2 p_k over files with churn, p_k = (added_k +
 *           removed_k) / (added + removed); 0 without churn
 *   LA, LD  lines added, removed (uncounted and binary files add 0)
 *   LT      sum over changed files of their line count before the change
 *           (0 for an added file)
 *   NDEV    distinct authors of earlier commits that changed any of the
 *           files
 *   AGE     mean over the files changed before of the days since their
 *           last change (commit dates, negative gaps as 0); 0 if none
 *   NUC     distinct earlier commits that changed any of the files
 *   EXP     earlier commits by the same author
 *   REXP    sum over those of 1 / (1 + y), y the age in years of that
 *           commit at this one's commit date (negative as 0)
 *   SEXP    earlier commits by the author touching one of this commit's
 *           subsystems (as in NS)
 * A rename carries the file's history to its new path.  Authors are
 * people after .mailmap.
 *
 * Past bugs (bughist.h), known at this commit's date: a commit counts
 * as known buggy when labels.bug and labels.discovered (the earliest
 * fixing commit's date) < this commit's commit date.
 *   file_bugs   of NUC's commits, the known buggy ones
 *   file_fixes  of NUC's commits, those labelled fix (Fixes:/Cc: stable)
 *   author_bugs of EXP's commits, the known buggy ones
 *   comp_changes, comp_bugs  earlier commits whose subject has the same
 *               first component (subject_component), and the known buggy
 *
 * For every Reviewed-by, Acked-by and Tested-by person: prior = earlier
 * commits they reviewed, acked or tested (any of the three); prior_bug =
 * those whose bug-introducing label was discovered (labels.discovered,
 * the fixing commit's date) before this commit's commit date, so the
 * value is what was known then; is_maintainer = an M: or R: of a
 * MAINTAINERS section (that commit's MAINTAINERS blob, emails through
 * .mailmap) covering one of the changed files.  commit_files.subsystem
 * gets the deepest covering section, else the top-level directory.
 */
#include "scoring/history/histfeat.h"

#include <ctype.h>
#include <git2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/subject.h"
#include "scoring/history/maintainers.h"
#include "scoring/patch/patch.h"
#include "scoring/util/strmap.h"

#define MAINT_CACHE 8
#define MAX_HITS 64

struct hfile {
	int64_t rowid;
	char *path, *old_path;
	unsigned added, removed, old_lines;
	const char *subsystem; /* owned by the section or the dirs map */
};

struct hrev {
	int64_t person;
	int kind;
};

struct pstate;

struct hcommit {
	int64_t id, seq, author, cdate, discovered;
	int bug, is_fix;
	struct pstate *comp; /* the subject's component, or NULL */
	char sha[GIT_OID_HEXSZ + 1];
	char maint[GIT_OID_HEXSZ + 1];
	struct hfile *files;
	size_t nfiles;
	struct hrev *revs;
	size_t nrevs;
};

struct fstate {
	int64_t last_date;
	int64_t *devs;      /* sorted authors */
	size_t ndevs;
	int32_t *commits;   /* indices of commits that changed it */
	size_t ncommits;
};

struct astate {
	int64_t *dates;     /* the author's commit dates */
	int **subs;         /* per commit: subsystem ids, -1 terminated */
	size_t n;
	int64_t *bug_dates; /* discovered dates of the author's buggy ones */
	size_t nbug;
};

struct pstate {
	size_t count;
	int64_t *bug_dates; /* discovered dates of buggy reviewed commits */
	size_t nbug;
};

struct mcache {
	char blob[GIT_OID_HEXSZ + 1];
	struct maint *m;
};

struct hctx {
	struct db *db;
	git_repository *repo;
	git_mailmap *mm;
	int64_t repo_id;
	struct hcommit *c;
	size_t n;
	struct strmap by_id, files, authors, people, subs, emails, comps;
	struct mcache cache[MAINT_CACHE];
	size_t cache_next;
};

struct feat {
	int ns, nd, nf, la, ld;
	int64_t lt;
	double entropy, age, rexp;
	int ndev, nuc, exp, sexp;
	/* past bugs (bughist.h): known = discovered before this commit */
	int file_bugs, file_fixes, author_bugs, comp_changes, comp_bugs;
	int has_author, has_comp;
};

/* ---- small helpers ---------------------------------------------------- */

static int push(void *vp, size_t *n, size_t sz)
{
	void **v = vp;

	if (!*n || !(*n & (*n - 1))) {
		void *p = pt_reallocarray(*v, *n ? *n * 2 : 1, sz);

		if (!p)
			return PT_ENOMEM;
		*v = p;
	}
	(*n)++;
	return 0;
}

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

/* KEY(b, id): b and its length, for the maps keyed by row id. */
#define KEY(b, id) (b), idkey((b), sizeof(b), (id))

static size_t idkey(char *buf, size_t sz, int64_t id)
{
	int n = snprintf(buf, sz, "%lld", (long long)id);

	return n > 0 ? (size_t)n : 0;
}

static long commit_index(struct hctx *x, int64_t id)
{
	char b[24];
	struct strmap_entry *e = strmap_get(&x->by_id, KEY(b, id));

	return e ? (long)e->v.i : -1;
}

/* ---- loading ------------------------------------------------------------ */

/* The shared record of SUBJECT's component (subject_component). */
static int comp_of(struct pstate **out, struct hctx *x, const char *subject)
{
	size_t n = subject_component(subject);
	struct strmap_entry *e;
	int rc;

	*out = NULL;
	if (!n)
		return 0;
	rc = strmap_put(&e, NULL, &x->comps, subject, n);
	if (!rc && !e->v.p && !(e->v.p = pt_calloc(1, sizeof(struct pstate))))
		rc = PT_ENOMEM;
	if (!rc)
		*out = e->v.p;
	return rc;
}

static int load_commits(struct hctx *x)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, x->db,
			"SELECT c.id, c.seq, coalesce(c.author_id, 0), "
			"c.commit_date, c.sha, c.maint_blob, "
			"coalesce(l.bug, 0), l.discovered, "
			"coalesce(l.is_fix, 0), c.subject FROM commits c "
			"LEFT JOIN labels l ON l.commit_id = c.id "
			"WHERE c.repo_id = ? ORDER BY c.seq");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, x->repo_id);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		struct hcommit *c;
		struct strmap_entry *e;
		const char *mb = (const char *)sqlite3_column_text(st, 5);
		char b[24];

		rc = push(&x->c, &x->n, sizeof(*x->c));
		if (rc)
			break;
		c = &x->c[x->n - 1];
		memset(c, 0, sizeof(*c));
		c->id = sqlite3_column_int64(st, 0);
		c->seq = sqlite3_column_int64(st, 1);
		c->author = sqlite3_column_int64(st, 2);
		c->cdate = sqlite3_column_int64(st, 3);
		snprintf(c->sha, sizeof(c->sha), "%s",
			 (const char *)sqlite3_column_text(st, 4));
		snprintf(c->maint, sizeof(c->maint), "%s", mb ? mb : "");
		c->bug = sqlite3_column_int(st, 6);
		c->discovered = sqlite3_column_int64(st, 7);
		c->is_fix = sqlite3_column_int(st, 8);
		rc = strmap_put(&e, NULL, &x->by_id,
				KEY(b, c->id));
		if (!rc)
			e->v.i = (int64_t)(x->n - 1);
		if (!rc)
			rc = comp_of(&c->comp, x, (const char *)
				     sqlite3_column_text(st, 9));
	}
	sqlite3_finalize(st);
	return rc;
}

static int load_files(struct hctx *x)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, x->db,
			"SELECT f.rowid, f.commit_id, f.path, f.old_path, "
			"f.added, f.removed, coalesce(f.old_lines, 0) FROM "
			"commit_files f JOIN commits c ON c.id = f.commit_id "
			"WHERE c.repo_id = ? ORDER BY f.rowid");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, x->repo_id);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		long i = commit_index(x, sqlite3_column_int64(st, 1));
		const char *op = (const char *)sqlite3_column_text(st, 3);
		struct hcommit *c;
		struct hfile *f;

		if (i < 0)
			continue;
		c = &x->c[i];
		rc = push(&c->files, &c->nfiles, sizeof(*c->files));
		if (rc)
			break;
		f = &c->files[c->nfiles - 1];
		memset(f, 0, sizeof(*f));
		f->rowid = sqlite3_column_int64(st, 0);
		f->path = pt_strdup((const char *)sqlite3_column_text(st, 2));
		f->old_path = op ? pt_strdup(op) : NULL;
		f->added = (unsigned)sqlite3_column_int(st, 4);
		f->removed = (unsigned)sqlite3_column_int(st, 5);
		f->old_lines = (unsigned)sqlite3_column_int(st, 6);
		if (!f->path || (op && !f->old_path))
			rc = PT_ENOMEM;
	}
	sqlite3_finalize(st);
	return rc;
}

static int load_reviews(struct hctx *x)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, x->db,
			"SELECT DISTINCT t.commit_id, t.person_id, t.kind "
			"FROM trailers t JOIN commits c ON c.id = t.commit_id "
			"WHERE c.repo_id = ? AND t.kind IN (?, ?, ?) AND "
			"t.person_id IS NOT NULL");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, x->repo_id);
	sqlite3_bind_int(st, 2, TRAILER_REVIEWED);
	sqlite3_bind_int(st, 3, TRAILER_ACKED);
	sqlite3_bind_int(st, 4, TRAILER_TESTED);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		long i = commit_index(x, sqlite3_column_int64(st, 0));
		struct hcommit *c;

		if (i < 0)
			continue;
		c = &x->c[i];
		rc = push(&c->revs, &c->nrevs, sizeof(*c->revs));
		if (rc)
			break;
		c->revs[c->nrevs - 1].person = sqlite3_column_int64(st, 1);
		c->revs[c->nrevs - 1].kind = sqlite3_column_int(st, 2);
	}
	sqlite3_finalize(st);
	if (rc)
		return rc;
	rc = db_prepare(&st, x->db, "SELECT id, email FROM people");
	if (rc)
		return rc;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		struct strmap_entry *e;
		char b[24];
		char *em = pt_strdup((const char *)sqlite3_column_text(st, 1));

		if (!em) {
			rc = PT_ENOMEM;
			break;
		}
		rc = strmap_put(&e, NULL, &x->emails,
				KEY(b, sqlite3_column_int64(st, 0)));
		if (rc) {
			free(em);
			break;
		}
		e->v.p = em;
	}
	sqlite3_finalize(st);
	return rc;
}

/* ---- MAINTAINERS ---------------------------------------------------------- */

static void canon_emails(struct hctx *x, struct maint *m)
{
	size_t i, k, j;

	if (!x->mm)
		return;
	for (i = 0; i < m->n; i++)
		for (k = 0; k < m->s[i].npeople; k++) {
			const char *rn, *re;
			char *dup;

			if (git_mailmap_resolve(&rn, &re, x->mm, "",
						m->s[i].people[k])) {
				git_error_clear();
				continue;
			}
			if (!strcmp(re, m->s[i].people[k]) ||
			    !(dup = pt_strdup(re)))
				continue;
			for (j = 0; dup[j]; j++)
				dup[j] = (char)tolower((unsigned char)dup[j]);
			free(m->s[i].people[k]);
			m->s[i].people[k] = dup;
		}
}

/* The parsed MAINTAINERS of commit c (NULL when it has none). */
static int maint_for(const struct maint **out, struct hctx *x,
		     const struct hcommit *c)
{
	struct mcache *slot;
	git_blob *blob = NULL;
	git_oid id;
	size_t i;
	int rc = 0;

	*out = NULL;
	if (!c->maint[0])
		return 0;
	for (i = 0; i < MAINT_CACHE; i++)
		if (x->cache[i].m && !strcmp(x->cache[i].blob, c->maint)) {
			*out = x->cache[i].m;
			return 0;
		}
	if (git_oid_fromstr(&id, c->maint) ||
	    git_blob_lookup(&blob, x->repo, &id)) {
		git_error_clear();
		return 0; /* missing blob: as if there were none */
	}
	slot = &x->cache[x->cache_next++ % MAINT_CACHE];
	maint_free(slot->m);
	slot->m = NULL;
	rc = maint_parse(&slot->m, git_blob_rawcontent(blob),
			 (size_t)git_blob_rawsize(blob), NULL, NULL);
	if (!rc) {
		canon_emails(x, slot->m);
		snprintf(slot->blob, sizeof(slot->blob), "%s", c->maint);
		*out = slot->m;
	}
	git_blob_free(blob);
	return rc;
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

/* Of the discovered dates D[0, n): how many are before DATE. */
static int known_before(const int64_t *d, size_t n, int64_t date)
{
	size_t i;
	int k = 0;

	for (i = 0; i < n; i++)
		k += d[i] < date;
	return k;
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
	char b[24];
	size_t i;
	int rc;

	if (!c->author) {
		free(subs);
		return 0;
	}
	rc = strmap_put(&e, NULL, &x->authors, KEY(b, c->author));
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

static int kamei(struct feat *ft, struct hctx *x, size_t ci)
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

/* ---- reviewers and subsystems ---------------------------------------------- */

struct hit_set {
	size_t *sec;
	size_t n;
};

static int reviewer_is_maint(const struct maint *m, const struct hit_set *h,
			     const char *email)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (maint_has_person(m, h->sec[i], email))
			return 1;
	return 0;
}

/* Match the files; fill subsystems and the set of covering sections. */
static int match_files(struct hit_set *h, struct hctx *x, struct hcommit *c,
		       const struct maint *m)
{
	struct maint_hit hits[MAX_HITS];
	size_t i, k, j, nh;
	int rc = 0;

	for (i = 0; i < c->nfiles && !rc; i++) {
		struct hfile *f = &c->files[i];

		nh = 0;
		if (m)
			maint_match(m, f->path, hits, MAX_HITS, &nh);
		if (nh) {
			f->subsystem = m->s[hits[0].section].name;
		} else {
			const char *sl = strchr(f->path, '/');
			struct strmap_entry *e;

			e = strmap_get(&x->subs, f->path,
				       sl ? (size_t)(sl - f->path) : 0);
			f->subsystem = e ? e->key : "";
		}
		for (k = 0; k < nh && !rc; k++) {
			for (j = 0; j < h->n && h->sec[j] != hits[k].section;
			     j++)
				;
			if (j < h->n)
				continue;
			rc = push(&h->sec, &h->n, sizeof(*h->sec));
			if (!rc)
				h->sec[h->n - 1] = hits[k].section;
		}
	}
	return rc;
}

static int write_reviews(struct hctx *x, sqlite3_stmt *st, struct hcommit *c,
			 const struct maint *m, const struct hit_set *h)
{
	size_t i, k;
	int rc = 0;

	for (i = 0; i < c->nrevs && !rc; i++) {
		char b[24];
		struct strmap_entry *e;
		struct pstate *p;
		const char *email;
		size_t nb = 0;

		rc = strmap_put(&e, NULL, &x->people,
				KEY(b, c->revs[i].person));
		if (!rc && !e->v.p && !(e->v.p = pt_calloc(1, sizeof(*p))))
			rc = PT_ENOMEM;
		if (rc)
			break;
		p = e->v.p;
		for (k = 0; k < p->nbug; k++)
			nb += p->bug_dates[k] < c->cdate;
		e = strmap_get(&x->emails, b, strlen(b));
		email = e ? e->v.p : NULL;
		sqlite3_bind_int64(st, 1, c->id);
		sqlite3_bind_int64(st, 2, c->revs[i].person);
		sqlite3_bind_int(st, 3, c->revs[i].kind);
		if (m && email)
			sqlite3_bind_int(st, 4, reviewer_is_maint(m, h, email));
		else
			sqlite3_bind_null(st, 4);
		sqlite3_bind_int64(st, 5, (int64_t)p->count);
		sqlite3_bind_int64(st, 6, (int64_t)nb);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0 : db_error(x->db, "saving a review");
		sqlite3_reset(st);
	}
	return rc;
}

/* After the commit: each distinct person counts it once. */
static int record_reviews(struct hctx *x, struct hcommit *c)
{
	size_t i, k;
	int rc = 0;

	for (i = 0; i < c->nrevs && !rc; i++) {
		char b[24];
		struct strmap_entry *e;
		struct pstate *p;

		for (k = 0; k < i && c->revs[k].person != c->revs[i].person;
		     k++)
			;
		if (k < i)
			continue;
		e = strmap_get(&x->people,
			       KEY(b, c->revs[i].person));
		if (!e)
			continue;
		p = e->v.p;
		p->count++;
		if (c->bug) {
			size_t n = p->nbug;

			rc = push(&p->bug_dates, &n, sizeof(*p->bug_dates));
			if (!rc)
				p->bug_dates[p->nbug++] = c->discovered;
		}
	}
	return rc;
}

/* ---- the pass ---------------------------------------------------------------- */

/* The component's earlier commits and known bugs; then record this one. */
static int comp_history(struct feat *ft, const struct hcommit *c)
{
	struct pstate *p = c->comp;
	size_t n;

	if (!p)
		return 0;
	ft->has_comp = 1;
	ft->comp_changes = (int)p->count;
	ft->comp_bugs = known_before(p->bug_dates, p->nbug, c->cdate);
	p->count++;
	if (!c->bug)
		return 0;
	n = p->nbug;
	if (push(&p->bug_dates, &n, sizeof(*p->bug_dates)))
		return PT_ENOMEM;
	p->bug_dates[p->nbug++] = c->discovered;
	return 0;
}

static int clear_rows(struct hctx *x)
{
	static const char *const sql[] = {
		"DELETE FROM features WHERE commit_id IN (SELECT id FROM "
		"commits WHERE repo_id = ?)",
		"DELETE FROM reviews WHERE commit_id IN (SELECT id FROM "
		"commits WHERE repo_id = ?)",
	};
	sqlite3_stmt *st;
	size_t i;
	int rc = 0;

	for (i = 0; i < 2 && !rc; i++) {
		rc = db_prepare(&st, x->db, sql[i]);
		if (rc)
			break;
		sqlite3_bind_int64(st, 1, x->repo_id);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0 : db_error(x->db, "clearing features");
		sqlite3_finalize(st);
	}
	return rc;
}

static int write_feat(struct hctx *x, sqlite3_stmt *st, int64_t id,
		      const struct feat *f)
{
	int rc;

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, f->ns);
	sqlite3_bind_int(st, 3, f->nd);
	sqlite3_bind_int(st, 4, f->nf);
	sqlite3_bind_double(st, 5, f->entropy);
	sqlite3_bind_int(st, 6, f->la);
	sqlite3_bind_int(st, 7, f->ld);
	sqlite3_bind_int64(st, 8, f->lt);
	sqlite3_bind_int(st, 9, f->ndev);
	sqlite3_bind_double(st, 10, f->age);
	sqlite3_bind_int(st, 11, f->nuc);
	sqlite3_bind_int(st, 12, f->exp);
	sqlite3_bind_double(st, 13, f->rexp);
	sqlite3_bind_int(st, 14, f->sexp);
	sqlite3_bind_int(st, 15, f->file_bugs);
	sqlite3_bind_int(st, 16, f->file_fixes);
	if (f->has_author)
		sqlite3_bind_int(st, 17, f->author_bugs);
	else
		sqlite3_bind_null(st, 17);
	if (f->has_comp) {
		sqlite3_bind_int(st, 18, f->comp_changes);
		sqlite3_bind_int(st, 19, f->comp_bugs);
	} else {
		sqlite3_bind_null(st, 18);
		sqlite3_bind_null(st, 19);
	}
	rc = sqlite3_step(st) == SQLITE_DONE ? 0
					      : db_error(x->db, "saving features");
	sqlite3_reset(st);
	return rc;
}

static int write_subsystems(struct hctx *x, sqlite3_stmt *st,
			    const struct hcommit *c)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < c->nfiles && !rc; i++) {
		sqlite3_bind_text(st, 1, c->files[i].subsystem, -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, c->files[i].rowid);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0 : db_error(x->db, "saving a subsystem");
		sqlite3_reset(st);
	}
	return rc;
}

static int run(struct hctx *x)
{
	sqlite3_stmt *fst = NULL, *rst = NULL, *sst = NULL;
	size_t i;
	int rc;

	rc = db_prepare(&fst, x->db,
			"INSERT INTO features (commit_id, ns, nd, nf, entropy,"
			" la, ld, lt, ndev, age, nuc, exp, rexp, sexp,"
			" file_bugs, file_fixes, author_bugs, comp_changes,"
			" comp_bugs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
			" ?, ?, ?, ?, ?, ?, ?, ?)");
	if (!rc)
		rc = db_prepare(&rst, x->db,
				"INSERT INTO reviews (commit_id, person_id, "
				"kind, is_maintainer, prior, prior_bug) VALUES "
				"(?, ?, ?, ?, ?, ?)");
	if (!rc)
		rc = db_prepare(&sst, x->db, "UPDATE commit_files SET "
				"subsystem = ? WHERE rowid = ?");
	if (!rc)
		rc = clear_rows(x);
	for (i = 0; i < x->n && !rc; i++) {
		struct hcommit *c = &x->c[i];
		const struct maint *m = NULL;
		struct hit_set h = { NULL, 0 };
		struct feat ft;

		rc = kamei(&ft, x, i);
		if (!rc)
			rc = comp_history(&ft, c);
		if (!rc)
			rc = write_feat(x, fst, c->id, &ft);
		if (!rc)
			rc = maint_for(&m, x, c);
		if (!rc)
			rc = match_files(&h, x, c, m);
		if (!rc)
			rc = write_subsystems(x, sst, c);
		if (!rc)
			rc = write_reviews(x, rst, c, m, &h);
		if (!rc)
			rc = record_reviews(x, c);
		free(h.sec);
	}
	sqlite3_finalize(fst);
	sqlite3_finalize(rst);
	sqlite3_finalize(sst);
	return rc;
}

static void free_ctx(struct hctx *x)
{
	struct strmap_entry *e;
	size_t i, k;

	for (i = 0; i < x->n; i++) {
		for (k = 0; k < x->c[i].nfiles; k++) {
			free(x->c[i].files[k].path);
			free(x->c[i].files[k].old_path);
		}
		free(x->c[i].files);
		free(x->c[i].revs);
	}
	free(x->c);
	strmap_for_each(&x->files, e) {
		struct fstate *s = e->v.p;

		if (s) {
			free(s->devs);
			free(s->commits);
			free(s);
		}
	}
	strmap_for_each(&x->authors, e) {
		struct astate *a = e->v.p;

		for (k = 0; a && k < a->n; k++)
			free(a->subs[k]);
		if (a) {
			free(a->subs);
			free(a->dates);
			free(a->bug_dates);
			free(a);
		}
	}
	strmap_for_each(&x->comps, e) {
		struct pstate *p = e->v.p;

		if (p)
			free(p->bug_dates);
		free(p);
	}
	strmap_for_each(&x->people, e) {
		struct pstate *p = e->v.p;

		if (p)
			free(p->bug_dates);
		free(p);
	}
	strmap_for_each(&x->emails, e)
		free(e->v.p);
	strmap_free(&x->by_id);
	strmap_free(&x->files);
	strmap_free(&x->authors);
	strmap_free(&x->people);
	strmap_free(&x->subs);
	strmap_free(&x->emails);
	strmap_free(&x->comps);
	for (i = 0; i < MAINT_CACHE; i++)
		maint_free(x->cache[i].m);
	git_mailmap_free(x->mm);
}

int histfeat_compute(struct db *db, struct git_repository *repo,
		     int64_t repo_id)
{
	struct hctx x;
	int rc;

	memset(&x, 0, sizeof(x));
	x.db = db;
	x.repo = repo;
	x.repo_id = repo_id;
	if (git_mailmap_from_repository(&x.mm, repo)) {
		git_error_clear();
		x.mm = NULL;
	}
	rc = load_commits(&x);
	if (!rc)
		rc = load_files(&x);
	if (!rc)
		rc = load_reviews(&x);
	if (!rc)
		rc = db_begin(db);
	if (!rc) {
		rc = run(&x);
		if (!rc)
			rc = db_commit(db);
		else
			db_rollback(db);
	}
	free_ctx(&x);
	return rc;
}
