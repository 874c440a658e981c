/*
 * local_meta.c - attributes and names of the local backend: getattr,
 * setattr, access, lookup, readlink, statfs, commit_meta, and struct stat ->
 * struct be_attr.
 *
 * Everything a client asks for runs under its identity (identity.c), so the
 * kernel decides who may chown, chmod, set times, search a directory.
 * Lookups never follow symlinks (O_PATH|O_NOFOLLOW) and never leave the
 * export: ".." at the root is the root, a ".." result is checked to be
 * beneath the root (local_confined), and a file system mounted below the
 * export is not entered (with the open_tree clone it is not even visible;
 * without it a change of st_dev is refused).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "backend/local/local.h"
#include "core/log.h"
#include "core/loop.h"

static struct log_limit local_meta_limit;

static struct be_time local_time(const struct timespec *ts)
{
	return (struct be_time){ .sec = ts->tv_sec, .nsec = (uint32_t)ts->tv_nsec };
}

/* major/minor of the device, remembered per thread (READDIRPLUS converts one stat per entry). */
static void local_dev_split(dev_t dev, uint64_t *maj, uint64_t *min)
{
	static __thread dev_t last = (dev_t)-1;
	static __thread uint64_t last_maj, last_min;

	if (dev != last) {
		last_maj = major(dev);
		last_min = minor(dev);
		last = dev;
	}
	*maj = last_maj;
	*min = last_min;
}

void local_attr_from_stat(struct be_attr *a, const struct stat *st)
{
	a->valid = BE_AT_BASIC;
	a->type = local_type(st->st_mode);
	a->mode = st->st_mode & 07777;
	a->nlink = (uint32_t)st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->size = (uint64_t)st->st_size;
	a->space_used = (uint64_t)st->st_blocks * 512u;
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
		a->rdev_major = major(st->st_rdev);
		a->rdev_minor = minor(st->st_rdev);
	} else {
		a->rdev_major = a->rdev_minor = 0;
	}
	local_dev_split(st->st_dev, &a->fsid_major, &a->fsid_minor);
	a->fileid = (uint64_t)st->st_ino;
	a->atime = local_time(&st->st_atim);
	a->mtime = local_time(&st->st_mtim);
	a->ctime = local_time(&st->st_ctim);
	a->btime = (struct be_time){ 0, 0 };
	/* No i_version for user space: ctime in nanoseconds, as knfsd without iversion. */
	a->change = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
}

void local_stat_from_statx(struct stat *st, const struct statx *x)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(x->stx_dev_major, x->stx_dev_minor);
	st->st_ino = x->stx_ino;
	st->st_mode = x->stx_mode;
	st->st_nlink = x->stx_nlink;
	st->st_uid = x->stx_uid;
	st->st_gid = x->stx_gid;
	st->st_rdev = makedev(x->stx_rdev_major, x->stx_rdev_minor);
	st->st_size = (off_t)x->stx_size;
	st->st_blksize = (blksize_t)x->stx_blksize;
	st->st_blocks = (blkcnt_t)x->stx_blocks;
	st->st_atim = (struct timespec){ x->stx_atime.tv_sec, x->stx_atime.tv_nsec };
	st->st_mtim = (struct timespec){ x->stx_mtime.tv_sec, x->stx_mtime.tv_nsec };
	st->st_ctim = (struct timespec){ x->stx_ctime.tv_sec, x->stx_ctime.tv_nsec };
}

void local_attr_fd(struct be_attr *a, int fd)
{
	struct stat st;

	if (!a)
		return;
	if (fd >= 0 && fstat(fd, &st) == 0)
		local_attr_from_stat(a, &st);
	else
		a->valid = 0;
}

int local_getattr(struct be_fs *fs, const struct be_obj *o, struct be_attr *out)
{
	struct stat st;

	(void)fs;
	if (fstat(local_fd(o), &st) < 0)
		return errno;
	local_attr_from_stat(out, &st);
	return 0;
}

