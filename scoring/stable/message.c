/*
 * message.c - what a commit message says, for scoring/stable: the
 * upstream marker lines of a backport (stable_find_marker), Fixes:,
 * Cc: stable and revert targets inside and outside the trailer block,
 * fix wording, a commit the changelog names, and whether a commit keeps
 * the build working (subject component, toolchain words, build files).
 */
#include "scoring/stable/stable_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- message scanning ------------------------------------------------- */

static size_t hex_run(const char *s, const char *end)
{
	size_t n = 0;

	while (s + n < end && n <= 40 && isxdigit((unsigned char)s[n]))
		n++;
	return n;
}

/* Case-insensitive prefix test of [s, end) against lit. */
static int starts(const char *s, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(end - s) >= n && !strncasecmp(s, lit, n);
}

static const char *skip_blank(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* Copy a 7..40 hex id at s into hex; 1 when there is one. */
static int take_hex(char hex[41], const char *s, const char *end)
{
	size_t n = hex_run(s, end);

	if (n < 7 || n > 40)
		return 0;
	if (s + n < end && isalnum((unsigned char)s[n]))
		return 0;
	memcpy(hex, s, n);
	hex[n] = '\0';
	return 1;
}

/* One line: which marker, if any. */
static int line_marker(char hex[41], enum stable_match *kind, const char *s,
		       const char *end)
{
	const char *p;

	s = skip_blank(s, end);
	if (starts(s, end, "(cherry picked from commit ")) {
		*kind = STABLE_MATCH_CHERRY;
		return take_hex(hex, s + 27, end);
	}
	p = s;
	if (p < end && *p == '[')
		p = skip_blank(p + 1, end);
	if (starts(p, end, "upstream commit")) {
		p = skip_blank(p + 15, end);
		if (p < end && *p == ':')
			p = skip_blank(p + 1, end);
		*kind = STABLE_MATCH_UPSTREAM;
		return take_hex(hex, p, end);
	}
	if (starts(s, end, "commit ")) {
		p = s + 7;
		if (!take_hex(hex, p, end))
			return 0;
		p = skip_blank(p + strlen(hex), end);
		*kind = STABLE_MATCH_COMMIT_UP;
		return starts(p, end, "upstream");
	}
	return 0;
}

int stable_find_marker(char hex[41], enum stable_match *kind, const char *msg,
		       size_t len)
{
	const char *s = msg, *end = msg + len, *eol;

	while (s < end) {
		eol = memchr(s, '\n', (size_t)(end - s));
		if (!eol)
			eol = end;
		if (line_marker(hex, kind, s, eol))
			return 1;
		s = eol + 1;
	}
	hex[0] = '\0';
	*kind = STABLE_MATCH_NONE;
	return 0;
}

/* "This reverts commit X" anywhere in the message. */
static int find_revert(char hex[41], const char *msg)
{
	const char *p = msg;
	static const char lit[] = "This reverts commit ";

	while ((p = strstr(p, lit)) != NULL) {
		p += sizeof(lit) - 1;
		if (take_hex(hex, p, p + strlen(p)))
			return 1;
	}
	return 0;
}

static int in_list(const char *s, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == n && !strncasecmp(s, *list, n))
			return 1;
	return 0;
}

/*
 * The next word at or after *at (letters and digits, and '+' when plus):
 * its start, *n its length, *at moved past it; NULL when there is none.
 */
static const char *next_word(const char **at, size_t *n, int plus)
{
	const char *s = *at, *w;

	while (*s && !isalnum((unsigned char)*s))
		s++;
	if (!*s)
		return NULL;
	for (w = s; isalnum((unsigned char)*w) || (plus && *w == '+'); w++)
		;
	*n = (size_t)(w - s);
	*at = w;
	return s;
}

/* The summary has fix, fixes, fixed or fixing as a word. */
int stable_says_fix(const char *sum)
{
	static const char *const words[] = { "fix", "fixes", "fixed", "fixing",
					     NULL };
	const char *w;
	size_t n;

	while ((w = next_word(&sum, &n, 0)))
		if (in_list(w, n, words))
			return 1;
	return 0;
}

/* ---- keeps the build working ----------------------------------------- */

/*
 * The subject's component ("ci" of "ci: ...", "config" of "config/arm:
 * ..."): 2 when it is CI or packaging, 1 the build system or its tools,
 * else 0.
 */
