/*
 * nfs3_call.c - what every NFSv3 procedure does around its work:
 *
 *   nfs3_call_begin     take a reference on the served export table
 *   nfs3_call_open      unwrap the handle's envelope (MAC: BADHANDLE), find its
 *                       export (STALE if no longer served), admit the client to
 *                       it on every call (ACCES), map its credential through
 *                       the export's squashing, ask the backend for the object
 *   ... the procedure's backend calls, made with that credential ...
 *   nfs3_call_end       end the backend's per-thread state, drop the table
 *
 * Also the small helpers the procedures share: filename checks, handles of
 * new objects, attributes after a change, errno -> nfsstat3 (the room for
 * bulk reply data is every version's: nfs_bulk_buf(), nfs/common/io.c).
 */
#include <errno.h>
#include <string.h>

#include "nfs/v3/nfs3.h"
#include "core/log.h"

static struct log_limit nfs3_call_limit;

void nfs3_call_begin(struct nfs3_call *nc, struct rpc_call *c)
{
	memset(nc, 0, sizeof(*nc));
	nc->rpc = c;
	nc->tbl = nfs_exports_get();
}

uint32_t nfs3_call_export(struct nfs3_call *nc, const struct nfs_fh *fh, struct be_handle *bh)
{
	const struct nfs_export *e;
	uint32_t id;

	if (!nfs_fh_unwrap(fh, &id, bh)) {
		log_limited(&nfs3_call_limit, LOG_NOTICE, "nfs: %s: bad file handle (%u bytes)",
			    nc->rpc->conn->peer_name, fh->len);
		return NFS3ERR_BADHANDLE;
	}
	if (nc->exp) {
		/* RFC 1813 §3.3.14/§3.3.15: both handles in one file system, else XDEV */
		return id == nc->exp->id ? NFS3_OK : NFS3ERR_XDEV;
	}
	e = nfs_exports_by_id(nc->tbl, id);
	if (!e)
		return NFS3ERR_STALE; /* export removed (or never served by this table) */
	if (nfs_export_admit(e, nc->rpc, &nc->opts) != 0)
		return NFS3ERR_ACCES;
	nc->exp = e;
	nc->fs = e->fs;
	rpc_call_acct(nc->rpc, &e->st->acct); /* the export's calls and errors (export_stats.c) */
	nfs_cred_map(&nc->rpc->cred, nc->opts, &nc->cred);
	return NFS3_OK;
}

uint32_t nfs3_call_open(struct nfs3_call *nc, const struct nfs_fh *fh, struct be_obj *o, struct be_attr *attr)
{
	struct be_handle bh;
	uint32_t status = nfs3_call_export(nc, fh, &bh);

	if (status != NFS3_OK)
		return status;
	return nfs3_stat(be_open_handle(nc->fs, &bh, o, attr));
}

uint32_t nfs3_call_open_dir(struct nfs3_call *nc, const struct nfs_fh *fh, struct be_obj *o, struct be_attr *attr)
{
	uint32_t status = nfs3_call_open(nc, fh, o, attr);

	if (status == NFS3_OK && o->type != BE_DIR) {
		be_obj_put(nc->fs, o);
		return NFS3ERR_NOTDIR;
	}
	return status;
}

uint32_t nfs3_call_writable(const struct nfs3_call *nc)
{
	return nc->opts && nc->opts->rw ? NFS3_OK : NFS3ERR_ROFS;
}

void nfs3_call_commit_meta(struct nfs3_call *nc, const struct be_obj *o)
{
	/* failures are logged by the backend; the change itself was made */
	if (nc->opts && nc->opts->sync && be_obj_valid(o))
		(void)be_commit_meta(nc->fs, o);
}

void nfs3_call_getattr(struct nfs3_call *nc, const struct be_obj *o, struct be_attr *out)
{
	out->valid = 0;
	if (be_obj_valid(o) && be_getattr(nc->fs, o, out) != 0)
		out->valid = 0;
}

uint32_t nfs3_call_fh(struct nfs3_call *nc, const struct be_obj *o, struct nfs_fh *fh)
{
	struct be_handle bh;
	int err = be_handle(nc->fs, o, &bh);

	if (err)
		return nfs3_stat(err);
	if (!nfs_fh_wrap(fh, nc->exp->id, &bh, NFS3_FHSIZE)) {
		log_limited(&nfs3_call_limit, LOG_ERR, "nfs: %s: a %u-byte backend handle does not fit NFSv3's %u",
			    nc->exp->cfg->path, bh.len, NFS3_FHSIZE);
		return NFS3ERR_SERVERFAULT;
	}
	return NFS3_OK;
}

uint32_t nfs3_call_fsid(const struct nfs3_call *nc)
{
	return nc->exp ? nc->exp->id : 0;
}

void nfs3_call_put(struct nfs3_call *nc, struct be_obj *o)
{
	if (nc->fs)
		be_obj_put(nc->fs, o);
}

void nfs3_call_end(struct nfs3_call *nc)
{
	be_end_call(nc->fs);
	nfs_exports_put(nc->tbl);
	nc->tbl = NULL;
	nc->exp = NULL;
	nc->fs = NULL;
}

uint32_t nfs3_name_copy(const struct nfs3_name *n, char out[BE_NAME_MAX + 1])
{
	/* RFC 1813 §3.3.3: a name that is not a single component is refused; knfsd answers ACCES */
	if (n->len == 0)
		return NFS3ERR_ACCES;
	if (n->len > BE_NAME_MAX)
		return NFS3ERR_NAMETOOLONG;
	if (memchr(n->p, '/', n->len) || memchr(n->p, '\0', n->len))
		return NFS3ERR_ACCES;
	memcpy(out, n->p, n->len);
	out[n->len] = '\0';
	return NFS3_OK;
}

/* RFC 1813 §2.6: nfsstat3 is enum nfs_stat's numbering (nfs/common/errmap.c). */
uint32_t nfs_errno_to_nfsstat3(int err)
{
	return nfs_errno_to_stat(err);
}

uint32_t nfs3_stat(int err)
{
	return nfs_errno_to_nfsstat3(err);
}
