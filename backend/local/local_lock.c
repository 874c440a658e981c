/*
 * local_lock.c - byte-range locks of the local backend, as Linux
 * open-file-description locks (F_OFD_SETLK): one open file description per
 * (lock owner, file), opened when the owner first locks the file and closed
 * as soon as it holds nothing there any more (the ranges it holds are kept
 * beside it, lock_ranges.h: an unlock that leaves none, or a refused first
 * lock, closes it) or by lock_owner_release(). So each NLM or NFSv4 lock
 * owner is a distinct lock holder to the kernel: owners conflict with each
 * other and with local processes' fcntl/flock-style POSIX locks exactly as
 * local processes do, and one owner's locks merge and split as POSIX locks.
 *
 * The table is bounded (local_lock_limit(), [rnfsd] lock-descriptions:
 * ENOLCK past it) and keyed by (device, inode, owner), so the same file
 * reached through two exports or two opens is one file. Each description is
 * a descriptor, counted in be_local_lock_descriptions(). Calls never wait
 * (F_OFD_SETLK, not F_OFD_SETLKW): a conflict is EAGAIN. One mutex covers
 * the table and the fcntl calls made under it (all non-blocking).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend/local/local.h"
#include "backend/local/lock_ranges.h"

#define LOCAL_LOCK_BUCKETS 1024u

struct local_lock_desc {
	dev_t dev;
	ino_t ino;
	uint64_t owner;
	int fd;                        /* the owner's open file description */
	struct lk_ranges held;         /* what its locks cover */
	struct local_lock_desc *next;  /* hash chain, or free list */
};

static pthread_mutex_t lk_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct local_lock_desc *lk_slots;   /* allocated at first use */
static struct local_lock_desc *lk_buckets[LOCAL_LOCK_BUCKETS];
static struct local_lock_desc *lk_free;
static unsigned lk_cap = LOCAL_LOCK_DESCS, lk_used;

void local_lock_limit(unsigned n)
{
	pthread_mutex_lock(&lk_mutex);
	if (!lk_slots && n)
		lk_cap = n; /* the table is made at first use */
	pthread_mutex_unlock(&lk_mutex);
}

unsigned be_local_lock_descriptions(unsigned *limit)
{
	unsigned n;

	pthread_mutex_lock(&lk_mutex);
	n = lk_used;
	if (limit)
		*limit = lk_cap;
	pthread_mutex_unlock(&lk_mutex);
	return n;
}

static unsigned lk_bucket(dev_t dev, ino_t ino, uint64_t owner)
{
	uint64_t x = ((uint64_t)dev * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)ino * 0xbf58476d1ce4e5b9ull) ^ owner;

	return (unsigned)(x ^ x >> 29) % LOCAL_LOCK_BUCKETS;
}

/* The owner's description of the file (lock held); create: open one if there is none. */
static int lk_desc(struct be_file *f, uint64_t owner, bool create, struct local_lock_desc **out)
{
	struct local_lock_desc **pp, *d;
	struct stat st;
	char path[32];

	*out = NULL;
	if (owner == 0)
		return EINVAL;
	if (fstat(f->fd, &st) < 0)
		return errno;
	pp = &lk_buckets[lk_bucket(st.st_dev, st.st_ino, owner)];
	for (d = *pp; d; d = d->next)
		if (d->dev == st.st_dev && d->ino == st.st_ino && d->owner == owner)
			break;
	if (d || !create) {
		*out = d;
		return 0;
	}
	if (!lk_slots) {
		lk_slots = calloc(lk_cap, sizeof(*lk_slots));
		if (!lk_slots)
			return ENOLCK;
		for (unsigned i = 0; i < lk_cap; i++) {
			lk_slots[i].next = lk_free;
			lk_free = &lk_slots[i];
		}
	}
	if (!lk_free)
		return ENOLCK;
	local_id_server();
	local_fd_path(f->fd, path);
	local_watch_self(&st);
	d = lk_free;
	/* rnfsd's own write lease (a write delegation's, whose holder alone gets
	 * here: NFSv4 recalls it for anyone else) yields to the holder's lock
	 * before the open, which would start its break (a recall for nothing). */
	(void)local_lease_yield(&st, f->rdwr);
	d->fd = open(path, (f->rdwr ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC); /* a lease: EWOULDBLOCK */
	if (d->fd < 0)
		/* Out of descriptors: no lock. A lease in the way (the open started its
		 * break): ETIMEDOUT, the caller's DELAY, as EAGAIN would say "conflict". */
		return errno == EMFILE || errno == ENFILE ? ENOLCK : errno == EWOULDBLOCK ? ETIMEDOUT : errno;
	lk_free = d->next;
	lk_used++;
	d->held = (struct lk_ranges){ 0 };
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->owner = owner;
	d->next = *pp;
	*pp = d;
	*out = d;
	return 0;
}

static void lk_desc_free(struct local_lock_desc *d)
{
	struct local_lock_desc **pp = &lk_buckets[lk_bucket(d->dev, d->ino, d->owner)];

	while (*pp && *pp != d)
		pp = &(*pp)->next;
	if (*pp)
		*pp = d->next;
	close(d->fd); /* releases every lock of the description */
	d->fd = -1;
	d->next = lk_free;
	lk_free = d;
	lk_used--;
}

/* After a lock or unlock: a description that holds nothing goes (its descriptor with it). */
static void lk_desc_trim(struct local_lock_desc *d)
{
	if (d && lk_ranges_empty(&d->held))
		lk_desc_free(d);
}

/* struct be_lock -> struct flock; ranges past the largest offset mean "to the end" (knfsd caps them too). */
static int lk_flock(const struct be_lock *lk, short type, struct flock *fl)
{
	if (lk->offset > (uint64_t)INT64_MAX)
		return EINVAL;
	*fl = (struct flock){ .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)lk->offset };
	if (lk_range_end(lk->offset, lk->length) != LK_RANGE_EOF) /* else l_len 0: to the end */
		fl->l_len = (off_t)lk->length;
	return 0;
}

