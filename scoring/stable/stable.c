/*
 * stable.c - the facts `patchtriage stable` reports about the commits of a
 * main-line range relative to a stable branch (see stable.h): already in
 * the branch (ancestry, upstream marker lines, patch-id), tagged, applies
 * to (Fixes:/revert targets present in the branch), depends on (earlier
 * candidates whose zero-context hunks overlap), applies cleanly (in-memory
 * cherry-pick), prerequisites (a tagged candidate's files replayed onto
 * the branch with and without an untagged dependency, git_merge_file()
 * on blobs held in memory), keeps the build working (subject component,
 * toolchain words, build files) and the blame-based Fixes: suggestion.
 * The hunks for depends-on are diffed on opts->jobs threads, each with
 * its own repository handle, and merged in commit order.  Object ids are
 * kept in a small open-addressing map of its own; libgit2 objects are
 * looked up again when needed rather than held.  It neither prints nor
 * scores with a model.
 */
#include "scoring/stable/stable.h"
#include "scoring/stable/stable_int.h"

#include "scoring/util/fnv.h"
#include "scoring/patch/treediff.h"

#include <ctype.h>
#include <git2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the whole analysis ----------------------------------------------- */

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
		return peel_commit(to, repo, range);
	if (dots[2] == '.')
		return pt_error_set(PT_EINVAL, "range '%s': use A..B, not "
				    "A...B", range);
	a = pt_strndup(range, (size_t)(dots - range));
	if (!a)
		return PT_ENOMEM;
	rc = peel_commit(from, repo, *a ? a : "HEAD");
	free(a);
	if (rc)
		return rc;
	*has_from = 1;
	return peel_commit(to, repo, dots[2] ? dots + 2 : "HEAD");
}

static int analyse(struct stable_set *s, const struct stable_opts *o)
{
	struct stable_priv *p = s->priv;
	git_oid from;
	int has_from, rc;
	size_t i;

	rc = parse_range(&from, &has_from, &p->head, p->repo, o->range);
	if (!rc)
		rc = peel_commit(&p->tip, p->repo, o->branch);
	if (rc)
		return rc;
	if (git_merge_base(&p->base, p->repo, &p->tip, &p->head))
		return git_fail("no merge base of the branch and", o->range);
	git_oid_tostr(s->tip, sizeof(s->tip), &p->tip);
	git_oid_tostr(s->base, sizeof(s->base), &p->base);
	rc = walk(p->repo, &p->tip, &p->base, branch_cb, s);
	if (!rc)
		rc = walk(p->repo, &p->head, &p->base, put_cb, &p->after_base);
	if (!rc)
		rc = walk(p->repo, &p->head, has_from ? &from : NULL,
			  range_cb, s);
	if (!rc)
		rc = branch_patchids(p);
	s->nmarkers = p->upstream.len;
	for (i = 0; i < s->n && !rc; i++)
		rc = match_commit(s, i);
	if (!rc)
		rc = base_history(s);
	for (i = 0; i < s->n && !rc; i++)
		rc = check_targets(s, i);
	for (i = 0; i < s->n && !rc; i++)
		rc = check_cites(s, i);
	if (!rc)
		rc = find_series(s);
	if (!rc && !o->no_deps)
		rc = stable_deps(s, NULL);
	for (i = 0; i < s->n && !rc && o->check_apply; i++)
		if (stable_is_candidate(s, i))
			rc = stable_check_apply(s, i);
	return rc;
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
		free_targets(&s->c[i]);
		free(s->c[i].deps);
	}
	free(s->c);
	if (s->priv) {
		oidmap_free(&s->priv->range);
		oidmap_free(&s->priv->after_base);
		oidmap_free(&s->priv->only);
		oidmap_free(&s->priv->upstream);
		oidmap_free(&s->priv->patchids);
		oidmap_free(&s->priv->memo);
		oidmap_free(&s->priv->queued);
		oidmap_free(&s->priv->sigs);
		oidmap_free(&s->priv->anc);
		for (i = 0; s->priv->rch && i < s->n; i++)
			changes_clear(&s->priv->rch[i]);
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

/* ---- suggested Fixes: ------------------------------------------------- */

struct votes {
	git_oid *id;
	size_t *count;
	size_t n, cap;
	size_t lines;
};

static int vote(struct votes *v, const git_oid *id)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (!git_oid_cmp(&v->id[i], id)) {
			v->count[i]++;
			return 0;
		}
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		git_oid *ni = pt_reallocarray(v->id, cap, sizeof(*ni));
		size_t *nc;

		if (!ni)
			return PT_ENOMEM;
		v->id = ni;
		nc = pt_reallocarray(v->count, cap, sizeof(*nc));
		if (!nc)
			return PT_ENOMEM;
		v->count = nc;
		v->cap = cap;
	}
	git_oid_cpy(&v->id[v->n], id);
	v->count[v->n++] = 1;
	return 0;
}

