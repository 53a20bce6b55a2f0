/*
 * history_write.c - the writer of `patchtriage mine`: takes the ring's
 * commits in walk order as the workers finish them and stores commits,
 * changed files, trailers and people (.mailmap resolved, one row per
 * lowercased email) in large transactions, so that memory stays flat and
 * the database sees few commits.  A commit mined by an earlier run is
 * skipped.
 */
#include "scoring/history/history_int.h"

#include <ctype.h>
#include <git2.h>
#include <pthread.h>
#include <string.h>

#include "scoring/patch/patch.h"
#include "scoring/store/db.h"
#include "scoring/store/db_row.h"
#include "scoring/util/strmap.h"

#define TXN_COMMITS 4000 /* commits per write transaction */

static int step_done(struct writer *w, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : db_error(w->db, what);
}

/* The people id of NAME <EMAIL> after .mailmap; 0 when there is none. */
static int person_id(int64_t *out, struct writer *w, const char *name,
		     const char *email)
{
	const char *rn = name, *re = email;
	struct strmap_entry *e;
	struct buf key = BUF_INIT;
	size_t i;
	int added, rc;

	*out = 0;
	if (!email || !*email)
		return 0;
	if (w->mm &&
	    git_mailmap_resolve(&rn, &re, w->mm, name ? name : "", email))
		git_error_clear();
	rc = buf_addstr(&key, re);
	for (i = 0; !rc && i < key.len; i++)
		key.ptr[i] = (char)tolower((unsigned char)key.ptr[i]);
	if (!rc)
		rc = strmap_put(&e, &added, &w->people, key.ptr, key.len);
	if (rc)
		goto out;
	if (added) {
		sqlite3_bind_text(w->ins_person, 1, key.ptr, (int)key.len,
				  SQLITE_TRANSIENT);
		bind_str(w->ins_person, 2, rn);
		rc = step_done(w, w->ins_person, "saving a person");
		if (rc)
			goto out;
		e->v.i = sqlite3_last_insert_rowid(w->db->h);
	}
	*out = e->v.i;
out:
	buf_free(&key);
	return rc;
}

static int write_files(struct writer *w, int64_t cid, struct mcommit *c)
{
	sqlite3_stmt *st = w->ins_file;
	size_t i;
	int rc = 0;

	for (i = 0; i < c->nfiles && !rc; i++) {
		const struct mfile *f = &c->files[i];
		char s[2] = { f->status, 0 };

		sqlite3_bind_int64(st, 1, cid);
		bind_str(st, 2, f->path);
		bind_str(st, 3, f->old_path);
		bind_str(st, 4, s);
		sqlite3_bind_int(st, 5, (int)f->added);
		sqlite3_bind_int(st, 6, (int)f->removed);
		sqlite3_bind_int(st, 7, f->binary);
		sqlite3_bind_int(st, 8, f->uncounted);
		sqlite3_bind_int(st, 9, (int)f->old_lines);
		sqlite3_bind_int(st, 10, f->doc_only);
		rc = step_done(w, st, "saving a file change");
	}
	return rc;
}

static int write_trailers(struct writer *w, int64_t cid, struct mcommit *c)
{
	sqlite3_stmt *st = w->ins_trailer;
	size_t i;
	int fixes = 0, rc = 0;

	for (i = 0; i < c->ntr && !rc; i++) {
		const struct trailer *t = &c->tr[i];
		int64_t pid = 0;

		if (t->kind == TRAILER_FIXES)
			fixes = 1;
		if (t->email)
			rc = person_id(&pid, w, t->name, t->email);
		if (rc)
			break;
		sqlite3_bind_int64(st, 1, cid);
		sqlite3_bind_int(st, 2, (int)i);
		sqlite3_bind_int(st, 3, (int)t->kind);
		bind_str(st, 4, t->key);
		bind_str(st, 5, t->value);
		if (pid)
			sqlite3_bind_int64(st, 6, pid);
		sqlite3_bind_int(st, 7, t->is_stable);
		bind_str(st, 8, t->fixes_sha);
		bind_str(st, 9, t->fixes_subject);
		rc = step_done(w, st, "saving a trailer");
	}
	w->with_fixes += fixes;
	return rc;
}

