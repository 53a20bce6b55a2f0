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
 *
 * This file loads the mined commits and runs the pass;
 * histfeat_kamei.c computes the Kamei features and histfeat_review.c
 * the reviewers and subsystems (shared state in histfeat_int.h).
 */
#include "scoring/history/histfeat.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/history/histfeat_int.h"
#include "scoring/history/maintainers.h"
#include "scoring/patch/patch.h"
#include "scoring/patch/subject.h"
#include "scoring/store/db_row.h"
#include "scoring/util/strmap.h"

/* ---- small helpers ---------------------------------------------------- */

/* The loaded commit whose id is column col of st's row, or NULL. */
static struct hcommit *row_commit(struct hctx *x, sqlite3_stmt *st, int col)
{
	struct strmap_entry *e;

	e = strmap_get_id(&x->by_id, sqlite3_column_int64(st, col));
	return e ? &x->c[e->v.i] : NULL;
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
		rc = strmap_put_id(&e, NULL, &x->by_id, c->id);
		if (!rc)
			e->v.i = (int64_t)(x->n - 1);
		if (!rc)
			rc = comp_of(&c->comp, x,
				     (const char *)sqlite3_column_text(st, 9));
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
		struct hcommit *c = row_commit(x, st, 1);
		const char *op = (const char *)sqlite3_column_text(st, 3);
		struct hfile *f;

		if (!c)
			continue;
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
		struct hcommit *c = row_commit(x, st, 0);

		if (!c)
			continue;
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
		char *em = pt_strdup((const char *)sqlite3_column_text(st, 1));

		if (!em) {
			rc = PT_ENOMEM;
			break;
		}
		rc = strmap_put_id(&e, NULL, &x->emails,
				   sqlite3_column_int64(st, 0));
		if (rc) {
			free(em);
			break;
		}
		e->v.p = em;
	}
	sqlite3_finalize(st);
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
	size_t i;
	int rc = 0;

	for (i = 0; i < 2 && !rc; i++)
		rc = db_exec_id(x->db, sql[i], x->repo_id, "clearing features");
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
	rc = sqlite3_step(st) == SQLITE_DONE
		     ? 0
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
			     ? 0
			     : db_error(x->db, "saving a subsystem");
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
		rc = db_prepare(&sst, x->db,
				"UPDATE commit_files SET "
				"subsystem = ? WHERE rowid = ?");
	if (!rc)
		rc = clear_rows(x);
	for (i = 0; i < x->n && !rc; i++) {
		struct hcommit *c = &x->c[i];
		const struct maint *m = NULL;
		struct hit_set h = { NULL, 0 };
		struct feat ft;

		rc = histfeat_kamei(&ft, x, i);
		if (!rc)
			rc = comp_history(&ft, c);
		if (!rc)
			rc = write_feat(x, fst, c->id, &ft);
		if (!rc)
			rc = histfeat_maint_for(&m, x, c);
		if (!rc)
			rc = histfeat_match_files(&h, x, c, m);
		if (!rc)
			rc = write_subsystems(x, sst, c);
		if (!rc)
			rc = histfeat_write_reviews(x, rst, c, m, &h);
		if (!rc)
			rc = histfeat_record_reviews(x, c);
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
	strmap_for_each(&x->files, e)
	{
		struct fstate *s = e->v.p;

		if (s) {
			free(s->devs);
			free(s->commits);
			free(s);
		}
	}
	strmap_for_each(&x->authors, e)
	{
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
	strmap_for_each(&x->comps, e)
	{
		struct pstate *p = e->v.p;

		if (p)
			free(p->bug_dates);
		free(p);
	}
	strmap_for_each(&x->people, e)
	{
		struct pstate *p = e->v.p;

		if (p)
			free(p->bug_dates);
		free(p);
	}
	strmap_for_each(&x->emails, e) free(e->v.p);
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
