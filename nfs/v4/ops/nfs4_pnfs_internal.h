/*
 * nfs4_pnfs_internal.h - what the pNFS metadata server's two halves share
 * (nfs/v4/ops only): nfs4_proc_layout.c owns the layout table, its mutex
 * and the data servers and serves the layout operations;
 * nfs4_layout_recall.c recalls and revokes layouts (RFC 8881 §12.5.5)
 * through the table it locks here. Nothing else includes this.
 */
#ifndef RNFSD_NFS4_PNFS_INTERNAL_H
#define RNFSD_NFS4_PNFS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "nfs/v4/state/nfs4_layout.h"

/* nfs4_proc_layout.c */

/* The layout table's mutex taken: the table, or NULL between _release() and _init(); always
 * followed by nfs4_pn_unlock(), which also refreshes nfs4_pnfs_held()'s count. */
struct nfs4_ltab *nfs4_pn_lock(void);
void nfs4_pn_unlock(void);
/* The server's lease (a recall's wait, §12.5.5.1), as nfs4_pnfs_init() got it. */
uint32_t nfs4_pn_lease(void);

/* nfs4_layout_recall.c */

struct sockaddr;
/* A client's address as the layout table keeps it (IPv4 as v4-mapped IPv6). false: not IP. */
bool nfs4_pn_host(const struct sockaddr *sa, uint8_t out[NFS4_LAYOUT_HOST_SIZE]);
/* nfs/common's layout hook (nfs_layout_hook_set()), set by a metadata server's nfs4_pnfs_init(). */
void nfs4_pn_hook(const uint8_t *fkey, uint32_t fkey_len, const struct sockaddr *peer);

#endif
