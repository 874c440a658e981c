/*
 * nfs4_proc_open.c - OPEN (RFC 8881 §18.16, RFC 7530 §16.16): the target
 * (CLAIM_NULL: a name in the current directory, looked up or created
 * UNCHECKED4 / GUARDED4 / EXCLUSIVE4 / EXCLUSIVE4_1; CLAIM_FH: the current
 * filehandle), the caller's permission (not for a file this OPEN created, as
 * knfsd), the backend's open file (kept by the open state table for READ and
 * WRITE through the stateid), the open stateid and share reservation
 * (nfs4_stateid.c), and the result: change_info4, rflags, attrset and a
 * delegation when nfs4_proc_deleg.c grants one (RFC 8881 §10.4: read or
 * write; else OPEN_DELEGATE_NONE, or for a 4.1 client that expressed a
 * want, OPEN_DELEGATE_NONE_EXT with the reason). Another client's
 * delegation in the way is recalled first (NFS4ERR_DELAY meanwhile).
 *
 * CLAIM_PREVIOUS reclaims as the grace period allows (nfs4_grace_for()).
 * CLAIM_DELEGATE_CUR / CLAIM_DELEG_CUR_FH open with a delegation the
 * client holds (the Linux client does while returning one).
 * CLAIM_DELEGATE_PREV / CLAIM_DELEG_PREV_FH: NOTSUPP (delegations do not
 * survive a client's restart here; DELEGPURGE is NOTSUPP too).
 */
#include <errno.h>
#include <string.h>

#include "core/log.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/xdr/nfs4_mod.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"

static struct log_limit nfs4_bound_limit;

uint32_t nfs4_bound_note(const struct nfs4_ctx *x, uint64_t clientid, const char *what, uint32_t status)
{
	const struct nfs4_svc *s = x->priv;

	if (status == NFS4ERR_RESOURCE || status == NFS4ERR_DELAY)
		log_limited(&nfs4_bound_limit, LOG_NOTICE,
			    "nfs4: %s: client %llx reached its %s bound (rnfsd.conf(5) [nfsv4]): refused",
			    s->call && s->call->conn ? s->call->conn->peer_name : "-", (unsigned long long)clientid, what);
	return status;
}

/* createmode4 -> the backend's create, the createattrs' status first. */
static uint32_t open_create(struct nfs4_obj *dir, const struct nfs4_open_args *a, const char *name,
			    struct be_obj *o, struct be_attr *attr, bool *created)
{
	struct be_create how = { .type = BE_REG };
	bool existed = false;
	int err;

	if (dir->opts && !dir->opts->rw)
		return NFS4ERR_ROFS;
	if (a->createmode != EXCLUSIVE4 && a->sattr_status != NFS4_OK)
		return a->sattr_status;
	how.how = a->createmode == UNCHECKED4 ? BE_CREATE_UNCHECKED
		  : a->createmode == GUARDED4 ? BE_CREATE_GUARDED : BE_CREATE_EXCLUSIVE;
	memcpy(how.verf, a->verf, BE_VERF_SIZE); /* the backend keeps it in atime/mtime, as knfsd */
	if (a->createmode != EXCLUSIVE4)
		how.sa = a->attrs.sa;
	if (a->createmode == EXCLUSIVE4_1)
		how.sa.mask &= ~(uint32_t)(BE_SET_ATIME | BE_SET_MTIME | BE_SET_ATIME_NOW | BE_SET_MTIME_NOW);
	err = be_create(dir->exp->fs, &dir->cred, &dir->o, name, &how, o, attr, &existed);
	if (err == 0 && !be_obj_valid(o))
		err = ESTALE; /* vanished at once */
	*created = err == 0 && !existed;
	return nfs_errno_to_nfsstat4(err);
}

/* CLAIM_NULL: name in the current directory (RFC 8881 §18.16.3). */
static uint32_t open_by_name(struct nfs4_ctx *x, const struct nfs4_open_args *a, struct nfs4_obj *dir,
			     struct be_obj *o, struct be_attr *attr, struct nfs4_open_op_res *r)
{
	struct nfs4_svc *s = x->priv;
	char name[NFS4_NAME_MAX + 1];
	struct be_attr after;
	uint32_t status = nfs4_name_check(&a->name);

