/*
 * nfs4_deleg.h - NFSv4 file delegations as a pure module (no locks, no
 * sockets, no backend calls; time in seconds and the lease come from the
 * caller): whether an OPEN gets one (RFC 8881 §10.4, §18.16.3 and its
 * OPEN4_SHARE_ACCESS_WANT_* flags), which operations of other clients
 * conflict with one, the recall (CB_RECALL, RFC 8881 §20.2, RFC 7530
 * §16.16.4 via nfs4_cb_send(): the caller sends what this module hands
 * out), DELEGRETURN (§18.6), revocation one lease after an unanswered
 * recall (§10.4.6: SEQ4_STATUS_RECALLABLE_STATE_REVOKED, §18.46.3; the
 * stateid then answers NFS4ERR_DELEG_REVOKED until FREE_STATEID),
 * TEST_STATEID / FREE_STATEID of delegation stateids.
 *
 * A delegation's states (nfs4_dtab_*() make each transition):
 *
 *   FREE --grant (OPEN)--> HELD --conflict (another client's OPEN for
 *        writing, WRITE, SETATTR, REMOVE, RENAME, LINK, LOCK, an NLM
 *        lock...)--> RECALLED
 *   HELD / RECALLED --DELEGRETURN, client purged--> FREE
 *   RECALLED --one lease passed (nfs4_dtab_expire, nfs4_dtab_conflict)--> REVOKED
 *   HELD / RECALLED --its export no longer served or unlocked, by an
 *        administrator (nfs4_dtab_revoke_files)--> REVOKED (admin)
 *   REVOKED --FREE_STATEID, client purged--> FREE
 *
 * A delegation revoked after an unanswered recall answers DELEG_REVOKED and
 * raises SEQ4_STATUS_RECALLABLE_STATE_REVOKED; one revoked by an
 * administrator answers ADMIN_REVOKED and raises
 * SEQ4_STATUS_ADMIN_STATE_REVOKED (RFC 8881 §15.1.5.1, §18.46.3), as the
 * open and lock stateids an administrator released (nfs4_stateid.h).
 *
 * While a delegation is RECALLED the conflicting operation answers
 * NFS4ERR_DELAY (nobody waits); once it is returned or revoked it proceeds.
 *
 * Directory delegations (RFC 8881 §10.9, GET_DIR_DELEGATION §18.39) are
 * records of the same table, keyed by the directory's handle, of the read
 * kind (several clients may hold one on a directory), with dir set: granted
 * by nfs4_dtab_decide_dir() + nfs4_dtab_grant_dir(), recalled when the
 * directory's entries or attributes change (NFS4_DL_ACC_NS, _WRITE or a
 * NFS4_DL_ACC_DIR_* one its holder was not granted the notification of, on
 * its key, by anyone but the holder: §10.9.1), returned, revoked and freed as
 * file ones. They count against NFS4_DELEG_MAX and NFS4_DELEG_PER_CLIENT,
 * and there are at most NFS4_DELEG_DIR_MAX of them (file delegations keep
 * the rest of the table).
 *
 * Stateids: other = the server's boot (4, big-endian), the low half of the
 * clientid (4), NFS4_STAB_DELEG_BIT | generation << 12 | slot (4); seqid 1.
 * Memory: a fixed table of NFS4_DELEG_MAX records (no allocation), at most
 * NFS4_DELEG_PER_CLIENT per client, hashed by file key.
 */
#ifndef RNFSD_NFS4_DELEG_H
#define RNFSD_NFS4_DELEG_H

#include <stdbool.h>
#include <stdint.h>

#include "nfs/v4/state/nfs4_stateid.h"

#define NFS4_DELEG_SLOT_BITS 12u
#define NFS4_DELEG_MAX (1u << NFS4_DELEG_SLOT_BITS) /* 4096 in all */
#define NFS4_DELEG_PER_CLIENT 1024u
#define NFS4_DELEG_FKEY_MAX NFS4_STAB_FKEY_MAX
#define NFS4_DELEG_BUCKETS 1024u
/* Directory delegations at most (a quarter of the table). */
#define NFS4_DELEG_DIR_MAX (NFS4_DELEG_MAX / 4u)
/* RFC 8881 §20.4.1 notify_type4 bits a directory delegation may be granted: NOTIFY4_CHANGE_DIR_ATTRS
 * (the directory's own attributes, those of NFS4_DL_DIR_ATTRS_TOLD it asked in gdda_dir_attributes:
 * nfs4_dl_dir_want), NOTIFY4_REMOVE_ENTRY, NOTIFY4_ADD_ENTRY and NOTIFY4_RENAME_ENTRY (an added
 * entry's cookie is optional; a removed one's, nrm_old_entry_cookie, is not kept: 0 is sent, as
 * knfsd's CB_NOTIFY series does). */
