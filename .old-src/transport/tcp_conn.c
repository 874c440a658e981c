/*
 * tcp_conn.c - one TCP connection carrying ONC RPC records.
 *
 * Receive: bytes are read into the connection's stage buffer and parsed by
 * the record-marking parser, which copies fragment bodies into the call
 * context's request buffer. While the parser is inside a fragment body, the
 * next read goes straight into the request buffer (readv: [rest of the
 * fragment, stage]), so a large WRITE's data is not copied by us. A complete
 * record becomes a call (rpc_call_receive); many calls may be in flight.
 *
 * Send: replies are queued as they complete (any order) and written with
 * writev of [record mark, reply bytes, each ddp_out payload + XDR pad, ...],
 * several replies per system call when they queue up; a short write arms the
 * write event. READ payloads are sent from where the handler produced them.
 *
 * Close: every error funnels into tcp_conn_close() (idempotent). The object
 * is freed by tcp_conn_put() when the last reference goes; every callback
 * holds a reference while it runs, so nothing frees a connection under its
 * own feet.
 */
#include "transport/tcp_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"

static const uint8_t xdr_zero_pad[4];
static struct log_limit lim_record;
static struct log_limit lim_io;
static struct log_limit lim_connect;
static struct log_limit lim_close;

static void tcp_send_reply(struct rpc_call *c);
static const struct rpc_xprt_ops tcp_rpc_ops = {.send_reply = tcp_send_reply};

void tcp_conn_get(struct tcp_conn *conn)
{
	conn->refs++;
}

void tcp_conn_put(struct tcp_conn *conn)
{
	if (--conn->refs > 0)
		return;
	free(conn->stage);
	free(conn);
}

static void tcp_read_arm(struct tcp_conn *conn, bool on)
{
	if (on == conn->reading)
		return;
	conn->reading = on;
	if (on)
		loop_ev_add(conn->ev_read, NULL);
	else
		loop_ev_del(conn->ev_read);
}

static void tcp_write_arm(struct tcp_conn *conn, bool on)
{
	if (on == conn->writing)
		return;
	conn->writing = on;
	if (on)
		loop_ev_add(conn->ev_write, NULL);
	else
		loop_ev_del(conn->ev_write);
}

void tcp_conn_close(struct tcp_conn *conn, const char *why)
{
	struct tcp_xprt *x = conn->x;

	if (conn->state == TCP_CONN_CLOSED)
		return;
	log_limited(&lim_close, LOG_INFO, "tcp: %s: closed (%s)", conn->rpc.peer_name, why);
	conn->state = TCP_CONN_CLOSED;
	tcp_conn_get(conn); /* until the end of this function */

	loop_ev_free(conn->ev_read);
	loop_ev_free(conn->ev_write);
	conn->ev_read = conn->ev_write = NULL;
	conn->reading = conn->writing = false;
	close(conn->fd);
	conn->fd = -1;
	tcp_waiter_remove(x, conn);
	stats_conn_unregister(&conn->stats);

	/* Contexts not in a worker go back now; those in a worker come back
	 * through tcp_send_reply() and find the connection CLOSED. */
	if (conn->rx) {
		struct tcp_ctx *rx = conn->rx;
		conn->rx = NULL;
		tcp_ctx_put(rx);
	}
	struct tcp_ctx *ctx;
	while ((ctx = queue_pop_entry(&conn->sendq, struct tcp_ctx, link)))
		tcp_ctx_put(ctx);

	if (conn->prev)
		conn->prev->next = conn->next;
	else
		x->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	conn->prev = conn->next = NULL;
	__atomic_sub_fetch(&x->n_conns, 1, __ATOMIC_RELAXED);

	tcp_conn_put(conn); /* the "open" reference */
	tcp_xprt_conn_closed(x);
	tcp_conn_put(conn);
}

void tcp_conn_resume(struct tcp_conn *conn)
{
	if (conn->state != TCP_CONN_OPEN || !conn->paused)
		return;
	conn->paused = false;
	clock_gettime(CLOCK_MONOTONIC, &conn->rx_last); /* the wait was ours, not the peer's */
	tcp_read_arm(conn, true);
	/* Parse what is staged even if the socket has nothing new. */
	loop_ev_trigger(conn->ev_read);
}

static void tcp_conn_pause(struct tcp_conn *conn)
{
	conn->paused = true;
	tcp_read_arm(conn, false);
}

