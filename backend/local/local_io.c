/*
 * local_io.c - data of the local backend: read, write, commit, allocate,
 * seek, copy, clone, on the fds of fcache.c.
 *
 * Zero copy: read() preads straight into the caller's iovecs (the RPC
 * layer's payload area: a Write chunk's source over RDMA, a writev segment
 * over TCP); read_pipe() splices the page cache's pages into the TCP
 * transport's pipe by reference (large READs over TCP); write() pwrites straight from the caller's (a Read chunk's
 * registered buffer, or the received message). Files are opened as root;
 * the I/O itself runs as the caller, so the kernel applies quotas and clears
 * set-id bits on writes by non-owners, and with BE_IO_CHECK_ACCESS the
 * caller's permission is checked first (owner override and read-if-exec as
 * knfsd).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/uio.h>

#include "backend/local/local.h"
#include "core/loop.h"

#define LOCAL_IOV_MAX 16

static size_t local_iov_total(const struct iovec *iov, unsigned n)
{
	size_t t = 0;

	for (unsigned i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

/* Drop the first n bytes of a (cnt) iovecs, in place. */
static void local_iov_advance(struct iovec **iov, unsigned *cnt, size_t n)
{
	while (*cnt && n >= (*iov)->iov_len) {
		n -= (*iov)->iov_len;
		(*iov)++;
		(*cnt)--;
	}
	if (*cnt && n) {
		(*iov)->iov_base = (char *)(*iov)->iov_base + n;
		(*iov)->iov_len -= n;
	}
}

/*
 * May cr read the file, decided without switching to its identity (the
 * receiving thread must not)? true only where the kernel would say yes:
 * root (DAC override), the owner (local_may()'s owner override), or the
 * mode bits of the caller's class, read or execute (read-if-exec), when the
 * file has no POSIX ACL (local_may_here()).
 */
static bool local_may_read_here(const struct be_cred *cr, int fd, const struct stat *st)
{
	if (cr->uid == 0 || (S_ISREG(st->st_mode) && st->st_uid == cr->uid))
		return true;
	return local_may_here(cr, fd, st, S_IRUSR | S_IXUSR, 0);
}

/* Applies the caller and, with BE_IO_CHECK_ACCESS, checks it may (mode); st: the file's.
 * BE_IO_NOWAIT: no identity switch; a read the check cannot grant without one
 * is EWOULDBLOCK (the caller asks again where it may switch). */
static int local_io_as(const struct be_cred *cr, struct be_file *f, unsigned flags, int mode,
		       const struct stat *st)
{
	if (flags & BE_IO_NOWAIT)
		return mode == R_OK && (!(flags & BE_IO_CHECK_ACCESS) || local_may_read_here(cr, f->fd, st)) ? 0
														 : EWOULDBLOCK;
	int err = local_id_caller(cr);

	if (err)
		return err;
	if ((flags & BE_IO_CHECK_ACCESS) && !local_may(cr, f->fd, st, mode))
		return EACCES;
	return 0;
}

/* After a read of *done bytes (of total asked; cut: stopped short on purpose):
 * the attributes and whether the end of the file was reached. */
static void local_read_end(struct be_file *f, uint64_t offset, size_t done, size_t total, bool cut, int err,
			   bool *eof, struct be_attr *post)
{
	struct stat st;

	if (fstat(f->fd, &st) == 0) {
		if (post)
			local_attr_from_stat(post, &st);
		*eof = !err && ((done < total && !cut) || offset + done >= (uint64_t)st.st_size);
	} else if (post) {
		post->valid = 0;
	}
}

int local_read(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t offset,
	       const struct iovec *iov, unsigned iovcnt, size_t *done, bool *eof, struct be_attr *post)
{
	struct iovec v[LOCAL_IOV_MAX], *cur = v;
	size_t total = local_iov_total(iov, iovcnt);
	unsigned cnt = iovcnt;
	struct stat st;
	int err;

	(void)fs;
	*done = 0;
	*eof = false;
	if (iovcnt > LOCAL_IOV_MAX)
		return EINVAL;
	err = fstat(f->fd, &st) < 0 ? errno : local_file_check(f, &st);
	if (err)
		return err;
	err = local_io_as(cr, f, flags, R_OK, &st);
	if (!err && offset > (uint64_t)INT64_MAX)
		err = EINVAL;
	memcpy(v, iov, iovcnt * sizeof(*iov));
	/* RWF_NOWAIT: EAGAIN rather than waiting for the device (then answered as read so far). */
	int rwf = (flags & BE_IO_NOWAIT) && !local_fs(fs)->in_memory ? RWF_NOWAIT : 0;
	bool cut = false;

	while (!err && *done < total) {
		ssize_t n = preadv2(f->fd, cur, (int)cnt, (off_t)(offset + *done), rwf);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && rwf && errno == EAGAIN) {
			err = *done ? 0 : EWOULDBLOCK;
			cut = true;
			break;
		}
		if (n < 0) {
			err = *done ? 0 : errno; /* a partial read is answered as such */
			break;
		}
		if (n == 0)
			break;
		*done += (size_t)n;
		local_iov_advance(&cur, &cnt, (size_t)n);
		if (rwf && *done < total) {
			cut = true; /* RWF_NOWAIT reads what is in memory: the rest may not be */
			break;
		}
	}
	local_read_end(f, offset, *done, total, cut, err, eof, post);
	return err;
}

