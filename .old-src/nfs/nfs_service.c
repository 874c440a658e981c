/*
 * nfs_service.c - the NFS service's lifetime: registration of NFSv3 (RFC
 * 1813 §3) and MOUNT v3 (RFC 1813 appendix I) with the RPC layer, the
 * export table install/replace, the write verifier.
 *
 * Procedures marked nonidempotent are kept in the RPC layer's duplicate
 * request cache (a retransmitted REMOVE must not answer NOENT), as knfsd's
 * RC_REPLBUFF/RC_REPLSTAT procedures.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "nfs/nfs.h"
#include "nfs/nfs_priv.h"
#include "daemon/log.h"

#define NFS_FCACHE_ENTRIES 512

static const struct rpc_proc nfs3_procs[NFS3PROC_COUNT] = {
	[NFS3PROC_NULL] = { "NULL", nfs3_proc_null, false },
	[NFS3PROC_GETATTR] = { "GETATTR", nfs3_proc_getattr, false },
	[NFS3PROC_SETATTR] = { "SETATTR", nfs3_proc_setattr, true },
	[NFS3PROC_LOOKUP] = { "LOOKUP", nfs3_proc_lookup, false },
	[NFS3PROC_ACCESS] = { "ACCESS", nfs3_proc_access, false },
	[NFS3PROC_READLINK] = { "READLINK", nfs3_proc_readlink, false },
	[NFS3PROC_READ] = { "READ", nfs3_proc_read, false },
	[NFS3PROC_WRITE] = { "WRITE", nfs3_proc_write, true },
	[NFS3PROC_CREATE] = { "CREATE", nfs3_proc_create, true },
	[NFS3PROC_MKDIR] = { "MKDIR", nfs3_proc_mkdir, true },
	[NFS3PROC_SYMLINK] = { "SYMLINK", nfs3_proc_symlink, true },
	[NFS3PROC_MKNOD] = { "MKNOD", nfs3_proc_mknod, true },
	[NFS3PROC_REMOVE] = { "REMOVE", nfs3_proc_remove, true },
	[NFS3PROC_RMDIR] = { "RMDIR", nfs3_proc_rmdir, true },
	[NFS3PROC_RENAME] = { "RENAME", nfs3_proc_rename, true },
	[NFS3PROC_LINK] = { "LINK", nfs3_proc_link, true },
	[NFS3PROC_READDIR] = { "READDIR", nfs3_proc_readdir, false },
	[NFS3PROC_READDIRPLUS] = { "READDIRPLUS", nfs3_proc_readdirplus, false },
	[NFS3PROC_FSSTAT] = { "FSSTAT", nfs3_proc_fsstat, false },
	[NFS3PROC_FSINFO] = { "FSINFO", nfs3_proc_fsinfo, false },
	[NFS3PROC_PATHCONF] = { "PATHCONF", nfs3_proc_pathconf, false },
	[NFS3PROC_COMMIT] = { "COMMIT", nfs3_proc_commit, false },
};

static const struct rpc_proc mount3_procs[MOUNTPROC3_COUNT] = {
	[MOUNTPROC3_NULL] = { "NULL", mount3_proc_null, false },
	[MOUNTPROC3_MNT] = { "MNT", mount3_proc_mnt, false },
	[MOUNTPROC3_DUMP] = { "DUMP", mount3_proc_dump, false },
	[MOUNTPROC3_UMNT] = { "UMNT", mount3_proc_umnt, false },
	[MOUNTPROC3_UMNTALL] = { "UMNTALL", mount3_proc_umntall, false },
	[MOUNTPROC3_EXPORT] = { "EXPORT", mount3_proc_export, false },
};

static const struct rpc_version nfs3_versions[] = {
	{ NFS3_VERSION, NFS3PROC_COUNT, nfs3_procs },
};
static const struct rpc_version mount3_versions[] = {
	{ MOUNT_V3, MOUNTPROC3_COUNT, mount3_procs },
};
static const struct rpc_program nfs3_program = { NFS3_PROGRAM, "nfs", 1, nfs3_versions };
static const struct rpc_program mount3_program = { MOUNT_PROGRAM, "mountd", 1, mount3_versions };

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
		log_err("nfs: out of memory building the export table");
		nfs_fcache_release();
		return -1;
	}
	nfs_log_exports(t);
	nfs_exports_install(t);
	rpc_register_program(&nfs3_program);
	rpc_register_program(&mount3_program);
	return 0;
}

int nfs_exports_replace(struct export_table *exports)
{
	struct nfs_exports *t = nfs_exports_build(exports);

	if (!t) {
		log_err("nfs: out of memory building the new export table; keeping the old one");
		return -1;
	}
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
