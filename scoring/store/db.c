/*
 * db.c - opening the state database and migrating its schema.  The
 * migrations array is the schema's history: entry i takes user_version i
 * to i+1 and runs in one transaction, so a crash mid-migration leaves the
 * previous version intact.  Append new entries at the end; never edit one
 * that has shipped.  Each module's tables are grouped in its own entry.
 */
#include "scoring/store/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const migrations[] = {
	/* 1: core key/value state */
	"CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
	/* 2: bot/outbox/store.c - the durable work queue and the outbox of actions */
	"CREATE TABLE work_queue ("
	" id INTEGER PRIMARY KEY, kind TEXT NOT NULL, key TEXT NOT NULL,"
	" payload TEXT, state TEXT NOT NULL DEFAULT 'pending',"
	" attempts INTEGER NOT NULL DEFAULT 0, not_before INTEGER NOT NULL"
	" DEFAULT 0, last_error TEXT, created INTEGER NOT NULL,"
	" updated INTEGER NOT NULL, UNIQUE (kind, key));"
	"CREATE INDEX work_queue_ready ON work_queue (state, not_before);"
	"CREATE TABLE outbox ("
	" id INTEGER PRIMARY KEY, kind TEXT NOT NULL, dedupe_key TEXT NOT NULL"
	" UNIQUE, subsystem TEXT, target TEXT NOT NULL, payload TEXT NOT NULL,"
	" state TEXT NOT NULL DEFAULT 'intended', remote_ref TEXT,"
	" last_error TEXT, created INTEGER NOT NULL, updated INTEGER NOT NULL);"
	"CREATE INDEX outbox_state ON outbox (state);"
	"CREATE INDEX outbox_rate ON outbox (subsystem, kind, created);",
	/* 3: bot/mail/imap.c folder positions; scoring/lists/thread.c mail threading */
	"CREATE TABLE imap_folders ("
	" account TEXT NOT NULL, folder TEXT NOT NULL,"
	" uidvalidity INTEGER NOT NULL, last_uid INTEGER NOT NULL,"
	" updated INTEGER NOT NULL, PRIMARY KEY (account, folder));"
	"CREATE TABLE series ("
	" id INTEGER PRIMARY KEY, thread_key TEXT NOT NULL UNIQUE,"
	" cover_msgid TEXT, subject TEXT, norm_subject TEXT,"
	" author_name TEXT, author_email TEXT, list_id TEXT,"
	" version INTEGER NOT NULL, total INTEGER NOT NULL,"
	" received INTEGER NOT NULL DEFAULT 0,"
	" complete INTEGER NOT NULL DEFAULT 0, first_date INTEGER,"
	" last_date INTEGER);"
	"CREATE INDEX series_author ON series (author_email, version);"
	"CREATE TABLE series_versions ("
	" series_id INTEGER PRIMARY KEY REFERENCES series(id),"
	" prev_series_id INTEGER NOT NULL REFERENCES series(id),"
	" reason TEXT NOT NULL);"
	"CREATE INDEX series_versions_prev ON series_versions (prev_series_id);"
	"CREATE TABLE patches ("
	" id INTEGER PRIMARY KEY, message_id TEXT NOT NULL UNIQUE,"
	" series_id INTEGER NOT NULL REFERENCES series(id),"
	" number INTEGER NOT NULL, total INTEGER NOT NULL,"
	" version INTEGER NOT NULL, subject TEXT, norm_subject TEXT,"
	" author_name TEXT, author_email TEXT, date INTEGER,"
	" files INTEGER NOT NULL DEFAULT 0, added INTEGER NOT NULL DEFAULT 0,"
	" removed INTEGER NOT NULL DEFAULT 0, prev_patch_id INTEGER,"
	" UNIQUE (series_id, number, message_id));"
	"CREATE INDEX patches_series ON patches (series_id, number);"
	"CREATE INDEX patches_subject ON patches (norm_subject);"
	"CREATE TABLE messages ("
	" id INTEGER PRIMARY KEY, message_id TEXT NOT NULL UNIQUE,"
	" in_reply_to TEXT, list_id TEXT, author_name TEXT,"
	" author_email TEXT, date INTEGER, subject TEXT,"
	" kind TEXT NOT NULL, series_id INTEGER, patch_id INTEGER,"
	" source TEXT, received INTEGER NOT NULL);"
	"CREATE TABLE message_refs ("
	" message_id TEXT NOT NULL, ref TEXT NOT NULL, pos INTEGER NOT NULL,"
	" PRIMARY KEY (message_id, pos));"
	"CREATE INDEX message_refs_ref ON message_refs (ref);"
	"CREATE TABLE replies ("
	" id INTEGER PRIMARY KEY, message_id TEXT NOT NULL UNIQUE,"
	" series_id INTEGER, patch_id INTEGER, author_name TEXT,"
	" author_email TEXT, date INTEGER, lines INTEGER NOT NULL,"
	" inline_comments INTEGER NOT NULL, tested_claims INTEGER NOT NULL,"
	" sentiment REAL NOT NULL, bot TEXT, bot_verdict TEXT, bot_arch TEXT);"
	"CREATE INDEX replies_patch ON replies (patch_id);"
	"CREATE INDEX replies_series ON replies (series_id);"
	"CREATE TABLE mail_reviews ("
	" id INTEGER PRIMARY KEY, reply_msgid TEXT NOT NULL,"
	" series_id INTEGER, patch_id INTEGER NOT NULL DEFAULT 0,"
	" kind TEXT NOT NULL,"
	" name TEXT, email TEXT, date INTEGER,"
	" UNIQUE (reply_msgid, kind, email, patch_id));"
	"CREATE INDEX mail_reviews_patch ON mail_reviews (patch_id);"
	"CREATE INDEX mail_reviews_series ON mail_reviews (series_id);",
	/* 4: scoring/history/history.c, cycle.c, labels.c - mined git history */
	"CREATE TABLE repos ("
	" id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, tip TEXT,"
	" mined_at INTEGER, newest INTEGER);"
	"CREATE TABLE people ("
	" id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT);"
	"CREATE TABLE commits ("
	" id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL REFERENCES repos,"
	" sha TEXT NOT NULL, seq INTEGER NOT NULL, parent TEXT,"
	" nparents INTEGER NOT NULL, author_id INTEGER REFERENCES people,"
	" committer_id INTEGER REFERENCES people, author_date INTEGER,"
	" author_tz INTEGER, commit_date INTEGER, commit_tz INTEGER,"
	" subject TEXT, message TEXT, body_len INTEGER,"
	" nfiles INTEGER NOT NULL DEFAULT 0, added INTEGER NOT NULL DEFAULT 0,"
	" removed INTEGER NOT NULL DEFAULT 0,"
	" uncounted INTEGER NOT NULL DEFAULT 0, doc_only INTEGER,"
	" maint_blob TEXT, tag TEXT, release TEXT, rc INTEGER, phase TEXT,"
	" after_last_rc INTEGER, soak INTEGER, UNIQUE (repo_id, sha));"
	"CREATE INDEX commits_seq ON commits (repo_id, seq);"
	"CREATE INDEX commits_subject ON commits (repo_id, subject);"
	"CREATE TABLE commit_files ("
	" commit_id INTEGER NOT NULL REFERENCES commits, path TEXT NOT NULL,"
	" old_path TEXT, status TEXT NOT NULL, added INTEGER NOT NULL,"
	" removed INTEGER NOT NULL, binary INTEGER NOT NULL DEFAULT 0,"
	" uncounted INTEGER NOT NULL DEFAULT 0, old_lines INTEGER,"
	" doc_only INTEGER, subsystem TEXT);"
	"CREATE INDEX commit_files_commit ON commit_files (commit_id);"
	"CREATE TABLE trailers ("
	" commit_id INTEGER NOT NULL REFERENCES commits, idx INTEGER NOT NULL,"
	" kind INTEGER NOT NULL, key TEXT, value TEXT,"
	" person_id INTEGER REFERENCES people, is_stable INTEGER,"
	" fixes_sha TEXT, fixes_subject TEXT, PRIMARY KEY (commit_id, idx));"
	"CREATE INDEX trailers_person ON trailers (person_id);"
	"CREATE TABLE tags ("
	" repo_id INTEGER NOT NULL REFERENCES repos, name TEXT NOT NULL,"
	" sha TEXT NOT NULL, date INTEGER, release TEXT NOT NULL,"
	" rc INTEGER NOT NULL, ord INTEGER NOT NULL,"
	" PRIMARY KEY (repo_id, name));"
	"CREATE TABLE fix_refs ("
	" id INTEGER PRIMARY KEY, commit_id INTEGER NOT NULL REFERENCES commits,"
	" kind TEXT NOT NULL, ref TEXT, ref_subject TEXT,"
	" target_id INTEGER REFERENCES commits, target_sha TEXT,"
	" how TEXT NOT NULL, why TEXT, trivial TEXT);"
	"CREATE INDEX fix_refs_commit ON fix_refs (commit_id);"
	"CREATE INDEX fix_refs_target ON fix_refs (target_id);"
	"CREATE TABLE labels ("
	" commit_id INTEGER PRIMARY KEY REFERENCES commits,"
	" is_fix INTEGER NOT NULL, is_stable INTEGER NOT NULL,"
	" bug INTEGER NOT NULL, nfixes INTEGER NOT NULL, discovered INTEGER,"
	" trivial_only INTEGER NOT NULL, negative_ok INTEGER NOT NULL);"
	"CREATE TABLE features ("
	" commit_id INTEGER PRIMARY KEY REFERENCES commits,"
	" ns INTEGER, nd INTEGER, nf INTEGER, entropy REAL, la INTEGER,"
	" ld INTEGER, lt INTEGER, ndev INTEGER, age REAL, nuc INTEGER,"
	" exp INTEGER, rexp REAL, sexp INTEGER);"
	"CREATE TABLE reviews ("
	" commit_id INTEGER NOT NULL REFERENCES commits,"
	" person_id INTEGER NOT NULL REFERENCES people, kind INTEGER NOT NULL,"
	" is_maintainer INTEGER, prior INTEGER NOT NULL,"
	" prior_bug INTEGER NOT NULL, PRIMARY KEY (commit_id, person_id, kind));"
	"CREATE INDEX reviews_person ON reviews (person_id);",
	/* 5: bot/patchwork/patchwork.c - event positions and the events already seen */
	"CREATE TABLE pw_positions ("
	" url TEXT NOT NULL, project TEXT NOT NULL, last_id INTEGER NOT NULL,"
	" last_date TEXT NOT NULL, updated INTEGER NOT NULL,"
	" PRIMARY KEY (url, project));"
	"CREATE TABLE pw_events_seen ("
	" url TEXT NOT NULL, project TEXT NOT NULL, event_id INTEGER NOT NULL,"
	" date TEXT NOT NULL, PRIMARY KEY (url, project, event_id));",
	/* 6: scoring/lists/archive.c, outcome.c - list archives and outcomes */
	"CREATE TABLE archive_sources ("
	" path TEXT PRIMARY KEY, kind TEXT NOT NULL, last_commit TEXT,"
	" messages INTEGER NOT NULL DEFAULT 0,"
	" skipped INTEGER NOT NULL DEFAULT 0, updated INTEGER NOT NULL);"
	"CREATE TABLE archive_skips ("
	" id INTEGER PRIMARY KEY, source TEXT NOT NULL, pos TEXT NOT NULL,"
	" reason TEXT NOT NULL, UNIQUE (source, pos));"
	"CREATE TABLE list_posts ("
	" message_id TEXT PRIMARY KEY, date INTEGER, author_email TEXT,"
	" norm_subject TEXT, is_fix INTEGER NOT NULL,"
	" is_stable INTEGER NOT NULL, is_revert INTEGER NOT NULL,"
	" reviewed INTEGER NOT NULL, acked INTEGER NOT NULL,"
	" tested INTEGER NOT NULL);"
	"CREATE TABLE list_asks ("
	" message_id TEXT PRIMARY KEY, questions INTEGER NOT NULL,"
	" requests INTEGER NOT NULL, nits INTEGER NOT NULL);"
	"CREATE TABLE list_fixrefs ("
	" id INTEGER PRIMARY KEY, message_id TEXT NOT NULL,"
	" kind TEXT NOT NULL, ref TEXT, ref_subject TEXT,"
	" norm_subject TEXT, date INTEGER, trivial TEXT,"
	" UNIQUE (message_id, kind, ref, norm_subject));"
	"CREATE INDEX list_fixrefs_subject ON list_fixrefs (norm_subject);"
	"CREATE TABLE list_notices ("
	" id INTEGER PRIMARY KEY, message_id TEXT NOT NULL,"
	" kind TEXT NOT NULL, who TEXT, date INTEGER,"
	" item INTEGER NOT NULL DEFAULT 0, item_subject TEXT,"
	" commit_sha TEXT, branch TEXT, UNIQUE (message_id, item));"
	"CREATE TABLE posting_outcomes ("
	" patch_id INTEGER PRIMARY KEY, outcome TEXT NOT NULL, how TEXT,"
	" notice_msgid TEXT, applied_date INTEGER, commit_sha TEXT,"
	" commit_id INTEGER, superseded_by INTEGER);"
	"CREATE INDEX posting_outcomes_commit ON posting_outcomes (commit_id);"
	"CREATE TABLE posting_labels ("
	" patch_id INTEGER PRIMARY KEY, is_fix INTEGER NOT NULL,"
	" is_stable INTEGER NOT NULL, bug INTEGER NOT NULL,"
	" nfixes INTEGER NOT NULL, discovered INTEGER,"
	" trivial_only INTEGER NOT NULL, how TEXT, commit_bug INTEGER);",
	/* 7: bot/loop/run.c - the raw patch mails the bot scores from */
	"CREATE TABLE mail_raw ("
	" message_id TEXT PRIMARY KEY, raw BLOB NOT NULL,"
	" received INTEGER NOT NULL);",
	/* 8: scoring/model/features.c - an author's earlier commits, for a mail */
	("CREATE INDEX commits_author ON commits (author_id, repo_id,"
	 " commit_date);"),
	/* 9: scoring/model/features.c - a file's earlier changes, for a mail */
	"CREATE INDEX commit_files_path ON commit_files (path);",
	/* 10: scoring/history/histfeat.c - past bugs of the files, author, component */
	"ALTER TABLE features ADD COLUMN file_bugs INTEGER;"
	"ALTER TABLE features ADD COLUMN file_fixes INTEGER;"
	"ALTER TABLE features ADD COLUMN author_bugs INTEGER;"
	"ALTER TABLE features ADD COLUMN comp_changes INTEGER;"
	"ALTER TABLE features ADD COLUMN comp_bugs INTEGER;",
	/* 11: scoring/model/histsum.c - as-of history summaries, for a mail */
	"CREATE TABLE hist_files ("
	" repo_id INTEGER NOT NULL, path TEXT NOT NULL, n INTEGER NOT NULL,"
	" rows BLOB NOT NULL, PRIMARY KEY (repo_id, path));"
	"CREATE TABLE hist_author_tops ("
	" repo_id INTEGER NOT NULL, author_id INTEGER NOT NULL,"
	" top TEXT NOT NULL, n INTEGER NOT NULL, rows BLOB NOT NULL,"
	" PRIMARY KEY (repo_id, author_id, top));"
	"CREATE TABLE hist_reviewers ("
	" repo_id INTEGER NOT NULL, person_id INTEGER NOT NULL,"
	" n INTEGER NOT NULL, rows BLOB NOT NULL,"
	" PRIMARY KEY (repo_id, person_id));"
	"CREATE TABLE hist_state ("
	" repo_id INTEGER PRIMARY KEY, tip TEXT, mined_at INTEGER,"
	" format INTEGER NOT NULL);"
	"CREATE INDEX tags_date ON tags (repo_id, date, ord);",
	/* 12: scoring/model/histsum.c - an author's and a component's past bugs */
	"CREATE TABLE hist_authors ("
	" repo_id INTEGER NOT NULL, author_id INTEGER NOT NULL,"
	" n INTEGER NOT NULL, rows BLOB NOT NULL,"
	" PRIMARY KEY (repo_id, author_id));"
	"CREATE TABLE hist_components ("
	" repo_id INTEGER NOT NULL, component TEXT NOT NULL,"
	" n INTEGER NOT NULL, rows BLOB NOT NULL,"
	" PRIMARY KEY (repo_id, component));",
};

