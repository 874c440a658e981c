/*
 * test_handle_cache.c - backend/local/handle_cache.c, file handles by inode
 * identity: a put handle is got back byte for byte; every part of the key
 * (device, inode, birth seconds and nanoseconds) tells entries apart, so a
 * reused inode number with a new birth time is a miss; a too long handle is
 * not kept; the cache never holds more than its bound and keeps a hot key
 * through a stream of 200,000 others only as a set allows (the entry count
 * and the slots agree); a zero-size cache keeps nothing; four threads
 * putting and getting never see a handle of another key.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backend/local/handle_cache.h"

/* A handle that spells its key, so a wrong one is seen. */
static struct be_handle handle_of(const struct handle_cache_key *k)
{
	struct be_handle h = { .len = 4 + 8 + 8 };

	memset(h.data, 0xee, sizeof(h.data));
	memcpy(h.data, "\0\0\0\1", 4);
	memcpy(h.data + 4, &k->ino, 8);
	memcpy(h.data + 12, &k->btime_nsec, 4);
	memcpy(h.data + 16, &k->dev, 4);
	return h;
}

static struct handle_cache_key key(uint64_t dev, uint64_t ino, int64_t sec, uint32_t nsec)
{
	return (struct handle_cache_key){ .dev = dev, .ino = ino, .btime_sec = sec, .btime_nsec = nsec };
}

static void test_put_get(void **state)
{
	struct handle_cache c;
	struct handle_cache_key k = key(2049, 12, 1700000000, 5);
	struct be_handle h = handle_of(&k), out = { 0 };
	struct handle_cache_counts n;

	(void)state;
	assert_int_equal(handle_cache_init(&c, 64), 0);
	assert_false(handle_cache_get(&c, &k, &out));
	handle_cache_put(&c, &k, &h);
	assert_true(handle_cache_get(&c, &k, &out));
	assert_int_equal(out.len, h.len);
	assert_memory_equal(out.data, h.data, h.len);
	handle_cache_put(&c, &k, &h); /* again: still one entry */
	handle_cache_counts(&c, &n);
	assert_int_equal(n.entries, 1);
	assert_int_equal(n.hits, 1);
	assert_int_equal(n.misses, 1);
	assert_true(n.max >= 64);
	handle_cache_release(&c);
}

static void test_key_parts(void **state)
{
	struct handle_cache c;
	struct handle_cache_key k = key(2049, 12, 1700000000, 5);
	struct handle_cache_key other[] = {
		key(2050, 12, 1700000000, 5), key(2049, 13, 1700000000, 5),
		key(2049, 12, 1700000001, 5), key(2049, 12, 1700000000, 6), /* the inode number reused */
	};
	struct be_handle h = handle_of(&k), out;

	(void)state;
	assert_int_equal(handle_cache_init(&c, 1024), 0);
	handle_cache_put(&c, &k, &h);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		assert_false(handle_cache_get(&c, &other[i], &out));
	assert_true(handle_cache_get(&c, &k, &out));
	handle_cache_release(&c);
}

static void test_long_handle_and_zero(void **state)
{
	struct handle_cache c;
	struct handle_cache_key k = key(1, 2, 3, 4);
	struct be_handle h = { .len = HANDLE_CACHE_DATA + 1 }, out;

	(void)state;
	assert_int_equal(handle_cache_init(&c, 16), 0);
	handle_cache_put(&c, &k, &h);
	assert_false(handle_cache_get(&c, &k, &out));
	h.len = 0;
	handle_cache_put(&c, &k, &h);
	assert_false(handle_cache_get(&c, &k, &out));
	handle_cache_release(&c);
	assert_int_equal(handle_cache_init(&c, 0), 0); /* keeps nothing */
	h = handle_of(&k);
	handle_cache_put(&c, &k, &h);
	assert_false(handle_cache_get(&c, &k, &out));
	handle_cache_release(&c);
}

/* 200,000 keys through a cache of 256: bounded, and what it answers is right. */
static void test_bound(void **state)
{
	struct handle_cache c;
	struct handle_cache_counts n;
	struct be_handle h, out;
	unsigned filled = 0, right = 0;

	(void)state;
	assert_int_equal(handle_cache_init(&c, 256), 0);
	for (uint64_t i = 0; i < 200000; i++) {
		struct handle_cache_key k = key(7, i, (int64_t)i * 3, (uint32_t)i);

		h = handle_of(&k);
		handle_cache_put(&c, &k, &h);
	}
	handle_cache_counts(&c, &n);
	assert_int_equal(n.max, 256);
	assert_int_equal(n.entries, 256); /* every slot filled once, never counted twice */
	for (size_t s = 0; s < n.max; s++)
		filled += c.slot[s].len != 0;
	assert_int_equal(filled, 256);
	for (uint64_t i = 199000; i < 200000; i++) {
		struct handle_cache_key k = key(7, i, (int64_t)i * 3, (uint32_t)i);

		h = handle_of(&k);
		if (handle_cache_get(&c, &k, &out)) {
			assert_memory_equal(out.data, h.data, h.len);
			right++;
		}
	}
	assert_true(right > 0 && right <= 256);
	handle_cache_release(&c);
}

struct worker_arg {
	struct handle_cache *c;
	unsigned id, wrong;
};

static void *worker(void *p)
{
	struct worker_arg *w = p;
	struct be_handle h, out;

	for (uint64_t i = 0; i < 50000; i++) {
		struct handle_cache_key k = key(9, i % 3000, (int64_t)(i % 3000), w->id);

		h = handle_of(&k);
		if (handle_cache_get(w->c, &k, &out)) {
			if (out.len != h.len || memcmp(out.data, h.data, h.len))
				w->wrong++;
		} else {
			handle_cache_put(w->c, &k, &h);
		}
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct handle_cache c;
	struct worker_arg w[4];
	pthread_t t[4];
	struct handle_cache_counts n;

	(void)state;
	assert_int_equal(handle_cache_init(&c, 4096), 0);
	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct worker_arg){ .c = &c, .id = i };
		assert_int_equal(pthread_create(&t[i], NULL, worker, &w[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].wrong, 0);
	}
	handle_cache_counts(&c, &n);
	assert_true(n.entries <= n.max);
	assert_int_equal(n.hits + n.misses, 200000);
	handle_cache_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_key_parts),
		cmocka_unit_test(test_long_handle_and_zero),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
