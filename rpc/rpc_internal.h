/*
 * rpc_internal.h - what the files of the RPC layer share among themselves
 *. Not for other layers: they use rpc.h, rpc_stats.h, rpcbind.h.
 * Doubles as a map of the layer:
 *
 *   rpc_call.c   receive a call: header, dispatch, reply headers, completion,
 *                deferral (rpc_call_defer/resume)
 *   rpc_clnt.c   calls we make: call headers, reply decoding, XID matching,
 *                timeouts, retransmission (rpc_clnt.h)
 *   rpc_conn.c   a connection's references, close hooks (xprt.h)
 *   rpc_auth.c   credential and verifier decoding (AUTH_NONE, AUTH_SYS)
 *   rpc_gss.c    RPCSEC_GSS without the GSS-API: credential codec, control
 *                table, sequence window, context table (rpc_gss.h)
 *   rpc_gss_krb5.c   the acceptor over MIT libgssapi_krb5 (rpc_gss_krb5.h)
 *   rpc_gss_clnt.c   the initiator, for calls we make (rpc_gss_clnt.h)
 *   rpc_gss_mech.c   MIC and wrap calls both share (rpc_gss_mech.h)
 *   rpc_prog.c   the table of registered programs
 *   rpc_drc.c    duplicate request cache
 *   rpc_ddp.c    payload helpers for handlers (rpc_dec_ddp, rpc_enc_ddp, ...)
 *   rpc_stats.c  per-procedure and global counters
 *   rpc_rpcbind.c  rpcbind registration (built apart: libtirpc headers clash with ours)
 */
#ifndef RNFSD_RPC_INTERNAL_H
#define RNFSD_RPC_INTERNAL_H

#include "rpc/rpc.h"
#include "rpc/rpc_stats.h"

/* RFC 5531 §9: xid, REPLY, MSG_ACCEPTED, verf (AUTH_NONE, length 0), accept_stat. */
#define RPC_REPLY_STAT_OFF 20u
#define RPC_REPLY_HDR_LEN 24u
#define RPC_VERSION 2u /* RFC 5531 §9: rpcvers must be 2 */

/* rpc_call.c */
enum rpc_hdr_status {
	RPC_HDR_OK,           /* c->args is at the procedure arguments */
	RPC_HDR_DROP,         /* not an answerable call (*why says why): no reply */
	RPC_HDR_REPLY,        /* a REPLY: for the connection's rpc_clnt, if it has one */
	RPC_HDR_RPC_MISMATCH, /* rpcvers is not 2: MSG_DENIED RPC_MISMATCH */
	RPC_HDR_AUTH_ERROR,   /* MSG_DENIED AUTH_ERROR with *auth_stat */
};
/*
 * The call header of c->msg[0 .. msg_len) (RFC 5531 §9) with its
 * credential and verifier, into c->xid, prog, vers, proc, cred and, on
 * RPC_HDR_OK, c->args. Pure: no dispatch, no reply, no log, no counter
 * (rpc_call_receive() does those; fuzz/fuzz_rpc_call.c calls this alone).
 */
enum rpc_hdr_status rpc_call_decode_header(struct rpc_call *c, const char **why, int *auth_stat);

/* Accepted reply header: xid, REPLY, MSG_ACCEPTED, the call's verifier
 * (AUTH_NONE, or RPCSEC_GSS's: rpc_gss_enc_verf), accept_stat; sets c->reply_stat_off. */
void rpc_enc_accepted(struct rpc_call *c, uint32_t accept_stat);

/* rpc_auth.c */

/*
 * Decode the credential and verifier (RFC 5531 §8.2, §9; AUTH_SYS: appendix A)
 * into *cred, leaving d at the procedure arguments.
 * Returns RPC_AUTH_OK, RPC_AUTH_BADCRED (malformed credential),
 * RPC_AUTH_REJECTEDCRED (flavor not supported), RPC_AUTH_BADVERF (malformed
 * or unexpected verifier).
 */
int rpc_auth_decode(struct xdr_dec *d, struct rpc_cred *cred);

/* rpc_gss.c (pure) */

/*
 * An RPCSEC_GSS credential and verifier at d (RFC 2203 §5, RFC 5531 §8.2)
 * into c->gss and c->cred (nobody until the context maps it), leaving d at
 * the arguments. Returns RPC_AUTH_OK, RPC_AUTH_BADCRED (malformed, or a
 * version other than 1), RPC_AUTH_BADVERF.
 */
int rpc_gss_decode_auth(struct xdr_dec *d, struct rpc_call *c);

/* rpc_gss_krb5.c: the GSS-API shell (rpc_gss.h has the protocol pieces). */

