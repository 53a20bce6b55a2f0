/*
 * mail_text.c - the text rules of the mail parser: UTF-8 validation with
 * U+FFFD for every bad byte, charset conversion to UTF-8 (iconv), RFC 2047
 * encoded words in header values, and CRLF to LF with the line-length
 * limit.  mail_to_utf8() and mail_add_subject() are also used by the git
 * source of struct patch (mail.h).
 */
#include "scoring/patch/mail.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <string.h>
#include <strings.h>

#include "scoring/patch/mail_int.h"

static const char utf8_repl[] = "\xef\xbf\xbd";

/* ---- UTF-8 ---------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, or 0 (RFC 3629 table). */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	size_t n, i;

	if (c >= 0x01 && c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (len < n)
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

int mail_add_utf8(struct buf *out, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, start = 0, n;
	int rc = 0;

	while (i < len && !rc) {
		n = utf8_seq(u + i, len - i);
		if (n) {
			i += n;
			continue;
		}
		rc = buf_add(out, s + start, i - start);
		if (!rc)
			rc = buf_add(out, utf8_repl, 3);
		start = ++i;
	}
	if (!rc)
		rc = buf_add(out, s + start, len - start);
	return rc;
}

static int cs_is_utf8(const char *cs)
{
	static const char *const same[] = {
		"utf-8",   "utf8",	     "us-ascii",
		"ascii",   "unknown-8bit",   "x-unknown",
		"default", "ansi_x3.4-1968", NULL,
	};
	size_t i;

	if (!cs || !*cs)
		return 1;
	for (i = 0; same[i]; i++)
		if (!strcasecmp(cs, same[i]))
			return 1;
	return 0;
}

static int iconv_add(struct buf *out, iconv_t cd, const char *s, size_t len)
{
	char tmp[4096], *in = (char *)s, *o;
	size_t inleft = len, oleft, r;
	int rc = 0;

	while (inleft && !rc) {
		o = tmp;
		oleft = sizeof(tmp);
		r = iconv(cd, &in, &inleft, &o, &oleft);
		rc = mail_add_utf8(out, tmp, (size_t)(o - tmp));
		if (r != (size_t)-1 || rc || errno == E2BIG)
			continue;
		/* EILSEQ or EINVAL (cut short): one U+FFFD per bad byte */
		rc = buf_add(out, utf8_repl, 3);
		in++;
		inleft--;
		iconv(cd, NULL, NULL, NULL, NULL);
	}
	return rc;
}

int mail_to_utf8(struct buf *out, const char *cs, const char *s, size_t len)
{
	iconv_t cd;
	int rc;

	if (cs_is_utf8(cs))
		return mail_add_utf8(out, s, len);
	cd = iconv_open("UTF-8", cs);
	if (cd == (iconv_t)-1)
		return mail_add_utf8(out, s, len);
	rc = iconv_add(out, cd, s, len);
	iconv_close(cd);
	return rc;
}

int mail_add_subject(struct buf *out, const char *s, size_t len)
{
	size_t i;
	int space = 0, rc = 0;

	for (i = 0; i < len && !rc; i++) {
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' ||
		    s[i] == '\n') {
			space = 1;
			continue;
		}
		if (space && out->len)
			rc = buf_addch(out, ' ');
		space = 0;
		if (!rc)
			rc = buf_addch(out, s[i]);
	}
	return rc;
}

/* ---- RFC 2047 encoded words ----------------------------------------- */

struct eword {
	char charset[64];
	char enc; /* 'B' or 'Q' */
	const char *text;
	size_t text_len;
	size_t total; /* bytes from "=?" through "?=" */
};

