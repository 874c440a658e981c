/*
 * udp_xprt.c - ONC RPC over UDP (udp.h): the sockets, the fixed pool of
 * call contexts, and the datagram -> rpc_call -> reply datagram path. All on
 * the loop thread, except that the last reference to a context's rpc_conn
 * may go on any thread (conn_release), which hands the context back under
 * a lock and wakes the loop if reading had paused for want of one.
 *
 * RFC 5531 §§7-9: a datagram holds exactly one RPC message; a reply that
 * does not fit one (UDP_REPLY_MAX) is not sent, and the client's
 * retransmission meets the duplicate request cache (rpc_drc.c, keyed by xid
 * and source address) for the non-idempotent procedures.
 */
#include "transport/udp.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/stats.h"
#include "rpc/rpc.h"
#include "transport/sock_addr.h"

struct udp_ctx {
	struct rpc_call call;
	struct rpc_conn conn; /* this one call's "connection": its source address */
	struct udp_xprt *x;
	int fd;               /* the socket it came on, and the reply leaves by */
	struct udp_ctx *next; /* free list */
	uint8_t req[UDP_MSG_MAX];
	uint8_t reply[UDP_REPLY_MAX];
};

struct udp_xprt {
	struct xprt base;
	struct loop *loop;
	struct udp_params p;
	int fd[CONFIG_MAX_LISTEN + 1];
	int family[CONFIG_MAX_LISTEN + 1];
	struct loop_ev *ev[CONFIG_MAX_LISTEN + 1];
	unsigned n_fd;
	uint16_t port;
	struct udp_ctx *ctx;  /* p.n_ctx of them */
	struct loop_ev *wake; /* async: a context came back while reading paused */
	pthread_mutex_t lock; /* free, n_busy, paused */
	struct udp_ctx *free;
	unsigned n_busy;
	bool paused;
	bool draining;
	void (*drained)(void *arg);
	void *drained_arg;
};

static struct log_limit lim_prog, lim_big;

static void udp_arm(struct udp_xprt *x, bool on)
{
	for (unsigned i = 0; i < x->n_fd; i++)
		(void)(on ? loop_ev_add(x->ev[i], NULL) : loop_ev_del(x->ev[i]));
}

/* A free context, or NULL (then reading pauses until one comes back). */
static struct udp_ctx *udp_ctx_get(struct udp_xprt *x)
{
	pthread_mutex_lock(&x->lock);
	struct udp_ctx *ctx = x->free;
	if (ctx) {
		x->free = ctx->next;
		x->n_busy++;
	} else {
		x->paused = true;
	}
	pthread_mutex_unlock(&x->lock);
	return ctx;
}

/* xprt_ops.conn_release, any thread: the call is over; its context is free. */
static void udp_conn_release(struct rpc_conn *conn)
{
	struct udp_ctx *ctx = container_of(conn, struct udp_ctx, conn);
	struct udp_xprt *x = ctx->x;

	pthread_mutex_lock(&x->lock);
	ctx->next = x->free;
	x->free = ctx;
	x->n_busy--;
	bool wake = x->paused || (x->draining && x->n_busy == 0);
	pthread_mutex_unlock(&x->lock);
	if (wake)
		loop_ev_trigger(x->wake);
}

/* Loop thread: resume reading, or finish the drain. */
static void udp_wake_cb(int fd, short what, void *arg)
{
	struct udp_xprt *x = arg;

	(void)fd;
	(void)what;
	pthread_mutex_lock(&x->lock);
	bool resume = x->paused && x->free && !x->draining;
	bool done = x->draining && x->n_busy == 0 && x->drained;
	if (resume)
		x->paused = false;
	pthread_mutex_unlock(&x->lock);
	if (resume)
		udp_arm(x, true);
	if (done) {
		void (*cb)(void *) = x->drained;
		x->drained = NULL;
		cb(x->drained_arg);
	}
}

/* RFC 5531 §9: the call is to a program not served over UDP: PROG_UNAVAIL. */
static void udp_prog_unavail(int fd, const uint8_t *msg, const struct sockaddr_storage *from, socklen_t fl)
{
	uint32_t r[6] = { 0, htonl(RPC_MSG_REPLY), htonl(RPC_MSG_ACCEPTED), htonl(RPC_AUTH_NONE), 0,
			  htonl(RPC_PROG_UNAVAIL) };

	memcpy(&r[0], msg, 4); /* the xid, as it came */
	(void)sendto(fd, r, sizeof(r), MSG_DONTWAIT, (const struct sockaddr *)from, fl);
}

