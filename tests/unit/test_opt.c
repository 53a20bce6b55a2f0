/*
 * test_opt.c - the option parser of bot/cmd/opt.c: both value forms,
 * "--", positionals, --help, and the errors for a bad number, a number
 * out of range, a missing value and an unknown option.  Its messages go
 * to stderr; the exit codes are what is checked here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "bot/cmd/opt.h"

struct vals {
	int json, quiet;
	const char *repo;
	long long n;
	double p;
	const char *pos[3];
	size_t npos;
};

/* Parse "cmd ARGS..." (NULL-terminated) with the test table. */
static int parse(struct vals *v, ...)
{
	char *argv[16];
	const char *a;
	va_list ap;
	int argc = 0;
	const struct opt opts[] = {
		OPTION_FLAG(0, "json", &v->json),
		OPTION_FLAG('q', "quiet", &v->quiet),
		OPTION_STRING(0, "repo", &v->repo),
		OPTION_INT(0, "n", &v->n, 1, 64),
		OPTION_DOUBLE(0, "p", &v->p, 0, 1),
		OPTION_END,
	};

	memset(v, 0, sizeof(*v));
	v->n = 5;
	argv[argc++] = (char *)"version";
	va_start(ap, v);
	while ((a = va_arg(ap, const char *)) && argc < 15)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	return opt_parse("version", opts, argc, argv, v->pos, 3, &v->npos);
}

static void test_forms(void **state)
{
	struct vals v;

	(void)state;
	assert_int_equal(parse(&v, "--json", "--repo", "r", "--n=7", "--p",
			       "0.25", "-q", NULL),
			 0);
	assert_int_equal(v.json, 1);
	assert_int_equal(v.quiet, 1);
	assert_string_equal(v.repo, "r");
	assert_int_equal(v.n, 7);
	assert_true(v.p == 0.25);
	assert_int_equal(v.npos, 0);

	/* the last one wins; a value may look like an option */
	assert_int_equal(parse(&v, "--repo=a", "--repo", "-x", NULL), 0);
	assert_string_equal(v.repo, "-x");
	assert_int_equal(parse(&v, "--repo=", NULL), 0);
	assert_string_equal(v.repo, "");
	/* untouched when not given */
	assert_int_equal(parse(&v, NULL), 0);
	assert_int_equal(v.n, 5);
	assert_null(v.repo);
}

static void test_positionals(void **state)
{
	struct vals v;

	(void)state;
	assert_int_equal(parse(&v, "a", "--json", "-", "--", "--n", NULL), 0);
	assert_int_equal(v.npos, 3);
	assert_string_equal(v.pos[0], "a");
	assert_string_equal(v.pos[1], "-");
	assert_string_equal(v.pos[2], "--n");
	assert_int_equal(v.json, 1);
	assert_int_equal(v.n, 5);
	assert_int_equal(parse(&v, "a", "b", "c", "d", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--", "--help", NULL), 0);
	assert_string_equal(v.pos[0], "--help");
}

static void test_help(void **state)
{
	struct vals v;

	(void)state;
	assert_int_equal(parse(&v, "--help", NULL), OPT_HELP);
	assert_int_equal(parse(&v, "--json", "-h", NULL), OPT_HELP);
	assert_int_equal(opt_exit(OPT_HELP), EXIT_OK);
	assert_int_equal(opt_exit(EXIT_USAGE), EXIT_USAGE);
}

static void test_numbers(void **state)
{
	struct vals v;

	(void)state;
	assert_int_equal(parse(&v, "--n", "64", NULL), 0);
	assert_int_equal(v.n, 64);
	assert_int_equal(parse(&v, "--n", "+1", NULL), 0);
	assert_int_equal(v.n, 1);
	assert_int_equal(parse(&v, "--n", "abc", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--n", "4x", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--n", "", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--n", " 4", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--n", "0", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--n", "65", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--n", "-1", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--n=99999999999999999999", NULL),
			 EXIT_USAGE);
	assert_int_equal(v.n, 5);
	assert_int_equal(parse(&v, "--p", "1", NULL), 0);
	assert_true(v.p == 1);
	assert_int_equal(parse(&v, "--p", "1.5", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--p", "nan", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--p", "0.5x", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--p", "-0.1", NULL), EXIT_USAGE);
}

static void test_errors(void **state)
{
	struct vals v;

	(void)state;
	assert_int_equal(parse(&v, "--repo", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--bogus", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--bogus=1", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "-x", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "-qq", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--json=1", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--rep", "x", NULL), EXIT_USAGE);
	assert_int_equal(parse(&v, "--", NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_positionals),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
