/*
 * test_rpc_gss.c - RPCSEC_GSS pure pieces (rpc/rpc_gss.c): the credential
 * codec with valid, truncated and oversized bodies, rpc_gss_init_res's codec
 * (round trip, truncations, limits, RFC 2203 §5.2.3.1's checks), the control-procedure
 * table, the sequence window, and the context table's handles, references,
 * per-client share and LRU eviction, the principals listed for the stats
 * (rpc_gss_table_principals) and the calls-by-flavor mapping (rpc_stats.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rpc/rpc_clnt.h"
#include "rpc/rpc_gss.h"
#include "rpc/rpc_internal.h"

static size_t enc(uint8_t *buf, size_t cap, const struct rpc_gss_cred *gc)
{
	struct xdr_enc e;
	xdr_enc_init(&e, buf, cap);
	rpc_gss_cred_encode(&e, gc);
	assert_false(e.overflow);
	return xdr_enc_len(&e);
}

static void test_cred_round_trip(void **state)
{
	(void)state;
	struct rpc_gss_cred in = { .vers = 1, .proc = RPC_GSS_DATA, .seq = 77, .svc = RPC_GSS_SVC_PRIVACY,
				   .handle_len = 5, .handle = { 1, 2, 3, 4, 5 } }, out;
	uint8_t buf[128];
	size_t n = enc(buf, sizeof(buf), &in);

	assert_int_equal(n, 16 + 4 + 8);
	assert_int_equal(rpc_gss_cred_decode(buf, (uint32_t)n, &out), RPC_AUTH_OK);
	assert_memory_equal(&in, &out, sizeof(in));
	/* Every truncation is refused, and so is a trailing word. */
	for (size_t cut = 4; cut < n; cut++)
		assert_int_equal(rpc_gss_cred_decode(buf, (uint32_t)cut, &out), RPC_AUTH_BADCRED);
	memset(buf + n, 0, 4);
	assert_int_equal(rpc_gss_cred_decode(buf, (uint32_t)n + 4, &out), RPC_AUTH_BADCRED);
	assert_int_equal(rpc_gss_cred_decode(buf, 0, &out), RPC_AUTH_BADCRED);
}

static void test_cred_handle_limit(void **state)
{
	(void)state;
	struct rpc_gss_cred in = { .vers = 1, .handle_len = RPC_GSS_HANDLE_MAX }, out;
	uint8_t buf[128];
	size_t n = enc(buf, sizeof(buf), &in);

	assert_int_equal(rpc_gss_cred_decode(buf, (uint32_t)n, &out), RPC_AUTH_OK);
	/* A length word over the limit (and one past the body) is refused before any copy. */
	buf[19] = RPC_GSS_HANDLE_MAX + 4;
	assert_int_equal(rpc_gss_cred_decode(buf, (uint32_t)n, &out), RPC_AUTH_BADCRED);
	buf[16] = 0xff;
	assert_int_equal(rpc_gss_cred_decode(buf, (uint32_t)n, &out), RPC_AUTH_BADCRED);
}

