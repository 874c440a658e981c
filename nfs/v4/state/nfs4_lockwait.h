/*
 * nfs4_lockwait.h - the table of NFSv4.1+ clients waiting for a blocking
 * lock (RFC 8881 §9.6, §20.11) as a pure module (the caller locks and gives
 * the time): a LOCK of type READW_LT/WRITEW_LT denied by a conflict records
 * (client, file handle, lock owner); when a lock is released the waiters
 * are taken out to be sent CB_NOTIFY_LOCK (a hint: the client retries its
 * LOCK, §20.11.4, and is recorded again if still denied).
 *
 * Bounds: NFS4_LOCKWAIT_MAX entries in total, NFS4_LOCKWAIT_PER_CLIENT per
 * client (add answers false beyond: that client polls, as without
 * notification); an entry goes after a lease (the client stopped waiting),
 * when taken, or with its client.
 */
#ifndef RNFSD_NFS4_LOCKWAIT_H
#define RNFSD_NFS4_LOCKWAIT_H

#include <stdbool.h>
#include <stdint.h>

#define NFS4_LOCKWAIT_MAX 128u
#define NFS4_LOCKWAIT_PER_CLIENT 16u
#define NFS4_LOCKWAIT_FH_MAX 128u     /* nfs_fh4 */
#define NFS4_LOCKWAIT_OWNER_MAX 1024u /* lock_owner4.owner */

struct nfs4_lockwait {
	bool used;
	uint64_t clientid;       /* whom to call */
	uint64_t since;          /* recorded (or refreshed) at, the caller's clock */
	uint32_t fh_len;
	uint8_t fh[NFS4_LOCKWAIT_FH_MAX];
	uint64_t owner_clientid; /* lock_owner4 (RFC 8881 §3.3.9 state_owner4) */
	uint32_t owner_len;
	uint8_t owner[NFS4_LOCKWAIT_OWNER_MAX];
};

struct nfs4_lockwait_tab {
	struct nfs4_lockwait e[NFS4_LOCKWAIT_MAX];
};

void nfs4_lockwait_init(struct nfs4_lockwait_tab *t);
/* Record w (its used/since fields are set here); the same client, file and
 * owner again only refreshes the time. false: full, or a handle or owner over its limit. */
bool nfs4_lockwait_add(struct nfs4_lockwait_tab *t, const struct nfs4_lockwait *w, uint64_t now);
/* Take out up to max waiters (for fh when fh is not NULL, else any); how many. */
unsigned nfs4_lockwait_take(struct nfs4_lockwait_tab *t, const uint8_t *fh, uint32_t fh_len, struct nfs4_lockwait *out,
			    unsigned max);
/* The client went: its waiters go; how many. */
unsigned nfs4_lockwait_client_gone(struct nfs4_lockwait_tab *t, uint64_t clientid);
/* Waiters recorded more than lease before now go; how many. */
unsigned nfs4_lockwait_expire(struct nfs4_lockwait_tab *t, uint64_t now, uint64_t lease);
/* Entries in use (of clientid, or all when clientid is 0). */
unsigned nfs4_lockwait_count(const struct nfs4_lockwait_tab *t, uint64_t clientid);

#endif