int local_read_pipe(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t offset,
		    size_t count, int pipe_fd, size_t *done, bool *eof, struct be_attr *post)
{
	struct stat st;
	bool cut = false;
	int err;

	*done = 0;
	*eof = false;
	if ((flags & BE_IO_NOWAIT) && !local_fs(fs)->in_memory)
		return EOPNOTSUPP; /* splice has no RWF_NOWAIT: read() takes what is in memory */
	err = fstat(f->fd, &st) < 0 ? errno : local_file_check(f, &st);
	if (!err)
		err = local_io_as(cr, f, flags, R_OK, &st);
	if (!err && offset > (uint64_t)INT64_MAX)
		err = EINVAL;
	while (!err && *done < count) {
		loff_t off = (loff_t)(offset + *done);
		ssize_t n = splice(f->fd, &off, pipe_fd, NULL, count - *done, SPLICE_F_NONBLOCK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			cut = true; /* the pipe is full: a short read */
			break;
		}
		if (n < 0) {
			/* EINVAL: a file system without splice; read() then */
			err = *done ? 0 : errno == EINVAL ? EOPNOTSUPP : errno;
			break;
		}
		if (n == 0)
			break;
		*done += (size_t)n;
	}
	local_read_end(f, offset, *done, count, cut, err, eof, post);
	return err;
}

static int local_write_flags(unsigned flags)
{
	if (flags & BE_IO_FSYNC)
		return RWF_SYNC;
	return flags & BE_IO_DSYNC ? RWF_DSYNC : 0;
}

/*
 * A write on the event-loop thread (BE_IO_NOWAIT; [rnfsd] uring-calls, tmpfs or ramfs): the
 * access check and the write as the caller through its io_uring personality (local_uring.c),
 * never an identity switch. BE_IO_CHECK_ACCESS: root and the owner may (local_may()'s owner
 * override, as knfsd); anyone else as the kernel says to an O_WRONLY open of the file with the
 * personality. EWOULDBLOCK, nothing written, where it cannot (a worker does it).
 */
static int local_write_here(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags,
			    uint64_t offset, const struct iovec *iov, unsigned iovcnt, const struct stat *st,
			    size_t *done)
{
#if HAVE_LIBURING
	struct local_ring *r = local_fs(fs)->in_memory ? local_ring_here() : NULL;
	char path[32];
	int rc;

	if (!r)
		return EWOULDBLOCK;
	if ((flags & BE_IO_CHECK_ACCESS) && cr->uid != 0 && st->st_uid != cr->uid) {
		local_fd_path(f->fd, path);
		rc = local_ring_openat(r, cr, AT_FDCWD, path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
		if (rc < 0)
			return -rc; /* EACCES; EWOULDBLOCK: a lease, or not run */
		close(rc);
	}
	rc = local_ring_pwritev(r, cr, f->fd, iov, iovcnt, offset, local_write_flags(flags));
	if (rc < 0)
		return -rc;
	*done = (size_t)rc;
	return rc == 0 && local_iov_total(iov, iovcnt) ? EIO : 0;
#else
	(void)fs, (void)cr, (void)f, (void)flags, (void)offset, (void)iov, (void)iovcnt, (void)st, (void)done;
	return EWOULDBLOCK;
#endif
}

int local_write(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t offset,
		const struct iovec *iov, unsigned iovcnt, size_t *done, struct be_attr *pre, struct be_attr *post)
{
	struct iovec v[LOCAL_IOV_MAX], *cur = v;
	size_t total = local_iov_total(iov, iovcnt);
	unsigned cnt = iovcnt;
	struct stat st;
	int err;

	(void)fs;
	*done = 0;
	if (pre)
		pre->valid = 0;
	if (iovcnt > LOCAL_IOV_MAX)
		return EINVAL;
	if (fstat(f->fd, &st) < 0)
		return errno;
	err = local_file_check(f, &st);
	if (err)
		return err;
	if (pre)
		local_attr_from_stat(pre, &st);
	local_watch_self(&st);
	bool big = offset > (uint64_t)INT64_MAX || total > (uint64_t)INT64_MAX - offset;
	if (flags & BE_IO_NOWAIT) {
		err = big ? EFBIG : local_write_here(fs, cr, f, flags, offset, iov, iovcnt, &st, done);
		local_attr_fd(post, f->fd);
		return err;
	}
	err = local_io_as(cr, f, flags, W_OK, &st);
	if (!err && big)
		err = EFBIG;
	memcpy(v, iov, iovcnt * sizeof(*iov));
	while (!err && *done < total) {
		ssize_t n = pwritev2(f->fd, cur, (int)cnt, (off_t)(offset + *done), local_write_flags(flags));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = *done ? 0 : n < 0 ? errno : EIO;
			break;
		}
		*done += (size_t)n;
		local_iov_advance(&cur, &cnt, (size_t)n);
	}
	local_attr_fd(post, f->fd);
	return err;
}

