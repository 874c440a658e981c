/*
 * rdma_recvfrom.c - from a Receive completion to rpc_call_receive().
 *
 *   rdma_recv_done()        decode the transport header and the chunk lists
 *     -> bad: drop, or answer RDMA_ERROR / GARBAGE_ARGS (rdma_send_error)
 *     -> ctxt_proceed()     take the bulk slots the call needs (or wait)
 *     -> RDMA Reads         RDMA_NOMSG: the position-zero chunk first, then
 *                           the data chunks the ULB lets the call use
 *     -> rdma_deliver()     fill struct rpc_call, rpc_call_receive()
 *
 * The procedure's entry in the RPC layer's operation tables is consulted as
 * soon as the RPC header is visible (inline for RDMA_MSG, after the
 * position-zero Read for RDMA_NOMSG): data Read chunks its RFC 8267 rule
 * rules out are ignored, not read (RFC 8267 §3), and a Reply chunk gets no
 * bulk slot when the table bounds the reply to what the small buffers hold.
 */
#include <string.h>

#include "core/log.h"
#include "transport/rdma_xprt.h"

static struct log_limit lim_bad;

/* RFC 5531 §9: xid, mtype, rpcvers, prog, vers, proc at words 0..5. */
static void peek_proc(struct rdma_ctxt *x, const uint8_t *msg, uint32_t len)
{
	struct xdr_dec d;
	uint32_t w[6];

	x->rule = (struct ulb_rule){ 0 };
	x->max_reply = 0;
	xdr_dec_init(&d, msg, len);
	for (unsigned i = 0; i < 6; i++)
		if (!xdr_dec_u32(&d, &w[i]))
			goto out; /* the RPC layer will say what is wrong */
	const struct rpc_proc *p = rpc_ddp_rule(w[3], w[4], w[5], &x->rule);
	x->max_reply = p ? p->max_reply : 0;
out:
	rdma_pcl_limit_reads(&x->pcl, x->rule.read_chunks);
}

static void handle_bad(struct rdma_ctxt *x, enum rdma_status st, const struct rdma_decode_info *why)
{
	struct rdma_conn *conn = x->conn;

	log_limited(&lim_bad, st == RDMA_ST_DROP ? LOG_INFO : LOG_NOTICE,
		    "rdma: %s: xid 0x%08x vers %u proc %u: %s -> %s", conn->rpc.peer_name,
		    x->hdr.xid, x->hdr.vers, x->hdr.proc, why->reason ? why->reason : "?",
		    rdma_status_name(st));
	if (st == RDMA_ST_DROP) {
		rdma_credits_call_drop(&conn->credits);
		rdma_ctxt_release(x);
		return;
	}
	rdma_send_error(x, st);
}

/* A Reply chunk needs a bulk slot for the reply unless the operation table
 * bounds the reply (DDP data excluded: it has its own buffer) to the small
 * reply buffer. Unknown before the RPC header is seen (RDMA_NOMSG). */
static bool reply_needs_slot(const struct rdma_ctxt *x)
{
	return x->hdr.has_reply && (x->max_reply == 0 || x->max_reply > x->conn->small_room);
}

/* Bulk slots from the header alone (so a call never waits twice, which could
 * deadlock): Read data, a payload for Write chunks, a long reply. */
static unsigned slots_needed(const struct rdma_ctxt *x)
{
	unsigned n = x->pcl.read_end ? 1 : 0;

	for (uint32_t i = 0; i < x->hdr.nwrites; i++) {
		if (x->hdr.writes[i].length) {
			n++;
			break;
		}
	}
	return n + (reply_needs_slot(x) ? 1 : 0);
}

