/*
 * mail_mime.c - the MIME parts of a mail that matter (through libetpan):
 * the first text/plain part that is not an attachment is the body, the
 * first other text part (plain, x-patch, x-diff) holding a diff is the
 * attachment; parts are transfer-decoded and get LF line endings.  The
 * nesting depth and the number of parts are capped before libetpan
 * parses.
 */
#include "scoring/patch/mail.h"

#include <string.h>
#include <strings.h>

#include <libetpan/libetpan.h>

#include "scoring/patch/mail_int.h"

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
		return mail_add_lf(out, d->dt_data.dt_text.dt_data,
				   d->dt_data.dt_text.dt_length);
	if (mailmime_part_parse(d->dt_data.dt_text.dt_data,
				d->dt_data.dt_text.dt_length, &idx,
				d->dt_encoding, &res,
				&rlen) != MAILIMF_NO_ERROR)
		return pt_error_set(PT_ENOMEM, "out of memory");
	rc = mail_add_lf(out, res, rlen);
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
		cs = m->mm_content_type
			     ? mailmime_content_param_get(m->mm_content_type,
							  "charset")
			     : NULL;
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
	if (!rc && mail_diff_start(tmp.ptr, tmp.len) < tmp.len) {
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
		return pt_error_set(PT_ETOOBIG,
				    "MIME parts nested deeper "
				    "than %u",
				    PT_MAX_MIME_DEPTH);
	switch (m->mm_type) {
	case MAILMIME_SINGLE:
		if (++ps->nparts > PT_MAX_MIME_PARTS)
			return pt_error_set(PT_ETOOBIG,
					    "more than %u MIME "
					    "parts",
					    PT_MAX_MIME_PARTS);
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
		f = e < len && e + 1 < len &&
				    (s[e + 1] == ' ' || s[e + 1] == '\t')
			    ? line_end(s, len, e + 1)
			    : e;
		for (i = off + 13; i + 9 <= f; i++)
			if (!strncasecmp(s + i, "multipart", 9)) {
				n++;
				break;
			}
		if (n > PT_MAX_MIME_PARTS)
			return pt_error_set(PT_ETOOBIG,
					    "more than %u MIME "
					    "multipart declarations",
					    PT_MAX_MIME_PARTS);
	}
	return 0;
}

/*
 * Hand libetpan the MIME header fields we found and the body, so that
 * where the body starts is decided once, by mail_headers_parse().
 */
int mail_mime_parts(struct parts *ps, const struct headers *hs,
		    const char *body, size_t len)
{
	static const char *const names[] = {
		"MIME-Version",
		"Content-Type",
		"Content-Transfer-Encoding",
		"Content-Disposition",
		NULL,
	};
	struct buf msg = BUF_INIT;
	struct mailmime *mime = NULL;
	const struct hdr *h;
	size_t i, idx = 0;
	int rc;

	rc = multipart_limit(body, len);
	for (i = 0; names[i] && !rc; i++)
		if ((h = mail_header_get(hs, names[i])))
			rc = buf_addf(&msg, "%s: %s\n", names[i], h->value);
	if (!rc)
		rc = buf_addch(&msg, '\n');
	if (!rc)
		rc = buf_add(&msg, body, len);
	if (rc)
		goto out;
	h = mail_header_get(hs, "Content-Type");
	if (mailmime_parse(msg.ptr, msg.len, &idx, &mime) == MAILIMF_NO_ERROR &&
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
