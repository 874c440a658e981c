/*
 * backend.h - the file-system backend interface: every file-system operation
 * the NFS layers (NFSv3, MOUNT, NFSv4.0-4.2 and NLM) need, as one
 * table of functions per implementation, one implementation per folder:
 *
 *   backend/local/   a local Linux file system (open_by_handle_at handles,
 *                    per-thread fsuid/fsgid, an open-file cache)
 *   backend/fault/   tests only: wraps another backend and injects errors,
 *                    short reads, slow or held calls on command
 *   backend/ceph/    CephFS through libcephfs (built when libcephfs-dev is found)
 *
 * The model
 *   struct be_fs     one instance per export, opened from the export's
 *                    configuration by a driver found by name ("local",
 *                    "ceph": the export option fs=NAME). It owns
 *                    whatever the file system needs (an open root, a
 *                    mount of a cluster, caches).
 *   struct be_obj    a reference to one object (file, directory, symlink,
 *                    device...) held by the caller in its own storage: a
 *                    stack variable, the per-call scratch, NFSv4's current
 *                    and saved filehandles. The backend fills it (local: an
 *                    O_PATH fd; ceph: an Inode *); be_obj_put releases it.
 *                    No allocation per object.
 *   struct be_file   a regular file open for I/O, the thing NFSv4 open
 *                    state and byte-range locks hold on to: reference
 *                    counted by the backend (be_file_get/be_file_put); a
 *                    caller may keep it as long as it needs.
 *   struct be_handle the backend's own bytes naming an object across
 *                    restarts, at most fs->handle_max of them. nfs/common/
 *                    fh.c wraps them in the envelope clients see (version,
 *                    export id, MAC), so a backend never checks a MAC and a
 *                    forged handle never reaches it.
 *
 * Conventions
 *   - Every call returns 0 or a positive errno value, or one of the BE_E*
 *     codes below for conditions errno has no name for; never -1 with errno
 *     set. Each NFS version maps them with its own table (nfs/common/
 *     errmap.c).
 *   - A call made for a client takes the client's identity as a value
 *     (struct be_cred, already squashed by the export's rules); applying it
 *     is the backend's business (local: per-thread setfsuid/setfsgid/
 *     setgroups; ceph: a UserPerm), and so is every permission check made
 *     with it. Calls without a cred run as the server: opening handles and
 *     the export root, files for I/O, flushing to stable storage.
 *   - Attributes travel as struct be_attr, never struct stat. Every
 *     attribute out-parameter may be NULL when the caller does not want it;
 *     one the backend could not fill has valid == 0.
 *   - Names handed to the backend are single components: 1..BE_NAME_MAX
 *     bytes, no '/', no NUL (the NFS layer checks them first). Only lookup()
 *     accepts "." and "..".
 *   - Confinement: an instance never hands out an object outside its
 *     export's root. lookup("..") at the root gives the root; a directory
 *     found by handle (or by "..") that is no longer beneath the root is
 *     ESTALE, with or without the kernel's help (see backend/local/).
 *     Non-directories are served wherever they are on the export's file
 *     system (knfsd's no_subtree_check; rnfsd-exports(5)).
 *   - Every call may run on any worker thread, concurrently with any other
 *     call on the same instance; calls may block (disk, network), which is
 *     why the RPC layer runs them on the worker pool. A thread that made
 *     calls for a client ends with be_end_call() before it serves another.
 *   - Bulk data moves between the file system and the caller's buffers
 *     (iovecs, usually the RPC layer's pre-registered RDMA memory) without
 *     intermediate copies.
 *   - An optional operation a backend does not implement is NULL in its
 *     table; the be_*() wrapper then answers EOPNOTSUPP.
 */
#ifndef RNFSD_BACKEND_H
#define RNFSD_BACKEND_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define BE_NAME_MAX 255u        /* longest name component */
#define BE_HANDLE_MAX 128u      /* no backend's handle is longer (NFSv4's NFS4_FHSIZE) */
#define BE_CRED_MAX_GROUPS 16u  /* AUTH_SYS's limit (RFC 5531 appendix A) */
#define BE_VERF_SIZE 8u         /* exclusive-create verifier (NFSv3 createverf3, NFSv4 verifier4) */

/* Errors errno has no name for (the numbers Linux uses for them inside the kernel). */
#define BE_EBADHANDLE 521 /* handle bytes this backend never made (wrong length or kind) */
#define BE_ENOTSYNC 522   /* setattr: the object's ctime is not the guard's */
#define BE_EBADCOOKIE 523 /* readdir: the cookie or its verifier is no longer valid */
#define BE_ESERVERFAULT 526 /* the server cannot, for a reason the client can do nothing about (logged) */

/* ---- values --------------------------------------------------------------- */

