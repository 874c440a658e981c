/*
 * rdma_pool.c - the shared, lazily registered bulk-buffer pool of an
 * RPC-over-RDMA transport: slot accounting, per-connection caps and the one
 * FIFO of calls waiting for buffers. See rdma_pool.h for the rules.
 */
#include <stdlib.h>
#include <string.h>

#include "transport/rdma_pool.h"

enum take_result { TAKE_OK, TAKE_POOL, TAKE_CAP, TAKE_NEVER };

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

int rdma_pool_init(struct rdma_pool *p, size_t bytes, uint32_t slot_size, unsigned chunk_slots,
		   rdma_pool_reg_fn reg, rdma_pool_dereg_fn dereg, void *reg_arg)
{
	size_t n = slot_size ? bytes / slot_size : 0;

	memset(p, 0, sizeof(*p));
	if (n < RDMA_POOL_MIN_SLOTS)
		n = RDMA_POOL_MIN_SLOTS;
	if (n > 1u << 20)
		n = 1u << 20;
	p->slot_size = slot_size;
	p->max_slots = (unsigned)n;
	p->chunk_slots = chunk_slots ? chunk_slots : 1;
	p->reg = reg;
	p->dereg = dereg;
	p->reg_arg = reg_arg;
	queue_init(&p->waiters);
	p->free = calloc(p->max_slots, sizeof(*p->free));
	p->chunks = calloc((p->max_slots + p->chunk_slots - 1) / p->chunk_slots, sizeof(*p->chunks));
	if (!p->free || !p->chunks) {
		rdma_pool_fini(p);
		return -1;
	}
	return 0;
}

void rdma_pool_fini(struct rdma_pool *p)
{
	for (unsigned i = 0; i < p->nchunks; i++)
		p->dereg(p->reg_arg, &p->chunks[i]);
	free(p->free);
	free(p->chunks);
	p->free = NULL;
	p->chunks = NULL;
	p->nchunks = p->nslots = p->nfree = 0;
}

/* Slots the pool can ever have. */
static unsigned pool_bound(const struct rdma_pool *p)
{
	return p->reg_failed ? p->nslots : p->max_slots;
}

void rdma_pool_user_init(const struct rdma_pool *p, struct rdma_pool_user *u)
{
	unsigned cap = p->max_slots / 2;

	if (cap < RDMA_POOL_MIN_SLOTS)
		cap = RDMA_POOL_MIN_SLOTS;
	u->cap = min_u(min_u(cap, RDMA_POOL_USER_MAX), p->max_slots);
	u->held = 0;
	u->pass = 0;
}

/* Register one more chunk (the last may be short). 0, or -1. */
static int grow(struct rdma_pool *p)
{
	if (p->reg_failed || p->nslots >= p->max_slots)
		return -1;
	unsigned n = min_u(p->chunk_slots, p->max_slots - p->nslots);
	struct rdma_pool_chunk *c = &p->chunks[p->nchunks];

	memset(c, 0, sizeof(*c));
	c->bytes = (size_t)n * p->slot_size;
	if (p->reg(p->reg_arg, c)) {
		p->reg_failed = true; /* the memory lock limit or the device says no */
		return -1;
	}
	p->nchunks++;
	for (unsigned i = n; i-- > 0;)
		p->free[p->nfree++] = (int)(p->nslots + i);
	p->nslots += n;
	return 0;
}

static enum take_result take(struct rdma_pool *p, struct rdma_pool_user *u, unsigned need, int *out)
{
	if (need > u->cap || need > pool_bound(p))
		return TAKE_NEVER;
	if (u->held + need > u->cap)
		return TAKE_CAP;
	while (p->nfree < need && grow(p) == 0)
		;
	if (p->nfree < need)
		return need > pool_bound(p) ? TAKE_NEVER : TAKE_POOL;
	for (unsigned i = 0; i < need; i++)
		out[i] = p->free[--p->nfree];
	u->held += need;
	return TAKE_OK;
}

enum rdma_pool_get_result rdma_pool_get(struct rdma_pool *p, struct rdma_pool_user *u, unsigned need,
					int *out)
{
	if (need > u->cap || need > pool_bound(p))
		return RDMA_POOL_NEVER;
	if (!queue_empty(&p->waiters))
		return RDMA_POOL_WAIT; /* FIFO: nobody overtakes a waiting call */
	switch (take(p, u, need, out)) {
	case TAKE_OK:
		return RDMA_POOL_OK;
	case TAKE_NEVER:
		return RDMA_POOL_NEVER;
	default:
		return RDMA_POOL_WAIT;
	}
}

void rdma_pool_wait(struct rdma_pool *p, struct rdma_pool_waiter *w)
{
	queue_push(&p->waiters, &w->link);
	p->nwaiters++;
	p->waits++;
}

void rdma_pool_cancel(struct rdma_pool *p, struct rdma_pool_waiter *w)
{
	if (queue_remove(&p->waiters, &w->link))
		p->nwaiters--;
}

/* Serve the first waiter that can be served; false when none can. The
 * waiter is off the queue before granted() runs (which may re-enter). */
static bool resume_one(struct rdma_pool *p)
{
	p->pass++;
	for (struct queue_link *l = p->waiters.head; l; l = l->next) {
		struct rdma_pool_waiter *w = container_of(l, struct rdma_pool_waiter, link);

		if (w->user->pass == p->pass)
			continue; /* its connection is at its cap: keep its order */
		enum take_result r = take(p, w->user, w->need, w->out);
		if (r == TAKE_POOL)
			return false; /* strict FIFO on the pool itself */
		if (r == TAKE_CAP) {
			w->user->pass = p->pass;
			continue;
		}
		queue_remove(&p->waiters, l);
		p->nwaiters--;
		w->granted(w, r == TAKE_OK);
		return true;
	}
	return false;
}

void rdma_pool_put(struct rdma_pool *p, struct rdma_pool_user *u, unsigned n, const int *slots)
{
	for (unsigned i = 0; i < n; i++)
		p->free[p->nfree++] = slots[i];
	u->held = u->held > n ? u->held - n : 0;
	rdma_pool_kick(p);
}

void rdma_pool_kick(struct rdma_pool *p)
{
	if (p->resuming) {
		p->again = true; /* the outer pass picks it up */
		return;
	}
	p->resuming = true;
	do {
		p->again = false;
		while (resume_one(p))
			;
	} while (p->again);
	p->resuming = false;
}

uint32_t rdma_pool_lkey_for(const struct rdma_pool *p, const uint8_t *addr, uint32_t len)
{
	for (unsigned i = 0; i < p->nchunks; i++) {
		const struct rdma_pool_chunk *c = &p->chunks[i];
		if (addr >= c->mem && addr + len <= c->mem + c->bytes)
			return c->lkey;
	}
	return 0;
}

size_t rdma_pool_registered(const struct rdma_pool *p)
{
	size_t n = 0;

	for (unsigned i = 0; i < p->nchunks; i++)
		n += p->chunks[i].bytes;
	return n;
}

unsigned rdma_pool_in_use(const struct rdma_pool *p)
{
	return p->nslots - p->nfree;
}
