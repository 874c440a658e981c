/*
 * nfs4_call.c - what the NFSv4 operations share around the backend, for one
 * COMPOUND (struct nfs4_svc, the worker thread's, reached as ctx->priv):
 *
 *   nfs4_svc_begin / _end   the server whose state the COMPOUND acts on
 *                           (nfs4_server.h; nfs4_srv(x)); a reference on the
 *                           served export table for the whole COMPOUND; the
 *                           backends' per-thread state ended
 *   nfs4_svc_exports        this client's view of the exports (admission per
 *                           export, once per COMPOUND) for the pseudo file system
 *   nfs4_obj_open           a filehandle -> a pseudo directory (its path) or an
 *                           export's object (envelope MAC: BADHANDLE; export gone:
 *                           STALE; admission on every use; credential squashed)
 *   nfs4_fh_*               handles of pseudo directories and of backend objects
 *   nfs4_name_file_fh, _recall
 *                           a name's regular file's (or directory's) handle; the
 *                           delegations and layouts recalled when it loses the
 *                           name (one lookup)
 *   nfs4_obj_sec, nfs4_fh_sec_check
 *                           security flavors of an object (export: its sec=;
 *                           pseudo directory: the exports' beneath it) and the
 *                           put filehandle operations' WRONGSEC check
 *   nfs_errno_to_nfsstat4   the backend's errno -> nfsstat4
 *   nfs4_principal, _who    the caller as a client record's principal and host
 *   nfs4_grace_for          the grace period's verdict for a client's operation
 *
 * Pseudo directory handles are envelopes (nfs/common/fh.c) for export id
 * NFS4_PSEUDO_EXPORT_ID whose backend bytes are "PSEU" and the path's id,
 * so they carry the same MAC as every other handle.
 */
#include <errno.h>
#include <string.h>

#include "core/log.h"
#include "nfs/common/siphash.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/state/nfs4_deleg.h"
#include "rpc/rpc_gss_krb5.h"
#include "nfs/v4/recovery/nfs4_recovery.h"

static struct log_limit nfs4_call_limit;
static const uint8_t pseudo_magic[4] = { 'P', 'S', 'E', 'U' };

void nfs4_svc_begin(struct nfs4_svc *s, struct nfs4_server *srv, struct rpc_call *c)
{
	s->srv = srv;
	s->call = c;
	s->tbl = nfs_exports_get();
	s->last_fs = NULL;
	s->nexps = 0;
	s->exps_built = false;
	s->op_exp = NULL;
	s->seq_xprtsec = EXPORT_XPRTSEC_ALL;
}

void nfs4_svc_end(struct nfs4_svc *s)
{
	if (s->last_fs)
		be_end_call(s->last_fs);
	nfs_exports_put(s->tbl);
	s->tbl = NULL;
	s->last_fs = NULL;
}

/* The backend about to be used: the one used before ends its per-thread state. */
static void nfs4_svc_use(struct nfs4_svc *s, struct be_fs *fs)
{
	if (s->last_fs && s->last_fs != fs)
		be_end_call(s->last_fs);
	s->last_fs = fs;
}

/* An export's sec= for this client as a flavor list (in the admin's order). */
static void nfs4_sec_of(const struct export_opts *o, struct nfs4_sec_list *l)
{
	unsigned n = o ? (unsigned)__builtin_popcount(o->sec) : 1;

	l->n = (uint8_t)(n < NFS4_SEC_MAX ? n : NFS4_SEC_MAX);
	for (unsigned i = 0; i < l->n; i++)
		l->bit[i] = o ? o->sec_order[i] : 1; /* no call (tests): AUTH_SYS, the default */
}

