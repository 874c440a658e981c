/*
 * nfs4_xdr_v42.c - XDR of the NFSv4.2 operations (RFC 7863) and of the
 * extended-attribute operations (RFC 8276 §8.4): see nfs4_v42.h. Pure: every
 * count is checked against its limit before use, strings and values are
 * pointers into the call message, nothing is allocated. READ_PLUS's data
 * segment goes through rpc_enc_ddp() (RFC 8267 §4.1: NFS4_CONTENT_DATA is
 * DDP-eligible), everything else inline.
 */
#include "nfs/v4/nfs4.h"
#include "nfs/v4/xdr/nfs4_v42.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"
#include "rpc/rpc.h"

/* netloc4 (RFC 7862 §15.2.1... its XDR in RFC 7863): NL4_NAME, NL4_URL, NL4_NETADDR. */
static bool dec_netloc(struct xdr_dec *d)
{
	const uint8_t *p;
	uint32_t type, n;

	if (!xdr_dec_u32(d, &type))
		return false;
	switch (type) {
	case 1: /* NL4_NAME: utf8str_cis */
	case 2: /* NL4_URL */
		return xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &p, &n);
	case 3: /* NL4_NETADDR: netaddr4 {na_r_netid, na_r_addr} */
		return xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &p, &n) && xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &p, &n);
	default:
		return false;
	}
}

/* ALLOCATE4args, DEALLOCATE4args (RFC 7862 §15.1.1, §15.4.1): stateid, offset, length. */
bool nfs4_dec_alloc(struct xdr_dec *d, struct nfs4_range_args *a)
{
	return nfs4_dec_stateid(d, &a->sid) && xdr_dec_u64(d, &a->offset) && xdr_dec_u64(d, &a->length);
}

/* SEEK4args (§15.11.1): stateid, offset, data_content4 (any value: UNION_NOTSUPP is the execute step's). */
bool nfs4_dec_seek(struct xdr_dec *d, struct nfs4_range_args *a)
{
	return nfs4_dec_stateid(d, &a->sid) && xdr_dec_u64(d, &a->offset) && xdr_dec_u32(d, &a->what);
}

/* The head COPY4args and CLONE4args share: two stateids, two offsets, a count. */
static bool dec_two_files(struct xdr_dec *d, struct nfs4_copy_args *a)
{
	return nfs4_dec_stateid(d, &a->src_sid) && nfs4_dec_stateid(d, &a->dst_sid) &&
	       xdr_dec_u64(d, &a->src_offset) && xdr_dec_u64(d, &a->dst_offset) && xdr_dec_u64(d, &a->count);
}

/* COPY4args (§15.2.1): ... ca_consecutive, ca_synchronous, netloc4 ca_source_server<>. */
bool nfs4_dec_copy(struct xdr_dec *d, struct nfs4_copy_args *a)
{
	if (!dec_two_files(d, a) || !xdr_dec_bool(d, &a->consecutive) || !xdr_dec_bool(d, &a->synchronous) ||
	    !xdr_dec_u32(d, &a->nsources) || a->nsources > NFS4_COPY_SOURCES_MAX)
		return false;
	for (uint32_t i = 0; i < a->nsources; i++)
		if (!dec_netloc(d))
			return false;
	return true;
}

/* CLONE4args (§15.13.1). */
bool nfs4_dec_clone(struct xdr_dec *d, struct nfs4_copy_args *a)
{
	return dec_two_files(d, a);
}

/* OFFLOAD_STATUS4args, OFFLOAD_CANCEL4args (§15.9.1, §15.8.1): one stateid. */
bool nfs4_dec_offload(struct xdr_dec *d, struct nfs4_stateid *sid)
{
	return nfs4_dec_stateid(d, sid);
}

/* xattrkey4 (RFC 8276 §8.3: a component4): its bytes as sent; the execute step judges them. */
static bool dec_xattrkey(struct xdr_dec *d, struct nfs4_name *n)
{
	return xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &n->s, &n->len);
}

/* GETXATTR4args, REMOVEXATTR4args (RFC 8276 §8.4.1.1, §8.4.4.1). */
bool nfs4_dec_getxattr(struct xdr_dec *d, struct nfs4_xattr_args *a)
{
	return dec_xattrkey(d, &a->name);
}

/* SETXATTR4args (§8.4.2.1): option, key, value. A value larger than
 * NFS4_XATTR_SIZE_MAX decodes (it is in the message) and gets XATTR2BIG. */
