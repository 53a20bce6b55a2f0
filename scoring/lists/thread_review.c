/*
 * thread_review.c - replies threaded to the patch or cover letter they
 * answer (the nearest known ancestor in In-Reply-To/References), the
 * review acts given on the list ("Reviewed-by:" and the other trailer
 * lines a reply carries unquoted, but not those of an original pasted
 * below it, Outlook-style, nor of a patch's own trailer block) and the
 * adoption of replies that came before their patch.  Part of thread.c's module (thread_int.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/lists/thread_int.h"
#include "scoring/patch/trailer.h"

/* ---- replies ------------------------------------------------------- */

struct target {
	int64_t series;
	int64_t patch; /* 0: the cover letter, i.e. the whole series */
};

/* What message msgid is in the threading: a patch, a cover, a reply. */
static int target_of(struct thread *t, const char *msgid, struct target *o,
		     int *found)
{
	sqlite3_stmt *st;
	int rc;

	*found = 0;
	rc = thread_stmt_start(&st, t, SQL_TARGET_OF, "s", msgid);
	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		o->series = sqlite3_column_int64(st, 0);
		o->patch = sqlite3_column_int64(st, 1);
		*found = 1;
		rc = 0;
	} else {
		rc = rc == SQLITE_DONE ? 0 : db_error(t->db, "finding parent");
	}
	thread_stmt_end(st);
	return rc;
}

/* Nearest known ancestor: In-Reply-To, then References newest first. */
static int resolve_refs(struct thread *t, char **refs, size_t nrefs,
			const char *irt, struct target *o)
{
	size_t i;
	int rc = 0, found = 0;

	memset(o, 0, sizeof(*o));
	if (irt)
		rc = target_of(t, irt, o, &found);
	for (i = nrefs; !rc && !found && i > 0; i--)
		rc = target_of(t, refs[i - 1], o, &found);
	return rc;
}

static void split_person(const char *v, size_t n, struct buf *name,
			 struct buf *email)
{
	const char *lt = memchr(v, '<', n), *gt;
	size_t k;

	buf_reset(name);
	buf_reset(email);
	if (!lt || !(gt = memchr(lt, '>', n - (size_t)(lt - v)))) {
		buf_add(email, v, n);
		buf_rtrim(email);
		return;
	}
	for (k = (size_t)(lt - v); k && isspace((unsigned char)v[k - 1]); k--)
		;
	buf_add(name, v, k);
	for (k = 1; lt + k < gt; k++)
		buf_addch(email, tolower((unsigned char)lt[k]));
}

static int store_review(struct thread *t, const struct patch *p,
			const struct target *tg, const char *kind,
			const char *v, size_t n)
{
	struct buf name = BUF_INIT, email = BUF_INIT;
	int rc;

	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	split_person(v, n, &name, &email);
	rc = thread_stmt_exec(t, SQL_INSERT_REVIEW, "storing review", "snisssi",
			      p->message_id, tg->series, tg->patch, kind,
			      name.len ? name.ptr : NULL, email.ptr,
			      (int64_t)p->author_date);
	buf_free(&name);
	buf_free(&email);
	return rc;
}

/* The end of the line at s (its '\n' or the final NUL). */
static const char *line_end(const char *s)
{
	const char *e = strchr(s, '\n');

	return e ? e : s + strlen(s);
}

/* Line [s, e) without its indentation starts with key, any case. */
static int line_has_key(const char *s, const char *e, const char *key)
{
	size_t n = strlen(key);

	while (s < e && (*s == ' ' || *s == '\t' || *s == '*'))
		s++;
	return (size_t)(e - s) >= n && !strncasecmp(s, key, n);
}

static int line_blank(const char *s, const char *e)
{
	for (; s < e; s++)
		if (!isspace((unsigned char)*s))
			return 0;
	return 1;
}

/* "-----Original Message-----", any case and number of dashes. */
static int original_marker(const char *s, const char *e)
{
	static const char word[] = "original message";

	while (s < e && (*s == ' ' || *s == '-'))
		s++;
	while (e > s && (isspace((unsigned char)e[-1]) || e[-1] == '-'))
		e--;
	return (size_t)(e - s) == sizeof(word) - 1 &&
	       !strncasecmp(s, word, sizeof(word) - 1);
}

/* A pasted header block at s: From:, then Sent: or Date:, and Subject:. */
static int pasted_headers(const char *s)
{
	const char *e = line_end(s);
	int when = 0, subject = 0, i;

	if (!line_has_key(s, e, "From:"))
		return 0;
	for (i = 0; i < 5 && *e; i++) {
		s = e + 1;
		e = line_end(s);
		when |= line_has_key(s, e, "Sent:") ||
			line_has_key(s, e, "Date:");
		subject |= line_has_key(s, e, "Subject:");
	}
	return when && subject;
}

/*
 * Where the replier's own words end: at an original message pasted
 * without quote markers, as Outlook does ("-----Original Message-----",
 * or a From:/Sent:/Subject: block).  What follows is someone else's.
 */
size_t thread_reply_own_len(const char *text)
{
	const char *s, *e;

	for (s = text; *s; s = *e ? e + 1 : e) {
		e = line_end(s);
		if (original_marker(s, e) || pasted_headers(s))
			return (size_t)(s - text);
	}
	return strlen(text);
}

/*
 * The paragraph at s holds a Signed-off-by: it is a patch's own trailer
 * block (pasted, or a fix proposed in the reply), not review acts of
 * the replier.
 */
static int signed_off_paragraph(const char *s)
{
	const char *e;

	for (; *s; s = *e ? e + 1 : e) {
		e = line_end(s);
		if (line_blank(s, e))
			return 0;
		if (line_has_key(s, e, "Signed-off-by:"))
			return 1;
	}
	return 0;
}

