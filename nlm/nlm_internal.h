/*
 * nlm_internal.h - between nlm_procs.c (the operation table, decode and
 * encode steps) and nlm_svc.c (the execute steps over the lock table and
 * the backend, the retry thread, the GRANTED callbacks).
 */
#ifndef RNFSD_NLM_INTERNAL_H
#define RNFSD_NLM_INTERNAL_H

#include "nlm/nlm.h"
#include "nlm/nlm4_xdr.h"
#include "rpc/rpc.h"

enum rpc_proc_status nlm_null_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status nlm_test_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status nlm_lock_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status nlm_nm_lock_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status nlm_cancel_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status nlm_unlock_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status nlm_granted_exec(struct rpc_call *c, void *args, void *res);
/* _MSG: the operation, its result sent back as the matching _RES call; the reply is void. */
enum rpc_proc_status nlm_msg_exec(struct rpc_call *c, void *args, void *res);
/* _RES and GRANTED_RES arriving: nothing to do (rnfsd sends no _MSG). */
enum rpc_proc_status nlm_void_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status nlm_share_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status nlm_unshare_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status nlm_free_all_exec(struct rpc_call *c, void *args, void *res);
enum rpc_proc_status nlm_nsm_notify_exec(struct rpc_call *c, void *args, void *res);

/* Pure: errno (and BE_E*) of a lock call -> nlm4_stats. */
uint32_t nlm_errno_to_stat(int err);

#endif
