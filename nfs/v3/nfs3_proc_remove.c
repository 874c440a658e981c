/*
 * nfs3_proc_remove.c - changing names of existing objects: REMOVE (RFC 1813
 * §3.3.12), RMDIR (§3.3.13), RENAME (§3.3.14), LINK (§3.3.15). All made by
 * the backend as the caller (it checks directory permissions and sticky
 * bits). Both handles of RENAME and LINK must be in one export (else XDEV).
 * An NFSv4 client's delegation of a file losing or gaining a name is
 * recalled first (RFC 8881 §10.4.1), and so are NFSv4 clients' delegations of
 * the directories whose entries change (§10.9.1): NFS3ERR_JUKEBOX until they
 * are back. The pNFS layouts of a file removed or replaced by RENAME are
 * recalled too (§12.5.5; never waits), all through nfs/common's hook.
 */
#include <errno.h>
#include <string.h>

#include "core/loop.h"
#include "nfs/v3/nfs3.h"

/* NFSv4 clients' delegations of the directory dir (handle dfh), whose entries change (ch), recalled (RFC
 * 8881 §10.9.1; those granted the notification of ch are told once it is made instead); then the delegation
 * of the regular file (or delegated directory) dir/name, if it has one, and, removed (the name goes with the
 * file), its layouts too (§10.4.1, §12.5.5; one lookup). No name: LINK's new one. */
static uint32_t nfs3_deleg_break_name(struct nfs3_call *nc, const struct be_obj *dir, const struct nfs_fh *dfh,
				      enum nfs_dir_change ch, const char *name, bool removed)
{
	if (nfs_deleg_dir_changed(dfh->data, dfh->len, ch) != NFS_DELEG_CLEAR)
		return NFS3ERR_JUKEBOX;
	if (name && nfs_deleg_recall_at(nc->exp, &nc->cred, dir, name, removed) != NFS_DELEG_CLEAR)
		return NFS3ERR_JUKEBOX;
	return NFS3_OK;
}

/* REMOVE or RMDIR of a in its directory: status and the directory's wcc_data.
 * RPC_RUN_INLINE_TRY: on the receiving thread only while no delegation is
 * out (whose recall may wait), no layout may be (a metadata server looks
 * the name up as the caller) and the backend removes it without the
 * caller's identity or a device (EWOULDBLOCK: declined, nothing changed). */
static enum rpc_proc_status nfs3_unlink_common(struct rpc_call *c, const struct nfs3_diropargs *a,
					       struct nfs3_wcc_res *r, bool dir)
{
	struct be_obj d = BE_OBJ_INIT;
	char name[BE_NAME_MAX + 1];
	struct nfs3_call nc;
	bool here = loop_is_loop_thread();
	int err = 0;

	nfs3_call_begin(&nc, c);
	r->status = nfs3_call_open_dir(&nc, &a->dir, &d, &r->wcc.pre);
	if (!be_obj_valid(&d))
		r->wcc.pre.valid = 0;
	if (r->status == NFS3_OK)
		r->status = nfs3_call_writable(&nc);
	if (r->status == NFS3_OK)
		r->status = nfs3_name_copy(&a->name, name);
	if (here && (r->status != NFS3_OK || nfs_deleg_any() || nfs_layout_mds()))
		goto decline;
	/* RMDIR: a delegated directory; it has no layouts */
	if (r->status == NFS3_OK)
		r->status = nfs3_deleg_break_name(&nc, &d, &a->dir, NFS_DIR_REMOVE, name, !dir);
	/* REMOVE of a directory: ISDIR; RMDIR of a file: NOTDIR (the backend's EISDIR, ENOTDIR) */
	if (r->status == NFS3_OK)
		err = dir ? be_rmdir(nc.fs, &nc.cred, &d, name) : be_remove(nc.fs, &nc.cred, &d, name);
	if (here && err == EWOULDBLOCK)
		goto decline;
	if (r->status == NFS3_OK)
		r->status = nfs3_stat(err);
	if (r->status == NFS3_OK) {
		nfs_deleg_dir_note1(a->dir.data, a->dir.len, NFS_DIR_REMOVE, name); /* RFC 8881 §20.4: CB_NOTIFY */
		nfs3_call_commit_meta(&nc, &d);
	}
	nfs3_call_getattr(&nc, &d, &r->wcc.post);
	r->fsid = nfs3_call_fsid(&nc);
	nfs3_call_put(&nc, &d);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
decline:
	nfs3_call_put(&nc, &d);
	nfs3_call_end(&nc);
	return RPC_PROC_WORKER;
}

