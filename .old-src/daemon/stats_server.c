/*
 * stats_server.c - see stats_server.h.
 *
 * Three parts:
 *   1. the latency histogram (lock-free, relaxed atomics);
 *   2. the connection registry (a doubly linked list under one mutex, since
 *      transports may register from their own threads);
 *   3. the socket: a listener and at most STATS_MAX_CLIENTS clients, all
 *      driven by the loop. A client's state machine:
 *
 *        accept --(peer uid ok)--> READING --(newline or EOF)--> WRITING --(all sent)--> closed
 *              \--(uid refused)--> closed        any error or STATS_CLIENT_TIMEOUT --> closed
 *
 *      stats_client_close() is the only close path.
 */
#include "stats_server.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rnfsd_build.h"
#include "log.h"
#include "loop.h"
#include "notify.h"

#define STATS_MAX_CLIENTS 8
#define STATS_CLIENT_TIMEOUT_S 5
#define STATS_REQ_MAX 128

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

int stats_render_json(FILE *f)
{
	struct json_list jl = {.f = f, .first = true};
	unsigned total, tcp, rdma;

	if (!stats_started.tv_sec && !stats_started.tv_nsec)
		clock_gettime(CLOCK_MONOTONIC, &stats_started);
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
	fprintf(f, "  \"totals\": {\"calls\": %llu, \"errors\": %llu, \"connections\": %u, \"tcp\": %u, \"rdma\": %u},\n",
		(unsigned long long)jl.calls, (unsigned long long)jl.errors, total, tcp, rdma);
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

/* ---- periodic STATUS= ---- */

static struct loop_ev *status_timer;
static struct timeval status_interval;

void stats_status_refresh(void)
{
	char line[256];
	stats_status_line(line, sizeof(line));
	notify_status("%s", line);
}

static void stats_status_tick(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	stats_status_refresh();
}

int stats_status_start(struct loop *l, unsigned interval_s)
{
	if (!notify_enabled())
		return 0;
	status_timer = loop_timer(l, true, stats_status_tick, NULL);
	if (!status_timer)
		return -1;
	status_interval.tv_sec = interval_s ? interval_s : 1;
	if (loop_ev_add(status_timer, &status_interval) != 0) {
		loop_ev_free(status_timer);
		status_timer = NULL;
		return -1;
	}
	stats_status_refresh();
	return 0;
}

void stats_status_stop(void)
{
	loop_ev_free(status_timer);
	status_timer = NULL;
}

/* ---- 3. the socket ---- */

struct stats_client {
	int fd;                 /* -1: slot free */
	struct loop_ev *ev;
	bool writing;
	char req[STATS_REQ_MAX];
	size_t req_len;
	char *out;              /* the document, from open_memstream */
	size_t out_len, out_sent;
};

static struct loop *stats_loop;
static int stats_listen_fd = -1;
static struct loop_ev *stats_listen_ev;
static char stats_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static struct stats_client stats_clients[STATS_MAX_CLIENTS];
static struct log_limit stats_refuse_limit;

static void stats_client_close(struct stats_client *c)
{
	loop_ev_free(c->ev);
	c->ev = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_sent = c->req_len = 0;
	c->writing = false;
}

static void stats_client_cb(int fd, short what, void *arg);

/* Re-arm the client's event for reading or writing, with the timeout. */
static int stats_client_arm(struct stats_client *c, short what)
{
	const struct timeval tmo = {.tv_sec = STATS_CLIENT_TIMEOUT_S};

	loop_ev_free(c->ev);
	c->ev = loop_io(stats_loop, c->fd, what | LOOP_PERSIST, stats_client_cb, c);
	if (!c->ev || loop_ev_add(c->ev, &tmo) != 0)
		return -1;
	return 0;
}

/* The request is complete: render the answer and start writing it. */
static int stats_client_answer(struct stats_client *c)
{
	char *req = c->req;
	req[c->req_len] = '\0';
	req[strcspn(req, "\r\n")] = '\0';

	FILE *f = open_memstream(&c->out, &c->out_len);
	if (!f)
		return -1;
	if (!*req || !strcmp(req, "stats"))
		stats_render_json(f);
	else
		fprintf(f, "{\"error\": \"unknown request\"}\n");
	if (fclose(f) != 0)
		return -1;
	c->writing = true;
	return stats_client_arm(c, LOOP_WRITE);
}

static void stats_client_read(struct stats_client *c)
{
	ssize_t n = read(c->fd, c->req + c->req_len, sizeof(c->req) - 1 - c->req_len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		stats_client_close(c);
		return;
	}
	c->req_len += (size_t)n;
	bool line = memchr(c->req, '\n', c->req_len) != NULL;
	if (n == 0 || line || c->req_len == sizeof(c->req) - 1) {
		if (stats_client_answer(c) != 0)
			stats_client_close(c);
	}
}

static void stats_client_write(struct stats_client *c)
{
	ssize_t n = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		stats_client_close(c);
		return;
	}
	c->out_sent += (size_t)n;
	if (c->out_sent == c->out_len)
		stats_client_close(c);
}

