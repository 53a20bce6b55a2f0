/*
 * eval.c - the walk-forward evaluation and its report (see eval.h).  It
 * owns the split protocol, which models and baselines are compared, the
 * tables of the Markdown report and the SVG plots (written by hand: a
 * plot is a few hundred bytes of <polyline>).
 */
#include "scoring/model/eval.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "scoring/model/metrics.h"
#include "scoring/model/model.h"
#include "scoring/patch/trailer.h"

#define DAY 86400
#define TOPK_DAY 20
#define TOPK 100
#define EFFORT_SHARE 0.2
#define MAX_POINTS 300

enum {
	M_FULL, M_NOREVIEW, M_TEXT, M_KAMEI, M_KEYWORD, M_RANDOM, NMODELS
};

static const char *const mnames[NMODELS] = {
	"full: text LR + XGBoost, calibrated",
	"ablation: full without review/testing",
	"text-only LR",
	"Kamei-14 LR",
	"keyword/size rules (AUTOSEL-like)",
	"random",
};

static const char *const mshort[NMODELS] = {
	"full", "no-review", "text", "kamei", "keyword", "random",
};

/* Calibrated probabilities: Brier and ECE make sense. */
static int calibrated(int m)
{
	return m <= M_KAMEI;
}

void eval_opts_default(struct eval_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->folds = 4;
	o->test_share = 0.5;
	o->horizon = 365 * (int64_t)DAY;
	o->tasks = 3;
	o->seed = 1;
	o->bootstrap = 200;
	o->title = "repository";
}

/* ---- SVG ------------------------------------------------------------------ */

static const char *const colours[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#7f7f7f",
	"#8c564b", "#e377c2",
};

static void xml_text(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			buf_addstr(b, "&lt;");
		else if (*s == '>')
			buf_addstr(b, "&gt;");
		else if (*s == '&')
			buf_addstr(b, "&amp;");
		else
			buf_addch(b, *s);
	}
}

int eval_svg_plot(struct buf *out, const char *title, const char *xlabel,
		  const char *ylabel, const struct eval_series *s, size_t ns,
		  int diagonal)
{
	const double W = 520, H = 420, L = 60, R = 20, T = 40, B = 60;
	const double pw = W - L - R, ph = H - T - B;
	size_t i, j;
	int k;

	buf_addf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
		 "width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
		 "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
		 "fill=\"white\"/>\n<text x=\"%.0f\" y=\"22\" "
		 "text-anchor=\"middle\" font-size=\"14\">", W, H, W / 2);
	xml_text(out, title);
	buf_addf(out, "</text>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" "
		 "height=\"%.0f\" fill=\"none\" stroke=\"black\"/>\n",
		 L, T, pw, ph);
	for (k = 0; k <= 10; k += 2) {
		double v = k / 10.0;

		buf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			 "y2=\"%.1f\" stroke=\"#ddd\"/>\n<text x=\"%.1f\" "
			 "y=\"%.1f\" text-anchor=\"middle\">%.1f</text>\n"
			 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			 "stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
			 "text-anchor=\"end\">%.1f</text>\n",
			 L + v * pw, T, L + v * pw, T + ph, L + v * pw,
			 T + ph + 16, v, L, T + ph - v * ph, L + pw,
			 T + ph - v * ph, L - 6, T + ph - v * ph + 4, v);
	}
	buf_addf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
		 L + pw / 2, H - 20);
	xml_text(out, xlabel);
	buf_addf(out, "</text>\n<text x=\"16\" y=\"%.0f\" text-anchor=\"middle\""
		 " transform=\"rotate(-90 16 %.0f)\">", T + ph / 2, T + ph / 2);
	xml_text(out, ylabel);
	buf_addstr(out, "</text>\n");
	if (diagonal)
		buf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			 "y2=\"%.1f\" stroke=\"#999\" stroke-dasharray=\"4 4\"/>"
			 "\n", L, T + ph, L + pw, T);
	for (i = 0; i < ns; i++) {
		size_t step = s[i].n > MAX_POINTS ? s[i].n / MAX_POINTS : 1;
		const char *c = colours[i % 8];

		buf_addf(out, "<polyline fill=\"none\" stroke=\"%s\" "
			 "stroke-width=\"1.6\" points=\"", c);
		for (j = 0; j < s[i].n; j += step) {
			double x = s[i].x[j], y = s[i].y[j];

			if (isnan(x) || isnan(y))
				continue;
			buf_addf(out, "%.1f,%.1f ", L + x * pw, T + ph - y * ph);
		}
		if (s[i].n && (s[i].n - 1) % step)
			buf_addf(out, "%.1f,%.1f", L + s[i].x[s[i].n - 1] * pw,
				 T + ph - s[i].y[s[i].n - 1] * ph);
		buf_addf(out, "\"/>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" "
			 "height=\"3\" fill=\"%s\"/>\n<text x=\"%.0f\" "
			 "y=\"%.0f\">", L + 10, T + 12 + 15 * (double)i, c,
			 L + 28, T + 16 + 15 * (double)i);
		xml_text(out, s[i].name);
		buf_addstr(out, "</text>\n");
	}
	return buf_addstr(out, "</svg>\n");
}

