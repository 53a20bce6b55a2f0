/*
 * diff.c - a unified diff (as git format-patch, git diff, diff -u and
 * quilt write it, and as mail delivers it) to struct patch_file / hunk /
 * line.  It owns those structs; the lines point into the caller's text.
 * Understood: git's extended headers (modes, new/deleted, similarity,
 * rename/copy from/to, index, binary), C-quoted and space-containing
 * paths, plain "--- a/x" + "+++ b/x" diffs, /dev/null, CRLF text.  A hunk
 * ends when its line counts are used up, so a mail signature ("-- ")
 * after the last hunk is not a removed line; inside a hunk an empty line
 * (a context line whose space a mailer ate) is context.  A hunk cut short
 * (the text ends, or a line that cannot belong to it comes, before its
 * counts are met) is kept with the lines it has and marked truncated:
 * the diff is not rejected, since a quoted or damaged patch is still
 * worth scoring.  Text outside files (cover notes, signatures, "Index:"
 * lines) is skipped.  Limits: PT_MAX_FILES files, PT_MAX_HUNKS hunks,
 * PT_MAX_LINE_LEN per line (PT_ETOOBIG).
 */
#include "scoring/patch/diff.h"
#include "scoring/patch/patch.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct dline {
	const char *s;
	size_t len;  /* without LF (and the CR of a CRLF text) */
	size_t next; /* offset of the following line */
};

enum dstate {
	ST_OUT,	   /* no file open */
	ST_HEADER, /* after "diff --git", before the first hunk */
	ST_FILE,   /* after a hunk of the open file */
};

struct dparse {
	const char *text;
	size_t len, pos;
	size_t lineno;
	int crlf;
	enum dstate st;
	int named; /* the open file had its ---/+++ lines */
	struct patch_file *files;
	size_t nfiles, cap;
	size_t hcap;   /* capacity of the open file's hunks */
	size_t nhunks; /* over all files, for PT_MAX_HUNKS */
};

static int peek(struct dparse *p, struct dline *l)
{
	const char *s = p->text + p->pos, *nl;
	size_t rest = p->len - p->pos;

	if (p->pos >= p->len)
		return 0;
	nl = memchr(s, '\n',
		    rest > PT_MAX_LINE_LEN + 2 ? PT_MAX_LINE_LEN + 2 : rest);
	l->len = nl ? (size_t)(nl - s) : rest;
	if (l->len > PT_MAX_LINE_LEN + 1)
		return pt_error_set(PT_ETOOBIG,
				    "line %zu of the diff is longer than %u "
				    "bytes",
				    p->lineno + 1, PT_MAX_LINE_LEN);
	l->s = s;
	l->next = p->pos + l->len + (nl ? 1 : 0);
	if (p->crlf && l->len && s[l->len - 1] == '\r')
		l->len--;
	if (l->len > PT_MAX_LINE_LEN)
		return pt_error_set(PT_ETOOBIG,
				    "line %zu of the diff is longer than %u "
				    "bytes",
				    p->lineno + 1, PT_MAX_LINE_LEN);
	return 1;
}

static void consume(struct dparse *p, const struct dline *l)
{
	p->pos = l->next;
	p->lineno++;
}

static int starts(const struct dline *l, const char *pfx)
{
	size_t n = strlen(pfx);

	return l->len >= n && !memcmp(l->s, pfx, n);
}

/* Header lines never end in a meaningful CR, whatever the text's mode. */
static size_t hlen(const struct dline *l)
{
	size_t n = l->len;

	while (n && (l->s[n - 1] == '\r' || l->s[n - 1] == ' '))
		n--;
	return n;
}

/* ---- paths --------------------------------------------------------- */

/*
 * git's C-style quoting: "a/foo\tbar" with \a \b \t \n \v \f \r \" \\ and
 * three-digit octal.  s[0] is the opening quote; *used gets the length
 * consumed with both quotes.  Returns 1 (and no string) when malformed.
 */
