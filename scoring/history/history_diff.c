/*
 * history_diff.c - the diff workers of `patchtriage mine`: each worker
 * thread (its own git_repository, as libgit2 requires) takes the next id
 * of the walk, reads the commit (people, dates, message, trailers with
 * the DPDK-style Fixes: paragraph) and diffs it against its first parent
 * with a tree walk of our own (libgit2 only for inexact renames), counting
 * each file's lines and whether only comments or whitespace changed.
 * Missing blobs make a file "uncounted", never an error.  The record goes
 * to the miner's ring (history_int.h) for the writer.
 */
#include "scoring/history/history_int.h"

#include <ctype.h>
#include <git2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/history/labels.h"
#include "scoring/patch/patch.h"
#include "scoring/util/fnv.h"

void mine_commit_clear(struct mcommit *c)
{
	size_t i;

	free(c->aname);
	free(c->aemail);
	free(c->cname);
	free(c->cemail);
	free(c->subject);
	free(c->message);
	trailers_free(c->tr, c->ntr);
	for (i = 0; i < c->nfiles; i++) {
		free(c->files[i].path);
		free(c->files[i].old_path);
	}
	free(c->files);
	memset(c, 0, sizeof(*c));
}

/* ---- per-file numstat ---------------------------------------------- */

static unsigned count_lines(const char *s, size_t n)
{
	unsigned lines = 0;
	const char *p = s, *end = s + n;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		lines++;
		p++;
	}
	if (n && s[n - 1] != '\n')
		lines++;
	return lines;
}

/*
 * What one file's diff says, gathered from libgit2's line callback as the
 * diff runs (no git_patch: it would store every line first): the
 * numstat, hashes of the added and removed text without whitespace, and
 * whether every changed line is a comment or blank.
 */
struct fstat {
	size_t add, del;
	uint64_t hadd, hdel;
	int hash, comments, binary;
};

static int fstat_file(const git_diff_delta *d, float progress, void *arg)
{
	struct fstat *s = arg;

	(void)progress;
	s->binary = !!(d->flags & GIT_DIFF_FLAG_BINARY);
	return 0;
}

static int fstat_line(const git_diff_delta *d, const git_diff_hunk *h,
		      const git_diff_line *line, void *arg)
{
	struct fstat *s = arg;

	(void)d;
	(void)h;
	if (line->origin == GIT_DIFF_LINE_ADDITION) {
		s->add++;
		s->hadd = fnv_nospace(s->hadd, line->content, line->content_len,
				      NULL);
	} else if (line->origin == GIT_DIFF_LINE_DELETION) {
		s->del++;
		s->hdel = fnv_nospace(s->hdel, line->content, line->content_len,
				      NULL);
	} else {
		return 0;
	}
	if (s->comments &&
	    !labels_comment_line(line->content, line->content_len, s->hash))
		s->comments = 0;
	return 0;
}

/*
 * Diff OB to NB (either may be NULL) into S.  Two blobs with the same id
 * (an exact rename, a mode change) give libgit2 no file callback, so they
 * go through a git_patch, which still says whether they are binary.
 */
static int blob_stats(struct fstat *s, const git_blob *ob, const char *opath,
		      const git_blob *nb, const char *npath)
{
	git_diff_options dopts;
	git_patch *patch = NULL;

	git_diff_options_init(&dopts, GIT_DIFF_OPTIONS_VERSION);
	dopts.context_lines = 0;
	if (ob && nb && git_oid_equal(git_blob_id(ob), git_blob_id(nb))) {
		if (git_patch_from_blobs(&patch, ob, opath, nb, npath, &dopts))
			return git_fail(PT_EIO, "diffing blobs");
		s->binary = !!(git_patch_get_delta(patch)->flags &
			       GIT_DIFF_FLAG_BINARY);
		git_patch_free(patch);
		return 0;
	}
	if (git_diff_blobs(ob, opath, nb, npath, &dopts, fstat_file, NULL, NULL,
			   fstat_line, s))
		return git_fail(PT_EIO, "diffing blobs");
	return 0;
}

static int load_blob(git_blob **out, git_repository *repo,
		     const git_diff_file *f, int *missing)
{
	int rc;

	*out = NULL;
	if (git_oid_is_zero(&f->id) || f->mode == GIT_FILEMODE_COMMIT)
		return 0;
	rc = git_blob_lookup(out, repo, &f->id);
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		*missing = 1;
		return 0;
	}
	return rc ? git_fail(PT_EIO, "reading blob") : 0;
}

