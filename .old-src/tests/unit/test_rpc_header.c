/*
 * test_rpc_header.c - rpc_call_receive() end to end through the worker pool
 * with a fake transport: every reply kind of RFC 5531 §9 is
 * checked byte by byte, malformed and truncated headers are dropped or
 * rejected as specified, statistics follow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "rpc/rpc_stats.h"
#include "tests/unit/rpc_test_prog.h"
#include "tests/unit/rpc_test_harness.h"

static struct tcall tc; /* large: static */

static void expect_words(const struct tcall *t, const uint32_t *w, size_t n)
{
	assert_false(t->dropped);
	assert_int_equal(t->out_len, n * 4);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(tget_u32(t->out, i * 4), w[i]);
}

static void call_simple(uint32_t xid, uint32_t vers, uint32_t proc)
{
	struct tmsg m;
	tmsg_call(&m, xid, TPROG, vers, proc, NULL, 0);
	assert_true(tcall_run(&tc, m.b, m.n));
}

static void test_null_ok(void **state)
{
	(void)state;
	call_simple(0x1001, 2, TPROC_NULL);
	const uint32_t w[] = {0x1001, 1, 0, 0, 0, 0};
	expect_words(&tc, w, 6);
	call_simple(0x1002, 3, TPROC_NULL);
	const uint32_t w3[] = {0x1002, 1, 0, 0, 0, 0};
	expect_words(&tc, w3, 6);
}

static void test_echo(void **state)
{
	(void)state;
	struct tmsg m;
	uint8_t body[64];
	size_t blen = tmsg_authsys(body, "client", 1000, 1000, 3);

	tmsg_call(&m, 0x2001, TPROG, 2, TPROC_ECHO, body, (uint32_t)blen);
	tmsg_opaque(&m, "hello", 5);
	assert_true(tcall_run(&tc, m.b, m.n));
	assert_true(treply_accepted(&tc, 0x2001, RPC_SUCCESS));
	assert_int_equal(tc.out_len, 24 + 4 + 8);
	assert_int_equal(tget_u32(tc.out, 24), 5);
	assert_memory_equal(tc.out + 28, "hello\0\0\0", 8);
	assert_int_equal(tc.c.cred.flavor, RPC_AUTH_SYS);
	assert_int_equal(tc.c.cred.uid, 1000);
	assert_int_equal(tc.c.cred.ngroups, 3);
}

static void test_rpc_mismatch(void **state)
{
	(void)state;
	struct tmsg m;
	const uint32_t bad[] = {0, 1, 3, 0xffffffff};
	for (size_t i = 0; i < 4; i++) {
		tmsg_call(&m, 0x3000 + (uint32_t)i, TPROG, 2, TPROC_NULL, NULL, 0);
		uint32_t be = htobe32(bad[i]);
		memcpy(m.b + 8, &be, 4);
		assert_true(tcall_run(&tc, m.b, m.n));
		/* MSG_DENIED, RPC_MISMATCH, low 2, high 2 */
		const uint32_t w[] = {0x3000 + (uint32_t)i, 1, 1, 0, 2, 2};
		expect_words(&tc, w, 6);
	}
	/* Only the first three words are needed to answer it. */
	assert_true(tcall_run(&tc, m.b, 12));
	const uint32_t w[] = {0x3003, 1, 1, 0, 2, 2};
	expect_words(&tc, w, 6);
}

static void test_prog_unavail(void **state)
{
	(void)state;
	struct tmsg m;
	tmsg_call(&m, 0x4001, 100003, 3, 0, NULL, 0);
	assert_true(tcall_run(&tc, m.b, m.n));
	const uint32_t w[] = {0x4001, 1, 0, 0, 0, 1};
	expect_words(&tc, w, 6);
}

static void test_prog_mismatch(void **state)
{
	(void)state;
	const uint32_t vers[] = {0, 1, 4, 0xffffffff};
	for (size_t i = 0; i < 4; i++) {
		call_simple(0x5000 + (uint32_t)i, vers[i], TPROC_NULL);
		const uint32_t w[] = {0x5000 + (uint32_t)i, 1, 0, 0, 0, 2, 2, 3};
		expect_words(&tc, w, 8);
	}
}

