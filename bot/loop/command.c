/*
 * command.c - maintainers' commands acted on (see command.h): the
 * authority of the sender, the record in control_commands
 * (bot/outbox/control.c), the log line, and the mute checks the
 * replies ask.
 */
#include "bot/loop/command.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bot/outbox/control.h"
#include "bot/outbox/store.h"
#include "bot/sys/log.h"

/* What the commands of one message are judged against. */
struct judge {
	const struct policy_subsys *sub; /* NULL: no subsystem */
	int author;			 /* sent by a patch's author */
	int maint;			 /* by a maintainer of sub */
	const char *why_maint;		 /* "MAINTAINERS" or the list */
};

static int same_addr(const char *a, const char *b)
{
	return a && b && !strcasecmp(a, b);
}

static int judge_sender(const struct command_env *e,
			const struct command_msg *m,
			const struct command_series *s, struct judge *j)
{
	size_t i;
	int yes = 0, rc = 0;

	memset(j, 0, sizeof(*j));
	for (i = 0; i < s->n && !j->sub; i++)
		if (policy_match(e->pol, s->patches[i], s->pw_project,
				 &j->sub)) {
			pt_error_clear();
			j->sub = NULL;
		}
	for (i = 0; i < s->n; i++) {
		j->author |= same_addr(s->patches[i]->author.email, m->from);
		if (policy_is_maintainer(e->pol, s->patches[i], m->from)) {
			j->maint = 1;
			j->why_maint = "MAINTAINERS";
		}
	}
	if (!j->maint && j->sub && j->sub->list_id && e->lk)
		rc = lookup_applies_on_list(e->lk, m->from, j->sub->list_id,
					    &yes);
	if (!rc && yes) {
		j->maint = 1;
		j->why_maint = "applies patches on the list";
	}
	return rc;
}

/* Whether cmd is allowed; *reason says why or why not (static text). */
static int allowed(unsigned cmd, const struct command_series *s,
		   const struct judge *j, const char **reason)
{
	if (!s->n) {
		*reason = "the series it answers is unknown";
		return 0;
	}
	if (cmd == CONTROL_MUTE_LIST) {
		if (!j->sub)
			*reason = "the series is in no configured subsystem";
		else if (!j->maint)
			*reason = "mute-list needs a maintainer of the "
				  "subsystem";
		else
			*reason = j->why_maint;
		return j->sub && j->maint;
	}
	if (j->author) {
		*reason = "the author of the series";
		return 1;
	}
	if (j->maint) {
		*reason = j->why_maint;
		return 1;
	}
	*reason = "neither an author of the series nor a maintainer of its "
		  "subsystem";
	return 0;
}

/*
 * What the bot had said on the series, for a "wrong": the reply of each
 * kind pinned in its slot (kv slot/KIND/KEY = "VERSION\tMSGID").
 */
static int said(struct db *db, const char *key, char **out)
{
	static const char *const kinds[] = { "risk", "stable" };
	struct buf b = BUF_INIT, k = BUF_INIT;
	char *v = NULL, *tab;
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < 2; i++) {
		buf_reset(&k);
		rc = buf_addf(&k, "slot/%s/%s", kinds[i], key);
		if (!rc)
			rc = db_kv_get(db, k.ptr, &v);
		if (rc == PT_ENOTFOUND) {
			pt_error_clear();
			rc = 0;
			continue;
		}
		tab = rc ? NULL : strchr(v, '\t');
		if (tab)
			*tab++ = '\0';
		if (!rc)
			rc = buf_addf(&b, "%s%s reply (model %s) on <%s>",
				      b.len ? "; " : "", kinds[i], v,
				      tab ? tab : "?");
		free(v);
		v = NULL;
	}
	if (!rc && !b.len)
		rc = buf_addf(&b, "no reply had been sent");
	*out = rc ? NULL : buf_detach(&b, NULL);
	buf_free(&b);
	buf_free(&k);
	return rc;
}

/*
 * A mute holds for the replies already waiting in the outbox too
 * (approval or embargo): they are dropped, and logged.
 */
static int drop_held(const struct command_env *e,
		     const struct command_series *s,
		     const struct control_row *r)
{
	struct buf note = BUF_INIT;
	size_t i;
	int rc, k, n = 0;

	rc = buf_addf(&note, "dropped: %s muted by %s",
		      r->cmd == CONTROL_MUTE ? "series" : "list", r->who);
	if (!rc && r->cmd == CONTROL_MUTE_LIST)
		rc = store_outbox_drop_waiting(e->db, NULL, r->subsystem,
					       note.ptr, &n);
	for (i = 0; !rc && r->cmd == CONTROL_MUTE && i < s->n; i++) {
		rc = store_outbox_drop_waiting(e->db, s->patches[i]->message_id,
					       NULL, note.ptr, &k);
		n += rc ? 0 : k;
	}
	if (!rc && n)
		log_info("%d held repl%s %s", n, n == 1 ? "y" : "ies",
			 note.ptr);
	buf_free(&note);
	return rc;
}

