/*
 * ceph_meta.c - metadata calls of the "ceph" backend: attributes, lookups,
 * names (create, link, remove, rename), readdir and user.* xattrs, each made
 * with the caller's UserPerm so that libcephfs checks permissions as the
 * caller and creates objects owned by it.
 *
 * Readdir cookies are libcephfs's directory offsets (the d_off of an entry:
 * where the next one starts). In the MDS's hash order (the default) an
 * offset names a position by the hash of the entry's name, so entries added
 * or removed elsewhere in the directory do not move it: a cookie stays valid
 * across concurrent changes, across rnfsd restarts and across rnfsd
 * instances reading the same directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>

#include "backend/ceph/ceph.h"

#define CEPH_XATTR_PREFIX "user."
#define CEPH_XATTR_PREFIX_LEN 5u
#define CEPH_XATTR_LIST_MAX 65536u

int cephbe_getattr(struct be_fs *fs, const struct be_obj *o, struct be_attr *out)
{
	return ceph_getattr_in(ceph_fs(fs), ceph_in(o), out);
}

/* struct be_sattr as libcephfs's statx and CEPH_SETATTR_* mask. */
static int ceph_sattr(const struct be_sattr *sa, struct ceph_statx *stx)
{
	int mask = 0;

	memset(stx, 0, sizeof(*stx));
	if (sa->mask & BE_SET_MODE) {
		stx->stx_mode = (uint16_t)(sa->mode & 07777);
		mask |= CEPH_SETATTR_MODE;
	}
	if (sa->mask & BE_SET_UID) {
		stx->stx_uid = sa->uid;
		mask |= CEPH_SETATTR_UID;
	}
	if (sa->mask & BE_SET_GID) {
		stx->stx_gid = sa->gid;
		mask |= CEPH_SETATTR_GID;
	}
	if (sa->mask & BE_SET_SIZE) {
		stx->stx_size = sa->size;
		mask |= CEPH_SETATTR_SIZE;
	}
	if (sa->mask & BE_SET_ATIME) {
		stx->stx_atime = (struct timespec){ .tv_sec = sa->atime.sec, .tv_nsec = sa->atime.nsec };
		mask |= CEPH_SETATTR_ATIME;
	}
	if (sa->mask & BE_SET_MTIME) {
		stx->stx_mtime = (struct timespec){ .tv_sec = sa->mtime.sec, .tv_nsec = sa->mtime.nsec };
		mask |= CEPH_SETATTR_MTIME;
	}
	/* SET_TO_SERVER_TIME: this server's clock, given explicitly (libcephfs's *_NOW bits
	 * are not applied by every ll_setattr path) */
	if (sa->mask & (BE_SET_ATIME_NOW | BE_SET_MTIME_NOW)) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		if (sa->mask & BE_SET_ATIME_NOW) {
			stx->stx_atime = now;
			mask |= CEPH_SETATTR_ATIME;
		}
		if (sa->mask & BE_SET_MTIME_NOW) {
			stx->stx_mtime = now;
			mask |= CEPH_SETATTR_MTIME;
		}
	}
	return mask;
}

int cephbe_setattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_sattr *sa,
		 const struct be_time *ctime_guard, struct be_attr *pre, struct be_attr *post)
{
	struct ceph_fs *cf = ceph_fs(fs);
	UserPerm *perm = ceph_perm(cr);
	struct ceph_statx stx;
	struct be_attr before;
	int mask, r, err;

	if (!perm)
		return ENOMEM;
	err = ceph_getattr_in(cf, ceph_in(o), &before);
	if (err)
		return err;
	if (pre)
		*pre = before;
	/* RFC 1813 §3.3.2: guard.obj_ctime must match the object's ctime, else NFS3ERR_NOT_SYNC.
	 * Checked against this client's view: another client's change in between is not seen. */
	if (ctime_guard && (ctime_guard->sec != before.ctime.sec || ctime_guard->nsec != before.ctime.nsec))
		return BE_ENOTSYNC;
	/* RFC 1813 §3.3.2: a size change applies to regular files only */
	if ((sa->mask & BE_SET_SIZE) && before.type != BE_REG)
		return before.type == BE_DIR ? EISDIR : EINVAL;
	mask = ceph_sattr(sa, &stx);
	r = mask ? ceph_ll_setattr(cf->cmount, ceph_in(o), &stx, mask, perm) : 0;
	if (post)
		(void)ceph_getattr_in(cf, ceph_in(o), post);
	return ceph_err(r);
}

