/*
 * nfs3_proc_remove.c - changing names of existing objects: REMOVE (RFC 1813
 * §3.3.12), RMDIR (§3.3.13), RENAME (§3.3.14), LINK (§3.3.15). All run as
 * the caller; the kernel checks directory permissions and sticky bits.
 * Both handles of RENAME and LINK must be in one export (else XDEV).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nfs/nfs_priv.h"

static enum rpc_proc_status nfs3_unlink_common(struct rpc_call *c, int flags)
{
	struct nfs3_diropargs a;
	struct nfs3_wcc wcc = { 0 };
	struct nfs3_call nc;
	struct stat dst;
	char name[NAME_MAX + 1];
	uint32_t status;
	int dfd = -1;

	if (!nfs3_dec_diropargs(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_call_open_dir(&nc, &a.dir, &dfd, &dst);
	if (status == NFS3_OK) {
		nfs3_wcc_pre(&wcc, &dst);
		status = nfs3_call_writable(&nc);
	}
	if (status == NFS3_OK)
		status = nfs3_name_copy(&a.name, name);
	if (status == NFS3_OK)
		status = nfs3_call_as_caller(&nc);
	/* REMOVE of a directory: Linux says EISDIR -> NFS3ERR_ISDIR; RMDIR of a file: NOTDIR */
	if (status == NFS3_OK && unlinkat(dfd, name, flags) < 0)
		status = nfs_errno_to_nfsstat3(errno);
	if (status == NFS3_OK)
		nfs3_call_commit_metadata(&nc, dfd);
	if (nc.exp)
		nfs3_wcc_post_fd(&wcc, dfd, nc.exp->id);
	nfs3_enc_status(c, status);
	nfs3_enc_wcc(&c->res, &wcc);
	nfs_fd_close(dfd);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

enum rpc_proc_status nfs3_proc_remove(struct rpc_call *c)
{
	return nfs3_unlink_common(c, 0);
}

enum rpc_proc_status nfs3_proc_rmdir(struct rpc_call *c)
{
	return nfs3_unlink_common(c, AT_REMOVEDIR);
}

/* §3.3.14: atomic, across directories, over an existing target */
enum rpc_proc_status nfs3_proc_rename(struct rpc_call *c)
{
	struct nfs3_rename_args a;
	struct nfs3_wcc fwcc = { 0 }, twcc = { 0 };
	struct nfs3_call nc;
	struct stat fst, tst;
	char from[NAME_MAX + 1], to[NAME_MAX + 1];
	uint32_t status;
	int ffd = -1, tfd = -1;

	if (!nfs3_dec_rename(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_call_open_dir(&nc, &a.from.dir, &ffd, &fst);
	if (status == NFS3_OK) {
		nfs3_wcc_pre(&fwcc, &fst);
		status = nfs3_call_open_dir(&nc, &a.to.dir, &tfd, &tst);
	}
	if (status == NFS3_OK) {
		nfs3_wcc_pre(&twcc, &tst);
		status = nfs3_call_writable(&nc);
	}
	if (status == NFS3_OK)
		status = nfs3_name_copy(&a.from.name, from);
	if (status == NFS3_OK)
		status = nfs3_name_copy(&a.to.name, to);
	if (status == NFS3_OK)
		status = nfs3_call_as_caller(&nc);
	if (status == NFS3_OK && renameat(ffd, from, tfd, to) < 0)
		status = nfs_errno_to_nfsstat3(errno);
	if (status == NFS3_OK) {
		nfs3_call_commit_metadata(&nc, tfd);
		if (fst.st_ino != tst.st_ino || fst.st_dev != tst.st_dev)
			nfs3_call_commit_metadata(&nc, ffd);
	}
	if (nc.exp) {
		nfs3_wcc_post_fd(&fwcc, ffd, nc.exp->id);
		nfs3_wcc_post_fd(&twcc, tfd, nc.exp->id);
	}
	nfs3_enc_status(c, status);
	nfs3_enc_wcc(&c->res, &fwcc);
	nfs3_enc_wcc(&c->res, &twcc);
	nfs_fd_close(ffd);
	nfs_fd_close(tfd);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}

/* §3.3.15 */
enum rpc_proc_status nfs3_proc_link(struct rpc_call *c)
{
	struct nfs3_link_args a;
	struct nfs3_attr fattr = { 0 };
	struct nfs3_wcc wcc = { 0 };
	struct nfs3_call nc;
	struct stat st, dst;
	char name[NAME_MAX + 1], path[32];
	uint32_t status;
	int fd = -1, dfd = -1;

	if (!nfs3_dec_link(&c->args, &a))
		return RPC_PROC_GARBAGE;
	nfs3_call_begin(&nc, c);
	status = nfs3_call_open(&nc, &a.file, &fd, &st);
	if (status == NFS3_OK) {
		nfs3_attr_set(&fattr, &st, nc.exp->id);
		status = nfs3_call_open_dir(&nc, &a.link.dir, &dfd, &dst);
	}
	if (status == NFS3_OK) {
		nfs3_wcc_pre(&wcc, &dst);
		status = nfs3_call_writable(&nc);
	}
	if (status == NFS3_OK && S_ISDIR(st.st_mode))
		status = NFS3ERR_ISDIR; /* no hard links to directories (knfsd: ISDIR) */
	if (status == NFS3_OK)
		status = nfs3_name_copy(&a.link.name, name);
	if (status == NFS3_OK)
		status = nfs3_call_as_caller(&nc);
	if (status == NFS3_OK) {
		/* linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH, dropped as the caller:
		 * go through the /proc magic link instead (protected_hardlinks still applies). */
		nfs_fd_path(fd, path);
		if (linkat(AT_FDCWD, path, dfd, name, AT_SYMLINK_FOLLOW) < 0)
			status = nfs_errno_to_nfsstat3(errno);
	}
	if (status == NFS3_OK)
		nfs3_call_commit_metadata(&nc, dfd);
	if (nc.exp) {
		nfs3_attr_fd(&fattr, fd, nc.exp->id);
		nfs3_wcc_post_fd(&wcc, dfd, nc.exp->id);
	}
	nfs3_enc_status(c, status);
	nfs3_enc_post_op_attr(&c->res, &fattr);
	nfs3_enc_wcc(&c->res, &wcc);
	nfs_fd_close(fd);
	nfs_fd_close(dfd);
	nfs3_call_end(&nc);
	return nfs3_reply_done(c);
}
