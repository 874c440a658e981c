/*
 * nfs3_proc_create.c - making new objects: CREATE (RFC 1813 §3.3.8), MKDIR
 * (§3.3.9), SYMLINK (§3.3.10), MKNOD (§3.3.11).
 *
 * Each asks the backend to make the object as the caller in the parent
 * directory (so write and search permission there are checked and the new
 * object gets the caller's ownership), with the sattr3 the client sent, and
 * answers the new object's handle and attributes plus the directory's
 * wcc_data. Modes are taken as sent (the client applied its umask); a
 * client that sends none gets a mode its owner can use.
 *
 * CREATE and MKDIR are RPC_RUN_INLINE_CALLER: on the receiving thread only while
 * a backend may act as the caller there (be_caller_here: the local driver's
 * [rnfsd] uring-calls), and declined to a worker, before anything changed,
 * on an error of the handle or when the backend says EWOULDBLOCK. An NFSv4
 * client's delegation of the directory is recalled first (NFS3ERR_JUKEBOX
 * until it is returned), on a worker.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "core/loop.h"
#include "nfs/v3/nfs3.h"

/* Mode for a new object when the client sent none (knfsd would use 0; this stays usable by its owner). */
#define NFS3_DEFAULT_FILE_MODE 0600u
#define NFS3_DEFAULT_DIR_MODE 0700u

struct nfs3_newobj {
	struct nfs3_call nc;
	struct be_obj dir;
	char name[BE_NAME_MAX + 1];
	const struct nfs_fh *dfh;  /* the directory's handle (the call's arguments) */
	bool here;                 /* on the receiving thread (may decline) */
	bool declined;             /* here, and a worker must do it: nothing changed */
};

/* Common prologue: the directory (wcc pre), ROFS, the name. */
static uint32_t nfs3_newobj_begin(struct nfs3_newobj *o, struct rpc_call *c, const struct nfs3_diropargs *where,
				  struct nfs3_newobj_res *r)
{
	uint32_t status;

	o->dir = (struct be_obj)BE_OBJ_INIT;
	o->dfh = &where->dir;
	o->here = loop_is_loop_thread();
	o->declined = false;
	nfs3_call_begin(&o->nc, c);
	status = nfs3_call_open_dir(&o->nc, &where->dir, &o->dir, &r->dir.pre);
	if (status == NFS3_OK)
		status = nfs3_call_writable(&o->nc);
	if (status == NFS3_OK)
		status = nfs3_name_copy(&where->name, o->name);
	if (status != NFS3_OK && !be_obj_valid(&o->dir))
		r->dir.pre.valid = 0; /* NOTDIR's attributes are not the directory's wcc */
	/* errors of the handle are answered on a worker, and a directory delegation's recall made there */
	o->declined = o->here && (status != NFS3_OK || nfs_deleg_dir_any());
	/* RFC 8881 §10.9.1: a new entry recalls NFSv4 clients' delegations of the directory first (those
	 * told of new entries are told once it is made, nfs3_newobj_make) */
	if (status == NFS3_OK && !o->declined &&
	    nfs_deleg_dir_changed(where->dir.data, where->dir.len, NFS_DIR_ADD) != NFS_DELEG_CLEAR)
		status = NFS3ERR_JUKEBOX;
	return status;
}

