/*
 * test_rt_codec.c - cmocka tests of the test requester's own codec
 * (rt_rpcrdma.c, rt_rpc.c): what rdma_requester builds is what RFC 8166
 * describes, and its decoder - which judges the server - rejects what it
 * must.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/rdma/rt_rpc.h"
#include "tests/rdma/rt_rpcrdma.h"

static size_t enc(const struct rt_hdr *h, uint8_t *buf, size_t cap)
{
	struct rt_enc e;

	rt_enc_init(&e, buf, cap);
	rt_hdr_encode(h, &e);
	assert_false(e.overflow);
	return e.len;
}

static void full_header(struct rt_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->xid = 0x11223344;
	h->vers = 1;
	h->credits = 128;
	h->proc = RT_RDMA_MSG;
	h->nreads = 2;
	h->reads[0] = (struct rt_read_seg){ 40, { 0xaa, 4096, 0x1000 } };
	h->reads[1] = (struct rt_read_seg){ 40, { 0xaa, 100, 0x3000 } };
	h->nwrites = 1;
	h->writes[0].nsegs = 2;
	h->writes[0].segs[0] = (struct rt_seg){ 0xbb, 8192, 0x100000000ull };
	h->writes[0].segs[1] = (struct rt_seg){ 0xbb, 8192, 0x100002000ull };
	h->has_reply = true;
	h->reply.nsegs = 1;
	h->reply.segs[0] = (struct rt_seg){ 0xcc, 1024, 0x5000 };
}

/* RFC 8166 §4.2-4.3: the exact words of a header with all three lists. */
static void test_encode_words(void **state)
{
	static const uint32_t want[] = {
		0x11223344, 1, 128, 0,
		1, 40, 0xaa, 4096, 0, 0x1000,
		1, 40, 0xaa, 100, 0, 0x3000,
		0,
		1, 2, 0xbb, 8192, 1, 0, 0xbb, 8192, 1, 0x2000,
		0,
		1, 1, 0xcc, 1024, 0, 0x5000,
	};
	uint8_t buf[512];
	struct rt_hdr h;
	size_t len, i;

	(void)state;
	full_header(&h);
	len = enc(&h, buf, sizeof(buf));
	assert_int_equal(len, sizeof(want));
	for (i = 0; i < len / 4; i++)
		assert_int_equal(rt_get32(buf + 4 * i), want[i]);
}

static void test_roundtrip(void **state)
{
	uint8_t buf[512];
	struct rt_hdr h, d;
	const char *why = NULL;
	size_t len;

	(void)state;
	full_header(&h);
	len = enc(&h, buf, sizeof(buf));
	assert_int_equal(rt_hdr_decode(buf, len, &d, &why), 0);
	assert_int_equal(d.hdr_len, len);
	assert_int_equal(d.nreads, 2);
	assert_int_equal(d.reads[1].seg.length, 100);
	assert_int_equal(d.nwrites, 1);
	assert_int_equal(d.writes[0].segs[1].offset, 0x100002000ull);
	assert_true(d.has_reply);
	assert_int_equal(rt_chunk_bytes(&d.writes[0]), 16384);
}

/* Every cut of a valid header is rejected, never read past. */
static void test_truncation_rejected(void **state)
{
	uint8_t buf[512];
	struct rt_hdr h, d;
	const char *why;
	size_t len, cut;

	(void)state;
	full_header(&h);
	len = enc(&h, buf, sizeof(buf));
	for (cut = 0; cut < len; cut++) {
		why = NULL;
		assert_int_equal(rt_hdr_decode(buf, cut, &d, &why), -1);
		assert_non_null(why);
	}
}

static void test_bad_values_rejected(void **state)
{
	uint8_t buf[512];
	struct rt_hdr h, d;
	const char *why;
	size_t len;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memset(&h, 0, sizeof(h));
	h.xid = 1;
	h.vers = 1;
	h.credits = 1;
	h.proc = RT_RDMA_MSG;
	len = enc(&h, buf, sizeof(buf));
	assert_int_equal(rt_hdr_decode(buf, len, &d, &why), 0);
	rt_put32(buf + 16, 2); /* Read list discriminator: XDR bool 2 */
	assert_int_equal(rt_hdr_decode(buf, len, &d, &why), -1);
	rt_put32(buf + 16, 0);
	rt_put32(buf + 12, RT_RDMA_DONE); /* a server never sends RDMA_DONE */
	assert_int_equal(rt_hdr_decode(buf, len, &d, &why), -1);
	rt_put32(buf + 12, RT_RDMA_MSG);
	rt_put32(buf + 4, 7); /* unknown version in a non-error message */
	assert_int_equal(rt_hdr_decode(buf, len, &d, &why), -1);

	/* A Write chunk claiming 0xffffffff segments. */
	rt_put32(buf + 4, 1);
	rt_put32(buf + 20, 1);
	rt_put32(buf + 24, 0xffffffff);
	assert_int_equal(rt_hdr_decode(buf, len + 4, &d, &why), -1);
}

