/*
 * fuzz_subject.c - libFuzzer target for subject_parse and
 * subject_normalise; traps when the prefix bound is not kept.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "scoring/patch/patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct subject s;
	char *n;

	if (subject_parse(&s, (const char *)data, size))
		return 0;
	if (!s.raw || !s.clean || s.ntags > PT_MAX_PREFIXES ||
	    (s.is_cover && (s.number || !s.total)))
		__builtin_trap();
	n = subject_normalise(s.clean);
	free(n);
	subject_clear(&s);
	return 0;
}
