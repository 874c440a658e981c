/*
 * tcp_clnt.c - an outgoing TCP connection carrying the server's own calls
 * (see tcp_clnt.h): non-blocking connect, bounded reconnection, record
 * marking on send, tcp_record.c on receive, replies to rpc_clnt.
 * Independent of the accepting side (tcp_conn.c, tcp_ctx.c).
 */
#include "transport/tcp_clnt.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"
#include "transport/tcp_record.h"

#define TCP_CLNT_READ 16384u /* bytes per read() */
#define TCP_CLNT_ROUNDS 16   /* reads per readable event */

enum tcp_clnt_state { TCP_CLNT_IDLE, TCP_CLNT_CONNECTING, TCP_CLNT_UP };

struct tcp_clnt {
	struct rpc_clnt rpc; /* first: the send function finds us from it */
	struct loop *loop;
	struct tcp_clnt_params p;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char peer_name[64];

	enum tcp_clnt_state state;
	int fd;
	struct loop_ev *ev_read;  /* persistent, while UP */
	struct loop_ev *ev_write; /* connect completion, or a full socket */
	struct loop_ev *ev_retry; /* the next connect attempt */
	bool retry_armed;
	unsigned failures;        /* failed connects in a row */
	struct tcp_clnt_stats stats;

	struct rm_state rm;
	uint8_t *rx;              /* p.max_record: the reply being assembled */
	uint8_t *in;              /* TCP_CLNT_READ */
	uint8_t *tx;              /* p.send_buf: marked records not yet written */
	size_t tx_off, tx_len;
};

static struct log_limit lim_io;

static void tcp_clnt_connect(struct tcp_clnt *t);

