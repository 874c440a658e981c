/*
 * nlm_cb.h - the calls rnfsd makes to a client's lock manager: GRANTED for a
 * blocked lock that became free, and the _RES messages answering _MSG
 * requests (XNFS §10.1: the asynchronous procedures answer with a call back).
 * Also the calls to the local rpc.statd (NSM, nlm_nsm.c). The port comes
 * from the host's rpcbind (PMAPPROC_GETPORT, RFC 1833 §3.2, over TCP); the
 * calls go over a new TCP connection (transport/tcp_clnt.c) made once per
 * host and program and kept.
 */
#ifndef RNFSD_NLM_CB_H
#define RNFSD_NLM_CB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpc/xdr.h"

struct loop;

#define NLM_CB_BODY_MAX 2400u /* encoded arguments: nlm4_testres with a 1024-byte oh and cookie */

/* Completion (loop thread): ok false when the call failed (no reply, or not
 * MSG_ACCEPTED SUCCESS); else res holds the results (valid during the call). */
typedef void (*nlm_cb_done_fn)(uint64_t tag, bool ok, struct xdr_dec *res);

/* Loop thread, at start. 0 or -1 (logged). */
int nlm_cb_init(struct loop *loop, unsigned slots);
/* Loop thread, at shutdown (pending calls are dropped without done). */
void nlm_cb_shutdown(void);

/*
 * Any thread: call procedure proc of program prog, version vers (NLM v4 on
 * a client's lock manager; NSM on the local statd) with the encoded
 * arguments body[0 .. len) on the host at peer (its port is ignored: the
 * host's rpcbind tells it). done (may be NULL) runs on the loop thread. 0,
 * or -1 when every slot is busy or callbacks are not running (the caller
 * treats it as a failed call).
 */
int nlm_cb_send(const struct sockaddr *peer, socklen_t peer_len, uint32_t prog, uint32_t vers, uint32_t proc,
		const uint8_t *body, size_t len, nlm_cb_done_fn done, uint64_t tag);

/* For tests: the port of the client's rpcbind (default 111). */
void nlm_cb_set_rpcbind_port(uint16_t port);

/* Counters. */
struct nlm_cb_stats {
	uint64_t sent, ok, failed;
};
void nlm_cb_stats(struct nlm_cb_stats *out);

#endif
