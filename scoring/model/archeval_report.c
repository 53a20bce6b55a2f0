/*
 * archeval_report.c - the report of `eval --archive` (see archeval.h):
 * the models' table, the ablation, the folds, the odds of each seed
 * signal, the targets of issue 22 stated as met or missed, and the ROC
 * and precision-recall plots.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/model/archeval_int.h"
#include "scoring/model/eval.h"
#include "scoring/model/metrics.h"

#define ECE_BINS 10

static void day_str(char *out, size_t cap, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d", &tm))
		snprintf(out, cap, "?");
}

/* ---- recall when the top share is flagged ------------------------------ */

struct topk {
	const double *score;
	const int *y;
	double *s;  /* scratch: the resample's scores */
	int *yy;    /* ... and labels */
	double *tb; /* ... and tie-breaks */
	size_t *idx;
	const double *tiebreak;
};

/* Recall of positives among the top ceil(share * n) by score. */
static double recall_top(const double *score, const int *y,
			 const double *tiebreak, size_t *idx, size_t n,
			 double share)
{
	size_t i, k, pos = 0, hit = 0;

	for (i = 0; i < n; i++) {
		idx[i] = i;
		pos += y[i] != 0;
	}
	if (!pos)
		return NAN;
	metrics_order(idx, score, tiebreak, n);
	k = (size_t)ceil(share * (double)n);
	for (i = 0; i < k && i < n; i++)
		hit += y[idx[i]] != 0;
	return (double)hit / (double)pos;
}

static double topk_stat(const size_t *idx, size_t n, void *ctx)
{
	struct topk *t = ctx;
	size_t i;

	for (i = 0; i < n; i++) {
		t->s[i] = t->score[idx[i]];
		t->yy[i] = t->y[idx[i]];
		t->tb[i] = t->tiebreak[idx[i]];
	}
	return recall_top(t->s, t->yy, t->tb, t->idx, n, ARCHEVAL_FLAG_SHARE);
}

static int recall_interval(double *v, double *lo, double *hi, struct aerun *r,
			   int m)
{
	struct aepool *pl = &r->pool;
	struct topk t = { pl->p[m], pl->y,	     NULL, NULL, NULL,
			  NULL,	    pl->p[AE_RANDOM] };
	int rc = PT_ENOMEM;

	t.s = pt_calloc(pl->n + 1, sizeof(*t.s));
	t.yy = pt_calloc(pl->n + 1, sizeof(*t.yy));
	t.tb = pt_calloc(pl->n + 1, sizeof(*t.tb));
	t.idx = pt_calloc(pl->n + 1, sizeof(*t.idx));
	if (t.s && t.yy && t.tb && t.idx) {
		*v = recall_top(pl->p[m], pl->y, pl->p[AE_RANDOM], t.idx, pl->n,
				ARCHEVAL_FLAG_SHARE);
		rc = metrics_bootstrap(lo, hi, topk_stat, &t, pl->n,
				       r->o->bootstrap, 0.05, r->o->seed + 7,
				       &r->o->progress);
	}
	free(t.s);
	free(t.yy);
	free(t.tb);
	free(t.idx);
	return rc;
}

/* ---- tables --------------------------------------------------------------- */

static int is_probability(int m)
{
	return m < AE_RULE;
}

static int model_row(struct buf *md, struct aerun *r, int m, double *rec)
{
	struct aepool *pl = &r->pool;
	double auc, lo, hi, dlo, dhi, rlo, rhi;
	int rc;

	auc = metrics_roc_auc(pl->p[m], pl->y, pl->n);
	rc = metrics_auc_interval(&lo, &hi, pl->p[m], NULL, pl->y, pl->n,
				  r->o->bootstrap, 0.05, r->o->seed,
				  &r->o->progress);
	if (!rc)
		rc = recall_interval(rec, &rlo, &rhi, r, m);
	if (!rc && m != AE_SIZE)
		rc = metrics_auc_interval(&dlo, &dhi, pl->p[m], pl->p[AE_SIZE],
					  pl->y, pl->n, r->o->bootstrap, 0.05,
					  r->o->seed, &r->o->progress);
	if (rc)
		return rc;
	buf_addf(md, "| %s | %.3f [%.3f, %.3f] | %.3f |", archeval_mnames[m],
		 auc, lo, hi, metrics_avg_precision(pl->p[m], pl->y, pl->n));
	if (is_probability(m))
		buf_addf(md, " %.3f |",
			 metrics_ece(pl->p[m], pl->y, pl->n, ECE_BINS));
	else
		buf_addstr(md, " — |");
	buf_addf(md, " %.3f [%.3f, %.3f] |", *rec, rlo, rhi);
	if (m == AE_SIZE)
		buf_addstr(md, " — |\n");
	else
		buf_addf(md, " %+.3f [%+.3f, %+.3f] |\n",
			 auc - metrics_roc_auc(pl->p[AE_SIZE], pl->y, pl->n),
			 dlo, dhi);
	return 0;
}

