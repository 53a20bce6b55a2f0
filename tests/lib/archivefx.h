/*
 * archivefx.h - the fixture of the list archive tests (test_archive.c,
 * test_archive_mbox.c): the story they import (a series posted as v1,
 * v2 and v3 with reviews, a b4-style "Applied, thanks!" on v3, a patch
 * applied by a bare "Applied to ...", a later Fixes: posting, a revert,
 * a comment-only fix, a message with no Message-ID), the same as a
 * public-inbox of two epochs built with libgit2, a temporary directory
 * and an in-memory database per test, the queries the tests ask and what
 * the story must give however it was read.
 */
#ifndef PT_ARCHIVEFX_H
#define PT_ARCHIVEFX_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "scoring/lists/archive.h"
#include "scoring/store/db.h"

#define T0 1704103200 /* 2024-01-01 10:00 UTC */
#define DAY 86400

/* A test's state (cmocka's *state): its directory and database. */
struct fx {
	char dir[64];
	struct db *db;
};

/* The reviewer of the story, as a From: line. */
extern const char *const AFX_BOB;

/* ---- building mail ------------------------------------------------- */

/* A reply or cover letter on day DAY after T0 (irt: In-Reply-To). */
char *afx_text_mail(const char *id, const char *from, int day, const char *subj,
		    const char *irt, const char *body);
/*
 * The whole story, oldest first; NULL entries mark epoch boundaries.
 * Free it with afx_story_free().
 */
char **afx_story(size_t *n);
void afx_story_free(char **m, size_t n);

/* ---- building a public-inbox --------------------------------------- */

/* Commit msg as file NAME on refs/heads/master of the epoch r. */
void afx_pi_commit(git_repository *r, const char *name, const char *msg,
		   size_t len);
/* The story as f->dir/inbox: epochs git/0.git and git/1.git. */
void afx_build_inbox(struct fx *f);
/* Import every epoch of f->dir/inbox into f->db; what it did in res. */
void afx_import_inbox(struct fx *f, struct archive_result *res);

/* ---- queries ------------------------------------------------------- */

/* SQL's first value as an integer, and as a string that must be want. */
int64_t afx_q(struct fx *f, const char *sql);
void afx_assert_q_str(struct fx *f, const char *sql, const char *want);
/* The id in patches of a posting. */
int64_t afx_pid(struct fx *f, const char *msgid);

/* A posting's outcome, and a column of its labels, by Message-ID. */
#define OUTCOME(id)                                                        \
	"SELECT outcome FROM posting_outcomes o JOIN patches p ON p.id = " \
	"o.patch_id WHERE p.message_id = '" id "'"
#define LABEL(col, id)                                                   \
	"SELECT " col " FROM posting_labels l JOIN patches p ON p.id = " \
	"l.patch_id WHERE p.message_id = '" id "'"

/* What the story must give, however it was read. */
void afx_assert_story(struct fx *f);

/* ---- fixtures ------------------------------------------------------ */

/* Each test: a temporary directory and a fresh in-memory database. */
int afx_setup(void **state);
int afx_teardown(void **state);

#endif
