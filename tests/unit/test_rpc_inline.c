/*
 * test_rpc_inline.c - which calls run on the receiving thread
 * (rpc/rpc_inline.h): the policy over its struct and the time, then through
 * rpc_call_receive() with the real worker pool, where a procedure records
 * the thread it ran on (the harness receives on the test's own thread).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "rpc/rpc_inline.h"
#include "tests/unit/rpc_test_prog.h"
#include "tests/unit/rpc_test_harness.h"

#define MS 1000000ull

static void test_policy_off(void **state)
{
	(void)state;
	struct rpc_inline_policy p = { .enabled = false, .meta_allowed = true };

	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE, 0));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, 0));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_WORKER, 0));
}

static void test_policy_kinds(void **state)
{
	(void)state;
	struct rpc_inline_policy p = { .enabled = true, .meta_allowed = false };

	assert_true(rpc_inline_policy_pick(&p, RPC_RUN_INLINE, 0));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, 0)); /* a backend that may wait */
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_WORKER, 0));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_TRY, 0));
	p.meta_allowed = true;
	assert_true(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, 0));
	assert_true(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_TRY, 0));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_WORKER, 0));
	/* acting as the caller: only with callers_allowed ([rnfsd] uring-calls), and meta_allowed */
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_CALLER, 0));
	p.callers_allowed = true;
	assert_true(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_CALLER, 0));
	p.meta_allowed = false;
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_CALLER, 0));
	p.enabled = false, p.meta_allowed = true;
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_CALLER, 0));
}

/* One slow metadata call pauses metadata calls for RPC_INLINE_PAUSE_NS;
 * NULL stays inline; a fast one pauses nothing. */
static void test_policy_slow_pauses(void **state)
{
	(void)state;
	struct rpc_inline_policy p = { .enabled = true, .meta_allowed = true };
	uint64_t t = 50000 * MS;

	assert_false(rpc_inline_policy_took(&p, RPC_RUN_INLINE_META, RPC_INLINE_SLOW_NS, 1, t));
	assert_false(rpc_inline_policy_took(&p, RPC_RUN_INLINE, 100 * MS, 1, t)); /* not a metadata call */
	assert_true(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, t));
	assert_true(rpc_inline_policy_took(&p, RPC_RUN_INLINE_META, RPC_INLINE_SLOW_NS + 1, 1, t));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, t + 1));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, t + RPC_INLINE_PAUSE_NS - 1));
	assert_true(rpc_inline_policy_pick(&p, RPC_RUN_INLINE, t + 1));
	assert_true(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, t + RPC_INLINE_PAUSE_NS));
	/* a slow call acting as its caller pauses them too, and is paused itself */
	p.callers_allowed = true;
	t += 10 * RPC_INLINE_PAUSE_NS;
	assert_true(rpc_inline_policy_took(&p, RPC_RUN_INLINE_CALLER, RPC_INLINE_SLOW_NS + 1, 1, t));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_CALLER, t + 1));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, t + 1));
	/* a slow READ tried inline pauses them as well */
	t += 10 * RPC_INLINE_PAUSE_NS;
	assert_true(rpc_inline_policy_took(&p, RPC_RUN_INLINE_TRY, RPC_INLINE_SLOW_NS + 1, 1, t));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_TRY, t + 1));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, t + 1));
}

/* A slow call that made no voluntary context switch was preempted (a loaded host), not waiting for
 * a device: no pause; one voluntary switch (it slept) is enough to pause (issue 22 item 5). */
static void test_policy_preempted_no_pause(void **state)
{
	(void)state;
	struct rpc_inline_policy p = { .enabled = true, .meta_allowed = true, .callers_allowed = true };
	uint64_t t = 70000 * MS;
	const enum rpc_run kinds[] = { RPC_RUN_INLINE_META, RPC_RUN_INLINE_TRY, RPC_RUN_INLINE_CALLER };

	for (unsigned i = 0; i < 3; i++) {
		assert_false(rpc_inline_policy_took(&p, kinds[i], 100 * MS, 0, t));
		assert_true(rpc_inline_policy_pick(&p, kinds[i], t + 1));
	}
	assert_false(rpc_inline_policy_took(&p, RPC_RUN_INLINE_META, RPC_INLINE_SLOW_NS, 5, t)); /* slept, fast */
	assert_true(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, t + 1));
	assert_true(rpc_inline_policy_took(&p, RPC_RUN_INLINE_META, RPC_INLINE_SLOW_NS + 1, 1, t));
	assert_false(rpc_inline_policy_pick(&p, RPC_RUN_INLINE_META, t + 1));
}

/* ---- through rpc_call_receive() ---- */

#define IPROG 0x20000abcu
enum { IPROC_NULL, IPROC_META, IPROC_WORK, IPROC_TRY, IPROC_N };

static pthread_t ran_on[IPROC_N];
static unsigned meta_sleep_ms;
static pthread_t receiver;    /* the test's thread, which receives the calls */
static bool try_declines;     /* IPROC_TRY declines on the receiving thread */
static unsigned try_runs;

static enum rpc_proc_status ip_record(struct rpc_call *c, unsigned proc)
{
	(void)c;
	ran_on[proc] = pthread_self();
	return RPC_PROC_OK;
}

static enum rpc_proc_status ip_null(struct rpc_call *c, void *args, void *res)
{
	(void)args, (void)res;
	return ip_record(c, IPROC_NULL);
}

static enum rpc_proc_status ip_meta(struct rpc_call *c, void *args, void *res)
{
	(void)args, (void)res;
	if (meta_sleep_ms)
		usleep(meta_sleep_ms * 1000);
	return ip_record(c, IPROC_META);
}

