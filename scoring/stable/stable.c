/*
 * stable.c - the facts `patchtriage stable` reports about the commits of a
 * main-line range relative to a stable branch (see stable.h): already in
 * the branch (ancestry, upstream marker lines, patch-id), tagged, applies
 * to (Fixes:/revert targets present in the branch), depends on (earlier
 * candidates whose zero-context hunks overlap), applies cleanly (in-memory
 * cherry-pick), prerequisites (a tagged candidate's files replayed onto
 * the branch with and without an untagged dependency, git_merge_file()
 * on blobs held in memory), keeps the build working (subject component,
 * toolchain words, build files) and the blame-based Fixes: suggestion.
 * The hunks for depends-on are diffed on opts->jobs threads, each with
 * its own repository handle, and merged in commit order.  Object ids are
 * kept in a small open-addressing map of its own; libgit2 objects are
 * looked up again when needed rather than held.  It neither prints nor
 * scores with a model.
 */
#include "scoring/stable/stable.h"
#include "scoring/stable/stable_int.h"

#include "scoring/util/fnv.h"
#include "scoring/patch/treediff.h"

#include <ctype.h>
#include <git2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
		rc = git_fail("cannot read commit", s->c[i].id);
		goto out;
	}
	if (git_commit_parentcount(c) == 0) {
		/* a root commit: nothing to pick it against */
		s->c[i].apply = STABLE_APPLY_CONFLICT;
		goto out;
	}
	if (git_cherrypick_commit(&idx, s->priv->repo, c, tip, 0, &mo)) {
		rc = git_fail("cannot cherry-pick", s->c[i].id);
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
	const char *path;         /* owned by the tagged commit's changes */
	char *data;
	size_t len;
	int present;
};

struct replay {
	struct stable_set *s;
	struct rfile *f;          /* the tagged commit's paths, sorted */
	size_t n;
	git_tree *tip;
};

static int blob_text(git_blob **out, git_repository *repo, const git_oid *id)
{
	if (git_blob_lookup(out, repo, id))
		return git_fail("cannot read blob", git_oid_tostr_s(id));
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
		rc = !old && !f->present && new ?
			rfile_set(f, git_blob_rawcontent(new),
				  (size_t)git_blob_rawsize(new)) : 1;
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
		rc = git_fail("cannot merge", tf->path);
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
		rc = git_fail("cannot read the tree of", s->tip);
		goto out;
	}
	for (i = 0; i < s->n && !rc; i++)
		if ((!select || select[i]) && is_tagged_cand(s, i) &&
		    s->c[i].ndeps)
			rc = prereqs_of(&r, i);
out:
	git_tree_free(r.tip);
	git_commit_free(tip);
	return rc;
}

/* ---- the whole analysis ----------------------------------------------- */

int stable_is_candidate(const struct stable_set *s, size_t i)
{
	return i < s->n && s->c[i].match == STABLE_MATCH_NONE &&
	       !s->c[i].dropped;
}

int stable_tier(const struct stable_commit *c)
{
	if (c->cc_stable)
		return 3;
	if (c->has_fixes && (c->target == STABLE_TARGET_PRESENT ||
			     c->target == STABLE_TARGET_PENDING))
		return 2;
	return c->has_fixes ? 1 : 0;
}

int stable_hint(const struct stable_commit *c)
{
	return !stable_tier(c) && (c->fix_subject || c->cites_present);
}

int stable_build(const struct stable_commit *c)
{
	return !stable_tier(c) && (c->build_ci || c->build_words);
}

static int parse_range(git_oid *from, int *has_from, git_oid *to,
		       git_repository *repo, const char *range)
{
	const char *dots = strstr(range, "..");
	char *a;
	int rc;

	*has_from = 0;
	if (!dots)
		return peel_commit(to, repo, range);
	if (dots[2] == '.')
		return pt_error_set(PT_EINVAL, "range '%s': use A..B, not "
				    "A...B", range);
	a = pt_strndup(range, (size_t)(dots - range));
	if (!a)
		return PT_ENOMEM;
	rc = peel_commit(from, repo, *a ? a : "HEAD");
	free(a);
	if (rc)
		return rc;
	*has_from = 1;
	return peel_commit(to, repo, dots[2] ? dots + 2 : "HEAD");
}

