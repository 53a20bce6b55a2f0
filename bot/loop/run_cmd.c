/*
 * run_cmd.c - where the daemon finds maintainers' commands (acted on by
 * command.c): in each reply threaded from IMAP, while the folder is
 * read (before the pass's work, so that a mute in the same batch as
 * its series holds), and in Patchwork comments, queued as "pw-comment"
 * work (key PROJECT/patches|covers/ID/COMMENT) that the drain claims
 * before any other kind.  Shares run_int.h with run.c and run_work.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/lists/lookup.h"
#include "scoring/lists/thread.h"
#include "bot/sys/log.h"
#include "bot/patchwork/patchwork.h"
#include "bot/outbox/control.h"
#include "bot/outbox/store.h"
#include "bot/loop/command.h"
#include "bot/loop/run_int.h"

#define CMD_MAX_PATCHES 512 /* patches of one series judged against */

/* Cheap test before any parsing: most mail names no command. */
static int mentions_us(const char *raw, size_t len)
{
	static const char tag[] = "patchtriage";
	size_t i, n = sizeof(tag) - 1;

	for (i = 0; i + n <= len; i++)
		if ((raw[i] | 0x20) == 'p' && !strncasecmp(raw + i, tag, n))
			return 1;
	return 0;
}

struct mail_series {
	struct run *r;
	struct patch **p;
	size_t n;
};

static int add_raw(const char *id, void *ctx)
{
	struct mail_series *ms = ctx;
	struct patch *p = NULL, **v;
	int rc;

	if (ms->n >= CMD_MAX_PATCHES)
		return 0;
	rc = lookup_raw_patch(ms->r->lk, id, &p);
	if (rc == PT_ENOTFOUND) {
		pt_error_clear();
		return 0;
	}
	v = rc ? NULL : realloc(ms->p, (ms->n + 1) * sizeof(*v));
	if (!rc && !v)
		rc = PT_ENOMEM;
	if (rc) {
		patch_free(p);
		return rc;
	}
	ms->p = v;
	ms->p[ms->n++] = p;
	return 0;
}

static void env_of(struct run *r, struct command_env *e)
{
	e->db = r->db;
	e->pol = r->c.pol;
	e->lk = r->lk;
}

/* The series sid as the mail path keys it (run_work.c: the cover, else
 * its first kept patch) with its kept patch mails. */
static int mail_series(struct run *r, int64_t sid, struct mail_series *ms,
		       char **key)
{
	int rc, done;

	*key = NULL;
	rc = lookup_series_head(r->lk, sid, key, &done);
	if (rc == PT_ENOTFOUND) {
		pt_error_clear();
		return 0;
	}
	if (!rc)
		rc = lookup_series_patches(r->lk, sid, add_raw, ms);
	if (!rc && !*key && ms->n) {
		*key = pt_strdup(ms->p[0]->message_id);
		rc = *key ? 0 : PT_ENOMEM;
	}
	return rc;
}

int run_mail_command(struct run *r, const struct thread_result *res,
		     const char *raw, size_t len)
{
	struct mail_series ms = { r, NULL, 0 };
	struct command_series s = { NULL, NULL, 0, NULL };
	struct command_msg m;
	struct command_env e;
	struct patch *p = NULL;
	struct buf text = BUF_INIT;
	char *key = NULL;
	size_t i;
	int rc;

	if (res->duplicate || res->kind != THREAD_REPLY ||
	    !mentions_us(raw, len))
		return 0;
	if (patch_from_mail(&p, raw, len) || thread_reply_body(&text, p)) {
		log_debug("imap: <%s>: %s", res->message_id, pt_error_last());
		pt_error_clear();
		rc = 0;
		goto out;
	}
	rc = res->series_id > 0 ? mail_series(r, res->series_id, &ms, &key) : 0;
	s.key = key;
	s.patches = (const struct patch *const *)ms.p;
	s.n = key ? ms.n : 0;
	m.message_id = res->message_id;
	m.from = p->author.email;
	m.text = text.ptr;
	m.source = "imap";
	env_of(r, &e);
	if (!rc)
		rc = command_handle(&e, &m, &s, NULL);
out:
	for (i = 0; i < ms.n; i++)
		patch_free(ms.p[i]);
	free(ms.p);
	free(key);
	buf_free(&text);
	patch_free(p);
	return rc;
}

/* ---- Patchwork comments ------------------------------------------- */

