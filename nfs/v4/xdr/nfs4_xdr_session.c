/*
 * nfs4_xdr_session.c - XDR of the NFSv4.1 session operations (see
 * nfs4_xdr_session.h). Items the server does not use (the client's
 * implementation id, SP4_MACH_CRED's operation bitmaps, RPCSEC_GSS callback
 * handles) are decoded to be skipped, every count bounded first.
 */
#include <string.h>

#include "nfs/v4/xdr/nfs4_xdr_session.h"

/* nfs_impl_id4<1> (RFC 8881 §18.35.1): domain, name, date; skipped. */
static bool skip_impl_id(struct xdr_dec *d)
{
	const uint8_t *p;
	uint32_t n, len;
	uint64_t sec;
	uint32_t nsec;

	if (!xdr_dec_u32(d, &n) || n > 1)
		return false;
	if (n == 0)
		return true;
	return xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &p, &len) && xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &p, &len) &&
	       xdr_dec_u64(d, &sec) && xdr_dec_u32(d, &nsec);
}

/* RFC 8881 §18.35.1 EXCHANGE_ID4args. */
bool nfs4_dec_exchange_id(struct xdr_dec *d, struct nfs4_exid_args *a)
{
	struct nfs4_bitmap enforce, allow;

	if (!xdr_dec_fixed(d, a->verifier, 8) || !xdr_dec_opaque(d, NFS4_OWNER_MAX, &a->owner, &a->owner_len) ||
	    !xdr_dec_u32(d, &a->flags) || !xdr_dec_u32(d, &a->how))
		return false;
	if (a->how == SP4_MACH_CRED) {
		if (!nfs4_dec_bitmap(d, &enforce) || !nfs4_dec_bitmap(d, &allow))
			return false;
	} else if (a->how != SP4_NONE) {
		return false; /* SP4_SSV: not decoded (execute answers as for an unknown arm) */
	}
	return skip_impl_id(d);
}

/* channel_attrs4 (RFC 8881 §18.36.1), rdma_ird<1> skipped. */
static bool dec_chan_attrs(struct xdr_dec *d, struct nfs4_chan_attrs *c)
{
	uint32_t n, ird;

	if (!xdr_dec_u32(d, &c->headerpadsize) || !xdr_dec_u32(d, &c->maxrequestsize) ||
	    !xdr_dec_u32(d, &c->maxresponsesize) || !xdr_dec_u32(d, &c->maxresponsesize_cached) ||
	    !xdr_dec_u32(d, &c->maxoperations) || !xdr_dec_u32(d, &c->maxrequests))
		return false;
	if (!xdr_dec_u32(d, &n) || n > 1)
		return false;
	return n == 0 || xdr_dec_u32(d, &ird);
}

/* authsys_parms (RFC 5531 §A): stamp, machinename<255>, uid, gid, gids<16>. */
static bool dec_authsys(struct xdr_dec *d, struct rpc_cred *c)
{
	const uint8_t *p;
	uint32_t stamp, len, ngids;

	memset(c, 0, sizeof(*c));
	c->flavor = RPC_AUTH_SYS;
	if (!xdr_dec_u32(d, &stamp) || !xdr_dec_opaque(d, 255, &p, &len) || !xdr_dec_u32(d, &c->uid) ||
	    !xdr_dec_u32(d, &c->gid) || !xdr_dec_u32(d, &ngids) || ngids > 16 ||
	    ngids > RPC_AUTH_SYS_MAX_GIDS)
		return false;
	for (uint32_t i = 0; i < ngids; i++)
		if (!xdr_dec_u32(d, &c->groups[i]))
			return false;
	c->ngroups = ngids;
	return true;
}

/* callback_sec_parms4 (RFC 8881 §18.36.1): AUTH_NONE, AUTH_SYS, RPCSEC_GSS.
 * The first AUTH_NONE or AUTH_SYS one becomes *sec (RPCSEC_GSS: skipped,
 * rnfsd cannot send it). */
static bool dec_cb_sec(struct xdr_dec *d, struct nfs4_cb_sec *sec)
{
	const uint8_t *p;
	struct rpc_cred cred;
	uint32_t flavor, v, len;

	if (!xdr_dec_u32(d, &flavor))
		return false;
	switch (flavor) {
	case RPC_AUTH_NONE:
		memset(&cred, 0, sizeof(cred));
		break;
	case RPC_AUTH_SYS:
		if (!dec_authsys(d, &cred))
			return false;
		break;
	case 6: /* gss_cb_handles4: service, two handles */
		return xdr_dec_u32(d, &v) && xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &p, &len) &&
		       xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &p, &len);
	default:
		return false;
	}
	if (!sec->usable) {
		sec->usable = true;
		sec->cred = cred;
	}
	return true;
}

/* callback_sec_parms4<>, bounded. */
static bool dec_cb_sec_list(struct xdr_dec *d, struct nfs4_cb_sec *sec)
{
	uint32_t n;

	memset(sec, 0, sizeof(*sec));
	if (!xdr_dec_u32(d, &n) || n > NFS4_CB_SEC_MAX)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!dec_cb_sec(d, sec))
			return false;
	return true;
}

