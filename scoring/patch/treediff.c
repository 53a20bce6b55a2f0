/*
 * treediff.c - the changed paths between two trees by comparing them
 * entry by entry and descending only into subtrees whose ids differ, and
 * a git_diff_tree_to_tree() limited to those paths (see treediff.h).
 */
#include "scoring/patch/treediff.h"

#include <stdlib.h>
#include <string.h>

#define TREEDIFF_MAX_DEPTH 256u

struct walk {
	git_repository *repo;
	struct treediff *d;
	struct buf path;
	unsigned depth;
};

static int fail(const char *what, const git_oid *id)
{
	const git_error *e = git_error_last();

	return pt_error_set(PT_ERROR, "%s '%s': %s", what, git_oid_tostr_s(id),
			    e && e->message ? e->message : "libgit2 error");
}

static int add(struct walk *w, const git_tree_entry *a, const git_tree_entry *b)
{
	struct treediff_file *f;
	struct treediff *d = w->d;

	if (d->n >= PT_MAX_FILES)
		return 0; /* enough to know what it touches */
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;

		f = pt_reallocarray(d->f, cap, sizeof(*f));
		if (!f)
			return PT_ENOMEM;
		d->f = f;
		d->cap = cap;
	}
	f = &d->f[d->n];
	memset(f, 0, sizeof(*f));
	f->path = pt_strdup(w->path.ptr);
	if (!f->path)
		return PT_ENOMEM;
	if (a) {
		git_oid_cpy(&f->old, git_tree_entry_id(a));
		f->old_mode = (unsigned)git_tree_entry_filemode(a);
	}
	if (b) {
		git_oid_cpy(&f->new, git_tree_entry_id(b));
		f->new_mode = (unsigned)git_tree_entry_filemode(b);
	}
	d->n++;
	return 0;
}

static int subtree(git_tree **out, git_repository *repo,
		   const git_tree_entry *e)
{
	*out = NULL;
	if (!e || git_tree_entry_type(e) != GIT_OBJECT_TREE)
		return 0;
	if (git_tree_lookup(out, repo, git_tree_entry_id(e)))
		return fail("cannot read tree", git_tree_entry_id(e));
	return 0;
}

static int compare(struct walk *w, const git_tree *a, const git_tree *b);

/* One name on either side (a or b may be NULL). */
static int pair(struct walk *w, const git_tree_entry *a,
		const git_tree_entry *b)
{
	int ta = a && git_tree_entry_type(a) == GIT_OBJECT_TREE;
	int tb = b && git_tree_entry_type(b) == GIT_OBJECT_TREE;
	size_t plen = w->path.len;
	git_tree *x = NULL, *y = NULL;
	int rc;

	if (a && b &&
	    !git_oid_cmp(git_tree_entry_id(a), git_tree_entry_id(b)) &&
	    git_tree_entry_filemode(a) == git_tree_entry_filemode(b))
		return 0;
	rc = buf_addstr(&w->path, git_tree_entry_name(a ? a : b));
	if (rc)
		return rc;
	if (ta || tb) {
		/* a file replaced by a directory or back: the file, then
		   the directory's paths */
		if (a && !ta)
			rc = add(w, a, NULL);
		if (!rc && b && !tb)
			rc = add(w, NULL, b);
		if (!rc)
			rc = subtree(&x, w->repo, a);
		if (!rc)
			rc = subtree(&y, w->repo, b);
		if (!rc)
			rc = buf_addch(&w->path, '/');
		if (!rc && w->depth < TREEDIFF_MAX_DEPTH) {
			w->depth++;
			rc = compare(w, x, y);
			w->depth--;
		}
	} else {
		rc = add(w, a, b);
	}
	git_tree_free(x);
	git_tree_free(y);
	buf_truncate(&w->path, plen);
	return rc;
}

static int compare(struct walk *w, const git_tree *a, const git_tree *b)
{
	size_t i, n;
	int rc = 0;

	n = b ? git_tree_entrycount(b) : 0;
	for (i = 0; i < n && !rc; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(b, i);

		rc = pair(w,
			  a ? git_tree_entry_byname(a, git_tree_entry_name(e))
			    : NULL,
			  e);
	}
	n = a ? git_tree_entrycount(a) : 0;
	for (i = 0; i < n && !rc; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(a, i);

		if (!b || !git_tree_entry_byname(b, git_tree_entry_name(e)))
			rc = pair(w, e, NULL);
	}
	return rc;
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(((const struct treediff_file *)a)->path,
		      ((const struct treediff_file *)b)->path);
}

void treediff_clear(struct treediff *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n; i++)
		free(d->f[i].path);
	free(d->f);
	memset(d, 0, sizeof(*d));
}

int treediff_trees(struct treediff *out, git_repository *repo,
		   const git_tree *old, const git_tree *new)
{
	struct walk w;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	w.repo = repo;
	w.d = out;
	buf_init(&w.path, PT_MAX_LINE_LEN);
	rc = compare(&w, old, new);
	buf_free(&w.path);
	if (rc)
		treediff_clear(out);
	else if (out->n > 1)
		qsort(out->f, out->n, sizeof(*out->f), path_cmp);
	return rc;
}

int treediff_commit(struct treediff *out, git_repository *repo,
		    const git_commit *c)
{
	git_commit *parent = NULL;
	git_tree *old = NULL, *new = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if ((git_commit_parentcount(c) > 0 &&
	     (git_commit_parent(&parent, c, 0) ||
	      git_commit_tree(&old, parent))) ||
	    git_commit_tree(&new, c))
		rc = fail("cannot read the trees of", git_commit_id(c));
	if (!rc)
		rc = treediff_trees(out, repo, old, new);
	git_tree_free(old);
	git_tree_free(new);
	git_commit_free(parent);
	return rc;
}

int treediff_diff(git_diff **out, git_repository *repo, git_tree *old,
		  git_tree *new, const git_diff_options *opts)
{
	git_diff_options o;
	struct treediff d;
	char **paths = NULL;
	size_t i;
	int rc;

	*out = NULL;
	if (opts && opts->pathspec.count)
		return git_diff_tree_to_tree(out, repo, old, new, opts);
	if (opts)
		o = *opts;
	else
		git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	rc = treediff_trees(&d, repo, old, new);
	if (rc)
		return rc;
	paths = pt_calloc(d.n + 1, sizeof(*paths));
	if (!paths) {
		treediff_clear(&d);
		return PT_ENOMEM;
	}
	for (i = 0; i < d.n; i++)
		paths[i] = d.f[i].path;
	o.pathspec.strings = paths;
	o.pathspec.count = d.n;
	o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	/* nothing differs: an empty path list would mean every path */
	if (!d.n)
		old = new = NULL;
	if (git_diff_tree_to_tree(out, repo, old, new, &o))
		rc = d.n ? fail("cannot diff against tree",
				new ? git_tree_id(new) : git_tree_id(old))
			 : pt_error_set(PT_ERROR, "cannot make an empty diff");
	free(paths);
	treediff_clear(&d);
	return rc;
}
