/*
 * test_backend_local.c - the local backend (backend/local/) through the
 * interface of backend/backend.h, including what NFSv3 does not use yet and
 * the NFSv4, NLM and Ceph work will rely on:
 *
 *   - confinement of directory handles in the three ways the backend can
 *     check it: through an open_tree clone (CAP_SYS_ADMIN), by one readlink
 *     when the root's mount shows its whole file system, and by walking ".."
 *     inside a bind mount of a subdirectory; a directory moved out is ESTALE
 *     and works again when moved back, ".." of the root is the root;
 *   - byte-range locks: owners conflict with each other and with a local
 *     process's POSIX lock, an owner's own locks never conflict, unlock and
 *     owner release free the range;
 *   - leases: the kernel's rules as rnfsd meets them; the holder's locks
 *     under a write lease go on the lease's own description (a new one's open
 *     would break it): no break told, the lease stays, two owners there still
 *     conflict, a full shared table sends a new owner to its own open (a
 *     recall); after the lease the locks are the kernel's (a local lock is
 *     refused) and the shared description closes with the last of them; a
 *     read lease yields to its holder's own open for writing;
 *   - user xattrs (create/replace semantics, listing without the prefix);
 *   - allocate/deallocate, seek data/hole, copy, clone (EOPNOTSUPP where the
 *     file system cannot), exclusive create, readdir flags and cookies,
 *     files kept open past their instance's close.
 *
 * Needs root (open_by_handle_at, mounts): skips otherwise.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/fsuid.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <linux/capability.h>

#include <cmocka.h>

#include "backend/local/local.h"
#include "backend/local/lock_share.h"
#include "core/loop.h"

static char top[64];
static const struct be_cred root_cred = { 0 };

static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static const char *tpath(const char *fmt, ...)
{
	static char buf[4][512];
	static unsigned n;
	char *b = buf[n++ % 4], rel[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(b, 512, "%s/%s", top, rel);
	return b;
}

/* CAP_SYS_ADMIN in this thread's effective set on or off (open_tree needs it). */
static void sys_admin(bool on)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	const unsigned i = CAP_TO_INDEX(CAP_SYS_ADMIN);

	assert_int_equal(syscall(SYS_capget, &hdr, data), 0);
	if (on)
		data[i].effective |= data[i].permitted & CAP_TO_MASK(CAP_SYS_ADMIN);
	else
		data[i].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	assert_int_equal(syscall(SYS_capset, &hdr, data), 0);
}

static struct be_fs *open_fs(const char *path)
{
	struct be_fs_config cfg = { .path = path, .export_id = 7 };
	struct be_fs *fs = NULL;

	assert_int_equal(be_fs_open("local", &cfg, &fs), 0);
	return fs;
}

static void lookup_ok(struct be_fs *fs, const struct be_obj *dir, const char *name, struct be_obj *out)
{
	assert_int_equal(be_lookup(fs, &root_cred, dir, name, out, NULL), 0);
}

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "test_backend_local: needs root (open_by_handle_at, mounts); skipped\n");
		exit(77);
	}
	snprintf(top, sizeof(top), "/tmp/test_backend_local.XXXXXX");
	if (!mkdtemp(top) || be_init() != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	be_shutdown();
	sh("umount -l %s/bind 2>/dev/null; umount -l %s/tm 2>/dev/null; rm -rf %s", top, top, top);
	return 0;
}

/* ---- confinement ---- */

/* exp/a/b held, b moved to out/ and back; ".." of the root. */
static void confinement_scenario(struct be_fs *fs, const char *fsdir)
{
	struct be_obj root = BE_OBJ_INIT, a = BE_OBJ_INIT, b = BE_OBJ_INIT, o = BE_OBJ_INIT;
	struct be_handle hb, hroot, h;
	struct be_attr attr;

	assert_int_equal(be_root(fs, &root, &attr), 0);
	assert_int_equal(attr.type, BE_DIR);
	lookup_ok(fs, &root, "a", &a);
	lookup_ok(fs, &a, "b", &b);
	assert_int_equal(be_handle(fs, &b, &hb), 0);
	assert_int_equal(be_handle(fs, &root, &hroot), 0);
	be_obj_put(fs, &b);

	/* ".." of the root is the root; ".." of a is the root */
	lookup_ok(fs, &root, "..", &o);
	assert_int_equal(be_handle(fs, &o, &h), 0);
	assert_int_equal(h.len, hroot.len);
	assert_memory_equal(h.data, hroot.data, h.len);
	be_obj_put(fs, &o);
	lookup_ok(fs, &a, "..", &o);
	assert_int_equal(be_handle(fs, &o, &h), 0);
	assert_memory_equal(h.data, hroot.data, h.len);
	be_obj_put(fs, &o);

	assert_int_equal(be_open_handle(fs, &hb, &o, NULL), 0);
	be_obj_put(fs, &o);
	sh("mv %s/exp/a/b %s/out/b", fsdir, fsdir);
	assert_int_equal(be_open_handle(fs, &hb, &o, NULL), ESTALE);
	assert_false(be_obj_valid(&o));
	sh("mv %s/out/b %s/exp/a/b", fsdir, fsdir);
	assert_int_equal(be_open_handle(fs, &hb, &o, NULL), 0);
	be_obj_put(fs, &o);
	/* a whole subtree moved out: its directories too */
	sh("mv %s/exp/a %s/out/a", fsdir, fsdir);
	assert_int_equal(be_open_handle(fs, &hb, &o, NULL), ESTALE);
	assert_int_equal(be_lookup(fs, &root_cred, &a, "..", &o, NULL), ESTALE); /* a (held) is outside now */
	sh("mv %s/out/a %s/exp/a", fsdir, fsdir);
	be_obj_put(fs, &a);
	be_obj_put(fs, &root);
	be_end_call(fs);
}

static void test_confinement_clone(void **state)
{
	struct be_fs *fs;

	(void)state;
	sh("mkdir -p %s/c/exp/a/b %s/c/out", top, top);
	fs = open_fs(tpath("c/exp"));
	if (!local_fs(fs)->cloned) {
		be_fs_close(fs);
		skip(); /* no open_tree here even as root */
	}
	confinement_scenario(fs, tpath("c"));
	be_fs_close(fs);
}

static void test_confinement_path(void **state)
{
	struct be_fs *fs;

	(void)state;
	sh("mkdir -p %s/p/exp/a/b %s/p/out", top, top);
	sys_admin(false);
	fs = open_fs(tpath("p/exp"));
	sys_admin(true);
	assert_false(local_fs(fs)->cloned);
	if (!local_fs(fs)->path_exact) {
		be_fs_close(fs);
		skip(); /* /tmp is itself a bind mount of a subdirectory here: the walk test covers it */
	}
	confinement_scenario(fs, tpath("p"));
	be_fs_close(fs);
}

