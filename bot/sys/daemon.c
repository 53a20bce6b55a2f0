/*
 * daemon.c - instance lock, signal flags and interruptible sleep (see
 * daemon.h).  The lock is flock(2) on a file in the state directory, so
 * it is released by the kernel when the process dies, however it dies:
 * a SIGKILLed bot never leaves a stale lock behind.
 */
#include "bot/sys/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "scoring/util/pt.h"

struct daemon_lock {
	int fd;
	char *path;
};

static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t reload_flag;

static void read_pid(int fd, char *pid, size_t n)
{
	ssize_t r = pread(fd, pid, n - 1, 0);

	pid[r > 0 ? r : 0] = '\0';
	pid[strcspn(pid, "\n")] = '\0';
}

int daemon_lock_acquire(struct daemon_lock **out, const char *state_dir)
{
	struct daemon_lock *l;
	char pid[32];
	int rc;

	*out = NULL;
	l = pt_calloc(1, sizeof(*l));
	if (!l)
		return PT_ENOMEM;
	l->fd = -1;
	l->path = pt_malloc(strlen(state_dir) + 6);
	if (!l->path) {
		rc = PT_ENOMEM;
		goto fail;
	}
	snprintf(l->path, strlen(state_dir) + 6, "%s/lock", state_dir);
	l->fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (l->fd < 0) {
		rc = pt_error_set(PT_EIO, "cannot open '%s': %s", l->path,
				  strerror(errno));
		goto fail;
	}
	if (flock(l->fd, LOCK_EX | LOCK_NB)) {
		read_pid(l->fd, pid, sizeof(pid));
		rc = pt_error_set(PT_EEXISTS,
				  "another patchtriage (pid %s) is running with "
				  "state '%s'",
				  *pid ? pid : "unknown", state_dir);
		goto fail;
	}
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(l->fd, 0) || pwrite(l->fd, pid, strlen(pid), 0) < 0) {
		rc = pt_error_set(PT_EIO, "cannot write '%s': %s", l->path,
				  strerror(errno));
		goto fail;
	}
	*out = l;
	return 0;
fail:
	daemon_lock_release(l);
	return rc;
}

void daemon_lock_release(struct daemon_lock *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd); /* drops the flock */
	free(l->path);
	free(l);
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_flag = 1;
	else
		stop_flag = 1;
}

int daemon_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL))
		return pt_error_set(PT_ERROR,
				    "cannot install signal handlers: "
				    "%s",
				    strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int daemon_should_stop(void)
{
	return stop_flag != 0;
}

int daemon_take_reload(void)
{
	if (!reload_flag)
		return 0;
	reload_flag = 0;
	return 1;
}

void daemon_request_stop(void)
{
	stop_flag = 1;
}

void daemon_sleep_ms(long ms)
{
	struct timespec ts;

	/* in slices, so a signal that lands between checks is seen soon */
	while (ms > 0 && !stop_flag && !reload_flag) {
		long slice = ms > 100 ? 100 : ms;

		ts.tv_sec = 0;
		ts.tv_nsec = slice * 1000000L;
		nanosleep(&ts, NULL);
		ms -= slice;
	}
}
