/*
 * tmpdir.c - a unit test's private temporary directory (see tmpdir.h).
 */
#include "tmpdir.h"

#include <stdio.h>
#include <stdlib.h>

int tmpdir_make(char *dir, size_t sz, const char *name)
{
	int n = snprintf(dir, sz, "/tmp/pt-%s-XXXXXX", name);

	if (n < 0 || (size_t)n >= sz)
		return -1;
	return mkdtemp(dir) ? 0 : -1;
}

int tmpdir_remove(const char *dir)
{
	char cmd[256];
	int n = snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);

	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	return system(cmd) == 0 ? 0 : -1;
}