static int add_file(struct mcommit *c, struct mfile **out)
{
	if (c->nfiles == c->fcap) {
		size_t ncap = c->fcap ? c->fcap * 2 : 8;
		struct mfile *f;

		if (ncap > PT_MAX_FILES)
			return pt_error_set(PT_ETOOBIG,
					    "commit '%s': too "
					    "many files",
					    git_oid_tostr_s(&c->oid));
		f = pt_reallocarray(c->files, ncap, sizeof(*f));
		if (!f)
			return PT_ENOMEM;
		c->files = f;
		c->fcap = ncap;
	}
	*out = &c->files[c->nfiles++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

static int delta_stats(struct mcommit *c, git_repository *repo,
		       const git_diff_delta *d, const struct labels_conf *lc)
{
	static const char st[] = " ADMRCIUTX";
	git_blob *ob = NULL, *nb = NULL;
	struct mfile *f = NULL;
	struct fstat s;
	int missing = 0, rc;

	rc = add_file(c, &f);
	if (rc)
		return rc;
	f->status = d->status < sizeof(st) - 1 ? st[d->status] : 'M';
	f->path = pt_strdup(d->new_file.path ? d->new_file.path
					     : d->old_file.path);
	if (d->status == GIT_DELTA_DELETED)
		f->path = (free(f->path), pt_strdup(d->old_file.path));
	if (d->status == GIT_DELTA_RENAMED || d->status == GIT_DELTA_COPIED)
		f->old_path = pt_strdup(d->old_file.path);
	if (!f->path)
		return PT_ENOMEM;
	rc = load_blob(&ob, repo, &d->old_file, &missing);
	if (!rc)
		rc = load_blob(&nb, repo, &d->new_file, &missing);
	if (rc || missing) {
		f->uncounted = missing;
		c->uncounted += missing;
		goto out;
	}
	memset(&s, 0, sizeof(s));
	s.hadd = s.hdel = FNV_INIT;
	s.hash = labels_hash_comments(f->path);
	s.comments = 1;
	rc = blob_stats(&s, ob, d->old_file.path, nb, d->new_file.path);
	if (rc)
		goto out;
	f->binary = (unsigned)s.binary;
	if (!f->binary && ob)
		f->old_lines = count_lines(git_blob_rawcontent(ob),
					   (size_t)git_blob_rawsize(ob));
	f->added = f->binary ? 0 : (unsigned)s.add;
	f->removed = f->binary ? 0 : (unsigned)s.del;
	f->doc_only = labels_doc_path(lc, f->path) ||
		      (!f->binary && (s.comments || s.hadd == s.hdel));
	c->added += f->added;
	c->removed += f->removed;
out:
	git_blob_free(ob);
	git_blob_free(nb);
	return rc;
}

/*
 * A tree-to-tree diff of our own, as git's diff_tree() does it: both trees
 * list their entries in git's order (a tree's name compared as if it
 * ended in '/'), so one merge pass finds the changes and skips every
 * subtree whose id did not change.  libgit2's git_diff_tree_to_tree()
 * sorts and compares every entry of both trees, which made it the larger
 * half of mining time.  Exact renames are paired here; a commit that still
 * has both added and deleted files afterwards goes through libgit2's
 * git_diff_find_similar() for inexact renames, as git log would find them.
 */
#define TD_MAX_DEPTH 256

struct tdiff {
	git_diff_delta *d;
	size_t n, cap;
	size_t adds, dels;
};

static void tdiff_free(struct tdiff *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->d[i].old_file.path != t->d[i].new_file.path)
			free((char *)t->d[i].old_file.path);
		free((char *)t->d[i].new_file.path);
	}
	free(t->d);
	memset(t, 0, sizeof(*t));
}

static int ent_cmp(const git_tree_entry *a, const git_tree_entry *b)
{
	const char *x = git_tree_entry_name(a), *y = git_tree_entry_name(b);
	size_t lx = strlen(x), ly = strlen(y), m = lx < ly ? lx : ly;
	int c = memcmp(x, y, m), ca, cb;

	if (c)
		return c;
	ca = m < lx					 ? (unsigned char)x[m]
	     : git_tree_entry_type(a) == GIT_OBJECT_TREE ? '/'
							 : 0;
	cb = m < ly					 ? (unsigned char)y[m]
	     : git_tree_entry_type(b) == GIT_OBJECT_TREE ? '/'
							 : 0;
	return ca - cb;
}

