/*
 * test_pw_hostile.c - the Patchwork client against hostile answers of
 * the stand-in (its canned_next fault): a Link to the same page or back
 * to an earlier one, a stop request between pages, an mbox redirected
 * to another origin, a redirect where JSON was expected, and an events
 * page with a NUL in a string and an event whose id is not a number
 * (warned of once, however often it comes back; the position held
 * before such events for a while, then given up), and the caps of an
 * answer by what it is.
 * Each case is bounded (few canned answers, a 3 s client timeout and an
 * alarm for the whole program).
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "scoring/store/db.h"
#include "bot/patchwork/patchwork.h"
#include "bot/sys/daemon.h"
#include "bot/sys/log.h"
#include "dbq.h"
#include "pwsim.h"
#include "tmpdir.h"
#include "scoring/store/config.h"
#include "bot/cmd/schema.h"

#define TOKEN "tok-bot-5f0e9c1d2a7b"

static struct pwsim sim;

static struct pw *client(unsigned per_page)
{
	struct pw *pw = pwsim_client(&sim, TOKEN, per_page, 40);

	assert_non_null(pw);
	return pw;
}

/* Serve n canned answers on paths holding match. */
static void canned(const char *match, int n, int status, const char *hdrs,
		   const char *body)
{
	char json[4096];

	snprintf(json, sizeof(json),
		 "{\"clear\": true, \"match\": \"%s\", \"canned_next\": %d, "
		 "\"canned\": {\"status\": %d, \"headers\": {%s}, "
		 "\"body\": \"%s\"}}",
		 match, n, status, hdrs, body);
	assert_int_equal(pwsim_control(&sim, json), 0);
}

/* One answer of byte c, size times over, on a path holding match. */
static void canned_big(const char *match, char c, long size)
{
	char json[512];

	snprintf(json, sizeof(json),
		 "{\"clear\": true, \"match\": \"%s\", \"canned_next\": 1, "
		 "\"canned\": {\"status\": 200, \"body\": \"%c\", "
		 "\"repeat\": %ld}}",
		 match, c, size);
	assert_int_equal(pwsim_control(&sim, json), 0);
}

static void clear(void)
{
	assert_int_equal(pwsim_control(&sim, "{\"clear\": true}"), 0);
}

static void test_link_to_self(void **state)
{
	struct pw *pw = client(0);
	json_t *j = NULL;
	int before = pwsim_count(&sim, "GET", "/projects/");

	(void)state;
	/* the body: one project, so that only the Link is wrong */
	canned("/api/1.3/projects/", 20, 200,
	       "\"Link\": \"<{url}>; rel=\\\"next\\\"\"", "[{\\\"id\\\": 1}]");
	assert_int_equal(pw_get_list(pw, "projects/", &j), PT_EINVAL);
	assert_null(j);
	assert_non_null(strstr(pt_error_last(), sim.url));
	assert_non_null(strstr(pt_error_last(), "already fetched"));
	assert_int_equal(pwsim_count(&sim, "GET", "/projects/") - before, 1);
	clear();
	pw_free(pw);
}

static void test_link_back(void **state)
{
	struct pw *pw = client(1);
	json_t *j = NULL;
	char hdr[512];

	(void)state;
	/* page 2 links back to page 1 */
	snprintf(hdr, sizeof(hdr),
		 "\"Link\": \"<%s/api/1.3/events/?project=test&per_page=1>; "
		 "rel=\\\"next\\\"\"",
		 sim.url);
	canned("page=2", 20, 200, hdr, "[{\\\"id\\\": 1}]");
	assert_int_equal(pw_get_list(pw, "events/?project=test", &j),
			 PT_EINVAL);
	assert_null(j);
	assert_non_null(strstr(pt_error_last(), "already fetched"));
	clear();
	pw_free(pw);
}

