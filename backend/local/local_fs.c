/*
 * local_fs.c - the "local" driver: one instance per export of a local
 * directory tree; objects as O_PATH fds, handles as kernel file handles
 * (name_to_handle_at / open_by_handle_at), and confinement beneath the root.
 *
 * The root is opened once per instance (an O_RDONLY directory fd: also the
 * mount fd open_by_handle_at needs). When the kernel allows it
 * (open_tree(OPEN_TREE_CLONE): root with CAP_SYS_ADMIN) the root lives in a
 * private, non-recursive clone of the export's mount: lookups cannot reach
 * file systems mounted below the export (the mount point shows as the plain
 * directory underneath), and ".." towards a parent that is not beneath the
 * clone's root fails in the kernel (path_connected()).
 *
 * Confinement (issue 8 defect 5; rnfsd-exports(5) "subtree_check"): a kernel
 * handle names an inode anywhere on the file system, so a directory a client
 * holds that a local user moves out of the export would let LOOKUP ".." climb
 * to the file system's root. Every directory opened by handle is therefore
 * checked to be beneath the root, as root: with the clone by one fstatat(..)
 * (the kernel refuses a disconnected parent); without it by one readlink of
 * its /proc/self/fd path when the root's mount shows its whole file system
 * (then that path is exact), else by walking ".." until the root (inside) or
 * the file system's top or another device (outside). A directory outside is
 * ESTALE; moved back, it works again.
 * Non-directories are not checked: a handle cannot say where a file is
 * linked (knfsd's no_subtree_check), the MAC stops clients from naming files
 * they were never given, and no name can be looked up from a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include "backend/local/handle_cache.h"
#include "backend/local/local.h"
#include "core/log.h"

/* Deepest directory the walk follows up to the root (each level is "../"). */
#define LOCAL_WALK_MAX ((PATH_MAX - 1) / 3)

static struct log_limit local_fs_limit, local_confine_limit;

struct local_kernel_handle {
	struct file_handle h;
	unsigned char bytes[MAX_HANDLE_SZ];
};

void local_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

void local_fd_path(int fd, char buf[32])
{
	static const char prefix[] = "/proc/self/fd/";
	char digits[12];
	unsigned n = 0, v = fd < 0 ? 0 : (unsigned)fd;

	/* by hand: on every directory handle and file open, snprintf's cost shows */
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	memcpy(buf, prefix, sizeof(prefix) - 1);
	for (unsigned i = 0; i < n; i++)
		buf[sizeof(prefix) - 1 + i] = digits[n - 1 - i];
	buf[sizeof(prefix) - 1 + n] = '\0';
}

enum be_type local_type(mode_t mode)
{
	return be_type_of_mode((uint32_t)mode);
}

void local_obj_set(struct be_obj *o, int fd, const struct stat *st)
{
	o->h = fd;
	o->type = local_type(st->st_mode);
	o->fileid = (uint64_t)st->st_ino;
}

bool local_is_root(const struct local_fs *lf, const struct stat *st)
{
	return st->st_dev == lf->dev && st->st_ino == lf->ino;
}

/* The /proc/self/fd path of fd into buf (NUL-terminated); its length, or 0. */
static size_t local_fd_link(int fd, char *buf, size_t cap)
{
	char path[32];
	ssize_t n;

	local_fd_path(fd, path);
	n = readlink(path, buf, cap - 1);
	if (n <= 0 || (size_t)n >= cap - 1)
		return 0;
	buf[n] = '\0';
	return (size_t)n;
}

/*
 * Fast positive answer without the clone: when the root's mount shows its
 * whole file system, every directory reached through it (open_by_handle_at
 * gives paths on that mount, and connects directories to their parents) has
 * an exact /proc/self/fd path, so one readlink says whether it is the root
 * or below it. No answer (another layout, a rename meanwhile): the walk decides.
 */
