/*
 * test_rdma_hdr.c - RPC-over-RDMA transport header decode/encode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "transport/rdma_hdr.h"
#include "tests/unit/test_rdma_util.h"

#define XID 0x11223344u

static struct rdma_limits lim;
static struct rdma_hdr hdr;

static int setup(void **state)
{
	(void)state;
	rdma_limits_default(&lim, 1u << 20, true);
	return 0;
}

static enum rdma_status dec(struct hb *h)
{
	return rdma_hdr_decode(h->buf, hb_len(h), &lim, &hdr, NULL);
}

/* v1 RDMA_MSG, empty lists, RPC call inline. */
static void build_msg(struct hb *h, uint32_t vers)
{
	hb_init(h);
	hb_fixed(h, XID, vers, 128, RDMA_MSG);
	if (vers == 2)
		hb_u32(h, RDMA_DIR_CALL);
	hb_u32(h, 0);
	hb_u32(h, 0);
	hb_u32(h, 0);
	hb_rpc_call(h, XID, 100003, 3, 1);
}

static void test_msg_ok(void **state)
{
	struct hb h;
	(void)state;
	build_msg(&h, 1);
	assert_int_equal(dec(&h), RDMA_ST_OK);
	assert_int_equal(hdr.xid, XID);
	assert_int_equal(hdr.vers, 1);
	assert_int_equal(hdr.credits, 128);
	assert_int_equal(hdr.proc, RDMA_MSG);
	assert_int_equal(hdr.hdr_len, 28);
	assert_int_equal(hdr.payload_len, 40);
	assert_ptr_equal(hdr.payload, h.buf + 28);
	assert_int_equal(hdr.nreads + hdr.nwrites + hdr.has_reply, 0);
}

static void test_short_dropped(void **state)
{
	struct hb h;
	(void)state;
	build_msg(&h, 1);
	/* RFC 8166 §4.5: < 28 bytes: discard, whatever the version says. */
	for (size_t n = 0; n < 28; n++)
		assert_int_equal(rdma_hdr_decode(h.buf, n, &lim, &hdr, NULL), RDMA_ST_DROP);
	build_msg(&h, 9);
	for (size_t n = 0; n < 28; n++)
		assert_int_equal(rdma_hdr_decode(h.buf, n, &lim, &hdr, NULL), RDMA_ST_DROP);
}

static void test_version(void **state)
{
	struct hb h;
	uint8_t out[64];
	(void)state;
	for (uint32_t v = 0; v < 6; v++) {
		build_msg(&h, v);
		enum rdma_status st = dec(&h);
		if (v == 1 || v == 2)
			assert_int_equal(st, RDMA_ST_OK);
		else
			assert_int_equal(st, RDMA_ST_ERR_VERS);
	}
	/* RFC 8166 §4.5: under 28 bytes nothing is answered, ERR_VERS neither. */
	build_msg(&h, 7);
	assert_int_equal(rdma_hdr_decode(h.buf, 27, &lim, &hdr, NULL), RDMA_ST_DROP);
	assert_int_equal(rdma_hdr_decode(h.buf, 28, &lim, &hdr, NULL), RDMA_ST_ERR_VERS);
	size_t n = rdma_hdr_encode_error(out, sizeof(out), &hdr, 5, RDMA_ST_ERR_VERS, &lim);
	assert_int_equal(n, 28);
	assert_int_equal(rd32(out, 0), XID);
	assert_int_equal(rd32(out, 1), 7); /* RFC 8166 §4.5: the failing message's version */
	assert_int_equal(rd32(out, 2), 5);
	assert_int_equal(rd32(out, 3), RDMA_ERROR);
	assert_int_equal(rd32(out, 4), RDMA_ERR_VERS);
	assert_int_equal(rd32(out, 5), 1);
	assert_int_equal(rd32(out, 6), 2);

	/* Receive buffers below 4 KiB: v2 is not offered (draft §2.3). */
	struct rdma_limits v1only;
	rdma_limits_default(&v1only, 1u << 20, false);
	build_msg(&h, 2);
	assert_int_equal(rdma_hdr_decode(h.buf, hb_len(&h), &v1only, &hdr, NULL), RDMA_ST_ERR_VERS);
	n = rdma_hdr_encode_error(out, sizeof(out), &hdr, 1, RDMA_ST_ERR_VERS, &v1only);
	assert_int_equal(rd32(out, 5), 1);
	assert_int_equal(rd32(out, 6), 1);
}

