/*
 * diff.h - a unified diff with git's extended headers, parsed into
 * files, hunks and lines (diff.c).
 */
#ifndef PT_DIFF_H
#define PT_DIFF_H

#include <stddef.h>

struct patch_line {
	char kind;	  /* '+', '-', ' ', or '\\' (no newline at end) */
	const char *text; /* points into patch->diff; not NUL-terminated */
	size_t len;	  /* without the kind character and the newline */
};

struct patch_hunk {
	unsigned long old_start, old_lines, new_start, new_lines;
	char *heading; /* text after the closing @@, or NULL */
	struct patch_line *lines;
	size_t nlines;
	unsigned added, removed;
	unsigned truncated : 1; /* the text ended before the counts were met */
};

enum patch_file_status {
	PATCH_FILE_MODIFIED = 0,
	PATCH_FILE_ADDED,
	PATCH_FILE_DELETED,
	PATCH_FILE_RENAMED,
	PATCH_FILE_COPIED,
};

struct patch_file {
	char *old_path; /* NULL for an added file */
	char *new_path; /* NULL for a deleted file */
	enum patch_file_status status;
	unsigned old_mode, new_mode; /* 0 when not given */
	unsigned similarity;	     /* rename/copy similarity %, 0 if none */
	unsigned binary : 1;
	struct patch_hunk *hunks;
	size_t nhunks;
	unsigned added, removed;
};

/*
 * Parse a unified diff (git's extended headers understood; plain
 * "--- a\n+++ b" diffs too).  Lines in the result point into text, which
 * must outlive the files (patch_set_diff copies it into the patch).
 */
int diff_parse(struct patch_file **out, size_t *n, const char *text,
	       size_t len);
void diff_files_free(struct patch_file *f, size_t n);

#endif
