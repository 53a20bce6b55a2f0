/*
 * mail_hdr.c - the header fields of a mail: the header block split into
 * unfolded fields (a stray line ends it, docs/VIOLATIONS.md), and from
 * them the patch's Message-ID, In-Reply-To, References, List-Id, author
 * (libetpan's grammar, else a loose "Name <addr>" reading), Date and
 * Subject, decoded to UTF-8.
 */
#include "scoring/patch/mail.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libetpan/libetpan.h>

#include "scoring/patch/mail_int.h"
#include "scoring/patch/patch.h"

/* ---- header fields ---------------------------------------------------- */

void mail_headers_free(struct headers *hs)
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
int mail_headers_parse(struct headers *hs, size_t *body, const char *s,
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
					    "bytes",
					    (int)n, s + i, PT_MAX_HEADER_LEN);
		rc = header_add(hs, s + i, n, s + c, e - c);
		i = next_line(s, len, i);
	}
	*body = i < len ? i : len;
	if (!rc && !hs->n)
		rc = pt_error_set(PT_EINVAL, "no header fields");
	return rc;
}

const struct hdr *mail_header_get(const struct headers *hs, const char *name)
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
	rc = mail_add_utf8(&b, s, len);
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
	rc = mail_decode_2047(&d, s, len, cs);
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

static int person_parse(struct person *pr, const struct hdr *h, const char *cs)
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
						 (unsigned)dt->dt_day) *
					 86400 +
				 dt->dt_hour * 3600 + dt->dt_min * 60 +
				 dt->dt_sec - (int64_t)tz * 60;
		p->author_tz = tz;
	}
	mailimf_date_time_free(dt);
}

/* The charset= parameter of a Content-Type value, for raw 8-bit text. */
void mail_header_charset(char *out, size_t size, const struct hdr *h)
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

/* ---- the patch's header fields -------------------------------------- */

int mail_headers_fill(struct patch *p, const struct headers *hs, const char *cs)
{
	struct buf d = BUF_INIT, s = BUF_INIT;
	const struct hdr *h;
	int rc;

	rc = first_id(&p->message_id, mail_header_get(hs, "Message-ID"));
	if (!rc)
		rc = first_id(&p->in_reply_to,
			      mail_header_get(hs, "In-Reply-To"));
	if (!rc)
		rc = references_parse(p, mail_header_get(hs, "References"));
	if (!rc)
		rc = first_id(&p->list_id, mail_header_get(hs, "List-Id"));
	if (!rc)
		rc = person_parse(&p->author, mail_header_get(hs, "From"), cs);
	if (rc)
		goto out;
	date_parse(p, mail_header_get(hs, "Date"));
	h = mail_header_get(hs, "Subject");
	if (h)
		rc = mail_decode_2047(&d, h->value, h->len, cs);
	if (!rc)
		rc = mail_add_subject(&s, d.ptr, d.len);
	if (!rc)
		rc = subject_parse(&p->subject, s.ptr, s.len);
out:
	buf_free(&d);
	buf_free(&s);
	return rc;
}
