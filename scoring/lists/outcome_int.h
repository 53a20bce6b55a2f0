/*
 * outcome_int.h - private to the outcome module: included only by
 * scoring/lists/outcome.c, outcome_text.c and outcome_compute.c, never
 * by another module (they use outcome.h).  It holds struct outcome and
 * the helpers one file of the module hands to another.
 */
#ifndef PT_OUTCOME_INT_H
#define PT_OUTCOME_INT_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/lists/outcome.h"
#include "scoring/store/db.h"

struct labels_conf;
struct drow; /* a row noted but not yet written (outcome.c) */

struct outcome {
	struct db *db;
	struct labels_conf *lconf;
	sqlite3_stmt *post, *fixref, *notice, *ask;
	struct drow *rows;
	size_t nrows, caprows;
	int nomem;
};

/* One line of a text, not NUL-terminated. */
struct line {
	const char *s;
	size_t n;
};

/* ---- outcome.c ----------------------------------------------------- */

/* Step st once, expecting no row, and make it ready for the next use. */
int outcome_step_reset(struct outcome *o, sqlite3_stmt *st, const char *what);

/* ---- outcome_text.c ------------------------------------------------ */

/* Next line of text[*pos..len) with leading blanks dropped. */
int outcome_next_line(const char *text, size_t len, size_t *pos,
		      struct line *l);
/* 1 when s[0..n) holds w, ignoring case. */
int outcome_has_ci(const char *s, size_t n, const char *w);
/* 1 when s[0..n) is not empty and only hex digits. */
int outcome_is_hex(const char *s, size_t n);

#endif
