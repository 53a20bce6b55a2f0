/*
 * template.c - the template engine and line wrapper (see template.h).
 * Rendering is one recursive pass over the template text: a block tag
 * finds its matching close by counting nesting, then renders its body
 * with the same function.  Output is capped at TPL_MAX_OUTPUT, nesting
 * at TPL_MAX_DEPTH and the work (template bytes scanned, loops scanning
 * their body once per item even when it prints nothing, plus a step
 * cost per tag and per item) at TPL_MAX_WORK, so a
 * hostile template or a huge list cannot run away.  The variables a loop
 * sees are a chain of scopes on the stack: the caller's tpl_vars are
 * never changed by a render, so a loop over a list inside a loop over
 * the same list is just two scopes.
 */
#include "scoring/util/template.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tpl_var {
	char *name;
	char *value; /* NULL for a list */
	struct tpl_vars **items;
	size_t nitems;
};

struct tpl_vars {
	struct tpl_var *v;
	size_t n;
};

int tpl_vars_new(struct tpl_vars **out)
{
	*out = pt_calloc(1, sizeof(**out));
	return *out ? 0 : PT_ENOMEM;
}

void tpl_vars_free(struct tpl_vars *v)
{
	size_t i, j;

	if (!v)
		return;
	for (i = 0; i < v->n; i++) {
		free(v->v[i].name);
		free(v->v[i].value);
		for (j = 0; j < v->v[i].nitems; j++)
			tpl_vars_free(v->v[i].items[j]);
		free(v->v[i].items);
	}
	free(v->v);
	free(v);
}

static struct tpl_var *find_local(const struct tpl_vars *v, const char *name,
				  size_t len)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (strlen(v->v[i].name) == len &&
		    !strncmp(v->v[i].name, name, len))
			return &v->v[i];
	return NULL;
}

static int get_var(struct tpl_var **out, struct tpl_vars *v, const char *name)
{
	struct tpl_var *nv;

	*out = find_local(v, name, strlen(name));
	if (*out)
		return 0;
	nv = pt_reallocarray(v->v, v->n + 1, sizeof(*nv));
	if (!nv)
		return PT_ENOMEM;
	v->v = nv;
	memset(&nv[v->n], 0, sizeof(*nv));
	nv[v->n].name = pt_strdup(name);
	if (!nv[v->n].name)
		return PT_ENOMEM;
	*out = &nv[v->n++];
	return 0;
}

int tpl_set(struct tpl_vars *v, const char *name, const char *value)
{
	struct tpl_var *var;
	char *copy;
	int rc;

	rc = get_var(&var, v, name);
	if (rc)
		return rc;
	copy = pt_strdup(value ? value : "");
	if (!copy)
		return PT_ENOMEM;
	free(var->value);
	var->value = copy;
	return 0;
}

int tpl_setf(struct tpl_vars *v, const char *name, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_addvf(&b, fmt, ap);
	va_end(ap);
	if (!rc)
		rc = tpl_set(v, name, b.ptr);
	buf_free(&b);
	return rc;
}

int tpl_list_add(struct tpl_vars *v, const char *name, struct tpl_vars **item)
{
	struct tpl_vars **ni;
	struct tpl_var *var;
	int rc;

	*item = NULL;
	rc = get_var(&var, v, name);
	if (rc)
		return rc;
	ni = pt_reallocarray(var->items, var->nitems + 1, sizeof(*ni));
	if (!ni)
		return PT_ENOMEM;
	var->items = ni;
	rc = tpl_vars_new(&ni[var->nitems]);
	if (rc)
		return rc;
	*item = ni[var->nitems++];
	return 0;
}

/* ---- rendering ----------------------------------------------------- */

struct render {
	struct buf *out;
	const char *tpl; /* the whole template, for line numbers */
	size_t len;
	const char *name;
	unsigned depth;
	size_t work; /* bytes scanned so far, against TPL_MAX_WORK */
};

/* The variables in scope: a loop's item, then outward to the caller's. */
struct scope {
	const struct tpl_vars *v;
	const struct scope *up;
	size_t number; /* the item's 1-based index; 0 outside a loop */
};

enum tag_kind { TAG_VAR, TAG_IF, TAG_EACH, TAG_ELSE, TAG_END_IF, TAG_END_EACH };

struct tag {
	enum tag_kind kind;
	const char *arg; /* variable name */
	size_t arglen;
	size_t start;	  /* offset of "{{" */
	size_t end;	  /* offset after "}}" */
	size_t out_start; /* standalone: where the line began */
	size_t out_end;	  /* standalone: after the line's newline */
};

