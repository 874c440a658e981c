/*
 * rpc_gss_mech.c - RPCSEC_GSS's per-message GSS-API calls (rpc_gss_mech.h):
 * header and reply verifiers (MICs), krb5i checksums, krb5p wrapping, over
 * MIT libgssapi_krb5's IOV calls on the message's own memory. No
 * cryptography is written here; the caller owns the buffers and the context.
 */
#include "rpc/rpc_gss_mech.h"

#include <endian.h>
#include <gssapi/gssapi_ext.h>
#include <string.h>

#include "rpc/rpc.h"

OM_uint32 rpc_gss_mic_check(struct gss_mech *m, const void *data, size_t len, const void *mic, size_t mic_len)
{
	gss_iov_buffer_desc iov[2] = {
		{ .type = GSS_IOV_BUFFER_TYPE_DATA, .buffer = { len, (void *)data } },
		{ .type = GSS_IOV_BUFFER_TYPE_MIC_TOKEN, .buffer = { mic_len, (void *)mic } },
	};
	OM_uint32 maj, min;

	pthread_mutex_lock(&m->lock);
	maj = gss_verify_mic_iov(&min, m->gctx, NULL, iov, 2);
	pthread_mutex_unlock(&m->lock);
	return maj;
}

/* gss_get_mic_iov with a MIC_TOKEN buffer of gss_get_mic_iov_length's size, in e's buffer. */
bool rpc_gss_enc_mic(struct gss_mech *m, const void *data, size_t len, struct xdr_enc *e, OM_uint32 *maj,
		     OM_uint32 *min)
{
	gss_iov_buffer_desc iov[2] = {
		{ .type = GSS_IOV_BUFFER_TYPE_DATA, .buffer = { len, (void *)data } },
		{ .type = GSS_IOV_BUFFER_TYPE_MIC_TOKEN, .buffer = { 0, NULL } },
	};
	uint8_t *tok = NULL;
	size_t room = 0;

	pthread_mutex_lock(&m->lock);
	*maj = gss_get_mic_iov_length(min, m->gctx, GSS_C_QOP_DEFAULT, iov, 2);
	if (!GSS_ERROR(*maj) && iov[1].buffer.length <= UINT32_MAX) {
		room = iov[1].buffer.length;
		xdr_enc_u32(e, (uint32_t)room);
		tok = xdr_enc_reserve(e, room);
	}
	if (tok) {
		iov[1].buffer.value = tok;
		*maj = gss_get_mic_iov(min, m->gctx, GSS_C_QOP_DEFAULT, iov, 2);
	}
	pthread_mutex_unlock(&m->lock);
	if (!tok || GSS_ERROR(*maj) || iov[1].buffer.length > room)
		return false;
	/* The token may come out shorter than announced: the opaque's length and end follow it. */
	e->p = tok;
	xdr_enc_patch_u32(e, (size_t)(tok - e->base) - XDR_UNIT, (uint32_t)iov[1].buffer.length);
	xdr_enc_reserve(e, iov[1].buffer.length);
	return true;
}

bool rpc_gss_integ_open(struct gss_mech *m, struct xdr_dec *d, uint32_t seq)
{
	const uint8_t *body, *sum;
	uint32_t blen, slen, got;

	if (!xdr_dec_opaque(d, (uint32_t)xdr_dec_remaining(d), &body, &blen) ||
	    !xdr_dec_opaque(d, RPC_AUTH_MAX_BYTES, &sum, &slen) || blen < XDR_UNIT)
		return false;
	OM_uint32 maj = rpc_gss_mic_check(m, body, blen, sum, slen);
	struct xdr_dec b = { .base = body, .p = body, .end = body + blen };
	/* RFC 2203 §5.3.2.2: the databody's seq_num must be the credential's. */
	if (GSS_ERROR(maj) || !xdr_dec_u32(&b, &got) || got != seq)
		return false;
	d->p = b.p;
	d->end = b.end;
	return true;
}