	if (status != NFS4_OK)
		return status;
	status = nfs4_obj_open(s, &x->cur.fh, dir);
	if (status != NFS4_OK)
		return status;
	if (dir->kind == NFS4_OBJ_PSEUDO)
		return a->opentype == OPEN4_CREATE ? NFS4ERR_ROFS : NFS4ERR_ISDIR; /* RFC 8881 §7.7 */
	if (dir->attr.type != BE_DIR)
		return dir->attr.type == BE_LNK ? NFS4ERR_SYMLINK : NFS4ERR_NOTDIR;
	memcpy(name, a->name.s, a->name.len);
	name[a->name.len] = '\0';
	if (a->opentype != OPEN4_CREATE) {
		/* nothing changes: one reading is before and after, atomically */
		r->cinfo = (struct nfs4_cinfo){ .atomic = true, .before = dir->attr.change, .after = dir->attr.change };
		return nfs_errno_to_nfsstat4(be_lookup(dir->exp->fs, &dir->cred, &dir->o, name, o, attr));
	}
	struct nfs4_dirlock h = { 0 };

	/* RFC 8881 §10.9.1: a new entry recalls other clients' directory delegations first (an
	 * existing file's open changes nothing: no recall). */
	if (nfs4_deleg_dir_any() && be_lookup(dir->exp->fs, &dir->cred, &dir->o, name, o, attr) == ENOENT)
		status = nfs4_deleg_dir_break(x, &x->cur.fh, NFS_DIR_ADD);
	if (be_obj_valid(o))
		be_obj_put(dir->exp->fs, o);
	if (status != NFS4_OK)
		return status;
	nfs4_mod_begin(dir, NULL, &h); /* before and after with rnfsd's other changes held off */
	r->cinfo.before = r->cinfo.after = dir->attr.change;
	status = open_create(dir, a, name, o, attr, &r->created);
	if (r->created && be_getattr(dir->exp->fs, &dir->o, &after) == 0)
		r->cinfo.after = after.change;
	if (r->created)
		nfs4_deleg_dir_added(&x->cur.fh, name); /* RFC 8881 §10.9.2 */
	r->cinfo.atomic = h.held && dir->exp->fs->one_server;
	nfs4_dirlock_drop(&h);
	return status;
}

/* The caller's permission for share_access on an existing file; UNCHECKED4's size applied. */
static uint32_t open_permit(struct nfs4_obj *ob, const struct be_obj *o, const struct nfs4_open_args *a,
			    uint32_t access, struct nfs4_open_op_res *r)
{
	uint32_t want = 0, granted = 0;
	int err;

	if ((access & NFS4_SHARE_ACCESS_WRITE) && ob->opts && !ob->opts->rw)
		return NFS4ERR_ROFS;
	if (r->created)
		return NFS4_OK; /* the creator may open what it made, whatever the mode (as knfsd) */
	want = (access & NFS4_SHARE_ACCESS_READ ? BE_ACCESS_READ : 0) |
	       (access & NFS4_SHARE_ACCESS_WRITE ? BE_ACCESS_MODIFY : 0);
	err = be_access(ob->exp->fs, &ob->cred, o, want, &granted);
	if (err)
		return nfs_errno_to_nfsstat4(err);
	if ((granted & want) != want)
		return NFS4ERR_ACCESS; /* RFC 8881 §18.16.3 */
	/* RFC 7530 §16.16.5, RFC 8881 §18.16.3: UNCHECKED4 of an existing file sets none of the
	 * createattrs but a size of zero, the truncation O_TRUNC would make (as knfsd's op_truncate;
	 * pynfs OPEN2: a non-zero size is ignored). */
	if (a->opentype == OPEN4_CREATE && a->createmode == UNCHECKED4 && (a->attrs.sa.mask & BE_SET_SIZE) &&
	    a->attrs.sa.size == 0 && (access & NFS4_SHARE_ACCESS_WRITE)) {
		struct be_sattr sa = { .mask = BE_SET_SIZE, .size = a->attrs.sa.size };
		err = be_setattr(ob->exp->fs, &ob->cred, o, &sa, NULL, NULL, NULL);
		if (err)
			return nfs_errno_to_nfsstat4(err);
		nfs4_bitmap_set(&r->attrset, FATTR4_SIZE);
	}
	return NFS4_OK;
}

/* The backend's open file: read-write where the export allows, else
 * read-only. Read-only too for an open for reading that may get a
 * delegation: a read-write descriptor would leave the file no read lease
 * (nfs4_deleg_watch.c); an upgrade opens read-write and replaces it
 * (nfs4_stab_open keeps the file open for more). */