#define NMIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))

int db_schema_version(void)
{
	return (int)NMIGRATIONS;
}

int db_error(struct db *db, const char *what)
{
	return pt_error_set(PT_EIO, "%s: %s", what,
			    db && db->h ? sqlite3_errmsg(db->h) : "no db");
}

int db_exec(struct db *db, const char *sql)
{
	char *msg = NULL;
	int rc;

	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	rc = pt_error_set(PT_EIO, "database '%s': %s", db->path,
			  msg ? msg : sqlite3_errmsg(db->h));
	sqlite3_free(msg);
	return rc;
}

int db_begin(struct db *db)
{
	return db_exec(db, "BEGIN IMMEDIATE");
}

int db_commit(struct db *db)
{
	return db_exec(db, "COMMIT");
}

int db_rollback(struct db *db)
{
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return 0;
}

/*
 * The rollback runs through sqlite3_exec() so that it leaves the pt
 * error of the failure alone; ROLLBACK TO fails harmlessly when SQLite
 * has already rolled the whole transaction back (SQLITE_FULL and kin).
 */
int db_savepoint(struct db *db, const char *name, int *own)
{
	char sql[80];

	*own = sqlite3_get_autocommit(db->h);
	if (*own)
		return db_begin(db);
	snprintf(sql, sizeof(sql), "SAVEPOINT %s", name);
	return db_exec(db, sql);
}

