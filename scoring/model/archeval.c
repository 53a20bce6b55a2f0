/*
 * archeval.c - walk-forward evaluation and training of the archive model
 * (see archeval.h): the folds and the models compared on them.  The
 * report is archeval_report.c's.
 */
#include "scoring/model/archeval.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scoring/model/archeval_int.h"
#include "scoring/model/metrics.h"

const char *const archeval_mnames[AE_NMODELS] = {
	"full: subject LR + XGBoost on size and list features, calibrated",
	"without review content",
	"without reviewer record and role",
	"without testing",
	"without iterations",
	"without test bots",
	"without author record",
	"without review content and testing",
	"without any list feature (size + subject)",
	"LR on size and every list feature",
	"size-only LR (lines added/removed, files, series)",
	"text-only LR (subject words)",
	"size rule (more changed lines = riskier)",
	"random",
};

const char *const archeval_mshort[AE_NMODELS] = {
	"full",	 "-review", "-record",	"-testing", "-iter",
	"-bots", "-author", "-revtest", "-list",    "lr-all",
	"size",	 "text",    "rule",	"random",
};

void archeval_opts_default(struct archeval_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->folds = 4;
	o->test_share = 0.5;
	o->horizon = 365 * (int64_t)86400;
	o->seed = 1;
	o->bootstrap = 200;
	/* chosen on a development period (eval --archive --until
	   2023-06-07 on nine kernel lists, docs/EVALUATION.md) */
	o->depth = 3;
	o->min_child_weight = 20;
	o->title = "imported lists";
}

/* ---- models ------------------------------------------------------------ */

/* The columns model m may use (the full model: all). */
static void model_mask(unsigned char *use, int m)
{
	size_t c;

	for (c = 0; c < ARCHDS_NTAB; c++) {
		int g = archds_group(c);

		switch (m) {
		case AE_NO_REVIEW:
			use[c] = g != LISTFEAT_G_REVIEW;
			break;
		case AE_NO_RECORD:
			use[c] = g != LISTFEAT_G_RECORD;
			break;
		case AE_NO_TESTING:
			use[c] = g != LISTFEAT_G_TESTING;
			break;
		case AE_NO_ITER:
			use[c] = g != LISTFEAT_G_ITER;
			break;
		case AE_NO_BOTS:
			use[c] = g != LISTFEAT_G_BOTS;
			break;
		case AE_NO_AUTHOR:
			use[c] = g != LISTFEAT_G_AUTHOR;
			break;
		case AE_NO_REVTEST:
			use[c] = g != LISTFEAT_G_REVIEW &&
				 g != LISTFEAT_G_TESTING;
			break;
		case AE_NO_LIST:
		case AE_SIZE:
			use[c] = g == ARCHDS_G_SIZE;
			break;
		default:
			use[c] = 1;
		}
	}
}

static void model_setup(struct model_params *mp, unsigned char *use, int m,
			const struct archeval_opts *o)
{
	model_params_default(mp, m == AE_SIZE || m == AE_LR_ALL
					 ? MODEL_KIND_TABLR
				 : m == AE_TEXT ? MODEL_KIND_TEXT
						: MODEL_KIND_FULL);
	model_mask(use, m);
	mp->task = "risk-archive";
	mp->tab_use = use;
	if (o->depth)
		mp->depth = o->depth;
	if (o->min_child_weight > 0)
		mp->min_child_weight = o->min_child_weight;
}

static int train_predict(double *p, struct aerun *r, int m, const size_t *tr,
			 size_t ntr, const size_t *te, size_t nte)
{
	unsigned char use[ARCHDS_NTAB];
	struct model_params mp;
	struct pt_model *model = NULL;
	int rc;

	model_setup(&mp, use, m, r->o);
	rc = model_train(&model, r->ds->d, tr, ntr, &mp);
	if (!rc)
		rc = model_predict_rows(p, model, r->ds->d, te, nte);
	model_free(model);
	return rc;
}

/* ---- folds ------------------------------------------------------------- */

static int pool_reserve(struct aepool *pl, size_t extra)
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
	for (m = 0; m < AE_NMODELS; m++)
		R(pl->p[m]);
#undef R
	pl->cap = cap;
	return 0;
}

static void pool_clear(struct aepool *pl)
{
	int m;

	free(pl->row);
	free(pl->y);
	free(pl->fold);
	for (m = 0; m < AE_NMODELS; m++)
		free(pl->p[m]);
	memset(pl, 0, sizeof(*pl));
}

static void say(struct aerun *r, int m, unsigned k)
{
	struct pt_progress_report rep = {
		"evaluating", "models", 0, 0, 0, NULL
	};
	char msg[96];

	snprintf(msg, sizeof(msg), "%s: fold %u of %u", archeval_mshort[m],
		 k + 1, r->o->folds);
	rep.done = (size_t)k * AE_TRAINED + (size_t)m;
	rep.total = (size_t)r->o->folds * AE_TRAINED;
	rep.note = msg;
	pt_progress_report(&r->o->progress, &rep);
}

