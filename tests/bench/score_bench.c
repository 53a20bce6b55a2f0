/*
 * score_bench.c - the per-patch cost of scoring once the models are
 * loaded (built and run by tests/bench/score; not part of the build).
 * It does what `patchtriage score` does for one patch - read it, compute
 * its features as of its date against the state database, predict with
 * both models and turn the contributions into reasons - for many real
 * patches in one process, so that model loading is paid once and timed
 * apart.  Two inputs:
 *
 *   commits: the newest N non-merge commits of REPO (mined, so history
 *            columns are the miner's rows: the training path);
 *   mails:   an mbox (git format-patch of the same commits): no commit
 *            id, so history comes from SQL over earlier commits, the
 *            path a patch arriving by mail takes.
 *
 * The same patch should get the same scores both ways; a "skew" line per
 * task gives the median, 90th percentile and maximum of |p(commit) -
 * p(mail)| over the patches whose subject is unique in both inputs.
 *
 * Prints one line per input and stage: "<input> <stage> n=N mean_us=..
 * median_us=.. p95_us=.. max_us=..", stages read (parse the mail or diff
 * the commit), features, predict (both models), explain (both), score
 * (features + predict + explain: the work after the patch is in memory)
 * score_cpu (the process CPU time of score: the machine is shared, and
 * wall time counts waiting for a core) and total (read + score), a
 * "load" line for the models, and a "checksum" line with an FNV-1a
 * digest of every feature (columns, tokens and their names) and of
 * every reason (text, column, value, weight): a faster tree must print
 * the same digests.
 */
#include <git2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/patch/mbox.h"
#include "scoring/model/dataset.h"
#include "scoring/store/db.h"
#include "scoring/model/explain.h"
#include "scoring/model/features.h"
#include "scoring/model/model.h"
#include "scoring/model/schema.h"
#include "scoring/patch/patch.h"

enum { ST_READ, ST_FEAT, ST_PRED, ST_EXPL, ST_SCORE, ST_CPU, ST_TOTAL, NST };

static const char *const stage_names[NST] = {
	"read", "features", "predict", "explain", "score", "score_cpu", "total",
};

struct timing {
	double *us[NST];
	size_t n, cap;
};

struct scored {
	char *subject;
	double p[2];
	int mail_seen; /* 0, 1, or 2 = more than one mail has it */
	double mail_p[2];
};

struct bench {
	struct pt_model *model[2];
	struct feat_ctx *fc;
	struct timing tm;
	double checksum;    /* keeps the work from being optimised away */
	uint64_t digest[2]; /* FNV-1a of every feature and every reason */
	struct scored *by_commit;
	size_t ncommits;
	int mails; /* scoring the mails now */
};

static double clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double now_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

static int die(const char *what)
{
	fprintf(stderr, "score_bench: %s: %s\n", what, pt_error_last());
	return 1;
}

static int timing_add(struct timing *t, const double *v)
{
	size_t s;

	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;

		for (s = 0; s < NST; s++) {
			void *p = realloc(t->us[s], cap * sizeof(double));

			if (!p)
				return -1;
			t->us[s] = p;
		}
		t->cap = cap;
	}
	for (s = 0; s < NST; s++)
		t->us[s][t->n] = v[s];
	t->n++;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void timing_print(struct timing *t, const char *input)
{
	size_t s, i;

	for (s = 0; s < NST && t->n; s++) {
		double sum = 0, *v = t->us[s];

		for (i = 0; i < t->n; i++)
			sum += v[i];
		qsort(v, t->n, sizeof(*v), cmp_double);
		printf("%s %s n=%zu mean_us=%.1f median_us=%.1f p95_us=%.1f "
		       "max_us=%.1f\n",
		       input, stage_names[s], t->n, sum / (double)t->n,
		       v[t->n / 2], v[(size_t)((double)(t->n - 1) * 0.95)],
		       v[t->n - 1]);
	}
	for (s = 0; s < NST; s++)
		free(t->us[s]);
	memset(t, 0, sizeof(*t));
}

/* Remember the commit's scores, or pair the mail's with them. */
static void note_scores(struct bench *b, const struct patch *p,
			const double *prob)
{
	const char *subj = p->subject.clean ? p->subject.clean : "";
	struct scored *s;
	size_t i;

	if (b->mails) {
		for (i = 0; i < b->ncommits; i++) {
			s = &b->by_commit[i];
			if (s->subject && !strcmp(s->subject, subj)) {
				s->mail_seen++;
				memcpy(s->mail_p, prob, sizeof(s->mail_p));
			}
		}
		return;
	}
	for (i = 0; i < b->ncommits; i++)
		if (b->by_commit[i].subject &&
		    !strcmp(b->by_commit[i].subject, subj)) {
			free(b->by_commit[i].subject); /* not unique */
			b->by_commit[i].subject = NULL;
			return;
		}
	s = realloc(b->by_commit, (b->ncommits + 1) * sizeof(*s));
	if (!s)
		return;
	b->by_commit = s;
	s = &s[b->ncommits++];
	memset(s, 0, sizeof(*s));
	s->subject = strdup(subj);
	memcpy(s->p, prob, sizeof(s->p));
}

