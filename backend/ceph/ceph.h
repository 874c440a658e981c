/*
 * ceph.h - the "ceph" backend: a directory of a CephFS file system exported
 * through libcephfs's low-level API (ceph_ll_*). Shared by the files of
 * backend/ceph/ only; the rest of rnfsd sees backend/backend.h. A map:
 *
 *   ceph_fs.c     the driver, instances (one bounded-time mount per export),
 *                 handles (inode number + snapshot id), objects, confinement,
 *                 the caller's identity as a cached UserPerm, errors
 *   ceph_meta.c   getattr, setattr, access, lookup, readlink, statfs, create,
 *                 link, remove, rmdir, rename, readdir, xattrs
 *   ceph_gated.c  the operations table: each operation through the
 *                 instance's gate (ceph_gate.c: max-calls, stuck detection)
 *   ceph_io.c     open files (struct be_file, cached by handle), read,
 *                 write, commit, allocate, seek, byte-range locks
 *   ceph_release.c the mount's release queue and thread: every close, put
 *                 and releasedir (ceph_rel_*) runs there, never on a worker
 *
 * Objects (struct be_obj) hold an Inode * with one reference (ceph_rel_put
 * releases it). Every call made for a client passes the client's identity
 * to libcephfs as a UserPerm and libcephfs checks permissions with it; calls
 * without a cred use the mount's own (root's) UserPerm.
 */
#ifndef RNFSD_BACKEND_CEPH_H
#define RNFSD_BACKEND_CEPH_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <cephfs/libcephfs.h>

#include "backend/backend.h"
#include "backend/ceph/ceph_gate.h"
#include "backend/ceph/ceph_release.h"

/* Handle bytes: inode number and snapshot id, each 8 bytes big-endian. */
#define CEPH_HANDLE_LEN 16u
#define CEPH_FCACHE_SLOTS 256u
/* What every attribute fetch asks for (struct be_attr's BE_AT_BASIC and the change attribute). */
#define CEPH_WANT (CEPH_STATX_BASIC_STATS | CEPH_STATX_VERSION | CEPH_STATX_BTIME)

struct ceph_file;

struct ceph_fs {
	struct be_fs pub;                 /* first: the be_fs the NFS layer holds */
	atomic_uint refs;                 /* the opener's + one per be_file of this instance */
	struct ceph_mount_info *cmount;
	UserPerm *server;                 /* the mount's own identity (root): not ours to free */
	struct Inode *root;               /* one reference, for the instance's life */
	uint64_t root_ino;
	uint64_t fsid;                    /* ceph_get_fs_cid(): fsid_major of every attribute */
	atomic_bool sick;                 /* an operation timed out: close without flushing */
	unsigned secs;                    /* mount-timeout: bounds the mount and the unmount */
	unsigned stuck_secs;              /* op-timeout: a call inside longer is stuck (0: never) */
	struct ceph_gate gate;            /* calls inside libcephfs (ceph_gated.c) */
	struct ceph_release_q rel;        /* closes, puts, releasedirs: one thread (ceph_release.h) */
	bool rel_started;
	char path[PATH_MAX];
	uint32_t export_id;
	pthread_mutex_t fcache_lock;
	struct ceph_file *fcache[CEPH_FCACHE_SLOTS]; /* by handle, one reference each */
};

struct ceph_file {
	atomic_uint refs;
	struct ceph_fs *cf;
	struct Inode *in;   /* one reference */
	struct Fh *fh;
	uint64_t ino, snap;
	bool writable;      /* opened O_RDWR */
};

/*
 * A device number as CephFS stores it: the Linux kernel's internal dev_t
 * (major << 20 | minor), which is what ceph-fuse (new_decode_dev at mknod,
 * new_encode_dev at getattr) and the kernel client (i_rdev raw) read and
 * write, not glibc's makedev() layout: with makedev a device 1,3 made
 * through rnfsd shows as 0,259 to every other CephFS client.
 */
#define CEPH_RDEV_MINOR_BITS 20u
static inline uint64_t ceph_rdev_make(uint32_t major, uint32_t minor)
{
	return (uint64_t)(major & 0xfffu) << CEPH_RDEV_MINOR_BITS | (minor & 0xfffffu);
}

static inline uint32_t ceph_rdev_major(uint64_t rdev)
{
	return (uint32_t)(rdev >> CEPH_RDEV_MINOR_BITS) & 0xfffu;
}

static inline uint32_t ceph_rdev_minor(uint64_t rdev)
{
	return (uint32_t)rdev & 0xfffffu;
}

static inline struct ceph_fs *ceph_fs(struct be_fs *fs)
{
	return (struct ceph_fs *)fs;
}

static inline struct Inode *ceph_in(const struct be_obj *o)
{
	return (struct Inode *)o->h;
}

static inline struct ceph_file *ceph_file(struct be_file *f)
{
	return (struct ceph_file *)f;
}

/* ---- ceph_gated.c ---- */
extern const struct be_ops ceph_ops;

