/*
 * test_patchwork.c - the Patchwork client against the stand-in loaded
 * with tests/data/pw: version negotiation, paging over more than three
 * pages, events resumed after a restart without reprocessing (equal
 * timestamps and a failing handler included), series retrieval with the
 * mbox through its redirect or the mails only from the series mbox,
 * checks deduplicated against the server (also after a post whose
 * answer was lost; a known-new check posted unread), every fault switch, and
 * the error messages (token refused, not a maintainer, 400, 404) with
 * the token never in them.
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

#include "scoring/store/db.h"
#include "bot/patchwork/patchwork.h"
#include "pwsim.h"
#include "bot/cmd/schema.h"

#define TOKEN "tok-bot-5f0e9c1d2a7b"
#define TOKEN_NOBODY "tok-nobody-77aa01"

static struct pwsim sim;

static struct pw *client(const char *token, unsigned per_page)
{
	struct pw *pw = pwsim_client(&sim, token, per_page, 40);

	assert_non_null(pw);
	return pw;
}

static void no_token(void)
{
	assert_null(strstr(pt_error_last(), "5f0e9c1d2a7b"));
	assert_null(strstr(pt_error_last(), "77aa01"));
}

static void test_version_and_paging(void **state)
{
	struct pw *pw = client(TOKEN, 3);
	const char *v;
	json_t *list = NULL;
	int before;

	(void)state;
	assert_int_equal(pw_api_version(pw, &v), 0);
	assert_string_equal(v, "1.3");
	before = pwsim_count(&sim, "GET", "/api/1.3/events/");
	assert_int_equal(pw_get_list(pw, "events/?project=test&order=date",
				     &list),
			 0);
	/* 14 events in pages of 3: five pages, all followed */
	assert_int_equal(json_array_size(list), 14);
	assert_int_equal(json_integer_value(
				 json_object_get(json_array_get(list, 0),
						 "id")),
			 1);
	assert_int_equal(json_integer_value(
				 json_object_get(json_array_get(list, 13),
						 "id")),
			 14);
	assert_int_equal(pwsim_count(&sim, "GET", "/api/1.3/events/") - before,
			 5);
	assert_int_equal(pwsim_count(&sim, "GET", "page=5"), 1);
	json_decref(list);

	/* a Link to another server is not followed with the token */
	assert_int_equal(pw_get_json(pw, "http://203.0.113.9/api/", &list),
			 PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "another server"));
	{
		char other[128];

		/* same host, other port: another server too */
		snprintf(other, sizeof(other), "http://127.0.0.1:%d1/api/",
			 sim.port);
		assert_int_equal(pw_get_json(pw, other, &list), PT_EINVAL);
		/* same authority over https: our scheme is kept */
		snprintf(other, sizeof(other), "https://127.0.0.1:%d/api/1.3/",
			 sim.port);
		assert_int_equal(pw_get_json(pw, other, &list), 0);
		assert_true(json_is_object(list));
		json_decref(list);
	}
	pw_free(pw);
	pw_free(NULL);
}

static void test_link_header(void **state)
{
	char *u;

	(void)state;
	/* as Patchwork 3.1.3 sends it (DRF: sorted, encoded query) */
	u = pw_link_next("<http://h/api/1.3/series/?page=3&per_page=2>; "
			 "rel=\"next\", <http://h/api/1.3/series/?per_page="
			 "2>; rel=\"prev\", <http://h/api/1.3/series/?page=1"
			 "&per_page=2>; rel=\"first\"");
	assert_string_equal(u, "http://h/api/1.3/series/?page=3&per_page=2");
	free(u);
	assert_null(pw_link_next("<http://h/a/?page=1>; rel=\"first\", "
				 "<http://h/a/?page=1>; rel=\"last\""));
	assert_null(pw_link_next(""));
	assert_null(pw_link_next("<http://h/a/; rel=\"next\""));
	u = pw_link_next("<http://h/x>;rel=next");
	assert_string_equal(u, "http://h/x");
	free(u);
}

