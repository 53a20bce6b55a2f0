/*
 * trailer.c - the trailer block of a commit message or changelog
 * (Signed-off-by, Reviewed-by, Fixes, Cc: stable, Link, ...), found by
 * the rules of git's trailer.c (interpret-trailers, %(trailers)): only
 * the last paragraph can be one; it is a trailer block when every line is
 * a "Key: value" trailer, or when one line has a recognised key (git's
 * own "Signed-off-by: " and "(cherry picked from commit ", plus the
 * kernel's keys, as if configured with trailer.<key>.*) and at least a
 * quarter of its lines are trailers.  The key is a token of letters,
 * digits and '-', optionally followed by blanks before the ':'.  Lines
 * starting with a blank continue the trailer above.  Unlike git, a line
 * whose ':' starts "://" (a bare URL) is not taken as a trailer.  It
 * owns struct trailer and the person/Fixes/stable splitting of values.
 */
#include "scoring/patch/trailer.h"
#include "scoring/patch/patch.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct tline {
	const char *s;
	size_t len; /* without the LF and a CR before it */
};

/* Each kind: its canonical key, its JSON name and attributes. */
static const struct kind_def {
	const char *name;
	const char *json;
	unsigned flags;
} kinds[TRAILER_NKINDS] = {
	[TRAILER_OTHER] = { NULL, "other", 0 },
	[TRAILER_SIGNED_OFF] = { TRAILER_KEY_SIGNED_OFF, "signed-off-by",
				 TRAILER_F_PERSON },
	[TRAILER_REVIEWED] = { TRAILER_KEY_REVIEWED, "reviewed-by",
			       TRAILER_F_PERSON | TRAILER_F_REVIEW },
	[TRAILER_ACKED] = { TRAILER_KEY_ACKED, "acked-by",
			    TRAILER_F_PERSON | TRAILER_F_REVIEW },
	[TRAILER_TESTED] = { TRAILER_KEY_TESTED, "tested-by",
			     TRAILER_F_PERSON | TRAILER_F_REVIEW },
	[TRAILER_REPORTED] = { TRAILER_KEY_REPORTED, "reported-by",
			       TRAILER_F_PERSON },
	[TRAILER_SUGGESTED] = { TRAILER_KEY_SUGGESTED, "suggested-by",
				TRAILER_F_PERSON },
	[TRAILER_FIXES] = { TRAILER_KEY_FIXES, "fixes", 0 },
	[TRAILER_CC] = { TRAILER_KEY_CC, "cc", TRAILER_F_PERSON },
	[TRAILER_LINK] = { TRAILER_KEY_LINK, "link", 0 },
	[TRAILER_CLOSES] = { TRAILER_KEY_CLOSES, "closes", 0 },
	[TRAILER_CO_DEVELOPED] = { TRAILER_KEY_CO_DEVELOPED, "co-developed-by",
				   TRAILER_F_PERSON },
};

#define IN_BLOCK 1u /* recognised in git's trailer block */
#define IN_REPLY 2u /* a review act in a list reply */

/*
 * Every key recognised, and where.  In the block the OTHER ones only
 * count for finding it; in a reply the act is the kind's name, or the
 * key when it has none.
 */
