/*
 * nfs4_proc_lock.c - byte-range locks: LOCK (RFC 8881 §18.10), LOCKT
 * (§18.11), LOCKU (§18.12), RELEASE_LOCKOWNER (RFC 7530 §16.37), over the
 * backend's per-owner locks (one open file description per owner and file in
 * the local backend), so NFSv4 clients, NLM clients and local processes see
 * each other's locks: the backend decides every conflict, and
 * NFS4ERR_DENIED names the holder when it is an NFSv4 lock owner (an NLM
 * owner or a local process shows as clientid 0 with an empty owner).
 *
 * Lock owners and lock stateids are nfs4_stateid.c's; blocking lock types
 * (READW_LT, WRITEW_LT) are answered at once as the others (RFC 8881 §9.6:
 * the client polls; a 4.1+ client denied one is also recorded for
 * CB_NOTIFY_LOCK, nfs4_lock_notify.c); reclaims and new locks as the grace period allows.
 * NFSv4.0 seqids: a new lock owner's LOCK goes by its open owner's
 * open_seqid and starts the lock owner's sequence at lock_seqid; otherwise
 * the lock owner's lock_seqid (replayed from its last reply, RFC 7530 §9.1.8).
 */
#include <errno.h>
#include <string.h>

#include "core/log.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/state/nfs4_deleg.h"
#include "nfs/v4/ops/nfs4_lock_notify.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"

/* RFC 8881 §18.10.3: length 0 is INVAL; all ones is "to the end"; the range may not wrap. */
static uint32_t lock_range(uint32_t locktype, uint64_t offset, uint64_t length, struct be_lock *lk)
{
	if (length == 0 || (length != UINT64_MAX && length > UINT64_MAX - offset))
		return NFS4ERR_INVAL;
	lk->type = locktype == READ_LT || locktype == READW_LT ? BE_LOCK_READ : BE_LOCK_WRITE;
	lk->offset = offset;
	lk->length = length == UINT64_MAX ? 0 : length;
	return NFS4_OK;
}

#define LOCK_CANDIDATES 16u

/*
 * The backend may not say who holds a lock (local: the kernel does not name
 * the open file description). Then the NFSv4 lock owners with state on the
 * file are tried: the first one as whom the test no longer conflicts holds it.
 */
static uint64_t lock_holder(struct nfs4_ctx *x, struct be_fs *fs, struct be_file *f, const struct be_lock *lk)
{
	uint64_t ids[LOCK_CANDIDATES];
	struct be_lock_conflict h;
	unsigned n = nfs4_stab_file_lock_owners(&nfs4_srv(x)->stab, x->cur.fh.data, x->cur.fh.len, ids,
						 LOCK_CANDIDATES);
	bool conflict;

	for (unsigned i = 0; i < n; i++)
		if (be_lock_test(fs, f, ids[i], lk, &conflict, &h) == 0 && !conflict)
			return ids[i];
	return 0;
}

/* LOCK4denied: the conflicting lock and, when it is an NFSv4 lock owner's, who holds it. */
static void lock_denied(struct nfs4_ctx *x, struct be_fs *fs, struct be_file *f, const struct be_lock *lk,
			const struct be_lock_conflict *h, struct nfs4_lock_op_res *r)
{
	uint64_t owner = h->owner ? h->owner : lock_holder(x, fs, f, lk);

	r->d_off = h->lock.offset;
	r->d_len = h->lock.length == 0 ? UINT64_MAX : h->lock.length;
	r->d_type = h->lock.type == BE_LOCK_READ ? READ_LT : WRITE_LT;
	r->d_clientid = 0;
	r->d_owner_len = 0;
	if (owner & NFS4_STAB_LOCK_ID_BIT)
		nfs4_stab_lock_owner(&nfs4_srv(x)->stab, owner, &r->d_clientid, r->d_owner, sizeof(r->d_owner),
				     &r->d_owner_len);
}

