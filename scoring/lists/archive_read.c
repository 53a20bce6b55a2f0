/*
 * archive_read.c - the readers of list archives (see archive.h): the
 * public-inbox walk with libgit2 (epochs in order, from after the last
 * commit read) and the streaming mbox reader with zlib, which cuts a
 * plain or gzip'd file into messages as it reads.  They hand each raw
 * message to a callback and know nothing of threading or SQL; the
 * import (archive.c) is their caller.
 */
#include "scoring/lists/archive.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "scoring/patch/mbox.h"
#include "scoring/util/gitlimits.h"

#define ARCHIVE_BLOCK (1u << 20)
#define ARCHIVE_MAX_EPOCHS 10000u

static int git_fail(int code, const char *what, const char *path)
{
	const git_error *e = git_error_last();

	return pt_error_set(code, "%s '%s': %s", what, path,
			    e && e->message ? e->message : "libgit2 error");
}

/* ---- public-inbox -------------------------------------------------- */

static int pi_hide(git_revwalk *w, git_repository *repo, const char *since,
		   struct archive_walk *out)
{
	git_oid oid;
	git_commit *c = NULL;

	if (!since || !*since)
		return 0;
	if (git_oid_fromstr(&oid, since) || git_commit_lookup(&c, repo, &oid)) {
		out->restarted = 1;
		git_error_clear();
		return 0;
	}
	git_commit_free(c);
	return git_revwalk_hide(w, &oid) ? PT_ERROR : 0;
}

static int pi_one(git_repository *repo, const git_oid *oid, archive_msg_cb cb,
		  void *ctx, struct archive_walk *out)
{
	git_commit *c = NULL;
	git_tree *tree = NULL;
	git_blob *blob = NULL;
	const git_tree_entry *e;
	char hex[GIT_OID_HEXSZ + 1];
	int rc = 0;

	git_oid_tostr(hex, sizeof(hex), oid);
	if (git_commit_lookup(&c, repo, oid) || git_commit_tree(&tree, c)) {
		rc = PT_EIO;
		goto out;
	}
	e = git_tree_entry_byname(tree, "m");
	if (!e || git_tree_entry_type(e) != GIT_OBJECT_BLOB) {
		out->deleted++;
		goto out;
	}
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(e))) {
		/* a partial snapshot lacks big blobs: skip, never fail */
		git_error_clear();
		out->absent++;
		rc = cb(NULL, ARCHIVE_MSG_ABSENT, hex, ctx);
		goto out;
	}
	rc = cb(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), hex,
		ctx);
out:
	memcpy(out->last, hex, sizeof(hex));
	git_blob_free(blob);
	git_tree_free(tree);
	git_commit_free(c);
	return rc;
}

/*
 * Each commit, tree and blob of an epoch is read once, so libgit2's
 * object cache (256 MiB by default) and pack windows (up to 8 GiB
 * mapped, and every page touched stays resident) only grow with the
 * epoch.  The walk bounds both, and puts them back after: the options
 * are the process's.
 */
#define PI_CACHE_MAX (4 << 20)
#define PI_MWINDOW_SIZE (8 << 20)
#define PI_MWINDOW_MAPPED (32 << 20)

int archive_pi_foreach(struct archive_walk *out, const char *gitdir,
		       const char *since, archive_msg_cb cb, void *ctx)
{
	struct pt_git_limits lim;
	git_repository *repo = NULL;
	git_revwalk *w = NULL;
	git_oid oid;
	int rc = 0, g;

	memset(out, 0, sizeof(*out));
	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	pt_git_limits_set(&lim, PI_CACHE_MAX, PI_MWINDOW_SIZE,
			  PI_MWINDOW_MAPPED);
	if (git_repository_open_ext(&repo, gitdir,
				    GIT_REPOSITORY_OPEN_NO_SEARCH |
					    GIT_REPOSITORY_OPEN_BARE,
				    NULL)) {
		rc = git_fail(PT_ENOTFOUND, "cannot open public-inbox", gitdir);
		goto out;
	}
	if (git_revwalk_new(&w, repo) ||
	    git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE)) {
		rc = git_fail(PT_EIO, "cannot walk", gitdir);
		goto out;
	}
	if (git_revwalk_push_head(w) &&
	    git_revwalk_push_glob(w, "refs/heads/*")) {
		rc = git_fail(PT_EINVAL, "no history in public-inbox", gitdir);
		goto out;
	}
	if (pi_hide(w, repo, since, out)) {
		rc = git_fail(PT_EIO, "cannot walk", gitdir);
		goto out;
	}
	while (!rc && !(g = git_revwalk_next(&oid, w))) {
		out->commits++;
		rc = pi_one(repo, &oid, cb, ctx, out);
		if (rc == PT_EIO)
			rc = git_fail(PT_EIO, "cannot read message", out->last);
	}
	if (!rc && g != GIT_ITEROVER)
		rc = git_fail(PT_EIO, "cannot walk", gitdir);
