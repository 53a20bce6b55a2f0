/*
 * subject.h - what the bracket prefixes and reply markers of a patch's
 * subject say (subject.c), one rule for mail, commits and Patchwork.
 */
#ifndef PT_SUBJECT_H
#define PT_SUBJECT_H

#include <stddef.h>

/*
 * What the bracket prefixes of a subject say.  "[RFC PATCH net-next v3
 * 2/7] foo: bar" gives is_patch, is_rfc, version 3, number 2, total 7,
 * tags {"net-next"}, clean "foo: bar".  Reply markers (Re:, RE:, Aw:,
 * Fwd:) are stripped and counted in reply_depth.
 */
struct subject {
	char *raw;   /* the subject as given, unfolded, UTF-8 */
	char *clean; /* without reply markers and bracket prefixes */
	char **tags; /* other prefix tokens, e.g. "net-next", "6.6" */
	size_t ntags;
	unsigned version; /* vN; 1 when absent */
	unsigned number;  /* n of n/m; 0 when absent */
	unsigned total;	  /* m of n/m; 0 when absent */
	unsigned reply_depth;
	unsigned is_patch : 1, is_rfc : 1, is_resend : 1, is_autosel : 1,
		is_pull : 1, is_cover : 1; /* is_cover: number == 0 && total */
};

int subject_parse(struct subject *out, const char *s, size_t len);
void subject_clear(struct subject *s);
/* clean subject lowercased with whitespace folded: for matching versions */
char *subject_normalise(const char *clean);
/*
 * The length of a clean subject's component, the run before the first
 * ": " when it has no space ("net/mlx5" of "net/mlx5: fix Rx"); 0 when
 * none.
 */
size_t subject_component(const char *subject);

#endif
