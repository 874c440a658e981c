/*
 * nfs3_proc_attr.c - NFSv3 attribute and file-system procedures:
 * NULL (RFC 1813 §3.3.0), GETATTR (§3.3.1), SETATTR (§3.3.2), ACCESS
 * (§3.3.4), FSSTAT (§3.3.18), FSINFO (§3.3.19), PATHCONF (§3.3.20).
 * Each as an execute step (backend calls, results into its struct) and an
 * encode step.
 */
#include <stdint.h>

#include "core/loop.h"
#include "nfs/v3/nfs3.h"

enum rpc_proc_status nfs3_null_exec(struct rpc_call *c, void *args, void *res)
{
	(void)c; /* RFC 1813 §3.3.0: no work */
	(void)args;
	(void)res;
	return RPC_PROC_OK;
}

/* §3.3.1 */
enum rpc_proc_status nfs3_getattr_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_fh_args *a = args;
	struct nfs3_attr_res *r = res;
	struct be_obj o = BE_OBJ_INIT;
	struct nfs3_call nc;

	enum nfs_deleg_verdict v = NFS_DELEG_CLEAR;

	nfs3_call_begin(&nc, c);
	r->status = nfs3_call_open(&nc, &a->fh, &o, &r->attr);
	r->fsid = nfs3_call_fsid(&nc);
	/* RFC 8881 §10.4.3: an NFSv4 client's write delegation of the file: its
	 * size and times, by CB_GETATTR (waited for on a worker, never here). */
	if (r->status == NFS3_OK && r->attr.type == BE_REG && nfs_deleg_any())
		v = nfs_deleg_getattr(a->fh.data, a->fh.len, !loop_is_loop_thread(), &r->attr);
	if (v == NFS_DELEG_WAIT)
		r->status = NFS3ERR_JUKEBOX;
	nfs3_call_put(&nc, &o);
	nfs3_call_end(&nc);
	return v == NFS_DELEG_WORKER ? RPC_PROC_WORKER : RPC_PROC_OK;
}

void nfs3_getattr_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_attr_res *r = res;

	nfs3_enc_status(c, r->status);
	if (r->status == NFS3_OK)
		nfs3_enc_fattr(&c->res, &r->attr, r->fsid);
}

/* §3.3.2: wcc_data before/after; guard.check compares the object's ctime (NOT_SYNC). */
enum rpc_proc_status nfs3_setattr_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_setattr_args *a = args;
	struct nfs3_wcc_res *r = res;
	struct be_obj o = BE_OBJ_INIT;
	struct nfs3_call nc;

	nfs3_call_begin(&nc, c);
	r->status = nfs3_call_open(&nc, &a->fh, &o, &r->wcc.pre);
	if (r->status == NFS3_OK)
		r->status = nfs3_call_writable(&nc);
	/* RFC 8881 §10.4.1: an NFSv4 client's delegation of the file is recalled first; a directory's
	 * (§10.9.1) too, but those whose holders asked NOTIFY4_CHANGE_DIR_ATTRS, told after (§20.4.1). */
	bool dir = a->sa.mask && r->wcc.pre.type == BE_DIR;

	if (r->status == NFS3_OK && a->sa.mask &&
	    (dir ? nfs_deleg_dir_changed(a->fh.data, a->fh.len, NFS_DIR_ATTRS)
		 : nfs_deleg_recall(a->fh.data, a->fh.len, NFS_DELEG_WRITE)) != NFS_DELEG_CLEAR)
		r->status = NFS3ERR_JUKEBOX;
	/* RFC 8881 §12.5.5: a truncate recalls the file's pNFS layouts (no wait) */
	if (r->status == NFS3_OK && (a->sa.mask & BE_SET_SIZE))
		nfs_layout_conflict(a->fh.data, a->fh.len,
				    c->conn ? (const struct sockaddr *)&c->conn->peer : NULL);
	if (r->status == NFS3_OK) {
		r->status = nfs3_stat(be_setattr(nc.fs, &nc.cred, &o, &a->sa, a->guard ? &a->guard_ctime : NULL,
						 NULL, &r->wcc.post));
		if (r->status == NFS3_OK && a->sa.mask)
			nfs3_call_commit_meta(&nc, &o);
	}
	if (!r->wcc.post.valid) /* refused before the backend, or it could not say */
		nfs3_call_getattr(&nc, &o, &r->wcc.post);
	if (r->status == NFS3_OK && dir) { /* the new values (none to be had: its holders are recalled) */
		const struct nfs_dir_note n = { .kind = NFS_DIR_ATTRS, .attrs = &r->wcc.post };

		nfs_deleg_dir_note(a->fh.data, a->fh.len, &n);
	}
	r->fsid = nfs3_call_fsid(&nc);
	nfs3_call_put(&nc, &o);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
}

/* SETATTR3res, REMOVE3res, RMDIR3res: status, wcc_data (both arms) */
void nfs3_wcc_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_wcc_res *r = res;

	nfs3_enc_status(c, r->status);
	nfs3_enc_wcc(&c->res, &r->wcc, r->fsid);
}

/* §3.3.4: which of the requested rights the caller has, as the backend decides;
 * none that modify on a read-only export. */
