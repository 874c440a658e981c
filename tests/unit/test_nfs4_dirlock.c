/*
 * test_nfs4_dirlock.c - nfs/v4/ops/nfs4_dirlock.c: rnfsd's changes to one
 * directory one at a time (the ground for change_info4's atomic):
 *  - one directory is one stripe; RENAME's two are taken lowest first, one
 *    stripe once when both directories hash to it;
 *  - mutual exclusion: two threads read-modify-write one value under the
 *    lock of the same directory, yielding in between; none is lost
 *    (without the lock the yield loses increments);
 *  - no deadlock when two threads RENAME between the same two directories
 *    in opposite directions;
 *  - drop of nothing held is a no-op.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>

#include <cmocka.h>

#include "nfs/v4/xdr/nfs4_mod.h"

#define ROUNDS 20000

static void test_stripes(void **state)
{
	struct nfs4_dirlock h = { 0 };
	uint64_t a = 1, b = 2;

	(void)state;
	while (nfs4_dirlock_stripe(b) == nfs4_dirlock_stripe(a))
		b++;
	nfs4_dirlock_drop(&h); /* nothing held: nothing happens */
	nfs4_dirlock_take(&h, b, &a);
	assert_true(h.held);
	assert_int_equal(h.first, nfs4_dirlock_stripe(a) < nfs4_dirlock_stripe(b) ? nfs4_dirlock_stripe(a)
										 : nfs4_dirlock_stripe(b));
	assert_true(h.second > (int)h.first);
	nfs4_dirlock_drop(&h);
	assert_false(h.held);
	nfs4_dirlock_take(&h, a, &a); /* one directory twice: one stripe */
	assert_int_equal(h.second, -1);
	nfs4_dirlock_drop(&h);
	nfs4_dirlock_take(&h, a, NULL); /* taken again: the drops released it */
	nfs4_dirlock_drop(&h);
}

static unsigned long shared_value;

static void *bump(void *arg)
{
	uint64_t dir = (uint64_t)(uintptr_t)arg;

	for (int i = 0; i < ROUNDS; i++) {
		struct nfs4_dirlock h = { 0 };

		nfs4_dirlock_take(&h, dir, NULL);
		unsigned long v = shared_value;

		if (i % 16 == 0)
			sched_yield();
		shared_value = v + 1;
		nfs4_dirlock_drop(&h);
	}
	return NULL;
}

static void test_exclusion(void **state)
{
	pthread_t t1, t2;

	(void)state;
	shared_value = 0;
	assert_int_equal(pthread_create(&t1, NULL, bump, (void *)(uintptr_t)77), 0);
	assert_int_equal(pthread_create(&t2, NULL, bump, (void *)(uintptr_t)77), 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	assert_int_equal(shared_value, 2 * ROUNDS);
}

struct pair {
	uint64_t from, to;
};

static void *renames(void *arg)
{
	const struct pair *p = arg;

	for (int i = 0; i < ROUNDS; i++) {
		struct nfs4_dirlock h = { 0 };

		nfs4_dirlock_take(&h, p->from, &p->to);
		nfs4_dirlock_drop(&h);
	}
	return NULL;
}

static void test_rename_order(void **state)
{
	struct pair ab = { 10, 11 }, ba;
	pthread_t t1, t2;

	(void)state;
	while (nfs4_dirlock_stripe(ab.to) == nfs4_dirlock_stripe(ab.from))
		ab.to++;
	ba = (struct pair){ ab.to, ab.from };
	assert_int_equal(pthread_create(&t1, NULL, renames, &ab), 0);
	assert_int_equal(pthread_create(&t2, NULL, renames, &ba), 0);
	pthread_join(t1, NULL); /* a deadlock hangs here (meson's timeout fails it) */
	pthread_join(t2, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stripes),
		cmocka_unit_test(test_exclusion),
		cmocka_unit_test(test_rename_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
