/*
 * pw_list.c - the Link-header walk that every Patchwork list goes
 * through (see patchwork_int.h): rel="next" followed only on the same
 * server, never to a page already fetched in the walk (a loop is an
 * error naming the server), bounded in items and pages, and stopped
 * between pages once the bot is asked to stop; pw_get_list() on top.
 */
#include "bot/patchwork/patchwork.h"

#include <stdlib.h>
#include <string.h>

#include "bot/sys/daemon.h"
#include "bot/patchwork/patchwork_int.h"

char *pw_link_next(const char *link)
{
	const char *p = link, *lt, *gt, *end;

	while (p && (lt = strchr(p, '<'))) {
		gt = strchr(lt, '>');
		if (!gt)
			return NULL;
		end = strchr(gt, '<');
		if (!end)
			end = gt + strlen(gt);
		/* the parameters between '>' and the next '<' */
		{
			char *params =
				pt_strndup(gt + 1, (size_t)(end - gt - 1));
			int hit;

			if (!params)
				return NULL;
			hit = strstr(params, "rel=\"next\"") ||
			      strstr(params, "rel=next");
			free(params);
			if (hit)
				return pt_strndup(lt + 1,
						  (size_t)(gt - lt - 1));
		}
		p = end;
	}
	return NULL;
}

/* Add per_page to a URL that has none. */
static int with_per_page(struct pw *pw, const char *url, char **out)
{
	struct buf b = BUF_INIT;

	if (buf_addstr(&b, url))
		return PT_ENOMEM;
	if (!strstr(url, "per_page=") &&
	    buf_addf(&b, "%cper_page=%u", strchr(url, '?') ? '&' : '?',
		     pw->per_page))
		return PT_ENOMEM;
	*out = buf_detach(&b, NULL);
	return 0;
}

/* The URLs one list walk fetched: it never fetches one twice. */
struct walk {
	char **urls;
	size_t n;
	size_t items;
};

static int walk_seen(const struct walk *w, const char *url)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (!strcmp(w->urls[i], url))
			return 1;
	return 0;
}

/* Keep url (owned by w from here on, also on failure). */
static int walk_add(struct walk *w, char *url)
{
	char **t = realloc(w->urls, (w->n + 1) * sizeof(*t));

	if (!t) {
		free(url);
		return PT_ENOMEM;
	}
	w->urls = t;
	w->urls[w->n++] = url;
	return 0;
}

static void walk_free(struct walk *w)
{
	while (w->n)
		free(w->urls[--w->n]);
	free(w->urls);
}

/* The page at url to cb; *len: its number of items. */
static int walk_page(struct pw *pw, struct walk *w, const char *url,
		     struct http_response *r, pw_page_cb cb, void *ctx,
		     size_t *len)
{
	json_t *page = NULL;
	int rc;

	http_response_clear(r);
	rc = pw_get_json_url(pw, url, pw->max_page, &page, r);
	if (!rc && !json_is_array(page))
		rc = pt_error_set(PT_EINVAL, "patchwork sent no list for '%s'",
				  url);
	if (!rc) {
		*len = json_array_size(page);
		w->items += *len;
	}
	if (!rc && w->items > PW_MAX_LIST_ITEMS)
		rc = pt_error_set(PT_ETOOBIG,
				  "patchwork list '%s' has more than %u items",
				  w->urls[0], PW_MAX_LIST_ITEMS);
	if (!rc)
		rc = cb(page, ctx);
	json_decref(page);
	return rc;
}

/*
 * The page after the one at cur, from r's Link (*next NULL at the end):
 * never one fetched before in this walk, never after an empty page,
 * at most PW_MAX_LIST_PAGES, and none once the bot is asked to stop.
 */
static int walk_next(struct pw *pw, const struct walk *w, const char *cur,
		     const struct http_response *r, size_t len, char **next)
{
	char *link = r->link ? pw_link_next(r->link) : NULL;
	int rc;

	*next = NULL;
	if (!link)
		return 0;
	rc = pw_resolve(pw, link, next);
	free(link);
	if (rc)
		return rc;
	if (walk_seen(w, *next))
		rc = pt_error_set(PT_EINVAL,
				  "patchwork '%s' sent a list whose next page "
				  "'%s' (after '%s') was already fetched in "
				  "this walk: a loop",
				  pw->base, *next, cur);
	else if (!len)
		rc = pt_error_set(PT_EINVAL,
				  "patchwork '%s' sent an empty page '%s' "
				  "that links to another",
				  pw->base, cur);
	else if (w->n >= PW_MAX_LIST_PAGES)
		rc = pt_error_set(PT_ETOOBIG,
				  "patchwork '%s': list '%s' has more than %u "
				  "pages",
				  pw->base, w->urls[0], PW_MAX_LIST_PAGES);
	else if (daemon_should_stop())
		rc = pt_error_set(PT_EAGAIN,
				  "patchwork '%s': list '%s' not read to its "
				  "end: the bot is asked to stop",
				  pw->base, w->urls[0]);
	if (rc) {
		free(*next);
		*next = NULL;
	}
	return rc;
}

int pw_walk_list(struct pw *pw, const char *path, pw_page_cb cb, void *ctx)
{
	struct http_response r;
	struct walk w;
	char *url = NULL, *abs = NULL;
	size_t len = 0;
	int rc;

	memset(&w, 0, sizeof(w));
	http_response_init(&r);
	rc = pw_resolve(pw, path, &abs);
	if (!rc)
		rc = with_per_page(pw, abs, &url);
	while (!rc && url) {
		rc = walk_add(&w, url);
		if (!rc)
			rc = walk_page(pw, &w, url, &r, cb, ctx, &len);
		if (!rc)
			rc = walk_next(pw, &w, url, &r, len, &url);
	}
	http_response_clear(&r);
	walk_free(&w);
	free(abs);
	return rc;
}

static int collect(json_t *items, void *ctx)
{
	return json_array_extend(ctx, items) ? PT_ENOMEM : 0;
}

int pw_get_list(struct pw *pw, const char *path, json_t **out)
{
	json_t *all = json_array();
	int rc;

	*out = NULL;
	if (!all)
		return PT_ENOMEM;
	rc = pw_walk_list(pw, path, collect, all);
	if (rc) {
		json_decref(all);
		return rc;
	}
	*out = all;
	return 0;
}