static void fold_record(struct aerun *r, size_t base, size_t nte, size_t ntr,
			int64_t from, int64_t to)
{
	struct aepool *pl = &r->pool;
	unsigned i = pl->nfolds_run++;
	size_t j;
	int m;

	pl->fold_n[i] = nte;
	pl->fold_train[i] = ntr;
	pl->fold_from[i] = from;
	pl->fold_to[i] = to;
	pl->fold_pos[i] = 0;
	for (j = 0; j < nte; j++)
		pl->fold_pos[i] += pl->y[base + j] != 0;
	for (m = 0; m < AE_NMODELS; m++)
		pl->fold_auc[i][m] =
			metrics_roc_auc(pl->p[m] + base, pl->y + base, nte);
}

static int run_fold(struct aerun *r, unsigned k, int64_t from, int64_t to)
{
	struct archds *ds = r->ds;
	size_t *tr = NULL, *te = NULL, ntr, nte, base, i;
	int m, rc;

	rc = archds_rows(&tr, &ntr, ds, INT64_MIN, from, from, r->o->horizon);
	if (!rc)
		rc = archds_rows(&te, &nte, ds, from, to, INT64_MAX, 0);
	if (rc || !nte || ntr < 100)
		goto out;
	rc = pool_reserve(&r->pool, nte);
	if (rc)
		goto out;
	base = r->pool.n;
	for (i = 0; i < nte; i++) {
		size_t row = te[i];

		r->pool.row[base + i] = row;
		r->pool.y[base + i] = ds->bug[row];
		r->pool.fold[base + i] = k;
		r->pool.p[AE_RULE][base + i] = ds->d->effort[row];
		r->pool.p[AE_RANDOM][base + i] =
			(double)(metrics_rand(&r->rng) >> 11) /
			9007199254740992.0;
	}
	archds_set_labels(ds, from); /* training labels as known at the cut */
	for (m = 0; m < AE_TRAINED && !rc; m++) {
		say(r, m, k);
		rc = train_predict(r->pool.p[m] + base, r, m, tr, ntr, te, nte);
	}
	if (rc == PT_ENOMEM)
		goto out;
	if (rc) {
		buf_addf(&r->notes, "- fold %u skipped: %s\n", k + 1,
			 pt_error_last());
		rc = 0;
		goto out;
	}
	r->pool.n += nte;
	fold_record(r, base, nte, ntr, from, to);
out:
	free(tr);
	free(te);
	return rc;
}

int archeval_run(struct buf *md, struct archds *ds,
		 const struct archeval_opts *o, const char *out_dir)
{
	struct aerun r;
	int64_t t0, t1, cut0;
	unsigned k;
	int rc = 0;

	if (!ds->n)
		return pt_error_set(PT_EINVAL, "no applied postings to "
					       "evaluate; import list archives "
					       "first (archive import)");
	t0 = ds->d->time[0];
	t1 = ds->newest - o->horizon;
	if (t1 <= t0)
		return pt_error_set(PT_EINVAL,
				    "the archives span too little time for a "
				    "%lld-day label horizon",
				    (long long)(o->horizon / 86400));
	if (mkdir(out_dir, 0755) && errno != EEXIST)
		return pt_error_set(PT_EIO, "cannot create '%s': %s", out_dir,
				    strerror(errno));
	memset(&r, 0, sizeof(r));
	buf_init(&r.notes, 0);
	r.ds = ds;
	r.o = o;
	r.rng = o->seed * 0x9e3779b97f4a7c15ull;
	cut0 = t0 + (int64_t)((double)(t1 - t0) * (1 - o->test_share));
	for (k = 0; k < o->folds && k < AE_MAX_FOLDS && !rc; k++) {
		int64_t from =
			cut0 + (t1 - cut0) * (int64_t)k / (int64_t)o->folds;
		int64_t to = cut0 +
			     (t1 - cut0) * (int64_t)(k + 1) / (int64_t)o->folds;

		rc = run_fold(&r, k, from, to);
	}
	if (!rc)
		rc = archeval_report(md, &r, out_dir);
	pool_clear(&r.pool);
	buf_free(&r.notes);
	return rc;
}

int archeval_train(struct pt_model **out, size_t *rows, struct archds *ds,
		   const struct archeval_opts *o,
		   void (*progress)(const char *phase, double done, void *ctx),
		   void *progress_ctx)
{
	unsigned char use[ARCHDS_NTAB];
	struct model_params mp;
	size_t *idx = NULL, n;
	int rc;

	*out = NULL;
	archds_set_labels(ds, INT64_MAX);
	rc = archds_rows(&idx, &n, ds, INT64_MIN, INT64_MAX, ds->newest,
			 o->horizon);
	if (rc)
		return rc;
	model_setup(&mp, use, AE_FULL, o);
	mp.progress = progress;
	mp.progress_ctx = progress_ctx;
	rc = model_train(out, ds->d, idx, n, &mp);
	*rows = n;
	free(idx);
	return rc;
}
