/*
 * nfs3_xdr.c - NFSv3 argument decoders and result building blocks
 * (RFC 1813 §2.5-2.6 basic types, §3.3 per-procedure arguments).
 *
 * Two-pass discipline: every length word is compared with its limit before
 * the bytes are taken (xdr_dec_opaque / xdr_dec_inline do the bounds check
 * against what was received); enumerations and booleans are range-checked.
 * Bulk items that RFC 8267 lets travel in Read chunks (WRITE data, SYMLINK
 * path) go through rpc_dec_ddp(). Nothing is copied except handles.
 */
#include <string.h>
#include <sys/sysmacros.h>

#include "nfs/nfs_priv.h"

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

static bool nfs3_dec_time(struct xdr_dec *d, struct nfs3_time *t)
{
	/* nfstime3: nseconds is "less than 1e9"; other values are malformed. */
	return xdr_dec_u32(d, &t->sec) && xdr_dec_u32(d, &t->nsec) && t->nsec < 1000000000u;
}

static bool nfs3_dec_set_u32(struct xdr_dec *d, bool *set, uint32_t *v)
{
	if (!xdr_dec_bool(d, set))
		return false;
	return !*set || xdr_dec_u32(d, v);
}

static bool nfs3_dec_set_time(struct xdr_dec *d, uint32_t *how, struct nfs3_time *t)
{
	/* RFC 1813 §2.6 set_atime / set_mtime: a time_how discriminant */
	if (!xdr_dec_u32(d, how) || *how > NFS3_SET_TO_CLIENT_TIME)
		return false;
	return *how != NFS3_SET_TO_CLIENT_TIME || nfs3_dec_time(d, t);
}

bool nfs3_dec_sattr(struct xdr_dec *d, struct nfs3_sattr *sa)
{
	memset(sa, 0, sizeof(*sa));
	if (!nfs3_dec_set_u32(d, &sa->set_mode, &sa->mode) ||
	    !nfs3_dec_set_u32(d, &sa->set_uid, &sa->uid) ||
	    !nfs3_dec_set_u32(d, &sa->set_gid, &sa->gid))
		return false;
	if (!xdr_dec_bool(d, &sa->set_size))
		return false;
	if (sa->set_size && !xdr_dec_u64(d, &sa->size))
		return false;
	return nfs3_dec_set_time(d, &sa->atime_how, &sa->atime) &&
	       nfs3_dec_set_time(d, &sa->mtime_how, &sa->mtime);
}

/* ---- per-procedure arguments (RFC 1813 §3.3.x) ---- */

bool nfs3_dec_fh_args(struct xdr_dec *d, struct nfs3_fh_args *a)
{
	return nfs3_dec_fh(d, &a->fh);
}

/* §3.3.2 SETATTR3args: object, new_attributes, sattrguard3 */
bool nfs3_dec_setattr(struct xdr_dec *d, struct nfs3_setattr_args *a)
{
	if (!nfs3_dec_fh(d, &a->fh) || !nfs3_dec_sattr(d, &a->sa) || !xdr_dec_bool(d, &a->guard))
		return false;
	return !a->guard || nfs3_dec_time(d, &a->guard_ctime);
}

/* §3.3.4 */
bool nfs3_dec_access(struct xdr_dec *d, struct nfs3_access_args *a)
{
	return nfs3_dec_fh(d, &a->fh) && xdr_dec_u32(d, &a->access);
}

/* §3.3.6 */
bool nfs3_dec_read(struct xdr_dec *d, struct nfs3_read_args *a)
{
	return nfs3_dec_fh(d, &a->fh) && xdr_dec_u64(d, &a->offset) && xdr_dec_u32(d, &a->count);
}

/* §3.3.7 WRITE3args; data may arrive in a Read chunk (RFC 8267 §4.3). */
bool nfs3_dec_write(struct rpc_call *c, struct nfs3_write_args *a)
{
	struct xdr_dec *d = &c->args;

	if (!nfs3_dec_fh(d, &a->fh) || !xdr_dec_u64(d, &a->offset) || !xdr_dec_u32(d, &a->count) ||
	    !xdr_dec_u32(d, &a->stable) || a->stable > NFS3_FILE_SYNC)
		return false;
	if (!xdr_dec_u32(d, &a->len) || a->len > NFS3_MAX_IO)
		return false;
	return rpc_dec_ddp(c, a->len, &a->data);
}

