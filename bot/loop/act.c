/*
 * act.c - the bot's outgoing actions through the outbox: checks posted
 * to Patchwork when their state or description changes, one reply per
 * series version and kind (a slot pins which patch and which model
 * version), and the flush that finishes what a crash or an outage left
 * intended.  See act.h.  The log says what was done; errors of a single
 * action are counted and left in the outbox for the next flush.
 */
#include "bot/loop/act.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/sys/log.h"
#include "bot/outbox/policy.h"
#include "bot/outbox/store.h"
#include "bot/loop/command.h"
#include "bot/loop/hold.h"

static void report(struct act *a, const char *what, const char *text)
{
	if (a->report)
		a->report(a->report_ctx, what, text);
}

void act_note_auth(struct act_stats *st, int rc)
{
	if (rc != PT_EAUTH && (rc || pt_error_last_code() != PT_EAUTH))
		return;
	st->auth_failed++;
	snprintf(st->auth_error, sizeof(st->auth_error), "%s", pt_error_last());
}

/* Count a failed action and keep its message (the pass's verdict). */
static void act_failed(struct act_stats *st, char *msg, size_t size,
		       size_t *count)
{
	(*count)++;
	snprintf(msg, size, "%s", pt_error_last());
	act_note_auth(st, 0);
}

/* ---- checks -------------------------------------------------------- */

#define POST_SENDING 1u /* the row is already 'sending' */
#define POST_KNOWN 2u	/* no check of this text can be on the server */

/* An outbox row's check, its strings in j. */
struct row {
	int64_t id;
	json_t *j;
	const char *project, *state, *context, *desc;
	json_int_t patch;
};

/* The check of row id (j owned by *c, also on failure). */
static int row_parse(struct act *a, int64_t id, const char *payload,
		     struct row *c)
{
	json_error_t jerr;

	memset(c, 0, sizeof(*c));
	c->id = id;
	c->j = json_loads(payload, 0, &jerr);
	if (c->j &&
	    !json_unpack(c->j, "{s:s, s:I, s:s, s:s, s:s}", "project",
			 &c->project, "patch", &c->patch, "state", &c->state,
			 "context", &c->context, "description", &c->desc))
		return 0;
	store_outbox_set(a->db, id, OUTBOX_FAILED, NULL,
			 "unreadable outbox payload");
	return pt_error_set(PT_EINVAL, "outbox check %lld: unreadable payload",
			    (long long)id);
}

static int row_dry(struct act *a, const struct row *c)
{
	struct buf b = BUF_INIT;
	int rc;

	rc = buf_addf(&b, "%s patch %lld: %s %s: %s", c->project,
		      (long long)c->patch, c->context, c->state, c->desc);
	if (!rc)
		report(a, "check", b.ptr);
	buf_free(&b);
	if (!rc)
		rc = store_outbox_set(a->db, c->id, OUTBOX_SENT, "dry-run",
				      NULL);
	return rc;
}

/* Record the post's outcome (prc, its message set when not 0). */
static int row_outcome(struct act *a, const struct row *c, int prc, int posted,
		       int64_t cid)
{
	char ref[32], *err;
	int rc;

	if (!prc) {
		/* found on the server: not sent by this state (status) */
		snprintf(ref, sizeof(ref), "%lld", (long long)cid);
		rc = store_outbox_set(a->db, c->id,
				      posted ? OUTBOX_SENT : OUTBOX_SKIPPED,
				      ref, NULL);
		if (posted)
			a->st.checks_posted++;
		else
			a->st.checks_reconciled++;
		log_info("check %s on %s patch %lld: %s (%s)", c->context,
			 c->project, (long long)c->patch, c->state,
			 posted ? "posted" : "already on the server");
		return rc;
	}
	err = pt_strdup(pt_error_last());
	act_failed(&a->st, a->st.check_error, sizeof(a->st.check_error),
		   &a->st.checks_failed);
	log_warn("check %s on %s patch %lld not posted: %s", c->context,
		 c->project, (long long)c->patch, err ? err : "?");
	store_outbox_set(a->db, c->id, OUTBOX_INTENDED, NULL, err);
	free(err);
	return 0; /* stays intended: act_flush() posts it later */
}

