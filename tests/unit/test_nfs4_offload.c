/*
 * test_nfs4_offload.c - the asynchronous COPY table (nfs/v4/state/nfs4_offload.c):
 * copy stateids (unique, naming their client, top counter bit), lookup by
 * client and stateid, progress, cancel (no longer found), completion,
 * release, the per-client and total bounds, a client going (running copies
 * cancelled and orphaned, done ones freed) and reaping after a lease.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/state/nfs4_offload.h"

static struct nfs4_offload_tab t;

static int setup(void **state)
{
	(void)state;
	nfs4_offload_init(&t, 0x11223344u);
	return 0;
}

static void test_create_find(void **state)
{
	int a = nfs4_offload_create(&t, 7, 100), b = nfs4_offload_create(&t, 7, 200);
	struct nfs4_stateid other;

	(void)state;
	assert_true(a >= 0 && b >= 0 && a != b);
	assert_int_equal(t.e[a].sid.seqid, 1);
	assert_memory_equal(t.e[a].sid.other, "\x11\x22\x33\x44\0\0\0\x07", 8);
	assert_true(t.e[a].sid.other[8] & 0x80);
	assert_memory_not_equal(t.e[a].sid.other, t.e[b].sid.other, NFS4_OTHER_SIZE);
	assert_int_equal(nfs4_offload_find(&t, 7, &t.e[a].sid), a);
	assert_int_equal(nfs4_offload_find(&t, 7, &t.e[b].sid), b);
	assert_int_equal(nfs4_offload_find(&t, 8, &t.e[a].sid), -1); /* another client's */
	memset(&other, 0, sizeof(other));
	assert_int_equal(nfs4_offload_find(&t, 7, &other), -1);
}

static void test_progress_complete_release(void **state)
{
	int a = nfs4_offload_create(&t, 7, 100);

	(void)state;
	nfs4_offload_progress(&t, a, 40);
	assert_int_equal(t.e[a].done, 40);
	assert_int_equal(t.e[a].state, NFS4_OFFLOAD_RUNNING);
	nfs4_offload_complete(&t, a, NFS4_OK, 2, 1000);
	assert_int_equal(t.e[a].state, NFS4_OFFLOAD_DONE);
	nfs4_offload_progress(&t, a, 99); /* no longer moves */
	assert_int_equal(t.e[a].done, 40);
	assert_int_equal(nfs4_offload_find(&t, 7, &t.e[a].sid), a); /* OFFLOAD_STATUS after completion */
	assert_false(nfs4_offload_cancel(&t, a));
	nfs4_offload_release(&t, a);
	assert_int_equal(t.e[a].state, NFS4_OFFLOAD_FREE);
	assert_int_equal(nfs4_offload_count(&t, 0), 0);
}

static void test_cancel(void **state)
{
	int a = nfs4_offload_create(&t, 7, 100);
	struct nfs4_stateid sid = t.e[a].sid;

	(void)state;
	assert_true(nfs4_offload_cancel(&t, a));
	assert_false(nfs4_offload_cancel(&t, a));
	assert_true(t.e[a].cancelled);
	assert_int_equal(nfs4_offload_find(&t, 7, &sid), -1);
	nfs4_offload_complete(&t, a, NFS4_OK, 2, 5); /* the runner stops: CB_OFFLOAD still goes */
	assert_int_equal(t.e[a].state, NFS4_OFFLOAD_DONE);
}

static void test_bounds(void **state)
{
	unsigned n = 0;

	(void)state;
	for (unsigned i = 0; i < NFS4_OFFLOAD_PER_CLIENT; i++)
		assert_true(nfs4_offload_create(&t, 1, 10) >= 0);
	assert_int_equal(nfs4_offload_create(&t, 1, 10), -1);
	for (uint64_t c = 2; nfs4_offload_create(&t, c, 10) >= 0; c++)
		n++;
	assert_int_equal(n + NFS4_OFFLOAD_PER_CLIENT, NFS4_OFFLOAD_MAX);
	assert_int_equal(nfs4_offload_count(&t, 0), NFS4_OFFLOAD_MAX);
	assert_int_equal(nfs4_offload_count(&t, 1), NFS4_OFFLOAD_PER_CLIENT);
}

static void test_client_gone(void **state)
{
	int run = nfs4_offload_create(&t, 3, 100), done = nfs4_offload_create(&t, 3, 100);
	int other = nfs4_offload_create(&t, 4, 100);

	(void)state;
	nfs4_offload_complete(&t, done, NFS4_OK, 2, 1);
	assert_int_equal(nfs4_offload_client_gone(&t, 3), 2);
	assert_int_equal(t.e[done].state, NFS4_OFFLOAD_FREE);
	assert_true(t.e[run].cancelled && t.e[run].orphaned);
	assert_int_equal(t.e[other].state, NFS4_OFFLOAD_RUNNING);
	nfs4_offload_complete(&t, run, NFS4_OK, 2, 2); /* the orphan's runner ends: freed, no callback */
	assert_int_equal(t.e[run].state, NFS4_OFFLOAD_FREE);
}

static void test_reap(void **state)
{
	int a = nfs4_offload_create(&t, 3, 100), b = nfs4_offload_create(&t, 3, 100);

	(void)state;
	nfs4_offload_complete(&t, a, NFS4_OK, 2, 1000);
	assert_int_equal(nfs4_offload_reap(&t, 1500, 1000), 0);
	assert_int_equal(nfs4_offload_reap(&t, 2001, 1000), 1);
	assert_int_equal(t.e[a].state, NFS4_OFFLOAD_FREE);
	assert_int_equal(t.e[b].state, NFS4_OFFLOAD_RUNNING); /* running copies are never reaped */
}

/* The synchronous copies' worker shares: per client, then in all; a put frees one place. */
static void test_copy_share(void **state)
{
	struct nfs4_copy_share s;

	(void)state;
	nfs4_copy_share_init(&s, 3, 2);
	assert_true(nfs4_copy_share_get(&s, 7));
	assert_true(nfs4_copy_share_get(&s, 7));
	assert_false(nfs4_copy_share_get(&s, 7)); /* over its own share */
	assert_true(nfs4_copy_share_get(&s, 8));
	assert_false(nfs4_copy_share_get(&s, 9)); /* over the copies' share */
	assert_int_equal(s.n, 3);
	assert_int_equal(s.refused, 2);
	nfs4_copy_share_put(&s, 7);
	assert_true(nfs4_copy_share_get(&s, 9));
	nfs4_copy_share_put(&s, 42); /* not a holder: nothing changes */
	assert_int_equal(s.n, 3);
	/* Bounds are clamped: at least 1, per client at most the whole. */
	nfs4_copy_share_init(&s, 0, 0);
	assert_int_equal(s.max, 1);
	assert_int_equal(s.per_client, 1);
	nfs4_copy_share_init(&s, 100000, 100000);
	assert_int_equal(s.max, NFS4_COPY_SHARE_MAX);
	assert_int_equal(s.per_client, NFS4_COPY_SHARE_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_create_find, setup),
		cmocka_unit_test_setup(test_progress_complete_release, setup),
		cmocka_unit_test_setup(test_cancel, setup),
		cmocka_unit_test_setup(test_bounds, setup),
		cmocka_unit_test_setup(test_client_gone, setup),
		cmocka_unit_test_setup(test_reap, setup),
		cmocka_unit_test(test_copy_share),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
