/*
 * nfs3_call.c - what every NFSv3 procedure does around its work:
 *
 *   nfs3_call_begin     take a reference on the served export table
 *   nfs3_call_open      verify the handle's MAC (BADHANDLE), find its export
 *                       (STALE if no longer served), admit the client to it on
 *                       every call (ACCES), open the object by handle as root
 *   nfs3_call_as_caller switch the worker to the caller's (squashed) identity
 *   ... the procedure's system calls, checked by the kernel as that user ...
 *   nfs3_call_end       back to root, drop the table reference
 *
 * Also the small helpers the procedures share: filename checks, permission
 * checks for cached fds, /proc/self/fd paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nfs/nfs_priv.h"
#include "core/log.h"

static struct log_limit nfs3_call_limit;

void nfs3_call_begin(struct nfs3_call *nc, struct rpc_call *c)
{
	memset(nc, 0, sizeof(*nc));
	nc->rpc = c;
	nc->tbl = nfs_exports_get();
}

uint32_t nfs3_call_export(struct nfs3_call *nc, const struct nfs_fh *fh, struct nfs_fh_parts *p)
{
	const struct nfs_export *e;
	uint32_t status = nfs_fh_verify(fh, p);

	if (status != NFS3_OK) {
		log_limited(&nfs3_call_limit, LOG_NOTICE, "nfs: %s: bad file handle (%u bytes)",
			    nc->rpc->conn->peer_name, fh->len);
		return status;
	}
	if (nc->exp) {
		/* RFC 1813 §3.3.14/§3.3.15: both handles in one file system, else XDEV */
		return p->export_id == nc->exp->id ? NFS3_OK : NFS3ERR_XDEV;
	}
	e = nfs_exports_by_id(nc->tbl, p->export_id);
	if (!e)
		return NFS3ERR_STALE; /* export removed (or never served by this table) */
	if (nfs_export_admit(e, nc->rpc, &nc->opts) != 0)
		return NFS3ERR_ACCES;
	nc->exp = e;
	nfs_identity_map(&nc->rpc->cred, nc->opts, &nc->id);
	return NFS3_OK;
}

uint32_t nfs3_call_open(struct nfs3_call *nc, const struct nfs_fh *fh, int *fd, struct stat *st)
{
	struct nfs_fh_parts p;
	uint32_t status = nfs3_call_export(nc, fh, &p);

	if (status != NFS3_OK)
		return status;
	return nfs_fh_open(nc->exp->root_fd, &p, O_PATH, fd, st);
}

uint32_t nfs3_call_open_dir(struct nfs3_call *nc, const struct nfs_fh *fh, int *fd, struct stat *st)
{
	uint32_t status = nfs3_call_open(nc, fh, fd, st);

	if (status == NFS3_OK && !S_ISDIR(st->st_mode)) {
		close(*fd);
		*fd = -1;
		return NFS3ERR_NOTDIR;
	}
	return status;
}

uint32_t nfs3_call_as_caller(struct nfs3_call *nc)
{
	if (!nc->exp)
		return NFS3ERR_SERVERFAULT;
	if (nfs_identity_apply(&nc->id) < 0)
		return NFS3ERR_SERVERFAULT;
	nc->as_caller = true;
	return NFS3_OK;
}

uint32_t nfs3_call_writable(const struct nfs3_call *nc)
{
	return nc->opts && nc->opts->rw ? NFS3_OK : NFS3ERR_ROFS;
}

void nfs3_call_commit_metadata(struct nfs3_call *nc, int fd)
{
	char path[32];
	struct stat st;
	int wfd;

	/* exports(5) "async": metadata is not forced to disk (knfsd likewise) */
	if (fd < 0 || !nc->opts || !nc->opts->sync)
		return;
	if (fstat(fd, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
		return; /* nothing to fsync through (the parent's fsync covers journaled file systems) */
	if (nc->as_caller) { /* done as the caller: open the object for fsync as root */
		nfs_identity_restore();
		nc->as_caller = false;
	}
	nfs_fd_path(fd, path);
	wfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (wfd < 0)
		return;
	if (fsync(wfd) < 0)
		log_limited(&nfs3_call_limit, LOG_WARNING, "nfs: fsync for metadata: %s", strerror(errno));
	close(wfd);
}

void nfs3_call_end(struct nfs3_call *nc)
{
	if (nc->as_caller)
		nfs_identity_restore();
	nc->as_caller = false;
	nfs_exports_put(nc->tbl);
	nc->tbl = NULL;
	nc->exp = NULL;
}

uint32_t nfs3_name_copy(const struct nfs3_name *n, char out[NAME_MAX + 1])
{
	/* RFC 1813 §3.3.3: a name that is not a single component is refused; knfsd answers ACCES */
	if (n->len == 0)
		return NFS3ERR_ACCES;
	if (n->len > NAME_MAX)
		return NFS3ERR_NAMETOOLONG;
	if (memchr(n->p, '/', n->len) || memchr(n->p, '\0', n->len))
		return NFS3ERR_ACCES;
	memcpy(out, n->p, n->len);
	out[n->len] = '\0';
	return NFS3_OK;
}

bool nfs3_may(const struct nfs3_call *nc, int fd, const struct stat *st, int mode)
{
	const int flags = AT_EACCESS | AT_EMPTY_PATH; /* checked as the thread's fsuid/fsgid */

	/* knfsd NFSD_MAY_OWNER_OVERRIDE: the owner may read/write its file whatever the mode
	 * (a file created 0444 must still take the creator's WRITEs, as a local open fd does). */
	if (!(mode & X_OK) && S_ISREG(st->st_mode) && st->st_uid == nc->id.uid)
		return true;
	if (faccessat(fd, "", mode, flags) == 0)
		return true;
	/* knfsd NFSD_MAY_READ_IF_EXEC: an executable file may be read (to page it in) */
	return mode == R_OK && S_ISREG(st->st_mode) && faccessat(fd, "", X_OK, flags) == 0;
}

void nfs_fd_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

void nfs_fd_path(int fd, char buf[32])
{
	snprintf(buf, 32, "/proc/self/fd/%d", fd);
}

void *nfs3_bulk_buf(struct rpc_call *c, uint32_t want, uint32_t *got)
{
	const size_t header_room = 512; /* status, post_op_attr, counts: well under this */
	size_t avail, room;
	void *p = want ? rpc_payload_buf(c, want) : NULL;

	if (p || want == 0) {
		*got = want;
		return p;
	}
	avail = c->payload_cap > c->payload_used ? c->payload_cap - c->payload_used : 0;
	if (avail >= 4096 && (p = rpc_payload_buf(c, avail & ~(size_t)3)) != NULL) {
		*got = (uint32_t)(avail & ~(size_t)3);
		return p;
	}
	/* No payload area: the tail of the reply buffer, which the encoder then stops short of. */
	room = (size_t)(c->res.end - c->res.p);
	if (room <= header_room) {
		*got = 0;
		return NULL;
	}
	room = (room - header_room) & ~(size_t)3;
	*got = want < room ? want : (uint32_t)room;
	c->res.end -= XDR_ALIGN(*got);
	return c->res.end;
}

enum rpc_proc_status nfs3_reply_done(struct rpc_call *c)
{
	if (c->res.overflow) {
		log_limited(&nfs3_call_limit, LOG_ERR, "nfs: reply to xid %#x does not fit %zu bytes",
			    c->xid, c->reply_cap);
		return RPC_PROC_SYSERR;
	}
	return RPC_PROC_OK;
}