#define NFS4_DL_NOTIFY_DIR_ATTRS (1u << 1)
#define NFS4_DL_NOTIFY_REMOVE (1u << 2)
#define NFS4_DL_NOTIFY_ADD (1u << 3)
#define NFS4_DL_NOTIFY_RENAME (1u << 4)
#define NFS4_DL_NOTIFY_GRANTABLE \
	(NFS4_DL_NOTIFY_DIR_ATTRS | NFS4_DL_NOTIFY_REMOVE | NFS4_DL_NOTIFY_ADD | NFS4_DL_NOTIFY_RENAME)
/* The directory attributes a NOTIFY4_CHANGE_DIR_ATTRS tells, words 0 and 1 of a bitmap4: those made
 * from the directory's own struct be_attr alone (type, change, size, fileid, mode, numlinks, owner,
 * owner_group, space_used, time_access, time_metadata, time_modify). */
#define NFS4_DL_DIR_ATTRS_TOLD0 (1u << 1 | 1u << 3 | 1u << 4 | 1u << 20)
#define NFS4_DL_DIR_ATTRS_TOLD1                                                                       \
	(1u << (33 - 32) | 1u << (35 - 32) | 1u << (36 - 32) | 1u << (37 - 32) | 1u << (45 - 32) | \
	 1u << (47 - 32) | 1u << (52 - 32) | 1u << (53 - 32))
/* Holders of one directory granted notifications at most (one change's CB_NOTIFYs). */
#define NFS4_DL_NOTIFY_MAX 16u
/* CB_RECALL_ANY (RFC 8881 §20.6) when this many are held. */
#define NFS4_DELEG_PRESSURE (NFS4_DELEG_MAX * 3u / 4u)

/* OPEN4_SHARE_ACCESS_WANT_* (RFC 8881 §18.16.1), why_no_delegation4 (§18.16.2). */
#define NFS4_DL_WANT_READ 0x0100u
#define NFS4_DL_WANT_WRITE 0x0200u
#define NFS4_DL_WANT_ANY 0x0300u
#define NFS4_DL_WANT_NONE 0x0400u
#define NFS4_DL_WANT_CANCEL 0x0500u
#define NFS4_DL_WHY_NOT_WANTED 0u
#define NFS4_DL_WHY_CONTENTION 1u
#define NFS4_DL_WHY_RESOURCE 2u
#define NFS4_DL_WHY_WRITE_NOT_SUPP 4u /* WND4_WRITE_DELEG_NOT_SUPP_FTYPE */
#define NFS4_DL_WHY_NOT_SUPP_UPGRADE 5u
#define NFS4_DL_WHY_CANCELLED 7u

/* RFC 8881 §18.46.2 sr_status_flags. */
#define SEQ4_STATUS_RECALLABLE_STATE_REVOKED 0x00000040u

enum nfs4_dl_state { NFS4_DL_FREE, NFS4_DL_HELD, NFS4_DL_RECALLED, NFS4_DL_REVOKED };

/*
 * The kinds of delegations the stats count (nfs4_dtab.nkind), disjoint, as
 * open_delegation_type4 is (RFC 9754 §5 makes OPEN_DELEGATE_READ_ATTRS_DELEG
 * and _WRITE_ATTRS_DELEG types of their own): a file's read or write one
 * without delegated timestamps, a file's with them (either), a directory's.
 * Their sum is nfs4_dtab.count (held, recalled, or revoked and not freed).
 */
