/*
 * rpc_stats.c - counters declared in rpc_stats.h. Per-procedure
 * counters live in the program table (rpc_prog.c allocates them at
 * registration); the global ones are here.
 */
#include "rpc/rpc_internal.h"

static struct rpc_stats_global stats_global;

static void stat_add(uint64_t *v, uint64_t n)
{
	__atomic_fetch_add(v, n, __ATOMIC_RELAXED);
}

static uint64_t stat_get(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

void rpc_stats_count(enum rpc_stat_event ev)
{
	struct rpc_stats_global *g = &stats_global;
	uint64_t *v;

	switch (ev) {
	case RPC_STAT_BAD_HEADER: v = &g->bad_header; break;
	case RPC_STAT_RPC_MISMATCH: v = &g->rpc_mismatch; break;
	case RPC_STAT_AUTH_ERROR: v = &g->auth_error; break;
	case RPC_STAT_PROG_UNAVAIL: v = &g->prog_unavail; break;
	case RPC_STAT_PROG_MISMATCH: v = &g->prog_mismatch; break;
	case RPC_STAT_PROC_UNAVAIL: v = &g->proc_unavail; break;
	case RPC_STAT_GARBAGE_ARGS: v = &g->garbage_args; break;
	case RPC_STAT_SYSTEM_ERR: v = &g->system_err; break;
	case RPC_STAT_HANDLER_DROP: v = &g->handler_drop; break;
	case RPC_STAT_DRC_HIT: v = &g->drc_hit; break;
	case RPC_STAT_DRC_IN_PROGRESS: v = &g->drc_in_progress; break;
	case RPC_STAT_DRC_UNCACHED: v = &g->drc_uncached; break;
	default: return;
	}
	stat_add(v, 1);
}

void rpc_stats_record(struct rpc_proc_stats *s, bool error, uint64_t latency_ns)
{
	if (!s)
		return;
	stat_add(&s->calls, 1);
	if (error)
		stat_add(&s->errors, 1);
	stat_add(&s->latency_ns, latency_ns);
	stats_hist_record(&s->latency, latency_ns);
	uint64_t max = stat_get(&s->latency_max_ns);
	while (latency_ns > max &&
	       !__atomic_compare_exchange_n(&s->latency_max_ns, &max, latency_ns, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void rpc_stats_global_get(struct rpc_stats_global *out)
{
	const uint64_t *src = (const uint64_t *)&stats_global;
	uint64_t *dst = (uint64_t *)out;
	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = stat_get(&src[i]);
}

/* Used by rpc_prog.c's walk: scalars copied with atomic loads. */
void rpc_stats_copy(struct rpc_proc_snapshot *dst, const struct rpc_proc_stats *src)
{
	dst->calls = stat_get(&src->calls);
	dst->errors = stat_get(&src->errors);
	dst->latency_ns = stat_get(&src->latency_ns);
	dst->latency_max_ns = stat_get(&src->latency_max_ns);
	dst->latency = &src->latency;
}

struct procs_adapt {
	stats_proc_cb cb;
	void *arg;
};

static void procs_adapt_cb(const char *prog_name, uint32_t prog, uint32_t vers, uint32_t proc,
			   const char *proc_name, const struct rpc_proc_snapshot *s, void *arg)
{
	struct procs_adapt *a = arg;
	struct stats_proc p = {
		.program = prog_name,
		.vers = vers,
		.proc = proc_name,
		.calls = s->calls,
		.errors = s->errors,
		.latency_ns_total = s->latency_ns,
		.latency = s->latency,
	};
	(void)prog;
	(void)proc;
	a->cb(&p, a->arg);
}

void rpc_stats_procs_foreach(stats_proc_cb cb, void *arg)
{
	struct procs_adapt a = {cb, arg};
	rpc_stats_foreach(procs_adapt_cb, &a);
}