out:
	git_revwalk_free(w);
	git_repository_free(repo);
	pt_git_limits_put(&lim);
	git_libgit2_shutdown();
	return rc < 0 ? rc : 0;
}

static int is_git_dir(const char *path)
{
	struct buf b = BUF_INIT;
	struct stat st;
	int ok;

	if (buf_addf(&b, "%s/objects", path))
		return 0;
	ok = !stat(b.ptr, &st) && S_ISDIR(st.st_mode);
	buf_free(&b);
	return ok;
}

void archive_paths_free(char **paths)
{
	char **p;

	for (p = paths; p && *p; p++)
		free(*p);
	free(paths);
}

/* N of "N.git", or -1. */
static long epoch_number(const char *name)
{
	char *end;
	long n;

	if (!isdigit((unsigned char)name[0]))
		return -1;
	errno = 0;
	n = strtol(name, &end, 10);
	if (errno || strcmp(end, ".git") || n < 0 || n > INT_MAX)
		return -1;
	return n;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

#define PI_EXPECTED                                                      \
	"(expected a public-inbox, its epochs in git/0.git, git/1.git, " \
	"..., or the git directory of one epoch)"

/* Why PATH, as the user gave it, is not a public-inbox. */
static int not_pi(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return pt_error_set(PT_ENOTFOUND, "'%s': %s " PI_EXPECTED, path,
				    strerror(errno));
	return pt_error_set(PT_ENOTFOUND,
			    "'%s' is neither a git directory nor a "
			    "public-inbox " PI_EXPECTED,
			    path);
}

static int list_epochs(long **nums, size_t *n, const char *dir,
		       const char *path)
{
	DIR *d;
	struct dirent *de;
	long k, *v = NULL, *nv;
	int rc = 0;

	*nums = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d)
		return not_pi(path);
	while ((de = readdir(d))) {
		k = epoch_number(de->d_name);
		if (k < 0)
			continue;
		if (*n >= ARCHIVE_MAX_EPOCHS) {
			rc = pt_error_set(PT_ETOOBIG, "too many epochs in '%s'",
					  dir);
			break;
		}
		nv = pt_reallocarray(v, *n + 1, sizeof(*v));
		if (!nv) {
			rc = PT_ENOMEM;
			break;
		}
		v = nv;
		v[(*n)++] = k;
	}
	closedir(d);
	if (rc) {
		free(v);
		*n = 0;
		return rc;
	}
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_long);
	*nums = v;
	return 0;
}

int archive_pi_epochs(char ***out, const char *path)
{
	struct buf dir = BUF_INIT, b = BUF_INIT;
	long *nums = NULL;
	size_t n = 0, i;
	char **v;
	int rc;

	*out = NULL;
	if (is_git_dir(path))
		n = 1;
	else if ((rc = buf_addf(&dir, "%s/git", path)) ||
		 (rc = list_epochs(&nums, &n, dir.ptr, path)))
		goto out;
	if (!n) {
		rc = not_pi(path);
		goto out;
	}
	v = pt_calloc(n + 1, sizeof(*v));
	rc = v ? 0 : PT_ENOMEM;
	for (i = 0; !rc && i < n; i++) {
		buf_reset(&b);
		if (nums)
			rc = buf_addf(&b, "%s/%ld.git", dir.ptr, nums[i]);
		else
			rc = buf_addstr(&b, path);
		if (!rc && !(v[i] = pt_strdup(b.ptr)))
			rc = PT_ENOMEM;
	}
	if (rc)
		archive_paths_free(v);
	else
		*out = v;
out:
	free(nums);
	buf_free(&dir);
	buf_free(&b);
	return rc;
}

/* ---- mbox ---------------------------------------------------------- */

struct mbox_stream {
	struct buf b;	    /* undelivered bytes; b.ptr[start] begins a
				 message (or the stream) */
	size_t start, scan; /* message start; first unscanned line */
	int prev_blank, discard;
	int first_seen, single; /* single: the stream does not start with
				   a separator, so it is one message */
	size_t index;
	archive_msg_cb cb;
	void *ctx;
	struct archive_walk *walk;
};

struct one_ctx {
	struct mbox_stream *m;
	int rc;
};

static int one_cb(const char *msg, size_t len, size_t index, void *ctx)
{
	struct one_ctx *o = ctx;
	char pos[32];

	(void)index;
	snprintf(pos, sizeof(pos), "#%zu", o->m->index);
	o->rc = o->m->cb(msg, len, pos, o->m->ctx);
	return o->rc;
}