static int models_table(struct buf *md, struct aerun *r, double *rec)
{
	static const int order[] = { AE_FULL, AE_NO_LIST, AE_LR_ALL, AE_SIZE,
				     AE_TEXT, AE_RULE,	  AE_RANDOM };
	size_t i;
	int rc = 0;

	buf_addf(md,
		 "| model | ROC-AUC [95%% CI] | PR-AUC | ECE | recall at %.0f%% "
		 "flagged [95%% CI] | ROC-AUC − size-only [95%% CI] |\n"
		 "|---|---|---:|---:|---|---|\n",
		 100 * ARCHEVAL_FLAG_SHARE);
	for (i = 0; i < sizeof(order) / sizeof(order[0]) && !rc; i++)
		rc = model_row(md, r, order[i], &rec[order[i]]);
	return rc;
}

static int ablation_table(struct buf *md, struct aerun *r)
{
	struct aepool *pl = &r->pool;
	double full = metrics_roc_auc(pl->p[AE_FULL], pl->y, pl->n);
	double auc, lo, hi;
	int m, rc = 0;

	buf_addstr(md, "\n| left out of the full model | ROC-AUC | the "
		       "group's worth: full − this [95% CI] |\n|---|---:|---|"
		       "\n");
	for (m = AE_NO_REVIEW; m <= AE_NO_LIST && !rc; m++) {
		auc = metrics_roc_auc(pl->p[m], pl->y, pl->n);
		rc = metrics_auc_interval(&lo, &hi, pl->p[AE_FULL], pl->p[m],
					  pl->y, pl->n, r->o->bootstrap, 0.05,
					  r->o->seed, &r->o->progress);
		if (!rc)
			buf_addf(md, "| %s | %.3f | %+.3f [%+.3f, %+.3f] |\n",
				 archeval_mnames[m] + strlen("without "), auc,
				 full - auc, lo, hi);
	}
	return rc;
}

static void folds_table(struct buf *md, struct aerun *r)
{
	struct aepool *pl = &r->pool;
	char d1[16], d2[16];
	unsigned i;

	buf_addstr(md, "\n| test period | trained on | tested | bug-introducing"
		       " | full | size-only | text-only |\n|---|---:|---:|---:"
		       "|---:|---:|---:|\n");
	for (i = 0; i < pl->nfolds_run; i++) {
		day_str(d1, sizeof(d1), pl->fold_from[i]);
		day_str(d2, sizeof(d2), pl->fold_to[i]);
		buf_addf(md,
			 "| %s .. %s | %zu | %zu | %zu | %.3f | %.3f | %.3f"
			 " |\n",
			 d1, d2, pl->fold_train[i], pl->fold_n[i],
			 pl->fold_pos[i], pl->fold_auc[i][AE_FULL],
			 pl->fold_auc[i][AE_SIZE], pl->fold_auc[i][AE_TEXT]);
	}
}

/* ---- odds of each seed signal ------------------------------------------- */

struct signal {
	const char *col, *what;
	double at_least; /* the signal holds when the column >= this */
};

static const struct signal signals[] = {
	{ "list.reviewed_by", "Reviewed-by given on the list", 1 },
	{ "list.acked_by", "Acked-by given on the list", 1 },
	{ "list.tested_by", "Tested-by given on the list", 1 },
	{ "list.tested_claims", "a \"tested on\" claim in a reply", 1 },
	{ "list.inline_comments", "inline review comments", 1 },
	{ "list.reply_lines", "reviewers wrote 20+ lines", 20 },
	{ "list.questions", "questions asked on this version", 1 },
	{ "list.requests", "requests made on this version", 1 },
	{ "list.negative_replies", "replies with negative words", 1 },
	{ "list.reviewers", "two or more people replied", 2 },
	{ "list.applier_replied", "someone who applies patches replied", 1 },
	{ "list.reviewer_top_prior", "a reviewer with 50+ earlier reviews",
	  50 },
	{ "list.reviewer_bug_rate",
	  "a reviewer whose reviewed postings were fixed 10%+ of the time",
	  0.10 },
	{ "list.versions_before", "v2 or later", 1 },
	{ "list.prev_requests", "requests made on an earlier version", 1 },
	{ "list.bot_reports", "a test-bot report", 1 },
	{ "list.prev_bot_failures",
	  "a failing bot report on an earlier "
	  "version",
	  1 },
	{ "list.days_since_first", "on the list 14+ days before apply", 14 },
	{ "list.carried_tags", "carries review tags from earlier versions", 1 },
};

