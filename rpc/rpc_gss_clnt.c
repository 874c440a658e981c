/*
 * rpc_gss_clnt.c - the initiator side of RPCSEC_GSS (rpc_gss_clnt.h) over
 * MIT libgssapi_krb5: the initiator's credential from the keytab into a
 * memory ticket cache (gss_acquire_cred_from with client_keytab: MIT gets
 * and renews the ticket-granting ticket itself), context creation
 * (gss_init_sec_context), the call's credential and header MIC, the
 * arguments' wrapping and the reply's checks (rpc_gss_mech.c). No
 * cryptography is written here.
 *
 * Ownership: the object is the owner's (nfs/v4/cb/nfs4_cb.c: one per
 * NFSv4.0 callback path), allocated when the path is given a krb5 flavor,
 * freed with it. Tokens in flight during creation are the library's
 * (out) or a malloc'ed copy of the peer's (in); the data path allocates
 * nothing: the header MIC and the wrap are written into the call's buffer,
 * the reply unwrapped in the transport's receive buffer.
 */
#include "rpc/rpc_gss_clnt.h"

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc_gss.h"
#include "rpc/rpc_gss_krb5.h"
#include "rpc/rpc_gss_mech.h"

#define TOKEN_MAX 65536u /* a context token: krb5 AP-REQ/AP-REP stay far below */
#define ARGS_MAX 4096u   /* a call's arguments kept to seal it afresh (NFSv4 callbacks: under 2 KiB) */
#define SENDS_MAX 4u     /* transmissions of one call, each its own seq_num */

struct rpc_gss_clnt {
	struct gss_mech m;
	char initiator[RPC_GSS_PRINC_MAX], target[RPC_GSS_PRINC_MAX];
	uint32_t svc;
	bool local_done;          /* gss_init_sec_context said COMPLETE */
	bool peer_done;           /* the peer's rpc_gss_init_res said COMPLETE */
	bool established;         /* and the INIT reply's verifier checked */
	bool sent_init;           /* INIT went: the next is CONTINUE_INIT (RFC 2203 §5.2.2) */
	uint32_t handle_len;
	uint8_t handle[RPC_GSS_HANDLE_MAX];
	uint32_t window;
	uint8_t verf[RPC_AUTH_MAX_BYTES]; /* the INIT reply's verifier: a MIC of the window (§5.2.3.1) */
	uint32_t verf_len;
	gss_buffer_desc out;      /* our next token (the library's) */
	uint8_t *in;              /* the peer's last token (a copy) */
	size_t in_len;
	uint32_t seq;             /* the last seq_num used */
	uint32_t call_seq;        /* the call in flight's latest transmission's */
	size_t hdr_len;           /* its header, which the verifier signs */
	uint32_t sent[SENDS_MAX]; /* the seq_num of each transmission (a late reply may answer any) */
	unsigned n_sent;
	size_t args_len;          /* its arguments before sealing (args), for a retransmission */
	uint8_t args[ARGS_MAX];
	char err[160];
};

struct rpc_gss_clnt *rpc_gss_clnt_new(const char *initiator, const char *target, uint32_t svc)
{
	struct rpc_gss_clnt *gc;

	if (!rpc_gss_keytab() || strlen(initiator) >= RPC_GSS_PRINC_MAX || strlen(target) >= RPC_GSS_PRINC_MAX ||
	    !(gc = calloc(1, sizeof(*gc))))
		return NULL;
	pthread_mutex_init(&gc->m.lock, NULL);
	gc->m.gctx = GSS_C_NO_CONTEXT;
	strcpy(gc->initiator, initiator);
	strcpy(gc->target, target);
	gc->svc = svc;
	return gc;
}

struct rpc_gss_clnt *rpc_gss_clnt_again(const struct rpc_gss_clnt *gc)
{
	return rpc_gss_clnt_new(gc->initiator, gc->target, gc->svc);
}

void rpc_gss_clnt_free(struct rpc_gss_clnt *gc)
{
	OM_uint32 min;

	if (!gc)
		return;
	if (gc->m.gctx != GSS_C_NO_CONTEXT)
		gss_delete_sec_context(&min, &gc->m.gctx, GSS_C_NO_BUFFER);
	gss_release_buffer(&min, &gc->out);
	free(gc->in);
	pthread_mutex_destroy(&gc->m.lock);
	free(gc);
}

const char *rpc_gss_clnt_error(const struct rpc_gss_clnt *gc)
{
	return gc->err;
}

/* gc->err = what, and the library's words for maj/min (slow path: the library allocates). */
static enum rpc_gss_clnt_next gss_fail(struct rpc_gss_clnt *gc, const char *what, OM_uint32 maj, OM_uint32 min)
{
	OM_uint32 m2, ctx = 0;
	gss_buffer_desc s = GSS_C_EMPTY_BUFFER;