static uint32_t open_file(struct nfs4_obj *ob, const struct be_obj *o, uint32_t share_access, struct be_file **f,
			  unsigned *modes)
{
	uint32_t access = share_access & NFS4_SHARE_ACCESS_BOTH;
	bool deleg = nfs4_deleg_enabled() && (share_access & OPEN4_SHARE_ACCESS_WANT_DELEG_MASK) !=
						     OPEN4_SHARE_ACCESS_WANT_NO_DELEG;
	bool rw = (!ob->opts || ob->opts->rw) && !(deleg && access == NFS4_SHARE_ACCESS_READ);
	int err = ENOENT;

	if (rw)
		err = be_file_open(ob->exp->fs, o, BE_OPEN_READ | BE_OPEN_WRITE, f);
	*modes = NFS4_SHARE_ACCESS_BOTH;
	if (err && !(access & NFS4_SHARE_ACCESS_WRITE)) {
		err = be_file_open(ob->exp->fs, o, BE_OPEN_READ, f);
		*modes = NFS4_SHARE_ACCESS_READ;
	}
	return nfs_errno_to_nfsstat4(err);
}

/* RFC 8881 §18.16.3: no delegation; a 4.1 want is answered with the reason. */
static uint32_t open_deleg(const struct nfs4_ctx *x, uint32_t share_access, struct nfs4_open_op_res *r)
{
	uint32_t want = share_access & OPEN4_SHARE_ACCESS_WANT_DELEG_MASK;

	r->deleg = OPEN_DELEGATE_NONE;
	if (x->minorversion == 0)
		return share_access & ~NFS4_SHARE_ACCESS_BOTH ? NFS4ERR_INVAL : NFS4_OK;
	/* RFC 9754 §5.2, §4: a 4.2 client may ask for delegated timestamps
	 * (nfs4_deleg_open() grants the *_ATTRS_DELEG kind) and for a delegation
	 * instead of an open (open_xor()); before 4.2 the bits are no
	 * share_access value at all (RFC 8881 §18.16.3: INVAL, as knfsd). */
	if (x->minorversion >= 2)
		share_access &= ~(OPEN4_SHARE_ACCESS_WANT_DELEG_TIMESTAMPS | OPEN4_SHARE_ACCESS_WANT_OPEN_XOR_DELEGATION);
	if (share_access & ~(NFS4_SHARE_ACCESS_BOTH | OPEN4_SHARE_ACCESS_WANT_DELEG_MASK |
			     OPEN4_SHARE_ACCESS_WANT_SIGNALS) || want > OPEN4_SHARE_ACCESS_WANT_CANCEL)
		return NFS4ERR_INVAL;
	if (want == OPEN4_SHARE_ACCESS_WANT_NO_PREFERENCE)
		return NFS4_OK;
	r->deleg = OPEN_DELEGATE_NONE_EXT;
	r->why = want == OPEN4_SHARE_ACCESS_WANT_NO_DELEG ? WND4_NOT_WANTED
		 : want == OPEN4_SHARE_ACCESS_WANT_CANCEL ? WND4_CANCELLED : WND4_RESOURCE;
	return NFS4_OK;
}

/* What OPEN says of an object that is not a regular file: nfs4_regular_check()'s verdict, but in
 * 4.0 NFS4ERR_SYMLINK for devices, sockets and FIFOs too, where 4.1 has NFS4ERR_WRONG_TYPE (RFC 8881
 * §18.16.3): 4.0 has no such error, and knfsd answers SYMLINK there as it reads RFC 7530 §16.16.6
 * (pynfs OPEN7b/c/f/s want it). */
static uint32_t open_regular_check(const struct nfs4_ctx *x, const struct nfs4_obj *ob)
{
	uint32_t status = nfs4_regular_check(x, ob);

	return status == NFS4ERR_INVAL && x->minorversion == 0 ? NFS4ERR_SYMLINK : status;
}

/* The target object, by claim. */
static uint32_t open_target(struct nfs4_ctx *x, const struct nfs4_open_args *a, struct nfs4_obj *dir,
			    struct nfs4_obj *ob, struct be_obj *o, struct nfs4_open_op_res *r)
{
	struct nfs4_svc *s = x->priv;
	struct be_attr attr;
	uint32_t status;

