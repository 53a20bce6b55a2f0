/*
 * test_explain.c - reasons from contributions: a text model trained on
 * synthetic rows where three tokens carry the label; explain_vec() must
 * list, for a patch with 150 tokens, exactly the strongest ones by the
 * model's own contributions (model_explain), strongest first, with the
 * planted tokens among them, the rest in one row, and the rows must sum
 * to the log-odds; tokens that say the same word are one row, function
 * words are never named; tokens sharing a hashed index are told by the
 * first of them, a word of the changelog and of the code are two rows.
 * The release-cycle columns state the
 * mainline's tag when the patch was written ("posted" for a mail), each
 * in its own sentence, never "merged in".  No column's description or
 * reason, known or unknown, carries a subsystem prefix of some tree as
 * an example ("(as net/mlx5:)").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/model/explain.h"
#include "scoring/model/features.h"
#include "scoring/model/metrics.h"
#include "scoring/model/model.h"

#define NROWS 800
#define NTOK 150
#define TEXT_TOKENS 12 /* explain.c lists at most this many tokens */

static struct pt_model *train_text(void)
{
	struct model_data *d;
	struct model_params p;
	struct pt_model *m = NULL;
	float tab[FEAT_NTAB];
	size_t i, j, *idx = calloc(NROWS, sizeof(*idx));
	uint64_t st = 42;

	assert_non_null(idx);
	for (j = 0; j < FEAT_NTAB; j++)
		tab[j] = NAN;
	assert_int_equal(model_data_new(&d, feat_names(), FEAT_NTAB), 0);
	for (i = 0; i < NROWS; i++) {
		struct model_sparse sp[24];
		size_t n = 0;
		int t3 = metrics_rand(&st) % 4 == 0;
		int t11 = metrics_rand(&st) % 4 == 0;
		int t17 = metrics_rand(&st) % 4 == 0;
		int y = (t3 || t11) && !t17;

		if (t3)
			sp[n++] = (struct model_sparse){ 3, 1.0f };
		if (t11)
			sp[n++] = (struct model_sparse){ 11, 1.0f };
		if (t17)
			sp[n++] = (struct model_sparse){ 17, 1.0f };
		for (j = 0; j < 12; j++)
			sp[n++] = (struct model_sparse){
				(uint32_t)(20 +
					   metrics_rand(&st) % (NTOK - 20)),
				0.5f
			};
		/* occasional label noise keeps every slice two-class */
		if (metrics_rand(&st) % 20 == 0)
			y = !y;
		assert_int_equal(model_data_add(d, tab, sp, n, y, (int64_t)i,
						10),
				 0);
		idx[i] = i;
	}
	model_params_default(&p, MODEL_KIND_TEXT);
	p.task = "fix";
	assert_int_equal(model_train(&m, d, idx, NROWS, &p), 0);
	model_data_free(d);
	free(idx);
	return m;
}

static int cmp_abs_desc(const void *a, const void *b)
{
	double x = fabs(*(const double *)a), y = fabs(*(const double *)b);

	return x > y ? -1 : x < y;
}

static double row_sum(const struct explain_reason *r, size_t n)
{
	double s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += r[i].weight;
	return s;
}

