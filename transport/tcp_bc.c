/*
 * tcp_bc.c - calls the server makes on a connection the client opened (the
 * NFSv4.1 backchannel over TCP, RFC 8881 §2.10.3.1): xprt_ops.send_call for
 * accepted TCP connections. The call borrows a per-call context, is copied
 * into its reply buffer and goes out through the connection's send queue
 * like a reply (RFC 5531 §11 record marking, in order with the replies), so
 * the accepting side (tcp_conn.c, tcp_ctx.c) needs no change. The client's
 * replies come back as records like any call and rpc_call_receive() hands
 * them to the connection's rpc_clnt (RFC 5531 §9 msg_type).
 *
 * The calls are made on loop 0 (the callback loop); a connection another
 * event loop owns ([rnfsd] loops) gets a copy of the call through its loop's
 * inbox (a bc_hop, malloc'd: callbacks are rare), queued there. A call that
 * cannot be queued then is lost like one the peer never answered: its
 * timeout fails it (RFC 8881 §2.9.2: no resend on the same connection).
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/loop.h"
#include "transport/tcp_internal.h"

struct bc_hop {
	struct loop_msg m;
	struct tcp_conn *conn; /* a reference, dropped on the connection's loop */
	size_t len;
	uint8_t msg[];
};

static int tcp_send_call_here(struct tcp_conn *conn, const uint8_t *msg, size_t len);

/* The connection's loop: queue the copied call. */
static void tcp_bc_hop_run(struct loop_msg *m)
{
	static struct log_limit lim;
	struct bc_hop *h = container_of(m, struct bc_hop, m);

	/* Refused: the call's timeout retransmits it. A closed connection is
	 * not news (its close hook failed the calls); a busy one is said once. */
	if (tcp_send_call_here(h->conn, h->msg, h->len) != 0 && h->conn->state == TCP_CONN_OPEN)
		log_limited(&lim, LOG_NOTICE, "tcp: %s: back channel call not sent (no free context): "
			    "retried at its timeout", h->conn->rpc.peer_name);
	tcp_conn_put(h->conn);
	free(h);
}

/* Another loop's thread: pass the call to the connection's loop. 0, or -1 (no memory). */
static int tcp_bc_hop(struct tcp_conn *conn, const uint8_t *msg, size_t len)
{
	static struct log_limit lim;
	struct bc_hop *h = malloc(sizeof(*h) + len);

	if (!h) {
		log_limited(&lim, LOG_WARNING, "tcp: %s: no memory for a back channel call", conn->rpc.peer_name);
		return -1;
	}
	h->m.fn = tcp_bc_hop_run;
	h->conn = conn;
	h->len = len;
	memcpy(h->msg, msg, len);
	tcp_conn_get(conn);
	loop_send(conn->x->loop, &h->m);
	return 0;
}

int tcp_send_call(struct rpc_conn *rc, const uint8_t *msg, size_t len)
{
	struct tcp_conn *conn = container_of(rc, struct tcp_conn, rpc);
	struct loop *here = loop_current();

	if (here && here != conn->x->loop)
		return len > conn->x->p.reply_cap ? -1 : tcp_bc_hop(conn, msg, len);
	return tcp_send_call_here(conn, msg, len);
}

static int tcp_send_call_here(struct tcp_conn *conn, const uint8_t *msg, size_t len)
{

	if (conn->state != TCP_CONN_OPEN || len > conn->x->p.reply_cap)
		return -1;
	struct tcp_ctx *ctx = tcp_ctx_try_get(conn);
	if (!ctx)
		return -1; /* the caller's retransmission tries again */
	struct rpc_call *c = &ctx->call;
	memcpy(ctx->reply, msg, len);
	c->reply_buf = ctx->reply;
	c->reply_cap = conn->x->p.reply_cap;
	xdr_enc_init(&c->res, ctx->reply, c->reply_cap);
	(void)xdr_enc_reserve(&c->res, len);
	c->n_ddp_out = 0;
	c->drop = false;
	c->from_cache = false;
	c->proc_status = RPC_PROC_OK;
	c->priv = ctx;
	/* Queued behind the replies already waiting; the context returns to
	 * the pool once written (or when the connection closes). */
	tcp_send_reply(c);
	return 0;
}
