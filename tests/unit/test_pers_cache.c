/*
 * test_pers_cache.c - backend/local/pers_cache.c, the bounded LRU cache of
 * io_uring personalities, with fake register/unregister callbacks: a hit
 * registers nothing; the key is uid, gid and the groups (in order, clamped
 * to BE_CRED_MAX_GROUPS); the least recently used entry is evicted and its
 * id unregistered exactly once; a failed registration caches nothing;
 * release unregisters everything; and a soak of 100,000 distinct identities
 * (with a hot one reused between them) keeps the cache at its bound with
 * exactly its entries registered.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backend/local/pers_cache.h"

#define FAKE_IDS 200000

/* The fake kernel: ids handed out in sequence, which are live. */
static struct {
	int next;
	unsigned live;
	unsigned char state[FAKE_IDS]; /* 0 never, 1 live, 2 unregistered */
	int fail;                      /* > 0: the next registration fails with -fail */
} fk;

static int fake_reg(void *arg, const struct be_cred *cr)
{
	(void)arg;
	(void)cr;
	if (fk.fail) {
		int e = fk.fail;
		fk.fail = 0;
		return -e;
	}
	assert_true(fk.next < FAKE_IDS);
	fk.state[fk.next] = 1;
	fk.live++;
	return fk.next++;
}

static void fake_unreg(void *arg, int id)
{
	(void)arg;
	assert_true(id >= 0 && id < fk.next);
	assert_int_equal(fk.state[id], 1); /* exactly once */
	fk.state[id] = 2;
	fk.live--;
}

static const struct pers_cache_ops fake_ops = { .reg = fake_reg, .unreg = fake_unreg };

static struct be_cred cred(uint32_t uid, uint32_t gid, uint32_t ngroups, uint32_t g0)
{
	struct be_cred c = { .uid = uid, .gid = gid, .ngroups = ngroups };

	for (uint32_t i = 0; i < ngroups && i < BE_CRED_MAX_GROUPS; i++)
		c.groups[i] = g0 + i;
	return c;
}

static int setup(void **state)
{
	(void)state;
	memset(&fk, 0, sizeof(fk));
	return 0;
}

static void test_init_bounds(void **state)
{
	struct pers_cache c;

	(void)state;
	assert_int_equal(pers_cache_init(&c, 0, &fake_ops), -EINVAL);
	assert_int_equal(pers_cache_init(&c, PERS_CACHE_MAX + 1, &fake_ops), -EINVAL);
	assert_int_equal(pers_cache_init(&c, 1, NULL), -EINVAL);
	pers_cache_release(&c); /* a refused init leaves a zeroed cache */
	assert_int_equal(pers_cache_init(&c, 1, &fake_ops), 0);
	pers_cache_release(&c);
}

static void test_hit_and_key(void **state)
{
	struct pers_cache c;
	struct be_cred a = cred(1000, 1000, 2, 100), b = a;

	(void)state;
	assert_int_equal(pers_cache_init(&c, 8, &fake_ops), 0);
	int id = pers_cache_get(&c, &a);
	assert_true(id >= 0);
	assert_int_equal(pers_cache_get(&c, &a), id);
	assert_int_equal(fk.live, 1);
	/* groups beyond ngroups are not part of the key */
	b.groups[5] = 77;
	assert_int_equal(pers_cache_get(&c, &b), id);
	/* another group, another gid, another uid, the groups' order: other personalities */
	b = a;
	b.groups[1] = 999;
	assert_int_not_equal(pers_cache_get(&c, &b), id);
	b = a;
	b.gid = 1001;
	assert_int_not_equal(pers_cache_get(&c, &b), id);
	b = a;
	b.uid = 0;
	assert_int_not_equal(pers_cache_get(&c, &b), id);
	b = a;
	b.groups[0] = a.groups[1];
	b.groups[1] = a.groups[0];
	assert_int_not_equal(pers_cache_get(&c, &b), id);
	/* more groups than a be_cred holds: clamped, same key as the full list */
	struct be_cred m = cred(5, 5, BE_CRED_MAX_GROUPS, 10), m2 = m;
	m2.ngroups = BE_CRED_MAX_GROUPS + 50;
	int mid = pers_cache_get(&c, &m);
	assert_int_equal(pers_cache_get(&c, &m2), mid);
	assert_int_equal(pers_cache_count(&c), 6);
	assert_int_equal(c.hits, 3);
	assert_int_equal(c.misses, 6);
	pers_cache_release(&c);
	assert_int_equal(fk.live, 0);
}

