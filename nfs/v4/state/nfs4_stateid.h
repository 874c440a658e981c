/*
 * nfs4_stateid.h - NFSv4 stateids and open state as a pure module (no XDR,
 * no sockets, no backend calls; time comes from the caller): stateid4
 * generation and lookup (RFC 8881 §8.2, RFC 7530 §9.1.4), the special
 * stateids (§8.2.3), open owners with NFSv4.0's seqids and last-reply replay
 * (RFC 7530 §9.1.7, §9.1.8, OPEN_CONFIRM §16.20), open stateids per
 * (client, open owner, file) and share reservations (RFC 8881 §9.7: a deny
 * of one owner refuses another's access, NFS4ERR_SHARE_DENIED).
 *
 * Who owns what: the table owns every owner, open and file record. A file
 * record keeps one opaque open file of the caller's (a backend be_file and
 * its be_fs) for as long as any open names the file; the caller's
 * struct nfs4_stab_file_ops take and drop references to it, and the table
 * drops its own when the last open of the file goes (CLOSE, the client's
 * state purged at lease expiry or destruction).
 *
 * stateid4.other (12 bytes): the server's boot (4, big-endian), the low half
 * of the clientid (4), a counter unique within the boot (4). A stateid of
 * another boot is STALE_STATEID; of a client whose state was purged for
 * lease expiry, EXPIRED (remembered for the last NFS4_STAB_EXPIRED_RING
 * clients); of a client revoked by the administrator, or a stateid whose
 * state an administrator released (an export removed or unlocked),
 * ADMIN_REVOKED (see "revoked stateids" below); otherwise unknown is
 * BAD_STATEID.
 *
 * Revoked stateids (RFC 8881 §15.1.5.1, RFC 7530 §13.1.5.1): the open and
 * lock stateids nfs4_stab_purge_files() releases are remembered, with their
 * client, in a ring of NFS4_STAB_REVOKED_MAX (the oldest gives way), so that
 * a client using one again hears ADMIN_REVOKED; a 4.1+ client's SEQUENCE
 * carries SEQ4_STATUS_ADMIN_STATE_REVOKED while it has one (§18.46.3,
 * nfs4_stab_admin_revoked()), TEST_STATEID reports it, and FREE_STATEID
 * forgets it (§18.38.3). A client's entries go with its state (purge).
 *
 * Whose stateid (RFC 8881 §8.2.2: a stateid is meaningful only to the client
 * it was issued to): every lookup takes the caller's clientid and answers
 * BAD_STATEID for another client's stateid, as if it were unknown. The
 * caller's client is the session's in NFSv4.1+ and, in NFSv4.0 (no session),
 * the owner's where the operation names one (OPEN, LOCK's open_to_lock_owner4)
 * and otherwise the stateid's own (READ, WRITE, SETATTR, CLOSE, LOCKU...: as
 * knfsd's set_client() from si_opaque.so_clid; 4.0 stateids are guessable by
 * design, RFC 7530 §9.1.4), see nfs4_sid_client().
 *
 * Open stateid seqid (RFC 8881 §8.2.2): 1 at creation, +1 on every OPEN
 * upgrade, OPEN_DOWNGRADE and OPEN_CONFIRM; after 0xffffffff comes 1. A
 * request's seqid lower than the current one is OLD_STATEID, higher is
 * BAD_STATEID; 0 means "the current one" in NFSv4.1+.
 *
 * NFSv4.0 open-owner seqid (RFC 7530 §9.1.7), per owner:
 *   (none) --OPEN seqid s--> NEW, owner unconfirmed, last = s after done
 *   last = s: seqid s+1 -> NEW; seqid s -> REPLAY (the last reply); else BAD_SEQID
 *   unconfirmed owner, seqid not a replay -> its state is dropped, treated as new (§16.18.5)
 * nfs4_stab_seqid_done() advances it after the operation, except after the
 * errors §9.1.7 lists (STALE_CLIENTID, STALE_STATEID, BAD_STATEID,
 * BAD_SEQID, BADXDR, RESOURCE, NOFILEHANDLE, MOVED).
 *
 * Memory: owners and opens together at most NFS4_STAB_MAX_STATES, per client
 * NFS4_STAB_MAX_PER_CLIENT; beyond, NFS4ERR_RESOURCE (4.0) or NFS4ERR_DELAY
 * (4.1+, where RESOURCE is no longer an answer). One allocation per record,
 * none per READ/WRITE lookup. One mutex.
 *
 * Descriptors (nfs4_stab_limits(), from conf/fd_budget.h): each file record
 * holds one open file, so file records are at most max_files; a client's
 * opens at most max_opens_client; a client's lock owners and lock stateids
 * together (each lock stateid has at most one backend lock description) at
 * most max_locks_client. Past them the same RESOURCE / DELAY, for that
 * client only.
 */