/* Set or test lk for owner id on f: NFS4_OK, DENIED (r's holder filled), or the errno's status. */
static uint32_t lock_apply(struct nfs4_ctx *x, struct be_fs *fs, struct be_file *f, uint64_t id,
			   const struct be_lock *lk, bool set, struct nfs4_lock_op_res *r)
{
	struct be_lock_conflict h;
	bool conflict = false;
	int err = set ? be_lock_set(fs, f, id, lk) : be_lock_test(fs, f, id, lk, &conflict, &h);

	if (set && err == EAGAIN) {
		/* RFC 8881 §18.10.4: who holds it (it may have gone meanwhile: DENIED all the same). */
		memset(&h, 0, sizeof(h));
		h.lock = *lk;
		if (be_lock_test(fs, f, id, lk, &conflict, &h) != 0 || !conflict)
			h.lock = *lk, h.owner = 0;
		conflict = true;
		err = 0;
	}
	/* Out of lock descriptions (the backend's table, or descriptors): the
	 * server's resources, not a fault. RFC 7530 §13.1.1.4: NFS4ERR_RESOURCE in
	 * 4.0; RFC 8881 §15.1.1.3: NFS4ERR_DELAY in 4.1+ (RESOURCE is not an answer there). */
	if (err == ENOLCK || err == EMFILE || err == ENFILE)
		return x->minorversion == 0 ? NFS4ERR_RESOURCE : NFS4ERR_DELAY;
	/* A write lock through a file open read-only (an OPEN for reading while
	 * delegations are on: nfs4_proc_open.c open_file): not allowed by the
	 * open's access, NFS4ERR_OPENMODE (as knfsd answers a WRITE_LT without a
	 * writable open). */
	if (err == EBADF && lk->type == BE_LOCK_WRITE)
		return NFS4ERR_OPENMODE;
	if (err)
		return nfs_errno_to_nfsstat4(err);
	if (conflict) {
		lock_denied(x, fs, f, lk, &h, r);
		return NFS4ERR_DENIED;
	}
	return NFS4_OK;
}

/* 4.0: the sequence the LOCK goes by (open owner for a new lock owner, else the lock owner). */
static bool lock_seqid_begin(struct nfs4_ctx *x, const struct nfs4_lock_args *a, struct nfs4_lock_op_res *r,
			     uint32_t *status)
{
	struct nfs4_stab *t = &nfs4_srv(x)->stab;
	enum nfs4_seqid_action act;
	bool done;

	if (x->minorversion != 0)
		return false;
	nfs4_stateid_renew(x, &a->sid);
	*status = NFS4_OK;
	if (a->new_lock_owner)
		act = nfs4_stab_seqid_check_sid(t, &a->sid, a->open_seqid, &r->rp, status);
	else
		act = nfs4_stab_lock_seqid_check(t, &a->sid, a->lock_seqid, &r->rp, status);
	*status = nfs4_seqid_verdict(act, &r->rp, &r->replay, *status, &done);
	if (done)
		return true;
	r->seq_sid = a->sid;
	r->seqid = a->new_lock_owner ? a->open_seqid : a->lock_seqid;
	r->seqid_done = true;
	if (a->new_lock_owner) {
		r->new_owner = true;
		r->clientid = a->owner.clientid, r->owner = a->owner.owner, r->owner_len = a->owner.owner_len;
		r->lock_seqid = a->lock_seqid;
	}
	return false;
}

uint32_t nfs4_lock_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_lock_args *a = args;
	struct nfs4_lock_op_res *r = res;
	struct nfs4_stab *t = &nfs4_srv(x)->stab;
	struct nfs4_lock_ref ref;
	struct nfs4_stateid sid;
	struct nfs4_obj ob;
	struct be_lock lk;
	uint64_t clientid;
	uint32_t status;

	if (lock_seqid_begin(x, a, r, &status))
		return status;
	status = nfs4_stateid_resolve(x, &a->sid, &sid);
	uint64_t caller = nfs4_sid_client(x, &sid);
	/* RFC 8881 §8.4.2: in grace only reclaims, by clients of the previous run; afterwards none. */
	if (status == NFS4_OK)
		status = nfs4_grace_for(x, NFS4_GRACE_LOCK, caller, a->reclaim);
	if (status == NFS4_OK)
		status = lock_range(a->locktype, a->offset, a->length, &lk);
	if (status == NFS4_OK)
		status = nfs4_obj_open(x->priv, &x->cur.fh, &ob); /* admission on every use */
	else
		return status;
	/* Another client's delegation is recalled first: its holder keeps its locks
	 * locally (RFC 8881 §10.4); DELAY until it is back (reclaims meet none). */
	if (status == NFS4_OK && !a->reclaim)
		status = nfs4_deleg_break(x->cur.fh.data, x->cur.fh.len, caller, NFS4_DL_ACC_LOCK);
	if (status == NFS4_OK && a->new_lock_owner) {
		status = nfs4_op_client(x, a->owner.clientid, &clientid);
		struct nfs4_lock_req rq = { .clientid = clientid, .minor = x->minorversion, .sid = sid,
					    .owner = a->owner.owner, .owner_len = a->owner.owner_len,
					    .fkey = x->cur.fh.data, .fkey_len = x->cur.fh.len };
		if (status == NFS4_OK)
			status = nfs4_bound_note(x, clientid, "lock owner", nfs4_stab_lock_new(t, &rq, &ref));
	} else if (status == NFS4_OK) {
		status = nfs4_stab_lock_find(t, nfs4_sid_client(x, &sid), &sid, x->minorversion, x->cur.fh.data,
					     x->cur.fh.len, &ref);
	}
	if (status == NFS4_OK) {
		status = ref.file ? lock_apply(x, ob.exp->fs, ref.file, ref.owner_id, &lk, true, r) : NFS4ERR_SERVERFAULT;
		/* RFC 8881 §9.6, §20.11: a 4.1+ client denied a blocking lock is told when locks are released. */
		if (status == NFS4ERR_DENIED && x->minorversion >= 1 && (a->locktype == READW_LT || a->locktype == WRITEW_LT))
			nfs4_lock_notify_wait(t, ((struct nfs4_svc *)x->priv)->clientid, &x->cur.fh, ref.owner_id,
					      nfs4_now());
		if (status == NFS4_OK)
			status = nfs4_stab_lock_bump(t, &ref.sid, &r->sid);
		if (status == NFS4_OK)
			nfs4_cur_stateid_set(x, &r->sid);
		if (status == NFS4_OK && a->reclaim) /* RFC 8881 §8.4.2.1: a lock of the previous run, back */
			log_debug("nfs4: LOCK reclaimed [%llu, +%llu)", (unsigned long long)a->offset,
				  (unsigned long long)a->length);
		if (ref.file)
			be_file_put(ref.fs, ref.file);
	}
	nfs4_obj_put(&ob);
	return status;
}

