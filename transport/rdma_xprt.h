/*
 * rdma_xprt.h - internals shared by the RPC-over-RDMA verbs shell.
 * Grouped by the file that implements them, so it doubles as a map:
 *
 *   rdma_transport.c  one transport instance (struct rdma_xprt): listeners,
 *                     CM events, devices, the connection list and reaper,
 *                     start / graceful drain / stop / free
 *   rdma_conn.c       one connection: accept (private data, QP, memory,
 *                     receives), context states and bulk slots, the one
 *                     close path, teardown
 *   rdma_recvfrom.c   a Receive completed: decode, pull Read chunks, hand the
 *                     call to the RPC layer
 *   rdma_sendto.c     send_reply(): Write chunks, Reply chunk, Send; errors
 *   rdma_rw.c         posting Receives, RDMA Reads, Write+Send chains; the
 *                     send queue budget; completion dispatch
 *   rdma_backchannel.c  reverse-direction calls (RFC 8167): send_call(),
 *                     the client's replies to them
 *
 * Ownership and lifetimes
 *  - A connection (struct rdma_conn) owns its contexts' registered receive
 *    buffers (plus 4 zero bytes for XDR padding) and its call buffer sets
 *    (struct rdma_cbuf: send buffer, small reply and payload buffers; one
 *    per call in progress, taken when its Receive completes, registered
 *    RDMA_CBUF_FIRST at the first call and RDMA_CTXT_GROW more at a time),
 *    receive buffers registered in chunks:
 *    the ramped grant's first target + spare contexts at accept, more as
 *    the grant rises (rdma_credits.h) or calls hold them
 *    (rdma_conn_grow, up to the receive pool below), never per call.
 *  - Bulk buffers (Read chunk data, READ payloads, long replies) are slots
 *    of the device's one pool (rdma_pool.h), shared by every connection on
 *    the device: registered lazily in chunks up to [rdma] buffer-pool, never
 *    per call. A call takes all the slots it needs at once; when there are
 *    none it waits in the pool's FIFO (across connections) and is resumed
 *    when a slot comes back; each connection holds at most its cap of them.
 *    The hot path never registers, never mallocs.
 *  - A context (struct rdma_ctxt) carries one message from its Receive to its
 *    reply's Send completion. Its Receive buffer holds the call (RDMA_MSG), so
 *    it stays with the call until the reply is sent. Contexts form a pool of
 *    at most rdma_credits_pool_size() = 2 x credits + spare (rdma_credits.h):
 *    when a Receive completes, a FREE context is posted in its place at once
 *    (rdma_recv_refill), so credits + spare Receives stay posted under load
 *    and the grant does not sag while replies are in flight (the pool grows
 *    when no FREE context is left; should a registration fail, the grant
 *    follows the Receives really posted: rdma_credits_grant, RFC 8166 §3.3.1).
 *  - Calls without a Reply chunk get reply and payload buffers of
 *    RDMA_NOCHUNK_ROOM x the inline size: room for the handler to produce a
 *    reply larger than the inline threshold, which send_reply() then answers
 *    with ERR_CHUNK (RFC 8166 §4.5.3) instead of the RPC layer's SYSTEM_ERR.
 *    A call with a Reply chunk gets a bulk slot for its reply, unless its
 *    operation table entry bounds the reply (rpc_proc.max_reply) to that
 *    small buffer: slots are few, and most replies are small.
 *  - Contexts handed to the RPC layer (IN_RPC) are owned by it until
 *    send_reply(); the connection outlives them (it is freed only when no
 *    context is busy and no work request is outstanding).
 *
 * Context states (ctxt_set_state() asserts the arrows in debug builds):
 *
 *   FREE --post_recv--> POSTED --recv--> [decode] --> WAIT_BULK --> READING --+
 *     ^                   |  |               |   |          (slots)    (Reads)  |
 *     |                   |  +-(no call buffers)-> WAIT_CBUF --(a set back)--> [decode]
 *     |                   |                 |   |                              |
 *     |              flush|                 |   +--------------> IN_RPC <-----+
 *     |                   v                 |                      |send_reply
 *     +------------------FREE               +--(error/garbage)--> WAIT_SQ --> SENDING
 *     +---------------------------------------------------------------- Send done
 *   (FREE contexts wait on conn->free_ctxts until rdma_recv_refill posts them.)
 *
 * Connection states: ACCEPTING -> CONNECTED -> CLOSING -> (reaped, freed).
 * conn_close() is the only way into CLOSING: it disconnects (the QP goes to
 * the error state, every posted work request completes with a flush status,
 * which is not an error), drops contexts that hold no work request, and the
 * connection is freed from a loop timer once nothing is outstanding.
 */