/* Truncate: write permission as the caller, or as knfsd's NFSD_MAY_OWNER_OVERRIDE the owner's. */
static int local_truncate(const struct be_cred *cr, int fd, const struct stat *st, uint64_t size)
{
	char path[32];
	int wfd, err = 0;

	if (S_ISDIR(st->st_mode))
		return EISDIR;
	if (!S_ISREG(st->st_mode))
		return EINVAL;
	if (size > (uint64_t)INT64_MAX)
		return EFBIG;
	local_fd_path(fd, path);
	/* The holder of a write delegation (nothing else gets past NFSv4's
	 * recall): through its lease's description, which breaks nothing. */
	wfd = local_lease_dup(st);
	if (wfd < 0)
		wfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC); /* a lease: EWOULDBLOCK */
	err = wfd < 0 ? errno : 0;
	if (wfd < 0 && err == EACCES && st->st_uid == cr->uid) {
		local_id_server();
		wfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC); /* a lease: EWOULDBLOCK */
		err = wfd < 0 ? errno : 0;
		if (local_id_caller(cr) != 0) {
			local_close(wfd);
			return BE_ESERVERFAULT;
		}
	}
	if (wfd < 0)
		return err;
	err = ftruncate(wfd, (off_t)size) < 0 ? errno : 0;
	close(wfd);
	return err;
}

static struct timespec local_ts(uint32_t mask, uint32_t set_bit, uint32_t now_bit, const struct be_time *t)
{
	if (mask & now_bit)
		return (struct timespec){ 0, UTIME_NOW };
	if (mask & set_bit)
		return (struct timespec){ .tv_sec = t->sec, .tv_nsec = t->nsec };
	return (struct timespec){ 0, UTIME_OMIT };
}

/*
 * Apply sa to the object behind the O_PATH fd, as the caller (applied).
 * Order: size, owner, mode (after chown, which may clear set-id bits), times.
 */
