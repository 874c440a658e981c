/*
 * nfs4_pnfs.h - the pNFS metadata server at run time (nfs4_proc_layout.c,
 * its recalls nfs4_layout_recall.c):
 * flexible-files layouts (RFC 8435) on exports with pnfs=flexfiles, handed
 * out over the data servers of rnfsd.conf's [pnfs] section. The operations
 * GETDEVICEINFO (RFC 8881 §18.40), GETDEVICELIST (§18.41), LAYOUTGET (§18.43), LAYOUTRETURN
 * (§18.44), LAYOUTCOMMIT (§18.42), and NFSv4.2's LAYOUTERROR and
 * LAYOUTSTATS (RFC 7862 §15.6, §15.7); the hooks the rest of the server
 * calls (EXCHANGE_ID's flag, CLOSE's return-on-close, the client purge,
 * the recalls of conflicting changes and of a removed export, the tick,
 * SEQUENCE's flag), and the counters the statistics and rnfsctl read.
 *
 * Tight coupling (RFC 8435 §2.2): the file handle in a layout is the
 * metadata server's own; every data server is an rnfsd over the same file
 * system with the same handle key, so the handle is valid there, and it
 * checks the caller's own AUTH_SYS or Kerberos identity as for any NFSv3
 * call: no synthetic ids, no fencing. The metadata server may be one of its
 * own data servers.
 *
 * The state: one layout table (state/nfs4_layout.h) under a mutex, the data
 * servers and until when each is not handed out (a client reported it
 * failing); set up by nfs4_server_init() (nfs4_pnfs_init) after the NFS
 * service gave the configuration (nfs4_pnfs_configure).
 */
#ifndef RNFSD_NFS4_PNFS_H
#define RNFSD_NFS4_PNFS_H

#include <stdbool.h>
#include <stdint.h>

#include "nfs/v4/compound/nfs4_compound.h"

#define NFS4_PNFS_DS_MAX 8u

/* A data server as rnfsd.conf gives it ([pnfs] data-servers). */
struct nfs4_pnfs_ds {
	char addr[64]; /* numeric IPv4 or IPv6 address */
	uint16_t port;
	bool rdma;
};

/* Before nfs4_server_init(): the data servers (n at most NFS4_PNFS_DS_MAX) and
 * [pnfs] ds-unavailable-seconds. Without a call: no data server, no layouts. */
void nfs4_pnfs_configure(const struct nfs4_pnfs_ds *ds, unsigned n, unsigned unavailable_s);
/* nfs4_server_init() / _release(): the layout table (boot as the other tables'; lease: the
 * server's, a recall's wait). A metadata server sets nfs/common's layout hook. */
void nfs4_pnfs_init(uint32_t boot, uint32_t lease);
void nfs4_pnfs_release(void);

/* EXCHANGE_ID: is this server a metadata server (any data server configured)?
 * RFC 8881 §13.1, §18.35.3: then EXCHGID4_FLAG_USE_PNFS_MDS. */
bool nfs4_pnfs_mds(void);
/* Any layout record held (or a revoked client still flagged)? A hint without the lock. */
bool nfs4_pnfs_held(void);
/* The client record went: its layouts go. */
void nfs4_pnfs_client_gone(uint64_t clientid);
/* CLOSE: the client holds no open of the file any more: its return-on-close layouts go
 * (RFC 8881 §18.43.3). */
void nfs4_pnfs_closed(uint64_t clientid, const uint8_t *fkey, uint32_t fkey_len);

/* RFC 8881 §12.5.5: a change to the file (its handle's bytes) by another than client except (0:
 * NFSv3, no client) recalls the layouts other clients hold of it (CB_LAYOUTRECALL FILE); with
 * peer, not those got from peer's address. Never waits. Any thread. */
struct sockaddr;
void nfs4_pnfs_recall_file(const uint8_t *fkey, uint32_t fkey_len, uint64_t except, const struct sockaddr *peer);
/* (The same for a name: nfs4_name_recall(), nfs4.h.) */
/* The export (its id) went: its layouts are revoked, each holder gets CB_LAYOUTRECALL FSID. */
void nfs4_pnfs_export_gone(uint32_t fsid);
/* The server's tick (every second): recalls unanswered for a lease are revoked (§12.5.5.1), those
 * answered DELAY sent again (§20.3.4). */
void nfs4_pnfs_tick(uint64_t now);
/* SEQUENCE: SEQ4_STATUS_RECALLABLE_STATE_REVOKED while a layout of the client was revoked within a
 * lease (§18.46.3), else 0. */
uint32_t nfs4_pnfs_seq_flags(uint64_t clientid);

/* rnfsctl client list: the layouts (one file's each) clientid holds. */
unsigned nfs4_pnfs_client_layouts(uint64_t clientid);

/* rnfsctl layouts: at most max layout records into out (nfs4_layout.h); how many. */
struct nfs4_lo_info;
unsigned nfs4_pnfs_list(struct nfs4_lo_info *out, unsigned max);

/* The statistics' numbers. */
struct nfs4_pnfs_stats {
	unsigned layouts;     /* layout records held (a client's layouts of one file) */
	unsigned clients;     /* clients holding any */
	uint64_t granted, returned, closed, purged; /* since start */
	unsigned recalling;   /* layouts being recalled now */
	uint64_t recalls, recall_returned, revoked; /* CB_LAYOUTRECALLs sent, returned, revoked (since start) */
	unsigned nds;
	struct {
		struct nfs4_pnfs_ds ds; /* as configured */
		uint64_t layouts;  /* layouts that sent clients there */
		uint64_t errors;   /* errors clients reported of it (LAYOUTERROR, LAYOUTRETURN) */
		bool unavailable;  /* not handed out now */
	} ds[NFS4_PNFS_DS_MAX];
};
void nfs4_pnfs_stats(struct nfs4_pnfs_stats *out);

/* The operations (nfs4_op_table.c). */
uint32_t nfs4_getdeviceinfo_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_getdeviceinfo_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_getdevicelist_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_getdevicelist_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_layoutget_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_layoutget_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_layoutreturn_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_layoutreturn_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_layoutcommit_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_layoutcommit_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_layouterror_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_layoutstats_exec(struct nfs4_ctx *x, void *args, void *res);

#endif