/* Post the check of c (flags: POST_KNOWN) and record the outcome. */
static int post_one(struct act *a, const struct row *c, unsigned flags)
{
	int64_t cid = 0;
	int posted = 0, rc;

	if (flags & POST_KNOWN)
		rc = pw_check_post_new(a->pw, c->patch, c->state, c->context,
				       c->desc, NULL, &posted, &cid);
	else
		rc = pw_check_post(a->pw, c->patch, c->state, c->context,
				   c->desc, NULL, &posted, &cid);
	return row_outcome(a, c, rc, posted, cid);
}

/* Post the check an outbox row describes and record the outcome. */
static int post_row(struct act *a, int64_t id, const char *payload,
		    unsigned flags)
{
	struct row c;
	int rc;

	rc = row_parse(a, id, payload, &c);
	if (!rc && a->dry_run)
		rc = row_dry(a, &c);
	else if (!rc && !(flags & POST_SENDING))
		rc = store_outbox_set(a->db, id, OUTBOX_SENDING, NULL, NULL);
	if (!rc && !a->dry_run)
		rc = post_one(a, &c, flags);
	json_decref(c.j);
	return rc;
}

/* ---- checks posted at once ----------------------------------------- */

/* A check recorded, its post waiting for act_post_checks(). */
struct act_pending {
	struct row c;
	unsigned flags;
	char *key; /* dedupe key without the revision: patch and context */
};

static void pending_clear(struct act_pending *p)
{
	json_decref(p->c.j);
	free(p->key);
}

void act_clear(struct act *a)
{
	size_t i;

	for (i = 0; i < a->npend; i++)
		pending_clear(&a->pend[i]);
	free(a->pend);
	a->pend = NULL;
	a->npend = a->cappend = 0;
}

struct posting {
	struct act *a;
	struct pw_check_job *jobs;
};

static int job_done(void *ctx, struct pw_check_job *job, int rc)
{
	struct posting *p = ctx;

	return row_outcome(p->a, &p->a->pend[job - p->jobs].c, rc, job->posted,
			   job->check_id);
}

int act_post_checks(struct act *a)
{
	struct posting p = { a, NULL };
	size_t i;
	int rc = 0;

	if (a->npend == 1)
		rc = post_one(a, &a->pend[0].c, a->pend[0].flags);
	else if (a->npend)
		p.jobs = pt_calloc(a->npend, sizeof(*p.jobs));
	if (a->npend > 1 && !p.jobs)
		rc = PT_ENOMEM;
	for (i = 0; p.jobs && i < a->npend; i++) {
		p.jobs[i].patch_id = a->pend[i].c.patch;
		p.jobs[i].state = a->pend[i].c.state;
		p.jobs[i].context = a->pend[i].c.context;
		p.jobs[i].description = a->pend[i].c.desc;
		p.jobs[i].read_first = !(a->pend[i].flags & POST_KNOWN);
	}
	if (p.jobs)
		rc = pw_checks_post_many(a->pw, p.jobs, a->npend, job_done, &p);
	free(p.jobs);
	act_clear(a);
	return rc;
}

/* dedupe without its last "/REV" (fresh). */
static char *pending_key(const char *dedupe)
{
	const char *slash = strrchr(dedupe, '/');

	return pt_strndup(dedupe,
			  slash ? (size_t)(slash - dedupe) : strlen(dedupe));
}

/*
 * Leave the post of row id for act_post_checks(); those waiting go
 * first when one is of the same patch and context (the newest must
 * land last) or HTTP_MANY_WIDTH wait already.
 */
static int defer_row(struct act *a, int64_t id, const char *payload,
		     unsigned flags, const char *dedupe)
{
	struct act_pending *p, one = { { 0, NULL, NULL, NULL, NULL, NULL, 0 },
				       flags | POST_SENDING,
				       NULL };
	size_t i;
	int rc;

	rc = row_parse(a, id, payload, &one.c);
	if (!rc) {
		one.key = pending_key(dedupe);
		rc = one.key ? 0 : PT_ENOMEM;
	}
	for (i = 0; !rc && i < a->npend; i++)
		if (!strcmp(a->pend[i].key, one.key))
			break;
	if (!rc && (i < a->npend || a->npend >= HTTP_MANY_WIDTH))
		rc = act_post_checks(a);
	if (!rc && a->npend == a->cappend) {
		size_t cap = a->cappend ? a->cappend * 2 : HTTP_MANY_WIDTH;

		p = realloc(a->pend, cap * sizeof(*p));
		rc = p ? 0 : PT_ENOMEM;
		if (p) {
			a->pend = p;
			a->cappend = cap;
		}
	}
	if (!rc && !(flags & POST_SENDING))
		rc = store_outbox_set(a->db, id, OUTBOX_SENDING, NULL, NULL);
	if (rc) {
		pending_clear(&one);
		return rc;
	}
	a->pend[a->npend++] = one;
	return 0;
}

