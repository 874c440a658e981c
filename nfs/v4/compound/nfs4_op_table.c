/*
 * nfs4_op_table.c - the NFSv4 operation table (indexed by nfs_opnum4) and the
 * RPC program version 4 that carries it: NULL and COMPOUND (RFC 7530 §16.1,
 * §16.2; RFC 8881 §16.1, §16.2).
 *
 * An operation without an entry answers NFS4ERR_NOTSUPP (the engine stops
 * there, so its arguments need no decoder yet).
 *
 * COMPOUND: NFSv4.1+ replays are resolved by the session's slots (RFC 8881
 * §2.10.6), never by the DRC; NFSv4.0 COMPOUNDs go through the DRC
 * (nfs4_compound_drc), which keeps the reply only when a non-idempotent
 * operation without a seqid ran (RFC 7530 §9.1.7 resolves OPEN, CLOSE, LOCK
 * ... replays by seqids; CREATE, REMOVE, RENAME, LINK, SETATTR, WRITE have
 * none: a retransmission must not run them twice, RFC 7530 §3.1.1; as
 * knfsd's OP_CACHEME; pynfs RPLY14);
 * DDP rule ULB_RULE_COMPOUND (RFC 8267 §4.3: items per operation);
 * max_reply 0 (grows with the operations). Its working memory is the worker
 * thread's arena (nfs4_compound.h explains why), so its RPC scratch is empty.
 * Every COMPOUND acts on the server bound by nfs4_program_serve() (the NFS
 * service's, nfs4_server.h) and is counted per operation (nfs4_stats.c).
 */
#include <threads.h>

#include "core/log.h"
#include "core/loop.h"
#include "rpc/rpc_inline.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/compound/nfs4_stats.h"
#include "nfs/v4/xdr/nfs4_mod.h"
#include "nfs/v4/xdr/nfs4_v42.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/xdr/nfs4_layout_xdr.h"

static struct log_limit nfs4_bad_limit;

/* Decoders take the context (WRITE will need the call for rpc_dec_ddp()). */
#define NFS4_DEC(fn, type) \
	static bool fn##_op(struct nfs4_ctx *x, struct xdr_dec *d, void *args) \
	{ \
		(void)x; \
		return fn(d, (type *)args); \
	}
NFS4_DEC(nfs4_dec_putfh, struct nfs4_putfh_args)
NFS4_DEC(nfs4_dec_name_args, struct nfs4_name_args)
NFS4_DEC(nfs4_dec_getattr, struct nfs4_getattr_args)
NFS4_DEC(nfs4_dec_access, struct nfs4_access_args)
NFS4_DEC(nfs4_dec_readdir, struct nfs4_readdir_args)
NFS4_DEC(nfs4_dec_secinfo_nn, struct nfs4_secinfo_nn_args)
NFS4_DEC(nfs4_dec_exchange_id, struct nfs4_exid_args)
NFS4_DEC(nfs4_dec_create_session, struct nfs4_create_session_args)
NFS4_DEC(nfs4_dec_sequence, struct nfs4_sequence_args)
NFS4_DEC(nfs4_dec_sessionid, struct nfs4_sessionid_args)
NFS4_DEC(nfs4_dec_clientid, struct nfs4_clientid_args)
NFS4_DEC(nfs4_dec_reclaim_complete, struct nfs4_reclaim_complete_args)
NFS4_DEC(nfs4_dec_bind_conn, struct nfs4_bind_conn_args)
NFS4_DEC(nfs4_dec_backchannel_ctl, struct nfs4_backchannel_ctl_args)
/* State and I/O (nfs4_xdr_state.c). */
NFS4_DEC(nfs4_dec_setclientid, struct nfs4_setclientid_args)
NFS4_DEC(nfs4_dec_setclientid_confirm, struct nfs4_setclientid_confirm_args)
NFS4_DEC(nfs4_dec_open_confirm, struct nfs4_sid_seqid_args)
NFS4_DEC(nfs4_dec_open_downgrade, struct nfs4_sid_seqid_args)
NFS4_DEC(nfs4_dec_close, struct nfs4_sid_seqid_args)
NFS4_DEC(nfs4_dec_read, struct nfs4_read_args)
NFS4_DEC(nfs4_dec_commit, struct nfs4_commit_args)
NFS4_DEC(nfs4_dec_test_stateid, struct nfs4_test_stateid_args)
NFS4_DEC(nfs4_dec_free_stateid, struct nfs4_stateid_args)
NFS4_DEC(nfs4_dec_lock, struct nfs4_lock_args)
NFS4_DEC(nfs4_dec_lockt, struct nfs4_lockt_args)
NFS4_DEC(nfs4_dec_locku, struct nfs4_locku_args)
NFS4_DEC(nfs4_dec_lock_owner, struct nfs4_lock_owner_args)
NFS4_DEC(nfs4_dec_get_dir_delegation, struct nfs4_gdd_args)

