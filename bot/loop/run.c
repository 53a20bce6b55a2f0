/*
 * run.c - the daemon's loop: see run.h.  This file owns the
 * configuration, the passes and their sources: Patchwork events and IMAP
 * folders only queue work, in the transaction that marks their input
 * handled.  The worker that claims queue items, scores the series they
 * name and hands the results to bot/loop/act.c is run_work.c's; what the
 * two share is in run_int.h.  Raw patch and cover mails read over IMAP
 * are kept in mail_raw (scoring/lists/lookup.h), since the mail path
 * scores from them.
 */
#include "bot/loop/run.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/lists/lookup.h"
#include "scoring/lists/thread.h"
#include "scoring/model/triage.h"
#include "bot/sys/daemon.h"
#include "bot/mail/imap.h"
#include "bot/sys/log.h"
#include "bot/patchwork/patchwork.h"
#include "bot/outbox/policy.h"
#include "bot/mail/smtp.h"
#include "bot/outbox/store.h"
#include "bot/loop/command.h"
#include "bot/loop/run_int.h"

#define RUN_MAIL_BATCH 500 /* mails per commit while reading a folder */

/* ---- configuration ------------------------------------------------- */

static void conf_clear(struct run_conf *c)
{
	policy_free(c->pol);
	pw_free(c->pw);
	config_strv_free(c->projects);
	free(c->since);
	if (c->have_imap)
		imap_opts_clear(&c->imap);
	if (c->have_smtp)
		smtp_opts_clear(&c->smtp);
	git_repository_free(c->repo);
	config_free(c->cfg);
	memset(c, 0, sizeof(*c));
}

static int strv_add_unique(char ***v, size_t *n, const char *s)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return 0;
	return config_strv_push(v, n, s);
}

/* patchwork.project and every subsystem's patchwork-project. */
static int conf_projects(struct run_conf *c, const char *main_project)
{
	size_t i, n = 0;
	int rc = 0;

	c->projects = pt_calloc(1, sizeof(char *));
	if (!c->projects)
		return PT_ENOMEM;
	if (main_project)
		rc = strv_add_unique(&c->projects, &n, main_project);
	for (i = 0; !rc && i < c->pol->n; i++)
		if (c->pol->s[i].pw_project)
			rc = strv_add_unique(&c->projects, &n,
					     c->pol->s[i].pw_project);
	if (!rc && !n)
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': patchwork.url is "
				  "set but no project is: set "
				  "patchwork.project or a subsystem's "
				  "patchwork-project",
				  config_path(c->cfg));
	return rc;
}

/*
 * run.since, else run.backlog-hours (default 0: now) before now, as
 * Patchwork dates: a first start takes no backlog unless asked to, from
 * Patchwork's events (conf_patchwork()) nor IMAP folders (conf_mail()).
 */
static int conf_since_text(struct run_conf *c)
{
	char tmp[32];
	long hours;
	time_t t;
	struct tm tm;
	int rc;

	rc = config_get_string(c->cfg, "run.since", NULL, &c->since);
	if (rc || c->since)
		return rc;
	rc = config_get_int(c->cfg, "run.backlog-hours", 0, &hours);
	if (rc)
		return rc;
	if (hours < 0)
		return pt_error_set(PT_EINVAL,
				    "config '%s': run.backlog-hours "
				    "must not be negative",
				    config_path(c->cfg));
	t = time(NULL) - (time_t)hours * 3600;
	gmtime_r(&t, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	c->since = pt_strdup(tmp);
	return c->since ? 0 : PT_ENOMEM;
}

/* c->since, and as seconds (since_secs) for a first IMAP sync. */
static int conf_since(struct run_conf *c)
{
	int rc = conf_since_text(c);

	if (!rc && pw_parse_date(c->since, &c->since_secs, NULL))
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': run.since '%s' is not a "
				  "date: give YYYY-MM-DDTHH:MM:SS (UTC)",
				  config_path(c->cfg), c->since);
	return rc;
}

static int conf_patchwork(struct run_conf *c)
{
	char *url = NULL, *project = NULL;
	int insecure = 0, rc;

	rc = config_get_string(c->cfg, "patchwork.url", NULL, &url);
	if (rc || !url)
		return rc;
	free(url);
	rc = pw_from_config(&c->pw, c->cfg, NULL, &project, &insecure);
	if (!rc && insecure)
		log_warn("patchwork.ssl-verify is false: the server's "
			 "certificate is not checked");
	if (!rc)
		rc = conf_projects(c, project);
	free(project);
	return rc;
}