static int check_payload(char **out, const char *project, int64_t patch_id,
			 const char *context, const char *state,
			 const char *desc)
{
	json_t *j = json_pack("{s:s, s:I, s:s, s:s, s:s}", "project", project,
			      "patch", (json_int_t)patch_id, "state", state,
			      "context", context, "description", desc);

	*out = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(j);
	return *out ? 0 : PT_ENOMEM;
}

/* Whether "REV\tSTATE\tDESC" (prev) says the same; *rev gets REV. */
static int same_as_last(const char *prev, const char *state, const char *desc,
			long *rev)
{
	char *end;
	size_t n = strlen(state);

	*rev = 0;
	if (!prev)
		return 0;
	*rev = strtol(prev, &end, 10);
	if (*end != '\t')
		return 0;
	end++;
	return !strncmp(end, state, n) && end[n] == '\t' &&
	       !strcmp(end + n + 1, desc);
}

/* Whether an outbox payload has this state and (capped) description. */
static int payload_same(const struct act *a, const char *payload,
			const char *state, const char *desc)
{
	json_t *j = json_loads(payload, 0, NULL);
	const char *ps = json_string_value(json_object_get(j, "state"));
	const char *pd = json_string_value(json_object_get(j, "description"));
	int same = ps && pd && !strcmp(ps, state) &&
		   pw_same_description(a->pw, pd, desc);

	json_decref(j);
	return same;
}

/*
 * Whether this database knows every check it set on the patch in this
 * context: revisions 1..rev all in the outbox, sent or found on the
 * server ('skipped').  Then the server can hold a check of ours with
 * this text only as one of those, and the post needs no read of the
 * patch's checks first.  *same gets the remote id of the newest
 * revision when it has this state and description (fresh): an older
 * one with the text is not what Patchwork shows.  Revision 0 (nothing
 * set here yet) is never known: the state may be new while the server
 * is not.
 */
static int history_known(struct act *a, const char *project, int64_t patch_id,
			 const char *context, long rev, const char *state,
			 const char *desc, int *known, char **same)
{
	struct buf k = BUF_INIT;
	struct outbox_row row;
	long i;
	int rc = 0;

	*known = 0;
	*same = NULL;
	if (!a->pw || a->dry_run)
		return 0;
	for (i = 1; i <= rev; i++) {
		buf_reset(&k);
		rc = buf_addf(&k, "check/%s/%lld/%s/%ld", project,
			      (long long)patch_id, context, i);
		if (!rc)
			rc = store_outbox_get(a->db, k.ptr, &row);
		if (rc == PT_ENOTFOUND)
			rc = 0;
		if (rc ||
		    (row.state != OUTBOX_SENT && row.state != OUTBOX_SKIPPED) ||
		    !row.remote_ref || !strcmp(row.remote_ref, "dry-run")) {
			outbox_row_clear(&row);
			break;
		}
		if (i == rev && payload_same(a, row.payload, state, desc)) {
			*same = pt_strdup(row.remote_ref);
			if (!*same)
				rc = PT_ENOMEM;
		}
		outbox_row_clear(&row);
		if (rc)
			break;
	}
	*known = !rc && rev >= 1 && i > rev;
	if (!*known) {
		free(*same);
		*same = NULL;
	}
	buf_free(&k);
	return rc;
}

/*
 * The outbox row and the new "last" in one transaction; the row starts
 * as initial ('sending' when it is posted right after, 'skipped' with
 * ref when the server has it already).
 */
static int record_check(struct act *a, const struct policy_subsys *s,
			const char *lastkey, const char *last,
			const char *dedupe, const char *target,
			const char *payload, enum outbox_state initial,
			const char *ref, int64_t *id)
{
	int rc = db_begin(a->db);

	if (rc)
		return rc;
	rc = store_outbox_intend(a->db, "check", dedupe, s->name, target,
				 payload, id);
	if (!rc && initial != OUTBOX_INTENDED)
		rc = store_outbox_set(a->db, *id, initial, ref, NULL);
	if (!rc)
		rc = db_kv_set(a->db, lastkey, last);
	if (!rc)
		rc = db_commit(a->db);
	if (rc)
		db_rollback(a->db);
	return rc;
}

