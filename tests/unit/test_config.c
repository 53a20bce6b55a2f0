/*
 * test_config.c - git-config syntax through libgit2: typed lookups with
 * defaults, multivars, subsystem sections, and secrets that come from a
 * file or a command (killed when it outlives its time limit, its exit
 * status reported) and never appear in an error message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "scoring/store/config.h"
#include "tmpdir.h"

static char dir[64];

static void write_file(const char *name, const char *text, mode_t mode)
{
	char p[160];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(p, mode);
}

static struct config *open_cfg(const char *text)
{
	struct config *c;
	char p[160];

	write_file("config", text, 0600);
	snprintf(p, sizeof(p), "%s/config", dir);
	assert_int_equal(config_open(&c, p), 0);
	return c;
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "cfg");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static void test_typed_lookups(void **state)
{
	struct config *c;
	char *s;
	long n;
	double d;
	int b;

	(void)state;
	c = open_cfg("[patchwork]\n\turl = https://pw.example.org\n"
		     "\tretries = 4\n\tssl-verify = false\n"
		     "[subsystem \"netdev\"]\n\trisk-threshold = 0.30\n");
	assert_int_equal(config_get_string(c, "patchwork.url", NULL, &s), 0);
	assert_string_equal(s, "https://pw.example.org");
	free(s);
	assert_int_equal(config_get_string(c, "patchwork.nope", "dflt", &s), 0);
	assert_string_equal(s, "dflt");
	free(s);
	assert_int_equal(config_get_string(c, "patchwork.nope", NULL, &s), 0);
	assert_null(s);
	assert_int_equal(config_get_int(c, "patchwork.retries", 1, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(config_get_bool(c, "patchwork.ssl-verify", 1, &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(config_get_bool(c, "imap.ssl-verify", 1, &b), 0);
	assert_int_equal(b, 1);
	assert_int_equal(config_get_double(c, "subsystem.netdev.risk-threshold",
					   0.5, &d),
			 0);
	assert_true(d > 0.29 && d < 0.31);
	assert_int_equal(config_get_int(c, "patchwork.url", 0, &n), PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "patchwork.url"));
	config_free(c);
}

/* A number out of its key's range is an error naming key and range. */
static void test_int_range(void **state)
{
	struct config *c;
	long n;

	(void)state;
	c = open_cfg("[smtp]\n\ttimeout = -5\n[imap]\n\ttimeout = 30\n");
	assert_int_equal(config_get_int_range(c, "smtp.timeout", 60, 1,
					      CONFIG_MAX_SECONDS, &n),
			 PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "smtp.timeout = -5 is out of "
						"range: it must be from 1 to "
						"86400"));
	assert_int_equal(config_get_int_range(c, "imap.timeout", 60, 1,
					      CONFIG_MAX_SECONDS, &n),
			 0);
	assert_int_equal(n, 30);
	assert_int_equal(config_get_int_range(c, "imap.nope", 60, 1, 100, &n),
			 0);
	assert_int_equal(n, 60);
	config_free(c);
}

static void test_subsystems_and_multivar(void **state)
{
	struct config *c;
	char **v;

	(void)state;
	c = open_cfg("[imap]\n\tfolder = netdev\n\tfolder = linux-pwm\n"
		     "[subsystem \"netdev\"]\n\tlist-id = netdev.vger\n"
		     "\tactions = check\n"
		     "[subsystem \"pwm.x\"]\n\tlist-id = linux-pwm\n");
	assert_int_equal(config_get_all(c, "imap.folder", &v), 0);
	assert_string_equal(v[0], "netdev");
	assert_string_equal(v[1], "linux-pwm");
	assert_null(v[2]);
	config_strv_free(v);
	assert_int_equal(config_get_all(c, "imap.none", &v), 0);
	assert_null(v[0]);
	config_strv_free(v);
	assert_int_equal(config_subsystems(c, &v), 0);
	assert_string_equal(v[0], "netdev");
	assert_string_equal(v[1], "pwm.x");
	assert_null(v[2]);
	config_strv_free(v);
	config_free(c);
}

static void test_secret_file_and_warning(void **state)
{
	struct config *c;
	char text[256], *s;
	const char *const *w;

	(void)state;
	write_file("token", "s3cr3t-token\nignored\n", 0644);
	snprintf(text, sizeof(text), "[patchwork]\n\ttoken-file = %s/token\n",
		 dir);
	c = open_cfg(text);
	assert_int_equal(config_read_secret(c, "patchwork", &s), 0);
	assert_string_equal(s, "s3cr3t-token");
	pt_secret_free(s);
	w = config_warnings(c);
	assert_non_null(w[0]);
	assert_non_null(strstr(w[0], "readable by others"));
	assert_null(strstr(w[0], "s3cr3t"));
	config_free(c);
}

