/*
 * nfs4_cb_xdr.h - XDR of the NFSv4 callback program (RFC 8881 §20, RFC 7530
 * §17; pure): CB_COMPOUND arguments with CB_SEQUENCE (RFC 8881 §20.9) that
 * rnfsd sends, and the CB_COMPOUND / CB_SEQUENCE results it decodes. Those
 * results come from clients: every count and length is checked against what
 * was received before it is used, and a decoder hands out no pointer past
 * the reply. Also the RFC 5665 universal address of an NFSv4.0 client's
 * callback service (SETCLIENTID's cb_location).
 */
#ifndef RNFSD_NFS4_CB_XDR_H
#define RNFSD_NFS4_CB_XDR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nfs/v4/state/nfs4_stateid.h"
#include "rpc/rpc.h"
#include "rpc/xdr.h"

/* RFC 8881 §20 / RFC 7530 §17: the callback procedures. */
#define NFS4_CB_PROC_NULL 0u
#define NFS4_CB_PROC_COMPOUND 1u
/* The callback program's version: 1 for NFSv4.0 (RFC 7530 §17) and, in
 * practice, for NFSv4.1 too: RFC 8881 §18.36.3's prose says 4, but the
 * official XDR (RFC 8881 §20 / RFC 5662) has NFS_CB = 1, knfsd sends 1
 * (its nfs4callback.c says so, pending an erratum), the Linux client takes
 * 1 and 4, and pynfs's callback server refuses 4 (PROG_MISMATCH). */
#define NFS4_CB_VERS40 1u
#define NFS4_CB_VERS41 1u
/* nfs_cb_opnum4 (RFC 8881 §20). */
#define OP_CB_SEQUENCE 11u
#define OP_CB_ILLEGAL 10044u
#define NFS4_CB_SID_SIZE 16u
/* The most results a CB_COMPOUND reply may list before we stop looking. */
#define NFS4_CB_MAX_RES 16u
/* The operations rnfsd calls besides CB_SEQUENCE (RFC 8881 §20, RFC 7862 §16). */
#define OP_CB_GETATTR 3u
#define OP_CB_RECALL 4u
#define OP_CB_LAYOUTRECALL 5u
#define OP_CB_RECALL_ANY 8u
#define OP_CB_NOTIFY_LOCK 13u
#define OP_CB_OFFLOAD 15u
#define OP_CB_NOTIFY 6u
#define NFS4_CB_FH_MAX 128u     /* nfs_fh4: opaque<NFS4_FHSIZE> */
#define NFS4_CB_OWNER_MAX 1024u /* lock_owner4.owner: opaque<NFS4_OPAQUE_LIMIT> */

/* The credential callbacks carry (csa_sec_parms / BACKCHANNEL_CTL, RFC 8881
 * §18.36.1; 4.0: AUTH_SYS as root). usable false: only flavors rnfsd cannot
 * send (RPCSEC_GSS), so no back channel.
 * Decoded from callback_sec_parms4 by nfs4_xdr_session.c. */
struct nfs4_cb_sec {
	bool usable;
	struct rpc_cred cred;
};

/* CB_SEQUENCE4args (RFC 8881 §20.9.1), with no referring call lists. */
struct nfs4_cb_seq_args {
	uint8_t sessionid[NFS4_CB_SID_SIZE];
	uint32_t seqid, slotid, highest_slotid;
	bool cachethis;
};

/* CB_SEQUENCE4resok (RFC 8881 §20.9.2). */
struct nfs4_cb_seq_res {
	uint32_t status; /* csr_status */
	uint8_t sessionid[NFS4_CB_SID_SIZE];
	uint32_t seqid, slotid, highest_slotid, target_highest_slotid;
};

/* RFC 8881 §20.1.2 CB_GETATTR4resok: of the fattr4, the change (attribute 3)
 * and size (4) rnfsd asks for, and RFC 9754 §5.2's time_deleg_access (84)
 * and time_deleg_modify (85) when nothing else comes before them; the values
 * of other attributes after change and size are not read. */
struct nfs4_cb_getattr_res {
	bool has_change, has_size, has_atime, has_mtime;
	uint64_t change, size;
	int64_t atime_sec, mtime_sec;
	uint32_t atime_nsec, mtime_nsec;
};

/* What a CB_COMPOUND4res says (RFC 8881 §20.2): its status, how many results,
 * and the first one if it is CB_SEQUENCE's. */
struct nfs4_cb_compound_res {
	uint32_t status;
	uint32_t nres;
	bool has_seq;             /* resarray[0] is CB_SEQUENCE's */
	struct nfs4_cb_seq_res seq;
	bool has_op;              /* the operation after it (nfs4_cb_dec_compound_op) answered */
	uint32_t op_status;
	struct nfs4_cb_getattr_res ga; /* CB_GETATTR answered NFS4_OK */
};

/* nfs_fh4 as a callback carries it. */
struct nfs4_cb_fh {
	uint32_t len; /* <= NFS4_CB_FH_MAX */
	uint8_t data[NFS4_CB_FH_MAX];
};

