/*
 * eval.c - `patchtriage stable` measured against real backports (built
 * and run by tests/bench/stable/eval).  For each window "name,branch,
 * base,from,to": the main-line commits from..to are ranked as if at the
 * window's start (applies-to checked against BASE, the branch as it
 * stood then: its base release, or its tip at that date, and the fix
 * model trained only on commits dated before BASE), and compared with
 * what BRANCH actually took (stable.c's in-branch detection against the
 * real branch).  Rankers: the model (p(fix), fixes for code BASE lacks
 * dropped), the same without the drop, the AUTOSEL-like keyword
 * baseline (dataset_keyword_score, with the drop), and the two sets "Cc:
 * stable only" and "Cc: stable or Fixes:".  The combined rankers put
 * what the tags say first, as a stable maintainer reads the list:
 * "tags+model" (tagged, then p(fix)), "tiered" (stable_tier(), then
 * p(fix): the command's order), "tags+model+kw" (tagged, then the mean
 * of the percentile ranks of p(fix) and the keyword score) and
 * "model+kw" (that mean alone), "tiered+deps" (as tiered, with the
 * untagged candidates that a tagged one depends on right after the
 * tagged ones) and "tiered-demote" (as tiered, with the dropped tagged
 * commits after the kept tagged ones instead of left out).  All others
 * drop fixes for code BASE lacks.  The untagged-backport signals
 * (stable.h: fix wording, a tagged series sibling, a named commit the
 * branch has; and here a revert of a commit the branch has, a commit a
 * tagged candidate fixes) are counted per window over the untagged
 * candidates (sig-* rows), and "tiered+fixword", "tiered+series",
 * "tiered+cites" and "tiered+all" put the untagged candidates with that
 * signal right after the tagged ones; "tiered+hint" does so for
 * stable_hint() (fix wording or a named commit): the command's order.
 * Prints CSV rows: window,ranker,k,tp,precision,recall,untagged_found
 * and summary rows (kind "set"/"eq"/"at-n"); on stderr each dropped
 * commit the branch took anyway and each untagged backport with its
 * p(fix), keyword score and signals.
 */
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/model/dataset.h"
#include "scoring/store/db.h"
#include "scoring/model/model.h"
#include "scoring/model/schema.h"
#include "scoring/stable/stable.h"

#define YEAR (365 * 86400LL)
#define MAX_TRAIN 12000u

struct row {
	char sha[41];
	size_t idx;
};

static struct row *rows;
static size_t nrows;

static int row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->sha,
		      ((const struct row *)b)->sha);
}

static long find_row(const char *sha)
{
	struct row key, *r;

	memcpy(key.sha, sha, 41);
	r = bsearch(&key, rows, nrows, sizeof(*rows), row_cmp);
	return r ? (long)r->idx : -1;
}

static void die(const char *what)
{
	fprintf(stderr, "error: %s: %s\n", what, pt_error_last());
	exit(1);
}

