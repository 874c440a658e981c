/*
 * nfs3_xdr.h - NFSv3 XDR (RFC 1813 §2, §3.3): decoded argument structures,
 * their decoders, and the result building blocks (fattr3, post_op_attr,
 * wcc_data, post_op_fh3). Decoders never copy bulk data: names, paths and
 * WRITE data point into the call message (or a Read chunk), which lives as
 * long as the call. A decoder returns false on any malformed or truncated
 * input; the handler then answers GARBAGE_ARGS.
 */
#ifndef RNFSD_NFS3_XDR_H
#define RNFSD_NFS3_XDR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "nfs/nfs3_const.h"
#include "rpc/rpc.h"

/* Largest READ/WRITE payload (FSINFO rtmax/wtmax, RFC 1813 §3.3.19). */
#define NFS3_MAX_IO (1024u * 1024u)
/* Decode limits for variable-length strings. A filename3 or nfspath3 longer
 * than the file system allows is answered NAMETOOLONG, not GARBAGE_ARGS, so
 * the decoder accepts up to these and the procedure checks the real limit. */
#define NFS3_NAME_DECODE_MAX 4096u
#define NFS3_PATH_DECODE_MAX 65536u

/* nfs_fh3 (RFC 1813 §2.5): opaque<NFS3_FHSIZE>. */
struct nfs_fh {
	uint32_t len;
	uint8_t data[NFS3_FHSIZE];
};

/* filename3: bytes as received, not NUL-terminated (see nfs3_name_copy). */
struct nfs3_name {
	const uint8_t *p;
	uint32_t len;
};

struct nfs3_time {
	uint32_t sec, nsec;
};

/* RFC 1813 §2.6 diropargs3 */
struct nfs3_diropargs {
	struct nfs_fh dir;
	struct nfs3_name name;
};

/* RFC 1813 §2.6 sattr3 */
struct nfs3_sattr {
	bool set_mode, set_uid, set_gid, set_size;
	uint32_t mode, uid, gid;
	uint64_t size;
	uint32_t atime_how, mtime_how; /* enum nfs3_time_how */
	struct nfs3_time atime, mtime;
};

struct nfs3_fh_args {
	struct nfs_fh fh;
};

struct nfs3_setattr_args {
	struct nfs_fh fh;
	struct nfs3_sattr sa;
	bool guard;
	struct nfs3_time guard_ctime;
};

struct nfs3_access_args {
	struct nfs_fh fh;
	uint32_t access;
};

struct nfs3_read_args {
	struct nfs_fh fh;
	uint64_t offset;
	uint32_t count;
};

struct nfs3_write_args {
	struct nfs_fh fh;
	uint64_t offset;
	uint32_t count;
	uint32_t stable;
	const uint8_t *data;
	uint32_t len;
};

struct nfs3_create_args {
	struct nfs3_diropargs where;
	uint32_t mode; /* enum nfs3_createmode */
	struct nfs3_sattr sa;
	uint8_t verf[NFS3_CREATEVERFSIZE];
};

struct nfs3_mkdir_args {
	struct nfs3_diropargs where;
	struct nfs3_sattr sa;
};

struct nfs3_symlink_args {
	struct nfs3_diropargs where;
	struct nfs3_sattr sa;
	const uint8_t *path;
	uint32_t path_len;
};

struct nfs3_mknod_args {
	struct nfs3_diropargs where;
	uint32_t type; /* ftype3 */
	struct nfs3_sattr sa;
	uint32_t major, minor;
};

struct nfs3_rename_args {
	struct nfs3_diropargs from, to;
};

struct nfs3_link_args {
	struct nfs_fh file;
	struct nfs3_diropargs link;
};

/* READDIR (dircount = count) and READDIRPLUS. */
struct nfs3_readdir_args {
	struct nfs_fh fh;
	uint64_t cookie;
	uint8_t verf[NFS3_COOKIEVERFSIZE];
	uint32_t dircount, maxcount;
};

