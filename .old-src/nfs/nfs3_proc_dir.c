/*
 * nfs3_proc_dir.c - name lookup and directory listing: LOOKUP (RFC 1813
 * §3.3.3), READDIR (§3.3.16), READDIRPLUS (§3.3.17).
 *
 * LOOKUP never follows symlinks (O_PATH|O_NOFOLLOW), never leaves the export:
 * ".." at the export root is the root itself, and submounts are invisible
 * (the root fd is a non-recursive clone of the export's mount; without it a
 * change of st_dev is refused).
 *
 * Directory cookies are getdents64 d_off values: the position to lseek() to
 * for the entry after this one, so a listing resumes exactly where it
 * stopped, stays stable across daemon restarts, and survives entries being
 * added or removed meanwhile (the file system keeps d_off meaningful, e.g.
 * ext4 hash positions, tmpfs stable offsets). The cookie verifier is
 * constant for a directory, so a directory modified during a listing does
 * not make clients restart it on BAD_COOKIE forever.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "nfs/nfs_priv.h"
#include "core/log.h"

static struct log_limit nfs3_dir_limit;

static bool nfs3_is_export_root(const struct nfs_export *e, const struct stat *st)
{
	return st->st_dev == e->dev && st->st_ino == e->ino;
}

/* Open name in dir (O_PATH, no symlink following) as the caller; fills fh and st. */
static uint32_t nfs3_lookup_name(struct nfs3_call *nc, int dfd, const struct stat *dst, const char *name,
				 struct nfs_fh *fh, struct stat *st)
{
	int ofd;
	uint32_t status;

	if (strcmp(name, "..") == 0 && nfs3_is_export_root(nc->exp, dst))
		name = "."; /* the export root is its own parent: never a way out */
	ofd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (ofd < 0)
		return nfs_errno_to_nfsstat3(errno);
	if (fstat(ofd, st) < 0) {
		status = nfs_errno_to_nfsstat3(errno);
	} else if (st->st_dev != nc->exp->dev) {
		/* only without an open_tree clone: another file system is mounted here; no crossmnt */
		char esc[LOG_ESCAPED_MAX];

		log_limited(&nfs3_dir_limit, LOG_NOTICE, "nfs: %s: LOOKUP of mount point '%s' refused",
			    nc->exp->cfg->path, log_escape_str(esc, sizeof(esc), name));
		status = NFS3ERR_ACCES;
	} else {
		status = nfs_fh_build(fh, nc->exp->id, ofd, "", AT_EMPTY_PATH);
	}
	close(ofd);
	return status;
}

/* §3.3.3 */
enum rpc_proc_status nfs3_proc_lookup(struct rpc_call *c)
{
	struct nfs3_diropargs a;
	struct nfs3_attr dattr = { 0 }, oattr = { 0 };
	struct nfs3_call nc;
	struct nfs_fh fh;
	struct stat dst, st;
	char name[NAME_MAX + 1];
	uint32_t status;
	int dfd = -1;

