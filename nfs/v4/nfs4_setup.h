/*
 * nfs4_setup.h - setting up and releasing the NFSv4 server's live state
 * (struct nfs4_server, nfs4_server.h) and its lease-expiry timer
 * (nfs4_setup.c). Called by the state's owner, the NFS service
 * (nfs/nfs_service.c), by the daemon for the timer, and by the fuzzers.
 */
#ifndef RNFSD_NFS4_SETUP_H
#define RNFSD_NFS4_SETUP_H

#include "nfs/v4/nfs4_server.h"

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

#endif
