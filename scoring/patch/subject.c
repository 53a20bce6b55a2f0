/*
 * subject.c - the subject line of a patch: reply markers (Re:, Aw:,
 * Fwd:, Re[2]:) and bracket prefixes ("[RFC PATCH net-next v3 2/7]",
 * Patchwork's "[net-next,v2,1/3]", "[PATCH AUTOSEL 6.6 03/12]") split
 * from the clean subject.  It owns struct subject and nothing else; it
 * never fails on odd input (a subject is free text), only on memory.
 * Prefix parsing stops after PT_MAX_PREFIXES tokens or bracket groups;
 * what follows is left in the clean subject.
 */
#include "scoring/patch/subject.h"
#include "scoring/patch/patch.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int is_ws(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Copy s unfolded: CR and LF dropped, so "a\r\n b" reads "a b". */
static char *unfold(const char *s, size_t len)
{
	char *out = pt_malloc(len + 1);
	size_t i, j = 0;

	if (!out)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] == '\r' || s[i] == '\n')
			continue;
		out[j++] = s[i];
	}
	out[j] = '\0';
	return out;
}

static const char *const reply_words[] = { "re", "aw",	 "fwd", "fw",
					   "sv", "antw", "wg",	NULL };

/*
 * A reply marker at s: a known word, an optional "[N]" or "(N)" count,
 * then ':'.  Returns its length (0 if none) and the depth it adds.
 */
static size_t reply_marker(const char *s, unsigned *depth)
{
	const char *const *w;
	size_t n = 0, i;
	unsigned long cnt = 1;

	while (isalpha((unsigned char)s[n]) && n < 8)
		n++;
	if (n == 0)
		return 0;
	for (w = reply_words; *w; w++)
		if (strlen(*w) == n && !strncasecmp(s, *w, n))
			break;
	if (!*w)
		return 0;
	i = n;
	if (s[i] == '[' || s[i] == '(') {
		char close = s[i] == '[' ? ']' : ')';
		size_t j = i + 1;

		cnt = 0;
		while (isdigit((unsigned char)s[j]) && j - i < 6)
			cnt = cnt * 10 + (unsigned long)(s[j++] - '0');
		if (j == i + 1 || s[j] != close)
			return 0;
		i = j + 1;
	}
	if (s[i] != ':')
		return 0;
	if (cnt == 0)
		cnt = 1;
	*depth = (unsigned)cnt;
	return i + 1;
}

/* Parse up to 9 decimal digits; returns 0 on anything else. */
static int parse_uint(const char *s, size_t len, unsigned *out)
{
	unsigned v = 0;
	size_t i;

	if (len == 0 || len > 9)
		return 0;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return 1;
}

static int tok_is(const char *t, size_t len, const char *word)
{
	return strlen(word) == len && !strncasecmp(t, word, len);
}

/* "v3", "V3" */
static int tok_version(const char *t, size_t len, unsigned *v)
{
	return len >= 2 && (t[0] == 'v' || t[0] == 'V') &&
	       parse_uint(t + 1, len - 1, v);
}

/* "2/7", "03/12" */
static int tok_nm(const char *t, size_t len, unsigned *n, unsigned *m)
{
	const char *slash = memchr(t, '/', len);

	if (!slash)
		return 0;
	return parse_uint(t, (size_t)(slash - t), n) &&
	       parse_uint(slash + 1, len - (size_t)(slash - t) - 1, m);
}

static int add_tag(struct subject *s, const char *t, size_t len)
{
	char **tags;

	tags = pt_reallocarray(s->tags, s->ntags + 1, sizeof(*tags));
	if (!tags)
		return PT_ENOMEM;
	s->tags = tags;
	tags[s->ntags] = pt_strndup(t, len);
	if (!tags[s->ntags])
		return PT_ENOMEM;
	s->ntags++;
	return 0;
}