/* A bound loopback socket that does not listen: a port nobody answers. */
static int dead_port(int *fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(*fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(*fd, (struct sockaddr *)&a, &len), 0);
	return ntohs(a.sin_port);
}

static void test_foreign_redirect(void **state)
{
	struct pw *pw = client(0);
	struct buf b = BUF_INIT;
	char url[128], hdr[256], origin[64];
	int fd, port = dead_port(&fd);

	(void)state;
	/* to the same origin: followed */
	snprintf(url, sizeof(url), "%s/patch/1/mbox/", sim.url);
	assert_int_equal(pw_get_text(pw, url, &b), 0);
	assert_int_equal(strncmp(b.ptr, "From patchwork ", 15), 0);
	buf_reset(&b);

	/* to another port of the same host: refused, named */
	snprintf(origin, sizeof(origin), "http://127.0.0.1:%d", port);
	snprintf(hdr, sizeof(hdr), "\"Location\": \"%s/evil/mbox/\"", origin);
	canned("/series/1/mbox/", 1, 302, hdr, "");
	snprintf(url, sizeof(url), "%s/series/1/mbox/", sim.url);
	assert_int_equal(pw_get_text(pw, url, &b), PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), url));
	assert_non_null(strstr(pt_error_last(), origin));
	assert_non_null(strstr(pt_error_last(), "another origin"));
	assert_int_equal(b.len, 0);
	clear();
	close(fd);
	buf_free(&b);
	pw_free(pw);
}

/*
 * Caps by what an answer is: 9 MiB is a fine series mbox (64 MiB) but
 * no events page (8 MiB), refused by size before it is parsed.
 */
static void test_caps_by_kind(void **state)
{
	struct pw *pw = client(0);
	struct buf b = BUF_INIT;
	json_t *j = NULL;
	char url[128];

	(void)state;
	canned_big("/series/1/mbox/", 'x', 9L << 20);
	snprintf(url, sizeof(url), "%s/series/1/mbox/", sim.url);
	assert_int_equal(pw_get_text(pw, url, &b), 0);
	assert_int_equal(b.len, 9u << 20);
	canned_big("/api/1.3/events/", ' ', 9L << 20);
	assert_int_equal(pw_get_list(pw, "events/", &j), PT_ETOOBIG);
	assert_null(j);
	assert_non_null(strstr(pt_error_last(), "/events/"));
	assert_non_null(strstr(pt_error_last(), "larger than 8388608 bytes"));
	clear();
	buf_free(&b);
	pw_free(pw);
}

/* text written to path, opened as a configuration */
static struct config *config_from_text(const char *path, const char *text)
{
	struct config *cfg = NULL;
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(config_open(&cfg, path), 0);
	return cfg;
}

/* The caps are configuration keys in MiB; a bad one is named. */
static void test_caps_configured(void **state)
{
	char dir[64], path[128], text[512], *project = NULL;
	struct config *cfg = NULL;
	struct pw *pw = NULL;
	json_t *j = NULL;
	int insecure;

	(void)state;
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "pwcaps"), 0);
	snprintf(path, sizeof(path), "%s/c.conf", dir);
	snprintf(text, sizeof(text),
		 "[patchwork]\n\turl = %s\n\tproject = test\n"
		 "\tmax-page-size = 1\n\tmax-mbox-size = 0\n",
		 sim.url);
	cfg = config_from_text(path, text);
	assert_int_equal(pw_from_config(&pw, cfg, NULL, &project, &insecure),
			 PT_EINVAL);
	assert_non_null(strstr(pt_error_last(), "patchwork.max-mbox-size"));
	assert_non_null(strstr(pt_error_last(), path));
	config_free(cfg);

	text[strlen(text) - strlen("\tmax-mbox-size = 0\n")] = '\0';
	cfg = config_from_text(path, text);
	assert_int_equal(pw_from_config(&pw, cfg, NULL, &project, &insecure),
			 0);
	canned_big("/api/1.3/events/", ' ', 2L << 20);
	assert_int_equal(pw_get_list(pw, "events/", &j), PT_ETOOBIG);
	assert_non_null(strstr(pt_error_last(), "larger than 1048576 bytes"));
	clear();
	pw_free(pw);
	free(project);
	config_free(cfg);
	assert_int_equal(tmpdir_remove(dir), 0);
}

