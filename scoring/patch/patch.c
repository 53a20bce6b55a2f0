/*
 * patch.c - struct patch itself: construction, freeing, attaching the
 * message (split into changelog and trailers) and the diff (copied and
 * parsed), the few questions every feature asks (trailer counts, "is it
 * tagged as a fix") and the JSON form (docs/patch-json.md).  Building a
 * patch from a mail or a commit lives in mail.c and patch_git.c.
 */
#include "scoring/patch/patch.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int patch_new(struct patch **out)
{
	*out = pt_calloc(1, sizeof(**out));
	if (!*out)
		return PT_ENOMEM;
	(*out)->subject.version = 1;
	return 0;
}

static void person_clear(struct person *p)
{
	free(p->name);
	free(p->email);
	p->name = p->email = NULL;
}

static void clear_diff(struct patch *p)
{
	diff_files_free(p->files, p->nfiles);
	free(p->diff);
	p->files = NULL;
	p->nfiles = 0;
	p->diff = NULL;
	p->diff_len = 0;
	p->added = p->removed = 0;
}

static void clear_message(struct patch *p)
{
	trailers_free(p->trailers, p->ntrailers);
	free(p->message);
	free(p->changelog);
	p->trailers = NULL;
	p->ntrailers = 0;
	p->message = p->changelog = NULL;
}

void patch_free(struct patch *p)
{
	size_t i;

	if (!p)
		return;
	free(p->message_id);
	free(p->in_reply_to);
	for (i = 0; i < p->nreferences; i++)
		free(p->references[i]);
	free(p->references);
	free(p->list_id);
	free(p->commit_id);
	free(p->parent_id);
	person_clear(&p->author);
	person_clear(&p->committer);
	subject_clear(&p->subject);
	clear_message(p);
	free(p->notes);
	clear_diff(p);
	for (i = 0; i < p->nuncounted; i++)
		free(p->uncounted[i]);
	free(p->uncounted);
	free(p);
}

int patch_set_diff(struct patch *p, const char *diff, size_t len)
{
	struct patch_file *files;
	size_t n, i;
	char *copy;
	int rc;

	copy = pt_strndup(diff, len);
	if (!copy)
		return PT_ENOMEM;
	rc = diff_parse(&files, &n, copy, len);
	if (rc) {
		free(copy);
		return rc;
	}
	clear_diff(p);
	p->diff = copy;
	p->diff_len = len;
	p->files = files;
	p->nfiles = n;
	for (i = 0; i < n; i++) {
		p->added += files[i].added;
		p->removed += files[i].removed;
	}
	return 0;
}

int patch_set_message(struct patch *p, const char *msg, size_t len)
{
	struct trailer *t = NULL;
	size_t n = 0, body;
	char *m = NULL, *c = NULL;
	int rc;

	rc = trailers_parse(&t, &n, &body, msg, len);
	if (rc)
		return rc;
	m = pt_strndup(msg, len);
	c = m ? pt_strndup(msg, body) : NULL;
	if (!c) {
		trailers_free(t, n);
		free(m);
		return PT_ENOMEM;
	}
	clear_message(p);
	p->message = m;
	p->changelog = c;
	p->trailers = t;
	p->ntrailers = n;
	return 0;
}

size_t patch_count_trailers(const struct patch *p, enum trailer_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < p->ntrailers; i++)
		if (p->trailers[i].kind == kind)
			n++;
	return n;
}

int patch_is_tagged_fix(const struct patch *p)
{
	size_t i;

	for (i = 0; i < p->ntrailers; i++)
		if (p->trailers[i].kind == TRAILER_FIXES ||
		    p->trailers[i].is_stable)
			return 1;
	return 0;
}

/* ---- JSON ---------------------------------------------------------- */

static const char *const status_names[] = {
	[PATCH_FILE_MODIFIED] = "modified", [PATCH_FILE_ADDED] = "added",
	[PATCH_FILE_DELETED] = "deleted",   [PATCH_FILE_RENAMED] = "renamed",
	[PATCH_FILE_COPIED] = "copied",
};

/*
 * Strings may carry invalid UTF-8 (jansson refuses those), so they go in
 * with json_stringn_nocheck after replacing each bad byte with U+FFFD.
 */