static void test_dates(void **state)
{
	int64_t s;
	long us;

	(void)state;
	assert_int_equal(pw_parse_date("2026-11-01T11:00:00", &s, &us), 0);
	assert_int_equal(s, 1793530800);
	assert_int_equal(us, 0);
	assert_int_equal(pw_parse_date("2026-12-03T06:57:26.580588", &s, &us),
			 0);
	assert_int_equal(us, 580588);
	assert_int_equal(pw_parse_date("2026-12-03T06:57:26.5", &s, &us), 0);
	assert_int_equal(us, 500000);
	assert_int_equal(pw_parse_date("yesterday", &s, &us), PT_EINVAL);
	assert_int_equal(pw_parse_date("2026-13-01T00:00:00", &s, &us),
			 PT_EINVAL);
	assert_int_equal(pw_parse_date("2026-11-01T11:00:00+02:00", &s, &us),
			 PT_EINVAL);
}

/* since= in the one form a real Patchwork 3.1.3 on SQLite filters by. */
static void test_since_param(void **state)
{
	static const char *const ok[][2] = {
		{ "2026-12-05", "2026-12-05T00:00:00" },
		{ "2026-12-05T07:08:09", "2026-12-05T07:08:09" },
		{ "2026-12-05T07:08:09Z", "2026-12-05T07:08:09" },
		{ "2026-12-05T07:08:09+00:00", "2026-12-05T07:08:09" },
		{ "2026-12-05T07:08:09.25Z", "2026-12-05T07:08:09.250000" },
		{ "2026-12-05T07:08:09.000001", "2026-12-05T07:08:09.000001" },
	};
	static const char *const bad[] = {
		"yesterday",	    "2026-12-5",
		"2026-12-05T07:08", "2026-12-05T07:08:09+02:00",
		"2026-12-05 extra", ""
	};
	char out[PW_SINCE_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(pw_since_param(ok[i][0], out), 0);
		assert_string_equal(out, ok[i][1]);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(pw_since_param(bad[i], out), PT_EINVAL);
		assert_non_null(strstr(pt_error_last(), "is not a date"));
	}
	pt_error_clear();
}

struct seen {
	int64_t ids[64];
	int n;
	int64_t fail_on;
};

static int on_event(const struct pw_event *ev, void *ctx)
{
	struct seen *s = ctx;

	if (ev->id == s->fail_on)
		return pt_error_set(PT_EIO, "handler refused event %lld",
				    (long long)ev->id);
	assert_true(s->n < 64);
	s->ids[s->n++] = ev->id;
	return 0;
}

