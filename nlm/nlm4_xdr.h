/*
 * nlm4_xdr.h - the XDR of NLM version 4 (program 100021; X/Open CAE
 * Specification C702 "XNFS", chapters 10-14; RFC 1813 appendix II's
 * nlm4 types: 64-bit offsets and lengths, nlm4_stats) and of the NSM status
 * notification statd sends to the my_id procedure (XNFS chapter 11, SM
 * "struct status"). Pure: decoders read a struct xdr_dec, encoders write a
 * struct xdr_enc, so the unit tests and the libFuzzer target need no socket.
 *
 * Every decoder is bounds-checked (xdr.h) and refuses strings and netobjs
 * over their XDR limits (LM_MAXSTRLEN, MAXNETOBJ_SZ); netobj/string values
 * point into the message (valid as long as the call is).
 */
#ifndef RNFSD_NLM4_XDR_H
#define RNFSD_NLM4_XDR_H

#include <stdbool.h>
#include <stdint.h>

#include "rpc/xdr.h"

#define NLM_PROGRAM 100021u
#define NLM4_VERSION 4u

/* Procedure numbers of NLM v4 (XNFS §14.2; Linux include/linux/lockd/nlm.h). */
enum nlm4_proc {
	NLM4_NULL = 0,
	NLM4_TEST = 1,
	NLM4_LOCK = 2,
	NLM4_CANCEL = 3,
	NLM4_UNLOCK = 4,
	NLM4_GRANTED = 5,
	NLM4_TEST_MSG = 6,
	NLM4_LOCK_MSG = 7,
	NLM4_CANCEL_MSG = 8,
	NLM4_UNLOCK_MSG = 9,
	NLM4_GRANTED_MSG = 10,
	NLM4_TEST_RES = 11,
	NLM4_LOCK_RES = 12,
	NLM4_CANCEL_RES = 13,
	NLM4_UNLOCK_RES = 14,
	NLM4_GRANTED_RES = 15,
	NLM4_NSM_NOTIFY = 16, /* private: statd's reboot notification (knfsd's NLMPROC_NSM_NOTIFY) */
	NLM4_SHARE = 20,
	NLM4_UNSHARE = 21,
	NLM4_NM_LOCK = 22,
	NLM4_FREE_ALL = 23,
	NLM4_PROC_COUNT = 24,
};

/* RFC 1813 appendix II nlm4_stats */
enum nlm4_stats {
	NLM4_GRANTED_ST = 0,
	NLM4_DENIED = 1,
	NLM4_DENIED_NOLOCKS = 2,
	NLM4_BLOCKED = 3,
	NLM4_DENIED_GRACE_PERIOD = 4,
	NLM4_DEADLCK = 5,
	NLM4_ROFS = 6,
	NLM4_STALE_FH = 7,
	NLM4_FBIG = 8,
	NLM4_FAILED = 9,
};

#define NLM4_MAXSTRLEN 1024u  /* XNFS LM_MAXSTRLEN: caller_name */
#define NLM4_MAXNETOBJ 1024u  /* XNFS MAXNETOBJ_SZ: cookie, fh, oh */
#define NSM_MAXSTRLEN 1024u   /* XNFS SM_MAXSTRLEN: mon_name */
#define NSM_PRIV_SIZE 16u     /* XNFS SM: opaque priv[16] */

/* fsh4_mode / fsh4_access (XNFS §10.3 SHARE): bit encoded */
enum { NLM4_FSA_NONE = 0, NLM4_FSA_R = 1, NLM4_FSA_W = 2, NLM4_FSA_RW = 3 };

struct nlm4_netobj {
	const uint8_t *p;
	uint32_t len;
};

/* RFC 1813 appendix II struct nlm4_lock */
struct nlm4_lock {
	struct nlm4_netobj caller_name; /* string<LM_MAXSTRLEN> */
	struct nlm4_netobj fh;
	struct nlm4_netobj oh;
	int32_t svid;
	uint64_t l_offset;
	uint64_t l_len; /* 0: to the end of the file */
};

/* nlm4_testargs, nlm4_lockargs, nlm4_cancargs and nlm4_unlockargs in one
 * struct: the fields a form lacks stay zero. */
struct nlm4_args {
	struct nlm4_netobj cookie;
	bool block, exclusive, reclaim;
	int32_t state;
	struct nlm4_lock alock;
};

/* nlm4_shareargs (struct nlm4_share inlined) */
struct nlm4_share_args {
	struct nlm4_netobj cookie;
	struct nlm4_netobj caller_name, fh, oh;
	uint32_t mode, access;
	bool reclaim;
};

