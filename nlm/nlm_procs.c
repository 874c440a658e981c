/*
 * nlm_procs.c - the operation table of NLM version 4 (program 100021,
 * procedure numbers of XNFS §14.2 and RFC 1813 appendix II; 16 is the
 * private procedure statd's reboot notifications reach, as knfsd's
 * NLMPROC_NSM_NOTIFY) and its registration.
 *
 * Cache policy: LOCK, UNLOCK, CANCEL, SHARE and UNSHARE change state and are
 * kept in the duplicate request cache (a retransmitted UNLOCK after a
 * GRANTED to another owner must not unlock again), as knfsd's lockd does
 * not need to (it dedups by cookie) but our DRC does at no cost. TEST is
 * idempotent. No procedure moves data by DDP (RFC 8267 has no NLM binding).
 */
#include "nlm/nlm_internal.h"

/* XDR sizes of results: cookie netobj (4 + 1024) + stat; holder adds bool, svid, oh (4 + 1024), 2 hypers. */
#define NLM4_RES_MAX (4u + NLM4_MAXNETOBJ + 4u)
#define NLM4_TESTRES_MAX (NLM4_RES_MAX + 4u + 4u + 4u + NLM4_MAXNETOBJ + 16u)
#define NLM4_SHARERES_MAX (NLM4_RES_MAX + 4u)

struct nlm_none {
	char unused;
};

static bool dec_test(struct rpc_call *c, void *a)
{
	return nlm4_dec_testargs(&c->args, a);
}

static bool dec_lock(struct rpc_call *c, void *a)
{
	return nlm4_dec_lockargs(&c->args, a);
}

static bool dec_canc(struct rpc_call *c, void *a)
{
	return nlm4_dec_cancargs(&c->args, a);
}

static bool dec_unlock(struct rpc_call *c, void *a)
{
	return nlm4_dec_unlockargs(&c->args, a);
}

static bool dec_share(struct rpc_call *c, void *a)
{
	return nlm4_dec_shareargs(&c->args, a);
}

static bool dec_notify(struct rpc_call *c, void *a)
{
	return nlm4_dec_notify(&c->args, a);
}

static bool dec_sm_status(struct rpc_call *c, void *a)
{
	return nsm_dec_status(&c->args, a);
}

static bool dec_res(struct rpc_call *c, void *a)
{
	return nlm4_dec_res(&c->args, a);
}

static bool dec_testres(struct rpc_call *c, void *a)
{
	return nlm4_dec_testres(&c->args, a);
}

static void enc_res(struct rpc_call *c, const void *r)
{
	nlm4_enc_res(&c->res, r);
}

static void enc_testres(struct rpc_call *c, const void *r)
{
	nlm4_enc_testres(&c->res, r);
}

static void enc_shareres(struct rpc_call *c, const void *r)
{
	nlm4_enc_shareres(&c->res, r);
}

#define NLM_ENTRY(num, nm, dec, exe, enc, args_t, res_t, results, cache_)                                 \
	[num] = { .name = nm, .decode = dec, .execute = exe, .encode = enc,                             \
		  .args_size = RPC_SCRATCH_SIZE(args_t), .res_size = RPC_SCRATCH_SIZE(res_t),            \
		  .max_reply = RPC_REPLY_MAX(results), .cache = cache_, .ddp = ULB_RULE_NONE }
#define NLM_MSG(num, nm, dec, args_t)                                                                   \
	NLM_ENTRY(num, nm, dec, nlm_msg_exec, NULL, args_t, struct nlm4_res, 0, RPC_CACHE_DRC)
#define NLM_RES(num, nm, dec)                                                                           \
	NLM_ENTRY(num, nm, dec, nlm_void_exec, NULL, struct nlm4_res, struct nlm_none, 0, RPC_CACHE_NONE)