/* Is RPCSEC_GSS served (a keytab was loaded)? Any thread. */
bool rpc_gss_enabled(void);
enum rpc_gss_verdict {
	RPC_GSS_V_DISPATCH, /* DATA verified: c->cred mapped, c->args at the procedure's arguments */
	RPC_GSS_V_REPLY,    /* a control call answered: c->res holds the whole reply */
	RPC_GSS_V_DROP,     /* RFC 2203 §5.3.3.1: replayed or too old, no reply */
	RPC_GSS_V_DENIED,   /* MSG_DENIED AUTH_ERROR *auth_stat */
	RPC_GSS_V_GARBAGE,  /* krb5i/krb5p arguments did not verify: GARBAGE_ARGS */
	RPC_GSS_V_ESTABLISH, /* INIT or CONTINUE_INIT: rpc_gss_establish() it on a worker */
};
/* Loop thread, after the header decoded with flavor RPCSEC_GSS. */
enum rpc_gss_verdict rpc_gss_accept(struct rpc_call *c, int *auth_stat);
/* Worker (after RPC_GSS_V_ESTABLISH): one step of context creation (RFC 2203 §5.2),
 * gss_accept_sec_context and the principal's mapping. RPC_GSS_V_REPLY (c->res holds the
 * rpc_gss_init_res reply) or RPC_GSS_V_GARBAGE (no token in the arguments). */
enum rpc_gss_verdict rpc_gss_establish(struct rpc_call *c);
/* The reply verifier (flavor, body) at c->res, for rpc_enc_accepted. */
void rpc_gss_enc_verf(struct rpc_call *c);
/* Worker: wrap the results of an accepted SUCCESS reply (krb5i, krb5p). false: SYSTEM_ERR. */
bool rpc_gss_wrap_reply(struct rpc_call *c);
/* The call is over: drop its context reference. */
void rpc_gss_call_end(struct rpc_call *c);

/* rpc_prog.c */

struct rpc_prog_lookup {
	const struct rpc_program *prog;    /* NULL: PROG_UNAVAIL */
	const struct rpc_version *version; /* NULL: PROG_MISMATCH (see low/high) */
	uint32_t low, high;                /* versions offered */
	struct rpc_proc_stats *stats;      /* per-proc counters of version, indexed by proc */
};
void rpc_prog_find(uint32_t prog, uint32_t vers, struct rpc_prog_lookup *out);
void rpc_prog_release(void);

/* rpc_drc.c */

enum rpc_drc_result {
	RPC_DRC_NEW,         /* not seen: c->drc_entry reserved (or NULL if the cache is full) */
	RPC_DRC_IN_PROGRESS, /* a retransmission of a call still running: drop it */
	RPC_DRC_REPLAY,      /* answered before: c->res holds the cached reply (RPCSEC_GSS: this call's
	                        header and verifier, then the cached accept_stat and results, unwrapped) */
};
int rpc_drc_init(unsigned entries);
void rpc_drc_release(void);
enum rpc_drc_result rpc_drc_lookup(struct rpc_call *c);
/* The handler finished: keep the reply in c->drc_entry, or forget the entry. */
void rpc_drc_complete(struct rpc_call *c);
/* Worker, an RPCSEC_GSS call's results encoded, before they are wrapped: keep accept_stat and the
 * results (not the header: a retransmission has its own seq_num, RFC 2203 §5.3.3.1) for
 * rpc_drc_complete. */
void rpc_drc_gss_results(struct rpc_call *c);

/* rpc_stats.c */
enum rpc_stat_event {
	RPC_STAT_BAD_HEADER,
	RPC_STAT_RPC_MISMATCH,
	RPC_STAT_AUTH_ERROR,
	RPC_STAT_PROG_UNAVAIL,
	RPC_STAT_PROG_MISMATCH,
	RPC_STAT_PROC_UNAVAIL,
	RPC_STAT_GARBAGE_ARGS,
	RPC_STAT_SYSTEM_ERR,
	RPC_STAT_HANDLER_DROP,
	RPC_STAT_DRC_HIT,
	RPC_STAT_DRC_IN_PROGRESS,
	RPC_STAT_DRC_UNCACHED,
};
void rpc_stats_count(enum rpc_stat_event ev);
/* A call about to be dispatched: one more for its flavor (an atomic add, no lock). */
void rpc_stats_count_flavor(const struct rpc_call *c);
void rpc_stats_record(struct rpc_proc_stats *s, bool error, uint64_t latency_ns);
void rpc_stats_copy(struct rpc_proc_snapshot *dst, const struct rpc_proc_stats *src);

#endif