const struct nfs4_pseudo_exp *nfs4_svc_exports(struct nfs4_svc *s, unsigned *n)
{
	const struct export_opts *opts;

	if (!s->exps_built && s->tbl) {
		unsigned m = s->tbl->n < NFS4_SVC_MAX_EXPORTS ? s->tbl->n : NFS4_SVC_MAX_EXPORTS;
		if (s->tbl->n > m)
			log_limited(&nfs4_call_limit, LOG_WARNING,
				    "nfs4: only the first %u of %u exports are in the pseudo file system", m, s->tbl->n);
		for (unsigned i = 0; i < m; i++) {
			s->exps[i].path = s->tbl->v[i].cfg->path;
			/* RFC 8881 §2.6.3.1.1: exports a client may not use stay out of its view
			 * (a flavor it lacks still shows them: SECINFO then tells it which). */
			opts = NULL;
			s->exps[i].admitted = !s->call || nfs_export_admit(&s->tbl->v[i], s->call, &opts) != EACCES;
			nfs4_sec_of(s->exps[i].admitted ? opts : NULL, &s->exps[i].sec);
		}
		s->nexps = m;
		s->exps_built = true;
	}
	*n = s->nexps;
	return s->exps;
}

uint32_t nfs4_fh_pseudo(const char *path, struct nfs_fh *fh)
{
	struct be_handle bh = { .len = 12 };
	uint64_t id = nfs4_pseudo_id(path);

	memcpy(bh.data, pseudo_magic, 4);
	memcpy(bh.data + 4, &id, 8);
	return nfs_fh_wrap(fh, NFS4_PSEUDO_EXPORT_ID, &bh, NFS4_FHSIZE) ? NFS4_OK : NFS4ERR_SERVERFAULT;
}

uint32_t nfs4_fh_obj(const struct nfs4_obj *ob, const struct be_obj *o, struct nfs_fh *fh)
{
	struct be_handle bh;
	int err = be_handle(ob->exp->fs, o, &bh);

	if (err)
		return nfs_errno_to_nfsstat4(err);
	return nfs_fh_wrap(fh, ob->exp->id, &bh, NFS4_FHSIZE) ? NFS4_OK : NFS4ERR_SERVERFAULT;
}

bool nfs4_name_file_fh(const struct nfs_export *exp, const struct be_cred *cr, const struct be_obj *dir, bool dirs,
		       const char *name, struct nfs_fh *fh)
{
	struct be_obj o = BE_OBJ_INIT;
	struct be_handle bh;
	struct be_attr attr;
	bool ok;

	if (be_lookup(exp->fs, cr, dir, name, &o, &attr) != 0)
		return false;
	ok = (attr.type == BE_REG || (dirs && attr.type == BE_DIR)) && be_handle(exp->fs, &o, &bh) == 0 &&
	     nfs_fh_wrap(fh, exp->id, &bh, NFS4_FHSIZE);
	be_obj_put(exp->fs, &o);
	return ok;
}

uint32_t nfs4_name_recall(const struct nfs_export *exp, const struct be_cred *cr, const struct be_obj *dir,
			  const char *name, uint64_t clientid, bool layouts)
{
	return nfs4_name_recall_by(exp, cr, dir, name, clientid, layouts, NFS4_DL_BY_NFS4);
}

uint32_t nfs4_name_recall_by(const struct nfs_export *exp, const struct be_cred *cr, const struct be_obj *dir,
			     const char *name, uint64_t clientid, bool layouts, enum nfs4_dl_cause cause)
{
	bool dl = nfs4_deleg_any(), lo = layouts && nfs4_pnfs_held();
	uint32_t status = NFS4_OK;
	struct nfs_fh fh;

	/* nothing delegated or laid out, or nothing there: the operation says so itself; one lookup for both.
	 * RFC 8881 §10.9: a delegated directory removed or renamed is recalled first too (as knfsd breaks
	 * the victim's delegation); it holds no layouts (LAYOUTGET wants an open file's stateid). */
	if ((!dl && !lo) || !nfs4_name_file_fh(exp, cr, dir, dl && nfs4_deleg_dir_any(), name, &fh))
		return NFS4_OK;
	if (dl) /* RFC 8881 §10.4.1: the delegations first; DELAY while one is out, nothing else done */
		status = nfs4_deleg_break_by(fh.data, fh.len, clientid, NFS4_DL_ACC_NS, cause);
	if (status == NFS4_OK && lo) /* §12.5.5: then other clients' layouts (never waits) */
		nfs4_pnfs_recall_file(fh.data, fh.len, clientid, NULL);
	return status;
}