static void test_strongest_tokens(void **state)
{
	struct pt_model *m = train_text();
	struct feat_vec v;
	struct model_contrib *c;
	struct explain_reason *r;
	double bias, bias2, w[NTOK], sum;
	size_t nc, nr, i, ntext = 0, k, nonzero = 0;
	int saw3 = 0, saw11 = 0, saw17 = 0;
	const char *tok;
	char *end;

	(void)state;
	memset(&v, 0, sizeof(v));
	for (i = 0; i < FEAT_NTAB; i++)
		v.tab[i] = NAN;
	v.sp = calloc(NTOK, sizeof(*v.sp));
	v.sp_names = calloc(NTOK, sizeof(*v.sp_names));
	assert_true(v.sp && v.sp_names);
	for (i = 0; i < NTOK; i++) {
		char name[32];

		v.sp[i] = (struct model_sparse){ (uint32_t)i, 0.1f };
		snprintf(name, sizeof(name), "w:tok%zu", i);
		v.sp_names[i] = strdup(name);
	}
	v.nsp = v.spcap = NTOK;

	assert_int_equal(model_explain(&c, &nc, &bias, m, v.tab, v.sp, v.nsp),
			 0);
	assert_int_equal(nc, NTOK);
	for (i = 0, sum = 0; i < nc; i++) {
		w[i] = c[i].value;
		sum += c[i].value;
		nonzero += c[i].value != 0;
	}
	free(c);
	qsort(w, NTOK, sizeof(*w), cmp_abs_desc);

	assert_int_equal(explain_vec(&r, &nr, &bias2, m, &v), 0);
	assert_true(bias2 == bias);
	assert_true(fabs(row_sum(r, nr) - sum) < 1e-9);
	for (i = 0; i < nr; i++) {
		if (strcmp(r[i].feature, "text")) {
			assert_string_equal(r[i].feature, "text.other");
			/* tokens the model gives no weight are no row */
			assert_true(r[i].value == nonzero - TEXT_TOKENS);
			continue;
		}
		/* the i-th listed token is the i-th strongest contribution */
		assert_true(fabs(r[i].weight) == fabs(w[ntext]));
		if (i)
			assert_true(fabs(r[i].weight) <= fabs(r[i - 1].weight));
		assert_non_null(strstr(r[i].text, "changelog says 'tok"));
		tok = strstr(r[i].text, "tok") + 3;
		k = (size_t)strtoul(tok, &end, 10);
		assert_true(end != tok);
		saw3 |= k == 3;
		saw11 |= k == 11;
		saw17 |= k == 17;
		ntext++;
	}
	assert_int_equal(ntext, TEXT_TOKENS);
	assert_true(saw3 && saw11 && saw17);
	explain_free(r, nr);
	feat_vec_free(&v);
	model_free(m);
}

static const struct explain_reason *find(const struct explain_reason *r,
					 size_t n, const char *text)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(r[i].text, text))
			return &r[i];
	return NULL;
}

/*
 * "fix" as the subject's word, its first word, half of its first pair
 * and a changelog word is one row; "null" gets the pair's other half;
 * "the" is never named; code and prefix tokens are their own facts.
 */
static void test_grouping(void **state)
{
	static const char *const names[] = {
		"s:fix", "v:fix",   "v:fix_null", "w:fix",     "s:null",
		"w:the", "+:kfree", "-:kfree",	  "p:net/ice",
	};
	static const uint32_t index[] = { 3, 11, 17, 20, 21, 22, 23, 24, 25 };
	struct pt_model *m = train_text();
	const struct explain_reason *fix, *null, *kfree, *pre, *other;
	struct model_contrib *c;
	struct explain_reason *r;
	double bias, cw[9], sum = 0;
	struct feat_vec v;
	size_t i, nc, nr, n = sizeof(names) / sizeof(*names);

	(void)state;
	memset(&v, 0, sizeof(v));
	for (i = 0; i < FEAT_NTAB; i++)
		v.tab[i] = NAN;
	v.sp = calloc(n, sizeof(*v.sp));
	v.sp_names = calloc(n, sizeof(*v.sp_names));
	assert_true(v.sp && v.sp_names);
	for (i = 0; i < n; i++) {
		v.sp[i] = (struct model_sparse){ index[i], 1.0f };
		v.sp_names[i] = strdup(names[i]);
	}
	v.nsp = v.spcap = n;
	assert_int_equal(model_explain(&c, &nc, &bias, m, v.tab, v.sp, v.nsp),
			 0);
	assert_int_equal(nc, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(c[i].index, index[i]);
		cw[i] = c[i].value;
		sum += c[i].value;
	}
	free(c);
	assert_int_equal(explain_vec(&r, &nr, &bias, m, &v), 0);
	assert_int_equal(nr, 5);
	assert_true(fabs(row_sum(r, nr) - sum) < 1e-9);
	fix = find(r, nr, "subject says 'fix'");
	null = find(r, nr, "subject says 'null'");
	kfree = find(r, nr, "adds and removes code with 'kfree'");
	pre = find(r, nr, "subject prefix 'net/ice'");
	other = find(r, nr, "1 other word of the subject, changelog and code");
	assert_true(fix && null && kfree && pre && other);
	assert_true(fabs(fix->weight - (cw[0] + cw[1] + cw[2] / 2 + cw[3])) <
		    1e-12);
	assert_true(fabs(null->weight - (cw[4] + cw[2] / 2)) < 1e-12);
	assert_true(fabs(kfree->weight - (cw[6] + cw[7])) < 1e-12);
	assert_true(fabs(pre->weight - cw[8]) < 1e-12);
	assert_true(other->weight == cw[5]);
	assert_string_equal(other->feature, "text.other");
	for (i = 0; i < nr; i++)
		assert_null(strstr(r[i].text, "'the'"));
	explain_free(r, nr);
	feat_vec_free(&v);
	model_free(m);
}

