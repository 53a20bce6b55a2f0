/*
 * eval.c - the walk-forward evaluation (see eval.h).  It owns the split
 * protocol, which models and baselines are compared, how each is trained
 * and scored on a fold's test rows, and the pool of their predictions;
 * eval_report.c turns that pool into the report's tables and plots.
 */
#include "scoring/model/eval.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scoring/model/eval_int.h"
#include "scoring/model/metrics.h"
#include "scoring/model/model.h"
#include "scoring/patch/trailer.h"

const char *const eval_mnames[NMODELS] = {
	"full: text LR + XGBoost, calibrated",
	"ablation: full without review/testing",
	"text-only LR",
	"Kamei-14 LR",
	"keyword/size rules (AUTOSEL-like)",
	"random",
};

const char *const eval_mshort[NMODELS] = {
	"full", "no-review", "text", "kamei", "keyword", "random",
};

void eval_opts_default(struct eval_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->folds = 4;
	o->test_share = 0.5;
	o->horizon = 365 * (int64_t)DAY;
	o->tasks = 3;
	o->seed = 1;
	o->bootstrap = 200;
	o->jobs = 1;
	o->title = "repository";
}

/* ---- pooled predictions ----------------------------------------------------- */

static void pool_clear(struct pool *pl)
{
	int m;

	free(pl->row);
	free(pl->y);
	free(pl->fold);
	for (m = 0; m < NMODELS; m++)
		free(pl->p[m]);
	memset(pl, 0, sizeof(*pl));
}

static int pool_reserve(struct pool *pl, size_t extra)
{
	size_t cap = pl->cap ? pl->cap : 1024;
	void *p;
	int m;

	if (pl->n + extra <= pl->cap)
		return 0;
	while (cap < pl->n + extra)
		cap *= 2;
#define R(f)                                             \
	do {                                             \
		p = pt_reallocarray(f, cap, sizeof(*f)); \
		if (!p)                                  \
			return PT_ENOMEM;                \
		f = p;                                   \
	} while (0)
	R(pl->row);
	R(pl->y);
	R(pl->fold);
	for (m = 0; m < NMODELS; m++)
		R(pl->p[m]);
#undef R
	pl->cap = cap;
	return 0;
}

/* ---- one fold ---------------------------------------------------------------- */

/* The models each fold trains (M_FULL to M_KAMEI); the rest only score. */
#define TRAINED (M_KAMEI - M_FULL + 1)

static size_t eval_steps(const struct eval_opts *o)
{
	size_t folds = o->folds < 16 ? o->folds : 16;

	return folds * TRAINED * (size_t)(!!(o->tasks & 1) + !!(o->tasks & 2));
}

/* What the model being trained says: its phase and the share done. */
struct say_model {
	struct run *r;
	int m;
	unsigned k;
};

/*
 * "evaluating: done/total models (fix, full: fold 1 of 4; choosing C
 * 40%)": the models done count, the note says where the current one
 * is, so a long fit still moves the line.
 */
static void say(struct run *r, int m, unsigned k, const char *phase,
		double share)
{
	struct pt_progress_report rep = {
		"evaluating", "models", 0, 0, 0, NULL
	};
	char msg[256];
	int n;

	n = snprintf(msg, sizeof(msg), "%s, %s: fold %u of %u",
		     dataset_task_name(r->task), eval_mshort[m], k + 1,
		     r->o->folds);
	if (phase && n > 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, "; %s %.0f%%", phase,
			 100 * share);
	rep.done = r->step0 + (size_t)k * TRAINED + (size_t)(m - M_FULL);
	rep.total = eval_steps(r->o);
	rep.note = msg;
	pt_progress_report(&r->o->progress, &rep);
}

static void model_phase(const char *phase, double share, void *ctx)
{
	struct say_model *s = ctx;

	say(s->r, s->m, s->k, phase, share);
}

/* The folds of this task are done. */
static void done(struct run *r, unsigned folds)
{
	struct pt_progress_report rep = {
		"evaluating", "models", 0, 0, 0, NULL
	};

	rep.done = r->step0 + (size_t)folds * TRAINED;
	rep.total = eval_steps(r->o);
	pt_progress_report(&r->o->progress, &rep);
}

