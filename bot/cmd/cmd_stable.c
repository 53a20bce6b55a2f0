/*
 * cmd_stable.c - `patchtriage stable`: the commits of a main-line range
 * that should go to a stable branch, AUTOSEL style.  The facts come from
 * scoring/stable/stable.c (already in the branch, tagged, applies-to, depends-on,
 * applies cleanly); the ranking puts what the tags say first, as stable
 * maintainers read such a list (stable_tier: Cc: stable, then a Fixes:
 * of code the branch has, then other Fixes:, then untagged), and within
 * a tier the calibrated p(fix) of the trained fix model in the state
 * directory, shown with its strongest reasons.  Measured on DPDK and
 * rdma-core, that order beats p(fix) alone (docs/EVALUATION.md).  An
 * untagged candidate whose subject says fix or whose changelog names a
 * commit the branch has (stable_hint) comes right after the tagged
 * ones, then one that keeps the build working (stable_build: a CI or
 * packaging component, toolchain words).  Every tagged, hinted or build
 * candidate is listed; another untagged one when p(fix) >= --threshold.
 * The untagged-backport signals (fix wording, a tagged series sibling, a
 * named commit the branch has, the build facts, a shown tagged candidate
 * that needs it to apply) are shown per candidate as facts with their
 * reasons.
 * Output: an aligned table, --json (both in cmd_stable_out.c), or --mbox
 * in the stable review format.  The candidates are read and scored on
 * --jobs threads, each with its own repository handle and feature
 * statements, the results stored by index so the output does not
 * depend on the thread count.
 */
#include <git2.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scoring/model/dataset.h"
#include "scoring/model/explain.h"
#include "scoring/model/features.h"
#include "scoring/model/model.h"
#include "scoring/stable/stable.h"
#include "scoring/model/triage.h"
#include "bot/cmd/cli.h"
#include "bot/cmd/cmd_scorer.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/cmd/cmd_stable_int.h"

#define NREASONS 3
static int parse(struct opts *o, int argc, char **argv)
{
	long long top = 0, jobs;
	size_t npos;
	int rc;
	const struct opt opts[] = {
		OPTION_FLAG(0, "json", &o->json),
		OPTION_STRING(0, "repo", &o->repo),
		OPTION_STRING(0, "range", &o->range),
		OPTION_STRING(0, "branch", &o->branch),
		OPTION_STRING(0, "mbox", &o->mbox),
		OPTION_STRING(0, "version", &o->version),
		OPTION_INT(0, "top", &top, 0, OPT_NOMAX),
		OPTION_INT(0, "jobs", &jobs, 1, CLI_MAX_JOBS),
		OPTION_DOUBLE(0, "threshold", &o->threshold, 0, 1),
		OPTION_END,
	};

	memset(o, 0, sizeof(*o));
	o->threshold = 0.5;
	o->jobs = cli_default_jobs();
	jobs = (long long)o->jobs;
	rc = opt_parse("stable", opts, argc, argv, NULL, 0, &npos);
	if (rc)
		return rc;
	o->top = (size_t)top;
	o->jobs = (size_t)jobs;
	if (!o->repo || !o->range || !o->branch)
		return cli_usage("stable", "--repo, --range and --branch are "
					   "needed");
	return 0;
}

/* "22.11" for 22.11, "50" for stable-v50, "6.6" for linux-6.6.y. */
static char *branch_version(const char *branch)
{
	const char *s = strrchr(branch, '/');
	size_t n;

	s = s ? s + 1 : branch;
	if (!strncmp(s, "stable-", 7))
		s += 7;
	if (!strncmp(s, "linux-", 6))
		s += 6;
	if (*s == 'v' && s[1] >= '0' && s[1] <= '9')
		s++;
	n = strlen(s);
	if (n > 2 && !strcmp(s + n - 2, ".y"))
		n -= 2;
	return pt_strndup(s, n);
}

/* The fix model and the mined history, through the daemon's path. */
static int open_triage(struct run *r, struct cli_ctx *ctx)
{
	struct triage_opts o = { .repo = r->o.repo, .tasks = TRIAGE_WANT_FIX };
	struct db *db = NULL;
	int rc = cli_db(ctx, &db);

	if (!rc)
		rc = triage_open_opts(&r->tri, db, ctx->state_dir, &o);
	if (!rc)
		r->model = triage_model(r->tri, TRIAGE_FIX);
	return rc;
}

static void warn_history(const struct run *r)
{
	const char *why;

	if (!triage_history(r->tri, &why) && why)
		cli_warn("%s; scoring without history", why);
}