#ifndef RNFSD_NFS4_STATEID_H
#define RNFSD_NFS4_STATEID_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/list.h"

#define NFS4_OTHER_SIZE 12u
#define NFS4_STAB_MAX_STATES 65536u
#define NFS4_STAB_MAX_PER_CLIENT 8192u
#define NFS4_STAB_OWNER_MAX 1024u   /* open_owner4.owner: opaque<NFS4_OPAQUE_LIMIT> */
#define NFS4_STAB_FKEY_MAX 128u     /* a file's key (its NFSv4 handle) */
#define NFS4_STAB_REPLAY_MAX 256u   /* a 4.0 owner's cached reply body */
#define NFS4_STAB_BUCKETS 4096u
/* stateid4.other's counter with this bit set is a delegation's
 * (nfs4_deleg.h), never an open's or a lock's. */
#define NFS4_STAB_DELEG_BIT 0x80000000u
/* ... and with this bit set (and the one above clear) a layout's (nfs4_layout.h). */
#define NFS4_STAB_LAYOUT_BIT 0x40000000u
#define NFS4_STAB_EXPIRED_RING 4096u /* a client table's worth (NFS4_STATE_MAX_CLIENTS) */
#define NFS4_STAB_REVOKED_MAX 1024u  /* revoked stateids remembered (20 bytes each) */
/* RFC 8881 §18.46.2 sr_status_flags: state revoked by the administrator. */
#define SEQ4_STATUS_ADMIN_STATE_REVOKED 0x00000020u

/* OPEN4_SHARE_ACCESS_* / OPEN4_SHARE_DENY_* (RFC 8881 §18.16.1) */
#define NFS4_SHARE_ACCESS_READ 1u
#define NFS4_SHARE_ACCESS_WRITE 2u
#define NFS4_SHARE_ACCESS_BOTH 3u
#define NFS4_SHARE_DENY_NONE 0u
#define NFS4_SHARE_DENY_READ 1u
#define NFS4_SHARE_DENY_WRITE 2u
#define NFS4_SHARE_DENY_BOTH 3u

struct nfs4_stateid {
	uint32_t seqid;
	uint8_t other[NFS4_OTHER_SIZE];
};

/* RFC 8881 §8.2.3: what a stateid is before any lookup. */
enum nfs4_sid_kind {
	NFS4_SID_ORDINARY, /* look it up */
	NFS4_SID_ANON,     /* all zeros: no open state (I/O checked as the caller) */
	NFS4_SID_BYPASS,   /* all ones: READ may bypass share reservations; else as ANON */
	NFS4_SID_CURRENT,  /* 4.1+: seqid 1, other 0: the COMPOUND's current stateid */
	NFS4_SID_INVALID,  /* any other combination of reserved values: BAD_STATEID */
};
enum nfs4_sid_kind nfs4_stateid_kind(const struct nfs4_stateid *sid, uint32_t minor);
/* The clientid an ordinary stateid was issued to ((boot << 32) | low half:
 * the client records' boot must be the table's, as nfs4_server.c sets them). */
uint64_t nfs4_stateid_clientid(const struct nfs4_stateid *sid);

/* The caller's open files (be_file + be_fs in the daemon, fakes in tests). */
struct nfs4_stab_file_ops {
	void (*get)(void *fs, void *file);
	void (*put)(void *fs, void *file);
	/* A lock stateid went (CLOSE, RELEASE_LOCKOWNER, FREE_STATEID, purge):
	 * release every lock the owner holds on the file (NULL: none to release). */
	void (*unlock)(void *fs, void *file, uint64_t owner_id);
	/* Does the owner hold a lock on the file (RELEASE_LOCKOWNER)? NULL: never. */
	bool (*locked)(void *fs, void *file, uint64_t owner_id);
};

