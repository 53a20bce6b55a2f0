/*
 * test_db.c - the state database: WAL, migrations per owner, the
 * key/value table, refusing a database from a newer patchtriage,
 * atomicity of a failed transaction, and the schema itself: a fresh
 * database opened with every owner is byte for byte the schema 13 of
 * tests/data/db/schema-13.sql (schema 12, the `.schema` of a state
 * database made by the binary before the tables moved to their modules,
 * and tags.mainline) beside the runner's schema_versions; such a database opens with its rows and
 * gains schema_versions; the scoring owners alone make the scoring
 * subset, and the bot's tables follow when the bot opens that file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bot/cmd/schema.h"
#include "scoring/model/schema.h"
#include "scoring/store/db.h"
#include "dbq.h"
#include "tmpdir.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof(dir), "db"))
		return -1;
	snprintf(path, sizeof(path), "%s/state.db", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static void test_open_migrates_and_wal(void **state)
{
	struct db *db;
	sqlite3_stmt *st;

	(void)state;
	assert_int_equal(db_open(&db, path, &bot_db_owners), 0);
	assert_int_equal(dbq_int(db, "PRAGMA user_version"),
			 db_schema_version());
	assert_int_equal(db_prepare(&st, db, "PRAGMA journal_mode"), 0);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	db_close(db);
	/* reopening does not run migrations again (would fail: table exists) */
	assert_int_equal(db_open(&db, path, &bot_db_owners), 0);
	db_close(db);
}

static void test_kv(void **state)
{
	struct db *db;
	char *v;

	(void)state;
	assert_int_equal(db_open(&db, path, &bot_db_owners), 0);
	assert_int_equal(db_kv_get(db, "pos", &v), PT_ENOTFOUND);
	assert_null(v);
	assert_int_equal(db_kv_set(db, "pos", "17"), 0);
	assert_int_equal(db_kv_set(db, "pos", "18"), 0);
	assert_int_equal(db_kv_get(db, "pos", &v), 0);
	assert_string_equal(v, "18");
	free(v);
	db_close(db);
}

static void test_newer_schema_refused(void **state)
{
	struct db *db;
	char sql[64];

	(void)state;
	assert_int_equal(db_open(&db, path, &bot_db_owners), 0);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		 db_schema_version() + 5);
	assert_int_equal(db_exec(db, sql), 0);
	db_close(db);
	assert_int_equal(db_open(&db, path, &bot_db_owners), PT_EINVAL);
	assert_null(db);
	assert_non_null(strstr(pt_error_last(), "newer than"));
	assert_non_null(strstr(pt_error_last(), path));
}

static void test_rollback_keeps_old_value(void **state)
{
	struct db *db;
	char *v;

	(void)state;
	assert_int_equal(db_open(&db, path, &bot_db_owners), 0);
	assert_int_equal(db_kv_set(db, "k", "old"), 0);
	assert_int_equal(db_begin(db), 0);
	assert_int_equal(db_kv_set(db, "k", "new"), 0);
	db_rollback(db);
	assert_int_equal(db_kv_get(db, "k", &v), 0);
	assert_string_equal(v, "old");
	free(v);
	assert_int_equal(db_exec(db, "SELECT * FROM no_such_table"), PT_EIO);
	assert_non_null(strstr(pt_error_last(), "no_such_table"));
	db_close(db);
}

static void test_unopenable_path(void **state)
{
	struct db *db;

	(void)state;
	assert_int_equal(db_open(&db, "/nonexistent-dir/x/state.db",
				 &bot_db_owners),
			 PT_EIO);
	assert_null(db);
	assert_non_null(strstr(pt_error_last(), "/nonexistent-dir/x/state.db"));
}

/*
 * The schema as `sqlite3 DB .schema` prints it: creation order; but for
 * the runner's own schema_versions, which schema 12 predates.
 */
static void schema_text(struct buf *out, sqlite3 *h)
{
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_prepare_v2(h,
					    "SELECT sql FROM sqlite_master"
					    " WHERE sql IS NOT NULL"
					    " AND name != 'schema_versions'"
					    " ORDER BY rowid",
					    -1, &st, NULL),
			 SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		assert_int_equal(buf_addf(out, "%s;\n",
					  sqlite3_column_text(st, 0)),
				 0);
	sqlite3_finalize(st);
}

