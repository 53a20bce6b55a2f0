/*
 * eval_report.c - the evaluation's report (see eval.h): from the pooled
 * predictions of a task's folds (eval_int.h), the Markdown tables of
 * scores, intervals, folds, reliability and odds, and the SVG plots
 * (written by hand: a plot is a few hundred bytes of <polyline>).  The
 * folds themselves are eval.c's.
 */
#include "scoring/model/eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "scoring/model/eval_int.h"
#include "scoring/model/metrics.h"

#define TOPK_DAY 20
#define TOPK 100
#define EFFORT_SHARE 0.2
#define MAX_POINTS 300

/* Calibrated probabilities: Brier and ECE make sense. */
static int calibrated(int m)
{
	return m <= M_KAMEI;
}

/* ---- SVG ------------------------------------------------------------------ */

static const char *const colours[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
	"#9467bd", "#7f7f7f", "#8c564b", "#e377c2",
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

	buf_addf(out,
		 "<svg xmlns=\"http://www.w3.org/2000/svg\" "
		 "width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
		 "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
		 "fill=\"white\"/>\n<text x=\"%.0f\" y=\"22\" "
		 "text-anchor=\"middle\" font-size=\"14\">",
		 W, H, W / 2);
	xml_text(out, title);
	buf_addf(out,
		 "</text>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" "
		 "height=\"%.0f\" fill=\"none\" stroke=\"black\"/>\n",
		 L, T, pw, ph);
	for (k = 0; k <= 10; k += 2) {
		double v = k / 10.0;

		buf_addf(out,
			 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
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
	buf_addf(out,
		 "</text>\n<text x=\"16\" y=\"%.0f\" text-anchor=\"middle\""
		 " transform=\"rotate(-90 16 %.0f)\">",
		 T + ph / 2, T + ph / 2);
	xml_text(out, ylabel);
	buf_addstr(out, "</text>\n");
	if (diagonal)
		buf_addf(out,
			 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			 "y2=\"%.1f\" stroke=\"#999\" stroke-dasharray=\"4 4\"/>"
			 "\n",
			 L, T + ph, L + pw, T);
	for (i = 0; i < ns; i++) {
		size_t step = s[i].n > MAX_POINTS ? s[i].n / MAX_POINTS : 1;
		const char *c = colours[i % 8];

		buf_addf(out,
			 "<polyline fill=\"none\" stroke=\"%s\" "
			 "stroke-width=\"1.6\" points=\"",
			 c);
		for (j = 0; j < s[i].n; j += step) {
			double x = s[i].x[j], y = s[i].y[j];

			if (isnan(x) || isnan(y))
				continue;
			buf_addf(out, "%.1f,%.1f ", L + x * pw,
				 T + ph - y * ph);
		}
		if (s[i].n && (s[i].n - 1) % step)
			buf_addf(out, "%.1f,%.1f", L + s[i].x[s[i].n - 1] * pw,
				 T + ph - s[i].y[s[i].n - 1] * ph);
		buf_addf(out,
			 "\"/>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" "
			 "height=\"3\" fill=\"%s\"/>\n<text x=\"%.0f\" "
			 "y=\"%.0f\">",
			 L + 10, T + 12 + 15 * (double)i, c, L + 28,
			 T + 16 + 15 * (double)i);
		xml_text(out, s[i].name);
		buf_addstr(out, "</text>\n");
	}
	return buf_addstr(out, "</svg>\n");
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

/* A report stage of the task: "fix: metrics: 2/6 models". */
static void say(const struct run *r, const char *what, const char *unit,
		size_t done, size_t total)
{
	struct pt_progress_report rep = { NULL, unit, done, total, 0, NULL };
	char stage[64];

	snprintf(stage, sizeof(stage), "%s: %s", dataset_task_name(r->task),
		 what);
	rep.stage = stage;
	pt_progress_report(&r->o->progress, &rep);
}

/* The three intervals count as one stage of 3 x B resamples. */
#define NINTERVALS 3

struct boot_say {
	const struct run *r;
	size_t base; /* resamples of the intervals before this one */
};

static void boot_say(const struct pt_progress_report *in, void *ctx)
{
	const struct boot_say *b = ctx;

	say(b->r, "bootstrap", "resamples", b->base + in->done,
	    (size_t)NINTERVALS * b->r->o->bootstrap);
}

/* The i-th interval (from 0) of the report. */
static int auc_interval(double *lo, double *hi, struct run *r, int a, int b,
			unsigned i)
{
	struct pool *pl = &r->pool;
	struct boot_say bs = { r, (size_t)i * r->o->bootstrap };
	struct pt_progress p = { boot_say, &bs };

	return metrics_auc_interval(lo, hi, pl->p[a], b >= 0 ? pl->p[b] : NULL,
				    pl->y, pl->n, r->o->bootstrap, 0.05,
				    r->o->seed, &p);
}

static void num(struct buf *b, double x, int prec)
{
	if (isnan(x))
		buf_addstr(b, " n/a |");
	else
		buf_addf(b, " %.*f |", prec, x);
}

void eval_day_str(char *out, size_t cap, int64_t t)
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
		s[m].name = eval_mshort[m];
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
		s[ns].name = eval_mshort[m];
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
	const char *names[6] = {
		"full (by p/LOC)", "kamei (by p/LOC)", "keyword (by score/LOC)",
		"random",	   "full (by p)",      "optimal"
	};
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
		rc = eval_svg_plot(&svg,
				   risk ? "lift: bugs found per share of "
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

void eval_odds_row(struct buf *md, const char *what, struct dataset *ds,
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

int eval_report_task(struct buf *md, struct run *r, const char *dir)
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
		buf_addf(md,
			 "No usable test rows (%zu rows, %zu positive).\n%s",
			 pl->n, pos, r->notes.ptr);
		return 0;
	}
	for (m = 0; m < NMODELS && !rc; m++) {
		say(r, "metrics", "models", (size_t)m, NMODELS);
		rc = score_model(&s[m], r, m);
	}
	if (!rc)
		say(r, "metrics", "models", NMODELS, NMODELS);
	if (!rc)
		rc = auc_interval(&lo, &hi, r, M_FULL, -1, 0);
	if (!rc)
		rc = auc_interval(&klo, &khi, r, M_KEYWORD, -1, 1);
	if (!rc)
		rc = auc_interval(&dlo, &dhi, r, M_FULL, M_KEYWORD, 2);
	if (rc)
		return rc;
	buf_addf(md,
		 "Pooled over %u walk-forward test periods: %zu commits, "
		 "%zu positive (%.1f%%).\n\n",
		 pl->nfolds_run, pl->n, pos,
		 100.0 * (double)pos / (double)pl->n);
	buf_addstr(md,
		   "| model | ROC-AUC | PR-AUC | P@20/day | P@100 | "
		   "recall@20% LOC (by p) | recall@20% LOC (by p/LOC) | Popt | "
		   "Brier | ECE |\n|---|---:|---:|---:|---:|---:|---:|---:|"
		   "---:|---:|\n");
	for (m = 0; m < NMODELS; m++) {
		buf_addf(md, "| %s |", eval_mnames[m]);
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
	buf_addf(md,
		 "\nROC-AUC with %u-resample bootstrap 95%% intervals: "
		 "full %.3f [%.3f, %.3f]; keyword %.3f [%.3f, %.3f]; full "
		 "minus keyword %+.3f [%+.3f, %+.3f].\n",
		 r->o->bootstrap, s[M_FULL].auc, lo, hi, s[M_KEYWORD].auc, klo,
		 khi, s[M_FULL].auc - s[M_KEYWORD].auc, dlo, dhi);
	buf_addf(md,
		 "Review/testing ablation: ROC-AUC %+.3f, PR-AUC %+.3f "
		 "when those columns are removed.\n",
		 s[M_NOREVIEW].auc - s[M_FULL].auc,
		 s[M_NOREVIEW].ap - s[M_FULL].ap);
	buf_addstr(md, "\n| period | train rows | test rows | positives | "
		       "full | no-review | text | kamei | keyword |\n"
		       "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < pl->nfolds_run; i++) {
		eval_day_str(d1, sizeof(d1), pl->fold_from[i]);
		eval_day_str(d2, sizeof(d2), pl->fold_to[i]);
		buf_addf(md, "| %s..%s | %zu | %zu | %zu |", d1, d2,
			 pl->fold_train[i], pl->fold_n[i], pl->fold_pos[i]);
		for (m = 0; m <= M_KEYWORD; m++)
			num(md, pl->fold_auc[i][m], 3);
		buf_addch(md, '\n');
	}
	buf_addstr(md, r->notes.ptr);
	say(r, "plots", NULL, 0, 0);
	rc = plot_reliability(r, dir, md);
	if (!rc)
		rc = plot_curves(r, dir, 0);
	if (!rc)
		rc = plot_curves(r, dir, 1);
	if (!rc)
		rc = plot_lift(r, dir);
	buf_addf(md,
		 "\n![ROC](%1$s-roc.svg) ![PR](%1$s-pr.svg) "
		 "![reliability](%1$s-reliability.svg) ![lift](%1$s-lift.svg)"
		 "\n",
		 dataset_task_name(r->task));
	return rc;
}