/* RFC 8881 §18.36.1 CREATE_SESSION4args. */
bool nfs4_dec_create_session(struct xdr_dec *d, struct nfs4_create_session_args *a)
{
	if (!xdr_dec_u64(d, &a->clientid) || !xdr_dec_u32(d, &a->sequence) || !xdr_dec_u32(d, &a->flags) ||
	    !dec_chan_attrs(d, &a->fore) || !dec_chan_attrs(d, &a->back) || !xdr_dec_u32(d, &a->cb_program))
		return false;
	return dec_cb_sec_list(d, &a->sec);
}

/* RFC 8881 §18.33.1 BACKCHANNEL_CTL4args. */
bool nfs4_dec_backchannel_ctl(struct xdr_dec *d, struct nfs4_backchannel_ctl_args *a)
{
	return xdr_dec_u32(d, &a->cb_program) && dec_cb_sec_list(d, &a->sec);
}

/* RFC 8881 §18.34.1 BIND_CONN_TO_SESSION4args. */
bool nfs4_dec_bind_conn(struct xdr_dec *d, struct nfs4_bind_conn_args *a)
{
	return xdr_dec_fixed(d, a->sessionid, NFS4_SESSIONID_SIZE) && xdr_dec_u32(d, &a->dir) &&
	       xdr_dec_bool(d, &a->rdma_mode);
}

/* RFC 8881 §18.34.2 BIND_CONN_TO_SESSION4resok. */
void nfs4_enc_bind_conn(struct xdr_enc *e, const uint8_t sid[NFS4_SESSIONID_SIZE], uint32_t dir)
{
	xdr_enc_fixed(e, sid, NFS4_SESSIONID_SIZE);
	xdr_enc_u32(e, dir);
	xdr_enc_bool(e, false); /* bctsr_use_conn_in_rdma_mode: not offered */
}

/* RFC 8881 §18.46.1 SEQUENCE4args. */
bool nfs4_dec_sequence(struct xdr_dec *d, struct nfs4_sequence_args *a)
{
	return xdr_dec_fixed(d, a->sessionid, NFS4_SESSIONID_SIZE) && xdr_dec_u32(d, &a->sequenceid) &&
	       xdr_dec_u32(d, &a->slotid) && xdr_dec_u32(d, &a->highest_slotid) && xdr_dec_bool(d, &a->cachethis);
}

/* RFC 8881 §18.37.1 DESTROY_SESSION4args. */
bool nfs4_dec_sessionid(struct xdr_dec *d, struct nfs4_sessionid_args *a)
{
	return xdr_dec_fixed(d, a->sessionid, NFS4_SESSIONID_SIZE);
}

/* RFC 8881 §18.50.1 DESTROY_CLIENTID4args. */
bool nfs4_dec_clientid(struct xdr_dec *d, struct nfs4_clientid_args *a)
{
	return xdr_dec_u64(d, &a->clientid);
}

/* RFC 8881 §18.51.1 RECLAIM_COMPLETE4args. */
bool nfs4_dec_reclaim_complete(struct xdr_dec *d, struct nfs4_reclaim_complete_args *a)
{
	return xdr_dec_bool(d, &a->one_fs);
}

/* RFC 8881 §18.35.2 EXCHANGE_ID4resok. */
void nfs4_enc_exchange_id(struct xdr_enc *e, const struct nfs4_exid_res *r, const char *owner_major,
			  const char *scope)
{
	xdr_enc_u64(e, r->clientid);
	xdr_enc_u32(e, r->sequenceid);
	xdr_enc_u32(e, r->flags);
	xdr_enc_u32(e, SP4_NONE);
	xdr_enc_u64(e, 0); /* so_minor_id */
	xdr_enc_opaque(e, owner_major, (uint32_t)strlen(owner_major));
	xdr_enc_opaque(e, scope, (uint32_t)strlen(scope));
	xdr_enc_u32(e, 0); /* eir_server_impl_id<1>: none */
}

static void enc_chan_attrs(struct xdr_enc *e, const struct nfs4_chan_attrs *c)
{
	xdr_enc_u32(e, c->headerpadsize);
	xdr_enc_u32(e, c->maxrequestsize);
	xdr_enc_u32(e, c->maxresponsesize);
	xdr_enc_u32(e, c->maxresponsesize_cached);
	xdr_enc_u32(e, c->maxoperations);
	xdr_enc_u32(e, c->maxrequests);
	xdr_enc_u32(e, 0); /* rdma_ird<1>: none */
}

/* RFC 8881 §18.36.2 CREATE_SESSION4resok. */
void nfs4_enc_create_session(struct xdr_enc *e, const uint8_t sid[NFS4_SESSIONID_SIZE], uint32_t sequence,
			     uint32_t flags, const struct nfs4_chan_attrs *fore, const struct nfs4_chan_attrs *back)
{
	xdr_enc_fixed(e, sid, NFS4_SESSIONID_SIZE);
	xdr_enc_u32(e, sequence);
	xdr_enc_u32(e, flags);
	enc_chan_attrs(e, fore);
	enc_chan_attrs(e, back);
}

/* RFC 8881 §18.46.2 SEQUENCE4resok. */
void nfs4_enc_sequence(struct xdr_enc *e, const struct nfs4_sequence_args *a, uint32_t highest,
		       uint32_t target, uint32_t status_flags)
{
	xdr_enc_fixed(e, a->sessionid, NFS4_SESSIONID_SIZE);
	xdr_enc_u32(e, a->sequenceid);
	xdr_enc_u32(e, a->slotid);
	xdr_enc_u32(e, highest);
	xdr_enc_u32(e, target);
	xdr_enc_u32(e, status_flags);
}
