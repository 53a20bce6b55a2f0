/*
 * dataset.c - rows of a mined repository for training and evaluation
 * (see dataset.h): commits read back with libgit2 (patch_from_commit),
 * features as of each commit, labels from the miner's labels table, and
 * the task masks and keyword baseline that train and eval share, and the
 * label regime that decides which rows both use.
 */
#include "scoring/model/dataset.h"
#include "scoring/model/dataset_int.h"

#include <git2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "scoring/patch/patch.h"
#include "scoring/store/db_row.h"
#include "scoring/util/gitlimits.h"

const char *dataset_task_name(enum dataset_task t)
{
	return t == TASK_FIX ? "fix" : "risk";
}

void dataset_free(struct dataset *ds)
{
	if (!ds)
		return;
	model_data_free(ds->d);
	free(ds->commit_id);
	free(ds->fix);
	free(ds->bug);
	free(ds->discovered);
	free(ds->negok);
	free(ds->keyword);
	free(ds->has_reviewed);
	free(ds->has_tested);
	free(ds);
}

int dataset_repo(int64_t *out, struct db *db, const char *repo)
{
	sqlite3_stmt *st;
	int rc, n = 0;

	*out = 0;
	rc = db_prepare(&st, db, "SELECT id, path FROM repos ORDER BY id");
	if (rc)
		return rc;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(st, 1);
		int64_t id = sqlite3_column_int64(st, 0);

		if (repo && path && !strcmp(repo, path)) {
			*out = id;
			n = 1;
			break;
		}
		if (!repo) {
			*out = id;
			n++;
		}
	}
	sqlite3_finalize(st);
	if (repo && !n) {
		char *real = realpath(repo, NULL);

		if (real && strcmp(real, repo)) {
			rc = dataset_repo(out, db, real);
			free(real);
			return rc;
		}
		free(real);
		return pt_error_set(PT_ENOTFOUND,
				    "repository '%s' is not "
				    "mined; run 'patchtriage mine --repo %s'",
				    repo, repo);
	}
	if (!n)
		return pt_error_set(PT_ENOTFOUND,
				    "no mined repository; run "
				    "'patchtriage mine --repo DIR'");
	if (n > 1)
		return pt_error_set(PT_EINVAL,
				    "%d repositories are mined; "
				    "name one with --repo",
				    n);
	return 0;
}

static const char *const fix_words[] = {
	"fix",	    "bug",	  "crash",	   "leak",
	"null",	    "overflow",	  "underflow",	   "race",
	"deadlock", "oops",	  "panic",	   "use-after-free",
	"uaf",	    "corrupt",	  "regression",	   "incorrect",
	"wrong",    "missing",	  "prevent",	   "avoid",
	"invalid",  "uninitiali", "out of bounds", "out-of-bounds",
	"hang",	    "segfault",	  "error path",	   "double free",
	"warning",  NULL,
};

double dataset_keyword_score(const struct patch *p)
{
	const char *subj = p->subject.clean ? p->subject.clean : "";
	const char *cl = p->changelog ? p->changelog : "";
	unsigned lines = p->added + p->removed;
	double s = 0;
	size_t i;

	for (i = 0; fix_words[i]; i++) {
		if (strcasestr(subj, fix_words[i]))
			s += 2;
		else if (strcasestr(cl, fix_words[i]))
			s += 1;
	}
	if (lines <= 100)
		s += 1;
	if (lines <= 20)
		s += 1;
	/* a tiny tie-break so that equal rule scores prefer smaller patches */
	return s - (double)lines * 1e-6;
}

void dataset_task_mask(unsigned char *use, enum dataset_task t)
{
	size_t i;

	for (i = 0; i < FEAT_NTAB; i++)
		use[i] = !(t == TASK_FIX &&
			   feat_group_of((enum feat_id)i) == FEAT_G_LABEL);
}

void dataset_kamei_mask(unsigned char *use, enum dataset_task t)
{
	static const enum feat_id k[] = {
		FEAT_NS,  FEAT_ND,   FEAT_NF,	FEAT_ENTROPY, FEAT_LA,
		FEAT_LD,  FEAT_LT,   FEAT_NDEV, FEAT_AGE,     FEAT_NUC,
		FEAT_EXP, FEAT_REXP, FEAT_SEXP,
	};
	size_t i;

	memset(use, 0, FEAT_NTAB);
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		use[k[i]] = 1;
	if (t == TASK_RISK)
		use[FEAT_HAS_FIXES] = 1; /* Kamei's FIX */
}