	if (!nfs3_dec_diropargs(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_call_open_dir(&nc, &a.dir, &dfd, &dst);
	if (status == NFS3_OK)
		status = nfs3_name_copy(&a.name, name);
	if (status == NFS3_OK)
		status = nfs3_call_as_caller(&nc);
	if (status == NFS3_OK)
		status = nfs3_lookup_name(&nc, dfd, &dst, name, &fh, &st);
	if (status == NFS3_OK)
		nfs3_attr_set(&oattr, &st, nc.exp->id);
	if (dfd >= 0)
		nfs3_attr_fd(&dattr, dfd, nc.exp->id);
	else if (status == NFS3ERR_NOTDIR)
		nfs3_attr_set(&dattr, &dst, nc.exp->id); /* the non-directory's own attributes */
	nfs3_enc_status(c, status);
	if (status == NFS3_OK) {
		nfs3_enc_fh(&c->res, &fh);
		nfs3_enc_post_op_attr(&c->res, &oattr);
	}
	nfs3_enc_post_op_attr(&c->res, &dattr);
	nfs_fd_close(dfd);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

/* ---- READDIR / READDIRPLUS ---- */

#define NFS3_DIRBUF 32768
static __thread uint8_t nfs3_dirbuf[NFS3_DIRBUF] __attribute__((aligned(8)));

struct nfs3_dirlist {
	struct nfs3_call *nc;
	struct xdr_enc *e;
	bool plus;
	int pfd;                 /* O_PATH of the directory (fstatat/name_to_handle_at base) */
	const struct stat *dst;
	const struct nfs_fh *dfh;
	size_t limit;            /* count/maxcount, clamped to the reply buffer */
	size_t used;             /* bytes of READDIR(PLUS)3res so far, counting the trailer */
	size_t dirlimit, dirused; /* READDIRPLUS dircount accounting */
	unsigned nentries;
	bool full;
};

/* Encodes one entry if it fits; false (and full set) if it does not. */
static bool nfs3_dirlist_add(struct nfs3_dirlist *l, const struct dirent64 *de)
{
	const struct nfs_export *ex = l->nc->exp;
	const char *name = de->d_name;
	size_t nlen = strlen(name);
	uint64_t fileid = de->d_ino;
	struct nfs_fh fh;
	struct stat st;
	bool have_attr = false, have_fh = false;
	bool dotdot_root = strcmp(name, "..") == 0 && nfs3_is_export_root(ex, l->dst);
	size_t dirbytes, size;

	if (nlen > NAME_MAX)
		return true; /* cannot happen on Linux; skip rather than send a bad name */
	if (dotdot_root)
		fileid = ex->ino;
	/* entry3 / entryplus3: value_follows, fileid, name, cookie (§3.3.16, §3.3.17) */
	dirbytes = 8 + 4 + XDR_ALIGN(nlen) + 8;
	size = 4 + dirbytes;
	if (l->plus) {
		if (dotdot_root || strcmp(name, ".") == 0) {
			st = *l->dst;
			fh = dotdot_root ? ex->root_fh : *l->dfh;
			have_attr = have_fh = true;
		} else if (fstatat(l->pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == ex->dev) {
			have_attr = true;
			have_fh = strcmp(name, "..") == 0 ?
				nfs_fh_build(&fh, ex->id, l->pfd, "..", 0) == NFS3_OK :
				nfs_fh_build(&fh, ex->id, l->pfd, name, 0) == NFS3_OK;
		}
		size += 4 + (have_attr ? NFS3_FATTR_BYTES : 0);
		size += 4 + (have_fh ? 4 + XDR_ALIGN(fh.len) : 0);
	}
	if (l->used + size > l->limit || (l->nentries > 0 && l->dirused + dirbytes > l->dirlimit)) {
		l->full = true;
		return false;
	}
	l->used += size;
	l->dirused += dirbytes;
	l->nentries++;
	xdr_enc_bool(l->e, true);
	xdr_enc_u64(l->e, fileid);
	xdr_enc_opaque(l->e, name, (uint32_t)nlen);
	xdr_enc_u64(l->e, (uint64_t)de->d_off); /* cookie: where the next entry starts */
	if (l->plus) {
		struct nfs3_attr a = { 0 };

		if (have_attr)
			nfs3_attr_set(&a, &st, ex->id);
		nfs3_enc_post_op_attr(l->e, &a);
		nfs3_enc_post_op_fh(l->e, have_fh ? &fh : NULL);
	}
	return true;
}

/* Reads entries from cookie on until the reply is full or the directory ends. Returns nfsstat3. */
static uint32_t nfs3_dirlist_fill(struct nfs3_dirlist *l, int dfd, uint64_t cookie, bool *eof)
{
	*eof = false;
	if (lseek(dfd, (off_t)cookie, SEEK_SET) == (off_t)-1)
		return NFS3ERR_BAD_COOKIE; /* §3.3.16: the cookie is no longer valid */
	for (;;) {
		ssize_t n = getdents64(dfd, nfs3_dirbuf, sizeof(nfs3_dirbuf));

		if (n < 0)
			return errno == EINVAL || errno == ENOENT ? NFS3ERR_BAD_COOKIE : nfs_errno_to_nfsstat3(errno);
		if (n == 0) {
			*eof = true;
			return NFS3_OK;
		}
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *de = (const struct dirent64 *)(nfs3_dirbuf + off);

			if (!nfs3_dirlist_add(l, de))
				return NFS3_OK;
			off += de->d_reclen;
		}
	}
}

static enum rpc_proc_status nfs3_readdir_common(struct rpc_call *c, bool plus)
{
	struct nfs3_readdir_args a;
	struct nfs3_attr dattr = { 0 };
	struct nfs3_call nc;
	struct nfs3_dirlist l = { 0 };
	struct xdr_enc mark;
	struct stat dst;
	uint64_t verf = 0;
	uint8_t verf_be[8];
	uint32_t status;
	int pfd = -1, dfd = -1;
	bool eof = false;
	size_t room;

	if (!(plus ? nfs3_dec_readdirplus(&c->args, &a) : nfs3_dec_readdir(&c->args, &a)))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_call_open_dir(&nc, &a.fh, &pfd, &dst);
	if (status == NFS3_OK || status == NFS3ERR_NOTDIR)
		nfs3_attr_set(&dattr, &dst, nc.exp->id);
	if (status == NFS3_OK) {
		verf = nfs_fh_cookieverf(nc.exp->id, &dst);
		status = nfs3_call_as_caller(&nc);
	}
	/* §3.3.16: a cookie other than 0 is only valid with the verifier it was issued with */
	if (status == NFS3_OK && a.cookie != 0) {
		uint64_t theirs;

		memcpy(&theirs, a.verf, 8);
		if (be64toh(theirs) != verf)
			status = NFS3ERR_BAD_COOKIE;
	}
	if (status == NFS3_OK) {
		char path[32];

		/* through /proc: only read permission on the directory itself is checked, as opendir */
		nfs_fd_path(pfd, path);
		dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			status = nfs_errno_to_nfsstat3(errno);
	}
	mark = c->res;
	if (status == NFS3_OK) {
		/* status + dir_attributes + cookieverf, then the list's end marker and eof */
		room = (size_t)(c->res.end - c->res.p);
		l = (struct nfs3_dirlist){
			.nc = &nc, .e = &c->res, .plus = plus, .pfd = pfd, .dst = &dst, .dfh = &a.fh,
			.limit = a.maxcount < room ? a.maxcount : room,
			.used = 4 + NFS3_POST_OP_ATTR_BYTES + NFS3_COOKIEVERFSIZE + 4 + 4,
			.dirlimit = a.dircount,
		};
		if (l.used > l.limit)
			status = NFS3ERR_TOOSMALL;
	}
	if (status == NFS3_OK) {
		xdr_enc_u32(&c->res, NFS3_OK);
		nfs3_enc_post_op_attr(&c->res, &dattr);
		verf = htobe64(verf);
		memcpy(verf_be, &verf, 8);
		xdr_enc_fixed(&c->res, verf_be, 8);
		status = nfs3_dirlist_fill(&l, dfd, a.cookie, &eof);
		/* §3.3.16: TOOSMALL when not even one entry fits */
		if (status == NFS3_OK && l.nentries == 0 && !eof)
			status = NFS3ERR_TOOSMALL;
	}
	if (status == NFS3_OK) {
		xdr_enc_bool(&c->res, false); /* no more entries */
		xdr_enc_bool(&c->res, eof);
	} else {
		c->res = mark; /* READDIR3resfail: status, dir_attributes */
		nfs3_enc_status(c, status);
		nfs3_enc_post_op_attr(&c->res, &dattr);
	}
	nfs_fd_close(dfd);
	nfs_fd_close(pfd);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

enum rpc_proc_status nfs3_proc_readdir(struct rpc_call *c)
{
	return nfs3_readdir_common(c, false);
}

enum rpc_proc_status nfs3_proc_readdirplus(struct rpc_call *c)
{
	return nfs3_readdir_common(c, true);
}
