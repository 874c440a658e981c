/*
 * test_rpc_drc.c - the duplicate request cache through rpc_call_receive()
 *: replays of completed non-idempotent calls, drops of
 * retransmissions still running, keying (peer port, arguments, xid), LRU
 * eviction, replies too big to cache, dropped replies, idempotent calls; the
 * key names the credential's flavor and the connection's transport security.
 * The cache here has 4 entries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "rpc/rpc_stats.h"
#include "tests/unit/rpc_test_prog.h"
#include "tests/unit/rpc_test_harness.h"

#define DRC_ENTRIES 4

static struct tcall tc, tc2;

static void count_call(struct tcall *t, uint32_t xid, uint32_t proc, uint32_t arg)
{
	struct tmsg m;
	tmsg_call(&m, xid, TPROG, 3, proc, NULL, 0);
	tmsg_u32(&m, arg); /* ignored by the handler, part of the checksum */
	assert_true(tcall_run(t, m.b, m.n));
}

static uint32_t count_of(const struct tcall *t)
{
	assert_true(treply_accepted(t, tget_u32(t->out, 0), RPC_SUCCESS));
	return tget_u32(t->out, 24);
}

static void test_replay(void **state)
{
	(void)state;
	unsigned before = tprog_count_get();
	struct rpc_stats_global g0, g1;
	rpc_stats_global_get(&g0);

	count_call(&tc, 0x100, TPROC_COUNT, 1);
	assert_false(tc.from_cache);
	uint32_t v = count_of(&tc);
	assert_int_equal(tprog_count_get(), before + 1);
	uint8_t first[64];
	size_t first_len = tc.out_len;
	memcpy(first, tc.out, first_len);

	for (int i = 0; i < 3; i++) {
		count_call(&tc, 0x100, TPROC_COUNT, 1);
		assert_true(tc.from_cache);
		assert_int_equal(tc.out_len, first_len);
		assert_memory_equal(tc.out, first, first_len);
		assert_int_equal(count_of(&tc), v);
	}
	assert_int_equal(tprog_count_get(), before + 1); /* ran once */
	rpc_stats_global_get(&g1);
	assert_int_equal(g1.drc_hit - g0.drc_hit, 3);
}

static void test_key_fields(void **state)
{
	(void)state;
	unsigned before = tprog_count_get();

	count_call(&tc, 0x200, TPROC_COUNT, 1);
	/* Other arguments under the same xid: a new call. */
	count_call(&tc, 0x200, TPROC_COUNT, 2);
	assert_false(tc.from_cache);
	/* Another source port: another client transport endpoint. */
	th_set_peer(701);
	count_call(&tc, 0x200, TPROC_COUNT, 1);
	assert_false(tc.from_cache);
	th_set_peer(700);
	/* Same everything but the version. */
	struct tmsg m;
	tmsg_call(&m, 0x200, TPROG, 2, TPROC_COUNT, NULL, 0);
	tmsg_u32(&m, 1);
	assert_true(tcall_run(&tc, m.b, m.n));
	assert_false(tc.from_cache);
	/* Same everything but the credential's flavor (AUTH_SYS, not AUTH_NONE): the key names it, as an
	 * RPCSEC_GSS entry keeps results only (RFC 2203 §5.3.3.1) and must not answer another flavor. */
	uint8_t sys[64];
	size_t sys_len = tmsg_authsys(sys, "h", 0, 0, 0);
	tmsg_call(&m, 0x200, TPROG, 3, TPROC_COUNT, sys, (uint32_t)sys_len);
	tmsg_u32(&m, 1);
	assert_true(tcall_run(&tc, m.b, m.n));
	assert_false(tc.from_cache);
	assert_int_equal(tprog_count_get(), before + 5);
}

/* RFC 9289: a reply cached on a TLS connection is not replayed onto a plain one from the same
 * address and port (the call runs anew, where the export's xprtsec= answers it), nor the reverse. */
