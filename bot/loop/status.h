/*
 * status.h - the bot's state as `patchtriage status` shows it, gathered
 * from the state database and the state directory's lock (see status.c).
 */
#ifndef PT_STATUS_H
#define PT_STATUS_H

#include <jansson.h>

#include "scoring/store/db.h"

/*
 * An object with: daemon {running, detail}, last_pass, patchwork [..],
 * imap [..], queue [..], actions_today [..], work_errors [..],
 * action_errors [..].  Read only; needs no network.
 */
int status_collect(json_t **out, struct db *db, const char *state_dir);

#endif
