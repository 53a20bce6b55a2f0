/*
 * cycle.h - the release cycle of mined commits: which tags are releases
 * and release candidates (a configurable extended regex) of the mainline
 * (not of a stable branch), the first mainline tag that contains each
 * commit, its phase (merge window, after rcN, no rc, unreleased) and
 * soak time, and the newest mainline tag as of a date.  Owns the tags
 * table and the cycle columns of commits (see history.h).
 */
#ifndef PT_CYCLE_H
#define PT_CYCLE_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/util/pt.h"

struct git_repository;

/*
 * The pattern's first group is the release version (the tag up to its
 * end names the final release), its last group the rc number (unmatched
 * for a final release).  Handles v6.7-rc3, v6.7, v23.11-rc1, v8.2.0-rc1,
 * v2.6.39.
 */
#define CYCLE_DEFAULT_PATTERN "^v([0-9]+\\.[0-9]+(\\.[0-9]+)?)(-rc([0-9]+))?$"

struct cycle_tag {
	char *name;
	char *release; /* final release name, e.g. "v23.11" */
	unsigned long ver[4];
	size_t nver;
	int rc; /* 0 for the final release */
};

/*
 * Parse NAME with the compiled PATTERN (NULL = default).  Returns 1 and
 * fills *out when NAME is a release tag, 0 when it does not match, or a
 * negative error for a bad pattern.
 */
int cycle_parse_tag(struct cycle_tag *out, const char *name,
		    const char *pattern);
void cycle_tag_clear(struct cycle_tag *t);
/* Version order: <0, 0, >0 (rcs before their final release). */
int cycle_tag_cmp(const struct cycle_tag *a, const struct cycle_tag *b);

/*
 * Recompute the tags table and the cycle columns of every mined commit of
 * REPO_ID.  Only mainline tags place commits: a tag is a release of the
 * mainline when its commit is on the first-parent chain of REV (NULL =
 * HEAD, the revision mined); a stable-branch tag (v22.11.7, v6.1.12) is
 * not.  When that cannot be checked (REV unknown, a shallow repository,
 * a missing commit) a tag falls back to its version's shape: a fourth
 * component, or a third above 0 of a release whose x.y or x.y.0 is
 * tagged too, is a stable tag.  Stable tags stay in the tags table
 * (mainline = 0).  Mainline tags are visited once in version order, each
 * marking the commits it reaches that no earlier tag reached (one pass
 * over the graph, no per-commit reachability query), so a commit's tag
 * is the first mainline release tag containing it.  *ntags: tags
 * matching PATTERN; *nmain: of those, mainline ones.
 */
int cycle_assign(size_t *ntags, size_t *nmain, struct db *db,
		 struct git_repository *repo, int64_t repo_id, const char *rev,
		 const char *pattern);

/* The newest mainline release tag as of a date. */
struct cycle_mainline {
	char *name;    /* e.g. "v6.8-rc5" */
	char *release; /* its final release, e.g. "v6.8" */
	int rc;	       /* 0 for a final release */
	int64_t date;  /* tagger date, else the commit's */
};

/*
 * The newest mainline tag of REPO_ID tagged before DATE (stable-branch
 * tags never), from the tags table cycle_assign() wrote: for the state
 * of the mainline when a patch was posted or a commit authored.  Returns
 * 1 and fills *out, 0 when no mainline tag is older, or an error.
 * CYCLE_MAINLINE_AT_SQL is its query (binds: repo id, date; columns:
 * name, release, rc, date), for callers that prepare it once;
 * CYCLE_RELEASE_AT_SQL the newest mainline final release the same way.
 */
#define CYCLE_MAINLINE_AT_SQL                                             \
	"SELECT name, release, rc, date FROM tags WHERE repo_id = ? AND " \
	"mainline AND date < ? ORDER BY date DESC, ord DESC LIMIT 1"
#define CYCLE_RELEASE_AT_SQL                                              \
	"SELECT name, date FROM tags WHERE repo_id = ? AND mainline AND " \
	"rc = 0 AND date < ? ORDER BY date DESC, ord DESC LIMIT 1"
/* The seed's late -rc: -rc5 or later (stats cycle's --late default). */
#define CYCLE_LATE_RC 5

int cycle_mainline_tag_at(struct cycle_mainline *out, struct db *db,
			  int64_t repo_id, int64_t date);
void cycle_mainline_clear(struct cycle_mainline *m);

/* ---- the cycle report (`patchtriage stats cycle`) ---------------- */

/*
 * A row of the report: commits by the first mainline release tag that
 * contains them.  With late = L: merge-window (first released in -rc1),
 * rc2 .. rc(L-1) (first released in that rc: "merged for rcN"), rcL+
 * (first released in -rcL or a later rc, the late group) and final
 * (first released in the final release, i.e. merged after its last rc;
 * its own row, not late: the seed's claim is about "a patch merged for
 * one of the late -rc releases").
 */
struct cycle_phase {
	char name[16]; /* "merge-window", "rc2", ..., "rc5+", "final" */
	char what[80]; /* the row in words */
	int rc;	       /* first rc of the row; 0: the final release */
	int late;      /* the late group of the ratio */
	size_t commits;
	int64_t lines;	 /* added + removed */
	size_t bugs;	 /* bug-introducing commits */
	double per_kloc; /* bugs per 1000 changed lines */
};

struct cycle_stats {
	struct cycle_phase *phases; /* merge window, rc2.., late, final */
	size_t nphases;		    /* late + 1 */
	int late;		    /* first rc counted as late */
	int has_ratio; /* late commits and merge-window bugs exist */
	double ratio;  /* late per_kloc / merge-window per_kloc */
	double lo, hi; /* bootstrap 95% percentile interval */
	unsigned boot; /* resamples */
	unsigned long long seed;
	int64_t cutoff; /* only commits committed at or before */
};

/*
 * Bug-introducing commits per 1000 changed lines by row for commits of
 * REPO_ID released in a release that had rcs, committed at least
 * HORIZON_DAYS before the newest mined commit (younger ones have not had
 * time to be found buggy), and the late (first released in -rcLATE or
 * later, 2 <= LATE <= 64) / merge-window ratio with a stratified
 * commit-level bootstrap of BOOT resamples from SEED.
 */
int cycle_stats(struct cycle_stats *out, struct db *db, int64_t repo_id,
		int late, int horizon_days, unsigned boot,
		unsigned long long seed);
void cycle_stats_clear(struct cycle_stats *s);
int cycle_stats_table(struct buf *out, const struct cycle_stats *s);
int cycle_stats_json(struct buf *out, const struct cycle_stats *s);
/* A self-contained SVG bar chart of per_kloc by phase. */
int cycle_stats_svg(struct buf *out, const struct cycle_stats *s);

#endif
