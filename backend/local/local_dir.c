/*
 * local_dir.c - directory entries of the local backend: create (files,
 * directories, symlinks, devices, sockets, FIFOs; guarded, unchecked,
 * exclusive), link, remove, rmdir, rename, readdir.
 *
 * Each runs as the caller in the directory, so the kernel checks write and
 * search permission there, sticky bits, and gives a new object the caller's
 * ownership. Modes are taken as given: the daemon's umask is 0 (the client
 * applied its own).
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
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "backend/local/local.h"
#include "core/loop.h"

#define LOCAL_DIRBUF 32768
static __thread uint8_t local_dirbuf[LOCAL_DIRBUF] __attribute__((aligned(8)));

/* Make the object (not an exclusive create). errno value. */
static int local_make(int dfd, const char *name, const struct be_create *c)
{
	mode_t mode = c->sa.mask & BE_SET_MODE ? c->sa.mode & 07777 : 0;
	int rc;

	switch (c->type) {
	case BE_REG:
		rc = mknodat(dfd, name, S_IFREG | mode, 0);
		break;
	case BE_DIR:
		rc = mkdirat(dfd, name, mode);
		break;
	case BE_LNK:
		rc = c->target ? symlinkat(c->target, dfd, name) : (errno = EINVAL, -1);
		break;
	case BE_CHR:
	case BE_BLK:
		/* devices need CAP_MKNOD, which only an unsquashed root caller keeps: else EPERM */
		rc = mknodat(dfd, name, mode | (c->type == BE_CHR ? S_IFCHR : S_IFBLK),
			     makedev(c->rdev_major, c->rdev_minor));
		break;
	case BE_SOCK:
		rc = mknodat(dfd, name, mode | S_IFSOCK, 0);
		break;
	case BE_FIFO:
		rc = mknodat(dfd, name, mode | S_IFIFO, 0);
		break;
	default:
		return EINVAL;
	}
	return rc < 0 ? errno : 0;
}

/*
 * RFC 1813 §3.3.8 / RFC 8881 §18.16.3 EXCLUSIVE: the verifier is kept in the
 * new file's atime and mtime (as knfsd: mtime = verf[0..3], atime =
 * verf[4..7], top bits cleared for file systems without 64-bit times). A
 * retransmission finds the file with the same verifier and succeeds
 * (*existed); any other existing file is EEXIST.
 */
static int local_create_exclusive(int dfd, const char *name, const struct be_create *c, bool *existed)
{
	mode_t mode = c->sa.mask & BE_SET_MODE ? c->sa.mode & 07777 : 0;
	uint32_t v_mtime, v_atime;
	struct timespec ts[2];
	struct stat st;

	memcpy(&v_mtime, c->verf, 4);
	memcpy(&v_atime, c->verf + 4, 4);
	v_mtime &= 0x7fffffff;
	v_atime &= 0x7fffffff;
	ts[0] = (struct timespec){ .tv_sec = v_atime };
	ts[1] = (struct timespec){ .tv_sec = v_mtime };
	if (mknodat(dfd, name, S_IFREG | mode, 0) == 0)
		return utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0 ? errno : 0;
	if (errno != EEXIST)
		return errno;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_mtim.tv_sec == (time_t)v_mtime && st.st_atim.tv_sec == (time_t)v_atime) {
		*existed = true; /* our own earlier reply was lost: same verifier */
		return 0;
	}
	return EEXIST;
}

/* The new (or existing) object: apply rest, fill out/attr. Created but gone at once: out stays empty. */
static int local_created(int dfd, const char *name, const struct be_cred *cr, const struct be_sattr *rest,
			 struct be_obj *out, struct be_attr *attr)
{
	int ofd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), err = 0;
	struct stat st;

	if (attr)
		attr->valid = 0;
	if (ofd < 0)
		return 0; /* created, but already removed or renamed: answered without a handle */
	if (fstat(ofd, &st) < 0)
		err = errno;
	else if (rest->mask)
		err = local_sattr_apply(cr, ofd, &st, rest);
	if (!err && rest->mask && fstat(ofd, &st) < 0)
		err = errno;
	if (err) {
		close(ofd);
		return err;
	}
	local_obj_set(out, ofd, &st);
	if (attr)
		local_attr_from_stat(attr, &st);
	return 0;
}

/*
 * On the event-loop thread ([rnfsd] uring-calls, tmpfs or ramfs): a regular
 * file (GUARDED, UNCHECKED) or a directory with at most a mode, made as the
 * caller through its io_uring personality (local_uring.c), so the kernel
 * checks the directory's permissions and gives the caller the ownership.
 * Anything else (exclusive create, other types, attributes to set after
 * creation, no ring): EWOULDBLOCK, nothing changed, a worker does it.
 */