static void test_confinement_walk(void **state)
{
	struct be_fs *fs;

	(void)state;
	sh("mkdir -p %s/w/src/exp/a/b %s/w/src/out %s/bind", top, top, top);
	if (mount(tpath("w/src"), tpath("bind"), NULL, MS_BIND, NULL) != 0)
		skip(); /* cannot bind-mount here */
	sys_admin(false);
	fs = open_fs(tpath("bind/exp"));
	sys_admin(true);
	assert_false(local_fs(fs)->cloned);
	assert_false(local_fs(fs)->path_exact); /* a bind mount of a subdirectory: the walk decides */
	confinement_scenario(fs, tpath("bind"));
	be_fs_close(fs);
	assert_int_equal(umount(tpath("bind")), 0);
}

/* ---- locks ---- */

static struct be_file *open_file(struct be_fs *fs, const char *name, unsigned flags)
{
	struct be_obj root = BE_OBJ_INIT, o = BE_OBJ_INIT;
	struct be_file *f = NULL;

	assert_int_equal(be_root(fs, &root, NULL), 0);
	lookup_ok(fs, &root, name, &o);
	assert_int_equal(be_file_open(fs, &o, flags, &f), 0);
	be_obj_put(fs, &o);
	be_obj_put(fs, &root);
	return f;
}


static unsigned releases_seen;

static void count_release(void)
{
	releases_seen++;
}

static void test_locks(void **state)
{
	const struct be_lock w0 = { BE_LOCK_WRITE, 0, 10 }, r5 = { BE_LOCK_READ, 5, 10 };
	const struct be_lock w100 = { BE_LOCK_WRITE, 100, 10 }, all = { BE_LOCK_WRITE, 0, 0 };
	struct be_lock_conflict holder;
	struct be_fs *fs;
	struct be_file *f, *f2;
	bool conflict;
	int to_child[2], to_parent[2];
	char c;
	pid_t pid;

	(void)state;
	sh("mkdir -p %s/l && head -c 4096 /dev/zero > %s/l/file", top, top);
	fs = open_fs(tpath("l"));
	f = open_file(fs, "file", BE_OPEN_WRITE);
	f2 = open_file(fs, "file", BE_OPEN_WRITE); /* another open of the same file: same locks */
	assert_int_equal(be_lock_set(fs, f, 1, &w0), 0);
	assert_int_equal(be_lock_set(fs, f, 1, &r5), 0); /* an owner's own locks merge/split */
	assert_int_equal(be_lock_test(fs, f2, 1, &all, &conflict, NULL), 0);
	assert_false(conflict);
	/* owner 1 now holds [0,5) exclusive and [5,15) shared */
	assert_int_equal(be_lock_test(fs, f2, 2, &w0, &conflict, &holder), 0);
	assert_true(conflict);
	assert_int_equal(holder.owner, 0);
	assert_int_equal(be_lock_set(fs, f2, 2, &w0), EAGAIN);
	assert_int_equal(be_lock_set(fs, f2, 2, &r5), 0); /* shared with shared: fine */
	be_lock_listen(count_release); /* every unlock and owner release tells the listener */
	assert_int_equal(be_lock_unset(fs, f, 1, &all), 0);
	assert_int_equal(be_lock_unset(fs, f2, 2, &all), 0);
	assert_int_equal(releases_seen, 2);
	assert_int_equal(be_lock_set(fs, f2, 2, &w0), 0);
	assert_int_equal(be_lock_set(fs, f, 3, &w0), EAGAIN);
	assert_int_equal(releases_seen, 2); /* a lock taken or refused is no release */
	be_lock_owner_release(fs, f2, 2);
	assert_int_equal(releases_seen, 3);
	be_lock_unlisten(count_release);
	assert_int_equal(be_lock_set(fs, f, 3, &w0), 0);
	be_lock_owner_release(fs, f, 3);
	assert_int_equal(be_lock_set(fs, f, 1, &w0), 0); /* owner 1 again: fine */
	be_lock_owner_release(fs, f, 1);
	assert_int_equal(be_lock_set(fs, f, 0, &w0), EINVAL); /* owner 0 is reserved */
	/* more pieces than lock_ranges keeps (LK_RANGES_MAX), each unlocked: it holds none (the kernel
	 * says so), and while one is left it holds */
	for (uint64_t i = 0; i < 12; i++) {
		struct be_lock piece = { BE_LOCK_WRITE, 1000 + 20 * i, 10 };

		assert_int_equal(be_lock_set(fs, f, 6, &piece), 0);
	}
	for (uint64_t i = 0; i < 12; i++) {
		struct be_lock piece = { BE_LOCK_WRITE, 1000 + 20 * i, 10 };

		assert_true(be_lock_owner_holds(fs, f, 6));
		assert_int_equal(be_lock_unset(fs, f, 6, &piece), 0);
	}
	assert_false(be_lock_owner_holds(fs, f, 6));

	/* a local process's POSIX lock and an owner's see each other */
	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(to_parent), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 100, .l_len = 10 };
		int fd = open(tpath("l/file"), O_RDWR);

		if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0)
			_exit(1);
		if (write(to_parent[1], "L", 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(1);
		fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
		if (fcntl(fd, F_GETLK, &fl) < 0 || fl.l_type != F_WRLCK) /* the owner's lock, seen locally */
			_exit(2);
		_exit(0);
	}
	assert_int_equal(read(to_parent[0], &c, 1), 1);
	assert_int_equal(be_lock_test(fs, f, 5, &w100, &conflict, &holder), 0);
	assert_true(conflict);
	assert_int_equal(holder.lock.type, BE_LOCK_WRITE);
	assert_int_equal(holder.lock.offset, 100);
	assert_int_equal(be_lock_set(fs, f, 5, &w100), EAGAIN);
	assert_int_equal(be_lock_set(fs, f, 5, &w0), 0);
	assert_int_equal(write(to_child[1], "G", 1), 1);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(be_lock_set(fs, f, 5, &w100), 0); /* the process is gone with its lock */
	be_lock_owner_release(fs, f, 5);
	be_file_put(fs, f);
	be_file_put(fs, f2);
	be_fs_close(fs);
}

/* ---- xattrs ---- */

