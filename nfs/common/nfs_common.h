/*
 * nfs_common.h - what the NFS program versions (NFSv3 and MOUNT in nfs/v3/,
 * NFSv4 in nfs/v4/) and NLM (nlm/, whose handles are NFSv3's) share: the
 * layer beneath them, which includes none of them. Grouped by the file of
 * nfs/common/ that implements it, so this header is also a map:
 *
 *   fh.c            the handle envelope clients see: version, export id, the
 *                   backend's bytes, a MAC; the fh.key file
 *   siphash.c       SipHash-2-4, the envelope's MAC
 *   exports_live.c  the served export table (one backend instance per
 *                   export), refcounted and swapped atomically; admission
 *   cred.c          squashing: an RPC credential -> the backend's struct be_cred
 *   errmap.c        errno (and BE_E*) -> the status numbers NFSv3 and NFSv4
 *                   share (each version maps them to its own status)
 *   read_pipe.c     a READ's data into the call's payload pipe (TCP splice)
 *   io.c            what every version's READ and WRITE share: room for bulk
 *                   reply data, the server's write verifier
 *   deleg_hook.c    delegation conflicts for NFSv3 and NLM: a hook NFSv4 sets
 *   export_stats.c  per-export counters (calls, errors, bytes) and their
 *                   statistics section
 *   pnfs_ds.c       a pNFS data server's counters: NFSv3 I/O on pnfs= exports
 *
 * The service's lifetime, which assembles the versions, is above them
 * (nfs/nfs_service.c, nfs/nfs.h). No file here makes a file-system system
 * call: that is the backend's (backend/backend.h).
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

/*
 * An export's counters (export_stats.c): shared by every table that serves
 * the export (same id and path), so they survive reloads and live changes of
 * other exports; freed with the last table (or call) that references them.
 */
struct nfs_export_stats {
	struct rpc_acct acct; /* first (rpc.h): NFSv3 calls and NFSv4 operations on the export, errors */
	_Atomic uint64_t read_bytes, write_bytes; /* data READ and WRITTEN (NFSv3, NFSv4) */
};

struct nfs_export {
	const struct export *cfg; /* inside the owning nfs_exports' table */
	uint32_t id;              /* export_id(cfg) */
	struct be_fs *fs;         /* the backend instance serving it */
	struct nfs_export_stats *st; /* referenced; never NULL in a built table */
};

struct nfs_gone_work;

