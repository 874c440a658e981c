/*
 * rpc_gss_clnt.h - RPCSEC_GSS (RFC 2203) for calls rnfsd makes: the NFSv4.0
 * callbacks of a client that did SETCLIENTID under krb5, krb5i or krb5p
 * (RFC 7530 §3.3.3). One struct rpc_gss_clnt per callback path: a context
 * initiated by rnfsd's machine principal (its key from [rnfsd] keytab; the
 * name the client's own context targeted) with the client's principal, and
 * the sequence numbers of the calls made under it.
 *
 *   rpc_gss_clnt_new() --rpc_gss_clnt_step() [worker]--> SEND | FAIL
 *   SEND --rpc_gss_clnt_init_call(): NULL with INIT/CONTINUE_INIT (§5.2.2);
 *          its reply to rpc_gss_clnt_init_reply() [loop]--> STEP | DONE | FAIL
 *   STEP --rpc_gss_clnt_step() [worker]--> SEND | DONE | FAIL
 *   DONE: rpc_gss_clnt_call_init() begins each call (its header MIC and the
 *         wrapped arguments are added when rpc_clnt_start() has put the XID
 *         in, §5.3.1, §5.3.2), rpc_gss_clnt_open() checks each reply (§5.3.3.2)
 *
 * Threads: rpc_gss_clnt_step() may block on the KDC (the initiator's
 * ticket-granting ticket from the keytab, then the service ticket): a worker
 * runs it, never a loop thread; everything else is for the loop thread. The
 * owner makes one step, or has one call, at a time per object.
 */
#ifndef RNFSD_RPC_GSS_CLNT_H
#define RNFSD_RPC_GSS_CLNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc/rpc_clnt.h"

struct rpc_gss_clnt;

enum rpc_gss_clnt_next {
	RPC_GSS_CLNT_SEND, /* send rpc_gss_clnt_init_call() (a token is ready) */
	RPC_GSS_CLNT_STEP, /* run rpc_gss_clnt_step() on a worker (the peer's token came) */
	RPC_GSS_CLNT_DONE, /* established: calls may be made */
	RPC_GSS_CLNT_FAIL, /* given up: rpc_gss_clnt_error() says why */
};

/* A context to make from initiator to target ("service/host@REALM"), service svc
 * (enum rpc_gss_svc). NULL: no memory, a name too long, or no keytab. Any thread. */
struct rpc_gss_clnt *rpc_gss_clnt_new(const char *initiator, const char *target, uint32_t svc);
/* A new object for the same names and service (gc's context expired). NULL: no memory. */
struct rpc_gss_clnt *rpc_gss_clnt_again(const struct rpc_gss_clnt *gc);
/* Loop thread (or the worker that holds it last): deletes the context, locally (no DESTROY call). */
void rpc_gss_clnt_free(struct rpc_gss_clnt *gc);
/* Worker: one gss_init_sec_context() step (the first acquires the initiator's credential). */
enum rpc_gss_clnt_next rpc_gss_clnt_step(struct rpc_gss_clnt *gc);
/* Begin the NULL call carrying the token into cc (buf[0 .. cap)), as rpc_clnt_call_init(). */
void rpc_gss_clnt_init_call(struct rpc_gss_clnt *gc, struct rpc_clnt_call *cc, uint8_t *buf, size_t cap,
			    uint32_t prog, uint32_t vers);
/* Its reply (RFC 2203 §5.2.3.1), st as rpc_clnt gave it. */
enum rpc_gss_clnt_next rpc_gss_clnt_init_reply(struct rpc_gss_clnt *gc, struct rpc_clnt_call *cc,
					       enum rpc_clnt_status st);
/* Established, not expired, sequence numbers left: calls may be made. */
bool rpc_gss_clnt_usable(const struct rpc_gss_clnt *gc);
/*
 * As rpc_clnt_call_init(), under the context with the next seq_num: the
 * caller encodes the arguments next; cc->seal adds the verifier and wraps
 * them at rpc_clnt_start(), and seals them afresh under a new seq_num for
 * each retransmission (§5.3.3.1; a reply to any of them is taken). One call
 * at a time per object. -1: no usable context.
 */
int rpc_gss_clnt_call_init(struct rpc_gss_clnt *gc, struct rpc_clnt_call *cc, uint8_t *buf, size_t cap,
			   uint32_t prog, uint32_t vers, uint32_t proc);
/* A SUCCESS reply to that call: its verifier checks (a MIC of seq_num, §5.3.3.2) and
 * cc->res becomes the results, unwrapped in place (§5.3.2.2, §5.3.2.3). false: it does not check. */
bool rpc_gss_clnt_open(struct rpc_gss_clnt *gc, struct rpc_clnt_call *cc);
/* Why the last step failed ("" if none). */
const char *rpc_gss_clnt_error(const struct rpc_gss_clnt *gc);

#endif