static int read_patch(struct patch **out, git_repository *repo,
		      const struct stable_set *set, size_t i)
{
	git_commit *c = NULL;
	git_oid id;
	int rc;

	git_oid_fromstr(&id, set->c[i].id);
	if (git_commit_lookup(&c, repo, &id))
		return pt_error_set(PT_ENOTFOUND, "cannot read commit '%s'",
				    set->c[i].id);
	rc = patch_from_commit(out, repo, c);
	git_commit_free(c);
	return rc;
}

/* What one thread scores with; the model is shared (read only). */
struct tscore {
	git_repository *repo;
	struct triage_worker *w; /* NULL: the triage's own context */
};

/* p(fix) of one candidate; with reasons when want_why. */
static int score(struct cand *c, struct run *r, const struct tscore *s,
		 int want_why)
{
	struct triage_result res;
	const struct explain_reason *why = NULL;
	struct patch *p = NULL;
	size_t n = 0, k;
	int rc;

	memset(&res, 0, sizeof(res));
	rc = read_patch(&p, s->repo, r->set, c->idx);
	if (!rc)
		rc = triage_score_with(&res, r->tri, s->w, p, NULL,
				       want_why ? 0 : TRIAGE_NO_REASONS);
	if (!rc) {
		c->p = res.task[TRIAGE_FIX].p;
		why = res.task[TRIAGE_FIX].why;
		n = res.task[TRIAGE_FIX].nwhy;
		c->keyword = dataset_keyword_score(p);
	}
	if (!rc && want_why) {
		size_t idx[NREASONS],
			m = explain_pick(idx, NREASONS, why, n, 1);

		c->why = pt_calloc(NREASONS, sizeof(*c->why));
		for (k = 0; c->why && k < m; k++) {
			c->why[c->nwhy] = pt_strdup(why[idx[k]].text);
			if (!c->why[c->nwhy++])
				rc = PT_ENOMEM;
		}
		if (!c->why)
			rc = PT_ENOMEM;
	}
	triage_result_clear(&res);
	patch_free(p);
	return rc;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->tier != y->tier)
		return x->tier < y->tier ? 1 : -1;
	if (x->hint != y->hint)
		return x->hint < y->hint ? 1 : -1;
	if (x->build != y->build)
		return x->build < y->build ? 1 : -1;
	if (x->p != y->p)
		return x->p < y->p ? 1 : -1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The candidates shared by the scoring threads, handed out by index. */
struct pool {
	struct run *r;
	atomic_size_t next;
	atomic_int stop;
	pthread_mutex_t lock; /* guards the first error */
	size_t err_at;
	int rc;
	char *err;
};

struct worker {
	struct pool *pool;
	struct tscore s;
	pthread_t t;
	int started;
	int draws; /* the main thread's worker draws the progress line */
};

/* Keep the error of the earliest candidate that failed; stop all. */
static void pool_fail(struct pool *pl, size_t i, int rc)
{
	pthread_mutex_lock(&pl->lock);
	if (!pl->rc || i < pl->err_at) {
		free(pl->err);
		pl->err = pt_strdup(pt_error_last());
		pl->rc = rc;
		pl->err_at = i;
	}
	pthread_mutex_unlock(&pl->lock);
	atomic_store(&pl->stop, 1);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pool *pl = w->pool;
	size_t i;
	int rc;

	while (!atomic_load(&pl->stop)) {
		i = atomic_fetch_add(&pl->next, 1);
		if (i >= pl->r->n)
			break;
		if (w->draws) {
			struct pt_progress_report rep = {
				"scoring", "candidates", i, pl->r->n, 0, NULL
			};

			progress_show(&pl->r->line, &rep);
		}
		rc = score(&pl->r->c[i], pl->r, &w->s, 0);
		if (rc)
			pool_fail(pl, i, rc);
	}
	if (!w->draws)
		model_thread_done();
	return NULL;
}

/* A thread of its own: a repository handle and feature statements. */
static int worker_start(struct worker *w, struct run *r)
{
	int rc = 0;

	if (git_repository_open(&w->s.repo, r->o.repo))
		rc = pt_error_set(PT_ENOTFOUND,
				  "cannot open repository "
				  "'%s': %s",
				  r->o.repo,
				  git_error_last() ? git_error_last()->message
						   : "not found");
	if (!rc)
		rc = triage_worker_new(&w->s.w, r->tri);
	if (!rc && pthread_create(&w->t, NULL, work, w))
		rc = pt_error_set(PT_ERROR,
				  "cannot start a thread to "
				  "score '%s'",
				  r->o.range);
	w->started = !rc;
	return rc;
}

