/*
 * nfs4_xdr_state.c - XDR of the NFSv4 state and I/O operations (see
 * nfs4_xdr_state.h). Every count is checked against its limit before use;
 * callback addresses are copied (bounded) because the client record keeps
 * them; WRITE data is left where it arrived (rpc_dec_ddp()).
 */
#include <string.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"
#include "rpc/rpc.h"

bool nfs4_dec_stateid(struct xdr_dec *d, struct nfs4_stateid *s)
{
	return xdr_dec_u32(d, &s->seqid) && xdr_dec_fixed(d, s->other, NFS4_OTHER_SIZE);
}

void nfs4_enc_stateid(struct xdr_enc *e, const struct nfs4_stateid *s)
{
	xdr_enc_u32(e, s->seqid);
	xdr_enc_fixed(e, s->other, NFS4_OTHER_SIZE);
}

/* A string<> of the callback address copied into out (cap bytes); too long: length 0. */
static bool dec_cb_string(struct xdr_dec *d, char *out, uint32_t cap, uint32_t *len)
{
	const uint8_t *p;
	uint32_t n;

	if (!xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &p, &n))
		return false;
	*len = n <= cap ? n : 0;
	memcpy(out, p, *len);
	return true;
}

/* RFC 7530 §16.33.1 SETCLIENTID4args: client, callback {program, netaddr4}, callback_ident. */
bool nfs4_dec_setclientid(struct xdr_dec *d, struct nfs4_setclientid_args *a)
{
	struct nfs4_cb_info *cb = &a->cb;

	if (!xdr_dec_fixed(d, a->verifier, 8) || !xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &a->id, &a->id_len) ||
	    !xdr_dec_u32(d, &cb->program) || !dec_cb_string(d, cb->netid, NFS4_CB_NETID_MAX, &cb->netid_len) ||
	    !dec_cb_string(d, cb->addr, NFS4_CB_ADDR_MAX, &cb->addr_len) || !xdr_dec_u32(d, &cb->ident))
		return false;
	if (cb->netid_len == 0 || cb->addr_len == 0)
		cb->netid_len = cb->addr_len = 0; /* no usable callback path */
	return true;
}

bool nfs4_dec_setclientid_confirm(struct xdr_dec *d, struct nfs4_setclientid_confirm_args *a)
{
	return xdr_dec_u64(d, &a->clientid) && xdr_dec_fixed(d, a->confirm, 8);
}

/* createhow4 (RFC 8881 §18.16.1). */
static bool dec_createhow(struct xdr_dec *d, struct nfs4_open_args *a)
{
	if (!xdr_dec_u32(d, &a->createmode))
		return false;
	switch (a->createmode) {
	case UNCHECKED4:
	case GUARDED4:
		a->sattr_status = nfs4_sattr_dec(d, &a->attrs);
		return a->sattr_status != NFS4ERR_BADXDR;
	case EXCLUSIVE4:
		return xdr_dec_fixed(d, a->verf, 8);
	case EXCLUSIVE4_1:
		if (!xdr_dec_fixed(d, a->verf, 8))
			return false;
		a->sattr_status = nfs4_sattr_dec(d, &a->attrs);
		return a->sattr_status != NFS4ERR_BADXDR;
	default:
		return false;
	}
}

/* open_claim4 (RFC 8881 §18.16.1). */
static bool dec_claim(struct xdr_dec *d, struct nfs4_open_args *a)
{
	uint32_t deleg_type;

	if (!xdr_dec_u32(d, &a->claim))
		return false;
	switch (a->claim) {
	case CLAIM_NULL:
	case CLAIM_DELEGATE_PREV:
		return nfs4_dec_name(d, &a->name);
	case CLAIM_PREVIOUS:
		return xdr_dec_u32(d, &deleg_type);
	case CLAIM_DELEGATE_CUR:
		return nfs4_dec_stateid(d, &a->deleg_sid) && nfs4_dec_name(d, &a->name);
	case CLAIM_FH:
	case CLAIM_DELEG_PREV_FH:
		return true;
	case CLAIM_DELEG_CUR_FH:
		return nfs4_dec_stateid(d, &a->deleg_sid);
	default:
		return false;
	}
}

