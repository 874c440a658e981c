/*
 * local_lease.c - Linux leases (fcntl(2) F_SETLEASE) for NFSv4 delegations
 * on local exports (be_lease_set / be_lease_unset): a local process's
 * conflicting open(2) or truncate(2) of a leased file blocks in the kernel
 * until rnfsd releases the lease (or /proc/sys/fs/lease-break-time passes),
 * and rnfsd is told at once, so the delegation is recalled before the local
 * change lands (RFC 8881 §10.4.1, which local_watch.c's inotify only told
 * after the fact).
 *
 * Each lease sits on its own duplicate of the caller's descriptor (the same
 * open file description, so the lease outlives the be_file's close and
 * rnfsd's I/O through that file does not break it). A lease refused is
 * asked again once after the file cache's idle descriptor of the file (if
 * any) is closed. The kernel's rules,
 * measured in tests/unit/test_local_lease.c: a read lease needs no
 * descriptor of the file open for writing (the lease's own included), a
 * write lease no other descriptor open at all; O_PATH descriptors do not
 * count; rename(2), unlink(2), link(2) and chmod(2) do not break an
 * fcntl lease (only nfsd's in-kernel delegations), so local_watch.c still
 * reports those, after the fact.
 *
 * A break is told by LOCAL_LEASE_SIG (a real-time signal, F_SETSIG) sent
 * only to the lease thread (F_SETOWN_EX, F_OWNER_TID), which blocks it and
 * waits for it with sigwaitinfo(); si_fd names the lease; the thread hands
 * it to the lease listener (be_lease_broken()). A full real-time queue makes
 * the kernel send SIGIO instead: every lease is then asked (F_GETLEASE) and
 * those being broken are told. The thread starts at the first lease.
 *
 * rnfsd's own opens of files (fcache.c, local_lock.c, local_meta.c) carry
 * O_NONBLOCK: they never wait on a lease (its own, or a local process's);
 * they fail EWOULDBLOCK (the NFS caller answers DELAY / JUKEBOX) and start
 * the break. Only the holder of a write delegation gets past NFSv4's own
 * recall to such an open (its OPEN, e.g. CLAIM_DELEG_CUR_FH when it returns
 * the delegation, its SETATTR of the size): it gets the lease's own open
 * file description (local_lease_dup), which breaks nothing. Its byte-range
 * locks (RFC 8881 §10.4, §9.8: kept locally and sent with LOCK on the
 * recall, or sent under the delegation) go on that description too,
 * local_lock.c's shared one: the kernel breaks a lease at every open, even
 * its owner's (only nfsd's own delegations have lm_breaker_owns_lease), so
 * a lock description of their own would break it and let a local process
 * blocked in open(2) in before the holder's other locks. So the lease
 * stands until the delegation is returned or revoked, and a local process
 * gets in only when the holder's locks are all the kernel's. A read lease
 * yields (local_lease_yield, F_UNLCK before the open) to the holder's own
 * OPEN for writing (RFC 8881 §10.4: no conflict with its own read
 * delegation; pynfs DELEG23): the delegation stands, from then on the
 * file's inotify watch reports local opens after the fact. A read holder's
 * read locks go on read-only descriptions, which do not break a read
 * lease. A yielded lease keeps its slot (type F_UNLCK) until
 * local_lease_unset(), which also tells local_lock.c (local_lock_lease_gone:
 * the shared description closes once its last lock goes).
 *
 * Bounded: LOCAL_LEASE_MAX leases, a fixed table under one mutex; the lease
 * id is the slot.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/local/local.h"
#include "core/log.h"

#define LOCAL_LEASE_MAX 4096u
#define LOCAL_LEASE_SIG (SIGRTMIN + 4)

/* One lease: its own descriptor (-1: a free slot), its kind (F_RDLCK /
 * F_WRLCK; F_UNLCK once yielded) and its file's inode (local_lease_dup). */
struct local_lease {
	int fd;
	int type;
	dev_t dev;
	ino_t ino;
};

