/*
 * nfs4raw.h - the integration tests' one raw NFSv4 client, over rawrpc.c:
 * COMPOUND framing (RFC 7530 §16.2, RFC 8881 §18.46), client set-up for
 * NFSv4.0 (SETCLIENTID/SETCLIENTID_CONFIRM, RFC 7530 §16.33-34) and
 * NFSv4.1/4.2 (EXCHANGE_ID, CREATE_SESSION, RECLAIM_COMPLETE; SEQUENCE on
 * slot 0 of the fore channel), the state and I/O operations a test needs
 * (OPEN with its OPEN_CONFIRM, CLOSE, READ, WRITE, LOCK, LOCKU, SETATTR of
 * the size), a "neighbour" that probes the server from a thread while a
 * test attacks it, and the daemon's descriptor and memory counts.
 *
 * Ownership: a struct n4_client owns its TCP connection (n4_client_close).
 * n4_call() consumes the encode buffer it is given; the reply is the
 * caller's (raw_reply_free). Nothing here calls CHECK: helpers return the
 * COMPOUND status (nfsstat4), or -1 when no well-formed reply came, so a
 * test states what it expects. By default no callbacks are answered:
 * sessions are created without a back channel, and 4.0 clients name a
 * callback address nobody listens on; a test that plays the callback
 * service sets cs_flags / cb_addr and an on_cb hook.
 */
#ifndef RNFSD_TESTS_NFS4RAW_H
#define RNFSD_TESTS_NFS4RAW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tests/integration/rawrpc.h"

/* nfs_opnum4 (RFC 8881 §16.2.2, RFC 7862 §11.2). */
enum n4_op {
	N4_ACCESS = 3, N4_CLOSE = 4, N4_COMMIT = 5, N4_CREATE = 6, N4_DELEGRETURN = 8, N4_GETATTR = 9,
	N4_GETFH = 10, N4_LINK = 11, N4_LOCK = 12, N4_LOCKT = 13, N4_LOCKU = 14, N4_LOOKUP = 15,
	N4_LOOKUPP = 16, N4_NVERIFY = 17, N4_OPEN = 18, N4_OPENATTR = 19, N4_OPEN_CONFIRM = 20,
	N4_OPEN_DOWNGRADE = 21, N4_PUTFH = 22, N4_PUTPUBFH = 23, N4_PUTROOTFH = 24, N4_READ = 25,
	N4_READDIR = 26, N4_READLINK = 27, N4_REMOVE = 28, N4_RENAME = 29, N4_RENEW = 30,
	N4_RESTOREFH = 31, N4_SAVEFH = 32, N4_SECINFO = 33, N4_SETATTR = 34, N4_SETCLIENTID = 35,
	N4_SETCLIENTID_CONFIRM = 36, N4_VERIFY = 37, N4_WRITE = 38, N4_RELEASE_LOCKOWNER = 39,
	N4_BACKCHANNEL_CTL = 40, N4_BIND_CONN_TO_SESSION = 41, N4_EXCHANGE_ID = 42, N4_CREATE_SESSION = 43,
	N4_DESTROY_SESSION = 44, N4_FREE_STATEID = 45, N4_SECINFO_NO_NAME = 52, N4_SEQUENCE = 53,
	N4_TEST_STATEID = 55, N4_DESTROY_CLIENTID = 57, N4_RECLAIM_COMPLETE = 58, N4_ALLOCATE = 59,
	N4_COPY = 60, N4_DEALLOCATE = 62, N4_OFFLOAD_CANCEL = 66, N4_OFFLOAD_STATUS = 67, N4_READ_PLUS = 68,
	N4_SEEK = 69, N4_CLONE = 71,
	/* pNFS: RFC 8881 §18.40-18.44, RFC 7862 §15.6-15.7 */
	N4_GETDEVICEINFO = 47, N4_GETDEVICELIST = 48, N4_LAYOUTCOMMIT = 49, N4_LAYOUTGET = 50, N4_LAYOUTRETURN = 51, N4_LAYOUTERROR = 64,
	N4_LAYOUTSTATS = 65,
	/* RFC 8276 §8.4 */
	N4_GETXATTR = 72, N4_SETXATTR = 73, N4_LISTXATTRS = 74, N4_REMOVEXATTR = 75,
};