static void tcp_clnt_name(struct tcp_clnt *t)
{
	char host[INET6_ADDRSTRLEN], serv[8];

	if (getnameinfo((struct sockaddr *)&t->addr, t->addr_len, host, sizeof(host), serv,
			sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(t->peer_name, sizeof(t->peer_name), "?");
	else if (t->addr.ss_family == AF_INET6)
		snprintf(t->peer_name, sizeof(t->peer_name), "[%s]:%s", host, serv);
	else
		snprintf(t->peer_name, sizeof(t->peer_name), "%s:%s", host, serv);
}

static void tcp_clnt_close_fd(struct tcp_clnt *t)
{
	loop_ev_free(t->ev_read);
	loop_ev_free(t->ev_write);
	t->ev_read = t->ev_write = NULL;
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->tx_off = t->tx_len = 0; /* a partial record dies with its connection */
	rm_reset(&t->rm);
	t->state = TCP_CLNT_IDLE;
}

/* Reconnect later while calls wait (also after the last allowed failure:
 * giving up happens on the timer, never inside the caller's tcp_clnt_call). */
static void tcp_clnt_schedule_retry(struct tcp_clnt *t)
{
	if (!t->rpc.n_pending || t->retry_armed)
		return;
	struct timeval tv = {.tv_sec = t->p.reconnect_delay_ms / 1000,
			     .tv_usec = (suseconds_t)(t->p.reconnect_delay_ms % 1000) * 1000};
	loop_ev_add(t->ev_retry, &tv);
	t->retry_armed = true;
}

static void tcp_clnt_retry_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct tcp_clnt *t = arg;

	t->retry_armed = false;
	if (t->state != TCP_CLNT_IDLE || !t->rpc.n_pending)
		return;
	if (t->failures > t->p.reconnect_max) {
		log_limited(&lim_io, LOG_NOTICE, "tcp: callback %s: unreachable after %u attempts, %u call(s) failed",
			    t->peer_name, t->failures, t->rpc.n_pending);
		t->failures = 0;
		rpc_clnt_fail_all(&t->rpc, RPC_CLNT_CLOSED);
		return;
	}
	tcp_clnt_connect(t);
}

/* The one place a connection (or an attempt) ends. */
static void tcp_clnt_lost(struct tcp_clnt *t, const char *why, int err)
{
	log_limited(&lim_io, LOG_INFO, "tcp: callback %s: %s%s%s", t->peer_name, why, err ? ": " : "",
		    err ? strerror(err) : "");
	if (t->state == TCP_CLNT_UP)
		t->stats.disconnects++;
	else {
		t->stats.connect_fails++;
		t->failures++;
	}
	tcp_clnt_close_fd(t);
	tcp_clnt_schedule_retry(t);
}

/* Write queued bytes; arm ev_write while the socket is full. false: connection lost. */
static bool tcp_clnt_flush(struct tcp_clnt *t)
{
	while (t->tx_off < t->tx_len) {
		ssize_t w = send(t->fd, t->tx + t->tx_off, t->tx_len - t->tx_off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			loop_ev_add(t->ev_write, NULL);
			return true;
		}
		if (w < 0) {
			tcp_clnt_lost(t, "write", errno);
			return false;
		}
		t->tx_off += (size_t)w;
	}
	t->tx_off = t->tx_len = 0;
	loop_ev_del(t->ev_write);
	return true;
}

/* rpc_clnt's send: one record, one fragment (RFC 5531 §11), queued whole or not at all. */
static int tcp_clnt_send(struct rpc_clnt *cl, const uint8_t *msg, size_t len)
{
	struct tcp_clnt *t = (struct tcp_clnt *)cl;

	if (t->state != TCP_CLNT_UP) {
		if (t->state == TCP_CLNT_IDLE && !t->retry_armed)
			tcp_clnt_connect(t); /* if UP at once (loopback), tcp_clnt_up()
			                        resent every pending call, this one too */
		return -1;
	}
	if (t->tx_off && t->tx_len + 4 + len > t->p.send_buf) {
		memmove(t->tx, t->tx + t->tx_off, t->tx_len - t->tx_off);
		t->tx_len -= t->tx_off;
		t->tx_off = 0;
	}
	if (t->tx_len + 4 + len > t->p.send_buf)
		return -1; /* the socket is that far behind: the retransmission tries again */
	uint32_t mark = htonl(RM_LAST_FRAGMENT | (uint32_t)len);
	memcpy(t->tx + t->tx_len, &mark, 4);
	memcpy(t->tx + t->tx_len + 4, msg, len);
	t->tx_len += 4 + len;
	return tcp_clnt_flush(t) ? 0 : -1;
}

/* Parse what was read; false if the connection was closed (oversized record). */
static bool tcp_clnt_parse(struct tcp_clnt *t, const uint8_t *in, size_t len)
{
	while (len) {
		size_t used = 0;
		enum rm_status st = rm_consume(&t->rm, in, len, t->rx, &used);
		in += used;
		len -= used;
		if (st == RM_TOO_BIG) {
			tcp_clnt_lost(t, "reply record over max_record", 0);
			return false;
		}
		if (st == RM_RECORD) {
			size_t n = t->rm.rec_len;
			rm_reset(&t->rm);
			rpc_clnt_reply(&t->rpc, t->rx, n);
			if (t->state != TCP_CLNT_UP)
				return false; /* a done() made us give up */
		}
	}
	return true;
}

static void tcp_clnt_read_cb(int fd, short what, void *arg)
{
	(void)what;
	struct tcp_clnt *t = arg;

	for (unsigned round = 0; round < TCP_CLNT_ROUNDS; round++) {
		ssize_t r = read(fd, t->in, TCP_CLNT_READ);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0) {
			tcp_clnt_lost(t, r ? "read" : "closed by peer", r ? errno : 0);
			return;
		}
		if (!tcp_clnt_parse(t, t->in, (size_t)r))
			return;
	}
}