void dataset_mask_drop(unsigned char *use, enum feat_group g)
{
	size_t i;

	for (i = 0; i < FEAT_NTAB; i++)
		if (feat_group_of((enum feat_id)i) == g)
			use[i] = 0;
}

void dataset_set_labels(struct dataset *ds, enum dataset_task t, int64_t asof)
{
	size_t i;

	for (i = 0; i < ds->n; i++)
		ds->d->y[i] = t == TASK_FIX
				      ? ds->fix[i]
				      : ds->bug[i] && ds->discovered[i] < asof;
}

/* ---- label regime --------------------------------------------------- */

/* months of history judged; anything older joins the oldest month */
#define REGIME_MAX_MONTHS (12 * 200)

/* Months since 1970-01 (UTC) of a time. */
static int64_t month_of(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm))
		return 0;
	return ((int64_t)tm.tm_year - 70) * 12 + tm.tm_mon;
}

static int64_t month_start(int64_t month)
{
	struct tm tm;
	int64_t y = month >= 0 ? month / 12 : (month - 11) / 12;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = (int)(y + 70);
	tm.tm_mon = (int)(month - y * 12);
	tm.tm_mday = 1;
	return (int64_t)timegm(&tm);
}

static void day_str(char *out, size_t cap, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d", &tm))
		snprintf(out, cap, "%lld", (long long)t);
}

static double pct(size_t part, size_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/*
 * The rule of dataset.h on per-month counts n[] and fix[] (prefix sums
 * in cn[], cf[], nm + 1 of each): the index of the first month kept, 0
 * when no month is out of line.
 */
static size_t regime_rule(const uint64_t *cn, const uint64_t *cf, size_t nm)
{
	size_t i, start = 0;

	for (i = 0; i < nm; i++) {
		size_t lo = i + 1 > DATASET_REGIME_WINDOW
				    ? i + 1 - DATASET_REGIME_WINDOW
				    : 0;
		uint64_t wn = cn[i + 1] - cn[lo], wf = cf[i + 1] - cf[lo];
		uint64_t sn = cn[nm] - cn[i], sf = cf[nm] - cf[i];

		if (wn < DATASET_REGIME_MIN_WINDOW ||
		    sn < DATASET_REGIME_MIN_WINDOW)
			continue;
		/* wf / wn < (sf / sn) / DIV, without division */
		if (wf * DATASET_REGIME_DIV * sn < sf * wn)
			start = i + 1;
	}
	return start;
}

/* Per-month prefix sums of commits and fixes of a repository. */
static int regime_months(uint64_t **cn, uint64_t **cf, size_t *nm,
			 int64_t *first, struct db *db, int64_t repo_id)
{
	sqlite3_stmt *st = NULL;
	int64_t last = 0;
	size_t i;
	int rc;

	*cn = *cf = NULL;
	*nm = 0;
	rc = db_prepare(&st, db,
			"SELECT min(c.commit_date), max(c.commit_date) FROM "
			"commits c JOIN labels l ON l.commit_id = c.id WHERE "
			"c.repo_id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*first = month_of(sqlite3_column_int64(st, 0));
		last = month_of(sqlite3_column_int64(st, 1));
		if (last - *first >= REGIME_MAX_MONTHS)
			*first = last - REGIME_MAX_MONTHS + 1;
		*nm = (size_t)(last - *first + 1);
	}
	sqlite3_finalize(st);
	st = NULL;
	*cn = pt_calloc(*nm + 1, sizeof(**cn));
	*cf = pt_calloc(*nm + 1, sizeof(**cf));
	if (!*cn || !*cf) {
		rc = PT_ENOMEM;
		goto out;
	}
	if (!*nm)
		goto out;
	rc = db_prepare(&st, db,
			"SELECT c.commit_date, l.is_fix FROM commits c JOIN "
			"labels l ON l.commit_id = c.id WHERE c.repo_id = ?");
	if (rc)
		goto out;
	sqlite3_bind_int64(st, 1, repo_id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t m = month_of(sqlite3_column_int64(st, 0)) - *first;

		m = m < 0 ? 0 : m >= (int64_t)*nm ? (int64_t)*nm - 1 : m;
		(*cn)[m + 1]++;
		(*cf)[m + 1] += sqlite3_column_int(st, 1) != 0;
	}
	for (i = 0; i < *nm; i++) {
		(*cn)[i + 1] += (*cn)[i];
		(*cf)[i + 1] += (*cf)[i];
	}
out:
	sqlite3_finalize(st);
	if (rc) {
		free(*cn);
		free(*cf);
		*cn = *cf = NULL;
	}
	return rc;
}

/* Commits (and fixes) of a repository before and from time t. */
static int regime_count(struct dataset_regime *r, struct db *db,
			int64_t repo_id, int64_t t)
{
	sqlite3_stmt *st;
	int rc = db_prepare(&st, db,
			    "SELECT c.commit_date < ?2, count(*), "
			    "coalesce(sum(l.is_fix != 0), 0) FROM commits c "
			    "JOIN labels l ON l.commit_id = c.id WHERE "
			    "c.repo_id = ?1 GROUP BY 1");

	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_int64(st, 2, t);
	r->before = r->before_fix = r->after = r->after_fix = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		size_t n = (size_t)sqlite3_column_int64(st, 1);
		size_t f = (size_t)sqlite3_column_int64(st, 2);

		if (sqlite3_column_int(st, 0)) {
			r->before = n;
			r->before_fix = f;
		} else {
			r->after = n;
			r->after_fix = f;
		}
	}
	sqlite3_finalize(st);
	return 0;
}