/* OPEN4args (RFC 7530 §16.16.1, RFC 8881 §18.16.1). */
bool nfs4_dec_open(struct xdr_dec *d, struct nfs4_open_args *a)
{
	if (!xdr_dec_u32(d, &a->seqid) || !xdr_dec_u32(d, &a->share_access) || !xdr_dec_u32(d, &a->share_deny) ||
	    !xdr_dec_u64(d, &a->clientid) || !xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &a->owner, &a->owner_len) ||
	    !xdr_dec_u32(d, &a->opentype))
		return false;
	if (a->opentype == OPEN4_CREATE) {
		if (!dec_createhow(d, a))
			return false;
	} else if (a->opentype != OPEN4_NOCREATE) {
		return false;
	}
	return dec_claim(d, a);
}

/* OPEN_CONFIRM4args: stateid, seqid (RFC 7530 §16.20.1). */
bool nfs4_dec_open_confirm(struct xdr_dec *d, struct nfs4_sid_seqid_args *a)
{
	return nfs4_dec_stateid(d, &a->sid) && xdr_dec_u32(d, &a->seqid);
}

/* CLOSE4args: seqid, stateid (RFC 8881 §18.2.1). */
bool nfs4_dec_close(struct xdr_dec *d, struct nfs4_sid_seqid_args *a)
{
	return xdr_dec_u32(d, &a->seqid) && nfs4_dec_stateid(d, &a->sid);
}

/* OPEN_DOWNGRADE4args: stateid, seqid, share_access, share_deny (RFC 8881 §18.18.1). */
bool nfs4_dec_open_downgrade(struct xdr_dec *d, struct nfs4_sid_seqid_args *a)
{
	return nfs4_dec_stateid(d, &a->sid) && xdr_dec_u32(d, &a->seqid) && xdr_dec_u32(d, &a->access) &&
	       xdr_dec_u32(d, &a->deny);
}

bool nfs4_dec_read(struct xdr_dec *d, struct nfs4_read_args *a)
{
	return nfs4_dec_stateid(d, &a->sid) && xdr_dec_u64(d, &a->offset) && xdr_dec_u32(d, &a->count);
}

/* WRITE4args (RFC 8881 §18.32.1); RFC 8267 §4.1: data may come in a Read chunk. */
bool nfs4_dec_write(struct xdr_dec *d, struct rpc_call *c, struct nfs4_write_args *a)
{
	if (!nfs4_dec_stateid(d, &a->sid) || !xdr_dec_u64(d, &a->offset) || !xdr_dec_u32(d, &a->stable) ||
	    a->stable > FILE_SYNC4 || !xdr_dec_u32(d, &a->len) || a->len > NFS4_MAX_IO)
		return false;
	if (c && d == &c->args)
		return rpc_dec_ddp(c, a->len, &a->data);
	return (a->data = xdr_dec_inline(d, a->len)) != NULL;
}

bool nfs4_dec_commit(struct xdr_dec *d, struct nfs4_commit_args *a)
{
	return xdr_dec_u64(d, &a->offset) && xdr_dec_u32(d, &a->count);
}

/* TEST_STATEID4args: stateid4 ts_stateids<> (RFC 8881 §18.48.1), bounded. */
bool nfs4_dec_test_stateid(struct xdr_dec *d, struct nfs4_test_stateid_args *a)
{
	if (!xdr_dec_u32(d, &a->n) || a->n > NFS4_TEST_STATEID_MAX)
		return false;
	for (uint32_t i = 0; i < a->n; i++)
		if (!nfs4_dec_stateid(d, &a->sids[i]))
			return false;
	return true;
}

bool nfs4_dec_free_stateid(struct xdr_dec *d, struct nfs4_stateid_args *a)
{
	return nfs4_dec_stateid(d, &a->sid);
}

static bool dec_lock_owner4(struct xdr_dec *d, struct nfs4_lock_owner4 *o)
{
	return xdr_dec_u64(d, &o->clientid) && xdr_dec_opaque(d, NFS4_OPAQUE_LIMIT, &o->owner, &o->owner_len);
}

