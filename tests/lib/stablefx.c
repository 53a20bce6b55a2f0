/*
 * stablefx.c - the fixture of the stable tests (see stablefx.h): the
 * temporary directory and git's environment, the git CLI helpers that
 * build the test repositories and the lookup of a commit in a range.
 * Moved from test_stable.c as it was when that file was split by theme.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stablefx.h"

char sfx_dir[64];

void sfx_sh(const char *fmt, ...)
{
	char cmd[2048], full[2300];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "cd '%s' && (%s) >/dev/null 2>&1", sfx_dir,
		 cmd);
	rc = system(full);
	if (rc)
		fprintf(stderr, "failed: %s\n", cmd);
	assert_int_equal(rc, 0);
}

void sfx_rev(char out[41], const char *name)
{
	char cmd[256];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "git -C '%s' rev-parse '%s'", sfx_dir, name);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, 41, f));
	pclose(f);
	assert_int_equal(strlen(out), 40);
}

static void vcommit(const char *fmt, va_list ap)
{
	char msg[1024], path[128];
	FILE *f;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(path, sizeof(path), "%s/.msg", sfx_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(msg, f);
	fclose(f);
	sfx_sh("git add -A . ':!.msg' && git commit -q -F .msg");
}

/* Commit all changes with a message given as printf arguments. */
void sfx_commit(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcommit(fmt, ap);
	va_end(ap);
}

void sfx_set_line(const char *file, int line, const char *text)
{
	sfx_sh("sed -i '%ds/.*/%s/' %s", line, text, file);
}

/* Set file's line to text, commit (printf message), its id in out if any. */
void sfx_edit(char out[41], const char *file, int line, const char *text,
	      const char *fmt, ...)
{
	va_list ap;

	sfx_set_line(file, line, text);
	va_start(ap, fmt);
	vcommit(fmt, ap);
	va_end(ap);
	if (out)
		sfx_rev(out, "HEAD");
}

int sfx_setup(void **state)
{
	(void)state;
	snprintf(sfx_dir, sizeof(sfx_dir), "%s", "/tmp/pt-stable-XXXXXX");
	if (!mkdtemp(sfx_dir))
		return -1;
	setenv("GIT_AUTHOR_NAME", "Ann Author", 1);
	setenv("GIT_AUTHOR_EMAIL", "ann@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "Ann Author", 1);
	setenv("GIT_COMMITTER_EMAIL", "ann@example.org", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("HOME", sfx_dir, 1);
	git_libgit2_init();
	return 0;
}

int sfx_teardown(void **state)
{
	char cmd[128];

	(void)state;
	git_libgit2_shutdown();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sfx_dir);
	return system(cmd) == 0 ? 0 : -1;
}

struct stable_commit *sfx_find(struct stable_set *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].id, id))
			return &s->c[i];
	fail_msg("commit %s not in the range", id);
	return NULL;
}

size_t sfx_index_of(struct stable_set *s, const char *id)
{
	return (size_t)(sfx_find(s, id) - s->c);
}
