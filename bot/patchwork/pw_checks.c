/*
 * pw_checks.c - Patchwork checks (see patchwork.h): listing a patch's
 * checks, capping descriptions on a UTF-8 boundary, and the dedupe rule
 * that reads the server's checks before a post (before every retry too;
 * the first post of a check the caller knows is new goes unread).
 */
#include "bot/patchwork/patchwork.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/patchwork/patchwork_int.h"

static char *dupstr(const char *s)
{
	return s ? pt_strdup(s) : NULL;
}

/* ---- checks -------------------------------------------------------- */

void pw_checks_free(struct pw_check *c, size_t n)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < n; i++) {
		free(c[i].state);
		free(c[i].context);
		free(c[i].description);
		free(c[i].target_url);
		free(c[i].date);
		free(c[i].user);
	}
	free(c);
}

static int check_from_json(struct pw_check *c, const json_t *j)
{
	c->id = pw_int_of(j, "id");
	c->state = dupstr(pw_str_or(j, "state", ""));
	c->context = dupstr(pw_str_or(j, "context", ""));
	c->description = dupstr(pw_str_or(j, "description", NULL));
	c->target_url = dupstr(pw_str_or(j, "target_url", NULL));
	c->date = dupstr(pw_str_or(j, "date", ""));
	c->user = dupstr(pw_str_or(json_object_get(j, "user"), "username", ""));
	return c->state && c->context && c->date && c->user ? 0 : PT_ENOMEM;
}

int pw_checks_from_json(struct pw_check **out, size_t *n, const json_t *list)
{
	struct pw_check *c = NULL;
	const json_t *j;
	size_t i, len = json_array_size(list);
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!json_is_array(list))
		return pt_error_set(PT_EINVAL, "patchwork checks are not a "
					       "list");
	if (len) {
		c = pt_calloc(len, sizeof(*c));
		if (!c)
			return PT_ENOMEM;
	}
	json_array_foreach (list, i, j) {
		rc = check_from_json(&c[i], j);
		if (rc)
			break;
	}
	if (rc) {
		pw_checks_free(c, len);
		return rc;
	}
	*out = c;
	*n = len;
	return 0;
}

int pw_checks_list(struct pw *pw, int64_t patch_id, struct pw_check **out,
		   size_t *n)
{
	struct buf b = BUF_INIT;
	json_t *list = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	rc = buf_addf(&b, "patches/%lld/checks/", (long long)patch_id);
	if (!rc)
		rc = pw_get_list(pw, b.ptr, &list);
	if (!rc)
		rc = pw_checks_from_json(out, n, list);
	json_decref(list);
	buf_free(&b);
	return rc;
}

char *pw_description_cap(const char *d, size_t max)
{
	size_t len;

	if (!d)
		return NULL;
	len = strlen(d);
	if (len <= max)
		return pt_strdup(d);
	/*
	 * Do not cut a UTF-8 sequence: back up over at most three
	 * continuation bytes to the lead byte.  Anything else is not
	 * UTF-8 and is cut at max.
	 */
	for (len = max;
	     len > 0 && max - len < 3 && ((unsigned char)d[len] & 0xc0) == 0x80;
	     len--)
		;
	if (((unsigned char)d[len] & 0xc0) != 0xc0)
		len = ((unsigned char)d[max] & 0xc0) == 0x80 ? max : len;
	return pt_strndup(d, len);
}