/* ---- pooled predictions ----------------------------------------------------- */

struct pool {
	size_t n, cap;
	size_t *row;
	int *y;
	unsigned *fold;
	double *p[NMODELS];
	unsigned nfolds_run;
	double fold_auc[16][NMODELS];
	size_t fold_n[16], fold_pos[16];
	int64_t fold_from[16], fold_to[16];
	size_t fold_train[16];
};

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
#define R(f)                                                                 \
	do {                                                                 \
		p = pt_reallocarray(f, cap, sizeof(*f));                     \
		if (!p)                                                      \
			return PT_ENOMEM;                                    \
		f = p;                                                       \
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

struct run {
	struct dataset *ds;
	const struct eval_opts *o;
	enum dataset_task task;
	struct pool pool;
	uint64_t rng;
	struct buf notes;
};

static void say(struct run *r, const char *model, unsigned k)
{
	char msg[256];

	if (!r->o->progress)
		return;
	snprintf(msg, sizeof(msg), "%s, %s: fold %u of %u",
		 dataset_task_name(r->task), model, k + 1, r->o->folds);
	r->o->progress(msg, r->o->progress_ctx);
}

static int train_predict(double *p, struct run *r, int m, const size_t *tr,
			 size_t ntr, const size_t *te, size_t nte)
{
	unsigned char use[FEAT_NTAB];
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
		r->pool.p[M_KEYWORD][base + i] =
			r->task == TASK_FIX ? ds->keyword[row]
					    : ds->d->effort[row];
		r->pool.p[M_RANDOM][base + i] =
			(double)(metrics_rand(&r->rng) >> 11) / 9007199254740992.0;
	}
	/* training labels as known at the cut */
	dataset_set_labels(ds, r->task, r->task == TASK_RISK ? from : 0);
	for (m = M_FULL; m <= M_KAMEI && !rc; m++) {
		say(r, mshort[m], k);
		rc = train_predict(r->pool.p[m] + base, r, m, tr, ntr, te, nte);
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

/* ---- numbers ------------------------------------------------------------------- */

struct scores {
	double auc, ap, pday, pk, r20, r20d, popt, brier, ece;
};

static int gather(double **eff, int64_t **day, double **dens, struct run *r,
		  int m)
{
	struct pool *pl = &r->pool;
	size_t i;

	*eff = pt_calloc(pl->n + 1, sizeof(double));
	*day = pt_calloc(pl->n + 1, sizeof(int64_t));
	*dens = pt_calloc(pl->n + 1, sizeof(double));
	if (!*eff || !*day || !*dens)
		return PT_ENOMEM;
	for (i = 0; i < pl->n; i++) {
		size_t row = pl->row[i];

		(*eff)[i] = r->ds->d->effort[row];
		(*day)[i] = r->ds->d->time[row] / DAY;
		(*dens)[i] = pl->p[m][i] / (*eff)[i];
	}
	return 0;
}

static int score_model(struct scores *s, struct run *r, int m)
{
	struct pool *pl = &r->pool;
	double *eff = NULL, *dens = NULL;
	int64_t *day = NULL;
	const double *p = pl->p[m];
	int rc;

	rc = gather(&eff, &day, &dens, r, m);
	if (!rc) {
		s->auc = metrics_roc_auc(p, pl->y, pl->n);
		s->ap = metrics_avg_precision(p, pl->y, pl->n);
		s->pday = metrics_precision_at_k_grouped(p, pl->y, day, pl->n,
							 TOPK_DAY);
		s->pk = metrics_precision_at_k(p, pl->y, pl->n, TOPK);
		s->r20 = metrics_recall_at_effort(p, pl->y, eff, pl->n,
						  EFFORT_SHARE);
		s->r20d = metrics_recall_at_effort(dens, pl->y, eff, pl->n,
						   EFFORT_SHARE);
		s->popt = metrics_popt(dens, pl->y, eff, pl->n);
		s->brier = calibrated(m) ? metrics_brier(p, pl->y, pl->n) : NAN;
		s->ece = calibrated(m) ? metrics_ece(p, pl->y, pl->n,
						     METRICS_ECE_BINS)
				       : NAN;
	}
	free(eff);
	free(day);
	free(dens);
	return rc;
}

static int auc_interval(double *lo, double *hi, struct run *r, int a, int b)
{
	struct pool *pl = &r->pool;

	return metrics_auc_interval(lo, hi, pl->p[a], b >= 0 ? pl->p[b] : NULL,
				    pl->y, pl->n, r->o->bootstrap, 0.05,
				    r->o->seed);
}

static void num(struct buf *b, double x, int prec)
{
	if (isnan(x))
		buf_addstr(b, " n/a |");
	else
		buf_addf(b, " %.*f |", prec, x);
}

static void day_str(char *out, size_t cap, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, cap, "%Y-%m-%d", &tm);
}

/* ---- plots ------------------------------------------------------------------------ */

static int write_svg(const char *dir, const char *task, const char *kind,
		     struct buf *svg)
{
	struct buf path = BUF_INIT;
	int rc = buf_addf(&path, "%s/%s-%s.svg", dir, task, kind);

	if (!rc)
		rc = pt_write_file_atomic(path.ptr, svg->ptr, svg->len);
	buf_free(&path);
	buf_reset(svg);
	return rc;
}

static int plot_curves(struct run *r, const char *dir, int pr)
{
	struct pool *pl = &r->pool;
	struct eval_series s[NMODELS];
	double *x[NMODELS] = { 0 }, *y[NMODELS] = { 0 };
	struct buf svg = BUF_INIT;
	const char *task = dataset_task_name(r->task);
	int m, rc = 0;

	for (m = 0; m < NMODELS && !rc; m++) {
		rc = pr ? metrics_pr_curve(&x[m], &y[m], &s[m].n, pl->p[m],
					   pl->y, pl->n)
			: metrics_roc_curve(&x[m], &y[m], &s[m].n, pl->p[m],
					    pl->y, pl->n);
		s[m].name = mshort[m];
		s[m].x = x[m];
		s[m].y = y[m];
	}
	if (!rc)
		rc = eval_svg_plot(&svg, pr ? "precision-recall" : "ROC",
				   pr ? "recall" : "false positive rate",
				   pr ? "precision" : "true positive rate", s,
				   NMODELS, !pr);
	if (!rc)
		rc = write_svg(dir, task, pr ? "pr" : "roc", &svg);
	for (m = 0; m < NMODELS; m++) {
		free(x[m]);
		free(y[m]);
	}
	buf_free(&svg);
	return rc;
}

static int plot_reliability(struct run *r, const char *dir, struct buf *md)
{
	struct pool *pl = &r->pool;
	struct metrics_bin bins[NMODELS][METRICS_ECE_BINS];
	double x[NMODELS][METRICS_ECE_BINS], y[NMODELS][METRICS_ECE_BINS];
	struct eval_series s[NMODELS];
	struct buf svg = BUF_INIT;
	int m, b, ns = 0, rc;

	for (m = 0; m <= M_KAMEI; m++) {
		size_t k = 0;

		metrics_reliability(bins[m], METRICS_ECE_BINS, pl->p[m], pl->y,
				    pl->n);
		for (b = 0; b < METRICS_ECE_BINS; b++)
			if (bins[m][b].count) {
				x[m][k] = bins[m][b].mean_p;
				y[m][k++] = bins[m][b].mean_y;
			}
		s[ns].name = mshort[m];
		s[ns].x = x[m];
		s[ns].y = y[m];
		s[ns++].n = k;
	}
	rc = eval_svg_plot(&svg, "reliability (10 equal-width bins)",
			   "mean predicted probability", "observed frequency",
			   s, (size_t)ns, 1);
	if (!rc)
		rc = write_svg(dir, dataset_task_name(r->task), "reliability",
			       &svg);
	buf_free(&svg);
	buf_addstr(md, "\nReliability of the full model (10 equal-width bins "
		   "of p; ECE weighs each bin's |mean p - observed| by its "
		   "share of rows):\n\n| bin | rows | mean p | observed |\n"
		   "|---|---:|---:|---:|\n");
	for (b = 0; b < METRICS_ECE_BINS; b++) {
		struct metrics_bin *k = &bins[M_FULL][b];

		if (!k->count)
			continue;
		buf_addf(md, "| %.1f-%.1f | %zu | %.3f | %.3f |\n", k->lo,
			 k->hi, k->count, k->mean_p, k->mean_y);
	}
	return rc;
}

/* Cumulative share of positives against share of effort, best first. */
static int lift_curve(double **xo, double **yo, size_t *n, struct run *r,
		      const double *score, const double *eff)
{
	struct pool *pl = &r->pool;
	size_t *idx = pt_calloc(pl->n + 1, sizeof(*idx)), i, pos = 0;
	double total = 0, cx = 0, cy = 0, *x, *y;

	x = pt_calloc(pl->n + 1, sizeof(*x));
	y = pt_calloc(pl->n + 1, sizeof(*y));
	if (!idx || !x || !y) {
		free(idx);
		free(x);
		free(y);
		return PT_ENOMEM;
	}
	for (i = 0; i < pl->n; i++) {
		total += eff[i];
		pos += pl->y[i] != 0;
	}
	metrics_order(idx, score, eff, pl->n);
	for (i = 0; i < pl->n; i++) {
		cx += eff[idx[i]];
		cy += pl->y[idx[i]] != 0;
		x[i + 1] = total > 0 ? cx / total : 0;
		y[i + 1] = pos ? cy / (double)pos : 0;
	}
	free(idx);
	*xo = x;
	*yo = y;
	*n = pl->n + 1;
	return 0;
}

static int plot_lift(struct run *r, const char *dir)
{
	static const int which[] = { M_FULL, M_KAMEI, M_KEYWORD, M_RANDOM };
	struct pool *pl = &r->pool;
	struct eval_series s[6];
	double *x[6] = { 0 }, *y[6] = { 0 }, *eff, *sc[6] = { 0 };
	const char *names[6] = { "full (by p/LOC)", "kamei (by p/LOC)",
				 "keyword (by score/LOC)", "random",
				 "full (by p)", "optimal" };
	struct buf svg = BUF_INIT;
	int risk = r->task == TASK_RISK, rc = 0;
	size_t i, k;

	eff = pt_calloc(pl->n + 1, sizeof(*eff));
	for (k = 0; k < 6; k++)
		sc[k] = pt_calloc(pl->n + 1, sizeof(double));
	for (k = 0; k < 6 && eff; k++)
		if (!sc[k])
			rc = PT_ENOMEM;
	if (!eff)
		rc = PT_ENOMEM;
	for (i = 0; !rc && i < pl->n; i++) {
		eff[i] = risk ? r->ds->d->effort[pl->row[i]] : 1;
		for (k = 0; k < 4; k++)
			sc[k][i] = pl->p[which[k]][i] / eff[i];
		sc[4][i] = pl->p[M_FULL][i];
		sc[5][i] = (pl->y[i] != 0) / eff[i];
	}
	if (!risk) {
		names[0] = "full";
		names[1] = "kamei";
		names[2] = "keyword";
	}
	for (k = 0; k < 6 && !rc; k++) {
		rc = lift_curve(&x[k], &y[k], &s[k].n, r, sc[k], eff);
		s[k].name = names[k];
		s[k].x = x[k];
		s[k].y = y[k];
	}
	if (!rc)
		rc = eval_svg_plot(&svg, risk ? "lift: bugs found per share of "
					       "changed lines"
					     : "lift: fixes found per share of "
					       "commits",
				   risk ? "share of changed lines inspected"
					: "share of commits inspected",
				   "share of positives found", s, 6, 1);
	if (!rc)
		rc = write_svg(dir, dataset_task_name(r->task), "lift", &svg);
	for (k = 0; k < 6; k++) {
		free(x[k]);
		free(y[k]);
		free(sc[k]);
	}
	free(eff);
	buf_free(&svg);
	return rc;
}

/* ---- report ------------------------------------------------------------------------ */

static void odds_row(struct buf *md, const char *what, struct dataset *ds,
		     const unsigned char *has)
{
	double a = 0, b = 0, c = 0, d = 0, or, se;
	size_t i;

	/* every row whose risk label is final: bug, or older than horizon */
	for (i = 0; i < ds->n; i++) {
		if (!ds->negok[i] && !ds->bug[i])
			continue;
		if (has[i]) {
			if (ds->bug[i])
				a++;
			else
				b++;
		} else if (ds->bug[i]) {
			c++;
		} else {
			d++;
		}
	}
	buf_addf(md, "| %s | %.0f / %.0f | %.0f / %.0f |", what, a, a + b, c,
		 c + d);
	if (!a || !b || !c || !d) {
		buf_addstr(md, " n/a | |\n");
		return;
	}
	or = (a / b) / (c / d);
	se = sqrt(1 / a + 1 / b + 1 / c + 1 / d);
	buf_addf(md, " %.2f | [%.2f, %.2f] |\n", or, exp(log(or) - 1.96 * se),
		 exp(log(or) + 1.96 * se));
}

static int report_task(struct buf *md, struct run *r, const char *dir)
{
	struct pool *pl = &r->pool;
	struct scores s[NMODELS];
	double lo, hi, dlo, dhi, klo, khi;
	size_t i, pos = 0;
	char d1[16], d2[16];
	int m, rc = 0;

	for (i = 0; i < pl->n; i++)
		pos += pl->y[i] != 0;
	buf_addf(md, "\n## %s: %s\n\n", r->o->title,
		 r->task == TASK_FIX ? "fix detection (label: Fixes: or "
				       "Cc: stable, hidden from the model)"
				     : "bug risk (label: bug-introducing)");
	if (!pl->n || !pos || pos == pl->n) {
		buf_addf(md, "No usable test rows (%zu rows, %zu positive).\n%s",
			 pl->n, pos, r->notes.ptr);
		return 0;
	}
	for (m = 0; m < NMODELS && !rc; m++)
		rc = score_model(&s[m], r, m);
	if (!rc)
		rc = auc_interval(&lo, &hi, r, M_FULL, -1);
	if (!rc)
		rc = auc_interval(&klo, &khi, r, M_KEYWORD, -1);
	if (!rc)
		rc = auc_interval(&dlo, &dhi, r, M_FULL, M_KEYWORD);
	if (rc)
		return rc;
	buf_addf(md, "Pooled over %u walk-forward test periods: %zu commits, "
		 "%zu positive (%.1f%%).\n\n", pl->nfolds_run, pl->n, pos,
		 100.0 * (double)pos / (double)pl->n);
	buf_addstr(md, "| model | ROC-AUC | PR-AUC | P@20/day | P@100 | "
		   "recall@20% LOC (by p) | recall@20% LOC (by p/LOC) | Popt | "
		   "Brier | ECE |\n|---|---:|---:|---:|---:|---:|---:|---:|"
		   "---:|---:|\n");
	for (m = 0; m < NMODELS; m++) {
		buf_addf(md, "| %s |", mnames[m]);
		num(md, s[m].auc, 3);
		num(md, s[m].ap, 3);
		num(md, s[m].pday, 3);
		num(md, s[m].pk, 2);
		num(md, s[m].r20, 3);
		num(md, s[m].r20d, 3);
		num(md, s[m].popt, 3);
		num(md, s[m].brier, 4);
		num(md, s[m].ece, 4);
		buf_addch(md, '\n');
	}
	buf_addf(md, "\nROC-AUC with %u-resample bootstrap 95%% intervals: "
		 "full %.3f [%.3f, %.3f]; keyword %.3f [%.3f, %.3f]; full "
		 "minus keyword %+.3f [%+.3f, %+.3f].\n", r->o->bootstrap,
		 s[M_FULL].auc, lo, hi, s[M_KEYWORD].auc, klo, khi,
		 s[M_FULL].auc - s[M_KEYWORD].auc, dlo, dhi);
	buf_addf(md, "Review/testing ablation: ROC-AUC %+.3f, PR-AUC %+.3f "
		 "when those columns are removed.\n",
		 s[M_NOREVIEW].auc - s[M_FULL].auc,
		 s[M_NOREVIEW].ap - s[M_FULL].ap);
	buf_addstr(md, "\n| period | train rows | test rows | positives | "
		   "full | no-review | text | kamei | keyword |\n"
		   "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < pl->nfolds_run; i++) {
		day_str(d1, sizeof(d1), pl->fold_from[i]);
		day_str(d2, sizeof(d2), pl->fold_to[i]);
		buf_addf(md, "| %s..%s | %zu | %zu | %zu |", d1, d2,
			 pl->fold_train[i], pl->fold_n[i], pl->fold_pos[i]);
		for (m = 0; m <= M_KEYWORD; m++)
			num(md, pl->fold_auc[i][m], 3);
		buf_addch(md, '\n');
	}
	buf_addstr(md, r->notes.ptr);
	rc = plot_reliability(r, dir, md);
	if (!rc)
		rc = plot_curves(r, dir, 0);
	if (!rc)
		rc = plot_curves(r, dir, 1);
	if (!rc)
		rc = plot_lift(r, dir);
	buf_addf(md, "\n![ROC](%1$s-roc.svg) ![PR](%1$s-pr.svg) "
		 "![reliability](%1$s-reliability.svg) ![lift](%1$s-lift.svg)"
		 "\n", dataset_task_name(r->task));
	return rc;
}

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
	if (!ds->n)
		return pt_error_set(PT_EINVAL, "no rows to evaluate");
	t0 = ds->d->time[0];
	t1 = t == TASK_RISK ? ds->newest - o->horizon
			    : ds->d->time[ds->n - 1] + 1;
	span = t1 - t0;
	if (span <= 0)
		return pt_error_set(PT_EINVAL, "history too short for a %s "
				    "evaluation with a %lld-day horizon",
				    dataset_task_name(t),
				    (long long)(o->horizon / DAY));
	cut0 = t0 + (int64_t)((double)span * (1 - o->test_share));
	for (k = 0; k < o->folds && k < 16 && !rc; k++) {
		int64_t from = cut0 + (t1 - cut0) * (int64_t)k /
					      (int64_t)o->folds;
		int64_t to = cut0 + (t1 - cut0) * (int64_t)(k + 1) /
					    (int64_t)o->folds;

		rc = run_fold(&r, k, from, to);
	}
	if (!rc)
		rc = report_task(md, &r, dir);
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
	day_str(d1, sizeof(d1), ds->n ? ds->d->time[0] : 0);
	day_str(d2, sizeof(d2), ds->n ? ds->d->time[ds->n - 1] : 0);
	buf_addf(md, "# Evaluation: %s\n\n%zu mined commits from %s to %s. "
		 "Walk-forward: the newest %.0f%% of the span is cut into %u "
		 "test periods; each is scored by models trained only on the "
		 "commits before it (risk: labelled as known at the cut, "
		 "commits younger than %lld days at the cut not used as "
		 "negatives; risk test periods end %lld days before the "
		 "newest commit).\n\nLabel regime: %s.%s%s%s\n", o->title,
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
			buf_addstr(md, "\nOdds of a bug (every commit whose risk "
				   "label is final):\n\n| | with: bugs / commits"
				   " | without: bugs / commits | odds ratio | "
				   "95% CI (Woolf) |\n|---|---:|---:|---:|---|"
				   "\n");
			odds_row(md, TRAILER_KEY_REVIEWED " or "
				 TRAILER_KEY_ACKED, ds, ds->has_reviewed);
			odds_row(md, TRAILER_KEY_TESTED, ds, ds->has_tested);
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
