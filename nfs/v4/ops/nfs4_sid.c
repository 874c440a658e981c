/*
 * nfs4_sid.c - the stateid helpers every stateful NFSv4 operation shares
 * (READ, WRITE, OPEN, LOCK, CLOSE, DELEGRETURN, the NFSv4.2 data operations):
 * the COMPOUND's current and saved stateid (RFC 8881 §16.2.3.1.2), resolving
 * a stateid argument, whose client a stateid must be (RFC 8881 §8.2.2), which
 * client an operation acts for (with lease renewal and expiry on the way,
 * RFC 7530 §9.6, RFC 8881 §8.3), the regular-file check and the 4.0 seqid
 * verdict (RFC 7530 §9.1.8). They read the server's tables through the
 * COMPOUND's service state (nfs4_srv(x)); the operations themselves are in
 * nfs4_proc_*.c.
 */
#include "nfs/v4/nfs4.h"

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
		nfs4_renew(&nfs4_srv(x)->ctab, nfs4_stateid_clientid(sid), nfs4_now());
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
	return nfs4_client_has_sessions(&nfs4_srv(x)->ctab, clientid) ? 0 : clientid;
}

/* The client an operation acts for: 4.0 names it, 4.1 has it from SEQUENCE. */
uint32_t nfs4_op_client(struct nfs4_ctx *x, uint64_t clientid40, uint64_t *clientid)
{
	struct nfs4_svc *s = x->priv;

	/* RFC 8881 §8.3: other clients' expired leases release their opens before this one's state changes. */
	nfs4_server_tick(nfs4_srv(x));
	if (x->minorversion >= 1) {
		*clientid = s->clientid;
		return s->seq_new ? NFS4_OK : NFS4ERR_OP_NOT_IN_SESSION;
	}
	*clientid = clientid40;
	return nfs4_renew(&nfs4_srv(x)->ctab, clientid40, nfs4_now());
}

/* A 4.0 owner's seqid check as the operation goes on: *done (answer now), *replay (with rp's body). */
uint32_t nfs4_seqid_verdict(enum nfs4_seqid_action act, const struct nfs4_seqid_replay *rp, bool *replay,
			    uint32_t err, bool *done)
{
	/* RFC 7530 §9.1.8: a retransmission gets the last reply, nothing runs. */
	*done = act != NFS4_SEQID_NEW;
	*replay = act == NFS4_SEQID_REPLAY;
	return act == NFS4_SEQID_REPLAY ? rp->status : act == NFS4_SEQID_ERROR ? err : NFS4_OK;
}