/* Map dataset rows to shas. */
static void load_rows(struct db *db, const struct dataset *ds)
{
	sqlite3_stmt *st;
	size_t i;

	rows = calloc(ds->n, sizeof(*rows));
	if (db_prepare(&st, db, "SELECT sha FROM commits WHERE id = ?"))
		die("prepare");
	for (i = 0; i < ds->n; i++) {
		sqlite3_bind_int64(st, 1, ds->commit_id[i]);
		if (sqlite3_step(st) == SQLITE_ROW) {
			snprintf(rows[nrows].sha, 41, "%s",
				 (const char *)sqlite3_column_text(st, 0));
			rows[nrows++].idx = i;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	qsort(rows, nrows, sizeof(*rows), row_cmp);
}

static int64_t commit_time(git_repository *repo, const char *rev)
{
	git_object *o, *c;
	int64_t t;

	if (git_revparse_single(&o, repo, rev) ||
	    git_object_peel(&c, o, GIT_OBJECT_COMMIT)) {
		fprintf(stderr, "error: no '%s'\n", rev);
		exit(1);
	}
	t = git_commit_time((git_commit *)c);
	git_object_free(c);
	git_object_free(o);
	return t;
}

static struct pt_model *train(struct dataset *ds, int64_t before)
{
	unsigned char use[FEAT_NTAB];
	struct model_params p;
	struct pt_model *m;
	size_t *idx, n;

	dataset_task_mask(use, TASK_FIX);
	dataset_set_labels(ds, TASK_FIX, INT64_MAX);
	if (dataset_rows(&idx, &n, ds, TASK_FIX, before - 4 * YEAR, before,
			 INT64_MAX, 0))
		die("rows");
	model_params_default(&p, MODEL_KIND_FULL);
	p.task = "fix";
	p.tab_use = use;
	p.nthread = 1;
	if (model_train(&m, ds->d, n > MAX_TRAIN ? idx + n - MAX_TRAIN : idx,
			n > MAX_TRAIN ? MAX_TRAIN : n, &p))
		die("train");
	fprintf(stderr, "trained %s on %zu rows\n", model_version(m),
		n > MAX_TRAIN ? MAX_TRAIN : n);
	free(idx);
	return m;
}

struct item {
	double score;
	int truth, untagged;
	size_t idx; /* in the range: ties go oldest first, as in
				`patchtriage stable` (calibrated p ties) */
};

static const double *rank_of; /* qsort context of rank_cmp */

static int rank_cmp(const void *a, const void *b)
{
	double x = rank_of[*(const size_t *)a], y = rank_of[*(const size_t *)b];

	return x < y ? -1 : x > y;
}

/* Percentile rank in [0, 1] of each v[i]; ties share their mean rank. */
static void pct_rank(double *out, const double *v, size_t n)
{
	size_t *o = calloc(n + 1, sizeof(*o)), i, j, k;

	for (i = 0; i < n; i++)
		o[i] = i;
	rank_of = v;
	qsort(o, n, sizeof(*o), rank_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && v[o[j]] == v[o[i]]; j++)
			;
		for (k = i; k < j; k++)
			out[o[k]] = n > 1 ? (double)(i + j - 1) / 2 / (n - 1)
					  : 1;
	}
	free(o);
}

static int item_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static const size_t ks[] = { 10,  25,  50,  100,  150,	200, 300,
			     400, 600, 800, 1000, 1500, 2000 };

struct ref {
	const char *name; /* the set compared with */
	double r, p;	  /* its recall and precision */
};

/* A ranking: P/R at each k, and at the recall of each reference set. */
static void ranking(const char *win, const char *name, struct item *it,
		    size_t n, size_t ntruth, size_t nuntagged,
		    const struct ref *refs, size_t nrefs, size_t kbud)
{
	size_t i, k, j, tp = 0, un = 0, kk = 0, done[4] = { 0, 0, 0, 0 };
	double p, r;

	qsort(it, n, sizeof(*it), item_cmp);
	int thr = 0;

	for (i = 0; i < n; i++) {
		if (it[i].score < 0)
			break; /* dropped */
		if (!thr && it[i].score < 0.5) {
			/* what `stable` shows by default (--threshold 0.5) */
			thr = 1;
			printf("%s,%s,p50,%zu,%zu,%.4f,%.4f,%zu,%zu,\n", win,
			       name, i, tp, i ? (double)tp / i : 0,
			       ntruth ? (double)tp / ntruth : 0, un, nuntagged);
		}
		tp += it[i].truth;
		un += it[i].untagged;
		k = i + 1;
		r = ntruth ? (double)tp / ntruth : 0;
		for (j = 0; j < nrefs; j++) {
			if (done[j] || refs[j].r <= 0 || r < refs[j].r)
				continue;
			done[j] = k;
			printf("%s,%s,eq-%s,%zu,%zu,%.4f,%.4f,%zu,%zu,%.2f\n",
			       win, name, refs[j].name, k, tp, (double)tp / k,
			       r, un, nuntagged,
			       refs[j].p > 0 ? (double)tp / k / refs[j].p : 0);
		}
		if (k == kbud)
			/* as long a list as the tagged set */
			printf("%s,%s,at-n,%zu,%zu,%.4f,%.4f,%zu,%zu,\n", win,
			       name, k, tp, (double)tp / k, r, un, nuntagged);
		if (kk < sizeof(ks) / sizeof(ks[0]) && k == ks[kk]) {
			p = (double)tp / k;
			printf("%s,%s,k,%zu,%zu,%.4f,%.4f,%zu,%zu,\n", win,
			       name, k, tp, p, r, un, nuntagged);
			kk++;
		}
	}
	printf("%s,%s,all,%zu,%zu,%.4f,%.4f,%zu,%zu,\n", win, name, i, tp,
	       i ? (double)tp / i : 0, ntruth ? (double)tp / ntruth : 0, un,
	       nuntagged);
	for (j = 0; j < nrefs; j++)
		if (!done[j])
			printf("%s,%s,eq-%s,none,,,,,,\n", win, name,
			       refs[j].name);
}

/* A set of commits (not a ranking): its size, hits, P and R. */
static void set_row(const char *win, const char *name, size_t n, size_t tp,
		    size_t ntruth, size_t un, size_t nun)
{
	printf("%s,%s,set,%zu,%zu,%.4f,%.4f,%zu,%zu,\n", win, name, n, tp,
	       n ? (double)tp / n : 0, ntruth ? (double)tp / ntruth : 0, un,
	       nun);
}

enum {
	R_MODEL,
	R_NODROP,
	R_KEYWORD,
	R_TAGS,
	R_TIERED,
	R_TAGS_KW,
	R_MKW,
	R_DEPS,
	R_DEMOTE,
	R_FIXWORD,
	R_SERIES,
	R_CITES,
	R_SIGS,
	R_HINT,
	R_HCI,
	R_HBUILD,
	R_HWORDS,
	R_HPRE,
	R_HCIPRE,
	R_HCIWORDS,
	NRANK
};

static const char *const rname[NRANK] = {
	"model",
	"model-nodrop",
	"keyword",
	"tags+model",
	"tiered",
	"tags+model+kw",
	"model+kw",
	"tiered+deps",
	"tiered-demote",
	"tiered+fixword",
	"tiered+series",
	"tiered+cites",
	"tiered+all",
	"tiered+hint",
	"tiered+hint+ci",
	"tiered+hint+build",
	"tiered+hint+words",
	"tiered+hint+prereq",
	"tiered+hint+ci+prereq",
	"tiered+hint+ci+words",
};

/* The untagged-backport signals, each counted over untagged candidates. */
enum {
	S_FIXWORD,
	S_SERIES,
	S_SERIES4,
	S_CITES,
	S_REVERT,
	S_FIXEDBY,
	S_CI,
	S_COMP,
	S_WORDS,
	S_FILES,
	S_COMPFILES,
	S_BUILD,
	S_PREREQ,
	NSIG
};

static const char *const sname[NSIG] = {
	"sig-fixword",	   "sig-series",	   "sig-series-le4",
	"sig-cites",	   "sig-revert",	   "sig-fixed-by-tagged",
	"sig-build-ci",	   "sig-build-comp",	   "sig-build-words",
	"sig-build-files", "sig-build-comp-files", "sig-build-any",
	"sig-prereq",
};

static void window(git_repository *repo, struct dataset *ds, struct pt_model *m,
		   char *spec)
{
	char *save = NULL;
	char *name = strtok_r(spec, ",", &save),
	     *branch = strtok_r(NULL, ",", &save),
	     *base = strtok_r(NULL, ",", &save),
	     *from = strtok_r(NULL, ",", &save),
	     *to = strtok_r(NULL, ",", &save);
	char range[512];
	struct stable_opts o = { range, NULL, 0, 1 };
	struct stable_set *facts, *real;
	struct item *it[NRANK];
	struct ref refs[2];
	double *pv, *kv, *pr, *kr;
	unsigned char *pre;
	size_t i, j, ntruth = 0, nun = 0, ncc = 0, ncc_tp = 0, nt = 0,
		     nt_tp = 0, missing = 0, ndrop = 0, ndrop_tp = 0;
	size_t nk = 0, nk_tp = 0, nfp = 0, nfp_tp = 0, nfo = 0, nfo_tp = 0;
	size_t npre = 0, npre_tp = 0, nsig[NSIG] = { 0 }, nsig_tp[NSIG] = { 0 };
	unsigned char *fixedby;
	int sig[NSIG], any, lvl;
	time_t t0;
	double p;

	snprintf(range, sizeof(range), "%s..%s", from, to);
	o.branch = base;
	if (stable_analyse(&facts, repo, &o) || stable_deps(facts, NULL))
		die("facts");
	t0 = time(NULL);
	if (stable_prereqs(facts, NULL))
		die("prereqs");
	fprintf(stderr, "%s: prerequisites in %lld s\n", name,
		(long long)(time(NULL) - t0));
	o.branch = branch;
	if (stable_analyse(&real, repo, &o))
		die("truth");
	for (j = 0; j < NRANK; j++)
		it[j] = calloc(facts->n + 1, sizeof(*it[j]));
	pv = calloc(facts->n + 1, sizeof(*pv));
	kv = calloc(facts->n + 1, sizeof(*kv));
	pr = calloc(facts->n + 1, sizeof(*pr));
	kr = calloc(facts->n + 1, sizeof(*kr));
	pre = calloc(facts->n + 1, 1);
	fixedby = calloc(facts->n + 1, 1);
	/* untagged commits that a tagged candidate of the range fixes */
	for (i = 0; i < facts->n; i++)
		for (j = 0;
		     stable_is_candidate(facts, i) &&
		     stable_tier(&facts->c[i]) && j < facts->c[i].ntargets;
		     j++) {
			size_t t;

			for (t = 0; t < i; t++)
				if (!strcmp(facts->c[t].id,
					    facts->c[i].targets[j]))
					fixedby[t] = 1;
		}
	/* untagged candidates a tagged one needs (its lines came first) */
	for (i = 0; i < facts->n; i++)
		for (j = 0; stable_is_candidate(facts, i) &&
			    stable_tier(&facts->c[i]) && j < facts->c[i].ndeps;
		     j++)
			if (!stable_tier(&facts->c[facts->c[i].deps[j]]))
				pre[facts->c[i].deps[j]] = 1;
	for (i = 0; i < facts->n; i++) {
		long r = find_row(facts->c[i].id);
		size_t one = (size_t)r;

		p = 0;
		if (r < 0)
			missing++;
		else if (model_predict_rows(&p, m, ds->d, &one, 1))
			die("predict");
		pv[i] = p;
		kv[i] = r < 0 ? 0 : ds->keyword[r];
	}
	pct_rank(pr, pv, facts->n);
	pct_rank(kr, kv, facts->n);
	for (i = 0; i < facts->n; i++) {
		const struct stable_commit *c = &facts->c[i];
		int truth = real->c[i].match != STABLE_MATCH_NONE;
		int tagged = c->cc_stable || c->has_fixes;
		double mix = (pr[i] + kr[i]) / 2;

		ntruth += truth;
		nun += truth && !tagged;
		ncc += c->cc_stable;
		ncc_tp += c->cc_stable && truth;
		nt += tagged;
		nt_tp += tagged && truth;
		ndrop += c->dropped;
		ndrop_tp += c->dropped && truth;
		if (c->dropped && truth)
			/* the drop was wrong: say what it judged by */
			fprintf(stderr,
				"%s: dropped but backported: %.12s "
				"(fixes %.12s) %s\n",
				name, c->id, c->ntargets ? c->targets[0] : "-",
				c->subject);
		if (truth && !tagged)
			fprintf(stderr,
				"%s: untagged backport: %s p=%.3f "
				"kw=%.3f pre=%d dropped=%d %s\n",
				name, c->id, pv[i], kv[i], pre[i], c->dropped,
				c->subject);
		any = 0;
		sig[S_FIXWORD] = c->fix_subject;
		sig[S_SERIES] = c->has_sibling;
		sig[S_SERIES4] = c->has_sibling && c->series_len <= 4;
		sig[S_CITES] = c->cites_present;
		sig[S_REVERT] = c->is_revert &&
				c->target == STABLE_TARGET_PRESENT;
		sig[S_FIXEDBY] = fixedby[i];
		sig[S_CI] = c->build_ci;
		sig[S_COMP] = c->build_comp;
		sig[S_WORDS] = c->build_words;
		sig[S_FILES] = c->build_files;
		sig[S_COMPFILES] = c->build_comp && c->build_files;
		sig[S_BUILD] = c->build_ci || c->build_words ||
			       (c->build_comp && c->build_files);
		sig[S_PREREQ] = c->prereq;
		for (j = 0; j < NSIG; j++) {
			if (tagged || !stable_is_candidate(facts, i))
				sig[j] = 0;
			nsig[j] += sig[j];
			nsig_tp[j] += sig[j] && truth;
			any |= sig[j] && j <= S_REVERT && j != S_SERIES4;
		}
		if (truth && !tagged)
			fprintf(stderr,
				"%s: untagged backport signals: %.12s "
				"fixword=%d series=%d(%zu) cites=%d revert=%d "
				"fixedby=%d ci=%d comp=%d words=%d files=%d "
				"prereq=%d\n",
				name, c->id, sig[S_FIXWORD], c->has_sibling,
				c->series_len, sig[S_CITES], sig[S_REVERT],
				sig[S_FIXEDBY], sig[S_CI], sig[S_COMP],
				sig[S_WORDS], sig[S_FILES], sig[S_PREREQ]);
		nk += tagged && !c->dropped;
		nk_tp += tagged && !c->dropped && truth;
		npre += pre[i];
		npre_tp += pre[i] && truth;
		nfp += stable_tier(c) == 2;
		nfp_tp += stable_tier(c) == 2 && truth;
		nfo += stable_tier(c) == 1 && !c->dropped;
		nfo_tp += stable_tier(c) == 1 && !c->dropped && truth;
		for (j = 0; j < NRANK; j++) {
			it[j][i].truth = truth;
			it[j][i].idx = i;
			it[j][i].untagged = truth && !tagged;
		}
		/* what the tool knows: a tagged fix is a fix (p = 1) */
		it[R_TAGS][i].score = tagged ? 1 + pv[i] : pv[i];
		it[R_TIERED][i].score = stable_tier(c) + pv[i];
		/* tiers 2 apart: room for the prerequisites, and for the
		   dropped tagged commits after all kept tagged ones */
		it[R_DEPS][i].score = stable_tier(c)
					      ? 2 * stable_tier(c) + pv[i]
				      : pre[i] ? 1 + pv[i]
					       : pv[i];
		it[R_DEMOTE][i].score = c->dropped && stable_tier(c)
						? 1 + pv[i]
						: 2 * stable_tier(c) + pv[i];
		/* a signal puts an untagged candidate after the tagged */
		it[R_FIXWORD][i].score =
			2 * stable_tier(c) + (sig[S_FIXWORD] ? 1 : 0) + pv[i];
		it[R_HINT][i].score =
			2 * stable_tier(c) + (stable_hint(c) ? 1 : 0) + pv[i];
		it[R_SERIES][i].score =
			2 * stable_tier(c) + (sig[S_SERIES] ? 1 : 0) + pv[i];
		it[R_CITES][i].score =
			2 * stable_tier(c) + (sig[S_CITES] ? 1 : 0) + pv[i];
		it[R_SIGS][i].score =
			2 * stable_tier(c) + (any ? 1 : 0) + pv[i];
		/* the hint first, then the signal, then the rest */
		lvl = stable_hint(c) ? 2 : 0;
		it[R_HCI][i].score =
			3 * stable_tier(c) + pv[i] + (lvl ? lvl : sig[S_CI]);
		it[R_HBUILD][i].score =
			3 * stable_tier(c) + pv[i] + (lvl ? lvl : sig[S_BUILD]);
		it[R_HWORDS][i].score =
			3 * stable_tier(c) + pv[i] + (lvl ? lvl : sig[S_WORDS]);
		it[R_HPRE][i].score = 3 * stable_tier(c) + pv[i] +
				      (lvl ? lvl : sig[S_PREREQ]);
		it[R_HCIPRE][i].score =
			3 * stable_tier(c) + pv[i] +
			(lvl ? lvl : sig[S_CI] || sig[S_PREREQ]);
		it[R_HCIWORDS][i].score =
			3 * stable_tier(c) + pv[i] +
			(lvl ? lvl : sig[S_CI] || sig[S_WORDS]);
		it[R_TAGS_KW][i].score = tagged ? 1 + mix : mix;
		it[R_MKW][i].score = mix;
		it[R_NODROP][i].score = pv[i];
		it[R_MODEL][i].score = pv[i];
		it[R_KEYWORD][i].score = kv[i];
		for (j = 0; j < NRANK && c->dropped; j++)
			if (j != R_NODROP && j != R_DEMOTE)
				it[j][i].score = -1;
	}
	printf("%s,info,%zu,commits,%zu,backported,%zu,untagged,%zu,dropped,"
	       "%zu,unmined,%zu,dropped_backported\n",
	       name, facts->n, ntruth, nun, ndrop, missing, ndrop_tp);
	set_row(name, "cc-stable", ncc, ncc_tp, ntruth, 0, nun);
	set_row(name, "tagged", nt, nt_tp, ntruth, 0, nun);
	set_row(name, "tagged-kept", nk, nk_tp, ntruth, 0, nun);
	set_row(name, "fixes-present", nfp, nfp_tp, ntruth, 0, nun);
	set_row(name, "fixes-other", nfo, nfo_tp, ntruth, 0, nun);
	set_row(name, "prerequisites", npre, npre_tp, ntruth, 0, nun);
	for (j = 0; j < NSIG; j++)
		set_row(name, sname[j], nsig[j], nsig_tp[j], ntruth, nsig_tp[j],
			nun);
	refs[0].name = "cc";
	refs[0].r = ntruth ? (double)ncc_tp / ntruth : 0;
	refs[0].p = ncc ? (double)ncc_tp / ncc : 0;
	refs[1].name = "tagged";
	refs[1].r = ntruth ? (double)nt_tp / ntruth : 0;
	refs[1].p = nt ? (double)nt_tp / nt : 0;
	for (j = 0; j < NRANK; j++)
		ranking(name, rname[j], it[j], facts->n, ntruth, nun, refs, 2,
			nt);
	fflush(stdout);
	for (j = 0; j < NRANK; j++)
		free(it[j]);
	free(pv);
	free(kv);
	free(pr);
	free(kr);
	free(pre);
	free(fixedby);
	stable_set_free(facts);
	stable_set_free(real);
}

/* eval STATE.DB REPO SINCE-YEAR SPEC... (SPECs sharing a base share a
   model: consecutive ones) */
int main(int argc, char **argv)
{
	struct dataset_opts dopts;
	git_repository *repo;
	struct dataset *ds;
	struct pt_model *m = NULL;
	struct db *db;
	int64_t repo_id;
	char last_base[256] = "";
	int i;

	if (argc < 5) {
		fprintf(stderr, "usage: eval STATE.DB REPO SINCE-EPOCH "
				"name,branch,base,from,to...\n");
		return 2;
	}
	git_libgit2_init();
	if (git_repository_open(&repo, argv[2]))
		return 1;
	if (db_open(&db, argv[1], &scoring_db_owners) ||
	    dataset_repo(&repo_id, db, argv[2]))
		die("db");
	memset(&dopts, 0, sizeof(dopts));
	dopts.since = strtoll(argv[3], NULL, 10);
	dopts.hash_bits = MODEL_HASH_BITS;
	if (dataset_build(&ds, db, repo_id, &dopts))
		die("dataset");
	fprintf(stderr, "dataset: %zu rows\n", ds->n);
	load_rows(db, ds);
	printf("window,ranker,kind,k,tp,precision,recall,untagged_found,"
	       "untagged,ratio_vs_cc\n");
	for (i = 4; i < argc; i++) {
		char *spec = strdup(argv[i]), *copy = strdup(argv[i]);
		char *base, *save = NULL;

		strtok_r(copy, ",", &save);
		strtok_r(NULL, ",", &save);
		base = strtok_r(NULL, ",", &save);
		if (strcmp(base, last_base)) {
			model_free(m);
			m = train(ds, commit_time(repo, base));
			snprintf(last_base, sizeof(last_base), "%s", base);
		}
		window(repo, ds, m, spec);
		free(spec);
		free(copy);
	}
	model_free(m);
	free(rows);
	dataset_free(ds);
	db_close(db);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return 0;
}