static int same_text(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/*
 * Whether the newest check in this context (the one Patchwork shows)
 * has this state and description.  An older one with the same text does
 * not count: after A, B, posting A again must reach the server.
 */
static void newest_same(const struct pw_check *c, size_t n, const char *state,
			const char *context, const char *desc, int64_t *id,
			int *found)
{
	size_t i, newest = SIZE_MAX;

	*found = 0;
	for (i = 0; i < n; i++)
		if (!strcmp(c[i].context, context) &&
		    (newest == SIZE_MAX || c[i].id > c[newest].id))
			newest = i;
	if (newest != SIZE_MAX && !strcmp(c[newest].state, state) &&
	    same_text(c[newest].description, desc)) {
		*found = 1;
		*id = c[newest].id;
	}
}

static int find_same(struct pw *pw, int64_t patch_id, const char *state,
		     const char *context, const char *desc, int64_t *id,
		     int *found)
{
	struct pw_check *c;
	size_t n;
	int rc;

	*found = 0;
	rc = pw_checks_list(pw, patch_id, &c, &n);
	if (rc)
		return rc;
	newest_same(c, n, state, context, desc, id, found);
	pw_checks_free(c, n);
	return 0;
}

static int check_body(struct buf *b, const char *state, const char *context,
		      const char *desc, const char *target_url)
{
	json_t *o = json_object();
	char *s;
	int rc = 0;

	if (!o)
		return PT_ENOMEM;
	if (json_object_set_new(o, "state", json_string(state)) ||
	    json_object_set_new(o, "context", json_string(context)) ||
	    (desc &&
	     json_object_set_new(o, "description", json_string(desc))) ||
	    (target_url &&
	     json_object_set_new(o, "target_url", json_string(target_url))))
		rc = pt_error_set(PT_EINVAL, "check text is not valid UTF-8");
	s = rc ? NULL : json_dumps(o, JSON_COMPACT);
	if (!rc && !s)
		rc = PT_ENOMEM;
	if (!rc)
		rc = buf_addstr(b, s);
	free(s);
	json_decref(o);
	return rc;
}

/* One check being posted: its capped text, body and URL, last answer. */
struct post {
	struct pw_check_job *job;
	char *desc;
	struct buf body;
	char *url;
	struct http_response r;
	int step; /* enum step */
};

enum step { STEP_READ, STEP_POST, STEP_AGAIN, STEP_RETRY, STEP_DONE };

static void post_clear(struct post *p)
{
	http_response_clear(&p->r);
	buf_free(&p->body);
	free(p->desc);
	free(p->url);
}

static int post_prepare(struct pw *pw, struct pw_check_job *j, struct post *p)
{
	struct buf path = BUF_INIT;
	int rc;

	memset(p, 0, sizeof(*p));
	p->job = j;
	http_response_init(&p->r);
	buf_init(&p->body, 0);
	j->posted = 0;
	p->desc = pw_description_cap(j->description, pw->description_max);
	if (j->description && !p->desc)
		return PT_ENOMEM;
	rc = check_body(&p->body, j->state, j->context, p->desc, j->target_url);
	if (!rc)
		rc = buf_addf(&path, "patches/%lld/checks/",
			      (long long)j->patch_id);
	if (!rc)
		rc = pw_resolve(pw, path.ptr, &p->url);
	buf_free(&path);
	return rc;
}

/* The answer r to a POST that got rc: the new check's id. */
static int post_answer(struct post *p, int rc)
{
	json_t *j = NULL;

	if (!rc)
		rc = pw_parse_json(p->url, &p->r, &j);
	if (!rc) {
		p->job->check_id = pw_int_of(j, "id");
		p->job->posted = 1;
	}
	json_decref(j);
	return rc;
}

static int retryable(struct pw *pw, int rc, int attempt)
{
	return (rc == PT_EAGAIN || rc == PT_ENET) && attempt < pw->max_attempts;
}

/* Before attempt + 1: Retry-After of the last answer, else backoff. */
static int post_wait(struct pw *pw, struct post *p, int attempt)
{
	long wait = http_retry_after_ms(p->r.retry_after, (long)time(NULL));

	if (wait < 0)
		wait = http_backoff_ms(pw->http, attempt + 1);
	return http_sleep_ms(wait);
}

/* Attempts from attempt on, each reading first when read or a retry. */
static int post_attempts(struct pw *pw, struct post *p, int attempt, int read)
{
	struct pw_check_job *j = p->job;
	int rc = 0, found;

	for (;; attempt++) {
		found = 0;
		if (read || attempt > 1)
			rc = find_same(pw, j->patch_id, j->state, j->context,
				       p->desc, &j->check_id, &found);
		if (rc || found)
			return rc;
		http_response_clear(&p->r);
		rc = pw_request(pw, "POST", p->url, p->body.ptr, 1, pw->max_doc,
				&p->r);
		if (!rc || !retryable(pw, rc, attempt))
			return post_answer(p, rc);
		rc = post_wait(pw, p, attempt);
		if (rc)
			return rc;
	}
}

static int post_wrap(const struct pw_check_job *j, int rc)
{
	if (!rc)
		return 0;
	return pt_error_wrap(rc, "posting check '%s' on patch %lld", j->context,
			     (long long)j->patch_id);
}

static int check_post(struct pw *pw, int64_t patch_id, const char *state,
		      const char *context, const char *description,
		      const char *target_url, int read_first, int *posted,
		      int64_t *check_id)
{
	struct pw_check_job j = { patch_id,   state,	  context, description,
				  target_url, read_first, 0,	   0 };
	struct post p;
	int rc;

	rc = post_prepare(pw, &j, &p);
	if (!rc)
		rc = post_attempts(pw, &p, 1, read_first);
	rc = post_wrap(&j, rc);
	*posted = j.posted;
	if (!rc && check_id)
		*check_id = j.check_id;
	post_clear(&p);
	return rc;
}

int pw_check_post(struct pw *pw, int64_t patch_id, const char *state,
		  const char *context, const char *description,
		  const char *target_url, int *posted, int64_t *check_id)
{
	return check_post(pw, patch_id, state, context, description, target_url,
			  1, posted, check_id);
}

int pw_check_post_new(struct pw *pw, int64_t patch_id, const char *state,
		      const char *context, const char *description,
		      const char *target_url, int *posted, int64_t *check_id)
{
	return check_post(pw, patch_id, state, context, description, target_url,
			  0, posted, check_id);
}

/* ---- many at once -------------------------------------------------- */

struct batch {
	struct pw *pw;
	struct post *posts;
	size_t *idx; /* request i is posts[idx[i]]' */
	struct http_request *reqs;
	struct http_response *outs;
	pw_check_done_fn done;
	void *ctx;
};

static int report(struct batch *b, struct post *p, int rc)
{
	p->step = STEP_DONE;
	rc = post_wrap(p->job, rc);
	return b->done(b->ctx, p->job, rc);
}

/*
 * A first read's answer: the newest check the same (done: found), or
 * the post to make; anything unusual (an error, a list of more than one
 * page) is read again as pw_check_post reads, with retries.
 */
static int read_done(void *ctx, size_t i, int rc)
{
	struct batch *b = ctx;
	struct post *p = &b->posts[b->idx[i]];
	struct http_response *r = &b->outs[i];
	char *next = r->link ? pw_link_next(r->link) : NULL;
	struct pw_check *c = NULL;
	json_t *list = NULL;
	size_t n = 0;
	int found = 0;

	if (!rc && !next)
		rc = pw_parse_json(b->reqs[i].url, r, &list);
	if (!rc && !next)
		rc = pw_checks_from_json(&c, &n, list);
	if (!rc && !next)
		newest_same(c, n, p->job->state, p->job->context, p->desc,
			    &p->job->check_id, &found);
	p->step = rc || next ? STEP_AGAIN : STEP_POST;
	pt_error_clear();
	pw_checks_free(c, n);
	json_decref(list);
	free(next);
	return found ? report(b, p, 0) : 0;
}

/* A first post's answer: done, or retried after the others. */
static int post_done(void *ctx, size_t i, int rc)
{
	struct batch *b = ctx;
	struct post *p = &b->posts[b->idx[i]];

	http_response_clear(&p->r);
	p->r = b->outs[i];
	http_response_init(&b->outs[i]);
	if (rc && retryable(b->pw, rc, 1)) {
		p->step = STEP_RETRY;
		return 0;
	}
	return report(b, p, post_answer(p, rc));
}

/* The requests of step (a GET of the checks or the POST) at once. */
static int run_step(struct batch *b, size_t n, int step, struct buf *urls)
{
	size_t i, m = 0;
	int rc;

	for (i = 0; i < n; i++) {
		struct post *p = &b->posts[i];

		if (p->step != step)
			continue;
		memset(&b->reqs[m], 0, sizeof(b->reqs[m]));
		b->reqs[m].url = p->url;
		if (step == STEP_POST) {
			b->reqs[m].method = "POST";
			b->reqs[m].body = p->body.ptr;
			b->reqs[m].max_body = b->pw->max_doc;
		} else {
			buf_reset(&urls[i]);
			rc = buf_addf(&urls[i], "%s?per_page=%u", p->url,
				      b->pw->per_page);
			if (rc)
				return rc;
			b->reqs[m].url = urls[i].ptr;
			b->reqs[m].max_body = b->pw->max_page;
		}
		http_response_init(&b->outs[m]);
		b->idx[m++] = i;
	}
	rc = pw_request_many(b->pw, b->reqs, b->outs, m,
			     step == STEP_POST ? post_done : read_done, b);
	for (i = 0; i < m; i++)
		http_response_clear(&b->outs[i]);
	return rc;
}

/* What the concurrent steps left: one at a time, as pw_check_post. */
static int run_rest(struct batch *b, size_t n)
{
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < n; i++) {
		struct post *p = &b->posts[i];
		int wrc;

		if (p->step == STEP_AGAIN) {
			rc = report(b, p, post_attempts(b->pw, p, 1, 1));
		} else if (p->step == STEP_RETRY) {
			wrc = post_wait(b->pw, p, 1);
			rc = report(b, p,
				    wrc ? wrc : post_attempts(b->pw, p, 2, 1));
		}
	}
	return rc;
}

