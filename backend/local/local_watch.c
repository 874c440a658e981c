/*
 * local_watch.c - change watches of the local backend (be_watch): inotify(7)
 * on the file behind the object's O_PATH descriptor, read by one thread
 * started at the first watch, each event handed to the change listener
 * (be_changed). NFSv4 uses it to recall a delegation when a local process
 * (or anything not going through rnfsd's NFS operations, which recall first)
 * changes or opens a delegated file.
 *
 * Kinds: BE_WATCH_CHANGES (IN_MODIFY, IN_ATTRIB: data, mode, owner, times,
 * links, xattrs) for read delegations; BE_WATCH_OPENS (IN_OPEN, IN_ATTRIB)
 * for write delegations, whose holder's own writes would otherwise look like
 * another's; BE_WATCH_DIR (IN_CREATE, IN_DELETE, IN_MOVED_FROM, IN_MOVED_TO,
 * IN_ATTRIB of the directory itself, not of its entries) for directory
 * delegations, whose events name the entry (local_watch_parse(): made,
 * removed, renamed within by an IN_MOVED_FROM / IN_MOVED_TO pair of one
 * cookie in one read). All: IN_MOVE_SELF, IN_DELETE_SELF. inotify is told after the
 * fact: a local writer is not held back until the delegation is returned;
 * the lease a delegation also holds (local_lease.c) holds back local opens
 * and truncates, but not renames, unlinks or attribute changes.
 *
 * rnfsd's own changes are not a local process's: inotify does not say who
 * made an event, so the backend marks each watched file it is about to
 * change or open itself (local_watch_self*(): writes, attribute changes,
 * names, xattrs, its own opens; the directory too when it makes, removes
 * or renames an entry in it), and events of that file within
 * LOCAL_WATCH_SELF_NS after the mark are dropped. The NFS operation that
 * made them has already recalled whatever conflicted (nfs4_deleg_break);
 * a local process's change inside that window of an NFS client's change
 * to the same file goes unseen (its next one outside the window is seen).
 *
 * Bounded: LOCAL_WATCH_MAX watches (ENOSPC beyond, and the kernel's
 * fs.inotify.max_user_watches); the caller keeps its own table too.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/local/local.h"
#include "core/log.h"

#define LOCAL_WATCH_MAX 4096u
#define LOCAL_WATCH_SELF_NS 1000000000ull /* 1 s */

/* One watched file: its inode, its inotify wd, the end of rnfsd's own window. */
struct local_watched {
	dev_t dev;
	ino_t ino;
	int wd;              /* -1: a free entry */
	uint64_t self_until; /* CLOCK_MONOTONIC ns */
};

static pthread_once_t w_once = PTHREAD_ONCE_INIT;
static int w_fd = -1;
static int w_err;
static pthread_mutex_t w_mu = PTHREAD_MUTEX_INITIALIZER;
static struct local_watched w_tab[LOCAL_WATCH_MAX];
static atomic_uint w_count; /* entries in use: 0 keeps local_watch_self*() to one load */

static uint64_t w_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* w_mu held: the entry of watch wd, or (wd < 0) of the inode. */
static struct local_watched *w_find(int wd, dev_t dev, ino_t ino)
{
	for (unsigned i = 0, n = 0; i < LOCAL_WATCH_MAX && n < atomic_load(&w_count); i++) {
		const struct local_watched *w = &w_tab[i];

		if (w->wd < 0)
			continue;
		n++;
		if (wd >= 0 ? w->wd == wd : w->ino == ino && w->dev == dev)
			return &w_tab[i];
	}
	return NULL;
}

static void w_forget(struct local_watched *w)
{
	w->wd = -1;
	atomic_fetch_sub(&w_count, 1);
}

void local_watch_self(const struct stat *st)
{
	struct local_watched *w;

	if (!atomic_load(&w_count))
		return;
	pthread_mutex_lock(&w_mu);
	w = w_find(-1, st->st_dev, st->st_ino);
	if (w)
		w->self_until = w_now() + LOCAL_WATCH_SELF_NS;
	pthread_mutex_unlock(&w_mu);
}

void local_watch_self_fd(int fd)
{
	struct stat st;

	if (atomic_load(&w_count) && fstat(fd, &st) == 0)
		local_watch_self(&st);
}