void tcp_conn_drain(struct tcp_conn *conn)
{
	if (conn->state != TCP_CONN_OPEN)
		return;
	conn->state = TCP_CONN_DRAINING;
	tcp_waiter_remove(conn->x, conn);
	conn->paused = false;
	tcp_read_arm(conn, true); /* to discard, see the state diagram */
	conn->stage_off = conn->stage_len = 0;
	tcp_conn_get(conn);
	if (conn->rx) { /* a partial record: never answered */
		struct tcp_ctx *rx = conn->rx;
		conn->rx = NULL;
		tcp_ctx_put(rx); /* moves an idle conn on to LINGER */
	} else if (conn->n_ctx == 0) {
		tcp_conn_linger(conn);
	}
	tcp_conn_put(conn);
}

void tcp_conn_linger(struct tcp_conn *conn)
{
	if (conn->state != TCP_CONN_DRAINING)
		return;
	conn->state = TCP_CONN_LINGER;
	/* FIN after the last reply; the peer's EOF, an error, or the linger
	 * timer (tcp_conn_linger_check) closes. */
	if (shutdown(conn->fd, SHUT_WR) != 0)
		tcp_conn_close(conn, "shutdown failed");
}

/* DRAINING, LINGER: read and throw away until EAGAIN; EOF or error closes. */
static void tcp_conn_discard(struct tcp_conn *conn)
{
	for (unsigned round = 0; round < TCP_RX_ROUNDS; round++) {
		ssize_t r = read(conn->fd, conn->stage, TCP_STAGE_SIZE);
		if (r > 0)
			continue;
		if (r == 0) {
			tcp_conn_close(conn, "closed by peer");
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			tcp_conn_close(conn, "read error");
		return;
	}
}

/* ---- receive ---- */

/* A record is complete in conn->rx (or, if empty, nowhere): make it a call. */
static void tcp_conn_record(struct tcp_conn *conn)
{
	struct tcp_ctx *ctx = conn->rx;
	size_t len = conn->rm.rec_len;

	rm_reset(&conn->rm);
	if (!ctx) {
		/* RFC 5531 §11 allows it; no RPC message fits in zero bytes. */
		log_limited(&lim_record, LOG_WARNING, "tcp: %s: empty record ignored", conn->rpc.peer_name);
		return;
	}
	conn->rx = NULL;
	ctx->state = TCP_CTX_CALL;

	struct rpc_call *c = &ctx->call;
	c->conn = &conn->rpc;
	c->msg = ctx->req;
	c->msg_len = len;
	c->n_ddp_in = 0;
	c->reply_buf = ctx->reply;
	c->reply_cap = conn->x->p.reply_cap;
	c->payload_area = ctx->payload;
	c->payload_cap = conn->x->p.payload_cap;
	c->priv = ctx;
	stats_add(&conn->stats.calls, 1);
	rpc_call_receive(c); /* may send (and even close) before returning */
}

/* Parse the staged bytes. False if the connection paused or closed. */
static bool tcp_conn_parse(struct tcp_conn *conn)
{
	while (conn->state == TCP_CONN_OPEN) {
		size_t avail = conn->stage_len - conn->stage_off;
		size_t used = 0;
		if (avail == 0) {
			conn->stage_off = conn->stage_len = 0;
			return true;
		}
		uint8_t *rec = conn->rx ? conn->rx->req : NULL;
		enum rm_status st = rm_consume(&conn->rm, conn->stage + conn->stage_off, avail, rec, &used);
		conn->stage_off += used;
		switch (st) {
		case RM_MORE:
			break;
		case RM_RECORD:
			tcp_conn_record(conn);
			break;
		case RM_NEED_BUF:
			conn->rx = tcp_ctx_get(conn);
			if (!conn->rx) {
				tcp_conn_pause(conn);
				return false;
			}
			break;
		case RM_TOO_BIG:
			/* RFC 5531 §11 puts no limit on records; ours protects memory. */
			log_limited(&lim_record, LOG_WARNING,
				    "tcp: %s: record of %llu bytes or more exceeds max-record %zu, closing",
				    conn->rpc.peer_name, (unsigned long long)conn->rm.refused_len,
				    conn->x->p.max_record);
			tcp_conn_close(conn, "record too large");
			return false;
		}
	}
	return false;
}

/* One readv: the rest of the current fragment straight into the record,
 * whatever follows into the (empty) stage. Returns readv's result. */
static ssize_t tcp_conn_read(struct tcp_conn *conn)
{
	struct iovec iov[2];
	int n = 0;
	size_t direct = conn->rx ? rm_direct_room(&conn->rm) : 0;

	if (direct) {
		iov[n].iov_base = conn->rx->req + conn->rm.rec_len;
		iov[n++].iov_len = direct;
	}
	iov[n].iov_base = conn->stage;
	iov[n++].iov_len = TCP_STAGE_SIZE;
	ssize_t r = readv(conn->fd, iov, n);
	if (r <= 0)
		return r;

	size_t d = (size_t)r < direct ? (size_t)r : direct;
	clock_gettime(CLOCK_MONOTONIC, &conn->rx_last);
	conn->stage_off = 0;
	conn->stage_len = (size_t)r - d;
	if (d && rm_direct(&conn->rm, d) == RM_RECORD)
		tcp_conn_record(conn);
	return r;
}

static void tcp_conn_rx(struct tcp_conn *conn)
{
	for (unsigned round = 0; round < TCP_RX_ROUNDS; round++) {
		if (!tcp_conn_parse(conn))
			return;
		ssize_t r = tcp_conn_read(conn);
		if (r == 0) {
			tcp_conn_close(conn, "closed by peer");
			return;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				log_limited(&lim_io, LOG_INFO, "tcp: %s: read: %s", conn->rpc.peer_name,
					    strerror(errno));
				tcp_conn_close(conn, "read error");
			}
			return;
		}
	}
	/* Staged bytes left after the last round are parsed on the next event. */
	tcp_conn_parse(conn);
}

