/*
 * nfs3_proc_io.c - data procedures: READLINK (RFC 1813 §3.3.5), READ
 * (§3.3.6), WRITE (§3.3.7), COMMIT (§3.3.21).
 *
 * Zero copy: READ has the backend read straight into the call's payload
 * area and hands it to rpc_enc_ddp() (a Write chunk over RDMA, a writev
 * segment over TCP); WRITE has it write straight from where rpc_dec_ddp()
 * found the data (a Read chunk's registered buffer, or the received
 * message). Files come from the backend by handle (cached there); each I/O
 * is checked and made as the caller (BE_IO_CHECK_ACCESS: owner override and
 * read-if-exec as knfsd). READ, WRITE and COMMIT on an export with pnfs=
 * count as a pNFS data server's (nfs/common/pnfs_ds.c).
 */
#include <limits.h>
#include <string.h>
#include <sys/uio.h>

#include "core/loop.h"
#include "nfs/v3/nfs3.h"

_Static_assert(NFS3_WRITEVERFSIZE == NFS_WRITE_VERF_SIZE, "writeverf3 is the shared write verifier");

/* §3.3.5 */
enum rpc_proc_status nfs3_readlink_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_fh_args *a = args;
	struct nfs3_readlink_res *r = res;
	struct be_obj o = BE_OBJ_INIT;
	struct nfs3_call nc;
	uint32_t cap = 0;
	size_t len = 0;
	char *buf = NULL;

	nfs3_call_begin(&nc, c);
	r->status = nfs3_call_open(&nc, &a->fh, &o, &r->attr);
	if (r->status == NFS3_OK && o.type != BE_LNK)
		r->status = NFS3ERR_INVAL; /* §3.3.5: not a symbolic link */
	if (r->status == NFS3_OK) {
		buf = nfs_bulk_buf(c, PATH_MAX, &cap);
		if (!buf || cap == 0)
			r->status = NFS3ERR_SERVERFAULT;
	}
	if (r->status == NFS3_OK)
		r->status = nfs3_stat(be_readlink(nc.fs, &nc.cred, &o, buf, cap, &len));
	r->path = buf;
	r->len = (uint32_t)len;
	r->fsid = nfs3_call_fsid(&nc);
	nfs3_call_put(&nc, &o);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
}

void nfs3_readlink_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_readlink_res *r = res;

	nfs3_enc_status(c, r->status);
	nfs3_enc_post_op_attr(&c->res, &r->attr, r->fsid);
	if (r->status == NFS3_OK)
		rpc_enc_ddp(c, r->path, r->len); /* RFC 8267 §4.3: may travel in a Write chunk */
}

/* Attributes after an I/O the backend could not report them for (it failed early): now's,
 * unless the file is gone (STALE). */
static void nfs3_file_attr_fill(struct nfs3_call *nc, struct be_file *f, uint32_t status, struct be_attr *a)
{
	if (f && status != NFS3ERR_STALE && !a->valid && be_file_getattr(nc->fs, f, a) != 0)
		a->valid = 0;
}

/* The backend's file for a READ/WRITE/COMMIT handle (ROFS first for a write). */
static uint32_t nfs3_io_open(struct nfs3_call *nc, const struct nfs_fh *fh, bool write, struct be_file **f)
{
	struct be_handle bh;
	uint32_t status = nfs3_call_export(nc, fh, &bh);

	if (status == NFS3_OK && write)
		status = nfs3_call_writable(nc);
	/* RFC 8881 §10.4.1: an NFSv4 client's delegation in the way (a write one
	 * for READ, any for WRITE) is recalled; JUKEBOX (try later) meanwhile, as knfsd. */
	if (status == NFS3_OK &&
	    nfs_deleg_recall(fh->data, fh->len, write ? NFS_DELEG_WRITE : NFS_DELEG_READ) != NFS_DELEG_CLEAR)
		status = NFS3ERR_JUKEBOX;
	/* RFC 8881 §12.5.5: a write by another client recalls the file's pNFS layouts (no wait) */
	if (status == NFS3_OK && write)
		nfs_layout_conflict(fh->data, fh->len,
				    nc->rpc && nc->rpc->conn ? (const struct sockaddr *)&nc->rpc->conn->peer : NULL);
	if (status == NFS3_OK)
		status = nfs3_stat(be_file_open_handle(nc->fs, &bh, write ? BE_OPEN_WRITE : BE_OPEN_READ, f));
	return status;
}

