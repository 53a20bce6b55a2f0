/*
 * thread.c - threading list mail into series, versions and review (see
 * thread.h).  A series is keyed by its thread root (the first entry of
 * References, else In-Reply-To, else the message itself), its version,
 * its size m and its author, so that the n/m patches of one posting meet
 * whatever order they arrive in, and a v2 posted in reply to v1 is still
 * its own series.  Replies attach to the nearest patch or cover letter
 * in their In-Reply-To/References chain; a reply that arrives before its
 * patch is kept with its references and adopted when the patch comes.
 * Each message is one transaction, or a savepoint when the caller holds
 * one (the archive import batches messages that way).  It does not parse
 * mail (patch_from_mail does) nor score.
 *
 * This file owns struct thread's life (and its sentiment word list), the
 * kind of a message and the series side: messages, series, version links
 * and patches, and the entry points.  The rest of the module:
 * thread_sql.c (the statements), thread_review.c (replies, review acts
 * and their adoption), thread_text.c (what a reply's text says) and
 * thread_feat.c (the features read back); thread_int.h ties them.
 */
#include "scoring/lists/thread.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/lists/thread_int.h"
#include "scoring/patch/subject.h"
#include "scoring/util/strmap.h"

#define THREAD_MAX_LEXICON (1u << 20)

const char *thread_kind_name(enum thread_kind k)
{
	switch (k) {
	case THREAD_PATCH:
		return "patch";
	case THREAD_COVER:
		return "cover";
	case THREAD_REPLY:
		return "reply";
	default:
		return "other";
	}
}

void thread_result_clear(struct thread_result *r)
{
	if (!r)
		return;
	free(r->message_id);
	memset(r, 0, sizeof(*r));
}

/* ---- lexicon ------------------------------------------------------- */

static int lexicon_line(struct thread *t, const char *s, size_t n)
{
	struct strmap_entry *e;
	size_t w = 0;
	char *end;
	double v;
	int added, rc;

	while (w < n && !isspace((unsigned char)s[w]))
		w++;
	if (!w || s[0] == '#' || w == n)
		return 0;
	v = strtod(s + w, &end);
	if (end == s + w)
		return 0;
	rc = strmap_put(&e, &added, &t->lex, s, w);
	if (rc)
		return rc;
	e->v.i = (int64_t)(v * 1000.0);
	return 0;
}

static int lexicon_load(struct thread *t, const char *path)
{
	struct buf b = BUF_INIT;
	size_t i = 0, j;
	int rc;

	if (path)
		rc = pt_read_file(&b, path, THREAD_MAX_LEXICON);
	else
		rc = buf_add(&b, thread_builtin_lexicon,
			     thread_builtin_lexicon_len);
	if (rc) {
		buf_free(&b);
		return path ? pt_error_wrap(rc, "sentiment word list '%s'",
					    path)
			    : rc;
	}
	while (!rc && i < b.len) {
		for (j = i; j < b.len && b.ptr[j] != '\n'; j++)
			b.ptr[j] = (char)tolower((unsigned char)b.ptr[j]);
		rc = lexicon_line(t, b.ptr + i, j - i);
		i = j + 1;
	}
	buf_free(&b);
	return rc;
}