static const struct key_def {
	const char *key;
	enum trailer_kind kind;
	unsigned where;
} known_keys[] = {
	{ TRAILER_KEY_SIGNED_OFF, TRAILER_SIGNED_OFF, IN_BLOCK },
	{ TRAILER_KEY_REVIEWED, TRAILER_REVIEWED, IN_BLOCK | IN_REPLY },
	{ TRAILER_KEY_ACKED, TRAILER_ACKED, IN_BLOCK | IN_REPLY },
	{ TRAILER_KEY_TESTED, TRAILER_TESTED, IN_BLOCK | IN_REPLY },
	{ TRAILER_KEY_REPORTED, TRAILER_REPORTED, IN_BLOCK | IN_REPLY },
	{ "Reported-and-tested-by", TRAILER_REPORTED, IN_BLOCK },
	{ TRAILER_KEY_SUGGESTED, TRAILER_SUGGESTED, IN_BLOCK | IN_REPLY },
	{ TRAILER_KEY_FIXES, TRAILER_FIXES, IN_BLOCK },
	{ TRAILER_KEY_CC, TRAILER_CC, IN_BLOCK },
	{ TRAILER_KEY_LINK, TRAILER_LINK, IN_BLOCK },
	{ TRAILER_KEY_CLOSES, TRAILER_CLOSES, IN_BLOCK },
	{ TRAILER_KEY_CO_DEVELOPED, TRAILER_CO_DEVELOPED, IN_BLOCK },
	{ "Co-authored-by", TRAILER_OTHER, IN_BLOCK },
	{ "Requested-by", TRAILER_OTHER, IN_BLOCK },
	{ "Helped-by", TRAILER_OTHER, IN_BLOCK },
	{ "Debugged-by", TRAILER_OTHER, IN_BLOCK },
	{ "Analyzed-by", TRAILER_OTHER, IN_BLOCK },
	{ "Bisected-by", TRAILER_OTHER, IN_BLOCK },
	{ "Message-ID", TRAILER_OTHER, IN_BLOCK },
	{ "Change-Id", TRAILER_OTHER, IN_BLOCK },
	{ "BugLink", TRAILER_OTHER, IN_BLOCK },
	{ "Bug", TRAILER_OTHER, IN_BLOCK },
	{ TRAILER_KEY_NACKED, TRAILER_OTHER, IN_REPLY },
	{ "Reviewed-and-tested-by", TRAILER_REVIEWED, IN_REPLY },
	{ NULL, TRAILER_OTHER, 0 },
};

static int is_blank_ch(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
	       c == '\f';
}

static int is_blank_line(const struct tline *l)
{
	size_t i;

	for (i = 0; i < l->len; i++)
		if (!is_blank_ch((unsigned char)l->s[i]))
			return 0;
	return 1;
}

/* The line that ends just before msg[end] ('\n' or the end). */
static struct tline line_before(const char *msg, size_t end)
{
	struct tline l;
	size_t bol = end;

	while (bol > 0 && msg[bol - 1] != '\n')
		bol--;
	l.s = msg + bol;
	l.len = end - bol;
	if (l.len && l.s[l.len - 1] == '\r')
		l.len--;
	return l;
}

/*
 * git's find_separator() for ":": the key is alphanumerics and '-', then
 * optional blanks, then ':'.  Returns the position of ':' or -1.
 */
static long find_sep(const struct tline *l)
{
	int ws = 0;
	size_t i;

	for (i = 0; i < l->len; i++) {
		unsigned char c = (unsigned char)l->s[i];

		if (c == ':') {
			if (i == 0 || (i + 2 < l->len && l->s[i + 1] == '/' &&
				       l->s[i + 2] == '/'))
				return -1;
			return (long)i;
		}
		if (!ws && (isalnum(c) || c == '-'))
			continue;
		if (i > 0 && (c == ' ' || c == '\t')) {
			ws = 1;
			continue;
		}
		break;
	}
	return -1;
}

static size_t key_len(const struct tline *l, long sep)
{
	size_t n = (size_t)sep;

	while (n > 0 && (l->s[n - 1] == ' ' || l->s[n - 1] == '\t'))
		n--;
	return n;
}

/* The block's key k (n bytes), or NULL when it is not recognised. */
static const struct key_def *lookup_key(const char *k, size_t n)
{
	const struct key_def *kk;

	for (kk = known_keys; kk->key; kk++)
		if ((kk->where & IN_BLOCK) && strlen(kk->key) == n &&
		    !strncasecmp(kk->key, k, n))
			return kk;
	return NULL;
}

