/*
 * nfs.h - the NFS service as the daemon sees it (nfs_service.c): NFSv3
 * (RFC 1813), MOUNT v3 and, unless "[nfsv4] enable = no", NFSv4 registered
 * with the RPC layer, serving a table of exports.
 */
#ifndef RNFSD_NFS_H
#define RNFSD_NFS_H

#include "conf/config.h"
#include "conf/exports.h"

struct rpc_program;
struct nfs4_server;

/* The operation tables nfs_service_init() registers (also read by tests). */
extern const struct rpc_program nfs3_program;
extern const struct rpc_program mount3_program;

/*
 * Main thread, before serving: open every export root, load (or create) the
 * file-handle key under cfg->state_dir, register NFS 3 (and 4) and MOUNT 3
 * with the RPC layer. Takes ownership of *exports on success (and empties it).
 * Returns 0 or -1 (logged).
 */
int nfs_service_init(const struct rnfsd_config *cfg, struct export_table *exports);

/*
 * Loop thread (SIGHUP): replace the export table. New exports are served at
 * once; calls already running finish against the table they started with.
 * Takes ownership of *exports on success. Returns 0, or -1 and the old table
 * stays (logged).
 */
int nfs_exports_replace(struct export_table *exports);

/* Main thread, before nfs_service_init(): the NFSv4 open state's descriptor bounds as the daemon's
 * budget derived them ([nfsv4] max-open-files, -per-client, max-lock-owners-per-client; 0 keeps one). */
void nfs_service_nfs4_bounds(unsigned max_files, unsigned opens_per_client, unsigned locks_per_client);
/* The NFSv4 server's live state the service owns (nfs/v4/nfs4_server.h), for what runs beside the
 * COMPOUNDs (the daemon's lease-expiry timer, the fuzzers' checks); NULL when NFSv4 is not served. */
struct nfs4_server *nfs_service_nfs4(void);

/* Any thread: a deep copy of the export table being served (conf/exports_edit.h), for the control
 * socket's export list and edits (daemon/ctl_exports.c). 0, or -1 (out of memory, or none served). */
int nfs_exports_copy(struct export_table *out);

/* Loop thread (rnfsctl unlock --export): release every client's NLM and NFSv4 state on the export
 * at path (on a worker, soon after); it stays exported. 0, ENOENT (not exported) or ENOMEM. */
int nfs_exports_unlock(const char *path);

/* rnfsctl client list: one NFSv4 client record. */
struct nfs_client_info {
	uint64_t clientid;
	char addr[48];        /* where it was made from ("" unknown) */
	const char *version;  /* "4.0" or "4.1+" */
	bool confirmed;
	unsigned sessions, opens, locks;
	unsigned delegations, layouts; /* held (recalled and revoked delegations included) */
	uint64_t idle_s;      /* since its lease was last renewed */
};
/* At most max NFSv4 client records into out: how many (0 without NFSv4). */
unsigned nfs_service_clients(struct nfs_client_info *out, unsigned max);

/* rnfsctl layouts: one pNFS layout record (a client's layouts of one file). */
struct nfs_layout_info {
	uint64_t clientid;
	uint32_t export_id;   /* the export's id (rnfsctl export list's "id") */
	char fh[2 * 128 + 1]; /* the file's NFSv4 handle in hex */
	const char *iomodes;  /* "read", "rw" or "read+rw" */
	uint32_t seqid;
	bool recalled;        /* CB_LAYOUTRECALL sent, not yet returned */
	uint64_t recalled_s;  /* since then */
};
/* At most max layout records into out: how many (0 without NFSv4 or pNFS). */
unsigned nfs_service_layouts(struct nfs_layout_info *out, unsigned max);

/* rnfsctl client revoke: the NFSv4 client records named by who ("0x..." a client id, else an
 * address they were made from) end as if their lease had; *busy: those with a call running, left.
 * How many ended. */
unsigned nfs_service_client_revoke(const char *who, unsigned *busy);

/* Number of exports served, for status lines. */
unsigned nfs_exports_count(void);
/* Main thread, before serving: the per-export counters' statistics section (nfs/common/export_stats.c). */
int nfs_stats_sections_add(void);

void nfs_service_shutdown(void);

#endif
