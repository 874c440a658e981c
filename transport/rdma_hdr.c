/*
 * rdma_hdr.c - decode and encode RPC-over-RDMA transport headers, Version One
 * (RFC 8166 §4) and Version Two (draft-cel-nfsv4-rpcrdma-version-two-01 §4.2).
 *
 * Pure functions; see rdma_hdr.h for the contract.
 * Every list discriminator is an XDR bool (0 or 1, nothing else); every
 * count is compared with its configured limit before the loop that uses it;
 * every segment length is summed in 64 bits and compared with the limit.
 */
#include "transport/rdma_hdr.h"

#include <string.h>

#include "rpc/rpc.h"
#include "rpc/xdr.h"

void rdma_limits_default(struct rdma_limits *lim, uint32_t max_payload, bool v2_ok)
{
	lim->max_segs_per_chunk = RDMA_DEFAULT_SEGS_PER_CHUNK;
	lim->max_segs = RDMA_DEFAULT_SEGS_PER_HDR;
	lim->max_read_chunks = RPC_MAX_DDP_IN;
	lim->max_write_chunks = RDMA_HDR_MAX_WRITE_CHUNKS;
	if (max_payload > UINT32_MAX - RDMA_CHUNK_SLACK)
		max_payload = UINT32_MAX - RDMA_CHUNK_SLACK;
	lim->max_chunk_bytes = max_payload + RDMA_CHUNK_SLACK;
	lim->vers_low = RDMA_VERS_1;
	/* draft §2.3: a v2 receiver MUST take 4096-byte messages. */
	lim->vers_high = v2_ok ? RDMA_VERS_2 : RDMA_VERS_1;
}

const char *rdma_status_name(enum rdma_status st)
{
	switch (st) {
	case RDMA_ST_OK:
		return "ok";
	case RDMA_ST_DROP:
		return "drop";
	case RDMA_ST_ERR_VERS:
		return "ERR_VERS";
	case RDMA_ST_ERR_CHUNK:
		return "ERR_CHUNK";
	case RDMA_ST_ERR_INVALID_OPTION:
		return "ERR_INVALID_OPTION";
	case RDMA_ST_GARBAGE_ARGS:
		return "GARBAGE_ARGS";
	}
	return "?";
}

static enum rdma_status say(struct rdma_decode_info *why, enum rdma_status st, const char *reason)
{
	if (why)
		why->reason = reason;
	return st;
}

/* Caps the configured limits at the struct's capacity, so a bad configuration
 * can never index past rdma_hdr's arrays. */
static uint32_t cap_u32(uint32_t v, uint32_t cap)
{
	return v < cap ? v : cap;
}

static bool dec_seg(struct xdr_dec *d, struct rdma_seg *s)
{
	return xdr_dec_u32(d, &s->handle) && xdr_dec_u32(d, &s->length) && xdr_dec_u64(d, &s->offset);
}

/* RFC 8166 §4.3.1: the Read list, a linked list of (position, segment). */
static enum rdma_status dec_read_list(struct xdr_dec *d, const struct rdma_limits *lim,
				      struct rdma_hdr *h, struct rdma_decode_info *why)
{
	uint32_t max_segs = cap_u32(lim->max_segs, RDMA_HDR_MAX_SEGS);
	bool more;

	for (;;) {
		if (!xdr_dec_bool(d, &more))
			return say(why, RDMA_ST_ERR_CHUNK, "read list: bad discriminator or overrun");
		if (!more)
			return RDMA_ST_OK;
		if (h->nreads >= max_segs)
			return say(why, RDMA_ST_ERR_CHUNK, "read list: too many segments");
		struct rdma_read_seg *r = &h->reads[h->nreads];
		if (!xdr_dec_u32(d, &r->position) || !dec_seg(d, &r->seg))
			return say(why, RDMA_ST_ERR_CHUNK, "read list: segment overruns the message");
		/* RFC 8166 §3.4.5: a position is an XDR offset, a multiple of 4. */
		if (r->position & 3u)
			return say(why, RDMA_ST_ERR_CHUNK, "read list: unaligned position");
		h->read_bytes += r->seg.length;
		if (h->read_bytes > lim->max_chunk_bytes)
			return say(why, RDMA_ST_ERR_CHUNK, "read list: more bytes than max payload");
		h->nreads++;
	}
}