static unsigned line_of(const struct render *r, size_t off)
{
	unsigned n = 1;
	size_t i;

	for (i = 0; i < off && i < r->len; i++)
		n += r->tpl[i] == '\n';
	return n;
}

static int tpl_err(const struct render *r, size_t off, const char *what)
{
	return pt_error_set(PT_EINVAL, "template '%s': line %u: %s", r->name,
			    line_of(r, off), what);
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t'))
		(*s)++, (*n)--;
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

/* A block tag alone on its line swallows the line. */
static void standalone(const struct render *r, struct tag *t)
{
	size_t b = t->start, e = t->end;

	t->out_start = t->start;
	t->out_end = t->end;
	if (t->kind == TAG_VAR)
		return;
	while (b > 0 && (r->tpl[b - 1] == ' ' || r->tpl[b - 1] == '\t'))
		b--;
	if (b > 0 && r->tpl[b - 1] != '\n')
		return;
	while (e < r->len && (r->tpl[e] == ' ' || r->tpl[e] == '\t'))
		e++;
	if (e < r->len && r->tpl[e] == '\r')
		e++;
	if (e < r->len && r->tpl[e] != '\n')
		return;
	t->out_start = b;
	t->out_end = e < r->len ? e + 1 : e;
}

/* What a tag or a loop item costs beyond its bytes (lookups, calls). */
#define TPL_STEP_COST 32u

static int charge(struct render *r, size_t n)
{
	r->work += n;
	if (r->work <= TPL_MAX_WORK)
		return 0;
	return pt_error_set(PT_ETOOBIG,
			    "template '%s': more than %u bytes "
			    "to scan (loops inside loops?)",
			    r->name, TPL_MAX_WORK);
}

/* The next tag at or after off, before end; 1 when found. */
static int next_tag(struct render *r, size_t off, size_t end, struct tag *t,
		    int *rc)
{
	const char *s = r->tpl, *open, *close, *a;
	size_t n;

	*rc = 0;
	open = off < end ? memmem(s + off, end - off, "{{", 2) : NULL;
	close = open ? memmem(open + 2, (size_t)(s + end - open - 2), "}}", 2)
		     : NULL;
	if (off < end)
		*rc = charge(r, (close ? (size_t)(close - s) + 2 : end) - off +
					TPL_STEP_COST);
	if (*rc || !open)
		return 0;
	if (!close) {
		*rc = tpl_err(r, (size_t)(open - s), "'{{' without '}}'");
		return 0;
	}
	a = open + 2;
	n = (size_t)(close - a);
	trim(&a, &n);
	t->start = (size_t)(open - s);
	t->end = (size_t)(close + 2 - s);
	if (n > 4 && !strncmp(a, "#if ", 4))
		t->kind = TAG_IF, a += 4, n -= 4;
	else if (n > 6 && !strncmp(a, "#each ", 6))
		t->kind = TAG_EACH, a += 6, n -= 6;
	else if (n == 4 && !strncmp(a, "else", 4))
		t->kind = TAG_ELSE;
	else if (n == 3 && !strncmp(a, "/if", 3))
		t->kind = TAG_END_IF;
	else if (n == 5 && !strncmp(a, "/each", 5))
		t->kind = TAG_END_EACH;
	else
		t->kind = TAG_VAR;
	trim(&a, &n);
	t->arg = a;
	t->arglen = n;
	if ((t->kind == TAG_VAR || t->kind == TAG_IF || t->kind == TAG_EACH) &&
	    !n) {
		*rc = tpl_err(r, t->start, "empty tag");
		return 0;
	}
	standalone(r, t);
	return 1;
}

/*
 * The close of the block opened by open: *els gets {{else}} at depth 0
 * (for an if), *close the closing tag.
 */
static int find_close(struct render *r, const struct tag *open, size_t end,
		      struct tag *els, struct tag *close, int *has_else)
{
	enum tag_kind want = open->kind == TAG_IF ? TAG_END_IF : TAG_END_EACH;
	size_t off = open->end;
	unsigned depth = 0;
	struct tag t;
	int rc;

	*has_else = 0;
	while (next_tag(r, off, end, &t, &rc)) {
		off = t.end;
		if (t.kind == TAG_IF || t.kind == TAG_EACH) {
			depth++;
		} else if ((t.kind == TAG_END_IF || t.kind == TAG_END_EACH) &&
			   depth) {
			depth--;
		} else if (t.kind == TAG_ELSE && !depth &&
			   open->kind == TAG_IF) {
			*els = t;
			*has_else = 1;
		} else if (t.kind == want && !depth) {
			*close = t;
			return 0;
		} else if (t.kind != TAG_VAR && t.kind != TAG_ELSE) {
			return tpl_err(r, t.start,
				       "block closed by the wrong "
				       "tag");
		}
	}
	return rc ? rc : tpl_err(r, open->start, "block is not closed");
}

static const struct tpl_var *lookup(const struct scope *sc, const char *name,
				    size_t len)
{
	const struct tpl_var *var;

	for (; sc; sc = sc->up) {
		var = find_local(sc->v, name, len);
		if (var)
			return var;
	}
	return NULL;
}

/* {{@number}}: the index of the innermost loop's item; 0 outside. */
static size_t number_of(const struct scope *sc, const char *name, size_t len)
{
	if (len != 7 || memcmp(name, "@number", 7))
		return 0;
	for (; sc; sc = sc->up)
		if (sc->number)
			return sc->number;
	return 0;
}

static int truthy(const struct tpl_var *var)
{
	if (!var)
		return 0;
	if (!var->value)
		return var->nitems > 0;
	return *var->value && strcmp(var->value, "0") &&
	       strcmp(var->value, "false");
}

static int render_range(struct render *r, size_t off, size_t end,
			const struct scope *sc);

static int render_var(struct render *r, const struct tag *t,
		      const struct scope *sc)
{
	const struct tpl_var *var = lookup(sc, t->arg, t->arglen);
	size_t number = number_of(sc, t->arg, t->arglen);

	if (number)
		return buf_addf(r->out, "%zu", number);
	if (!var || !var->value) {
		char what[128];

		snprintf(what, sizeof(what), "unknown variable '%.*s'",
			 (int)(t->arglen < 64 ? t->arglen : 64), t->arg);
		return tpl_err(r, t->start, what);
	}
	return buf_addstr(r->out, var->value);
}

static int render_each(struct render *r, const struct tag *open,
		       const struct tag *close, const struct scope *sc)
{
	const struct tpl_var *var = lookup(sc, open->arg, open->arglen);
	struct scope item;
	size_t i;
	int rc = 0;

	if (!var)
		return 0; /* an absent list is an empty one */
	item.up = sc;
	for (i = 0; !rc && i < var->nitems; i++) {
		item.v = var->items[i];
		item.number = i + 1;
		/* empty bodies still count */
		rc = charge(r, TPL_STEP_COST);
		if (!rc)
			rc = render_range(r, open->out_end, close->out_start,
					  &item);
	}
	return rc;
}

static int render_block(struct render *r, const struct tag *open, size_t end,
			const struct scope *sc, size_t *next)
{
	struct tag els = { 0 }, close = { 0 };
	int rc, has_else;

	if (++r->depth > TPL_MAX_DEPTH)
		return tpl_err(r, open->start, "blocks nested too deep");
	rc = find_close(r, open, end, &els, &close, &has_else);
	if (rc)
		return rc;
	*next = close.out_end;
	if (open->kind == TAG_EACH)
		rc = render_each(r, open, &close, sc);
	else if (number_of(sc, open->arg, open->arglen) ||
		 truthy(lookup(sc, open->arg, open->arglen)))
		rc = render_range(r, open->out_end,
				  has_else ? els.out_start : close.out_start,
				  sc);
	else if (has_else)
		rc = render_range(r, els.out_end, close.out_start, sc);
	r->depth--;
	return rc;
}

static int render_range(struct render *r, size_t off, size_t end,
			const struct scope *sc)
{
	struct tag t;
	int rc = 0;

	while (!rc && off < end) {
		if (!next_tag(r, off, end, &t, &rc)) {
			if (!rc)
				rc = buf_add(r->out, r->tpl + off, end - off);
			break;
		}
		rc = buf_add(r->out, r->tpl + off, t.out_start - off);
		if (rc)
			break;
		switch (t.kind) {
		case TAG_VAR:
			rc = render_var(r, &t, sc);
			off = t.end;
			break;
		case TAG_IF:
		case TAG_EACH:
			rc = render_block(r, &t, end, sc, &off);
			break;
		default:
			rc = tpl_err(r, t.start, "stray block tag");
		}
	}
	return rc;
}

int tpl_render(struct buf *out, const char *tpl, size_t len,
	       const struct tpl_vars *v, const char *name)
{
	struct render r;
	struct scope top = { v, NULL, 0 };
	size_t max = out->max;
	int rc;

	memset(&r, 0, sizeof(r));
	r.out = out;
	r.tpl = tpl;
	r.len = len;
	r.name = name ? name : "-";
	if (!out->max || out->max > TPL_MAX_OUTPUT)
		out->max = TPL_MAX_OUTPUT;
	rc = render_range(&r, 0, len, &top);
	out->max = max;
	if (rc == PT_ETOOBIG && r.work <= TPL_MAX_WORK)
		rc = pt_error_set(rc, "template '%s': output over %u bytes",
				  r.name, TPL_MAX_OUTPUT);
	return rc;
}

/* ---- wrapping ------------------------------------------------------ */

static size_t cols(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

/* Indent of the continuation lines of line s. */
static size_t hang(const char *s, size_t n)
{
	size_t i = 0, j;

	while (i < n && s[i] == ' ')
		i++;
	if (i + 1 < n && (s[i] == '-' || s[i] == '*') && s[i + 1] == ' ')
		return i + 2;
	for (j = i; j < n && s[j] >= '0' && s[j] <= '9'; j++)
		;
	if (j > i && j + 1 < n && (s[j] == '.' || s[j] == ')') &&
	    s[j + 1] == ' ')
		return j + 2;
	return i;
}

/*
 * Columns are counted as the line is consumed, never from its start
 * again: a paragraph can be a whole TPL_MAX_OUTPUT long.
 */
static int wrap_line(struct buf *out, const char *s, size_t n, size_t width)
{
	size_t ind = hang(s, n), avail = width, from = ind, cut, i, c;
	size_t left = cols(s, n);
	int rc = 0;

	while (!rc && left > avail) {
		cut = 0;
		/* the last space at which the head still fits; c = cols(s, i) */
		c = from + 1 < n ? cols(s, from + 1) : 0;
		for (i = from + 1; i < n && c <= avail; i++) {
			if (s[i] == ' ')
				cut = i;
			c += ((unsigned char)s[i] & 0xC0) != 0x80;
		}
		if (!cut) /* one word longer than the line (a URL): keep it */
			for (cut = from + 1; cut < n && s[cut] != ' '; cut++)
				;
		if (cut >= n)
			break;
		rc = buf_add(out, s, cut);
		if (!rc)
			rc = buf_addf(out, "\n%*s", (int)ind, "");
		while (cut < n && s[cut] == ' ')
			cut++;
		left -= cols(s, cut);
		s += cut;
		n -= cut;
		avail = width > ind + 1 ? width - ind : 1;
		from = 0;
	}
	return rc ? rc : buf_add(out, s, n);
}

/* A line that continues the paragraph above when rewrapping. */
static int prose(const char *s, size_t n)
{
	if (!n || s[0] == ' ' || s[0] == '\t' || s[0] == '>')
		return 0;
	if (n == 3 && !memcmp(s, "-- ", 3))
		return 0;
	return hang(s, n) == 0;
}

static int flush_para(struct buf *out, struct buf *para, size_t width)
{
	int rc = 0;

	if (para->len) {
		rc = wrap_line(out, para->ptr, para->len, width);
		if (!rc)
			rc = buf_addch(out, '\n');
	}
	buf_reset(para);
	return rc;
}

int tpl_wrap(struct buf *out, const char *text, size_t len, size_t width)
{
	struct buf para = BUF_INIT;
	size_t i = 0, e;
	int rc = 0;

	while (!rc && i < len) {
		for (e = i; e < len && text[e] != '\n'; e++)
			;
		if (prose(text + i, e - i)) {
			/* lines of one paragraph are joined, then rewrapped */
			if (para.len)
				rc = buf_addch(&para, ' ');
			if (!rc)
				rc = buf_add(&para, text + i, e - i);
			if (!rc && e >= len)
				rc = flush_para(out, &para, width);
			if (!rc && e >= len && out->len)
				buf_truncate(out, out->len - 1);
			i = e + 1;
			continue;
		}
		rc = flush_para(out, &para, width);
		if (!rc && text[i] == '>')
			rc = buf_add(out, text + i, e - i);
		else if (!rc)
			rc = wrap_line(out, text + i, e - i, width);
		if (!rc && e < len)
			rc = buf_addch(out, '\n');
		i = e + 1;
	}
	if (!rc)
		rc = flush_para(out, &para, width);
	buf_free(&para);
	return rc;
}
