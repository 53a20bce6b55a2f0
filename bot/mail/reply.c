/*
 * reply.c - building and sending the bot's replies (see reply.h).  It
 * owns the headers: every value is checked for CR and LF before it is
 * written (a hostile subject must not add a header), non-ASCII text goes
 * into RFC 2047 encoded words, and the body is UTF-8, 8bit, or quoted-
 * printable when a line would pass SMTP's 998-byte limit.  The outbox
 * (bot/outbox/store.c) is the record that makes sending idempotent.
 */
#include "bot/mail/reply.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "scoring/util/template.h"
#include "bot/outbox/store.h"

#define REPLY_WIDTH 72
#define REPLY_MAX_LINE 998
#define REPLY_HDR_WIDTH 78   /* RFC 5322 2.1.1: header lines SHOULD fit */
#define REPLY_MAX_WORD 900   /* longer unbroken text cannot fit in 998 */

const char *reply_status_name(enum reply_status s)
{
	static const char *const names[] = {
		"sent", "dry-run", "already-sent", "not-opted-in",
		"action-off", "below-threshold", "rate-limited",
	};

	return (unsigned)s < sizeof(names) / sizeof(*names) ? names[s] : "?";
}

void reply_out_clear(struct reply_out *o)
{
	if (!o)
		return;
	free(o->message_id);
	free(o->message);
	free(o->subsystem);
	config_strv_free(o->rcpts);
	free(o->refused);
	memset(o, 0, sizeof(*o));
}

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

struct hdrs {
	struct buf *b;
	const char *msgid;   /* of the patch, for errors */
};

static int value_ok(const struct hdrs *h, const char *name, const char *v)
{
	if (v && strpbrk(v, "\r\n"))
		return pt_error_set(PT_EINVAL, "reply to '%s': header '%s' "
				    "would contain CR or LF; refused",
				    h->msgid, name);
	return 0;
}

/* A message id that fits on one header line; no CR, LF, space or <>. */
static int id_ok(const struct hdrs *h, const char *name, const char *id)
{
	if (!id || !*id || strpbrk(id, "\r\n <>\t") ||
	    strlen(id) > REPLY_MAX_WORD)
		return pt_error_set(PT_EINVAL, "reply to '%s': header '%s' "
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
	if (!is_ascii(name) ||
	    column(b) + strlen(name) + 2 > REPLY_HDR_WIDTH)
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
			rc = pt_error_set(PT_EINVAL, "reply to '%s': address "
					  "'%s' in header '%s' is malformed",
					  h->msgid, v[i], name);
		if (!rc && i)
			rc = buf_addstr(h->b, ",\r\n ");
		if (!rc && who && who->name && *who->name && who->email &&
		    !strcasecmp(who->email, v[i])) {
			rc = value_ok(h, name, who->name);
			if (!rc)
				rc = add_display_name(h->b, who->name);
			if (!rc && column(h->b) + strlen(v[i]) + 3 >
					   REPLY_HDR_WIDTH)
				rc = buf_addstr(h->b, "\r\n");
			if (!rc)
				rc = buf_addf(h->b, " <%s>", v[i]);
		} else if (!rc) {
			rc = buf_addstr(h->b, v[i]);
		}
	}
	return rc ? rc : buf_addstr(h->b, "\r\n");
}

