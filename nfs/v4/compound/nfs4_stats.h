/*
 * nfs4_stats.h - NFSv4 statistics for the stats socket and rnfsctl:
 * per-operation counters (calls, errors, time, fed through the COMPOUND
 * engine's op_done hook for every operation it runs), the snapshot of clients,
 * sessions, open state, delegations and the grace period (struct
 * nfs4_stats_snap) of the server handed to nfs4_stats_serve(), and the
 * sections of the stats document built from them ("nfs4_operations", "nfs4",
 * "nfs4_async", "nfs4_bounds", "nfs4_limits", "nfs4_delegations",
 * "nfs4_callbacks", "pnfs_data_servers"), which main
 * adds to core/stats.h's registry when NFSv4 is served.
 * Counters are atomics in static storage: nothing is allocated.
 */
#ifndef RNFSD_NFS4_STATS_H
#define RNFSD_NFS4_STATS_H

#include <stdint.h>

#include "core/stats.h"
#include "nfs/v4/state/nfs4_deleg.h"

struct nfs4_server;

/* Any thread: one operation of a COMPOUND ran (op: its number, OP_ILLEGAL for unknown ones). */
void nfs4_stats_op(uint32_t op, uint32_t status, uint64_t ns);
/* NFSv4 state, the "nfs4", "nfs4_async", "nfs4_bounds" and "nfs4_limits" objects of the document. */
struct nfs4_stats_snap {
	unsigned clients, sessions;           /* client records (confirmed or not), sessions */
	uint64_t opens, locks, delegations;   /* state counts (n4state): open and lock stateids, delegations */
	uint64_t open_files, open_owners, lock_owners; /* file records (a descriptor each), owners */
	uint64_t open_files_max, opens_per_client_max, lock_owners_per_client_max; /* nfs4_stab_limits() */
	uint64_t recalls, returned, revoked;  /* delegations recalled (CB_RECALL), returned, revoked */
	uint64_t deleg_leases, deleg_lease_refused; /* files leased for delegations; grants undone without one */
	uint64_t cb_getattr_sent, cb_getattr_unanswered; /* CB_GETATTR (RFC 8881 §10.4.3); not answered in time */
	uint64_t dir_delegations, dir_granted, dir_recalls; /* directory delegations (RFC 8881 §10.9): held (of
							     * delegations), granted and recalled since start */
	/* "nfs4_delegations": delegations by kind (disjoint), recalls by cause, revocations by reason
	 * (nfs4_deleg.h), and CB_NOTIFYs sent (RFC 8881 §20.4, directory delegations' notifications). */
	struct nfs4_dl_counts dl;
	uint64_t cb_notify_sent;
	uint64_t cb_notify_pending; /* CB_NOTIFY (RFC 8881 §20.4) queued or in flight (a gauge) */
	unsigned recorded_clients;            /* stable records (state-dir/nfs4-clients) */
	uint64_t grace_left_ms;               /* the server's grace period (NLM or NFSv4 term) */
	uint64_t reclaims, grace_refused, no_grace; /* nfs4_grace_check() verdicts */
	/* Asynchronous COPY (RFC 7862 §4.8) and the callbacks of this work. */
	uint64_t copies_async_started, copies_async_done, copies_async_cancelled;
	uint64_t cb_offload_sent, cb_notify_lock_sent;
	/* Tables with a fixed bound (docs/architecture.md, "NFSv4 tables and their bounds"): in use, bound. */
	unsigned offloads, offloads_max;           /* asynchronous copies (running or unreported) */
	unsigned sync_copies, sync_copies_max;     /* synchronous COPYs holding a worker */
	uint64_t sync_copies_refused;              /* COPYs answered NFS4ERR_DELAY for want of a share */
	unsigned lock_waiters, lock_waiters_max;   /* CB_NOTIFY_LOCK waiters */
	unsigned cb_getattr_waiters, cb_getattr_waiters_max; /* workers waiting for CB_GETATTR answers */
	unsigned revoked_stateids, revoked_stateids_max; /* stateids revoked by the administrator, remembered */
	unsigned delegations_max;
	unsigned callback_paths, callback_paths_max;
	unsigned callback_gss_contexts;            /* 4.0 callback paths' RPCSEC_GSS contexts (nfs4_cb_gss_contexts) */
	unsigned layouts, layouts_max;             /* pNFS layout records (a client's layouts of a file) */
	uint64_t layout_errors;                    /* data-server errors clients reported (LAYOUTERROR ...) */
	unsigned layout_recalling;                 /* layouts being recalled (CB_LAYOUTRECALL sent, not returned) */
	uint64_t layout_recalls, layout_recalls_returned, layouts_revoked; /* since start */
	/* The shared tables' bounds (issue 24): NFSv4.1 reply caches granted and their budget, new client
	 * records refused (table, host's or principal's share full), idle sessions reclaimed, the stable
	 * record table's size. */
	uint64_t reply_cache_bytes, reply_cache_limit, clients_refused, sessions_reclaimed;
	unsigned recorded_clients_max;
};