static int build_component(const char *sum)
{
	static const char *const ci[] = { "ci",	      "github", ".github",
					  "gha",      "travis", "azure",
					  "buildlib", "debian", "redhat",
					  "suse",     "rpm",	"packaging",
					  "spec",     NULL };
	static const char *const build[] = { "build",  "buildtools", "devtools",
					     "config", "meson",	     "cmake",
					     "make",   "mk",	     NULL };
	const char *colon = strstr(sum, ": "), *slash;
	size_t n;

	if (!colon || strchr(sum, ' ') < colon)
		return 0;
	slash = memchr(sum, '/', (size_t)(colon - sum));
	n = (size_t)((slash ? slash : colon) - sum);
	if (in_list(sum, n, ci))
		return 2;
	return in_list(sum, n, build);
}

/*
 * Words of the summary that name the toolchain: compile (compiler,
 * compilation, ...), warning(s), gcc, clang (a version may follow), musl,
 * C++ (C++20), compatible (compatibility), toolchain.
 */
static int build_wording(const char *sum)
{
	static const char *const words[] = { "warning", "warnings", "musl",
					     "toolchain", NULL };
	static const char *const prefix[] = { "compil", "compatib", "gcc",
					      "clang", NULL };
	const char *s, *at, *colon = strstr(sum, ": ");
	const char *const *p;
	size_t n;

	at = colon ? colon + 2 : sum;
	while ((s = next_word(&at, &n, 1))) {
		if (n >= 3 && !strncasecmp(s, "c++", 3))
			return 1;
		if (in_list(s, n, words))
			return 1;
		for (p = prefix; *p; p++)
			if (n >= strlen(*p) && !strncasecmp(s, *p, strlen(*p)))
				return 1;
	}
	return 0;
}

static int ends_with(const char *s, const char *lit)
{
	size_t n = strlen(s), k = strlen(lit);

	return n >= k && !strcmp(s + n - k, lit);
}

/* A file of the build system, the CI or the packaging. */
static int build_path(const char *path)
{
	static const char *const dirs[] = {
		".ci/",	     ".github/",  ".gitlab/", "buildtools/",
		"devtools/", "buildlib/", "config/",  "debian/",
		"redhat/",   "suse/",	  "ci/",      NULL
	};
	static const char *const names[] = {
		"meson.build",	  "meson_options.txt",
		"meson.options",  "CMakeLists.txt",
		"Makefile",	  "GNUmakefile",
		"configure.ac",	  ".travis.yml",
		".gitlab-ci.yml", NULL
	};
	static const char *const exts[] = { ".cmake",	".mk",	".spec",
					    ".spec.in", ".map", NULL };
	const char *base = strrchr(path, '/');
	const char *const *p;

	base = base ? base + 1 : path;
	for (p = dirs; *p; p++)
		if (!strncmp(path, *p, strlen(*p)))
			return 1;
	for (p = names; *p; p++)
		if (!strcmp(base, *p))
			return 1;
	for (p = exts; *p; p++)
		if (ends_with(base, *p))
			return 1;
	return 0;
}

/* The build facts of a commit from its summary and changed paths. */
void stable_build_facts(struct stable_commit *sc, const struct treediff_file *f,
			size_t n)
{
	size_t i, nb = 0, other = 0;
	int comp = build_component(sc->subject);

	sc->build_ci = comp == 2;
	sc->build_comp = comp > 0;
	sc->build_words = build_wording(sc->subject);
	for (i = 0; i < n; i++) {
		if (!strcmp(f[i].path, "MAINTAINERS"))
			continue; /* a new file's owner: neither */
		if (build_path(f[i].path))
			nb++;
		else
			other++;
	}
	sc->build_files = nb && !other;
}

/*
 * A commit id in running text: 7..40 hex digits, not part of a word,
 * path, address or version ("v1.2-abc"), with a letter and a digit if
 * shorter than 12 (a number or a word of that length could name a
 * commit by chance; one 12-digit abbreviation in 280 is all digits).
 */
static int text_hex(char hex[41], const char *s, const char *start,
		    const char *end)
{
	size_t n = hex_run(s, end), i, digits = 0;

	if (s > start &&
	    (isalnum((unsigned char)s[-1]) || strchr("/-_.@=+%#~", s[-1])))
		return 0;
	if (n < 7 || n > 40 ||
	    (s + n < end &&
	     (isalnum((unsigned char)s[n]) || strchr("-_@/", s[n]))))
		return 0;
	for (i = 0; i < n; i++)
		digits += isdigit((unsigned char)s[i]) != 0;
	if (n < 12 && (!digits || digits == n))
		return 0;
	memcpy(hex, s, n);
	hex[n] = '\0';
	return 1;
}

