/*
 * rdma_conn.c - one RPC-over-RDMA connection of a transport instance
 * (rdma_transport.c): accepting it, its context state machine and bulk
 * slots, the one close path, and teardown. See rdma_xprt.h for the map of
 * the verbs shell, ownership and the state diagrams.
 *
 * Accepting a connection, in order (unwound in reverse by rdma_conn_free()):
 *   private data (RFC 8797) -> device/PD (and its bulk pool) -> completion
 *   channel + CQs -> QP -> the first chunk of receive contexts and their
 *   registered buffers -> loop event -> Receives posted -> rdma_accept(our
 *   private data, initiator depth).
 *
 * The receive pool grows with the load (rdma_conn_grow, from
 * rdma_recv_refill): the ramp's first target + spare contexts at accept
 * (all posted; rdma_credits.h, [rdma] initial-credits), then
 * RDMA_CTXT_GROW more when calls hold every free one and the Receives
 * posted plus the calls owed fall below target + spare / 2 (the ramp raised
 * the target, or calls hold the buffers), up to
 * rdma_credits_pool_size(credits) = 2 x credits + spare. A registration
 * happens at most credits / RDMA_CTXT_GROW + 1 times in a connection's
 * life, never per call; nothing is given back before the connection closes.
 *
 * Closing: rdma_conn_close() is the only path. It disconnects and moves the
 * QP to the error state so every posted work request completes (flushed),
 * drops contexts that hold none, tells the upper layers (rpc_conn_closed:
 * close hooks), and once no context is busy (calls still with workers hold
 * theirs until send_reply()) and no work request is outstanding, the
 * connection goes on its transport's reap list; a zero-delay loop timer tears
 * it down outside any of its own callbacks. The memory of struct rdma_conn
 * goes with the last reference to its rpc_conn (upper layers may hold some).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/log.h"
#include "core/loop.h"
#include "transport/rdma_xprt.h"

/* Connect and close lines: a client reconnecting in a loop must not flood the log. */
static struct log_limit lim_conn_event;
static struct log_limit lim_accept;

/* knfsd's initiator depth cap (svc_rdma: min(16, device max)). */
#define RDMA_MAX_ORD 16
/* Send queue entries at most: drivers round a queue up to a power of two
 * slots (one kept empty), so 255 is 256 slots where 256 would be 512. */
#define RDMA_SQ_DEPTH_MAX 255
/* SGEs per send work request at most (rdma_pcl_plan_write splits beyond). */
#define RDMA_SEND_SGE_MAX 4
/* Receive contexts registered at a time once the first chunk (credits +
 * spare: the Receives posted from the start) is held by calls. */
#define RDMA_CTXT_GROW 16

/* ---- contexts and slots ---- */

/* The mapping that holds the receive pool's contexts. */
static size_t ctxts_bytes(const struct rdma_conn *conn)
{
	return (size_t)conn->nctxts * sizeof(*conn->ctxts);
}

static bool ctxt_busy_state(enum rdma_ctxt_state st)
{
	return st != CTXT_FREE && st != CTXT_POSTED;
}

#ifndef NDEBUG
static bool ctxt_transition_ok(enum rdma_ctxt_state from, enum rdma_ctxt_state to)
{
	switch (to) {
	case CTXT_FREE:
		return true; /* release or flush, from anywhere */
	case CTXT_POSTED:
		return from == CTXT_FREE;
	case CTXT_WAIT_CBUF:
		return from == CTXT_POSTED;
	case CTXT_WAIT_BULK:
		return from == CTXT_POSTED || from == CTXT_WAIT_CBUF;
	case CTXT_READING:
		return from == CTXT_POSTED || from == CTXT_WAIT_CBUF || from == CTXT_WAIT_BULK ||
		       from == CTXT_READING;
	case CTXT_IN_RPC:
		return from == CTXT_POSTED || from == CTXT_WAIT_CBUF || from == CTXT_WAIT_BULK ||
		       from == CTXT_READING;
	case CTXT_WAIT_SQ:
		return from != CTXT_FREE && from != CTXT_SENDING && from != CTXT_WAIT_SQ;
	case CTXT_SENDING:
		return from == CTXT_WAIT_SQ;
	}
	return false;
}
#endif

