/*
 * cycle.c - release tags and each commit's place in the release cycle.
 * Tags that match the pattern are the mainline's releases when their
 * commit is on the mined revision's first-parent chain (else a stable
 * branch's; by version shape when the chain cannot be walked).  Mainline
 * tags are sorted in version order (rc1 < rc2 < final < next release's
 * rc1) and visited once each: a depth-first walk
 * from the tag marks every commit not marked by an earlier tag, and stops
 * at marked ones, so the whole graph is walked once.  A commit first
 * reached from -rc1 was merged in the merge window (rc 0); from -rcN+1,
 * after -rcN (rc N); from the final release, after the last rc.  It owns
 * the tags table and the tag/release/rc/phase/soak columns of commits,
 * and answers the newest mainline tag as of a date.
 */
#include "scoring/history/cycle.h"
#include "scoring/store/db_row.h"

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
	int last_rc;  /* highest rc of its release (0: none) */
	int mainline; /* a release of the mainline, not of a stable
			     * branch (see cycle.h) */
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
		return pt_error_set(PT_EINVAL,
				    "tag pattern '%s' has no "
				    "group for the version",
				    p);
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
	if (*n)
		qsort(tags, *n, sizeof(*tags), rtag_cmp);
	*out = tags;
	return 0;
}

/* Each mainline release's highest rc, stored on all its tags. */
static int last_rcs(struct rtag *tags, size_t n)
{
	struct strmap m = STRMAP_INIT;
	struct strmap_entry *e;
	size_t i;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		if (!tags[i].mainline)
			continue;
		rc = strmap_put(&e, NULL, &m, tags[i].t.release,
				strlen(tags[i].t.release));
		if (!rc && tags[i].t.rc > e->v.i)
			e->v.i = tags[i].t.rc;
	}
	for (i = 0; i < n && !rc; i++) {
		e = strmap_get(&m, tags[i].t.release,
			       strlen(tags[i].t.release));
		tags[i].last_rc = e ? (int)e->v.i : 0;
	}
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
		if (!tags[i].mainline)
			continue;
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

	rc = db_exec_id(db, "DELETE FROM tags WHERE repo_id = ?", repo_id,
			"clearing tags");
	if (!rc)
		rc = db_prepare(&st, db,
				"INSERT INTO tags (repo_id, name, "
				"sha, date, release, rc, ord, mainline) VALUES "
				"(?, ?, ?, ?, ?, ?, ?, ?)");
	for (i = 0; !rc && i < n; i++) {
		sqlite3_bind_int64(st, 1, repo_id);
		sqlite3_bind_text(st, 2, tags[i].t.name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, git_oid_tostr_s(&tags[i].commit), -1,
				  SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, tags[i].date);
		sqlite3_bind_text(st, 5, tags[i].t.release, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 6, tags[i].t.rc);
		sqlite3_bind_int64(st, 7, (int64_t)i);
		sqlite3_bind_int(st, 8, tags[i].mainline);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0
			     : db_error(db, "saving a tag");
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

	rc = db_prepare(&sel, db,
			"SELECT id, sha, commit_date FROM commits "
			"WHERE repo_id = ?");
	if (!rc)
		rc = db_prepare(&up, db,
				"UPDATE commits SET tag = ?, "
				"release = ?, rc = ?, phase = ?, "
				"after_last_rc = ?, soak = ? WHERE id = ?");
	if (rc)
		goto out;
	sqlite3_bind_int64(sel, 1, repo_id);
	while (!rc && sqlite3_step(sel) == SQLITE_ROW) {
		git_oid id;
		struct strmap_entry *e = NULL;

		if (!git_oid_fromstr(&id,
				     (const char *)sqlite3_column_text(sel, 1)))
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
			     ? 0
			     : db_error(db, "saving a commit's phase");
		sqlite3_reset(up);
		sqlite3_clear_bindings(up);
	}
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(up);
	return rc;
}

/*
 * The commits of REV's first-parent chain into *FP.  *COMPLETE: the
 * chain was walked to its root, so a commit not in it is not on it (not
 * so for a shallow repository, a missing commit or an unknown REV).
 */