/* Hand b[start, end) - one message with its separator - on. */
static int mbox_deliver(struct mbox_stream *m, size_t end)
{
	struct one_ctx o = { m, 0 };
	char pos[32];
	int rc;

	if (m->discard) {
		/* the end of a message over the limit, already counted */
		m->discard = 0;
		m->start = end;
		return 0;
	}
	if (end <= m->start)
		return 0;
	if (end - m->start > PT_MAX_MAIL_SIZE) {
		m->walk->too_big++;
		snprintf(pos, sizeof(pos), "#%zu", m->index);
		rc = m->cb(NULL, end - m->start, pos, m->ctx);
	} else {
		rc = mbox_foreach(m->b.ptr + m->start, end - m->start, one_cb,
				  &o);
		if (!rc)
			rc = o.rc;
	}
	m->index++;
	m->start = end;
	return rc;
}

/* Scan complete lines; deliver each message that ends before a separator. */
static int mbox_scan(struct mbox_stream *m, int eof)
{
	const char *s, *nl;
	size_t len;
	int rc;

	while (m->scan < m->b.len) {
		s = m->b.ptr + m->scan;
		nl = memchr(s, '\n', m->b.len - m->scan);
		if (!nl && !eof)
			break;
		len = nl ? (size_t)(nl - s) + 1 : m->b.len - m->scan;
		if (!m->first_seen) {
			/* as mbox_foreach: no separator first, one message */
			m->first_seen = 1;
			m->single = !mbox_is_from_line(s, len);
		}
		if (!m->single && m->prev_blank &&
		    (m->scan > m->start || m->discard) &&
		    mbox_is_from_line(s, len)) {
			rc = mbox_deliver(m, m->scan);
			if (rc)
				return rc;
		}
		m->prev_blank = mbox_is_blank(s, len);
		m->scan += len;
		if (m->scan - m->start > PT_MAX_MAIL_SIZE && !m->discard) {
			/* too big: count it now, drop it up to the next one */
			rc = mbox_deliver(m, m->scan);
			m->discard = 1;
			m->start = m->scan;
			if (rc)
				return rc;
		} else if (m->discard) {
			m->start = m->scan;
		}
	}
	if (eof)
		return mbox_deliver(m, m->b.len);
	return 0;
}

/* Move the undelivered tail to the front of the buffer. */
static void mbox_compact(struct mbox_stream *m)
{
	if (!m->start)
		return;
	memmove(m->b.ptr, m->b.ptr + m->start, m->b.len - m->start);
	m->scan -= m->start;
	buf_truncate(&m->b, m->b.len - m->start);
	m->start = 0;
}

/* PATH, or stdin for "-", and its size when it is a regular file. */
static gzFile open_stream(const char *path, uint64_t *size)
{
	struct stat st;
	gzFile gz;
	int fd;

	if (strcmp(path, "-"))
		fd = open(path, O_RDONLY | O_CLOEXEC);
	else
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
		*size = (uint64_t)st.st_size;
	gz = gzdopen(fd, "rb");
	if (!gz)
		close(fd);
	return gz;
}

int archive_mbox_foreach(struct archive_walk *out, const char *path,
			 archive_msg_cb cb, void *ctx)
{
	struct mbox_stream m;
	gzFile gz;
	int n, rc = 0, zerr;

	memset(out, 0, sizeof(*out));
	memset(&m, 0, sizeof(m));
	buf_init(&m.b, 0);
	m.prev_blank = 1;
	m.cb = cb;
	m.ctx = ctx;
	m.walk = out;
	gz = open_stream(path, &out->size);
	if (!gz)
		return pt_error_set(PT_ENOTFOUND, "cannot open '%s': %s",
				    strcmp(path, "-") ? path : "<stdin>",
				    strerror(errno ? errno : ENOENT));
	gzbuffer(gz, 1u << 17);
	for (;;) {
		rc = buf_grow(&m.b, ARCHIVE_BLOCK);
		if (rc)
			break;
		n = gzread(gz, m.b.ptr + m.b.len, ARCHIVE_BLOCK);
		if (n <= 0) {
			/* a cut stream reads as EOF with Z_BUF_ERROR set */
			zerr = Z_OK;
			gzerror(gz, &zerr);
			if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END))
				out->truncated = 1;
			n = 0;
		}
		m.b.len += (size_t)n;
		m.b.ptr[m.b.len] = '\0';
		if (gzoffset(gz) >= 0)
			out->read = (uint64_t)gzoffset(gz);
		/* a cut stream's last message is cut too: not delivered */
		rc = mbox_scan(&m, n == 0 && !out->truncated);
		if (rc || n == 0)
			break;
		mbox_compact(&m);
	}
	gzclose(gz);
	buf_free(&m.b);
	out->commits = m.index;
	return rc < 0 ? rc : 0;
}
