/*
 * stats.h - the live statistics registry: a latency histogram for the RPC
 * layer, per-connection counters the transports feed, the sources other
 * layers provide (per-procedure counters, export count), and the JSON
 * document and status line rendered from them. The UNIX socket that serves
 * the document is the daemon's (daemon/stats_server.h).
 *
 * Who calls what:
 *   transports (tcp, rdma)  embed a struct stats_conn in their connection
 *                           object, fill peer/transport, stats_conn_register()
 *                           once the connection is accepted, bump its counters
 *                           with stats_add()/stats_set() from any thread, and
 *                           stats_conn_unregister() in their one close path,
 *                           before the object is freed.
 *   rpc layer (rpc_stats)   per-procedure counters, each with a struct
 *                           stats_hist for latency; exposed to this module
 *                           through stats_sources.procs_foreach.
 *   main                    stats_set_sources() before serving.
 *
 * Lifetimes: the registry never owns a stats_conn, it only links it; the
 * transport guarantees unregister-before-free. The registry lock is held
 * while the JSON document is rendered, so an unregister waits for it.
 */
#ifndef RNFSD_CORE_STATS_H
#define RNFSD_CORE_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* ---- latency histogram (fixed log-scale buckets, lock-free) ---- */

/*
 * Bucket i covers nanoseconds in [lower(i), lower(i+1)): four buckets per
 * power of two, so a quantile is known to within 19%. Values of 2^40 ns
 * (18 minutes) or more land in the last bucket.
 */
#define STATS_HIST_SUB_BITS 2
#define STATS_HIST_BUCKETS (41 << STATS_HIST_SUB_BITS)

struct stats_hist {
	_Atomic uint64_t bucket[STATS_HIST_BUCKETS];
};

/* Any thread. Record one sample of ns nanoseconds. */
void stats_hist_record(struct stats_hist *h, uint64_t ns);
/* Bucket index for ns, and the smallest value of bucket i. */
unsigned stats_hist_bucket(uint64_t ns);
uint64_t stats_hist_bucket_lower(unsigned i);
/* Upper bound (ns) of the bucket holding quantile q (0 < q <= 1); 0 if empty. */
uint64_t stats_hist_quantile(const struct stats_hist *h, double q);

/* ---- per-procedure statistics, provided by the RPC layer ---- */

struct stats_proc {
	const char *program;       /* "nfs", "mountd" */
	uint32_t vers;
	const char *proc;          /* "GETATTR" */
	uint64_t calls;
	uint64_t errors;           /* calls not answered with success (RPC or NFS status) */
	uint64_t latency_ns_total; /* sum over calls, for the mean */
	const struct stats_hist *latency; /* may be NULL */
};
typedef void (*stats_proc_cb)(const struct stats_proc *p, void *arg);

/* NFSv4 state (nfs/v4/compound/nfs4_stats.c), the "nfs4" object of the document. */
struct stats_nfs4 {
	unsigned clients, sessions;           /* client records (confirmed or not), sessions */
	uint64_t opens, locks, delegations;   /* state counts (n4state): open and lock stateids, delegations */
	uint64_t open_files, open_owners, lock_owners; /* file records (a descriptor each), owners */
	uint64_t open_files_max, opens_per_client_max, lock_owners_per_client_max; /* nfs4_stab_limits() */
	uint64_t recalls, returned, revoked;  /* delegations recalled (CB_RECALL), returned, revoked */
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
	unsigned delegations_max;
	unsigned callback_paths, callback_paths_max;
	/* The shared tables' bounds (issue 24): NFSv4.1 reply caches granted and their budget, new client
	 * records refused (table, host's or principal's share full), idle sessions reclaimed, the stable
	 * record table's size. */
	uint64_t reply_cache_bytes, reply_cache_limit, clients_refused, sessions_reclaimed;
	unsigned recorded_clients_max;
};

/* One NFSv4 client's callback path (nfs/v4/cb/nfs4_cb.h): its state and calls. */
struct stats_nfs4_cb {
	uint64_t clientid;
	unsigned minor;        /* 0: NFSv4.0 callback service; 1, 2: a 4.1 / 4.2 session's back channel */
	const char *state;     /* "none", "probing", "up", "down" */
	const char *transport; /* "tcp", "rdma", "-" */
	uint64_t sent, ok, failed;
};
typedef void (*stats_nfs4_cb_cb)(const struct stats_nfs4_cb *c, void *arg);

/* Descriptors against RLIMIT_NOFILE and the tables that hold them (conf/fd_budget.h). */
struct stats_resources {
	uint64_t fds, fd_limit, fd_reserve;     /* descriptors open now, RLIMIT_NOFILE, kept from state */
	uint64_t lock_descriptions, lock_descriptions_max; /* the local backend's, all lock owners */
	uint64_t nlm_owners, nlm_held, nlm_per_host_max;   /* NLM lock owners, (owner, file) records */
};