int cephbe_access(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, uint32_t want,
		uint32_t *granted)
{
	struct ceph_fs *cf = ceph_fs(fs);
	struct ceph_statx stx;
	int r = ceph_ll_getattr(cf->cmount, ceph_in(o), &stx, CEPH_STATX_MODE | CEPH_STATX_UID | CEPH_STATX_GID |
				CEPH_STATX_INO, AT_SYMLINK_NOFOLLOW, cf->server);

	if (r < 0)
		return ceph_err(r);
	*granted = ceph_mode_access(&stx, cr, want);
	return 0;
}

int cephbe_lookup(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		struct be_obj *out, struct be_attr *attr)
{
	struct ceph_fs *cf = ceph_fs(fs);
	UserPerm *perm = ceph_perm(cr);
	struct ceph_statx stx;
	struct Inode *in;
	int r;

	if (!perm)
		return ENOMEM;
	/* ".." of the export's root is the root (backend.h: never leave the export) */
	if (dir->fileid == cf->root_ino && !strcmp(name, ".."))
		name = ".";
	r = ceph_ll_lookup(cf->cmount, ceph_in(dir), name, &in, &stx, CEPH_WANT, AT_SYMLINK_NOFOLLOW, perm);
	if (r < 0)
		return ceph_err(r);
	ceph_obj_set(out, in, &stx);
	if (attr)
		ceph_attr_from_statx(cf, attr, &stx);
	return 0;
}

int cephbe_readlink(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap,
		  size_t *len)
{
	UserPerm *perm = ceph_perm(cr);
	int r;

	if (!perm)
		return ENOMEM;
	r = ceph_ll_readlink(ceph_fs(fs)->cmount, ceph_in(o), buf, cap, perm);
	if (r < 0)
		return ceph_err(r);
	*len = (size_t)r;
	return 0;
}

int cephbe_statfs(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, struct be_statfs *out)
{
	struct statvfs sv;
	int r;

	(void)cr;
	r = ceph_ll_statfs(ceph_fs(fs)->cmount, ceph_in(o), &sv);
	if (r < 0)
		return ceph_err(r);
	out->total_bytes = (uint64_t)sv.f_blocks * sv.f_frsize;
	out->free_bytes = (uint64_t)sv.f_bfree * sv.f_frsize;
	out->avail_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	/* Ceph counts files in use (f_files) and has no inode limit (f_ffree all ones):
	 * keep avail <= free <= total as NFS's FSSTAT promises (RFC 1813 §3.3.18) */
	out->total_files = sv.f_files;
	out->free_files = sv.f_ffree;
	out->avail_files = sv.f_favail;
	if (out->free_files > out->total_files) {
		out->total_files = out->free_files;
		out->free_files -= sv.f_files;
		out->avail_files = out->free_files;
	}
	out->name_max = sv.f_namemax && sv.f_namemax < BE_NAME_MAX ? (uint32_t)sv.f_namemax : BE_NAME_MAX;
	out->block_size = sv.f_bsize <= UINT32_MAX ? (uint32_t)sv.f_bsize : 0;
	out->link_max = UINT32_MAX;
	out->max_file_size = 1ull << 40; /* CephFS's default max_file_size */
	return 0;
}

int cephbe_commit_meta(struct be_fs *fs, const struct be_obj *o)
{
	return ceph_err(ceph_ll_sync_inode(ceph_fs(fs)->cmount, ceph_in(o), 0));
}

/* ---- names ---- */

