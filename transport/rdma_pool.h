/*
 * rdma_pool.h - the registered bulk-buffer pool of an RPC-over-RDMA
 * transport: one per device (protection domain), shared by every connection
 * on it, instead of bulk memory registered per connection.
 *
 * Pure accounting, no verbs: the pool asks a hook to register memory (the
 * verbs shell passes one that calls ibv_reg_mr; the unit test, malloc), so
 * the waiting rules are unit-tested without a device. Loop thread only.
 *
 *  - Slots of slot_size bytes (Read chunk data, READ payloads, long replies:
 *    the largest payload plus slack). The pool grows lazily, chunk_slots
 *    slots (one registration) at a time, up to max_slots ([rdma]
 *    buffer-pool / slot_size); it never shrinks while the transport lives.
 *    The hot path never registers: a registration happens at most
 *    max_slots / chunk_slots times in the life of the transport.
 *  - A call takes every slot it needs at once (rdma_pool_get), so a call
 *    that holds slots never waits for more and no cycle of waiters forms.
 *  - Each connection (struct rdma_pool_user) holds at most `cap` slots, so
 *    that one client cannot take the whole pool.
 *  - A call that finds no slot waits (rdma_pool_wait) and is never failed
 *    for lack of buffers: waiters form one FIFO across connections, resumed
 *    as slots come back (rdma_pool_put). A waiter the pool cannot serve
 *    (not enough free slots) stops the queue: nobody overtakes it, so a
 *    call needing three slots is not starved by calls needing one. A waiter
 *    held back by its own connection's cap is passed over (with its
 *    connection's later waiters) until its connection releases slots.
 */
#ifndef RNFSD_RDMA_POOL_H
#define RNFSD_RDMA_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/queue.h"

/* Fewest slots a pool has: the most one call can need (Read data, payload,
 * long reply). */
#define RDMA_POOL_MIN_SLOTS 3u
/* Most slots one connection holds (the per-connection budget before the pool). */
#define RDMA_POOL_USER_MAX 16u

/* One registration: slots [first, first + n) of the pool. */
struct rdma_pool_chunk {
	uint8_t *mem;
	size_t bytes;
	uint32_t lkey;
	void *handle; /* the hook's (struct ibv_mr *) */
};

/* Register / deregister a chunk (c->bytes set; fill mem, lkey, handle). 0 or -1. */
typedef int (*rdma_pool_reg_fn)(void *arg, struct rdma_pool_chunk *c);
typedef void (*rdma_pool_dereg_fn)(void *arg, struct rdma_pool_chunk *c);

/* One connection's account. */
struct rdma_pool_user {
	unsigned held;       /* slots its calls hold */
	unsigned cap;        /* most it may hold: rdma_pool_user_init() */
	unsigned pass;       /* rdma_pool's pass number that found it at its cap */
};

struct rdma_pool_waiter {
	struct queue_link link;
	struct rdma_pool_user *user;
	unsigned need;       /* 1..RDMA_POOL_MIN_SLOTS */
	int *out;            /* receives the need slot indices */
	/* The slots are in out (ok), or the pool can never serve the call
	 * (registration failed and the pool is smaller than need). May call
	 * back into the pool. */
	void (*granted)(struct rdma_pool_waiter *w, bool ok);
};

struct rdma_pool {
	uint32_t slot_size;
	unsigned max_slots;      /* configured bound */
	unsigned chunk_slots;    /* slots per registration */
	unsigned nslots;         /* registered so far */
	unsigned nfree;
	int *free;               /* stack of free slot indices (max_slots) */
	struct rdma_pool_chunk *chunks;
	unsigned nchunks;
	bool reg_failed;         /* stop growing: the hook failed once */

	struct queue waiters;
	unsigned nwaiters;
	unsigned pass;           /* resume passes, to mark users at their cap */
	bool resuming, again;    /* re-entrancy of rdma_pool_put via granted() */
	uint64_t waits;          /* calls that had to wait, ever */

	rdma_pool_reg_fn reg;
	rdma_pool_dereg_fn dereg;
	void *reg_arg;
};

/* Slots of slot_size bytes for `bytes` (at least RDMA_POOL_MIN_SLOTS);
 * nothing registered yet. 0, or -1 (out of memory). */
int rdma_pool_init(struct rdma_pool *p, size_t bytes, uint32_t slot_size, unsigned chunk_slots,
		   rdma_pool_reg_fn reg, rdma_pool_dereg_fn dereg, void *reg_arg);
/* Deregister and free everything. No waiter may remain. */
void rdma_pool_fini(struct rdma_pool *p);

/* A connection's account: cap = max_slots / 2, within
 * RDMA_POOL_MIN_SLOTS..RDMA_POOL_USER_MAX (and the pool). */
void rdma_pool_user_init(const struct rdma_pool *p, struct rdma_pool_user *u);

enum rdma_pool_get_result {
	RDMA_POOL_OK,     /* out[0..need) hold slots */
	RDMA_POOL_WAIT,   /* none now: rdma_pool_wait() */
	RDMA_POOL_NEVER,  /* need exceeds the user's cap or the pool */
};

/* Take need slots at once, unless someone waits already (FIFO) or there
 * are not enough (growing the pool by a chunk if it may). */
enum rdma_pool_get_result rdma_pool_get(struct rdma_pool *p, struct rdma_pool_user *u, unsigned need,
					int *out);
/* Queue w (need, user, out, granted set) at the tail. */
void rdma_pool_wait(struct rdma_pool *p, struct rdma_pool_waiter *w);
/* Take w off the queue (its connection closes); then rdma_pool_kick(), as
 * those it held back may go now. */
void rdma_pool_cancel(struct rdma_pool *p, struct rdma_pool_waiter *w);
/* n slots come back from u; waiters that can now be served are granted. */
void rdma_pool_put(struct rdma_pool *p, struct rdma_pool_user *u, unsigned n, const int *slots);

/* Serve the waiters that can be served now. */
void rdma_pool_kick(struct rdma_pool *p);

static inline uint8_t *rdma_pool_buf(const struct rdma_pool *p, int slot)
{
	const struct rdma_pool_chunk *c = &p->chunks[(unsigned)slot / p->chunk_slots];
	return c->mem + (size_t)((unsigned)slot % p->chunk_slots) * p->slot_size;
}

static inline uint32_t rdma_pool_lkey(const struct rdma_pool *p, int slot)
{
	return p->chunks[(unsigned)slot / p->chunk_slots].lkey;
}

/* The lkey of the chunk holding [addr, addr + len), or 0. */
uint32_t rdma_pool_lkey_for(const struct rdma_pool *p, const uint8_t *addr, uint32_t len);

/* Bytes registered now, slots in use. */
size_t rdma_pool_registered(const struct rdma_pool *p);
unsigned rdma_pool_in_use(const struct rdma_pool *p);

#endif
