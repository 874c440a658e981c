/*
 * pidlock.h - one rnfsd per state directory (and per stats socket): an
 * exclusive open-file-description lock (fcntl F_OFD_SETLK) on a small file
 * that holds the owner's pid, kept for the life of the process.
 *
 * The lock belongs to the open file description, so it survives fork()
 * (daemonize: the parent takes it, the child keeps it when the parent exits)
 * and is let go by the kernel when the process dies, however it dies: a lock
 * file left behind by a killed daemon is never "held". The file itself is
 * never removed (removing it would let two processes lock two different
 * files of one name).
 */
#ifndef RNFSD_PIDLOCK_H
#define RNFSD_PIDLOCK_H

#include <stddef.h>
#include <sys/types.h>

struct pidlock {
	int fd;          /* the locked file, or -1 */
};

/*
 * Lock path (created 0644 if missing; its directory is not created) and
 * write our pid into it. 0; or -1 with a message in err: *holder is the pid
 * the file names when another process holds the lock (0 if it has not
 * written one yet), -1 for any other failure (open, lock: errno in err).
 */
int pidlock_acquire(struct pidlock *l, const char *path, pid_t *holder, char *err, size_t errlen);

/* Rewrite the pid in the file (after fork: the child keeps the lock). */
void pidlock_update(struct pidlock *l);

/* Let go (the kernel does it at exit as well). */
void pidlock_release(struct pidlock *l);

#endif
