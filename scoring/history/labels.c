/*
 * labels.c - fix and bug-introducing labels.  It owns the fix_refs and
 * labels tables (history.h), recomputed from commits and trailers on every
 * mining run: each Fixes: trailer and each "This reverts commit <sha>."
 * becomes a reference (a Fixes: value parsed again by
 * trailer_fixes_split, so every form it knows counts), resolved to a
 * mined commit by full id, by the object database's prefix lookup for
 * an abbreviated id, and else by the quoted subject; the unresolved are
 * told apart (Coverity, URL, an id not in the repository); the
 * trivial-fix rules (conf/labels.conf, labels_code.c) keep a
 * reference from labelling; the horizon keeps young commits from being
 * negatives.  It does not parse trailers (trailer.c does, at mining).
 */
#include "scoring/history/labels.h"

#include <ctype.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/patch/patch.h"
#include "scoring/patch/trailer.h"
#include "scoring/store/db_row.h"
#include "scoring/util/strmap.h"

/* ---- the labelling pass ---------------------------------------------- */

struct lcommit {
	int64_t id, seq, cdate;
	char sha[GIT_OID_HEXSZ + 1];
	int doc_only;
	long prev_subject; /* earlier commit with the same subject, or -1 */
	int rule;	   /* trivial rule of this commit as a fixer; -2 */
	int is_fix, is_stable;
	/* label */
	size_t nfixes, ntrivial;
	int64_t discovered;
	long last_fixer;
};

struct ref {
	long fixer, target;
	const char *kind; /* "fixes" or "revert" */
	char *ref, *subject;
	char target_sha[GIT_OID_HEXSZ + 1];
	const char *how, *why;
	int trivial; /* rule, or -1 */
};

struct lctx {
	struct db *db;
	git_repository *repo;
	git_odb *odb;
	int64_t repo_id;
	const struct labels_conf *conf;
	struct lcommit *c;
	size_t n;
	struct strmap by_sha, by_subject, by_id;
	struct ref *refs;
	size_t nrefs, cap;
	sqlite3_stmt *text_st;
};

static int load_commits(struct lctx *x)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	rc = db_prepare(&st, x->db,
			"SELECT id, sha, seq, commit_date, "
			"subject, coalesce(doc_only, 0) FROM commits WHERE "
			"repo_id = ? ORDER BY seq");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, x->repo_id);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		struct lcommit *c;
		struct strmap_entry *e;
		const char *sha = (const char *)sqlite3_column_text(st, 1);
		const char *subj = (const char *)sqlite3_column_text(st, 4);
		int added;

		if (x->n == cap) {
			cap = cap ? cap * 2 : 4096;
			c = pt_reallocarray(x->c, cap, sizeof(*c));
			if (!c) {
				rc = PT_ENOMEM;
				break;
			}
			x->c = c;
		}
		c = &x->c[x->n];
		memset(c, 0, sizeof(*c));
		c->id = sqlite3_column_int64(st, 0);
		c->seq = sqlite3_column_int64(st, 2);
		c->cdate = sqlite3_column_int64(st, 3);
		c->doc_only = sqlite3_column_int(st, 5);
		c->rule = -2;
		c->last_fixer = -1;
		snprintf(c->sha, sizeof(c->sha), "%s", sha ? sha : "");
		rc = strmap_put(&e, NULL, &x->by_sha, c->sha, strlen(c->sha));
		if (!rc)
			e->v.i = (int64_t)x->n;
		if (!rc)
			rc = strmap_put_id(&e, NULL, &x->by_id, c->id);
		if (!rc)
			e->v.i = (int64_t)x->n;
		if (!rc && subj) {
			rc = strmap_put(&e, &added, &x->by_subject, subj,
					(size_t)sqlite3_column_bytes(st, 4));
			if (!rc) {
				c->prev_subject = added ? -1 : (long)e->v.i;
				e->v.i = (int64_t)x->n;
			}
		} else {
			c->prev_subject = -1;
		}
		x->n++;
	}
	sqlite3_finalize(st);
	return rc;
}

static long by_id(struct lctx *x, int64_t id)
{
	struct strmap_entry *e = strmap_get_id(&x->by_id, id);

	return e ? (long)e->v.i : -1;
}

