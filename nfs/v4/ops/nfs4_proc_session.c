/*
 * nfs4_proc_session.c - the NFSv4.1 session operations on top of the client
 * records (state/nfs4_clients.c): EXCHANGE_ID (RFC 8881 §18.35),
 * CREATE_SESSION (§18.36), DESTROY_SESSION (§18.37), SEQUENCE (§18.46),
 * DESTROY_CLIENTID (§18.50), RECLAIM_COMPLETE (§18.51), and the end of a
 * COMPOUND that took a slot (its reply goes into the slot's cache).
 *
 * The client records are the server's (nfs4_server.h), reached through the
 * COMPOUND's service state (nfs4_srv(x)). The back channel is
 * nfs4_proc_cb.c's and nfs4_cb.c's (CONN_BACK_CHAN; SEQUENCE reports a path
 * that is down); no state protection (SP4_NONE), no persistent sessions.
 */
#include <string.h>

#include "core/log.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/recovery/nfs4_recovery.h"

/* RFC 8881 §18.35.1: the eia_flags a client may set (undefined ones, and
 * the server's CONFIRMED_R, are NFS4ERR_INVAL, §18.35.3; as knfsd). */
#define EXCHGID4_FLAG_MASK_A 0x40070103u
/* RFC 8881 §18.36.1: csa_flags PERSIST, CONN_BACK_CHAN, CONN_RDMA. */
#define CREATE_SESSION4_FLAG_MASK 0x7u
/* RFC 8881 §18.36.3: a channel that cannot carry the smallest COMPOUND
 * with SEQUENCE is NFS4ERR_TOOSMALL: an RPC call header without credentials
 * (40 bytes), COMPOUND4args with an empty tag (12), SEQUENCE4args (36);
 * a reply header (24), COMPOUND4res (12), SEQUENCE4res (44). */
#define NFS4_MIN_REQUEST (40u + 12u + 36u)
#define NFS4_MIN_RESPONSE (24u + 12u + 44u)

/* RFC 8881 §18.35.3, §18.36.3, §18.50.3: EXCHANGE_ID, CREATE_SESSION and
 * DESTROY_CLIENTID without a SEQUENCE before them must be alone in the COMPOUND. */
static bool nfs4_not_only_op(const struct nfs4_ctx *x)
{
	const struct nfs4_svc *s = x->priv;

	return !s->seq_new && x->numops > 1;
}

uint32_t nfs4_exchange_id_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_exid_args *a = args;
	uint64_t now = nfs4_now();
	struct nfs4_who who;
	uint32_t status;

	if (nfs4_not_only_op(x))
		return NFS4ERR_NOT_ONLY_OP;
	if (a->flags & ~EXCHGID4_FLAG_MASK_A)
		return NFS4ERR_INVAL;
	nfs4_ctab_expire(&nfs4_srv(x)->ctab, now);
	nfs4_who(x, &who);
	/* RFC 8881 §15.2: EXCHANGE_ID has no RESOURCE; a full table or a host's or principal's full share
	 * is DELAY (§15.1.1.3, "try the request again later"): room comes back when one of its records is
	 * destroyed or expires, and a client retries (SERVERFAULT would fail its mount for good). */
	status = nfs4_exchange_id_who(&nfs4_srv(x)->ctab, a->verifier, a->owner, a->owner_len, a->flags, &who, now,
				      res);
	/* RFC 8881 §13.1, §18.35.3: a metadata server (pnfs=flexfiles exports have data servers) that
	 * also serves non-pNFS I/O (every other export, and each file through itself) */
	if (status == NFS4_OK && nfs4_pnfs_mds())
		((struct nfs4_exid_res *)res)->flags |= EXCHGID4_FLAG_USE_PNFS_MDS;
	return status;
}

void nfs4_exchange_id_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	(void)status;
	nfs4_enc_exchange_id(e, res, nfs4_srv(x)->name, nfs4_srv(x)->name);
}

uint32_t nfs4_create_session_exec(struct nfs4_ctx *x, void *args, void *res)
{
	struct nfs4_create_session_args *a = args;
	struct nfs4_create_session_res *r = res;
	uint32_t status;
	uint64_t now = nfs4_now();

	if (nfs4_not_only_op(x))
		return NFS4ERR_NOT_ONLY_OP;
	if (a->flags & ~CREATE_SESSION4_FLAG_MASK)
		return NFS4ERR_INVAL;
	/* The back channel's too (CB_COMPOUND with CB_SEQUENCE is no smaller; pynfs CSESS29). */
	if (a->fore.maxrequestsize < NFS4_MIN_REQUEST || a->fore.maxresponsesize < NFS4_MIN_RESPONSE ||
	    a->back.maxrequestsize < NFS4_MIN_REQUEST || a->back.maxresponsesize < NFS4_MIN_RESPONSE)
		return NFS4ERR_TOOSMALL;
	/* RFC 8881 §8.3: a client whose lease ran out before it confirmed is gone (STALE_CLIENTID). */
	nfs4_ctab_expire(&nfs4_srv(x)->ctab, now);
	r->fore = a->fore;
	r->back = a->back;
	r->sequence = a->sequence;
	/* RFC 8881 §8.4.3: a client is recorded (stable) before it is confirmed (the stable hook). */
	status = nfs4_create_session(&nfs4_srv(x)->ctab, a->clientid, a->sequence, &r->fore, &r->back,
				     nfs4_principal(x), now, r->sessionid);
	if (status == NFS4_OK)
		r->flags = nfs4_cb_create_session(x, a, r->sessionid);
	return status;
}

