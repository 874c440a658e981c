/*
 * nfs4_xdr_session.h - XDR of the NFSv4.1 session operations (RFC 8881
 * §18.33 BACKCHANNEL_CTL, §18.34 BIND_CONN_TO_SESSION, §18.35 EXCHANGE_ID,
 * §18.36 CREATE_SESSION, §18.37 DESTROY_SESSION, §18.46 SEQUENCE, §18.50 DESTROY_CLIENTID, §18.51 RECLAIM_COMPLETE). Same rules as
 * nfs4_xdr.h: bounds-checked, pointers into the message, false = BADXDR.
 */
#ifndef RNFSD_NFS4_XDR_SESSION_H
#define RNFSD_NFS4_XDR_SESSION_H

#include "nfs/v4/cb/nfs4_cb_xdr.h"
#include "nfs/v4/state/nfs4_clients.h"
#include "nfs/v4/xdr/nfs4_xdr.h"

/* RFC 8881 §18.36.1 csa_flags / csr_flags. */
#define CREATE_SESSION4_FLAG_CONN_BACK_CHAN 0x2u
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
	struct nfs4_cb_sec sec; /* csa_sec_parms: the first AUTH_NONE/AUTH_SYS one */
};
/* RFC 8881 §18.33.1. */
struct nfs4_backchannel_ctl_args {
	uint32_t cb_program;
	struct nfs4_cb_sec sec;
};
/* RFC 8881 §18.34.1; channel_dir_from_client4 and _from_server4. */
enum { CDFC4_FORE = 0x1, CDFC4_BACK = 0x2, CDFC4_FORE_OR_BOTH = 0x3, CDFC4_BACK_OR_BOTH = 0x7 };
enum { CDFS4_FORE = 0x1, CDFS4_BACK = 0x2, CDFS4_BOTH = 0x3 };
struct nfs4_bind_conn_args {
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t dir;
	bool rdma_mode;
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
bool nfs4_dec_backchannel_ctl(struct xdr_dec *d, struct nfs4_backchannel_ctl_args *a);
bool nfs4_dec_bind_conn(struct xdr_dec *d, struct nfs4_bind_conn_args *a);
/* BIND_CONN_TO_SESSION4resok (never RDMA mode). */
void nfs4_enc_bind_conn(struct xdr_enc *e, const uint8_t sid[NFS4_SESSIONID_SIZE], uint32_t dir);
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
