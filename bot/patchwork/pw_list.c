/*
 * pw_list.c - the Link-header walk that every Patchwork list goes
 * through (see patchwork_int.h): rel="next" followed only on the same
 * server, bounded in items; pw_get_list() on top.
 */
#include "bot/patchwork/patchwork.h"

#include <stdlib.h>
#include <string.h>

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

int pw_walk_list(struct pw *pw, const char *path, pw_page_cb cb, void *ctx)
{
	struct http_response r;
	char *url = NULL, *abs = NULL, *next;
	json_t *page = NULL;
	size_t items = 0;
	int rc;

	http_response_init(&r);
	rc = pw_resolve(pw, path, &abs);
	if (!rc)
		rc = with_per_page(pw, abs, &url);
	while (!rc && url) {
		http_response_clear(&r);
		rc = pw_get_json_url(pw, url, &page, &r);
		if (rc)
			break;
		if (!json_is_array(page)) {
			rc = pt_error_set(PT_EINVAL,
					  "patchwork sent no list for '%s'",
					  url);
			break;
		}
		items += json_array_size(page);
		if (items > PW_MAX_LIST_ITEMS) {
			rc = pt_error_set(PT_ETOOBIG,
					  "patchwork list '%s' has more than "
					  "%u items",
					  abs, PW_MAX_LIST_ITEMS);
			break;
		}
		rc = cb(page, ctx);
		json_decref(page);
		page = NULL;
		if (rc)
			break;
		next = r.link ? pw_link_next(r.link) : NULL;
		free(url);
		url = NULL;
		if (next) {
			rc = pw_resolve(pw, next, &url);
			free(next);
		}
	}
	json_decref(page);
	http_response_clear(&r);
	free(url);
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
