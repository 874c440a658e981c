/*
 * nfs4_proc_ns.c - the namespace operations over the pseudo file system and
 * the exports' backends: PUTROOTFH (RFC 8881 §18.21), LOOKUP (§18.13),
 * LOOKUPP (§18.14), SECINFO (§18.29) and SECINFO_NO_NAME (§18.45).
 *
 * A pseudo directory's children are pseudo directories or export roots
 * (nfs4_pseudo.c); inside an export, names go to the backend, which does
 * not enter file systems mounted below the export. LOOKUPP from an export's
 * root climbs back into the pseudo file system.
 *
 * Security flavors (RFC 8881 §2.6.3.1.1): PUTROOTFH puts the root under any
 * flavor (the engine checks it when the next operation needs it,
 * nfs4_putfh_checks_sec()); LOOKUP and LOOKUPP check what they reach, not the
 * directory they start from (§2.6.3.1.1.3-4), so a client may walk from the
 * pseudo file system into an export of another flavor; SECINFO and
 * SECINFO_NO_NAME answer under any flavor (§2.6.3.1.1.5).
 */
#include <string.h>

#include "nfs/v4/nfs4.h"

/* Make the current filehandle name the pseudo directory path, or export idx's root. */
static uint32_t nfs4_cur_set_ns(struct nfs4_ctx *x, const char *path, enum nfs4_pseudo_kind kind, unsigned idx)
{
	struct nfs4_svc *s = x->priv;
	struct nfs4_obj root;
	uint32_t status;

	if (kind == NFS4_PSEUDO_DIR)
		status = nfs4_fh_pseudo(path, &x->cur.fh);
	else if (kind == NFS4_PSEUDO_EXPORT) {
		status = nfs4_obj_root(s, idx, &root);
		if (status == NFS4_OK)
			status = nfs4_fh_obj(&root, &root.o, &x->cur.fh);
		nfs4_obj_put(&root);
	} else
		status = NFS4ERR_NOENT;
	if (status == NFS4_OK)
		x->cur.set = true;
	return status;
}

/* RFC 8881 §18.21.3: the root of the server's namespace ("/": a pseudo
 * directory, or the export that sits there). */
uint32_t nfs4_putrootfh_exec(struct nfs4_ctx *x, void *args, void *res)
{
	struct nfs4_svc *s = x->priv;
	const struct nfs4_pseudo_exp *v;
	unsigned n, idx = 0;

	bool any = s->any_flavor;
	uint32_t status;

	(void)args, (void)res;
	nfs4_cur_stateid_clear(x);
	v = nfs4_svc_exports(s, &n);
	s->any_flavor = true; /* RFC 8881 §2.6.3.1.1: the engine checks it if what follows uses it */
	status = nfs4_cur_set_ns(x, "/", nfs4_pseudo_classify(v, n, "/", &idx), idx);
	s->any_flavor = any;
	return status;
}

/* RFC 8881 §2.6.3.1.1.3-4: LOOKUP's and LOOKUPP's result, not their directory, must take the call's
 * flavor (unless SECINFO runs them: any was set). */
static uint32_t nfs4_ns_sec_done(struct nfs4_ctx *x, bool any, uint32_t status)
{
	struct nfs4_svc *s = x->priv;

	s->any_flavor = any;
	return status == NFS4_OK && !any ? nfs4_cur_sec_check(x) : status;
}

/* An export's directory: name in it through the backend. */
static uint32_t nfs4_lookup_backend(struct nfs4_ctx *x, struct nfs4_obj *dir, const struct nfs4_name *nm)
{
	char name[NFS4_NAME_MAX + 1];
	struct be_obj child = BE_OBJ_INIT;
	struct be_attr attr;
	uint32_t status;

	/* RFC 8881 §18.13.3: a symlink is NFS4ERR_SYMLINK, another non-directory NOTDIR. */
	if (dir->attr.type == BE_LNK)
		return NFS4ERR_SYMLINK;
	if (dir->attr.type != BE_DIR)
		return NFS4ERR_NOTDIR;
	memcpy(name, nm->s, nm->len);
	name[nm->len] = '\0';
	status = nfs_errno_to_nfsstat4(be_lookup(dir->exp->fs, &dir->cred, &dir->o, name, &child, &attr));
	if (status == NFS4_OK)
		status = nfs4_fh_obj(dir, &child, &x->cur.fh);
	be_obj_put(dir->exp->fs, &child);
	return status;
}

uint32_t nfs4_lookup_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_name_args *a = args;
	struct nfs4_svc *s = x->priv;
	const struct nfs4_pseudo_exp *v;
	enum nfs4_pseudo_kind kind;
	struct nfs4_obj dir;
	unsigned n, idx = 0;
	uint32_t status;

	bool any = s->any_flavor;

	(void)res;
	status = nfs4_name_check(&a->name);
	if (status != NFS4_OK)
		return status;
	s->any_flavor = true;
	status = nfs4_obj_open(s, &x->cur.fh, &dir);
	if (status == NFS4_OK && dir.kind == NFS4_OBJ_PSEUDO) {
		v = nfs4_svc_exports(s, &n);
		status = nfs4_pseudo_lookup(v, n, dir.path, (const char *)a->name.s, a->name.len, s->path2,
					    sizeof(s->path2), &kind, &idx);
		if (status == NFS4_OK)
			status = nfs4_cur_set_ns(x, s->path2, kind, idx);
	} else if (status == NFS4_OK) {
		status = nfs4_lookup_backend(x, &dir, &a->name);
	}
	nfs4_obj_put(&dir);
	return nfs4_ns_sec_done(x, any, status);
}

