/*
 * test_http.c - the HTTP client against the Patchwork stand-in: headers
 * captured, redirects, body cap, retries on 5xx / 429 (Retry-After) /
 * resets / timeouts with bounded attempts, the helpers (backoff, Retry-
 * After, URL without userinfo), the Authorization value kept out of
 * every error message, and requests made at once (http_do_many): each
 * sent once and reported once, a failure with http_do's message, a
 * callback's error stopping the rest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/patchwork/http.h"
#include "pwsim.h"

#define SECRET "Token tok-bot-5f0e9c1d2a7b" /* valid in tests/data/pw */

static struct pwsim sim;

static long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static struct http_client *client(long timeout_ms, int attempts)
{
	struct http_opts o;
	struct http_client *c = NULL;

	memset(&o, 0, sizeof(o));
	o.timeout_ms = timeout_ms;
	o.max_attempts = attempts;
	o.backoff_ms = 20;
	o.max_backoff_ms = 100;
	o.max_total_ms = 20000;
	assert_int_equal(http_client_new(&c, &o), 0);
	assert_int_equal(http_client_set_auth(c, SECRET), 0);
	return c;
}

static int get(struct http_client *c, const char *path, struct http_response *r)
{
	struct http_request req;
	char url[256];

	snprintf(url, sizeof(url), "%s%s", sim.url, path);
	memset(&req, 0, sizeof(req));
	req.url = url;
	req.accept = "application/json";
	http_response_clear(r);
	return http_do(c, &req, r);
}

static void no_secret(void)
{
	assert_null(strstr(pt_error_last(), "5f0e9c1d2a7b"));
}

