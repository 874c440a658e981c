/*
 * nfs4_proc_dir.c - READDIR (RFC 8881 §18.23) over pseudo directories and
 * exports' directories. The result streams into the reply (NFS4_OPF_STREAM):
 * the cookie verifier, then entry4s {cookie, name, fattr4} while they fit
 * both the client's maxcount and the reply, then the eof flag. An entry that
 * does not fit is rolled back and the listing ends there (eof false); none
 * fitting is NFS4ERR_TOOSMALL. Pseudo directory entries take cookies 3, 4,
 * ... (1 and 2 are reserved, §18.23.3) and verifier 0; an export's come
 * from its backend. "." and ".." are never listed (§18.23.4).
 */
#include <string.h>

#include "nfs/v4/nfs4.h"

struct nfs4_rd {
	struct nfs4_ctx *x;
	const struct nfs4_readdir_args *a;
	const struct nfs4_obj *dir; /* the directory (EXPORT: its export gives fsid and handles) */
	struct xdr_enc *e;
	uint8_t *start;  /* READDIR4resok's first byte */
	uint32_t n;      /* entries taken */
	bool full;       /* an entry did not fit */
	uint64_t cookie; /* pseudo directories: the client's cookie */
	uint64_t next;   /* pseudo directories: the cookie of the next entry offered */
	struct nfs4_fs_facts facts; /* the directory's file system's (entries of an export) */
};

/* Encode one entry4; false (rolled back) if it does not fit. */
static bool nfs4_rd_entry(struct nfs4_rd *st, uint64_t cookie, const char *name, uint32_t len,
			  const struct nfs4_attr_src *src)
{
	struct xdr_enc *e = st->e;
	uint8_t *mark = e->p;

	xdr_enc_u32(e, 1); /* value follows */
	xdr_enc_u64(e, cookie);
	xdr_enc_opaque(e, name, len);
	nfs4_attr_encode(e, &st->a->req, src);
	/* RFC 8881 §18.23.3: maxcount bounds READDIR4resok, the final 8 bytes included. */
	if (e->overflow || (size_t)(e->p - st->start) + 8 > st->a->maxcount || e->end - e->p < 8) {
		e->p = mark;
		e->overflow = false;
		st->full = true;
		return false;
	}
	st->n++;
	return true;
}

/* A backend entry: attributes and handle as the backend gave them. */
static bool nfs4_rd_backend_fn(void *arg, const struct be_dirent *d)
{
	struct nfs4_rd *st = arg;
	struct be_attr a = { .valid = 0 };
	struct nfs4_attr_src src;
	struct nfs_fh fh;
	bool have_fh;

	if (d->attr)
		a = *d->attr;
	if (!(a.valid & BE_AT_FILEID)) {
		a.fileid = d->fileid;
		a.valid |= BE_AT_FILEID;
	}
	nfs4_attr_export_fsid(st->dir, &a);
	have_fh = d->handle && nfs_fh_wrap(&fh, st->dir->exp->id, d->handle, NFS4_FHSIZE);
	nfs4_attr_src_fill(st->x, &src, &a, have_fh ? &fh : NULL, a.fileid);
	src.facts = &st->facts;
	return nfs4_rd_entry(st, d->cookie, d->name, d->namelen, &src);
}

/* A pseudo directory's entry: a pseudo directory or an export's root. */
static bool nfs4_rd_pseudo_fn(void *arg, const char *name, uint32_t len, enum nfs4_pseudo_kind kind, unsigned idx)
{
	struct nfs4_rd *st = arg;
	struct nfs4_svc *s = st->x->priv;
	uint64_t cookie = st->next++;
	struct nfs4_obj root = { .exp = NULL, .o = BE_OBJ_INIT };
	struct nfs4_attr_src src;
	struct nfs4_fs_facts facts;
	struct nfs_fh fh;
	struct be_attr a;
	bool ok;

	if (cookie <= st->cookie)
		return true; /* before the client's cookie */
	nfs4_pseudo_lookup(s->exps, s->nexps, st->dir->path, name, len, s->path2, sizeof(s->path2), &kind, &idx);
	if (kind == NFS4_PSEUDO_EXPORT) {
		if (nfs4_obj_root(s, idx, &root) != NFS4_OK || nfs4_fh_obj(&root, &root.o, &fh) != NFS4_OK) {
			nfs4_obj_put(&root);
			return true; /* not reachable for this client now: left out */
		}
		a = root.attr;
		nfs4_attr_export_fsid(&root, &a);
		nfs4_attr_src_fill(st->x, &src, &a, &fh, nfs4_pseudo_id(s->path2));
		nfs4_fs_facts_of(&root, NULL, &facts);
	} else {
		nfs4_pseudo_attr(s, s->path2, &a);
		if (nfs4_fh_pseudo(s->path2, &fh) != NFS4_OK)
			return false;
		nfs4_attr_src_fill(st->x, &src, &a, &fh, a.fileid);
		nfs4_fs_facts_of(st->dir, NULL, &facts);
	}
	src.facts = &facts;
	ok = nfs4_rd_entry(st, cookie, name, len, &src);
	nfs4_obj_put(&root);
	return ok;
}

