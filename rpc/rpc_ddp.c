/*
 * rpc_ddp.c - bulk data helpers for procedure handlers:
 * arguments that may arrive out of band (RPC-over-RDMA Read chunks), results
 * that may leave out of band (Write chunks, or a TCP writev segment), and the
 * per-call payload area READ data is produced in, or the transport's pipe it
 * is spliced into (TCP). Bulk data is copied only when it must travel inline
 * (no segment left, or RPCSEC_GSS-wrapped results, which are one contiguous
 * body); all memory belongs to the transport's per-call context.
 */
#include "rpc/rpc_internal.h"
#include "rpc/rpc_gss.h"
#include "ulb/ulb.h"

#define RPC_PAYLOAD_ALIGN 64u

void *rpc_payload_buf(struct rpc_call *c, size_t len)
{
	size_t used = c->payload_used; /* invariant: used <= payload_cap */

	if (!c->payload_area || len > c->payload_cap - used)
		return NULL;
	void *p = c->payload_area + used;
	used += len;
	/* Keep later buffers cache-line aligned (direct I/O friendly). */
	if (used % RPC_PAYLOAD_ALIGN && c->payload_cap - used >= RPC_PAYLOAD_ALIGN)
		used += RPC_PAYLOAD_ALIGN - used % RPC_PAYLOAD_ALIGN;
	c->payload_used = used;
	return p;
}

/*
 * RFC 8166 §3.4 (reducing an XDR stream; Read chunk Position, §3.4.5): a Read
 * chunk's Position is the XDR position its data has in the un-reduced call
 * message; the inline stream holds neither that data nor its XDR roundup, so
 * earlier reductions are added back to the inline position before comparing.
 * The chunk carries exactly the item's bytes, or (RFC 8166 §3.4.5 lets a
 * requester include it) the item plus its XDR roundup.
 */
bool rpc_dec_ddp(struct rpc_call *c, uint32_t len, const uint8_t **data)
{
	size_t pos = xdr_dec_pos(&c->args) + c->ddp_in_reduced;

	for (unsigned i = 0; i < c->n_ddp_in && i < RPC_MAX_DDP_IN; i++) {
		const struct rpc_ddp_in *in = &c->ddp_in[i];
		if (in->position != pos)
			continue;
		if (!ulb_read_chunk_len_ok(in->len, len))
			return false;
		*data = in->data;
		c->ddp_in_reduced += (size_t)len + XDR_PAD(len);
		return true;
	}
	const uint8_t *q = xdr_dec_inline(&c->args, len);
	if (!q)
		return false;
	*data = q;
	return true;
}

int rpc_payload_pipe(struct rpc_call *c, size_t want, size_t *room)
{
	const struct xprt_ops *ops = c->conn->xprt->ops;

	*room = 0;
	/* RFC 2203 §5.3.2.2, §5.3.2.3: wrapped results must be contiguous (c->gss.wrap). */
	if (c->gss.wrap || want < RPC_PAYLOAD_PIPE_MIN || !ops->payload_pipe || c->payload_piped || c->n_ddp_out >= RPC_MAX_DDP_OUT)
		return -1;
	return ops->payload_pipe(c, room);
}

void rpc_payload_piped(struct rpc_call *c, size_t len)
{
	c->payload_piped += len;
}

/* An opaque<>'s length word, then a segment for its bytes; NULL if no segment is left. */
static struct rpc_ddp_out *rpc_ddp_out_next(struct rpc_call *c, uint32_t len)
{
	xdr_enc_u32(&c->res, len);
	if (c->res.overflow || c->n_ddp_out >= RPC_MAX_DDP_OUT || c->gss.wrap)
		return NULL; /* a GSS-wrapped reply carries its data inline */
	struct rpc_ddp_out *o = &c->ddp_out[c->n_ddp_out++];
	o->offset = xdr_enc_len(&c->res);
	o->len = len;
	o->data = NULL;
	o->piped = false;
	return o;
}

/*
 * A data item carried inline (a copy, but correct). It may sit in the tail of
 * the reply buffer that nfs_bulk_buf() took off the encoder's end: the tail is
 * given back and the bytes moved down to the encoder's position (memmove: the
 * two may overlap), their XDR pad zeroed only after the move.
 */
size_t rpc_res_cap(const struct rpc_call *c)
{
	/* RFC 2203 §5.3.2.2, §5.3.2.3: the wrapped body grows by a checksum or a token. */
	if (c->gss.wrap && c->reply_cap > RPC_GSS_REPLY_SLACK)
		return c->reply_cap - RPC_GSS_REPLY_SLACK;
	return c->reply_cap;
}

uint32_t rpc_wrapped_read_max(const struct rpc_call *c, uint32_t max)
{
	/* The other results (status, attributes, counts) and the token: 1 KiB is ample. */
	const size_t other = 1024u + RPC_GSS_REPLY_SLACK;
	size_t room = c->conn ? c->conn->reply_max : 0;

	if (!c->gss.wrap || room <= other + 4096u)
		return max;
	room = (room - other) & ~(size_t)4095u;
	return room < max ? (uint32_t)room : max;
}

static void rpc_enc_inline(struct rpc_call *c, const uint8_t *data, uint32_t len)
{
	uint8_t *buf_end = c->res.base + rpc_res_cap(c);
	size_t pad = XDR_PAD(len);

	if (data == c->res.end && data < buf_end)
		c->res.end = buf_end;
	if ((size_t)(c->res.end - c->res.p) < (size_t)len + pad) {
		c->res.overflow = true;
		return;
	}
	memmove(c->res.p, data, len);
	memset(c->res.p + len, 0, pad);
	c->res.p += len + pad;
}

void rpc_enc_ddp(struct rpc_call *c, const void *data, uint32_t len)
{
	struct rpc_ddp_out *o = rpc_ddp_out_next(c, len);

	if (o)
		o->data = data;
	else if (!c->res.overflow)
		rpc_enc_inline(c, data, len); /* no segment left, or wrapped results (RFC 2203 §5.3.2.2) */
}

void rpc_enc_ddp_piped(struct rpc_call *c, uint32_t len)
{
	struct rpc_ddp_out *o = rpc_ddp_out_next(c, len);

	if (o)
		o->piped = true;
	else
		c->res.overflow = true; /* cannot happen: rpc_payload_pipe kept a segment free */
}

size_t rpc_reply_len(const struct rpc_call *c)
{
	size_t n = xdr_enc_len(&c->res);

	for (unsigned i = 0; i < c->n_ddp_out; i++)
		n += (size_t)c->ddp_out[i].len + XDR_PAD(c->ddp_out[i].len);
	return n;
}