void rdma_ctxt_set_state(struct rdma_ctxt *x, enum rdma_ctxt_state st)
{
	struct rdma_conn *conn = x->conn;

#ifndef NDEBUG
	if (!ctxt_transition_ok(x->state, st)) {
		log_err("rdma: context %u: bad transition %d -> %d", x->index, x->state, st);
		abort();
	}
#endif
	conn->busy += ctxt_busy_state(st) - ctxt_busy_state(x->state);
	x->state = st;
}

/* x's call buffers go back; the first context waiting for a set (if the
 * connection still serves) gets it. Returns that context, or NULL. */
static struct rdma_ctxt *cbuf_detach(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	struct rdma_cbuf *cb = x->cb;
	struct rdma_ctxt *w;

	if (!cb)
		return NULL;
	x->cb = NULL;
	x->send_buf = x->reply_small = x->payload_small = NULL;
	conn->cbufs_busy--;
	queue_push_front(&conn->cbuf_free, &cb->link);
	if (conn->state == RDMA_CONN_CLOSING ||
	    !(w = queue_pop_entry(&conn->cbuf_wait, struct rdma_ctxt, link)))
		return NULL;
	return rdma_cbuf_attach(w) ? w : NULL;
}

void rdma_ctxt_release(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	int slots[RDMA_SLOTS_PER_CALL];
	unsigned n = x->nslots;
	struct rdma_ctxt *next = cbuf_detach(x);

	memcpy(slots, x->slots, n * sizeof(slots[0]));
	x->nslots = 0;
	x->read_area = NULL;
	rdma_ctxt_set_state(x, CTXT_FREE);
	/* Its receive buffer goes back to the connection's pool. */
	rdma_credits_buf_put(&conn->credits);
	rdma_ctxt_free_push(x);
	if (conn->state != RDMA_CONN_CLOSING && rdma_recv_refill(conn))
		rdma_conn_close(conn, "cannot re-post a Receive");
	if (n) {
		/* Last: waiters (of any connection) may run from here. */
		rdma_pool_put(conn->pool, &conn->pool_user, n, slots);
		rdma_dev_pool_publish(conn->dev);
	}
	if (next)
		rdma_recv_proceed(next); /* the call that waited for x's buffers */
}

const struct rdma_inline *rdma_conn_inline(const struct rdma_conn *conn, uint32_t vers)
{
	return vers == RDMA_VERS_2 ? &conn->inl_v2 : &conn->inl_v1;
}


/* ---- teardown ---- */

/* Free everything of conn that exists (also for a half-built one), then
 * drop the transport's reference. */
void rdma_conn_free(struct rdma_conn *conn)
{
	rdma_stats_conn_unregister(&conn->stats);
	if (conn->cq_ev) {
		loop_ev_del(conn->cq_ev);
		loop_ev_free(conn->cq_ev);
	}
	if (conn->qp)
		rdma_destroy_qp(conn->id);
	if (conn->scq)
		ibv_destroy_cq(conn->scq);
	if (conn->rcq)
		ibv_destroy_cq(conn->rcq);
	if (conn->channel)
		ibv_destroy_comp_channel(conn->channel);
	rdma_bc_free(conn);
	for (unsigned i = 0; i < conn->nsmall; i++) {
		ibv_dereg_mr(conn->small[i].mr);
		free(conn->small[i].mem);
	}
	conn->nsmall = conn->nready = 0;
	free(conn->cbufs);
	conn->cbufs = NULL;
	conn->ncbufs = 0;
	stats_mem_move(&rdma_stats_mem.conn_registered, &conn->pub_small, 0);
	if (conn->ctxts)
		munmap(conn->ctxts, ctxts_bytes(conn));
	if (conn->id)
		rdma_destroy_id(conn->id);
	rdma_dev_put(conn->dev);
	conn->cq_ev = NULL;
	conn->qp = NULL;
	conn->scq = conn->rcq = NULL;
	conn->channel = NULL;
	conn->ctxts = NULL;
	conn->nctxts = 0;
	conn->id = NULL;
	conn->dev = NULL;
	rpc_conn_put(&conn->rpc); /* the transport's reference */
}

