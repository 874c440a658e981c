/*
 * nfs3_xdr.c - NFSv3 argument decoders and result building blocks
 * (RFC 1813 §2.5-2.6 basic types, §3.3 per-procedure arguments).
 *
 * Two-pass discipline: every length word is compared with its limit before
 * the bytes are taken (xdr_dec_opaque / xdr_dec_inline do the bounds check
 * against what was received); enumerations and booleans are range-checked.
 * Bulk items that RFC 8267 lets travel in Read chunks (WRITE data, SYMLINK
 * path) go through rpc_dec_ddp(). Nothing is copied except handles. sattr3
 * is decoded straight into the backend's struct be_sattr.
 */
#include <string.h>

#include "nfs/v3/nfs3_xdr.h"

/* ---- basic types (RFC 1813 §2.5, §2.6) ---- */

bool nfs3_dec_fh(struct xdr_dec *d, struct nfs_fh *fh)
{
	const uint8_t *p;
	uint32_t len;

	/* nfs_fh3: opaque data<NFS3_FHSIZE> */
	if (!xdr_dec_opaque(d, NFS3_FHSIZE, &p, &len))
		return false;
	fh->len = len;
	memcpy(fh->data, p, len);
	return true;
}

bool nfs3_dec_name(struct xdr_dec *d, struct nfs3_name *n)
{
	/* filename3: string<>; the length limit is checked by the procedure (NAMETOOLONG). */
	return xdr_dec_opaque(d, NFS3_NAME_DECODE_MAX, &n->p, &n->len);
}

bool nfs3_dec_diropargs(struct xdr_dec *d, struct nfs3_diropargs *a)
{
	return nfs3_dec_fh(d, &a->dir) && nfs3_dec_name(d, &a->name);
}

static bool nfs3_dec_time(struct xdr_dec *d, struct be_time *t)
{
	uint32_t sec, nsec;

	/* nfstime3: unsigned seconds; nseconds is "less than 1e9", other values are malformed. */
	if (!xdr_dec_u32(d, &sec) || !xdr_dec_u32(d, &nsec) || nsec >= 1000000000u)
		return false;
	*t = (struct be_time){ .sec = sec, .nsec = nsec };
	return true;
}

/* set_mode3, set_uid3, set_gid3: a bool, then the value; sets bit in mask. */
static bool nfs3_dec_set_u32(struct xdr_dec *d, uint32_t *mask, uint32_t bit, uint32_t *v)
{
	bool set;

	if (!xdr_dec_bool(d, &set))
		return false;
	if (!set)
		return true;
	*mask |= bit;
	return xdr_dec_u32(d, v);
}

/* RFC 1813 §2.6 set_atime / set_mtime: a time_how discriminant */
static bool nfs3_dec_set_time(struct xdr_dec *d, uint32_t *mask, uint32_t now_bit, uint32_t set_bit,
			      struct be_time *t)
{
	uint32_t how;

	if (!xdr_dec_u32(d, &how) || how > NFS3_SET_TO_CLIENT_TIME)
		return false;
	if (how == NFS3_SET_TO_SERVER_TIME)
		*mask |= now_bit;
	if (how != NFS3_SET_TO_CLIENT_TIME)
		return true;
	*mask |= set_bit;
	return nfs3_dec_time(d, t);
}

bool nfs3_dec_sattr(struct xdr_dec *d, struct be_sattr *sa)
{
	bool set_size;

	memset(sa, 0, sizeof(*sa));
	if (!nfs3_dec_set_u32(d, &sa->mask, BE_SET_MODE, &sa->mode) ||
	    !nfs3_dec_set_u32(d, &sa->mask, BE_SET_UID, &sa->uid) ||
	    !nfs3_dec_set_u32(d, &sa->mask, BE_SET_GID, &sa->gid))
		return false;
	if (!xdr_dec_bool(d, &set_size))
		return false;
	if (set_size) {
		sa->mask |= BE_SET_SIZE;
		if (!xdr_dec_u64(d, &sa->size))
			return false;
	}
	return nfs3_dec_set_time(d, &sa->mask, BE_SET_ATIME_NOW, BE_SET_ATIME, &sa->atime) &&
	       nfs3_dec_set_time(d, &sa->mask, BE_SET_MTIME_NOW, BE_SET_MTIME, &sa->mtime);
}

/* ---- per-procedure arguments (RFC 1813 §3.3.x): the operation table's decode steps ---- */

bool nfs3_dec_fh_args(struct rpc_call *c, void *args)
{
	struct nfs3_fh_args *a = args;

	return nfs3_dec_fh(&c->args, &a->fh);
}

