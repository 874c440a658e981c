/*
 * nfs4.h - NFSv4 (RFC 7530/7531, RFC 8881, RFC 7862/7863): what every
 * operation shares (struct nfs4_svc, objects, the pseudo file system's glue),
 * and a map of nfs/v4/. A call flows xdr/ -> compound/ -> ops/ -> state/ and
 * the backend; cb/ sends calls the other way; recovery/ keeps what survives
 * a restart. The server's live state (nfs4_server.h) is owned by the NFS
 * service (nfs/nfs_service.c) and reaches the operations through the
 * COMPOUND's service state (nfs4_srv(x)), never through a global.
 *
 * nfs4_server.c         the live state (struct nfs4_server): client table, open state table, their
 *                       settings, the server's name; lease expiry
 * nfs4_setup.c          setting it up and releasing it for its owner (the NFS service): the hooks
 *                       into the modules below, the lease-expiry timer
 *
 * xdr/       the wire format, pure
 *   nfs4_const.h        protocol numbers (operations, nfsstat4, attributes)
 *   nfs4_xdr.c          the COMPOUND header, bitmap4, names, handles, simple arguments
 *   nfs4_xdr_state.c    state and I/O operations (SETCLIENTID .. LOCK, READ, WRITE)
 *   nfs4_xdr_session.c  NFSv4.1 session operations (EXCHANGE_ID .. BIND_CONN_TO_SESSION)
 *   nfs4_xdr_mod.c      CREATE, LINK, REMOVE, RENAME, SETATTR, VERIFY (nfs4_mod.h)
 *   nfs4_xdr_v42.c      NFSv4.2 and xattr operations (nfs4_v42.h)
 *   nfs4_layout_xdr.c   pNFS flexible files: ff_layout4, ff_device_addr4, the layout operations
 *                       (standalone: also the tests' and the fuzzer's)
 *   nfs4_attr.c         fattr4 out: supported attributes, struct be_attr -> attrlist4
 *   nfs4_sattr.c        fattr4 in: what a client sets -> struct be_sattr
 *   nfs4_owner.c        owner/owner_group strings <-> ids
 * compound/  the engine
 *   nfs4_compound.c     decode, run and encode each operation; the per-worker arena (pure)
 *   nfs4_op_table.c     the operation table with each operation's flags, and the RPC program
 *                       (NULL, COMPOUND: the server it acts on, the counters it feeds)
 *   nfs4_stats.c        per-operation counters and state gauges
 * ops/       the operations, over state/ and the backend
 *   nfs4_call.c         one COMPOUND's service state: the server, exports, handles -> objects;
 *                       errno -> nfsstat4; the caller's identity, the grace verdict
 *   nfs4_sid.c          the stateid helpers the operations share: current stateid, resolving,
 *                       whose client, lease renewal, 4.0 seqid verdicts
 *   nfs4_pseudo.c       the pseudo file system's namespace (pure)
 *   nfs4_proc_fh.c      PUTFH, GETFH, SAVEFH, RESTOREFH
 *   nfs4_proc_ns.c      PUTROOTFH, PUTPUBFH, LOOKUP, LOOKUPP, SECINFO(_NO_NAME)
 *   nfs4_proc_attr.c    GETATTR, ACCESS, READLINK
 *   nfs4_proc_dir.c     READDIR
 *   nfs4_proc_mod.c     CREATE, LINK, REMOVE, RENAME, SETATTR, VERIFY, NVERIFY
 *   nfs4_dirlock.c      one change at a time per directory (atomic change_info4)
 *   nfs4_proc_session.c EXCHANGE_ID, CREATE_SESSION, SEQUENCE, DESTROY_*, RECLAIM_COMPLETE
 *   nfs4_proc_state.c   SETCLIENTID(_CONFIRM), RENEW, OPEN_CONFIRM, OPEN_DOWNGRADE, CLOSE,
 *                       TEST_STATEID, FREE_STATEID
 *   nfs4_proc_open.c    OPEN
 *   nfs4_proc_io.c      READ, WRITE, COMMIT
 *   nfs4_proc_lock.c    LOCK, LOCKT, LOCKU, RELEASE_LOCKOWNER
 *   nfs4_lock_notify.c  blocking-lock waiters at run time (CB_NOTIFY_LOCK)
 *   nfs4_proc_deleg.c   granting, recalling and returning delegations (DELEGRETURN, ..)
 *   nfs4_proc_dirdeleg.c GET_DIR_DELEGATION: recall-only directory delegations
 *   nfs4_deleg_watch.c  the backend's change watches of delegated files and directories
 *   nfs4_proc_cb.c      BIND_CONN_TO_SESSION, BACKCHANNEL_CTL, the 4.0 callback probe
 *   nfs4_proc_v42.c     SEEK, ALLOCATE, DEALLOCATE, READ_PLUS
 *   nfs4_proc_copy.c    COPY, CLONE, OFFLOAD_STATUS, OFFLOAD_CANCEL
 *   nfs4_copy_async.c   asynchronous COPY at run time (threads, CB_OFFLOAD)
 *   nfs4_proc_xattr.c   GETXATTR, SETXATTR, LISTXATTRS, REMOVEXATTR (RFC 8276)
 *   nfs4_proc_layout.c  pNFS metadata server: GETDEVICEINFO, LAYOUTGET, LAYOUTRETURN, LAYOUTCOMMIT,
 *                       LAYOUTERROR, LAYOUTSTATS; the data servers (nfs4_pnfs.h)
 *   nfs4_layout_recall.c pNFS recalls: conflicts, CB_LAYOUTRECALL, revocation, NFSv3's hook
 * state/     the server's tables as plain functions (no sockets, no backend calls;
 *            the client and stateid tables hold a mutex, the others their caller's)
 *   nfs4_clients.c      client records and NFSv4.1 sessions (struct nfs4_ctab)
 *   nfs4_stateid.c      stateids, open and lock owners, opens, locks (struct nfs4_stab)
 *   nfs4_deleg.c        delegations (struct nfs4_dtab)
 *   nfs4_lockwait.c     waiters for blocking locks
 *   nfs4_offload.c      asynchronous copies and the copy workers' shares
 *   nfs4_layout.c       pNFS layout stateids per client and file (struct nfs4_ltab)
 * cb/        the callback client
 *   nfs4_cb.c           callback paths at run time: calls from the loop thread, probes
 *   nfs4_cb_state.c     a callback path's state machine and the back channel's slot (pure)
 *   nfs4_cb_xdr.c       XDR of the callback program, universal addresses (pure)
 *   nfs4_cb_ops.c       CB_OFFLOAD and CB_NOTIFY_LOCK
 * recovery/
 *   nfs4_recovery.c     stable client records (state_dir/nfs4-clients) and the grace period
 *
 * The version is registered with the RPC layer (and rpcbind) unless
 * "[nfsv4] enable = no" (rnfsd.conf(5); on by default).
 */
