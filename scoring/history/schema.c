/*
 * schema.c - the tables scoring/history owns: what mine writes
 * (repos, people, commits, commit_files, trailers, tags), the labels of
 * labels.c (fix_refs, labels) and the history features and review
 * records of histfeat.c (features, reviews), with the indexes that
 * scoring/model's lookups of them need.  scoring/lists and scoring/model
 * read them.
 */
#include "scoring/history/schema.h"

static const struct db_step history_steps[] = {
	/* 4: mined git history: commits, files, trailers, tags, labels, features */
	{ 4,
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
	  "CREATE INDEX reviews_person ON reviews (person_id);" },
	/* 8: an author's earlier commits, for a mail */
	{ 8, "CREATE INDEX commits_author ON commits (author_id, repo_id,"
	     " commit_date);" },
	/* 9: a file's earlier changes, for a mail */
	{ 9, "CREATE INDEX commit_files_path ON commit_files (path);" },
	/* 10: past bugs of the files, author, component */
	{ 10, "ALTER TABLE features ADD COLUMN file_bugs INTEGER;"
	      "ALTER TABLE features ADD COLUMN file_fixes INTEGER;"
	      "ALTER TABLE features ADD COLUMN author_bugs INTEGER;"
	      "ALTER TABLE features ADD COLUMN comp_changes INTEGER;"
	      "ALTER TABLE features ADD COLUMN comp_bugs INTEGER;" },
	/* 11: releases by date, for the as-of summaries */
	{ 11, "CREATE INDEX tags_date ON tags (repo_id, date, ord);" },
	/* 13: cycle.c - mainline release tags vs stable ones */
	{ 13,
	  "ALTER TABLE tags ADD COLUMN mainline INTEGER NOT NULL DEFAULT 1;" },
};

const struct db_schema history_schema = {
	"scoring/history",
	history_steps,
	sizeof(history_steps) / sizeof(history_steps[0]),
};
