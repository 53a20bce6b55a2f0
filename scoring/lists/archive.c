/*
 * archive.c - list archives read into the threading tables (see
 * archive.h): the import loop that parses each message once and hands it
 * to thread.c and outcome.c, the remembered epoch positions, the
 * skipped-message log and the stats.  It owns the SQL of archive_sources
 * and archive_skips; the readers (public-inbox, mbox) are
 * archive_read.c's, threading, outcomes and labels belong to thread.c
 * and outcome.c.
 */
#include "scoring/lists/archive.h"

#include "scoring/history/maintainers.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/lists/outcome.h"
#include "scoring/lists/thread.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- import -------------------------------------------------------- */

struct archive {
	struct db *db;
	struct thread *thread;
	struct outcome *outcome;
	const struct archive_opts *opts;
	struct archive_result res;
	sqlite3_stmt *skip;
	const char *source; /* path of the source being read */
	size_t src_messages, src_skipped;
	int src_cut;	 /* the last mbox ended early */
	size_t src_read; /* ... after this many messages */
	size_t batch;	 /* messages in the open transaction */
	double t0, last_progress;
	double share; /* of the source read, for the progress */
};

int archive_open(struct archive **out, struct db *db,
		 const struct archive_opts *opts)
{
	static const struct archive_opts none;
	struct archive *a;
	int rc;

	*out = NULL;
	a = pt_calloc(1, sizeof(*a));
	if (!a)
		return PT_ENOMEM;
	a->db = db;
	a->opts = opts ? opts : &none;
	a->t0 = now_s();
	rc = thread_open(&a->thread, db, a->opts->lexicon);
	if (!rc)
		rc = outcome_open(&a->outcome, db, a->opts->labels_conf);
	/*
	 * Checkpointing the WAL every 1000 pages (the default) costs more
	 * than the inserts of an import.  Let the WAL grow to 64 MiB during
	 * the import; archive_free() puts the default back and checkpoints.
	 */
	if (!rc)
		rc = db_exec(db, "PRAGMA wal_autocheckpoint = 16384");
	if (!rc)
		rc = db_prepare(&a->skip, db,
				"INSERT OR REPLACE INTO archive_skips (source, "
				"pos, reason) VALUES (?,?,?)");
	if (rc) {
		archive_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void archive_free(struct archive *a)
{
	if (!a)
		return;
	sqlite3_finalize(a->skip);
	if (a->db->h) {
		sqlite3_exec(a->db->h, "PRAGMA wal_autocheckpoint = 1000", NULL,
			     NULL, NULL);
		sqlite3_wal_checkpoint_v2(a->db->h, NULL,
					  SQLITE_CHECKPOINT_PASSIVE, NULL,
					  NULL);
	}
	outcome_free(a->outcome);
	thread_free(a->thread);
	free(a);
}

static int record_skip(struct archive *a, const char *pos, const char *why)
{
	int rc;

	a->res.skipped++;
	a->src_skipped++;
	sqlite3_reset(a->skip);
	sqlite3_bind_text(a->skip, 1, a->source, -1, SQLITE_STATIC);
	sqlite3_bind_text(a->skip, 2, pos, -1, SQLITE_STATIC);
	sqlite3_bind_text(a->skip, 3, why && *why ? why : "unknown", -1,
			  SQLITE_TRANSIENT);
	rc = sqlite3_step(a->skip);
	return rc == SQLITE_DONE ? 0 : db_error(a->db, "recording a skip");
}

static void progress(struct archive *a, int force)
{
	struct archive_progress p;
	double t = now_s();

	if (!a->opts->progress || (!force && t - a->last_progress < 0.25))
		return;
	a->last_progress = t;
	p.source = a->source;
	p.messages = a->res.messages;
	p.skipped = a->res.skipped;
	p.source_messages = a->src_messages;
	p.share = a->share;
	p.elapsed = t - a->t0;
	a->opts->progress(&p, a->opts->progress_ctx);
}

static void count_kind(struct archive *a, const struct thread_result *r)
{
	if (r->duplicate) {
		a->res.duplicates++;
		return;
	}
	a->res.imported++;
	switch (r->kind) {
	case THREAD_PATCH:
		a->res.patches++;
		break;
	case THREAD_COVER:
		a->res.covers++;
		break;
	case THREAD_REPLY:
		a->res.replies++;
		break;
	default:
		a->res.other++;
		break;
	}
}

/*
 * Reading and parsing run on a second thread, threading and the database
 * on the caller's: the reader hands parsed messages over through a small
 * bounded queue, so the two overlap and memory stays at ARCHIVE_QUEUE
 * parsed messages.  A database failure stops both; anything wrong with a
 * message only skips it.
 */
#define ARCHIVE_QUEUE 64

struct item {
	struct patch *p; /* NULL when parsing failed */
	int rc;		 /* the parse error, 0 when p is set */
	char *why;	 /* its message (malloc'd) */
	char pos[48];
	double share; /* of the source read when it was produced */
};

struct pipe {
	pthread_mutex_t mu;
	pthread_cond_t can_put, can_get;
	struct item q[ARCHIVE_QUEUE];
	size_t head, n;
	int done, stop;
	/* the reader's side */
	int pi; /* public-inbox (else mbox) */
	const char *path, *since;
	struct archive_walk walk;
	int rc;
	char *err;
};

static void item_clear(struct item *it)
{
	patch_free(it->p);
	free(it->why);
	memset(it, 0, sizeof(*it));
}

static void parse_item(struct item *it, const char *msg, size_t len,
		       const char *pos)
{
	char why[160];

	memset(it, 0, sizeof(*it));
	snprintf(it->pos, sizeof(it->pos), "%s", pos);
	if (!msg && len == ARCHIVE_MSG_ABSENT) {
		snprintf(why, sizeof(why),
			 "message blob missing from the repository "
			 "(a partial snapshot)");
		it->rc = PT_ENOTFOUND;
	} else if (!msg) {
		snprintf(why, sizeof(why),
			 "message of %zu bytes is over the "
			 "%u-byte limit",
			 len, PT_MAX_MAIL_SIZE);
		it->rc = PT_ETOOBIG;
	} else if ((it->rc = patch_from_mail(&it->p, msg, len))) {
		snprintf(why, sizeof(why), "%s", pt_error_last());
	} else if (!it->p->message_id || !*it->p->message_id) {
		patch_free(it->p);
		it->p = NULL;
		it->rc = PT_EINVAL;
		snprintf(why, sizeof(why), "no Message-ID");
	}
	if (it->rc)
		it->why = strdup(why);
}

static int produce_cb(const char *msg, size_t len, const char *pos, void *ctx)
{
	struct pipe *q = ctx;
	struct item it;

	parse_item(&it, msg, len, pos);
	if (q->walk.size)
		it.share = (double)q->walk.read / (double)q->walk.size;
	pthread_mutex_lock(&q->mu);
	while (q->n == ARCHIVE_QUEUE && !q->stop)
		pthread_cond_wait(&q->can_put, &q->mu);
	if (q->stop) {
		pthread_mutex_unlock(&q->mu);
		item_clear(&it);
		return 1;
	}
	q->q[(q->head + q->n++) % ARCHIVE_QUEUE] = it;
	pthread_cond_signal(&q->can_get);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

static void *reader(void *arg)
{
	struct pipe *q = arg;
	int rc;

	if (q->pi)
		rc = archive_pi_foreach(&q->walk, q->path, q->since, produce_cb,
					q);
	else
		rc = archive_mbox_foreach(&q->walk, q->path, produce_cb, q);
	pthread_mutex_lock(&q->mu);
	q->rc = rc;
	if (rc)
		q->err = strdup(pt_error_last());
	q->done = 1;
	pthread_cond_signal(&q->can_get);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* Next parsed message; 0 when the reader is done and the queue empty. */
static int consume(struct pipe *q, struct item *out)
{
	int got = 0;

	pthread_mutex_lock(&q->mu);
	while (!q->n && !q->done)
		pthread_cond_wait(&q->can_get, &q->mu);
	if (q->n) {
		*out = q->q[q->head];
		q->head = (q->head + 1) % ARCHIVE_QUEUE;
		q->n--;
		got = 1;
		pthread_cond_signal(&q->can_put);
	}
	pthread_mutex_unlock(&q->mu);
	return got;
}

static int import_item(struct archive *a, struct item *it)
{
	struct thread_result r;
	int rc;

	a->res.messages++;
	a->src_messages++;
	if (it->rc == PT_ENOMEM)
		return pt_error_set(PT_ENOMEM, "out of memory");
	if (it->rc)
		return record_skip(a, it->pos, it->why);
	memset(&r, 0, sizeof(r));
	rc = thread_add_patch(a->thread, it->p, a->source, &r);
	if (!rc)
		rc = outcome_note(a->outcome, it->p, &r);
	if (rc && rc != PT_EIO && rc != PT_ENOMEM)
		rc = record_skip(a, it->pos, pt_error_last());
	else if (!rc)
		count_kind(a, &r);
	thread_result_clear(&r);
	return rc;
}

/*
 * Messages go ARCHIVE_BATCH to a transaction: committing each one (WAL
 * frames and all) was a good part of an import's time.  thread.c then
 * puts each message in a savepoint, so a message that fails still
 * leaves nothing behind; on an error that stops the import, what came
 * before it is committed, as it was when each message committed alone.
 * A crash loses at most the open batch, which the next import reads
 * again: the source's position is saved only after the whole source.
 */
#define ARCHIVE_BATCH 1000

static int batch_end(struct archive *a, int rc)
{
	int c;

	if (!a->batch)
		return rc;
	a->batch = 0;
	/* SQLite rolls the whole transaction back on some errors itself */
	if (sqlite3_get_autocommit(a->db->h))
		return rc;
	c = db_commit(a->db);
	if (c)
		db_rollback(a->db);
	return rc ? rc : c;
}

static int import_batched(struct archive *a, struct item *it)
{
	int rc = 0;

	if (!a->batch)
		rc = db_begin(a->db);
	if (rc)
		return rc;
	a->batch++;
	rc = import_item(a, it);
	if (!rc && a->batch >= ARCHIVE_BATCH)
		rc = batch_end(a, 0);
	return rc;
}

/* Read pi/path (from after since) through the pipe into the database. */
static int import_source(struct archive *a, int pi, const char *path,
			 const char *since, struct archive_walk *walk)
{
	struct pipe *q;
	struct item it;
	pthread_t th;
	int rc = 0;

	q = pt_calloc(1, sizeof(*q));
	if (!q)
		return PT_ENOMEM;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->can_put, NULL);
	pthread_cond_init(&q->can_get, NULL);
	q->pi = pi;
	q->path = path;
	q->since = since;
	if (pthread_create(&th, NULL, reader, q)) {
		rc = pt_error_set(PT_ERROR, "cannot start the reader of '%s'",
				  path);
		goto out;
	}
	while (consume(q, &it)) {
		if (!rc)
			rc = import_batched(a, &it);
		a->share = it.share;
		item_clear(&it);
		if (rc) {
			pthread_mutex_lock(&q->mu);
			q->stop = 1;
			pthread_cond_signal(&q->can_put);
			pthread_mutex_unlock(&q->mu);
		}
		progress(a, 0);
	}
	rc = batch_end(a, rc);
	pthread_join(th, NULL);
	if (!rc && q->rc)
		rc = pt_error_set(q->rc, "%s", q->err ? q->err : "read error");
	*walk = q->walk;
out:
	free(q->err);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->can_put);
	pthread_cond_destroy(&q->can_get);
	free(q);
	return rc;
}

static int source_get(struct archive *a, const char *path, char **last)
{
	sqlite3_stmt *st;
	int rc;

	*last = NULL;
	rc = db_prepare(&st, a->db,
			"SELECT last_commit FROM archive_sources "
			"WHERE path = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (sqlite3_column_text(st, 0) &&
		    !(*last = pt_strdup(
			      (const char *)sqlite3_column_text(st, 0))))
			rc = PT_ENOMEM;
		else
			rc = 0;
	} else {
		rc = rc == SQLITE_DONE ? 0 : db_error(a->db, "reading source");
	}
	sqlite3_finalize(st);
	return rc;
}

static int source_save(struct archive *a, const char *path, const char *kind,
		       const char *last)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, a->db,
			"INSERT INTO archive_sources (path, kind, last_commit,"
			" messages, skipped, updated) VALUES (?1,?2,?3,?4,?5,"
			"?6) ON CONFLICT(path) DO UPDATE SET kind = ?2, "
			"last_commit = COALESCE(?3, last_commit), messages = "
			"messages + ?4, skipped = skipped + ?5, updated = ?6");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	if (last && *last)
		sqlite3_bind_text(st, 3, last, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)a->src_messages);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)a->src_skipped);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)time(NULL));
	rc = sqlite3_step(st) == SQLITE_DONE ? 0
					     : db_error(a->db, "saving source");
	sqlite3_finalize(st);
	return rc;
}