static int analyse(struct stable_set *s, const struct stable_opts *o)
{
	struct stable_priv *p = s->priv;
	git_oid from;
	int has_from, rc;
	size_t i;

	rc = parse_range(&from, &has_from, &p->head, p->repo, o->range);
	if (!rc)
		rc = peel_commit(&p->tip, p->repo, o->branch);
	if (rc)
		return rc;
	if (git_merge_base(&p->base, p->repo, &p->tip, &p->head))
		return git_fail("no merge base of the branch and", o->range);
	git_oid_tostr(s->tip, sizeof(s->tip), &p->tip);
	git_oid_tostr(s->base, sizeof(s->base), &p->base);
	rc = walk(p->repo, &p->tip, &p->base, branch_cb, s);
	if (!rc)
		rc = walk(p->repo, &p->head, &p->base, put_cb, &p->after_base);
	if (!rc)
		rc = walk(p->repo, &p->head, has_from ? &from : NULL,
			  range_cb, s);
	if (!rc)
		rc = branch_patchids(p);
	s->nmarkers = p->upstream.len;
	for (i = 0; i < s->n && !rc; i++)
		rc = match_commit(s, i);
	if (!rc)
		rc = base_history(s);
	for (i = 0; i < s->n && !rc; i++)
		rc = check_targets(s, i);
	for (i = 0; i < s->n && !rc; i++)
		rc = check_cites(s, i);
	if (!rc)
		rc = find_series(s);
	if (!rc && !o->no_deps)
		rc = stable_deps(s, NULL);
	for (i = 0; i < s->n && !rc && o->check_apply; i++)
		if (stable_is_candidate(s, i))
			rc = stable_check_apply(s, i);
	return rc;
}

int stable_analyse(struct stable_set **out, struct git_repository *repo,
		   const struct stable_opts *opts)
{
	struct stable_set *s;
	int rc;

	*out = NULL;
	if (!opts || !opts->range || !opts->branch)
		return pt_error_set(PT_EINVAL, "stable: a range and a branch "
				    "are needed");
	s = pt_calloc(1, sizeof(*s));
	if (!s)
		return PT_ENOMEM;
	s->priv = pt_calloc(1, sizeof(*s->priv));
	if (!s->priv) {
		free(s);
		return PT_ENOMEM;
	}
	s->priv->repo = repo;
	s->priv->jobs = opts->jobs ? opts->jobs : 1;
	rc = analyse(s, opts);
	if (rc) {
		stable_set_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void stable_set_free(struct stable_set *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->c[i].subject);
		free(s->c[i].author);
		free_targets(&s->c[i]);
		free(s->c[i].deps);
	}
	free(s->c);
	if (s->priv) {
		oidmap_free(&s->priv->range);
		oidmap_free(&s->priv->after_base);
		oidmap_free(&s->priv->only);
		oidmap_free(&s->priv->upstream);
		oidmap_free(&s->priv->patchids);
		oidmap_free(&s->priv->memo);
		oidmap_free(&s->priv->queued);
		oidmap_free(&s->priv->sigs);
		oidmap_free(&s->priv->anc);
		for (i = 0; s->priv->rch && i < s->n; i++)
			changes_clear(&s->priv->rch[i]);
		free(s->priv->rch);
		free(s->priv->sk);
		free(s->priv->b);
		free(s->priv);
	}
	free(s);
}

const char *stable_match_name(enum stable_match m)
{
	switch (m) {
	case STABLE_MATCH_ANCESTOR:
		return "ancestor";
	case STABLE_MATCH_CHERRY:
		return "cherry-pick";
	case STABLE_MATCH_UPSTREAM:
		return "upstream-commit";
	case STABLE_MATCH_COMMIT_UP:
		return "commit-upstream";
	case STABLE_MATCH_PATCHID:
		return "patch-id";
	default:
		return "no";
	}
}

const char *stable_target_name(enum stable_target t)
{
	switch (t) {
	case STABLE_TARGET_PRESENT:
		return "present";
	case STABLE_TARGET_ABSENT:
		return "absent";
	case STABLE_TARGET_UNKNOWN:
		return "unknown";
	case STABLE_TARGET_PENDING:
		return "pending";
	default:
		return "none";
	}
}

const char *stable_apply_name(enum stable_apply a)
{
	switch (a) {
	case STABLE_APPLY_CLEAN:
		return "clean";
	case STABLE_APPLY_CONFLICT:
		return "conflict";
	default:
		return "unchecked";
	}
}

/* ---- suggested Fixes: ------------------------------------------------- */

struct votes {
	git_oid *id;
	size_t *count;
	size_t n, cap;
	size_t lines;
};