/* Object types, numbered as NFSv3 ftype3 and NFSv4 nfs_ftype4 (RFC 1813 §2.6, RFC 8881 §3.3.4). */
enum be_type {
	BE_TYPE_NONE = 0,
	BE_REG = 1,
	BE_DIR = 2,
	BE_BLK = 3,
	BE_CHR = 4,
	BE_LNK = 5,
	BE_SOCK = 6,
	BE_FIFO = 7,
};

/* The type of a POSIX st_mode (S_IFMT bits, as stat(2) and Ceph's statx give them). */
static inline enum be_type be_type_of_mode(uint32_t mode)
{
	switch (mode & 0170000u) {
	case 0040000u:
		return BE_DIR;
	case 0060000u:
		return BE_BLK;
	case 0020000u:
		return BE_CHR;
	case 0120000u:
		return BE_LNK;
	case 0140000u:
		return BE_SOCK;
	case 0010000u:
		return BE_FIFO;
	default:
		return BE_REG;
	}
}

struct be_time {
	int64_t sec;
	uint32_t nsec; /* < 1000000000 */
};

/* The caller's identity, as the export's squashing rules made it. */
struct be_cred {
	uint32_t uid, gid;
	uint32_t ngroups;
	uint32_t groups[BE_CRED_MAX_GROUPS];
};

/* Which fields of struct be_attr are meaningful. */
enum be_attr_bits {
	BE_AT_TYPE = 1u << 0,
	BE_AT_MODE = 1u << 1,
	BE_AT_NLINK = 1u << 2,
	BE_AT_UID = 1u << 3,
	BE_AT_GID = 1u << 4,
	BE_AT_SIZE = 1u << 5,
	BE_AT_SPACE = 1u << 6,
	BE_AT_RDEV = 1u << 7,
	BE_AT_FSID = 1u << 8,
	BE_AT_FILEID = 1u << 9,
	BE_AT_ATIME = 1u << 10,
	BE_AT_MTIME = 1u << 11,
	BE_AT_CTIME = 1u << 12,
	BE_AT_BTIME = 1u << 13,
	BE_AT_CHANGE = 1u << 14,
};
/* What every backend fills on success (NFSv3's fattr3 needs all of it). */
#define BE_AT_BASIC                                                                                  \
	(BE_AT_TYPE | BE_AT_MODE | BE_AT_NLINK | BE_AT_UID | BE_AT_GID | BE_AT_SIZE | BE_AT_SPACE |  \
	 BE_AT_RDEV | BE_AT_FSID | BE_AT_FILEID | BE_AT_ATIME | BE_AT_MTIME | BE_AT_CTIME | BE_AT_CHANGE)

/* Attributes of one object, backend-neutral. */
struct be_attr {
	uint32_t valid;           /* BE_AT_* bits; 0: no attributes */
	enum be_type type;
	uint32_t mode;            /* permission, set-id and sticky bits (07777) */
	uint32_t nlink;
	uint32_t uid, gid;
	uint64_t size;            /* bytes */
	uint64_t space_used;      /* bytes allocated on disk */
	uint32_t rdev_major, rdev_minor;
	uint64_t fsid_major, fsid_minor; /* the backend's file system (NFSv4 fsid4) */
	uint64_t fileid;          /* unique within the file system */
	struct be_time atime, mtime, ctime;
	struct be_time btime;     /* creation (BE_AT_BTIME only where the fs keeps it) */
	uint64_t change;          /* NFSv4 change attribute: differs after any data or metadata change */
};

/* Attributes to set (SETATTR, and the attributes of CREATE/MKDIR/...). */
enum be_sattr_bits {
	BE_SET_MODE = 1u << 0,
	BE_SET_UID = 1u << 1,
	BE_SET_GID = 1u << 2,
	BE_SET_SIZE = 1u << 3,
	BE_SET_ATIME = 1u << 4,     /* to atime */
	BE_SET_MTIME = 1u << 5,     /* to mtime */
	BE_SET_ATIME_NOW = 1u << 6, /* to the server's time */
	BE_SET_MTIME_NOW = 1u << 7,
};

struct be_sattr {
	uint32_t mask; /* BE_SET_* */
	uint32_t mode; /* 07777 */
	uint32_t uid, gid;
	uint64_t size;
	struct be_time atime, mtime;
};

/* A reference to one object; the caller's storage, the backend's contents. */
struct be_obj {
	intptr_t h;         /* the backend's (local: an O_PATH fd; ceph: an Inode *); -1: none */
	enum be_type type;  /* valid while h != -1 */
	uint64_t fileid;    /* valid while h != -1 */
};
#define BE_OBJ_INIT { .h = -1, .type = BE_TYPE_NONE, .fileid = 0 }

static inline bool be_obj_valid(const struct be_obj *o)
{
	return o->h != -1;
}

/* A backend's persistent name for an object (the bytes inside the NFS envelope). */
struct be_handle {
	uint32_t len; /* 1..fs->handle_max */
	uint8_t data[BE_HANDLE_MAX];
};

