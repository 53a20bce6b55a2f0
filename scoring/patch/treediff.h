/*
 * treediff.h - the paths two git trees differ in, fast.  libgit2's
 * git_diff_tree_to_tree() visits every entry of both trees (about 4 ms a
 * commit on DPDK's 10,000-file tree); comparing the trees here skips every
 * subtree whose id is unchanged and never loads a blob (about 0.1 ms).
 * treediff_diff() hands the paths found to libgit2 as an exact path list
 * (GIT_DIFF_DISABLE_PATHSPEC_MATCH), which its tree iterators use to skip
 * the rest, so it is a drop-in for git_diff_tree_to_tree() with the same
 * result.  It owns no state.
 */
#ifndef PT_TREEDIFF_H
#define PT_TREEDIFF_H

#include <stddef.h>

#include <git2.h>

#include "scoring/util/pt.h"

/* One changed path: a file, a symlink or a submodule. */
struct treediff_file {
	char *path;		     /* "dir/file", '/'-separated */
	git_oid old, new;	     /* zero when absent on that side */
	unsigned old_mode, new_mode; /* git file modes; 0 when absent */
};

struct treediff {
	struct treediff_file *f; /* sorted by path (strcmp) */
	size_t n, cap;
};

/*
 * The paths old and new differ in (either may be NULL: the empty tree).
 * A file replaced by a directory gives the file's path and the paths
 * under the directory.  At most PT_MAX_FILES paths are kept.
 */
int treediff_trees(struct treediff *out, git_repository *repo,
		   const git_tree *old, const git_tree *new);
/* A commit against its first parent (the empty tree for a root). */
int treediff_commit(struct treediff *out, git_repository *repo,
		    const git_commit *c);
void treediff_clear(struct treediff *d);

/*
 * git_diff_tree_to_tree() limited to the changed paths.  opts may be
 * NULL; when it already has a pathspec it is used as given.
 */
int treediff_diff(git_diff **out, git_repository *repo, git_tree *old,
		  git_tree *new, const git_diff_options *opts);

#endif
