/*
 * history_int.h - what the files of `patchtriage mine` share: the
 * per-commit record a worker fills and the writer stores (struct mcommit),
 * the miner's ring, the writer's statements, and the functions one part
 * calls in another.  Private to scoring/history's history.c,
 * history_diff.c and history_write.c: only they include it; the API is
 * history.h.
 */
#ifndef PT_HISTORY_INT_H
#define PT_HISTORY_INT_H

#include <git2.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "scoring/history/history.h"
#include "scoring/history/labels.h"
#include "scoring/patch/patch.h"
#include "scoring/store/db.h"
#include "scoring/util/pt.h"
#include "scoring/util/strmap.h"

#define RING 1024 /* commits diffed ahead of the writer */

struct mfile {
	char *path, *old_path;
	char status;
	unsigned added, removed, old_lines;
	unsigned binary : 1, uncounted : 1, doc_only : 1;
};

struct mcommit {
	git_oid oid, parent;
	unsigned nparents;
	char *aname, *aemail, *cname, *cemail;
	int64_t adate, cdate;
	int atz, ctz;
	char *subject, *message;
	size_t msg_len, body_len;
	struct trailer *tr;
	size_t ntr;
	struct mfile *files;
	size_t nfiles, fcap;
	unsigned added, removed, uncounted;
	int doc_only;
	char maint[GIT_OID_HEXSZ + 1];
	int ready, err;
	char errmsg[256];
};

struct miner {
	const struct mine_opts *opts;
	const struct labels_conf *lconf;
	unsigned open_flags; /* the workers' git_repository_open_ext() */
	git_oid *ids;
	size_t nids;
	struct mcommit ring[RING];
	pthread_mutex_t mu;
	pthread_cond_t ready, space;
	size_t next, written;
	int abort;
};

/* One diff thread of mine_run (history.c runs them). */
struct worker {
	struct miner *m;
	pthread_t th;
	int started;
};

/* The single writer of commits, files, trailers and people. */
struct writer {
	struct db *db;
	int64_t repo_id;
	int64_t seq;
	git_mailmap *mm;
	struct strmap people;
	sqlite3_stmt *ins_commit, *ins_file, *ins_trailer, *ins_person;
	size_t with_fixes, uncounted, written;
};

static inline int git_fail(int code, const char *what)
{
	const git_error *e = git_error_last();

	return pt_error_set(code, "%s: %s", what,
			    e && e->message ? e->message : "libgit2 error");
}

static inline void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* ---- history_diff.c ---------------------------------------------------- */

/* Free what a worker filled in c and zero it. */
void mine_commit_clear(struct mcommit *c);
/*
 * A worker thread (arg: its struct worker): opens its own repository,
 * then takes the next id of the walk while the ring has room, reads and
 * diffs that commit into its ring slot and marks it ready.
 */
void *mine_worker_main(void *arg);

/* ---- history_write.c --------------------------------------------------- */

/* Prepare w on db for repo_id: next seq, known people, the statements. */
int mine_writer_open(struct writer *w, struct db *db, git_repository *repo,
		     int64_t repo_id);
void mine_writer_close(struct writer *w);
/* Store the ring's commits in walk order, TXN_COMMITS per transaction. */
int mine_write_all(struct miner *m, struct writer *w, double t0);

/* ---- history.c --------------------------------------------------------- */

/* Call o's progress callback, if any, with STAGE and the time since t0. */
void mine_report(const struct mine_opts *o, const char *stage, size_t done,
		 size_t total, double t0);

#endif