static void test_json_redirect(void **state)
{
	struct pw *pw = client(0);
	json_t *j = NULL;

	(void)state;
	canned("/api/1.3/patches/1/", 1, 302, "\"Location\": \"/login/\"", "");
	assert_int_equal(pw_get_json(pw, "patches/1/", &j), PT_ENET);
	assert_null(j);
	assert_null(strstr(pt_error_last(), "invalid JSON"));
	assert_non_null(strstr(pt_error_last(), "HTTP 302"));
	assert_non_null(strstr(pt_error_last(), "redirect"));
	clear();
	pw_free(pw);
}

struct seen {
	int n;
	int64_t ids[8];
};

static int on_event(const struct pw_event *ev, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 8)
		s->ids[s->n] = ev->id;
	s->n++;
	return 0;
}

#define EV(id, date, pl)                                                     \
	"{\\\"id\\\": " id ", \\\"category\\\": \\\"patch-created\\\", "     \
	"\\\"project\\\": {\\\"id\\\": 1}, \\\"date\\\": \\\"" date "\\\", " \
	"\\\"payload\\\": " pl "}"

static int saved_stderr = -1;

/* Send stderr to a fresh file (path: a mkstemp template). */
static void capture_start(char *path)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	fflush(stderr);
	saved_stderr = dup(2);
	assert_true(saved_stderr >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	close(fd);
}

/* Give stderr back; the lines of the capture that hold needle. */
static int capture_count(const char *path, const char *needle)
{
	char line[1024];
	int n = 0;
	FILE *f;

	fflush(stderr);
	assert_int_equal(dup2(saved_stderr, 2), 2);
	close(saved_stderr);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	unlink(path);
	return n;
}

static void test_events_bad_one(void **state)
{
	char log1[] = "/tmp/pt-pwhostile-log-XXXXXX";
	char log2[] = "/tmp/pt-pwhostile-log-XXXXXX";
	char dbpath[] = "/tmp/pt-pwhostile-XXXXXX";
	char file[64];
	struct seen s;
	struct db *db;
	struct pw *pw = client(0);
	size_t n = 0;
	int fd;

	(void)state;
	fd = mkstemp(dbpath);
	assert_true(fd >= 0);
	close(fd);
	snprintf(file, sizeof(file), "%s.db", dbpath);
	assert_int_equal(db_open(&db, file, &bot_db_owners), 0);
	log_setup(LOG_TO_STDERR, LOG_LVL_INFO);
	canned("/api/1.3/events/", 2, 200, "",
	       "[" EV("101", "2026-12-01T10:00:00",
		      "{\\\"patch\\\": {\\\"id\\\": 1, \\\"name\\\": "
		      "\\\"a\\\\u0000b\\\"}}") ", " EV("\\\"abc\\\"",
						       "2026-12-01T10:00:01",
						       "{}") ", " EV("103",
								     "2026-12-01T10:00:02",
								     "{\\\"patch\\\": {\\\"id\\\": 2}}") "]");
	memset(&s, 0, sizeof(s));
	capture_start(log1);
	assert_int_equal(pw_events_poll(pw, db, "test", "2026-11-01T00:00:00",
					on_event, &s, &n),
			 0);
	assert_int_equal(capture_count(log1, "skipped event"), 2);
	/* the good event handled; the two bad ones skipped, not marked */
	assert_int_equal(s.n, 1);
	assert_int_equal(s.ids[0], 103);
	assert_int_equal(n, 1);
	/* the same page again: nothing new, and no second warning */
	capture_start(log2);
	assert_int_equal(pw_events_poll(pw, db, "test", "2026-11-01T00:00:00",
					on_event, &s, &n),
			 0);
	assert_int_equal(capture_count(log2, "skipped event"), 0);
	assert_int_equal(n, 0);
	assert_int_equal(s.n, 1);
	clear();
	db_close(db);
	unlink(file);
	unlink(dbpath);
	pw_free(pw);
}