/* §3.3.8 CREATE3args: createhow3 is a union on createmode3 */
bool nfs3_dec_create(struct xdr_dec *d, struct nfs3_create_args *a)
{
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
bool nfs3_dec_mkdir(struct xdr_dec *d, struct nfs3_mkdir_args *a)
{
	return nfs3_dec_diropargs(d, &a->where) && nfs3_dec_sattr(d, &a->sa);
}

/* §3.3.10 SYMLINK3args; the path may arrive in a Read chunk (RFC 8267 §4.3). */
bool nfs3_dec_symlink(struct rpc_call *c, struct nfs3_symlink_args *a)
{
	struct xdr_dec *d = &c->args;

	if (!nfs3_dec_diropargs(d, &a->where) || !nfs3_dec_sattr(d, &a->sa))
		return false;
	if (!xdr_dec_u32(d, &a->path_len) || a->path_len > NFS3_PATH_DECODE_MAX)
		return false;
	return rpc_dec_ddp(c, a->path_len, &a->path);
}

/* §3.3.11 MKNOD3args: mknoddata3 is a union on ftype3 */
bool nfs3_dec_mknod(struct xdr_dec *d, struct nfs3_mknod_args *a)
{
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

/* §3.3.14 */
bool nfs3_dec_rename(struct xdr_dec *d, struct nfs3_rename_args *a)
{
	return nfs3_dec_diropargs(d, &a->from) && nfs3_dec_diropargs(d, &a->to);
}

/* §3.3.15 */
bool nfs3_dec_link(struct xdr_dec *d, struct nfs3_link_args *a)
{
	return nfs3_dec_fh(d, &a->file) && nfs3_dec_diropargs(d, &a->link);
}

/* §3.3.16 READDIR3args: dir, cookie, cookieverf, count */
bool nfs3_dec_readdir(struct xdr_dec *d, struct nfs3_readdir_args *a)
{
	if (!nfs3_dec_fh(d, &a->fh) || !xdr_dec_u64(d, &a->cookie) ||
	    !xdr_dec_fixed(d, a->verf, NFS3_COOKIEVERFSIZE) || !xdr_dec_u32(d, &a->maxcount))
		return false;
	a->dircount = a->maxcount;
	return true;
}

/* §3.3.17 READDIRPLUS3args: dir, cookie, cookieverf, dircount, maxcount */
bool nfs3_dec_readdirplus(struct xdr_dec *d, struct nfs3_readdir_args *a)
{
	return nfs3_dec_fh(d, &a->fh) && xdr_dec_u64(d, &a->cookie) &&
	       xdr_dec_fixed(d, a->verf, NFS3_COOKIEVERFSIZE) && xdr_dec_u32(d, &a->dircount) &&
	       xdr_dec_u32(d, &a->maxcount);
}

/* §3.3.21 */
bool nfs3_dec_commit(struct xdr_dec *d, struct nfs3_commit_args *a)
{
	return nfs3_dec_fh(d, &a->fh) && xdr_dec_u64(d, &a->offset) && xdr_dec_u32(d, &a->count);
}

/* ---- results ---- */

void nfs3_attr_set(struct nfs3_attr *a, const struct stat *st, uint64_t fsid)
{
	a->valid = true;
	a->fsid = fsid;
	a->st = *st;
}

void nfs3_attr_fd(struct nfs3_attr *a, int fd, uint64_t fsid)
{
	a->fsid = fsid;
	a->valid = fd >= 0 && fstat(fd, &a->st) == 0;
}

void nfs3_wcc_pre(struct nfs3_wcc *w, const struct stat *st)
{
	w->pre_valid = true;
	w->pre = *st;
}

void nfs3_wcc_pre_fd(struct nfs3_wcc *w, int fd)
{
	w->pre_valid = fd >= 0 && fstat(fd, &w->pre) == 0;
}

void nfs3_wcc_post_fd(struct nfs3_wcc *w, int fd, uint64_t fsid)
{
	nfs3_attr_fd(&w->post, fd, fsid);
}

uint32_t nfs3_ftype(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return NF3DIR;
	case S_IFBLK:
		return NF3BLK;
	case S_IFCHR:
		return NF3CHR;
	case S_IFLNK:
		return NF3LNK;
	case S_IFSOCK:
		return NF3SOCK;
	case S_IFIFO:
		return NF3FIFO;
	default:
		return NF3REG;
	}
}

/* nfstime3: unsigned seconds and nanoseconds since the epoch. */
void nfs3_enc_time(struct xdr_enc *e, const struct timespec *ts)
{
	xdr_enc_u32(e, (uint32_t)ts->tv_sec);
	xdr_enc_u32(e, (uint32_t)ts->tv_nsec);
}

/* RFC 1813 §2.6 fattr3 */
void nfs3_enc_fattr(struct xdr_enc *e, const struct stat *st, uint64_t fsid)
{
	xdr_enc_u32(e, nfs3_ftype(st->st_mode));
	xdr_enc_u32(e, st->st_mode & 07777);
	xdr_enc_u32(e, (uint32_t)st->st_nlink);
	xdr_enc_u32(e, st->st_uid);
	xdr_enc_u32(e, st->st_gid);
	xdr_enc_u64(e, (uint64_t)st->st_size);
	xdr_enc_u64(e, (uint64_t)st->st_blocks * 512u);
	xdr_enc_u32(e, major(st->st_rdev)); /* specdata3 */
	xdr_enc_u32(e, minor(st->st_rdev));
	xdr_enc_u64(e, fsid);
	xdr_enc_u64(e, (uint64_t)st->st_ino);
	nfs3_enc_time(e, &st->st_atim);
	nfs3_enc_time(e, &st->st_mtim);
	nfs3_enc_time(e, &st->st_ctim);
}

void nfs3_enc_post_op_attr(struct xdr_enc *e, const struct nfs3_attr *a)
{
	xdr_enc_bool(e, a && a->valid);
	if (a && a->valid)
		nfs3_enc_fattr(e, &a->st, a->fsid);
}

/* wcc_data: pre_op_attr (wcc_attr: size, mtime, ctime) then post_op_attr */
void nfs3_enc_wcc(struct xdr_enc *e, const struct nfs3_wcc *w)
{
	xdr_enc_bool(e, w && w->pre_valid);
	if (w && w->pre_valid) {
		xdr_enc_u64(e, (uint64_t)w->pre.st_size);
		nfs3_enc_time(e, &w->pre.st_mtim);
		nfs3_enc_time(e, &w->pre.st_ctim);
	}
	nfs3_enc_post_op_attr(e, w ? &w->post : NULL);
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
