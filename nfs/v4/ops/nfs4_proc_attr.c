/*
 * nfs4_proc_attr.c - GETATTR (RFC 8881 §18.7), ACCESS (§18.1) and READLINK
 * (§18.24) on pseudo directories and exports' objects, and the fattr4
 * inputs READDIR shares. Each export shows as its own file system: its fsid
 * is (export id, 0), the pseudo file system's (0, 0), and an export root's
 * mounted_on_fileid is the fileid the pseudo file system gives that path
 * (RFC 8881 §5.8.2.23), so a client sees a mount point there as with knfsd.
 */
#include <string.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/xdr/nfs4_layout_xdr.h"

bool nfs4_attr_req_ok(const struct nfs4_bitmap *req)
{
	return !nfs4_bitmap_isset(req, FATTR4_TIME_ACCESS_SET) && !nfs4_bitmap_isset(req, FATTR4_TIME_MODIFY_SET);
}

void nfs4_attr_export_fsid(const struct nfs4_obj *ob, struct be_attr *a)
{
	a->fsid_major = ob->kind == NFS4_OBJ_EXPORT ? ob->exp->id : 0;
	a->fsid_minor = 0;
}

void nfs4_attr_src_fill(const struct nfs4_ctx *x, struct nfs4_attr_src *src, const struct be_attr *a,
			const struct nfs_fh *fh, uint64_t mounted_on_fileid)
{
	*src = (struct nfs4_attr_src){
		.a = a, .fh = fh, .mounted_on_fileid = mounted_on_fileid, .minorversion = x->minorversion,
		.lease_time = nfs4_srv(x)->lease, .maxwrite = NFS4_MAX_IO,
		/* RFC 8881 §5.8.2.20; under krb5i/krb5p what one (inline) reply carries */
		.maxread = x->call ? rpc_wrapped_read_max(x->call, NFS4_MAX_IO) : NFS4_MAX_IO,
		.maxfilesize = INT64_MAX, .rdattr_error = NFS4_OK, .settable = true,
	};
}

void nfs4_fs_facts_of(const struct nfs4_obj *ob, const struct be_statfs *sf, struct nfs4_fs_facts *f)
{
	/* RFC 7862 §12.2.3: nothing is promised of the pseudo file system's change attribute. */
	*f = (struct nfs4_fs_facts){ .change_type = NFS4_CHANGE_TYPE_IS_UNDEFINED };
	if (ob->kind != NFS4_OBJ_EXPORT)
		return;
	f->xattr_support = ob->exp->fs->ops->getxattr != NULL; /* RFC 8276 §8.1 */
	/* The local backend's change attribute is the ctime in nanoseconds (local_meta.c). */
	if (!strcmp(ob->exp->fs->driver, "local"))
		f->change_type = NFS4_CHANGE_TYPE_IS_TIME_METADATA;
	/* RFC 7862 §12.2.1: the alignment CLONE ranges need, where there is CLONE. */
	if (sf && ob->exp->fs->ops->clone)
		f->clone_blksize = sf->block_size;
	/* RFC 8881 §5.12.1, §5.12.4: the layouts offered (nfs4_proc_layout.c), in units of our I/O size */
	if (ob->exp->cfg->pnfs == EXPORT_PNFS_FLEXFILES && nfs4_pnfs_mds()) {
		f->layout_type = LAYOUT4_FLEX_FILES;
		f->layout_blksize = NFS4_MAX_IO;
	}
}

static bool nfs4_wants_statfs(const struct nfs4_bitmap *req)
{
	static const uint8_t fs_attrs[] = { FATTR4_FILES_AVAIL, FATTR4_FILES_FREE, FATTR4_FILES_TOTAL,
					    FATTR4_SPACE_AVAIL, FATTR4_SPACE_FREE, FATTR4_SPACE_TOTAL,
					    FATTR4_CLONE_BLKSIZE };

	for (size_t i = 0; i < sizeof(fs_attrs); i++)
		if (nfs4_bitmap_isset(req, fs_attrs[i]))
			return true;
	return false;
}

