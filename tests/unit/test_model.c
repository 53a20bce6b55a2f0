/*
 * test_model.c - the classifiers on synthetic data: a planted signal is
 * found (AUC > 0.9 on later rows), shuffled labels give chance (AUC
 * within 0.45-0.55), probabilities are calibrated on a known
 * distribution, training is deterministic to the byte, and a saved model
 * loads and predicts the same.  Where risk is a smooth function of size
 * the trees' size offset beats none, is chosen, is explained (the
 * contributions and bias sum to the score), saves and loads; a manifest
 * from before the offset loads.  The liblinear fits on several threads
 * make the same model files as on one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "scoring/model/metrics.h"
#include "scoring/model/model.h"

static const char *const names[] = { "signal", "noise", "missing" };

static double gauss(uint64_t *st)
{
	double u =
		((double)(metrics_rand(st) >> 11) + 0.5) / 9007199254740992.0;
	double v =
		((double)(metrics_rand(st) >> 11) + 0.5) / 9007199254740992.0;

	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static double unif(uint64_t *st)
{
	return (double)(metrics_rand(st) >> 11) / 9007199254740992.0;
}

/*
 * n rows: y depends on tab[0] and on sparse tokens 5 (+) and 7 (-);
 * tokens 100.. are noise.  shuffle: labels permuted afterwards.
 */
static struct model_data *make_data(size_t n, uint64_t seed, int shuffle)
{
	struct model_data *d;
	uint64_t st = seed;
	int *y = calloc(n, sizeof(*y));
	float *tabs = calloc(n * 3, sizeof(*tabs));
	struct model_sparse *sps = calloc(n * 8, sizeof(*sps));
	size_t *nsp = calloc(n, sizeof(*nsp)), i, j;

	assert_int_equal(model_data_new(&d, names, 3), 0);
	for (i = 0; i < n; i++) {
		double x0 = gauss(&st), z;
		int t5 = unif(&st) < 0.3, t7 = unif(&st) < 0.3;
		struct model_sparse *sp = sps + i * 8;

		z = 2.0 * x0 + 2.5 * t5 - 2.5 * t7 + 0.5 * gauss(&st);
		y[i] = z > 1.0;
		tabs[i * 3] = (float)x0;
		tabs[i * 3 + 1] = (float)gauss(&st);
		tabs[i * 3 + 2] = i % 3 ? NAN : 1.0f;
		if (t5)
			sp[nsp[i]++] = (struct model_sparse){ 5, 1.0f };
		if (t7)
			sp[nsp[i]++] = (struct model_sparse){ 7, 1.0f };
		for (j = 0; j < 4; j++)
			sp[nsp[i]++] = (struct model_sparse){
				(uint32_t)(100 + metrics_rand(&st) % 1000), 0.5f
			};
	}
	if (shuffle)
		for (i = n - 1; i > 0; i--) {
			size_t k = (size_t)(metrics_rand(&st) % (i + 1));
			int t = y[i];

			y[i] = y[k];
			y[k] = t;
		}
	for (i = 0; i < n; i++)
		assert_int_equal(model_data_add(d, tabs + i * 3, sps + i * 8,
						nsp[i], y[i], (int64_t)i, 10),
				 0);
	free(y);
	free(tabs);
	free(sps);
	free(nsp);
	return d;
}

static size_t *seq(size_t from, size_t to)
{
	size_t *r = calloc(to - from, sizeof(*r)), i;

	for (i = from; i < to; i++)
		r[i - from] = i;
	return r;
}

static double test_auc(const struct pt_model *m, const struct model_data *d,
		       size_t from, size_t to, double *ece)
{
	size_t *idx = seq(from, to);
	double *p = calloc(to - from, sizeof(*p)), auc;

	assert_int_equal(model_predict_rows(p, m, d, idx, to - from), 0);
	auc = metrics_roc_auc(p, d->y + from, to - from);
	if (ece)
		*ece = metrics_ece(p, d->y + from, to - from, 10);
	free(idx);
	free(p);
	return auc;
}

static void params(struct model_params *p, enum model_kind k)
{
	model_params_default(p, k);
	p->hash_bits = 12;
	p->max_rounds = 60;
	p->task = "test";
}