static pthread_once_t l_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t l_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t l_cv = PTHREAD_COND_INITIALIZER;
static pid_t l_tid;  /* the lease thread, once it waits (0: not yet, -1: failed) */
static int l_err;
static struct local_lease l_tab[LOCAL_LEASE_MAX];
static atomic_uint l_count; /* leases held: 0 keeps rnfsd's own opens to one load (l_on) */

/* l_mu held: the lease on descriptor fd, or -1. */
static int l_find_fd(int fd)
{
	for (unsigned i = 0; i < LOCAL_LEASE_MAX; i++)
		if (l_tab[i].fd == fd && fd >= 0)
			return (int)i;
	return -1;
}

/* SIGIO: the real-time queue overflowed; each lease being broken is told. */
static void l_overflow(void)
{
	int broken[64];
	unsigned n = 0;

	pthread_mutex_lock(&l_mu);
	for (unsigned i = 0; i < LOCAL_LEASE_MAX && n < 64; i++)
		if (l_tab[i].fd >= 0 && fcntl(l_tab[i].fd, F_GETLEASE) != l_tab[i].type)
			broken[n++] = (int)i;
	pthread_mutex_unlock(&l_mu);
	for (unsigned i = 0; i < n; i++)
		be_lease_broken(broken[i]);
}

static void *lease_main(void *arg)
{
	sigset_t set;
	siginfo_t si;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, LOCAL_LEASE_SIG);
	sigaddset(&set, SIGIO);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&l_mu);
	l_tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&l_cv);
	pthread_mutex_unlock(&l_mu);
	for (;;) {
		int sig = sigwaitinfo(&set, &si), lid;

		if (sig == SIGIO) {
			l_overflow();
			continue;
		}
		if (sig != LOCAL_LEASE_SIG)
			continue; /* EINTR */
		pthread_mutex_lock(&l_mu);
		lid = l_find_fd(si.si_fd);
		pthread_mutex_unlock(&l_mu);
		if (lid >= 0)
			be_lease_broken(lid);
	}
	return NULL;
}

static void lease_start(void)
{
	pthread_attr_t attr;
	pthread_t t;

	for (unsigned i = 0; i < LOCAL_LEASE_MAX; i++)
		l_tab[i].fd = -1;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, lease_main, NULL) != 0) {
		l_err = EAGAIN;
		l_tid = -1;
	}
	pthread_attr_destroy(&attr);
	pthread_mutex_lock(&l_mu);
	while (l_tid == 0)
		pthread_cond_wait(&l_cv, &l_mu);
	pthread_mutex_unlock(&l_mu);
}

/* The lease on fd (the thread told of its break), or its errno. */
static int l_take(int fd, bool write)
{
	struct f_owner_ex own = { .type = F_OWNER_TID, .pid = l_tid };

	if (fcntl(fd, F_SETOWN_EX, &own) < 0 || fcntl(fd, F_SETSIG, LOCAL_LEASE_SIG) < 0)
		return errno;
	return fcntl(fd, F_SETLEASE, write ? F_WRLCK : F_RDLCK) < 0 ? errno : 0;
}

int local_lease_set(struct be_fs *fs, struct be_file *f, bool write, int *lid)
{
	struct stat st;
	int fd, err, slot;

	(void)fs;
	pthread_once(&l_once, lease_start);
	if (l_tid < 0)
		return l_err;
	if (fstat(f->fd, &st) < 0)
		return errno;
	fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	pthread_mutex_lock(&l_mu);
	slot = -1;
	for (unsigned i = 0; i < LOCAL_LEASE_MAX && slot < 0; i++)
		if (l_tab[i].fd < 0)
			slot = (int)i;
	err = slot < 0 ? ENOSPC : l_take(fd, write);
	if (err == EAGAIN) {
		/* The file cache's idle descriptor (NFSv3's I/O, read-write) may be
		 * what is in the way: closed, and the lease asked for again. */
		pthread_mutex_unlock(&l_mu);
		local_fcache_drop_idle(f->fs, f->fd);
		pthread_mutex_lock(&l_mu);
		err = l_tab[slot].fd < 0 ? l_take(fd, write) : EAGAIN; /* the slot not taken meanwhile */
	}
	if (!err)
		atomic_fetch_add(&l_count, 1);
	if (!err)
		l_tab[slot] = (struct local_lease){ .fd = fd, .type = write ? F_WRLCK : F_RDLCK, .dev = st.st_dev,
						    .ino = st.st_ino };
	pthread_mutex_unlock(&l_mu);
	if (err) {
		close(fd);
		return err;
	}
	*lid = slot;
	return 0;
}