enum nfs4_dl_kind { NFS4_DL_KIND_READ, NFS4_DL_KIND_WRITE, NFS4_DL_KIND_ATTR, NFS4_DL_KIND_DIR, NFS4_DL_KINDS };
/* Who wanted the access that recalled a delegation (nfs4_dtab.recalls_by, the stats). */
enum nfs4_dl_cause {
	NFS4_DL_BY_NFS4,       /* another NFSv4 client's operation (GETATTR whose CB_GETATTR went unanswered too) */
	NFS4_DL_BY_NFS3,       /* an NFSv3 call (WRITE, SETATTR, REMOVE, RENAME, CREATE, GETATTR ...) */
	NFS4_DL_BY_NLM,        /* an NLM LOCK or TEST */
	NFS4_DL_BY_LOCAL_OPEN, /* a local process: its open, truncate, write, rename or unlink of the file
				* (lease broken, or the watch's event), its change of a delegated directory */
	NFS4_DL_BY_LOCAL_LOCK, /* reserved, 0: a local lock needs an open first, which breaks the lease
				* and recalls (LOCAL_OPEN); no event tells a lock itself */
	NFS4_DL_BY_CEPH,       /* reserved, 0: CephFS delegations (issue 26 item 6) are not built */
	NFS4_DL_BY_NOTIFY,     /* a directory change its holder's CB_NOTIFY could not be queued for, or
				* was not answered NFS4_OK (RFC 8881 §10.9.2; nfs4_dtab_recall_now) */
	NFS4_DL_CAUSES
};
/* The stats' name of a cause ("nfs4", "nfs3", "nlm", "local_open", "local_lock", "ceph", "notify_failed"),
 * of a kind ("read", "write", "attribute", "directory"); NULL out of range. */
const char *nfs4_dl_cause_name(unsigned cause);
const char *nfs4_dl_kind_name(unsigned kind);

/* nfstime4 (RFC 8881 §3.3.1). */
struct nfs4_dl_time {
	int64_t sec;
	uint32_t nsec;
};

struct nfs4_dl {
	enum nfs4_dl_state state;
	bool write;        /* OPEN_DELEGATE_WRITE, else READ */
	bool cb_pending;   /* RECALLED, CB_RECALL not handed out yet (or its send failed) */
	bool admin;        /* REVOKED by an administrator (nfs4_dtab_revoke_files), not a recall */
	bool dir;          /* a directory delegation (GET_DIR_DELEGATION), of the read kind */
	uint32_t notify;   /* dir: the notifications granted (NFS4_DL_NOTIFY_*) */
	uint32_t dir_attrs[2]; /* dir, NOTIFY_DIR_ATTRS: the attributes told (bitmap4 words 0, 1) */
	uint32_t gen;      /* bumped at each grant of the slot */
	uint64_t clientid;
	uint64_t recalled_at; /* seconds: when it was recalled */
	uint64_t revoke_at;   /* seconds: revoked then if still recalled (0: a lease after recalled_at) */
	int32_t next;         /* hash chain (slot), -1 at the end */
	/* Write delegations, RFC 8881 §10.4.3 (nfs4_dtab_cb_merge): the size and
	 * change the holder last reported (at the grant: the server's), the change
	 * the server reports for the file while it is modified, and since when. */
	bool modified;
	uint64_t cb_change, cb_size, change_out;
	int64_t mod_sec;
	uint32_t mod_nsec;
	/* RFC 9754 §5: an *_ATTRS_DELEG delegation (its holder owns time_access and
	 * time_modify), and the file's times at the grant (the "original times"
	 * the holder's are weighed against, nfs4_dl_time_vet). */
	bool ts;
	struct nfs4_dl_time orig_atime, orig_mtime;
	uint32_t fkey_len;
	uint8_t fkey[NFS4_DELEG_FKEY_MAX];
};

struct nfs4_dtab {
	uint32_t boot;
	unsigned count;     /* not FREE */
	unsigned nrecalled; /* RECALLED */
	unsigned nrevoked;  /* REVOKED */
	uint64_t granted, recalls, returned, revoked; /* counters since start */
	uint64_t dir_granted, dir_recalls;            /* ... of directory delegations */
	unsigned nkind[NFS4_DL_KINDS];                /* not FREE, by kind (enum nfs4_dl_kind; directories: NFS4_DL_KIND_DIR) */
	uint64_t recalls_by[NFS4_DL_CAUSES];          /* recalls (HELD -> RECALLED) by cause, of which */
	uint64_t dir_recalls_by[NFS4_DL_CAUSES];      /* ... of directory delegations */
	uint64_t revoked_admin;                       /* revoked by an administrator (of revoked) */
	int32_t buckets[NFS4_DELEG_BUCKETS];
	struct nfs4_dl d[NFS4_DELEG_MAX];
};

void nfs4_dtab_init(struct nfs4_dtab *t, uint32_t boot);
/* Is sid a delegation stateid (ordinary, counter with NFS4_STAB_DELEG_BIT)? */
bool nfs4_dtab_is_deleg(const struct nfs4_stateid *sid);