static void test_proc_unavail(void **state)
{
	(void)state;
	const uint32_t procs[] = {TPROC_HOLE, TPROC_N, 0xffffffff};
	for (size_t i = 0; i < 3; i++) {
		call_simple(0x6000 + (uint32_t)i, 2, procs[i]);
		const uint32_t w[] = {0x6000 + (uint32_t)i, 1, 0, 0, 0, 3};
		expect_words(&tc, w, 6);
	}
}

static void test_garbage_args(void **state)
{
	(void)state;
	struct tmsg m;

	/* The handler's partial results never reach the wire. */
	call_simple(0x7001, 2, TPROC_GARBAGE);
	const uint32_t w[] = {0x7001, 1, 0, 0, 0, 4};
	expect_words(&tc, w, 6);

	/* Opaque length beyond the message. */
	tmsg_call(&m, 0x7002, TPROG, 2, TPROC_ECHO, NULL, 0);
	tmsg_u32(&m, 100);
	tmsg_u32(&m, 0);
	assert_true(tcall_run(&tc, m.b, m.n));
	const uint32_t w2[] = {0x7002, 1, 0, 0, 0, 4};
	expect_words(&tc, w2, 6);
}

static void test_system_err(void **state)
{
	(void)state;
	struct tmsg m;

	call_simple(0x8001, 2, TPROC_SYSERR);
	const uint32_t w[] = {0x8001, 1, 0, 0, 0, 5};
	expect_words(&tc, w, 6);

	/* Results larger than the reply buffer: SYSTEM_ERR, not a truncated reply. */
	tmsg_call(&m, 0x8002, TPROG, 2, TPROC_BIG, NULL, 0);
	tmsg_u32(&m, sizeof(tc.reply));
	assert_true(tcall_run(&tc, m.b, m.n));
	const uint32_t w2[] = {0x8002, 1, 0, 0, 0, 5};
	expect_words(&tc, w2, 6);

	/* Just fits. */
	tmsg_call(&m, 0x8003, TPROG, 2, TPROC_BIG, NULL, 0);
	tmsg_u32(&m, sizeof(tc.reply) - 24);
	assert_true(tcall_run(&tc, m.b, m.n));
	assert_true(treply_accepted(&tc, 0x8003, RPC_SUCCESS));
	assert_int_equal(tc.out_len, sizeof(tc.reply));
}

static void test_handler_drop(void **state)
{
	(void)state;
	call_simple(0x9001, 2, TPROC_DROP);
	assert_true(tc.dropped);
	assert_int_equal(tc.out_len, 0);
}

static void test_auth_errors(void **state)
{
	(void)state;
	struct tmsg m;
	uint8_t body[512];

	/* 17 gids: AUTH_ERROR AUTH_BADCRED (RFC 5531 appendix A: gids<16>). */
	size_t blen = tmsg_authsys(body, "h", 1, 1, 17);
	tmsg_call(&m, 0xa001, TPROG, 2, TPROC_NULL, body, (uint32_t)blen);
	assert_true(tcall_run(&tc, m.b, m.n));
	const uint32_t w[] = {0xa001, 1, 1, 1, RPC_AUTH_BADCRED};
	expect_words(&tc, w, 5);

	/* RPCSEC_GSS credential: AUTH_REJECTEDCRED. Checked before the program. */
	tmsg_call(&m, 0xa002, 100003, 3, 0, NULL, 0);
	m.n = 24;
	tmsg_u32(&m, 6);
	tmsg_opaque(&m, "gssctx12", 8);
	tmsg_u32(&m, 6);
	tmsg_opaque(&m, "verf", 4);
	assert_true(tcall_run(&tc, m.b, m.n));
	const uint32_t w2[] = {0xa002, 1, 1, 1, RPC_AUTH_REJECTEDCRED};
	expect_words(&tc, w2, 5);

	/* AUTH_SYS with an AUTH_SYS verifier: AUTH_BADVERF. */
	blen = tmsg_authsys(body, "h", 1, 1, 0);
	tmsg_call(&m, 0xa003, TPROG, 2, TPROC_NULL, body, (uint32_t)blen);
	uint32_t one = htobe32(1);
	memcpy(m.b + m.n - 8, &one, 4);
	assert_true(tcall_run(&tc, m.b, m.n));
	const uint32_t w3[] = {0xa003, 1, 1, 1, RPC_AUTH_BADVERF};
	expect_words(&tc, w3, 5);
}

