/*
 * apply.c - what applies on the branch tip, all in memory: a clean
 * cherry-pick of one candidate, and the prerequisites of a tagged
 * candidate (its files replayed onto the branch with and without an
 * untagged dependency, git_merge_file() on blobs held in memory).
 * Nothing is written to the repository, its index or work tree.
 */
#include "scoring/stable/stable_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- applies cleanly -------------------------------------------------- */

int stable_check_apply(struct stable_set *s, size_t i)
{
	git_merge_options mo;
	git_commit *c = NULL, *tip = NULL;
	git_index *idx = NULL;
	git_oid id;
	int rc = 0;

	git_merge_options_init(&mo, GIT_MERGE_OPTIONS_VERSION);

	if (i >= s->n)
		return pt_error_set(PT_EINVAL, "no commit %zu in the range", i);
	git_oid_fromstr(&id, s->c[i].id);
	if (git_commit_lookup(&c, s->priv->repo, &id) ||
	    git_commit_lookup(&tip, s->priv->repo, &s->priv->tip)) {
		rc = stable_git_fail("cannot read commit", s->c[i].id);
		goto out;
	}
	if (git_commit_parentcount(c) == 0) {
		/* a root commit: nothing to pick it against */
		s->c[i].apply = STABLE_APPLY_CONFLICT;
		goto out;
	}
	if (git_cherrypick_commit(&idx, s->priv->repo, c, tip, 0, &mo)) {
		rc = stable_git_fail("cannot cherry-pick", s->c[i].id);
		goto out;
	}
	s->c[i].apply = git_index_has_conflicts(idx) ? STABLE_APPLY_CONFLICT
						     : STABLE_APPLY_CLEAN;
out:
	git_index_free(idx);
	git_commit_free(c);
	git_commit_free(tip);
	return rc;
}

/* ---- prerequisites ---------------------------------------------------- */

/* One file of a replay: its content now, or absent. */
struct rfile {
	const char *path; /* owned by the tagged commit's changes */
	char *data;
	size_t len;
	int present;
};

struct replay {
	struct stable_set *s;
	struct rfile *f; /* the tagged commit's paths, sorted */
	size_t n;
	git_tree *tip;
};

static int blob_text(git_blob **out, git_repository *repo, const git_oid *id)
{
	if (git_blob_lookup(out, repo, id))
		return stable_git_fail("cannot read blob", git_oid_tostr_s(id));
	return 0;
}

static int rfile_set(struct rfile *f, const void *data, size_t len)
{
	char *d = pt_malloc(len + 1);

	if (!d)
		return PT_ENOMEM;
	memcpy(d, data, len);
	d[len] = '\0';
	free(f->data);
	f->data = d;
	f->len = len;
	f->present = 1;
	return 0;
}

/* Every file back as the branch tip has it. */
static int replay_reset(struct replay *r)
{
	git_repository *repo = r->s->priv->repo;
	git_tree_entry *te;
	git_blob *b;
	size_t i;
	int rc = 0;

	for (i = 0; i < r->n && !rc; i++) {
		free(r->f[i].data);
		r->f[i].data = NULL;
		r->f[i].len = 0;
		r->f[i].present = 0;
		if (git_tree_entry_bypath(&te, r->tip, r->f[i].path))
			continue;
		if (git_tree_entry_type(te) == GIT_OBJECT_BLOB) {
			rc = blob_text(&b, repo, git_tree_entry_id(te));
			if (!rc) {
				rc = rfile_set(&r->f[i], git_blob_rawcontent(b),
					       (size_t)git_blob_rawsize(b));
				git_blob_free(b);
			}
		}
		git_tree_entry_free(te);
	}
	return rc;
}

