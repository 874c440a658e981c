/*
 * nfs3.h - NFSv3 (RFC 1813) and MOUNT v3 (appendix I) inside nfs/v3/,
 * grouped by the file that implements it, so this header is also a map:
 *
 *   nfs3_procs.c        the operation tables registered with the RPC layer:
 *                       decode/execute/encode steps, scratch sizes, the
 *                       largest reply, cache policy, RFC 8267 DDP rules
 *   nfs3_call.c         what every procedure does around its work: handle
 *                       envelope -> export -> admission -> identity -> backend;
 *                       errno -> nfsstat3
 *   nfs3_xdr.c          argument decoders and result encoders (nfs3_xdr.h)
 *   nfs3_proc_attr.c    GETATTR, SETATTR, ACCESS, FSSTAT, FSINFO, PATHCONF
 *   nfs3_proc_dir.c     LOOKUP, READDIR, READDIRPLUS
 *   nfs3_proc_io.c      READLINK, READ, WRITE, COMMIT
 *   nfs3_proc_create.c  CREATE, MKDIR, SYMLINK, MKNOD
 *   nfs3_proc_remove.c  REMOVE, RMDIR, RENAME, LINK
 *   mount3.c            MOUNT v3 and the mount list; errno -> mountstat3
 *
 * Each procedure is three steps: decode (nfs3_xdr.c) fills its argument
 * struct; execute talks to the export's backend and fills its result struct
 * with backend-neutral attributes (READDIR streams its entries into the
 * reply instead); encode writes the XDR. No step makes a file-system system
 * call: the backend does (backend/backend.h).
 */
#ifndef RNFSD_NFS3_H
#define RNFSD_NFS3_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "conf/exports.h"
#include "nfs/common/nfs_common.h"
#include "nfs/v3/nfs3_const.h"
#include "nfs/v3/nfs3_xdr.h"
#include "rpc/rpc.h"

/* ---- nfs3_procs.c ---- */
extern const struct rpc_program nfs3_program;
extern const struct rpc_program mount3_program;
/* Register both programs with the RPC layer. 0 or -1 (logged). */
int nfs3_register(void);

/* ---- nfs3_call.c ---- */

struct nfs3_call {
	struct rpc_call *rpc;
	struct nfs_exports *tbl;          /* referenced for the whole call */
	const struct nfs_export *exp;     /* export of the first handle */
	const struct export_opts *opts;   /* this client's options on exp */
	struct be_fs *fs;                 /* exp's backend instance */
	struct be_cred cred;              /* the caller, squashed by opts */
};

void nfs3_call_begin(struct nfs3_call *nc, struct rpc_call *c);
/* Verify a handle's envelope and admit the caller to its export (a second
 * handle must be in the same export: XDEV); bh: the backend's bytes. */
uint32_t nfs3_call_export(struct nfs3_call *nc, const struct nfs_fh *fh, struct be_handle *bh);
/* The above + the object (attr: its attributes; may be NULL). */
uint32_t nfs3_call_open(struct nfs3_call *nc, const struct nfs_fh *fh, struct be_obj *o, struct be_attr *attr);
/* The above for a directory: NOTDIR otherwise (attr still filled, o released). */
uint32_t nfs3_call_open_dir(struct nfs3_call *nc, const struct nfs_fh *fh, struct be_obj *o, struct be_attr *attr);
/* RFC 1813 §3.3: modifying procedures on a read-only export fail with NFS3ERR_ROFS. */
uint32_t nfs3_call_writable(const struct nfs3_call *nc);
/* RFC 1813 §3.3: a namespace or attribute change is on stable storage before the
 * reply (sync exports; exports(5) "async" skips it, as knfsd). */