static void test_planted_signal(void **state)
{
	struct model_data *d = make_data(3000, 1, 0);
	size_t *idx = seq(0, 2000);
	struct model_params p;
	struct pt_model *m;
	enum model_kind k;
	double auc;

	(void)state;
	for (k = MODEL_KIND_FULL; k <= MODEL_KIND_TABLR; k++) {
		params(&p, k);
		assert_int_equal(model_train(&m, d, idx, 2000, &p), 0);
		auc = test_auc(m, d, 2000, 3000, NULL);
		/* text sees only the tokens, tablr only the columns */
		if (k == MODEL_KIND_FULL)
			assert_true(auc > 0.9);
		else
			assert_true(auc > 0.7);
		model_free(m);
	}
	free(idx);
	model_data_free(d);
}

static void test_shuffled_labels(void **state)
{
	struct model_data *d = make_data(6000, 2, 1);
	size_t *idx = seq(0, 2000);
	struct model_params p;
	struct pt_model *m;
	double auc;

	(void)state;
	params(&p, MODEL_KIND_FULL);
	assert_int_equal(model_train(&m, d, idx, 2000, &p), 0);
	auc = test_auc(m, d, 2000, 6000, NULL);
	assert_true(auc > 0.45 && auc < 0.55);
	model_free(m);
	free(idx);
	model_data_free(d);
}

/* y ~ Bernoulli(0.1 + 0.6 x), x uniform: predictions near the truth. */
static void test_calibration(void **state)
{
	struct model_data *d;
	struct model_params p;
	struct pt_model *m;
	uint64_t st = 3;
	size_t n = 12000, i, *idx = seq(0, 8000);
	double *pr = calloc(n, sizeof(*pr)), err = 0, ece;
	enum model_calib c;

	(void)state;
	assert_int_equal(model_data_new(&d, names, 3), 0);
	for (i = 0; i < n; i++) {
		float t[3] = { (float)unif(&st), (float)gauss(&st), NAN };
		struct model_sparse sp = { (uint32_t)(metrics_rand(&st) % 50),
					   1.0f };

		assert_int_equal(model_data_add(d, t, &sp, 1,
						unif(&st) < 0.1 + 0.6 * t[0],
						(int64_t)i, 1),
				 0);
	}
	for (c = MODEL_CALIB_PLATT; c <= MODEL_CALIB_ISOTONIC; c++) {
		params(&p, MODEL_KIND_FULL);
		p.calib = c;
		p.max_rounds = 30;
		assert_int_equal(model_train(&m, d, idx, 8000, &p), 0);
		assert_int_equal(model_predict_rows(pr, m, d, idx + 0, 0), 0);
		free(idx);
		idx = seq(8000, n);
		assert_int_equal(model_predict_rows(pr, m, d, idx, n - 8000),
				 0);
		err = 0;
		for (i = 0; i < n - 8000; i++)
			err += fabs(pr[i] -
				    (0.1 + 0.6 * d->tab[(8000 + i) * 3]));
		err /= (double)(n - 8000);
		ece = metrics_ece(pr, d->y + 8000, n - 8000, 10);
		assert_true(err < 0.06);
		assert_true(ece < 0.04);
		model_free(m);
		free(idx);
		idx = seq(0, 8000);
	}
	free(idx);
	free(pr);
	model_data_free(d);
}

static char *slurp(const char *dir, const char *file, size_t *len)
{
	char path[512];
	struct buf b = BUF_INIT;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	assert_int_equal(pt_read_file(&b, path, 1u << 30), 0);
	return buf_detach(&b, len);
}

/* The files of two model folders are the same bytes (and not empty). */
static void same_files(const char *a, const char *b, const char *const *files,
		       size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		size_t la, lb;
		char *x = slurp(a, files[i], &la), *y = slurp(b, files[i], &lb);

		assert_int_equal(la, lb);
		assert_true(la > 10);
		assert_memory_equal(x, y, la);
		free(x);
		free(y);
	}
}

/* Remove DIR/a and DIR/b with the files they may hold, then DIR. */
static void rm_pair(const char *dir, const char *const *files, size_t n)
{
	char path[600];
	size_t i;
	int k;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/%c/%s", dir, "ab"[k],
				 files[i]);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/%c", dir, "ab"[k]);
		rmdir(path);
	}
	rmdir(dir);
}