/* ACCESS bits: the same numbers in NFSv3 (RFC 1813 §3.3.4) and NFSv4 (RFC 8881 §18.1). */
#define BE_ACCESS_READ 0x01u    /* read data / list a directory */
#define BE_ACCESS_LOOKUP 0x02u  /* search a directory */
#define BE_ACCESS_MODIFY 0x04u  /* write data / change a directory's entries */
#define BE_ACCESS_EXTEND 0x08u  /* append / add entries */
#define BE_ACCESS_DELETE 0x10u  /* delete entries of a directory */
#define BE_ACCESS_EXECUTE 0x20u /* execute a file */

/* How create() treats an existing name (NFSv3 createmode3, NFSv4 createmode4). */
enum be_create_how {
	BE_CREATE_GUARDED = 0,   /* exists: EEXIST (every type but BE_REG is always made this way) */
	BE_CREATE_UNCHECKED,     /* an existing regular file is the result, untouched (*existed) */
	BE_CREATE_EXCLUSIVE,     /* verf decides: the same verifier (a retransmission) is success */
};

/* What create() makes. */
struct be_create {
	enum be_type type;        /* BE_REG, BE_DIR, BE_LNK, BE_CHR, BE_BLK, BE_SOCK, BE_FIFO */
	enum be_create_how how;
	uint8_t verf[BE_VERF_SIZE];   /* BE_CREATE_EXCLUSIVE */
	struct be_sattr sa;       /* mode (BE_SET_MODE, else 0) at creation, the rest after, as the caller;
	                             not applied to an existing file (*existed) */
	const char *target;       /* BE_LNK: the symlink's contents, NUL-terminated */
	uint32_t rdev_major, rdev_minor; /* BE_CHR, BE_BLK */
};

/* File system figures (FSSTAT, PATHCONF, NFSv4's space_* and files_* attributes). */
struct be_statfs {
	uint64_t total_bytes, free_bytes, avail_bytes; /* avail: for the caller (quota, reserve) */
	uint64_t total_files, free_files, avail_files;
	uint32_t name_max;
	uint32_t link_max;
	uint64_t max_file_size;
	uint32_t block_size;  /* the file system's block size (clone alignment); 0: unknown */
};

/* readdir() flags */
#define BE_READDIR_ATTRS 0x1u   /* fill be_dirent.attr (READDIRPLUS, NFSv4 READDIR) */
#define BE_READDIR_HANDLES 0x2u /* fill be_dirent.handle */
#define BE_READDIR_NO_DOTS 0x4u /* leave out "." and ".." (NFSv4: RFC 8881 §18.23.4) */
#define BE_READDIR_ZERO_VERF 0x8u /* a cookie other than 0 with verifier 0 is taken with the current
				   * verifier (NFSv4 clients that do not echo it, as knfsd takes them) */

/* One directory entry, valid only during the callback. */
struct be_dirent {
	const char *name;              /* NUL-terminated */
	uint32_t namelen;
	uint64_t fileid;
	uint64_t cookie;               /* pass to readdir() to resume after this entry; never 0 */
	enum be_type type;             /* BE_TYPE_NONE when the file system does not say */
	const struct be_attr *attr;    /* with BE_READDIR_ATTRS; NULL if unavailable for this entry */
	const struct be_handle *handle; /* with BE_READDIR_HANDLES; NULL if unavailable */
};

/* Return true to go on; false: the entry was not taken (a later call resumes at it) and readdir stops. */
typedef bool (*be_readdir_fn)(void *arg, const struct be_dirent *e);

/* read()/write() flags */
#define BE_IO_CHECK_ACCESS 0x1u /* check cred may read/write the file (NFSv3 and anonymous NFSv4
                                   I/O: as knfsd, the owner may whatever the mode, and a file
                                   that may be executed may be read) */
#define BE_IO_DSYNC 0x2u        /* write: data on stable storage before returning */
#define BE_IO_FSYNC 0x4u        /* write: data and metadata on stable storage */
#define BE_IO_NOWAIT 0x8u       /* read: never wait, neither for the device (only what is in
                                   memory: a short count, or EWOULDBLOCK if nothing is) nor for
                                   the caller's identity (the access check must pass without
                                   one: EWOULDBLOCK otherwise). write: the same, EWOULDBLOCK with
                                   nothing written (local: without [rnfsd] uring-calls on tmpfs or
                                   ramfs, always). For the event-loop thread. */

/* file_open() flags */
#define BE_OPEN_READ 0x1u
#define BE_OPEN_WRITE 0x2u

/* Byte-range locks. */
enum be_lock_type {
	BE_LOCK_READ = 0, /* shared */
	BE_LOCK_WRITE,    /* exclusive */
};

#define BE_LOCK_OWNER_NONE UINT64_MAX

struct be_lock {
	enum be_lock_type type;
	uint64_t offset;
	uint64_t length; /* 0: to the end of the file, as NLM and fcntl (NFSv4's all-ones: convert) */
};

struct be_lock_conflict {
	struct be_lock lock; /* the conflicting range and type */
	uint64_t owner;      /* its owner if it is one of this server's, else 0 (a local process) */
};