uint32_t nfs4_getattr_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_getattr_args *a = args;
	struct nfs4_getattr_res *r = res;
	struct nfs4_svc *s = x->priv;
	struct nfs4_obj ob;
	uint32_t status;

	/* RFC 8881 §18.7.3: asking for a write-only attribute is NFS4ERR_INVAL. */
	if (!nfs4_attr_req_ok(&a->req))
		return NFS4ERR_INVAL;
	status = nfs4_obj_open(s, &x->cur.fh, &ob);
	if (status == NFS4_OK) {
		r->req = a->req;
		r->fh = x->cur.fh;
		if (ob.kind == NFS4_OBJ_PSEUDO) {
			nfs4_pseudo_attr(s, ob.path, &r->attr);
			r->mounted_on_fileid = r->attr.fileid;
		} else {
			r->attr = ob.attr;
			r->mounted_on_fileid = ob.attr.fileid;
			if (nfs4_bitmap_isset(&a->req, FATTR4_MOUNTED_ON_FILEID) && nfs4_obj_is_root(s, &ob))
				r->mounted_on_fileid = nfs4_pseudo_id(ob.exp->cfg->path);
			/* df: space_* and files_* come from the backend's statfs, asked only when wanted. */
			r->has_sf = nfs4_wants_statfs(&a->req) &&
				    be_statfs(ob.exp->fs, &ob.cred, &ob.o, &r->sf) == 0;
			/* RFC 8881 §10.4.3: another client's write delegation: its holder's size and
			 * change; RFC 9754 §5: and its times, when they are delegated. Not for 4.0: its
			 * GETATTR names no client (no session), so the holder's own could not be told
			 * from another's, and a CB_GETATTR to the holder about its own GETATTR stalls a
			 * Linux 4.0 client's OPEN (its GETATTR waits on a recall it cannot answer while
			 * the OPEN holds the open owner): the server's attributes, as before CB_GETATTR. */
			if (ob.attr.type == BE_REG && x->minorversion >= 1 && nfs4_deleg_any() &&
			    (nfs4_bitmap_isset(&a->req, FATTR4_CHANGE) || nfs4_bitmap_isset(&a->req, FATTR4_SIZE) ||
			     nfs4_bitmap_isset(&a->req, FATTR4_TIME_ACCESS) ||
			     nfs4_bitmap_isset(&a->req, FATTR4_TIME_MODIFY)))
				status = nfs4_deleg_getattr(x->cur.fh.data, x->cur.fh.len, nfs4_deleg_caller(x),
							    NFS4_DL_BY_NFS4, &r->attr);
		}
		nfs4_fs_facts_of(&ob, r->has_sf ? &r->sf : NULL, &r->facts);
		nfs4_attr_export_fsid(&ob, &r->attr);
	}
	nfs4_obj_put(&ob);
	return status;
}

void nfs4_getattr_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_getattr_res *r = res;
	struct nfs4_attr_src src;

	(void)status;
	nfs4_attr_src_fill(x, &src, &r->attr, &r->fh, r->mounted_on_fileid);
	if (r->has_sf)
		src.sf = &r->sf;
	src.facts = &r->facts;
	nfs4_attr_encode(e, &r->req, &src);
}

#define NFS4_ACCESS_ALL                                                                                  \
	(BE_ACCESS_READ | BE_ACCESS_LOOKUP | BE_ACCESS_MODIFY | BE_ACCESS_EXTEND | BE_ACCESS_DELETE |   \
	 BE_ACCESS_EXECUTE)
#define NFS4_ACCESS_WRITES (BE_ACCESS_MODIFY | BE_ACCESS_EXTEND | BE_ACCESS_DELETE)

#define NFS4_ACCESS_XATTR (ACCESS4_XAREAD | ACCESS4_XAWRITE | ACCESS4_XALIST)

/* RFC 8276 §8.4.1 (4.2): reading and listing xattrs go with reading the object,
 * writing them with modifying it (as knfsd: MAY_READ, MAY_WRITE). */
static uint32_t access_xattr_want(uint32_t xa)
{
	return (xa & (ACCESS4_XAREAD | ACCESS4_XALIST) ? BE_ACCESS_READ : 0) | (xa & ACCESS4_XAWRITE ? BE_ACCESS_MODIFY : 0);
}

