/*
 * listfeat.c - review and process features of a posting as of a moment
 * (see listfeat.h).  Every query is bounded by the moment: replies,
 * reviews and asks dated at it or after it are not seen (at the apply
 * moment the applied notice is itself a reply, which a posting not yet
 * applied, as the daemon scores it, never has), a reviewer's record
 * counts only reviews before it and bugs discovered before it, so the
 * same posting gives different values at posting and at apply time and
 * never leaks its own future.  Read-only over the tables of thread.c and
 * outcome.c.
 */
#include "scoring/model/listfeat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/model/features.h"
#include "scoring/patch/trailer.h"
#include "scoring/store/db_row.h"

#define LISTFEAT_MAX_CHAIN 100
#define LISTFEAT_MAX_REVIEWERS 64

static const char *const names[LISTFEAT_N] = {
#define LISTFEAT_NAME(id, name, group, desc) [LISTFEAT_##id] = name,
	LISTFEAT_TABLE(LISTFEAT_NAME)
#undef LISTFEAT_NAME
};

static const char *const descs[LISTFEAT_N] = {
#define LISTFEAT_DESC(id, name, group, desc) [LISTFEAT_##id] = desc,
	LISTFEAT_TABLE(LISTFEAT_DESC)
#undef LISTFEAT_DESC
};

