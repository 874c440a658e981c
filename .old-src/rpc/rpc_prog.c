/*
 * rpc_prog.c - the table of RPC programs the daemon serves.
 *
 * Programs are registered by upper layers (NFS, MOUNT) on the main thread
 * before serving starts and stay until rpc_release(); lookups from the loop
 * thread (dispatch, and the transports' rpc_ddp_rule()) therefore need no lock. The struct rpc_program tables belong to the
 * registering layer (static data); this file owns only the per-procedure
 * counters it allocates for each of them.
 */
#include "rpc/rpc_internal.h"
#include "rpc/rpcbind.h"

#include <stdlib.h>

#include "core/log.h"

#define RPC_MAX_PROGRAMS 16

/* A COMPOUND's chunks must fit what one rpc_call carries. */
_Static_assert(ULB_V4_READ_CHUNKS <= RPC_MAX_DDP_IN, "ULB_V4_READ_CHUNKS > RPC_MAX_DDP_IN");
_Static_assert(ULB_V4_WRITE_CHUNKS <= RPC_MAX_DDP_OUT, "ULB_V4_WRITE_CHUNKS > RPC_MAX_DDP_OUT");

struct rpc_prog_slot {
	const struct rpc_program *prog;
	struct rpc_proc_stats **stats; /* [nversions] -> [nprocs] counters */
};

static struct rpc_prog_slot prog_table[RPC_MAX_PROGRAMS];
static unsigned prog_count;

static void prog_slot_free(struct rpc_prog_slot *s)
{
	if (s->stats) {
		for (uint32_t v = 0; v < s->prog->nversions; v++)
			free(s->stats[v]);
		free(s->stats);
	}
	s->stats = NULL;
	s->prog = NULL;
}

static int prog_slot_fill(struct rpc_prog_slot *s, const struct rpc_program *p)
{
	s->prog = p;
	s->stats = calloc(p->nversions ? p->nversions : 1, sizeof(*s->stats));
	if (!s->stats)
		return -1;
	for (uint32_t v = 0; v < p->nversions; v++) {
		uint32_t n = p->versions[v].nprocs;
		s->stats[v] = calloc(n ? n : 1, sizeof(**s->stats));
		if (!s->stats[v])
			return -1;
	}
	return 0;
}

/* Tables built without RPC_SCRATCH_SIZE() are checked here. */
static bool prog_scratch_ok(const struct rpc_program *p)
{
	for (uint32_t v = 0; v < p->nversions; v++) {
		const struct rpc_version *rv = &p->versions[v];
		for (uint32_t i = 0; i < rv->nprocs; i++) {
			const struct rpc_proc *pr = &rv->procs[i];
			if (pr->args_size > RPC_PROC_SCRATCH || pr->res_size > RPC_PROC_SCRATCH) {
				log_err("rpc: %s version %u procedure %s needs %u/%u bytes of scratch, more than %u",
					p->name, rv->vers, pr->name ? pr->name : "?", pr->args_size,
					pr->res_size, RPC_PROC_SCRATCH);
				return false;
			}
		}
	}
	return true;
}

int rpc_register_program(const struct rpc_program *p)
{
	struct rpc_prog_slot *s = NULL;

	if (!prog_scratch_ok(p))
		return -1;
	for (unsigned i = 0; i < prog_count; i++)
		if (prog_table[i].prog->prog == p->prog)
			s = &prog_table[i]; /* registered again: replace */
	if (s) {
		prog_slot_free(s);
	} else if (prog_count < RPC_MAX_PROGRAMS) {
		s = &prog_table[prog_count++];
	} else {
		log_err("rpc: too many programs, %s (%u) not registered", p->name, p->prog);
		return -1;
	}
	if (prog_slot_fill(s, p) != 0) {
		/* Served without counters rather than not at all. */
		log_err("rpc: out of memory for %s statistics", p->name);
		prog_slot_free(s);
		s->prog = p;
	}
	log_debug("rpc: registered program %s (%u), %u versions", p->name, p->prog, p->nversions);
	return 0;
}

void rpc_prog_find(uint32_t prog, uint32_t vers, struct rpc_prog_lookup *out)
{
	out->prog = NULL;
	out->version = NULL;
	out->stats = NULL;
	out->low = out->high = 0;
	for (unsigned i = 0; i < prog_count; i++) {
		const struct rpc_prog_slot *s = &prog_table[i];
		if (s->prog->prog != prog)
			continue;
		out->prog = s->prog;
		for (uint32_t v = 0; v < s->prog->nversions; v++) {
			const struct rpc_version *rv = &s->prog->versions[v];
			if (v == 0 || rv->vers < out->low)
				out->low = rv->vers;
			if (v == 0 || rv->vers > out->high)
				out->high = rv->vers;
			if (rv->vers == vers) {
				out->version = rv;
				out->stats = s->stats ? s->stats[v] : NULL;
			}
		}
		return;
	}
}

const struct rpc_proc *rpc_ddp_rule(uint32_t prog, uint32_t vers, uint32_t proc,
				    struct ulb_rule *rule)
{
	struct rpc_prog_lookup lk;

	*rule = (struct ulb_rule)ULB_RULE_NONE;
	rpc_prog_find(prog, vers, &lk);
	if (!lk.version || proc >= lk.version->nprocs || !lk.version->procs[proc].execute)
		return NULL;
	*rule = lk.version->procs[proc].ddp;
	return &lk.version->procs[proc];
}

void rpc_prog_release(void)
{
	for (unsigned i = 0; i < prog_count; i++)
		prog_slot_free(&prog_table[i]);
	prog_count = 0;
}

void rpc_stats_foreach(rpc_stats_cb cb, void *arg)
{
	for (unsigned i = 0; i < prog_count; i++) {
		const struct rpc_prog_slot *s = &prog_table[i];
		for (uint32_t v = 0; v < s->prog->nversions; v++) {
			const struct rpc_version *rv = &s->prog->versions[v];
			for (uint32_t p = 0; p < rv->nprocs; p++) {
				struct rpc_proc_snapshot copy = {0};
				if (s->stats)
					rpc_stats_copy(&copy, &s->stats[v][p]);
				cb(s->prog->name, s->prog->prog, rv->vers, p,
				   rv->procs[p].name, &copy, arg);
			}
		}
	}
}

unsigned rpc_prog_versions(struct rpc_prog_vers *out, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < prog_count; i++) {
		const struct rpc_program *p = prog_table[i].prog;
		for (uint32_t v = 0; v < p->nversions; v++) {
			if (n < max) {
				out[n].prog = p->prog;
				out[n].vers = p->versions[v].vers;
				out[n].name = p->name;
			}
			n++;
		}
	}
	return n;
}
