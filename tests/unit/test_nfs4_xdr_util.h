/*
 * test_nfs4_xdr_util.h - helpers for the NFSv4 XDR unit tests
 * (test_nfs4_xdr_state.c, test_nfs4_xdr_v42.c): build an operation's
 * arguments word by word into one static buffer, as a client sends them.
 * Each test file includes it once and owns its copy of buf and e.
 */
#ifndef RNFSD_TEST_NFS4_XDR_UTIL_H
#define RNFSD_TEST_NFS4_XDR_UTIL_H

#include <stdint.h>
#include <string.h>

#include "rpc/xdr.h"

static uint8_t buf[4096];
static struct xdr_enc e;

/* Start a new message in buf. */
static void start(void)
{
	xdr_enc_init(&e, buf, sizeof(buf));
}

/* Not inlined: with constant lengths GCC's -Warray-bounds misreads xdr_enc_reserve()'s padding. */
static __attribute__((noinline)) void put_opaque(const void *p, uint32_t n)
{
	xdr_enc_opaque(&e, p, n);
}

/* stateid4 (RFC 8881 §3.3.12): seqid, then other[12] all fill. */
static void sid(uint32_t seqid, uint8_t fill)
{
	uint8_t o[12];

	memset(o, fill, sizeof(o));
	xdr_enc_u32(&e, seqid);
	xdr_enc_fixed(&e, o, 12);
}

#endif
