/*
 * secret_cmd.h - running a password command (config_read_secret's
 * SECTION.password-command) with a time limit: /bin/sh -c CMD in a
 * process group of its own, its standard output collected, and the whole
 * group killed when it outlives the limit.  The output is never put in
 * an error message.
 */
#ifndef PT_SECRET_CMD_H
#define PT_SECRET_CMD_H

#include "scoring/util/pt.h"

/* Seconds: the default of SECTION.password-command-timeout. */
#define SECRET_CMD_TIMEOUT 10

enum secret_cmd_end {
	SECRET_CMD_EXITED,    /* *code: its exit status */
	SECRET_CMD_SIGNALLED, /* *code: the signal that ended it */
	SECRET_CMD_TIMED_OUT, /* killed after timeout_ms */
};

/*
 * Run cmd, its standard output into out (capped by out->max), for at
 * most timeout_ms; *end and *code say how it ended.  Returns 0 once it
 * has ended (whatever its status), PT_ETOOBIG when it printed more than
 * out->max (it is killed), or PT_EIO when it could not be started.
 */
int secret_cmd_run(const char *cmd, long timeout_ms, struct buf *out,
		   enum secret_cmd_end *end, int *code);

#endif
