/*
 * nfs4_proc_mod.c - the operations that change the namespace or attributes
 * (CREATE, LINK, REMOVE, RENAME, SETATTR; RFC 8881 §18.4, §18.9, §18.25,
 * §18.26, §18.30) and VERIFY/NVERIFY (§18.31, §18.15).
 *
 * Export options apply as for NFSv3: the caller's credential is already
 * squashed (nfs4_obj_open), a read-only export is NFS4ERR_ROFS, and so is
 * the pseudo file system (RFC 8881 §7.7: it is the server's, read-only, as
 * knfsd's pseudo root is exported read-only). Names follow nfs4_name_check()
 * (RFC 8881 §14.5), the rules LOOKUP uses. change_info4 is the directory's
 * change attribute read just before and just after the change, both under
 * the directory's stripe of nfs4_dirlock.c, so no other change through
 * rnfsd falls between them: atomic (RFC 8881 §3.3.6), as knfsd says, except
 * on a cluster file system (be_fs.one_server false).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/ops/nfs4_pnfs.h"
#include "nfs/v4/xdr/nfs4_mod.h"
#include "nfs/v4/recovery/nfs4_recovery.h"

/* CREATE's modes when the client sends none (as NFSv3's MKDIR/MKNOD). */
#define NFS4_CREATE_DIR_MODE 0700u
#define NFS4_CREATE_NODE_MODE 0600u

/* RFC 8881 §7.7 (pseudo file system) and RFC 1813 §3.3's ROFS for a read-only export. */
static uint32_t mod_writable(const struct nfs4_svc *s, const struct nfs4_obj *ob)
{
	if (ob->kind == NFS4_OBJ_PSEUDO)
		return NFS4ERR_ROFS;
	if (s->call && !(ob->opts && ob->opts->rw))
		return NFS4ERR_ROFS;
	return NFS4_OK;
}

/* fh as a directory whose entries change (NOTDIR otherwise, RFC 8881 §18.4.3,
 * §18.25.3, §18.26.3); ob is to be put by the caller in every case. */
static uint32_t mod_dir_open(struct nfs4_ctx *x, const struct nfs_fh *fh, struct nfs4_obj *ob)
{
	uint32_t status = nfs4_obj_open(x->priv, fh, ob);

	if (status == NFS4_OK && ob->kind == NFS4_OBJ_EXPORT && ob->attr.type != BE_DIR)
		status = NFS4ERR_NOTDIR;
	return status;
}

/* A component4 checked (RFC 8881 §14.5) and copied as a C string. */
static uint32_t mod_name(const struct nfs4_name *n, char out[NFS4_NAME_MAX + 1])
{
	uint32_t status = nfs4_name_check(n);

	if (status == NFS4_OK) {
		memcpy(out, n->s, n->len);
		out[n->len] = '\0';
	}
	return status;
}

void nfs4_mod_begin(struct nfs4_obj *dir, struct nfs4_obj *dir2, struct nfs4_dirlock *h)
{
	struct be_attr now;

	nfs4_dirlock_take(h, dir->attr.fileid, dir2 ? &dir2->attr.fileid : NULL);
	if (be_getattr(dir->exp->fs, &dir->o, &now) == 0 && (now.valid & BE_AT_CHANGE))
		dir->attr = now;
	if (dir2 && be_getattr(dir2->exp->fs, &dir2->o, &now) == 0 && (now.valid & BE_AT_CHANGE))
		dir2->attr = now;
}

void nfs4_mod_done(const struct nfs4_obj *dir, struct nfs4_cinfo *c, const struct nfs4_dirlock *h)
{
	struct be_attr post;

	/* RFC 8881 §3.3.6: atomic when no other change can have fallen between before and after */
	c->atomic = h && h->held && dir->exp->fs->one_server;
	c->before = dir->attr.change;
	c->after = be_getattr(dir->exp->fs, &dir->o, &post) == 0 && (post.valid & BE_AT_CHANGE) ? post.change
												 : c->before;
	if (!dir->opts || dir->opts->sync)
		(void)be_commit_meta(dir->exp->fs, &dir->o); /* failures are logged by the backend */
}

