/*
 * nfs4_proc_copy.c - server-side copies within one export: COPY (RFC 7862
 * §15.2), CLONE (§15.13), and OFFLOAD_STATUS/OFFLOAD_CANCEL (§15.9, §15.8).
 *
 * SAVED_FH is the source, CURRENT_FH the destination (§15.2.3, §15.13.3);
 * each file comes through its own stateid as READ's (source) and WRITE's
 * (destination) does (nfs4_v42_file()), and both must be of one export (the
 * backend copies within one instance): NFS4ERR_XDEV otherwise.
 *
 * COPY is answered synchronously (wr_callback_id empty, cr_synchronous and
 * cr_consecutive true) when the client asks for it (ca_synchronous), for
 * copies under NFS4_COPY_ASYNC_MIN, and when no callback can reach the
 * client; the copy then holds its worker thread, so one COPY moves at most
 * NFS4_COPY_MAX bytes and answers a short wr_count beyond (the client goes on
 * from there, as after a short WRITE), and copies hold at most their share of
 * the workers (nfs4_copy_sync_get(): [nfsv4] copy-workers in all,
 * copy-workers-per-client per client), a COPY beyond it gets NFS4ERR_DELAY
 * so that one client's copies never take every worker. Otherwise (§15.2.3: the server's
 * choice) it is asynchronous (§4.8): the reply names a copy stateid at once,
 * a copy thread moves the whole range (nfs4_copy_async.c) and CB_OFFLOAD
 * (§16.1) tells the result; OFFLOAD_STATUS and OFFLOAD_CANCEL name that
 * stateid. Inter-server copy (a non-empty ca_source_server, COPY_NOTIFY) is
 * not offered: NFS4ERR_NOTSUPP.
 */
#include <string.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/ops/nfs4_copy_async.h"
#include "nfs/v4/xdr/nfs4_v42.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"

/* Most bytes one COPY moves while it holds a worker (copy_file_range in the local backend). */
#define NFS4_COPY_MAX (32ull << 20)

/* The source (SAVED_FH, read) and the destination (CURRENT_FH, write) files. */
static uint32_t two_files(struct nfs4_ctx *x, const struct nfs4_copy_args *a, struct nfs4_obj *src,
			  struct be_file **fs, struct nfs4_obj *dst, struct be_file **fd)
{
	uint32_t status;

	memset(dst, 0, sizeof(*dst));
	if (!x->saved.set) {
		memset(src, 0, sizeof(*src));
		return NFS4ERR_NOFILEHANDLE; /* RFC 8881 §15.2: an operation needing SAVED_FH without one */
	}
	status = nfs4_v42_file(x, &x->saved.fh, &a->src_sid, NFS4_SHARE_ACCESS_READ, src, fs);
	if (status == NFS4_OK)
		status = nfs4_v42_file(x, &x->cur.fh, &a->dst_sid, NFS4_SHARE_ACCESS_WRITE, dst, fd);
	if (status == NFS4_OK && src->exp != dst->exp)
		status = NFS4ERR_XDEV;
	return status;
}

/* On a "sync" export (the default) what was written is on stable storage before
 * the reply (FILE_SYNC4); "async" answers UNSTABLE4 and the client COMMITs. */
static uint32_t dst_commit(const struct nfs4_obj *dst, struct be_file *fd, uint64_t off, uint64_t len,
			   uint32_t *committed)
{
	*committed = UNSTABLE4;
	if (dst->opts && !dst->opts->sync)
		return NFS4_OK;
	*committed = FILE_SYNC4;
	return nfs_errno_to_nfsstat4(be_commit(dst->exp->fs, fd, off, len, NULL, NULL));
}

/* count bytes (count > 0) from fs to fd; the backend may copy less per call. */
static uint32_t copy_range(const struct nfs4_obj *dst, struct be_file *fs, uint64_t soff, struct be_file *fd,
			   uint64_t doff, uint64_t count, uint64_t *done)
{
	*done = 0;
	while (*done < count) {
		uint64_t n = 0;
		int err = be_copy(dst->exp->fs, &dst->cred, fs, soff + *done, fd, doff + *done, count - *done, &n);

		if (err) /* §15.2.3: what was copied before the error is reported, as a short copy */
			return *done ? NFS4_OK : nfs_errno_to_nfsstat4(err);
		if (n == 0)
			break; /* the source ended (truncated meanwhile) */
		*done += n;
	}
	return NFS4_OK;
}

/* The copy on this worker, within the client's share of the workers. RFC
 * 7862 §15.2 (§11.2 lists NFS4ERR_DELAY among COPY's errors): a server that
 * cannot take the copy now answers NFS4ERR_DELAY and the client sends it
 * again later (RFC 8881 §15.1.1.3); here the client, or COPY as a whole, is
 * over its share of the workers, and nothing was copied. */
static uint32_t copy_sync(struct nfs4_ctx *x, const struct nfs4_obj *dst, struct be_file *fs,
			  const struct nfs4_copy_args *a, struct be_file *fd, uint64_t count, struct nfs4_copy_res *r)
{
	uint64_t clientid = ((struct nfs4_svc *)x->priv)->clientid;
	uint32_t status;

	if (!nfs4_copy_sync_get(clientid))
		return NFS4ERR_DELAY;
	status = copy_range(dst, fs, a->src_offset, fd, a->dst_offset, count, &r->count);
	if (r->count) /* bytes written to the destination's export (nfs/common/export_stats.c) */
		nfs_export_count_io(dst->exp, 0, r->count);
	if (status == NFS4_OK)
		status = dst_commit(dst, fd, a->dst_offset, r->count, &r->committed);
	nfs4_copy_sync_put(clientid);
	return status;
}

