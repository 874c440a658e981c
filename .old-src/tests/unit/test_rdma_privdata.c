/*
 * test_rdma_privdata.c - RFC 8797 private data and inline thresholds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "transport/rdma_privdata.h"

static void test_build_parse(void **state)
{
	uint8_t pd[8];
	struct rdma_privdata p;
	(void)state;
	rdma_privdata_build(pd, true, 4096, 4096);
	static const uint8_t want[8] = { 0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3 };
	assert_memory_equal(pd, want, 8);
	assert_true(rdma_privdata_parse(pd, 8, &p));
	assert_true(p.present);
	assert_true(p.remote_inv);
	assert_int_equal(p.send_size, 4096);
	assert_int_equal(p.recv_size, 4096);
	rdma_privdata_build(pd, false, 1024, 65536);
	assert_true(rdma_privdata_parse(pd, 8, &p));
	assert_false(p.remote_inv);
	assert_int_equal(p.send_size, 1024);
	assert_int_equal(p.recv_size, 65536);
}

static void test_search_any_offset(void **state)
{
	uint8_t buf[56];
	struct rdma_privdata p;
	(void)state;
	/* RFC 8797 §5.2: any offset, aligned or not. */
	for (size_t off = 0; off + 8 <= sizeof(buf); off++) {
		memset(buf, 0x5a, sizeof(buf));
		rdma_privdata_build(buf + off, true, 8192, 2048);
		assert_true(rdma_privdata_parse(buf, sizeof(buf), &p));
		assert_int_equal(p.send_size, 8192);
		assert_int_equal(p.recv_size, 2048);
	}
	/* The identifier too close to the end: the 8 octets do not fit. */
	uint8_t big[64] = { 0 };
	rdma_privdata_build(big + 50, true, 8192, 8192);
	assert_false(rdma_privdata_parse(big, 57, &p));
	assert_true(rdma_privdata_parse(big, 58, &p));
}

static void test_version_and_reserved(void **state)
{
	uint8_t buf[24];
	struct rdma_privdata p;
	(void)state;
	/* A version-2 candidate is skipped; a later version-1 one is used. */
	memset(buf, 0, sizeof(buf));
	rdma_privdata_build(buf, true, 4096, 4096);
	buf[4] = 2;
	rdma_privdata_build(buf + 13, false, 2048, 3072);
	assert_true(rdma_privdata_parse(buf, sizeof(buf), &p));
	assert_false(p.remote_inv);
	assert_int_equal(p.recv_size, 3072);
	/* Only the bad candidate: defaults (RFC 8797 §5.1). */
	assert_false(rdma_privdata_parse(buf, 12, &p));
	assert_false(p.present);
	assert_false(p.remote_inv);
	assert_int_equal(p.send_size, 1024);
	assert_int_equal(p.recv_size, 1024);
	/* Reserved bits are ignored (§4). */
	rdma_privdata_build(buf, true, 4096, 4096);
	buf[5] = 0xff;
	assert_true(rdma_privdata_parse(buf, 8, &p));
	assert_true(p.remote_inv);
	buf[5] = 0xfe;
	assert_true(rdma_privdata_parse(buf, 8, &p));
	assert_false(p.remote_inv);
	/* Nothing at all. */
	assert_false(rdma_privdata_parse(NULL, 0, &p));
	assert_false(rdma_privdata_parse(buf, 7, &p));
}

static void test_size_encoding(void **state)
{
	(void)state;
	assert_int_equal(rdma_privdata_size_encode(1024), 0);
	assert_int_equal(rdma_privdata_size_encode(4096), 3);
	assert_int_equal(rdma_privdata_size_encode(4095), 2); /* rounded down */
	assert_int_equal(rdma_privdata_size_encode(500), 0);
	assert_int_equal(rdma_privdata_size_encode(262144), 255);
	assert_int_equal(rdma_privdata_size_encode(1u << 30), 255);
	for (unsigned v = 0; v < 256; v++)
		assert_int_equal(rdma_privdata_size_encode(rdma_privdata_size_decode((uint8_t)v)), v);
	assert_int_equal(rdma_privdata_size_decode(255), 262144);
}

static void test_thresholds(void **state)
{
	struct rdma_privdata p;
	struct rdma_inline in;
	(void)state;
	/* No private data, v1: 1024 each way. */
	rdma_privdata_parse(NULL, 0, &p);
	rdma_privdata_thresholds(&p, 1, 4096, 4096, true, &in);
	assert_int_equal(in.reply_max, 1024);
	assert_int_equal(in.call_max, 1024);
	assert_false(in.send_inv);
	/* v2 default: 4096 (draft §2.3). */
	rdma_privdata_thresholds(&p, 2, 4096, 4096, true, &in);
	assert_int_equal(in.reply_max, 4096);
	assert_int_equal(in.call_max, 4096);
	rdma_privdata_thresholds(NULL, 2, 2048, 4096, false, &in);
	assert_int_equal(in.reply_max, 2048);
	/* Linux client: R, 4 KiB both; we send 8 KiB, receive 4 KiB. */
	uint8_t pd[8];
	rdma_privdata_build(pd, true, 4096, 4096);
	rdma_privdata_parse(pd, 8, &p);
	rdma_privdata_thresholds(&p, 1, 8192, 4096, true, &in);
	assert_int_equal(in.reply_max, 4096); /* min(our send, their receive) */
	assert_int_equal(in.call_max, 4096);
	assert_true(in.send_inv);
	rdma_privdata_thresholds(&p, 1, 8192, 4096, false, &in);
	assert_false(in.send_inv); /* RFC 8797 §4.1: both must set R */
	/* Client receives 2 KiB only. */
	rdma_privdata_build(pd, false, 65536, 2048);
	rdma_privdata_parse(pd, 8, &p);
	rdma_privdata_thresholds(&p, 1, 4096, 4096, true, &in);
	assert_int_equal(in.reply_max, 2048);
	assert_int_equal(in.call_max, 4096);
	assert_false(in.send_inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_parse),
		cmocka_unit_test(test_search_any_offset),
		cmocka_unit_test(test_version_and_reserved),
		cmocka_unit_test(test_size_encoding),
		cmocka_unit_test(test_thresholds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