void local_watch_self_at(int dfd, const char *name)
{
	struct stat st;

	if (atomic_load(&w_count) && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		local_watch_self(&st);
}

void local_watch_self_entry(int dfd, const char *name)
{
	local_watch_self_at(dfd, name);
	local_watch_self_fd(dfd);
}

/* A directory's events about its entries: made, removed, renamed (BE_WATCH_DIR). */
#define W_DIR_ENTRY (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)

/* An IN_MOVED_TO after ev in the read (up to end) of ev's cookie on ev's watch, or NULL. */
static struct inotify_event *w_moved_to(const struct inotify_event *ev, char *from, const char *end)
{
	for (char *p = from; p + sizeof(*ev) <= end;) {
		struct inotify_event *to = (struct inotify_event *)p;

		if (p + sizeof(*to) + to->len > end)
			return NULL;
		if ((to->mask & IN_MOVED_TO) && to->cookie == ev->cookie && to->wd == ev->wd && to->len && to->name[0])
			return to;
		p += sizeof(*to) + to->len;
	}
	return NULL;
}

void local_watch_parse(char *buf, size_t n,
		       void (*tell)(const struct inotify_event *ev, const struct be_change *c, void *arg), void *arg)
{
	for (char *p = buf, *end = buf + n; p + sizeof(struct inotify_event) <= end;) {
		struct inotify_event *ev = (struct inotify_event *)p, *to;
		struct be_change c = { .wd = ev->wd, .gone = (ev->mask & IN_IGNORED) != 0, .kind = BE_CHANGE_OTHER };

		if (p + sizeof(*ev) + ev->len > end)
			return; /* a short read: the kernel returns whole events only */
		p += sizeof(*ev) + ev->len;
		if (!ev->mask)
			continue; /* an IN_MOVED_TO already told with its IN_MOVED_FROM */
		if (ev->mask & IN_Q_OVERFLOW)
			c.wd = -1; /* events were lost: every watch may have fired */
		else if (ev->len && ev->name[0] && (ev->mask & (IN_CREATE | IN_MOVED_TO)))
			c.kind = BE_CHANGE_ADD, c.name = ev->name;
		else if (ev->len && ev->name[0] && (ev->mask & IN_DELETE))
			c.kind = BE_CHANGE_REMOVE, c.name = ev->name;
		else if (!ev->len && (ev->mask & IN_ATTRIB))
			c.kind = BE_CHANGE_ATTRS; /* the watched object's own attributes */
		else if (ev->len && ev->name[0] && (ev->mask & IN_MOVED_FROM)) {
			/* inotify(7): a rename within the directory is an IN_MOVED_FROM and an IN_MOVED_TO of
			 * one cookie, usually next to each other; not paired in this read: a removal (and an
			 * addition) */
			c.kind = BE_CHANGE_REMOVE, c.name = ev->name;
			if ((to = w_moved_to(ev, p, end)) != NULL) {
				c.kind = BE_CHANGE_RENAME, c.newname = to->name;
				to->mask = 0;
			}
		}
		tell(ev, &c, arg);
	}
}

/* The watch thread: the event is told unless it is rnfsd's own (or the watch went). */
static void w_event(const struct inotify_event *ev, const struct be_change *c, void *arg)
{
	struct local_watched *w;
	bool tell;

	(void)arg;
	if (c->wd < 0) {
		be_changed(c);
		return;
	}
	/* A watched directory's entry changing only itself (IN_ATTRIB of a file in it, a
	 * name given): not the directory's change; only files' own watches have no name. */
	if (ev->len && !(ev->mask & (W_DIR_ENTRY | IN_IGNORED)))
		return;

	pthread_mutex_lock(&w_mu);
	w = w_find(ev->wd, 0, 0);
	tell = w && (c->gone || w_now() >= w->self_until);
	if (w && c->gone)
		w_forget(w);
	pthread_mutex_unlock(&w_mu);
	if (tell)
		be_changed(c);
}

static void *watch_main(void *arg)
{
	/* Aligned for struct inotify_event; room for several with names. */
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
		local_watch_parse(buf, (size_t)n, w_event, NULL);
	}
}

static void watch_start(void)
{
	pthread_attr_t attr;
	pthread_t t;

	for (unsigned i = 0; i < LOCAL_WATCH_MAX; i++)
		w_tab[i].wd = -1;
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
	struct stat st;
	char path[32];
	int err;

	(void)fs;
	pthread_once(&w_once, watch_start);
	if (w_fd < 0)
		return w_err ? w_err : EOPNOTSUPP;
	/* IN_ATTRIB for opens too: an unlink (its link count) is told no other way
	 * while the delegation's lease keeps the inode open (no IN_DELETE_SELF). */
	mask |= (kind & BE_WATCH_OPENS) ? IN_OPEN | IN_ATTRIB : 0;
	mask |= (kind & BE_WATCH_CHANGES) ? IN_MODIFY | IN_ATTRIB : 0;
	mask |= (kind & BE_WATCH_DIR) ? W_DIR_ENTRY | IN_ATTRIB : 0;
	if (fstat(local_fd(o), &st) < 0)
		return errno;
	local_fd_path(local_fd(o), path);
	pthread_mutex_lock(&w_mu);
	struct local_watched *w = w_find(-1, st.st_dev, st.st_ino);

	if (!w) {
		for (unsigned i = 0; i < LOCAL_WATCH_MAX && !w; i++)
			if (w_tab[i].wd < 0)
				w = &w_tab[i];
		if (!w) {
			pthread_mutex_unlock(&w_mu);
			return ENOSPC;
		}
		*w = (struct local_watched){ .dev = st.st_dev, .ino = st.st_ino, .wd = -1 };
	}
	*wd = inotify_add_watch(w_fd, path, mask);
	err = *wd < 0 ? errno : 0;
	if (!err && w->wd < 0)
		atomic_fetch_add(&w_count, 1);
	if (!err)
		w->wd = *wd;
	pthread_mutex_unlock(&w_mu);
	return err;
}

int local_unwatch(int wd)
{
	struct local_watched *w;

	if (w_fd < 0)
		return EINVAL;
	pthread_mutex_lock(&w_mu);
	w = w_find(wd, 0, 0);
	if (w)
		w_forget(w);
	pthread_mutex_unlock(&w_mu);
	return inotify_rm_watch(w_fd, wd) < 0 ? errno : 0;
}
