/*
 * tcp_bc.c - calls the server makes on a connection the client opened (the
 * NFSv4.1 backchannel over TCP, RFC 8881 §2.10.3.1): xprt_ops.send_call for
 * accepted TCP connections. The call borrows a per-call context, is copied
 * into its reply buffer and goes out through the connection's send queue
 * like a reply (RFC 5531 §11 record marking, in order with the replies), so
 * the accepting side (tcp_conn.c, tcp_ctx.c) needs no change. The client's
 * replies come back as records like any call and rpc_call_receive() hands
 * them to the connection's rpc_clnt (RFC 5531 §9 msg_type).
 */
#include <string.h>

#include "transport/tcp_internal.h"

int tcp_send_call(struct rpc_conn *rc, const uint8_t *msg, size_t len)
{
	struct tcp_conn *conn = container_of(rc, struct tcp_conn, rpc);

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