static int col_of(const char *name)
{
	const char *const *names = archds_names();
	int c;

	for (c = 0; c < (int)ARCHDS_NTAB; c++)
		if (!strcmp(names[c], name))
			return c;
	return -1;
}

static void odds_row(struct buf *md, const struct archds *ds,
		     const struct signal *s, int64_t final_before)
{
	double a = 0, b = 0, c = 0, d = 0, or, se;
	int col = col_of(s->col);
	size_t i;

	if (col < 0)
		return;
	for (i = 0; i < ds->n; i++) {
		float v = ds->d->tab[i * ds->d->ntab + (size_t)col];
		int has = !isnan(v) && v >= s->at_least;

		if (!ds->bug[i] && ds->d->time[i] > final_before)
			continue; /* not yet a trustworthy negative */
		if (has)
			*(ds->bug[i] ? &a : &b) += 1;
		else
			*(ds->bug[i] ? &c : &d) += 1;
	}
	if (!(a + b) || !(c + d)) {
		buf_addf(md, "| %s | %.0f / %.0f | %.0f / %.0f | n/a | |\n",
			 s->what, a, a + b, c, c + d);
		return;
	}
	/* Woolf's interval with 0.5 in every cell (Haldane) */
	or = ((a + .5) * (d + .5)) / ((b + .5) * (c + .5));
	se = sqrt(1 / (a + .5) + 1 / (b + .5) + 1 / (c + .5) + 1 / (d + .5));
	buf_addf(md,
		 "| %s | %.0f / %.0f (%.1f%%) | %.0f / %.0f (%.1f%%) | %.2f | "
		 "[%.2f, %.2f] |\n",
		 s->what, a, a + b, a + b ? 100 * a / (a + b) : 0, c, c + d,
		 c + d ? 100 * c / (c + d) : 0, or, exp(log(or) - 1.96 * se),
		 exp(log(or) + 1.96 * se));
}

static void odds_table(struct buf *md, const struct archds *ds, int64_t hz)
{
	size_t i;

	buf_addstr(md, "\nOdds of a bug with and without each signal, as of "
		       "the apply date (every applied posting whose label is "
		       "final: a known bug, or applied a horizon before the "
		       "newest message; unadjusted for size):\n\n| signal | "
		       "with: bugs / postings | without: bugs / postings | "
		       "odds ratio | 95% CI (Woolf, +0.5) |\n|---|---:|---:|"
		       "---:|---|\n");
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		odds_row(md, ds, &signals[i], ds->newest - hz);
}

/* ---- targets ---------------------------------------------------------------- */

static void targets(struct buf *md, struct aerun *r, const double *rec,
		    size_t bugs_final)
{
	struct aepool *pl = &r->pool;
	double full = metrics_roc_auc(pl->p[AE_FULL], pl->y, pl->n);
	double size = metrics_roc_auc(pl->p[AE_SIZE], pl->y, pl->n);
	double revtest =
		full - metrics_roc_auc(pl->p[AE_NO_REVTEST], pl->y, pl->n);
	size_t pos = 0, i;

	for (i = 0; i < pl->n; i++)
		pos += pl->y[i] != 0;
#define MET(c) ((c) ? "**met**" : "**missed**")
	buf_addf(md,
		 "\nTargets (issue 22):\n\n"
		 "- at least 500 bug-introducing postings: %zu with a final "
		 "label in the evaluated rows, %zu in the test periods: %s\n"
		 "- risk ROC-AUC >= 0.80: %.3f: %s\n"
		 "- >= +0.05 over size-only: %+.3f: %s\n"
		 "- recall >= 0.50 with %.0f%% of postings flagged: %.3f: %s\n"
		 "- review and testing groups together worth >= 0.03 AUC: "
		 "%+.3f: %s\n",
		 bugs_final, pos, MET(bugs_final >= 500), full,
		 MET(full >= 0.80), full - size, MET(full - size >= 0.05),
		 100 * ARCHEVAL_FLAG_SHARE, rec[AE_FULL],
		 MET(rec[AE_FULL] >= 0.50), revtest, MET(revtest >= 0.03));
#undef MET
}

/* ---- plots ------------------------------------------------------------------ */