/* RFC 7530 §16.16.1: NFSv4.0 has only claims 0-3 (the others do not decode). */
static bool nfs4_dec_open_op(struct nfs4_ctx *x, struct xdr_dec *d, void *args)
{
	struct nfs4_open_args *a = args;

	return nfs4_dec_open(d, a) && (x->minorversion >= 1 || a->claim <= CLAIM_DELEGATE_PREV);
}

/* RFC 8267 §4.1: WRITE's data may come in a Read chunk. */
static bool nfs4_dec_write_op(struct nfs4_ctx *x, struct xdr_dec *d, void *args)
{
	return nfs4_dec_write(d, x->call, (struct nfs4_write_args *)args);
}

NFS4_DEC(nfs4_dec_create, struct nfs4_create_args)
/* NFSv4.2 (nfs4_xdr_v42.c). */
NFS4_DEC(nfs4_dec_alloc, struct nfs4_range_args)
NFS4_DEC(nfs4_dec_seek, struct nfs4_range_args)
NFS4_DEC(nfs4_dec_copy, struct nfs4_copy_args)
NFS4_DEC(nfs4_dec_clone, struct nfs4_copy_args)
NFS4_DEC(nfs4_dec_offload, struct nfs4_stateid)
NFS4_DEC(nfs4_dec_getxattr, struct nfs4_xattr_args)
NFS4_DEC(nfs4_dec_setxattr, struct nfs4_xattr_args)
NFS4_DEC(nfs4_dec_listxattrs, struct nfs4_listxattrs_args)
NFS4_DEC(nfs4_dec_rename, struct nfs4_rename_args)
NFS4_DEC(nfs4_dec_setattr, struct nfs4_setattr_args)
NFS4_DEC(nfs4_dec_verify, struct nfs4_verify_args)
/* pNFS (nfs4_layout_xdr.c). */
NFS4_DEC(nfs4_dec_getdeviceinfo, struct nfs4_getdeviceinfo_args)
NFS4_DEC(nfs4_dec_getdevicelist, struct nfs4_getdevicelist_args)
NFS4_DEC(nfs4_dec_layoutget, struct nfs4_layoutget_args)
NFS4_DEC(nfs4_dec_layoutreturn, struct nfs4_layoutreturn_args)
NFS4_DEC(nfs4_dec_layoutcommit, struct nfs4_layoutcommit_args)
NFS4_DEC(nfs4_dec_layouterror, struct nfs4_layouterror_args)
NFS4_DEC(nfs4_dec_layoutstats, struct nfs4_layoutstats_args)

/* REMOVE4args and LINK4args: one component4 (RENAME's oldname). */
static bool nfs4_dec_name1_op(struct nfs4_ctx *x, struct xdr_dec *d, void *args)
{
	(void)x;
	return nfs4_dec_name(d, &((struct nfs4_rename_args *)args)->oldname);
}

struct nfs4_none {
	char unused;
};

#define NFS4_OP(num, nm, dec, exe, enc, args_t, res_t, fl) \
	[num] = { .name = nm, .decode = dec, .execute = exe, .encode = enc, \
		  .args_size = NFS4_OP_SCRATCH_SIZE(args_t), .res_size = NFS4_OP_SCRATCH_SIZE(res_t), \
		  .flags = (fl) }

/*
 * The table's flags say what each operation is, for the engine (nfs4_compound.h):
 *   NFS4_OPF_NO_SEQ  may open a 4.1+ COMPOUND without SEQUENCE (RFC 8881 §18.46.3,
 *                    §2.6.3.1.1): EXCHANGE_ID, CREATE_SESSION, DESTROY_SESSION,
 *                    BIND_CONN_TO_SESSION, DESTROY_CLIENTID;
 *   NFS4_OPF_V40     NFSv4.0 only, NOTSUPP from 4.1 on (RFC 8881 §17, "MNI"): SETCLIENTID(_CONFIRM),
 *                    RENEW, OPEN_CONFIRM, RELEASE_LOCKOWNER;
 *   NFS4_OPF_DRC     a 4.0 COMPOUND running it keeps its reply in the DRC (RFC 7530 §3.1.1,
 *                    §9.1.7: not idempotent, no seqid): CREATE, LINK, REMOVE, RENAME, SETATTR, WRITE;
 *   NFS4_OPF_PUTFH   a put filehandle operation (RFC 8881 §2.6.3.1.1): PUTFH, PUTPUBFH, PUTROOTFH,
 *                    RESTOREFH; the engine checks its flavor (nfs4_cur_sec_check) when what follows
 *                    needs it;
 *   NFS4_OPF_INLINE  may run on the receiving thread (nfs4_compound_inline_ok: a COMPOUND of only
 *                    these does, when rpc_inline.h allows metadata calls there): SEQUENCE, the put
 *                    and get filehandle operations, SAVEFH, GETATTR (while no delegation is out:
 *                    else it may have to ask a write delegation's holder, CB_GETATTR, RFC 8881
 *                    §10.4.3, on a worker; one granted meanwhile is recalled, DELAY) and LOOKUP
 *                    (searched as the server where root or the mode bits grant it, as NFSv3's;
 *                    else DELAY, and nfs4_compound_with() sends inline calls to the workers for a
 *                    while, so the retry runs as the caller there). Not ACCESS (faccessat as the
 *                    caller), READ (a page not in memory would have to decline after SEQUENCE)
 *                    or anything that changes a file or state.
 */
