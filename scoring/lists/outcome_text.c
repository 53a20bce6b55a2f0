/*
 * outcome_text.c - the text rules of outcome.c's module (see outcome.h):
 * what an applied notice looks like, the items of a thank-you list, the
 * tree and branch it names, Mark Brown's older notices, a revert's
 * subject, and the line helpers the note and compute sides
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
		"mind",	  "dt",	    "first",   "rest",	"of",  "it",   "am",
		"i'm",	  NULL,
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
		"applied",   "queued", "queuing", "queueing",
		"picked up", "picked", NULL,
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
 * Jiri Kosina's "This is now in hid.git#for-6.6/steelseries": "now in"
 * and then a tree or a for- branch.
 */
static int now_in(const struct line *l)
{
	static const char mark[] = "now in ";
	size_t i, w, k = strlen(mark);

	for (i = 0; i + k <= l->n; i++) {
		if (strncasecmp(l->s + i, mark, k))
			continue;
		for (w = i + k; w < l->n && l->s[w] != ' '; w++)
			;
		return outcome_has_ci(l->s + i + k, w - i - k, ".git") ||
		       (w - i - k > 4 && !strncasecmp(l->s + i + k, "for-", 4));
	}
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

	if (l.n && l.s[l.n - 1] == '?')
		return 0;
	if (!applied_verb(&l, &at) && !now_in(&l))
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
static int line_item(const struct line *l, struct outcome_item *it, int bot)
{
	const char *s = l->s, *e = l->s + l->n, *rb, *p;
	size_t n;
	int dash = s < e && (*s == '-' || *s == '*');

	if (dash)
		for (s++; s < e && *s == ' '; s++)
			;
	memset(it, 0, sizeof(*it));
	if (bot && dash && s < e && *s != '[') {
		rb = s - 1; /* patchwork-bot: "  - subject" */
	} else {
		if (s >= e || *s != '[' ||
		    !(rb = memchr(s, ']', (size_t)(e - s))))
			return 0;
		for (p = rb;
		     p > s && (isdigit((unsigned char)p[-1]) || p[-1] == '/');
		     p--)
			;
		if (p < rb && isdigit((unsigned char)*p))
			it->number = (unsigned)strtoul(p, NULL, 10);
	}
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

/* What follows an item: its commit id, or the bot's "no matching". */
static void item_detail(const struct line *l, struct outcome_item *it)
{
	char sha[41];

	if (it->sha[0] || it->unmatched)
		return;
	if (line_sha(l, sha))
		memcpy(it->sha, sha, sizeof(sha));
	else if (outcome_has_ci(l->s, l->n, "(no matching commit)"))
		it->unmatched = 1;
}

size_t outcome_parse_items(struct outcome_item *items, size_t max,
			   const char *text, size_t len, int bot)
{
	struct line l;
	size_t pos = 0, n = 0;

	while (outcome_next_line(text, len, &pos, &l)) {
		if (!l.n || l.s[0] == '>')
			continue;
		if (l.n >= 2 && !memcmp(l.s, "--", 2) &&
		    (l.n == 2 || l.s[2] == ' '))
			break; /* the signature */
		if (n < max && line_item(&l, &items[n], bot)) {
			item_detail(&l, &items[n++]);
			continue;
		}
		if (n)
			item_detail(&l, &items[n - 1]);
	}
	return n;
}

void outcome_notice_sha(const char *text, size_t len, char sha[41])
{
	struct line l;
	size_t pos = 0;
	char one[41];

	sha[0] = '\0';
	while (outcome_next_line(text, len, &pos, &l)) {
		if (!l.n || l.s[0] == '>' || !line_sha(&l, one))
			continue;
		if (sha[0] && strcmp(sha, one)) {
			sha[0] = '\0'; /* two commits: which is whose? */
			return;
		}
		memcpy(sha, one, sizeof(one));
	}
}

/* Copy word w[0..n) into out[cap], without the characters of strip. */
static void copy_word(char *out, size_t cap, const char *w, size_t n,
		      const char *strip)
{
	while (n && strchr(strip, *w))
		w++, n--;
	while (n && strchr(strip, w[n - 1]))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, w, n);
	out[n] = '\0';
}

/* The next blank-separated word of l from *i, its length in *n. */
static const char *next_word(const struct line *l, size_t *i, size_t *n)
{
	const char *w;

	while (*i < l->n && (l->s[*i] == ' ' || l->s[*i] == '\t'))
		(*i)++;
	w = l->s + *i;
	while (*i < l->n && l->s[*i] != ' ' && l->s[*i] != '\t')
		(*i)++;
	*n = (size_t)(l->s + *i - w);
	return *n ? w : NULL;
}

/* "<tree> (<branch>)" or "https://git.kernel.org/.../git/<tree> <br>" */
static int dest_words(struct outcome_dest *d, const struct line *l, size_t i)
{
	static const char git[] = "/kernel/git/";
	const char *w, *g;
	size_t n;

	w = next_word(l, &i, &n);
	if (!w || !(memchr(w, '/', n) || outcome_has_ci(w, n, ".git")))
		return 0; /* "applied to the for-next branch of pwm.git" */
	g = w;
	if (outcome_has_ci(w, n, git))
		for (g = w; strncasecmp(g, git, strlen(git)); g++)
			;
	if (g != w) {
		n -= (size_t)(g - w) + strlen(git);
		w = g + strlen(git);
	}
	copy_word(d->tree, sizeof(d->tree), w, n, ":,");
	w = next_word(l, &i, &n);
	if (w && n > 12 && !strncmp(w, "(refs/heads/", 12)) {
		w += 12; /* older digests: "(refs/heads/for-next):" */
		n -= 12;
	}
	if (w)
		copy_word(d->branch, sizeof(d->branch), w, n, "():,");
	return 1;
}

/* patchwork-bot's "by Name <email>:": the email. */
static void dest_by(struct outcome_dest *d, const struct line *l)
{
	const char *lt, *gt;

	if (l->n < 3 || strncasecmp(l->s, "by ", 3) ||
	    !(lt = memchr(l->s, '<', l->n)) ||
	    !(gt = memchr(lt, '>', (size_t)(l->s + l->n - lt))))
		return;
	copy_word(d->by, sizeof(d->by), lt + 1, (size_t)(gt - lt - 1), " ");
}

/* After "applied to": where the rest of the line or the next names it. */
static int dest_after(const struct line *l, size_t *at)
{
	static const char mark[] = "applied to";
	size_t i, k = strlen(mark);

	for (i = 0; i + k <= l->n; i++)
		if (!strncasecmp(l->s + i, mark, k)) {
			*at = i + k;
			return 1;
		}
	return 0;
}

void outcome_parse_dest(struct outcome_dest *d, const char *text, size_t len)
{
	struct line l;
	size_t pos = 0, at;
	int want = 0; /* the destination is on the next line */

	memset(d, 0, sizeof(*d));
	while (outcome_next_line(text, len, &pos, &l)) {
		if (!l.n || l.s[0] == '>')
			continue;
		if (d->tree[0]) { /* the "by" line follows the destination */
			dest_by(d, &l);
			return;
		}
		if (want) {
			want = 0;
			if (dest_words(d, &l, 0))
				continue;
		}
		if (!dest_after(&l, &at))
			continue;
		/* "Applied to" alone; "applied to the spi tree at" */
		if (at == l.n || (l.n >= 3 && !memcmp(l.s + l.n - 3, " at", 3)))
			want = 1;
		else
			dest_words(d, &l, at);
	}
}

/* l starts with key ("Lore link:"): the rest, blanks dropped, in r */
static int after_key(const struct line *l, const char *key, struct line *r)
{
	size_t k = strlen(key);

	if (l->n < k || strncasecmp(l->s, key, k))
		return 0;
	r->s = l->s + k;
	r->n = l->n - k;
	while (r->n && *r->s == ' ')
		r->s++, r->n--;
	return 1;
}

/* One digest block while it is read. */
struct digest_block {
	char target[256], by[128], single[256];
	int has_single;
};

static size_t digest_add(struct outcome_digest_item *items, size_t max,
			 size_t n, const struct digest_block *b,
			 const struct line *subj)
{
	struct outcome_digest_item *it;

	if (n >= max || !b->target[0] || !subj->n)
		return n;
	it = &items[n];
	memset(it, 0, sizeof(*it));
	memcpy(it->target, b->target, sizeof(it->target));
	memcpy(it->by, b->by, sizeof(it->by));
	copy_word(it->subject, sizeof(it->subject), subj->s, subj->n, " ");
	return n + 1;
}

/* "Lore link: https://lore.kernel.org/r/<id>": the Message-ID */
static void digest_target(struct digest_block *b, const struct line *r)
{
	const char *id = r->s, *e = r->s + r->n, *p;

	for (p = r->s; p + 3 <= e; p++)
		if (!memcmp(p, "/r/", 3))
			id = p + 3;
	copy_word(b->target, sizeof(b->target), id, (size_t)(e - id), "<>/ ");
}

/* "Committer: Name <email>": the email */
static void digest_by(struct digest_block *b, const struct line *r)
{
	const char *lt = memchr(r->s, '<', r->n), *gt;

	gt = lt ? memchr(lt, '>', (size_t)(r->s + r->n - lt)) : NULL;
	if (gt)
		copy_word(b->by, sizeof(b->by), lt + 1, (size_t)(gt - lt - 1),
			  " ");
}

/* A "Patch:" block's one item, once its Lore link is known. */
static size_t digest_single(struct outcome_digest_item *items, size_t max,
			    size_t n, const struct digest_block *b)
{
	struct line sl = { b->single, strlen(b->single) };

	return b->has_single ? digest_add(items, max, n, b, &sl) : n;
}

size_t outcome_parse_digest(struct outcome_digest_item *items, size_t max,
			    const char *text, size_t len)
{
	struct digest_block b;
	struct line l, r;
	size_t pos = 0, n = 0;
	int in_patches = 0;

	if (!outcome_has_ci(text, len, "marked \"accepted\""))
		return 0;
	memset(&b, 0, sizeof(b));
	while (outcome_next_line(text, len, &pos, &l)) {
		if (after_key(&l, "Patch:", &r) ||
		    after_key(&l, "Series:", &r)) {
			memset(&b, 0, sizeof(b));
			in_patches = 0;
			b.has_single = !strncasecmp(l.s, "Patch:", 6);
			if (b.has_single)
				copy_word(b.single, sizeof(b.single), r.s, r.n,
					  " ");
		} else if (after_key(&l, "Committer:", &r)) {
			digest_by(&b, &r);
		} else if (after_key(&l, "Lore link:", &r)) {
			digest_target(&b, &r);
			n = digest_single(items, max, n, &b);
		} else if (after_key(&l, "Patches:", &r)) {
			in_patches = 1;
			n = digest_add(items, max, n, &b, &r);
		} else if (in_patches && l.n && l.s[0] == '[') {
			n = digest_add(items, max, n, &b, &l);
		} else {
			in_patches = 0;
		}
	}
	return n;
}

/* "From <40 hex> Mon Sep 17 00:00:00 2001": git format-patch's line. */
static int format_patch_sha(const char *text, char sha[41])
{
	const char *p = text;

	while ((p = strstr(p, "From "))) {
		if ((p == text || p[-1] == '\n') && outcome_is_hex(p + 5, 40) &&
		    !strncmp(p + 45, " Mon Sep 17 00:00:00 2001", 25)) {
			memcpy(sha, p + 5, 40);
			sha[40] = '\0';
			return 1;
		}
		p += 5;
	}
	return 0;
}

char *outcome_applied_quote(const char *subject, const char *text, char sha[41])
{
	const char *e;

	sha[0] = '\0';
	if (!subject || strncasecmp(subject, "Applied \"", 9) || !text ||
	    !outcome_has_ci(text, strlen(text), "has been applied to") ||
	    !(e = strstr(subject + 9, "\" to ")) || e == subject + 9)
		return NULL;
	if (!format_patch_sha(text, sha))
		sha[0] = '\0';
	return pt_strndup(subject + 9, (size_t)(e - subject - 9));
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
