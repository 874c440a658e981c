/*
 * stats.c - see stats.h. Two parts:
 *   1. the latency histogram (lock-free, relaxed atomics);
 *   2. the connection registry (a doubly linked list under one mutex, since
 *      transports may register from their own threads), and the JSON
 *      document and status line rendered from it and the stats sources.
 */
#include "core/stats.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "rnfsd_build.h"

/* ---- 1. histogram ---- */

unsigned stats_hist_bucket(uint64_t ns)
{
	const unsigned sub = 1u << STATS_HIST_SUB_BITS;
	if (ns < sub)
		return (unsigned)ns;
	unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
	unsigned frac = (unsigned)(ns >> (msb - STATS_HIST_SUB_BITS)) & (sub - 1);
	unsigned i = (msb - STATS_HIST_SUB_BITS + 1) * sub + frac;
	return i < STATS_HIST_BUCKETS ? i : STATS_HIST_BUCKETS - 1;
}

uint64_t stats_hist_bucket_lower(unsigned i)
{
	const unsigned sub = 1u << STATS_HIST_SUB_BITS;
	if (i < sub)
		return i;
	unsigned msb = i / sub + STATS_HIST_SUB_BITS - 1;
	return (uint64_t)(sub + i % sub) << (msb - STATS_HIST_SUB_BITS);
}

void stats_hist_record(struct stats_hist *h, uint64_t ns)
{
	atomic_fetch_add_explicit(&h->bucket[stats_hist_bucket(ns)], 1, memory_order_relaxed);
}

uint64_t stats_hist_quantile(const struct stats_hist *h, double q)
{
	uint64_t counts[STATS_HIST_BUCKETS], total = 0;

	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
		counts[i] = atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
		total += counts[i];
	}
	if (!total)
		return 0;
	if (q <= 0.0 || q > 1.0)
		q = 1.0;
	/* The rank of the sample at quantile q, 1-based: ceil(q * total). */
	uint64_t rank = (uint64_t)(q * (double)total);
	if ((double)rank < q * (double)total)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
		seen += counts[i];
		if (seen >= rank)
			return i + 1 < STATS_HIST_BUCKETS ? stats_hist_bucket_lower(i + 1) - 1
							  : stats_hist_bucket_lower(i);
	}
	return stats_hist_bucket_lower(STATS_HIST_BUCKETS - 1);
}

/* ---- 2. registry ---- */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stats_conn *stats_conns;      /* newest first */
static struct stats_sources stats_src;
static struct timespec stats_started;

void stats_uptime_start(void)
{
	if (!stats_started.tv_sec && !stats_started.tv_nsec)
		clock_gettime(CLOCK_MONOTONIC, &stats_started);
}

void stats_set_sources(const struct stats_sources *s)
{
	stats_src = *s;
}

static void stats_conn_zero(struct stats_conn *sc)
{
	atomic_store(&sc->rdma_version, 0);
	atomic_store(&sc->credits, 0);
	atomic_store(&sc->inline_recv, 0);
	atomic_store(&sc->inline_send, 0);
	atomic_store(&sc->calls, 0);
	atomic_store(&sc->rdma_reads, 0);
	atomic_store(&sc->rdma_read_bytes, 0);
	atomic_store(&sc->rdma_writes, 0);
	atomic_store(&sc->rdma_write_bytes, 0);
	atomic_store(&sc->send_inv, 0);
	atomic_store(&sc->err_chunk, 0);
	atomic_store(&sc->err_vers, 0);
	atomic_store(&sc->garbage_args, 0);
}

void stats_conn_register(struct stats_conn *sc, const char *transport, const char *peer)
{
	if (transport)
		snprintf(sc->transport, sizeof(sc->transport), "%s", transport);
	if (peer)
		snprintf(sc->peer, sizeof(sc->peer), "%s", peer);
	stats_conn_zero(sc);
	clock_gettime(CLOCK_MONOTONIC, &sc->since);

	pthread_mutex_lock(&stats_lock);
	if (!sc->registered) {
		sc->prev = NULL;
		sc->next = stats_conns;
		if (stats_conns)
			stats_conns->prev = sc;
		stats_conns = sc;
		sc->registered = true;
	}
	pthread_mutex_unlock(&stats_lock);
}