static void test_key_xprtsec(void **state)
{
	(void)state;
	unsigned before = tprog_count_get();

	th_conn.xprtsec = RPC_XPRTSEC_TLS;
	count_call(&tc, 0x280, TPROC_COUNT, 1);
	assert_false(tc.from_cache);
	count_call(&tc, 0x280, TPROC_COUNT, 1);
	assert_true(tc.from_cache); /* the same transport security: replayed */
	th_conn.xprtsec = RPC_XPRTSEC_NONE;
	count_call(&tc, 0x280, TPROC_COUNT, 1);
	assert_false(tc.from_cache);
	th_conn.xprtsec = RPC_XPRTSEC_MTLS;
	count_call(&tc, 0x280, TPROC_COUNT, 1);
	assert_false(tc.from_cache);
	th_conn.xprtsec = RPC_XPRTSEC_NONE;
	assert_int_equal(tprog_count_get(), before + 3);
}

static void test_in_progress_dropped(void **state)
{
	(void)state;
	struct rpc_stats_global g0, g1;
	struct tmsg m;
	unsigned before = tprog_count_get();

	rpc_stats_global_get(&g0);
	tprog_gate_set(false);
	tmsg_call(&m, 0x300, TPROG, 3, TPROC_BLOCK, NULL, 0);
	tcall_start(&tc, m.b, m.n);
	while (tprog_blocked_get() == 0)
		usleep(1000);
	/* The retransmission arrives while the original runs: dropped at once. */
	assert_true(tcall_run(&tc2, m.b, m.n));
	assert_true(tc2.dropped);
	assert_false(tc.done);
	tprog_gate_set(true);
	assert_true(tcall_wait(&tc));
	assert_false(tc.dropped);
	assert_int_equal(count_of(&tc), before + 1);
	/* Now completed: a further retransmission is replayed. */
	assert_true(tcall_run(&tc2, m.b, m.n));
	assert_true(tc2.from_cache);
	assert_int_equal(count_of(&tc2), before + 1);
	assert_int_equal(tprog_count_get(), before + 1);
	rpc_stats_global_get(&g1);
	assert_int_equal(g1.drc_in_progress - g0.drc_in_progress, 1);
}

static void test_lru_eviction(void **state)
{
	(void)state;
	unsigned before = tprog_count_get();

	for (uint32_t i = 0; i < DRC_ENTRIES + 1; i++)
		count_call(&tc, 0x400 + i, TPROC_COUNT, 0);
	assert_int_equal(tprog_count_get(), before + DRC_ENTRIES + 1);
	/* The newest is cached ... */
	count_call(&tc, 0x400 + DRC_ENTRIES, TPROC_COUNT, 0);
	assert_true(tc.from_cache);
	/* ... the oldest was evicted: runs again (and is cached again). */
	count_call(&tc, 0x400, TPROC_COUNT, 0);
	assert_false(tc.from_cache);
	assert_int_equal(tprog_count_get(), before + DRC_ENTRIES + 2);
	count_call(&tc, 0x400, TPROC_COUNT, 0);
	assert_true(tc.from_cache);
	/* LRU now 0x402, 0x403, 0x404, 0x400. A replay refreshes 0x402, so the
	 * next new call evicts 0x403 instead. */
	count_call(&tc, 0x402, TPROC_COUNT, 0);
	assert_true(tc.from_cache);
	count_call(&tc, 0x500, TPROC_COUNT, 0);
	assert_false(tc.from_cache);
	count_call(&tc, 0x402, TPROC_COUNT, 0);
	assert_true(tc.from_cache);
	count_call(&tc, 0x403, TPROC_COUNT, 0);
	assert_false(tc.from_cache);
}