static int local_create_here(struct local_fs *lf, const struct be_cred *cr, int dfd, const char *name,
			     const struct be_create *how, struct be_obj *out, struct be_attr *attr, bool *existed)
{
#if HAVE_LIBURING
	struct local_ring *r = lf->in_memory ? local_ring_here() : NULL;
	static const struct be_sattr none = { .mask = 0 };
	mode_t mode = how->sa.mask & BE_SET_MODE ? how->sa.mode & 07777 : 0;
	bool reg = how->type == BE_REG && how->how != BE_CREATE_EXCLUSIVE;
	struct stat st;
	int rc;

	if (!r || (!reg && how->type != BE_DIR) || (how->sa.mask & ~BE_SET_MODE))
		return EWOULDBLOCK;
	if (reg) {
		/* O_EXCL: a new file, never an open of an existing one (no access check on the open mode) */
		rc = local_ring_openat(r, cr, dfd, name, O_CREAT | O_EXCL | O_RDONLY | O_CLOEXEC, mode);
		if (rc >= 0) {
			close(rc);
			rc = 0;
		}
	} else {
		rc = local_ring_mkdirat(r, cr, dfd, name, mode);
	}
	if (rc == -EEXIST && reg && how->how == BE_CREATE_UNCHECKED) {
		/* UNCHECKED: an existing regular file is the result, as it is (the caller could search dfd:
		 * its EACCES comes before EEXIST) */
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno;
		if (!S_ISREG(st.st_mode))
			return EEXIST;
		rc = 0;
		*existed = true;
	}
	if (rc < 0)
		return -rc;
	return local_created(dfd, name, cr, &none, out, attr);
#else
	(void)lf, (void)cr, (void)dfd, (void)name, (void)how, (void)out, (void)attr, (void)existed;
	return EWOULDBLOCK;
#endif
}

int local_create(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		 const struct be_create *how, struct be_obj *out, struct be_attr *attr, bool *existed)
{
	int dfd = local_fd(dir), err;
	struct be_sattr rest = how->sa;
	bool exists = false;
	struct stat st;

	if (existed)
		*existed = false;
	local_watch_self_fd(dfd); /* the new entry is rnfsd's own (a directory delegation's watch) */
	if (loop_is_loop_thread())
		return local_create_here(local_fs(fs), cr, dfd, name, how, out, attr, existed ? existed : &exists);
	rest.mask &= ~BE_SET_MODE; /* applied at creation */
	err = local_id_caller(cr);
	if (err)
		return err;
	if (how->type == BE_REG && how->how == BE_CREATE_EXCLUSIVE) {
		rest.mask &= ~(BE_SET_ATIME | BE_SET_MTIME | BE_SET_ATIME_NOW | BE_SET_MTIME_NOW); /* the verifier */
		err = local_create_exclusive(dfd, name, how, &exists);
	} else {
		err = local_make(dfd, name, how);
		/* UNCHECKED: an existing regular file is the result, as it is */
		if (err == EEXIST && how->type == BE_REG && how->how == BE_CREATE_UNCHECKED) {
			if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				err = errno;
			else if (S_ISREG(st.st_mode))
				exists = true, err = 0;
		}
	}
	if (err)
		return err;
	if (exists)
		rest.mask = 0;
	if (existed)
		*existed = exists;
	return local_created(dfd, name, cr, &rest, out, attr);
}

int local_link(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_obj *dir,
	       const char *name)
{
	char path[32];
	int err;

	(void)fs;
	if (o->type == BE_DIR)
		return EISDIR; /* no hard links to directories (knfsd: ISDIR) */
	err = local_id_caller(cr);
	if (err)
		return err;
	/* linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH, dropped as the caller:
	 * go through the /proc magic link instead (protected_hardlinks still applies). */
	local_fd_path(local_fd(o), path);
	local_watch_self_fd(local_fd(o));
	local_watch_self_fd(local_fd(dir)); /* its new entry: rnfsd's own (a directory delegation's watch) */
	return linkat(AT_FDCWD, path, local_fd(dir), name, AT_SYMLINK_FOLLOW) < 0 ? errno : 0;
}

