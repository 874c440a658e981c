/*
 * nfs3_proc_io.c - data procedures: READLINK (RFC 1813 §3.3.5), READ
 * (§3.3.6), WRITE (§3.3.7), COMMIT (§3.3.21).
 *
 * Zero copy: READ preads straight into the call's payload area and hands it
 * to rpc_enc_ddp() (a Write chunk over RDMA, a writev segment over TCP);
 * WRITE pwrites straight from where rpc_dec_ddp() found the data (a Read
 * chunk's registered buffer, or the received message). Files come from the
 * open-file cache (fcache.c) opened as root; each call checks permission as
 * the caller (owner override as knfsd) and runs the I/O as the caller, so
 * the kernel clears set-id bits on writes by non-owners.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "nfs/nfs_priv.h"

uint8_t nfs3_write_verf[NFS3_WRITEVERFSIZE];

/* §3.3.5 */
enum rpc_proc_status nfs3_proc_readlink(struct rpc_call *c)
{
	struct nfs3_fh_args a;
	struct nfs3_attr attr = { 0 };
	struct nfs3_call nc;
	struct stat st;
	uint32_t status, cap = 0;
	ssize_t n = 0;
	char *buf = NULL;
	int fd = -1;

	if (!nfs3_dec_fh_args(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_call_open(&nc, &a.fh, &fd, &st);
	if (status == NFS3_OK) {
		nfs3_attr_set(&attr, &st, nc.exp->id);
		if (!S_ISLNK(st.st_mode))
			status = NFS3ERR_INVAL; /* §3.3.5: not a symbolic link */
	}
	if (status == NFS3_OK) {
		buf = nfs3_bulk_buf(c, PATH_MAX, &cap);
		if (!buf || cap == 0)
			status = NFS3ERR_SERVERFAULT;
	}
	if (status == NFS3_OK) {
		n = readlinkat(fd, "", buf, cap);
		if (n < 0)
			status = nfs_errno_to_nfsstat3(errno);
	}
	nfs3_enc_status(c, status);
	nfs3_enc_post_op_attr(&c->res, &attr);
	if (status == NFS3_OK)
		rpc_enc_ddp(c, buf, (uint32_t)n); /* RFC 8267 §4.3: may travel in a Write chunk */
	nfs_fd_close(fd);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

/* Cached regular file for a READ/WRITE/COMMIT handle; rejects a file unlinked meanwhile. */
static uint32_t nfs3_io_open(struct nfs3_call *nc, const struct nfs_fh *fh, bool write, struct nfs_file *f,
			     struct stat *st)
{
	struct nfs_fh_parts p;
	uint32_t status = nfs3_call_export(nc, fh, &p);

	if (status == NFS3_OK && write)
		status = nfs3_call_writable(nc);
	if (status == NFS3_OK)
		status = nfs_fcache_get(nc->exp, fh, &p, write, f);
	if (status != NFS3_OK)
		return status;
	if (fstat(f->fd, st) < 0) {
		status = nfs_errno_to_nfsstat3(errno);
	} else if (st->st_nlink == 0) {
		nfs_fcache_forget(f); /* gone: the cached fd must not answer as live */
		status = NFS3ERR_STALE;
	}
	if (status != NFS3_OK)
		nfs_fcache_put(f);
	return status;
}

static ssize_t nfs3_pread_full(int fd, uint8_t *buf, size_t count, off_t off)
{
	size_t done = 0;

	while (done < count) {
		ssize_t n = pread(fd, buf + done, count - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return done ? (ssize_t)done : -1;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* §3.3.6 */
enum rpc_proc_status nfs3_proc_read(struct rpc_call *c)
{
	struct nfs3_read_args a;
	struct nfs3_attr attr = { 0 };
	struct nfs3_call nc;
	struct nfs_file f = { .fd = -1 };
	struct stat st;
	uint32_t status, count = 0;
	uint8_t *buf = NULL;
	ssize_t n = 0;
	bool eof = false;

	if (!nfs3_dec_read(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_io_open(&nc, &a.fh, false, &f, &st);
	if (status == NFS3_OK) {
		nfs3_attr_set(&attr, &st, nc.exp->id);
		status = nfs3_call_as_caller(&nc);
	}
	if (status == NFS3_OK && !nfs3_may(&nc, f.fd, &st, R_OK))
		status = NFS3ERR_ACCES;
	if (status == NFS3_OK && a.offset > (uint64_t)INT64_MAX)
		status = NFS3ERR_INVAL;
	if (status == NFS3_OK) {
		/* §3.3.6: the server may return fewer bytes than asked; never more than rtmax */
		count = a.count < NFS3_MAX_IO ? a.count : NFS3_MAX_IO;
		buf = nfs3_bulk_buf(c, count, &count);
		if (!buf && count)
			status = NFS3ERR_SERVERFAULT;
	}
	if (status == NFS3_OK && count) {
		n = nfs3_pread_full(f.fd, buf, count, (off_t)a.offset);
		if (n < 0)
			status = nfs_errno_to_nfsstat3(errno);
	}
	if (status == NFS3_OK) {
		nfs3_attr_fd(&attr, f.fd, nc.exp->id);
		eof = (uint64_t)n < count || (attr.valid && a.offset + (uint64_t)n >= (uint64_t)attr.st.st_size);
	}
	nfs3_enc_status(c, status);
	nfs3_enc_post_op_attr(&c->res, &attr);
	if (status == NFS3_OK) {
		xdr_enc_u32(&c->res, (uint32_t)n);
		xdr_enc_bool(&c->res, eof);
		if (n > 0)
			rpc_enc_ddp(c, buf, (uint32_t)n); /* RFC 8267 §4.3: READ data may travel in a Write chunk */
		else
			xdr_enc_u32(&c->res, 0); /* empty opaque: nothing to move out of band */
	}
	if (f.fd >= 0)
		nfs_fcache_put(&f);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

static ssize_t nfs3_pwrite_full(int fd, const uint8_t *data, size_t count, off_t off, int flags)
{
	size_t done = 0;

	while (done < count) {
		struct iovec iov = { (void *)(data + done), count - done };
		ssize_t n = pwritev2(fd, &iov, 1, off + (off_t)done, flags);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* §3.3.7 */
enum rpc_proc_status nfs3_proc_write(struct rpc_call *c)
{
	struct nfs3_write_args a;
	struct nfs3_wcc wcc = { 0 };
	struct nfs3_call nc;
	struct nfs_file f = { .fd = -1 };
	struct stat st;
	uint32_t status, committed = NFS3_UNSTABLE;
	ssize_t n = 0;
	int flags = 0;

	if (!nfs3_dec_write(c, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_io_open(&nc, &a.fh, true, &f, &st);
	if (status == NFS3_OK) {
		nfs3_wcc_pre(&wcc, &st);
		status = nfs3_call_as_caller(&nc);
	}
	if (status == NFS3_OK && !nfs3_may(&nc, f.fd, &st, W_OK))
		status = NFS3ERR_ACCES;
	/* §3.3.7: count is the number of bytes in data; more than was sent is malformed */
	if (status == NFS3_OK && a.count > a.len)
		status = NFS3ERR_INVAL;
	if (status == NFS3_OK && a.offset > (uint64_t)INT64_MAX - a.count)
		status = NFS3ERR_FBIG;
	if (status == NFS3_OK) {
		committed = a.stable;
		/* exports(5) "async": stability is not honoured (as knfsd, at the admin's risk) */
		if (nc.opts->sync && a.stable == NFS3_FILE_SYNC)
			flags = RWF_SYNC;
		else if (nc.opts->sync && a.stable == NFS3_DATA_SYNC)
			flags = RWF_DSYNC;
		n = nfs3_pwrite_full(f.fd, a.data, a.count, (off_t)a.offset, flags);
		if (n < 0)
			status = nfs_errno_to_nfsstat3(errno);
	}
	if (f.fd >= 0)
		nfs3_wcc_post_fd(&wcc, f.fd, nc.exp->id);
	nfs3_enc_status(c, status);
	nfs3_enc_wcc(&c->res, &wcc);
	if (status == NFS3_OK) {
		xdr_enc_u32(&c->res, (uint32_t)n);
		xdr_enc_u32(&c->res, committed);
		xdr_enc_fixed(&c->res, nfs3_write_verf, NFS3_WRITEVERFSIZE);
	}
	if (f.fd >= 0)
		nfs_fcache_put(&f);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

/* §3.3.21: flush earlier UNSTABLE writes; the verifier tells the client whether they survived. */
enum rpc_proc_status nfs3_proc_commit(struct rpc_call *c)
{
	struct nfs3_commit_args a;
	struct nfs3_wcc wcc = { 0 };
	struct nfs3_call nc;
	struct nfs_file f = { .fd = -1 };
	struct stat st;
	uint32_t status;

	if (!nfs3_dec_commit(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_io_open(&nc, &a.fh, false, &f, &st);
	if (status == NFS3_OK) {
		nfs3_wcc_pre(&wcc, &st);
		if (nc.opts->sync && fsync(f.fd) < 0)
			status = nfs_errno_to_nfsstat3(errno);
		nfs3_wcc_post_fd(&wcc, f.fd, nc.exp->id);
	}
	nfs3_enc_status(c, status);
	nfs3_enc_wcc(&c->res, &wcc);
	if (status == NFS3_OK)
		xdr_enc_fixed(&c->res, nfs3_write_verf, NFS3_WRITEVERFSIZE);
	if (f.fd >= 0)
		nfs_fcache_put(&f);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}
