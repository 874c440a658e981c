/*
 * pidlock.c - an exclusive lock held for the process's life on a file that
 * names the holder's pid (pidlock.h). Used by main.c on state-dir/rnfsd.lock
 * and on the stats socket's "<path>.lock", before any state is touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/pidlock.h"

/* How long to wait for a holder that has the lock but has not written its pid yet. */
#define PIDLOCK_PID_WAIT_MS 1000
#define PIDLOCK_PID_STEP_MS 20

/* The pid written in the file, or 0 if it holds none (yet). */
static pid_t pidlock_read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	char *end;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	long v = strtol(buf, &end, 10);
	if (end == buf || v <= 0 || (*end != '\n' && *end != '\0'))
		return 0;
	return (pid_t)v;
}

/* The holder's pid, waiting briefly for one that has just taken the lock. */
static pid_t pidlock_holder(int fd)
{
	const struct timespec step = {0, PIDLOCK_PID_STEP_MS * 1000000L};
	pid_t pid = pidlock_read_pid(fd);

	for (int waited = 0; pid == 0 && waited < PIDLOCK_PID_WAIT_MS; waited += PIDLOCK_PID_STEP_MS) {
		nanosleep(&step, NULL);
		pid = pidlock_read_pid(fd);
	}
	return pid;
}

void pidlock_update(struct pidlock *l)
{
	char buf[32];
	int n;

	if (l->fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	/* Write first, then cut: a reader never sees an empty file after the first write. */
	if (pwrite(l->fd, buf, (size_t)n, 0) == n && ftruncate(l->fd, n) != 0)
		return; /* a stale tail after the newline: the pid still reads first */
}

int pidlock_acquire(struct pidlock *l, const char *path, pid_t *holder, char *err, size_t errlen)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};

	l->fd = -1;
	*holder = -1;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
		int e = errno;
		if (e == EAGAIN || e == EACCES) {
			*holder = pidlock_holder(fd);
			snprintf(err, errlen, "%s is locked by another process (pid %ld)", path, (long)*holder);
		} else {
			snprintf(err, errlen, "%s: cannot lock: %s", path, strerror(e));
		}
		close(fd);
		return -1;
	}
	l->fd = fd;
	pidlock_update(l);
	return 0;
}

void pidlock_release(struct pidlock *l)
{
	if (l->fd >= 0)
		close(l->fd); /* the last descriptor of the description: the lock goes */
	l->fd = -1;
}
