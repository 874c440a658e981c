/*
 * test_rdma_util.h - helpers for the RPC-over-RDMA unit tests: build
 * transport headers word by word.
 */
#ifndef RNFSD_TEST_RDMA_UTIL_H
#define RNFSD_TEST_RDMA_UTIL_H

#include <stdint.h>
#include <string.h>

#include "rpc/xdr.h"

struct hb {
	uint8_t buf[8192];
	struct xdr_enc e;
};

static inline void hb_init(struct hb *h)
{
	memset(h->buf, 0, sizeof(h->buf));
	xdr_enc_init(&h->e, h->buf, sizeof(h->buf));
}

static inline size_t hb_len(const struct hb *h)
{
	return xdr_enc_len(&h->e);
}

static inline void hb_u32(struct hb *h, uint32_t v)
{
	xdr_enc_u32(&h->e, v);
}

static inline void hb_fixed(struct hb *h, uint32_t xid, uint32_t vers, uint32_t credits, uint32_t proc)
{
	hb_u32(h, xid);
	hb_u32(h, vers);
	hb_u32(h, credits);
	hb_u32(h, proc);
}

static inline void hb_seg(struct hb *h, uint32_t handle, uint32_t len, uint64_t off)
{
	hb_u32(h, handle);
	hb_u32(h, len);
	xdr_enc_u64(&h->e, off);
}

/* One Read list entry (discriminator 1 included). */
static inline void hb_read(struct hb *h, uint32_t pos, uint32_t handle, uint32_t len, uint64_t off)
{
	hb_u32(h, 1);
	hb_u32(h, pos);
	hb_seg(h, handle, len, off);
}

/* A minimal RPC call header: xid, CALL, rpcvers 2, prog, vers, proc, AUTH_NONE x2. */
static inline void hb_rpc_call(struct hb *h, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	hb_u32(h, xid);
	hb_u32(h, 0);
	hb_u32(h, 2);
	hb_u32(h, prog);
	hb_u32(h, vers);
	hb_u32(h, proc);
	hb_u32(h, 0);
	hb_u32(h, 0);
	hb_u32(h, 0);
	hb_u32(h, 0);
}

static inline uint32_t rd32(const uint8_t *p, size_t word)
{
	uint32_t be;
	memcpy(&be, p + 4 * word, 4);
	return be32toh(be);
}

#endif
