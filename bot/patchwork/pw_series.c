/*
 * pw_series.c - Patchwork series and patches (see patchwork.h): the
 * documents a series names, each patch's mbox (through its redirect)
 * parsed into a struct patch, or only the mails, split from the series
 * mbox and matched to their patches by Message-ID; and the patches that
 * have a Message-ID, for the mail path.
 */
#include "bot/patchwork/patchwork.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/mbox.h"
#include "bot/patchwork/patchwork_int.h"

/* ---- series and patches -------------------------------------------- */

void pw_patch_clear(struct pw_patch *p)
{
	if (!p)
		return;
	json_decref(p->json);
	json_decref(p->comments);
	free(p->mbox);
	patch_free(p->parsed);
	memset(p, 0, sizeof(*p));
}

/* The first message of the mbox to out->parsed. */
static int parse_first(const char *msg, size_t len, size_t index, void *ctx)
{
	struct pw_patch *p = ctx;
	int rc;

	(void)index;
	rc = patch_from_mail(&p->parsed, msg, len);
	return rc ? rc : 1;
}

static int parse_mbox(struct pw_patch *p)
{
	int rc;

	rc = mbox_foreach(p->mbox, p->mbox_len, parse_first, p);
	if (rc < 0)
		return pt_error_wrap(rc, "mbox of patch %lld",
				     (long long)p->id);
	if (!p->parsed)
		return pt_error_set(PT_EINVAL,
				    "mbox of patch %lld has no message",
				    (long long)p->id);
	return 0;
}

/* GET an mbox into p->mbox and parse its first message. */
static int get_mbox(struct pw *pw, const char *url, struct pw_patch *p)
{
	struct buf m = BUF_INIT;
	int rc;

	buf_init(&m, PT_MAX_MAIL_SIZE);
	rc = pw_get_text(pw, url, &m);
	if (!rc) {
		p->mbox = buf_detach(&m, &p->mbox_len);
		rc = p->mbox ? parse_mbox(p) : PT_ENOMEM;
	}
	buf_free(&m);
	return rc;
}

int pw_patch_fetch(struct pw *pw, int64_t id, struct pw_patch *out)
{
	struct buf b = BUF_INIT;
	const char *curl;
	int rc;

	memset(out, 0, sizeof(*out));
	out->id = id;
	rc = buf_addf(&b, "patches/%lld/", (long long)id);
	if (!rc)
		rc = pw_get_json(pw, b.ptr, &out->json);
	if (rc)
		goto out;
	curl = pw_str_or(out->json, "comments", NULL);
	buf_reset(&b);
	if (!curl)
		rc = buf_addf(&b, "patches/%lld/comments/", (long long)id);
	if (!rc)
		rc = pw_get_list(pw, curl ? curl : b.ptr, &out->comments);
	if (rc)
		goto out;
	/* /patch/ID/mbox/ redirects to the project's msgid URL */
	buf_reset(&b);
	rc = buf_addf(&b, "%s/patch/%lld/mbox/", pw->base, (long long)id);
	if (!rc)
		rc = get_mbox(pw, b.ptr, out);
out:
	buf_free(&b);
	if (rc)
		pw_patch_clear(out);
	return rc;
}

void pw_series_free(struct pw_series *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->npatches; i++)
		pw_patch_clear(&s->patches[i]);
	free(s->patches);
	json_decref(s->json);
	json_decref(s->cover);
	json_decref(s->cover_comments);
	free(s);
}

/* A positive "id" of o (an object) into *id; 0 when o is not an object. */
static int id_of(const json_t *o, const char *what, int64_t *id)
{
	const json_t *v = json_object_get(o, "id");

	*id = 0;
	if (!json_is_object(o))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) <= 0)
		return pt_error_set(PT_EINVAL,
				    "patchwork %s without a "
				    "positive id",
				    what);
	*id = (int64_t)json_integer_value(v);
	return 0;
}

