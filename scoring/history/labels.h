/*
 * labels.h - fix and bug-introducing labels over the mined history: the
 * references from fixing commits (Fixes: trailers, "This reverts commit
 * <sha>.") resolved to mined commits, the trivial-fix rules of
 * conf/labels.conf, the label horizon, and the report of what could not
 * be resolved.  Tables: fix_refs and labels (see history.h).
 */
#ifndef PT_LABELS_H
#define PT_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/util/pt.h"

struct git_repository;

enum labels_rule {
	LABELS_NOCODE = 0, /* docs, comments or whitespace only */
	LABELS_SPELLING,   /* spelling, typo, kernel-doc, checkpatch */
	LABELS_RACE,	   /* a theoretical race, no crash/hang/leak */
	LABELS_NRULES,
};

/* The rule's name as stored in fix_refs.trivial. */
const char *labels_rule_name(enum labels_rule r);

struct labels_conf;

/*
 * Load the trivial-fix word lists from PATH (git-config syntax, see
 * conf/labels.conf); NULL gives the built-in lists, which are the same
 * as the shipped conf/labels.conf.
 */
int labels_conf_load(struct labels_conf **out, const char *path);
void labels_conf_free(struct labels_conf *c);
/* 1 when both configurations hold the same lists. */
int labels_conf_equal(const struct labels_conf *a, const struct labels_conf *b);

/* PATH is documentation (a doc-dir prefix or a doc-suffix). */
int labels_doc_path(const struct labels_conf *c, const char *path);

/*
 * The word rule (LABELS_SPELLING or LABELS_RACE) that makes a fixing
 * commit with this text (subject + changelog) trivial, or -1.
 */
int labels_word_rule(const struct labels_conf *c, const char *text, size_t len);

/* '#' starts a comment in PATH (scripts, build files; not C). */
int labels_hash_comments(const char *path);

/*
 * A changed line that cannot change behaviour: blank, or a comment line
 * ("/ *", "//", " * text", "* /", or '#' when HASH).  "*p = 0;" is code.
 */
int labels_comment_line(const char *s, size_t n, int hash);

/*
 * H extended by the code of one line: comments, blanks and the text of
 * string literals left out ('#' comments and '...' strings when HASH).
 */
uint64_t labels_code_hash(uint64_t h, const char *s, size_t n, int hash);

/*
 * 1 when commit SHA of REPO changes code against its first parent: a
 * source file (C, assembler, scripts, device trees, makefiles) outside
 * the documentation whose added and removed lines differ in more than
 * comments, string literals and blanks; 0 when not; -1
 * when the diff cannot be read (then the caller cannot tell).
 */
int labels_code_changed(struct git_repository *repo, const char *sha,
			const struct labels_conf *c);

struct labels_counts {
	size_t fixes;	   /* commits labelled fix */
	size_t with_fixes; /* commits with a Fixes: trailer */
	size_t reverts;	   /* commits that revert one */
	size_t refs;	   /* references (Fixes: + reverts) */
	size_t full, prefix, subject, unresolved;
	size_t not_mined; /* resolved to a commit that was not mined */
	size_t trivial[LABELS_NRULES]; /* references dropped per rule */
	size_t trivial_only; /* commits whose every reference was trivial */
	size_t bugs;	     /* commits labelled bug-introducing */
	size_t negatives;    /* bug = 0 and older than the horizon */
};

/*
 * Recompute fix_refs and labels of repository REPO_ID.  Abbreviated ids
 * are resolved with the object database's prefix lookup in REPO; an
 * ambiguous, missing or non-commit id falls back to the quoted subject
 * (the most recent earlier mined commit with exactly that subject).
 */
int labels_compute(struct labels_counts *out, struct db *db,
		   struct git_repository *repo, int64_t repo_id,
		   const struct labels_conf *c, int horizon_days);

/*
 * Append the two summary lines of `mine` to OUT: references per
 * resolution (and those naming a commit that was not mined), and the
 * references each trivial-fix rule dropped.
 */
int labels_summary(struct buf *out, struct db *db, int64_t repo_id);

/*
 * Append the report of `mine --report` to OUT: the summary lines, the
 * unresolved references per class (Coverity, URL, foreign id, other),
 * the labelled commits, and every unresolved reference (fixing commit,
 * the reference as written, why).
 */
int labels_report(struct buf *out, struct db *db, int64_t repo_id);

#endif
