/*
 * nlm4_xdr.c - decoders and encoders of the NLM v4 arguments and results
 * (RFC 1813 appendix II; X/Open XNFS chapters 10 and 14) and of NSM's
 * status notification (XNFS chapter 11). Pure; see nlm4_xdr.h.
 */
#include <string.h>

#include "nlm/nlm4_xdr.h"

static bool dec_netobj(struct xdr_dec *d, uint32_t max, struct nlm4_netobj *o)
{
	return xdr_dec_opaque(d, max, &o->p, &o->len);
}

/* A string<max> may not hold a NUL: it would cut the name short where it is used. */
static bool dec_string(struct xdr_dec *d, uint32_t max, struct nlm4_netobj *o)
{
	return dec_netobj(d, max, o) && !memchr(o->p, '\0', o->len);
}

/* RFC 1813 appendix II struct nlm4_lock */
static bool dec_lock(struct xdr_dec *d, struct nlm4_lock *l)
{
	return dec_string(d, NLM4_MAXSTRLEN, &l->caller_name) && dec_netobj(d, NLM4_MAXNETOBJ, &l->fh) &&
	       dec_netobj(d, NLM4_MAXNETOBJ, &l->oh) && xdr_dec_i32(d, &l->svid) && xdr_dec_u64(d, &l->l_offset) &&
	       xdr_dec_u64(d, &l->l_len);
}

/* nlm4_testargs: cookie, exclusive, alock */
bool nlm4_dec_testargs(struct xdr_dec *d, struct nlm4_args *a)
{
	return dec_netobj(d, NLM4_MAXNETOBJ, &a->cookie) && xdr_dec_bool(d, &a->exclusive) && dec_lock(d, &a->alock);
}

/* nlm4_lockargs: cookie, block, exclusive, alock, reclaim, state */
bool nlm4_dec_lockargs(struct xdr_dec *d, struct nlm4_args *a)
{
	return dec_netobj(d, NLM4_MAXNETOBJ, &a->cookie) && xdr_dec_bool(d, &a->block) &&
	       xdr_dec_bool(d, &a->exclusive) && dec_lock(d, &a->alock) && xdr_dec_bool(d, &a->reclaim) &&
	       xdr_dec_i32(d, &a->state);
}

/* nlm4_cancargs: cookie, block, exclusive, alock */
bool nlm4_dec_cancargs(struct xdr_dec *d, struct nlm4_args *a)
{
	return dec_netobj(d, NLM4_MAXNETOBJ, &a->cookie) && xdr_dec_bool(d, &a->block) &&
	       xdr_dec_bool(d, &a->exclusive) && dec_lock(d, &a->alock);
}

/* nlm4_unlockargs: cookie, alock */
bool nlm4_dec_unlockargs(struct xdr_dec *d, struct nlm4_args *a)
{
	return dec_netobj(d, NLM4_MAXNETOBJ, &a->cookie) && dec_lock(d, &a->alock);
}

/* nlm4_shareargs: cookie, share {caller_name, fh, oh, mode, access}, reclaim */
bool nlm4_dec_shareargs(struct xdr_dec *d, struct nlm4_share_args *a)
{
	return dec_netobj(d, NLM4_MAXNETOBJ, &a->cookie) && dec_string(d, NLM4_MAXSTRLEN, &a->caller_name) &&
	       dec_netobj(d, NLM4_MAXNETOBJ, &a->fh) && dec_netobj(d, NLM4_MAXNETOBJ, &a->oh) &&
	       xdr_dec_u32(d, &a->mode) && a->mode <= NLM4_FSA_RW && xdr_dec_u32(d, &a->access) &&
	       a->access <= NLM4_FSA_RW && xdr_dec_bool(d, &a->reclaim);
}

/* nlm4_notify: name<MAXNAMELEN> (LM_MAXSTRLEN + 1), state */
bool nlm4_dec_notify(struct xdr_dec *d, struct nlm4_notify_args *a)
{
	return dec_string(d, NLM4_MAXSTRLEN + 1, &a->name) && xdr_dec_i32(d, &a->state);
}

/* XNFS §11 SM struct status: mon_name<SM_MAXSTRLEN>, state, opaque priv[16] */
bool nsm_dec_status(struct xdr_dec *d, struct nsm_status_args *a)
{
	return dec_string(d, NSM_MAXSTRLEN, &a->mon_name) && xdr_dec_i32(d, &a->state) &&
	       xdr_dec_fixed(d, a->priv, NSM_PRIV_SIZE);
}

/* nlm4_res: cookie, stat */
bool nlm4_dec_res(struct xdr_dec *d, struct nlm4_res *r)
{
	return dec_netobj(d, NLM4_MAXNETOBJ, &r->cookie) && xdr_dec_u32(d, &r->stat) && r->stat <= NLM4_FAILED;
}

/* nlm4_testres: cookie, nlm4_testrply (a union on stat: DENIED carries the holder) */
bool nlm4_dec_testres(struct xdr_dec *d, struct nlm4_res *r)
{
	if (!nlm4_dec_res(d, r))
		return false;
	if (r->stat != NLM4_DENIED)
		return true;
	return xdr_dec_bool(d, &r->holder.exclusive) && xdr_dec_i32(d, &r->holder.svid) &&
	       dec_netobj(d, NLM4_MAXNETOBJ, &r->holder.oh) && xdr_dec_u64(d, &r->holder.l_offset) &&
	       xdr_dec_u64(d, &r->holder.l_len);
}

