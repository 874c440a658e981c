/*
 * fcache.c - a small cache of open regular files, so READ, WRITE and COMMIT
 * do not reopen a file by handle on every call.
 *
 * Keyed by the verified handle bytes without the MAC (export id + kernel
 * handle); the value is an fd opened as root with O_RDWR (or O_RDONLY when
 * the file cannot be opened for writing). Permission checks are made per
 * call by the procedure under the caller's identity (as knfsd's filecache).
 *
 * Bounded: `capacity` entries preallocated at init, in a hash table and an
 * LRU list; a get takes a reference, a put drops it; only unreferenced
 * entries are evicted. An entry that is forgotten (its file was unlinked:
 * st_nlink 0) or purged (exports replaced) is unhashed at once and its fd
 * closed when the last user puts it, so it never answers as live again.
 * When every entry is in use, the file is opened uncached for that call.
 * One mutex protects everything; it is never held across a system call
 * other than close() of an evicted fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfs/nfs_priv.h"
#include "nfs/siphash.h"

#define NFS_FCACHE_KEY_MAX (NFS3_FHSIZE - NFS_FH_MAC)

struct nfs_fcache_entry {
	uint8_t key[NFS_FCACHE_KEY_MAX];
	uint32_t klen;
	int fd;               /* -1: slot free */
	bool rdwr;
	bool hashed;          /* findable by get */
	unsigned refs;
	struct nfs_fcache_entry *hnext;            /* hash chain */
	struct nfs_fcache_entry *lru_prev, *lru_next; /* hashed entries, most recent first */
};

static pthread_mutex_t fc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nfs_fcache_entry *fc_slots;
static unsigned fc_cap;
static struct nfs_fcache_entry **fc_hash;
static unsigned fc_nbuckets;
static struct nfs_fcache_entry *fc_lru_head, *fc_lru_tail;
static struct nfs_fcache_entry *fc_free; /* chained through hnext */
static const uint8_t fc_hash_key[16] = "rnfsd-fcache-key";

void nfs_fcache_init(unsigned capacity)
{
	fc_cap = capacity;
	fc_nbuckets = 1;
	while (fc_nbuckets < capacity * 2)
		fc_nbuckets <<= 1;
	fc_slots = calloc(capacity ? capacity : 1, sizeof(*fc_slots));
	fc_hash = calloc(fc_nbuckets, sizeof(*fc_hash));
	if (!fc_slots || !fc_hash) {
		free(fc_slots);
		free(fc_hash);
		fc_slots = NULL;
		fc_hash = NULL;
		fc_cap = 0; /* every get opens uncached */
		return;
	}
	fc_free = NULL;
	for (unsigned i = 0; i < capacity; i++) {
		fc_slots[i].fd = -1;
		fc_slots[i].hnext = fc_free;
		fc_free = &fc_slots[i];
	}
}

static unsigned fc_bucket(const uint8_t *key, uint32_t klen)
{
	return (unsigned)siphash24(fc_hash_key, key, klen) & (fc_nbuckets - 1);
}

static void fc_lru_unlink(struct nfs_fcache_entry *e)
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

static void fc_lru_push(struct nfs_fcache_entry *e)
{
	e->lru_prev = NULL;
	e->lru_next = fc_lru_head;
	if (fc_lru_head)
		fc_lru_head->lru_prev = e;
	fc_lru_head = e;
	if (!fc_lru_tail)
		fc_lru_tail = e;
}

/* Unhash e (lock held). Returns the fd to close if nobody uses it, else -1. */
static int fc_unhash(struct nfs_fcache_entry *e)
{
	struct nfs_fcache_entry **pp = &fc_hash[fc_bucket(e->key, e->klen)];
	int fd = -1;

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	fc_lru_unlink(e);
	e->hashed = false;
	if (e->refs == 0) {
		fd = e->fd;
		e->fd = -1;
		e->hnext = fc_free;
		fc_free = e;
	}
	return fd;
}

static struct nfs_fcache_entry *fc_find(const uint8_t *key, uint32_t klen)
{
	struct nfs_fcache_entry *e = fc_hash[fc_bucket(key, klen)];

	while (e && (e->klen != klen || memcmp(e->key, key, klen) != 0))
		e = e->hnext;
	return e;
}

/* A free slot, evicting the least recently used idle entry if needed (lock held). */
static struct nfs_fcache_entry *fc_slot_alloc(int *close_fd)
{
	struct nfs_fcache_entry *e;

	*close_fd = -1;
	if (!fc_free) {
		for (e = fc_lru_tail; e && e->refs; e = e->lru_prev)
			;
		if (!e)
			return NULL;
		*close_fd = fc_unhash(e);
	}
	e = fc_free;
	fc_free = e->hnext;
	return e;
}

/* Open the file behind p as root: O_PATH first, so special files are never opened (a FIFO
 * would block, a tape device would rewind), then reopened through /proc for I/O. */