/* Admission and credential for export e. */
static uint32_t nfs4_obj_admit(struct nfs4_svc *s, const struct nfs_export *e, struct nfs4_obj *ob)
{
	int err = s->call ? nfs_export_admit(e, s->call, &ob->opts) : 0;

	/* RFC 8881 §2.6.3.1.1: a flavor the export does not take is WRONGSEC,
	 * except for SECINFO and SECINFO_NO_NAME, which tell the client which it
	 * takes (§2.6.3.1.1.5: they MUST NOT return WRONGSEC). */
	if (err == EPERM && s->any_flavor)
		err = 0;
	if (err == EPERM)
		return NFS4ERR_WRONGSEC;
	if (err)
		return NFS4ERR_ACCESS;
	ob->exp = e;
	s->op_exp = e;
	if (s->call) {
		nfs_cred_map(&s->call->cred, ob->opts, &ob->cred);
		s->seq_xprtsec &= ob->opts->xprtsec; /* where the slot's cached reply may be replayed */
	}
	nfs4_svc_use(s, e->fs);
	return NFS4_OK;
}

uint32_t nfs4_obj_root(struct nfs4_svc *s, unsigned idx, struct nfs4_obj *ob)
{
	uint32_t status;

	memset(ob, 0, sizeof(*ob));
	ob->o = (struct be_obj)BE_OBJ_INIT;
	if (!s->tbl || idx >= s->tbl->n)
		return NFS4ERR_STALE;
	status = nfs4_obj_admit(s, &s->tbl->v[idx], ob);
	if (status != NFS4_OK)
		return status;
	ob->kind = NFS4_OBJ_EXPORT;
	return nfs_errno_to_nfsstat4(be_root(ob->exp->fs, &ob->o, &ob->attr));
}

static bool nfs4_fh_is_pseudo(uint32_t id, const struct be_handle *bh, uint64_t *pid)
{
	if (id != NFS4_PSEUDO_EXPORT_ID || bh->len != 12 || memcmp(bh->data, pseudo_magic, 4) != 0)
		return false;
	memcpy(pid, bh->data + 4, 8);
	return true;
}

uint32_t nfs4_obj_open(struct nfs4_svc *s, const struct nfs_fh *fh, struct nfs4_obj *ob)
{
	const struct nfs4_pseudo_exp *v;
	const struct nfs_export *e;
	struct be_handle bh;
	uint32_t id, status;
	uint64_t pid;
	unsigned n;

	memset(ob, 0, sizeof(*ob));
	ob->o = (struct be_obj)BE_OBJ_INIT;
	if (!nfs_fh_unwrap(fh, &id, &bh)) {
		log_limited(&nfs4_call_limit, LOG_NOTICE, "nfs4: %s: bad file handle (%u bytes)",
			    s->call && s->call->conn ? s->call->conn->peer_name : "-", fh->len);
		return NFS4ERR_BADHANDLE;
	}
	if (nfs4_fh_is_pseudo(id, &bh, &pid)) {
		v = nfs4_svc_exports(s, &n);
		if (!nfs4_pseudo_find(v, n, pid, s->path, sizeof(s->path)))
			return NFS4ERR_STALE; /* no longer above an export this client sees */
		ob->kind = NFS4_OBJ_PSEUDO;
		ob->path = s->path;
		return NFS4_OK;
	}
	e = s->tbl ? nfs_exports_by_id(s->tbl, id) : NULL;
	if (!e)
		return NFS4ERR_STALE;
	status = nfs4_obj_admit(s, e, ob);
	if (status != NFS4_OK)
		return status;
	ob->kind = NFS4_OBJ_EXPORT;
	return nfs_errno_to_nfsstat4(be_open_handle(e->fs, &bh, &ob->o, &ob->attr));
}