int db_release(struct db *db, const char *name, int own, int rc)
{
	char sql[80];

	if (!rc && own) {
		rc = db_commit(db);
	} else if (!rc) {
		snprintf(sql, sizeof(sql), "RELEASE %s", name);
		rc = db_exec(db, sql);
	}
	if (rc && own) {
		db_rollback(db);
	} else if (rc) {
		snprintf(sql, sizeof(sql), "ROLLBACK TO %s; RELEASE %s", name,
			 name);
		sqlite3_exec(db->h, sql, NULL, NULL, NULL);
	}
	return rc;
}

int db_prepare(sqlite3_stmt **out, struct db *db, const char *sql)
{
	*out = NULL;
	if (sqlite3_prepare_v2(db->h, sql, -1, out, NULL) != SQLITE_OK)
		return pt_error_set(PT_EIO, "database '%s': %s", db->path,
				    sqlite3_errmsg(db->h));
	return 0;
}

int db_prepare_all(sqlite3_stmt **st, struct db *db,
		   const char *const *sql, size_t n)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n && !rc; i++)
		rc = db_prepare(&st[i], db, sql[i]);
	if (rc)
		db_finalize_all(st, n);
	return rc;
}

void db_finalize_all(sqlite3_stmt **st, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		sqlite3_finalize(st[i]);
		st[i] = NULL;
	}
}