void rdma_conn_release(struct rpc_conn *rc)
{
	free(container_of(rc, struct rdma_conn, rpc));
}


void rdma_conn_check_idle(struct rdma_conn *conn)
{
	/* Draining: the last call in flight was answered (its Send completed),
	 * nothing else will be taken: disconnect. */
	if (conn->x->draining && conn->state == RDMA_CONN_CONNECTED && !conn->busy) {
		rdma_conn_close(conn, "drained");
		return; /* rdma_conn_close() checks again */
	}
	if (conn->state != RDMA_CONN_CLOSING || conn->reaping || conn->busy || conn->wrs_outstanding)
		return;
	conn->reaping = true;
	rdma_xprt_reap(conn->x, conn);
}

void rdma_conn_close(struct rdma_conn *conn, const char *why)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

	if (conn->state == RDMA_CONN_CLOSING)
		return;
	log_limited(&lim_conn_event, LOG_INFO, "rdma: %s: closing (%s)", conn->rpc.peer_name, why);
	conn->state = RDMA_CONN_CLOSING;
	rdma_disconnect(conn->id);
	/* Whatever the CM did: every posted work request must now flush. */
	if (conn->qp)
		ibv_modify_qp(conn->qp, &qa, IBV_QP_STATE);

	/* Contexts that hold no work request and are not with the RPC layer. */
	for (unsigned i = 0; i < conn->nready; i++)
		if (conn->ctxts[i].state == CTXT_WAIT_BULK)
			rdma_pool_cancel(conn->pool, &conn->ctxts[i].pwait);
	queue_init(&conn->sq_wait);
	queue_init(&conn->read_wait);
	queue_init(&conn->cbuf_wait);
	for (unsigned i = 0; i < conn->nready; i++) {
		struct rdma_ctxt *x = &conn->ctxts[i];
		bool idle = x->state == CTXT_WAIT_BULK || x->state == CTXT_WAIT_SQ || x->state == CTXT_WAIT_CBUF ||
			    (x->state == CTXT_READING && x->rdone == x->rposted);
		if (idle)
			rdma_ctxt_release(x);
	}
	if (conn->pool) {
		rdma_pool_kick(conn->pool); /* the waiters it held back */
		rdma_dev_pool_publish(conn->dev);
	}
	rpc_conn_closed(&conn->rpc); /* close hooks */
	rdma_conn_check_idle(conn);
}

/* ---- completion channel ---- */

