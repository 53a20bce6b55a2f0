/*
 * fuzz_mbox.c - libFuzzer target for mbox_foreach; the callback reads
 * every byte it is given (so ASan sees an over-read) and checks the
 * indexes count up from 0.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "scoring/patch/mbox.h"
#include "scoring/patch/patch.h"

struct ctx {
	size_t next;
	size_t total;
	unsigned sum;
};

static int cb(const char *msg, size_t len, size_t index, void *vctx)
{
	struct ctx *c = vctx;
	size_t i;

	if (index != c->next++)
		__builtin_trap();
	for (i = 0; i < len; i++)
		c->sum += (unsigned char)msg[i];
	c->total += len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctx c = { 0, 0, 0 };

	mbox_foreach((const char *)data, size, cb, &c);
	/* unescaping only removes bytes */
	if (c.total > size)
		__builtin_trap();
	return 0;
}
