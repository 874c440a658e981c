/*
 * rdma_rw.c - posting work requests and reaping their completions for the
 * RPC-over-RDMA transport.
 *
 *  - Receives: FREE contexts from the pool, posted by rdma_recv_refill() as
 *    soon as one completes, up to the ramped grant's target + spare
 *    (rdma_credits_recvs_wanted).
 *  - RDMA Reads: queued per context, posted at most `ord` at a time per
 *    connection (the initiator depth agreed at accept) and within the send
 *    queue budget; each Read is signaled.
 *  - Replies: a chain of unsignaled RDMA Writes followed by one signaled
 *    Send (or Send With Invalidate). The Send's completion retires the whole
 *    chain (RC completes work requests in order), so the chain's send queue
 *    slots come back together.
 *  - Completions: both CQs drained on every completion-channel event. Flush
 *    completions (IBV_WC_WR_FLUSH_ERR) after a disconnect are expected and
 *    only release what the work request held; any other error status closes
 *    the connection (RFC 8166 §4.5.3: RDMA operational errors are fatal to it).
 */
#include <errno.h>
#include <string.h>

#include "core/log.h"
#include "transport/rdma_xprt.h"

static struct log_limit lim_wc;

uint32_t rdma_lkey_for(const struct rdma_conn *conn, const uint8_t *addr, uint32_t len)
{
	for (unsigned i = 0; i < conn->nsmall; i++) {
		const struct rdma_small_chunk *c = &conn->small[i];
		if (addr >= c->mem && addr + len <= c->mem + c->size)
			return c->mr->lkey;
	}
	return conn->pool ? rdma_pool_lkey_for(conn->pool, addr, len) : 0;
}

int rdma_post_recv(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	struct ibv_sge sge = {
		.addr = (uintptr_t)x->recv_buf,
		.length = conn->inline_size,
		.lkey = x->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uintptr_t)&x->recv_tag,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	int err = ibv_post_recv(conn->qp, &wr, &bad);
	if (err) {
		log_warn("rdma: %s: ibv_post_recv: %s", conn->rpc.peer_name, strerror(err));
		return -1;
	}
	rdma_ctxt_set_state(x, CTXT_POSTED);
	conn->wrs_outstanding++;
	rdma_credits_recv_posted(&conn->credits, 1);
	return 0;
}

void rdma_ctxt_free_push(struct rdma_ctxt *x)
{
	queue_push_front(&x->conn->free_ctxts, &x->link);
}

/* RFC 8166 §3.3.1: keep the ramp's target + spare Receives posted, from the
 * pool. When the free contexts run out, the pool grows by a chunk
 * (rdma_conn_grow) once Receives posted plus calls owed (what bounds the
 * grant) fall below target + spare / 2 (rdma_credits_short), so the grant
 * does not sag and follows the ramp; a connection reaches 2 x credits +
 * spare contexts only if it really holds credits calls. */
int rdma_recv_refill(struct rdma_conn *conn)
{
	uint32_t n = rdma_credits_recvs_wanted(&conn->credits);
	struct rdma_ctxt *x;

	while (n) {
		x = queue_pop_entry(&conn->free_ctxts, struct rdma_ctxt, link);
		if (!x) {
			if (!rdma_credits_short(&conn->credits) || rdma_conn_grow(conn))
				return 0; /* enough, at the pool's size, or registration failed */
			continue;
		}
		if (rdma_post_recv(x)) {
			rdma_ctxt_free_push(x);
			return -1;
		}
		n--;
	}
	return 0;
}

void rdma_queue_reads(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;

	rdma_ctxt_set_state(x, CTXT_READING);
	queue_push(&conn->read_wait, &x->link);
	rdma_sq_pump(conn);
}

void rdma_queue_send(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;

	rdma_ctxt_set_state(x, CTXT_WAIT_SQ);
	queue_push(&conn->sq_wait, &x->link);
	rdma_sq_pump(conn);
}