static void test_procs(void **state)
{
	struct hb h;
	(void)state;
	static const struct {
		uint32_t vers, proc;
		enum rdma_status st;
	} cases[] = {
		{ 1, RDMA_MSGP, RDMA_ST_ERR_CHUNK }, /* RFC 8166 §4.6.1 */
		{ 1, RDMA_DONE, RDMA_ST_DROP },      /* §4.6.2 */
		{ 1, RDMA_ERROR, RDMA_ST_DROP },     /* §4.5 */
		{ 1, 5, RDMA_ST_ERR_CHUNK },
		{ 1, 99, RDMA_ST_ERR_CHUNK },
		{ 1, 0xffffffffu, RDMA_ST_ERR_CHUNK },
		{ 2, 2, RDMA_ST_ERR_CHUNK },
		{ 2, 3, RDMA_ST_ERR_CHUNK },
		{ 2, RDMA_ERROR, RDMA_ST_DROP },
		{ 2, 6, RDMA_ST_ERR_CHUNK },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hb_init(&h);
		hb_fixed(&h, XID, cases[i].vers, 1, cases[i].proc);
		for (int k = 0; k < 8; k++)
			hb_u32(&h, 0);
		assert_int_equal(dec(&h), cases[i].st);
	}
}

static void test_discriminators(void **state)
{
	struct hb h;
	(void)state;
	/* Each of the three list discriminators set to 2. */
	for (int which = 0; which < 3; which++) {
		hb_init(&h);
		hb_fixed(&h, XID, 1, 1, RDMA_MSG);
		for (int k = 0; k < 3; k++)
			hb_u32(&h, k == which ? 2 : 0);
		hb_rpc_call(&h, XID, 100003, 3, 0);
		assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);
	}
	/* A discriminator after a Read segment that is neither 0 nor 1. */
	hb_init(&h);
	hb_fixed(&h, XID, 1, 1, RDMA_MSG);
	hb_read(&h, 8, 1, 8, 0);
	hb_u32(&h, 0x100);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);
}

static void build_write_chunk(struct hb *h, uint32_t nsegs, uint32_t seglen)
{
	hb_init(h);
	hb_fixed(h, XID, 1, 1, RDMA_MSG);
	hb_u32(h, 0);
	hb_u32(h, 1);
	hb_u32(h, nsegs);
	for (uint32_t i = 0; i < nsegs; i++)
		hb_seg(h, 0x100 + i, seglen, 0x1000ull * i);
	hb_u32(h, 0);
	hb_u32(h, 0);
	hb_rpc_call(h, XID, 100003, 3, 6);
}

static void test_segment_limits(void **state)
{
	struct hb h;
	(void)state;
	build_write_chunk(&h, 16, 4096);
	assert_int_equal(dec(&h), RDMA_ST_OK);
	assert_int_equal(hdr.nwrites, 1);
	assert_int_equal(hdr.writes[0].nsegs, 16);
	assert_int_equal(hdr.writes[0].length, 16 * 4096);
	assert_int_equal(hdr.wsegs[3].handle, 0x103);
	build_write_chunk(&h, 17, 4096);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);
	/* A huge count is refused before it is used. */
	build_write_chunk(&h, 0, 0);
	memcpy(h.buf + 24, "\xff\xff\xff\xff", 4);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);

	/* 33 segments in one header, each chunk within its own limit. */
	hb_init(&h);
	hb_fixed(&h, XID, 1, 1, RDMA_MSG);
	hb_u32(&h, 0);
	for (int c = 0; c < 3; c++) {
		hb_u32(&h, 1);
		hb_u32(&h, 11);
		for (int i = 0; i < 11; i++)
			hb_seg(&h, 1, 8, 0);
	}
	hb_u32(&h, 0);
	hb_u32(&h, 0);
	hb_rpc_call(&h, XID, 100003, 3, 6);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);

	/* Too many Write chunks. */
	hb_init(&h);
	hb_fixed(&h, XID, 1, 1, RDMA_MSG);
	hb_u32(&h, 0);
	for (int c = 0; c < 9; c++) {
		hb_u32(&h, 1);
		hb_u32(&h, 1);
		hb_seg(&h, 1, 8, 0);
	}
	hb_u32(&h, 0);
	hb_u32(&h, 0);
	hb_rpc_call(&h, XID, 100003, 3, 6);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);
}

