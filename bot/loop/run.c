/*
 * run.c - the daemon's loop: see run.h.  Sources (Patchwork events,
 * IMAP folders) only queue work, in the transaction that marks their
 * input handled; the worker claims queue items, scores the series they
 * name and hands the results to bot/loop/act.c.  Queue kinds: "pw-series"
 * (key "PROJECT/ID"), "pw-patch" (a comment on patch ID: re-score its
 * series) and "mail-series" (key: the thread's series id).  Raw patch
 * and cover mails read over IMAP are kept in mail_raw, since the mail
 * path scores from them.
 */
#include "bot/loop/run.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "scoring/stable/stable.h"
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

#define RUN_MAX_REASONS 5
#define RUN_DRAIN_MAX 100000  /* work items per pass (bounded) */
#define RUN_MAIL_BATCH 500    /* mails per commit while reading a folder */

/* What the configuration file gives; swapped whole on reload. */
struct run_conf {
	struct config *cfg;
	struct policy *pol;
	struct pw *pw;
	char **projects;        /* NULL-terminated */
	char *since;            /* first poll of a project */
	int have_imap;
	struct imap_opts imap;
	int have_smtp;
	struct smtp_opts smtp;
	git_repository *repo;   /* run.repo, for blame; may be NULL */
	long poll_interval, max_attempts;
};

struct run {
	char *config_path;
	char *state_dir;
	struct db *db;
	struct run_opts o;
	struct run_conf c;
	struct triage *tri;
	struct thread *th;
	struct imap *is;
	long imap_backoff;
	int64_t imap_next_try;
	int last_source_rc;
	char last_error[512];   /* message of last_source_rc */
	size_t batch;           /* mails in the open folder transaction */
	struct lookup *lk;      /* what the loop asks of the threading */
	struct run_stats st;
	struct act act;
};

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
		rc = pt_error_set(PT_EINVAL, "config '%s': patchwork.url is "
				  "set but no project is: set "
				  "patchwork.project or a subsystem's "
				  "patchwork-project",
				  config_path(c->cfg));
	return rc;
}

