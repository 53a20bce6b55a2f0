/*
 * run_work.c - the daemon's worker (see run.h): it claims the queue's
 * items, scores the series they name (thread features, the reviews
 * given on the list, the models) and hands the results to
 * bot/loop/act.c.  Queue kinds: "pw-series" (key "PROJECT/ID"),
 * "pw-patch" and "pw-cover" (a comment on patch or cover letter ID:
 * re-score its series) and "mail-series" (key: the thread's series id).
 * The passes that fill the queue are run.c's.
 */
#include "bot/loop/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "scoring/stable/stable.h"
#include "scoring/lists/lookup.h"
#include "scoring/lists/thread.h"
#include "scoring/model/triage.h"
#include "scoring/patch/trailer.h"
#include "bot/sys/daemon.h"
#include "bot/sys/log.h"
#include "bot/patchwork/patchwork.h"
#include "bot/outbox/policy.h"
#include "bot/outbox/store.h"
#include "bot/loop/run_int.h"

#define RUN_MAX_REASONS 5
#define RUN_DRAIN_MAX 100000  /* work items per pass (bounded) */

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
		snprintf(out, n, "%u " TRAILER_KEY_REVIEWED ", %u "
			 TRAILER_KEY_TESTED, rb, tb);
		return;
	}
	snprintf(out, n, "%u replies from %u reviewers, %u "
		 TRAILER_KEY_REVIEWED ", %u " TRAILER_KEY_TESTED, tf->replies,
		 tf->reviewers, rb, tb);
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

/*
 * The kind a list's act takes among the patch's trailers: the reviews
 * and Reported-by; any other act (Suggested-by, Nacked-by) stays OTHER.
 */
static enum trailer_kind review_kind(const char *k)
{
	enum trailer_kind kind = trailer_kind_of(k);

	if ((trailer_kind_flags(kind) & TRAILER_F_REVIEW) ||
	    kind == TRAILER_REPORTED)
		return kind;
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

int run_drain(struct run *r, int (*stop)(void))
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
