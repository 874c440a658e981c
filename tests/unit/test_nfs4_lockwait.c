/*
 * test_nfs4_lockwait.c - waiters for NFSv4.1+ blocking locks
 * (nfs/v4/state/nfs4_lockwait.c): recording (the same waiter again refreshes it),
 * taking out by file or all, the per-client and total bounds, oversize
 * handles and owners refused, a client going, expiry after a lease.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/state/nfs4_lockwait.h"

static struct nfs4_lockwait_tab t;

static int setup(void **state)
{
	(void)state;
	nfs4_lockwait_init(&t);
	return 0;
}

static struct nfs4_lockwait w(uint64_t client, const char *fh, const char *owner)
{
	struct nfs4_lockwait x;

	memset(&x, 0, sizeof(x));
	x.clientid = client;
	x.owner_clientid = client;
	x.fh_len = (uint32_t)strlen(fh);
	memcpy(x.fh, fh, x.fh_len);
	x.owner_len = (uint32_t)strlen(owner);
	memcpy(x.owner, owner, x.owner_len);
	return x;
}

static void test_add_take(void **state)
{
	struct nfs4_lockwait a = w(1, "fileA", "ownerB"), b = w(2, "fileB", "o2"), c = w(3, "fileA", "o3");
	struct nfs4_lockwait got[4];

	(void)state;
	assert_true(nfs4_lockwait_add(&t, &a, 10));
	assert_true(nfs4_lockwait_add(&t, &a, 20)); /* again: refreshed, not doubled */
	assert_true(nfs4_lockwait_add(&t, &b, 10));
	assert_true(nfs4_lockwait_add(&t, &c, 10));
	assert_int_equal(nfs4_lockwait_count(&t, 0), 3);
	assert_int_equal(nfs4_lockwait_take(&t, (const uint8_t *)"fileA", 5, got, 4), 2);
	assert_true((got[0].clientid == 1 && got[1].clientid == 3) || (got[0].clientid == 3 && got[1].clientid == 1));
	assert_memory_equal(got[0].fh, "fileA", 5);
	assert_int_equal(got[0].clientid == 1 ? got[0].since : got[1].since, 20);
	assert_int_equal(nfs4_lockwait_count(&t, 0), 1);
	assert_int_equal(nfs4_lockwait_take(&t, (const uint8_t *)"fileA", 5, got, 4), 0); /* taken once */
	assert_int_equal(nfs4_lockwait_take(&t, NULL, 0, got, 4), 1);                    /* any file */
	assert_int_equal(got[0].clientid, 2);
	assert_int_equal(got[0].owner_len, 2);
	assert_memory_equal(got[0].owner, "o2", 2);
}

static void test_take_batches(void **state)
{
	struct nfs4_lockwait got[2];
	char owner[8];

	(void)state;
	for (int i = 0; i < 5; i++) {
		struct nfs4_lockwait x;

		snprintf(owner, sizeof(owner), "o%d", i);
		x = w(1, "f", owner);
		assert_true(nfs4_lockwait_add(&t, &x, 1));
	}
	assert_int_equal(nfs4_lockwait_take(&t, NULL, 0, got, 2), 2);
	assert_int_equal(nfs4_lockwait_take(&t, NULL, 0, got, 2), 2);
	assert_int_equal(nfs4_lockwait_take(&t, NULL, 0, got, 2), 1);
	assert_int_equal(nfs4_lockwait_count(&t, 0), 0);
}

static void test_bounds(void **state)
{
	struct nfs4_lockwait x;
	char owner[16];
	unsigned n = 0;

	(void)state;
	for (unsigned i = 0; i < NFS4_LOCKWAIT_PER_CLIENT; i++) {
		snprintf(owner, sizeof(owner), "o%u", i);
		x = w(1, "f", owner);
		assert_true(nfs4_lockwait_add(&t, &x, 1));
	}
	x = w(1, "f", "one-more");
	assert_false(nfs4_lockwait_add(&t, &x, 1));
	for (uint64_t c = 2; c < 1000; c++) {
		x = w(c, "f", "o");
		if (!nfs4_lockwait_add(&t, &x, 1))
			break;
		n++;
	}
	assert_int_equal(n + NFS4_LOCKWAIT_PER_CLIENT, NFS4_LOCKWAIT_MAX);
	nfs4_lockwait_init(&t);
	x = w(1, "f", "o");
	x.fh_len = NFS4_LOCKWAIT_FH_MAX + 1;
	assert_false(nfs4_lockwait_add(&t, &x, 1));
	x = w(1, "f", "o");
	x.owner_len = NFS4_LOCKWAIT_OWNER_MAX + 1;
	assert_false(nfs4_lockwait_add(&t, &x, 1));
}

static void test_gone_expire(void **state)
{
	struct nfs4_lockwait a = w(1, "f", "a"), b = w(2, "f", "b"), c = w(2, "g", "c");

	(void)state;
	assert_true(nfs4_lockwait_add(&t, &a, 100));
	assert_true(nfs4_lockwait_add(&t, &b, 100));
	assert_true(nfs4_lockwait_add(&t, &c, 150));
	assert_int_equal(nfs4_lockwait_client_gone(&t, 1), 1);
	assert_int_equal(nfs4_lockwait_count(&t, 1), 0);
	assert_int_equal(nfs4_lockwait_expire(&t, 190, 90), 0);
	assert_int_equal(nfs4_lockwait_expire(&t, 191, 90), 1); /* b: more than a lease */
	assert_int_equal(nfs4_lockwait_count(&t, 2), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_add_take, setup),
		cmocka_unit_test_setup(test_take_batches, setup),
		cmocka_unit_test_setup(test_bounds, setup),
		cmocka_unit_test_setup(test_gone_expire, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
