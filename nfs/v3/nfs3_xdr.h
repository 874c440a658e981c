/*
 * nfs3_xdr.h - NFSv3 XDR (RFC 1813 §2, §3.3): the decoded argument and the
 * result structures of each procedure (the operation table's per-call
 * scratch), the decode steps, and the result encoders. Results hold
 * backend-neutral attributes (struct be_attr); the encoders turn them into
 * fattr3, post_op_attr and wcc_data.
 *
 * Decoders never copy bulk data: names, paths and WRITE data point into the
 * call message (or a Read chunk), which lives as long as the call. A decoder
 * returns false on any malformed or truncated input: GARBAGE_ARGS.
 */
#ifndef RNFSD_NFS3_XDR_H
#define RNFSD_NFS3_XDR_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "nfs/common/nfs_common.h"
#include "nfs/v3/nfs3_const.h"
#include "rpc/rpc.h"

/* Largest READ/WRITE payload (FSINFO rtmax/wtmax, RFC 1813 §3.3.19). */
#define NFS3_MAX_IO (1024u * 1024u)
/* Decode limits for variable-length strings. A filename3 or nfspath3 longer
 * than the file system allows is answered NAMETOOLONG, not GARBAGE_ARGS, so
 * the decoder accepts up to these and the procedure checks the real limit. */
#define NFS3_NAME_DECODE_MAX 4096u
#define NFS3_PATH_DECODE_MAX 65536u

/* filename3: bytes as received, not NUL-terminated (see nfs3_name_copy). */
struct nfs3_name {
	const uint8_t *p;
	uint32_t len;
};

/* ---- arguments (RFC 1813 §3.3.x) ---- */

/* RFC 1813 §2.6 diropargs3 */
struct nfs3_diropargs {
	struct nfs_fh dir;
	struct nfs3_name name;
};

/* GETATTR, READLINK, FSSTAT, FSINFO, PATHCONF */
struct nfs3_fh_args {
	struct nfs_fh fh;
};

struct nfs3_setattr_args {
	struct nfs_fh fh;
	struct be_sattr sa;        /* sattr3 */
	bool guard;
	struct be_time guard_ctime;
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
	struct be_sattr sa;
	uint8_t verf[NFS3_CREATEVERFSIZE];
};

struct nfs3_mkdir_args {
	struct nfs3_diropargs where;
	struct be_sattr sa;
};

struct nfs3_symlink_args {
	struct nfs3_diropargs where;
	struct be_sattr sa;
	const uint8_t *path;
	uint32_t path_len;
};

struct nfs3_mknod_args {
	struct nfs3_diropargs where;
	uint32_t type; /* ftype3 */
	struct be_sattr sa;
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
bool nfs3_dec_sattr(struct xdr_dec *d, struct be_sattr *sa);

/* The operation table's decode steps (args: the procedure's struct above). */
bool nfs3_dec_fh_args(struct rpc_call *c, void *args);
bool nfs3_dec_setattr(struct rpc_call *c, void *args);
bool nfs3_dec_access(struct rpc_call *c, void *args);
bool nfs3_dec_read(struct rpc_call *c, void *args);
bool nfs3_dec_write(struct rpc_call *c, void *args);
bool nfs3_dec_create(struct rpc_call *c, void *args);
bool nfs3_dec_mkdir(struct rpc_call *c, void *args);
bool nfs3_dec_symlink(struct rpc_call *c, void *args);
bool nfs3_dec_mknod(struct rpc_call *c, void *args);
bool nfs3_dec_dirop(struct rpc_call *c, void *args); /* LOOKUP, REMOVE, RMDIR */
bool nfs3_dec_rename(struct rpc_call *c, void *args);
bool nfs3_dec_link(struct rpc_call *c, void *args);
bool nfs3_dec_readdir(struct rpc_call *c, void *args);
bool nfs3_dec_readdirplus(struct rpc_call *c, void *args);
bool nfs3_dec_commit(struct rpc_call *c, void *args);

/* ---- results ----
 * Every result starts with status (nfsstat3) and fsid (the export's id, the
 * fattr3 fsid of all its objects). An attribute with valid == 0 encodes as
 * "no attributes" in a post_op_attr or pre_op_attr. */

#define NFS3_FATTR_BYTES 84u
#define NFS3_POST_OP_ATTR_BYTES (4u + NFS3_FATTR_BYTES)

/* wcc_data (RFC 1813 §2.6): the object before (size, mtime, ctime) and after a change. */
struct nfs3_wcc {
	struct be_attr pre, post;
};

/* GETATTR (attr on success) */
struct nfs3_attr_res {
	uint32_t status, fsid;
	struct be_attr attr;
};

/* SETATTR, REMOVE, RMDIR */
struct nfs3_wcc_res {
	uint32_t status, fsid;
	struct nfs3_wcc wcc;
};

struct nfs3_lookup_res {
	uint32_t status, fsid;
	struct nfs_fh fh;
	struct be_attr obj, dir;
};

struct nfs3_access_res {
	uint32_t status, fsid;
	struct be_attr attr;
	uint32_t granted;
};

struct nfs3_readlink_res {
	uint32_t status, fsid;
	struct be_attr attr;
	const char *path; /* in the payload area (a Write chunk's source) */
	uint32_t len;
};

struct nfs3_read_res {
	uint32_t status, fsid;
	struct be_attr attr;
	uint32_t count;
	bool eof;
	bool piped;          /* the data waits in the call's payload pipe (rpc_payload_pipe) */
	const uint8_t *data; /* in the payload area (not piped) */
};

/* WRITE, COMMIT (count, committed: WRITE only) */
struct nfs3_write_res {
	uint32_t status, fsid;
	struct nfs3_wcc wcc;
	uint32_t count, committed;
};

/* CREATE, MKDIR, SYMLINK, MKNOD */
struct nfs3_newobj_res {
	uint32_t status, fsid;
	bool have_fh;
	struct nfs_fh fh;
	struct be_attr attr;
	struct nfs3_wcc dir;
};

struct nfs3_rename_res {
	uint32_t status, fsid;
	struct nfs3_wcc from, to;
};

struct nfs3_link_res {
	uint32_t status, fsid;
	struct be_attr attr;
	struct nfs3_wcc dir;
};

/* FSSTAT, FSINFO, PATHCONF */
struct nfs3_fs_res {
	uint32_t status, fsid;
	struct be_attr attr;
	struct be_statfs sf; /* FSSTAT, PATHCONF */
};

void nfs3_enc_time(struct xdr_enc *e, const struct be_time *t);
void nfs3_enc_fattr(struct xdr_enc *e, const struct be_attr *a, uint64_t fsid);
void nfs3_enc_post_op_attr(struct xdr_enc *e, const struct be_attr *a, uint64_t fsid);
void nfs3_enc_wcc(struct xdr_enc *e, const struct nfs3_wcc *w, uint64_t fsid);
void nfs3_enc_fh(struct xdr_enc *e, const struct nfs_fh *fh);
/* post_op_fh3: fh or NULL */
void nfs3_enc_post_op_fh(struct xdr_enc *e, const struct nfs_fh *fh);
/* The procedure's status word (nfsstat3 or mountstat3; 0 is OK). A non-zero
 * status is also counted as an error in the per-procedure statistics. */
void nfs3_enc_status(struct rpc_call *c, uint32_t status);

#endif