static json_t *jstrn(const char *s, size_t len)
{
	struct buf b = BUF_INIT;
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	json_t *j;
	size_t n, i;

	for (; p < end; p += n) {
		n = 0;
		if (*p < 0x80)
			n = 1;
		else if (*p >= 0xc2 && *p <= 0xdf)
			n = 2;
		else if (*p >= 0xe0 && *p <= 0xef)
			n = 3;
		else if (*p >= 0xf0 && *p <= 0xf4)
			n = 4;
		if (n > (size_t)(end - p))
			n = 0;
		for (i = 1; i < n; i++)
			if ((p[i] & 0xc0) != 0x80)
				n = 0;
		if (n == 3 && ((*p == 0xe0 && p[1] < 0xa0) ||
			       (*p == 0xed && p[1] >= 0xa0)))
			n = 0;
		if (n == 4 && ((*p == 0xf0 && p[1] < 0x90) ||
			       (*p == 0xf4 && p[1] >= 0x90)))
			n = 0;
		if (n == 0) {
			if (buf_add(&b, "\xef\xbf\xbd", 3))
				goto fail;
			n = 1;
		} else if (buf_add(&b, p, n)) {
			goto fail;
		}
	}
	j = json_stringn_nocheck(b.ptr, b.len);
	buf_free(&b);
	return j;
fail:
	buf_free(&b);
	return NULL;
}

static json_t *jstr(const char *s)
{
	return s ? jstrn(s, strlen(s)) : json_null();
}

static char *iso_date(int64_t t, char *out, size_t n)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (!t || !gmtime_r(&tt, &tm) ||
	    !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return NULL;
	return out;
}

/* json_object_set_new that records failure in *ok. */
static void put(json_t *o, const char *k, json_t *v, int *ok)
{
	if (!v || json_object_set_new(o, k, v))
		*ok = 0;
}

