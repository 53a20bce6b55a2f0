/*
 * cycle_stats.c - the cycle report (`patchtriage stats cycle`): bug
 * density by release-cycle phase over the phases cycle.c assigned, the
 * late/merge-window ratio with a stratified commit-level bootstrap, and
 * its table, JSON and SVG forms.
 */
#include "scoring/history/cycle.h"
#include "scoring/store/db_row.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the cycle report ----------------------------------------------- */

struct obs {
	int64_t lines;
	int bug;
};

struct group {
	struct obs *v;
	size_t n, cap;
};

static int group_add(struct group *g, int64_t lines, int bug)
{
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 1024;
		struct obs *v = pt_reallocarray(g->v, nc, sizeof(*v));

		if (!v)
			return PT_ENOMEM;
		g->v = v;
		g->cap = nc;
	}
	g->v[g->n].lines = lines;
	g->v[g->n++].bug = bug;
	return 0;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static double density(int64_t lines, size_t bugs)
{
	return lines > 0 ? 1000.0 * (double)bugs / (double)lines : 0.0;
}

static double resample(const struct group *g, uint64_t *s)
{
	int64_t lines = 0;
	size_t i, bugs = 0;

	for (i = 0; i < g->n; i++) {
		const struct obs *o = &g->v[xorshift(s) % g->n];

		lines += o->lines;
		bugs += (size_t)o->bug;
	}
	return density(lines, bugs);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int bootstrap(struct cycle_stats *s, const struct group *late,
		     const struct group *mw)
{
	double *r;
	uint64_t st = s->seed ? s->seed : 1;
	unsigned i, k = 0;

	s->lo = s->hi = 0;
	if (!late->n || !mw->n || !s->boot)
		return 0;
	r = pt_calloc(s->boot, sizeof(*r));
	if (!r)
		return PT_ENOMEM;
	for (i = 0; i < s->boot; i++) {
		double a = resample(late, &st), b = resample(mw, &st);

		if (b > 0)
			r[k++] = a / b;
	}
	if (k)
		qsort(r, k, sizeof(*r), cmp_double);
	if (k) {
		s->lo = r[(size_t)(0.025 * (k - 1) + 0.5)];
		s->hi = r[(size_t)(0.975 * (k - 1) + 0.5)];
	}
	free(r);
	return 0;
}

/* The row of a commit first released in rc R (0: in the final). */
static size_t row_of(const struct cycle_stats *s, int r)
{
	if (!r)
		return (size_t)s->late;
	return r >= s->late ? (size_t)s->late - 1 : (size_t)r - 1;
}

static int load_obs(struct cycle_stats *s, struct group *late, struct group *mw,
		    struct db *db, int64_t repo_id)
{
	sqlite3_stmt *st;
	int rc;

	/* c.rc is set only for a release that had rcs */
	rc = db_prepare(&st, db,
			"SELECT t.rc, c.added + c.removed, l.bug FROM commits "
			"c JOIN tags t ON t.repo_id = c.repo_id AND t.name = "
			"c.tag JOIN labels l ON l.commit_id = c.id WHERE "
			"c.repo_id = ?1 AND c.rc IS NOT NULL AND "
			"c.commit_date <= ?2");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_int64(st, 2, s->cutoff);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		int r = sqlite3_column_int(st, 0);
		int64_t lines = sqlite3_column_int64(st, 1);
		int bug = sqlite3_column_int(st, 2);
		struct cycle_phase *p;

		if (r < 0)
			continue;
		p = &s->phases[row_of(s, r)];
		p->commits++;
		p->lines += lines;
		p->bugs += (size_t)bug;
		if (p->late)
			rc = group_add(late, lines, bug);
		else if (r == 1)
			rc = group_add(mw, lines, bug);
	}
	sqlite3_finalize(st);
	return rc;
}

static int newest_date(int64_t *out, struct db *db, int64_t repo_id)
{
	return db_get_int64(out, db,
			    "SELECT coalesce(newest, 0) FROM repos WHERE id = ?",
			    repo_id);
}