/* A regular file, O_EXCL unless unchecked; the open Fh is closed at once (I/O opens its own). */
static int ceph_mkfile(struct ceph_fs *cf, UserPerm *perm, struct Inode *dir, const char *name, mode_t mode,
		       bool excl, struct Inode **out, struct ceph_statx *stx)
{
	struct Fh *fh = NULL;
	int r = ceph_ll_create(cf->cmount, dir, name, S_IFREG | mode, O_CREAT | O_WRONLY | (excl ? O_EXCL : 0),
			       out, &fh, stx, CEPH_WANT, AT_SYMLINK_NOFOLLOW, perm);

	if (r == 0 && fh)
		ceph_rel_close(cf, fh);
	return r;
}

/* RFC 1813 §3.3.8 EXCLUSIVE: the verifier in atime/mtime as knfsd (and backend/local/) keep it. */
static void ceph_verf_times(const uint8_t verf[BE_VERF_SIZE], struct ceph_statx *stx)
{
	uint32_t v_mtime, v_atime;

	memcpy(&v_mtime, verf, 4);
	memcpy(&v_atime, verf + 4, 4);
	memset(stx, 0, sizeof(*stx));
	stx->stx_mtime.tv_sec = v_mtime & 0x7fffffff;
	stx->stx_atime.tv_sec = v_atime & 0x7fffffff;
}

/* The existing name for UNCHECKED (a regular file: *existed) and EXCLUSIVE (same verifier). */
static int ceph_create_existing(struct ceph_fs *cf, UserPerm *perm, struct Inode *dir, const char *name,
				const struct be_create *c, struct Inode **out, struct ceph_statx *stx,
				bool *existed)
{
	struct ceph_statx want;
	int r = ceph_ll_lookup(cf->cmount, dir, name, out, stx, CEPH_WANT, AT_SYMLINK_NOFOLLOW, perm);

	if (r < 0)
		return r == -ENOENT ? -EAGAIN : r; /* gone again: the caller retries the create */
	ceph_verf_times(c->verf, &want);
	if (S_ISREG(stx->stx_mode) && (c->how == BE_CREATE_UNCHECKED ||
	    (stx->stx_mtime.tv_sec == want.stx_mtime.tv_sec && stx->stx_atime.tv_sec == want.stx_atime.tv_sec))) {
		*existed = true;
		return 0;
	}
	ceph_rel_put(cf, *out);
	return -EEXIST;
}

static int ceph_make(struct ceph_fs *cf, UserPerm *perm, struct Inode *dir, const char *name,
		     const struct be_create *c, struct Inode **out, struct ceph_statx *stx, bool *existed)
{
	mode_t mode = c->sa.mask & BE_SET_MODE ? c->sa.mode & 07777 : 0;
	dev_t rdev = (dev_t)ceph_rdev_make(c->rdev_major, c->rdev_minor);

	switch (c->type) {
	case BE_REG:
		for (int tries = 0; tries < 4; tries++) {
			int r = ceph_mkfile(cf, perm, dir, name, mode, true, out, stx);

			if (r != -EEXIST || c->how == BE_CREATE_GUARDED)
				return r;
			r = ceph_create_existing(cf, perm, dir, name, c, out, stx, existed);
			if (r != -EAGAIN)
				return r;
		}
		return -EAGAIN;
	case BE_DIR:
		return ceph_ll_mkdir(cf->cmount, dir, name, mode, out, stx, CEPH_WANT, AT_SYMLINK_NOFOLLOW, perm);
	case BE_LNK:
		return ceph_ll_symlink(cf->cmount, dir, name, c->target ? c->target : "", out, stx, CEPH_WANT,
				       AT_SYMLINK_NOFOLLOW, perm);
	case BE_CHR:
		return ceph_ll_mknod(cf->cmount, dir, name, S_IFCHR | mode, rdev, out, stx, CEPH_WANT, 0, perm);
	case BE_BLK:
		return ceph_ll_mknod(cf->cmount, dir, name, S_IFBLK | mode, rdev, out, stx, CEPH_WANT, 0, perm);
	case BE_SOCK:
		return ceph_ll_mknod(cf->cmount, dir, name, S_IFSOCK | mode, 0, out, stx, CEPH_WANT, 0, perm);
	case BE_FIFO:
		return ceph_ll_mknod(cf->cmount, dir, name, S_IFIFO | mode, 0, out, stx, CEPH_WANT, 0, perm);
	default:
		return -EINVAL;
	}
}