static void test_lru_eviction(void **state)
{
	struct pers_cache c;
	struct be_cred u[4];
	int id[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		u[i] = cred(2000 + (uint32_t)i, 100, 0, 0);
	assert_int_equal(pers_cache_init(&c, 3, &fake_ops), 0);
	for (int i = 0; i < 3; i++)
		id[i] = pers_cache_get(&c, &u[i]);
	assert_int_equal(pers_cache_get(&c, &u[0]), id[0]); /* u[1] is now the oldest */
	id[3] = pers_cache_get(&c, &u[3]);
	assert_int_equal(pers_cache_count(&c), 3);
	assert_int_equal(fk.state[id[1]], 2);
	assert_int_equal(fk.state[id[0]], 1);
	assert_int_equal(fk.state[id[2]], 1);
	assert_int_equal(c.evictions, 1);
	/* u[1] again: registered anew, evicting u[2] (the oldest now) */
	int again = pers_cache_get(&c, &u[1]);
	assert_int_not_equal(again, id[1]);
	assert_int_equal(fk.state[id[2]], 2);
	assert_int_equal(fk.live, 3);
	pers_cache_release(&c);
	assert_int_equal(fk.live, 0);
}

static void test_failed_registration(void **state)
{
	struct pers_cache c;
	struct be_cred a = cred(1, 1, 0, 0), b = cred(2, 2, 0, 0);

	(void)state;
	assert_int_equal(pers_cache_init(&c, 1, &fake_ops), 0);
	int ida = pers_cache_get(&c, &a);
	fk.fail = EAGAIN;
	assert_int_equal(pers_cache_get(&c, &b), -EAGAIN);
	/* the full cache made room first: a is gone, nothing cached for b */
	assert_int_equal(pers_cache_count(&c), 0);
	assert_int_equal(fk.state[ida], 2);
	assert_int_equal(c.failures, 1);
	assert_true(pers_cache_get(&c, &b) >= 0);
	assert_int_equal(pers_cache_count(&c), 1);
	pers_cache_release(&c);
	assert_int_equal(fk.live, 0);
}

/* 100,000 distinct identities through a cache of 256, one hot identity used
 * between them: the count never passes the bound, exactly the cached ids are
 * live, and the hot one is never evicted (it is always recent). */
static void test_soak(void **state)
{
	struct pers_cache c;
	struct be_cred hot = cred(0, 0, 0, 0);

	(void)state;
	assert_int_equal(pers_cache_init(&c, 256, &fake_ops), 0);
	int hot_id = pers_cache_get(&c, &hot);
	for (uint32_t i = 0; i < 100000; i++) {
		struct be_cred u = cred(10000 + i, 10000 + i % 97, i % (BE_CRED_MAX_GROUPS + 1), i);
		assert_true(pers_cache_get(&c, &u) >= 0);
		assert_true(pers_cache_count(&c) <= 256);
		assert_int_equal(fk.live, pers_cache_count(&c));
		if (i % 16 == 0)
			assert_int_equal(pers_cache_get(&c, &hot), hot_id);
	}
	assert_int_equal(pers_cache_count(&c), 256);
	assert_int_equal(fk.state[hot_id], 1);
	assert_int_equal(c.evictions, 100000 + 1 - 256);
	pers_cache_release(&c);
	assert_int_equal(fk.live, 0);
	for (int id = 0; id < fk.next; id++)
		assert_int_equal(fk.state[id], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_init_bounds, setup),
		cmocka_unit_test_setup(test_hit_and_key, setup),
		cmocka_unit_test_setup(test_lru_eviction, setup),
		cmocka_unit_test_setup(test_failed_registration, setup),
		cmocka_unit_test_setup(test_soak, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
