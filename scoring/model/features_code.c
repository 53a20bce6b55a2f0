/*
 * features_code.c - the diff's columns: what kind of files it touches,
 * the code-pattern detectors, the code tokens, whitespace- and
 * comment-only changes and Kamei's size and diffusion measures.
 * Detectors are plain substring tests on the added/removed lines; they
 * are features, not verdicts.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/model/features_int.h"
#include "scoring/util/fnv.h"

#define MAX_CODE_LINES 4000u /* lines of a diff looked at for tokens */

/* ---- code -------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

static int is_doc(const char *path)
{
	return !strncmp(path, "doc/", 4) ||
	       !strncmp(path, "Documentation/", 14) || strstr(path, "/doc/") ||
	       has_suffix(path, ".rst") || has_suffix(path, ".md") ||
	       has_suffix(path, ".txt") || has_suffix(path, ".html") ||
	       has_suffix(path, ".svg");
}

static int is_test(const char *path)
{
	return !strncmp(path, "test/", 5) || !strncmp(path, "tests/", 6) ||
	       !strncmp(path, "app/test", 8) || strstr(path, "/selftests/") ||
	       strstr(path, "/test/") || strstr(path, "/tests/");
}

static int is_build(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "meson.build") || !strcmp(base, "Makefile") ||
	       !strncmp(base, "Kconfig", 7) || !strcmp(base, "Kbuild") ||
	       !strcmp(base, "CMakeLists.txt") || has_suffix(base, ".mk") ||
	       !strcmp(base, "meson_options.txt") || has_suffix(base, ".map");
}

static int is_arch(const char *path)
{
	static const char *const parts[] = {
		"/x86",	  "/arm",	"/ppc",	    "/powerpc",
		"/riscv", "/loongarch", "/aarch64", "/mips",
		"/s390",  "/sparc",	NULL,
	};
	size_t i;

	if (!strncmp(path, "arch/", 5))
		return 1;
	for (i = 0; parts[i]; i++)
		if (strstr(path, parts[i]))
			return 1;
	return 0;
}

struct code_acc {
	unsigned lines, code_lines, comment_lines;
	uint64_t ws_add, ws_del; /* order-free sums of stripped lines */
	unsigned nws_add, nws_del, ws_diff;
	int all_doc, all_test, all_build, any_file;
};

static int contains(const char *s, size_t len, const char *w)
{
	return memmem(s, len, w, strlen(w)) != NULL;
}

static int is_comment_or_blank(const char *s, size_t len)
{
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	return !len || *s == '*' ||
	       (len >= 2 && s[0] == '/' && (s[1] == '*' || s[1] == '/')) ||
	       (len >= 2 && s[len - 2] == '*' && s[len - 1] == '/' &&
		contains(s, len, "/*"));
}

static uint64_t stripped_hash(const char *s, size_t len, unsigned *nonblank)
{
	return fnv_nospace(FNV_INIT, s, len, nonblank);
}

static void code_patterns(const struct patch_line *l, float *t)
{
	const char *s = l->text;
	size_t n = l->len;
	int add = l->kind == '+';
	int is_if = contains(s, n, "if (") || contains(s, n, "if(");

	if (!add) {
		if (contains(s, n, "lock(") || contains(s, n, "mutex_"))
			t[FEAT_LOCK_DEL]++;
		return;
	}
	if (is_if && (contains(s, n, "(!") || contains(s, n, "== NULL") ||
		      contains(s, n, "NULL ==")))
		t[FEAT_NULL_GUARD]++;
	if (contains(s, n, "return -E") || contains(s, n, "return -1;") ||
	    contains(s, n, "= -E"))
		t[FEAT_ERR_RETURN]++;
	if (contains(s, n, "IS_ERR"))
		t[FEAT_IS_ERR]++;
	if (contains(s, n, "goto "))
		t[FEAT_GOTO]++;
	if (contains(s, n, "lock(") || contains(s, n, "mutex_") ||
	    contains(s, n, "_lock_"))
		t[FEAT_LOCK_ADD]++;
	if (is_if && (contains(s, n, ">") || contains(s, n, "<")) &&
	    (contains(s, n, "len") || contains(s, n, "size") ||
	     contains(s, n, "max") || contains(s, n, "MAX") ||
	     contains(s, n, "num") || contains(s, n, "count") ||
	     contains(s, n, "idx") || contains(s, n, "SIZE")))
		t[FEAT_BOUNDS]++;
	if (contains(s, n, "WARN_ON") || contains(s, n, "BUG_ON") ||
	    contains(s, n, "RTE_ASSERT") || contains(s, n, "assert(") ||
	    contains(s, n, "RTE_VERIFY"))
		t[FEAT_WARN]++;
	if (contains(s, n, "free("))
		t[FEAT_FREE_ADD]++;
	if (contains(s, n, "= NULL;"))
		t[FEAT_NULL_AFTER]++;
	if (contains(s, n, "memset(") || contains(s, n, "= {0}") ||
	    contains(s, n, "= { 0 }") || contains(s, n, "zalloc") ||
	    contains(s, n, "calloc("))
		t[FEAT_INIT]++;
}

static int code_tokens(struct toks *tk, const struct patch_line *l)
{
	const char *s = l->text;
	size_t i = 0, n = l->len;
	int ns = l->kind == '+' ? NS_ADD : NS_DEL, rc = 0;

	while (i < n && !rc) {
		size_t st;

		while (i < n && !(isalpha((unsigned char)s[i]) || s[i] == '_'))
			i++;
		st = i;
		while (i < n && word_char((unsigned char)s[i]))
			i++;
		if (i - st >= 2 && i - st <= 40)
			rc = feat_tok_add(tk, ns, s + st, i - st);
	}
	return rc;
}