#ifndef RNFSD_RDMA_XPRT_H
#define RNFSD_RDMA_XPRT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "conf/config.h"
#include "core/queue.h"
#include "transport/rdma_stats.h"
#include "rpc/rpc.h"
#include "transport/rdma_credits.h"
#include "transport/rdma_hdr.h"
#include "transport/rdma_pcl.h"
#include "transport/rdma_pool.h"
#include "transport/rdma_privdata.h"
#include "ulb/ulb.h"

struct loop;
struct loop_ev;

/* Reply and payload buffers of a call without chunks, in inline sizes. */
#define RDMA_NOCHUNK_ROOM 2u
/* Most bulk slots a call can need: Read chunk data, payload, long reply. */
#define RDMA_SLOTS_PER_CALL 3
/* Read WRs one call may need: every Read segment split at max_wr_bytes. */
#define RDMA_MAX_READ_WRS (2 * RDMA_HDR_MAX_SEGS)
/* Largest send-header buffer: a reply header echoing the biggest Write list. */
#define RDMA_HDR_BUF 2048u

enum rdma_conn_state {
	RDMA_CONN_ACCEPTING, /* rdma_accept() done, ESTABLISHED not seen yet */
	RDMA_CONN_CONNECTED,
	RDMA_CONN_CLOSING,   /* conn_close() ran; waiting for flushes and workers */
};

enum rdma_ctxt_state {
	CTXT_FREE,      /* owned by the connection, no work request */
	CTXT_POSTED,    /* Receive posted */
	CTXT_WAIT_CBUF, /* received, waiting for call buffers (conn->cbuf_wait) */
	CTXT_WAIT_BULK, /* waiting for bulk slots (the pool's FIFO) */
	CTXT_READING,   /* RDMA Reads queued or in flight */
	CTXT_IN_RPC,    /* owned by the RPC layer until send_reply() */
	CTXT_WAIT_SQ,   /* reply or error built, waiting for send queue room */
	CTXT_SENDING,   /* Write+Send chain posted */
};

enum rdma_wr_kind { RDMA_WR_RECV = 1, RDMA_WR_READ, RDMA_WR_SEND, RDMA_WR_BC_SEND };

/* What a completion's wr_id points to. Unsignaled WRs carry wr_id 0. */
struct rdma_wr_tag {
	enum rdma_wr_kind kind;
	struct rdma_ctxt *ctxt;
};

struct rdma_conn;

/* The buffers a call needs besides its Receive buffer (registered, in the
 * connection's chunks): taken when its Receive completes, given back with
 * the context, so that Receives posted and idle cost only their receive
 * buffers. */
struct rdma_cbuf {
	uint8_t *send_buf;      /* RDMA_HDR_BUF + inline: header, then inline body */
	uint8_t *reply_small;   /* conn->small_room */
	uint8_t *payload_small; /* conn->small_room */
	uint32_t lkey;
	struct queue_link link; /* conn->cbuf_free */
};

struct rdma_ctxt {
	struct rdma_conn *conn;
	enum rdma_ctxt_state state;
	struct queue_link link; /* free_ctxts, sq_wait or read_wait */
	unsigned index;