/* Old-side line numbers of a hunk's removed lines (context if none). */
static size_t hunk_lines(unsigned long *out, size_t max,
			 const struct patch_hunk *h)
{
	size_t i, n = 0;
	unsigned long ln = h->old_start;
	char want = h->removed ? '-' : ' ';

	for (i = 0; i < h->nlines && n < max; i++) {
		char k = h->lines[i].kind;

		if (k == want)
			out[n++] = ln;
		if (k == '-' || k == ' ')
			ln++;
	}
	return n;
}

static int blame_hunk(struct votes *v, git_repository *repo,
		      const char *path, const git_oid *rev,
		      const struct patch_hunk *h)
{
	git_blame_options o;
	git_blame *bl = NULL;
	unsigned long lines[256];
	size_t n, i;
	int rc = 0;

	git_blame_options_init(&o, GIT_BLAME_OPTIONS_VERSION);

	n = hunk_lines(lines, sizeof(lines) / sizeof(lines[0]), h);
	if (!n || v->lines >= STABLE_BLAME_LINES)
		return 0;
	git_oid_cpy(&o.newest_commit, rev);
	o.min_line = lines[0];
	o.max_line = lines[n - 1];
	if (git_blame_file(&bl, repo, path, &o))
		return 0; /* path or lines not at rev: nothing to learn */
	for (i = 0; i < n && !rc; i++) {
		const git_blame_hunk *bh =
			git_blame_get_hunk_byline(bl, (size_t)lines[i]);

		if (!bh || git_oid_is_zero(&bh->final_commit_id))
			continue;
		v->lines++;
		rc = vote(v, &bh->final_commit_id);
	}
	git_blame_free(bl);
	return rc;
}

static int format_fixes(char **out, git_repository *repo, const git_oid *id)
{
	git_commit *c = NULL;
	struct buf b = BUF_INIT;
	char hex[13];
	int rc;

	if (git_commit_lookup(&c, repo, id))
		return git_fail("cannot read commit", git_oid_tostr_s(id));
	git_oid_tostr(hex, sizeof(hex), id);
	rc = buf_addf(&b, "Fixes: %s (\"%s\")", hex,
		      git_commit_summary(c) ? git_commit_summary(c) : "");
	git_commit_free(c);
	if (rc) {
		buf_free(&b);
		return rc;
	}
	*out = buf_detach(&b, NULL);
	return 0;
}

int stable_suggest_fixes(char **out, struct git_repository *repo,
			 const struct patch *p, const char *rev)
{
	struct votes v;
	git_commit *c = NULL;
	git_tree *tree = NULL;
	git_oid at;
	size_t f, h, best = 0, files = 0;
	int rc;

	*out = NULL;
	memset(&v, 0, sizeof(v));
	rc = peel_commit(&at, repo, rev ? rev : "HEAD");
	if (!rc && (git_commit_lookup(&c, repo, &at) ||
		    git_commit_tree(&tree, c)))
		rc = git_fail("cannot read the tree of", rev ? rev : "HEAD");
	for (f = 0; f < p->nfiles && !rc && files < STABLE_BLAME_FILES; f++) {
		const struct patch_file *pf = &p->files[f];
		git_tree_entry *te = NULL;

		if (!pf->old_path || pf->binary ||
		    pf->status == PATCH_FILE_ADDED)
			continue;
		/* libgit2 1.5's blame leaks a commit on a missing path */
		if (git_tree_entry_bypath(&te, tree, pf->old_path))
			continue;
		git_tree_entry_free(te);
		files++;
		for (h = 0; h < pf->nhunks && !rc; h++)
			rc = blame_hunk(&v, repo, pf->old_path, &at,
					&pf->hunks[h]);
	}
	if (rc)
		goto out;
	if (!v.n) {
		rc = pt_error_set(PT_ENOTFOUND, "no line of '%s' could be "
				  "blamed at '%s'", p->subject.raw ?
				  p->subject.raw : "the patch",
				  rev ? rev : "HEAD");
		goto out;
	}
	for (h = 1; h < v.n; h++)
		if (v.count[h] > v.count[best])
			best = h;
	rc = format_fixes(out, repo, &v.id[best]);
out:
	git_tree_free(tree);
	git_commit_free(c);
	free(v.id);
	free(v.count);
	return rc;
}