static void fill_side(git_diff_file *f, const git_tree_entry *e,
		      const char *path)
{
	memset(f, 0, sizeof(*f));
	f->path = path;
	if (e) {
		git_oid_cpy(&f->id, git_tree_entry_id(e));
		f->mode = (uint16_t)git_tree_entry_filemode(e);
		f->flags = GIT_DIFF_FLAG_VALID_ID;
	}
}

static int td_add(struct tdiff *t, git_delta_t status, const git_tree_entry *o,
		  const git_tree_entry *n, const struct buf *prefix)
{
	git_diff_delta *d;
	struct buf path = BUF_INIT;
	const git_tree_entry *e = n ? n : o;
	char *p;

	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 16;

		if (nc > PT_MAX_FILES)
			return pt_error_set(PT_ETOOBIG, "diff: too many "
							"files");
		d = pt_reallocarray(t->d, nc, sizeof(*d));
		if (!d)
			return PT_ENOMEM;
		t->d = d;
		t->cap = nc;
	}
	if (buf_add(&path, prefix->ptr, prefix->len) ||
	    buf_addstr(&path, git_tree_entry_name(e)))
		return PT_ENOMEM;
	p = buf_detach(&path, NULL);
	d = &t->d[t->n++];
	memset(d, 0, sizeof(*d));
	d->status = status;
	d->nfiles = 2;
	fill_side(&d->old_file, o, p);
	fill_side(&d->new_file, n, p);
	t->adds += status == GIT_DELTA_ADDED;
	t->dels += status == GIT_DELTA_DELETED;
	return 0;
}

static int td_trees(struct tdiff *t, git_repository *repo, const git_tree *a,
		    const git_tree *b, struct buf *prefix, unsigned depth);

/* One side of an entry pair: a whole subtree added/deleted, or a file. */
static int td_side(struct tdiff *t, git_repository *repo,
		   const git_tree_entry *e, int added, struct buf *prefix,
		   unsigned depth)
{
	git_tree *sub = NULL;
	size_t len = prefix->len;
	int rc;

	if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
		return td_add(t, added ? GIT_DELTA_ADDED : GIT_DELTA_DELETED,
			      added ? NULL : e, added ? e : NULL, prefix);
	if (git_tree_lookup(&sub, repo, git_tree_entry_id(e)))
		return git_fail(PT_EIO, "reading a tree");
	rc = buf_addstr(prefix, git_tree_entry_name(e));
	if (!rc)
		rc = buf_addch(prefix, '/');
	if (!rc)
		rc = td_trees(t, repo, added ? NULL : sub, added ? sub : NULL,
			      prefix, depth + 1);
	buf_truncate(prefix, len);
	git_tree_free(sub);
	return rc;
}

static int td_both(struct tdiff *t, git_repository *repo,
		   const git_tree_entry *o, const git_tree_entry *n,
		   struct buf *prefix, unsigned depth)
{
	git_tree *ot = NULL, *nt = NULL;
	size_t len = prefix->len;
	int rc;

	if (git_oid_equal(git_tree_entry_id(o), git_tree_entry_id(n)) &&
	    git_tree_entry_filemode(o) == git_tree_entry_filemode(n))
		return 0;
	if (git_tree_entry_type(o) != GIT_OBJECT_TREE)
		return td_add(t, GIT_DELTA_MODIFIED, o, n, prefix);
	if (git_tree_lookup(&ot, repo, git_tree_entry_id(o)) ||
	    git_tree_lookup(&nt, repo, git_tree_entry_id(n))) {
		rc = git_fail(PT_EIO, "reading a tree");
		goto out;
	}
	rc = buf_addstr(prefix, git_tree_entry_name(o));
	if (!rc)
		rc = buf_addch(prefix, '/');
	if (!rc)
		rc = td_trees(t, repo, ot, nt, prefix, depth + 1);
out:
	buf_truncate(prefix, len);
	git_tree_free(ot);
	git_tree_free(nt);
	return rc;
}

