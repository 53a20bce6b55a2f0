/*
 * test_log.c - levels and secret redaction of the daemon log.
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

#include "bot/sys/log.h"

static void test_redact(void **state)
{
	char s[128];

	(void)state;
	log_register_secret("tok-1234567");
	log_register_secret("abc"); /* too short: ignored */
	snprintf(s, sizeof(s), "%s",
		 "Authorization: Token tok-1234567 and tok-1234567!");
	log_redact(s);
	assert_string_equal(s, "Authorization: Token *** and ***!");
	snprintf(s, sizeof(s), "%s", "abc stays");
	log_redact(s);
	assert_string_equal(s, "abc stays");
	log_forget_secrets();
	snprintf(s, sizeof(s), "%s", "tok-1234567");
	log_redact(s);
	assert_string_equal(s, "tok-1234567");
}

static void test_stderr_levels(void **state)
{
	char path[] = "/tmp/pt-log-XXXXXX", text[512];
	int fd, saved;
	FILE *f;
	size_t n;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	log_setup(LOG_TO_STDERR, LOG_LVL_INFO);
	log_register_secret("hunter2-secret");
	log_info("posted check with hunter2-secret");
	log_debug("not shown");
	log_error("failed: %d", 42);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(path, "r");
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	close(fd);
	unlink(path);
	assert_non_null(strstr(text, "info: posted check with ***"));
	assert_null(strstr(text, "hunter2"));
	assert_null(strstr(text, "not shown"));
	assert_non_null(strstr(text, "error: failed: 42"));
	log_forget_secrets();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_stderr_levels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
