/*
 * strmap.h - a small string-keyed hash map (open addressing, FNV-1a) for
 * the in-memory passes over mined history: people by email, file state by
 * path, commits by id.  Keys are copied; values are a 64-bit integer or a
 * pointer the caller owns.  Not thread-safe; one map per thread.
 */
#ifndef PT_STRMAP_H
#define PT_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap_entry {
	char *key;
	size_t klen;
	uint64_t hash;
	union {
		int64_t i;
		void *p;
	} v;
};

struct strmap {
	struct strmap_entry *slots;
	size_t cap, len;
};

#define STRMAP_INIT        \
	{                  \
		NULL, 0, 0 \
	}

/* The entry for KEY, or NULL. */
struct strmap_entry *strmap_get(const struct strmap *m, const char *key,
				size_t klen);
/*
 * The entry for KEY, added (v.i = 0) when missing; *added says which.
 * Returns PT_ENOMEM when the map cannot grow.
 */
int strmap_put(struct strmap_entry **out, int *added, struct strmap *m,
	       const char *key, size_t klen);
/* The same for a map keyed by row id (its decimal form). */
struct strmap_entry *strmap_get_id(const struct strmap *m, int64_t id);
int strmap_put_id(struct strmap_entry **out, int *added, struct strmap *m,
		  int64_t id);
/* Free the keys and the table (values are the caller's). */
void strmap_free(struct strmap *m);

#define strmap_for_each(m, e)                                             \
	for ((e) = (m)->slots; (m)->slots && (e) < (m)->slots + (m)->cap; \
	     (e)++)                                                       \
		if ((e)->key)

#endif
