/*
 * nfs4_proc_verify.c - VERIFY and NVERIFY (RFC 8881 §18.31, §18.15; RFC
 * 7530 §16.35, §16.15): the client's fattr4 is compared with the one
 * GETATTR would return for the same attributes, byte for byte (fattr4's
 * encoding of a value is unique: fixed-size numbers, opaque/strings with
 * their lengths, attributes in ascending order).
 *
 * The comparison is encoded into a buffer on the worker's stack (no
 * allocation); the client's attribute values stay in the request.
 */
#include <string.h>

#include "nfs/v4/nfs4.h"

#define NFS4_VERIFY_MAX 4096u /* our fattr4 of every supported attribute fits easily */

/* fattr4: bitmap4 (bits past the words kept remembered), then attrlist4 (bounded by the message). */
bool nfs4_verify_dec(struct nfs4_ctx *x, struct xdr_dec *d, void *args)
{
	struct nfs4_verify_args *a = args;

	(void)x;
	a->vals = NULL;
	a->len = 0;
	return nfs4_dec_bitmap_ext(d, &a->req, &a->unknown) && xdr_dec_opaque(d, UINT32_MAX, &a->vals, &a->len);
}

/* NFS4_OK when the attributes are the same, NFS4ERR_NOT_SAME when not, or another error. */
static uint32_t nfs4_verify_compare(struct nfs4_ctx *x, const struct nfs4_verify_args *a)
{
	struct nfs4_getattr_args ga = { .req = a->req };
	struct nfs4_getattr_res gr;
	struct nfs4_bitmap sup, got;
	struct nfs4_attr_src src;
	uint8_t buf[NFS4_VERIFY_MAX];
	struct xdr_enc e;
	struct xdr_dec d;
	const uint8_t *vals;
	uint32_t len, status;

	/* RFC 8881 §18.31.3: an attribute the server does not support is
	 * ATTRNOTSUPP; rdattr_error (only meaningful in READDIR) is INVAL. */
	/* §18.7.3 as for GETATTR: a write-only attribute (time_*_set) is INVAL. */
	if (!nfs4_attr_req_ok(&a->req))
		return NFS4ERR_INVAL;
	nfs4_attr_supported(x->minorversion, &sup);
	for (unsigned i = 0; i < NFS4_BITMAP_WORDS; i++)
		if (a->req.w[i] & ~sup.w[i])
			return NFS4ERR_ATTRNOTSUPP;
	if (a->unknown)
		return NFS4ERR_ATTRNOTSUPP;
	if (nfs4_bitmap_isset(&a->req, FATTR4_RDATTR_ERROR))
		return NFS4ERR_INVAL;
	status = nfs4_getattr_exec(x, &ga, &gr);
	if (status != NFS4_OK)
		return status;
	nfs4_attr_src_fill(x, &src, &gr.attr, &gr.fh, gr.mounted_on_fileid);
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_attr_encode(&e, &a->req, &src);
	if (e.overflow)
		return NFS4ERR_SERVERFAULT;
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	if (!nfs4_dec_bitmap(&d, &got) || !xdr_dec_opaque(&d, UINT32_MAX, &vals, &len))
		return NFS4ERR_SERVERFAULT;
	/* An attribute asked for that this object cannot give: not the same. */
	if (memcmp(&got, &a->req, sizeof(got)) != 0 || len != a->len || memcmp(vals, a->vals, len) != 0)
		return NFS4ERR_NOT_SAME;
	return NFS4_OK;
}

uint32_t nfs4_verify_exec(struct nfs4_ctx *x, void *args, void *res)
{
	(void)res;
	return nfs4_verify_compare(x, args);
}

/* RFC 8881 §18.15.3: the reverse: SAME when they are equal. */
uint32_t nfs4_nverify_exec(struct nfs4_ctx *x, void *args, void *res)
{
	uint32_t status = nfs4_verify_compare(x, args);

	(void)res;
	return status == NFS4_OK ? NFS4ERR_SAME : status == NFS4ERR_NOT_SAME ? NFS4_OK : status;
}