/* "don't": the pair's 't' is no token, so "don" takes the whole pair. */
static void test_short_pair(void **state)
{
	static const char *const names[] = { "v:don", "v:don_t", "s:don" };
	static const uint32_t index[] = { 3, 11, 17 };
	struct pt_model *m = train_text();
	struct model_contrib *c;
	struct explain_reason *r;
	double bias, sum = 0;
	struct feat_vec v;
	size_t i, nc, nr;

	(void)state;
	memset(&v, 0, sizeof(v));
	for (i = 0; i < FEAT_NTAB; i++)
		v.tab[i] = NAN;
	v.sp = calloc(3, sizeof(*v.sp));
	v.sp_names = calloc(3, sizeof(*v.sp_names));
	assert_true(v.sp && v.sp_names);
	for (i = 0; i < 3; i++) {
		v.sp[i] = (struct model_sparse){ index[i], 1.0f };
		v.sp_names[i] = strdup(names[i]);
	}
	v.nsp = v.spcap = 3;
	assert_int_equal(model_explain(&c, &nc, &bias, m, v.tab, v.sp, v.nsp),
			 0);
	for (i = 0; i < nc; i++)
		sum += c[i].value;
	free(c);
	assert_int_equal(explain_vec(&r, &nr, &bias, m, &v), 0);
	assert_int_equal(nr, 1);
	assert_string_equal(r[0].text, "subject says 'don'");
	assert_true(fabs(r[0].weight - sum) < 1e-12);
	explain_free(r, nr);
	feat_vec_free(&v);
	model_free(m);
}

/*
 * Two tokens hashed to one index are told by the first of them, and one
 * word in the changelog and in the code is two facts: explain.c finds
 * names and words through indexes, not by scanning, and must keep both.
 */
static void test_shared_index(void **state)
{
	static const char *const names[] = {
		"w:leak", "+:leak", "w:queue", "-:leak", "w:leak",
	};
	static const uint32_t index[] = { 3, 11, 17, 3, 20 };
	struct pt_model *m = train_text();
	const struct explain_reason *log, *code;
	struct model_contrib *c;
	struct explain_reason *r;
	double bias, cw[5];
	struct feat_vec v;
	size_t i, nc, nr, n = sizeof(names) / sizeof(*names);

	(void)state;
	memset(&v, 0, sizeof(v));
	for (i = 0; i < FEAT_NTAB; i++)
		v.tab[i] = NAN;
	v.sp = calloc(n, sizeof(*v.sp));
	v.sp_names = calloc(n, sizeof(*v.sp_names));
	assert_true(v.sp && v.sp_names);
	for (i = 0; i < n; i++) {
		v.sp[i] = (struct model_sparse){ index[i], 1.0f };
		v.sp_names[i] = strdup(names[i]);
	}
	v.nsp = v.spcap = n;
	assert_int_equal(model_explain(&c, &nc, &bias, m, v.tab, v.sp, v.nsp),
			 0);
	assert_int_equal(nc, n);
	for (i = 0; i < n; i++)
		cw[i] = c[i].value;
	free(c);
	assert_int_equal(explain_vec(&r, &nr, &bias, m, &v), 0);
	/* index 3 twice: both are "w:leak", with index 20's "w:leak" */
	log = find(r, nr, "changelog says 'leak'");
	code = find(r, nr, "adds code with 'leak'");
	assert_non_null(log);
	assert_non_null(code);
	assert_null(find(r, nr, "removes code with 'leak'"));
	assert_true(log->weight == cw[0] + cw[3] + cw[4]);
	assert_true(code->weight == cw[1]);
	assert_non_null(find(r, nr, "changelog says 'queue'"));
	explain_free(r, nr);
	feat_vec_free(&v);
	model_free(m);
}