static void test_events_resume(void **state)
{
	char dbpath[] = "/tmp/pt-pwtest-XXXXXX";
	char file[64];
	struct seen s;
	struct db *db;
	struct pw *pw;
	size_t n;
	int64_t last_id;
	char *last_date;
	int fd, i;

	(void)state;
	fd = mkstemp(dbpath);
	assert_true(fd >= 0);
	close(fd);
	snprintf(file, sizeof(file), "%s.db", dbpath);

	/* first run: a handler failure on event 6 stops the poll there */
	memset(&s, 0, sizeof(s));
	s.fail_on = 6;
	assert_int_equal(db_open(&db, file, &bot_db_owners), 0);
	pw = client(TOKEN, 4);
	assert_int_equal(pw_events_poll(pw, db, "test", NULL, on_event, &s, &n),
			 PT_EIO);
	assert_int_equal(n, 5);
	assert_int_equal(s.n, 5);
	pw_free(pw);
	db_close(db);

	/* "restart": new client and database handle; 6..14 exactly once */
	memset(&s, 0, sizeof(s));
	assert_int_equal(db_open(&db, file, &bot_db_owners), 0);
	pw = client(TOKEN, 4);
	assert_int_equal(pw_events_poll(pw, db, "test", NULL, on_event, &s, &n),
			 0);
	assert_int_equal(n, 9);
	for (i = 0; i < s.n; i++)
		assert_int_equal(s.ids[i], 6 + i);
	assert_int_equal(pw_events_position(pw, db, "test", &last_id,
					    &last_date),
			 0);
	assert_int_equal(last_id, 14);
	free(last_date);
	pw_free(pw);
	db_close(db);

	/* a configured API version too old for events is refused */
	{
		struct pw_opts o;
		struct pw *old = NULL;

		memset(&o, 0, sizeof(o));
		o.url = sim.url;
		o.project = "test";
		o.api_version = "1.0";
		assert_int_equal(pw_new(&old, &o), 0);
		assert_int_equal(db_open(&db, file, &bot_db_owners), 0);
		assert_int_equal(pw_events_poll(old, db, "test", NULL, on_event,
						&s, &n),
				 PT_EINVAL);
		assert_non_null(strstr(pt_error_last(), "1.1 or newer"));
		db_close(db);
		pw_free(old);
	}

	/* restart again: nothing new, nothing reprocessed */
	memset(&s, 0, sizeof(s));
	assert_int_equal(db_open(&db, file, &bot_db_owners), 0);
	pw = client(TOKEN, 4);
	assert_int_equal(pw_events_poll(pw, db, "test", NULL, on_event, &s, &n),
			 0);
	assert_int_equal(n, 0);

	/*
	 * Two events stamped with the same time, the second arriving after
	 * the first was handled: since= is inclusive, so the first comes
	 * back and must be skipped by id.
	 */
	assert_int_equal(pwsim_control(&sim, "{\"freeze_clock\": "
					     "\"2030-01-01T00:00:00\"}"),
			 0);
	assert_int_equal(pwsim_import(&sim, "pw/extra/07-ack.eml"), 0);
	assert_int_equal(pw_events_poll(pw, db, "test", NULL, on_event, &s, &n),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(s.ids[0], 15);
	pw_free(pw);
	db_close(db);
	assert_int_equal(db_open(&db, file, &bot_db_owners), 0);
	pw = client(TOKEN, 4);
	assert_int_equal(pwsim_import(&sim, "pw/extra/08-tested.eml"), 0);
	assert_int_equal(pw_events_poll(pw, db, "test", NULL, on_event, &s, &n),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ids[1], 16);
	assert_int_equal(pwsim_count(&sim, "GET",
				     "since=2030-01-01T00%3A00%3A00"),
			 1);
	assert_int_equal(pwsim_control(&sim, "{\"freeze_clock\": null}"), 0);
	pw_free(pw);
	db_close(db);
	unlink(file);
	snprintf(file, sizeof(file), "%s.db-wal", dbpath);
	unlink(file);
	snprintf(file, sizeof(file), "%s.db-shm", dbpath);
	unlink(file);
	unlink(dbpath);
}

static void test_series(void **state)
{
	struct pw *pw = client(NULL, 2);
	struct pw_series *s;
	struct pw_patch p;
	int before;

	(void)state;
	before = pwsim_count(&sim, "GET", "/mbox/");
	assert_int_equal(pw_series_fetch(pw, 1, &s), 0);
	assert_int_equal(s->npatches, 3);
	assert_non_null(s->cover);
	assert_string_equal(json_string_value(json_object_get(s->json, "name")),
			    "widget: add frobnication");
	/* the Acked-by reply test_events_resume imported */
	assert_int_equal(json_array_size(s->cover_comments), 1);
	assert_int_equal(s->patches[0].id, 1);
	assert_int_equal(s->patches[2].id, 3);
	assert_string_equal(
		json_string_value(json_object_get(s->patches[1].json, "name")),
		"[2/3] widget: frobnicate on open");
	assert_int_equal(strncmp(s->patches[0].mbox, "From patchwork ", 15), 0);
	assert_non_null(strstr(s->patches[2].mbox, "+int frob_3;"));
	/* and parsed into struct patch */
	assert_non_null(s->patches[1].parsed);
	assert_string_equal(s->patches[1].parsed->subject.clean,
			    "widget: frobnicate on open");
	assert_int_equal(s->patches[1].parsed->subject.number, 2);
	assert_int_equal(s->patches[1].parsed->subject.total, 3);
	assert_int_equal(s->patches[1].parsed->nfiles, 1);
	assert_int_equal(s->patches[1].parsed->added, 1);
	assert_string_equal(s->patches[1].parsed->message_id,
			    "20261102-alice-2@example.org");
	/* each mbox through /patch/ID/mbox/ and its redirect */
	assert_int_equal(pwsim_count(&sim, "GET", "/mbox/") - before, 6);
	assert_int_equal(pwsim_count(&sim, "GET", "/patch/2/mbox/"), 1);
	pw_series_free(s);
	pw_series_free(NULL);

	/* the fix: its review reply is a comment and merged into the mbox */
	assert_int_equal(pw_patch_fetch(pw, 4, &p), 0);
	assert_int_equal(json_array_size(p.comments), 1);
	assert_non_null(strstr(p.mbox, "Reviewed-by: Carol Reviewer"));
	assert_int_equal(patch_count_trailers(p.parsed, TRAILER_REVIEWED), 1);
	assert_true(patch_is_tagged_fix(p.parsed));
	pw_patch_clear(&p);

	assert_int_equal(pw_series_fetch(pw, 99, &s), PT_ENOTFOUND);
	assert_null(s);
	assert_non_null(strstr(pt_error_last(), "/api/1.3/series/99/"));
	pw_free(pw);
}

/* The same mail, whichever way it was read. */
static void same_patch(const struct patch *a, const struct patch *b)
{
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a->message_id, b->message_id);
	assert_string_equal(a->subject.clean, b->subject.clean);
	assert_int_equal(a->subject.number, b->subject.number);
	assert_int_equal(a->nfiles, b->nfiles);
	assert_int_equal(a->added, b->added);
	assert_int_equal(a->removed, b->removed);
	assert_int_equal(a->ntrailers, b->ntrailers);
	assert_int_equal(patch_count_trailers(a, TRAILER_REVIEWED),
			 patch_count_trailers(b, TRAILER_REVIEWED));
}