static void print_skew(struct bench *b)
{
	static const char *const tasks[2] = { "fix", "risk" };
	double *d = calloc(b->ncommits + 1, sizeof(*d));
	size_t i, k, n;

	for (k = 0; d && k < 2; k++) {
		for (i = n = 0; i < b->ncommits; i++)
			if (b->by_commit[i].subject &&
			    b->by_commit[i].mail_seen == 1)
				d[n++] = fabs(b->by_commit[i].p[k] -
					      b->by_commit[i].mail_p[k]);
		if (!n)
			continue;
		qsort(d, n, sizeof(*d), cmp_double);
		printf("skew %s n=%zu median=%.4f p90=%.4f max=%.4f\n",
		       tasks[k], n, d[n / 2],
		       d[(size_t)((double)(n - 1) * 0.9)], d[n - 1]);
	}
	free(d);
	for (i = 0; i < b->ncommits; i++)
		free(b->by_commit[i].subject);
	free(b->by_commit);
}

static void fnv(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++)
		*h = (*h ^ s[i]) * 0x100000001b3ull;
}

/* The vector's columns and tokens, bit for bit. */
static void digest_features(struct bench *b, const struct feat_vec *fv)
{
	size_t i;

	fnv(&b->digest[0], fv->tab, sizeof(fv->tab));
	for (i = 0; i < fv->nsp; i++) {
		fnv(&b->digest[0], &fv->sp[i], sizeof(fv->sp[i]));
		if (fv->sp_names && fv->sp_names[i])
			fnv(&b->digest[0], fv->sp_names[i],
			    strlen(fv->sp_names[i]) + 1);
	}
}

/* The reasons as shown: text, column, value and weight, in order. */
static void digest_reasons(struct bench *b, const struct explain_reason *r,
			   size_t n, double bias)
{
	size_t i;

	fnv(&b->digest[1], &bias, sizeof(bias));
	for (i = 0; i < n; i++) {
		fnv(&b->digest[1], r[i].text, strlen(r[i].text) + 1);
		fnv(&b->digest[1], r[i].feature, strlen(r[i].feature) + 1);
		fnv(&b->digest[1], &r[i].value, sizeof(r[i].value));
		fnv(&b->digest[1], &r[i].weight, sizeof(r[i].weight));
	}
}

