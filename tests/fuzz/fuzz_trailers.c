/*
 * fuzz_trailers.c - libFuzzer target for trailers_parse, through
 * patch_set_message and patch_to_json as well; traps when body_len is
 * out of range or a trailer lacks its key or value.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "scoring/patch/patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trailer *t;
	struct patch *p;
	struct buf b = BUF_INIT;
	size_t n, body, i;

	if (trailers_parse(&t, &n, &body, (const char *)data, size) == 0) {
		if (body > size)
			__builtin_trap();
		for (i = 0; i < n; i++)
			if (!t[i].key || !t[i].value ||
			    (t[i].is_stable && t[i].kind != TRAILER_CC))
				__builtin_trap();
		trailers_free(t, n);
	}
	if (patch_new(&p))
		return 0;
	if (patch_set_message(p, (const char *)data, size) == 0) {
		patch_is_tagged_fix(p);
		patch_to_json(&b, p);
	}
	buf_free(&b);
	patch_free(p);
	return 0;
}