int pw_series_ids(int64_t **ids, size_t *n, int64_t *cover_id,
		  const json_t *series)
{
	const json_t *list = json_object_get(series, "patches"), *mini;
	size_t i;
	int rc;

	*ids = NULL;
	*n = 0;
	rc = id_of(json_object_get(series, "cover_letter"), "cover letter",
		   cover_id);
	if (rc || !json_array_size(list))
		return rc;
	*ids = pt_calloc(json_array_size(list), sizeof(**ids));
	if (!*ids)
		return PT_ENOMEM;
	json_array_foreach (list, i, mini) {
		rc = id_of(mini, "series patch", &(*ids)[i]);
		if (!rc && !(*ids)[i])
			rc = pt_error_set(PT_EINVAL, "patchwork series patch "
						     "is not an object");
		if (rc)
			break;
	}
	if (rc) {
		free(*ids);
		*ids = NULL;
		return rc;
	}
	*n = json_array_size(list);
	return 0;
}

/* A new *s with /series/ID/ and the ids it lists (see pw_series_ids). */
static int series_doc(struct pw *pw, int64_t id, struct pw_series **s,
		      int64_t **ids, size_t *n, int64_t *cover)
{
	struct buf b = BUF_INIT;
	int rc;

	*ids = NULL;
	*n = 0;
	*cover = 0;
	*s = pt_calloc(1, sizeof(**s));
	if (!*s)
		return PT_ENOMEM;
	(*s)->id = id;
	rc = buf_addf(&b, "series/%lld/", (long long)id);
	if (!rc)
		rc = pw_get_json(pw, b.ptr, &(*s)->json);
	if (!rc)
		rc = pw_series_ids(ids, n, cover, (*s)->json);
	buf_free(&b);
	return rc;
}

int pw_series_fetch(struct pw *pw, int64_t id, struct pw_series **out)
{
	struct pw_series *s;
	struct buf b = BUF_INIT;
	int64_t *ids = NULL, cover;
	size_t i, n;
	int rc;

	*out = NULL;
	rc = series_doc(pw, id, &s, &ids, &n, &cover);
	if (rc)
		goto out;
	if (cover) {
		buf_reset(&b);
		rc = buf_addf(&b, "covers/%lld/", (long long)cover);
		if (!rc)
			rc = pw_get_json(pw, b.ptr, &s->cover);
		if (!rc)
			rc = pw_get_list(pw,
					 pw_str_or(s->cover, "comments", ""),
					 &s->cover_comments);
		if (rc)
			goto out;
	}
	if (n) {
		s->patches = pt_calloc(n, sizeof(*s->patches));
		if (!s->patches) {
			rc = PT_ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		rc = pw_patch_fetch(pw, ids[i], &s->patches[i]);
		if (rc)
			goto out;
		s->npatches++;
	}
out:
	free(ids);
	buf_free(&b);
	if (rc) {
		pw_series_free(s);
		return pt_error_wrap(rc, "series %lld", (long long)id);
	}
	*out = s;
	return 0;
}

/* ---- a series' mails only ----------------------------------------- */

/* "<id>" of a series patch against a parsed Message-ID without angles. */
static int same_msgid(const char *listed, const char *parsed)
{
	size_t n;

	if (!listed || !parsed)
		return 0;
	if (*listed == '<')
		listed++;
	n = strlen(parsed);
	return !strncmp(listed, parsed, n) &&
	       (!listed[n] || (listed[n] == '>' && !listed[n + 1]));
}

struct mail_map {
	struct pw_series *s;
	const json_t *list; /* the series' "patches" */
};

/* A message of the series mbox to the patch with its Message-ID. */
static int map_mail(const char *msg, size_t len, size_t index, void *ctx)
{
	struct mail_map *m = ctx;
	struct patch *tmp = NULL;
	size_t i;

	(void)index;
	if (patch_from_mail(&tmp, msg, len)) {
		pt_error_clear(); /* left to the patch's own mbox */
		return 0;
	}
	for (i = 0; i < m->s->npatches; i++) {
		struct pw_patch *p = &m->s->patches[i];
		const char *id =
			pw_str_or(json_array_get(m->list, i), "msgid", NULL);

		if (p->parsed || !same_msgid(id, tmp->message_id))
			continue;
		p->mbox = pt_strndup(msg, len);
		if (!p->mbox) {
			patch_free(tmp);
			return PT_ENOMEM;
		}
		p->mbox_len = len;
		p->parsed = tmp;
		return 0;
	}
	patch_free(tmp);
	return 0;
}

/* Patches the series mbox did not give, from their own mbox URL. */
static int fetch_missing(struct pw *pw, struct pw_series *s, const json_t *list)
{
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < s->npatches; i++) {
		struct pw_patch *p = &s->patches[i];
		const char *url =
			pw_str_or(json_array_get(list, i), "mbox", NULL);

		if (p->parsed)
			continue;
		if (!url)
			return pt_error_set(PT_EINVAL,
					    "patchwork series patch "
					    "%lld has no mbox",
					    (long long)p->id);
		rc = get_mbox(pw, url, p);
	}
	return rc;
}