/* The 4.0 reply becomes the owner's cached one. */
static void lock_seqid_end(struct nfs4_ctx *x, const struct nfs4_lock_op_res *r, uint32_t status,
			   const uint8_t *body, uint32_t len)
{
	struct nfs4_stab *t = &nfs4_srv(x)->stab;

	if (!r->seqid_done)
		return;
	nfs4_stab_seqid_done_sid(t, &r->seq_sid, r->seqid, status, body, len);
	if (r->new_owner)
		nfs4_stab_lock_seqid_done(t, r->clientid, r->owner, r->owner_len, r->lock_seqid, status, body, len);
}

/* LOCK4res / LOCKU4res: the stateid; LOCK4denied on NFS4ERR_DENIED (LOCKT too). */
void nfs4_lock_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_lock_op_res *r = res;
	uint8_t *start = e->p;

	if (r->replay) {
		xdr_enc_fixed(e, r->rp.body, r->rp.len);
		return;
	}
	if (status == NFS4_OK && !r->no_sid) {
		nfs4_enc_stateid(e, &r->sid);
	} else if (status == NFS4ERR_DENIED) {
		xdr_enc_u64(e, r->d_off);
		xdr_enc_u64(e, r->d_len);
		xdr_enc_u32(e, r->d_type);
		xdr_enc_u64(e, r->d_clientid);
		xdr_enc_opaque(e, r->d_owner, r->d_owner_len);
	}
	if (!e->overflow)
		lock_seqid_end(x, r, status, start, (uint32_t)(e->p - start));
}

/* RFC 8881 §18.11.3: a test with no state; the owner's own locks never conflict. */
uint32_t nfs4_lockt_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_lockt_args *a = args;
	struct nfs4_lock_op_res *r = res;
	struct be_file *f = NULL;
	struct nfs4_obj ob;
	struct be_lock lk;
	uint64_t clientid, id;
	uint32_t status = nfs4_op_client(x, a->owner.clientid, &clientid);

	r->no_sid = true;
	if (status == NFS4_OK)
		status = nfs4_grace_for(x, NFS4_GRACE_LOCKT, clientid, false);
	if (status == NFS4_OK)
		status = lock_range(a->locktype, a->offset, a->length, &lk);
	if (status != NFS4_OK)
		return status;
	status = nfs4_obj_open(x->priv, &x->cur.fh, &ob);
	if (status == NFS4_OK)
		status = nfs4_regular_check(x, &ob);
	/* As LOCK: a delegation's locks are its client's own until it is returned. */
	if (status == NFS4_OK)
		status = nfs4_deleg_break(x->cur.fh.data, x->cur.fh.len, clientid, NFS4_DL_ACC_LOCK);
	if (status == NFS4_OK)
		status = nfs_errno_to_nfsstat4(be_file_open(ob.exp->fs, &ob.o, BE_OPEN_READ, &f));
	if (status == NFS4_OK) {
		id = nfs4_stab_lock_owner_id(&nfs4_srv(x)->stab, clientid, a->owner.owner, a->owner.owner_len);
		status = lock_apply(x, ob.exp->fs, f, id ? id : NFS4_STAB_LOCK_ID_BIT, &lk, false, r);
	}
	if (f)
		be_file_put(ob.exp->fs, f);
	nfs4_obj_put(&ob);
	return status;
}