int act_check(struct act *a, const struct policy_subsys *s, const char *project,
	      int64_t patch_id, const char *context, const char *state,
	      const char *description)
{
	struct buf key = BUF_INIT, last = BUF_INIT, dedupe = BUF_INIT;
	struct buf target = BUF_INIT;
	char *prev = NULL, *payload = NULL, *same = NULL;
	enum outbox_state initial = OUTBOX_INTENDED;
	int64_t id = 0;
	long rev;
	int rc, known = 0, post = a->pw || a->dry_run;

	rc = buf_addf(&key, "check-last/%s/%lld/%s", project,
		      (long long)patch_id, context);
	if (!rc) {
		rc = db_kv_get(a->db, key.ptr, &prev);
		if (rc == PT_ENOTFOUND)
			rc = 0;
	}
	if (!rc && same_as_last(prev, state, description, &rev)) {
		a->st.checks_unchanged++;
		goto out;
	}
	if (!rc)
		rc = buf_addf(&last, "%ld\t%s\t%s", rev + 1, state,
			      description);
	if (!rc)
		rc = buf_addf(&dedupe, "check/%s/%lld/%s/%ld", project,
			      (long long)patch_id, context, rev + 1);
	if (!rc)
		rc = buf_addf(&target, "%s/%lld", project, (long long)patch_id);
	if (!rc)
		rc = check_payload(&payload, project, patch_id, context, state,
				   description);
	if (!rc)
		rc = history_known(a, project, patch_id, context, rev, state,
				   description, &known, &same);
	if (!rc && same)
		initial = OUTBOX_SKIPPED; /* on the server already */
	else if (!rc && a->pw && !a->dry_run)
		initial = OUTBOX_SENDING;
	if (!rc)
		rc = record_check(a, s, key.ptr, last.ptr, dedupe.ptr,
				  target.ptr, payload, initial, same, &id);
	if (!rc && same) {
		a->st.checks_reconciled++;
		log_info("check %s on %s patch %lld: %s (already on the "
			 "server as %s)",
			 context, project, (long long)patch_id, state, same);
	} else if (!rc && post) {
		unsigned fl = (initial == OUTBOX_SENDING ? POST_SENDING : 0) |
			      (known ? POST_KNOWN : 0);

		rc = a->defer && !a->dry_run
			     ? defer_row(a, id, payload, fl, dedupe.ptr)
			     : post_row(a, id, payload, fl);
	}
out:
	free(same);
	free(prev);
	free(payload);
	buf_free(&key);
	buf_free(&last);
	buf_free(&dedupe);
	buf_free(&target);
	return rc;
}

int act_check_first(struct act *a, const struct policy_subsys *s,
		    const char *project, int64_t patch_id, const char *context,
		    const char *state, const char *description)
{
	struct buf key = BUF_INIT;
	char *prev = NULL;
	int rc;

	rc = buf_addf(&key, "check-last/%s/%lld/%s", project,
		      (long long)patch_id, context);
	if (!rc)
		rc = db_kv_get(a->db, key.ptr, &prev);
	buf_free(&key);
	if (!rc) { /* set already, by either path */
		free(prev);
		a->st.checks_unchanged++;
		return 0;
	}
	if (rc != PT_ENOTFOUND)
		return rc;
	pt_error_clear();
	return act_check(a, s, project, patch_id, context, state, description);
}

/* ---- replies ------------------------------------------------------- */

/* The candidate policy lets through with the highest probability. */
static int best_candidate(const struct act *a, const struct act_candidate *c,
			  size_t n, enum reply_status *why,
			  const struct policy_subsys **sub)
{
	const struct policy_subsys *s;
	enum reply_status st;
	size_t i;
	int best = -1;

	*why = REPLY_NOT_OPTED_IN;
	for (i = 0; i < n; i++) {
		if (!reply_decide(&st, a->pol, c[i].p, &c[i].in, &s)) {
			if (st > *why || *why == REPLY_NOT_OPTED_IN)
				*why = st;
			continue;
		}
		if (best < 0 || c[i].in.probability > c[best].in.probability) {
			best = (int)i;
			*sub = s;
		}
	}
	return best;
}