static int one_command(const struct command_env *e, const struct command_msg *m,
		       const struct command_series *s, const struct judge *j,
		       unsigned cmd, size_t *n)
{
	struct control_row r;
	char *detail = NULL;
	int seen = 0, rc;

	rc = control_seen(e->db, m->message_id, cmd, &seen);
	if (rc || seen)
		return rc;
	memset(&r, 0, sizeof(r));
	r.message_id = m->message_id;
	r.cmd = cmd;
	r.source = m->source;
	r.series_key = s->n ? s->key : NULL;
	r.subsystem = j->sub ? j->sub->name : NULL;
	r.conf_hash = j->sub ? j->sub->conf_hash : NULL;
	r.who = m->from;
	r.state = allowed(cmd, s, j, &r.reason) ? CONTROL_ACTED
						: CONTROL_IGNORED;
	if (cmd == CONTROL_WRONG && r.state == CONTROL_ACTED)
		rc = said(e->db, s->key, &detail);
	r.detail = detail;
	if (!rc)
		rc = control_record(e->db, &r);
	if (!rc && r.state == CONTROL_ACTED)
		log_info("command 'patchtriage: %s' from %s in <%s> (%s): "
			 "series <%s>%s%s, as %s",
			 control_name(cmd), m->from, m->message_id, m->source,
			 s->key, r.subsystem ? " in " : "",
			 r.subsystem ? r.subsystem : "", r.reason);
	else if (!rc)
		log_warn("command 'patchtriage: %s' from %s in <%s> (%s) "
			 "ignored: %s",
			 control_name(cmd), m->from ? m->from : "?",
			 m->message_id, m->source, r.reason);
	if (!rc && r.state == CONTROL_ACTED && cmd != CONTROL_WRONG)
		rc = drop_held(e, s, &r);
	if (!rc && n)
		(*n)++;
	free(detail);
	return rc;
}

/* Whether from is reply.from's address ("name <addr>" or "addr"). */
static int is_bot(const struct policy *pol, const char *from)
{
	const char *a = pol->from, *lt, *gt;
	size_t n;

	if (!a || !from)
		return 0;
	lt = strchr(a, '<');
	gt = lt ? strchr(lt, '>') : NULL;
	if (lt && gt) {
		a = lt + 1;
		n = (size_t)(gt - a);
	} else {
		n = strlen(a);
	}
	return strlen(from) == n && !strncasecmp(a, from, n);
}

int command_handle(const struct command_env *e, const struct command_msg *m,
		   const struct command_series *s, size_t *n)
{
	unsigned mask, bit;
	struct judge j;
	int rc;

	mask = m->text ? control_parse(m->text, strlen(m->text)) : 0;
	if (!mask || !m->message_id)
		return 0;
	if (is_bot(e->pol, m->from))
		return 0; /* the bot's own mail, read back from the list */
	rc = judge_sender(e, m, s, &j);
	for (bit = 1; !rc && bit <= CONTROL_ALL; bit <<= 1)
		if (mask & bit)
			rc = one_command(e, m, s, &j, bit, n);
	return rc;
}

int command_muted(struct db *db, const struct policy_subsys *s,
		  const char *series_key, char **who, const char **what)
{
	int rc;

	*who = NULL;
	*what = NULL;
	rc = control_series_muted(db, series_key, who);
	if (!rc && *who) {
		*what = "series";
		return 1;
	}
	if (!rc && s)
		rc = control_list_muted(db, s->name, s->conf_hash, who);
	if (!rc && *who) {
		*what = "list";
		return 1;
	}
	if (rc) { /* cannot tell: say muted, a reply can wait a pass */
		log_warn("mute state of <%s> unreadable: %s", series_key,
			 pt_error_last());
		pt_error_clear();
		*what = "unknown";
		return 1;
	}
	return 0;
}

int command_lift_stale(struct db *db, const struct policy *pol)
{
	size_t i;
	int rc = 0, n;

	for (i = 0; !rc && i < pol->n; i++) {
		rc = control_lift_stale(db, pol->s[i].name, pol->s[i].conf_hash,
					&n);
		if (!rc && n)
			log_info("subsystem '%s': its configuration changed, "
				 "%d mute-list%s lifted",
				 pol->s[i].name, n, n == 1 ? "" : "s");
	}
	return rc;
}
