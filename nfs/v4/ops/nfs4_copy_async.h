/*
 * nfs4_copy_async.h - asynchronous COPY at run time (nfs4_copy_async.c: the
 * offload table under a lock, the copy threads) and the CB_OFFLOAD it sends
 * (nfs4_cb_ops.c: nfs4_cb_send()). See nfs4_offload.h for the table's rules.
 */
#ifndef RNFSD_NFS4_COPY_ASYNC_H
#define RNFSD_NFS4_COPY_ASYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "nfs/common/nfs_common.h"
#include "nfs/v4/state/nfs4_stateid.h"

struct nfs4_obj;
struct be_file;

/* Copies at least this large (after ca_count 0 is resolved) that the client
 * lets be asynchronous (ca_synchronous false) go to a copy thread (RFC 7862
 * §15.2.3: the server's choice); smaller ones stay synchronous. */
#define NFS4_COPY_ASYNC_MIN (1ull << 20)

/* Synchronous COPYs hold an RPC worker each: at most this many at once in
 * all and per client ([nfsv4] copy-workers, copy-workers-per-client; these
 * are the defaults when nothing was configured, as in the unit tests). */
#define NFS4_COPY_WORKERS_DEFAULT 2u
#define NFS4_COPY_WORKERS_PER_CLIENT_DEFAULT 1u
/* Start-up: the shares (nfs4_offload.h, struct nfs4_copy_share). */
void nfs4_copy_configure(unsigned workers, unsigned per_client);
/* A synchronous COPY of clientid may take its worker (true; nfs4_copy_sync_put() after),
 * or the client or COPY as a whole is over its share (false). */
bool nfs4_copy_sync_get(uint64_t clientid);
void nfs4_copy_sync_put(uint64_t clientid);

/* One asynchronous copy to start: the two files' objects and references move to the job. */
struct nfs4_copy_async_req {
	uint64_t clientid;
	struct nfs4_obj *src, *dst;
	struct be_file *fs, *fd;
	uint64_t soff, doff, count;
	bool sync_export;
	const struct nfs_fh *dst_fh;
	struct nfs_exports *tbl; /* the call's export table: the job holds a reference (the exports stay) */
};

/* NFS4_OK: queued, *sid is its copy stateid, the references are the job's;
 * NFS4ERR_DELAY: the table (or the client's share) is full, nothing taken. */
uint32_t nfs4_copy_async_start(const struct nfs4_copy_async_req *rq, struct nfs4_stateid *sid);
/* OFFLOAD_STATUS (RFC 7862 §15.9): bytes so far and, once over, the copy's status. */
uint32_t nfs4_copy_async_status(uint64_t clientid, const struct nfs4_stateid *sid, uint64_t *count, bool *complete,
				uint32_t *status);
/* OFFLOAD_CANCEL (§15.8). */
uint32_t nfs4_copy_async_cancel(uint64_t clientid, const struct nfs4_stateid *sid);
/* The client went (its state purged): its copies stop, no CB_OFFLOAD. */
void nfs4_copy_async_client_gone(uint64_t clientid);
/* An export leaves (or is unlocked): its running copies stop at their next chunk, CB_OFFLOAD
 * telling the bytes copied (as after OFFLOAD_CANCEL), so the old table they hold is let go and the
 * export's state released without waiting for them to end. How many. */
unsigned nfs4_copy_async_export_gone(uint32_t export_id);
/* Periodic: results whose CB_OFFLOAD never completed go after lease_ms. */
void nfs4_copy_async_tick(uint64_t lease_ms);
/* Shutdown: copies stop, threads joined, files let go. */
void nfs4_copy_async_stop(void);

struct nfs4_copy_async_stat {
	uint64_t started, done, cancelled, cb_offload_sent;
	unsigned offloads;               /* offload table entries in use (of NFS4_OFFLOAD_MAX) */
	unsigned sync_copies, sync_max;  /* synchronous COPYs holding a worker, and the bound */
	uint64_t sync_refused;           /* COPYs answered NFS4ERR_DELAY for want of a share */
};
void nfs4_copy_async_stats(struct nfs4_copy_async_stat *out);

/* ---- nfs4_cb_ops.c: the callbacks this work sends ---- */

/* CB_OFFLOAD4args (RFC 7862 §16.1.1) and whom it goes to. */
struct nfs4_copy_cb {
	uint64_t clientid;
	struct nfs_fh fh;        /* coa_fh: the destination */
	struct nfs4_stateid sid; /* coa_stateid: the copy stateid */
	uint32_t status;         /* coa_status */
	uint64_t count;          /* wr_count / coa_bytes_copied */
	uint32_t committed;      /* wr_committed */
};
/* Whether a callback to clientid can be sent at all (an asynchronous copy is
 * only offered then: a client waits for its CB_OFFLOAD). */
bool nfs4_cb_ops_ready(uint64_t clientid);
/* Queue CB_OFFLOAD; done(arg, status) once it is answered or failed for
 * good. false: not sent (done is not called). */
bool nfs4_copy_cb_offload(const struct nfs4_copy_cb *cb, void (*done)(void *arg, int32_t status), void *arg);

#endif