/* Line [s, e) as a review act ("Reviewed-by: ..."), stored when one. */
static int review_line(struct thread *t, const struct patch *p,
		       const struct target *tg, const char *s, const char *e)
{
	const char *act, *key;
	size_t i, k, n;

	for (i = 0; s + i < e && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	for (k = 0; (act = trailer_reply_act(k, &key)); k++) {
		n = strlen(key);
		if ((size_t)(e - s) - i <= n + 1 ||
		    strncasecmp(s + i, key, n) || s[i + n] != ':')
			continue;
		i += n + 1;
		while (s + i < e && s[i] == ' ')
			i++;
		return store_review(t, p, tg, act, s + i, (size_t)(e - s) - i);
	}
	return 0;
}

/*
 * Trailers given on the list: "Reviewed-by: ..." lines not quoted, but
 * for a paragraph that is a patch's own trailer block.
 */
static int store_reviews(struct thread *t, const struct patch *p,
			 const char *text, const struct target *tg)
{
	const char *s = text, *e;
	int rc = 0, skip = 0, start = 1;

	for (; !rc && s && *s; s = *e ? e + 1 : e) {
		e = line_end(s);
		if (line_blank(s, e)) {
			start = 1;
			continue;
		}
		if (start)
			skip = signed_off_paragraph(s);
		start = 0;
		if (!skip)
			rc = review_line(t, p, tg, s, e);
	}
	return rc;
}

int thread_reply_body(struct buf *out, const struct patch *p)
{
	int rc = 0;

	if (p->message)
		rc = buf_addstr(out, p->message);
	if (!rc && p->notes)
		rc = buf_addf(out, "\n---\n%s", p->notes);
	return rc;
}

static int insert_reply(struct thread *t, const struct patch *p,
			const char *text, const struct target *tg)
{
	struct thread_text tx;
	struct thread_bot bot;
	sqlite3_stmt *st;
	int rc;

	thread_analyse_text(t, text, strlen(text), &tx);
	thread_detect_bot(p, text, &bot);
	rc = thread_stmt_start(&st, t, SQL_INSERT_REPLY, "sn", p->message_id,
			       tg->series);
	if (rc)
		return rc;
	/* an orphan has no patch either; 0 is the cover of a series */
	if (tg->series)
		sqlite3_bind_int64(st, 3, tg->patch);
	thread_stmt_bind(st, 4, "ssiiiidsss", p->author.name, p->author.email,
			 (int64_t)p->author_date, (int64_t)tx.new_lines,
			 (int64_t)tx.inline_comments, (int64_t)tx.tested_claims,
			 tx.sentiment_words
				 ? tx.sentiment_sum / tx.sentiment_words
				 : 0.0,
			 bot.name, bot.verdict, bot.arch[0] ? bot.arch : NULL);
	thread_stmt_bind(st, 14, "ii", (int64_t)tx.quoted_lines,
			 (int64_t)tx.tested_scale);
	return thread_stmt_run(t, st, "storing reply");
}

int thread_add_reply(struct thread *t, const struct patch *p,
		     struct thread_result *res)
{
	struct buf text = BUF_INIT;
	struct target tg;
	int rc;

	rc = resolve_refs(t, p->references, p->nreferences, p->in_reply_to,
			  &tg);
	if (!rc)
		rc = thread_reply_body(&text, p);
	if (!rc && text.ptr) /* a pasted original is not the reply's */
		buf_truncate(&text, thread_reply_own_len(text.ptr));
	if (!rc)
		rc = insert_reply(t, p, text.ptr, &tg);
	if (!rc)
		rc = store_reviews(t, p, text.ptr, &tg);
	if (!rc && tg.series)
		rc = thread_set_message_link(t, p->message_id, tg.series,
					     tg.patch);
	res->series_id = tg.series;
	res->patch_id = tg.patch;
	buf_free(&text);
	return rc;
}

/* ---- adopting replies that came first ------------------------------ */

static int relink_reply(struct thread *t, const char *msgid,
			const struct target *tg)
{
	int i, rc = 0;

	for (i = SQL_RELINK_REPLY; !rc && i <= SQL_RELINK_MESSAGE; i++)
		rc = thread_stmt_exec(t, (enum thread_sql)i, "adopting a reply",
				      "iis", tg->series, tg->patch, msgid);
	return rc;
}

static int adopt_one(struct thread *t, const char *msgid, size_t *done)
{
	struct target tg;
	sqlite3_stmt *st;
	char **refs = NULL;
	size_t n = 0;
	int rc;

	rc = thread_stmt_start(&st, t, SQL_LOAD_REFS, "s", msgid);
	if (!rc)
		rc = thread_stmt_strings(t, st, &refs, &n, "refs");
	/* message_refs holds In-Reply-To last; resolve newest first */
	if (!rc)
		rc = resolve_refs(t, refs, n, NULL, &tg);
	if (!rc && tg.series) {
		rc = relink_reply(t, msgid, &tg);
		(*done)++;
	}
	thread_strings_free(refs, n);
	return rc;
}

/*
 * Replies stored before msgid (a patch or cover) arrived: orphans, and
 * replies held by the cover letter until the patch they answer came.
 */
int thread_adopt_orphans(struct thread *t, const char *msgid, size_t *done)
{
	sqlite3_stmt *st;
	char **ids = NULL;
	size_t n = 0, i;
	int rc;

	rc = thread_stmt_start(&st, t, SQL_ORPHANS, "s", msgid);
	if (!rc)
		rc = thread_stmt_strings(t, st, &ids, &n, "orphans");
	for (i = 0; !rc && i < n; i++)
		rc = adopt_one(t, ids[i], done);
	thread_strings_free(ids, n);
	return rc;
}
