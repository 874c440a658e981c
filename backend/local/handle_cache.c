/*
 * handle_cache.c - file handles by inode identity (device, inode, birth
 * time) for directory listings: see handle_cache.h for why a cached handle
 * is always the right one, the bound and the locking.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/local/handle_cache.h"

static uint64_t hc_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static uint32_t hc_set(const struct handle_cache *c, const struct handle_cache_key *k)
{
	uint64_t h = hc_mix(k->ino ^ hc_mix(k->dev ^ ((uint64_t)k->btime_sec << 30) ^ k->btime_nsec));

	return (uint32_t)h & (c->nset - 1);
}

static bool hc_key_eq(const struct handle_cache_key *a, const struct handle_cache_key *b)
{
	return a->ino == b->ino && a->dev == b->dev && a->btime_sec == b->btime_sec &&
	       a->btime_nsec == b->btime_nsec;
}

int handle_cache_init(struct handle_cache *c, unsigned entries)
{
	uint32_t nset = 1;

	memset(c, 0, sizeof(*c));
	if (entries == 0)
		return 0;
	while ((uint64_t)nset * HANDLE_CACHE_WAYS < entries && nset < (1u << 24))
		nset <<= 1;
	c->slot = calloc((size_t)nset * HANDLE_CACHE_WAYS, sizeof(*c->slot));
	c->turn = calloc(nset, 1);
	if (!c->slot || !c->turn) {
		handle_cache_release(c);
		return ENOMEM;
	}
	c->nset = nset;
	for (unsigned i = 0; i < HANDLE_CACHE_STRIPES; i++)
		pthread_mutex_init(&c->stripe[i], NULL);
	return 0;
}

void handle_cache_release(struct handle_cache *c)
{
	if (c->nset)
		for (unsigned i = 0; i < HANDLE_CACHE_STRIPES; i++)
			pthread_mutex_destroy(&c->stripe[i]);
	free(c->slot);
	free(c->turn);
	memset(c, 0, sizeof(*c));
}

bool handle_cache_get(struct handle_cache *c, const struct handle_cache_key *k, struct be_handle *out)
{
	uint32_t set;
	struct handle_cache_slot *s;
	bool hit = false;

	if (!c->nset)
		return false;
	set = hc_set(c, k);
	s = &c->slot[(size_t)set * HANDLE_CACHE_WAYS];
	pthread_mutex_lock(&c->stripe[set % HANDLE_CACHE_STRIPES]);
	for (unsigned w = 0; w < HANDLE_CACHE_WAYS && !hit; w++) {
		if (s[w].len && hc_key_eq(&s[w].key, k)) {
			out->len = s[w].len;
			memcpy(out->data, s[w].data, s[w].len);
			hit = true;
		}
	}
	pthread_mutex_unlock(&c->stripe[set % HANDLE_CACHE_STRIPES]);
	atomic_fetch_add_explicit(hit ? &c->hits : &c->misses, 1, memory_order_relaxed);
	return hit;
}

/* The slot of set s to (re)fill for k: k's own, else an empty one, else the set's turn. */
static struct handle_cache_slot *hc_victim(struct handle_cache *c, uint32_t set, const struct handle_cache_key *k,
					   bool *was_empty)
{
	struct handle_cache_slot *s = &c->slot[(size_t)set * HANDLE_CACHE_WAYS], *empty = NULL;

	for (unsigned w = 0; w < HANDLE_CACHE_WAYS; w++) {
		if (s[w].len && hc_key_eq(&s[w].key, k)) {
			*was_empty = false;
			return &s[w];
		}
		if (!s[w].len && !empty)
			empty = &s[w];
	}
	*was_empty = empty != NULL;
	if (empty)
		return empty;
	c->turn[set] = (uint8_t)((c->turn[set] + 1) % HANDLE_CACHE_WAYS);
	return &s[c->turn[set]];
}

void handle_cache_put(struct handle_cache *c, const struct handle_cache_key *k, const struct be_handle *h)
{
	struct handle_cache_slot *v;
	uint32_t set;
	bool was_empty;

	if (!c->nset || h->len == 0 || h->len > HANDLE_CACHE_DATA)
		return;
	set = hc_set(c, k);
	pthread_mutex_lock(&c->stripe[set % HANDLE_CACHE_STRIPES]);
	v = hc_victim(c, set, k, &was_empty);
	v->key = *k;
	v->len = (uint8_t)h->len;
	memcpy(v->data, h->data, h->len);
	pthread_mutex_unlock(&c->stripe[set % HANDLE_CACHE_STRIPES]);
	if (was_empty)
		atomic_fetch_add_explicit(&c->entries, 1, memory_order_relaxed);
}

void handle_cache_counts(struct handle_cache *c, struct handle_cache_counts *out)
{
	out->entries = atomic_load_explicit(&c->entries, memory_order_relaxed);
	out->max = (uint64_t)c->nset * HANDLE_CACHE_WAYS;
	out->hits = atomic_load_explicit(&c->hits, memory_order_relaxed);
	out->misses = atomic_load_explicit(&c->misses, memory_order_relaxed);
}