/*
 * READ's data into the call's payload pipe (r->piped), else into its payload
 * area (r->data): count bytes at most, *done read. EWOULDBLOCK/EOPNOTSUPP
 * with BE_IO_NOWAIT: it would wait (the caller declines to a worker).
 */
static int nfs3_read_data(struct nfs3_call *nc, struct be_file *f, unsigned flags, const struct nfs3_read_args *a,
			  uint32_t count, size_t *done, struct nfs3_read_res *r)
{
	struct rpc_call *c = nc->rpc;
	int err = nfs_read_piped(c, nc->fs, &nc->cred, f, flags, a->offset, count, done, &r->eof, &r->attr);

	if (err != EOPNOTSUPP) {
		r->piped = true;
		return err;
	}
	/* §3.3.6: the server may return fewer bytes than asked; never more than rtmax */
	uint8_t *buf = nfs_bulk_buf(c, count, &count);

	if (!buf && count)
		return BE_ESERVERFAULT;
	struct iovec iov = { buf, count };

	r->data = buf;
	return be_read(nc->fs, &nc->cred, f, flags, a->offset, &iov, 1, done, &r->eof, &r->attr);
}

/* §3.3.6 */
enum rpc_proc_status nfs3_read_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_read_args *a = args;
	struct nfs3_read_res *r = res;
	struct be_file *f = NULL;
	struct nfs3_call nc;
	size_t done = 0;

	/* RPC_RUN_INLINE_TRY: on the receiving thread only what waits for nothing. */
	bool here = loop_is_loop_thread();

	nfs3_call_begin(&nc, c);
	r->status = nfs3_io_open(&nc, &a->fh, false, &f);
	if (here && r->status != NFS3_OK) {
		if (f)
			be_file_put(nc.fs, f);
		nfs3_call_end(&nc);
		return RPC_PROC_WORKER; /* errors (and their attributes) on a worker, as before */
	}
	if (r->status == NFS3_OK) {
		uint32_t count = a->count < NFS3_MAX_IO ? a->count : NFS3_MAX_IO;
		int err = nfs3_read_data(&nc, f, BE_IO_CHECK_ACCESS | (here ? BE_IO_NOWAIT : 0), a, count, &done, r);

		if (here && (err == EWOULDBLOCK || err == EOPNOTSUPP)) {
			be_file_put(nc.fs, f);
			nfs3_call_end(&nc);
			return RPC_PROC_WORKER; /* not in memory, or needs the caller's identity */
		}
		r->status = nfs3_stat(err);
	}
	nfs3_file_attr_fill(&nc, f, r->status, &r->attr);
	r->count = (uint32_t)done;
	if (done)
		nfs_export_count_io(nc.exp, done, 0);
	nfs_pnfs_ds_count(nc.exp, NFS_DS_READ, r->status != NFS3_OK, done); /* a pNFS data server's */
	r->fsid = nfs3_call_fsid(&nc);
	if (f)
		be_file_put(nc.fs, f);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
}

void nfs3_read_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_read_res *r = res;

	nfs3_enc_status(c, r->status);
	nfs3_enc_post_op_attr(&c->res, &r->attr, r->fsid);
	if (r->status != NFS3_OK)
		return;
	xdr_enc_u32(&c->res, r->count);
	xdr_enc_bool(&c->res, r->eof);
	if (r->count > 0 && r->piped)
		rpc_enc_ddp_piped(c, r->count); /* TCP: sent from the pipe by splice */
	else if (r->count > 0)
		rpc_enc_ddp(c, r->data, r->count); /* RFC 8267 §4.3: READ data may travel in a Write chunk */
	else
		xdr_enc_u32(&c->res, 0); /* empty opaque: nothing to move out of band */
}

/* exports(5) "async": stability is not honoured (as knfsd, at the admin's risk) */
static unsigned nfs3_write_flags(const struct nfs3_call *nc, uint32_t stable)
{
	if (!nc->opts->sync)
		return BE_IO_CHECK_ACCESS;
	if (stable == NFS3_FILE_SYNC)
		return BE_IO_CHECK_ACCESS | BE_IO_FSYNC;
	return BE_IO_CHECK_ACCESS | (stable == NFS3_DATA_SYNC ? BE_IO_DSYNC : 0);
}

/* §3.3.7 */
/* A call of the receiving thread handed to a worker: nothing was changed. */
static enum rpc_proc_status nfs3_io_decline(struct nfs3_call *nc, struct be_file *f)
{
	if (f)
		be_file_put(nc->fs, f);
	nfs3_call_end(nc);
	return RPC_PROC_WORKER;
}

