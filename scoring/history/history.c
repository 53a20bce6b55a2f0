/*
 * history.c - `patchtriage mine`: walk a repository with libgit2 and store
 * its non-merge commits (ids, people through .mailmap, dates, subject,
 * message, trailers, per-file numstat) in the tables of history.h.  The
 * main thread walks and collects ids, then N worker threads (each with
 * its own git_repository, as libgit2 requires) diff each commit against
 * its first parent, and the main thread writes the results in walk order,
 * in large transactions, through a bounded ring so memory stays flat.
 * Blobs missing from the object database (shallow or filtered clones)
 * make a file "uncounted", never an error.  The passes that depend on the
 * whole history (cycle, labels, features) run after the walk, every time.
 * This file owns the walk, the repository row, the threads and the
 * passes; history_diff.c the workers, history_write.c the writer.
 */
#include "scoring/history/history.h"

#include <git2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scoring/history/cycle.h"
#include "scoring/history/histfeat.h"
#include "scoring/history/history_int.h"
#include "scoring/history/labels.h"
#include "scoring/store/db_row.h"
#include "scoring/util/gitlimits.h"

/*
 * Pack bytes mapped at most while mining.  128 MiB cost DPDK's 167 MB
 * pack 3 s, but a history whose pack is several times that reads each
 * object through a window mapped again (mmap, munmap and its TLB
 * shootdowns between the two workers): the repacked 300k-commit
 * kernelgen history (446 MB) took 321 s, 144 s of it system time, and
 * 157 s (40 s) with 1 GiB.  768 MiB holds such a pack whole and keeps a
 * million commits' peak (about 0.9 GiB besides the maps) under 2 GiB.
 */
#define PT_MINE_MAPPED ((size_t)768 << 20)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void mine_report(const struct mine_opts *o, const char *stage, size_t done,
		 size_t total, double t0)
{
	struct mine_progress p;

	if (!o->progress)
		return;
	p.done = done;
	p.total = total;
	p.elapsed = now_s() - t0;
	p.stage = stage;
	o->progress(&p, o->progress_ctx);
}

/* ---- the walk -------------------------------------------------------- */

static int walk(struct miner *m, git_repository *repo, const char *tip,
		size_t *merges)
{
	const struct mine_opts *o = m->opts;
	git_revwalk *rw = NULL;
	git_object *obj = NULL;
	git_oid id, hide;
	size_t cap = 0;
	int rc;

	if (git_revwalk_new(&rw, repo))
		return git_fail(PT_EIO, "starting the walk");
	git_revwalk_sorting(rw, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME |
					GIT_SORT_REVERSE);
	if (o->first_parent)
		git_revwalk_simplify_first_parent(rw);
	rc = git_revparse_single(&obj, repo, o->rev ? o->rev : "HEAD");
	if (rc) {
		rc = pt_error_set(PT_ENOTFOUND,
				  "repository '%s': unknown "
				  "revision '%s'",
				  o->repo, o->rev ? o->rev : "HEAD");
		goto out;
	}
	if (git_revwalk_push(rw, git_object_id(obj))) {
		rc = git_fail(PT_EIO, "walking from the revision");
		goto out;
	}
	if (tip && !git_oid_fromstr(&hide, tip) && git_revwalk_hide(rw, &hide))
		git_error_clear(); /* the old tip is gone: walk it all */
	while (!(rc = git_revwalk_next(&id, rw))) {
		git_commit *c;

		if (git_commit_lookup(&c, repo, &id)) {
			rc = git_fail(PT_EIO, "reading a commit");
			goto out;
		}
		if (git_commit_parentcount(c) > 1) {
			(*merges)++;
		} else if (git_commit_time(c) >= o->since) {
			if (m->nids == cap) {
				git_oid *n =
					pt_reallocarray(m->ids,
							cap ? cap * 2 : 4096,
							sizeof(*n));

				if (!n) {
					git_commit_free(c);
					rc = PT_ENOMEM;
					goto out;
				}
				m->ids = n;
				cap = cap ? cap * 2 : 4096;
			}
			m->ids[m->nids++] = id;
		}
		git_commit_free(c);
	}
	rc = rc == GIT_ITEROVER ? 0 : git_fail(PT_EIO, "walking history");
out:
	git_object_free(obj);
	git_revwalk_free(rw);
	return rc;
}

/* ---- repository row -------------------------------------------------- */

int mine_repo_id(int64_t *out, struct db *db, const char *repo)
{
	sqlite3_stmt *st;
	int rc;

	*out = 0;
	rc = db_prepare(&st, db, "SELECT id FROM repos WHERE path = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, repo, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = 0;
	} else {
		rc = rc == SQLITE_DONE
			     ? pt_error_set(PT_ENOTFOUND,
					    "repository '%s' was never mined",
					    repo)
			     : db_error(db, "reading repositories");
	}
	sqlite3_finalize(st);
	return rc;
}

