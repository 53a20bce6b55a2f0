/*
 * thread_feat.c - reading the threading tables back (see thread.h): a
 * patch by Message-ID, and what the replies to a patch and to its cover
 * letter say, summed up as struct thread_features.  Part of thread.c's
 * module (thread_int.h).
 */
#include "scoring/lists/thread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/lists/thread_int.h"
#include "scoring/patch/trailer.h"

/* ---- reading back -------------------------------------------------- */

int thread_find_patch(struct thread *t, const char *message_id,
		      int64_t *patch_id, int64_t *series_id)
{
	sqlite3_stmt *st;
	int rc;

	*patch_id = *series_id = 0;
	rc = thread_stmt_start(&st, t, SQL_FIND_PATCH, "s", message_id);
	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*patch_id = sqlite3_column_int64(st, 0);
		*series_id = sqlite3_column_int64(st, 1);
		rc = 0;
	} else if (rc == SQLITE_DONE) {
		rc = pt_error_set(PT_ENOTFOUND, "no patch '%s'", message_id);
	} else {
		rc = db_error(t->db, "finding patch");
	}
	thread_stmt_end(st);
	return rc;
}

static int feat_replies(struct thread *t, int64_t pid, int64_t sid,
			const char *author, struct thread_features *o)
{
	sqlite3_stmt *st;
	int rc;

	rc = thread_stmt_start(&st, t, SQL_FEAT_REPLIES, "iis", pid, sid,
			       author ? author : "");
	if (rc)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW) {
		o->replies = (unsigned)sqlite3_column_int(st, 0);
		o->reviewers = (unsigned)sqlite3_column_int(st, 1);
		o->inline_comments = (unsigned)sqlite3_column_int(st, 2);
		o->tested_claims = (unsigned)sqlite3_column_int(st, 3);
		o->sentiment = sqlite3_column_double(st, 4);
		o->bot_reports = (unsigned)sqlite3_column_int(st, 5);
		o->bot_failures = (unsigned)sqlite3_column_int(st, 6);
	} else {
		rc = db_error(t->db, "reading replies");
	}
	thread_stmt_end(st);
	return rc;
}

static int feat_archs(struct thread *t, int64_t pid, int64_t sid,
		      struct thread_features *o)
{
	sqlite3_stmt *st;
	size_t used = 0;
	int rc;

	rc = thread_stmt_start(&st, t, SQL_FEAT_ARCHS, "ii", pid, sid);
	if (rc)
		return rc;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *a = (const char *)sqlite3_column_text(st, 0);
		size_t n = strlen(a);

		if (used + n + 2 > sizeof(o->bot_archs))
			break;
		used += (size_t)snprintf(o->bot_archs + used,
					 sizeof(o->bot_archs) - used, "%s%s",
					 used ? " " : "", a);
	}
	thread_stmt_end(st);
	return 0;
}

static int feat_reviews(struct thread *t, int64_t pid, int64_t sid,
			struct thread_features *o)
{
	sqlite3_stmt *st;
	int rc;

	rc = thread_stmt_start(&st, t, SQL_FEAT_REVIEWS, "ii", pid, sid);
	if (rc)
		return rc;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		unsigned n = (unsigned)sqlite3_column_int(st, 1);

		if (!strcmp(k, TRAILER_KEY_REVIEWED))
			o->reviewed_by = n;
		else if (!strcmp(k, TRAILER_KEY_ACKED))
			o->acked_by = n;
		else if (!strcmp(k, TRAILER_KEY_TESTED))
			o->tested_by = n;
		else if (!strcmp(k, TRAILER_KEY_NACKED))
			o->nacked_by = n;
	}
	thread_stmt_end(st);
	return 0;
}

int thread_patch_features(struct thread *t, int64_t patch_id,
			  struct thread_features *o)
{
	sqlite3_stmt *st;
	char *author = NULL;
	int64_t sid = 0, n = 0;
	int rc;

	memset(o, 0, sizeof(*o));
	rc = thread_stmt_start(&st, t, SQL_FEAT_PATCH, "i", patch_id);
	if (rc)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW) {
		sid = sqlite3_column_int64(st, 0);
		o->version = (unsigned)sqlite3_column_int(st, 1);
		if (sqlite3_column_text(st, 2))
			author = pt_strdup(
				(const char *)sqlite3_column_text(st, 2));
	} else {
		rc = pt_error_set(PT_ENOTFOUND, "no patch %lld",
				  (long long)patch_id);
	}
	thread_stmt_end(st);
	if (!rc)
		rc = feat_replies(t, patch_id, sid, author, o);
	if (!rc)
		rc = feat_archs(t, patch_id, sid, o);
	if (!rc)
		rc = feat_reviews(t, patch_id, sid, o);
	if (!rc)
		rc = thread_stmt_i64(t, &n, SQL_FEAT_VERSIONS,
				     "reading versions", "i", sid);
	o->versions_before = (unsigned)n;
	free(author);
	return rc;
}