/* What an OPEN brings to the grant decision. */
struct nfs4_dl_ask {
	uint64_t clientid;
	uint32_t minor;
	uint32_t access;     /* NFS4_SHARE_ACCESS_READ / WRITE bits */
	uint32_t deny;
	uint32_t want;       /* share_access & OPEN4_SHARE_ACCESS_WANT_DELEG_MASK (4.1+) */
	bool enabled;        /* [nfsv4] delegations */
	bool read_only;      /* ... = read: no write delegation */
	bool cb_up;          /* the client's callback path is UP */
	bool grace;          /* the server is in its grace period (no new state, RFC 8881 §8.4.2) */
	bool claim_ok;       /* a claim that may get one (not CLAIM_DELEGATE_CUR / PREVIOUS) */
	bool others_open;    /* another client has the file open */
	bool others_write;   /* ... for writing */
	bool file_locked;    /* the file has byte-range locks (anyone's: NLM, NFSv4, local processes) */
};
enum nfs4_dl_grant { NFS4_DL_GRANT_NONE, NFS4_DL_GRANT_READ, NFS4_DL_GRANT_WRITE };
/*
 * RFC 8881 §10.4, §18.16.3: the delegation an OPEN gets (none, read, or
 * write), and for none the why_no_delegation4 a 4.1 want is answered with
 * (*why). Decides only; nfs4_dtab_grant() records it.
 */
enum nfs4_dl_grant nfs4_dtab_decide(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len,
				    const struct nfs4_dl_ask *a, uint32_t *why);
/* Record a delegation of clientid on the file; *sid its stateid. false: the table is full. */
bool nfs4_dtab_grant(struct nfs4_dtab *t, uint64_t clientid, const uint8_t *fkey, uint32_t fkey_len, bool write,
		     struct nfs4_stateid *sid);

/*
 * RFC 8881 §18.39.3: may a->clientid get a directory delegation of the
 * directory fkey? The switches (a->enabled), a callback path (§10.2), no
 * grace (§8.4.2), the bounds (NFS4_DELEG_MAX, _PER_CLIENT, _DIR_MAX), none
 * of its own on the directory already (as knfsd: GDD4_UNAVAIL) and no
 * other client's being recalled (contention). Other clients' held ones do
 * not stand in the way (§10.9.1: several clients may hold one). Only
 * a->clientid, minor, enabled, cb_up, grace are read. Decides only.
 */
bool nfs4_dtab_decide_dir(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len,
			  const struct nfs4_dl_ask *a);
struct nfs4_dl_recall; /* below */
/* Record a directory delegation (nfs4_dtab_grant's, dir set) with the notifications want asks
 * (NOTIFY4_* bits): those of NFS4_DL_NOTIFY_GRANTABLE while the directory has fewer than
 * NFS4_DL_NOTIFY_MAX holders with notifications (RFC 8881 §18.39.3: a subset may be granted),
 * into *granted. false: no room. */
bool nfs4_dtab_grant_dir(struct nfs4_dtab *t, uint64_t clientid, const uint8_t *fkey, uint32_t fkey_len,
			 uint32_t want, uint32_t *granted, struct nfs4_stateid *sid);
/* RFC 8881 §18.39.3: of want (NOTIFY4_* bits), NOTIFY4_CHANGE_DIR_ATTRS stays only when the attributes
 * asked (gdda_dir_attributes, words 0 and 1) name some of NFS4_DL_DIR_ATTRS_TOLD; those into attrs[]
 * (the gddr_dir_attributes granted; none when the bit goes). Returns want so trimmed. */
uint32_t nfs4_dl_dir_want(uint32_t want, const uint32_t asked[2], uint32_t attrs[2]);
/* sid (a directory delegation granted NOTIFY_DIR_ATTRS) tells the attributes attrs[] (words 0, 1). */
void nfs4_dtab_set_dir_attrs(struct nfs4_dtab *t, const struct nfs4_stateid *sid, const uint32_t attrs[2]);
/* The directory's entries changed: its HELD delegations granted a notification of need
 * (NFS4_DL_NOTIFY_* bits: any of them; the changer's own too, RFC 8881 §20.4.3: a holder is told
 * of the entries it adds or removes itself), at most NFS4_DL_NOTIFY_MAX, into out[] (client,
 * stateid, directory). Returns how many. */
unsigned nfs4_dtab_dir_notified(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len, uint32_t need,
				struct nfs4_dl_recall *out);
/* The stateid of the live delegation whose stateid's counter word (other[8..11]) is counter: false if
 * none (gone, or the slot granted again since). Lets a callback's outcome name its delegation in a
 * pointer-sized argument. */
