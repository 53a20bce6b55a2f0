/*
 * gitlimits.h - libgit2's process-wide memory limits for a job that reads
 * a whole object database: by default libgit2 maps packs in 1 GiB windows
 * up to 8 GiB and caches 256 MiB of objects, and every page touched stays
 * resident.  A job bounds them and puts the old values back after.
 */
#ifndef PT_GITLIMITS_H
#define PT_GITLIMITS_H

#include <stddef.h>
#include <sys/types.h>

struct pt_git_limits {
	ssize_t cache_max;
	size_t window, mapped;
};

/* Set the object cache and pack window limits; the old ones into *OLD. */
void pt_git_limits_set(struct pt_git_limits *old, ssize_t cache_max,
		       size_t window, size_t mapped);
/* Put back what pt_git_limits_set() saved. */
void pt_git_limits_put(const struct pt_git_limits *old);

#endif
