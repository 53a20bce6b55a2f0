/*
 * buf.c - struct buf, the one growable byte buffer, plus the allocation
 * and whole-file helpers that report through pt_error_set().  Every size
 * computation is overflow-checked; a buffer with a max refuses to grow
 * past it with PT_ETOOBIG so that wire input cannot exhaust memory.
 */
#include "scoring/util/pt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char buf_empty_[1];

void buf_init(struct buf *b, size_t max)
{
	b->ptr = buf_empty_;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void buf_free(struct buf *b)
{
	if (b->cap)
		free(b->ptr);
	buf_init(b, b->max);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->cap)
		b->ptr[0] = '\0';
}

int buf_grow(struct buf *b, size_t extra)
{
	size_t want, cap;
	char *p;

	if (extra > SIZE_MAX - b->len - 1)
		return pt_error_set(PT_ETOOBIG, "buffer size overflow");
	want = b->len + extra + 1;
	if (b->max && want - 1 > b->max)
		return pt_error_set(PT_ETOOBIG, "more than %zu bytes", b->max);
	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	p = realloc(b->cap ? b->ptr : NULL, cap);
	if (!p)
		return pt_error_set(PT_ENOMEM, "out of memory");
	if (!b->cap)
		p[0] = '\0';
	b->ptr = p;
	b->cap = cap;
	return 0;
}

int buf_add(struct buf *b, const void *data, size_t len)
{
	int rc;

	if (len == 0)
		return 0;
	rc = buf_grow(b, len);
	if (rc)
		return rc;
	memmove(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
	return 0;
}

int buf_addstr(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_addch(struct buf *b, int c)
{
	char ch = (char)c;

	return buf_add(b, &ch, 1);
}

int buf_addvf(struct buf *b, const char *fmt, va_list ap)
{
	char small[256];
	va_list cp;
	int n, rc;

	/* one formatting pass for the short strings, two for the rest */
	va_copy(cp, ap);
	n = vsnprintf(small, sizeof(small), fmt, cp);
	va_end(cp);
	if (n < 0)
		return pt_error_set(PT_EINVAL, "bad format");
	if (n > 0 && (size_t)n < sizeof(small))
		return buf_add(b, small, (size_t)n);
	rc = buf_grow(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_addvf(b, fmt, ap);
	va_end(ap);
	return rc;
}

void buf_rtrim(struct buf *b)
{
	while (b->len && strchr(" \t\r\n", b->ptr[b->len - 1]))
		b->len--;
	if (b->cap)
		b->ptr[b->len] = '\0';
}

void buf_truncate(struct buf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->ptr[len] = '\0';
	}
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p;

	if (len)
		*len = b->len;
	if (!b->cap) {
		p = malloc(1);
		if (p)
			p[0] = '\0';
		else
			pt_error_set(PT_ENOMEM, "out of memory");
		return p;
	}
	p = b->ptr;
	buf_init(b, b->max);
	return p;
}

void *pt_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		pt_error_set(PT_ENOMEM, "out of memory");
	return p;
}

void *pt_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		pt_error_set(PT_ENOMEM, "out of memory");
	return p;
}

void *pt_reallocarray(void *p, size_t n, size_t size)
{
	void *q;

	if (size && n > SIZE_MAX / size) {
		pt_error_set(PT_ETOOBIG, "array size overflow");
		return NULL;
	}
	q = realloc(p, n * size > 0 ? n * size : 1);
	if (!q)
		pt_error_set(PT_ENOMEM, "out of memory");
	return q;
}

char *pt_strndup(const char *s, size_t n)
{
	char *p = pt_malloc(n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *pt_strdup(const char *s)
{
	return s ? pt_strndup(s, strlen(s)) : NULL;
}

int pt_read_file(struct buf *out, const char *path, size_t max)
{
	char chunk[65536];
	FILE *f;
	size_t n;
	int rc = 0;

	f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f)
		return pt_error_set(PT_EIO, "cannot open '%s': %s", path,
				    strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (max && out->len + n > max) {
			rc = pt_error_set(PT_ETOOBIG,
					  "'%s' is larger than %zu bytes", path,
					  max);
			break;
		}
		rc = buf_add(out, chunk, n);
		if (rc)
			break;
	}
	if (!rc && ferror(f))
		rc = pt_error_set(PT_EIO, "cannot read '%s': %s", path,
				  strerror(errno));
	if (f != stdin)
		fclose(f);
	return rc;
}

int pt_write_file_atomic(const char *path, const void *data, size_t len)
{
	struct buf tmp = BUF_INIT;
	const char *p = data;
	int fd = -1, rc;
	ssize_t w;

	rc = buf_addf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	if (rc)
		goto out;
	fd = open(tmp.ptr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = pt_error_set(PT_EIO, "cannot create '%s': %s", tmp.ptr,
				  strerror(errno));
		goto out;
	}
	while (len) {
		w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = pt_error_set(PT_EIO, "cannot write '%s': %s",
					  tmp.ptr, strerror(errno));
			goto out;
		}
		p += w;
		len -= (size_t)w;
	}
	if (fsync(fd) || close(fd)) {
		fd = -1;
		rc = pt_error_set(PT_EIO, "cannot write '%s': %s", tmp.ptr,
				  strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp.ptr, path))
		rc = pt_error_set(PT_EIO, "cannot rename '%s' to '%s': %s",
				  tmp.ptr, path, strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (rc && tmp.len)
		unlink(tmp.ptr);
	buf_free(&tmp);
	return rc;
}