/* RFC 8166 §4.1.2 xdr_write_chunk: a counted array of segments. */
static enum rdma_status dec_write_chunk(struct xdr_dec *d, const struct rdma_limits *lim,
					struct rdma_hdr *h, struct rdma_wchunk *ch,
					struct rdma_decode_info *why)
{
	uint32_t max_segs = cap_u32(lim->max_segs, RDMA_HDR_MAX_SEGS);
	uint32_t count;
	uint64_t total = 0;

	if (!xdr_dec_u32(d, &count))
		return say(why, RDMA_ST_ERR_CHUNK, "write chunk: count overruns the message");
	/* Both limits checked before the count is used for anything. */
	if (count > lim->max_segs_per_chunk)
		return say(why, RDMA_ST_ERR_CHUNK, "write chunk: too many segments");
	if (count > max_segs - h->nreads - h->nwsegs)
		return say(why, RDMA_ST_ERR_CHUNK, "header: too many segments");
	ch->first = (uint16_t)h->nwsegs;
	ch->nsegs = (uint16_t)count;
	for (uint32_t i = 0; i < count; i++) {
		struct rdma_seg *s = &h->wsegs[h->nwsegs];
		if (!dec_seg(d, s))
			return say(why, RDMA_ST_ERR_CHUNK, "write chunk: segment overruns the message");
		total += s->length;
		h->nwsegs++;
	}
	if (total > lim->max_chunk_bytes)
		return say(why, RDMA_ST_ERR_CHUNK, "write chunk: longer than max payload");
	ch->length = (uint32_t)total;
	return RDMA_ST_OK;
}

/* RFC 8166 §4.3.2: the Write list, a linked list of Write chunks. */
static enum rdma_status dec_write_list(struct xdr_dec *d, const struct rdma_limits *lim,
				       struct rdma_hdr *h, struct rdma_decode_info *why)
{
	uint32_t max_writes = cap_u32(lim->max_write_chunks, RDMA_HDR_MAX_WRITE_CHUNKS);
	enum rdma_status st;
	bool more;

	for (;;) {
		if (!xdr_dec_bool(d, &more))
			return say(why, RDMA_ST_ERR_CHUNK, "write list: bad discriminator or overrun");
		if (!more)
			return RDMA_ST_OK;
		if (h->nwrites >= max_writes)
			return say(why, RDMA_ST_ERR_CHUNK, "write list: too many chunks");
		st = dec_write_chunk(d, lim, h, &h->writes[h->nwrites], why);
		if (st != RDMA_ST_OK)
			return st;
		h->nwrites++;
	}
}

/* RFC 8166 §4.3.3: the optional Reply chunk. */
static enum rdma_status dec_reply_chunk(struct xdr_dec *d, const struct rdma_limits *lim,
					struct rdma_hdr *h, struct rdma_decode_info *why)
{
	bool present;

	if (!xdr_dec_bool(d, &present))
		return say(why, RDMA_ST_ERR_CHUNK, "reply chunk: bad discriminator or overrun");
	if (!present)
		return RDMA_ST_OK;
	h->has_reply = true;
	return dec_write_chunk(d, lim, h, &h->reply, why);
}

static enum rdma_status dec_chunk_lists(struct xdr_dec *d, const struct rdma_limits *lim,
					struct rdma_hdr *h, struct rdma_decode_info *why)
{
	enum rdma_status st;

	st = dec_read_list(d, lim, h, why);
	if (st == RDMA_ST_OK)
		st = dec_write_list(d, lim, h, why);
	if (st == RDMA_ST_OK)
		st = dec_reply_chunk(d, lim, h, why);
	return st;
}

enum rdma_status rdma_hdr_check_rpc(const struct rdma_hdr *hdr, const uint8_t *msg, size_t len,
				    struct rdma_decode_info *why)
{
	struct xdr_dec d;
	uint32_t xid, mtype;

