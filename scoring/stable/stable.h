/*
 * stable.h - stable backport candidates (`patchtriage stable`, AUTOSEL
 * style).  stable.c owns the facts about the commits of a main-line range
 * A..B relative to a stable branch: which of them the branch already has
 * (its own ancestry, the "(cherry picked from commit X)", "[ Upstream
 * commit X ]", "commit X upstream." and "Upstream commit X" lines of the
 * branch's commits since its merge base with B, or an equal patch-id),
 * whether they are tagged (Cc: stable, Fixes:), whether the code they fix
 * is in the branch (applies-to: the Fixes:/revert target is reachable from
 * the branch tip or was itself backported, or is a commit on its way
 * there; a fix for code the branch never had is dropped), which
 * earlier commits of the range touch the same lines (depends-on, by
 * overlap of zero-context hunks), whether a cherry-pick onto the branch
 * tip is clean (libgit2 in-memory merge, no work tree or index touched),
 * which untagged commits a tagged one needs to apply (prerequisites, by
 * in-memory three-way file merges) and whether a commit keeps the build
 * working (its subject and paths).  It
 * also suggests the Fixes: line for a posted fix by blaming the lines it
 * removes.  It does not score: the caller ranks with the fix model
 * (model.h).
 */
#ifndef PT_STABLE_H
#define PT_STABLE_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/patch/patch.h"
#include "scoring/util/progress.h"
#include "scoring/util/pt.h"

struct git_repository;

/* How a commit of the range was found in the stable branch. */
enum stable_match {
	STABLE_MATCH_NONE = 0,
	STABLE_MATCH_ANCESTOR,	/* the commit itself is in the branch */
	STABLE_MATCH_CHERRY,	/* (cherry picked from commit X) */
	STABLE_MATCH_UPSTREAM,	/* [ Upstream commit X ] / Upstream commit X */
	STABLE_MATCH_COMMIT_UP, /* commit X upstream. */
	STABLE_MATCH_PATCHID,	/* same patch-id, no marker line */
};

/* What its Fixes: (or "This reverts commit X.") targets say. */
enum stable_target {
	STABLE_TARGET_NONE = 0, /* no Fixes:, not a revert */
	STABLE_TARGET_PRESENT,	/* a target is in the branch (or backported) */
	STABLE_TARGET_ABSENT,	/* every target resolved, none in the branch:
				     the fix is dropped */
	STABLE_TARGET_UNKNOWN,	/* no target resolves to a commit */
	STABLE_TARGET_PENDING,	/* not in the branch, but a target is itself
				     a candidate of the range that is tagged
				     or keeps the build working (kept, and
				     listed in deps) or a tagged main-line
				     commit before the range that the branch
				     lacks (kept, needs) */
};

enum stable_apply {
	STABLE_APPLY_UNCHECKED = 0,
	STABLE_APPLY_CLEAN,
	STABLE_APPLY_CONFLICT,
};

struct stable_commit {
	char id[41];
	char *subject; /* git's summary */
	char *author;  /* "Name <email>" */
	int64_t commit_date;
	unsigned cc_stable : 1;	    /* Cc: stable@<any domain> */
	unsigned has_fixes : 1;	    /* at least one Fixes: */
	unsigned is_revert : 1;	    /* "This reverts commit X" */
	unsigned dropped : 1;	    /* target == STABLE_TARGET_ABSENT */
	unsigned fix_subject : 1;   /* the summary has the word fix, fixes,
				     fixed or fixing */
	unsigned has_sibling : 1;   /* sibling is set */
	unsigned cites_present : 1; /* cites names a commit the branch has */
	/* keeps the build working (stable_build ranks ci and words) */
	unsigned build_ci : 1;	  /* the subject's component is CI or
				     packaging (ci, debian, suse, ...) */
	unsigned build_comp : 1;  /* ... or the build system or its tools
				     (build, config, devtools, ...) */
	unsigned build_words : 1; /* the summary names the toolchain
				     (compile, warning, gcc, C++20, ...) */
	unsigned build_files : 1; /* every path it changes is a build, CI
				     or packaging file (MAINTAINERS aside) */
	unsigned prereq : 1;	  /* prereq_of is set (stable_prereqs) */
	size_t prereq_of;	  /* a tagged candidate that conflicts on
				     the branch without this commit and
				     does not with it, the first */
	size_t sibling;		  /* a tagged candidate of the same series
				     (same author and committer, committed
				     within STABLE_SERIES_GAP seconds of the
				     next), the nearest one */
	size_t series_len;	  /* commits of the range in its series */
	char cites[41];		  /* the first commit id the changelog names
				     outside Fixes:, revert and upstream
				     marker lines that resolves, or "" */
	unsigned nfiles;
	unsigned added, removed; /* set by stable_deps() for the commits it
				     diffed, else 0 */
	enum stable_match match;
	char backport[41]; /* the branch commit that has it, or "" */
	char needs[41];	   /* PENDING on a commit before the range:
				     that target, which must go first */
	enum stable_target target;
	char **targets; /* resolved 40-hex targets (ntargets) */
	size_t ntargets;
	enum stable_apply apply;
	size_t *deps; /* indices of earlier commits (candidates:
				     not in the branch, not dropped) that
				     touch the same lines or that it fixes
				     (STABLE_TARGET_PENDING) */
	size_t ndeps;
};