static void test_error_headers(void **state)
{
	uint8_t buf[64];
	struct rt_hdr h, d;
	const char *why;
	size_t len;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.xid = 9;
	h.vers = 1;
	h.proc = RT_RDMA_ERROR;
	h.err = RT_ERR_VERS;
	h.vers_low = 1;
	h.vers_high = 2;
	len = enc(&h, buf, sizeof(buf));
	assert_int_equal(len, 28);
	assert_int_equal(rt_hdr_decode(buf, len, &d, &why), 0);
	assert_int_equal(d.err, RT_ERR_VERS);
	assert_int_equal(d.vers_high, 2);
	assert_int_equal(rt_hdr_decode(buf, 24, &d, &why), -1);

	h.err = RT_ERR_CHUNK;
	len = enc(&h, buf, sizeof(buf));
	assert_int_equal(len, 20);
	assert_int_equal(rt_hdr_decode(buf, len, &d, &why), 0);
	rt_put32(buf + 16, 9);
	assert_int_equal(rt_hdr_decode(buf, len, &d, &why), -1);
}

/* Version Two draft §4.2: direction word before the lists; RDMA2_OPTIONAL body. */
static void test_v2(void **state)
{
	static const char info[] = "abcde";
	uint8_t buf[128];
	struct rt_hdr h, d;
	const char *why;
	size_t len;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.xid = 5;
	h.vers = 2;
	h.credits = 4;
	h.proc = RT_RDMA_MSG;
	h.direction = RT_DIR_REPLY;
	len = enc(&h, buf, sizeof(buf));
	assert_int_equal(len, 32);
	assert_int_equal(rt_get32(buf + 16), RT_DIR_REPLY);
	assert_int_equal(rt_hdr_decode(buf, len, &d, &why), 0);
	assert_int_equal(d.direction, RT_DIR_REPLY);

	h.proc = RT_RDMA2_OPTIONAL;
	h.optdir = RT_DIR_CALL;
	h.opttype = 0x7e57;
	h.optinfo = (const uint8_t *)info;
	h.optinfo_len = 5;
	len = enc(&h, buf, sizeof(buf));
	assert_int_equal(len, 16 + 8 + 4 + 8);
	assert_int_equal(rt_hdr_decode(buf, len, &d, &why), 0);
	assert_int_equal(d.optinfo_len, 5);
	assert_memory_equal(d.optinfo, info, 5);
}

/* RFC 8797 §4: identifier, version, flags, sizes as (KiB - 1). */
static void test_private_data(void **state)
{
	struct rt_priv p = { RT_PRIV_IDENT, 1, RT_PRIV_FLAG_R, 3, 255 }, q;
	uint8_t b[8];

	(void)state;
	rt_priv_encode(&p, b);
	assert_int_equal(b[0], 0xf6);
	assert_int_equal(b[3], 0x18);
	assert_true(rt_priv_decode(b, 8, &q));
	assert_false(rt_priv_decode(b, 7, &q));
	assert_int_equal(q.flags, RT_PRIV_FLAG_R);
	assert_int_equal(rt_priv_bytes(q.send_size), 4096);
	assert_int_equal(rt_priv_bytes(q.recv_size), 262144);
	assert_int_equal(rt_priv_bytes(0), 1024);
}

/* RFC 5531 §9 replies: accepted SUCCESS with results, GARBAGE_ARGS, denied. */
static void test_rpc_reply(void **state)
{
	uint8_t buf[64];
	struct rt_rpc_reply r;
	struct rt_enc e;
	const char *why;

	(void)state;
	rt_enc_init(&e, buf, sizeof(buf));
	rt_enc_u32(&e, 77);
	rt_enc_u32(&e, 1); /* REPLY */
	rt_enc_u32(&e, 0); /* MSG_ACCEPTED */
	rt_enc_u32(&e, 0); /* verifier AUTH_NONE, empty */
	rt_enc_u32(&e, 0);
	rt_enc_u32(&e, RT_RPC_SUCCESS);
	rt_enc_u32(&e, 0xabcd); /* a result word */
	assert_int_equal(rt_rpc_reply_decode(buf, e.len, &r, &why), 0);
	assert_int_equal(r.xid, 77);
	assert_true(r.accepted);
	assert_int_equal(rt_dec_u32(&r.res), 0xabcd);

	rt_put32(buf + 20, RT_RPC_GARBAGE_ARGS);
	assert_int_equal(rt_rpc_reply_decode(buf, 24, &r, &why), 0);
	assert_int_equal(r.stat, RT_RPC_GARBAGE_ARGS);

	rt_put32(buf + 4, 0); /* a CALL is not a reply */
	assert_int_equal(rt_rpc_reply_decode(buf, 24, &r, &why), -1);
	rt_put32(buf + 4, 1);
	assert_int_equal(rt_rpc_reply_decode(buf, 20, &r, &why), -1);
}

/* The Read chunk position of a WRITE is where the data bytes start. */
static void test_write_position(void **state)
{
	struct rt_fh fh = { .len = 8, .data = "fhfhfhfh" };
	uint8_t buf[256];
	struct rt_enc e;
	size_t pos;

	(void)state;
	rt_enc_init(&e, buf, sizeof(buf));
	rt_rpc_call_hdr(&e, 1, RT_NFS_PROG, 3, RT_NFS3_WRITE, RT_AUTH_NONE);
	assert_int_equal(e.len, 40);
	pos = rt_nfs3_write_args_hdr(&e, &fh, 0, 4096, RT_NFS3_FILE_SYNC);
	/* fh (4 + 8) + offset 8 + count 4 + stable 4 + data length 4 */
	assert_int_equal(pos, 40 + 12 + 8 + 4 + 4 + 4);
	assert_int_equal(rt_get32(buf + pos - 4), 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_words),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_truncation_rejected),
		cmocka_unit_test(test_bad_values_rejected),
		cmocka_unit_test(test_error_headers),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_private_data),
		cmocka_unit_test(test_rpc_reply),
		cmocka_unit_test(test_write_position),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