/* Is msg (n bytes) a call to a program served here? Replies and runts are dropped. */
static bool udp_call_served(struct udp_xprt *x, int fd, const uint8_t *msg, size_t n,
			    const struct sockaddr_storage *from, socklen_t fl)
{
	uint32_t type, prog;
	char peer[64];

	if (n < 16) /* RFC 5531 §9: xid, msg_type, rpcvers, prog at least */
		return false;
	memcpy(&type, msg + 4, 4);
	memcpy(&prog, msg + 12, 4);
	if (ntohl(type) != RPC_MSG_CALL)
		return false; /* this server makes no calls over UDP */
	for (unsigned i = 0; i < x->p.n_progs; i++)
		if (ntohl(prog) == x->p.progs[i])
			return true;
	sock_addr_name(from, peer, sizeof(peer));
	log_limited(&lim_prog, LOG_NOTICE, "udp: %s: program %u is not served over udp", peer, ntohl(prog));
	udp_prog_unavail(fd, msg, from, fl);
	return false;
}

/* One datagram in ctx->req: make it a call. */
static void udp_dispatch(struct udp_xprt *x, struct udp_ctx *ctx, size_t n, int fd,
			 const struct sockaddr_storage *from, socklen_t fl)
{
	struct rpc_call *c = &ctx->call;

	rpc_conn_init(&ctx->conn, &x->base);
	ctx->conn.xprt_name = "udp";
	ctx->conn.reply_max = sizeof(ctx->reply);
	memcpy(&ctx->conn.peer, from, fl);
	ctx->conn.peer_len = fl;
	sock_addr_name(from, ctx->conn.peer_name, sizeof(ctx->conn.peer_name));
	ctx->fd = fd;
	c->conn = &ctx->conn;
	c->msg = ctx->req;
	c->msg_len = n;
	c->n_ddp_in = 0;
	c->reply_buf = ctx->reply;
	c->reply_cap = sizeof(ctx->reply);
	c->payload_area = NULL;
	c->payload_cap = 0;
	c->priv = ctx;
	rpc_call_receive(c); /* may reply (send_reply) before returning */
}

/* Loop thread: read datagrams while contexts last. */
static void udp_readable_cb(int fd, short what, void *arg)
{
	struct udp_xprt *x = arg;

	(void)what;
	for (;;) {
		struct udp_ctx *ctx = udp_ctx_get(x);
		if (!ctx) {
			udp_arm(x, false); /* datagrams wait in the socket buffer */
			return;
		}
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, ctx->req, sizeof(ctx->req), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &fl);
		if (n > 0)
			stats_udp_bytes((uint64_t)n, 0); /* rnfsd_transport_received_bytes_total{transport="udp"} */
		bool take = n > 0 && (size_t)n <= sizeof(ctx->req) && fl <= sizeof(from) &&
			    udp_call_served(x, fd, ctx->req, (size_t)n, &from, fl);
		if (n > (ssize_t)sizeof(ctx->req))
			log_limited(&lim_big, LOG_WARNING, "udp: a %zd-byte datagram dropped (at most %u)", n,
				    UDP_MSG_MAX);
		if (!take) {
			rpc_conn_init(&ctx->conn, &x->base); /* hand it back the one way there is */
			rpc_conn_put(&ctx->conn);
			if (n < 0)
				return; /* EAGAIN: all read */
			continue;
		}
		udp_dispatch(x, ctx, (size_t)n, fd, &from, fl);
	}
}

/* xprt_ops.send_reply, loop thread. */
static void udp_send_reply(struct rpc_call *c)
{
	struct udp_ctx *ctx = c->priv;

	/* RFC 5531: one datagram; bulk data (ddp_out) is never produced by the programs served here */
	if (!c->drop && c->n_ddp_out == 0) {
		ssize_t n = sendto(ctx->fd, ctx->reply, xdr_enc_len(&c->res), MSG_DONTWAIT,
				   (const struct sockaddr *)&ctx->conn.peer, ctx->conn.peer_len);

		if (n > 0)
			stats_udp_bytes(0, (uint64_t)n);
	}
	rpc_conn_closed(&ctx->conn); /* its close hooks, if any */
	rpc_conn_put(&ctx->conn);    /* the transport's reference: usually the last */
}

/* ---- sockets ---- */

