/*
 * cycle.c - release tags and each commit's place in the release cycle.
 * Tags that match the pattern are sorted in version order (rc1 < rc2 <
 * final < next release's rc1) and visited once each: a depth-first walk
 * from the tag marks every commit not marked by an earlier tag, and stops
 * at marked ones, so the whole graph is walked once.  A commit first
 * reached from -rc1 was merged in the merge window (rc 0); from -rcN+1,
 * after -rcN (rc N); from the final release, after the last rc.  It owns
 * the tags table and the tag/release/rc/phase/soak columns of commits.
 */
#include "scoring/history/cycle.h"

#include <errno.h>
#include <git2.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/util/strmap.h"

struct rtag {
	struct cycle_tag t;
	git_oid commit;
	int64_t date;
	int last_rc;        /* highest rc of its release (0: none) */
};

void cycle_tag_clear(struct cycle_tag *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->release);
	memset(t, 0, sizeof(*t));
}

static int compile(regex_t *re, const char *pattern)
{
	const char *p = pattern ? pattern : CYCLE_DEFAULT_PATTERN;

	if (regcomp(re, p, REG_EXTENDED))
		return pt_error_set(PT_EINVAL, "bad tag pattern '%s'", p);
	if (re->re_nsub < 1) {
		regfree(re);
		return pt_error_set(PT_EINVAL, "tag pattern '%s' has no "
				    "group for the version", p);
	}
	return 0;
}

static int parse_with(struct cycle_tag *out, const char *name,
		      const regex_t *re)
{
	regmatch_t m[16];
	size_t ng = re->re_nsub < 15 ? re->re_nsub : 15;
	const char *v, *end;

	memset(out, 0, sizeof(*out));
	if (regexec(re, name, ng + 1, m, 0) || m[1].rm_so < 0)
		return 0;
	v = name + m[1].rm_so;
	end = name + m[1].rm_eo;
	while (v < end && out->nver < 4) {
		char *e;

		out->ver[out->nver++] = strtoul(v, &e, 10);
		if (e == v)
			break;
		v = e;
		while (v < end && (*v < '0' || *v > '9'))
			v++;
	}
	if (ng >= 2 && m[ng].rm_so >= 0) {
		char *e;
		long r;

		/* as atoi() read it; an rc past int is not a cycle tag */
		errno = 0;
		r = strtol(name + m[ng].rm_so, &e, 10);
		if (errno == ERANGE || r < INT_MIN || r > INT_MAX) {
			memset(out, 0, sizeof(*out));
			return 0;
		}
		out->rc = (int)r;
	}
	out->name = pt_strdup(name);
	out->release = pt_strndup(name, (size_t)m[1].rm_eo);
	if (!out->name || !out->release) {
		cycle_tag_clear(out);
		return PT_ENOMEM;
	}
	return 1;
}

int cycle_parse_tag(struct cycle_tag *out, const char *name,
		    const char *pattern)
{
	regex_t re;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = compile(&re, pattern);
	if (rc)
		return rc;
	rc = parse_with(out, name, &re);
	regfree(&re);
	return rc;
}

int cycle_tag_cmp(const struct cycle_tag *a, const struct cycle_tag *b)
{
	size_t i, n = a->nver > b->nver ? a->nver : b->nver;

	for (i = 0; i < n; i++) {
		unsigned long x = i < a->nver ? a->ver[i] : 0;
		unsigned long y = i < b->nver ? b->ver[i] : 0;

		if (x != y)
			return x < y ? -1 : 1;
	}
	if (a->nver != b->nver)
		return a->nver < b->nver ? -1 : 1;
	if (a->rc != b->rc) {
		if (!a->rc || !b->rc)
			return !a->rc ? 1 : -1; /* final after its rcs */
		return a->rc < b->rc ? -1 : 1;
	}
	return strcmp(a->name, b->name);
}

static int rtag_cmp(const void *a, const void *b)
{
	return cycle_tag_cmp(&((const struct rtag *)a)->t,
			     &((const struct rtag *)b)->t);
}

static int peel_tag(struct rtag *t, git_repository *repo, const char *name)
{
	git_reference *ref = NULL;
	git_object *obj = NULL, *c = NULL;
	struct buf rn = BUF_INIT;
	int rc = 0;

	if (buf_addf(&rn, "refs/tags/%s", name))
		return PT_ENOMEM;
	if (git_reference_lookup(&ref, repo, rn.ptr) ||
	    git_reference_peel(&obj, ref, GIT_OBJECT_ANY) ||
	    git_object_peel(&c, obj, GIT_OBJECT_COMMIT)) {
		git_error_clear();
		rc = 1; /* a tag of a tree or blob: not a release */
		goto out;
	}
	git_oid_cpy(&t->commit, git_object_id(c));
	t->date = git_commit_time((git_commit *)c);
	{
		git_object *tagobj = NULL;

		if (!git_reference_peel(&tagobj, ref, GIT_OBJECT_TAG)) {
			const git_signature *s =
				git_tag_tagger((git_tag *)tagobj);

			if (s)
				t->date = s->when.time;
		}
		git_error_clear();
		git_object_free(tagobj);
	}
out:
	git_object_free(c);
	git_object_free(obj);
	git_reference_free(ref);
	buf_free(&rn);
	return rc;
}