/* createtype4 -> what the backend makes (RFC 8881 §18.4.3). */
static uint32_t create_how(const struct nfs4_create_args *a, char *link, struct be_create *how)
{
	how->how = BE_CREATE_GUARDED;
	how->sa = a->attrs.sa;
	switch (a->type) {
	case NF4DIR: how->type = BE_DIR; break;
	case NF4LNK:
		/* linktext4: the symlink's contents; a zero-length one is INVAL (§18.4.3). */
		if (a->linkdata.len == 0 || memchr(a->linkdata.s, 0, a->linkdata.len))
			return NFS4ERR_INVAL;
		if (a->linkdata.len >= NFS4_LINK_MAX)
			return NFS4ERR_NAMETOOLONG;
		memcpy(link, a->linkdata.s, a->linkdata.len);
		link[a->linkdata.len] = '\0';
		how->type = BE_LNK;
		how->target = link;
		break;
	case NF4BLK:
	case NF4CHR:
		how->rdev_major = a->major;
		how->rdev_minor = a->minor;
		/* fall through */
	case NF4SOCK:
	case NF4FIFO: how->type = (enum be_type)a->type; break; /* nfs_ftype4 numbers are enum be_type's */
	default:
		return NFS4ERR_BADTYPE; /* §18.4.3: regular files are made by OPEN; named attributes unsupported */
	}
	/* A size for a directory, a symlink or a device means nothing. */
	if (how->sa.mask & BE_SET_SIZE)
		return NFS4ERR_INVAL;
	if (!(how->sa.mask & BE_SET_MODE) && how->type != BE_LNK) {
		how->sa.mask |= BE_SET_MODE;
		how->sa.mode = how->type == BE_DIR ? NFS4_CREATE_DIR_MODE : NFS4_CREATE_NODE_MODE;
	}
	return NFS4_OK;
}

/* RFC 8881 §18.4.3: the new object becomes the current filehandle. */
uint32_t nfs4_create_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_create_args *a = args;
	struct nfs4_create_res *r = res;
	struct nfs4_svc *s = x->priv;
	struct be_create how = { 0 };
	struct nfs4_dirlock h = { 0 };
	struct be_obj obj = BE_OBJ_INIT;
	struct be_attr attr;
	struct nfs4_obj dir;
	char name[NFS4_NAME_MAX + 1];
	bool existed = false;
	uint32_t status;

	status = mod_dir_open(x, &x->cur.fh, &dir);
	if (status == NFS4_OK)
		status = mod_name(&a->name, name);
	if (status == NFS4_OK)
		status = mod_writable(s, &dir);
	if (status == NFS4_OK)
		status = a->attrs_status;
	if (status == NFS4_OK)
		status = create_how(a, s->link, &how);
	/* RFC 8881 §10.9.1: a new entry recalls other clients' directory delegations first. */
	if (status == NFS4_OK)
		status = nfs4_deleg_dir_break(x, &x->cur.fh, NFS_DIR_ADD);
	if (status == NFS4_OK) {
		nfs4_mod_begin(&dir, NULL, &h);
		status = nfs_errno_to_nfsstat4(
			be_create(dir.exp->fs, &dir.cred, &dir.o, name, &how, &obj, &attr, &existed));
	}
	if (status == NFS4_OK) {
		nfs4_mod_done(&dir, &r->cinfo, &h);
		nfs4_deleg_dir_added(&x->cur.fh, name); /* RFC 8881 §10.9.2 (the handle still the directory) */
		r->attrset = a->attrs.attrsset;
		/* Made, but already gone again: there is no object to name. */
		status = be_obj_valid(&obj) ? nfs4_fh_obj(&dir, &obj, &x->cur.fh) : NFS4ERR_NOENT;
	}
	nfs4_dirlock_drop(&h);
	if (dir.exp)
		be_obj_put(dir.exp->fs, &obj);
	nfs4_obj_put(&dir);
	return status;
}

