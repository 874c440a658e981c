/*
 * pers_cache.h - a bounded cache of io_uring personalities, one per caller
 * identity (uid, gid, supplementary groups), least recently used evicted.
 *
 * Pure bookkeeping: the cache never talks to the kernel. Registering and
 * unregistering are the owner's callbacks (local_uring.c: a short-lived
 * helper thread applies the identity and calls IORING_REGISTER_PERSONALITY;
 * IORING_UNREGISTER_PERSONALITY on eviction), so the cache is unit-tested
 * with fakes (tests/unit/test_pers_cache.c).
 *
 * Ownership: one cache per ring, used only by the thread that owns the ring
 * (no lock). All memory is taken by pers_cache_init(); a lookup, a miss and
 * an eviction allocate nothing. Invariants:
 *   count <= bound; every entry on the LRU list is in exactly one hash chain
 *   and holds one registered id; an evicted or released entry's id was
 *   handed to unreg() exactly once.
 */
#ifndef RNFSD_BACKEND_LOCAL_PERS_CACHE_H
#define RNFSD_BACKEND_LOCAL_PERS_CACHE_H

#include <stdint.h>

#include "backend/backend.h"

#define PERS_CACHE_MAX 65535u /* the kernel's personality ids are 16 bits */

struct pers_entry {
	struct be_cred key;        /* ngroups clamped to BE_CRED_MAX_GROUPS */
	int id;                    /* the registered personality */
	uint32_t hash;
	int32_t hnext;             /* hash chain, or free list; -1 ends */
	int32_t prev, next;        /* LRU list, most recent first; -1 ends */
};

struct pers_cache_ops {
	/* Register cr as a personality: its id (>= 0), or a negative errno. */
	int (*reg)(void *arg, const struct be_cred *cr);
	/* Forget id (eviction, release). */
	void (*unreg)(void *arg, int id);
	void *arg;
};

struct pers_cache {
	struct pers_entry *e;      /* bound entries */
	int32_t *bucket;           /* nbucket chain heads */
	uint32_t nbucket;          /* a power of two, >= 2 * bound */
	unsigned bound, count;
	int32_t lru_head, lru_tail, free_head;
	struct pers_cache_ops ops;
	/* Counters (the owner's gauge): */
	uint64_t hits, misses, evictions, failures;
};

/* bound 1..PERS_CACHE_MAX. 0, or -ENOMEM / -EINVAL. */
int pers_cache_init(struct pers_cache *c, unsigned bound, const struct pers_cache_ops *ops);
/* Unregister every id and free the memory (an initialised or zeroed cache). */
void pers_cache_release(struct pers_cache *c);
/* The personality of cr: cached, or registered now (evicting the least
 * recently used one when full). The id (>= 0), or reg()'s negative errno
 * (nothing is cached then). */
int pers_cache_get(struct pers_cache *c, const struct be_cred *cr);
/* Entries held (the gauge). */
unsigned pers_cache_count(const struct pers_cache *c);

#endif
