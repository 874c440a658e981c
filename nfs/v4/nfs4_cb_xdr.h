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

#include "rpc/rpc.h"
#include "rpc/xdr.h"

/* RFC 8881 §20 / RFC 7530 §17: the callback procedures. */
#define NFS4_CB_PROC_NULL 0u
#define NFS4_CB_PROC_COMPOUND 1u
/* The callback program's version: 1 for NFSv4.0 (RFC 7530 §17), 4 for
 * NFSv4.1 (RFC 8881 §20: "the callback program ... version 4"). */
#define NFS4_CB_VERS40 1u
#define NFS4_CB_VERS41 4u
/* nfs_cb_opnum4 (RFC 8881 §20). */
#define OP_CB_SEQUENCE 11u
#define OP_CB_ILLEGAL 10044u
#define NFS4_CB_SID_SIZE 16u
/* The most results a CB_COMPOUND reply may list before we stop looking. */
#define NFS4_CB_MAX_RES 16u

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

/* What a CB_COMPOUND4res says (RFC 8881 §20.2): its status, how many results,
 * and the first one if it is CB_SEQUENCE's. */
struct nfs4_cb_compound_res {
	uint32_t status;
	uint32_t nres;
	bool has_seq;             /* resarray[0] is CB_SEQUENCE's */
	struct nfs4_cb_seq_res seq;
};

/*
 * CB_COMPOUND4args (RFC 8881 §20.2.1, RFC 7530 §17.2): tag "", minorversion,
 * callback_ident (4.0: SETCLIENTID's; 4.1 clients ignore it, 0 is sent), one
 * CB_SEQUENCE when seq is not NULL, nothing else yet. The caller checks
 * e->overflow.
 */
void nfs4_cb_enc_compound(struct xdr_enc *e, uint32_t minorversion, uint32_t ident,
			  const struct nfs4_cb_seq_args *seq);

enum nfs4_cb_dec_result {
	NFS4_CB_DEC_OK,
	NFS4_CB_DEC_SHORT, /* ends inside an item, or a length over its limit */
	NFS4_CB_DEC_BAD,   /* an operation number not asked for, or too many results */
};
/* Decode CB_COMPOUND4res from d (the RPC results). */
enum nfs4_cb_dec_result nfs4_cb_dec_compound(struct xdr_dec *d, struct nfs4_cb_compound_res *r);
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
