/*
 * ceph_io.c - data and locks of the "ceph" backend: open files (struct
 * be_file: an Fh of this instance's mount, reference counted), a small cache
 * of them by handle for stateless NFSv3 I/O, READ/WRITE straight between
 * libcephfs and the caller's iovecs (ceph_ll_readv/writev: no copy of ours),
 * COMMIT as ceph_ll_fsync, and byte-range locks as Ceph's POSIX locks
 * (ceph_ll_setlk/getlk) so the MDS enforces them between every client of the
 * file system: other rnfsd instances, kernel and FUSE clients.
 *
 * Files are opened as the server, read-write when the file allows it, else
 * read-only. Ceph drops a client's POSIX locks when the Fh they were taken
 * through is closed: a caller holding locks keeps its be_file referenced.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/ceph/ceph.h"

/* iovecs a READ is clamped to the file's size with, on the stack */
#define CEPH_IOV_MAX 64u
/* Lock owners: the owner id goes to Ceph with its top bit set (as the kernel client marks
 * non-pid owners) and its low bits as l_pid, so owners differ whichever of the two Ceph's
 * lock state compares (with 16.2.15 the owner alone already does: tests/ceph). */
#define CEPH_LOCK_OWNER_BIT (1ull << 63)

static void ceph_file_free(struct ceph_file *f)
{
	struct ceph_fs *cf = f->cf;

	ceph_rel_close(cf, f->fh);
	ceph_rel_put(cf, f->in);
	free(f);
	ceph_fs_put(cf);
}

void cephbe_file_get(struct be_fs *fs, struct be_file *f)
{
	(void)fs;
	atomic_fetch_add(&ceph_file(f)->refs, 1);
}

void cephbe_file_put(struct be_fs *fs, struct be_file *f)
{
	(void)fs;
	if (atomic_fetch_sub(&ceph_file(f)->refs, 1) == 1)
		ceph_file_free(ceph_file(f));
}

/* A new open file of in (takes in's reference on success). */
static int ceph_file_new(struct ceph_fs *cf, struct Inode *in, const struct ceph_statx *stx, unsigned flags,
			 struct ceph_file **out)
{
	struct ceph_file *f;
	int r;

	if (S_ISDIR(stx->stx_mode))
		return EISDIR;
	if (!S_ISREG(stx->stx_mode))
		return EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return ENOMEM;
	/* Read-only unless writing is asked for: an open for writing is an MDS
	 * journal entry (it waits for the OSDs), an open for reading is not. */
	f->writable = stx->stx_dev == CEPH_NOSNAP && (flags & BE_OPEN_WRITE);
	r = f->writable ? ceph_ll_open(cf->cmount, in, O_RDWR, &f->fh, cf->server) : -EROFS;
	if (r < 0) {
		f->writable = false;
		if (flags & BE_OPEN_WRITE) {
			free(f);
			return ceph_err(r);
		}
		r = ceph_ll_open(cf->cmount, in, O_RDONLY, &f->fh, cf->server);
	}
	if (r < 0) {
		free(f);
		return ceph_err(r);
	}
	atomic_init(&f->refs, 1);
	atomic_fetch_add(&cf->refs, 1);
	f->cf = cf;
	f->in = in;
	f->ino = stx->stx_ino;
	f->snap = stx->stx_dev;
	*out = f;
	return 0;
}

int cephbe_file_open(struct be_fs *fs, const struct be_obj *o, unsigned flags, struct be_file **out)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct be_obj dup = BE_OBJ_INIT;
	struct ceph_statx stx;
	struct ceph_file *f;
	int err;

	err = ceph_err(ceph_ll_getattr(cf->cmount, ceph_in(o), &stx, CEPH_WANT, AT_SYMLINK_NOFOLLOW, cf->server));
	if (!err)
		err = fs->ops->obj_dup(fs, o, &dup);
	if (!err)
		err = ceph_file_new(cf, ceph_in(&dup), &stx, flags, &f);
	if (err) {
		be_obj_put(fs, &dup);
		return err;
	}
	*out = (struct be_file *)f;
	return 0;
}

static unsigned ceph_fcache_slot(uint64_t ino, uint64_t snap)
{
	uint64_t x = (ino ^ (snap << 17)) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(x >> 56) % CEPH_FCACHE_SLOTS;
}