enum be_seek_what {
	BE_SEEK_DATA = 0,
	BE_SEEK_HOLE,
};

/* setxattr() modes (RFC 8276 §8.4.2 setxattr_option4) */
enum be_xattr_how {
	BE_XATTR_EITHER = 0,
	BE_XATTR_CREATE,  /* EEXIST if present */
	BE_XATTR_REPLACE, /* ENODATA if absent */
};

/* ---- the operations table -------------------------------------------------- */

struct be_fs;
struct be_file;

struct be_ops {
	/* Release the instance; it goes away once the last be_file of it is put. */
	void (*close)(struct be_fs *fs);
	/* The calling thread finished serving one client's call: drop per-thread
	 * state that must not leak into the next (local: back to root's identity). */
	void (*end_call)(struct be_fs *fs);

	/* -- objects and handles (as the server) -- */

	/* The export's root. */
	int (*root)(struct be_fs *fs, struct be_obj *out, struct be_attr *attr);
	/* The object a handle names: ESTALE if it is gone (removed, or a directory
	 * no longer beneath the root), BE_EBADHANDLE if the bytes are not one of ours. */
	int (*open_handle)(struct be_fs *fs, const struct be_handle *h, struct be_obj *out, struct be_attr *attr);
	/* The handle of o (at most fs->handle_max bytes). */
	int (*handle)(struct be_fs *fs, const struct be_obj *o, struct be_handle *out);
	/* A second reference to o (NFSv4 SAVEFH/RESTOREFH). */
	int (*obj_dup)(struct be_fs *fs, const struct be_obj *o, struct be_obj *out);
	/* Release a reference (o may be empty); o is empty afterwards. */
	void (*obj_put)(struct be_fs *fs, struct be_obj *o);
	/* A directory below the root by a relative path ("a/b"; "" is the root) for
	 * MOUNT: as the server, never following symlinks nor leaving the export
	 * or its file system (EACCES). */
	int (*lookup_path)(struct be_fs *fs, const char *path, struct be_obj *out, struct be_attr *attr);

	/* -- metadata (as the caller) -- */

