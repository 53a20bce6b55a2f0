/*
 * test_act.c - the check side of bot/loop/act.c against the Patchwork
 * stand-in and a real SQLite state file: a check is posted once per
 * change of its text, a text seen before is posted again when it is not
 * the newest one (Patchwork shows the newest check of a context), and a
 * new state directory does not duplicate what the server already has
 * (its outbox row says 'skipped': found there, not sent).
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

#include "bot/loop/act.h"
#include "scoring/store/db.h"
#include "bot/patchwork/patchwork.h"
#include "bot/outbox/store.h"
#include "pwsim.h"
#include "bot/cmd/schema.h"

#define TOKEN "tok-bot-5f0e9c1d2a7b"
#define CTX "patchtriage-risk"

static struct pwsim sim;

static struct pw *client(void)
{
	struct pw *pw = pwsim_client(&sim, TOKEN, 0, 200);

	assert_non_null(pw);
	return pw;
}

/* The checks of a patch in one context, newest last: "state:desc" each. */
static size_t checks_of(struct pw *pw, int64_t patch, char *out, size_t len)
{
	struct pw_check *c;
	size_t n, i, k = 0;

	assert_int_equal(pw_checks_list(pw, patch, &c, &n), 0);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (strcmp(c[i].context, CTX))
			continue;
		snprintf(out + strlen(out), len - strlen(out), "%s%s:%s",
			 k++ ? " " : "", c[i].state,
			 c[i].description ? c[i].description : "");
	}
	pw_checks_free(c, n);
	return k;
}

static void open_act(struct act *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	assert_int_equal(db_open(&a->db, path, &bot_db_owners), 0);
	a->pw = client();
}

static void close_act(struct act *a)
{
	db_close(a->db);
	pw_free(a->pw);
}

static void check(struct act *a, int64_t patch, const char *state,
		  const char *desc)
{
	static struct policy_subsys s = { .name = "test" };

	assert_int_equal(act_check(a, &s, "test", patch, CTX, state, desc), 0);
}

/* The outbox state of revision rev of patch 3's check. */
static enum outbox_state row_state(struct act *a, long rev)
{
	struct outbox_row r;
	enum outbox_state st;
	char key[128];

	snprintf(key, sizeof(key), "check/test/3/%s/%ld", CTX, rev);
	assert_int_equal(store_outbox_get(a->db, key, &r), 0);
	st = r.state;
	outbox_row_clear(&r);
	return st;
}

static void test_check_texts(void **state)
{
	char dir[] = "/tmp/pt-act-XXXXXX", path[64], got[512];
	struct act a;
	int posts;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.db", dir);
	open_act(&a, path);
	posts = pwsim_count(&sim, "POST", "/patches/3/checks/");

	check(&a, 3, "warning", "p(bug) 0.41");
	check(&a, 3, "warning", "p(bug) 0.41"); /* unchanged: nothing */
	check(&a, 3, "success", "p(bug) 0.05");
	check(&a, 3, "warning", "p(bug) 0.41"); /* A, B, A: posted */
	assert_int_equal(checks_of(a.pw, 3, got, sizeof(got)), 3);
	assert_string_equal(got, "warning:p(bug) 0.41 success:p(bug) 0.05 "
				 "warning:p(bug) 0.41");
	assert_int_equal(a.st.checks_posted, 3);
	assert_int_equal(a.st.checks_unchanged, 1);
	assert_int_equal(a.st.checks_reconciled, 0);
	assert_int_equal(pwsim_count(&sim, "POST", "/patches/3/checks/") -
				 posts,
			 3);
	close_act(&a);

	/* a new state file: what the server shows already is not posted
	   again, an older text of the context is */
	unlink(path);
	open_act(&a, path);
	check(&a, 3, "warning", "p(bug) 0.41");
	assert_int_equal(a.st.checks_reconciled, 1);
	assert_int_equal(a.st.checks_posted, 0);
	/* found, not sent: `status` must not count it as sent */
	assert_int_equal(row_state(&a, 1), OUTBOX_SKIPPED);
	check(&a, 3, "success", "p(bug) 0.05");
	assert_int_equal(a.st.checks_posted, 1);
	assert_int_equal(row_state(&a, 2), OUTBOX_SENT);
	/* back to the first text: known history, posted (A, B, A) */
	check(&a, 3, "warning", "p(bug) 0.41");
	assert_int_equal(a.st.checks_posted, 2);
	assert_int_equal(row_state(&a, 3), OUTBOX_SENT);
	assert_int_equal(checks_of(a.pw, 3, got, sizeof(got)), 5);
	close_act(&a);
	unlink(path);
	snprintf(path, sizeof(path), "%s/state.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/state.db-shm", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_texts),
	};

	return PWSIM_MAIN(&sim, tests);
}
