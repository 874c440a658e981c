/*
 * nfs_priv.h - interfaces between the files of nfs/ (not used outside it).
 * Grouped by the file that implements them, so this header is also a map:
 *
 *   nfs_service.c     program tables, init/shutdown
 *   exports_live.c    the served export table: refcounted, swapped atomically
 *   fh.c              file handles: build, MAC-verify, open by handle; fh.key
 *   fcache.c          bounded LRU cache of open regular files for READ/WRITE/COMMIT
 *   identity.c        caller's fsuid/fsgid/groups on the worker thread
 *   nfs3_call.c       per-call prologue/epilogue shared by all NFSv3 procedures
 *   nfs3_xdr.c        NFSv3 argument decoders, result building blocks
 *   nfs3_proc_*.c     the procedures (attr, lookup+dir, io, create, remove)
 *   mount3.c          MOUNT v3 and the mount list
 *   nfs_errno.c       errno -> nfsstat3 / mountstat3
 */
#ifndef RNFSD_NFS_PRIV_H
#define RNFSD_NFS_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "conf/config.h"
#include "conf/exports.h"
#include "nfs/nfs3_const.h"
#include "nfs/nfs3_xdr.h"
#include "rpc/rpc.h"

/* ---- nfs_errno.c ---- */
uint32_t nfs_errno_to_nfsstat3(int err);
uint32_t nfs_errno_to_mountstat3(int err);

/* ---- fh.c ---- */

/*
 * Wire layout of an rnfsd file handle (opaque to clients, RFC 1813 §2.3.3):
 *   [0]      version (NFS_FH_VERSION)
 *   [1]      n = kernel handle length (1..NFS_FH_KMAX)
 *   [2..3]   zero
 *   [4..7]   export id, big-endian (export_id())
 *   [8..11]  kernel handle type (struct file_handle.handle_type), big-endian
 *   [12..]   n bytes of kernel handle (name_to_handle_at)
 *   [12+n..] 8-byte SipHash-2-4 MAC of bytes [0, 12+n) under the fh key
 */
#define NFS_FH_VERSION 1u
#define NFS_FH_HDR 12u
#define NFS_FH_MAC 8u
#define NFS_FH_KMAX (NFS3_FHSIZE - NFS_FH_HDR - NFS_FH_MAC)

/* A MAC-verified handle, split. kbytes points into the nfs_fh it came from. */
struct nfs_fh_parts {
	uint32_t export_id;
	int32_t ktype;
	uint32_t klen;
	const uint8_t *kbytes;
};

/* Load or create state_dir/fh.key; falls back to a random key (logged). Always returns 0. */
int nfs_fh_key_init(const char *state_dir);
/* Tests: install a known key. */
void nfs_fh_key_set(const uint8_t key[16]);
/* Handle of name relative to dirfd (name "" with AT_EMPTY_PATH: dirfd itself). Returns nfsstat3. */
uint32_t nfs_fh_build(struct nfs_fh *fh, uint32_t export_id, int dirfd, const char *name, int at_flags);
/* Checks shape and MAC: NFS3_OK or NFS3ERR_BADHANDLE. */
uint32_t nfs_fh_verify(const struct nfs_fh *fh, struct nfs_fh_parts *p);
/* open_by_handle_at(mount_fd) + fstat; gone objects (ESTALE, st_nlink 0) -> NFS3ERR_STALE. Needs root. */
uint32_t nfs_fh_open(int mount_fd, const struct nfs_fh_parts *p, int flags, int *fd, struct stat *st);
/* RFC 1813 §3.3.16 cookieverf: constant for one directory (and across restarts). */
uint64_t nfs_fh_cookieverf(uint32_t export_id, const struct stat *dir);

/* ---- exports_live.c ---- */

struct nfs_export {
	const struct export *cfg; /* inside the owning nfs_exports' table */
	uint32_t id;              /* export_id(cfg) */
	int root_fd;              /* O_RDONLY dir: lookups and open_by_handle_at's mount fd */
	int tree_fd;              /* O_PATH open_tree() clone root_fd lives in (no submounts), or -1 */
	bool cloned;              /* root_fd is an open_tree() clone: LOOKUP cannot reach submounts */
	dev_t dev;
	ino_t ino;
	struct nfs_fh root_fh;
};

struct nfs_exports {
	atomic_uint refs;
	struct export_table table; /* owned */
	struct nfs_export *v;
	unsigned n;
};

/* Opens every export root. Takes *src. NULL (logged) if one cannot be opened, two
 * share an id, or memory runs out: a table is served whole or not at all. */
struct nfs_exports *nfs_exports_build(struct export_table *src);
/* Swap in t as the served table (NULL: none); the old one is released when its last call ends. */
void nfs_exports_install(struct nfs_exports *t);
/* A reference to the served table (or NULL); every get is paired with a put. */
struct nfs_exports *nfs_exports_get(void);
void nfs_exports_put(struct nfs_exports *t);
const struct nfs_export *nfs_exports_by_id(const struct nfs_exports *t, uint32_t id);
const struct nfs_export *nfs_exports_by_path(const struct nfs_exports *t, const char *path);
/*
 * Is this caller admitted to e? 0; EACCES: not a client of e, or "secure" and not
 * a privileged port; EPERM: a client, but its credential flavor is not in e's
 * sec= list. *opts is set unless EACCES.
 */
int nfs_export_admit(const struct nfs_export *e, const struct rpc_call *c, const struct export_opts **opts);

/* ---- identity.c ---- */

struct nfs_identity {
	uint32_t uid, gid;
	uint32_t ngroups;
	uint32_t groups[RPC_AUTH_SYS_MAX_GIDS];
};

