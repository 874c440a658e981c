/*
 * nfs3_proc_dir.c - name lookup and directory listing: LOOKUP (RFC 1813
 * §3.3.3), READDIR (§3.3.16), READDIRPLUS (§3.3.17).
 *
 * The backend resolves names (never following symlinks, never leaving the
 * export: ".." at the root is the root, and a directory no longer beneath
 * the root is stale) and hands out directory entries with its own cookies
 * and cookie verifier (backend/backend.h). READDIR and READDIRPLUS stream
 * the entries straight into the reply from the backend's callback, stopping
 * at the client's count/maxcount and dircount, so their execute step
 * encodes the whole reply.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "core/loop.h"
#include "nfs/v3/nfs3.h"

/* §3.3.3 */
enum rpc_proc_status nfs3_lookup_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_diropargs *a = args;
	struct nfs3_lookup_res *r = res;
	struct be_obj dir = BE_OBJ_INIT, o = BE_OBJ_INIT;
	char name[BE_NAME_MAX + 1];
	struct nfs3_call nc;

	/* RPC_RUN_INLINE_TRY: on the receiving thread while the backend may search
	 * without the caller's identity (EWOULDBLOCK); errors of the handle on a worker. */
	bool here = loop_is_loop_thread();
	int err = 0;

	nfs3_call_begin(&nc, c);
	/* NOTDIR: dir_attributes are the non-directory's own */
	r->status = nfs3_call_open_dir(&nc, &a->dir, &dir, &r->dir);
	if (r->status == NFS3_OK)
		r->status = nfs3_name_copy(&a->name, name);
	if (r->status == NFS3_OK)
		err = be_lookup(nc.fs, &nc.cred, &dir, name, &o, &r->obj);
	if (here && (r->status != NFS3_OK || err == EWOULDBLOCK)) {
		nfs3_call_put(&nc, &dir);
		nfs3_call_end(&nc);
		return RPC_PROC_WORKER;
	}
	if (r->status == NFS3_OK)
		r->status = nfs3_stat(err);
	if (r->status == NFS3_OK)
		r->status = nfs3_call_fh(&nc, &o, &r->fh);
	/* dir_attributes: those the directory was opened with (a lookup changes nothing in it) */
	r->fsid = nfs3_call_fsid(&nc);
	nfs3_call_put(&nc, &o);
	nfs3_call_put(&nc, &dir);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
}

void nfs3_lookup_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_lookup_res *r = res;

	nfs3_enc_status(c, r->status);
	if (r->status == NFS3_OK) {
		nfs3_enc_fh(&c->res, &r->fh);
		nfs3_enc_post_op_attr(&c->res, &r->obj, r->fsid);
	}
	nfs3_enc_post_op_attr(&c->res, &r->dir, r->fsid);
}

/* ---- READDIR / READDIRPLUS ---- */

/* READDIR3resok's head: status, dir_attributes (post_op_attr), cookieverf. */
static size_t nfs3_readdir_head_len(const struct be_attr *dattr)
{
	return 4 + (dattr->valid ? NFS3_POST_OP_ATTR_BYTES : 4u) + NFS3_COOKIEVERFSIZE;
}

struct nfs3_dirlist {
	struct nfs3_call *nc;
	struct xdr_enc *e;
	bool plus;
	size_t limit;             /* count/maxcount, clamped to the reply buffer */
	size_t used;              /* bytes of READDIR(PLUS)3res so far, counting the trailer */
	size_t dirlimit, dirused; /* READDIRPLUS dircount accounting */
	unsigned nentries;
};

/* The backend's callback: encodes one entry if it fits; false (stop) if it does not. */
static bool nfs3_dirlist_add(void *arg, const struct be_dirent *de)
{
	struct nfs3_dirlist *l = arg;
	struct nfs_fh fh;
	bool have_fh = false;
	size_t dirbytes, size;

	/* entry3 / entryplus3: value_follows, fileid, name, cookie (§3.3.16, §3.3.17) */
	dirbytes = 8 + 4 + XDR_ALIGN(de->namelen) + 8;
	size = 4 + dirbytes;
	if (l->plus) {
		have_fh = de->handle && nfs_fh_wrap(&fh, l->nc->exp->id, de->handle, NFS3_FHSIZE);
		size += 4 + (de->attr ? NFS3_FATTR_BYTES : 0);
		size += 4 + (have_fh ? 4 + XDR_ALIGN(fh.len) : 0);
	}
	if (l->used + size > l->limit || (l->nentries > 0 && l->dirused + dirbytes > l->dirlimit))
		return false;
	l->used += size;
	l->dirused += dirbytes;
	l->nentries++;
	xdr_enc_bool(l->e, true);
	xdr_enc_u64(l->e, de->fileid);
	xdr_enc_opaque(l->e, de->name, de->namelen);
	xdr_enc_u64(l->e, de->cookie); /* where the next entry starts */
	if (l->plus) {
		nfs3_enc_post_op_attr(l->e, de->attr, l->nc->exp->id);
		nfs3_enc_post_op_fh(l->e, have_fh ? &fh : NULL);
	}
	return true;
}