bool nfs4_dec_setxattr(struct xdr_dec *d, struct nfs4_xattr_args *a)
{
	return xdr_dec_u32(d, &a->option) && a->option <= SETXATTR4_REPLACE && dec_xattrkey(d, &a->name) &&
	       xdr_dec_opaque(d, UINT32_MAX, &a->value, &a->value_len);
}

/* LISTXATTRS4args (§8.4.3.1): cookie, maxcount. */
bool nfs4_dec_listxattrs(struct xdr_dec *d, struct nfs4_listxattrs_args *a)
{
	return xdr_dec_u64(d, &a->cookie) && xdr_dec_u32(d, &a->maxcount);
}

/* seek_res4 (RFC 7862 §15.11.2). */
void nfs4_seek_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_seek_res *r = res;

	(void)x, (void)status;
	xdr_enc_bool(e, r->eof);
	xdr_enc_u64(e, r->offset);
}

/* read_plus_res4 (§15.10.2): rpr_eof, read_plus_content rpr_contents<>. */
void nfs4_read_plus_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_read_plus_res *r = res;

	(void)status;
	xdr_enc_bool(e, r->eof);
	xdr_enc_u32(e, r->nsegs);
	for (uint32_t i = 0; i < r->nsegs && i < NFS4_READ_PLUS_SEGS; i++) {
		const struct nfs4_read_plus_seg *s = &r->segs[i];

		xdr_enc_u32(e, s->type);
		xdr_enc_u64(e, s->offset);
		if (s->type == NFS4_CONTENT_HOLE) {
			xdr_enc_u64(e, s->length); /* data_info4 di_length */
		} else if (x->call && e == &x->call->res) {
			/* RFC 8267 §4.1: NFS4_CONTENT_DATA may leave in a Write chunk (in order with
			 * the COMPOUND's other READ/READLINK/READ_PLUS items, §4.3); else inline. */
			rpc_enc_ddp(x->call, s->data, (uint32_t)s->length);
		} else {
			xdr_enc_opaque(e, s->data, (uint32_t)s->length);
		}
	}
}

/* COPY4resok (§15.2.2): write_response4 {wr_callback_id<1>, wr_count, wr_committed,
 * wr_writeverf}, copy_requirements4 {cr_consecutive, cr_synchronous}. */
void nfs4_copy_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_copy_res *r = res;

	(void)x, (void)status;
	/* §15.2.3: a synchronous copy has no callback id; an asynchronous one names its
	 * copy stateid (§4.8), copied nothing yet, and is not synchronous. */
	xdr_enc_u32(e, r->async ? 1 : 0);
	if (r->async)
		nfs4_enc_stateid(e, &r->cb_sid);
	xdr_enc_u64(e, r->async ? 0 : r->count);
	xdr_enc_u32(e, r->async ? UNSTABLE4 : r->committed);
	xdr_enc_fixed(e, nfs_write_verf, NFS4_VERIFIER_SIZE); /* the server's write verifier, as WRITE's */
	xdr_enc_bool(e, true);
	xdr_enc_bool(e, !r->async);
}

/* OFFLOAD_STATUS4resok (§15.9.2): osr_count, nfsstat4 osr_complete<1> (present once the copy is over). */
void nfs4_offload_status_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_offload_status_res *r = res;

	(void)x, (void)status;
	xdr_enc_u64(e, r->count);
	xdr_enc_u32(e, r->complete ? 1 : 0);
	if (r->complete)
		xdr_enc_u32(e, r->status);
}

/* GETXATTR4res (RFC 8276 §8.4.1.2): xattrvalue4, inline (RFC 8267 §4.1: not DDP-eligible). */
void nfs4_getxattr_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_getxattr_res *r = res;

	(void)x, (void)status;
	xdr_enc_opaque(e, r->value, r->len);
}

/* LISTXATTRS4resok (RFC 8276 §8.4.3.2): lxr_cookie, xattrkey4 lxr_names<>, lxr_eof. */
void nfs4_listxattrs_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_listxattrs_res *r = res;
	const char *p = r->names + r->skip;

	(void)x, (void)status;
	xdr_enc_u64(e, r->cookie);
	xdr_enc_u32(e, r->count);
	for (uint32_t i = 0; i < r->count; i++) {
		uint32_t n = (uint32_t)strlen(p);

		xdr_enc_opaque(e, p, n);
		p += n + 1;
	}
	xdr_enc_bool(e, r->eof);
}
