/*
 * dataset.c - rows of a mined repository for training and evaluation
 * (see dataset.h): commits read back with libgit2 (patch_from_commit),
 * features as of each commit, labels from the miner's labels table, and
 * the task masks and keyword baseline that train and eval share.
 */
#include "dataset.h"

#include <git2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "patch.h"

const char *dataset_task_name(enum dataset_task t)
{
	return t == TASK_FIX ? "fix" : "risk";
}

void dataset_free(struct dataset *ds)
{
	if (!ds)
		return;
	model_data_free(ds->d);
	free(ds->commit_id);
	free(ds->fix);
	free(ds->bug);
	free(ds->discovered);
	free(ds->negok);
	free(ds->keyword);
	free(ds->has_reviewed);
	free(ds->has_tested);
	free(ds);
}

int dataset_repo(int64_t *out, struct db *db, const char *repo)
{
	sqlite3_stmt *st;
	int rc, n = 0;

	*out = 0;
	rc = db_prepare(&st, db, "SELECT id, path FROM repos ORDER BY id");
	if (rc)
		return rc;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(st, 1);
		int64_t id = sqlite3_column_int64(st, 0);

		if (repo && path && !strcmp(repo, path)) {
			*out = id;
			n = 1;
			break;
		}
		if (!repo) {
			*out = id;
			n++;
		}
	}
	sqlite3_finalize(st);
	if (repo && !n) {
		char *real = realpath(repo, NULL);

		if (real && strcmp(real, repo)) {
			rc = dataset_repo(out, db, real);
			free(real);
			return rc;
		}
		free(real);
		return pt_error_set(PT_ENOTFOUND, "repository '%s' is not "
				    "mined; run 'patchtriage mine --repo %s'",
				    repo, repo);
	}
	if (!n)
		return pt_error_set(PT_ENOTFOUND, "no mined repository; run "
				    "'patchtriage mine --repo DIR'");
	if (n > 1)
		return pt_error_set(PT_EINVAL, "%d repositories are mined; "
				    "name one with --repo", n);
	return 0;
}

static const char *const fix_words[] = {
	"fix", "bug", "crash", "leak", "null", "overflow", "underflow",
	"race", "deadlock", "oops", "panic", "use-after-free", "uaf",
	"corrupt", "regression", "incorrect", "wrong", "missing", "prevent",
	"avoid", "invalid", "uninitiali", "out of bounds", "out-of-bounds",
	"hang", "segfault", "error path", "double free", "warning", NULL,
};

double dataset_keyword_score(const struct patch *p)
{
	const char *subj = p->subject.clean ? p->subject.clean : "";
	const char *cl = p->changelog ? p->changelog : "";
	unsigned lines = p->added + p->removed;
	double s = 0;
	size_t i;

	for (i = 0; fix_words[i]; i++) {
		if (strcasestr(subj, fix_words[i]))
			s += 2;
		else if (strcasestr(cl, fix_words[i]))
			s += 1;
	}
	if (lines <= 100)
		s += 1;
	if (lines <= 20)
		s += 1;
	/* a tiny tie-break so that equal rule scores prefer smaller patches */
	return s - (double)lines * 1e-6;
}

void dataset_task_mask(unsigned char *use, enum dataset_task t)
{
	size_t i;

	for (i = 0; i < FEAT_NTAB; i++)
		use[i] = !(t == TASK_FIX &&
			   feat_group_of((enum feat_id)i) == FEAT_G_LABEL);
}

void dataset_kamei_mask(unsigned char *use, enum dataset_task t)
{
	static const enum feat_id k[] = {
		FEAT_NS, FEAT_ND, FEAT_NF, FEAT_ENTROPY, FEAT_LA, FEAT_LD,
		FEAT_LT, FEAT_NDEV, FEAT_AGE, FEAT_NUC, FEAT_EXP, FEAT_REXP,
		FEAT_SEXP,
	};
	size_t i;

	memset(use, 0, FEAT_NTAB);
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		use[k[i]] = 1;
	if (t == TASK_RISK)
		use[FEAT_HAS_FIXES] = 1;   /* Kamei's FIX */
}

void dataset_mask_drop(unsigned char *use, enum feat_group g)
{
	size_t i;

	for (i = 0; i < FEAT_NTAB; i++)
		if (feat_group_of((enum feat_id)i) == g)
			use[i] = 0;
}

void dataset_set_labels(struct dataset *ds, enum dataset_task t,
			int64_t asof)
{
	size_t i;

	for (i = 0; i < ds->n; i++)
		ds->d->y[i] = t == TASK_FIX
				      ? ds->fix[i]
				      : ds->bug[i] && ds->discovered[i] < asof;
}

static int grow(struct dataset *ds, size_t cap)
{
	void *p;

#define G(f)                                                                 \
	do {                                                                 \
		p = pt_reallocarray(ds->f, cap, sizeof(*ds->f));             \
		if (!p)                                                      \
			return PT_ENOMEM;                                    \
		ds->f = p;                                                   \
	} while (0)
	G(commit_id);
	G(fix);
	G(bug);
	G(discovered);
	G(negok);
	G(keyword);
	G(has_reviewed);
	G(has_tested);
#undef G
	return 0;
}