static int get_user_version(struct db *db, int *out)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db, "PRAGMA user_version");
	if (rc)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW)
		*out = sqlite3_column_int(st, 0);
	else
		rc = db_error(db, "reading schema version");
	sqlite3_finalize(st);
	return rc;
}

static int migrate(struct db *db)
{
	char pragma[64];
	int v = 0, rc;

	rc = get_user_version(db, &v);
	if (rc)
		return rc;
	if (v > (int)NMIGRATIONS)
		return pt_error_set(PT_EINVAL,
				    "database '%s' has schema %d, newer than "
				    "this patchtriage (%d)",
				    db->path, v, (int)NMIGRATIONS);
	for (; v < (int)NMIGRATIONS; v++) {
		rc = db_begin(db);
		if (rc)
			return rc;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
			 v + 1);
		rc = db_exec(db, migrations[v]);
		if (!rc)
			rc = db_exec(db, pragma);
		if (!rc)
			rc = db_commit(db);
		if (rc) {
			db_rollback(db);
			return pt_error_wrap(rc, "migrating to schema %d",
					     v + 1);
		}
	}
	return 0;
}

int db_open(struct db **out, const char *path)
{
	struct db *db;
	int rc;

	*out = NULL;
	db = pt_calloc(1, sizeof(*db));
	if (!db)
		return PT_ENOMEM;
	db->path = pt_strdup(path);
	if (!db->path) {
		free(db);
		return PT_ENOMEM;
	}
	if (sqlite3_open_v2(path, &db->h,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		rc = pt_error_set(PT_EIO, "cannot open database '%s': %s",
				  path,
				  db->h ? sqlite3_errmsg(db->h) : "no memory");
		goto fail;
	}
	sqlite3_busy_timeout(db->h, 10000);
	rc = db_exec(db, "PRAGMA journal_mode = WAL");
	if (!rc)
		rc = db_exec(db, "PRAGMA foreign_keys = ON");
	if (!rc)
		rc = db_exec(db, "PRAGMA synchronous = NORMAL");
	if (!rc)
		rc = migrate(db);
	if (rc)
		goto fail;
	*out = db;
	return 0;
fail:
	db_close(db);
	return rc;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	if (db->h)
		sqlite3_close_v2(db->h);
	free(db->path);
	free(db);
}

int db_kv_get(struct db *db, const char *key, char **out)
{
	sqlite3_stmt *st;
	int rc;

	*out = NULL;
	rc = db_prepare(&st, db, "SELECT value FROM kv WHERE key = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = pt_strdup((const char *)sqlite3_column_text(st, 0));
		rc = *out ? 0 : PT_ENOMEM;
	} else if (rc == SQLITE_DONE) {
		rc = PT_ENOTFOUND;
	} else {
		rc = db_error(db, "reading state");
	}
	sqlite3_finalize(st);
	return rc;
}

int db_kv_set(struct db *db, const char *key, const char *value)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"INSERT INTO kv (key, value) VALUES (?, ?) "
			"ON CONFLICT(key) DO UPDATE SET value = excluded.value");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(db, "saving state");
	sqlite3_finalize(st);
	return rc;
}
