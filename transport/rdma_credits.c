/*
 * rdma_credits.c - credit grant, reply accounting and the receive-buffer
 * pool counts (RFC 8166 §3.3.1).
 *
 * See rdma_credits.h for the pool and the two
 * invariants.
 */
#include "transport/rdma_credits.h"

static uint32_t clamp_grant(uint32_t max_grant)
{
	if (max_grant < 1)
		return 1;
	return max_grant > RDMA_CREDITS_MAX ? RDMA_CREDITS_MAX : max_grant;
}

uint32_t rdma_credits_pool_size(uint32_t max_grant)
{
	return 2 * clamp_grant(max_grant) + RDMA_CREDITS_SPARE;
}

void rdma_credits_init(struct rdma_credits *c, uint32_t max_grant)
{
	c->max_grant = clamp_grant(max_grant);
	c->target = c->max_grant;
	c->ramp_calls = 0;
	c->recvs_posted = 0;
	c->calls_owed = 0;
	c->last_grant = 0;
	c->bufs_total = rdma_credits_pool_size(c->max_grant);
	c->bufs_free = c->bufs_total;
}

void rdma_credits_recv_posted(struct rdma_credits *c, uint32_t n)
{
	c->recvs_posted += n;
	c->bufs_free = c->bufs_free > n ? c->bufs_free - n : 0;
}

void rdma_credits_ramp_start(struct rdma_credits *c, uint32_t initial)
{
	if (initial >= 1 && initial < c->max_grant)
		c->target = initial;
	c->ramp_calls = 0;
}

/* RFC 8166 §3.3.1: the grant may change in any reply; raise the target
 * while the client uses its grant or keeps calling. */
static void ramp(struct rdma_credits *c)
{
	if (c->target >= c->max_grant)
		return;
	if (++c->ramp_calls < RDMA_CREDITS_RAMP_CALLS && c->calls_owed + RDMA_CREDITS_HEADROOM < c->target)
		return;
	c->target = c->max_grant - c->target < RDMA_CREDITS_STEP ? c->max_grant : c->target + RDMA_CREDITS_STEP;
	c->ramp_calls = 0;
}

void rdma_credits_recv_done(struct rdma_credits *c)
{
	if (c->recvs_posted)
		c->recvs_posted--;
	c->calls_owed++;
	ramp(c);
}

void rdma_credits_recv_flushed(struct rdma_credits *c)
{
	if (c->recvs_posted)
		c->recvs_posted--;
	rdma_credits_buf_put(c);
}

void rdma_credits_buf_put(struct rdma_credits *c)
{
	if (c->bufs_free < c->bufs_total)
		c->bufs_free++;
}

void rdma_credits_call_drop(struct rdma_credits *c)
{
	if (c->calls_owed)
		c->calls_owed--;
}

bool rdma_credits_reply_get(struct rdma_credits *c)
{
	if (!c->calls_owed)
		return false;
	c->calls_owed--;
	return true;
}

uint32_t rdma_credits_grant(struct rdma_credits *c, uint32_t requested)
{
	uint64_t room = (uint64_t)c->recvs_posted + c->calls_owed;
	uint32_t g = c->target;

	/* RFC 8166 §3.3.1: the requester asks for its maximum; more is unused. */
	if (requested && requested < g)
		g = requested;
	/* Invariant 1: calls in flight must find a posted Receive. */
	if (room < g)
		g = (uint32_t)room;
	/* Never zero: the requester could never send again. */
	if (g == 0)
		g = 1;
	c->last_grant = g;
	return g;
}

uint32_t rdma_credits_recvs_wanted(const struct rdma_credits *c)
{
	uint32_t want = c->target + RDMA_CREDITS_SPARE;
	uint32_t n = c->recvs_posted >= want ? 0 : want - c->recvs_posted;

	return n < c->bufs_free ? n : c->bufs_free;
}

bool rdma_credits_short(const struct rdma_credits *c)
{
	return (uint64_t)c->recvs_posted + c->calls_owed < (uint64_t)c->target + RDMA_CREDITS_SPARE / 2;
}
