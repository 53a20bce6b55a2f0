/*
 * fuzz_pw.c - libFuzzer target for what bot/patchwork/patchwork.c and bot/patchwork/http.c
 * parse from the wire without JSON: the Link header (rel="next"), dates,
 * Retry-After, and the UTF-8-safe description cap.  The input is split
 * at the first NUL: the first part is every parser's input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bot/patchwork/http.h"
#include "bot/patchwork/patchwork.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, *next, *cap, *u;
	int64_t secs;
	long us;
	size_t len, max;

	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	len = strlen(s);
	next = pw_link_next(s);
	if (next && strlen(next) >= len)
		__builtin_trap();
	free(next);
	if (!pw_parse_date(s, &secs, &us) && (us < 0 || us > 999999))
		__builtin_trap();
	(void)http_retry_after_ms(s, 0);
	u = http_url_for_message(s);
	if (u && strlen(u) > len)
		__builtin_trap();
	free(u);
	max = size ? data[0] : 0;
	cap = pw_description_cap(s, max);
	/*
	 * never longer than max; shorter only by backing up (at most 3
	 * bytes) to the lead byte of a UTF-8 sequence
	 */
	if (cap) {
		size_t c = strlen(cap), lim = len < max ? len : max;

		if (c > lim ||
		    (c < lim &&
		     (lim - c > 3 || ((unsigned char)s[c] & 0xc0) != 0xc0)))
			__builtin_trap();
	}
	free(cap);
	free(s);
	return 0;
}
