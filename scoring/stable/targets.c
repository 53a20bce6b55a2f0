/*
 * targets.c - applies to: whether the code a commit's Fixes: or revert
 * targets name is in the branch (reachable from its tip, in the base's
 * history, or backported), whether a target the branch lacks is on its
 * way there (a listed candidate of the range or a tagged main-line
 * commit before it: PENDING), and whether the branch has the commit the
 * changelog cites.  A fix for code the branch never had is dropped.
 */
#include "scoring/stable/stable_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- applies to ------------------------------------------------------- */

/* A target after the base: was it backported without a marker? */
static int target_backported(struct stable_set *s, const git_oid *id)
{
	struct stable_priv *p = s->priv;
	struct oment *e = stable_oidmap_get(&p->range, id);
	struct changes ch;
	git_oid pid;
	int rc;

	if (!p->patchids.len)
		return 0;
	if (e)
		return 0; /* a range commit: stable_match_commit has decided */
	rc = stable_lookup_changes(&ch, p->repo, id);
	if (rc)
		return rc;
	rc = stable_maybe_patchid(&pid, p, &ch);
	stable_changes_clear(&ch);
	if (rc <= 0)
		return rc;
	return stable_oidmap_get(&p->patchids, &pid) != NULL;
}

/* 1 when the code of target is in the branch, 0 when not, < 0 error. */
static int target_present(struct stable_set *s, const git_oid *id)
{
	struct stable_priv *p = s->priv;
	struct oment *e;
	int r;

	if (!git_oid_cmp(id, &p->tip) || stable_oidmap_get(&p->only, id) ||
	    stable_oidmap_get(&p->upstream, id))
		return 1;
	e = stable_oidmap_get(&p->range, id);
	if (e && s->c[e->val].match != STABLE_MATCH_NONE)
		return 1;
	e = stable_oidmap_get(&p->memo, id);
	if (e)
		return e->val == 1;
	if (stable_oidmap_get(&p->after_base, id))
		r = target_backported(s, id);
	else
		r = !git_oid_cmp(id, &p->base) ||
		    stable_oidmap_get(&p->anc, id);
	if (r < 0)
		return r;
	if (stable_oidmap_put(&p->memo, id, r ? 1 : 2))
		return PT_ENOMEM;
	return r;
}

/* Commit time of a target that may be in the base's history, else -1. */
static int64_t target_time(struct stable_priv *p, const char *hex)
{
	git_commit *c = NULL;
	git_oid id;
	int64_t t;

	git_oid_fromstr(&id, hex);
	if (stable_oidmap_get(&p->after_base, &id) ||
	    stable_oidmap_get(&p->only, &id) ||
	    stable_oidmap_get(&p->upstream, &id) ||
	    git_commit_lookup(&c, p->repo, &id))
		return -1;
	t = (int64_t)git_commit_time(c);
	git_commit_free(c);
	return t;
}

/*
 * The base's history, newest first, back to a month before the oldest
 * target that could be in it: one walk instead of a merge-base search
 * per target (git_graph_descendant_of costs ~8 ms each on DPDK).  The
 * month allows for committer clocks that run backwards.
 */
int stable_base_history(struct stable_set *s)
{
	struct stable_priv *p = s->priv;
	int64_t oldest = INT64_MAX, t;
	git_revwalk *w = NULL;
	git_commit *c;
	git_oid id;
	size_t i, k;
	int rc = 0, e;

	for (i = 0; i < s->n; i++)
		for (k = 0; k <= s->c[i].ntargets; k++) {
			const char *hex = k < s->c[i].ntargets
						  ? s->c[i].targets[k]
						  : s->c[i].cites;

			t = *hex ? target_time(p, hex) : -1;
			if (t >= 0 && t < oldest)
				oldest = t;
		}
	if (oldest == INT64_MAX)
		return 0;
	oldest -= 30 * 86400;
	if (git_revwalk_new(&w, p->repo))
		return stable_git_fail("cannot walk", s->base);
	git_revwalk_sorting(w, GIT_SORT_TIME);
	if (git_revwalk_push(w, &p->base)) {
		rc = stable_git_fail("cannot walk", s->base);
		goto out;
	}
	while (!rc && !(e = git_revwalk_next(&id, w))) {
		if (git_commit_lookup(&c, p->repo, &id)) {
			rc = stable_git_fail("cannot read commit",
					     git_oid_tostr_s(&id));
			break;
		}
		t = (int64_t)git_commit_time(c);
		git_commit_free(c);
		if (t < oldest)
			break;
		rc = stable_oidmap_put(&p->anc, &id, 0);
	}
out:
	git_revwalk_free(w);
	return rc;
}