void nfs4_create_session_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_create_session_res *r = res;

	(void)x, (void)status;
	/* RFC 8881 §18.36.3: no persistence; CONN_BACK_CHAN if this connection is the back channel. */
	nfs4_enc_create_session(e, r->sessionid, r->sequence, r->flags, &r->fore, &r->back);
}

/* RFC 8881 §18.36.3 (ca_maxrequestsize): the XDR size of the request with its RPC header and
 * credential, without transport framing: the call message plus the data that came in Read chunks
 * (XDR-padded). 0 without an RPC call (unit tests): not checked. */
static size_t nfs4_request_len(const struct nfs4_ctx *x)
{
	size_t len;

	if (!x->call)
		return 0;
	len = x->call->msg_len;
	for (unsigned i = 0; i < x->call->n_ddp_in; i++)
		len += ((size_t)x->call->ddp_in[i].len + 3) & ~(size_t)3;
	return len;
}

/*
 * May a slot's cached reply, made under exports whose xprtsec= masks
 * intersect to xprtsec, be replayed on this call's connection? An export
 * that asks for TLS (RFC 9289 §6.1.1: a strict mode, against STRIPTLS)
 * keeps its data off other connections, replies from a cache included
 * (its policy is per export, as sec= is, RFC 8881 §2.6.3.1): a retry on a
 * connection those exports do not admit (TLS -> plain) is not given the reply. It gets
 * RETRY_UNCACHED_REP (RFC 8881 §2.10.6.1.3: the server has no reply it can
 * replay for it), so the client sends the request anew and admission answers
 * it on this connection: NFS4ERR_WRONGSEC, as any call there. Nothing runs
 * twice: the new request is refused at the export that refused the replay.
 * knfsd replays without this check.
 */
static struct log_limit nfs4_session_limit;

static bool nfs4_replay_admitted(const struct nfs4_ctx *x, uint32_t xprtsec)
{
	const struct rpc_conn *conn = x->call ? x->call->conn : NULL;

	if (!conn || export_xprtsec_admits(xprtsec, conn->xprtsec))
		return true;
	log_limited(&nfs4_session_limit, LOG_NOTICE,
		    "nfs4: %s: a SEQUENCE retry on a connection of other transport security than its exports "
		    "admit (xprtsec=): RETRY_UNCACHED_REP", conn->peer_name);
	return false;
}

uint32_t nfs4_sequence_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_sequence_args *a = args;
	struct nfs4_sequence_res *r = res;
	struct nfs4_svc *s = x->priv;
	struct nfs4_seq_res sr;

	r->args = *a;
	switch (nfs4_sequence(&nfs4_srv(x)->ctab, a->sessionid, a->sequenceid, a->slotid, x->numops, nfs4_request_len(x),
			      nfs4_now(), s->replay, sizeof(s->replay), &sr)) {
	case NFS4_SEQ_ERROR:
		return sr.status;
	case NFS4_SEQ_REPLAY:
		if (!nfs4_replay_admitted(x, sr.replay_xprtsec))
			return NFS4ERR_RETRY_UNCACHED_REP;
		x->replay = s->replay;
		x->replay_len = sr.replay_len;
		return NFS4_OK;
	case NFS4_SEQ_NEW:
		break;
	}
	s->seq_new = true;
	memcpy(s->seq_sid, a->sessionid, NFS4_SESSIONID_SIZE);
	s->seq_slot = a->slotid;
	s->seq_cachethis = a->cachethis;
	s->clientid = sr.clientid;
	r->highest = sr.highest_slotid;
	r->target = sr.target_highest_slotid;
	/* RFC 8881 §18.46.3: CB_PATH_DOWN(_SESSION) while the client has no working back channel. */
	r->status_flags = nfs4_cb_seq_flags_for(sr.clientid) | nfs4_deleg_seq_flags(sr.clientid) |
			   nfs4_pnfs_seq_flags(sr.clientid);
	/* §18.46.3: ADMIN_STATE_REVOKED while stateids an administrator revoked are not freed. */
	if (nfs4_stab_admin_revoked(&nfs4_srv(x)->stab, sr.clientid))
		r->status_flags |= SEQ4_STATUS_ADMIN_STATE_REVOKED;
	/* RFC 8881 §2.10.6.4: the session's reply limits apply to this COMPOUND. */
	if (a->cachethis && sr.maxresponsesize_cached < sr.maxresponsesize)
		nfs4_compound_limit(x, sr.maxresponsesize_cached, NFS4ERR_REP_TOO_BIG_TO_CACHE);
	else
		nfs4_compound_limit(x, sr.maxresponsesize, NFS4ERR_REP_TOO_BIG);
	return NFS4_OK;
}