static int train_predict(double *p, struct run *r, int m, unsigned k,
			 const size_t *tr, size_t ntr, const size_t *te,
			 size_t nte)
{
	unsigned char use[FEAT_NTAB];
	struct say_model sm = { r, m, k };
	struct model_params mp;
	struct pt_model *model = NULL;
	int rc;

	dataset_task_mask(use, r->task);
	switch (m) {
	case M_FULL:
		model_params_default(&mp, MODEL_KIND_FULL);
		break;
	case M_NOREVIEW:
		model_params_default(&mp, MODEL_KIND_FULL);
		dataset_mask_drop(use, FEAT_G_REVIEW);
		dataset_mask_drop(use, FEAT_G_TESTING);
		break;
	case M_TEXT:
		model_params_default(&mp, MODEL_KIND_TEXT);
		break;
	default:
		model_params_default(&mp, MODEL_KIND_TABLR);
		dataset_kamei_mask(use, r->task);
		break;
	}
	mp.task = dataset_task_name(r->task);
	mp.tab_use = use;
	mp.jobs = r->o->jobs;
	mp.progress = model_phase;
	mp.progress_ctx = &sm;
	rc = model_train(&model, r->ds->d, tr, ntr, &mp);
	if (!rc)
		rc = model_predict_rows(p, model, r->ds->d, te, nte);
	model_free(model);
	return rc;
}

static int run_fold(struct run *r, unsigned k, int64_t from, int64_t to)
{
	struct dataset *ds = r->ds;
	size_t *tr = NULL, *te = NULL, ntr, nte, i, base;
	int64_t horizon = r->task == TASK_RISK ? r->o->horizon : 0;
	int rc, m;

	rc = dataset_rows(&tr, &ntr, ds, r->task, 0, from, from, horizon);
	if (!rc)
		rc = dataset_rows(&te, &nte, ds, r->task, from, to, INT64_MAX,
				  0);
	if (rc || !nte || ntr < 100)
		goto out;
	rc = pool_reserve(&r->pool, nte);
	if (rc)
		goto out;
	base = r->pool.n;
	for (i = 0; i < nte; i++) {
		size_t row = te[i];

		r->pool.row[base + i] = row;
		r->pool.y[base + i] = r->task == TASK_FIX ? ds->fix[row]
							  : ds->bug[row];
		r->pool.fold[base + i] = k;
		r->pool.p[M_KEYWORD][base + i] = r->task == TASK_FIX
							 ? ds->keyword[row]
							 : ds->d->effort[row];
		r->pool.p[M_RANDOM][base + i] =
			(double)(metrics_rand(&r->rng) >> 11) /
			9007199254740992.0;
	}
	/* training labels as known at the cut */
	dataset_set_labels(ds, r->task, r->task == TASK_RISK ? from : 0);
	for (m = M_FULL; m <= M_KAMEI && !rc; m++) {
		say(r, m, k, NULL, 0);
		rc = train_predict(r->pool.p[m] + base, r, m, k, tr, ntr, te,
				   nte);
	}
	if (rc) {
		buf_addf(&r->notes, "- fold %u skipped: %s\n", k + 1,
			 pt_error_last());
		rc = 0;
		goto out;
	}
	r->pool.n += nte;
	i = r->pool.nfolds_run++;
	r->pool.fold_n[i] = nte;
	r->pool.fold_train[i] = ntr;
	r->pool.fold_from[i] = from;
	r->pool.fold_to[i] = to;
	r->pool.fold_pos[i] = 0;
	for (size_t j = 0; j < nte; j++)
		r->pool.fold_pos[i] += r->pool.y[base + j] != 0;
	for (m = 0; m < NMODELS; m++)
		r->pool.fold_auc[i][m] = metrics_roc_auc(r->pool.p[m] + base,
							 r->pool.y + base, nte);
out:
	free(tr);
	free(te);
	return rc;
}

/* ---- tasks ---------------------------------------------------------------- */