	switch (a->claim) {
	case CLAIM_NULL:
	case CLAIM_DELEGATE_CUR: /* RFC 8881 §18.16.3: by name, the delegation checked in open_state() */
		status = open_by_name(x, a, dir, o, &attr, r);
		*ob = *dir; /* export, options and credential of the directory */
		ob->kind = NFS4_OBJ_EXPORT;
		ob->attr = attr;
		return status != NFS4_OK ? status : open_regular_check(x, ob);
	case CLAIM_FH: /* RFC 8881 §18.16.3: the current filehandle is the file */
	case CLAIM_DELEG_CUR_FH:
		if (x->minorversion == 0)
			return NFS4ERR_INVAL;
		/* fall through */
	case CLAIM_PREVIOUS: /* RFC 7530 §16.16.5: a reclaim; the current filehandle is the file */
		status = nfs4_obj_open(s, &x->cur.fh, dir);
		if (status != NFS4_OK)
			return status;
		*ob = *dir;
		*o = dir->o;
		return open_regular_check(x, dir);
	default:
		return NFS4ERR_NOTSUPP; /* CLAIM_DELEGATE_PREV, CLAIM_DELEG_PREV_FH */
	}
}

/*
 * RFC 9754 §4 OPEN4_SHARE_ACCESS_WANT_OPEN_XOR_DELEGATION: a 4.2 OPEN that
 * got a delegation and whose open is new keeps no open state: the open just
 * made is closed again, the reply carries the anonymous stateid and
 * OPEN4_RESULT_NO_OPEN_STATEID, and the client uses the delegation stateid
 * for I/O and ends with DELEGRETURN (as knfsd: an OPEN that upgraded an
 * existing open keeps it). The delegation's lease sits on its own
 * descriptor (local_lease.c), which the close leaves alone.
 */
static void open_xor(struct nfs4_ctx *x, const struct nfs4_open_args *a, uint64_t clientid, bool new_open,
		     struct nfs4_open_op_res *r)
{
	struct nfs4_sid_seq sq = { .minor = x->minorversion, .clientid = clientid };
	struct nfs4_stateid gone;

	if (x->minorversion < 2 || !(a->share_access & OPEN4_SHARE_ACCESS_WANT_OPEN_XOR_DELEGATION) || !new_open ||
	    r->deleg == OPEN_DELEGATE_NONE || r->deleg == OPEN_DELEGATE_NONE_EXT)
		return;
	if (nfs4_stab_close(&nfs4_srv(x)->stab, &r->sid, sq, &gone) != NFS4_OK)
		return; /* cannot happen (just made, under the client's session): the open stays */
	memset(&r->sid, 0, sizeof(r->sid));
	r->rflags |= OPEN4_RESULT_NO_OPEN_STATEID;
}

/* Permission, the backend's file, the open state, the new current filehandle. */
static uint32_t open_state(struct nfs4_ctx *x, const struct nfs4_open_args *a, uint64_t clientid,
			   struct nfs4_obj *ob, const struct be_obj *o, struct nfs4_open_op_res *r)
{
	uint32_t access = a->share_access & NFS4_SHARE_ACCESS_BOTH;
	struct nfs4_open_res sr;
	struct be_file *f = NULL;
	struct nfs_fh fh;
	unsigned modes;
	uint32_t status = nfs4_fh_obj(ob, o, &fh);

	/* RFC 8881 §18.16.3: the delegation the claim names is the client's, of this file. */
	if (status == NFS4_OK && (a->claim == CLAIM_DELEGATE_CUR || a->claim == CLAIM_DELEG_CUR_FH))
		status = nfs4_deleg_claim(clientid, &a->deleg_sid, fh.data, fh.len);
	/* RFC 8881 §10.4.1: another client's delegation in the way is recalled
	 * first (before UNCHECKED4's truncation too); DELAY until it is back. */
	if (status == NFS4_OK)
		status = nfs4_deleg_break(fh.data, fh.len, clientid,
					  (access & NFS4_SHARE_ACCESS_WRITE) || a->share_deny ? NFS4_DL_ACC_WRITE
											      : NFS4_DL_ACC_READ);
	if (status == NFS4_OK)
		status = open_permit(ob, o, a, access, r);
	if (status == NFS4_OK)
		status = open_file(ob, o, a->share_access, &f, &modes);
	if (status != NFS4_OK)
		return status;
	struct nfs4_open_req rq = { .clientid = clientid, .minor = x->minorversion, .owner = a->owner,
				    .owner_len = a->owner_len, .fkey = fh.data, .fkey_len = fh.len,
				    .access = access, .deny = a->share_deny, .fs = ob->exp->fs, .file = f,
				    .file_modes = modes };
	status = nfs4_stab_open(&nfs4_srv(x)->stab, &rq, &sr);
	if (status != NFS4_OK)
		nfs4_bound_note(x, clientid, "open", status);
	struct be_file *put = sr.file_taken ? NULL : f; /* kept for nfs4_deleg_open()'s lock test */