static int begin_source(struct archive *a, char **abs, const char *path)
{
	char *r = realpath(path, NULL);

	*abs = r ? r : pt_strdup(path);
	if (!*abs)
		return PT_ENOMEM;
	a->source = *abs;
	a->src_messages = a->src_skipped = 0;
	a->src_cut = 0;
	a->share = 0;
	a->res.sources++;
	return 0;
}

int archive_import_pi(struct archive *a, const char *gitdir)
{
	struct archive_walk w;
	char *abs = NULL, *last = NULL;
	int rc;

	rc = begin_source(a, &abs, gitdir);
	if (!rc && !a->opts->full)
		rc = source_get(a, abs, &last);
	if (!rc)
		rc = import_source(a, 1, abs, last, &w);
	/* what outcome.c holds back must be stored before the position */
	if (!rc)
		rc = outcome_flush(a->outcome);
	if (!rc) {
		a->res.deleted += w.deleted;
		a->res.absent += w.absent;
		rc = source_save(a, abs, "public-inbox", w.last);
	}
	progress(a, 1);
	a->source = NULL;
	free(last);
	free(abs);
	return rc;
}

int archive_import_mbox(struct archive *a, const char *path)
{
	struct archive_walk w;
	char *abs = NULL;
	int rc;

	rc = begin_source(a, &abs, path);
	if (!rc)
		rc = import_source(a, 0, abs, NULL, &w);
	if (!rc)
		rc = outcome_flush(a->outcome);
	a->src_cut = !rc && w.truncated;
	a->src_read = w.commits;
	if (a->src_cut)
		rc = record_skip(a, "end", "compressed stream ends early");
	if (!rc)
		rc = source_save(a, abs, "mbox", NULL);
	if (!rc)
		a->share = 1;
	progress(a, 1);
	a->source = NULL;
	free(abs);
	return rc;
}

