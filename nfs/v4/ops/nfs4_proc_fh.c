/*
 * nfs4_proc_fh.c - the filehandle operations of COMPOUND: PUTFH, GETFH,
 * SAVEFH, RESTOREFH (RFC 8881 §18.19, §18.8, §18.28, §18.27). They move
 * handles between the call, the current and the saved filehandle; PUTFH
 * checks the handle's envelope (nfs/common/fh.c) so a forged or foreign
 * handle is BADHANDLE at once. Whether the object still exists (STALE) is
 * found by the operation that uses it, as RFC 8881 §18.19.3 allows.
 */
#include <string.h>

#include "nfs/v4/nfs4.h"

/* RFC 8881 §18.19.3: the handle becomes the current filehandle. */
uint32_t nfs4_putfh_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_putfh_args *a = args;
	struct be_handle bh;
	uint32_t export_id;

	(void)res;
	/* RFC 8881 §15.1.2 (NFS4ERR_BADHANDLE): not one of ours. */
	if (a->fh.len == 0 || !nfs_fh_unwrap(&a->fh, &export_id, &bh))
		return NFS4ERR_BADHANDLE;
	x->cur.fh = a->fh;
	x->cur.set = true;
	nfs4_cur_stateid_clear(x);
	return NFS4_OK;
}

/* RFC 8881 §18.8.3: the current filehandle, unchanged. */
uint32_t nfs4_getfh_exec(struct nfs4_ctx *x, void *args, void *res)
{
	struct nfs4_getfh_res *r = res;

	(void)args;
	r->fh = x->cur.fh;
	return NFS4_OK;
}

void nfs4_getfh_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_getfh_res *r = res;

	(void)x, (void)status;
	nfs4_enc_fh(e, &r->fh);
}

/* RFC 8881 §18.28.3: saved := current. */
uint32_t nfs4_savefh_exec(struct nfs4_ctx *x, void *args, void *res)
{
	(void)args, (void)res;
	x->saved = x->cur;
	nfs4_cur_stateid_save(x);
	return NFS4_OK;
}

/* RFC 8881 §18.27.3: current := saved; none saved is NFS4ERR_RESTOREFH. */
uint32_t nfs4_restorefh_exec(struct nfs4_ctx *x, void *args, void *res)
{
	(void)args, (void)res;
	if (!x->saved.set)
		return NFS4ERR_RESTOREFH;
	x->cur = x->saved;
	nfs4_cur_stateid_restore(x);
	return NFS4_OK;
}
