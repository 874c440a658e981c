/*
 * rdma_credits.h - RPC-over-RDMA credit accounting for one connection
 * (RFC 8166 §3.3.1).
 *
 * Owner: developer "rdma". Plain counters, used on the loop thread only.
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

struct rdma_credits {
	uint32_t max_grant;    /* configured grant ([rdma] credits), 1..RDMA_CREDITS_MAX */
	uint32_t recvs_posted; /* Receives posted on the QP now */
	uint32_t calls_owed;   /* calls received and not yet answered (or dropped) */
	uint32_t last_grant;   /* the grant in the last reply sent */
};

/* max_grant is clamped to 1..RDMA_CREDITS_MAX. */
void rdma_credits_init(struct rdma_credits *c, uint32_t max_grant);

/* n Receives were posted. */
void rdma_credits_recv_posted(struct rdma_credits *c, uint32_t n);

/* A Receive completed with a message: it is a call we owe an answer to
 * (or will drop with rdma_credits_call_drop()). */
void rdma_credits_recv_done(struct rdma_credits *c);

/* A posted Receive was flushed (connection going away): no call. */
void rdma_credits_recv_flushed(struct rdma_credits *c);

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
 * after rdma_credits_reply_get() and after re-posting the Receives that are
 * free (so that at least one is posted or owed): the configured grant, bounded by what the
 * client asked for (its rdma_credit: its maximum; more is useless to it) and
 * by what our posted Receives can absorb (invariant 1); never zero (a zero
 * grant would stop the client for good, and Linux reads 0 as 1 anyway).
 */
uint32_t rdma_credits_grant(struct rdma_credits *c, uint32_t requested);

/* Receives to post now to keep max_grant + spare posted (0 if enough). */
uint32_t rdma_credits_recvs_wanted(const struct rdma_credits *c, uint32_t spare);

#endif
