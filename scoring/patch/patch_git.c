/*
 * patch_git.c - the git source of struct patch: a commit (libgit2) to the
 * same struct a mail of that commit gives.  It owns reading the message
 * (converted to UTF-8; the first paragraph unfolded is the subject, as git
 * format-patch writes it), author and committer with their dates, and the
 * diff to the first parent (the empty tree for a root commit) with rename
 * detection.  The diff is printed as a patch and handed to patch_set_diff,
 * so commits and mails go through the one diff parser; a file whose blob
 * is missing from the object database is named in p->uncounted instead,
 * as `mine` counts it (history_diff.c).  The caller has
 * called git_libgit2_init() (it holds a repository).
 */
#include "scoring/patch/mail.h"
#include "scoring/patch/patch.h"
#include "scoring/patch/treediff.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

static int git_fail(int code, const char *what)
{
	const git_error *e = git_error_last();

	return pt_error_set(code == GIT_ENOTFOUND ? PT_ENOTFOUND : PT_ERROR,
			    "%s: %s", what,
			    e && e->message ? e->message : "unknown error");
}

static int person_set(struct person *pr, struct git_signature const *s,
		      const char *enc)
{
	struct buf b = BUF_INIT;
	size_t i;
	int rc = 0;

	if (s->name && *s->name) {
		rc = mail_to_utf8(&b, enc, s->name, strlen(s->name));
		if (!rc)
			pr->name = buf_detach(&b, NULL);
	}
	if (!rc && s->email && *s->email) {
		rc = mail_to_utf8(&b, enc, s->email, strlen(s->email));
		if (!rc)
			pr->email = buf_detach(&b, NULL);
		for (i = 0; pr->email && pr->email[i]; i++)
			pr->email[i] =
				(char)tolower((unsigned char)pr->email[i]);
	}
	buf_free(&b);
	if (!rc && ((s->name && *s->name && !pr->name) ||
		    (s->email && *s->email && !pr->email)))
		rc = PT_ENOMEM;
	return rc;
}

static int blank_line(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	return 1;
}

/*
 * Subject: the first paragraph joined into one line, as format-patch
 * does; the message: the rest, blank lines at both ends dropped.
 */
static int message_set(struct patch *p, const char *msg, const char *enc)
{
	struct buf u = BUF_INIT, subj = BUF_INIT;
	const char *s, *nl;
	size_t len, off = 0, start, e;
	int rc;

	rc = mail_to_utf8(&u, enc, msg ? msg : "", msg ? strlen(msg) : 0);
	if (rc)
		goto out;
	s = u.ptr;
	len = u.len;
	for (;;) { /* leading blank lines */
		nl = memchr(s + off, '\n', len - off);
		e = nl ? (size_t)(nl - s) : len;
		if (off >= len || !blank_line(s + off, e - off))
			break;
		off = e + 1;
	}
	start = off;
	while (off < len) {
		nl = memchr(s + off, '\n', len - off);
		e = nl ? (size_t)(nl - s) : len;
		if (blank_line(s + off, e - off))
			break;
		off = e < len ? e + 1 : len;
	}
	rc = mail_add_subject(&subj, s + start, off - start);
	if (!rc)
		rc = subject_parse(&p->subject, subj.ptr, subj.len);
	while (!rc && off < len) {
		nl = memchr(s + off, '\n', len - off);
		e = nl ? (size_t)(nl - s) : len;
		if (!blank_line(s + off, e - off))
			break;
		off = e < len ? e + 1 : len;
	}
	if (rc)
		goto out;
	buf_rtrim(&u);
	rc = patch_set_message(p, u.ptr + (off < u.len ? off : u.len),
			       off < u.len ? u.len - off : 0);
out:
	buf_free(&u);
	buf_free(&subj);
	return rc;
}

/*
 * Whether one side of a delta names a blob that the object database
 * lacks (a damaged or partial clone).  The miner's rule (history_diff.c):
 * such a file's change cannot be read, so it is left out and named, not
 * an error.  Absent sides and submodules have no blob to read.
 */
static int blob_missing(git_repository *repo, const git_diff_file *f)
{
	git_odb *odb = NULL;
	int missing = 0;

	if (git_oid_is_zero(&f->id) || f->mode == GIT_FILEMODE_COMMIT)
		return 0;
	if (!git_repository_odb(&odb, repo))
		missing = !git_odb_exists(odb, &f->id);
	git_odb_free(odb);
	return missing;
}

static int delta_missing(git_repository *repo, const git_diff_delta *d)
{
	return blob_missing(repo, &d->old_file) ||
	       blob_missing(repo, &d->new_file);
}

static int any_missing(git_repository *repo, const git_diff *diff)
{
	size_t i, n = git_diff_num_deltas(diff);

	for (i = 0; i < n; i++)
		if (delta_missing(repo, git_diff_get_delta(diff, i)))
			return 1;
	return 0;
}

static int add_uncounted(struct patch *p, const git_diff_delta *d)
{
	const char *path = d->status == GIT_DELTA_DELETED || !d->new_file.path
				   ? d->old_file.path
				   : d->new_file.path;
	char **v;

	v = pt_reallocarray(p->uncounted, p->nuncounted + 1, sizeof(*v));
	if (!v)
		return PT_ENOMEM;
	p->uncounted = v;
	v[p->nuncounted] = pt_strdup(path ? path : "?");
	if (!v[p->nuncounted])
		return PT_ENOMEM;
	p->nuncounted++;
	return 0;
}