static int add_ref(struct lctx *x, long fixer, const char *kind,
		   const char *ref, size_t rlen, const char *subj, size_t slen)
{
	struct ref *r;

	if (x->nrefs == x->cap) {
		size_t ncap = x->cap ? x->cap * 2 : 1024;

		r = pt_reallocarray(x->refs, ncap, sizeof(*r));
		if (!r)
			return PT_ENOMEM;
		x->refs = r;
		x->cap = ncap;
	}
	r = &x->refs[x->nrefs];
	memset(r, 0, sizeof(*r));
	r->fixer = fixer;
	r->target = -1;
	r->kind = kind;
	r->trivial = -1;
	r->ref = ref ? pt_strndup(ref, rlen) : NULL;
	r->subject = subj ? pt_strndup(subj, slen) : NULL;
	if ((ref && !r->ref) || (subj && !r->subject)) {
		free(r->ref);
		free(r->subject);
		return PT_ENOMEM;
	}
	x->nrefs++;
	return 0;
}

/*
 * The value is parsed again (trailer_fixes_split), so a database mined
 * before the parser learnt a form is labelled by today's rules.
 */
static int add_fixes_ref(struct lctx *x, long f, sqlite3_stmt *st)
{
	const char *value = (const char *)sqlite3_column_text(st, 1);
	char *sha = NULL, *subj = NULL;
	int rc;

	if (!value)
		return add_ref(x, f, "fixes",
			       (const char *)sqlite3_column_text(st, 2),
			       (size_t)sqlite3_column_bytes(st, 2),
			       (const char *)sqlite3_column_text(st, 3),
			       (size_t)sqlite3_column_bytes(st, 3));
	rc = trailer_fixes_split(value, &sha, &subj);
	if (!rc)
		rc = add_ref(x, f, "fixes", sha, sha ? strlen(sha) : 0, subj,
			     subj ? strlen(subj) : 0);
	free(sha);
	free(subj);
	return rc;
}

static int load_fixes(struct lctx *x)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, x->db,
			"SELECT t.commit_id, t.value, t.fixes_sha, "
			"t.fixes_subject FROM trailers t JOIN commits c ON "
			"c.id = t.commit_id WHERE c.repo_id = ? AND t.kind = ? "
			"ORDER BY c.seq, t.idx");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, x->repo_id);
	sqlite3_bind_int(st, 2, TRAILER_FIXES);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		long f = by_id(x, sqlite3_column_int64(st, 0));

		if (f >= 0)
			rc = add_fixes_ref(x, f, st);
	}
	sqlite3_finalize(st);
	return rc;
}

static const char revert_marker[] = "This reverts commit ";

static int load_reverts(struct lctx *x, size_t *nreverts)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, x->db,
			"SELECT id, message, subject FROM commits WHERE "
			"repo_id = ? AND instr(message, ?) > 0 ORDER BY seq");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, x->repo_id);
	sqlite3_bind_text(st, 2, revert_marker, -1, SQLITE_STATIC);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		long f = by_id(x, sqlite3_column_int64(st, 0));
		const char *m = (const char *)sqlite3_column_text(st, 1);
		const char *s = (const char *)sqlite3_column_text(st, 2);
		const char *p = m ? strstr(m, revert_marker) : NULL;
		const char *subj = NULL;
		size_t hl = 0, sl = 0;

		if (f < 0 || !p)
			continue;
		p += sizeof(revert_marker) - 1;
		while (isxdigit((unsigned char)p[hl]) && hl < GIT_OID_HEXSZ)
			hl++;
		if (s && !strncmp(s, "Revert \"", 8)) {
			sl = strlen(s);
			subj = s + 8;
			sl -= 8;
			if (sl && subj[sl - 1] == '"')
				sl--;
		}
		(*nreverts)++;
		rc = add_ref(x, f, "revert", p, hl, subj, sl);
	}
	sqlite3_finalize(st);
	return rc;
}

/* The latest mined commit before FIXER with exactly this subject. */
static long subject_lookup(struct lctx *x, const char *subj, long fixer)
{
	struct strmap_entry *e;
	long i;

	if (!subj || !*subj)
		return -1;
	e = strmap_get(&x->by_subject, subj, strlen(subj));
	for (i = e ? (long)e->v.i : -1; i >= 0; i = x->c[i].prev_subject)
		if (x->c[i].seq < x->c[fixer].seq)
			return i;
	return -1;
}