static uint32_t fc_open(const struct nfs_export *ex, const struct nfs_fh_parts *p, bool need_write,
			int *fd, bool *rdwr)
{
	struct stat st;
	char path[32];
	int pfd;
	uint32_t status = nfs_fh_open(ex->root_fd, p, O_PATH, &pfd, &st);

	if (status != NFS3_OK)
		return status;
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		/* RFC 1813 §3.3.6: READ of a directory is ISDIR; of other types INVAL */
		return S_ISDIR(st.st_mode) ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
	}
	nfs_fd_path(pfd, path);
	*rdwr = true;
	*fd = open(path, O_RDWR | O_CLOEXEC);
	if (*fd < 0 && !need_write && errno != EMFILE && errno != ENFILE) {
		*rdwr = false; /* read-only file system, ETXTBSY, immutable... */
		*fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	status = *fd < 0 ? nfs_errno_to_nfsstat3(errno) : NFS3_OK;
	close(pfd);
	return status;
}

uint32_t nfs_fcache_get(const struct nfs_export *ex, const struct nfs_fh *fh, const struct nfs_fh_parts *p,
			bool need_write, struct nfs_file *f)
{
	uint32_t klen = fh->len - NFS_FH_MAC;
	struct nfs_fcache_entry *e;
	uint32_t status;
	int fd, close_fd = -1, close_fd2 = -1;
	bool rdwr;

	pthread_mutex_lock(&fc_lock);
	e = fc_cap ? fc_find(fh->data, klen) : NULL;
	if (e && (e->rdwr || !need_write)) {
		e->refs++;
		fc_lru_unlink(e);
		fc_lru_push(e);
		pthread_mutex_unlock(&fc_lock);
		*f = (struct nfs_file){ .fd = e->fd, .rdwr = e->rdwr, .ent = e };
		return NFS3_OK;
	}
	pthread_mutex_unlock(&fc_lock);

	status = fc_open(ex, p, need_write, &fd, &rdwr);
	if (status != NFS3_OK)
		return status;
	*f = (struct nfs_file){ .fd = fd, .rdwr = rdwr, .ent = NULL };

	pthread_mutex_lock(&fc_lock);
	if (fc_cap) {
		e = fc_find(fh->data, klen);
		if (e)
			close_fd = fc_unhash(e); /* a read-only entry, or lost a race: ours replaces it */
		e = fc_slot_alloc(&close_fd2);
		if (e) {
			unsigned b = fc_bucket(fh->data, klen);

			memcpy(e->key, fh->data, klen);
			e->klen = klen;
			e->fd = fd;
			e->rdwr = rdwr;
			e->refs = 1;
			e->hashed = true;
			e->hnext = fc_hash[b];
			fc_hash[b] = e;
			fc_lru_push(e);
			f->ent = e;
		}
	}
	pthread_mutex_unlock(&fc_lock);
	if (close_fd >= 0)
		close(close_fd);
	if (close_fd2 >= 0)
		close(close_fd2);
	return NFS3_OK;
}

void nfs_fcache_put(struct nfs_file *f)
{
	struct nfs_fcache_entry *e = f->ent;
	int close_fd = -1;

	if (!e) {
		if (f->fd >= 0)
			close(f->fd);
		f->fd = -1;
		return;
	}
	pthread_mutex_lock(&fc_lock);
	if (--e->refs == 0 && !e->hashed) {
		close_fd = e->fd;
		e->fd = -1;
		e->hnext = fc_free;
		fc_free = e;
	}
	pthread_mutex_unlock(&fc_lock);
	if (close_fd >= 0)
		close(close_fd);
	f->fd = -1;
	f->ent = NULL;
}

void nfs_fcache_forget(struct nfs_file *f)
{
	int close_fd = -1;

	if (!f->ent)
		return;
	pthread_mutex_lock(&fc_lock);
	if (f->ent->hashed)
		close_fd = fc_unhash(f->ent); /* refs > 0 here: always -1 */
	pthread_mutex_unlock(&fc_lock);
	if (close_fd >= 0)
		close(close_fd);
}

void nfs_fcache_purge(void)
{
	int fds[64];
	unsigned n;

	do {
		n = 0;
		pthread_mutex_lock(&fc_lock);
		while (fc_lru_head && n < 64) {
			int fd = fc_unhash(fc_lru_head);
			if (fd >= 0)
				fds[n++] = fd;
		}
		pthread_mutex_unlock(&fc_lock);
		for (unsigned i = 0; i < n; i++)
			close(fds[i]);
	} while (n == 64);
}

void nfs_fcache_release(void)
{
	nfs_fcache_purge();
	pthread_mutex_lock(&fc_lock);
	free(fc_slots);
	free(fc_hash);
	fc_slots = NULL;
	fc_hash = NULL;
	fc_cap = 0;
	fc_free = NULL;
	pthread_mutex_unlock(&fc_lock);
}
