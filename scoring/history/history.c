/*
 * history.c - `patchtriage mine`: walk a repository with libgit2 and store
 * its non-merge commits (ids, people through .mailmap, dates, subject,
 * message, trailers, per-file numstat) in the tables of history.h.  The
 * main thread walks and collects ids, then N worker threads (each with
 * its own git_repository, as libgit2 requires) diff each commit against
 * its first parent, and the main thread writes the results in walk order,
 * in large transactions, through a bounded ring so memory stays flat.
 * Blobs missing from the object database (shallow or filtered clones)
 * make a file "uncounted", never an error.  The passes that depend on the
 * whole history (cycle, labels, features) run after the walk, every time.
 */
#include "scoring/history/history.h"

#include <ctype.h>
#include <git2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scoring/history/cycle.h"
#include "scoring/util/fnv.h"
#include "scoring/history/histfeat.h"
#include "scoring/history/labels.h"
#include "scoring/patch/patch.h"
#include "scoring/util/strmap.h"

#define RING 1024          /* commits diffed ahead of the writer */
#define TXN_COMMITS 4000   /* commits per write transaction */

struct mfile {
	char *path, *old_path;
	char status;
	unsigned added, removed, old_lines;
	unsigned binary : 1, uncounted : 1, doc_only : 1;
};

struct mcommit {
	git_oid oid, parent;
	unsigned nparents;
	char *aname, *aemail, *cname, *cemail;
	int64_t adate, cdate;
	int atz, ctz;
	char *subject, *message;
	size_t msg_len, body_len;
	struct trailer *tr;
	size_t ntr;
	struct mfile *files;
	size_t nfiles, fcap;
	unsigned added, removed, uncounted;
	int doc_only;
	char maint[GIT_OID_HEXSZ + 1];
	int ready, err;
	char errmsg[256];
};

struct miner {
	const struct mine_opts *opts;
	const struct labels_conf *lconf;
	git_oid *ids;
	size_t nids;
	struct mcommit ring[RING];
	pthread_mutex_t mu;
	pthread_cond_t ready, space;
	size_t next, written;
	int abort;
};

static int git_fail(int code, const char *what)
{
	const git_error *e = git_error_last();

	return pt_error_set(code, "%s: %s", what,
			    e && e->message ? e->message : "libgit2 error");
}

static void mcommit_clear(struct mcommit *c)
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

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

/* '#' starts a comment in scripts and build files, not in C. */
static int hash_comments(const char *path)
{
	static const char *const sfx[] = {
		".py", ".sh", ".pl", ".mk", ".build", ".cfg", ".ini",
		".yaml", ".yml", ".cmake", ".txt", ".toml", "Makefile",
		"Kconfig", "Kbuild", "meson_options.txt", NULL,
	};
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	if (!strncmp(base, "Makefile", 8) || !strncmp(base, "Kconfig", 7))
		return 1;
	for (i = 0; sfx[i]; i++)
		if (has_suffix(path, sfx[i]))
			return 1;
	return 0;
}

/*
 * A changed line that cannot change behaviour: blank, or a comment line
 * ("/ *", "//", " * text", "* /", or '#' in scripts).  "*p = 0;" is code.
 */
static int comment_line(const char *s, size_t n, int hash)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!n)
		return 1;
	if (n >= 2 && (!memcmp(s, "/*", 2) || !memcmp(s, "//", 2) ||
		       !memcmp(s, "*/", 2)))
		return 1;
	if (*s == '*' && (n == 1 || s[1] == ' ' || s[1] == '\t') &&
	    s[n - 1] != ';')
		return 1;
	return hash && *s == '#';
}

