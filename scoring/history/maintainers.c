/*
 * maintainers.c - parsing MAINTAINERS and matching files to its sections
 * the way scripts/get_maintainer.pl does (see maintainers.h).  The
 * script turns F:/X: values into regexes ('.' literal, '*' to ".*", '?'
 * to ".") matched with a leading ^ only; here the same globs are matched
 * directly, other characters literally.  It owns struct maint.
 */
#include "scoring/history/maintainers.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAINT_MAX_LINES 1000000u
#define MAINT_MAX_REGEX 512u	     /* bytes of one N: regex */
#define MAINT_MAX_REGEX_COST 4096u   /* its size once regcomp expands it */
#define MAINT_MAX_REGEX_TOTAL 65536u /* the sum over one file */
#define MAINT_MAX_REGEX_NEST 2u	     /* quantifiers applied to quantifiers */
#define MAINT_MAX_REGEX_QUANT 8u     /* quantifiers in one regex */

static void strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void section_clear(struct maint_section *s)
{
	size_t i;

	free(s->name);
	strv_free(s->people, s->npeople);
	free(s->is_reviewer);
	strv_free(s->lists, s->nlists);
	free(s->status);
	for (i = 0; i < s->nf; i++)
		free(s->f[i].glob);
	for (i = 0; i < s->nx; i++)
		free(s->x[i].glob);
	free(s->f);
	free(s->x);
	for (i = 0; i < s->nn; i++)
		regfree(&s->n[i]);
	free(s->n);
	free(s->nseq);
	strv_free(s->keywords, s->nk);
}

void maint_free(struct maint *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		section_clear(&m->s[i]);
	free(m->s);
	free(m);
}

/* Grow *v (of element size sz) to hold n + 1 elements. */
static int grow(void *vp, size_t n, size_t sz)
{
	void **v = vp;
	void *p;

	if (n & (n - 1) && n)
		return 0; /* capacity is the next power of two */
	p = pt_reallocarray(*v, n ? n * 2 : 1, sz);
	if (!p)
		return PT_ENOMEM;
	*v = p;
	return 0;
}

static int strv_add(char ***v, size_t *n, const char *s, size_t len)
{
	char *c;

	if (grow(v, *n, sizeof(**v)))
		return PT_ENOMEM;
	c = pt_strndup(s, len);
	if (!c)
		return PT_ENOMEM;
	(*v)[(*n)++] = c;
	return 0;
}

static int slashes(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '/';
	return n;
}

/*
 * ^glob as a prefix of s: the glob is used up before or at the end of s.
 * Only the last '*' is ever retried, one more byte of s each time: when
 * a later part fails at every tail, an earlier star taking more cannot
 * help, so the match is O(len(glob) * len(s)) however many stars.
 */
static int prefix_match(const char *g, const char *s)
{
	const char *star = NULL, *tail = NULL;

	for (;;) {
		if (!*g)
			return 1;
		if (*g == '*') {
			star = ++g;
			tail = s;
		} else if (*s && (*g == '?' || *g == *s)) {
			g++;
			s++;
		} else if (star && *tail) {
			g = star;
			s = ++tail;
		} else {
			return 0;
		}
	}
}

int maint_pattern_match(const char *file, const char *glob)
{
	size_t gl = strlen(glob);

	if (!prefix_match(glob, file))
		return 0;
	if (gl && glob[gl - 1] == '/')
		return 1;
	return slashes(file) == slashes(glob);
}

static int add_pattern(struct maint_pat **v, size_t *n, const char *val,
		       size_t len, int seq, maint_isdir_fn isdir, void *ctx)
{
	struct maint_pat *p;
	struct buf b = BUF_INIT;
	int rc, dirlike;

	if (grow(v, *n, sizeof(**v)))
		return PT_ENOMEM;
	rc = buf_add(&b, val, len);
	/* get_maintainer.pl: `-d` of the converted value, so no . * ? */
	dirlike = len && val[len - 1] != '/' && !memchr(val, '.', len) &&
		  !memchr(val, '*', len) && !memchr(val, '?', len);
	if (!rc && dirlike && isdir && isdir(b.ptr, ctx) == 1)
		rc = buf_addch(&b, '/');
	if (rc) {
		buf_free(&b);
		return rc;
	}
	p = &(*v)[(*n)++];
	p->maybe_dir = dirlike && !isdir;
	p->lit = strcspn(b.ptr, "*?");
	p->depth = slashes(b.ptr) + (b.ptr[b.len - 1] != '/');
	if (b.ptr[0] == '*')
		p->depth = -1;
	p->glob = buf_detach(&b, NULL);
	p->seq = seq;
	return 0;
}

