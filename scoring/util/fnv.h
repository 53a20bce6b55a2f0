/*
 * fnv.h - the one 64-bit FNV-1a hash of the tree: string map keys
 * (strmap.c), the whitespace-blind line hashes that find moved and
 * re-indented code (history.c, features.c), the email and path
 * signatures of the stable ranking (stable.c) and the digest of a
 * training set (model.c).  Header-only so the byte loops inline.  The
 * 32-bit feature hash (feat_hash in features.c) is separate: its values
 * are the trained models' column numbers and must not change.
 */
#ifndef PT_FNV_H
#define PT_FNV_H

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>

#define FNV_INIT 0xcbf29ce484222325ull /* the offset basis */
#define FNV_PRIME 0x100000001b3ull

static inline uint64_t fnv_byte(uint64_t h, unsigned char c)
{
	return (h ^ c) * FNV_PRIME;
}

static inline uint64_t fnv_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++)
		h = fnv_byte(h, p[i]);
	return h;
}

/*
 * The same over S without its white space (isspace); *NONBLANK, when not
 * NULL, is set to whether any byte was hashed.
 */
static inline uint64_t fnv_nospace(uint64_t h, const char *s, size_t n,
				   unsigned *nonblank)
{
	unsigned any = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (isspace((unsigned char)s[i]))
			continue;
		any = 1;
		h = fnv_byte(h, (unsigned char)s[i]);
	}
	if (nonblank)
		*nonblank = any;
	return h;
}

#endif