static void tcp_clnt_up(struct tcp_clnt *t)
{
	int one = 1;

	setsockopt(t->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	t->state = TCP_CLNT_UP;
	t->failures = 0;
	t->stats.connects++;
	loop_ev_add(t->ev_read, NULL);
	/* Everything pending goes (again) on the new connection. */
	rpc_clnt_resend(&t->rpc);
}

static void tcp_clnt_write_cb(int fd, short what, void *arg)
{
	struct tcp_clnt *t = arg;
	int err = 0;
	socklen_t el = sizeof(err);

	if (t->state == TCP_CLNT_UP) {
		tcp_clnt_flush(t);
		return;
	}
	if (what & LOOP_TIMEOUT) {
		tcp_clnt_lost(t, "connect timed out", 0);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
		err = errno;
	if (err) {
		tcp_clnt_lost(t, "connect", err);
		return;
	}
	loop_ev_del(t->ev_write);
	tcp_clnt_up(t);
}

static void tcp_clnt_connect(struct tcp_clnt *t)
{
	t->fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->fd < 0) {
		tcp_clnt_lost(t, "socket", errno);
		return;
	}
	t->state = TCP_CLNT_CONNECTING;
	t->ev_read = loop_io(t->loop, t->fd, LOOP_READ | LOOP_PERSIST, tcp_clnt_read_cb, t);
	t->ev_write = loop_io(t->loop, t->fd, LOOP_WRITE | LOOP_PERSIST, tcp_clnt_write_cb, t);
	if (!t->ev_read || !t->ev_write) {
		tcp_clnt_lost(t, "out of memory", 0);
		return;
	}
	if (connect(t->fd, (struct sockaddr *)&t->addr, t->addr_len) == 0) {
		tcp_clnt_up(t); /* loopback may connect at once */
		return;
	}
	if (errno != EINPROGRESS) {
		tcp_clnt_lost(t, "connect", errno);
		return;
	}
	struct timeval tv = {.tv_sec = t->p.connect_timeout_ms / 1000,
			     .tv_usec = (suseconds_t)(t->p.connect_timeout_ms % 1000) * 1000};
	loop_ev_add(t->ev_write, &tv);
}

struct tcp_clnt *tcp_clnt_new(struct loop *loop, const struct sockaddr *addr, socklen_t addr_len,
			      const struct tcp_clnt_params *p)
{
	struct tcp_clnt *t = calloc(1, sizeof(*t));

	if (!t || addr_len > sizeof(t->addr) || p->max_record < 28 || p->send_buf < 64) {
		log_err("tcp: callback channel: bad parameters or out of memory");
		free(t);
		return NULL;
	}
	t->loop = loop;
	t->p = *p;
	memcpy(&t->addr, addr, addr_len);
	t->addr_len = addr_len;
	t->fd = -1;
	tcp_clnt_name(t);
	rm_init(&t->rm, p->max_record);
	t->rx = malloc(p->max_record);
	t->in = malloc(TCP_CLNT_READ);
	t->tx = malloc(p->send_buf);
	t->ev_retry = loop_timer(loop, false, tcp_clnt_retry_cb, t);
	if (!t->rx || !t->in || !t->tx || !t->ev_retry ||
	    rpc_clnt_init(&t->rpc, loop, &p->rpc, tcp_clnt_send, t->peer_name) != 0) {
		log_err("tcp: callback %s: out of memory", t->peer_name);
		tcp_clnt_free(t);
		return NULL;
	}
	return t;
}

void tcp_clnt_free(struct tcp_clnt *t)
{
	if (!t)
		return;
	tcp_clnt_close_fd(t);
	t->retry_armed = true; /* done() callbacks below must not reconnect */
	rpc_clnt_destroy(&t->rpc);
	loop_ev_free(t->ev_retry);
	free(t->rx);
	free(t->in);
	free(t->tx);
	free(t);
}

int tcp_clnt_call(struct tcp_clnt *t, struct rpc_clnt_call *cc)
{
	if (xdr_enc_len(&cc->args) + 4 > t->p.send_buf)
		return -1;
	return rpc_clnt_start(&t->rpc, cc);
}

void tcp_clnt_stats(const struct tcp_clnt *t, struct tcp_clnt_stats *out)
{
	*out = t->stats;
	out->unmatched = t->rpc.replies_unmatched;
}
