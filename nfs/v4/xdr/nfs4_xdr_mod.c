/*
 * nfs4_xdr_mod.c - XDR of the namespace-changing operations and of
 * VERIFY/NVERIFY (see nfs4_mod.h). Strings are pointers into the call
 * message; the settable fattr4 goes through nfs4_sattr_dec(), whose
 * statuses other than BADXDR are kept for the execute step (the arguments
 * still decode, RFC 8881 §15.1.1.3's BADXDR is only for what does not).
 */
#include "nfs/v4/xdr/nfs4_mod.h"

/* A fattr4 to set: false only for BADXDR. */
static bool dec_sattr(struct xdr_dec *d, struct nfs4_sattr *s, uint32_t *status)
{
	*status = nfs4_sattr_dec(d, s);
	return *status != NFS4ERR_BADXDR;
}

/* RFC 8881 §18.4.1: createtype4 is a union on nfs_ftype4: NF4LNK linktext4,
 * NF4BLK/NF4CHR specdata4, the rest void (NF4REG and others decode, and are
 * BADTYPE in the execute step). */
bool nfs4_dec_create(struct xdr_dec *d, struct nfs4_create_args *a)
{
	if (!xdr_dec_u32(d, &a->type))
		return false;
	if (a->type == NF4LNK && !nfs4_dec_name(d, &a->linkdata))
		return false;
	if ((a->type == NF4BLK || a->type == NF4CHR) && (!xdr_dec_u32(d, &a->major) || !xdr_dec_u32(d, &a->minor)))
		return false;
	return nfs4_dec_name(d, &a->name) && dec_sattr(d, &a->attrs, &a->attrs_status);
}

/* RENAME4args (§18.26.1): oldname, newname. REMOVE and LINK use oldname only. */
bool nfs4_dec_rename(struct xdr_dec *d, struct nfs4_rename_args *a)
{
	return nfs4_dec_name(d, &a->oldname) && nfs4_dec_name(d, &a->newname);
}

/* SETATTR4args (§18.30.1): stateid4 {seqid, other[12]}, fattr4. */
bool nfs4_dec_setattr(struct xdr_dec *d, struct nfs4_setattr_args *a)
{
	if (!xdr_dec_u32(d, &a->sid_seqid) || !xdr_dec_fixed(d, a->sid_other, sizeof(a->sid_other)))
		return false;
	a->attrs_status = nfs4_sattr_dec_setattr(d, &a->attrs); /* RFC 9754 §5.2's delegated times too */
	return a->attrs_status != NFS4ERR_BADXDR;
}

/* VERIFY4args / NVERIFY4args (§18.31.1, §18.15.1): fattr4, compared as bytes. */
bool nfs4_dec_verify(struct xdr_dec *d, struct nfs4_verify_args *a)
{
	/* Bits past the words nfs4_dec_bitmap keeps name attributes we do not support. */
	a->extra_words = nfs4_bitmap_has_extra(d);
	return nfs4_dec_bitmap(d, &a->req) && xdr_dec_opaque(d, UINT32_MAX, &a->vals, &a->vals_len);
}

void nfs4_enc_cinfo(struct xdr_enc *e, const struct nfs4_cinfo *c)
{
	xdr_enc_bool(e, c->atomic);
	xdr_enc_u64(e, c->before);
	xdr_enc_u64(e, c->after);
}

/* CREATE4resok (§18.4.2): cinfo, attrset. */
void nfs4_create_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_create_res *r = res;

	(void)x, (void)status;
	nfs4_enc_cinfo(e, &r->cinfo);
	nfs4_enc_bitmap(e, &r->attrset);
}

/* REMOVE4resok (§18.25.2), LINK4resok (§18.9.2): cinfo. */
void nfs4_cinfo_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_cinfo_res *r = res;

	(void)x, (void)status;
	nfs4_enc_cinfo(e, &r->cinfo);
}

/* RENAME4resok (§18.26.2): source_cinfo, target_cinfo. */
void nfs4_rename_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_rename_res *r = res;

	(void)x, (void)status;
	nfs4_enc_cinfo(e, &r->source);
	nfs4_enc_cinfo(e, &r->target);
}

/* SETATTR4res (§18.30.2): status, then attrsset whatever the status. */
void nfs4_setattr_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_setattr_res *r = res;
	static const struct nfs4_bitmap none;

	(void)x;
	nfs4_enc_bitmap(e, status == NFS4_OK ? &r->attrsset : &none);
}
