/*
 * rt_rpcrdma.c - encode and strictly decode RPC-over-RDMA transport headers
 * (RFC 8166 §4 for Version One, draft-cel-nfsv4-rpcrdma-version-two-01 §4.2
 * for Version Two) and RFC 8797 private data, for the test requester.
 */
#include <stdio.h>

#include "tests/rdma/rt_rpcrdma.h"

static void enc_seg(struct rt_enc *e, const struct rt_seg *s)
{
	rt_enc_u32(e, s->handle);
	rt_enc_u32(e, s->length);
	rt_enc_u64(e, s->offset);
}

static void enc_chunk(struct rt_enc *e, const struct rt_chunk *c)
{
	uint32_t i;

	rt_enc_u32(e, c->nsegs);
	for (i = 0; i < c->nsegs && i < RT_MAX_SEGS; i++)
		enc_seg(e, &c->segs[i]);
}

/* RFC 8166 §4.2.1: Read list, Write list, Reply chunk. */
static void enc_lists(const struct rt_hdr *h, struct rt_enc *e)
{
	uint32_t i;

	for (i = 0; i < h->nreads; i++) {
		rt_enc_u32(e, 1);
		rt_enc_u32(e, h->reads[i].position);
		enc_seg(e, &h->reads[i].seg);
	}
	rt_enc_u32(e, 0);
	for (i = 0; i < h->nwrites; i++) {
		rt_enc_u32(e, 1);
		enc_chunk(e, &h->writes[i]);
	}
	rt_enc_u32(e, 0);
	rt_enc_u32(e, h->has_reply ? 1 : 0);
	if (h->has_reply)
		enc_chunk(e, &h->reply);
}

void rt_hdr_encode(const struct rt_hdr *h, struct rt_enc *e)
{
	rt_enc_u32(e, h->xid);
	rt_enc_u32(e, h->vers);
	rt_enc_u32(e, h->credits);
	rt_enc_u32(e, h->proc);
	switch (h->proc) {
	case RT_RDMA_MSG:
	case RT_RDMA_NOMSG:
		if (h->vers == 2)
			rt_enc_u32(e, h->direction); /* v2 draft §4.2 rpcrdma2_chunk_lists */
		enc_lists(h, e);
		break;
	case RT_RDMA_MSGP:
		/* RFC 5666 §4.3 rpc_rdma_header_padded: align, thresh, lists */
		rt_enc_u32(e, 0);
		rt_enc_u32(e, 0);
		enc_lists(h, e);
		break;
	case RT_RDMA_ERROR:
		rt_enc_u32(e, h->err);
		if (h->err == RT_ERR_VERS) {
			rt_enc_u32(e, h->vers_low);
			rt_enc_u32(e, h->vers_high);
		}
		break;
	case RT_RDMA2_OPTIONAL:
		if (h->vers == 2) {
			rt_enc_u32(e, h->optdir);
			rt_enc_u32(e, h->opttype);
			rt_enc_opaque(e, h->optinfo, h->optinfo_len);
		}
		break;
	default: /* RDMA_DONE and unknown procedures: no body */
		break;
	}
}

static void dec_seg(struct rt_dec *d, struct rt_seg *s)
{
	s->handle = rt_dec_u32(d);
	s->length = rt_dec_u32(d);
	s->offset = rt_dec_u64(d);
}

static int dec_chunk(struct rt_dec *d, struct rt_chunk *c, const char **why)
{
	uint32_t i, n = rt_dec_u32(d);

	/* Check the count before looping over it. */
	if (n > RT_MAX_SEGS || n * 16u > rt_dec_left(d)) {
		*why = "segment count exceeds the message or our limit";
		return -1;
	}
	c->nsegs = n;
	for (i = 0; i < n; i++)
		dec_seg(d, &c->segs[i]);
	return 0;
}

static int dec_lists(struct rt_dec *d, struct rt_hdr *h, const char **why)
{
	h->nreads = 0;
	while (rt_dec_bool(d)) {
		if (h->nreads == RT_MAX_CHUNKS * RT_MAX_SEGS) {
			*why = "too many Read segments";
			return -1;
		}
		h->reads[h->nreads].position = rt_dec_u32(d);
		dec_seg(d, &h->reads[h->nreads].seg);
		h->nreads++;
	}
	h->nwrites = 0;
	while (rt_dec_bool(d)) {
		if (h->nwrites == RT_MAX_CHUNKS) {
			*why = "too many Write chunks";
			return -1;
		}
		if (dec_chunk(d, &h->writes[h->nwrites++], why))
			return -1;
	}
	h->has_reply = rt_dec_bool(d);
	if (h->has_reply && dec_chunk(d, &h->reply, why))
		return -1;
	if (d->bad) {
		*why = "chunk lists truncated or bad XDR bool";
		return -1;
	}
	return 0;
}