/* The mails only: /series/ID/ and the series mbox, nothing per patch. */
static void test_series_mails(void **state)
{
	struct pw *pw = client(NULL, 0);
	struct pw_series *full, *s;
	int all, mbox, series;
	size_t i;

	(void)state;
	assert_int_equal(pw_series_fetch(pw, 1, &full), 0);
	all = pwsim_count(&sim, "GET", NULL);
	mbox = pwsim_count(&sim, "GET", "/series/1/mbox/");
	series = pwsim_count(&sim, "GET", "/api/1.3/series/1/");
	assert_int_equal(pw_series_fetch_mails(pw, 1, &s), 0);
	assert_int_equal(pwsim_count(&sim, "GET", NULL) - all, 2);
	assert_int_equal(pwsim_count(&sim, "GET", "/series/1/mbox/") - mbox, 1);
	assert_int_equal(pwsim_count(&sim, "GET", "/api/1.3/series/1/") -
				 series,
			 1);
	assert_int_equal(s->npatches, full->npatches);
	for (i = 0; i < s->npatches; i++) {
		assert_int_equal(s->patches[i].id, full->patches[i].id);
		assert_null(s->patches[i].json);
		assert_non_null(s->patches[i].mbox);
		same_patch(s->patches[i].parsed, full->patches[i].parsed);
	}
	/* the cover letter as the series lists it */
	assert_string_equal(
		json_string_value(json_object_get(s->cover, "msgid")),
		json_string_value(json_object_get(full->cover, "msgid")));
	pw_series_free(s);
	pw_series_free(full);

	/* the fix: the review's trailer is in the series mbox too */
	assert_int_equal(pw_series_fetch_mails(pw, 2, &s), 0);
	assert_int_equal(s->npatches, 1);
	assert_int_equal(s->patches[0].id, 4);
	assert_null(s->cover);
	assert_int_equal(patch_count_trailers(s->patches[0].parsed,
					      TRAILER_REVIEWED),
			 1);
	pw_series_free(s);

	/* a patch the series mbox lacks is read from its own mbox */
	assert_int_equal(pw_series_fetch(pw, 1, &full), 0);
	assert_true(full->npatches >= 2);
	assert_int_equal(pwsim_control(&sim, "{\"mbox_short_next\": 1}"), 0);
	mbox = pwsim_count(&sim, "GET", "/mbox/");
	all = pwsim_count(&sim, "GET", NULL);
	assert_int_equal(pw_series_fetch_mails(pw, 1, &s), 0);
	assert_int_equal(pwsim_count(&sim, "GET", NULL) - all, 3);
	assert_int_equal(pwsim_count(&sim, "GET", "/mbox/") - mbox, 2);
	assert_int_equal(s->npatches, full->npatches);
	for (i = 0; i < s->npatches; i++) {
		assert_int_equal(s->patches[i].id, full->patches[i].id);
		assert_non_null(s->patches[i].mbox);
		same_patch(s->patches[i].parsed, full->patches[i].parsed);
	}
	pw_series_free(s);
	pw_series_free(full);

	assert_int_equal(pw_series_fetch_mails(pw, 99, &s), PT_ENOTFOUND);
	assert_null(s);
	pw_free(pw);
}