struct nfs_exports {
	atomic_uint refs;
	struct export_table table; /* owned */
	struct nfs_export *v;
	unsigned n;
	struct nfs_gone_work *gone; /* swapped out with exports gone: their hooks, run at the last put */
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
/*
 * Main thread, before serving: gone(e) is called on a worker for each export e that a table swap
 * (nfs_exports_install()) leaves out, once the last call on the old table has ended, with that
 * table still kept (e->fs usable): the protocol keeping state for clients (NLM; NFSv4 to come) releases what it holds on
 * e. Not at shutdown. 0, or -1 (NFS_GONE_HOOKS already registered).
 */
int nfs_export_gone_hook(void (*gone)(const struct nfs_export *e));
/*
 * Main thread, before serving: leave(e) is called at once, on the thread that swaps the table (or
 * runs rnfsctl unlock --export), for each export e leaving (or unlocked), before the calls still
 * running on the old table have ended: for work that holds the old table and would otherwise delay
 * the gone hooks until it ends by itself (NFSv4's asynchronous COPY). Must not block. 0, or -1.
 */
int nfs_export_leave_hook(void (*leave)(const struct nfs_export *e));
/* Loop thread: the hooks run for the served export at path as if it had gone (knfsd's
 * unlock_filesystem); the export stays. 0 (queued), ENOENT (not exported) or ENOMEM. */
int nfs_export_unlock(const char *path);
/* The exports of old that cur lacks (by id), at most max into out: how many. */
unsigned nfs_exports_gone(const struct nfs_exports *old, const struct nfs_exports *cur,
			  const struct nfs_export **out, unsigned max);
/* exports(5) "secure" is met: a source port below 1024, a local (AF_UNIX)
 * peer, or a transport whose ports carry no privilege (RDMA; rpc/xprt.h). */
bool nfs_conn_secure(const struct rpc_conn *conn);
/*
 * Is this caller admitted to e? 0; EACCES: not a client of e, or "secure" and not
 * a privileged port; EPERM: a client, but its credential flavor is not in e's
 * sec= list, or its connection's transport security not in xprtsec=. *opts is
 * set unless EACCES.
 */
int nfs_export_admit(const struct nfs_export *e, const struct rpc_call *c, const struct export_opts **opts);
/* The EXPORT_SEC_* bit of the caller's flavor (RPCSEC_GSS: by its service, RFC 2203 §5). */
uint32_t nfs_call_sec(const struct rpc_call *c);

/* ---- export_stats.c ---- */

/* A fresh block (one reference), or NULL. */
struct nfs_export_stats *nfs_export_stats_new(void);
/* Any thread, during a call on e: an NFSv4 operation (the RPC layer counts NFSv3 calls through
 * rpc_call_acct()), and data moved. No lock, no allocation. */
void nfs_export_count_op(const struct nfs_export *e, bool error);
void nfs_export_count_io(const struct nfs_export *e, uint64_t read, uint64_t written);
/* Main thread, before serving: the "export_stats" section of the statistics (JSON, Prometheus). */
int nfs_export_stats_section_add(void);

/* ---- pnfs_ds.c ---- */

/* The NFSv3 procedures a flexfiles client sends a data server (RFC 8435 §2.2). */
enum nfs_ds_op { NFS_DS_READ, NFS_DS_WRITE, NFS_DS_COMMIT, NFS_DS_OPS };
/* Any thread, at the end of an NFSv3 READ, WRITE or COMMIT on e (NULL: none): counted if e has pnfs=
 * (a data server's export: the metadata server's handles are valid on it); bytes moved. */
void nfs_pnfs_ds_count(const struct nfs_export *e, enum nfs_ds_op op, bool error, uint64_t bytes);
struct nfs_pnfs_ds_stats {
	uint64_t calls[NFS_DS_OPS], errors, read_bytes, write_bytes; /* since start */
};
void nfs_pnfs_ds_stats(struct nfs_pnfs_ds_stats *out);
/* Main thread, before serving: the "pnfs_ds" section (JSON, Prometheus). */
int nfs_pnfs_ds_section_add(void);

/* ---- cred.c ---- */

/* Squash rules of exports(5): AUTH_NONE and all_squash -> anon, root_squash maps 0 -> anon. */
void nfs_cred_map(const struct rpc_cred *cred, const struct export_opts *o, struct be_cred *out);

/* ---- errmap.c ---- */

/*
 * The status numbers NFSv3 and NFSv4 share: RFC 1813 §2.6 nfsstat3, which
 * RFC 8881 §15.1 nfsstat4 keeps for every error both name (JUKEBOX is
 * NFS4ERR_DELAY), and the three only NFSv3 has (NODEV, REMOTE, NOT_SYNC).
 * Each version turns them into its own status (nfs3.h, nfs4.h).
 */
enum nfs_stat {
	NFS_ST_OK = 0,
	NFS_ST_PERM = 1,
	NFS_ST_NOENT = 2,
	NFS_ST_IO = 5,
	NFS_ST_NXIO = 6,
	NFS_ST_ACCES = 13,
	NFS_ST_EXIST = 17,
	NFS_ST_XDEV = 18,
	NFS_ST_NODEV = 19, /* NFSv3 only */
	NFS_ST_NOTDIR = 20,
	NFS_ST_ISDIR = 21,
	NFS_ST_INVAL = 22,
	NFS_ST_FBIG = 27,
	NFS_ST_NOSPC = 28,
	NFS_ST_ROFS = 30,
	NFS_ST_MLINK = 31,
	NFS_ST_NAMETOOLONG = 63,
	NFS_ST_NOTEMPTY = 66,
	NFS_ST_DQUOT = 69,
	NFS_ST_STALE = 70,
	NFS_ST_REMOTE = 71, /* NFSv3 only */
	NFS_ST_BADHANDLE = 10001,
	NFS_ST_NOT_SYNC = 10002, /* NFSv3 only */
	NFS_ST_BAD_COOKIE = 10003,
	NFS_ST_NOTSUPP = 10004,
	NFS_ST_TOOSMALL = 10005,
	NFS_ST_SERVERFAULT = 10006,
	NFS_ST_JUKEBOX = 10008,
};

/* errno (or BE_E*) -> enum nfs_stat; an unexpected one is SERVERFAULT (logged, rate-limited). */
uint32_t nfs_errno_to_stat(int err);

/* ---- read_pipe.c ---- */

/* count bytes at most of f from offset into c's payload pipe (rpc_payload_pipe):
 * the backend's answer (*done bytes, counted as piped), or EOPNOTSUPP where the
 * transport has no pipe for it or the backend cannot (then the caller copies). */
int nfs_read_piped(struct rpc_call *c, struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags,
		   uint64_t offset, uint32_t count, size_t *done, bool *eof, struct be_attr *post);

/* ---- io.c ---- */

/* Room for up to want bytes of bulk reply data (READ, READLINK, READ_PLUS): the call's payload
 * area, else carved from the unused end of the reply buffer. *got may be less than want (even 0). */
void *nfs_bulk_buf(struct rpc_call *c, uint32_t want, uint32_t *got);

/* The write verifier of WRITE and COMMIT (RFC 1813 §3.3.7 writeverf3, RFC 8881 §18.32.3
 * verifier4; the same bytes for both versions): changes with every daemon start. */
#define NFS_WRITE_VERF_SIZE 8u
extern uint8_t nfs_write_verf[NFS_WRITE_VERF_SIZE];
/* Process start (the service's init): a new write verifier. */
void nfs_write_verf_init(void);

/* ---- deleg_hook.c ---- */

/*
 * Delegations are NFSv4's (nfs/v4/ops/nfs4_proc_deleg.c); NFSv3 and NLM
 * calls that conflict with one ask through this hook, which NFSv4 sets when
 * its delegation table is ready. Without it (NFSv4 off, or not started)
 * nothing is delegated and every check is clear. The answers are neutral:
 * each caller answers WAIT in its own protocol (NFSv3 NFS3ERR_JUKEBOX, NLM
 * NLM4_DENIED_GRACE_PERIOD). Checks come from any worker; the hook is set
 * once, before serving.
 */
enum nfs_deleg_access {
	NFS_DELEG_READ,  /* READ: conflicts with write delegations */
	NFS_DELEG_WRITE, /* WRITE, SETATTR: with any */
	NFS_DELEG_NS,    /* REMOVE, RENAME, LINK of the file: with any */
	NFS_DELEG_LOCK,  /* NLM LOCK / TEST: with any */
};
/* What a change does to a directory: which CB_NOTIFY (RFC 8881 §20.4.1 notify_type4) tells it to a
 * directory delegation's holder instead of a recall (OTHER: none; recalled). ATTRS: the directory's
 * own attributes set (NOTIFY4_CHANGE_DIR_ATTRS). */
enum nfs_dir_change { NFS_DIR_OTHER, NFS_DIR_ADD, NFS_DIR_REMOVE, NFS_DIR_RENAME, NFS_DIR_ATTRS };
/* A change made, to tell (nfs_deleg_dir_note). RENAME: within one directory (across two, the source
 * is told a REMOVE, the target an ADD: RFC 8881 §18.26.4). */
struct nfs_dir_note {
	enum nfs_dir_change kind; /* ADD, REMOVE, RENAME, ATTRS */
	const char *name;         /* the entry added or removed (RENAME: its old name; ATTRS: NULL) */
	const char *newname;      /* RENAME: its new name */
	bool replaced;            /* ADD, RENAME: an existing entry of the (new) name was replaced */
	const struct be_attr *attrs; /* ATTRS: the directory's attributes after the change */
};
enum nfs_deleg_verdict {
	NFS_DELEG_CLEAR, /* go ahead */
	NFS_DELEG_WAIT,  /* a conflicting delegation is being recalled: try again later */
	NFS_DELEG_WORKER, /* getattr on the receiving thread: it would wait, run it on a worker */
};
struct nfs_deleg_hook {
	/* Is anything delegated now? (a hint without a lock) */
	bool (*any)(void);
	/* Recall other clients' conflicting delegations of the file (its handle's bytes). */
	enum nfs_deleg_verdict (*recall)(const uint8_t *fkey, uint32_t fkey_len, enum nfs_deleg_access acc);
	/* The same for the regular file (or delegated directory) dir/name of exp, looked up as cr, if there
	 * is one (NFS_DELEG_NS). removed: the name goes with the file (REMOVE, the target a RENAME
	 * replaces), not just moves (a RENAME's source): then the pNFS layouts of it are recalled too
	 * (RFC 8881 §12.5.5, never waits; one lookup for both). */
	enum nfs_deleg_verdict (*recall_at)(const struct nfs_export *exp, const struct be_cred *cr,
					    const struct be_obj *dir, const char *name, bool removed);
	/* GETATTR of the regular file (RFC 8881 §10.4.3): while an NFSv4 client holds a
	 * write delegation of it, *attr gets the holder's size (and changed times) by
	 * CB_GETATTR; only where may_wait (a worker), else NFS_DELEG_WORKER. */
	enum nfs_deleg_verdict (*getattr)(const uint8_t *fkey, uint32_t fkey_len, bool may_wait,
					  struct be_attr *attr);
	/* Is any directory delegated now? (a hint without a lock) */
	bool (*dir_any)(void);
	/* The entries of the directory (its handle's bytes) are about to change: NFSv4 clients'
	 * directory delegations of it are recalled (RFC 8881 §10.9.1), but those whose holders were
	 * granted the notification of ch (an entry added, removed), told instead through dir_note once
	 * it is made. */
	enum nfs_deleg_verdict (*dir_changed)(const uint8_t *fkey, uint32_t fkey_len, enum nfs_dir_change ch);
	void (*dir_note)(const uint8_t *fkey, uint32_t fkey_len, const struct nfs_dir_note *n);
};
/* NFSv4 at start: h (static, never freed) answers the checks below (NULL: none,
 * nothing delegated). Returns the hook it replaces (tests put it back). */
const struct nfs_deleg_hook *nfs_deleg_hook_set(const struct nfs_deleg_hook *h);
bool nfs_deleg_any(void);
enum nfs_deleg_verdict nfs_deleg_recall(const uint8_t *fkey, uint32_t fkey_len, enum nfs_deleg_access acc);
enum nfs_deleg_verdict nfs_deleg_recall_at(const struct nfs_export *exp, const struct be_cred *cr,
					   const struct be_obj *dir, const char *name, bool removed);
enum nfs_deleg_verdict nfs_deleg_getattr(const uint8_t *fkey, uint32_t fkey_len, bool may_wait, struct be_attr *attr);
/* CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK change the directory dir: its
 * directory delegations are recalled first (NFSv3: NFS3ERR_JUKEBOX while they are out), but for an
 * entry added or removed (ch) those whose holders are told by nfs_deleg_dir_note() once it is made. */
bool nfs_deleg_dir_any(void);
enum nfs_deleg_verdict nfs_deleg_dir_changed(const uint8_t *fkey, uint32_t fkey_len, enum nfs_dir_change ch);
void nfs_deleg_dir_note(const uint8_t *fkey, uint32_t fkey_len, const struct nfs_dir_note *n);
/* nfs_deleg_dir_note of an entry added or removed. */
void nfs_deleg_dir_note1(const uint8_t *fkey, uint32_t fkey_len, enum nfs_dir_change kind, const char *name);

/*
 * pNFS layouts are NFSv4's too (nfs/v4/ops/nfs4_layout_recall.c): an NFSv3
 * WRITE or SETATTR of the size tells it through this hook, which NFSv4 sets
 * when it is a metadata server, and it recalls the layouts of the file
 * that clients at other addresses hold (RFC 8881 §12.5.5). The call never
 * waits: the NFSv3 operation goes on (tight coupling, RFC 8435 §2.2: the
 * data servers write this very file). peer: the caller's address (NULL:
 * unknown). Without the hook nothing happens. (An NFSv3 REMOVE, or RENAME
 * over a file, recalls through the delegation hook's recall_at, removed:
 * one lookup of the name for both.)
 */
typedef void (*nfs_layout_hook_fn)(const uint8_t *fkey, uint32_t fkey_len, const struct sockaddr *peer);
/* Returns the hook it replaces. */
nfs_layout_hook_fn nfs_layout_hook_set(nfs_layout_hook_fn fn);
void nfs_layout_conflict(const uint8_t *fkey, uint32_t fkey_len, const struct sockaddr *peer);
/* Is the hook set (NFSv4 is a metadata server: layouts may be held)? Name changes then run on a
 * worker, where recall_at may look the name up as the caller. */
bool nfs_layout_mds(void);

#endif