/* §3.3.2 SETATTR3args: object, new_attributes, sattrguard3 */
bool nfs3_dec_setattr(struct rpc_call *c, void *args)
{
	struct nfs3_setattr_args *a = args;
	struct xdr_dec *d = &c->args;

	if (!nfs3_dec_fh(d, &a->fh) || !nfs3_dec_sattr(d, &a->sa) || !xdr_dec_bool(d, &a->guard))
		return false;
	return !a->guard || nfs3_dec_time(d, &a->guard_ctime);
}

/* §3.3.4 */
bool nfs3_dec_access(struct rpc_call *c, void *args)
{
	struct nfs3_access_args *a = args;

	return nfs3_dec_fh(&c->args, &a->fh) && xdr_dec_u32(&c->args, &a->access);
}

/* §3.3.6 */
bool nfs3_dec_read(struct rpc_call *c, void *args)
{
	struct nfs3_read_args *a = args;
	struct xdr_dec *d = &c->args;

	return nfs3_dec_fh(d, &a->fh) && xdr_dec_u64(d, &a->offset) && xdr_dec_u32(d, &a->count);
}

/* §3.3.7 WRITE3args; data may arrive in a Read chunk (RFC 8267 §4.3). */
bool nfs3_dec_write(struct rpc_call *c, void *args)
{
	struct nfs3_write_args *a = args;
	struct xdr_dec *d = &c->args;

	if (!nfs3_dec_fh(d, &a->fh) || !xdr_dec_u64(d, &a->offset) || !xdr_dec_u32(d, &a->count) ||
	    !xdr_dec_u32(d, &a->stable) || a->stable > NFS3_FILE_SYNC)
		return false;
	if (!xdr_dec_u32(d, &a->len) || a->len > NFS3_MAX_IO)
		return false;
	return rpc_dec_ddp(c, a->len, &a->data);
}

/* §3.3.8 CREATE3args: createhow3 is a union on createmode3 */
bool nfs3_dec_create(struct rpc_call *c, void *args)
{
	struct nfs3_create_args *a = args;
	struct xdr_dec *d = &c->args;

	memset(&a->sa, 0, sizeof(a->sa));
	if (!nfs3_dec_diropargs(d, &a->where) || !xdr_dec_u32(d, &a->mode))
		return false;
	switch (a->mode) {
	case NFS3_CREATE_UNCHECKED:
	case NFS3_CREATE_GUARDED:
		return nfs3_dec_sattr(d, &a->sa);
	case NFS3_CREATE_EXCLUSIVE:
		return xdr_dec_fixed(d, a->verf, NFS3_CREATEVERFSIZE);
	default:
		return false;
	}
}

/* §3.3.9 */
bool nfs3_dec_mkdir(struct rpc_call *c, void *args)
{
	struct nfs3_mkdir_args *a = args;

	return nfs3_dec_diropargs(&c->args, &a->where) && nfs3_dec_sattr(&c->args, &a->sa);
}

/* §3.3.10 SYMLINK3args; the path may arrive in a Read chunk (RFC 8267 §4.3). */
bool nfs3_dec_symlink(struct rpc_call *c, void *args)
{
	struct nfs3_symlink_args *a = args;
	struct xdr_dec *d = &c->args;

	if (!nfs3_dec_diropargs(d, &a->where) || !nfs3_dec_sattr(d, &a->sa))
		return false;
	if (!xdr_dec_u32(d, &a->path_len) || a->path_len > NFS3_PATH_DECODE_MAX)
		return false;
	return rpc_dec_ddp(c, a->path_len, &a->path);
}

/* §3.3.11 MKNOD3args: mknoddata3 is a union on ftype3 */
bool nfs3_dec_mknod(struct rpc_call *c, void *args)
{
	struct nfs3_mknod_args *a = args;
	struct xdr_dec *d = &c->args;

	memset(&a->sa, 0, sizeof(a->sa));
	a->major = a->minor = 0;
	if (!nfs3_dec_diropargs(d, &a->where) || !xdr_dec_u32(d, &a->type))
		return false;
	switch (a->type) {
	case NF3CHR:
	case NF3BLK:
		return nfs3_dec_sattr(d, &a->sa) && xdr_dec_u32(d, &a->major) && xdr_dec_u32(d, &a->minor);
	case NF3SOCK:
	case NF3FIFO:
		return nfs3_dec_sattr(d, &a->sa);
	case NF3REG:
	case NF3DIR:
	case NF3LNK:
		return true; /* void arm; the procedure answers NFS3ERR_BADTYPE */
	default:
		return false;
	}
}

/* §3.3.3 LOOKUP, §3.3.12 REMOVE, §3.3.13 RMDIR: diropargs3 */
bool nfs3_dec_dirop(struct rpc_call *c, void *args)
{
	return nfs3_dec_diropargs(&c->args, args);
}

