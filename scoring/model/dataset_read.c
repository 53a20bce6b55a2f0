/*
 * dataset_read.c - the rows of dataset_build, read on --jobs threads.
 * The labelled commits come from the query newest first in batches;
 * each thread (its own repository handle and feature statements, the
 * state database shared: SQLite serialises it, and it is a small part
 * of a row) diffs commits of the batch and computes their features;
 * then this thread appends the batch in query order, checking the
 * budget before every row, so the rows, their order and what the
 * budget leaves out are those of a single thread.  A batch read past
 * the budget costs at most DS_BATCH rows of work.
 */
#include "scoring/model/dataset_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/patch.h"

#define DS_BATCH 256

/* One labelled commit of a batch, and what reading it gave. */
struct job {
	int64_t commit_id, date, discovered;
	int fix, bug, negok;
	char sha[GIT_OID_HEXSZ + 1];
	/* out: rc (stops the build, err its message), or unreadable (why),
	   or the row (v, keyword, lines) */
	int rc, unreadable;
	char *err;
	char why[160];
	struct feat_vec v;
	double keyword, lines;
};

struct pool;

/* A thread's own handles. */
struct reader {
	struct pool *pool;
	git_repository *repo;
	struct feat_ctx *fc;
	int own; /* repo and fc are this reader's to free */
	pthread_t t;
	int started;
};

struct pool {
	pthread_mutex_t mu;
	pthread_cond_t go, idle;
	unsigned gen; /* a new batch; guarded by mu */
	int quit;     /* guarded by mu */
	size_t busy;  /* threads still on the batch; guarded by mu */
	struct job *job;
	size_t n;
	atomic_size_t next, done;
	unsigned bits;
	const struct dataset_opts *o;
	size_t seen, want; /* for the progress line */
};

