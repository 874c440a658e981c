/*
 * nfs3_proc_attr.c - NFSv3 attribute and file-system procedures:
 * GETATTR (RFC 1813 §3.3.1), SETATTR (§3.3.2), ACCESS (§3.3.4),
 * FSSTAT (§3.3.18), FSINFO (§3.3.19), PATHCONF (§3.3.20), and the sattr3
 * application shared with CREATE/MKDIR/SYMLINK/MKNOD.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <sys/statvfs.h>

#include "nfs/nfs_priv.h"

enum rpc_proc_status nfs3_proc_null(struct rpc_call *c)
{
	(void)c; /* RFC 1813 §3.3.0: no work */
	return RPC_PROC_OK;
}

/* §3.3.1 */
enum rpc_proc_status nfs3_proc_getattr(struct rpc_call *c)
{
	struct nfs3_fh_args a;
	struct nfs3_call nc;
	struct stat st;
	uint32_t status;
	int fd = -1;

	if (!nfs3_dec_fh_args(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_call_open(&nc, &a.fh, &fd, &st);
	nfs3_enc_status(c, status);
	if (status == NFS3_OK)
		nfs3_enc_fattr(&c->res, &st, nc.exp->id);
	nfs_fd_close(fd);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

static uint32_t nfs3_truncate(struct nfs3_call *nc, int fd, const struct stat *st, uint64_t size)
{
	char path[32];
	int wfd, err = 0;

	if (S_ISDIR(st->st_mode))
		return NFS3ERR_ISDIR;
	if (!S_ISREG(st->st_mode))
		return NFS3ERR_INVAL;
	if (size > (uint64_t)INT64_MAX)
		return NFS3ERR_FBIG;
	nfs_fd_path(fd, path);
	wfd = open(path, O_WRONLY | O_CLOEXEC); /* write permission checked as the caller */
	if (wfd < 0 && errno == EACCES && st->st_uid == nc->id.uid) {
		/* knfsd NFSD_MAY_OWNER_OVERRIDE on truncate: the owner may, whatever the mode */
		nfs_identity_restore();
		wfd = open(path, O_WRONLY | O_CLOEXEC);
		err = errno;
		if (nfs_identity_apply(&nc->id) < 0) {
			nfs_fd_close(wfd);
			nc->as_caller = false;
			return NFS3ERR_SERVERFAULT;
		}
	} else {
		err = errno;
	}
	if (wfd < 0)
		return nfs_errno_to_nfsstat3(err);
	err = ftruncate(wfd, (off_t)size) < 0 ? errno : 0;
	close(wfd);
	return err ? nfs_errno_to_nfsstat3(err) : NFS3_OK;
}

static struct timespec nfs3_time_to_ts(uint32_t how, const struct nfs3_time *t)
{
	struct timespec ts = { 0, UTIME_OMIT };

	if (how == NFS3_SET_TO_SERVER_TIME)
		ts.tv_nsec = UTIME_NOW;
	else if (how == NFS3_SET_TO_CLIENT_TIME)
		ts = (struct timespec){ .tv_sec = t->sec, .tv_nsec = t->nsec };
	return ts;
}

/*
 * Apply a sattr3 (RFC 1813 §2.6) to the object behind O_PATH fd, under the
 * caller's identity: the kernel decides who may chown/chmod/set times.
 * Order: size, owner, mode (after chown, which may clear set-id bits), times.
 */
uint32_t nfs3_setattr_apply(struct nfs3_call *nc, int fd, const struct stat *st, const struct nfs3_sattr *sa)
{
	char path[32];
	uint32_t status;

	if (sa->set_size) {
		status = nfs3_truncate(nc, fd, st, sa->size);
		if (status != NFS3_OK)
			return status;
	}
	if ((sa->set_uid || sa->set_gid) &&
	    fchownat(fd, "", sa->set_uid ? sa->uid : (uid_t)-1, sa->set_gid ? sa->gid : (gid_t)-1,
		     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return nfs_errno_to_nfsstat3(errno);
	/* Linux symlinks have no mode of their own; knfsd ignores it too. */
	if (sa->set_mode && !S_ISLNK(st->st_mode)) {
		nfs_fd_path(fd, path);
		if (chmod(path, sa->mode & 07777) < 0)
			return nfs_errno_to_nfsstat3(errno);
	}
	if (sa->atime_how != NFS3_DONT_CHANGE || sa->mtime_how != NFS3_DONT_CHANGE) {
		struct timespec ts[2] = {
			nfs3_time_to_ts(sa->atime_how, &sa->atime),
			nfs3_time_to_ts(sa->mtime_how, &sa->mtime),
		};
		if (utimensat(fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return nfs_errno_to_nfsstat3(errno);
	}
	return NFS3_OK;
}

static bool nfs3_sattr_empty(const struct nfs3_sattr *sa)
{
	return !sa->set_mode && !sa->set_uid && !sa->set_gid && !sa->set_size &&
	       sa->atime_how == NFS3_DONT_CHANGE && sa->mtime_how == NFS3_DONT_CHANGE;
}

/* §3.3.2 */
enum rpc_proc_status nfs3_proc_setattr(struct rpc_call *c)
{
	struct nfs3_setattr_args a;
	struct nfs3_wcc wcc = { 0 };
	struct nfs3_call nc;
	struct stat st;
	uint32_t status;
	int fd = -1;

	if (!nfs3_dec_setattr(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_call_open(&nc, &a.fh, &fd, &st);
	if (status == NFS3_OK) {
		nfs3_wcc_pre(&wcc, &st);
		status = nfs3_call_writable(&nc);
	}
	/* §3.3.2: guard.check - the object's ctime must equal obj_ctime, else NOT_SYNC */
	if (status == NFS3_OK && a.guard &&
	    ((uint32_t)st.st_ctim.tv_sec != a.guard_ctime.sec || (uint32_t)st.st_ctim.tv_nsec != a.guard_ctime.nsec))
		status = NFS3ERR_NOT_SYNC;
	if (status == NFS3_OK && !nfs3_sattr_empty(&a.sa)) {
		status = nfs3_call_as_caller(&nc);
		if (status == NFS3_OK)
			status = nfs3_setattr_apply(&nc, fd, &st, &a.sa);
		if (status == NFS3_OK)
			nfs3_call_commit_metadata(&nc, fd);
	}
	if (nc.exp)
		nfs3_wcc_post_fd(&wcc, fd, nc.exp->id);
	nfs3_enc_status(c, status);
	nfs3_enc_wcc(&c->res, &wcc);
	nfs_fd_close(fd);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

/* §3.3.4: which of the requested rights the caller has, as the kernel would decide. */
static uint32_t nfs3_access_check(struct nfs3_call *nc, int fd, const struct stat *st, uint32_t want)
{
	bool dir = S_ISDIR(st->st_mode);
	uint32_t got = 0;

	if ((want & ACCESS3_READ) && nfs3_may(nc, fd, st, R_OK))
		got |= ACCESS3_READ;
	if (dir && (want & ACCESS3_LOOKUP) && nfs3_may(nc, fd, st, X_OK))
		got |= ACCESS3_LOOKUP;
	if (!dir && (want & ACCESS3_EXECUTE) && nfs3_may(nc, fd, st, X_OK))
		got |= ACCESS3_EXECUTE;
	if ((want & (ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE)) && nfs3_call_writable(nc) == NFS3_OK &&
	    nfs3_may(nc, fd, st, W_OK)) {
		got |= want & (ACCESS3_MODIFY | ACCESS3_EXTEND);
		if (dir)
			got |= want & ACCESS3_DELETE; /* deleting entries of this directory */
	}
	return got;
}

enum rpc_proc_status nfs3_proc_access(struct rpc_call *c)
{
	struct nfs3_access_args a;
	struct nfs3_attr attr = { 0 };
	struct nfs3_call nc;
	struct stat st;
	uint32_t status, got = 0;
	int fd = -1;

	if (!nfs3_dec_access(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_call_open(&nc, &a.fh, &fd, &st);
	if (status == NFS3_OK) {
		nfs3_attr_set(&attr, &st, nc.exp->id);
		status = nfs3_call_as_caller(&nc);
	}
	if (status == NFS3_OK)
		got = nfs3_access_check(&nc, fd, &st, a.access);
	nfs3_enc_status(c, status);
	nfs3_enc_post_op_attr(&c->res, &attr);
	if (status == NFS3_OK)
		xdr_enc_u32(&c->res, got);
	nfs_fd_close(fd);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

/* FSSTAT, FSINFO and PATHCONF share their shape: status, post_op_attr, body. */
static enum rpc_proc_status nfs3_fs_proc(struct rpc_call *c,
					 void (*body)(struct xdr_enc *e, int fd, uint32_t *status))
{
	struct nfs3_fh_args a;
	struct nfs3_attr attr = { 0 };
	struct nfs3_call nc;
	struct stat st;
	uint32_t status;
	int fd = -1;
	struct xdr_enc mark;

	if (!nfs3_dec_fh_args(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_call_open(&nc, &a.fh, &fd, &st);
	if (status == NFS3_OK)
		nfs3_attr_set(&attr, &st, nc.exp->id);
	mark = c->res;
	nfs3_enc_status(c, status);
	nfs3_enc_post_op_attr(&c->res, &attr);
	if (status == NFS3_OK) {
		body(&c->res, fd, &status);
		if (status != NFS3_OK) { /* rewind: the failure arm has no body */
			c->res = mark;
			nfs3_enc_status(c, status);
			nfs3_enc_post_op_attr(&c->res, &attr);
		}
	}
	nfs_fd_close(fd);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

/* §3.3.18 FSSTAT3resok: byte and file counts from statvfs */
static void nfs3_fsstat_body(struct xdr_enc *e, int fd, uint32_t *status)
{
	struct statvfs sv;

	if (fstatvfs(fd, &sv) < 0) {
		*status = nfs_errno_to_nfsstat3(errno);
		return;
	}
	xdr_enc_u64(e, (uint64_t)sv.f_blocks * sv.f_frsize);
	xdr_enc_u64(e, (uint64_t)sv.f_bfree * sv.f_frsize);
	xdr_enc_u64(e, (uint64_t)sv.f_bavail * sv.f_frsize);
	xdr_enc_u64(e, sv.f_files);
	xdr_enc_u64(e, sv.f_ffree);
	xdr_enc_u64(e, sv.f_favail);
	xdr_enc_u32(e, 0); /* invarsec: the file system may change at any time */
}

/* §3.3.19 FSINFO3resok */
static void nfs3_fsinfo_body(struct xdr_enc *e, int fd, uint32_t *status)
{
	const struct timespec delta = { 0, 1 }; /* time_delta: nanosecond timestamps */

	(void)fd;
	(void)status;
	xdr_enc_u32(e, NFS3_MAX_IO);   /* rtmax */
	xdr_enc_u32(e, NFS3_MAX_IO);   /* rtpref */
	xdr_enc_u32(e, 4096);          /* rtmult */
	xdr_enc_u32(e, NFS3_MAX_IO);   /* wtmax */
	xdr_enc_u32(e, NFS3_MAX_IO);   /* wtpref */
	xdr_enc_u32(e, 4096);          /* wtmult */
	xdr_enc_u32(e, 64 * 1024);     /* dtpref */
	xdr_enc_u64(e, (uint64_t)INT64_MAX); /* maxfilesize: off_t limit */
	nfs3_enc_time(e, &delta);
	xdr_enc_u32(e, FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME);
}

/* §3.3.20 PATHCONF3resok */
static void nfs3_pathconf_body(struct xdr_enc *e, int fd, uint32_t *status)
{
	char path[32];
	long linkmax, namemax;

	(void)status;
	nfs_fd_path(fd, path);
	linkmax = pathconf(path, _PC_LINK_MAX);
	namemax = pathconf(path, _PC_NAME_MAX);
	xdr_enc_u32(e, linkmax > 0 && linkmax < UINT32_MAX ? (uint32_t)linkmax : 32000);
	xdr_enc_u32(e, namemax > 0 && namemax <= NAME_MAX ? (uint32_t)namemax : NAME_MAX);
	xdr_enc_bool(e, true);  /* no_trunc: long names are refused (NAMETOOLONG) */
	xdr_enc_bool(e, true);  /* chown_restricted */
	xdr_enc_bool(e, false); /* case_insensitive */
	xdr_enc_bool(e, true);  /* case_preserving */
}

enum rpc_proc_status nfs3_proc_fsstat(struct rpc_call *c)
{
	return nfs3_fs_proc(c, nfs3_fsstat_body);
}

enum rpc_proc_status nfs3_proc_fsinfo(struct rpc_call *c)
{
	return nfs3_fs_proc(c, nfs3_fsinfo_body);
}

enum rpc_proc_status nfs3_proc_pathconf(struct rpc_call *c)
{
	return nfs3_fs_proc(c, nfs3_pathconf_body);
}