/* nfsstat4 values the tests name (RFC 8881 §15.1). */
enum n4_status {
	N4_OK = 0, N4ERR_PERM = 1, N4ERR_NOENT = 2, N4ERR_ACCESS = 13, N4ERR_EXIST = 17, N4ERR_INVAL = 22,
	N4ERR_NOTSUPP = 10004, N4ERR_SERVERFAULT = 10006, N4ERR_DELAY = 10008, N4ERR_DENIED = 10010,
	N4ERR_EXPIRED = 10011, N4ERR_LOCKED = 10012, N4ERR_GRACE = 10013, N4ERR_SHARE_DENIED = 10015,
	N4ERR_WRONGSEC = 10016, N4ERR_CLID_INUSE = 10017, N4ERR_RESOURCE = 10018, N4ERR_NOFILEHANDLE = 10020,
	N4ERR_STALE_CLIENTID = 10022, N4ERR_STALE_STATEID = 10023, N4ERR_OLD_STATEID = 10024,
	N4ERR_BAD_STATEID = 10025, N4ERR_BAD_SEQID = 10026, N4ERR_NOT_SAME = 10027, N4ERR_SAME = 10009,
	N4ERR_LOCKS_HELD = 10037, N4ERR_OPENMODE = 10038, N4ERR_BADXDR = 10036, N4ERR_NO_GRACE = 10033,
	N4ERR_BADSESSION = 10052, N4ERR_BADSLOT = 10053, N4ERR_REQ_TOO_BIG = 10065,
	N4ERR_REP_TOO_BIG = 10066, N4ERR_REP_TOO_BIG_TO_CACHE = 10067, N4ERR_TOO_MANY_OPS = 10070,
	N4ERR_WRONG_CRED = 10082, N4ERR_DELEG_REVOKED = 10087, N4ERR_NXIO = 6, N4ERR_ROFS = 30,
	N4ERR_NOTEMPTY = 66, N4ERR_BADTYPE = 10007, N4ERR_MINOR_VERS_MISMATCH = 10021, N4ERR_SYMLINK = 10029,
	N4ERR_BADOWNER = 10039, N4ERR_NOXATTR = 10095 /* RFC 8276 §8.3 */, N4ERR_ADMIN_REVOKED = 10047,
	N4ERR_TOOSMALL = 10005,
	N4ERR_BADIOMODE = 10049, N4ERR_LAYOUTTRYLATER = 10058, N4ERR_LAYOUTUNAVAILABLE = 10059,
	N4ERR_UNKNOWN_LAYOUTTYPE = 10062 /* RFC 8881 §15.1.10: pNFS */,
	N4ERR_RETRY_UNCACHED_REP = 10068,
};

/* OPEN4_SHARE_ACCESS_* / OPEN4_SHARE_DENY_* (RFC 8881 §18.16.1). */
#define N4_ACCESS_READ 1u
#define N4_ACCESS_WRITE 2u
#define N4_ACCESS_BOTH 3u
#define N4_WANT_NO_DELEG 0x0400u
/* nfs_lock_type4 */
#define N4_READ_LT 1u
#define N4_WRITE_LT 2u

/* stateid4 (RFC 8881 §3.3.12). */
struct n4_sid {
	uint32_t seqid;
	uint8_t other[12];
};