int local_sattr_apply(const struct be_cred *cr, int fd, const struct stat *st, const struct be_sattr *sa)
{
	char path[32];
	int err;

	local_watch_self(st);
	if (sa->mask & BE_SET_SIZE) {
		err = local_truncate(cr, fd, st, sa->size);
		if (err)
			return err;
	}
	if ((sa->mask & (BE_SET_UID | BE_SET_GID)) &&
	    fchownat(fd, "", sa->mask & BE_SET_UID ? sa->uid : (uid_t)-1, sa->mask & BE_SET_GID ? sa->gid : (gid_t)-1,
		     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return errno;
	/* Linux symlinks have no mode of their own; knfsd ignores it too. */
	if ((sa->mask & BE_SET_MODE) && !S_ISLNK(st->st_mode)) {
		local_fd_path(fd, path);
		if (chmod(path, sa->mode & 07777) < 0)
			return errno;
	}
	if (sa->mask & (BE_SET_ATIME | BE_SET_MTIME | BE_SET_ATIME_NOW | BE_SET_MTIME_NOW)) {
		struct timespec ts[2] = {
			local_ts(sa->mask, BE_SET_ATIME, BE_SET_ATIME_NOW, &sa->atime),
			local_ts(sa->mask, BE_SET_MTIME, BE_SET_MTIME_NOW, &sa->mtime),
		};
		if (utimensat(fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return errno;
	}
	return 0;
}

int local_setattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_sattr *sa,
		  const struct be_time *ctime_guard, struct be_attr *pre, struct be_attr *post)
{
	int fd = local_fd(o), err;
	struct stat st;

	(void)fs;
	if (fstat(fd, &st) < 0) {
		err = errno;
		goto out;
	}
	if (pre)
		local_attr_from_stat(pre, &st);
	/* RFC 1813 §3.3.2 guard.check: the ctime the client saw, else NOT_SYNC (nothing changed) */
	if (ctime_guard && (st.st_ctim.tv_sec != ctime_guard->sec || (uint32_t)st.st_ctim.tv_nsec != ctime_guard->nsec)) {
		err = BE_ENOTSYNC;
		goto out;
	}
	err = sa->mask ? local_id_caller(cr) : 0;
	if (!err && sa->mask)
		err = local_sattr_apply(cr, fd, &st, sa);
out:
	local_attr_fd(post, fd);
	return err;
}

/* The mode bits' class of cr for st (owner, group, other), shifted to the owner's place. */
static unsigned local_mode_class(const struct be_cred *cr, const struct stat *st)
{
	uint32_t n = cr->ngroups <= BE_CRED_MAX_GROUPS ? cr->ngroups : BE_CRED_MAX_GROUPS;

	if (cr->uid == st->st_uid)
		return st->st_mode & 0700;
	bool in_group = cr->gid == st->st_gid;

	for (uint32_t i = 0; i < n && !in_group; i++)
		in_group = cr->groups[i] == st->st_gid;
	return in_group ? (st->st_mode & 0070) << 3 : (st->st_mode & 0007) << 6;
}

bool local_may_here(const struct be_cred *cr, int fd, const struct stat *st, unsigned any, unsigned all)
{
	static const char acl[] = "system.posix_acl_access";
	unsigned class = local_mode_class(cr, st);
	char path[32];
	ssize_t n;

	if ((any && !(class & any)) || (class & all) != all)
		return false;
	n = fgetxattr(fd, acl, NULL, 0);
	if (n < 0 && errno == EBADF) { /* an O_PATH fd (a directory's) takes no f*xattr calls */
		local_fd_path(fd, path);
		n = getxattr(path, acl, NULL, 0);
	}
	return n < 0 && (errno == ENODATA || errno == EOPNOTSUPP);
}

int local_dir_may_here(const struct be_cred *cr, int dfd, unsigned all, struct stat *dst)
{
	if (cr->uid == 0)
		return 0; /* CAP_DAC_OVERRIDE (and CAP_FOWNER for a sticky directory) */
	if (fstat(dfd, dst) < 0)
		return errno;
	return local_may_here(cr, dfd, dst, 0, all) ? 0 : EWOULDBLOCK;
}

bool local_may(const struct be_cred *cr, int fd, const struct stat *st, int mode)
{
	const int flags = AT_EACCESS | AT_EMPTY_PATH; /* checked as the thread's fsuid/fsgid */

	/* knfsd NFSD_MAY_OWNER_OVERRIDE: the owner may read/write its file whatever the mode
	 * (a file created 0444 must still take the creator's WRITEs, as a local open fd does). */
	if (!(mode & X_OK) && S_ISREG(st->st_mode) && st->st_uid == cr->uid)
		return true;
	if (faccessat(fd, "", mode, flags) == 0)
		return true;
	/* knfsd NFSD_MAY_READ_IF_EXEC: an executable file may be read (to page it in) */
	return mode == R_OK && S_ISREG(st->st_mode) && faccessat(fd, "", X_OK, flags) == 0;
}

/* RFC 1813 §3.3.4 / RFC 8881 §18.1: which of the requested rights the caller has, as the kernel decides. */
int local_access(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, uint32_t want,
		 uint32_t *granted)
{
	int fd = local_fd(o), err;
	struct stat st;
	bool dir;

	(void)fs;
	*granted = 0;
	if (fstat(fd, &st) < 0)
		return errno;
	err = local_id_caller(cr);
	if (err)
		return err;
	dir = S_ISDIR(st.st_mode);
	if ((want & BE_ACCESS_READ) && local_may(cr, fd, &st, R_OK))
		*granted |= BE_ACCESS_READ;
	if (dir && (want & BE_ACCESS_LOOKUP) && local_may(cr, fd, &st, X_OK))
		*granted |= BE_ACCESS_LOOKUP;
	if (!dir && (want & BE_ACCESS_EXECUTE) && local_may(cr, fd, &st, X_OK))
		*granted |= BE_ACCESS_EXECUTE;
	if ((want & (BE_ACCESS_MODIFY | BE_ACCESS_EXTEND | BE_ACCESS_DELETE)) && local_may(cr, fd, &st, W_OK)) {
		*granted |= want & (BE_ACCESS_MODIFY | BE_ACCESS_EXTEND);
		if (dir)
			*granted |= want & BE_ACCESS_DELETE; /* deleting entries of this directory */
	}
	return 0;
}

/* ".." of a directory that is not the root: must still be beneath it (checked as root). */
static int local_dotdot_check(struct local_fs *lf, const struct be_cred *cr, int fd, const struct stat *st)
{
	bool ok;

	if (local_is_root(lf, st))
		return 0;
	local_id_server();
	ok = local_confined(lf, fd, st);
	if (local_id_caller(cr) != 0)
		return BE_ESERVERFAULT;
	return ok ? 0 : ESTALE;
}

/*
 * Applies the caller for a search of dfd. The event-loop thread (NFSv3
 * LOOKUP runs there, rpc.h RPC_RUN_INLINE_TRY) must not switch identity: it
 * searches as the server where root or the mode bits grant the caller the
 * search, and says EWOULDBLOCK (ask again on a worker) otherwise, and for
 * ".." below the root (whose check switches identity).
 */
static int local_search_as(const struct be_cred *cr, int dfd, bool dotdot_below_root)
{
	struct stat st;

	if (!loop_is_loop_thread())
		return local_id_caller(cr);
	if (dotdot_below_root)
		return EWOULDBLOCK;
	return local_dir_may_here(cr, dfd, S_IXUSR, &st);
}

int local_lookup(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		 struct be_obj *out, struct be_attr *attr)
{
	struct local_fs *lf = local_fs(fs);
	int dfd = local_fd(dir), fd, err;
	bool dotdot = !strcmp(name, "..");
	struct stat st;

	if (dotdot) {
		if (fstat(dfd, &st) < 0)
			return errno;
		if (local_is_root(lf, &st)) {
			name = "."; /* the export root is its own parent: never a way out */
			dotdot = false;
		}
	}
	err = local_search_as(cr, dfd, dotdot);
	if (err)
		return err;
	fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		/* ".." of a directory removed, or (in the open_tree clone) moved out of the
		 * export, is ENOENT from the kernel: the directory is gone for NFS */
		return dotdot && errno == ENOENT ? ESTALE : errno;
	if (fstat(fd, &st) < 0) {
		err = errno;
	} else if (st.st_dev != lf->dev) {
		/* only without an open_tree clone: another file system is mounted here; no crossmnt */
		log_limited(&local_meta_limit, LOG_NOTICE, "local: %s: LOOKUP of a mount point refused", lf->path);
		err = EACCES;
	} else if (dotdot) {
		err = local_dotdot_check(lf, cr, fd, &st);
	}
	if (err) {
		close(fd);
		return err;
	}
	local_obj_set(out, fd, &st);
	if (attr)
		local_attr_from_stat(attr, &st);
	return 0;
}

int local_readlink(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap,
		   size_t *len)
{
	ssize_t n;

	(void)fs;
	(void)cr; /* reading a symlink needs no permission: its directory was searched to find it */
	if (o->type != BE_LNK)
		return EINVAL;
	n = readlinkat(local_fd(o), "", buf, cap);
	if (n < 0)
		return errno;
	*len = (size_t)n;
	return 0;
}

int local_statfs(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, struct be_statfs *out)
{
	int fd = local_fd(o);
	struct statvfs sv;
	long linkmax, namemax;

	(void)fs;
	(void)cr; /* statvfs's f_bavail already is what an unprivileged user may use */
	if (fstatvfs(fd, &sv) < 0)
		return errno;
	linkmax = fpathconf(fd, _PC_LINK_MAX);
	namemax = fpathconf(fd, _PC_NAME_MAX);
	*out = (struct be_statfs){
		.total_bytes = (uint64_t)sv.f_blocks * sv.f_frsize,
		.free_bytes = (uint64_t)sv.f_bfree * sv.f_frsize,
		.avail_bytes = (uint64_t)sv.f_bavail * sv.f_frsize,
		.total_files = sv.f_files,
		.free_files = sv.f_ffree,
		.avail_files = sv.f_favail,
		.link_max = linkmax > 0 && linkmax < UINT32_MAX ? (uint32_t)linkmax : 32000,
		.name_max = namemax > 0 && namemax <= BE_NAME_MAX ? (uint32_t)namemax : BE_NAME_MAX,
		.max_file_size = (uint64_t)INT64_MAX,
		.block_size = sv.f_bsize <= UINT32_MAX ? (uint32_t)sv.f_bsize : 0,
	};
	return 0;
}

int local_commit_meta(struct be_fs *fs, const struct be_obj *o)
{
	char path[32];
	int wfd, err = 0;

	if (o->type != BE_DIR && o->type != BE_REG)
		return 0; /* nothing to fsync through (the parent's fsync covers journaled file systems) */
	if (local_fs(fs)->in_memory)
		return 0; /* tmpfs, ramfs: no stable storage, fsync does nothing (and the reopen as root
		             below would cost this thread its caller identity, switched back next call) */
	local_id_server(); /* the caller may not be allowed to open it */
	local_fd_path(local_fd(o), path);
	wfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (wfd < 0)
		return errno;
	if (fsync(wfd) < 0) {
		err = errno;
		log_limited(&local_meta_limit, LOG_WARNING, "local: fsync for metadata: %s", strerror(err));
	}
	close(wfd);
	return err;
}