/* Reasons that say nothing of the patch are never shown. */
static void test_shown(void **state)
{
	struct explain_reason r = { NULL, "review.reviewer_bug_rate", 0.2, 0.5,
				    0 };

	(void)state;
	assert_true(explain_shown(&r));
	r.value = NAN; /* "unknown" weighs, but is no reason */
	assert_false(explain_shown(&r));
	r.value = 0.2;
	r.weight = 0;
	assert_false(explain_shown(&r));
	r = (struct explain_reason){ NULL, "text", 1, -0.3, 1 };
	assert_true(explain_shown(&r));
	r.feature = "text.other";
	assert_false(explain_shown(&r));
}

/* Two columns that say the same thing are one reason. */
static void test_pick(void **state)
{
	struct explain_reason r[] = {
		{ "one sentence for two columns", "proc.rc", 6, 0.9, 0 },
		{ "one sentence for two columns", "proc.late_rc", 1, 0.5, 0 },
		{ "lines added: 40", "size.lines_added", 40, -0.4, 0 },
		{ "3 other words", "text.other", 3, 0.3, 1 },
		{ "subject says 'fix'", "text", 1, 0.2, 1 },
	};
	size_t idx[5], n;

	(void)state;
	n = explain_pick(idx, 5, r, 5, 0);
	assert_int_equal(n, 3);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 2);
	assert_int_equal(idx[2], 4);
	n = explain_pick(idx, 5, r, 5, 1);
	assert_int_equal(n, 2);
	assert_int_equal(idx[1], 4);
	assert_int_equal(explain_pick(idx, 1, r, 5, 0), 1);
}

static char *cycle_text(enum feat_id id, double x, const struct feat_vec *v)
{
	struct buf b = BUF_INIT;

	assert_int_equal(explain_cycle(&b, id, x, v), 0);
	return buf_detach(&b, NULL);
}

/* "authored while the mainline was at", "posted ..." for a mail */
static void test_cycle_sentences(void **state)
{
	static const enum feat_id ids[] = { FEAT_RC, FEAT_LATE_RC,
					    FEAT_DAYS_TAG, FEAT_DAYS_RELEASE };
	static const double x[] = { 6, 1, 12.3, 40.5 };
	static const char *const want[] = {
		"authored while the mainline was at v6.8-rc6",
		"authored while the mainline was at v6.8-rc6, a late -rc (rc5 "
		"or later)",
		"authored 12.3 days after the mainline's v6.8-rc6 tag",
		"authored 40.5 days after the mainline's v6.7 release",
	};
	struct feat_vec v;
	char *t[4], *u;
	size_t i, j;

	(void)state;
	memset(&v, 0, sizeof(v));
	v.release_tag = "v6.8-rc6";
	v.release = "v6.7";
	for (i = 0; i < 4; i++) {
		t[i] = cycle_text(ids[i], x[i], &v);
		assert_string_equal(t[i], want[i]);
		assert_null(strstr(t[i], "merged"));
		for (j = 0; j < i; j++)
			assert_string_not_equal(t[i], t[j]);
	}
	u = cycle_text(FEAT_LATE_RC, 0, &v);
	assert_string_equal(u, "authored while the mainline was at v6.8-rc6, "
			       "not a late -rc (rc5 or later)");
	free(u);
	v.from_mail = 1;
	u = cycle_text(FEAT_RC, 6, &v);
	assert_string_equal(u, "posted while the mainline was at v6.8-rc6");
	free(u);
	/* the newest tag is the release: the two day counts are one fact */
	v.release_tag = v.release = "v6.8";
	u = cycle_text(FEAT_DAYS_TAG, 3.5, &v);
	assert_string_equal(u, "posted 3.5 days after the mainline's v6.8 "
			       "release");
	free(t[3]);
	t[3] = cycle_text(FEAT_DAYS_RELEASE, 3.5, &v);
	assert_string_equal(u, t[3]);
	free(u);
	/* no mainline tag before it: each column says so in its own words */
	v.release_tag = v.release = NULL;
	for (i = 0; i < 4; i++) {
		free(t[i]);
		t[i] = cycle_text(ids[i], NAN, &v);
		assert_non_null(strstr(t[i], "known before it was posted"));
		for (j = 0; j < i; j++)
			assert_string_not_equal(t[i], t[j]);
	}
	for (i = 0; i < 4; i++)
		free(t[i]);
}