enum trailer_kind trailer_kind_of(const char *key)
{
	const struct key_def *kk = key ? lookup_key(key, strlen(key)) : NULL;

	return kk ? kk->kind : TRAILER_OTHER;
}

const char *trailer_kind_name(enum trailer_kind k)
{
	return (unsigned)k < TRAILER_NKINDS ? kinds[k].name : NULL;
}

const char *trailer_kind_json(enum trailer_kind k)
{
	return (unsigned)k < TRAILER_NKINDS ? kinds[k].json : "other";
}

unsigned trailer_kind_flags(enum trailer_kind k)
{
	return (unsigned)k < TRAILER_NKINDS ? kinds[k].flags : 0;
}

const char *trailer_reply_act(size_t i, const char **key)
{
	const struct key_def *kk;

	for (kk = known_keys; kk->key; kk++) {
		if (!(kk->where & IN_REPLY) || i--)
			continue;
		*key = kk->key;
		return kk->kind ? kinds[kk->kind].name : kk->key;
	}
	*key = NULL;
	return NULL;
}

static int has_prefix(const struct tline *l, const char *p)
{
	size_t n = strlen(p);

	return l->len >= n && !memcmp(l->s, p, n);
}

/*
 * git's find_trailer_block_start() over the last paragraph, which ends at
 * content_end.  Returns the offset where the block starts, or
 * content_end when the paragraph is not a trailer block.
 */
static size_t find_block(const char *msg, size_t content_end)
{
	size_t end = content_end, start, bol;
	unsigned long trailers = 0, others = 0, maybe_cont = 0;
	int recognised = 0;
	struct tline l;
	long sep;

	for (;;) {
		l = line_before(msg, end);
		if (is_blank_line(&l)) {
			start = end + 1;
			break;
		}
		if (l.s[0] == '#') {
			others += maybe_cont;
			maybe_cont = 0;
		} else if (has_prefix(&l, "Signed-off-by: ") ||
			   has_prefix(&l, "(cherry picked from commit ")) {
			trailers++;
			maybe_cont = 0;
			recognised = 1;
		} else if ((sep = find_sep(&l)) >= 1 &&
			   !is_blank_ch((unsigned char)l.s[0])) {
			trailers++;
			maybe_cont = 0;
			if (lookup_key(l.s, key_len(&l, sep)))
				recognised = 1;
		} else if (is_blank_ch((unsigned char)l.s[0])) {
			maybe_cont++;
		} else {
			others += 1 + maybe_cont;
			maybe_cont = 0;
		}
		bol = (size_t)(l.s - msg);
		if (bol == 0) {
			start = 0;
			break;
		}
		end = bol - 1;
	}
	others += maybe_cont;
	if (recognised && trailers * 3 >= others)
		return start;
	if (trailers && !others)
		return start;
	return content_end;
}

/* A person's kind, or any "*-by" key (Helped-by, Nacked-by, ...). */
static int is_person_key(const struct trailer *t)
{
	size_t n = strlen(t->key);

	return (trailer_kind_flags(t->kind) & TRAILER_F_PERSON) ||
	       (n > 3 && !strcasecmp(t->key + n - 3, "-by"));
}

static void trim(const char **s, const char **e)
{
	while (*s < *e && is_blank_ch((unsigned char)**s))
		(*s)++;
	while (*e > *s && is_blank_ch((unsigned char)(*e)[-1]))
		(*e)--;
}

/* NULL (no error) for an empty range. */
static int dup_range(char **out, const char *s, const char *e)
{
	trim(&s, &e);
	*out = NULL;
	if (s == e)
		return 0;
	*out = pt_strndup(s, (size_t)(e - s));
	return *out ? 0 : PT_ENOMEM;
}