#ifndef RNFSD_NFS4_H
#define RNFSD_NFS4_H

#include "nfs/v4/nfs4_server.h"
#include "nfs/v4/xdr/nfs4_attr.h"
#include "nfs/v4/compound/nfs4_compound.h"
#include "nfs/v4/state/nfs4_deleg.h"
#include "nfs/v4/xdr/nfs4_owner.h"
#include "nfs/v4/ops/nfs4_pseudo.h"
#include "nfs/v4/recovery/nfs4_recovery.h"
#include "nfs/v4/xdr/nfs4_xdr_session.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"
#include "rpc/rpc.h"

/* Export id of pseudo directory handles (their backend bytes say which). */
#define NFS4_PSEUDO_EXPORT_ID 0u
/* Exports in one client's pseudo file system. */
#define NFS4_SVC_MAX_EXPORTS 1024u
/* What GETATTR announces (RFC 8881 §5.8.2.20-21); the lease: nfs4_server.h. */
#define NFS4_MAX_IO (1u << 20)
/* READLINK's buffer without an RPC call (tests). */
#define NFS4_LINK_MAX 4096u

/* ---- nfs4_call.c ---- */

/* One COMPOUND's service state (the worker thread's, ctx->priv). */
struct nfs4_svc {
	struct nfs4_server *srv; /* the live state the COMPOUND acts on (nfs4_server.h) */
	struct rpc_call *call;   /* NULL in tests: every export admitted, credential zero */
	struct nfs_exports *tbl; /* reference for the whole COMPOUND */
	struct be_fs *last_fs;   /* the backend used last (its per-thread state is ended) */
	bool exps_built;
	unsigned nexps;
	struct nfs4_pseudo_exp exps[NFS4_SVC_MAX_EXPORTS];
	char path[NFS4_PSEUDO_PATH_MAX];  /* the pseudo directory last opened */
	char path2[NFS4_PSEUDO_PATH_MAX]; /* a second one (LOOKUP's result, LOOKUPP's parent) */
	char link[NFS4_LINK_MAX];
	/* The COMPOUND's SEQUENCE (nfs4_proc_session.c). */
	bool seq_new;             /* a slot was taken: nfs4_sequence_done() at the end */
	uint8_t seq_sid[NFS4_SESSIONID_SIZE];
	uint32_t seq_slot;
	bool seq_cachethis;
	uint32_t seq_xprtsec;     /* EXPORT_XPRTSEC_* every export admitted so far takes (its reply may go there) */
	uint64_t clientid;
	uint8_t replay[NFS4_STATE_MAX_CACHED];
	uint8_t owner[NFS4_OWNER_MAX]; /* a client's co_ownerid, for its stable record (nfs4_recovery.h) */
	/* RFC 8881 §16.2.3.1.2: the COMPOUND's current stateid (nfs4_proc_state.c). */
	bool cur_sid_set;
	struct nfs4_stateid cur_sid;
	bool saved_sid_set;           /* SAVEFH's copy of it, which RESTOREFH brings back */
	struct nfs4_stateid saved_sid;
	bool any_flavor;              /* SECINFO(_NO_NAME) running: exports admit any flavor */
	const struct nfs_export *op_exp; /* the export the running operation acted on last (its counters) */
};

