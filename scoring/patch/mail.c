/*
 * mail.c - the mail source of struct patch: one RFC 5322 message (LF or
 * CRLF, plain or MIME) to a patch.  It owns header unfolding, RFC 2047
 * encoded words, charset conversion to UTF-8, transfer decodings and the
 * choice of MIME parts (through libetpan), and the split of a mail body
 * into message, notes (after "---") and diff, with the "-- " signature
 * removed.  Subject, trailers and diff are parsed by the shared parsers
 * (subject_parse, patch_set_message, patch_set_diff).  Every deviation
 * from the RFCs tolerated here is listed in docs/VIOLATIONS.md.
 *
 * This file splits the body and assembles the patch; mail_text.c owns
 * UTF-8, charsets, RFC 2047 and line endings, mail_hdr.c the header
 * fields, mail_mime.c the MIME parts (shared types in mail_int.h).
 */
#include "scoring/patch/mail.h"
#include "scoring/patch/patch.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/mail_int.h"

/* ---- the body: diff start, "---" separator, signature ---------------- */

static int line_is(const char *s, size_t n, const char *what)
{
	return n == strlen(what) && !memcmp(s, what, n);
}

static int starts(const char *s, size_t n, const char *what)
{
	size_t w = strlen(what);

	return n >= w && !memcmp(s, what, w);
}

/* git mailinfo's patch start: "diff -", "Index: " or "--- " + "+++ ". */
size_t mail_diff_start(const char *s, size_t len)
{
	size_t off, e, n;

	for (off = 0; off < len; off = next_line(s, len, off)) {
		e = line_end(s, len, off);
		if (starts(s + off, e - off, "diff --git ") ||
		    starts(s + off, e - off, "diff -") ||
		    starts(s + off, e - off, "Index: "))
			return off;
		if (starts(s + off, e - off, "--- ") && e < len) {
			n = line_end(s, len, e + 1);
			if (starts(s + e + 1, n - e - 1, "+++ "))
				return off;
		}
	}
	return len;
}