static void regime_why(struct dataset_regime *r, size_t total, size_t total_fix)
{
	char d[32], rule[96];

	day_str(d, sizeof(d), r->start);
	if (r->rule_start) {
		char rd[32];

		day_str(rd, sizeof(rd), r->rule_start);
		snprintf(rule, sizeof(rule), "the label regime rule gives %s",
			 rd);
	} else {
		snprintf(rule, sizeof(rule),
			 "the label regime rule would "
			 "keep every row");
	}
	switch (r->how) {
	case REGIME_FOUND:
		snprintf(r->why, sizeof(r->why),
			 "rows before %s left out: %.1f%% of the %zu commits "
			 "before it carry Fixes:/Cc: stable, %.1f%% of the %zu "
			 "from it on (it is the first month from which the "
			 "trailing %d-month share stays at or above 1/%d of "
			 "the share over all later commits)",
			 d, pct(r->before_fix, r->before), r->before,
			 pct(r->after_fix, r->after), r->after,
			 DATASET_REGIME_WINDOW, DATASET_REGIME_DIV);
		break;
	case REGIME_THROUGHOUT:
		snprintf(r->why, sizeof(r->why),
			 "every row kept: the trailing %d-month share of "
			 "commits with Fixes:/Cc: stable never falls below 1/%d"
			 " of the share over all later commits (%.1f%% of %zu "
			 "commits carry them)",
			 DATASET_REGIME_WINDOW, DATASET_REGIME_DIV,
			 pct(total_fix, total), total);
		break;
	case REGIME_TOO_LITTLE:
		snprintf(r->why, sizeof(r->why),
			 "every row kept: too little data to tell when "
			 "Fixes:/Cc: stable came into use (%zu commits, %zu "
			 "with them; a start needs %d commits and %d with them "
			 "from it on)",
			 total, total_fix, DATASET_REGIME_MIN_ROWS,
			 DATASET_REGIME_MIN_FIXES);
		break;
	case REGIME_SINCE:
		snprintf(r->why, sizeof(r->why),
			 "rows before %s left out (--since; %.1f%% of the %zu "
			 "commits before it carry Fixes:/Cc: stable, %.1f%% of "
			 "the %zu from it on); %s",
			 d, pct(r->before_fix, r->before), r->before,
			 pct(r->after_fix, r->after), r->after, rule);
		break;
	case REGIME_ALL:
		snprintf(r->why, sizeof(r->why),
			 "every row kept (--since all); %s", rule);
		break;
	}
}