/* tests/data/db/schema-N.sql: 12 as the binary before the owners left
 * it, 13 with tags.mainline and the bot's later tables and columns (the
 * newest, what a fresh file has) */
static void read_schema(struct buf *out, int n)
{
	const char *src = getenv("PT_SOURCE_DIR");
	struct buf p = BUF_INIT;

	assert_non_null(src);
	assert_int_equal(buf_addf(&p, "%s/tests/data/db/schema-%d.sql", src, n),
			 0);
	assert_int_equal(pt_read_file(out, p.ptr, 0), 0);
	buf_free(&p);
}

static void test_fresh_schema_is_schema_13(void **state)
{
	struct buf want = BUF_INIT, got = BUF_INIT;
	struct db *db;

	(void)state;
	read_schema(&want, 13);
	assert_int_equal(db_open(&db, path, &bot_db_owners), 0);
	schema_text(&got, db->h);
	assert_string_equal(got.ptr, want.ptr);
	assert_int_equal(dbq_int(db, "PRAGMA user_version"), 12);
	db_close(db);
	buf_free(&want);
	buf_free(&got);
}

/* A file of schema 12 as the previous binary left it, then rows. */
static void make_schema_12(const char *rows)
{
	struct buf old = BUF_INIT;
	sqlite3 *h;

	read_schema(&old, 12);
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, old.ptr, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "PRAGMA user_version = 12;", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, rows, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	buf_free(&old);
}

/*
 * A state database of schema 12 made outside db_open() (as the previous
 * binary left it, with rows of the store, the bot and the history)
 * opens with its rows, user_version kept, tags gaining mainline.
 */
static void test_schema_12_database_opens(void **state)
{
	struct buf want = BUF_INIT, got = BUF_INIT;
	struct db *db;
	char *v;

	(void)state;
	read_schema(&want, 13);
	make_schema_12("INSERT INTO kv VALUES ('run/last-pass',"
		       " '1700000000');"
		       "INSERT INTO work_queue (kind, key,"
		       " created, updated) VALUES"
		       " ('pw-series', '7', 1, 1);"
		       "INSERT INTO pw_positions VALUES"
		       " ('http://pw', 'linux', 42, 'd', 1);"
		       "INSERT INTO repos (id, path) VALUES"
		       " (1, '/r');"
		       "INSERT INTO commits (repo_id, sha, seq,"
		       " nparents) VALUES (1, 'abc', 1, 1);");

	assert_int_equal(db_open(&db, path, &bot_db_owners), 0);
	assert_int_equal(dbq_int(db, "PRAGMA user_version"), 12);
	schema_text(&got, db->h);
	assert_string_equal(got.ptr, want.ptr);
	assert_int_equal(db_kv_get(db, "run/last-pass", &v), 0);
	assert_string_equal(v, "1700000000");
	free(v);
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM work_queue"
				     " WHERE state = 'pending'"),
			 1);
	assert_int_equal(dbq_int(db, "SELECT last_id FROM pw_positions"), 42);
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM commits"), 1);
	db_close(db);
	buf_free(&want);
	buf_free(&got);
}

