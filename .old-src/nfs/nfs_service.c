/*
 * nfs_service.c - the NFS service's lifetime: registration of NFSv3 (RFC
 * 1813 §3) and MOUNT v3 (RFC 1813 appendix I) with the RPC layer, the
 * export table install/replace, the write verifier.
 *
 * The operation tables: procedures with cache policy RPC_CACHE_DRC are kept
 * in the RPC layer's duplicate request cache (a retransmitted REMOVE must not
 * answer NOENT), as knfsd's RC_REPLBUFF/RC_REPLSTAT procedures; the DDP rules
 * are RFC 8267 §3's, which the RDMA transport reads through rpc_ddp_rule().
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "nfs/nfs.h"
#include "nfs/nfs_priv.h"
#include "core/log.h"

#define NFS_FCACHE_ENTRIES 512

/*
 * Until each handler is split into decode, execute and encode steps, it
 * decodes its arguments and encodes its results itself: it is the execute
 * step, and decode/encode stay NULL.
 */
#define NFS_WHOLE_HANDLER(fn) \
	static enum rpc_proc_status fn##_execute(struct rpc_call *c, void *args, void *res) \
	{ \
		(void)args; \
		(void)res; \
		return fn(c); \
	}

NFS_WHOLE_HANDLER(nfs3_proc_null)
NFS_WHOLE_HANDLER(nfs3_proc_getattr)
NFS_WHOLE_HANDLER(nfs3_proc_setattr)
NFS_WHOLE_HANDLER(nfs3_proc_lookup)
NFS_WHOLE_HANDLER(nfs3_proc_access)
NFS_WHOLE_HANDLER(nfs3_proc_readlink)
NFS_WHOLE_HANDLER(nfs3_proc_read)
NFS_WHOLE_HANDLER(nfs3_proc_write)
NFS_WHOLE_HANDLER(nfs3_proc_create)
NFS_WHOLE_HANDLER(nfs3_proc_mkdir)
NFS_WHOLE_HANDLER(nfs3_proc_symlink)
NFS_WHOLE_HANDLER(nfs3_proc_mknod)
NFS_WHOLE_HANDLER(nfs3_proc_remove)
NFS_WHOLE_HANDLER(nfs3_proc_rmdir)
NFS_WHOLE_HANDLER(nfs3_proc_rename)
NFS_WHOLE_HANDLER(nfs3_proc_link)
NFS_WHOLE_HANDLER(nfs3_proc_readdir)
NFS_WHOLE_HANDLER(nfs3_proc_readdirplus)
NFS_WHOLE_HANDLER(nfs3_proc_fsstat)
NFS_WHOLE_HANDLER(nfs3_proc_fsinfo)
NFS_WHOLE_HANDLER(nfs3_proc_pathconf)
NFS_WHOLE_HANDLER(nfs3_proc_commit)
NFS_WHOLE_HANDLER(mount3_proc_null)
NFS_WHOLE_HANDLER(mount3_proc_mnt)
NFS_WHOLE_HANDLER(mount3_proc_dump)
NFS_WHOLE_HANDLER(mount3_proc_umnt)
NFS_WHOLE_HANDLER(mount3_proc_umntall)
NFS_WHOLE_HANDLER(mount3_proc_export)

/* Result sizes for max_reply (RFC 1813 §2.6, §3.3): XDR bytes. */
#define NFS3_STAT 4u                                 /* nfsstat3 */
#define NFS3_FATTR 84u                               /* fattr3 */
#define NFS3_POST_OP_ATTR (4u + NFS3_FATTR)          /* post_op_attr */
#define NFS3_WCC_DATA (4u + 24u + NFS3_POST_OP_ATTR) /* pre_op_attr (wcc_attr) + post_op_attr */
#define NFS3_FH (4u + NFS3_FHSIZE)                   /* nfs_fh3 */
#define NFS3_POST_OP_FH (4u + NFS3_FH)               /* post_op_fh3 */
#define NFS3_NEWOBJ (NFS3_STAT + NFS3_POST_OP_FH + NFS3_POST_OP_ATTR + NFS3_WCC_DATA)