/* A bound UDP socket for addr on *port (0: pick one, then *port says which); -1 with errno. */
static int udp_bind(const char *addr, uint16_t *port, int *family)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd;

	if (sock_addr_parse(addr, *port, &ss, &len) != 0)
		return -1;
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* separate v4 and v6 sockets, as the TCP transport's */
	if ((ss.ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	*port = sock_fd_port(fd);
	*family = ss.ss_family;
	return fd;
}

/* Bind one configured address. 0, 1 (optional and absent: skipped), or -1 (logged). */
static int udp_listen_add(struct udp_xprt *x, const struct config_listen *l)
{
	int family;
	int fd = udp_bind(l->addr, &x->port, &family);

	if (fd < 0) {
		if (l->optional && (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT)) {
			log_warn("udp: %s skipped (optional address): %s", l->addr, strerror(errno));
			return 1;
		}
		log_err("udp: cannot bind %s port %u: %s", l->addr, x->port, strerror(errno));
		return -1;
	}
	x->ev[x->n_fd] = loop_io(x->loop, fd, LOOP_READ | LOOP_PERSIST, udp_readable_cb, x);
	if (!x->ev[x->n_fd]) {
		close(fd);
		return -1;
	}
	x->fd[x->n_fd] = fd;
	x->family[x->n_fd++] = family;
	log_info("udp: listening on %s port %u", l->addr, x->port);
	return 0;
}

/* ---- struct xprt ---- */

static struct udp_xprt *udp_of(struct xprt *base)
{
	return container_of(base, struct udp_xprt, base);
}

static int udp_op_start(struct xprt *base)
{
	struct udp_xprt *x = udp_of(base);

	x->port = x->p.port;
	for (unsigned i = 0; i < x->p.n_listen; i++)
		if (udp_listen_add(x, &x->p.listen[i]) < 0)
			return -1;
	if (x->n_fd == 0) {
		log_err("udp: no address to listen on");
		return -1;
	}
	udp_arm(x, true);
	return 0;
}

static void udp_op_drain(struct xprt *base, void (*done)(void *arg), void *arg)
{
	struct udp_xprt *x = udp_of(base);

	udp_arm(x, false);
	pthread_mutex_lock(&x->lock);
	x->draining = true;
	bool now = x->n_busy == 0;
	if (!now) {
		x->drained = done;
		x->drained_arg = arg;
	}
	pthread_mutex_unlock(&x->lock);
	if (now)
		done(arg);
}

static void udp_op_stop(struct xprt *base)
{
	struct udp_xprt *x = udp_of(base);

	pthread_mutex_lock(&x->lock);
	x->draining = true; /* no resume from here on */
	x->drained = NULL;
	pthread_mutex_unlock(&x->lock);
	udp_arm(x, false);
}

static void udp_op_free(struct xprt *base)
{
	struct udp_xprt *x = udp_of(base);

	for (unsigned i = 0; i < x->n_fd; i++) {
		loop_ev_free(x->ev[i]);
		close(x->fd[i]);
	}
	if (x->wake)
		loop_ev_free(x->wake);
	pthread_mutex_destroy(&x->lock);
	free(x->ctx);
	free(x);
}

static unsigned udp_op_conns(const struct xprt *base)
{
	struct udp_xprt *x = container_of(base, struct udp_xprt, base);

	pthread_mutex_lock(&x->lock);
	unsigned n = x->n_busy; /* calls in flight: UDP has no connections */
	pthread_mutex_unlock(&x->lock);
	return n;
}

static const struct xprt_ops udp_xprt_ops = {
	.name = "udp",
	.no_port_privilege = false, /* exports(5) "secure" and statd's reserved port apply */
	.start = udp_op_start,
	.drain = udp_op_drain,
	.stop = udp_op_stop,
	.free = udp_op_free,
	.conns = udp_op_conns,
	.send_reply = udp_send_reply,
	.send_call = NULL,
	.conn_release = udp_conn_release,
};

struct udp_xprt *udp_xprt_create(struct loop *loop, const struct udp_params *p)
{
	struct udp_xprt *x = calloc(1, sizeof(*x));

	if (!x || p->n_ctx == 0 || !(x->ctx = calloc(p->n_ctx, sizeof(*x->ctx)))) {
		log_err("udp: no memory for %u call contexts", p->n_ctx);
		free(x);
		return NULL;
	}
	x->base.ops = &udp_xprt_ops;
	x->loop = loop;
	x->p = *p;
	pthread_mutex_init(&x->lock, NULL);
	for (unsigned i = p->n_ctx; i-- > 0;) {
		x->ctx[i].x = x;
		x->ctx[i].next = x->free;
		x->free = &x->ctx[i];
	}
	x->wake = loop_async(loop, udp_wake_cb, x);
	if (!x->wake) {
		udp_op_free(&x->base);
		return NULL;
	}
	return x;
}

struct xprt *udp_xprt_base(struct udp_xprt *x)
{
	return &x->base;
}

uint16_t udp_xprt_port(const struct udp_xprt *x)
{
	return x->port;
}

bool udp_xprt_listens(const struct udp_xprt *x, int af)
{
	for (unsigned i = 0; i < x->n_fd; i++)
		if (x->family[i] == af)
			return true;
	return false;
}

void udp_params_from_config(struct udp_params *p, const struct rnfsd_config *cfg)
{
	bool loopback = false;

	memset(p, 0, sizeof(*p));
	for (unsigned i = 0; i < cfg->n_tcp_listen; i++) {
		p->listen[p->n_listen++] = cfg->tcp_listen[i];
		if (strcmp(cfg->tcp_listen[i].addr, "0.0.0.0") == 0 || strcmp(cfg->tcp_listen[i].addr, "127.0.0.1") == 0)
			loopback = true;
	}
	if (!loopback) { /* rpc.statd calls 127.0.0.1 */
		snprintf(p->listen[p->n_listen].addr, sizeof(p->listen[0].addr), "127.0.0.1");
		p->n_listen++;
	}
	p->port = (uint16_t)cfg->nlm_udp_port;
	p->n_ctx = UDP_CTX_DEFAULT;
}