bool nfs4_dtab_sid_of_counter(const struct nfs4_dtab *t, uint32_t counter, struct nfs4_stateid *sid);
/* Its inverse's input: a delegation stateid's counter word. */
uint32_t nfs4_dtab_counter_of(const struct nfs4_stateid *sid);
/* A notification of sid could not be sent: the delegation is recalled instead (HELD -> RECALLED,
 * its CB_RECALL handed out into *r; counted as NFS4_DL_BY_NOTIFY). false: not HELD (nothing to do). */
bool nfs4_dtab_recall_now(struct nfs4_dtab *t, const struct nfs4_stateid *sid, uint64_t now,
			  struct nfs4_dl_recall *r);

/* Undo a grant just made (sid HELD): the OPEN's reply will not carry it. */
void nfs4_dtab_ungrant(struct nfs4_dtab *t, const struct nfs4_stateid *sid);
/* Has the file a delegation held or being recalled? */
bool nfs4_dtab_file_held(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len);

/* What a conflicting operation does to the file. */
enum nfs4_dl_access {
	NFS4_DL_ACC_READ,  /* READ, OPEN for reading: conflicts with write delegations */
	NFS4_DL_ACC_WRITE, /* WRITE, SETATTR, OPEN for writing or with a deny: with any */
	NFS4_DL_ACC_NS,    /* REMOVE, RENAME, LINK of the file: with any */
	NFS4_DL_ACC_LOCK,  /* LOCK, LOCKT, NLM LOCK / TEST: with any (the holder's
			    * client keeps its byte-range locks to itself, RFC 8881 §10.4) */
	NFS4_DL_ACC_DIR_ADD, /* an entry added to the directory (NFSv4 CREATE, OPEN creating, LINK):
			      * with any directory delegation but one granted NFS4_DL_NOTIFY_ADD,
			      * whose holder is sent CB_NOTIFY after the change (RFC 8881 §10.9.2) */
	NFS4_DL_ACC_DIR_REMOVE, /* an entry removed from the directory (REMOVE, RMDIR, the source of a
				 * RENAME to another directory): the same with NFS4_DL_NOTIFY_REMOVE */
	NFS4_DL_ACC_DIR_RENAME, /* an entry renamed within the directory: with NFS4_DL_NOTIFY_RENAME */
	NFS4_DL_ACC_DIR_ATTRS,  /* the directory's own attributes set (SETATTR, NFSv3 SETATTR): with any
				 * but a directory delegation granted NFS4_DL_NOTIFY_DIR_ATTRS (§10.9.1) */
};
/* The notification (NFS4_DL_NOTIFY_* bit) a holder granted it is told instead of a recall for acc;
 * 0: none, acc recalls every other client's delegation. */
uint32_t nfs4_dl_notify_of(enum nfs4_dl_access acc);
/* A CB_RECALL to send (RFC 8881 §20.2.1); from nfs4_dtab_dir_notified, a CB_NOTIFY's holder. */
struct nfs4_dl_recall {
	uint64_t clientid;
	struct nfs4_stateid sid;
	uint32_t dir_attrs[2]; /* nfs4_dtab_dir_notified: the directory attributes it is told */
	uint32_t fkey_len;
	uint8_t fkey[NFS4_DELEG_FKEY_MAX];
};
/*
 * An operation of clientid (0: of no client: anonymous stateid, NFSv3,
 * local) doing acc to the file at now, wanted by cause (counted in
 * recalls_by for each delegation it recalls). Delegations of other clients that
 * conflict are recalled (HELD -> RECALLED); one recalled a lease or more
 * ago is revoked and conflicts no more. true: the operation must wait
 * (NFS4ERR_DELAY). Up to max recalls to send go to out[] (*n); those left
 * are handed out at the next call.
 */
bool nfs4_dtab_conflict(struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid,
			enum nfs4_dl_access acc, enum nfs4_dl_cause cause, uint64_t now, uint32_t lease,
			struct nfs4_dl_recall *out, unsigned max, unsigned *n);
/*
 * GETATTR of the file by clientid (0: NFSv3, a 4.0 client) asking for its
 * size or change (RFC 8881 §10.4.3): NONE, no other client's write
 * delegation (the server's attributes stand); ASK, one HELD: send its holder
 * CB_GETATTR (*holder, *sid of it); WAIT, one being recalled (DELAY).
 */