#define EVC(id, cat, date, pl)                                               \
	"{\\\"id\\\": " id ", \\\"category\\\": \\\"" cat "\\\", "           \
	"\\\"project\\\": {\\\"id\\\": 1}, \\\"date\\\": \\\"" date "\\\", " \
	"\\\"payload\\\": " pl "}"
#define NUL_PATCH \
	"{\\\"patch\\\": {\\\"id\\\": 1, \\\"name\\\": \\\"a\\\\u0000b\\\"}}"

/* A state database in a fresh temp file (path: a mkstemp template). */
static struct db *state_db(char *path, char *file, size_t size)
{
	struct db *db;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	snprintf(file, size, "%s.db", path);
	assert_int_equal(db_open(&db, file, &bot_db_owners), 0);
	return db;
}

static void state_db_drop(struct db *db, const char *path, const char *file)
{
	char side[80];

	db_close(db);
	unlink(file);
	snprintf(side, sizeof(side), "%s-wal", file);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", file);
	unlink(side);
	unlink(path);
}

/*
 * Events bad only for a while (a NUL, a series-completed whose series
 * is "abc"): the good event after them is handled, but the position
 * waits before them, so the next poll reads them again and, now good,
 * handles them.  Before, the position passed them and they were lost,
 * and the series-completed with no series was marked seen unhandled.
 */
static void test_events_bad_for_a_while(void **state)
{
	char dbpath[] = "/tmp/pt-pwhostile-XXXXXX", file[64];
	struct seen s;
	struct db *db = state_db(dbpath, file, sizeof(file));
	struct pw *pw = client(0);
	char *last = NULL;
	int64_t last_id = 0;
	size_t n = 0;

	(void)state;
	canned("/api/1.3/events/", 1, 200, "",
	       "[" EV("201", "2026-12-01T10:00:00", NUL_PATCH) ", " EVC(
		       "202", "series-completed", "2026-12-01T10:00:01",
		       "{\\\"series\\\": \\\"abc\\\"}") ", " EV("203",
								"2026-12-01T10:00:02",
								"{\\\"patch\\\": "
								"{\\\"id\\\": 3}}") "]");
	memset(&s, 0, sizeof(s));
	assert_int_equal(pw_events_poll(pw, db, "test", "2026-11-01T00:00:00",
					on_event, &s, &n),
			 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.ids[0], 203);
	/* no position yet: the held event at 10:00:00 is the first */
	assert_int_equal(pw_events_position(pw, db, "test", &last_id, &last),
			 PT_ENOTFOUND);
	pt_error_clear();
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM pw_events_held"), 2);
	canned("/api/1.3/events/", 1, 200, "",
	       "[" EV("201", "2026-12-01T10:00:00", "{\\\"patch\\\": {\\\"id\\\": 1}}") ", " EVC(
		       "202", "series-completed", "2026-12-01T10:00:01",
		       "{\\\"series\\\": {\\\"id\\\": 5}}") ", " EV("203",
								    "2026-12-01T10:00:"
								    "02",
								    "{\\\"patch\\\": "
								    "{\\\"id\\\": "
								    "3}}") "]");
	assert_int_equal(pw_events_poll(pw, db, "test", "2026-11-01T00:00:00",
					on_event, &s, &n),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.ids[1], 201);
	assert_int_equal(s.ids[2], 202);
	assert_int_equal(pw_events_position(pw, db, "test", &last_id, &last),
			 0);
	assert_int_equal(last_id, 203);
	free(last);
	/* the holds not met again are over */
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM pw_events_held"), 0);
	clear();
	state_db_drop(db, dbpath, file);
	pw_free(pw);
}