	/* Registered buffers: the receive buffer (its chunk's MR), fixed for
	 * the connection's life; the others from the call buffers it holds
	 * (cb) from its Receive's completion to its release, else NULL. */
	uint32_t lkey;
	uint8_t *recv_buf;     /* cfg rdma_inline bytes */
	/* What completions point to; here, beside the fields set when the
	 * context is made ready, so that a context only ever posted touches
	 * one page of the mapping that holds the contexts. */
	struct rdma_wr_tag recv_tag, read_tag, send_tag;
	struct rdma_cbuf *cb;
	uint32_t send_lkey;    /* cb->lkey */
	uint8_t *send_buf;     /* RDMA_HDR_BUF + rdma_inline: header, then inline body */
	uint8_t *reply_small;  /* conn->small_room: reply stream when no Reply chunk */
	uint8_t *payload_small; /* conn->small_room: READ data that will go inline */
	uint32_t recv_len;

	/* Bulk slots held (pool indices), released with the context. */
	int slots[RDMA_SLOTS_PER_CALL];
	unsigned nslots;
	struct rdma_pool_waiter pwait; /* in the pool's FIFO while CTXT_WAIT_BULK */
	uint8_t *read_area;    /* slot for Read chunk data (or NULL) */

	/* The message. */
	struct rdma_hdr hdr;
	struct rdma_pcl pcl;
	struct ulb_rule rule;  /* the procedure's RFC 8267 rule (rpc_ddp_rule) */
	uint32_t max_reply;    /* the procedure's inline reply bound; 0: unknown or unbounded */
	bool read_call_phase;  /* RDMA_NOMSG: pulling the position-zero chunk first */

	/* RDMA Reads. */
	struct rdma_read_wr rwrs[RDMA_MAX_READ_WRS];
	unsigned nrwrs, rposted, rdone;
	bool rfailed;

	/* The call as the RPC layer sees it. */
	struct rpc_call call;

	/* The reply. */
	struct rdma_reply_plan plan;
	struct rdma_write_plan wplan;
	uint32_t send_len;
	unsigned sq_need;      /* send queue slots the chain takes */
	bool send_inv;
	uint32_t inv_rkey;
};

/* One RDMA device (ibv_context), its protection domain and its bulk-buffer
 * pool, shared by the connections that arrive on it. */
struct rdma_dev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	unsigned refs;
	struct rdma_pool pool;
	bool pool_ok;                   /* rdma_pool_init() done */
	/* What this device last added to rdma_stats_mem (rdma_stats.h). */
	uint64_t pub_max, pub_reg, pub_slot, pub_slots, pub_in_use, pub_waiting, pub_waits;
	struct rdma_dev *next;
};

struct rdma_xprt;

/* One registration of receive contexts' buffers (rdma_conn_grow) or call
 * buffers (rdma_cbuf_grow). */
#define RDMA_SMALL_CHUNKS_MAX (2 * (1 + RDMA_CREDITS_MAX / 8 + 1))
/* Call buffers registered at the first call (an idle connection's only
 * one); then RDMA_CTXT_GROW at a time. */
#define RDMA_CBUF_FIRST 1
struct rdma_small_chunk {
	uint8_t *mem;
	size_t size;
	struct ibv_mr *mr;
};

struct rdma_conn {
	struct rpc_conn rpc;            /* what the RPC layer sees; its refs free the memory */
	struct rdma_xprt *x;            /* the transport instance that accepted it */
	struct rdma_cm_id *id;
	struct rdma_dev *dev;
	enum rdma_conn_state state;
	struct rdma_conn *next;         /* x->conns */
	struct queue_link reap_link;    /* on the reap list once CLOSING and idle */
	bool reaping;

	/* Completion side: two CQs on one channel, driven by the loop. */
	struct ibv_comp_channel *channel;
	struct loop_ev *cq_ev;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;

