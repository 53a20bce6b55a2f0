/*
 * dataset_int.h - private to dataset.c and dataset_read.c: reading the
 * labelled commits of dataset_build into rows, on one or more threads.
 */
#ifndef PT_DATASET_INT_H
#define PT_DATASET_INT_H

#include <git2.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "scoring/model/dataset.h"

/*
 * Rows from ST (c.id, c.sha, c.commit_date, l.is_fix, l.bug,
 * l.discovered, l.negative_ok; newest first) into DS until the query
 * ends or O's --max-rows or budget is full, on O->jobs threads (each
 * with its own handle on the repository at PATH and feature statements,
 * FC being this thread's).  *SEEN counts the labelled commits taken,
 * unreadable ones too; the rows are those one thread would read.
 * WANT is the total the progress names.
 */
int dataset_read(struct dataset *ds, struct db *db, int64_t repo_id,
		 const char *path, git_repository *repo, struct feat_ctx *fc,
		 sqlite3_stmt *st, const struct dataset_opts *o, size_t want,
		 size_t *seen);

/* A stage of the progress line; with TOTAL 0 it is only named. */
void dataset_say(const struct dataset_opts *o, const char *stage, size_t done,
		 size_t total);

/*
 * Whether the SEEN newest labelled commits fill --max-rows (counted as
 * commits, unreadable ones too) or the rows read from them the budget.
 */
int dataset_full(const struct dataset *ds, const struct dataset_opts *o,
		 size_t seen);

#endif