/* The patch's References plus the patch itself, one id per line. */
static int refs_hdr(struct hdrs *h, const struct patch *p)
{
	size_t i;
	int rc;

	rc = buf_addstr(h->b, "References:");
	for (i = 0; !rc && i < p->nreferences; i++) {
		rc = id_ok(h, "References", p->references[i]);
		if (!rc)
			rc = buf_addf(h->b, "%s<%s>", i ? "\r\n " : " ",
				      p->references[i]);
	}
	if (!rc)
		rc = buf_addf(h->b, "%s<%s>\r\n", p->nreferences ? "\r\n " : " ",
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
		rc = buf_addf(&v, "%s%s", strncasecmp(s, "re:", 3) ? "Re: " : "",
			      s);
	if (!rc)
		rc = hdr(h, "Subject", v.ptr);
	buf_free(&v);
	return rc;
}

/* ---- Message-ID ---------------------------------------------------- */

int reply_message_id(struct buf *out, const char *patch_msgid,
		     const char *model_version, const char *kind,
		     const char *domain)
{
	unsigned char d[32];
	struct buf in = BUF_INIT;
	size_t i;
	int rc;

	rc = buf_addstr(&in, patch_msgid);
	if (!rc)
		rc = buf_addch(&in, '\0');
	if (!rc)
		rc = buf_addstr(&in, model_version ? model_version : "");
	if (!rc)
		rc = buf_addch(&in, '\0');
	if (!rc)
		rc = buf_addstr(&in, kind);
	if (!rc && gnutls_hash_fast(GNUTLS_DIG_SHA256, in.ptr, in.len, d) < 0)
		rc = pt_error_set(PT_ERROR, "cannot hash a message id");
	if (!rc)
		rc = buf_addf(out, "pt-%s-", kind);
	for (i = 0; !rc && i < 12; i++)
		rc = buf_addf(out, "%02x", d[i]);
	if (!rc)
		rc = buf_addf(out, "@%s", domain);
	buf_free(&in);
	return rc;
}

/* "Bot <bot@example.org>" -> "bot@example.org" */
static char *bare_address(const char *from)
{
	const char *lt = strrchr(from, '<'), *gt;

	if (lt && (gt = strchr(lt, '>')))
		return pt_strndup(lt + 1, (size_t)(gt - lt - 1));
	return pt_strdup(from);
}

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

static int reasons_vars(struct tpl_vars *v, const struct reply_in *in)
{
	struct tpl_vars *it;
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < in->nreasons; i++) {
		rc = tpl_list_add(v, "reasons", &it);
		if (!rc)
			rc = set_line(it, "text", in->reasons[i].text);
		if (!rc)
			rc = tpl_set(it, "direction", in->reasons[i].direction
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
		rc = set_line(v, "subject", p->subject.clean ? p->subject.clean
							     : "");
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
	if (!rc)
		rc = reasons_vars(v, in);
	free(first);
	return rc;
}

static int render_body(struct buf *out, const struct policy *pol,
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

static int long_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++) {
		n = *s == '\n' ? 0 : n + 1;
		if (n > REPLY_MAX_LINE)
			return 1;
	}
	return 0;
}

static int add_qp(struct buf *b, const char *s)
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
static int add_crlf(struct buf *b, const char *s)
{
	int rc = 0;

	for (; !rc && *s; s++)
		if (*s != '\r')
			rc = *s == '\n' ? buf_addstr(b, "\r\n")
					 : buf_addch(b, *s);
	return rc;
}

/* ---- the message --------------------------------------------------- */

static int join_rcpts(char ***out, char **to, char **cc)
{
	size_t n = 0, i, k = 0;
	char **v;

	while (to[n])
		n++;
	for (i = 0; cc[i]; i++)
		n++;
	v = pt_calloc(n + 1, sizeof(*v));
	if (!v)
		return PT_ENOMEM;
	for (i = 0; to[i]; i++)
		v[k++] = pt_strdup(to[i]);
	for (i = 0; cc[i]; i++)
		v[k++] = pt_strdup(cc[i]);
	for (i = 0; i < k; i++)
		if (!v[i]) {
			config_strv_free(v);
			return PT_ENOMEM;
		}
	*out = v;
	return 0;
}

static int headers(struct hdrs *h, const struct policy *pol,
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
		rc = id_ok(h, "Message-ID", msgid);
	if (!rc)
		rc = buf_addf(h->b, "Message-ID: <%s>\r\n", msgid);
	if (!rc)
		rc = id_ok(h, "In-Reply-To", p->message_id);
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

static int make_msgid(struct buf *id, const struct policy *pol,
		      const struct patch *p, const struct reply_in *in)
{
	char *addr = NULL;
	const char *dom;
	int rc;

	if (!pol->from)
		return pt_error_set(PT_EINVAL, "config: reply.from is not set");
	dom = pol->msgid_domain;
	if (!dom) {
		addr = bare_address(pol->from);
		if (!addr)
			return PT_ENOMEM;
		dom = strchr(addr, '@') ? strchr(addr, '@') + 1 : "patchtriage";
	}
	rc = reply_message_id(id, p->message_id, in->model_version, in->kind,
			      dom);
	free(addr);
	return rc;
}

int reply_build(struct reply_out *out, const struct policy *pol,
		const struct policy_subsys *s, const struct patch *p,
		const struct reply_in *in)
{
	struct buf msg = BUF_INIT, body = BUF_INIT, id = BUF_INIT;
	struct hdrs h = { &msg, "?" };
	char **to = NULL, **cc = NULL;
	int rc, qp;

	memset(out, 0, sizeof(*out));
	rc = id_ok(&h, "In-Reply-To", p->message_id);
	/* errors name the patch, but not by an id that could split the line */
	if (!rc)
		h.msgid = p->message_id;
	if (!rc)
		rc = make_msgid(&id, pol, p, in);
	if (!rc)
		rc = policy_recipients(pol, s, p, &to, &cc);
	if (!rc && !to[0] && !cc[0])
		rc = pt_error_set(PT_EINVAL, "reply to '%s': no recipients",
				  h.msgid);
	if (!rc)
		rc = render_body(&body, pol, s, p, in);
	qp = !rc && long_lines(body.ptr);
	if (!rc)
		rc = headers(&h, pol, p, to, cc, id.ptr, qp);
	if (!rc)
		rc = qp ? add_qp(&msg, body.ptr) : add_crlf(&msg, body.ptr);
	if (!rc)
		rc = join_rcpts(&out->rcpts, to, cc);
	if (!rc) {
		out->message = buf_detach(&msg, NULL);
		out->message_id = buf_detach(&id, NULL);
		out->subsystem = pt_strdup(s->name);
		rc = out->subsystem ? 0 : PT_ENOMEM;
	}
	config_strv_free(to);
	config_strv_free(cc);
	buf_free(&msg);
	buf_free(&body);
	buf_free(&id);
	if (rc)
		reply_out_clear(out);
	return rc;
}

/* ---- deciding and sending ------------------------------------------ */

static int decide(struct reply_out *out, const struct policy *pol,
		  const struct patch *p, const struct reply_in *in,
		  const struct policy_subsys **s);

int reply_decide(enum reply_status *st, const struct policy *pol,
		 const struct patch *p, const struct reply_in *in,
		 const struct policy_subsys **s)
{
	struct reply_out o;

	memset(&o, 0, sizeof(o));
	if (!decide(&o, pol, p, in, s))
		return 1;
	*st = o.status;
	return 0;
}

/* "Cc: stable" given; an ordinary Cc: is not the stable tag. */
static int has_cc_stable(const struct patch *p)
{
	size_t i;

	for (i = 0; i < p->ntrailers; i++)
		if (p->trailers[i].is_stable)
			return 1;
	return 0;
}

static int decide(struct reply_out *out, const struct policy *pol,
		  const struct patch *p, const struct reply_in *in,
		  const struct policy_subsys **s)
{
	double th;

	if (policy_match(pol, p, in->pw_project, s)) {
		pt_error_clear();
		out->status = REPLY_NOT_OPTED_IN;
		return 1;
	}
	if (!((*s)->actions & POLICY_REPLY)) {
		out->status = REPLY_ACTION_OFF;
		return 1;
	}
	th = strcmp(in->kind, "stable") ? (*s)->risk_threshold
					: (*s)->stable_threshold;
	if (in->probability < th ||
	    (!strcmp(in->kind, "stable") && has_cc_stable(p))) {
		out->status = REPLY_BELOW_THRESHOLD;
		return 1;
	}
	return 0;
}

static int outbox_kind(struct buf *k, const struct reply_in *in)
{
	return buf_addf(k, "reply-%s", in->kind);
}

static char *join_targets(char **v)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; v[i]; i++)
		if (buf_addf(&b, "%s%s", i ? ", " : "", v[i]))
			return NULL;
	return buf_detach(&b, NULL);
}