	if (status != NFS4_OK) {
		be_file_put(ob->exp->fs, put);
		return status;
	}
	r->sid = sr.sid;
	/* RFC 7530 §16.16.5: a new 4.0 owner confirms with OPEN_CONFIRM; RFC 8881 §18.16.4: POSIX locks. */
	r->rflags = OPEN4_RESULT_LOCKTYPE_POSIX | (sr.confirm ? OPEN4_RESULT_CONFIRM : 0);
	/* RFC 8881 §18.16.4, §20.11: 4.1+ clients may be sent CB_NOTIFY_LOCK for
	 * their denied blocking locks (nfs4_lock_notify.c). */
	if (x->minorversion >= 1)
		r->rflags |= OPEN4_RESULT_MAY_NOTIFY_LOCK;
	if (r->created && a->createmode != EXCLUSIVE4)
		r->attrset = a->attrs.attrsset;
	/* Delegations only where rnfsd sees every change: the local backend (a
	 * CephFS file's other clients could not be told). */
	if (!ob->exp->cfg->fs[0] || !strcmp(ob->exp->cfg->fs, "local")) {
		struct nfs4_deleg_file df = { .fs = ob->exp->fs, .o = o, .fkey = fh.data, .fkey_len = fh.len, .f = f };

		nfs4_deleg_open(x, clientid, &df, a, r);
		open_xor(x, a, clientid, sr.new_open, r);
	}
	be_file_put(ob->exp->fs, put);
	x->cur.fh = fh;
	/* RFC 9754 §4: without an open stateid the delegation's is the current one. */
	nfs4_cur_stateid_set(x, r->rflags & OPEN4_RESULT_NO_OPEN_STATEID ? &r->dsid : &r->sid);
	return NFS4_OK;
}

/* RFC 7530 §9.1.8: a replayed CLAIM_NULL OPEN leaves the file as the current
 * filehandle, as the original did (a later GETFH in the COMPOUND needs it). */
static void open_replay_fh(struct nfs4_ctx *x, const struct nfs4_open_args *a)
{
	struct be_obj o = BE_OBJ_INIT;
	char name[NFS4_NAME_MAX + 1];
	struct nfs4_obj dir;
	struct be_attr attr;

	if (a->claim != CLAIM_NULL || nfs4_name_check(&a->name) != NFS4_OK)
		return;
	if (nfs4_obj_open(x->priv, &x->cur.fh, &dir) == NFS4_OK && dir.kind == NFS4_OBJ_EXPORT &&
	    dir.attr.type == BE_DIR) {
		memcpy(name, a->name.s, a->name.len);
		name[a->name.len] = '\0';
		if (be_lookup(dir.exp->fs, &dir.cred, &dir.o, name, &o, &attr) == 0) {
			nfs4_fh_obj(&dir, &o, &x->cur.fh);
			be_obj_put(dir.exp->fs, &o);
		}
	}
	nfs4_obj_put(&dir);
}