/* nlm4_notify (FREE_ALL) */
struct nlm4_notify_args {
	struct nlm4_netobj name;
	int32_t state;
};

/* XNFS SM struct status: what statd sends to the my_id procedure */
struct nsm_status_args {
	struct nlm4_netobj mon_name;
	int32_t state;
	uint8_t priv[NSM_PRIV_SIZE];
};

/* nlm4_holder */
struct nlm4_holder {
	bool exclusive;
	int32_t svid;
	struct nlm4_netobj oh;
	uint64_t l_offset, l_len;
};

/* nlm4_res, nlm4_testres and nlm4_shareres in one struct. */
struct nlm4_res {
	struct nlm4_netobj cookie;
	uint32_t stat;
	struct nlm4_holder holder; /* testres with NLM4_DENIED */
	int32_t sequence;          /* shareres */
};

/* NSM (XNFS chapter 11, program 100024 version 1): what rnfsd asks of the local statd. */
#define NSM_PROGRAM 100024u
#define NSM_VERSION 1u
enum { NSM_SM_STAT = 1, NSM_SM_MON = 2, NSM_SM_UNMON = 3, NSM_SM_UNMON_ALL = 4, NSM_SM_SIMU_CRASH = 5 };
enum { NSM_STAT_SUCC = 0, NSM_STAT_FAIL = 1 };

/* XNFS §11 struct mon: mon_id {mon_name, my_id {my_name, my_prog, my_vers, my_proc}}, priv[16] */
struct nsm_mon_args {
	struct nlm4_netobj mon_name, my_name;
	uint32_t my_prog, my_vers, my_proc;
	uint8_t priv[NSM_PRIV_SIZE];
};

/* XNFS §11 sm_stat_res (SM_MON's reply); SM_UNMON answers sm_stat, the state alone. */
struct nsm_stat_res {
	uint32_t res_stat;
	int32_t state;
};

bool nlm4_dec_testargs(struct xdr_dec *d, struct nlm4_args *a);
bool nlm4_dec_lockargs(struct xdr_dec *d, struct nlm4_args *a);
bool nlm4_dec_cancargs(struct xdr_dec *d, struct nlm4_args *a);
bool nlm4_dec_unlockargs(struct xdr_dec *d, struct nlm4_args *a);
bool nlm4_dec_shareargs(struct xdr_dec *d, struct nlm4_share_args *a);
bool nlm4_dec_notify(struct xdr_dec *d, struct nlm4_notify_args *a);
bool nsm_dec_status(struct xdr_dec *d, struct nsm_status_args *a);
/* nlm4_res (the reply to GRANTED, and the _RES messages but TEST_RES) */
bool nlm4_dec_res(struct xdr_dec *d, struct nlm4_res *r);
/* nlm4_testres (TEST_RES) */
bool nlm4_dec_testres(struct xdr_dec *d, struct nlm4_res *r);

void nlm4_enc_res(struct xdr_enc *e, const struct nlm4_res *r);
void nlm4_enc_testres(struct xdr_enc *e, const struct nlm4_res *r);
void nlm4_enc_shareres(struct xdr_enc *e, const struct nlm4_res *r);
/* nlm4_testargs: the arguments of GRANTED / GRANTED_MSG (and of TEST). */
void nlm4_enc_testargs(struct xdr_enc *e, const struct nlm4_args *a);

/* SM_MON's argument (struct mon), SM_UNMON's (struct mon_id: no priv). */
void nsm_enc_mon(struct xdr_enc *e, const struct nsm_mon_args *a);
void nsm_enc_mon_id(struct xdr_enc *e, const struct nsm_mon_args *a);
bool nsm_dec_stat_res(struct xdr_dec *d, struct nsm_stat_res *r);
bool nsm_dec_mon(struct xdr_dec *d, struct nsm_mon_args *a); /* tests, fuzzing */

/* RFC 1833 §2.2.1: rpcbind v4 GETADDR's arguments (struct rpcb) for prog and
 * vers on netid, r_addr and r_owner empty; and its result, a universal
 * address (RFC 5665 §5.2.3.4: "host.p1.p2"): the port, 0 when the program is
 * not registered (an empty string). False if the reply does not decode. */
#define RPCB_PROG 100000u
#define RPCB_VERS4 4u
#define RPCBPROC_GETADDR 3u
void rpcb_enc_getaddr(struct xdr_enc *e, uint32_t prog, uint32_t vers, const char *netid);
bool rpcb_dec_uaddr_port(struct xdr_dec *d, uint16_t *port);

#endif