/*
 * 'sending' is recorded when the SMTP server has taken envelope and DATA,
 * just before the message itself goes out: a crash before that leaves
 * the row 'intended' (sent later, nothing was delivered), one after it
 * leaves 'sending', never sent again.
 */
struct mark {
	struct db *db;
	int64_t id;
};

static int mark_sending(void *ctx)
{
	struct mark *m = ctx;

	return store_outbox_set(m->db, m->id, OUTBOX_SENDING, NULL, NULL);
}

/* "sent; recipients refused: ..." or nothing (note stays empty). */
static int refused_note(struct buf *note, const char *refused)
{
	if (!refused)
		return 0;
	return buf_addf(note, "sent; recipients refused: %s", refused);
}

static int send_recorded(struct reply_out *out, const struct policy *pol,
			 const struct smtp_opts *smtp, struct db *db,
			 int64_t id, const char *payload)
{
	char *from = bare_address(pol->from);
	struct mark ms = { db, id };
	struct buf note = BUF_INIT;
	int rc;

	if (!from)
		return PT_ENOMEM;
	free(out->refused);
	rc = smtp_send_ex(smtp, from, out->rcpts, payload, strlen(payload),
			  mark_sending, &ms, &out->refused);
	if (!rc) {
		/* kept as the row's error: `status` lists it */
		rc = refused_note(&note, out->refused);
		if (!rc)
			rc = store_outbox_set(db, id, OUTBOX_SENT,
					      out->message_id,
					      note.len ? note.ptr : NULL);
		buf_free(&note);
		out->status = REPLY_SENT;
	} else if (rc == PT_EAGAIN || rc == PT_EAUTH) {
		/* nothing was handed over: it may be tried again */
		char *err = pt_strdup(pt_error_last());

		store_outbox_set(db, id, OUTBOX_INTENDED, NULL, err);
		pt_error_set(rc, "%s", err ? err : "smtp failed");
		free(err);
	} else {
		char *err = pt_strdup(pt_error_last());

		store_outbox_set(db, id, OUTBOX_FAILED, NULL, err);
		pt_error_set(rc, "%s", err ? err : "smtp failed");
		free(err);
	}
	free(from);
	return rc;
}

