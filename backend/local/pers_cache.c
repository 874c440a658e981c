/*
 * pers_cache.c - the bounded LRU cache of io_uring personalities declared
 * in pers_cache.h: entries in one array, hash chains and the LRU list as
 * indices into it, free entries on a list. Nothing here calls the kernel.
 */
#include "backend/local/pers_cache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The key as compared: ngroups clamped, groups beyond it ignored. */
static void pers_key(struct be_cred *k, const struct be_cred *cr)
{
	memset(k, 0, sizeof(*k));
	k->uid = cr->uid;
	k->gid = cr->gid;
	k->ngroups = cr->ngroups <= BE_CRED_MAX_GROUPS ? cr->ngroups : BE_CRED_MAX_GROUPS;
	memcpy(k->groups, cr->groups, k->ngroups * sizeof(k->groups[0]));
}

static bool pers_same(const struct be_cred *a, const struct be_cred *b)
{
	return a->uid == b->uid && a->gid == b->gid && a->ngroups == b->ngroups &&
	       !memcmp(a->groups, b->groups, a->ngroups * sizeof(a->groups[0]));
}

/* FNV-1a over the key's words. */
static uint32_t pers_hash(const struct be_cred *k)
{
	uint32_t h = 2166136261u;
	uint32_t w[3] = { k->uid, k->gid, k->ngroups };

	for (unsigned i = 0; i < 3 + k->ngroups; i++) {
		uint32_t v = i < 3 ? w[i] : k->groups[i - 3];
		for (unsigned b = 0; b < 4; b++) {
			h ^= (v >> (8 * b)) & 0xffu;
			h *= 16777619u;
		}
	}
	return h;
}

int pers_cache_init(struct pers_cache *c, unsigned bound, const struct pers_cache_ops *ops)
{
	memset(c, 0, sizeof(*c));
	if (bound < 1 || bound > PERS_CACHE_MAX || !ops || !ops->reg || !ops->unreg)
		return -EINVAL;
	c->nbucket = 1;
	while (c->nbucket < 2 * bound)
		c->nbucket <<= 1;
	c->e = calloc(bound, sizeof(*c->e));
	c->bucket = malloc(c->nbucket * sizeof(*c->bucket));
	if (!c->e || !c->bucket) {
		pers_cache_release(c);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < c->nbucket; i++)
		c->bucket[i] = -1;
	for (unsigned i = 0; i < bound; i++)
		c->e[i].hnext = i + 1 < bound ? (int32_t)(i + 1) : -1;
	c->free_head = 0;
	c->lru_head = c->lru_tail = -1;
	c->bound = bound;
	c->ops = *ops;
	return 0;
}

static void lru_unlink(struct pers_cache *c, int32_t i)
{
	struct pers_entry *e = &c->e[i];

	if (e->prev >= 0)
		c->e[e->prev].next = e->next;
	else
		c->lru_head = e->next;
	if (e->next >= 0)
		c->e[e->next].prev = e->prev;
	else
		c->lru_tail = e->prev;
}

static void lru_push_front(struct pers_cache *c, int32_t i)
{
	struct pers_entry *e = &c->e[i];

	e->prev = -1;
	e->next = c->lru_head;
	if (c->lru_head >= 0)
		c->e[c->lru_head].prev = i;
	else
		c->lru_tail = i;
	c->lru_head = i;
}

/* Take entry i out of its hash chain. */
static void hash_unlink(struct pers_cache *c, int32_t i)
{
	int32_t *p = &c->bucket[c->e[i].hash & (c->nbucket - 1)];

	while (*p != i)
		p = &c->e[*p].hnext;
	*p = c->e[i].hnext;
}

/* Evict the least recently used entry: unregistered, on the free list. */
static void pers_evict(struct pers_cache *c)
{
	int32_t i = c->lru_tail;

	lru_unlink(c, i);
	hash_unlink(c, i);
	c->ops.unreg(c->ops.arg, c->e[i].id);
	c->e[i].hnext = c->free_head;
	c->free_head = i;
	c->count--;
	c->evictions++;
}

void pers_cache_release(struct pers_cache *c)
{
	if (c->e) {
		while (c->count)
			pers_evict(c);
	}
	free(c->e);
	free(c->bucket);
	c->e = NULL;
	c->bucket = NULL;
	c->bound = 0;
}

int pers_cache_get(struct pers_cache *c, const struct be_cred *cr)
{
	struct be_cred k;
	int32_t i;

	pers_key(&k, cr);
	uint32_t h = pers_hash(&k);
	for (i = c->bucket[h & (c->nbucket - 1)]; i >= 0; i = c->e[i].hnext) {
		if (c->e[i].hash == h && pers_same(&c->e[i].key, &k)) {
			c->hits++;
			if (c->lru_head != i) {
				lru_unlink(c, i);
				lru_push_front(c, i);
			}
			return c->e[i].id;
		}
	}
	c->misses++;
	if (c->count == c->bound)
		pers_evict(c);
	int id = c->ops.reg(c->ops.arg, &k);
	if (id < 0) {
		c->failures++;
		return id;
	}
	i = c->free_head;
	c->free_head = c->e[i].hnext;
	c->e[i].key = k;
	c->e[i].id = id;
	c->e[i].hash = h;
	c->e[i].hnext = c->bucket[h & (c->nbucket - 1)];
	c->bucket[h & (c->nbucket - 1)] = i;
	lru_push_front(c, i);
	c->count++;
	return id;
}

unsigned pers_cache_count(const struct pers_cache *c)
{
	return c->count;
}