	int (*getattr)(struct be_fs *fs, const struct be_obj *o, struct be_attr *out);
	/* Apply sa; with ctime_guard, first check the object's ctime equals it
	 * (BE_ENOTSYNC otherwise, nothing changed). pre: attributes just before. */
	int (*setattr)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o,
		       const struct be_sattr *sa, const struct be_time *ctime_guard,
		       struct be_attr *pre, struct be_attr *post);
	/* Which of the BE_ACCESS_* bits in want the caller has on o. */
	int (*access)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, uint32_t want,
		      uint32_t *granted);
	/* name in dir, never following a symlink; "." is dir, ".." its parent
	 * (the root's is the root). A file system mounted below the export is not
	 * entered: EACCES, or the directory underneath where the backend can show it. */
	int (*lookup)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		      struct be_obj *out, struct be_attr *attr);
	/* A symlink's contents into buf (may be a caller's registered buffer), not NUL-terminated. */
	int (*readlink)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf,
			size_t cap, size_t *len);
	/* Make name in dir (see struct be_create). On success out may be empty if the
	 * new object vanished at once (answered without a handle). */
	int (*create)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name,
		      const struct be_create *how, struct be_obj *out, struct be_attr *attr, bool *existed);
	/* A new name for the non-directory o. */
	int (*link)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const struct be_obj *dir,
		    const char *name);
	/* Remove a non-directory (a directory: EISDIR) / an empty directory (a file: ENOTDIR). */
	int (*remove)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name);
	int (*rmdir)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name);
	/* Atomic, across directories, over an existing target. */
	int (*rename)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *from_dir,
		      const char *from, const struct be_obj *to_dir, const char *to);
	/* Entries from cookie on (0: the start) until fn declines one or the
	 * directory ends (*eof). A cookie other than 0 must come with the verifier
	 * readdir gave (*verf_out) when it was issued: BE_EBADCOOKIE otherwise, or
	 * when the backend can no longer resume there. */
	int (*readdir)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, uint64_t cookie,
		       uint64_t verf, unsigned flags, be_readdir_fn fn, void *arg, uint64_t *verf_out, bool *eof);
	int (*statfs)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, struct be_statfs *out);
	/* Put o's metadata (a directory's entries, a file's attributes) on stable storage. */
	int (*commit_meta)(struct be_fs *fs, const struct be_obj *o);

	/* -- files, data (open as the server; I/O as the caller) -- */

	/* o open for I/O (BE_OPEN_*): EISDIR for a directory, EINVAL for other
	 * non-regular files (never opened: a FIFO would block). Permission is the
	 * caller's to check (access(), or BE_IO_CHECK_ACCESS on each I/O). */
	int (*file_open)(struct be_fs *fs, const struct be_obj *o, unsigned flags, struct be_file **out);
	/* The same by handle, for stateless I/O (NFSv3, NLM): cached, so cheap when
	 * repeated (no system call at all); a file unlinked meanwhile is ESTALE here
	 * or at its next read, write or commit (an open one, from file_open, stays
	 * usable as with POSIX). */
	int (*file_open_handle)(struct be_fs *fs, const struct be_handle *h, unsigned flags,
				struct be_file **out);
	void (*file_get)(struct be_fs *fs, struct be_file *f);
	void (*file_put)(struct be_fs *fs, struct be_file *f);
	int (*file_getattr)(struct be_fs *fs, struct be_file *f, struct be_attr *out);
	/* Up to the iovecs' total from offset into them: *done bytes (short only
	 * at the end of the file, where *eof is set). post: attributes after. */
	int (*read)(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags,
		    uint64_t offset, const struct iovec *iov, unsigned iovcnt, size_t *done, bool *eof,
		    struct be_attr *post);
	/* As read(), count bytes at most into the pipe pipe_fd instead (splice: the
	 * page cache's pages by reference, never copied), for a transport that
	 * sends them from there. Short also where the pipe is full. EOPNOTSUPP
	 * where the backend cannot (then read()), and with BE_IO_NOWAIT where the
	 * data may not be in memory. NULL: never. */
	int (*read_pipe)(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags,
			 uint64_t offset, size_t count, int pipe_fd, size_t *done, bool *eof, struct be_attr *post);
	/* The iovecs to offset: *done bytes (less than asked only with an error
	 * after a partial write, which is then not reported). pre/post: around it. */
	int (*write)(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags,
		     uint64_t offset, const struct iovec *iov, unsigned iovcnt, size_t *done,
		     struct be_attr *pre, struct be_attr *post);
	/* Earlier writes in [offset, offset+count) (count 0: to the end) on stable storage. */
	int (*commit)(struct be_fs *fs, struct be_file *f, uint64_t offset, uint64_t count,
		      struct be_attr *pre, struct be_attr *post);
	/* Reserve (deallocate false) or punch out (true) [offset, offset+length). */
	int (*allocate)(struct be_fs *fs, const struct be_cred *cr, struct be_file *f, uint64_t offset,
			uint64_t length, bool deallocate);
	/* The next data or hole at or after offset: ENXIO if there is none (beyond the end). */
	int (*seek)(struct be_fs *fs, struct be_file *f, uint64_t offset, enum be_seek_what what, uint64_t *result);
	/* Copy count bytes (0: to the end of src) between two files of this
	 * instance; *copied may be short (the caller continues). */
	int (*copy)(struct be_fs *fs, const struct be_cred *cr, struct be_file *src, uint64_t src_offset,
		    struct be_file *dst, uint64_t dst_offset, uint64_t count, uint64_t *copied);
	/* Share the blocks (reflink): EOPNOTSUPP where the file system cannot. */
	int (*clone)(struct be_fs *fs, const struct be_cred *cr, struct be_file *src, uint64_t src_offset,
		     struct be_file *dst, uint64_t dst_offset, uint64_t count);

	/* -- byte-range locks --
	 * owner: a non-zero id the caller gives each lock owner (an NLM
	 * caller/svid/oh, an NFSv4 lock-owner). Locks of one owner on one file
	 * merge and split as POSIX locks do; owners never block each other's
	 * unlock. The local backend uses open-file-description locks, one open file
	 * description per owner and file, so NLM clients, NFSv4 clients and local
	 * processes see each other's locks. Calls never wait: EAGAIN on a conflict
	 * (blocking locks are the caller's: it retries when it chooses). */
	/* lock_test with BE_LOCK_OWNER_NONE (an id no caller gives) sees every lock. */
	int (*lock_test)(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk,
			 bool *conflict, struct be_lock_conflict *holder);
	int (*lock_set)(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk);
	int (*lock_unset)(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk);
	/* Release every lock owner holds on f (owner gone, last unlock, file closed). */
	void (*lock_owner_release)(struct be_fs *fs, struct be_file *f, uint64_t owner);
	/* May owner hold a lock on f (false: it holds none, and the backend
	 * keeps nothing for it there)? NULL: always true. The local backend
	 * drops an owner's description of a file at its last unlock. */
	bool (*lock_owner_holds)(struct be_fs *fs, struct be_file *f, uint64_t owner);

	/* -- change watches (NFSv4 delegations: a local process's change recalls one) --
	 * Watch o for what anyone, local processes included, does to it: with
	 * BE_WATCH_CHANGES its data, attributes, names and removal; with
	 * BE_WATCH_OPENS its being opened, its names and removal; with
	 * BE_WATCH_DIR (a directory) its entries' creation, removal and
	 * renames and its own attributes (not its entries'). *wd names the
	 * watch (the same file gives the same wd; a later watch of it replaces
	 * the first's kind). Events go to the change listener (be_change_listen),
	 * from a backend thread, after the fact: nothing waits for them. unwatch
	 * takes no instance: a watch may outlive the export it was made through. */
	int (*watch)(struct be_fs *fs, const struct be_obj *o, unsigned kind, int *wd);
	int (*unwatch)(int wd);

	/* -- leases (NFSv4 delegations: a local process's conflicting open or
	 * truncate waits in the kernel until the lease is released) --
	 * Lease the file f is open as (read, or write), on a descriptor kept
	 * for it; *lid names the lease. EAGAIN: the file is open elsewhere in
	 * a way the lease does not allow (a read lease: for writing, by anyone,
	 * f included; a write lease: at all, but f). A break goes to the lease
	 * listener (be_lease_listen) from a backend thread, at once. lease_unset
	 * releases it (the waiting local process proceeds). NULL: not supported. */
	int (*lease_set)(struct be_fs *fs, struct be_file *f, bool write, int *lid);
	int (*lease_unset)(int lid);

	/* -- extended attributes, user namespace only (RFC 8276): names without
	 * the "user." prefix -- */
	/* cap 0: only *len (the value's size). ERANGE if cap is too small, ENODATA if absent. */
	int (*getxattr)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name,
			void *buf, size_t cap, size_t *len);
	int (*setxattr)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name,
			const void *value, size_t len, enum be_xattr_how how);
	/* Names, each NUL-terminated, one after the other; cap 0: only *len. */
	int (*listxattr)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf,
			 size_t cap, size_t *len);
	int (*removexattr)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name);
};

