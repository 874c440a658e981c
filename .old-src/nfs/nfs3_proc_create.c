/*
 * nfs3_proc_create.c - making new objects: CREATE (RFC 1813 §3.3.8), MKDIR
 * (§3.3.9), SYMLINK (§3.3.10), MKNOD (§3.3.11).
 *
 * Each runs as the caller in the parent directory (so the kernel checks write
 * and search permission there and gives the new object the caller's
 * ownership), then applies the remaining sattr3 fields, and answers the new
 * object's handle and attributes plus the directory's wcc_data.
 * Modes are taken as sent: nfs_service_init sets the process umask to 0
 * (the client applied its own umask).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "nfs/nfs_priv.h"

/* Mode for a new object when the client sent none (knfsd would use 0; this stays usable by its owner). */
#define NFS3_DEFAULT_FILE_MODE 0600u
#define NFS3_DEFAULT_DIR_MODE 0700u

struct nfs3_newobj {
	struct nfs3_call nc;
	struct nfs3_wcc dir_wcc;
	int dfd;
	char name[NAME_MAX + 1];
	bool have_fh;
	struct nfs_fh fh;
	struct nfs3_attr attr;
};

/* Common prologue: the directory, ROFS, the name, then the caller's identity. */
static uint32_t nfs3_newobj_begin(struct nfs3_newobj *o, struct rpc_call *c, const struct nfs3_diropargs *where)
{
	struct stat dst;
	uint32_t status;

	memset(o, 0, sizeof(*o));
	o->dfd = -1;
	nfs3_call_begin(&o->nc, c);
	status = nfs3_call_open_dir(&o->nc, &where->dir, &o->dfd, &dst);
	if (status != NFS3_OK)
		return status;
	nfs3_wcc_pre(&o->dir_wcc, &dst);
	status = nfs3_call_writable(&o->nc);
	if (status == NFS3_OK)
		status = nfs3_name_copy(&where->name, o->name);
	if (status == NFS3_OK)
		status = nfs3_call_as_caller(&o->nc);
	return status;
}

