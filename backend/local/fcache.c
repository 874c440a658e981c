/*
 * fcache.c - open regular files of the local backend (struct be_file), and
 * a cache of them by handle, so NFSv3 READ, WRITE and COMMIT do not reopen
 * a file by handle on every call.
 *
 * Keyed by (instance, handle bytes); the value is an fd opened as root with
 * O_RDWR (or O_RDONLY when the file cannot be opened for writing); a
 * file_open() of an object opens only for what it asks (BE_OPEN_*).
 * Permission is checked per I/O under the caller's identity (BE_IO_CHECK_ACCESS,
 * as knfsd's filecache). Each file holds a reference on its instance.
 *
 * Bounded: LOCAL_FCACHE_ENTRIES entries (or be_local_settings()'s) preallocated at init, in a hash table
 * and an LRU list; a get takes a reference, a put drops it; only
 * unreferenced entries are evicted. An entry whose file was unlinked
 * (st_nlink 0) or whose instance closed is unhashed at once and its fd closed
 * when the last user puts it, so it never answers as live again. When every
 * entry is in use, and for file_open() of an object (NFSv4 open state), the
 * file is a separately allocated be_file (not per I/O: per open). One mutex
 * protects everything; it is never held across a system call other than
 * close() of an evicted fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/local/local.h"

static pthread_mutex_t fc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct be_file *fc_slots;
static unsigned fc_cap;
static struct be_file **fc_hash;
static unsigned fc_nbuckets;
static struct be_file *fc_lru_head, *fc_lru_tail;
static struct be_file *fc_free; /* chained through hnext */

int local_fcache_init(void)
{
	unsigned capacity = be_local_settings()->file_cache ? be_local_settings()->file_cache : LOCAL_FCACHE_ENTRIES;

	if (fc_slots)
		return 0;
	fc_nbuckets = 1;
	while (fc_nbuckets < capacity * 2)
		fc_nbuckets <<= 1;
	fc_slots = calloc(capacity, sizeof(*fc_slots));
	fc_hash = calloc(fc_nbuckets, sizeof(*fc_hash));
	if (!fc_slots || !fc_hash) {
		free(fc_slots);
		free(fc_hash);
		fc_slots = NULL;
		fc_hash = NULL;
		fc_cap = 0; /* every open is uncached */
		return 0;
	}
	fc_cap = capacity;
	fc_free = NULL;
	for (unsigned i = 0; i < capacity; i++) {
		fc_slots[i].fd = -1;
		fc_slots[i].cached = true;
		fc_slots[i].hnext = fc_free;
		fc_free = &fc_slots[i];
	}
	return 0;
}

/* FNV-1a over the instance and the handle (handles are MAC-checked before they get here). */
static unsigned fc_bucket(const struct local_fs *lf, const struct be_handle *h)
{
	uint64_t x = 1469598103934665603ull ^ (uint64_t)(uintptr_t)lf;

	for (uint32_t i = 0; i < h->len; i++)
		x = (x ^ h->data[i]) * 1099511628211ull;
	return (unsigned)(x ^ x >> 32) & (fc_nbuckets - 1);
}

static void fc_lru_unlink(struct be_file *e)
{
	if (e->lru_prev)
		e->lru_prev->lru_next = e->lru_next;
	else
		fc_lru_head = e->lru_next;
	if (e->lru_next)
		e->lru_next->lru_prev = e->lru_prev;
	else
		fc_lru_tail = e->lru_prev;
	e->lru_prev = e->lru_next = NULL;
}

static void fc_lru_push(struct be_file *e)
{
	e->lru_prev = NULL;
	e->lru_next = fc_lru_head;
	if (fc_lru_head)
		fc_lru_head->lru_prev = e;
	fc_lru_head = e;
	if (!fc_lru_tail)
		fc_lru_tail = e;
}

/* Return an unreferenced slot to the free list (lock held); its fd and instance to release after. */
static void fc_slot_free(struct be_file *e, int *close_fd, struct local_fs **put)
{
	*close_fd = e->fd;
	*put = e->fs;
	e->fd = -1;
	e->fs = NULL;
	e->hnext = fc_free;
	fc_free = e;
}

/* Unhash e (lock held). If nobody uses it, it is freed: *close_fd / *put to release after. */
static void fc_unhash(struct be_file *e, int *close_fd, struct local_fs **put)
{
	struct be_file **pp = &fc_hash[fc_bucket(e->fs, &e->key)];

	*close_fd = -1;
	*put = NULL;
	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	fc_lru_unlink(e);
	e->hashed = false;
	if (e->refs == 0)
		fc_slot_free(e, close_fd, put);
}

static void fc_release(int fd, struct local_fs *lf)
{
	local_close(fd);
	if (lf)
		local_fs_put(lf);
}

static struct be_file *fc_find(const struct local_fs *lf, const struct be_handle *h)
{
	struct be_file *e = fc_hash[fc_bucket(lf, h)];

