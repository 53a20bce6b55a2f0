/*
 * strmap.c - the string hash map of strmap.h: linear probing over a
 * power-of-two table kept at most half full, so lookups stay short.
 */
#include "scoring/util/strmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/util/fnv.h"
#include "scoring/util/pt.h"

static struct strmap_entry *probe(const struct strmap *m, const char *key,
				  size_t klen, uint64_t h)
{
	size_t i = (size_t)h & (m->cap - 1);

	while (m->slots[i].key) {
		struct strmap_entry *e = &m->slots[i];

		if (e->hash == h && e->klen == klen &&
		    !memcmp(e->key, key, klen))
			return e;
		i = (i + 1) & (m->cap - 1);
	}
	return &m->slots[i];
}

struct strmap_entry *strmap_get(const struct strmap *m, const char *key,
				size_t klen)
{
	struct strmap_entry *e;

	if (!m->cap)
		return NULL;
	e = probe(m, key, klen, fnv_bytes(FNV_INIT, key, klen));
	return e->key ? e : NULL;
}

static int grow(struct strmap *m)
{
	struct strmap old = *m;
	struct strmap_entry *e;
	size_t ncap = m->cap ? m->cap * 2 : 64;

	m->slots = pt_calloc(ncap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return PT_ENOMEM;
	}
	m->cap = ncap;
	strmap_for_each(&old, e) * probe(m, e->key, e->klen, e->hash) = *e;
	free(old.slots);
	return 0;
}

int strmap_put(struct strmap_entry **out, int *added, struct strmap *m,
	       const char *key, size_t klen)
{
	struct strmap_entry *e;
	uint64_t h = fnv_bytes(FNV_INIT, key, klen);

	*out = NULL;
	if ((m->len + 1) * 2 > m->cap && grow(m))
		return PT_ENOMEM;
	e = probe(m, key, klen, h);
	if (added)
		*added = !e->key;
	if (!e->key) {
		e->key = pt_strndup(key, klen);
		if (!e->key)
			return PT_ENOMEM;
		e->klen = klen;
		e->hash = h;
		e->v.i = 0;
		m->len++;
	}
	*out = e;
	return 0;
}

void strmap_free(struct strmap *m)
{
	struct strmap_entry *e;

	strmap_for_each(m, e) free(e->key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}

/* An id's key: its decimal form in buf, the length returned. */
static size_t id_key(char *buf, size_t sz, int64_t id)
{
	int n = snprintf(buf, sz, "%lld", (long long)id);

	return n > 0 ? (size_t)n : 0;
}

struct strmap_entry *strmap_get_id(const struct strmap *m, int64_t id)
{
	char b[24];

	return strmap_get(m, b, id_key(b, sizeof(b), id));
}

int strmap_put_id(struct strmap_entry **out, int *added, struct strmap *m,
		  int64_t id)
{
	char b[24];

	return strmap_put(out, added, m, b, id_key(b, sizeof(b), id));
}
