/*
 * nfs4_lock_notify.h - CB_NOTIFY_LOCK for NFSv4.1+ blocking locks at run
 * time (nfs4_lock_notify.c; RFC 8881 §20.11, §9.6); the waiters' table is
 * nfs4_lockwait.h.
 */
#ifndef RNFSD_NFS4_LOCK_NOTIFY_H
#define RNFSD_NFS4_LOCK_NOTIFY_H

#include <stdint.h>

#include "nfs/common/nfs_common.h"

struct nfs4_stab;

/* nfs4_server_init / _release: the backend's release listener on and off. */
void nfs4_lock_notify_start(void);
void nfs4_lock_notify_stop(void);
/* LOCK: clientid's blocking lock on fh by lock owner owner_id (the backend's
 * id, nfs4_stateid.h, looked up in stab: the server's open state) was denied;
 * now in the caller's seconds. */
void nfs4_lock_notify_wait(struct nfs4_stab *stab, uint64_t clientid, const struct nfs_fh *fh, uint64_t owner_id,
			   uint64_t now);
/* The client went: its waiters go. */
void nfs4_lock_notify_client_gone(uint64_t clientid);
/* Periodic: waiters older than a lease go (both in seconds). */
void nfs4_lock_notify_tick(uint64_t now, uint64_t lease);
/* CB_NOTIFY_LOCK queued so far. */
uint64_t nfs4_lock_notify_sent(void);
/* Waiters recorded now (of NFS4_LOCKWAIT_MAX). */
unsigned nfs4_lock_notify_waiters(void);

#endif