/* One NFSv4 client on one TCP connection (its own, or one it shares: n4_share). */
struct n4_client {
	struct raw_conn c;
	uint16_t port;
	uint32_t minor;          /* 0, 1 or 2 */
	uint32_t xid;
	uint32_t uid, gid;       /* AUTH_SYS credential of every call (0, 0 by default) */
	bool auth_none;          /* send AUTH_NONE instead (uid, gid unused) */
	uint64_t cid;            /* clientid4 */
	uint8_t session[16];     /* 4.1+: sessionid4 */
	uint32_t slot_seq;       /* 4.1+: the last sa_sequenceid sent on slot 0 */
	uint32_t cache_this;     /* 4.1+: sa_cachethis of the next SEQUENCE (then cleared) */
	uint32_t max_resp_cached;/* 4.1+: ca_maxresponsesize_cached CREATE_SESSION asks (default 4096) */
	uint32_t max_resp;       /* 4.1+: ca_maxresponsesize asked (default 1 MiB + 64 KiB) */
	uint32_t max_reqs;       /* 4.1+: ca_maxrequests asked (0: 8) */
	uint32_t got_reqs, got_cached; /* 4.1+: the fore channel's ca_maxrequests and _cached granted */
	char id[128];            /* co_ownerid / SETCLIENTID's id */
	uint8_t verifier[8];     /* kept by n4_exchange_id/n4_setclientid when set (n4_setup: a new one) */
	/* Details a test may choose (n4_connect sets the defaults) and results it may read: */
	uint32_t max_req;        /* 4.1+: ca_maxrequestsize asked (default 1 MiB + 64 KiB) */
	uint32_t cs_flags;       /* 4.1+: csa_flags (default 0; N4_CS_BACK_CHAN: this connection is the back channel) */
	uint32_t cb_prog;        /* csa_cb_program / SETCLIENTID's cb_program (default 0x40000000) */
	bool cb_sys;             /* 4.1+: offer AUTH_SYS (uid 0) before AUTH_NONE for callbacks */
	char cb_addr[64];        /* 4.0: SETCLIENTID's r_addr (empty: 127.0.0.1 port 9, nobody listens) */
	uint32_t cb_ident;       /* 4.0: callback_ident (default 1) */
	uint32_t csr_flags;      /* 4.1+: the last CREATE_SESSION's csr_flags */
	uint32_t seq_flags;      /* 4.1+: the last SEQUENCE's sr_status_flags */
	uint32_t open_rflags;    /* the last n4_open's rflags */
	uint32_t read_eof;       /* the last n4_read's eof */
	uint32_t nres;           /* resarray's count of the last reply */
	uint32_t exid_flags;     /* 4.1+: the last EXCHANGE_ID's eir_flags */
	/* Callback calls arriving on this connection before a reply (a back
	 * channel on the fore connection) go to on_cb, which may answer them
	 * with raw_send_record; without on_cb they are not expected. */
	void (*on_cb)(struct n4_client *k, const uint8_t *msg, size_t len);
	/* Send COMPOUND4args a and receive the reply in a flavor of the test's own (RPCSEC_GSS)
	 * instead of AUTH_SYS / AUTH_NONE; r->body at COMPOUND4res. rpc_arg is the hook's. */
	enum raw_recv_result (*rpc)(struct n4_client *k, const struct xb *a, struct raw_reply *r);
	void *rpc_arg;
	bool own_conn;           /* n4_client_close closes the connection (false for n4_share) */
	unsigned cb_answered;    /* callback calls n4_start_cb's hook answered */
	unsigned cb_recalls;     /* CB_RECALLs n4_cb_count_recalls answered */
};

/*
 * Receive the reply to xid on k's connection (timeout_ms per record), handing
 * the callback calls that come first to k->on_cb (dropped without one): for
 * a k->rpc hook that sends in its own flavor and still plays the callback
 * service on the same connection.
 */
enum raw_recv_result n4_recv_reply(struct n4_client *k, uint32_t xid, struct raw_reply *r, int timeout_ms);

/* A callback call as the server sent it (RFC 5531 §9; CB_COMPOUND, RFC 8881 §20.2, with CB_SEQUENCE
 * first and at most one operation after it). */
