/*
 * nfs4_proc_cb.c - the operations that give a client a callback path:
 * BIND_CONN_TO_SESSION (RFC 8881 §18.34), BACKCHANNEL_CTL (§18.33), the back
 * channel part of CREATE_SESSION (§18.36: CREATE_SESSION4_FLAG_CONN_BACK_CHAN)
 * and the NFSv4.0 probe after SETCLIENTID_CONFIRM (RFC 7530 §16.34). They
 * hand the connection or address to nfs4_cb.c, which makes the calls on the
 * loop thread; nothing here waits for the client.
 */
#include <string.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "rpc/rpc_gss_krb5.h"

uint32_t nfs4_cb_create_session(struct nfs4_ctx *x, const struct nfs4_create_session_args *a,
				const uint8_t sid[NFS4_SESSIONID_SIZE])
{
	struct rpc_conn *conn = x->call ? x->call->conn : NULL;

	nfs4_cb_session(a->clientid, sid, x->minorversion, a->cb_program, &a->sec);
	/* RFC 8881 §18.36.3: CONN_BACK_CHAN is answered only when the connection
	 * really is the back channel now. */
	if ((a->flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN) && nfs4_cb_bind41(a->clientid, sid, conn))
		return CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
	return 0;
}

/* RFC 8881 §18.34.3: the direction the connection got. */
static uint32_t bind_dir(uint32_t asked, bool back, uint32_t *got)
{
	switch (asked) {
	case CDFC4_FORE:
		*got = CDFS4_FORE;
		return NFS4_OK;
	case CDFC4_FORE_OR_BOTH:
		*got = back ? CDFS4_BOTH : CDFS4_FORE;
		return NFS4_OK;
	case CDFC4_BACK:
	case CDFC4_BACK_OR_BOTH:
		/* Fore calls keep being served on it either way (as knfsd). */
		*got = asked == CDFC4_BACK ? CDFS4_BACK : CDFS4_BOTH;
		return back ? NFS4_OK : NFS4ERR_INVAL;
	default:
		return NFS4ERR_INVAL;
	}
}

uint32_t nfs4_bind_conn_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_bind_conn_args *a = args;
	struct nfs4_bind_conn_res *r = res;
	struct nfs4_svc *s = x->priv;
	struct rpc_conn *conn = x->call ? x->call->conn : NULL;
	uint64_t clientid;
	uint32_t status;

	/* RFC 8881 §18.34.3: sent without SEQUENCE, it is the only operation. */
	if (!s->seq_new && x->numops > 1)
		return NFS4ERR_NOT_ONLY_OP;
	/* §2.10.8.3: a connection is bound to a session only by its client's
	 * principal (WRONG_CRED, §15.1.6.4, as knfsd under SP4_MACH_CRED). */
	status = nfs4_session_client(&nfs4_srv(x)->ctab, a->sessionid, nfs4_principal(x), &clientid);
	if (status != NFS4_OK)
		return status;
	memcpy(r->sessionid, a->sessionid, NFS4_SESSIONID_SIZE);
	bool back = (a->dir & CDFC4_BACK) && nfs4_cb_bind41(clientid, a->sessionid, conn);
	return bind_dir(a->dir, back, &r->dir);
}

void nfs4_bind_conn_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_bind_conn_res *r = res;

	(void)x, (void)status;
	nfs4_enc_bind_conn(e, r->sessionid, r->dir);
}

uint32_t nfs4_backchannel_ctl_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_backchannel_ctl_args *a = args;
	struct nfs4_svc *s = x->priv;

	(void)res;
	if (!s->seq_new)
		return NFS4ERR_OP_NOT_IN_SESSION;
	/* RFC 8881 §18.33.3: security the server cannot use for callbacks. */
	if (!a->sec.usable)
		return NFS4ERR_INVAL;
	nfs4_cb_ctl(s->clientid, a->cb_program, &a->sec);
	return NFS4_OK;
}

/*
 * RFC 7530 §3.3.3: the callbacks go under the flavor and service of the
 * client's SETCLIENTID, to its principal; the SETCLIENTID_CONFIRM's caller
 * is the same principal (§16.34.5: another one is refused). The initiator
 * is the name the client's context targeted (the Linux client checks a
 * callback's principal against it). false: not RPCSEC_GSS (AUTH_SYS
 * callbacks, as root). A name that cannot be had leaves it "" (the probe
 * fails: no delegations, never AUTH_SYS in its place).
 */
static bool cb_gss40(const struct rpc_call *c, struct nfs4_cb_gss40 *g)
{
	const char *princ;

	if (!c || c->cred.flavor != RPC_AUTH_GSS)
		return false;
	memset(g, 0, sizeof(*g));
	g->svc = c->gss.svc;
	if ((princ = rpc_gss_call_principal(c)) && strlen(princ) < sizeof(g->target))
		strcpy(g->target, princ);
	if (!rpc_gss_call_acceptor(c, g->initiator, sizeof(g->initiator)))
		g->initiator[0] = '\0';
	return true;
}

void nfs4_cb_confirmed40(const struct nfs4_ctx *x, uint64_t clientid)
{
	struct nfs4_cb_info cb;
	struct nfs4_cb_gss40 gss;

	if (nfs4_client_cb40(&nfs4_srv(x)->ctab, clientid, &cb))
		nfs4_cb_probe40(clientid, &cb, cb_gss40(x->call, &gss) ? &gss : NULL);
}