static int td_trees(struct tdiff *t, git_repository *repo, const git_tree *a,
		    const git_tree *b, struct buf *prefix, unsigned depth)
{
	size_t na = a ? git_tree_entrycount(a) : 0, i = 0;
	size_t nb = b ? git_tree_entrycount(b) : 0, j = 0;
	int rc = 0;

	if (depth > TD_MAX_DEPTH)
		return pt_error_set(PT_ETOOBIG, "tree '%s' nested too deep",
				    prefix->ptr);
	while (!rc && (i < na || j < nb)) {
		const git_tree_entry *o = i < na ? git_tree_entry_byindex(a, i)
						 : NULL;
		const git_tree_entry *n = j < nb ? git_tree_entry_byindex(b, j)
						 : NULL;
		int c = !o ? 1 : !n ? -1 : ent_cmp(o, n);

		if (c < 0) {
			rc = td_side(t, repo, o, 0, prefix, depth);
			i++;
		} else if (c > 0) {
			rc = td_side(t, repo, n, 1, prefix, depth);
			j++;
		} else {
			rc = td_both(t, repo, o, n, prefix, depth);
			i++;
			j++;
		}
	}
	return rc;
}

/* Pair deleted and added files with the same blob id into renames. */
static void td_exact_renames(struct tdiff *t)
{
	size_t i, k, w;

	for (i = 0; i < t->n && t->adds && t->dels; i++) {
		git_diff_delta *del = &t->d[i];

		if (del->status != GIT_DELTA_DELETED)
			continue;
		for (k = 0; k < t->n; k++) {
			git_diff_delta *add = &t->d[k];

			if (add->status != GIT_DELTA_ADDED ||
			    add->new_file.mode != del->old_file.mode ||
			    !git_oid_equal(&add->new_file.id,
					   &del->old_file.id))
				continue;
			add->status = GIT_DELTA_RENAMED;
			add->similarity = 100;
			add->old_file = del->old_file;
			del->status = GIT_DELTA_UNREADABLE; /* dropped below */
			del->old_file.path = NULL;
			t->adds--;
			t->dels--;
			break;
		}
	}
	for (i = w = 0; i < t->n; i++) {
		if (t->d[i].status == GIT_DELTA_UNREADABLE)
			continue; /* its path string moved to the rename */
		t->d[w++] = t->d[i];
	}
	t->n = w;
}

static int diff_commit(struct mcommit *c, git_repository *repo,
		       git_commit *commit, const struct labels_conf *lc)
{
	git_tree *tree = NULL, *ptree = NULL;
	git_commit *parent = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	git_diff_find_options fopts;
	git_tree_entry *me = NULL;
	struct tdiff td = { NULL, 0, 0, 0, 0 };
	struct buf prefix = BUF_INIT;
	size_t i, n;
	int rc, doc = 1;

	rc = git_commit_tree(&tree, commit);
	if (!rc && git_commit_parentcount(commit))
		rc = git_commit_parent(&parent, commit, 0);
	if (!rc && parent)
		rc = git_commit_tree(&ptree, parent);
	if (rc) {
		rc = git_fail(PT_EIO, "reading trees");
		goto out;
	}
	buf_init(&prefix, PT_MAX_LINE_LEN);
	rc = td_trees(&td, repo, ptree, tree, &prefix, 0);
	if (rc)
		goto out;
	td_exact_renames(&td);
	if (td.adds && td.dels) {
		/* inexact renames: let libgit2 pair them as git log would */
		git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
		git_diff_find_options_init(&fopts,
					   GIT_DIFF_FIND_OPTIONS_VERSION);
		if (git_diff_tree_to_tree(&diff, repo, ptree, tree, &opts)) {
			rc = git_fail(PT_EIO, "diffing trees");
			goto out;
		}
		fopts.flags = GIT_DIFF_FIND_RENAMES;
		if (git_diff_find_similar(diff, &fopts))
			git_error_clear(); /* a missing blob: keep A and D */
	}
	n = diff ? git_diff_num_deltas(diff) : td.n;
	for (i = 0; i < n && !rc; i++) {
		rc = delta_stats(c, repo,
				 diff ? git_diff_get_delta(diff, i) : &td.d[i],
				 lc);
		if (!rc && !c->files[c->nfiles - 1].doc_only)
			doc = 0;
	}
	c->doc_only = n && doc;
	if (!git_tree_entry_bypath(&me, tree, "MAINTAINERS"))
		git_oid_tostr(c->maint, sizeof(c->maint),
			      git_tree_entry_id(me));
	else
		git_error_clear();
out:
	buf_free(&prefix);
	tdiff_free(&td);
	git_tree_entry_free(me);
	git_diff_free(diff);
	git_tree_free(ptree);
	git_tree_free(tree);
	git_commit_free(parent);
	return rc;
}

/* A Fixes: or Cc: stable among T[0, n). */
static int has_fix_trailer(const struct trailer *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].kind == TRAILER_FIXES || t[i].is_stable)
			return 1;
	return 0;
}

