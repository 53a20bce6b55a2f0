/*
 * outcome_text.c - the text rules of outcome.c's module (see outcome.h):
 * what an applied notice looks like, the items of a thank-you list, a
 * revert's subject, and the line helpers the note and compute sides
 * share (outcome_int.h).  Pure text: no SQL.
 */
#include "scoring/lists/outcome.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/lists/outcome_int.h"

/* ---- text rules ---------------------------------------------------- */

/* Next line of text[*pos..len) with leading blanks dropped. */
int outcome_next_line(const char *text, size_t len, size_t *pos, struct line *l)
{
	const char *nl;
	size_t end;

	if (*pos >= len)
		return 0;
	nl = memchr(text + *pos, '\n', len - *pos);
	end = nl ? (size_t)(nl - text) : len;
	l->s = text + *pos;
	l->n = end - *pos;
	*pos = nl ? end + 1 : len;
	while (l->n && (*l->s == ' ' || *l->s == '\t')) {
		l->s++;
		l->n--;
	}
	while (l->n && isspace((unsigned char)l->s[l->n - 1]))
		l->n--;
	return 1;
}

int outcome_has_ci(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w), i;

	for (i = 0; i + k <= n; i++)
		if (!strncasecmp(s + i, w, k))
			return 1;
	return 0;
}

/* A word that may stand before "applied": greetings, which patches. */
static int lead_word(const char *w, size_t n)
{
	static const char *const ok[] = {
		"thanks", "thank",  "you",     "hello", "hi",  "and",  "now",
		"i've",	  "i",	    "have",    "so",	"ok",  "okay", "the",
		"whole",  "series", "patches", "patch", "all", "both", "two",
		"three",  "four",   "five",    "six",	"for", "this", "never",
		"mind",	  "dt",	    "first",   "rest",	"of",  "it",   NULL,
	};
	const char *const *k;
	size_t i;

	for (i = 0; i < n && (isdigit((unsigned char)w[i]) || w[i] == ',' ||
			      w[i] == '-' || w[i] == '#');
	     i++)
		;
	if (i == n)
		return 1; /* "1,2", "1-3", "#2" */
	while (n && strchr(",.!:;", w[n - 1]))
		n--;
	for (k = ok; *k; k++)
		if (strlen(*k) == n && !strncasecmp(w, *k, n))
			return 1;
	return 0;
}

/* Up to 7 lead words, then the verb: "Both patches applied, thanks." */
static int applied_verb(const struct line *l, size_t *at)
{
	static const char *const verbs[] = {
		"applied", "queued", "picked up", "picked", NULL,
	};
	const char *const *v;
	size_t i = 0, w, k;
	int words = 0;

	while (i < l->n && words <= 7) {
		for (v = verbs; *v; v++) {
			k = strlen(*v);
			if (l->n - i < k || strncasecmp(l->s + i, *v, k))
				continue;
			if (l->n - i == k ||
			    !isalpha((unsigned char)l->s[i + k])) {
				*at = i;
				return 1;
			}
		}
		for (w = i; w < l->n && l->s[w] != ' '; w++)
			;
		if (!lead_word(l->s + i, w - i))
			return 0;
		words++;
		for (i = w; i < l->n && l->s[i] == ' '; i++)
			;
	}
	return 0;
}

/*
 * Where the destination of "applied to the for-next branch of pwm.git
 * and pushed out as testing for 0-day to poke at it" starts: words
 * after it name branches and trees ("usb-testing"), not what the
 * writer did, so they cannot spoil the line.
 */
static size_t before_destination(const struct line *l)
{
	static const char *const marks[] = { " branch", " pushed out", ".git",
					     " tree", NULL };
	const char *const *m;
	size_t i, k, end = l->n;

	for (m = marks; *m; m++) {
		k = strlen(*m);
		for (i = 0; i + k <= end; i++)
			if (!strncasecmp(l->s + i, *m, k)) {
				end = i;
				break;
			}
	}
	return end;
}

/* w in s[0, n), but not inside a name such as "usb-testing". */
static int spoils(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w), i;

	for (i = 0; i + k <= n; i++)
		if (!strncasecmp(s + i, w, k) &&
		    (i == 0 || (s[i - 1] != '-' && s[i - 1] != '/')))
			return 1;
	return 0;
}