static int classify(struct subject *s, const char *t, size_t len)
{
	unsigned v, n, m;

	if (tok_is(t, len, "patch")) {
		s->is_patch = 1;
	} else if (len > 5 && !strncasecmp(t, "patch", 5) &&
		   tok_version(t + 5, len - 5, &v)) {
		/* "PATCHv2" */
		s->is_patch = 1;
		s->version = v;
	} else if (tok_is(t, len, "rfc")) {
		s->is_rfc = 1;
	} else if (len > 3 && !strncasecmp(t, "rfc", 3) &&
		   tok_version(t + 3, len - 3, &v)) {
		s->is_rfc = 1;
		s->version = v;
	} else if (tok_is(t, len, "resend")) {
		s->is_resend = 1;
	} else if (tok_is(t, len, "autosel")) {
		s->is_autosel = 1;
	} else if (tok_is(t, len, "pull")) {
		s->is_pull = 1;
	} else if (tok_is(t, len, "git")) {
		/* "[GIT PULL]": the word carries nothing by itself */
	} else if (tok_version(t, len, &v)) {
		s->version = v;
	} else if (tok_nm(t, len, &n, &m)) {
		s->number = n;
		s->total = m;
	} else {
		return add_tag(s, t, len);
	}
	return 0;
}

/*
 * The bracket group starting at s[0] == '['; nested brackets are part of
 * the group.  Returns the length up to and with the closing ']', or 0
 * when it is not closed.
 */
static size_t bracket_len(const char *s)
{
	size_t i, depth = 0;

	for (i = 0; s[i]; i++) {
		if (s[i] == '[')
			depth++;
		else if (s[i] == ']' && --depth == 0)
			return i + 1;
	}
	return 0;
}

static int is_sep(int c)
{
	return is_ws(c) || c == ',' || c == '[' || c == ']';
}

static int parse_group(struct subject *s, const char *g, size_t len,
		       unsigned *ntok)
{
	size_t i = 0, start;
	int rc;

	while (i < len) {
		while (i < len && is_sep((unsigned char)g[i]))
			i++;
		start = i;
		while (i < len && !is_sep((unsigned char)g[i]))
			i++;
		if (i == start)
			break;
		if (++*ntok > PT_MAX_PREFIXES)
			return 0;
		rc = classify(s, g + start, i - start);
		if (rc)
			return rc;
	}
	return 0;
}

int subject_parse(struct subject *out, const char *str, size_t len)
{
	const char *p, *end;
	unsigned ntok = 0, groups = 0, depth;
	size_t n;
	int rc = PT_ENOMEM;

	memset(out, 0, sizeof(*out));
	out->version = 1;
	out->raw = unfold(str, len);
	if (!out->raw)
		goto out;
	p = out->raw;
	for (;;) {
		while (is_ws((unsigned char)*p))
			p++;
		if (groups >= PT_MAX_PREFIXES || ntok >= PT_MAX_PREFIXES)
			break;
		if ((n = reply_marker(p, &depth)) > 0) {
			if (out->reply_depth < UINT_MAX - depth)
				out->reply_depth += depth;
			p += n;
			groups++;
			continue;
		}
		if (*p == '[' && (n = bracket_len(p)) > 0) {
			rc = parse_group(out, p + 1, n - 2, &ntok);
			if (rc)
				goto out;
			p += n;
			groups++;
			continue;
		}
		break;
	}
	end = p + strlen(p);
	while (end > p && is_ws((unsigned char)end[-1]))
		end--;
	out->clean = pt_strndup(p, (size_t)(end - p));
	if (!out->clean)
		goto out;
	out->is_cover = out->number == 0 && out->total > 0;
	rc = 0;
out:
	if (rc)
		subject_clear(out);
	return rc;
}

void subject_clear(struct subject *s)
{
	size_t i;

	if (!s)
		return;
	free(s->raw);
	free(s->clean);
	for (i = 0; i < s->ntags; i++)
		free(s->tags[i]);
	free(s->tags);
	memset(s, 0, sizeof(*s));
}

char *subject_normalise(const char *clean)
{
	struct buf b = BUF_INIT;
	const char *p;
	int space = 0;

	if (!clean)
		return NULL;
	for (p = clean; *p; p++) {
		if (is_ws((unsigned char)*p)) {
			space = b.len > 0;
			continue;
		}
		if ((space && buf_addch(&b, ' ')) ||
		    buf_addch(&b, tolower((unsigned char)*p))) {
			buf_free(&b);
			return NULL;
		}
		space = 0;
	}
	return buf_detach(&b, NULL);
}

size_t subject_component(const char *subject)
{
	size_t n;

	if (!subject)
		return 0;
	for (n = 0; subject[n] && subject[n] != ' ' && subject[n] != ':'; n++)
		;
	return n && subject[n] == ':' && subject[n + 1] == ' ' ? n : 0;
}