/* A cached file still linked (the cache keeps it open: a removed one would never go). */
static bool ceph_fcache_live(struct ceph_fs *cf, struct ceph_file *f)
{
	struct ceph_statx stx;

	return ceph_ll_getattr(cf->cmount, f->in, &stx, CEPH_STATX_NLINK, 0, cf->server) == 0 && stx.stx_nlink > 0;
}

/* The cached file for (ino, snap) with a new reference, or NULL (a stale one is dropped). */
static struct ceph_file *ceph_fcache_find(struct ceph_fs *cf, uint64_t ino, uint64_t snap, unsigned flags)
{
	unsigned slot = ceph_fcache_slot(ino, snap);
	struct ceph_file *f, *drop = NULL;

	pthread_mutex_lock(&cf->fcache_lock);
	f = cf->fcache[slot];
	if (f && (f->ino != ino || f->snap != snap || ((flags & BE_OPEN_WRITE) && !f->writable)))
		f = NULL;
	if (f)
		atomic_fetch_add(&f->refs, 1);
	pthread_mutex_unlock(&cf->fcache_lock);
	if (f && !ceph_fcache_live(cf, f)) {
		pthread_mutex_lock(&cf->fcache_lock);
		if (cf->fcache[slot] == f) {
			cf->fcache[slot] = NULL;
			drop = f;
		}
		pthread_mutex_unlock(&cf->fcache_lock);
		if (drop)
			cephbe_file_put(&cf->pub, (struct be_file *)drop);
		cephbe_file_put(&cf->pub, (struct be_file *)f);
		return (struct ceph_file *)-1;
	}
	return f;
}

static void ceph_fcache_insert(struct ceph_fs *cf, struct ceph_file *f)
{
	unsigned slot = ceph_fcache_slot(f->ino, f->snap);
	struct ceph_file *old;

	atomic_fetch_add(&f->refs, 1);
	pthread_mutex_lock(&cf->fcache_lock);
	old = cf->fcache[slot];
	cf->fcache[slot] = f;
	pthread_mutex_unlock(&cf->fcache_lock);
	if (old)
		cephbe_file_put(&cf->pub, (struct be_file *)old);
}

void cephbe_fcache_flush(struct ceph_fs *cf)
{
	for (unsigned i = 0; i < CEPH_FCACHE_SLOTS; i++) {
		struct ceph_file *f;

		pthread_mutex_lock(&cf->fcache_lock);
		f = cf->fcache[i];
		cf->fcache[i] = NULL;
		pthread_mutex_unlock(&cf->fcache_lock);
		if (f)
			cephbe_file_put(&cf->pub, (struct be_file *)f);
	}
}

int cephbe_file_open_handle(struct be_fs *fs, const struct be_handle *h, unsigned flags, struct be_file **out)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct ceph_file *f;
	struct ceph_statx stx;
	struct Inode *in;
	uint64_t ino, snap;
	int err = ceph_handle_decode(h, &ino, &snap);

	if (err)
		return err;
	f = ceph_fcache_find(cf, ino, snap, flags);
	if (f == (struct ceph_file *)-1)
		return ESTALE;
	if (!f) {
		err = ceph_inode_by_handle(cf, ino, snap, &in, &stx);
		if (!err) {
			err = ceph_file_new(cf, in, &stx, flags, &f);
			if (err)
				ceph_rel_put(cf, in);
		}
		if (err)
			return err;
		ceph_fcache_insert(cf, f);
	}
	*out = (struct be_file *)f;
	return 0;
}

int cephbe_file_getattr(struct be_fs *fs, struct be_file *f, struct be_attr *out)
{
	return ceph_getattr_in(ceph_fs(fs), ceph_file(f)->in, out);
}

/* BE_IO_CHECK_ACCESS as knfsd: the owner may, else the mode's r (or x, to read) / w bits. */
static int ceph_io_access(struct ceph_fs *cf, const struct be_cred *cr, struct ceph_file *f, bool write)
{
	struct ceph_statx stx;
	uint32_t want = write ? BE_ACCESS_MODIFY : BE_ACCESS_READ | BE_ACCESS_EXECUTE;
	int r = ceph_ll_getattr(cf->cmount, f->in, &stx, CEPH_STATX_MODE | CEPH_STATX_UID | CEPH_STATX_GID, 0,
				cf->server);

	if (r < 0)
		return ceph_err(r);
	if (write && !f->writable)
		return EROFS;
	if (cr->uid == stx.stx_uid && cr->uid != 0)
		return 0;
	return ceph_mode_access(&stx, cr, want) ? 0 : EACCES;
}