/* ---- ceph_fs.c ---- */
extern const struct be_driver ceph_driver;
void cephbe_close(struct be_fs *fs);
int cephbe_root(struct be_fs *fs, struct be_obj *out, struct be_attr *attr);
int cephbe_open_handle(struct be_fs *fs, const struct be_handle *h, struct be_obj *out, struct be_attr *attr);
int cephbe_handle(struct be_fs *fs, const struct be_obj *o, struct be_handle *out);
int cephbe_obj_dup(struct be_fs *fs, const struct be_obj *o, struct be_obj *out);
void cephbe_obj_put(struct be_fs *fs, struct be_obj *o);
int cephbe_lookup_path(struct be_fs *fs, const char *path, struct be_obj *out, struct be_attr *attr);
void ceph_fs_put(struct ceph_fs *cf);
/* Releases through the mount's release thread, in the order they are called (a put after the close
 * of the same inode runs after it); the caller returns at once. Never fail: a ring that stays full
 * (the thread stuck inside libcephfs) leaks the reference, logged. */
void ceph_rel_close(struct ceph_fs *cf, struct Fh *fh);
void ceph_rel_put(struct ceph_fs *cf, struct Inode *in);
void ceph_rel_releasedir(struct ceph_fs *cf, struct ceph_dir_result *dirp);
/* libcephfs's negative errno as the backend's positive one (0 for >= 0). */
int ceph_err(int r);
/* The same for a data operation: a timeout marks the mount sick (closed without flushing). */
int ceph_io_err(struct ceph_fs *cf, int r);
void ceph_attr_from_statx(const struct ceph_fs *cf, struct be_attr *a, const struct ceph_statx *stx);
/* A new object for in (takes its reference). */
void ceph_obj_set(struct be_obj *o, struct Inode *in, const struct ceph_statx *stx);
/* The caller's identity as a UserPerm (cached per thread; never freed by the caller). NULL: ENOMEM. */
UserPerm *ceph_perm(const struct be_cred *cr);
/* Attributes of in as the server. */
int ceph_getattr_in(struct ceph_fs *cf, struct Inode *in, struct be_attr *out);
void ceph_handle_encode(uint64_t ino, uint64_t snap, struct be_handle *h);
/* Decode h: BE_EBADHANDLE if it is not one of ours. */
int ceph_handle_decode(const struct be_handle *h, uint64_t *ino, uint64_t *snap);
/* The Inode a handle names (one reference): ESTALE when gone or a directory outside the export. */
int ceph_inode_by_handle(struct ceph_fs *cf, uint64_t ino, uint64_t snap, struct Inode **out,
			 struct ceph_statx *stx);
/* Does the mode, owner and groups let cr do want (BE_ACCESS_*)? The granted subset. */
uint32_t ceph_mode_access(const struct ceph_statx *stx, const struct be_cred *cr, uint32_t want);

/* ---- ceph_meta.c ---- */
int cephbe_getattr(struct be_fs *fs, const struct be_obj *o, struct be_attr *out);
int cephbe_setattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_sattr *sa,
		 const struct be_time *ctime_guard, struct be_attr *pre, struct be_attr *post);
int cephbe_access(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, uint32_t want,
		uint32_t *granted);
int cephbe_lookup(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		struct be_obj *out, struct be_attr *attr);
int cephbe_readlink(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap,
		  size_t *len);
int cephbe_statfs(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, struct be_statfs *out);
int cephbe_commit_meta(struct be_fs *fs, const struct be_obj *o);
int cephbe_create(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		const struct be_create *how, struct be_obj *out, struct be_attr *attr, bool *existed);
int cephbe_link(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_obj *dir,
	      const char *name);
int cephbe_remove(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name);
int cephbe_rmdir(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name);
int cephbe_rename(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *from_dir, const char *from,
		const struct be_obj *to_dir, const char *to);
int cephbe_readdir(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, uint64_t cookie,
		 uint64_t verf, unsigned flags, be_readdir_fn fn, void *arg, uint64_t *verf_out, bool *eof);
int cephbe_getxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name,
		  void *buf, size_t cap, size_t *len);
int cephbe_setxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name,
		  const void *value, size_t len, enum be_xattr_how how);
int cephbe_listxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap,
		   size_t *len);
int cephbe_removexattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name);

/* ---- ceph_io.c ---- */
int cephbe_file_open(struct be_fs *fs, const struct be_obj *o, unsigned flags, struct be_file **out);
int cephbe_file_open_handle(struct be_fs *fs, const struct be_handle *h, unsigned flags, struct be_file **out);
void cephbe_file_get(struct be_fs *fs, struct be_file *f);
void cephbe_file_put(struct be_fs *fs, struct be_file *f);
void cephbe_fcache_flush(struct ceph_fs *cf);
int cephbe_file_getattr(struct be_fs *fs, struct be_file *f, struct be_attr *out);
int cephbe_read(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t offset,
	      const struct iovec *iov, unsigned iovcnt, size_t *done, bool *eof, struct be_attr *post);
int cephbe_write(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t offset,
	       const struct iovec *iov, unsigned iovcnt, size_t *done, struct be_attr *pre, struct be_attr *post);
int cephbe_commit(struct be_fs *fs, struct be_file *f, uint64_t offset, uint64_t count, struct be_attr *pre,
		struct be_attr *post);
int cephbe_allocate(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, uint64_t offset,
		  uint64_t length, bool deallocate);
int cephbe_seek(struct be_fs *fs, struct be_file *f, uint64_t offset, enum be_seek_what what, uint64_t *result);
int cephbe_lock_test(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk, bool *conflict,
		   struct be_lock_conflict *holder);
int cephbe_lock_set(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk);
int cephbe_lock_unset(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk);
void cephbe_lock_owner_release(struct be_fs *fs, struct be_file *f, uint64_t owner);

#endif