	if (maj && !GSS_ERROR(gss_display_status(&m2, min ? min : maj, min ? GSS_C_MECH_CODE : GSS_C_GSS_CODE,
						  GSS_C_NO_OID, &ctx, &s)))
		snprintf(gc->err, sizeof(gc->err), "%s: %.*s", what, (int)(s.length < 100 ? s.length : 100),
			 (const char *)s.value);
	else
		snprintf(gc->err, sizeof(gc->err), "%s", what);
	gss_release_buffer(&m2, &s);
	return RPC_GSS_CLNT_FAIL;
}

/* A krb5 principal name ("nfs/host@REALM") as a GSS name. */
static bool gss_name(const char *princ, gss_name_t *n)
{
	gss_buffer_desc b = { strlen(princ), (void *)princ };
	OM_uint32 min;

	return !GSS_ERROR(gss_import_name(&min, &b, (gss_OID)GSS_KRB5_NT_PRINCIPAL_NAME, n));
}

/*
 * The initiator's credential: its key from the keytab, tickets in a memory
 * cache of its own name (kept for the process's life, so the next context
 * reuses the ticket-granting ticket; MIT renews it from the keytab).
 */
static OM_uint32 gss_initiator_cred(struct rpc_gss_clnt *gc, gss_cred_id_t *cred, OM_uint32 *min)
{
	char ccache[RPC_GSS_PRINC_MAX + 32];
	const char *keytab = rpc_gss_keytab(); /* NULL once Kerberos was released (shutdown) */
	gss_key_value_element_desc el[2] = { { "client_keytab", keytab }, { "ccache", ccache } };
	gss_key_value_set_desc store = { 2, el };
	gss_name_t me = GSS_C_NO_NAME;
	OM_uint32 maj, m2;

	snprintf(ccache, sizeof(ccache), "MEMORY:rnfsd-cb-%s", gc->initiator);
	if (!keytab || !gss_name(gc->initiator, &me)) {
		*min = 0;
		return GSS_S_BAD_NAME;
	}
	maj = gss_acquire_cred_from(min, me, GSS_C_INDEFINITE, GSS_C_NO_OID_SET, GSS_C_INITIATE, &store, cred, NULL,
				    NULL);
	gss_release_name(&m2, &me);
	return maj;
}

/* The context is complete on both sides: RFC 2203 §5.2.3.1, the INIT reply's verifier is a MIC of the window. */
static enum rpc_gss_clnt_next gss_finish(struct rpc_gss_clnt *gc)
{
	uint8_t w[4] = { (uint8_t)(gc->window >> 24), (uint8_t)(gc->window >> 16), (uint8_t)(gc->window >> 8),
			 (uint8_t)gc->window };
	OM_uint32 maj = rpc_gss_mic_check(&gc->m, w, sizeof(w), gc->verf, gc->verf_len);

	if (!gc->verf_len || GSS_ERROR(maj))
		return gss_fail(gc, "the context's verifier (a MIC of the window) does not check", maj, 0);
	gc->established = true;
	return RPC_GSS_CLNT_DONE;
}

enum rpc_gss_clnt_next rpc_gss_clnt_step(struct rpc_gss_clnt *gc)
{
	gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
	gss_name_t target = GSS_C_NO_NAME;
	gss_buffer_desc in = { gc->in_len, gc->in };
	OM_uint32 maj, min = 0, m2;
	bool first = gc->m.gctx == GSS_C_NO_CONTEXT;

	gss_release_buffer(&m2, &gc->out);
	if (first && GSS_ERROR(maj = gss_initiator_cred(gc, &cred, &min)))
		return gss_fail(gc, "no initiator credential from the keytab", maj, min);
	if (!gss_name(gc->target, &target)) {
		gss_release_cred(&m2, &cred);
		return gss_fail(gc, "the callback principal is not a Kerberos name", 0, 0);
	}
	/* RFC 2203 §5.2.2; mutual authentication: the peer proves itself too (its AP-REP). */
	maj = gss_init_sec_context(&min, cred, &gc->m.gctx, target, (gss_OID)gss_mech_krb5,
				   GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG, 0, GSS_C_NO_CHANNEL_BINDINGS,
				   first ? GSS_C_NO_BUFFER : &in, NULL, &gc->out, NULL, NULL);
	gss_release_name(&m2, &target);
	gss_release_cred(&m2, &cred);
	free(gc->in);
	gc->in = NULL;
	gc->in_len = 0;
	if (GSS_ERROR(maj))
		return gss_fail(gc, "gss_init_sec_context", maj, min);
	gc->local_done = maj == GSS_S_COMPLETE;
	if (gc->out.length)
		return gc->out.length <= TOKEN_MAX ? RPC_GSS_CLNT_SEND : gss_fail(gc, "token too large", 0, 0);
	if (gc->local_done && gc->peer_done)
		return gss_finish(gc);
	return gss_fail(gc, "context creation stalled (no token to send)", 0, 0);
}