void nfs4_obj_sec(struct nfs4_svc *s, const struct nfs4_obj *ob, struct nfs4_sec_list *l)
{
	const struct nfs4_pseudo_exp *v;
	unsigned n;

	if (ob->kind == NFS4_OBJ_EXPORT) {
		nfs4_sec_of(ob->opts, l);
		return;
	}
	v = nfs4_svc_exports(s, &n);
	nfs4_pseudo_sec(v, n, ob->path, l);
}

uint32_t nfs4_fh_sec_check(struct nfs4_svc *s, const struct nfs_fh *fh)
{
	const struct nfs4_pseudo_exp *v;
	const struct export_opts *opts;
	const struct nfs_export *e;
	struct nfs4_sec_list l;
	struct be_handle bh;
	uint32_t id;
	uint64_t pid;
	unsigned n;

	/* A handle that is not ours or names nothing: the operation using it says so (BADHANDLE, STALE). */
	if (!s->call || !nfs_fh_unwrap(fh, &id, &bh))
		return NFS4_OK;
	if (nfs4_fh_is_pseudo(id, &bh, &pid)) {
		v = nfs4_svc_exports(s, &n);
		if (!nfs4_pseudo_find(v, n, pid, s->path, sizeof(s->path)))
			return NFS4_OK;
		/* RFC 8881 §2.6.3.1.1.3: the flavors of the exports beneath (none: nothing to guard). */
		nfs4_pseudo_sec(v, n, s->path, &l);
		if (l.n == 0 || nfs4_sec_has(&l, (unsigned)__builtin_ctz(nfs_call_sec(s->call))))
			return NFS4_OK;
		log_limited(&nfs4_call_limit, LOG_NOTICE, "nfs4: %s: no export beneath %s allows its flavor (WRONGSEC)",
			    s->call->conn ? s->call->conn->peer_name : "-", s->path);
		return NFS4ERR_WRONGSEC;
	}
	e = s->tbl ? nfs_exports_by_id(s->tbl, id) : NULL;
	/* RFC 8881 §2.6.3.1.1.7: the export's sec= (EACCES: the operation says ACCESS). */
	return e && nfs_export_admit(e, s->call, &opts) == EPERM ? NFS4ERR_WRONGSEC : NFS4_OK;
}

uint32_t nfs4_cur_sec_check(struct nfs4_ctx *x)
{
	return nfs4_fh_sec_check(x->priv, &x->cur.fh);
}

void nfs4_obj_put(struct nfs4_obj *ob)
{
	if (ob->exp)
		be_obj_put(ob->exp->fs, &ob->o);
}

/* Index of the export in the served table (for the pseudo file system's list). */
static unsigned nfs4_export_idx(const struct nfs4_svc *s, const struct nfs_export *e)
{
	return (unsigned)(e - s->tbl->v);
}

bool nfs4_obj_is_root(struct nfs4_svc *s, const struct nfs4_obj *ob)
{
	struct nfs4_obj root;
	bool same;

	if (ob->kind != NFS4_OBJ_EXPORT || ob->attr.type != BE_DIR)
		return false;
	if (nfs4_obj_root(s, nfs4_export_idx(s, ob->exp), &root) != NFS4_OK) {
		nfs4_obj_put(&root);
		return false;
	}
	same = root.attr.fileid == ob->attr.fileid && root.attr.fsid_major == ob->attr.fsid_major &&
	       root.attr.fsid_minor == ob->attr.fsid_minor;
	nfs4_obj_put(&root);
	return same;
}

/* RFC 8881 §7.7 pseudo directories: read-only, root's, with an id for a fileid
 * and a change attribute that moves when this client's view of the exports does. */