int local_commit(struct be_fs *fs, struct be_file *f, uint64_t offset, uint64_t count, struct be_attr *pre,
		 struct be_attr *post)
{
	int err;
	struct stat st;

	(void)offset; /* fsync is for the whole file: a superset of the range */
	(void)count;
	if (fstat(f->fd, &st) < 0)
		return errno;
	err = local_file_check(f, &st);
	if (err)
		return err;
	if (pre)
		local_attr_from_stat(pre, &st);
	/* the event-loop thread flushes only what never waits for a device ([rnfsd] uring-calls) */
	if (loop_is_loop_thread() && !local_fs(fs)->in_memory)
		return EWOULDBLOCK;
	local_id_server();
	err = fsync(f->fd) < 0 ? errno : 0;
	local_attr_fd(post, f->fd);
	return err;
}

int local_allocate(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, uint64_t offset, uint64_t length,
		   bool deallocate)
{
	int err = local_id_caller(cr);

	(void)fs;
	if (err)
		return err;
	if (offset > (uint64_t)INT64_MAX || length > (uint64_t)INT64_MAX - offset)
		return EFBIG;
	local_watch_self_fd(f->fd);
	if (fallocate(f->fd, deallocate ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE : 0, (off_t)offset,
		      (off_t)length) < 0)
		return errno;
	return 0;
}

int local_seek(struct be_fs *fs, struct be_file *f, uint64_t offset, enum be_seek_what what, uint64_t *result)
{
	off_t r;

	(void)fs;
	if (offset > (uint64_t)INT64_MAX)
		return ENXIO;
	/* The position of the shared fd moves; nothing here uses it (I/O is pread/pwrite). */
	r = lseek(f->fd, (off_t)offset, what == BE_SEEK_DATA ? SEEK_DATA : SEEK_HOLE);
	if (r < 0)
		return errno;
	*result = (uint64_t)r;
	return 0;
}

int local_copy(struct be_fs *fs, const struct be_cred *cr, struct be_file *src, uint64_t src_offset,
	       struct be_file *dst, uint64_t dst_offset, uint64_t count, uint64_t *copied)
{
	loff_t soff = (loff_t)src_offset, doff = (loff_t)dst_offset;
	struct stat st;
	ssize_t n;
	int err = local_id_caller(cr);

	(void)fs;
	*copied = 0;
	if (err)
		return err;
	if (src_offset > (uint64_t)INT64_MAX || dst_offset > (uint64_t)INT64_MAX)
		return EINVAL;
	if (count == 0) { /* to the end of src */
		if (fstat(src->fd, &st) < 0)
			return errno;
		count = (uint64_t)st.st_size > src_offset ? (uint64_t)st.st_size - src_offset : 0;
	}
	if (count == 0)
		return 0;
	local_watch_self_fd(dst->fd);
	n = copy_file_range(src->fd, &soff, dst->fd, &doff, count > SSIZE_MAX ? SSIZE_MAX : count, 0);
	if (n < 0)
		return errno;
	*copied = (uint64_t)n;
	return 0;
}

int local_clone(struct be_fs *fs, const struct be_cred *cr, struct be_file *src, uint64_t src_offset,
		struct be_file *dst, uint64_t dst_offset, uint64_t count)
{
	struct file_clone_range r = {
		.src_fd = src->fd, .src_offset = src_offset, .src_length = count, .dest_offset = dst_offset,
	};
	int err = local_id_caller(cr);

	(void)fs;
	if (err)
		return err;
	local_watch_self_fd(dst->fd);
	if (ioctl(dst->fd, FICLONERANGE, &r) < 0)
		return errno == ENOTTY ? EOPNOTSUPP : errno; /* EOPNOTSUPP, EXDEV: this fs cannot */
	return 0;
}