enum rpc_proc_status nfs3_remove_exec(struct rpc_call *c, void *args, void *res)
{
	return nfs3_unlink_common(c, args, res, false);
}

enum rpc_proc_status nfs3_rmdir_exec(struct rpc_call *c, void *args, void *res)
{
	return nfs3_unlink_common(c, args, res, true);
}

/* The fileid of dir/name (0: none). */
static uint64_t nfs3_fileid(struct nfs3_call *nc, const struct be_obj *dir, const char *name)
{
	struct be_obj o = BE_OBJ_INIT;
	struct be_attr at;
	uint64_t id = be_lookup(nc->fs, &nc->cred, dir, name, &o, &at) == 0 ? o.fileid : 0;

	nfs3_call_put(nc, &o);
	return id;
}

/* What a RENAME of fd/from to td/to does to the name to, looked up only while an NFSv4 client holds a
 * directory delegation: 0 nothing there, 1 an entry replaced (RFC 8881 §18.26.4: told in the add's
 * nad_old_entry), 2 both names the same file (nothing done, nothing told). */
static int nfs3_rename_target(struct nfs3_call *nc, const struct be_obj *fd, const char *from, const struct be_obj *td,
			      const char *to)
{
	uint64_t target;

	if (!nfs_deleg_dir_any() || (target = nfs3_fileid(nc, td, to)) == 0)
		return 0;
	return nfs3_fileid(nc, fd, from) == target ? 2 : 1;
}

/* RFC 8881 §18.26.4: the holders of the directories' delegations told of a RENAME made (within one,
 * NOTIFY4_RENAME_ENTRY; across two, REMOVE_ENTRY and ADD_ENTRY; target as nfs3_rename_target's). */
static void nfs3_rename_note(const struct nfs3_rename_args *a, bool same, const char *from, const char *to,
			     int target)
{
	const struct nfs_dir_note mv = { .kind = NFS_DIR_RENAME, .name = from, .newname = to, .replaced = target == 1 };
	const struct nfs_dir_note add = { .kind = NFS_DIR_ADD, .name = to, .replaced = target == 1 };

	if (target == 2 || (same && strcmp(from, to) == 0))
		return;
	if (same) {
		nfs_deleg_dir_note(a->to.dir.data, a->to.dir.len, &mv);
	} else {
		nfs_deleg_dir_note1(a->from.dir.data, a->from.dir.len, NFS_DIR_REMOVE, from);
		nfs_deleg_dir_note(a->to.dir.data, a->to.dir.len, &add);
	}
}

/* §3.3.14: atomic, across directories, over an existing target. RPC_RUN_INLINE_CALLER: on the
 * receiving thread only while a backend may act as the caller there (be_caller_here), no
 * delegation is out (whose recall may wait) and no layout may be; declined before anything changed on an error of a
 * handle or the backend's EWOULDBLOCK. */
