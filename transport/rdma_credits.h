/*
 * rdma_credits.h - RPC-over-RDMA credit accounting and the receive-buffer
 * pool of one connection (RFC 8166 §3.3.1).
 *
 * Plain counters, used on the loop thread only.
 *
 * Receive buffers (after the Linux server, svc_rdma_recvfrom.c): a pool of
 * up to rdma_credits_pool_size(max_grant) buffers, larger than the grant
 * (the verbs shell registers max_grant + spare at accept and the rest in
 * chunks as calls hold them: rdma_conn_grow). A Receive that completes keeps its buffer (the call
 * lives in it) until the call's reply Send completes; a fresh buffer is
 * posted at once in its place, so max_grant + spare Receives stay posted
 * while the calls held are at most pool - (max_grant + spare) = max_grant.
 * The grant therefore stays at its target under load; it drops only when
 * the pool runs dry (more held calls than that), and then it follows what
 * is really posted.
 *
 * Ramped grant (RFC 8166 §3.3.1: the responder may change the grant in any
 * reply): rdma_credits_ramp_start() sets a first target below max_grant
 * ([rdma] initial-credits, RDMA_CREDITS_INITIAL by default; as many
 * Receives posted, plus the spare), so an idle connection holds few receive
 * buffers. The target grows by RDMA_CREDITS_STEP, up to max_grant,
 * when the client uses its grant (calls owed reach the target less
 * RDMA_CREDITS_HEADROOM) or keeps calling (RDMA_CREDITS_RAMP_CALLS calls
 * since the last step). Receives are then posted for the new target, and
 * the grant advertised follows what is posted: never more than posted
 * Receives plus calls owed (invariant 1 below). The target never shrinks:
 * the buffers of a connection that was once busy stay until it closes.
 *
 * Two invariants, one per direction:
 *  1. Calls in flight towards us never exceed our posted Receives: the grant
 *     we advertise is at most the Receives we have posted plus the calls
 *     already received and not yet answered (each of those holds back one
 *     client call slot until its reply arrives).
 *  2. Replies towards the client never exceed its Receives: the client posts
 *     one Receive per call it sends (Linux: rnr_retry_count 0, so a Send
 *     without a posted Receive kills the connection), so we send exactly one
 *     reply (or RDMA_ERROR) per received call and nothing unsolicited.
 *     rdma_credits_reply_get() refuses a reply that no call is owed.
 */
#ifndef RNFSD_RDMA_CREDITS_H
#define RNFSD_RDMA_CREDITS_H

#include <stdbool.h>
#include <stdint.h>

#define RDMA_CREDITS_DEFAULT 128
#define RDMA_CREDITS_MAX 1024
/* Receives posted beyond the grant (RFC 8166 §3.3.1 leaves room for a
 * requester that sends a message the grant does not count). */
#define RDMA_CREDITS_SPARE 8
/* The ramp (above): first target, step, and when to step. */
#define RDMA_CREDITS_INITIAL 8
#define RDMA_CREDITS_STEP 16
#define RDMA_CREDITS_HEADROOM 2
#define RDMA_CREDITS_RAMP_CALLS 8

struct rdma_credits {
	uint32_t max_grant;    /* configured grant ([rdma] credits), 1..RDMA_CREDITS_MAX */
	uint32_t target;       /* the ramp's grant now: RDMA_CREDITS_INITIAL..max_grant */
	uint32_t ramp_calls;   /* calls received since the target last grew */
	uint32_t recvs_posted; /* Receives posted on the QP now */
	uint32_t calls_owed;   /* calls received and not yet answered (or dropped) */
	uint32_t last_grant;   /* the grant in the last reply sent */
	uint32_t bufs_total;   /* receive buffers in the pool */
	uint32_t bufs_free;    /* neither posted nor held by a call */
};

/* Receive buffers a connection with this grant registers: 2 x grant + spare. */
uint32_t rdma_credits_pool_size(uint32_t max_grant);

/* max_grant is clamped to 1..RDMA_CREDITS_MAX; every pool buffer is free;
 * the target is max_grant (no ramp). */
void rdma_credits_init(struct rdma_credits *c, uint32_t max_grant);

/* Start the ramp (above) at initial, before any Receive is posted; 0 or
 * initial >= max_grant: no ramp, the target stays at max_grant. */
void rdma_credits_ramp_start(struct rdma_credits *c, uint32_t initial);

/* n free buffers were posted as Receives. */
void rdma_credits_recv_posted(struct rdma_credits *c, uint32_t n);

/* A Receive completed with a message: it is a call we owe an answer to
 * (or will drop with rdma_credits_call_drop()); its buffer is held until
 * rdma_credits_buf_put(). The ramp may raise the target (see above). */
void rdma_credits_recv_done(struct rdma_credits *c);

/* A posted Receive was flushed (connection going away): no call, buffer free. */
void rdma_credits_recv_flushed(struct rdma_credits *c);

/* A buffer held by a call comes back (its reply Send completed, or the call
 * was dropped). */
void rdma_credits_buf_put(struct rdma_credits *c);

/* The message needs no answer (RDMA_DONE, an RPC reply, a DRC in-progress
 * duplicate): the client holds no Receive for it... or already has one for
 * the original. Either way nothing is sent for it. */
void rdma_credits_call_drop(struct rdma_credits *c);

/*
 * Before sending a reply or an RDMA_ERROR: false if no call is owed (a bug:
 * the Send could find no Receive at the client). On true the call is no
 * longer owed.
 */
bool rdma_credits_reply_get(struct rdma_credits *c);

/*
 * The credit value for the reply being sent (RFC 8166 §3.3.1), to be called
 * after rdma_credits_reply_get(): the ramp's target, bounded by what the
 * client asked for (its rdma_credit: its maximum; more is useless to it) and
 * by what our posted Receives can absorb (invariant 1); never zero (a zero
 * grant would stop the client for good, and Linux reads 0 as 1 anyway).
 */
uint32_t rdma_credits_grant(struct rdma_credits *c, uint32_t requested);

/* Receives to post now: up to target + RDMA_CREDITS_SPARE posted, as far
 * as free buffers go (0 if enough are posted or none is free). */
uint32_t rdma_credits_recvs_wanted(const struct rdma_credits *c);

/* Receives posted plus calls owed, against the target: true while they fall
 * short of target + RDMA_CREDITS_SPARE / 2 (the grant would sag; the verbs
 * shell then registers more receive buffers). */
bool rdma_credits_short(const struct rdma_credits *c);

#endif