/*
 * Applies the caller for removing name from dfd. On the event-loop thread
 * (NFSv3 REMOVE, RMDIR: RPC_RUN_INLINE_TRY), which must not switch
 * identity, the entry is removed as the server where the kernel's
 * may_delete() would let the caller: root, or write and search on the
 * directory by its mode bits (no ACL) and, under a sticky bit, the caller
 * owning the directory or the entry. Only on tmpfs and ramfs, whose changes
 * never wait for a device; else, and where it cannot tell, EWOULDBLOCK (the
 * call goes to a worker).
 */
static int local_unlink_as(struct local_fs *lf, const struct be_cred *cr, int dfd, const char *name)
{
	struct stat dst, st;
	int err;

	if (!loop_is_loop_thread())
		return local_id_caller(cr);
	if (!lf->in_memory)
		return EWOULDBLOCK;
	err = local_dir_may_here(cr, dfd, S_IWUSR | S_IXUSR, &dst);
	if (err || cr->uid == 0)
		return err; /* root: dst not read, and the sticky bit binds root no more */
	if (!(dst.st_mode & S_ISVTX) || dst.st_uid == cr->uid)
		return 0;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno; /* ENOENT: the kernel's answer too (the directory may be searched) */
	return st.st_uid == cr->uid ? 0 : EWOULDBLOCK;
}

static int local_unlink(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
			int flags)
{
	int err;

#if HAVE_LIBURING
	/* [rnfsd] uring-calls: on the event-loop thread (tmpfs, ramfs), the kernel itself judges
	 * the caller's removal through the caller's registered personality (local_uring.c);
	 * EWOULDBLOCK: not run there, a worker does it */
	struct local_ring *r = local_fs(fs)->in_memory ? local_ring_here() : NULL;
	if (r) {
		local_watch_self_entry(local_fd(dir), name);
		return -local_ring_unlinkat(r, cr, local_fd(dir), name, flags);
	}
#endif
	err = local_unlink_as(local_fs(fs), cr, local_fd(dir), name);

	if (err)
		return err;
	/* A directory given to remove: Linux says EISDIR; a file given to rmdir: ENOTDIR */
	local_watch_self_entry(local_fd(dir), name);
	return unlinkat(local_fd(dir), name, flags) < 0 ? errno : 0;
}

int local_remove(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name)
{
	return local_unlink(fs, cr, dir, name, 0);
}

int local_rmdir(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name)
{
	return local_unlink(fs, cr, dir, name, AT_REMOVEDIR);
}

/* On the event-loop thread only through the caller's io_uring personality ([rnfsd] uring-calls,
 * tmpfs or ramfs), else EWOULDBLOCK: a worker does it. */
int local_rename(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *from_dir, const char *from,
		 const struct be_obj *to_dir, const char *to)
{
	bool here = loop_is_loop_thread();
#if HAVE_LIBURING
	struct local_ring *r = here && local_fs(fs)->in_memory ? local_ring_here() : NULL;
#else
	void *r = NULL;
#endif
	int err = here ? (r ? 0 : EWOULDBLOCK) : local_id_caller(cr);

	(void)fs;
	if (err)
		return err;
	local_watch_self_entry(local_fd(from_dir), from);
	local_watch_self_entry(local_fd(to_dir), to); /* a target replaced */
#if HAVE_LIBURING
	if (r)
		return -local_ring_renameat(r, cr, local_fd(from_dir), from, local_fd(to_dir), to);
#endif
	return renameat(local_fd(from_dir), from, local_fd(to_dir), to) < 0 ? errno : 0;
}

/* ---- readdir ---- */

uint64_t local_cookieverf(uint32_t export_id, uint64_t dir_ino)
{
	/* splitmix64 finalizer over the export and the directory: stable across restarts */
	uint64_t x = dir_ino ^ ((uint64_t)export_id << 32 | 0x6376u);

	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x ^ ((uint64_t)export_id * 0xff51afd7ed558ccdull);
}

struct local_dirlist {
	struct local_fs *lf;
	int pfd;                 /* O_PATH of the directory (fstatat/name_to_handle_at base) */
	const struct stat *dst;
	unsigned flags;
	be_readdir_fn fn;
	void *arg;
	bool have_self;          /* self: the directory's own handle, made once */
	struct be_handle self;
};

static enum be_type local_dtype(unsigned char t)
{
	switch (t) {
	case DT_REG: return BE_REG;
	case DT_DIR: return BE_DIR;
	case DT_BLK: return BE_BLK;
	case DT_CHR: return BE_CHR;
	case DT_LNK: return BE_LNK;
	case DT_SOCK: return BE_SOCK;
	case DT_FIFO: return BE_FIFO;
	default: return BE_TYPE_NONE;
	}
}

