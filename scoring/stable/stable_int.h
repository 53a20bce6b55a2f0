/*
 * stable_int.h - what the files of scoring/stable share and nothing else
 * does: the limits, the oid map, the private state behind struct
 * stable_set (stable_priv) and the helpers one file defines for
 * another.  Included only by scoring/stable's own .c files; the API is
 * stable.h.
 */
#ifndef PT_STABLE_INT_H
#define PT_STABLE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <git2.h>

#include "scoring/stable/stable.h"
#include "scoring/patch/treediff.h"

#define STABLE_MAX_COMMITS 10000000u /* range or branch commits */
#define STABLE_MAX_TARGETS 32u	     /* Fixes:/revert ids per commit */
#define STABLE_DEP_WINDOW 256u	     /* earlier commits compared per file */
#define STABLE_BLAME_FILES 32u	     /* files blamed per suggestion */
#define STABLE_BLAME_LINES 2000u     /* lines blamed per suggestion */

struct oment {
	git_oid id;
	size_t val;
	int used;
};

struct oidmap {
	struct oment *slot;
	size_t cap, len;
};

struct bcommit {
	git_oid id;
	enum stable_match kind; /* marker kind, NONE when it has none */
};

struct skey {
	uint64_t author, committer; /* FNV-1a of the lowercased emails */
	int64_t when;		    /* commit time */
	size_t idx;
};

struct changes {
	struct treediff_file *f; /* sorted by path */
	size_t n;
	uint64_t sig; /* FNV-1a of the paths */
};

struct stable_priv {
	git_repository *repo;
	git_oid tip, base, head;
	struct oidmap range;	  /* range commit -> index in c[] */
	struct oidmap after_base; /* commits of head not reachable from base */
	struct oidmap only;	  /* branch commits not reachable from base */
	struct oidmap upstream;	  /* id named by a marker -> index in b[] */
	struct oidmap patchids;	  /* patch-id of an unmarked b[] -> index */
	struct oidmap memo;	  /* target -> 1 present, 2 absent */
	struct oidmap queued;	  /* target -> 1 queued for stable, 2 not */
	struct oidmap sigs;	  /* path signature of an unmarked b[] */
	struct oidmap anc;	  /* base's history back to the oldest target */
	struct changes *rch;	  /* files changed by each range commit */
	struct skey *sk;	  /* who wrote and applied each, for series */
	size_t jobs;		  /* threads for collect_all, >= 1 */
	struct bcommit *b;
	size_t nb, bcap;
	size_t ccap; /* allocated s->c */
};

typedef int (*blob_line_cb)(const git_diff_delta *d, const git_diff_hunk *h,
			    const git_diff_line *l, void *ctx);
typedef int (*blob_hunk_cb)(const git_diff_delta *d, const git_diff_hunk *h,
			    void *ctx);

typedef int (*walk_cb)(git_commit *c, void *ctx);

/* repo.c: the oid map, libgit2 helpers, changed files, walks */
struct oment *stable_oidmap_get(const struct oidmap *m, const git_oid *id);
int stable_oidmap_put(struct oidmap *m, const git_oid *id, size_t val);
void stable_oidmap_free(struct oidmap *m);
int stable_git_fail(const char *what, const char *input);
int stable_resolve_commit(git_oid *out, git_repository *repo, const char *hex);
int stable_peel_commit(git_oid *out, git_repository *repo, const char *rev);
void stable_changes_clear(struct changes *ch);
int stable_commit_changes(struct changes *ch, git_repository *repo,
			  const git_commit *c);
int stable_lookup_changes(struct changes *ch, git_repository *repo,
			  const git_oid *id);
int stable_diff_file(git_repository *repo, const struct treediff_file *f,
		     blob_hunk_cb hunk, blob_line_cb line, void *ctx);
int stable_changes_patchid(git_oid *out, git_repository *repo,
			   const struct changes *ch);
int stable_walk(git_repository *repo, const git_oid *push, const git_oid *hide,
		walk_cb cb, void *ctx);

/* message.c: tags, fix wording and build facts of a message */
int stable_says_fix(const char *sum);
void stable_build_facts(struct stable_commit *sc, const struct treediff_file *f,
			size_t n);
int stable_read_tags(struct stable_commit *sc, git_repository *repo,
		     const char *msg);

/* range.c: the branch, the range, already in it, series */
int stable_put_cb(git_commit *c, void *ctx);
int stable_branch_cb(git_commit *c, void *ctx);
int stable_range_cb(git_commit *c, void *ctx);
int stable_maybe_patchid(git_oid *out, struct stable_priv *p,
			 const struct changes *ch);
int stable_match_commit(struct stable_set *s, size_t i);
int stable_branch_patchids(struct stable_priv *p,
			   const struct pt_progress *progress);
int stable_is_tagged_cand(const struct stable_set *s, size_t i);
int stable_find_series(struct stable_set *s);

/* targets.c: applies to */
int stable_base_history(struct stable_set *s);
int stable_check_targets(struct stable_set *s, size_t i);
int stable_check_cites(struct stable_set *s, size_t i);
void stable_free_targets(struct stable_commit *sc);

/* deps.c: depends on */
int stable_add_dep(struct stable_commit *sc, size_t dep);

#endif