/* The pinned patch and version, or pin the best candidate's. */
static int take_slot(struct act *a, const char *slot,
		     const struct act_candidate *c, size_t n, int best,
		     int *idx, char **version)
{
	char *v = NULL, *tab;
	struct buf val = BUF_INIT;
	size_t i;
	int rc;

	*idx = -1;
	*version = NULL;
	rc = db_kv_get(a->db, slot, &v);
	if (rc == PT_ENOTFOUND) {
		rc = buf_addf(&val, "%s\t%s", c[best].in.model_version,
			      c[best].p->message_id);
		if (!rc)
			rc = db_kv_set(a->db, slot, val.ptr);
		buf_free(&val);
		*idx = best;
		*version = rc ? NULL : pt_strdup(c[best].in.model_version);
		return rc ? rc : *version ? 0 : PT_ENOMEM;
	}
	if (rc)
		return rc;
	tab = strchr(v, '\t');
	if (tab) {
		*tab++ = '\0';
		for (i = 0; i < n; i++)
			if (c[i].p->message_id &&
			    !strcmp(c[i].p->message_id, tab))
				*idx = (int)i;
	}
	*version = v;
	return 0;
}

/*
 * A reply a dry run reported, kept as "dry-reply-KIND" with ref
 * "dry-run": it counts towards the dry run's rate limit
 * (policy_rate_ok_dry()) and is never sent, nor counted as sent.
 */
static void dry_recorded(struct act *a, const char *kind,
			 const struct reply_out *o)
{
	struct buf k = BUF_INIT;
	int64_t id;

	if (o->message_id &&
	    !buf_addf(&k, "%sreply-%s", POLICY_DRY_PREFIX, kind) &&
	    !store_outbox_intend(a->db, k.ptr, o->message_id, o->subsystem,
				 "dry-run", o->message, &id))
		store_outbox_set(a->db, id, OUTBOX_SENT, "dry-run", NULL);
	pt_error_clear();
	buf_free(&k);
}

static void reply_done(struct act *a, const char *kind,
		       const struct reply_out *o, const struct patch *p)
{
	switch (o->status) {
	case REPLY_SENT:
		a->st.replies_sent++;
		log_info("reply %s to <%s> sent as <%s> (%s)", kind,
			 p->message_id, o->message_id, o->subsystem);
		if (o->refused)
			log_warn("reply <%s>: recipients refused: %s",
				 o->message_id, o->refused);
		break;
	case REPLY_DRY_RUN:
		report(a, "reply", o->message);
		dry_recorded(a, kind, o);
		break;
	case REPLY_ALREADY:
		a->st.replies_already++;
		break;
	case REPLY_HELD:
		a->st.replies_held++;
		log_info("reply %s to <%s> held in the outbox as <%s> (%s): %s",
			 kind, p->message_id, o->message_id, o->subsystem,
			 "see patchtriage outbox list");
		break;
	case REPLY_RATE_LIMITED:
		a->st.replies_limited++;
		log_info("reply %s to <%s> waits: rate limit of %s", kind,
			 p->message_id, o->subsystem ? o->subsystem : "?");
		break;
	default:
		break;
	}
}

/* A maintainer's "patchtriage: mute" or "mute-list" holds (command.h). */
static int muted(struct act *a, const struct policy_subsys *sub,
		 const char *series_key, const char *kind,
		 enum reply_status *st)
{
	const char *what;
	char *who = NULL;

	if (!command_muted(a->db, sub, series_key, &who, &what))
		return 0;
	*st = REPLY_MUTED;
	a->st.replies_muted++;
	log_info("reply %s on <%s> not sent: %s muted by %s", kind, series_key,
		 what, who ? who : "?");
	free(who);
	return 1;
}