/* What regex_cost keeps for each open group. */
struct rx_group {
	size_t sum;	    /* size of the group so far, once expanded */
	size_t last;	    /* of its last part, what a quantifier takes */
	unsigned nest;	    /* deepest nesting of quantifiers in it */
	unsigned last_nest; /* of its last part */
};

/*
 * The factor of the quantifier at re[*i] (1 for '*' and '?', which
 * regcomp does not copy), moving *i to its end; 0 when there is none.
 */
static size_t quantifier(const char *re, size_t *i)
{
	unsigned long m;
	char *end;

	if (re[*i] == '*' || re[*i] == '?')
		return 1;
	if (re[*i] == '+')
		return 2;
	if (re[*i] != '{' ||
	    !(isdigit((unsigned char)re[*i + 1]) || re[*i + 1] == ','))
		return 0;
	m = strtoul(re + *i + 1, &end, 10);
	if (*end == ',')
		m = isdigit((unsigned char)end[1]) ? strtoul(end + 1, &end, 10)
						   : m + 1;
	*i = (size_t)(end - re);
	if (m > MAINT_MAX_REGEX_COST)
		return MAINT_MAX_REGEX_COST + 1;
	return m ? m : 1;
}

/* Move *i to the end of the atom at re[*i]; 0 for a backreference. */
static int skip_atom(const char *re, size_t len, size_t *i)
{
	if (re[*i] == '\\' && *i + 1 < len)
		return !(re[++*i] >= '1' && re[*i] <= '9');
	if (re[*i] != '[')
		return 1;
	/* a bracket expression; a ']' first is in it */
	*i += *i + 1 < len && re[*i + 1] == '^';
	*i += *i + 1 < len && re[*i + 1] == ']';
	while (*i + 1 < len && re[*i + 1] != ']')
		++*i;
	++*i;
	return 1;
}

/*
 * The size of re once regcomp has expanded it, 0 when glibc could not
 * compile and run it in reasonable time and memory.  A backreference
 * makes regexec exponential ("(.*)(.*)\2\1z").  regcomp copies what a
 * bound or a '+' applies to ("x{3}" is "xxx", "x+" is "xx*"), so nested
 * ones multiply: "((a{255}){255}){100}" or an 'a' and 125 '+' want
 * gigabytes.  And regexec's states explode with quantifiers over what
 * can match nothing: nested three deep ("x*+++") or many in a row
 * ("(x?|y*)+" 15 times takes 7 s and 600 MB), so their nesting and
 * number are bounded too (MAINTAINERS' own N: lines have a few).  The
 * size estimate: an atom is 1, a group the sum of its parts, a
 * quantifier multiplies the last part.
 */
static size_t regex_cost(const char *re, size_t len)
{
	struct rx_group g[MAINT_MAX_REGEX + 1], *c = g;
	size_t i, f, nq = 0;

	if (len > MAINT_MAX_REGEX)
		return 0;
	memset(c, 0, sizeof(*c));
	for (i = 0; i < len; i++) {
		if (re[i] == '(') {
			memset(++c, 0, sizeof(*c));
			continue;
		}
		if (re[i] == ')' && c > g) {
			c--;
			c->sum += c[1].sum;
			c->last = c[1].sum;
			c->last_nest = c[1].nest;
		} else if (re[i] == '|') {
			c->last = c->last_nest = 0;
		} else if ((f = quantifier(re, &i))) {
			if (f > MAINT_MAX_REGEX_COST ||
			    ++c->last_nest > MAINT_MAX_REGEX_NEST ||
			    ++nq > MAINT_MAX_REGEX_QUANT)
				return 0;
			c->sum += c->last * (f - 1);
			c->last *= f;
		} else {
			if (!skip_atom(re, len, &i))
				return 0;
			c->sum++;
			c->last = 1;
			c->last_nest = 0;
		}
		if (c->last_nest > c->nest)
			c->nest = c->last_nest;
		if (c->sum > MAINT_MAX_REGEX_COST)
			return 0;
	}
	return g[0].sum + 1;
}