static size_t ceph_iov_total(const struct iovec *iov, unsigned iovcnt)
{
	size_t n = 0;

	for (unsigned i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* iov limited to its first len bytes, into out (at most CEPH_IOV_MAX entries); the count, or 0 if too many. */
static unsigned ceph_iov_clamp(const struct iovec *iov, unsigned iovcnt, size_t len, struct iovec *out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < iovcnt && len > 0; i++) {
		if (n == CEPH_IOV_MAX)
			return 0;
		out[n] = iov[i];
		if (out[n].iov_len > len)
			out[n].iov_len = len;
		len -= out[n].iov_len;
		n++;
	}
	return n;
}

int cephbe_read(struct be_fs *fs, const struct be_cred *cr, struct be_file *bf, unsigned flags, uint64_t offset,
		const struct iovec *iov, unsigned iovcnt, size_t *done, bool *eof, struct be_attr *post)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct ceph_file *f = ceph_file(bf);
	size_t want = ceph_iov_total(iov, iovcnt);
	struct iovec civ[CEPH_IOV_MAX];
	unsigned n;
	struct be_attr a;
	int64_t r = 0;
	int err = 0;

	*done = 0;
	*eof = false;
	if ((flags & BE_IO_CHECK_ACCESS) && (err = ceph_io_access(cf, cr, f, false)))
		return err;
	if (offset > INT64_MAX || iovcnt > INT32_MAX)
		return EINVAL;
	/* The size first, and no read past it: libcephfs probing for the end of a
	 * file another client has open for writing waits for that client's caps. */
	err = ceph_getattr_in(cf, f->in, &a);
	if (err)
		return err;
	if (offset + want > a.size)
		want = offset < a.size ? a.size - offset : 0;
	n = want ? ceph_iov_clamp(iov, iovcnt, want, civ) : 0;
	if (want)
		r = n ? ceph_ll_readv(cf->cmount, f->fh, civ, (int)n, (int64_t)offset) :
			ceph_ll_readv(cf->cmount, f->fh, iov, (int)iovcnt, (int64_t)offset);
	if (r < 0)
		return ceph_io_err(cf, (int)r);
	*done = (size_t)r;
	*eof = offset + *done >= a.size;
	if (post)
		*post = a;
	return 0;
}

int cephbe_write(struct be_fs *fs, const struct be_cred *cr, struct be_file *bf, unsigned flags, uint64_t offset,
	       const struct iovec *iov, unsigned iovcnt, size_t *done, struct be_attr *pre, struct be_attr *post)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct ceph_file *f = ceph_file(bf);
	int64_t r;
	int err = 0;

	*done = 0;
	if ((flags & BE_IO_CHECK_ACCESS) && (err = ceph_io_access(cf, cr, f, true)))
		return err;
	if (!f->writable)
		return EBADF;
	if (offset > INT64_MAX || iovcnt > INT32_MAX)
		return EINVAL;
	if (pre)
		(void)ceph_getattr_in(cf, f->in, pre);
	/* libcephfs asserts on an empty write (Striper: len > 0): nothing to do */
	r = ceph_iov_total(iov, iovcnt) ? ceph_ll_writev(cf->cmount, f->fh, iov, (int)iovcnt, (int64_t)offset) : 0;
	if (r < 0)
		return ceph_io_err(cf, (int)r);
	*done = (size_t)r;
	/* RFC 1813 §3.3.7: DATA_SYNC / FILE_SYNC writes are on stable storage before the reply */
	if (flags & (BE_IO_DSYNC | BE_IO_FSYNC))
		err = ceph_io_err(cf, ceph_ll_fsync(cf->cmount, f->fh, !(flags & BE_IO_FSYNC)));
	if (post)
		(void)ceph_getattr_in(cf, f->in, post);
	return err;
}

int cephbe_commit(struct be_fs *fs, struct be_file *bf, uint64_t offset, uint64_t count, struct be_attr *pre,
		struct be_attr *post)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct ceph_file *f = ceph_file(bf);
	int err;

	(void)offset;
	(void)count; /* libcephfs flushes the whole file */
	if (pre)
		(void)ceph_getattr_in(cf, f->in, pre);
	err = ceph_io_err(cf, ceph_ll_fsync(cf->cmount, f->fh, 0));
	if (post)
		(void)ceph_getattr_in(cf, f->in, post);
	return err;
}

