/*
 * local.h - the "local" backend: a directory tree of a local Linux file
 * system, exported through open_by_handle_at handles. Shared by the files of
 * backend/local/ only; the rest of rnfsd sees backend/backend.h. A map:
 *
 *   local_fs.c      the driver, instances (export root, open_tree clone),
 *                   handles, objects, confinement beneath the root
 *   identity.c      the caller's fsuid/fsgid/groups on the worker thread
 *   local_meta.c    getattr, setattr, access, lookup, readlink, statfs
 *   local_dir.c     create, link, remove, rmdir, rename, readdir
 *   fcache.c        open regular files (struct be_file), cached by handle
 *   local_io.c      read, write, commit, allocate, seek, copy, clone
 *   local_lock.c    byte-range locks: one open file description per owner
 *   local_xattr.c   user.* extended attributes
 *   local_uring.c   io_uring calls as the caller (pers_cache.c: its personalities)
 *
 * Objects (struct be_obj) are O_PATH file descriptors opened as root: h is
 * the fd. Permission checks are the kernel's, made on the worker thread
 * under the caller's identity (identity.c), or on the event-loop thread
 * through the caller's io_uring personality (local_uring.c); what needs
 * root (opening by handle, opening files for the cache, fsync) switches
 * back first.
 */
#ifndef RNFSD_BACKEND_LOCAL_H
#define RNFSD_BACKEND_LOCAL_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "backend/backend.h"
#include "backend/local/pers_cache.h"
#include "rnfsd_build.h"
#if HAVE_LIBURING
#include <liburing.h>
#endif

/* Handle bytes: [0..3] kernel handle type (big-endian), [4..] kernel handle (name_to_handle_at). */
#define LOCAL_HANDLE_HDR 4u
#define LOCAL_FCACHE_ENTRIES 512u /* file cache entries unless be_local_settings() says */
#define LOCAL_LOCK_DESCS 4096u    /* lock descriptions unless be_local_settings() says */

struct local_fs {
	struct be_fs pub;          /* first: the be_fs the NFS layer holds */
	atomic_uint refs;          /* the opener's + one per be_file of this instance */
	char path[PATH_MAX];
	uint32_t export_id;
	int root_fd;               /* O_RDONLY directory: lookups, open_by_handle_at's mount fd */
	int tree_fd;               /* the open_tree() clone root_fd lives in (no submounts), or -1 */
	bool cloned;               /* tree_fd >= 0: ".." out of the root fails in the kernel */
	bool path_exact;           /* not cloned, and the root's mount shows its whole file system:
	                              a directory's /proc/self/fd path is exact (local_confined) */
	char root_path[PATH_MAX];  /* the root's /proc/self/fd path, when path_exact */
	size_t root_len;
	dev_t dev;                 /* the root's */
	ino_t ino;
	bool in_memory;            /* tmpfs or ramfs: reads never wait for a device (BE_IO_NOWAIT
	                              needs no RWF_NOWAIT, which tmpfs may not take) */
};

static inline struct local_fs *local_fs(struct be_fs *fs)
{
	return (struct local_fs *)fs;
}

static inline int local_fd(const struct be_obj *o)
{
	return (int)o->h;
}

/* ---- local_fs.c ---- */
extern const struct be_driver local_driver;
void local_fs_put(struct local_fs *lf);
/* The type of a st_mode. */
enum be_type local_type(mode_t mode);
/* A new object for fd (takes it); st fills type and fileid. */
void local_obj_set(struct be_obj *o, int fd, const struct stat *st);
/* Is the directory fd (st) beneath the root? As root. */
bool local_confined(struct local_fs *lf, int fd, const struct stat *st);
bool local_is_root(const struct local_fs *lf, const struct stat *st);
/* Handle of name relative to dirfd ("" with AT_EMPTY_PATH: dirfd itself). errno value. */
int local_handle_at(int dirfd, const char *name, int at_flags, struct be_handle *h);
/* The handle of name in dirfd, whose statx(2) (with STATX_BTIME asked) is stx:
 * from the handle cache (handle_cache.h) when the file system gives birth
 * times, else local_handle_at(). */