const struct nfs4_op nfs4_ops[NFS4_OP_COUNT] = {
	/* RFC 8881 §18.19, §18.8, §18.28, §18.27 */
	NFS4_OP(OP_PUTFH, "PUTFH", nfs4_dec_putfh_op, nfs4_putfh_exec, NULL, struct nfs4_putfh_args,
		struct nfs4_none, NFS4_OPF_PUTFH | NFS4_OPF_INLINE),
	NFS4_OP(OP_GETFH, "GETFH", NULL, nfs4_getfh_exec, nfs4_getfh_enc, struct nfs4_none, struct nfs4_getfh_res,
		NFS4_OPF_CURFH | NFS4_OPF_INLINE),
	NFS4_OP(OP_SAVEFH, "SAVEFH", NULL, nfs4_savefh_exec, NULL, struct nfs4_none, struct nfs4_none,
		NFS4_OPF_CURFH | NFS4_OPF_INLINE),
	NFS4_OP(OP_RESTOREFH, "RESTOREFH", NULL, nfs4_restorefh_exec, NULL, struct nfs4_none, struct nfs4_none,
		NFS4_OPF_PUTFH | NFS4_OPF_INLINE),
	/* RFC 8881 §18.21, §18.13, §18.14, §18.29, §18.45: the namespace (nfs4_proc_ns.c). */
	NFS4_OP(OP_PUTROOTFH, "PUTROOTFH", NULL, nfs4_putrootfh_exec, NULL, struct nfs4_none, struct nfs4_none,
		NFS4_OPF_PUTFH | NFS4_OPF_INLINE),
	NFS4_OP(OP_LOOKUP, "LOOKUP", nfs4_dec_name_args_op, nfs4_lookup_exec, NULL, struct nfs4_name_args,
		struct nfs4_none, NFS4_OPF_CURFH | NFS4_OPF_INLINE),
	NFS4_OP(OP_LOOKUPP, "LOOKUPP", NULL, nfs4_lookupp_exec, NULL, struct nfs4_none, struct nfs4_none,
		NFS4_OPF_CURFH),
	NFS4_OP(OP_SECINFO, "SECINFO", nfs4_dec_name_args_op, nfs4_secinfo_exec, nfs4_secinfo_enc,
		struct nfs4_name_args, struct nfs4_secinfo_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_SECINFO_NO_NAME, "SECINFO_NO_NAME", nfs4_dec_secinfo_nn_op, nfs4_secinfo_nn_exec,
		nfs4_secinfo_enc, struct nfs4_secinfo_nn_args, struct nfs4_secinfo_res, NFS4_OPF_CURFH),
	/* RFC 8881 §18.7, §18.1, §18.24 (nfs4_proc_attr.c); RFC 8267 §4.1: READLINK's path may
	 * leave in a Write chunk. */
	NFS4_OP(OP_GETATTR, "GETATTR", nfs4_dec_getattr_op, nfs4_getattr_exec, nfs4_getattr_enc,
		struct nfs4_getattr_args, struct nfs4_getattr_res, NFS4_OPF_CURFH | NFS4_OPF_INLINE),
	NFS4_OP(OP_ACCESS, "ACCESS", nfs4_dec_access_op, nfs4_access_exec, nfs4_access_enc,
		struct nfs4_access_args, struct nfs4_access_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_READLINK, "READLINK", NULL, nfs4_readlink_exec, nfs4_readlink_enc, struct nfs4_none,
		struct nfs4_readlink_res, NFS4_OPF_CURFH),
	/* RFC 8881 §18.23 (nfs4_proc_dir.c): entries stream into the reply. */
	NFS4_OP(OP_READDIR, "READDIR", nfs4_dec_readdir_op, nfs4_readdir_exec, NULL, struct nfs4_readdir_args,
		struct nfs4_none, NFS4_OPF_CURFH | NFS4_OPF_STREAM),
	/* RFC 8881 §18.20: no public filehandle of its own: the root's. */
	NFS4_OP(OP_PUTPUBFH, "PUTPUBFH", NULL, nfs4_putrootfh_exec, NULL, struct nfs4_none, struct nfs4_none,
		NFS4_OPF_PUTFH | NFS4_OPF_INLINE),
	/* RFC 8881 §18.4, §18.9, §18.25, §18.26, §18.30, §18.31, §18.15 (nfs4_proc_mod.c).
	 * OPENATTR (§18.17) has no entry: NOTSUPP (named_attr is false), its argument unread. */
	NFS4_OP(OP_CREATE, "CREATE", nfs4_dec_create_op, nfs4_create_exec, nfs4_create_enc, struct nfs4_create_args,
		struct nfs4_create_res, NFS4_OPF_CURFH | NFS4_OPF_DRC),
	NFS4_OP(OP_LINK, "LINK", nfs4_dec_name1_op, nfs4_link_exec, nfs4_cinfo_enc, struct nfs4_rename_args,
		struct nfs4_cinfo_res, NFS4_OPF_CURFH | NFS4_OPF_DRC),
	NFS4_OP(OP_REMOVE, "REMOVE", nfs4_dec_name1_op, nfs4_remove_exec, nfs4_cinfo_enc, struct nfs4_rename_args,
		struct nfs4_cinfo_res, NFS4_OPF_CURFH | NFS4_OPF_DRC),
	NFS4_OP(OP_RENAME, "RENAME", nfs4_dec_rename_op, nfs4_rename_exec, nfs4_rename_enc, struct nfs4_rename_args,
		struct nfs4_rename_res, NFS4_OPF_CURFH | NFS4_OPF_DRC),
	NFS4_OP(OP_SETATTR, "SETATTR", nfs4_dec_setattr_op, nfs4_setattr_exec, nfs4_setattr_enc,
		struct nfs4_setattr_args, struct nfs4_setattr_res, NFS4_OPF_CURFH | NFS4_OPF_ENC_ERR | NFS4_OPF_DRC),
	NFS4_OP(OP_VERIFY, "VERIFY", nfs4_dec_verify_op, nfs4_verify_exec, NULL, struct nfs4_verify_args,
		struct nfs4_none, NFS4_OPF_CURFH),
	NFS4_OP(OP_NVERIFY, "NVERIFY", nfs4_dec_verify_op, nfs4_nverify_exec, NULL, struct nfs4_verify_args,
		struct nfs4_none, NFS4_OPF_CURFH),
	/* RFC 8881 §18.35-37, §18.46, §18.50, §18.51: sessions (nfs4_proc_session.c). */
	NFS4_OP(OP_EXCHANGE_ID, "EXCHANGE_ID", nfs4_dec_exchange_id_op, nfs4_exchange_id_exec, nfs4_exchange_id_enc,
		struct nfs4_exid_args, struct nfs4_exid_res, NFS4_OPF_NO_SEQ),
	NFS4_OP(OP_CREATE_SESSION, "CREATE_SESSION", nfs4_dec_create_session_op, nfs4_create_session_exec,
		nfs4_create_session_enc, struct nfs4_create_session_args, struct nfs4_create_session_res, NFS4_OPF_NO_SEQ),
	NFS4_OP(OP_SEQUENCE, "SEQUENCE", nfs4_dec_sequence_op, nfs4_sequence_exec, nfs4_sequence_enc,
		struct nfs4_sequence_args, struct nfs4_sequence_res, NFS4_OPF_INLINE),
	NFS4_OP(OP_DESTROY_SESSION, "DESTROY_SESSION", nfs4_dec_sessionid_op, nfs4_destroy_session_exec, NULL,
		struct nfs4_sessionid_args, struct nfs4_none, NFS4_OPF_NO_SEQ),
	NFS4_OP(OP_DESTROY_CLIENTID, "DESTROY_CLIENTID", nfs4_dec_clientid_op, nfs4_destroy_clientid_exec, NULL,
		struct nfs4_clientid_args, struct nfs4_none, NFS4_OPF_NO_SEQ),
	NFS4_OP(OP_RECLAIM_COMPLETE, "RECLAIM_COMPLETE", nfs4_dec_reclaim_complete_op, nfs4_reclaim_complete_exec,
		NULL, struct nfs4_reclaim_complete_args, struct nfs4_none, 0),
	/* RFC 8881 §18.34, §18.33: the back channel (nfs4_proc_cb.c). */
	NFS4_OP(OP_BIND_CONN_TO_SESSION, "BIND_CONN_TO_SESSION", nfs4_dec_bind_conn_op, nfs4_bind_conn_exec,
		nfs4_bind_conn_enc, struct nfs4_bind_conn_args, struct nfs4_bind_conn_res, NFS4_OPF_NO_SEQ),
	NFS4_OP(OP_BACKCHANNEL_CTL, "BACKCHANNEL_CTL", nfs4_dec_backchannel_ctl_op, nfs4_backchannel_ctl_exec, NULL,
		struct nfs4_backchannel_ctl_args, struct nfs4_none, 0),
	/* RFC 7530 §16.33, §16.34, §16.29: NFSv4.0 client ids (nfs4_proc_state.c). */
	NFS4_OP(OP_SETCLIENTID, "SETCLIENTID", nfs4_dec_setclientid_op, nfs4_setclientid_exec, nfs4_setclientid_enc,
		struct nfs4_setclientid_args, struct nfs4_setclientid_res, NFS4_OPF_ENC_ERR | NFS4_OPF_V40),
	NFS4_OP(OP_SETCLIENTID_CONFIRM, "SETCLIENTID_CONFIRM", nfs4_dec_setclientid_confirm_op,
		nfs4_setclientid_confirm_exec, NULL, struct nfs4_setclientid_confirm_args, struct nfs4_none, NFS4_OPF_V40),
	/* RFC 8881 §18.6, §18.5; RFC 7530 §16.8, §16.7 (nfs4_proc_deleg.c). */
	NFS4_OP(OP_DELEGRETURN, "DELEGRETURN", nfs4_dec_free_stateid_op, nfs4_delegreturn_exec, NULL,
		struct nfs4_stateid_args, struct nfs4_none, NFS4_OPF_CURFH),
	/* RFC 8881 §18.39 (4.1): recall-only directory delegations (nfs4_proc_dirdeleg.c). */
	NFS4_OP(OP_GET_DIR_DELEGATION, "GET_DIR_DELEGATION", nfs4_dec_get_dir_delegation_op,
		nfs4_get_dir_delegation_exec, nfs4_get_dir_delegation_enc, struct nfs4_gdd_args, struct nfs4_gdd_res,
		NFS4_OPF_CURFH),
	NFS4_OP(OP_DELEGPURGE, "DELEGPURGE", nfs4_dec_clientid_op, nfs4_delegpurge_exec, NULL,
		struct nfs4_clientid_args, struct nfs4_none, 0),
	NFS4_OP(OP_RENEW, "RENEW", nfs4_dec_clientid_op, nfs4_renew_exec, NULL, struct nfs4_clientid_args,
		struct nfs4_none, NFS4_OPF_V40),
	/* RFC 8881 §18.16, RFC 7530 §16.20, RFC 8881 §18.18, §18.2: opens (nfs4_proc_open.c,
	 * nfs4_proc_state.c); encode on errors too: 4.0 replies are kept for replays. */
	NFS4_OP(OP_OPEN, "OPEN", nfs4_dec_open_op, nfs4_open_exec, nfs4_open_enc, struct nfs4_open_args,
		struct nfs4_open_op_res, NFS4_OPF_CURFH | NFS4_OPF_ENC_ERR),
	NFS4_OP(OP_OPEN_CONFIRM, "OPEN_CONFIRM", nfs4_dec_open_confirm_op, nfs4_open_confirm_exec, nfs4_sid_op_enc,
		struct nfs4_sid_seqid_args, struct nfs4_sid_op_res, NFS4_OPF_CURFH | NFS4_OPF_ENC_ERR | NFS4_OPF_V40),
	NFS4_OP(OP_OPEN_DOWNGRADE, "OPEN_DOWNGRADE", nfs4_dec_open_downgrade_op, nfs4_open_downgrade_exec,
		nfs4_sid_op_enc, struct nfs4_sid_seqid_args, struct nfs4_sid_op_res, NFS4_OPF_CURFH | NFS4_OPF_ENC_ERR),
	NFS4_OP(OP_CLOSE, "CLOSE", nfs4_dec_close_op, nfs4_close_exec, nfs4_sid_op_enc, struct nfs4_sid_seqid_args,
		struct nfs4_sid_op_res, NFS4_OPF_CURFH | NFS4_OPF_ENC_ERR),
	/* RFC 8881 §18.22, §18.32, §18.3 (nfs4_proc_io.c); RFC 8267 §4.1: READ data in a Write chunk. */
	NFS4_OP(OP_READ, "READ", nfs4_dec_read_op, nfs4_read_exec, nfs4_read_enc, struct nfs4_read_args,
		struct nfs4_read_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_WRITE, "WRITE", nfs4_dec_write_op, nfs4_write_exec, nfs4_write_enc, struct nfs4_write_args,
		struct nfs4_write_res, NFS4_OPF_CURFH | NFS4_OPF_DRC),
	NFS4_OP(OP_COMMIT, "COMMIT", nfs4_dec_commit_op, nfs4_commit_exec, nfs4_commit_enc, struct nfs4_commit_args,
		struct nfs4_none, NFS4_OPF_CURFH),
	/* RFC 8881 §18.48, §18.38 (4.1). */
	NFS4_OP(OP_TEST_STATEID, "TEST_STATEID", nfs4_dec_test_stateid_op, nfs4_test_stateid_exec,
		nfs4_test_stateid_enc, struct nfs4_test_stateid_args, struct nfs4_test_stateid_res, 0),
	NFS4_OP(OP_FREE_STATEID, "FREE_STATEID", nfs4_dec_free_stateid_op, nfs4_free_stateid_exec, NULL,
		struct nfs4_stateid_args, struct nfs4_none, 0),
	/* RFC 8881 §18.10-§18.12, RFC 7530 §16.37: byte-range locks (nfs4_proc_lock.c); DENIED has a body. */
	NFS4_OP(OP_LOCK, "LOCK", nfs4_dec_lock_op, nfs4_lock_exec, nfs4_lock_enc, struct nfs4_lock_args,
		struct nfs4_lock_op_res, NFS4_OPF_CURFH | NFS4_OPF_ENC_ERR),
	NFS4_OP(OP_LOCKT, "LOCKT", nfs4_dec_lockt_op, nfs4_lockt_exec, nfs4_lock_enc, struct nfs4_lockt_args,
		struct nfs4_lock_op_res, NFS4_OPF_CURFH | NFS4_OPF_ENC_ERR),
	NFS4_OP(OP_LOCKU, "LOCKU", nfs4_dec_locku_op, nfs4_locku_exec, nfs4_lock_enc, struct nfs4_locku_args,
		struct nfs4_lock_op_res, NFS4_OPF_CURFH | NFS4_OPF_ENC_ERR),
	NFS4_OP(OP_RELEASE_LOCKOWNER, "RELEASE_LOCKOWNER", nfs4_dec_lock_owner_op, nfs4_release_lockowner_exec, NULL,
		struct nfs4_lock_owner_args, struct nfs4_none, NFS4_OPF_V40),
	/* RFC 8881 §18.40, §18.41, §18.43, §18.44, §18.42; RFC 7862 §15.6, §15.7: pNFS flexible files
	 * (nfs4_proc_layout.c). LAYOUTRETURN checks the current filehandle itself (ALL needs none);
	 * GETDEVICEINFO's TOOSMALL and LAYOUTGET's LAYOUTTRYLATER carry a result. GETDEVICELIST is
	 * served though the Linux client does not send it (knfsd: NOTSUPP). */
	NFS4_OP(OP_GETDEVICEINFO, "GETDEVICEINFO", nfs4_dec_getdeviceinfo_op, nfs4_getdeviceinfo_exec,
		nfs4_getdeviceinfo_enc, struct nfs4_getdeviceinfo_args, struct nfs4_getdeviceinfo_res, NFS4_OPF_ENC_ERR),
	NFS4_OP(OP_GETDEVICELIST, "GETDEVICELIST", nfs4_dec_getdevicelist_op, nfs4_getdevicelist_exec,
		nfs4_getdevicelist_enc, struct nfs4_getdevicelist_args, struct nfs4_getdevicelist_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_LAYOUTGET, "LAYOUTGET", nfs4_dec_layoutget_op, nfs4_layoutget_exec, nfs4_layoutget_enc,
		struct nfs4_layoutget_args, struct nfs4_layoutget_res, NFS4_OPF_CURFH | NFS4_OPF_ENC_ERR),
	NFS4_OP(OP_LAYOUTRETURN, "LAYOUTRETURN", nfs4_dec_layoutreturn_op, nfs4_layoutreturn_exec,
		nfs4_layoutreturn_enc, struct nfs4_layoutreturn_args, struct nfs4_layoutreturn_res, 0),
	NFS4_OP(OP_LAYOUTCOMMIT, "LAYOUTCOMMIT", nfs4_dec_layoutcommit_op, nfs4_layoutcommit_exec,
		nfs4_layoutcommit_enc, struct nfs4_layoutcommit_args, struct nfs4_layoutcommit_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_LAYOUTERROR, "LAYOUTERROR", nfs4_dec_layouterror_op, nfs4_layouterror_exec, NULL,
		struct nfs4_layouterror_args, struct nfs4_none, NFS4_OPF_CURFH),
	NFS4_OP(OP_LAYOUTSTATS, "LAYOUTSTATS", nfs4_dec_layoutstats_op, nfs4_layoutstats_exec, NULL,
		struct nfs4_layoutstats_args, struct nfs4_none, NFS4_OPF_CURFH),
	/* RFC 7862 §15.11, §15.1, §15.4, §15.10 (nfs4_proc_v42.c); RFC 8267 §4.1: READ_PLUS's
	 * NFS4_CONTENT_DATA may leave in a Write chunk. */
	NFS4_OP(OP_SEEK, "SEEK", nfs4_dec_seek_op, nfs4_seek_exec, nfs4_seek_enc, struct nfs4_range_args,
		struct nfs4_seek_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_ALLOCATE, "ALLOCATE", nfs4_dec_alloc_op, nfs4_allocate_exec, NULL, struct nfs4_range_args,
		struct nfs4_none, NFS4_OPF_CURFH),
	NFS4_OP(OP_DEALLOCATE, "DEALLOCATE", nfs4_dec_alloc_op, nfs4_deallocate_exec, NULL, struct nfs4_range_args,
		struct nfs4_none, NFS4_OPF_CURFH),
	NFS4_OP(OP_READ_PLUS, "READ_PLUS", nfs4_dec_read_op, nfs4_read_plus_exec, nfs4_read_plus_enc,
		struct nfs4_read_args, struct nfs4_read_plus_res, NFS4_OPF_CURFH),
	/* RFC 7862 §15.2, §15.13, §15.9, §15.8 (nfs4_proc_copy.c). COPY_NOTIFY (§15.3) has no
	 * entry: NOTSUPP (no inter-server copy). */
	NFS4_OP(OP_COPY, "COPY", nfs4_dec_copy_op, nfs4_copy_exec, nfs4_copy_enc, struct nfs4_copy_args,
		struct nfs4_copy_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_CLONE, "CLONE", nfs4_dec_clone_op, nfs4_clone_exec, NULL, struct nfs4_copy_args,
		struct nfs4_none, NFS4_OPF_CURFH),
	NFS4_OP(OP_OFFLOAD_STATUS, "OFFLOAD_STATUS", nfs4_dec_offload_op, nfs4_offload_status_exec,
		nfs4_offload_status_enc, struct nfs4_stateid, struct nfs4_offload_status_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_OFFLOAD_CANCEL, "OFFLOAD_CANCEL", nfs4_dec_offload_op, nfs4_offload_cancel_exec, NULL,
		struct nfs4_stateid, struct nfs4_none, NFS4_OPF_CURFH),
	/* RFC 8276 §8.4.1-§8.4.4 (nfs4_proc_xattr.c). */
	NFS4_OP(OP_GETXATTR, "GETXATTR", nfs4_dec_getxattr_op, nfs4_getxattr_exec, nfs4_getxattr_enc,
		struct nfs4_xattr_args, struct nfs4_getxattr_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_SETXATTR, "SETXATTR", nfs4_dec_setxattr_op, nfs4_setxattr_exec, nfs4_cinfo_enc,
		struct nfs4_xattr_args, struct nfs4_cinfo_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_LISTXATTRS, "LISTXATTRS", nfs4_dec_listxattrs_op, nfs4_listxattrs_exec, nfs4_listxattrs_enc,
		struct nfs4_listxattrs_args, struct nfs4_listxattrs_res, NFS4_OPF_CURFH),
	NFS4_OP(OP_REMOVEXATTR, "REMOVEXATTR", nfs4_dec_getxattr_op, nfs4_removexattr_exec, nfs4_cinfo_enc,
		struct nfs4_xattr_args, struct nfs4_cinfo_res, NFS4_OPF_CURFH),
};

