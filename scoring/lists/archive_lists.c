/*
 * archive_lists.c - the per-list stats of `archive stats`: for each list
 * and in total, postings, applied (with a commit id, by a reply, by
 * patchwork-bot), bug-introducing, fixes and unresolved Fixes: ids (see
 * archive.h).  It owns that SQL; it reads the threading and outcome
 * tables and writes nothing.
 *
 * A posting's list is the List-Id of its stored message, else the
 * archive source (epoch or mbox path) it was read from.  A message
 * cross-posted to two imported lists is stored once, with the List-Id
 * of the copy imported first, so it counts under that list only.
 */
#include "scoring/lists/archive.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define LIST_OF(m) "COALESCE(NULLIF(" m ".list_id, ''), " m ".source, '?')"

/* postings and their outcomes and labels, per LIST */
#define POSTINGS_SQL(LIST)                                                     \
	"SELECT " LIST ", count(*), COALESCE(sum(o.outcome = 'applied'), 0), " \
	"COALESCE(sum(o.outcome = 'applied' AND o.commit_sha IS NOT NULL), "   \
	"0), COALESCE(sum(o.how = 'reply'), 0), COALESCE(sum(o.how = "         \
	"'bot'), 0), COALESCE(sum(l.bug), 0), COALESCE(sum(l.is_fix), 0) "     \
	"FROM patches p LEFT JOIN messages m ON m.message_id = p.message_id "  \
	"LEFT JOIN posting_outcomes o ON o.patch_id = p.id LEFT JOIN "         \
	"posting_labels l ON l.patch_id = p.id GROUP BY 1 ORDER BY 1"

/*
 * Fixes: ids (hex, 7 digits or more) that name no applied commit id (one
 * a prefix of the other) and whose subject names no applied posting.
 */
#define UNRESOLVED_SQL(LIST)                                                  \
	"SELECT " LIST ", count(DISTINCT lower(f.ref)) FROM list_fixrefs f "  \
	"LEFT JOIN messages m ON m.message_id = f.message_id WHERE f.kind = " \
	"'fixes' AND length(f.ref) >= 7 AND f.ref NOT GLOB "                  \
	"'*[^0-9a-fA-F]*' AND NOT EXISTS (SELECT 1 FROM posting_outcomes x "  \
	"WHERE x.commit_sha >= substr(lower(f.ref), 1, 7) AND x.commit_sha "  \
	"< substr(lower(f.ref), 1, 7) || 'g' AND (x.commit_sha LIKE f.ref "   \
	"|| '%' OR f.ref LIKE x.commit_sha || '%')) AND NOT EXISTS (SELECT "  \
	"1 FROM patches q JOIN posting_outcomes y ON y.patch_id = q.id AND "  \
	"y.outcome = 'applied' WHERE f.norm_subject != '' AND "               \
	"q.norm_subject = f.norm_subject) GROUP BY 1"

static struct archive_list_stats *row_for(struct archive_list_stats **rows,
					  size_t *n, const char *list)
{
	struct archive_list_stats *r;
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*rows)[i].list, list))
			return &(*rows)[i];
	r = pt_reallocarray(*rows, *n + 1, sizeof(**rows));
	if (!r)
		return NULL;
	*rows = r;
	r = &r[(*n)++];
	memset(r, 0, sizeof(*r));
	r->list = strdup(list);
	if (!r->list) {
		(*n)--;
		return NULL;
	}
	return r;
}

static int read_postings(struct archive_list_stats **rows, size_t *n,
			 struct db *db, const char *sql)
{
	struct archive_list_stats *r;
	sqlite3_stmt *st;
	int rc, k;