static int eword_parse(struct eword *w, const char *s, size_t len)
{
	size_t i = 2, cs;

	if (len < 8 || s[0] != '=' || s[1] != '?')
		return 0;
	while (i < len && s[i] != '?' && !is_wsp(s[i]) && i - 2 < 63)
		i++;
	if (i + 3 >= len || s[i] != '?' || i == 2 || s[i + 2] != '?')
		return 0;
	cs = i - 2;
	memcpy(w->charset, s + 2, cs);
	w->charset[cs] = '\0';
	/* RFC 2231 language suffix: =?utf-8*en?Q?...?= */
	if (strchr(w->charset, '*'))
		*strchr(w->charset, '*') = '\0';
	w->enc = (char)toupper((unsigned char)s[i + 1]);
	if (w->enc != 'B' && w->enc != 'Q')
		return 0;
	w->text = s + i + 3;
	for (i += 3; i + 1 < len; i++) {
		if (is_wsp(s[i]))
			return 0;
		if (s[i] == '?' && s[i + 1] == '=')
			break;
	}
	if (i + 1 >= len)
		return 0;
	w->text_len = (size_t)(s + i - w->text);
	w->total = i + 2;
	return 1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Decode the text of an encoded word into raw bytes of its charset. */
static int eword_decode(struct buf *raw, const struct eword *w)
{
	const char *t = w->text;
	unsigned acc = 0;
	size_t i;
	int bits = 0, v, rc = 0;

	for (i = 0; i < w->text_len && !rc; i++) {
		if (w->enc == 'Q') {
			if (t[i] == '_') {
				rc = buf_addch(raw, ' ');
			} else if (t[i] == '=' && i + 2 < w->text_len &&
				   hexval((unsigned char)t[i + 1]) >= 0 &&
				   hexval((unsigned char)t[i + 2]) >= 0) {
				rc = buf_addch(
					raw,
					hexval((unsigned char)t[i + 1]) * 16 +
						hexval((unsigned char)t[i + 2]));
				i += 2;
			} else {
				rc = buf_addch(raw, t[i]);
			}
			continue;
		}
		v = b64val((unsigned char)t[i]);
		if (v < 0)
			continue; /* '=' padding and stray bytes */
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			rc = buf_addch(raw, (int)((acc >> bits) & 0xff));
		}
	}
	return rc;
}

/*
 * Decode a header value: encoded words to UTF-8, whitespace between two
 * adjacent encoded words dropped (RFC 2047 6.2), other text read in
 * charset cs (raw 8-bit headers, RFC 6532 or mislabelled).
 */
int mail_decode_2047(struct buf *out, const char *s, size_t len, const char *cs)
{
	struct buf raw = BUF_INIT;
	struct eword w;
	size_t i = 0, j;
	int prev_ew = 0, rc = 0;

	while (i < len && !rc) {
		if (is_wsp(s[i])) {
			for (j = i; j < len && is_wsp(s[j]); j++)
				;
			if (!(prev_ew && eword_parse(&w, s + j, len - j)))
				rc = mail_to_utf8(out, cs, s + i, j - i);
			i = j;
			continue;
		}
		if (eword_parse(&w, s + i, len - i)) {
			buf_reset(&raw);
			rc = eword_decode(&raw, &w);
			if (!rc)
				rc = mail_to_utf8(out, w.charset, raw.ptr,
						  raw.len);
			i += w.total;
			prev_ew = 1;
			continue;
		}
		for (j = i + 1;
		     j < len && !is_wsp(s[j]) &&
		     !(s[j] == '=' && j + 1 < len && s[j + 1] == '?');
		     j++)
			;
		rc = mail_to_utf8(out, cs, s + i, j - i);
		prev_ew = 0;
		i = j;
	}
	buf_free(&raw);
	return rc;
}

/* ---- line endings -------------------------------------------------- */

/* CRLF to LF (a lone CR is kept); no line may pass PT_MAX_LINE_LEN. */
int mail_add_lf(struct buf *out, const char *s, size_t len)
{
	size_t i, start = 0, line = 0;
	int rc;

	rc = buf_grow(out, len);
	for (i = 0; i < len && !rc; i++) {
		if (s[i] == '\n') {
			if (i - line > PT_MAX_LINE_LEN)
				break;
			line = i + 1;
		} else if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n') {
			rc = buf_add(out, s + start, i - start);
			start = i + 1;
		}
	}
	if (!rc && (i < len || len - line > PT_MAX_LINE_LEN))
		return pt_error_set(PT_ETOOBIG, "line longer than %u bytes",
				    PT_MAX_LINE_LEN);
	if (!rc)
		rc = buf_add(out, s + start, len - start);
	return rc;
}
