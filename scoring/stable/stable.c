/*
 * stable.c - the facts `patchtriage stable` reports about the commits of a
 * main-line range relative to a stable branch (see stable.h): the whole
 * analysis in order, the tiers and hints the ranking keys on, the enum
 * names and freeing the set.  The steps live beside it: range.c (the
 * branch's and the range's commits, already in the branch, series),
 * message.c (markers, tags, fix wording, build facts), targets.c
 * (applies to, pending), deps.c (depends on), apply.c (clean cherry-pick,
 * prerequisites), suggest.c (the blame-based Fixes: suggestion) and
 * repo.c (oid map, libgit2 helpers, changed files, walks).  It neither
 * prints nor scores with a model.
 */
#include "scoring/stable/stable.h"
#include "scoring/stable/stable_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- the whole analysis ----------------------------------------------- */

/* i of the n commits of a pass done; n 0 for a pass not counted. */
static void step(const struct stable_opts *o, const char *stage, size_t i,
		 size_t n)
{
	struct pt_progress_report r = { stage, n ? "commits" : NULL, i, n, 0,
					NULL };

	pt_progress_report(&o->progress, &r);
}

int stable_is_candidate(const struct stable_set *s, size_t i)
{
	return i < s->n && s->c[i].match == STABLE_MATCH_NONE &&
	       !s->c[i].dropped;
}

int stable_tier(const struct stable_commit *c)
{
	if (c->cc_stable)
		return 3;
	if (c->has_fixes && (c->target == STABLE_TARGET_PRESENT ||
			     c->target == STABLE_TARGET_PENDING))
		return 2;
	return c->has_fixes ? 1 : 0;
}

int stable_hint(const struct stable_commit *c)
{
	return !stable_tier(c) && (c->fix_subject || c->cites_present);
}

int stable_build(const struct stable_commit *c)
{
	return !stable_tier(c) && (c->build_ci || c->build_words);
}

static int parse_range(git_oid *from, int *has_from, git_oid *to,
		       git_repository *repo, const char *range)
{
	const char *dots = strstr(range, "..");
	char *a;
	int rc;

	*has_from = 0;
	if (!dots)
		return stable_peel_commit(to, repo, range);
	if (dots[2] == '.')
		return pt_error_set(PT_EINVAL,
				    "range '%s': use A..B, not "
				    "A...B",
				    range);
	a = pt_strndup(range, (size_t)(dots - range));
	if (!a)
		return PT_ENOMEM;
	rc = stable_peel_commit(from, repo, *a ? a : "HEAD");
	free(a);
	if (rc)
		return rc;
	*has_from = 1;
	return stable_peel_commit(to, repo, dots[2] ? dots + 2 : "HEAD");
}

/* The passes over the range's commits, in order. */
static int passes(struct stable_set *s, const struct stable_opts *o)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < s->n && !rc; i++) {
		step(o, "matching the branch", i, s->n);
		rc = stable_match_commit(s, i);
	}
	if (!rc)
		step(o, "matching the branch", i, s->n);
	if (!rc) {
		step(o, "reading the history before the range", 0, 0);
		rc = stable_base_history(s);
	}
	for (i = 0; i < s->n && !rc; i++) {
		step(o, "checking Fixes: targets", i, s->n);
		rc = stable_check_targets(s, i);
	}
	if (!rc)
		step(o, "checking Fixes: targets", i, s->n);
	for (i = 0; i < s->n && !rc; i++) {
		step(o, "checking citations", i, s->n);
		rc = stable_check_cites(s, i);
	}
	if (!rc)
		step(o, "checking citations", i, s->n);
	if (!rc)
		rc = stable_find_series(s);
	if (!rc && !o->no_deps) {
		step(o, "finding dependencies", 0, 0);
		rc = stable_deps(s, NULL);
	}
	for (i = 0; i < s->n && !rc && o->check_apply; i++) {
		step(o, "cherry-picking", i, s->n);
		if (stable_is_candidate(s, i))
			rc = stable_check_apply(s, i);
	}
	return rc;
}

