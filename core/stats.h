/*
 * stats.h - the live statistics registry: a latency histogram for the RPC
 * layer, per-connection counters the transports feed, the sources and
 * sections other layers provide, and the JSON document and status line
 * rendered from them. The UNIX socket that serves the document is the
 * daemon's (daemon/stats_server.h). This layer knows no protocol: NFSv4,
 * RPC-over-RDMA and the daemon's resources are sections their owners add.
 *
 * Who calls what:
 *   transports (tcp, rdma)  embed a struct stats_conn in their connection
 *                           object, stats_conn_register() it once the
 *                           connection is accepted (with a writer for their
 *                           own members, if any), bump its counters with
 *                           stats_add()/stats_set() from any thread, and
 *                           stats_conn_unregister() in their one close path,
 *                           before the object is freed.
 *   rpc layer (rpc_stats)   per-procedure counters, each with a struct
 *                           stats_hist for latency; exposed to this module
 *                           through stats_sources.procs_foreach.
 *   higher layers           stats_section_add(): a named top-level member
 *                           and the writer that emits it (core/json.h).
 *   main                    stats_set_sources() and the sections before serving.
 *
 * The document: "version", "pid", "uptime_s", "exports", "procedures", the
 * STATE sections, "totals", "transport_bytes", "usage", the TRANSPORT
 * sections, "connections".
 *
 * Lifetimes: the registry never owns a stats_conn, it only links it; the
 * transport guarantees unregister-before-free. The registry lock is held
 * while the connections are rendered, so an unregister waits for it.
 */
#ifndef RNFSD_CORE_STATS_H
#define RNFSD_CORE_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "core/json.h"
#include "core/prom.h"

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

/* One entry of a procedure list ("procedures", or a section's own list such
 * as NFSv4's "nfs4_operations"), as an array element. */
void stats_json_proc(struct json_out *j, const struct stats_proc *p);

struct stats_sources {
	unsigned (*exports_count)(void);                        /* may be NULL */
	void (*procs_foreach)(stats_proc_cb cb, void *arg);      /* may be NULL */
	/* Calls answered on the receiving thread, and the pauses of that for a
	 * slow call (rpc/rpc_inline.h); may be NULL. */
	void (*inline_counts)(uint64_t *calls, uint64_t *paused);
};
/* Main thread, before stats_server_start(). The struct is copied. */
void stats_set_sources(const struct stats_sources *s);

/* ---- sections other layers add to the document ---- */

/*
 * A section is one top-level member of the document that a higher layer
 * owns: NFSv4's state (nfs/v4/compound/nfs4_stats.c), the RDMA transport's
 * registered memory (transport/rdma_stats.c), the daemon's descriptors
 * (daemon/stats_server.c). Its writer emits exactly one member named name
 * (json_obj_open(j, name) ... or json_arr_open(j, name) ...), on the stats
 * thread, without the registry lock. Where it goes:
 *   STATS_PLACE_STATE      after "procedures", before "totals";
 *   STATS_PLACE_TRANSPORT  after "totals", before "connections".
 * Within a place, sections are written in the order they were added.
 */
enum stats_place { STATS_PLACE_STATE, STATS_PLACE_TRANSPORT };
typedef void (*stats_section_fn)(struct json_out *j, const char *name, void *arg);
#define STATS_SECTIONS_MAX 16

/* Main thread, before serving (name and arg must outlive the registry). 0, or -1: the table is full. */
int stats_section_add(enum stats_place place, const char *name, stats_section_fn write, void *arg);
/*
 * A section's metrics for the Prometheus page (stats_render_prom()), beside
 * its JSON writer: families named rnfsd_..., values from the same snapshot
 * the JSON writer takes, label values from fixed tables only (no client
 * addresses or ids). Called on the HTTP server's thread, without the
 * registry lock, in the order the sections were added.
 */
typedef void (*stats_section_prom_fn)(struct prom_out *p, void *arg);
/* Main thread, after stats_section_add(name, ...): attach prom to that section. 0, or -1: no such section. */
int stats_section_set_prom(const char *name, stats_section_prom_fn prom);
/* stats_section_add() with its Prometheus metrics at once. 0, or -1: the table is full. */
int stats_section_add_prom(enum stats_place place, const char *name, stats_section_fn write, void *arg,
			   stats_section_prom_fn prom);

/* Tests and shutdown: forget every section. */
void stats_sections_clear(void);

/* ---- per-connection statistics, fed by the transports ---- */

struct stats_conn;
/* A transport's own per-connection members, written after "calls" (e.g.
 * transport/rdma_stats.c's RPC-over-RDMA counters); under the registry lock. */
typedef void (*stats_conn_ext_fn)(struct json_out *j, const struct stats_conn *sc);

struct stats_conn {
	/* Identity: set by stats_conn_register(), constant afterwards. */
	char peer[64];              /* "addr:port" */
	char transport[8];          /* "tcp" or "rdma" */
	stats_conn_ext_fn ext;      /* NULL: no members of its own */