/*
 * N: is a Perl /x regex: drop unescaped blanks, compile as ERE.  One that
 * does not compile, costs too much, or would take the file's regexes
 * past MAINT_MAX_REGEX_TOTAL is left out.
 */
static int add_regex(struct maint_section *s, size_t *total, const char *val,
		     size_t len, int seq)
{
	struct buf b = BUF_INIT;
	size_t i, cost;
	int rc = 0;

	for (i = 0; i < len && !rc; i++) {
		if (val[i] == '\\' && i + 1 < len) {
			rc = buf_add(&b, val + i, 2);
			i++;
		} else if (!isspace((unsigned char)val[i])) {
			rc = buf_addch(&b, val[i]);
		}
	}
	if (!rc && (grow(&s->n, s->nn, sizeof(*s->n)) ||
		    grow(&s->nseq, s->nn, sizeof(*s->nseq))))
		rc = PT_ENOMEM;
	cost = rc ? 0 : regex_cost(b.ptr, b.len);
	if (cost && *total + cost <= MAINT_MAX_REGEX_TOTAL &&
	    !regcomp(&s->n[s->nn], b.ptr, REG_EXTENDED | REG_NOSUB)) {
		s->nseq[s->nn++] = seq;
		*total += cost;
	}
	buf_free(&b);
	return rc;
}

static int add_person(struct maint_section *s, const char *val, size_t len,
		      int reviewer)
{
	const char *lt = memchr(val, '<', len), *gt;
	size_t i;
	int rc;

	if (lt && (gt = memchr(lt, '>', len - (size_t)(lt - val)))) {
		val = lt + 1;
		len = (size_t)(gt - val);
	} else if (!memchr(val, '@', len)) {
		return 0;
	}
	if (grow(&s->is_reviewer, s->npeople, 1))
		return PT_ENOMEM;
	rc = strv_add(&s->people, &s->npeople, val, len);
	if (rc)
		return rc;
	for (i = 0; i < len; i++)
		s->people[s->npeople - 1][i] = (char)tolower(
			(unsigned char)s->people[s->npeople - 1][i]);
	s->is_reviewer[s->npeople - 1] = (unsigned char)reviewer;
	return 0;
}

static int add_entry(struct maint_section *s, size_t *regex_total, char type,
		     const char *val, size_t len, maint_isdir_fn isdir,
		     void *ctx)
{
	s->nentries++;
	switch (type) {
	case 'M':
	case 'R':
		return add_person(s, val, len, type == 'R');
	case 'L':
		return strv_add(&s->lists, &s->nlists, val, len);
	case 'S':
		free(s->status);
		s->status = pt_strndup(val, len);
		return s->status ? 0 : PT_ENOMEM;
	case 'F':
		return len ? add_pattern(&s->f, &s->nf, val, len, s->nentries,
					 isdir, ctx)
			   : 0;
	case 'X':
		return len ? add_pattern(&s->x, &s->nx, val, len, s->nentries,
					 isdir, ctx)
			   : 0;
	case 'N':
		return len ? add_regex(s, regex_total, val, len, s->nentries)
			   : 0;
	case 'K':
		return strv_add(&s->keywords, &s->nk, val, len);
	default:
		return 0;
	}
}

static int is_type_line(const char *l, size_t n)
{
	return n >= 2 && l[0] >= 'A' && l[0] <= 'Z' && l[1] == ':';
}

