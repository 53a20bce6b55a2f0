/*
 * test_store.c - the work queue (claim order, backoff, re-score while
 * running, crash recovery, errors cleared when done) and the outbox (dedupe keys, states, rate
 * counts), on a real SQLite file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bot/outbox/store.h"
#include "bot/loop/status.h"
#include "bot/cmd/schema.h"
#include "tmpdir.h"

static char dir[64];
static struct db *db;

static int setup(void **state)
{
	char path[128];

	(void)state;
	if (tmpdir_make(dir, sizeof(dir), "store"))
		return -1;
	snprintf(path, sizeof(path), "%s/state.db", dir);
	return db_open(&db, path, &bot_db_owners);
}

static int teardown(void **state)
{
	(void)state;
	db_close(db);
	return tmpdir_remove(dir);
}

static void test_queue_order_and_finish(void **state)
{
	struct store_item it;
	long pending, failed;

	(void)state;
	assert_int_equal(store_enqueue(db, "series", "netdev/1", "{}"), 0);
	assert_int_equal(store_enqueue(db, "series", "netdev/2", "{}"), 0);
	assert_int_equal(store_enqueue(db, "series", "netdev/1", "{\"v\":2}"),
			 0);
	assert_int_equal(store_queue_depth(db, &pending, &failed), 0);
	assert_int_equal(pending, 2);
	assert_int_equal(store_claim(db, time(NULL), &it), 0);
	assert_string_equal(it.key, "netdev/1");
	assert_string_equal(it.payload, "{\"v\":2}");
	/* when it was first queued, for how long a failing peer is waited */
	assert_true(it.created > 0 && it.created <= (int64_t)time(NULL));
	assert_int_equal(store_finish(db, it.id), 0);
	store_item_clear(&it);
	assert_int_equal(store_claim(db, time(NULL), &it), 0);
	assert_string_equal(it.key, "netdev/2");
	assert_int_equal(store_finish(db, it.id), 0);
	store_item_clear(&it);
	assert_int_equal(store_claim(db, time(NULL), &it), PT_ENOTFOUND);
}

static void test_rescore_while_running(void **state)
{
	struct store_item it, again;

	(void)state;
	assert_int_equal(store_enqueue(db, "series", "s", "a"), 0);
	assert_int_equal(store_claim(db, time(NULL), &it), 0);
	/* review arrives while it is being scored */
	assert_int_equal(store_enqueue(db, "series", "s", "b"), 0);
	assert_int_equal(store_claim(db, time(NULL), &again), PT_ENOTFOUND);
	assert_int_equal(store_finish(db, it.id), 0);
	assert_int_equal(store_claim(db, time(NULL), &again), 0);
	assert_string_equal(again.payload, "b");
	store_item_clear(&it);
	store_item_clear(&again);
}

static void test_backoff_and_give_up(void **state)
{
	struct store_item it;
	long pending, failed;
	int64_t now = time(NULL);

	(void)state;
	assert_int_equal(store_enqueue(db, "series", "x", NULL), 0);
	assert_int_equal(store_claim(db, now, &it), 0);
	assert_int_equal(store_retry(db, it.id, now + 60, "timeout", 2), 0);
	store_item_clear(&it);
	assert_int_equal(store_claim(db, now, &it), PT_ENOTFOUND);
	assert_int_equal(store_claim(db, now + 61, &it), 0);
	assert_int_equal(it.attempts, 1);
	assert_int_equal(store_retry(db, it.id, now + 120, "timeout", 2), 0);
	store_item_clear(&it);
	assert_int_equal(store_claim(db, now + 1000, &it), PT_ENOTFOUND);
	assert_int_equal(store_queue_depth(db, &pending, &failed), 0);
	assert_int_equal(pending, 0);
	assert_int_equal(failed, 1);
}

/*
 * An item due later (a series' wait): not claimed before, pending all
 * the while, moved by a later patch; re-queued while running, it runs
 * again when due, not at once.
 */