int local_handle_known(int dirfd, const char *name, const struct statx *stx, struct be_handle *h);
#define LOCAL_HANDLE_CACHE_ENTRIES 32768u /* about 2.5 MB */
/* "/proc/self/fd/N" for path-based system calls on O_PATH fds. */
void local_fd_path(int fd, char buf[32]);
void local_close(int fd);
int local_open_handle(struct be_fs *fs, const struct be_handle *h, struct be_obj *out, struct be_attr *attr);
int local_handle(struct be_fs *fs, const struct be_obj *o, struct be_handle *out);

/* ---- identity.c ---- */
/* Run as cr on this thread (a no-op when already so). 0 or an errno value (identity restored). */
int local_id_caller(const struct be_cred *cr);
/* Run as root (fsuid/fsgid 0, no groups) on this thread. */
void local_id_server(void);
/* The uid this thread runs as now. */
uint32_t local_id_uid(void);
void local_end_call(struct be_fs *fs);

/* ---- local_meta.c ---- */
void local_attr_from_stat(struct be_attr *a, const struct stat *st);
/* statx(2)'s answer as the struct stat fstatat(2) would have given. */
void local_stat_from_statx(struct stat *st, const struct statx *x);
/* fstat(fd) into a (valid 0 on failure); NULL a: nothing. */
void local_attr_fd(struct be_attr *a, int fd);
int local_getattr(struct be_fs *fs, const struct be_obj *o, struct be_attr *out);
int local_setattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_sattr *sa,
		  const struct be_time *ctime_guard, struct be_attr *pre, struct be_attr *post);
/* sa applied to the O_PATH fd (st: its attributes), as cr (identity already applied). */
int local_sattr_apply(const struct be_cred *cr, int fd, const struct stat *st, const struct be_sattr *sa);
int local_access(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, uint32_t want,
		 uint32_t *granted);
/* May the applied identity (cr) open fd for mode (R_OK/W_OK/X_OK)? knfsd's owner override and read-if-exec. */
bool local_may(const struct be_cred *cr, int fd, const struct stat *st, int mode);
/* Do the mode bits of cr's class (owner, group with the supplementary groups, other) grant
 * one of any (0: none needed) and all of all (owner-placed: S_IRUSR, S_IXUSR...), with no
 * POSIX ACL on fd to say otherwise? For the event-loop thread, which must not apply cr:
 * where this says yes, so would the kernel (false is "not decided here", never a refusal). */
bool local_may_here(const struct be_cred *cr, int fd, const struct stat *st, unsigned any, unsigned all);
/* The same for all of all on directory dfd, as the event-loop thread decides it: 0 (root, or
 * the bits), EWOULDBLOCK (not decided here), or fstat's errno. *dst: dfd's attributes (not read for root). */
int local_dir_may_here(const struct be_cred *cr, int dfd, unsigned all, struct stat *dst);
int local_lookup(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		 struct be_obj *out, struct be_attr *attr);
int local_lookup_path(struct be_fs *fs, const char *path, struct be_obj *out, struct be_attr *attr);
int local_readlink(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap,
		   size_t *len);
int local_statfs(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, struct be_statfs *out);
int local_commit_meta(struct be_fs *fs, const struct be_obj *o);

/* ---- local_dir.c ---- */
int local_create(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		 const struct be_create *how, struct be_obj *out, struct be_attr *attr, bool *existed);
int local_link(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_obj *dir,
	       const char *name);
int local_remove(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name);
int local_rmdir(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name);
int local_rename(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *from_dir, const char *from,
		 const struct be_obj *to_dir, const char *to);
int local_readdir(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, uint64_t cookie,
		  uint64_t verf, unsigned flags, be_readdir_fn fn, void *arg, uint64_t *verf_out, bool *eof);
/* RFC 1813 §3.3.16 cookieverf: constant for one directory (and across restarts). */
uint64_t local_cookieverf(uint32_t export_id, uint64_t dir_ino);

