/*
 * test_maintainers.c - MAINTAINERS parsing and the file-to-section
 * matcher, against get_maintainer.pl's rules: trailing '/' covers the
 * tree, a pattern without one only its own depth, globs, the prefix
 * quirk, directories without '/', X: exclusions, N: regexes, deepest
 * section first; and DPDK's variant of the format.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/history/maintainers.h"

static const char kernel[] =
	"List of maintainers\n"
	"===================\n"
	"\n"
	"Descriptions of section entries and preferred order\n"
	"\tM: *Mail* patches to: FullName <address@domain>\n"
	"\tF: *Files* and directories wildcard patterns.\n"
	"\n"
	"NETWORKING DRIVERS\n"
	"M:\tJane Net <Jane@Example.ORG>\n"
	"L:\tnetdev@vger.kernel.org\n"
	"S:\tMaintained\n"
	"F:\tdrivers/net/\n"
	"X:\tdrivers/net/wireless/\n"
	"\n"
	"INTEL ICE DRIVER\n"
	"M:\tIvy Ice <ivy@example.org>\n"
	"R:\tRob Review <rob@example.org>\n"
	"F:\tdrivers/net/ethernet/intel/ice/\n"
	"\n"
	"NET HEADERS\n"
	"M:\tHank <hank@example.org>\n"
	"F:\tinclude/linux/netdevice.h\n"
	"F:\tinclude/net/*.h\n"
	"\n"
	"TEGRA\n"
	"M:\tTina <tina@example.org>\n"
	"N:\t[^a-z]tegra\n"
	"K:\tnvidia,tegra\n"
	"\n"
	"SCRIPTS\n"
	"M:\tSam <sam@example.org>\n"
	"F:\tscripts\n"
	"\n"
	"THE REST\n"
	"M:\tLinus <torvalds@example.org>\n"
	"F:\t*\n"
	"F:\t*/\n";

static struct maint *parse(const char *text, maint_isdir_fn isdir)
{
	struct maint *m = NULL;

	assert_int_equal(maint_parse(&m, text, strlen(text), isdir, NULL), 0);
	assert_non_null(m);
	return m;
}

static size_t find(const struct maint *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->s[i].name, name))
			return i;
	fail_msg("no section '%s'", name);
	return 0;
}

/* The section names covering PATH, deepest first, joined by ','. */
static void expect(const struct maint *m, const char *path, const char *want)
{
	struct maint_hit hits[16];
	char got[512] = "";
	size_t n, i, len;

	maint_match(m, path, hits, 16, &n);
	for (i = 0; i < n; i++) {
		len = strlen(got);
		snprintf(got + len, sizeof(got) - len, "%s%s", i ? "," : "",
			 m->s[hits[i].section].name);
	}
	if (strcmp(got, want))
		fail_msg("'%s': got '%s', want '%s'", path, got, want);
}

static void test_sections(void **state)
{
	struct maint *m = parse(kernel, NULL);
	size_t ice, net;

	(void)state;
	/* the indented preamble lines are not entries */
	assert_int_equal(m->n, 6);
	net = find(m, "NETWORKING DRIVERS");
	ice = find(m, "INTEL ICE DRIVER");
	assert_int_equal(m->s[net].npeople, 1);
	assert_string_equal(m->s[net].people[0], "jane@example.org");
	assert_string_equal(m->s[net].lists[0], "netdev@vger.kernel.org");
	assert_string_equal(m->s[net].status, "Maintained");
	assert_true(maint_has_person(m, ice, "rob@example.org"));
	assert_int_equal(m->s[ice].is_reviewer[1], 1);
	assert_int_equal(m->s[ice].is_reviewer[0], 0);
	assert_false(maint_has_person(m, ice, "jane@example.org"));
	assert_string_equal(m->s[find(m, "TEGRA")].keywords[0], "nvidia,tegra");
	maint_free(m);
	maint_free(NULL);
}

static void test_matching(void **state)
{
	struct maint *m = parse(kernel, NULL);

	(void)state;
	/* deepest first; THE REST's "*" / "*" + "/" have depth -1 */
	expect(m, "drivers/net/ethernet/intel/ice/ice_main.c",
	       "INTEL ICE DRIVER,NETWORKING DRIVERS,THE REST");
	expect(m, "drivers/net/loopback.c", "NETWORKING DRIVERS,THE REST");
	/* X: drops the whole section */
	expect(m, "drivers/net/wireless/ath/main.c", "THE REST");
	/* a file pattern; and ^-anchored prefix with the same depth */
	expect(m, "include/linux/netdevice.h", "NET HEADERS,THE REST");
	expect(m, "include/linux/netdevice.hh", "NET HEADERS,THE REST");
	expect(m, "include/linux/netdevice/x.h", "THE REST");
	/* '*' stays within its directory */
	expect(m, "include/net/sock.h", "NET HEADERS,THE REST");
	expect(m, "include/net/sub/sock.h", "THE REST");
	/* N: regex on the path */
	expect(m, "arch/arm/mach-tegra/board.c", "TEGRA,THE REST");
	/* "scripts" without '/': a path under it proves a directory */
	expect(m, "scripts/checkpatch.pl", "SCRIPTS,THE REST");
	expect(m, "scripts/a/b.sh", "SCRIPTS,THE REST");
	expect(m, "README", "THE REST");
	maint_free(m);
}