struct stable_opts {
	const char *range;  /* "A..B", or "B" for all of B's history */
	const char *branch; /* the stable branch (any revision) */
	int check_apply;    /* cherry-pick every candidate (slow on big
				     ranges; see stable_check_apply) */
	int no_deps;	    /* skip the hunk overlap pass */
	size_t jobs;	    /* threads diffing for stable_deps (0: 1),
				     each with its own repository handle */
	/* told of each commit of each pass */
	struct pt_progress progress;
};

struct stable_set {
	struct stable_commit *c; /* the range's non-merge commits, oldest
				     first */
	size_t n;
	char tip[41];	       /* branch tip */
	char base[41];	       /* merge base of the tip and B */
	size_t branch_commits; /* non-merge commits tip..base scanned */
	size_t branch_marked;  /* of those, with an upstream marker line */
	size_t nmarkers;       /* distinct upstream ids named */
	struct stable_priv *priv;
};

/*
 * Analyse the range of opts in repo.  A candidate is a commit with
 * match == NONE and !dropped.  *out is NULL on failure.
 */
int stable_analyse(struct stable_set **out, struct git_repository *repo,
		   const struct stable_opts *opts);
void stable_set_free(struct stable_set *s);

/*
 * Fill deps (and added/removed) of the candidates with select[i] set
 * (NULL: all): hunks of those and of the STABLE_DEP_WINDOW candidates
 * before each on every path it touches are diffed with no context.
 * stable_analyse() does this for all unless opts->no_deps.
 */
int stable_deps(struct stable_set *s, const unsigned char *select);

/* Cherry-pick s->c[i] onto the branch tip in memory and set its apply. */
int stable_check_apply(struct stable_set *s, size_t i);

/* Is commit i a candidate (not in the branch, not dropped)? */
int stable_is_candidate(const struct stable_set *s, size_t i);

/*
 * How much the tags alone say a commit belongs in the branch, the first
 * key of the ranking (p(fix) is the second): 3 Cc: stable (the author
 * asks), 2 a Fixes: whose target the branch has or that fixes a tagged
 * candidate (STABLE_TARGET_PRESENT or PENDING: a bug the branch
 * carries), 1 any other Fixes:, 0 untagged.  On DPDK's LTS windows the
 * tiers' precision falls in that order (docs/EVALUATION.md).
 */
int stable_tier(const struct stable_commit *c);

/*
 * Series: commits of the range by the same author, applied by the same
 * committer, each committed within this many seconds of the one before
 * (git am applies a series in seconds; a maintainer's next series comes
 * minutes later).
 */
#define STABLE_SERIES_GAP 300

/*
 * Does an untagged candidate say it is a fix (fix_subject) or name a
 * commit the branch has (cites_present)?  The second key of the
 * ranking: such a commit is listed right after the tagged ones, before
 * the other untagged commits.  0 for a tagged commit.  Of the
 * untagged-backport signals measured (docs/EVALUATION.md: fix wording,
 * a named commit, series siblings of a tagged candidate, reverts)
 * these two found backports without burying the tagged ones under
 * commits the branches did not take; series siblings did.
 */
int stable_hint(const struct stable_commit *c);

/*
 * Does an untagged candidate keep the build working: a CI or packaging
 * component in its subject (ci:, .github, buildlib, debian, redhat,
 * suse, ...: build_ci) or toolchain words in it (compile, warning, gcc,
 * clang, musl, C++20, compatible: build_words)?  Stable branches carry
 * their CI and packaging and must keep building with new toolchains, so
 * they take such changes untagged.  0 for a tagged commit.  build_comp
 * and build_files are shown only (docs/EVALUATION.md has the numbers).
 */
int stable_build(const struct stable_commit *c);

/*
 * Prerequisites: for each tagged candidate with select[i] set (NULL:
 * all) and depends-on (stable_deps() must have run for it), replay its
 * changed files onto the branch tip in memory, after its dependencies
 * in commit order, with git's three-way file merge.  An untagged
 * dependency without which the tagged candidate conflicts, and with
 * which it does not, gets prereq and prereq_of.  Nothing is written to
 * the repository.
 */
int stable_prereqs(struct stable_set *s, const unsigned char *select);

/* Short names for the enums ("cherry-pick", "absent", ...). */
const char *stable_match_name(enum stable_match m);
const char *stable_target_name(enum stable_target t);
const char *stable_apply_name(enum stable_apply a);

/*
 * The upstream id a stable commit message names, if any: *kind gets the
 * marker kind (CHERRY, UPSTREAM or COMMIT_UP) and hex[] the id as written
 * (7..40 hex digits, NUL-terminated).  Returns 1 when found, 0 if not.
 */
int stable_find_marker(char hex[41], enum stable_match *kind, const char *msg,
		       size_t len);

/*
 * For a posted patch that looks like a fix but has neither Fixes: nor Cc:
 * stable: blame, at rev (NULL = HEAD) in repo, the lines its hunks remove
 * (the context lines of a hunk that removes none) and name the commit
 * that last touched most of them: *out = "Fixes: <12 hex> (\"subject\")"
 * (malloc'd).  PT_ENOTFOUND when no line could be blamed.
 */
int stable_suggest_fixes(char **out, struct git_repository *repo,
			 const struct patch *p, const char *rev);

#endif
