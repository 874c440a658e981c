/*
 * rdma_sendto.c - replies and transport errors.
 *
 *   rdma_send_reply()   the RPC layer's send_reply(): rdma_pcl_plan_reply()
 *                       decides inline (RDMA_MSG), Write chunks + inline, the
 *                       Reply chunk (RDMA_NOMSG) or ERR_CHUNK; the Writes are
 *                       planned from where the data lies (payload area, reply
 *                       buffer: registered at accept), then header + Send.
 *   rdma_send_error()   RDMA_ERROR (ERR_VERS, ERR_CHUNK, v2 INVALID_OPTION)
 *                       or an RPC GARBAGE_ARGS reply.
 *   rdma_send_done()    the Send completed: the context goes back to Receive.
 *
 * Every reply and every error consumes the one answer the call is owed
 * (rdma_credits_reply_get), and carries the current credit grant.
 */
#include <string.h>

#include "core/log.h"
#include "transport/rdma_xprt.h"

static struct log_limit lim_reply;

/* Credits for the answer to x, or false if none is owed (a bug: the Send
 * could find no Receive at the client, RFC 8166 §3.3.1). */
static bool answer_get(struct rdma_ctxt *x, uint32_t *grant)
{
	struct rdma_conn *conn = x->conn;

	if (!rdma_credits_reply_get(&conn->credits)) {
		log_err("rdma: %s: reply for xid 0x%08x without a call owed; not sent",
			conn->rpc.peer_name, x->hdr.xid);
		return false;
	}
	/* One call fewer is owed: the receive pool may have to grow for the
	 * grant to hold (rdma_recv_refill); a failure shows on the next Receive. */
	if (conn->state != RDMA_CONN_CLOSING)
		(void)rdma_recv_refill(conn);
	*grant = rdma_credits_grant(&conn->credits, x->hdr.credits);
	stats_set(&conn->stats.credits, *grant);
	return true;
}

void rdma_send_error(struct rdma_ctxt *x, enum rdma_status st)
{
	struct rdma_conn *conn = x->conn;
	uint32_t grant;
	size_t len;

	if (conn->state == RDMA_CONN_CLOSING || !answer_get(x, &grant)) {
		rdma_ctxt_release(x);
		return;
	}
	if (st == RDMA_ST_GARBAGE_ARGS)
		len = rdma_hdr_encode_garbage_args(x->send_buf, RDMA_HDR_BUF, &x->hdr, grant);
	else
		len = rdma_hdr_encode_error(x->send_buf, RDMA_HDR_BUF, &x->hdr, grant, st, &conn->lim);
	x->send_len = (uint32_t)len;
	stats_add(st == RDMA_ST_GARBAGE_ARGS ? &conn->stats.base.garbage_args :
		  st == RDMA_ST_ERR_VERS ? &conn->stats.err_vers : &conn->stats.err_chunk, 1);
	x->wplan.nwrs = x->wplan.nsges = 0;
	x->send_inv = false; /* as knfsd: no remote invalidation on errors */
	x->sq_need = 1;
	rdma_queue_send(x);
}

/* Every piece RDMA moves must lie in memory registered for this connection. */
static bool registered(const struct rdma_conn *conn, const struct rdma_sge *g, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (g[i].addr != rdma_zero_pad && !rdma_lkey_for(conn, g[i].addr, g[i].len))
			return false;
	return true;
}

/* Plan the RDMA Writes of the DDP items that go in Write chunks, and of the
 * whole reduced reply for RDMA_NOMSG. NULL, or why not. */
static const char *plan_writes(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	const struct rpc_call *c = &x->call;
	const struct rdma_reply_plan *p = &x->plan;

	x->wplan.nwrs = x->wplan.nsges = 0;
	for (unsigned i = 0; i < c->n_ddp_out; i++) {
		if (p->item_chunk[i] < 0)
			continue;
		struct rdma_sge src = { c->ddp_out[i].data, c->ddp_out[i].len };
		if (!registered(conn, &src, 1))
			return "DDP data outside registered memory";
		if (rdma_pcl_plan_write(&x->hdr, &x->hdr.writes[p->item_chunk[i]], &src, 1,
					conn->max_send_sge, &x->wplan))
			return "Write chunk plan does not fit";
	}
	if (p->kind == RDMA_REPLY_NOMSG) {
		if (!registered(conn, p->body, p->nbody))
			return "reply outside registered memory";
		if (rdma_pcl_plan_write(&x->hdr, &x->hdr.reply, p->body, p->nbody, conn->max_send_sge,
					&x->wplan))
			return "Reply chunk plan does not fit";
	}
	return NULL;
}

static void reply_err_chunk(struct rdma_ctxt *x, const char *why)
{
	log_limited(&lim_reply, LOG_NOTICE, "rdma: %s: xid 0x%08x: %s -> ERR_CHUNK",
		    x->conn->rpc.peer_name, x->hdr.xid, why);
	rdma_send_error(x, RDMA_ST_ERR_CHUNK);
}

void rdma_send_reply(struct rpc_call *c)
{
	struct rdma_ctxt *x = c->priv;
	struct rdma_conn *conn = x->conn;
	uint32_t grant;

	if (conn->state == RDMA_CONN_CLOSING) {
		rdma_ctxt_release(x);
		rdma_conn_check_idle(conn);
		return;
	}
	if (c->drop) {
		/* RFC 8166 §4.5.3: a reply that does not fit what the requester
		 * provided is answered with ERR_CHUNK, not silence. */
		if (c->res.overflow) {
			reply_err_chunk(x, "reply does not fit the buffers the chunks allow");
			return;
		}
		rdma_credits_call_drop(&conn->credits);
		rdma_ctxt_release(x);
		return;
	}
	const struct rdma_inline *inl = rdma_conn_inline(conn, x->hdr.vers);
	enum rdma_reply_kind kind = rdma_pcl_plan_reply(&x->hdr, x->rule.write_chunks, c->res.base,
							xdr_enc_len(&c->res), c->ddp_out, c->n_ddp_out,
							inl->reply_max, &x->plan);
	if (kind == RDMA_REPLY_ERR_CHUNK) {
		reply_err_chunk(x, x->plan.reason);
		return;
	}
	const char *why = plan_writes(x);
	if (why) {
		reply_err_chunk(x, why);
		return;
	}
	if (!answer_get(x, &grant)) {
		rdma_ctxt_release(x);
		return;
	}
	size_t hlen = rdma_hdr_encode_reply(x->send_buf, RDMA_HDR_BUF, &x->hdr, grant,
					    x->plan.write_used, kind == RDMA_REPLY_NOMSG,
					    x->plan.reply_used);
	x->send_len = (uint32_t)hlen;
	if (kind == RDMA_REPLY_INLINE) {
		/* <= reply_max bytes: one copy into the registered send buffer
		 * keeps the Send to one SGE; bulk data left by RDMA Write. */
		for (unsigned i = 0; i < x->plan.nbody; i++) {
			memcpy(x->send_buf + x->send_len, x->plan.body[i].addr, x->plan.body[i].len);
			x->send_len += x->plan.body[i].len;
		}
	}
	/* RFC 8797 §4.1: Send With Invalidate only when both sides set R, and
	 * only an R_key of this XID (rdma_pcl_inv_rkey: the first it carried). */
	x->send_inv = inl->send_inv && rdma_pcl_inv_rkey(&x->hdr, &x->inv_rkey);
	x->sq_need = x->wplan.nwrs + 1;
	rdma_queue_send(x);
}

void rdma_send_done(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;

	rdma_ctxt_release(x);
	rdma_conn_check_idle(conn);
}
