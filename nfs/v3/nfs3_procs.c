/*
 * nfs3_procs.c - the operation tables of NFSv3 (RFC 1813 §3) and MOUNT v3
 * (RFC 1813 appendix I), registered with the RPC layer (the write verifier
 * is every version's: nfs/common/io.c).
 *
 * Each entry: the decode step (nfs3_xdr.c), the execute step (the
 * nfs3_proc_*.c files; READDIR, READDIRPLUS, DUMP and EXPORT encode their
 * streamed results there), the encode step, the scratch sizes of the
 * argument and result structs, the largest reply (the XDR sizes below),
 * the cache policy, and the RFC 8267 DDP rule.
 *
 * Procedures with cache policy RPC_CACHE_DRC are kept in the RPC layer's
 * duplicate request cache (a retransmitted REMOVE must not answer NOENT), as
 * knfsd's RC_REPLBUFF/RC_REPLSTAT procedures. The DDP rules are RFC 8267
 * §4.3's: READ data and the READLINK path may leave in a Write chunk, WRITE
 * data and the SYMLINK path may arrive in a Read chunk; the RDMA transport
 * reads them through rpc_ddp_rule().
 */
#include "nfs/v3/nfs3.h"

/* Result sizes for max_reply (RFC 1813 §2.6, §3.3): XDR bytes. */
#define NFS3_STAT 4u                                 /* nfsstat3 */
#define NFS3_FATTR NFS3_FATTR_BYTES                  /* fattr3 */
#define NFS3_POST_OP_ATTR NFS3_POST_OP_ATTR_BYTES    /* post_op_attr */
#define NFS3_WCC_DATA (4u + 24u + NFS3_POST_OP_ATTR) /* pre_op_attr (wcc_attr) + post_op_attr */
#define NFS3_FH (4u + NFS3_FHSIZE)                   /* nfs_fh3 */
#define NFS3_POST_OP_FH (4u + NFS3_FH)               /* post_op_fh3 */
#define NFS3_NEWOBJ (NFS3_STAT + NFS3_POST_OP_FH + NFS3_POST_OP_ATTR + NFS3_WCC_DATA)

#define NFS3_ENTRY(num, nm, dec, exe, enc, args_t, res_t, results, cache_, rule, ...)                 \
	[num] = { .name = nm, .decode = dec, .execute = exe, .encode = enc,                             \
		  .args_size = RPC_SCRATCH_SIZE(args_t), .res_size = RPC_SCRATCH_SIZE(res_t),            \
		  .max_reply = (results), .cache = cache_, .ddp = rule, __VA_ARGS__ }
/* rpc.h enum rpc_run: NULL runs where it was received; GETATTR and FSINFO
 * (one object's attributes, read as the server: no caller identity to apply)
 * too while the backend answers them from memory (GETATTR declines a file
 * whose NFSv4 write delegation needs a CB_GETATTR); READ there too when its
 * data is in memory and its access check needs no identity (the owner,
 * root, the mode bits without an ACL), else it declines to a worker
 * (BE_IO_NOWAIT); LOOKUP likewise when the directory's search is granted by
 * root or the mode bits (local_lookup), and REMOVE, RMDIR when the removal
 * is (local_unlink_as, tmpfs and ramfs only; with [rnfsd] uring-calls any caller's,
 * the kernel judging through io_uring, local_uring.c), and with uring-calls CREATE and
 * MKDIR of a file or directory with at most a mode (nfs3_proc_create.c, local_create),
 * RENAME (local_rename), WRITE (local_write_here) and COMMIT (tmpfs, ramfs: local_commit);
 * everything else on a worker. ACCESS
 * and PATHCONF (statfs) act as the caller, and the receiving thread must
 * never switch identity (backend/local/identity.c). */
#define ON_RECEIVER .run = RPC_RUN_INLINE
#define ON_RECEIVER_IF_FAST .run = RPC_RUN_INLINE_META
#define ON_RECEIVER_IF_READY .run = RPC_RUN_INLINE_TRY
#define ON_RECEIVER_AS_CALLER .run = RPC_RUN_INLINE_CALLER

struct nfs3_none {
	char unused;
};