/* Procedures 17-19 do not exist (XNFS §14.2): execute NULL, PROC_UNAVAIL. */
static const struct rpc_proc nlm4_procs[NLM4_PROC_COUNT] = {
	NLM_ENTRY(NLM4_NULL, "NULL", NULL, nlm_null_exec, NULL, struct nlm_none, struct nlm_none, 0, RPC_CACHE_NONE),
	NLM_ENTRY(NLM4_TEST, "TEST", dec_test, nlm_test_exec, enc_testres, struct nlm4_args, struct nlm4_res,
		  NLM4_TESTRES_MAX, RPC_CACHE_NONE),
	NLM_ENTRY(NLM4_LOCK, "LOCK", dec_lock, nlm_lock_exec, enc_res, struct nlm4_args, struct nlm4_res,
		  NLM4_RES_MAX, RPC_CACHE_DRC),
	NLM_ENTRY(NLM4_CANCEL, "CANCEL", dec_canc, nlm_cancel_exec, enc_res, struct nlm4_args, struct nlm4_res,
		  NLM4_RES_MAX, RPC_CACHE_DRC),
	NLM_ENTRY(NLM4_UNLOCK, "UNLOCK", dec_unlock, nlm_unlock_exec, enc_res, struct nlm4_args, struct nlm4_res,
		  NLM4_RES_MAX, RPC_CACHE_DRC),
	NLM_ENTRY(NLM4_GRANTED, "GRANTED", dec_test, nlm_granted_exec, enc_res, struct nlm4_args, struct nlm4_res,
		  NLM4_RES_MAX, RPC_CACHE_NONE),
	NLM_MSG(NLM4_TEST_MSG, "TEST_MSG", dec_test, struct nlm4_args),
	NLM_MSG(NLM4_LOCK_MSG, "LOCK_MSG", dec_lock, struct nlm4_args),
	NLM_MSG(NLM4_CANCEL_MSG, "CANCEL_MSG", dec_canc, struct nlm4_args),
	NLM_MSG(NLM4_UNLOCK_MSG, "UNLOCK_MSG", dec_unlock, struct nlm4_args),
	NLM_MSG(NLM4_GRANTED_MSG, "GRANTED_MSG", dec_test, struct nlm4_args),
	NLM_RES(NLM4_TEST_RES, "TEST_RES", dec_testres),
	NLM_RES(NLM4_LOCK_RES, "LOCK_RES", dec_res),
	NLM_RES(NLM4_CANCEL_RES, "CANCEL_RES", dec_res),
	NLM_RES(NLM4_UNLOCK_RES, "UNLOCK_RES", dec_res),
	NLM_RES(NLM4_GRANTED_RES, "GRANTED_RES", dec_res),
	NLM_ENTRY(NLM4_NSM_NOTIFY, "NSM_NOTIFY", dec_sm_status, nlm_nsm_notify_exec, NULL, struct nsm_status_args,
		  struct nlm_none, 0, RPC_CACHE_NONE),
	NLM_ENTRY(NLM4_SHARE, "SHARE", dec_share, nlm_share_exec, enc_shareres, struct nlm4_share_args,
		  struct nlm4_res, NLM4_SHARERES_MAX, RPC_CACHE_DRC),
	NLM_ENTRY(NLM4_UNSHARE, "UNSHARE", dec_share, nlm_unshare_exec, enc_shareres, struct nlm4_share_args,
		  struct nlm4_res, NLM4_SHARERES_MAX, RPC_CACHE_DRC),
	NLM_ENTRY(NLM4_NM_LOCK, "NM_LOCK", dec_lock, nlm_nm_lock_exec, enc_res, struct nlm4_args, struct nlm4_res,
		  NLM4_RES_MAX, RPC_CACHE_DRC),
	NLM_ENTRY(NLM4_FREE_ALL, "FREE_ALL", dec_notify, nlm_free_all_exec, NULL, struct nlm4_notify_args,
		  struct nlm_none, 0, RPC_CACHE_NONE),
};

static const struct rpc_version nlm_versions[] = {
	{ NLM4_VERSION, NLM4_PROC_COUNT, nlm4_procs },
};
static const struct rpc_program nlm_program = { NLM_PROGRAM, "nlockmgr", 1, nlm_versions };

int nlm_register(void)
{
	return rpc_register_program(&nlm_program);
}
