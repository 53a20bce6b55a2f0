/*
 * tmpdir.h - a unit test's private temporary directory: made in setup,
 * removed with everything in it in teardown.
 */
#ifndef PT_TMPDIR_H
#define PT_TMPDIR_H

#include <stddef.h>

/* Make /tmp/pt-NAME-XXXXXX, its path in dir[0..sz); 0, or -1. */
int tmpdir_make(char *dir, size_t sz, const char *name);
/* Remove dir and all below it; 0, or -1. */
int tmpdir_remove(const char *dir);

#endif