/* Score r->c[0..n) on o.jobs threads; this one is the first. */
static int score_all(struct run *r)
{
	struct worker *w;
	struct pool pl;
	size_t k, nw = r->o.jobs < r->n ? r->o.jobs : r->n;
	int rc = 0;

	if (!nw)
		return 0;
	w = pt_calloc(nw, sizeof(*w));
	if (!w)
		return PT_ENOMEM;
	memset(&pl, 0, sizeof(pl));
	pl.r = r;
	atomic_init(&pl.next, 0);
	atomic_init(&pl.stop, 0);
	pthread_mutex_init(&pl.lock, NULL);
	w[0].pool = &pl;
	w[0].s.repo = r->repo;
	w[0].s.w = NULL;
	w[0].draws = 1;
	for (k = 1; k < nw && !rc; k++) {
		w[k].pool = &pl;
		rc = worker_start(&w[k], r);
	}
	if (rc)
		atomic_store(&pl.stop, 1);
	work(&w[0]);
	for (k = 1; k < nw; k++) {
		if (w[k].started)
			pthread_join(w[k].t, NULL);
		triage_worker_free(w[k].s.w);
		git_repository_free(w[k].s.repo);
	}
	if (!rc && !pl.rc) {
		struct pt_progress_report rep = { "scoring", "candidates",
						  r->n,	     r->n,
						  0,	     NULL };

		progress_show(&r->line, &rep);
	}
	if (!rc && pl.rc)
		rc = pt_error_set(pl.rc, "%s",
				  pl.err ? pl.err
					 : "out of "
					   "memory");
	free(pl.err);
	pthread_mutex_destroy(&pl.lock);
	free(w);
	return rc;
}

static int rank(struct run *r)
{
	size_t i;
	int rc;

	r->c = pt_calloc(r->set->n + 1, sizeof(*r->c));
	if (!r->c)
		return PT_ENOMEM;
	for (i = 0; i < r->set->n; i++) {
		if (!stable_is_candidate(r->set, i))
			continue;
		r->c[r->n].idx = i;
		r->c[r->n].hint = stable_hint(&r->set->c[i]);
		r->c[r->n].build = stable_build(&r->set->c[i]);
		r->c[r->n++].tier = stable_tier(&r->set->c[i]);
	}
	rc = score_all(r);
	if (!rc && r->n)
		qsort(r->c, r->n, sizeof(*r->c), cand_cmp);
	for (r->shown = 0; r->shown < r->n; r->shown++)
		if ((!r->c[r->shown].tier && !r->c[r->shown].hint &&
		     !r->c[r->shown].build &&
		     r->c[r->shown].p < r->o.threshold) ||
		    (r->o.top && r->shown >= r->o.top))
			break;
	return rc;
}

/* Facts and reasons of the shown candidates only. */
static int detail(struct run *r)
{
	const struct tscore main_s = { r->repo, NULL };
	unsigned char *sel = pt_calloc(r->set->n + 1, 1);
	struct pt_progress_report rep = {
		"cherry-picking the shown", "candidates", 0, r->shown, 0, NULL
	};
	size_t i;
	int rc = sel ? 0 : PT_ENOMEM;

	progress_show(&r->line, &rep);
	for (i = 0; i < r->shown && !rc; i++) {
		sel[r->c[i].idx] = 1;
		rc = stable_check_apply(r->set, r->c[i].idx);
		if (!rc)
			rc = score(&r->c[i], r, &main_s, 1);
		rep.done = i + 1;
		progress_show(&r->line, &rep);
	}
	if (!rc)
		rc = stable_deps(r->set, sel);
	if (!rc)
		rc = stable_prereqs(r->set, sel);
	free(sel);
	return rc;
}

/* mboxrd: a body line matching ^>*From  gets one more '>'. */
static int add_escaped(struct buf *b, const char *s)
{
	const char *eol, *p;
	int rc = 0;

	for (; s && *s && !rc; s = *eol ? eol + 1 : eol) {
		eol = strchrnul(s, '\n');
		for (p = s; *p == '>'; p++)
			;
		if (!strncmp(p, "From ", 5))
			rc = buf_addch(b, '>');
		if (!rc)
			rc = buf_add(b, s, (size_t)(eol - s));
		if (!rc)
			rc = buf_addch(b, '\n');
	}
	return rc;
}

static int add_date(struct buf *b, int64_t when, int tz)
{
	time_t t = (time_t)(when + (int64_t)tz * 60);
	struct tm tm;
	char s[64];
	static const char *const days[] = { "Sun", "Mon", "Tue", "Wed",
					    "Thu", "Fri", "Sat" };
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr",
					   "May", "Jun", "Jul", "Aug",
					   "Sep", "Oct", "Nov", "Dec" };
	int a = tz < 0 ? -tz : tz;

	if (!gmtime_r(&t, &tm))
		return buf_addstr(b, "Thu, 01 Jan 1970 00:00:00 +0000");
	snprintf(s, sizeof(s), "%s, %02d %s %04d %02d:%02d:%02d %c%02d%02d",
		 days[tm.tm_wday], tm.tm_mday, mon[tm.tm_mon],
		 tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 tz < 0 ? '-' : '+', a / 60, a % 60);
	return buf_addstr(b, s);
}

