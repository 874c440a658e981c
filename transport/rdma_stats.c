/*
 * rdma_stats.c - RPC-over-RDMA's members of the stats document
 * (rdma_stats.h): a connection's own members (the registry calls
 * rdma_stats_conn_write() under its lock, after "calls") and the
 * "rdma_memory" section. Relaxed loads: each number is a gauge on its own.
 */
#include <stddef.h>

#include "transport/rdma_stats.h"

struct rdma_stats_mem rdma_stats_mem;

static uint64_t ld(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static uint32_t ld32(const _Atomic uint32_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static void rdma_stats_conn_write(struct json_out *j, const struct stats_conn *sc)
{
	const struct rdma_stats_conn *s =
		(const struct rdma_stats_conn *)((const char *)sc - offsetof(struct rdma_stats_conn, base));

	json_u64(j, "rdma_version", ld32(&s->rdma_version));
	json_u64(j, "credits", ld32(&s->credits));
	json_u64(j, "inline_recv", ld32(&s->inline_recv));
	json_u64(j, "inline_send", ld32(&s->inline_send));
	json_u64(j, "rdma_reads", ld(&s->rdma_reads));
	json_u64(j, "rdma_read_bytes", ld(&s->rdma_read_bytes));
	json_u64(j, "rdma_writes", ld(&s->rdma_writes));
	json_u64(j, "rdma_write_bytes", ld(&s->rdma_write_bytes));
	json_u64(j, "send_invalidate", ld(&s->send_inv));
	json_u64(j, "err_chunk", ld(&s->err_chunk));
	json_u64(j, "err_vers", ld(&s->err_vers));
}

void rdma_stats_conn_register(struct rdma_stats_conn *s, const char *peer)
{
	atomic_store(&s->rdma_version, 0);
	atomic_store(&s->credits, 0);
	atomic_store(&s->inline_recv, 0);
	atomic_store(&s->inline_send, 0);
	atomic_store(&s->rdma_reads, 0);
	atomic_store(&s->rdma_read_bytes, 0);
	atomic_store(&s->rdma_writes, 0);
	atomic_store(&s->rdma_write_bytes, 0);
	atomic_store(&s->send_inv, 0);
	atomic_store(&s->err_chunk, 0);
	atomic_store(&s->err_vers, 0);
	stats_conn_register(&s->base, "rdma", peer, rdma_stats_conn_write);
}

static void rdma_stats_mem_write(struct json_out *j, const char *name, void *arg)
{
	const struct rdma_stats_mem *m = arg;

	json_obj_open(j, name);
	json_u64(j, "pool_max", ld(&m->pool_max));
	json_u64(j, "pool_registered", ld(&m->pool_registered));
	json_u64(j, "slot_size", ld(&m->slot_size));
	json_u64(j, "slots", ld(&m->slots));
	json_u64(j, "in_use", ld(&m->in_use));
	json_u64(j, "waiting", ld(&m->waiting));
	json_u64(j, "waits", ld(&m->waits));
	json_u64(j, "conn_registered", ld(&m->conn_registered));
	json_obj_close(j);
}

/* The same numbers on the Prometheus page (core/prom.h), in base units. */
static void rdma_stats_mem_prom(struct prom_out *p, void *arg)
{
	const struct rdma_stats_mem *m = arg;
	uint64_t slot = ld(&m->slot_size);

	prom_gauge1(p, "rnfsd_rdma_pool_max_bytes", "Configured bound of the RDMA bulk buffer pools",
		    (double)ld(&m->pool_max));
	prom_gauge1(p, "rnfsd_rdma_pool_registered_bytes", "RDMA bulk buffer bytes registered",
		    (double)ld(&m->pool_registered));
	prom_gauge1(p, "rnfsd_rdma_pool_in_use_bytes", "RDMA bulk buffer bytes held by calls",
		    (double)(ld(&m->in_use) * slot));
	prom_gauge1(p, "rnfsd_rdma_pool_waiting_calls", "Calls waiting for RDMA bulk buffers now",
		    (double)ld(&m->waiting));
	prom_counter1(p, "rnfsd_rdma_pool_waits_total", "Calls that waited for RDMA bulk buffers", ld(&m->waits));
	prom_gauge1(p, "rnfsd_rdma_conn_registered_bytes", "Per-connection RDMA registered memory (send/receive buffers)",
		    (double)ld(&m->conn_registered));
}

int rdma_stats_sections_add(void)
{
	if (stats_section_add(STATS_PLACE_TRANSPORT, "rdma_memory", rdma_stats_mem_write, &rdma_stats_mem) != 0)
		return -1;
	return stats_section_set_prom("rdma_memory", rdma_stats_mem_prom);
}