/* A display name: surrounding quotes removed, \" and \\ unescaped. */
static int dup_name(char **out, const char *s, const char *e)
{
	char *p, *q;
	int rc;

	trim(&s, &e);
	if (e - s >= 2 && *s == '"' && e[-1] == '"') {
		s++;
		e--;
	}
	rc = dup_range(out, s, e);
	if (rc || !*out)
		return rc;
	for (p = q = *out; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		*q++ = *p;
	}
	*q = '\0';
	return 0;
}

static int dup_email(char **out, const char *s, const char *e)
{
	char *p;
	int rc = dup_range(out, s, e);

	if (!rc && *out)
		for (p = *out; *p; p++)
			*p = (char)tolower((unsigned char)*p);
	return rc;
}

/* '#' after a blank starts a comment: "stable@vger.kernel.org # 5.10+" */
static const char *comment_start(const char *v)
{
	const char *p;

	for (p = v; *p; p++)
		if (*p == '#' && p > v && is_blank_ch((unsigned char)p[-1]))
			return p;
	return NULL;
}

static int split_person(struct trailer *t)
{
	const char *v = t->value, *end, *lt, *gt, *at, *s, *e;
	const char *hash = comment_start(v);
	int rc;

	end = hash ? hash : v + strlen(v);
	if (hash) {
		rc = dup_range(&t->comment, hash + 1, v + strlen(v));
		if (rc)
			return rc;
	}
	lt = memchr(v, '<', (size_t)(end - v));
	gt = lt ? memchr(lt, '>', (size_t)(end - lt)) : NULL;
	if (lt && gt) {
		rc = dup_name(&t->name, v, lt);
		return rc ? rc : dup_email(&t->email, lt + 1, gt);
	}
	at = memchr(v, '@', (size_t)(end - v));
	if (!at)
		return dup_name(&t->name, v, end);
	/* a bare address: the blank-delimited word around '@' */
	for (s = at; s > v && !is_blank_ch((unsigned char)s[-1]); s--)
		;
	for (e = at; e < end && !is_blank_ch((unsigned char)*e); e++)
		;
	rc = dup_name(&t->name, v, s);
	return rc ? rc : dup_email(&t->email, s, e);
}

