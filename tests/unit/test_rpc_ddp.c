/*
 * test_rpc_ddp.c - handler-side payload helpers:
 * rpc_payload_buf bounds, rpc_dec_ddp (Read chunk at the position or inline),
 * rpc_enc_ddp segments and rpc_reply_len.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "rpc/rpc.h"
#include "rpc/rpc_gss.h"
#include "rpc/rpc_internal.h"
#include "tests/unit/rpc_test_msg.h"

static struct rpc_call c;
static uint8_t payload[4096];
static uint8_t reply[512];

static void reset_call(void)
{
	memset(&c, 0, sizeof(c));
	c.payload_area = payload;
	c.payload_cap = sizeof(payload);
	c.reply_buf = reply;
	c.reply_cap = sizeof(reply);
	xdr_enc_init(&c.res, reply, sizeof(reply));
}

static void test_payload_buf(void **state)
{
	(void)state;
	reset_call();
	uint8_t *a = rpc_payload_buf(&c, 100);
	assert_ptr_equal(a, payload);
	uint8_t *b = rpc_payload_buf(&c, 10);
	assert_non_null(b);
	assert_true(b >= a + 100);
	assert_int_equal((uintptr_t)(b - payload) % 64, 0);
	assert_null(rpc_payload_buf(&c, sizeof(payload)));
	assert_null(rpc_payload_buf(&c, SIZE_MAX));
	size_t left = c.payload_cap - c.payload_used;
	assert_non_null(rpc_payload_buf(&c, left));
	assert_null(rpc_payload_buf(&c, 1));
	assert_non_null(rpc_payload_buf(&c, 0));

	reset_call();
	assert_non_null(rpc_payload_buf(&c, sizeof(payload)));
	reset_call();
	c.payload_area = NULL;
	c.payload_cap = 0;
	assert_null(rpc_payload_buf(&c, 1));
}

static void test_dec_inline(void **state)
{
	(void)state;
	struct tmsg m;
	const uint8_t *data;

	reset_call();
	m.n = 0;
	tmsg_u32(&m, 0xaaaaaaaa);
	tmsg_bytes(&m, "abcdefg", 7);
	tmsg_u32(&m, 0xbbbbbbbb);
	xdr_dec_init(&c.args, m.b, m.n);
	uint32_t v;
	assert_true(xdr_dec_u32(&c.args, &v));
	assert_true(rpc_dec_ddp(&c, 7, &data));
	assert_memory_equal(data, "abcdefg", 7);
	assert_true(xdr_dec_u32(&c.args, &v)); /* padding skipped */
	assert_int_equal(v, 0xbbbbbbbb);
	assert_false(rpc_dec_ddp(&c, 1, &data)); /* nothing left */

	xdr_dec_init(&c.args, m.b, m.n);
	assert_false(rpc_dec_ddp(&c, 0xffffffff, &data));
	assert_false(rpc_dec_ddp(&c, 17, &data)); /* 16 bytes in all */
	assert_true(rpc_dec_ddp(&c, 13, &data));  /* 13 + pad 3 == 16 */
	assert_int_equal(xdr_dec_remaining(&c.args), 0);
}

static void test_dec_read_chunk(void **state)
{
	(void)state;
	struct tmsg m;
	const uint8_t *data;
	static const uint8_t chunk[5000] = {1, 2, 3};
	static const uint8_t chunk2[9] = {9};

	/* Inline stream with the data reduced out: header word, (hole), trailer. */
	reset_call();
	m.n = 0;
	tmsg_u32(&m, 5000);   /* the length word stays inline */
	tmsg_u32(&m, 0x11111111);
	tmsg_u32(&m, 9);
	tmsg_u32(&m, 0x22222222);
	xdr_dec_init(&c.args, m.b, m.n);
	c.ddp_in[0] = (struct rpc_ddp_in){.position = 4, .len = 5000, .data = chunk};
	/* Second chunk: its Position counts the first chunk's bytes and roundup. */
	c.ddp_in[1] = (struct rpc_ddp_in){.position = 4 + 5000 + 4 + 4, .len = 9, .data = chunk2};
	c.n_ddp_in = 2;

	uint32_t len, v;
	assert_true(xdr_dec_u32(&c.args, &len));
	assert_true(rpc_dec_ddp(&c, len, &data));
	assert_ptr_equal(data, chunk);
	assert_true(xdr_dec_u32(&c.args, &v));
	assert_int_equal(v, 0x11111111);
	assert_true(xdr_dec_u32(&c.args, &len));
	assert_true(rpc_dec_ddp(&c, len, &data));
	assert_ptr_equal(data, chunk2);
	assert_true(xdr_dec_u32(&c.args, &v));
	assert_int_equal(v, 0x22222222);

	/* A chunk whose length disagrees with the XDR length: GARBAGE_ARGS. */
	reset_call();
	xdr_dec_init(&c.args, m.b, m.n);
	c.ddp_in[0] = (struct rpc_ddp_in){.position = 4, .len = 4999, .data = chunk};
	c.n_ddp_in = 1;
	assert_true(xdr_dec_u32(&c.args, &len));
	assert_false(rpc_dec_ddp(&c, len, &data));

	/* RFC 8166 §3.4.5: a 9-byte item whose chunk includes its roundup (12) is
	 * accepted; 13 bytes is not a roundup and is refused. */
	m.n = 0;
	tmsg_u32(&m, 9);
	tmsg_u32(&m, 0x33333333);
	for (uint32_t clen = 9; clen <= 13; clen++) {
		reset_call();
		xdr_dec_init(&c.args, m.b, m.n);
		c.ddp_in[0] = (struct rpc_ddp_in){.position = 4, .len = clen, .data = chunk};
		c.n_ddp_in = 1;
		assert_true(xdr_dec_u32(&c.args, &len));
		if (clen == 9 || clen == 12) {
			assert_true(rpc_dec_ddp(&c, len, &data));
			assert_true(xdr_dec_u32(&c.args, &v));
			assert_int_equal(v, 0x33333333);
		} else {
			assert_false(rpc_dec_ddp(&c, len, &data));
		}
	}
}

