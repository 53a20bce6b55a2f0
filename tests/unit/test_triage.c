/*
 * test_triage.c - scoring a mail with models trained on a generated
 * kernel-like history (tests/lib/trained.sh): probabilities in [0, 1],
 * a fix mail ranked above a feature mail for p(fix), reasons in words,
 * version ids, and a clear error where no model was trained.
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

#include "scoring/model/triage.h"
#include "scoring/model/schema.h"

static char dir[64];
static char state[128];

static const char fix_mail[] =
	"From: Ada Lovelace <ada@example.net>\n"
	"Subject: [PATCH net] foo: fix NULL pointer dereference in "
	"foo_xmit()\n"
	"Date: Tue, 10 Nov 2026 10:00:00 +0000\n"
	"Message-ID: <fix-1@example.net>\n\n"
	"foo_xmit() dereferences the skb returned by foo_build() without\n"
	"checking it. Under memory pressure this causes a kernel panic:\n\n"
	"  BUG: kernel NULL pointer dereference, address: 0000000000000010\n"
	"\nReported-by: syzbot+0123456789@syzkaller.appspotmail.com\n"
	"Signed-off-by: Ada Lovelace <ada@example.net>\n---\n"
	"diff --git a/drivers/net/foo/core.c b/drivers/net/foo/core.c\n"
	"--- a/drivers/net/foo/core.c\n+++ b/drivers/net/foo/core.c\n"
	"@@ -10,3 +10,5 @@ static int foo_probe(struct device *dev)\n"
	" \tskb = foo_build(priv, len);\n"
	"+\tif (!priv)\n+\t\treturn -ENOMEM;\n"
	" \n \treturn foo_queue(priv, skb);\n";

static const char feature_mail[] =
	"From: Ken Thompson <ken@example.com>\n"
	"Subject: [PATCH net-next] foo: rework queue handling\n"
	"Date: Tue, 10 Nov 2026 11:00:00 +0000\n"
	"Message-ID: <feat-1@example.com>\n\n"
	"This reworks queue handling so that later changes can build on it.\n"
	"No functional change intended for existing users.\n\n"
	"Signed-off-by: Ken Thompson <ken@example.com>\n---\n"
	"diff --git a/drivers/net/foo/main.c b/drivers/net/foo/main.c\n"
	"--- a/drivers/net/foo/main.c\n+++ b/drivers/net/foo/main.c\n"
	"@@ -20,2 +20,8 @@ static int foo_open(struct device *dev)\n"
	" \tret = foo_xmit(priv, 3);\n"
	"+\tret = ring_alloc(priv, 12);\n+\tret = bar_config(priv, 4);\n"
	"+\tspin_lock(&priv->lock);\n+\tval += 3;\n"
	"+\tspin_unlock(&priv->lock);\n+\tret = sched_tick(priv, 9);\n"
	" \treturn ret;\n";

static int setup(void **st)
{
	char cmd[512];
	const char *src = getenv("PT_SOURCE_DIR");

	(void)st;
	if (!src || !getenv("PT_BIN") || access("/usr/bin/python3", X_OK))
		return -1;
	snprintf(dir, sizeof(dir), "%s", "/tmp/pt-triage-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(cmd, sizeof(cmd), "bash '%s/tests/lib/trained.sh' '%s'", src,
		 dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **st)
{
	char cmd[160];

	(void)st;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void score(struct triage *t, const char *mail, struct triage_result *r)
{
	struct patch *p = NULL;

	assert_int_equal(patch_from_mail(&p, mail, strlen(mail)), 0);
	assert_int_equal(triage_score(r, t, p, NULL), 0);
	patch_free(p);
}

static void test_fix_ranks_above_feature(void **st)
{
	struct triage_result fix, feat;
	struct triage *t;
	struct db *db;
	char path[160];

	(void)st;
	snprintf(path, sizeof(path), "%s/state.db", state);
	assert_int_equal(db_open(&db, path, &scoring_db_owners), 0);
	assert_int_equal(triage_open(&t, db, state), 0);
	assert_non_null(strstr(triage_version(t), "fix fix-"));
	assert_non_null(strstr(triage_version(t), "risk risk-"));
	score(t, fix_mail, &fix);
	score(t, feature_mail, &feat);
	assert_true(fix.task[TRIAGE_FIX].have && fix.task[TRIAGE_RISK].have);
	assert_true(fix.task[TRIAGE_FIX].p >= 0 && fix.task[TRIAGE_FIX].p <= 1);
	assert_true(feat.task[TRIAGE_RISK].p >= 0 &&
		    feat.task[TRIAGE_RISK].p <= 1);
	assert_true(fix.task[TRIAGE_FIX].p > feat.task[TRIAGE_FIX].p + 0.2);
	assert_true(fix.task[TRIAGE_FIX].nwhy > 0);
	assert_true(strlen(triage_top_reason(&fix, TRIAGE_FIX)) > 0);
	assert_string_equal(fix.task[TRIAGE_FIX].version,
			    triage_task_version(t, TRIAGE_FIX));
	triage_result_clear(&fix);
	triage_result_clear(&feat);
	triage_free(t);
	db_close(db);
}

static void test_no_model(void **st)
{
	struct triage *t;
	char empty[160];

	(void)st;
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	assert_int_equal(triage_open(&t, NULL, empty), PT_ENOTFOUND);
	assert_null(t);
	assert_non_null(strstr(pt_error_last(), "patchtriage train"));
	assert_non_null(strstr(pt_error_last(), empty));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fix_ranks_above_feature),
		cmocka_unit_test(test_no_model),
	};

	if (access("/usr/bin/python3", X_OK) || !getenv("PT_BIN"))
		return 77;
	return cmocka_run_group_tests(tests, setup, teardown);
}
