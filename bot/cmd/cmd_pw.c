/*
 * cmd_pw.c - `patchtriage pw`, for maintainers checking the Patchwork
 * set-up the way they would with git-pw: list events (or poll them as
 * the daemon does, from a position of their own in STATE/pw-poll.db, so
 * that the daemon's own position never moves), show a series, a patch
 * or a patch's checks, and post a check.  An empty answer says so ("no
 * events", "no checks") on stderr.  It reads [patchwork] url,
 * token-file and project from the configuration; all the work is in
 * bot/patchwork/patchwork.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/sys/log.h"
#include "bot/patchwork/patchwork.h"
#include "bot/patchwork/schema.h"

struct pw_args {
	const char *sub;
	const char *id;
	const char *since;
	const char *state;
	const char *context;
	const char *description;
	const char *target_url;
	const char *project;
	int json;
	int poll;
	char since_buf[PW_SINCE_MAX]; /* since as Patchwork takes it */
};

static int parse_args(int argc, char **argv, struct pw_args *a)
{
	const char *pos[2] = { NULL, NULL };
	size_t npos;
	int rc;
	const struct opt opts[] = {
		OPTION_FLAG(0, "json", &a->json),
		OPTION_FLAG(0, "poll", &a->poll),
		OPTION_STRING(0, "since", &a->since),
		OPTION_STRING(0, "state", &a->state),
		OPTION_STRING(0, "context", &a->context),
		OPTION_STRING(0, "description", &a->description),
		OPTION_STRING(0, "target-url", &a->target_url),
		OPTION_STRING(0, "project", &a->project),
		OPTION_END,
	};

	memset(a, 0, sizeof(*a));
	rc = opt_parse("pw", opts, argc, argv, pos, 2, &npos);
	if (rc)
		return rc;
	a->sub = pos[0];
	a->id = pos[1];
	if (!a->sub)
		return cli_usage("pw", "which subcommand?");
	if (strcmp(a->sub, "events") && strcmp(a->sub, "series") &&
	    strcmp(a->sub, "patch") && strcmp(a->sub, "checks") &&
	    strcmp(a->sub, "check"))
		return cli_usage("pw", "'%s' is not a pw subcommand", a->sub);
	if (strcmp(a->sub, "events") && !a->id)
		return cli_usage("pw", "'pw %s' needs an id", a->sub);
	if (!strcmp(a->sub, "events") && a->id)
		return cli_usage("pw", "unexpected argument '%s'", a->id);
	if (a->since) {
		/* a day is its midnight UTC; a zone suffix is dropped */
		if (pw_since_param(a->since, a->since_buf)) {
			pt_error_clear();
			return cli_usage("pw",
					 "--since: '%s' is not a date "
					 "(YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS, "
					 "UTC)",
					 a->since);
		}
		a->since = a->since_buf;
	}
	if (!strcmp(a->sub, "check") && (!a->state || !a->context))
		return cli_usage("pw",
				 "'pw check' needs --state and --context");
	return 0;
}

static int parse_id(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end || v <= 0 || errno)
		return cli_usage("pw", "'%s' is not an id", s);
	*out = v;
	return 0;
}

/* The client from [patchwork]; *project gets the project (owned). */
static int open_pw(struct cli_ctx *ctx, const struct pw_args *a,
		   struct pw **out, char **project)
{
	struct config *cfg;
	int rc, insecure = 0;

	*out = NULL;
	*project = NULL;
	rc = cli_config(ctx, &cfg);
	if (!rc)
		rc = pw_from_config(out, cfg, a->project, project, &insecure);
	if (!rc && insecure)
		cli_warn("patchwork.ssl-verify is false: the server's "
			 "certificate is not checked");
	return rc;
}

static void print_json(const json_t *j, int compact)
{
	char *s = json_dumps(j, compact ? JSON_COMPACT : JSON_INDENT(2));

	if (s)
		puts(s);
	free(s);
}

/* Print a document built for the purpose, then free it; NULL: no memory. */
static int print_built(json_t *j)
{
	if (!j)
		return PT_ENOMEM;
	print_json(j, 0);
	json_decref(j);
	return 0;
}

static void print_event(const struct pw_event *ev, int json)
{
	if (json) {
		print_json(ev->json, 1);
		return;
	}
	printf("%-6lld %-26s %-22s", (long long)ev->id, ev->date, ev->category);
	if (ev->series_id)
		printf(" series=%lld", (long long)ev->series_id);
	if (ev->patch_id)
		printf(" patch=%lld", (long long)ev->patch_id);
	if (ev->cover_id)
		printf(" cover=%lld", (long long)ev->cover_id);
	if (ev->comment_id)
		printf(" comment=%lld", (long long)ev->comment_id);
	if (ev->check_id)
		printf(" check=%lld", (long long)ev->check_id);
	if (ev->current_state)
		printf(" %s->%s", ev->previous_state ? ev->previous_state : "?",
		       ev->current_state);
	putchar('\n');
}