/* List dir into the reply; *verf the cookie verifier, *eof whether it ended. */
static uint32_t nfs4_rd_list(struct nfs4_rd *st, struct nfs4_obj *dir, uint64_t *verf, bool *eof)
{
	struct nfs4_svc *s = st->x->priv;
	uint64_t cverf;
	unsigned n;
	int err;

	if (dir->kind == NFS4_OBJ_PSEUDO) {
		nfs4_svc_exports(s, &n);
		/* RFC 8881 §18.23.3: cookies 1 and 2 are reserved; ours start at 3. */
		st->cookie = st->a->cookie;
		st->next = 3;
		nfs4_pseudo_children(s->exps, n, dir->path, nfs4_rd_pseudo_fn, st);
		*verf = 0;
		*eof = !st->full;
		return NFS4_OK;
	}
	memcpy(&cverf, st->a->verf, sizeof(cverf));
	/* A zero verifier with a cookie is taken as the current one (as knfsd: libnfs 4.0 sends 0 on every
	 * READDIR); another verifier must be the directory's. */
	err = be_readdir(dir->exp->fs, &dir->cred, &dir->o, st->a->cookie, cverf,
			 BE_READDIR_ATTRS | BE_READDIR_HANDLES | BE_READDIR_NO_DOTS | BE_READDIR_ZERO_VERF,
			 nfs4_rd_backend_fn, st, verf, eof);
	if (st->full)
		*eof = false;
	/* RFC 8881 §18.23.3: "If the server determines that the cookieverf is no longer valid for the
	 * directory, the error NFS4ERR_NOT_SAME should be returned"; a stale cookie is NFS4ERR_BAD_COOKIE
	 * (BE_EBADCOOKIE maps there). */
	if (err == BE_EBADCOOKIE && st->a->cookie != 0 && cverf != 0 && cverf != *verf)
		return NFS4ERR_NOT_SAME;
	return nfs_errno_to_nfsstat4(err);
}

uint32_t nfs4_readdir_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_readdir_args *a = args;
	struct nfs4_svc *s = x->priv;
	struct nfs4_rd st = { .x = x, .a = a, .e = x->enc };
	struct nfs4_obj dir;
	uint64_t verf = 0;
	bool eof = false;
	uint32_t status;

	(void)res;
	/* RFC 8881 §18.23.3: write-only attributes may not be asked for. */
	if (!nfs4_attr_req_ok(&a->req))
		return NFS4ERR_INVAL;
	status = nfs4_obj_open(s, &x->cur.fh, &dir);
	if (status == NFS4_OK && dir.kind == NFS4_OBJ_EXPORT && dir.attr.type != BE_DIR)
		status = NFS4ERR_NOTDIR;
	/* RFC 8881 §18.23.3: "cookie values of 1 and 2 are reserved" (never handed out: "." and ".." are
	 * not listed, pseudo entries start at 3), so a READDIR from one is NFS4ERR_BAD_COOKIE (pynfs RDDR10;
	 * no longer caught by the verifier since a zero one is taken). */
	if (status == NFS4_OK && (a->cookie == 1 || a->cookie == 2))
		status = NFS4ERR_BAD_COOKIE;
	if (status == NFS4_OK) {
		st.dir = &dir;
		nfs4_fs_facts_of(&dir, NULL, &st.facts);
		st.start = st.e->p;
		xdr_enc_u64(st.e, 0); /* the verifier, patched below */
		if (st.e->overflow) {
			/* No room at all: the engine answers RESOURCE / REP_TOO_BIG. */
			nfs4_obj_put(&dir);
			return NFS4_OK;
		}
		status = nfs4_rd_list(&st, &dir, &verf, &eof);
	}
	/* §18.23.3: not even one entry fits, or not even the empty reply (pynfs RDDR7: maxcount 0). */
	if (status == NFS4_OK && st.n == 0 && (st.full || (size_t)(st.e->p - st.start) + 8 > a->maxcount))
		status = NFS4ERR_TOOSMALL;
	if (status == NFS4_OK) {
		memcpy(st.start, &verf, sizeof(verf));
		xdr_enc_u32(st.e, 0); /* no more entries */
		xdr_enc_bool(st.e, eof);
	}
	nfs4_obj_put(&dir);
	return status;
}