static struct rfile *replay_find(struct replay *r, const char *path)
{
	size_t lo = 0, hi = r->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(path, r->f[mid].path);
		if (!c)
			return &r->f[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Three-way merge of one changed file into f; 1 on a conflict. */
static int replay_file(struct rfile *f, git_repository *repo,
		       const struct treediff_file *tf)
{
	git_merge_file_input a, o, t;
	git_merge_file_result res;
	git_blob *old = NULL, *new = NULL;
	int rc = 0;

	if (tf->old_mode == GIT_FILEMODE_COMMIT ||
	    tf->new_mode == GIT_FILEMODE_COMMIT)
		return 0;
	if (!git_oid_is_zero(&tf->old))
		rc = blob_text(&old, repo, &tf->old);
	if (!rc && !git_oid_is_zero(&tf->new))
		rc = blob_text(&new, repo, &tf->new);
	if (rc)
		goto out;
	if (!old || !f->present) {
		/* an add onto nothing, or a change of what is not there */
		rc = !old && !f->present && new
			     ? rfile_set(f, git_blob_rawcontent(new),
					 (size_t)git_blob_rawsize(new))
			     : 1;
		goto out;
	}
	git_merge_file_input_init(&a, GIT_MERGE_FILE_INPUT_VERSION);
	git_merge_file_input_init(&o, GIT_MERGE_FILE_INPUT_VERSION);
	git_merge_file_input_init(&t, GIT_MERGE_FILE_INPUT_VERSION);
	a.ptr = git_blob_rawcontent(old);
	a.size = (size_t)git_blob_rawsize(old);
	o.ptr = f->data;
	o.size = f->len;
	if (new) {
		t.ptr = git_blob_rawcontent(new);
		t.size = (size_t)git_blob_rawsize(new);
	}
	if (!new) {
		/* a delete: only of the content it knew */
		rc = a.size != o.size || memcmp(a.ptr, o.ptr, a.size);
		if (!rc) {
			free(f->data);
			f->data = NULL;
			f->len = 0;
			f->present = 0;
		}
		goto out;
	}
	if (git_merge_file(&res, &a, &o, &t, NULL)) {
		rc = stable_git_fail("cannot merge", tf->path);
		goto out;
	}
	rc = res.automergeable ? rfile_set(f, res.ptr, res.len) : 1;
	git_merge_file_result_free(&res);
out:
	git_blob_free(old);
	git_blob_free(new);
	return rc;
}

/* Replay commit i on the files of r; the number of files that conflict
   (those keep their content). */
static int replay_commit(size_t *conflicts, struct replay *r, size_t i)
{
	const struct changes *ch = &r->s->priv->rch[i];
	struct rfile *f;
	size_t k;
	int rc;

	*conflicts = 0;
	for (k = 0; k < ch->n; k++) {
		f = replay_find(r, ch->f[k].path);
		if (!f)
			continue;
		rc = replay_file(f, r->s->priv->repo, &ch->f[k]);
		if (rc < 0)
			return rc;
		*conflicts += (size_t)rc;
	}
	return 0;
}

/* Conflicts of tagged commit t after its deps but skip (SIZE_MAX: none). */
static int replay_after(size_t *conflicts, struct replay *r, size_t t,
			size_t skip)
{
	const struct stable_commit *c = &r->s->c[t];
	size_t k, ignored;
	int rc = replay_reset(r);

	for (k = 0; k < c->ndeps && !rc; k++)
		if (c->deps[k] != skip && c->deps[k] < t)
			rc = replay_commit(&ignored, r, c->deps[k]);
	return rc ? rc : replay_commit(conflicts, r, t);
}

static void replay_clear(struct replay *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->f[i].data);
	free(r->f);
	r->f = NULL;
	r->n = 0;
}

/* The untagged deps of tagged commit t that it needs on the branch. */
static int prereqs_of(struct replay *r, size_t t)
{
	struct stable_set *s = r->s;
	const struct changes *ch = &s->priv->rch[t];
	size_t k, alone, all, without, d;
	int rc = 0;

	r->f = pt_calloc(ch->n + 1, sizeof(*r->f));
	if (!r->f)
		return PT_ENOMEM;
	r->n = ch->n;
	for (k = 0; k < ch->n; k++)
		r->f[k].path = ch->f[k].path;
	rc = replay_reset(r);
	if (!rc)
		rc = replay_commit(&alone, r, t);
	if (rc || !alone)
		goto out;
	rc = replay_after(&all, r, t, SIZE_MAX);
	if (rc || all)
		goto out;
	for (k = 0; k < s->c[t].ndeps && !rc; k++) {
		d = s->c[t].deps[k];
		if (d >= t || stable_tier(&s->c[d]) || s->c[d].prereq)
			continue;
		rc = replay_after(&without, r, t, d);
		if (!rc && without) {
			s->c[d].prereq = 1;
			s->c[d].prereq_of = t;
		}
	}
out:
	replay_clear(r);
	return rc;
}

int stable_prereqs(struct stable_set *s, const unsigned char *select)
{
	struct replay r;
	git_commit *tip = NULL;
	size_t i;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	r.s = s;
	if (git_commit_lookup(&tip, s->priv->repo, &s->priv->tip) ||
	    git_commit_tree(&r.tip, tip)) {
		rc = stable_git_fail("cannot read the tree of", s->tip);
		goto out;
	}
	for (i = 0; i < s->n && !rc; i++)
		if ((!select || select[i]) && stable_is_tagged_cand(s, i) &&
		    s->c[i].ndeps)
			rc = prereqs_of(&r, i);
out:
	git_tree_free(r.tip);
	git_commit_free(tip);
	return rc;
}