static int analyse(struct stable_set *s, const struct stable_opts *o)
{
	struct stable_priv *p = s->priv;
	git_oid from;
	int has_from, rc;

	rc = parse_range(&from, &has_from, &p->head, p->repo, o->range);
	if (!rc)
		rc = stable_peel_commit(&p->tip, p->repo, o->branch);
	if (rc)
		return rc;
	if (git_merge_base(&p->base, p->repo, &p->tip, &p->head))
		return stable_git_fail("no merge base of the branch and",
				       o->range);
	git_oid_tostr(s->tip, sizeof(s->tip), &p->tip);
	git_oid_tostr(s->base, sizeof(s->base), &p->base);
	step(o, "reading the branch and the range", 0, 0);
	rc = stable_walk(p->repo, &p->tip, &p->base, stable_branch_cb, s);
	if (!rc)
		rc = stable_walk(p->repo, &p->head, &p->base, stable_put_cb,
				 &p->after_base);
	if (!rc)
		rc = stable_walk(p->repo, &p->head, has_from ? &from : NULL,
				 stable_range_cb, s);
	if (!rc)
		rc = stable_branch_patchids(p, &o->progress);
	s->nmarkers = p->upstream.len;
	return rc ? rc : passes(s, o);
}

int stable_analyse(struct stable_set **out, struct git_repository *repo,
		   const struct stable_opts *opts)
{
	struct stable_set *s;
	int rc;

	*out = NULL;
	if (!opts || !opts->range || !opts->branch)
		return pt_error_set(PT_EINVAL, "stable: a range and a branch "
					       "are needed");
	s = pt_calloc(1, sizeof(*s));
	if (!s)
		return PT_ENOMEM;
	s->priv = pt_calloc(1, sizeof(*s->priv));
	if (!s->priv) {
		free(s);
		return PT_ENOMEM;
	}
	s->priv->repo = repo;
	s->priv->jobs = opts->jobs ? opts->jobs : 1;
	rc = analyse(s, opts);
	if (rc) {
		stable_set_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void stable_set_free(struct stable_set *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->c[i].subject);
		free(s->c[i].author);
		stable_free_targets(&s->c[i]);
		free(s->c[i].deps);
	}
	free(s->c);
	if (s->priv) {
		stable_oidmap_free(&s->priv->range);
		stable_oidmap_free(&s->priv->after_base);
		stable_oidmap_free(&s->priv->only);
		stable_oidmap_free(&s->priv->upstream);
		stable_oidmap_free(&s->priv->patchids);
		stable_oidmap_free(&s->priv->memo);
		stable_oidmap_free(&s->priv->queued);
		stable_oidmap_free(&s->priv->sigs);
		stable_oidmap_free(&s->priv->anc);
		for (i = 0; s->priv->rch && i < s->n; i++)
			stable_changes_clear(&s->priv->rch[i]);
		free(s->priv->rch);
		free(s->priv->sk);
		free(s->priv->b);
		free(s->priv);
	}
	free(s);
}

const char *stable_match_name(enum stable_match m)
{
	switch (m) {
	case STABLE_MATCH_ANCESTOR:
		return "ancestor";
	case STABLE_MATCH_CHERRY:
		return "cherry-pick";
	case STABLE_MATCH_UPSTREAM:
		return "upstream-commit";
	case STABLE_MATCH_COMMIT_UP:
		return "commit-upstream";
	case STABLE_MATCH_PATCHID:
		return "patch-id";
	default:
		return "no";
	}
}

const char *stable_target_name(enum stable_target t)
{
	switch (t) {
	case STABLE_TARGET_PRESENT:
		return "present";
	case STABLE_TARGET_ABSENT:
		return "absent";
	case STABLE_TARGET_UNKNOWN:
		return "unknown";
	case STABLE_TARGET_PENDING:
		return "pending";
	default:
		return "none";
	}
}

const char *stable_apply_name(enum stable_apply a)
{
	switch (a) {
	case STABLE_APPLY_CLEAN:
		return "clean";
	case STABLE_APPLY_CONFLICT:
		return "conflict";
	default:
		return "unchecked";
	}
}