static int plot(struct aerun *r, const char *dir, int pr)
{
	static const int shown[] = { AE_FULL, AE_NO_LIST, AE_SIZE,
				     AE_TEXT, AE_RULE,	  AE_RANDOM };
	enum { NS = sizeof(shown) / sizeof(shown[0]) };
	struct aepool *pl = &r->pool;
	struct eval_series s[NS];
	double *x[NS] = { 0 }, *y[NS] = { 0 };
	struct buf svg = BUF_INIT, path = BUF_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < NS && !rc; i++) {
		int m = shown[i];

		rc = pr ? metrics_pr_curve(&x[i], &y[i], &s[i].n, pl->p[m],
					   pl->y, pl->n)
			: metrics_roc_curve(&x[i], &y[i], &s[i].n, pl->p[m],
					    pl->y, pl->n);
		s[i].name = archeval_mshort[m];
		s[i].x = x[i];
		s[i].y = y[i];
	}
	if (!rc)
		rc = eval_svg_plot(&svg,
				   pr ? "archive model: precision-recall"
				      : "archive model: ROC",
				   pr ? "recall" : "false positive rate",
				   pr ? "precision" : "true positive rate", s,
				   NS, !pr);
	if (!rc)
		rc = buf_addf(&path, "%s/archive-%s.svg", dir,
			      pr ? "pr" : "roc");
	if (!rc)
		rc = pt_write_file_atomic(path.ptr, svg.ptr, svg.len);
	for (i = 0; i < NS; i++) {
		free(x[i]);
		free(y[i]);
	}
	buf_free(&svg);
	buf_free(&path);
	return rc;
}

/* ---- the report -------------------------------------------------------------- */

static size_t final_bugs(const struct archds *ds, int64_t before)
{
	size_t i, n = 0;

	for (i = 0; i < ds->n; i++)
		n += ds->bug[i] && ds->d->time[i] < before;
	return n;
}

static void header(struct buf *md, struct aerun *r)
{
	const struct archds *ds = r->ds;
	const struct archeval_opts *o = r->o;
	int64_t hz = o->horizon / 86400;
	char d1[16], d2[16], d3[16];
	size_t bugs = 0, i;

	for (i = 0; i < ds->n; i++)
		bugs += ds->bug[i] != 0;
	day_str(d1, sizeof(d1), ds->d->time[0]);
	day_str(d2, sizeof(d2), ds->d->time[ds->n - 1]);
	day_str(d3, sizeof(d3), ds->newest);
	buf_addf(md,
		 "# Archive evaluation: %s\n\n%zu applied postings (of %zu "
		 "postings) applied from %s to %s, %zu of them labelled "
		 "bug-introducing; newest message %s.  Walk-forward: the "
		 "newest %.0f%% of the span that ends %lld days before the "
		 "newest message is cut into %u test periods; each is scored "
		 "by models trained only on the postings applied before it, "
		 "labelled as known at the cut (postings younger than %lld "
		 "days at the cut not used as negatives).  Features as of the "
		 "apply date.%s%s%s\n\n",
		 o->title, ds->n, ds->postings, d1, d2, bugs, d3,
		 100 * o->test_share, (long long)hz, o->folds, (long long)hz,
		 o->command ? "\n\nCommand: `" : "",
		 o->command ? o->command : "", o->command ? "`" : "");
}

int archeval_report(struct buf *md, struct aerun *r, const char *out_dir)
{
	struct buf path = BUF_INIT;
	size_t start = md->len;
	double rec[AE_NMODELS] = { 0 };
	int rc;

	header(md, r);
	if (!r->pool.n) {
		buf_addf(md, "No test period could be evaluated.\n%s",
			 r->notes.ptr ? r->notes.ptr : "");
		return pt_error_set(PT_EINVAL, "no test period could be "
					       "evaluated (too few postings or"
					       " bugs before each cut)");
	}
	rc = models_table(md, r, rec);
	if (!rc)
		rc = ablation_table(md, r);
	if (!rc) {
		folds_table(md, r);
		if (r->notes.len)
			buf_addf(md, "\n%s", r->notes.ptr);
		odds_table(md, r->ds, r->o->horizon);
		targets(md, r, rec,
			final_bugs(r->ds, r->ds->newest - r->o->horizon));
		buf_addstr(md, "\nPlots: archive-roc.svg, archive-pr.svg.\n");
	}
	if (!rc)
		rc = plot(r, out_dir, 0);
	if (!rc)
		rc = plot(r, out_dir, 1);
	if (!rc)
		rc = buf_addf(&path, "%s/eval.md", out_dir);
	if (!rc)
		rc = pt_write_file_atomic(path.ptr, md->ptr + start,
					  md->len - start);
	buf_free(&path);
	return rc;
}