static void test_cache_full_of_running_calls(void **state)
{
	(void)state;
	struct tmsg m;
	static struct tcall blocked[DRC_ENTRIES];
	unsigned before = tprog_count_get();

	tprog_gate_set(false);
	for (unsigned i = 0; i < DRC_ENTRIES; i++) {
		tmsg_call(&m, 0x600 + i, TPROG, 3, TPROC_BLOCK, NULL, 0);
		tcall_start(&blocked[i], m.b, m.n);
	}
	/* Every entry is in progress (3 calls block at the gate, one is queued).
	 * A new call is then served uncached: its retransmission is not
	 * recognised, so both run. */
	tmsg_call(&m, 0x700, TPROG, 3, TPROC_COUNT, NULL, 0);
	tcall_start(&tc, m.b, m.n);
	tcall_start(&tc2, m.b, m.n);
	tprog_gate_set(true);
	for (unsigned i = 0; i < DRC_ENTRIES; i++) {
		assert_true(tcall_wait(&blocked[i]));
		assert_false(blocked[i].dropped);
	}
	assert_true(tcall_wait(&tc));
	assert_true(tcall_wait(&tc2));
	assert_false(tc.dropped || tc2.dropped || tc.from_cache || tc2.from_cache);
	assert_int_equal(tprog_count_get(), before + DRC_ENTRIES + 2);
}

static void test_big_reply_not_cached(void **state)
{
	(void)state;
	unsigned before = tprog_count_get();

	count_call(&tc, 0x800, TPROC_COUNT_BIG, 0);
	assert_int_equal(tc.out_len, 24 + 4 + 2000);
	count_call(&tc, 0x800, TPROC_COUNT_BIG, 0);
	assert_false(tc.from_cache);
	assert_int_equal(tprog_count_get(), before + 2);
}

static void test_dropped_reply_not_cached(void **state)
{
	(void)state;
	unsigned before = tprog_count_get();

	count_call(&tc, 0x900, TPROC_COUNT_DROP, 0);
	assert_true(tc.dropped);
	/* The retransmission runs (no entry stuck in progress) and is answered. */
	count_call(&tc, 0x900, TPROC_COUNT_DROP, 0);
	assert_false(tc.dropped);
	assert_false(tc.from_cache);
	assert_int_equal(tprog_count_get(), before + 1);
	count_call(&tc, 0x900, TPROC_COUNT_DROP, 0);
	assert_true(tc.from_cache);
}

static void test_idempotent_not_cached(void **state)
{
	(void)state;
	struct tmsg m;
	for (int i = 0; i < 2; i++) {
		tmsg_call(&m, 0xa00, TPROG, 3, TPROC_ECHO, NULL, 0);
		tmsg_opaque(&m, "x", 1);
		assert_true(tcall_run(&tc, m.b, m.n));
		assert_false(tc.from_cache);
	}
}

/* cache_wanted and drc_forget: a procedure's calls go through the DRC or not by their
 * arguments, and its handler may let the reply go (NFSv4.0 COMPOUND, RFC 7530 §3.1.1). */
static void test_cache_wanted_and_forget(void **state)
{
	(void)state;
	unsigned before = tprog_count_get();

	for (uint32_t mode = 0; mode < 3; mode++)
		for (int i = 0; i < 2; i++) {
			count_call(&tc, 0xb00 + mode, TPROC_COUNT_IF, mode);
			assert_int_equal(tc.from_cache, mode == 1 && i == 1);
		}
	assert_int_equal(tprog_count_get(), before + 5); /* the cached retransmission did not run */
}

static int setup(void **state)
{
	(void)state;
	return th_setup(DRC_ENTRIES);
}

static int teardown(void **state)
{
	(void)state;
	th_teardown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_key_fields),
		cmocka_unit_test(test_key_xprtsec),
		cmocka_unit_test(test_in_progress_dropped),
		cmocka_unit_test(test_lru_eviction),
		cmocka_unit_test(test_cache_full_of_running_calls),
		cmocka_unit_test(test_big_reply_not_cached),
		cmocka_unit_test(test_dropped_reply_not_cached),
		cmocka_unit_test(test_idempotent_not_cached),
		cmocka_unit_test(test_cache_wanted_and_forget),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