static bool local_confined_by_path(const struct local_fs *lf, int fd)
{
	char buf[PATH_MAX];
	size_t n;

	if (!lf->path_exact || !(n = local_fd_link(fd, buf, sizeof(buf))) || n < lf->root_len)
		return false;
	if (memcmp(buf, lf->root_path, lf->root_len) != 0)
		return false;
	return n == lf->root_len || buf[lf->root_len] == '/' || (lf->root_len == 1 && lf->root_path[0] == '/');
}

bool local_confined(struct local_fs *lf, int fd, const struct stat *st)
{
	char up[LOCAL_WALK_MAX * 3 + 1];
	struct stat prev = *st, cur;
	size_t n = 0;

	if (local_is_root(lf, st))
		return true;
	if (st->st_dev != lf->dev)
		return false; /* another file system (or btrfs subvolume): never entered */
	if (lf->cloned)
		return fstatat(fd, "..", &cur, AT_SYMLINK_NOFOLLOW) == 0; /* ENOENT: disconnected parent */
	if (local_confined_by_path(lf, fd))
		return true;
	for (unsigned depth = 0; depth < LOCAL_WALK_MAX; depth++) {
		memcpy(up + n, "../", 4);
		n += 3;
		if (fstatat(fd, up, &cur, AT_SYMLINK_NOFOLLOW) < 0)
			return false;
		if (local_is_root(lf, &cur))
			return true;
		if (cur.st_dev != lf->dev || (cur.st_ino == prev.st_ino && cur.st_dev == prev.st_dev))
			return false; /* crossed to a parent mount, or the file system's top ("/..") */
		prev = cur;
	}
	return false;
}

/* Is the root's mount one of its whole file system ("/" as its root in mountinfo)? */
static bool local_mount_is_whole_fs(int root_fd)
{
	struct statx stx;
	char line[PATH_MAX * 2 + 256];
	bool whole = false;
	FILE *f;

	if (statx(root_fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
		return false;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long id;
		char root[8];

		/* mount ID, parent ID, major:minor, root (proc(5)) */
		if (sscanf(line, "%llu %*u %*u:%*u %7s", &id, root) == 2 && id == stx.stx_mnt_id) {
			whole = !strcmp(root, "/");
			break;
		}
	}
	fclose(f);
	return whole;
}

int local_handle_at(int dirfd, const char *name, int at_flags, struct be_handle *h)
{
	struct local_kernel_handle kh;
	int mount_id;
	uint32_t n;

	kh.h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(dirfd, name, &kh.h, &mount_id, at_flags) < 0) {
		if (errno == EOVERFLOW || errno == EOPNOTSUPP) {
			log_limited(&local_fs_limit, LOG_ERR, "local: file system cannot export handles: %s",
				    strerror(errno));
			return EOPNOTSUPP;
		}
		return errno;
	}
	n = kh.h.handle_bytes;
	if (n == 0 || n > BE_HANDLE_MAX - LOCAL_HANDLE_HDR) {
		log_limited(&local_fs_limit, LOG_ERR, "local: kernel handle of %u bytes does not fit", n);
		return BE_ESERVERFAULT;
	}
	h->data[0] = (uint8_t)((uint32_t)kh.h.handle_type >> 24);
	h->data[1] = (uint8_t)((uint32_t)kh.h.handle_type >> 16);
	h->data[2] = (uint8_t)((uint32_t)kh.h.handle_type >> 8);
	h->data[3] = (uint8_t)kh.h.handle_type;
	memcpy(h->data + LOCAL_HANDLE_HDR, kh.h.f_handle, n);
	h->len = LOCAL_HANDLE_HDR + n;
	return 0;
}

/* Handles by inode identity for directory listings (handle_cache.h). */
static struct handle_cache local_hcache;