static int unquote_c(char **out, const char *s, size_t len, size_t *used)
{
	struct buf b = BUF_INIT;
	size_t i;
	int c;

	*out = NULL;
	for (i = 1; i < len; i++) {
		c = (unsigned char)s[i];
		if (c == '"') {
			*used = i + 1;
			*out = buf_detach(&b, NULL);
			return *out ? 0 : PT_ENOMEM;
		}
		if (c == '\\') {
			if (++i >= len)
				break;
			switch (s[i]) {
			case 'a':
				c = '\a';
				break;
			case 'b':
				c = '\b';
				break;
			case 't':
				c = '\t';
				break;
			case 'n':
				c = '\n';
				break;
			case 'v':
				c = '\v';
				break;
			case 'f':
				c = '\f';
				break;
			case 'r':
				c = '\r';
				break;
			case '"':
				c = '"';
				break;
			case '\\':
				c = '\\';
				break;
			default:
				if (i + 2 < len && s[i] >= '0' && s[i] <= '3' &&
				    s[i + 1] >= '0' && s[i + 1] <= '7' &&
				    s[i + 2] >= '0' && s[i + 2] <= '7') {
					c = (s[i] - '0') * 64 +
					    (s[i + 1] - '0') * 8 +
					    (s[i + 2] - '0');
					i += 2;
				} else {
					goto bad;
				}
			}
		}
		if (buf_addch(&b, c)) {
			buf_free(&b);
			return PT_ENOMEM;
		}
	}
bad:
	buf_free(&b);
	return 1;
}

/* Strip git's a/ or b/ prefix (patch -p1): everything up to the first /. */
static const char *strip_p1(const char *s)
{
	const char *slash = strchr(s, '/');

	return slash && slash[1] ? slash + 1 : s;
}

/*
 * A path as written after "--- ", "+++ ", "rename from " etc.: C-quoted,
 * or up to a TAB (diff -u's timestamp; git's marker for names with
 * spaces).  strip: remove the a/ b/ prefix.  *out is NULL for /dev/null.
 */
static int parse_path(char **out, const char *s, size_t len, int strip)
{
	char *raw = NULL;
	const char *tab;
	size_t used;
	int rc;

	*out = NULL;
	if (len && s[0] == '"') {
		rc = unquote_c(&raw, s, len, &used);
		if (rc < 0)
			return rc;
	}
	if (!raw) {
		/* not quoted, or a broken quote taken as written */
		tab = memchr(s, '\t', len);
		if (tab)
			len = (size_t)(tab - s);
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\r'))
			len--;
		raw = pt_strndup(s, len);
		if (!raw)
			return PT_ENOMEM;
	}
	if (!strcmp(raw, "/dev/null") || raw[0] == '\0') {
		free(raw);
		return 0;
	}
	if (strip) {
		const char *p = strip_p1(raw);

		if (p != raw)
			memmove(raw, p, strlen(p) + 1);
	}
	*out = raw;
	return 0;
}

static int set_path(char **dst, char *val)
{
	free(*dst);
	*dst = val;
	return 0;
}

/*
 * "diff --git a/foo bar b/foo bar": without quotes the split is
 * ambiguous; as git does, take the split where both names agree after
 * their prefixes.  Renames are fixed later by "rename from/to" or by the
 * ---/+++ lines; here the fallback splits at the last " b/".
 */
static int parse_git_names(struct patch_file *f, const char *s, size_t len)
{
	char *a = NULL, *b = NULL;
	size_t i, used;
	int rc = 0;

	if (len && s[0] == '"') {
		rc = unquote_c(&a, s, len, &used);
		if (rc)
			return rc < 0 ? rc : 0;
		s += used;
		len -= used;
		while (len && *s == ' ') {
			s++;
			len--;
		}
		rc = parse_path(&b, s, len, 1);
		goto done;
	}
	for (i = 1; i + 1 < len; i++) {
		size_t la = i, lb = len - i - 1;
		const char *sa = s, *sb = s + i + 1;
		const char *pa, *pb;

		if (s[i] != ' ')
			continue;
		pa = memchr(sa, '/', la);
		pb = memchr(sb, '/', lb);
		if (!pa || !pb)
			continue;
		la -= (size_t)(pa - sa);
		lb -= (size_t)(pb - sb);
		if (la == lb && !memcmp(pa, pb, la)) {
			rc = parse_path(&a, s, i, 1);
			if (!rc)
				rc = parse_path(&b, sb, len - i - 1, 1);
			goto done;
		}
	}
	for (i = len >= 3 ? len - 3 : 0; i > 0; i--) {
		if (!memcmp(s + i, " b/", 3)) {
			rc = parse_path(&a, s, i, 1);
			if (!rc)
				rc = parse_path(&b, s + i + 1, len - i - 1, 1);
			goto done;
		}
	}
done:
	if (rc) {
		free(a);
		free(b);
		return rc;
	}
	set_path(&f->old_path, a);
	set_path(&f->new_path, b);
	return 0;
}