struct stats_sources {
	unsigned (*exports_count)(void);                        /* may be NULL */
	void (*procs_foreach)(stats_proc_cb cb, void *arg);      /* may be NULL */
	/* NFSv4 per-operation counters (program "nfs", version 4, proc: the
	 * operation) and state; NULL when NFSv4 is not served. */
	void (*nfs4_ops_foreach)(stats_proc_cb cb, void *arg);
	void (*nfs4_state)(struct stats_nfs4 *out);
	/* Each NFSv4 client's callback path; NULL when NFSv4 is not served. */
	void (*nfs4_cb_foreach)(stats_nfs4_cb_cb cb, void *arg);
	/* Calls answered on the receiving thread, and the pauses of that for a
	 * slow call (rpc/rpc_inline.h); may be NULL. */
	void (*inline_counts)(uint64_t *calls, uint64_t *paused);
	/* Descriptors and the tables holding them; may be NULL. */
	void (*resources)(struct stats_resources *out);
};
/* Main thread, before stats_server_start(). The struct is copied. */
void stats_set_sources(const struct stats_sources *s);

/* ---- per-connection statistics, fed by the transports ---- */

struct stats_conn {
	/* Identity: set before stats_conn_register(), constant afterwards. */
	char peer[64];              /* "addr:port" */
	char transport[8];          /* "tcp" or "rdma" */

	/* RPC-over-RDMA parameters (0 on TCP); stats_set() when negotiated. */
	_Atomic uint32_t rdma_version;  /* 1 (RFC 8166) or 2 */
	_Atomic uint32_t credits;       /* credits granted to the client */
	_Atomic uint32_t inline_recv;   /* inline threshold for calls (our receive buffers) */
	_Atomic uint32_t inline_send;   /* inline threshold for replies (client's receive) */

	/* Counters, any thread, stats_add(). */
	_Atomic uint64_t calls;
	_Atomic uint64_t rdma_reads, rdma_read_bytes;
	_Atomic uint64_t rdma_writes, rdma_write_bytes;
	_Atomic uint64_t send_inv;      /* replies sent with Send With Invalidate */
	_Atomic uint64_t err_chunk;     /* RDMA_ERROR ERR_CHUNK sent (RFC 8166 §4.5) */
	_Atomic uint64_t err_vers;      /* RDMA_ERROR ERR_VERS sent */
	_Atomic uint64_t garbage_args;  /* GARBAGE_ARGS replies sent (RFC 5531 §9) */

	/* Owned by the registry. */
	struct timespec since;          /* CLOCK_MONOTONIC at register */
	struct stats_conn *prev, *next;
	bool registered;
};

static inline void stats_add(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

static inline void stats_set(_Atomic uint32_t *field, uint32_t v)
{
	atomic_store_explicit(field, v, memory_order_relaxed);
}

/*
 * Any thread. Link sc into the registry; transport ("tcp"/"rdma") and peer
 * are copied into it (peer may be NULL if already filled in). Counters are
 * zeroed. Unregistering an unregistered conn is a no-op.
 */
void stats_conn_register(struct stats_conn *sc, const char *transport, const char *peer);
void stats_conn_unregister(struct stats_conn *sc);
/* Connections currently registered, in total and per transport. */
void stats_conn_counts(unsigned *total, unsigned *tcp, unsigned *rdma);

/* ---- RPC-over-RDMA registered memory, fed by the RDMA transport ---- */

/* Totals over every device and transport instance, updated on the loop
 * thread (stats_mem_move), read by the stats thread. */
struct stats_rdma_mem {
	_Atomic uint64_t pool_max;        /* configured bound of the bulk pools, bytes */
	_Atomic uint64_t pool_registered; /* bulk bytes registered so far */
	_Atomic uint64_t slot_size;       /* bytes per bulk slot */
	_Atomic uint64_t slots;           /* bulk slots registered */
	_Atomic uint64_t in_use;          /* bulk slots held by calls */
	_Atomic uint64_t waiting;         /* calls waiting for bulk slots now */
	_Atomic uint64_t waits;           /* calls that ever waited */
	_Atomic uint64_t conn_registered; /* per-connection registered bytes (receive/send buffers) */
};
extern struct stats_rdma_mem stats_rdma_mem;

/* *last -> now: add the difference to *total (modulo 2^64), remember now. */
static inline void stats_mem_move(_Atomic uint64_t *total, uint64_t *last, uint64_t now)
{
	atomic_fetch_add_explicit(total, now - *last, memory_order_relaxed);
	*last = now;
}

/* ---- the document ---- */

/* Write the JSON document (see rnfsd(8), STATISTICS) to f. 0, or -1 on a write error. */
int stats_render_json(FILE *f);
/* "2 exports, 3 connections (2 tcp, 1 rdma), 1234 calls" */
void stats_status_line(char *buf, size_t len);
/* The uptime in the document counts from the first call of this (or of stats_render_json). */
void stats_uptime_start(void);

#endif