static void test_length_limits(void **state)
{
	struct hb h;
	(void)state;
	/* A Write chunk of exactly the limit is fine; one byte more is not. */
	build_write_chunk(&h, 1, lim.max_chunk_bytes);
	assert_int_equal(dec(&h), RDMA_ST_OK);
	build_write_chunk(&h, 1, lim.max_chunk_bytes + 1);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);
	/* Segment lengths that would wrap a 32-bit sum. */
	build_write_chunk(&h, 2, 0x80000000u);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);

	/* Read segments whose sum exceeds the limit. */
	hb_init(&h);
	hb_fixed(&h, XID, 1, 1, RDMA_MSG);
	hb_read(&h, 40, 1, lim.max_chunk_bytes, 0);
	hb_read(&h, 40, 1, 4, 0);
	hb_u32(&h, 0);
	hb_u32(&h, 0);
	hb_u32(&h, 0);
	hb_rpc_call(&h, XID, 100003, 3, 7);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);
}

static void test_read_position_alignment(void **state)
{
	struct hb h;
	(void)state;
	for (uint32_t pos = 33; pos <= 40; pos++) {
		hb_init(&h);
		hb_fixed(&h, XID, 1, 1, RDMA_MSG);
		hb_read(&h, pos, 1, 100, 0);
		hb_u32(&h, 0);
		hb_u32(&h, 0);
		hb_u32(&h, 0);
		hb_rpc_call(&h, XID, 100003, 3, 7);
		assert_int_equal(dec(&h), (pos & 3) ? RDMA_ST_ERR_CHUNK : RDMA_ST_OK);
		if (pos == 40)
			break;
	}
	assert_int_equal(hdr.nreads, 1);
	assert_int_equal(hdr.reads[0].position, 40);
	assert_int_equal(hdr.reads[0].seg.length, 100);
}

static void test_truncated(void **state)
{
	struct hb h;
	(void)state;
	/* Cut a header with every kind of list anywhere inside its lists. */
	hb_init(&h);
	hb_fixed(&h, XID, 1, 1, RDMA_NOMSG);
	hb_read(&h, 0, 1, 200, 0);
	hb_u32(&h, 0);
	hb_u32(&h, 1);
	hb_u32(&h, 2);
	hb_seg(&h, 2, 100, 0);
	hb_seg(&h, 3, 100, 0);
	hb_u32(&h, 0);
	hb_u32(&h, 1);
	hb_u32(&h, 1);
	hb_seg(&h, 4, 4096, 0);
	size_t full = hb_len(&h);
	assert_int_equal(rdma_hdr_decode(h.buf, full, &lim, &hdr, NULL), RDMA_ST_OK);
	assert_true(hdr.has_reply);
	assert_int_equal(hdr.reply.length, 4096);
	assert_int_equal(hdr.nwsegs, 3);
	for (size_t n = 28; n < full; n++)
		assert_int_equal(rdma_hdr_decode(h.buf, n, &lim, &hdr, NULL), RDMA_ST_ERR_CHUNK);
}

static void test_rpc_checks(void **state)
{
	struct hb h;
	(void)state;
	/* RFC 8166 §4.5.2: rdma_xid must equal the RPC XID. */
	hb_init(&h);
	hb_fixed(&h, XID, 1, 1, RDMA_MSG);
	hb_u32(&h, 0);
	hb_u32(&h, 0);
	hb_u32(&h, 0);
	hb_rpc_call(&h, XID + 1, 100003, 3, 0);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);
	/* RDMA_MSG without a payload. */
	build_msg(&h, 1);
	assert_int_equal(rdma_hdr_decode(h.buf, 28, &lim, &hdr, NULL), RDMA_ST_ERR_CHUNK);
	/* An RPC reply (backchannel): dropped. */
	build_msg(&h, 1);
	memcpy(h.buf + 32, "\0\0\0\1", 4);
	assert_int_equal(dec(&h), RDMA_ST_DROP);
	/* RDMA_NOMSG without any chunk. */
	hb_init(&h);
	hb_fixed(&h, XID, 1, 1, RDMA_NOMSG);
	hb_u32(&h, 0);
	hb_u32(&h, 0);
	hb_u32(&h, 0);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);
	/* ... and with a position-zero chunk. */
	hb_init(&h);
	hb_fixed(&h, XID, 1, 1, RDMA_NOMSG);
	hb_read(&h, 0, 7, 3000, 0x5000);
	hb_u32(&h, 0);
	hb_u32(&h, 0);
	hb_u32(&h, 0);
	assert_int_equal(dec(&h), RDMA_ST_OK);
	assert_int_equal(hdr.payload_len, 0);
	/* Check of the assembled call (what the transport does after the Read). */
	struct hb call;
	hb_init(&call);
	hb_rpc_call(&call, XID, 100003, 3, 0);
	assert_int_equal(rdma_hdr_check_rpc(&hdr, call.buf, hb_len(&call), NULL), RDMA_ST_OK);
	assert_int_equal(rdma_hdr_check_rpc(&hdr, call.buf, 7, NULL), RDMA_ST_ERR_CHUNK);
	hdr.xid++;
	assert_int_equal(rdma_hdr_check_rpc(&hdr, call.buf, hb_len(&call), NULL), RDMA_ST_ERR_CHUNK);
}

