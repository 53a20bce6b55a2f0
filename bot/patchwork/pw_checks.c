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
static int find_same(struct pw *pw, int64_t patch_id, const char *state,
		     const char *context, const char *desc, int64_t *id,
		     int *found)
{
	struct pw_check *c;
	size_t n, i, newest = SIZE_MAX;
	int rc;

	*found = 0;
	rc = pw_checks_list(pw, patch_id, &c, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++)
		if (!strcmp(c[i].context, context) &&
		    (newest == SIZE_MAX || c[i].id > c[newest].id))
			newest = i;
	if (newest != SIZE_MAX && !strcmp(c[newest].state, state) &&
	    same_text(c[newest].description, desc)) {
		*found = 1;
		*id = c[newest].id;
	}
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

static int check_post(struct pw *pw, int64_t patch_id, const char *state,
		      const char *context, const char *description,
		      const char *target_url, int read_first, int *posted,
		      int64_t *check_id)
{
	struct http_response r;
	struct buf body = BUF_INIT, path = BUF_INIT;
	char *desc = NULL, *url = NULL;
	json_t *j = NULL;
	int64_t id = 0;
	int rc, attempt, found;
	long wait;

	*posted = 0;
	http_response_init(&r);
	desc = pw_description_cap(description, pw->description_max);
	if (description && !desc)
		return PT_ENOMEM;
	rc = check_body(&body, state, context, desc, target_url);
	if (!rc)
		rc = buf_addf(&path, "patches/%lld/checks/",
			      (long long)patch_id);
	if (!rc)
		rc = pw_resolve(pw, path.ptr, &url);
	for (attempt = 1; !rc; attempt++) {
		found = 0;
		if (read_first || attempt > 1)
			rc = find_same(pw, patch_id, state, context, desc, &id,
				       &found);
		if (rc || found)
			break;
		http_response_clear(&r);
		rc = pw_request(pw, "POST", url, body.ptr, 1, pw->max_doc, &r);
		if (!rc) {
			rc = pw_parse_json(url, &r, &j);
			if (!rc) {
				id = pw_int_of(j, "id");
				*posted = 1;
			}
			break;
		}
		if ((rc != PT_EAGAIN && rc != PT_ENET) ||
		    attempt >= pw->max_attempts)
			break;
		wait = http_retry_after_ms(r.retry_after, (long)time(NULL));
		if (wait < 0)
			wait = http_backoff_ms(pw->http, attempt + 1);
		rc = http_sleep_ms(wait);
	}
	if (rc)
		rc = pt_error_wrap(rc, "posting check '%s' on patch %lld",
				   context, (long long)patch_id);
	else if (check_id)
		*check_id = id;
	json_decref(j);
	http_response_clear(&r);
	buf_free(&body);
	buf_free(&path);
	free(desc);
	free(url);
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

int pw_same_description(const struct pw *pw, const char *a, const char *b)
{
	char *ca = pw_description_cap(a, pw->description_max);
	char *cb = pw_description_cap(b, pw->description_max);
	int same = same_text(ca, cb);

	free(ca);
	free(cb);
	return same;
}
