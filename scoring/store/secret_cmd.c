/*
 * secret_cmd.c - a password command run with a time limit (see
 * secret_cmd.h): fork, /bin/sh -c in a new process group, a pipe for its
 * standard output read with poll() against a monotonic deadline, then a
 * bounded wait for its exit; on timeout (or too much output) SIGKILL to
 * the whole group, so that a pinentry or `sleep` it started goes too.
 */
#include "scoring/store/secret_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SECRET_CMD_TICK_MS 20 /* how often an exit is looked for */

/* /bin/sh -c cmd as the leader of a new process group; *fd its stdout. */
static int start(const char *cmd, pid_t *pid, int *fd)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return pt_error_set(PT_EIO, "cannot make a pipe: %s",
				    strerror(errno));
	*pid = fork();
	if (*pid < 0) {
		close(p[0]);
		close(p[1]);
		return pt_error_set(PT_EIO, "cannot fork: %s", strerror(errno));
	}
	if (*pid == 0) {
		setpgid(0, 0);
		if (dup2(p[1], STDOUT_FILENO) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(*pid, *pid); /* also here: no window before the child's */
	close(p[1]);
	*fd = p[0];
	return 0;
}

/* Read fd to its end into out before deadline; 1 when time ran out. */
static int read_until(int fd, struct buf *out, long long deadline, int *rc)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	char chunk[4096];
	long long left;
	ssize_t n;

	for (;;) {
		left = deadline - pt_now_ms();
		if (left <= 0)
			return 1;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return 1;
		if (!pfd.revents)
			continue;
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			*rc = buf_add(out, chunk, (size_t)n);
		memset(chunk, 0, sizeof(chunk));
		if (n <= 0 || *rc)
			return 0;
	}
}

/* Wait for pid until deadline; 1 when time ran out. */
static int wait_until(pid_t pid, int *status, long long deadline)
{
	struct timespec tick = { 0, SECRET_CMD_TICK_MS * 1000000L };
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR) {
			*status = -1;
			return 0;
		}
		if (pt_now_ms() >= deadline)
			return 1;
		nanosleep(&tick, NULL);
	}
}

/* How the command ended, from waitpid's status (-1: not known). */
static void how_it_ended(int late, int status, enum secret_cmd_end *end,
			 int *code)
{
	if (late) {
		*end = SECRET_CMD_TIMED_OUT;
		*code = 0;
	} else if (status != -1 && WIFSIGNALED(status)) {
		*end = SECRET_CMD_SIGNALLED;
		*code = WTERMSIG(status);
	} else {
		*end = SECRET_CMD_EXITED;
		*code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status)
							  : -1;
	}
}

int secret_cmd_run(const char *cmd, long timeout_ms, struct buf *out,
		   enum secret_cmd_end *end, int *code)
{
	long long deadline = pt_now_ms() + timeout_ms;
	int fd = -1, status = 0, late, rc;
	pid_t pid = -1;

	rc = start(cmd, &pid, &fd);
	if (rc)
		return rc;
	late = read_until(fd, out, deadline, &rc);
	close(fd);
	if (!late && !rc)
		late = wait_until(pid, &status, deadline);
	if (late || rc) {
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	how_it_ended(late, status, end, code);
	return rc;
}