static int repo_row(int64_t *id, char **tip, struct db *db, const char *path)
{
	sqlite3_stmt *st;
	int rc;

	*tip = NULL;
	rc = db_prepare(&st, db,
			"INSERT INTO repos (path) VALUES (?) "
			"ON CONFLICT DO NOTHING");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	rc = sqlite3_step(st) == SQLITE_DONE
		     ? 0
		     : db_error(db, "saving repository");
	sqlite3_finalize(st);
	if (rc)
		return rc;
	rc = db_prepare(&st, db, "SELECT id, tip FROM repos WHERE path = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
			*tip = pt_strdup(
				(const char *)sqlite3_column_text(st, 1));
			if (!*tip)
				rc = PT_ENOMEM;
		}
	} else {
		rc = db_error(db, "reading repository");
	}
	sqlite3_finalize(st);
	return rc;
}

static int save_tip(struct db *db, int64_t id, git_repository *repo,
		    const char *rev)
{
	git_object *obj = NULL;
	sqlite3_stmt *st = NULL;
	int rc;

	if (git_revparse_single(&obj, repo, rev ? rev : "HEAD"))
		return git_fail(PT_EIO, "resolving the tip");
	rc = db_prepare(&st, db,
			"UPDATE repos SET tip = ?1, mined_at = ?2, newest = "
			"(SELECT max(commit_date) FROM commits WHERE repo_id "
			"= ?3) WHERE id = ?3");
	if (!rc) {
		bind_str(st, 1, git_oid_tostr_s(git_object_id(obj)));
		sqlite3_bind_int64(st, 2, (int64_t)time(NULL));
		sqlite3_bind_int64(st, 3, id);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0
			     : db_error(db, "saving the mined tip");
	}
	sqlite3_finalize(st);
	git_object_free(obj);
	return rc;
}

static int count_commits(size_t *out, struct db *db, int64_t repo_id)
{
	int64_t n;
	int rc = db_get_int64(&n, db,
			      "SELECT count(*) FROM commits WHERE repo_id = ?",
			      repo_id);

	if (!rc)
		*out = (size_t)n;
	return rc;
}

/*
 * How the diff threads open the repository.  A path that is the git
 * directory itself (a mirror, "repo.git") is bare to git, whatever its
 * config says or lacks; libgit2 without core.bare takes its parent for a
 * work tree and, for every blob diff, stats .gitattributes files in
 * every folder of the path there.  Such a path is opened bare, which
 * reads the attributes git would (info/attributes, system, global); a
 * work tree is opened as one.
 */
static unsigned worker_open_flags(git_repository *repo, const char *path)
{
	const char *gd = git_repository_path(repo);
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (!strncmp(gd, path, n) && (!gd[n] || !strcmp(gd + n, "/")))
		return GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE;
	return GIT_REPOSITORY_OPEN_NO_SEARCH;
}

static unsigned nthreads(const struct mine_opts *o)
{
	long n = o->threads ? (long)o->threads : sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
}

static int diff_and_write(struct miner *m, struct writer *w, double t0)
{
	struct worker ws[16];
	unsigned i, n = nthreads(m->opts);
	int rc;

	memset(ws, 0, sizeof(ws));
	for (i = 0; i < n; i++) {
		ws[i].m = m;
		ws[i].started = !pthread_create(&ws[i].th, NULL,
						mine_worker_main, &ws[i]);
	}
	if (!ws[0].started) {
		m->abort = 1;
		return pt_error_set(PT_ERROR, "cannot start diff threads");
	}
	rc = mine_write_all(m, w, t0);
	pthread_mutex_lock(&m->mu);
	m->abort = 1;
	pthread_cond_broadcast(&m->space);
	pthread_mutex_unlock(&m->mu);
	for (i = 0; i < n; i++)
		if (ws[i].started)
			pthread_join(ws[i].th, NULL);
	for (i = 0; i < RING; i++)
		mine_commit_clear(&m->ring[i]);
	return rc;
}

/*
 * SQLite's default page cache is 2 MiB: the commits, files and features
 * tables of a long history and their indexes are hundreds of MiB, so each
 * insert and each pass re-read and spilled pages through pread/pwrite
 * (12% of mining's samples on 100k commits).  The mining connection gets
 * MINE_CACHE_KIB while it mines and its own size back after.
 */
#define MINE_CACHE_KIB (64 << 10)

static int cache_size_get(struct db *db, int64_t *out)
{
	sqlite3_stmt *st;
	int rc = db_prepare(&st, db, "PRAGMA cache_size");

	if (rc)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else
		rc = db_error(db, "reading the page cache size");
	sqlite3_finalize(st);
	return rc;
}

static int cache_size_set(struct db *db, int64_t n)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA cache_size = %lld", (long long)n);
	return db_exec(db, sql);
}

