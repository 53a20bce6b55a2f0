/*
 * template.h - the small template engine of the replies and check
 * descriptions (the .txt files in templates/): {{name}} variables,
 * {{#if name}} .. {{else}} .. {{/if}} conditionals and {{#each list}} ..
 * {{/each}} loops
 * (inside a loop names are looked up in the item first, then outside;
 * {{@number}} is the 1-based index).  A tag alone on its line leaves no
 * blank line.  Plain text in, plain text out: no escaping, no HTML.  The
 * wrapper reflows long lines at a column count in UTF-8 characters.
 */
#ifndef PT_TEMPLATE_H
#define PT_TEMPLATE_H

#include <stddef.h>

#include "scoring/util/pt.h"

#define TPL_MAX_DEPTH 16u
#define TPL_MAX_OUTPUT (1u << 20)
#define TPL_MAX_WORK (16u << 20) /* bytes scanned by one render, see .c */

struct tpl_vars;

int tpl_vars_new(struct tpl_vars **out);
void tpl_vars_free(struct tpl_vars *v);
/* Set (or replace) a string variable; value is copied. */
int tpl_set(struct tpl_vars *v, const char *name, const char *value);
int tpl_setf(struct tpl_vars *v, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Append an item to list NAME; *item (owned by v) is filled by the caller. */
int tpl_list_add(struct tpl_vars *v, const char *name, struct tpl_vars **item);

/*
 * Render tpl (len bytes; name for error messages) with v into out.  An
 * unknown variable, an unclosed or stray block tag is an error naming
 * the template and the line.
 */
int tpl_render(struct buf *out, const char *tpl, size_t len,
	       const struct tpl_vars *v, const char *name);

/*
 * Wrap text at width columns (UTF-8 characters).  Consecutive lines of
 * prose (starting with neither a space, a quote '>' nor a list marker)
 * form a paragraph that is joined and refilled; other lines are wrapped
 * alone, breaking at the last space that fits, and their continuation
 * lines keep the line's indent plus the marker's width after "- ", "* "
 * or "N. ".  Quoted lines, the "-- " separator and words longer than the
 * width (URLs) are left alone.
 */
int tpl_wrap(struct buf *out, const char *text, size_t len, size_t width);

#endif