/* RFC 8881 §20.1.1 CB_GETATTR4args: the file, and attr_request (one word:
 * change and size are attributes 3 and 4; three when mask2, RFC 9754's
 * delegated times, 84 and 85). out: where the loop thread puts the answer
 * before done() runs (it must live until done() has run). */
struct nfs4_cb_getattr_args {
	struct nfs4_cb_fh fh;
	uint32_t mask0, mask2;
	struct nfs4_cb_getattr_res *out;
};

/* RFC 8881 §20.2.1 CB_RECALL4args. */
struct nfs4_cb_recall_args {
	struct nfs4_stateid stateid;
	bool truncate;
	struct nfs4_cb_fh fh;
};

/* RFC 8881 §20.6.1 CB_RECALL_ANY4args (craa_type_mask: bitmap4 of
 * RCA4_TYPE_MASK_*, at most two words here). */
#define RCA4_TYPE_MASK_RDATA_DLG 0u
#define RCA4_TYPE_MASK_WDATA_DLG 1u
#define RCA4_TYPE_MASK_DIR_DLG 2u
struct nfs4_cb_recall_any_args {
	uint32_t objects_to_keep;
	uint32_t mask_len; /* 0..2 words */
	uint32_t mask[2];
};

/* RFC 8881 §20.11.1 CB_NOTIFY_LOCK4args. */
struct nfs4_cb_notify_lock_args {
	struct nfs4_cb_fh fh;
	uint64_t clientid; /* lock_owner4 (RFC 8881 §3.3.9 state_owner4) */
	uint32_t owner_len; /* <= NFS4_CB_OWNER_MAX */
	uint8_t owner[NFS4_CB_OWNER_MAX];
};

/* RFC 7862 §16.1.1 CB_OFFLOAD4args: offload_info4 is a write_response4
 * (§15.5.1, wr_callback_id<1> left empty: the copy's stateid is
 * coa_stateid) when status is NFS4_OK, else the bytes copied. */
struct nfs4_cb_offload_args {
	struct nfs4_cb_fh fh;
	struct nfs4_stateid stateid;
	uint32_t status;
	uint64_t count;          /* wr_count, or coa_bytes_copied on error */
	uint32_t committed;      /* stable_how4 */
	uint8_t writeverf[8];
};

/* RFC 8881 §20.3.1 CB_LAYOUTRECALL4args: layoutrecall4's arm by
 * recall_type (layoutrecall_type4: FILE 1 the file, range and layout
 * stateid; FSID 2 the fsid4; ALL 3 nothing). */
enum { LAYOUTRECALL4_FILE = 1, LAYOUTRECALL4_FSID = 2, LAYOUTRECALL4_ALL = 3 };
struct nfs4_cb_layoutrecall_args {
	uint32_t layout_type, iomode; /* clora_type, clora_iomode */
	bool changed;                 /* clora_changed */
	uint32_t recall_type;
	struct nfs4_cb_fh fh;         /* FILE: lor_fh, lor_offset, lor_length, lor_stateid */
	uint64_t offset, length;
	struct nfs4_stateid stateid;
	uint64_t fsid_major, fsid_minor; /* FSID */
};

/* RFC 8881 §20.4.1 CB_NOTIFY4args with one notify4 of one notify_type4 (directory delegations'
 * notifications, §10.9.2): REMOVE_ENTRY (name, cookie), ADD_ENTRY (name), RENAME_ENTRY (name and
 * cookie removed, new_name added); entries carry no attributes (no child attributes granted), no
 * cookie or previous entry for an added one (optional), nad_last_entry false; replaced: the added
 * name replaced an existing entry (a RENAME over it), reported in nad_old_entry (RFC 8881 §18.26.4).
 * CHANGE_DIR_ATTRS: a notify_attr4 whose na_changed_entry has an empty ne_file (the directory itself,
 * which cna_fh names; rnfsd knows it by handle, not by a name in its parent) and ne_attrs the fattr4
 * in attrs (already encoded: bitmap4 and attrlist4, nfs4_attr_encode). Sent by nfs4_deleg_dir_note(),
 * ops/nfs4_proc_deleg.c. */
#define NOTIFY4_CHANGE_DIR_ATTRS 1u
#define NOTIFY4_REMOVE_ENTRY 2u
#define NOTIFY4_ADD_ENTRY 3u
#define NOTIFY4_RENAME_ENTRY 4u
#define NFS4_CB_NAME_MAX 255u /* component4 (NFS4_NAME_MAX) */
#define NFS4_CB_DIR_ATTRS_MAX 508u /* CHANGE_DIR_ATTRS: the fattr4's bytes (in the names' room) */
struct nfs4_cb_notify_args {
	struct nfs4_stateid stateid; /* cna_stateid: the directory delegation */
	struct nfs4_cb_fh fh;        /* cna_fh: the directory */
	uint32_t type;               /* NOTIFY4_CHANGE_DIR_ATTRS, _REMOVE_ENTRY, _ADD_ENTRY, _RENAME_ENTRY */
	uint64_t cookie;             /* nrm_old_entry_cookie (REMOVE, RENAME) */
	bool replaced;               /* ADD, RENAME: nad_old_entry names the entry replaced */
	uint32_t name_len, new_len;  /* <= NFS4_CB_NAME_MAX */
	uint32_t attrs_len;          /* CHANGE_DIR_ATTRS: <= NFS4_CB_DIR_ATTRS_MAX, a multiple of 4 */
	union {
		struct {
			uint8_t name[NFS4_CB_NAME_MAX];     /* the entry (RENAME: its old name) */
			uint8_t new_name[NFS4_CB_NAME_MAX]; /* RENAME: its new name */
		};
		uint8_t attrs[NFS4_CB_DIR_ATTRS_MAX]; /* CHANGE_DIR_ATTRS: ne_attrs, XDR-encoded */
	};
};