/* ---- files and hunks ----------------------------------------------- */

static void hunk_clear(struct patch_hunk *h)
{
	free(h->heading);
	free(h->lines);
}

static void file_clear(struct patch_file *f)
{
	size_t i;

	free(f->old_path);
	free(f->new_path);
	for (i = 0; i < f->nhunks; i++)
		hunk_clear(&f->hunks[i]);
	free(f->hunks);
}

void diff_files_free(struct patch_file *f, size_t n)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < n; i++)
		file_clear(&f[i]);
	free(f);
}

static struct patch_file *cur(struct dparse *p)
{
	return p->nfiles ? &p->files[p->nfiles - 1] : NULL;
}

static int new_file(struct dparse *p)
{
	struct patch_file *f;

	if (p->nfiles >= PT_MAX_FILES)
		return pt_error_set(PT_ETOOBIG, "diff has more than %u files",
				    PT_MAX_FILES);
	if (p->nfiles == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4;

		f = pt_reallocarray(p->files, cap, sizeof(*f));
		if (!f)
			return PT_ENOMEM;
		p->files = f;
		p->cap = cap;
	}
	memset(&p->files[p->nfiles++], 0, sizeof(*f));
	p->hcap = 0;
	return 0;
}

static unsigned parse_dec(const char *s, size_t len)
{
	unsigned v = 0;
	size_t i;

	for (i = 0; i < len && i < 4 && isdigit((unsigned char)s[i]); i++)
		v = v * 10 + (unsigned)(s[i] - '0');
	return v;
}

static unsigned parse_mode(const char *s, size_t len)
{
	unsigned v = 0;
	size_t i;

	for (i = 0; i < len && i < 8 && s[i] >= '0' && s[i] <= '7'; i++)
		v = v * 8 + (unsigned)(s[i] - '0');
	return v;
}

/* One git extended header line; returns 1 if it was one. */
static int git_header(struct dparse *p, const struct dline *l, int *rc)
{
	struct patch_file *f = cur(p);
	size_t n = hlen(l);
	const char *s = l->s;
	char *path;

	*rc = 0;
#define HDR(pfx) (n >= sizeof(pfx) - 1 && !memcmp(s, pfx, sizeof(pfx) - 1))
#define REST(pfx) s + sizeof(pfx) - 1, n - (sizeof(pfx) - 1)
	if (HDR("old mode ")) {
		f->old_mode = parse_mode(REST("old mode "));
	} else if (HDR("new mode ")) {
		f->new_mode = parse_mode(REST("new mode "));
	} else if (HDR("deleted file mode ")) {
		f->status = PATCH_FILE_DELETED;
		f->old_mode = parse_mode(REST("deleted file mode "));
		set_path(&f->new_path, NULL);
	} else if (HDR("new file mode ")) {
		f->status = PATCH_FILE_ADDED;
		f->new_mode = parse_mode(REST("new file mode "));
		set_path(&f->old_path, NULL);
	} else if (HDR("similarity index ")) {
		f->similarity = parse_dec(REST("similarity index "));
	} else if (HDR("dissimilarity index ")) {
		/* a rewrite; nothing to keep */
	} else if (HDR("rename from ") || HDR("copy from ")) {
		f->status = s[0] == 'r' ? PATCH_FILE_RENAMED
					: PATCH_FILE_COPIED;
		*rc = s[0] == 'r' ? parse_path(&path, REST("rename from "), 0)
				  : parse_path(&path, REST("copy from "), 0);
		if (!*rc)
			set_path(&f->old_path, path);
	} else if (HDR("rename to ") || HDR("copy to ")) {
		f->status = s[0] == 'r' ? PATCH_FILE_RENAMED
					: PATCH_FILE_COPIED;
		*rc = s[0] == 'r' ? parse_path(&path, REST("rename to "), 0)
				  : parse_path(&path, REST("copy to "), 0);
		if (!*rc)
			set_path(&f->new_path, path);
	} else if (HDR("index ")) {
		const char *sp = memchr(s + 6, ' ', n - 6);

		if (sp && !f->old_mode && !f->new_mode) {
			f->old_mode =
				parse_mode(sp + 1, n - (size_t)(sp + 1 - s));
			f->new_mode = f->old_mode;
		}
	} else if (HDR("Binary files ") || HDR("GIT binary patch")) {
		/* no ---/+++ follow: the next pair starts a new file */
		f->binary = 1;
		p->named = 1;
	} else {
		return 0;
	}
#undef HDR
#undef REST
	return 1;
}