/*
 * git's rules: the trailer block is the last paragraph.  DPDK (and some
 * kernel subsystems) put "Fixes:" and "Cc: stable" in a paragraph of their
 * own before the Signed-off-by one; such a paragraph, when it parses as a
 * trailer block and holds a Fixes: or Cc: stable, is taken too (at most
 * two), so that labels see it and the changelog (body_len) excludes it.
 */
static int parse_trailers(struct mcommit *c)
{
	struct trailer *t2, *all;
	size_t n2, len2, k;
	int rc;

	rc = trailers_parse(&c->tr, &c->ntr, &c->body_len, c->message,
			    c->msg_len);
	for (k = 0; !rc && k < 2 && c->ntr && c->body_len; k++) {
		rc = trailers_parse(&t2, &n2, &len2, c->message, c->body_len);
		if (rc || !n2 || !len2 || !has_fix_trailer(t2, n2) ||
		    c->ntr + n2 > PT_MAX_TRAILERS) {
			trailers_free(t2, n2);
			break;
		}
		all = pt_reallocarray(NULL, c->ntr + n2, sizeof(*all));
		if (!all) {
			trailers_free(t2, n2);
			return PT_ENOMEM;
		}
		memcpy(all, t2, n2 * sizeof(*all));
		memcpy(all + n2, c->tr, c->ntr * sizeof(*all));
		free(t2);
		free(c->tr);
		c->tr = all;
		c->ntr += n2;
		c->body_len = len2;
	}
	return rc;
}

static int fill_commit(struct mcommit *c, git_repository *repo,
		       const git_oid *id, const struct labels_conf *lc)
{
	git_commit *commit = NULL;
	const git_signature *a, *m;
	const char *msg, *sum;
	int rc;

	c->oid = *id;
	rc = git_commit_lookup(&commit, repo, id);
	if (rc)
		return git_fail(PT_EIO, "reading commit");
	a = git_commit_author(commit);
	m = git_commit_committer(commit);
	c->nparents = git_commit_parentcount(commit);
	if (c->nparents)
		git_oid_cpy(&c->parent, git_commit_parent_id(commit, 0));
	c->aname = pt_strdup(a->name);
	c->aemail = pt_strdup(a->email);
	c->cname = pt_strdup(m->name);
	c->cemail = pt_strdup(m->email);
	c->adate = a->when.time;
	c->atz = a->when.offset;
	c->cdate = m->when.time;
	c->ctz = m->when.offset;
	msg = git_commit_message(commit);
	sum = git_commit_summary(commit);
	c->msg_len = msg ? strlen(msg) : 0;
	c->message = pt_strndup(msg ? msg : "", c->msg_len);
	c->subject = pt_strdup(sum ? sum : "");
	if (!c->aname || !c->aemail || !c->cname || !c->cemail || !c->message ||
	    !c->subject) {
		rc = PT_ENOMEM;
		goto out;
	}
	rc = parse_trailers(c);
	if (!rc)
		rc = diff_commit(c, repo, commit, lc);
out:
	git_commit_free(commit);
	return rc;
}

/* ---- threads --------------------------------------------------------- */

void *mine_worker_main(void *arg)
{
	struct worker *w = arg;
	struct miner *m = w->m;
	git_repository *repo = NULL;
	int open_rc;

	open_rc = git_repository_open_ext(&repo, m->opts->repo, m->open_flags,
					  NULL);
	for (;;) {
		struct mcommit *c;
		size_t i;
		int rc;

		pthread_mutex_lock(&m->mu);
		while (!m->abort && m->next < m->nids &&
		       m->next >= m->written + RING)
			pthread_cond_wait(&m->space, &m->mu);
		if (m->abort || m->next >= m->nids) {
			pthread_mutex_unlock(&m->mu);
			break;
		}
		i = m->next++;
		pthread_mutex_unlock(&m->mu);
		c = &m->ring[i % RING];
		rc = open_rc ? git_fail(PT_EIO, "opening repository")
			     : fill_commit(c, repo, &m->ids[i], m->lconf);
		pthread_mutex_lock(&m->mu);
		if (rc) {
			c->err = rc;
			snprintf(c->errmsg, sizeof(c->errmsg), "%s",
				 pt_error_last());
		}
		c->ready = 1;
		pthread_cond_broadcast(&m->ready);
		pthread_mutex_unlock(&m->mu);
	}
	git_repository_free(repo);
	return NULL;
}