/* One callback operation (nfs4_cb_send(), nfs4_cb.h). */
enum nfs4_cb_opkind {
	NFS4_CB_OP_RECALL, NFS4_CB_OP_RECALL_ANY, NFS4_CB_OP_NOTIFY_LOCK, NFS4_CB_OP_OFFLOAD, NFS4_CB_OP_GETATTR,
	NFS4_CB_OP_LAYOUTRECALL, NFS4_CB_OP_NOTIFY
};
struct nfs4_cb_op {
	enum nfs4_cb_opkind kind;
	union {
		struct nfs4_cb_recall_args recall;
		struct nfs4_cb_recall_any_args recall_any;
		struct nfs4_cb_notify_lock_args notify_lock;
		struct nfs4_cb_offload_args offload;
		struct nfs4_cb_getattr_args getattr;
		struct nfs4_cb_layoutrecall_args layoutrecall;
		struct nfs4_cb_notify_args notify;
	} u;
};
/* The nfs_cb_opnum4 of a kind. */
uint32_t nfs4_cb_opnum(enum nfs4_cb_opkind kind);
/* The operation's number and arguments (nfs_cb_argop4). Lengths over their
 * limits set e->overflow (nothing sent). */
void nfs4_cb_enc_op(struct xdr_enc *e, const struct nfs4_cb_op *op);

/*
 * CB_COMPOUND4args (RFC 8881 §20.2.1, RFC 7530 §17.2): tag "", minorversion,
 * callback_ident (4.0: SETCLIENTID's; 4.1 clients ignore it, 0 is sent), one
 * CB_SEQUENCE when seq is not NULL, nothing else yet. The caller checks
 * e->overflow.
 */
void nfs4_cb_enc_compound(struct xdr_enc *e, uint32_t minorversion, uint32_t ident,
			  const struct nfs4_cb_seq_args *seq);
/* The same with op after CB_SEQUENCE (or alone, 4.0: seq NULL). */
void nfs4_cb_enc_compound_op(struct xdr_enc *e, uint32_t minorversion, uint32_t ident,
			     const struct nfs4_cb_seq_args *seq, const struct nfs4_cb_op *op);

enum nfs4_cb_dec_result {
	NFS4_CB_DEC_OK,
	NFS4_CB_DEC_SHORT, /* ends inside an item, or a length over its limit */
	NFS4_CB_DEC_BAD,   /* an operation number not asked for, or too many results */
};
/* Decode CB_COMPOUND4res from d (the RPC results): a reply to a CB_COMPOUND
 * of CB_SEQUENCE alone. */
enum nfs4_cb_dec_result nfs4_cb_dec_compound(struct xdr_dec *d, struct nfs4_cb_compound_res *r);
/*
 * The same for a CB_COMPOUND of {CB_SEQUENCE (when seq), opnum}: besides the
 * CB_SEQUENCE result (4.1), the result of opnum when the client got to it
 * (r->has_op, r->op_status: every operation here answers a plain nfsstat4,
 * RFC 8881 §20.2.2, §20.6.2, §20.11.2, RFC 7862 §16.1.2, but CB_GETATTR,
 * whose fattr4 goes to r->ga, §20.1.2). A result for
 * another operation is BAD; a result array shorter than asked is not
 * (processing stopped at an error: r->status says which).
 */
enum nfs4_cb_dec_result nfs4_cb_dec_compound_op(struct xdr_dec *d, bool seq, uint32_t opnum,
						struct nfs4_cb_compound_res *r);
/* Decode one CB_SEQUENCE4res (csr_status, then resok when NFS4_OK). */
enum nfs4_cb_dec_result nfs4_cb_dec_sequence(struct xdr_dec *d, struct nfs4_cb_seq_res *r);

/*
 * RFC 5665 §5.2.3.3/§5.2.3.4: a universal address of netid "tcp"
 * ("h1.h2.h3.h4.p1.p2") or "tcp6" (an IPv6 address, ".p1.p2") into *sa
 * (*len set). netid and addr are not NUL-terminated (their lengths given).
 * false: another netid, or the address does not parse, or port 0.
 */
bool nfs4_cb_uaddr_parse(const char *netid, uint32_t netid_len, const char *addr, uint32_t addr_len,
			 struct sockaddr_storage *sa, socklen_t *len);

#endif
