/*
 * tcp_xprt.c - the TCP transport as a whole: parameters,
 * listening sockets, accepting connections (up to max_connections, then in
 * place of the longest idle one), the sweep of time limits, the
 * graceful drain at shutdown, and teardown. Connections are tcp_conn.c's,
 * call contexts tcp_ctx.c's.
 */
#include "transport/tcp_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"
#include "transport/sock_addr.h"

#define TCP_BACKLOG 1024

void tcp_params_from_config(struct tcp_params *p, const struct rnfsd_config *cfg)
{
	memset(p, 0, sizeof(*p));
	p->n_listen = cfg->n_tcp_listen < CONFIG_MAX_LISTEN ? cfg->n_tcp_listen : CONFIG_MAX_LISTEN;
	memcpy(p->listen, cfg->tcp_listen, p->n_listen * sizeof(p->listen[0]));
	p->max_connections = cfg->max_connections;
	p->max_record = cfg->max_record;
	p->conn_max_calls = cfg->tcp_conn_max_calls ? cfg->tcp_conn_max_calls : 2 * cfg->threads + 16;
	p->max_calls = cfg->tcp_max_calls ? cfg->tcp_max_calls : 16 * cfg->threads + 64;
	p->reply_cap = TCP_REPLY_CAP;
	p->payload_cap = TCP_PAYLOAD_CAP;
	p->record_timeout_s = cfg->tcp_record_timeout;
	p->send_timeout_s = cfg->tcp_send_timeout;
	p->idle_timeout_s = cfg->tcp_idle_timeout;
	p->evict_idle = true;
	tcp_params_tls_from_config(p, cfg);
}

void tcp_params_tls_from_config(struct tcp_params *p, const struct rnfsd_config *cfg)
{
	snprintf(p->tls_cert, sizeof(p->tls_cert), "%s", cfg->tls_cert);
	snprintf(p->tls_key, sizeof(p->tls_key), "%s", cfg->tls_key[0] ? cfg->tls_key : cfg->tls_cert);
	snprintf(p->tls_ca, sizeof(p->tls_ca), "%s", cfg->tls_ca);
}

/* A listening socket for l, or -1 with errno set. */
static int tcp_listen_open(const struct config_listen *l, int *family)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd;

	if (sock_addr_parse(l->addr, l->port, &ss, &len) != 0)
		return -1;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto err_fd;
	/* Separate v4 and v6 sockets, so 0.0.0.0 and :: can both be bound. */
	if (ss.ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
		goto err_fd;
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		goto err_fd;
	if (listen(fd, TCP_BACKLOG) < 0)
		goto err_fd;
	*family = ss.ss_family;
	return fd;

err_fd: {
	int err = errno;

	close(fd);
	errno = err;
	return -1;
}
}

static void tcp_listen_arm(struct tcp_xprt *x, bool on)
{
	for (unsigned i = 0; i < x->n_listen; i++) {
		if (on)
			loop_ev_add(x->lev[i], NULL);
		else
			loop_ev_del(x->lev[i]);
	}
}

static void tcp_accept_retry_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct tcp_xprt *x = arg;
	if (!x->draining)
		tcp_listen_arm(x, true);
}

/* The table is full: close the least recently active idle connection (as
 * knfsd closes its oldest temporary socket). False if none is idle. */
static bool tcp_evict_idle(struct tcp_xprt *x)
{
	static struct log_limit lim;

	if (!x->p.evict_idle)
		return false;
	for (struct tcp_conn *conn = x->conns_tail; conn; conn = conn->prev) {
		if (tcp_conn_idle(conn)) {
			log_limited(&lim, LOG_WARNING,
				    "tcp: %u connections (max-connections): closing the longest idle one for a new one",
				    x->n_conns);
			tcp_conn_close(conn, "idle, evicted for a new connection");
			return true;
		}
	}
	return false;
}

static void tcp_accept_cb(int lfd, short what, void *arg)
{
	static struct log_limit lim_err;
	struct tcp_xprt *x = arg;
	(void)what;

	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			log_limited(&lim_err, LOG_WARNING, "tcp: accept: %s", strerror(errno));
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* Level-triggered: would spin. Try again in a second. */
				struct timeval tv = {1, 0};
				tcp_listen_arm(x, false);
				loop_ev_add(x->accept_retry, &tv);
			}
			return;
		}
		if (x->n_shards)
			tcp_loops_accept(x, fd, &ss, len); /* [rnfsd] loops: round-robin */
		else
			tcp_xprt_admit(x, fd, &ss, len);
	}
}

void tcp_xprt_admit(struct tcp_xprt *x, int fd, const struct sockaddr_storage *ss, socklen_t len)
{
	static struct log_limit lim_full;

	if (x->n_conns >= x->p.max_connections && !tcp_evict_idle(x)) {
		log_limited(&lim_full, LOG_WARNING, "tcp: %u connections (max-connections), none idle: refusing a new one",
			    x->n_conns);
		close(fd);
		return;
	}
	tcp_conn_new(x, fd, ss, len);
}