int local_lease_unset(int lid)
{
	struct stat st = { 0 };
	int fd;

	if (lid < 0 || (unsigned)lid >= LOCAL_LEASE_MAX)
		return EINVAL;
	pthread_mutex_lock(&l_mu);
	fd = l_tab[lid].fd;
	l_tab[lid].fd = -1;
	st.st_dev = l_tab[lid].dev;
	st.st_ino = l_tab[lid].ino;
	if (fd >= 0)
		atomic_fetch_sub(&l_count, 1);
	pthread_mutex_unlock(&l_mu);
	if (fd < 0)
		return EINVAL;
	(void)fcntl(fd, F_SETLEASE, F_UNLCK); /* fails if the kernel broke it already: closed anyway */
	close(fd);
	/* The holder's locks stay on the description (the shared one) until unlocked: it goes after them. */
	local_lock_lease_gone(&st);
	return 0;
}

/* The kind of rnfsd's lease on the inode st (F_RDLCK, F_WRLCK), or -1 with
 * none; for a write lease, *fd a new descriptor of its description. */
static int l_on(const struct stat *st, int *fd)
{
	int type = -1;

	if (!atomic_load(&l_count))
		return -1; /* no lease held: no lock either */
	pthread_mutex_lock(&l_mu);
	for (unsigned i = 0, n = 0; i < LOCAL_LEASE_MAX && n < atomic_load(&l_count) && type < 0; i++) {
		const struct local_lease *l = &l_tab[i];

		n += l->fd >= 0;
		if (l->fd >= 0 && l->ino == st->st_ino && l->dev == st->st_dev)
			type = l->type;
		if (type == F_WRLCK && fd)
			*fd = fcntl(l->fd, F_DUPFD_CLOEXEC, 0);
	}
	pthread_mutex_unlock(&l_mu);
	return type;
}

unsigned be_lease_break_time(void)
{
	unsigned s = 0;
	FILE *f = fopen("/proc/sys/fs/lease-break-time", "re");

	if (f) {
		if (fscanf(f, "%u", &s) != 1)
			s = 0;
		fclose(f);
	}
	return s;
}

int local_lease_yield(const struct stat *st)
{
	int err = ENOENT;

	if (!atomic_load(&l_count))
		return ENOENT;
	pthread_mutex_lock(&l_mu);
	for (unsigned i = 0; i < LOCAL_LEASE_MAX && err == ENOENT; i++) {
		struct local_lease *l = &l_tab[i];

		if (l->fd < 0 || l->ino != st->st_ino || l->dev != st->st_dev || l->type != F_RDLCK)
			continue;
		/* Fails only if the kernel took it already (lease-break-time): gone either way. */
		(void)fcntl(l->fd, F_SETLEASE, F_UNLCK);
		l->type = F_UNLCK;
		err = 0;
	}
	pthread_mutex_unlock(&l_mu);
	return err;
}

int local_lease_dup(const struct stat *st)
{
	int fd = -1;

	(void)l_on(st, &fd);
	return fd;
}

bool local_lease_read(const struct stat *st)
{
	return l_on(st, NULL) == F_RDLCK;
}

bool local_lease_write(const struct stat *st)
{
	return l_on(st, NULL) == F_WRLCK;
}