/* The records are private to nfs4_stateid.c; each is on core/list.h lists
 * (its hash chain, its client's, owner's and file's), so it leaves in O(1). */
struct nfs4_stab {
	pthread_mutex_t lock;
	uint32_t boot;
	uint32_t counter;
	unsigned nstates; /* owners + opens */
	const struct nfs4_stab_file_ops *fops;
	struct list_link clients;                   /* per-client accounting and its owners */
	struct list_link opens[NFS4_STAB_BUCKETS];  /* open and lock stateids, by other's counter */
	struct list_link files[NFS4_STAB_BUCKETS];  /* file records, by key */
	uint64_t lock_ids;                          /* lock owners made */
	unsigned nfiles;                            /* file records (each holds an open file) */
	unsigned max_files, max_opens_client, max_locks_client; /* nfs4_stab_limits() */
	uint32_t expired[NFS4_STAB_EXPIRED_RING];   /* low clientids purged for expiry */
	bool expired_admin[NFS4_STAB_EXPIRED_RING]; /* ... by the administrator (rnfsctl client revoke) */
	unsigned expired_next;
	struct nfs4_stab_revoked {                   /* revoked stateids (clientid 0: a free slot) */
		uint64_t clientid;
		uint8_t other[NFS4_OTHER_SIZE];
	} revoked[NFS4_STAB_REVOKED_MAX];
	unsigned revoked_next;
	_Atomic unsigned nrevoked;                  /* slots in use: read without the lock by SEQUENCE */
};

void nfs4_stab_init(struct nfs4_stab *t, uint32_t boot, const struct nfs4_stab_file_ops *fops);
void nfs4_stab_release(struct nfs4_stab *t);
/* The descriptor bounds (before serving; 0 keeps the memory bounds above). */
void nfs4_stab_limits(struct nfs4_stab *t, unsigned max_files, unsigned opens_per_client, unsigned locks_per_client);
/* What the table holds now (stats). */
struct nfs4_stab_counts {
	unsigned files, opens, open_owners, lock_owners, lock_states;
	unsigned revoked; /* revoked stateids remembered (of NFS4_STAB_REVOKED_MAX) */
};
void nfs4_stab_counts(struct nfs4_stab *t, struct nfs4_stab_counts *out);

/* ---- NFSv4.0 open-owner seqids ---- */

enum nfs4_seqid_action {
	NFS4_SEQID_NEW,    /* run the operation, then nfs4_stab_seqid_done() */
	NFS4_SEQID_REPLAY, /* answer the cached status and body, run nothing */
	NFS4_SEQID_ERROR,  /* answer *status (BAD_SEQID) */
};
struct nfs4_seqid_replay {
	uint32_t status;
	uint32_t len;
	uint8_t body[NFS4_STAB_REPLAY_MAX];
};
/*
 * An OPEN (owner given) of client clientid with seqid. For OPEN_CONFIRM,
 * OPEN_DOWNGRADE and CLOSE, which name the owner through a stateid, use
 * nfs4_stab_seqid_check_sid(). An unknown owner is NEW.
 */
enum nfs4_seqid_action nfs4_stab_seqid_check(struct nfs4_stab *t, uint64_t clientid, const uint8_t *owner,
					     uint32_t owner_len, uint32_t seqid, struct nfs4_seqid_replay *rp,
					     uint32_t *status);
enum nfs4_seqid_action nfs4_stab_seqid_check_sid(struct nfs4_stab *t, const struct nfs4_stateid *sid,
						 uint32_t seqid, struct nfs4_seqid_replay *rp, uint32_t *status);
/* After an OPEN: the owner's seqid becomes seqid and body (len bytes) its
 * cached reply, unless status is one of §9.1.7's exceptions. (OPEN_CONFIRM,
 * OPEN_DOWNGRADE and CLOSE record theirs themselves: struct nfs4_sid_seq.) */
