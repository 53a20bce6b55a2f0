/*
 * test_reply_policy.c - what bot/outbox/policy.c lets through, seen at
 * a real SMTP sink (the fixture is tests/lib/replyfx.c): opt-in,
 * actions, thresholds, the rate limit per kind, dry runs (rate limited
 * as real ones), and the stable note only for a fix without "Cc:
 * stable".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "replyfx.h"

/* ---- 4. policy -------------------------------------------------------- */

static void expect_status(const char *eml, const char *kind, double prob,
			  enum reply_status want)
{
	struct patch *p = rfx_load(eml);
	struct reply_in in = rfx_risk_in(prob);
	struct reply_out out;
	struct smtp_opts o;

	in.kind = kind;
	rfx_smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	if (out.status != want)
		fail_msg("%s %s: %s, wanted %s", eml, kind,
			 reply_status_name(out.status),
			 reply_status_name(want));
	reply_out_clear(&out);
	smtp_opts_clear(&o);
	patch_free(p);
}

static void test_policy_opt_in_action_threshold(void **state)
{
	(void)state;
	/* no section covers fs/xfs; ext4's section has no actions */
	expect_status("xfs.eml", "risk", 0.99, REPLY_NOT_OPTED_IN);
	expect_status("ext4.eml", "risk", 0.99, REPLY_NOT_OPTED_IN);
	/* gpio opted in for checks only */
	expect_status("gpio.eml", "risk", 0.99, REPLY_ACTION_OFF);
	/* under acme's 30% */
	expect_status("acme-v2-2.eml", "risk", 0.29, REPLY_BELOW_THRESHOLD);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	assert_int_equal(rfx_outbox_rows(), 0);
}

static void test_policy_rate_limit(void **state)
{
	struct outbox_row row;
	struct buf id = BUF_INIT;
	char *msg, *env, *from, *rcpts;

	(void)state;
	expect_status("pwm-1.eml", "risk", 0.5, REPLY_SENT);
	expect_status("pwm-2.eml", "risk", 0.5, REPLY_RATE_LIMITED);
	/* the limit is per kind */
	expect_status("pwm-2.eml", "stable", 0.7, REPLY_SENT);
	expect_status("pwm-1.eml", "stable", 0.7, REPLY_RATE_LIMITED);
	assert_int_equal(smtpsim_count(&E.plain), 2);

	/* a limited reply is not recorded: it can go out next hour */
	assert_int_equal(reply_message_id(&id, "20261113-pwm-2@example.org",
					  MODEL, "risk", "pt.example"),
			 0);
	assert_int_equal(store_outbox_get(E.db, id.ptr, &row), PT_ENOTFOUND);
	pt_error_clear();

	/* the default recipients: author and list */
	assert_int_equal(smtpsim_message(&E.plain, 0, &msg, &env), 0);
	rcpts = rfx_env_rcpts(env, &from);
	assert_string_equal(rcpts, "linux-pwm@vger.kernel.org, "
				   "paul@example.org");
	free(rcpts);
	free(from);
	free(msg);
	free(env);
	buf_free(&id);
}

static void test_dry_run_sends_nothing(void **state)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct reply_out out;
	struct smtp_opts o;

	(void)state;
	rfx_smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 1), 0);
	assert_int_equal(out.status, REPLY_DRY_RUN);
	assert_non_null(
		strstr(out.message, "\r\nX-Patchwork-Hint: ignore\r\n"));
	reply_out_clear(&out);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	assert_int_equal(rfx_outbox_rows(), 0);
	smtp_opts_clear(&o);
	patch_free(p);
}

static enum reply_status dry_status(const char *eml, const char *kind)
{
	struct patch *p = rfx_load(eml);
	struct reply_in in = rfx_risk_in(0.7);
	struct reply_out out;
	struct smtp_opts o;
	enum reply_status st;

	in.kind = kind;
	rfx_smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 1), 0);
	st = out.status;
	reply_out_clear(&out);
	smtp_opts_clear(&o);
	patch_free(p);
	return st;
}

/*
 * A dry run is rate limited as the real run would be: by the replies
 * sent and by those it reported itself (kind "dry-reply-KIND", as
 * bot/loop/act.c keeps them).  pwm's limit is one an hour per kind.
 */
static void test_dry_run_rate_limited(void **state)
{
	int64_t id;

	(void)state;
	assert_int_equal(dry_status("pwm-1.eml", "risk"), REPLY_DRY_RUN);
	assert_int_equal(store_outbox_intend(E.db, "dry-reply-risk",
					     "<dry-1@example.org>", "pwm",
					     "dry-run", "x", &id),
			 0);
	assert_int_equal(store_outbox_set(E.db, id, OUTBOX_SENT, "dry-run",
					  NULL),
			 0);
	assert_int_equal(dry_status("pwm-2.eml", "risk"), REPLY_RATE_LIMITED);
	/* per kind, and a real reply sent counts too */
	expect_status("pwm-2.eml", "stable", 0.7, REPLY_SENT);
	assert_int_equal(dry_status("pwm-1.eml", "stable"), REPLY_RATE_LIMITED);
	assert_int_equal(smtpsim_count(&E.plain), 1);
}

/* Fixes: with an ordinary Cc: still lacks the stable tag. */
static void test_stable_note_only_without_cc_stable(void **state)
{
	char *msg, *env, *flat;

	(void)state;
	expect_status("pwm-fix-stable.eml", "stable", 0.9,
		      REPLY_BELOW_THRESHOLD);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	expect_status("pwm-fix-cc.eml", "stable", 0.9, REPLY_SENT);
	rfx_one_message(&E.plain, &msg, &env);
	flat = rfx_check_body(msg);
	assert_non_null(strstr(flat, "no \"Cc: stable@vger.kernel.org\" "
				     "tag."));
	assert_non_null(strstr(flat, "a 90% chance of being backported"));
	free(flat);
	free(msg);
	free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, rfx_setup, rfx_teardown)
		T(test_policy_opt_in_action_threshold),
		T(test_policy_rate_limit),
		T(test_dry_run_sends_nothing),
		T(test_dry_run_rate_limited),
		T(test_stable_note_only_without_cc_stable),
#undef T
	};

	return cmocka_run_group_tests(tests, rfx_group_setup,
				      rfx_group_teardown);
}