/* RFC 8881 §18.25.3: a file or an (empty: NOTEMPTY) directory. */
uint32_t nfs4_remove_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_rename_args *a = args;
	struct nfs4_cinfo_res *r = res;
	struct nfs4_dirlock h = { 0 };
	struct nfs4_obj dir;
	char name[NFS4_NAME_MAX + 1];
	uint32_t status;
	int err;

	status = mod_dir_open(x, &x->cur.fh, &dir);
	if (status == NFS4_OK)
		status = mod_name(&a->oldname, name);
	if (status == NFS4_OK)
		status = mod_writable(x->priv, &dir);
	/* RFC 8881 §8.4.2: the object may carry state a client is yet to reclaim. */
	if (status == NFS4_OK)
		status = nfs4_grace_check(NFS4_GRACE_REMOVE, NULL, 0, false);
	/* RFC 8881 §10.9.1: other clients' delegations of the directory are recalled first (but those
	 * granted NOTIFY4_REMOVE_ENTRY, told after: §18.25.4); then §10.4.1: the removed file's (§10.9: or
	 * delegated directory's), and §12.5.5: other clients' layouts of it (no wait); one lookup of the
	 * name for both */
	if (status == NFS4_OK)
		status = nfs4_deleg_dir_break(x, &x->cur.fh, NFS_DIR_REMOVE);
	if (status == NFS4_OK && dir.exp)
		status = nfs4_name_recall(dir.exp, &dir.cred, &dir.o, name, nfs4_deleg_caller(x), true);
	if (status != NFS4_OK) {
		nfs4_obj_put(&dir);
		return status;
	}
	nfs4_mod_begin(&dir, NULL, &h);
	err = be_remove(dir.exp->fs, &dir.cred, &dir.o, name);
	if (err == EISDIR)
		err = be_rmdir(dir.exp->fs, &dir.cred, &dir.o, name);
	status = nfs_errno_to_nfsstat4(err == EEXIST ? ENOTEMPTY : err); /* rmdir(2) may say either */
	if (status == NFS4_OK) {
		const struct nfs_dir_note n = { .kind = NFS_DIR_REMOVE, .name = name };

		nfs4_mod_done(&dir, &r->cinfo, &h);
		nfs4_deleg_dir_note(&x->cur.fh, &n); /* RFC 8881 §18.25.4, §20.4.3 */
	}
	nfs4_dirlock_drop(&h);
	nfs4_obj_put(&dir);
	return status;
}

/* The saved and current filehandles on one export (RFC 8881 §18.9.3,
 * §18.26.3: XDEV across file systems; each export is one, as its fsid says). */
static uint32_t mod_same_fs(const struct nfs4_obj *from, const struct nfs4_obj *to)
{
	if (from->kind != to->kind || from->exp != to->exp)
		return NFS4ERR_XDEV;
	return NFS4_OK;
}

/*
 * RFC 8881 §2.6.3.1.2: LINK's and RENAME's saved filehandle is opened under
 * any flavor. On another export than the current filehandle's it is XDEV
 * (mod_same_fs), never WRONGSEC, which would send the client back and forth
 * between SECINFO and the operation; on the same export the put filehandle
 * operation checked the flavor already.
 */
static void mod_saved_any_flavor(struct nfs4_ctx *x, bool on)
{
	((struct nfs4_svc *)x->priv)->any_flavor = on;
}

/* The file dir/name's fileid (0: none). */
static uint64_t rename_fileid(const struct nfs4_obj *dir, const char *name)
{
	struct be_obj o = BE_OBJ_INIT;
	struct be_attr at;
	uint64_t id = be_lookup(dir->exp->fs, &dir->cred, &dir->o, name, &o, &at) == 0 ? o.fileid : 0;

	if (be_obj_valid(&o))
		be_obj_put(dir->exp->fs, &o);
	return id;
}

/* What a RENAME of from/oldname to to/newname will do to newname, looked up only while a directory is
 * delegated: RN_NEW (no entry there), RN_REPLACES (one replaced, RFC 8881 §18.26.4: told in the add's
 * nad_old_entry), RN_SAME (both name the same file: §18.26.3, nothing done, nothing told). */