static enum rpc_proc_status nfs4_null_exec(struct rpc_call *c, void *args, void *res)
{
	(void)c, (void)args, (void)res; /* RFC 7530 §16.1: no work */
	return RPC_PROC_OK;
}

/* The server whose state every COMPOUND acts on: the RPC layer's procedure table carries no context,
 * so the NFS service binds it once, before serving (nfs4_program_serve()). */
static struct nfs4_server *nfs4_served;

void nfs4_program_serve(struct nfs4_server *srv)
{
	nfs4_served = srv;
}

/* The engine's op_done hook: the operation's counters (nfs4_stats.c), and its export's when it acted on
 * an object of one (nfs/common/export_stats.c). */
static void nfs4_op_done(const struct nfs4_ctx *x, uint32_t op, uint32_t status, uint64_t ns)
{
	struct nfs4_svc *s = x->priv;

	nfs4_stats_op(op, status, ns);
	if (s->op_exp)
		nfs_export_count_op(s->op_exp, status != NFS4_OK);
	s->op_exp = NULL;
}

enum rpc_proc_status nfs4_compound_with(struct rpc_call *c, const struct nfs4_op *ops)
{
	static thread_local struct nfs4_svc svc;
	struct nfs4_arena *a = nfs4_arena_get();
	enum nfs4_compound_outcome out;
	uint32_t status = NFS4_OK;