#define NFS3_ENTRY(num, nm, fn, results, cache_, rule) \
	[num] = {.name = nm, .execute = fn##_execute, .max_reply = (results), .cache = cache_, .ddp = rule}

/* max_reply 0: the reply grows with the client's count (READDIR, READDIRPLUS). */
static const struct rpc_proc nfs3_procs[NFS3PROC_COUNT] = {
	NFS3_ENTRY(NFS3PROC_NULL, "NULL", nfs3_proc_null, RPC_REPLY_MAX(0), RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_GETATTR, "GETATTR", nfs3_proc_getattr, RPC_REPLY_MAX(NFS3_STAT + NFS3_FATTR),
		   RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_SETATTR, "SETATTR", nfs3_proc_setattr, RPC_REPLY_MAX(NFS3_STAT + NFS3_WCC_DATA),
		   RPC_CACHE_DRC, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_LOOKUP, "LOOKUP", nfs3_proc_lookup,
		   RPC_REPLY_MAX(NFS3_STAT + NFS3_FH + 2 * NFS3_POST_OP_ATTR), RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_ACCESS, "ACCESS", nfs3_proc_access, RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 4),
		   RPC_CACHE_NONE, ULB_RULE_NONE),
	/* RFC 8267 §3: the path may leave in a Write chunk (its bytes are DDP data). */
	NFS3_ENTRY(NFS3PROC_READLINK, "READLINK", nfs3_proc_readlink,
		   RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 4), RPC_CACHE_NONE,
		   ULB_RULE_RES(ULB_READLINK_PATH)),
	/* RFC 8267 §3: the data may leave in a Write chunk. */
	NFS3_ENTRY(NFS3PROC_READ, "READ", nfs3_proc_read, RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 3 * 4),
		   RPC_CACHE_NONE, ULB_RULE_RES(ULB_READ_DATA)),
	/* RFC 8267 §3: the data may arrive in a Read chunk. */
	NFS3_ENTRY(NFS3PROC_WRITE, "WRITE", nfs3_proc_write,
		   RPC_REPLY_MAX(NFS3_STAT + NFS3_WCC_DATA + 2 * 4 + NFS3_WRITEVERFSIZE), RPC_CACHE_DRC,
		   ULB_RULE_ARG(ULB_WRITE_DATA)),
	NFS3_ENTRY(NFS3PROC_CREATE, "CREATE", nfs3_proc_create, RPC_REPLY_MAX(NFS3_NEWOBJ), RPC_CACHE_DRC,
		   ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_MKDIR, "MKDIR", nfs3_proc_mkdir, RPC_REPLY_MAX(NFS3_NEWOBJ), RPC_CACHE_DRC,
		   ULB_RULE_NONE),
	/* RFC 8267 §3: the path may arrive in a Read chunk. */
	NFS3_ENTRY(NFS3PROC_SYMLINK, "SYMLINK", nfs3_proc_symlink, RPC_REPLY_MAX(NFS3_NEWOBJ), RPC_CACHE_DRC,
		   ULB_RULE_ARG(ULB_SYMLINK_PATH)),
	NFS3_ENTRY(NFS3PROC_MKNOD, "MKNOD", nfs3_proc_mknod, RPC_REPLY_MAX(NFS3_NEWOBJ), RPC_CACHE_DRC,
		   ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_REMOVE, "REMOVE", nfs3_proc_remove, RPC_REPLY_MAX(NFS3_STAT + NFS3_WCC_DATA),
		   RPC_CACHE_DRC, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_RMDIR, "RMDIR", nfs3_proc_rmdir, RPC_REPLY_MAX(NFS3_STAT + NFS3_WCC_DATA),
		   RPC_CACHE_DRC, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_RENAME, "RENAME", nfs3_proc_rename, RPC_REPLY_MAX(NFS3_STAT + 2 * NFS3_WCC_DATA),
		   RPC_CACHE_DRC, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_LINK, "LINK", nfs3_proc_link,
		   RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + NFS3_WCC_DATA), RPC_CACHE_DRC, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_READDIR, "READDIR", nfs3_proc_readdir, 0, RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_READDIRPLUS, "READDIRPLUS", nfs3_proc_readdirplus, 0, RPC_CACHE_NONE, ULB_RULE_NONE),
	/* fsstat3resok: attributes, six size3, invarsec. */
	NFS3_ENTRY(NFS3PROC_FSSTAT, "FSSTAT", nfs3_proc_fsstat,
		   RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 6 * 8 + 4), RPC_CACHE_NONE, ULB_RULE_NONE),
	/* fsinfo3resok: attributes, seven uint32, maxfilesize, time_delta, properties. */
	NFS3_ENTRY(NFS3PROC_FSINFO, "FSINFO", nfs3_proc_fsinfo,
		   RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 7 * 4 + 8 + 8 + 4), RPC_CACHE_NONE, ULB_RULE_NONE),
	/* pathconf3resok: attributes, linkmax, name_max, four bools. */
	NFS3_ENTRY(NFS3PROC_PATHCONF, "PATHCONF", nfs3_proc_pathconf,
		   RPC_REPLY_MAX(NFS3_STAT + NFS3_POST_OP_ATTR + 2 * 4 + 4 * 4), RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(NFS3PROC_COMMIT, "COMMIT", nfs3_proc_commit,
		   RPC_REPLY_MAX(NFS3_STAT + NFS3_WCC_DATA + NFS3_WRITEVERFSIZE), RPC_CACHE_NONE, ULB_RULE_NONE),
};