	/* Registered memory: the receive contexts' buffers, chunk by chunk
	 * (rdma_conn_grow), and the bulk pool's share. */
	struct rdma_small_chunk small[RDMA_SMALL_CHUNKS_MAX];
	unsigned nsmall;
	unsigned nready;                /* contexts [0, nready) have buffers */
	size_t ctxt_stride;             /* registered bytes per context (its receive buffer) */
	size_t cbuf_stride;             /* registered bytes per call buffer set */
	struct rdma_cbuf *cbufs;        /* [nctxts]; [0, ncbufs) have buffers */
	unsigned ncbufs, cbufs_busy;
	struct queue cbuf_free;         /* of rdma_cbuf by link */
	struct queue cbuf_wait;         /* of rdma_ctxt (CTXT_WAIT_CBUF) by link, FIFO */
	size_t small_total;             /* bytes registered in small[] */
	uint8_t *zero_pad;              /* 4 zero bytes inside small[0] */
	struct rdma_pool *pool;         /* &dev->pool */
	struct rdma_pool_user pool_user; /* its share of the pool */
	uint32_t slot_size;             /* pool->slot_size */
	uint64_t pub_small;             /* small_total as added to rdma_stats_mem */

	struct rdma_ctxt *ctxts;
	unsigned nctxts;                /* the receive pool at most: rdma_credits_pool_size() */
	unsigned nrecv_max;             /* Receives posted at most: credits + spare */
	struct queue free_ctxts;        /* FREE contexts, not posted (a stack) */
	uint32_t small_room;            /* reply_small / payload_small bytes */
	unsigned busy;                  /* contexts not FREE and not POSTED */

	/* Queues of contexts waiting for something (FIFO, by link); bulk slots
	 * are waited for in the pool's FIFO. */
	struct queue sq_wait;           /* send queue room for a reply chain */
	struct queue read_wait;         /* RDMA Reads to post */

	/* Protocol state. */
	struct rdma_limits lim;
	struct rdma_credits credits;
	struct rdma_privdata peer_pd;
	struct rdma_inline inl_v1, inl_v2;
	uint32_t inline_size;           /* our receive and send buffer size */

	/* Send queue and Read budget. */
	unsigned sq_depth, sq_free;
	unsigned ord, reads_inflight;   /* initiator depth agreed at accept */
	unsigned max_send_sge;
	uint32_t max_wr_bytes;
	unsigned wrs_outstanding;       /* Receives + signaled sends/reads not completed */

	/* Reverse-direction calls (rdma_backchannel.c): send buffers registered
	 * at the first call, or NULL. */
	struct rdma_bc *bc;

	/* rnfsctl's per-connection line (rdma_stats.h). */
	struct rdma_stats_conn stats;

	/* Scratch for building a chain (loop thread only). */
	struct ibv_send_wr swr[RDMA_WRITE_PLAN_MAX_WRS + 1];
	struct ibv_sge ssge[RDMA_WRITE_PLAN_MAX_SGES + 1];
};

/* One RPC-over-RDMA transport instance (rdma_transport.c); nothing is global. */
struct rdma_xprt {
	struct xprt base;               /* the generic interface (rpc/xprt.h); first */
	struct loop *loop;
	struct rdma_event_channel *ec;
	struct loop_ev *cm_ev;
	struct loop_ev *reap_ev;        /* zero-delay timer: frees reaped connections */
	struct rdma_cm_id *listen[CONFIG_MAX_LISTEN];
	unsigned nlisten;
	struct rdma_conn *conns;        /* every connection not yet freed */
	unsigned nconns;
	struct queue reap;              /* of rdma_conn by reap_link: CLOSING and idle */
	struct rdma_dev *devs;

	/* From the configuration, copied at create. */
	bool required;                  /* enable = yes (else auto) */
	struct config_listen listen_cfg[CONFIG_MAX_LISTEN];
	unsigned n_listen_cfg;
	unsigned max_conns;
	uint32_t credits;
	_Atomic uint32_t initial_credits; /* [rdma] initial-credits: the ramp's start (rdma_credits.h) */
	uint32_t inline_size;
	uint32_t max_payload;
	bool send_inv;
	size_t buffer_pool;             /* [rdma] buffer-pool: bytes of bulk slots per device */
	uint32_t slot_size;             /* one bulk slot: the largest chunk plus slack */

