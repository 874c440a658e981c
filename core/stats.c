/*
 * stats.c - see stats.h. Three parts:
 *   1. the latency histogram (lock-free, relaxed atomics);
 *   2. the connection registry (a doubly linked list under one mutex, since
 *      transports may register from their own threads) and the table of
 *      sections (fixed size, under the same mutex);
 *   3. the JSON document (core/json.h) and status line rendered from them
 *      and the stats sources.
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

/* ---- 2. registry and sections ---- */

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

void stats_conn_register(struct stats_conn *sc, const char *transport, const char *peer, stats_conn_ext_fn ext)
{
	if (transport)
		snprintf(sc->transport, sizeof(sc->transport), "%s", transport);
	if (peer)
		snprintf(sc->peer, sizeof(sc->peer), "%s", peer);
	sc->ext = ext;
	atomic_store(&sc->calls, 0);
	atomic_store(&sc->garbage_args, 0);
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

struct stats_section {
	enum stats_place place;
	const char *name;
	stats_section_fn write;
	void *arg;
};

static struct stats_section stats_sections[STATS_SECTIONS_MAX];
static unsigned stats_nsections;

int stats_section_add(enum stats_place place, const char *name, stats_section_fn write, void *arg)
{
	int ret = -1;

	pthread_mutex_lock(&stats_lock);
	if (stats_nsections < STATS_SECTIONS_MAX) {
		stats_sections[stats_nsections++] = (struct stats_section){place, name, write, arg};
		ret = 0;
	}
	pthread_mutex_unlock(&stats_lock);
	return ret;
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
	json_obj_close(j);
}

/* The sections of one place, from a copy of the table taken under the lock. */
static void json_sections(struct json_out *j, enum stats_place place)
{
	struct stats_section copy[STATS_SECTIONS_MAX];
	unsigned n;

	pthread_mutex_lock(&stats_lock);
	n = stats_nsections;
	memcpy(copy, stats_sections, n * sizeof(copy[0]));
	pthread_mutex_unlock(&stats_lock);
	for (unsigned i = 0; i < n; i++)
		if (copy[i].place == place)
			copy[i].write(j, copy[i].name, copy[i].arg);
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