/* The reply's head, written once the verifier is known, into the room kept for it. */
static void nfs3_readdir_head(uint8_t *at, const struct be_attr *dattr, uint32_t fsid, uint64_t verf)
{
	struct xdr_enc h;

	xdr_enc_init(&h, at, nfs3_readdir_head_len(dattr));
	xdr_enc_u32(&h, NFS3_OK);
	nfs3_enc_post_op_attr(&h, dattr, fsid);
	xdr_enc_u64(&h, verf);
}

/* Lists from a->cookie into the reply after the head's room; returns nfsstat3. */
static uint32_t nfs3_readdir_fill(struct nfs3_call *nc, const struct nfs3_readdir_args *a, bool plus,
				  const struct be_obj *dir, const struct be_attr *dattr)
{
	struct rpc_call *c = nc->rpc;
	size_t room = (size_t)(c->res.end - c->res.p);
	struct nfs3_dirlist l = {
		.nc = nc, .e = &c->res, .plus = plus,
		.limit = a->maxcount < room ? a->maxcount : room,
		.used = nfs3_readdir_head_len(dattr) + 4 + 4, /* and the list's end marker and eof */
		.dirlimit = a->dircount,
	};
	unsigned flags = plus ? BE_READDIR_ATTRS | BE_READDIR_HANDLES : 0;
	uint64_t verf_in, verf = 0;
	bool eof = false;
	uint8_t *head;
	int err;

	if (l.used > l.limit || !(head = xdr_enc_reserve(&c->res, nfs3_readdir_head_len(dattr))))
		return NFS3ERR_TOOSMALL;
	memcpy(&verf_in, a->verf, 8);
	err = be_readdir(nc->fs, &nc->cred, dir, a->cookie, be64toh(verf_in), flags, nfs3_dirlist_add, &l, &verf, &eof);
	if (err)
		return nfs3_stat(err); /* BAD_COOKIE: §3.3.16, the cookie is no longer valid */
	/* §3.3.16: TOOSMALL when not even one entry fits */
	if (l.nentries == 0 && !eof)
		return NFS3ERR_TOOSMALL;
	nfs3_readdir_head(head, dattr, nc->exp->id, verf);
	xdr_enc_bool(&c->res, false); /* no more entries */
	xdr_enc_bool(&c->res, eof);
	return NFS3_OK;
}

static enum rpc_proc_status nfs3_readdir_common(struct rpc_call *c, const struct nfs3_readdir_args *a, bool plus)
{
	struct be_obj dir = BE_OBJ_INIT;
	struct be_attr dattr = { 0 };
	struct nfs3_call nc;
	struct xdr_enc mark = c->res;
	uint32_t status;

	nfs3_call_begin(&nc, c);
	status = nfs3_call_open_dir(&nc, &a->fh, &dir, &dattr); /* NOTDIR: the object's attributes */
	if (status == NFS3_OK)
		status = nfs3_readdir_fill(&nc, a, plus, &dir, &dattr);
	if (status != NFS3_OK) {
		c->res = mark; /* READDIR3resfail: status, dir_attributes */
		nfs3_enc_status(c, status);
		nfs3_enc_post_op_attr(&c->res, &dattr, nfs3_call_fsid(&nc));
	}
	nfs3_call_put(&nc, &dir);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
}

enum rpc_proc_status nfs3_readdir_exec(struct rpc_call *c, void *args, void *res)
{
	(void)res;
	return nfs3_readdir_common(c, args, false);
}

enum rpc_proc_status nfs3_readdirplus_exec(struct rpc_call *c, void *args, void *res)
{
	(void)res;
	return nfs3_readdir_common(c, args, true);
}
