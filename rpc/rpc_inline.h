/*
 * rpc_inline.h - whether a call runs on the thread that received it or on a
 * worker (enum rpc_run in rpc.h), as a plain policy over a struct and the
 * time, so it is unit-tested without threads (tests/unit/test_rpc_inline.c).
 *
 * Why: handing a call to a worker and its reply back costs two thread
 * wake-ups (futexes, an eventfd, context switches), more than a GETATTR
 * answered from the kernel's inode cache. Calls that never wait (NULL) run
 * where they were received; metadata calls too while every export's backend
 * answers them from memory. The guard: one such call that took longer than
 * RPC_INLINE_SLOW_NS (a cold inode read from a device) sends every
 * metadata call to the workers for RPC_INLINE_PAUSE_NS, so a slow device
 * stalls the receiving thread for at most one call at a time. Only a call
 * that slept counts: the thread made a voluntary context switch during it
 * (getrusage RUSAGE_THREAD ru_nvcsw: it waited for a device, a lock, its
 * io_uring). One that was only preempted (a loaded host: involuntary switches
 * alone) waited for a CPU, which a worker would wait for too.
 */
#ifndef RNFSD_RPC_INLINE_H
#define RNFSD_RPC_INLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "rpc/rpc.h"

#define RPC_INLINE_SLOW_NS 2000000ull    /* 2 ms */
#define RPC_INLINE_PAUSE_NS 1000000000ull /* 1 s */

struct rpc_inline_policy {
	bool enabled;         /* [rnfsd] inline-calls */
	bool meta_allowed;    /* every export's backend is meta_fast */
	bool callers_allowed; /* RPC_RUN_INLINE_CALLER may be tried (rpc_inline_callers) */
	uint64_t paused_until; /* CLOCK_MONOTONIC ns: metadata calls go to the workers until then */
};

/* Run a call of procedure kind run on the receiving thread at now_ns? */
bool rpc_inline_policy_pick(const struct rpc_inline_policy *p, enum rpc_run run, uint64_t now_ns);
/* An inline call of kind run took took_ns, finishing at now_ns, and its
 * thread made slept voluntary context switches during it. true: it was slow
 * and slept, and metadata calls are paused (p->paused_until moved). */
bool rpc_inline_policy_took(struct rpc_inline_policy *p, enum rpc_run run, uint64_t took_ns, uint64_t slept,
			    uint64_t now_ns);

/* The process's policy (rpc_call.c, on the receiving thread). */
bool rpc_inline_pick(enum rpc_run run, uint64_t now_ns);
/* The calling thread's voluntary context switches so far (at an inline call's start). */
uint64_t rpc_inline_nvcsw(void);
/* An inline call of kind run took took_ns, finishing at now_ns; nvcsw0: rpc_inline_nvcsw() at its start. */
void rpc_inline_took(enum rpc_run run, uint64_t took_ns, uint64_t now_ns, uint64_t nvcsw0);
/* Would a call of kind run be picked at now_ns (nothing counted)? */
bool rpc_inline_open(enum rpc_run run, uint64_t now_ns);
/* Receiving thread: a call answered there asks its client to retry (NFSv4's
 * DELAY where a worker would have answered): metadata calls go to the workers
 * for RPC_INLINE_PAUSE_NS, as after a slow call, so the retry runs there. */
void rpc_inline_pause(void);
/* A picked RPC_RUN_INLINE_TRY call declined (RPC_PROC_WORKER): not counted as inline. */
void rpc_inline_declined(void);

#endif
