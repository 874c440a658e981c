/*
 * tcp_conn.c - one TCP connection carrying ONC RPC records.
 *
 * Receive: bytes are read into the connection's stage buffer and parsed by
 * the record-marking parser, which copies fragment bodies into the
 * connection's own record buffer (rbuf) and, once the record is complete
 * (or outgrows rbuf), into a call context's request buffer. While the parser
 * is inside a fragment body, the next read goes straight into the record's
 * buffer (readv: [rest of the fragment, stage]), so most of a large WRITE's
 * data is not copied by us. A complete record becomes a call
 * (rpc_call_receive); many calls may be in flight. Reading stops while no
 * context can be had (paused) and while replies wait for the socket
 * (tx_blocked).
 *
 * Send: replies are queued as they complete (any order) and written with
 * writev of [record mark, reply bytes, each ddp_out payload + XDR pad, ...],
 * several replies per system call when they queue up; a short write arms the
 * write event. READ payloads are sent from where the handler produced them,
 * or, when it spliced them into the context's pipe (tcp_ctx.c), by splice
 * from the pipe, the bytes before them with MSG_MORE.
 *
 * Close: every error funnels into tcp_conn_close() (idempotent). The object
 * is freed by tcp_conn_put() when the last reference goes; every callback
 * holds a reference while it runs, so nothing frees a connection under its
 * own feet.
 */
#include "transport/tcp_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"
#include "transport/sock_addr.h"

static const uint8_t xdr_zero_pad[4];
static struct log_limit lim_record;
static struct log_limit lim_io;
static struct log_limit lim_connect;
static struct log_limit lim_close;

/* The reference count is the rpc_conn's (rpc/xprt.h): upper layers may hold
 * references too, from any thread. */
void tcp_conn_get(struct tcp_conn *conn)
{
	rpc_conn_get(&conn->rpc);
}

void tcp_conn_put(struct tcp_conn *conn)
{
	rpc_conn_put(&conn->rpc);
}

/* stage + rbuf: one private mapping, not the heap, so that pages never
 * written cost no memory (an idle connection's) whatever malloc does with
 * reused or perturbed memory, and so that tcp_conn_sweep can give the
 * pages of an idle connection back (MADV_DONTNEED). */
