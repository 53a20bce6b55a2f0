/*
 * mail.h - helpers of the mail source of struct patch (scoring/patch/mail.c)
 * that the git source (scoring/patch/patch_git.c) shares, so that a commit and
 * the same change sent by mail go through the same text rules.
 * patch_from_mail() itself is declared in patch.h.
 */
#ifndef PT_MAIL_H
#define PT_MAIL_H

#include <stddef.h>

#include "scoring/util/pt.h"

/*
 * Append s (len bytes in charset cs; NULL or "" means UTF-8) to out as
 * UTF-8.  Every byte that is not part of a valid sequence, and every NUL,
 * becomes U+FFFD; an unknown charset is read as UTF-8.
 */
int mail_to_utf8(struct buf *out, const char *cs, const char *s, size_t len);

/*
 * Append a subject line: runs of spaces, tabs and line breaks become one
 * space, leading and trailing ones are dropped.
 */
int mail_add_subject(struct buf *out, const char *s, size_t len);

#endif