void nfs4_stab_seqid_done(struct nfs4_stab *t, uint64_t clientid, const uint8_t *owner, uint32_t owner_len,
			  uint32_t seqid, uint32_t status, const uint8_t *body, uint32_t len);

/* ---- opens ---- */

struct nfs4_open_req {
	uint64_t clientid;
	uint32_t minor;
	const uint8_t *owner;
	uint32_t owner_len;
	const uint8_t *fkey; /* the file's key (its handle bytes) */
	uint32_t fkey_len;
	uint32_t access, deny; /* OPEN4_SHARE_ACCESS_* (want bits masked off), OPEN4_SHARE_DENY_* */
	void *fs, *file;       /* the caller's open file (one reference, kept or not) */
	unsigned file_modes;   /* what it is open for (NFS4_SHARE_ACCESS_* bits) */
};
struct nfs4_open_res {
	struct nfs4_stateid sid;
	bool confirm;    /* 4.0: the owner is unconfirmed (OPEN4_RESULT_CONFIRM) */
	bool file_taken; /* the table kept the caller's reference */
	bool new_open;   /* the owner had no open of the file: this one is new (RFC 9754 §4) */
};
/*
 * OPEN: a new open stateid for (client, owner, file), or the existing one
 * upgraded (access and deny ORed in, seqid + 1). NFS4_OK,
 * NFS4ERR_SHARE_DENIED (another owner's deny covers the access, or the deny
 * covers another owner's access), NFS4ERR_INVAL (access 0 or bits beyond
 * BOTH, deny beyond BOTH), RESOURCE / DELAY (bounds). On anything but NFS4_OK
 * the caller keeps its file reference.
 */
uint32_t nfs4_stab_open(struct nfs4_stab *t, const struct nfs4_open_req *rq, struct nfs4_open_res *res);
/* Before an OPEN that may create a file: would a new open of a new file (and
 * a new owner) fit? NFS4_OK or RESOURCE / DELAY, so that a refused OPEN
 * leaves no file behind (racing OPENs of the client may still meet the
 * bound in nfs4_stab_open()). */
uint32_t nfs4_stab_open_room(struct nfs4_stab *t, uint64_t clientid, uint32_t minor);

/* What a stateid names, for I/O: the open's file with a reference taken (put it). */
struct nfs4_sid_io {
	uint64_t clientid;
	void *fs, *file;
	uint32_t access, deny;
};
/*
 * An ordinary open stateid of client clientid and the COMPOUND's file (fkey) for I/O: access is
 * NFS4_SHARE_ACCESS_READ or _WRITE (READ is allowed through an open for
 * writing too, as knfsd). NFS4_OK (io filled, a file reference taken),
 * STALE_STATEID, BAD_STATEID (unknown, another client's, another file, a seqid from the future,
 * 4.0 unconfirmed), OLD_STATEID, EXPIRED, OPENMODE.
 */
uint32_t nfs4_stab_check_io(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid, uint32_t minor,
			    const uint8_t *fkey, uint32_t fkey_len, uint32_t access, struct nfs4_sid_io *io);
/*
 * Does an I/O without open state (anonymous stateid, NFSv3, or bypass for
 * READ) conflict with a deny reservation on the file? SHARE_DENIED / NFS4_OK.
 */
uint32_t nfs4_stab_check_anon(struct nfs4_stab *t, const uint8_t *fkey, uint32_t fkey_len, uint32_t access);

/* Delegations (RFC 8881 §10.4): do clients other than clientid have the file
 * open (*open), for writing (*write)? */
void nfs4_stab_file_others(struct nfs4_stab *t, const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid,
			   bool *open, bool *write);
/* pNFS return-on-close (RFC 8881 §18.43.3): has clientid the file open (by any of its owners)? */
bool nfs4_stab_client_file_open(struct nfs4_stab *t, const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid);

/*
 * OPEN_CONFIRM, OPEN_DOWNGRADE and CLOSE name their open owner through the
 * stateid; in NFSv4.0 they carry its seqid too, and their reply (the status
 * and the stateid4 *out) becomes the owner's cached reply within the same
 * critical section (CLOSE frees the open the owner would be found through).
 */