uint32_t nfs4_open_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_open_args *a = args;
	struct nfs4_open_op_res *r = res;
	struct nfs4_obj dir, ob;
	struct be_obj o = BE_OBJ_INIT;
	uint64_t clientid;
	uint32_t status = nfs4_op_client(x, a->clientid, &clientid);

	memset(&dir, 0, sizeof(dir));
	dir.o = (struct be_obj)BE_OBJ_INIT;
	if (status != NFS4_OK)
		return status;
	if (x->minorversion == 0) {
		/* RFC 7530 §9.1.7: the owner's seqid; its done step is in the encode step. */
		enum nfs4_seqid_action act = nfs4_stab_seqid_check(&nfs4_srv(x)->stab, clientid, a->owner,
								   a->owner_len, a->seqid, &r->rp, &status);
		bool done;

		status = nfs4_seqid_verdict(act, &r->rp, &r->replay, status, &done);
		if (r->replay && status == NFS4_OK)
			open_replay_fh(x, a);
		if (done)
			return status;
		r->seqid_done = true;
		r->clientid = clientid, r->owner = a->owner, r->owner_len = a->owner_len, r->seqid = a->seqid;
	}
	/* RFC 8881 §8.4.2, RFC 7530 §9.6.2: in grace only reclaims (CLAIM_PREVIOUS), by clients of the previous run. */
	status = nfs4_grace_for(x, NFS4_GRACE_OPEN, clientid, a->claim == CLAIM_PREVIOUS);
	if (status == NFS4_OK)
		status = open_deleg(x, a->share_access, r);
	if (status == NFS4_OK && (a->share_access & NFS4_SHARE_ACCESS_BOTH) == 0)
		status = NFS4ERR_INVAL;
	/* A client at its bound (or the server's) is refused before a file is created:
	 * RFC 8881 §15.1.1.3 DELAY (4.0: RFC 7530 §13.1.1.4 RESOURCE), nothing changed. */
	if (status == NFS4_OK && a->opentype == OPEN4_CREATE)
		status = nfs4_bound_note(x, clientid, "open",
					 nfs4_stab_open_room(&nfs4_srv(x)->stab, clientid, x->minorversion));
	if (status == NFS4_OK)
		status = open_target(x, a, &dir, &ob, &o, r);
	if (status == NFS4_OK)
		status = open_state(x, a, clientid, &ob, &o, r);
	if ((a->claim == CLAIM_NULL || a->claim == CLAIM_DELEGATE_CUR) && be_obj_valid(&o))
		be_obj_put(dir.exp->fs, &o);
	nfs4_obj_put(&dir);
	return status;
}

/* open_read_delegation4 / open_write_delegation4 (RFC 8881 §18.16.2). */
static void open_enc_deleg(struct xdr_enc *e, const struct nfs4_open_op_res *r)
{
	nfs4_enc_stateid(e, &r->dsid);
	xdr_enc_bool(e, false); /* recall: only ever true for a reclaim, which gets none here */
	if (r->deleg == OPEN_DELEGATE_WRITE || r->deleg == OPEN_DELEGATE_WRITE_ATTRS_DELEG) {
		xdr_enc_u32(e, 1); /* nfs_space_limit4: NFS_LIMIT_SIZE, no limit (as knfsd) */
		xdr_enc_u64(e, UINT64_MAX);
	}
	/* permissions (nfsace4): knfsd's, an ACCESS_ALLOWED ACE with no flags, mask or who:
	 * the client asks ACCESS itself. */
	xdr_enc_u32(e, 0);
	xdr_enc_u32(e, 0);
	xdr_enc_u32(e, 0);
	xdr_enc_opaque(e, "", 0);
}

/* OPEN4resok (RFC 8881 §18.16.2); a 4.0 owner's reply becomes its cached one. */
void nfs4_open_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_open_op_res *r = res;
	uint8_t *start = e->p;

	(void)x;
	if (r->replay) {
		xdr_enc_fixed(e, r->rp.body, r->rp.len);
		return;
	}
	if (status == NFS4_OK) {
		nfs4_enc_stateid(e, &r->sid);
		nfs4_enc_cinfo(e, &r->cinfo);
		xdr_enc_u32(e, r->rflags);
		nfs4_enc_bitmap(e, &r->attrset);
		xdr_enc_u32(e, r->deleg);
		/* RFC 9754 §5.2: the *_ATTRS_DELEG arms carry the read / write bodies. */
		if (r->deleg == OPEN_DELEGATE_READ || r->deleg == OPEN_DELEGATE_WRITE ||
		    r->deleg == OPEN_DELEGATE_READ_ATTRS_DELEG || r->deleg == OPEN_DELEGATE_WRITE_ATTRS_DELEG)
			open_enc_deleg(e, r);
		if (r->deleg == OPEN_DELEGATE_NONE_EXT) {
			xdr_enc_u32(e, r->why);
			/* RFC 8881 §18.16.2 open_none_delegation4: ond_server_will_push_deleg,
			 * ond_server_will_signal_avail (neither: false). */
			if (r->why == WND4_CONTENTION || r->why == WND4_RESOURCE)
				xdr_enc_bool(e, false);
		}
	}
	if (r->seqid_done && !e->overflow)
		nfs4_stab_seqid_done(&nfs4_srv(x)->stab, r->clientid, r->owner, r->owner_len, r->seqid, status, start,
				     (uint32_t)(e->p - start));
}