static void test_due_later(void **state)
{
	struct store_item it;
	int64_t now = time(NULL);
	int pending;

	(void)state;
	assert_int_equal(store_enqueue_at(db, "pw-wait", "n/1", NULL, now + 60),
			 0);
	assert_int_equal(store_pending(db, "pw-wait", "n/1", &pending), 0);
	assert_int_equal(pending, 1);
	assert_int_equal(store_pending(db, "pw-wait", "n/2", &pending), 0);
	assert_int_equal(pending, 0);
	assert_int_equal(store_claim(db, now + 59, &it), PT_ENOTFOUND);
	assert_int_equal(store_enqueue_at(db, "pw-wait", "n/1", NULL, now + 90),
			 0);
	assert_int_equal(store_claim(db, now + 60, &it), PT_ENOTFOUND);
	assert_int_equal(store_claim(db, now + 90, &it), 0);
	assert_int_equal(store_pending(db, "pw-wait", "n/1", &pending), 0);
	assert_int_equal(pending, 0); /* running */
	assert_int_equal(store_enqueue_at(db, "pw-wait", "n/1", "2", now + 200),
			 0);
	assert_int_equal(store_pending(db, "pw-wait", "n/1", &pending), 0);
	assert_int_equal(pending, 1); /* to run again */
	assert_int_equal(store_finish(db, it.id), 0);
	store_item_clear(&it);
	assert_int_equal(store_claim(db, now + 199, &it), PT_ENOTFOUND);
	assert_int_equal(store_claim(db, now + 200, &it), 0);
	assert_string_equal(it.payload, "2");
	assert_int_equal(store_finish(db, it.id), 0);
	store_item_clear(&it);
	assert_int_equal(store_pending(db, "pw-wait", "n/1", &pending), 0);
	assert_int_equal(pending, 0);
}

/* status lists a retried item's error only until the item is done */
static void test_error_gone_when_done(void **state)
{
	struct store_item it;
	int64_t now = time(NULL);
	json_t *st = NULL;

	(void)state;
	assert_int_equal(store_enqueue(db, "pw-series", "netdev/7", NULL), 0);
	assert_int_equal(store_claim(db, now, &it), 0);
	assert_int_equal(store_retry(db, it.id, now, "rate limited", 3), 0);
	store_item_clear(&it);
	assert_int_equal(status_collect(&st, db, dir), 0);
	assert_int_equal(json_array_size(json_object_get(st, "work_errors")),
			 1);
	json_decref(st);
	assert_int_equal(store_claim(db, now, &it), 0);
	assert_int_equal(store_finish(db, it.id), 0);
	store_item_clear(&it);
	assert_int_equal(status_collect(&st, db, dir), 0);
	assert_int_equal(json_array_size(json_object_get(st, "work_errors")),
			 0);
	json_decref(st);
}

static void test_recover_after_crash(void **state)
{
	struct store_item it;
	int n = -1;

	(void)state;
	assert_int_equal(store_enqueue(db, "series", "y", NULL), 0);
	assert_int_equal(store_claim(db, time(NULL), &it), 0);
	store_item_clear(&it);
	/* the process dies here; on restart: */
	assert_int_equal(store_recover(db, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_claim(db, time(NULL), &it), 0);
	assert_string_equal(it.key, "y");
	store_item_clear(&it);
}

static int collect(const struct outbox_row *r, void *ctx)
{
	int *n = ctx;

	assert_string_equal(r->kind, "check");
	(*n)++;
	return 0;
}

static void test_outbox_dedupe_and_states(void **state)
{
	struct outbox_row r;
	int64_t id, id2;
	long n;
	int seen = 0;

	(void)state;
	assert_int_equal(store_outbox_intend(db, "check",
					     "7/risk/success/p=0.1", "netdev",
					     "7", "{}", &id),
			 0);
	assert_true(id > 0);
	assert_int_equal(store_outbox_intend(db, "check",
					     "7/risk/success/p=0.1", "netdev",
					     "7", "{}", &id2),
			 PT_EEXISTS);
	assert_int_equal(id, id2);
	assert_int_equal(store_outbox_foreach(db, OUTBOX_INTENDED, collect,
					      &seen),
			 0);
	assert_int_equal(seen, 1);
	assert_int_equal(store_outbox_set(db, id, OUTBOX_SENDING, NULL, NULL),
			 0);
	assert_int_equal(store_outbox_set(db, id, OUTBOX_SENT, "/checks/3/",
					  NULL),
			 0);
	assert_int_equal(store_outbox_get(db, "7/risk/success/p=0.1", &r), 0);
	assert_int_equal(r.state, OUTBOX_SENT);
	assert_string_equal(r.remote_ref, "/checks/3/");
	outbox_row_clear(&r);
	assert_int_equal(store_outbox_count_since(db, "netdev", "check",
						  time(NULL) - 3600, &n),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_outbox_count_since(db, "other", "check", 0, &n),
			 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_outbox_set(db, 999, OUTBOX_SENT, NULL, NULL),
			 PT_ENOTFOUND);
	assert_int_equal(store_outbox_get(db, "nope", &r), PT_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_queue_order_and_finish,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rescore_while_running,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_and_give_up, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_due_later, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_error_gone_when_done,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_after_crash, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_outbox_dedupe_and_states,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