static void test_not_a_call(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_stats_global g0, g1;

	rpc_stats_global_get(&g0);
	for (uint32_t type = 1; type <= 3; type++) {
		tmsg_call(&m, 0xb000 + type, TPROG, 2, TPROC_NULL, NULL, 0);
		uint32_t be = htobe32(type);
		memcpy(m.b + 4, &be, 4);
		assert_true(tcall_run(&tc, m.b, m.n));
		assert_true(tc.dropped);
	}
	rpc_stats_global_get(&g1);
	assert_int_equal(g1.bad_header - g0.bad_header, 3);
}

/* Every truncation of a valid AUTH_SYS ECHO call; the message is a heap
 * block of exactly that length so ASan sees any over-read. */
static void test_truncated_everywhere(void **state)
{
	(void)state;
	struct tmsg m;
	uint8_t body[128];
	size_t blen = tmsg_authsys(body, "client.example.com", 1, 2, 4);

	tmsg_call(&m, 0xc001, TPROG, 2, TPROC_ECHO, body, (uint32_t)blen);
	size_t cred_end = 24 + 8 + blen;
	size_t verf_end = cred_end + 8;
	assert_int_equal(m.n, verf_end);
	tmsg_opaque(&m, "hello", 5);

	for (size_t l = 0; l <= m.n; l++) {
		uint8_t *copy = malloc(l ? l : 1);
		memcpy(copy, m.b, l);
		tc.c.conn = &th_conn;
		tc.c.msg = copy;
		tc.c.msg_len = l;
		tc.c.n_ddp_in = 0;
		tc.c.reply_buf = tc.reply;
		tc.c.reply_cap = sizeof(tc.reply);
		tc.c.payload_area = tc.payload;
		tc.c.payload_cap = sizeof(tc.payload);
		tc.c.priv = &tc;
		tc.done = false;
		rpc_call_receive(&tc.c);
		assert_true(tcall_wait(&tc));
		free(copy);

		if (l < 12) {
			assert_true(tc.dropped); /* no xid, type or rpcvers */
		} else if (l < 24) {
			assert_true(tc.dropped); /* prog, vers or proc missing */
		} else if (l < cred_end) {
			const uint32_t w[] = {0xc001, 1, 1, 1, RPC_AUTH_BADCRED};
			expect_words(&tc, w, 5);
		} else if (l < verf_end) {
			const uint32_t w[] = {0xc001, 1, 1, 1, RPC_AUTH_BADVERF};
			expect_words(&tc, w, 5);
		} else if (l < m.n) {
			const uint32_t w[] = {0xc001, 1, 0, 0, 0, RPC_GARBAGE_ARGS};
			expect_words(&tc, w, 6);
		} else {
			assert_true(treply_accepted(&tc, 0xc001, RPC_SUCCESS));
		}
	}
}

static void test_reply_buffer_too_small(void **state)
{
	(void)state;
	struct tmsg m;
	tmsg_call(&m, 0xd001, 100003, 3, 0, NULL, 0);
	memcpy(tc.msg, m.b, m.n);
	tc.c.conn = &th_conn;
	tc.c.msg = tc.msg;
	tc.c.msg_len = m.n;
	tc.c.reply_buf = tc.reply;
	tc.c.reply_cap = 16; /* not even a PROG_UNAVAIL fits */
	tc.c.priv = &tc;
	tc.done = false;
	rpc_call_receive(&tc.c);
	assert_true(tcall_wait(&tc));
	assert_true(tc.dropped);
}

