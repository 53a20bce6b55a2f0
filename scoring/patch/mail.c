/*
 * mail.c - the mail source of struct patch: one RFC 5322 message (LF or
 * CRLF, plain or MIME) to a patch.  It owns header unfolding, RFC 2047
 * encoded words, charset conversion to UTF-8, transfer decodings and the
 * choice of MIME parts (through libetpan), and the split of a mail body
 * into message, notes (after "---") and diff, with the "-- " signature
 * removed.  Subject, trailers and diff are parsed by the shared parsers
 * (subject_parse, patch_set_message, patch_set_diff).  Every deviation
 * from the RFCs tolerated here is listed in docs/VIOLATIONS.md.
 */
#include "scoring/patch/mail.h"
#include "scoring/patch/patch.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libetpan/libetpan.h>

struct hdr {
	const char *name;
	size_t name_len;
	char *value; /* unfolded, NUL-terminated, raw bytes */
	size_t len;
};

struct headers {
	struct hdr *h;
	size_t n, cap;
};

/* The MIME parts that matter: the body text and a diff attachment. */
struct parts {
	struct buf body;      /* first text/plain part, decoded, LF */
	char *body_cs;
	int have_body;
	struct buf attach;    /* first other text part holding a diff */
	int have_attach;
	size_t nparts;
};

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

static int add_utf8(struct buf *out, const char *s, size_t len)
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
		"utf-8", "utf8", "us-ascii", "ascii", "unknown-8bit",
		"x-unknown", "default", "ansi_x3.4-1968", NULL,
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
		rc = add_utf8(out, tmp, (size_t)(o - tmp));
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
		return add_utf8(out, s, len);
	cd = iconv_open("UTF-8", cs);
	if (cd == (iconv_t)-1)
		return add_utf8(out, s, len);
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
	char enc;           /* 'B' or 'Q' */
	const char *text;
	size_t text_len;
	size_t total;       /* bytes from "=?" through "?=" */
};

