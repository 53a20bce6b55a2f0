/*
 * reply_body.c - the body of a reply: the template
 * (templates/<kind>-reply.txt) filled with the patch's and the score's
 * variables, each kept on its line, wrapped to 72 columns, and written
 * out with CRLF line ends, UTF-8 8bit or quoted-printable when a line
 * would pass SMTP's 998-byte limit.
 */
#include "bot/mail/reply.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/util/template.h"
#include "bot/mail/reply_int.h"

#define REPLY_WIDTH 72
#define REPLY_MAX_LINE 998

/* ---- body ---------------------------------------------------------- */

static char *first_name(const struct person *a)
{
	const char *n = a->name && *a->name ? a->name : NULL;
	size_t len;

	if (!n)
		return pt_strdup("there");
	len = strcspn(n, " \t\r\n");
	return pt_strndup(n, len);
}

/*
 * A variable that must stay on its line: a CR or LF in a name or subject
 * taken from the patch would otherwise reach the body bare (SMTP forbids
 * a lone CR) or break the layout; each becomes a space.
 */
static int set_line(struct tpl_vars *v, const char *name, const char *value)
{
	char *c = pt_strdup(value), *q;
	int rc;

	if (!c)
		return PT_ENOMEM;
	for (q = c; (q = strpbrk(q, "\r\n"));)
		*q = ' ';
	rc = tpl_set(v, name, c);
	free(c);
	return rc;
}

/*
 * Whether a and b read the same in the body: equal but for case and the
 * runs of spaces, CRs and LFs that set_line() and the wrapper turn into
 * one space.
 */
static int same_line(const char *a, const char *b)
{
	for (;;) {
		int sa = 0, sb = 0;

		while (*a && strchr(" \t\r\n", *a))
			a++, sa = 1;
		while (*b && strchr(" \t\r\n", *b))
			b++, sb = 1;
		if (!*a || !*b)
			return !*a && !*b;
		if (sa != sb ||
		    tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
		a++, b++;
	}
}

/* Index of the first reason before i that reads as reason i, or i. */
static size_t first_same(const struct reply_in *in, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (in->reasons[j].text && in->reasons[i].text &&
		    same_line(in->reasons[j].text, in->reasons[i].text))
			return j;
	return i;
}

/*
 * The reasons as the template lists them, each once: a reason that
 * reads as an earlier one (the same sentence from two sources, or
 * differing only in case or line breaks) is left out, the earlier,
 * stronger one kept.
 */
static int reasons_vars(struct tpl_vars *v, const struct reply_in *in)
{
	struct tpl_vars *it;
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < in->nreasons; i++) {
		if (first_same(in, i) != i)
			continue;
		rc = tpl_list_add(v, "reasons", &it);
		if (!rc)
			rc = set_line(it, "text", in->reasons[i].text);
		if (!rc)
			rc = tpl_set(it, "direction",
				     in->reasons[i].direction
					     ? in->reasons[i].direction
					     : "");
	}
	return rc;
}

static int body_vars(struct tpl_vars *v, const struct policy *pol,
		     const struct policy_subsys *s, const struct patch *p,
		     const struct reply_in *in)
{
	double th = strcmp(in->kind, "stable") ? s->risk_threshold
					       : s->stable_threshold;
	char *first = first_name(&p->author);
	int rc = first ? 0 : PT_ENOMEM;

	if (!rc)
		rc = set_line(v, "author_first", first);
	if (!rc)
		rc = tpl_set(v, "subsystem", s->name);
	if (!rc)
		rc = set_line(v, "subject",
			      p->subject.clean ? p->subject.clean : "");
	if (!rc)
		rc = tpl_setf(v, "risk_percent", "%.0f", in->probability * 100);
	if (!rc)
		rc = tpl_setf(v, "stable_percent", "%.0f",
			      in->probability * 100);
	if (!rc)
		rc = tpl_setf(v, "threshold_percent", "%.0f", th * 100);
	if (!rc)
		rc = tpl_set(v, "model_version", in->model_version);
	if (!rc)
		rc = tpl_set(v, "tool_version", PT_VERSION);
	if (!rc)
		rc = tpl_set(v, "review", in->review ? in->review : "");
	if (!rc)
		rc = tpl_set(v, "contact", pol->contact ? pol->contact : "");
	if (!rc)
		rc = tpl_set(v, "has_fixes",
			     patch_count_trailers(p, TRAILER_FIXES) ? "1" : "");
	if (!rc)
		rc = tpl_set(v, "suggested_fixes",
			     in->suggested_fixes ? in->suggested_fixes : "");
	if (!rc) /* approve mode: it is sent only once a person approved */
		rc = tpl_set(v, "approval",
			     s->reply_mode == POLICY_APPROVE ? "1" : "");
	if (!rc)
		rc = reasons_vars(v, in);
	free(first);
	return rc;
}

int reply_render_body(struct buf *out, const struct policy *pol,
		      const struct policy_subsys *s, const struct patch *p,
		      const struct reply_in *in)
{
	struct buf path = BUF_INIT, tpl = BUF_INIT, raw = BUF_INIT;
	struct tpl_vars *v = NULL;
	int rc;

	rc = buf_addf(&path, "%s/%s-reply.txt", pol->templates, in->kind);
	if (!rc)
		rc = pt_read_file(&tpl, path.ptr, 1u << 20);
	if (rc)
		rc = pt_error_wrap(rc, "reply template '%s'", path.ptr);
	if (!rc)
		rc = tpl_vars_new(&v);
	if (!rc)
		rc = body_vars(v, pol, s, p, in);
	if (!rc)
		rc = tpl_render(&raw, tpl.ptr, tpl.len, v, path.ptr);
	if (!rc)
		rc = tpl_wrap(out, raw.ptr, raw.len, REPLY_WIDTH);
	tpl_vars_free(v);
	buf_free(&path);
	buf_free(&tpl);
	buf_free(&raw);
	return rc;
}

int reply_long_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++) {
		n = *s == '\n' ? 0 : n + 1;
		if (n > REPLY_MAX_LINE)
			return 1;
	}
	return 0;
}

int reply_add_qp(struct buf *b, const char *s)
{
	size_t col = 0;
	int rc = 0;

	for (; !rc && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n') {
			rc = buf_addstr(b, "\r\n");
			col = 0;
			continue;
		}
		if (col >= 72) {
			rc = buf_addstr(b, "=\r\n");
			col = 0;
		}
		if (!rc && (c == '=' || c >= 0x7f || (c < 32 && c != '\t') ||
			    ((c == ' ' || c == '\t') && s[1] == '\n'))) {
			rc = buf_addf(b, "=%02X", c);
			col += 3;
		} else if (!rc) {
			rc = buf_addch(b, (char)c);
			col++;
		}
	}
	return rc;
}

/* LF to CRLF; a CR (a template saved with CRLF ends) is dropped. */
int reply_add_crlf(struct buf *b, const char *s)
{
	int rc = 0;

	for (; !rc && *s; s++)
		if (*s != '\r')
			rc = *s == '\n' ? buf_addstr(b, "\r\n")
					: buf_addch(b, *s);
	return rc;
}
