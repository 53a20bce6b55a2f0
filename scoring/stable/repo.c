/*
 * repo.c - the repository plumbing of scoring/stable: a small
 * open-addressing map of object ids to an index (libgit2 objects are
 * looked up again when needed rather than held), libgit2 errors as
 * pt errors, resolving and peeling commits, the files a commit changes,
 * a zero-context diff of one file, `git patch-id --stable` and the walk
 * of a range's non-merge commits.  It knows nothing of stable branches.
 */
#include "scoring/stable/stable_int.h"

#include "scoring/util/fnv.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- a map of object ids to an index ---------------------------------- */

static size_t oid_hash(const git_oid *id)
{
	size_t h;

	memcpy(&h, id->id, sizeof(h));
	return h;
}

struct oment *stable_oidmap_get(const struct oidmap *m, const git_oid *id)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = oid_hash(id) & (m->cap - 1); m->slot[i].used;
	     i = (i + 1) & (m->cap - 1))
		if (!git_oid_cmp(&m->slot[i].id, id))
			return &m->slot[i];
	return NULL;
}

static void oidmap_insert(struct oment *slot, size_t cap, const git_oid *id,
			  size_t val)
{
	size_t i;

	for (i = oid_hash(id) & (cap - 1); slot[i].used;
	     i = (i + 1) & (cap - 1))
		;
	git_oid_cpy(&slot[i].id, id);
	slot[i].val = val;
	slot[i].used = 1;
}

static int oidmap_grow(struct oidmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	struct oment *s;

	s = pt_calloc(cap, sizeof(*s));
	if (!s)
		return PT_ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->slot[i].used)
			oidmap_insert(s, cap, &m->slot[i].id, m->slot[i].val);
	free(m->slot);
	m->slot = s;
	m->cap = cap;
	return 0;
}

/* Add id -> val; an id already there keeps its first value. */
int stable_oidmap_put(struct oidmap *m, const git_oid *id, size_t val)
{
	int rc;

	if (stable_oidmap_get(m, id))
		return 0;
	if ((m->len + 1) * 2 > m->cap) {
		rc = oidmap_grow(m);
		if (rc)
			return rc;
	}
	oidmap_insert(m->slot, m->cap, id, val);
	m->len++;
	return 0;
}

void stable_oidmap_free(struct oidmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->len = 0;
}

/* ---- object helpers --------------------------------------------------- */

int stable_git_fail(const char *what, const char *input)
{
	const git_error *e = git_error_last();

	return pt_error_set(PT_ERROR, "%s '%s': %s", what, input,
			    e && e->message ? e->message : "libgit2 error");
}

int stable_resolve_commit(git_oid *out, git_repository *repo, const char *hex)
{
	git_object *o = NULL;
	git_oid id;
	size_t n = strlen(hex);

	if (n < 4 || n > 40 || git_oid_fromstrn(&id, hex, n))
		return PT_ENOTFOUND;
	if (git_object_lookup_prefix(&o, repo, &id, n, GIT_OBJECT_COMMIT))
		return PT_ENOTFOUND;
	git_oid_cpy(out, git_object_id(o));
	git_object_free(o);
	return 0;
}

int stable_peel_commit(git_oid *out, git_repository *repo, const char *rev)
{
	git_object *o = NULL, *c = NULL;
	int rc = 0;

	if (git_revparse_single(&o, repo, rev))
		return stable_git_fail("cannot resolve", rev);
	if (git_object_peel(&c, o, GIT_OBJECT_COMMIT))
		rc = stable_git_fail("not a commit:", rev);
	else
		git_oid_cpy(out, git_object_id(c));
	git_object_free(c);
	git_object_free(o);
	return rc;
}

/* ---- changed files ---------------------------------------------------- */

void stable_changes_clear(struct changes *ch)
{
	struct treediff d;

	d.f = ch->f;
	d.n = d.cap = ch->n;
	treediff_clear(&d);
	memset(ch, 0, sizeof(*ch));
}

/* The files a commit changes against its first parent, sorted by path. */
int stable_commit_changes(struct changes *ch, git_repository *repo,
			  const git_commit *c)
{
	struct treediff d;
	uint64_t h = FNV_INIT;
	size_t i;
	int rc;

	memset(ch, 0, sizeof(*ch));
	rc = treediff_commit(&d, repo, c);
	if (rc)
		return rc;
	ch->f = d.f;
	ch->n = d.n;
	for (i = 0; i < ch->n; i++)
		h = fnv_byte(fnv_bytes(h, ch->f[i].path, strlen(ch->f[i].path)),
			     0xff);
	ch->sig = h;
	return 0;
}