int run_queue_comment(struct run *r, const char *project,
		      const struct pw_event *ev)
{
	struct buf key = BUF_INIT;
	int rc;

	if (ev->comment_id <= 0 || (ev->patch_id <= 0 && ev->cover_id <= 0))
		return 0;
	rc = buf_addf(&key, "%s/%s/%lld/%lld", project,
		      ev->patch_id > 0 ? "patches" : "covers",
		      (long long)(ev->patch_id > 0 ? ev->patch_id
						   : ev->cover_id),
		      (long long)ev->comment_id);
	if (!rc)
		rc = store_enqueue(r->db, "pw-comment", key.ptr, NULL);
	buf_free(&key);
	return rc;
}

/* The comment's document out of its parent's list (*out fresh). */
static int fetch_comment(struct run *r, const char *what, long long id,
			 long long cid, json_t **out)
{
	struct buf path = BUF_INIT;
	json_t *list = NULL, *it;
	size_t i;
	int rc;

	*out = NULL;
	rc = buf_addf(&path, "%s/%lld/comments/", what, id);
	if (!rc)
		rc = pw_get_list(r->c.pw, path.ptr, &list);
	json_array_foreach (list, i, it)
		if (json_integer_value(json_object_get(it, "id")) == cid)
			*out = json_incref(it);
	if (!rc && !*out)
		rc = pt_error_set(PT_ENOTFOUND, "no comment %lld on %s %lld",
				  cid, what, id);
	json_decref(list);
	buf_free(&path);
	return rc;
}

/* The commands of comment c about Patchwork series sid. */
static int comment_on_series(struct run *r, const char *project,
			     const struct command_msg *m, int64_t sid)
{
	struct pw_series *ps = NULL;
	struct command_series s = { NULL, NULL, 0, project };
	const struct patch **v = NULL;
	struct command_env e;
	char *key = NULL;
	size_t i;
	int rc;

	rc = pw_series_fetch_mails(r->c.pw, sid, &ps);
	if (!rc) {
		key = run_pw_series_key(ps);
		v = pt_calloc(ps->npatches + 1, sizeof(*v));
		rc = v ? 0 : PT_ENOMEM;
	}
	for (i = 0; !rc && i < ps->npatches; i++)
		if (ps->patches[i].parsed)
			v[s.n++] = ps->patches[i].parsed;
	s.key = key;
	s.patches = v;
	if (!key)
		s.n = 0;
	env_of(r, &e);
	if (!rc)
		rc = command_handle(&e, m, &s, NULL);
	free(v);
	free(key);
	pw_series_free(ps);
	return rc;
}

static char *strip(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (n >= 2 && id[0] == '<' && id[n - 1] == '>')
		return pt_strndup(id + 1, n - 2);
	return id ? pt_strdup(id) : NULL;
}

int run_pw_comment(struct run *r, const char *key)
{
	char project[256], what[8];
	long long id, cid;
	json_t *c = NULL, *parent = NULL, *series, *it;
	struct buf path = BUF_INIT;
	struct command_msg m;
	const char *content;
	char *msgid = NULL;
	size_t i;
	int rc;

	if (sscanf(key, "%255[^/]/%7[a-z]/%lld/%lld", project, what, &id,
		   &cid) != 4 ||
	    (strcmp(what, "patches") && strcmp(what, "covers")))
		return pt_error_set(PT_EINVAL, "bad work key '%s'", key);
	rc = fetch_comment(r, what, id, cid, &c);
	content = json_string_value(json_object_get(c, "content"));
	if (rc || !content || !control_parse(content, strlen(content)))
		goto out;
	msgid = strip(json_string_value(json_object_get(c, "msgid")));
	m.message_id = msgid;
	m.from = json_string_value(
		json_object_get(json_object_get(c, "submitter"), "email"));
	m.text = content;
	m.source = "patchwork";
	rc = buf_addf(&path, "%s/%lld/", what, id);
	if (!rc)
		rc = pw_get_json(r->c.pw, path.ptr, &parent);
	series = rc ? NULL : json_object_get(parent, "series");
	json_array_foreach (series, i, it) {
		json_int_t sid = json_integer_value(json_object_get(it, "id"));

		if (!rc && sid > 0)
			rc = comment_on_series(r, project, &m, sid);
	}
out:
	if (rc == PT_ENOTFOUND) { /* deleted since: nothing to act on */
		log_info("%s", pt_error_last());
		pt_error_clear();
		rc = 0;
	}
	json_decref(parent);
	json_decref(c);
	buf_free(&path);
	free(msgid);
	return rc;
}