static void test_bulk_ddp_and_reuse(void **state)
{
	(void)state;
	struct tmsg m;

	tmsg_call(&m, 0xe001, TPROG, 2, TPROC_BULK, NULL, 0);
	tmsg_u32(&m, 1001);
	tmsg_u32(&m, 9);
	assert_true(tcall_run(&tc, m.b, m.n));
	assert_true(treply_accepted(&tc, 0xe001, RPC_SUCCESS));
	assert_int_equal(tc.c.n_ddp_out, 1);
	assert_int_equal(tc.c.ddp_out[0].offset, 28);
	assert_int_equal(rpc_reply_len(&tc.c), 24 + 4 + 1004 + 4);
	assert_int_equal(tc.out_len, 24 + 4 + 1004 + 4);
	assert_int_equal(tget_u32(tc.out, 24), 1001);
	for (uint32_t i = 0; i < 1001; i++)
		assert_int_equal(tc.out[28 + i], tprog_pattern(9, i));
	assert_memory_equal(tc.out + 28 + 1001, "\0\0\0", 3);
	assert_int_equal(tget_u32(tc.out, 28 + 1004), 0xfeedface);

	/* The same call context reused: no stale payload segment or state. */
	call_simple(0xe002, 2, TPROC_NULL);
	assert_int_equal(tc.c.n_ddp_out, 0);
	assert_int_equal(tc.c.payload_used, 0);
	const uint32_t w[] = {0xe002, 1, 0, 0, 0, 0};
	expect_words(&tc, w, 6);
}

struct stat_find {
	uint32_t vers, proc;
	struct rpc_proc_snapshot s;
	unsigned seen;
};

static void stat_cb(const char *prog_name, uint32_t prog, uint32_t vers, uint32_t proc,
		    const char *proc_name, const struct rpc_proc_snapshot *s, void *arg)
{
	struct stat_find *f = arg;
	(void)proc_name;
	assert_string_equal(prog_name, "rnfsd-test");
	assert_int_equal(prog, TPROG);
	if (vers == f->vers && proc == f->proc) {
		f->s = *s;
		f->seen++;
	}
}

static void test_stats(void **state)
{
	(void)state;
	struct stat_find before = {3, TPROC_NULL}, after = {3, TPROC_NULL};
	struct stat_find gb = {3, TPROC_GARBAGE}, ga = {3, TPROC_GARBAGE};

	rpc_stats_foreach(stat_cb, &before);
	rpc_stats_foreach(stat_cb, &gb);
	assert_int_equal(before.seen, 1);
	for (uint32_t i = 0; i < 7; i++)
		call_simple(0xf000 + i, 3, TPROC_NULL);
	call_simple(0xf100, 3, TPROC_GARBAGE);
	call_simple(0xf101, 3, TPROC_GARBAGE);
	rpc_stats_foreach(stat_cb, &after);
	rpc_stats_foreach(stat_cb, &ga);
	assert_int_equal(after.s.calls - before.s.calls, 7);
	assert_int_equal(after.s.errors - before.s.errors, 0);
	assert_true(after.s.latency_ns > before.s.latency_ns);
	assert_true(after.s.latency_max_ns > 0);
	assert_int_equal(ga.s.calls - gb.s.calls, 2);
	assert_int_equal(ga.s.errors - gb.s.errors, 2);

	/* A procedure-level failure counts as an error; the reply is SUCCESS. */
	struct stat_find fb = {3, TPROC_FAILS}, fa = {3, TPROC_FAILS};
	rpc_stats_foreach(stat_cb, &fb);
	call_simple(0xf200, 3, TPROC_FAILS);
	assert_true(treply_accepted(&tc, 0xf200, RPC_SUCCESS));
	call_simple(0xf201, 3, TPROC_NULL);
	assert_false(tc.c.proc_failed); /* reset for the next call */
	rpc_stats_foreach(stat_cb, &fa);
	assert_int_equal(fa.s.calls - fb.s.calls, 1);
	assert_int_equal(fa.s.errors - fb.s.errors, 1);
}

struct adapt_find {
	unsigned procs;
	uint64_t null_calls;
	uint64_t null_p50;
};

static void adapt_cb(const struct stats_proc *p, void *arg)
{
	struct adapt_find *f = arg;
	assert_string_equal(p->program, "rnfsd-test");
	f->procs++;
	if (p->vers == 2 && strcmp(p->proc, "NULL") == 0) {
		f->null_calls = p->calls;
		assert_non_null(p->latency);
		f->null_p50 = stats_hist_quantile(p->latency, 0.5);
	}
}

