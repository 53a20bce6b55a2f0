/*
 * histsum_int.h - private to histsum.c and histsum_query.c: the record
 * layout of the history summary blobs (fixed-size little-endian records,
 * date first) and the binary search for "dated before D".
 */
#ifndef PT_HISTSUM_INT_H
#define PT_HISTSUM_INT_H

#include <stddef.h>
#include <stdint.h>

#define MAX_FILE_ROWS 20000u /* as features.c: newest changes per file */
#define DAY 86400.0

enum {
	FROW = 41, /* date, known, commit, author, lines (8 each), fix */
	AROW = 16, /* date, commit */
	RROW = 16, /* date, known (reviewers, authors, components) */
};

static inline int64_t get64(const unsigned char *p)
{
	uint64_t u = 0;
	int i;

	for (i = 7; i >= 0; i--)
		u = u << 8 | p[i];
	return (int64_t)u;
}

/* Records of size SZ dated before DATE: the first field is the date. */
static inline size_t before(const unsigned char *rows, size_t n, size_t sz,
			    int64_t date)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (get64(rows + mid * sz) < date)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