enum nfs4_dl_ga { NFS4_DL_GA_NONE, NFS4_DL_GA_ASK, NFS4_DL_GA_WAIT };
enum nfs4_dl_ga nfs4_dtab_getattr(const struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len,
				  uint64_t clientid, uint64_t *holder, struct nfs4_stateid *sid);
/* The file's size and change when sid (a write delegation) was granted: the holder's baseline. */
void nfs4_dtab_set_base(struct nfs4_dtab *t, const struct nfs4_stateid *sid, uint64_t change, uint64_t size);
/* What the holder's CB_GETATTR answered (each value only when it was sent);
 * atime, mtime: time_deleg_access / time_deleg_modify (RFC 9754 §5.2). */
struct nfs4_dl_cbattr {
	bool has_change, has_size, has_atime, has_mtime;
	uint64_t change, size;
	struct nfs4_dl_time atime, mtime;
};
/* The attributes to report for a file under a write delegation (in: the server's). */
struct nfs4_dl_attr {
	uint64_t change, size;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	struct nfs4_dl_time atime;
};
/*
 * RFC 8881 §10.4.3: fold the holder's answer into *a (the server's
 * attributes on entry). A size or change other than the holder last reported
 * (the grant's values at first) means it modified the file: the server's
 * change goes past every value it reported before (the change it reports
 * never goes back) and time_modify to now (now_sec, now_nsec), as knfsd does;
 * from then on the holder's size is reported. Unmodified, *a stays the
 * server's. false: sid is no HELD write delegation any more (*a unchanged).
 */
bool nfs4_dtab_cb_merge(struct nfs4_dtab *t, const struct nfs4_stateid *sid, const struct nfs4_dl_cbattr *cb,
			int64_t now_sec, uint32_t now_nsec, struct nfs4_dl_attr *a);

/*
 * RFC 9754 §5 (delegated timestamps): sid (HELD) becomes an *_ATTRS_DELEG
 * delegation, the file's times at the grant being atime and mtime.
 */
void nfs4_dtab_set_ts(struct nfs4_dtab *t, const struct nfs4_stateid *sid, const struct nfs4_dl_time *atime,
		      const struct nfs4_dl_time *mtime);
/* Is sid a held or recalled *_ATTRS_DELEG delegation? */
bool nfs4_dtab_is_ts(const struct nfs4_dtab *t, const struct nfs4_stateid *sid);
/*
 * RFC 9754 §5 (as knfsd's nfsd4_vet_deleg_time): a time the holder reports
 * counts only when it is not before the original one (false: ignore it); one
 * past the server's now is brought back to now.
 */
bool nfs4_dl_time_vet(const struct nfs4_dl_time *orig, const struct nfs4_dl_time *now, struct nfs4_dl_time *t);
/* A SETATTR of time_deleg_access / time_deleg_modify (RFC 9754 §5.2). */
struct nfs4_dl_times {
	bool has_atime, has_mtime;
	struct nfs4_dl_time atime, mtime;
};
/*
 * Only the holder of an *_ATTRS_DELEG delegation of the file sets the
 * delegated times, with that delegation's stateid (RFC 9754 §5; knfsd's
 * nfsd4_setattr answers BAD_STATEID otherwise, as here). NFS4_OK: *tm vetted
 * (nfs4_dl_time_vet; a time ignored has its has_* cleared); BAD_STATEID (not
 * clientid's *_ATTRS_DELEG delegation of this file, an open or special
 * stateid included), OLD_STATEID, DELEG_REVOKED.
 */
uint32_t nfs4_dtab_set_times(const struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid,
			     uint32_t minor, const uint8_t *fkey, uint32_t fkey_len, const struct nfs4_dl_time *now,
			     struct nfs4_dl_times *tm);

/* The CB_RECALL of sid could not be queued: hand it out again. */
void nfs4_dtab_recall_unsent(struct nfs4_dtab *t, const struct nfs4_stateid *sid);
/* The delegations of the file being recalled are revoked at at the latest (sooner than a
 * lease after their recall: a local process the kernel lets in then, nfs4_deleg_tick()). */
void nfs4_dtab_deadline(struct nfs4_dtab *t, const uint8_t *fkey, uint32_t fkey_len, uint64_t at);
/*
 * How long a delegation recalled for a local process's open (its file's
 * lease broken) may wait for its return, given the NFSv4 lease and the
 * kernel's lease-break-time break_s (0: unknown). The kernel lets the process
 * in after break_s whatever rnfsd does, so under a longer lease the
 * delegation is revoked NFS4_DL_BREAK_MARGIN s before that (RFC 8881 §10.4.6:
 * the server may revoke one not returned) rather than leave its holder
 * believing in a delegation the local process already went past. 0: nothing
 * to shorten (the lease is the shorter, or break_s unknown).
 */
