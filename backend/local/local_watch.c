/*
 * local_watch.c - change watches of the local backend (be_watch): inotify(7)
 * on the file behind the object's O_PATH descriptor, read by one thread
 * started at the first watch, each event handed to the change listener
 * (be_changed). NFSv4 uses it to recall a delegation when a local process
 * (or anything not going through rnfsd's NFS operations, which recall first)
 * changes or opens a delegated file.
 *
 * Kinds: BE_WATCH_CHANGES (IN_MODIFY, IN_ATTRIB: data, mode, owner, times,
 * links, xattrs) for read delegations; BE_WATCH_OPENS (IN_OPEN) for write
 * delegations, whose holder's own writes would otherwise look like another's.
 * Both: IN_MOVE_SELF, IN_DELETE_SELF. inotify is told after the fact: a
 * local writer is not held back until the delegation is returned (Linux
 * leases would, but need every other descriptor of the file read-only, and
 * the file cache's are read-write).
 *
 * Bounded by the kernel's fs.inotify.max_user_watches (ENOSPC beyond it);
 * the caller keeps its own table of watches.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "backend/local/local.h"
#include "core/log.h"

static pthread_once_t w_once = PTHREAD_ONCE_INIT;
static int w_fd = -1;
static int w_err;

static void *watch_main(void *arg)
{
	/* Aligned for struct inotify_event; room for several with names (none here). */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	(void)arg;
	for (;;) {
		ssize_t n = read(w_fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_err("local: the change watch stopped: %s", n < 0 ? strerror(errno) : "end of file");
			return NULL;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (ev->mask & IN_Q_OVERFLOW)
				be_changed(-1, false); /* events were lost: every watch may have fired */
			else
				be_changed(ev->wd, (ev->mask & IN_IGNORED) != 0);
			p += sizeof(*ev) + ev->len;
		}
	}
}

static void watch_start(void)
{
	pthread_attr_t attr;
	pthread_t t;

	w_fd = inotify_init1(IN_CLOEXEC);
	if (w_fd < 0) {
		w_err = errno;
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, watch_main, NULL) != 0) {
		w_err = EAGAIN;
		close(w_fd);
		w_fd = -1;
	}
	pthread_attr_destroy(&attr);
}

int local_watch(struct be_fs *fs, const struct be_obj *o, unsigned kind, int *wd)
{
	uint32_t mask = IN_MOVE_SELF | IN_DELETE_SELF;
	char path[32];

	(void)fs;
	pthread_once(&w_once, watch_start);
	if (w_fd < 0)
		return w_err ? w_err : EOPNOTSUPP;
	mask |= (kind & BE_WATCH_OPENS) ? IN_OPEN : 0;
	mask |= (kind & BE_WATCH_CHANGES) ? IN_MODIFY | IN_ATTRIB : 0;
	local_fd_path(local_fd(o), path);
	*wd = inotify_add_watch(w_fd, path, mask);
	return *wd < 0 ? errno : 0;
}

int local_unwatch(int wd)
{
	if (w_fd < 0)
		return EINVAL;
	return inotify_rm_watch(w_fd, wd) < 0 ? errno : 0;
}