/* Squash rules of exports(5): AUTH_NONE and all_squash -> anon, root_squash maps 0 -> anon. */
void nfs_identity_map(const struct rpc_cred *cred, const struct export_opts *o, struct nfs_identity *id);
/* Worker thread: switch fs identity (per thread). 0, or -1 (identity restored, logged). */
int nfs_identity_apply(const struct nfs_identity *id);
/* Back to root (fsuid/fsgid 0, no supplementary groups). */
void nfs_identity_restore(void);

/* ---- fcache.c ---- */

struct nfs_fcache_entry;

struct nfs_file {
	int fd;                        /* O_RDWR or O_RDONLY, regular file */
	bool rdwr;
	struct nfs_fcache_entry *ent;  /* NULL: uncached, fd closed by put */
};

void nfs_fcache_init(unsigned capacity);
void nfs_fcache_release(void);
/* Open (or find) the regular file behind a verified handle; as root. Returns nfsstat3. */
uint32_t nfs_fcache_get(const struct nfs_export *e, const struct nfs_fh *fh, const struct nfs_fh_parts *p,
			bool need_write, struct nfs_file *f);
void nfs_fcache_put(struct nfs_file *f);
/* The file is gone (st_nlink 0): no later get may return this entry. */
void nfs_fcache_forget(struct nfs_file *f);
/* Exports changed: drop every entry (in-use ones close at their put). */
void nfs_fcache_purge(void);

/* ---- nfs3_xdr.c: see nfs3_xdr.h ---- */

/* ---- nfs3_call.c ---- */

struct nfs3_call {
	struct rpc_call *rpc;
	struct nfs_exports *tbl;          /* referenced for the whole call */
	const struct nfs_export *exp;     /* export of the first handle */
	const struct export_opts *opts;   /* this client's options on exp */
	struct nfs_identity id;
	bool as_caller;                   /* identity applied, to restore at end */
};

void nfs3_call_begin(struct nfs3_call *nc, struct rpc_call *c);
/* Verify a handle and admit the caller to its export (a second handle must be in the same one: XDEV). */
uint32_t nfs3_call_export(struct nfs3_call *nc, const struct nfs_fh *fh, struct nfs_fh_parts *p);
/* The above + an O_PATH fd and its attributes (run before nfs3_call_as_caller). */
uint32_t nfs3_call_open(struct nfs3_call *nc, const struct nfs_fh *fh, int *fd, struct stat *st);
/* The above for a directory: NOTDIR otherwise (*st still filled, fd closed). */
uint32_t nfs3_call_open_dir(struct nfs3_call *nc, const struct nfs_fh *fh, int *fd, struct stat *st);
/* Switch to the caller's identity for the rest of the call. */
uint32_t nfs3_call_as_caller(struct nfs3_call *nc);
/* RFC 1813 §3.3: modifying procedures on a read-only export fail with NFS3ERR_ROFS. */
uint32_t nfs3_call_writable(const struct nfs3_call *nc);
/* RFC 1813 §3.3: a namespace or attribute change is on stable storage before the reply
 * (sync exports): fsync the directory/file behind fd, as root. Ends the caller identity. */
void nfs3_call_commit_metadata(struct nfs3_call *nc, int fd);
void nfs3_call_end(struct nfs3_call *nc);
/* Checks a filename3 (RFC 1813 §2.5): 1..NAME_MAX bytes, no '/', no NUL; copies it NUL-terminated. */
uint32_t nfs3_name_copy(const struct nfs3_name *n, char out[NAME_MAX + 1]);
/* Does the caller (applied identity) pass access(mode) on fd? Owner override for READ/WRITE as knfsd. */
bool nfs3_may(const struct nfs3_call *nc, int fd, const struct stat *st, int mode);
/* Close an fd if >= 0. */
void nfs_fd_close(int fd);
/* "/proc/self/fd/N" for path-based syscalls on O_PATH fds. */
void nfs_fd_path(int fd, char buf[32]);
/* Room for up to want bytes of bulk reply data (READ, READLINK): the call's payload area, else
 * carved from the unused end of the reply buffer. *got may be less than want (even 0). */
void *nfs3_bulk_buf(struct rpc_call *c, uint32_t want, uint32_t *got);
/* Common end of a handler: SYSERR if the reply overflowed. */
enum rpc_proc_status nfs3_reply_done(struct rpc_call *c);

/* Write verifier (RFC 1813 §3.3.7): changes with every daemon start. */
extern uint8_t nfs3_write_verf[NFS3_WRITEVERFSIZE];

/* ---- nfs3_proc_*.c ---- */
enum rpc_proc_status nfs3_proc_null(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_getattr(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_setattr(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_access(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_fsstat(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_fsinfo(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_pathconf(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_lookup(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_readdir(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_readdirplus(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_readlink(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_read(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_write(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_commit(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_create(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_mkdir(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_symlink(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_mknod(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_remove(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_rmdir(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_rename(struct rpc_call *c);
enum rpc_proc_status nfs3_proc_link(struct rpc_call *c);

/* Shared by create/setattr: apply a sattr3 to an O_PATH fd under the caller's identity. */
uint32_t nfs3_setattr_apply(struct nfs3_call *nc, int fd, const struct stat *st, const struct nfs3_sattr *sa);

/* ---- mount3.c ---- */
enum rpc_proc_status mount3_proc_null(struct rpc_call *c);
enum rpc_proc_status mount3_proc_mnt(struct rpc_call *c);
enum rpc_proc_status mount3_proc_dump(struct rpc_call *c);
enum rpc_proc_status mount3_proc_umnt(struct rpc_call *c);
enum rpc_proc_status mount3_proc_umntall(struct rpc_call *c);
enum rpc_proc_status mount3_proc_export(struct rpc_call *c);
void mount3_list_release(void);

#endif
