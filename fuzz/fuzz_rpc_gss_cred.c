/*
 * fuzz_rpc_gss_cred.c - libFuzzer target: the RPCSEC_GSS credential body
 * (RFC 2203 §5, rpc/rpc_gss.c: rpc_gss_cred_decode, then rpc_gss_next for
 * every context state) and the sequence window (§5.3.3.1: rpc_gss_seq_check
 * against a reference model), and rpc_gss_init_res (§5.2.3.1). Byte 0 picks:
 * even, the rest is a credential body and, the same bytes, an rpc_gss_init_res;
 * odd, the rest is 16-bit signed steps from the highest seq_num so far.
 * Replayed in every build over fuzz/corpus/rpc_gss_cred (fuzz_replay.c).
 *
 * Invariants checked with abort(): an accepted version-1 body encodes back to
 * the input (but for the handle's padding); its handle is within RPC_GSS_HANDLE_MAX; the table
 * refuses with an auth_stat and accepts with none, never DATA/DESTROY without
 * an established context, never INIT with a handle; the window agrees with
 * the model (a seq_num is accepted at most once, never below the window).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc_gss.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static void fuzz_cred(const uint8_t *b, size_t n)
{
	struct rpc_gss_cred gc;
	uint8_t out[512];
	struct xdr_enc e;
	int as;

	if (n > 400) /* RFC 5531 §8.2: the body of an opaque_auth */
		return;
	if (rpc_gss_cred_decode(b, (uint32_t)n, &gc) != RPC_AUTH_OK)
		return;
	if (gc.vers == RPC_GSS_VERS_1) {
		CHECK(gc.handle_len <= RPC_GSS_HANDLE_MAX);
		xdr_enc_init(&e, out, sizeof(out));
		rpc_gss_cred_encode(&e, &gc);
		/* The same bytes, but for the handle's XDR padding (not checked on decode). */
		CHECK(!e.overflow && xdr_enc_len(&e) == n && memcmp(out, b, 20 + gc.handle_len) == 0);
	}
	for (int st = RPC_GSS_CTX_FREE; st <= RPC_GSS_CTX_DEAD; st++) {
		for (int np = 0; np < 2; np++) {
			enum rpc_gss_action a = rpc_gss_next(&gc, (enum rpc_gss_ctx_state)st, np, &as);
			CHECK((a == RPC_GSS_ACT_REJECT) == (as != RPC_AUTH_OK));
			if (a == RPC_GSS_ACT_DATA || a == RPC_GSS_ACT_DESTROY)
				CHECK(st == RPC_GSS_CTX_ESTABLISHED && gc.seq < RPC_GSS_MAXSEQ);
			if (a == RPC_GSS_ACT_INIT)
				CHECK(gc.handle_len == 0 && np);
			if (a == RPC_GSS_ACT_CONTINUE)
				CHECK(st == RPC_GSS_CTX_ESTABLISHING && np);
			if (a != RPC_GSS_ACT_REJECT)
				CHECK(gc.vers == RPC_GSS_VERS_1);
		}
	}
}

/* The same bytes as rpc_gss_init_res (§5.2.3.1, rpc_gss_init_res_decode): what decodes stays
 * inside the input and within its limits, and encodes back to as many bytes. */
static void fuzz_init_res(const uint8_t *b, size_t n)
{
	struct rpc_gss_init_res r;
	struct xdr_dec d;
	struct xdr_enc e;
	uint8_t out[1024];

	xdr_dec_init(&d, b, n);
	if (rpc_gss_init_res_decode(&d, 512, &r) != 0)
		return;
	CHECK(r.handle_len <= RPC_GSS_HANDLE_MAX && r.token_len <= 512);
	CHECK(r.token >= b && (size_t)(r.token - b) + r.token_len <= n);
	xdr_enc_init(&e, out, sizeof(out));
	rpc_gss_init_res_encode(&e, &r);
	CHECK(!e.overflow && xdr_enc_len(&e) == n);
}

static uint32_t accepted[4096];

static void fuzz_window(const uint8_t *b, size_t n)
{
	struct rpc_gss_seqwin w = { 0 };
	uint32_t max = 1u << 20, n_acc = 0;
	bool started = false;

	for (size_t i = 0; i + 1 < n && n_acc < 4096; i += 2) {
		int16_t step = (int16_t)((uint16_t)b[i] << 8 | b[i + 1]);
		uint32_t seq = (uint32_t)((int64_t)max + step);
		enum rpc_gss_seq_result want;

		if (!started || seq > max) {
			want = RPC_GSS_SEQ_OK;
		} else if (max - seq >= RPC_GSS_WINDOW) {
			want = RPC_GSS_SEQ_OLD;
		} else {
			want = RPC_GSS_SEQ_OK;
			for (uint32_t k = 0; k < n_acc; k++)
				if (accepted[k] == seq)
					want = RPC_GSS_SEQ_REPLAY;
		}
		CHECK(rpc_gss_seq_check(&w, seq) == want);
		if (want == RPC_GSS_SEQ_OK) {
			accepted[n_acc++] = seq;
			if (!started || seq > max)
				max = seq;
			started = true;
		}
		CHECK(w.max == max);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		fuzz_window(data + 1, size - 1);
	} else {
		fuzz_cred(data + 1, size - 1);
		fuzz_init_res(data + 1, size - 1);
	}
	return 0;
}
