/*
 * nfs4_offload.h - the asynchronous COPY table as a pure module (no I/O, no
 * threads, no clock of its own: the caller locks and gives the time): one
 * entry per asynchronous copy (RFC 7862 §4.8, §15.2.3), named by its copy
 * stateid (wr_callback_id), with the bytes done so far (OFFLOAD_STATUS,
 * §15.9), a cancel request (OFFLOAD_CANCEL, §15.8) and, once over, its
 * result (CB_OFFLOAD, §16.1).
 *
 * Entry lifecycle (the function making each transition):
 *
 *   FREE --create--> RUNNING --complete--> DONE --release--> FREE
 *                     |  ^ progress          |
 *                     cancel (flag: the runner stops at its next chunk; the
 *                     entry is no longer found by OFFLOAD_STATUS/CANCEL)
 *   client_gone: RUNNING entries are cancelled and orphaned (no CB_OFFLOAD),
 *   DONE entries freed; reap frees DONE entries older than a lease whose
 *   CB_OFFLOAD never completed.
 *
 * The copy stateid's other (RFC 8881 §8.2: unique within the boot): the
 * boot (4, big-endian), the low half of the clientid (4, as the open
 * stateids, so nfs4_stateid_clientid() names the client) and a counter with
 * its top bit set (4), which the open/lock table's counter does not reach in
 * practice; seqid 1.
 *
 * Memory: NFS4_OFFLOAD_MAX entries in a fixed array, at most
 * NFS4_OFFLOAD_PER_CLIENT per client (create answers false beyond).
 */
#ifndef RNFSD_NFS4_OFFLOAD_H
#define RNFSD_NFS4_OFFLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "nfs/v4/state/nfs4_stateid.h"

#define NFS4_OFFLOAD_MAX 32u
#define NFS4_OFFLOAD_PER_CLIENT 4u

enum nfs4_offload_state { NFS4_OFFLOAD_FREE, NFS4_OFFLOAD_RUNNING, NFS4_OFFLOAD_DONE };

struct nfs4_offload {
	enum nfs4_offload_state state;
	uint64_t clientid;
	struct nfs4_stateid sid; /* the copy stateid (wr_callback_id) */
	uint64_t total;          /* bytes asked for */
	uint64_t done;           /* bytes copied so far */
	bool cancelled;          /* OFFLOAD_CANCEL (or the client went): stop */
	bool orphaned;           /* the client went: no CB_OFFLOAD */
	uint32_t status;         /* DONE: the copy's nfsstat4 */
	uint32_t committed;      /* DONE: stable_how4 of what was copied */
	uint64_t done_at;        /* DONE: when (the caller's clock, ms) */
};

struct nfs4_offload_tab {
	uint32_t boot;
	uint32_t counter;
	struct nfs4_offload e[NFS4_OFFLOAD_MAX];
};

void nfs4_offload_init(struct nfs4_offload_tab *t, uint32_t boot);
/* A new RUNNING entry for clientid of total bytes; its index, or -1 when the
 * table or the client's share is full. */
int nfs4_offload_create(struct nfs4_offload_tab *t, uint64_t clientid, uint64_t total);
/* The RUNNING or DONE, not cancelled, entry of clientid named sid; -1 if none. */
int nfs4_offload_find(const struct nfs4_offload_tab *t, uint64_t clientid, const struct nfs4_stateid *sid);
/* The runner: bytes copied so far. */
void nfs4_offload_progress(struct nfs4_offload_tab *t, int i, uint64_t done);
/* OFFLOAD_CANCEL: true if the entry was running (it stops at its next chunk). */
bool nfs4_offload_cancel(struct nfs4_offload_tab *t, int i);
/* The runner: the copy is over (status, committed), at now. */
void nfs4_offload_complete(struct nfs4_offload_tab *t, int i, uint32_t status, uint32_t committed, uint64_t now);
/* CB_OFFLOAD answered (or failed for good): the entry goes. */
void nfs4_offload_release(struct nfs4_offload_tab *t, int i);
/* The client went: its running copies are cancelled and orphaned, its DONE ones freed. */
unsigned nfs4_offload_client_gone(struct nfs4_offload_tab *t, uint64_t clientid);
/* DONE entries older than lease_ms at now go; how many. */
unsigned nfs4_offload_reap(struct nfs4_offload_tab *t, uint64_t now, uint64_t lease_ms);
/* Entries in use (any client if clientid is 0). */
unsigned nfs4_offload_count(const struct nfs4_offload_tab *t, uint64_t clientid);

/*
 * The synchronous COPYs in progress: each holds an RPC worker thread while
 * it copies (nfs4_proc_copy.c), so at most max run at once in all and
 * per_client of one client ([nfsv4] copy-workers, copy-workers-per-client);
 * beyond, the COPY is answered NFS4ERR_DELAY and the workers stay free for
 * everything else. Holders are kept packed in holder[0..n).
 */
#define NFS4_COPY_SHARE_MAX 256u /* the most workers there are ([rnfsd] threads) */

struct nfs4_copy_share {
	unsigned max, per_client;
	unsigned n;                               /* copies holding a worker now */
	uint64_t refused;                         /* COPYs refused for want of a share */
	uint64_t holder[NFS4_COPY_SHARE_MAX];     /* their clients */
};

/* max in all (1..NFS4_COPY_SHARE_MAX) and per_client (1..max), clamped. */
void nfs4_copy_share_init(struct nfs4_copy_share *s, unsigned max, unsigned per_client);
/* true: clientid may take a worker for a copy (counted); false: over a share (counted as refused). */
bool nfs4_copy_share_get(struct nfs4_copy_share *s, uint64_t clientid);
/* The copy of clientid that nfs4_copy_share_get() let in is over. */
void nfs4_copy_share_put(struct nfs4_copy_share *s, uint64_t clientid);

#endif
