/*
 * test_control.c - maintainers' commands (bot/outbox/control.c): the
 * line parser (case, blanks, quoted lines, the signature, prose around
 * the word, line ends, unknown words, a bounded word) and the table:
 * each (Message-ID, command) recorded once, mutes by series, a
 * mute-list held under its configuration hash and lifted by another.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "bot/cmd/schema.h"
#include "bot/outbox/control.h"

static unsigned parse(const char *s)
{
	return control_parse(s, strlen(s));
}

static void test_parse_lines(void **state)
{
	(void)state;
	assert_int_equal(parse("patchtriage: mute\n"), CONTROL_MUTE);
	assert_int_equal(parse("PatchTriage:MUTE"), CONTROL_MUTE);
	assert_int_equal(parse("  patchtriage :\tWrong  \r\n"), CONTROL_WRONG);
	assert_int_equal(parse("Hi,\n\npatchtriage: mute-list\nThanks\n"),
			 CONTROL_MUTE_LIST);
	assert_int_equal(parse("patchtriage: mute\npatchtriage: wrong\n"),
			 CONTROL_MUTE | CONTROL_WRONG);
	assert_int_equal(parse("a\r\npatchtriage: wrong\r\nb\r\n"),
			 CONTROL_WRONG);
}

static void test_parse_not_commands(void **state)
{
	(void)state;
	assert_int_equal(parse("> patchtriage: mute\n"), 0);
	assert_int_equal(parse(">patchtriage: mute\n>> patchtriage: wrong"), 0);
	assert_int_equal(parse("Please patchtriage: mute\n"), 0);
	assert_int_equal(parse("patchtriage: mute this thread\n"), 0);
	assert_int_equal(parse("patchtriage mute\n"), 0);
	assert_int_equal(parse("patchtriage: muted\n"), 0);
	assert_int_equal(parse("patchtriage: \n"), 0);
	assert_int_equal(parse("patchtriage:\n"), 0);
	assert_int_equal(parse("patchtriage-bot: mute\n"), 0);
	assert_int_equal(parse("patchtriage: mute-list-of-everything-x\n"), 0);
	assert_int_equal(parse("ok\n-- \npatchtriage: mute\n"), 0);
	/* "--" without the blank is not the signature separator */
	assert_int_equal(parse("--\npatchtriage: mute\n"), CONTROL_MUTE);
	assert_int_equal(parse(""), 0);
	assert_int_equal(control_parse(NULL, 0), 0);
	/* the length bounds the read: the command past it is not seen */
	assert_int_equal(control_parse("x\npatchtriage: mute", 6), 0);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(control_name(CONTROL_MUTE), "mute");
	assert_string_equal(control_name(CONTROL_WRONG), "wrong");
	assert_string_equal(control_name(CONTROL_MUTE_LIST), "mute-list");
	assert_null(control_name(3));
}

static struct control_row row(const char *msgid, unsigned cmd, const char *who,
			      enum control_state st)
{
	struct control_row r;

	memset(&r, 0, sizeof(r));
	r.message_id = msgid;
	r.cmd = cmd;
	r.source = "imap";
	r.series_key = "s1@x";
	r.subsystem = "pwm";
	r.conf_hash = "h1";
	r.who = who;
	r.state = st;
	r.reason = "test";
	return r;
}

static int count(const struct control_row *r, void *ctx)
{
	(void)r;
	(*(int *)ctx)++;
	return 0;
}

static void test_table(void **state)
{
	struct control_row r;
	struct db *db;
	char *who = NULL;
	int seen = 0, n = 0, lifted = 0;

	(void)state;
	assert_int_equal(db_open(&db, ":memory:", &bot_db_owners), 0);
	r = row("m1@x", CONTROL_MUTE, "stranger@y", CONTROL_IGNORED);
	assert_int_equal(control_record(db, &r), 0);
	assert_int_equal(control_series_muted(db, "s1@x", &who), 0);
	assert_null(who); /* an ignored mute mutes nothing */
	r = row("m2@x", CONTROL_MUTE, "author@y", CONTROL_ACTED);
	assert_int_equal(control_record(db, &r), 0);
	assert_int_equal(control_record(db, &r), PT_EEXISTS);
	assert_int_equal(control_seen(db, "m2@x", CONTROL_MUTE, &seen), 0);
	assert_int_equal(seen, 1);
	assert_int_equal(control_seen(db, "m2@x", CONTROL_WRONG, &seen), 0);
	assert_int_equal(seen, 0);
	assert_int_equal(control_series_muted(db, "s1@x", &who), 0);
	assert_string_equal(who, "author@y");
	free(who);
	assert_int_equal(control_series_muted(db, "s2@x", &who), 0);
	assert_null(who);

	r = row("m3@x", CONTROL_MUTE_LIST, "maint@y", CONTROL_ACTED);
	assert_int_equal(control_record(db, &r), 0);
	assert_int_equal(control_list_muted(db, "pwm", "h1", &who), 0);
	assert_string_equal(who, "maint@y");
	free(who);
	assert_int_equal(control_list_muted(db, "pwm", "h2", &who), 0);
	assert_null(who);
	assert_int_equal(control_lift_stale(db, "pwm", "h1", &lifted), 0);
	assert_int_equal(lifted, 0);
	assert_int_equal(control_lift_stale(db, "pwm", "h2", &lifted), 0);
	assert_int_equal(lifted, 1);
	assert_int_equal(control_list_muted(db, "pwm", "h1", &who), 0);
	assert_null(who); /* lifted for good, even back under h1 */

	assert_int_equal(control_foreach(db, CONTROL_ALL, -1, count, &n), 0);
	assert_int_equal(n, 3);
	n = 0;
	assert_int_equal(control_foreach(db, CONTROL_MUTE, CONTROL_ACTED, count,
					 &n),
			 0);
	assert_int_equal(n, 1);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_lines),
		cmocka_unit_test(test_parse_not_commands),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
