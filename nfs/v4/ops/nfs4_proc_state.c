/*
 * nfs4_proc_state.c - the NFSv4 state operations on top of the client
 * records (nfs4_clients.c) and the open state table (nfs4_stateid.c):
 * SETCLIENTID, SETCLIENTID_CONFIRM, RENEW (RFC 7530 §16.33, §16.34,
 * §16.29), OPEN_CONFIRM (§16.20), OPEN_DOWNGRADE (RFC 8881 §18.18), CLOSE
 * (§18.2), TEST_STATEID (§18.48), FREE_STATEID (§18.38), and the stateid
 * helpers READ/WRITE/OPEN share (the COMPOUND's current stateid, RFC 8881
 * §16.2.3.1.2; 4.0 lease renewal by any stateful operation, RFC 7530 §9.6).
 * OPEN itself is in nfs4_proc_open.c.
 *
 * NFSv4.0 seqid-mutating operations (OPEN, OPEN_CONFIRM, OPEN_DOWNGRADE,
 * CLOSE) check the owner's seqid before running and replay the owner's last
 * reply for a retransmission (RFC 7530 §9.1.8): the execute step returns
 * the cached status and the encode step writes the cached body.
 */
#include <string.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"

/* ---- helpers ---- */

void nfs4_cur_stateid_set(struct nfs4_ctx *x, const struct nfs4_stateid *sid)
{
	struct nfs4_svc *s = x->priv;

	s->cur_sid = *sid;
	s->cur_sid_set = true;
}

void nfs4_cur_stateid_clear(struct nfs4_ctx *x)
{
	struct nfs4_svc *s = x->priv;

	if (s)
		s->cur_sid_set = false;
}

void nfs4_cur_stateid_save(struct nfs4_ctx *x)
{
	struct nfs4_svc *s = x->priv;

	if (s) {
		s->saved_sid_set = s->cur_sid_set;
		s->saved_sid = s->cur_sid;
	}
}

void nfs4_cur_stateid_restore(struct nfs4_ctx *x)
{
	struct nfs4_svc *s = x->priv;

	if (s) {
		s->cur_sid_set = s->saved_sid_set;
		s->cur_sid = s->saved_sid;
	}
}

uint32_t nfs4_stateid_resolve(struct nfs4_ctx *x, const struct nfs4_stateid *in, struct nfs4_stateid *out)
{
	struct nfs4_svc *s = x->priv;

	*out = *in;
	if (nfs4_stateid_kind(in, x->minorversion) != NFS4_SID_CURRENT)
		return NFS4_OK;
	/* RFC 8881 §16.2.3.1.2: the current stateid, if an earlier operation set one. */
	if (!s->cur_sid_set)
		return NFS4ERR_BAD_STATEID;
	*out = s->cur_sid;
	return NFS4_OK;
}

/* RFC 8881 §18.16.3, §18.22.3, §18.32.3, §18.3.3: only regular files are opened, read, written. */
uint32_t nfs4_regular_check(const struct nfs4_ctx *x, const struct nfs4_obj *ob)
{
	if (ob->kind == NFS4_OBJ_PSEUDO || ob->attr.type == BE_DIR)
		return NFS4ERR_ISDIR;
	if (ob->attr.type == BE_REG)
		return NFS4_OK;
	if (ob->attr.type == BE_LNK)
		return NFS4ERR_SYMLINK;
	return x->minorversion >= 1 ? NFS4ERR_WRONG_TYPE : NFS4ERR_INVAL;
}

/* RFC 7530 §9.6: a 4.0 stateful operation renews its client's lease. */
void nfs4_stateid_renew(struct nfs4_ctx *x, const struct nfs4_stateid *sid)
{
	if (x->minorversion == 0 && nfs4_stateid_kind(sid, 0) == NFS4_SID_ORDINARY)
		nfs4_renew(nfs4_session_state(), nfs4_stateid_clientid(sid), nfs4_session_now());
}

