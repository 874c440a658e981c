/*
 * test_ulb_rules.c - RFC 8267 DDP eligibility: the rules the registered
 * operation tables give the transport through rpc_ddp_rule() (the NFSv3 and
 * MOUNT tables of nfs/), the COMPOUND rule, the NFSv4 per-operation
 * functions, and the Read chunk length check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nfs/nfs.h"
#include "rpc/rpc.h"
#include "ulb/ulb.h"

static struct ulb_rule r;

/* What the RDMA transport learns for one call. */
static void ulb_lookup(uint32_t prog, uint32_t vers, uint32_t proc, struct ulb_rule *out)
{
	rpc_ddp_rule(prog, vers, proc, out);
}

static int tables_register(void **state)
{
	(void)state;
	return rpc_register_program(&nfs3_program) || rpc_register_program(&mount3_program);
}

static int tables_release(void **state)
{
	(void)state;
	rpc_release();
	return 0;
}

static void test_nfs3(void **state)
{
	(void)state;
	ulb_lookup(100003, 3, 6, &r); /* READ */
	assert_int_equal(r.read_chunks, 0);
	assert_int_equal(r.write_chunks, 1);
	assert_int_equal(r.res_item, ULB_READ_DATA);
	ulb_lookup(100003, 3, 5, &r); /* READLINK */
	assert_int_equal(r.write_chunks, 1);
	assert_int_equal(r.res_item, ULB_READLINK_PATH);
	ulb_lookup(100003, 3, 7, &r); /* WRITE */
	assert_int_equal(r.read_chunks, 1);
	assert_int_equal(r.write_chunks, 0);
	assert_int_equal(r.arg_item, ULB_WRITE_DATA);
	ulb_lookup(100003, 3, 10, &r); /* SYMLINK */
	assert_int_equal(r.read_chunks, 1);
	assert_int_equal(r.arg_item, ULB_SYMLINK_PATH);
	/* Everything else ignores chunks (READDIR uses the Reply chunk only). */
	for (uint32_t p = 0; p < 30; p++) {
		if (p == 5 || p == 6 || p == 7 || p == 10)
			continue;
		ulb_lookup(100003, 3, p, &r);
		assert_int_equal(r.read_chunks + r.write_chunks + r.per_op, 0);
	}
}

static void test_nfs2_not_served(void **state)
{
	(void)state;
	/* No NFSv2 table is registered: every chunk is ignored. */
	for (uint32_t p = 0; p < 18; p++) {
		ulb_lookup(100003, 2, p, &r);
		assert_int_equal(r.read_chunks + r.write_chunks + r.per_op, 0);
	}
}

static void test_nfs4(void **state)
{
	(void)state;
	r = (struct ulb_rule)ULB_RULE_COMPOUND; /* what an NFSv4 table gives COMPOUND */
	assert_true(r.per_op);
	assert_true(r.read_chunks >= 1);
	assert_true(r.write_chunks >= 2);
	assert_true(r.read_chunks <= RPC_MAX_DDP_IN);
	assert_true(r.write_chunks <= RPC_MAX_DDP_OUT);
	ulb_lookup(100003, 4, 0, &r); /* NULL (and nothing else: no NFSv4 table yet) */
	assert_false(r.per_op);
	assert_int_equal(r.read_chunks + r.write_chunks, 0);
	assert_int_equal(ulb_nfs4_op_arg(ULB_NFS4_OP_WRITE, 0), ULB_WRITE_DATA);
	assert_int_equal(ulb_nfs4_op_arg(ULB_NFS4_OP_CREATE, ULB_NF4LNK), ULB_SYMLINK_PATH);
	assert_int_equal(ulb_nfs4_op_arg(ULB_NFS4_OP_CREATE, 2), ULB_NONE); /* NF4DIR */
	assert_int_equal(ulb_nfs4_op_arg(ULB_NFS4_OP_READ, 0), ULB_NONE);
	assert_int_equal(ulb_nfs4_op_res(ULB_NFS4_OP_READ), ULB_READ_DATA);
	assert_int_equal(ulb_nfs4_op_res(ULB_NFS4_OP_READLINK), ULB_READLINK_PATH);
	assert_int_equal(ulb_nfs4_op_res(ULB_NFS4_OP_READ_PLUS), ULB_READ_PLUS_DATA);
	assert_int_equal(ulb_nfs4_op_res(9), ULB_NONE); /* GETATTR */
	assert_int_equal(ulb_nfs4_op_res(ULB_NFS4_OP_WRITE), ULB_NONE);
}

static void test_other_programs(void **state)
{
	(void)state;
	ulb_lookup(100005, 3, 1, &r); /* MOUNT */
	assert_int_equal(r.read_chunks + r.write_chunks + r.per_op, 0);
	ulb_lookup(100003, 5, 1, &r);
	assert_int_equal(r.read_chunks + r.write_chunks + r.per_op, 0);
	ulb_lookup(0x40000000, 1, 1, &r); /* a callback program (RFC 8267 §4.4) */
	assert_int_equal(r.read_chunks + r.write_chunks + r.per_op, 0);
}

static void test_chunk_len(void **state)
{
	(void)state;
	assert_true(ulb_read_chunk_len_ok(8, 8));
	assert_true(ulb_read_chunk_len_ok(5, 5));
	assert_true(ulb_read_chunk_len_ok(8, 5)); /* with roundup */
	assert_false(ulb_read_chunk_len_ok(7, 5));
	assert_false(ulb_read_chunk_len_ok(12, 8));
	assert_false(ulb_read_chunk_len_ok(4, 5));
	assert_true(ulb_read_chunk_len_ok(0, 0));
	assert_false(ulb_read_chunk_len_ok(4, 0));
	assert_true(ulb_read_chunk_len_ok(0xfffffffcu, 0xfffffff9u));
	assert_false(ulb_read_chunk_len_ok(0, 0xfffffffdu));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nfs3),
		cmocka_unit_test(test_nfs2_not_served),
		cmocka_unit_test(test_nfs4),
		cmocka_unit_test(test_other_programs),
		cmocka_unit_test(test_chunk_len),
	};
	return cmocka_run_group_tests(tests, tables_register, tables_release);
}