static void test_headers_and_redirect(void **state)
{
	struct http_client *c = client(5000, 3);
	struct http_response r;
	char next[256];
	char *log;

	(void)state;
	http_response_init(&r);
	assert_int_equal(get(c, "/api/1.3/events/?project=test&per_page=3", &r),
			 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "application/json");
	assert_non_null(strstr(r.link, "rel=\"next\""));
	assert_non_null(strstr(r.link, "page=2"));
	assert_int_equal(r.body.ptr[0], '[');

	/*
	 * /patch/1/mbox/ is a 302, never followed here (pw_get_text()
	 * decides where to go): the Location is kept, made absolute
	 */
	assert_int_equal(get(c, "/patch/1/mbox/", &r), 0);
	assert_int_equal(r.status, 302);
	assert_non_null(strstr(r.location, "/project/test/patch/"));
	assert_int_equal(strncmp(r.redirect_url, sim.url, strlen(sim.url)), 0);
	assert_non_null(strstr(r.redirect_url, "/project/test/patch/"));
	snprintf(next, sizeof(next), "%s", r.redirect_url + strlen(sim.url));
	assert_int_equal(get(c, next, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "text/plain; charset=utf-8");
	assert_null(r.location);
	assert_null(r.redirect_url);
	assert_int_equal(strncmp(r.body.ptr, "From patchwork ", 15), 0);
	assert_non_null(strstr(r.url, "/project/test/patch/"));

	/* sent with the token, User-Agent; the stand-in logs it masked */
	log = pwsim_log(&sim);
	assert_non_null(strstr(log, "patchtriage/" PT_VERSION));
	assert_non_null(strstr(log, "Token <redacted>"));
	assert_null(strstr(log, "5f0e9c1d2a7b"));
	free(log);
	http_response_clear(&r);
	http_client_free(c);
}

static void test_retries(void **state)
{
	struct http_client *c = client(5000, 4);
	struct http_response r;
	long t0;

	(void)state;
	http_response_init(&r);
	/* two 500s, then the answer */
	assert_int_equal(pwsim_control(&sim, "{\"fail_next\": 2}"), 0);
	assert_int_equal(get(c, "/api/1.3/", &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.attempts, 3);

	/* 429 with Retry-After: 1 is waited out */
	assert_int_equal(pwsim_control(&sim, "{\"rate_limit_next\": 1, "
					     "\"retry_after\": 1}"),
			 0);
	t0 = ms_now();
	assert_int_equal(get(c, "/api/1.3/", &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.attempts, 2);
	assert_true(ms_now() - t0 >= 950);

	/*
	 * connection resets are retried (curl itself retries once when a
	 * reused connection turns out dead, so count at least 2 attempts)
	 */
	assert_int_equal(pwsim_control(&sim, "{\"reset_next\": 3}"), 0);
	assert_int_equal(get(c, "/api/1.3/", &r), 0);
	assert_int_equal(r.status, 200);
	assert_true(r.attempts >= 2);

	/* an HTML 502 page from a proxy: retried, then reported */
	assert_int_equal(pwsim_control(&sim, "{\"html_next\": 10}"), 0);
	assert_int_equal(get(c, "/api/1.3/", &r), PT_ENET);
	assert_int_equal(r.attempts, 4);
	assert_non_null(strstr(pt_error_last(), "HTTP 502 (text/html"));
	assert_non_null(strstr(pt_error_last(), "4 attempts"));
	assert_non_null(strstr(pt_error_last(), sim.url));
	no_secret();
	assert_int_equal(pwsim_control(&sim, "{\"clear\": true}"), 0);

	/* 500s forever: bounded, and a failure (not "come back later") */
	assert_int_equal(pwsim_control(&sim, "{\"fail_next\": 100}"), 0);
	assert_int_equal(get(c, "/api/1.3/", &r), PT_ENET);
	assert_int_equal(r.status, 500);
	assert_non_null(strstr(pt_error_last(), "HTTP 500"));
	no_secret();
	assert_int_equal(pwsim_control(&sim, "{\"clear\": true}"), 0);

	/* 429s forever: asked to come back later (PT_EAGAIN) */
	assert_int_equal(pwsim_control(&sim, "{\"rate_limit_next\": 100, "
					     "\"retry_after\": 0}"),
			 0);
	assert_int_equal(get(c, "/api/1.3/", &r), PT_EAGAIN);
	assert_int_equal(r.status, 429);
	assert_non_null(strstr(pt_error_last(), "asked to retry later"));
	assert_int_equal(pwsim_control(&sim, "{\"clear\": true}"), 0);
	http_response_clear(&r);
	http_client_free(c);
}

static void test_timeout(void **state)
{
	struct http_client *c = client(200, 2);
	struct http_response r;

	(void)state;
	http_response_init(&r);
	assert_int_equal(pwsim_control(&sim, "{\"delay_ms\": 600}"), 0);
	assert_int_equal(get(c, "/api/1.3/", &r), PT_ENET);
	assert_non_null(strstr(pt_error_last(), "did not answer in time"));
	assert_non_null(strstr(pt_error_last(), "2 attempts"));
	no_secret();
	assert_int_equal(pwsim_control(&sim, "{\"clear\": true}"), 0);
	http_response_clear(&r);
	http_client_free(c);
}

static void test_refused_and_cap(void **state)
{
	struct http_opts o;
	struct http_client *c = NULL;
	struct http_request req;
	struct http_response r;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.max_attempts = 2;
	o.backoff_ms = 10;
	o.max_body = 100;
	assert_int_equal(http_client_new(&c, &o), 0);
	assert_int_equal(http_client_set_auth(c, SECRET), 0);
	http_response_init(&r);
	memset(&req, 0, sizeof(req));
	/* port 1 on loopback: nothing listens */
	req.url = "http://user:pw@127.0.0.1:1/api/";
	assert_int_equal(http_do(c, &req, &r), PT_ENET);
	assert_non_null(strstr(pt_error_last(), "cannot reach "
						"'http://127.0.0.1:1/api/'"));
	assert_null(strstr(pt_error_last(), "user:pw"));
	no_secret();

	/* over the body cap */
	req.url = sim.url;
	{
		char url[128];

		snprintf(url, sizeof(url), "%s/api/1.3/patches/", sim.url);
		req.url = url;
		assert_int_equal(http_do(c, &req, &r), PT_ETOOBIG);
	}
	assert_non_null(strstr(pt_error_last(), "larger than 100 bytes"));
	assert_int_equal(http_client_set_auth(c, "a\r\nX-Evil: 1"), PT_EINVAL);
	http_response_clear(&r);
	http_client_free(c);
	http_client_free(NULL);
	http_response_clear(NULL);
}

static void test_helpers(void **state)
{
	struct http_client *c = client(1000, 3);
	char *u;
	long w;
	int i;

	(void)state;
	assert_int_equal(http_retry_after_ms("3", 0), 3000);
	assert_int_equal(http_retry_after_ms("", 0), -1);
	assert_int_equal(http_retry_after_ms(NULL, 0), -1);
	assert_int_equal(http_retry_after_ms("soon", 0), -1);
	/* an HTTP date 10 s after "now" */
	assert_int_equal(http_retry_after_ms("Thu, 01 Jan 1970 00:00:20 GMT",
					     10),
			 10000);
	assert_int_equal(http_retry_after_ms("Thu, 01 Jan 1970 00:00:20 GMT",
					     30),
			 0);
	for (i = 2; i < 12; i++) {
		w = http_backoff_ms(c, i);
		/* base 20 ms doubling, capped at 100; half of it jitter */
		assert_true(w >= 10 && w <= 100);
	}
	assert_true(http_backoff_ms(c, 2) <= 20);
	u = http_url_for_message("https://bot:tok@pw.example.org/api/?x=@");
	assert_string_equal(u, "https://pw.example.org/api/?x=@");
	free(u);
	u = http_url_for_message("https://pw.example.org/a@b");
	assert_string_equal(u, "https://pw.example.org/a@b");
	free(u);
	http_client_free(c);
}

#define NMANY 13 /* more than HTTP_MANY_WIDTH: slots are reused */

struct seen {
	int calls[NMANY];
	int rcs[NMANY];
	char err[NMANY][256];
	int stop_at; /* the call that fails: -1 none */
	int ncalls;
};

static int many_done(void *ctx, size_t i, int rc)
{
	struct seen *s = ctx;

	s->calls[i]++;
	s->rcs[i] = rc;
	snprintf(s->err[i], sizeof(s->err[i]), "%s", rc ? pt_error_last() : "");
	return s->ncalls++ == s->stop_at ? pt_error_set(PT_EINVAL, "stop") : 0;
}

static void test_many(void **state)
{
	struct http_client *c = client(5000, 3);
	struct http_request req[NMANY];
	struct http_response out[NMANY];
	char url[NMANY][128];
	struct seen s;
	int i;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	memset(req, 0, sizeof(req));
	for (i = 0; i < NMANY; i++) {
		snprintf(url[i], sizeof(url[i]), "%s/api/1.3/?many=%d", sim.url,
			 i);
		req[i].url = url[i];
		req[i].accept = "application/json";
		http_response_init(&out[i]);
	}
	req[5].url = "http://127.0.0.1:1/api/"; /* nothing listens */
	assert_int_equal(http_do_many(c, req, out, NMANY, many_done, &s), 0);
	for (i = 0; i < NMANY; i++) {
		assert_int_equal(s.calls[i], 1);
		if (i == 5)
			continue;
		assert_int_equal(s.rcs[i], 0);
		assert_int_equal(out[i].status, 200);
		assert_int_equal(out[i].body.ptr[0], '{');
		assert_string_equal(out[i].content_type, "application/json");
	}
	/* one attempt, the message http_do() gives */
	assert_int_equal(s.rcs[5], PT_ENET);
	assert_non_null(strstr(s.err[5], "cannot reach 'http://127.0.0.1:1/"
					 "api/'"));
	assert_non_null(strstr(s.err[5], "(1 attempt in"));
	assert_int_equal(pwsim_count(&sim, "GET", "/api/1.3/?many="),
			 NMANY - 1);

	/* the first callback fails: the rest are stopped, unreported */
	memset(&s, 0, sizeof(s));
	s.stop_at = 0;
	for (i = 0; i < NMANY; i++)
		snprintf(url[i], sizeof(url[i]), "%s/api/1.3/?stop=%d", sim.url,
			 i);
	req[5].url = url[5];
	assert_int_equal(http_do_many(c, req, out, NMANY, many_done, &s),
			 PT_EINVAL);
	assert_int_equal(s.ncalls, 1);
	/* and the client goes on working */
	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	assert_int_equal(http_do_many(c, req, out, 2, many_done, &s), 0);
	assert_int_equal(s.ncalls, 2);
	assert_int_equal(s.rcs[0] | s.rcs[1], 0);
	for (i = 0; i < NMANY; i++)
		http_response_clear(&out[i]);
	http_client_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_headers_and_redirect),
		cmocka_unit_test(test_retries),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_refused_and_cap),
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_many),
	};

	return PWSIM_MAIN(&sim, tests);
}