/* The new object: apply attributes, make its handle (optional in the reply: post_op_fh3). */
static uint32_t nfs3_newobj_finish(struct nfs3_newobj *o, const struct nfs3_sattr *sa)
{
	struct stat st;
	uint32_t status = NFS3_OK;
	int ofd = openat(o->dfd, o->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (ofd < 0)
		return NFS3_OK; /* created, but already gone or renamed: answer without handle */
	if (sa && fstat(ofd, &st) == 0)
		status = nfs3_setattr_apply(&o->nc, ofd, &st, sa);
	o->have_fh = nfs_fh_build(&o->fh, o->nc.exp->id, ofd, "", AT_EMPTY_PATH) == NFS3_OK;
	nfs3_attr_fd(&o->attr, ofd, o->nc.exp->id);
	close(ofd);
	return status;
}

/* CREATE3resok / MKDIR3resok / ...: post_op_fh3, post_op_attr, wcc_data; resfail: wcc_data. */
static enum rpc_proc_status nfs3_newobj_end(struct nfs3_newobj *o, struct rpc_call *c, uint32_t status)
{
	if (status == NFS3_OK)
		nfs3_call_commit_metadata(&o->nc, o->dfd);
	if (o->nc.exp)
		nfs3_wcc_post_fd(&o->dir_wcc, o->dfd, o->nc.exp->id);
	nfs3_enc_status(c, status);
	if (status == NFS3_OK) {
		nfs3_enc_post_op_fh(&c->res, o->have_fh ? &o->fh : NULL);
		nfs3_enc_post_op_attr(&c->res, &o->attr);
	}
	nfs3_enc_wcc(&c->res, &o->dir_wcc);
	nfs_fd_close(o->dfd);
	nfs3_call_end(&o->nc);
	return nfs3_reply_done(c);
}

/* sattr3 without the fields creation already applied. */
static struct nfs3_sattr nfs3_sattr_rest(const struct nfs3_sattr *sa)
{
	struct nfs3_sattr r = *sa;

	r.set_mode = false;
	return r;
}

/*
 * §3.3.8 EXCLUSIVE: the verifier is stored in the new file's atime and mtime
 * (as knfsd: mtime = verf[0..3], atime = verf[4..7], top bits cleared for
 * file systems without 64-bit times). A retransmission finds the file with
 * the same verifier and succeeds; any other existing file is EXIST.
 */
static uint32_t nfs3_create_exclusive(struct nfs3_newobj *o, const uint8_t verf[NFS3_CREATEVERFSIZE])
{
	uint32_t v_mtime, v_atime;
	struct timespec ts[2];
	struct stat st;

	memcpy(&v_mtime, verf, 4);
	memcpy(&v_atime, verf + 4, 4);
	v_mtime &= 0x7fffffff;
	v_atime &= 0x7fffffff;
	ts[0] = (struct timespec){ .tv_sec = v_atime };
	ts[1] = (struct timespec){ .tv_sec = v_mtime };
	if (mknodat(o->dfd, o->name, S_IFREG | NFS3_DEFAULT_FILE_MODE, 0) == 0) {
		if (utimensat(o->dfd, o->name, ts, AT_SYMLINK_NOFOLLOW) < 0)
			return nfs_errno_to_nfsstat3(errno);
		return NFS3_OK;
	}
	if (errno != EEXIST)
		return nfs_errno_to_nfsstat3(errno);
	if (fstatat(o->dfd, o->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_mtim.tv_sec == (time_t)v_mtime && st.st_atim.tv_sec == (time_t)v_atime)
		return NFS3_OK; /* our own earlier reply was lost: same verifier */
	return NFS3ERR_EXIST;
}

static uint32_t nfs3_create_do(struct nfs3_newobj *o, const struct nfs3_create_args *a)
{
	mode_t mode = a->sa.set_mode ? (a->sa.mode & 07777) : NFS3_DEFAULT_FILE_MODE;
	struct nfs3_sattr rest = nfs3_sattr_rest(&a->sa);
	struct stat st;
	uint32_t status;

	if (a->mode == NFS3_CREATE_EXCLUSIVE) {
		status = nfs3_create_exclusive(o, a->verf);
		return status == NFS3_OK ? nfs3_newobj_finish(o, NULL) : status;
	}
	if (mknodat(o->dfd, o->name, S_IFREG | mode, 0) == 0)
		return nfs3_newobj_finish(o, &rest);
	if (errno != EEXIST)
		return nfs_errno_to_nfsstat3(errno);
	/* §3.3.8 GUARDED: fail if it exists; UNCHECKED: an existing regular file is reused,
	 * only a size (truncation) is applied to it (as knfsd). */
	if (a->mode == NFS3_CREATE_GUARDED)
		return NFS3ERR_EXIST;
	if (fstatat(o->dfd, o->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return nfs_errno_to_nfsstat3(errno);
	if (!S_ISREG(st.st_mode))
		return NFS3ERR_EXIST;
	memset(&rest, 0, sizeof(rest));
	rest.set_size = a->sa.set_size;
	rest.size = a->sa.size;
	return nfs3_newobj_finish(o, &rest);
}

enum rpc_proc_status nfs3_proc_create(struct rpc_call *c)
{
	struct nfs3_create_args a;
	struct nfs3_newobj o;
	uint32_t status;

	if (!nfs3_dec_create(&c->args, &a))
		return RPC_PROC_GARBAGE;
	status = nfs3_newobj_begin(&o, c, &a.where);
	if (status == NFS3_OK)
		status = nfs3_create_do(&o, &a);
	return nfs3_newobj_end(&o, c, status);
}

/* §3.3.9 */
enum rpc_proc_status nfs3_proc_mkdir(struct rpc_call *c)
{
	struct nfs3_mkdir_args a;
	struct nfs3_newobj o;
	struct nfs3_sattr rest;
	uint32_t status;

	if (!nfs3_dec_mkdir(&c->args, &a))
		return RPC_PROC_GARBAGE;
	rest = nfs3_sattr_rest(&a.sa);
	status = nfs3_newobj_begin(&o, c, &a.where);
	if (status == NFS3_OK && mkdirat(o.dfd, o.name, a.sa.set_mode ? a.sa.mode & 07777 : NFS3_DEFAULT_DIR_MODE) < 0)
		status = nfs_errno_to_nfsstat3(errno);
	if (status == NFS3_OK)
		status = nfs3_newobj_finish(&o, &rest);
	return nfs3_newobj_end(&o, c, status);
}

/* §3.3.10 */
enum rpc_proc_status nfs3_proc_symlink(struct rpc_call *c)
{
	struct nfs3_symlink_args a;
	struct nfs3_newobj o;
	struct nfs3_sattr rest;
	char target[PATH_MAX];
	uint32_t status;

	if (!nfs3_dec_symlink(c, &a))
		return RPC_PROC_GARBAGE;
	rest = nfs3_sattr_rest(&a.sa); /* a symlink's mode is fixed on Linux */
	status = nfs3_newobj_begin(&o, c, &a.where);
	if (status == NFS3_OK && a.path_len >= PATH_MAX)
		status = NFS3ERR_NAMETOOLONG;
	if (status == NFS3_OK && (a.path_len == 0 || memchr(a.path, '\0', a.path_len)))
		status = NFS3ERR_INVAL; /* nfspath3 cannot carry NUL; an empty target is refused by Linux */
	if (status == NFS3_OK) {
		memcpy(target, a.path, a.path_len);
		target[a.path_len] = '\0';
		if (symlinkat(target, o.dfd, o.name) < 0)
			status = nfs_errno_to_nfsstat3(errno);
	}
	if (status == NFS3_OK)
		status = nfs3_newobj_finish(&o, &rest);
	return nfs3_newobj_end(&o, c, status);
}

/* §3.3.11 */
enum rpc_proc_status nfs3_proc_mknod(struct rpc_call *c)
{
	struct nfs3_mknod_args a;
	struct nfs3_newobj o;
	struct nfs3_sattr rest;
	mode_t mode;
	dev_t dev = 0;
	uint32_t status;

	if (!nfs3_dec_mknod(&c->args, &a))
		return RPC_PROC_GARBAGE;
	rest = nfs3_sattr_rest(&a.sa);
	mode = a.sa.set_mode ? a.sa.mode & 07777 : NFS3_DEFAULT_FILE_MODE;
	switch (a.type) {
	case NF3CHR:
		mode |= S_IFCHR;
		dev = makedev(a.major, a.minor);
		break;
	case NF3BLK:
		mode |= S_IFBLK;
		dev = makedev(a.major, a.minor);
		break;
	case NF3SOCK:
		mode |= S_IFSOCK;
		break;
	case NF3FIFO:
		mode |= S_IFIFO;
		break;
	default:
		mode = 0; /* §3.3.11: regular files, directories, symlinks have their own procedures */
	}
	status = nfs3_newobj_begin(&o, c, &a.where);
	if (status == NFS3_OK && mode == 0)
		status = NFS3ERR_BADTYPE;
	/* devices need CAP_MKNOD, which only an unsquashed root caller keeps: else PERM */
	if (status == NFS3_OK && mknodat(o.dfd, o.name, mode, dev) < 0)
		status = nfs_errno_to_nfsstat3(errno);
	if (status == NFS3_OK)
		status = nfs3_newobj_finish(&o, &rest);
	return nfs3_newobj_end(&o, c, status);
}