/* Make the object described by how; its handle (optional in the reply: post_op_fh3) and attributes. */
static uint32_t nfs3_newobj_make(struct nfs3_newobj *o, const struct be_create *how, struct nfs3_newobj_res *r,
				 bool *existed)
{
	struct be_obj obj = BE_OBJ_INIT;
	uint32_t status;
	int err = be_create(o->nc.fs, &o->nc.cred, &o->dir, o->name, how, &obj, &r->attr, existed);

	if (o->here && err == EWOULDBLOCK) {
		o->declined = true;
		return NFS3ERR_JUKEBOX; /* not answered: the call goes to a worker */
	}
	status = nfs3_stat(err);
	if (status == NFS3_OK && !*existed)
		nfs_deleg_dir_note1(o->dfh->data, o->dfh->len, NFS_DIR_ADD, o->name); /* RFC 8881 §20.4: CB_NOTIFY */
	if (status == NFS3_OK && be_obj_valid(&obj)) /* else created, but already gone: no handle */
		r->have_fh = nfs3_call_fh(&o->nc, &obj, &r->fh) == NFS3_OK;
	if (status == NFS3_OK && *existed && (how->sa.mask & BE_SET_SIZE) && be_obj_valid(&obj)) {
		/* §3.3.8 UNCHECKED over an existing regular file: only a size (truncation) is applied (as knfsd) */
		struct be_sattr size = { .mask = BE_SET_SIZE, .size = how->sa.size };

		status = nfs3_stat(be_setattr(o->nc.fs, &o->nc.cred, &obj, &size, NULL, NULL, &r->attr));
	}
	nfs3_call_put(&o->nc, &obj);
	return status;
}

/* Epilogue: sync the directory, its wcc post, release; or a declined call to a worker. */
static enum rpc_proc_status nfs3_newobj_end(struct nfs3_newobj *o, struct nfs3_newobj_res *r)
{
	if (o->declined) {
		nfs3_call_put(&o->nc, &o->dir);
		nfs3_call_end(&o->nc);
		return RPC_PROC_WORKER;
	}
	if (r->status == NFS3_OK)
		nfs3_call_commit_meta(&o->nc, &o->dir);
	nfs3_call_getattr(&o->nc, &o->dir, &r->dir.post);
	r->fsid = nfs3_call_fsid(&o->nc);
	nfs3_call_put(&o->nc, &o->dir);
	nfs3_call_end(&o->nc);
	return RPC_PROC_OK;
}

/* CREATE3resok / MKDIR3resok / ...: post_op_fh3, post_op_attr, wcc_data; resfail: wcc_data. */
void nfs3_newobj_enc(struct rpc_call *c, const void *res)
{
	const struct nfs3_newobj_res *r = res;

	nfs3_enc_status(c, r->status);
	if (r->status == NFS3_OK) {
		nfs3_enc_post_op_fh(&c->res, r->have_fh ? &r->fh : NULL);
		nfs3_enc_post_op_attr(&c->res, &r->attr, r->fsid);
	}
	nfs3_enc_wcc(&c->res, &r->dir, r->fsid);
}

/* The mode at creation: the client's, else a default. */
static struct be_sattr nfs3_sattr_with_mode(const struct be_sattr *sa, uint32_t dflt)
{
	struct be_sattr r = *sa;

	if (!(r.mask & BE_SET_MODE)) {
		r.mask |= BE_SET_MODE;
		r.mode = dflt;
	}
	r.mode &= 07777;
	return r;
}

/*
 * §3.3.8. EXCLUSIVE: the backend keeps the verifier with the file (local: in
 * its atime and mtime, as knfsd), so a retransmission succeeds with the same
 * file and any other existing file is EXIST. GUARDED: an existing name is
 * EXIST. UNCHECKED: an existing regular file is reused.
 */