struct n4_cb_call {
	uint32_t xid, prog, vers, proc;
	uint32_t cred_flavor;     /* the call's credential flavor (AUTH_SYS 1, AUTH_NONE 0, RPCSEC_GSS 6) */
	uint32_t minor, nops, op; /* CB_COMPOUND: minor version, operations, the first */
	uint8_t sid[16];          /* CB_SEQUENCE's session, slot, seqid */
	uint32_t seqid, slotid;
	uint32_t op2;             /* the operation after CB_SEQUENCE (0: none) */
	uint32_t args_off;        /* where op2's arguments start in the message (op2 0: 0) */
	struct n4_sid dsid;       /* CB_RECALL's stateid and file */
	uint32_t fh_len;
	uint8_t fh[128];
	uint32_t args_len;        /* op2's arguments and what follows them (up to sizeof(args)) */
	uint8_t args[1024];
};
/* Decode a callback CALL message into cc: false if it does not decode. */
bool n4_cb_parse(const uint8_t *buf, size_t len, struct n4_cb_call *cc);
/* The reply n4_cb_answer sends, into b (a test may append an operation's results). */
void n4_xb_cb_reply(struct xb *b, const struct n4_cb_call *cc);
/* Answer cc on c with AUTH_NONE: CB_NULL with nothing, CB_COMPOUND with CB_SEQUENCE4resok echoing
 * it and NFS4_OK for the operation after. 0 or -1. */
int n4_cb_answer(struct raw_conn *c, const struct n4_cb_call *cc);
/* As n4_cb_answer, but a CB_GETATTR (RFC 8881 §20.1.2) is answered with fattr4 {change, size}. */
int n4_cb_answer_getattr(struct raw_conn *c, const struct n4_cb_call *cc, uint64_t change, uint64_t size);

/* csa_flags (RFC 8881 §18.36.1) */
#define N4_CS_BACK_CHAN 0x2u

/* ---- framing ---------------------------------------------------------- */

/* COMPOUND4args header: tag, minor version, numops. */
void n4_hdr(struct xb *a, uint32_t minor, uint32_t numops);
/* Header of k's next COMPOUND of nops operations after SEQUENCE (4.1+: SEQUENCE is added, slot 0). */
void n4_begin(struct n4_client *k, struct xb *a, uint32_t nops);
/* n4_begin, then PUTFH fh: nops counts PUTFH and the operations the caller adds. */
void n4_begin_fh(struct n4_client *k, struct xb *a, uint32_t nops, const uint8_t *fh, uint32_t fh_len);
/* Header of a COMPOUND of op alone, no SEQUENCE (4.1+: RFC 8881 §18.46.3, the operations
 * that may be sent outside a session: EXCHANGE_ID, CREATE_SESSION, BIND_CONN_TO_SESSION, ...). */
void n4_begin_alone(struct n4_client *k, struct xb *a, uint32_t op);
/*
 * Send a (freed here) as k's COMPOUND; the COMPOUND status, or -1 if no
 * well-formed reply came. r->body is at the first result after SEQUENCE's
 * (4.1+: when SEQUENCE succeeded), else at the first result.
 */
int n4_call(struct n4_client *k, struct xb *a, struct raw_reply *r);
/* Send a raw COMPOUND4args (no SEQUENCE added); r->body at the first result. */
int n4_call_raw(struct n4_client *k, const struct xb *a, struct raw_reply *r);
/* The next result's status, or -1 if it is not op's (or the reply ended). */
int n4_res(struct raw_reply *r, uint32_t op);
void n4_xb_sid(struct xb *a, const struct n4_sid *s);
void n4_xd_sid(struct xd *d, struct n4_sid *s);
/* PUTROOTFH and a LOOKUP per component of path: how many operations (a NULL: only counted). */
uint32_t n4_walk(struct xb *a, const char *path);
/* PUTFH fh. */
void n4_xb_putfh(struct xb *a, const uint8_t *fh, uint32_t fh_len);