static void rdma_deliver(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	struct rpc_call *c = &x->call;
	unsigned s = x->read_area ? 1 : 0;
	bool have_payload = false;

	c->conn = &conn->rpc;
	c->priv = x;
	if (x->pcl.has_call) {
		c->msg = x->read_area + x->pcl.call.dest_off;
		c->msg_len = x->pcl.call.length;
	} else {
		c->msg = x->hdr.payload;
		c->msg_len = x->hdr.payload_len;
	}
	/* rpc.h: ddp_in positions are XDR positions in the call as sent, i.e.
	 * the unreduced stream (RFC 8166 §3.4.5); rpc_dec_ddp() adds back the
	 * chunks it has consumed. */
	c->n_ddp_in = x->pcl.nreads;
	for (uint32_t k = 0; k < x->pcl.nreads; k++) {
		c->ddp_in[k].position = x->pcl.reads[k].position;
		c->ddp_in[k].len = x->pcl.reads[k].length;
		c->ddp_in[k].data = x->read_area + x->pcl.reads[k].dest_off;
	}
	for (uint32_t i = 0; i < x->hdr.nwrites; i++)
		have_payload |= x->hdr.writes[i].length != 0;
	if (have_payload && s < x->nslots) {
		c->payload_area = rdma_pool_buf(conn->pool, x->slots[s++]);
		c->payload_cap = conn->slot_size;
	} else {
		c->payload_area = x->payload_small;
		c->payload_cap = conn->small_room;
	}
	if (reply_needs_slot(x) && s < x->nslots) {
		c->reply_buf = rdma_pool_buf(conn->pool, x->slots[s++]);
		c->reply_cap = conn->slot_size;
	} else {
		/* Room beyond the inline threshold: a reply that outgrows it is
		 * seen by send_reply() and answered ERR_CHUNK (RFC 8166 §4.5.3). */
		c->reply_buf = x->reply_small;
		c->reply_cap = conn->small_room;
	}
	stats_add(&conn->stats.base.calls, 1);
	if (x->hdr.vers != atomic_load_explicit(&conn->stats.rdma_version, memory_order_relaxed)) {
		const struct rdma_inline *inl = rdma_conn_inline(conn, x->hdr.vers);
		stats_set(&conn->stats.rdma_version, x->hdr.vers);
		stats_set(&conn->stats.inline_recv, inl->call_max);
		stats_set(&conn->stats.inline_send, inl->reply_max);
	}
	rdma_ctxt_set_state(x, CTXT_IN_RPC);
	/* May call send_reply() before returning: x is not touched after this. */
	rpc_call_receive(c);
}

static void start_reads(struct rdma_ctxt *x, bool call_chunk)
{
	struct rdma_conn *conn = x->conn;

	x->read_call_phase = call_chunk;
	x->rposted = x->rdone = 0;
	x->rfailed = false;
	if (rdma_pcl_plan_reads(&x->pcl, call_chunk, !call_chunk, conn->max_wr_bytes, x->rwrs,
				RDMA_MAX_READ_WRS, &x->nrwrs)) {
		struct rdma_decode_info why = { "read chunks need too many work requests" };
		handle_bad(x, RDMA_ST_ERR_CHUNK, &why);
		return;
	}
	if (x->nrwrs == 0) {
		rdma_read_chunks_done(x);
		return;
	}
	if (conn->ord == 0) {
		/* The client allowed no RDMA Reads at accept (responder_resources 0). */
		struct rdma_decode_info why = { "read chunks, but the client allows no RDMA Read" };
		handle_bad(x, RDMA_ST_ERR_CHUNK, &why);
		return;
	}
	rdma_queue_reads(x);
}

/* The Reads of one phase finished (or there were none). */
void rdma_read_chunks_done(struct rdma_ctxt *x)
{
	if (x->read_call_phase) {
		struct rdma_decode_info why = { 0 };
		const uint8_t *msg = x->read_area + x->pcl.call.dest_off;
		enum rdma_status st = rdma_hdr_check_rpc(&x->hdr, msg, x->pcl.call.length, &why);

		if (st != RDMA_ST_OK) {
			handle_bad(x, st, &why);
			return;
		}
		peek_proc(x, msg, x->pcl.call.length);
		start_reads(x, false);
		return;
	}
	rdma_deliver(x);
}

/* Slots are held: pull what must be pulled, or deliver. */
static void ctxt_go(struct rdma_ctxt *x)
{
	if (x->pcl.has_call)
		start_reads(x, true);
	else if (x->pcl.nreads)
		start_reads(x, false);
	else
		rdma_deliver(x);
}

