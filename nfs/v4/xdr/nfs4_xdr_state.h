/*
 * nfs4_xdr_state.h - XDR of the NFSv4 state and I/O operations: stateid4,
 * SETCLIENTID (RFC 7530 §16.33), SETCLIENTID_CONFIRM (§16.34), RENEW
 * (§16.29), OPEN (RFC 8881 §18.16), OPEN_CONFIRM (RFC 7530 §16.20),
 * OPEN_DOWNGRADE (RFC 8881 §18.18), CLOSE (§18.2), READ (§18.22), WRITE
 * (§18.32), COMMIT (§18.3), TEST_STATEID (§18.48), FREE_STATEID (§18.38),
 * LOCK (§18.10), LOCKT (§18.11), LOCKU (§18.12), RELEASE_LOCKOWNER (RFC 7530 §16.37),
 * GET_DIR_DELEGATION (RFC 8881 §18.39).
 * Same rules as nfs4_xdr.h: bounds-checked, pointers into the message,
 * false = BADXDR. OPEN's createattrs are decoded by nfs4_sattr_dec(), whose
 * status (ATTRNOTSUPP, INVAL, BADOWNER) the operation answers.
 */
#ifndef RNFSD_NFS4_XDR_STATE_H
#define RNFSD_NFS4_XDR_STATE_H

#include "nfs/v4/xdr/nfs4_sattr.h"
#include "nfs/v4/state/nfs4_clients.h"
#include "nfs/v4/state/nfs4_stateid.h"
#include "nfs/v4/xdr/nfs4_xdr.h"

struct rpc_call;

/* opentype4, createmode4, open_claim_type4, open_delegation_type4, why_no_delegation4 */
enum { OPEN4_NOCREATE = 0, OPEN4_CREATE = 1 };
enum { UNCHECKED4 = 0, GUARDED4 = 1, EXCLUSIVE4 = 2, EXCLUSIVE4_1 = 3 };
enum { CLAIM_NULL = 0, CLAIM_PREVIOUS = 1, CLAIM_DELEGATE_CUR = 2, CLAIM_DELEGATE_PREV = 3,
       CLAIM_FH = 4, CLAIM_DELEG_CUR_FH = 5, CLAIM_DELEG_PREV_FH = 6 };
enum { OPEN_DELEGATE_NONE = 0, OPEN_DELEGATE_READ = 1, OPEN_DELEGATE_WRITE = 2, OPEN_DELEGATE_NONE_EXT = 3,
       /* RFC 9754 §5.2: read / write delegations whose holder also owns time_access / time_modify */
       OPEN_DELEGATE_READ_ATTRS_DELEG = 4, OPEN_DELEGATE_WRITE_ATTRS_DELEG = 5 };
enum { WND4_NOT_WANTED = 0, WND4_CONTENTION = 1, WND4_RESOURCE = 2, WND4_NOT_SUPP_UPGRADE = 5, WND4_CANCELLED = 7 };
/* RFC 8881 §18.16.1: share_access's delegation want bits (4.1+). */
#define OPEN4_SHARE_ACCESS_WANT_DELEG_MASK 0xff00u
#define OPEN4_SHARE_ACCESS_WANT_NO_PREFERENCE 0x0000u
#define OPEN4_SHARE_ACCESS_WANT_NO_DELEG 0x0400u
#define OPEN4_SHARE_ACCESS_WANT_CANCEL 0x0500u
#define OPEN4_SHARE_ACCESS_WANT_SIGNALS 0x30000u
#define OPEN4_SHARE_ACCESS_WANT_DELEG_TIMESTAMPS 0x100000u /* RFC 9754 §5.2 (4.2) */
#define OPEN4_SHARE_ACCESS_WANT_OPEN_XOR_DELEGATION 0x200000u /* RFC 9754 §4 (4.2) */
#define OPEN4_RESULT_NO_OPEN_STATEID 0x10u /* RFC 9754 §4 */
#define OPEN4_RESULT_CONFIRM 0x2u
#define OPEN4_RESULT_LOCKTYPE_POSIX 0x4u
#define OPEN4_RESULT_MAY_NOTIFY_LOCK 0x20u
/* stable_how4 */
enum { UNSTABLE4 = 0, DATA_SYNC4 = 1, FILE_SYNC4 = 2 };

struct nfs4_setclientid_args {
	uint8_t verifier[8];
	const uint8_t *id;
	uint32_t id_len;
	struct nfs4_cb_info cb; /* netid/addr copied (longer ones: lengths 0, no callback path) */
};
struct nfs4_setclientid_confirm_args {
	uint64_t clientid;
	uint8_t confirm[8];
};
struct nfs4_open_args {
	uint32_t seqid;
	uint32_t share_access, share_deny; /* as sent (want bits included) */
	uint64_t clientid;
	const uint8_t *owner;
	uint32_t owner_len;
	uint32_t opentype, createmode;
	uint32_t sattr_status;   /* nfs4_sattr_dec()'s status for createattrs */
	struct nfs4_sattr attrs; /* UNCHECKED4, GUARDED4, EXCLUSIVE4_1 */
	uint8_t verf[8];         /* EXCLUSIVE4, EXCLUSIVE4_1 */
	uint32_t claim;
	struct nfs4_name name;   /* CLAIM_NULL, CLAIM_DELEGATE_CUR/PREV */
	struct nfs4_stateid deleg_sid; /* CLAIM_DELEGATE_CUR, CLAIM_DELEG_CUR_FH */
};
struct nfs4_sid_seqid_args { /* OPEN_CONFIRM, CLOSE (seqid first), OPEN_DOWNGRADE */
	struct nfs4_stateid sid;
	uint32_t seqid;
	uint32_t access, deny; /* OPEN_DOWNGRADE */
};
struct nfs4_read_args {
	struct nfs4_stateid sid;
	uint64_t offset;
	uint32_t count;
};
struct nfs4_write_args {
	struct nfs4_stateid sid;
	uint64_t offset;
	uint32_t stable;
	const uint8_t *data; /* inline or a Read chunk's (rpc_dec_ddp) */
	uint32_t len;
};
struct nfs4_commit_args {
	uint64_t offset;
	uint32_t count;
};
#define NFS4_TEST_STATEID_MAX 64u
struct nfs4_test_stateid_args {
	uint32_t n;
	struct nfs4_stateid sids[NFS4_TEST_STATEID_MAX];
};
struct nfs4_stateid_args { /* FREE_STATEID */
	struct nfs4_stateid sid;
};

