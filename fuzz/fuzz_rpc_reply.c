/*
 * fuzz_rpc_reply.c - libFuzzer target: an arbitrary message offered as the
 * reply to a pending outgoing call (rpc/rpc_clnt.c): the RFC 5531 §9 reply
 * header decoder, XID matching, and the results decoder handed to done().
 * The first word picks the pending call's XID, so most inputs match it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc_clnt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static int done_calls;
static size_t msg_size;
static bool destroying; /* done(CLOSED) is expected from rpc_clnt_destroy() */

static int no_send(struct rpc_clnt *cl, const uint8_t *msg, size_t len)
{
	(void)cl;
	(void)msg;
	(void)len;
	return 0;
}

static void done(struct rpc_clnt_call *cc, enum rpc_clnt_status st)
{
	done_calls++;
	CHECK(st != RPC_CLNT_TIMEOUT && (st != RPC_CLNT_CLOSED || destroying));
	if (st == RPC_CLNT_OK) {
		/* The results decoder covers the bytes after the header, no more. */
		CHECK(cc->reply.res_off <= msg_size && cc->reply.res_off % 4 == 0);
		CHECK(xdr_dec_remaining(&cc->res) == msg_size - cc->reply.res_off);
		uint32_t v;
		while (xdr_dec_u32(&cc->res, &v))
			;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct rpc_clnt_params p = {.timeout_ms = 1000, .max_timeout_ms = 1000, .retries = 1};
	struct rpc_reply_hdr h;
	struct rpc_clnt cl;
	struct rpc_clnt_call cc;
	uint8_t buf[64];

	enum rpc_reply_result r = rpc_reply_decode(data, size, &h);
	if (r == RPC_REPLY_OK) {
		CHECK(h.reply_stat == RPC_MSG_ACCEPTED || h.reply_stat == RPC_MSG_DENIED);
		CHECK(h.verf_len <= RPC_AUTH_MAX_BYTES);
		CHECK(h.res_off <= size);
	}
	CHECK(rpc_clnt_init(&cl, NULL, &p, no_send, "fuzz") == 0);
	uint32_t xid = 1;
	if (size >= 4) {
		memcpy(&xid, data, 4);
		xid = be32toh(xid);
	}
	cl.next_xid = xid;
	rpc_clnt_call_init(&cc, buf, sizeof(buf), 1, 1, 1, NULL);
	cc.done = done;
	CHECK(rpc_clnt_start(&cl, &cc) == 0);
	done_calls = 0;
	msg_size = size;
	bool matched = rpc_clnt_reply(&cl, data, size);
	CHECK(done_calls == (matched ? 1 : 0));
	CHECK(cl.n_pending == (matched ? 0u : 1u));
	destroying = true;
	rpc_clnt_destroy(&cl);
	destroying = false;
	CHECK(done_calls == 1);
	return 0;
}