	/* Counters, any thread, stats_add(). */
	_Atomic uint64_t calls;
	_Atomic uint64_t garbage_args;  /* GARBAGE_ARGS replies sent (RFC 5531 §9) */
	/* Bytes the transport moved: TCP what read(2) and write(2) moved; RDMA the Receives' and
	 * Sends' messages and the RDMA Reads' and Writes' payloads. Folded into the transport's
	 * totals at unregister, so the totals never go back (stats_transport_bytes). */
	_Atomic uint64_t rx_bytes, tx_bytes;

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
 * are copied into it (peer may be NULL if already filled in), ext is kept.
 * Its counters are zeroed (a transport zeroes its own before). Unregistering
 * an unregistered conn is a no-op.
 */
void stats_conn_register(struct stats_conn *sc, const char *transport, const char *peer, stats_conn_ext_fn ext);
void stats_conn_unregister(struct stats_conn *sc);
/* cb for each registered connection, under the registry lock (cb must not register or unregister). */
void stats_conn_foreach(void (*cb)(const struct stats_conn *sc, void *arg), void *arg);
/* Connections currently registered, in total and per transport. */
void stats_conn_counts(unsigned *total, unsigned *tcp, unsigned *rdma);
/* Bytes received and sent over transport ("tcp", "rdma", "udp") since start: closed connections and
 * open ones. */
void stats_transport_bytes(const char *transport, uint64_t *rx, uint64_t *tx);
/* Any thread: a UDP datagram of rx bytes received, or a reply of tx bytes sent (UDP has no stats_conn). */
void stats_udp_bytes(uint64_t rx, uint64_t tx);

/* ---- utilisation of the event loop and the worker pool ---- */

struct stats_usage {
	double loop_busy_s;     /* CPU time of the event loop's thread */
	double workers_busy_s;  /* seconds workers spent inside items, those running now included */
	unsigned workers;       /* threads in the pool */
	unsigned workers_busy;  /* inside an item now */
	unsigned queued;        /* items waiting for a worker */
};
/* Main thread, before serving: where the numbers come from (the daemon's loop and pool). NULL: none. */
void stats_set_usage(void (*fill)(struct stats_usage *out));

/* ---- gauges published from a thread that owns the truth ---- */

/* *last -> now: add the difference to *total (modulo 2^64), remember now.
 * Lets several owners (devices, connections) feed one total without a lock. */
static inline void stats_mem_move(_Atomic uint64_t *total, uint64_t *last, uint64_t now)
{
	atomic_fetch_add_explicit(total, now - *last, memory_order_relaxed);
	*last = now;
}

/* ---- the document ---- */

/* Write the JSON document (see rnfsd(8), STATISTICS) to f. 0, or -1 on a write error. */
int stats_render_json(FILE *f);
/* The same for a verbose request ("stats verbose", rnfsctl -v): sections may add detail that is
 * too long for every poll (RPCSEC_GSS principals); stats_verbose() tells them, on this thread. */
int stats_render_json_verbose(FILE *f);
bool stats_verbose(void);
/*
 * Write the Prometheus text format (version 0.0.4) to f: the registry's
 * families (build info, uptime, exports, per-procedure calls, errors and
 * latency histograms, connections per transport, inline calls), then each
 * section's (stats_section_set_prom()). Any thread. 0, or -1 on a write error.
 */
int stats_render_prom(FILE *f);

/* The families of one procedure list, for a section with its own (NFSv4's operations). */
struct stats_prom_procs {
	const char *calls, *calls_help;     /* counter family */
	const char *errors, *errors_help;   /* counter family */
	const char *latency, *latency_help; /* histogram family, seconds */
	const char *label;                  /* the procedure's label name ("procedure", "operation") */
	bool program;                       /* also "program" and "version" labels */
};
void stats_prom_procs(struct prom_out *p, const struct stats_prom_procs *names,
		      void (*foreach)(stats_proc_cb cb, void *arg));

/* ---- the busiest clients (opt-in) ---- */

/*
 * [stats] prometheus-top-clients: the page also carries calls and bytes of
 * the n busiest client addresses (by calls), rnfsd_client_*_total{client=ADDR}.
 * Open connections are summed per address with what closed connections of
 * the STATS_CLIENTS_KEPT busiest addresses left (busiest counting their open
 * connections' calls, so an address's counters do not go back as its
 * connections close), so the label set is bounded by n and the memory by
 * that table. 0 (the default): no family.
 */
#define STATS_TOP_CLIENTS_MAX 20
#define STATS_CLIENTS_KEPT 256
/* Main thread, before serving; n is clamped to STATS_TOP_CLIENTS_MAX. */
void stats_set_top_clients(unsigned n);
/* Addresses of closed connections kept now (at most STATS_CLIENTS_KEPT). */
unsigned stats_clients_kept(void);
/* "192.0.2.1" of "192.0.2.1:812", "2001:db8::1" of "[2001:db8::1]:812" (len >= 48). */
void stats_peer_addr(const char *peer, char *out, size_t len);

/* "2 exports, 3 connections (2 tcp, 1 rdma), 1234 calls" */
void stats_status_line(char *buf, size_t len);
/* The uptime in the document counts from the first call of this (or of stats_render_json). */
void stats_uptime_start(void);

#endif