/* Name each row and say in words what it holds. */
static void name_rows(struct cycle_stats *s)
{
	size_t i, n = s->nphases;

	for (i = 0; i < n; i++) {
		struct cycle_phase *p = &s->phases[i];
		int r = (int)i + 1;

		p->rc = i + 1 == n ? 0 : r;
		p->late = i + 2 == n;
		if (!i)
			snprintf(p->name, sizeof(p->name), "merge-window");
		else if (p->rc)
			snprintf(p->name, sizeof(p->name), "rc%d%s", r,
				 p->late ? "+" : "");
		else
			snprintf(p->name, sizeof(p->name), "final");
		if (!i)
			snprintf(p->what, sizeof(p->what),
				 "first released in "
				 "-rc1 (merged in the merge window)");
		else if (p->late)
			snprintf(p->what, sizeof(p->what),
				 "first released in "
				 "-rc%d or a later rc (merged for a late rc)",
				 r);
		else if (p->rc)
			snprintf(p->what, sizeof(p->what),
				 "first released in "
				 "-rc%d (merged for rc%d)",
				 r, r);
		else
			snprintf(p->what, sizeof(p->what),
				 "first released in "
				 "the final release (merged after its last rc)");
	}
}

int cycle_stats(struct cycle_stats *out, struct db *db, int64_t repo_id,
		int late, int horizon_days, unsigned boot,
		unsigned long long seed)
{
	struct group lg = { NULL, 0, 0 }, mg = { NULL, 0, 0 };
	size_t i;
	int64_t newest = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (late < 2 || late > 64)
		return pt_error_set(PT_EINVAL,
				    "late rc '%d' out of range "
				    "(2 to 64)",
				    late);
	out->late = late;
	out->boot = boot;
	out->seed = seed;
	out->nphases = (size_t)late + 1;
	out->phases = pt_calloc(out->nphases, sizeof(*out->phases));
	if (!out->phases)
		return PT_ENOMEM;
	name_rows(out);
	rc = newest_date(&newest, db, repo_id);
	out->cutoff = newest - (int64_t)horizon_days * 86400;
	if (!rc)
		rc = load_obs(out, &lg, &mg, db, repo_id);
	for (i = 0; !rc && i < out->nphases; i++)
		out->phases[i].per_kloc =
			density(out->phases[i].lines, out->phases[i].bugs);
	out->has_ratio = out->phases[late - 1].commits &&
			 out->phases[0].per_kloc > 0;
	if (!rc && out->has_ratio)
		out->ratio = out->phases[late - 1].per_kloc /
			     out->phases[0].per_kloc;
	if (!rc)
		rc = bootstrap(out, &lg, &mg);
	free(lg.v);
	free(mg.v);
	if (rc)
		cycle_stats_clear(out);
	return rc;
}

void cycle_stats_clear(struct cycle_stats *s)
{
	if (!s)
		return;
	free(s->phases);
	s->phases = NULL;
	s->nphases = 0;
}

/* The ratio in words: the value and interval, or why there is none. */
static int add_ratio(struct buf *out, const struct cycle_stats *s)
{
	if (!s->has_ratio)
		return buf_addf(out, "rc%d+/merge-window: n/a (%s)\n", s->late,
				s->phases[s->late - 1].commits
					? "no bugs in the merge window"
					: "no commits first released in a late "
					  "rc");
	return buf_addf(out,
			"rc%d+/merge-window: %.2f (95%% CI %.2f-%.2f, "
			"%u bootstrap resamples, seed %llu)\n",
			s->late, s->ratio, s->lo, s->hi, s->boot, s->seed);
}

int cycle_stats_table(struct buf *out, const struct cycle_stats *s)
{
	size_t i;
	int rc;

	rc = buf_addf(out, "%-13s %8s %10s %6s %9s  %s\n", "phase", "commits",
		      "lines", "bugs", "bugs/kloc", "holds the commits");
	for (i = 0; !rc && i < s->nphases; i++) {
		const struct cycle_phase *p = &s->phases[i];

		rc = buf_addf(out, "%-13s %8zu %10lld %6zu %9.3f  %s\n",
			      p->name, p->commits, (long long)p->lines, p->bugs,
			      p->per_kloc, p->what);
	}
	if (!rc)
		rc = buf_addstr(out, "\n");
	if (!rc)
		rc = add_ratio(out, s);
	if (!rc)
		rc = buf_addf(out,
			      "bugs per 1000 changed lines of the commits "
			      "first released in -rc%d or a later rc over "
			      "those first released in -rc1; commits first "
			      "released in a final release are their own row, "
			      "not late\n",
			      s->late);
	return rc;
}

