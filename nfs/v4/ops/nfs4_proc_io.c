/*
 * nfs4_proc_io.c - READ (RFC 8881 §18.22), WRITE (§18.32), COMMIT (§18.3).
 *
 * The file: with an open stateid, the open file the open state keeps (as
 * knfsd: the OPEN checked the caller's permission; a caller other than the file's owner is checked again, io_permit());
 * with the anonymous or READ-bypass stateid (RFC 8881 §8.2.3), the current
 * filehandle's file opened for this call and each I/O checked as the caller
 * (BE_IO_CHECK_ACCESS), after the share reservations (a deny of an open
 * refuses stateless I/O: LOCKED, RFC 7530 §9.9, except READ with the bypass stateid).
 * Either way the current filehandle is admitted and squashed on every use.
 *
 * Zero copy as NFSv3's (nfs3_proc_io.c): READ has the backend read into the
 * call's payload area and hands it to rpc_enc_ddp() (RFC 8267 §4.1, §4.3: a
 * Write chunk paired in order with the COMPOUND's READ results over RDMA, a
 * writev segment over TCP), or a large one over TCP splices it into the
 * call's payload pipe (rpc_payload_pipe; one per COMPOUND, later READs copy);
 * WRITE writes from where rpc_dec_ddp() found the
 * data (a Read chunk, or the received message). The write verifier is
 * every version's (nfs_write_verf, nfs/common/io.c: one per server instance).
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"

_Static_assert(NFS4_VERIFIER_SIZE == NFS_WRITE_VERF_SIZE, "verifier4 is the shared write verifier");

/*
 * I/O through an open stateid by a caller who is not the file's owner (the
 * owner may write what its mode refuses, as the creator of a 0444 file
 * must): the caller must be allowed the access itself, a stateid lending no
 * rights to another user (RFC 7530 §9.1.4, stateids are not credentials;
 * knfsd's nfs4_check_file with NFSD_MAY_OWNER_OVERRIDE; pynfs WRT19). READ
 * may be granted by execute permission, as knfsd's NFSD_MAY_READ_IF_EXEC.
 */
static uint32_t io_permit(const struct nfs4_obj *ob, uint32_t access)
{
	uint32_t want = access & NFS4_SHARE_ACCESS_WRITE ? BE_ACCESS_MODIFY : BE_ACCESS_READ | BE_ACCESS_EXECUTE;
	uint32_t granted = 0;
	int err;

	if (ob->cred.uid == ob->attr.uid)
		return NFS4_OK;
	err = be_access(ob->exp->fs, &ob->cred, &ob->o, want, &granted);
	if (err)
		return nfs_errno_to_nfsstat4(err);
	return (access & NFS4_SHARE_ACCESS_WRITE ? (granted & want) == want : (granted & want) != 0) ? NFS4_OK
												   : NFS4ERR_ACCESS;
}