void rpc_gss_clnt_init_call(struct rpc_gss_clnt *gc, struct rpc_clnt_call *cc, uint8_t *buf, size_t cap,
			    uint32_t prog, uint32_t vers)
{
	/* RFC 2203 §5.2.2: INIT carries no handle, CONTINUE_INIT the one INIT gave; seq_num 0. */
	struct rpc_gss_cred cred = { .vers = RPC_GSS_VERS_1, .proc = gc->sent_init ? RPC_GSS_CONTINUE_INIT : RPC_GSS_INIT,
				     .svc = gc->svc, .handle_len = gc->sent_init ? gc->handle_len : 0 };

	memcpy(cred.handle, gc->handle, cred.handle_len);
	rpc_clnt_call_init(cc, buf, cap, prog, vers, 0, NULL);
	(void)rpc_gss_call_cred(&cc->args, &cred);
	xdr_enc_u32(&cc->args, RPC_AUTH_NONE); /* §5.2.2: the verifier is AUTH_NONE */
	xdr_enc_u32(&cc->args, 0);
	xdr_enc_opaque(&cc->args, gc->out.value, (uint32_t)gc->out.length); /* gss_token */
	gc->sent_init = true;
}

enum rpc_gss_clnt_next rpc_gss_clnt_init_reply(struct rpc_gss_clnt *gc, struct rpc_clnt_call *cc,
					       enum rpc_clnt_status st)
{
	struct rpc_gss_init_res r;
	char why[96];

	if (st != RPC_CLNT_OK) {
		snprintf(why, sizeof(why), "context creation call: %s (auth_stat %u)", rpc_clnt_status_name(st),
			 cc->reply.auth_stat);
		return gss_fail(gc, why, 0, 0);
	}
	if (rpc_gss_init_res_decode(&cc->res, TOKEN_MAX, &r) != 0)
		return gss_fail(gc, "undecodable rpc_gss_init_res", 0, 0);
	if (r.major != RPC_GSS_S_COMPLETE && r.major != RPC_GSS_S_CONTINUE_NEEDED) {
		snprintf(why, sizeof(why), "the client refused the context (major 0x%x minor %u)", r.major, r.minor);
		return gss_fail(gc, why, 0, 0);
	}
	gc->handle_len = r.handle_len;
	memcpy(gc->handle, r.handle, r.handle_len);
	gc->window = r.window;
	gc->peer_done = r.major == RPC_GSS_S_COMPLETE;
	gc->verf_len = 0;
	if (cc->reply.verf_flavor == RPC_AUTH_GSS && cc->reply.verf_len <= sizeof(gc->verf)) {
		gc->verf_len = cc->reply.verf_len;
		memcpy(gc->verf, cc->res.base + cc->reply.verf_off, gc->verf_len);
	}
	if (r.token_len) {
		if (!(gc->in = malloc(r.token_len)))
			return gss_fail(gc, "no memory", 0, 0);
		memcpy(gc->in, r.token, r.token_len);
		gc->in_len = r.token_len;
		return RPC_GSS_CLNT_STEP;
	}
	if (gc->local_done && gc->peer_done)
		return gss_finish(gc);
	return gss_fail(gc, "the client asked to continue without a token", 0, 0);
}

bool rpc_gss_clnt_usable(const struct rpc_gss_clnt *gc)
{
	OM_uint32 min, left = 0;

	/* RFC 2203 §5.3.3.1: a context whose numbers ran out, or an expired one, is made again. */
	return gc && gc->established && gc->seq < RPC_GSS_MAXSEQ - 1 &&
	       !GSS_ERROR(gss_context_time(&min, gc->m.gctx, &left)) && left > 5;
}

/*
 * The first sealing keeps the arguments; a retransmission (RFC 2203 §5.3.3.1:
 * a new seq_num each time) takes the next seq_num into the header and the
 * kept arguments back. false: the arguments are too long to keep, or the
 * call was sent SENDS_MAX times.
 */