/* The public head of every instance (a backend embeds it first in its own). */
struct be_fs {
	const struct be_ops *ops;
	const char *driver;   /* "local", "fault", ... */
	uint32_t handle_max;  /* longest handle this instance makes (<= BE_HANDLE_MAX) */
	/* Lookups and attributes come from memory (the kernel's caches), not a
	 * network: such calls may run on the receiving thread (rpc/rpc_inline.h). */
	bool meta_fast;
	/* Only this server (and local processes) changes the file system, no
	 * other server of a cluster: NFSv4 change_info4 may say atomic (nfs/v4/ops/nfs4_dirlock.c). */
	bool one_server;
};

/* ---- drivers and instances --------------------------------------------------- */

/* What an instance is opened from: the export's line. */
struct be_fs_config {
	const char *path;     /* the export's absolute path */
	uint32_t export_id;   /* for messages */
	const char *options;  /* driver options "key=value,..." from the export, or NULL */
};

struct be_driver {
	const char *name;
	/* Process-wide setup and teardown (main thread), or NULL. */
	int (*init)(void);
	void (*shutdown)(void);
	/* 0 or an errno value (logged with the path). */
	int (*open)(const struct be_fs_config *cfg, struct be_fs **out);
};

/* rnfsd.conf's [ceph] section (rnfsd.conf(5)) for the "ceph" driver; "" and 0: libcephfs's defaults. */
struct be_ceph_settings {
	char conf[4096];     /* ceph.conf to read */
	char keyring[4096];  /* the client's keyring */
	char id[64];         /* cephx client id ("admin": client.admin) */
	char fs_name[64];    /* CephFS file system (ceph_select_filesystem) */
	unsigned mount_timeout; /* seconds a mount may take (start-up, reload) */
	unsigned op_timeout;    /* seconds a monitor or OSD operation may take */
	unsigned max_calls;     /* calls of one export inside libcephfs at once (0: no cap but 256) */
};

/* Set the settings the drivers read when they open an instance (main thread, before be_init). */
void be_ceph_configure(const struct be_ceph_settings *s);
const struct be_ceph_settings *be_ceph_settings(void);

/* The local driver's descriptor-holding tables (main thread, before be_init; 0: the built-in size). */
struct be_local_settings {
	unsigned lock_descriptions; /* lock owners' open file descriptions, all owners ([rnfsd] lock-descriptions) */
	unsigned file_cache;        /* cached open files of NFSv3 I/O and NLM (LOCAL_FCACHE_ENTRIES) */
	unsigned uring_personalities; /* 0: no io_uring calls; else the receiving thread's ring caches as
	                                 many caller identities ([rnfsd] uring-calls, uring-personalities) */
};
void be_local_configure(const struct be_local_settings *s);
const struct be_local_settings *be_local_settings(void);
/* Lock descriptions the local driver holds now (each a descriptor), and its limit. Any thread. */
unsigned be_local_lock_descriptions(unsigned *limit);
/* Of those, the descriptions shared by a write delegation's lock owners (local_lock.c), and the
 * lock pieces their tables hold (*pieces, may be NULL). Any thread. */
unsigned be_local_lock_shared(unsigned *pieces);
/* The local backend's handle cache (directory listings): entries now, and its bound, hits and misses. */
unsigned be_local_handle_cache(uint64_t *max, uint64_t *hits, uint64_t *misses);
/* Caller identities registered with the receiving thread's io_uring now, and the bound (0: off). Any thread. */
unsigned be_local_uring_personalities(unsigned *limit);
/* May a call that acts as its caller (create, mkdir) be tried on the event-loop thread? (The
 * local driver's [rnfsd] uring-calls; the backend still says EWOULDBLOCK where it cannot.) Any thread. */