int cephbe_allocate(struct be_fs *fs, const struct be_cred *cr, struct be_file *bf, uint64_t offset,
		  uint64_t length, bool deallocate)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct ceph_file *f = ceph_file(bf);
	int err = ceph_io_access(cf, cr, f, true);

	if (err)
		return err;
	if (offset > INT64_MAX || length > INT64_MAX)
		return EINVAL;
	return ceph_err(ceph_ll_fallocate(cf->cmount, f->fh, deallocate ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE : 0,
					  (int64_t)offset, (int64_t)length));
}

int cephbe_seek(struct be_fs *fs, struct be_file *bf, uint64_t offset, enum be_seek_what what, uint64_t *result)
{
	off_t r;

	if (offset > INT64_MAX)
		return ENXIO;
	r = ceph_ll_lseek(ceph_fs(fs)->cmount, ceph_file(bf)->fh, (off_t)offset,
			  what == BE_SEEK_DATA ? SEEK_DATA : SEEK_HOLE);
	if (r < 0)
		return ceph_err((int)r);
	*result = (uint64_t)r;
	return 0;
}

/* ---- byte-range locks ---- */

static void cephbe_flock(struct flock *fl, short type, const struct be_lock *lk, uint64_t owner)
{
	memset(fl, 0, sizeof(*fl));
	fl->l_type = type;
	fl->l_whence = SEEK_SET;
	fl->l_start = lk && lk->offset <= INT64_MAX ? (off_t)lk->offset : 0;
	fl->l_len = lk && lk->length <= INT64_MAX ? (off_t)lk->length : 0;
	fl->l_pid = (pid_t)(owner & 0x7fffffff);
}

int cephbe_lock_test(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk, bool *conflict,
		   struct be_lock_conflict *holder)
{
	struct flock fl;
	int r;

	if (lk->offset > INT64_MAX)
		return EINVAL;
	cephbe_flock(&fl, lk->type == BE_LOCK_WRITE ? F_WRLCK : F_RDLCK, lk, owner);
	r = ceph_ll_getlk(ceph_fs(fs)->cmount, ceph_file(f)->fh, &fl, owner | CEPH_LOCK_OWNER_BIT);
	if (r < 0)
		return ceph_err(r);
	*conflict = fl.l_type != F_UNLCK;
	if (*conflict && holder) {
		holder->lock.type = fl.l_type == F_WRLCK ? BE_LOCK_WRITE : BE_LOCK_READ;
		holder->lock.offset = (uint64_t)fl.l_start;
		holder->lock.length = (uint64_t)fl.l_len;
		holder->owner = 0; /* Ceph does not say whose (any client of the file system) */
	}
	return 0;
}

int cephbe_lock_set(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk)
{
	struct flock fl;
	int r;

	if (lk->offset > INT64_MAX)
		return EINVAL;
	cephbe_flock(&fl, lk->type == BE_LOCK_WRITE ? F_WRLCK : F_RDLCK, lk, owner);
	r = ceph_ll_setlk(ceph_fs(fs)->cmount, ceph_file(f)->fh, &fl, owner | CEPH_LOCK_OWNER_BIT, 0);
	return r == -EWOULDBLOCK || r == -EACCES ? EAGAIN : ceph_err(r);
}

int cephbe_lock_unset(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk)
{
	struct flock fl;

	if (lk->offset > INT64_MAX)
		return EINVAL;
	cephbe_flock(&fl, F_UNLCK, lk, owner);
	return ceph_err(ceph_ll_setlk(ceph_fs(fs)->cmount, ceph_file(f)->fh, &fl, owner | CEPH_LOCK_OWNER_BIT, 0));
}

/* Not queued to the release thread: a later lock_set of the same owner on the same file would
 * race with the queued whole-file unlock and could be undone by it. It runs on the worker, ungated
 * (it cannot be refused), and needs only the MDS. */
void cephbe_lock_owner_release(struct be_fs *fs, struct be_file *f, uint64_t owner)
{
	struct flock fl;

	cephbe_flock(&fl, F_UNLCK, NULL, owner);
	(void)ceph_ll_setlk(ceph_fs(fs)->cmount, ceph_file(f)->fh, &fl, owner | CEPH_LOCK_OWNER_BIT, 0);
}