/* The walk the stats server uses: one entry per procedure, with a histogram. */
static void test_stats_server_walk(void **state)
{
	(void)state;
	struct adapt_find f = {0};
	for (uint32_t i = 0; i < 3; i++)
		call_simple(0xf300 + i, 2, TPROC_NULL);
	rpc_stats_procs_foreach(adapt_cb, &f);
	assert_int_equal(f.procs, 2 * TPROC_N);
	assert_true(f.null_calls >= 3);
	assert_true(f.null_p50 > 0);
}

static int setup(void **state)
{
	(void)state;
	return th_setup(16);
}

static int teardown(void **state)
{
	(void)state;
	th_teardown();
	return 0;
}

/* Operation tables: decode -> execute -> encode over zeroed per-call scratch. */
static void test_proc_steps(void **state)
{
	(void)state;
	struct tmsg m;

	for (uint32_t i = 0; i < 3; i++) {
		tmsg_call(&m, 0x7100 + i, TPROG, 3, TPROC_STEPS, NULL, 0);
		tmsg_u32(&m, 40 + i);
		tmsg_u32(&m, 2);
		assert_true(tcall_run(&tc, m.b, m.n));
		assert_true(treply_accepted(&tc, 0x7100 + i, RPC_SUCCESS));
		assert_int_equal(tc.out_len, 24 + 8);
		assert_int_equal(tget_u32(tc.out, 24), 42 + i);
		assert_int_equal(tget_u32(tc.out, 28), 1); /* the result scratch was zeroed again */
	}
	/* A decode step that fails: GARBAGE_ARGS, execute never runs. */
	tmsg_call(&m, 0x7110, TPROG, 3, TPROC_STEPS, NULL, 0);
	tmsg_u32(&m, 1);
	assert_true(tcall_run(&tc, m.b, m.n));
	const uint32_t w[] = {0x7110, 1, 0, 0, 0, RPC_GARBAGE_ARGS};
	expect_words(&tc, w, 6);
}

/* What a transport learns from the tables: the entry and its DDP rule. */
static void test_ddp_rule_lookup(void **state)
{
	(void)state;
	struct ulb_rule r;

	const struct rpc_proc *p = rpc_ddp_rule(TPROG, 3, TPROC_STEPS, &r);
	assert_non_null(p);
	assert_string_equal(p->name, "STEPS");
	assert_int_equal(p->max_reply, 24 + 8);
	assert_int_equal(r.read_chunks + r.write_chunks + r.per_op, 0);
	assert_null(rpc_ddp_rule(TPROG, 3, TPROC_HOLE, &r)); /* no execute step */
	assert_null(rpc_ddp_rule(TPROG, 3, TPROC_N, &r));
	assert_null(rpc_ddp_rule(TPROG, 4, TPROC_NULL, &r));
	assert_null(rpc_ddp_rule(TPROG + 1, 3, TPROC_NULL, &r));
	assert_int_equal(r.read_chunks + r.write_chunks + r.per_op, 0);
}

/* A table whose scratch sizes exceed RPC_PROC_SCRATCH is refused at registration. */
static void test_register_scratch_limit(void **state)
{
	(void)state;
	static const struct rpc_proc big[] = {{.name = "BIG", .execute = tp_null,
					       .args_size = RPC_PROC_SCRATCH + 1}};
	static const struct rpc_version bigv[] = {{1, 1, big}};
	static const struct rpc_program bigp = {TPROG + 7, "too-big", 1, bigv};
	struct ulb_rule r;

	assert_int_equal(rpc_register_program(&bigp), -1);
	assert_null(rpc_ddp_rule(TPROG + 7, 1, 0, &r));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_ok),
		cmocka_unit_test(test_echo),
		cmocka_unit_test(test_rpc_mismatch),
		cmocka_unit_test(test_prog_unavail),
		cmocka_unit_test(test_prog_mismatch),
		cmocka_unit_test(test_proc_unavail),
		cmocka_unit_test(test_garbage_args),
		cmocka_unit_test(test_system_err),
		cmocka_unit_test(test_handler_drop),
		cmocka_unit_test(test_auth_errors),
		cmocka_unit_test(test_not_a_call),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_reply_buffer_too_small),
		cmocka_unit_test(test_bulk_ddp_and_reuse),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_stats_server_walk),
		cmocka_unit_test(test_proc_steps),
		cmocka_unit_test(test_ddp_rule_lookup),
		cmocka_unit_test(test_register_scratch_limit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
