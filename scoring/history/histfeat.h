/*
 * histfeat.h - history features of mined commits, each computed from
 * strictly earlier commits (lower seq): Kamei et al.'s size, diffusion,
 * history and experience measures (features table) and the track record
 * and MAINTAINERS status of each reviewer, acker and tester (reviews
 * table); it also fills commit_files.subsystem.  See histfeat.c for the
 * exact definitions.
 */
#ifndef PT_HISTFEAT_H
#define PT_HISTFEAT_H

#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/util/pt.h"

struct git_repository;

/* Recompute features, reviews and subsystems of repository REPO_ID. */
int histfeat_compute(struct db *db, struct git_repository *repo,
		     int64_t repo_id);

#endif