uint32_t nfs4_io_file(struct nfs4_ctx *x, const struct nfs_fh *fh, const struct nfs4_stateid *in, struct nfs4_obj *ob,
		      uint32_t access, struct be_file **f, unsigned *flags)
{
	struct nfs4_stab *t = &nfs4_srv(x)->stab;
	struct nfs4_stateid sid;
	struct nfs4_sid_io io;
	uint32_t status;
	enum nfs4_sid_kind kind;

	memset(ob, 0, sizeof(*ob)); /* put by the caller even when the stateid fails first */
	status = nfs4_stateid_resolve(x, in, &sid);
	kind = nfs4_stateid_kind(&sid, x->minorversion);
	if (status == NFS4_OK)
		status = nfs4_obj_open(x->priv, fh, ob);
	if (status == NFS4_OK)
		status = nfs4_regular_check(x, ob);
	if (status == NFS4_OK && (access & NFS4_SHARE_ACCESS_WRITE) && ob->opts && !ob->opts->rw)
		status = NFS4ERR_ROFS;
	if (status != NFS4_OK)
		return status;
	if (kind == NFS4_SID_INVALID || kind == NFS4_SID_CURRENT)
		return NFS4ERR_BAD_STATEID;
	/* RFC 8881 §10.4.1: another client's delegation in the way (a write one
	 * for READ, any for WRITE) is recalled; DELAY until it is back. */
	status = nfs4_deleg_break(fh->data, fh->len,
				  kind == NFS4_SID_ORDINARY ? nfs4_sid_client(x, &sid) : nfs4_deleg_caller(x),
				  access & NFS4_SHARE_ACCESS_WRITE ? NFS4_DL_ACC_WRITE : NFS4_DL_ACC_READ);
	if (status != NFS4_OK)
		return status;
	if (kind == NFS4_SID_ORDINARY && nfs4_dtab_is_deleg(&sid)) {
		/* A delegation stateid (RFC 8881 §9.1.3): the file opened for this
		 * call, each I/O checked as the caller, as for the anonymous one. */
		status = nfs4_deleg_check_io(nfs4_sid_client(x, &sid), &sid, x->minorversion, fh->data, fh->len, access);
		if (status == NFS4_OK)
			status = nfs_errno_to_nfsstat4(be_file_open(
				ob->exp->fs, &ob->o, access == NFS4_SHARE_ACCESS_READ ? BE_OPEN_READ : BE_OPEN_WRITE, f));
		if (status == NFS4_OK)
			nfs4_stateid_renew(x, &sid);
		*flags = BE_IO_CHECK_ACCESS;
		return status;
	}
	if (kind == NFS4_SID_ORDINARY) {
		status = nfs4_stab_check_io(t, nfs4_sid_client(x, &sid), &sid, x->minorversion, fh->data, fh->len, access,
					    &io);
		if (status != NFS4_OK)
			return status;
		status = io_permit(ob, access);
		if (status != NFS4_OK) {
			if (io.file)
				be_file_put(io.fs, io.file);
			return status;
		}
		nfs4_stateid_renew(x, &sid);
		*f = io.file;
		*flags = 0;
		return NFS4_OK;
	}
	/* RFC 8881 §8.2.3, §9.7: anonymous I/O respects deny reservations; READ bypass skips them. */
	if (!(kind == NFS4_SID_BYPASS && access == NFS4_SHARE_ACCESS_READ))
		status = nfs4_stab_check_anon(t, fh->data, fh->len, access);
	if (status == NFS4_OK)
		status = nfs_errno_to_nfsstat4(
			be_file_open(ob->exp->fs, &ob->o, access == NFS4_SHARE_ACCESS_READ ? BE_OPEN_READ : BE_OPEN_WRITE, f));
	*flags = BE_IO_CHECK_ACCESS;
	return status;
}

uint8_t *nfs4_read_buf(struct nfs4_ctx *x, uint32_t want, uint32_t *got)
{
	struct nfs4_svc *s = x->priv;

	if (x->call)
		return nfs_bulk_buf(x->call, want, got);
	*got = want < sizeof(s->link) ? want : (uint32_t)sizeof(s->link);
	return (uint8_t *)s->link;
}

/* READ's data into the call's payload pipe (r->piped; TCP: spliced from the
 * page cache to the socket), else into its payload area (r->data). */
static uint32_t nfs4_read_data(struct nfs4_ctx *x, const struct nfs4_obj *ob, struct be_file *f, unsigned flags,
			       const struct nfs4_read_args *a, size_t *done, struct nfs4_read_res *r)
{
	/* RFC 8881 §18.22.3: fewer bytes than asked is allowed; never more than maxread. */
	uint32_t count = a->count < NFS4_MAX_IO ? a->count : NFS4_MAX_IO;
	struct be_attr post;
	int err = x->call ? nfs_read_piped(x->call, ob->exp->fs, &ob->cred, f, flags, a->offset, count, done,
					   &r->eof, &post)
			  : EOPNOTSUPP;

	if (err != EOPNOTSUPP) {
		r->piped = true;
		return nfs_errno_to_nfsstat4(err);
	}
	r->data = nfs4_read_buf(x, count, &count);
	if (!r->data && count)
		return NFS4ERR_SERVERFAULT;
	if (!count) {
		r->eof = a->offset >= ob->attr.size;
		return NFS4_OK;
	}
	struct iovec iov = { r->data, count };

	return nfs_errno_to_nfsstat4(
		be_read(ob->exp->fs, &ob->cred, f, flags, a->offset, &iov, 1, done, &r->eof, &post));
}