/* nfs_lock_type4 (RFC 8881 §18.10.1) */
enum { READ_LT = 1, WRITE_LT = 2, READW_LT = 3, WRITEW_LT = 4 };
struct nfs4_lock_owner4 {
	uint64_t clientid;
	const uint8_t *owner;
	uint32_t owner_len;
};
struct nfs4_lock_args { /* LOCK4args (RFC 8881 §18.10.1) */
	uint32_t locktype;
	bool reclaim, new_lock_owner;
	uint64_t offset, length;
	uint32_t open_seqid;           /* new_lock_owner */
	struct nfs4_stateid sid;       /* open stateid (new owner) or lock stateid */
	uint32_t lock_seqid;
	struct nfs4_lock_owner4 owner; /* new_lock_owner */
};
struct nfs4_lockt_args {
	uint32_t locktype;
	uint64_t offset, length;
	struct nfs4_lock_owner4 owner;
};
struct nfs4_locku_args {
	uint32_t locktype, seqid;
	struct nfs4_stateid sid;
	uint64_t offset, length;
};
struct nfs4_lock_owner_args { /* RELEASE_LOCKOWNER */
	struct nfs4_lock_owner4 owner;
};

/* GET_DIR_DELEGATION4args / 4res (RFC 8881 §18.39.1, §18.39.2). The attr_notice4 delays are read and
 * dropped: notifications are sent at once (the delay granted is 0, as asked or shorter, §18.39.3). */
enum { GDD4_OK = 0, GDD4_UNAVAIL = 1 };
struct nfs4_gdd_args {
	bool signal_avail;              /* gdda_signal_deleg_avail */
	struct nfs4_bitmap notify;      /* gdda_notification_types (NOTIFY4_*) */
	struct nfs4_bitmap child_attrs; /* gdda_child_attributes */
	struct nfs4_bitmap dir_attrs;   /* gdda_dir_attributes */
};
struct nfs4_gdd_res {
	uint32_t nf_status;                     /* gddrnf_status: GDD4_OK or GDD4_UNAVAIL */
	uint8_t cookieverf[NFS4_VERIFIER_SIZE]; /* GDD4_OK: gddr_cookieverf */
	struct nfs4_stateid sid;                /* GDD4_OK: gddr_stateid */
	struct nfs4_bitmap notify;              /* GDD4_OK: gddr_notification granted */
	struct nfs4_bitmap dir_attrs;           /* GDD4_OK: gddr_dir_attributes (NOTIFY4_CHANGE_DIR_ATTRS's) */
};

bool nfs4_dec_stateid(struct xdr_dec *d, struct nfs4_stateid *s);
void nfs4_enc_stateid(struct xdr_enc *e, const struct nfs4_stateid *s);
bool nfs4_dec_setclientid(struct xdr_dec *d, struct nfs4_setclientid_args *a);
bool nfs4_dec_setclientid_confirm(struct xdr_dec *d, struct nfs4_setclientid_confirm_args *a);
bool nfs4_dec_open(struct xdr_dec *d, struct nfs4_open_args *a);
bool nfs4_dec_open_confirm(struct xdr_dec *d, struct nfs4_sid_seqid_args *a);
bool nfs4_dec_close(struct xdr_dec *d, struct nfs4_sid_seqid_args *a);
bool nfs4_dec_open_downgrade(struct xdr_dec *d, struct nfs4_sid_seqid_args *a);
bool nfs4_dec_read(struct xdr_dec *d, struct nfs4_read_args *a);
/* c: the RPC call, for WRITE data in a Read chunk (NULL: inline only). */
bool nfs4_dec_write(struct xdr_dec *d, struct rpc_call *c, struct nfs4_write_args *a);
bool nfs4_dec_commit(struct xdr_dec *d, struct nfs4_commit_args *a);
bool nfs4_dec_test_stateid(struct xdr_dec *d, struct nfs4_test_stateid_args *a);
bool nfs4_dec_free_stateid(struct xdr_dec *d, struct nfs4_stateid_args *a);
bool nfs4_dec_lock(struct xdr_dec *d, struct nfs4_lock_args *a);
bool nfs4_dec_lockt(struct xdr_dec *d, struct nfs4_lockt_args *a);
bool nfs4_dec_locku(struct xdr_dec *d, struct nfs4_locku_args *a);
bool nfs4_dec_lock_owner(struct xdr_dec *d, struct nfs4_lock_owner_args *a);
bool nfs4_dec_get_dir_delegation(struct xdr_dec *d, struct nfs4_gdd_args *a);
/* GET_DIR_DELEGATION4res_non_fatal (after the NFS4_OK status). */
void nfs4_enc_get_dir_delegation(struct xdr_enc *e, const struct nfs4_gdd_res *r);

#endif
