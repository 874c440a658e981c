/*
 * fuzz_rpc_call.c - libFuzzer target: the RPC call header (RFC 5531 §9)
 * with its credential and verifier (AUTH_NONE, AUTH_SYS: §8.2, appendix A;
 * the AUTH_TLS probe: RFC 9289 §4.1),
 * through rpc_call_decode_header() (rpc/rpc_call.c, rpc/rpc_auth.c) on an
 * arbitrary message: no dispatch, no reply. Built as a libFuzzer target with
 * -Dfuzz=true (clang), and in every build as a replay test over
 * fuzz/corpus/rpc_call (fuzz_replay.c).
 *
 * Invariants checked with abort(): what an accepted header says (xid,
 * program, version, procedure, uid, gid, groups) is what the words at their
 * RFC 5531 offsets say, read here independently; the arguments start right
 * after the verifier, inside the message; AUTH_NONE and AUTH_TLS callers are nobody;
 * refusals carry a reason or an auth_stat the RFC allows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static struct rpc_call call;

/* The big-endian word at byte offset off; the caller knows it is inside. */
static uint32_t word(const uint8_t *m, size_t off)
{
	return (uint32_t)m[off] << 24 | (uint32_t)m[off + 1] << 16 | (uint32_t)m[off + 2] << 8 | m[off + 3];
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* An accepted AUTH_SYS body at m + off, as the RFC lays it out. */
static void check_sys(const uint8_t *m, size_t off, uint32_t len)
{
	const struct rpc_cred *cr = &call.cred;
	uint32_t name_len = word(m, off + 4);

	CHECK(name_len <= 255);
	size_t p = off + 8 + align4(name_len);
	CHECK(cr->uid == word(m, p) && cr->gid == word(m, p + 4));
	CHECK(cr->ngroups == word(m, p + 8) && cr->ngroups <= RPC_AUTH_SYS_MAX_GIDS);
	/* The body holds exactly the structure. */
	CHECK(p + 12 + 4 * (size_t)cr->ngroups == off + len);
	for (uint32_t i = 0; i < cr->ngroups; i++)
		CHECK(cr->groups[i] == word(m, p + 12 + 4 * i));
}

static void check_ok(const uint8_t *m, size_t n)
{
	CHECK(n >= 40);
	CHECK(call.xid == word(m, 0) && word(m, 4) == 0 && word(m, 8) == 2);
	CHECK(call.prog == word(m, 12) && call.vers == word(m, 16) && call.proc == word(m, 20));
	uint32_t flavor = word(m, 24), cred_len = word(m, 28);
	CHECK(cred_len <= RPC_AUTH_MAX_BYTES);
	size_t verf = 32 + align4(cred_len);
	CHECK(verf + 8 <= n);
	CHECK(word(m, verf) == RPC_AUTH_NONE); /* RFC 5531 §10.1: our flavors' verifier */
	uint32_t verf_len = word(m, verf + 4);
	CHECK(verf_len <= RPC_AUTH_MAX_BYTES);
	size_t args = verf + 8 + align4(verf_len);
	CHECK(args <= n);
	CHECK(call.args.base == m && call.args.end == m + n);
	CHECK(xdr_dec_pos(&call.args) == args);
	CHECK(call.cred.flavor == flavor);
	if (flavor == RPC_AUTH_SYS) {
		check_sys(m, 32, cred_len);
	} else {
		/* AUTH_NONE, or the AUTH_TLS probe (RFC 9289 §4.1: empty body): nobody. */
		CHECK(flavor == RPC_AUTH_NONE || (flavor == RPC_AUTH_TLS && cred_len == 0));
		CHECK(call.cred.uid == 65534 && call.cred.gid == 65534 && call.cred.ngroups == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why = NULL;
	int auth_stat = -1;

	/* Whatever a previous call left behind must not leak into this one. */
	memset(&call.cred, 0x5a, sizeof(call.cred));
	call.xid = call.prog = call.vers = call.proc = 0xa5a5a5a5u;
	call.msg = data;
	call.msg_len = size;
	switch (rpc_call_decode_header(&call, &why, &auth_stat)) {
	case RPC_HDR_OK:
		CHECK(auth_stat == RPC_AUTH_OK);
		check_ok(data, size);
		break;
	case RPC_HDR_DROP:
		CHECK(why != NULL);
		/* Only a short message or a non-call is dropped. */
		CHECK(size < 24 || word(data, 4) != 0);
		break;
	case RPC_HDR_REPLY:
		CHECK(why != NULL && size >= 8 && word(data, 4) == 1);
		break;
	case RPC_HDR_RPC_MISMATCH:
		CHECK(size >= 12 && word(data, 4) == 0 && word(data, 8) != 2);
		break;
	case RPC_HDR_AUTH_ERROR:
		CHECK(auth_stat == RPC_AUTH_BADCRED || auth_stat == RPC_AUTH_REJECTEDCRED ||
		      auth_stat == RPC_AUTH_BADVERF);
		CHECK(size >= 24 && word(data, 4) == 0 && word(data, 8) == 2);
		if (auth_stat == RPC_AUTH_BADCRED || auth_stat == RPC_AUTH_REJECTEDCRED)
			CHECK(call.cred.flavor == RPC_AUTH_NONE && call.cred.uid == 65534 &&
			      call.cred.ngroups == 0);
		break;
	default:
		abort();
	}
	return 0;
}
