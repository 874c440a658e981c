/*
 * nfs_common.h - what every NFS program version (NFSv3, MOUNT, NFSv4) and
 * NLM share, grouped by the file of nfs/common/ that
 * implements it, so this header is also a map:
 *
 *   service.c       the service's lifetime: fh key, backends, export table,
 *                   program registration (nfs/nfs.h is its face to the daemon)
 *   fh.c            the handle envelope clients see: version, export id, the
 *                   backend's bytes, a MAC; the fh.key file
 *   siphash.c       SipHash-2-4, the envelope's MAC
 *   exports_live.c  the served export table (one backend instance per
 *                   export), refcounted and swapped atomically; admission
 *   cred.c          squashing: an RPC credential -> the backend's struct be_cred
 *   errmap.c        errno (and BE_E*) -> nfsstat3 / mountstat3 / nfsstat4
 *   read_pipe.c     a READ's data into the call's payload pipe (TCP splice)
 *
 * No file here makes a file-system system call: that is the backend's
 * (backend/backend.h).
 */
#ifndef RNFSD_NFS_COMMON_H
#define RNFSD_NFS_COMMON_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "conf/config.h"
#include "conf/exports.h"
#include "rpc/rpc.h"

/* ---- fh.c ---- */

/*
 * Wire layout of an rnfsd file handle (opaque to clients, RFC 1813 §2.3.3,
 * RFC 8881 §4.2.1):
 *   [0]       version (NFS_FH_VERSION)
 *   [1]       n = length of the backend's bytes (1..NFS_FH_MAXSIZE - 16)
 *   [2..3]    zero
 *   [4..7]    export id, big-endian (export_id())
 *   [8..8+n)  the backend's handle (struct be_handle)
 *   [8+n..]   8-byte SipHash-2-4 MAC of bytes [0, 8+n) under the fh key
 * Version 1 handles (before backends) are read as well: the same layout with
 * [1] = n - 4 (the local backend's 4-byte kernel handle type was counted apart).
 */
#define NFS_FH_VERSION 2u
#define NFS_FH_HDR 8u
#define NFS_FH_MAC 8u
#define NFS_FH_ENVELOPE (NFS_FH_HDR + NFS_FH_MAC)
#define NFS_FH_MAXSIZE 128u /* NFSv4's NFS4_FHSIZE; NFSv3's is 64 */

/* A file handle as a value (NFSv3 nfs_fh3, NFSv4 nfs_fh4). */
struct nfs_fh {
	uint32_t len;
	uint8_t data[NFS_FH_MAXSIZE];
};

/* Load or create state_dir/fh.key; falls back to a random key (logged). Always returns 0. */
int nfs_fh_key_init(const char *state_dir);
/* Tests: install a known key. */
void nfs_fh_key_set(const uint8_t key[16]);
/* Wrap the backend's handle for export_id in at most max bytes. false: it does not fit. */
bool nfs_fh_wrap(struct nfs_fh *fh, uint32_t export_id, const struct be_handle *bh, uint32_t max);
/* Check shape and MAC and unwrap. false: not one of ours (BADHANDLE). */
bool nfs_fh_unwrap(const struct nfs_fh *fh, uint32_t *export_id, struct be_handle *bh);

/* ---- exports_live.c ---- */

struct nfs_export {
	const struct export *cfg; /* inside the owning nfs_exports' table */
	uint32_t id;              /* export_id(cfg) */
	struct be_fs *fs;         /* the backend instance serving it */
};

struct nfs_exports {
	atomic_uint refs;
	struct export_table table; /* owned */
	struct nfs_export *v;
	unsigned n;
};

/* Opens every export's backend instance. Takes *src. NULL (logged) if one cannot be opened,
 * two share an id, or memory runs out: a table is served whole or not at all. */
struct nfs_exports *nfs_exports_build(struct export_table *src);
/* Swap in t as the served table (NULL: none); the old one is released when its last call ends. */
void nfs_exports_install(struct nfs_exports *t);
/* A reference to the served table (or NULL); every get is paired with a put. */
struct nfs_exports *nfs_exports_get(void);
void nfs_exports_put(struct nfs_exports *t);
const struct nfs_export *nfs_exports_by_id(const struct nfs_exports *t, uint32_t id);
const struct nfs_export *nfs_exports_by_path(const struct nfs_exports *t, const char *path);
/* exports(5) "secure" is met: a source port below 1024, a local (AF_UNIX)
 * peer, or a transport whose ports carry no privilege (RDMA; rpc/xprt.h). */
bool nfs_conn_secure(const struct rpc_conn *conn);
/*
 * Is this caller admitted to e? 0; EACCES: not a client of e, or "secure" and not
 * a privileged port; EPERM: a client, but its credential flavor is not in e's
 * sec= list. *opts is set unless EACCES.
 */
int nfs_export_admit(const struct nfs_export *e, const struct rpc_call *c, const struct export_opts **opts);

/* ---- cred.c ---- */

/* Squash rules of exports(5): AUTH_NONE and all_squash -> anon, root_squash maps 0 -> anon. */
void nfs_cred_map(const struct rpc_cred *cred, const struct export_opts *o, struct be_cred *out);

/* ---- errmap.c ---- */

uint32_t nfs_errno_to_nfsstat3(int err);
uint32_t nfs_errno_to_mountstat3(int err);
uint32_t nfs_errno_to_nfsstat4(int err);

/* ---- read_pipe.c ---- */

/* count bytes at most of f from offset into c's payload pipe (rpc_payload_pipe):
 * the backend's answer (*done bytes, counted as piped), or EOPNOTSUPP where the
 * transport has no pipe for it or the backend cannot (then the caller copies). */
int nfs_read_piped(struct rpc_call *c, struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags,
		   uint64_t offset, uint32_t count, size_t *done, bool *eof, struct be_attr *post);

#endif