/* An object a filehandle names. */
struct nfs4_obj {
	enum { NFS4_OBJ_PSEUDO, NFS4_OBJ_EXPORT } kind;
	const char *path;                /* PSEUDO: its path (in the svc) */
	const struct nfs_export *exp;    /* EXPORT: its export */
	const struct export_opts *opts;  /* the client's options there (NULL without a call) */
	struct be_cred cred;             /* the caller, squashed */
	struct be_obj o;                 /* EXPORT: the object */
	struct be_attr attr;             /* its attributes (PSEUDO: see nfs4_pseudo_attr) */
};

void nfs4_svc_begin(struct nfs4_svc *s, struct nfs4_server *srv, struct rpc_call *c);
void nfs4_svc_end(struct nfs4_svc *s);
/* The server the running COMPOUND acts on: its client records (->ctab), open state (->stab), lease. */
static inline struct nfs4_server *nfs4_srv(const struct nfs4_ctx *x)
{
	return ((const struct nfs4_svc *)x->priv)->srv;
}
/* The caller as a client record's principal (RFC 8881 §18.35.5, RFC 7530 §16.33.5): for AUTH_SYS its uid
 * and gid (as knfsd compares credentials); RPCSEC_GSS a keyed hash of the principal's name; AUTH_NONE
 * one principal of its own; 0 without an RPC call (unit tests). */
uint64_t nfs4_principal(const struct nfs4_ctx *x);
/* The principal and the host address of the caller (a new client record's shares). */
void nfs4_who(const struct nfs4_ctx *x, struct nfs4_who *who);
/* The grace period's verdict (nfs4_recovery.h) for an operation of this client. */
uint32_t nfs4_grace_for(const struct nfs4_ctx *x, enum nfs4_grace_op op, uint64_t clientid, bool is_reclaim);
const struct nfs4_pseudo_exp *nfs4_svc_exports(struct nfs4_svc *s, unsigned *n);
uint32_t nfs4_obj_open(struct nfs4_svc *s, const struct nfs_fh *fh, struct nfs4_obj *ob);
uint32_t nfs4_obj_root(struct nfs4_svc *s, unsigned idx, struct nfs4_obj *ob);
void nfs4_obj_put(struct nfs4_obj *ob);
/* The security flavors of ob for this client, in preference order (RFC 8881 §2.6.2: SECINFO's
 * answer): an export's sec=, a pseudo directory's the union of the exports' beneath it. */
void nfs4_obj_sec(struct nfs4_svc *s, const struct nfs4_obj *ob, struct nfs4_sec_list *l);
/* Does fh take the call's flavor (RFC 8881 §2.6.3.1.1)? NFS4_OK or NFS4ERR_WRONGSEC; a handle that
 * names nothing passes (the operation using it answers BADHANDLE or STALE). */
uint32_t nfs4_fh_sec_check(struct nfs4_svc *s, const struct nfs_fh *fh);
/* nfs4_fh_sec_check of the current filehandle: the engine's sec_check hook (nfs4_compound.h). */
uint32_t nfs4_cur_sec_check(struct nfs4_ctx *x);
bool nfs4_obj_is_root(struct nfs4_svc *s, const struct nfs4_obj *ob);
uint32_t nfs4_fh_pseudo(const char *path, struct nfs_fh *fh);
uint32_t nfs4_fh_obj(const struct nfs4_obj *ob, const struct be_obj *o, struct nfs_fh *fh);
/* The handle (the state tables' file key, as either version wraps it) of the regular file name in
 * dir of exp (with dirs, a directory too), looked up as cr: false if there is none (missing, or not a
 * regular file or directory). */