/* Is any of a commit's targets in the branch?  1 yes, 0 no, < 0 error. */
static int any_present(struct stable_set *s, const struct stable_commit *sc)
{
	git_oid id;
	size_t k;
	int r = 0;

	for (k = 0; !r && k < sc->ntargets; k++) {
		git_oid_fromstr(&id, sc->targets[k]);
		r = target_present(s, &id);
	}
	return r;
}

void stable_free_targets(struct stable_commit *sc)
{
	size_t k;

	for (k = 0; k < sc->ntargets; k++)
		free(sc->targets[k]);
	free(sc->targets);
}

/*
 * Is a main-line commit outside the range, which the branch lacks, on its
 * way to the branch?  It is when tagged like a candidate (Cc: stable, or
 * a Fixes: that is not for code the branch never had), as a fix of a
 * tagged candidate of the range is: stable maintainers take the main
 * line's fixes in batches, so the branch tip often lacks the previous
 * batch when the next range is ranked.  1 yes, 0 no, < 0 error.
 */
static int target_queued(struct stable_set *s, const git_oid *id)
{
	struct stable_priv *p = s->priv;
	struct stable_commit t;
	git_commit *c = NULL;
	struct oment *e;
	int r, q = 0;

	if (!stable_oidmap_get(&p->after_base, id) ||
	    stable_oidmap_get(&p->range, id))
		return 0;
	e = stable_oidmap_get(&p->queued, id);
	if (e)
		return e->val == 1;
	if (git_commit_lookup(&c, p->repo, id))
		return stable_git_fail("cannot read commit",
				       git_oid_tostr_s(id));
	memset(&t, 0, sizeof(t));
	r = stable_read_tags(&t, p->repo, git_commit_message(c));
	git_commit_free(c);
	q = t.cc_stable || (t.has_fixes && !t.ntargets);
	if (!r && !q) {
		r = any_present(s, &t);
		q = r > 0;
	}
	stable_free_targets(&t);
	if (r < 0)
		return r;
	if (stable_oidmap_put(&p->queued, id, q ? 1 : 2))
		return PT_ENOMEM;
	return q;
}

/*
 * Is a candidate of the range on its way to the branch as far as its
 * fixes go: tagged, or untagged with a CI or packaging component or
 * toolchain words (what stable_build() ranks; whoever takes it needs its
 * fixes).  Fix wording alone is not enough: measured on rdma-core, the
 * fixes of such commits were not backported (docs/EVALUATION.md).
 */
static int listed_in_range(const struct stable_commit *c)
{
	return stable_tier(c) > 0 || stable_build(c);
}

/* Fixes of such a candidate of the range: PENDING, with it in deps. */
static int pending_in_range(struct stable_set *s, size_t i)
{
	struct stable_commit *sc = &s->c[i];
	const struct oment *e;
	git_oid id;
	size_t k;

	for (k = 0; k < sc->ntargets; k++) {
		git_oid_fromstr(&id, sc->targets[k]);
		e = stable_oidmap_get(&s->priv->range, &id);
		if (!e || e->val >= i || !stable_is_candidate(s, e->val) ||
		    !listed_in_range(&s->c[e->val]))
			continue;
		/* fixes a commit that is on its way to the branch */
		sc->target = STABLE_TARGET_PENDING;
		return stable_add_dep(sc, e->val);
	}
	return 0;
}

/* Fixes of a queued commit before the range: PENDING, with needs set. */
static int pending_before(struct stable_set *s, size_t i)
{
	struct stable_commit *sc = &s->c[i];
	git_oid id;
	size_t k;
	int r;

	for (k = 0; k < sc->ntargets; k++) {
		git_oid_fromstr(&id, sc->targets[k]);
		r = target_queued(s, &id);
		if (r < 0)
			return r;
		if (r) {
			sc->target = STABLE_TARGET_PENDING;
			memcpy(sc->needs, sc->targets[k], sizeof(sc->needs));
			return 0;
		}
	}
	return 0;
}

int stable_check_targets(struct stable_set *s, size_t i)
{
	struct stable_commit *sc = &s->c[i];
	int r;

	if (!sc->ntargets)
		return 0;
	r = any_present(s, sc);
	if (r < 0)
		return r;
	sc->target = r ? STABLE_TARGET_PRESENT : STABLE_TARGET_ABSENT;
	r = 0;
	if (sc->target == STABLE_TARGET_ABSENT)
		r = pending_in_range(s, i);
	if (!r && sc->target == STABLE_TARGET_ABSENT)
		r = pending_before(s, i);
	if (r)
		return r;
	sc->dropped = sc->target == STABLE_TARGET_ABSENT;
	return 0;
}

/* Does the branch have the commit the changelog names? */
int stable_check_cites(struct stable_set *s, size_t i)
{
	git_oid id;
	int r;

	if (!s->c[i].cites[0])
		return 0;
	git_oid_fromstr(&id, s->c[i].cites);
	r = target_present(s, &id);
	if (r < 0)
		return r;
	s->c[i].cites_present = r > 0;
	return 0;
}
