/*
 * rdma_stats.h - RPC-over-RDMA's part of the stats document (core/stats.h):
 * each connection's RPC-over-RDMA parameters and counters, written after its
 * "calls" by the writer the connection registers, and the "rdma_memory"
 * section: registered memory over every device and transport instance.
 *
 * Compiled always (not only with verbs), so the document has the same keys on
 * every build: "rdma_memory" stays all zeros without RDMA.
 *
 * Who calls what: rdma_conn.c registers a connection with
 * rdma_stats_conn_register() (unregisters its base with
 * stats_conn_unregister()); the receive and send paths bump the counters
 * with stats_add()/stats_set(); the loop thread feeds rdma_stats_mem with
 * stats_mem_move(); main calls rdma_stats_sections_add() before serving.
 */
#ifndef RNFSD_RDMA_STATS_H
#define RNFSD_RDMA_STATS_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/stats.h"

/* One connection: the registry's generic part, then RPC-over-RDMA's own. */
struct rdma_stats_conn {
	struct stats_conn base;

	/* RPC-over-RDMA parameters; stats_set() when negotiated. */
	_Atomic uint32_t rdma_version;  /* 1 (RFC 8166) or 2 */
	_Atomic uint32_t credits;       /* credits granted to the client */
	_Atomic uint32_t inline_recv;   /* inline threshold for calls (our receive buffers) */
	_Atomic uint32_t inline_send;   /* inline threshold for replies (client's receive) */

	/* Counters, any thread, stats_add(). */
	_Atomic uint64_t rdma_reads, rdma_read_bytes;
	_Atomic uint64_t rdma_writes, rdma_write_bytes;
	_Atomic uint64_t send_inv;      /* replies sent with Send With Invalidate */
	_Atomic uint64_t err_chunk;     /* RDMA_ERROR ERR_CHUNK sent (RFC 8166 §4.5) */
	_Atomic uint64_t err_vers;      /* RDMA_ERROR ERR_VERS sent */
};

/* Any thread: zero s's counters and register it as an "rdma" connection of peer. */
void rdma_stats_conn_register(struct rdma_stats_conn *s, const char *peer);
/* The connection's one close path: add its counters to the closed connections' totals (so the
 * Prometheus counters never go back) and unregister it. A no-op for an unregistered one. */
void rdma_stats_conn_unregister(struct rdma_stats_conn *s);

/* Totals over every device and transport instance, updated on the loop
 * thread (stats_mem_move), read by the stats thread. */
struct rdma_stats_mem {
	_Atomic uint64_t pool_max;        /* configured bound of the bulk pools, bytes */
	_Atomic uint64_t pool_registered; /* bulk bytes registered so far */
	_Atomic uint64_t slot_size;       /* bytes per bulk slot */
	_Atomic uint64_t slots;           /* bulk slots registered */
	_Atomic uint64_t in_use;          /* bulk slots held by calls */
	_Atomic uint64_t waiting;         /* calls waiting for bulk slots now */
	_Atomic uint64_t waits;           /* calls that ever waited */
	_Atomic uint64_t conn_registered; /* per-connection registered bytes (receive/send buffers) */
};
extern struct rdma_stats_mem rdma_stats_mem;

/* Main thread, before serving: add "rdma_memory" (STATS_PLACE_TRANSPORT). 0, or -1 (registry full). */
int rdma_stats_sections_add(void);

#endif