/* The host has no such address or address family: what "optional" forgives. */
static bool tcp_listen_unavailable(int err)
{
	return err == EADDRNOTAVAIL || err == EAFNOSUPPORT || err == EPROTONOSUPPORT;
}

/* Open, register and log the listener for l. 0, 1 (an optional one skipped), or -1 (logged). */
static int tcp_listen_add(struct tcp_xprt *x, const struct config_listen *l)
{
	struct loop_ev *ev;
	int family;
	int fd = tcp_listen_open(l, &family);

	if (fd < 0) {
		if (l->optional && tcp_listen_unavailable(errno)) {
			log_warn("tcp: %s port %u skipped (optional address): %s", l->addr, l->port,
				 strerror(errno));
			return 1;
		}
		log_err("tcp: cannot listen on %s port %u: %s", l->addr, l->port, strerror(errno));
		return -1;
	}
	ev = loop_io(x->loop, fd, LOOP_READ | LOOP_PERSIST, tcp_accept_cb, x);
	if (!ev) {
		log_err("tcp: cannot watch the listener on %s port %u", l->addr, l->port);
		close(fd);
		return -1;
	}
	x->lfd[x->n_listen] = fd;
	x->lfamily[x->n_listen] = family;
	x->lev[x->n_listen++] = ev;
	log_info("tcp: listening on %s port %u", l->addr, sock_fd_port(fd));
	return 0;
}

#define TCP_LINGER_TICK_US 10000

/* While draining: close LINGER connections whose data the peer acknowledged. */
static void tcp_linger_cb(int fd, short what, void *arg)
{
	struct tcp_xprt *x = arg;
	(void)fd;
	(void)what;
	for (struct tcp_conn *conn = x->conns, *next; conn; conn = next) {
		next = conn->next;
		tcp_conn_linger_check(conn); /* may unlink conn, never another */
	}
	if (x->n_conns == 0)
		loop_ev_del(x->linger_timer);
}

static void tcp_sweep_cb(int fd, short what, void *arg)
{
	struct tcp_xprt *x = arg;
	struct timespec now;
	(void)fd;
	(void)what;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (struct tcp_conn *conn = x->conns, *next; conn; conn = next) {
		next = conn->next;
		tcp_conn_sweep(conn, &now); /* may unlink conn, never another */
	}
}

