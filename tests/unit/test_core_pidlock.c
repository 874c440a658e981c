/*
 * test_core_pidlock.c - core/pidlock.c: a second lock on the same file fails and
 * names the holder's pid; the lock survives fork() in the child after the
 * parent lets go, and goes away with its holder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/pidlock.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_pidlock.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/rnfsd.lock", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

static void test_second_lock_names_holder(void **state)
{
	struct pidlock a, b;
	char err[256];
	pid_t holder;

	(void)state;
	assert_int_equal(pidlock_acquire(&a, path, &holder, err, sizeof(err)), 0);
	/* An OFD lock conflicts with another open of the same file, even in one process. */
	assert_int_equal(pidlock_acquire(&b, path, &holder, err, sizeof(err)), -1);
	assert_int_equal(holder, getpid());
	assert_int_equal(b.fd, -1);
	assert_non_null(strstr(err, "locked by another process"));
	pidlock_release(&a);
	assert_int_equal(pidlock_acquire(&b, path, &holder, err, sizeof(err)), 0);
	pidlock_release(&b);
}

/* daemonize(): the parent locks, forks and closes; the child keeps the lock and names itself. */
static void test_lock_survives_fork(void **state)
{
	struct pidlock a, b;
	char err[256];
	pid_t holder;
	int pfd[2];
	char c;

	(void)state;
	assert_int_equal(pidlock_acquire(&a, path, &holder, err, sizeof(err)), 0);
	assert_int_equal(pipe(pfd), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(pfd[0]);
		pidlock_update(&a);
		(void)write(pfd[1], "x", 1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	pidlock_release(&a); /* the parent's copy */
	assert_int_equal(pidlock_acquire(&b, path, &holder, err, sizeof(err)), -1);
	assert_int_equal(holder, child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* A killed holder leaves the file, not the lock. */
	assert_int_equal(pidlock_acquire(&b, path, &holder, err, sizeof(err)), 0);
	pidlock_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_second_lock_names_holder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_survives_fork, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