static int is_hex_word(const char *s, size_t n)
{
	size_t i;

	if (n < 4 || n > 64)
		return 0;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* The closing mate of a quote or bracket written around an id, or 0. */
static char id_close(char c)
{
	switch (c) {
	case '<':
		return '>';
	case '[':
		return ']';
	case '"':
	case '\'':
		return c;
	default:
		return 0;
	}
}

/* Keywords before the id: "commit ", and a doubled "Fixes:". */
static const char *skip_keywords(const char *v, const char *end)
{
	for (;;) {
		while (v < end && is_blank_ch((unsigned char)*v))
			v++;
		if (end - v >= 6 && !strncasecmp(v, "Fixes:", 6))
			v += 6;
		else if (end - v >= 7 && !strncasecmp(v, "commit ", 7))
			v += 7;
		else
			return v;
	}
}

/*
 * The id at V: hex digits, bare or inside <>, [], "" or '', maybe with a
 * ':' after it; it must end at a blank, '(' or a quote.  An id that is
 * wrapped or followed by ':' needs 7 digits ("cafe: fix" is a subject).
 * Returns the digits' length (0: no id), *digits where they start and
 * *after what follows.
 */
static size_t take_id(const char *v, const char *end, const char **digits,
		      const char **after)
{
	char close = v < end ? id_close(*v) : 0;
	const char *s = close ? v + 1 : v, *w = s;
	size_t n;
	int marked = close != 0;

	while (w < end && isxdigit((unsigned char)*w))
		w++;
	n = (size_t)(w - s);
	if (!is_hex_word(s, n))
		return 0;
	if (close && (w == end || *w++ != close))
		return 0;
	if (w < end && *w == ':') {
		w++;
		marked = 1;
	}
	if (marked && n < 7)
		return 0;
	if (w < end && !is_blank_ch((unsigned char)*w) && *w != '(' &&
	    *w != '"' && (unsigned char)*w != 0xe2)
		return 0;
	*digits = s;
	*after = w;
	return n;
}

/* A curly quote (U+2018, U+2019, U+201C, U+201D) in UTF-8 at s. */
static int curly_at(const char *s, const char *end)
{
	return end - s >= 3 && (unsigned char)s[0] == 0xe2 &&
	       (unsigned char)s[1] == 0x80 &&
	       ((unsigned char)s[2] == 0x98 || (unsigned char)s[2] == 0x99 ||
		(unsigned char)s[2] == 0x9c || (unsigned char)s[2] == 0x9d);
}

/* One straight quote, then one curly quote, off each end. */
static void strip_quotes(const char **v, const char **end)
{
	trim(v, end);
	if (*v < *end && **v == '"')
		(*v)++;
	if (*end > *v && (*end)[-1] == '"')
		(*end)--;
	trim(v, end);
	if (curly_at(*v, *end))
		*v += 3;
	if (*end - *v >= 3 && curly_at(*end - 3, *end))
		*end -= 3;
	trim(v, end);
}

/*
 * Fixes: <sha> ("subject"), and the forms real trees write: the id in
 * <> or quotes, a ':' after it, "commit " or a second "Fixes:" before it
 * (see take_id).  The subject is what lies between the first '(' and the
 * last ')'; without parentheses, the rest of the value; then one pair of
 * straight quotes and one of curly quotes are removed.  A sha is only
 * taken when it is 4 to 64 hex digits (then it is kept as written).
 */
int trailer_fixes_split(const char *value, char **sha, char **subject)
{
	const char *v = value, *end = v + strlen(v), *d = NULL, *w = NULL;
	const char *close;
	size_t n;
	int rc;

	*sha = *subject = NULL;
	v = skip_keywords(v, end);
	n = take_id(v, end, &d, &w);
	if (n) {
		rc = dup_range(sha, d, d + n);
		if (rc)
			return rc;
		v = w;
	}
	while (v < end && is_blank_ch((unsigned char)*v))
		v++;
	if (*v == '(') {
		v++;
		for (close = end; close > v && close[-1] != ')'; close--)
			;
		if (close > v)
			end = close - 1;
	}
	strip_quotes(&v, &end);
	rc = dup_range(subject, v, end);
	if (rc) {
		free(*sha);
		*sha = NULL;
	}
	return rc;
}

static int split_fixes(struct trailer *t)
{
	return trailer_fixes_split(t->value, &t->fixes_sha, &t->fixes_subject);
}

static int is_stable_addr(const char *email)
{
	return email && (!strcmp(email, "stable@vger.kernel.org") ||
			 !strcmp(email, "stable@kernel.org"));
}

/* Fill the derived fields once the value is complete. */
static int finish(struct trailer *t)
{
	int rc = 0;

	t->kind = trailer_kind_of(t->key);
	if (is_person_key(t))
		rc = split_person(t);
	else if (t->kind == TRAILER_FIXES)
		rc = split_fixes(t);
	else if (t->kind == TRAILER_LINK || t->kind == TRAILER_CLOSES) {
		const char *hash = comment_start(t->value);

		if (hash)
			rc = dup_range(&t->comment, hash + 1,
				       hash + strlen(hash));
	}
	if (t->kind == TRAILER_CC)
		t->is_stable = is_stable_addr(t->email);
	return rc;
}

static void trailer_clear(struct trailer *t)
{
	free(t->key);
	free(t->value);
	free(t->name);
	free(t->email);
	free(t->comment);
	free(t->fixes_sha);
	free(t->fixes_subject);
	memset(t, 0, sizeof(*t));
}

void trailers_free(struct trailer *t, size_t n)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < n; i++)
		trailer_clear(&t[i]);
	free(t);
}

struct tparse {
	struct trailer *v;
	size_t n, cap;
	struct buf val; /* value of the trailer being read */
	int open;	/* v[n - 1] is still collecting its value */
};