bool nfs4_name_file_fh(const struct nfs_export *exp, const struct be_cred *cr, const struct be_obj *dir, bool dirs,
		       const char *name, struct nfs_fh *fh);
/* The regular file (or, while any is delegated, directory) dir/name of exp (looked up once, as cr) is
 * to lose that name (REMOVE, RENAME, NFSv3 too): the delegations of other clients than clientid (0: none,
 * NFSv3) recalled, NFS4ERR_DELAY while any is out (RFC 8881 §10.4.1, §10.9); then, with layouts, other
 * clients' pNFS layouts of it recalled (§12.5.5, never waits). NFS4_OK when there is no such file. The
 * delegations of the directory dir itself are nfs4_deleg_dir_break's / nfs_deleg_dir_changed's. */
uint32_t nfs4_name_recall(const struct nfs_export *exp, const struct be_cred *cr, const struct be_obj *dir,
			  const char *name, uint64_t clientid, bool layouts);
/* The same, the delegations' recalls counted under cause (nfs4_name_recall's: NFS4_DL_BY_NFS4). */
uint32_t nfs4_name_recall_by(const struct nfs_export *exp, const struct be_cred *cr, const struct be_obj *dir,
			     const char *name, uint64_t clientid, bool layouts, enum nfs4_dl_cause cause);
void nfs4_pseudo_attr(struct nfs4_svc *s, const char *path, struct be_attr *a);
/* errno (or BE_E*) -> nfsstat4 (through nfs/common/errmap.c's shared numbers) */
uint32_t nfs_errno_to_nfsstat4(int err);

/* ---- nfs4_op_table.c ---- */

/* The NFSv4 operation table, indexed by nfs_opnum4 ([NFS4_OP_COUNT]). */
extern const struct nfs4_op nfs4_ops[NFS4_OP_COUNT];
/* Program 100003 version 4: NULL and COMPOUND (RFC 7530 §16.1, §16.2). */
extern const struct rpc_version nfs4_version;
/* Before serving: the server every COMPOUND acts on (the NFS service's, nfs/nfs_service.c). */
void nfs4_program_serve(struct nfs4_server *srv);
/* COMPOUND's execute step with another operation table (tests). */
enum rpc_proc_status nfs4_compound_with(struct rpc_call *c, const struct nfs4_op *ops);

/* ---- nfs4_proc_fh.c ---- */

uint32_t nfs4_putfh_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_getfh_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_getfh_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_savefh_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_restorefh_exec(struct nfs4_ctx *x, void *args, void *res);

struct nfs4_getfh_res {
	struct nfs_fh fh;
};

/* ---- nfs4_proc_ns.c ---- */

uint32_t nfs4_putrootfh_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_lookup_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_lookupp_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_secinfo_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_secinfo_nn_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_secinfo_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);

struct nfs4_secinfo_res {
	struct nfs4_sec_list sec;
};

/* ---- nfs4_proc_attr.c ---- */

uint32_t nfs4_getattr_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_getattr_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_access_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_access_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_readlink_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_readlink_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);

struct nfs4_getattr_res {
	struct nfs4_bitmap req;
	struct be_attr attr;
	struct nfs_fh fh;
	uint64_t mounted_on_fileid;
	bool has_sf;            /* sf gathered: space or file counts (or clone_blksize) were asked */
	struct be_statfs sf;
	struct nfs4_fs_facts facts;
};
struct nfs4_access_res {
	uint32_t supported, access;
};
struct nfs4_readlink_res {
	const uint8_t *data;
	uint32_t len;
};
/* The fattr4 inputs for an object (GETATTR, READDIR entries). */
void nfs4_attr_src_fill(const struct nfs4_ctx *x, struct nfs4_attr_src *src, const struct be_attr *a,
			const struct nfs_fh *fh, uint64_t mounted_on_fileid);