/* RFC 7862 §15.2.3: the server may answer a copy the client lets be
 * asynchronous either way; it goes to a copy thread when large enough and a
 * callback can tell its end. true: the job took the files (and r says so). */
static bool copy_async(struct nfs4_ctx *x, const struct nfs4_copy_args *a, struct nfs4_obj *src, struct be_file *fs,
		       struct nfs4_obj *dst, struct be_file *fd, uint64_t count, struct nfs4_copy_res *r)
{
	struct nfs4_svc *svc = x->priv;
	uint64_t clientid = svc->clientid;
	struct nfs4_copy_async_req rq = { .tbl = svc->tbl, .clientid = clientid, .src = src, .dst = dst, .fs = fs, .fd = fd,
					  .soff = a->src_offset, .doff = a->dst_offset, .count = count,
					  .sync_export = !dst->opts || dst->opts->sync, .dst_fh = &x->cur.fh };

	if (a->synchronous || count < NFS4_COPY_ASYNC_MIN || x->minorversion < 2 || !nfs4_cb_ops_ready(clientid))
		return false;
	if (nfs4_copy_async_start(&rq, &r->cb_sid) != NFS4_OK)
		return false; /* the copy table is full: a synchronous (short) copy instead */
	r->async = true;
	return true;
}

/* RFC 7862 §15.2.3: a source range past the source's end is NFS4ERR_INVAL, a
 * ca_count of 0 means to its end; overlapping ranges of one file are
 * NFS4ERR_INVAL too (copy_file_range's EINVAL). */
uint32_t nfs4_copy_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_copy_args *a = args;
	struct nfs4_copy_res *r = res;
	struct nfs4_obj src, dst;
	struct be_file *fs = NULL, *fd = NULL;
	uint64_t size = 0, count;
	uint32_t status;

	r->async = false;
	if (a->nsources)
		return NFS4ERR_NOTSUPP; /* §15.2.3: inter-server copy, not offered */
	status = two_files(x, a, &src, &fs, &dst, &fd);
	if (status == NFS4_OK)
		status = nfs4_v42_size(&src, fs, &size);
	if (status == NFS4_OK && (a->src_offset > size || a->count > size - a->src_offset))
		status = NFS4ERR_INVAL;
	count = a->count ? a->count : size - a->src_offset;
	if (status == NFS4_OK && copy_async(x, a, &src, fs, &dst, fd, count, r))
		return NFS4_OK; /* the files are the copy thread's now */
	if (count > NFS4_COPY_MAX)
		count = NFS4_COPY_MAX;
	if (status == NFS4_OK && count)
		status = copy_sync(x, &dst, fs, a, fd, count, r);
	else if (status == NFS4_OK)
		status = dst_commit(&dst, fd, a->dst_offset, r->count, &r->committed);
	nfs4_v42_file_put(&src, fs);
	nfs4_v42_file_put(&dst, fd);
	return status;
}

/* RFC 7862 §15.13.3: the destination shares the source's blocks (reflink);
 * cl_count 0 means to the source's end; a file system that cannot is
 * NFS4ERR_NOTSUPP (the backend's EOPNOTSUPP), misaligned ranges NFS4ERR_INVAL. */
uint32_t nfs4_clone_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_copy_args *a = args;
	struct nfs4_obj src, dst;
	struct be_file *fs = NULL, *fd = NULL;
	uint32_t committed, status = two_files(x, a, &src, &fs, &dst, &fd);
	uint64_t size = 0;

	(void)res;
	if (status == NFS4_OK && !a->count)
		status = nfs4_v42_size(&src, fs, &size); /* cl_count 0: to the source's end */
	if (status == NFS4_OK)
		status = nfs_errno_to_nfsstat4(
			be_clone(dst.exp->fs, &dst.cred, fs, a->src_offset, fd, a->dst_offset, a->count));
	/* the destination export's bytes written: the range cloned */
	if (status == NFS4_OK)
		nfs_export_count_io(dst.exp, 0, a->count ? a->count : size > a->src_offset ? size - a->src_offset : 0);
	if (status == NFS4_OK)
		status = dst_commit(&dst, fd, a->dst_offset, a->count, &committed);
	nfs4_v42_file_put(&src, fs);
	nfs4_v42_file_put(&dst, fd);
	return status;
}

/* RFC 7862 §15.9.3: the bytes an asynchronous copy has moved and, once it
 * is over, its status (knfsd answers so too); a stateid that names no copy of
 * this client's (unknown, cancelled, its result already delivered and
 * released) is NFS4ERR_BAD_STATEID. */
uint32_t nfs4_offload_status_exec(struct nfs4_ctx *x, void *args, void *res)
{
	struct nfs4_offload_status_res *r = res;

	return nfs4_copy_async_status(((struct nfs4_svc *)x->priv)->clientid, args, &r->count, &r->complete,
				      &r->status);
}

/* RFC 7862 §15.8.3: the copy stops at its next chunk; CB_OFFLOAD still tells
 * what was copied (as knfsd's); the stateid names no copy afterwards. */
uint32_t nfs4_offload_cancel_exec(struct nfs4_ctx *x, void *args, void *res)
{
	(void)res;
	return nfs4_copy_async_cancel(((struct nfs4_svc *)x->priv)->clientid, args);
}