/* RFC 8881 §8.2.2: a 4.1+ stateid must be the session's client's (every
 * stateful operation comes after SEQUENCE, RFC 8881 §2.10.6); 4.0 has no
 * session, so an operation that names no owner goes by the stateid's client,
 * as knfsd's set_client() does (OPEN and LOCK's new lock owner name theirs). */
uint64_t nfs4_sid_client(const struct nfs4_ctx *x, const struct nfs4_stateid *sid)
{
	const struct nfs4_svc *s = x->priv;

	uint64_t clientid;

	if (x->minorversion >= 1)
		return s ? s->clientid : 0;
	/* A 4.1+ client's stateids belong to its sessions (RFC 8881 §8.2.2): a 4.0 COMPOUND naming one
	 * acts for no client, so the lookups answer BAD_STATEID (knfsd: lookup_clientid() finds a
	 * client only of the COMPOUND's kind). */
	clientid = nfs4_stateid_clientid(sid);
	return nfs4_client_has_sessions(nfs4_session_state(), clientid) ? 0 : clientid;
}

/* The client an operation acts for: 4.0 names it, 4.1 has it from SEQUENCE. */
uint32_t nfs4_op_client(struct nfs4_ctx *x, uint64_t clientid40, uint64_t *clientid)
{
	struct nfs4_svc *s = x->priv;

	/* RFC 8881 §8.3: other clients' expired leases release their opens before this one's state changes. */
	nfs4_session_tick();
	if (x->minorversion >= 1) {
		*clientid = s->clientid;
		return s->seq_new ? NFS4_OK : NFS4ERR_OP_NOT_IN_SESSION;
	}
	*clientid = clientid40;
	return nfs4_renew(nfs4_session_state(), clientid40, nfs4_session_now());
}

/* ---- SETCLIENTID, SETCLIENTID_CONFIRM, RENEW ---- */

uint32_t nfs4_setclientid_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_setclientid_args *a = args;
	struct nfs4_setclientid_res *r = res;

	struct nfs4_who who;

	nfs4_session_tick();
	nfs4_who(x, &who);
	return nfs4_setclientid_who(nfs4_session_state(), a->verifier, a->id, a->id_len, &a->cb, &who,
				    nfs4_session_now(), &r->clientid, r->confirm, &r->inuse);
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
	uint32_t status = nfs4_setclientid_confirm(nfs4_session_state(), a->clientid, a->confirm, nfs4_session_now());

	if (status == NFS4_OK)
		nfs4_cb_confirmed40(a->clientid); /* RFC 7530 §16.34.5: the callback path is probed */
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

uint32_t nfs4_seqid_verdict(enum nfs4_seqid_action act, const struct nfs4_seqid_replay *rp, bool *replay,
			    uint32_t err, bool *done)
{
	/* RFC 7530 §9.1.8: a retransmission gets the last reply, nothing runs. */
	*done = act != NFS4_SEQID_NEW;
	*replay = act == NFS4_SEQID_REPLAY;
	return act == NFS4_SEQID_REPLAY ? rp->status : act == NFS4_SEQID_ERROR ? err : NFS4_OK;
}

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
	act = nfs4_stab_seqid_check_sid(nfs4_session_stab(), &a->sid, a->seqid, &r->rp, &status);
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
		status = nfs4_stab_confirm(nfs4_session_stab(), &sid, sq, &r->sid);
	else if (which == OP_OPEN_DOWNGRADE)
		status = nfs4_stab_downgrade(nfs4_session_stab(), &sid, sq, a->access & ~OPEN4_SHARE_ACCESS_WANT_DELEG_MASK,
					     a->deny, &r->sid);
	else
		status = nfs4_stab_close(nfs4_session_stab(), &sid, sq, &r->sid);
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
			       : nfs4_stab_test(nfs4_session_stab(), s->clientid, &a->sids[i]);
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
	return status != NFS4_OK ? status : nfs4_stab_free(nfs4_session_stab(), s->clientid, &sid);
}
