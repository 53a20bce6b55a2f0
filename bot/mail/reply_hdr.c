/*
 * reply_hdr.c - the header block of a reply: every value is checked for
 * CR and LF before it is written (a hostile subject must not add a
 * header), message ids must fit on their line, non-ASCII text and words
 * too long for a line go into RFC 2047 encoded words, other text is
 * folded at spaces, References keeps the first and the last few ids of
 * a long thread, and the addresses, Subject, Date, References and the
 * fixed MIME headers are written in order (reply_headers()).
 */
#include "bot/mail/reply.h"

#include <string.h>
#include <strings.h>
#include <time.h>

#include "bot/mail/reply_int.h"

#define REPLY_HDR_WIDTH 78 /* RFC 5322 2.1.1: header lines SHOULD fit */
#define REPLY_MAX_WORD 900 /* longer unbroken text cannot fit in 998 */
#define REPLY_REFS_TAIL 8  /* References kept after the thread's first */

/* ---- small encoders ------------------------------------------------ */

static int add_base64(struct buf *b, const unsigned char *s, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
				  "qrstuvwxyz0123456789+/";
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16;
		char q[4];

		if (i + 1 < n)
			v |= (unsigned)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		q[0] = tab[(v >> 18) & 63];
		q[1] = tab[(v >> 12) & 63];
		q[2] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? tab[v & 63] : '=';
		rc = buf_add(b, q, 4);
	}
	return rc;
}

static int is_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

/* Bytes on the last line of b: where a header line now ends. */
static size_t column(const struct buf *b)
{
	const char *nl = memrchr(b->ptr, '\n', b->len);

	return nl ? b->len - (size_t)(nl + 1 - b->ptr) : b->len;
}

/* The longest run of s without a space. */
static size_t longest_word(const char *s)
{
	size_t max = 0, n;

	while (*s) {
		s += strspn(s, " ");
		n = strcspn(s, " ");
		if (n > max)
			max = n;
		s += n;
	}
	return max;
}

/*
 * RFC 2047 B words, cut at UTF-8 boundaries, each sized to end its line
 * by REPLY_HDR_WIDTH (the first one after what b already holds), and
 * folded between them.
 */
static int add_encoded(struct buf *b, const char *s)
{
	size_t n = strlen(s), take, col;
	int rc = 0;

	while (!rc && n) {
		col = column(b);
		if (col + 12 + 8 > REPLY_HDR_WIDTH) {
			rc = buf_addstr(b, "\r\n ");
			col = 1;
		}
		/* "=?UTF-8?B?" and "?=" are 12; 4 base64 chars per 3 bytes */
		take = (REPLY_HDR_WIDTH - col - 12) / 4 * 3;
		if (take > n)
			take = n;
		while (take < n && ((unsigned char)s[take] & 0xC0) == 0x80)
			take--;
		if (!rc)
			rc = buf_addstr(b, "=?UTF-8?B?");
		if (!rc)
			rc = add_base64(b, (const unsigned char *)s, take);
		if (!rc)
			rc = buf_addstr(b, "?=");
		s += take;
		n -= take;
		if (!rc && n)
			rc = buf_addstr(b, "\r\n ");
	}
	return rc;
}

/*
 * ASCII text folded before a space wherever the line would pass
 * REPLY_HDR_WIDTH; unfolding (RFC 5322 2.2.3) gives the text back.
 */
static int add_folded(struct buf *b, const char *s)
{
	size_t len, sp;
	int rc = 0;

	while (!rc && *s) {
		sp = strspn(s, " ");
		len = sp + strcspn(s + sp, " ");
		/* never a line of white space only */
		if (sp && len > sp && column(b) + len > REPLY_HDR_WIDTH)
			rc = buf_addstr(b, "\r\n");
		if (!rc)
			rc = buf_add(b, s, len);
		s += len;
	}
	return rc;
}

/* ---- headers ------------------------------------------------------- */
static int value_ok(const struct hdrs *h, const char *name, const char *v)
{
	if (v && strpbrk(v, "\r\n"))
		return pt_error_set(PT_EINVAL,
				    "reply to '%s': header '%s' "
				    "would contain CR or LF; refused",
				    h->msgid, name);
	return 0;
}

/* A message id that fits on one header line; no CR, LF, space or <>. */
int reply_id_ok(const struct hdrs *h, const char *name, const char *id)
{
	if (!id || !*id || strpbrk(id, "\r\n <>\t") ||
	    strlen(id) > REPLY_MAX_WORD)
		return pt_error_set(PT_EINVAL,
				    "reply to '%s': header '%s' "
				    "would get a malformed message id; refused",
				    h->msgid, name);
	return 0;
}

/*
 * "Name: value": non-ASCII text, and words too long for a line, in
 * encoded words; otherwise folded at spaces.
 */
static int hdr(struct hdrs *h, const char *name, const char *value)
{
	int rc;

	rc = value_ok(h, name, value);
	if (!rc)
		rc = buf_addf(h->b, "%s: ", name);
	if (!rc)
		rc = is_ascii(value) && longest_word(value) <= REPLY_MAX_WORD
			     ? add_folded(h->b, value)
			     : add_encoded(h->b, value);
	return rc ? rc : buf_addstr(h->b, "\r\n");
}