static void test_secret_command(void **state)
{
	struct config *c;
	char *s;

	(void)state;
	c = open_cfg(
		"[imap]\n\tpassword-command = printf 'pw-from-cmd\\\\n'\n"
		"[smtp]\n\tpassword-command = \"echo leaked-value; exit 3\"\n");
	assert_int_equal(config_read_secret(c, "imap", &s), 0);
	assert_string_equal(s, "pw-from-cmd");
	pt_secret_free(s);
	assert_int_equal(config_read_secret(c, "smtp", &s), PT_EIO);
	assert_null(s);
	assert_non_null(strstr(pt_error_last(), "smtp.password-command"));
	assert_null(strstr(pt_error_last(), "leaked-value"));
	assert_int_equal(config_read_secret(c, "patchwork", &s), PT_ENOTFOUND);
	config_free(c);
}

static long long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000LL +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* pid is gone or a zombie, within a second. */
static int gone(long pid)
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	char path[64], st[256];
	int i;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	for (i = 0; i < 50; i++) {
		FILE *f = fopen(path, "r");
		char *s = f ? fgets(st, sizeof(st), f) : NULL;

		if (f)
			fclose(f);
		if (!s || (strrchr(st, ')') && strrchr(st, ')')[2] == 'Z'))
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

/*
 * A password command that hangs (a pinentry prompt, `sleep`) is killed
 * with its process group after SECTION.password-command-timeout, and the
 * error names the key; one that fails says its exit status.
 */
static void test_secret_command_bounded(void **state)
{
	struct timespec t0;
	char text[512], buf[32], *s, *end;
	struct config *c;
	FILE *f;
	long pid;

	(void)state;
	snprintf(text, sizeof(text),
		 "[imap]\n\tpassword-command = \"sleep 3 & echo $! >%s/pid; "
		 "wait\"\n\tpassword-command-timeout = 1\n"
		 "[smtp]\n\tpassword-command = exit 3\n"
		 "[patchwork]\n\tpassword-command = echo x\n"
		 "\tpassword-command-timeout = 0\n",
		 dir);
	c = open_cfg(text);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(config_read_secret(c, "imap", &s), PT_EIO);
	assert_true(elapsed_ms(&t0) < 2500);
	assert_null(s);
	assert_non_null(strstr(pt_error_last(), "imap.password-command "));
	assert_non_null(strstr(pt_error_last(), "timed out after 1 s"));
	assert_non_null(
		strstr(pt_error_last(), "imap.password-command-timeout"));
	snprintf(text, sizeof(text), "%s/pid", dir);
	f = fopen(text, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	pid = strtol(buf, &end, 10);
	assert_true(pid > 0);
	assert_true(gone(pid));

	assert_int_equal(config_read_secret(c, "smtp", &s), PT_EIO);
	assert_non_null(strstr(pt_error_last(), "exit status 3"));
	assert_null(strstr(pt_error_last(), "printed nothing"));
	assert_int_equal(config_read_secret(c, "patchwork", &s), PT_EINVAL);
	assert_non_null(
		strstr(pt_error_last(), "patchwork.password-command-timeout"));
	config_free(c);
}

static void test_missing_secret_file(void **state)
{
	struct config *c;
	char *s;

	(void)state;
	c = open_cfg("[patchwork]\n\ttoken-file = /nonexistent/tok\n");
	assert_int_equal(config_read_secret(c, "patchwork", &s), PT_EIO);
	assert_non_null(strstr(pt_error_last(), "patchwork.token-file"));
	assert_non_null(strstr(pt_error_last(), "/nonexistent/tok"));
	config_free(c);
}

static void test_bad_syntax(void **state)
{
	struct config *c;
	char p[160];

	(void)state;
	write_file("bad", "[patchwork\nurl = x\n", 0600);
	snprintf(p, sizeof(p), "%s/bad", dir);
	assert_true(config_open(&c, p) < 0);
	assert_null(c);
	assert_non_null(strstr(pt_error_last(), p));
	assert_true(config_open(&c, "/nonexistent/config") < 0);
	assert_non_null(strstr(pt_error_last(), "/nonexistent/config"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_typed_lookups, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_int_range, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_subsystems_and_multivar,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_secret_file_and_warning,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_secret_command, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_secret_command_bounded,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_secret_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_syntax, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