/* ---- fcache.c ---- */
struct be_file {
	struct local_fs *fs;       /* referenced while the file lives */
	int fd;                    /* O_RDWR or O_RDONLY, regular file */
	bool rdwr;
	bool cached;               /* in the cache's slots (else malloc'ed, freed at the last put) */
	bool hashed;               /* findable by handle */
	bool by_handle;            /* from file_open_handle: unlinked is ESTALE (local_file_check) */
	unsigned refs;
	struct be_handle key;      /* cached: the handle bytes */
	struct be_file *hnext;                /* hash chain / free list */
	struct be_file *lru_prev, *lru_next;  /* hashed entries, most recent first */
};

int local_fcache_init(void);
void local_fcache_shutdown(void);
/* Drop every idle entry of lf, unhash its busy ones (closed at their put). */
void local_fcache_purge(struct local_fs *lf);
int local_file_open(struct be_fs *fs, const struct be_obj *o, unsigned flags, struct be_file **out);
int local_file_open_handle(struct be_fs *fs, const struct be_handle *h, unsigned flags, struct be_file **out);
void local_file_get(struct be_fs *fs, struct be_file *f);
void local_file_put(struct be_fs *fs, struct be_file *f);
/* Close lf's cached descriptor of the file fd is open on, if no call uses it
 * (its read-write descriptor would refuse the file a lease: local_lease.c). */
void local_fcache_drop_idle(struct local_fs *lf, int fd);
int local_file_getattr(struct be_fs *fs, struct be_file *f, struct be_attr *out);
/* Before I/O on f (st: its fstat): ESTALE if a file opened by handle was unlinked
 * since (it is dropped from the cache), else 0. */
int local_file_check(struct be_file *f, const struct stat *st);

/* ---- local_io.c ---- */
int local_read(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t offset,
	       const struct iovec *iov, unsigned iovcnt, size_t *done, bool *eof, struct be_attr *post);
int local_read_pipe(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t offset,
		    size_t count, int pipe_fd, size_t *done, bool *eof, struct be_attr *post);
int local_write(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags, uint64_t offset,
		const struct iovec *iov, unsigned iovcnt, size_t *done, struct be_attr *pre, struct be_attr *post);
int local_commit(struct be_fs *fs, struct be_file *f, uint64_t offset, uint64_t count, struct be_attr *pre,
		 struct be_attr *post);
int local_allocate(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, uint64_t offset, uint64_t length,
		   bool deallocate);
int local_seek(struct be_fs *fs, struct be_file *f, uint64_t offset, enum be_seek_what what, uint64_t *result);
int local_copy(struct be_fs *fs, const struct be_cred *cr, struct be_file *src, uint64_t src_offset,
	       struct be_file *dst, uint64_t dst_offset, uint64_t count, uint64_t *copied);
int local_clone(struct be_fs *fs, const struct be_cred *cr, struct be_file *src, uint64_t src_offset,
		struct be_file *dst, uint64_t dst_offset, uint64_t count);

/* ---- local_lock.c ---- */
/* Close every owner's open file description (process exit). */
void local_locks_shutdown(void);
/* The table's size (before its first use; 0 keeps LOCAL_LOCK_DESCS). */
void local_lock_limit(unsigned n);
/* rnfsd's lease on the inode st went (local_lease_unset): the file's shared lock
 * description is closed if no owner holds a lock on it any more. */
void local_lock_lease_gone(const struct stat *st);
/* local_lease.c: Linux leases of delegated files. */
int local_lease_set(struct be_fs *fs, struct be_file *f, bool write, int *lid);
int local_lease_unset(int lid);
/* A new descriptor of the open file description holding a write lease on
 * the inode st (an open of it would break the lease), or -1 if none. */
int local_lease_dup(const struct stat *st);
/* The read lease rnfsd holds on the inode st is let go before rnfsd's own open of
 * the file for writing for its read delegation's holder (RFC 8881 §10.4: no conflict
 * with its own delegation), which would otherwise start its break. NFSv4 has recalled
 * every other client's delegation by then. 0, or ENOENT (no such lease held). */