/* RFC 8881 §18.7.3: write-only attributes may not be asked for. */
bool nfs4_attr_req_ok(const struct nfs4_bitmap *req);
/* The NFSv4.2 facts of ob's file system (sf: its statfs, or NULL: no clone_blksize). */
void nfs4_fs_facts_of(const struct nfs4_obj *ob, const struct be_statfs *sf, struct nfs4_fs_facts *f);
/* An export's fsid as NFSv4 shows it: the export id, so each export is its own file system. */
void nfs4_attr_export_fsid(const struct nfs4_obj *ob, struct be_attr *a);

/* ---- nfs4_proc_session.c ---- */

uint32_t nfs4_exchange_id_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_exchange_id_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_create_session_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_create_session_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_sequence_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_sequence_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
void nfs4_sequence_done(struct nfs4_ctx *x, const struct xdr_enc *e);
uint32_t nfs4_destroy_session_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_destroy_clientid_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_reclaim_complete_exec(struct nfs4_ctx *x, void *args, void *res);

struct nfs4_create_session_res {
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t sequence;
	uint32_t flags; /* csr_flags: CONN_BACK_CHAN when the connection became the back channel */
	struct nfs4_chan_attrs fore, back;
};
struct nfs4_sequence_res {
	struct nfs4_sequence_args args;
	uint32_t highest, target;
	uint32_t status_flags; /* RFC 8881 §18.46.3 (nfs4_cb.h) */
};

/* ---- nfs4_sid.c: the stateid helpers the operations share ---- */

uint32_t nfs4_regular_check(const struct nfs4_ctx *x, const struct nfs4_obj *ob);
void nfs4_cur_stateid_set(struct nfs4_ctx *x, const struct nfs4_stateid *sid);
/* PUTFH, PUTROOTFH, PUTPUBFH: a new current filehandle has no current stateid
 * (RFC 8881 §16.2.3.1.2; as knfsd's OP_CLEAR_STATEID): using it is BAD_STATEID. */
void nfs4_cur_stateid_clear(struct nfs4_ctx *x);
/* SAVEFH saves the current stateid with the filehandle, RESTOREFH restores both (as knfsd). */
void nfs4_cur_stateid_save(struct nfs4_ctx *x);
void nfs4_cur_stateid_restore(struct nfs4_ctx *x);
uint32_t nfs4_stateid_resolve(struct nfs4_ctx *x, const struct nfs4_stateid *in, struct nfs4_stateid *out);
void nfs4_stateid_renew(struct nfs4_ctx *x, const struct nfs4_stateid *sid);
/* Whose a stateid must be (RFC 8881 §8.2.2): 4.1+ the session's client, 4.0 the stateid's own (nfs4_stateid.h). */
uint64_t nfs4_sid_client(const struct nfs4_ctx *x, const struct nfs4_stateid *sid);
uint32_t nfs4_op_client(struct nfs4_ctx *x, uint64_t clientid40, uint64_t *clientid);
/* A 4.0 owner's seqid verdict: *done (answer the returned status now; *replay: with rp's body). */
uint32_t nfs4_seqid_verdict(enum nfs4_seqid_action act, const struct nfs4_seqid_replay *rp, bool *replay,
			    uint32_t err, bool *done);

/* ---- nfs4_proc_state.c ---- */

uint32_t nfs4_setclientid_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_setclientid_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_setclientid_confirm_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_renew_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_open_confirm_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_open_downgrade_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_close_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_sid_op_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_test_stateid_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_test_stateid_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_free_stateid_exec(struct nfs4_ctx *x, void *args, void *res);

struct nfs4_setclientid_res {
	uint64_t clientid;
	uint8_t confirm[8];
	struct nfs4_cb_info inuse; /* NFS4ERR_CLID_INUSE: the record's callback address (client_using) */
};
struct nfs4_sid_op_res { /* OPEN_CONFIRM, OPEN_DOWNGRADE, CLOSE */
	bool replay; /* 4.0: rp is the answer */
	struct nfs4_seqid_replay rp;
	struct nfs4_stateid sid;
};
struct nfs4_test_stateid_res {
	uint32_t n;
	uint32_t status[NFS4_TEST_STATEID_MAX];
};

/* ---- nfs4_proc_open.c ---- */

uint32_t nfs4_open_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_open_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
/* A client met a descriptor bound (status RESOURCE or DELAY from the open state table): one
 * rate-limited line naming the peer, the client and what. Returns status. */
uint32_t nfs4_bound_note(const struct nfs4_ctx *x, uint64_t clientid, const char *what, uint32_t status);