void tcp_conn_stall_check(struct tcp_conn *conn, const struct timespec *now)
{
	static struct log_limit lim;
	unsigned limit = conn->x->p.record_timeout_s;
	bool mid_record = conn->rx || conn->rm.in_body || conn->rm.hdr_have || conn->rm.rec_len;

	/* A paused connection waits for us; a record boundary is a fine place to idle. */
	if (conn->state != TCP_CONN_OPEN || conn->paused || !mid_record || !limit)
		return;
	if (now->tv_sec - conn->rx_last.tv_sec < (time_t)limit)
		return;
	log_limited(&lim, LOG_WARNING, "tcp: %s: record stalled for %u s, closing",
		    conn->rpc.peer_name, limit);
	tcp_conn_close(conn, "record stalled");
}

void tcp_conn_linger_check(struct tcp_conn *conn)
{
	int unacked = 0;

	if (conn->state != TCP_CONN_LINGER)
		return;
	/* SIOCOUTQ: bytes sent but not yet acknowledged (or not yet sent). */
	if (ioctl(conn->fd, SIOCOUTQ, &unacked) == 0 && unacked > 0)
		return;
	tcp_conn_get(conn);
	tcp_conn_discard(conn); /* leave no unread input: close sends FIN, not RST */
	tcp_conn_close(conn, "drained");
	tcp_conn_put(conn);
}

static void tcp_read_cb(int fd, short what, void *arg)
{
	struct tcp_conn *conn = arg;
	(void)fd;
	(void)what;
	if (conn->state == TCP_CONN_CLOSED || (conn->state == TCP_CONN_OPEN && conn->paused))
		return;
	tcp_conn_get(conn);
	if (conn->state == TCP_CONN_OPEN)
		tcp_conn_rx(conn);
	else
		tcp_conn_discard(conn);
	tcp_conn_put(conn);
}

/* ---- send ---- */

/* Reply stream -> iovecs: mark, then reply bytes with each payload spliced in. */
static void tcp_ctx_build_iov(struct tcp_ctx *ctx)
{
	struct rpc_call *c = &ctx->call;
	size_t len = rpc_reply_len(c), pos = 0, end = xdr_enc_len(&c->res);
	unsigned n = 0;

	/* RFC 5531 §11: one fragment, last-fragment bit set. */
	ctx->mark = htonl(RM_LAST_FRAGMENT | (uint32_t)len);
	ctx->iov[n].iov_base = &ctx->mark;
	ctx->iov[n++].iov_len = 4;
	for (unsigned i = 0; i < c->n_ddp_out; i++) {
		const struct rpc_ddp_out *o = &c->ddp_out[i];
		if (o->offset > pos) {
			ctx->iov[n].iov_base = ctx->reply + pos;
			ctx->iov[n++].iov_len = o->offset - pos;
			pos = o->offset;
		}
		if (o->len) {
			ctx->iov[n].iov_base = (void *)o->data;
			ctx->iov[n++].iov_len = o->len;
		}
		if (XDR_PAD(o->len)) {
			ctx->iov[n].iov_base = (void *)xdr_zero_pad;
			ctx->iov[n++].iov_len = XDR_PAD(o->len);
		}
	}
	if (end > pos) {
		ctx->iov[n].iov_base = ctx->reply + pos;
		ctx->iov[n++].iov_len = end - pos;
	}
	ctx->iov_n = n;
	ctx->iov_i = 0;
}

/* w bytes were written from the head of the send queue. */
static void tcp_conn_sent(struct tcp_conn *conn, size_t w)
{
	struct tcp_ctx *ctx;

	while (w > 0 && (ctx = queue_peek_entry(&conn->sendq, struct tcp_ctx, link))) {
		struct iovec *v = &ctx->iov[ctx->iov_i];
		if (w >= v->iov_len) {
			w -= v->iov_len;
			ctx->iov_i++;
		} else {
			v->iov_base = (uint8_t *)v->iov_base + w;
			v->iov_len -= w;
			w = 0;
		}
		if (ctx->iov_i == ctx->iov_n) {
			queue_pop(&conn->sendq);
			tcp_ctx_put(ctx);
		}
	}
}