static enum rpc_proc_status ip_work(struct rpc_call *c, void *args, void *res)
{
	(void)args, (void)res;
	return ip_record(c, IPROC_WORK);
}

/* TRY's argument: a u32, decoded again (from the start) on the worker after a decline. */
static bool ip_try_dec(struct rpc_call *c, void *args)
{
	return xdr_dec_u32(&c->args, args) && *(uint32_t *)args == 0x12345678u;
}

/* RPC_RUN_INLINE_TRY: takes payload room, then declines on the receiver when told to. */
static enum rpc_proc_status ip_try(struct rpc_call *c, void *args, void *res)
{
	(void)args, (void)res;
	try_runs++;
	(void)rpc_payload_buf(c, 64);
	if (try_declines && pthread_equal(pthread_self(), receiver))
		return RPC_PROC_WORKER;
	return ip_record(c, IPROC_TRY);
}

static const struct rpc_proc iprog_procs[IPROC_N] = {
	[IPROC_NULL] = { .name = "NULL", .execute = ip_null, .max_reply = RPC_REPLY_MAX(0), .run = RPC_RUN_INLINE },
	[IPROC_META] = { .name = "META", .execute = ip_meta, .max_reply = RPC_REPLY_MAX(0),
			 .run = RPC_RUN_INLINE_META },
	[IPROC_WORK] = { .name = "WORK", .execute = ip_work, .max_reply = RPC_REPLY_MAX(0) },
	[IPROC_TRY] = { .name = "TRY", .decode = ip_try_dec, .execute = ip_try, .max_reply = RPC_REPLY_MAX(0),
			.args_size = sizeof(uint32_t), .run = RPC_RUN_INLINE_TRY },
};
static const struct rpc_version iprog_versions[] = { { 1, IPROC_N, iprog_procs } };
static const struct rpc_program iprog = { .prog = IPROG, .name = "inline-test", .nversions = 1,
					   .versions = iprog_versions };

static struct tcall tc;

/* Runs proc; true when it ran on this (the receiving) thread. */
static bool ran_here(unsigned proc)
{
	static uint32_t xid = 1;
	struct tmsg m;

	memset(&ran_on[proc], 0, sizeof(ran_on[proc]));
	tmsg_call(&m, xid, IPROG, 1, proc, NULL, 0);
	if (proc == IPROC_TRY)
		tmsg_u32(&m, 0x12345678u); /* TRY's one argument */
	assert_true(tcall_run(&tc, m.b, m.n));
	assert_true(treply_accepted(&tc, xid, 0));
	xid++;
	return pthread_equal(ran_on[proc], pthread_self());
}

static void test_calls_where(void **state)
{
	(void)state;
	uint64_t calls0, calls1, paused0, paused1;

	rpc_inline_configure(true);
	rpc_inline_meta_allow(false);
	rpc_inline_counts(&calls0, &paused0);
	assert_true(ran_here(IPROC_NULL));
	assert_false(ran_here(IPROC_META)); /* an export whose backend may wait */
	assert_false(ran_here(IPROC_WORK));
	rpc_inline_meta_allow(true);
	assert_true(ran_here(IPROC_META));
	assert_false(ran_here(IPROC_WORK));
	rpc_inline_counts(&calls1, &paused1);
	assert_int_equal(calls1 - calls0, 2);

	/* A slow one: answered, then the next ones go to the workers. */
	meta_sleep_ms = RPC_INLINE_SLOW_NS / 1000000 + 20;
	assert_true(ran_here(IPROC_META));
	meta_sleep_ms = 0;
	assert_false(ran_here(IPROC_META));
	assert_true(ran_here(IPROC_NULL));
	rpc_inline_counts(&calls1, &paused1);
	assert_int_equal(paused1 - paused0, 1);

	rpc_inline_configure(false);
	assert_false(ran_here(IPROC_NULL));
	rpc_inline_configure(true);
}

/* RPC_RUN_INLINE_TRY: answered here unless execute declines; a declined call
 * runs again on a worker and is answered from there, not counted as inline. */
static void test_try_declines(void **state)
{
	(void)state;
	uint64_t calls0, calls1, paused;

	receiver = pthread_self();
	rpc_inline_configure(true);
	rpc_inline_meta_allow(true);
	try_declines = false;
	try_runs = 0;
	assert_true(ran_here(IPROC_TRY));
	assert_int_equal(try_runs, 1);
	rpc_inline_counts(&calls0, &paused);
	try_declines = true;
	assert_false(ran_here(IPROC_TRY)); /* answered (ran_here checks the reply) from a worker */
	assert_int_equal(try_runs, 3);     /* declined here, then run on a worker */
	rpc_inline_counts(&calls1, &paused);
	assert_int_equal(calls1, calls0);
	rpc_inline_meta_allow(false);
	assert_false(ran_here(IPROC_TRY)); /* a backend that may wait: straight to a worker */
	assert_int_equal(try_runs, 4);
	try_declines = false;
}

static int setup(void **state)
{
	(void)state;
	if (th_setup(16) != 0)
		return -1;
	return rpc_register_program(&iprog);
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
		cmocka_unit_test(test_policy_off),
		cmocka_unit_test(test_policy_kinds),
		cmocka_unit_test(test_policy_slow_pauses),
		cmocka_unit_test(test_policy_preempted_no_pause),
		cmocka_unit_test(test_try_declines), /* before test_calls_where's pause */
		cmocka_unit_test(test_calls_where),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
