/*
 * rdma_backchannel.c - reverse-direction RPC over RPC-over-RDMA (RFC 8167):
 * the server sends calls to the client on the client's own queue pair (the
 * NFSv4.1 backchannel) and matches the client's replies.
 *
 *  - Sending (xprt_ops.send_call): a call goes inline only, as RDMA_MSG
 *    Version One with empty chunk lists (RFC 8167 §4; chunks, which it allows,
 *    are not used here, so the client need not register
 *    anything for them), from one of RDMA_BC_SLOTS send buffers registered
 *    at the first call (never per call). A call larger than the client's
 *    receive size (its inline threshold, RFC 8797) is refused.
 *  - Credits (RFC 8167 §4, reverse-direction credits): the client grants reverse-direction credits in
 *    the rdma_credit field of its reverse-direction replies; the rpc_clnt
 *    attached to the connection keeps at most that many calls outstanding
 *    (one until the first grant), never more than RDMA_BC_SLOTS.
 *  - Receiving (RFC 8167 §4): forward and reverse messages share the
 *    Receives; a reply is recognised by the RPC msg_type (REPLY) in an
 *    RDMA_MSG's payload. The Receives the server keeps posted beyond its
 *    grant (RDMA_CREDITS_SPARE) absorb the replies, so sending a call
 *    never needs a Receive posted for it first.
 *
 * Everything runs on the loop thread.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc_clnt.h"
#include "transport/rdma_xprt.h"

struct rdma_bc_slot {
	struct rdma_wr_tag tag; /* kind RDMA_WR_BC_SEND; ctxt NULL */
	uint8_t *buf;
	bool busy;              /* Send posted, not completed */
};

struct rdma_bc {
	uint8_t *mem;
	struct ibv_mr *mr;
	uint32_t slot_size;
	struct rdma_bc_slot slots[RDMA_BC_SLOTS];
};

static struct log_limit lim_bc;

/* The send buffers, registered once per connection at its first call. */
static struct rdma_bc *rdma_bc_get(struct rdma_conn *conn)
{
	if (conn->bc)
		return conn->bc;
	struct rdma_bc *bc = calloc(1, sizeof(*bc));
	uint32_t size = rdma_conn_inline(conn, RDMA_VERS_1)->reply_max;

	if (!bc || posix_memalign((void **)&bc->mem, 64, (size_t)size * RDMA_BC_SLOTS)) {
		free(bc);
		return NULL;
	}
	bc->mr = ibv_reg_mr(conn->dev->pd, bc->mem, (size_t)size * RDMA_BC_SLOTS, IBV_ACCESS_LOCAL_WRITE);
	if (!bc->mr) {
		free(bc->mem);
		free(bc);
		return NULL;
	}
	bc->slot_size = size;
	for (unsigned i = 0; i < RDMA_BC_SLOTS; i++) {
		bc->slots[i].tag.kind = RDMA_WR_BC_SEND;
		bc->slots[i].buf = bc->mem + (size_t)i * size;
	}
	conn->bc = bc;
	return bc;
}

void rdma_bc_free(struct rdma_conn *conn)
{
	struct rdma_bc *bc = conn->bc;

	if (!bc)
		return;
	ibv_dereg_mr(bc->mr);
	free(bc->mem);
	free(bc);
	conn->bc = NULL;
}

/* RFC 8166 §4.2 (RFC 8167 §4: the same header in reverse): xid, version 1, credits, RDMA_MSG, three empty lists. */
static size_t rdma_bc_encode_hdr(uint8_t *out, uint32_t xid)
{
	/* rdma_xid is the RPC message's XID (RFC 8166 §4.5.2); we would use up
	 * to RDMA_BC_SLOTS reverse credits; no Read list, no Write list, no
	 * Reply chunk: the reply comes inline. */
	const uint32_t w[7] = {htonl(xid), htonl(RDMA_VERS_1), htonl(RDMA_BC_SLOTS), htonl(RDMA_MSG), 0, 0, 0};

	memcpy(out, w, sizeof(w));
	return sizeof(w);
}

static int rdma_bc_post(struct rdma_conn *conn, struct rdma_bc_slot *s, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = len, .lkey = conn->bc->mr->lkey};
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)&s->tag,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	int err = ibv_post_send(conn->qp, &wr, &bad);
	if (err) {
		log_limited(&lim_bc, LOG_WARNING, "rdma: %s: posting a reverse-direction call: %s",
			    conn->rpc.peer_name, strerror(err));
		return -1;
	}
	s->busy = true;
	conn->sq_free--;
	conn->wrs_outstanding++;
	return 0;
}

int rdma_send_call(struct rpc_conn *rc, const uint8_t *msg, size_t len)
{
	struct rdma_conn *conn = container_of(rc, struct rdma_conn, rpc);
	uint32_t xid, mtype;

	if (conn->state != RDMA_CONN_CONNECTED || conn->sq_free == 0 ||
	    !rpc_msg_peek(msg, len, &xid, &mtype) || mtype != RPC_MSG_CALL)
		return -1;
	struct rdma_bc *bc = rdma_bc_get(conn);
	if (!bc)
		return -1;
	if (RDMA_HDR_V1_MIN + len > bc->slot_size) {
		log_limited(&lim_bc, LOG_NOTICE,
			    "rdma: %s: reverse-direction call of %zu bytes exceeds the client's inline size %u",
			    conn->rpc.peer_name, len, bc->slot_size);
		return -1;
	}
	struct rdma_bc_slot *s = NULL;
	for (unsigned i = 0; i < RDMA_BC_SLOTS && !s; i++)
		if (!bc->slots[i].busy)
			s = &bc->slots[i];
	if (!s)
		return -1; /* every buffer still in a Send: the retransmission tries again */
	size_t h = rdma_bc_encode_hdr(s->buf, xid);
	memcpy(s->buf + h, msg, len);
	if (rdma_bc_post(conn, s, (uint32_t)(h + len)))
		return -1;
	return 0;
}

void rdma_bc_send_done(struct rdma_conn *conn, const struct rdma_wr_tag *tag)
{
	struct rdma_bc_slot *s = container_of(tag, struct rdma_bc_slot, tag);

	s->busy = false;
	conn->sq_free++;
}

bool rdma_bc_reply(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	struct rpc_clnt *cl = conn->rpc.clnt;
	const struct rdma_hdr *h = &x->hdr;
	uint32_t xid, mtype;

	/* RFC 8167 §4: a reverse-direction reply is an RDMA_MSG whose RPC
	 * message is a REPLY; ours asked for no chunks, so it comes inline. */
	if (!cl || h->vers != RDMA_VERS_1 || h->proc != RDMA_MSG || !h->payload || h->nreads ||
	    h->nwrites || h->has_reply || !rpc_msg_peek(h->payload, h->payload_len, &xid, &mtype) ||
	    mtype != RPC_MSG_REPLY || xid != h->xid)
		return false;
	/* RFC 8167 §4: the client's reverse-direction grant (0 read as 1). */
	uint32_t grant = h->credits ? h->credits : 1;
	rpc_clnt_set_window(cl, grant < RDMA_BC_SLOTS ? grant : RDMA_BC_SLOTS);
	rpc_clnt_reply(cl, h->payload, h->payload_len);
	/* Nothing is owed for it; its Receive buffer goes back. */
	rdma_credits_call_drop(&conn->credits);
	rdma_ctxt_release(x);
	return true;
}