/*
 * An "applied" line a maintainer writes, not a tester's ("I applied
 * the patch and ran it on my board") nor a condition ("once applied").
 */
static int applied_line(struct line l)
{
	static const char *const spoil[] = {
		"not ",	   "n't",      "on top",   "test",  "locally", "boot",
		"compile", "build",    "cleanly",  "if ",   "once ",   "when ",
		" ran ",   " run ",    "board",	   "tried", "works",   "worked",
		"machine", "hardware", "my setup", NULL,
	};
	const char *const *w;
	size_t at, n;

	if (!applied_verb(&l, &at) || (l.n && l.s[l.n - 1] == '?'))
		return 0;
	n = before_destination(&l);
	for (w = spoil; *w; w++)
		if (spoils(l.s, n, *w))
			return 0;
	return 1;
}

int outcome_says_applied(const char *text, size_t len)
{
	struct line l;
	size_t pos = 0;

	while (outcome_next_line(text, len, &pos, &l)) {
		if (!l.n || l.s[0] == '>')
			continue;
		if (l.n >= 2 && !memcmp(l.s, "--", 2))
			break; /* signature or the diff of a posting */
		if (applied_line(l))
			return 1;
	}
	return 0;
}

int outcome_is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return n > 0;
}

/* A commit id in "commit: <sha>", ".../c/<sha>", "?id=<sha>". */
static int line_sha(const struct line *l, char sha[41])
{
	static const char *const keys[] = { "commit: ", "/c/",
					    "id=", "/commit/", NULL };
	const char *const *k;
	const char *p;
	size_t i, n;

	for (k = keys; *k; k++) {
		for (i = 0; i + strlen(*k) <= l->n; i++) {
			if (strncasecmp(l->s + i, *k, strlen(*k)))
				continue;
			p = l->s + i + strlen(*k);
			for (n = 0; p + n < l->s + l->n && n < 40 &&
				    isxdigit((unsigned char)p[n]);
			     n++)
				;
			if (n >= 7 && (p + n == l->s + l->n ||
				       !isalnum((unsigned char)p[n]))) {
				memcpy(sha, p, n);
				sha[n] = '\0';
				return 1;
			}
		}
	}
	return 0;
}

/* "[v2,1/3] subject" or "- [PATCH v2 1/3] subject" */
static int line_item(const struct line *l, struct outcome_item *it)
{
	const char *s = l->s, *e = l->s + l->n, *rb, *p;
	size_t n;

	if (s < e && (*s == '-' || *s == '*'))
		for (s++; s < e && *s == ' '; s++)
			;
	if (s >= e || *s != '[' || !(rb = memchr(s, ']', (size_t)(e - s))))
		return 0;
	memset(it, 0, sizeof(*it));
	for (p = rb; p > s && (isdigit((unsigned char)p[-1]) || p[-1] == '/');
	     p--)
		;
	if (p < rb && isdigit((unsigned char)*p))
		it->number = (unsigned)strtoul(p, NULL, 10);
	for (p = rb + 1; p < e && *p == ' '; p++)
		;
	n = (size_t)(e - p);
	if (!n)
		return 0;
	if (n >= sizeof(it->subject))
		n = sizeof(it->subject) - 1;
	memcpy(it->subject, p, n);
	it->subject[n] = '\0';
	return 1;
}

size_t outcome_parse_items(struct outcome_item *items, size_t max,
			   const char *text, size_t len)
{
	struct line l;
	size_t pos = 0, n = 0;
	char sha[41];

	while (outcome_next_line(text, len, &pos, &l)) {
		if (!l.n || l.s[0] == '>')
			continue;
		if (n < max && line_item(&l, &items[n])) {
			n++;
			if (line_sha(&l, sha))
				memcpy(items[n - 1].sha, sha, sizeof(sha));
			continue;
		}
		if (n && !items[n - 1].sha[0] && line_sha(&l, sha))
			memcpy(items[n - 1].sha, sha, sizeof(sha));
	}
	return n;
}

char *outcome_revert_subject(const char *clean)
{
	size_t n;

	if (!clean || strncasecmp(clean, "Revert \"", 8))
		return NULL;
	n = strlen(clean);
	if (n < 10 || clean[n - 1] != '"')
		return NULL;
	return pt_strndup(clean + 8, n - 9);
}
