/*
 * test_policy.c - the opt-in configuration (bot/outbox/policy.c): subsystem
 * sections read from a git-config file, thresholds that must be
 * probabilities, and matching a patch to a section by path glob.
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

#include "scoring/store/config.h"
#include "bot/outbox/policy.h"

/* policy_load over text written to a temporary file. */
static int load(const char *text, struct policy **out)
{
	char path[] = "/tmp/pt-policy-XXXXXX";
	struct config *cfg;
	int fd, rc;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(config_open(&cfg, path), 0);
	rc = policy_load(out, cfg);
	config_free(cfg);
	unlink(path);
	return rc;
}

static void test_load_and_match(void **state)
{
	static char file[] = "drivers/net/foo.c";
	struct patch_file f;
	struct patch pt;
	const struct policy_subsys *s;
	struct policy *p;

	(void)state;
	assert_int_equal(load("[subsystem \"netdev\"]\n"
			      "\tlist-id = netdev.vger.kernel.org\n"
			      "\tpaths = drivers/net/*, net/\n"
			      "\tactions = check reply\n"
			      "\trisk-threshold = 0.30\n",
			      &p),
			 0);
	assert_int_equal(p->n, 1);
	assert_string_equal(p->s[0].list_address, "netdev@vger.kernel.org");
	assert_string_equal(p->s[0].paths[1], "net/");
	assert_int_equal(p->s[0].actions, POLICY_CHECK | POLICY_REPLY);
	assert_true(p->s[0].risk_threshold == 0.30);
	assert_true(p->s[0].stable_threshold == 0.8);
	/* no recipients: none (the empty list was leaked before reply-to) */
	assert_null(p->s[0].recipients[0]);
	memset(&f, 0, sizeof(f));
	memset(&pt, 0, sizeof(pt));
	f.new_path = file;
	pt.files = &f;
	pt.nfiles = 1;
	assert_int_equal(policy_match(p, &pt, NULL, &s), 0);
	assert_ptr_equal(s, &p->s[0]);
	file[0] = 'x';
	assert_int_equal(policy_match(p, &pt, NULL, &s), PT_ENOTFOUND);
	policy_free(p);
	policy_free(NULL);
}

/*
 * Found by fuzz_config: "risk-threshold = nan" passed the range check
 * (every comparison with NaN is false) and made a threshold that no
 * estimate is above or below.
 */
static void test_threshold_not_a_probability(void **state)
{
	static const char *const bad[] = { "nan",  "-nan", "inf",
					   "-0.1", "1.5",  "0.5x" };
	char text[128];
	struct policy *p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		snprintf(text, sizeof(text),
			 "[subsystem \"n\"]\n"
			 "\tactions = check\n\trisk-threshold = %s\n",
			 bad[i]);
		assert_int_equal(load(text, &p), PT_EINVAL);
		assert_null(p);
		assert_non_null(strstr(pt_error_last(), "risk-threshold"));
	}
	assert_int_equal(load("[subsystem \"n\"]\n\tstable-threshold = NAN\n",
			      &p),
			 PT_EINVAL);
	assert_int_equal(load("[subsystem \"n\"]\n\trisk-threshold = 1\n"
			      "\tstable-threshold = 0\n\treply-to = author\n",
			      &p),
			 0);
	assert_string_equal(p->s[0].recipients[0], "author");
	policy_free(p);
}

/* reply-mode and embargo-hours: defaults, overrides, clear errors. */
static void test_hold_keys(void **state)
{
	struct policy *p;

	(void)state;
	assert_int_equal(load("[reply]\n\tmode = approve\n"
			      "\tembargo-hours = 6\n"
			      "[subsystem \"a\"]\n\tactions = reply\n"
			      "[subsystem \"b\"]\n\treply-mode = auto\n"
			      "\tembargo-hours = 0\n",
			      &p),
			 0);
	assert_int_equal(p->s[0].reply_mode, POLICY_APPROVE);
	assert_int_equal(p->s[0].embargo_hours, 6);
	assert_int_equal(p->s[1].reply_mode, POLICY_AUTO);
	assert_int_equal(p->s[1].embargo_hours, 0);
	policy_free(p);
	assert_int_equal(load("[subsystem \"a\"]\n\treply-mode = later\n", &p),
			 PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "subsystem.a.reply-mode"));
	assert_non_null(strstr(pt_error_last(), "'later'"));
	assert_int_equal(load("[reply]\n\tmode = yes\n[subsystem \"a\"]\n", &p),
			 PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "reply.mode"));
	assert_int_equal(load("[subsystem \"a\"]\n\tembargo-hours = 721\n", &p),
			 PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "embargo-hours"));
	assert_int_equal(load("[subsystem \"a\"]\n\tembargo-hours = -1\n", &p),
			 PT_EINVAL);
}

/* The section's hash: the same values give it, any change moves it. */
static void test_conf_hash(void **state)
{
	static const char *const base = "[subsystem \"a\"]\n"
					"\tactions = reply\n"
					"\tpaths = drivers/pwm/*\n";
	char text[256], h0[17];
	struct policy *p;

	(void)state;
	assert_int_equal(load(base, &p), 0);
	memcpy(h0, p->s[0].conf_hash, sizeof(h0));
	assert_int_equal(strlen(h0), 16);
	policy_free(p);
	/* the same values, another order and a comment: the same hash */
	assert_int_equal(load("# pwm\n[subsystem \"a\"]\n"
			      "\tpaths = drivers/pwm/*\n"
			      "\tactions = reply\n",
			      &p),
			 0);
	assert_string_equal(p->s[0].conf_hash, h0);
	policy_free(p);
	snprintf(text, sizeof(text), "%s\trate-limit = 9\n", base);
	assert_int_equal(load(text, &p), 0);
	assert_string_not_equal(p->s[0].conf_hash, h0);
	policy_free(p);
	snprintf(text, sizeof(text), "%s\tembargo-hours = 2\n", base);
	assert_int_equal(load(text, &p), 0);
	assert_string_not_equal(p->s[0].conf_hash, h0);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_and_match),
		cmocka_unit_test(test_threshold_not_a_probability),
		cmocka_unit_test(test_hold_keys),
		cmocka_unit_test(test_conf_hash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