static void test_cred_other_version(void **state)
{
	(void)state;
	uint8_t buf[4] = { 0, 0, 0, 2 };
	struct rpc_gss_cred out;
	int as;

	/* Decodes (the union arm is unknown), then the table refuses it. */
	assert_int_equal(rpc_gss_cred_decode(buf, 4, &out), RPC_AUTH_OK);
	assert_int_equal(rpc_gss_next(&out, RPC_GSS_CTX_ESTABLISHED, true, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(as, RPC_AUTH_BADCRED);
}

static enum rpc_gss_action next(uint32_t proc, uint32_t svc, uint32_t seq, uint32_t hlen,
				enum rpc_gss_ctx_state st, bool null_proc, int *as)
{
	struct rpc_gss_cred gc = { .vers = 1, .proc = proc, .seq = seq, .svc = svc, .handle_len = hlen };
	return rpc_gss_next(&gc, st, null_proc, as);
}

/* RFC 2203 §5.2.3.1: rpc_gss_init_res as the server encodes it and an initiator decodes it. */
static void test_init_res(void **state)
{
	(void)state;
	static const uint8_t tok[5] = { 9, 8, 7, 6, 5 };
	struct rpc_gss_init_res in = { .handle_len = 8, .handle = { 0, 0, 0, 3, 0, 0, 0, 1 },
				       .major = RPC_GSS_S_COMPLETE, .minor = 0, .window = 128,
				       .token = tok, .token_len = sizeof(tok) }, out;
	uint8_t buf[128];
	struct xdr_enc e;
	struct xdr_dec d;

	xdr_enc_init(&e, buf, sizeof(buf));
	rpc_gss_init_res_encode(&e, &in);
	size_t n = xdr_enc_len(&e);
	assert_int_equal(n, 4 + 8 + 12 + 4 + 8);
	xdr_dec_init(&d, buf, n);
	assert_int_equal(rpc_gss_init_res_decode(&d, 64, &out), 0);
	assert_int_equal(out.handle_len, 8);
	assert_memory_equal(out.handle, in.handle, 8);
	assert_int_equal(out.window, 128);
	assert_int_equal(out.token_len, sizeof(tok));
	assert_memory_equal(out.token, tok, sizeof(tok));
	/* Every truncation, a trailing word, a token over the caller's limit are refused. */
	for (size_t cut = 0; cut < n; cut++) {
		xdr_dec_init(&d, buf, cut);
		assert_int_equal(rpc_gss_init_res_decode(&d, 64, &out), -1);
	}
	memset(buf + n, 0, 4);
	xdr_dec_init(&d, buf, n + 4);
	assert_int_equal(rpc_gss_init_res_decode(&d, 64, &out), -1);
	xdr_dec_init(&d, buf, n);
	assert_int_equal(rpc_gss_init_res_decode(&d, 4, &out), -1);
}

/* RFC 2203 §5.2.3.1: a handle over the limit; a complete context without a window or a handle; an error. */
static void test_init_res_refused(void **state)
{
	(void)state;
	struct rpc_gss_init_res in = { .handle_len = RPC_GSS_HANDLE_MAX, .major = RPC_GSS_S_CONTINUE_NEEDED }, out;
	uint8_t buf[128];
	struct xdr_enc e;
	struct xdr_dec d;

	xdr_enc_init(&e, buf, sizeof(buf));
	rpc_gss_init_res_encode(&e, &in);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_int_equal(rpc_gss_init_res_decode(&d, 64, &out), 0); /* continue: no window yet */
	buf[3] = RPC_GSS_HANDLE_MAX + 4; /* the handle's length word */
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_int_equal(rpc_gss_init_res_decode(&d, 1024, &out), -1);

	in = (struct rpc_gss_init_res){ .handle_len = 8, .major = RPC_GSS_S_COMPLETE, .window = 0 };
	xdr_enc_init(&e, buf, sizeof(buf));
	rpc_gss_init_res_encode(&e, &in);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_int_equal(rpc_gss_init_res_decode(&d, 64, &out), -1);

	in = (struct rpc_gss_init_res){ .handle_len = 0, .major = RPC_GSS_S_COMPLETE, .window = 128 };
	xdr_enc_init(&e, buf, sizeof(buf));
	rpc_gss_init_res_encode(&e, &in);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_int_equal(rpc_gss_init_res_decode(&d, 64, &out), -1);

	/* A failure (e.g. GSS_S_FAILURE, 13 << 16) carries no handle: decoded, the caller reads major. */
	in = (struct rpc_gss_init_res){ .major = 13u << 16, .minor = 5 };
	xdr_enc_init(&e, buf, sizeof(buf));
	rpc_gss_init_res_encode(&e, &in);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_int_equal(rpc_gss_init_res_decode(&d, 64, &out), 0);
	assert_int_equal(out.major, 13u << 16);
	assert_int_equal(out.minor, 5);
}

static void test_state_table(void **state)
{
	(void)state;
	int as;
	const enum rpc_gss_ctx_state F = RPC_GSS_CTX_FREE, I = RPC_GSS_CTX_ESTABLISHING,
				     E = RPC_GSS_CTX_ESTABLISHED;

	assert_int_equal(next(RPC_GSS_INIT, 1, 0, 0, F, true, &as), RPC_GSS_ACT_INIT);
	assert_int_equal(next(RPC_GSS_INIT, 1, 0, 8, F, true, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(as, RPC_AUTH_BADCRED);
	assert_int_equal(next(RPC_GSS_INIT, 1, 0, 0, F, false, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(next(RPC_GSS_CONTINUE_INIT, 1, 0, 8, I, true, &as), RPC_GSS_ACT_CONTINUE);
	assert_int_equal(next(RPC_GSS_CONTINUE_INIT, 1, 0, 8, E, true, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(as, RPCSEC_GSS_CREDPROBLEM);
	for (uint32_t svc = 1; svc <= 3; svc++)
		assert_int_equal(next(RPC_GSS_DATA, svc, 5, 8, E, false, &as), RPC_GSS_ACT_DATA);
	assert_int_equal(next(RPC_GSS_DATA, 4, 5, 8, E, false, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(as, RPC_AUTH_BADCRED);
	assert_int_equal(next(RPC_GSS_DATA, 0, 5, 8, E, false, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(next(RPC_GSS_DATA, 1, 5, 8, F, false, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(as, RPCSEC_GSS_CREDPROBLEM);
	assert_int_equal(next(RPC_GSS_DATA, 1, 5, 8, I, false, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(as, RPCSEC_GSS_CREDPROBLEM);
	assert_int_equal(next(RPC_GSS_DATA, 1, RPC_GSS_MAXSEQ, 8, E, false, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(as, RPCSEC_GSS_CTXPROBLEM);
	assert_int_equal(next(RPC_GSS_DATA, 1, RPC_GSS_MAXSEQ - 1, 8, E, false, &as), RPC_GSS_ACT_DATA);
	assert_int_equal(next(RPC_GSS_DESTROY, 1, 9, 8, E, true, &as), RPC_GSS_ACT_DESTROY);
	assert_int_equal(next(RPC_GSS_DESTROY, 1, 9, 8, E, false, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(next(RPC_GSS_DESTROY, 1, 9, 8, F, true, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(as, RPCSEC_GSS_CREDPROBLEM);
	assert_int_equal(next(4, 1, 9, 8, E, true, &as), RPC_GSS_ACT_REJECT);
	assert_int_equal(as, RPC_AUTH_BADCRED);
}

static void test_seq_window(void **state)
{
	(void)state;
	struct rpc_gss_seqwin w = { 0 };

	assert_int_equal(rpc_gss_seq_check(&w, 1000), RPC_GSS_SEQ_OK);
	assert_int_equal(rpc_gss_seq_check(&w, 1000), RPC_GSS_SEQ_REPLAY);
	/* Out of order inside the window: accepted once. */
	assert_int_equal(rpc_gss_seq_check(&w, 990), RPC_GSS_SEQ_OK);
	assert_int_equal(rpc_gss_seq_check(&w, 990), RPC_GSS_SEQ_REPLAY);
	assert_int_equal(rpc_gss_seq_check(&w, 1000 - RPC_GSS_WINDOW + 1), RPC_GSS_SEQ_OK);
	assert_int_equal(rpc_gss_seq_check(&w, 1000 - RPC_GSS_WINDOW), RPC_GSS_SEQ_OLD);
	assert_int_equal(rpc_gss_seq_check(&w, 0), RPC_GSS_SEQ_OLD);
	/* Moving up by less than the window keeps what is still inside. */
	assert_int_equal(rpc_gss_seq_check(&w, 1010), RPC_GSS_SEQ_OK);
	assert_int_equal(rpc_gss_seq_check(&w, 990), RPC_GSS_SEQ_REPLAY);
	assert_int_equal(rpc_gss_seq_check(&w, 1005), RPC_GSS_SEQ_OK);
	assert_int_equal(rpc_gss_seq_check(&w, 1000 - RPC_GSS_WINDOW + 1), RPC_GSS_SEQ_OLD);
	/* A jump past the window forgets everything below. */
	assert_int_equal(rpc_gss_seq_check(&w, 5000), RPC_GSS_SEQ_OK);
	assert_int_equal(rpc_gss_seq_check(&w, 5000 - RPC_GSS_WINDOW + 1), RPC_GSS_SEQ_OK);
	assert_int_equal(rpc_gss_seq_check(&w, 1010), RPC_GSS_SEQ_OLD);
	/* Every number of a window, in reverse, accepted once. */
	struct rpc_gss_seqwin v = { 0 };
	for (uint32_t s = 300; s > 300 - RPC_GSS_WINDOW; s--)
		assert_int_equal(rpc_gss_seq_check(&v, s), RPC_GSS_SEQ_OK);
	for (uint32_t s = 300; s > 300 - RPC_GSS_WINDOW; s--)
		assert_int_equal(rpc_gss_seq_check(&v, s), RPC_GSS_SEQ_REPLAY);
	/* Seq 0 first is an ordinary start. */
	struct rpc_gss_seqwin z = { 0 };
	assert_int_equal(rpc_gss_seq_check(&z, 0), RPC_GSS_SEQ_OK);
	assert_int_equal(rpc_gss_seq_check(&z, 0), RPC_GSS_SEQ_REPLAY);
}

static int released;
static void count_release(void *mech)
{
	(void)mech;
	released++;
}

static void test_table_lifecycle(void **state)
{
	(void)state;
	struct rpc_gss_table t;
	uint8_t h[RPC_GSS_HANDLE_LEN];
	enum rpc_gss_ctx_state st;

	released = 0;
	assert_int_equal(rpc_gss_table_init(&t, 4, 2, count_release), 0);
	struct rpc_gss_ctx *x = rpc_gss_ctx_new(&t, 1, "peer", h);
	assert_non_null(x);
	x->mech = &t;
	assert_ptr_equal(rpc_gss_ctx_get(&t, h, sizeof(h), &st), x);
	assert_int_equal(st, RPC_GSS_CTX_ESTABLISHING);
	rpc_gss_ctx_put(&t, x);
	rpc_gss_ctx_established(&t, x);
	rpc_gss_ctx_put(&t, x); /* the creator's reference */
	assert_ptr_equal(rpc_gss_ctx_get(&t, h, sizeof(h), &st), x);
	assert_int_equal(st, RPC_GSS_CTX_ESTABLISHED);
	/* Wrong length, index or generation names nothing. */
	assert_null(rpc_gss_ctx_get(&t, h, 7, &st));
	uint8_t bad[RPC_GSS_HANDLE_LEN];
	memcpy(bad, h, sizeof(bad));
	bad[7] ^= 1;
	assert_null(rpc_gss_ctx_get(&t, bad, sizeof(bad), &st));
	assert_int_equal(st, RPC_GSS_CTX_FREE);
	memset(bad, 0xff, 4);
	assert_null(rpc_gss_ctx_get(&t, bad, sizeof(bad), &st));
	/* DESTROY: no lookup finds it, released at the last put only. */
	rpc_gss_ctx_kill(&t, x);
	assert_null(rpc_gss_ctx_get(&t, h, sizeof(h), &st));
	assert_int_equal(released, 0);
	rpc_gss_ctx_put(&t, x);
	assert_int_equal(released, 1);
	assert_int_equal(t.live, 0);
	/* The slot comes back with a new generation: the old handle stays dead. */
	uint8_t h2[RPC_GSS_HANDLE_LEN];
	assert_ptr_equal(rpc_gss_ctx_new(&t, 1, "peer", h2), x);
	assert_memory_not_equal(h, h2, sizeof(h));
	assert_null(rpc_gss_ctx_get(&t, h, sizeof(h), &st));
	rpc_gss_ctx_put(&t, x);
	rpc_gss_table_release(&t);
	assert_int_equal(released, 1); /* mech was not set on the second context */
}

static void test_table_eviction(void **state)
{
	(void)state;
	struct rpc_gss_table t;
	uint8_t h[6][RPC_GSS_HANDLE_LEN];
	struct rpc_gss_ctx *x[6];
	enum rpc_gss_ctx_state st;

	released = 0;
	assert_int_equal(rpc_gss_table_init(&t, 4, 2, count_release), 0);
	/* Client 1 holds its share of two; a third evicts its least recently used. */
	for (int i = 0; i < 3; i++) {
		x[i] = rpc_gss_ctx_new(&t, 1, "client1", h[i]);
		assert_non_null(x[i]);
		x[i]->mech = &t;
		rpc_gss_ctx_put(&t, x[i]);
	}
	assert_int_equal(t.evictions, 1);
	assert_int_equal(released, 1);
	assert_null(rpc_gss_ctx_get(&t, h[0], RPC_GSS_HANDLE_LEN, &st));
	/* Touch h[1] so h[2] is client 1's LRU. */
	rpc_gss_ctx_put(&t, rpc_gss_ctx_get(&t, h[1], RPC_GSS_HANDLE_LEN, &st));
	/* Client 2 fills the table; then client 3 evicts the global LRU (h[2]). */
	for (int i = 3; i < 5; i++) {
		x[i] = rpc_gss_ctx_new(&t, 2, "client2", h[i]);
		rpc_gss_ctx_put(&t, x[i]);
	}
	assert_int_equal(t.live, 4);
	x[5] = rpc_gss_ctx_new(&t, 3, "client3", h[5]);
	assert_non_null(x[5]);
	assert_int_equal(t.evictions, 2);
	assert_null(rpc_gss_ctx_get(&t, h[2], RPC_GSS_HANDLE_LEN, &st));
	struct rpc_gss_ctx *y = rpc_gss_ctx_get(&t, h[1], RPC_GSS_HANDLE_LEN, &st);
	assert_non_null(y);
	/* A referenced context evicted is freed only at its last put. */
	int before = released;
	for (int i = 0; i < 3; i++) {
		uint8_t hh[RPC_GSS_HANDLE_LEN];
		struct rpc_gss_ctx *n = rpc_gss_ctx_new(&t, 9, "client9", hh);
		if (n)
			rpc_gss_ctx_put(&t, n);
	}
	(void)before;
	rpc_gss_ctx_put(&t, y);
	rpc_gss_ctx_put(&t, x[5]);
	assert_true(t.live <= t.cap);
	rpc_gss_table_release(&t);
	assert_int_equal(t.live, 0);
}

static void test_table_all_referenced(void **state)
{
	(void)state;
	struct rpc_gss_table t;
	uint8_t h[RPC_GSS_HANDLE_LEN];

	assert_int_equal(rpc_gss_table_init(&t, 2, 2, NULL), 0);
	struct rpc_gss_ctx *a = rpc_gss_ctx_new(&t, 1, "a", h);
	struct rpc_gss_ctx *b = rpc_gss_ctx_new(&t, 2, "b", h);
	assert_non_null(a);
	assert_non_null(b);
	/* Both held: the LRU (a) is evicted but its slot stays busy, so nothing is free. */
	assert_null(rpc_gss_ctx_new(&t, 3, "c", h));
	rpc_gss_ctx_put(&t, a); /* a was evicted: its slot frees now */
	struct rpc_gss_ctx *c = rpc_gss_ctx_new(&t, 3, "c", h);
	assert_ptr_equal(c, a);
	rpc_gss_ctx_put(&t, b);
	rpc_gss_ctx_put(&t, c);
	rpc_gss_table_release(&t);
	assert_int_equal(rpc_gss_table_init(&t, 0, 1, NULL), -1);
}

static void test_principal(void **state)
{
	(void)state;
	char local[16];
	const char *r = "EXAMPLE.ORG";

#define P(s) s, strlen(s)
	assert_int_equal(rpc_gss_principal(P("alice@EXAMPLE.ORG"), r, local, sizeof(local)), RPC_GSS_PRINC_USER);
	assert_string_equal(local, "alice");
	assert_int_equal(rpc_gss_principal(P("nfs/client.example.org@EXAMPLE.ORG"), r, local, sizeof(local)),
			 RPC_GSS_PRINC_HOST);
	assert_int_equal(rpc_gss_principal(P("alice@OTHER.ORG"), r, local, sizeof(local)), RPC_GSS_PRINC_FOREIGN);
	assert_int_equal(rpc_gss_principal(P("alice@EXAMPLE.ORGX"), r, local, sizeof(local)), RPC_GSS_PRINC_FOREIGN);
	assert_int_equal(rpc_gss_principal(P("nfs/h@OTHER.ORG"), r, local, sizeof(local)), RPC_GSS_PRINC_FOREIGN);
	assert_int_equal(rpc_gss_principal(P("alice"), r, local, sizeof(local)), RPC_GSS_PRINC_FOREIGN);
	assert_int_equal(rpc_gss_principal(P("@EXAMPLE.ORG"), r, local, sizeof(local)), RPC_GSS_PRINC_FOREIGN);
	assert_int_equal(rpc_gss_principal(P("averyveryverylongname@EXAMPLE.ORG"), r, local, sizeof(local)),
			 RPC_GSS_PRINC_FOREIGN);
	assert_int_equal(rpc_gss_principal("al\0ce@EXAMPLE.ORG", 17, r, local, sizeof(local)),
			 RPC_GSS_PRINC_FOREIGN);
	assert_int_equal(rpc_gss_principal(P("alice@EXAMPLE.ORG"), NULL, local, sizeof(local)),
			 RPC_GSS_PRINC_FOREIGN);
#undef P
}

/* Credential + verifier as they follow the call header (positions from a 24-byte header). */
/* Established contexts with a known name, grouped by principal and sorted; others left out. */
static void test_table_principals(void **state)
{
	(void)state;
	static const char *const names[] = { "zed@R", "amy@R", "zed@R", "", "amy@R" };
	struct rpc_gss_table t;
	struct rpc_gss_princ_count *v;
	uint8_t h[RPC_GSS_HANDLE_LEN];

	assert_int_equal(rpc_gss_table_init(&t, 8, 8, NULL), 0);
	assert_int_equal(rpc_gss_table_principals(&t, &v), 0);
	assert_null(v);
	for (unsigned i = 0; i < 6; i++) {
		struct rpc_gss_ctx *x = rpc_gss_ctx_new(&t, 1, "peer", h);
		assert_non_null(x);
		if (i < 5) { /* the sixth stays ESTABLISHING: not listed */
			snprintf(x->princ, sizeof(x->princ), "%s", names[i]);
			x->cred_ok = true;
			rpc_gss_ctx_established(&t, x);
		}
		rpc_gss_ctx_put(&t, x);
	}
	size_t n = rpc_gss_table_principals(&t, &v);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].princ, ""); /* a name too long to keep */
	assert_int_equal(v[0].contexts, 1);
	assert_string_equal(v[1].princ, "amy@R");
	assert_int_equal(v[1].contexts, 2);
	assert_string_equal(v[2].princ, "zed@R");
	assert_int_equal(v[2].contexts, 2);
	free(v);
	rpc_gss_table_release(&t);
}

/* RFC 2623 §2.7: the RPCSEC_GSS services count as krb5, krb5i, krb5p; unknown flavors nowhere. */
static void test_flavor_stat(void **state)
{
	(void)state;
	assert_int_equal(rpc_flavor_stat_of(RPC_AUTH_NONE, 0), RPC_FLAVOR_STAT_NONE);
	assert_int_equal(rpc_flavor_stat_of(RPC_AUTH_SYS, 0), RPC_FLAVOR_STAT_SYS);
	assert_int_equal(rpc_flavor_stat_of(RPC_AUTH_GSS, RPC_GSS_SVC_NONE), RPC_FLAVOR_STAT_KRB5);
	assert_int_equal(rpc_flavor_stat_of(RPC_AUTH_GSS, RPC_GSS_SVC_INTEGRITY), RPC_FLAVOR_STAT_KRB5I);
	assert_int_equal(rpc_flavor_stat_of(RPC_AUTH_GSS, RPC_GSS_SVC_PRIVACY), RPC_FLAVOR_STAT_KRB5P);
	assert_int_equal(rpc_flavor_stat_of(RPC_AUTH_GSS, 4), RPC_FLAVOR_STAT_COUNT);
	assert_int_equal(rpc_flavor_stat_of(3, 0), RPC_FLAVOR_STAT_COUNT);
	assert_string_equal(rpc_flavor_stat_name(RPC_FLAVOR_STAT_KRB5I), "krb5i");
	assert_string_equal(rpc_flavor_stat_name(RPC_FLAVOR_STAT_COUNT), "?");
	/* Callbacks we send, by their credential (RFC 7530 §3.3.3). */
	uint64_t cb[RPC_FLAVOR_STAT_COUNT];
	rpc_stats_count_callback(RPC_AUTH_GSS, RPC_GSS_SVC_INTEGRITY);
	rpc_stats_count_callback(RPC_AUTH_SYS, RPC_GSS_SVC_PRIVACY); /* not RPCSEC_GSS: the service means nothing */
	rpc_stats_count_callback(RPC_AUTH_SYS, 0);
	rpc_stats_count_callback(3, 0); /* no such flavor: not counted */
	rpc_stats_callbacks_get(cb);
	assert_int_equal(cb[RPC_FLAVOR_STAT_KRB5I], 1);
	assert_int_equal(cb[RPC_FLAVOR_STAT_SYS], 2);
	assert_int_equal(cb[RPC_FLAVOR_STAT_NONE] + cb[RPC_FLAVOR_STAT_KRB5] + cb[RPC_FLAVOR_STAT_KRB5P], 0);
}

/* The initiator's call header (the NFSv4.0 callbacks, rpc_gss_clnt.c) as the acceptor decodes it. */
static void test_initiator_cred(void **state)
{
	(void)state;
	struct rpc_gss_cred gc = { .vers = 1, .proc = RPC_GSS_DATA, .seq = 77, .svc = RPC_GSS_SVC_PRIVACY,
				   .handle_len = 5, .handle = { 1, 2, 3, 4, 5 } };
	struct rpc_clnt_call cc;
	uint8_t msg[256];
	struct rpc_call *c = calloc(1, sizeof(*c));

	rpc_clnt_call_init(&cc, msg, sizeof(msg), 0x40000000, 1, 1, NULL);
	size_t hdr = rpc_gss_call_cred(&cc.args, &gc);
	assert_int_equal(hdr, 24 + 8 + 5 * 4 + 8); /* header words, flavor + length, the body (handle padded) */
	assert_int_equal(xdr_enc_len(&cc.args), hdr); /* the verifier goes next */
	uint8_t mic[16];
	memset(mic, 0x6d, sizeof(mic));
	xdr_enc_u32(&cc.args, RPC_AUTH_GSS);
	xdr_enc_opaque(&cc.args, mic, sizeof(mic));
	xdr_enc_u32(&cc.args, 0xfeed);
	struct xdr_dec d;
	xdr_dec_init(&d, msg, xdr_enc_len(&cc.args));
	d.p += 24;
	assert_int_equal(rpc_gss_decode_auth(&d, c), RPC_AUTH_OK);
	assert_int_equal(c->gss.hdr_len, hdr);
	assert_int_equal(c->gss.proc, RPC_GSS_DATA);
	assert_int_equal(c->gss.seq, 77);
	assert_int_equal(c->gss.svc, RPC_GSS_SVC_PRIVACY);
	assert_int_equal(c->gss.handle_len, 5);
	assert_memory_equal(c->gss.handle, gc.handle, 5);
	assert_int_equal(c->gss.verf_len, 16);
	uint32_t w;
	assert_true(xdr_dec_u32(&d, &w));
	assert_int_equal(w, 0xfeed);
	/* A retransmission's new seq_num (§5.3.3.1) lands in the credential. */
	rpc_gss_call_set_seq(&cc.args, 78);
	xdr_dec_init(&d, msg, xdr_enc_len(&cc.args));
	d.p += 24;
	assert_int_equal(rpc_gss_decode_auth(&d, c), RPC_AUTH_OK);
	assert_int_equal(c->gss.seq, 78);
	assert_int_equal(c->gss.hdr_len, hdr);
	/* INIT (RFC 2203 §5.2.2): no handle. */
	gc.proc = RPC_GSS_INIT, gc.seq = 0, gc.handle_len = 0;
	rpc_clnt_call_init(&cc, msg, sizeof(msg), 0x40000000, 1, 0, NULL);
	assert_int_equal(rpc_gss_call_cred(&cc.args, &gc), 24 + 8 + 5 * 4);
	/* Not a call header, or no room: 0. */
	struct xdr_enc e;
	xdr_enc_init(&e, msg, sizeof(msg));
	assert_int_equal(rpc_gss_call_cred(&e, &gc), 0);
	rpc_clnt_call_init(&cc, msg, 40, 0x40000000, 1, 0, NULL);
	assert_int_equal(rpc_gss_call_cred(&cc.args, &gc), 0);
	free(c);
}

/* RFC 2203 §5.3.3.1: one seq_num per call, never MAXSEQ. */
static void test_initiator_seq(void **state)
{
	(void)state;
	uint32_t s = 0;

	assert_true(rpc_gss_seq_next(&s));
	assert_int_equal(s, 1);
	s = RPC_GSS_MAXSEQ - 2;
	assert_true(rpc_gss_seq_next(&s));
	assert_int_equal(s, RPC_GSS_MAXSEQ - 1);
	assert_false(rpc_gss_seq_next(&s));
	assert_int_equal(s, RPC_GSS_MAXSEQ - 1);
}

static void test_decode_auth(void **state)
{
	(void)state;
	struct rpc_gss_cred gc = { .vers = 1, .proc = RPC_GSS_DATA, .seq = 9, .svc = RPC_GSS_SVC_INTEGRITY,
				   .handle_len = 8, .handle = { 0, 0, 0, 3, 0, 0, 0, 4 } };
	uint8_t body[64], msg[256];
	struct xdr_enc e;
	size_t blen = enc(body, sizeof(body), &gc);
	struct rpc_call *c = calloc(1, sizeof(*c));

	xdr_enc_init(&e, msg, sizeof(msg));
	for (int i = 0; i < 6; i++)
		xdr_enc_u32(&e, 0); /* the call header's words */
	xdr_enc_u32(&e, RPC_AUTH_GSS);
	xdr_enc_opaque(&e, body, (uint32_t)blen);
	size_t hdr = xdr_enc_len(&e);
	xdr_enc_u32(&e, RPC_AUTH_GSS);
	xdr_enc_opaque(&e, "0123456789ab", 12);
	xdr_enc_u32(&e, 0xabcd); /* the first argument word */
	struct xdr_dec d;
	xdr_dec_init(&d, msg, xdr_enc_len(&e));
	d.p += 24;
	assert_int_equal(rpc_gss_decode_auth(&d, c), RPC_AUTH_OK);
	assert_int_equal(c->cred.flavor, RPC_AUTH_GSS);
	assert_int_equal(c->cred.uid, 65534);
	assert_int_equal(c->gss.hdr_len, hdr);
	assert_int_equal(c->gss.seq, 9);
	assert_int_equal(c->gss.svc, RPC_GSS_SVC_INTEGRITY);
	assert_int_equal(c->gss.handle_len, 8);
	assert_memory_equal(c->gss.handle, gc.handle, 8);
	assert_int_equal(c->gss.verf_len, 12);
	uint32_t w;
	assert_true(xdr_dec_u32(&d, &w));
	assert_int_equal(w, 0xabcd);
	/* Truncated anywhere: a refusal, never a read past the end. */
	for (size_t cut = 24; cut < xdr_enc_len(&e) - 4; cut++) {
		xdr_dec_init(&d, msg, cut);
		d.p += 24;
		assert_int_not_equal(rpc_gss_decode_auth(&d, c), RPC_AUTH_OK);
		assert_int_equal(c->cred.uid, 65534);
	}
	/* Version 2: a bad credential. */
	msg[24 + 8 + 3] = 2; /* after the flavor and the body length */
	xdr_dec_init(&d, msg, xdr_enc_len(&e));
	d.p += 24;
	assert_int_equal(rpc_gss_decode_auth(&d, c), RPC_AUTH_BADCRED);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cred_round_trip),
		cmocka_unit_test(test_cred_handle_limit),
		cmocka_unit_test(test_cred_other_version),
		cmocka_unit_test(test_init_res),
		cmocka_unit_test(test_init_res_refused),
		cmocka_unit_test(test_state_table),
		cmocka_unit_test(test_seq_window),
		cmocka_unit_test(test_table_lifecycle),
		cmocka_unit_test(test_table_eviction),
		cmocka_unit_test(test_table_all_referenced),
		cmocka_unit_test(test_principal),
		cmocka_unit_test(test_decode_auth),
		cmocka_unit_test(test_initiator_cred),
		cmocka_unit_test(test_initiator_seq),
		cmocka_unit_test(test_table_principals),
		cmocka_unit_test(test_flavor_stat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
