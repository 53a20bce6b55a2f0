/*
 * test_daemon.c - one instance per state directory (and no stale lock
 * after a SIGKILL), and the signal flags.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bot/sys/daemon.h"
#include "scoring/util/pt.h"
#include "tmpdir.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "daemon");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static void test_second_instance_refused(void **state)
{
	struct daemon_lock *a, *b;
	int pfd[2], status;
	char c;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		struct daemon_lock *l;

		close(pfd[0]);
		if (daemon_lock_acquire(&l, dir))
			_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	assert_int_equal(daemon_lock_acquire(&b, dir), PT_EEXISTS);
	assert_null(b);
	assert_non_null(strstr(pt_error_last(), "another patchtriage"));
	assert_non_null(strstr(pt_error_last(), dir));
	/* the holder dies without cleaning up: the lock goes with it */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(pfd[0]);
	assert_int_equal(daemon_lock_acquire(&a, dir), 0);
	daemon_lock_release(a);
}

static void test_signal_flags(void **state)
{
	(void)state;
	assert_int_equal(daemon_signals_install(), 0);
	assert_false(daemon_take_reload());
	raise(SIGHUP);
	assert_true(daemon_take_reload());
	assert_false(daemon_take_reload());
	assert_false(daemon_should_stop());
	raise(SIGTERM);
	assert_true(daemon_should_stop());
	daemon_sleep_ms(10000); /* returns at once once stopping */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_second_instance_refused,
						setup, teardown),
		cmocka_unit_test(test_signal_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