	xdr_dec_init(&d, msg, len);
	if (!xdr_dec_u32(&d, &xid) || !xdr_dec_u32(&d, &mtype))
		return say(why, RDMA_ST_ERR_CHUNK, "RPC message shorter than xid and msg_type");
	/* RFC 8166 §4.5.2: rdma_xid must match the RPC message's XID. */
	if (xid != hdr->xid)
		return say(why, RDMA_ST_ERR_CHUNK, "rdma_xid differs from the RPC XID");
	if (hdr->vers == RDMA_VERS_2 && mtype != hdr->direction)
		return say(why, RDMA_ST_ERR_CHUNK, "v2 direction differs from the RPC msg_type");
	/* A reply on this connection answers a reverse-direction call (RFC 8167
	 * §4): not a call to serve; rdma_backchannel.c takes the ones it sent. */
	if (mtype == RPC_MSG_REPLY)
		return say(why, RDMA_ST_DROP, "RPC reply matching no reverse-direction call");
	return RDMA_ST_OK;
}

/* RDMA_MSG / RDMA_NOMSG (and their v2 twins). */
static enum rdma_status dec_msg(struct xdr_dec *d, const struct rdma_limits *lim,
				struct rdma_hdr *h, struct rdma_decode_info *why)
{
	enum rdma_status st;

	if (h->vers == RDMA_VERS_2) {
		/* draft §4.2: rpcrdma2_chunk_lists starts with the direction. */
		if (!xdr_dec_u32(d, &h->direction) || h->direction > RDMA_DIR_REPLY)
			return say(why, RDMA_ST_ERR_CHUNK, "v2: bad direction");
		if (h->direction == RDMA_DIR_REPLY)
			return say(why, RDMA_ST_DROP, "v2: REPLY direction (reverse-direction calls are sent in v1)");
	}
	st = dec_chunk_lists(d, lim, h, why);
	if (st != RDMA_ST_OK)
		return st;
	h->hdr_len = (uint32_t)xdr_dec_pos(d);
	h->payload = d->p;
	h->payload_len = (uint32_t)xdr_dec_remaining(d);

	if (h->proc == RDMA_NOMSG) {
		/* RFC 8166 §4.5.2: RDMA_NOMSG with no chunk at all is an XDR error.
		 * (The position-zero Read chunk is checked by rdma_pcl_build().) */
		if (!h->nreads && !h->nwrites && !h->has_reply)
			return say(why, RDMA_ST_ERR_CHUNK, "RDMA_NOMSG without chunks");
		h->payload_len = 0; /* §4.2.4: no Payload stream follows */
		return RDMA_ST_OK;
	}
	/* RFC 8166 §4.2.4: after RDMA_MSG's chunk lists comes the RPC message. */
	return rdma_hdr_check_rpc(h, h->payload, h->payload_len, why);
}

/* draft §3.1: RDMA2_OPTIONAL. Decoded fully (a malformed one is a bad header),
 * then refused: this responder knows no optional type. */
static enum rdma_status dec_optional(struct xdr_dec *d, struct rdma_hdr *h,
				     struct rdma_decode_info *why)
{
	const uint8_t *info;
	uint32_t info_len;

	if (!xdr_dec_u32(d, &h->direction) || h->direction > RDMA_DIR_REPLY)
		return say(why, RDMA_ST_ERR_CHUNK, "v2 optional: bad direction");
	if (!xdr_dec_u32(d, &h->opttype))
		return say(why, RDMA_ST_ERR_CHUNK, "v2 optional: overrun");
	if (!xdr_dec_opaque(d, UINT32_MAX, &info, &info_len))
		return say(why, RDMA_ST_ERR_CHUNK, "v2 optional: optinfo overruns the message");
	/* A REPLY-direction message answers nothing we sent (reverse calls go in v1). */
	if (h->direction == RDMA_DIR_REPLY)
		return say(why, RDMA_ST_DROP, "v2 optional in the REPLY direction");
	return say(why, RDMA_ST_ERR_INVALID_OPTION, "v2 optional type not supported");
}