enum rpc_proc_status nfs3_access_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_access_args *a = args;
	struct nfs3_access_res *r = res;
	struct be_obj o = BE_OBJ_INIT;
	struct nfs3_call nc;
	uint32_t want = a->access & (ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND |
				     ACCESS3_DELETE | ACCESS3_EXECUTE);

	nfs3_call_begin(&nc, c);
	r->status = nfs3_call_open(&nc, &a->fh, &o, &r->attr);
	if (r->status == NFS3_OK) {
		if (nfs3_call_writable(&nc) != NFS3_OK)
			want &= ~(ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE);
		/* ACCESS3_* are the backend's BE_ACCESS_* numbers */
		r->status = nfs3_stat(be_access(nc.fs, &nc.cred, &o, want, &r->granted));
	}
	r->fsid = nfs3_call_fsid(&nc);
	nfs3_call_put(&nc, &o);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
}

void nfs3_access_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_access_res *r = res;

	nfs3_enc_status(c, r->status);
	nfs3_enc_post_op_attr(&c->res, &r->attr, r->fsid);
	if (r->status == NFS3_OK)
		xdr_enc_u32(&c->res, r->granted);
}

/* FSSTAT, FSINFO and PATHCONF: the object's attributes, and the file system's figures if asked. */
static enum rpc_proc_status nfs3_fs_exec(struct rpc_call *c, const struct nfs3_fh_args *a, struct nfs3_fs_res *r,
					 bool statfs)
{
	struct be_obj o = BE_OBJ_INIT;
	struct nfs3_call nc;

	nfs3_call_begin(&nc, c);
	r->status = nfs3_call_open(&nc, &a->fh, &o, &r->attr);
	if (r->status == NFS3_OK && statfs)
		r->status = nfs3_stat(be_statfs(nc.fs, &nc.cred, &o, &r->sf));
	r->fsid = nfs3_call_fsid(&nc);
	nfs3_call_put(&nc, &o);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
}

/* status, post_op_attr; false: the failure arm (no body follows) */
static bool nfs3_fs_enc_head(struct rpc_call *c, const struct nfs3_fs_res *r)
{
	nfs3_enc_status(c, r->status);
	nfs3_enc_post_op_attr(&c->res, &r->attr, r->fsid);
	return r->status == NFS3_OK;
}

enum rpc_proc_status nfs3_fsstat_exec(struct rpc_call *c, void *args, void *res)
{
	return nfs3_fs_exec(c, args, res, true);
}

/* §3.3.18 FSSTAT3resok: byte and file counts */
void nfs3_fsstat_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_fs_res *r = res;
	struct xdr_enc *e = &c->res;

	if (!nfs3_fs_enc_head(c, r))
		return;
	xdr_enc_u64(e, r->sf.total_bytes);
	xdr_enc_u64(e, r->sf.free_bytes);
	xdr_enc_u64(e, r->sf.avail_bytes);
	xdr_enc_u64(e, r->sf.total_files);
	xdr_enc_u64(e, r->sf.free_files);
	xdr_enc_u64(e, r->sf.avail_files);
	xdr_enc_u32(e, 0); /* invarsec: the file system may change at any time */
}

enum rpc_proc_status nfs3_fsinfo_exec(struct rpc_call *c, void *args, void *res)
{
	return nfs3_fs_exec(c, args, res, false);
}

/* §3.3.19 FSINFO3resok */
void nfs3_fsinfo_enc(struct rpc_call *c, const void *res)
{
	const struct be_time delta = { 0, 1 }; /* time_delta: nanosecond timestamps */
	const struct nfs3_fs_res *r = res;
	struct xdr_enc *e = &c->res;
	/* Under krb5i/krb5p READ data stays inline: no more than one reply carries
	 * (§3.3.19: a larger READ would come back short anyway). */
	uint32_t rtmax = rpc_wrapped_read_max(c, NFS3_MAX_IO);

	if (!nfs3_fs_enc_head(c, r))
		return;
	xdr_enc_u32(e, rtmax);         /* rtmax */
	xdr_enc_u32(e, rtmax);         /* rtpref */
	xdr_enc_u32(e, 4096);          /* rtmult */
	xdr_enc_u32(e, NFS3_MAX_IO);   /* wtmax */
	xdr_enc_u32(e, NFS3_MAX_IO);   /* wtpref */
	xdr_enc_u32(e, 4096);          /* wtmult */
	xdr_enc_u32(e, 64 * 1024);     /* dtpref */
	xdr_enc_u64(e, (uint64_t)INT64_MAX); /* maxfilesize: off_t limit */
	nfs3_enc_time(e, &delta);
	xdr_enc_u32(e, FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME);
}

enum rpc_proc_status nfs3_pathconf_exec(struct rpc_call *c, void *args, void *res)
{
	return nfs3_fs_exec(c, args, res, true);
}

/* §3.3.20 PATHCONF3resok */
void nfs3_pathconf_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_fs_res *r = res;
	struct xdr_enc *e = &c->res;

	if (!nfs3_fs_enc_head(c, r))
		return;
	xdr_enc_u32(e, r->sf.link_max);
	xdr_enc_u32(e, r->sf.name_max);
	xdr_enc_bool(e, true);  /* no_trunc: long names are refused (NAMETOOLONG) */
	xdr_enc_bool(e, true);  /* chown_restricted */
	xdr_enc_bool(e, false); /* case_insensitive */
	xdr_enc_bool(e, true);  /* case_preserving */
}