static int list_tags(struct rtag **out, size_t *n, git_repository *repo,
		     const char *pattern)
{
	git_strarray names = { NULL, 0 };
	struct rtag *tags;
	regex_t re;
	size_t i;
	int rc;

	*out = NULL;
	*n = 0;
	rc = compile(&re, pattern);
	if (rc)
		return rc;
	if (git_tag_list(&names, repo)) {
		regfree(&re);
		return pt_error_set(PT_EIO, "cannot list tags");
	}
	tags = pt_calloc(names.count + 1, sizeof(*tags));
	rc = tags ? 0 : PT_ENOMEM;
	for (i = 0; !rc && i < names.count; i++) {
		struct rtag *t = &tags[*n];

		rc = parse_with(&t->t, names.strings[i], &re);
		if (rc <= 0)
			continue;
		rc = peel_tag(t, repo, names.strings[i]);
		if (rc > 0) {
			cycle_tag_clear(&t->t);
			rc = 0;
		} else if (!rc) {
			(*n)++;
		}
	}
	git_strarray_dispose(&names);
	regfree(&re);
	if (rc) {
		for (i = 0; i < *n; i++)
			cycle_tag_clear(&tags[i].t);
		free(tags);
		*n = 0;
		return rc;
	}
	qsort(tags, *n, sizeof(*tags), rtag_cmp);
	*out = tags;
	return 0;
}

/* Each release's highest rc, stored on all its tags. */
static int last_rcs(struct rtag *tags, size_t n)
{
	struct strmap m = STRMAP_INIT;
	struct strmap_entry *e;
	size_t i;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		rc = strmap_put(&e, NULL, &m, tags[i].t.release,
				strlen(tags[i].t.release));
		if (!rc && tags[i].t.rc > e->v.i)
			e->v.i = tags[i].t.rc;
	}
	for (i = 0; i < n && !rc; i++)
		tags[i].last_rc = (int)strmap_get(&m, tags[i].t.release,
						  strlen(tags[i].t.release))
					  ->v.i;
	strmap_free(&m);
	return rc;
}

/* Mark commits reachable from each tag and from no earlier tag. */
static int mark(struct strmap *seen, git_repository *repo,
		const struct rtag *tags, size_t n)
{
	git_oid *stack = NULL;
	size_t sp = 0, cap = 0, i;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		if (!cap) {
			cap = 1024;
			stack = pt_reallocarray(NULL, cap, sizeof(*stack));
			if (!stack)
				return PT_ENOMEM;
		}
		stack[sp++] = tags[i].commit;
		while (sp && !rc) {
			git_oid id = stack[--sp];
			struct strmap_entry *e;
			git_commit *c;
			unsigned p, np;
			int added;

			rc = strmap_put(&e, &added, seen, (const char *)id.id,
					GIT_OID_RAWSZ);
			if (rc || !added)
				continue;
			e->v.i = (int64_t)i;
			if (git_commit_lookup(&c, repo, &id)) {
				git_error_clear();
				continue; /* shallow or missing: stop here */
			}
			np = git_commit_parentcount(c);
			for (p = 0; p < np; p++) {
				if (sp == cap) {
					git_oid *s;

					cap *= 2;
					s = pt_reallocarray(stack, cap,
							    sizeof(*s));
					if (!s) {
						rc = PT_ENOMEM;
						break;
					}
					stack = s;
				}
				stack[sp++] = *git_commit_parent_id(c, p);
			}
			git_commit_free(c);
		}
	}
	free(stack);
	return rc;
}