/* §3.3.14 */
bool nfs3_dec_rename(struct rpc_call *c, void *args)
{
	struct nfs3_rename_args *a = args;

	return nfs3_dec_diropargs(&c->args, &a->from) && nfs3_dec_diropargs(&c->args, &a->to);
}

/* §3.3.15 */
bool nfs3_dec_link(struct rpc_call *c, void *args)
{
	struct nfs3_link_args *a = args;

	return nfs3_dec_fh(&c->args, &a->file) && nfs3_dec_diropargs(&c->args, &a->link);
}

/* §3.3.16 READDIR3args: dir, cookie, cookieverf, count */
bool nfs3_dec_readdir(struct rpc_call *c, void *args)
{
	struct nfs3_readdir_args *a = args;
	struct xdr_dec *d = &c->args;

	if (!nfs3_dec_fh(d, &a->fh) || !xdr_dec_u64(d, &a->cookie) ||
	    !xdr_dec_fixed(d, a->verf, NFS3_COOKIEVERFSIZE) || !xdr_dec_u32(d, &a->maxcount))
		return false;
	a->dircount = a->maxcount;
	return true;
}

/* §3.3.17 READDIRPLUS3args: dir, cookie, cookieverf, dircount, maxcount */
bool nfs3_dec_readdirplus(struct rpc_call *c, void *args)
{
	struct nfs3_readdir_args *a = args;
	struct xdr_dec *d = &c->args;

	return nfs3_dec_fh(d, &a->fh) && xdr_dec_u64(d, &a->cookie) &&
	       xdr_dec_fixed(d, a->verf, NFS3_COOKIEVERFSIZE) && xdr_dec_u32(d, &a->dircount) &&
	       xdr_dec_u32(d, &a->maxcount);
}

/* §3.3.21 */
bool nfs3_dec_commit(struct rpc_call *c, void *args)
{
	struct nfs3_commit_args *a = args;
	struct xdr_dec *d = &c->args;

	return nfs3_dec_fh(d, &a->fh) && xdr_dec_u64(d, &a->offset) && xdr_dec_u32(d, &a->count);
}

/* ---- results ---- */

/* nfstime3: unsigned seconds and nanoseconds since the epoch. */
void nfs3_enc_time(struct xdr_enc *e, const struct be_time *t)
{
	xdr_enc_u32(e, (uint32_t)t->sec);
	xdr_enc_u32(e, t->nsec);
}

/* RFC 1813 §2.6 fattr3 (ftype3 numbers are enum be_type's) */
void nfs3_enc_fattr(struct xdr_enc *e, const struct be_attr *a, uint64_t fsid)
{
	xdr_enc_u32(e, a->type != BE_TYPE_NONE ? (uint32_t)a->type : NF3REG);
	xdr_enc_u32(e, a->mode & 07777);
	xdr_enc_u32(e, a->nlink);
	xdr_enc_u32(e, a->uid);
	xdr_enc_u32(e, a->gid);
	xdr_enc_u64(e, a->size);
	xdr_enc_u64(e, a->space_used);
	xdr_enc_u32(e, a->rdev_major); /* specdata3 */
	xdr_enc_u32(e, a->rdev_minor);
	xdr_enc_u64(e, fsid);
	xdr_enc_u64(e, a->fileid);
	nfs3_enc_time(e, &a->atime);
	nfs3_enc_time(e, &a->mtime);
	nfs3_enc_time(e, &a->ctime);
}

void nfs3_enc_post_op_attr(struct xdr_enc *e, const struct be_attr *a, uint64_t fsid)
{
	bool follow = a && a->valid;

	xdr_enc_bool(e, follow);
	if (follow)
		nfs3_enc_fattr(e, a, fsid);
}

/* wcc_data: pre_op_attr (wcc_attr: size, mtime, ctime) then post_op_attr */
void nfs3_enc_wcc(struct xdr_enc *e, const struct nfs3_wcc *w, uint64_t fsid)
{
	bool pre = w && w->pre.valid;

	xdr_enc_bool(e, pre);
	if (pre) {
		xdr_enc_u64(e, w->pre.size);
		nfs3_enc_time(e, &w->pre.mtime);
		nfs3_enc_time(e, &w->pre.ctime);
	}
	nfs3_enc_post_op_attr(e, w ? &w->post : NULL, fsid);
}

void nfs3_enc_fh(struct xdr_enc *e, const struct nfs_fh *fh)
{
	xdr_enc_opaque(e, fh->data, fh->len);
}

void nfs3_enc_post_op_fh(struct xdr_enc *e, const struct nfs_fh *fh)
{
	xdr_enc_bool(e, fh != NULL);
	if (fh)
		nfs3_enc_fh(e, fh);
}

void nfs3_enc_status(struct rpc_call *c, uint32_t status)
{
	xdr_enc_u32(&c->res, status);
	if (status != 0)
		c->proc_failed = true;
}
