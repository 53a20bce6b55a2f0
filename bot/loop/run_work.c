/*
 * run_work.c - the daemon's worker (see run.h): it claims the queue's
 * items, scores the series they name through scoring/model/verdict.h
 * (thread features, the reviews given on the list, the models, the
 * check descriptions: the path `score` takes too) and hands the results
 * to bot/loop/act.c.  Queue kinds: "pw-series" (key "PROJECT/ID"),
 * "pw-patch" and "pw-cover" (a comment on patch or cover letter ID:
 * re-score its series), "pw-wait" (key "PROJECT/PATCH": run.series-wait
 * after a patch arrived, its series if it never completed, checks
 * only), "mail-series" (key: the thread's series id) and "mail-checks"
 * (the same key: the mail path's checks once Patchwork has the patches).
 * The passes that fill the queue are run.c's.
 */
#include "bot/loop/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/stable/stable.h"
#include "scoring/lists/lookup.h"
#include "scoring/model/triage.h"
#include "scoring/model/verdict.h"
#include "bot/sys/daemon.h"
#include "bot/sys/log.h"
#include "bot/patchwork/patchwork.h"
#include "bot/outbox/policy.h"
#include "bot/outbox/store.h"
#include "bot/loop/run_int.h"

#define RUN_DRAIN_MAX 100000   /* work items per pass (bounded) */
#define RUN_MAIL_CHECK_TRIES 8 /* Patchwork lookups of a mail series */

/* ---- scoring ------------------------------------------------------- */

struct scored {
	struct patch *p; /* owned when own */
	int own;
	int64_t pw_id;	 /* 0: not from Patchwork */
	int64_t pw_date; /* Patchwork's date of the patch; 0: none */
	const struct policy_subsys *sub;
	struct verdict v; /* scores, shown reasons, review summary */
	struct reply_reason why[TRIAGE_NTASKS][VERDICT_MAX_REASONS];
	char *fixes; /* suggested Fixes: line, or NULL */
	int first;   /* checks only where none was set (the mail path) */
};

static void scored_clear(struct scored *s)
{
	verdict_clear(&s->v);
	if (s->own)
		patch_free(s->p);
	free(s->fixes);
	memset(s, 0, sizeof(*s));
}

/* The verdict's shown reasons, as the replies take them. */
static void reply_reasons(struct scored *s)
{
	size_t i;
	int k;

	for (k = 0; k < TRIAGE_NTASKS; k++)
		for (i = 0; i < s->v.nwhy[k]; i++) {
			s->why[k][i].text = s->v.why[k][i].text;
			s->why[k][i].direction = s->v.why[k][i].direction;
		}
}