static int owner_version(struct db *db, const char *owner)
{
	sqlite3_stmt *st;
	int v = -1;

	assert_int_equal(db_prepare(&st, db,
				    "SELECT version FROM schema_versions"
				    " WHERE owner = ?"),
			 0);
	sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Every owner at its latest step, and the user_version found first. */
static void assert_versions(struct db *db, int base, int bot)
{
	assert_int_equal(owner_version(db, "user_version"), base);
	assert_int_equal(owner_version(db, "scoring/store"), 1);
	assert_int_equal(owner_version(db, "scoring/history"), 13);
	assert_int_equal(owner_version(db, "scoring/lists"), 20);
	assert_int_equal(owner_version(db, "scoring/model"), 12);
	assert_int_equal(owner_version(db, "bot/outbox"), bot ? 17 : -1);
	assert_int_equal(owner_version(db, "bot/patchwork"), bot ? 15 : -1);
	assert_int_equal(owner_version(db, "bot/mail"), bot ? 3 : -1);
}

/* The bot's own tables and their indexes, as schema 12 names them. */
static int bot_line(const char *line, size_t len)
{
	static const char *const bot[] = {
		"TABLE work_queue ",	   "ON work_queue ",
		"TABLE outbox ",	   "ON outbox ",
		"TABLE imap_folders ",	   "TABLE pw_positions ",
		"TABLE pw_events_seen ",   "TABLE pw_events_held ",
		"TABLE control_commands ", "ON control_commands ",
	};
	size_t i;

	for (i = 0; i < sizeof(bot) / sizeof(bot[0]); i++)
		if (memmem(line, len, bot[i], strlen(bot[i])))
			return 1;
	return 0;
}

/* The newest schema without the bot's tables, in its order. */
static void scoring_schema(struct buf *out)
{
	struct buf all = BUF_INIT;
	const char *p, *nl;

	read_schema(&all, 13);
	for (p = all.ptr; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		assert_non_null(nl);
		if (!bot_line(p, (size_t)(nl - p) + 1))
			assert_int_equal(buf_add(out, p, (size_t)(nl - p) + 1),
					 0);
	}
	buf_free(&all);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The schema's statements sorted, as one text: what, not where. */
static void sorted_lines(struct buf *out, const struct buf *in)
{
	char *copy = strdup(in->ptr), *save = NULL, *line;
	char *v[128];
	size_t n = 0, i;

	assert_non_null(copy);
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		assert_true(n < sizeof(v) / sizeof(v[0]));
		v[n++] = line;
	}
	qsort(v, n, sizeof(v[0]), cmp_line);
	for (i = 0; i < n; i++)
		assert_int_equal(buf_addf(out, "%s\n", v[i]), 0);
	free(copy);
}

/* A program that links only libpt_scoring.a gets the scoring tables. */
static void test_scoring_owners_alone(void **state)
{
	struct buf want = BUF_INIT, got = BUF_INIT;
	struct db *db;

	(void)state;
	scoring_schema(&want);
	assert_int_equal(db_open(&db, path, &scoring_db_owners), 0);
	schema_text(&got, db->h);
	assert_string_equal(got.ptr, want.ptr);
	assert_int_equal(dbq_int(db, "PRAGMA user_version"), 12);
	assert_versions(db, 0, 0);
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM sqlite_master"
				     " WHERE name = 'work_queue'"),
			 0);
	db_close(db);
	buf_free(&want);
	buf_free(&got);
}

/* ... and the bot, opening that file later, adds its own. */
static void test_scoring_file_gains_bot_tables(void **state)
{
	struct buf want = BUF_INIT, got = BUF_INIT, text = BUF_INIT;
	struct buf all = BUF_INIT;
	struct db *db;

	(void)state;
	assert_int_equal(db_open(&db, path, &scoring_db_owners), 0);
	assert_int_equal(db_exec(db, "INSERT INTO repos (id, path) VALUES"
				     " (1, '/r');"
				     "INSERT INTO commits (repo_id, sha, seq,"
				     " nparents) VALUES (1, 'abc', 1, 1);"),
			 0);
	db_close(db);
	assert_int_equal(db_open(&db, path, &bot_db_owners), 0);
	read_schema(&all, 13);
	sorted_lines(&want, &all);
	schema_text(&text, db->h);
	sorted_lines(&got, &text);
	assert_string_equal(got.ptr, want.ptr);
	assert_versions(db, 0, 1);
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM commits"), 1);
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM work_queue"), 0);
	db_close(db);
	buf_free(&want);
	buf_free(&got);
	buf_free(&text);
	buf_free(&all);
}

/*
 * A schema 12 database without schema_versions: opened by the scoring
 * owners, then by the bot's, nothing is made again or lost; it gains
 * schema_versions, every owner at its latest, and history's step 13.
 */
