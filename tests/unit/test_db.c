/*
 * test_db.c - the state database: WAL, migrations by user_version, the
 * key/value table, refusing a database from a newer patchtriage, and
 * atomicity of a failed transaction.
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

#include "scoring/store/db.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s", "/tmp/pt-db-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/state.db", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[160];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int scalar_int(struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	int v = -1;

	assert_int_equal(db_prepare(&st, db, sql), 0);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void test_open_migrates_and_wal(void **state)
{
	struct db *db;
	sqlite3_stmt *st;

	(void)state;
	assert_int_equal(db_open(&db, path), 0);
	assert_int_equal(scalar_int(db, "PRAGMA user_version"),
			 db_schema_version());
	assert_int_equal(db_prepare(&st, db, "PRAGMA journal_mode"), 0);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	db_close(db);
	/* reopening does not run migrations again (would fail: table exists) */
	assert_int_equal(db_open(&db, path), 0);
	db_close(db);
}

static void test_kv(void **state)
{
	struct db *db;
	char *v;

	(void)state;
	assert_int_equal(db_open(&db, path), 0);
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
	assert_int_equal(db_open(&db, path), 0);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		 db_schema_version() + 5);
	assert_int_equal(db_exec(db, sql), 0);
	db_close(db);
	assert_int_equal(db_open(&db, path), PT_EINVAL);
	assert_null(db);
	assert_non_null(strstr(pt_error_last(), "newer than"));
	assert_non_null(strstr(pt_error_last(), path));
}

static void test_rollback_keeps_old_value(void **state)
{
	struct db *db;
	char *v;

	(void)state;
	assert_int_equal(db_open(&db, path), 0);
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
	assert_int_equal(db_open(&db, "/nonexistent-dir/x/state.db"), PT_EIO);
	assert_null(db);
	assert_non_null(strstr(pt_error_last(), "/nonexistent-dir/x/state.db"));
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