void nfs4_pseudo_attr(struct nfs4_svc *s, const char *path, struct be_attr *a)
{
	const struct nfs4_pseudo_exp *v;
	uint64_t change = 1;
	unsigned n;

	v = nfs4_svc_exports(s, &n);
	for (unsigned i = 0; i < n; i++)
		if (v[i].admitted)
			change = change * 31 + nfs4_pseudo_id(v[i].path);
	memset(a, 0, sizeof(*a));
	a->valid = BE_AT_BASIC;
	a->type = BE_DIR;
	a->mode = 0555;
	a->nlink = 2;
	a->size = 4096;
	a->fileid = nfs4_pseudo_id(path);
	a->change = change;
}

/* RFC 8881 §15.1: nfsstat4 keeps nfsstat3's numbers (enum nfs_stat) for every
 * error both name (JUKEBOX is NFS4ERR_DELAY); NFSv4 has no NODEV, REMOTE or NOT_SYNC. */
uint32_t nfs_errno_to_nfsstat4(int err)
{
	uint32_t s = nfs_errno_to_stat(err);

	switch (s) {
	case NFS_ST_NODEV:
		return NFS4ERR_NXIO;
	case NFS_ST_REMOTE:
		return NFS4ERR_SERVERFAULT;
	case NFS_ST_NOT_SYNC:
		return NFS4ERR_INVAL;
	default:
		return s;
	}
}

/*
 * RFC 8881 §2.4.3, §18.35.5; RFC 7530 §16.33.5: the principal that makes and
 * owns a client record. AUTH_SYS: its uid and gid (as knfsd's same_creds()
 * compares them). RPCSEC_GSS: the principal's name, not the uid it maps to
 * (knfsd compares cr_principal; two machine principals both mapped to nobody
 * are two principals), as SipHash under the server's secret key, so no
 * AUTH_SYS uid and gid can be chosen to equal it; a GSS principal without a
 * kept name is one principal of its own. AUTH_NONE: one principal of its own.
 */
uint64_t nfs4_principal(const struct nfs4_ctx *x)
{
	const char *name;

	if (!x->call)
		return 0;
	if (x->call->cred.flavor == RPC_AUTH_SYS)
		return (uint64_t)x->call->cred.uid << 32 | x->call->cred.gid;
	if (x->call->cred.flavor != RPC_AUTH_GSS)
		return UINT64_MAX;
	name = rpc_gss_call_principal(x->call);
	if (!name)
		return UINT64_MAX - 1;
	return siphash24(nfs4_srv(x)->princ_key, name, strlen(name)) & ~(uint64_t)1; /* even: not the two above */
}

/* The asker of a new client record: its principal and its host's address. */
void nfs4_who(const struct nfs4_ctx *x, struct nfs4_who *who)
{
	who->principal = nfs4_principal(x);
	nfs4_host_key(x->call && x->call->conn ? (const struct sockaddr *)&x->call->conn->peer : NULL, who->host);
}

/* nfs4_grace_check() for a client named by its clientid (its co_ownerid /
 * nfs_client_id4 is what the stable records know). */
uint32_t nfs4_grace_for(const struct nfs4_ctx *x, enum nfs4_grace_op op, uint64_t clientid, bool is_reclaim)
{
	struct nfs4_ctab *st = &nfs4_srv(x)->ctab;
	uint8_t owner[NFS4_OWNER_MAX];
	uint32_t len = 0;

	/* RFC 8881 §18.51.3: "If non-reclaim locking operations are done before
	 * the RECLAIM_COMPLETE, an NFS4ERR_GRACE error will be returned." */
	if (!is_reclaim && (op == NFS4_GRACE_OPEN || op == NFS4_GRACE_LOCK) && !nfs4_client_may_lock(st, clientid))
		return NFS4ERR_GRACE;
	if (!nfs4_client_owner(st, clientid, owner, &len))
		len = 0;
	return nfs4_grace_check(op, len ? owner : NULL, len, is_reclaim);
}