static int passes(struct mine_result *res, struct db *db, git_repository *repo,
		  const struct mine_opts *o, const struct labels_conf *lc,
		  double t0)
{
	struct labels_counts lcnt;
	int rc;

	mine_report(o, "cycle", 0, 0, t0);
	rc = cycle_assign(&res->tags, &res->mainline_tags, db, repo,
			  res->repo_id, o->rev, o->tag_pattern);
	if (rc)
		return rc;
	mine_report(o, "labels", 0, 0, t0);
	rc = labels_compute(&lcnt, db, repo, res->repo_id, lc,
			    o->horizon_days ? o->horizon_days : 365);
	if (rc)
		return rc;
	res->fixes = lcnt.fixes;
	res->refs = lcnt.refs;
	res->refs_full = lcnt.full;
	res->refs_prefix = lcnt.prefix;
	res->refs_subject = lcnt.subject;
	res->refs_unresolved = lcnt.unresolved;
	res->trivial_nocode = lcnt.trivial[LABELS_NOCODE];
	res->trivial_spelling = lcnt.trivial[LABELS_SPELLING];
	res->trivial_race = lcnt.trivial[LABELS_RACE];
	res->bugs = lcnt.bugs;
	res->with_fixes = lcnt.with_fixes;
	mine_report(o, "features", 0, 0, t0);
	rc = histfeat_compute(db, repo, res->repo_id);
	if (rc)
		return rc;
	if (!o->summarise)
		return 0;
	mine_report(o, "summary", 0, 0, t0);
	return o->summarise(db, res->repo_id);
}

int mine_run(struct mine_result *res, struct db *db, const struct mine_opts *o)
{
	struct miner *m = NULL;
	struct writer w;
	struct labels_conf *lc = NULL;
	git_repository *repo = NULL;
	char *tip = NULL;
	size_t merges = 0;
	struct pt_git_limits lim;
	double t0 = now_s();
	int64_t cache_old = 0;
	int rc, winit = 0, cache_set = 0;

	memset(res, 0, sizeof(*res));
	memset(&w, 0, sizeof(w));
	git_libgit2_init();
	/*
	 * git does not hash every object it reads; libgit2 does by default,
	 * which doubles the cost of reading blobs.  Objects come from the
	 * repository's own packs, so skip it as git does.  The object cache
	 * is per repository handle (one per thread): keep it small.
	 */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	/*
	 * libgit2 maps packs in 1 GiB windows, up to 8 GiB, so all of a pack
	 * read stays mapped and counts in the peak RSS (DPDK's 167 MB pack:
	 * 187 of 363 MiB).  32 MiB windows, at most PT_MINE_MAPPED mapped.
	 */
	pt_git_limits_set(&lim, 32 << 20, 32 << 20, PT_MINE_MAPPED);
	if (git_repository_open_ext(&repo, o->repo,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		rc = git_fail(PT_ENOTFOUND, o->repo);
		goto out;
	}
	rc = labels_conf_load(&lc, o->labels_conf);
	if (!rc && !(rc = cache_size_get(db, &cache_old)) &&
	    !(rc = cache_size_set(db, -(int64_t)MINE_CACHE_KIB)))
		cache_set = 1;
	if (!rc)
		rc = repo_row(&res->repo_id, &tip, db, o->repo);
	if (rc)
		goto out;
	m = pt_calloc(1, sizeof(*m));
	if (!m) {
		rc = PT_ENOMEM;
		goto out;
	}
	m->opts = o;
	m->lconf = lc;
	m->open_flags = worker_open_flags(repo, o->repo);
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->ready, NULL);
	pthread_cond_init(&m->space, NULL);
	mine_report(o, "walking", 0, 0, t0);
	rc = walk(m, repo, tip, &merges);
	if (!rc)
		rc = mine_writer_open(&w, db, repo, res->repo_id);
	winit = !rc || w.db;
	if (!rc && m->nids)
		rc = diff_and_write(m, &w, t0);
	if (!rc)
		rc = save_tip(db, res->repo_id, repo, o->rev);
	if (!rc)
		rc = passes(res, db, repo, o, lc, t0);
	if (!rc)
		rc = count_commits(&res->commits, db, res->repo_id);
	if (!rc)
		mine_report(o, "done", 0, 0, t0);
	res->walked = winit ? w.written : 0;
	res->uncounted = winit ? w.uncounted : 0;
out:
	if (winit)
		mine_writer_close(&w);
	if (m) {
		pthread_mutex_destroy(&m->mu);
		pthread_cond_destroy(&m->ready);
		pthread_cond_destroy(&m->space);
		free(m->ids);
		free(m);
	}
	if (cache_set) {
		int prc = cache_size_set(db, cache_old);

		rc = rc ? rc : prc;
	}
	labels_conf_free(lc);
	free(tip);
	git_repository_free(repo);
	pt_git_limits_put(&lim);
	git_libgit2_shutdown();
	return rc;
}
