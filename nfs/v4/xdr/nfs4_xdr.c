/*
 * nfs4_xdr.c - NFSv4 XDR decoders and encoders (see nfs4_xdr.h): the
 * COMPOUND header, bitmap4, component4 names, filehandles and the arguments
 * and results of the operations built so far. Every count is checked against
 * its limit and against what remains before it is used (two passes where a
 * count governs a loop); nothing here allocates or logs.
 */
#include <string.h>

#include "nfs/v4/xdr/nfs4_xdr.h"

/* RFC 7531 COMPOUND4args: utf8str_cs tag; uint32_t minorversion; nfs_argop4 argarray<>.
 * The tag is bounded by NFS4_TAG_MAX (it is echoed in the reply, RFC 8881 §16.2.3). */
bool nfs4_dec_compound_hdr(struct xdr_dec *d, struct nfs4_compound_hdr *h)
{
	if (!xdr_dec_opaque(d, NFS4_TAG_MAX, &h->tag, &h->taglen))
		return false;
	if (!xdr_dec_u32(d, &h->minorversion) || !xdr_dec_u32(d, &h->numops))
		return false;
	return true;
}

/* RFC 8881 §3.3.7 bitmap4 = uint32_t<>: the count is checked against our
 * limit and the remaining bytes before any word is read. */
bool nfs4_dec_bitmap(struct xdr_dec *d, struct nfs4_bitmap *b)
{
	uint32_t n, v;

	memset(b, 0, sizeof(*b));
	if (!xdr_dec_u32(d, &n) || n > NFS4_BITMAP_MAX || (size_t)n * 4u > xdr_dec_remaining(d))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (!xdr_dec_u32(d, &v))
			return false;
		if (i < NFS4_BITMAP_WORDS)
			b->w[i] = v;
	}
	return true;
}

/* component4 = utf8str_cs = opaque<>: bounded by the message only; what the
 * name may hold is nfs4_name_check()'s business (a status, not BADXDR). */
bool nfs4_dec_name(struct xdr_dec *d, struct nfs4_name *n)
{
	return xdr_dec_opaque(d, UINT32_MAX, &n->s, &n->len);
}

/* RFC 8881 §18.19.1 PUTFH4args: nfs_fh4 object = opaque<NFS4_FHSIZE>. */
bool nfs4_dec_putfh(struct xdr_dec *d, struct nfs4_putfh_args *a)
{
	const uint8_t *p;
	uint32_t len;

	if (!xdr_dec_opaque(d, NFS4_FHSIZE, &p, &len))
		return false;
	a->fh.len = len;
	memcpy(a->fh.data, p, len);
	return true;
}

/* RFC 8881 §18.7.1 GETATTR4args: bitmap4 attr_request. */
bool nfs4_dec_getattr(struct xdr_dec *d, struct nfs4_getattr_args *a)
{
	return nfs4_dec_bitmap(d, &a->req);
}

/* RFC 8881 §18.1.1 ACCESS4args: uint32_t access (unknown bits are ignored, §18.1.3). */
bool nfs4_dec_access(struct xdr_dec *d, struct nfs4_access_args *a)
{
	return xdr_dec_u32(d, &a->access);
}

/* RFC 8881 §18.23.1 READDIR4args: cookie, cookieverf, dircount, maxcount, attr_request. */
bool nfs4_dec_readdir(struct xdr_dec *d, struct nfs4_readdir_args *a)
{
	return xdr_dec_u64(d, &a->cookie) && xdr_dec_fixed(d, a->verf, NFS4_VERIFIER_SIZE) &&
	       xdr_dec_u32(d, &a->dircount) && xdr_dec_u32(d, &a->maxcount) && nfs4_dec_bitmap(d, &a->req);
}

/* RFC 8881 §18.45.1 SECINFO_NO_NAME4args: secinfo_style4, an enum of two values
 * (RFC 4506 §4.3: any other value does not decode). */
bool nfs4_dec_secinfo_nn(struct xdr_dec *d, struct nfs4_secinfo_nn_args *a)
{
	return xdr_dec_u32(d, &a->style) && a->style <= SECINFO_STYLE4_PARENT;
}

/* Length of the UTF-8 sequence led by c (0: not a lead byte) and the smallest
 * code point it may encode (RFC 3629 §3). */
static unsigned utf8_seq(uint8_t c, uint32_t *cp, uint32_t *min)
{
	if (c < 0x80) {
		*cp = c, *min = 0;
		return 1;
	}
	if ((c & 0xe0) == 0xc0) {
		*cp = c & 0x1fu, *min = 0x80;
		return 2;
	}
	if ((c & 0xf0) == 0xe0) {
		*cp = c & 0x0fu, *min = 0x800;
		return 3;
	}
	if ((c & 0xf8) == 0xf0) {
		*cp = c & 0x07u, *min = 0x10000;
		return 4;
	}
	return 0;
}