int archive_source_cut(const struct archive *a, size_t *nread)
{
	*nread = a->src_cut ? a->src_read : 0;
	return a->src_cut;
}

static int insert_maintainer(struct db *db, sqlite3_stmt *st, const char *email,
			     const char *source)
{
	int rc;

	sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, source, -1, SQLITE_STATIC);
	rc = sqlite3_step(st) == SQLITE_DONE
		     ? 0
		     : db_error(db, "storing the maintainers");
	sqlite3_reset(st);
	return rc;
}

int archive_set_maintainers(struct archive *a, const struct maint *m,
			    const char *source)
{
	sqlite3_stmt *st = NULL;
	size_t i, k;
	int rc;

	rc = db_begin(a->db);
	if (!rc)
		rc = db_exec(a->db, "DELETE FROM list_maintainers");
	if (!rc)
		rc = db_prepare(&st, a->db,
				"INSERT OR IGNORE INTO list_maintainers "
				"(email, source) VALUES (?, ?)");
	for (i = 0; !rc && i < m->n; i++)
		for (k = 0; !rc && k < m->s[i].npeople; k++)
			if (!m->s[i].is_reviewer[k])
				rc = insert_maintainer(a->db, st,
						       m->s[i].people[k],
						       source);
	sqlite3_finalize(st);
	if (rc) {
		db_rollback(a->db);
		return rc;
	}
	return db_commit(a->db);
}

