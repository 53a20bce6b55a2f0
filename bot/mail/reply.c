/*
 * reply.c - building and sending the bot's replies (see reply.h).  It
 * owns the deterministic Message-IDs, putting a reply together
 * (reply_build(): recipients, the header block of reply_hdr.c, the body
 * of reply_body.c), and deciding and sending: policy first, then the
 * outbox (bot/outbox/store.c), the record that makes sending idempotent.
 */
#include "bot/mail/reply.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/outbox/store.h"
#include "bot/mail/reply_int.h"

const char *reply_status_name(enum reply_status s)
{
	static const char *const names[] = {
		"sent",		"dry-run",    "already-sent",
		"not-opted-in", "action-off", "below-threshold",
		"rate-limited", "muted",      "held",
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
	rc = reply_id_ok(&h, "In-Reply-To", p->message_id);
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
		rc = reply_render_body(&body, pol, s, p, in);
	qp = !rc && reply_long_lines(body.ptr);
	if (!rc)
		rc = reply_headers(&h, pol, p, to, cc, id.ptr, qp);
	if (!rc)
		rc = qp ? reply_add_qp(&msg, body.ptr)
			: reply_add_crlf(&msg, body.ptr);
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
		/* nothing handed over, or a 4yz to the dot: try again */
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

/*
 * Record the reply and hold it in one savepoint ('waiting' for approval
 * or until the embargo ends): a crash never leaves it 'intended', which
 * the flush would send.
 */
static int hold_new(struct reply_out *out, const struct policy_subsys *s,
		    struct db *db, const char *kind, const char *targets,
		    const char *about)
{
	int64_t id = 0, when = 0;
	int rc, own;

	if (s->reply_mode != POLICY_APPROVE)
		when = (int64_t)time(NULL) + (int64_t)s->embargo_hours * 3600;
	rc = db_savepoint(db, "hold", &own);
	if (rc)
		return rc;
	rc = store_outbox_intend(db, kind, out->message_id, s->name, targets,
				 out->message, &id);
	if (!rc)
		rc = store_outbox_hold(db, id,
				       s->reply_mode == POLICY_APPROVE
					       ? "approve"
					       : "embargo",
				       when, about);
	rc = db_release(db, "hold", own, rc);
	if (!rc)
		out->status = REPLY_HELD;
	return rc;
}

static int held(const struct policy_subsys *s)
{
	return s->reply_mode == POLICY_APPROVE || s->embargo_hours > 0;
}

static int send_once(struct reply_out *out, const struct policy *pol,
		     const struct policy_subsys *s,
		     const struct smtp_opts *smtp, struct db *db,
		     const char *kind, const char *about)
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
		if (!rc && held(s)) {
			rc = hold_new(out, s, db, kind, targets, about);
			free(targets);
			if (rc == PT_EEXISTS) { /* another process held it */
				pt_error_clear();
				out->status = REPLY_ALREADY;
				rc = 0;
			}
			return rc;
		}
		if (!rc)
			rc = store_outbox_intend(db, kind, out->message_id,
						 s->name, targets, out->message,
						 &id);
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

/*
 * What a dry run says of a built reply, as the real run would decide:
 * already sent when the outbox has it past intended; when it has it
 * not at all, rate limited when the subsystem's hourly limit is used
 * up by sent replies and the dry run's own (policy_rate_ok_dry()); else
 * REPLY_DRY_RUN.
 */
static int dry_status(struct reply_out *out, const struct policy_subsys *s,
		      struct db *db, const char *kind)
{
	struct outbox_row row;
	int rc, ok = 1;

	out->status = REPLY_DRY_RUN;
	if (!db)
		return 0;
	memset(&row, 0, sizeof(row));
	rc = store_outbox_get(db, out->message_id, &row);
	if (!rc && row.state != OUTBOX_INTENDED)
		out->status = REPLY_ALREADY;
	outbox_row_clear(&row);
	if (rc != PT_ENOTFOUND) {
		pt_error_clear();
		return 0;
	}
	pt_error_clear();
	rc = policy_rate_ok_dry(s, db, kind, (int64_t)time(NULL), &ok);
	if (!rc && !ok)
		out->status = REPLY_RATE_LIMITED;
	return rc;
}

int reply_for_patch(struct reply_out *out, const struct policy *pol,
		    const struct smtp_opts *smtp, struct db *db,
		    const struct patch *p, const struct reply_in *in,
		    int dry_run)
{
	const struct policy_subsys *s = NULL;
	struct buf kind = BUF_INIT;
	int rc;

	memset(out, 0, sizeof(*out));
	if (decide(out, pol, p, in, &s))
		return 0;
	rc = reply_build(out, pol, s, p, in);
	if (!rc)
		rc = outbox_kind(&kind, in);
	if (!rc && (dry_run || pol->dry_run || !smtp))
		rc = dry_status(out, s, db, kind.ptr);
	else if (!rc)
		rc = send_once(out, pol, s, smtp, db, kind.ptr, p->message_id);
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
	free(o.refused); /* the recipients a resend had refused */
	return rc;
}