/* ---- clients ---------------------------------------------------------- */

/* Connect (no client yet) to 127.0.0.1:port with minor version minor. 0 or -1. */
int n4_connect(struct n4_client *k, uint16_t port, uint32_t minor);
/* When set, n4_connect() (and so n4_start(), n4_watch_start()) connects from a
 * reserved port, as a root client must to an export with the default "secure"
 * option (needs root). */
extern bool n4_reserved_ports;
/*
 * Set up a client named id on k's connection: 4.0 SETCLIENTID +
 * SETCLIENTID_CONFIRM; 4.1+ EXCHANGE_ID + CREATE_SESSION (no back channel)
 * + RECLAIM_COMPLETE. The first failing operation's status, 0, or -1.
 */
int n4_setup(struct n4_client *k, const char *id);
/* n4_connect from source address src (another loopback "host", such as "127.0.0.2"). */
int n4_connect_from(struct n4_client *k, uint16_t port, uint32_t minor, const char *src);
/* A client (no set-up yet) with minor version minor on the connection c that
 * another owns (another client's, or a raw one also carrying NFSv3 or NLM),
 * as RPC lets clients share one; closing k leaves the connection open. */
void n4_share(struct n4_client *k, const struct raw_conn *c, uint32_t minor);
/* 4.0: SETCLIENTID (k->verifier, k->cb_prog, k->cb_addr, k->cb_ident): its
 * status; k->cid and the confirm verifier on success. */
int n4_setclientid(struct n4_client *k, const char *id, uint8_t confirm[8]);
/* 4.0: SETCLIENTID_CONFIRM of k->cid: its status. */
int n4_setclientid_confirm(struct n4_client *k, const uint8_t confirm[8]);
/* n4_connect + n4_setup. */
int n4_start(struct n4_client *k, uint16_t port, uint32_t minor, const char *id);
/* n4_start of a 4.1 client whose connection is also its back channel (N4_CS_BACK_CHAN): callbacks
 * are answered NFS4_OK while it calls; returns once the server's probe was answered (so OPEN may
 * grant a delegation), else -1. */
int n4_start_cb(struct n4_client *k, uint16_t port, const char *id);
/* Answer the callback call msg (RPC CALL) on c: CB_NULL, or a CB_COMPOUND's CB_SEQUENCE and the
 * one operation after it, NFS4_OK (what n4_start_cb's hook does). */
void n4_cb_reply_ok(struct raw_conn *c, const uint8_t *msg, size_t len);
/* 4.1+: EXCHANGE_ID alone (k->cid and the sequence CREATE_SESSION needs): its status. */
int n4_exchange_id(struct n4_client *k, const char *id, uint32_t *csr_seq);
/* 4.1+: CREATE_SESSION for k->cid (k->session on success): its status. */
int n4_create_session(struct n4_client *k, uint32_t csr_seq);
/* 4.1+: SEQUENCE alone: its status. */
int n4_sequence(struct n4_client *k);
/* 4.1+: DESTROY_SESSION, then DESTROY_CLIENTID (RFC 8881 §18.37, §18.50), each alone: the first failing
 * status, or 0. */
int n4_destroy_client(struct n4_client *k);
void n4_client_close(struct n4_client *k);

/* ---- state and I/O ------------------------------------------------------ */

/*
 * OPEN dir/name (dir: a path from the export's root, such as env.export_dir)
 * for access (N4_ACCESS_*; N4_WANT_NO_DELEG is added), deny, create
 * (UNCHECKED4, mode 0644) or not, by open owner owner; 4.0: *seqid is the
 * owner's next seqid (advanced, with OPEN_CONFIRM when asked). The open
 * stateid into sid and the file's handle into fh (NFS4_FHSIZE bytes). Its status.
 */