void nlm4_enc_res(struct xdr_enc *e, const struct nlm4_res *r)
{
	xdr_enc_opaque(e, r->cookie.p, r->cookie.len);
	xdr_enc_u32(e, r->stat);
}

void nlm4_enc_testres(struct xdr_enc *e, const struct nlm4_res *r)
{
	nlm4_enc_res(e, r);
	if (r->stat != NLM4_DENIED)
		return;
	/* RFC 1813 appendix II nlm4_holder */
	xdr_enc_bool(e, r->holder.exclusive);
	xdr_enc_u32(e, (uint32_t)r->holder.svid);
	xdr_enc_opaque(e, r->holder.oh.p, r->holder.oh.len);
	xdr_enc_u64(e, r->holder.l_offset);
	xdr_enc_u64(e, r->holder.l_len);
}

void nlm4_enc_shareres(struct xdr_enc *e, const struct nlm4_res *r)
{
	nlm4_enc_res(e, r);
	xdr_enc_u32(e, (uint32_t)r->sequence);
}

void nlm4_enc_testargs(struct xdr_enc *e, const struct nlm4_args *a)
{
	xdr_enc_opaque(e, a->cookie.p, a->cookie.len);
	xdr_enc_bool(e, a->exclusive);
	xdr_enc_opaque(e, a->alock.caller_name.p, a->alock.caller_name.len);
	xdr_enc_opaque(e, a->alock.fh.p, a->alock.fh.len);
	xdr_enc_opaque(e, a->alock.oh.p, a->alock.oh.len);
	xdr_enc_u32(e, (uint32_t)a->alock.svid);
	xdr_enc_u64(e, a->alock.l_offset);
	xdr_enc_u64(e, a->alock.l_len);
}

void nsm_enc_mon_id(struct xdr_enc *e, const struct nsm_mon_args *a)
{
	xdr_enc_opaque(e, a->mon_name.p, a->mon_name.len);
	xdr_enc_opaque(e, a->my_name.p, a->my_name.len);
	xdr_enc_u32(e, a->my_prog);
	xdr_enc_u32(e, a->my_vers);
	xdr_enc_u32(e, a->my_proc);
}

void nsm_enc_mon(struct xdr_enc *e, const struct nsm_mon_args *a)
{
	nsm_enc_mon_id(e, a);
	xdr_enc_fixed(e, a->priv, NSM_PRIV_SIZE);
}

bool nsm_dec_mon(struct xdr_dec *d, struct nsm_mon_args *a)
{
	return dec_string(d, NSM_MAXSTRLEN, &a->mon_name) && dec_string(d, NSM_MAXSTRLEN, &a->my_name) &&
	       xdr_dec_u32(d, &a->my_prog) && xdr_dec_u32(d, &a->my_vers) && xdr_dec_u32(d, &a->my_proc) &&
	       xdr_dec_fixed(d, a->priv, NSM_PRIV_SIZE);
}

/* XNFS §11 sm_stat_res: res_stat (stat_succ, stat_fail), state */
bool nsm_dec_stat_res(struct xdr_dec *d, struct nsm_stat_res *r)
{
	return xdr_dec_u32(d, &r->res_stat) && r->res_stat <= NSM_STAT_FAIL && xdr_dec_i32(d, &r->state);
}

void rpcb_enc_getaddr(struct xdr_enc *e, uint32_t prog, uint32_t vers, const char *netid)
{
	xdr_enc_u32(e, prog);
	xdr_enc_u32(e, vers);
	xdr_enc_opaque(e, netid, (uint32_t)strlen(netid));
	xdr_enc_opaque(e, "", 0); /* r_addr */
	xdr_enc_opaque(e, "", 0); /* r_owner */
}

bool rpcb_dec_uaddr_port(struct xdr_dec *d, uint16_t *port)
{
	const uint8_t *p;
	uint32_t len, part[2] = { 0, 0 };
	unsigned dots = 0, digits = 0;

	/* RFC 5665 §5.2.3.4 universal address; an IPv6 one is at most ~60 characters */
	if (!xdr_dec_opaque(d, 128, &p, &len))
		return false;
	*port = 0;
	if (len == 0)
		return true; /* RFC 1833 §2.2.1: not registered */
	/* the last two dot-separated decimal fields are the port's high and low bytes */
	for (uint32_t i = len; i-- > 0 && dots < 2;) {
		if (p[i] == '.') {
			if (digits == 0)
				return false;
			dots++;
			digits = 0;
		} else if (p[i] >= '0' && p[i] <= '9' && digits < 3) {
			uint32_t mul = digits == 0 ? 1 : digits == 1 ? 10 : 100;

			part[dots] += (uint32_t)(p[i] - '0') * mul;
			digits++;
		} else {
			return false;
		}
	}
	if (dots < 2 || part[0] > 255 || part[1] > 255)
		return false;
	*port = (uint16_t)(part[1] << 8 | part[0]);
	return true;
}