int local_lock_set(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk)
{
	struct local_lock_desc *d;
	struct flock fl;
	int err = lk_flock(lk, lk->type == BE_LOCK_WRITE ? F_WRLCK : F_RDLCK, &fl);

	(void)fs;
	if (err)
		return err;
	if (lk->type == BE_LOCK_WRITE && !f->rdwr)
		return EBADF; /* an exclusive lock needs the file open for writing (fcntl(2)) */
	pthread_mutex_lock(&lk_mutex);
	err = lk_desc(f, owner, true, &d);
	if (!err && fcntl(d->fd, F_OFD_SETLK, &fl) < 0)
		err = errno == EACCES ? EAGAIN : errno;
	if (!err)
		lk_ranges_add(&d->held, lk->offset, lk_range_end(lk->offset, lk->length));
	lk_desc_trim(d); /* a refused first lock leaves no description behind */
	pthread_mutex_unlock(&lk_mutex);
	return err;
}

int local_lock_unset(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk)
{
	struct local_lock_desc *d;
	struct flock fl;
	int err = lk_flock(lk, F_UNLCK, &fl);

	(void)fs;
	if (err)
		return err;
	pthread_mutex_lock(&lk_mutex);
	err = lk_desc(f, owner, false, &d);
	if (!err && d && fcntl(d->fd, F_OFD_SETLK, &fl) < 0)
		err = errno;
	if (!err && d) {
		lk_ranges_sub(&d->held, lk->offset, lk_range_end(lk->offset, lk->length));
		lk_desc_trim(d); /* the last lock of the owner on the file: its description goes */
	}
	pthread_mutex_unlock(&lk_mutex);
	return err;
}

int local_lock_test(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk, bool *conflict,
		    struct be_lock_conflict *holder)
{
	struct local_lock_desc *d = NULL;
	struct flock fl;
	int err = lk_flock(lk, lk->type == BE_LOCK_WRITE ? F_WRLCK : F_RDLCK, &fl);

	(void)fs;
	*conflict = false;
	if (err)
		return err;
	pthread_mutex_lock(&lk_mutex);
	err = lk_desc(f, owner, false, &d);
	/* With the owner's own description its locks do not count; f->fd itself holds none. */
	if (!err && fcntl(d ? d->fd : f->fd, F_OFD_GETLK, &fl) < 0)
		err = errno;
	pthread_mutex_unlock(&lk_mutex);
	if (err || fl.l_type == F_UNLCK)
		return err;
	*conflict = true;
	if (holder)
		*holder = (struct be_lock_conflict){
			.lock = { .type = fl.l_type == F_WRLCK ? BE_LOCK_WRITE : BE_LOCK_READ,
				  .offset = (uint64_t)fl.l_start, .length = (uint64_t)fl.l_len },
			.owner = 0, /* the kernel does not say which description holds it */
		};
	return 0;
}

bool local_lock_owner_holds(struct be_fs *fs, struct be_file *f, uint64_t owner)
{
	struct local_lock_desc *d = NULL;
	bool holds;

	(void)fs;
	pthread_mutex_lock(&lk_mutex);
	/* A description exists only while it may hold a lock (lk_desc_trim); cannot tell: it may. */
	holds = lk_desc(f, owner, false, &d) != 0 || d != NULL;
	pthread_mutex_unlock(&lk_mutex);
	return holds;
}

void local_lock_owner_release(struct be_fs *fs, struct be_file *f, uint64_t owner)
{
	struct local_lock_desc *d;

	(void)fs;
	pthread_mutex_lock(&lk_mutex);
	if (lk_desc(f, owner, false, &d) == 0 && d)
		lk_desc_free(d);
	pthread_mutex_unlock(&lk_mutex);
}

void local_locks_shutdown(void)
{
	pthread_mutex_lock(&lk_mutex);
	for (unsigned b = 0; b < LOCAL_LOCK_BUCKETS; b++)
		while (lk_buckets[b])
			lk_desc_free(lk_buckets[b]);
	free(lk_slots);
	lk_slots = NULL;
	lk_free = NULL;
	lk_used = 0;
	pthread_mutex_unlock(&lk_mutex);
}