enum rename_target { RN_NEW, RN_REPLACES, RN_SAME };
static enum rename_target rename_target(const struct nfs4_obj *from, const char *oldname, const struct nfs4_obj *to,
					const char *newname)
{
	uint64_t target;

	if (!nfs4_deleg_dir_any() || (target = rename_fileid(to, newname)) == 0)
		return RN_NEW;
	return rename_fileid(from, oldname) == target ? RN_SAME : RN_REPLACES;
}

/* RFC 8881 §18.26.4: a RENAME within one directory is one NOTIFY4_RENAME_ENTRY (none when both names
 * are the same file: nothing done); across two, NOTIFY4_REMOVE_ENTRY to the source's holders and
 * NOTIFY4_ADD_ENTRY to the target's. */
static void rename_note(struct nfs4_ctx *x, bool same, const char *oldname, const char *newname,
			enum rename_target target)
{
	bool replaced = target == RN_REPLACES;
	const struct nfs_dir_note mv = { .kind = NFS_DIR_RENAME, .name = oldname, .newname = newname,
					 .replaced = replaced };
	const struct nfs_dir_note rm = { .kind = NFS_DIR_REMOVE, .name = oldname };
	const struct nfs_dir_note add = { .kind = NFS_DIR_ADD, .name = newname, .replaced = replaced };

	if (target == RN_SAME || (same && strcmp(oldname, newname) == 0))
		return;
	if (same) {
		nfs4_deleg_dir_note(&x->cur.fh, &mv);
	} else {
		nfs4_deleg_dir_note(&x->saved.fh, &rm);
		nfs4_deleg_dir_note(&x->cur.fh, &add);
	}
}

/* RFC 8881 §18.26.3: SAVEFH is the source directory, CURRENT the target's. */
uint32_t nfs4_rename_exec(struct nfs4_ctx *x, void *args, void *res)
{
	struct nfs4_dirlock h = { 0 };
	const struct nfs4_rename_args *a = args;
	struct nfs4_rename_res *r = res;
	struct nfs4_obj from, to;
	char oldname[NFS4_NAME_MAX + 1], newname[NFS4_NAME_MAX + 1];
	enum rename_target target = RN_NEW;
	bool same;
	uint32_t status;
	int err;

	if (!x->saved.set)
		return NFS4ERR_NOFILEHANDLE;
	same = x->saved.fh.len == x->cur.fh.len && memcmp(x->saved.fh.data, x->cur.fh.data, x->cur.fh.len) == 0;
	mod_saved_any_flavor(x, true);
	status = mod_dir_open(x, &x->saved.fh, &from);
	mod_saved_any_flavor(x, false);
	if (status == NFS4_OK)
		status = mod_dir_open(x, &x->cur.fh, &to);
	else
		memset(&to, 0, sizeof(to));
	if (status == NFS4_OK)
		status = mod_name(&a->oldname, oldname);
	if (status == NFS4_OK)
		status = mod_name(&a->newname, newname);
	if (status == NFS4_OK)
		status = mod_same_fs(&from, &to);
	if (status == NFS4_OK)
		status = mod_writable(x->priv, &to);
	if (status == NFS4_OK) /* RFC 8881 §8.4.2, as REMOVE */
		status = nfs4_grace_check(NFS4_GRACE_RENAME, NULL, 0, false);
	/* RFC 8881 §10.9.1: other clients' delegations of both directories first (but those granted the
	 * notification, §18.26.4: told after); §10.4.1: then the renamed file (§10.9: or delegated
	 * directory) and the one it replaces; §12.5.5: the replaced one's layouts too, as REMOVE's (the
	 * renamed one keeps its handle: its layouts stay good) */
	if (status == NFS4_OK)
		status = nfs4_deleg_dir_break(x, &x->saved.fh, same ? NFS_DIR_RENAME : NFS_DIR_REMOVE);
	if (status == NFS4_OK)
		status = nfs4_deleg_dir_break(x, &x->cur.fh, same ? NFS_DIR_RENAME : NFS_DIR_ADD);
	if (status == NFS4_OK)
		status = nfs4_deleg_break_name(x, &from, oldname);
	if (status == NFS4_OK && to.exp)
		status = nfs4_name_recall(to.exp, &to.cred, &to.o, newname, nfs4_deleg_caller(x), true);
	if (status == NFS4_OK) {
		target = rename_target(&from, oldname, &to, newname);
		nfs4_mod_begin(&from, &to, &h);
		err = be_rename(to.exp->fs, &to.cred, &from.o, oldname, &to.o, newname);
		/* §18.26.3: a directory over a non-directory or the reverse is EXIST. */
		status = nfs_errno_to_nfsstat4(err == EISDIR || err == ENOTDIR ? EEXIST : err);
	}
	if (status == NFS4_OK) {
		nfs4_mod_done(&from, &r->source, &h);
		nfs4_mod_done(&to, &r->target, &h);
		rename_note(x, same, oldname, newname, target);
	}
	nfs4_dirlock_drop(&h);
	nfs4_obj_put(&to);
	nfs4_obj_put(&from);
	return status;
}