#define TCP_FLUSH_IOV 64

static void tcp_conn_flush(struct tcp_conn *conn)
{
	while (!queue_empty(&conn->sendq) && conn->state != TCP_CONN_CLOSED) {
		struct iovec v[TCP_FLUSH_IOV];
		int n = 0;
		queue_foreach(l, &conn->sendq) {
			struct tcp_ctx *ctx = queue_entry(l, struct tcp_ctx, link);
			for (unsigned i = ctx->iov_i; i < ctx->iov_n && n < TCP_FLUSH_IOV; i++)
				v[n++] = ctx->iov[i];
			if (n == TCP_FLUSH_IOV)
				break;
		}
		ssize_t w = writev(conn->fd, v, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				tcp_write_arm(conn, true);
				return;
			}
			log_limited(&lim_io, LOG_INFO, "tcp: %s: write: %s", conn->rpc.peer_name,
				    strerror(errno));
			tcp_conn_close(conn, "write error");
			return;
		}
		tcp_conn_sent(conn, (size_t)w);
	}
	if (conn->state != TCP_CONN_CLOSED)
		tcp_write_arm(conn, false);
}

static void tcp_write_cb(int fd, short what, void *arg)
{
	struct tcp_conn *conn = arg;
	(void)fd;
	(void)what;
	tcp_conn_get(conn);
	tcp_conn_flush(conn);
	tcp_conn_put(conn);
}

/* rpc_xprt_ops.send_reply, loop thread: queue c's reply (or drop it). */
static void tcp_send_reply(struct rpc_call *c)
{
	struct tcp_ctx *ctx = c->priv;
	struct tcp_conn *conn = ctx->conn;

	if (c->proc_status == RPC_PROC_GARBAGE && !c->from_cache)
		stats_add(&conn->stats.garbage_args, 1);
	if (c->drop || conn->state == TCP_CONN_CLOSED) {
		tcp_ctx_put(ctx);
		return;
	}
	tcp_conn_get(conn);
	tcp_ctx_build_iov(ctx);
	ctx->state = TCP_CTX_SEND;
	queue_push(&conn->sendq, &ctx->link);
	if (!conn->writing)
		tcp_conn_flush(conn);
	tcp_conn_put(conn);
}

/* ---- accept ---- */

static void tcp_peer_name(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(out, len, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(out, len, "%s:%u", a, ntohs(s4->sin_port));
	}
}

void tcp_conn_new(struct tcp_xprt *x, int fd, const struct sockaddr_storage *ss, socklen_t len)
{
	static struct log_limit lim;
	struct tcp_conn *conn = calloc(1, sizeof(*conn));
	int one = 1;

	if (!conn || !(conn->stage = malloc(TCP_STAGE_SIZE)))
		goto err;
	conn->x = x;
	conn->fd = fd;
	conn->refs = 1;
	conn->state = TCP_CONN_OPEN;
	conn->rpc.ops = &tcp_rpc_ops;
	conn->rpc.xprt_name = "tcp";
	memcpy(&conn->rpc.peer, ss, len);
	conn->rpc.peer_len = len;
	tcp_peer_name(ss, conn->rpc.peer_name, sizeof(conn->rpc.peer_name));
	rm_init(&conn->rm, x->p.max_record);
	clock_gettime(CLOCK_MONOTONIC, &conn->rx_last);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));

	conn->ev_read = loop_io(x->loop, fd, LOOP_READ | LOOP_PERSIST, tcp_read_cb, conn);
	conn->ev_write = loop_io(x->loop, fd, LOOP_WRITE | LOOP_PERSIST, tcp_write_cb, conn);
	if (!conn->ev_read || !conn->ev_write)
		goto err;

	conn->next = x->conns;
	if (x->conns)
		x->conns->prev = conn;
	x->conns = conn;
	__atomic_add_fetch(&x->n_conns, 1, __ATOMIC_RELAXED);
	stats_conn_register(&conn->stats, "tcp", conn->rpc.peer_name);
	tcp_read_arm(conn, true);
	log_limited(&lim_connect, LOG_INFO, "tcp: %s: connected", conn->rpc.peer_name);
	return;

err:
	log_limited(&lim, LOG_ERR, "tcp: out of memory for a connection");
	if (conn) {
		loop_ev_free(conn->ev_read);
		loop_ev_free(conn->ev_write);
		free(conn->stage);
		free(conn);
	}
	close(fd);
}