static int conf_mail(struct run_conf *c)
{
	char *url = NULL;
	int rc;

	rc = config_get_string(c->cfg, "imap.url", NULL, &url);
	if (!rc && url) {
		rc = imap_opts_from_config(&c->imap, c->cfg);
		c->have_imap = !rc;
		if (!rc)
			log_register_secret(c->imap.password);
		c->imap.first_since = c->since_secs; /* a folder's first sync */
	}
	free(url);
	url = NULL;
	if (!rc)
		rc = config_get_string(c->cfg, "smtp.url", NULL, &url);
	if (!rc && url) {
		rc = smtp_opts_from_config(&c->smtp, c->cfg);
		c->have_smtp = !rc;
		if (!rc)
			log_register_secret(c->smtp.password);
		if (!rc) /* a pass's replies on one connection */
			rc = smtp_keep_open(&c->smtp);
	}
	free(url);
	return rc;
}

static int conf_repo(struct run_conf *c)
{
	char *path = NULL;
	int rc;

	rc = config_get_string(c->cfg, "run.repo", NULL, &path);
	if (!rc && path && git_repository_open(&c->repo, path))
		rc = pt_error_set(PT_ENOTFOUND,
				  "config '%s': run.repo '%s' "
				  "is not a git repository: %s",
				  config_path(c->cfg), path,
				  git_error_last() ? git_error_last()->message
						   : "?");
	free(path);
	return rc;
}

/* What reading the configuration and its secrets found to warn about. */
static void conf_warnings(const struct run_conf *c)
{
	const char *const *w;

	for (w = config_warnings(c->cfg); *w; w++)
		log_warn("config '%s': %s", config_path(c->cfg), *w);
}

/*
 * reply.max-age (3) and check.max-age (14), in days, as seconds;
 * run.series-wait in seconds (30 minutes, at most a week).
 */
static int conf_ages(struct run_conf *c)
{
	long reply = 3, check = 14, wait = 1800;
	int rc;

	rc = config_get_int_range(c->cfg, "reply.max-age", 3, 1, 36500, &reply);
	if (!rc)
		rc = config_get_int_range(c->cfg, "check.max-age", 14, 1, 36500,
					  &check);
	if (!rc)
		rc = config_get_int_range(c->cfg, "run.series-wait", 1800, 1,
					  7 * 86400L, &wait);
	c->reply_max_age = (int64_t)reply * 86400;
	c->check_max_age = (int64_t)check * 86400;
	c->series_wait = wait;
	return rc;
}

static int conf_load(struct run_conf *c, const char *path)
{
	int rc;

	memset(c, 0, sizeof(*c));
	rc = config_open(&c->cfg, path);
	if (!rc)
		rc = policy_load(&c->pol, c->cfg);
	if (!rc)
		rc = conf_since(c);
	if (!rc)
		rc = conf_patchwork(c);
	if (!rc)
		rc = conf_mail(c);
	if (!rc)
		rc = conf_repo(c);
	if (!rc)
		rc = conf_ages(c);
	if (!rc)
		rc = config_get_int(c->cfg, "run.poll-interval", 60,
				    &c->poll_interval);
	if (!rc)
		rc = config_get_int(c->cfg, "run.max-attempts", 5,
				    &c->max_attempts);
	if (!rc && (c->poll_interval < 1 || c->max_attempts < 1))
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': run.poll-interval "
				  "and run.max-attempts must be positive",
				  config_path(c->cfg));
	if (!rc && !c->pw && !c->have_imap)
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': neither "
				  "patchwork.url nor imap.url is set: the bot "
				  "has nothing to read",
				  config_path(c->cfg));
	if (rc)
		conf_clear(c);
	else
		conf_warnings(c);
	return rc;
}

static void act_bind(struct run *r)
{
	r->act.db = r->db;
	r->act.pw = r->c.pw;
	r->act.pol = r->c.pol;
	r->act.smtp = r->c.have_smtp ? &r->c.smtp : NULL;
	r->act.lk = r->lk;
	r->act.dry_run = r->o.dry_run;
	r->act.report = r->o.report;
	r->act.report_ctx = r->o.report_ctx;
}

