/*
 * labels_code.c - which changed lines are code, for the trivial-fix
 * rules: a comment line (the nocode rule, judged at mining by
 * history_diff.c), and whether a fixing commit changes anything but
 * comments, string literals and blanks, judged by labels.c for the
 * spelling rule (a typo fixed in code is a real fix; one fixed in a
 * comment or a message is not).
 */
#include "scoring/history/labels.h"

#include <ctype.h>
#include <git2.h>
#include <string.h>

#include "scoring/util/fnv.h"

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

int labels_hash_comments(const char *path)
{
	static const char *const sfx[] = {
		".py",	    ".sh",     ".pl",	 ".mk",
		".build",   ".cfg",    ".ini",	 ".yaml",
		".yml",	    ".cmake",  ".txt",	 ".toml",
		"Makefile", "Kconfig", "Kbuild", "meson_options.txt",
		NULL,
	};
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	if (!strncmp(base, "Makefile", 8) || !strncmp(base, "Kconfig", 7))
		return 1;
	for (i = 0; sfx[i]; i++)
		if (has_suffix(path, sfx[i]))
			return 1;
	return 0;
}

int labels_comment_line(const char *s, size_t n, int hash)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!n)
		return 1;
	if (n >= 2 &&
	    (!memcmp(s, "/*", 2) || !memcmp(s, "//", 2) || !memcmp(s, "*/", 2)))
		return 1;
	if (*s == '*' && (n == 1 || s[1] == ' ' || s[1] == '\t') &&
	    s[n - 1] != ';')
		return 1;
	return hash && *s == '#';
}

/* Past the literal opened by s[i] (its closing quote, or n). */
static size_t literal_end(const char *s, size_t n, size_t i)
{
	char q = s[i];

	for (i++; i < n && s[i] != q; i++)
		if (s[i] == '\\' && i + 1 < n)
			i++;
	return i;
}

/* Where a comment starts at s[i] (length of its opener), or 0. */
static int comment_at(const char *s, size_t n, size_t i, int hash)
{
	if (hash)
		return s[i] == '#' && (!i || isspace((unsigned char)s[i - 1]));
	if (i + 1 < n && s[i] == '/' && (s[i + 1] == '/' || s[i + 1] == '*'))
		return 2;
	return 0;
}

uint64_t labels_code_hash(uint64_t h, const char *s, size_t n, int hash)
{
	size_t i, from = 0;
	int open;

	if (labels_comment_line(s, n, hash))
		return h;
	for (i = 0; i < n; i++) {
		if (s[i] == '"' || (s[i] == '\'' && hash)) {
			/* a string: its quotes count, its text does not */
			h = fnv_nospace(h, s + from, i + 1 - from, NULL);
			i = from = literal_end(s, n, i);
		} else if (s[i] == '\'') {
			i = literal_end(s, n, i); /* a C character: code */
		} else if ((open = comment_at(s, n, i, hash))) {
			const char *e = NULL;

			h = fnv_nospace(h, s + from, i - from, NULL);
			if (!hash && s[i + 1] == '*')
				e = memmem(s + i + 2, n - i - 2, "*/", 2);
			if (!e)
				return h;
			i = (size_t)(e - s) + 1;
			from = i + 1;
		}
	}
	return from < n ? fnv_nospace(h, s + from, n - from, NULL) : h;
}

/*
 * A program's source, where a changed identifier or number changes what
 * runs; prose files (README, Kconfig help, .txt) are not.
 */
static int source_path(const char *path)
{
	static const char *const sfx[] = {
		".c",	   ".h",  ".S",	  ".s",	  ".cc",    ".cpp",
		".cxx",	   ".hh", ".hpp", ".rs",  ".go",    ".py",
		".sh",	   ".pl", ".pm",  ".awk", ".lds",   ".dts",
		".dtsi",   ".y",  ".l",	  ".mk",  ".cmake", "/Makefile",
		"/Kbuild", NULL,
	};
	size_t i;

	if (!strcmp(path, "Makefile") || !strcmp(path, "Kbuild"))
		return 1;
	for (i = 0; sfx[i]; i++)
		if (has_suffix(path, sfx[i]))
			return 1;
	return 0;
}

/* Added and removed code of one file differ. */
static int patch_code(git_patch *patch, const char *path)
{
	uint64_t hadd = FNV_INIT, hdel = FNV_INIT;
	size_t h, l, nh = git_patch_num_hunks(patch);
	int hash = labels_hash_comments(path);
	const git_diff_line *line;

	for (h = 0; h < nh; h++) {
		size_t nl = (size_t)git_patch_num_lines_in_hunk(patch, h);

		for (l = 0; l < nl; l++) {
			if (git_patch_get_line_in_hunk(&line, patch, h, l))
				return -1;
			if (line->origin == GIT_DIFF_LINE_ADDITION)
				hadd = labels_code_hash(hadd, line->content,
							line->content_len,
							hash);
			else if (line->origin == GIT_DIFF_LINE_DELETION)
				hdel = labels_code_hash(hdel, line->content,
							line->content_len,
							hash);
		}
	}
	return hadd != hdel;
}

static int diff_code(git_diff *diff, const struct labels_conf *c)
{
	size_t i, n = git_diff_num_deltas(diff);
	int code = 0;

	for (i = 0; i < n && code == 0; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		git_patch *patch = NULL;

		if (labels_doc_path(c, d->new_file.path) ||
		    !source_path(d->new_file.path))
			continue;
		if (git_patch_from_diff(&patch, diff, i))
			return -1;
		if (patch &&
		    !(git_patch_get_delta(patch)->flags & GIT_DIFF_FLAG_BINARY))
			code = patch_code(patch, d->new_file.path);
		git_patch_free(patch);
	}
	return code;
}

int labels_code_changed(struct git_repository *repo, const char *sha,
			const struct labels_conf *c)
{
	git_oid oid;
	git_commit *commit = NULL, *parent = NULL;
	git_tree *tree = NULL, *ptree = NULL;
	git_diff *diff = NULL;
	git_diff_options o;
	int rc;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = 0;
	rc = git_oid_fromstr(&oid, sha);
	if (!rc)
		rc = git_commit_lookup(&commit, repo, &oid);
	if (!rc)
		rc = git_commit_tree(&tree, commit);
	if (!rc && git_commit_parentcount(commit))
		rc = git_commit_parent(&parent, commit, 0);
	if (!rc && parent)
		rc = git_commit_tree(&ptree, parent);
	if (!rc)
		rc = git_diff_tree_to_tree(&diff, repo, ptree, tree, &o);
	rc = rc ? -1 : diff_code(diff, c);
	if (rc < 0)
		git_error_clear();
	git_diff_free(diff);
	git_tree_free(ptree);
	git_tree_free(tree);
	git_commit_free(parent);
	git_commit_free(commit);
	return rc;
}
