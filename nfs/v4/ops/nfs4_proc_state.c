/*
 * nfs4_proc_state.c - the NFSv4 state operations on top of the client
 * records (nfs4_clients.c) and the open state table (nfs4_stateid.c):
 * SETCLIENTID, SETCLIENTID_CONFIRM, RENEW (RFC 7530 §16.33, §16.34,
 * §16.29), OPEN_CONFIRM (§16.20), OPEN_DOWNGRADE (RFC 8881 §18.18), CLOSE
 * (§18.2), TEST_STATEID (§18.48), FREE_STATEID (§18.38). OPEN itself is in
 * nfs4_proc_open.c, the stateid helpers every operation shares in nfs4_sid.c.
 *
 * NFSv4.0 seqid-mutating operations (OPEN, OPEN_CONFIRM, OPEN_DOWNGRADE,
 * CLOSE) check the owner's seqid before running and replay the owner's last
 * reply for a retransmission (RFC 7530 §9.1.8): the execute step returns
 * the cached status and the encode step writes the cached body.
 */
#include <string.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"

/* ---- SETCLIENTID, SETCLIENTID_CONFIRM, RENEW ---- */

uint32_t nfs4_setclientid_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_setclientid_args *a = args;
	struct nfs4_setclientid_res *r = res;

	struct nfs4_who who;

	nfs4_server_tick(nfs4_srv(x));
	nfs4_who(x, &who);
	return nfs4_setclientid_who(&nfs4_srv(x)->ctab, a->verifier, a->id, a->id_len, &a->cb, &who,
				    nfs4_now(), &r->clientid, r->confirm, &r->inuse);
}

/* RFC 7530 §16.33.2: SETCLIENTID4res carries resok4 on NFS4_OK, client_using (a clientaddr4: r_netid,
 * r_addr) on NFS4ERR_CLID_INUSE, nothing otherwise. */
void nfs4_setclientid_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_setclientid_res *r = res;

	(void)x;
	if (status == NFS4ERR_CLID_INUSE) {
		xdr_enc_opaque(e, r->inuse.netid, r->inuse.netid_len);
		xdr_enc_opaque(e, r->inuse.addr, r->inuse.addr_len);
	} else if (status == NFS4_OK) {
		xdr_enc_u64(e, r->clientid);
		xdr_enc_fixed(e, r->confirm, 8);
	}
}

uint32_t nfs4_setclientid_confirm_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_setclientid_confirm_args *a = args;

	(void)x, (void)res;
	/* RFC 7530 §9.6.3.4: a confirmed client is recorded on stable storage before the reply (the
	 * state module's stable hook, nfs4_client_stable(); RESOURCE when it cannot be). */
	uint32_t status = nfs4_setclientid_confirm_by(&nfs4_srv(x)->ctab, a->clientid, a->confirm,
						      nfs4_principal(x), nfs4_now());

	if (status == NFS4_OK)
		nfs4_cb_confirmed40(x, a->clientid); /* RFC 7530 §16.34.5: the callback path is probed */
	return status;
}

uint32_t nfs4_renew_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_clientid_args *a = args;
	uint64_t id;

	(void)res;
	return nfs4_op_client(x, a->clientid, &id);
}

/* ---- OPEN_CONFIRM, OPEN_DOWNGRADE, CLOSE ---- */

/* RFC 7530 §9.1.7: the 4.0 owner's seqid first (replay, BAD_SEQID or go on). */
static uint32_t sid_seqid_begin(struct nfs4_ctx *x, const struct nfs4_sid_seqid_args *a, struct nfs4_sid_op_res *r,
				bool *done)
{
	enum nfs4_seqid_action act;
	uint32_t status = NFS4_OK;

	*done = false;
	if (x->minorversion != 0)
		return NFS4_OK;
	nfs4_stateid_renew(x, &a->sid);
	act = nfs4_stab_seqid_check_sid(&nfs4_srv(x)->stab, &a->sid, a->seqid, &r->rp, &status);
	return nfs4_seqid_verdict(act, &r->rp, &r->replay, status, done);
}

