/*
 * mbox.h - an mbox (mboxo or mboxrd) split into raw messages (mbox.c).
 */
#ifndef PT_MBOX_H
#define PT_MBOX_H

#include <stddef.h>

/*
 * An mbox (mboxo or mboxrd; "From " separators, >From unescaped) split
 * into messages.  The callback gets each raw message (index from 0; msg
 * is valid only during the call); return non-zero from it to stop: a
 * negative return is returned by mbox_foreach, a positive one gives 0.
 * A buffer not starting with a "From " line is one message.  Messages
 * are not parsed here so that a malformed one can be skipped by the
 * caller.
 */
typedef int (*mbox_cb)(const char *msg, size_t len, size_t index, void *ctx);
int mbox_foreach(const char *buf, size_t len, mbox_cb cb, void *ctx);
/*
 * The line s[0..len) (with or without its LF) is a separator, "From ADDR
 * <anything with hh:mm>", or is blank (CRLF too); for readers that cut
 * a stream at the places mbox_foreach would.
 */
int mbox_is_from_line(const char *s, size_t len);
int mbox_is_blank(const char *s, size_t len);

#endif