static int new_section(struct maint *m, const char *name, size_t nlen)
{
	struct maint_section *s;

	if (grow(&m->s, m->n, sizeof(*m->s)))
		return PT_ENOMEM;
	s = &m->s[m->n];
	memset(s, 0, sizeof(*s));
	s->name = pt_strndup(name ? name : "", name ? nlen : 0);
	if (!s->name)
		return PT_ENOMEM;
	m->n++;
	return 0;
}

static int parse_lines(struct maint *m, const char *text, size_t len,
		       maint_isdir_fn isdir, void *ctx)
{
	const char *p = text, *end = text + len, *name = NULL;
	size_t nlen = 0, nlines = 0, regex_total = 0;
	int in_run = 0, rc = 0;

	while (p < end && !rc) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *v;
		size_t l;

		if (++nlines > MAINT_MAX_LINES)
			return pt_error_set(PT_ETOOBIG, "MAINTAINERS: too "
							"many lines");
		while (le > p && isspace((unsigned char)le[-1]))
			le--;
		l = (size_t)(le - p);
		if (is_type_line(p, l)) {
			if (!in_run)
				rc = new_section(m, name, nlen);
			in_run = 1;
			for (v = p + 2; v < le && isspace((unsigned char)*v);
			     v++)
				;
			if (!rc)
				rc = add_entry(&m->s[m->n - 1], &regex_total,
					       p[0], v, (size_t)(le - v), isdir,
					       ctx);
		} else {
			const char *q = p;

			while (q < le && isspace((unsigned char)*q))
				q++;
			if (q < le && *q != '#') {
				name = p;
				nlen = l;
				in_run = 0;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return rc;
}

int maint_parse(struct maint **out, const char *text, size_t len,
		maint_isdir_fn isdir, void *ctx)
{
	struct maint *m;
	int rc;

	*out = NULL;
	m = pt_calloc(1, sizeof(*m));
	if (!m)
		return PT_ENOMEM;
	rc = parse_lines(m, text, len, isdir, ctx);
	if (rc) {
		maint_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

static int pat_match(const struct maint_pat *p, const char *file)
{
	if (p->lit && strncmp(file, p->glob, p->lit))
		return 0;
	if (p->maybe_dir && file[p->lit] == '/')
		return 1;
	return maint_pattern_match(file, p->glob);
}

/*
 * The section's depth for PATH, or NO_MATCH: as in get_maintainer.pl,
 * the last matching F: (its depth) or N: (0) in file order wins, and a
 * matching X: drops the section.
 */
#define NO_MATCH (-1000)
static int section_depth(const struct maint_section *s, const char *path)
{
	size_t i;
	int depth = NO_MATCH, seq = -1;

	for (i = 0; i < s->nx; i++)
		if (pat_match(&s->x[i], path))
			return NO_MATCH;
	for (i = 0; i < s->nf; i++)
		if (s->f[i].seq > seq && pat_match(&s->f[i], path)) {
			depth = s->f[i].depth;
			seq = s->f[i].seq;
		}
	for (i = 0; i < s->nn; i++)
		if (s->nseq[i] > seq && !regexec(&s->n[i], path, 0, NULL, 0)) {
			depth = 0;
			seq = s->nseq[i];
		}
	return depth;
}

void maint_match(const struct maint *m, const char *path, struct maint_hit *out,
		 size_t max, size_t *n)
{
	size_t i, j;

	*n = 0;
	for (i = 0; i < m->n; i++) {
		int d = section_depth(&m->s[i], path);

		if (d == NO_MATCH)
			continue;
		/* insertion keeps deepest first, file order among ties */
		for (j = *n; j > 0 && out[j - 1].depth < d; j--)
			if (j < max)
				out[j] = out[j - 1];
		if (j < max) {
			out[j].section = i;
			out[j].depth = d;
			if (*n < max)
				(*n)++;
		}
	}
}

int maint_has_person(const struct maint *m, size_t i, const char *email)
{
	const struct maint_section *s;
	size_t k;

	if (i >= m->n)
		return 0;
	s = &m->s[i];
	for (k = 0; k < s->npeople; k++)
		if (!strcmp(s->people[k], email))
			return 1;
	return 0;
}
