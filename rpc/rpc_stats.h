/*
 * rpc_stats.h - RPC counters: per procedure (calls, RPC-level
 * errors, latency from receive to reply) and layer-wide events (bad headers,
 * each kind of rejection, duplicate request cache hits). Updated with relaxed
 * atomics from the loop thread; read at any time from any thread (values are
 * individually consistent, not a snapshot of all counters at one instant).
 *
 * A stats exporter (e.g. the UNIX-socket status server) walks them with
 * rpc_stats_foreach() and rpc_stats_global_get().
 */
#ifndef RNFSD_RPC_STATS_H
#define RNFSD_RPC_STATS_H

#include <stdint.h>

#include "core/stats.h"

/* Live counters of one procedure (owned by rpc_prog.c's program table). */
struct rpc_proc_stats {
	uint64_t calls;        /* calls answered (or dropped by the handler) */
	uint64_t errors;       /* of which: GARBAGE_ARGS, SYSTEM_ERR, dropped, or the
	                          handler set rpc_call.proc_failed (e.g. NFS3ERR_*) */
	uint64_t latency_ns;   /* sum of receive-to-completion times */
	uint64_t latency_max_ns;
	struct stats_hist latency; /* distribution of the same times */
};

/* What rpc_stats_foreach() hands out: scalars copied, histogram live. */
struct rpc_proc_snapshot {
	uint64_t calls;
	uint64_t errors;
	uint64_t latency_ns;
	uint64_t latency_max_ns;
	const struct stats_hist *latency;
};

struct rpc_stats_global {
	uint64_t bad_header;     /* dropped: not a call, or header truncated */
	uint64_t rpc_mismatch;   /* MSG_DENIED RPC_MISMATCH */
	uint64_t auth_error;     /* MSG_DENIED AUTH_ERROR */
	uint64_t prog_unavail;
	uint64_t prog_mismatch;
	uint64_t proc_unavail;
	uint64_t garbage_args;
	uint64_t system_err;
	uint64_t handler_drop;   /* a handler asked for no reply */
	uint64_t drc_hit;        /* retransmission answered from the cache */
	uint64_t drc_in_progress;/* retransmission of a running call, dropped */
	uint64_t drc_uncached;   /* non-idempotent reply not cached (too big, cache full) */
};

/* Calls by flavor (issue 25 item 6): calls that passed authentication and
 * went to their program (RPCSEC_GSS: DATA calls, by service; context
 * creation and destruction are not counted here). */
enum rpc_flavor_stat {
	RPC_FLAVOR_STAT_NONE,  /* AUTH_NONE */
	RPC_FLAVOR_STAT_SYS,   /* AUTH_SYS */
	RPC_FLAVOR_STAT_KRB5,  /* RPCSEC_GSS krb5, service none (RFC 2203 §5) */
	RPC_FLAVOR_STAT_KRB5I, /* service integrity */
	RPC_FLAVOR_STAT_KRB5P, /* service privacy */
	RPC_FLAVOR_STAT_COUNT,
};
/* "none", "sys", "krb5", "krb5i", "krb5p" (exports(5)'s sec= names). */
const char *rpc_flavor_stat_name(enum rpc_flavor_stat f);
/* The counter of a call's flavor (RPC_AUTH_*) and RPCSEC_GSS service; RPC_FLAVOR_STAT_COUNT: none. Pure. */
enum rpc_flavor_stat rpc_flavor_stat_of(uint32_t flavor, uint32_t gss_svc);
/* Any thread: the counts, RPC_FLAVOR_STAT_COUNT of them. */
void rpc_stats_flavors_get(uint64_t out[RPC_FLAVOR_STAT_COUNT]);
/* Any thread: a callback rnfsd sent (NFSv4 CB_NULL, CB_COMPOUND), counted by its credential's flavor
 * and RPCSEC_GSS service (RFC 7530 §3.3.3: a 4.0 client of krb5i gets krb5i callbacks). */
void rpc_stats_count_callback(uint32_t flavor, uint32_t gss_svc);
void rpc_stats_callbacks_get(uint64_t out[RPC_FLAVOR_STAT_COUNT]);
/* Main thread, before serving: the "rpc_auth" section of the stats document (calls by flavor,
 * RPCSEC_GSS contexts, their principals when the request is verbose) and its Prometheus family. */
int rpc_stats_section_add(void);

/* Called once per procedure of every registered program and version. */
typedef void (*rpc_stats_cb)(const char *prog_name, uint32_t prog, uint32_t vers,
			     uint32_t proc, const char *proc_name,
			     const struct rpc_proc_snapshot *s, void *arg);

/* Any thread. Values are copied out before cb is called. */
void rpc_stats_foreach(rpc_stats_cb cb, void *arg);
void rpc_stats_global_get(struct rpc_stats_global *out);

/* The same walk shaped for the stats server: stats_sources.procs_foreach. */
void rpc_stats_procs_foreach(stats_proc_cb cb, void *arg);

#endif