int n4_open(struct n4_client *k, const char *dir, const char *name, bool create, uint32_t access,
	    uint32_t deny, const char *owner, uint32_t *seqid, struct n4_sid *sid, uint8_t *fh, uint32_t *fh_len);
/* OPEN4args (RFC 8881 §18.16.1, RFC 7530 §16.16.1) for n4_xb_openargs. */
enum n4_create { N4_NOCREATE, N4_UNCHECKED, N4_GUARDED };
struct n4_openargs {
	uint32_t seqid;          /* 4.0: the open owner's seqid (4.1+: 0) */
	uint32_t access, deny;   /* share_access (want bits included) and share_deny, as sent */
	uint64_t cid;
	const char *owner;
	enum n4_create create;
	bool no_attrs;           /* createattrs empty (else mode 0644) */
	bool with_size;          /* createattrs set size too */
	uint64_t size;
	bool previous;           /* CLAIM_PREVIOUS, delegate_type NONE (the current filehandle is the file) */
	const char *name;        /* else CLAIM_NULL of name */
};
void n4_xb_openargs(struct xb *a, const struct n4_openargs *o);

/* OPEN4resok (RFC 8881 §18.16.2). */
struct n4_openres {
	struct n4_sid sid;
	uint32_t rflags;
	uint32_t deleg;          /* open_delegation_type4: 0 NONE, 1 READ, 2 WRITE, 3 NONE_EXT,
				  * 4 READ_ATTRS_DELEG, 5 WRITE_ATTRS_DELEG (RFC 9754) */
	struct n4_sid dsid;      /* READ, WRITE (and *_ATTRS_DELEG): the delegation stateid */
	uint32_t why;            /* NONE_EXT: why_no_delegation4 */
};
/* Decode OPEN4resok (after OPEN's status) into o: false if it does not decode. */
bool n4_xd_openres(struct xd *d, struct n4_openres *o);

/* As n4_open (deny none; 4.0: owner new, confirmed when asked), but the server may grant a
 * delegation (access as sent: 4.1+ may add N4_WANT_* bits): the whole OPEN4resok in res (open
 * stateid, delegation type and stateid). */
int n4_open_deleg(struct n4_client *k, const char *dir, const char *name, bool create, uint32_t access,
		  const char *owner, struct n4_openres *res, uint8_t *fh, uint32_t *fh_len);
/*
 * PUTFH fh, OPEN by CLAIM_PREVIOUS (RFC 8881 §18.16.3, RFC 7530 §16.16.5: a
 * reclaim after a server restart) by open owner owner; 4.0: *seqid the owner's
 * (advanced), with OPEN_CONFIRM when asked. The open stateid into sid; its status.
 */
int n4_open_prev(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t access, uint32_t deny,
		 const char *owner, uint32_t *seqid, struct n4_sid *sid);
/* 4.1+: RECLAIM_COMPLETE (rca_one_fs false, RFC 8881 §18.51): its status. */
int n4_reclaim_complete(struct n4_client *k);
/* 4.0: OPEN_CONFIRM (RFC 7530 §16.18) of sid with *seqid (advanced): its status; the new stateid in sid. */
int n4_open_confirm(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t *seqid, struct n4_sid *sid);
/* CLOSE (4.0: seqid of the open owner, advanced): its status; the stateid returned in sid. */
int n4_close(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t *seqid, struct n4_sid *sid);
/* READ count bytes at off into buf (may be NULL); *got the bytes returned. */
int n4_read(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid, uint64_t off,
	    uint32_t count, void *buf, uint32_t *got);
/* WRITE len bytes at off, FILE_SYNC4. */
int n4_write(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid, uint64_t off,
	     const void *data, uint32_t len);
/* stable_how4 (RFC 8881 §18.32.1). */
#define N4_UNSTABLE 0u
#define N4_DATA_SYNC 1u
#define N4_FILE_SYNC 2u
/* WRITE with stable (N4_UNSTABLE ...): its status; the reply's committed into *committed (may be NULL). */
int n4_write_how(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid,
		 uint64_t off, const void *data, uint32_t len, uint32_t stable, uint32_t *committed);