void stats_conn_unregister(struct stats_conn *sc)
{
	pthread_mutex_lock(&stats_lock);
	if (sc->registered) {
		if (sc->prev)
			sc->prev->next = sc->next;
		else
			stats_conns = sc->next;
		if (sc->next)
			sc->next->prev = sc->prev;
		sc->prev = sc->next = NULL;
		sc->registered = false;
	}
	pthread_mutex_unlock(&stats_lock);
}

void stats_conn_counts(unsigned *total, unsigned *tcp, unsigned *rdma)
{
	unsigned t = 0, nt = 0, nr = 0;

	pthread_mutex_lock(&stats_lock);
	for (struct stats_conn *sc = stats_conns; sc; sc = sc->next) {
		t++;
		if (!strcmp(sc->transport, "rdma"))
			nr++;
		else if (!strcmp(sc->transport, "tcp"))
			nt++;
	}
	pthread_mutex_unlock(&stats_lock);
	if (total)
		*total = t;
	if (tcp)
		*tcp = nt;
	if (rdma)
		*rdma = nr;
}

/* ---- the JSON document ---- */

static uint64_t ld(_Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static uint32_t ld32(_Atomic uint32_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static double elapsed_s(const struct timespec *since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) + (double)(now.tv_nsec - since->tv_nsec) / 1e9;
}

struct json_list {
	FILE *f;
	bool first;
	uint64_t calls, errors;
};

static void json_proc(const struct stats_proc *p, void *arg)
{
	struct json_list *jl = arg;
	FILE *f = jl->f;
	double mean_us = p->calls ? (double)p->latency_ns_total / (double)p->calls / 1e3 : 0.0;

	jl->calls += p->calls;
	jl->errors += p->errors;
	fprintf(f, "%s\n    {\"program\": ", jl->first ? "" : ",");
	json_str(f, p->program);
	fprintf(f, ", \"version\": %u, \"procedure\": ", p->vers);
	json_str(f, p->proc);
	fprintf(f, ", \"calls\": %llu, \"errors\": %llu, \"latency_mean_us\": %.1f, \"latency_p99_us\": ",
		(unsigned long long)p->calls, (unsigned long long)p->errors, mean_us);
	if (p->latency)
		fprintf(f, "%.1f}", (double)stats_hist_quantile(p->latency, 0.99) / 1e3);
	else
		fprintf(f, "null}");
	jl->first = false;
}

static void json_conn(FILE *f, struct stats_conn *sc, bool first)
{
	fprintf(f, "%s\n    {\"peer\": ", first ? "" : ",");
	json_str(f, sc->peer);
	fprintf(f, ", \"transport\": ");
	json_str(f, sc->transport);
	fprintf(f, ", \"connected_s\": %.0f, \"calls\": %llu", elapsed_s(&sc->since),
		(unsigned long long)ld(&sc->calls));
	if (!strcmp(sc->transport, "rdma")) {
		fprintf(f, ", \"rdma_version\": %u, \"credits\": %u, \"inline_recv\": %u, \"inline_send\": %u",
			ld32(&sc->rdma_version), ld32(&sc->credits), ld32(&sc->inline_recv),
			ld32(&sc->inline_send));
		fprintf(f, ", \"rdma_reads\": %llu, \"rdma_read_bytes\": %llu"
			   ", \"rdma_writes\": %llu, \"rdma_write_bytes\": %llu, \"send_invalidate\": %llu",
			(unsigned long long)ld(&sc->rdma_reads), (unsigned long long)ld(&sc->rdma_read_bytes),
			(unsigned long long)ld(&sc->rdma_writes), (unsigned long long)ld(&sc->rdma_write_bytes),
			(unsigned long long)ld(&sc->send_inv));
		fprintf(f, ", \"err_chunk\": %llu, \"err_vers\": %llu",
			(unsigned long long)ld(&sc->err_chunk), (unsigned long long)ld(&sc->err_vers));
	}
	fprintf(f, ", \"garbage_args\": %llu}", (unsigned long long)ld(&sc->garbage_args));
}

struct stats_rdma_mem stats_rdma_mem;

static void json_rdma_mem(FILE *f)
{
	struct stats_rdma_mem *m = &stats_rdma_mem;

	fprintf(f, "  \"rdma_memory\": {\"pool_max\": %llu, \"pool_registered\": %llu, \"slot_size\": %llu"
		   ", \"slots\": %llu, \"in_use\": %llu, \"waiting\": %llu, \"waits\": %llu"
		   ", \"conn_registered\": %llu},\n",
		(unsigned long long)ld(&m->pool_max), (unsigned long long)ld(&m->pool_registered),
		(unsigned long long)ld(&m->slot_size), (unsigned long long)ld(&m->slots),
		(unsigned long long)ld(&m->in_use), (unsigned long long)ld(&m->waiting),
		(unsigned long long)ld(&m->waits), (unsigned long long)ld(&m->conn_registered));
}

/* "nfs4_operations" (COMPOUND's operations, not in the totals: COMPOUND is) and "nfs4". */
static void json_nfs4(FILE *f)
{
	struct json_list ol = {.f = f, .first = true};
	struct stats_nfs4 n = {0};

	if (!stats_src.nfs4_state)
		return;
	stats_src.nfs4_state(&n);
	fprintf(f, "  \"nfs4_operations\": [");
	if (stats_src.nfs4_ops_foreach)
		stats_src.nfs4_ops_foreach(json_proc, &ol);
	fprintf(f, "%s],\n", ol.first ? "" : "\n  ");
	fprintf(f, "  \"nfs4\": {\"clients\": %u, \"sessions\": %u, \"opens\": %llu, \"locks\": %llu"
		   ", \"delegations\": %llu, \"recalls\": %llu, \"delegreturns\": %llu, \"revoked\": %llu"
		   ", \"recorded_clients\": %u, \"grace_left_s\": %.1f"
		   ", \"reclaims\": %llu, \"grace_refused\": %llu, \"no_grace\": %llu"
		   ", \"open_files\": %llu, \"open_owners\": %llu, \"lock_owners\": %llu, \"open_files_max\": %llu"
		   ", \"opens_per_client_max\": %llu, \"lock_owners_per_client_max\": %llu},\n",
		n.clients, n.sessions, (unsigned long long)n.opens, (unsigned long long)n.locks,
		(unsigned long long)n.delegations, (unsigned long long)n.recalls, (unsigned long long)n.returned,
		(unsigned long long)n.revoked, n.recorded_clients, (double)n.grace_left_ms / 1e3,
		(unsigned long long)n.reclaims, (unsigned long long)n.grace_refused,
		(unsigned long long)n.no_grace, (unsigned long long)n.open_files, (unsigned long long)n.open_owners,
		(unsigned long long)n.lock_owners, (unsigned long long)n.open_files_max,
		(unsigned long long)n.opens_per_client_max, (unsigned long long)n.lock_owners_per_client_max);
	fprintf(f, "  \"nfs4_async\": {\"copies_started\": %llu, \"copies_done\": %llu, \"copies_cancelled\": %llu"
		   ", \"cb_offload_sent\": %llu, \"cb_notify_lock_sent\": %llu},\n",
		(unsigned long long)n.copies_async_started, (unsigned long long)n.copies_async_done,
		(unsigned long long)n.copies_async_cancelled, (unsigned long long)n.cb_offload_sent,
		(unsigned long long)n.cb_notify_lock_sent);
}

/* One entry of "nfs4_callbacks". */
static void json_nfs4_cb(const struct stats_nfs4_cb *c, void *arg)
{
	struct json_list *jl = arg;

	fprintf(jl->f, "%s\n    {\"clientid\": \"%016llx\", \"minor\": %u, \"state\": ", jl->first ? "" : ",",
		(unsigned long long)c->clientid, c->minor);
	json_str(jl->f, c->state);
	fprintf(jl->f, ", \"transport\": ");
	json_str(jl->f, c->transport);
	fprintf(jl->f, ", \"sent\": %llu, \"ok\": %llu, \"failed\": %llu}", (unsigned long long)c->sent,
		(unsigned long long)c->ok, (unsigned long long)c->failed);
	jl->first = false;
}

/* "nfs4_callbacks": each client's callback path (RFC 8881 §2.10.3.1, RFC 7530 §3.3.2). */
static void json_nfs4_cbs(FILE *f)
{
	struct json_list cl = {.f = f, .first = true};

	if (!stats_src.nfs4_cb_foreach)
		return;
	fprintf(f, "  \"nfs4_callbacks\": [");
	stats_src.nfs4_cb_foreach(json_nfs4_cb, &cl);
	fprintf(f, "%s],\n", cl.first ? "" : "\n  ");
}

/* "resources": descriptors against the limit, and the tables that hold them. */
static void json_resources(FILE *f)
{
	struct stats_resources r = {0};

	if (!stats_src.resources)
		return;
	stats_src.resources(&r);
	fprintf(f, "  \"resources\": {\"fds\": %llu, \"fd_limit\": %llu, \"fd_reserve\": %llu"
		   ", \"lock_descriptions\": %llu, \"lock_descriptions_max\": %llu, \"nlm_owners\": %llu"
		   ", \"nlm_held\": %llu, \"nlm_per_host_max\": %llu},\n",
		(unsigned long long)r.fds, (unsigned long long)r.fd_limit, (unsigned long long)r.fd_reserve,
		(unsigned long long)r.lock_descriptions, (unsigned long long)r.lock_descriptions_max,
		(unsigned long long)r.nlm_owners, (unsigned long long)r.nlm_held, (unsigned long long)r.nlm_per_host_max);
}

int stats_render_json(FILE *f)
{
	struct json_list jl = {.f = f, .first = true};
	unsigned total, tcp, rdma;

	stats_uptime_start();
	stats_conn_counts(&total, &tcp, &rdma);
	fprintf(f, "{\n  \"version\": ");
	json_str(f, RNFSD_VERSION);
	fprintf(f, ",\n  \"pid\": %ld,\n  \"uptime_s\": %.0f,\n  \"exports\": %u,\n",
		(long)getpid(), elapsed_s(&stats_started),
		stats_src.exports_count ? stats_src.exports_count() : 0);
	fprintf(f, "  \"procedures\": [");
	if (stats_src.procs_foreach)
		stats_src.procs_foreach(json_proc, &jl);
	fprintf(f, "%s],\n", jl.first ? "" : "\n  ");
	json_nfs4(f);
	json_nfs4_cbs(f);
	json_resources(f);
	uint64_t inl = 0, inl_paused = 0;
	if (stats_src.inline_counts)
		stats_src.inline_counts(&inl, &inl_paused);
	fprintf(f, "  \"totals\": {\"calls\": %llu, \"errors\": %llu, \"connections\": %u, \"tcp\": %u, \"rdma\": %u, "
		"\"inline_calls\": %llu, \"inline_paused\": %llu},\n",
		(unsigned long long)jl.calls, (unsigned long long)jl.errors, total, tcp, rdma,
		(unsigned long long)inl, (unsigned long long)inl_paused);
	json_rdma_mem(f);
	fprintf(f, "  \"connections\": [");
	bool first = true;
	pthread_mutex_lock(&stats_lock);
	for (struct stats_conn *sc = stats_conns; sc; sc = sc->next) {
		json_conn(f, sc, first);
		first = false;
	}
	pthread_mutex_unlock(&stats_lock);
	fprintf(f, "%s]\n}\n", first ? "" : "\n  ");
	return ferror(f) ? -1 : 0;
}

static void stats_total_calls(const struct stats_proc *p, void *arg)
{
	*(uint64_t *)arg += p->calls;
}

void stats_status_line(char *buf, size_t len)
{
	unsigned total, tcp, rdma, nexp = stats_src.exports_count ? stats_src.exports_count() : 0;
	uint64_t calls = 0;

	stats_conn_counts(&total, &tcp, &rdma);
	if (stats_src.procs_foreach)
		stats_src.procs_foreach(stats_total_calls, &calls);
	snprintf(buf, len, "%u export%s, %u connection%s (%u tcp, %u rdma), %llu calls",
		 nexp, nexp == 1 ? "" : "s", total, total == 1 ? "" : "s", tcp, rdma,
		 (unsigned long long)calls);
}