enum rpc_proc_status nfs3_rename_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_rename_args *a = args;
	struct nfs3_rename_res *r = res;
	struct be_obj fd = BE_OBJ_INIT, td = BE_OBJ_INIT;
	char from[BE_NAME_MAX + 1], to[BE_NAME_MAX + 1];
	struct nfs3_call nc;
	bool here = loop_is_loop_thread();
	int target = 0;
	bool same = a->from.dir.len == a->to.dir.len && memcmp(a->from.dir.data, a->to.dir.data, a->to.dir.len) == 0;
	int err = 0;

	if (here && (!be_caller_here() || nfs_deleg_any() || nfs_layout_mds()))
		return RPC_PROC_WORKER;
	nfs3_call_begin(&nc, c);
	r->status = nfs3_call_open_dir(&nc, &a->from.dir, &fd, &r->from.pre);
	if (r->status == NFS3_OK)
		r->status = nfs3_call_open_dir(&nc, &a->to.dir, &td, &r->to.pre);
	if (!be_obj_valid(&fd))
		r->from.pre.valid = 0;
	if (!be_obj_valid(&td))
		r->to.pre.valid = 0;
	if (r->status == NFS3_OK)
		r->status = nfs3_call_writable(&nc);
	if (r->status == NFS3_OK)
		r->status = nfs3_name_copy(&a->from.name, from);
	if (r->status == NFS3_OK)
		r->status = nfs3_name_copy(&a->to.name, to);
	if (here && r->status != NFS3_OK)
		goto decline;
	if (r->status == NFS3_OK) /* moves: its layouts stay good */
		r->status = nfs3_deleg_break_name(&nc, &fd, &a->from.dir, same ? NFS_DIR_RENAME : NFS_DIR_REMOVE, from,
						  false);
	if (r->status == NFS3_OK) /* a target replaced */
		r->status = nfs3_deleg_break_name(&nc, &td, &a->to.dir, same ? NFS_DIR_RENAME : NFS_DIR_ADD, to, true);
	if (r->status == NFS3_OK) {
		target = nfs3_rename_target(&nc, &fd, from, &td, to);
		err = be_rename(nc.fs, &nc.cred, &fd, from, &td, to);
	}
	if (here && err == EWOULDBLOCK)
		goto decline;
	if (r->status == NFS3_OK)
		r->status = nfs3_stat(err);
	if (r->status == NFS3_OK) {
		nfs3_rename_note(a, same, from, to, target);
		nfs3_call_commit_meta(&nc, &td);
		if (fd.fileid != td.fileid)
			nfs3_call_commit_meta(&nc, &fd);
	}
	nfs3_call_getattr(&nc, &fd, &r->from.post);
	nfs3_call_getattr(&nc, &td, &r->to.post);
	r->fsid = nfs3_call_fsid(&nc);
	nfs3_call_put(&nc, &fd);
	nfs3_call_put(&nc, &td);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
decline:
	nfs3_call_put(&nc, &fd);
	nfs3_call_put(&nc, &td);
	nfs3_call_end(&nc);
	return RPC_PROC_WORKER;
}

void nfs3_rename_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_rename_res *r = res;

	nfs3_enc_status(c, r->status);
	nfs3_enc_wcc(&c->res, &r->from, r->fsid);
	nfs3_enc_wcc(&c->res, &r->to, r->fsid);
}

/* §3.3.15 */
enum rpc_proc_status nfs3_link_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_link_args *a = args;
	struct nfs3_link_res *r = res;
	struct be_obj o = BE_OBJ_INIT, d = BE_OBJ_INIT;
	char name[BE_NAME_MAX + 1];
	struct nfs3_call nc;

	nfs3_call_begin(&nc, c);
	r->status = nfs3_call_open(&nc, &a->file, &o, &r->attr);
	if (r->status == NFS3_OK)
		r->status = nfs3_call_open_dir(&nc, &a->link.dir, &d, &r->dir.pre);
	if (!be_obj_valid(&d))
		r->dir.pre.valid = 0;
	if (r->status == NFS3_OK)
		r->status = nfs3_call_writable(&nc);
	if (r->status == NFS3_OK && o.type == BE_DIR)
		r->status = NFS3ERR_ISDIR; /* no hard links to directories (knfsd: ISDIR) */
	if (r->status == NFS3_OK)
		r->status = nfs3_name_copy(&a->link.name, name);
	if (r->status == NFS3_OK && nfs_deleg_recall(a->file.data, a->file.len, NFS_DELEG_NS) != NFS_DELEG_CLEAR)
		r->status = NFS3ERR_JUKEBOX;
	if (r->status == NFS3_OK) /* the new name's directory */
		r->status = nfs3_deleg_break_name(&nc, &d, &a->link.dir, NFS_DIR_ADD, NULL, false);
	if (r->status == NFS3_OK)
		r->status = nfs3_stat(be_link(nc.fs, &nc.cred, &o, &d, name));
	if (r->status == NFS3_OK) {
		nfs_deleg_dir_note1(a->link.dir.data, a->link.dir.len, NFS_DIR_ADD, name); /* RFC 8881 §20.4: CB_NOTIFY */
		nfs3_call_commit_meta(&nc, &d);
	}
	if (be_obj_valid(&o))
		nfs3_call_getattr(&nc, &o, &r->attr);
	nfs3_call_getattr(&nc, &d, &r->dir.post);
	r->fsid = nfs3_call_fsid(&nc);
	nfs3_call_put(&nc, &o);
	nfs3_call_put(&nc, &d);
	nfs3_call_end(&nc);
	return RPC_PROC_OK;
}

void nfs3_link_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_link_res *r = res;

	nfs3_enc_status(c, r->status);
	nfs3_enc_post_op_attr(&c->res, &r->attr, r->fsid);
	nfs3_enc_wcc(&c->res, &r->dir, r->fsid);
}