/* run.since, else run.backlog-hours (24) before now, as Patchwork dates. */
static int conf_since(struct run_conf *c)
{
	char tmp[32];
	long hours;
	time_t t;
	struct tm tm;
	int rc;

	rc = config_get_string(c->cfg, "run.since", NULL, &c->since);
	if (rc || c->since)
		return rc;
	rc = config_get_int(c->cfg, "run.backlog-hours", 24, &hours);
	if (rc)
		return rc;
	if (hours < 0)
		return pt_error_set(PT_EINVAL, "config '%s': run.backlog-hours "
				    "must not be negative",
				    config_path(c->cfg));
	t = time(NULL) - (time_t)hours * 3600;
	gmtime_r(&t, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	c->since = pt_strdup(tmp);
	return c->since ? 0 : PT_ENOMEM;
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
	if (!rc)
		rc = conf_since(c);
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
		rc = pt_error_set(PT_ENOTFOUND, "config '%s': run.repo '%s' "
				  "is not a git repository: %s",
				  config_path(c->cfg), path,
				  git_error_last() ? git_error_last()->message
						   : "?");
	free(path);
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
		rc = conf_patchwork(c);
	if (!rc)
		rc = conf_mail(c);
	if (!rc)
		rc = conf_repo(c);
	if (!rc)
		rc = config_get_int(c->cfg, "run.poll-interval", 60,
				    &c->poll_interval);
	if (!rc)
		rc = config_get_int(c->cfg, "run.max-attempts", 5,
				    &c->max_attempts);
	if (!rc && (c->poll_interval < 1 || c->max_attempts < 1))
		rc = pt_error_set(PT_EINVAL, "config '%s': run.poll-interval "
				  "and run.max-attempts must be positive",
				  config_path(c->cfg));
	if (!rc && !c->pw && !c->have_imap)
		rc = pt_error_set(PT_EINVAL, "config '%s': neither "
				  "patchwork.url nor imap.url is set: the bot "
				  "has nothing to read",
				  config_path(c->cfg));
	if (rc)
		conf_clear(c);
	return rc;
}

static void act_bind(struct run *r)
{
	r->act.db = r->db;
	r->act.pw = r->c.pw;
	r->act.pol = r->c.pol;
	r->act.smtp = r->c.have_smtp ? &r->c.smtp : NULL;
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

	if (rc)
		return rc;
	imap_free(r->is); /* folders or account may have changed */
	r->is = NULL;
	r->imap_next_try = 0;
	conf_clear(&r->c);
	r->c = c;
	act_bind(r);
	log_info("configuration '%s' reloaded: %zu subsystems",
		 r->config_path, r->c.pol->n);
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
	snprintf(r->last_error, sizeof(r->last_error), "%s", pt_error_last());
}

/* ---- scoring ------------------------------------------------------- */

struct scored {
	struct patch *p;        /* owned when own */
	int own;
	int64_t pw_id;          /* 0: not from Patchwork */
	const struct policy_subsys *sub;
	struct triage_result res;
	struct reply_reason why[TRIAGE_NTASKS][RUN_MAX_REASONS];
	size_t nwhy[TRIAGE_NTASKS];
	char review[160];
	char *fixes;            /* suggested Fixes: line, or NULL */
};

static void scored_clear(struct scored *s)
{
	triage_result_clear(&s->res);
	if (s->own)
		patch_free(s->p);
	free(s->fixes);
	memset(s, 0, sizeof(*s));
}

static void review_text(char *out, size_t n, const struct thread_features *tf,
			const struct patch *p)
{
	unsigned rb = patch_count_trailers(p, TRAILER_REVIEWED);
	unsigned tb = patch_count_trailers(p, TRAILER_TESTED);

	if (!tf) {
		snprintf(out, n, "%u Reviewed-by, %u Tested-by", rb, tb);
		return;
	}
	snprintf(out, n, "%u replies from %u reviewers, %u Reviewed-by, "
		 "%u Tested-by", tf->replies, tf->reviewers, rb, tb);
}

/* What the list said of the patch, when the mail thread knows it. */
static int thread_of(struct run *r, const struct patch *p, int64_t *tpid,
		     struct thread_features *tf)
{
	int64_t sid;
	int rc;

	*tpid = 0;
	if (!p->message_id)
		return PT_ENOTFOUND;
	rc = thread_find_patch(r->th, p->message_id, tpid, &sid);
	if (rc) {
		pt_error_clear();
		return PT_ENOTFOUND;
	}
	return thread_patch_features(r->th, *tpid, tf);
}

static enum trailer_kind review_kind(const char *k)
{
	if (!strcasecmp(k, "Reviewed-by"))
		return TRAILER_REVIEWED;
	if (!strcasecmp(k, "Acked-by"))
		return TRAILER_ACKED;
	if (!strcasecmp(k, "Tested-by"))
		return TRAILER_TESTED;
	if (!strcasecmp(k, "Reported-by"))
		return TRAILER_REPORTED;
	return TRAILER_OTHER;
}

static int add_trailer(struct patch *p, const char *key, const char *name,
		       const char *email)
{
	struct trailer *t, *v;
	size_t i;

	for (i = 0; i < p->ntrailers; i++)
		if (p->trailers[i].email && email &&
		    !strcasecmp(p->trailers[i].key, key) &&
		    !strcasecmp(p->trailers[i].email, email))
			return 0; /* already in the patch */
	v = realloc(p->trailers, (p->ntrailers + 1) * sizeof(*v));
	if (!v)
		return PT_ENOMEM;
	p->trailers = v;
	t = &v[p->ntrailers];
	memset(t, 0, sizeof(*t));
	t->kind = review_kind(key);
	t->key = pt_strdup(key);
	t->name = name ? pt_strdup(name) : NULL;
	t->email = email ? pt_strdup(email) : NULL;
	t->value = pt_strdup(email ? email : "");
	p->ntrailers++;
	return t->key && t->value ? 0 : PT_ENOMEM;
}

/*
 * Trailers given on the list (on the patch or, for the whole series, on
 * its cover letter) join the patch's own, as maintainers' tools apply
 * them, so that the review features see them.
 */
static int add_list_review(const char *kind, const char *name,
			   const char *email, void *ctx)
{
	return add_trailer(ctx, kind, name, email);
}

static int merge_list_reviews(struct run *r, struct patch *p, int64_t tpid)
{
	return lookup_list_reviews(r->lk, tpid, add_list_review, p);
}

/*
 * Whether a reason is a bare function word of the text model ("subject
 * says 'in'"): it weighs in the score, but says nothing to a maintainer,
 * so replies and check descriptions leave it out (explain lists it).
 */
static int filler_reason(const char *text)
{
	static const char *const words[] = {
		"a", "an", "and", "are", "as", "at", "be", "by", "for", "from",
		"has", "in", "into", "is", "it", "of", "on", "or", "that",
		"the", "this", "to", "was", "when", "with", "after", "before",
		"not", "no", "we", "if", "so", "but", "can", "its", "which",
	};
	const char *q = strstr(text, " says '");
	size_t i, n;

	if (!q)
		return 0;
	q += 7;
	n = strcspn(q, "'");
	if (q[n] != '\'' || q[n + 1])
		return 0;
	for (i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (strlen(words[i]) == n && !strncmp(q, words[i], n))
			return 1;
	return 0;
}

/* The strongest reasons in words, fillers left out, for task k. */
static void fill_reasons(struct scored *s)
{
	size_t i, m;
	int k;

	for (k = 0; k < TRIAGE_NTASKS; k++) {
		struct triage_score *t = &s->res.task[k];

		for (i = m = 0; i < t->nwhy && m < RUN_MAX_REASONS; i++) {
			if (filler_reason(t->why[i].text))
				continue;
			s->why[k][m].text = t->why[i].text;
			s->why[k][m].direction = t->why[i].weight >= 0
							 ? "raises" : "lowers";
			m++;
		}
		s->nwhy[k] = m;
	}
}

/* Score one patch: thread features, list reviews, the models. */
static int score_patch(struct run *r, struct scored *s, const char *project)
{
	struct thread_features tf;
	int64_t tpid = 0;
	int have_tf, rc = 0;

	memset(&tf, 0, sizeof(tf));
	have_tf = !thread_of(r, s->p, &tpid, &tf);
	pt_error_clear();
	if (have_tf)
		rc = merge_list_reviews(r, s->p, tpid);
	if (!rc)
		rc = triage_score(&s->res, r->tri, s->p, have_tf ? &tf : NULL);
	if (rc)
		return rc;
	review_text(s->review, sizeof(s->review), have_tf ? &tf : NULL, s->p);
	fill_reasons(s);
	if (policy_match(r->c.pol, s->p, project, &s->sub)) {
		pt_error_clear();
		s->sub = NULL;
	}
	r->st.patches_scored++;
	return 0;
}

/* "p(bug) 0.42 (model risk-...): reason; reason; reason" */
static int describe(struct buf *b, const struct scored *s,
		    enum triage_task k, const char *what)
{
	const struct triage_score *t = &s->res.task[k];
	size_t i;
	int rc;

	rc = buf_addf(b, "%s %.2f (model %s)", what, t->p, t->version);
	for (i = 0; !rc && i < s->nwhy[k] && i < 3; i++)
		rc = buf_addf(b, "%s%s", i ? "; " : ": ", s->why[k][i].text);
	return rc;
}

static int suggest_fixes(struct run *r, struct scored *s)
{
	int rc;

	/* with Fixes: or Cc: stable neither the check nor the note asks */
	if (!r->c.repo || patch_is_tagged_fix(s->p))
		return 0;
	rc = stable_suggest_fixes(&s->fixes, r->c.repo, s->p, NULL);
	if (rc == PT_ENOTFOUND || rc == PT_EINVAL) {
		pt_error_clear();
		rc = 0;
	}
	return rc;
}

static int patch_checks(struct run *r, struct scored *s, const char *project)
{
	const struct policy_subsys *sub = s->sub;
	struct buf d = BUF_INIT;
	int rc = 0;

	if (!sub || !(sub->actions & POLICY_CHECK) || !s->pw_id)
		return 0;
	if (s->res.task[TRIAGE_RISK].have) {
		rc = describe(&d, s, TRIAGE_RISK, "p(bug)");
		if (!rc)
			rc = act_check(&r->act, sub, project, s->pw_id,
				       "patchtriage-risk",
				       s->res.task[TRIAGE_RISK].p >=
						       sub->risk_threshold
					       ? "warning" : "success",
				       d.ptr);
	}
	buf_reset(&d);
	if (!rc && s->res.task[TRIAGE_FIX].have &&
	    s->res.task[TRIAGE_FIX].p >= sub->stable_threshold &&
	    !patch_is_tagged_fix(s->p)) {
		rc = describe(&d, s, TRIAGE_FIX, "untagged fix? p(fix)");
		if (!rc && s->fixes)
			rc = buf_addf(&d, "; consider Cc: stable and %s",
				      s->fixes);
		else if (!rc)
			rc = buf_addstr(&d, "; consider Cc: stable and Fixes:");
		if (!rc)
			rc = act_check(&r->act, sub, project, s->pw_id,
				       "patchtriage-stable", "warning", d.ptr);
	}
	buf_free(&d);
	return rc;
}

static int series_replies(struct run *r, struct scored *s, size_t n,
			  const char *key, const char *project)
{
	static const char *const kinds[TRIAGE_NTASKS] = { "stable", "risk" };
	struct act_candidate *c;
	enum reply_status st;
	size_t i, m;
	int k, rc = 0, limited = 0;

	c = pt_calloc(n ? n : 1, sizeof(*c));
	if (!c)
		return PT_ENOMEM;
	for (k = 0; !rc && k < TRIAGE_NTASKS; k++) {
		for (i = m = 0; i < n; i++) {
			if (!s[i].res.task[k].have || !s[i].p->message_id)
				continue;
			c[m].p = s[i].p;
			c[m].in.kind = kinds[k];
			c[m].in.probability = s[i].res.task[k].p;
			c[m].in.model_version = s[i].res.task[k].version;
			c[m].in.reasons = s[i].why[k];
			c[m].in.nreasons = s[i].nwhy[k];
			c[m].in.review = s[i].review;
			c[m].in.pw_project = project;
			c[m].in.suggested_fixes = s[i].fixes;
			m++;
		}
		rc = act_reply(&r->act, key, kinds[k], c, m, &st);
		limited |= !rc && st == REPLY_RATE_LIMITED;
	}
	free(c);
	return rc ? rc : limited ? PT_EAGAIN : 0;
}

/* Checks per patch, then the series' replies. */
static int act_on_series(struct run *r, struct scored *s, size_t n,
			 const char *key, const char *project)
{
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < n; i++)
		if (s[i].sub && s[i].res.task[TRIAGE_FIX].have &&
		    s[i].res.task[TRIAGE_FIX].p >= s[i].sub->stable_threshold)
			rc = suggest_fixes(r, &s[i]);
	for (i = 0; !rc && i < n; i++)
		rc = patch_checks(r, &s[i], project);
	if (!rc)
		rc = series_replies(r, s, n, key, project);
	if (!rc || rc == PT_EAGAIN)
		r->st.series_scored++;
	return rc;
}

/* ---- the Patchwork path -------------------------------------------- */

static char *strip_angles(const char *id)
{
	size_t n;

	if (!id)
		return NULL;
	n = strlen(id);
	if (n >= 2 && id[0] == '<' && id[n - 1] == '>')
		return pt_strndup(id + 1, n - 2);
	return pt_strdup(id);
}

/* The series' first message: the cover letter, else the first patch. */
static char *pw_series_key(const struct pw_series *s)
{
	const char *id = NULL;

	if (s->cover)
		id = json_string_value(json_object_get(s->cover, "msgid"));
	if (!id && s->npatches && s->patches[0].parsed)
		return pt_strdup(s->patches[0].parsed->message_id);
	return strip_angles(id);
}

/* "PROJECT/ID", fresh; NULL when out of memory. */
static char *work_key(const char *project, int64_t id)
{
	struct buf b = BUF_INIT;

	if (buf_addf(&b, "%s/%lld", project, (long long)id)) {
		buf_free(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/*
 * Queued comments on the series' patches and cover letter need no re-score
 * of their own: they were on the server when the series was read (the
 * loop polls only between work items), so its mbox had their trailers.
 */
static int skip_comment_work(struct run *r, const struct pw_series *ps,
			     const char *project)
{
	json_int_t cover = json_integer_value(json_object_get(ps->cover, "id"));
	char **keys, *ck = NULL;
	size_t i, n = 0;
	int rc = 0, own;

	keys = pt_calloc(ps->npatches + 1, sizeof(*keys));
	if (!keys)
		return PT_ENOMEM;
	for (i = 0; !rc && i < ps->npatches; i++) {
		keys[n] = work_key(project, ps->patches[i].id);
		rc = keys[n++] ? 0 : PT_ENOMEM;
	}
	if (!rc && cover > 0) {
		ck = work_key(project, cover);
		rc = ck ? 0 : PT_ENOMEM;
	}
	if (!rc)
		rc = db_savepoint(r->db, "skip_comments", &own);
	if (!rc) {
		int wrc = store_skip(r->db, "pw-patch",
				     (const char *const *)keys, n);

		if (!wrc && ck)
			wrc = store_skip(r->db, "pw-cover",
					 (const char *const *)&ck, 1);
		rc = db_release(r->db, "skip_comments", own, wrc);
	}
	for (i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	free(ck);
	return rc;
}

static int work_pw_series(struct run *r, const char *project, int64_t id)
{
	struct pw_series *ps = NULL;
	struct scored *s = NULL;
	char *key = NULL;
	size_t i, n = 0;
	int rc;

	rc = pw_series_fetch_mails(r->c.pw, id, &ps);
	if (rc)
		return rc;
	if (!json_is_true(json_object_get(ps->json, "received_all"))) {
		log_debug("series %lld of %s is not complete yet",
			  (long long)id, project);
		goto out;
	}
	key = pw_series_key(ps);
	s = pt_calloc(ps->npatches ? ps->npatches : 1, sizeof(*s));
	if (!key || !s) {
		rc = PT_ENOMEM;
		goto out;
	}
	for (i = 0; !rc && i < ps->npatches; i++) {
		if (!ps->patches[i].parsed)
			continue;
		s[n].p = ps->patches[i].parsed;
		s[n].pw_id = ps->patches[i].id;
		rc = score_patch(r, &s[n], project);
		n += !rc;
	}
	if (!rc)
		rc = act_on_series(r, s, n, key, project);
	if (!rc || rc == PT_EAGAIN) {
		int src = skip_comment_work(r, ps, project);

		rc = rc ? rc : src;
	}
out:
	for (i = 0; s && i < n; i++)
		scored_clear(&s[i]);
	free(s);
	free(key);
	pw_series_free(ps);
	return rc;
}

static int split_key(const char *key, char **project, int64_t *id)
{
	const char *slash = strrchr(key, '/');
	char *end;

	*project = NULL;
	if (!slash)
		return pt_error_set(PT_EINVAL, "bad work key '%s'", key);
	*id = strtoll(slash + 1, &end, 10);
	if (*end || *id <= 0)
		return pt_error_set(PT_EINVAL, "bad work key '%s'", key);
	*project = pt_strndup(key, (size_t)(slash - key));
	return *project ? 0 : PT_ENOMEM;
}

/*
 * A comment on a patch or a cover letter (what: "patches" or "covers"):
 * re-score every series it belongs to.
 */
static int work_pw_parent(struct run *r, const char *project,
			  const char *what, int64_t id)
{
	struct buf path = BUF_INIT;
	json_t *j = NULL, *series, *it;
	size_t i;
	int rc;

	rc = buf_addf(&path, "%s/%lld/", what, (long long)id);
	if (!rc)
		rc = pw_get_json(r->c.pw, path.ptr, &j);
	series = rc ? NULL : json_object_get(j, "series");
	json_array_foreach(series, i, it) {
		json_int_t sid = json_integer_value(json_object_get(it, "id"));

		if (!rc && sid > 0)
			rc = work_pw_series(r, project, sid);
	}
	json_decref(j);
	buf_free(&path);
	return rc;
}

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
	if (!kind || id <= 0)
		return 0;
	rc = buf_addf(&key, "%s/%lld", pc->project, (long long)id);
	if (!rc)
		rc = store_enqueue(pc->r->db, kind, key.ptr, NULL);
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

/* ---- the mail path ------------------------------------------------- */

struct series_mails {
	struct run *r;
	struct scored *s;
	size_t n;
};

/* One patch mail of the series, parsed from mail_raw, onto sm->s. */
static int add_series_patch(const char *id, void *ctx)
{
	struct series_mails *sm = ctx;
	struct scored *v;
	struct patch *p = NULL;
	int rc;

	rc = lookup_raw_patch(sm->r->lk, id, &p);
	if (rc == PT_ENOTFOUND) { /* threaded by an archive import */
		log_debug("%s", pt_error_last());
		pt_error_clear();
		return 0;
	}
	v = rc ? NULL : realloc(sm->s, (sm->n + 1) * sizeof(*sm->s));
	if (!rc && !v)
		rc = PT_ENOMEM;
	if (rc) {
		patch_free(p);
		return rc;
	}
	sm->s = v;
	memset(&sm->s[sm->n], 0, sizeof(*sm->s));
	sm->s[sm->n].p = p;
	sm->s[sm->n++].own = 1;
	return 0;
}

/* The series' patch mails, in order, parsed from mail_raw. */
static int series_patches(struct run *r, int64_t sid, struct scored **out,
			  size_t *n)
{
	struct series_mails sm = { r, NULL, 0 };
	int rc;

	rc = lookup_series_patches(r->lk, sid, add_series_patch, &sm);
	*out = sm.s;
	*n = sm.n;
	return rc;
}

static int work_mail_series(struct run *r, int64_t sid)
{
	struct scored *s = NULL;
	char *cover = NULL;
	size_t i, n = 0;
	int rc, done;

	rc = lookup_series_head(r->lk, sid, &cover, &done);
	if (!rc && done)
		rc = series_patches(r, sid, &s, &n);
	for (i = 0; !rc && i < n; i++)
		rc = score_patch(r, &s[i], NULL);
	if (!rc && n)
		rc = act_on_series(r, s, n,
				   cover ? cover : s[0].p->message_id, NULL);
	for (i = 0; i < n; i++)
		scored_clear(&s[i]);
	free(s);
	free(cover);
	return rc;
}

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
static int sync_folder(struct run *r, const char *folder,
		       struct imap_stats *st)
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
	if (st.fetched)
		log_info("imap: %zu new messages (%zu skipped, %zu resyncs)",
			 st.fetched, st.skipped, st.resyncs);
	return missing;
}

/* ---- the queue ----------------------------------------------------- */

static int work_one(struct run *r, const struct store_item *it)
{
	char *project = NULL;
	int64_t id = 0;
	int rc;

	if (!strcmp(it->kind, "mail-series")) {
		id = strtoll(it->key, NULL, 10);
		return work_mail_series(r, id);
	}
	if (!r->c.pw)
		return pt_error_set(PT_EINVAL, "work '%s %s' needs Patchwork, "
				    "which is no longer configured", it->kind,
				    it->key);
	rc = split_key(it->key, &project, &id);
	if (!rc && !strcmp(it->kind, "pw-series"))
		rc = work_pw_series(r, project, id);
	else if (!rc && !strcmp(it->kind, "pw-patch"))
		rc = work_pw_parent(r, project, "patches", id);
	else if (!rc && !strcmp(it->kind, "pw-cover"))
		rc = work_pw_parent(r, project, "covers", id);
	else if (!rc)
		rc = pt_error_set(PT_EINVAL, "unknown work kind '%s'",
				  it->kind);
	free(project);
	return rc;
}

static int finish_one(struct run *r, const struct store_item *it, int rc)
{
	int64_t now = time(NULL), wait;
	char *err;
	int max = (int)r->c.max_attempts;

	if (!rc)
		return store_finish(r->db, it->id);
	if (rc == PT_EAGAIN) { /* rate limited: later, not a failure */
		pt_error_clear();
		return store_retry(r->db, it->id, now + 300, "rate limited",
				   it->attempts + 2);
	}
	r->st.work_failed++;
	err = pt_strdup(pt_error_last());
	log_warn("work %s %s failed (attempt %d of %d): %s", it->kind,
		 it->key, it->attempts + 1, max, err ? err : "?");
	wait = 30L << (it->attempts < 10 ? it->attempts : 10);
	rc = store_retry(r->db, it->id, now + wait, err ? err : "?", max);
	free(err);
	return rc;
}

static int drain(struct run *r, int (*stop)(void))
{
	struct store_item it;
	size_t n;
	int rc = 0;

	for (n = 0; n < RUN_DRAIN_MAX; n++) {
		if ((stop && stop()) || daemon_should_stop())
			break;
		rc = store_claim(r->db, time(NULL), &it);
		if (rc == PT_ENOTFOUND) {
			pt_error_clear();
			return 0;
		}
		if (rc)
			return rc;
		rc = finish_one(r, &it, work_one(r, &it));
		store_item_clear(&it);
		if (rc)
			return rc;
	}
	return 0;
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
			 "again", recovered);
	if (!rc)
		rc = act_flush(&r->act);
	return rc;
}

static int mark_pass(struct run *r)
{
	char tmp[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return db_kv_set(r->db, "run/last-pass", tmp);
}

static void reload_if_asked(struct run *r)
{
	if (!daemon_take_reload())
		return;
	if (run_reload(r))
		log_error("reload of '%s' failed, the old configuration stays:"
			  " %s", r->config_path, pt_error_last());
}

int run_loop(struct run *r, int (*stop)(void))
{
	time_t t0 = time(NULL);
	int rc, src;

	rc = start(r);
	while (!rc) {
		r->last_source_rc = 0;
		if (r->c.pw)
			poll_patchwork(r);
		if (r->c.have_imap && !stopping(stop))
			poll_imap(r);
		src = r->last_source_rc;
		rc = drain(r, stop);
		if (!rc)
			rc = act_flush(&r->act);
		if (!rc)
			rc = mark_pass(r);
		if (!rc && r->o.once && src) /* a source failed: say which */
			return pt_error_set(src, "%s", r->last_error);
		if (rc || r->o.once || stopping(stop))
			return rc;
		if (r->o.run_for && time(NULL) - t0 >= r->o.run_for)
			return 0;
		wait_next(r, stop);
		reload_if_asked(r);
	}
	return rc;
}
