/*
 * schema.c - the tables scoring/lists owns: the threading of thread.c
 * (series, series_versions, patches, messages, message_refs, replies,
 * mail_reviews), the raw patch mails of lookup.c (mail_raw), the archive
 * import of archive.c (archive_sources, archive_skips) and the outcomes
 * of outcome.c (list_posts, list_asks, list_fixrefs, list_notices,
 * posting_outcomes (with who applied it, where and the commit id),
 * posting_labels, and list_maintainers, who may say "applied" with
 * authority).  scoring/model reads several.
 */
#include "scoring/lists/schema.h"

static const struct db_step lists_steps[] = {
	/* 3: mail threading: series, versions, patches, messages, replies, review acts */
	{ 3,
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
	  "CREATE INDEX mail_reviews_series ON mail_reviews (series_id);" },
	/* 6: list archives and the outcome of each posting */
	{ 6,
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
	  " trivial_only INTEGER NOT NULL, how TEXT, commit_bug INTEGER);" },
	/* 7: the raw patch mails the bot scores from */
	{ 7, "CREATE TABLE mail_raw ("
	     " message_id TEXT PRIMARY KEY, raw BLOB NOT NULL,"
	     " received INTEGER NOT NULL);" },
	/* 14: who applies patches by the configured MAINTAINERS (M:) */
	{ 14, "CREATE TABLE list_maintainers ("
	      " email TEXT PRIMARY KEY, source TEXT NOT NULL);" },
	/* 18: the as-of lookups of listfeat.c (an author's, a reviewer's
	   and an applier's earlier acts) without scanning the tables */
	{ 18, "CREATE INDEX patches_author ON patches (author_email, date);"
	      "CREATE INDEX mail_reviews_email ON mail_reviews (email, date);"
	      "CREATE INDEX list_notices_who ON list_notices (lower(who),"
	      " date);" },
	/* 19: what a reply quotes, and the machines its tested claim names */
	{ 19, "ALTER TABLE replies ADD COLUMN quoted_lines INTEGER NOT NULL"
	      " DEFAULT 0;"
	      "ALTER TABLE replies ADD COLUMN tested_scale INTEGER NOT NULL"
	      " DEFAULT 0;" },
	/* 20: who applied a posting and where (the notice's sender, or the
	 * committer a patchwork-bot notice names; the tree and branch it
	 * names), the posting a patchwork-bot digest names (target), and
	 * the applied commit ids for the prefix lookup */
	{ 20, "ALTER TABLE list_notices ADD COLUMN tree TEXT;"
	      "ALTER TABLE list_notices ADD COLUMN target TEXT;"
	      "ALTER TABLE posting_outcomes ADD COLUMN applied_by TEXT;"
	      "ALTER TABLE posting_outcomes ADD COLUMN applied_tree TEXT;"
	      "ALTER TABLE posting_outcomes ADD COLUMN applied_branch TEXT;"
	      "CREATE INDEX posting_outcomes_sha ON posting_outcomes"
	      " (commit_sha);" },
};

const struct db_schema lists_schema = {
	"scoring/lists",
	lists_steps,
	sizeof(lists_steps) / sizeof(lists_steps[0]),
};