int run_open(struct run **out, const char *config_path, struct db *db,
	     const char *state_dir, const struct run_opts *o)
{
	struct run *r;
	char *lex = NULL;
	int rc;

	*out = NULL;
	git_libgit2_init();
	r = pt_calloc(1, sizeof(*r));
	if (!r)
		return PT_ENOMEM;
	r->db = db;
	r->o = *o;
	r->config_path = pt_strdup(config_path);
	r->state_dir = pt_strdup(state_dir);
	rc = r->config_path && r->state_dir ? 0 : PT_ENOMEM;
	if (!rc)
		rc = conf_load(&r->c, config_path);
	if (!rc)
		rc = triage_open(&r->tri, db, state_dir);
	if (rc == PT_ENOTFOUND)
		rc = pt_error_wrap(rc, "run 'patchtriage train' first");
	if (!rc)
		rc = config_get_string(r->c.cfg, "mail.sentiment-file", NULL,
				       &lex);
	if (!rc)
		rc = thread_open(&r->th, db, lex);
	if (!rc)
		rc = lookup_new(&r->lk, db);
	if (!rc)
		rc = command_lift_stale(db, r->c.pol);
	free(lex);
	if (rc) {
		run_free(r);
		return rc;
	}
	act_bind(r);
	*out = r;
	return 0;
}

void run_free(struct run *r)
{
	if (!r)
		return;
	imap_free(r->is);
	lookup_free(r->lk);
	thread_free(r->th);
	triage_free(r->tri);
	act_clear(&r->act);
	conf_clear(&r->c);
	free(r->config_path);
	free(r->state_dir);
	free(r);
	git_libgit2_shutdown();
}

int run_reload(struct run *r)
{
	struct run_conf c;
	int rc = conf_load(&c, r->config_path);

	if (!rc)
		rc = command_lift_stale(r->db, c.pol);
	if (rc) {
		if (c.cfg)
			conf_clear(&c);
		return rc;
	}
	imap_free(r->is); /* folders or account may have changed */
	r->is = NULL;
	r->imap_next_try = 0;
	conf_clear(&r->c);
	r->c = c;
	act_bind(r);
	log_info("configuration '%s' reloaded: %zu subsystems", r->config_path,
		 r->c.pol->n);
	return 0;
}

void run_get_stats(const struct run *r, struct run_stats *out)
{
	*out = r->st;
	out->act = r->act.st;
}

/* A source failed: count it and keep its message for run_loop's return. */
static void source_error(struct run *r, int rc)
{
	r->st.source_errors++;
	r->last_source_rc = rc;
	act_note_auth(&r->act.st, rc);
	snprintf(r->last_error, sizeof(r->last_error), "%s", pt_error_last());
}

/* ---- Patchwork events in ----------------------------------------- */

struct poll_ctx {
	struct run *r;
	const char *project;
};

static int on_event(const struct pw_event *ev, void *ctx)
{
	struct poll_ctx *pc = ctx;
	struct buf key = BUF_INIT;
	const char *kind = NULL;
	int64_t id = 0;
	int rc;

	if (!strcmp(ev->category, "series-completed")) {
		kind = "pw-series";
		id = ev->series_id;
	} else if (!strcmp(ev->category, "patch-comment-created")) {
		kind = "pw-patch";
		id = ev->patch_id;
	} else if (!strcmp(ev->category, "cover-comment-created")) {
		kind = "pw-cover";
		id = ev->cover_id;
	}
	pc->r->st.events++;
	if (!strcmp(ev->category, "patch-created") && ev->patch_id > 0)
		return run_queue_series_wait(pc->r, pc->project, ev->patch_id,
					     ev->time);
	if (!kind || id <= 0)
		return 0;
	rc = buf_addf(&key, "%s/%lld", pc->project, (long long)id);
	if (!rc)
		rc = store_enqueue(pc->r->db, kind, key.ptr, NULL);
	if (!rc)
		rc = run_queue_comment(pc->r, pc->project, ev);
	buf_free(&key);
	return rc;
}

static int poll_patchwork(struct run *r)
{
	struct poll_ctx pc = { r, NULL };
	size_t i, handled;
	int rc = 0, first = 0;

	for (i = 0; r->c.projects[i]; i++) {
		pc.project = r->c.projects[i];
		handled = 0;
		rc = pw_events_poll(r->c.pw, r->db, pc.project, r->c.since,
				    on_event, &pc, &handled);
		if (rc) {
			source_error(r, rc);
			log_warn("patchwork: project '%s': %s", pc.project,
				 pt_error_last());
			first = first ? first : rc;
		} else if (handled) {
			log_info("patchwork: project '%s': %zu new events",
				 pc.project, handled);
		}
	}
	return first;
}

/* ---- mail in ------------------------------------------------------ */