int rt_hdr_decode(const void *buf, size_t len, struct rt_hdr *h, const char **why)
{
	struct rt_dec d;

	memset(h, 0, sizeof(*h));
	rt_dec_init(&d, buf, len);
	h->xid = rt_dec_u32(&d);
	h->vers = rt_dec_u32(&d);
	h->credits = rt_dec_u32(&d);
	h->proc = rt_dec_u32(&d);
	if (d.bad) {
		*why = "shorter than the 16-byte fixed header";
		return -1;
	}
	if (h->vers != 1 && h->vers != 2 && h->proc != RT_RDMA_ERROR) {
		*why = "unknown rdma_vers";
		return -1;
	}
	switch (h->proc) {
	case RT_RDMA_MSG:
	case RT_RDMA_NOMSG:
		if (h->vers == 2)
			h->direction = rt_dec_u32(&d);
		if (dec_lists(&d, h, why))
			return -1;
		break;
	case RT_RDMA_ERROR:
		h->err = rt_dec_u32(&d);
		if (h->err == RT_ERR_VERS) {
			h->vers_low = rt_dec_u32(&d);
			h->vers_high = rt_dec_u32(&d);
		} else if (h->err != RT_ERR_CHUNK &&
			   !(h->vers == 2 && h->err == RT_RDMA2_ERR_INVALID_OPTION)) {
			*why = "unknown rdma_err";
			return -1;
		}
		break;
	case RT_RDMA2_OPTIONAL:
		if (h->vers != 2) {
			*why = "RDMA2_OPTIONAL in a version 1 header";
			return -1;
		}
		h->optdir = rt_dec_u32(&d);
		h->opttype = rt_dec_u32(&d);
		h->optinfo = rt_dec_opaque(&d, (uint32_t)len, &h->optinfo_len);
		break;
	default:
		/* RFC 8166 §4.2.1/§4.6: a server never sends MSGP, DONE or others. */
		*why = "rdma_proc a server must not send";
		return -1;
	}
	if (d.bad) {
		*why = "header truncated";
		return -1;
	}
	h->hdr_len = d.pos;
	return 0;
}

const char *rt_proc_name(uint32_t proc)
{
	static char other[32];

	switch (proc) {
	case RT_RDMA_MSG: return "RDMA_MSG";
	case RT_RDMA_NOMSG: return "RDMA_NOMSG";
	case RT_RDMA_MSGP: return "RDMA_MSGP";
	case RT_RDMA_DONE: return "RDMA_DONE";
	case RT_RDMA_ERROR: return "RDMA_ERROR";
	case RT_RDMA2_OPTIONAL: return "RDMA2_OPTIONAL";
	}
	snprintf(other, sizeof(other), "proc %u", proc);
	return other;
}

const char *rt_err_name(uint32_t vers, uint32_t err)
{
	static char other[48];

	if (vers == 2 && err == RT_RDMA2_ERR_BAD_HEADER)
		return "RDMA2_ERROR/RDMA2_ERR_BAD_HEADER";
	if (vers == 2 && err == RT_RDMA2_ERR_INVALID_OPTION)
		return "RDMA2_ERROR/RDMA2_ERR_INVALID_OPTION";
	if (err == RT_ERR_CHUNK)
		return "RDMA_ERROR/ERR_CHUNK";
	if (err == RT_ERR_VERS)
		return "RDMA_ERROR/ERR_VERS";
	snprintf(other, sizeof(other), "RDMA_ERROR/err %u", err);
	return other;
}

uint64_t rt_chunk_bytes(const struct rt_chunk *c)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < c->nsegs && i < RT_MAX_SEGS; i++)
		n += c->segs[i].length;
	return n;
}

void rt_priv_encode(const struct rt_priv *p, uint8_t out[8])
{
	rt_put32(out, p->ident);
	out[4] = p->version;
	out[5] = p->flags;
	out[6] = p->send_size;
	out[7] = p->recv_size;
}

bool rt_priv_decode(const void *buf, size_t len, struct rt_priv *p)
{
	const uint8_t *b = buf;

	if (!buf || len < 8)
		return false;
	p->ident = rt_get32(b);
	p->version = b[4];
	p->flags = b[5];
	p->send_size = b[6];
	p->recv_size = b[7];
	return true;
}