void nfs4_sequence_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_sequence_res *r = res;

	(void)x, (void)status;
	nfs4_enc_sequence(e, &r->args, r->highest, r->target, r->status_flags);
}

/*
 * A reply with data moved out of band (READ's, READLINK's in a Write chunk)
 * put together in buf (cap bytes) as it goes on the wire: its length, or 0
 * when it cannot be (data in the payload pipe, or too long: the engine's
 * session limit has already answered REP_TOO_BIG_TO_CACHE for those).
 */
static size_t reply_with_ddp(const struct nfs4_ctx *x, const struct xdr_enc *e, uint8_t *buf, size_t cap)
{
	const struct rpc_call *c = x->call;
	size_t pos = x->res_start, n = 0, end = xdr_enc_len(e);

	for (unsigned i = 0; i < c->n_ddp_out; i++) {
		const struct rpc_ddp_out *o = &c->ddp_out[i];
		size_t inl = o->offset - pos, pad = XDR_PAD(o->len);

		if (o->piped || o->offset < pos || o->offset > end || n + inl + o->len + pad > cap)
			return 0;
		memcpy(buf + n, e->base + pos, inl);
		memcpy(buf + n + inl, o->data, o->len);
		memset(buf + n + inl + o->len, 0, pad);
		n += inl + o->len + pad;
		pos = o->offset;
	}
	if (n + (end - pos) > cap)
		return 0;
	memcpy(buf + n, e->base + pos, end - pos);
	return n + (end - pos);
}

/* After the COMPOUND: the slot it took keeps its reply (RFC 8881 §2.10.6.1),
 * data sent out of band included (s->replay serves as the scratch: a replay
 * has already been answered by now). */
void nfs4_sequence_done(struct nfs4_ctx *x, const struct xdr_enc *e)
{
	struct nfs4_svc *s = x->priv;
	const uint8_t *reply = e->base + x->res_start;
	size_t len = xdr_enc_len(e) - x->res_start;
	bool keep;

	if (!s->seq_new)
		return;
	keep = s->seq_cachethis;
	if (keep && x->call && x->call->n_ddp_out) {
		len = reply_with_ddp(x, e, s->replay, sizeof(s->replay));
		reply = s->replay;
		keep = len != 0;
	}
	nfs4_slot_done(&nfs4_srv(x)->ctab, s->seq_sid, s->seq_slot, keep, reply, (uint32_t)len, s->seq_xprtsec);
	s->seq_new = false;
}

uint32_t nfs4_destroy_session_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_sessionid_args *a = args;

	uint32_t status;

	(void)res;
	status = nfs4_destroy_session(&nfs4_srv(x)->ctab, a->sessionid, nfs4_principal(x));
	if (status == NFS4_OK)
		nfs4_cb_session_gone(a->sessionid); /* its back channel goes with it */
	return status;
}

uint32_t nfs4_destroy_clientid_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_clientid_args *a = args;

	(void)res;
	if (nfs4_not_only_op(x))
		return NFS4ERR_NOT_ONLY_OP;
	return nfs4_destroy_clientid(&nfs4_srv(x)->ctab, a->clientid, nfs4_principal(x));
}

/* RFC 8881 §18.51.3: for the client of the COMPOUND's session (SEQUENCE came first). */
uint32_t nfs4_reclaim_complete_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_reclaim_complete_args *a = args;
	struct nfs4_svc *s = x->priv;
	uint32_t status, owner_len;

	(void)res;
	if (!s->seq_new)
		return NFS4ERR_OP_NOT_IN_SESSION;
	/* rca_one_fs: per file system reclaim is over as soon as asked (no state to reclaim yet). */
	if (a->one_fs)
		return NFS4_OK;
	status = nfs4_reclaim_complete(&nfs4_srv(x)->ctab, s->clientid);
	/* RFC 8881 §8.4.2: the grace period ends early once every previous client is done. */
	if (status == NFS4_OK && nfs4_client_owner(&nfs4_srv(x)->ctab, s->clientid, s->owner, &owner_len))
		nfs4_client_reclaimed(s->owner, owner_len);
	return status;
}