/* The parent of an export's root: back in the pseudo file system. */
static uint32_t nfs4_lookupp_root(struct nfs4_ctx *x, const struct nfs4_obj *ob)
{
	struct nfs4_svc *s = x->priv;
	const struct nfs4_pseudo_exp *v;
	unsigned n, idx = 0;

	/* RFC 8881 §18.14.3: the root of the namespace has no parent: NOENT. */
	if (strcmp(ob->exp->cfg->path, "/") == 0)
		return NFS4ERR_NOENT;
	nfs4_pseudo_parent(ob->exp->cfg->path, s->path2, sizeof(s->path2));
	v = nfs4_svc_exports(s, &n);
	return nfs4_cur_set_ns(x, s->path2, nfs4_pseudo_classify(v, n, s->path2, &idx), idx);
}

uint32_t nfs4_lookupp_exec(struct nfs4_ctx *x, void *args, void *res)
{
	struct nfs4_svc *s = x->priv;
	const struct nfs4_pseudo_exp *v;
	struct nfs4_obj ob;
	unsigned n, idx = 0;
	uint32_t status;
	bool any = s->any_flavor;

	(void)args, (void)res;
	s->any_flavor = true;
	status = nfs4_obj_open(s, &x->cur.fh, &ob);
	if (status != NFS4_OK) {
		/* nothing held */
	} else if (ob.kind == NFS4_OBJ_PSEUDO) {
		if (strcmp(ob.path, "/") == 0) {
			status = NFS4ERR_NOENT; /* RFC 8881 §18.14.3 */
		} else {
			nfs4_pseudo_parent(ob.path, s->path2, sizeof(s->path2));
			v = nfs4_svc_exports(s, &n);
			status = nfs4_cur_set_ns(x, s->path2, nfs4_pseudo_classify(v, n, s->path2, &idx), idx);
		}
	} else if (ob.attr.type != BE_DIR) {
		status = ob.attr.type == BE_LNK ? NFS4ERR_SYMLINK : NFS4ERR_NOTDIR; /* §18.14.3 */
	} else if (nfs4_obj_is_root(s, &ob)) {
		status = nfs4_lookupp_root(x, &ob);
	} else {
		static const struct nfs4_name dotdot = { (const uint8_t *)"..", 2 };
		status = nfs4_lookup_backend(x, &ob, &dotdot);
	}
	nfs4_obj_put(&ob);
	return nfs4_ns_sec_done(x, any, status);
}

/* RFC 8881 §18.29.3 / §18.45.3: in NFSv4.1 and later SECINFO and
 * SECINFO_NO_NAME consume the current filehandle (RFC 7530 §16.31 keeps it). */
static void nfs4_secinfo_done(struct nfs4_ctx *x)
{
	if (x->minorversion >= 1)
		x->cur.set = false;
}

uint32_t nfs4_secinfo_exec(struct nfs4_ctx *x, void *args, void *res)
{
	struct nfs4_svc *s = x->priv;
	struct nfs4_obj target;
	struct nfs_fh keep = x->cur.fh;
	uint32_t status;

	/* Look the name up as LOOKUP does, then answer for what it names, under
	 * any flavor (RFC 8881 §2.6.3.1.1.5: SECINFO MUST NOT return WRONGSEC). */
	s->any_flavor = true;
	status = nfs4_lookup_exec(x, args, NULL);
	if (status == NFS4_OK) {
		status = nfs4_obj_open(s, &x->cur.fh, &target);
		if (status == NFS4_OK)
			nfs4_obj_sec(s, &target, &((struct nfs4_secinfo_res *)res)->sec);
		nfs4_obj_put(&target);
	}
	s->any_flavor = false;
	x->cur.fh = keep;
	if (status == NFS4_OK)
		nfs4_secinfo_done(x);
	return status;
}

uint32_t nfs4_secinfo_nn_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_secinfo_nn_args *a = args;
	struct nfs4_svc *s = x->priv;
	struct nfs4_obj ob;
	struct nfs_fh keep = x->cur.fh;
	uint32_t status = NFS4_OK;

	/* SECINFO_STYLE4_PARENT: the parent's flavors (LOOKUPP's rules, §18.45.3);
	 * under any flavor (§2.6.3.1.1.5, as SECINFO). */
	s->any_flavor = true;
	if (a->style == SECINFO_STYLE4_PARENT)
		status = nfs4_lookupp_exec(x, NULL, NULL);
	if (status == NFS4_OK) {
		status = nfs4_obj_open(s, &x->cur.fh, &ob);
		if (status == NFS4_OK)
			nfs4_obj_sec(s, &ob, &((struct nfs4_secinfo_res *)res)->sec);
		nfs4_obj_put(&ob);
	}
	s->any_flavor = false;
	x->cur.fh = keep;
	if (status == NFS4_OK)
		nfs4_secinfo_done(x);
	return status;
}

void nfs4_secinfo_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_secinfo_res *r = res;

	(void)x, (void)status;
	nfs4_enc_secinfo(e, r->sec.bit, r->sec.n);
}