static int hex_ok(const char *s, size_t *len)
{
	size_t i;

	*len = s ? strlen(s) : 0;
	if (*len < GIT_OID_MINPREFIXLEN || *len > GIT_OID_HEXSZ)
		return 0;
	for (i = 0; i < *len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Resolve by id: sets how/target/why; "" how when the id did not do it. */
static void resolve_id(struct lctx *x, struct ref *r)
{
	git_oid short_id, full;
	git_object_t type;
	struct strmap_entry *e;
	char lower[GIT_OID_HEXSZ + 1];
	size_t len, i, size;
	int rc;

	r->how = NULL;
	if (!hex_ok(r->ref, &len)) {
		r->why = "no-id";
		return;
	}
	for (i = 0; i <= len; i++)
		lower[i] = (char)tolower((unsigned char)r->ref[i]);
	if (len == GIT_OID_HEXSZ && (e = strmap_get(&x->by_sha, lower, len))) {
		r->how = "full";
		r->target = (long)e->v.i;
		snprintf(r->target_sha, sizeof(r->target_sha), "%s", lower);
		return;
	}
	git_oid_fromstrn(&short_id, lower, len);
	rc = git_odb_exists_prefix(&full, x->odb, &short_id, len);
	git_error_clear();
	if (rc == GIT_EAMBIGUOUS) {
		r->why = "ambiguous";
		return;
	}
	if (rc) {
		r->why = "missing";
		return;
	}
	if (git_odb_read_header(&size, &type, x->odb, &full) ||
	    type != GIT_OBJECT_COMMIT) {
		git_error_clear();
		r->why = "not-commit";
		return;
	}
	git_oid_tostr(r->target_sha, sizeof(r->target_sha), &full);
	r->how = len == GIT_OID_HEXSZ ? "full" : "prefix";
	e = strmap_get(&x->by_sha, r->target_sha, GIT_OID_HEXSZ);
	if (e)
		r->target = (long)e->v.i;
	else
		r->why = "not-mined";
}

/* S holds WORD (case-insensitive) as a word of its own. */
static int has_word(const char *s, const char *word)
{
	size_t wl = strlen(word);
	const char *p;

	for (p = s; s && *p; p++)
		if (!strncasecmp(p, word, wl) &&
		    (p == s || !isalnum((unsigned char)p[-1])) &&
		    !isalnum((unsigned char)p[wl]))
			return 1;
	return 0;
}

/*
 * Why an unresolved reference cannot be resolved in any tree: a Coverity
 * defect ("Coverity CID 1234"), a URL; else the why of the id lookup
 * ("missing": a well-formed id not in this repository).
 */
static void unresolvable(struct ref *r)
{
	const char *t[2] = { r->ref, r->subject };
	size_t i;

	for (i = 0; i < 2; i++) {
		if (!t[i])
			continue;
		if (has_word(t[i], "coverity") || has_word(t[i], "CID")) {
			r->why = "coverity";
			return;
		}
		if (strstr(t[i], "://")) {
			r->why = "url";
			return;
		}
	}
}

static void resolve(struct lctx *x, struct ref *r)
{
	resolve_id(x, r);
	if (!r->how) {
		long t = subject_lookup(x, r->subject, r->fixer);

		if (t >= 0) {
			r->how = "subject";
			r->target = t;
			memcpy(r->target_sha, x->c[t].sha,
			       sizeof(r->target_sha));
		} else {
			r->how = "unresolved";
			unresolvable(r);
		}
	}
	if (r->target == r->fixer) {
		r->how = "unresolved";
		r->why = "self";
		r->target = -1;
	} else if (r->target >= 0 && x->c[r->target].seq > x->c[r->fixer].seq) {
		r->how = "unresolved";
		r->why = "later";
		r->target = -1;
	}
}

/* The trivial rule of FIXER for a reference of KIND, or -1. */
static int fixer_rule(struct lctx *x, long fixer, const char *kind)
{
	struct lcommit *c = &x->c[fixer];
	int rule = -1;

	if (c->doc_only)
		return LABELS_NOCODE;
	if (strcmp(kind, "fixes"))
		return -1;
	if (c->rule != -2)
		return c->rule;
	sqlite3_bind_int64(x->text_st, 1, c->id);
	if (sqlite3_step(x->text_st) == SQLITE_ROW)
		rule = labels_word_rule(x->conf,
					sqlite3_column_blob(x->text_st, 0),
					(size_t)sqlite3_column_bytes(x->text_st,
								     0));
	sqlite3_reset(x->text_st);
	/* a typo in code (not a comment or a string) is a real bug */
	if (rule == LABELS_SPELLING &&
	    labels_code_changed(x->repo, c->sha, x->conf) == 1)
		rule = -1;
	c->rule = rule;
	return rule;
}

static int load_fix_flags(struct lctx *x)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, x->db,
			"SELECT t.commit_id, max(t.kind = ?2), max(t.is_stable "
			"OR (t.kind = ?3 AND lower(t.value) LIKE '%stable@%'))"
			" FROM trailers t JOIN commits c ON c.id = t.commit_id"
			" WHERE c.repo_id = ?1 GROUP BY t.commit_id");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, x->repo_id);
	sqlite3_bind_int(st, 2, TRAILER_FIXES);
	sqlite3_bind_int(st, 3, TRAILER_CC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		long i = by_id(x, sqlite3_column_int64(st, 0));

		if (i < 0)
			continue;
		x->c[i].is_stable = sqlite3_column_int(st, 2);
		x->c[i].is_fix = sqlite3_column_int(st, 1) || x->c[i].is_stable;
	}
	sqlite3_finalize(st);
	return 0;
}

