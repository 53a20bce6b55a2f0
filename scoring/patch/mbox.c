/*
 * mbox.c - an mbox split into messages: lore/public-inbox mboxrd ("From
 * mboxrd@z ..." first line; every ">*From " body line loses one '>'),
 * classic mboxo (only ">From " becomes "From ") and git format-patch
 * output ("From <sha> Mon Sep 17 00:00:00 2001").  A separator is a
 * "From " line at the start of the buffer or after a blank line that
 * looks like an envelope ("From ADDR ... hh:mm ..."), as git mailsplit
 * checks, so prose starting with "From " does not split a message.  The
 * blank line before a separator belongs to the mbox, not the message.  A
 * buffer that does not start with a separator is one message, passed as
 * is.  It owns no state; messages are handed out, not parsed.
 */
#include "scoring/patch/mbox.h"
#include "scoring/patch/patch.h"

#include <ctype.h>
#include <string.h>

struct mline {
	const char *s;
	size_t len; /* with its LF, if any */
};

static int next_line(const char *buf, size_t len, size_t *pos, struct mline *l)
{
	const char *nl;

	if (*pos >= len)
		return 0;
	l->s = buf + *pos;
	nl = memchr(l->s, '\n', len - *pos);
	l->len = nl ? (size_t)(nl - l->s) + 1 : len - *pos;
	*pos += l->len;
	return 1;
}

int mbox_is_blank(const char *s, size_t len)
{
	if (len && s[len - 1] == '\n')
		len--;
	if (len && s[len - 1] == '\r')
		len--;
	return len == 0;
}

int mbox_is_from_line(const char *s, size_t len)
{
	const char *e = s + len, *p;

	if (len < 8 || memcmp(s, "From ", 5))
		return 0;
	for (p = s + 5; p < e && *p != ' ' && *p != '\t' && *p != '\n'; p++)
		;
	if (p == s + 5 || p >= e || *p == '\n')
		return 0;
	for (; p + 5 <= e; p++)
		if (isdigit((unsigned char)p[0]) &&
		    isdigit((unsigned char)p[1]) && p[2] == ':' &&
		    isdigit((unsigned char)p[3]) &&
		    isdigit((unsigned char)p[4]))
			return 1;
	return 0;
}

/* Number of '>' to drop at the start of a body line (0 or 1). */
static size_t unescape_len(const struct mline *l, int rd)
{
	size_t i = 0;

	while (i < l->len && l->s[i] == '>')
		i++;
	if (i == 0 || l->len - i < 5 || memcmp(l->s + i, "From ", 5))
		return 0;
	return rd || i == 1 ? 1 : 0;
}

/* Drop the blank line that separates this message from the next. */
static void drop_separator_blank(struct buf *m)
{
	if (m->len >= 4 && !memcmp(m->ptr + m->len - 4, "\r\n\r\n", 4))
		buf_truncate(m, m->len - 2);
	else if (m->len >= 2 && !memcmp(m->ptr + m->len - 2, "\n\n", 2))
		buf_truncate(m, m->len - 1);
}

static int deliver(struct buf *m, size_t index, mbox_cb cb, void *ctx)
{
	int rc;

	drop_separator_blank(m);
	rc = cb(m->ptr, m->len, index, ctx);
	buf_reset(m);
	return rc;
}

static int only_blank(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!strchr(" \t\r\n", buf[i]))
			return 0;
	return 1;
}

int mbox_foreach(const char *buf, size_t len, mbox_cb cb, void *ctx)
{
	struct buf m;
	struct mline l;
	size_t pos = 0, index = 0, skip;
	int rd, prev_blank = 1, open = 0, rc = 0;

	if (only_blank(buf, len))
		return 0;
	if (!next_line(buf, len, &pos, &l) || !mbox_is_from_line(l.s, l.len)) {
		rc = cb(buf, len, 0, ctx);
		return rc < 0 ? rc : 0;
	}
	rd = l.len >= 13 && !memcmp(l.s, "From mboxrd@z", 13);
	buf_init(&m, PT_MAX_MAIL_SIZE);
	pos = 0;
	while (next_line(buf, len, &pos, &l)) {
		if (prev_blank && mbox_is_from_line(l.s, l.len)) {
			if (open && (rc = deliver(&m, index++, cb, ctx)))
				goto out;
			open = 1;
			prev_blank = 0;
			continue;
		}
		prev_blank = mbox_is_blank(l.s, l.len);
		skip = unescape_len(&l, rd);
		rc = buf_add(&m, l.s + skip, l.len - skip);
		if (rc) {
			if (rc == PT_ETOOBIG)
				pt_error_set(rc,
					     "message %zu of the mbox is "
					     "larger than %u bytes",
					     index, PT_MAX_MAIL_SIZE);
			goto out;
		}
	}
	if (open)
		rc = deliver(&m, index, cb, ctx);
out:
	buf_free(&m);
	return rc < 0 ? rc : 0;
}