/* Score one patch as the CLI does: its thread, list reviews, models. */
static int score_patch(struct run *r, struct scored *s, const char *project)
{
	const struct verdict_lists lists = { r->th, r->lk };
	int rc;

	rc = verdict_score(&s->v, r->tri, &lists, s->p);
	if (rc)
		return rc;
	reply_reasons(s);
	if (policy_match(r->c.pol, s->p, project, &s->sub)) {
		pt_error_clear();
		s->sub = NULL;
	}
	r->st.patches_scored++;
	return 0;
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

/* Post the check of task k under context, in state, when it has one. */
static int post_check(struct run *r, struct scored *s, const char *project,
		      enum triage_task k, const char *context,
		      const char *state)
{
	char *d = NULL;
	int rc;

	rc = verdict_check(&d, &s->v, k, s->p, s->fixes);
	if (!rc && d && s->first)
		rc = act_check_first(&r->act, s->sub, project, s->pw_id,
				     context, state, d);
	else if (!rc && d)
		rc = act_check(&r->act, s->sub, project, s->pw_id, context,
			       state, d);
	free(d);
	return rc;
}

/*
 * 1 when the patch is older than max_age seconds: by its own Date and
 * by Patchwork's date, whichever is newer (an author's clock that runs
 * late does not make a fresh posting old).  A patch with neither date
 * is old: nothing is sent about what cannot be dated.
 */
static int too_old(const struct scored *s, int64_t max_age)
{
	int64_t d = s->p->author_date > s->pw_date ? s->p->author_date
						   : s->pw_date;

	return d <= 0 || (int64_t)time(NULL) - d > max_age;
}

static int patch_checks(struct run *r, struct scored *s, const char *project)
{
	const struct policy_subsys *sub = s->sub;
	const struct triage_score *risk = &s->v.res.task[TRIAGE_RISK];
	const struct triage_score *fix = &s->v.res.task[TRIAGE_FIX];
	int rc;

	if (!sub || !(sub->actions & POLICY_CHECK) || !s->pw_id)
		return 0;
	if (too_old(s, r->c.check_max_age)) {
		r->st.old_checks++;
		log_info("%s patch %lld is older than check.max-age (%lld "
			 "days): no check",
			 project, (long long)s->pw_id,
			 (long long)(r->c.check_max_age / 86400));
		return 0;
	}
	rc = post_check(r, s, project, TRIAGE_RISK, "patchtriage-risk",
			risk->p >= sub->risk_threshold ? "warning" : "success");
	if (!rc && fix->have && fix->p >= sub->stable_threshold)
		rc = post_check(r, s, project, TRIAGE_FIX, "patchtriage-stable",
				"warning");
	return rc;
}

static int series_replies(struct run *r, struct scored *s, size_t n,
			  const char *key, const char *project)
{
	static const char *const kinds[TRIAGE_NTASKS] = { "stable", "risk" };
	struct act_candidate *c;
	enum reply_status st;
	size_t i, m, old;
	int k, rc = 0, limited = 0;

	c = pt_calloc(n ? n : 1, sizeof(*c));
	if (!c)
		return PT_ENOMEM;
	for (k = 0; !rc && k < TRIAGE_NTASKS; k++) {
		for (i = m = old = 0; i < n; i++) {
			const struct triage_score *t = &s[i].v.res.task[k];

			if (!t->have || !s[i].p->message_id)
				continue;
			if (too_old(&s[i], r->c.reply_max_age)) {
				old += s[i].sub &&
				       (s[i].sub->actions & POLICY_REPLY);
				continue;
			}
			c[m].p = s[i].p;
			c[m].in.kind = kinds[k];
			c[m].in.probability = t->p;
			c[m].in.model_version = t->version;
			c[m].in.reasons = s[i].why[k];
			c[m].in.nreasons = s[i].v.nwhy[k];
			c[m].in.review = s[i].v.review;
			c[m].in.pw_project = project;
			c[m].in.suggested_fixes = s[i].fixes;
			m++;
		}
		if (!m && old) {
			r->st.old_replies++;
			log_info("series %s: older than reply.max-age (%lld "
				 "days): no %s reply",
				 key, (long long)(r->c.reply_max_age / 86400),
				 kinds[k]);
			continue;
		}
		rc = act_reply(&r->act, key, kinds[k], c, m, &st);
		limited |= !rc && st == REPLY_RATE_LIMITED;
	}
	free(c);
	if (!rc && limited)
		rc = pt_error_set(PT_EAGAIN, "rate limited");
	return rc;
}

/* The suggested Fixes: line of a likely fix, unless it has one. */
static int fixes_if_fix(struct run *r, struct scored *s)
{
	const struct triage_score *fix = &s->v.res.task[TRIAGE_FIX];

	if (!s->sub || s->fixes || !fix->have ||
	    fix->p < s->sub->stable_threshold)
		return 0;
	return suggest_fixes(r, s);
}

/* Checks per patch. */
static int series_checks(struct run *r, struct scored *s, size_t n,
			 const char *project)
{
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < n; i++)
		rc = fixes_if_fix(r, &s[i]);
	for (i = 0; !rc && i < n; i++)
		rc = patch_checks(r, &s[i], project);
	return rc;
}

