/*
 * suggest.c - the Fixes: line suggested for a posted fix: blame the
 * lines its hunks remove (the context of a hunk that removes none) and
 * name the commit that last touched most of them.
 */
#include "scoring/stable/stable_int.h"

#include <stdlib.h>
#include <string.h>

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

static int blame_hunk(struct votes *v, git_repository *repo, const char *path,
		      const git_oid *rev, const struct patch_hunk *h)
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
		return stable_git_fail("cannot read commit",
				       git_oid_tostr_s(id));
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
	rc = stable_peel_commit(&at, repo, rev ? rev : "HEAD");
	if (!rc &&
	    (git_commit_lookup(&c, repo, &at) || git_commit_tree(&tree, c)))
		rc = stable_git_fail("cannot read the tree of",
				     rev ? rev : "HEAD");
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
		rc = pt_error_set(PT_ENOTFOUND,
				  "no line of '%s' could be "
				  "blamed at '%s'",
				  p->subject.raw ? p->subject.raw : "the patch",
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