/* One NFSv4 client's callback path (nfs/v4/cb/nfs4_cb.h), an entry of "nfs4_callbacks". */
struct nfs4_stats_cb {
	uint64_t clientid;
	unsigned minor;        /* 0: NFSv4.0 callback service; 1, 2: a 4.1 / 4.2 session's back channel */
	const char *state;     /* "none", "probing", "up", "down" */
	const char *transport; /* "tcp", "rdma", "-" */
	uint64_t sent, ok, failed;
	const char *flavor;    /* the callbacks' credential: "sys", "none", "-" (none usable) */
};
typedef void (*nfs4_stats_cb_fn)(const struct nfs4_stats_cb *c, void *arg);

/* Operations called at least once, as "nfs" version 4 entries. */
void nfs4_stats_ops_foreach(stats_proc_cb cb, void *arg);
/* Main thread, before the snapshot is read: the server whose tables it reports
 * (nfs4_server.h; NULL: none, their counts read 0). */
void nfs4_stats_serve(struct nfs4_server *srv);
/* Any thread: a snapshot of the server's NFSv4 state. */
void nfs4_stats_state(struct nfs4_stats_snap *out);
/* Each client's callback path (nfs4_cb.h). */
void nfs4_stats_cb_foreach(nfs4_stats_cb_fn cb, void *arg);

/* What the sections read: the three functions above, or a test's stand-ins. */
/* One pNFS data server ([pnfs] data-servers, nfs/v4/ops/nfs4_pnfs.h), an entry of "pnfs_data_servers". */
struct nfs4_stats_ds {
	const char *addr;
	unsigned port;
	const char *transport;  /* "tcp" or "rdma" */
	uint64_t layouts;       /* layouts that sent clients there */
	uint64_t errors;        /* errors clients reported of it */
	bool unavailable;       /* taken out of new layouts now */
};
typedef void (*nfs4_stats_ds_fn)(const struct nfs4_stats_ds *d, void *arg);
void nfs4_stats_ds_foreach(nfs4_stats_ds_fn cb, void *arg);

struct nfs4_stats_sources {
	void (*ops_foreach)(stats_proc_cb cb, void *arg);
	void (*state)(struct nfs4_stats_snap *out);
	void (*cb_foreach)(nfs4_stats_cb_fn cb, void *arg);
	void (*ds_foreach)(nfs4_stats_ds_fn cb, void *arg); /* NULL: no "pnfs_data_servers" section */
};
/* Main thread, before serving: add the NFSv4 sections to the stats document
 * (STATS_PLACE_STATE). src NULL: this server's; copied. 0, or -1 (the registry is full). */
int nfs4_stats_sections_add(const struct nfs4_stats_sources *src);
/* Tests: every counter back to zero. */
void nfs4_stats_reset(void);

#endif