struct nfs4_sid_seq {
	uint32_t minor;
	uint32_t seqid;    /* minor 0 only */
	uint64_t clientid; /* the caller's (nfs4_sid_client()) */
};
/* OPEN_CONFIRM (RFC 7530 §16.20): the owner confirmed, the stateid's seqid + 1 (*out). */
uint32_t nfs4_stab_confirm(struct nfs4_stab *t, const struct nfs4_stateid *sid, struct nfs4_sid_seq sq,
			   struct nfs4_stateid *out);
/* OPEN_DOWNGRADE (RFC 8881 §18.18.3): access/deny must be subsets of what the
 * open holds and each a mode it was opened with at some time (else INVAL). */
uint32_t nfs4_stab_downgrade(struct nfs4_stab *t, const struct nfs4_stateid *sid, struct nfs4_sid_seq sq,
			     uint32_t access, uint32_t deny, struct nfs4_stateid *out);
/* CLOSE (RFC 8881 §18.2): the open goes; *out is the stateid as it was closed
 * with seqid + 1 (4.0; 4.1 callers send the special invalid one). */
uint32_t nfs4_stab_close(struct nfs4_stab *t, const struct nfs4_stateid *sid, struct nfs4_sid_seq sq,
			 struct nfs4_stateid *out);
/* SEQUENCE (RFC 8881 §18.46.3): has clientid revoked stateids it has not freed? No lock while
 * nothing is revoked. */
bool nfs4_stab_admin_revoked(struct nfs4_stab *t, uint64_t clientid);
/* A stateid of client clientid (the caller's) none of whose state is left because the client's
 * state was purged: EXPIRED (its lease ended) or ADMIN_REVOKED (rnfsctl client revoke), from the
 * expired ring; 0 otherwise (the caller's own verdict stands). For the delegation stateids, whose
 * table forgets a purged client's (RFC 7530 §13.1.5.1, as for its open stateids). */
uint32_t nfs4_stab_gone(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid);
/* TEST_STATEID for one stateid (RFC 8881 §18.48.3) of client clientid. */
uint32_t nfs4_stab_test(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid);
/* FREE_STATEID (RFC 8881 §18.38.3): an open stateid is LOCKS_HELD (CLOSE frees
 * it); a lock stateid is freed (the caller checked its owner holds no lock); a revoked one is
 * forgotten (NFS4_OK). */
uint32_t nfs4_stab_free(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid);

/* ---- lock owners and lock stateids (RFC 8881 §18.10-§18.12, RFC 7530 §16.10-§16.12) ----
 * A lock owner has a backend owner id (bit 62 set: NLM's have bit 63) and one
 * lock stateid per file; the locks themselves are the backend's (one OFD per
 * owner and file in the local backend), so conflicts with NLM clients and
 * local processes are the backend's verdict. A lock stateid stands for its
 * open in READ/WRITE; it goes with its open (CLOSE), its owner
 * (RELEASE_LOCKOWNER), FREE_STATEID or the client's purge, and the backend
 * then releases its owner's locks on the file (file ops' unlock). */
#define NFS4_STAB_LOCK_ID_BIT (1ull << 62)
struct nfs4_lock_req {
	uint64_t clientid;
	uint32_t minor;
	struct nfs4_stateid sid; /* the open stateid (open_to_lock_owner4) */
	const uint8_t *owner;
	uint32_t owner_len;
	const uint8_t *fkey;
	uint32_t fkey_len;
};
struct nfs4_lock_ref {
	uint64_t clientid, owner_id;
	struct nfs4_stateid sid; /* the lock stateid as it is (seqid before this operation) */
	void *fs, *file;         /* a reference taken (put it) */
};
/* LOCK with a new lock owner: the lock stateid of (lock owner, file), made if absent.
 * NFS4_OK, BAD_STATEID (not this client's open, another file, unconfirmed), STALE,
 * OLD, EXPIRED, RESOURCE / DELAY. */
uint32_t nfs4_stab_lock_new(struct nfs4_stab *t, const struct nfs4_lock_req *rq, struct nfs4_lock_ref *ref);
/* LOCK with an existing lock owner, LOCKU, FREE_STATEID's check: a lock stateid of the file. */
uint32_t nfs4_stab_lock_find(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid, uint32_t minor,
			     const uint8_t *fkey, uint32_t fkey_len, struct nfs4_lock_ref *ref);