static void test_pattern_rules(void **state)
{
	(void)state;
	assert_true(maint_pattern_match("drivers/net/a/b.c", "drivers/net/"));
	assert_false(maint_pattern_match("drivers/netx/a.c", "drivers/net/"));
	assert_true(maint_pattern_match("drivers/net/x.c", "drivers/net/*.c"));
	assert_false(
		maint_pattern_match("drivers/net/a/x.c", "drivers/net/*.c"));
	assert_true(maint_pattern_match("lib/a.c", "lib/?.c"));
	assert_false(maint_pattern_match("lib/ab.c", "lib/?.c"));
	assert_true(maint_pattern_match("Makefile", "*"));
	assert_false(maint_pattern_match("a/Makefile", "*"));
	assert_true(maint_pattern_match("a/Makefile", "*/"));
}

static int isdir_scripts(const char *path, void *ctx)
{
	(void)ctx;
	return !strcmp(path, "scripts");
}

static void test_isdir(void **state)
{
	struct maint *m = parse(kernel, isdir_scripts);
	size_t s = find(m, "SCRIPTS");

	(void)state;
	/* get_maintainer.pl's -d test: the '/' is added */
	assert_string_equal(m->s[s].f[0].glob, "scripts/");
	assert_int_equal(m->s[s].f[0].depth, 1);
	expect(m, "scripts/a/b.sh", "SCRIPTS,THE REST");
	/* a root file next to the directory no longer matches */
	expect(m, "scriptsx", "THE REST");
	maint_free(m);
}

static const char dpdk[] = "DPDK Maintainers\n"
			   "================\n"
			   "\n"
			   "Descriptions of section entries:\n"
			   "\n"
			   "\tM: Maintainer's Full Name <address@domain>\n"
			   "\tT: Git tree location.\n"
			   "\n"
			   "General Project Administration\n"
			   "------------------------------\n"
			   "\n"
			   "Main Branch\n"
			   "M: Thomas Monjalon <thomas@monjalon.net>\n"
			   "T: git://dpdk.org/dpdk\n"
			   "\n"
			   "Networking Drivers\n"
			   "------------------\n"
			   "M: Ferruh Yigit <ferruh@example.org>\n"
			   "T: git://dpdk.org/next/dpdk-next-net\n"
			   "\n"
			   "Intel ice\n"
			   "M: Bruce Richardson <bruce@example.org>\n"
			   "T: git://dpdk.org/next/dpdk-next-net-intel\n"
			   "F: drivers/net/intel/ice/\n"
			   "F: doc/guides/nics/ice.rst\n"
			   "F: doc/guides/nics/features/ice.ini\n"
			   "\n"
			   "EAL API and common code\n"
			   "F: lib/eal/common/\n"
			   "F: lib/eal/unix/\n"
			   "F: app/test/test_eal*\n";

static void test_dpdk(void **state)
{
	struct maint *m = parse(dpdk, NULL);
	size_t ice = find(m, "Intel ice");

	(void)state;
	assert_int_equal(m->n, 4);
	assert_true(maint_has_person(m, ice, "bruce@example.org"));
	assert_true(maint_has_person(m, find(m, "Main Branch"),
				     "thomas@monjalon.net"));
	expect(m, "drivers/net/intel/ice/ice_ethdev.c", "Intel ice");
	expect(m, "doc/guides/nics/ice.rst", "Intel ice");
	expect(m, "lib/eal/common/eal_common_log.c", "EAL API and common code");
	expect(m, "app/test/test_eal_flags.c", "EAL API and common code");
	expect(m, "app/test/test_mbuf.c", "");
	maint_free(m);
}

static void test_hostile(void **state)
{
	static const char junk[] = "F:\nM:\nN: (\nX:\nQ: what\n\n\n:\nM";
	struct maint *m = parse(junk, NULL);
	struct maint_hit hits[2];
	size_t n;

	(void)state;
	assert_int_equal(m->n, 1);
	maint_match(m, "a/b", hits, 2, &n);
	assert_int_equal(n, 0);
	maint_free(m);
}

/*
 * Found by fuzz_maintainers: "F: ****...z" (40 stars) against a path
 * without a 'z' tried every split of the path among the stars, which
 * never finished.  The matcher now retries only the last star.
 */
