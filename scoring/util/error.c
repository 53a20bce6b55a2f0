/*
 * error.c - the per-thread last-error message (pt_error_*).  Library code
 * sets it where an error starts and returns the code; only the CLI reads
 * and prints it.  Messages are fixed-size so that setting an error never
 * allocates (and so never fails while reporting an allocation failure).
 */
#include "scoring/util/pt.h"

#include <stdio.h>
#include <string.h>

#define PT_ERROR_MAX 1024

static _Thread_local char err_msg[PT_ERROR_MAX];
static _Thread_local int err_code;

int pt_error_setv(int code, const char *fmt, va_list ap)
{
	vsnprintf(err_msg, sizeof(err_msg), fmt, ap);
	err_code = code;
	return code;
}

int pt_error_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pt_error_setv(code, fmt, ap);
	va_end(ap);
	return code;
}

/* Copy (reset) or append src to dst of size n, truncating. */
static void append(char *dst, size_t n, const char *src, int reset)
{
	size_t len = reset ? 0 : strnlen(dst, n - 1);

	while (*src && len + 1 < n)
		dst[len++] = *src++;
	dst[len] = '\0';
}

int pt_error_wrap(int code, const char *fmt, ...)
{
	char prefix[PT_ERROR_MAX];
	char old[PT_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err_msg, sizeof(old));
	append(err_msg, sizeof(err_msg), prefix, 1);
	if (old[0]) {
		append(err_msg, sizeof(err_msg), ": ", 0);
		append(err_msg, sizeof(err_msg), old, 0);
	}
	err_code = code;
	return code;
}

const char *pt_error_last(void)
{
	return err_msg;
}

int pt_error_last_code(void)
{
	return err_code;
}

void pt_error_clear(void)
{
	err_msg[0] = '\0';
	err_code = 0;
}