/* The series mbox split onto s->patches (ids set), then what is missing. */
static int series_mails(struct pw *pw, struct pw_series *s)
{
	const json_t *list = json_object_get(s->json, "patches");
	const char *url = pw_str_or(s->json, "mbox", NULL);
	struct mail_map map = { s, list };
	struct buf b = BUF_INIT, m = BUF_INIT;
	int rc = 0;

	if (!url) {
		rc = buf_addf(&b, "%s/series/%lld/mbox/", pw->base,
			      (long long)s->id);
		url = b.ptr;
	}
	buf_init(&m, pw->max_mbox);
	if (!rc)
		rc = pw_get_text(pw, url, &m);
	if (!rc && m.len)
		rc = mbox_foreach(m.ptr, m.len, map_mail, &map);
	buf_free(&m);
	buf_free(&b);
	if (!rc)
		rc = fetch_missing(pw, s, list);
	return rc;
}

/* pw_series_fetch_mails; present: the patches of an incomplete one too. */
static int fetch_mails(struct pw *pw, int64_t id, int present,
		       struct pw_series **out)
{
	struct pw_series *s;
	int64_t *ids = NULL, cover;
	size_t i, n = 0;
	int rc;

	*out = NULL;
	rc = series_doc(pw, id, &s, &ids, &n, &cover);
	if (!rc && cover)
		s->cover =
			json_incref(json_object_get(s->json, "cover_letter"));
	if (rc || !n ||
	    (!present &&
	     !json_is_true(json_object_get(s->json, "received_all"))))
		goto out;
	s->patches = pt_calloc(n, sizeof(*s->patches));
	if (!s->patches) {
		rc = PT_ENOMEM;
		goto out;
	}
	s->npatches = n;
	for (i = 0; i < n; i++)
		s->patches[i].id = ids[i];
	rc = series_mails(pw, s);
out:
	free(ids);
	if (rc) {
		pw_series_free(s);
		return pt_error_wrap(rc, "series %lld", (long long)id);
	}
	*out = s;
	return 0;
}

int pw_series_fetch_mails(struct pw *pw, int64_t id, struct pw_series **out)
{
	return fetch_mails(pw, id, 0, out);
}

int pw_series_fetch_present(struct pw *pw, int64_t id, struct pw_series **out)
{
	return fetch_mails(pw, id, 1, out);
}

/* ---- a patch by Message-ID ----------------------------------------- */

int pw_patches_by_msgid(struct pw *pw, const char *msgid, json_t **out)
{
	struct buf b = BUF_INIT;
	size_t n;
	int rc;

	*out = NULL;
	n = msgid ? strlen(msgid) : 0;
	if (n >= 2 && msgid[0] == '<' && msgid[n - 1] == '>') {
		msgid++;
		n -= 2;
	}
	if (!n)
		return pt_error_set(PT_EINVAL, "no Message-ID to look up");
	rc = buf_add(&b, "patches/?msgid=", 15);
	if (!rc) {
		char *id = pt_strndup(msgid, n);

		rc = id ? pw_url_encode(&b, id) : PT_ENOMEM;
		free(id);
	}
	if (!rc)
		rc = pw_get_list(pw, b.ptr, out);
	buf_free(&b);
	return rc;
}