/* The shortest time limit set (0: none). */
static unsigned tcp_sweep_period(const struct tcp_params *p)
{
	const unsigned lim[] = {p->record_timeout_s, p->send_timeout_s, p->idle_timeout_s};
	unsigned period = 0;

	for (unsigned i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
		if (lim[i] && (!period || lim[i] < period))
			period = lim[i];
	return period;
}

void tcp_xprt_sweep_start(struct tcp_xprt *x)
{
	unsigned period = tcp_sweep_period(&x->p);

	if (period) {
		/* Checked a few times per period: a limit closes within 1.25 periods. */
		struct timeval tv = {period / 4, (period % 4) * 250000};
		loop_ev_add(x->sweep_timer, &tv);
	}
}

static void tcp_listen_close_all(struct tcp_xprt *x)
{
	for (unsigned i = 0; i < x->n_listen; i++) {
		loop_ev_free(x->lev[i]);
		close(x->lfd[i]);
	}
	x->n_listen = 0;
	loop_ev_free(x->accept_retry);
	x->accept_retry = NULL;
}

static int tcp_xprt_op_start(struct xprt *base);
static void tcp_xprt_op_drain(struct xprt *base, void (*done)(void *arg), void *arg);
static void tcp_xprt_op_stop(struct xprt *base);
static void tcp_xprt_op_free(struct xprt *base);
static unsigned tcp_xprt_op_conns(const struct xprt *base);

static const struct xprt_ops tcp_xprt_ops = {
	.name = "tcp",
	.start = tcp_xprt_op_start,
	.drain = tcp_xprt_op_drain,
	.stop = tcp_xprt_op_stop,
	.free = tcp_xprt_op_free,
	.conns = tcp_xprt_op_conns,
	.send_reply = tcp_send_reply,
	.send_call = tcp_send_call,
	.conn_release = tcp_conn_release,
	.payload_pipe = tcp_ctx_pipe,
};

static struct tcp_xprt *tcp_of(struct xprt *base)
{
	return container_of(base, struct tcp_xprt, base);
}

struct tcp_xprt *tcp_xprt_create(struct loop *loop, const struct tcp_params *p)
{
	struct tcp_xprt *x = calloc(1, sizeof(*x));

	if (!x)
		goto err_alloc;
	x->base.ops = &tcp_xprt_ops;
	x->loop = loop;
	x->p = *p;
	if (x->p.conn_max_calls == 0)
		x->p.conn_max_calls = 1;
	if (x->p.max_calls < x->p.conn_max_calls)
		x->p.max_calls = x->p.conn_max_calls;
	x->reserve = x->p.max_calls / 4;
	x->ctx_all = calloc(x->p.max_calls, sizeof(*x->ctx_all));
	x->accept_retry = loop_timer(loop, false, tcp_accept_retry_cb, x);
	x->linger_timer = loop_timer(loop, true, tcp_linger_cb, x);
	x->sweep_timer = loop_timer(loop, true, tcp_sweep_cb, x);
	if (!x->ctx_all || !x->accept_retry || !x->linger_timer || !x->sweep_timer) {
		tcp_xprt_free(x);
		goto err_alloc;
	}
	if (tcp_tls_xprt_init(x) != 0) { /* logged */
		tcp_xprt_free(x);
		return NULL;
	}
	return x;
err_alloc:
	log_err("tcp: out of memory");
	return NULL;
}

struct xprt *tcp_xprt_base(struct tcp_xprt *x)
{
	return &x->base;
}

/* xprt_ops.start: open every listener and start accepting. */
static int tcp_xprt_op_start(struct xprt *base)
{
	struct tcp_xprt *x = tcp_of(base);
	const struct tcp_params *p = &x->p;

	/* Every configured listener, or none: start-up fails rather than serve on
	 * fewer addresses than configured (systemd then shows the failure). */
	for (unsigned i = 0; i < p->n_listen && i < CONFIG_MAX_LISTEN; i++)
		if (tcp_listen_add(x, &p->listen[i]) < 0)
			goto err;
	if (x->n_listen == 0) {
		log_err("tcp: no listener could be opened");
		goto err;
	}
	tcp_listen_arm(x, true);
	tcp_xprt_sweep_start(x);
	return 0;
err:
	tcp_listen_close_all(x);
	return -1;
}

struct tcp_xprt *tcp_xprt_start(struct loop *loop, const struct tcp_params *p)
{
	struct tcp_xprt *x = tcp_xprt_create(loop, p);

	if (x && tcp_xprt_op_start(&x->base) != 0) {
		tcp_xprt_free(x);
		return NULL;
	}
	return x;
}

uint16_t tcp_xprt_port(const struct tcp_xprt *x)
{
	return x && x->n_listen ? sock_fd_port(x->lfd[0]) : 0;
}

bool tcp_xprt_listens(const struct tcp_xprt *x, int af)
{
	for (unsigned i = 0; i < x->n_listen; i++)
		if (x->lfamily[i] == af)
			return true;
	return false;
}

unsigned tcp_xprt_conns(const struct tcp_xprt *x)
{
	unsigned n = 0;

	for (unsigned i = 0; i <= x->n_shards; i++)
		n += tcp_xprt_loop_conns(x, i);
	return n;
}

static unsigned tcp_xprt_op_conns(const struct xprt *base)
{
	return tcp_xprt_conns(container_of(base, const struct tcp_xprt, base));
}

/* A connection was unlinked (tcp_conn_close). */
void tcp_xprt_conn_closed(struct tcp_xprt *x)
{
	if (x->draining && x->n_conns == 0 && x->drain_done) {
		void (*done)(void *) = x->drain_done;
		x->drain_done = NULL;
		done(x->drain_arg);
	}
}

void tcp_xprt_drain(struct tcp_xprt *x, void (*done)(void *arg), void *arg)
{
	x->draining = true;
	x->drain_done = done;
	x->drain_arg = arg;
	tcp_listen_close_all(x);
	log_info("tcp: draining %u connections", x->n_conns);
	struct timeval tick = {0, TCP_LINGER_TICK_US};
	loop_ev_add(x->linger_timer, &tick);
	for (struct tcp_conn *conn = x->conns, *next; conn; conn = next) {
		next = conn->next;
		tcp_conn_get(conn);
		tcp_conn_drain(conn); /* may close (unlink) conn, never another */
		tcp_conn_put(conn);
	}
	if (x->n_conns == 0)
		tcp_xprt_conn_closed(x);
}

static void tcp_xprt_op_drain(struct xprt *base, void (*done)(void *arg), void *arg)
{
	struct tcp_xprt *x = tcp_of(base);

	if (x->n_shards)
		tcp_loops_drain(x, done, arg); /* every loop's, done on loop 0 */
	else
		tcp_xprt_drain(x, done, arg);
}

void tcp_xprt_stop(struct tcp_xprt *x)
{
	tcp_loops_stop(x);
	x->loops_done = NULL;
	x->drain_done = NULL;
	tcp_listen_close_all(x);
	while (x->conns)
		tcp_conn_close(x->conns, "shutting down");
}

static void tcp_xprt_op_stop(struct xprt *base)
{
	tcp_xprt_stop(tcp_of(base));
}

void tcp_xprt_free(struct tcp_xprt *x)
{
	if (!x)
		return;
	tcp_xprt_stop(x);
	tcp_loops_free(x);
	loop_ev_free(x->linger_timer);
	loop_ev_free(x->sweep_timer);
	x->linger_timer = x->sweep_timer = NULL;
	tcp_ctx_free_all(x);
	tcp_tls_xprt_free(x);
	free(x->ctx_all);
	free(x);
}

static void tcp_xprt_op_free(struct xprt *base)
{
	tcp_xprt_free(tcp_of(base));
}