bool be_caller_here(void);
/* Main thread, the one that will run the event loop, before serving: with [rnfsd] uring-calls, make
 * the local driver's io_uring of that thread now and start the kernel's worker for it, so that the
 * first call does not pay for them. 0, or -ENOSYS (logged: those calls go to the workers). */
int be_local_loop_prepare(void);

/* The built-in drivers (backend/registry.c). */
int be_init(void);
void be_shutdown(void);
const struct be_driver *be_driver_find(const char *name);
/* Add a driver that is not built in (tests: backend/fault/). 0, or ENOSPC. Main thread, before serving. */
int be_driver_register(const struct be_driver *d);
/* Open an instance with the named driver (NULL: "local"). 0 or an errno value (ENOENT: no such driver). */
int be_fs_open(const char *driver, const struct be_fs_config *cfg, struct be_fs **out);

/* ---- calls (thin wrappers: fs->ops->op(fs, ...), EOPNOTSUPP for a NULL op) ---- */

#define BE_CALL(fs, op, ...) ((fs)->ops->op ? (fs)->ops->op((fs), __VA_ARGS__) : EOPNOTSUPP)

static inline void be_fs_close(struct be_fs *fs)
{
	if (fs)
		fs->ops->close(fs);
}

static inline void be_end_call(struct be_fs *fs)
{
	if (fs && fs->ops->end_call)
		fs->ops->end_call(fs);
}

static inline void be_obj_put(struct be_fs *fs, struct be_obj *o)
{
	if (be_obj_valid(o))
		fs->ops->obj_put(fs, o);
}

static inline void be_file_get(struct be_fs *fs, struct be_file *f)
{
	fs->ops->file_get(fs, f);
}

static inline void be_file_put(struct be_fs *fs, struct be_file *f)
{
	if (f)
		fs->ops->file_put(fs, f);
}

/*
 * Lock release listeners: after an unlock or an owner's release through the
 * calls below, by any protocol, each listener (NLM's retry thread, which
 * keeps blocked waiters; NFSv4's CB_NOTIFY_LOCK waiters) is told, so it
 * tries its waiters now rather than at its next poll. Locks a local process
 * drops are not told (NLM's poll finds them). Any thread; a listener must
 * not block (NLM sets a flag and signals). be_lock_listen() adds one (at
 * most BE_LOCK_LISTENERS; false beyond), be_lock_unlisten() removes it.
 */
/* be_watch()'s kinds, and the change listener: one (NFSv4's delegations),
 * told each watched file's event (gone: the watch ended, the file removed
 * or the watch taken away; overflow: events were lost, wd -1: every watch may
 * have fired). Any thread; must not block. A directory's (BE_WATCH_DIR) event
 * says what it did to the entries where it can (kind, name): an entry made,
 * removed, or renamed within the directory (name the old, newname the new);
 * a move out of or into it is a removal or an addition; ATTRS the watched
 * object's own attributes (mode, owner, times, links), no name; OTHER for
 * anything else (itself moved or removed, a file's data). */
#define BE_WATCH_CHANGES 1u
#define BE_WATCH_OPENS 2u
#define BE_WATCH_DIR 4u /* a directory: entries made, removed or renamed in it, its own attributes */
enum be_change_kind { BE_CHANGE_OTHER, BE_CHANGE_ADD, BE_CHANGE_REMOVE, BE_CHANGE_RENAME, BE_CHANGE_ATTRS };
struct be_change {
	int wd;                    /* -1: events were lost */
	bool gone;
	enum be_change_kind kind;
	const char *name, *newname; /* NUL-terminated, valid during the call; NULL for OTHER, ATTRS */
};
void be_change_listen(void (*changed)(const struct be_change *c));
void be_changed(const struct be_change *c);
#define be_watch(fs, o, kind, wd) BE_CALL(fs, watch, o, kind, wd)
/* The lease listener: one (NFSv4's delegations), told each lease being
 * broken (lid). Any thread; must not block. */
void be_lease_listen(void (*broken)(int lid));
void be_lease_broken(int lid);
/* The kernel's time (s) after which it breaks a lease itself, letting the
 * waiting process in (Linux: /proc/sys/fs/lease-break-time, local_lease.c);
 * 0: unknown. */
unsigned be_lease_break_time(void);
#define be_lease_set(fs, f, write, lid) BE_CALL(fs, lease_set, f, write, lid)

#define BE_LOCK_LISTENERS 4u
bool be_lock_listen(void (*released)(void));
void be_lock_unlisten(void (*released)(void));
void be_lock_released(void);

static inline void be_lock_owner_release(struct be_fs *fs, struct be_file *f, uint64_t owner)
{
	if (fs->ops->lock_owner_release) {
		fs->ops->lock_owner_release(fs, f, owner);
		be_lock_released();
	}
}

