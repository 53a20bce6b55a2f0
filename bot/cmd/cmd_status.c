/*
 * cmd_status.c - `patchtriage status [--json]`: where the bot is (its
 * lock, the event stream and folder positions), what waits (the queue),
 * what it did today and its current errors, from bot/loop/status.c.  Text for
 * people, --json for monitoring.  It creates no state: a state database
 * that is not there is an error.
 */
#include <stdlib.h>
#include <string.h>

#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/loop/status.h"

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "-";
}

static long long num(const json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

/* A state as people read it: 'skipped' checks were on the server. */
static const char *state_text(const char *state)
{
	return strcmp(state, "skipped") ? state : "already-there";
}

static void print_counts(const json_t *arr, const char *title)
{
	const json_t *it;
	size_t i;

	printf("%s:%s\n", title, json_array_size(arr) ? "" : " none");
	json_array_foreach (arr, i, it)
		printf("  %-14s %-13s %lld\n", str(it, "kind"),
		       state_text(str(it, "state")), num(it, "count"));
}

/* "older errors: N work items, M actions" when any was left out. */
static void print_older(const json_t *arr)
{
	const json_t *it;
	long long work = 0, act = 0;
	size_t i;

	json_array_foreach (arr, i, it) {
		if (!strcmp(str(it, "of"), "work"))
			work = num(it, "count");
		else
			act = num(it, "count");
	}
	if (work || act)
		printf("older errors (not listed: the same source worked "
		       "since): %lld work items, %lld actions\n",
		       work, act);
}

/* The maintainers' commands: what is muted, what was called wrong. */
static void print_control(const json_t *s)
{
	const json_t *a, *it;
	size_t i;

	a = json_object_get(s, "muted_series");
	printf("muted series:%s\n", json_array_size(a) ? "" : " none");
	json_array_foreach (a, i, it)
		printf("  <%s> by %s (%s)\n", str(it, "series"), str(it, "who"),
		       str(it, "subsystem"));
	a = json_object_get(s, "muted_lists");
	printf("muted lists:%s\n", json_array_size(a) ? "" : " none");
	json_array_foreach (a, i, it)
		printf("  %s by %s, until its configuration changes\n",
		       str(it, "subsystem"), str(it, "who"));
	printf("wrong verdicts: %lld (patchtriage feedback lists them)\n",
	       num(s, "wrong_verdicts"));
	a = json_object_get(s, "commands");
	if (json_array_size(a))
		printf("commands:\n");
	json_array_foreach (a, i, it)
		printf("  %-14s %-10s %lld\n", str(it, "command"),
		       str(it, "state"), num(it, "count"));
}

static void print_text(const json_t *s)
{
	const json_t *d = json_object_get(s, "daemon"), *it;
	size_t i;

	printf("daemon: %s\n", json_is_true(json_object_get(d, "running"))
				       ? str(d, "detail")
				       : "not running");
	printf("last pass: %s\n", str(s, "last_pass"));
	d = json_object_get(s, "skipped_for_age");
	printf("skipped for age: %lld checks (check.max-age), %lld replies "
	       "(reply.max-age)\n",
	       num(d, "checks"), num(d, "replies"));
	json_array_foreach (json_object_get(s, "patchwork"), i, it)
		printf("patchwork %s project %s: event %lld of %s\n",
		       str(it, "url"), str(it, "project"), num(it, "last_id"),
		       str(it, "last_date"));
	json_array_foreach (json_object_get(s, "imap"), i, it)
		printf("imap %s folder %s: uidvalidity %lld, last uid %lld\n",
		       str(it, "account"), str(it, "folder"),
		       num(it, "uidvalidity"), num(it, "last_uid"));
	print_counts(json_object_get(s, "queue"), "queue");
	print_counts(json_object_get(s, "actions_today"), "actions today");
	json_array_foreach (json_object_get(s, "work_errors"), i, it)
		printf("work error: %s %s (%s, %lld attempts): %s\n",
		       str(it, "kind"), str(it, "key"), str(it, "state"),
		       num(it, "attempts"), str(it, "error"));
	json_array_foreach (json_object_get(s, "action_errors"), i, it)
		printf("action error: %s %s (%s): %s\n", str(it, "kind"),
		       str(it, "key"), str(it, "state"), str(it, "error"));
	print_older(json_object_get(s, "older_errors"));
	print_control(s);
}

int cmd_status(int argc, char **argv, struct cli_ctx *ctx)
{
	struct db *db;
	json_t *s = NULL;
	int json = 0, rc;
	size_t npos;
	const struct opt opts[] = {
		OPTION_FLAG(0, "json", &json),
		OPTION_END,
	};

	rc = opt_parse("status", opts, argc, argv, NULL, 0, &npos);
	if (rc)
		return opt_exit(rc);
	rc = cli_db_existing(ctx, &db); /* status never creates state */
	if (!rc)
		rc = status_collect(&s, db, ctx->state_dir);
	if (rc)
		return cli_fail_last();
	if (json) {
		cli_print_json(s);
	} else {
		print_text(s);
	}
	json_decref(s);
	return EXIT_OK;
}