	a->ctx.ops = ops;
	a->ctx.minor_max = NFS4_MINOR_MAX;
	a->ctx.reply_max = 0;
	a->ctx.call = c;
	a->ctx.priv = &svc;
	a->ctx.op_done = nfs4_op_done; /* per-operation and per-export counters */
	a->ctx.sec_check = nfs4_cur_sec_check; /* RFC 8881 §2.6.3.1.1 (nfs4_call.c) */
	nfs4_svc_begin(&svc, nfs4_served, c);
	svc.seq_new = false;
	svc.cur_sid_set = false;
	svc.saved_sid_set = false;
	svc.any_flavor = false;
	out = nfs4_compound_run(a, &c->args, &c->res, &status);
	nfs4_sequence_done(&a->ctx, &c->res);
	nfs4_svc_end(&svc);
	switch (out) {
	case NFS4_COMPOUND_GARBAGE:
		log_limited(&nfs4_bad_limit, LOG_NOTICE, "nfs4: %s: COMPOUND header does not decode (GARBAGE_ARGS)",
			    c->conn ? c->conn->peer_name : "-");
		return RPC_PROC_GARBAGE;
	case NFS4_COMPOUND_NOROOM:
		return RPC_PROC_SYSERR;
	case NFS4_COMPOUND_DONE:
		break;
	}
	/* An inline COMPOUND that asks for a retry (LOOKUP the mode bits do not grant, a write
	 * delegation's GETATTR): the retry runs on a worker, as the caller (NFS4_OPF_INLINE). */
	if (status == NFS4ERR_DELAY && loop_is_loop_thread())
		rpc_inline_pause();
	if (status == NFS4ERR_BADXDR)
		log_limited(&nfs4_bad_limit, LOG_NOTICE, "nfs4: %s: operation %u of a COMPOUND does not decode (BADXDR)",
			    c->conn ? c->conn->peer_name : "-", a->ctx.opidx + 1);
	c->proc_failed = status != NFS4_OK;
	return RPC_PROC_OK;
}