static uint32_t access_xattr_granted(uint32_t xa, uint32_t granted)
{
	return (granted & BE_ACCESS_READ ? xa & (ACCESS4_XAREAD | ACCESS4_XALIST) : 0) |
	       (granted & BE_ACCESS_MODIFY ? xa & ACCESS4_XAWRITE : 0);
}

/* RFC 8881 §18.1.3: supported = the bits asked that mean something for the
 * object ("ACCESS4_LOOKUP ... no meaning for non-directory objects",
 * ACCESS4_DELETE an entry of a directory, "ACCESS4_EXECUTE ... no meaning for
 * a directory"; as knfsd judges them); access = those granted. Pseudo
 * directories may be read and searched only; a read-only export grants no
 * modification. The xattr bits (4.2) are judged for every object. */
uint32_t nfs4_access_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_access_args *a = args;
	struct nfs4_access_res *r = res;
	struct nfs4_svc *s = x->priv;
	uint32_t want = a->access & NFS4_ACCESS_ALL, granted = 0;
	uint32_t xa = x->minorversion >= 2 ? a->access & NFS4_ACCESS_XATTR : 0;
	struct nfs4_obj ob;
	uint32_t status;

	status = nfs4_obj_open(s, &x->cur.fh, &ob);
	if (status == NFS4_OK && ob.kind == NFS4_OBJ_PSEUDO) {
		granted = want & (BE_ACCESS_READ | BE_ACCESS_LOOKUP);
	} else if (status == NFS4_OK) {
		status = nfs_errno_to_nfsstat4(
			be_access(ob.exp->fs, &ob.cred, &ob.o, want | access_xattr_want(xa), &granted));
		if (!ob.opts || !ob.opts->rw)
			granted &= ~NFS4_ACCESS_WRITES;
		if (ob.exp->fs->ops->getxattr)
			granted = (granted & want) | access_xattr_granted(xa, granted);
	}
	if (status == NFS4_OK)
		want &= ob.kind == NFS4_OBJ_PSEUDO || ob.o.type == BE_DIR ? ~(uint32_t)BE_ACCESS_EXECUTE
									   : ~(uint32_t)(BE_ACCESS_LOOKUP | BE_ACCESS_DELETE);
	r->supported = want | xa;
	r->access = granted & (want | xa);
	nfs4_obj_put(&ob);
	return status;
}

void nfs4_access_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_access_res *r = res;

	(void)x, (void)status;
	nfs4_enc_access(e, r->supported, r->access);
}

/* RFC 8881 §18.24.3: only a symlink has contents (else NFS4ERR_INVAL). The
 * path goes where RFC 8267 §4.1 lets it (a Write chunk) through rpc_enc_ddp(). */
uint32_t nfs4_readlink_exec(struct nfs4_ctx *x, void *args, void *res)
{
	struct nfs4_readlink_res *r = res;
	struct nfs4_svc *s = x->priv;
	struct nfs4_obj ob;
	uint32_t status;
	char *buf = x->call ? rpc_payload_buf(x->call, NFS4_LINK_MAX) : NULL;
	size_t len = 0;

	(void)args;
	if (!buf)
		buf = s->link;
	status = nfs4_obj_open(s, &x->cur.fh, &ob);
	if (status == NFS4_OK && (ob.kind != NFS4_OBJ_EXPORT || ob.attr.type != BE_LNK))
		status = NFS4ERR_INVAL;
	if (status == NFS4_OK)
		status = nfs_errno_to_nfsstat4(be_readlink(ob.exp->fs, &ob.cred, &ob.o, buf, NFS4_LINK_MAX, &len));
	r->data = (const uint8_t *)buf;
	r->len = (uint32_t)len;
	nfs4_obj_put(&ob);
	return status;
}

void nfs4_readlink_enc(struct nfs4_ctx *x, struct xdr_enc *e, uint32_t status, const void *res)
{
	const struct nfs4_readlink_res *r = res;

	(void)status;
	if (x->call && e == &x->call->res)
		rpc_enc_ddp(x->call, r->data, r->len);
	else
		xdr_enc_opaque(e, r->data, r->len);
}