static int parse_num(const char **s, const char *end, unsigned long *v)
{
	unsigned long x = 0;
	const char *p = *s;

	if (p >= end || !isdigit((unsigned char)*p))
		return 0;
	while (p < end && isdigit((unsigned char)*p)) {
		unsigned d = (unsigned)(*p - '0');

		if (x > (ULONG_MAX - d) / 10)
			return 0;
		x = x * 10 + d;
		p++;
	}
	*s = p;
	*v = x;
	return 1;
}

/* "-a[,b]" or "+c[,d]"; the count is 1 when absent. */
static int parse_range(const char **s, const char *end, char sign,
		       unsigned long *start, unsigned long *count)
{
	if (*s >= end || **s != sign)
		return 0;
	(*s)++;
	if (!parse_num(s, end, start))
		return 0;
	*count = 1;
	if (*s < end && **s == ',') {
		(*s)++;
		if (!parse_num(s, end, count))
			return 0;
	}
	return 1;
}

/* "@@ -a,b +c,d @@ heading" */
static int parse_hunk_header(struct patch_hunk *h, const struct dline *l,
			     int *rc)
{
	const char *s = l->s + 3, *end = l->s + hlen(l);

	*rc = 0;
	memset(h, 0, sizeof(*h));
	if (!parse_range(&s, end, '-', &h->old_start, &h->old_lines) ||
	    s >= end || *s++ != ' ' ||
	    !parse_range(&s, end, '+', &h->new_start, &h->new_lines) ||
	    end - s < 3 || memcmp(s, " @@", 3))
		return 0;
	s += 3;
	if (s < end && *s == ' ')
		s++;
	if (s < end) {
		h->heading = pt_strndup(s, (size_t)(end - s));
		if (!h->heading)
			*rc = PT_ENOMEM;
	}
	return 1;
}

static int add_line(struct patch_hunk *h, size_t *cap, char kind, const char *s,
		    size_t len)
{
	struct patch_line *v;

	if (h->nlines == *cap) {
		size_t c = *cap ? *cap * 2 : 16;

		v = pt_reallocarray(h->lines, c, sizeof(*v));
		if (!v)
			return PT_ENOMEM;
		h->lines = v;
		*cap = c;
	}
	v = &h->lines[h->nlines++];
	v->kind = kind;
	v->text = s;
	v->len = len;
	return 0;
}

/* Read the body of hunk h (just added to f) by its counts. */
static int read_hunk(struct dparse *p, struct patch_file *f,
		     struct patch_hunk *h)
{
	unsigned long old = h->old_lines, new = h->new_lines;
	size_t cap = 0;
	struct dline l = { 0 };
	int rc;
	char k;

	for (;;) {
		rc = peek(p, &l);
		if (rc <= 0)
			break;
		k = l.len ? l.s[0] : ' ';
		if (k == '\\' && h->nlines) {
			/* "\ No newline at end of file" */
		} else if (!old && !new) {
			break;
		} else if (k == ' ' && old && new) {
			old--;
			new --;
		} else if (k == '-' && old) {
			old--;
		} else if (k == '+' && new) {
			new --;
		} else {
			break;
		}
		rc = add_line(h, &cap, k, l.len ? l.s + 1 : l.s,
			      l.len ? l.len - 1 : 0);
		if (rc)
			return rc;
		if (k == '+')
			h->added++;
		else if (k == '-')
			h->removed++;
		consume(p, &l);
	}
	if (rc < 0)
		return rc;
	h->truncated = old || new;
	f->added += h->added;
	f->removed += h->removed;
	return 0;
}