static inline bool be_lock_owner_holds(struct be_fs *fs, struct be_file *f, uint64_t owner)
{
	return !fs->ops->lock_owner_holds || fs->ops->lock_owner_holds(fs, f, owner);
}

static inline int be_lock_unset(struct be_fs *fs, struct be_file *f, uint64_t owner, const struct be_lock *lk)
{
	int err = fs->ops->lock_unset ? fs->ops->lock_unset(fs, f, owner, lk) : EOPNOTSUPP;

	if (!err)
		be_lock_released();
	return err;
}

#define be_root(fs, out, attr) BE_CALL(fs, root, out, attr)
#define be_open_handle(fs, h, out, attr) BE_CALL(fs, open_handle, h, out, attr)
#define be_handle(fs, o, out) BE_CALL(fs, handle, o, out)
#define be_obj_dup(fs, o, out) BE_CALL(fs, obj_dup, o, out)
#define be_lookup_path(fs, path, out, attr) BE_CALL(fs, lookup_path, path, out, attr)
#define be_getattr(fs, o, out) BE_CALL(fs, getattr, o, out)
#define be_setattr(fs, cr, o, sa, guard, pre, post) BE_CALL(fs, setattr, cr, o, sa, guard, pre, post)
#define be_access(fs, cr, o, want, granted) BE_CALL(fs, access, cr, o, want, granted)
#define be_lookup(fs, cr, dir, name, out, attr) BE_CALL(fs, lookup, cr, dir, name, out, attr)
#define be_readlink(fs, cr, o, buf, cap, len) BE_CALL(fs, readlink, cr, o, buf, cap, len)
#define be_create(fs, cr, dir, name, how, out, attr, existed) \
	BE_CALL(fs, create, cr, dir, name, how, out, attr, existed)
#define be_link(fs, cr, o, dir, name) BE_CALL(fs, link, cr, o, dir, name)
#define be_remove(fs, cr, dir, name) BE_CALL(fs, remove, cr, dir, name)
#define be_rmdir(fs, cr, dir, name) BE_CALL(fs, rmdir, cr, dir, name)
#define be_rename(fs, cr, fdir, from, tdir, to) BE_CALL(fs, rename, cr, fdir, from, tdir, to)
#define be_readdir(fs, cr, dir, cookie, verf, flags, fn, arg, verf_out, eof) \
	BE_CALL(fs, readdir, cr, dir, cookie, verf, flags, fn, arg, verf_out, eof)
#define be_statfs(fs, cr, o, out) BE_CALL(fs, statfs, cr, o, out)
#define be_commit_meta(fs, o) BE_CALL(fs, commit_meta, o)
#define be_file_open(fs, o, flags, out) BE_CALL(fs, file_open, o, flags, out)
#define be_file_open_handle(fs, h, flags, out) BE_CALL(fs, file_open_handle, h, flags, out)
#define be_file_getattr(fs, f, out) BE_CALL(fs, file_getattr, f, out)
#define be_read(fs, cr, f, flags, off, iov, n, done, eof, post) \
	BE_CALL(fs, read, cr, f, flags, off, iov, n, done, eof, post)
#define be_read_pipe(fs, cr, f, flags, off, count, pipe_fd, done, eof, post) \
	BE_CALL(fs, read_pipe, cr, f, flags, off, count, pipe_fd, done, eof, post)
#define be_write(fs, cr, f, flags, off, iov, n, done, pre, post) \
	BE_CALL(fs, write, cr, f, flags, off, iov, n, done, pre, post)
#define be_commit(fs, f, off, count, pre, post) BE_CALL(fs, commit, f, off, count, pre, post)
#define be_allocate(fs, cr, f, off, len, dealloc) BE_CALL(fs, allocate, cr, f, off, len, dealloc)
#define be_seek(fs, f, off, what, result) BE_CALL(fs, seek, f, off, what, result)
#define be_copy(fs, cr, src, soff, dst, doff, count, copied) \
	BE_CALL(fs, copy, cr, src, soff, dst, doff, count, copied)
#define be_clone(fs, cr, src, soff, dst, doff, count) BE_CALL(fs, clone, cr, src, soff, dst, doff, count)
#define be_lock_test(fs, f, owner, lk, conflict, holder) BE_CALL(fs, lock_test, f, owner, lk, conflict, holder)
#define be_lock_set(fs, f, owner, lk) BE_CALL(fs, lock_set, f, owner, lk)
#define be_getxattr(fs, cr, o, name, buf, cap, len) BE_CALL(fs, getxattr, cr, o, name, buf, cap, len)
#define be_setxattr(fs, cr, o, name, value, len, how) BE_CALL(fs, setxattr, cr, o, name, value, len, how)
#define be_listxattr(fs, cr, o, buf, cap, len) BE_CALL(fs, listxattr, cr, o, buf, cap, len)
#define be_removexattr(fs, cr, o, name) BE_CALL(fs, removexattr, cr, o, name)

#endif