/* pw_series_ids and pw_checks_from_json on documents, no server */
static void test_json_to_structs(void **state)
{
	struct pw_check *c;
	int64_t *ids, cover;
	json_t *j;
	size_t n;

	(void)state;
	j = json_loads("{\"cover_letter\": {\"id\": 7}, \"patches\": "
		       "[{\"id\": 8}, {\"id\": 9, \"name\": \"x\"}]}",
		       0, NULL);
	assert_int_equal(pw_series_ids(&ids, &n, &cover, j), 0);
	assert_int_equal(cover, 7);
	assert_int_equal(n, 2);
	assert_int_equal(ids[0], 8);
	assert_int_equal(ids[1], 9);
	free(ids);
	json_decref(j);

	j = json_loads("{\"cover_letter\": null, \"patches\": []}", 0, NULL);
	assert_int_equal(pw_series_ids(&ids, &n, &cover, j), 0);
	assert_int_equal(cover, 0);
	assert_int_equal(n, 0);
	assert_null(ids);
	json_decref(j);

	/* a patch the client could not fetch is refused, not GET patches/0/ */
	j = json_loads("{\"patches\": [{\"id\": 3}, {\"id\": \"4\"}]}", 0,
		       NULL);
	assert_int_equal(pw_series_ids(&ids, &n, &cover, j), PT_EINVAL);
	assert_null(ids);
	assert_int_equal(n, 0);
	assert_non_null(strstr(pt_error_last(), "positive id"));
	json_decref(j);
	j = json_loads("{\"patches\": [5]}", 0, NULL);
	assert_int_equal(pw_series_ids(&ids, &n, &cover, j), PT_EINVAL);
	json_decref(j);
	j = json_loads("{\"cover_letter\": {\"id\": -1}}", 0, NULL);
	assert_int_equal(pw_series_ids(&ids, &n, &cover, j), PT_EINVAL);
	json_decref(j);

	j = json_loads("[{\"id\": 1, \"state\": \"warning\", \"context\": "
		       "\"patchtriage-risk\", \"description\": null, "
		       "\"user\": {\"username\": \"bot\"}, \"date\": "
		       "\"2026-11-02T09:00:00\"}, 17, {\"user\": 1}]",
		       0, NULL);
	assert_int_equal(pw_checks_from_json(&c, &n, j), 0);
	assert_int_equal(n, 3);
	assert_int_equal(c[0].id, 1);
	assert_string_equal(c[0].state, "warning");
	assert_string_equal(c[0].user, "bot");
	assert_null(c[0].description);
	/* what is not a check object reads as an empty one */
	assert_string_equal(c[1].context, "");
	assert_string_equal(c[2].user, "");
	pw_checks_free(c, n);
	json_decref(j);
	j = json_loads("{\"id\": 1}", 0, NULL);
	assert_int_equal(pw_checks_from_json(&c, &n, j), PT_EINVAL);
	assert_null(c);
	json_decref(j);
}

static int count_checks(struct pw *pw, int64_t patch, const char *ctx)
{
	struct pw_check *c;
	size_t n, i;
	int k = 0;

	assert_int_equal(pw_checks_list(pw, patch, &c, &n), 0);
	for (i = 0; i < n; i++)
		k += !strcmp(c[i].context, ctx);
	pw_checks_free(c, n);
	return k;
}