struct nfs4_open_op_res {
	bool replay; /* 4.0: rp is the answer */
	struct nfs4_seqid_replay rp;
	bool seqid_done; /* 4.0: the encode step records the reply as the owner's */
	uint64_t clientid;
	const uint8_t *owner; /* in the call's arguments */
	uint32_t owner_len, seqid;
	bool created;
	struct nfs4_stateid sid;
	struct nfs4_cinfo cinfo;    /* atomic: RFC 8881 §3.3.6 (nfs4_dirlock.c) */
	uint32_t rflags;
	struct nfs4_bitmap attrset;
	uint32_t deleg, why;
	struct nfs4_stateid dsid; /* OPEN_DELEGATE_READ / _WRITE (and RFC 9754's *_ATTRS_DELEG) */
};

/* ---- nfs4_proc_deleg.c: delegations (RFC 8881 §10.4; the table: nfs4_deleg.h) ---- */

/* nfs4_server_init() (nfs4_setup.c): the table (its stateids name the boot time), the lease a recall waits. */
void nfs4_deleg_init(uint32_t boot, uint32_t lease, struct nfs4_stab *stab);
/* [nfsv4] delegations: enabled (no: none), write (yes: write ones too; default read: read ones only). */
void nfs4_deleg_configure(bool enabled, bool write);
bool nfs4_deleg_enabled(void);
/* A client record went: its delegations with it. */
void nfs4_deleg_client_gone(uint64_t clientid);
/* The delegations on files match() selects are revoked (an export no longer served, nfs4_setup.c). */
unsigned nfs4_deleg_revoke_files(bool (*match)(const uint8_t *key, uint32_t len, void *arg), void *arg);
/* The COMPOUND's client as far as conflicts go: the 4.1 session's, 0 in 4.0. */
uint64_t nfs4_deleg_caller(const struct nfs4_ctx *x);
/* OPEN succeeded: the delegation it gets, if any (r->deleg, r->dsid; r->why for an unmet 4.1 want). */
struct nfs4_deleg_file {
	struct be_fs *fs;
	const struct be_obj *o;
	const uint8_t *fkey; /* its handle's bytes */
	uint32_t fkey_len;
	struct be_file *f;   /* its open file (a lock test), or NULL */
};
void nfs4_deleg_open(struct nfs4_ctx *x, uint64_t clientid, const struct nfs4_deleg_file *df,
		     const struct nfs4_open_args *a, struct nfs4_open_op_res *r);
/* nfs4_deleg_watch.c: watch the delegated file for local processes' changes
 * (write: its being opened) and, where the backend can, lease it through f
 * (read or write: a local open or truncate waits for the recall); their
 * event recalls its delegations. errno: EAGAIN, the lease is not to be had. */
int nfs4_deleg_watch(struct be_fs *fs, const struct be_obj *o, struct be_file *f, const uint8_t *fkey,
		     uint32_t fkey_len, bool write);
/* Release the leases of files left without delegations (after returns, revocations, purges). */
void nfs4_deleg_watch_sweep(void);
/* Leases held now (the stats' gauge). */
unsigned nfs4_deleg_watch_leases(void);
/* What the watches ask of the delegations, given once by nfs4_deleg_init(): whether a file still has
 * delegations (its watch may go), and to recall them when a local process changed it. */
struct nfs4_deleg_watch_hooks {
	bool (*held)(const uint8_t *fkey, uint32_t fkey_len);
	void (*changed)(const uint8_t *fkey, uint32_t fkey_len);
	/* its lease broken (a local process waits in the kernel); NULL: changed */
	void (*broken)(const uint8_t *fkey, uint32_t fkey_len);
	/* a delegated directory's entry added, removed or renamed (c->kind not OTHER); NULL: changed */
	void (*dir_event)(const uint8_t *fkey, uint32_t fkey_len, const struct be_change *c);
};
void nfs4_deleg_watch_hooks(const struct nfs4_deleg_watch_hooks *h);
/* nfs4_deleg_break(): in nfs4_deleg.h (NFSv3 and NLM reach it through nfs/common's nfs_deleg_recall()). */
/* RENAME's source: the same for the regular file (or delegated directory) dir/name, if there is one. */
uint32_t nfs4_deleg_break_name(struct nfs4_ctx *x, const struct nfs4_obj *dir, const char *name);
/* OPEN CLAIM_DELEGATE_CUR / CLAIM_DELEG_CUR_FH: sid is clientid's delegation of the file. */
uint32_t nfs4_deleg_claim(uint64_t clientid, const struct nfs4_stateid *sid, const uint8_t *fkey, uint32_t fkey_len);
/* READ / WRITE with a delegation stateid of client clientid (nfs4_sid_client()). */
uint32_t nfs4_deleg_check_io(uint64_t clientid, const struct nfs4_stateid *sid, uint32_t minor, const uint8_t *fkey,
			     uint32_t fkey_len, uint32_t access);
