/*
 * xdr.h - bounds-checked XDR (RFC 4506) decoding and encoding over flat buffers.
 *
 * A decoder only ever hands out "a pointer to n bytes, or NULL" (the kernel's
 * xdr_inline_decode pattern): nothing reads past what was received. Every
 * wire-supplied length is compared with what remains *before* any arithmetic
 * that could overflow. An encoder writes into a caller-owned buffer and sets
 * `overflow` instead of writing past its end; callers check it once at the end.
 *
 * Ownership: neither struct owns memory; they point into buffers owned by the
 * transport's per-call context.
 */
#ifndef RNFSD_XDR_H
#define RNFSD_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <endian.h>

#define XDR_UNIT 4u
#define XDR_PAD(n) ((4u - ((n) & 3u)) & 3u)
/* Round up to a multiple of 4; only for lengths already known to be bounded. */
#define XDR_ALIGN(n) (((n) + 3u) & ~(size_t)3u)

struct xdr_dec {
	const uint8_t *base; /* start of the XDR stream (for positions) */
	const uint8_t *p;    /* next unread byte */
	const uint8_t *end;  /* one past the last received byte */
};

struct xdr_enc {
	uint8_t *base;
	uint8_t *p;
	uint8_t *end;
	bool overflow; /* set once any reserve failed; sticky */
};

static inline void xdr_dec_init(struct xdr_dec *d, const void *buf, size_t len)
{
	d->base = d->p = (const uint8_t *)buf;
	d->end = d->base + len;
}

static inline size_t xdr_dec_remaining(const struct xdr_dec *d)
{
	return (size_t)(d->end - d->p);
}

/* Offset of the next item from the start of the stream (RFC 8166 §3.4.5 positions). */
static inline size_t xdr_dec_pos(const struct xdr_dec *d)
{
	return (size_t)(d->p - d->base);
}

/* Pointer to n bytes (consuming n plus XDR padding), or NULL if fewer remain. */
static inline const uint8_t *xdr_dec_inline(struct xdr_dec *d, size_t n)
{
	size_t rem = xdr_dec_remaining(d);
	if (n > rem || XDR_PAD(n) > rem - n)
		return NULL;
	const uint8_t *r = d->p;
	d->p += n + XDR_PAD(n);
	return r;
}

static inline bool xdr_dec_u32(struct xdr_dec *d, uint32_t *v)
{
	const uint8_t *q = xdr_dec_inline(d, 4);
	if (!q)
		return false;
	uint32_t be;
	memcpy(&be, q, 4);
	*v = be32toh(be);
	return true;
}

static inline bool xdr_dec_i32(struct xdr_dec *d, int32_t *v)
{
	return xdr_dec_u32(d, (uint32_t *)v);
}

static inline bool xdr_dec_u64(struct xdr_dec *d, uint64_t *v)
{
	const uint8_t *q = xdr_dec_inline(d, 8);
	if (!q)
		return false;
	uint64_t be;
	memcpy(&be, q, 8);
	*v = be64toh(be);
	return true;
}

/* XDR bool: only 0 and 1 are valid. */
static inline bool xdr_dec_bool(struct xdr_dec *d, bool *v)
{
	uint32_t u;
	if (!xdr_dec_u32(d, &u) || u > 1)
		return false;
	*v = u;
	return true;
}

/* Variable-length opaque<max>: length checked against max, then against what remains. */
static inline bool xdr_dec_opaque(struct xdr_dec *d, uint32_t max, const uint8_t **data, uint32_t *len)
{
	uint32_t n;
	if (!xdr_dec_u32(d, &n) || n > max)
		return false;
	const uint8_t *q = xdr_dec_inline(d, n);
	if (!q)
		return false;
	*data = q;
	*len = n;
	return true;
}

/* Fixed-length opaque[n]. */
static inline bool xdr_dec_fixed(struct xdr_dec *d, void *out, size_t n)
{
	const uint8_t *q = xdr_dec_inline(d, n);
	if (!q)
		return false;
	memcpy(out, q, n);
	return true;
}

static inline void xdr_enc_init(struct xdr_enc *e, void *buf, size_t cap)
{
	e->base = e->p = (uint8_t *)buf;
	e->end = e->base + cap;
	e->overflow = false;
}

static inline size_t xdr_enc_len(const struct xdr_enc *e)
{
	return (size_t)(e->p - e->base);
}

/* Room for n bytes plus padding (zeroed), or NULL and overflow set. */
static inline uint8_t *xdr_enc_reserve(struct xdr_enc *e, size_t n)
{
	size_t room = (size_t)(e->end - e->p);
	if (e->overflow || n > room || XDR_PAD(n) > room - n) {
		e->overflow = true;
		return NULL;
	}
	uint8_t *r = e->p;
	if (XDR_PAD(n))
		memset(r + n, 0, XDR_PAD(n));
	e->p += n + XDR_PAD(n);
	return r;
}

static inline void xdr_enc_u32(struct xdr_enc *e, uint32_t v)
{
	uint8_t *q = xdr_enc_reserve(e, 4);
	if (q) {
		uint32_t be = htobe32(v);
		memcpy(q, &be, 4);
	}
}

static inline void xdr_enc_u64(struct xdr_enc *e, uint64_t v)
{
	uint8_t *q = xdr_enc_reserve(e, 8);
	if (q) {
		uint64_t be = htobe64(v);
		memcpy(q, &be, 8);
	}
}

static inline void xdr_enc_bool(struct xdr_enc *e, bool v)
{
	xdr_enc_u32(e, v ? 1 : 0);
}

static inline void xdr_enc_fixed(struct xdr_enc *e, const void *data, size_t n)
{
	uint8_t *q = xdr_enc_reserve(e, n);
	if (q && n)
		memcpy(q, data, n);
}

static inline void xdr_enc_opaque(struct xdr_enc *e, const void *data, uint32_t n)
{
	xdr_enc_u32(e, n);
	xdr_enc_fixed(e, data, n);
}

/* Overwrite a u32 already reserved at byte offset off (e.g. a count known only later). */
static inline void xdr_enc_patch_u32(struct xdr_enc *e, size_t off, uint32_t v)
{
	if (off + 4 <= (size_t)(e->p - e->base)) {
		uint32_t be = htobe32(v);
		memcpy(e->base + off, &be, 4);
	}
}

#endif