static int first_parents(struct strmap *fp, int *complete, git_repository *repo,
			 const char *rev)
{
	git_object *obj = NULL, *co = NULL;
	git_commit *c;
	git_oid id;
	int rc = 0, added;

	*complete = 0;
	if (git_revparse_single(&obj, repo, rev ? rev : "HEAD") ||
	    git_object_peel(&co, obj, GIT_OBJECT_COMMIT)) {
		git_error_clear();
		git_object_free(obj);
		return 0; /* every tag by its version's shape */
	}
	git_object_free(obj);
	c = (git_commit *)co;
	while (!rc) {
		struct strmap_entry *e;

		git_oid_cpy(&id, git_commit_id(c));
		rc = strmap_put(&e, &added, fp, (const char *)id.id,
				GIT_OID_RAWSZ);
		if (rc || !added || !git_commit_parentcount(c)) {
			*complete = !rc && !git_repository_is_shallow(repo);
			break;
		}
		git_oid_cpy(&id, git_commit_parent_id(c, 0));
		git_commit_free(c);
		c = NULL;
		if (git_commit_lookup(&c, repo, &id)) {
			git_error_clear();
			break; /* missing: the rest of the chain is unknown */
		}
	}
	git_commit_free(c);
	return rc;
}

/*
 * The version-shape fallback: a fourth version component, or a third
 * above 0 of a release whose x.y or x.y.0 is tagged too (v22.11.7 of
 * v22.11, v6.1.12 of v6.1, v8.2.1 of v8.2.0; v2.6.39 stays mainline).
 */
static int shape_stable(const struct rtag *tags, size_t n, size_t i)
{
	const struct cycle_tag *t = &tags[i].t;
	size_t j;

	if (t->nver >= 4)
		return 1;
	if (t->nver != 3 || !t->ver[2])
		return 0;
	for (j = 0; j < n; j++) {
		const struct cycle_tag *b = &tags[j].t;

		if ((b->nver == 2 || (b->nver == 3 && !b->ver[2])) &&
		    b->ver[0] == t->ver[0] && b->ver[1] == t->ver[1])
			return 1;
	}
	return 0;
}

/* Mark each tag mainline or not; *NMAIN: how many are. */
static int classify(size_t *nmain, struct rtag *tags, size_t n,
		    git_repository *repo, const char *rev)
{
	struct strmap fp = STRMAP_INIT;
	size_t i;
	int complete, rc;

	*nmain = 0;
	rc = first_parents(&fp, &complete, repo, rev);
	for (i = 0; !rc && i < n; i++) {
		if (strmap_get(&fp, (const char *)tags[i].commit.id,
			       GIT_OID_RAWSZ))
			tags[i].mainline = 1;
		else if (complete)
			tags[i].mainline = 0;
		else
			tags[i].mainline = !shape_stable(tags, n, i);
		*nmain += (size_t)tags[i].mainline;
	}
	strmap_free(&fp);
	return rc;
}

int cycle_assign(size_t *ntags, size_t *nmain, struct db *db,
		 struct git_repository *repo, int64_t repo_id, const char *rev,
		 const char *pattern)
{
	struct strmap seen = STRMAP_INIT;
	struct rtag *tags = NULL;
	size_t n = 0, i;
	int rc;

	*ntags = *nmain = 0;
	rc = list_tags(&tags, &n, repo, pattern);
	if (!rc)
		rc = classify(nmain, tags, n, repo, rev);
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

void cycle_mainline_clear(struct cycle_mainline *m)
{
	if (!m)
		return;
	free(m->name);
	free(m->release);
	memset(m, 0, sizeof(*m));
}

int cycle_mainline_tag_at(struct cycle_mainline *out, struct db *db,
			  int64_t repo_id, int64_t date)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = db_prepare(&st, db, CYCLE_MAINLINE_AT_SQL);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_int64(st, 2, date);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->name = pt_strdup((const char *)sqlite3_column_text(st, 0));
		out->release =
			pt_strdup((const char *)sqlite3_column_text(st, 1));
		out->rc = sqlite3_column_int(st, 2);
		out->date = sqlite3_column_int64(st, 3);
		rc = out->name && out->release ? 1 : PT_ENOMEM;
	} else {
		rc = rc == SQLITE_DONE ? 0 : db_error(db, "reading tags");
	}
	sqlite3_finalize(st);
	if (rc < 0)
		cycle_mainline_clear(out);
	return rc;
}