uint32_t nfs4_read_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_read_args *a = args;
	struct nfs4_read_res *r = res;
	struct nfs4_obj ob;
	struct be_file *f = NULL;
	unsigned flags = 0;
	size_t done = 0;
	uint32_t status = nfs4_io_file(x, &x->cur.fh, &a->sid, &ob, NFS4_SHARE_ACCESS_READ, &f, &flags);

	/* RFC 8881 §18.22.3: a READ beyond the end of the file returns no data and eof. An offset no
	 * off_t can reach (the backend would say EINVAL) is beyond every file's end (pynfs RD5a). */
	if (status == NFS4_OK && a->offset > (uint64_t)INT64_MAX - NFS4_MAX_IO) {
		r->eof = true;
		r->len = 0;
		if (f)
			be_file_put(ob.exp->fs, f);
		nfs4_obj_put(&ob);
		return NFS4_OK;
	}
	/* RFC 8881 §2.10.6.4: a session's ca_maxresponsesize counts READ's data
	 * too (it leaves outside the reply buffer); what the file holds from
	 * offset is what would be sent, so a reply too big is refused before reading
	 * (the engine checks again once it is encoded). */
	if (status == NFS4_OK) {
		uint64_t avail = ob.attr.size > a->offset ? ob.attr.size - a->offset : 0;
		uint32_t want = a->count < NFS4_MAX_IO ? a->count : NFS4_MAX_IO;

		want = avail < want ? (uint32_t)avail : want;
		status = nfs4_compound_room(x, 16u + want + XDR_PAD(want)); /* resop, status, eof, length */
	}
	if (status == NFS4_OK)
		status = nfs4_read_data(x, &ob, f, flags, a, &done, r);
	r->len = (uint32_t)done;
	if (done)
		nfs_export_count_io(ob.exp, done, 0);
	if (f)
		be_file_put(ob.exp->fs, f);
	nfs4_obj_put(&ob);
	return status;
}

void nfs4_read_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_read_res *r = res;

	(void)status;
	xdr_enc_bool(e, r->eof);
	/* RFC 8267 §4.1: READ's data may leave in a Write chunk (over TCP: a writev segment, or
	 * spliced from the pipe). Piped data only ever goes to the call's own reply. */
	if (r->piped && r->len && x->call && e == &x->call->res)
		rpc_enc_ddp_piped(x->call, r->len);
	else if (r->piped && r->len)
		e->overflow = true; /* no other encoder can take it: never the case */
	else if (x->call && e == &x->call->res && r->len)
		rpc_enc_ddp(x->call, r->data, r->len);
	else
		xdr_enc_opaque(e, r->data, r->len);
}

/* RFC 8881 §18.32.3 stable_how4 -> backend flags; exports(5) "async" honours none (as v3). */
static unsigned write_flags(const struct nfs4_obj *ob, uint32_t stable)
{
	if (ob->opts && !ob->opts->sync)
		return 0;
	return stable == FILE_SYNC4 ? BE_IO_FSYNC : stable == DATA_SYNC4 ? BE_IO_DSYNC : 0;
}

uint32_t nfs4_write_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_write_args *a = args;
	struct nfs4_write_res *r = res;
	struct nfs4_obj ob;
	struct be_file *f = NULL;
	unsigned flags = 0;
	size_t done = 0;
	uint32_t status = nfs4_io_file(x, &x->cur.fh, &a->sid, &ob, NFS4_SHARE_ACCESS_WRITE, &f, &flags);

	if (status == NFS4_OK) {
		struct iovec iov = { (void *)a->data, a->len };
		struct be_attr pre, post;
		status = nfs_errno_to_nfsstat4(be_write(ob.exp->fs, &ob.cred, f, flags | write_flags(&ob, a->stable),
							a->offset, &iov, 1, &done, &pre, &post));
	}
	r->count = (uint32_t)done;
	r->committed = a->stable;
	if (done)
		nfs_export_count_io(ob.exp, 0, done);
	if (f)
		be_file_put(ob.exp->fs, f);
	nfs4_obj_put(&ob);
	return status;
}

void nfs4_write_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_write_res *r = res;

	(void)x, (void)status;
	xdr_enc_u32(e, r->count);
	xdr_enc_u32(e, r->committed);
	xdr_enc_fixed(e, nfs_write_verf, NFS4_VERIFIER_SIZE); /* shared with NFSv3's */
}

/* RFC 8881 §18.3.3: earlier UNSTABLE4 writes to stable storage. */
uint32_t nfs4_commit_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_commit_args *a = args;
	struct nfs4_obj ob;
	struct be_file *f = NULL;
	uint32_t status = nfs4_obj_open(x->priv, &x->cur.fh, &ob);

	(void)res;
	if (status == NFS4_OK)
		status = nfs4_regular_check(x, &ob);
	if (status == NFS4_OK && (!ob.opts || ob.opts->sync)) {
		struct be_attr pre, post;
		status = nfs_errno_to_nfsstat4(be_file_open(ob.exp->fs, &ob.o, BE_OPEN_READ, &f));
		if (status == NFS4_OK)
			status = nfs_errno_to_nfsstat4(be_commit(ob.exp->fs, f, a->offset, a->count, &pre, &post));
	}
	if (f)
		be_file_put(ob.exp->fs, f);
	nfs4_obj_put(&ob);
	return status;
}

void nfs4_commit_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	(void)x, (void)status, (void)res;
	xdr_enc_fixed(e, nfs_write_verf, NFS4_VERIFIER_SIZE);
}
