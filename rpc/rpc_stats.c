/*
 * rpc_stats.c - counters declared in rpc_stats.h. Per-procedure
 * counters live in the program table (rpc_prog.c allocates them at
 * registration); the global ones and the calls by flavor are here, with
 * the "rpc_auth" section of the stats document (flavors, RPCSEC_GSS
 * contexts and, for a verbose request, their principals).
 */
#include "rpc/rpc_internal.h"
#include "rpc/rpc_gss.h"
#include "rpc/rpc_gss_krb5.h"

#include <stdlib.h>

static struct rpc_stats_global stats_global;
static uint64_t stats_flavors[RPC_FLAVOR_STAT_COUNT];
static uint64_t stats_cb_flavors[RPC_FLAVOR_STAT_COUNT]; /* callbacks sent */

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

const char *rpc_flavor_stat_name(enum rpc_flavor_stat f)
{
	static const char *const names[RPC_FLAVOR_STAT_COUNT] = { "none", "sys", "krb5", "krb5i", "krb5p" };

	return (unsigned)f < RPC_FLAVOR_STAT_COUNT ? names[f] : "?";
}

enum rpc_flavor_stat rpc_flavor_stat_of(uint32_t flavor, uint32_t gss_svc)
{
	switch (flavor) {
	case RPC_AUTH_NONE:
		return RPC_FLAVOR_STAT_NONE;
	case RPC_AUTH_SYS:
		return RPC_FLAVOR_STAT_SYS;
	case RPC_AUTH_GSS:
		/* RFC 2623 §2.7: krb5, krb5i, krb5p are the services none, integrity, privacy (RFC 2203 §5). */
		if (gss_svc >= RPC_GSS_SVC_NONE && gss_svc <= RPC_GSS_SVC_PRIVACY)
			return (enum rpc_flavor_stat)(RPC_FLAVOR_STAT_KRB5 + gss_svc - RPC_GSS_SVC_NONE);
		return RPC_FLAVOR_STAT_COUNT;
	default:
		return RPC_FLAVOR_STAT_COUNT;
	}
}

void rpc_stats_count_flavor(const struct rpc_call *c)
{
	enum rpc_flavor_stat f = rpc_flavor_stat_of(c->cred.flavor, c->gss.svc);

	if (f < RPC_FLAVOR_STAT_COUNT)
		stat_add(&stats_flavors[f], 1);
}

static void flavors_get(const uint64_t *v, uint64_t out[RPC_FLAVOR_STAT_COUNT])
{
	for (unsigned i = 0; i < RPC_FLAVOR_STAT_COUNT; i++)
		out[i] = stat_get(&v[i]);
}

void rpc_stats_flavors_get(uint64_t out[RPC_FLAVOR_STAT_COUNT])
{
	flavors_get(stats_flavors, out);
}

void rpc_stats_count_callback(uint32_t flavor, uint32_t gss_svc)
{
	enum rpc_flavor_stat f = rpc_flavor_stat_of(flavor, flavor == RPC_AUTH_GSS ? gss_svc : 0);

	if (f < RPC_FLAVOR_STAT_COUNT)
		stat_add(&stats_cb_flavors[f], 1);
}

void rpc_stats_callbacks_get(uint64_t out[RPC_FLAVOR_STAT_COUNT])
{
	flavors_get(stats_cb_flavors, out);
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

/* A verbose request: the principals of the established contexts, with their counts. */
static void rpc_auth_principals(struct json_out *j)
{
	struct rpc_gss_princ_count *v;
	size_t n = rpc_gss_principals(&v);

	json_arr_open(j, "gss_principals");
	for (size_t i = 0; i < n; i++) {
		json_obj_open(j, NULL);
		json_str(j, "principal", v[i].princ);
		json_u64(j, "contexts", v[i].contexts);
		json_obj_close(j);
	}
	json_arr_close(j);
	free(v);
}

static void rpc_auth_write(struct json_out *j, const char *name, void *arg)
{
	uint64_t fl[RPC_FLAVOR_STAT_COUNT], cb[RPC_FLAVOR_STAT_COUNT], live, cap, ev;

	(void)arg;
	rpc_stats_flavors_get(fl);
	rpc_stats_callbacks_get(cb);
	rpc_gss_counts(&live, &cap, &ev);
	json_obj_open(j, name);
	json_obj_open(j, "calls");
	for (unsigned i = 0; i < RPC_FLAVOR_STAT_COUNT; i++)
		json_u64(j, rpc_flavor_stat_name((enum rpc_flavor_stat)i), fl[i]);
	json_obj_close(j);
	json_obj_open(j, "callbacks"); /* the ones we make */
	for (unsigned i = 0; i < RPC_FLAVOR_STAT_COUNT; i++)
		json_u64(j, rpc_flavor_stat_name((enum rpc_flavor_stat)i), cb[i]);
	json_obj_close(j);
	json_u64(j, "gss_contexts", live);
	json_u64(j, "gss_contexts_max", cap);
	json_u64(j, "gss_evictions", ev);
	if (stats_verbose())
		rpc_auth_principals(j);
	json_obj_close(j);
}

/* One counter family, a series per flavor. false: the family could not be written. */
static bool prom_flavors(struct prom_out *p, const char *name, const char *help,
			 const uint64_t fl[RPC_FLAVOR_STAT_COUNT])
{
	if (!prom_family(p, name, PROM_COUNTER, help))
		return false;
	for (unsigned i = 0; i < RPC_FLAVOR_STAT_COUNT; i++) {
		struct prom_label l = { "flavor", rpc_flavor_stat_name((enum rpc_flavor_stat)i) };
		prom_sample_u64(p, NULL, &l, 1, fl[i]);
	}
	return true;
}

/* No principal label: one series per flavor only (the label set stays fixed). The contexts'
 * gauge is the "resources" section's rnfsd_gss_contexts. */
static void rpc_auth_prom(struct prom_out *p, void *arg)
{
	uint64_t fl[RPC_FLAVOR_STAT_COUNT], cb[RPC_FLAVOR_STAT_COUNT];

	(void)arg;
	rpc_stats_flavors_get(fl);
	rpc_stats_callbacks_get(cb);
	if (prom_flavors(p, "rnfsd_rpc_calls_by_flavor_total",
			 "RPC calls dispatched, by authentication flavor (RPCSEC_GSS: krb5, krb5i, krb5p by service)", fl))
		prom_flavors(p, "rnfsd_rpc_callbacks_by_flavor_total",
			     "NFSv4 callbacks sent, by authentication flavor (RPCSEC_GSS: krb5, krb5i, krb5p by service)",
			     cb);
}

int rpc_stats_section_add(void)
{
	return stats_section_add_prom(STATS_PLACE_STATE, "rpc_auth", rpc_auth_write, NULL, rpc_auth_prom);
}
