/*
 * rt_xdr.h - the RDMA test requester's own XDR (RFC 4506) encoder and
 * decoder. Deliberately independent of rnfsd's rpc/xdr.h: the requester
 * exists to check the server, so it shares no code with it.
 *
 * Encoder: writes into a caller-owned buffer; running out of room sets the
 * sticky `overflow` flag instead of writing past the end.
 * Decoder: every read is bounds-checked; a short buffer sets the sticky
 * `bad` flag and yields zeros / NULL. Callers check `bad` once at the end.
 * Neither struct owns memory.
 */
#ifndef RT_XDR_H
#define RT_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RT_XDR_PAD(n) ((4u - ((uint32_t)(n) & 3u)) & 3u)

struct rt_enc {
	uint8_t *buf;
	size_t cap;
	size_t len;
	bool overflow;
};

struct rt_dec {
	const uint8_t *buf;
	size_t len;
	size_t pos;
	bool bad;
};

static inline void rt_enc_init(struct rt_enc *e, void *buf, size_t cap)
{
	e->buf = buf;
	e->cap = cap;
	e->len = 0;
	e->overflow = false;
}

/* Room for n more bytes: a pointer to them, or NULL (and overflow set). */
static inline uint8_t *rt_enc_reserve(struct rt_enc *e, size_t n)
{
	uint8_t *p;

	if (e->overflow || n > e->cap - e->len) {
		e->overflow = true;
		return NULL;
	}
	p = e->buf + e->len;
	e->len += n;
	return p;
}

static inline void rt_enc_u32(struct rt_enc *e, uint32_t v)
{
	uint8_t *p = rt_enc_reserve(e, 4);

	if (p) {
		p[0] = v >> 24;
		p[1] = v >> 16;
		p[2] = v >> 8;
		p[3] = v;
	}
}

static inline void rt_enc_u64(struct rt_enc *e, uint64_t v)
{
	rt_enc_u32(e, (uint32_t)(v >> 32));
	rt_enc_u32(e, (uint32_t)v);
}

/* Fixed-length opaque: the bytes plus XDR padding. */
static inline void rt_enc_fixed(struct rt_enc *e, const void *data, size_t n)
{
	uint32_t pad = RT_XDR_PAD(n);
	uint8_t *p = rt_enc_reserve(e, n + pad);

	if (p) {
		if (n)
			memcpy(p, data, n);
		memset(p + n, 0, pad);
	}
}

/* Variable-length opaque or string: length word, bytes, padding. */
static inline void rt_enc_opaque(struct rt_enc *e, const void *data, size_t n)
{
	rt_enc_u32(e, (uint32_t)n);
	rt_enc_fixed(e, data, n);
}

static inline void rt_dec_init(struct rt_dec *d, const void *buf, size_t len)
{
	d->buf = buf;
	d->len = len;
	d->pos = 0;
	d->bad = false;
}

static inline size_t rt_dec_left(const struct rt_dec *d)
{
	return d->bad ? 0 : d->len - d->pos;
}

/* Pointer to n bytes (consuming n + padding), or NULL with bad set. */
static inline const uint8_t *rt_dec_bytes(struct rt_dec *d, size_t n)
{
	const uint8_t *p;
	size_t left = rt_dec_left(d);
	uint32_t pad = RT_XDR_PAD(n);

	if (d->bad || n > left || pad > left - n) {
		d->bad = true;
		return NULL;
	}
	p = d->buf + d->pos;
	d->pos += n + pad;
	return p;
}

static inline uint32_t rt_dec_u32(struct rt_dec *d)
{
	const uint8_t *p = rt_dec_bytes(d, 4);

	if (!p)
		return 0;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t rt_dec_u64(struct rt_dec *d)
{
	uint64_t hi = rt_dec_u32(d);

	return hi << 32 | rt_dec_u32(d);
}

/* Variable-length opaque of at most max bytes: pointer (or NULL), *n its length. */
static inline const uint8_t *rt_dec_opaque(struct rt_dec *d, uint32_t max, uint32_t *n)
{
	uint32_t len = rt_dec_u32(d);

	*n = 0;
	if (d->bad || len > max) {
		d->bad = true;
		return NULL;
	}
	*n = len;
	return rt_dec_bytes(d, len);
}

/* XDR bool (RFC 4506 §4.4): only 0 and 1 are valid. */
static inline bool rt_dec_bool(struct rt_dec *d)
{
	uint32_t v = rt_dec_u32(d);

	if (v > 1)
		d->bad = true;
	return v == 1;
}

static inline uint32_t rt_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void rt_put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

#endif