/* §3.3.7. RPC_RUN_INLINE_CALLER: on the receiving thread only while a backend may act as the caller
 * there (be_caller_here); declined before anything is written on an error of the handle or the
 * backend's EWOULDBLOCK (BE_IO_NOWAIT). */
enum rpc_proc_status nfs3_write_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_write_args *a = args;
	struct nfs3_write_res *r = res;
	struct be_file *f = NULL;
	struct nfs3_call nc;
	size_t done = 0;
	bool here = loop_is_loop_thread();

	if (here && !be_caller_here())
		return RPC_PROC_WORKER;
	nfs3_call_begin(&nc, c);
	r->status = nfs3_io_open(&nc, &a->fh, true, &f);
	if (here && r->status != NFS3_OK)
		return nfs3_io_decline(&nc, f);
	if (r->status == NFS3_OK) {
		/* §3.3.7: count is the number of bytes in data; more than was sent is malformed
		 * (INVAL, answered after the permission check: nothing is written then) */
		struct iovec iov = { (void *)a->data, a->count <= a->len ? a->count : 0 };
		int err = be_write(nc.fs, &nc.cred, f, nfs3_write_flags(&nc, a->stable) | (here ? BE_IO_NOWAIT : 0),
				   a->offset, &iov, 1, &done, &r->wcc.pre, &r->wcc.post);

		if (here && err == EWOULDBLOCK)
			return nfs3_io_decline(&nc, f);
		r->status = nfs3_stat(err);
		if (r->status == NFS3_OK && a->count > a->len)
			r->status = NFS3ERR_INVAL;
	}
	nfs3_file_attr_fill(&nc, f, r->status, &r->wcc.post);
	r->count = (uint32_t)done;
	r->committed = a->stable;
	if (done)
		nfs_export_count_io(nc.exp, 0, done);
	nfs_pnfs_ds_count(nc.exp, NFS_DS_WRITE, r->status != NFS3_OK, done);
	r->fsid = nfs3_call_fsid(&nc);
	if (f)
		be_file_put(nc.fs, f);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
}

void nfs3_write_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_write_res *r = res;

	nfs3_enc_status(c, r->status);
	nfs3_enc_wcc(&c->res, &r->wcc, r->fsid);
	if (r->status == NFS3_OK) {
		xdr_enc_u32(&c->res, r->count);
		xdr_enc_u32(&c->res, r->committed);
		xdr_enc_fixed(&c->res, nfs_write_verf, NFS3_WRITEVERFSIZE);
	}
}

/* §3.3.21: flush earlier UNSTABLE writes; the verifier tells the client whether they survived.
 * RPC_RUN_INLINE_CALLER as WRITE: the backend says EWOULDBLOCK where the flush could wait. */
enum rpc_proc_status nfs3_commit_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_commit_args *a = args;
	struct nfs3_write_res *r = res;
	struct be_file *f = NULL;
	struct nfs3_call nc;
	bool here = loop_is_loop_thread();

	if (here && !be_caller_here())
		return RPC_PROC_WORKER;
	nfs3_call_begin(&nc, c);
	r->status = nfs3_io_open(&nc, &a->fh, false, &f);
	if (here && r->status != NFS3_OK)
		return nfs3_io_decline(&nc, f);
	if (r->status == NFS3_OK && nc.opts->sync) {
		int err = be_commit(nc.fs, f, a->offset, a->count, &r->wcc.pre, &r->wcc.post);

		if (here && err == EWOULDBLOCK)
			return nfs3_io_decline(&nc, f);
		r->status = nfs3_stat(err);
	} else if (r->status == NFS3_OK) { /* "async": nothing to flush, as knfsd */
		if (be_file_getattr(nc.fs, f, &r->wcc.pre) != 0)
			r->wcc.pre.valid = 0;
		else if (r->wcc.pre.nlink == 0)
			r->status = NFS3ERR_STALE, r->wcc.pre.valid = 0; /* removed since: gone for NFS */
		r->wcc.post = r->wcc.pre;
	}
	nfs3_file_attr_fill(&nc, f, r->status, &r->wcc.post);
	nfs_pnfs_ds_count(nc.exp, NFS_DS_COMMIT, r->status != NFS3_OK, 0);
	r->fsid = nfs3_call_fsid(&nc);
	if (f)
		be_file_put(nc.fs, f);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
}

void nfs3_commit_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_write_res *r = res;

	nfs3_enc_status(c, r->status);
	nfs3_enc_wcc(&c->res, &r->wcc, r->fsid);
	if (r->status == NFS3_OK)
		xdr_enc_fixed(&c->res, nfs_write_verf, NFS3_WRITEVERFSIZE);
}