/* RFC 8881 §18.9.3: SAVEFH is the object, CURRENT the directory of the new name. */
uint32_t nfs4_link_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_rename_args *a = args;
	struct nfs4_cinfo_res *r = res;
	struct nfs4_dirlock h = { 0 };
	struct nfs4_obj src, dir;
	char name[NFS4_NAME_MAX + 1];
	uint32_t status;

	if (!x->saved.set)
		return NFS4ERR_NOFILEHANDLE;
	mod_saved_any_flavor(x, true);
	status = nfs4_obj_open(x->priv, &x->saved.fh, &src);
	mod_saved_any_flavor(x, false);
	if (status == NFS4_OK)
		status = mod_dir_open(x, &x->cur.fh, &dir);
	else
		memset(&dir, 0, sizeof(dir));
	if (status == NFS4_OK)
		status = mod_name(&a->oldname, name);
	if (status == NFS4_OK)
		status = mod_same_fs(&src, &dir);
	if (status == NFS4_OK && (src.kind == NFS4_OBJ_PSEUDO || src.attr.type == BE_DIR))
		status = NFS4ERR_ISDIR; /* §18.9.3: no hard links to directories */
	if (status == NFS4_OK)
		status = mod_writable(x->priv, &dir);
	/* RFC 8881 §10.4.1: a new name for a delegated file recalls the delegation. */
	if (status == NFS4_OK)
		status = nfs4_deleg_break(x->saved.fh.data, x->saved.fh.len, nfs4_deleg_caller(x), NFS4_DL_ACC_NS);
	if (status == NFS4_OK) /* RFC 8881 §10.9.1: the new name's directory */
		status = nfs4_deleg_dir_break(x, &x->cur.fh, NFS_DIR_ADD);
	if (status == NFS4_OK) {
		nfs4_mod_begin(&dir, NULL, &h);
		status = nfs_errno_to_nfsstat4(be_link(dir.exp->fs, &dir.cred, &src.o, &dir.o, name));
	}
	if (status == NFS4_OK) {
		nfs4_mod_done(&dir, &r->cinfo, &h);
		nfs4_deleg_dir_added(&x->cur.fh, name); /* RFC 8881 §10.9.2 */
	}
	nfs4_dirlock_drop(&h);
	nfs4_obj_put(&dir);
	nfs4_obj_put(&src);
	return status;
}

/*
 * May SETATTR change the size of ob with this stateid (RFC 8881 §18.30.3,
 * §8.2.3, §9.1.4)? The special stateids as for a stateless WRITE (another
 * owner's deny of writes refuses it: SHARE_DENIED), an open or lock stateid
 * of this file with write access (OPENMODE otherwise), the 4.1 current
 * stateid (§16.2.3.1.2); the open state's errors (BAD/OLD/STALE_STATEID,
 * EXPIRED) as for WRITE.
 */