void nfs3_call_commit_meta(struct nfs3_call *nc, const struct be_obj *o);
/* Attributes of o now (for wcc post-op and post_op_attr), valid 0 if o is empty or it fails. */
void nfs3_call_getattr(struct nfs3_call *nc, const struct be_obj *o, struct be_attr *out);
/* The client's handle of o (NFS3_FHSIZE at most). */
uint32_t nfs3_call_fh(struct nfs3_call *nc, const struct be_obj *o, struct nfs_fh *fh);
/* The export's id (fattr3 fsid), 0 before one was found. */
uint32_t nfs3_call_fsid(const struct nfs3_call *nc);
void nfs3_call_put(struct nfs3_call *nc, struct be_obj *o);
void nfs3_call_end(struct nfs3_call *nc);
/* Checks a filename3 (RFC 1813 §2.5): 1..BE_NAME_MAX bytes, no '/', no NUL; copies it NUL-terminated. */
uint32_t nfs3_name_copy(const struct nfs3_name *n, char out[BE_NAME_MAX + 1]);
/* errno (or BE_E*) -> nfsstat3 (nfs/common/errmap.c's numbers, which are nfsstat3's) */
uint32_t nfs_errno_to_nfsstat3(int err);
uint32_t nfs3_stat(int err); /* the same, shorter */

/* ---- the procedures (nfs3_proc_*.c): execute and encode steps (decode: nfs3_xdr.h) ---- */
#define NFS3_EXEC(name) enum rpc_proc_status nfs3_##name##_exec(struct rpc_call *c, void *args, void *res)
#define NFS3_ENC(name) void nfs3_##name##_enc(struct rpc_call *c, const void *res)

NFS3_EXEC(null);
NFS3_EXEC(getattr);
NFS3_ENC(getattr);
NFS3_EXEC(setattr);
NFS3_ENC(wcc); /* SETATTR, REMOVE, RMDIR */
NFS3_EXEC(access);
NFS3_ENC(access);
NFS3_EXEC(fsstat);
NFS3_ENC(fsstat);
NFS3_EXEC(fsinfo);
NFS3_ENC(fsinfo);
NFS3_EXEC(pathconf);
NFS3_ENC(pathconf);
NFS3_EXEC(lookup);
NFS3_ENC(lookup);
NFS3_EXEC(readdir);     /* encodes its results (streamed entries) */
NFS3_EXEC(readdirplus); /* encodes its results (streamed entries) */
NFS3_EXEC(readlink);
NFS3_ENC(readlink);
NFS3_EXEC(read);
NFS3_ENC(read);
NFS3_EXEC(write);
NFS3_ENC(write);
NFS3_EXEC(commit);
NFS3_ENC(commit);
NFS3_EXEC(create);
NFS3_EXEC(mkdir);
NFS3_EXEC(symlink);
NFS3_EXEC(mknod);
NFS3_ENC(newobj); /* CREATE, MKDIR, SYMLINK, MKNOD */
NFS3_EXEC(remove);
NFS3_EXEC(rmdir);
NFS3_EXEC(rename);
NFS3_ENC(rename);
NFS3_EXEC(link);
NFS3_ENC(link);

/* ---- mount3.c ---- */
/* dirpath: string<MNTPATHLEN> as received, no NUL inside (copy it with mount3_dirpath_copy) */
struct mount3_dirpath_args {
	const uint8_t *p;
	uint32_t len;
};

struct mount3_mnt_res {
	uint32_t status;
	struct nfs_fh fh;
	uint32_t nsec;                       /* flavors the export allows this client */
	uint8_t sec_order[EXPORT_SEC_COUNT]; /* their EXPORT_SEC_* bit numbers, in sec='s order */
};

/* The MOUNT flavor number of the sec= flavor with EXPORT_SEC_* bit number bit (RFC 2623 §2.7). Pure. */
uint32_t mount3_auth_flavor(unsigned bit);
bool mount3_dec_dirpath(struct rpc_call *c, void *args);
enum rpc_proc_status mount3_null_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status mount3_mnt_exec(struct rpc_call *c, void *args, void *res);
void mount3_mnt_enc(struct rpc_call *c, const void *res);
enum rpc_proc_status mount3_dump_exec(struct rpc_call *c, void *args, void *res);   /* encodes */
enum rpc_proc_status mount3_umnt_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status mount3_umntall_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status mount3_export_exec(struct rpc_call *c, void *args, void *res); /* encodes */
void mount3_list_release(void);
/* errno (or BE_E*) -> mountstat3 (appendix I) */
uint32_t nfs_errno_to_mountstat3(int err);

#endif