static int run_task(struct buf *md, struct dataset *ds,
		    const struct eval_opts *o, enum dataset_task t,
		    const char *dir)
{
	struct run r;
	int64_t t0, t1, span, cut0;
	unsigned k;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	buf_init(&r.notes, 0);
	r.ds = ds;
	r.o = o;
	r.task = t;
	r.rng = o->seed * 0x9e3779b97f4a7c15ull + (uint64_t)t;
	if (t == TASK_RISK && (o->tasks & 1))
		r.step0 = eval_steps(o) / 2;
	if (!ds->n)
		return pt_error_set(PT_EINVAL, "no rows to evaluate");
	t0 = ds->d->time[0];
	t1 = t == TASK_RISK ? ds->newest - o->horizon
			    : ds->d->time[ds->n - 1] + 1;
	span = t1 - t0;
	if (span <= 0)
		return pt_error_set(PT_EINVAL,
				    "history too short for a %s "
				    "evaluation with a %lld-day horizon",
				    dataset_task_name(t),
				    (long long)(o->horizon / DAY));
	cut0 = t0 + (int64_t)((double)span * (1 - o->test_share));
	for (k = 0; k < o->folds && k < 16 && !rc; k++) {
		int64_t from =
			cut0 + (t1 - cut0) * (int64_t)k / (int64_t)o->folds;
		int64_t to = cut0 +
			     (t1 - cut0) * (int64_t)(k + 1) / (int64_t)o->folds;

		rc = run_fold(&r, k, from, to);
	}
	if (!rc)
		done(&r, k);
	if (!rc)
		rc = eval_report_task(md, &r, dir);
	pool_clear(&r.pool);
	buf_free(&r.notes);
	return rc;
}

int eval_run(struct buf *md, struct dataset *ds, const struct eval_opts *o,
	     const char *out_dir)
{
	struct buf path = BUF_INIT;
	char d1[16], d2[16];
	size_t start = md->len;
	int rc = 0;

	if (mkdir(out_dir, 0755) && errno != EEXIST)
		return pt_error_set(PT_EIO, "cannot create '%s': %s", out_dir,
				    strerror(errno));
	eval_day_str(d1, sizeof(d1), ds->n ? ds->d->time[0] : 0);
	eval_day_str(d2, sizeof(d2), ds->n ? ds->d->time[ds->n - 1] : 0);
	buf_addf(md, "# Evaluation: %s\n\n", o->title);
	dataset_rows_note(md, ds);
	buf_addf(md,
		 ": %zu rows from %s to %s. "
		 "Walk-forward: the newest %.0f%% of the span is cut into %u "
		 "test periods; each is scored by models trained only on the "
		 "commits before it (risk: labelled as known at the cut, "
		 "commits younger than %lld days at the cut not used as "
		 "negatives; risk test periods end %lld days before the "
		 "newest commit).\n\nLabel regime: %s.%s%s%s\n",
		 ds->n, d1, d2, 100 * o->test_share, o->folds,
		 (long long)(o->horizon / DAY), (long long)(o->horizon / DAY),
		 ds->regime.why[0] ? ds->regime.why : "every row kept",
		 o->command ? "\n\nCommand: `" : "",
		 o->command ? o->command : "", o->command ? "`" : "");
	if (o->tasks & 1)
		rc = run_task(md, ds, o, TASK_FIX, out_dir);
	if (!rc && (o->tasks & 2)) {
		rc = run_task(md, ds, o, TASK_RISK, out_dir);
		if (!rc) {
			buf_addstr(md,
				   "\nOdds of a bug (every commit whose risk "
				   "label is final):\n\n| | with: bugs / commits"
				   " | without: bugs / commits | odds ratio | "
				   "95% CI (Woolf) |\n|---|---:|---:|---:|---|"
				   "\n");
			eval_odds_row(md,
				      TRAILER_KEY_REVIEWED
				      " or " TRAILER_KEY_ACKED,
				      ds, ds->has_reviewed);
			eval_odds_row(md, TRAILER_KEY_TESTED, ds,
				      ds->has_tested);
		}
	}
	if (!rc)
		rc = buf_addf(&path, "%s/eval.md", out_dir);
	if (!rc)
		rc = pt_write_file_atomic(path.ptr, md->ptr + start,
					  md->len - start);
	buf_free(&path);
	return rc;
}
