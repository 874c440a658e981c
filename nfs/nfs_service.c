/*
 * nfs_service.c - registration of NFSv3 (RFC 1813) and MOUNT v3 (RFC 1813
 * appendix I) with the RPC layer, and the service's lifetime.
 *
 * SKELETON: every procedure but NULL answers NFS3ERR_NOTSUPP / MNT3ERR_NOTSUPP
 * with a correctly shaped failure body, so the daemon links and clients get
 * a well-formed error while the handlers are filled in.
 */
#include "nfs/nfs.h"
#include "nfs/nfs3_const.h"
#include "rpc/rpc.h"
#include "daemon/log.h"

/* Number of XDR "false" words in each procedure's failure arm (RFC 1813 §3.3). */
static const unsigned char nfs3_fail_words[NFS3PROC_COUNT] = {
	[NFS3PROC_GETATTR] = 0, [NFS3PROC_SETATTR] = 2, [NFS3PROC_LOOKUP] = 1,
	[NFS3PROC_ACCESS] = 1, [NFS3PROC_READLINK] = 1, [NFS3PROC_READ] = 1,
	[NFS3PROC_WRITE] = 2, [NFS3PROC_CREATE] = 2, [NFS3PROC_MKDIR] = 2,
	[NFS3PROC_SYMLINK] = 2, [NFS3PROC_MKNOD] = 2, [NFS3PROC_REMOVE] = 2,
	[NFS3PROC_RMDIR] = 2, [NFS3PROC_RENAME] = 4, [NFS3PROC_LINK] = 3,
	[NFS3PROC_READDIR] = 1, [NFS3PROC_READDIRPLUS] = 1, [NFS3PROC_FSSTAT] = 1,
	[NFS3PROC_FSINFO] = 1, [NFS3PROC_PATHCONF] = 1, [NFS3PROC_COMMIT] = 2,
};

static enum rpc_proc_status nfs3_proc_null(struct rpc_call *c)
{
	(void)c;
	return RPC_PROC_OK;
}

static enum rpc_proc_status nfs3_proc_notsupp(struct rpc_call *c)
{
	xdr_enc_u32(&c->res, NFS3ERR_NOTSUPP);
	for (unsigned i = 0; c->proc < NFS3PROC_COUNT && i < nfs3_fail_words[c->proc]; i++)
		xdr_enc_bool(&c->res, false);
	return c->res.overflow ? RPC_PROC_SYSERR : RPC_PROC_OK;
}

static enum rpc_proc_status mount3_proc_notsupp(struct rpc_call *c)
{
	if (c->proc == MOUNTPROC3_MNT)
		xdr_enc_u32(&c->res, MNT3ERR_NOTSUPP);
	else if (c->proc == MOUNTPROC3_DUMP || c->proc == MOUNTPROC3_EXPORT)
		xdr_enc_bool(&c->res, false); /* empty list */
	return c->res.overflow ? RPC_PROC_SYSERR : RPC_PROC_OK;
}

#define NFS3_STUB(n, nonidem) { n, nfs3_proc_notsupp, nonidem }
static const struct rpc_proc nfs3_procs[NFS3PROC_COUNT] = {
	{ "NULL", nfs3_proc_null, false },
	NFS3_STUB("GETATTR", false), NFS3_STUB("SETATTR", true),
	NFS3_STUB("LOOKUP", false), NFS3_STUB("ACCESS", false),
	NFS3_STUB("READLINK", false), NFS3_STUB("READ", false),
	NFS3_STUB("WRITE", true), NFS3_STUB("CREATE", true),
	NFS3_STUB("MKDIR", true), NFS3_STUB("SYMLINK", true),
	NFS3_STUB("MKNOD", true), NFS3_STUB("REMOVE", true),
	NFS3_STUB("RMDIR", true), NFS3_STUB("RENAME", true),
	NFS3_STUB("LINK", true), NFS3_STUB("READDIR", false),
	NFS3_STUB("READDIRPLUS", false), NFS3_STUB("FSSTAT", false),
	NFS3_STUB("FSINFO", false), NFS3_STUB("PATHCONF", false),
	NFS3_STUB("COMMIT", false),
};

static const struct rpc_proc mount3_procs[MOUNTPROC3_COUNT] = {
	{ "NULL", nfs3_proc_null, false },
	{ "MNT", mount3_proc_notsupp, false },
	{ "DUMP", mount3_proc_notsupp, false },
	{ "UMNT", mount3_proc_notsupp, false },
	{ "UMNTALL", mount3_proc_notsupp, false },
	{ "EXPORT", mount3_proc_notsupp, false },
};

static const struct rpc_version nfs3_versions[] = {
	{ NFS3_VERSION, NFS3PROC_COUNT, nfs3_procs },
};
static const struct rpc_version mount3_versions[] = {
	{ MOUNT_V3, MOUNTPROC3_COUNT, mount3_procs },
};
static const struct rpc_program nfs3_program = { NFS3_PROGRAM, "nfs", 1, nfs3_versions };
static const struct rpc_program mount3_program = { MOUNT_PROGRAM, "mountd", 1, mount3_versions };

static struct export_table nfs_table;

int nfs_service_init(const struct rnfsd_config *cfg, struct export_table *exports)
{
	(void)cfg;
	nfs_table = *exports;
	exports->exports = NULL;
	exports->n = 0;
	rpc_register_program(&nfs3_program);
	rpc_register_program(&mount3_program);
	log_info("nfs: serving %u exports (skeleton: procedures answer NOTSUPP)", nfs_table.n);
	return 0;
}

int nfs_exports_replace(struct export_table *exports)
{
	exports_free(&nfs_table);
	nfs_table = *exports;
	exports->exports = NULL;
	exports->n = 0;
	return 0;
}

unsigned nfs_exports_count(void)
{
	return nfs_table.n;
}

void nfs_service_shutdown(void)
{
	exports_free(&nfs_table);
}
