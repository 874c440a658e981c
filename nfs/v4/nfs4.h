/*
 * nfs4.h - NFSv4 (RFC 7530/7531, RFC 8881, RFC 7862/7863), a map of nfs/v4/:
 *
 *   nfs4_const.h      protocol numbers (operations, nfsstat4, attributes)
 *   nfs4_xdr.c        decoders/encoders of the header and the operations' items
 *   nfs4_compound.c   the COMPOUND engine and its per-worker arena
 *   nfs4_attr.c       fattr4: supported attributes, bitmap4 x struct be_attr -> attrlist4
 *   nfs4_proc_fh.c    filehandle operations (PUTFH, GETFH, SAVEFH, RESTOREFH)
 *   nfs4_procs.c      the operation table and the RPC program version 4 (NULL, COMPOUND)
 *
 * Experimental: the version is registered with the RPC layer (and rpcbind)
 * only with "[nfsv4] enable = yes" (rnfsd.conf(5)).
 */
#ifndef RNFSD_NFS4_H
#define RNFSD_NFS4_H

#include "nfs/v4/nfs4_compound.h"
#include "rpc/rpc.h"

/* ---- nfs4_procs.c ---- */

/* The NFSv4 operation table, indexed by nfs_opnum4 ([NFS4_OP_COUNT]). */
extern const struct nfs4_op nfs4_ops[NFS4_OP_COUNT];
/* Program 100003 version 4: NULL and COMPOUND (RFC 7530 §16.1, §16.2). */
extern const struct rpc_version nfs4_version;

/* ---- nfs4_proc_fh.c ---- */

uint32_t nfs4_putfh_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_getfh_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_getfh_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_savefh_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_restorefh_exec(struct nfs4_ctx *x, void *args, void *res);

struct nfs4_getfh_res {
	struct nfs_fh fh;
};

#endif