#define NFS4_DL_BREAK_MARGIN 3u
uint32_t nfs4_dtab_break_wait(uint32_t lease, unsigned break_s);
/* Revoke every delegation recalled a lease or more before now (or past its deadline). Returns how many. */
unsigned nfs4_dtab_expire(struct nfs4_dtab *t, uint64_t now, uint32_t lease);

/* DELEGRETURN (RFC 8881 §18.6.3): NFS4_OK (gone), BAD_STATEID (unknown,
 * another client's, another file: fkey NULL skips that check),
 * STALE_STATEID (4.0, another boot), OLD_STATEID, DELEG_REVOKED (ADMIN_REVOKED: see above). */
uint32_t nfs4_dtab_return(struct nfs4_dtab *t, uint64_t clientid, uint32_t minor, const struct nfs4_stateid *sid,
			  const uint8_t *fkey, uint32_t fkey_len);
/* TEST_STATEID (RFC 8881 §18.48.3): NFS4_OK, BAD_STATEID, DELEG_REVOKED, ADMIN_REVOKED. */
uint32_t nfs4_dtab_test(const struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid);
/* FREE_STATEID (RFC 8881 §18.38.3): a revoked one goes (NFS4_OK); a live one is LOCKS_HELD. */
uint32_t nfs4_dtab_free(struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid);
/* READ / WRITE with a delegation stateid of clientid (RFC 8881 §9.1.3, §10.4, §8.2.2): NFS4_OK,
 * BAD_STATEID (unknown, another client's, another file), DELEG_REVOKED, ADMIN_REVOKED, OPENMODE (WRITE with a
 * read delegation). */
uint32_t nfs4_dtab_check_io(const struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid,
			    uint32_t minor, const uint8_t *fkey, uint32_t fkey_len, uint32_t access);
/* OPEN with CLAIM_DELEGATE_CUR / CLAIM_DELEG_CUR_FH (RFC 8881 §18.16.3): sid is
 * clientid's delegation of the file (HELD or RECALLED). NFS4_OK or BAD_STATEID. */
uint32_t nfs4_dtab_check_claim(const struct nfs4_dtab *t, uint64_t clientid, const struct nfs4_stateid *sid,
			       const uint8_t *fkey, uint32_t fkey_len);

/* clientid's revoked delegations not yet freed, as SEQUENCE's sr_status_flags (RFC 8881
 * §18.46.3): SEQ4_STATUS_RECALLABLE_STATE_REVOKED (after a recall), SEQ4_STATUS_ADMIN_STATE_REVOKED
 * (by an administrator), 0 (none). */
uint32_t nfs4_dtab_client_revoked(const struct nfs4_dtab *t, uint64_t clientid);
/* How many delegations clientid has (any state). */
unsigned nfs4_dtab_client_count(const struct nfs4_dtab *t, uint64_t clientid);
/* The client's delegations go (DESTROY_CLIENTID, lease expiry, a new incarnation). */
void nfs4_dtab_purge_client(struct nfs4_dtab *t, uint64_t clientid);
/* The delegations (held or recalled) on files match() selects are revoked at once by an
 * administrator (their export removed or unlocked): REVOKED, answering ADMIN_REVOKED and raising
 * ADMIN_STATE_REVOKED until FREE_STATEID (RFC 8881 §15.1.5.1, §18.46.3). Returns how many. */
unsigned nfs4_dtab_revoke_files(struct nfs4_dtab *t, bool (*match)(const uint8_t *key, uint32_t len, void *arg),
				void *arg);
/* Up to max distinct clients holding delegations (CB_RECALL_ANY's targets). */
unsigned nfs4_dtab_holders(const struct nfs4_dtab *t, uint64_t *ids, unsigned max);
/* What the stats show of the table: delegations by kind now, recalls by cause and revocations since start. */
struct nfs4_dl_counts {
	uint64_t kind[NFS4_DL_KINDS];         /* enum nfs4_dl_kind; their sum: the delegations */
	uint64_t recalls_by[NFS4_DL_CAUSES];  /* enum nfs4_dl_cause; their sum: the recalls */
	uint64_t dir_recalls_by[NFS4_DL_CAUSES]; /* ... of them, directory delegations' */
	uint64_t revoked_unanswered;          /* RFC 8881 §10.4.6: a recall not answered by DELEGRETURN in time */
	uint64_t revoked_admin;               /* RFC 8881 §15.1.5.1: by an administrator (export removed, unlocked) */
};
void nfs4_dtab_counts(const struct nfs4_dtab *t, struct nfs4_dl_counts *out);