static int start_hunk(struct dparse *p, const struct dline *l, int *taken)
{
	struct patch_file *f = cur(p);
	struct patch_hunk h, *v;
	int rc;

	*taken = 0;
	if (!f || f->binary || !parse_hunk_header(&h, l, &rc))
		return 0;
	if (rc)
		return rc;
	if (p->nhunks >= PT_MAX_HUNKS) {
		free(h.heading);
		return pt_error_set(PT_ETOOBIG, "diff has more than %u hunks",
				    PT_MAX_HUNKS);
	}
	if (f->nhunks == p->hcap) {
		size_t cap = p->hcap ? p->hcap * 2 : 4;

		v = pt_reallocarray(f->hunks, cap, sizeof(*v));
		if (!v) {
			free(h.heading);
			return PT_ENOMEM;
		}
		f->hunks = v;
		p->hcap = cap;
	}
	f->hunks[f->nhunks++] = h;
	p->nhunks++;
	*taken = 1;
	consume(p, l);
	p->st = ST_FILE;
	return read_hunk(p, f, &f->hunks[f->nhunks - 1]);
}

/* "--- x" followed by "+++ y": returns 1 and consumes both if so. */
static int minus_plus(struct dparse *p, const struct dline *l, int *rc)
{
	struct dparse save = *p;
	struct patch_file *f;
	struct dline l2;
	char *a = NULL, *b = NULL;

	*rc = 0;
	if (!starts(l, "--- "))
		return 0;
	consume(p, l);
	*rc = peek(p, &l2);
	if (*rc <= 0 || !starts(&l2, "+++ ")) {
		*p = save;
		if (*rc > 0)
			*rc = 0;
		return *rc < 0;
	}
	*rc = parse_path(&a, l->s + 4, l->len - 4, 1);
	if (!*rc)
		*rc = parse_path(&b, l2.s + 4, l2.len - 4, 1);
	if (!*rc && (p->st != ST_HEADER || p->named))
		*rc = new_file(p);
	if (*rc) {
		free(a);
		free(b);
		return 1;
	}
	consume(p, &l2);
	f = cur(p);
	if (p->st == ST_HEADER && f->status != PATCH_FILE_MODIFIED) {
		/* rename/copy/new/deleted already named it; keep that */
		if (f->status == PATCH_FILE_RENAMED ||
		    f->status == PATCH_FILE_COPIED) {
			if (!f->old_path)
				set_path(&f->old_path, a), a = NULL;
			if (!f->new_path)
				set_path(&f->new_path, b), b = NULL;
		}
	} else {
		set_path(&f->old_path, a);
		set_path(&f->new_path, b);
		a = b = NULL;
		if (!f->old_path && f->new_path)
			f->status = PATCH_FILE_ADDED;
		else if (f->old_path && !f->new_path)
			f->status = PATCH_FILE_DELETED;
	}
	free(a);
	free(b);
	p->st = ST_HEADER;
	p->named = 1;
	return 1;
}

static int step(struct dparse *p, const struct dline *l)
{
	int rc = 0, taken;

	if (starts(l, "diff --git ")) {
		/* hlen() drops trailing blanks: it can be under 11 */
		size_t n = hlen(l) > 11 ? hlen(l) - 11 : 0;

		rc = new_file(p);
		if (!rc)
			rc = parse_git_names(cur(p), l->s + 11, n);
		if (!rc) {
			consume(p, l);
			p->st = ST_HEADER;
			p->named = 0;
		}
		return rc;
	}
	if (minus_plus(p, l, &rc))
		return rc;
	if (rc)
		return rc;
	if (starts(l, "@@ ")) {
		rc = start_hunk(p, l, &taken);
		if (rc || taken)
			return rc;
	} else if (p->st == ST_HEADER && git_header(p, l, &rc)) {
		if (rc)
			return rc;
	}
	consume(p, l);
	return 0;
}

int diff_parse(struct patch_file **out, size_t *n, const char *text, size_t len)
{
	struct dparse p;
	struct dline l;
	const char *nl;
	int rc;

	*out = NULL;
	*n = 0;
	memset(&p, 0, sizeof(p));
	p.text = text;
	p.len = len;
	p.st = ST_OUT;
	/* a CRLF text is one whose first line ends in CRLF */
	nl = memchr(text, '\n', len);
	p.crlf = nl && nl > text && nl[-1] == '\r';
	rc = peek(&p, &l);
	while (rc > 0) {
		rc = step(&p, &l);
		if (rc)
			break;
		rc = peek(&p, &l);
	}
	if (rc < 0) {
		diff_files_free(p.files, p.nfiles);
		return rc;
	}
	*out = p.files;
	*n = p.nfiles;
	return 0;
}
