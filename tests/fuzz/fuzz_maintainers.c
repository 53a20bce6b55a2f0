/*
 * fuzz_maintainers.c - libFuzzer target for scoring/history/maintainers.c: the
 * input is a MAINTAINERS file; it is parsed, then a few paths of the
 * kinds policy.c and the features ask about are matched.  The hits must
 * name real sections, deepest first, and each pattern must answer
 * maint_pattern_match against its own text without trouble.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/history/maintainers.h"

static const char *const paths[] = {
	"MAINTAINERS",
	"drivers/net/ethernet/intel/e1000e/netdev.c",
	"drivers/pwm/pwm-tegra.c",
	"include/linux/netdevice.h",
	"net/core/dev.c",
	"Documentation/process/stable-kernel-rules.rst",
	"lib/librte_eal/common/eal_common_log.c",
	"a",
	"",
};

static void check(const struct maint *m)
{
	struct maint_hit hits[8];
	size_t p, i, n, k;

	for (p = 0; p < sizeof(paths) / sizeof(*paths); p++) {
		maint_match(m, paths[p], hits, 8, &n);
		if (n > 8)
			__builtin_trap();
		for (i = 0; i < n; i++) {
			if (hits[i].section >= m->n)
				__builtin_trap();
			if (i && hits[i].depth > hits[i - 1].depth)
				__builtin_trap();
		}
	}
	for (i = 0; i < m->n; i++) {
		const struct maint_section *s = &m->s[i];

		for (k = 0; k < s->nf; k++)
			(void)maint_pattern_match(paths[1], s->f[k].glob);
		for (k = 0; k < s->npeople; k++)
			if (!maint_has_person(m, i, s->people[k]))
				__builtin_trap();
	}
}

/* A stand-in for a tree: short names without a dot are directories. */
static int isdir(const char *path, void *ctx)
{
	(void)ctx;
	return strlen(path) < 8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct maint *m = NULL;
	maint_isdir_fn fn = size && (data[0] & 1) ? isdir : NULL;

	/* the callers pass NULL; an odd first byte tries the -d test too */
	if (maint_parse(&m, (const char *)data, size, fn, NULL)) {
		if (m)
			__builtin_trap();
		return 0;
	}
	check(m);
	maint_free(m);
	return 0;
}
