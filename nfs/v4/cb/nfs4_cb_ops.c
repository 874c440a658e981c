/*
 * nfs4_cb_ops.c - the callbacks asynchronous COPY (CB_OFFLOAD, RFC 7862
 * §16.1) and blocking locks (CB_NOTIFY_LOCK, RFC 8881 §20.11) send, as
 * nfs4_cb_send() operations (nfs4_cb.h: queued per client, sent by the loop
 * thread on the 4.1 back channel or the 4.0 callback connection, done()
 * called once with the client's status or -1).
 */
#include <string.h>

#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/ops/nfs4_copy_async.h"

bool nfs4_cb_ops_ready(uint64_t clientid)
{
	struct nfs4_cb_stat s;

	/* Operations queued while the path is probed go once it is up (nfs4_cb_send()). */
	return nfs4_cb_stat_of(clientid, &s) && (s.state == NFS4_CB_UP || s.state == NFS4_CB_PROBING);
}

static void cb_fh(struct nfs4_cb_fh *to, const struct nfs_fh *fh)
{
	to->len = fh->len <= NFS4_CB_FH_MAX ? fh->len : 0;
	memcpy(to->data, fh->data, to->len);
}

bool nfs4_copy_cb_offload(const struct nfs4_copy_cb *cb, void (*done)(void *arg, int32_t status), void *arg)
{
	struct nfs4_cb_op op = { .kind = NFS4_CB_OP_OFFLOAD };
	struct nfs4_cb_offload_args *a = &op.u.offload;

	/* RFC 7862 §16.1.1: the destination, the copy stateid, and the result
	 * (write_response4 with the server's write verifier, as COPY's own). */
	cb_fh(&a->fh, &cb->fh);
	a->stateid = cb->sid;
	a->status = cb->status;
	a->count = cb->count;
	a->committed = cb->committed;
	memcpy(a->writeverf, nfs_write_verf, sizeof(a->writeverf));
	return nfs4_cb_send(cb->clientid, &op, done, arg);
}