static bool locktype_ok(uint32_t t)
{
	return t >= READ_LT && t <= WRITEW_LT;
}

/* LOCK4args: locker4 is open_to_lock_owner4 or exist_lock_owner4 (RFC 8881 §18.10.1). */
bool nfs4_dec_lock(struct xdr_dec *d, struct nfs4_lock_args *a)
{
	if (!xdr_dec_u32(d, &a->locktype) || !locktype_ok(a->locktype) || !xdr_dec_bool(d, &a->reclaim) ||
	    !xdr_dec_u64(d, &a->offset) || !xdr_dec_u64(d, &a->length) || !xdr_dec_bool(d, &a->new_lock_owner))
		return false;
	if (a->new_lock_owner)
		return xdr_dec_u32(d, &a->open_seqid) && nfs4_dec_stateid(d, &a->sid) && xdr_dec_u32(d, &a->lock_seqid) &&
		       dec_lock_owner4(d, &a->owner);
	return nfs4_dec_stateid(d, &a->sid) && xdr_dec_u32(d, &a->lock_seqid);
}

bool nfs4_dec_lockt(struct xdr_dec *d, struct nfs4_lockt_args *a)
{
	return xdr_dec_u32(d, &a->locktype) && locktype_ok(a->locktype) && xdr_dec_u64(d, &a->offset) &&
	       xdr_dec_u64(d, &a->length) && dec_lock_owner4(d, &a->owner);
}

bool nfs4_dec_locku(struct xdr_dec *d, struct nfs4_locku_args *a)
{
	return xdr_dec_u32(d, &a->locktype) && locktype_ok(a->locktype) && xdr_dec_u32(d, &a->seqid) &&
	       nfs4_dec_stateid(d, &a->sid) && xdr_dec_u64(d, &a->offset) && xdr_dec_u64(d, &a->length);
}

bool nfs4_dec_lock_owner(struct xdr_dec *d, struct nfs4_lock_owner_args *a)
{
	return dec_lock_owner4(d, &a->owner);
}

/* GET_DIR_DELEGATION4args (RFC 8881 §18.39.1): bool, bitmap4, two attr_notice4 (nfstime4: int64
 * seconds, uint32 nanoseconds), two bitmap4. */
bool nfs4_dec_get_dir_delegation(struct xdr_dec *d, struct nfs4_gdd_args *a)
{
	uint64_t sec;
	uint32_t nsec;

	return xdr_dec_bool(d, &a->signal_avail) && nfs4_dec_bitmap(d, &a->notify) && xdr_dec_u64(d, &sec) &&
	       xdr_dec_u32(d, &nsec) && xdr_dec_u64(d, &sec) && xdr_dec_u32(d, &nsec) &&
	       nfs4_dec_bitmap(d, &a->child_attrs) && nfs4_dec_bitmap(d, &a->dir_attrs);
}

/* GET_DIR_DELEGATION4res_non_fatal (RFC 8881 §18.39.2): GDD4_OK's GET_DIR_DELEGATION4resok (cookie
 * verifier, stateid, the notifications granted, no child attributes, the directory attributes a
 * NOTIFY4_CHANGE_DIR_ATTRS tells), GDD4_UNAVAIL's
 * gddrnf_will_signal_deleg_avail (false: rnfsd never sends CB_RECALLABLE_OBJ_AVAIL). */
void nfs4_enc_get_dir_delegation(struct xdr_enc *e, const struct nfs4_gdd_res *r)
{
	static const struct nfs4_bitmap none;

	xdr_enc_u32(e, r->nf_status);
	switch (r->nf_status) {
	case GDD4_OK:
		xdr_enc_fixed(e, r->cookieverf, NFS4_VERIFIER_SIZE);
		nfs4_enc_stateid(e, &r->sid);
		nfs4_enc_bitmap(e, &r->notify);
		nfs4_enc_bitmap(e, &none); /* gddr_child_attributes */
		nfs4_enc_bitmap(e, &r->dir_attrs); /* gddr_dir_attributes */
		break;
	default:
		xdr_enc_bool(e, false);
		break;
	}
}