/* max_reply 0: the reply grows with the client's count (READDIR, READDIRPLUS). */
static const struct rpc_proc nfs3_procs[NFS3PROC_COUNT] = {
	NFS3_ENTRY(NFS3PROC_NULL, "NULL", NULL, nfs3_null_exec, NULL, struct nfs3_none, struct nfs3_none,
		   RPC_REPLY_MAX(0), RPC_CACHE_NONE, ULB_RULE_NONE, ON_RECEIVER),
	NFS3_ENTRY(NFS3PROC_GETATTR, "GETATTR", nfs3_dec_fh_args, nfs3_getattr_exec, nfs3_getattr_enc,
		   struct nfs3_fh_args, struct nfs3_attr_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_FATTR), RPC_CACHE_NONE,
		   ULB_RULE_NONE, ON_RECEIVER_IF_READY),
	NFS3_ENTRY(NFS3PROC_SETATTR, "SETATTR", nfs3_dec_setattr, nfs3_setattr_exec, nfs3_wcc_enc,
		   struct nfs3_setattr_args, struct nfs3_wcc_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_WCC_DATA),
		   RPC_CACHE_DRC, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_LOOKUP, "LOOKUP", nfs3_dec_dirop, nfs3_lookup_exec, nfs3_lookup_enc,
		   struct nfs3_diropargs, struct nfs3_lookup_res,
		   RPC_REPLY_MAX(NFS3_STAT + NFS3_FH + 2 * NFS3_POST_OP_ATTR), RPC_CACHE_NONE, ULB_RULE_NONE,
		   ON_RECEIVER_IF_READY),
	NFS3_ENTRY(NFS3PROC_ACCESS, "ACCESS", nfs3_dec_access, nfs3_access_exec, nfs3_access_enc,
		   struct nfs3_access_args, struct nfs3_access_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 4),
		   RPC_CACHE_NONE, ULB_RULE_NONE),
	/* RFC 8267 §4.3: the path may leave in a Write chunk (its bytes are DDP data). */
	NFS3_ENTRY(NFS3PROC_READLINK, "READLINK", nfs3_dec_fh_args, nfs3_readlink_exec, nfs3_readlink_enc,
		   struct nfs3_fh_args, struct nfs3_readlink_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 4),
		   RPC_CACHE_NONE, ULB_RULE_RES(ULB_READLINK_PATH)),
	/* RFC 8267 §4.3: the data may leave in a Write chunk. */
	NFS3_ENTRY(NFS3PROC_READ, "READ", nfs3_dec_read, nfs3_read_exec, nfs3_read_enc, struct nfs3_read_args,
		   struct nfs3_read_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 3 * 4), RPC_CACHE_NONE,
		   ULB_RULE_RES(ULB_READ_DATA), ON_RECEIVER_IF_READY),
	/* RFC 8267 §4.3: the data may arrive in a Read chunk. */
	NFS3_ENTRY(NFS3PROC_WRITE, "WRITE", nfs3_dec_write, nfs3_write_exec, nfs3_write_enc, struct nfs3_write_args,
		   struct nfs3_write_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_WCC_DATA + 2 * 4 + NFS3_WRITEVERFSIZE),
		   RPC_CACHE_DRC, ULB_RULE_ARG(ULB_WRITE_DATA), ON_RECEIVER_AS_CALLER),
	NFS3_ENTRY(NFS3PROC_CREATE, "CREATE", nfs3_dec_create, nfs3_create_exec, nfs3_newobj_enc,
		   struct nfs3_create_args, struct nfs3_newobj_res, RPC_REPLY_MAX(NFS3_NEWOBJ), RPC_CACHE_DRC,
		   ULB_RULE_NONE, ON_RECEIVER_AS_CALLER),
	NFS3_ENTRY(NFS3PROC_MKDIR, "MKDIR", nfs3_dec_mkdir, nfs3_mkdir_exec, nfs3_newobj_enc, struct nfs3_mkdir_args,
		   struct nfs3_newobj_res, RPC_REPLY_MAX(NFS3_NEWOBJ), RPC_CACHE_DRC, ULB_RULE_NONE,
		   ON_RECEIVER_AS_CALLER),
	/* RFC 8267 §4.3: the path may arrive in a Read chunk. */
	NFS3_ENTRY(NFS3PROC_SYMLINK, "SYMLINK", nfs3_dec_symlink, nfs3_symlink_exec, nfs3_newobj_enc,
		   struct nfs3_symlink_args, struct nfs3_newobj_res, RPC_REPLY_MAX(NFS3_NEWOBJ), RPC_CACHE_DRC,
		   ULB_RULE_ARG(ULB_SYMLINK_PATH)),
	NFS3_ENTRY(NFS3PROC_MKNOD, "MKNOD", nfs3_dec_mknod, nfs3_mknod_exec, nfs3_newobj_enc, struct nfs3_mknod_args,
		   struct nfs3_newobj_res, RPC_REPLY_MAX(NFS3_NEWOBJ), RPC_CACHE_DRC, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_REMOVE, "REMOVE", nfs3_dec_dirop, nfs3_remove_exec, nfs3_wcc_enc, struct nfs3_diropargs,
		   struct nfs3_wcc_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_WCC_DATA), RPC_CACHE_DRC, ULB_RULE_NONE,
		   ON_RECEIVER_IF_READY),
	NFS3_ENTRY(NFS3PROC_RMDIR, "RMDIR", nfs3_dec_dirop, nfs3_rmdir_exec, nfs3_wcc_enc, struct nfs3_diropargs,
		   struct nfs3_wcc_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_WCC_DATA), RPC_CACHE_DRC, ULB_RULE_NONE,
		   ON_RECEIVER_IF_READY),
	NFS3_ENTRY(NFS3PROC_RENAME, "RENAME", nfs3_dec_rename, nfs3_rename_exec, nfs3_rename_enc,
		   struct nfs3_rename_args, struct nfs3_rename_res, RPC_REPLY_MAX(NFS3_STAT + 2 * NFS3_WCC_DATA),
		   RPC_CACHE_DRC, ULB_RULE_NONE, ON_RECEIVER_AS_CALLER),
	NFS3_ENTRY(NFS3PROC_LINK, "LINK", nfs3_dec_link, nfs3_link_exec, nfs3_link_enc, struct nfs3_link_args,
		   struct nfs3_link_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + NFS3_WCC_DATA), RPC_CACHE_DRC,
		   ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_READDIR, "READDIR", nfs3_dec_readdir, nfs3_readdir_exec, NULL, struct nfs3_readdir_args,
		   struct nfs3_none, 0, RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_READDIRPLUS, "READDIRPLUS", nfs3_dec_readdirplus, nfs3_readdirplus_exec, NULL,
		   struct nfs3_readdir_args, struct nfs3_none, 0, RPC_CACHE_NONE, ULB_RULE_NONE),
	/* fsstat3resok: attributes, six size3, invarsec. */
	NFS3_ENTRY(NFS3PROC_FSSTAT, "FSSTAT", nfs3_dec_fh_args, nfs3_fsstat_exec, nfs3_fsstat_enc, struct nfs3_fh_args,
		   struct nfs3_fs_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 6 * 8 + 4), RPC_CACHE_NONE,
		   ULB_RULE_NONE),
	/* fsinfo3resok: attributes, seven uint32, maxfilesize, time_delta, properties. */
	NFS3_ENTRY(NFS3PROC_FSINFO, "FSINFO", nfs3_dec_fh_args, nfs3_fsinfo_exec, nfs3_fsinfo_enc, struct nfs3_fh_args,
		   struct nfs3_fs_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 7 * 4 + 8 + 8 + 4), RPC_CACHE_NONE,
		   ULB_RULE_NONE, ON_RECEIVER_IF_FAST),
	/* pathconf3resok: attributes, linkmax, name_max, four bools. */
	NFS3_ENTRY(NFS3PROC_PATHCONF, "PATHCONF", nfs3_dec_fh_args, nfs3_pathconf_exec, nfs3_pathconf_enc,
		   struct nfs3_fh_args, struct nfs3_fs_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 2 * 4 + 4 * 4),
		   RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_COMMIT, "COMMIT", nfs3_dec_commit, nfs3_commit_exec, nfs3_commit_enc,
		   struct nfs3_commit_args, struct nfs3_write_res,
		   RPC_REPLY_MAX(NFS3_STAT + NFS3_WCC_DATA + NFS3_WRITEVERFSIZE), RPC_CACHE_NONE, ULB_RULE_NONE,
		   ON_RECEIVER_AS_CALLER),
};