uint32_t nfs4_locku_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_locku_args *a = args;
	struct nfs4_lock_op_res *r = res;
	struct nfs4_stab *t = &nfs4_srv(x)->stab;
	enum nfs4_seqid_action act;
	struct nfs4_lock_ref ref;
	struct nfs4_stateid sid;
	struct be_lock lk;
	bool done;
	uint32_t status = NFS4_OK;

	if (x->minorversion == 0) {
		nfs4_stateid_renew(x, &a->sid);
		act = nfs4_stab_lock_seqid_check(t, &a->sid, a->seqid, &r->rp, &status);
		status = nfs4_seqid_verdict(act, &r->rp, &r->replay, status, &done);
		if (done)
			return status;
		r->seq_sid = a->sid, r->seqid = a->seqid, r->seqid_done = true;
	}
	status = nfs4_stateid_resolve(x, &a->sid, &sid);
	if (status == NFS4_OK)
		status = lock_range(a->locktype, a->offset, a->length, &lk);
	if (status == NFS4_OK)
		status = nfs4_stab_lock_find(t, nfs4_sid_client(x, &sid), &sid, x->minorversion, x->cur.fh.data,
					     x->cur.fh.len, &ref);
	if (status != NFS4_OK)
		return status;
	status = ref.file ? nfs_errno_to_nfsstat4(be_lock_unset((struct be_fs *)ref.fs, ref.file, ref.owner_id, &lk))
			  : NFS4ERR_SERVERFAULT;
	if (status == NFS4_OK)
		status = nfs4_stab_lock_bump(t, &ref.sid, &r->sid);
	if (status == NFS4_OK)
		nfs4_cur_stateid_set(x, &r->sid);
	if (ref.file)
		be_file_put(ref.fs, ref.file);
	return status;
}

/* RFC 7530 §16.37.4: the lock owner goes with its stateids; LOCKS_HELD while it holds locks. */
uint32_t nfs4_release_lockowner_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_lock_owner_args *a = args;
	uint64_t clientid;
	uint32_t status = nfs4_op_client(x, a->owner.clientid, &clientid);

	(void)res;
	if (status != NFS4_OK)
		return status;
	return nfs4_stab_release_lockowner(&nfs4_srv(x)->stab, clientid, a->owner.owner, a->owner.owner_len);
}

/* A backend that keeps each owner's locks apart says itself (local: its description, or its pieces
 * on a write delegation's shared one). Else a whole-file write lock of another owner meets one of
 * the owner's: the backend names the holder, or the same test as the owner itself meets nothing
 * (lock_holder's way; with two holders on the file it would meet the other's and say none). */
bool nfs4_lock_owner_holds(struct be_fs *fs, struct be_file *f, uint64_t owner)
{
	struct be_lock all = { .type = BE_LOCK_WRITE, .offset = 0, .length = 0 };
	struct be_lock_conflict h = { 0 };
	bool conflict = false;

	if (fs->ops->lock_owner_holds)
		return be_lock_owner_holds(fs, f, owner);
	if (be_lock_test(fs, f, NFS4_STAB_LOCK_ID_BIT, &all, &conflict, &h) != 0 || !conflict)
		return false;
	if (h.owner)
		return h.owner == owner;
	conflict = true;
	return be_lock_test(fs, f, owner, &all, &conflict, &h) == 0 && !conflict;
}

/* FREE_STATEID of a lock stateid: LOCKS_HELD while its owner holds a lock on the file. */
uint32_t nfs4_lock_free_check(struct nfs4_ctx *x, const struct nfs4_stateid *sid)
{
	struct nfs4_lock_ref ref;
	struct nfs4_stab *t = &nfs4_srv(x)->stab;
	uint32_t status = NFS4_OK;

	if (nfs4_stateid_kind(sid, 1) != NFS4_SID_ORDINARY ||
	    nfs4_stab_lock_find_any(t, nfs4_sid_client(x, sid), sid, &ref) != NFS4_OK)
		return NFS4_OK; /* not a lock stateid: nfs4_stab_free() answers */
	if (ref.file && nfs4_lock_owner_holds((struct be_fs *)ref.fs, ref.file, ref.owner_id))
		status = NFS4ERR_LOCKS_HELD;
	if (ref.file)
		be_file_put(ref.fs, ref.file);
	return status;
}