int archive_finish(struct archive *a, struct archive_result *out)
{
	struct outcome_counts oc;
	int rc;

	rc = outcome_compute(&oc, a->outcome, &a->opts->finish_progress);
	*out = a->res;
	return rc;
}

/* ---- stats --------------------------------------------------------- */

static int count_sql(int64_t *out, struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	int rc;

	*out = 0;
	rc = db_prepare(&st, db, sql);
	if (rc)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else
		rc = db_error(db, "counting");
	sqlite3_finalize(st);
	return rc;
}

#define OUTCOME_IS(x) "SELECT count(*) FROM posting_outcomes WHERE " x

static const struct {
	const char *name;
	size_t off;
	const char *sql;
} stat_rows[] = {
#define S(f, q)                                          \
	{                                                \
#f, offsetof(struct archive_stats, f), q \
	}
	S(sources, "SELECT count(*) FROM archive_sources"),
	S(messages, "SELECT count(*) FROM messages"),
	S(skipped, "SELECT count(*) FROM archive_skips"),
	S(series, "SELECT count(*) FROM series"),
	S(series_complete, "SELECT count(*) FROM series WHERE complete"),
	S(versions_linked, "SELECT count(*) FROM series_versions"),
	S(patches, "SELECT count(*) FROM patches"),
	S(replies, "SELECT count(*) FROM replies"),
	S(reviews, "SELECT count(*) FROM mail_reviews"),
	S(notices, "SELECT count(DISTINCT message_id) FROM list_notices"),
	S(applied, OUTCOME_IS("outcome = 'applied'")),
	S(applied_reply, OUTCOME_IS("how = 'reply'")),
	S(applied_bot, OUTCOME_IS("how = 'bot'")),
	S(applied_commit, OUTCOME_IS("how IN ('link', 'subject')")),
	S(superseded, OUTCOME_IS("outcome = 'superseded'")),
	S(neither, OUTCOME_IS("outcome = 'none'")),
	S(fixes, "SELECT count(*) FROM posting_labels WHERE is_fix"),
	S(bugs, "SELECT count(*) FROM posting_labels WHERE bug"),
	S(trivial_only,
	  "SELECT count(*) FROM posting_labels WHERE trivial_only"),
#undef S
};

#define NSTATS (sizeof(stat_rows) / sizeof(stat_rows[0]))

int archive_stats(struct archive_stats *out, struct db *db)
{
	size_t i;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; !rc && i < NSTATS; i++)
		rc = count_sql((int64_t *)((char *)out + stat_rows[i].off), db,
			       stat_rows[i].sql);
	return rc;
}

int archive_stats_json(struct buf *out, const struct archive_stats *s)
{
	size_t i;
	int rc;

	rc = buf_addch(out, '{');
	for (i = 0; !rc && i < NSTATS; i++)
		rc = buf_addf(out, "%s\"%s\": %lld", i ? ", " : "",
			      stat_rows[i].name,
			      (long long)*(const int64_t *)((const char *)s +
							    stat_rows[i].off));
	if (!rc)
		rc = buf_addch(out, '}');
	return rc;
}