static void test_xattrs(void **state)
{
	struct be_obj root = BE_OBJ_INIT, o = BE_OBJ_INIT;
	struct be_fs *fs;
	char buf[256];
	size_t len;

	(void)state;
	sh("mkdir -p %s/x && touch %s/x/f", top, top);
	fs = open_fs(tpath("x"));
	assert_int_equal(be_root(fs, &root, NULL), 0);
	lookup_ok(fs, &root, "f", &o);
	if (be_setxattr(fs, &root_cred, &o, "color", "blue", 4, BE_XATTR_CREATE) == EOPNOTSUPP) {
		be_fs_close(fs);
		skip(); /* no user xattrs on this file system */
	}
	assert_int_equal(be_setxattr(fs, &root_cred, &o, "color", "red", 3, BE_XATTR_CREATE), EEXIST);
	assert_int_equal(be_setxattr(fs, &root_cred, &o, "shape", "x", 1, BE_XATTR_REPLACE), ENODATA);
	assert_int_equal(be_setxattr(fs, &root_cred, &o, "color", "green", 5, BE_XATTR_REPLACE), 0);
	assert_int_equal(be_getxattr(fs, &root_cred, &o, "color", NULL, 0, &len), 0);
	assert_int_equal(len, 5);
	assert_int_equal(be_getxattr(fs, &root_cred, &o, "color", buf, 2, &len), ERANGE);
	assert_int_equal(be_getxattr(fs, &root_cred, &o, "color", buf, sizeof(buf), &len), 0);
	assert_memory_equal(buf, "green", 5);
	sh("setfattr -n trusted.hidden -v 1 %s 2>/dev/null || true", tpath("x/f"));
	assert_int_equal(be_listxattr(fs, &root_cred, &o, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, 6);
	assert_memory_equal(buf, "color", 6); /* "user." stripped, other namespaces left out */
	assert_int_equal(be_removexattr(fs, &root_cred, &o, "color"), 0);
	assert_int_equal(be_getxattr(fs, &root_cred, &o, "color", buf, sizeof(buf), &len), ENODATA);
	be_obj_put(fs, &o);
	be_obj_put(fs, &root);
	be_end_call(fs);
	be_fs_close(fs);
}

/* ---- allocate, seek, copy, clone ---- */

static void test_space(void **state)
{
	struct be_fs *fs;
	struct be_file *f, *g;
	struct be_attr a;
	uint64_t pos, copied;
	char buf[16];
	struct iovec iov = { buf, sizeof(buf) };
	size_t done;
	bool eof;

	(void)state;
	sh("mkdir -p %s/s && : > %s/s/f && : > %s/s/g", top, top, top);
	fs = open_fs(tpath("s"));
	f = open_file(fs, "f", BE_OPEN_WRITE);
	g = open_file(fs, "g", BE_OPEN_WRITE);
	assert_int_equal(be_allocate(fs, &root_cred, f, 0, 1 << 20, false), 0);
	assert_int_equal(be_file_getattr(fs, f, &a), 0);
	assert_true(a.space_used >= 1 << 20);
	assert_int_equal(a.size, 1 << 20);
	/* data at 0 and at 256 KiB, written and synced; the allocated rest holds no data */
	sh("printf 0123456789abcdef | dd of=%s conv=notrunc,fsync status=none && "
	   "printf 0123456789abcdef | dd of=%s bs=1k seek=256 conv=notrunc,fsync status=none",
	   tpath("s/f"), tpath("s/f"));
	assert_int_equal(be_seek(fs, f, 0, BE_SEEK_HOLE, &pos), 0);
	assert_true(pos < 256 * 1024);
	assert_int_equal(be_seek(fs, f, 4096, BE_SEEK_DATA, &pos), 0);
	assert_int_equal(pos, 256 * 1024);
	assert_int_equal(be_allocate(fs, &root_cred, f, 256 * 1024, 4096, true), 0); /* punch it out */
	assert_int_equal(be_seek(fs, f, 4096, BE_SEEK_DATA, &pos), ENXIO);
	assert_int_equal(be_file_getattr(fs, f, &a), 0);
	assert_int_equal(a.size, 1 << 20); /* punching keeps the size */
	assert_int_equal(be_copy(fs, &root_cred, f, 0, g, 0, 16, &copied), 0);
	assert_int_equal(copied, 16);
	assert_int_equal(be_read(fs, &root_cred, g, 0, 0, &iov, 1, &done, &eof, NULL), 0);
	assert_int_equal(done, 16);
	assert_memory_equal(buf, "0123456789abcdef", 16);
	int err = be_clone(fs, &root_cred, f, 0, g, 0, 4096);
	assert_true(err == 0 || err == EOPNOTSUPP || err == EXDEV || err == EINVAL);
	be_file_put(fs, f);
	be_file_put(fs, g);
	be_fs_close(fs);
}

/* ---- create, readdir, open files ---- */

struct seen {
	unsigned n, dots, attrs, handles;
	uint64_t third_cookie;
};

static bool count_entry(void *arg, const struct be_dirent *e)
{
	struct seen *s = arg;

	s->n++;
	s->dots += !strcmp(e->name, ".") || !strcmp(e->name, "..");
	s->attrs += e->attr != NULL;
	s->handles += e->handle != NULL;
	if (s->n == 3)
		s->third_cookie = e->cookie;
	assert_true(e->cookie != 0);
	return true;
}

static void test_create_readdir_files(void **state)
{
	struct be_create how = { .type = BE_REG, .how = BE_CREATE_EXCLUSIVE, .verf = "12345678",
				 .sa = { .mask = BE_SET_MODE, .mode = 0600 } };
	struct be_obj root = BE_OBJ_INIT, o = BE_OBJ_INIT, d = BE_OBJ_INIT;
	struct be_file *f = NULL;
	struct be_fs *fs;
	struct seen s = { 0 };
	uint64_t verf, verf2;
	bool existed, eof;

	(void)state;
	sh("mkdir -p %s/r/d && mkfifo %s/r/fifo && touch %s/r/d/1 %s/r/d/2 %s/r/d/3 %s/r/d/4", top, top, top, top, top,
	   top);
	fs = open_fs(tpath("r"));
	assert_int_equal(be_root(fs, &root, NULL), 0);
	assert_int_equal(be_create(fs, &root_cred, &root, "ex", &how, &o, NULL, &existed), 0);
	assert_false(existed);
	be_obj_put(fs, &o);
	assert_int_equal(be_create(fs, &root_cred, &root, "ex", &how, &o, NULL, &existed), 0);
	assert_true(existed); /* the same verifier: a retransmission */
	be_obj_put(fs, &o);
	memcpy(how.verf, "87654321", 8);
	assert_int_equal(be_create(fs, &root_cred, &root, "ex", &how, &o, NULL, &existed), EEXIST);

	lookup_ok(fs, &root, "d", &d);
	assert_int_equal(be_file_open(fs, &d, BE_OPEN_READ, &f), EISDIR);
	lookup_ok(fs, &root, "fifo", &o);
	assert_int_equal(be_file_open(fs, &o, BE_OPEN_READ, &f), EINVAL); /* never opened: it would block */
	be_obj_put(fs, &o);

	assert_int_equal(be_readdir(fs, &root_cred, &d, 0, 0, BE_READDIR_NO_DOTS, count_entry, &s, &verf, &eof), 0);
	assert_true(eof);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.dots, 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(be_readdir(fs, &root_cred, &d, 0, 0, BE_READDIR_ATTRS | BE_READDIR_HANDLES, count_entry, &s,
				    &verf, &eof), 0);
	assert_int_equal(s.n, 6);
	assert_int_equal(s.dots, 2);
	assert_int_equal(s.attrs, 6);
	assert_int_equal(s.handles, 6);
	uint64_t resume = s.third_cookie;
	memset(&s, 0, sizeof(s));
	assert_int_equal(be_readdir(fs, &root_cred, &d, resume, verf, 0, count_entry, &s, &verf2, &eof), 0);
	assert_int_equal(s.n, 3); /* the rest after the third */
	assert_int_equal(verf2, verf);
	assert_int_equal(be_readdir(fs, &root_cred, &d, resume, verf + 1, 0, count_entry, &s, &verf2, &eof),
			 BE_EBADCOOKIE);
	/* verifier 0 with a cookie: NFSv3 refuses it, BE_READDIR_ZERO_VERF (NFSv4) takes the current one */
	assert_int_equal(be_readdir(fs, &root_cred, &d, resume, 0, 0, count_entry, &s, &verf2, &eof), BE_EBADCOOKIE);
	memset(&s, 0, sizeof(s));
	assert_int_equal(be_readdir(fs, &root_cred, &d, resume, 0, BE_READDIR_ZERO_VERF, count_entry, &s, &verf2, &eof),
			 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(be_readdir(fs, &root_cred, &d, resume, verf + 1, BE_READDIR_ZERO_VERF, count_entry, &s,
				    &verf2, &eof),
			 BE_EBADCOOKIE);

	/* a file kept open past its instance's close and past its unlink (NFSv4 open state) */
	lookup_ok(fs, &root, "ex", &o);
	assert_int_equal(be_file_open(fs, &o, BE_OPEN_WRITE, &f), 0);
	be_obj_put(fs, &o);
	be_obj_put(fs, &d);
	be_obj_put(fs, &root);
	be_end_call(fs);
	assert_int_equal((uint32_t)setfsuid((uid_t)-1), 0); /* back to root after the call */
	be_fs_close(fs);
	sh("rm %s", tpath("r/ex"));
	char data[] = "still here";
	struct iovec iov = { data, sizeof(data) };
	size_t done;
	assert_int_equal(be_write(fs, &root_cred, f, 0, 0, &iov, 1, &done, NULL, NULL), 0);
	assert_int_equal(done, sizeof(data));
	be_file_put(fs, f); /* the instance goes with its last file */
}

/* ---- the event-loop thread never switches identity (rpc/rpc_inline.h) ---- */

static int loop_switch_result;

static void try_switch_on_loop(int fd, short what, void *arg)
{
	const struct be_cred cr = { .uid = 1234, .gid = 1234 };

	(void)fd, (void)what;
	loop_switch_result = local_id_caller(&cr);
	local_id_server();
	loop_break(arg);
}

/* ---- change watches (be_watch: inotify, for NFSv4 delegations) ---- */

static atomic_int watch_events, watch_wd = -2;

static void watch_heard(const struct be_change *c)
{
	if (!c->gone) {
		atomic_store(&watch_wd, c->wd);
		atomic_fetch_add(&watch_events, 1);
	}
}

/* Wait up to 2 s for the watch thread (no timing asserted: only that it comes). */
static bool watch_wait(int n)
{
	for (int i = 0; i < 200 && atomic_load(&watch_events) < n; i++)
		usleep(10000);
	return atomic_load(&watch_events) >= n;
}

static void test_watch(void **state)
{
	struct be_obj root = BE_OBJ_INIT, o = BE_OBJ_INIT;
	struct be_fs *fs;
	int wd, wd2;

	(void)state;
	sh("mkdir -p %s/w && echo data > %s/w/file", top, top);
	fs = open_fs(tpath("w"));
	be_change_listen(watch_heard);
	assert_int_equal(be_root(fs, &root, NULL), 0);
	lookup_ok(fs, &root, "file", &o);
	/* changes: a local write is heard; a local read is not */
	assert_int_equal(be_watch(fs, &o, BE_WATCH_CHANGES, &wd), 0);
	sh("cat %s/w/file > /dev/null", top);
	sh("echo more >> %s/w/file", top);
	assert_true(watch_wait(1));
	assert_int_equal(atomic_load(&watch_wd), wd);
	/* the same file again: the same wd, now its opens */
	assert_int_equal(be_watch(fs, &o, BE_WATCH_OPENS, &wd2), 0);
	assert_int_equal(wd2, wd);
	int before = atomic_load(&watch_events);
	sh("cat %s/w/file > /dev/null", top);
	assert_true(watch_wait(before + 1));
	/* rnfsd's own change (through the backend) is not a local process's:
	 * nothing is told (waited for a while: an event comes within ms) */
	assert_int_equal(be_watch(fs, &o, BE_WATCH_CHANGES, &wd2), 0);
	struct be_file *f = NULL;
	struct iovec iov = { "self", 4 };
	size_t done = 0;

	assert_int_equal(be_file_open(fs, &o, BE_OPEN_WRITE, &f), 0);
	before = atomic_load(&watch_events);
	assert_int_equal(be_write(fs, &root_cred, f, 0, 0, &iov, 1, &done, NULL, NULL), 0);
	assert_int_equal(done, 4);
	usleep(300000);
	assert_int_equal(atomic_load(&watch_events), before);
	be_file_put(fs, f);
	assert_int_equal(fs->ops->unwatch(wd), 0);
	be_change_listen(NULL);
	be_obj_put(fs, &o);
	be_obj_put(fs, &root);
	be_end_call(fs);
	be_fs_close(fs);
}

/* One inotify event (a name padded to 16 bytes, as the kernel pads) appended at buf + *n. */
static void ev_put(char *buf, size_t *n, int wd, uint32_t mask, uint32_t cookie, const char *name)
{
	struct inotify_event ev = { .wd = wd, .mask = mask, .cookie = cookie, .len = name ? 16 : 0 };

	memcpy(buf + *n, &ev, sizeof(ev));
	*n += sizeof(ev);
	if (name) {
		memset(buf + *n, 0, 16);
		memcpy(buf + *n, name, strlen(name));
		*n += 16;
	}
}

struct parsed {
	unsigned n;
	struct {
		int wd;
		enum be_change_kind kind;
		char name[16], newname[16];
	} c[16];
};

static void parse_heard(const struct inotify_event *ev, const struct be_change *c, void *arg)
{
	struct parsed *p = arg;

	(void)ev;
	assert_true(p->n < 16);
	p->c[p->n].wd = c->wd;
	p->c[p->n].kind = c->kind;
	snprintf(p->c[p->n].name, 16, "%s", c->name ? c->name : "");
	snprintf(p->c[p->n].newname, 16, "%s", c->newname ? c->newname : "");
	p->n++;
}

static void parsed_is(const struct parsed *p, unsigned i, int wd, enum be_change_kind kind, const char *name,
		      const char *newname)
{
	assert_int_equal(p->c[i].wd, wd);
	assert_int_equal(p->c[i].kind, kind);
	assert_string_equal(p->c[i].name, name);
	assert_string_equal(p->c[i].newname, newname);
}

/* local_watch_parse (pure): what each inotify event says of a directory's entries; an IN_MOVED_FROM
 * and the IN_MOVED_TO of its cookie on the same watch later in the read are one RENAME (inotify(7));
 * unpaired, or on another watch, a removal and an addition; the watched object's IN_ATTRIB ATTRS;
 * anything else OTHER, an overflow wd -1. */
static void test_watch_parse(void **state)
{
	char buf[1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct parsed p = { 0 };
	size_t n = 0;

	(void)state;
	ev_put(buf, &n, 1, IN_CREATE, 0, "a");
	ev_put(buf, &n, 1, IN_MOVED_FROM, 7, "b");
	ev_put(buf, &n, 1, IN_DELETE | IN_ISDIR, 0, "c");
	ev_put(buf, &n, 1, IN_MOVED_TO, 7, "d");
	ev_put(buf, &n, 1, IN_MOVED_FROM, 9, "e");
	ev_put(buf, &n, 2, IN_MOVED_TO, 9, "f");
	ev_put(buf, &n, 1, IN_ATTRIB, 0, NULL);
	ev_put(buf, &n, -1, IN_Q_OVERFLOW, 0, NULL);
	ev_put(buf, &n, 1, IN_MOVED_FROM, 11, "g"); /* its pair in the next read */
	local_watch_parse(buf, n - 3, parse_heard, &p); /* a torn last event is not told */
	assert_int_equal(p.n, 7);
	parsed_is(&p, 0, 1, BE_CHANGE_ADD, "a", "");
	parsed_is(&p, 1, 1, BE_CHANGE_RENAME, "b", "d");
	parsed_is(&p, 2, 1, BE_CHANGE_REMOVE, "c", "");
	parsed_is(&p, 3, 1, BE_CHANGE_REMOVE, "e", "");
	parsed_is(&p, 4, 2, BE_CHANGE_ADD, "f", "");
	parsed_is(&p, 5, 1, BE_CHANGE_ATTRS, "", "");
	parsed_is(&p, 6, -1, BE_CHANGE_OTHER, "", "");
	memset(&p, 0, sizeof(p));
	local_watch_parse(buf + n - sizeof(struct inotify_event) - 16, sizeof(struct inotify_event) + 16, parse_heard,
			  &p);
	assert_int_equal(p.n, 1);
	parsed_is(&p, 0, 1, BE_CHANGE_REMOVE, "g", "");
}

/* ---- leases (be_lease_set: F_SETLEASE, for NFSv4 delegations) ---- */

static atomic_int lease_breaks, lease_lid = -2;

static void lease_heard(int lid)
{
	atomic_store(&lease_lid, lid);
	atomic_fetch_add(&lease_breaks, 1);
}

struct opener {
	const char *path;
	int flags;
	atomic_int done; /* 1: the open returned */
	int err;
};

static void *open_thread(void *arg)
{
	struct opener *op = arg;
	int fd = open(op->path, op->flags | O_CLOEXEC);

	op->err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	atomic_store(&op->done, 1);
	return NULL;
}

/* A local open of the leased file: it waits (the break told meanwhile) until
 * lid is released, then proceeds. */
static void lease_blocks_open(struct be_fs *fs, int lid, const char *path, int flags)
{
	struct opener op = { .path = path, .flags = flags };
	int before = atomic_load(&lease_breaks);
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, open_thread, &op), 0);
	for (int i = 0; i < 200 && atomic_load(&lease_breaks) == before; i++)
		usleep(10000);
	assert_int_equal(atomic_load(&lease_breaks), before + 1);
	assert_int_equal(atomic_load(&lease_lid), lid);
	usleep(200000);
	assert_int_equal(atomic_load(&op.done), 0); /* still held back */
	assert_int_equal(fs->ops->lease_unset(lid), 0);
	pthread_join(t, NULL);
	assert_int_equal(op.err, 0);
}

/* The kernel's lease rules as rnfsd meets them (measured, not assumed). */
static void test_lease(void **state)
{
	struct be_obj root = BE_OBJ_INIT, o = BE_OBJ_INIT;
	struct be_file *rw = NULL, *ro = NULL;
	struct be_fs *fs;
	int lid, lid2, before;

	(void)state;
	sh("mkdir -p %s/l && echo data > %s/l/file", top, top);
	fs = open_fs(tpath("l"));
	be_lease_listen(lease_heard);
	assert_int_equal(be_root(fs, &root, NULL), 0);
	lookup_ok(fs, &root, "file", &o); /* an O_PATH descriptor: counts for neither lease */
	/* a read lease needs every descriptor read-only, its own too */
	assert_int_equal(be_file_open(fs, &o, BE_OPEN_READ | BE_OPEN_WRITE, &rw), 0);
	assert_int_equal(be_lease_set(fs, rw, false, &lid), EAGAIN);
	/* a write lease on the only descriptor (rnfsd's read-write one) */
	assert_int_equal(be_lease_set(fs, rw, true, &lid), 0);
	/* rnfsd's own open of the object (the holder's OPEN) shares the lease's
	 * description: nothing breaks */
	before = atomic_load(&lease_breaks);
	assert_int_equal(be_file_open(fs, &o, BE_OPEN_READ, &ro), 0);
	be_file_put(fs, ro);
	/* an open by handle (NFSv3's cache) never waits: EWOULDBLOCK, the break told */
	struct be_handle h;

	assert_int_equal(be_handle(fs, &o, &h), 0);
	assert_int_equal(be_file_open_handle(fs, &h, BE_OPEN_READ, &ro), EWOULDBLOCK);
	for (int i = 0; i < 200 && atomic_load(&lease_breaks) == before; i++)
		usleep(10000);
	assert_int_equal(atomic_load(&lease_breaks), before + 1);
	assert_int_equal(fs->ops->lease_unset(lid), 0);
	/* ... and a read-only descriptor beside it refuses a write lease */
	assert_int_equal(be_file_open(fs, &o, BE_OPEN_READ, &ro), 0);
	assert_int_equal(be_lease_set(fs, rw, true, &lid), EAGAIN);
	be_file_put(fs, rw);
	/* a read lease on a read-only descriptor; a second read-only one is no conflict */
	assert_int_equal(be_lease_set(fs, ro, false, &lid), 0);
	be_file_put(fs, ro); /* the lease outlives the file (its own descriptor) */
	int fd = open(tpath("l/file"), O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	assert_true(fd >= 0);
	close(fd);
	/* a local open for writing waits for the release; so does truncate(2) */
	lease_blocks_open(fs, lid, tpath("l/file"), O_WRONLY);
	assert_int_equal(be_file_open(fs, &o, BE_OPEN_READ | BE_OPEN_WRITE, &rw), 0);
	assert_int_equal(be_lease_set(fs, rw, true, &lid), 0);
	lease_blocks_open(fs, lid, tpath("l/file"), O_RDONLY); /* a write lease: any open */
	/* rename, link, chmod and unlink break no fcntl lease (only nfsd's own
	 * FL_DELEG delegations, through try_break_deleg()): each alone, a write
	 * lease held, no break told (NFSv4 recalls for them after the fact,
	 * from the file's inotify watch) */
	assert_int_equal(be_lease_set(fs, rw, true, &lid2), 0);
	before = atomic_load(&lease_breaks);
	assert_int_equal(rename(tpath("l/file"), tpath("l/moved")), 0);
	assert_int_equal(link(tpath("l/moved"), tpath("l/linked")), 0);
	assert_int_equal(chmod(tpath("l/moved"), 0600), 0);
	assert_int_equal(unlink(tpath("l/linked")), 0);
	assert_int_equal(unlink(tpath("l/moved")), 0);
	usleep(300000);
	assert_int_equal(atomic_load(&lease_breaks), before);
	assert_int_equal(fs->ops->lease_unset(lid2), 0);
	assert_int_equal(fs->ops->lease_unset(lid2), EINVAL);
	be_file_put(fs, rw);
	/* the file cache's read-write descriptor (NFSv3 I/O) refuses a read
	 * lease while a call uses it; idle, it is closed for the lease */
	struct be_obj o2 = BE_OBJ_INIT;
	struct be_file *cached = NULL;

	sh("echo x > %s/l/f2", top);
	lookup_ok(fs, &root, "f2", &o2);
	assert_int_equal(be_handle(fs, &o2, &h), 0);
	assert_int_equal(be_file_open_handle(fs, &h, BE_OPEN_READ | BE_OPEN_WRITE, &cached), 0);
	assert_int_equal(be_file_open(fs, &o2, BE_OPEN_READ, &ro), 0);
	assert_int_equal(be_lease_set(fs, ro, false, &lid), EAGAIN);
	be_file_put(fs, cached);
	assert_int_equal(be_lease_set(fs, ro, false, &lid), 0);
	/* and an NFSv3 READ of it meanwhile opens read-only: the lease stays */
	before = atomic_load(&lease_breaks);
	assert_int_equal(be_file_open_handle(fs, &h, BE_OPEN_READ, &cached), 0);
	be_file_put(fs, cached);
	usleep(200000);
	assert_int_equal(atomic_load(&lease_breaks), before);
	assert_int_equal(fs->ops->lease_unset(lid), 0);
	be_file_put(fs, ro);
	be_obj_put(fs, &o2);
	be_lease_listen(NULL);
	be_obj_put(fs, &o);
	be_obj_put(fs, &root);
	be_end_call(fs);
	be_fs_close(fs);
}

/* An access ACL u:<uid>:--- beside the mode bits (owner rw, group and mask none,
 * others: other_perm, e.g. 4 for r, 1 for x); false (said on stderr) where the
 * file system has no POSIX ACLs. */
static bool set_deny_acl(const char *path, uint32_t uid, uint16_t other_perm)
{
	struct {
		uint32_t version;
		struct { uint16_t tag, perm; uint32_t id; } e[5];
	} acl = { 2, { { 0x01, 6, ~0u }, { 0x02, 0, uid }, { 0x04, 0, ~0u }, { 0x10, 0, ~0u }, { 0x20, other_perm, ~0u } } };

	if (setxattr(path, "system.posix_acl_access", &acl, sizeof(acl), 0) == 0)
		return true;
	fprintf(stderr, "no POSIX ACLs at %s (%s): its ACL case not checked\n", path, strerror(errno));
	return false;
}

/* BE_IO_NOWAIT (READ on the receiving thread): no identity switch, so only
 * the owner and root pass the access check; others are EWOULDBLOCK (the call
 * goes to a worker), as is data not in memory (not forced here). */
static void test_read_nowait(void **state)
{
	const struct be_cred owner = { .uid = 1234, .gid = 1234 }, other = { .uid = 1000, .gid = 1000 };
	const unsigned fl = BE_IO_CHECK_ACCESS | BE_IO_NOWAIT;
	char buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct be_fs *fs;
	struct be_file *f;
	size_t done;
	bool eof;

	(void)state;
	sh("mkdir -p %s/n && printf 0123456789 > %s/n/file && chown 1234:1234 %s/n/file && chmod 0600 %s/n/file",
	   top, top, top, top);
	sh("cat %s/n/file > /dev/null", top); /* in the page cache */
	fs = open_fs(tpath("n"));
	f = open_file(fs, "file", BE_OPEN_READ);
	assert_int_equal(be_read(fs, &owner, f, fl, 0, &iov, 1, &done, &eof, NULL), 0);
	assert_int_equal(done, 10);
	assert_true(eof);
	assert_memory_equal(buf, "0123456789", 10);
	assert_int_equal(be_read(fs, &root_cred, f, fl, 2, &iov, 1, &done, &eof, NULL), 0);
	assert_int_equal(done, 8);
	assert_int_equal(be_read(fs, &other, f, fl, 0, &iov, 1, &done, &eof, NULL), EWOULDBLOCK);
	assert_int_equal(done, 0);
	/* the mode bits of the caller's class, without an ACL: others may read 0604 */
	sh("chmod 0604 %s/n/file", top);
	assert_int_equal(be_read(fs, &other, f, fl, 0, &iov, 1, &done, &eof, NULL), 0);
	assert_int_equal(done, 10);
	/* ... but the group's bits for a member: 0604 gives group 1000 nothing */
	const struct be_cred member = { .uid = 1000, .gid = 5, .ngroups = 1, .groups = { 1234 } };
	assert_int_equal(be_read(fs, &member, f, fl, 0, &iov, 1, &done, &eof, NULL), EWOULDBLOCK);
	/* an ACL's named entry may deny what the bits allow: not decided here */
	if (set_deny_acl(tpath("n/file"), 1000, 4)) {
		assert_int_equal(be_read(fs, &other, f, fl, 0, &iov, 1, &done, &eof, NULL), EWOULDBLOCK);
		assert_int_equal(removexattr(tpath("n/file"), "system.posix_acl_access"), 0);
	}
	sh("chmod 0600 %s/n/file", top);
	/* on a worker (no BE_IO_NOWAIT) the same caller is checked as itself: EACCES */
	assert_int_equal(be_read(fs, &other, f, BE_IO_CHECK_ACCESS, 0, &iov, 1, &done, &eof, NULL), EACCES);
	be_file_put(fs, f);
	be_end_call(fs);
	be_fs_close(fs);
}

/* ---- calls on the receiving thread (the event-loop thread: no identity switch) ---- */

/* One backend call in a directory below the export's root, as cr: its errno. */
struct loop_case {
	const struct be_cred *cr;
	const char *dir, *name;
	int want;
};
typedef int (*loop_case_fn)(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name);

static struct {
	struct be_fs *fs;
	loop_case_fn fn;
	const struct loop_case *cases;
	unsigned n;
	int got[16];
} loop_cases;

static int case_in(struct be_fs *fs, loop_case_fn fn, const struct be_cred *cr, const char *dir, const char *name)
{
	struct be_obj root = BE_OBJ_INIT, d = BE_OBJ_INIT;
	int err;

	assert_int_equal(be_root(fs, &root, NULL), 0);
	lookup_ok(fs, &root, dir, &d);
	err = fn(fs, cr, &d, name);
	be_obj_put(fs, &d);
	be_obj_put(fs, &root);
	return err;
}

static void cases_on_loop(int fd, short what, void *arg)
{
	(void)fd, (void)what;
	for (unsigned i = 0; i < loop_cases.n; i++)
		loop_cases.got[i] = case_in(loop_cases.fs, loop_cases.fn, loop_cases.cases[i].cr,
					    loop_cases.cases[i].dir, loop_cases.cases[i].name);
	loop_break(arg);
}

/* Runs the n cases on an event-loop thread (this one, inside loop_run) and checks each. */
static void run_cases_on_loop(struct be_fs *fs, loop_case_fn fn, const struct loop_case *cases, unsigned n)
{
	struct loop *l = loop_new();
	struct loop_ev *ev;

	assert_non_null(l);
	assert_true(n <= 16);
	loop_cases.fs = fs;
	loop_cases.fn = fn;
	loop_cases.cases = cases;
	loop_cases.n = n;
	ev = loop_async(l, cases_on_loop, l);
	assert_non_null(ev);
	loop_ev_trigger(ev);
	assert_int_equal(loop_run(l), 0);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(loop_cases.got[i], cases[i].want);
	assert_int_equal(setfsuid((uid_t)-1), 0); /* the loop thread never switched */
	loop_ev_free(ev);
	loop_free(l);
}

static int lookup_case(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name)
{
	struct be_obj o = BE_OBJ_INIT;
	int err = be_lookup(fs, cr, dir, name, &o, NULL);

	be_obj_put(fs, &o);
	return err;
}

static int remove_case(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *dir, const char *name)
{
	return be_remove(fs, cr, dir, name);
}

static const struct be_cred owner_cred = { .uid = 1234, .gid = 1234 }, other_cred = { .uid = 1000, .gid = 1000 };
static const struct be_cred member_cred = { .uid = 1000, .gid = 5, .ngroups = 1, .groups = { 1234 } };

/* LOOKUP on the receiving thread (local_lookup on the event-loop thread):
 * searched as the server only where root or the mode bits of the caller's
 * class grant the search; EWOULDBLOCK (ask on a worker) otherwise, and for
 * ".." below the root. On a worker the same caller is refused (EACCES). */
static void test_lookup_on_loop_thread(void **state)
{
	struct loop_case cases[] = {
		{ &root_cred, "closed", "f", 0 },       /* 0700: root's DAC override */
		{ &owner_cred, "closed", "f", 0 },      /* 0700: the owner's bits */
		{ &other_cred, "closed", "f", EWOULDBLOCK },
		{ &other_cred, "open", "f", 0 },        /* 0701: others may search */
		{ &other_cred, "open", "none", ENOENT }, /* answered here too */
		{ &member_cred, "open", "f", EWOULDBLOCK }, /* the group's bits (0) for a member */
		{ &owner_cred, "open", "..", EWOULDBLOCK }, /* ".." below the root: checked on a worker */
		{ &other_cred, "acl", "f", EWOULDBLOCK },   /* 0701 with u:1000:---: not decided here */
	};
	struct be_fs *fs;

	(void)state;
	sh("mkdir -p %s/lk/closed %s/lk/open && touch %s/lk/closed/f %s/lk/open/f && "
	   "chown 1234:1234 %s/lk/closed %s/lk/open && chmod 0700 %s/lk/closed && chmod 0701 %s/lk/open",
	   top, top, top, top, top, top, top, top);
	sh("mkdir -p %s/lk/acl && touch %s/lk/acl/f && chown 1234:1234 %s/lk/acl && chmod 0701 %s/lk/acl", top, top,
	   top, top);
	if (!set_deny_acl(tpath("lk/acl"), 1000, 1))
		cases[7].want = 0; /* no POSIX ACLs here: the bits decide */
	fs = open_fs(tpath("lk"));
	run_cases_on_loop(fs, lookup_case, cases, 8);
	/* on a worker the caller is applied: refused, or granted, by the kernel itself */
	assert_int_equal(case_in(fs, lookup_case, &other_cred, "closed", "f"), EACCES);
	assert_int_equal(case_in(fs, lookup_case, &owner_cred, "open", ".."), 0);
	local_id_server();
	be_end_call(fs);
	be_fs_close(fs);
}

/* REMOVE on the receiving thread (local_unlink_as): on tmpfs only, as the
 * server where the kernel's may_delete() would let the caller (root; write
 * and search by the directory's bits; under a sticky bit the owner of the
 * directory or of the entry); EWOULDBLOCK otherwise, and on a disk file
 * system (whose changes may wait for the journal). */
static void test_remove_on_loop_thread(void **state)
{
	struct loop_case disk[] = { { &root_cred, "d", "f", EWOULDBLOCK } };
	const struct loop_case mem[] = {
		{ &root_cred, "ro", "f1", 0 },            /* 0755 of 1234: root may */
		{ &owner_cred, "own", "f", 0 },           /* 0700: the owner's bits */
		{ &other_cred, "ro", "f2", EWOULDBLOCK }, /* 0755: no write for others */
		{ &member_cred, "grp", "f", EWOULDBLOCK }, /* 0707: the group's bits (0) for a member */
		{ &other_cred, "all", "f", 0 },           /* 0777: anyone's entry */
		{ &other_cred, "all", "none", ENOENT },
		{ &other_cred, "sticky", "theirs", EWOULDBLOCK }, /* 1777: another's entry */
		{ &other_cred, "sticky", "mine", 0 },             /* 1777: the caller's own */
	};
	struct be_fs *fs;
	struct stat st;

	(void)state;
	sh("mkdir -p %s/rm/d && touch %s/rm/d/f", top, top);
	fs = open_fs(tpath("rm"));
	run_cases_on_loop(fs, remove_case, disk, 1);
	be_end_call(fs);
	be_fs_close(fs);
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "mkdir -p %s/tm && mount -t tmpfs -o mode=0755 tmpfs %s/tm", top, top);
	if (system(cmd) != 0) {
		fprintf(stderr, "test_remove_on_loop_thread: no tmpfs mount here: its cases not checked\n");
		return;
	}
	sh("cd %s/tm && mkdir ro own grp all sticky && touch ro/f1 ro/f2 own/f grp/f all/f sticky/theirs sticky/mine && "
	   "chown 1234:1234 ro own grp all sticky all/f sticky/theirs && chown 1000:1000 sticky/mine && "
	   "chmod 0755 ro && chmod 0700 own && chmod 0707 grp && chmod 0777 all && chmod 1777 sticky", top);
	fs = open_fs(tpath("tm"));
	run_cases_on_loop(fs, remove_case, mem, 8);
	assert_int_equal(stat(tpath("tm/all/f"), &st), -1);
	assert_int_equal(stat(tpath("tm/sticky/theirs"), &st), 0);
	/* on a worker: as the caller, the kernel refuses */
	assert_int_equal(case_in(fs, remove_case, &other_cred, "sticky", "theirs"), EPERM);
	local_id_server();
	be_end_call(fs);
	be_fs_close(fs);
	sh("umount -l %s/tm", top);
}

/* ib_uverbs refuses the loop thread's writes once its credentials changed:
 * a caller's identity is refused there, and allowed on any other thread. */
static void test_no_identity_on_loop_thread(void **state)
{
	const struct be_cred cr = { .uid = 1234, .gid = 1234 };
	struct loop *l = loop_new();
	struct loop_ev *ev;

	(void)state;
	assert_non_null(l);
	ev = loop_async(l, try_switch_on_loop, l);
	assert_non_null(ev);
	loop_switch_result = -1;
	loop_ev_trigger(ev);
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(loop_switch_result, BE_ESERVERFAULT);
	assert_false(loop_is_loop_thread());
	assert_int_equal(local_id_caller(&cr), 0);
	assert_int_equal(setfsuid((uid_t)-1), 1234);
	local_id_server();
	assert_int_equal(setfsuid((uid_t)-1), 0);
	loop_ev_free(ev);
	loop_free(l);
}

/* A write delegation's holder locks (issue 26): on its lease's own open file
 * description, which no open breaks: nothing is recalled and the lease stays
 * (a local open still meets it); two owners there still conflict (named);
 * once the lease goes the locks are the kernel's, which a local process
 * meets, and the shared description closes with the last of them. */
static void test_lease_shared_lock(void **state)
{
	struct be_obj root = BE_OBJ_INIT, o = BE_OBJ_INIT;
	struct be_lock lk = { .type = BE_LOCK_WRITE, .offset = 0, .length = 10 };
	struct be_lock lk2 = { .type = BE_LOCK_READ, .offset = 5, .length = 1 };
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
	struct be_lock_conflict h = { 0 };
	unsigned descs0 = be_local_lock_descriptions(NULL);
	struct be_file *rw = NULL;
	bool conflict = false;
	struct be_fs *fs;
	int lid, before, fd;

	(void)state;
	sh("mkdir -p %s/ly && echo data > %s/ly/file", top, top);
	fs = open_fs(tpath("ly"));
	be_lease_listen(lease_heard);
	assert_int_equal(be_root(fs, &root, NULL), 0);
	lookup_ok(fs, &root, "file", &o);
	assert_int_equal(be_file_open(fs, &o, BE_OPEN_READ | BE_OPEN_WRITE, &rw), 0);
	assert_int_equal(be_lease_set(fs, rw, true, &lid), 0);
	before = atomic_load(&lease_breaks);
	assert_int_equal(be_lock_set(fs, rw, 7, &lk), 0);
	assert_int_equal(be_lock_set(fs, rw, 8, &lk2), EAGAIN); /* a fellow owner's */
	assert_int_equal(be_lock_test(fs, rw, 8, &lk2, &conflict, &h), 0);
	assert_true(conflict);
	assert_int_equal(h.owner, 7);
	assert_int_equal(be_lock_test(fs, rw, 7, &lk2, &conflict, &h), 0);
	assert_false(conflict); /* its own */
	assert_int_equal(be_local_lock_shared(NULL), 1);
	usleep(200000);
	assert_int_equal(atomic_load(&lease_breaks), before); /* nothing recalled */
	for (unsigned i = 0; i < LKS_MAX - 1; i++) { /* owner 9 fills the shared table */
		struct be_lock r = { .type = BE_LOCK_READ, .offset = 100 + 2 * i, .length = 1 };

		assert_int_equal(be_lock_set(fs, rw, 9, &r), 0);
	}
	lk2.offset = 1000;
	assert_int_equal(be_lock_set(fs, rw, 9, &lk2), ENOLCK); /* full, and owner 9 is there */
	assert_int_equal(be_lock_set(fs, rw, 10, &lk2), ETIMEDOUT); /* a new owner's own open: a recall */
	fd = open(tpath("ly/file"), O_RDWR | O_NONBLOCK | O_CLOEXEC);
	assert_true(fd < 0 && errno == EWOULDBLOCK); /* the lease held (its break started) */
	assert_int_equal(fs->ops->lease_unset(lid), 0);
	fd = open(tpath("ly/file"), O_RDWR | O_NONBLOCK | O_CLOEXEC); /* no lease left: no wait */
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_SETLK, &fl), -1);
	assert_true(errno == EAGAIN || errno == EACCES);
	close(fd);
	assert_int_equal(be_local_lock_shared(NULL), 1); /* owner 7 still holds: it stays */
	be_lock_owner_release(fs, rw, 7);
	assert_int_equal(be_local_lock_shared(NULL), 1); /* owner 9 still holds */
	be_lock_owner_release(fs, rw, 9);
	assert_int_equal(be_local_lock_shared(NULL), 0);
	assert_int_equal(be_local_lock_descriptions(NULL), descs0);
	be_file_put(fs, rw);
	be_lease_listen(NULL);
	be_obj_put(fs, &o);
	be_obj_put(fs, &root);
	be_end_call(fs);
	be_fs_close(fs);
}

