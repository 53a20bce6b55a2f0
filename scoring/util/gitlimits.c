/*
 * gitlimits.c - libgit2's object cache and pack window limits, set for a
 * job and put back after (gitlimits.h).
 */
#include <git2.h>

#include "scoring/util/gitlimits.h"

void pt_git_limits_set(struct pt_git_limits *old, ssize_t cache_max,
		       size_t window, size_t mapped)
{
	ssize_t used = 0;

	git_libgit2_opts(GIT_OPT_GET_CACHED_MEMORY, &used, &old->cache_max);
	git_libgit2_opts(GIT_OPT_GET_MWINDOW_SIZE, &old->window);
	git_libgit2_opts(GIT_OPT_GET_MWINDOW_MAPPED_LIMIT, &old->mapped);
	git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, cache_max);
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, window);
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, mapped);
}

void pt_git_limits_put(const struct pt_git_limits *old)
{
	git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, old->cache_max);
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, old->window);
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, old->mapped);
}