/* A lock stateid whatever its file (FREE_STATEID). */
uint32_t nfs4_stab_lock_find_any(struct nfs4_stab *t, uint64_t clientid, const struct nfs4_stateid *sid,
				 struct nfs4_lock_ref *ref);
/* After a granted LOCK or a LOCKU: the lock stateid's seqid + 1 (*out). */
uint32_t nfs4_stab_lock_bump(struct nfs4_stab *t, const struct nfs4_stateid *sid, struct nfs4_stateid *out);
/* The lock owners with a lock stateid on the file (up to max ids): DENIED's candidates. */
unsigned nfs4_stab_file_lock_owners(struct nfs4_stab *t, const uint8_t *fkey, uint32_t fkey_len, uint64_t *ids,
				    unsigned max);
/* LOCKT: the backend id of (clientid, owner), 0 if it has none. */
uint64_t nfs4_stab_lock_owner_id(struct nfs4_stab *t, uint64_t clientid, const uint8_t *owner, uint32_t len);
/* NFS4ERR_DENIED: the lock owner behind a backend owner id (false: not one of ours). */
bool nfs4_stab_lock_owner(struct nfs4_stab *t, uint64_t id, uint64_t *clientid, uint8_t *buf, uint32_t cap,
			  uint32_t *len);
/* RELEASE_LOCKOWNER: the owner and its stateids go (NFS4_OK also when unknown);
 * NFS4ERR_LOCKS_HELD while it holds a lock on any file (file ops' locked). */
uint32_t nfs4_stab_release_lockowner(struct nfs4_stab *t, uint64_t clientid, const uint8_t *owner, uint32_t len);
/* 4.0 lock-owner seqids (existing lock owner); a new lock owner's LOCK goes by
 * its open owner's seqid (nfs4_stab_seqid_check_sid) and starts the lock owner's. */
enum nfs4_seqid_action nfs4_stab_lock_seqid_check(struct nfs4_stab *t, const struct nfs4_stateid *lock_sid,
						  uint32_t seqid, struct nfs4_seqid_replay *rp, uint32_t *status);
/* The owner behind sid (a lock stateid's lock owner, an open stateid's open owner) records its reply. */
void nfs4_stab_seqid_done_sid(struct nfs4_stab *t, const struct nfs4_stateid *sid, uint32_t seqid, uint32_t status,
			      const uint8_t *body, uint32_t len);
void nfs4_stab_lock_seqid_done(struct nfs4_stab *t, uint64_t clientid, const uint8_t *owner, uint32_t owner_len,
			       uint32_t seqid, uint32_t status, const uint8_t *body, uint32_t len);

/* Why a client's state goes: its stateids then answer BAD_STATEID, EXPIRED or ADMIN_REVOKED. */
enum nfs4_purge_why { NFS4_PURGE_GONE, NFS4_PURGE_EXPIRED, NFS4_PURGE_REVOKED };
/* Everything of clientid goes (DESTROY_CLIENTID, replaced by a new incarnation: GONE; its lease
 * expired: EXPIRED; rnfsctl client revoke: REVOKED). */
void nfs4_stab_purge_client(struct nfs4_stab *t, uint64_t clientid, enum nfs4_purge_why why);
/* The files whose key match() selects (an export no longer served, nfs4_setup.c): every open and
 * lock state on them goes, whichever client's, with the backend's locks and the open files; their
 * stateids answer ADMIN_REVOKED (the revoked ring). Returns how many opens went. */
unsigned nfs4_stab_purge_files(struct nfs4_stab *t, bool (*match)(const uint8_t *key, uint32_t len, void *arg),
			       void *arg);
/* clientid's open stateids and lock stateids (rnfsctl client list). */
void nfs4_stab_client_state(struct nfs4_stab *t, uint64_t clientid, unsigned *opens, unsigned *locks);
/* How many owners + opens clientid holds (tests, stats). */
unsigned nfs4_stab_client_count(struct nfs4_stab *t, uint64_t clientid);

#endif