static json_t *person_json(const struct person *p)
{
	json_t *o = json_object();
	int ok = o != NULL;

	if (ok) {
		put(o, "name", jstr(p->name), &ok);
		put(o, "email", jstr(p->email), &ok);
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *subject_json(const struct subject *s)
{
	json_t *o = json_object(), *tags = json_array();
	int ok = o && tags;
	size_t i;

	for (i = 0; ok && i < s->ntags; i++)
		if (json_array_append_new(tags, jstr(s->tags[i])))
			ok = 0;
	if (!ok) {
		json_decref(o);
		json_decref(tags);
		return NULL;
	}
	put(o, "raw", jstr(s->raw), &ok);
	put(o, "clean", jstr(s->clean), &ok);
	put(o, "version", json_integer(s->version), &ok);
	put(o, "number", json_integer(s->number), &ok);
	put(o, "total", json_integer(s->total), &ok);
	put(o, "tags", tags, &ok);
	put(o, "is_rfc", json_boolean(s->is_rfc), &ok);
	put(o, "is_resend", json_boolean(s->is_resend), &ok);
	put(o, "is_autosel", json_boolean(s->is_autosel), &ok);
	put(o, "is_cover", json_boolean(s->is_cover), &ok);
	put(o, "is_patch", json_boolean(s->is_patch), &ok);
	put(o, "is_pull", json_boolean(s->is_pull), &ok);
	put(o, "reply_depth", json_integer(s->reply_depth), &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *trailer_json(const struct trailer *t)
{
	json_t *o = json_object();
	int ok = o != NULL;

	if (!ok)
		return NULL;
	put(o, "key", jstr(t->key), &ok);
	put(o, "kind", json_string(trailer_kind_json(t->kind)), &ok);
	put(o, "value", jstr(t->value), &ok);
	put(o, "name", jstr(t->name), &ok);
	put(o, "email", jstr(t->email), &ok);
	put(o, "comment", jstr(t->comment), &ok);
	put(o, "fixes_sha", jstr(t->fixes_sha), &ok);
	put(o, "fixes_subject", jstr(t->fixes_subject), &ok);
	put(o, "is_stable", json_boolean(t->is_stable), &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* One diff line with its prefix kept, as in the diff text. */
static json_t *line_json(const struct patch_line *l)
{
	struct buf b = BUF_INIT;
	json_t *j = NULL;

	if (!buf_add(&b, &l->kind, 1) && !buf_add(&b, l->text, l->len))
		j = jstrn(b.ptr, b.len);
	buf_free(&b);
	return j;
}

static json_t *hunk_json(const struct patch_hunk *h)
{
	json_t *o = json_object(), *lines = json_array();
	int ok = o && lines;
	size_t i;

	for (i = 0; ok && i < h->nlines; i++)
		if (json_array_append_new(lines, line_json(&h->lines[i])))
			ok = 0;
	if (!ok) {
		json_decref(o);
		json_decref(lines);
		return NULL;
	}
	put(o, "old_start", json_integer((json_int_t)h->old_start), &ok);
	put(o, "old_lines", json_integer((json_int_t)h->old_lines), &ok);
	put(o, "new_start", json_integer((json_int_t)h->new_start), &ok);
	put(o, "new_lines", json_integer((json_int_t)h->new_lines), &ok);
	put(o, "section", jstr(h->heading), &ok);
	put(o, "truncated", json_boolean(h->truncated), &ok);
	put(o, "lines", lines, &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *hunks_json(const struct patch_file *f)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < f->nhunks; i++)
		if (json_array_append_new(a, hunk_json(&f->hunks[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *file_json(const struct patch_file *f)
{
	json_t *o = json_object();
	int ok = o != NULL;
	unsigned st = (unsigned)f->status;

	if (!ok)
		return NULL;
	put(o, "old_path", jstr(f->old_path), &ok);
	put(o, "new_path", jstr(f->new_path), &ok);
	put(o, "status",
	    json_string(st <= PATCH_FILE_COPIED ? status_names[st]
						: "modified"),
	    &ok);
	put(o, "old_mode", json_integer(f->old_mode), &ok);
	put(o, "new_mode", json_integer(f->new_mode), &ok);
	put(o, "similarity", json_integer(f->similarity), &ok);
	put(o, "binary", json_boolean(f->binary), &ok);
	put(o, "added", json_integer(f->added), &ok);
	put(o, "removed", json_integer(f->removed), &ok);
	put(o, "hunks", json_integer((json_int_t)f->nhunks), &ok);
	put(o, "hunks_detail", hunks_json(f), &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *strings_json(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, jstr(v[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *date_json(int64_t t)
{
	char tmp[32];
	const char *s = iso_date(t, tmp, sizeof(tmp));

	return s ? json_string(s) : json_null();
}

static json_t *patch_json(const struct patch *p)
{
	json_t *o = json_object(), *tr = json_array(), *fi = json_array();
	int ok = o && tr && fi;
	size_t i;

	for (i = 0; ok && i < p->ntrailers; i++)
		if (json_array_append_new(tr, trailer_json(&p->trailers[i])))
			ok = 0;
	for (i = 0; ok && i < p->nfiles; i++)
		if (json_array_append_new(fi, file_json(&p->files[i])))
			ok = 0;
	if (!ok) {
		json_decref(o);
		json_decref(tr);
		json_decref(fi);
		return NULL;
	}
	put(o, "source",
	    p->source == PATCH_FROM_GIT	   ? json_string("git")
	    : p->source == PATCH_FROM_MAIL ? json_string("mail")
					   : json_null(),
	    &ok);
	put(o, "message_id", jstr(p->message_id), &ok);
	put(o, "in_reply_to", jstr(p->in_reply_to), &ok);
	put(o, "references", strings_json(p->references, p->nreferences), &ok);
	put(o, "list_id", jstr(p->list_id), &ok);
	put(o, "commit", jstr(p->commit_id), &ok);
	put(o, "parent", jstr(p->parent_id), &ok);
	put(o, "author", person_json(&p->author), &ok);
	put(o, "committer", person_json(&p->committer), &ok);
	put(o, "author_date", date_json(p->author_date), &ok);
	put(o, "commit_date", date_json(p->commit_date), &ok);
	put(o, "subject", subject_json(&p->subject), &ok);
	put(o, "changelog", jstr(p->changelog), &ok);
	put(o, "notes", jstr(p->notes), &ok);
	put(o, "trailers", tr, &ok);
	put(o, "files", fi, &ok);
	put(o, "added", json_integer(p->added), &ok);
	put(o, "removed", json_integer(p->removed), &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int patch_to_json(struct buf *out, const struct patch *p)
{
	json_t *j = patch_json(p);
	char *s;
	int rc;

	if (!j)
		return pt_error_set(PT_ENOMEM, "out of memory building JSON");
	s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!s)
		return pt_error_set(PT_ENOMEM, "out of memory writing JSON");
	rc = buf_addstr(out, s);
	free(s);
	return rc;
}