int act_reply(struct act *a, const char *series_key, const char *kind,
	      const struct act_candidate *c, size_t n, enum reply_status *st)
{
	const struct policy_subsys *sub = NULL;
	struct buf slot = BUF_INIT;
	struct reply_out o;
	struct reply_in in;
	char *version = NULL;
	int best, idx, rc;

	memset(&o, 0, sizeof(o));
	best = best_candidate(a, c, n, st, &sub);
	if (best < 0 || muted(a, sub, series_key, kind, st))
		return 0;
	if (!a->smtp && !a->dry_run) {
		*st = REPLY_ACTION_OFF; /* no [smtp]: replies cannot go out */
		return 0;
	}
	rc = buf_addf(&slot, "slot/%s/%s", kind, series_key);
	if (!rc)
		rc = take_slot(a, slot.ptr, c, n, best, &idx, &version);
	if (!rc && idx < 0) {
		*st = REPLY_ALREADY; /* pinned to a patch no longer here */
		goto out;
	}
	if (!rc) {
		in = c[idx].in;
		in.model_version = version;
		rc = reply_for_patch(&o, a->pol, a->smtp, a->db, c[idx].p, &in,
				     a->dry_run);
		*st = o.status;
	}
	if (!rc)
		reply_done(a, kind, &o, c[idx].p);
	else
		act_failed(&a->st, a->st.reply_error, sizeof(a->st.reply_error),
			   &a->st.replies_failed);
out:
	reply_out_clear(&o);
	free(version);
	buf_free(&slot);
	return rc;
}

/* ---- flushing ------------------------------------------------------ */

struct pending {
	struct outbox_row *rows;
	size_t n, cap;
};

static int collect(const struct outbox_row *r, void *ctx)
{
	struct pending *p = ctx;
	struct outbox_row *c;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct outbox_row *v = realloc(p->rows, cap * sizeof(*v));

		if (!v)
			return PT_ENOMEM;
		p->rows = v;
		p->cap = cap;
	}
	c = &p->rows[p->n];
	memset(c, 0, sizeof(*c));
	c->id = r->id;
	c->state = r->state;
	c->kind = pt_strdup(r->kind);
	c->dedupe_key = pt_strdup(r->dedupe_key);
	c->target = pt_strdup(r->target);
	c->payload = pt_strdup(r->payload);
	p->n++;
	return c->kind && c->dedupe_key && c->target && c->payload ? 0
								   : PT_ENOMEM;
}

static int flush_row(struct act *a, const struct outbox_row *r)
{
	int rc;

	if (!strcmp(r->kind, "check"))
		return 0; /* flush_checks() */
	if (strncmp(r->kind, "reply-", 6) || r->state != OUTBOX_INTENDED ||
	    !a->smtp || a->dry_run)
		return 0; /* a reply left 'sending' may have gone: never again */
	rc = reply_resend(a->pol, a->smtp, a->db, r);
	if (!rc) {
		a->st.replies_sent++;
		log_info("reply <%s> sent (left intended before)",
			 r->dedupe_key);
	} else {
		act_failed(&a->st, a->st.reply_error, sizeof(a->st.reply_error),
			   &a->st.replies_failed);
		log_warn("reply <%s> not sent: %s", r->dedupe_key,
			 pt_error_last());
	}
	return 0;
}

/* The checks of p, posted with Patchwork's dedupe, at once. */
static int flush_checks(struct act *a, const struct pending *p)
{
	size_t i;
	int rc = 0;

	if (!a->pw && !a->dry_run)
		return 0;
	for (i = 0; !rc && i < p->n; i++) {
		if (strcmp(p->rows[i].kind, "check"))
			continue;
		if (a->dry_run)
			rc = post_row(a, p->rows[i].id, p->rows[i].payload, 0);
		else
			rc = defer_row(a, p->rows[i].id, p->rows[i].payload, 0,
				       p->rows[i].dedupe_key);
	}
	if (rc) {
		act_clear(a); /* left 'sending': the next flush posts them */
		return rc;
	}
	return act_post_checks(a);
}

int act_release(struct act *a)
{
	struct hold_stats hs = { 0, 0 };
	int rc;

	if (a->dry_run)
		return 0;
	rc = hold_release_due(a->db, a->lk, a->pol, time(NULL), &hs);
	a->st.replies_dropped += hs.dropped;
	return rc;
}

int act_flush(struct act *a)
{
	struct pending p = { NULL, 0, 0 };
	size_t i;
	int rc;

	rc = store_outbox_foreach(a->db, OUTBOX_INTENDED, collect, &p);
	if (!rc)
		rc = store_outbox_foreach(a->db, OUTBOX_SENDING, collect, &p);
	if (!rc)
		rc = flush_checks(a, &p);
	for (i = 0; !rc && i < p.n; i++)
		rc = flush_row(a, &p.rows[i]);
	for (i = 0; i < p.n; i++)
		outbox_row_clear(&p.rows[i]);
	free(p.rows);
	return rc;
}
