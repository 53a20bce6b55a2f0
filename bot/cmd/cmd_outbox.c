/*
 * cmd_outbox.c - `patchtriage outbox list [--json] | show ID | approve ID
 * | drop ID`: the replies the bot holds ('waiting': reply.mode = approve,
 * or reply.embargo-hours) for a maintainer to read, approve (the bot's
 * next pass sends it; its text says a person approved it) or drop.
 * Exit status 1 for an ID the outbox does not have or a row that is not
 * waiting, 2 for a malformed command line.
 */
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/outbox/store.h"

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

static void when(char *out, size_t n, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0) {
		snprintf(out, n, "-");
		return;
	}
	gmtime_r(&tt, &tm);
	strftime(out, n, "%Y-%m-%dT%H:%MZ", &tm);
}

static int add_row(const struct outbox_row *r, void *ctx)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s?, s:s?, s:s, s:I, s:I}",
			      "id", (json_int_t)r->id, "kind", r->kind,
			      "message_id", r->dedupe_key, "subsystem",
			      r->subsystem, "hold", r->hold, "to", r->target,
			      "created", (json_int_t)r->created, "release_at",
			      (json_int_t)r->release_at);

	return !o || json_array_append_new(ctx, o) ? PT_ENOMEM : 0;
}

static void print_list(const json_t *a)
{
	const json_t *it;
	char c[32], d[32];
	size_t i;

	printf("waiting replies: %zu\n", json_array_size(a));
	json_array_foreach (a, i, it) {
		when(c, sizeof(c),
		     json_integer_value(json_object_get(it, "created")));
		when(d, sizeof(d),
		     json_integer_value(json_object_get(it, "release_at")));
		printf("%5lld  %-7s %-12s %-12s held %s, due %s  to %s\n",
		       (long long)json_integer_value(json_object_get(it, "id")),
		       or_dash(json_string_value(json_object_get(it, "hold"))),
		       or_dash(json_string_value(json_object_get(it, "kind"))),
		       or_dash(json_string_value(
			       json_object_get(it, "subsystem"))),
		       c, d,
		       or_dash(json_string_value(json_object_get(it, "to"))));
	}
}

static int do_list(struct db *db, int json)
{
	json_t *a = json_array();
	int rc = a ? 0 : PT_ENOMEM;

	if (!rc)
		rc = store_outbox_foreach(db, OUTBOX_WAITING, add_row, a);
	if (!rc && json) {
		cli_print_json(a);
	} else if (!rc) {
		print_list(a);
	}
	json_decref(a);
	return rc;
}

/* The message as stored (CRLF line ends) with LF line ends. */
static void print_message(const char *m)
{
	for (; *m; m++)
		if (!(m[0] == '\r' && m[1] == '\n'))
			putchar(*m);
}

static int do_show(struct db *db, int64_t id)
{
	struct outbox_row r;
	char c[32], d[32];
	int rc;

	rc = store_outbox_by_id(db, id, &r);
	if (rc)
		return rc;
	when(c, sizeof(c), r.created);
	when(d, sizeof(d), r.release_at);
	printf("id: %lld\nkind: %s\nstate: %s\nhold: %s\nsubsystem: %s\n"
	       "to: %s\ncreated: %s\ndue: %s\napproved by: %s\nnote: %s\n\n",
	       (long long)r.id, r.kind, outbox_state_name(r.state),
	       or_dash(r.hold), or_dash(r.subsystem), r.target, c, d,
	       or_dash(r.approved_by), or_dash(r.note));
	print_message(r.payload);
	outbox_row_clear(&r);
	return 0;
}

/* The login of whoever runs the command: who approved or dropped. */
static const char *who(void)
{
	const char *u = getenv("USER");
	struct passwd *pw;

	if (u && *u)
		return u;
	pw = getpwuid(getuid());
	return pw ? pw->pw_name : "?";
}

static int do_release(struct db *db, int64_t id, int approve)
{
	struct buf note = BUF_INIT;
	int rc = 0;

	if (!approve)
		rc = buf_addf(&note, "dropped by %s", who());
	if (!rc)
		rc = store_outbox_release(db, id,
					  approve ? OUTBOX_INTENDED
						  : OUTBOX_DROPPED,
					  who(), approve ? NULL : note.ptr);
	if (!rc && approve)
		printf("approved %lld: the bot sends it on its next pass\n",
		       (long long)id);
	else if (!rc)
		printf("dropped %lld: it will not be sent\n", (long long)id);
	buf_free(&note);
	return rc;
}

static int parse_id(const char *s, int64_t *id)
{
	char *end;

	errno = 0;
	*id = s ? strtoll(s, &end, 10) : 0;
	if (!s || !*s || *end || errno || *id <= 0)
		return cli_usage("outbox", "'%s' is not an outbox ID",
				 s ? s : "");
	return 0;
}

int cmd_outbox(int argc, char **argv, struct cli_ctx *ctx)
{
	const char *pos[2] = { NULL, NULL };
	struct db *db;
	int64_t id = 0;
	int json = 0, rc;
	size_t npos;
	const struct opt opts[] = {
		OPTION_FLAG(0, "json", &json),
		OPTION_END,
	};

	rc = opt_parse("outbox", opts, argc, argv, pos, 2, &npos);
	if (rc)
		return opt_exit(rc);
	if (!npos)
		return cli_usage("outbox", "say list, show, approve or drop");
	if (!strcmp(pos[0], "list")) {
		if (npos != 1)
			return cli_usage("outbox", "list takes no ID");
	} else if (!strcmp(pos[0], "show") || !strcmp(pos[0], "approve") ||
		   !strcmp(pos[0], "drop")) {
		if (npos != 2)
			return cli_usage("outbox", "%s needs an ID", pos[0]);
		rc = parse_id(pos[1], &id);
		if (rc)
			return rc;
	} else {
		return cli_usage("outbox", "unknown subcommand '%s'", pos[0]);
	}
	rc = cli_db_existing(ctx, &db);
	if (!rc && !strcmp(pos[0], "list"))
		rc = do_list(db, json);
	else if (!rc && !strcmp(pos[0], "show"))
		rc = do_show(db, id);
	else if (!rc)
		rc = do_release(db, id, !strcmp(pos[0], "approve"));
	return rc ? cli_fail_last() : EXIT_OK;
}