int local_handle_known(int dirfd, const char *name, const struct statx *stx, struct be_handle *h)
{
	struct handle_cache_key k;
	int err;

	if (!(stx->stx_mask & STATX_BTIME))
		return local_handle_at(dirfd, name, 0, h); /* no birth time: no key */
	k = (struct handle_cache_key){
		.dev = makedev(stx->stx_dev_major, stx->stx_dev_minor), .ino = stx->stx_ino,
		.btime_sec = stx->stx_btime.tv_sec, .btime_nsec = stx->stx_btime.tv_nsec,
	};
	if (handle_cache_get(&local_hcache, &k, h))
		return 0;
	err = local_handle_at(dirfd, name, 0, h);
	if (!err)
		handle_cache_put(&local_hcache, &k, h);
	return err;
}

unsigned be_local_handle_cache(uint64_t *max, uint64_t *hits, uint64_t *misses)
{
	struct handle_cache_counts n;

	handle_cache_counts(&local_hcache, &n);
	*max = n.max, *hits = n.hits, *misses = n.misses;
	return (unsigned)n.entries;
}

int local_handle(struct be_fs *fs, const struct be_obj *o, struct be_handle *out)
{
	(void)fs;
	return local_handle_at(local_fd(o), "", AT_EMPTY_PATH, out);
}

/*
 * open_by_handle_at(O_PATH). For a handle whose inode is being freed right
 * then (just unlinked), Linux 6.x answers ENOMEM rather than ESTALE, for
 * microseconds up to ~10 ms under load (measured: 46 retries, 8 ms). Asking
 * again, for at most ~20 ms, turns that into the ESTALE it becomes; a real
 * shortage of memory still ends as ENOMEM (NFS3ERR_JUKEBOX / NFS4ERR_DELAY).
 */
static int local_open_by_handle_retry(int root_fd, struct file_handle *fh)
{
	const struct timespec pause = { .tv_nsec = 100 * 1000 };
	int f = open_by_handle_at(root_fd, fh, O_PATH | O_CLOEXEC);

	for (int tries = 0; f < 0 && errno == ENOMEM && tries < 200; tries++) {
		if (tries >= 8)
			nanosleep(&pause, NULL);
		f = open_by_handle_at(root_fd, fh, O_PATH | O_CLOEXEC);
	}
	return f;
}

/* open_by_handle_at(O_PATH) as root; the object must still be linked. */
static int local_open_by_handle(struct local_fs *lf, const struct be_handle *h, int *fd, struct stat *st)
{
	struct local_kernel_handle kh;
	int f;

	if (h->len <= LOCAL_HANDLE_HDR || h->len - LOCAL_HANDLE_HDR > MAX_HANDLE_SZ)
		return BE_EBADHANDLE;
	kh.h.handle_bytes = h->len - LOCAL_HANDLE_HDR;
	kh.h.handle_type = (int)((uint32_t)h->data[0] << 24 | (uint32_t)h->data[1] << 16 |
				 (uint32_t)h->data[2] << 8 | h->data[3]);
	memcpy(kh.h.f_handle, h->data + LOCAL_HANDLE_HDR, kh.h.handle_bytes);
	local_id_server();
	f = local_open_by_handle_retry(lf->root_fd, &kh.h);
	if (f < 0) {
		switch (errno) {
		case ESTALE:
		case ENOENT:
		case EINVAL: /* the handle was ours (the NFS layer checked its MAC): the fs no longer knows it */
			return ESTALE;
		case EPERM:
			log_limited(&local_fs_limit, LOG_ERR,
				    "local: open_by_handle_at: EPERM (rnfsd needs CAP_DAC_READ_SEARCH)");
			return BE_ESERVERFAULT;
		default:
			return errno;
		}
	}
	if (fstat(f, st) < 0) {
		int err = errno;

		close(f);
		return err;
	}
	/* An unlinked object still open somewhere may be found by handle: it is gone for NFS. */
	if (st->st_nlink == 0) {
		close(f);
		return ESTALE;
	}
	*fd = f;
	return 0;
}

