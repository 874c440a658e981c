/*
 * nfs4_server.h - the NFSv4 server's live state and its one owner: the client
 * records and sessions (struct nfs4_ctab, state/nfs4_clients.h), the open
 * state (struct nfs4_stab, state/nfs4_stateid.h), their settings, the
 * server's name, and the wiring that lets a client record's end reach the
 * modules keeping something for it (callback path, delegations, copies, lock
 * waiters, its stable record).
 *
 * Ownership: the NFS service (nfs/common/service.c) holds the one instance,
 * sets it up when it registers NFSv4 (nfs4_server_init) and releases it at
 * shutdown. A COMPOUND reaches it through its service state (struct
 * nfs4_svc's srv, nfs4.h; nfs4_srv(x)); what acts outside a COMPOUND gets it
 * as a parameter (the lease-expiry timer at nfs4_expiry_start(), the stats at
 * nfs4_stats_serve(), the lock waiters at nfs4_lock_notify_wait()). The
 * delegation table stays in ops/nfs4_proc_deleg.c (NFSv3 reaches it without
 * a COMPOUND); it gets the boot time and the lease here at nfs4_server_init.
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
	bool ready;                       /* between nfs4_server_init() and _release() */
	_Atomic uint64_t last_tick;       /* the second leases were last expired in */
	/* What else runs out with leases (nfs4_server_init() sets it: offloaded copies' results, lock
	 * waiters), so the operations that expire leases on the way call no run-time module. */
	void (*expire_more)(struct nfs4_server *srv, uint64_t now);
	/* The lease-expiry timer (nfs4_expiry_start()): the loop's event, the worker's item. */
	struct loop_ev *expiry_ev;
	struct work expiry_work;
	atomic_bool expiry_queued;        /* the work item is queued or running */
};

/* Main thread, before serving: the tables set up with cfg (NULL: the defaults), the hooks wired,
 * the delegation table and the lock waiters started. */
void nfs4_server_init(struct nfs4_server *srv, const struct nfs4_server_cfg *cfg);
/* Shutdown (idempotent): copies stopped, every client's state purged, the tables released. */
void nfs4_server_release(struct nfs4_server *srv);

struct loop;
/* The loop's one-second timer that queues nfs4_server_tick() on a worker (expiry releases locks and
 * closes files: never on the loop thread), so a quiet server still expires leases. 0 or -1. */
int nfs4_expiry_start(struct nfs4_server *srv, struct loop *loop);
/* Before workers_stop(): a queued expiry still runs and completes there. */
void nfs4_expiry_stop(struct nfs4_server *srv);

/* The clock of leases and delegations: CLOCK_MONOTONIC seconds. */
static inline uint64_t nfs4_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/* Expire leases at most once a second (RFC 8881 §8.3; 4.0 clients have no EXCHANGE_ID), with what
 * runs out with them (expire_more): by the timer, and on the way by the operations acting for a client. */
static inline void nfs4_server_tick(struct nfs4_server *srv)
{
	uint64_t now = nfs4_now(), last = atomic_load(&srv->last_tick);

	if (now != last && atomic_compare_exchange_strong(&srv->last_tick, &last, now)) {
		nfs4_ctab_expire(&srv->ctab, now);
		if (srv->expire_more)
			srv->expire_more(srv, now);
	}
}

#endif