/* COMMIT (RFC 8881 §18.3) of [off, off+count) (count 0: to the end): its status. */
int n4_commit(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint64_t off, uint32_t count);
/* SETATTR of size with stateid sid. */
int n4_truncate(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid, uint64_t size);
/*
 * LOCK of type at [off, off+len) by a new lock owner owner, from the open
 * stateid open (4.0: *open_seqid the open owner's, advanced); the lock
 * stateid into lock. Its status.
 */
int n4_lock_new(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, uint64_t off,
		uint64_t len, const struct n4_sid *open, uint32_t *open_seqid, const char *owner,
		struct n4_sid *lock);
/* LOCK4args (RFC 8881 §18.10.1) for n4_xb_lockargs. */
struct n4_lockargs {
	uint32_t type;
	bool reclaim;
	uint64_t off, len;
	bool new_owner;             /* open_to_lock_owner4 (sid: the open stateid), else exist_lock_owner4 */
	uint32_t open_seqid, lock_seqid;
	const struct n4_sid *sid;   /* the open stateid or the lock stateid */
	uint64_t cid;               /* new_owner: the lock owner's clientid and name */
	const char *owner;
};
void n4_xb_lockargs(struct xb *a, const struct n4_lockargs *l);
/* LOCKT4args (RFC 8881 §18.11.1). */
void n4_xb_locktargs(struct xb *a, uint32_t type, uint64_t off, uint64_t len, uint64_t cid, const char *owner);
/* n4_lock_new with LOCK4args' reclaim flag set as given (RFC 8881 §18.10.3: a reclaim in grace). */
int n4_lock_reclaim(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, bool reclaim,
		    uint64_t off, uint64_t len, const struct n4_sid *open, uint32_t *open_seqid, const char *owner,
		    struct n4_sid *lock);
/* LOCK by the existing lock owner of lock (4.0: *lock_seqid advanced). */
int n4_lock_more(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, uint64_t off,
		 uint64_t len, struct n4_sid *lock, uint32_t *lock_seqid);
/* LOCKU [off, off+len) (4.0: *lock_seqid advanced). */
int n4_locku(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, struct n4_sid *lock, uint32_t *lock_seqid,
	     uint64_t off, uint64_t len);
/* LOCKU with locktype type. */
int n4_locku_type(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, struct n4_sid *lock,
		  uint32_t *lock_seqid, uint64_t off, uint64_t len);
/* LOCKT (RFC 8881 §18.11) of type at [off, off+len) for k's lock owner owner: its status. */
int n4_lockt(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t type, uint64_t off, uint64_t len,
	     const char *owner);
/* 4.0: RELEASE_LOCKOWNER (RFC 7530 §16.37) of k's lock owner owner: its status. */
int n4_release_lockowner(struct n4_client *k, const char *owner);
/* 4.1+ TEST_STATEID of sid alone: its status code (RFC 8881 §18.48.2), or -1 if the operation failed. */
int n4_test_stateid(struct n4_client *k, const struct n4_sid *sid);
/* 4.1+ FREE_STATEID of sid: its status. */
int n4_free_stateid(struct n4_client *k, const struct n4_sid *sid);
/* PUTFH fh + DELEGRETURN of the delegation stateid sid (RFC 8881 §18.6): its status. */
int n4_delegreturn(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid);
/* sr_status_flags (RFC 8881 §18.46.2) the tests read in k->seq_flags. */
#define N4_SEQ4_STATUS_ADMIN_STATE_REVOKED 0x20u
#define N4_SEQ4_STATUS_RECALLABLE_STATE_REVOKED 0x40u
/* PUTROOTFH + GETATTR(type): a harmless call. */
int n4_getattr_root(struct n4_client *k);
/* PUTFH fh + GETATTR(change, size): the status (-1: no reply, or it does not decode); *change and
 * *size on NFS4_OK. */