int dataset_regime(struct dataset_regime *out, struct db *db, int64_t repo_id,
		   int64_t since)
{
	uint64_t *cn = NULL, *cf = NULL;
	size_t nm, k, total, total_fix;
	int64_t first = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = regime_months(&cn, &cf, &nm, &first, db, repo_id);
	if (rc)
		return rc;
	total = (size_t)cn[nm];
	total_fix = (size_t)cf[nm];
	k = regime_rule(cn, cf, nm);
	if (total < DATASET_REGIME_MIN_ROWS ||
	    total_fix < DATASET_REGIME_MIN_FIXES ||
	    (k && (cn[nm] - cn[k] < DATASET_REGIME_MIN_ROWS ||
		   cf[nm] - cf[k] < DATASET_REGIME_MIN_FIXES)))
		out->how = REGIME_TOO_LITTLE;
	else if (k)
		out->how = REGIME_FOUND;
	else
		out->how = REGIME_THROUGHOUT;
	if (out->how == REGIME_FOUND)
		out->rule_start = month_start(first + (int64_t)k);
	if (since == DATASET_SINCE_AUTO) {
		out->start = out->rule_start;
	} else if (since == 0) {
		out->how = REGIME_ALL;
	} else {
		out->how = REGIME_SINCE;
		out->start = since;
	}
	rc = regime_count(out, db, repo_id, out->start);
	if (!rc)
		regime_why(out, total, total_fix);
	free(cn);
	free(cf);
	return rc;
}

int dataset_parse_since(int64_t *out, const char *s)
{
	struct tm tm;
	const char *end;

	*out = DATASET_SINCE_AUTO;
	if (!strcmp(s, "auto"))
		return 0;
	*out = 0;
	if (!strcmp(s, "all"))
		return 0;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (!end || *end)
		return pt_error_set(PT_EINVAL,
				    "bad --since '%s': a day "
				    "(YYYY-MM-DD), 'all' or 'auto'",
				    s);
	*out = (int64_t)timegm(&tm);
	/* the epoch itself would read as "all" */
	if (!*out)
		*out = 1;
	return 0;
}

static int count_rows(size_t *n, struct db *db, int64_t repo_id, int64_t since)
{
	const int64_t args[] = { repo_id, since };
	int64_t v;
	int rc = db_row_int64(&v, 1, db,
			      "SELECT count(*), max(newest) FROM commits c, "
			      "repos r WHERE c.repo_id = ? AND r.id = "
			      "c.repo_id AND c.commit_date >= ?",
			      args, 2);

	if (rc < 0)
		return rc;
	*n = (size_t)v;
	return 0;
}

int dataset_rows_note(struct buf *b, const struct dataset *ds)
{
	int rc = buf_addf(b,
			  "%zu of the %zu labelled commits from the regime "
			  "start",
			  ds->n, ds->considered);

	if (!rc && ds->capped)
		rc = buf_addf(b, "; %zu oldest left out by %s (rows: %.0f MiB)",
			      ds->capped,
			      ds->budget_bound ? "the memory budget "
						 "(--max-memory)"
					       : "--max-rows",
			      (double)dataset_bytes(ds) / (1 << 20));
	if (!rc && ds->unreadable)
		rc = buf_addf(b,
			      "; %zu left out, not readable as a patch "
			      "(first: %s)",
			      ds->unreadable, ds->unreadable_why);
	return rc;
}

/* Bytes a row holds in struct dataset beside its model_data row. */
#define ROW_EXTRA (sizeof(int64_t) * 2 + sizeof(int) * 2 + sizeof(double) + 3)

size_t dataset_bytes(const struct dataset *ds)
{
	return model_data_bytes(ds->d) + ds->n * ROW_EXTRA;
}

#define REV(T, a)                                             \
	do {                                                  \
		for (i = 0, j = ds->n - 1; i < j; i++, j--) { \
			T t_ = (a)[i];                        \
			(a)[i] = (a)[j];                      \
			(a)[j] = t_;                          \
		}                                             \
	} while (0)

/* Rows read newest first back in time order. */
static void dataset_reverse(struct dataset *ds)
{
	size_t i, j;

	if (ds->n < 2)
		return;
	model_data_reverse(ds->d);
	REV(int64_t, ds->commit_id);
	REV(int, ds->fix);
	REV(int, ds->bug);
	REV(int64_t, ds->discovered);
	REV(unsigned char, ds->negok);
	REV(double, ds->keyword);
	REV(unsigned char, ds->has_reviewed);
	REV(unsigned char, ds->has_tested);
}
#undef REV

/*
 * libgit2's limits while the rows are read.  By default it maps packs in
 * 1 GiB windows up to 8 GiB and caches 256 MiB of objects, all of which
 * counts in the peak RSS: on a 100k-commit history (a 382 MB pack) that
 * was most of train's 1.1 GiB, with the rows themselves 116 MiB.  The
 * limits of mining (history.c), put back afterwards.
 */