	while (e && (e->fs != lf || e->key.len != h->len || memcmp(e->key.data, h->data, h->len) != 0))
		e = e->hnext;
	return e;
}

/* A free slot, evicting the least recently used idle entry if needed (lock held). */
static struct be_file *fc_slot_alloc(int *close_fd, struct local_fs **put)
{
	struct be_file *e;

	*close_fd = -1;
	*put = NULL;
	if (!fc_free) {
		for (e = fc_lru_tail; e && e->refs; e = e->lru_prev)
			;
		if (!e)
			return NULL;
		fc_unhash(e, close_fd, put);
	}
	e = fc_free;
	fc_free = e->hnext;
	return e;
}

/* Open the regular file behind O_PATH fd pfd (st) for I/O, as root: never a
 * FIFO or device. Read-write where it can (a cached file serves any I/O),
 * unless exact: then only as flags say (an NFSv4 open, whose read-only
 * descriptor leaves the file a read lease: local_lease.c). O_NONBLOCK: a
 * lease on the file (a delegation's, or a local process's) fails the open
 * with EWOULDBLOCK, the caller's DELAY, rather than holding the thread. */
static int fc_reopen(int pfd, const struct stat *st, unsigned flags, bool exact, int *fd, bool *rdwr)
{
	char path[32];

	if (!S_ISREG(st->st_mode))
		return S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
	local_fd_path(pfd, path);
	local_watch_self(st); /* rnfsd's own open, not a local process's (a delegation's watch) */
	*fd = exact ? local_lease_dup(st) : -1; /* a write delegation's holder: through its lease */
	if (*fd >= 0) {
		*rdwr = true;
		return 0;
	}
	/* An NFSv4 OPEN for writing by the holder of the file's read delegation (the
	 * other clients' were recalled before): rnfsd's read lease yields to it. */
	if (exact && (flags & BE_OPEN_WRITE))
		(void)local_lease_yield(st);
	/* Read-write where it can, but not on a file rnfsd holds a read lease
	 * on, for reading: it would break the lease (a recall for nothing). */
	*rdwr = (flags & BE_OPEN_WRITE) || (!exact && !local_lease_read(st));
	*fd = open(path, (*rdwr ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0 && *rdwr && !(flags & BE_OPEN_WRITE) && errno != EMFILE && errno != ENFILE &&
	    errno != EWOULDBLOCK) {
		*rdwr = false; /* read-only file system, ETXTBSY, immutable... */
		*fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	}
	return *fd < 0 ? errno : 0;
}

/* A be_file outside the cache's slots. */
static int fc_new_uncached(struct local_fs *lf, int fd, bool rdwr, struct be_file **out)
{
	struct be_file *f = calloc(1, sizeof(*f));

	if (!f) {
		close(fd);
		return ENOMEM;
	}
	atomic_fetch_add(&lf->refs, 1);
	*f = (struct be_file){ .fs = lf, .fd = fd, .rdwr = rdwr, .refs = 1 };
	*out = f;
	return 0;
}

int local_file_open(struct be_fs *fs, const struct be_obj *o, unsigned flags, struct be_file **out)
{
	struct stat st;
	bool rdwr;
	int fd, err;

	if (fstat(local_fd(o), &st) < 0)
		return errno;
	local_id_server();
	err = fc_reopen(local_fd(o), &st, flags, true, &fd, &rdwr);
	return err ? err : fc_new_uncached(local_fs(fs), fd, rdwr, out);
}

/* Cache ours (refs 1), replacing a read-only or racing entry. Else *f stays uncached. */
static void fc_insert(struct local_fs *lf, const struct be_handle *h, int fd, bool rdwr, struct be_file **out)
{
	struct be_file *e;
	struct local_fs *put[2] = { NULL, NULL };
	int close_fd[2] = { -1, -1 };

	pthread_mutex_lock(&fc_lock);
	e = fc_cap ? fc_find(lf, h) : NULL;
	if (e)
		fc_unhash(e, &close_fd[0], &put[0]);
	e = fc_cap ? fc_slot_alloc(&close_fd[1], &put[1]) : NULL;
	if (e) {
		unsigned b = fc_bucket(lf, h);

		e->fs = lf;
		atomic_fetch_add(&lf->refs, 1);
		e->key = *h;
		e->fd = fd;
		e->rdwr = rdwr;
		e->refs = 1;
		e->hashed = true;
		e->by_handle = true; /* only file_open_handle caches; under fc_lock, as the entry is shared */
		e->hnext = fc_hash[b];
		fc_hash[b] = e;
		fc_lru_push(e);
		*out = e;
	}
	pthread_mutex_unlock(&fc_lock);
	for (unsigned i = 0; i < 2; i++)
		fc_release(close_fd[i], put[i]);
}

/* A cached file that turns out unlinked: no later open may return it. */
static void fc_forget(struct be_file *f)
{
	struct local_fs *put = NULL;
	int close_fd = -1;

	if (!f->cached)
		return;
	pthread_mutex_lock(&fc_lock);
	if (f->hashed)
		fc_unhash(f, &close_fd, &put); /* refs > 0 here: nothing to release */
	pthread_mutex_unlock(&fc_lock);
	fc_release(close_fd, put);
}

static int fc_lookup(struct local_fs *lf, const struct be_handle *h, unsigned flags, struct be_file **out)
{
	struct be_file *e;

	*out = NULL;
	pthread_mutex_lock(&fc_lock);
	e = fc_cap ? fc_find(lf, h) : NULL;
	if (e && (e->rdwr || !(flags & BE_OPEN_WRITE))) {
		e->refs++;
		fc_lru_unlink(e);
		fc_lru_push(e);
		*out = e;
	}
	pthread_mutex_unlock(&fc_lock);
	return *out ? 0 : ENOENT;
}

int local_file_open_handle(struct be_fs *fs, const struct be_handle *h, unsigned flags, struct be_file **out)
{
	struct local_fs *lf = local_fs(fs);
	struct be_obj o = BE_OBJ_INIT;
	struct stat st;
	bool rdwr;
	int fd, err;

	if (fc_lookup(lf, h, flags, out) != 0) {
		err = local_open_handle(fs, h, &o, NULL);
		if (err)
			return err;
		err = fstat(local_fd(&o), &st) < 0 ? errno : fc_reopen(local_fd(&o), &st, flags, false, &fd, &rdwr);
		local_close(local_fd(&o));
		if (err)
			return err;
		fc_insert(lf, h, fd, rdwr, out);
		if (!*out) {
			if ((err = fc_new_uncached(lf, fd, rdwr, out)) != 0)
				return err;
			/* ours alone (a cached entry got it in fc_insert, under fc_lock: other threads
			 * share it): unlinked since it was opened is local_file_check's ESTALE at its I/O */
			(*out)->by_handle = true;
		}
	}
	return 0;
}

void local_fcache_drop_idle(struct local_fs *lf, int fd)
{
	struct local_fs *put = NULL;
	struct be_handle h;
	struct be_file *e;
	int close_fd = -1;

	if (local_handle_at(fd, "", AT_EMPTY_PATH, &h) != 0)
		return;
	pthread_mutex_lock(&fc_lock);
	e = fc_cap ? fc_find(lf, &h) : NULL;
	if (e && e->refs == 0)
		fc_unhash(e, &close_fd, &put);
	pthread_mutex_unlock(&fc_lock);
	fc_release(close_fd, put);
}

int local_file_check(struct be_file *f, const struct stat *st)
{
	if (!f->by_handle || st->st_nlink != 0)
		return 0;
	fc_forget(f); /* no later open by handle may return it (NFSv3 STALE) */
	return ESTALE;
}

void local_file_get(struct be_fs *fs, struct be_file *f)
{
	(void)fs;
	pthread_mutex_lock(&fc_lock);
	f->refs++;
	pthread_mutex_unlock(&fc_lock);
}

void local_file_put(struct be_fs *fs, struct be_file *f)
{
	struct local_fs *put = NULL;
	int close_fd = -1;
	bool free_it = false;

	(void)fs;
	pthread_mutex_lock(&fc_lock);
	if (--f->refs == 0) {
		if (!f->cached) {
			close_fd = f->fd;
			put = f->fs;
			free_it = true;
		} else if (!f->hashed) {
			fc_slot_free(f, &close_fd, &put);
		}
	}
	pthread_mutex_unlock(&fc_lock);
	if (free_it)
		free(f);
	fc_release(close_fd, put);
}

int local_file_getattr(struct be_fs *fs, struct be_file *f, struct be_attr *out)
{
	struct stat st;

	(void)fs;
	if (fstat(f->fd, &st) < 0)
		return errno;
	local_attr_from_stat(out, &st);
	return 0;
}

void local_fcache_purge(struct local_fs *lf)
{
	struct local_fs *puts[64];
	int fds[64];
	unsigned n;
	bool more;

	do {
		struct be_file *e, *prev;

		n = 0;
		more = false;
		pthread_mutex_lock(&fc_lock);
		for (e = fc_lru_tail; e; e = prev) {
			prev = e->lru_prev;
			if (lf && e->fs != lf)
				continue;
			if (n == 64) {
				more = true;
				break;
			}
			fc_unhash(e, &fds[n], &puts[n]);
			n++;
		}
		pthread_mutex_unlock(&fc_lock);
		for (unsigned i = 0; i < n; i++)
			fc_release(fds[i], puts[i]);
	} while (more);
}

void local_fcache_shutdown(void)
{
	local_fcache_purge(NULL);
	pthread_mutex_lock(&fc_lock);
	free(fc_slots);
	free(fc_hash);
	fc_slots = NULL;
	fc_hash = NULL;
	fc_cap = 0;
	fc_free = NULL;
	fc_lru_head = fc_lru_tail = NULL;
	pthread_mutex_unlock(&fc_lock);
}
