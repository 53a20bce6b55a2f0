/*
 * fuzz_mail.c - libFuzzer target for patch_from_mail: a parse that
 * succeeds must give a patch whose strings are valid UTF-8 where the
 * parser promises it (subject, author, message, notes), whose diff lines
 * lie inside the diff text, and which patch_to_json can write.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/patch/patch.h"

static void check_utf8(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n, i;

	if (!s)
		return;
	for (; *u; u += n) {
		n = *u < 0x80		       ? 1
		    : *u >= 0xc2 && *u <= 0xdf ? 2
		    : *u >= 0xe0 && *u <= 0xef ? 3
		    : *u >= 0xf0 && *u <= 0xf4 ? 4
					       : 0;
		if (!n)
			__builtin_trap();
		for (i = 1; i < n; i++)
			if ((u[i] & 0xc0) != 0x80)
				__builtin_trap();
	}
}

static void check(const struct patch *p)
{
	size_t i, h, l;

	check_utf8(p->subject.raw);
	check_utf8(p->author.name);
	check_utf8(p->author.email);
	check_utf8(p->message);
	check_utf8(p->notes);
	check_utf8(p->message_id);
	for (i = 0; i < p->nreferences; i++)
		check_utf8(p->references[i]);
	for (i = 0; i < p->nfiles; i++)
		for (h = 0; h < p->files[i].nhunks; h++)
			for (l = 0; l < p->files[i].hunks[h].nlines; l++) {
				const struct patch_line *x =
					&p->files[i].hunks[h].lines[l];

				if (x->text < p->diff ||
				    x->text + x->len > p->diff + p->diff_len)
					__builtin_trap();
			}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct patch *p = NULL;
	struct buf j = BUF_INIT;

	if (patch_from_mail(&p, (const char *)data, size)) {
		if (p)
			__builtin_trap();
		return 0;
	}
	check(p);
	if (patch_to_json(&j, p))
		__builtin_trap();
	buf_free(&j);
	patch_free(p);
	return 0;
}