static int write_commit(struct writer *w, struct mcommit *c)
{
	sqlite3_stmt *st = w->ins_commit;
	char sha[GIT_OID_HEXSZ + 1], par[GIT_OID_HEXSZ + 1];
	int64_t aid, mid, cid;
	int rc;

	rc = person_id(&aid, w, c->aname, c->aemail);
	if (!rc)
		rc = person_id(&mid, w, c->cname, c->cemail);
	if (rc)
		return rc;
	git_oid_tostr(sha, sizeof(sha), &c->oid);
	git_oid_tostr(par, sizeof(par), &c->parent);
	sqlite3_bind_int64(st, 1, w->repo_id);
	bind_str(st, 2, sha);
	sqlite3_bind_int64(st, 3, w->seq);
	bind_str(st, 4, c->nparents ? par : NULL);
	sqlite3_bind_int(st, 5, (int)c->nparents);
	aid ? sqlite3_bind_int64(st, 6, aid) : sqlite3_bind_null(st, 6);
	mid ? sqlite3_bind_int64(st, 7, mid) : sqlite3_bind_null(st, 7);
	sqlite3_bind_int64(st, 8, c->adate);
	sqlite3_bind_int(st, 9, c->atz);
	sqlite3_bind_int64(st, 10, c->cdate);
	sqlite3_bind_int(st, 11, c->ctz);
	sqlite3_bind_text(st, 12, c->subject, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 13, c->message, (int)c->msg_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 14, (int64_t)c->body_len);
	sqlite3_bind_int(st, 15, (int)c->nfiles);
	sqlite3_bind_int(st, 16, (int)c->added);
	sqlite3_bind_int(st, 17, (int)c->removed);
	sqlite3_bind_int(st, 18, (int)c->uncounted);
	sqlite3_bind_int(st, 19, c->doc_only);
	bind_str(st, 20, c->maint[0] ? c->maint : NULL);
	rc = step_done(w, st, "saving a commit");
	if (rc || !sqlite3_changes(w->db->h))
		return rc; /* already mined (an earlier run) */
	cid = sqlite3_last_insert_rowid(w->db->h);
	w->seq++;
	w->uncounted += c->uncounted;
	rc = write_files(w, cid, c);
	if (!rc)
		rc = write_trailers(w, cid, c);
	return rc;
}

int mine_writer_open(struct writer *w, struct db *db, git_repository *repo,
		     int64_t repo_id)
{
	sqlite3_stmt *st;
	int rc;

	memset(w, 0, sizeof(*w));
	w->db = db;
	w->repo_id = repo_id;
	if (git_mailmap_from_repository(&w->mm, repo)) {
		git_error_clear();
		w->mm = NULL;
	}
	rc = db_get_int64(&w->seq, db,
			  "SELECT coalesce(max(seq) + 1, 0) FROM commits "
			  "WHERE repo_id = ?",
			  repo_id);
	if (rc)
		return rc;
	rc = db_prepare(&st, db, "SELECT id, email FROM people");
	if (rc)
		return rc;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		const char *e = (const char *)sqlite3_column_text(st, 1);
		struct strmap_entry *en;

		rc = strmap_put(&en, NULL, &w->people, e,
				(size_t)sqlite3_column_bytes(st, 1));
		if (!rc)
			en->v.i = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (!rc)
		rc = db_prepare(
			&w->ins_commit, db,
			"INSERT INTO commits (repo_id, sha, seq, parent, "
			"nparents, author_id, committer_id, author_date, "
			"author_tz, commit_date, commit_tz, subject, message, "
			"body_len, nfiles, added, removed, uncounted, "
			"doc_only, maint_blob) VALUES (?, ?, ?, ?, ?, ?, ?, "
			"?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
			"ON CONFLICT DO NOTHING");
	if (!rc)
		rc = db_prepare(
			&w->ins_file, db,
			"INSERT INTO commit_files (commit_id, path, old_path, "
			"status, added, removed, binary, uncounted, "
			"old_lines, doc_only) VALUES (?, ?, ?, ?, ?, ?, ?, "
			"?, ?, ?)");
	if (!rc)
		rc = db_prepare(
			&w->ins_trailer, db,
			"INSERT INTO trailers (commit_id, idx, kind, key, "
			"value, person_id, is_stable, fixes_sha, "
			"fixes_subject) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
	if (!rc)
		rc = db_prepare(
			&w->ins_person, db,
			"INSERT INTO people (email, name) VALUES (?, ?)");
	return rc;
}

void mine_writer_close(struct writer *w)
{
	sqlite3_finalize(w->ins_commit);
	sqlite3_finalize(w->ins_file);
	sqlite3_finalize(w->ins_trailer);
	sqlite3_finalize(w->ins_person);
	git_mailmap_free(w->mm);
	strmap_free(&w->people);
}

int mine_write_all(struct miner *m, struct writer *w, double t0)
{
	size_t i;
	int rc = 0, in_txn = 0;

	for (i = 0; i < m->nids && !rc; i++) {
		struct mcommit *c = &m->ring[i % RING];

		pthread_mutex_lock(&m->mu);
		while (!c->ready)
			pthread_cond_wait(&m->ready, &m->mu);
		pthread_mutex_unlock(&m->mu);
		if (c->err) {
			rc = pt_error_set(c->err, "mining '%s': commit %s: %s",
					  m->opts->repo,
					  git_oid_tostr_s(&m->ids[i]),
					  c->errmsg);
		}
		if (!rc && !in_txn && !(rc = db_begin(w->db)))
			in_txn = 1;
		if (!rc)
			rc = write_commit(w, c);
		if (!rc && (i + 1) % TXN_COMMITS == 0) {
			rc = db_commit(w->db);
			in_txn = 0;
		}
		mine_commit_clear(c);
		pthread_mutex_lock(&m->mu);
		m->written = i + 1;
		if (rc)
			m->abort = 1;
		pthread_cond_broadcast(&m->space);
		pthread_mutex_unlock(&m->mu);
		if ((i & 255) == 255)
			mine_report(m->opts, "diffing", i + 1, m->nids, t0);
	}
	if (in_txn) {
		if (rc)
			db_rollback(w->db);
		else
			rc = db_commit(w->db);
	}
	mine_report(m->opts, "diffing", m->nids, m->nids, t0);
	w->written = m->written;
	return rc;
}