static void stats_client_cb(int fd, short what, void *arg)
{
	struct stats_client *c = arg;
	(void)fd;

	if (what & LOOP_TIMEOUT)
		stats_client_close(c);
	else if (c->writing)
		stats_client_write(c);
	else
		stats_client_read(c);
}

/* Root only: the socket is 0600 already; the peer's uid is checked as well. */
static bool stats_peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return false;
	if (cred.uid == 0 || cred.uid == geteuid())
		return true;
	log_limited(&stats_refuse_limit, LOG_WARNING,
		    "stats socket: refused pid %ld uid %u (root only)", (long)cred.pid, (unsigned)cred.uid);
	return false;
}

static void stats_accept_cb(int fd, short what, void *arg)
{
	(void)what;
	(void)arg;

	int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return;
	if (!stats_peer_allowed(cfd)) {
		close(cfd);
		return;
	}
	struct stats_client *c = NULL;
	for (unsigned i = 0; i < STATS_MAX_CLIENTS; i++) {
		if (stats_clients[i].fd < 0) {
			c = &stats_clients[i];
			break;
		}
	}
	if (!c) {
		log_limited(&stats_refuse_limit, LOG_WARNING,
			    "stats socket: more than %d clients at once, refusing one", STATS_MAX_CLIENTS);
		close(cfd);
		return;
	}
	c->fd = cfd;
	if (stats_client_arm(c, LOOP_READ) != 0)
		stats_client_close(c);
}

/*
 * Remove a socket file left by a daemon that died, but refuse to take over
 * one that still answers (another rnfsd is running). 0 if path is free.
 */
static int stats_clear_stale(const struct sockaddr_un *addr)
{
	struct stat st;
	if (lstat(addr->sun_path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		log_err("stats socket %s: %s", addr->sun_path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		log_err("stats socket %s: exists and is not a socket", addr->sun_path);
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = fd < 0 ? -1 : connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	if (fd >= 0)
		close(fd);
	if (r == 0) {
		log_err("stats socket %s: in use (is another rnfsd running?)", addr->sun_path);
		return -1;
	}
	if (unlink(addr->sun_path) != 0) {
		log_err("stats socket %s: cannot remove the stale socket: %s", addr->sun_path, strerror(errno));
		return -1;
	}
	log_info("stats socket %s: replaced a stale socket", addr->sun_path);
	return 0;
}

/*
 * Outside systemd nobody made /run/rnfsd (RuntimeDirectory= does): create
 * the socket's directory, one level, mode 0755. Errors surface at bind().
 */
static void stats_make_parent(const char *path)
{
	char dir[sizeof(stats_path)];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0755) == 0)
		log_info("created %s for the stats socket", dir);
}

int stats_server_start(struct loop *l, const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};

	if (stats_loop) {
		log_err("stats socket %s: the stats server is already running", path);
		return -1;
	}
	if (!stats_started.tv_sec && !stats_started.tv_nsec)
		clock_gettime(CLOCK_MONOTONIC, &stats_started);
	if (strlen(path) >= sizeof(addr.sun_path) || path[0] != '/') {
		log_err("stats socket %s: not an absolute path of at most %zu bytes", path,
			sizeof(addr.sun_path) - 1);
		return -1;
	}
	strcpy(addr.sun_path, path);
	stats_make_parent(path);
	if (stats_clear_stale(&addr) != 0)
		return -1; /* logged */

	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail_path;
	/* Created 0600 from the start (no window in which others could connect). */
	mode_t old = umask(0177);
	int r = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (r != 0)
		goto fail_fd;
	if (chmod(path, 0600) != 0 || listen(fd, 16) != 0)
		goto fail_unlink;
	stats_listen_ev = loop_io(l, fd, LOOP_READ | LOOP_PERSIST, stats_accept_cb, NULL);
	if (!stats_listen_ev || loop_ev_add(stats_listen_ev, NULL) != 0)
		goto fail_ev;
	for (unsigned i = 0; i < STATS_MAX_CLIENTS; i++)
		stats_clients[i] = (struct stats_client){.fd = -1};
	stats_loop = l;
	stats_listen_fd = fd;
	strcpy(stats_path, path);
	return 0;

fail_ev:
	loop_ev_free(stats_listen_ev);
	stats_listen_ev = NULL;
fail_unlink:
	unlink(path);
fail_fd:
	r = errno;
	close(fd);
	errno = r;
fail_path:
	log_err("stats socket %s: %s", path, strerror(errno));
	return -1;
}

void stats_server_stop(void)
{
	if (!stats_loop)
		return;
	for (unsigned i = 0; i < STATS_MAX_CLIENTS; i++)
		if (stats_clients[i].fd >= 0 || stats_clients[i].ev)
			stats_client_close(&stats_clients[i]);
	loop_ev_free(stats_listen_ev);
	stats_listen_ev = NULL;
	if (stats_listen_fd >= 0) {
		close(stats_listen_fd);
		unlink(stats_path);
	}
	stats_listen_fd = -1;
	stats_loop = NULL;
}