static int grow(struct dataset *ds, size_t cap)
{
	void *p;

#define G(f)                                                     \
	do {                                                     \
		p = pt_reallocarray(ds->f, cap, sizeof(*ds->f)); \
		if (!p)                                          \
			return PT_ENOMEM;                        \
		ds->f = p;                                       \
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

/* A stage with total 0 has no unit: it is only named. */
void dataset_say(const struct dataset_opts *o, const char *stage, size_t done,
		 size_t total)
{
	struct pt_progress_report r = { stage, total ? "commits" : NULL,
					done,  total,
					0,     NULL };

	pt_progress_report(&o->progress, &r);
}

/* Diff a commit and compute its features (any thread). */
static void job_run(struct job *j, git_repository *repo, struct feat_ctx *fc,
		    unsigned bits)
{
	struct patch *p = NULL;
	git_commit *commit = NULL;
	git_oid oid;
	int rc;

	if (!j->sha[0] || git_oid_fromstr(&oid, j->sha) ||
	    git_commit_lookup(&commit, repo, &oid)) {
		git_error_clear();
		snprintf(j->why, sizeof(j->why),
			 "commit '%.12s': not in the object database",
			 j->sha[0] ? j->sha : "?");
		j->unreadable = 1;
		return;
	}
	rc = patch_from_commit(&p, repo, commit);
	git_commit_free(commit);
	if (rc && rc != PT_ENOMEM) {
		snprintf(j->why, sizeof(j->why), "%s", pt_error_last());
		j->unreadable = 1;
		return;
	}
	if (!rc)
		rc = feat_compute(&j->v, fc, p, NULL, bits, 0);
	if (rc) {
		j->rc = rc;
		j->err = pt_strdup(pt_error_last());
	} else {
		j->keyword = dataset_keyword_score(p);
		j->lines = (double)(p->added + p->removed) + 1;
	}
	patch_free(p);
}

/* Take jobs of the batch until none is left. */
static void batch_work(struct pool *pl, struct reader *r, int draws)
{
	size_t i;

	while ((i = atomic_fetch_add(&pl->next, 1)) < pl->n) {
		job_run(&pl->job[i], r->repo, r->fc, pl->bits);
		atomic_fetch_add(&pl->done, 1);
		if (draws)
			/* every row: the CLI draws at most a few a second,
			   and a row of a big commit can take a while */
			dataset_say(pl->o, "features",
				    pl->seen + atomic_load(&pl->done),
				    pl->want);
	}
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct pool *pl = r->pool;
	unsigned gen = 0;
	int quit;

	for (;;) {
		pthread_mutex_lock(&pl->mu);
		while (pl->gen == gen && !pl->quit)
			pthread_cond_wait(&pl->go, &pl->mu);
		gen = pl->gen;
		quit = pl->quit;
		pthread_mutex_unlock(&pl->mu);
		if (quit)
			break;
		batch_work(pl, r, 0);
		pthread_mutex_lock(&pl->mu);
		if (!--pl->busy)
			pthread_cond_signal(&pl->idle);
		pthread_mutex_unlock(&pl->mu);
	}
	return NULL;
}

/* Read the batch on every reader; this thread is the first. */
static void batch_run(struct pool *pl, struct reader *r, size_t nr)
{
	atomic_store(&pl->next, 0);
	atomic_store(&pl->done, 0);
	pthread_mutex_lock(&pl->mu);
	pl->busy = nr - 1;
	pl->gen++;
	pthread_cond_broadcast(&pl->go);
	pthread_mutex_unlock(&pl->mu);
	batch_work(pl, &r[0], 1);
	pthread_mutex_lock(&pl->mu);
	while (pl->busy)
		pthread_cond_wait(&pl->idle, &pl->mu);
	pthread_mutex_unlock(&pl->mu);
}

/*
 * Up to MAX labelled commits of the query into the batch; *END once it
 * has no more (stepped again, SQLite would start it over).
 */
static size_t batch_fill(struct job *job, sqlite3_stmt *st, size_t max,
			 int *end)
{
	size_t n = 0;

	while (n < max && !*end) {
		struct job *j = &job[n];
		const char *sha;

		if (sqlite3_step(st) != SQLITE_ROW) {
			*end = 1;
			break;
		}
		n++;
		sha = (const char *)sqlite3_column_text(st, 1);
		memset(j, 0, sizeof(*j));
		j->commit_id = sqlite3_column_int64(st, 0);
		if (sha)
			snprintf(j->sha, sizeof(j->sha), "%s", sha);
		j->date = sqlite3_column_int64(st, 2);
		j->fix = sqlite3_column_int(st, 3) != 0;
		j->bug = sqlite3_column_int(st, 4) != 0;
		j->discovered = sqlite3_column_type(st, 5) == SQLITE_NULL
					? INT64_MAX
					: sqlite3_column_int64(st, 5);
		j->negok = sqlite3_column_int(st, 6) != 0;
	}
	return n;
}

/* A labelled commit left out: it cannot be read as a patch. */
static void unreadable(struct dataset *ds, const char *why)
{
	if (!ds->unreadable++)
		snprintf(ds->unreadable_why, sizeof(ds->unreadable_why), "%s",
			 why);
}

/* The job's row at the end of DS. */
static int row_append(struct dataset *ds, const struct job *j, size_t *cap)
{
	const struct feat_vec *v = &j->v;
	size_t i = ds->n;
	int rc;

	if (i == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		rc = grow(ds, *cap);
		if (rc)
			return rc;
	}
	ds->commit_id[i] = j->commit_id;
	ds->fix[i] = j->fix;
	ds->bug[i] = j->bug;
	ds->discovered[i] = j->discovered;
	ds->negok[i] = (unsigned char)j->negok;
	ds->keyword[i] = j->keyword;
	ds->has_reviewed[i] = v->tab[FEAT_N_REVIEWED] > 0 ||
			      v->tab[FEAT_N_ACKED] > 0;
	ds->has_tested[i] = v->tab[FEAT_N_TESTED] > 0;
	rc = model_data_add(ds->d, v->tab, v->sp, v->nsp, j->fix, j->date,
			    j->lines);
	if (!rc)
		ds->n++;
	return rc;
}

/*
 * Whether the SEEN newest labelled commits fill --max-rows (counted as
 * commits, unreadable ones too: "the newest N commits") or the rows read
 * from them the memory budget.
 */
int dataset_full(const struct dataset *ds, const struct dataset_opts *o,
		 size_t seen)
{
	if (o->max_rows && seen >= o->max_rows)
		return 1;
	return o->max_bytes && dataset_bytes(ds) >= o->max_bytes;
}

/* The batch's rows in order, up to the budget; *FULL when it is. */
static int batch_append(struct dataset *ds, struct pool *pl, size_t *seen,
			size_t *cap, int *full)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < pl->n && !rc; i++) {
		struct job *j = &pl->job[i];

		if (dataset_full(ds, pl->o, *seen)) {
			*full = 1;
			break;
		}
		++*seen;
		if (j->rc)
			rc = pt_error_set(j->rc, "%s",
					  j->err ? j->err : "out of memory");
		else if (j->unreadable)
			unreadable(ds, j->why);
		else
			rc = row_append(ds, j, cap);
	}
	return rc;
}