/*
 * An event bad for good holds the position for
 * patchwork.hold-bad-events, then is given up, said once, and the
 * position moves past it.
 */
static void test_events_bad_given_up(void **state)
{
	char dbpath[] = "/tmp/pt-pwhostile-XXXXXX", file[64];
	char log1[] = "/tmp/pt-pwhostile-log-XXXXXX";
	char log2[] = "/tmp/pt-pwhostile-log-XXXXXX";
	struct seen s;
	struct db *db = state_db(dbpath, file, sizeof(file));
	struct pw *pw = client(0);
	char *last = NULL;
	int64_t last_id = 0;
	size_t n = 0;

	(void)state;
	log_setup(LOG_TO_STDERR, LOG_LVL_INFO);
	canned("/api/1.3/events/", 3, 200, "",
	       "[" EV("301", "2026-12-01T10:00:00", NUL_PATCH) ", " EV(
		       "302", "2026-12-01T10:00:01",
		       "{\\\"patch\\\": {\\\"id\\\": 3}}") "]");
	memset(&s, 0, sizeof(s));
	assert_int_equal(pw_events_poll(pw, db, "test", "2026-11-01T00:00:00",
					on_event, &s, &n),
			 0);
	assert_int_equal(pw_events_position(pw, db, "test", &last_id, &last),
			 PT_ENOTFOUND);
	pt_error_clear();
	/* held for longer than the default 6 hours */
	assert_int_equal(db_exec(db, "UPDATE pw_events_held SET first_seen ="
				     " first_seen - 6 * 3600"),
			 0);
	capture_start(log1);
	assert_int_equal(pw_events_poll(pw, db, "test", "2026-11-01T00:00:00",
					on_event, &s, &n),
			 0);
	assert_int_equal(capture_count(log1, "gave up on event 1"), 1);
	assert_int_equal(pw_events_position(pw, db, "test", &last_id, &last),
			 0);
	assert_int_equal(last_id, 302);
	free(last);
	capture_start(log2);
	assert_int_equal(pw_events_poll(pw, db, "test", "2026-11-01T00:00:00",
					on_event, &s, &n),
			 0);
	assert_int_equal(capture_count(log2, "gave up"), 0);
	assert_int_equal(s.n, 1); /* 302 once, 301 never */
	assert_int_equal(dbq_int(db, "SELECT count(*) FROM pw_events_held"
				     " WHERE given_up = 1"),
			 1);
	clear();
	state_db_drop(db, dbpath, file);
	pw_free(pw);
}

/* Last: the stop flag cannot be taken back. */
static void test_stop_between_pages(void **state)
{
	struct pw *pw = client(1);
	json_t *j = NULL;
	int before = pwsim_count(&sim, "GET", "/events/");

	(void)state;
	daemon_request_stop();
	assert_int_equal(pw_get_list(pw, "events/?project=test", &j),
			 PT_EAGAIN);
	assert_null(j);
	assert_non_null(strstr(pt_error_last(), "stop"));
	assert_true(pwsim_count(&sim, "GET", "/events/") - before <= 1);
	pw_free(pw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_to_self),
		cmocka_unit_test(test_link_back),
		cmocka_unit_test(test_foreign_redirect),
		cmocka_unit_test(test_json_redirect),
		cmocka_unit_test(test_caps_by_kind),
		cmocka_unit_test(test_caps_configured),
		cmocka_unit_test(test_events_bad_one),
		cmocka_unit_test(test_events_bad_for_a_while),
		cmocka_unit_test(test_events_bad_given_up),
		cmocka_unit_test(test_stop_between_pages),
	};

	alarm(120); /* a walk that never ends must not hang the suite */
	return PWSIM_MAIN(&sim, tests);
}