static uint32_t nfs4_setattr_size_stateid(struct nfs4_ctx *x, uint32_t seqid, const uint8_t other[12],
					  const struct nfs4_obj *ob)
{
	struct nfs4_stateid in = { .seqid = seqid }, sid;
	struct nfs4_sid_io io = { .file = NULL };
	uint32_t status;

	(void)ob;
	memcpy(in.other, other, sizeof(in.other));
	status = nfs4_stateid_resolve(x, &in, &sid);
	if (status != NFS4_OK)
		return status;
	switch (nfs4_stateid_kind(&sid, x->minorversion)) {
	case NFS4_SID_ANON:
	case NFS4_SID_BYPASS:
		return nfs4_stab_check_anon(&nfs4_srv(x)->stab, x->cur.fh.data, x->cur.fh.len, NFS4_SHARE_ACCESS_WRITE);
	case NFS4_SID_ORDINARY:
		/* RFC 8881 §18.30.3, §10.4: a write delegation's stateid (the Linux
		 * client truncates with it) as for WRITE. */
		status = nfs4_dtab_is_deleg(&sid) ? nfs4_deleg_check_io(nfs4_sid_client(x, &sid), &sid, x->minorversion,
									 x->cur.fh.data, x->cur.fh.len, NFS4_SHARE_ACCESS_WRITE)
			 : nfs4_stab_check_io(&nfs4_srv(x)->stab, nfs4_sid_client(x, &sid), &sid, x->minorversion,
					    x->cur.fh.data, x->cur.fh.len, NFS4_SHARE_ACCESS_WRITE, &io);
		if (status == NFS4_OK && io.file)
			be_file_put(io.fs, io.file);
		if (status == NFS4_OK)
			nfs4_stateid_renew(x, &sid);
		return status;
	default:
		return NFS4ERR_BAD_STATEID;
	}
}

/* Whose SETATTR, for delegation conflicts: the stateid's client, else the session's. */
static uint64_t setattr_caller(const struct nfs4_ctx *x, const struct nfs4_setattr_args *a)
{
	struct nfs4_stateid sid = { .seqid = a->sid_seqid };

	memcpy(sid.other, a->sid_other, sizeof(sid.other));
	return nfs4_stateid_kind(&sid, x->minorversion) == NFS4_SID_ORDINARY ? nfs4_sid_client(x, &sid)
										: nfs4_deleg_caller(x);
}

/*
 * RFC 9754 §5.2: time_deleg_access / time_deleg_modify, a 4.2 attribute
 * (ATTRNOTSUPP before, RFC 8881 §18.30.3) of a regular file, set only by the
 * holder of an *_ATTRS_DELEG delegation of it with that delegation's stateid
 * (nfs4_dtab_set_times: BAD_STATEID otherwise). The times it reports are
 * vetted into *sa (one before the grant's is dropped, one past now is now).
 */
static uint32_t setattr_deleg_times(struct nfs4_ctx *x, const struct nfs4_setattr_args *a, const struct nfs4_obj *ob,
				    struct be_sattr *sa)
{
	struct nfs4_stateid in = { .seqid = a->sid_seqid }, sid;
	struct nfs4_dl_times tm = { .has_atime = a->attrs.deleg_atime, .has_mtime = a->attrs.deleg_mtime,
				    .atime = { sa->atime.sec, sa->atime.nsec },
				    .mtime = { sa->mtime.sec, sa->mtime.nsec } };
	struct timespec ts;
	uint32_t status;

	if (x->minorversion < 2)
		return NFS4ERR_ATTRNOTSUPP;
	if (ob->attr.type != BE_REG)
		return NFS4ERR_INVAL;
	memcpy(in.other, a->sid_other, sizeof(in.other));
	status = nfs4_stateid_resolve(x, &in, &sid);
	if (status != NFS4_OK)
		return status;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct nfs4_dl_time now = { ts.tv_sec, (uint32_t)ts.tv_nsec };