/* ---- the server's table (nfs4_proc_deleg.c) ---- */

/* An access of clientid's (0: none: anonymous stateid, NFSv3) to the file
 * (its handle's bytes): other clients' conflicting delegations are recalled;
 * NFS4ERR_DELAY while any is outstanding (NFSv3: NFS3ERR_JUKEBOX), else
 * NFS4_OK. acc: enum nfs4_dl_access. No lock taken while nothing is delegated. */
uint32_t nfs4_deleg_break(const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid, unsigned acc);
/* The same, wanted by cause (nfs4_deleg_break's is NFS4_DL_BY_NFS4: an NFSv4 operation's). */
uint32_t nfs4_deleg_break_by(const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid, unsigned acc,
			     enum nfs4_dl_cause cause);
/* The server table's nfs4_dtab_counts() (the stats). */
void nfs4_deleg_counts(struct nfs4_dl_counts *out);
struct nfs_export;
struct be_cred;
struct be_obj;
/* The same for the regular file (or delegated directory) dir/name of export exp, looked up as cr, if
 * there is one (REMOVE, RENAME, NFSv3 too): NFS4_OK or NFS4ERR_DELAY. */
uint32_t nfs4_deleg_break_at(const struct nfs_export *exp, const struct be_cred *cr, const struct be_obj *dir,
			     const char *name, uint64_t clientid);
/* Each second (nfs4_server_tick): recalls unanswered for a lease, or past their deadline, are revoked. */
void nfs4_deleg_tick(uint64_t now);
/* The server table's nfs4_dtab_getattr() and nfs4_dtab_cb_merge() (nfs4_deleg_getattr.c). */
enum nfs4_dl_ga nfs4_deleg_ga_find(const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid, uint64_t *holder,
				   struct nfs4_stateid *sid);
bool nfs4_deleg_ga_merge(const struct nfs4_stateid *sid, const struct nfs4_dl_cbattr *cb, int64_t now_sec,
			 uint32_t now_nsec, struct nfs4_dl_attr *a);
/* The server table's nfs4_dtab_is_ts() (which CB_GETATTR asks the delegated times too). */
bool nfs4_deleg_ga_ts(const struct nfs4_stateid *sid);
/* The server table's nfs4_dtab_set_times() (SETATTR of the delegated times). */
uint32_t nfs4_deleg_set_times(uint64_t clientid, const struct nfs4_stateid *sid, uint32_t minor, const uint8_t *fkey,
			      uint32_t fkey_len, const struct nfs4_dl_time *now, struct nfs4_dl_times *tm);
struct be_attr;
/*
 * nfs4_deleg_getattr.c: GETATTR of a regular file's size or change by
 * clientid (0: NFSv3, 4.0) while another client holds a write delegation of
 * it (RFC 8881 §10.4.3): CB_GETATTR to the holder, waited for a bounded time
 * on this (worker) thread; *attr then carries what the holder's answer means
 * (nfs4_dtab_cb_merge). NFS4_OK, or NFS4ERR_DELAY: the delegation is being
 * recalled, or the holder did not answer in time (it is recalled, as knfsd,
 * counted under cause: the GETATTR's protocol).
 */
uint32_t nfs4_deleg_getattr(const uint8_t *fkey, uint32_t fkey_len, uint64_t clientid, enum nfs4_dl_cause cause,
			    struct be_attr *attr);
/* CB_GETATTRs sent, and those not answered in time (the stats). */
void nfs4_deleg_getattr_stats(uint64_t *sent, uint64_t *unanswered);
/* Slots of the waiter table taken now (of NFS4_GA_WAITERS, state/nfs4_ga_wait.h; the stats). */
unsigned nfs4_deleg_getattr_waiters(void);

/* Is anything delegated now? (A hint without a lock: callers skip a lookup
 * made only to find the handle nfs4_deleg_break() wants.) */
bool nfs4_deleg_any(void);
/* The server table's nfs4_dtab_file_held(). */
bool nfs4_deleg_held(const uint8_t *fkey, uint32_t fkey_len);

#endif