static void test_deterministic_save_load(void **state)
{
	static const char *const files[] = { "manifest.json", "text.model",
					     "trees.json" };
	struct model_data *d = make_data(1500, 4, 0);
	size_t *idx = seq(0, 1000), i;
	char dir[] = "/tmp/pt-model-XXXXXX", a[600], b[600];
	struct pt_model *m1, *m2, *m3;
	struct model_params p;
	double p1, p3;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	params(&p, MODEL_KIND_FULL);
	assert_int_equal(model_train(&m1, d, idx, 1000, &p), 0);
	assert_int_equal(model_train(&m2, d, idx, 1000, &p), 0);
	assert_string_equal(model_version(m1), model_version(m2));
	/* a note about the data travels with the model */
	assert_null(model_note(m1, "label_regime"));
	assert_int_equal(model_set_note(m1, "label_regime",
					"rows before "
					"2017-07-01 left out"),
			 0);
	assert_int_equal(model_set_note(m2, "label_regime",
					"rows before "
					"2017-07-01 left out"),
			 0);
	assert_int_equal(model_save(m1, a), 0);
	assert_int_equal(model_save(m2, b), 0);
	/* saving again replaces the directory */
	assert_int_equal(model_save(m2, b), 0);
	same_files(a, b, files, 3);
	assert_int_equal(model_load(&m3, a), 0);
	assert_string_equal(model_version(m3), model_version(m1));
	assert_string_equal(model_note(m3, "label_regime"),
			    "rows before 2017-07-01 left out");
	assert_null(model_note(m3, "other"));
	for (i = 1000; i < 1010; i++) {
		size_t s = d->sp_start[i];

		assert_int_equal(model_predict(&p1, m1, d->tab + i * 3,
					       d->sp + s,
					       d->sp_start[i + 1] - s),
				 0);
		assert_int_equal(model_predict(&p3, m3, d->tab + i * 3,
					       d->sp + s,
					       d->sp_start[i + 1] - s),
				 0);
		assert_true(fabs(p1 - p3) < 1e-6);
	}
	/* a different seed of the data is a different version */
	{
		struct model_data *d2 = make_data(1500, 5, 0);
		struct pt_model *m4;

		assert_int_equal(model_train(&m4, d2, idx, 1000, &p), 0);
		assert_string_not_equal(model_version(m4), model_version(m1));
		model_free(m4);
		model_data_free(d2);
	}
	model_free(m1);
	model_free(m2);
	model_free(m3);
	rm_pair(dir, files, 3);
	free(idx);
	model_data_free(d);
}

/* the progress callback's thread and how often it was called */
struct seen_progress {
	pthread_t caller;
	int calls, other_thread;
	double last;
};

static void note_progress(const char *phase, double done, void *ctx)
{
	struct seen_progress *s = ctx;

	(void)phase;
	s->calls++;
	s->other_thread += !pthread_equal(pthread_self(), s->caller);
	assert_true(done >= 0 && done <= 1);
	s->last = done;
}

/*
 * The liblinear fits side by side (jobs 3, more than the fits of some
 * batches and than this machine's cores) make the same model files as
 * one at a time, for each kind, and progress is said from the calling
 * thread only.
 */
static void test_jobs_same_model(void **state)
{
	static const char *const files[] = { "manifest.json", "text.model",
					     "trees.json" };
	static const enum model_kind kinds[] = { MODEL_KIND_FULL,
						 MODEL_KIND_TEXT };
	struct model_data *d = make_data(1500, 6, 0);
	size_t *idx = seq(0, 1200), k;
	char dir[] = "/tmp/pt-model-XXXXXX", a[600], b[600];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	for (k = 0; k < 2; k++) {
		struct seen_progress seen = { pthread_self(), 0, 0, 0 };
		struct pt_model *m1, *m3;
		struct model_params p;

		params(&p, kinds[k]);
		assert_int_equal(model_train(&m1, d, idx, 1200, &p), 0);
		p.jobs = 3;
		p.progress = note_progress;
		p.progress_ctx = &seen;
		assert_int_equal(model_train(&m3, d, idx, 1200, &p), 0);
		assert_true(seen.calls >= 3);
		assert_true(seen.last == 1.0);
		assert_int_equal(seen.other_thread, 0);
		assert_int_equal(model_save(m1, a), 0);
		assert_int_equal(model_save(m3, b), 0);
		/* a text model has no trees */
		same_files(a, b, files, kinds[k] == MODEL_KIND_TEXT ? 2 : 3);
		model_free(m1);
		model_free(m3);
	}
	rm_pair(dir, files, 3);
	free(idx);
	model_data_free(d);
}