static void hdr_reset(struct rdma_hdr *h)
{
	h->xid = h->vers = h->credits = h->proc = 0;
	h->direction = RDMA_DIR_CALL;
	h->nreads = h->nwsegs = h->nwrites = 0;
	h->read_bytes = 0;
	h->has_reply = false;
	h->reply.first = h->reply.nsegs = 0;
	h->reply.length = 0;
	h->opttype = 0;
	h->hdr_len = 0;
	h->payload = NULL;
	h->payload_len = 0;
}

enum rdma_status rdma_hdr_decode(const void *buf, size_t len, const struct rdma_limits *lim,
				 struct rdma_hdr *h, struct rdma_decode_info *why)
{
	struct xdr_dec d;

	hdr_reset(h);
	xdr_dec_init(&d, buf, len);
	/* RFC 8166 §4.5 (draft §4.2.3: the same for v2): a message shorter
	 * than a minimal header (28 bytes) is silently discarded before any
	 * parsing, since its XID cannot be trusted. The fixed fields are
	 * still read for the log line. */
	bool whole = xdr_dec_u32(&d, &h->xid) && xdr_dec_u32(&d, &h->vers) &&
		     xdr_dec_u32(&d, &h->credits) && xdr_dec_u32(&d, &h->proc);
	if (!whole || len < RDMA_HDR_V1_MIN)
		return say(why, RDMA_ST_DROP, "shorter than a minimal header");
	/* RFC 8166 §4.5.1: a version we do not speak gets ERR_VERS with our range. */
	if (h->vers < lim->vers_low || h->vers > lim->vers_high)
		return say(why, RDMA_ST_ERR_VERS, "unsupported version");

	switch (h->proc) {
	case RDMA_MSG:
	case RDMA_NOMSG:
		return dec_msg(&d, lim, h, why);
	case RDMA_ERROR:
		/* RFC 8166 §4.5: errors travel responder to requester only. */
		return say(why, RDMA_ST_DROP, "RDMA_ERROR from a requester");
	case RDMA_DONE:
		/* RFC 8166 §4.6.2: RDMA_DONE is not used; receivers ignore it.
		 * In v2 the value is not a procedure at all (draft §4.2). */
		if (h->vers == RDMA_VERS_1)
			return say(why, RDMA_ST_DROP, "RDMA_DONE");
		return say(why, RDMA_ST_ERR_CHUNK, "v2: unknown procedure");
	case RDMA_MSGP:
		/* RFC 8166 §4.6.1: RDMA_MSGP is not used; answered with ERR_CHUNK,
		 * as for any procedure the responder does not implement (§4.5.2). */
		return say(why, RDMA_ST_ERR_CHUNK, "RDMA_MSGP is not supported");
	case RDMA2_OPTIONAL:
		if (h->vers == RDMA_VERS_2)
			return dec_optional(&d, h, why);
		return say(why, RDMA_ST_ERR_CHUNK, "unknown procedure");
	default:
		/* RFC 8166 §4.5.2: an invalid rdma_proc is an XDR error. */
		return say(why, RDMA_ST_ERR_CHUNK, "unknown procedure");
	}
}

static void enc_fixed(struct xdr_enc *e, const struct rdma_hdr *call, uint32_t credits, uint32_t proc)
{
	xdr_enc_u32(e, call->xid);
	xdr_enc_u32(e, call->vers); /* draft §5.3: reply in the requester's version */
	xdr_enc_u32(e, credits);
	xdr_enc_u32(e, proc);
}

/* Echo a chunk's segments with `used` bytes spread over them in order. */
static void enc_used_chunk(struct xdr_enc *e, const struct rdma_hdr *call,
			   const struct rdma_wchunk *ch, uint32_t used)
{
	xdr_enc_u32(e, ch->nsegs);
	for (uint32_t i = 0; i < ch->nsegs; i++) {
		const struct rdma_seg *s = &call->wsegs[ch->first + i];
		uint32_t n = used < s->length ? used : s->length;
		xdr_enc_u32(e, s->handle);
		xdr_enc_u32(e, n);
		xdr_enc_u64(e, s->offset);
		used -= n;
	}
}