static void test_v2(void **state)
{
	struct hb h;
	struct rdma_decode_info why;
	(void)state;
	build_msg(&h, 2);
	assert_int_equal(dec(&h), RDMA_ST_OK);
	assert_int_equal(hdr.hdr_len, 32);
	assert_int_equal(hdr.direction, RDMA_DIR_CALL);
	/* Direction not 0/1. */
	build_msg(&h, 2);
	memcpy(h.buf + 16, "\0\0\0\2", 4);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);
	/* REPLY direction: backchannel, dropped. */
	build_msg(&h, 2);
	memcpy(h.buf + 16, "\0\0\0\1", 4);
	assert_int_equal(dec(&h), RDMA_ST_DROP);
	/* Direction CALL, RPC msg_type REPLY: mismatch (draft §4.2.2). */
	build_msg(&h, 2);
	memcpy(h.buf + 36, "\0\0\0\1", 4);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);

	/* RDMA2_OPTIONAL: an unknown type gets RDMA2_ERR_INVALID_OPTION. */
	hb_init(&h);
	hb_fixed(&h, XID, 2, 1, RDMA2_OPTIONAL);
	hb_u32(&h, RDMA_DIR_CALL);
	hb_u32(&h, 0xabcd);
	xdr_enc_opaque(&h.e, "hello", 5);
	assert_int_equal(rdma_hdr_decode(h.buf, hb_len(&h), &lim, &hdr, &why), RDMA_ST_ERR_INVALID_OPTION);
	assert_int_equal(hdr.opttype, 0xabcd);
	uint8_t out[64];
	size_t n = rdma_hdr_encode_error(out, sizeof(out), &hdr, 3, RDMA_ST_ERR_INVALID_OPTION, &lim);
	assert_int_equal(n, 20);
	assert_int_equal(rd32(out, 1), 2);
	assert_int_equal(rd32(out, 3), RDMA_ERROR);
	assert_int_equal(rd32(out, 4), RDMA2_ERR_INVALID_OPTION);
	/* Its optinfo overrunning the message: a bad header. */
	assert_int_equal(rdma_hdr_decode(h.buf, hb_len(&h) - 4, &lim, &hdr, NULL), RDMA_ST_ERR_CHUNK);
	/* In the REPLY direction: dropped. */
	memcpy(h.buf + 16, "\0\0\0\1", 4);
	assert_int_equal(dec(&h), RDMA_ST_DROP);
	/* RDMA2_OPTIONAL in v1 is just an unknown procedure. */
	memcpy(h.buf + 4, "\0\0\0\1", 4);
	assert_int_equal(dec(&h), RDMA_ST_ERR_CHUNK);
}