static int send_once(struct reply_out *out, const struct policy *pol,
		     const struct policy_subsys *s,
		     const struct smtp_opts *smtp, struct db *db,
		     const char *kind)
{
	struct outbox_row row;
	char *targets;
	int64_t id = 0;
	int rc, ok = 1;

	memset(&row, 0, sizeof(row));
	rc = store_outbox_get(db, out->message_id, &row);
	if (rc == PT_ENOTFOUND) {
		pt_error_clear();
		rc = policy_rate_ok(s, db, kind, (int64_t)time(NULL), &ok);
		if (!rc && !ok) {
			out->status = REPLY_RATE_LIMITED;
			return 0;
		}
		targets = rc ? NULL : join_targets(out->rcpts);
		if (!rc && !targets)
			rc = PT_ENOMEM;
		if (!rc)
			rc = store_outbox_intend(db, kind, out->message_id,
						 s->name, targets,
						 out->message, &id);
		free(targets);
		if (rc == PT_EEXISTS) /* another process got there first */
			rc = store_outbox_get(db, out->message_id, &row);
		else if (!rc)
			return send_recorded(out, pol, smtp, db, id,
					     out->message);
	}
	if (rc)
		return rc;
	if (row.state != OUTBOX_INTENDED) {
		out->status = REPLY_ALREADY;
		outbox_row_clear(&row);
		return 0;
	}
	/* intended but never sent (a crash, or the server was down) */
	rc = send_recorded(out, pol, smtp, db, row.id, row.payload);
	outbox_row_clear(&row);
	return rc;
}

int reply_for_patch(struct reply_out *out, const struct policy *pol,
		    const struct smtp_opts *smtp, struct db *db,
		    const struct patch *p, const struct reply_in *in,
		    int dry_run)
{
	const struct policy_subsys *s = NULL;
	struct buf kind = BUF_INIT;
	struct outbox_row row;
	int rc;

	memset(out, 0, sizeof(*out));
	if (decide(out, pol, p, in, &s))
		return 0;
	rc = reply_build(out, pol, s, p, in);
	if (!rc)
		rc = outbox_kind(&kind, in);
	if (!rc && (dry_run || pol->dry_run || !smtp)) {
		memset(&row, 0, sizeof(row));
		out->status = db && !store_outbox_get(db, out->message_id,
						      &row) &&
					      row.state != OUTBOX_INTENDED
				      ? REPLY_ALREADY
				      : REPLY_DRY_RUN;
		outbox_row_clear(&row);
		pt_error_clear();
	} else if (!rc) {
		rc = send_once(out, pol, s, smtp, db, kind.ptr);
	}
	buf_free(&kind);
	if (rc) {
		enum reply_status st = out->status;

		reply_out_clear(out);
		out->status = st;
	}
	return rc;
}

/* Split "a, b, c" (the outbox target) into a NULL-terminated vector. */
static int split_targets(char ***out, const char *t)
{
	size_t n = 1, k = 0;
	const char *q;
	char **v;

	for (q = t; *q; q++)
		n += *q == ',';
	v = pt_calloc(n + 1, sizeof(*v));
	if (!v)
		return PT_ENOMEM;
	while (*t) {
		size_t len;

		t += strspn(t, ", ");
		len = strcspn(t, ", ");
		if (len && !(v[k++] = pt_strndup(t, len))) {
			config_strv_free(v);
			return PT_ENOMEM;
		}
		t += len;
	}
	*out = v;
	return 0;
}

int reply_resend(const struct policy *pol, const struct smtp_opts *smtp,
		 struct db *db, const struct outbox_row *row)
{
	struct reply_out o;
	int rc;

	if (row->state != OUTBOX_INTENDED)
		return pt_error_set(PT_EINVAL, "reply '%s' is %s, not intended",
				    row->dedupe_key,
				    outbox_state_name(row->state));
	memset(&o, 0, sizeof(o));
	o.message_id = row->dedupe_key;
	rc = split_targets(&o.rcpts, row->target);
	if (!rc && !o.rcpts[0])
		rc = pt_error_set(PT_EINVAL, "reply '%s': no recipients",
				  row->dedupe_key);
	if (!rc)
		rc = send_recorded(&o, pol, smtp, db, row->id, row->payload);
	config_strv_free(o.rcpts);
	return rc;
}