static int batch_run(struct batch *b, struct pw_check_job *jobs, size_t n,
		     struct buf *urls)
{
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < n; i++) {
		int prc = post_prepare(b->pw, &jobs[i], &b->posts[i]);

		b->posts[i].step = jobs[i].read_first ? STEP_READ : STEP_POST;
		if (prc)
			rc = report(b, &b->posts[i], prc);
	}
	if (!rc)
		rc = run_step(b, n, STEP_READ, urls);
	if (!rc)
		rc = run_step(b, n, STEP_POST, urls);
	if (!rc)
		rc = run_rest(b, n);
	return rc;
}

int pw_checks_post_many(struct pw *pw, struct pw_check_job *jobs, size_t n,
			pw_check_done_fn done, void *ctx)
{
	struct batch b = { pw, NULL, NULL, NULL, NULL, done, ctx };
	struct buf *urls;
	size_t i;
	int rc;

	if (!n)
		return 0;
	b.posts = pt_calloc(n, sizeof(*b.posts));
	b.idx = pt_calloc(n, sizeof(*b.idx));
	b.reqs = pt_calloc(n, sizeof(*b.reqs));
	b.outs = pt_calloc(n, sizeof(*b.outs));
	urls = pt_calloc(n, sizeof(*urls));
	rc = b.posts && b.idx && b.reqs && b.outs && urls ? 0 : PT_ENOMEM;
	if (!rc)
		rc = batch_run(&b, jobs, n, urls);
	for (i = 0; b.posts && i < n; i++)
		post_clear(&b.posts[i]);
	for (i = 0; urls && i < n; i++)
		buf_free(&urls[i]);
	free(urls);
	free(b.posts);
	free(b.idx);
	free(b.reqs);
	free(b.outs);
	return rc;
}

int pw_same_description(const struct pw *pw, const char *a, const char *b)
{
	char *ca = pw_description_cap(a, pw->description_max);
	char *cb = pw_description_cap(b, pw->description_max);
	int same = same_text(ca, cb);

	free(ca);
	free(cb);
	return same;
}