bool nfs4_utf8_valid(const uint8_t *s, uint32_t len)
{
	uint32_t i = 0, cp, min;

	while (i < len) {
		unsigned n = utf8_seq(s[i], &cp, &min);
		if (n == 0 || n > len - i)
			return false;
		for (unsigned k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3fu);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n;
	}
	return true;
}

uint32_t nfs4_name_check(const struct nfs4_name *n)
{
	/* RFC 8881 §18.13.3: a zero-length name is NFS4ERR_INVAL. */
	if (n->len == 0)
		return NFS4ERR_INVAL;
	/* Longer than the maxname attribute we announce (RFC 8881 §5.8.2). */
	if (n->len > NFS4_NAME_MAX)
		return NFS4ERR_NAMETOOLONG;
	/* RFC 8881 §14.5: a name that is not UTF-8 is NFS4ERR_INVAL. */
	if (!nfs4_utf8_valid(n->s, n->len))
		return NFS4ERR_INVAL;
	/* RFC 8881 §14.5: '/' and NUL are characters the server cannot take: BADCHAR. */
	if (memchr(n->s, '/', n->len) || memchr(n->s, 0, n->len))
		return NFS4ERR_BADCHAR;
	/* RFC 8881 §18.13.3: "." and ".." are not names in NFSv4 (LOOKUPP goes up). */
	if ((n->len == 1 && n->s[0] == '.') || (n->len == 2 && n->s[0] == '.' && n->s[1] == '.'))
		return NFS4ERR_BADNAME;
	return NFS4_OK;
}

void nfs4_enc_bitmap(struct xdr_enc *e, const struct nfs4_bitmap *b)
{
	uint32_t n = NFS4_BITMAP_WORDS;

	while (n > 0 && b->w[n - 1] == 0)
		n--;
	xdr_enc_u32(e, n);
	for (uint32_t i = 0; i < n; i++)
		xdr_enc_u32(e, b->w[i]);
}

/* RFC 8881 §18.8.2 GETFH4resok: nfs_fh4 object. */
void nfs4_enc_fh(struct xdr_enc *e, const struct nfs_fh *fh)
{
	xdr_enc_opaque(e, fh->data, fh->len);
}

void nfs4_enc_access(struct xdr_enc *e, uint32_t supported, uint32_t access)
{
	xdr_enc_u32(e, supported);
	xdr_enc_u32(e, access);
}

/*
 * SECINFO4resok (RFC 8881 §18.29.2, RFC 7530 §16.31.2): secinfo4 is a union on
 * the flavor; RPCSEC_GSS (6) carries rpcsec_gss_info: the mechanism's OID
 * (krb5, RFC 1964 §1: 1.2.840.113554.1.2.2, its DER contents without tag and
 * length, as knfsd and the Linux client's gss_mech_info2flavor() have it),
 * qop 0 and the service (rpc_gss_svc_t, RFC 2203 §5: none 1, integrity 2,
 * privacy 3). bits: sec= bit numbers (0 none, 1 sys, 2 krb5, 3 krb5i, 4 krb5p).
 */
void nfs4_enc_secinfo(struct xdr_enc *e, const uint8_t *bits, uint32_t n)
{
	/* 9 bytes and their XDR padding (written whole: GCC sees no bound on the padding's memset) */
	static const uint8_t krb5_oid[12] = { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02 };

	xdr_enc_u32(e, n);
	for (uint32_t i = 0; i < n; i++) {
		if (bits[i] < 2) { /* AUTH_NONE 0, AUTH_SYS 1: the flavor alone */
			xdr_enc_u32(e, bits[i]);
			continue;
		}
		xdr_enc_u32(e, 6); /* RPCSEC_GSS */
		xdr_enc_u32(e, 9);
		xdr_enc_fixed(e, krb5_oid, sizeof(krb5_oid));
		xdr_enc_u32(e, 0);           /* qop: the mechanism's default */
		xdr_enc_u32(e, bits[i] - 1u); /* krb5 2 -> 1, krb5i 3 -> 2, krb5p 4 -> 3 */
	}
}

/* RFC 8881 §18.13.1 LOOKUP4args, §18.29.1 SECINFO4args: one component4. */
bool nfs4_dec_name_args(struct xdr_dec *d, struct nfs4_name_args *a)
{
	return nfs4_dec_name(d, &a->name);
}