/* The patch text of the deltas that can be read; the rest to uncounted. */
static int readable_text(struct buf *out, struct patch *p, git_repository *repo,
			 git_diff *diff)
{
	const git_diff_delta *d;
	git_patch *gp;
	git_buf one = GIT_BUF_INIT;
	size_t i, n = git_diff_num_deltas(diff);
	int rc = 0;

	for (i = 0; !rc && i < n; i++) {
		d = git_diff_get_delta(diff, i);
		if (delta_missing(repo, d)) {
			rc = add_uncounted(p, d);
			continue;
		}
		gp = NULL;
		if (git_patch_from_diff(&gp, diff, i) ||
		    git_patch_to_buf(&one, gp))
			rc = git_fail(-1, "cannot diff against the parent");
		else
			rc = buf_add(out, one.ptr, one.size);
		git_patch_free(gp);
		git_buf_dispose(&one);
	}
	return rc;
}

static int parent_tree(git_tree **out, const git_commit *commit)
{
	git_commit *parent = NULL;
	int rc = 0;

	*out = NULL;
	if (git_commit_parentcount(commit) > 0) {
		rc = git_commit_parent(&parent, commit, 0);
		if (!rc)
			rc = git_commit_tree(out, parent);
	}
	git_commit_free(parent);
	return rc;
}

/*
 * Diff to the first parent.  When a blob is missing, renames are paired
 * as far as the blobs allow (the miner's "keep A and D") and the files
 * that cannot be read go to p->uncounted.
 */
static int diff_set(struct patch *p, git_repository *repo,
		    const git_commit *commit)
{
	git_diff_options opts;
	git_diff_find_options fo;
	git_tree *tree = NULL, *ptree = NULL;
	git_diff *diff = NULL;
	git_buf out = GIT_BUF_INIT;
	struct buf text = BUF_INIT;
	int rc, missing = 0;

	/* the _INIT macros trip -Wmissing-field-initializers */
	rc = git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	if (!rc)
		rc = git_diff_find_options_init(&fo,
						GIT_DIFF_FIND_OPTIONS_VERSION);
	if (!rc)
		rc = git_commit_tree(&tree, commit);
	if (!rc)
		rc = parent_tree(&ptree, commit);
	if (!rc)
		rc = treediff_diff(&diff, repo, ptree, tree, &opts);
	fo.flags = GIT_DIFF_FIND_RENAMES;
	if (!rc) {
		missing = any_missing(repo, diff);
		rc = git_diff_find_similar(diff, &fo);
		if (rc && missing) {
			git_error_clear();
			rc = 0;
		}
	}
	if (!rc && !missing)
		rc = git_diff_to_buf(&out, diff, GIT_DIFF_FORMAT_PATCH);
	if (rc) {
		rc = git_fail(rc, "cannot diff against the parent");
		goto out;
	}
	if (missing)
		rc = readable_text(&text, p, repo, diff);
	if (!rc && out.size)
		rc = patch_set_diff(p, out.ptr, out.size);
	else if (!rc && text.len)
		rc = patch_set_diff(p, text.ptr, text.len);
out:
	buf_free(&text);
	git_buf_dispose(&out);
	git_diff_free(diff);
	git_tree_free(ptree);
	git_tree_free(tree);
	return rc;
}

static int ids_set(struct patch *p, const git_commit *commit)
{
	char hex[GIT_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), git_commit_id(commit));
	p->commit_id = pt_strdup(hex);
	if (!p->commit_id)
		return PT_ENOMEM;
	if (git_commit_parentcount(commit) == 0)
		return 0;
	git_oid_tostr(hex, sizeof(hex), git_commit_parent_id(commit, 0));
	p->parent_id = pt_strdup(hex);
	return p->parent_id ? 0 : PT_ENOMEM;
}

int patch_from_commit(struct patch **out, struct git_repository *repo,
		      const struct git_commit *commit)
{
	const git_signature *a, *c;
	const char *enc;
	struct patch *p = NULL;
	int rc;

	*out = NULL;
	if (!repo || !commit)
		return pt_error_set(PT_EINVAL, "no commit given");
	rc = patch_new(&p);
	if (rc)
		return rc;
	p->source = PATCH_FROM_GIT;
	enc = git_commit_message_encoding(commit);
	a = git_commit_author(commit);
	c = git_commit_committer(commit);
	rc = ids_set(p, commit);
	if (!rc)
		rc = person_set(&p->author, a, enc);
	if (!rc)
		rc = person_set(&p->committer, c, enc);
	if (rc)
		goto out;
	p->author_date = a->when.time;
	p->author_tz = a->when.offset;
	p->commit_date = c->when.time;
	p->commit_tz = c->when.offset;
	rc = message_set(p, git_commit_message(commit), enc);
	if (!rc)
		rc = diff_set(p, repo, commit);
out:
	if (rc) {
		pt_error_wrap(rc, "commit '%.12s'",
			      p->commit_id ? p->commit_id : "?");
		patch_free(p);
		return rc;
	}
	*out = p;
	return 0;
}