/* After threading: keep patch and cover mails, queue complete series. */
static int after_mail(struct run *r, const char *msgid, const char *raw,
		      size_t len)
{
	char key[32];
	int64_t sid = 0;
	int rc, done = 0, keep = 0;

	rc = lookup_message(r->lk, msgid, &keep, &sid, &done);
	if (rc)
		return rc;
	if (keep)
		rc = lookup_keep_raw(r->lk, msgid, raw, len, time(NULL));
	if (!rc && sid > 0 && done) {
		snprintf(key, sizeof(key), "%lld", (long long)sid);
		rc = store_enqueue(r->db, "mail-series", key, NULL);
	}
	return rc;
}

static int on_mail(const char *folder, uint32_t uid, const char *msg,
		   size_t len, void *ctx)
{
	struct run *r = ctx;
	struct thread_result res;
	int rc, own;

	rc = thread_add_mail(r->th, msg, len, folder, &res);
	if (rc) {
		/* a message we cannot parse must not stop the folder */
		log_warn("imap: folder '%s' uid %u: %s; skipped", folder, uid,
			 pt_error_last());
		return 0;
	}
	r->st.mails++;
	rc = db_savepoint(r->db, "mail", &own);
	if (!rc)
		rc = db_release(r->db, "mail", own,
				after_mail(r, res.message_id, msg, len));
	if (!rc)
		rc = run_mail_command(r, &res, msg, len);
	thread_result_clear(&res);
	/* the folder's transaction, committed every RUN_MAIL_BATCH mails */
	if (!rc && ++r->batch >= RUN_MAIL_BATCH) {
		r->batch = 0;
		rc = db_commit(r->db);
		if (!rc)
			rc = db_begin(r->db);
	}
	return rc;
}

/*
 * One folder in one transaction (committed in batches by on_mail): the
 * threading, the raw mail, the queue and the folder's last UID of each
 * message commit together, and a few commits serve thousands of mails.
 * What was handled before a failure is kept.
 */
static int sync_folder(struct run *r, const char *folder, struct imap_stats *st)
{
	int rc = db_begin(r->db), crc;

	if (rc)
		return rc;
	r->batch = 0;
	rc = imap_sync_folder(r->is, r->db, folder, on_mail, r, st);
	crc = db_commit(r->db);
	if (crc)
		db_rollback(r->db);
	return rc ? rc : crc;
}

static void imap_down(struct run *r, int rc)
{
	long max = r->c.imap.backoff_max > 0 ? r->c.imap.backoff_max : 300;

	source_error(r, rc);
	log_warn("imap: %s; reconnecting in %lds", pt_error_last(),
		 r->imap_backoff ? r->imap_backoff : 1);
	imap_free(r->is);
	r->is = NULL;
	r->imap_backoff = r->imap_backoff ? r->imap_backoff * 2 : 1;
	if (r->imap_backoff > max)
		r->imap_backoff = max;
	r->imap_next_try = time(NULL) + r->imap_backoff;
}

static int poll_imap(struct run *r)
{
	struct imap_stats st = { 0 };
	size_t i;
	int rc = 0, missing = 0;

	if (!r->is) {
		if (time(NULL) < r->imap_next_try)
			return 0;
		rc = imap_connect(&r->is, &r->c.imap);
		if (rc) {
			imap_down(r, rc);
			return rc;
		}
	}
	for (i = 0; !rc && r->c.imap.folders[i]; i++) {
		rc = sync_folder(r, r->c.imap.folders[i], &st);
		if (rc == PT_ENOTFOUND) { /* one folder missing: the others */
			source_error(r, rc);
			log_warn("imap: %s", pt_error_last());
			missing = rc;
			rc = 0;
		}
	}
	if (rc) {
		imap_down(r, rc);
		return rc;
	}
	r->imap_backoff = 0;
	if (st.old) /* a first sync: the backlog is not read */
		log_info("imap: %zu messages older than run.since left on "
			 "first syncs",
			 st.old);
	if (st.fetched)
		log_info("imap: %zu new messages (%zu skipped, %zu resyncs)",
			 st.fetched, st.skipped, st.resyncs);
	return missing;
}

/* ---- the loop ------------------------------------------------------ */

static int stopping(int (*stop)(void))
{
	return daemon_should_stop() || (stop && stop());
}

static void wait_next(struct run *r, int (*stop)(void))
{
	long ms = r->c.poll_interval * 1000, step;
	int changed = 0;

	if (r->is && imap_has_idle(r->is)) {
		if (imap_wait(r->is, r->c.poll_interval, daemon_should_stop,
			      &changed))
			imap_down(r, pt_error_last_code());
		return;
	}
	for (; ms > 0 && !stopping(stop); ms -= step) {
		step = ms < 200 ? ms : 200;
		daemon_sleep_ms(step);
	}
}