int cephbe_create(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		const struct be_create *how, struct be_obj *out, struct be_attr *attr, bool *existed)
{
	struct ceph_fs *cf = ceph_fs(fs);
	UserPerm *perm = ceph_perm(cr);
	struct be_sattr rest = how->sa;
	struct ceph_statx stx, set;
	struct Inode *in = NULL;
	bool exists = false;
	int r, mask;

	if (!perm)
		return ENOMEM;
	r = ceph_make(cf, perm, ceph_in(dir), name, how, &in, &stx, &exists);
	if (r < 0)
		return ceph_err(r);
	if (existed)
		*existed = exists;
	rest.mask &= ~BE_SET_MODE; /* given at creation */
	if (!exists && how->type == BE_REG && how->how == BE_CREATE_EXCLUSIVE) {
		ceph_verf_times(how->verf, &set);
		r = ceph_ll_setattr(cf->cmount, in, &set, CEPH_SETATTR_MTIME | CEPH_SETATTR_ATIME, perm);
	}
	if (!r && !exists && rest.mask) {
		mask = ceph_sattr(&rest, &set);
		r = ceph_ll_setattr(cf->cmount, in, &set, mask, perm);
	}
	if (!r && (rest.mask || how->how == BE_CREATE_EXCLUSIVE))
		r = ceph_ll_getattr(cf->cmount, in, &stx, CEPH_WANT, AT_SYMLINK_NOFOLLOW, cf->server);
	if (r < 0) {
		ceph_rel_put(cf, in);
		return ceph_err(r);
	}
	ceph_obj_set(out, in, &stx);
	if (attr)
		ceph_attr_from_statx(cf, attr, &stx);
	return 0;
}

int cephbe_link(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_obj *dir,
	      const char *name)
{
	UserPerm *perm = ceph_perm(cr);

	if (!perm)
		return ENOMEM;
	if (o->type == BE_DIR)
		return EISDIR;
	return ceph_err(ceph_ll_link(ceph_fs(fs)->cmount, ceph_in(o), ceph_in(dir), name, perm));
}

/* Remove name from dir as the caller, once its type is checked: a directory for rmdir, else not. */
static int ceph_unlink_checked(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir,
			       const char *name, bool want_dir)
{
	struct ceph_fs *cf = ceph_fs(fs);
	UserPerm *perm = ceph_perm(cr);
	struct ceph_statx stx;
	struct Inode *in;
	int r;

	if (!perm)
		return ENOMEM;
	r = ceph_ll_lookup(cf->cmount, ceph_in(dir), name, &in, &stx, CEPH_STATX_MODE, AT_SYMLINK_NOFOLLOW, perm);
	if (r < 0)
		return ceph_err(r);
	ceph_rel_put(cf, in);
	if (S_ISDIR(stx.stx_mode) != want_dir)
		return want_dir ? ENOTDIR : EISDIR;
	r = want_dir ? ceph_ll_rmdir(cf->cmount, ceph_in(dir), name, perm) :
		ceph_ll_unlink(cf->cmount, ceph_in(dir), name, perm);
	return ceph_err(r);
}

int cephbe_remove(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name)
{
	return ceph_unlink_checked(fs, cr, dir, name, false);
}

int cephbe_rmdir(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name)
{
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return EINVAL;
	return ceph_unlink_checked(fs, cr, dir, name, true);
}

int cephbe_rename(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *from_dir, const char *from,
		  const struct be_obj *to_dir, const char *to)
{
	struct ceph_fs *cf = ceph_fs(fs);
	UserPerm *perm = ceph_perm(cr);
	struct ceph_statx src, dst;
	struct Inode *in;
	int r;

	if (!perm)
		return ENOMEM;
	r = ceph_ll_lookup(cf->cmount, ceph_in(from_dir), from, &in, &src, CEPH_STATX_MODE | CEPH_STATX_INO,
			   AT_SYMLINK_NOFOLLOW, perm);
	if (r < 0)
		return ceph_err(r);
	ceph_rel_put(cf, in);
	r = ceph_ll_lookup(cf->cmount, ceph_in(to_dir), to, &in, &dst, CEPH_STATX_MODE | CEPH_STATX_INO,
			   AT_SYMLINK_NOFOLLOW, perm);
	if (r == 0) {
		ceph_rel_put(cf, in);
		/* rename(2): onto itself does nothing (libcephfs would drop the name); a
		 * directory and a non-directory never replace each other */
		if (dst.stx_ino == src.stx_ino)
			return 0;
		if (S_ISDIR(dst.stx_mode) && !S_ISDIR(src.stx_mode))
			return EISDIR;
		if (!S_ISDIR(dst.stx_mode) && S_ISDIR(src.stx_mode))
			return ENOTDIR;
	}
	return ceph_err(ceph_ll_rename(cf->cmount, ceph_in(from_dir), from, ceph_in(to_dir), to, perm));
}