static int add_display_name(struct buf *b, const char *name)
{
	const char *p;
	int rc;

	/* a name too long for the line is encoded, which folds it */
	if (!is_ascii(name) || column(b) + strlen(name) + 2 > REPLY_HDR_WIDTH)
		return add_encoded(b, name);
	if (!strpbrk(name, "()<>[]:;@\\,.\""))
		return buf_addstr(b, name);
	rc = buf_addch(b, '"');
	for (p = name; !rc && *p; p++) {
		if (*p == '"' || *p == '\\')
			rc = buf_addch(b, '\\');
		if (!rc)
			rc = buf_addch(b, *p);
	}
	return rc ? rc : buf_addch(b, '"');
}

static int addr_list(struct hdrs *h, const char *name, char *const *v,
		     const struct person *who)
{
	size_t i;
	int rc = 0;

	if (!v[0])
		return 0;
	rc = buf_addf(h->b, "%s: ", name);
	for (i = 0; !rc && v[i]; i++) {
		rc = value_ok(h, name, v[i]);
		if (!rc && strpbrk(v[i], "<>,\" \t"))
			rc = pt_error_set(PT_EINVAL,
					  "reply to '%s': address "
					  "'%s' in header '%s' is malformed",
					  h->msgid, v[i], name);
		if (!rc && i)
			rc = buf_addstr(h->b, ",\r\n ");
		if (!rc && who && who->name && *who->name && who->email &&
		    !strcasecmp(who->email, v[i])) {
			rc = value_ok(h, name, who->name);
			if (!rc)
				rc = add_display_name(h->b, who->name);
			if (!rc &&
			    column(h->b) + strlen(v[i]) + 3 > REPLY_HDR_WIDTH)
				rc = buf_addstr(h->b, "\r\n");
			if (!rc)
				rc = buf_addf(h->b, " <%s>", v[i]);
		} else if (!rc) {
			rc = buf_addstr(h->b, v[i]);
		}
	}
	return rc ? rc : buf_addstr(h->b, "\r\n");
}

/*
 * The patch's References plus the patch itself, one id per line.  A
 * long thread keeps its first id and its last REPLY_REFS_TAIL (RFC 5322
 * 3.6.4 allows leaving out the middle), so the header stays bounded.
 */
static int refs_hdr(struct hdrs *h, const struct patch *p)
{
	size_t i, n = p->nreferences, skip_to = 0;
	int rc;

	if (n > REPLY_REFS_TAIL + 1)
		skip_to = n - REPLY_REFS_TAIL;
	rc = buf_addstr(h->b, "References:");
	for (i = 0; !rc && i < n; i++) {
		if (i && i < skip_to)
			continue;
		rc = reply_id_ok(h, "References", p->references[i]);
		if (!rc)
			rc = buf_addf(h->b, "%s<%s>", i ? "\r\n " : " ",
				      p->references[i]);
	}
	if (!rc)
		rc = buf_addf(h->b, "%s<%s>\r\n", n ? "\r\n " : " ",
			      p->message_id);
	return rc;
}

static int date_hdr(struct hdrs *h)
{
	static const char *const days[] = { "Sun", "Mon", "Tue", "Wed",
					    "Thu", "Fri", "Sat" };
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr",
					      "May", "Jun", "Jul", "Aug",
					      "Sep", "Oct", "Nov", "Dec" };
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	return buf_addf(h->b, "Date: %s, %d %s %d %02d:%02d:%02d +0000\r\n",
			days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon],
			tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static int subject_hdr(struct hdrs *h, const struct patch *p)
{
	const char *s = p->subject.raw ? p->subject.raw : "";
	struct buf v = BUF_INIT;
	int rc;

	rc = value_ok(h, "Subject", s);
	if (!rc)
		rc = buf_addf(&v, "%s%s",
			      strncasecmp(s, "re:", 3) ? "Re: " : "", s);
	if (!rc)
		rc = hdr(h, "Subject", v.ptr);
	buf_free(&v);
	return rc;
}

int reply_headers(struct hdrs *h, const struct policy *pol,
		  const struct patch *p, char **to, char **cc,
		  const char *msgid, int qp)
{
	int rc;

	rc = hdr(h, "From", pol->from);
	if (!rc)
		rc = addr_list(h, "To", to, &p->author);
	if (!rc)
		rc = addr_list(h, "Cc", cc, NULL);
	if (!rc)
		rc = subject_hdr(h, p);
	if (!rc)
		rc = date_hdr(h);
	if (!rc)
		rc = reply_id_ok(h, "Message-ID", msgid);
	if (!rc)
		rc = buf_addf(h->b, "Message-ID: <%s>\r\n", msgid);
	if (!rc)
		rc = reply_id_ok(h, "In-Reply-To", p->message_id);
	if (!rc)
		rc = buf_addf(h->b, "In-Reply-To: <%s>\r\n", p->message_id);
	if (!rc)
		rc = refs_hdr(h, p);
	if (!rc)
		rc = buf_addf(h->b,
			      "Auto-Submitted: auto-generated\r\n"
			      "X-Patchwork-Hint: ignore\r\n"
			      "X-Mailer: patchtriage %s\r\n"
			      "MIME-Version: 1.0\r\n"
			      "Content-Type: text/plain; charset=UTF-8\r\n"
			      "Content-Transfer-Encoding: %s\r\n\r\n",
			      PT_VERSION, qp ? "quoted-printable" : "8bit");
	return rc;
}
