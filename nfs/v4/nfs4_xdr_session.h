/*
 * nfs4_xdr_session.h - XDR of the NFSv4.1 session operations (RFC 8881
 * §18.35 EXCHANGE_ID, §18.36 CREATE_SESSION, §18.37 DESTROY_SESSION, §18.46
 * SEQUENCE, §18.50 DESTROY_CLIENTID, §18.51 RECLAIM_COMPLETE). Same rules as
 * nfs4_xdr.h: bounds-checked, pointers into the message, false = BADXDR.
 */
#ifndef RNFSD_NFS4_XDR_SESSION_H
#define RNFSD_NFS4_XDR_SESSION_H

#include "nfs/v4/nfs4_state.h"
#include "nfs/v4/nfs4_xdr.h"

enum { SP4_NONE = 0, SP4_MACH_CRED = 1, SP4_SSV = 2 }; /* state_protect_how4 */
#define NFS4_CB_SEC_MAX 8u /* csa_sec_parms we accept */

struct nfs4_exid_args {
	uint8_t verifier[8];
	const uint8_t *owner;
	uint32_t owner_len;
	uint32_t flags;
	uint32_t how; /* SP4_* */
};
struct nfs4_create_session_args {
	uint64_t clientid;
	uint32_t sequence, flags;
	struct nfs4_chan_attrs fore, back;
	uint32_t cb_program;
};
struct nfs4_sequence_args {
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t sequenceid, slotid, highest_slotid;
	bool cachethis;
};
struct nfs4_sessionid_args {
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
};
struct nfs4_clientid_args {
	uint64_t clientid;
};
struct nfs4_reclaim_complete_args {
	bool one_fs;
};

bool nfs4_dec_exchange_id(struct xdr_dec *d, struct nfs4_exid_args *a);
bool nfs4_dec_create_session(struct xdr_dec *d, struct nfs4_create_session_args *a);
bool nfs4_dec_sequence(struct xdr_dec *d, struct nfs4_sequence_args *a);
bool nfs4_dec_sessionid(struct xdr_dec *d, struct nfs4_sessionid_args *a);
bool nfs4_dec_clientid(struct xdr_dec *d, struct nfs4_clientid_args *a);
bool nfs4_dec_reclaim_complete(struct xdr_dec *d, struct nfs4_reclaim_complete_args *a);

/* EXCHANGE_ID4resok with SP4_NONE, the given server owner/scope, no implementation id. */
void nfs4_enc_exchange_id(struct xdr_enc *e, const struct nfs4_exid_res *r, const char *owner_major,
			  const char *scope);
/* CREATE_SESSION4resok. */
void nfs4_enc_create_session(struct xdr_enc *e, const uint8_t sid[NFS4_SESSIONID_SIZE], uint32_t sequence,
			     uint32_t flags, const struct nfs4_chan_attrs *fore, const struct nfs4_chan_attrs *back);
/* SEQUENCE4resok. */
void nfs4_enc_sequence(struct xdr_enc *e, const struct nfs4_sequence_args *a, uint32_t highest,
		       uint32_t target, uint32_t status_flags);

#endif