static void cq_event_cb(int fd, short what, void *arg)
{
	struct rdma_conn *conn = arg;
	struct ibv_cq *cq;
	void *cq_ctx;

	(void)fd;
	(void)what;
	while (ibv_get_cq_event(conn->channel, &cq, &cq_ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		if (ibv_req_notify_cq(cq, 0))
			rdma_conn_close(conn, "cannot re-arm a completion queue");
	}
	rdma_cq_drain(conn);
	rdma_conn_check_idle(conn);
}

/* ---- accept ---- */

static void conn_peer(struct rdma_conn *conn)
{
	struct sockaddr *sa = rdma_get_peer_addr(conn->id);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa && sa->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		memcpy(&conn->rpc.peer, in, sizeof(*in));
		conn->rpc.peer_len = sizeof(*in);
	} else if (sa && sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		memcpy(&conn->rpc.peer, in6, sizeof(*in6));
		conn->rpc.peer_len = sizeof(*in6);
	}
	snprintf(conn->rpc.peer_name, sizeof(conn->rpc.peer_name),
		 sa && sa->sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
}

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

static size_t align_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

static int conn_setup_queues(struct rdma_conn *conn, const struct rdma_conn_param *req)
{
	struct ibv_context *verbs = conn->id->verbs;
	const struct ibv_device_attr *da = &conn->dev->attr;
	struct ibv_port_attr pa;

	/* rdma_credits.h: a pool of 2 x credits + spare receive contexts, at
	 * most credits + spare of them posted (the ramp's target + spare now). */
	conn->nctxts = conn->credits.bufs_total;
	conn->nrecv_max = conn->credits.max_grant + RDMA_CREDITS_SPARE;
	/* Room for a full reply chain plus a Send for every call the grant lets
	 * in, the Reads the initiator depth allows and the reverse-direction
	 * calls; more waits for room (sq_wait, read_wait). Every entry is mapped
	 * memory for the life of the connection (the rxe driver's queues), so
	 * not one per context of the receive pool (2 x credits + spare). */
	unsigned ord = min_u(min_u(req->initiator_depth, (unsigned)da->max_qp_init_rd_atom), RDMA_MAX_ORD);
	unsigned want = conn->credits.max_grant + ord + RDMA_BC_SLOTS + RDMA_WRITE_PLAN_MAX_WRS + 1;
	conn->sq_depth = min_u(min_u(want, RDMA_SQ_DEPTH_MAX), (unsigned)da->max_qp_wr);
	if (conn->sq_depth < RDMA_WRITE_PLAN_MAX_WRS + 1 || (unsigned)da->max_qp_wr < conn->nrecv_max) {
		log_err("rdma: device queues too small (max_qp_wr %d)", da->max_qp_wr);
		return -1;
	}
	conn->sq_free = conn->sq_depth;
	/* In a CONNECT_REQUEST the CM reports the requester's values from our
	 * side: initiator_depth is how many RDMA Reads we may have outstanding
	 * (the client's responder_resources), as knfsd's sc_ord. */
	conn->ord = ord;
	/* A reply's Writes gather a few pieces (header, payload, padding), and
	 * every send queue entry is sized for the most SGEs (mapped memory). */
	conn->max_send_sge = min_u((unsigned)da->max_sge, RDMA_SEND_SGE_MAX);
	conn->max_wr_bytes = 1u << 30;
	if (ibv_query_port(verbs, conn->id->port_num, &pa) == 0 && pa.max_msg_sz &&
	    pa.max_msg_sz < conn->max_wr_bytes)
		conn->max_wr_bytes = pa.max_msg_sz;

	conn->channel = ibv_create_comp_channel(verbs);
	if (!conn->channel || rdma_set_nonblock(conn->channel->fd))
		return -1;
	conn->scq = ibv_create_cq(verbs, (int)conn->sq_depth, conn, conn->channel, 0);
	conn->rcq = ibv_create_cq(verbs, (int)conn->nrecv_max, conn, conn->channel, 0);
	if (!conn->scq || !conn->rcq || ibv_req_notify_cq(conn->scq, 0) || ibv_req_notify_cq(conn->rcq, 0))
		return -1;

	struct ibv_qp_init_attr qa = {
		.send_cq = conn->scq,
		.recv_cq = conn->rcq,
		.cap = {
			.max_send_wr = conn->sq_depth,
			.max_recv_wr = conn->nrecv_max,
			.max_send_sge = conn->max_send_sge,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};
	if (rdma_create_qp(conn->id, conn->dev->pd, &qa))
		return -1;
	conn->qp = conn->id->qp;
	return 0;
}

/* Per context: its receive buffer. Per call buffer set: send (header +
 * inline body) | small reply | small payload. */
static size_t cbuf_stride(uint32_t inline_size, uint32_t small_room)
{
	return align_up(RDMA_HDR_BUF + inline_size, 64) + 2 * align_up(small_room, 64);
}

/* Give the contexts [first, first + n) their buffers in chunk c. */
static void ctxts_init(struct rdma_conn *conn, const struct rdma_small_chunk *c, unsigned first, unsigned n)
{
	for (unsigned i = first; i < first + n; i++) {
		struct rdma_ctxt *x = &conn->ctxts[i];

		x->conn = conn;
		x->index = i;
		x->state = CTXT_FREE;
		x->lkey = c->mr->lkey;
		x->recv_buf = c->mem + conn->ctxt_stride * (i - first);
		x->recv_tag = (struct rdma_wr_tag){ RDMA_WR_RECV, x };
		x->read_tag = (struct rdma_wr_tag){ RDMA_WR_READ, x };
		x->send_tag = (struct rdma_wr_tag){ RDMA_WR_SEND, x };
	}
	for (unsigned i = first + n; i-- > first;)
		rdma_ctxt_free_push(&conn->ctxts[i]);
}

/* Register size more bytes (a chunk) for what, page-aligned, counted in
 * the connection's registered total. The chunk, or NULL (logged). */
static struct rdma_small_chunk *chunk_add(struct rdma_conn *conn, size_t size, const char *what)
{
	static struct log_limit lim_grow;
	struct rdma_small_chunk *c = &conn->small[conn->nsmall];

	if (conn->nsmall >= RDMA_SMALL_CHUNKS_MAX)
		return NULL;
	c->size = size;
	if (posix_memalign((void **)&c->mem, 4096, c->size)) {
		c->mem = NULL;
		return NULL;
	}
	memset(c->mem, 0, c->size);
	c->mr = ibv_reg_mr(conn->dev->pd, c->mem, c->size, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr) {
		log_limited(&lim_grow, LOG_WARNING, "rdma: %s: cannot register %zu bytes for more %s (%s); "
			    "serving with %u contexts, %u call buffers", conn->rpc.peer_name, c->size, what,
			    strerror(errno), conn->nready, conn->ncbufs);
		free(c->mem);
		c->mem = NULL;
		return NULL;
	}
	conn->nsmall++;
	conn->small_total += c->size;
	stats_mem_move(&rdma_stats_mem.conn_registered, &conn->pub_small, conn->small_total);
	return c;
}

/*
 * One more chunk of contexts with registered receive buffers: target +
 * spare at accept (the Receives posted from the start), then
 * RDMA_CTXT_GROW at a time, up to the connection's receive pool
 * (rdma_credits_pool_size). 0, or -1 (nothing changed). The first chunk
 * also holds the 4 zero bytes of XDR padding.
 */
int rdma_conn_grow(struct rdma_conn *conn)
{
	unsigned n = conn->nready ? RDMA_CTXT_GROW : conn->credits.target + RDMA_CREDITS_SPARE;
	bool first = !conn->zero_pad;

	if (conn->nready >= conn->nctxts)
		return -1;
	if (n > conn->nctxts - conn->nready)
		n = conn->nctxts - conn->nready;
	struct rdma_small_chunk *c = chunk_add(conn, conn->ctxt_stride * n + (first ? 64 : 0), "receive contexts");
	if (!c)
		return -1;
	if (first)
		conn->zero_pad = c->mem + conn->ctxt_stride * n; /* zeroed */
	ctxts_init(conn, c, conn->nready, n);
	conn->nready += n;
	return 0;
}

/* One more chunk of call buffer sets: RDMA_CBUF_FIRST at the first call,
 * then RDMA_CTXT_GROW at a time, at most one per context. 0, or -1. */
static int cbuf_grow(struct rdma_conn *conn)
{
	unsigned n = conn->ncbufs ? RDMA_CTXT_GROW : RDMA_CBUF_FIRST;
	size_t ssz = align_up(RDMA_HDR_BUF + conn->inline_size, 64), rsz = align_up(conn->small_room, 64);

	if (conn->ncbufs >= conn->nctxts)
		return -1;
	if (n > conn->nctxts - conn->ncbufs)
		n = conn->nctxts - conn->ncbufs;
	struct rdma_small_chunk *c = chunk_add(conn, conn->cbuf_stride * n, "call buffers");
	if (!c)
		return -1;
	for (unsigned i = conn->ncbufs + n; i-- > conn->ncbufs;) {
		struct rdma_cbuf *cb = &conn->cbufs[i];
		cb->send_buf = c->mem + conn->cbuf_stride * (i - conn->ncbufs);
		cb->reply_small = cb->send_buf + ssz;
		cb->payload_small = cb->reply_small + rsz;
		cb->lkey = c->mr->lkey;
		queue_push_front(&conn->cbuf_free, &cb->link);
	}
	conn->ncbufs += n;
	return 0;
}

bool rdma_cbuf_attach(struct rdma_ctxt *x)
{
	struct rdma_conn *conn = x->conn;
	struct rdma_cbuf *cb = queue_pop_entry(&conn->cbuf_free, struct rdma_cbuf, link);

	if (!cb && cbuf_grow(conn) == 0)
		cb = queue_pop_entry(&conn->cbuf_free, struct rdma_cbuf, link);
	if (cb) {
		x->cb = cb;
		x->send_lkey = cb->lkey;
		x->send_buf = cb->send_buf;
		x->reply_small = cb->reply_small;
		x->payload_small = cb->payload_small;
		conn->cbufs_busy++;
		return true;
	}
	if (conn->cbufs_busy && conn->state != RDMA_CONN_CLOSING) {
		/* A call in progress gives its set back (rdma_ctxt_release). */
		if (x->state != CTXT_WAIT_CBUF)
			rdma_ctxt_set_state(x, CTXT_WAIT_CBUF);
		queue_push(&conn->cbuf_wait, &x->link);
		return false;
	}
	/* None can be registered and none will come back. */
	rdma_conn_close(conn, "cannot register call buffers");
	rdma_credits_call_drop(&conn->credits);
	rdma_ctxt_release(x);
	return false;
}

static int conn_setup_memory(struct rdma_conn *conn)
{
	/* RFC 8166 §4.5.3: a call without chunks gets room for a reply larger
	 * than can go inline, so that send_reply() sees it and answers ERR_CHUNK. */
	conn->small_room = RDMA_NOCHUNK_ROOM * conn->inline_size;
	conn->ctxt_stride = align_up(conn->inline_size, 64);
	conn->cbuf_stride = cbuf_stride(conn->inline_size, conn->small_room);

	/* Bulk buffers: the device's pool (rdma_pool.h), nothing of its own. */
	conn->pool = &conn->dev->pool;
	conn->slot_size = conn->pool->slot_size;
	conn->rpc.reply_max = conn->slot_size; /* a call with a Reply chunk (rdma_recvfrom.c) */
	rdma_pool_user_init(conn->pool, &conn->pool_user);

	/* Contexts are touched (and their buffers registered) a chunk at a
	 * time: an idle connection holds the ramp's first target + spare.
	 * Mapped, not calloc'ed: the pages of contexts never made ready are
	 * never touched, so they cost no memory (calloc may clear reused heap). */
	void *m = mmap(NULL, ctxts_bytes(conn), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	/* Touched a page per context here and there: a transparent huge page
	 * would make the first touch cost 2 MiB (measured: ~390 KiB a
	 * connection on average, in the guest's THP "always" mode). */
	madvise(m, ctxts_bytes(conn), MADV_NOHUGEPAGE);
	conn->ctxts = m;
	/* Call buffer sets: registered at the first call, as calls need them. */
	conn->cbufs = calloc(conn->nctxts, sizeof(*conn->cbufs));
	if (!conn->cbufs)
		return -1;
	queue_init(&conn->cbuf_free);
	queue_init(&conn->cbuf_wait);
	return rdma_conn_grow(conn);
}

/* RFC 8797 §4.2, §5.1: thresholds from the client's private data; limits
 * and credits from the transport's configuration. */
static void conn_setup_protocol(struct rdma_conn *conn, const uint8_t *pd, size_t pdlen)
{
	const struct rdma_xprt *x = conn->x;

	rdma_privdata_parse(pd, pdlen, &conn->peer_pd);
	conn->inline_size = x->inline_size;
	rdma_privdata_thresholds(&conn->peer_pd, RDMA_VERS_1, x->inline_size, x->inline_size, x->send_inv,
				 &conn->inl_v1);
	rdma_privdata_thresholds(&conn->peer_pd, RDMA_VERS_2, x->inline_size, x->inline_size, x->send_inv,
				 &conn->inl_v2);
	rdma_limits_default(&conn->lim, x->max_payload, x->inline_size >= RDMA_INLINE_V2_DEFAULT);
	rdma_credits_init(&conn->credits, x->credits);
	/* RFC 8166 §3.3.1: the grant may change in any reply; an idle
	 * connection keeps a small one (and few receive buffers). */
	rdma_credits_ramp_start(&conn->credits, atomic_load_explicit(&x->initial_credits, memory_order_relaxed));
}

/* The connection is accepted: count it, show it, say so once. */
static void conn_accepted(struct rdma_conn *conn)
{
	rdma_xprt_conn_add(conn->x, conn);
	rdma_stats_conn_register(&conn->stats, conn->rpc.peer_name);
	stats_set(&conn->stats.rdma_version, RDMA_VERS_1);
	stats_set(&conn->stats.credits, conn->credits.max_grant);
	stats_set(&conn->stats.inline_recv, conn->inl_v1.call_max);
	stats_set(&conn->stats.inline_send, conn->inl_v1.reply_max);
	log_limited(&lim_conn_event, LOG_INFO, "rdma: %s: connecting: private data %s (R %d, send %u, recv %u), "
		 "inline call %u reply %u (v1), credits %u, ord %u, send-invalidate %s",
		 conn->rpc.peer_name, conn->peer_pd.present ? "yes" : "no", conn->peer_pd.remote_inv,
		 conn->peer_pd.send_size, conn->peer_pd.recv_size, conn->inl_v1.call_max,
		 conn->inl_v1.reply_max, conn->credits.max_grant, conn->ord,
		 conn->inl_v1.send_inv ? "yes" : "no");
}

int rdma_conn_accept(struct rdma_xprt *x, struct rdma_cm_id *id, const struct rdma_conn_param *req,
		     const uint8_t *pd, size_t pdlen)
{
	struct rdma_conn *conn = calloc(1, sizeof(*conn));
	uint8_t ours[RDMA_PD_LEN];
	const char *step = "memory";

	if (!conn) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return -1;
	}
	conn->x = x;
	conn->id = id;
	id->context = conn;
	conn->state = RDMA_CONN_ACCEPTING;
	rpc_conn_init(&conn->rpc, &x->base); /* the transport's reference */
	conn->rpc.xprt_name = "rdma";
	conn_peer(conn);
	conn_setup_protocol(conn, pd, pdlen);

	step = "device";
	conn->dev = rdma_dev_get(x, id->verbs);
	if (!conn->dev)
		goto fail;
	step = "queues";
	if (conn_setup_queues(conn, req))
		goto fail;
	step = "memory registration";
	if (conn_setup_memory(conn))
		goto fail;
	step = "loop event";
	conn->cq_ev = loop_io(x->loop, conn->channel->fd, LOOP_READ | LOOP_PERSIST, cq_event_cb, conn);
	if (!conn->cq_ev || loop_ev_add(conn->cq_ev, NULL))
		goto fail;
	step = "posting receives";
	if (rdma_recv_refill(conn))
		goto fail;

	/* RFC 8797 §4: version 1, R if we will use Send With Invalidate, our
	 * send and receive sizes. knfsd-like: the client never reads from us
	 * (responder_resources 0); our Reads are bounded by what it accepts
	 * (its responder_resources). */
	rdma_privdata_build(ours, x->send_inv, x->inline_size, x->inline_size);
	struct rdma_conn_param param = {
		.private_data = ours,
		.private_data_len = sizeof(ours),
		.responder_resources = 0,
		.initiator_depth = (uint8_t)conn->ord,
		.rnr_retry_count = 0,
	};
	step = "rdma_accept";
	if (rdma_accept(id, &param))
		goto fail;
	conn_accepted(conn);
	return 0;
fail:
	log_limited(&lim_accept, LOG_WARNING, "rdma: %s: cannot accept: %s failed (%s)",
		    conn->rpc.peer_name, step, strerror(errno));
	rdma_reject(id, NULL, 0);
	rdma_conn_free(conn); /* destroys id too, and the memory with the last reference */
	return -1;
}