static int mail_one(struct buf *b, struct run *r, size_t i)
{
	const struct stable_commit *sc = &r->set->c[r->c[i].idx];
	struct patch *p = NULL;
	struct buf sig = BUF_INIT, dep = BUF_INIT;
	int rc = read_patch(&p, r->repo, r->set, r->c[i].idx);

	if (!rc)
		rc = stable_cmd_add_signals(&sig, r->set, sc);
	if (!rc)
		rc = stable_cmd_add_needs(&dep, r->set, sc, 40, ", ");
	if (rc) {
		buf_free(&sig);
		buf_free(&dep);
		patch_free(p);
		return rc;
	}
	rc = buf_addf(b, "From %s Mon Sep 17 00:00:00 2001\nFrom: ", sc->id);
	if (!rc && p->author.name)
		rc = buf_addf(b, "%s ", p->author.name);
	if (!rc)
		rc = buf_addf(b, "<%s>\nDate: ",
			      p->author.email ? p->author.email : "");
	if (!rc)
		rc = add_date(b, p->author_date, p->author_tz);
	if (!rc)
		rc = buf_addf(b,
			      "\nSubject: [PATCH AUTOSEL %s] %s\n"
			      "Message-ID: <autosel-%s-%.12s@patchtriage>\n"
			      "X-stable: review\nX-Patchwork-Hint: ignore\n"
			      "X-Patchtriage-P-Fix: %.3f\n%s%s%s%s%s%s"
			      "MIME-Version: 1.0\n"
			      "Content-Type: text/plain; charset=UTF-8\n"
			      "Content-Transfer-Encoding: 8bit\n\n"
			      "[ Upstream commit %s ]\n\n",
			      r->version, sc->subject, r->version, sc->id,
			      r->c[i].p,
			      sig.len ? "X-Patchtriage-Signals: " : "",
			      sig.len ? sig.ptr : "", sig.len ? "\n" : "",
			      dep.len ? "X-Patchtriage-Depends-On: " : "",
			      dep.len ? dep.ptr : "", dep.len ? "\n" : "",
			      sc->id);
	if (!rc)
		rc = add_escaped(b, p->message);
	if (!rc)
		rc = buf_addstr(b, "---\n");
	if (!rc)
		rc = add_escaped(b, p->diff);
	if (!rc)
		rc = buf_addf(b, "-- \npatchtriage %s\n\n", PT_VERSION);
	buf_free(&sig);
	buf_free(&dep);
	patch_free(p);
	return rc;
}

static int write_mbox(struct run *r)
{
	struct buf b = BUF_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < r->shown && !rc; i++)
		rc = mail_one(&b, r, i);
	if (!rc)
		rc = pt_write_file_atomic(r->o.mbox, b.ptr, b.len);
	buf_free(&b);
	return rc;
}

static void run_free(struct run *r)
{
	size_t i, k;

	for (i = 0; r->c && i < r->n; i++) {
		for (k = 0; k < r->c[i].nwhy; k++)
			free(r->c[i].why[k]);
		free(r->c[i].why);
	}
	free(r->c);
	free(r->version);
	triage_free(r->tri);
	stable_set_free(r->set);
	git_repository_free(r->repo);
}

int cmd_stable(int argc, char **argv, struct cli_ctx *ctx)
{
	struct stable_opts so;
	struct run r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = parse(&r.o, argc, argv);
	if (rc)
		return opt_exit(rc);
	git_libgit2_init();
	rc = open_triage(&r, ctx);
	if (!rc && git_repository_open(&r.repo, r.o.repo))
		rc = pt_error_set(PT_ENOTFOUND,
				  "cannot open repository "
				  "'%s': %s",
				  r.o.repo,
				  git_error_last() ? git_error_last()->message
						   : "not found");
	memset(&so, 0, sizeof(so));
	so.range = r.o.range;
	so.branch = r.o.branch;
	so.no_deps = 1;
	so.jobs = r.o.jobs;
	progress_init(&r.line, ctx);
	so.progress = progress_cb(&r.line);
	if (!rc)
		rc = stable_analyse(&r.set, r.repo, &so);
	r.version = r.o.version ? pt_strdup(r.o.version)
				: branch_version(r.o.branch);
	if (!rc && !r.version)
		rc = PT_ENOMEM;
	if (!rc)
		warn_history(&r);
	if (!rc)
		rc = rank(&r);
	if (!rc)
		rc = detail(&r);
	progress_end(&r.line);
	if (!rc && r.o.mbox)
		rc = write_mbox(&r);
	if (!rc)
		rc = r.o.json ? stable_cmd_print_json(&r)
			      : stable_cmd_print_table(&r);
	rc = rc ? cli_fail_last() : EXIT_OK;
	run_free(&r);
	git_libgit2_shutdown();
	return rc;
}