static int start(struct run *r)
{
	int recovered = 0, rc;

	rc = store_recover(r->db, &recovered);
	if (!rc && recovered)
		log_info("%d work items left running by a crash are pending "
			 "again",
			 recovered);
	if (!rc)
		rc = act_flush(&r->act);
	return rc;
}

/* Add what this pass skipped for age to the state's totals (status). */
static int note_old(struct run *r)
{
	static const char *const keys[2] = { "run/old-checks",
					     "run/old-replies" };
	const size_t now[2] = { r->st.old_checks, r->st.old_replies };
	char *v = NULL, tmp[32];
	long long total;
	int i, rc = 0;

	for (i = 0; !rc && i < 2; i++) {
		if (now[i] == r->old_noted[i])
			continue;
		rc = db_kv_get(r->db, keys[i], &v);
		if (rc == PT_ENOTFOUND) {
			pt_error_clear();
			rc = 0;
		}
		total = v ? strtoll(v, NULL, 10) : 0;
		free(v);
		v = NULL;
		total += (long long)(now[i] - r->old_noted[i]);
		snprintf(tmp, sizeof(tmp), "%lld", total);
		if (!rc)
			rc = db_kv_set(r->db, keys[i], tmp);
		if (!rc)
			r->old_noted[i] = now[i];
	}
	return rc;
}

static int mark_pass(struct run *r)
{
	int rc;
	char tmp[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	rc = note_old(r);
	return rc ? rc : db_kv_set(r->db, "run/last-pass", tmp);
}

static void reload_if_asked(struct run *r)
{
	if (!daemon_take_reload())
		return;
	if (run_reload(r))
		log_error("reload of '%s' failed, the old configuration stays:"
			  " %s",
			  r->config_path, pt_error_last());
}

/*
 * A pass of --once fails when credentials were refused anywhere (the
 * Patchwork token, the SMTP or IMAP login), when a source could not be
 * read (src, its error), or when a kind of action was tried and none of
 * it succeeded: the user must not read exit status 0 after a run in
 * which the token was revoked or every reply failed its certificate
 * check.
 */
static int once_verdict(const struct run *r, int src)
{
	const struct act_stats *a = &r->act.st;

	if (a->auth_failed)
		return pt_error_set(PT_EAUTH,
				    "authentication refused (%zu times), "
				    "the last: %s",
				    a->auth_failed, a->auth_error);
	if (src) /* a source failed: say which */
		return pt_error_set(src, "%s", r->last_error);
	if (a->replies_failed && !a->replies_sent)
		return pt_error_set(PT_ENET,
				    "no reply went out: all %zu attempts "
				    "failed, the last with: %s",
				    a->replies_failed, a->reply_error);
	if (a->checks_failed && !a->checks_posted && !a->checks_reconciled)
		return pt_error_set(PT_ENET,
				    "no check was set: all %zu attempts "
				    "failed, the last with: %s",
				    a->checks_failed, a->check_error);
	if (r->st.work_failed && !r->st.work_done)
		return pt_error_set(PT_ERROR,
				    "no work item was finished: all %zu "
				    "failed, the last with: %s",
				    r->st.work_failed, r->work_error);
	return 0;
}

int run_loop(struct run *r, int (*stop)(void))
{
	time_t t0 = time(NULL);
	size_t events;
	int rc, src;

	rc = start(r);
	while (!rc) {
		r->last_source_rc = 0;
		events = r->st.events;
		if (r->c.pw)
			poll_patchwork(r);
		if (r->c.have_imap && !stopping(stop))
			poll_imap(r);
		src = r->last_source_rc;
		rc = run_drain(r, stop);
		if (!rc)
			rc = act_release(&r->act);
		if (!rc)
			rc = act_flush(&r->act);
		if (r->c.have_smtp)
			smtp_close(&r->c.smtp); /* idle until the next pass */
		if (!rc)
			rc = mark_pass(r);
		if (!rc && r->o.once)
			rc = once_verdict(r, src);
		if (rc || r->o.once || stopping(stop))
			return rc;
		if (r->o.run_for && time(NULL) - t0 >= r->o.run_for)
			return 0;
		/*
		 * Events came: more may be on the way (a burst), poll again
		 * at once.  Not after a source failed: an event whose
		 * handling failed is counted and read again, and polling
		 * at once would hammer the server until the fault goes.
		 */
		if (r->st.events == events || src)
			wait_next(r, stop);
		reload_if_asked(r);
	}
	return rc;
}
