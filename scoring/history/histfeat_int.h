/*
 * histfeat_int.h - what the files of the history features share: the
 * commits, files and reviews loaded from the database (struct hctx), the
 * running state per file, author and person, one commit's features, a
 * few small helpers and the functions one part calls in another.
 * Private to scoring/history's histfeat.c, histfeat_kamei.c and
 * histfeat_review.c: only they include it; the API is histfeat.h.
 */
#ifndef PT_HISTFEAT_INT_H
#define PT_HISTFEAT_INT_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scoring/history/histfeat.h"
#include "scoring/history/maintainers.h"
#include "scoring/util/pt.h"
#include "scoring/util/strmap.h"

#define MAINT_CACHE 8

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
	int64_t *devs; /* sorted authors */
	size_t ndevs;
	int32_t *commits; /* indices of commits that changed it */
	size_t ncommits;
};

struct astate {
	int64_t *dates; /* the author's commit dates */
	int **subs;	/* per commit: subsystem ids, -1 terminated */
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

static inline int push(void *vp, size_t *n, size_t sz)
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

/* Of the discovered dates D[0, n): how many are before DATE. */
static inline int known_before(const int64_t *d, size_t n, int64_t date)
{
	size_t i;
	int k = 0;

	for (i = 0; i < n; i++)
		k += d[i] < date;
	return k;
}

/* ---- histfeat_kamei.c --------------------------------------------------- */

/*
 * Kamei features of commit ci from the state of earlier commits, into
 * *ft; then record ci in the files' and the author's state.
 */
int histfeat_kamei(struct feat *ft, struct hctx *x, size_t ci);

/* ---- histfeat_review.c -------------------------------------------------- */

/* The MAINTAINERS sections covering one commit's files. */
struct hit_set {
	size_t *sec;
	size_t n;
};

/* The parsed MAINTAINERS of commit c (NULL when it has none). */
int histfeat_maint_for(const struct maint **out, struct hctx *x,
		       const struct hcommit *c);
/* Match the files; fill subsystems and the set of covering sections. */
int histfeat_match_files(struct hit_set *h, struct hctx *x, struct hcommit *c,
			 const struct maint *m);
/* One reviews row per Reviewed-by/Acked-by/Tested-by of c, through st. */
int histfeat_write_reviews(struct hctx *x, sqlite3_stmt *st, struct hcommit *c,
			   const struct maint *m, const struct hit_set *h);
/* After the commit: each distinct person counts it once. */
int histfeat_record_reviews(struct hctx *x, struct hcommit *c);

#endif