uint32_t nfs4_deleg_test(uint64_t clientid, const struct nfs4_stateid *sid);
uint32_t nfs4_deleg_free(uint64_t clientid, const struct nfs4_stateid *sid);
/* SEQUENCE: SEQ4_STATUS_RECALLABLE_STATE_REVOKED while the client has revoked delegations. */
uint32_t nfs4_deleg_seq_flags(uint64_t clientid);
uint32_t nfs4_delegreturn_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_delegpurge_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_deleg_stats(uint64_t *held, uint64_t *recalls, uint64_t *returned, uint64_t *revoked);
/* Delegations clientid has (held, recalled or revoked and not freed): rnfsctl client list. */
unsigned nfs4_deleg_client_count(uint64_t clientid);
/* Files leased for delegations now; grants undone because the lease was refused (EAGAIN). */
void nfs4_deleg_lease_stats(uint64_t *leases, uint64_t *refused);

/* ---- directory delegations (RFC 8881 §10.9; nfs4_proc_deleg.c, nfs4_proc_dirdeleg.c) ---- */

/* [nfsv4] directory-delegations (default no; granted only with [nfsv4] delegations too). */
void nfs4_deleg_dir_configure(bool enabled);
/* Is any directory delegated now? (A hint without a lock.) */
bool nfs4_deleg_dir_any(void);
/* The directory (its handle's bytes) changes through clientid (0: no NFSv4 client: NFSv3, a local
 * process): other clients' directory delegations of it are recalled (RFC 8881 §10.9.1); ch an entry
 * added or removed: those granted NOTIFY4_ADD_ENTRY or NOTIFY4_REMOVE_ENTRY are told of it afterwards
 * (nfs4_deleg_dir_note) instead. NFS4_OK, or NFS4ERR_DELAY while any is outstanding (the change
 * waits). No lock while no directory is delegated. cause: who changes it (the recalls' stats). */
uint32_t nfs4_deleg_dir_changed(const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid, enum nfs_dir_change ch,
				enum nfs4_dl_cause cause);
/* The same for a change of directory dir by the COMPOUND's client (CREATE, OPEN creating, LINK: ADD;
 * REMOVE: REMOVE; RENAME, SETATTR of the directory: OTHER). */
uint32_t nfs4_deleg_dir_break(struct nfs4_ctx *x, const struct nfs_fh *dir, enum nfs_dir_change ch);
/* The change n was made in directory dir (after CREATE, OPEN creating, LINK, REMOVE succeeded): CB_NOTIFY
 * (RFC 8881 §20.4) to the holders granted its notification, a recall for one that cannot be queued
 * (its callback path down, or NFS4_CB_QUEUE calls already waiting for it: §10.9.1 leaves the server
 * free to recall). nfs4_deleg_dir_added: n an entry added. */
void nfs4_deleg_dir_note(const struct nfs_fh *dir, const struct nfs_dir_note *n);
void nfs4_deleg_dir_added(const struct nfs_fh *dir, const char *name);
/* CB_NOTIFYs sent and not yet answered: a gauge, bounded by the callback queues (NFS4_CB_QUEUE a
 * client). Those sent: nfs4_cb_notify_sent(); those that became recalls: the NFS4_DL_BY_NOTIFY cause. */
uint64_t nfs4_deleg_notify_pending(void);
/* GET_DIR_DELEGATION's grant (nfs4_dtab_decide_dir + nfs4_dtab_grant_dir on the server's table):
 * true, *sid and the notifications *granted of want, or false (GDD4_UNAVAIL). attrs: in, the
 * directory attributes asked (gdda_dir_attributes words 0, 1); out, those NOTIFY4_CHANGE_DIR_ATTRS
 * tells (none unless granted: nfs4_dl_dir_want). */
bool nfs4_deleg_grant_dir(uint64_t clientid, uint32_t minor, bool grace, const uint8_t *fkey, uint32_t fkey_len,
			  uint32_t want, uint32_t attrs[2], uint32_t *granted, struct nfs4_stateid *sid);
/* Undo a grant just made (its watch could not be set). */
void nfs4_deleg_ungrant(const struct nfs4_stateid *sid);
/* nfs4_deleg_watch.c: watch the delegated directory for local processes' changes of its entries
 * and attributes (no lease: Linux leases are for regular files). errno on failure. */