/* The slots are in x->slots: where the Read data goes, then on. */
static void ctxt_slots_held(struct rdma_ctxt *x, unsigned need)
{
	x->nslots = need;
	x->read_area = x->pcl.read_end ? rdma_pool_buf(x->conn->pool, x->slots[0]) : NULL;
	ctxt_go(x);
}

static void too_many_slots(struct rdma_ctxt *x)
{
	struct rdma_decode_info why = { "call needs more bulk buffers than exist" };
	handle_bad(x, RDMA_ST_ERR_CHUNK, &why);
}

/* rdma_pool's callback: a waiting call got its slots (or never will). */
static void ctxt_pool_granted(struct rdma_pool_waiter *w, bool ok)
{
	struct rdma_ctxt *x = container_of(w, struct rdma_ctxt, pwait);

	rdma_dev_pool_publish(x->conn->dev);
	if (!ok) {
		too_many_slots(x);
		return;
	}
	ctxt_slots_held(x, w->need);
}

/* Take the bulk slots the call needs from the device's pool, or wait for
 * them in its FIFO (rdma_pool.h): never failed for lack of buffers. */
static void ctxt_proceed(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	unsigned need = slots_needed(x);

	if (!need) {
		ctxt_go(x);
		return;
	}
	switch (rdma_pool_get(conn->pool, &conn->pool_user, need, x->slots)) {
	case RDMA_POOL_OK:
		rdma_dev_pool_publish(conn->dev);
		ctxt_slots_held(x, need);
		return;
	case RDMA_POOL_NEVER:
		too_many_slots(x);
		return;
	case RDMA_POOL_WAIT:
		break;
	}
	rdma_ctxt_set_state(x, CTXT_WAIT_BULK);
	x->pwait = (struct rdma_pool_waiter){
		.user = &conn->pool_user, .need = need, .out = x->slots, .granted = ctxt_pool_granted,
	};
	rdma_pool_wait(conn->pool, &x->pwait);
	rdma_dev_pool_publish(conn->dev);
}

void rdma_recv_done(struct rdma_ctxt *x, uint32_t byte_len)
{
	struct rdma_conn *conn = x->conn;

	rdma_credits_recv_done(&conn->credits);
	/* RFC 8166 §3.3.1: this buffer now holds the call until its reply is
	 * sent; a fresh one from the pool takes its place at once, so the
	 * grant does not sag while replies are in flight. */
	if (rdma_recv_refill(conn)) {
		rdma_conn_close(conn, "cannot post a Receive");
		rdma_credits_call_drop(&conn->credits);
		rdma_ctxt_release(x);
		return;
	}
	if (conn->x->draining) {
		/* The transport is draining (rdma_transport.c): no new call is
		 * taken; the client retransmits it after reconnecting. */
		rdma_credits_call_drop(&conn->credits);
		rdma_ctxt_release(x);
		rdma_conn_check_idle(conn);
		return;
	}
	x->recv_len = byte_len;
	stats_add(&conn->stats.base.rx_bytes, byte_len);
	/* The call's send and small reply buffers; without them it waits for
	 * a call in progress to give its set back (rdma_ctxt_release). */
	if (rdma_cbuf_attach(x))
		rdma_recv_proceed(x);
}

void rdma_recv_proceed(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	struct rdma_decode_info why = { 0 };
	enum rdma_status st;
	uint32_t byte_len = x->recv_len;

	x->nslots = 0;
	x->read_area = NULL;
	x->rule = (struct ulb_rule){ 0 };
	x->max_reply = 0;
	/* The header was decoded from what arrived; keep it in CTXT_WAIT_BULK
	 * etc. (it is the state any later answer needs). */
	st = rdma_hdr_decode(x->recv_buf, byte_len, &conn->lim, &x->hdr, &why);
	/* RFC 8167 §4: a reply to one of our reverse-direction calls. */
	if (st == RDMA_ST_DROP && rdma_bc_reply(x))
		return;
	if (st == RDMA_ST_OK)
		st = rdma_pcl_build(&x->pcl, &x->hdr, &conn->lim, &why);
	if (st != RDMA_ST_OK) {
		handle_bad(x, st, &why);
		return;
	}
	if (!x->pcl.has_call)
		peek_proc(x, x->hdr.payload, x->hdr.payload_len);
	ctxt_proceed(x);
}