	status = nfs4_deleg_set_times(nfs4_sid_client(x, &sid), &sid, x->minorversion, x->cur.fh.data, x->cur.fh.len,
				      &now, &tm);
	if (status != NFS4_OK)
		return status;
	if (a->attrs.deleg_atime) {
		sa->mask &= tm.has_atime ? ~0u : ~(uint32_t)BE_SET_ATIME;
		sa->atime = (struct be_time){ .sec = tm.atime.sec, .nsec = tm.atime.nsec };
	}
	if (a->attrs.deleg_mtime) {
		sa->mask &= tm.has_mtime ? ~0u : ~(uint32_t)BE_SET_MTIME;
		sa->mtime = (struct be_time){ .sec = tm.mtime.sec, .nsec = tm.mtime.nsec };
	}
	nfs4_stateid_renew(x, &sid);
	return NFS4_OK;
}

/* RFC 8881 §20.4.1: a directory's attributes set: NOTIFY4_CHANGE_DIR_ATTRS with its new values to the
 * holders of its delegations granted it (the setter's own too, as its entry changes, §20.4.3). */
static void setattr_dir_note(struct nfs4_ctx *x, struct nfs4_obj *ob, struct be_attr *post)
{
	struct nfs_dir_note n = { .kind = NFS_DIR_ATTRS, .attrs = post };

	if (!nfs4_deleg_dir_any())
		return;
	if (!post->valid && be_getattr(ob->exp->fs, &ob->o, post) != 0)
		post->valid = 0; /* not to be told: its holders are recalled (notify_args) */
	nfs4_deleg_dir_note(&x->cur.fh, &n);
}

/* RFC 8881 §18.30.3: the attributes in one go; attrsset only on success. */
uint32_t nfs4_setattr_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_setattr_args *a = args;
	struct nfs4_setattr_res *r = res;
	struct be_sattr sa = a->attrs.sa;
	struct nfs4_obj ob;
	struct be_attr post = { .valid = 0 };
	uint32_t status;

	status = nfs4_obj_open(x->priv, &x->cur.fh, &ob);
	if (status == NFS4_OK)
		status = a->attrs_status;
	if (status == NFS4_OK && (a->attrs.deleg_atime || a->attrs.deleg_mtime))
		status = setattr_deleg_times(x, a, &ob, &sa);
	if (status == NFS4_OK)
		status = mod_writable(x->priv, &ob);
	if (status == NFS4_OK && (a->attrs.sa.mask & BE_SET_SIZE)) {
		/* A size only means something for a regular file (§5.8.1.5). */
		if (ob.attr.type == BE_DIR)
			status = NFS4ERR_ISDIR;
		else if (ob.attr.type != BE_REG)
			status = NFS4ERR_INVAL;
		else /* RFC 8881 §8.4.2: a size change may conflict with reclaimable locks */
			status = nfs4_grace_check(NFS4_GRACE_SETATTR, NULL, 0, false);
		if (status == NFS4_OK)
			status = nfs4_setattr_size_stateid(x, a->sid_seqid, a->sid_other, &ob);
	}
	/* RFC 8881 §10.4.1: changing a delegated file's attributes recalls the delegation. */
	/* RFC 9754 §5: the delegated times alone are the holder's to set: they recall no
	 * other client's read delegation (as knfsd's ATTR_DELEG). */
	uint32_t deleg_only = (a->attrs.deleg_atime ? BE_SET_ATIME : 0) | (a->attrs.deleg_mtime ? BE_SET_MTIME : 0);

	if (status == NFS4_OK && (sa.mask & ~deleg_only) && ob.attr.type == BE_REG)
		status = nfs4_deleg_break(x->cur.fh.data, x->cur.fh.len, setattr_caller(x, a), NFS4_DL_ACC_WRITE);
	/* RFC 8881 §10.9.1: a directory's attributes changed by another client: its delegations recalled,
	 * but those granted NOTIFY4_CHANGE_DIR_ATTRS (told after, §20.4.1) */
	bool dir = sa.mask && ob.kind == NFS4_OBJ_EXPORT && ob.attr.type == BE_DIR;

	if (status == NFS4_OK && dir)
		status = nfs4_deleg_dir_break(x, &x->cur.fh, NFS_DIR_ATTRS);
	/* RFC 8881 §12.5.5: a truncate recalls other clients' layouts of the file (no wait) */
	if (status == NFS4_OK && (sa.mask & BE_SET_SIZE))
		nfs4_pnfs_recall_file(x->cur.fh.data, x->cur.fh.len, nfs4_deleg_caller(x), NULL);
	if (status == NFS4_OK && sa.mask)
		status = nfs_errno_to_nfsstat4(be_setattr(ob.exp->fs, &ob.cred, &ob.o, &sa, NULL, NULL, &post));
	if (status == NFS4_OK && dir)
		setattr_dir_note(x, &ob, &post);
	if (status == NFS4_OK)
		r->attrsset = a->attrs.attrsset;
	nfs4_obj_put(&ob);
	return status;
}