int local_lease_yield(const struct stat *st);
/* Has rnfsd a read lease on the inode st (a read-write open would break it)? */
bool local_lease_read(const struct stat *st);
/* Has rnfsd a write lease on the inode st (a write delegation's: any open would break it)? */
bool local_lease_write(const struct stat *st);
/* local_watch.c: change watches (inotify). */
int local_watch(struct be_fs *fs, const struct be_obj *o, unsigned kind, int *wd);
struct inotify_event;
/* One read of inotify events (buf, n bytes), in order, as changes told to tell(ev, c, arg); pure (no
 * watch table), names pointing into buf: IN_CREATE, IN_MOVED_TO an ADD of the entry; IN_DELETE,
 * IN_MOVED_FROM a REMOVE, but an IN_MOVED_FROM whose IN_MOVED_TO (the same cookie and watch) follows in
 * the same read one RENAME (that IN_MOVED_TO consumed: its mask cleared in buf); IN_Q_OVERFLOW OTHER of
 * wd -1; anything else OTHER. */
void local_watch_parse(char *buf, size_t n,
		       void (*tell)(const struct inotify_event *ev, const struct be_change *c, void *arg), void *arg);
int local_unwatch(int wd);
/* rnfsd itself is about to change (or open) this file: its watch's events
 * for the next moment are not a local process's (local_watch.c). */
void local_watch_self(const struct stat *st);
void local_watch_self_fd(int fd);
void local_watch_self_at(int dfd, const char *name);
/* dfd/name and the directory dfd itself (rnfsd removes or renames the entry). */
void local_watch_self_entry(int dfd, const char *name);
int local_lock_test(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk, bool *conflict,
		    struct be_lock_conflict *holder);
int local_lock_set(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk);
int local_lock_unset(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk);
void local_lock_owner_release(struct be_fs *fs, struct be_file *f, uint64_t owner);
bool local_lock_owner_holds(struct be_fs *fs, struct be_file *f, uint64_t owner);

/* ---- local_xattr.c ---- */
int local_getxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name, void *buf,
		   size_t cap, size_t *len);
int local_setxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name,
		   const void *value, size_t len, enum be_xattr_how how);
int local_listxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap,
		    size_t *len);
int local_removexattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name);

/* ---- local_uring.c ---- */
/* One io_uring and its personalities, for the one thread that owns it. */
struct local_ring {
#if HAVE_LIBURING
	struct io_uring ring;
#endif
	struct pers_cache pers;    /* personality per caller identity (the gauge: pers_cache_count) */
	int cur_id;                /* the personality of the call being prepared */
	bool ready;                /* initialised: the calls below may be used */
};
/* A ring of entries SQEs with at most personalities cached identities. 0 or a negative errno
 * (-ENOSYS: built without liburing); on failure r is not ready and release does nothing. */
int local_ring_init(struct local_ring *r, unsigned entries, unsigned personalities);
void local_ring_release(struct local_ring *r);
/* The event-loop thread's ring when [rnfsd] uring-calls is on and it could be made; else NULL
 * (another thread, off, refused). */
struct local_ring *local_ring_here(void);
/* Release it (driver shutdown, main thread after the loop stopped). */
void local_ring_here_release(void);
#if HAVE_LIBURING
/* The system call as cr, on this thread, its credentials unchanged: its result (an fd, a
 * count, 0) or a negative errno, -EWOULDBLOCK when not run (no ring, cr not registered: ask a
 * worker). The kernel checks permissions with cr's registered credential. */
int local_ring_openat(struct local_ring *r, const struct be_cred *cr, int dfd, const char *name, int flags,
		      mode_t mode);
int local_ring_mkdirat(struct local_ring *r, const struct be_cred *cr, int dfd, const char *name, mode_t mode);
int local_ring_unlinkat(struct local_ring *r, const struct be_cred *cr, int dfd, const char *name, int flags);
int local_ring_renameat(struct local_ring *r, const struct be_cred *cr, int from_dfd, const char *from, int to_dfd,
			const char *to);
/* pwritev2(fd, iov, iovcnt, offset, rw_flags): suid clearing and quotas are the caller's */
int local_ring_pwritev(struct local_ring *r, const struct be_cred *cr, int fd, const struct iovec *iov,
		       unsigned iovcnt, uint64_t offset, int rw_flags);
int local_ring_fsync(struct local_ring *r, const struct be_cred *cr, int fd, bool datasync);
#endif

#endif