static int row_add(struct dataset *ds, struct feat_ctx *fc,
		   git_repository *repo, sqlite3_stmt *st, unsigned bits,
		   size_t *cap)
{
	const char *sha = (const char *)sqlite3_column_text(st, 1);
	struct feat_vec v;
	struct patch *p = NULL;
	git_commit *commit = NULL;
	git_oid oid;
	size_t i = ds->n;
	int rc;

	if (!sha || git_oid_fromstr(&oid, sha) ||
	    git_commit_lookup(&commit, repo, &oid))
		return 0;   /* not in this object database: skip the row */
	rc = patch_from_commit(&p, repo, commit);
	git_commit_free(commit);
	if (rc)
		return rc == PT_ENOMEM ? rc : 0;
	rc = feat_compute(&v, fc, p, NULL, bits, 0);
	if (rc)
		goto out;
	if (i == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		rc = grow(ds, *cap);
		if (rc)
			goto out;
	}
	ds->commit_id[i] = sqlite3_column_int64(st, 0);
	ds->fix[i] = sqlite3_column_int(st, 3) != 0;
	ds->bug[i] = sqlite3_column_int(st, 4) != 0;
	ds->discovered[i] = sqlite3_column_type(st, 5) == SQLITE_NULL
				    ? INT64_MAX
				    : sqlite3_column_int64(st, 5);
	ds->negok[i] = sqlite3_column_int(st, 6) != 0;
	ds->keyword[i] = dataset_keyword_score(p);
	ds->has_reviewed[i] = v.tab[FEAT_N_REVIEWED] > 0 ||
			      v.tab[FEAT_N_ACKED] > 0;
	ds->has_tested[i] = v.tab[FEAT_N_TESTED] > 0;
	rc = model_data_add(ds->d, v.tab, v.sp, v.nsp, ds->fix[i],
			    sqlite3_column_int64(st, 2),
			    (double)(p->added + p->removed) + 1);
	if (!rc)
		ds->n++;
out:
	feat_vec_free(&v);
	patch_free(p);
	return rc;
}

static int count_rows(size_t *n, struct db *db, int64_t repo_id,
		      int64_t since)
{
	sqlite3_stmt *st;
	int rc = db_prepare(&st, db,
			    "SELECT count(*), max(newest) FROM commits c, "
			    "repos r WHERE c.repo_id = ? AND r.id = c.repo_id "
			    "AND c.commit_date >= ?");

	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_int64(st, 2, since);
	*n = sqlite3_step(st) == SQLITE_ROW ? (size_t)sqlite3_column_int64(st, 0)
					    : 0;
	sqlite3_finalize(st);
	return 0;
}

int dataset_build(struct dataset **out, struct db *db, int64_t repo_id,
		  const struct dataset_opts *o)
{
	struct dataset *ds;
	struct feat_ctx *fc = NULL;
	git_repository *repo = NULL;
	sqlite3_stmt *st = NULL;
	const char *path;
	size_t cap = 0, total = 0, skip = 0, seen = 0;
	int64_t since = o->since;
	int rc;

	*out = NULL;
	git_libgit2_init();
	ds = pt_calloc(1, sizeof(*ds));
	if (!ds)
		return PT_ENOMEM;
	rc = model_data_new(&ds->d, feat_names(), FEAT_NTAB);
	if (!rc)
		rc = count_rows(&total, db, repo_id, since);
	if (!rc && o->max_rows && total > o->max_rows)
		skip = total - o->max_rows;
	if (!rc)
		rc = db_prepare(&st, db, "SELECT path, newest FROM repos "
				"WHERE id = ?");
	if (rc)
		goto out;
	sqlite3_bind_int64(st, 1, repo_id);
	if (sqlite3_step(st) != SQLITE_ROW ||
	    !(path = (const char *)sqlite3_column_text(st, 0))) {
		rc = pt_error_set(PT_ENOTFOUND, "no mined repository %lld",
				  (long long)repo_id);
		goto out;
	}
	ds->newest = sqlite3_column_int64(st, 1);
	if (git_repository_open(&repo, path)) {
		rc = pt_error_set(PT_EIO, "cannot open repository '%s': %s",
				  path, git_error_last()->message);
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	rc = feat_ctx_new(&fc, db, repo_id);
	if (!rc)
		rc = db_prepare(&st, db,
				"SELECT c.id, c.sha, c.commit_date, l.is_fix, "
				"l.bug, l.discovered, l.negative_ok FROM "
				"commits c JOIN labels l ON l.commit_id = c.id "
				"WHERE c.repo_id = ? AND c.commit_date >= ? "
				"ORDER BY c.commit_date, c.seq");
	if (rc)
		goto out;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_int64(st, 2, since);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		if (seen++ < skip)
			continue;
		rc = row_add(ds, fc, repo, st, o->hash_bits, &cap);
		if (o->progress && (seen % 256 == 0 || seen == total))
			o->progress(seen - skip, total - skip, o->progress_ctx);
	}
	if (rc)
		goto out;
	*out = ds;
	ds = NULL;
out:
	sqlite3_finalize(st);
	feat_ctx_free(fc);
	git_repository_free(repo);
	dataset_free(ds);
	git_libgit2_shutdown();
	return rc;
}

int dataset_rows(size_t **idx, size_t *n, const struct dataset *ds,
		 enum dataset_task t, int64_t from, int64_t before,
		 int64_t asof, int64_t horizon)
{
	size_t i, m = 0;

	*n = 0;
	*idx = pt_calloc(ds->n + 1, sizeof(**idx));
	if (!*idx)
		return PT_ENOMEM;
	for (i = 0; i < ds->n; i++) {
		int64_t time = ds->d->time[i];
		int ok;

		if (time < from || time >= before)
			continue;
		if (t == TASK_FIX)
			ok = 1;
		else if (asof == INT64_MAX)
			ok = ds->negok[i] || ds->bug[i];
		else
			/* young bugs too: they would bias the newest
			   (calibration) slice towards positives */
			ok = time <= asof - horizon;
		if (ok)
			(*idx)[m++] = i;
	}
	*n = m;
	return 0;
}