/* The token is a STREAM buffer in the message; the DATA buffer the library hands back points into it. */
bool rpc_gss_priv_open(struct gss_mech *m, struct xdr_dec *d, uint32_t seq)
{
	const uint8_t *body;
	uint32_t blen, got;
	OM_uint32 maj, min;
	int conf = 0;

	if (!xdr_dec_opaque(d, (uint32_t)xdr_dec_remaining(d), &body, &blen))
		return false;
	gss_iov_buffer_desc iov[2] = {
		{ .type = GSS_IOV_BUFFER_TYPE_STREAM, .buffer = { blen, (void *)body } },
		{ .type = GSS_IOV_BUFFER_TYPE_DATA, .buffer = { 0, NULL } },
	};
	pthread_mutex_lock(&m->lock);
	maj = gss_unwrap_iov(&min, m->gctx, &conf, NULL, iov, 2);
	pthread_mutex_unlock(&m->lock);
	const uint8_t *data = iov[1].buffer.value;
	if (GSS_ERROR(maj) || (iov[1].type & GSS_IOV_BUFFER_FLAG_ALLOCATED) || data < body ||
	    iov[1].buffer.length > blen || (size_t)(data - body) > blen - iov[1].buffer.length) {
		gss_release_iov_buffer(&min, iov, 2); /* only if the library did allocate */
		return false;
	}
	xdr_dec_init(d, data, iov[1].buffer.length);
	return conf && xdr_dec_u32(d, &got) && got == seq;
}

bool rpc_gss_integ_seal(struct gss_mech *m, uint32_t seq, struct xdr_enc *e, uint8_t *body, size_t n)
{
	OM_uint32 maj, min;

	if ((size_t)(e->end - e->p) < 2 * XDR_UNIT)
		return false;
	memmove(body + 2 * XDR_UNIT, body, n);
	e->p = body;
	xdr_enc_u32(e, (uint32_t)(n + XDR_UNIT));
	xdr_enc_u32(e, seq);
	e->p = body + 2 * XDR_UNIT + n + XDR_PAD(n); /* the bytes are XDR, n is aligned */
	return rpc_gss_enc_mic(m, body + XDR_UNIT, n + XDR_UNIT, e, &maj, &min) && !e->overflow;
}

bool rpc_gss_priv_seal(struct gss_mech *m, uint32_t seq, struct xdr_enc *e, uint8_t *body, size_t n)
{
	gss_iov_buffer_desc iov[4] = {
		{ .type = GSS_IOV_BUFFER_TYPE_HEADER },
		{ .type = GSS_IOV_BUFFER_TYPE_DATA, .buffer = { n + XDR_UNIT, NULL } },
		{ .type = GSS_IOV_BUFFER_TYPE_PADDING },
		{ .type = GSS_IOV_BUFFER_TYPE_TRAILER },
	};
	size_t len[4], tok = 0, room = (size_t)(e->end - body);
	OM_uint32 maj, min;
	int conf = 0;
	bool ok = false;

	pthread_mutex_lock(&m->lock);
	maj = gss_wrap_iov_length(&min, m->gctx, 1, GSS_C_QOP_DEFAULT, &conf, iov, 4);
	for (int i = 0; i < 4; i++) {
		len[i] = iov[i].buffer.length;
		tok += len[i] < room ? len[i] : room; /* no wrap: each at most room */
	}
	if (!GSS_ERROR(maj) && conf && tok < room && room - tok >= XDR_UNIT + XDR_PAD(tok)) {
		uint8_t *q = body + XDR_UNIT; /* the token, after its length word */
		memmove(q + len[0] + XDR_UNIT, body, n);
		for (size_t i = 0, off = 0; i < 4; off += len[i++])
			iov[i].buffer.value = q + off;
		uint32_t be = htobe32(seq);
		memcpy(q + len[0], &be, XDR_UNIT);
		maj = gss_wrap_iov(&min, m->gctx, 1, GSS_C_QOP_DEFAULT, &conf, iov, 4);
		ok = !GSS_ERROR(maj) && conf;
		for (int i = 0; i < 4; i++)
			ok = ok && iov[i].buffer.length == len[i]; /* laid out as announced */
	}
	pthread_mutex_unlock(&m->lock);
	if (!ok)
		return false;
	e->p = body;
	xdr_enc_u32(e, (uint32_t)tok);
	xdr_enc_reserve(e, tok); /* already written: moves past it, zeroes the XDR pad */
	return !e->overflow;
}