/* Are the client's attribute values those of the current object, byte for
 * byte (RFC 8881 §18.31.3)? A status, or NFS4_OK with *same. */
static uint32_t verify_same(struct nfs4_ctx *x, const struct nfs4_verify_args *a, bool *same)
{
	struct nfs4_getattr_args ga = { .req = a->req };
	struct nfs4_getattr_res gr;
	struct nfs4_bitmap sup;
	uint8_t buf[NFS4_OP_SCRATCH];
	struct xdr_enc e;
	uint32_t status, hdr = 4 + 4 * NFS4_BITMAP_WORDS; /* nfs4_attr_encode's mask */

	/* §18.31.3: attributes the server does not support are ATTRNOTSUPP; the
	 * write-only ones and rdattr_error (meaningful only in READDIR) INVAL. */
	if (a->extra_words)
		return NFS4ERR_ATTRNOTSUPP;
	if (!nfs4_attr_req_ok(&a->req) || nfs4_bitmap_isset(&a->req, FATTR4_RDATTR_ERROR))
		return NFS4ERR_INVAL;
	nfs4_attr_supported(x->minorversion, &sup);
	for (uint32_t i = 0; i < NFS4_BITMAP_WORDS; i++)
		if (a->req.w[i] & ~sup.w[i])
			return NFS4ERR_ATTRNOTSUPP;
	/* RFC 8881 §15.1.1.3: a value short or malformed for its attribute's
	 * type does not decode (a 1-byte mode is not a prefix to compare). */
	if (!nfs4_attr_vals_dec(x->minorversion, &a->req, a->vals, a->vals_len))
		return NFS4ERR_BADXDR;
	memset(&gr, 0, sizeof(gr));
	status = nfs4_getattr_exec(x, &ga, &gr);
	if (status != NFS4_OK)
		return status;
	xdr_enc_init(&e, buf, sizeof(buf));
	nfs4_getattr_enc(x, &e, NFS4_OK, &gr);
	*same = false;
	if (e.overflow || xdr_enc_len(&e) != hdr + 4 + (size_t)a->vals_len)
		return NFS4_OK; /* (a value the server could not give is not the same either) */
	for (uint32_t i = 0; i < NFS4_BITMAP_WORDS; i++)
		if (memcmp(buf + 4 + 4 * i, (uint8_t[4]){ a->req.w[i] >> 24, a->req.w[i] >> 16, a->req.w[i] >> 8,
							  a->req.w[i] },
			   4) != 0)
			return NFS4_OK;
	*same = memcmp(buf + hdr + 4, a->vals, a->vals_len) == 0;
	return NFS4_OK;
}

/* RFC 8881 §18.31.3: NOT_SAME unless every value matches. */
uint32_t nfs4_verify_exec(struct nfs4_ctx *x, void *args, void *res)
{
	bool same = false;
	uint32_t status = verify_same(x, args, &same);

	(void)res;
	return status != NFS4_OK ? status : same ? NFS4_OK : NFS4ERR_NOT_SAME;
}

/* RFC 8881 §18.15.3: SAME when every value matches. */
uint32_t nfs4_nverify_exec(struct nfs4_ctx *x, void *args, void *res)
{
	bool same = false;
	uint32_t status = verify_same(x, args, &same);

	(void)res;
	return status != NFS4_OK ? status : same ? NFS4ERR_SAME : NFS4_OK;
}