static void bind_opt(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static int write_refs(struct lctx *x)
{
	sqlite3_stmt *st;
	size_t i;
	int rc;

	rc = db_prepare(&st, x->db,
			"INSERT INTO fix_refs (commit_id, kind, ref, "
			"ref_subject, target_id, target_sha, how, why, "
			"trivial) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
	for (i = 0; !rc && i < x->nrefs; i++) {
		const struct ref *r = &x->refs[i];

		sqlite3_bind_int64(st, 1, x->c[r->fixer].id);
		sqlite3_bind_text(st, 2, r->kind, -1, SQLITE_STATIC);
		bind_opt(st, 3, r->ref);
		bind_opt(st, 4, r->subject);
		if (r->target >= 0)
			sqlite3_bind_int64(st, 5, x->c[r->target].id);
		else
			sqlite3_bind_null(st, 5);
		bind_opt(st, 6, r->target_sha);
		sqlite3_bind_text(st, 7, r->how, -1, SQLITE_STATIC);
		bind_opt(st, 8, r->why);
		bind_opt(st, 9,
			 r->trivial >= 0 ? labels_rule_name(r->trivial) : NULL);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0
			     : db_error(x->db, "saving a fix reference");
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int write_labels(struct lctx *x, struct labels_counts *out,
			int64_t horizon)
{
	sqlite3_stmt *st;
	size_t i;
	int rc;

	rc = db_prepare(&st, x->db,
			"INSERT INTO labels (commit_id, is_fix, is_stable, "
			"bug, nfixes, discovered, trivial_only, negative_ok) "
			"VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
	for (i = 0; !rc && i < x->n; i++) {
		const struct lcommit *c = &x->c[i];
		int bug = c->nfixes > 0;
		int neg_ok = bug || c->cdate <= horizon;

		out->fixes += c->is_fix;
		out->bugs += bug;
		out->trivial_only += !bug && c->ntrivial;
		out->negatives += !bug && neg_ok;
		sqlite3_bind_int64(st, 1, c->id);
		sqlite3_bind_int(st, 2, c->is_fix);
		sqlite3_bind_int(st, 3, c->is_stable);
		sqlite3_bind_int(st, 4, bug);
		sqlite3_bind_int64(st, 5, (int64_t)c->nfixes);
		if (bug)
			sqlite3_bind_int64(st, 6, c->discovered);
		else
			sqlite3_bind_null(st, 6);
		sqlite3_bind_int(st, 7, !bug && c->ntrivial);
		sqlite3_bind_int(st, 8, neg_ok);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0
			     : db_error(x->db, "saving a label");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static void apply_refs(struct lctx *x, struct labels_counts *out)
{
	size_t i;

	for (i = 0; i < x->nrefs; i++) {
		struct ref *r = &x->refs[i];
		struct lcommit *t;

		if (!strcmp(r->how, "full"))
			out->full++;
		else if (!strcmp(r->how, "prefix"))
			out->prefix++;
		else if (!strcmp(r->how, "subject"))
			out->subject++;
		else
			out->unresolved++;
		if (r->why && !strcmp(r->why, "not-mined"))
			out->not_mined++;
		if (r->target < 0)
			continue;
		t = &x->c[r->target];
		r->trivial = fixer_rule(x, r->fixer, r->kind);
		if (r->trivial >= 0) {
			out->trivial[r->trivial]++;
			t->ntrivial++;
			continue;
		}
		if (t->last_fixer == r->fixer)
			continue; /* two trailers of one fix */
		t->last_fixer = r->fixer;
		if (!t->nfixes || x->c[r->fixer].cdate < t->discovered)
			t->discovered = x->c[r->fixer].cdate;
		t->nfixes++;
	}
	out->refs = x->nrefs;
}

static int clear_tables(struct lctx *x)
{
	static const char *const sql[] = {
		"DELETE FROM fix_refs WHERE commit_id IN (SELECT id FROM "
		"commits WHERE repo_id = ?)",
		"DELETE FROM labels WHERE commit_id IN (SELECT id FROM "
		"commits WHERE repo_id = ?)",
	};
	size_t i;
	int rc = 0;

	for (i = 0; i < 2 && !rc; i++)
		rc = db_exec_id(x->db, sql[i], x->repo_id, "clearing labels");
	return rc;
}

static int compute(struct lctx *x, struct labels_counts *out, int horizon_days)
{
	int64_t newest = 0;
	size_t i;
	int rc;

	rc = load_commits(x);
	if (!rc)
		rc = load_fixes(x);
	if (!rc)
		rc = load_reverts(x, &out->reverts);
	if (!rc)
		rc = load_fix_flags(x);
	if (!rc)
		rc = db_prepare(&x->text_st, x->db,
				"SELECT substr(CAST(message AS BLOB), 1, "
				"body_len) FROM commits WHERE id = ?");
	if (rc)
		return rc;
	for (i = 0; i < x->nrefs; i++)
		resolve(x, &x->refs[i]);
	apply_refs(x, out);
	for (i = 0; i < x->n; i++)
		if (x->c[i].cdate > newest)
			newest = x->c[i].cdate;
	rc = db_begin(x->db);
	if (rc)
		return rc;
	rc = clear_tables(x);
	if (!rc)
		rc = write_refs(x);
	if (!rc)
		rc = write_labels(x, out,
				  newest - (int64_t)horizon_days * 86400);
	if (!rc)
		rc = db_commit(x->db);
	else
		db_rollback(x->db);
	return rc;
}

/* One row of n counts about repo_id's references; zeros when none. */
static int repo_row(int64_t *v, size_t n, struct db *db, const char *sql,
		    int64_t repo_id)
{
	int rc = db_row_int64(v, n, db, sql, &repo_id, 1);

	if (rc < 0)
		return rc;
	if (!rc)
		memset(v, 0, n * sizeof(*v));
	return 0;
}

static int count_with_fixes(size_t *out, struct db *db, int64_t repo_id)
{
	const int64_t args[] = { repo_id, TRAILER_FIXES };
	int64_t n;
	int rc = db_row_int64(&n, 1, db,
			      "SELECT count(DISTINCT t.commit_id) FROM "
			      "trailers t JOIN commits c ON c.id = t.commit_id "
			      "WHERE c.repo_id = ? AND t.kind = ?",
			      args, 2);

	if (rc < 0)
		return rc;
	*out = (size_t)n;
	return 0;
}

int labels_compute(struct labels_counts *out, struct db *db,
		   struct git_repository *repo, int64_t repo_id,
		   const struct labels_conf *c, int horizon_days)
{
	struct lctx x;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	x.db = db;
	x.repo = repo;
	x.repo_id = repo_id;
	x.conf = c;
	if (git_repository_odb(&x.odb, repo))
		return pt_error_set(PT_EIO, "cannot open the object database");
	rc = compute(&x, out, horizon_days);
	if (!rc)
		rc = count_with_fixes(&out->with_fixes, db, repo_id);
	sqlite3_finalize(x.text_st);
	for (i = 0; i < x.nrefs; i++) {
		free(x.refs[i].ref);
		free(x.refs[i].subject);
	}
	free(x.refs);
	free(x.c);
	strmap_free(&x.by_sha);
	strmap_free(&x.by_subject);
	strmap_free(&x.by_id);
	git_odb_free(x.odb);
	return rc;
}

/* ---- mine --report ----------------------------------------------------- */

int labels_summary(struct buf *out, struct db *db, int64_t repo_id)
{
	int64_t v[9];
	int rc;

	rc = repo_row(v, 9, db,
		      "SELECT count(*), sum(how = 'full'), "
		      "sum(how = 'prefix'), sum(how = 'subject'), "
		      "sum(how = 'unresolved'), sum(why = 'not-mined'), "
		      "sum(trivial = 'nocode'), "
		      "sum(trivial = 'spelling'), sum(trivial = 'race') "
		      "FROM fix_refs r JOIN commits c ON "
		      "c.id = r.commit_id WHERE c.repo_id = ?",
		      repo_id);
	if (rc)
		return rc;
	return buf_addf(out,
			"references:  %lld from fixing commits (Fixes: and "
			"reverts): by full id %lld, by id prefix %lld, by "
			"subject %lld, unresolved %lld; %lld of the resolved "
			"name a commit that was not mined (no label)\n"
			"trivial:     %lld references dropped by a trivial-fix "
			"rule: nocode %lld, spelling %lld, race %lld\n",
			(long long)v[0], (long long)v[1], (long long)v[2],
			(long long)v[3], (long long)v[4], (long long)v[5],
			(long long)(v[6] + v[7] + v[8]), (long long)v[6],
			(long long)v[7], (long long)v[8]);
}

/* The unresolved references by why: those no tree could resolve apart. */
static int report_unresolvable(struct buf *out, struct db *db, int64_t repo_id)
{
	int64_t v[4];
	int rc;

	rc = repo_row(v, 4, db,
		      "SELECT sum(why = 'coverity'), sum(why = 'url'), "
		      "sum(why = 'missing'), sum(why IS NULL OR why NOT "
		      "IN ('coverity', 'url', 'missing')) FROM fix_refs r "
		      "JOIN commits c ON c.id = r.commit_id WHERE "
		      "c.repo_id = ? AND r.how = 'unresolved'",
		      repo_id);
	if (rc)
		return rc;
	return buf_addf(out,
			"unresolvable: coverity %lld, url %lld, foreign id "
			"%lld (a well-formed id not in this repository); "
			"other unresolved %lld\n",
			(long long)v[0], (long long)v[1], (long long)v[2],
			(long long)v[3]);
}

static int report_unresolved(struct buf *out, struct db *db, int64_t repo_id)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"SELECT substr(c.sha, 1, 12), r.kind, r.ref, "
			"r.ref_subject, r.why FROM fix_refs r JOIN commits c "
			"ON c.id = r.commit_id WHERE c.repo_id = ? AND "
			"r.how = 'unresolved' ORDER BY c.seq, r.id");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	rc = buf_addstr(out, "unresolved references:\n");
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		const char *ref = (const char *)sqlite3_column_text(st, 2);
		const char *subj = (const char *)sqlite3_column_text(st, 3);
		const char *why = (const char *)sqlite3_column_text(st, 4);

		rc = buf_addf(out, "  %s %s '%s' (\"%s\") %s\n",
			      sqlite3_column_text(st, 0),
			      sqlite3_column_text(st, 1), ref ? ref : "",
			      subj ? subj : "", why ? why : "no match");
	}
	sqlite3_finalize(st);
	return rc;
}

int labels_report(struct buf *out, struct db *db, int64_t repo_id)
{
	int64_t v[3];
	int rc;

	rc = labels_summary(out, db, repo_id);
	if (!rc)
		rc = report_unresolvable(out, db, repo_id);
	if (!rc)
		rc = db_row_int64(v, 3, db,
				  "SELECT count(*), sum(l.trivial_only), "
				  "sum(l.bug = 0 AND l.negative_ok) FROM "
				  "labels l JOIN commits c ON c.id = "
				  "l.commit_id WHERE c.repo_id = ?",
				  &repo_id, 1);
	if (rc > 0)
		rc = buf_addf(out,
			      "labelled:    %lld commits; %lld fixed only by "
			      "trivial fixes (not bug-introducing), %lld "
			      "usable negatives (not bug-introducing, older "
			      "than the horizon)\n",
			      (long long)v[0], (long long)v[1],
			      (long long)v[2]);
	if (!rc)
		rc = report_unresolved(out, db, repo_id);
	return rc;
}