static int write_tags(struct db *db, int64_t repo_id, const struct rtag *tags,
		      size_t n)
{
	sqlite3_stmt *st;
	size_t i;
	int rc;

	rc = db_prepare(&st, db, "DELETE FROM tags WHERE repo_id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(db, "clearing tags");
	sqlite3_finalize(st);
	if (!rc)
		rc = db_prepare(&st, db, "INSERT INTO tags (repo_id, name, "
				"sha, date, release, rc, ord) VALUES (?, ?, ?, "
				"?, ?, ?, ?)");
	for (i = 0; !rc && i < n; i++) {
		sqlite3_bind_int64(st, 1, repo_id);
		sqlite3_bind_text(st, 2, tags[i].t.name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, git_oid_tostr_s(&tags[i].commit), -1,
				  SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, tags[i].date);
		sqlite3_bind_text(st, 5, tags[i].t.release, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 6, tags[i].t.rc);
		sqlite3_bind_int64(st, 7, (int64_t)i);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0 : db_error(db, "saving a tag");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static void bind_phase(sqlite3_stmt *st, const struct rtag *t, int64_t cdate)
{
	char phase[32];

	sqlite3_bind_text(st, 1, t->t.name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, t->t.release, -1, SQLITE_STATIC);
	if (t->t.rc > 0 || t->last_rc > 0) {
		int r = t->t.rc > 0 ? t->t.rc - 1 : t->last_rc;

		if (r)
			snprintf(phase, sizeof(phase), "rc%d", r);
		else
			snprintf(phase, sizeof(phase), "merge-window");
		sqlite3_bind_int(st, 3, r);
		sqlite3_bind_text(st, 4, phase, -1, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_null(st, 3);
		sqlite3_bind_text(st, 4, "no-rc", -1, SQLITE_STATIC);
	}
	sqlite3_bind_int(st, 5, !t->t.rc && t->last_rc > 0);
	sqlite3_bind_int64(st, 6, t->date - cdate);
}

static int update_commits(struct db *db, int64_t repo_id,
			  const struct strmap *seen, const struct rtag *tags)
{
	sqlite3_stmt *sel = NULL, *up = NULL;
	int rc;

	rc = db_prepare(&sel, db, "SELECT id, sha, commit_date FROM commits "
			"WHERE repo_id = ?");
	if (!rc)
		rc = db_prepare(&up, db, "UPDATE commits SET tag = ?, "
				"release = ?, rc = ?, phase = ?, "
				"after_last_rc = ?, soak = ? WHERE id = ?");
	if (rc)
		goto out;
	sqlite3_bind_int64(sel, 1, repo_id);
	while (!rc && sqlite3_step(sel) == SQLITE_ROW) {
		git_oid id;
		struct strmap_entry *e = NULL;

		if (!git_oid_fromstr(&id, (const char *)
				     sqlite3_column_text(sel, 1)))
			e = strmap_get(seen, (const char *)id.id,
				       GIT_OID_RAWSZ);
		if (e) {
			bind_phase(up, &tags[e->v.i],
				   sqlite3_column_int64(sel, 2));
		} else {
			sqlite3_bind_text(up, 4, "unreleased", -1,
					  SQLITE_STATIC);
		}
		sqlite3_bind_int64(up, 7, sqlite3_column_int64(sel, 0));
		rc = sqlite3_step(up) == SQLITE_DONE
			     ? 0 : db_error(db, "saving a commit's phase");
		sqlite3_reset(up);
		sqlite3_clear_bindings(up);
	}
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(up);
	return rc;
}

int cycle_assign(size_t *ntags, struct db *db, struct git_repository *repo,
		 int64_t repo_id, const char *pattern)
{
	struct strmap seen = STRMAP_INIT;
	struct rtag *tags = NULL;
	size_t n = 0, i;
	int rc;

	*ntags = 0;
	rc = list_tags(&tags, &n, repo, pattern);
	if (!rc)
		rc = last_rcs(tags, n);
	if (!rc)
		rc = mark(&seen, repo, tags, n);
	if (!rc)
		rc = db_begin(db);
	if (!rc) {
		rc = write_tags(db, repo_id, tags, n);
		if (!rc)
			rc = update_commits(db, repo_id, &seen, tags);
		if (!rc)
			rc = db_commit(db);
		else
			db_rollback(db);
	}
	*ntags = n;
	for (i = 0; i < n; i++)
		cycle_tag_clear(&tags[i].t);
	free(tags);
	strmap_free(&seen);
	return rc;
}

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
	qsort(r, k, sizeof(*r), cmp_double);
	if (k) {
		s->lo = r[(size_t)(0.025 * (k - 1) + 0.5)];
		s->hi = r[(size_t)(0.975 * (k - 1) + 0.5)];
	}
	free(r);
	return 0;
}

static int load_obs(struct cycle_stats *s, struct group *late,
		    struct group *mw, struct db *db, int64_t repo_id,
		    int horizon_days)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"SELECT c.rc, c.added + c.removed, l.bug FROM commits "
			"c JOIN labels l ON l.commit_id = c.id WHERE "
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

		p = &s->phases[r >= s->late ? (size_t)s->late : (size_t)r];
		p->commits++;
		p->lines += lines;
		p->bugs += (size_t)bug;
		if (r >= s->late)
			rc = group_add(late, lines, bug);
		else if (r == 0)
			rc = group_add(mw, lines, bug);
	}
	sqlite3_finalize(st);
	(void)horizon_days;
	return rc;
}

static int newest_date(int64_t *out, struct db *db, int64_t repo_id)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db, "SELECT coalesce(newest, 0) FROM repos "
			"WHERE id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	*out = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0)
					       : 0;
	sqlite3_finalize(st);
	return 0;
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
	if (late < 1 || late > 64)
		return pt_error_set(PT_EINVAL, "late rc '%d' out of range",
				    late);
	out->late = late;
	out->boot = boot;
	out->seed = seed;
	out->nphases = (size_t)late + 1;
	out->phases = pt_calloc(out->nphases, sizeof(*out->phases));
	if (!out->phases)
		return PT_ENOMEM;
	for (i = 0; i < out->nphases; i++) {
		out->phases[i].rc = (int)i;
		if (!i)
			snprintf(out->phases[i].name,
				 sizeof(out->phases[i].name), "merge-window");
		else
			snprintf(out->phases[i].name,
				 sizeof(out->phases[i].name), "rc%d%s", (int)i & 63,
				 i == (size_t)late ? "+" : "");
	}
	rc = newest_date(&newest, db, repo_id);
	out->cutoff = newest - (int64_t)horizon_days * 86400;
	if (!rc)
		rc = load_obs(out, &lg, &mg, db, repo_id, horizon_days);
	for (i = 0; !rc && i < out->nphases; i++)
		out->phases[i].per_kloc = density(out->phases[i].lines,
						  out->phases[i].bugs);
	if (!rc && out->phases[0].per_kloc > 0)
		out->ratio = out->phases[late].per_kloc /
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

int cycle_stats_table(struct buf *out, const struct cycle_stats *s)
{
	size_t i;
	int rc;

	rc = buf_addf(out, "%-13s %8s %10s %6s %9s\n", "phase", "commits",
		      "lines", "bugs", "bugs/kloc");
	for (i = 0; !rc && i < s->nphases; i++) {
		const struct cycle_phase *p = &s->phases[i];

		rc = buf_addf(out, "%-13s %8zu %10lld %6zu %9.3f\n", p->name,
			      p->commits, (long long)p->lines, p->bugs,
			      p->per_kloc);
	}
	if (!rc)
		rc = buf_addf(out, "\nrc%d+/merge-window: %.2f (95%% CI %.2f"
			      "-%.2f, %u bootstrap resamples, seed %llu)\n",
			      s->late, s->ratio, s->lo, s->hi, s->boot,
			      s->seed);
	return rc;
}

int cycle_stats_json(struct buf *out, const struct cycle_stats *s)
{
	size_t i;
	int rc;

	rc = buf_addstr(out, "{\"phases\":[");
	for (i = 0; !rc && i < s->nphases; i++) {
		const struct cycle_phase *p = &s->phases[i];

		rc = buf_addf(out, "%s{\"phase\":\"%s\",\"rc\":%d,"
			      "\"commits\":%zu,\"lines\":%lld,\"bugs\":%zu,"
			      "\"bugs_per_kloc\":%.6f}", i ? "," : "",
			      p->name, p->rc, p->commits, (long long)p->lines,
			      p->bugs, p->per_kloc);
	}
	if (!rc)
		rc = buf_addf(out, "],\"late_rc\":%d,\"ratio\":%.6f,"
			      "\"ci95\":[%.6f,%.6f],\"bootstrap\":%u,"
			      "\"seed\":%llu,\"cutoff\":%lld}\n", s->late,
			      s->ratio, s->lo, s->hi, s->boot, s->seed,
			      (long long)s->cutoff);
	return rc;
}

int cycle_stats_svg(struct buf *out, const struct cycle_stats *s)
{
	const int w = 80, gap = 20, h = 240, top = 40, left = 60;
	double max = 0;
	size_t i;
	int rc, width = left + (int)s->nphases * (w + gap) + gap;

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
		      "changed lines (rc%d+/merge-window %.2f, 95%% CI "
		      "%.2f-%.2f)</text>\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
		      "y2=\"%d\" stroke=\"black\"/>\n",
		      width, h + top + 50, left, s->late, s->ratio, s->lo,
		      s->hi, left, top + h, width - gap, top + h);
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
			      p->rc >= s->late ? "#c0392b"
			      : p->rc ? "#e67e22" : "#2980b9",
			      x + w / 2, top + h - bh - 4, p->per_kloc,
			      x + w / 2, top + h + 16, p->name);
	}
	if (!rc)
		rc = buf_addstr(out, "</svg>\n");
	return rc;
}