int local_open_handle(struct be_fs *fs, const struct be_handle *h, struct be_obj *out, struct be_attr *attr)
{
	struct local_fs *lf = local_fs(fs);
	struct stat st;
	int fd = -1, err = local_open_by_handle(lf, h, &fd, &st);

	if (err)
		return err;
	if (S_ISDIR(st.st_mode) && !local_confined(lf, fd, &st)) {
		log_limited(&local_confine_limit, LOG_NOTICE,
			    "local: %s: a directory handle names a directory no longer beneath the export: stale",
			    lf->path);
		close(fd);
		return ESTALE;
	}
	local_obj_set(out, fd, &st);
	if (attr)
		local_attr_from_stat(attr, &st);
	return 0;
}

static int local_root(struct be_fs *fs, struct be_obj *out, struct be_attr *attr)
{
	struct local_fs *lf = local_fs(fs);
	struct stat st;
	int fd = openat(lf->root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	if (fstat(fd, &st) < 0) {
		int err = errno;

		close(fd);
		return err;
	}
	local_obj_set(out, fd, &st);
	if (attr)
		local_attr_from_stat(attr, &st);
	return 0;
}

static int local_obj_dup(struct be_fs *fs, const struct be_obj *o, struct be_obj *out)
{
	int fd = fcntl(local_fd(o), F_DUPFD_CLOEXEC, 0);

	(void)fs;
	if (fd < 0)
		return errno;
	*out = *o;
	out->h = fd;
	return 0;
}

static void local_obj_put(struct be_fs *fs, struct be_obj *o)
{
	(void)fs;
	local_close(local_fd(o));
	*o = (struct be_obj)BE_OBJ_INIT;
}

int local_lookup_path(struct be_fs *fs, const char *path, struct be_obj *out, struct be_attr *attr)
{
	struct local_fs *lf = local_fs(fs);
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	struct stat st;
	int fd;

	if (!*path)
		return local_root(fs, out, attr);
	local_id_server();
	fd = (int)syscall(SYS_openat2, lf->root_fd, path, &how, sizeof(how));
	if (fd < 0)
		return errno == EXDEV || errno == ELOOP ? EACCES : errno;
	if (fstat(fd, &st) < 0) {
		int err = errno;

		close(fd);
		return err;
	}
	local_obj_set(out, fd, &st);
	if (attr)
		local_attr_from_stat(attr, &st);
	return 0;
}

/*
 * The root as an O_RDONLY directory fd: open_by_handle_at() refuses an O_PATH
 * mount fd (EBADF). With open_tree, *tree_fd keeps the private clone (an
 * O_PATH fd) and the root is reopened through it.
 */
static int local_open_root(const char *path, int *tree_fd)
{
	const int dflags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	int fd;

	*tree_fd = -1;
#ifdef SYS_open_tree
	*tree_fd = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (*tree_fd >= 0) {
		fd = openat(*tree_fd, ".", dflags);
		if (fd < 0) {
			close(*tree_fd);
			*tree_fd = -1;
		}
		return fd;
	}
	if (errno != EPERM && errno != ENOSYS && errno != EINVAL)
		return -1;
#endif
	return open(path, dflags);
}

void local_fs_put(struct local_fs *lf)
{
	if (atomic_fetch_sub(&lf->refs, 1) != 1)
		return;
	local_close(lf->root_fd);
	local_close(lf->tree_fd);
	free(lf);
}

static void local_fs_close(struct be_fs *fs)
{
	struct local_fs *lf = local_fs(fs);

	local_fcache_purge(lf);
	local_fs_put(lf);
}

static const struct be_ops local_ops;

static int local_fs_open(const struct be_fs_config *cfg, struct be_fs **out)
{
	struct local_fs *lf = calloc(1, sizeof(*lf));
	struct be_handle h;
	struct stat st;
	int err;

	if (!lf)
		return ENOMEM;
	lf->pub = (struct be_fs){ .ops = &local_ops, .driver = "local", .handle_max = BE_HANDLE_MAX,
				  .meta_fast = true, .one_server = true };
	atomic_init(&lf->refs, 1);
	snprintf(lf->path, sizeof(lf->path), "%s", cfg->path);
	lf->export_id = cfg->export_id;
	local_id_server();
	lf->root_fd = local_open_root(cfg->path, &lf->tree_fd);
	lf->cloned = lf->tree_fd >= 0;
	if (lf->root_fd < 0) {
		err = errno;
		log_err("local: export %s: %s", cfg->path, strerror(err));
		goto fail;
	}
	if (fstat(lf->root_fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		err = ENOTDIR;
		log_err("local: export %s: not a directory", cfg->path);
		goto fail;
	}
	lf->dev = st.st_dev;
	lf->ino = st.st_ino;
	struct statfs sfs;

	lf->in_memory = fstatfs(lf->root_fd, &sfs) == 0 &&
			(sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC);
	if (!lf->cloned && local_mount_is_whole_fs(lf->root_fd)) {
		lf->root_len = local_fd_link(lf->root_fd, lf->root_path, sizeof(lf->root_path));
		lf->path_exact = lf->root_len > 0;
	}
	err = local_handle_at(lf->root_fd, "", AT_EMPTY_PATH, &h);
	if (err) {
		log_err("local: export %s: cannot make file handles (%s)", cfg->path, strerror(err));
		goto fail;
	}
	if (!lf->cloned)
		log_info("local: export %s: open_tree unavailable (no CAP_SYS_ADMIN); LOOKUP refuses to enter "
			 "submounts, directory handles are checked by %s", cfg->path,
			 lf->path_exact ? "their path" : "walking up to the root");
	*out = &lf->pub;
	return 0;
fail:
	local_close(lf->root_fd);
	local_close(lf->tree_fd);
	free(lf);
	return err;
}

static int local_driver_init(void)
{
	local_lock_limit(be_local_settings()->lock_descriptions);
	if (handle_cache_init(&local_hcache, LOCAL_HANDLE_CACHE_ENTRIES))
		return ENOMEM;
	return local_fcache_init();
}

static void local_driver_shutdown(void)
{
	local_locks_shutdown();
	local_fcache_shutdown();
	local_ring_here_release();
	handle_cache_release(&local_hcache);
}

const struct be_driver local_driver = {
	.name = "local",
	.init = local_driver_init,
	.shutdown = local_driver_shutdown,
	.open = local_fs_open,
};

static const struct be_ops local_ops = {
	.close = local_fs_close,
	.end_call = local_end_call,
	.root = local_root,
	.open_handle = local_open_handle,
	.handle = local_handle,
	.obj_dup = local_obj_dup,
	.obj_put = local_obj_put,
	.lookup_path = local_lookup_path,
	.getattr = local_getattr,
	.setattr = local_setattr,
	.access = local_access,
	.lookup = local_lookup,
	.readlink = local_readlink,
	.create = local_create,
	.link = local_link,
	.remove = local_remove,
	.rmdir = local_rmdir,
	.rename = local_rename,
	.readdir = local_readdir,
	.statfs = local_statfs,
	.commit_meta = local_commit_meta,
	.file_open = local_file_open,
	.file_open_handle = local_file_open_handle,
	.file_get = local_file_get,
	.file_put = local_file_put,
	.file_getattr = local_file_getattr,
	.read = local_read,
	.read_pipe = local_read_pipe,
	.write = local_write,
	.commit = local_commit,
	.allocate = local_allocate,
	.seek = local_seek,
	.copy = local_copy,
	.clone = local_clone,
	.lock_test = local_lock_test,
	.lock_set = local_lock_set,
	.lock_unset = local_lock_unset,
	.lock_owner_release = local_lock_owner_release,
	.lock_owner_holds = local_lock_owner_holds,
	.watch = local_watch,
	.unwatch = local_unwatch,
	.lease_set = local_lease_set,
	.lease_unset = local_lease_unset,
	.getxattr = local_getxattr,
	.setxattr = local_setxattr,
	.listxattr = local_listxattr,
	.removexattr = local_removexattr,
};