/*
 * A subsystem prefix of some tree written into the wording ("net/mlx5:",
 * "(as ext4:)"): a reason may only name what the scored patch and its
 * repository give it.
 */
static int tree_example(const char *t)
{
	static const char *const re[] = {
		"[a-z0-9_-]+/[a-z0-9_.-]+:",
		"\\((as|e\\.g\\.|like|such as) [^)]*:\\)",
	};
	size_t i;
	int hit = 0;

	for (i = 0; i < 2 && !hit; i++) {
		regex_t r;

		assert_int_equal(regcomp(&r, re[i], REG_EXTENDED | REG_NOSUB),
				 0);
		hit = !regexec(&r, t, 0, NULL, 0);
		regfree(&r);
	}
	return hit;
}

/* Every column's reason, known and unknown, carries no tree's example. */
static void test_no_tree_examples(void **state)
{
	static const double xs[] = { NAN, 0, 1, 3 };
	struct model_data *d;
	struct model_params p;
	struct pt_model *m = NULL;
	struct explain_reason *r;
	struct feat_vec v;
	float tab[FEAT_NTAB];
	size_t i, j, n, idx[200];
	uint64_t st = 7;
	double bias;

	(void)state;
	assert_true(tree_example("earlier commits (as net/mlx5:)"));
	assert_true(tree_example("the component (as ext4:)"));
	assert_false(tree_example("no Reviewed-by/Acked-by from a maintainer"));
	for (i = 0; i < FEAT_NTAB; i++)
		if (tree_example(feat_desc((enum feat_id)i)))
			fail_msg("%s: '%s'", feat_name((enum feat_id)i),
				 feat_desc((enum feat_id)i));
	assert_int_equal(model_data_new(&d, feat_names(), FEAT_NTAB), 0);
	for (i = 0; i < 200; i++) {
		for (j = 0; j < FEAT_NTAB; j++)
			tab[j] = (float)(metrics_rand(&st) % 4);
		assert_int_equal(model_data_add(d, tab, NULL, 0, (int)(i % 2),
						(int64_t)i, 10),
				 0);
		idx[i] = i;
	}
	model_params_default(&p, MODEL_KIND_TABLR);
	p.task = "fix";
	assert_int_equal(model_train(&m, d, idx, 200, &p), 0);
	for (i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		memset(&v, 0, sizeof(v));
		for (j = 0; j < FEAT_NTAB; j++)
			v.tab[j] = (float)xs[i];
		assert_int_equal(explain_vec(&r, &n, &bias, m, &v), 0);
		assert_true(n > 0);
		for (j = 0; j < n; j++)
			if (tree_example(r[j].text))
				fail_msg("%s: '%s'", r[j].feature, r[j].text);
		explain_free(r, n);
	}
	model_free(m);
	model_data_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strongest_tokens),
		cmocka_unit_test(test_grouping),
		cmocka_unit_test(test_short_pair),
		cmocka_unit_test(test_shared_index),
		cmocka_unit_test(test_shown),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_cycle_sentences),
		cmocka_unit_test(test_no_tree_examples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