static int close_current(struct tparse *tp)
{
	struct trailer *t;

	if (!tp->open)
		return 0;
	tp->open = 0;
	t = &tp->v[tp->n - 1];
	buf_rtrim(&tp->val);
	t->value = buf_detach(&tp->val, NULL);
	if (!t->value)
		return PT_ENOMEM;
	return finish(t);
}

static int start_trailer(struct tparse *tp, const struct tline *l, long sep)
{
	const char *v = l->s + sep + 1, *e = l->s + l->len;
	struct trailer *t;
	int rc;

	rc = close_current(tp);
	if (rc)
		return rc;
	if (tp->n >= PT_MAX_TRAILERS)
		return pt_error_set(PT_ETOOBIG,
				    "message has more than %u trailers",
				    PT_MAX_TRAILERS);
	if (tp->n == tp->cap) {
		size_t cap = tp->cap ? tp->cap * 2 : 8;

		t = pt_reallocarray(tp->v, cap, sizeof(*t));
		if (!t)
			return PT_ENOMEM;
		tp->v = t;
		tp->cap = cap;
	}
	t = &tp->v[tp->n++];
	memset(t, 0, sizeof(*t));
	t->key = pt_strndup(l->s, key_len(l, sep));
	if (!t->key)
		return PT_ENOMEM;
	tp->open = 1;
	buf_reset(&tp->val);
	trim(&v, &e);
	return buf_add(&tp->val, v, (size_t)(e - v));
}

static int continue_trailer(struct tparse *tp, const struct tline *l)
{
	const char *s = l->s, *e = l->s + l->len;
	int rc;

	trim(&s, &e);
	if (s == e)
		return 0;
	if (tp->val.len) {
		rc = buf_addch(&tp->val, ' ');
		if (rc)
			return rc;
	}
	return buf_add(&tp->val, s, (size_t)(e - s));
}

static int parse_block(struct tparse *tp, const char *msg, size_t start,
		       size_t end)
{
	size_t pos = start, eol;
	struct tline l;
	long sep;
	int rc = 0;

	while (pos < end && !rc) {
		const char *nl = memchr(msg + pos, '\n', end - pos);

		eol = nl ? (size_t)(nl - msg) : end;
		l.s = msg + pos;
		l.len = eol - pos;
		if (l.len && l.s[l.len - 1] == '\r')
			l.len--;
		pos = eol + 1;
		if (l.len == 0 || l.s[0] == '#')
			continue;
		if (is_blank_ch((unsigned char)l.s[0])) {
			if (tp->open)
				rc = continue_trailer(tp, &l);
			continue;
		}
		sep = find_sep(&l);
		if (sep >= 1)
			rc = start_trailer(tp, &l, sep);
		else
			rc = close_current(tp);
	}
	return rc ? rc : close_current(tp);
}

/* Offset just after the last non-blank character. */
static size_t rtrim_len(const char *msg, size_t len)
{
	while (len > 0 && is_blank_ch((unsigned char)msg[len - 1]))
		len--;
	return len;
}

int trailers_parse(struct trailer **out, size_t *n, size_t *body_len,
		   const char *msg, size_t len)
{
	struct tparse tp = { NULL, 0, 0, BUF_INIT, 0 };
	size_t content_end, start;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (body_len)
		*body_len = 0;
	content_end = rtrim_len(msg, len);
	if (content_end == 0)
		goto out;
	start = find_block(msg, content_end);
	if (body_len)
		*body_len = rtrim_len(msg, start);
	if (start == content_end)
		goto out;
	rc = parse_block(&tp, msg, start, content_end);
out:
	buf_free(&tp.val);
	if (rc) {
		/* v[n - 1] may be half-built: clear it with the others */
		trailers_free(tp.v, tp.n);
		if (body_len)
			*body_len = 0;
		return rc;
	}
	*out = tp.v;
	*n = tp.n;
	return 0;
}