static int is_wsp(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

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
				rc = buf_addch(raw,
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
static int decode_2047(struct buf *out, const char *s, size_t len,
		       const char *cs)
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
		for (j = i + 1; j < len && !is_wsp(s[j]) &&
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

/* ---- lines and headers ---------------------------------------------- */

/* CRLF to LF (a lone CR is kept); no line may pass PT_MAX_LINE_LEN. */
static int add_lf(struct buf *out, const char *s, size_t len)
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

static size_t line_end(const char *s, size_t len, size_t off)
{
	const char *nl = memchr(s + off, '\n', len - off);

	return nl ? (size_t)(nl - s) : len;
}

static size_t next_line(const char *s, size_t len, size_t off)
{
	size_t e = line_end(s, len, off);

	return e < len ? e + 1 : len;
}

static void headers_free(struct headers *hs)
{
	size_t i;

	for (i = 0; i < hs->n; i++)
		free(hs->h[i].value);
	free(hs->h);
}

static int valid_name(const char *s, size_t n)
{
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return 0;
	return 1;
}

static int header_add(struct headers *hs, const char *name, size_t nlen,
		      const char *v, size_t vlen)
{
	struct hdr *h;

	if (hs->n == hs->cap) {
		size_t cap = hs->cap ? hs->cap * 2 : 32;

		h = pt_reallocarray(hs->h, cap, sizeof(*h));
		if (!h)
			return PT_ENOMEM;
		hs->h = h;
		hs->cap = cap;
	}
	h = &hs->h[hs->n];
	h->name = name;
	h->name_len = nlen;
	h->value = pt_strndup(v, vlen);
	if (!h->value)
		return PT_ENOMEM;
	h->len = vlen;
	hs->n++;
	return 0;
}

static int header_continue(struct hdr *h, const char *v, size_t vlen)
{
	char *p;

	if (h->len + vlen > PT_MAX_HEADER_LEN)
		return pt_error_set(PT_ETOOBIG,
				    "header '%.*s' longer than %u bytes",
				    (int)h->name_len, h->name,
				    PT_MAX_HEADER_LEN);
	p = realloc(h->value, h->len + vlen + 1);
	if (!p)
		return pt_error_set(PT_ENOMEM, "out of memory");
	memcpy(p + h->len, v, vlen);
	h->len += vlen;
	p[h->len] = '\0';
	h->value = p;
	return 0;
}

/*
 * Split the header block into unfolded fields; *body gets the offset of
 * the body.  A line that is neither a field nor a continuation ends the
 * headers as a blank line would (docs/VIOLATIONS.md).
 */
static int headers_parse(struct headers *hs, size_t *body, const char *s,
			 size_t len)
{
	size_t i = 0, e, c, n;
	const char *colon;
	int rc = 0;

	if (len >= 5 && !memcmp(s, "From ", 5))
		i = next_line(s, len, 0);
	while (i < len && !rc) {
		e = line_end(s, len, i);
		if (e == i) {
			i = e + 1;
			break;
		}
		if (s[i] == ' ' || s[i] == '\t') {
			if (hs->n)
				rc = header_continue(&hs->h[hs->n - 1], s + i,
						     e - i);
			i = next_line(s, len, i);
			continue;
		}
		colon = memchr(s + i, ':', e - i);
		n = colon ? (size_t)(colon - (s + i)) : 0;
		while (n && (s[i + n - 1] == ' ' || s[i + n - 1] == '\t'))
			n--;
		if (!colon || !valid_name(s + i, n))
			break;
		for (c = (size_t)(colon - s) + 1; c < e && is_wsp(s[c]); c++)
			;
		if (e - c > PT_MAX_HEADER_LEN)
			return pt_error_set(PT_ETOOBIG,
					    "header '%.*s' longer than %u "
					    "bytes", (int)n, s + i,
					    PT_MAX_HEADER_LEN);
		rc = header_add(hs, s + i, n, s + c, e - c);
		i = next_line(s, len, i);
	}
	*body = i < len ? i : len;
	if (!rc && !hs->n)
		rc = pt_error_set(PT_EINVAL, "no header fields");
	return rc;
}

static const struct hdr *header_get(const struct headers *hs,
				    const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < hs->n; i++)
		if (hs->h[i].name_len == n &&
		    !strncasecmp(hs->h[i].name, name, n))
			return &hs->h[i];
	return NULL;
}

static void trim(const char **s, size_t *len)
{
	while (*len && is_wsp(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_wsp((*s)[*len - 1]))
		(*len)--;
}

/* A copy of s as valid UTF-8 (NULL with no error when s is empty). */
static int dup_utf8(char **out, const char *s, size_t len)
{
	struct buf b = BUF_INIT;
	int rc;

	*out = NULL;
	trim(&s, &len);
	if (!len)
		return 0;
	rc = add_utf8(&b, s, len);
	if (!rc)
		*out = buf_detach(&b, NULL);
	buf_free(&b);
	return rc;
}

/* ---- ids, people, dates ---------------------------------------------- */

/* The next "<id>" of v at or after *pos, or the next bare token. */
static int next_id(char **out, const char *v, size_t len, size_t *pos,
		   int bracketed)
{
	size_t i = *pos, j;

	*out = NULL;
	if (bracketed) {
		while (i < len && v[i] != '<')
			i++;
		if (i == len) {
			*pos = len;
			return 0;
		}
		for (j = ++i; j < len && v[j] != '>'; j++)
			;
	} else {
		while (i < len && is_wsp(v[i]))
			i++;
		for (j = i; j < len && !is_wsp(v[j]); j++)
			;
	}
	*pos = j < len ? j + 1 : len;
	return dup_utf8(out, v + i, j - i);
}

static int has_bracket_id(const struct hdr *h)
{
	const char *lt = memchr(h->value, '<', h->len);

	return lt && memchr(lt, '>', h->len - (size_t)(lt - h->value));
}

static int first_id(char **out, const struct hdr *h)
{
	size_t pos = 0;

	*out = NULL;
	if (!h)
		return 0;
	return next_id(out, h->value, h->len, &pos, has_bracket_id(h));
}

static int references_parse(struct patch *p, const struct hdr *h)
{
	size_t pos = 0;
	char *id, **v;
	int rc = 0, br;

	if (!h)
		return 0;
	br = has_bracket_id(h);
	while (pos < h->len && !rc) {
		rc = next_id(&id, h->value, h->len, &pos, br);
		if (rc || !id)
			continue;
		v = pt_reallocarray(p->references, p->nreferences + 1,
				    sizeof(*v));
		if (!v) {
			free(id);
			return PT_ENOMEM;
		}
		p->references = v;
		v[p->nreferences++] = id;
	}
	return rc;
}

/* Decode a display name: outer quotes dropped, encoded words decoded. */
static int name_decode(char **out, const char *s, size_t len, const char *cs)
{
	struct buf d = BUF_INIT, b = BUF_INIT;
	int rc;

	*out = NULL;
	trim(&s, &len);
	if (len >= 2 && s[0] == '"' && s[len - 1] == '"') {
		s++;
		len -= 2;
	}
	rc = decode_2047(&d, s, len, cs);
	if (!rc)
		rc = mail_add_subject(&b, d.ptr, d.len);
	if (!rc && b.len)
		*out = buf_detach(&b, NULL);
	buf_free(&d);
	buf_free(&b);
	return rc;
}

static int email_set(struct person *pr, const char *s, size_t len)
{
	size_t i;
	int rc;

	rc = dup_utf8(&pr->email, s, len);
	for (i = 0; !rc && pr->email && pr->email[i]; i++)
		pr->email[i] = (char)tolower((unsigned char)pr->email[i]);
	return rc;
}

/* "Name <addr>", "addr (Name)" or "addr" without libetpan's grammar. */
static int person_loose(struct person *pr, const char *v, size_t len,
			const char *cs)
{
	const char *lt = NULL, *gt, *lp, *rp;
	size_t i;
	int rc;

	for (i = len; i > 0; i--)
		if (v[i - 1] == '<') {
			lt = v + i - 1;
			break;
		}
	if (lt) {
		gt = memchr(lt, '>', len - (size_t)(lt - v));
		rc = email_set(pr, lt + 1,
			       (size_t)((gt ? gt : v + len) - lt - 1));
		if (!rc)
			rc = name_decode(&pr->name, v, (size_t)(lt - v), cs);
		return rc;
	}
	lp = memchr(v, '(', len);
	if (!lp)
		return email_set(pr, v, len);
	rp = memchr(lp, ')', len - (size_t)(lp - v));
	rc = email_set(pr, v, (size_t)(lp - v));
	if (!rc)
		rc = name_decode(&pr->name, lp + 1,
				 (size_t)((rp ? rp : v + len) - lp - 1), cs);
	return rc;
}

static int person_parse(struct person *pr, const struct hdr *h,
			const char *cs)
{
	struct mailimf_mailbox *mb = NULL;
	size_t idx = 0;
	int rc;

	if (!h)
		return 0;
	if (mailimf_mailbox_parse(h->value, h->len, &idx, &mb) !=
		    MAILIMF_NO_ERROR ||
	    strpbrk(mb->mb_addr_spec, "<> \t") ||
	    (!mb->mb_display_name && idx < h->len)) {
		if (mb)
			mailimf_mailbox_free(mb);
		return person_loose(pr, h->value, h->len, cs);
	}
	rc = email_set(pr, mb->mb_addr_spec, strlen(mb->mb_addr_spec));
	if (!rc && mb->mb_display_name)
		rc = name_decode(&pr->name, mb->mb_display_name,
				 strlen(mb->mb_display_name), cs);
	mailimf_mailbox_free(mb);
	return rc;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* Date: to UTC seconds and minutes east; an unreadable date stays 0. */
static void date_parse(struct patch *p, const struct hdr *h)
{
	struct mailimf_date_time *dt = NULL;
	size_t idx = 0;
	int y, z, tz;

	if (!h || mailimf_date_time_parse(h->value, h->len, &idx, &dt) !=
			  MAILIMF_NO_ERROR)
		return;
	y = dt->dt_year;
	if (y < 50)
		y += 2000; /* RFC 5322 4.3 obsolete two-digit years */
	else if (y < 1000)
		y += 1900;
	z = dt->dt_zone < 0 ? -dt->dt_zone : dt->dt_zone;
	if (dt->dt_month >= 1 && dt->dt_month <= 12 && dt->dt_day >= 1 &&
	    dt->dt_day <= 31 && dt->dt_hour >= 0 && dt->dt_hour <= 23 &&
	    dt->dt_min >= 0 && dt->dt_min <= 59 && dt->dt_sec >= 0 &&
	    dt->dt_sec <= 60 && z <= 9959 && z % 100 < 60 && y <= 9999) {
		tz = (z / 100 * 60 + z % 100) * (dt->dt_zone < 0 ? -1 : 1);
		p->author_date = days_from_civil(y, (unsigned)dt->dt_month,
						 (unsigned)dt->dt_day) * 86400 +
				 dt->dt_hour * 3600 + dt->dt_min * 60 +
				 dt->dt_sec - (int64_t)tz * 60;
		p->author_tz = tz;
	}
	mailimf_date_time_free(dt);
}

/* The charset= parameter of a Content-Type value, for raw 8-bit text. */
static void header_charset(char *out, size_t size, const struct hdr *h)
{
	const char *v, *end;
	size_t n;

	out[0] = '\0';
	if (!h || !(v = strcasestr(h->value, "charset=")))
		return;
	v += 8;
	if (*v == '"')
		v++;
	for (end = v; *end && *end != '"' && *end != ';' && !is_wsp(*end);
	     end++)
		;
	n = (size_t)(end - v) < size - 1 ? (size_t)(end - v) : size - 1;
	memcpy(out, v, n);
	out[n] = '\0';
}

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
static size_t diff_start(const char *s, size_t len)
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
	size_t diff, diff_end;         /* diff == diff_end: none */
};

static void body_split(struct split *sp, const char *s, size_t len)
{
	size_t off, e, stop;

	memset(sp, 0, sizeof(*sp));
	sp->diff = diff_start(s, len);
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

/* ---- MIME ------------------------------------------------------------ */

static int is_text(const struct mailmime_content *ct, const char **sub)
{
	*sub = "plain";
	if (!ct)
		return 1;
	if (!ct->ct_type ||
	    ct->ct_type->tp_type != MAILMIME_TYPE_DISCRETE_TYPE ||
	    !ct->ct_type->tp_data.tp_discrete_type ||
	    ct->ct_type->tp_data.tp_discrete_type->dt_type !=
		    MAILMIME_DISCRETE_TYPE_TEXT)
		return 0;
	*sub = ct->ct_subtype ? ct->ct_subtype : "plain";
	return 1;
}

static int is_attachment(const struct mailmime *m)
{
	clistiter *it;

	if (!m->mm_mime_fields)
		return 0;
	for (it = clist_begin(m->mm_mime_fields->fld_list); it;
	     it = clist_next(it)) {
		struct mailmime_field *f = clist_content(it);

		if (f->fld_type == MAILMIME_FIELD_DISPOSITION &&
		    f->fld_data.fld_disposition &&
		    f->fld_data.fld_disposition->dsp_type &&
		    f->fld_data.fld_disposition->dsp_type->dsp_type ==
			    MAILMIME_DISPOSITION_TYPE_ATTACHMENT)
			return 1;
	}
	return 0;
}

/* Transfer-decode a leaf into out, LF line endings. */
static int part_decode(struct buf *out, const struct mailmime *m)
{
	const struct mailmime_data *d = m->mm_data.mm_single;
	char *res = NULL;
	size_t idx = 0, rlen = 0;
	int rc;

	buf_reset(out);
	if (!d || d->dt_type != MAILMIME_DATA_TEXT)
		return 0;
	if (!d->dt_encoded)
		return add_lf(out, d->dt_data.dt_text.dt_data,
			      d->dt_data.dt_text.dt_length);
	if (mailmime_part_parse(d->dt_data.dt_text.dt_data,
				d->dt_data.dt_text.dt_length, &idx,
				d->dt_encoding, &res, &rlen) !=
	    MAILIMF_NO_ERROR)
		return pt_error_set(PT_ENOMEM, "out of memory");
	rc = add_lf(out, res, rlen);
	mmap_string_unref(res);
	return rc;
}

static int leaf(struct parts *ps, const struct mailmime *m, int in_multi)
{
	struct buf tmp = BUF_INIT;
	const char *sub, *cs;
	int plain, rc;

	if (!is_text(m->mm_content_type, &sub))
		return 0;
	plain = !strcasecmp(sub, "plain");
	if (!plain && strcasecmp(sub, "x-patch") && strcasecmp(sub, "x-diff"))
		return 0;
	if (plain && !ps->have_body && !(in_multi && is_attachment(m))) {
		ps->have_body = 1;
		cs = m->mm_content_type ?
			     mailmime_content_param_get(m->mm_content_type,
							"charset") : NULL;
		if (cs) {
			ps->body_cs = pt_strdup(cs);
			if (!ps->body_cs)
				return PT_ENOMEM;
		}
		return part_decode(&ps->body, m);
	}
	if (ps->have_attach)
		return 0;
	rc = part_decode(&tmp, m);
	if (!rc && diff_start(tmp.ptr, tmp.len) < tmp.len) {
		buf_free(&ps->attach);
		ps->attach = tmp;
		ps->have_attach = 1;
		return 0;
	}
	buf_free(&tmp);
	return rc;
}

static int walk(struct parts *ps, const struct mailmime *m, unsigned depth,
		int in_multi)
{
	clistiter *it;
	int rc = 0;

	if (depth > PT_MAX_MIME_DEPTH)
		return pt_error_set(PT_ETOOBIG, "MIME parts nested deeper "
				    "than %u", PT_MAX_MIME_DEPTH);
	switch (m->mm_type) {
	case MAILMIME_SINGLE:
		if (++ps->nparts > PT_MAX_MIME_PARTS)
			return pt_error_set(PT_ETOOBIG, "more than %u MIME "
					    "parts", PT_MAX_MIME_PARTS);
		return leaf(ps, m, in_multi);
	case MAILMIME_MULTIPLE:
		for (it = clist_begin(m->mm_data.mm_multipart.mm_mp_list);
		     it && !rc; it = clist_next(it))
			rc = walk(ps, clist_content(it), depth + 1, 1);
		return rc;
	case MAILMIME_MESSAGE:
		/* only the top level: an attached message is not ours */
		if (depth == 0 && m->mm_data.mm_message.mm_msg_mime)
			return walk(ps, m->mm_data.mm_message.mm_msg_mime,
				    depth + 1, in_multi);
		return 0;
	}
	return 0;
}

/*
 * libetpan's time grows with the square of the MIME nesting depth (100000
 * levels: minutes), and the depth is only known after it has parsed, so
 * count the multipart declarations first: nesting needs one per level.
 */
static int multipart_limit(const char *s, size_t len)
{
	size_t off, e, n = 0, f, i;

	for (off = 0; off < len; off = next_line(s, len, off)) {
		e = line_end(s, len, off);
		if (e - off < 13 || strncasecmp(s + off, "content-type:", 13))
			continue;
		/* the value, and a folded continuation line */
		f = e < len && e + 1 < len && (s[e + 1] == ' ' ||
					       s[e + 1] == '\t')
			    ? line_end(s, len, e + 1) : e;
		for (i = off + 13; i + 9 <= f; i++)
			if (!strncasecmp(s + i, "multipart", 9)) {
				n++;
				break;
			}
		if (n > PT_MAX_MIME_PARTS)
			return pt_error_set(PT_ETOOBIG, "more than %u MIME "
					    "multipart declarations",
					    PT_MAX_MIME_PARTS);
	}
	return 0;
}

/*
 * Hand libetpan the MIME header fields we found and the body, so that
 * where the body starts is decided once, by headers_parse().
 */
static int mime_parts(struct parts *ps, const struct headers *hs,
		      const char *body, size_t len)
{
	static const char *const names[] = {
		"MIME-Version", "Content-Type", "Content-Transfer-Encoding",
		"Content-Disposition", NULL,
	};
	struct buf msg = BUF_INIT;
	struct mailmime *mime = NULL;
	const struct hdr *h;
	size_t i, idx = 0;
	int rc;

	rc = multipart_limit(body, len);
	for (i = 0; names[i] && !rc; i++)
		if ((h = header_get(hs, names[i])))
			rc = buf_addf(&msg, "%s: %s\n", names[i], h->value);
	if (!rc)
		rc = buf_addch(&msg, '\n');
	if (!rc)
		rc = buf_add(&msg, body, len);
	if (rc)
		goto out;
	h = header_get(hs, "Content-Type");
	if (mailmime_parse(msg.ptr, msg.len, &idx, &mime) ==
		    MAILIMF_NO_ERROR &&
	    !(h && !strncasecmp(h->value, "multipart/", 10) &&
	      !strcasestr(h->value, "boundary="))) {
		rc = walk(ps, mime, 0, 0);
	} else {
		/* unparseable MIME or a multipart without a boundary: the
		 * body as plain text */
		ps->have_body = 1;
		rc = buf_add(&ps->body, body, len);
	}
out:
	if (mime)
		mailmime_free(mime);
	buf_free(&msg);
	return rc;
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
		sp.diff = diff_start(s, ps->attach.len);
		sp.diff_end = sp.diff + diff_sig(s + sp.diff,
						 ps->attach.len - sp.diff);
		rc = patch_set_diff(p, s + sp.diff, sp.diff_end - sp.diff);
	}
out:
	buf_free(&t);
	return rc;
}

static int headers_fill(struct patch *p, const struct headers *hs,
			const char *cs)
{
	struct buf d = BUF_INIT, s = BUF_INIT;
	const struct hdr *h;
	int rc;

	rc = first_id(&p->message_id, header_get(hs, "Message-ID"));
	if (!rc)
		rc = first_id(&p->in_reply_to, header_get(hs, "In-Reply-To"));
	if (!rc)
		rc = references_parse(p, header_get(hs, "References"));
	if (!rc)
		rc = first_id(&p->list_id, header_get(hs, "List-Id"));
	if (!rc)
		rc = person_parse(&p->author, header_get(hs, "From"), cs);
	if (rc)
		goto out;
	date_parse(p, header_get(hs, "Date"));
	h = header_get(hs, "Subject");
	if (h)
		rc = decode_2047(&d, h->value, h->len, cs);
	if (!rc)
		rc = mail_add_subject(&s, d.ptr, d.len);
	if (!rc)
		rc = subject_parse(&p->subject, s.ptr, s.len);
out:
	buf_free(&d);
	buf_free(&s);
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
		return pt_error_set(PT_ETOOBIG, "mail of %zu bytes is over "
				    "the limit of %u", len, PT_MAX_MAIL_SIZE);
	rc = add_lf(&text, buf ? buf : "", len);
	if (!rc)
		rc = headers_parse(&hs, &body, text.ptr, text.len);
	if (!rc)
		rc = patch_new(&p);
	if (rc)
		goto out;
	p->source = PATCH_FROM_MAIL;
	header_charset(cs, sizeof(cs), header_get(&hs, "Content-Type"));
	rc = headers_fill(p, &hs, cs);
	if (!rc)
		rc = mime_parts(&ps, &hs, text.ptr + body, text.len - body);
	if (!rc)
		rc = body_fill(p, &ps);
	if (rc && p->message_id)
		pt_error_wrap(rc, "message '%s'", p->message_id);
out:
	if (rc)
		patch_free(p);
	else
		*out = p;
	headers_free(&hs);
	buf_free(&ps.body);
	buf_free(&ps.attach);
	free(ps.body_cs);
	buf_free(&text);
	return rc;
}