size_t rdma_hdr_reply_len(const struct rdma_hdr *call, bool nomsg)
{
	size_t n = RDMA_HDR_FIXED + 4 /* read list */ + 4 /* write list end */ + 4 /* reply */;

	if (call->vers == RDMA_VERS_2)
		n += 4;
	for (uint32_t i = 0; i < call->nwrites; i++)
		n += 8 + 16u * call->writes[i].nsegs;
	if (nomsg && call->has_reply)
		n += 4 + 16u * call->reply.nsegs;
	return n;
}

size_t rdma_hdr_encode_reply(void *out, size_t cap, const struct rdma_hdr *call, uint32_t credits,
			     const uint32_t *write_used, bool nomsg, uint32_t reply_used)
{
	struct xdr_enc e;

	xdr_enc_init(&e, out, cap);
	enc_fixed(&e, call, credits, nomsg ? RDMA_NOMSG : RDMA_MSG);
	if (call->vers == RDMA_VERS_2)
		xdr_enc_u32(&e, RDMA_DIR_REPLY); /* draft §4.2.2 */
	/* RFC 8166 §4.3.1: replies carry no Read list. */
	xdr_enc_bool(&e, false);
	/* RFC 8166 §4.3.2: the Write list comes back with the lengths written. */
	for (uint32_t i = 0; i < call->nwrites; i++) {
		xdr_enc_bool(&e, true);
		enc_used_chunk(&e, call, &call->writes[i], write_used ? write_used[i] : 0);
	}
	xdr_enc_bool(&e, false);
	/* RFC 8166 §4.3.3: the Reply chunk is returned only when the reply went in it. */
	if (nomsg && call->has_reply) {
		xdr_enc_bool(&e, true);
		enc_used_chunk(&e, call, &call->reply, reply_used);
	} else {
		xdr_enc_bool(&e, false);
	}
	return e.overflow ? 0 : xdr_enc_len(&e);
}

size_t rdma_hdr_encode_error(void *out, size_t cap, const struct rdma_hdr *call, uint32_t credits,
			     enum rdma_status st, const struct rdma_limits *lim)
{
	struct xdr_enc e;

	xdr_enc_init(&e, out, cap);
	/* RFC 8166 §4.5: same rdma_xid and rdma_vers as the failing message. */
	enc_fixed(&e, call, credits, RDMA_ERROR);
	switch (st) {
	case RDMA_ST_ERR_VERS:
		/* RFC 8166 §4.5.1: the inclusive range we support. */
		xdr_enc_u32(&e, RDMA_ERR_VERS);
		xdr_enc_u32(&e, lim->vers_low);
		xdr_enc_u32(&e, lim->vers_high);
		break;
	case RDMA_ST_ERR_INVALID_OPTION:
		/* draft §3.1 */
		xdr_enc_u32(&e, RDMA2_ERR_INVALID_OPTION);
		break;
	case RDMA_ST_ERR_CHUNK:
		xdr_enc_u32(&e, RDMA_ERR_CHUNK);
		break;
	default:
		return 0;
	}
	return e.overflow ? 0 : xdr_enc_len(&e);
}

size_t rdma_hdr_encode_garbage_args(void *out, size_t cap, const struct rdma_hdr *call, uint32_t credits)
{
	struct xdr_enc e;

	xdr_enc_init(&e, out, cap);
	enc_fixed(&e, call, credits, RDMA_MSG);
	if (call->vers == RDMA_VERS_2)
		xdr_enc_u32(&e, RDMA_DIR_REPLY);
	xdr_enc_bool(&e, false);
	xdr_enc_bool(&e, false);
	xdr_enc_bool(&e, false);
	/* RFC 5531 §9: accepted reply, AUTH_NONE verifier, GARBAGE_ARGS. */
	xdr_enc_u32(&e, call->xid);
	xdr_enc_u32(&e, RPC_MSG_REPLY);
	xdr_enc_u32(&e, RPC_MSG_ACCEPTED);
	xdr_enc_u32(&e, RPC_AUTH_NONE);
	xdr_enc_u32(&e, 0);
	xdr_enc_u32(&e, RPC_GARBAGE_ARGS);
	return e.overflow ? 0 : xdr_enc_len(&e);
}