static void test_checks(void **state)
{
	struct pw *pw = client(TOKEN, 0);
	int64_t id = 0, id2 = 0;
	int posted, get;
	char *d;

	(void)state;
	assert_int_equal(pw_check_post(pw, 4, "warning", "patchtriage-risk",
				       "p(bug)=0.41: late in the cycle",
				       "https://example.org/r/4", &posted, &id),
			 0);
	assert_int_equal(posted, 1);
	assert_true(id > 0);
	/* the same again: found on the server, not posted */
	assert_int_equal(pw_check_post(pw, 4, "warning", "patchtriage-risk",
				       "p(bug)=0.41: late in the cycle",
				       "https://example.org/r/4", &posted,
				       &id2),
			 0);
	assert_int_equal(posted, 0);
	assert_int_equal(id2, id);
	assert_int_equal(count_checks(pw, 4, "patchtriage-risk"), 1);
	/* another state is a new check */
	assert_int_equal(pw_check_post(pw, 4, "success", "patchtriage-risk",
				       "p(bug)=0.05", NULL, &posted, NULL),
			 0);
	assert_int_equal(posted, 1);
	assert_int_equal(count_checks(pw, 4, "patchtriage-risk"), 2);
	/* back to the first text: the newest check differs, so it is
	   posted again (Patchwork shows the newest of a context) */
	assert_int_equal(pw_check_post(pw, 4, "warning", "patchtriage-risk",
				       "p(bug)=0.41: late in the cycle",
				       "https://example.org/r/4", &posted,
				       &id2),
			 0);
	assert_int_equal(posted, 1);
	assert_true(id2 > id);
	assert_int_equal(count_checks(pw, 4, "patchtriage-risk"), 3);

	/*
	 * Crash simulation: the server stores the check but the answer is
	 * lost (connection reset after the work).  The retry re-reads the
	 * checks and finds it: no duplicate.
	 */
	assert_int_equal(pwsim_control(&sim, "{\"drop_response_next\": 1, "
					     "\"method\": \"POST\"}"),
			 0);
	assert_int_equal(pw_check_post(pw, 4, "success", "patchtriage-stable",
				       "stable candidate: p(fix)=0.93", NULL,
				       &posted, &id),
			 0);
	assert_int_equal(posted, 0);
	assert_int_equal(count_checks(pw, 4, "patchtriage-stable"), 1);
	assert_int_equal(pwsim_count(&sim, "POST", "/patches/4/checks/"), 4);

	/* a 500 on the post: retried after re-reading, one check */
	assert_int_equal(pwsim_control(&sim, "{\"fail_next\": 1, "
					     "\"method\": \"POST\"}"),
			 0);
	assert_int_equal(pw_check_post(pw, 4, "pending", "patchtriage-stable",
				       "scoring", NULL, &posted, &id),
			 0);
	assert_int_equal(posted, 1);
	assert_int_equal(count_checks(pw, 4, "patchtriage-stable"), 2);
	assert_int_equal(pwsim_control(&sim, "{\"clear\": true}"), 0);

	/*
	 * A check the caller knows is new: posted without reading the
	 * patch's checks; a retry after a lost answer reads them first and
	 * finds it.
	 */
	get = pwsim_count(&sim, "GET", "/patches/2/checks/");
	assert_int_equal(pw_check_post_new(pw, 2, "success", "patchtriage-new",
					   "p(bug) 0.10", NULL, &posted, &id),
			 0);
	assert_int_equal(posted, 1);
	assert_true(id > 0);
	assert_int_equal(pwsim_count(&sim, "GET", "/patches/2/checks/"), get);
	assert_int_equal(pwsim_control(&sim, "{\"drop_response_next\": 1, "
					     "\"method\": \"POST\"}"),
			 0);
	assert_int_equal(pw_check_post_new(pw, 2, "warning", "patchtriage-new",
					   "p(bug) 0.60", NULL, &posted, &id2),
			 0);
	assert_int_equal(posted, 0);
	assert_true(id2 > id);
	assert_int_equal(pwsim_count(&sim, "GET", "/patches/2/checks/"),
			 get + 1);
	assert_int_equal(count_checks(pw, 2, "patchtriage-new"), 2);
	assert_int_equal(pwsim_control(&sim, "{\"clear\": true}"), 0);
	/* capped descriptions compare as posted */
	assert_true(pw_same_description(pw,
					"0123456789012345678901234567890"
					"123456789-a",
					"0123456789012345678901234567890"
					"123456789-b"));
	assert_false(pw_same_description(pw, "p(bug) 0.10", "p(bug) 0.11"));

	/* descriptions are capped (40 here) on a UTF-8 boundary */
	assert_int_equal(pw_check_post(pw, 3, "warning", "patchtriage-risk",
				       "0123456789012345678901234567890123"
				       "45678\xc3\xa9tail",
				       NULL, &posted, &id),
			 0);
	{
		struct pw_check *c;
		size_t n;

		assert_int_equal(pw_checks_list(pw, 3, &c, &n), 0);
		assert_int_equal(n, 1);
		assert_int_equal(strlen(c[0].description), 39);
		pw_checks_free(c, n);
	}
	/* not UTF-8 (continuation bytes only): cut at max, not emptied */
	d = pw_description_cap("\x89\x89\x89\x89\x89\x89", 4);
	assert_int_equal(strlen(d), 4);
	free(d);
	d = pw_description_cap("ab\xe2\x80\x94", 4);
	assert_string_equal(d, "ab");
	free(d);
	d = pw_description_cap("abc", 10);
	assert_string_equal(d, "abc");
	free(d);
	assert_null(pw_description_cap(NULL, 10));
	pw_free(pw);
}