int n4_getattr_cs(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint64_t *change, uint64_t *size);

/* ---- a neighbour that must stay answered ---------------------------------- */

/*
 * A well-behaved 4.1 client on its own connection, set up before the attack,
 * that sends SEQUENCE + PUTROOTFH + GETATTR every 100 ms from a thread until
 * n4_watch_stop(). It records the slowest answer and the calls that failed
 * (no reply within 10 s, or a status other than NFS4_OK).
 */
/*
 * The one time bound of the liveness checks (a neighbour n4_watch, a fresh
 * client): a client starved by an attack waits for the attack to end (several
 * seconds, tens in the soaks), while a loaded 2-core machine (the CI beside a
 * CPU hog, a sanitizer build, a guest) delays a plain answer by up to about a
 * second (1.02 s seen in a loaded run). 5 s tells the two apart.
 */
#define N4_LIVE_S 5.0

struct n4_watch {
	struct n4_client k;
	pthread_t thread;
	_Atomic bool stop; /* main -> the watching thread (atomic: ThreadSanitizer) */
	bool running;
	unsigned calls, failed;
	double slowest_s;
	int last_bad_status;
};

/* 0, or -1 if its client could not be set up. */
int n4_watch_start(struct n4_watch *w, uint16_t port, const char *id);
/* Stop it; the slowest answer in seconds (calls, failed, last_bad_status in w). */
double n4_watch_stop(struct n4_watch *w);

/* ---- playing a 4.1 client's callback service ----------------------------- */

/* Answer cc on c: CB_NULL with nothing, a CB_COMPOUND with CB_SEQUENCE4resok echoing it and op_status
 * (a plain nfsstat4) for its operation (n4_cb_answer: NFS4_OK). 0 or -1. */
int n4_cb_reply(struct raw_conn *c, const struct n4_cb_call *cc, uint32_t op_status);
/* An on_cb hook: every call answered NFS4_OK, CB_RECALLs counted in k->cb_recalls. */
void n4_cb_count_recalls(struct n4_client *k, const uint8_t *msg, size_t len);
/* Until k->cb_recalls passes before (SEQUENCE every 50 ms meanwhile) or limit_s: true if it did. */
bool n4_recall_wait(struct n4_client *k, unsigned before, double limit_s);
/* CLOCK_MONOTONIC in seconds. */
double n4_now(void);

/* ---- the daemon's resources --------------------------------------------- */

/* Open descriptors of process pid (/proc/pid/fd), or -1. */
long n4_proc_fds(pid_t pid);
/* Resident set of pid in KiB (VmRSS), or -1. */
long n4_proc_rss_kb(pid_t pid);
/* What an ASan build of pid (libasan mapped) may keep in its freed-memory quarantine, KiB
 * (256 MiB by default), the same allowance for a ThreadSanitizer build's shadow and history
 * (libtsan); 0 for a plain build. A soak's memory bound adds it. */
long n4_proc_quarantine_kb(pid_t pid);
/* The daemon's stats document from its stats socket (rnfsd.conf stats-socket): malloc'ed, or NULL. */
char *n4_stats_json(const char *socket_path);
/* The number after "key": inside the stats document's object "obj" (e.g. "nfs4"), or -1. */
long long n4_stats_num(const char *doc, const char *obj, const char *key);
/*
 * Between two stats documents (n4_stats_json): did the number of key in the
 * flat object obj grow by exactly n while every other number of obj whose key
 * begins with prefix stayed (key NULL: all stayed)? false also when either
 * document or key is missing; what did move is then appended to why
 * ("key before->after; ", why_len bytes at most; why may be NULL).
 */
bool n4_stats_moved(const char *before, const char *after, const char *obj, const char *prefix, const char *key,
		    long long n, char *why, size_t why_len);

#endif