static int on_event(const struct pw_event *ev, void *ctx)
{
	print_event(ev, *(int *)ctx);
	return fflush(stdout) ? pt_error_set(PT_EIO, "cannot write output") : 0;
}

/* Say on stderr that a list came back empty (unless --quiet). */
static void say_none(const struct cli_ctx *ctx, const char *what)
{
	if (!ctx->quiet)
		fprintf(stderr, "%s\n", what);
}

/*
 * The poll's own database, STATE/pw-poll.db (Patchwork's tables only):
 * its position is not the daemon's, which lives in STATE/state.db.
 */
static int poll_db(struct cli_ctx *ctx, struct db **out)
{
	static const struct db_schema *const schemas[] = { &patchwork_schema };
	static const struct db_owners owners = { schemas, 1, NULL };
	struct buf path = BUF_INIT;
	const char *dir;
	int rc;

	rc = cli_state_dir(ctx, &dir);
	if (!rc)
		rc = buf_addf(&path, "%s/pw-poll.db", dir);
	if (!rc)
		rc = db_open(out, path.ptr, &owners);
	buf_free(&path);
	return rc;
}

static int poll_events(struct cli_ctx *ctx, struct pw *pw, const char *project,
		       const struct pw_args *a)
{
	struct db *db = NULL;
	size_t n = 0;
	int rc, json = a->json;

	rc = poll_db(ctx, &db);
	if (!rc)
		rc = pw_events_poll(pw, db, project, a->since, on_event, &json,
				    &n);
	db_close(db);
	if (!rc && !a->json && !ctx->quiet)
		fprintf(stderr, "%zu new event%s\n", n, n == 1 ? "" : "s");
	return rc;
}

static int do_events(struct cli_ctx *ctx, struct pw *pw, const char *project,
		     const struct pw_args *a)
{
	struct buf path = BUF_INIT;
	struct pw_event ev;
	json_t *list = NULL, *e;
	size_t i;
	int rc, json = a->json;

	if (!project || !*project)
		return pt_error_set(PT_EINVAL,
				    "no project: set patchwork.project or "
				    "pass --project");
	if (a->poll)
		return poll_events(ctx, pw, project, a);
	/* one page, newest first, as Patchwork lists them */
	rc = buf_addstr(&path, "events/?project=");
	if (!rc)
		rc = pw_url_encode(&path, project);
	if (!rc && a->since)
		rc = buf_addstr(&path, "&since=");
	if (!rc && a->since)
		rc = pw_url_encode(&path, a->since);
	if (!rc)
		rc = pw_get_json(pw, path.ptr, &list);
	json_array_foreach (list, i, e) {
		pw_event_from_json(&ev, e);
		print_event(&ev, json);
	}
	if (!rc && !json_array_size(list))
		say_none(ctx,
			 a->since ? "no events since that date" : "no events");
	json_decref(list);
	buf_free(&path);
	return rc;
}

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static json_t *patch_json(const struct pw_patch *p)
{
	return json_pack("{s:O, s:O, s:I}", "patch", p->json, "comments",
			 p->comments ? p->comments : json_null(), "mbox_bytes",
			 (json_int_t)p->mbox_len);
}

static void print_patch_line(const struct pw_patch *p)
{
	printf("  %-6lld %-10s %-8s %s\n", (long long)p->id,
	       jstr(p->json, "state"), jstr(p->json, "check"),
	       jstr(p->json, "name"));
	printf("         %zu comment%s, mbox %zu bytes\n",
	       json_array_size(p->comments),
	       json_array_size(p->comments) == 1 ? "" : "s", p->mbox_len);
}