static bool gss_clnt_args(struct rpc_gss_clnt *gc, struct xdr_enc *e, uint8_t *args)
{
	size_t n = (size_t)(e->p - args);

	if (gc->n_sent == 0) {
		if (n > sizeof(gc->args))
			return false;
		memcpy(gc->args, args, n);
		gc->args_len = n;
	} else {
		if (gc->n_sent >= SENDS_MAX || !rpc_gss_seq_next(&gc->seq))
			return false;
		gc->call_seq = gc->seq;
		rpc_gss_call_set_seq(e, gc->call_seq);
		memcpy(args, gc->args, gc->args_len);
		e->p = args + gc->args_len;
	}
	gc->sent[gc->n_sent++] = gc->call_seq;
	return true;
}

/* cc->seal: RFC 2203 §5.3.1 the verifier, a MIC of the header (xid included), then §5.3.2 the arguments. */
static int gss_clnt_seal(struct rpc_clnt_call *cc)
{
	struct rpc_gss_clnt *gc = cc->seal_arg;
	struct xdr_enc *e = &cc->args;
	uint8_t verf[2 * XDR_UNIT + RPC_AUTH_MAX_BYTES], *args = e->base + gc->hdr_len;
	struct xdr_enc v;
	OM_uint32 maj, min;

	if (e->p < args || !gss_clnt_args(gc, e, args))
		return -1;
	size_t n = (size_t)(e->p - args);
	xdr_enc_init(&v, verf, sizeof(verf));
	xdr_enc_u32(&v, RPC_AUTH_GSS);
	if (!rpc_gss_enc_mic(&gc->m, e->base, gc->hdr_len, &v, &maj, &min) || v.overflow)
		return -1;
	size_t vl = xdr_enc_len(&v);
	if ((size_t)(e->end - e->p) < vl)
		return -1;
	memmove(args + vl, args, n);
	memcpy(args, verf, vl);
	e->p = args + vl + n;
	switch (gc->svc) {
	case RPC_GSS_SVC_INTEGRITY:
		return rpc_gss_integ_seal(&gc->m, gc->call_seq, e, args + vl, n) ? 0 : -1;
	case RPC_GSS_SVC_PRIVACY:
		return rpc_gss_priv_seal(&gc->m, gc->call_seq, e, args + vl, n) ? 0 : -1;
	default:
		return 0;
	}
}

int rpc_gss_clnt_call_init(struct rpc_gss_clnt *gc, struct rpc_clnt_call *cc, uint8_t *buf, size_t cap,
			   uint32_t prog, uint32_t vers, uint32_t proc)
{
	struct rpc_gss_cred cred = { .vers = RPC_GSS_VERS_1, .proc = RPC_GSS_DATA, .svc = gc->svc,
				     .handle_len = gc->handle_len };

	rpc_clnt_call_init(cc, buf, cap, prog, vers, proc, NULL);
	if (!rpc_gss_clnt_usable(gc) || !rpc_gss_seq_next(&gc->seq))
		return -1;
	cred.seq = gc->call_seq = gc->seq;
	gc->n_sent = 0;
	memcpy(cred.handle, gc->handle, gc->handle_len);
	if (!(gc->hdr_len = rpc_gss_call_cred(&cc->args, &cred)))
		return -1;
	cc->seal = gss_clnt_seal;
	cc->seal_arg = gc;
	return 0;
}

/* RFC 2203 §5.3.3.2: the reply's verifier is a MIC of the seq_num of the transmission it answers
 * (a late reply to an earlier one counts). That seq_num, or false. */
static bool gss_reply_seq(struct rpc_gss_clnt *gc, const struct rpc_clnt_call *cc, uint32_t *seq)
{
	const struct rpc_reply_hdr *h = &cc->reply;

	for (unsigned i = gc->n_sent; h->verf_flavor == RPC_AUTH_GSS && i-- > 0;) {
		uint32_t s = gc->sent[i];
		uint8_t w[4] = { (uint8_t)(s >> 24), (uint8_t)(s >> 16), (uint8_t)(s >> 8), (uint8_t)s };

		if (!GSS_ERROR(rpc_gss_mic_check(&gc->m, w, sizeof(w), cc->res.base + h->verf_off, h->verf_len))) {
			*seq = s;
			return true;
		}
	}
	return false;
}

bool rpc_gss_clnt_open(struct rpc_gss_clnt *gc, struct rpc_clnt_call *cc)
{
	uint32_t seq;

	if (!gss_reply_seq(gc, cc, &seq))
		return false;
	switch (gc->svc) {
	case RPC_GSS_SVC_INTEGRITY:
		return rpc_gss_integ_open(&gc->m, &cc->res, seq);
	case RPC_GSS_SVC_PRIVACY:
		/* cc->res is in the transport's receive buffer (tcp_clnt's, malloc'ed): unsealed in place. */
		return rpc_gss_priv_open(&gc->m, &cc->res, seq);
	default:
		return true;
	}
}