/* Checks per patch, then the series' replies. */
static int act_on_series(struct run *r, struct scored *s, size_t n,
			 const char *key, const char *project)
{
	int rc;

	rc = series_checks(r, s, n, project);
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
 * Nor do its patches' waits ("pw-wait"): the series is complete.
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
		if (!wrc) /* complete and scored: no wait for it to complete */
			wrc = store_skip(r->db, "pw-wait",
					 (const char *const *)keys, n);
		rc = db_release(r->db, "skip_comments", own, wrc);
	}
	for (i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	free(ck);
	return rc;
}

/*
 * Score the patches of ps that have mails onto s (ps->npatches long),
 * *n of them; s borrows ps's patches.  Patchwork's date of each is the
 * series document's.
 */
static int score_pw_patches(struct run *r, const struct pw_series *ps,
			    const char *project, struct scored *s, size_t *n)
{
	const json_t *list = json_object_get(ps->json, "patches");
	size_t i;
	int rc = 0;

	*n = 0;
	for (i = 0; !rc && i < ps->npatches; i++) {
		const json_t *j = ps->patches[i].json;

		if (!ps->patches[i].parsed)
			continue;
		if (!j)
			j = json_array_get(list, i);
		s[*n].p = ps->patches[i].parsed;
		s[*n].pw_id = ps->patches[i].id;
		if (pw_parse_date(json_string_value(json_object_get(j, "date")),
				  &s[*n].pw_date, NULL))
			pt_error_clear(); /* no date: the patch's own counts */
		rc = score_patch(r, &s[*n], project);
		*n += !rc;
	}
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
	rc = score_pw_patches(r, ps, project, s, &n);
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
static int work_pw_parent(struct run *r, const char *project, const char *what,
			  int64_t id)
{
	struct buf path = BUF_INIT;
	json_t *j = NULL, *series, *it;
	size_t i;
	int rc;

	rc = buf_addf(&path, "%s/%lld/", what, (long long)id);
	if (!rc)
		rc = pw_get_json(r->c.pw, path.ptr, &j);
	series = rc ? NULL : json_object_get(j, "series");
	json_array_foreach (series, i, it) {
		json_int_t sid = json_integer_value(json_object_get(it, "id"));

		if (!rc && sid > 0)
			rc = work_pw_series(r, project, sid);
	}
	json_decref(j);
	buf_free(&path);
	return rc;
}

/* ---- series that never complete ----------------------------------- */

int run_queue_series_wait(struct run *r, const char *project, int64_t patch_id,
			  int64_t t)
{
	char *key = work_key(project, patch_id);
	int rc;

	if (!key)
		return PT_ENOMEM;
	if (t <= 0)
		t = time(NULL);
	rc = store_enqueue_at(r->db, "pw-wait", key, NULL,
			      t + r->c.series_wait);
	free(key);
	return rc;
}

/*
 * 1 in *later when a patch of the series (its "patches" list) other than
 * self still has its wait queued: it arrived later, and its item scores
 * the series once it is due.
 */
static int later_wait(struct run *r, const char *project, const json_t *series,
		      int64_t self, int *later)
{
	const json_t *it;
	size_t i;
	int rc = 0;

	*later = 0;
	json_array_foreach (json_object_get(series, "patches"), i, it) {
		json_int_t id = json_integer_value(json_object_get(it, "id"));
		char *key;

		if (id <= 0 || id == self)
			continue;
		key = work_key(project, id);
		rc = key ? store_pending(r->db, "pw-wait", key, later)
			 : PT_ENOMEM;
		free(key);
		if (rc || *later)
			break;
	}
	return rc;
}

/*
 * The patches present of a series that did not complete within
 * run.series-wait after its last patch: each scored on its own, with
 * its checks.  No reply: a reply speaks for the whole series and is
 * sent once per series and kind, so one about a part would stand for
 * the series if it completes; checks are per patch, and a re-score when
 * it completes updates them.
 */
static int score_incomplete(struct run *r, const char *project, int64_t sid)
{
	struct pw_series *ps = NULL;
	struct scored *s = NULL;
	size_t i, n = 0;
	int rc;

	rc = pw_series_fetch_present(r->c.pw, sid, &ps);
	if (rc)
		return rc;
	s = pt_calloc(ps->npatches ? ps->npatches : 1, sizeof(*s));
	rc = s ? score_pw_patches(r, ps, project, s, &n) : PT_ENOMEM;
	if (!rc && n)
		log_info("series %lld of %s is not complete %llds after its "
			 "last patch: %zu of its patches scored on their own",
			 (long long)sid, project, (long long)r->c.series_wait,
			 n);
	if (!rc)
		rc = series_checks(r, s, n, project);
	if (!rc)
		r->st.series_scored += n > 0;
	for (i = 0; s && i < n; i++)
		scored_clear(&s[i]);
	free(s);
	pw_series_free(ps);
	return rc;
}

/* One series of a patch whose wait is over. */
static int wait_series(struct run *r, const char *project, int64_t sid,
		       int64_t self)
{
	struct buf path = BUF_INIT;
	json_t *j = NULL;
	int rc, later = 0;

	rc = buf_addf(&path, "series/%lld/", (long long)sid);
	if (!rc)
		rc = pw_get_json(r->c.pw, path.ptr, &j);
	buf_free(&path);
	if (rc)
		return rc;
	if (json_is_true(json_object_get(j, "received_all"))) {
		log_debug("series %lld of %s is complete: series-completed "
			  "scores it",
			  (long long)sid, project);
	} else {
		rc = later_wait(r, project, j, self, &later);
		if (!rc && !later)
			rc = score_incomplete(r, project, sid);
	}
	json_decref(j);
	return rc;
}

/* "pw-wait": run.series-wait after patch id arrived. */
static int work_pw_wait(struct run *r, const char *project, int64_t id)
{
	struct buf path = BUF_INIT;
	json_t *j = NULL, *it;
	size_t i;
	int rc;

	rc = buf_addf(&path, "patches/%lld/", (long long)id);
	if (!rc)
		rc = pw_get_json(r->c.pw, path.ptr, &j);
	buf_free(&path);
	if (rc == PT_ENOTFOUND) { /* deleted meanwhile: nothing to wait for */
		log_info("%s patch %lld: %s", project, (long long)id,
			 pt_error_last());
		pt_error_clear();
		return 0;
	}
	json_array_foreach (json_object_get(j, "series"), i, it) {
		json_int_t sid = json_integer_value(json_object_get(it, "id"));

		if (!rc && sid > 0)
			rc = wait_series(r, project, sid, id);
	}
	json_decref(j);
	return rc;
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

/*
 * The opted-in project (r->c.projects' own string) of an entry of a
 * /patches/ list, or NULL.
 */
static const char *opted_project(struct run *r, const json_t *hit)
{
	const char *name = json_string_value(
		json_object_get(json_object_get(hit, "project"), "link_name"));
	size_t i;

	for (i = 0; name && r->c.projects[i]; i++)
		if (!strcmp(r->c.projects[i], name))
			return r->c.projects[i];
	return NULL;
}

/*
 * A patch read over IMAP, looked up in Patchwork by its Message-ID: its
 * checks on each opted-in project that has it, unless a check of the
 * context is there already (either path's); *found 0 when Patchwork has
 * it in no project (yet).
 */
static int mail_patch_checks(struct run *r, struct scored *s, int *found)
{
	json_t *list = NULL, *hit;
	size_t i;
	int rc;

	rc = pw_patches_by_msgid(r->c.pw, s->p->message_id, &list);
	*found = json_array_size(list) > 0;
	json_array_foreach (list, i, hit) {
		const char *project = opted_project(r, hit);

		if (rc || !project)
			continue;
		s->pw_id = json_integer_value(json_object_get(hit, "id"));
		if (pw_parse_date(json_string_value(
					  json_object_get(hit, "date")),
				  &s->pw_date, NULL))
			pt_error_clear();
		if (policy_match(r->c.pol, s->p, project, &s->sub)) {
			pt_error_clear();
			s->sub = NULL;
		}
		s->first = 1;
		rc = fixes_if_fix(r, s);
		if (!rc)
			rc = patch_checks(r, s, project);
	}
	json_decref(list);
	return rc;
}

/*
 * The mail may come before Patchwork stored the patch: look again in a
 * quarter of run.series-wait, RUN_MAIL_CHECK_TRIES lookups in all.
 */
static int mail_checks_later(struct run *r, int64_t sid, int tries,
			     size_t missing)
{
	char key[32], payload[16];
	int64_t wait = r->c.series_wait / 4 > 0 ? r->c.series_wait / 4 : 1;

	if (tries >= RUN_MAIL_CHECK_TRIES) {
		log_info("mail series %lld: %zu patches not in Patchwork "
			 "after %d lookups: no check",
			 (long long)sid, missing, tries);
		return 0;
	}
	snprintf(key, sizeof(key), "%lld", (long long)sid);
	snprintf(payload, sizeof(payload), "%d", tries + 1);
	return store_enqueue_at(r->db, "mail-checks", key, payload,
				(int64_t)time(NULL) + wait);
}

/* The checks of a mail series' patches (lookup number tries). */
static int mail_checks(struct run *r, struct scored *s, size_t n, int64_t sid,
		       int tries)
{
	size_t i, missing = 0;
	int rc = 0, found;

	for (i = 0; !rc && i < n; i++) {
		/* no lookup for what is too old for a check anyway */
		if (!s[i].p->message_id || too_old(&s[i], r->c.check_max_age))
			continue;
		rc = mail_patch_checks(r, &s[i], &found);
		missing += !found;
	}
	if (!rc && missing)
		rc = mail_checks_later(r, sid, tries, missing);
	return rc;
}

/*
 * "mail-series" (tries 0): score the series and send its replies, then
 * its checks; "mail-checks" (tries: the lookup's number): the checks.
 */
static int work_mail_series(struct run *r, int64_t sid, int tries)
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
	if (!rc && n && !tries)
		rc = act_on_series(r, s, n, cover ? cover : s[0].p->message_id,
				   NULL);
	if (!rc && n && r->c.pw)
		rc = mail_checks(r, s, n, sid, tries ? tries : 1);
	for (i = 0; i < n; i++)
		scored_clear(&s[i]);
	free(s);
	free(cover);
	return rc;
}

/* ---- the queue ----------------------------------------------------- */

/* The lookup number a "mail-checks" item holds: 1 to RUN_MAIL_CHECK_TRIES. */
static int mail_tries(const char *payload)
{
	char *end;
	long n = payload ? strtol(payload, &end, 10) : 0;

	if (!payload || *end || n < 1 || n > RUN_MAIL_CHECK_TRIES)
		return 1;
	return (int)n;
}

static int work_one(struct run *r, const struct store_item *it)
{
	char *project = NULL;
	int64_t id = 0;
	int rc;

	if (!strcmp(it->kind, "mail-series")) {
		id = strtoll(it->key, NULL, 10);
		return work_mail_series(r, id, 0);
	}
	if (!strcmp(it->kind, "mail-checks") && r->c.pw) {
		id = strtoll(it->key, NULL, 10);
		return work_mail_series(r, id, mail_tries(it->payload));
	}
	if (!r->c.pw)
		return pt_error_set(PT_EINVAL,
				    "work '%s %s' needs Patchwork, "
				    "which is no longer configured",
				    it->kind, it->key);
	rc = strcmp(it->kind, "pw-comment") ? split_key(it->key, &project, &id)
					    : 0;
	if (!rc && !strcmp(it->kind, "pw-series"))
		rc = work_pw_series(r, project, id);
	else if (!rc && !strcmp(it->kind, "pw-patch"))
		rc = work_pw_parent(r, project, "patches", id);
	else if (!rc && !strcmp(it->kind, "pw-cover"))
		rc = work_pw_parent(r, project, "covers", id);
	else if (!rc && !strcmp(it->kind, "pw-wait"))
		rc = work_pw_wait(r, project, id);
	else if (!strcmp(it->kind, "pw-comment"))
		rc = run_pw_comment(r, it->key);
	else if (!rc)
		rc = pt_error_set(PT_EINVAL, "unknown work kind '%s'",
				  it->kind);
	free(project);
	return rc;
}

/* Rate limited or 4yz (PT_EAGAIN): later, and not a failure. */
static int defer_one(struct run *r, const struct store_item *it)
{
	char *err = pt_strdup(pt_error_last());
	const char *why = err && *err ? err : "try again later";
	int rc;

	pt_error_clear();
	log_info("work %s %s deferred 300 s: %s", it->kind, it->key, why);
	rc = store_retry(r->db, it->id, (int64_t)time(NULL) + 300, why,
			 it->attempts + 2);
	free(err);
	return rc;
}

/*
 * A failed attempt: counted, said, retried with a backoff.  When the
 * peer is down or failing (PT_ENET: unreachable, timed out, 5xx) that
 * is not the item's fault: it is retried, at least hourly, for as long
 * as its checks could still be set (check.max-age), not given up after
 * run.max-attempts as an item that itself fails is.
 */
static int fail_one(struct run *r, const struct store_item *it, int rc)
{
	int64_t now = time(NULL);
	long wait = 30L << (it->attempts < 10 ? it->attempts : 10);
	int max = (int)r->c.max_attempts;
	char *err = pt_strdup(pt_error_last());
	const char *why = err ? err : "?";

	r->st.work_failed++;
	snprintf(r->work_error, sizeof(r->work_error), "%s", why);
	if (rc == PT_ENET && now - it->created < r->c.check_max_age) {
		max = it->attempts + 2;
		wait = wait < 3600 ? wait : 3600;
		log_warn("work %s %s failed (attempt %d; retried in %ld s "
			 "while younger than check.max-age): %s",
			 it->kind, it->key, it->attempts + 1, wait, why);
	} else {
		log_warn("work %s %s failed (attempt %d of %d): %s", it->kind,
			 it->key, it->attempts + 1, max, why);
	}
	rc = store_retry(r->db, it->id, now + wait, why, max);
	free(err);
	return rc;
}

static int finish_one(struct run *r, const struct store_item *it, int rc)
{
	if (!rc) {
		r->st.work_done++;
		return store_finish(r->db, it->id);
	}
	return rc == PT_EAGAIN ? defer_one(r, it) : fail_one(r, it, rc);
}

static int drain(struct run *r, int (*stop)(void))
{
	struct store_item it;
	size_t n, auth;
	int rc = 0;

	for (n = 0; n < RUN_DRAIN_MAX; n++) {
		if ((stop && stop()) || daemon_should_stop())
			break;
		/* commands first: a mute must hold before its series' reply */
		rc = store_claim_kind(r->db, "pw-comment", time(NULL), &it);
		if (rc == PT_ENOTFOUND) {
			pt_error_clear();
			rc = store_claim(r->db, time(NULL), &it);
		}
		if (rc == PT_ENOTFOUND) {
			pt_error_clear();
			return 0;
		}
		if (rc)
			return rc;
		auth = r->act.st.auth_failed;
		rc = work_one(r, &it);
		if (r->act.st.auth_failed == auth) /* not counted by act.c */
			act_note_auth(&r->act.st, rc);
		/* a comment read is no work done: --once judges series */
		rc = rc || strcmp(it.kind, "pw-comment")
			     ? finish_one(r, &it, rc)
			     : store_finish(r->db, it.id);
		store_item_clear(&it);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * The checks of the items drained are posted HTTP_MANY_WIDTH at a time
 * (act_post_checks()), not one by one as each item sets them: recorded
 * 'sending' first, so that a crash leaves them to the flush.
 */
int run_drain(struct run *r, int (*stop)(void))
{
	int rc, prc;

	r->act.defer = 1;
	rc = drain(r, stop);
	r->act.defer = 0;
	prc = act_post_checks(&r->act);
	return rc ? rc : prc;
}

char *run_pw_series_key(const struct pw_series *s)
{
	return pw_series_key(s);
}
