/*
 * stablefx.h - the fixture of the stable tests (test_stable.c,
 * test_stable_signals.c): a temporary directory that is HOME and holds
 * the repositories the tests build with the git CLI under a fixed
 * author, the shell and commit helpers that build them, and the lookup
 * of a commit in an analysed range.
 */
#ifndef PT_STABLEFX_H
#define PT_STABLEFX_H

#include <stddef.h>

#include "scoring/stable/stable.h"

/* The repository the helpers work in; a test may point it at another. */
extern char sfx_dir[64];

/* Run a printf-formatted shell command in sfx_dir; it must succeed. */
void sfx_sh(const char *fmt, ...);
/* The full id of a revision of sfx_dir's repository. */
void sfx_rev(char out[41], const char *name);
/* Commit all changes with a message given as printf arguments. */
void sfx_commit(const char *fmt, ...);
/* Replace line LINE of FILE with TEXT (a sed replacement). */
void sfx_set_line(const char *file, int line, const char *text);
/* Set file's line to text, commit (printf message), its id in out if any. */
void sfx_edit(char out[41], const char *file, int line, const char *text,
	      const char *fmt, ...);

/* The commit of the range with this id; fails the test if none. */
struct stable_commit *sfx_find(struct stable_set *s, const char *id);
/* Its index in s->c. */
size_t sfx_index_of(struct stable_set *s, const char *id);

/* cmocka group fixtures: the directory, git's identity, libgit2. */
int sfx_setup(void **state);
int sfx_teardown(void **state);

#endif
