/*
 * grace.h - the server's one grace period after a start (RFC 8881 §8.4.2,
 * RFC 7530 §9.6.2, XNFS §10.4): a clock that NLM (nlm/) and NFSv4
 * (nfs/v4/recovery/nfs4_recovery.c) both ask, so a lock held by an NFSv3 client
 * through NLM cannot be taken by an NFSv4 client before its owner reclaimed
 * it, nor the other way round (as knfsd's locks_in_grace()).
 *
 * Each protocol holds its own term: NLM for [rnfsd] grace-period seconds
 * (it cannot know who held locks), NFSv4 for [nfsv4] grace-time seconds,
 * only when clients of the previous boot were recorded, ended early when
 * all of them sent RECLAIM_COMPLETE. The server is in grace while either
 * term runs. NFSv4 admits reclaims only while its own term runs; NLM admits
 * them while either runs.
 *
 * Pure apart from grace_now_ms(): times are the caller's milliseconds
 * (CLOCK_MONOTONIC in the daemon), fields are atomic (any thread).
 */
#ifndef RNFSD_CORE_GRACE_H
#define RNFSD_CORE_GRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum grace_holder { GRACE_NLM, GRACE_NFS4, GRACE_HOLDERS };

struct grace_clock {
	_Atomic uint64_t end_ms[GRACE_HOLDERS]; /* 0: this term is not held */
};

/* Hold h's term for seconds from now (0 seconds: release it). */
void grace_clock_hold(struct grace_clock *g, enum grace_holder h, uint64_t now_ms, unsigned seconds);
/* End h's term at once (NFSv4: every previous client sent RECLAIM_COMPLETE). */
void grace_clock_release(struct grace_clock *g, enum grace_holder h);
/* h's own term still runs at now. */
bool grace_clock_held(const struct grace_clock *g, enum grace_holder h, uint64_t now_ms);
/* Either term runs at now: new conflicting state is refused. */
bool grace_clock_active(const struct grace_clock *g, uint64_t now_ms);
/* Milliseconds left of the whole grace period at now (0: over). */
uint64_t grace_clock_left_ms(const struct grace_clock *g, uint64_t now_ms);

/* The daemon's clock, and CLOCK_MONOTONIC in milliseconds. */
extern struct grace_clock grace_server;
uint64_t grace_now_ms(void);

#endif