struct nfs3_commit_args {
	struct nfs_fh fh;
	uint64_t offset;
	uint32_t count;
};

bool nfs3_dec_fh(struct xdr_dec *d, struct nfs_fh *fh);
bool nfs3_dec_name(struct xdr_dec *d, struct nfs3_name *n);
bool nfs3_dec_diropargs(struct xdr_dec *d, struct nfs3_diropargs *a);
bool nfs3_dec_sattr(struct xdr_dec *d, struct nfs3_sattr *sa);

bool nfs3_dec_fh_args(struct xdr_dec *d, struct nfs3_fh_args *a);
bool nfs3_dec_setattr(struct xdr_dec *d, struct nfs3_setattr_args *a);
bool nfs3_dec_access(struct xdr_dec *d, struct nfs3_access_args *a);
bool nfs3_dec_read(struct xdr_dec *d, struct nfs3_read_args *a);
bool nfs3_dec_write(struct rpc_call *c, struct nfs3_write_args *a);
bool nfs3_dec_create(struct xdr_dec *d, struct nfs3_create_args *a);
bool nfs3_dec_mkdir(struct xdr_dec *d, struct nfs3_mkdir_args *a);
bool nfs3_dec_symlink(struct rpc_call *c, struct nfs3_symlink_args *a);
bool nfs3_dec_mknod(struct xdr_dec *d, struct nfs3_mknod_args *a);
bool nfs3_dec_rename(struct xdr_dec *d, struct nfs3_rename_args *a);
bool nfs3_dec_link(struct xdr_dec *d, struct nfs3_link_args *a);
bool nfs3_dec_readdir(struct xdr_dec *d, struct nfs3_readdir_args *a);
bool nfs3_dec_readdirplus(struct xdr_dec *d, struct nfs3_readdir_args *a);
bool nfs3_dec_commit(struct xdr_dec *d, struct nfs3_commit_args *a);

/* ---- results ---- */

#define NFS3_FATTR_BYTES 84u
#define NFS3_POST_OP_ATTR_BYTES (4u + NFS3_FATTR_BYTES)

/* post_op_attr: attributes if valid. fsid is the export's (all objects of an export share it). */
struct nfs3_attr {
	bool valid;
	uint64_t fsid;
	struct stat st;
};

/* wcc_data (RFC 1813 §2.6): pre-op wcc_attr from a stat before the change, post-op after. */
struct nfs3_wcc {
	bool pre_valid;
	struct stat pre;
	struct nfs3_attr post;
};

void nfs3_attr_set(struct nfs3_attr *a, const struct stat *st, uint64_t fsid);
/* fstat(fd) into a (invalid on failure). */
void nfs3_attr_fd(struct nfs3_attr *a, int fd, uint64_t fsid);
void nfs3_wcc_pre(struct nfs3_wcc *w, const struct stat *st);
void nfs3_wcc_pre_fd(struct nfs3_wcc *w, int fd);
void nfs3_wcc_post_fd(struct nfs3_wcc *w, int fd, uint64_t fsid);

uint32_t nfs3_ftype(mode_t mode);
void nfs3_enc_time(struct xdr_enc *e, const struct timespec *ts);
void nfs3_enc_fattr(struct xdr_enc *e, const struct stat *st, uint64_t fsid);
void nfs3_enc_post_op_attr(struct xdr_enc *e, const struct nfs3_attr *a);
void nfs3_enc_wcc(struct xdr_enc *e, const struct nfs3_wcc *w);
void nfs3_enc_fh(struct xdr_enc *e, const struct nfs_fh *fh);
/* The procedure's status word (nfsstat3 or mountstat3; 0 is OK). A non-zero
 * status is also counted as an error in the per-procedure statistics. */
void nfs3_enc_status(struct rpc_call *c, uint32_t status);
/* post_op_fh3: fh or NULL */
void nfs3_enc_post_op_fh(struct xdr_enc *e, const struct nfs_fh *fh);

#endif