/* ---- readdir ---- */

static uint64_t ceph_cookieverf(uint32_t export_id, uint64_t dir_ino)
{
	/* splitmix64 over the export and the directory: the same in every instance and after restarts */
	uint64_t x = dir_ino ^ ((uint64_t)export_id << 32 | 0x6370u);

	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* One entry to fn; false when fn declined it. */
static bool ceph_dirent_emit(struct ceph_fs *cf, const struct be_obj *dir, unsigned flags, const struct dirent *de,
			     const struct ceph_statx *stx, be_readdir_fn fn, void *arg)
{
	struct be_attr attr;
	struct be_handle h;
	const struct ceph_statx *st = stx;
	struct ceph_statx rootstx;
	bool dotdot_at_root = dir->fileid == cf->root_ino && !strcmp(de->d_name, "..");
	struct be_dirent e = {
		.name = de->d_name,
		.namelen = (uint32_t)strlen(de->d_name),
		.cookie = (uint64_t)de->d_off,
	};

	if (dotdot_at_root && ceph_ll_getattr(cf->cmount, cf->root, &rootstx, CEPH_WANT, 0, cf->server) == 0)
		st = &rootstx; /* the root's parent is outside the export: show the root itself */
	e.fileid = st->stx_ino;
	e.type = st->stx_mask & CEPH_STATX_MODE ? be_type_of_mode(st->stx_mode) : BE_TYPE_NONE;
	if ((flags & BE_READDIR_ATTRS) && (st->stx_mask & CEPH_STATX_BASIC_STATS) == CEPH_STATX_BASIC_STATS) {
		ceph_attr_from_statx(cf, &attr, st);
		e.attr = &attr;
	}
	if ((flags & BE_READDIR_HANDLES) && (st->stx_mask & CEPH_STATX_INO)) {
		ceph_handle_encode(st->stx_ino, st->stx_dev, &h);
		e.handle = &h;
	}
	return fn(arg, &e);
}

int cephbe_readdir(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, uint64_t cookie,
		 uint64_t verf, unsigned flags, be_readdir_fn fn, void *arg, uint64_t *verf_out, bool *eof)
{
	struct ceph_fs *cf = ceph_fs(fs);
	UserPerm *perm = ceph_perm(cr);
	unsigned want = flags & (BE_READDIR_ATTRS | BE_READDIR_HANDLES) ? CEPH_WANT : CEPH_STATX_INO | CEPH_STATX_MODE;
	struct ceph_dir_result *dirp;
	struct ceph_statx stx;
	struct dirent de;
	int r;

	*eof = false;
	if (!perm)
		return ENOMEM;
	*verf_out = ceph_cookieverf(cf->export_id, dir->fileid);
	/* RFC 1813 §3.3.16: a cookie with another verifier is NFS3ERR_BAD_COOKIE */
	if (cookie != 0 && verf != *verf_out && !(verf == 0 && (flags & BE_READDIR_ZERO_VERF)))
		return BE_EBADCOOKIE;
	r = ceph_ll_opendir(cf->cmount, ceph_in(dir), &dirp, perm);
	if (r < 0)
		return ceph_err(r);
	if (cookie)
		ceph_seekdir(cf->cmount, dirp, (int64_t)cookie);
	for (;;) {
		r = ceph_readdirplus_r(cf->cmount, dirp, &de, &stx, want, AT_SYMLINK_NOFOLLOW, NULL);
		if (r <= 0) {
			*eof = r == 0;
			break;
		}
		if ((flags & BE_READDIR_NO_DOTS) && (!strcmp(de.d_name, ".") || !strcmp(de.d_name, "..")))
			continue;
		if (!ceph_dirent_emit(cf, dir, flags, &de, &stx, fn, arg)) {
			r = 0;
			break;
		}
	}
	ceph_rel_releasedir(cf, dirp);
	return ceph_err(r);
}

/* ---- user.* extended attributes (RFC 8276) ---- */

static int ceph_xattr_name(const char *name, char full[CEPH_XATTR_PREFIX_LEN + BE_NAME_MAX + 1])
{
	size_t n = strlen(name);

	if (n == 0 || n > BE_NAME_MAX)
		return EINVAL;
	memcpy(full, CEPH_XATTR_PREFIX, CEPH_XATTR_PREFIX_LEN);
	memcpy(full + CEPH_XATTR_PREFIX_LEN, name, n + 1);
	return 0;
}

int cephbe_getxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name,
		  void *buf, size_t cap, size_t *len)
{
	char full[CEPH_XATTR_PREFIX_LEN + BE_NAME_MAX + 1];
	UserPerm *perm = ceph_perm(cr);
	int r, err = ceph_xattr_name(name, full);

	if (err)
		return err;
	if (!perm)
		return ENOMEM;
	r = ceph_ll_getxattr(ceph_fs(fs)->cmount, ceph_in(o), full, cap ? buf : NULL, cap, perm);
	if (r < 0)
		return ceph_err(r);
	*len = (size_t)r;
	return 0;
}

