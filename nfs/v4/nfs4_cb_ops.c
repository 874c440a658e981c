/*
 * nfs4_cb_ops.c - the callbacks asynchronous COPY (CB_OFFLOAD, RFC 7862
 * §16.1) and blocking locks (CB_NOTIFY_LOCK, RFC 8881 §20.11) send, behind
 * two small functions, so the rest does not depend on how a callback goes
 * out (nfs4_cb.c's send API).
 *
 * STUB: nfs4_cb.c has no general send API in this branch yet (it comes with
 * the "queued callback operations" commit of branch deleg). Until it is
 * merged, cb_send_stub() sends NOTHING and answers false, and
 * nfs4_cb_ops_ready() is false, so no asynchronous copy is ever offered (a
 * client would wait for a CB_OFFLOAD that never comes).
 */
#include "nfs/v4/nfs4_cb.h"
#include "nfs/v4/nfs4_copy_async.h"

/* STUB, NOT SENDING: see above. */
static bool cb_send_stub(uint64_t clientid)
{
	(void)clientid;
	return false;
}

bool nfs4_cb_ops_ready(uint64_t clientid)
{
	(void)clientid;
	return false; /* STUB: nothing can be sent yet */
}

bool nfs4_copy_cb_offload(const struct nfs4_copy_cb *cb, void (*done)(void *arg, int32_t status), void *arg)
{
	(void)done, (void)arg;
	return cb_send_stub(cb->clientid);
}