static uint32_t sid_op_exec(struct nfs4_ctx *x, void *args, void *res, int which)
{
	const struct nfs4_sid_seqid_args *a = args;
	struct nfs4_sid_op_res *r = res;
	struct nfs4_sid_seq sq = { .minor = x->minorversion, .seqid = a->seqid };
	struct nfs4_stateid sid;
	bool done;
	uint32_t status = sid_seqid_begin(x, a, r, &done);

	if (done)
		return status;
	status = nfs4_stateid_resolve(x, &a->sid, &sid);
	if (status != NFS4_OK)
		return status;
	sq.clientid = nfs4_sid_client(x, &sid);
	if (which == OP_OPEN_CONFIRM)
		status = nfs4_stab_confirm(&nfs4_srv(x)->stab, &sid, sq, &r->sid);
	else if (which == OP_OPEN_DOWNGRADE)
		status = nfs4_stab_downgrade(&nfs4_srv(x)->stab, &sid, sq, a->access & ~OPEN4_SHARE_ACCESS_WANT_DELEG_MASK,
					     a->deny, &r->sid);
	else
		status = nfs4_stab_close(&nfs4_srv(x)->stab, &sid, sq, &r->sid);
	/* RFC 8881 §18.43.3: the client's last CLOSE of the file ends its return-on-close layouts */
	if (status == NFS4_OK && which == OP_CLOSE && x->minorversion >= 1 && x->cur.set &&
	    !nfs4_stab_client_file_open(&nfs4_srv(x)->stab, x->cur.fh.data, x->cur.fh.len, sq.clientid))
		nfs4_pnfs_closed(sq.clientid, x->cur.fh.data, x->cur.fh.len);
	if (status == NFS4_OK && which != OP_CLOSE)
		nfs4_cur_stateid_set(x, &r->sid);
	/* RFC 8881 §18.2.4: 4.1 clients get the invalid special stateid back from CLOSE. */
	if (status == NFS4_OK && which == OP_CLOSE && x->minorversion >= 1) {
		memset(&r->sid, 0, sizeof(r->sid));
		r->sid.seqid = UINT32_MAX;
	}
	return status;
}

uint32_t nfs4_open_confirm_exec(struct nfs4_ctx *x, void *args, void *res)
{
	return sid_op_exec(x, args, res, OP_OPEN_CONFIRM);
}

uint32_t nfs4_open_downgrade_exec(struct nfs4_ctx *x, void *args, void *res)
{
	return sid_op_exec(x, args, res, OP_OPEN_DOWNGRADE);
}

uint32_t nfs4_close_exec(struct nfs4_ctx *x, void *args, void *res)
{
	return sid_op_exec(x, args, res, OP_CLOSE);
}

/* The stateid (OK), or a 4.0 replay's cached body. */
void nfs4_sid_op_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_sid_op_res *r = res;

	(void)x;
	if (r->replay)
		xdr_enc_fixed(e, r->rp.body, r->rp.len);
	else if (status == NFS4_OK)
		nfs4_enc_stateid(e, &r->sid);
}

/* ---- TEST_STATEID, FREE_STATEID (4.1) ---- */

uint32_t nfs4_test_stateid_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_test_stateid_args *a = args;
	struct nfs4_test_stateid_res *r = res;
	struct nfs4_svc *s = x->priv;

	/* RFC 8881 §18.48.3: each stateid is tested for the session's client; special ones are BAD_STATEID. */
	r->n = a->n;
	for (uint32_t i = 0; i < a->n; i++)
		r->status[i] = nfs4_dtab_is_deleg(&a->sids[i]) ? nfs4_deleg_test(s->clientid, &a->sids[i])
			       : nfs4_stab_test(&nfs4_srv(x)->stab, s->clientid, &a->sids[i]);
	return NFS4_OK;
}

void nfs4_test_stateid_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_test_stateid_res *r = res;

	(void)x, (void)status;
	xdr_enc_u32(e, r->n);
	for (uint32_t i = 0; i < r->n; i++)
		xdr_enc_u32(e, r->status[i]);
}

uint32_t nfs4_free_stateid_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_stateid_args *a = args;
	struct nfs4_svc *s = x->priv;
	struct nfs4_stateid sid;
	uint32_t status = nfs4_stateid_resolve(x, &a->sid, &sid);

	(void)res;
	if (status == NFS4_OK && nfs4_dtab_is_deleg(&sid))
		return nfs4_deleg_free(s->clientid, &sid); /* RFC 8881 §18.38.3: a revoked delegation */
	if (status == NFS4_OK)
		status = nfs4_lock_free_check(x, &sid);
	return status != NFS4_OK ? status : nfs4_stab_free(&nfs4_srv(x)->stab, s->clientid, &sid);
}