/* MOUNT v3 (RFC 1813 appendix I): nothing is DDP-eligible (RFC 8267 §4.4), nothing is cached.
 * MNT: status, fhandle3, at most two auth flavors; DUMP and EXPORT grow with the lists. */
static const struct rpc_proc mount3_procs[MOUNTPROC3_COUNT] = {
	NFS3_ENTRY(MOUNTPROC3_NULL, "NULL", NULL, mount3_null_exec, NULL, struct nfs3_none, struct nfs3_none,
		   RPC_REPLY_MAX(0), RPC_CACHE_NONE, ULB_RULE_NONE, ON_RECEIVER),
	NFS3_ENTRY(MOUNTPROC3_MNT, "MNT", mount3_dec_dirpath, mount3_mnt_exec, mount3_mnt_enc,
		   struct mount3_dirpath_args, struct mount3_mnt_res, RPC_REPLY_MAX(NFS3_STAT + NFS3_FH + 4 + 5 * 4),
		   RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(MOUNTPROC3_DUMP, "DUMP", NULL, mount3_dump_exec, NULL, struct nfs3_none, struct nfs3_none, 0,
		   RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(MOUNTPROC3_UMNT, "UMNT", mount3_dec_dirpath, mount3_umnt_exec, NULL, struct mount3_dirpath_args,
		   struct nfs3_none, RPC_REPLY_MAX(0), RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(MOUNTPROC3_UMNTALL, "UMNTALL", NULL, mount3_umntall_exec, NULL, struct nfs3_none,
		   struct nfs3_none, RPC_REPLY_MAX(0), RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(MOUNTPROC3_EXPORT, "EXPORT", NULL, mount3_export_exec, NULL, struct nfs3_none, struct nfs3_none, 0,
		   RPC_CACHE_NONE, ULB_RULE_NONE),
};

static const struct rpc_version nfs3_versions[] = {
	{ NFS3_VERSION, NFS3PROC_COUNT, nfs3_procs },
};
static const struct rpc_version mount3_versions[] = {
	{ MOUNT_V3, MOUNTPROC3_COUNT, mount3_procs },
};
const struct rpc_program nfs3_program = { NFS3_PROGRAM, "nfs", 1, nfs3_versions };
const struct rpc_program mount3_program = { MOUNT_PROGRAM, "mountd", 1, mount3_versions };

int nfs3_register(void)
{
	if (rpc_register_program(&nfs3_program) != 0 || rpc_register_program(&mount3_program) != 0)
		return -1;
	return 0;
}