static void batch_clear(struct pool *pl)
{
	size_t i;

	for (i = 0; i < pl->n; i++) {
		feat_vec_free(&pl->job[i].v);
		free(pl->job[i].err);
	}
	pl->n = 0;
}

/* Readers 1..NR-1: a repository handle and feature statements each. */
static int readers_start(struct reader *r, size_t nr, struct pool *pl,
			 struct db *db, int64_t repo_id, const char *path)
{
	size_t k;
	int rc = 0;

	for (k = 1; k < nr && !rc; k++) {
		r[k].pool = pl;
		r[k].own = 1;
		if (git_repository_open(&r[k].repo, path))
			rc = pt_error_set(PT_EIO,
					  "cannot open repository '%s': %s",
					  path,
					  git_error_last()
						  ? git_error_last()->message
						  : "not found");
		if (!rc)
			rc = feat_ctx_new(&r[k].fc, db, repo_id);
		if (!rc && pthread_create(&r[k].t, NULL, reader_main, &r[k]))
			rc = pt_error_set(PT_ERROR,
					  "cannot start a thread to read "
					  "'%s'",
					  path);
		r[k].started = !rc;
	}
	return rc;
}

static void readers_stop(struct reader *r, size_t nr, struct pool *pl)
{
	size_t k;

	pthread_mutex_lock(&pl->mu);
	pl->quit = 1;
	pthread_cond_broadcast(&pl->go);
	pthread_mutex_unlock(&pl->mu);
	for (k = 1; k < nr; k++) {
		if (r[k].started)
			pthread_join(r[k].t, NULL);
		if (r[k].own) {
			feat_ctx_free(r[k].fc);
			git_repository_free(r[k].repo);
		}
	}
}

/* Batches until the query ends, the budget is full or a row fails. */
static int read_batches(struct dataset *ds, struct pool *pl, struct reader *r,
			size_t nr, sqlite3_stmt *st, size_t *seen)
{
	const struct dataset_opts *o = pl->o;
	size_t cap = 0, max;
	int rc = 0, full = 0, end = 0;

	while (!rc && !full && !end && !dataset_full(ds, o, *seen)) {
		max = DS_BATCH;
		if (o->max_rows && o->max_rows - *seen < max)
			max = o->max_rows - *seen;
		pl->n = batch_fill(pl->job, st, max, &end);
		if (!pl->n)
			break;
		pl->seen = *seen;
		batch_run(pl, r, nr);
		rc = batch_append(ds, pl, seen, &cap, &full);
		batch_clear(pl);
		/* from this thread too: the last row of a stage can be
		   another reader's, and the last count is always drawn */
		dataset_say(o, "features", *seen, pl->want);
	}
	return rc;
}

int dataset_read(struct dataset *ds, struct db *db, int64_t repo_id,
		 const char *path, git_repository *repo, struct feat_ctx *fc,
		 sqlite3_stmt *st, const struct dataset_opts *o, size_t want,
		 size_t *seen)
{
	size_t nr = o->jobs > 1 ? o->jobs : 1;
	struct reader *r;
	struct pool pl;
	int rc;

	r = pt_calloc(nr, sizeof(*r));
	memset(&pl, 0, sizeof(pl));
	pl.job = pt_calloc(DS_BATCH, sizeof(*pl.job));
	if (!r || !pl.job) {
		free(r);
		free(pl.job);
		return PT_ENOMEM;
	}
	pthread_mutex_init(&pl.mu, NULL);
	pthread_cond_init(&pl.go, NULL);
	pthread_cond_init(&pl.idle, NULL);
	atomic_init(&pl.next, 0);
	atomic_init(&pl.done, 0);
	pl.bits = o->hash_bits;
	pl.o = o;
	pl.want = want;
	r[0].pool = &pl;
	r[0].repo = repo;
	r[0].fc = fc;
	rc = readers_start(r, nr, &pl, db, repo_id, path);
	if (!rc)
		rc = read_batches(ds, &pl, r, nr, st, seen);
	readers_stop(r, nr, &pl);
	pthread_cond_destroy(&pl.idle);
	pthread_cond_destroy(&pl.go);
	pthread_mutex_destroy(&pl.mu);
	free(pl.job);
	free(r);
	return rc;
}