static void test_explain(void **state)
{
	struct model_data *d = make_data(1500, 6, 0);
	size_t *idx = seq(0, 1000), n, i, best = 0;
	struct model_contrib *c;
	struct model_params p;
	struct pt_model *m;
	double bias, top = 0;
	/* a row whose signal column is far out */
	float tab[3] = { 3.0f, 0.0f, NAN };

	(void)state;
	params(&p, MODEL_KIND_FULL);
	assert_int_equal(model_train(&m, d, idx, 1000, &p), 0);
	assert_int_equal(model_explain(&c, &n, &bias, m, tab, NULL, 0), 0);
	/* three columns; no token, so the text score has no entry */
	assert_int_equal(n, 3);
	for (i = 0; i < n; i++)
		if (fabs(c[i].value) > top) {
			top = fabs(c[i].value);
			best = i;
		}
	assert_false(c[best].is_sparse);
	assert_int_equal(c[best].index, 0);
	assert_true(c[best].value > 0);
	free(c);
	/* the training slices must each hold both classes */
	{
		struct model_data *e;
		float t[3] = { 0, 0, 0 };
		struct pt_model *bad;

		assert_int_equal(model_data_new(&e, names, 3), 0);
		for (i = 0; i < 100; i++)
			model_data_add(e, t, NULL, 0, i < 10, (int64_t)i, 1);
		assert_int_equal(model_train(&bad, e, idx, 100, &p), PT_EINVAL);
		assert_null(bad);
		model_data_free(e);
	}
	model_free(m);
	free(idx);
	model_data_free(d);
}

/*
 * Risk a smooth function of size: logit = 2 * (log1p(added + removed) -
 * 4.5) - 1.5, a noise column, noise tokens.
 */
static const char *const size_names[] = { "size.lines_added",
					  "size.lines_removed", "noise" };

static struct model_data *make_size_data(size_t n, uint64_t seed)
{
	struct model_data *d;
	uint64_t st = seed;
	size_t i, j;

	assert_int_equal(model_data_new(&d, size_names, 3), 0);
	for (i = 0; i < n; i++) {
		float t[3];
		struct model_sparse sp[3];
		double s, z;

		t[0] = (float)floor(exp(3.5 + 1.5 * gauss(&st)));
		t[1] = (float)floor(exp(2.5 + 1.5 * gauss(&st)));
		t[2] = (float)gauss(&st);
		s = log1p((double)t[0] + t[1]);
		z = 2.0 * (s - 4.5) - 1.5;
		for (j = 0; j < 3; j++)
			sp[j] = (struct model_sparse){
				(uint32_t)(metrics_rand(&st) % 500), 1.0f
			};
		assert_int_equal(model_data_add(d, t, sp, 3,
						unif(&st) < 1 / (1 + exp(-z)),
						(int64_t)i, t[0] + t[1] + 1),
				 0);
	}
	return d;
}

/* The log-odds from explain: tab and token entries and the bias. */
static double explain_sum(const struct pt_model *m, const float *tab,
			  const struct model_sparse *sp, size_t nsp,
			  double *added)
{
	struct model_contrib *c;
	size_t n, i;
	double bias, sum;

	assert_int_equal(model_explain(&c, &n, &bias, m, tab, sp, nsp), 0);
	/* three columns and the text score shared out to the tokens */
	assert_int_equal(n, 3 + nsp);
	sum = bias;
	for (i = 0; i < n; i++) {
		sum += c[i].value;
		if (c[i].is_sparse)
			continue;
		if (c[i].index == 0)
			*added = c[i].value;
	}
	free(c);
	return sum;
}

/* Platt's a and b of a saved model. */
static void platt_of(double *a, double *b, const char *dir)
{
	char path[700];
	json_error_t err;
	json_t *j;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	j = json_load_file(path, 0, &err);
	assert_non_null(j);
	assert_int_equal(json_unpack(j, "{s:{s:F, s:F}}", "platt", "a", a, "b",
				     b),
			 0);
	json_decref(j);
}