static const enum listfeat_group groups[LISTFEAT_N] = {
#define LISTFEAT_GROUP(id, name, group, desc) \
	[LISTFEAT_##id] = LISTFEAT_G_##group,
	LISTFEAT_TABLE(LISTFEAT_GROUP)
#undef LISTFEAT_GROUP
};

static const char *const group_names[LISTFEAT_NGROUPS] = {
	"review content", "reviewer record and role",
	"testing",	  "iterations",
	"test bots",	  "author record",
};

const char *listfeat_name(enum listfeat_id id)
{
	return id < LISTFEAT_N ? names[id] : "?";
}

const char *listfeat_desc(enum listfeat_id id)
{
	return id < LISTFEAT_N ? descs[id] : "?";
}

enum listfeat_group listfeat_group_of(enum listfeat_id id)
{
	return id < LISTFEAT_N ? groups[id] : LISTFEAT_G_REVIEW;
}

const char *listfeat_group_name(enum listfeat_group g)
{
	return g < LISTFEAT_NGROUPS ? group_names[g] : "?";
}

/* Replies on the patch itself or on its series' cover letter. */
#define ON_PATCH "(r.patch_id = ?1 OR (r.series_id = ?2 AND r.patch_id = 0))"
/* The list's acts that count as reviews (mail_reviews.kind). */
#define REVIEW_ACTS                                        \
	"('" TRAILER_KEY_REVIEWED "', '" TRAILER_KEY_ACKED \
	"', '" TRAILER_KEY_TESTED "')"

struct post {
	int64_t id, series, date, lines;
	int version;
	char *author;
};

static int load_post(struct post *p, struct db *db, int64_t id)
{
	sqlite3_stmt *st;
	const unsigned char *a;
	int rc;

	memset(p, 0, sizeof(*p));
	rc = db_prepare(
		&st, db,
		"SELECT series_id, date, version, "
		"author_email, added + removed FROM patches WHERE id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = pt_error_set(PT_ENOTFOUND, "no posting %lld",
				  (long long)id);
	} else {
		p->id = id;
		p->series = sqlite3_column_int64(st, 0);
		p->date = sqlite3_column_int64(st, 1);
		p->version = sqlite3_column_int(st, 2);
		p->lines = sqlite3_column_int64(st, 4);
		a = sqlite3_column_text(st, 3);
		p->author = pt_strdup(a ? (const char *)a : "");
		if (!p->author)
			rc = PT_ENOMEM;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Prepare, bind (pid, sid, as_of, author) and step to the row. */
static int query(sqlite3_stmt **st, struct db *db, const char *sql,
		 const struct post *p, int64_t as_of)
{
	int rc = db_prepare(st, db, sql);

	if (rc)
		return rc;
	sqlite3_bind_int64(*st, 1, p->id);
	sqlite3_bind_int64(*st, 2, p->series);
	sqlite3_bind_int64(*st, 3, as_of);
	sqlite3_bind_text(*st, 4, p->author, -1, SQLITE_STATIC);
	rc = sqlite3_step(*st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return rc;
	rc = db_error(db, "reading list features");
	sqlite3_finalize(*st);
	*st = NULL;
	return rc;
}

static int conv(struct listfeat *o, struct db *db, const struct post *p)
{
	sqlite3_stmt *st;
	double *v = o->v;
	int rc;

	rc = query(&st, db,
		   "SELECT count(*), count(DISTINCT CASE WHEN r.bot IS NULL "
		   "AND r.author_email != ?4 THEN r.author_email END), "
		   "coalesce(sum(r.inline_comments), 0), "
		   "coalesce(sum(r.tested_claims), 0), coalesce(avg(CASE WHEN "
		   "r.sentiment != 0 THEN r.sentiment END), 0), count(CASE "
		   "WHEN r.sentiment < 0 THEN 1 END), count(r.bot), count(CASE"
		   " WHEN r.bot_verdict IN ('failure', 'error', 'warning') "
		   "THEN 1 END), count(DISTINCT r.bot_arch), "
		   "coalesce(sum(CASE WHEN r.bot IS NULL AND r.author_email "
		   "!= ?4 THEN r.lines END), 0), coalesce(sum(CASE WHEN "
		   "r.bot IS NULL AND r.author_email != ?4 THEN "
		   "r.quoted_lines END), 0), coalesce(max(r.tested_scale), 0) "
		   "FROM replies r "
		   "WHERE " ON_PATCH " AND r.date < ?3",
		   p, o->as_of);
	if (rc < 0)
		return rc;
	v[LISTFEAT_REPLIES] = sqlite3_column_double(st, 0);
	v[LISTFEAT_REVIEWERS] = sqlite3_column_double(st, 1);
	v[LISTFEAT_INLINE] = sqlite3_column_double(st, 2);
	v[LISTFEAT_TESTED_CLAIMS] = sqlite3_column_double(st, 3);
	v[LISTFEAT_SENTIMENT] = sqlite3_column_double(st, 4);
	v[LISTFEAT_NEGATIVE] = sqlite3_column_double(st, 5);
	v[LISTFEAT_BOT_REPORTS] = sqlite3_column_double(st, 6);
	v[LISTFEAT_BOT_FAILURES] = sqlite3_column_double(st, 7);
	v[LISTFEAT_BOT_ARCHS] = sqlite3_column_double(st, 8);
	v[LISTFEAT_REPLY_LINES] = sqlite3_column_double(st, 9);
	v[LISTFEAT_QUOTED_LINES] = sqlite3_column_double(st, 10);
	v[LISTFEAT_TESTED_SCALE] = sqlite3_column_double(st, 11);
	sqlite3_finalize(st);
	return 0;
}

/*
 * Repliers before the moment who had said "applied" (a maintainer's
 * notice) on a message of any imported list before it: the reviewer role
 * "applies patches".  Strictly before: at the apply moment the notice
 * itself is a reply, which would say nothing about the review.
 */
static int appliers(struct listfeat *o, struct db *db, const struct post *p)
{
	sqlite3_stmt *st;
	int rc;

	rc = query(&st, db,
		   "SELECT count(DISTINCT lower(r.author_email)) FROM replies r "
		   "WHERE " ON_PATCH " AND r.date < ?3 AND r.bot IS NULL AND "
		   "r.author_email != ?4 AND EXISTS (SELECT 1 FROM "
		   "list_notices n WHERE lower(n.who) = lower(r.author_email)"
		   " AND n.date < ?3 AND n.kind = 'reply')",
		   p, o->as_of);
	if (rc < 0)
		return rc;
	o->v[LISTFEAT_APPLIER_REPLIED] = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return 0;
}

static int reviews(struct listfeat *o, struct db *db, const struct post *p)
{
	sqlite3_stmt *st;
	const char *k;
	double n;
	int rc;

	rc = query(&st, db,
		   "SELECT r.kind, count(DISTINCT r.email) FROM mail_reviews r"
		   " WHERE " ON_PATCH " AND r.date < ?3 GROUP BY r.kind",
		   p, o->as_of);
	for (; rc == SQLITE_ROW; rc = sqlite3_step(st)) {
		k = (const char *)sqlite3_column_text(st, 0);
		n = sqlite3_column_double(st, 1);
		if (!k)
			continue;
		if (!strcmp(k, TRAILER_KEY_REVIEWED))
			o->v[LISTFEAT_REVIEWED] = n;
		else if (!strcmp(k, TRAILER_KEY_ACKED))
			o->v[LISTFEAT_ACKED] = n;
		else if (!strcmp(k, TRAILER_KEY_TESTED))
			o->v[LISTFEAT_TESTED] = n;
		else if (!strcmp(k, TRAILER_KEY_NACKED))
			o->v[LISTFEAT_NACKED] = n;
	}
	sqlite3_finalize(st);
	if (rc < 0)
		return rc;
	rc = query(&st, db,
		   "SELECT coalesce(lp.reviewed + lp.acked + lp.tested, 0) "
		   "FROM patches p LEFT JOIN list_posts lp ON lp.message_id = "
		   "p.message_id WHERE p.id = ?1",
		   p, o->as_of);
	if (rc == SQLITE_ROW)
		o->v[LISTFEAT_CARRIED] = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}

/* Asks (questions, requests, nits) and replies on one version. */
static int asks_of(double out[5], struct db *db, const struct post *p,
		   int64_t as_of)
{
	sqlite3_stmt *st;
	int rc;

	rc = query(&st, db,
		   "SELECT coalesce(sum(a.questions), 0), "
		   "coalesce(sum(a.requests), 0), coalesce(sum(a.nits), 0), "
		   "count(r.id), count(CASE "
		   "WHEN r.bot_verdict IN ('failure', 'error', 'warning') THEN "
		   "1 END) FROM replies r LEFT JOIN list_asks a ON "
		   "a.message_id = r.message_id WHERE " ON_PATCH " AND r.date "
		   "< ?3 AND r.author_email != ?4",
		   p, as_of);
	if (rc < 0)
		return rc;
	out[0] = sqlite3_column_double(st, 0);
	out[1] = sqlite3_column_double(st, 1);
	out[2] = sqlite3_column_double(st, 2);
	out[3] = sqlite3_column_double(st, 3);
	out[4] = sqlite3_column_double(st, 4);
	sqlite3_finalize(st);
	return 0;
}

static int prev_of(int64_t *prev, struct db *db, int64_t id)
{
	return db_get_int64(prev, db,
			    "SELECT prev_patch_id FROM patches WHERE id = ?",
			    id);
}

static int series_depth(int64_t *out, struct db *db, int64_t sid)
{
	return db_get_int64(out, db,
			    "WITH RECURSIVE chain(id, depth) AS (SELECT ?1, 0 "
			    "UNION SELECT v.prev_series_id, depth + 1 FROM "
			    "series_versions v JOIN chain c ON v.series_id = "
			    "c.id WHERE depth < 100) SELECT max(depth) FROM "
			    "chain",
			    sid);
}

/* This version's asks, then the earlier versions' along prev_patch_id. */
static int versions(struct listfeat *o, struct db *db, const struct post *p)
{
	struct post q;
	double a[5];
	int64_t id = p->id, prev, first = p->date, sdepth = 0;
	int n = 0, rc;

	rc = asks_of(a, db, p, o->as_of);
	if (rc)
		return rc;
	o->v[LISTFEAT_QUESTIONS] = a[0];
	o->v[LISTFEAT_ASKS] = a[1];
	o->v[LISTFEAT_NITS] = a[2];
	o->v[LISTFEAT_VERSION] = p->version;
	while (!rc && n < LISTFEAT_MAX_CHAIN) {
		rc = prev_of(&prev, db, id);
		if (rc || !prev || prev == id)
			break;
		rc = load_post(&q, db, prev);
		if (!rc && q.date <= o->as_of) {
			n++;
			if (q.date < first)
				first = q.date;
			rc = asks_of(a, db, &q, o->as_of);
			o->v[LISTFEAT_PREV_QUESTIONS] += a[0];
			o->v[LISTFEAT_PREV_ASKS] += a[1];
			o->v[LISTFEAT_PREV_REPLIES] += a[3];
			o->v[LISTFEAT_PREV_BOT_FAILURES] += a[4];
			if (n == 1)
				o->v[LISTFEAT_SIZE_CHANGE] = (double)llabs(
					(long long)(p->lines - q.lines));
		}
		free(q.author);
		id = prev;
	}
	if (!rc)
		rc = series_depth(&sdepth, db, p->series);
	o->v[LISTFEAT_VERSIONS_BEFORE] = sdepth > n ? (double)sdepth : n;
	o->v[LISTFEAT_DAYS_FIRST] = (double)(o->as_of - first) / 86400.0;
	return rc;
}

/*
 * Smoothed bug rate and count of the reviewer's reviews before as_of, of
 * other series than this one.
 */
static int track(double *rate, double *prior, sqlite3_stmt *st,
		 const char *email, int64_t as_of, int64_t series)
{
	double n, bugs;

	sqlite3_bind_text(st, 1, email, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, as_of);
	sqlite3_bind_int64(st, 3, series);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_reset(st);
		return PT_EIO;
	}
	n = sqlite3_column_double(st, 0);
	bugs = sqlite3_column_double(st, 1);
	sqlite3_reset(st);
	*prior = n;
	*rate = (bugs + LISTFEAT_PRIOR_RATE * LISTFEAT_PRIOR_WEIGHT) /
		(n + LISTFEAT_PRIOR_WEIGHT);
	return 0;
}

static int reviewers(struct listfeat *o, struct db *db, const struct post *p)
{
	sqlite3_stmt *st = NULL, *tr = NULL;
	double rate, prior, best = NAN, sum = 0, top = 0;
	int rc, n = 0;

	rc = db_prepare(&tr, db,
			"SELECT count(*), count(CASE WHEN EXISTS (SELECT 1 FROM"
			" posting_labels l JOIN patches q ON q.id = l.patch_id"
			" WHERE l.bug AND l.discovered < ?2 AND (q.id = "
			"r.patch_id OR (r.patch_id = 0 AND q.series_id = "
			"r.series_id))) THEN 1 END) FROM mail_reviews r WHERE "
			"r.email = ?1 AND r.date < ?2 AND r.kind IN " REVIEW_ACTS
			" AND coalesce(r.series_id, 0) != ?3");
	if (rc)
		return rc;
	rc = query(&st, db,
		   "SELECT DISTINCT r.email FROM mail_reviews r WHERE " ON_PATCH
		   " AND r.date < ?3 AND r.kind IN " REVIEW_ACTS
		   " AND r.email != ?4",
		   p, o->as_of);
	for (; rc == SQLITE_ROW && n < (int)LISTFEAT_MAX_REVIEWERS;
	     rc = sqlite3_step(st), n++) {
		if (track(&rate, &prior, tr,
			  (const char *)sqlite3_column_text(st, 0), o->as_of,
			  p->series)) {
			rc = db_error(db, "reading a reviewer's record");
			break;
		}
		sum += prior;
		if (prior > top)
			top = prior;
		if (isnan(best) || rate > best)
			best = rate;
	}
	sqlite3_finalize(st);
	sqlite3_finalize(tr);
	if (rc < 0)
		return rc;
	o->v[LISTFEAT_REV_PRIOR] = sum;
	o->v[LISTFEAT_REV_TOP_PRIOR] = top;
	o->v[LISTFEAT_REV_BUGRATE] = n ? best : NAN;
	return 0;
}

static int author(struct listfeat *o, struct db *db, const struct post *p)
{
	sqlite3_stmt *st;
	int rc;

	rc = query(&st, db,
		   "SELECT count(*), count(CASE WHEN x.outcome = 'applied' AND"
		   " x.applied_date < ?3 THEN 1 END) FROM patches q LEFT JOIN "
		   "posting_outcomes x ON x.patch_id = q.id WHERE "
		   "q.author_email = ?4 AND q.date < ?3 AND q.id != ?1",
		   p, o->as_of);
	if (rc < 0)
		return rc;
	o->v[LISTFEAT_AUTHOR_PRIOR] = sqlite3_column_double(st, 0);
	o->v[LISTFEAT_AUTHOR_APPLIED] = sqlite3_column_double(st, 1);
	sqlite3_finalize(st);
	return 0;
}

int listfeat_compute(struct listfeat *out, struct db *db, int64_t patch_id,
		     int64_t as_of)
{
	struct post p;
	int rc;

	memset(out, 0, sizeof(*out));
	out->patch_id = patch_id;
	out->as_of = as_of;
	rc = load_post(&p, db, patch_id);
	if (!rc)
		rc = conv(out, db, &p);
	if (!rc)
		rc = reviews(out, db, &p);
	if (!rc)
		rc = versions(out, db, &p);
	if (!rc)
		rc = reviewers(out, db, &p);
	if (!rc)
		rc = author(out, db, &p);
	if (!rc)
		rc = appliers(out, db, &p);
	free(p.author);
	return rc;
}

static int one_i64(int64_t *out, struct db *db, const char *sql, int64_t id)
{
	sqlite3_stmt *st;
	int rc;

	*out = 0;
	rc = db_prepare(&st, db, sql);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

int listfeat_posting_of_commit(int64_t *patch_id, struct db *db,
			       int64_t commit_id)
{
	return one_i64(patch_id, db,
		       "SELECT patch_id FROM posting_outcomes WHERE commit_id "
		       "= ? ORDER BY applied_date LIMIT 1",
		       commit_id);
}

int listfeat_moment(int64_t *as_of, struct db *db, int64_t patch_id,
		    enum listfeat_moment m)
{
	int rc = 0;

	*as_of = 0;
	if (m == LISTFEAT_AT_APPLY)
		rc = one_i64(as_of, db,
			     "SELECT applied_date FROM posting_outcomes WHERE "
			     "patch_id = ? AND outcome = 'applied'",
			     patch_id);
	if (!rc && !*as_of)
		rc = one_i64(as_of, db, "SELECT date FROM patches WHERE id = ?",
			     patch_id);
	return rc;
}

int listfeat_fill_thread(struct feat_thread *out, struct db *db,
			 int64_t patch_id, enum listfeat_moment m)
{
	struct listfeat f;
	int64_t as_of;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!patch_id)
		return 0;
	rc = listfeat_moment(&as_of, db, patch_id, m);
	if (!rc)
		rc = listfeat_compute(&f, db, patch_id, as_of);
	if (rc)
		return rc;
	out->known = 1;
	out->replies = (unsigned)f.v[LISTFEAT_REPLIES];
	out->reviewers = (unsigned)f.v[LISTFEAT_REVIEWERS];
	out->inline_comments = (unsigned)f.v[LISTFEAT_INLINE];
	out->versions = (unsigned)f.v[LISTFEAT_VERSIONS_BEFORE] + 1;
	out->negative = (unsigned)f.v[LISTFEAT_NEGATIVE];
	return 0;
}

int listfeat_foreach(struct db *db, enum listfeat_moment m, listfeat_cb cb,
		     void *ctx)
{
	struct listfeat_row r;
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"SELECT p.id, p.message_id, p.date, o.outcome, "
			"coalesce(l.is_fix, 0), coalesce(l.bug, 0), "
			"coalesce(l.discovered, 0) FROM patches p JOIN "
			"posting_outcomes o ON o.patch_id = p.id LEFT JOIN "
			"posting_labels l ON l.patch_id = p.id ORDER BY p.date");
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		int64_t as_of;

		memset(&r, 0, sizeof(r));
		r.patch_id = sqlite3_column_int64(st, 0);
		r.message_id = (const char *)sqlite3_column_text(st, 1);
		r.date = sqlite3_column_int64(st, 2);
		r.outcome = (const char *)sqlite3_column_text(st, 3);
		r.is_fix = sqlite3_column_int(st, 4);
		r.bug = sqlite3_column_int(st, 5);
		r.discovered = sqlite3_column_int64(st, 6);
		rc = listfeat_moment(&as_of, db, r.patch_id, m);
		if (!rc)
			rc = listfeat_compute(&r.f, db, r.patch_id, as_of);
		if (!rc)
			rc = cb(&r, ctx);
	}
	sqlite3_finalize(st);
	return rc < 0 ? rc : 0;
}