/* in without the lines that hold needle (tables added after 12). */
static void without_lines(struct buf *out, const char *in, const char *needle)
{
	const char *nl;

	for (; *in; in = nl + 1) {
		nl = strchr(in, '\n');
		assert_non_null(nl);
		if (!memmem(in, (size_t)(nl - in), needle, strlen(needle)))
			assert_int_equal(buf_add(out, in,
						 (size_t)(nl - in + 1)),
					 0);
	}
}

/* Append the lines of in that hold needle. */
static void only_lines(struct buf *out, const char *in, const char *needle)
{
	const char *nl;

	for (; *in; in = nl + 1) {
		nl = strchr(in, '\n');
		assert_non_null(nl);
		if (memmem(in, (size_t)(nl - in), needle, strlen(needle)))
			assert_int_equal(buf_add(out, in,
						 (size_t)(nl - in + 1)),
					 0);
	}
}

static void test_schema_12_gains_versions(void **state)
{
	static const char *const newer[] = {
		"TABLE pw_events_held ", "control_commands ",
		"TABLE outbox ", /* its hold columns: bot/outbox step 16 */
	};
	struct buf want = BUF_INIT, got = BUF_INIT, scoring = BUF_INIT;
	struct buf tmp = BUF_INIT;
	struct db *db;
	size_t i;

	(void)state;
	read_schema(&want, 13);
	/* the bot's tables and columns newer than schema 12 come with the
	 * bot: the scoring owners leave them as schema 12 had them */
	assert_int_equal(buf_addstr(&scoring, want.ptr), 0);
	for (i = 0; i < sizeof(newer) / sizeof(newer[0]); i++) {
		buf_reset(&tmp);
		without_lines(&tmp, scoring.ptr, newer[i]);
		buf_reset(&scoring);
		assert_int_equal(buf_addstr(&scoring, tmp.ptr), 0);
	}
	make_schema_12("INSERT INTO outbox (kind, dedupe_key,"
		       " target, payload, created, updated)"
		       " VALUES ('reply', 'k', 't', 'p', 1, 1);");

	assert_int_equal(db_open(&db, path, &scoring_db_owners), 0);
	schema_text(&got, db->h);
	buf_reset(&tmp);
	without_lines(&tmp, got.ptr, "TABLE outbox ");
	assert_string_equal(tmp.ptr, scoring.ptr);
	assert_versions(db, 12, 0);
	db_close(db);
	buf_reset(&got);
	assert_int_equal(db_open(&db, path, &bot_db_owners), 0);
	schema_text(&got, db->h);
	/* the bot's newer tables come after every scoring step, the
	 * scoring owners having run theirs first */
	buf_reset(&tmp);
	without_lines(&tmp, want.ptr, "TABLE pw_events_held ");
	buf_reset(&scoring);
	without_lines(&scoring, tmp.ptr, "control_commands ");
	only_lines(&scoring, want.ptr, "TABLE pw_events_held ");
	only_lines(&scoring, want.ptr, "control_commands ");
	assert_string_equal(got.ptr, scoring.ptr);
	buf_free(&scoring);
	buf_free(&tmp);
	assert_versions(db, 12, 1);
	assert_int_equal(dbq_int(db, "PRAGMA user_version"), 12);
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM outbox"), 1);
	db_close(db);
	buf_free(&want);
	buf_free(&got);
}

/* An owner's version above this build's steps is a newer patchtriage. */
static void test_newer_owner_refused(void **state)
{
	struct db *db;

	(void)state;
	assert_int_equal(db_open(&db, path, &bot_db_owners), 0);
	assert_int_equal(db_exec(db, "UPDATE schema_versions SET version = 40"
				     " WHERE owner = 'scoring/lists'"),
			 0);
	db_close(db);
	assert_int_equal(db_open(&db, path, &scoring_db_owners), PT_EINVAL);
	assert_null(db);
	assert_non_null(strstr(pt_error_last(), "scoring/lists schema 40"));
	assert_non_null(strstr(pt_error_last(), "newer than"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_migrates_and_wal,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_keeps_old_value,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unopenable_path, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fresh_schema_is_schema_13,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_12_database_opens,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_scoring_owners_alone,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_scoring_file_gains_bot_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_12_gains_versions,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_owner_refused, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