enum rpc_proc_status nfs3_create_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_create_args *a = args;
	struct nfs3_newobj_res *r = res;
	struct be_create how = { .type = BE_REG };
	struct nfs3_newobj o;
	bool existed = false;

	if (loop_is_loop_thread() && !be_caller_here())
		return RPC_PROC_WORKER;
	switch (a->mode) {
	case NFS3_CREATE_EXCLUSIVE:
		how.how = BE_CREATE_EXCLUSIVE;
		memcpy(how.verf, a->verf, sizeof(how.verf));
		how.sa = (struct be_sattr){ .mask = BE_SET_MODE, .mode = NFS3_DEFAULT_FILE_MODE };
		break;
	case NFS3_CREATE_UNCHECKED:
		how.how = BE_CREATE_UNCHECKED;
		how.sa = nfs3_sattr_with_mode(&a->sa, NFS3_DEFAULT_FILE_MODE);
		break;
	default:
		how.how = BE_CREATE_GUARDED;
		how.sa = nfs3_sattr_with_mode(&a->sa, NFS3_DEFAULT_FILE_MODE);
	}
	r->status = nfs3_newobj_begin(&o, c, &a->where, r);
	if (r->status == NFS3_OK)
		r->status = nfs3_newobj_make(&o, &how, r, &existed);
	return nfs3_newobj_end(&o, r);
}

/* §3.3.9 */
enum rpc_proc_status nfs3_mkdir_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_mkdir_args *a = args;
	struct nfs3_newobj_res *r = res;
	struct be_create how = { .type = BE_DIR, .sa = nfs3_sattr_with_mode(&a->sa, NFS3_DEFAULT_DIR_MODE) };
	struct nfs3_newobj o;
	bool existed = false;

	if (loop_is_loop_thread() && !be_caller_here())
		return RPC_PROC_WORKER;
	r->status = nfs3_newobj_begin(&o, c, &a->where, r);
	if (r->status == NFS3_OK)
		r->status = nfs3_newobj_make(&o, &how, r, &existed);
	return nfs3_newobj_end(&o, r);
}

/* §3.3.10: a symlink's mode is fixed on Linux (not applied) */
enum rpc_proc_status nfs3_symlink_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_symlink_args *a = args;
	struct nfs3_newobj_res *r = res;
	struct be_create how = { .type = BE_LNK, .sa = a->sa };
	char target[PATH_MAX];
	struct nfs3_newobj o;
	bool existed = false;

	how.sa.mask &= ~BE_SET_MODE;
	r->status = nfs3_newobj_begin(&o, c, &a->where, r);
	if (r->status == NFS3_OK && a->path_len >= PATH_MAX)
		r->status = NFS3ERR_NAMETOOLONG;
	if (r->status == NFS3_OK && (a->path_len == 0 || memchr(a->path, '\0', a->path_len)))
		r->status = NFS3ERR_INVAL; /* nfspath3 cannot carry NUL; an empty target is refused by Linux */
	if (r->status == NFS3_OK) {
		memcpy(target, a->path, a->path_len);
		target[a->path_len] = '\0';
		how.target = target;
		r->status = nfs3_newobj_make(&o, &how, r, &existed);
	}
	return nfs3_newobj_end(&o, r);
}

/* §3.3.11: devices (only an unsquashed root caller may make them: else PERM), sockets, FIFOs */
enum rpc_proc_status nfs3_mknod_exec(struct rpc_call *c, void *args, void *res)
{
	const struct nfs3_mknod_args *a = args;
	struct nfs3_newobj_res *r = res;
	struct be_create how = { .sa = nfs3_sattr_with_mode(&a->sa, NFS3_DEFAULT_FILE_MODE),
				 .rdev_major = a->major, .rdev_minor = a->minor };
	struct nfs3_newobj o;
	bool existed = false;

	switch (a->type) {
	case NF3CHR:
	case NF3BLK:
	case NF3SOCK:
	case NF3FIFO:
		how.type = (enum be_type)a->type; /* ftype3 numbers are enum be_type's */
		break;
	default:
		how.type = BE_TYPE_NONE; /* §3.3.11: regular files, directories, symlinks have their own procedures */
	}
	r->status = nfs3_newobj_begin(&o, c, &a->where, r);
	if (r->status == NFS3_OK && how.type == BE_TYPE_NONE)
		r->status = NFS3ERR_BADTYPE;
	if (r->status == NFS3_OK)
		r->status = nfs3_newobj_make(&o, &how, r, &existed);
	return nfs3_newobj_end(&o, r);
}