static int scan_file(const struct patch_file *f, struct code_acc *a,
		     struct toks *tk, float *t)
{
	const char *path = f->new_path ? f->new_path : f->old_path;
	int doc, rc = 0;
	size_t h, i;

	if (!path)
		return 0;
	doc = is_doc(path);
	a->any_file = 1;
	a->all_doc &= doc;
	a->all_test &= is_test(path);
	a->all_build &= is_build(path);
	if (is_arch(path))
		t[FEAT_ARCH] = 1;
	if (f->status == PATCH_FILE_ADDED)
		t[FEAT_NEWFILES]++;
	t[FEAT_HUNKS] += (float)f->nhunks;
	for (h = 0; h < f->nhunks && !rc; h++) {
		const struct patch_hunk *hk = &f->hunks[h];

		for (i = 0; i < hk->nlines && !rc; i++) {
			const struct patch_line *l = &hk->lines[i];
			unsigned nb;
			uint64_t sh;

			if (l->kind != '+' && l->kind != '-')
				continue;
			a->lines++;
			sh = stripped_hash(l->text, l->len, &nb);
			if (nb) {
				if (l->kind == '+') {
					a->ws_add += sh;
					a->nws_add++;
				} else {
					a->ws_del += sh;
					a->nws_del++;
				}
			}
			if (doc)
				continue;
			if (is_comment_or_blank(l->text, l->len))
				a->comment_lines++;
			else
				a->code_lines++;
			code_patterns(l, t);
			if (a->lines <= MAX_CODE_LINES)
				rc = code_tokens(tk, l);
		}
	}
	return rc;
}

static void dir_of(const char *path, char *out, size_t cap)
{
	const char *sl = strrchr(path, '/');
	size_t n = sl ? (size_t)(sl - path) + 1 : 0;

	if (n >= cap)
		n = cap - 1;
	memcpy(out, path, n);
	out[n] = '\0';
}

/* Kamei's size and diffusion measures from the diff itself. */
static int size_measures(const struct patch *p, struct feat_vec *v)
{
	char(*dirs)[256] = NULL, (*tops)[128] = NULL, best[256] = "";
	size_t i, j, nd = 0, ns = 0, bestlines = 0;
	double total = (double)p->added + (double)p->removed, ent = 0;
	float *t = v->tab;

	t[FEAT_LA] = (float)p->added;
	t[FEAT_LD] = (float)p->removed;
	t[FEAT_NF] = (float)p->nfiles;
	if (!p->nfiles)
		return 0;
	dirs = pt_calloc(p->nfiles, sizeof(*dirs));
	tops = pt_calloc(p->nfiles, sizeof(*tops));
	if (!dirs || !tops) {
		free(dirs);
		free(tops);
		return PT_ENOMEM;
	}
	for (i = 0; i < p->nfiles; i++) {
		const struct patch_file *f = &p->files[i];
		const char *path = f->new_path ? f->new_path : f->old_path;
		char d[256], top[128];
		const char *sl;
		size_t lines = f->added + f->removed;

		if (!path)
			continue;
		dir_of(path, d, sizeof(d));
		sl = strchr(path, '/');
		snprintf(top, sizeof(top), "%.*s", sl ? (int)(sl - path) : 0,
			 path);
		for (j = 0; j < nd && strcmp(dirs[j], d); j++)
			;
		if (j == nd)
			memcpy(dirs[nd++], d, sizeof(d));
		for (j = 0; j < ns && strcmp(tops[j], top); j++)
			;
		if (j == ns)
			memcpy(tops[ns++], top, sizeof(top));
		if (total > 0 && lines) {
			double pk = (double)lines / total;

			ent -= pk * log2(pk);
		}
		if (lines > bestlines || !best[0]) {
			bestlines = lines;
			memcpy(best, d, sizeof(best));
		}
	}
	t[FEAT_ND] = (float)nd;
	t[FEAT_NS] = (float)ns;
	t[FEAT_ENTROPY] = (float)ent;
	free(dirs);
	free(tops);
	v->top_dir = pt_strdup(best[0] ? best : "/");
	return v->top_dir ? 0 : PT_ENOMEM;
}

int feat_code_features(const struct patch *p, struct feat_vec *v,
		       struct toks *tk)
{
	struct code_acc a = { 0 };
	float *t = v->tab;
	size_t i;
	int rc = 0;

	a.all_doc = a.all_test = a.all_build = 1;
	t[FEAT_HUNKS] = t[FEAT_NEWFILES] = t[FEAT_ARCH] = 0;
	for (i = FEAT_NULL_GUARD; i <= FEAT_INIT; i++)
		t[i] = 0;
	for (i = 0; i < p->nfiles && !rc; i++)
		rc = scan_file(&p->files[i], &a, tk, t);
	if (rc)
		return rc;
	t[FEAT_DOC_ONLY] = a.any_file && a.all_doc;
	t[FEAT_TEST_ONLY] = a.any_file && a.all_test;
	t[FEAT_BUILD_ONLY] = a.any_file && a.all_build;
	t[FEAT_COMMENT_ONLY] = a.lines && !a.code_lines && !a.all_doc;
	t[FEAT_WS_ONLY] = a.lines && a.ws_add == a.ws_del &&
			  a.nws_add == a.nws_del;
	t[FEAT_SMALL_FIX] = a.code_lines > 0 && a.code_lines <= 2;
	return size_measures(p, v);
}
