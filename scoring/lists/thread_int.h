/*
 * thread_int.h - private to the threading module: included only by
 * scoring/lists/thread.c, thread_sql.c, thread_text.c, thread_review.c
 * and thread_feat.c, never by another module (they use thread.h).  It
 * holds struct thread, the ids of its statements, the helpers that run
 * them (thread_sql.c) and the steps one file of the module hands to
 * another.
 */
#ifndef PT_THREAD_INT_H
#define PT_THREAD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/lists/thread.h"
#include "scoring/store/db.h"
#include "scoring/util/pt.h"
#include "scoring/util/strmap.h"

/* ---- statements (thread_sql.c) ------------------------------------- */

enum thread_sql {
	SQL_INSERT_MESSAGE,
	SQL_INSERT_REF,
	SQL_LINK_MESSAGE,
	SQL_SERIES_GET,
	SQL_SUBJECT_COVER,
	SQL_SUBJECT_PATCH,
	SQL_SERIES_COUNT,
	SQL_VERSION_INSERT,
	SQL_VERSION_OF_MSG,
	SQL_VERSION_BY_SUBJECT,
	SQL_VERSION_PATCHES,
	SQL_VERSION_EXISTING,
	SQL_INSERT_PATCH,
	SQL_TARGET_OF,
	SQL_INSERT_REVIEW,
	SQL_INSERT_REPLY,
	SQL_LOAD_REFS,
	SQL_RELINK_REPLY, /* these three in this order: relink_reply() */
	SQL_RELINK_REVIEWS,
	SQL_RELINK_MESSAGE,
	SQL_ORPHANS,
	SQL_FIND_PATCH,
	SQL_FEAT_PATCH,
	SQL_FEAT_REPLIES,
	SQL_FEAT_ARCHS,
	SQL_FEAT_REVIEWS,
	SQL_FEAT_VERSIONS,
	SQL_COUNT
};

struct thread {
	struct db *db;
	struct strmap lex;	     /* word -> score * 1000 */
	sqlite3_stmt *st[SQL_COUNT]; /* prepared on first use */
};

/*
 * Bind the arguments from parameter first on, one per letter of fmt:
 * s = const char * (NULL binds NULL), i = int64_t, n = int64_t bound as
 * NULL when 0 (an id that is not there), d = double.
 */
void thread_stmt_bind(sqlite3_stmt *st, int first, const char *fmt, ...);
/* Ready for the next use; what it bound goes with it. */
void thread_stmt_end(sqlite3_stmt *st);
/*
 * Statement id with fmt's arguments bound; the caller steps it and ends
 * it with thread_stmt_end().
 */
int thread_stmt_start(sqlite3_stmt **out, struct thread *t, enum thread_sql id,
		      const char *fmt, ...);
/* Step a started statement once (a row or the end is fine) and end it. */
int thread_stmt_run(struct thread *t, sqlite3_stmt *st, const char *what);
/* Run statement id with fmt's arguments; no result wanted. */
int thread_stmt_exec(struct thread *t, enum thread_sql id, const char *what,
		     const char *fmt, ...);
/* Run statement id for the integer in its first row (0 when no row). */
int thread_stmt_i64(struct thread *t, int64_t *out, enum thread_sql id,
		    const char *what, const char *fmt, ...);
/*
 * The text of column 0 of every row of a started statement, which it
 * ends; *out is a malloc'd array of n malloc'd strings.
 */
int thread_stmt_strings(struct thread *t, sqlite3_stmt *st, char ***out,
			size_t *n, const char *what);
void thread_strings_free(char **v, size_t n);

/* ---- the series side (thread.c) ------------------------------------ */

int thread_set_message_link(struct thread *t, const char *msgid, int64_t series,
			    int64_t patch);

/* ---- replies (thread_review.c) ------------------------------------- */

int thread_add_reply(struct thread *t, const struct patch *p,
		     struct thread_result *res);
/*
 * Replies stored before msgid (a patch or cover) arrived: orphans, and
 * replies held by the cover letter until the patch they answer came.
 */
int thread_adopt_orphans(struct thread *t, const char *msgid, size_t *done);

#endif
