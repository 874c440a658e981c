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
 *
 * A write delegation's file is the exception (issue 26): rnfsd's write lease
 * (local_lease.c) would be broken by any open, rnfsd's own included, so the
 * holder's lock owners (nobody else gets here: NFSv4 and NLM recall the
 * delegation first) all lock on the lease's own open file description, the
 * file's shared description (owner key 0 in the table). Its struct
 * lks_table (lock_share.h) tells those owners apart: rnfsd checks their
 * conflicts with each other there and keeps the union of their locks on
 * the description, where local processes meet them. A local process blocked
 * in open(2) by the lease waits for the recall; when it gets in, the
 * holder's locks are already the kernel's (RFC 8881 §10.4: the holder's
 * locks are its own until the delegation is returned). After DELEGRETURN the
 * lease goes, but the owners that still hold locks there go on using the
 * shared description until they hold none (an owner's later lock overlapping
 * its earlier one merges with it; nothing is released and taken again); the
 * description closes when no lock and no lease is left on it. Owners that
 * hold nothing there use their own descriptions as above. Bounded:
 * LK_SHARE_FILES tables of LKS_MAX pieces; with none free, or the file's
 * full, an owner new to it opens its own description, which breaks the
 * lease (a recall; ETIMEDOUT, the caller's DELAY, until it is returned); an
 * owner already there gets ENOLCK (RESOURCE / DELAY) until it unlocks some.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/local/local.h"
#include "backend/local/lock_ranges.h"
#include "backend/local/lock_share.h"

#define LOCAL_LOCK_BUCKETS 1024u
#define LK_SHARE_FILES 256u /* write-delegated files with locks at once (tables of LKS_MAX pieces) */
#define LK_SHARED 0u        /* the owner key of a file's shared description */

/* The pieces of the owners sharing one description, or a free one (free list). */
struct lk_share {
	struct lks_table t;
	struct lk_share *next;
};

struct local_lock_desc {
	dev_t dev;
	ino_t ino;
	uint64_t owner;                /* LK_SHARED: the file's shared description */
	int fd;                        /* the owner's open file description */
	struct lk_ranges held;         /* what its locks cover (not the shared one's) */
	struct lk_share *share;        /* the shared one's: who holds what on it */
	struct local_lock_desc *next;  /* hash chain, or free list */
};

static pthread_mutex_t lk_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct local_lock_desc *lk_slots;   /* allocated at first use */
static struct local_lock_desc *lk_buckets[LOCAL_LOCK_BUCKETS];
static struct local_lock_desc *lk_free;
static unsigned lk_cap = LOCAL_LOCK_DESCS, lk_used;
static struct lk_share *lk_shares, *lk_share_free; /* LK_SHARE_FILES, allocated at first use */
static unsigned lk_share_made;                     /* of lk_shares, handed out at least once */
static unsigned lk_shared;                         /* shared descriptions (in lk_used too) */

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

unsigned be_local_lock_shared(unsigned *pieces)
{
	unsigned n, p = 0;

	pthread_mutex_lock(&lk_mutex);
	n = lk_shared;
	for (unsigned i = 0; lk_shares && pieces && i < lk_share_made; i++)
		p += lk_shares[i].t.n;
	pthread_mutex_unlock(&lk_mutex);
	if (pieces)
		*pieces = p;
	return n;
}

/* The description of (st, owner), or NULL (lock held). */
static struct local_lock_desc *lk_find(const struct stat *st, uint64_t owner)
{
	struct local_lock_desc *d = lk_buckets[lk_bucket(st->st_dev, st->st_ino, owner)];

	while (d && !(d->dev == st->st_dev && d->ino == st->st_ino && d->owner == owner))
		d = d->next;
	return d;
}

/* The slots, made at first use: false if they cannot be. */
static bool lk_slots_ready(void)
{
	if (lk_slots)
		return true;
	lk_slots = calloc(lk_cap, sizeof(*lk_slots));
	if (!lk_slots)
		return false;
	for (unsigned i = 0; i < lk_cap; i++) {
		lk_slots[i].next = lk_free;
		lk_free = &lk_slots[i];
	}
	return true;
}

/* A free slot becomes (st, owner)'s description on descriptor fd (the caller checked lk_free). */
static struct local_lock_desc *lk_slot_take(const struct stat *st, uint64_t owner, int fd)
{
	struct local_lock_desc *d = lk_free, **pp = &lk_buckets[lk_bucket(st->st_dev, st->st_ino, owner)];

	lk_free = d->next;
	lk_used++;
	*d = (struct local_lock_desc){ .dev = st->st_dev, .ino = st->st_ino, .owner = owner, .fd = fd, .next = *pp };
	*pp = d;
	return d;
}

/* The owner's description of the file (lock held); create: open one if there is none. */
static int lk_desc(struct be_file *f, uint64_t owner, bool create, struct local_lock_desc **out)
{
	struct stat st;
	char path[32];
	int fd;

	*out = NULL;
	if (owner == LK_SHARED)
		return EINVAL;
	if (fstat(f->fd, &st) < 0)
		return errno;
	*out = lk_find(&st, owner);
	if (*out || !create)
		return 0;
	if (!lk_slots_ready() || !lk_free)
		return ENOLCK;
	local_id_server();
	local_fd_path(f->fd, path);
	local_watch_self(&st);
	/* A write lease here (its shared description full, lk_shared_for) breaks: a recall. */
	fd = open(path, (f->rdwr ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC); /* a lease: EWOULDBLOCK */
	if (fd < 0)
		/* Out of descriptors: no lock. A lease in the way (the open started its
		 * break): ETIMEDOUT, the caller's DELAY, as EAGAIN would say "conflict". */
		return errno == EMFILE || errno == ENFILE ? ENOLCK : errno == EWOULDBLOCK ? ETIMEDOUT : errno;
	*out = lk_slot_take(&st, owner, fd);
	return 0;
}

static void lk_desc_free(struct local_lock_desc *d)
{
	struct local_lock_desc **pp = &lk_buckets[lk_bucket(d->dev, d->ino, d->owner)];

	while (*pp && *pp != d)
		pp = &(*pp)->next;
	if (*pp)
		*pp = d->next;
	/* Releases every lock of an owner's own description; a shared one is freed only
	 * with an empty table (lk_desc_trim), so the kernel holds nothing there either. */
	close(d->fd);
	d->fd = -1;
	if (d->share) {
		d->share->next = lk_share_free;
		lk_share_free = d->share;
		d->share = NULL;
		lk_shared--;
	}
	d->next = lk_free;
	lk_free = d;
	lk_used--;
}

/* After a lock or unlock: a description that holds nothing goes (its descriptor with it); a
 * shared one once no lock and no lease is left on it. */
static void lk_desc_trim(struct local_lock_desc *d)
{
	struct stat st = { 0 };

	if (!d)
		return;
	if (!d->share) {
		if (lk_ranges_empty(&d->held))
			lk_desc_free(d);
		return;
	}
	st.st_dev = d->dev;
	st.st_ino = d->ino;
	if (d->share->t.n == 0 && !local_lease_write(&st))
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

/* A free shared table, made at first use, or NULL. */
static struct lk_share *lk_share_get(void)
{
	struct lk_share *sh;

	if (!lk_shares)
		lk_shares = calloc(LK_SHARE_FILES, sizeof(*lk_shares)); /* 2 MiB, its pages touched as used */
	sh = lk_share_free;
	if (sh)
		lk_share_free = sh->next;
	else if (lk_shares && lk_share_made < LK_SHARE_FILES)
		sh = &lk_shares[lk_share_made++];
	if (sh)
		sh->t.n = 0;
	return sh;
}

/*
 * The shared description owner's locks on the file st go on (lock held), or
 * NULL: its own then. The write lease's own description while rnfsd holds a
 * write lease on the file (only the delegation's holder gets here; create:
 * made from the lease at its first lock), and after the lease went for the
 * owners still holding locks there. An owner with its own description stays
 * there (two descriptions of one owner would conflict with each other).
 */
static struct local_lock_desc *lk_shared_for(const struct stat *st, uint64_t owner, bool create)
{
	struct local_lock_desc *s = lk_find(st, LK_SHARED);
	struct lk_share *sh;
	int fd;

	if (owner == LK_SHARED || lk_find(st, owner))
		return NULL;
	if (s && lks_holds(&s->share->t, owner))
		return s;
	if (!local_lease_write(st))
		return NULL;
	if (s || !create || !lk_slots_ready() || !lk_free)
		return s;
	sh = lk_share_get();
	fd = sh ? local_lease_dup(st) : -1; /* -1: the lease went meanwhile */
	if (fd < 0) {
		if (sh) {
			sh->next = lk_share_free;
			lk_share_free = sh;
		}
		return NULL; /* no table free: the owner's own open breaks the lease (a recall) */
	}
	s = lk_slot_take(st, LK_SHARED, fd);
	s->share = sh;
	lk_shared++;
	return s;
}

/* Owner's lock lk (as fl) on the shared description s: its fellow owners' conflicts first
 * (lock_share.h), then the kernel's (local processes', other descriptions'). 0, EAGAIN,
 * ENOLCK (the table full) or fcntl's errno; the table changes only if the kernel's did. */
static int lk_share_set(struct local_lock_desc *s, uint64_t owner, const struct be_lock *lk, struct flock *fl)
{
	uint64_t start = lk->offset, end = lk_range_end(lk->offset, lk->length);
	uint8_t type = lk->type == BE_LOCK_WRITE ? LKS_WRITE : LKS_READ;
	struct lks_table old;
	int err;

	if (lks_conflict(&s->share->t, owner, type, start, end))
		return EAGAIN;
	lks_copy(&old, &s->share->t);
	err = lks_set(&s->share->t, owner, type, start, end);
	/* No fellow owner conflicts: the union on [start, end) becomes type, one call (lock_share.h). */
	if (!err && fcntl(s->fd, F_OFD_SETLK, fl) < 0) {
		err = errno == EACCES ? EAGAIN : errno;
		lks_copy(&s->share->t, &old);
	}
	return err;
}

/* Owner's unlock of [start, end) on the shared description s: only what no fellow owner still
 * holds is let go (nothing is released and taken again). 0, ENOLCK (a split past the table), or fcntl's errno. */
static int lk_share_unset(struct local_lock_desc *s, uint64_t owner, uint64_t start, uint64_t end)
{
	struct lk_range gaps[LKS_MAX + 1];
	struct lks_table old;
	int err;
	unsigned n;

	lks_copy(&old, &s->share->t);
	err = lks_unset(&s->share->t, owner, start, end);
	n = err ? 0 : lks_gaps(&s->share->t, start, end, gaps);
	for (unsigned i = 0; i < n && !err; i++) {
		struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = (off_t)gaps[i].start,
				    .l_len = gaps[i].end == LK_RANGE_EOF ? 0 : (off_t)(gaps[i].end - gaps[i].start) };

		if (fcntl(s->fd, F_OFD_SETLK, &fl) < 0)
			err = errno;
	}
	if (err)
		lks_copy(&s->share->t, &old);
	return err;
}

int local_lock_set(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk)
{
	struct local_lock_desc *d, *s = NULL;
	struct flock fl;
	struct stat st;
	int err = lk_flock(lk, lk->type == BE_LOCK_WRITE ? F_WRLCK : F_RDLCK, &fl);

	(void)fs;
	if (err)
		return err;
	if (lk->type == BE_LOCK_WRITE && !f->rdwr)
		return EBADF; /* an exclusive lock needs the file open for writing (fcntl(2)) */
	pthread_mutex_lock(&lk_mutex);
	if (fstat(f->fd, &st) == 0)
		s = lk_shared_for(&st, owner, true);
	if (s) {
		/* RFC 8881 §10.4: a write delegation's holder's locks, on its lease's description. */
		err = lk_share_set(s, owner, lk, &fl);
		/* Its table full: an owner new to it opens its own (which recalls the delegation). */
		bool own = err == ENOLCK && !lks_holds(&s->share->t, owner);

		lk_desc_trim(s);
		if (!own) {
			pthread_mutex_unlock(&lk_mutex);
			return err;
		}
	}
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
	struct local_lock_desc *d, *s = NULL;
	struct flock fl;
	struct stat st;
	int err = lk_flock(lk, F_UNLCK, &fl);

	(void)fs;
	if (err)
		return err;
	pthread_mutex_lock(&lk_mutex);
	if (fstat(f->fd, &st) == 0)
		s = lk_shared_for(&st, owner, false);
	if (s) {
		err = lk_share_unset(s, owner, lk->offset, lk_range_end(lk->offset, lk->length));
		lk_desc_trim(s); /* the last lock on it, and no lease: it goes */
		pthread_mutex_unlock(&lk_mutex);
		return err;
	}
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

/* A fellow owner's lock on the shared description s that lk of owner conflicts with, named
 * (the kernel cannot tell them apart): true and *holder filled, or false. */
static bool lk_share_test(const struct local_lock_desc *s, uint64_t owner, const struct be_lock *lk,
			  struct be_lock_conflict *holder)
{
	const struct lks_ent *e = lks_conflict(&s->share->t, owner, lk->type == BE_LOCK_WRITE ? LKS_WRITE : LKS_READ,
					       lk->offset, lk_range_end(lk->offset, lk->length));

	if (e && holder)
		*holder = (struct be_lock_conflict){
			.lock = { .type = e->type == LKS_WRITE ? BE_LOCK_WRITE : BE_LOCK_READ, .offset = e->start,
				  .length = e->end == LK_RANGE_EOF ? 0 : e->end - e->start },
			.owner = e->owner,
		};
	return e != NULL;
}

int local_lock_test(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk, bool *conflict,
		    struct be_lock_conflict *holder)
{
	struct local_lock_desc *d = NULL, *s = NULL;
	struct flock fl;
	struct stat st;
	int err = lk_flock(lk, lk->type == BE_LOCK_WRITE ? F_WRLCK : F_RDLCK, &fl);

	(void)fs;
	*conflict = false;
	if (err)
		return err;
	pthread_mutex_lock(&lk_mutex);
	err = fstat(f->fd, &st) < 0 ? errno : 0;
	if (!err) {
		d = lk_find(&st, owner);
		s = lk_find(&st, LK_SHARED);
		*conflict = s && lk_share_test(s, owner, lk, holder);
	}
	/* Else the kernel: through the owner's own description (its locks do not count), or the shared
	 * one it locks on; f->fd holds none, or is the shared one (whose locks the table just told). */
	if (!err && !*conflict && fcntl(d ? d->fd : s && lks_holds(&s->share->t, owner) ? s->fd : f->fd,
					F_OFD_GETLK, &fl) < 0)
		err = errno;
	pthread_mutex_unlock(&lk_mutex);
	if (err || *conflict || fl.l_type == F_UNLCK)
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

/* Does the open file description fd hold an OFD lock? proc(5): /proc/self/fdinfo lists the
 * "lock:" lines of the locks the description owns (fs/locks.c show_fd_locks). 1, 0, or -1. */
static int lk_fd_locked(int fd)
{
	char path[64], buf[4096];
	ssize_t n;
	int pfd, found = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if ((pfd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while (!found && (n = read(pfd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = 0;
		found = strstr(buf, "lock:") != NULL;
	}
	close(pfd);
	return found ? 1 : n < 0 ? -1 : 0;
}

bool local_lock_owner_holds(struct be_fs *fs, struct be_file *f, uint64_t owner)
{
	struct local_lock_desc *d, *s;
	struct stat st;
	bool holds = true; /* cannot tell: it may */

	(void)fs;
	pthread_mutex_lock(&lk_mutex);
	/* A description exists only while it may hold a lock (lk_desc_trim); one whose pieces were lost
	 * (more than LK_RANGES_MAX) is asked of the kernel, which knows (a fdinfo line per lock). */
	if (fstat(f->fd, &st) == 0) {
		s = lk_find(&st, LK_SHARED);
		d = lk_find(&st, owner);
		if (d && owner != LK_SHARED && d->held.lost && lk_fd_locked(d->fd) == 0) {
			lk_desc_free(d); /* it holds nothing: as lk_desc_trim would have, had it known */
			d = NULL;
		}
		holds = d != NULL || (s && lks_holds(&s->share->t, owner));
	}
	pthread_mutex_unlock(&lk_mutex);
	return holds;
}

void local_lock_owner_release(struct be_fs *fs, struct be_file *f, uint64_t owner)
{
	struct local_lock_desc *d, *s;
	struct stat st;

	(void)fs;
	pthread_mutex_lock(&lk_mutex);
	if (fstat(f->fd, &st) == 0) {
		d = lk_find(&st, owner);
		s = lk_find(&st, LK_SHARED);
		if (d && owner != LK_SHARED)
			lk_desc_free(d);
		else if (s && lks_holds(&s->share->t, owner))
			(void)lk_share_unset(s, owner, 0, LK_RANGE_EOF);
		lk_desc_trim(s);
	}
	pthread_mutex_unlock(&lk_mutex);
}

void local_lock_lease_gone(const struct stat *st)
{
	pthread_mutex_lock(&lk_mutex);
	lk_desc_trim(lk_find(st, LK_SHARED));
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
	free(lk_shares);
	lk_shares = NULL;
	lk_share_free = NULL;
	lk_share_made = 0;
	lk_shared = 0;
	pthread_mutex_unlock(&lk_mutex);
}
