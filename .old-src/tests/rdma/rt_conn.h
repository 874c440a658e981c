/*
 * rt_conn.h - one RDMA-CM connection of the test requester (librdmacm +
 * libibverbs, in the manner of rdma-core's librdmacm/examples/rdma_client.c).
 *
 * Memory: one region, registered once with local write, remote read and
 * remote write access, split into
 *   [ receive ring: ring x recv_size ][ send slots: RT_SEND_SLOTS x RT_SEND_SIZE ][ data area ]
 * The data area backs the chunks the requester offers (Read chunks the server
 * pulls, Write and Reply chunks it fills): rt_data_alloc() hands out pieces,
 * rt_data_reset() takes them all back.
 *
 * Receives: opts.nrecv are posted before connecting. Each completed receive
 * is copied into a struct rt_msg on an arrival-ordered queue; unless
 * opts.manual_repost, its buffer is re-posted at once. Every received
 * message is compared with opts.adv_recv, the size we advertised (RFC 8797
 * §4.2), and oversized ones are counted.
 *
 * Life cycle: rt_conn_open() -> rt_send()/rt_wait_*() -> rt_conn_close()
 * (orderly) or rt_conn_abort() (destroy the QP without disconnecting).
 * All calls are single-threaded; nothing blocks longer than its timeout.
 */
#ifndef RT_CONN_H
#define RT_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "tests/rdma/rt_rpcrdma.h"

#define RT_SEND_SLOTS 256
#define RT_SEND_SIZE 8192  /* largest message the requester sends inline */
#define RT_WR_SEND (1ull << 63)

struct rt_conn_opts {
	const uint8_t *priv;   /* CM private data to send; NULL: none */
	uint8_t priv_len;
	uint32_t recv_size;    /* bytes of each posted receive buffer */
	uint32_t adv_recv;     /* receive size the server was told (or must assume) */
	uint32_t nrecv;        /* receives posted before connecting */
	uint32_t ring;         /* receive buffers, the most that can be posted */
	size_t data_size;      /* registered bytes for chunks */
	uint8_t rnr_retry;     /* RNR retries for the server's Sends to us (Linux client: 0) */
	bool manual_repost;    /* do not re-post a receive when it completes */
	int connect_timeout_ms;
};

/* A received message, copied out of its receive buffer. */
struct rt_msg {
	struct rt_msg *next;
	uint32_t len;
	uint8_t data[];
};

/* RT_OPEN_REJECTED: the server itself refused (rdma_reject, IB CM REJ reason 28). */
enum rt_open_result { RT_OPEN_OK = 0, RT_OPEN_REJECTED = 1, RT_OPEN_ERROR = -1 };
#define RT_REJ_CONSUMER 28

struct rt_conn {
	struct rt_conn_opts o;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem;          /* the one registered region */
	size_t mem_len;
	uint8_t *recv_area, *send_area, *data_area;
	bool *recv_busy;       /* ring slot has a posted receive */
	uint32_t recv_posted;
	uint32_t send_next, sends_outstanding;
	size_t data_used;

	struct rt_msg *q_head, **q_tail; /* received, not yet taken */

	uint8_t peer_priv[256]; /* the server's private data from ESTABLISHED */
	uint8_t peer_priv_len;
	int reject_status;      /* RT_OPEN_REJECTED: CM reject reason */

	bool established;
	bool disconnected;      /* DISCONNECTED (or device removal) seen */
	bool qp_dead;           /* a completion with an error status (flushes included) */
	enum ibv_wc_status recv_err, send_err; /* first non-flush error per direction */
	uint64_t received;      /* messages received */
	uint32_t max_len;       /* longest message received */
	uint32_t oversize;      /* messages longer than o.adv_recv */
	uint32_t with_inv;      /* messages that came as Send With Invalidate */
};

/* Non-zero: print every received message's first words ("@@ DEBUG"). */
extern int rt_debug;

/* Defaults: RFC 8797 private data for 4 KiB both ways, 8 KiB receive buffers. */
void rt_conn_opts_default(struct rt_conn_opts *o, uint8_t priv_buf[8]);

/* Connect to dst. RT_OPEN_OK, RT_OPEN_REJECTED (clean CM reject), RT_OPEN_ERROR (why). */
enum rt_open_result rt_conn_open(struct rt_conn *c, const struct sockaddr *dst,
				 const struct rt_conn_opts *o, char *why, size_t whylen);
void rt_conn_close(struct rt_conn *c);
/* Abrupt end: destroy the QP and deregister memory without a disconnect first. */
void rt_conn_abort(struct rt_conn *c);

/* Copy len bytes into a send slot and post a signalled Send. 0 or -1. */
int rt_send(struct rt_conn *c, const void *buf, size_t len);
/* Post n more receives. 0 or -1 (ring full or post failed). */
int rt_recv_post(struct rt_conn *c, uint32_t n);

/* Process completions and CM events for at most timeout_ms. Returns events handled. */
int rt_progress(struct rt_conn *c, int timeout_ms);
/* True when nothing more can arrive (disconnected or QP in error). */
bool rt_conn_dead(const struct rt_conn *c);

/* First queued message whose first word (rdma_xid) is xid, waiting up to timeout_ms. */
struct rt_msg *rt_wait_xid(struct rt_conn *c, uint32_t xid, int timeout_ms);
/* First queued message of any kind, waiting up to timeout_ms. */
struct rt_msg *rt_wait_any(struct rt_conn *c, int timeout_ms);
uint32_t rt_queue_len(const struct rt_conn *c);
void rt_msg_free(struct rt_msg *m);

/* Data area: 64-byte aligned pieces for chunks, or NULL when full. */
void *rt_data_alloc(struct rt_conn *c, size_t len);
void rt_data_reset(struct rt_conn *c);
struct rt_seg rt_seg_of(const struct rt_conn *c, const void *p, uint32_t len);

/* The server's RFC 8797 private data, if it sent some (false: none or too short). */
bool rt_conn_peer_priv(const struct rt_conn *c, struct rt_priv *p);

/* A port hw counter of the connection's device (e.g. "send_rnr_err"); -1 if unknown. */
long long rt_conn_hw_counter(const struct rt_conn *c, const char *name);

/*
 * What the server did wrong on this connection whatever the scenario:
 * messages longer than our receive size (RFC 8797 §4.2, §5.1) or Send With
 * Invalidate although we never set the R bit (RFC 8797 §4.1). 0, or -1 with why.
 */
int rt_conn_violation(const struct rt_conn *c, char *why, size_t n);

/* "ok", "disconnected", "recv error: local length error", ... */
const char *rt_conn_state(const struct rt_conn *c, char *buf, size_t n);

#endif