/* MOUNT v3 (RFC 1813 appendix I): nothing is DDP-eligible (RFC 8267 §4.4), nothing is cached.
 * MNT: status, fhandle3, at most two auth flavors; DUMP and EXPORT grow with the lists. */
static const struct rpc_proc mount3_procs[MOUNTPROC3_COUNT] = {
	NFS3_ENTRY(MOUNTPROC3_NULL, "NULL", mount3_proc_null, RPC_REPLY_MAX(0), RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(MOUNTPROC3_MNT, "MNT", mount3_proc_mnt, RPC_REPLY_MAX(NFS3_STAT + NFS3_FH + 4 + 2 * 4),
		   RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(MOUNTPROC3_DUMP, "DUMP", mount3_proc_dump, 0, RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(MOUNTPROC3_UMNT, "UMNT", mount3_proc_umnt, RPC_REPLY_MAX(0), RPC_CACHE_NONE, ULB_RULE_NONE),
	NFS3_ENTRY(MOUNTPROC3_UMNTALL, "UMNTALL", mount3_proc_umntall, RPC_REPLY_MAX(0), RPC_CACHE_NONE,
		   ULB_RULE_NONE),
	NFS3_ENTRY(MOUNTPROC3_EXPORT, "EXPORT", mount3_proc_export, 0, RPC_CACHE_NONE, ULB_RULE_NONE),
};

static const struct rpc_version nfs3_versions[] = {
	{ NFS3_VERSION, NFS3PROC_COUNT, nfs3_procs },
};
static const struct rpc_version mount3_versions[] = {
	{ MOUNT_V3, MOUNTPROC3_COUNT, mount3_procs },
};
const struct rpc_program nfs3_program = { NFS3_PROGRAM, "nfs", 1, nfs3_versions };
const struct rpc_program mount3_program = { MOUNT_PROGRAM, "mountd", 1, mount3_versions };

/* RFC 1813 §3.3.7: the write verifier must change when the server restarts
 * (so clients resend UNSTABLE data that may have been lost): start time in
 * the first half, random bits in the second. */
static void nfs3_write_verf_init(void)
{
	uint32_t t = (uint32_t)time(NULL), r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint32_t)clock();
	memcpy(nfs3_write_verf, &t, 4);
	memcpy(nfs3_write_verf + 4, &r, 4);
}

static void nfs_log_exports(const struct nfs_exports *t)
{
	for (unsigned i = 0; i < t->n; i++)
		log_info("nfs: exporting %s (id %#x%s)", t->v[i].cfg->path, t->v[i].id,
			 t->v[i].cloned ? "" : ", submounts refused");
}

int nfs_service_init(const struct rnfsd_config *cfg, struct export_table *exports)
{
	struct nfs_exports *t;

	/* Modes arrive already masked by the client's umask; ours must not mask them again. */
	umask(0);
	nfs3_write_verf_init();
	if (nfs_fh_key_init(cfg->state_dir) < 0)
		return -1;
	nfs_fcache_init(NFS_FCACHE_ENTRIES);
	t = nfs_exports_build(exports);
	if (!t) {
		log_err("nfs: cannot serve the exports (see above)");
		nfs_fcache_release();
		return -1;
	}
	nfs_log_exports(t);
	nfs_exports_install(t);
	if (rpc_register_program(&nfs3_program) != 0 || rpc_register_program(&mount3_program) != 0) {
		nfs_service_shutdown();
		return -1;
	}
	return 0;
}

int nfs_exports_replace(struct export_table *exports)
{
	struct nfs_exports *t = nfs_exports_build(exports);

	if (!t)
		return -1; /* logged; the caller keeps the running table */
	nfs_log_exports(t);
	nfs_exports_install(t);
	return 0;
}

unsigned nfs_exports_count(void)
{
	struct nfs_exports *t = nfs_exports_get();
	unsigned n = t ? t->n : 0;

	nfs_exports_put(t);
	return n;
}

void nfs_service_shutdown(void)
{
	nfs_exports_install(NULL);
	nfs_fcache_release();
	mount3_list_release();
}