#define DS_CACHE_MAX (32 << 20)
#define DS_MWINDOW_SIZE (32 << 20)
#define DS_MWINDOW_MAPPED ((size_t)768 << 20) /* as mining's, history.c */

int dataset_build(struct dataset **out, struct db *db, int64_t repo_id,
		  const struct dataset_opts *o)
{
	struct dataset *ds;
	struct feat_ctx *fc = NULL;
	git_repository *repo = NULL;
	sqlite3_stmt *st = NULL;
	const char *col;
	char *path = NULL;
	struct pt_git_limits lim;
	size_t total = 0, want, seen = 0;
	int64_t since = 0;
	int rc;

	*out = NULL;
	dataset_say(o, "reading the history", 0, 0);
	git_libgit2_init();
	ds = pt_calloc(1, sizeof(*ds));
	if (!ds)
		return PT_ENOMEM;
	pt_git_limits_set(&lim, DS_CACHE_MAX, DS_MWINDOW_SIZE,
			  DS_MWINDOW_MAPPED);
	/* as mining (history.c): objects of the repository's own packs are
	   not hashed again on every read, as git does not */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	rc = model_data_new(&ds->d, feat_names(), FEAT_NTAB);
	if (!rc)
		rc = dataset_regime(&ds->regime, db, repo_id, o->since);
	since = ds->regime.start;
	if (!rc)
		rc = count_rows(&total, db, repo_id, since);
	ds->considered = total;
	if (!rc)
		rc = db_prepare(&st, db,
				"SELECT path, newest FROM repos "
				"WHERE id = ?");
	if (rc)
		goto out;
	sqlite3_bind_int64(st, 1, repo_id);
	if (sqlite3_step(st) != SQLITE_ROW ||
	    !(col = (const char *)sqlite3_column_text(st, 0))) {
		rc = pt_error_set(PT_ENOTFOUND, "no mined repository %lld",
				  (long long)repo_id);
		goto out;
	}
	ds->newest = sqlite3_column_int64(st, 1);
	path = pt_strdup(col);
	if (!path) {
		rc = PT_ENOMEM;
		goto out;
	}
	if (git_repository_open(&repo, path)) {
		rc = pt_error_set(PT_EIO, "cannot open repository '%s': %s",
				  path, git_error_last()->message);
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	rc = feat_ctx_new(&fc, db, repo_id);
	if (!rc)
		rc = db_prepare(&st, db,
				"SELECT c.id, c.sha, c.commit_date, l.is_fix, "
				"l.bug, l.discovered, l.negative_ok FROM "
				"commits c JOIN labels l ON l.commit_id = c.id "
				"WHERE c.repo_id = ? AND c.commit_date >= ? "
				"ORDER BY c.commit_date DESC, c.seq DESC");
	if (rc)
		goto out;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_int64(st, 2, since);
	want = o->max_rows && o->max_rows < total ? o->max_rows : total;
	dataset_say(o, "features", 0, want);
	/* newest first, so what a budget leaves out is the oldest */
	rc = dataset_read(ds, db, repo_id, path, repo, fc, st, o, want, &seen);
	if (rc)
		goto out;
	ds->capped = total - seen;
	ds->budget_bound = ds->capped && !(o->max_rows && seen >= o->max_rows);
	dataset_reverse(ds);
	*out = ds;
	ds = NULL;
out:
	sqlite3_finalize(st);
	feat_ctx_free(fc);
	git_repository_free(repo);
	free(path);
	dataset_free(ds);
	pt_git_limits_put(&lim);
	git_libgit2_shutdown();
	return rc;
}

int dataset_rows(size_t **idx, size_t *n, const struct dataset *ds,
		 enum dataset_task t, int64_t from, int64_t before,
		 int64_t asof, int64_t horizon)
{
	size_t i, m = 0;

	*n = 0;
	*idx = pt_calloc(ds->n + 1, sizeof(**idx));
	if (!*idx)
		return PT_ENOMEM;
	for (i = 0; i < ds->n; i++) {
		int64_t time = ds->d->time[i];
		int ok;

		if (time < from || time >= before)
			continue;
		if (t == TASK_FIX)
			ok = 1;
		else if (asof == INT64_MAX)
			ok = ds->negok[i] || ds->bug[i];
		else
			/* young bugs too: they would bias the newest
			   (calibration) slice towards positives */
			ok = time <= asof - horizon;
		if (ok)
			(*idx)[m++] = i;
	}
	*n = m;
	return 0;
}