static void rm_model(const char *dir)
{
	static const char *const files[] = { "manifest.json", "text.model",
					     "trees.json" };
	char path[700];
	size_t i;

	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

/*
 * Ten rounds of depth-2 trees (what a small history gets) make a coarse
 * step function of size; the size offset is the smooth truth.
 */
static void test_offset(void **state)
{
	struct model_data *d = make_size_data(5000, 7);
	size_t *idx = seq(0, 1500), i, nsp, s, la, lb;
	char dir[] = "/tmp/pt-model-XXXXXX", a[64], b[64], c[64];
	struct pt_model *none, *size, *aut, *aut2, *tab, *back;
	struct model_params p;
	double auc_none, auc_size, pa, pb, p1, p2, f, added = 0;
	float big[3] = { 5000.0f, 0.0f, 0.0f };
	char *x, *y;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/size", dir);
	snprintf(b, sizeof(b), "%s/tab", dir);
	snprintf(c, sizeof(c), "%s/auto", dir);
	params(&p, MODEL_KIND_FULL);
	p.max_rounds = 10;
	p.depth = 2;
	p.offset = MODEL_OFFSET_NONE;
	assert_int_equal(model_train(&none, d, idx, 1500, &p), 0);
	assert_int_equal(model_offset(none), MODEL_OFFSET_NONE);
	p.offset = MODEL_OFFSET_SIZE;
	assert_int_equal(model_train(&size, d, idx, 1500, &p), 0);
	assert_int_equal(model_offset(size), MODEL_OFFSET_SIZE);
	p.offset = MODEL_OFFSET_TABULAR;
	assert_int_equal(model_train(&tab, d, idx, 1500, &p), 0);
	assert_int_equal(model_offset(tab), MODEL_OFFSET_TABULAR);
	p.offset = MODEL_OFFSET_AUTO;
	assert_int_equal(model_train(&aut, d, idx, 1500, &p), 0);
	assert_int_equal(model_train(&aut2, d, idx, 1500, &p), 0);
	/* the smooth prior beats the trees' step function on later rows */
	auc_none = test_auc(none, d, 1500, 5000, NULL);
	auc_size = test_auc(size, d, 1500, 5000, NULL);
	assert_true(auc_size > auc_none + 0.01);
	/* the validation slice sees it too, and the choice is used */
	assert_int_equal(model_offset(aut), MODEL_OFFSET_SIZE);
	assert_true(test_auc(aut, d, 1500, 5000, NULL) == auc_size);
	/* explain sums to the score */
	assert_int_equal(model_save(size, a), 0);
	assert_int_equal(model_save(tab, b), 0);
	platt_of(&pa, &pb, a);
	for (i = 1500; i < 1600; i++) {
		s = d->sp_start[i];
		nsp = d->sp_start[i + 1] - s;
		f = explain_sum(size, d->tab + i * 3, d->sp + s, nsp, &added);
		assert_int_equal(model_predict(&p1, size, d->tab + i * 3,
					       d->sp + s, nsp),
				 0);
		assert_true(fabs(p1 - 1 / (1 + exp(pa * f + pb))) < 1e-6);
	}
	/* a big commit that only adds: lines added carry its risk */
	f = explain_sum(size, big, NULL, 0, &added);
	assert_int_equal(model_predict(&p1, size, big, NULL, 0), 0);
	assert_true(fabs(p1 - 1 / (1 + exp(pa * f + pb))) < 1e-6);
	assert_true(added > 1.0);
	/* a saved model loads and predicts the same */
	assert_int_equal(model_load(&back, a), 0);
	assert_int_equal(model_offset(back), MODEL_OFFSET_SIZE);
	for (i = 1500; i < 1600; i++) {
		s = d->sp_start[i];
		nsp = d->sp_start[i + 1] - s;
		assert_int_equal(model_predict(&p1, size, d->tab + i * 3,
					       d->sp + s, nsp),
				 0);
		assert_int_equal(model_predict(&p2, back, d->tab + i * 3,
					       d->sp + s, nsp),
				 0);
		assert_true(p1 == p2);
	}
	model_free(back);
	assert_int_equal(model_load(&back, b), 0);
	assert_int_equal(model_offset(back), MODEL_OFFSET_TABULAR);
	assert_true(test_auc(back, d, 1500, 5000, NULL) ==
		    test_auc(tab, d, 1500, 5000, NULL));
	model_free(back);
	/* training with the offset search is deterministic to the byte */
	assert_int_equal(model_save(aut, c), 0);
	assert_int_equal(model_save(aut2, b), 0);
	x = slurp(c, "manifest.json", &la);
	y = slurp(b, "manifest.json", &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(x, y, la);
	assert_non_null(strstr(x, "\"kind\": \"size\""));
	free(x);
	free(y);
	x = slurp(c, "trees.json", &la);
	y = slurp(b, "trees.json", &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(x, y, la);
	free(x);
	free(y);
	rm_model(a);
	rm_model(b);
	rm_model(c);
	rmdir(dir);
	model_free(none);
	model_free(size);
	model_free(tab);
	model_free(aut);
	model_free(aut2);
	free(idx);
	model_data_free(d);
}

/* A model directory written before the offset (no "offset") loads. */
static void test_manifest_without_offset(void **state)
{
	struct model_data *d = make_size_data(1500, 8);
	size_t *idx = seq(0, 1000);
	char dir[] = "/tmp/pt-model-XXXXXX", a[64], path[128];
	struct pt_model *m, *back;
	struct model_params p;
	json_error_t err;
	json_t *j;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/m", dir);
	params(&p, MODEL_KIND_FULL);
	p.offset = MODEL_OFFSET_NONE;
	assert_int_equal(model_train(&m, d, idx, 1000, &p), 0);
	assert_int_equal(model_save(m, a), 0);
	snprintf(path, sizeof(path), "%s/manifest.json", a);
	j = json_load_file(path, 0, &err);
	assert_non_null(j);
	assert_non_null(json_object_get(j, "offset"));
	assert_int_equal(json_object_del(j, "offset"), 0);
	assert_int_equal(json_dump_file(j, path, JSON_INDENT(2)), 0);
	assert_int_equal(model_load(&back, a), 0);
	assert_int_equal(model_offset(back), MODEL_OFFSET_NONE);
	assert_true(fabs(test_auc(back, d, 1000, 1500, NULL) -
			 test_auc(m, d, 1000, 1500, NULL)) < 1e-12);
	model_free(back);
	/* an offset that does not fit the columns is refused */
	assert_int_equal(json_object_set_new(j, "offset",
					     json_pack("{s:s, s:[f], s:f, s:f}",
						       "kind", "tabular", "w",
						       1.0, "mean", 0.0, "sd",
						       1.0)),
			 0);
	assert_int_equal(json_dump_file(j, path, JSON_INDENT(2)), 0);
	assert_int_equal(model_load(&back, a), PT_EINVAL);
	assert_null(back);
	json_decref(j);
	rm_model(a);
	rmdir(dir);
	model_free(m);
	free(idx);
	model_data_free(d);
}

/* Reversing rows twice gives the rows back; once, each row's parts move. */
static void test_reverse(void **state)
{
	const char *cols[] = { "a", "b" };
	struct model_data *d;
	size_t i, j;

	(void)state;
	assert_int_equal(model_data_new(&d, cols, 2), 0);
	for (i = 0; i < 5; i++) {
		struct model_sparse sp[4];
		float t[2] = { (float)i, (float)(10 * i) };

		for (j = 0; j < i; j++) {
			sp[j].index = (uint32_t)(100 * i + j);
			sp[j].value = (float)j;
		}
		assert_int_equal(model_data_add(d, t, sp, i, (int)(i % 2),
						(int64_t)i, (double)i + 1),
				 0);
	}
	model_data_reverse(d);
	for (i = 0; i < 5; i++) {
		size_t r = 4 - i; /* the row that is now at i */

		assert_true(d->tab[i * 2] == (float)r);
		assert_true(d->tab[i * 2 + 1] == (float)(10 * r));
		assert_int_equal(d->y[i], (int)(r % 2));
		assert_int_equal(d->time[i], (int64_t)r);
		assert_true(d->effort[i] == (double)r + 1);
		assert_int_equal(d->sp_start[i + 1] - d->sp_start[i], r);
		for (j = 0; j < r; j++)
			assert_int_equal(d->sp[d->sp_start[i] + j].index,
					 100 * r + j);
	}
	assert_int_equal(d->sp_start[0], 0);
	assert_int_equal(d->sp_start[5], d->nsp);
	model_data_reverse(d);
	for (i = 0; i < 5; i++) {
		assert_int_equal(d->time[i], (int64_t)i);
		assert_int_equal(d->sp_start[i + 1] - d->sp_start[i], i);
	}
	model_data_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_planted_signal),
		cmocka_unit_test(test_shuffled_labels),
		cmocka_unit_test(test_calibration),
		cmocka_unit_test(test_deterministic_save_load),
		cmocka_unit_test(test_jobs_same_model),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_offset),
		cmocka_unit_test(test_manifest_without_offset),
		cmocka_unit_test(test_reverse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