/* Only comments/blank lines changed, or only whitespace. */
static int patch_nocode(git_patch *patch, const char *path)
{
	uint64_t hadd = FNV_INIT, hdel = hadd;
	size_t h, l, nh = git_patch_num_hunks(patch);
	int hash = hash_comments(path), comments = 1;
	const git_diff_line *line;

	for (h = 0; h < nh; h++) {
		size_t nl = (size_t)git_patch_num_lines_in_hunk(patch, h);

		for (l = 0; l < nl; l++) {
			if (git_patch_get_line_in_hunk(&line, patch, h, l))
				return 0;
			if (line->origin == GIT_DIFF_LINE_ADDITION)
				hadd = fnv_nospace(hadd, line->content,
						   line->content_len, NULL);
			else if (line->origin == GIT_DIFF_LINE_DELETION)
				hdel = fnv_nospace(hdel, line->content,
						   line->content_len, NULL);
			else
				continue;
			if (comments && !comment_line(line->content,
						      line->content_len, hash))
				comments = 0;
		}
	}
	return comments || hadd == hdel;
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
			return pt_error_set(PT_ETOOBIG, "commit '%s': too "
					    "many files", git_oid_tostr_s(
						    &c->oid));
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
	git_patch *patch = NULL;
	git_diff_options dopts;
	struct mfile *f = NULL;
	size_t add = 0, del = 0;
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
	git_diff_options_init(&dopts, GIT_DIFF_OPTIONS_VERSION);
	dopts.context_lines = 0;
	rc = git_patch_from_blobs(&patch, ob, d->old_file.path, nb,
				  d->new_file.path, &dopts);
	if (rc) {
		rc = git_fail(PT_EIO, "diffing blobs");
		goto out;
	}
	if (git_patch_get_delta(patch)->flags & GIT_DIFF_FLAG_BINARY) {
		f->binary = 1;
	} else {
		git_patch_line_stats(NULL, &add, &del, patch);
		if (ob)
			f->old_lines = count_lines(git_blob_rawcontent(ob),
						   (size_t)git_blob_rawsize(ob));
	}
	f->added = (unsigned)add;
	f->removed = (unsigned)del;
	f->doc_only = labels_doc_path(lc, f->path) ||
		      (!f->binary && patch_nocode(patch, f->path));
	c->added += f->added;
	c->removed += f->removed;
out:
	git_patch_free(patch);
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
	ca = m < lx ? (unsigned char)x[m]
		    : git_tree_entry_type(a) == GIT_OBJECT_TREE ? '/' : 0;
	cb = m < ly ? (unsigned char)y[m]
		    : git_tree_entry_type(b) == GIT_OBJECT_TREE ? '/' : 0;
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

static int td_add(struct tdiff *t, git_delta_t status,
		  const git_tree_entry *o, const git_tree_entry *n,
		  const struct buf *prefix)
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
	if (!c->aname || !c->aemail || !c->cname || !c->cemail ||
	    !c->message || !c->subject) {
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

struct worker {
	struct miner *m;
	pthread_t th;
	int started;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct miner *m = w->m;
	git_repository *repo = NULL;
	int open_rc;

	open_rc = git_repository_open_ext(&repo, m->opts->repo,
					  GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
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

/* ---- writing --------------------------------------------------------- */

struct writer {
	struct db *db;
	int64_t repo_id;
	int64_t seq;
	git_mailmap *mm;
	struct strmap people;
	sqlite3_stmt *ins_commit, *ins_file, *ins_trailer, *ins_person;
	size_t with_fixes, uncounted, written;
};

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static int step_done(struct writer *w, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : db_error(w->db, what);
}

/* The people id of NAME <EMAIL> after .mailmap; 0 when there is none. */
static int person_id(int64_t *out, struct writer *w, const char *name,
		     const char *email)
{
	const char *rn = name, *re = email;
	struct strmap_entry *e;
	struct buf key = BUF_INIT;
	size_t i;
	int added, rc;

	*out = 0;
	if (!email || !*email)
		return 0;
	if (w->mm && git_mailmap_resolve(&rn, &re, w->mm, name ? name : "",
					 email))
		git_error_clear();
	rc = buf_addstr(&key, re);
	for (i = 0; !rc && i < key.len; i++)
		key.ptr[i] = (char)tolower((unsigned char)key.ptr[i]);
	if (!rc)
		rc = strmap_put(&e, &added, &w->people, key.ptr, key.len);
	if (rc)
		goto out;
	if (added) {
		sqlite3_bind_text(w->ins_person, 1, key.ptr, (int)key.len,
				  SQLITE_TRANSIENT);
		bind_str(w->ins_person, 2, rn);
		rc = step_done(w, w->ins_person, "saving a person");
		if (rc)
			goto out;
		e->v.i = sqlite3_last_insert_rowid(w->db->h);
	}
	*out = e->v.i;
out:
	buf_free(&key);
	return rc;
}

static int write_files(struct writer *w, int64_t cid, struct mcommit *c)
{
	sqlite3_stmt *st = w->ins_file;
	size_t i;
	int rc = 0;

	for (i = 0; i < c->nfiles && !rc; i++) {
		const struct mfile *f = &c->files[i];
		char s[2] = { f->status, 0 };

		sqlite3_bind_int64(st, 1, cid);
		bind_str(st, 2, f->path);
		bind_str(st, 3, f->old_path);
		bind_str(st, 4, s);
		sqlite3_bind_int(st, 5, (int)f->added);
		sqlite3_bind_int(st, 6, (int)f->removed);
		sqlite3_bind_int(st, 7, f->binary);
		sqlite3_bind_int(st, 8, f->uncounted);
		sqlite3_bind_int(st, 9, (int)f->old_lines);
		sqlite3_bind_int(st, 10, f->doc_only);
		rc = step_done(w, st, "saving a file change");
	}
	return rc;
}

static int write_trailers(struct writer *w, int64_t cid, struct mcommit *c)
{
	sqlite3_stmt *st = w->ins_trailer;
	size_t i;
	int fixes = 0, rc = 0;

	for (i = 0; i < c->ntr && !rc; i++) {
		const struct trailer *t = &c->tr[i];
		int64_t pid = 0;

		if (t->kind == TRAILER_FIXES)
			fixes = 1;
		if (t->email)
			rc = person_id(&pid, w, t->name, t->email);
		if (rc)
			break;
		sqlite3_bind_int64(st, 1, cid);
		sqlite3_bind_int(st, 2, (int)i);
		sqlite3_bind_int(st, 3, (int)t->kind);
		bind_str(st, 4, t->key);
		bind_str(st, 5, t->value);
		if (pid)
			sqlite3_bind_int64(st, 6, pid);
		sqlite3_bind_int(st, 7, t->is_stable);
		bind_str(st, 8, t->fixes_sha);
		bind_str(st, 9, t->fixes_subject);
		rc = step_done(w, st, "saving a trailer");
	}
	w->with_fixes += fixes;
	return rc;
}

static int write_commit(struct writer *w, struct mcommit *c)
{
	sqlite3_stmt *st = w->ins_commit;
	char sha[GIT_OID_HEXSZ + 1], par[GIT_OID_HEXSZ + 1];
	int64_t aid, mid, cid;
	int rc;

	rc = person_id(&aid, w, c->aname, c->aemail);
	if (!rc)
		rc = person_id(&mid, w, c->cname, c->cemail);
	if (rc)
		return rc;
	git_oid_tostr(sha, sizeof(sha), &c->oid);
	git_oid_tostr(par, sizeof(par), &c->parent);
	sqlite3_bind_int64(st, 1, w->repo_id);
	bind_str(st, 2, sha);
	sqlite3_bind_int64(st, 3, w->seq);
	bind_str(st, 4, c->nparents ? par : NULL);
	sqlite3_bind_int(st, 5, (int)c->nparents);
	aid ? sqlite3_bind_int64(st, 6, aid) : sqlite3_bind_null(st, 6);
	mid ? sqlite3_bind_int64(st, 7, mid) : sqlite3_bind_null(st, 7);
	sqlite3_bind_int64(st, 8, c->adate);
	sqlite3_bind_int(st, 9, c->atz);
	sqlite3_bind_int64(st, 10, c->cdate);
	sqlite3_bind_int(st, 11, c->ctz);
	sqlite3_bind_text(st, 12, c->subject, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 13, c->message, (int)c->msg_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 14, (int64_t)c->body_len);
	sqlite3_bind_int(st, 15, (int)c->nfiles);
	sqlite3_bind_int(st, 16, (int)c->added);
	sqlite3_bind_int(st, 17, (int)c->removed);
	sqlite3_bind_int(st, 18, (int)c->uncounted);
	sqlite3_bind_int(st, 19, c->doc_only);
	bind_str(st, 20, c->maint[0] ? c->maint : NULL);
	rc = step_done(w, st, "saving a commit");
	if (rc || !sqlite3_changes(w->db->h))
		return rc; /* already mined (an earlier run) */
	cid = sqlite3_last_insert_rowid(w->db->h);
	w->seq++;
	w->uncounted += c->uncounted;
	rc = write_files(w, cid, c);
	if (!rc)
		rc = write_trailers(w, cid, c);
	return rc;
}

static int writer_open(struct writer *w, struct db *db, git_repository *repo,
		       int64_t repo_id)
{
	sqlite3_stmt *st;
	int rc;

	memset(w, 0, sizeof(*w));
	w->db = db;
	w->repo_id = repo_id;
	if (git_mailmap_from_repository(&w->mm, repo)) {
		git_error_clear();
		w->mm = NULL;
	}
	rc = db_prepare(&st, db, "SELECT coalesce(max(seq) + 1, 0) FROM "
			"commits WHERE repo_id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		w->seq = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	rc = db_prepare(&st, db, "SELECT id, email FROM people");
	if (rc)
		return rc;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		const char *e = (const char *)sqlite3_column_text(st, 1);
		struct strmap_entry *en;

		rc = strmap_put(&en, NULL, &w->people, e,
				(size_t)sqlite3_column_bytes(st, 1));
		if (!rc)
			en->v.i = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (!rc)
		rc = db_prepare(&w->ins_commit, db,
			"INSERT INTO commits (repo_id, sha, seq, parent, "
			"nparents, author_id, committer_id, author_date, "
			"author_tz, commit_date, commit_tz, subject, message, "
			"body_len, nfiles, added, removed, uncounted, "
			"doc_only, maint_blob) VALUES (?, ?, ?, ?, ?, ?, ?, "
			"?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
			"ON CONFLICT DO NOTHING");
	if (!rc)
		rc = db_prepare(&w->ins_file, db,
			"INSERT INTO commit_files (commit_id, path, old_path, "
			"status, added, removed, binary, uncounted, "
			"old_lines, doc_only) VALUES (?, ?, ?, ?, ?, ?, ?, "
			"?, ?, ?)");
	if (!rc)
		rc = db_prepare(&w->ins_trailer, db,
			"INSERT INTO trailers (commit_id, idx, kind, key, "
			"value, person_id, is_stable, fixes_sha, "
			"fixes_subject) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
	if (!rc)
		rc = db_prepare(&w->ins_person, db,
			"INSERT INTO people (email, name) VALUES (?, ?)");
	return rc;
}

static void writer_close(struct writer *w)
{
	sqlite3_finalize(w->ins_commit);
	sqlite3_finalize(w->ins_file);
	sqlite3_finalize(w->ins_trailer);
	sqlite3_finalize(w->ins_person);
	git_mailmap_free(w->mm);
	strmap_free(&w->people);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void report(const struct mine_opts *o, const char *stage, size_t done,
		   size_t total, double t0)
{
	struct mine_progress p;

	if (!o->progress)
		return;
	p.done = done;
	p.total = total;
	p.elapsed = now_s() - t0;
	p.stage = stage;
	o->progress(&p, o->progress_ctx);
}

static int write_all(struct miner *m, struct writer *w, double t0)
{
	size_t i;
	int rc = 0, in_txn = 0;

	for (i = 0; i < m->nids && !rc; i++) {
		struct mcommit *c = &m->ring[i % RING];

		pthread_mutex_lock(&m->mu);
		while (!c->ready)
			pthread_cond_wait(&m->ready, &m->mu);
		pthread_mutex_unlock(&m->mu);
		if (c->err) {
			rc = pt_error_set(c->err, "mining '%s': commit %s: %s",
					  m->opts->repo,
					  git_oid_tostr_s(&m->ids[i]),
					  c->errmsg);
		}
		if (!rc && !in_txn && !(rc = db_begin(w->db)))
			in_txn = 1;
		if (!rc)
			rc = write_commit(w, c);
		if (!rc && (i + 1) % TXN_COMMITS == 0) {
			rc = db_commit(w->db);
			in_txn = 0;
		}
		mcommit_clear(c);
		pthread_mutex_lock(&m->mu);
		m->written = i + 1;
		if (rc)
			m->abort = 1;
		pthread_cond_broadcast(&m->space);
		pthread_mutex_unlock(&m->mu);
		if ((i & 255) == 255)
			report(m->opts, "diffing", i + 1, m->nids, t0);
	}
	if (in_txn) {
		if (rc)
			db_rollback(w->db);
		else
			rc = db_commit(w->db);
	}
	report(m->opts, "diffing", m->nids, m->nids, t0);
	w->written = m->written;
	return rc;
}

/* ---- the walk -------------------------------------------------------- */

static int walk(struct miner *m, git_repository *repo, const char *tip,
		size_t *merges)
{
	const struct mine_opts *o = m->opts;
	git_revwalk *rw = NULL;
	git_object *obj = NULL;
	git_oid id, hide;
	size_t cap = 0;
	int rc;

	if (git_revwalk_new(&rw, repo))
		return git_fail(PT_EIO, "starting the walk");
	git_revwalk_sorting(rw, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME |
					GIT_SORT_REVERSE);
	if (o->first_parent)
		git_revwalk_simplify_first_parent(rw);
	rc = git_revparse_single(&obj, repo, o->rev ? o->rev : "HEAD");
	if (rc) {
		rc = pt_error_set(PT_ENOTFOUND, "repository '%s': unknown "
				  "revision '%s'", o->repo,
				  o->rev ? o->rev : "HEAD");
		goto out;
	}
	if (git_revwalk_push(rw, git_object_id(obj))) {
		rc = git_fail(PT_EIO, "walking from the revision");
		goto out;
	}
	if (tip && !git_oid_fromstr(&hide, tip) &&
	    git_revwalk_hide(rw, &hide))
		git_error_clear(); /* the old tip is gone: walk it all */
	while (!(rc = git_revwalk_next(&id, rw))) {
		git_commit *c;

		if (git_commit_lookup(&c, repo, &id)) {
			rc = git_fail(PT_EIO, "reading a commit");
			goto out;
		}
		if (git_commit_parentcount(c) > 1) {
			(*merges)++;
		} else if (git_commit_time(c) >= o->since) {
			if (m->nids == cap) {
				git_oid *n = pt_reallocarray(
					m->ids, cap ? cap * 2 : 4096,
					sizeof(*n));

				if (!n) {
					git_commit_free(c);
					rc = PT_ENOMEM;
					goto out;
				}
				m->ids = n;
				cap = cap ? cap * 2 : 4096;
			}
			m->ids[m->nids++] = id;
		}
		git_commit_free(c);
	}
	rc = rc == GIT_ITEROVER ? 0 : git_fail(PT_EIO, "walking history");
out:
	git_object_free(obj);
	git_revwalk_free(rw);
	return rc;
}

/* ---- repository row -------------------------------------------------- */

int mine_repo_id(int64_t *out, struct db *db, const char *repo)
{
	sqlite3_stmt *st;
	int rc;

	*out = 0;
	rc = db_prepare(&st, db, "SELECT id FROM repos WHERE path = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, repo, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = 0;
	} else {
		rc = rc == SQLITE_DONE
			     ? pt_error_set(PT_ENOTFOUND,
					    "repository '%s' was never mined",
					    repo)
			     : db_error(db, "reading repositories");
	}
	sqlite3_finalize(st);
	return rc;
}

static int repo_row(int64_t *id, char **tip, struct db *db, const char *path)
{
	sqlite3_stmt *st;
	int rc;

	*tip = NULL;
	rc = db_prepare(&st, db, "INSERT INTO repos (path) VALUES (?) "
			"ON CONFLICT DO NOTHING");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0
					      : db_error(db, "saving repository");
	sqlite3_finalize(st);
	if (rc)
		return rc;
	rc = db_prepare(&st, db, "SELECT id, tip FROM repos WHERE path = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
			*tip = pt_strdup(
				(const char *)sqlite3_column_text(st, 1));
			if (!*tip)
				rc = PT_ENOMEM;
		}
	} else {
		rc = db_error(db, "reading repository");
	}
	sqlite3_finalize(st);
	return rc;
}

static int save_tip(struct db *db, int64_t id, git_repository *repo,
		    const char *rev)
{
	git_object *obj = NULL;
	sqlite3_stmt *st = NULL;
	int rc;

	if (git_revparse_single(&obj, repo, rev ? rev : "HEAD"))
		return git_fail(PT_EIO, "resolving the tip");
	rc = db_prepare(&st, db,
			"UPDATE repos SET tip = ?1, mined_at = ?2, newest = "
			"(SELECT max(commit_date) FROM commits WHERE repo_id "
			"= ?3) WHERE id = ?3");
	if (!rc) {
		bind_str(st, 1, git_oid_tostr_s(git_object_id(obj)));
		sqlite3_bind_int64(st, 2, (int64_t)time(NULL));
		sqlite3_bind_int64(st, 3, id);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0 : db_error(db, "saving the mined tip");
	}
	sqlite3_finalize(st);
	git_object_free(obj);
	return rc;
}

static int count_commits(size_t *out, struct db *db, int64_t repo_id)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db, "SELECT count(*) FROM commits WHERE "
			"repo_id = ?");
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, repo_id);
	*out = sqlite3_step(st) == SQLITE_ROW
		       ? (size_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return 0;
}

static unsigned nthreads(const struct mine_opts *o)
{
	long n = o->threads ? (long)o->threads : sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
}

static int diff_and_write(struct miner *m, struct writer *w, double t0)
{
	struct worker ws[16];
	unsigned i, n = nthreads(m->opts);
	int rc;

	memset(ws, 0, sizeof(ws));
	for (i = 0; i < n; i++) {
		ws[i].m = m;
		ws[i].started = !pthread_create(&ws[i].th, NULL, worker_main,
						&ws[i]);
	}
	if (!ws[0].started) {
		m->abort = 1;
		return pt_error_set(PT_ERROR, "cannot start diff threads");
	}
	rc = write_all(m, w, t0);
	pthread_mutex_lock(&m->mu);
	m->abort = 1;
	pthread_cond_broadcast(&m->space);
	pthread_mutex_unlock(&m->mu);
	for (i = 0; i < n; i++)
		if (ws[i].started)
			pthread_join(ws[i].th, NULL);
	for (i = 0; i < RING; i++)
		mcommit_clear(&m->ring[i]);
	return rc;
}

static int passes(struct mine_result *res, struct db *db,
		  git_repository *repo, const struct mine_opts *o,
		  const struct labels_conf *lc, double t0)
{
	struct labels_counts lcnt;
	int rc;

	report(o, "cycle", 0, 0, t0);
	rc = cycle_assign(&res->tags, db, repo, res->repo_id,
			  o->tag_pattern);
	if (rc)
		return rc;
	report(o, "labels", 0, 0, t0);
	rc = labels_compute(&lcnt, db, repo, res->repo_id, lc,
			    o->horizon_days ? o->horizon_days : 365);
	if (rc)
		return rc;
	res->fixes = lcnt.fixes;
	res->refs = lcnt.refs;
	res->refs_full = lcnt.full;
	res->refs_prefix = lcnt.prefix;
	res->refs_subject = lcnt.subject;
	res->refs_unresolved = lcnt.unresolved;
	res->trivial_nocode = lcnt.trivial[LABELS_NOCODE];
	res->trivial_spelling = lcnt.trivial[LABELS_SPELLING];
	res->trivial_race = lcnt.trivial[LABELS_RACE];
	res->bugs = lcnt.bugs;
	res->with_fixes = lcnt.with_fixes;
	report(o, "features", 0, 0, t0);
	rc = histfeat_compute(db, repo, res->repo_id);
	if (rc)
		return rc;
	if (!o->summarise)
		return 0;
	report(o, "summary", 0, 0, t0);
	return o->summarise(db, res->repo_id);
}

int mine_run(struct mine_result *res, struct db *db,
	     const struct mine_opts *o)
{
	struct miner *m = NULL;
	struct writer w;
	struct labels_conf *lc = NULL;
	git_repository *repo = NULL;
	char *tip = NULL;
	size_t merges = 0;
	double t0 = now_s();
	int rc, winit = 0;

	memset(res, 0, sizeof(*res));
	memset(&w, 0, sizeof(w));
	git_libgit2_init();
	/*
	 * git does not hash every object it reads; libgit2 does by default,
	 * which doubles the cost of reading blobs.  Objects come from the
	 * repository's own packs, so skip it as git does.  The object cache
	 * is per repository handle (one per thread): keep it small.
	 */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)(32 << 20));
	if (git_repository_open_ext(&repo, o->repo,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		rc = git_fail(PT_ENOTFOUND, o->repo);
		goto out;
	}
	rc = labels_conf_load(&lc, o->labels_conf);
	if (!rc)
		rc = repo_row(&res->repo_id, &tip, db, o->repo);
	if (rc)
		goto out;
	m = pt_calloc(1, sizeof(*m));
	if (!m) {
		rc = PT_ENOMEM;
		goto out;
	}
	m->opts = o;
	m->lconf = lc;
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->ready, NULL);
	pthread_cond_init(&m->space, NULL);
	report(o, "walking", 0, 0, t0);
	rc = walk(m, repo, tip, &merges);
	if (!rc)
		rc = writer_open(&w, db, repo, res->repo_id);
	winit = !rc || w.db;
	if (!rc && m->nids)
		rc = diff_and_write(m, &w, t0);
	if (!rc)
		rc = save_tip(db, res->repo_id, repo, o->rev);
	if (!rc)
		rc = passes(res, db, repo, o, lc, t0);
	if (!rc)
		rc = count_commits(&res->commits, db, res->repo_id);
	if (!rc)
		report(o, "done", 0, 0, t0);
	res->walked = winit ? w.written : 0;
	res->uncounted = winit ? w.uncounted : 0;
out:
	if (winit)
		writer_close(&w);
	if (m) {
		pthread_mutex_destroy(&m->mu);
		pthread_cond_destroy(&m->ready);
		pthread_cond_destroy(&m->space);
		free(m->ids);
		free(m);
	}
	labels_conf_free(lc);
	free(tip);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}