static void test_encode_reply(void **state)
{
	struct hb h;
	uint8_t out[1024];
	(void)state;
	/* A call with two Write chunks (2 and 1 segments) and a Reply chunk. */
	hb_init(&h);
	hb_fixed(&h, XID, 1, 64, RDMA_MSG);
	hb_u32(&h, 0);
	hb_u32(&h, 1);
	hb_u32(&h, 2);
	hb_seg(&h, 0xa, 100, 0x1000);
	hb_seg(&h, 0xb, 100, 0x2000);
	hb_u32(&h, 1);
	hb_u32(&h, 1);
	hb_seg(&h, 0xc, 50, 0x3000);
	hb_u32(&h, 0);
	hb_u32(&h, 1);
	hb_u32(&h, 1);
	hb_seg(&h, 0xd, 8192, 0x4000);
	hb_rpc_call(&h, XID, 100003, 4, 1);
	assert_int_equal(dec(&h), RDMA_ST_OK);

	uint32_t used[8] = { 150, 0 };
	size_t n = rdma_hdr_encode_reply(out, sizeof(out), &hdr, 32, used, false, 0);
	assert_int_equal(n, rdma_hdr_reply_len(&hdr, false));
	assert_int_equal(rd32(out, 0), XID);
	assert_int_equal(rd32(out, 1), 1);
	assert_int_equal(rd32(out, 2), 32);
	assert_int_equal(rd32(out, 3), RDMA_MSG);
	assert_int_equal(rd32(out, 4), 0);  /* no Read list */
	assert_int_equal(rd32(out, 5), 1);  /* Write chunk 0 */
	assert_int_equal(rd32(out, 6), 2);
	assert_int_equal(rd32(out, 7), 0xa);
	assert_int_equal(rd32(out, 8), 100);
	assert_int_equal(rd32(out, 11), 0xb);
	assert_int_equal(rd32(out, 12), 50);
	assert_int_equal(rd32(out, 15), 1);  /* Write chunk 1, unused */
	assert_int_equal(rd32(out, 16), 1);
	assert_int_equal(rd32(out, 18), 0);
	assert_int_equal(rd32(out, 21), 0);  /* end of Write list */
	assert_int_equal(rd32(out, 22), 0);  /* no Reply chunk: reply went inline */
	assert_int_equal(n, 23 * 4);

	/* RDMA_NOMSG: the Reply chunk comes back with the bytes used. */
	n = rdma_hdr_encode_reply(out, sizeof(out), &hdr, 32, NULL, true, 5000);
	assert_int_equal(n, rdma_hdr_reply_len(&hdr, true));
	assert_int_equal(rd32(out, 3), RDMA_NOMSG);
	assert_int_equal(rd32(out, 22), 1);
	assert_int_equal(rd32(out, 23), 1);
	assert_int_equal(rd32(out, 24), 0xd);
	assert_int_equal(rd32(out, 25), 5000);
	/* Too small a buffer: 0, never a partial header. */
	assert_int_equal(rdma_hdr_encode_reply(out, 40, &hdr, 32, NULL, true, 5000), 0);

	/* v2: same, with the direction word after the fixed fields. */
	build_msg(&h, 2);
	assert_int_equal(dec(&h), RDMA_ST_OK);
	n = rdma_hdr_encode_reply(out, sizeof(out), &hdr, 9, NULL, false, 0);
	assert_int_equal(n, 32);
	assert_int_equal(rd32(out, 1), 2);
	assert_int_equal(rd32(out, 4), RDMA_DIR_REPLY);
}

static void test_encode_errors(void **state)
{
	struct hb h;
	uint8_t out[64];
	(void)state;
	build_msg(&h, 1);
	assert_int_equal(dec(&h), RDMA_ST_OK);
	size_t n = rdma_hdr_encode_error(out, sizeof(out), &hdr, 4, RDMA_ST_ERR_CHUNK, &lim);
	assert_int_equal(n, 20);
	assert_int_equal(rd32(out, 3), RDMA_ERROR);
	assert_int_equal(rd32(out, 4), RDMA_ERR_CHUNK);
	assert_int_equal(rdma_hdr_encode_error(out, sizeof(out), &hdr, 4, RDMA_ST_OK, &lim), 0);
	assert_int_equal(rdma_hdr_encode_error(out, 19, &hdr, 4, RDMA_ST_ERR_CHUNK, &lim), 0);

	n = rdma_hdr_encode_garbage_args(out, sizeof(out), &hdr, 4);
	assert_int_equal(n, 52);
	assert_int_equal(rd32(out, 3), RDMA_MSG);
	assert_int_equal(rd32(out, 7), XID);
	assert_int_equal(rd32(out, 8), 1);  /* REPLY */
	assert_int_equal(rd32(out, 9), 0);  /* MSG_ACCEPTED */
	assert_int_equal(rd32(out, 12), 4); /* GARBAGE_ARGS */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msg_ok),
		cmocka_unit_test(test_short_dropped),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_procs),
		cmocka_unit_test(test_discriminators),
		cmocka_unit_test(test_segment_limits),
		cmocka_unit_test(test_length_limits),
		cmocka_unit_test(test_read_position_alignment),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_rpc_checks),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_encode_reply),
		cmocka_unit_test(test_encode_errors),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