	/* Graceful stop (rdma_transport.c's file comment). */
	bool draining;
	void (*drain_done)(void *arg);
	void *drain_arg;
};

/* rdma_transport.c */
int rdma_set_nonblock(int fd);
struct rdma_dev *rdma_dev_get(struct rdma_xprt *x, struct ibv_context *verbs);
void rdma_dev_put(struct rdma_dev *d);
/* After the pool changed: bring rdma_stats_mem up to date. */
void rdma_dev_pool_publish(struct rdma_dev *d);
void rdma_xprt_conn_add(struct rdma_xprt *x, struct rdma_conn *conn);
void rdma_xprt_reap(struct rdma_xprt *x, struct rdma_conn *conn);

/* rdma_conn.c */
int rdma_conn_accept(struct rdma_xprt *x, struct rdma_cm_id *id, const struct rdma_conn_param *req,
		     const uint8_t *pd, size_t pdlen);
void rdma_conn_close(struct rdma_conn *conn, const char *why);
/* CLOSING and idle: to the reaper; draining and idle: close. */
void rdma_conn_check_idle(struct rdma_conn *conn);
/* Tear down the verbs resources and drop the transport's reference. */
void rdma_conn_free(struct rdma_conn *conn);
void rdma_conn_release(struct rpc_conn *rc); /* xprt_ops.conn_release */
/* One more chunk of receive contexts (registered buffers). 0, or -1. */
int rdma_conn_grow(struct rdma_conn *conn);
/* Call buffers for x, whose Receive completed: true if it has them; false
 * if it waits for a set (CTXT_WAIT_CBUF; rdma_recv_proceed() runs when one
 * comes back) or the connection was closed (none could be registered and
 * none is in use; x released). */
bool rdma_cbuf_attach(struct rdma_ctxt *x);
void rdma_ctxt_release(struct rdma_ctxt *x);
void rdma_ctxt_set_state(struct rdma_ctxt *x, enum rdma_ctxt_state st);
const struct rdma_inline *rdma_conn_inline(const struct rdma_conn *conn, uint32_t vers);

/* rdma_recvfrom.c */
void rdma_recv_done(struct rdma_ctxt *x, uint32_t byte_len);
/* Decode x's call (x->recv_len bytes) and carry it on; x holds call buffers. */
void rdma_recv_proceed(struct rdma_ctxt *x);
void rdma_read_chunks_done(struct rdma_ctxt *x);

/* rdma_sendto.c */
void rdma_send_reply(struct rpc_call *c);
void rdma_send_error(struct rdma_ctxt *x, enum rdma_status st);
void rdma_send_done(struct rdma_ctxt *x);

/* rdma_backchannel.c */
#define RDMA_BC_SLOTS 4 /* reverse-direction calls in Sends at once; the most credits used */
int rdma_send_call(struct rpc_conn *rc, const uint8_t *msg, size_t len); /* xprt_ops.send_call */
/* A Receive the header decoder drops: true if it was a reply to one of our
 * calls, taken (and x released). */
bool rdma_bc_reply(struct rdma_ctxt *x);
void rdma_bc_send_done(struct rdma_conn *conn, const struct rdma_wr_tag *tag);
void rdma_bc_free(struct rdma_conn *conn);

/* rdma_rw.c */
int rdma_post_recv(struct rdma_ctxt *x);
void rdma_ctxt_free_push(struct rdma_ctxt *x);
int rdma_recv_refill(struct rdma_conn *conn);
void rdma_queue_reads(struct rdma_ctxt *x);
void rdma_queue_send(struct rdma_ctxt *x);
void rdma_sq_pump(struct rdma_conn *conn);
void rdma_cq_drain(struct rdma_conn *conn);
uint32_t rdma_lkey_for(const struct rdma_conn *conn, const uint8_t *addr, uint32_t len);

#endif
