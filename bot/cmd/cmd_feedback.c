/*
 * cmd_feedback.c - `patchtriage feedback [--json]`: the verdicts that
 * authors and maintainers called wrong with "patchtriage: wrong" (the
 * command acted on: bot/outbox/control.h), oldest first, each with who
 * said so, the series, the subsystem and what the bot had said there.
 * The count is in `status`; this is the list to weigh against the
 * evaluation of `eval`.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/outbox/control.h"

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

static int add_row(const struct control_row *r, void *ctx)
{
	json_t *o = json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:I}",
			      "message_id", r->message_id, "who", r->who,
			      "series", r->series_key, "subsystem",
			      r->subsystem, "said", r->detail, "source",
			      r->source, "created", (json_int_t)r->created);

	return !o || json_array_append_new(ctx, o) ? PT_ENOMEM : 0;
}

static void print_text(const json_t *a)
{
	const json_t *it;
	char when[32];
	time_t t;
	struct tm tm;
	size_t i;

	printf("wrong verdicts: %zu\n", json_array_size(a));
	json_array_foreach (a, i, it) {
		t = (time_t)json_integer_value(json_object_get(it, "created"));
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
		printf("%s  %s  series <%s> (%s)\n  said: %s\n", when,
		       or_dash(json_string_value(json_object_get(it, "who"))),
		       or_dash(json_string_value(json_object_get(it, "series"))),
		       or_dash(json_string_value(
			       json_object_get(it, "subsystem"))),
		       or_dash(json_string_value(json_object_get(it, "said"))));
	}
}

int cmd_feedback(int argc, char **argv, struct cli_ctx *ctx)
{
	struct db *db;
	json_t *a = json_array();
	int json = 0, rc;
	size_t npos;
	const struct opt opts[] = {
		OPTION_FLAG(0, "json", &json),
		OPTION_END,
	};

	rc = opt_parse("feedback", opts, argc, argv, NULL, 0, &npos);
	if (rc) {
		json_decref(a);
		return opt_exit(rc);
	}
	rc = a ? cli_db_existing(ctx, &db) : PT_ENOMEM;
	if (!rc)
		rc = control_foreach(db, CONTROL_WRONG, CONTROL_ACTED, add_row,
				     a);
	if (rc) {
		json_decref(a);
		return cli_fail_last();
	}
	if (json) {
		cli_print_json(a);
	} else {
		print_text(a);
	}
	json_decref(a);
	return EXIT_OK;
}
