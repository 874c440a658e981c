/*
 * nfs4_server.h - the NFSv4 server's live state: the client records and
 * sessions (struct nfs4_ctab, state/nfs4_clients.h), the open state (struct
 * nfs4_stab, state/nfs4_stateid.h), their settings, the server's name, and
 * the lease expiry over them (nfs4_server.c).
 *
 * Ownership: the NFS service (nfs/nfs_service.c) holds the one instance,
 * sets it up when it registers NFSv4 and releases it at shutdown (both in
 * nfs4_setup.c, with the hooks into the other modules and the lease-expiry
 * timer). A COMPOUND reaches it through its service state (struct nfs4_svc's
 * srv, nfs4.h; nfs4_srv(x)); what acts outside a COMPOUND gets it as a
 * parameter (the timer at nfs4_expiry_start(), the stats at
 * nfs4_stats_serve(), the lock waiters at nfs4_lock_notify_wait()). The
 * delegation table stays in ops/nfs4_proc_deleg.c (NFSv3 reaches it without
 * a COMPOUND); it gets the boot time and the lease at set-up.
 */
#ifndef RNFSD_NFS4_SERVER_H
#define RNFSD_NFS4_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/workers.h"
#include "nfs/v4/state/nfs4_clients.h"
#include "nfs/v4/state/nfs4_stateid.h"

/* What GETATTR announces (RFC 8881 §5.8.1.11): the default of [nfsv4] lease-time. */
#define NFS4_LEASE_TIME 90u
/* so_major_id and eir_server_scope (RFC 8881 §2.10.4): the host name, at most this long. */
#define NFS4_SERVER_NAME_MAX 256u

/* The settings of the live state (rnfsd.conf(5) [nfsv4]; 0 everywhere: the defaults). */
struct nfs4_server_cfg {
	unsigned lease_s;                 /* lease-time (0: NFS4_LEASE_TIME) */
	unsigned max_clients;             /* max-clients (0: NFS4_STATE_MAX_CLIENTS) */
	unsigned per_host, per_principal; /* max-clients-per-host, -per-principal (0: nfs4_clients.h's) */
	size_t reply_cache;               /* reply-cache-size (0: nfs4_clients.h's) */
	/* The open state table's descriptor bounds (nfs4_stab_limits(); 0 keeps one): max-open-files,
	 * max-open-files-per-client, max-lock-owners-per-client as the descriptor budget derived them. */
	unsigned max_files, opens_per_client, locks_per_client;
};

struct nfs4_server {
	struct nfs4_ctab ctab;            /* client records and NFSv4.1 sessions */
	struct nfs4_stab stab;            /* open state, purged with its client records */
	struct nfs4_server_cfg cfg;       /* as given to nfs4_server_init() */
	uint32_t lease;                   /* seconds (cfg.lease_s or NFS4_LEASE_TIME) */
	char name[NFS4_SERVER_NAME_MAX];  /* so_major_id and eir_server_scope */
	uint8_t princ_key[16];            /* SipHash key of RPCSEC_GSS principals' names (nfs4_principal()) */
	bool ready;                       /* between nfs4_server_init() and _release() (nfs4_setup.h) */
	_Atomic uint64_t last_tick;       /* the second leases were last expired in */
	/* What else runs out with leases (set up by nfs4_server_init(): offloaded copies' results, lock
	 * waiters), so the operations that expire leases on the way call no run-time module. */
	void (*expire_more)(struct nfs4_server *srv, uint64_t now);
	/* The lease-expiry timer (nfs4_expiry_start()): the loop's event, the worker's item. */
	struct loop_ev *expiry_ev;
	struct work expiry_work;
	atomic_bool expiry_queued;        /* the work item is queued or running */
};

/* The clock of leases and delegations: CLOCK_MONOTONIC seconds. */
static inline uint64_t nfs4_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/* Expire leases at most once a second (RFC 8881 §8.3; 4.0 clients have no EXCHANGE_ID), with what
 * runs out with them (expire_more): by the timer, and on the way by the operations acting for a client. */
void nfs4_server_tick(struct nfs4_server *srv);

#endif