static void test_errors(void **state)
{
	struct pw *pw;
	int posted;
	json_t *j = NULL;
	char *log;

	(void)state;
	/* a token Patchwork does not know */
	pw = client("tok-wrong-5f0e9c1d2a7b", 0);
	assert_int_equal(pw_check_post(pw, 4, "success", "ctx", NULL, NULL,
				       &posted, NULL),
			 PT_EAUTH);
	assert_non_null(strstr(pt_error_last(), "refused the token for "
						"project 'test': check "
						"patchwork.token-file"));
	no_token();
	pw_free(pw);

	/* a valid token of a user who maintains nothing */
	pw = client(TOKEN_NOBODY, 0);
	assert_int_equal(pw_check_post(pw, 4, "success", "ctx", NULL, NULL,
				       &posted, NULL),
			 PT_EAUTH);
	assert_non_null(
		strstr(pt_error_last(), "not a maintainer of project 'test'"));
	no_token();
	pw_free(pw);

	/* no token at all */
	pw = client(NULL, 0);
	assert_int_equal(pw_check_post(pw, 4, "success", "ctx", NULL, NULL,
				       &posted, NULL),
			 PT_EAUTH);
	assert_non_null(strstr(pt_error_last(), "set patchwork.token-file"));
	pw_free(pw);

	pw = client(TOKEN, 0);
	/* 400 field errors are shown */
	assert_int_equal(pw_check_post(pw, 4, "broken", "ci/build", NULL, NULL,
				       &posted, NULL),
			 PT_EINVAL);
	assert_non_null(strstr(pt_error_last(),
			       "state: \"broken\" is not a valid choice."));
	assert_non_null(strstr(pt_error_last(), "context: Enter a valid"));
	no_token();
	/* 404 names the URL */
	assert_int_equal(pw_get_json(pw, "patches/9999/", &j), PT_ENOTFOUND);
	assert_non_null(strstr(pt_error_last(), "/api/1.3/patches/9999/"));
	assert_int_equal(pw_check_post(pw, 9999, "success", "ctx", NULL, NULL,
				       &posted, NULL),
			 PT_ENOTFOUND);
	/* truncated JSON: reported, not crashed on */
	assert_int_equal(pwsim_control(&sim, "{\"truncate_next\": 1}"), 0);
	assert_int_equal(pw_get_json(pw, "patches/1/", &j), PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "invalid JSON"));
	assert_null(j);
	/* an HTML error page for longer than the retries: reported */
	assert_int_equal(pwsim_control(&sim, "{\"html_next\": 20}"), 0);
	assert_int_equal(pw_get_json(pw, "patches/1/", &j), PT_ENET);
	assert_non_null(strstr(pt_error_last(), "HTTP 502 (text/html"));
	assert_int_equal(pwsim_control(&sim, "{\"clear\": true}"), 0);
	/* each of the others survived: 500, 429, reset, a short delay */
	assert_int_equal(pwsim_control(&sim, "{\"fail_next\": 1, "
					     "\"rate_limit_next\": 1, "
					     "\"retry_after\": 0, "
					     "\"reset_next\": 1}"),
			 0);
	assert_int_equal(pw_get_json(pw, "patches/1/", &j), 0);
	json_decref(j);
	assert_int_equal(pwsim_control(&sim, "{\"clear\": true, "
					     "\"delay_ms\": 100}"),
			 0);
	assert_int_equal(pw_get_json(pw, "patches/1/", &j), 0);
	json_decref(j);
	assert_int_equal(pwsim_control(&sim, "{\"clear\": true}"), 0);
	pw_free(pw);

	/* the token went only in the Authorization header */
	log = pwsim_log(&sim);
	assert_null(strstr(log, "5f0e9c1d2a7b"));
	assert_null(strstr(log, "77aa01"));
	free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_and_paging),
		cmocka_unit_test(test_link_header),
		cmocka_unit_test(test_dates),
		cmocka_unit_test(test_since_param),
		cmocka_unit_test(test_events_resume),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_series_mails),
		cmocka_unit_test(test_json_to_structs),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_errors),
	};

	return PWSIM_MAIN(&sim, tests);
}