/* COMPOUND4args (RFC 7530 §16.2.1): tag, then minorversion; 0 goes through the DRC. */
static bool nfs4_compound_drc(const struct rpc_call *c)
{
	struct xdr_dec d = c->args;
	const uint8_t *tag;
	uint32_t taglen, minor;

	return xdr_dec_opaque(&d, NFS4_TAG_MAX, &tag, &taglen) && xdr_dec_u32(&d, &minor) && minor == 0;
}

/* Receiving thread, before SEQUENCE takes its slot: the whole COMPOUND there, or a worker
 * (nfs4_compound_inline_peek; RFC 8881 §2.10.6.1: a slot's sequence is never taken twice). */
static uint8_t nfs4_compound_run_of(const struct rpc_call *c)
{
	return nfs4_compound_inline_peek(nfs4_arena_get(), nfs4_ops, &c->args, nfs4_deleg_any()) ? RPC_RUN_INLINE_META
												    : RPC_RUN_WORKER;
}

/* RFC 7530 §16.2, RFC 8881 §16.2: the whole COMPOUND in one execute step. */
static enum rpc_proc_status nfs4_compound_exec(struct rpc_call *c, void *args, void *res)
{
	(void)args, (void)res;
	return nfs4_compound_with(c, nfs4_ops);
}

static const struct rpc_proc nfs4_procs[] = {
	[NFS4PROC_NULL] = { .name = "NULL", .execute = nfs4_null_exec, .args_size = 0, .res_size = 0,
			    .max_reply = RPC_REPLY_MAX(0), .cache = RPC_CACHE_NONE, .ddp = ULB_RULE_NONE },
	[NFS4PROC_COMPOUND] = { .name = "COMPOUND", .execute = nfs4_compound_exec, .args_size = 0,
				.res_size = 0, .max_reply = 0, .cache = RPC_CACHE_DRC,
				.cache_wanted = nfs4_compound_drc, .ddp = ULB_RULE_COMPOUND,
				.run_of = nfs4_compound_run_of },
};

const struct rpc_version nfs4_version = {
	.vers = NFS4_VERSION,
	.nprocs = sizeof(nfs4_procs) / sizeof(nfs4_procs[0]),
	.procs = nfs4_procs,
};