int stable_lookup_changes(struct changes *ch, git_repository *repo,
			  const git_oid *id)
{
	git_commit *c = NULL;
	int rc;

	if (git_commit_lookup(&c, repo, id))
		return stable_git_fail("cannot read commit",
				       git_oid_tostr_s(id));
	rc = stable_commit_changes(ch, repo, c);
	git_commit_free(c);
	return rc;
}

/* Zero-context diff of one changed file through libgit2's xdiff. */
int stable_diff_file(git_repository *repo, const struct treediff_file *f,
		     blob_hunk_cb hunk, blob_line_cb line, void *ctx)
{
	git_diff_options o;
	git_blob *a = NULL, *b = NULL;
	int rc = 0;

	if (f->old_mode == GIT_FILEMODE_COMMIT ||
	    f->new_mode == GIT_FILEMODE_COMMIT)
		return 0; /* a submodule has no lines here */
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = 0;
	o.interhunk_lines = 0;
	if ((!git_oid_is_zero(&f->old) && git_blob_lookup(&a, repo, &f->old)) ||
	    (!git_oid_is_zero(&f->new) && git_blob_lookup(&b, repo, &f->new)))
		rc = stable_git_fail("cannot read the blobs of", f->path);
	if (!rc && git_diff_blobs(a, f->path, b, f->path, &o, NULL, NULL, hunk,
				  line, ctx))
		rc = stable_git_fail("cannot diff", f->path);
	git_blob_free(a);
	git_blob_free(b);
	return rc;
}

/* The text a patch-id hashes: '+'/'-' lines without any whitespace. */
static int pid_line(const git_diff_delta *d, const git_diff_hunk *h,
		    const git_diff_line *l, void *ctx)
{
	struct buf *b = ctx;
	size_t i;

	(void)d;
	(void)h;
	if (l->origin != GIT_DIFF_LINE_ADDITION &&
	    l->origin != GIT_DIFF_LINE_DELETION)
		return 0;
	if (buf_addch(b, l->origin))
		return -1;
	for (i = 0; i < l->content_len; i++)
		if (!isspace((unsigned char)l->content[i]) &&
		    buf_addch(b, l->content[i]))
			return -1;
	return buf_addch(b, '\n') ? -1 : 0;
}

/*
 * Like `git patch-id --stable`: paths and changed lines with whitespace
 * removed, line numbers and context ignored, files in path order.
 */
int stable_changes_patchid(git_oid *out, git_repository *repo,
			   const struct changes *ch)
{
	struct buf b = BUF_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < ch->n && !rc; i++) {
		rc = buf_addf(&b, "%s\n%s\n", ch->f[i].path,
			      git_oid_is_zero(&ch->f[i].new) ? "deleted" : "");
		if (!rc)
			rc = stable_diff_file(repo, &ch->f[i], NULL, pid_line,
					      &b);
	}
	if (!rc && git_odb_hash(out, b.ptr, b.len, GIT_OBJECT_BLOB))
		rc = stable_git_fail("cannot hash a patch of",
				     ch->n ? ch->f[0].path : "nothing");
	buf_free(&b);
	return rc;
}

/* ---- walks ------------------------------------------------------------ */

/* Non-merge commits of push minus hide (hide may be NULL), oldest first. */
int stable_walk(git_repository *repo, const git_oid *push, const git_oid *hide,
		walk_cb cb, void *ctx)
{
	git_revwalk *w = NULL;
	git_commit *c;
	git_oid id;
	size_t n = 0;
	int rc = 0, e;

	if (git_revwalk_new(&w, repo))
		return stable_git_fail("cannot walk", git_oid_tostr_s(push));
	git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (git_revwalk_push(w, push) || (hide && git_revwalk_hide(w, hide))) {
		rc = stable_git_fail("cannot walk", git_oid_tostr_s(push));
		goto out;
	}
	while (!rc && !(e = git_revwalk_next(&id, w))) {
		if (++n > STABLE_MAX_COMMITS) {
			rc = pt_error_set(PT_ETOOBIG,
					  "more than %u commits "
					  "in the range",
					  STABLE_MAX_COMMITS);
			break;
		}
		if (git_commit_lookup(&c, repo, &id)) {
			rc = stable_git_fail("cannot read commit",
					     git_oid_tostr_s(&id));
			break;
		}
		if (git_commit_parentcount(c) <= 1)
			rc = cb(c, ctx);
		git_commit_free(c);
	}
	if (!rc && e != GIT_ITEROVER)
		rc = stable_git_fail("cannot walk", git_oid_tostr_s(push));
out:
	git_revwalk_free(w);
	return rc;
}
