/*
 * pt.h - the few things every patchtriage module shares: the error
 * convention (int return, out-parameters first, a per-thread last-error
 * message in the style of libgit2's git_error_last()), the growable
 * buffer (struct buf, after git's strbuf and curl's dynbuf) and the named
 * size limits for everything that grows from the wire.  It owns no state
 * other than the thread-local error message.
 */
#ifndef PT_H
#define PT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define PT_VERSION "0.1.0"

/* Error codes: 0 is success, every error is negative. */
enum pt_err {
	PT_OK = 0,
	PT_ERROR = -1,	   /* generic failure, see pt_error_last() */
	PT_ENOMEM = -2,	   /* allocation failed */
	PT_EINVAL = -3,	   /* malformed input */
	PT_ETOOBIG = -4,   /* input over a named limit */
	PT_ENOTFOUND = -5, /* no such object */
	PT_EIO = -6,	   /* file or database error */
	PT_ENET = -7,	   /* network or protocol error */
	PT_EAUTH = -8,	   /* credentials refused */
	PT_EEXISTS = -9,   /* already there */
	PT_EAGAIN = -10,   /* transient; try again */
};

/* Limits for input that comes from outside (mail, JSON, diffs, git). */
#define PT_MAX_MAIL_SIZE (64u << 20)  /* one message */
#define PT_MAX_LINE_LEN (1u << 20)    /* one line of mail or diff */
#define PT_MAX_HEADER_LEN (1u << 20)  /* one unfolded header */
#define PT_MAX_FILES 100000u	      /* files in one diff */
#define PT_MAX_HUNKS 1000000u	      /* hunks in one diff */
#define PT_MAX_TRAILERS 10000u	      /* trailers in one message */
#define PT_MAX_PREFIXES 64u	      /* subject bracket tokens */
#define PT_MAX_MIME_PARTS 1000u	      /* MIME parts in one message */
#define PT_MAX_MIME_DEPTH 32u	      /* MIME nesting */
#define PT_MAX_HTTP_BODY (256u << 20) /* one HTTP response */
#define PT_MAX_JSON_DEPTH 64u

/*
 * Set the calling thread's last error and return code.  The message is
 * formatted like printf and truncated at 1 KiB.  Returns code, so that
 * `return pt_error_set(PT_EINVAL, "...");` reads naturally.
 */
int pt_error_set(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int pt_error_setv(int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Prefix the current message with "ctx: " (for adding the input's name). */
int pt_error_wrap(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The last message set on this thread; "" when none.  Never NULL. */
const char *pt_error_last(void);
int pt_error_last_code(void);
void pt_error_clear(void);

/*
 * struct buf: a growable NUL-terminated byte buffer.  ptr is never NULL
 * after buf_init() (it points at a static "" until the first write).  max,
 * when non-zero, caps len: a write past it fails with PT_ETOOBIG and leaves
 * the buffer unchanged.
 */
struct buf {
	char *ptr;
	size_t len;
	size_t cap;
	size_t max;
};

#define BUF_INIT                    \
	{                           \
		buf_empty_, 0, 0, 0 \
	}
extern char buf_empty_[1];

void buf_init(struct buf *b, size_t max);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
int buf_grow(struct buf *b, size_t extra);
int buf_add(struct buf *b, const void *data, size_t len);
int buf_addstr(struct buf *b, const char *s);
int buf_addch(struct buf *b, int c);
int buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_addvf(struct buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Drop trailing spaces, tabs, CRs and LFs. */
void buf_rtrim(struct buf *b);
void buf_truncate(struct buf *b, size_t len);
/* Hand the bytes to the caller (free() them); the buffer is reset. */
char *buf_detach(struct buf *b, size_t *len);

/* Small helpers that set PT_ENOMEM on failure and return NULL. */
void *pt_malloc(size_t n);
void *pt_calloc(size_t n, size_t size);
void *pt_reallocarray(void *p, size_t n, size_t size);
char *pt_strdup(const char *s);
char *pt_strndup(const char *s, size_t n);

/* Milliseconds of the monotonic clock, for deadlines (clock.c). */
long pt_now_ms(void);

/* Read a whole file (or "-" for stdin) under a size cap. */
int pt_read_file(struct buf *out, const char *path, size_t max);
/* Write a whole file atomically: write to PATH.tmp.XXXX, fsync, rename. */
int pt_write_file_atomic(const char *path, const void *data, size_t len);

#endif