int cycle_stats_json(struct buf *out, const struct cycle_stats *s)
{
	size_t i;
	int rc;

	rc = buf_addstr(out, "{\"phases\":[");
	for (i = 0; !rc && i < s->nphases; i++) {
		const struct cycle_phase *p = &s->phases[i];

		rc = buf_addf(out,
			      "%s{\"phase\":\"%s\",\"what\":\"%s\","
			      "\"first_released_in_rc\":%d,\"late\":%s,"
			      "\"commits\":%zu,\"lines\":%lld,\"bugs\":%zu,"
			      "\"bugs_per_kloc\":%.6f}",
			      i ? "," : "", p->name, p->what, p->rc,
			      p->late ? "true" : "false", p->commits,
			      (long long)p->lines, p->bugs, p->per_kloc);
	}
	if (!rc)
		rc = buf_addf(out,
			      "],\"late_rc\":%d,\"ratio_means\":\"bugs "
			      "per kloc of commits first released in -rc%d or "
			      "a later rc over those first released in -rc1; "
			      "final-release commits not late\",",
			      s->late, s->late);
	if (!rc && s->has_ratio)
		rc = buf_addf(out, "\"ratio\":%.6f,\"ci95\":[%.6f,%.6f],",
			      s->ratio, s->lo, s->hi);
	else if (!rc)
		rc = buf_addstr(out, "\"ratio\":null,\"ci95\":null,");
	if (!rc)
		rc = buf_addf(out,
			      "\"bootstrap\":%u,\"seed\":%llu,"
			      "\"cutoff\":%lld}\n",
			      s->boot, s->seed, (long long)s->cutoff);
	return rc;
}

int cycle_stats_svg(struct buf *out, const struct cycle_stats *s)
{
	const int w = 80, gap = 20, h = 240, top = 40, left = 60;
	double max = 0;
	size_t i;
	int rc, width = left + (int)s->nphases * (w + gap) + gap;
	char ratio[80] = "n/a";

	if (s->has_ratio)
		snprintf(ratio, sizeof(ratio), "%.2f, 95%% CI %.2f-%.2f",
			 s->ratio, s->lo, s->hi);

	for (i = 0; i < s->nphases; i++)
		if (s->phases[i].per_kloc > max)
			max = s->phases[i].per_kloc;
	if (max <= 0)
		max = 1;
	rc = buf_addf(out,
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		      "height=\"%d\" font-family=\"sans-serif\" "
		      "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\""
		      " fill=\"white\"/>\n<text x=\"%d\" y=\"20\" "
		      "font-size=\"14\">Bug-introducing commits per 1000 "
		      "changed lines by the release first containing them "
		      "(rc%d+/merge-window %s)</text>\n<line x1=\"%d\" "
		      "y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
		      width, h + top + 50, left, s->late, ratio, left, top + h,
		      width - gap, top + h);
	for (i = 0; !rc && i < s->nphases; i++) {
		const struct cycle_phase *p = &s->phases[i];
		int bh = (int)(p->per_kloc / max * h + 0.5);
		int x = left + gap + (int)i * (w + gap);

		rc = buf_addf(out,
			      "<rect x=\"%d\" y=\"%d\" width=\"%d\" "
			      "height=\"%d\" fill=\"%s\"/>\n<text x=\"%d\" "
			      "y=\"%d\" text-anchor=\"middle\">%.2f</text>\n"
			      "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
			      "%s</text>\n",
			      x, top + h - bh, w, bh,
			      p->late	  ? "#c0392b"
			      : !p->rc	  ? "#7f8c8d"
			      : p->rc > 1 ? "#e67e22"
					  : "#2980b9",
			      x + w / 2, top + h - bh - 4, p->per_kloc,
			      x + w / 2, top + h + 16, p->name);
	}
	if (!rc)
		rc = buf_addstr(out, "</svg>\n");
	return rc;
}