/* Features, both predictions and both explanations of p; times in v. */
static int score_one(struct bench *b, const struct patch *p, double *v)
{
	struct feat_vec fv;
	struct explain_reason *why[2] = { NULL, NULL };
	size_t nwhy[2] = { 0, 0 }, k;
	double t0, t1, t2, prob[2], bias[2];
	double cpu = clock_us(CLOCK_PROCESS_CPUTIME_ID);
	int rc;

	t0 = now_us();
	rc = feat_compute(&fv, b->fc, p, NULL, MODEL_HASH_BITS, FEAT_NAMES);
	if (rc)
		return rc;
	t1 = now_us();
	for (k = 0; k < 2 && !rc; k++) {
		rc = model_predict(&prob[k], b->model[k], fv.tab, fv.sp,
				   fv.nsp);
		b->checksum += prob[k];
	}
	t2 = now_us();
	for (k = 0; k < 2 && !rc; k++)
		rc = explain_vec(&why[k], &nwhy[k], &bias[k], b->model[k], &fv);
	v[ST_FEAT] = t1 - t0;
	v[ST_PRED] = t2 - t1;
	v[ST_EXPL] = now_us() - t2;
	v[ST_SCORE] = v[ST_FEAT] + v[ST_PRED] + v[ST_EXPL];
	v[ST_CPU] = clock_us(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	/* not timed: the checks that the work is the same */
	digest_features(b, &fv);
	for (k = 0; k < 2; k++) {
		if (!rc) {
			b->checksum += (double)nwhy[k] + bias[k];
			digest_reasons(b, why[k], nwhy[k], bias[k]);
		}
		explain_free(why[k], nwhy[k]);
	}
	feat_vec_free(&fv);
	if (!rc)
		note_scores(b, p, prob);
	return rc;
}

static int bench_commits(struct bench *b, git_repository *repo, size_t n)
{
	git_revwalk *w = NULL;
	git_oid oid;
	size_t done = 0;
	int rc = 0;

	if (git_revwalk_new(&w, repo) || git_revwalk_push_head(w)) {
		fprintf(stderr, "score_bench: revwalk: %s\n",
			git_error_last()->message);
		git_revwalk_free(w);
		return 1;
	}
	git_revwalk_sorting(w, GIT_SORT_TIME);
	while (done < n && !git_revwalk_next(&oid, w)) {
		git_commit *c = NULL;
		struct patch *p = NULL;
		double v[NST], t0;

		if (git_commit_lookup(&c, repo, &oid))
			continue;
		if (git_commit_parentcount(c) != 1) {
			git_commit_free(c);
			continue;
		}
		t0 = now_us();
		rc = patch_from_commit(&p, repo, c);
		git_commit_free(c);
		if (rc) {
			rc = die("reading a commit");
			break;
		}
		v[ST_READ] = now_us() - t0;
		rc = score_one(b, p, v);
		patch_free(p);
		if (rc) {
			rc = die("scoring a commit");
			break;
		}
		v[ST_TOTAL] = v[ST_READ] + v[ST_SCORE];
		if (timing_add(&b->tm, v)) {
			rc = 1;
			break;
		}
		done++;
	}
	git_revwalk_free(w);
	timing_print(&b->tm, "commits");
	return rc;
}

static int mail_cb(const char *msg, size_t len, size_t index, void *ctx)
{
	struct bench *b = ctx;
	struct patch *p = NULL;
	double v[NST], t0 = now_us();
	int rc;

	(void)index;
	rc = patch_from_mail(&p, msg, len);
	if (rc)
		return rc;
	v[ST_READ] = now_us() - t0;
	if (p->nfiles) {
		rc = score_one(b, p, v);
		v[ST_TOTAL] = v[ST_READ] + v[ST_SCORE];
		if (!rc && timing_add(&b->tm, v))
			rc = PT_ENOMEM;
	}
	patch_free(p);
	return rc;
}

static int bench_mails(struct bench *b, const char *mbox)
{
	struct buf text = BUF_INIT;
	int rc = pt_read_file(&text, mbox, (size_t)1 << 30);

	b->mails = 1;
	if (!rc)
		rc = mbox_foreach(text.ptr, text.len, mail_cb, b);
	buf_free(&text);
	if (rc)
		return die(mbox);
	timing_print(&b->tm, "mails");
	print_skew(b);
	return 0;
}

static int load_models(struct bench *b, const char *state)
{
	static const char *const tasks[2] = { "fix", "risk" };
	struct buf dir = BUF_INIT;
	double t0 = now_us();
	size_t k;
	int rc = 0;

	for (k = 0; k < 2 && !rc; k++) {
		buf_reset(&dir);
		rc = buf_addf(&dir, "%s/models/%s", state, tasks[k]);
		if (!rc)
			rc = model_load(&b->model[k], dir.ptr);
	}
	buf_free(&dir);
	if (rc)
		return die("loading the models");
	printf("load models=2 us=%.1f fix=%s risk=%s\n", now_us() - t0,
	       model_version(b->model[0]), model_version(b->model[1]));
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b;
	struct db *db = NULL;
	struct buf path = BUF_INIT;
	git_repository *repo = NULL;
	int64_t repo_id;
	size_t n;
	int rc = 1, k;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: score_bench STATE_DIR REPO N [MBOX]\n");
		return 2;
	}
	memset(&b, 0, sizeof(b));
	n = strtoul(argv[3], NULL, 10);
	git_libgit2_init();
	if (load_models(&b, argv[1]))
		goto out;
	if (buf_addf(&path, "%s/state.db", argv[1]) ||
	    db_open(&db, path.ptr, &scoring_db_owners)) {
		die(path.ptr);
		goto out;
	}
	if (dataset_repo(&repo_id, db, argv[2]) ||
	    feat_ctx_new(&b.fc, db, repo_id)) {
		die(argv[2]);
		goto out;
	}
	if (git_repository_open(&repo, argv[2])) {
		fprintf(stderr, "score_bench: %s: %s\n", argv[2],
			git_error_last()->message);
		goto out;
	}
	rc = bench_commits(&b, repo, n);
	if (!rc && argc == 5)
		rc = bench_mails(&b, argv[4]);
	if (!rc)
		printf("checksum %.6f digest features=%016llx "
		       "reasons=%016llx\n",
		       b.checksum, (unsigned long long)b.digest[0],
		       (unsigned long long)b.digest[1]);
out:
	for (k = 0; k < 2; k++)
		model_free(b.model[k]);
	feat_ctx_free(b.fc);
	git_repository_free(repo);
	db_close(db);
	buf_free(&path);
	git_libgit2_shutdown();
	return rc;
}
