/*
 * fuzz_diff.c - libFuzzer target for diff_parse and patch_set_diff:
 * besides memory errors it traps when the parsed counts disagree with
 * the lines, or a line points outside the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "scoring/patch/patch.h"

static void check(const struct patch_file *f, size_t n, const char *text,
		  size_t len)
{
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		unsigned fa = 0, fr = 0;

		for (j = 0; j < f[i].nhunks; j++) {
			const struct patch_hunk *h = &f[i].hunks[j];
			unsigned a = 0, r = 0;

			for (k = 0; k < h->nlines; k++) {
				const struct patch_line *l = &h->lines[k];

				if (l->text < text || l->len > len ||
				    l->text + l->len > text + len)
					__builtin_trap();
				a += l->kind == '+';
				r += l->kind == '-';
			}
			if (a != h->added || r != h->removed)
				__builtin_trap();
			fa += a;
			fr += r;
		}
		if (fa != f[i].added || fr != f[i].removed)
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct patch_file *f;
	struct patch *p;
	struct buf b = BUF_INIT;
	size_t n;

	if (diff_parse(&f, &n, (const char *)data, size) == 0) {
		check(f, n, (const char *)data, size);
		diff_files_free(f, n);
	}
	if (patch_new(&p))
		return 0;
	if (patch_set_diff(p, (const char *)data, size) == 0)
		patch_to_json(&b, p);
	buf_free(&b);
	patch_free(p);
	return 0;
}