int thread_open(struct thread **out, struct db *db, const char *lexicon)
{
	struct thread *t;
	int rc = 0;

	*out = NULL;
	t = pt_calloc(1, sizeof(*t));
	if (!t)
		return PT_ENOMEM;
	t->db = db;
	rc = lexicon_load(t, lexicon);
	if (rc) {
		thread_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void thread_free(struct thread *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < SQL_COUNT; i++)
		sqlite3_finalize(t->st[i]);
	strmap_free(&t->lex);
	free(t);
}

/* ---- classification ------------------------------------------------ */

/*
 * A patch or cover letter posted without the word PATCH ("[RFC 2/9]
 * foo", "[foo v1 1/6] bar", "[RFC] baz" with a diff): no reply marker,
 * a bracket prefix that numbers it in a series or marks it RFC, and a
 * diff (a cover letter, numbered 0, has none).
 */
static int unworded_patch(const struct patch *p)
{
	const struct subject *s = &p->subject;

	if (s->is_patch || s->reply_depth || s->is_pull)
		return 0;
	if (s->number == 0 && s->total > 0)
		return 1;
	return (s->is_rfc || s->total > 0) && p->nfiles > 0;
}

static enum thread_kind classify(const struct patch *p)
{
	const struct subject *s = &p->subject;

	if ((s->is_patch && !s->reply_depth && !s->is_pull) ||
	    unworded_patch(p))
		return s->number == 0 && s->total > 0 ? THREAD_COVER
						      : THREAD_PATCH;
	if (s->reply_depth || p->in_reply_to || p->nreferences)
		return THREAD_REPLY;
	return THREAD_OTHER;
}

static const char *thread_root(const struct patch *p)
{
	if (p->nreferences)
		return p->references[0];
	if (p->in_reply_to)
		return p->in_reply_to;
	return p->message_id;
}

/* The subject's version, size and number, 1 when it names none. */
static int64_t or_one(unsigned v)
{
	return v ? (int64_t)v : 1;
}

/* ---- messages ------------------------------------------------------ */

static int insert_message(struct thread *t, const struct patch *p,
			  enum thread_kind kind, const char *source, int *dup)
{
	int rc;

	rc = thread_stmt_exec(t, SQL_INSERT_MESSAGE, "storing message",
			      "sssssisssi", p->message_id, p->in_reply_to,
			      p->list_id, p->author.name, p->author.email,
			      (int64_t)p->author_date, p->subject.raw,
			      thread_kind_name(kind), source,
			      (int64_t)time(NULL));
	*dup = !rc && sqlite3_changes(t->db->h) == 0;
	return rc;
}

static int insert_refs(struct thread *t, const struct patch *p)
{
	size_t i, n = p->nreferences;
	int rc = 0, have_irt = 0;

	for (i = 0; !rc && i <= n; i++) {
		const char *ref = i < n ? p->references[i] : p->in_reply_to;

		if (!ref || (i == n && have_irt))
			continue;
		if (p->in_reply_to && !strcmp(ref, p->in_reply_to))
			have_irt = 1;
		rc = thread_stmt_exec(t, SQL_INSERT_REF, "storing references",
				      "ssi", p->message_id, ref, (int64_t)i);
	}
	return rc;
}

int thread_set_message_link(struct thread *t, const char *msgid, int64_t series,
			    int64_t patch)
{
	return thread_stmt_exec(t, SQL_LINK_MESSAGE, "linking message", "nis",
				series, patch, msgid);
}

/* ---- series -------------------------------------------------------- */

static int series_key(struct buf *key, const struct patch *p)
{
	unsigned total = p->subject.total ? p->subject.total : 1;

	return buf_addf(key, "%s|v%u|%u|%s", thread_root(p),
			p->subject.version ? p->subject.version : 1, total,
			p->author.email ? p->author.email : "");
}

static int series_get(struct thread *t, const struct patch *p, int64_t *id)
{
	struct buf key = BUF_INIT;
	int rc;

	rc = series_key(&key, p);
	if (!rc)
		rc = thread_stmt_i64(t, id, SQL_SERIES_GET, "storing series",
				     "ssssiiii", key.ptr, p->author.name,
				     p->author.email, p->list_id,
				     or_one(p->subject.version),
				     or_one(p->subject.total),
				     (int64_t)p->author_date,
				     (int64_t)p->author_date);
	buf_free(&key);
	return rc;
}

static int series_set_subject(struct thread *t, int64_t id,
			      const struct patch *p, int is_cover)
{
	char *norm;
	int rc;

	norm = subject_normalise(p->subject.clean ? p->subject.clean : "");
	if (!norm)
		return PT_ENOMEM;
	if (is_cover)
		rc = thread_stmt_exec(t, SQL_SUBJECT_COVER,
				      "storing series subject", "sssi",
				      p->subject.clean, norm, p->message_id,
				      id);
	else
		rc = thread_stmt_exec(t, SQL_SUBJECT_PATCH,
				      "storing series subject", "ssi",
				      p->subject.clean, norm, id);
	free(norm);
	return rc;
}

static int series_count(struct thread *t, int64_t id, int *complete)
{
	int64_t c = 0;
	int rc;

	rc = thread_stmt_i64(t, &c, SQL_SERIES_COUNT, "counting series", "i",
			     id);
	*complete = (int)c;
	return rc;
}

/* ---- version links ------------------------------------------------- */

static int series_of_msg(struct thread *t, const char *msgid, int ver,
			 int64_t self, int64_t *out)
{
	return thread_stmt_i64(t, out, SQL_VERSION_OF_MSG, "finding a version",
			       "sii", msgid, (int64_t)ver, self);
}

/* Message-ids written in a cover letter: lore links and <id> forms. */
static int link_from_text(struct thread *t, const char *text, int ver,
			  int64_t self, int64_t *prev)
{
	const char *p = text, *s, *e;
	char id[512];
	size_t n;
	int rc = 0;

	*prev = 0;
	while (!rc && !*prev && p && (p = strchr(p, '@'))) {
		for (s = p; s > text && !strchr(" \t\n</\"(", s[-1]); s--)
			;
		for (e = p; *e && !strchr(" \t\n>/\")", *e); e++)
			;
		p = e;
		n = (size_t)(e - s);
		if (n < 3 || n >= sizeof(id))
			continue;
		memcpy(id, s, n);
		id[n] = '\0';
		rc = series_of_msg(t, id, ver, self, prev);
	}
	return rc;
}

/* Try the three ways a new version names its predecessor. */
static int link_versions(struct thread *t, int64_t self, const struct patch *p,
			 const char *text, int64_t *prev)
{
	int ver = (int)(p->subject.version ? p->subject.version : 1);
	const char *reason = NULL;
	size_t i;
	int rc;

	rc = thread_stmt_i64(t, prev, SQL_VERSION_EXISTING, "reading versions",
			     "i", self);
	if (rc || *prev || ver < 2)
		goto out;
	for (i = 0; !rc && !*prev && i < p->nreferences; i++)
		rc = series_of_msg(t, p->references[i], ver, self, prev);
	if (!rc && !*prev && p->in_reply_to)
		rc = series_of_msg(t, p->in_reply_to, ver, self, prev);
	reason = "in-reply-to";
	if (!rc && !*prev && text) {
		rc = link_from_text(t, text, ver, self, prev);
		reason = "cover-link";
	}
	if (!rc && !*prev) {
		rc = thread_stmt_i64(t, prev, SQL_VERSION_BY_SUBJECT,
				     "finding a version", "sii",
				     p->author.email, (int64_t)ver, self);
		reason = "subject";
	}
	if (!rc && *prev)
		rc = thread_stmt_exec(t, SQL_VERSION_INSERT, "linking versions",
				      "iis", self, *prev, reason);
out:
	if (!rc && *prev)
		rc = thread_stmt_exec(t, SQL_VERSION_PATCHES,
				      "linking patch versions", "ii", self,
				      *prev);
	return rc;
}

/* ---- patches ------------------------------------------------------- */

static int insert_patch(struct thread *t, const struct patch *p, int64_t series,
			int64_t *id)
{
	char *norm;
	int rc;

	norm = subject_normalise(p->subject.clean ? p->subject.clean : "");
	if (!norm)
		return PT_ENOMEM;
	rc = thread_stmt_i64(t, id, SQL_INSERT_PATCH, "storing patch",
			     "siiiissssiiii", p->message_id, series,
			     or_one(p->subject.number),
			     or_one(p->subject.total),
			     or_one(p->subject.version), p->subject.clean, norm,
			     p->author.name, p->author.email,
			     (int64_t)p->author_date, (int64_t)p->nfiles,
			     (int64_t)p->added, (int64_t)p->removed);
	free(norm);
	return rc;
}

/* ---- the entry points ---------------------------------------------- */

static int add_series_member(struct thread *t, const struct patch *p,
			     enum thread_kind kind, struct thread_result *res)
{
	struct buf text = BUF_INIT;
	int64_t series = 0, patch = 0, prev = 0;
	int rc, complete = 0;

	rc = series_get(t, p, &series);
	if (!rc && kind == THREAD_COVER)
		rc = series_set_subject(t, series, p, 1);
	else if (!rc && (p->subject.number <= 1 || p->subject.total <= 1))
		rc = series_set_subject(t, series, p, 0);
	if (!rc && kind == THREAD_PATCH)
		rc = insert_patch(t, p, series, &patch);
	if (!rc)
		rc = thread_set_message_link(t, p->message_id, series, patch);
	if (!rc)
		rc = series_count(t, series, &complete);
	if (!rc && kind == THREAD_COVER)
		rc = thread_reply_body(&text, p);
	if (!rc)
		rc = link_versions(t, series, p,
				   kind == THREAD_COVER ? text.ptr : NULL,
				   &prev);
	if (!rc)
		rc = thread_adopt_orphans(t, p->message_id, &res->attached);
	res->series_id = series;
	res->patch_id = patch;
	res->complete = complete;
	res->prev_series_id = prev;
	buf_free(&text);
	return rc;
}

static int add_in_txn(struct thread *t, const struct patch *p,
		      const char *source, struct thread_result *res)
{
	int rc, dup = 0;

	res->kind = classify(p);
	rc = insert_message(t, p, res->kind, source, &dup);
	if (rc || dup) {
		res->duplicate = dup;
		return rc;
	}
	rc = insert_refs(t, p);
	if (rc)
		return rc;
	switch (res->kind) {
	case THREAD_PATCH:
	case THREAD_COVER:
		return add_series_member(t, p, res->kind, res);
	case THREAD_REPLY:
		return thread_add_reply(t, p, res);
	default:
		return 0;
	}
}

int thread_add_patch(struct thread *t, const struct patch *p,
		     const char *source, struct thread_result *res)
{
	struct thread_result dummy;
	int rc, own = 0;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	if (!p->message_id || !*p->message_id)
		return pt_error_set(PT_EINVAL,
				    "message from '%s' has no "
				    "Message-ID",
				    source ? source : "?");
	res->message_id = pt_strdup(p->message_id);
	if (!res->message_id)
		return PT_ENOMEM;
	rc = db_savepoint(t->db, "thread_add", &own);
	if (!rc)
		rc = db_release(t->db, "thread_add", own,
				add_in_txn(t, p, source, res));
	if (res == &dummy)
		thread_result_clear(res);
	return rc;
}

int thread_add_mail(struct thread *t, const char *raw, size_t len,
		    const char *source, struct thread_result *res)
{
	struct patch *p = NULL;
	int rc;

	if (res)
		memset(res, 0, sizeof(*res));
	rc = patch_from_mail(&p, raw, len);
	if (rc)
		return pt_error_wrap(rc, "message from '%s'",
				     source ? source : "?");
	rc = thread_add_patch(t, p, source, res);
	patch_free(p);
	return rc;
}