int nfs4_deleg_watch_dir(struct be_fs *fs, const struct be_obj *o, const uint8_t *fkey, uint32_t fkey_len);
/* Directory delegations held now, granted and recalled since start (the stats). */
void nfs4_deleg_dir_stats(uint64_t *held, uint64_t *granted, uint64_t *recalls);
/* GET_DIR_DELEGATION (RFC 8881 §18.39, nfs4_proc_dirdeleg.c). */
uint32_t nfs4_get_dir_delegation_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_get_dir_delegation_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);

/* ---- nfs4_proc_lock.c ---- */

uint32_t nfs4_lock_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_lock_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_lockt_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_locku_exec(struct nfs4_ctx *x, void *args, void *res);
uint32_t nfs4_release_lockowner_exec(struct nfs4_ctx *x, void *args, void *res);
/* FREE_STATEID: LOCKS_HELD for a lock stateid whose owner still holds a lock. */
uint32_t nfs4_lock_free_check(struct nfs4_ctx *x, const struct nfs4_stateid *sid);
/* Does owner hold a lock on the file (FREE_STATEID, RELEASE_LOCKOWNER: LOCKS_HELD)? */
bool nfs4_lock_owner_holds(struct be_fs *fs, struct be_file *f, uint64_t owner);

struct nfs4_lock_op_res { /* LOCK, LOCKT, LOCKU */
	bool replay; /* 4.0: rp is the answer */
	struct nfs4_seqid_replay rp;
	bool seqid_done, new_owner; /* 4.0: the encode step records the reply */
	struct nfs4_stateid seq_sid; /* whose owner's sequence it went by */
	uint32_t seqid, lock_seqid;
	uint64_t clientid; /* new_owner: the lock owner (in the call's arguments) */
	const uint8_t *owner;
	uint32_t owner_len;
	bool no_sid; /* LOCKT: no stateid in its result */
	struct nfs4_stateid sid;
	uint64_t d_off, d_len, d_clientid; /* LOCK4denied */
	uint32_t d_type, d_owner_len;
	uint8_t d_owner[NFS4_STAB_OWNER_MAX];
};

/* ---- nfs4_proc_io.c ---- */

uint32_t nfs4_read_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_read_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_write_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_write_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_commit_exec(struct nfs4_ctx *x, void *args, void *res);
/* The file for an I/O on fh (READ, WRITE and the NFSv4.2 data operations): the
 * stateid resolved and checked (an open's file, or the file opened for this call
 * with the anonymous/bypass stateids, then *flags has BE_IO_CHECK_ACCESS); ROFS
 * for writes to a read-only export. *f holds a reference; ob is put by the caller. */
uint32_t nfs4_io_file(struct nfs4_ctx *x, const struct nfs_fh *fh, const struct nfs4_stateid *in, struct nfs4_obj *ob,
		      uint32_t access, struct be_file **f, unsigned *flags);
/* A bulk buffer for read data: the call's payload area (without a call, the svc's). */
uint8_t *nfs4_read_buf(struct nfs4_ctx *x, uint32_t want, uint32_t *got);
void nfs4_commit_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);

struct nfs4_read_res {
	bool eof;
	bool piped; /* the data waits in the call's payload pipe (rpc_payload_pipe), not at data */
	uint8_t *data;
	uint32_t len;
};
struct nfs4_write_res {
	uint32_t count, committed;
};

/* ---- nfs4_proc_dir.c ---- */

uint32_t nfs4_readdir_exec(struct nfs4_ctx *x, void *args, void *res);

/* ---- nfs4_proc_cb.c ---- */

struct nfs4_bind_conn_res {
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t dir; /* CDFS4_* */
};
/* CREATE_SESSION's back channel: records it; the csr_flags to answer. */
uint32_t nfs4_cb_create_session(struct nfs4_ctx *x, const struct nfs4_create_session_args *a,
				const uint8_t sid[NFS4_SESSIONID_SIZE]);
uint32_t nfs4_bind_conn_exec(struct nfs4_ctx *x, void *args, void *res);
void nfs4_bind_conn_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res);
uint32_t nfs4_backchannel_ctl_exec(struct nfs4_ctx *x, void *args, void *res);
/* SETCLIENTID_CONFIRM succeeded: probe the 4.0 client's callback service. */
void nfs4_cb_confirmed40(const struct nfs4_ctx *x, uint64_t clientid);

#endif