static int do_series(struct pw *pw, int64_t id, int json)
{
	struct pw_series *s;
	json_t *out, *arr;
	size_t i;
	int rc;

	rc = pw_series_fetch(pw, id, &s);
	if (rc)
		return rc;
	if (json) {
		arr = json_array();
		for (i = 0; arr && i < s->npatches; i++)
			json_array_append_new(arr, patch_json(&s->patches[i]));
		out = json_pack("{s:O, s:O, s:O, s:o}", "series", s->json,
				"cover", s->cover ? s->cover : json_null(),
				"cover_comments",
				s->cover_comments ? s->cover_comments
						  : json_null(),
				"patches", arr);
		rc = print_built(out);
	} else {
		printf("series %lld v%lld: %s (%lld/%lld patches)\n",
		       (long long)id,
		       (long long)json_integer_value(
			       json_object_get(s->json, "version")),
		       jstr(s->json, "name"),
		       (long long)json_integer_value(
			       json_object_get(s->json, "received_total")),
		       (long long)json_integer_value(
			       json_object_get(s->json, "total")));
		if (s->cover)
			printf("  cover  %s (%zu comment%s)\n",
			       jstr(s->cover, "name"),
			       json_array_size(s->cover_comments),
			       json_array_size(s->cover_comments) == 1 ? ""
								       : "s");
		for (i = 0; i < s->npatches; i++)
			print_patch_line(&s->patches[i]);
	}
	pw_series_free(s);
	return rc;
}

static int do_patch(struct pw *pw, int64_t id, int json)
{
	struct pw_patch p;
	int rc;

	rc = pw_patch_fetch(pw, id, &p);
	if (rc)
		return rc;
	if (json) {
		rc = print_built(patch_json(&p));
	} else {
		printf("patch %lld: %s\n", (long long)id, jstr(p.json, "name"));
		printf("  msgid   %s\n  date    %s\n  state   %s\n"
		       "  check   %s\n  from    %s <%s>\n",
		       jstr(p.json, "msgid"), jstr(p.json, "date"),
		       jstr(p.json, "state"), jstr(p.json, "check"),
		       jstr(json_object_get(p.json, "submitter"), "name"),
		       jstr(json_object_get(p.json, "submitter"), "email"));
		print_patch_line(&p);
	}
	pw_patch_clear(&p);
	return rc;
}

static int do_checks(const struct cli_ctx *ctx, struct pw *pw, int64_t id,
		     int json)
{
	struct pw_check *c;
	size_t n, i;
	int rc;

	rc = pw_checks_list(pw, id, &c, &n);
	if (rc)
		return rc;
	if (!n)
		say_none(ctx, "no checks");
	for (i = 0; i < n; i++) {
		if (json) {
			json_t *o = json_pack(
				"{s:I, s:s, s:s, s:s?, s:s?, s:s, s:s}", "id",
				(json_int_t)c[i].id, "state", c[i].state,
				"context", c[i].context, "description",
				c[i].description, "target_url", c[i].target_url,
				"date", c[i].date, "user", c[i].user);

			if (o)
				print_json(o, 1);
			json_decref(o);
			continue;
		}
		printf("%-6lld %-8s %-22s %s%s%s\n", (long long)c[i].id,
		       c[i].state, c[i].context,
		       c[i].description ? c[i].description : "",
		       c[i].target_url ? "  " : "",
		       c[i].target_url ? c[i].target_url : "");
	}
	pw_checks_free(c, n);
	return 0;
}

static int do_check(struct pw *pw, int64_t id, const struct pw_args *a)
{
	int64_t cid = 0;
	int posted = 0, rc;

	rc = pw_check_post(pw, id, a->state, a->context, a->description,
			   a->target_url, &posted, &cid);
	if (rc)
		return rc;
	if (a->json)
		printf("{\"patch\": %lld, \"check\": %lld, \"posted\": %s}\n",
		       (long long)id, (long long)cid,
		       posted ? "true" : "false");
	else if (posted)
		printf("posted check %lld on patch %lld\n", (long long)cid,
		       (long long)id);
	else
		printf("patch %lld already has this check (%lld); not posted "
		       "again\n",
		       (long long)id, (long long)cid);
	return 0;
}

int cmd_pw(int argc, char **argv, struct cli_ctx *ctx)
{
	struct pw_args a;
	struct pw *pw = NULL;
	char *project = NULL;
	int64_t id = 0;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return opt_exit(rc);
	if (a.id && (rc = parse_id(a.id, &id)))
		return rc;
	if (open_pw(ctx, &a, &pw, &project))
		return cli_fail_last();
	if (!strcmp(a.sub, "events"))
		rc = do_events(ctx, pw, project, &a);
	else if (!strcmp(a.sub, "series"))
		rc = do_series(pw, id, a.json);
	else if (!strcmp(a.sub, "patch"))
		rc = do_patch(pw, id, a.json);
	else if (!strcmp(a.sub, "checks"))
		rc = do_checks(ctx, pw, id, a.json);
	else
		rc = do_check(pw, id, &a);
	pw_free(pw);
	free(project);
	return rc ? cli_fail_last() : EXIT_OK;
}