int cephbe_setxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name,
		  const void *value, size_t len, enum be_xattr_how how)
{
	char full[CEPH_XATTR_PREFIX_LEN + BE_NAME_MAX + 1];
	UserPerm *perm = ceph_perm(cr);
	int flags = how == BE_XATTR_CREATE ? XATTR_CREATE : how == BE_XATTR_REPLACE ? XATTR_REPLACE : 0;
	int err = ceph_xattr_name(name, full);

	if (err)
		return err;
	if (!perm)
		return ENOMEM;
	return ceph_err(ceph_ll_setxattr(ceph_fs(fs)->cmount, ceph_in(o), full, value, len, flags, perm));
}

int cephbe_removexattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name)
{
	char full[CEPH_XATTR_PREFIX_LEN + BE_NAME_MAX + 1];
	UserPerm *perm = ceph_perm(cr);
	int err = ceph_xattr_name(name, full);

	if (err)
		return err;
	if (!perm)
		return ENOMEM;
	return ceph_err(ceph_ll_removexattr(ceph_fs(fs)->cmount, ceph_in(o), full, perm));
}

/* The user.* names without their prefix (libcephfs lists every namespace). */
int cephbe_listxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap,
		   size_t *len)
{
	UserPerm *perm = ceph_perm(cr);
	size_t all = 0, out = 0;
	char *list;
	int r;

	if (!perm)
		return ENOMEM;
	list = malloc(CEPH_XATTR_LIST_MAX); /* not a hot path */
	if (!list)
		return ENOMEM;
	r = ceph_ll_listxattr(ceph_fs(fs)->cmount, ceph_in(o), list, CEPH_XATTR_LIST_MAX, &all, perm);
	for (size_t i = 0; r >= 0 && i < all && i < CEPH_XATTR_LIST_MAX;) {
		size_t n = strnlen(list + i, CEPH_XATTR_LIST_MAX - i);

		if (n > CEPH_XATTR_PREFIX_LEN && !memcmp(list + i, CEPH_XATTR_PREFIX, CEPH_XATTR_PREFIX_LEN)) {
			size_t k = n - CEPH_XATTR_PREFIX_LEN + 1;

			if (cap && out + k > cap)
				r = -ERANGE;
			else if (cap)
				memcpy(buf + out, list + i + CEPH_XATTR_PREFIX_LEN, k);
			out += k;
		}
		i += n + 1;
	}
	free(list);
	if (r < 0)
		return ceph_err(r);
	*len = out;
	return 0;
}
