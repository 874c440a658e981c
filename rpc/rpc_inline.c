/*
 * rpc_inline.c - the inline-call policy of rpc_inline.h, and the process's
 * instance of it: the setting and the export table's verdict arrive from
 * other threads (atomics); the receiving thread reads them per call.
 */
#include "rpc/rpc_inline.h"

#include <sys/resource.h>
#include <time.h>

#include "core/log.h"

bool rpc_inline_policy_pick(const struct rpc_inline_policy *p, enum rpc_run run, uint64_t now_ns)
{
	if (!p->enabled)
		return false;
	switch (run) {
	case RPC_RUN_INLINE:
		return true;
	case RPC_RUN_INLINE_CALLER:
		if (!p->callers_allowed)
			return false;
		/* fall through */
	case RPC_RUN_INLINE_META:
	case RPC_RUN_INLINE_TRY:
		return p->meta_allowed && now_ns >= p->paused_until;
	case RPC_RUN_WORKER:
	default:
		return false;
	}
}

bool rpc_inline_policy_took(struct rpc_inline_policy *p, enum rpc_run run, uint64_t took_ns, uint64_t slept,
			    uint64_t now_ns)
{
	if ((run != RPC_RUN_INLINE_META && run != RPC_RUN_INLINE_TRY && run != RPC_RUN_INLINE_CALLER) ||
	    took_ns <= RPC_INLINE_SLOW_NS || slept == 0)
		return false;
	p->paused_until = now_ns + RPC_INLINE_PAUSE_NS;
	return true;
}

static _Atomic bool inline_enabled = true;
static _Atomic bool inline_meta_allowed;
static _Atomic bool inline_callers_allowed;
static _Atomic uint64_t inline_paused_until;
static _Atomic uint64_t inline_calls, inline_pauses;
static struct log_limit inline_slow_limit;

void rpc_inline_configure(bool enable)
{
	inline_enabled = enable;
}

void rpc_inline_meta_allow(bool allowed)
{
	inline_meta_allowed = allowed;
}

void rpc_inline_callers(bool allowed)
{
	inline_callers_allowed = allowed;
}

void rpc_inline_counts(uint64_t *calls, uint64_t *suspended)
{
	*calls = inline_calls;
	*suspended = inline_pauses;
}

static struct rpc_inline_policy inline_now(void)
{
	return (struct rpc_inline_policy){
		.enabled = inline_enabled,
		.meta_allowed = inline_meta_allowed,
		.callers_allowed = inline_callers_allowed,
		.paused_until = inline_paused_until,
	};
}

bool rpc_inline_pick(enum rpc_run run, uint64_t now_ns)
{
	struct rpc_inline_policy p = inline_now();

	if (!rpc_inline_policy_pick(&p, run, now_ns))
		return false;
	inline_calls++;
	return true;
}

bool rpc_inline_open(enum rpc_run run, uint64_t now_ns)
{
	struct rpc_inline_policy p = inline_now();

	return rpc_inline_policy_pick(&p, run, now_ns);
}

void rpc_inline_pause(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	inline_paused_until = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec + RPC_INLINE_PAUSE_NS;
	inline_pauses++;
}

void rpc_inline_declined(void)
{
	inline_calls--;
}

uint64_t rpc_inline_nvcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nvcsw : 0;
}

void rpc_inline_took(enum rpc_run run, uint64_t took_ns, uint64_t now_ns, uint64_t nvcsw0)
{
	struct rpc_inline_policy p = inline_now();

	if (took_ns <= RPC_INLINE_SLOW_NS)
		return; /* the common case: no second getrusage */
	uint64_t n = rpc_inline_nvcsw();

	if (!rpc_inline_policy_took(&p, run, took_ns, n > nvcsw0 ? n - nvcsw0 : 0, now_ns))
		return; /* preempted only: a worker would have waited for a CPU too */
	inline_paused_until = p.paused_until;
	inline_pauses++;
	log_limited(&inline_slow_limit, LOG_INFO,
		    "rpc: a metadata call slept, %.1f ms on the receiving thread: metadata calls go to the workers for %llu ms",
		    (double)took_ns / 1e6, (unsigned long long)(RPC_INLINE_PAUSE_NS / 1000000));
}