static int vote(struct votes *v, const git_oid *id)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (!git_oid_cmp(&v->id[i], id)) {
			v->count[i]++;
			return 0;
		}
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		git_oid *ni = pt_reallocarray(v->id, cap, sizeof(*ni));
		size_t *nc;

		if (!ni)
			return PT_ENOMEM;
		v->id = ni;
		nc = pt_reallocarray(v->count, cap, sizeof(*nc));
		if (!nc)
			return PT_ENOMEM;
		v->count = nc;
		v->cap = cap;
	}
	git_oid_cpy(&v->id[v->n], id);
	v->count[v->n++] = 1;
	return 0;
}

/* Old-side line numbers of a hunk's removed lines (context if none). */
static size_t hunk_lines(unsigned long *out, size_t max,
			 const struct patch_hunk *h)
{
	size_t i, n = 0;
	unsigned long ln = h->old_start;
	char want = h->removed ? '-' : ' ';

	for (i = 0; i < h->nlines && n < max; i++) {
		char k = h->lines[i].kind;

		if (k == want)
			out[n++] = ln;
		if (k == '-' || k == ' ')
			ln++;
	}
	return n;
}

static int blame_hunk(struct votes *v, git_repository *repo,
		      const char *path, const git_oid *rev,
		      const struct patch_hunk *h)
{
	git_blame_options o;
	git_blame *bl = NULL;
	unsigned long lines[256];
	size_t n, i;
	int rc = 0;

	git_blame_options_init(&o, GIT_BLAME_OPTIONS_VERSION);

	n = hunk_lines(lines, sizeof(lines) / sizeof(lines[0]), h);
	if (!n || v->lines >= STABLE_BLAME_LINES)
		return 0;
	git_oid_cpy(&o.newest_commit, rev);
	o.min_line = lines[0];
	o.max_line = lines[n - 1];
	if (git_blame_file(&bl, repo, path, &o))
		return 0; /* path or lines not at rev: nothing to learn */
	for (i = 0; i < n && !rc; i++) {
		const git_blame_hunk *bh =
			git_blame_get_hunk_byline(bl, (size_t)lines[i]);

		if (!bh || git_oid_is_zero(&bh->final_commit_id))
			continue;
		v->lines++;
		rc = vote(v, &bh->final_commit_id);
	}
	git_blame_free(bl);
	return rc;
}

static int format_fixes(char **out, git_repository *repo, const git_oid *id)
{
	git_commit *c = NULL;
	struct buf b = BUF_INIT;
	char hex[13];
	int rc;

	if (git_commit_lookup(&c, repo, id))
		return git_fail("cannot read commit", git_oid_tostr_s(id));
	git_oid_tostr(hex, sizeof(hex), id);
	rc = buf_addf(&b, "Fixes: %s (\"%s\")", hex,
		      git_commit_summary(c) ? git_commit_summary(c) : "");
	git_commit_free(c);
	if (rc) {
		buf_free(&b);
		return rc;
	}
	*out = buf_detach(&b, NULL);
	return 0;
}

int stable_suggest_fixes(char **out, struct git_repository *repo,
			 const struct patch *p, const char *rev)
{
	struct votes v;
	git_commit *c = NULL;
	git_tree *tree = NULL;
	git_oid at;
	size_t f, h, best = 0, files = 0;
	int rc;

	*out = NULL;
	memset(&v, 0, sizeof(v));
	rc = peel_commit(&at, repo, rev ? rev : "HEAD");
	if (!rc && (git_commit_lookup(&c, repo, &at) ||
		    git_commit_tree(&tree, c)))
		rc = git_fail("cannot read the tree of", rev ? rev : "HEAD");
	for (f = 0; f < p->nfiles && !rc && files < STABLE_BLAME_FILES; f++) {
		const struct patch_file *pf = &p->files[f];
		git_tree_entry *te = NULL;

		if (!pf->old_path || pf->binary ||
		    pf->status == PATCH_FILE_ADDED)
			continue;
		/* libgit2 1.5's blame leaks a commit on a missing path */
		if (git_tree_entry_bypath(&te, tree, pf->old_path))
			continue;
		git_tree_entry_free(te);
		files++;
		for (h = 0; h < pf->nhunks && !rc; h++)
			rc = blame_hunk(&v, repo, pf->old_path, &at,
					&pf->hunks[h]);
	}
	if (rc)
		goto out;
	if (!v.n) {
		rc = pt_error_set(PT_ENOTFOUND, "no line of '%s' could be "
				  "blamed at '%s'", p->subject.raw ?
				  p->subject.raw : "the patch",
				  rev ? rev : "HEAD");
		goto out;
	}
	for (h = 1; h < v.n; h++)
		if (v.count[h] > v.count[best])
			best = h;
	rc = format_fixes(out, repo, &v.id[best]);
out:
	git_tree_free(tree);
	git_commit_free(c);
	free(v.id);
	free(v.count);
	return rc;
}
