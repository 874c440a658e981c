/*
 * stats.c - see stats.h. Three parts:
 *   1. the latency histogram (lock-free, relaxed atomics);
 *   2. the connection registry (a doubly linked list under one mutex, since
 *      transports may register from their own threads) and the table of
 *      sections (fixed size, under the same mutex);
 *   3. the JSON document (core/json.h) and status line rendered from them
 *      and the stats sources;
 *   4. the Prometheus page (core/prom.h) rendered from the same sources;
 *   5. the busiest clients (opt-in): closed connections' totals per address
 *      in a fixed table (the least busy entry gives way), merged with the
 *      open ones at render time.
 */
#include "core/stats.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rnfsd_build.h"
#include "core/grace.h"

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

/* ---- 2. registry and sections ---- */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stats_conn *stats_conns;      /* newest first */
static struct stats_sources stats_src;
static void (*stats_usage_fill)(struct stats_usage *out);
/* Bytes of closed connections, per transport: [0] tcp, [1] rdma; rx then tx (under stats_lock). */
static uint64_t stats_closed_bytes[2][2];
/* UDP's bytes (no connection: counted per datagram, stats_udp_bytes): rx then tx. */
static _Atomic uint64_t stats_udp[2];

/* Part 5: one client address's counters. */
struct stats_client {
	char addr[48];
	uint64_t calls, rx, tx;
	uint64_t weight; /* kept entries: calls plus its open connections' at its last fold (eviction order) */
};
static unsigned stats_top_n;                                    /* 0: off */
static struct stats_client stats_clients_closed[STATS_CLIENTS_KEPT]; /* under stats_lock */
static unsigned stats_nclients_closed;
static void stats_client_fold(const struct stats_conn *sc);
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

