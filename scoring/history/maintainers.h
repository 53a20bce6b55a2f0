/*
 * maintainers.h - the kernel's MAINTAINERS format (also DPDK's): sections
 * of M: R: L: S: F: X: N: K: (and any other X:) lines after a name line,
 * and the mapping from a file to the sections that cover it, following
 * scripts/get_maintainer.pl: F:/X: globs anchored at the start of the
 * path, a trailing '/' covering the whole tree, a pattern without one
 * matching only paths with the same number of '/' (so "dir/ *" without the blank is one
 * level), a pattern naming a directory getting its '/' added, X:
 * excluding the whole section, N: an extended regex on the path.
 */
#ifndef PT_MAINTAINERS_H
#define PT_MAINTAINERS_H

#include <regex.h>
#include <stddef.h>

#include "scoring/util/pt.h"

struct maint_pat {
	char *glob;    /* as written, '/' appended for a directory */
	size_t lit;    /* bytes before the first '*' or '?' */
	int depth;     /* get_maintainer.pl's $value_pd */
	int seq;       /* entry index in its section */
	int maybe_dir; /* no '/', '.', '*', '?' and no isdir answer:
			       a path under glob/ proves it a directory */
};

struct maint_section {
	char *name;    /* the line before the entries, or "" */
	char **people; /* M: and R: emails, lowercased */
	size_t npeople;
	unsigned char *is_reviewer; /* per person: 1 for R:, 0 for M: */
	char **lists;		    /* L: */
	size_t nlists;
	char *status; /* S:, or NULL */
	struct maint_pat *f, *x;
	size_t nf, nx;
	regex_t *n; /* N: (those that compile, bounded) */
	int *nseq;  /* entry index of each N: */
	size_t nn;
	int nentries;	 /* entry lines seen */
	char **keywords; /* K: as written */
	size_t nk;
};

struct maint {
	struct maint_section *s;
	size_t n;
};

/* Is PATH (no trailing '/') a directory in the tree?  1 yes, 0 no. */
typedef int (*maint_isdir_fn)(const char *path, void *ctx);

/*
 * Parse a MAINTAINERS text.  ISDIR (may be NULL) stands in for
 * get_maintainer.pl's `-d` test on F:/X: patterns without glob
 * characters or dots.  Without it such a pattern P covers the files under
 * P/ (which prove P a directory) and otherwise follows the rule for
 * files; the one difference from the script is then a root-level file
 * "Pxxx" next to a directory P, which the script would not match.
 */
int maint_parse(struct maint **out, const char *text, size_t len,
		maint_isdir_fn isdir, void *ctx);
void maint_free(struct maint *m);

/* get_maintainer.pl's file_match_pattern(). */
int maint_pattern_match(const char *file, const char *glob);

struct maint_hit {
	size_t section;
	int depth;
};

/*
 * The sections that cover PATH, deepest pattern first (ties in file
 * order), at most MAX of them in OUT; *n gets the number stored.
 */
void maint_match(const struct maint *m, const char *path, struct maint_hit *out,
		 size_t max, size_t *n);

/* EMAIL (lowercase) is an M: or R: of section I. */
int maint_has_person(const struct maint *m, size_t i, const char *email);

#endif