	rc = db_prepare(&st, db, sql);
	while (!rc && (k = sqlite3_step(st)) == SQLITE_ROW) {
		r = row_for(rows, n, (const char *)sqlite3_column_text(st, 0));
		if (!r) {
			rc = pt_error_set(PT_ENOMEM, "out of memory");
			break;
		}
		r->postings = sqlite3_column_int64(st, 1);
		r->applied = sqlite3_column_int64(st, 2);
		r->applied_id = sqlite3_column_int64(st, 3);
		r->applied_reply = sqlite3_column_int64(st, 4);
		r->applied_bot = sqlite3_column_int64(st, 5);
		r->bugs = sqlite3_column_int64(st, 6);
		r->fixes = sqlite3_column_int64(st, 7);
	}
	if (!rc && k != SQLITE_DONE)
		rc = db_error(db, "counting postings per list");
	sqlite3_finalize(st);
	return rc;
}

static int read_unresolved(struct archive_list_stats **rows, size_t *n,
			   struct db *db, const char *sql)
{
	struct archive_list_stats *r;
	sqlite3_stmt *st;
	int rc, k;

	rc = db_prepare(&st, db, sql);
	while (!rc && (k = sqlite3_step(st)) == SQLITE_ROW) {
		r = row_for(rows, n, (const char *)sqlite3_column_text(st, 0));
		if (!r) {
			rc = pt_error_set(PT_ENOMEM, "out of memory");
			break;
		}
		r->unresolved = sqlite3_column_int64(st, 1);
	}
	if (!rc && k != SQLITE_DONE)
		rc = db_error(db, "counting unresolved Fixes: per list");
	sqlite3_finalize(st);
	return rc;
}

int archive_stats_lists(struct archive_list_stats **out, size_t *n,
			struct db *db)
{
	struct archive_list_stats *rows = NULL;
	size_t nrows = 0;
	int rc;

	*out = NULL;
	*n = 0;
	rc = read_postings(&rows, &nrows, db, POSTINGS_SQL(LIST_OF("m")));
	if (!rc)
		rc = read_unresolved(&rows, &nrows, db,
				     UNRESOLVED_SQL(LIST_OF("m")));
	/* the total last; its name cannot be a List-Id or a path */
	if (!rc)
		rc = read_postings(&rows, &nrows, db,
				   POSTINGS_SQL("'(total)'"));
	if (!rc && !row_for(&rows, &nrows, "(total)"))
		rc = pt_error_set(PT_ENOMEM, "out of memory");
	if (!rc)
		rc = read_unresolved(&rows, &nrows, db,
				     UNRESOLVED_SQL("'(total)'"));
	if (rc) {
		archive_stats_lists_free(rows, nrows);
		return rc;
	}
	*out = rows;
	*n = nrows;
	return 0;
}

void archive_stats_lists_free(struct archive_list_stats *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(rows[i].list);
	free(rows);
}

#define L(f)                                               \
	{                                                  \
#f, offsetof(struct archive_list_stats, f) \
	}
const struct archive_list_col archive_list_cols[] = {
	L(postings),	  L(applied),	  L(applied_id),
	L(applied_reply), L(applied_bot), L(bugs),
	L(fixes),	  L(unresolved),  { NULL, 0 },
};
#undef L

/* s as a JSON string: a List-Id or a path */
static int json_str(struct buf *out, const char *s)
{
	int rc = buf_addch(out, '"');

	for (; !rc && *s; s++)
		if (*s == '"' || *s == '\\')
			rc = buf_addf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			rc = buf_addf(out, "\\u%04x", (unsigned char)*s);
		else
			rc = buf_addch(out, *s);
	return rc ? rc : buf_addch(out, '"');
}

int archive_stats_lists_json(struct buf *out,
			     const struct archive_list_stats *rows, size_t n)
{
	const struct archive_list_col *c;
	size_t i;
	int rc;

	rc = buf_addstr(out, "[");
	for (i = 0; !rc && i < n; i++) {
		rc = buf_addf(out, "%s{\"list\": ", i ? ", " : "");
		if (!rc)
			rc = json_str(out, rows[i].list);
		for (c = archive_list_cols; !rc && c->name; c++)
			rc = buf_addf(
				out, ", \"%s\": %lld", c->name,
				(long long)*(
					const int64_t *)((const char *)&rows[i] +
							 c->off));
		if (!rc)
			rc = buf_addch(out, '}');
	}
	if (!rc)
		rc = buf_addch(out, ']');
	return rc;
}