void stats_conn_register(struct stats_conn *sc, const char *transport, const char *peer, stats_conn_ext_fn ext)
{
	if (transport)
		snprintf(sc->transport, sizeof(sc->transport), "%s", transport);
	if (peer)
		snprintf(sc->peer, sizeof(sc->peer), "%s", peer);
	sc->ext = ext;
	atomic_store(&sc->calls, 0);
	atomic_store(&sc->garbage_args, 0);
	atomic_store(&sc->rx_bytes, 0);
	atomic_store(&sc->tx_bytes, 0);
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

/* Index into stats_closed_bytes, or -1 for another transport. */
static int stats_transport_idx(const char *transport)
{
	return !strcmp(transport, "tcp") ? 0 : !strcmp(transport, "rdma") ? 1 : -1;
}

void stats_conn_unregister(struct stats_conn *sc)
{
	pthread_mutex_lock(&stats_lock);
	if (sc->registered) {
		int t = stats_transport_idx(sc->transport);

		if (t >= 0) {
			stats_closed_bytes[t][0] += atomic_load_explicit(&sc->rx_bytes, memory_order_relaxed);
			stats_closed_bytes[t][1] += atomic_load_explicit(&sc->tx_bytes, memory_order_relaxed);
		}
		if (stats_top_n)
			stats_client_fold(sc);
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

void stats_conn_foreach(void (*cb)(const struct stats_conn *sc, void *arg), void *arg)
{
	pthread_mutex_lock(&stats_lock);
	for (const struct stats_conn *sc = stats_conns; sc; sc = sc->next)
		cb(sc, arg);
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

void stats_udp_bytes(uint64_t rx, uint64_t tx)
{
	if (rx)
		atomic_fetch_add_explicit(&stats_udp[0], rx, memory_order_relaxed);
	if (tx)
		atomic_fetch_add_explicit(&stats_udp[1], tx, memory_order_relaxed);
}

void stats_transport_bytes(const char *transport, uint64_t *rx, uint64_t *tx)
{
	int t = stats_transport_idx(transport);

	*rx = *tx = 0;
	if (!strcmp(transport, "udp")) {
		*rx = atomic_load_explicit(&stats_udp[0], memory_order_relaxed);
		*tx = atomic_load_explicit(&stats_udp[1], memory_order_relaxed);
	}
	if (t < 0)
		return;
	pthread_mutex_lock(&stats_lock);
	*rx = stats_closed_bytes[t][0];
	*tx = stats_closed_bytes[t][1];
	for (const struct stats_conn *sc = stats_conns; sc; sc = sc->next)
		if (stats_transport_idx(sc->transport) == t) {
			*rx += atomic_load_explicit(&sc->rx_bytes, memory_order_relaxed);
			*tx += atomic_load_explicit(&sc->tx_bytes, memory_order_relaxed);
		}
	pthread_mutex_unlock(&stats_lock);
}

void stats_set_usage(void (*fill)(struct stats_usage *out))
{
	stats_usage_fill = fill;
}

/* The usage numbers, zeros without a source. */
static struct stats_usage stats_usage_get(void)
{
	struct stats_usage u = { 0 };

	if (stats_usage_fill)
		stats_usage_fill(&u);
	return u;
}

struct stats_section {
	enum stats_place place;
	const char *name;
	stats_section_fn write;
	void *arg;
	stats_section_prom_fn prom; /* NULL: no metrics of its own */
};

static struct stats_section stats_sections[STATS_SECTIONS_MAX];
static unsigned stats_nsections;

int stats_section_add_prom(enum stats_place place, const char *name, stats_section_fn write, void *arg,
			   stats_section_prom_fn prom)
{
	int ret = -1;

	pthread_mutex_lock(&stats_lock);
	if (stats_nsections < STATS_SECTIONS_MAX) {
		stats_sections[stats_nsections++] = (struct stats_section){place, name, write, arg, prom};
		ret = 0;
	}
	pthread_mutex_unlock(&stats_lock);
	return ret;
}

int stats_section_add(enum stats_place place, const char *name, stats_section_fn write, void *arg)
{
	return stats_section_add_prom(place, name, write, arg, NULL);
}

int stats_section_set_prom(const char *name, stats_section_prom_fn prom)
{
	int ret = -1;

	pthread_mutex_lock(&stats_lock);
	for (unsigned i = 0; i < stats_nsections; i++)
		if (!strcmp(stats_sections[i].name, name)) {
			stats_sections[i].prom = prom;
			ret = 0;
		}
	pthread_mutex_unlock(&stats_lock);
	return ret;
}

/* A copy of the table taken under the lock; returns how many. */
static unsigned stats_sections_copy(struct stats_section copy[STATS_SECTIONS_MAX])
{
	unsigned n;

	pthread_mutex_lock(&stats_lock);
	n = stats_nsections;
	memcpy(copy, stats_sections, n * sizeof(copy[0]));
	pthread_mutex_unlock(&stats_lock);
	return n;
}

void stats_sections_clear(void)
{
	pthread_mutex_lock(&stats_lock);
	stats_nsections = 0;
	pthread_mutex_unlock(&stats_lock);
}

/* ---- 3. the JSON document ---- */


static double elapsed_s(const struct timespec *since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) + (double)(now.tv_nsec - since->tv_nsec) / 1e9;
}

void stats_json_proc(struct json_out *j, const struct stats_proc *p)
{
	double mean_us = p->calls ? (double)p->latency_ns_total / (double)p->calls / 1e3 : 0.0;

	json_obj_open(j, NULL);
	json_str(j, "program", p->program);
	json_u64(j, "version", p->vers);
	json_str(j, "procedure", p->proc);
	json_u64(j, "calls", p->calls);
	json_u64(j, "errors", p->errors);
	json_fixed(j, "latency_mean_us", mean_us, 1);
	if (p->latency)
		json_fixed(j, "latency_p99_us", (double)stats_hist_quantile(p->latency, 0.99) / 1e3, 1);
	else
		json_null(j, "latency_p99_us");
	json_obj_close(j);
}

/* "procedures", summed into the totals. */
struct json_procs {
	struct json_out *j;
	uint64_t calls, errors;
};

static void json_proc_total(const struct stats_proc *p, void *arg)
{
	struct json_procs *jp = arg;

	jp->calls += p->calls;
	jp->errors += p->errors;
	stats_json_proc(jp->j, p);
}

static void json_conn(struct json_out *j, const struct stats_conn *sc)
{
	json_obj_open(j, NULL);
	json_str(j, "peer", sc->peer);
	json_str(j, "transport", sc->transport);
	json_fixed(j, "connected_s", elapsed_s(&sc->since), 0);
	json_u64(j, "calls", atomic_load_explicit(&sc->calls, memory_order_relaxed));
	if (sc->ext)
		sc->ext(j, sc);
	json_u64(j, "garbage_args", atomic_load_explicit(&sc->garbage_args, memory_order_relaxed));
	json_u64(j, "rx_bytes", atomic_load_explicit(&sc->rx_bytes, memory_order_relaxed));
	json_u64(j, "tx_bytes", atomic_load_explicit(&sc->tx_bytes, memory_order_relaxed));
	json_obj_close(j);
}

/* The sections of one place, from a copy of the table taken under the lock. */
static void json_sections(struct json_out *j, enum stats_place place)
{
	struct stats_section copy[STATS_SECTIONS_MAX];
	unsigned n = stats_sections_copy(copy);

	for (unsigned i = 0; i < n; i++)
		if (copy[i].place == place)
			copy[i].write(j, copy[i].name, copy[i].arg);
}

/* "transport_bytes" and "usage": what the loop, the workers and the transports did. */
static void json_usage(struct json_out *j)
{
	static const char *const xprts[] = { "tcp", "rdma", "udp" };
	struct stats_usage u = stats_usage_get();

	json_obj_open(j, "transport_bytes");
	for (unsigned i = 0; i < 3; i++) {
		uint64_t rx, tx;

		stats_transport_bytes(xprts[i], &rx, &tx);
		json_obj_open(j, xprts[i]);
		json_u64(j, "received", rx);
		json_u64(j, "sent", tx);
		json_obj_close(j);
	}
	json_obj_close(j);
	json_obj_open(j, "usage");
	json_fixed(j, "loop_busy_s", u.loop_busy_s, 3);
	json_fixed(j, "workers_busy_s", u.workers_busy_s, 3);
	json_u64(j, "workers", u.workers);
	json_u64(j, "workers_busy", u.workers_busy);
	json_u64(j, "queued", u.queued);
	json_obj_close(j);
}

static void json_totals(struct json_out *j, const struct json_procs *jp)
{
	unsigned total, tcp, rdma;
	uint64_t inl = 0, inl_paused = 0;

	stats_conn_counts(&total, &tcp, &rdma);
	if (stats_src.inline_counts)
		stats_src.inline_counts(&inl, &inl_paused);
	json_obj_open(j, "totals");
	json_u64(j, "calls", jp->calls);
	json_u64(j, "errors", jp->errors);
	json_u64(j, "connections", total);
	json_u64(j, "tcp", tcp);
	json_u64(j, "rdma", rdma);
	json_u64(j, "inline_calls", inl);
	json_u64(j, "inline_paused", inl_paused);
	json_obj_close(j);
	json_usage(j);
}

int stats_render_json(FILE *f)
{
	struct json_out j;
	struct json_procs jp = {.j = &j};

	stats_uptime_start();
	json_begin(&j, f);
	json_str(&j, "version", RNFSD_VERSION);
	json_i64(&j, "pid", (int64_t)getpid());
	json_fixed(&j, "uptime_s", elapsed_s(&stats_started), 0);
	json_u64(&j, "exports", stats_src.exports_count ? stats_src.exports_count() : 0);
	json_arr_open(&j, "procedures");
	if (stats_src.procs_foreach)
		stats_src.procs_foreach(json_proc_total, &jp);
	json_arr_close(&j);
	json_sections(&j, STATS_PLACE_STATE);
	json_totals(&j, &jp);
	json_sections(&j, STATS_PLACE_TRANSPORT);
	json_arr_open(&j, "connections");
	pthread_mutex_lock(&stats_lock);
	for (const struct stats_conn *sc = stats_conns; sc; sc = sc->next)
		json_conn(&j, sc);
	pthread_mutex_unlock(&stats_lock);
	json_arr_close(&j);
	return json_end(&j);
}

static _Thread_local bool stats_verbose_now;

bool stats_verbose(void)
{
	return stats_verbose_now;
}

int stats_render_json_verbose(FILE *f)
{
	stats_verbose_now = true;
	int r = stats_render_json(f);
	stats_verbose_now = false;
	return r;
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


/* ---- 4. the Prometheus page ---- */

/*
 * Upper bounds (seconds) of the exported latency buckets. A histogram
 * bucket of stats_hist counts under the first bound not below its own
 * largest value, so each cumulative count is exact or an undercount by
 * less than one log-scale bucket (19%).
 */
static const double prom_le[] = { 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2,
				  2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };
static const char *const prom_le_s[] = { "1e-05", "2.5e-05", "5e-05", "0.0001", "0.00025", "0.0005", "0.001",
					 "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1",
					 "2.5", "5", "10", "+Inf" };
#define PROM_LE_N (sizeof(prom_le) / sizeof(prom_le[0]))
_Static_assert(sizeof(prom_le_s) / sizeof(prom_le_s[0]) == PROM_LE_N + 1, "one label per bound, and +Inf");

/* One histogram's _bucket, _sum and _count lines; labels has room for one more ("le") at [n]. */
static void stats_prom_hist(struct prom_out *p, struct prom_label *labels, unsigned n, const struct stats_hist *h,
			    double sum_s)
{
	uint64_t cum[PROM_LE_N + 1] = { 0 };

	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
		uint64_t c = atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
		double top = i + 1 < STATS_HIST_BUCKETS ? (double)(stats_hist_bucket_lower(i + 1) - 1) / 1e9 : INFINITY;
		unsigned k = 0;

		while (k < PROM_LE_N && prom_le[k] < top)
			k++;
		cum[k] += c; /* k == PROM_LE_N: only +Inf */
	}
	labels[n].name = "le";
	for (unsigned k = 0; k <= PROM_LE_N; k++) {
		if (k)
			cum[k] += cum[k - 1];
		labels[n].value = prom_le_s[k];
		prom_sample_u64(p, "_bucket", labels, n + 1, cum[k]);
	}
	prom_sample(p, "_sum", labels, n, sum_s);
	prom_sample_u64(p, "_count", labels, n, cum[PROM_LE_N]);
}

struct prom_procs_walk {
	struct prom_out *p;
	const struct stats_prom_procs *names;
	int part; /* 0 calls, 1 errors, 2 latency */
};

static void prom_proc_cb(const struct stats_proc *sp, void *arg)
{
	struct prom_procs_walk *w = arg;
	struct prom_label l[4];
	char vers[16];
	unsigned n = 0;

	if (w->names->program) {
		snprintf(vers, sizeof(vers), "%u", (unsigned)sp->vers);
		l[n++] = (struct prom_label){ "program", sp->program };
		l[n++] = (struct prom_label){ "version", vers };
	}
	l[n++] = (struct prom_label){ w->names->label, sp->proc };
	if (w->part == 0)
		prom_sample_u64(w->p, NULL, l, n, sp->calls);
	else if (w->part == 1)
		prom_sample_u64(w->p, NULL, l, n, sp->errors);
	else if (sp->latency && sp->calls)
		stats_prom_hist(w->p, l, n, sp->latency, (double)sp->latency_ns_total / 1e9);
}

void stats_prom_procs(struct prom_out *p, const struct stats_prom_procs *names,
		      void (*foreach)(stats_proc_cb cb, void *arg))
{
	struct prom_procs_walk w = { p, names, 0 };

	if (!foreach)
		return;
	if (prom_family(p, names->calls, PROM_COUNTER, names->calls_help))
		foreach(prom_proc_cb, &w);
	w.part = 1;
	if (prom_family(p, names->errors, PROM_COUNTER, names->errors_help))
		foreach(prom_proc_cb, &w);
	w.part = 2;
	if (prom_family(p, names->latency, PROM_HISTOGRAM, names->latency_help))
		foreach(prom_proc_cb, &w);
}

/* The shared grace clock (core/grace.h): each protocol's term, and what is left of the whole. */
static void prom_grace(struct prom_out *p)
{
	uint64_t now = grace_now_ms();

	if (prom_family(p, "rnfsd_grace_period_active", PROM_GAUGE,
			"1 while the protocol's grace period runs (only reclaims get new locks)")) {
		prom_sample(p, NULL, &(struct prom_label){ "protocol", "nlm" }, 1,
			    grace_clock_held(&grace_server, GRACE_NLM, now));
		prom_sample(p, NULL, &(struct prom_label){ "protocol", "nfs4" }, 1,
			    grace_clock_held(&grace_server, GRACE_NFS4, now));
	}
	prom_gauge1(p, "rnfsd_grace_period_remaining_seconds", "Seconds left of the server's grace period",
		    (double)grace_clock_left_ms(&grace_server, now) / 1e3);
}

/* Bytes per transport, and the loop's and the workers' utilisation. */
static void prom_usage(struct prom_out *p)
{
	static const char *const xprts[] = { "tcp", "rdma", "udp" };
	struct stats_usage u = stats_usage_get();
	uint64_t rx[3], tx[3];

	for (unsigned i = 0; i < 3; i++)
		stats_transport_bytes(xprts[i], &rx[i], &tx[i]);
	if (prom_family(p, "rnfsd_transport_received_bytes_total", PROM_COUNTER,
			"Bytes received from clients, per transport (RDMA: messages and RDMA Read payloads)"))
		for (unsigned i = 0; i < 3; i++)
			prom_sample_u64(p, NULL, &(struct prom_label){ "transport", xprts[i] }, 1, rx[i]);
	if (prom_family(p, "rnfsd_transport_sent_bytes_total", PROM_COUNTER,
			"Bytes sent to clients, per transport (RDMA: messages and RDMA Write payloads)"))
		for (unsigned i = 0; i < 3; i++)
			prom_sample_u64(p, NULL, &(struct prom_label){ "transport", xprts[i] }, 1, tx[i]);
	if (prom_family(p, "rnfsd_loop_busy_seconds_total", PROM_COUNTER,
			"CPU time of the event loop's thread (it waits only in its poll)"))
		prom_sample(p, NULL, &(struct prom_label){ "loop", "main" }, 1, u.loop_busy_s);
	if (prom_family(p, "rnfsd_worker_busy_seconds_total", PROM_COUNTER,
			"Seconds the pool's workers spent running calls and other work"))
		prom_sample(p, NULL, &(struct prom_label){ "pool", "rpc" }, 1, u.workers_busy_s);
	if (prom_family(p, "rnfsd_workers", PROM_GAUGE, "Worker threads, per state")) {
		prom_sample(p, NULL, (struct prom_label[]){ { "pool", "rpc" }, { "state", "busy" } }, 2, u.workers_busy);
		prom_sample(p, NULL, (struct prom_label[]){ { "pool", "rpc" }, { "state", "idle" } }, 2,
			    u.workers - (u.workers_busy < u.workers ? u.workers_busy : u.workers));
	}
	if (prom_family(p, "rnfsd_worker_queue_depth", PROM_GAUGE, "Items waiting for a worker"))
		prom_sample(p, NULL, &(struct prom_label){ "pool", "rpc" }, 1, u.queued);
}

static void prom_top_clients(struct prom_out *p);

static void prom_registry(struct prom_out *p)
{
	static const struct stats_prom_procs rpc = {
		"rnfsd_rpc_calls_total", "RPC calls answered, per program, version and procedure",
		"rnfsd_rpc_errors_total", "RPC calls not answered with success (RPC or NFS status)",
		"rnfsd_rpc_duration_seconds", "Time from receiving a call to completing its reply (procedures with calls)",
		"procedure", true,
	};
	const struct prom_label build[] = { { "version", RNFSD_VERSION } };
	unsigned total, tcp, rdma;
	uint64_t inl = 0, inl_paused = 0;

	if (prom_family(p, "rnfsd_build_info", PROM_GAUGE, "The running rnfsd's version (always 1)"))
		prom_sample(p, NULL, build, 1, 1);
	prom_gauge1(p, "rnfsd_uptime_seconds", "Seconds since the daemon started serving", elapsed_s(&stats_started));
	prom_gauge1(p, "rnfsd_exports", "Exports in the served table",
		    stats_src.exports_count ? stats_src.exports_count() : 0);
	stats_prom_procs(p, &rpc, stats_src.procs_foreach);
	stats_conn_counts(&total, &tcp, &rdma);
	if (prom_family(p, "rnfsd_connections", PROM_GAUGE, "Client connections open now, per transport")) {
		prom_sample(p, NULL, &(struct prom_label){ "transport", "tcp" }, 1, tcp);
		prom_sample(p, NULL, &(struct prom_label){ "transport", "rdma" }, 1, rdma);
	}
	if (stats_src.inline_counts)
		stats_src.inline_counts(&inl, &inl_paused);
	prom_counter1(p, "rnfsd_inline_calls_total", "Calls answered on the receiving thread", inl);
	prom_counter1(p, "rnfsd_inline_paused_total", "Pauses of inline answering after a slow call", inl_paused);
	prom_usage(p);
	prom_top_clients(p);
	prom_grace(p);
}

int stats_render_prom(FILE *f)
{
	struct stats_section copy[STATS_SECTIONS_MAX];
	struct prom_out p;
	unsigned n;

	stats_uptime_start();
	prom_begin(&p, f);
	prom_registry(&p);
	n = stats_sections_copy(copy);
	for (unsigned i = 0; i < n; i++)
		if (copy[i].prom)
			copy[i].prom(&p, copy[i].arg);
	return prom_end(&p);
}

/* ---- 5. the busiest clients ---- */

void stats_set_top_clients(unsigned n)
{
	stats_top_n = n < STATS_TOP_CLIENTS_MAX ? n : STATS_TOP_CLIENTS_MAX;
}

unsigned stats_clients_kept(void)
{
	unsigned n;

	pthread_mutex_lock(&stats_lock);
	n = stats_nclients_closed;
	pthread_mutex_unlock(&stats_lock);
	return n;
}

/* The address part of peer: its start, *n its length. */
static const char *stats_peer_span(const char *peer, size_t *n)
{
	const char *colon = strrchr(peer, ':');

	*n = colon ? (size_t)(colon - peer) : strlen(peer);
	if (peer[0] == '[' && *n >= 2 && peer[*n - 1] == ']')
		peer++, *n -= 2;
	return peer;
}

void stats_peer_addr(const char *peer, char *out, size_t len)
{
	size_t n;

	peer = stats_peer_span(peer, &n);
	snprintf(out, len, "%.*s", (int)n, peer);
}

/* Under stats_lock: calls of addr's open connections other than self. */
static uint64_t stats_open_calls(const char *addr, const struct stats_conn *self)
{
	size_t len = strlen(addr), n;
	uint64_t calls = 0;

	for (const struct stats_conn *sc = stats_conns; sc; sc = sc->next) {
		const char *a = stats_peer_span(sc->peer, &n);

		if (sc != self && n == len && !memcmp(a, addr, n))
			calls += atomic_load_explicit(&sc->calls, memory_order_relaxed);
	}
	return calls;
}

static struct stats_client stats_client_of(const struct stats_conn *sc)
{
	struct stats_client c = {
		.calls = atomic_load_explicit(&sc->calls, memory_order_relaxed),
		.rx = atomic_load_explicit(&sc->rx_bytes, memory_order_relaxed),
		.tx = atomic_load_explicit(&sc->tx_bytes, memory_order_relaxed),
	};

	stats_peer_addr(sc->peer, c.addr, sizeof(c.addr));
	return c;
}

/* Under stats_lock: the kept entry of the least weight. */
static struct stats_client *stats_client_least(void)
{
	struct stats_client *least = &stats_clients_closed[0];

	for (unsigned i = 1; i < stats_nclients_closed; i++)
		if (stats_clients_closed[i].weight < least->weight)
			least = &stats_clients_closed[i];
	return least;
}

/* Under stats_lock: a closing connection's counters into its address's entry; a full table gives
 * the entry of the least weight to a newcomer that weighs more. An address weighs its calls with
 * those of its connections still open, so that an address busy on the page keeps its counters as
 * its connections close (they do not go back). A weight is as of its entry's last fold: the least
 * one is brought up to date before it gives way, STATS_FOLD_ROUNDS times at most. */
#define STATS_FOLD_ROUNDS 4
static void stats_client_fold(const struct stats_conn *sc)
{
	struct stats_client c = stats_client_of(sc), *e;
	uint64_t open = stats_open_calls(c.addr, sc);

	for (unsigned i = 0; i < stats_nclients_closed; i++) {
		e = &stats_clients_closed[i];
		if (!strcmp(e->addr, c.addr)) {
			e->calls += c.calls, e->rx += c.rx, e->tx += c.tx;
			e->weight = e->calls + open;
			return;
		}
	}
	c.weight = c.calls + open;
	if (stats_nclients_closed < STATS_CLIENTS_KEPT) {
		stats_clients_closed[stats_nclients_closed++] = c;
		return;
	}
	for (unsigned round = 0; round < STATS_FOLD_ROUNDS; round++) {
		e = stats_client_least();
		if (e->weight >= c.weight)
			return;
		e->weight = e->calls + stats_open_calls(e->addr, NULL);
		if (e->weight < c.weight) {
			*e = c;
			return;
		}
	}
}

static int stats_client_by_addr(const void *a, const void *b)
{
	return strcmp(((const struct stats_client *)a)->addr, ((const struct stats_client *)b)->addr);
}

static int stats_client_by_calls(const void *a, const void *b)
{
	const struct stats_client *x = a, *y = b;

	return x->calls < y->calls ? 1 : x->calls > y->calls ? -1 : strcmp(x->addr, y->addr);
}

/* The busiest clients into top (at most n, busiest first); how many. Allocates only here, on the
 * page's thread (one entry per open connection and kept address). */
static unsigned stats_top_clients(struct stats_client *top, unsigned n)
{
	struct stats_client *all;
	unsigned m = 0, k = 0, conns = 0;

	stats_conn_counts(&conns, NULL, NULL);
	all = malloc((STATS_CLIENTS_KEPT + conns + 16) * sizeof(*all));
	if (!all)
		return 0;
	pthread_mutex_lock(&stats_lock);
	memcpy(all, stats_clients_closed, stats_nclients_closed * sizeof(*all));
	m = stats_nclients_closed;
	for (const struct stats_conn *sc = stats_conns; sc && m < STATS_CLIENTS_KEPT + conns + 16; sc = sc->next)
		all[m++] = stats_client_of(sc);
	pthread_mutex_unlock(&stats_lock);
	qsort(all, m, sizeof(*all), stats_client_by_addr);
	for (unsigned i = 0; i < m; i++) { /* merge one address's entries */
		if (k && !strcmp(all[k - 1].addr, all[i].addr)) {
			all[k - 1].calls += all[i].calls, all[k - 1].rx += all[i].rx, all[k - 1].tx += all[i].tx;
			continue;
		}
		all[k++] = all[i];
	}
	qsort(all, k, sizeof(*all), stats_client_by_calls);
	k = k < n ? k : n;
	memcpy(top, all, k * sizeof(*top));
	free(all);
	return k;
}

static void prom_top_clients(struct prom_out *p)
{
	static const char *const names[] = { "rnfsd_client_calls_total", "rnfsd_client_received_bytes_total",
					     "rnfsd_client_sent_bytes_total" };
	static const char *const helps[] = {
		"Calls of the busiest client addresses ([stats] prometheus-top-clients)",
		"Bytes received from the busiest client addresses",
		"Bytes sent to the busiest client addresses",
	};
	struct stats_client top[STATS_TOP_CLIENTS_MAX];
	unsigned n = stats_top_n ? stats_top_clients(top, stats_top_n) : 0;

	if (!stats_top_n)
		return;
	for (unsigned f = 0; f < 3; f++) {
		if (!prom_family(p, names[f], PROM_COUNTER, helps[f]))
			continue;
		for (unsigned i = 0; i < n; i++) {
			struct prom_label l = { "client", top[i].addr };

			prom_sample_u64(p, NULL, &l, 1, f == 0 ? top[i].calls : f == 1 ? top[i].rx : top[i].tx);
		}
	}
}