/*
 * Attributes and handle of an entry (READDIRPLUS). "." and the root's ".."
 * are the directory itself; another ".." is the parent of a directory that
 * is beneath the root (checked when it was opened), so beneath it too.
 * Entries on another device (mount points) get neither.
 */
static void local_dirent_plus(struct local_dirlist *l, const char *name, bool self, struct be_dirent *e,
			      struct be_attr *a, struct be_handle *h)
{
	struct statx stx;
	struct stat st;

	if (self) {
		st = *l->dst;
	} else if (statx(l->pfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &stx) < 0) {
		return;
	} else {
		local_stat_from_statx(&st, &stx);
		if (st.st_dev != l->lf->dev)
			return;
	}
	if (l->flags & BE_READDIR_ATTRS) {
		local_attr_from_stat(a, &st);
		e->attr = a;
	}
	if (!(l->flags & BE_READDIR_HANDLES))
		return;
	if (self) {
		if (!l->have_self)
			l->have_self = local_handle_at(l->pfd, "", AT_EMPTY_PATH, &l->self) == 0;
		if (l->have_self)
			e->handle = &l->self;
	} else if (local_handle_known(l->pfd, name, &stx, h) == 0) {
		e->handle = h; /* one statx per entry when the handle is cached (handle_cache.h) */
	}
}

/* One entry to the callback. false: it declined (stop). */
static bool local_dirent_emit(struct local_dirlist *l, const struct dirent64 *de)
{
	const char *name = de->d_name;
	size_t nlen = strlen(name);
	bool dot = nlen == 1 && name[0] == '.', dotdot = nlen == 2 && name[0] == '.' && name[1] == '.';
	bool dotdot_root = dotdot && local_is_root(l->lf, l->dst);
	struct be_dirent e = {
		.name = name, .namelen = (uint32_t)nlen, .fileid = de->d_ino,
		.cookie = (uint64_t)de->d_off, .type = local_dtype(de->d_type),
	};
	struct be_attr a;
	struct be_handle h;

	if (nlen > BE_NAME_MAX || ((dot || dotdot) && (l->flags & BE_READDIR_NO_DOTS)))
		return true; /* skipped (a too long name cannot happen on Linux) */
	if (dotdot_root)
		e.fileid = (uint64_t)l->lf->ino; /* the root is its own parent */
	if (l->flags & (BE_READDIR_ATTRS | BE_READDIR_HANDLES))
		local_dirent_plus(l, name, dot || dotdot_root, &e, &a, &h);
	return l->fn(l->arg, &e);
}

/* Entries from cookie on until the callback declines one or the directory ends. */
static int local_dirlist_fill(struct local_dirlist *l, int dfd, uint64_t cookie, bool *eof)
{
	*eof = false;
	if (lseek(dfd, (off_t)cookie, SEEK_SET) == (off_t)-1)
		return BE_EBADCOOKIE; /* the cookie is no longer valid */
	for (;;) {
		ssize_t n = getdents64(dfd, local_dirbuf, sizeof(local_dirbuf));

		if (n < 0)
			return errno == EINVAL || errno == ENOENT ? BE_EBADCOOKIE : errno;
		if (n == 0) {
			*eof = true;
			return 0;
		}
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *de = (const struct dirent64 *)(local_dirbuf + off);

			if (!local_dirent_emit(l, de))
				return 0;
			off += de->d_reclen;
		}
	}
}

int local_readdir(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, uint64_t cookie,
		  uint64_t verf, unsigned flags, be_readdir_fn fn, void *arg, uint64_t *verf_out, bool *eof)
{
	struct local_fs *lf = local_fs(fs);
	struct local_dirlist l = { .lf = lf, .pfd = local_fd(dir), .flags = flags, .fn = fn, .arg = arg };
	struct stat dst;
	char path[32];
	int dfd, err;

	*eof = false;
	if (fstat(l.pfd, &dst) < 0)
		return errno;
	if (!S_ISDIR(dst.st_mode))
		return ENOTDIR;
	l.dst = &dst;
	*verf_out = local_cookieverf(lf->export_id, (uint64_t)dst.st_ino);
	/* RFC 1813 §3.3.16: a cookie other than 0 is only valid with the verifier it was issued with */
	if (cookie != 0 && verf != *verf_out && !(verf == 0 && (flags & BE_READDIR_ZERO_VERF)))
		return BE_EBADCOOKIE;
	err = local_id_caller(cr);
	if (err)
		return err;
	/* through /proc: only read permission on the directory itself is checked, as opendir */
	local_fd_path(l.pfd, path);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno;
	err = local_dirlist_fill(&l, dfd, cookie, eof);
	close(dfd);
	return err;
}