/*
 * The first id the changelog names that resolves to a commit, outside
 * the subject and the Fixes:, revert and upstream marker lines (those
 * have their own facts).
 */
static void scan_cites(struct stable_commit *sc, git_repository *repo,
		       const char *msg)
{
	const char *s = strchrnul(msg, '\n'), *eol, *p;
	enum stable_match kind;
	char hex[41];
	git_oid id;

	for (; *s; s = *eol ? eol + 1 : eol) {
		s += *s == '\n';
		eol = strchrnul(s, '\n');
		p = skip_blank(s, eol);
		if (starts(p, eol, "fixes:") || line_marker(hex, &kind, s, eol))
			continue;
		for (; p < eol; p++) {
			if (!text_hex(hex, p, s, eol))
				continue;
			if (p >= s + 20 &&
			    starts(p - 20, eol, "This reverts commit "))
				continue;
			if (!stable_resolve_commit(&id, repo, hex) &&
			    git_oid_streq(&id, sc->id)) {
				git_oid_tostr(sc->cites, sizeof(sc->cites),
					      &id);
				return;
			}
		}
	}
}

static int is_stable_cc(const struct trailer *t)
{
	const char *e = t->email ? t->email : t->value;
	const char *at;

	if (t->kind != TRAILER_CC || !e)
		return 0;
	if (t->is_stable)
		return 1;
	e = skip_blank(e, e + strlen(e));
	if (*e == '<')
		e++;
	at = strchr(e, '@');
	return at && at - e == 6 && !strncasecmp(e, "stable", 6);
}

/* ---- tags ------------------------------------------------------------- */

static int add_target(struct stable_commit *sc, git_repository *repo,
		      const char *hex)
{
	char **t;
	git_oid id;
	size_t i;

	if (sc->ntargets >= STABLE_MAX_TARGETS ||
	    stable_resolve_commit(&id, repo, hex))
		return 0;
	for (i = 0; i < sc->ntargets; i++)
		if (!git_oid_streq(&id, sc->targets[i]))
			return 0;
	t = pt_reallocarray(sc->targets, sc->ntargets + 1, sizeof(*t));
	if (!t)
		return PT_ENOMEM;
	sc->targets = t;
	t[sc->ntargets] = pt_malloc(41);
	if (!t[sc->ntargets])
		return PT_ENOMEM;
	git_oid_tostr(t[sc->ntargets++], 41, &id);
	return 0;
}

/*
 * Tag lines outside the trailer block count too: DPDK (and many kernel
 * commits) put "Fixes:" and "Cc: stable@" in a paragraph of their own
 * above the Signed-off-by block, where git's trailer rules do not look.
 */
static int scan_tags(struct stable_commit *sc, git_repository *repo,
		     const char *msg)
{
	const char *s = msg, *eol, *p;
	char hex[41];
	int rc = 0;

	for (; *s && !rc; s = *eol ? eol + 1 : eol) {
		eol = strchrnul(s, '\n');
		if (starts(s, eol, "fixes:")) {
			sc->has_fixes = 1;
			p = skip_blank(s + 6, eol);
			if (take_hex(hex, p, eol))
				rc = add_target(sc, repo, hex);
		} else if (starts(s, eol, "cc:")) {
			p = skip_blank(s + 3, eol);
			if (*p == '<')
				p++;
			if (starts(p, eol, "stable@"))
				sc->cc_stable = 1;
		}
	}
	return rc;
}

int stable_read_tags(struct stable_commit *sc, git_repository *repo,
		     const char *msg)
{
	struct trailer *t = NULL;
	size_t n = 0, body = 0, i;
	char hex[41];
	int rc, unresolved = 0;

	rc = trailers_parse(&t, &n, &body, msg, strlen(msg));
	if (rc)
		return rc;
	for (i = 0; i < n && !rc; i++) {
		if (is_stable_cc(&t[i]))
			sc->cc_stable = 1;
		if (t[i].kind != TRAILER_FIXES)
			continue;
		sc->has_fixes = 1;
		if (t[i].fixes_sha)
			rc = add_target(sc, repo, t[i].fixes_sha);
		unresolved = 1;
	}
	if (!rc)
		rc = scan_tags(sc, repo, msg);
	if (!rc && find_revert(hex, msg)) {
		sc->is_revert = 1;
		rc = add_target(sc, repo, hex);
		unresolved = 1;
	}
	if (unresolved || sc->has_fixes)
		sc->target = STABLE_TARGET_UNKNOWN;
	if (!rc)
		scan_cites(sc, repo, msg);
	trailers_free(t, n);
	return rc;
}