static int tcp_conn_bufs_alloc(struct tcp_conn *conn)
{
	void *m = mmap(NULL, TCP_STAGE_SIZE + TCP_RBUF_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (m == MAP_FAILED)
		return -1;
	conn->stage = m;
	conn->rbuf = conn->stage + TCP_STAGE_SIZE;
	return 0;
}

static void tcp_conn_bufs_free(struct tcp_conn *conn)
{
	if (conn->stage)
		munmap(conn->stage, TCP_STAGE_SIZE + TCP_RBUF_SIZE);
	conn->stage = conn->rbuf = NULL;
}

/* xprt_ops.conn_release: the last reference went (any thread; the
 * connection is CLOSED and has no events left). */
void tcp_conn_release(struct rpc_conn *rc)
{
	struct tcp_conn *conn = container_of(rc, struct tcp_conn, rpc);

	tcp_tls_conn_free(conn);
	tcp_conn_bufs_free(conn);
	free(conn);
}

void tcp_conn_link(struct tcp_xprt *x, struct tcp_conn *conn)
{
	conn->prev = NULL;
	conn->next = x->conns;
	if (x->conns)
		x->conns->prev = conn;
	else
		x->conns_tail = conn;
	x->conns = conn;
}

void tcp_conn_unlink(struct tcp_xprt *x, struct tcp_conn *conn)
{
	if (conn->prev)
		conn->prev->next = conn->next;
	else
		x->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	else
		x->conns_tail = conn->prev;
	conn->prev = conn->next = NULL;
}

/* conn was just active: first in x->conns (the last is evicted first). */
void tcp_conn_touch(struct tcp_conn *conn)
{
	if (conn->x->conns == conn)
		return;
	tcp_conn_unlink(conn->x, conn);
	tcp_conn_link(conn->x, conn);
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

/* OPEN reads unless paused, tx_blocked or waiting to write a STARTTLS reply;
 * DRAINING and LINGER read to discard. */
void tcp_conn_rearm(struct tcp_conn *conn)
{
	bool on = conn->state == TCP_CONN_OPEN ? !conn->paused && !conn->tx_blocked && !conn->rpc.tls_starting
					       : conn->state != TCP_CONN_CLOSED;

	tcp_read_arm(conn, on);
	/* Parse what is staged even if the socket has nothing new. */
	if (on && conn->state == TCP_CONN_OPEN)
		loop_ev_trigger(conn->ev_read);
}

static bool tcp_conn_mid_record(const struct tcp_conn *conn)
{
	return conn->rx || conn->rec_ready || rm_mid_record(&conn->rm);
}

bool tcp_conn_idle(const struct tcp_conn *conn)
{
	return conn->state == TCP_CONN_OPEN && conn->n_ctx == 0 && !conn->paused &&
	       queue_empty(&conn->sendq) && !tcp_conn_mid_record(conn);
}

void tcp_write_arm(struct tcp_conn *conn, bool on)
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
	rpc_conn_closed(&conn->rpc); /* close hooks */

	/* Contexts not in a worker go back now; those in a worker come back
	 * through tcp_send_reply() and find the connection CLOSED. */
	conn->rec_ready = false;
	if (conn->rx) {
		struct tcp_ctx *rx = conn->rx;
		conn->rx = NULL;
		tcp_ctx_put(rx);
	}
	struct tcp_ctx *ctx;
	while ((ctx = queue_pop_entry(&conn->sendq, struct tcp_ctx, link)))
		tcp_ctx_put(ctx);

	tcp_conn_unlink(x, conn);
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
	if (tcp_conn_mid_record(conn))
		conn->rec_start = conn->rx_last;
	tcp_conn_rearm(conn);
}

static void tcp_conn_pause(struct tcp_conn *conn)
{
	conn->paused = true;
	tcp_conn_rearm(conn);
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
	conn->rec_ready = false;
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
	/* FIN after the last reply (and TLS's close_notify); the peer's EOF, an
	 * error, or the linger timer (tcp_conn_linger_check) closes. */
	tcp_tls_shutdown(conn);
	if (shutdown(conn->fd, SHUT_WR) != 0)
		tcp_conn_close(conn, "shutdown failed");
}

/* DRAINING, LINGER: read and throw away until EAGAIN; EOF or error closes. */
static void tcp_conn_discard(struct tcp_conn *conn)
{
	for (unsigned round = 0; round < TCP_RX_ROUNDS; round++) {
		ssize_t r = read(conn->fd, conn->stage, TCP_STAGE_SIZE);
		if (r > 0) {
			stats_add(&conn->stats.rx_bytes, (uint64_t)r);
			continue;
		}
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

/* The buffer the current record is assembled in, and its size. */
static uint8_t *tcp_conn_recbuf(struct tcp_conn *conn, size_t *cap)
{
	if (conn->rx) {
		*cap = conn->x->p.max_record;
		return conn->rx->req;
	}
	*cap = TCP_RBUF_SIZE;
	return conn->rbuf;
}

/* Move the record so far from rbuf into a context (big: it outgrew rbuf).
 * False if none can be had: the connection paused and waits for one. */
static bool tcp_conn_take_ctx(struct tcp_conn *conn, bool big)
{
	struct tcp_ctx *ctx = tcp_ctx_get(conn, big);

	if (!ctx) {
		tcp_conn_pause(conn);
		return false;
	}
	memcpy(ctx->req, conn->rbuf, conn->rm.rec_len);
	conn->rx = ctx;
	return true;
}

/* A record is complete in conn->rx or rbuf: make it a call (or wait, paused
 * with rec_ready, for a context). */
static void tcp_conn_record(struct tcp_conn *conn)
{
	size_t len = conn->rm.rec_len;

	if (!conn->rx && len == 0) {
		/* RFC 5531 §11 allows it; no RPC message fits in zero bytes. */
		rm_reset(&conn->rm);
		log_limited(&lim_record, LOG_WARNING, "tcp: %s: empty record ignored", conn->rpc.peer_name);
		return;
	}
	conn->rec_ready = !conn->rx && !tcp_conn_take_ctx(conn, false);
	if (conn->rec_ready)
		return;
	struct tcp_ctx *ctx = conn->rx;
	rm_reset(&conn->rm);
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
	if (conn->rpc.tls_starting)
		tcp_conn_rearm(conn); /* RFC 9289 §4.1: nothing more is read as plain TCP */
}

/* Parse the staged bytes. False if the connection paused, blocked or closed. */
static bool tcp_conn_parse(struct tcp_conn *conn)
{
	while (conn->state == TCP_CONN_OPEN && !conn->paused && !conn->tx_blocked && !conn->rpc.tls_starting &&
	       conn->tls != TCP_TLS_HANDSHAKE) {
		if (conn->rec_ready) {
			tcp_conn_record(conn);
			continue;
		}
		size_t avail = conn->stage_len - conn->stage_off;
		size_t used = 0, cap;
		if (avail == 0) {
			conn->stage_off = conn->stage_len = 0;
			/* rbuf is full and the record goes on: its context now, so
			 * that the next read goes straight into it. */
			if (!conn->rx && rm_direct_room(&conn->rm) && conn->rm.rec_len >= TCP_RBUF_SIZE)
				return tcp_conn_take_ctx(conn, true);
			return true;
		}
		if (!tcp_conn_mid_record(conn))
			conn->rec_start = conn->rx_last; /* its first byte was read then */
		/* A whole record already staged goes to a context at once (no copy
		 * through rbuf); without one, it waits in the stage, pinning nothing. */
		if (rm_whole_record(&conn->rm, conn->stage + conn->stage_off, avail) &&
		    !(conn->rx = tcp_ctx_get(conn, false))) {
			tcp_conn_pause(conn);
			return false;
		}
		uint8_t *rec = tcp_conn_recbuf(conn, &cap);
		enum rm_status st = rm_consume_cap(&conn->rm, conn->stage + conn->stage_off, avail, rec, cap, &used);
		conn->stage_off += used;
		switch (st) {
		case RM_MORE:
			break;
		case RM_RECORD:
			tcp_conn_record(conn);
			break;
		case RM_NEED_BUF: /* larger than rbuf */
			if (!tcp_conn_take_ctx(conn, true))
				return false;
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

/* One readv: the rest of the current fragment straight into the record's
 * buffer, whatever follows into the (empty) stage. Returns readv's result;
 * *drained: it filled less than it offered, so the socket had no more bytes
 * (the read event is level-triggered: bytes arriving later raise it again,
 * and a readv that could only answer EAGAIN is not made; one syscall less
 * per call). */
static ssize_t tcp_conn_read(struct tcp_conn *conn, bool *drained)
{
	struct iovec iov[2];
	int n = 0;
	size_t cap;
	uint8_t *rec = tcp_conn_recbuf(conn, &cap);
	size_t direct = rm_direct_room_cap(&conn->rm, cap);

	if (direct) {
		iov[n].iov_base = rec + conn->rm.rec_len;
		iov[n++].iov_len = direct;
	}
	iov[n].iov_base = conn->stage;
	iov[n++].iov_len = TCP_STAGE_SIZE;
	ssize_t r = conn->tls == TCP_TLS_ON ? tcp_tls_readv(conn, iov, n) : readv(conn->fd, iov, n);
	if (r <= 0)
		return r;
	stats_add(&conn->stats.rx_bytes, (uint64_t)r);
	*drained = (size_t)r < direct + TCP_STAGE_SIZE;

	size_t d = (size_t)r < direct ? (size_t)r : direct;
	conn->bufs_dirty = true;
	clock_gettime(CLOCK_MONOTONIC, &conn->rx_last);
	tcp_conn_touch(conn);
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
		bool drained = false;
		ssize_t r = tcp_conn_read(conn, &drained);
		if (drained)
			break; /* the staged bytes are parsed below */
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
	if (tcp_tls_pending(conn) && conn->reading)
		loop_ev_trigger(conn->ev_read); /* decrypted bytes wait in OpenSSL, not the socket */
}

static bool tcp_elapsed(const struct timespec *now, const struct timespec *since, unsigned limit)
{
	return limit && now->tv_sec - since->tv_sec >= (time_t)limit;
}

/* An idle connection with nothing staged for TCP_BUF_IDLE_S: its stage and
 * record buffer pages go back to the kernel (read again, they are zero
 * pages until written), so a connection that was once busy costs an idle
 * one's memory. */
static void tcp_conn_bufs_trim(struct tcp_conn *conn, const struct timespec *now, const struct timespec *last)
{
	if (!conn->bufs_dirty || !tcp_conn_idle(conn) || conn->stage_off < conn->stage_len ||
	    !tcp_elapsed(now, last, TCP_BUF_IDLE_S))
		return;
	madvise(conn->stage, TCP_STAGE_SIZE + TCP_RBUF_SIZE, MADV_DONTNEED);
	conn->bufs_dirty = false;
}

void tcp_conn_sweep(struct tcp_conn *conn, const struct timespec *now)
{
	static struct log_limit lim;
	const struct tcp_params *p = &conn->x->p;
	const struct timespec *last = conn->tx_last.tv_sec > conn->rx_last.tv_sec ? &conn->tx_last : &conn->rx_last;
	const char *why = NULL;

	/* A paused connection waits for us, not for its peer. The deadline runs
	 * from the record's first byte: trickling does not extend it. */
	if (conn->state == TCP_CONN_OPEN && !conn->paused && tcp_conn_mid_record(conn) &&
	    tcp_elapsed(now, &conn->rec_start, p->record_timeout_s))
		why = "record not complete within record-timeout";
	else if (conn->state == TCP_CONN_OPEN && conn->tls == TCP_TLS_HANDSHAKE &&
		 tcp_elapsed(now, &conn->rec_start, p->record_timeout_s))
		why = "TLS handshake not complete within record-timeout";
	else if (conn->state != TCP_CONN_LINGER && conn->writing && tcp_elapsed(now, &conn->tx_last, p->send_timeout_s))
		why = "replies unread for send-timeout";
	else if (tcp_conn_idle(conn) && tcp_elapsed(now, last, p->idle_timeout_s))
		why = "idle";
	if (!why) {
		tcp_conn_bufs_trim(conn, now, last);
		return;
	}
	if (strcmp(why, "idle") != 0)
		log_limited(&lim, LOG_WARNING, "tcp: %s: %s, closing", conn->rpc.peer_name, why);
	if (conn->writing) {
		/* Reset rather than leave the kernel an orphan holding the unsent
		 * replies behind a zero window (and the FIN the peer never sees). */
		struct linger lg = {1, 0};
		setsockopt(conn->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	tcp_conn_close(conn, why);
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
	if (conn->state == TCP_CONN_CLOSED ||
	    (conn->state == TCP_CONN_OPEN && (conn->paused || conn->tx_blocked || conn->rpc.tls_starting)))
		return;
	tcp_conn_get(conn);
	if (conn->state == TCP_CONN_OPEN && conn->tls == TCP_TLS_HANDSHAKE)
		tcp_tls_handshake(conn);
	else if (conn->state == TCP_CONN_OPEN)
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
			ctx->iov[n].iov_base = o->piped ? NULL : (void *)o->data; /* NULL: from ctx->pipe */
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
			if (v->iov_base) /* NULL: the bytes come from the pipe, which advances itself */
				v->iov_base = (uint8_t *)v->iov_base + w;
			v->iov_len -= w;
			w = 0;
		}
		if (ctx->iov_i == ctx->iov_n) {
			bool starttls = ctx->starttls;
			queue_pop(&conn->sendq);
			tcp_ctx_put(ctx);
			if (starttls) /* RFC 9289 §4.1: the STARTTLS reply is out, TLS is next */
				tcp_tls_start(conn);
		}
	}
}

#define TCP_FLUSH_IOV 64

/*
 * The send queue's next bytes into v (up to TCP_FLUSH_IOV iovecs), stopping
 * before a segment that waits in a context's pipe: *pipe_ctx is that context
 * when the segment is first (n is 0), and *more says bytes follow in v's case.
 */
static int tcp_sendq_gather(struct tcp_conn *conn, struct iovec *v, struct tcp_ctx **pipe_ctx, bool *more)
{
	int n = 0;

	*pipe_ctx = NULL;
	*more = false;
	queue_foreach(l, &conn->sendq) {
		struct tcp_ctx *ctx = queue_entry(l, struct tcp_ctx, link);
		for (unsigned i = ctx->iov_i; i < ctx->iov_n; i++) {
			if (n == TCP_FLUSH_IOV)
				return n;
			if (!ctx->iov[i].iov_base) {
				*pipe_ctx = n ? NULL : ctx;
				*more = n > 0;
				return n;
			}
			v[n++] = ctx->iov[i];
		}
	}
	return n;
}

/* Write the next bytes of the send queue: from memory (MSG_MORE when piped
 * bytes follow), or a pipe's by splice. What write(2) returns. */
static ssize_t tcp_conn_write_some(struct tcp_conn *conn)
{
	struct iovec v[TCP_FLUSH_IOV];
	struct tcp_ctx *pc;
	bool more;
	int n = tcp_sendq_gather(conn, v, &pc, &more);

	if (conn->tls == TCP_TLS_ON)
		return tcp_tls_writev(conn, v, n); /* never piped (tcp_ctx_pipe) */
	if (pc) {
		unsigned i = pc->iov_i;
		ssize_t w = splice(pc->pipe[0], NULL, conn->fd, NULL, pc->iov[i].iov_len,
				   SPLICE_F_NONBLOCK | (i + 1 < pc->iov_n ? SPLICE_F_MORE : 0));
		if (w == 0) { /* the pipe holds less than the reply said: its framing is lost */
			errno = EPIPE;
			return -1;
		}
		return w;
	}
	if (more) {
		struct msghdr mh = { .msg_iov = v, .msg_iovlen = (size_t)n };
		return sendmsg(conn->fd, &mh, MSG_MORE | MSG_NOSIGNAL);
	}
	return writev(conn->fd, v, n);
}

static void tcp_conn_flush(struct tcp_conn *conn)
{
	while (!queue_empty(&conn->sendq) && conn->state != TCP_CONN_CLOSED) {
		ssize_t w = tcp_conn_write_some(conn);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				tcp_write_arm(conn, true);
				/* Replies wait: read no more calls until they are written
				 * (knfsd: no new request without write space for its reply). */
				if (!conn->tx_blocked) {
					conn->tx_blocked = true;
					tcp_conn_rearm(conn);
				}
				return;
			}
			log_limited(&lim_io, LOG_INFO, "tcp: %s: write: %s", conn->rpc.peer_name,
				    strerror(errno));
			tcp_conn_close(conn, "write error");
			return;
		}
		if (w > 0) {
			clock_gettime(CLOCK_MONOTONIC, &conn->tx_last);
			stats_add(&conn->stats.tx_bytes, (uint64_t)w);
		}
		tcp_conn_sent(conn, (size_t)w);
	}
	if (conn->state == TCP_CONN_CLOSED)
		return;
	tcp_write_arm(conn, false);
	if (conn->tx_blocked) {
		conn->tx_blocked = false;
		tcp_conn_rearm(conn);
	}
}

static void tcp_write_cb(int fd, short what, void *arg)
{
	struct tcp_conn *conn = arg;
	(void)fd;
	(void)what;
	tcp_conn_get(conn);
	if (conn->state == TCP_CONN_OPEN && conn->tls == TCP_TLS_HANDSHAKE)
		tcp_tls_handshake(conn);
	else
		tcp_conn_flush(conn);
	tcp_conn_put(conn);
}

/* xprt_ops.send_reply, loop thread: queue c's reply (or drop it). */
void tcp_send_reply(struct rpc_call *c)
{
	struct tcp_ctx *ctx = c->priv;
	struct tcp_conn *conn = ctx->conn;

	if (c->proc_status == RPC_PROC_GARBAGE && !c->from_cache)
		stats_add(&conn->stats.garbage_args, 1);
	if (c->drop && c->starttls) /* the probe's reply is lost: nothing more can be read */
		tcp_conn_close(conn, "STARTTLS reply dropped");
	if (c->drop || conn->state == TCP_CONN_CLOSED) {
		tcp_ctx_put(ctx);
		return;
	}
	tcp_conn_get(conn);
	ctx->starttls = c->starttls;
	tcp_ctx_build_iov(ctx);
	ctx->state = TCP_CTX_SEND;
	if (queue_empty(&conn->sendq))
		clock_gettime(CLOCK_MONOTONIC, &conn->tx_last); /* the send timeout runs from here */
	queue_push(&conn->sendq, &ctx->link);
	if (!conn->writing)
		tcp_conn_flush(conn);
	tcp_conn_put(conn);
}

/* ---- accept ---- */

void tcp_conn_new(struct tcp_xprt *x, int fd, const struct sockaddr_storage *ss, socklen_t len)
{
	static struct log_limit lim;
	struct tcp_conn *conn = calloc(1, sizeof(*conn));
	int one = 1;

	if (!conn || tcp_conn_bufs_alloc(conn))
		goto err;
	conn->x = x;
	conn->fd = fd;
	conn->state = TCP_CONN_OPEN;
	rpc_conn_init(&conn->rpc, &x->base); /* the "open" reference */
	conn->rpc.home = x->home; /* its calls complete on x's loop */
	conn->rpc.xprt_name = "tcp";
	conn->rpc.reply_max = x->p.reply_cap;
	memcpy(&conn->rpc.peer, ss, len);
	conn->rpc.peer_len = len;
	sock_addr_name(ss, conn->rpc.peer_name, sizeof(conn->rpc.peer_name));
	rm_init(&conn->rm, x->p.max_record);
	conn->rpc.tls_offer = x->tls_ctx != NULL; /* RFC 9289 §4.1: an AUTH_TLS probe gets STARTTLS */
	clock_gettime(CLOCK_MONOTONIC, &conn->rx_last);
	conn->tx_last = conn->rx_last;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));

	conn->ev_read = loop_io(x->loop, fd, LOOP_READ | LOOP_PERSIST, tcp_read_cb, conn);
	conn->ev_write = loop_io(x->loop, fd, LOOP_WRITE | LOOP_PERSIST, tcp_write_cb, conn);
	if (!conn->ev_read || !conn->ev_write)
		goto err;

	tcp_conn_link(x, conn);
	__atomic_add_fetch(&x->n_conns, 1, __ATOMIC_RELAXED);
	stats_conn_register(&conn->stats, "tcp", conn->rpc.peer_name, tcp_tls_stats_conn);
	tcp_read_arm(conn, true);
	log_limited(&lim_connect, LOG_INFO, "tcp: %s: connected", conn->rpc.peer_name);
	return;

err:
	log_limited(&lim, LOG_ERR, "tcp: out of memory for a connection");
	if (conn) {
		loop_ev_free(conn->ev_read);
		loop_ev_free(conn->ev_write);
		tcp_conn_bufs_free(conn);
		free(conn);
	}
	close(fd);
}
