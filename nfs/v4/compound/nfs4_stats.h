/*
 * nfs4_stats.h - NFSv4 statistics for the stats socket and rnfsctl:
 * per-operation counters (calls, errors, time, fed by the COMPOUND engine
 * for every operation it runs), state gauges (delegations: nfs4_proc_deleg.c
 * calls nfs4_stats_state_add(); opens and locks: the stateid table's counts),
 * and the snapshot of clients, sessions and the grace period (core/stats.h,
 * struct stats_nfs4).
 * Counters are atomics in static storage: nothing is allocated.
 */
#ifndef RNFSD_NFS4_STATS_H
#define RNFSD_NFS4_STATS_H

#include <stdint.h>

#include "core/stats.h"

enum nfs4_stat_gauge {
	NFS4_STAT_OPENS,       /* open stateids held */
	NFS4_STAT_LOCKS,       /* lock stateids held */
	NFS4_STAT_DELEGATIONS, /* delegations held */
	NFS4_STAT_GAUGES
};

/* Any thread: one operation of a COMPOUND ran (op: its number, OP_ILLEGAL for unknown ones). */
void nfs4_stats_op(uint32_t op, uint32_t status, uint64_t ns);
/* Any thread: state created (+1) or released (-1). */
void nfs4_stats_state_add(enum nfs4_stat_gauge g, int64_t delta);
/* stats_sources.nfs4_ops_foreach: operations called at least once, as "nfs" version 4 entries. */
void nfs4_stats_ops_foreach(stats_proc_cb cb, void *arg);
/* stats_sources.nfs4_state. */
void nfs4_stats_state(struct stats_nfs4 *out);
/* stats_sources.nfs4_cb_foreach: each client's callback path (nfs4_cb.h). */
void nfs4_stats_cb_foreach(stats_nfs4_cb_cb cb, void *arg);
/* Tests: every counter back to zero. */
void nfs4_stats_reset(void);

#endif