static void test_many_stars(void **state)
{
	static const char path[] = "drivers/net/ethernet/intel/e1000e/netdev.c";
	struct buf b = BUF_INIT;
	struct maint *m;
	struct maint_hit hits[2];
	size_t n;
	int i;

	(void)state;
	buf_addstr(&b, "STARS\nF:\t");
	for (i = 0; i < 40; i++)
		buf_addstr(&b, "*");
	buf_addstr(&b, "z\nMORE\nF:\td*e*/*e*/*e*e*/*/*e*/*.c\n");
	m = parse(b.ptr, NULL);
	maint_match(m, path, hits, 2, &n);
	assert_int_equal(n, 1);
	assert_int_equal(hits[0].section, 1);
	maint_free(m);
	buf_free(&b);
	/* the semantics kept: a prefix, '?' one byte, '*' any run */
	assert_true(maint_pattern_match("ab/cd", "a*/*"));
	assert_true(maint_pattern_match("ab/cd", "*b/?d"));
	assert_false(maint_pattern_match("ab/cd", "*x*"));
	assert_true(maint_pattern_match("aXbXc/", "a*b*c/"));
	assert_false(maint_pattern_match("abc", "abc?"));
}

/*
 * Found by fuzz_maintainers: "N: ((a{1,255}){1,255}){1,100}" made
 * regcomp allocate over 2 GB, and six "(.*)" groups followed by their
 * backreferences in reverse and a 'z' made regexec run for over 20 s on
 * one path.  Such N: lines are now left out, as one that does not
 * compile is; ordinary ones with small bounds still match.
 */
static void test_wild_regex(void **state)
{
	static const char text[] =
		"HUGE\nM:\ta@example.org\nN:\t((a{1,255}){1,255}){1,100}\n"
		"\nBACKREF\nM:\tb@example.org\n"
		"N:\t(.*)(.*)(.*)(.*)(.*)(.*)\\6\\5\\4\\3\\2\\1z\n"
		"\nRCAR\nM:\tc@example.org\nN:\tr8a7[0-9]{3}\n";
	struct maint *m = parse(text, NULL);
	struct maint_hit hits[4];
	size_t n;

	(void)state;
	assert_int_equal(m->n, 3);
	assert_int_equal(m->s[0].nn, 0);
	assert_int_equal(m->s[1].nn, 0);
	assert_int_equal(m->s[2].nn, 1);
	maint_match(m, "drivers/pinctrl/renesas/pfc-r8a7795.c", hits, 4, &n);
	assert_int_equal(n, 1);
	assert_int_equal(hits[0].section, 2);
	maint_match(m, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", hits, 4, &n);
	assert_int_equal(n, 0);
	maint_free(m);
}

/*
 * Found by fuzz_maintainers (10 minutes in): "N: " followed by a byte
 * and 125 '+' ran regcomp out of memory, since each '+' copies what it
 * applies to.  And many N: lines each just under the limit add up: a
 * file's regexes have a total budget too.
 */
static void test_regex_budget(void **state)
{
	struct buf b = BUF_INIT;
	struct maint *m;
	int i;

	(void)state;
	buf_addstr(&b, "PLUS\nN:\ta");
	for (i = 0; i < 130; i++)
		buf_addch(&b, '+');
	buf_addstr(&b, "\nN:\tab+c+(de+)+\n");
	m = parse(b.ptr, NULL);
	assert_int_equal(m->s[0].nn, 1);
	maint_free(m);
	buf_reset(&b);
	/* ((a{60}){60}) is 3600 after expansion: 18 fit in 65536 */
	buf_addstr(&b, "MANY\n");
	for (i = 0; i < 100; i++)
		buf_addstr(&b, "N:\t((a{60}){60})\n");
	m = parse(b.ptr, NULL);
	assert_int_equal(m->s[0].nn, 18);
	maint_free(m);
	buf_free(&b);
}

/*
 * Found by the second 10-minute fuzz_maintainers run: "N: x`*" and 11
 * '+' (a few bytes around them) made regcomp's epsilon closures run
 * over 10 s, and "(x?|y*)+" 15 times took regexec 7 s and 600 MB.
 * Quantifiers may now nest two deep and number 8 in one regex.
 */
static void test_regex_quantifiers(void **state)
{
	static const char text[] =
		"NEST\nN:\tx`*+++++++++++\nN:\tx*+\nN:\t((ab)+)+c\n"
		"N:\t(a*)*?\n"
		"\nMANY\nN:\t(x?|y*)+(x?|y*)+(x?|y*)+\n"
		"N:\t(x?|y*)+(x?|y*)+z\n";
	struct maint *m = parse(text, NULL);

	(void)state;
	/* x*+ and ((ab)+)+ are two deep; (a*)*? three */
	assert_int_equal(m->s[0].nn, 2);
	/* nine quantifiers, then six */
	assert_int_equal(m->s[1].nn, 1);
	maint_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_matching),
		cmocka_unit_test(test_pattern_rules),
		cmocka_unit_test(test_isdir),
		cmocka_unit_test(test_dpdk),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_many_stars),
		cmocka_unit_test(test_wild_regex),
		cmocka_unit_test(test_regex_budget),
		cmocka_unit_test(test_regex_quantifiers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
