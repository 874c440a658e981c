/*
 * rdma_stats.c - RPC-over-RDMA's members of the stats document
 * (rdma_stats.h): a connection's own members (the registry calls
 * rdma_stats_conn_write() under its lock, after "calls") and the
 * "rdma_memory" section. Relaxed loads: each number is a gauge on its own.
 * On the Prometheus page, per-connection counters are summed over the open
 * connections plus the closed ones' totals (rdma_closed, folded in at
 * unregister), both under rdma_stats_lock so a sum never goes back.
 */
#include <pthread.h>
#include <stddef.h>

#include "transport/rdma_stats.h"

struct rdma_stats_mem rdma_stats_mem;

/* The counters that outlive a connection, summed (closed connections, or all for a page). */
struct rdma_stats_sum {
	uint64_t reads, read_bytes, writes, write_bytes, send_inv, err_chunk, err_vers;
	uint64_t credits; /* a gauge: open connections only */
};

static pthread_mutex_t rdma_stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rdma_stats_sum rdma_closed; /* under rdma_stats_lock */

static uint64_t ld(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static uint32_t ld32(const _Atomic uint32_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static const struct rdma_stats_conn *rdma_of(const struct stats_conn *sc)
{
	return (const struct rdma_stats_conn *)((const char *)sc - offsetof(struct rdma_stats_conn, base));
}

static void rdma_stats_conn_write(struct json_out *j, const struct stats_conn *sc)
{
	const struct rdma_stats_conn *s = rdma_of(sc);

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

/* Add s's counters to sum. */
static void rdma_stats_add(struct rdma_stats_sum *sum, const struct rdma_stats_conn *s)
{
	sum->reads += ld(&s->rdma_reads), sum->read_bytes += ld(&s->rdma_read_bytes);
	sum->writes += ld(&s->rdma_writes), sum->write_bytes += ld(&s->rdma_write_bytes);
	sum->send_inv += ld(&s->send_inv), sum->err_chunk += ld(&s->err_chunk), sum->err_vers += ld(&s->err_vers);
}

void rdma_stats_conn_unregister(struct rdma_stats_conn *s)
{
	pthread_mutex_lock(&rdma_stats_lock);
	if (s->base.registered)
		rdma_stats_add(&rdma_closed, s);
	stats_conn_unregister(&s->base);
	pthread_mutex_unlock(&rdma_stats_lock);
}

/* stats_conn_foreach(): the open RDMA connections' counters and credits. */
static void rdma_stats_sum_cb(const struct stats_conn *sc, void *arg)
{
	struct rdma_stats_sum *sum = arg;

	if (sc->ext != rdma_stats_conn_write)
		return;
	rdma_stats_add(sum, rdma_of(sc));
	sum->credits += ld32(&rdma_of(sc)->credits);
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

/* The connections' counters, all connections ever (open ones and closed ones' totals). */
static void rdma_stats_conns_prom(struct prom_out *p)
{
	struct rdma_stats_sum sum;

	pthread_mutex_lock(&rdma_stats_lock);
	sum = rdma_closed;
	sum.credits = 0;
	stats_conn_foreach(rdma_stats_sum_cb, &sum);
	pthread_mutex_unlock(&rdma_stats_lock);
	prom_gauge1(p, "rnfsd_rdma_credits_granted", "RPC-over-RDMA credits granted, summed over open connections",
		    (double)sum.credits);
	prom_counter1(p, "rnfsd_rdma_reads_total", "RDMA Reads posted (Read chunks)", sum.reads);
	prom_counter1(p, "rnfsd_rdma_read_bytes_total", "Bytes pulled with RDMA Read", sum.read_bytes);
	prom_counter1(p, "rnfsd_rdma_writes_total", "RDMA Writes posted (Write and Reply chunks)", sum.writes);
	prom_counter1(p, "rnfsd_rdma_write_bytes_total", "Bytes pushed with RDMA Write", sum.write_bytes);
	prom_counter1(p, "rnfsd_rdma_send_invalidate_total", "Replies sent with Send With Invalidate", sum.send_inv);
	/* RFC 8166 §4.5: the two RDMA_ERROR kinds. */
	if (prom_family(p, "rnfsd_rdma_errors_total", PROM_COUNTER, "RDMA_ERROR replies sent, per error")) {
		prom_sample_u64(p, NULL, &(struct prom_label){ "error", "ERR_CHUNK" }, 1, sum.err_chunk);
		prom_sample_u64(p, NULL, &(struct prom_label){ "error", "ERR_VERS" }, 1, sum.err_vers);
	}
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
	rdma_stats_conns_prom(p);
}

int rdma_stats_sections_add(void)
{
	return stats_section_add_prom(STATS_PLACE_TRANSPORT, "rdma_memory", rdma_stats_mem_write, &rdma_stats_mem, rdma_stats_mem_prom);
}