static int post_one_read(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	const struct rdma_read_wr *r = &x->rwrs[x->rposted];
	struct ibv_sge sge = {
		.addr = (uintptr_t)(x->read_area + r->dest_off),
		.length = r->len,
		.lkey = rdma_pool_lkey(conn->pool, x->slots[0]), /* read_area */
	};
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)&x->read_tag,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = r->raddr, .rkey = r->rkey },
	}, *bad;

	int err = ibv_post_send(conn->qp, &wr, &bad);
	if (err) {
		log_warn("rdma: %s: posting RDMA Read: %s", conn->rpc.peer_name, strerror(err));
		return -1;
	}
	x->rposted++;
	conn->reads_inflight++;
	conn->sq_free--;
	conn->wrs_outstanding++;
	return 0;
}

/* Build the Write chain of x's write plan plus its Send, and post it. */
static int post_chain(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	const struct rdma_write_plan *wp = &x->wplan;
	unsigned w, s = 0;

	for (w = 0; w < wp->nwrs; w++) {
		const struct rdma_write_wr *pw = &wp->wrs[w];
		struct ibv_send_wr *wr = &conn->swr[w];

		for (unsigned i = 0; i < pw->nsge; i++) {
			const struct rdma_sge *g = &wp->sges[pw->first_sge + i];
			const uint8_t *addr = g->addr == rdma_zero_pad ? conn->zero_pad : g->addr;
			conn->ssge[s + i] = (struct ibv_sge){
				.addr = (uintptr_t)addr,
				.length = g->len,
				.lkey = rdma_lkey_for(conn, addr, g->len), /* checked by sendto */
			};
		}
		*wr = (struct ibv_send_wr){
			.wr_id = 0,
			.sg_list = &conn->ssge[s],
			.num_sge = pw->nsge,
			.opcode = IBV_WR_RDMA_WRITE,
			.wr.rdma = { .remote_addr = pw->raddr, .rkey = pw->rkey },
			.next = &conn->swr[w + 1],
		};
		s += pw->nsge;
	}
	conn->ssge[s] = (struct ibv_sge){
		.addr = (uintptr_t)x->send_buf,
		.length = x->send_len,
		.lkey = x->send_lkey,
	};
	conn->swr[w] = (struct ibv_send_wr){
		.wr_id = (uintptr_t)&x->send_tag,
		.sg_list = &conn->ssge[s],
		.num_sge = 1,
		.opcode = x->send_inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	if (x->send_inv)
		conn->swr[w].invalidate_rkey = x->inv_rkey;

	struct ibv_send_wr *bad;
	int err = ibv_post_send(conn->qp, &conn->swr[0], &bad);
	if (err) {
		log_warn("rdma: %s: posting reply: %s", conn->rpc.peer_name, strerror(err));
		return -1;
	}
	rdma_ctxt_set_state(x, CTXT_SENDING);
	stats_add(&conn->stats.base.tx_bytes, x->send_len);
	if (wp->nwrs) {
		uint64_t bytes = 0;
		for (unsigned i = 0; i < wp->nwrs; i++)
			bytes += wp->wrs[i].len;
		stats_add(&conn->stats.rdma_writes, wp->nwrs);
		stats_add(&conn->stats.rdma_write_bytes, bytes);
		stats_add(&conn->stats.base.tx_bytes, bytes);
	}
	if (x->send_inv)
		stats_add(&conn->stats.send_inv, 1);
	conn->sq_free -= x->sq_need;
	conn->wrs_outstanding++;
	return 0;
}

static bool pump_replies(struct rdma_conn *conn)
{
	struct rdma_ctxt *x;

	while ((x = queue_peek_entry(&conn->sq_wait, struct rdma_ctxt, link)) &&
	       conn->sq_free >= x->sq_need) {
		queue_pop(&conn->sq_wait);
		if (post_chain(x)) {
			rdma_ctxt_release(x);
			return false;
		}
	}
	return true;
}

static bool pump_reads(struct rdma_conn *conn)
{
	struct rdma_ctxt *x;

	while ((x = queue_peek_entry(&conn->read_wait, struct rdma_ctxt, link))) {

		while (x->rposted < x->nrwrs && conn->reads_inflight < conn->ord && conn->sq_free > 0)
			if (post_one_read(x))
				return false;
		if (x->rposted < x->nrwrs)
			return true; /* out of window or send queue room */
		queue_pop(&conn->read_wait);
	}
	return true;
}

void rdma_sq_pump(struct rdma_conn *conn)
{
	if (conn->state == RDMA_CONN_CLOSING)
		return;
	/* Replies first: they free contexts and bulk slots. */
	if (!pump_replies(conn) || !pump_reads(conn))
		rdma_conn_close(conn, "cannot post work requests");
}

/* Completion of one of x's RDMA Reads. */
static void read_done(struct rdma_ctxt *x, const struct ibv_wc *wc)
{
	struct rdma_conn *conn = x->conn;

	conn->reads_inflight--;
	conn->sq_free++;
	x->rdone++;
	if (wc->status != IBV_WC_SUCCESS) {
		x->rfailed = true;
		rdma_conn_close(conn, "RDMA Read failed");
	}
	if (conn->state == RDMA_CONN_CLOSING) {
		/* conn_close() emptied the read queue; wait for the Reads
		 * already posted, then drop the call. */
		if (x->rdone == x->rposted) {
			rdma_credits_call_drop(&conn->credits);
			rdma_ctxt_release(x);
		}
		return;
	}
	stats_add(&conn->stats.rdma_reads, 1);
	stats_add(&conn->stats.rdma_read_bytes, x->rwrs[x->rdone - 1].len); /* in order */
	stats_add(&conn->stats.base.rx_bytes, x->rwrs[x->rdone - 1].len);
	if (x->rdone == x->nrwrs)
		rdma_read_chunks_done(x);
}

static void wc_status_log(struct rdma_conn *conn, const struct ibv_wc *wc, const char *what)
{
	log_limited(&lim_wc, LOG_WARNING, "rdma: %s: %s completion: %s (vendor err 0x%x)",
		    conn->rpc.peer_name, what, ibv_wc_status_str(wc->status), wc->vendor_err);
}

static void handle_wc(struct rdma_conn *conn, const struct ibv_wc *wc)
{
	const struct rdma_wr_tag *tag = (const struct rdma_wr_tag *)(uintptr_t)wc->wr_id;
	bool flush = wc->status == IBV_WC_WR_FLUSH_ERR;

	if (!tag)
		return; /* an unsignaled Write, flushed: its chain's Send accounts for it */
	struct rdma_ctxt *x = tag->ctxt;
	conn->wrs_outstanding--;
	if (wc->status != IBV_WC_SUCCESS && !flush) {
		wc_status_log(conn, wc, tag->kind == RDMA_WR_RECV ? "Receive" :
			      tag->kind == RDMA_WR_READ ? "RDMA Read" : "Send");
		rdma_conn_close(conn, "work request failed");
	}

	switch (tag->kind) {
	case RDMA_WR_RECV:
		if (wc->status != IBV_WC_SUCCESS || conn->state == RDMA_CONN_CLOSING) {
			rdma_credits_recv_flushed(&conn->credits);
			rdma_ctxt_set_state(x, CTXT_FREE);
			rdma_ctxt_free_push(x);
			return;
		}
		rdma_recv_done(x, wc->byte_len);
		return;
	case RDMA_WR_READ:
		read_done(x, wc);
		return;
	case RDMA_WR_SEND:
		conn->sq_free += x->sq_need;
		rdma_send_done(x);
		return;
	case RDMA_WR_BC_SEND:
		rdma_bc_send_done(conn, tag);
		return;
	}
}

void rdma_cq_drain(struct rdma_conn *conn)
{
	struct ibv_wc wc[16];
	bool more = true;

	while (more) {
		more = false;
		/* Send side first: it returns send queue room and contexts. */
		int n = ibv_poll_cq(conn->scq, 16, wc);
		for (int i = 0; i < n; i++)
			handle_wc(conn, &wc[i]);
		more |= n > 0;
		n = ibv_poll_cq(conn->rcq, 16, wc);
		for (int i = 0; i < n; i++)
			handle_wc(conn, &wc[i]);
		more |= n > 0;
	}
	rdma_sq_pump(conn);
}