/* "---" with nothing but blanks after it (git's separator). */
static int is_separator(const char *s, size_t n)
{
	size_t i;

	if (n < 3 || memcmp(s, "---", 3))
		return 0;
	for (i = 3; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return 0;
	return 1;
}

static unsigned long hunk_count(const char **p, const char *end)
{
	unsigned long v = 1;

	while (*p < end && isdigit((unsigned char)**p))
		(*p)++;
	if (*p < end && **p == ',') {
		v = strtoul(++*p, NULL, 10);
		while (*p < end && isdigit((unsigned char)**p))
			(*p)++;
	}
	return v;
}

/*
 * Where the "-- " signature starts after a diff.  A "-- " line inside a
 * hunk is a removed "- " line, so hunk line counts are followed: only a
 * "-- " line outside every hunk is the signature.
 */
static size_t diff_sig(const char *s, size_t len)
{
	unsigned long old = 0, new = 0;
	const char *q, *end;
	size_t off, e;

	for (off = 0; off < len; off = next_line(s, len, off)) {
		e = line_end(s, len, off);
		if (old || new) {
			char c = e > off ? s[off] : ' ';

			if (c == ' ' || c == '-')
				old -= old > 0;
			if (c == ' ' || c == '+')
				new -= new > 0;
			if (c != ' ' && c != '-' && c != '+' && c != '\\')
				old = new = 0;
			else
				continue;
		}
		if (line_is(s + off, e - off, "-- "))
			return off;
		if (starts(s + off, e - off, "@@ -")) {
			q = s + off + 4;
			end = s + e;
			old = hunk_count(&q, end);
			while (q < end && *q != '+')
				q++;
			if (q < end)
				q++;
			new = hunk_count(&q, end);
		}
	}
	return len;
}

struct split {
	size_t msg_end;
	size_t notes_start, notes_end; /* notes_start == notes_end: none */
	size_t diff, diff_end;	       /* diff == diff_end: none */
};

static void body_split(struct split *sp, const char *s, size_t len)
{
	size_t off, e, stop;

	memset(sp, 0, sizeof(*sp));
	sp->diff = mail_diff_start(s, len);
	sp->diff_end = sp->diff + diff_sig(s + sp->diff, len - sp->diff);
	stop = sp->diff;
	sp->msg_end = stop;
	for (off = 0; off < stop; off = next_line(s, len, off)) {
		e = line_end(s, len, off);
		if (line_is(s + off, e - off, "-- ")) {
			stop = off;
			break;
		}
	}
	for (off = 0; off < stop; off = next_line(s, len, off)) {
		e = line_end(s, len, off);
		if (is_separator(s + off, e - off)) {
			sp->notes_start = next_line(s, len, off);
			sp->msg_end = off;
			break;
		}
	}
	if (sp->msg_end > stop)
		sp->msg_end = stop;
	if (sp->notes_start && sp->notes_start < stop)
		sp->notes_end = stop;
	else
		sp->notes_start = sp->notes_end = 0;
}

/* Blank lines at both ends go; the text is converted to UTF-8. */
static int text_block(struct buf *out, const char *s, size_t len,
		      const char *cs)
{
	size_t off = 0, e;

	while (off < len) {
		e = line_end(s, len, off);
		while (off < e && (s[off] == ' ' || s[off] == '\t'))
			off++;
		if (off != e)
			break;
		off = next_line(s, len, off);
	}
	/* keep the indentation of the first non-blank line */
	while (off > 0 && s[off - 1] != '\n')
		off--;
	buf_reset(out);
	if (off >= len)
		return 0;
	if (mail_to_utf8(out, cs, s + off, len - off))
		return PT_ENOMEM;
	buf_rtrim(out);
	return 0;
}

/* ---- the patch ------------------------------------------------------- */

static int set_text(char **dst, struct buf *b)
{
	free(*dst);
	*dst = NULL;
	if (!b->len)
		return 0;
	*dst = buf_detach(b, NULL);
	return *dst ? 0 : PT_ENOMEM;
}

static int body_fill(struct patch *p, struct parts *ps)
{
	struct buf t = BUF_INIT;
	struct split sp;
	const char *s = ps->body.ptr;
	int rc;

	body_split(&sp, s, ps->body.len);
	rc = text_block(&t, s, sp.msg_end, ps->body_cs);
	if (!rc)
		rc = patch_set_message(p, t.ptr, t.len);
	if (!rc)
		rc = text_block(&t, s + sp.notes_start,
				sp.notes_end - sp.notes_start, ps->body_cs);
	if (!rc)
		rc = set_text(&p->notes, &t);
	if (rc)
		goto out;
	if (sp.diff < sp.diff_end) {
		rc = patch_set_diff(p, s + sp.diff, sp.diff_end - sp.diff);
	} else if (ps->have_attach) {
		s = ps->attach.ptr;
		sp.diff = mail_diff_start(s, ps->attach.len);
		sp.diff_end = sp.diff +
			      diff_sig(s + sp.diff, ps->attach.len - sp.diff);
		rc = patch_set_diff(p, s + sp.diff, sp.diff_end - sp.diff);
	}
out:
	buf_free(&t);
	return rc;
}

int patch_from_mail(struct patch **out, const char *buf, size_t len)
{
	struct headers hs = { NULL, 0, 0 };
	struct parts ps;
	struct buf text = BUF_INIT;
	struct patch *p = NULL;
	char cs[64];
	size_t body = 0;
	int rc;

	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	buf_init(&ps.body, 0);
	buf_init(&ps.attach, 0);
	if (!buf && len)
		return pt_error_set(PT_EINVAL, "no mail given");
	if (len > PT_MAX_MAIL_SIZE)
		return pt_error_set(PT_ETOOBIG,
				    "mail of %zu bytes is over "
				    "the limit of %u",
				    len, PT_MAX_MAIL_SIZE);
	rc = mail_add_lf(&text, buf ? buf : "", len);
	if (!rc)
		rc = mail_headers_parse(&hs, &body, text.ptr, text.len);
	if (!rc)
		rc = patch_new(&p);
	if (rc)
		goto out;
	p->source = PATCH_FROM_MAIL;
	mail_header_charset(cs, sizeof(cs),
			    mail_header_get(&hs, "Content-Type"));
	rc = mail_headers_fill(p, &hs, cs);
	if (!rc)
		rc = mail_mime_parts(&ps, &hs, text.ptr + body,
				     text.len - body);
	if (!rc)
		rc = body_fill(p, &ps);
	if (rc && p->message_id)
		pt_error_wrap(rc, "message '%s'", p->message_id);
out:
	if (rc)
		patch_free(p);
	else
		*out = p;
	mail_headers_free(&hs);
	buf_free(&ps.body);
	buf_free(&ps.attach);
	free(ps.body_cs);
	buf_free(&text);
	return rc;
}