/* The holder of a read delegation opens the file for writing (pynfs DELEG23):
 * rnfsd's read lease yields to that open instead of starting its own break. */
static void test_lease_yield_write_open(void **state)
{
	struct be_obj root = BE_OBJ_INIT, o = BE_OBJ_INIT;
	struct be_file *rd = NULL, *rw = NULL;
	struct be_fs *fs;
	int lid, before;

	(void)state;
	sh("mkdir -p %s/lw && echo data > %s/lw/file", top, top);
	fs = open_fs(tpath("lw"));
	be_lease_listen(lease_heard);
	assert_int_equal(be_root(fs, &root, NULL), 0);
	lookup_ok(fs, &root, "file", &o);
	assert_int_equal(be_file_open(fs, &o, BE_OPEN_READ, &rd), 0);
	assert_int_equal(be_lease_set(fs, rd, false, &lid), 0);
	before = atomic_load(&lease_breaks);
	assert_int_equal(be_file_open(fs, &o, BE_OPEN_READ | BE_OPEN_WRITE, &rw), 0); /* was EWOULDBLOCK */
	usleep(200000);
	assert_int_equal(atomic_load(&lease_breaks), before); /* nothing recalled */
	assert_int_equal(fs->ops->lease_unset(lid), 0);
	be_file_put(fs, rw);
	be_file_put(fs, rd);
	be_lease_listen(NULL);
	be_obj_put(fs, &o);
	be_obj_put(fs, &root);
	be_end_call(fs);
	be_fs_close(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_confinement_clone),
		cmocka_unit_test(test_confinement_path),
		cmocka_unit_test(test_confinement_walk),
		cmocka_unit_test(test_locks),
		cmocka_unit_test(test_xattrs),
		cmocka_unit_test(test_space),
		cmocka_unit_test(test_create_readdir_files),
		cmocka_unit_test(test_watch),
		cmocka_unit_test(test_watch_parse),
		cmocka_unit_test(test_lease),
		cmocka_unit_test(test_lease_shared_lock),
		cmocka_unit_test(test_lease_yield_write_open),
		cmocka_unit_test(test_read_nowait),
		cmocka_unit_test(test_lookup_on_loop_thread),
		cmocka_unit_test(test_remove_on_loop_thread),
		cmocka_unit_test(test_no_identity_on_loop_thread),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