static void test_enc_ddp(void **state)
{
	(void)state;
	static uint8_t data[100];

	reset_call();
	xdr_enc_u32(&c.res, 7);
	rpc_enc_ddp(&c, data, 5);
	xdr_enc_u32(&c.res, 8);
	assert_int_equal(c.n_ddp_out, 1);
	assert_int_equal(c.ddp_out[0].offset, 8);
	assert_int_equal(c.ddp_out[0].len, 5);
	assert_ptr_equal(c.ddp_out[0].data, data);
	assert_int_equal(xdr_enc_len(&c.res), 12);
	assert_int_equal(rpc_reply_len(&c), 12 + 8);
	assert_int_equal(tget_u32(reply, 4), 5);

	/* More segments than RPC_MAX_DDP_OUT: the rest is copied inline. */
	reset_call();
	for (unsigned i = 0; i < RPC_MAX_DDP_OUT + 2; i++) {
		data[0] = (uint8_t)i;
		rpc_enc_ddp(&c, data, 3);
	}
	assert_int_equal(c.n_ddp_out, RPC_MAX_DDP_OUT);
	assert_int_equal(xdr_enc_len(&c.res), 4 * RPC_MAX_DDP_OUT + 2 * 8);
	assert_int_equal(rpc_reply_len(&c), (4 + 4) * (RPC_MAX_DDP_OUT + 2));

	/* Zero-length item. */
	reset_call();
	rpc_enc_ddp(&c, data, 0);
	assert_int_equal(rpc_reply_len(&c), 4);

	/* No room for the length word: nothing recorded. */
	reset_call();
	xdr_enc_init(&c.res, reply, 2);
	rpc_enc_ddp(&c, data, 5);
	assert_true(c.res.overflow);
	assert_int_equal(c.n_ddp_out, 0);
}

/*
 * RPCSEC_GSS krb5i/krb5p (c->gss.wrap): the reply's encoder stops
 * RPC_GSS_REPLY_SLACK short of the buffer's end, so results that fill it (a
 * large READDIR) still leave room for the checksum or wrap token (RFC 2203
 * §5.3.2.2, §5.3.2.3); data carried inline from the buffer's reserved tail
 * (nfs_bulk_buf's, with no payload area) is moved down intact, and the tail
 * given back stops at the same mark.
 */
static void test_wrapped_room(void **state)
{
	static uint8_t data[40];

	(void)state;
	reset_call();
	assert_int_equal(rpc_res_cap(&c), sizeof(reply));
	c.gss.wrap = true;
	assert_int_equal(rpc_res_cap(&c), sizeof(reply) - RPC_GSS_REPLY_SLACK);
	rpc_enc_accepted(&c, 0);
	assert_ptr_equal(c.res.end, reply + sizeof(reply) - RPC_GSS_REPLY_SLACK);

	/* the tail as nfs_bulk_buf() takes it: the encoder's end moves down */
	c.res.end -= 100;
	uint8_t *tail = c.res.end;
	for (unsigned i = 0; i < 98; i++)
		tail[i] = (uint8_t)(i + 1);
	memcpy(data, tail, sizeof(data));
	size_t at = xdr_enc_len(&c.res);
	rpc_enc_ddp(&c, tail, 98);
	assert_false(c.res.overflow);
	assert_int_equal(c.n_ddp_out, 0);
	assert_int_equal(tget_u32(reply, at), 98);
	assert_memory_equal(reply + at + 4, data, sizeof(data));
	assert_int_equal(reply[at + 4 + 97], 98);
	assert_int_equal(reply[at + 4 + 98], 0); /* the XDR pad, zeroed after the move */
	assert_int_equal(reply[at + 4 + 99], 0);
	assert_ptr_equal(c.res.end, reply + sizeof(reply) - RPC_GSS_REPLY_SLACK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_payload_buf),
		cmocka_unit_test(test_dec_inline),
		cmocka_unit_test(test_dec_read_chunk),
		cmocka_unit_test(test_enc_ddp),
		cmocka_unit_test(test_wrapped_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
