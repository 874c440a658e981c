/*
 * test_backend_ceph.c - the ceph backend (backend/ceph/) through backend.h,
 * against the throwaway cluster tests/ceph/with-cluster.sh starts (it sets
 * RNFSD_CEPH_CONF and RNFSD_CEPH_DIR; without them the test skips):
 *
 *   - two instances (two libcephfs mounts, as two rnfsd servers would have)
 *     over the same file system: handles made by one open in the other and
 *     in a new instance (a restart); data written through one is read back
 *     through the other; a lock taken through one blocks the same range
 *     through the other, and owners of one instance block each other;
 *   - the caller's identity reaches Ceph (EACCES, ownership of new files);
 *   - readdir cookies survive entries added and removed meanwhile;
 *   - a removed file's handle is ESTALE; a directory outside a subdirectory
 *     export is ESTALE there, and ".." of its root is the root;
 *   - start-up with an unreachable cluster fails within mount-timeout;
 *   - with the OSD stopped, I/O fails in bounded time instead of hanging
 *     (last: it stops the cluster's OSD).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "backend/drivers.h"

#define OP_TIMEOUT 5u

static const struct be_cred root_cred = { 0 };
static const struct be_cred user_cred = { .uid = 1000, .gid = 1000, .ngroups = 1, .groups = { 1000 } };
static char testdir[64]; /* a directory of this run, below the file system's root */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void configure(const char *conf, unsigned mount_timeout)
{
	struct be_ceph_settings s = { .mount_timeout = mount_timeout, .op_timeout = OP_TIMEOUT };
	const char *dir = getenv("RNFSD_CEPH_DIR");

	snprintf(s.conf, sizeof(s.conf), "%s", conf);
	snprintf(s.keyring, sizeof(s.keyring), "%s/keyring", dir);
	snprintf(s.id, sizeof(s.id), "admin");
	be_ceph_configure(&s);
}

static struct be_fs *open_fs(const char *path)
{
	struct be_fs_config cfg = { .path = path, .export_id = 7 };
	struct be_fs *fs = NULL;

	assert_int_equal(be_fs_open("ceph", &cfg, &fs), 0);
	assert_string_equal(fs->driver, "ceph");
	return fs;
}

static void obj_at(struct be_fs *fs, const char *rel, struct be_obj *out)
{
	struct be_attr a;

	assert_int_equal(be_lookup_path(fs, rel, out, &a), 0);
}

/* Make a regular file name in dir as cred; its handle in h. */
static void mkfile(struct be_fs *fs, const struct be_cred *cr, struct be_obj *dir, const char *name,
		   struct be_handle *h)
{
	struct be_create c = { .type = BE_REG, .how = BE_CREATE_GUARDED, .sa = { .mask = BE_SET_MODE, .mode = 0644 } };
	struct be_obj o = BE_OBJ_INIT;
	struct be_attr a;

	assert_int_equal(be_create(fs, cr, dir, name, &c, &o, &a, NULL), 0);
	assert_int_equal(a.type, BE_REG);
	if (h)
		assert_int_equal(be_handle(fs, &o, h), 0);
	be_obj_put(fs, &o);
}

static int setup(void **state)
{
	const char *conf = getenv("RNFSD_CEPH_CONF");
	struct be_create c = { .type = BE_DIR, .how = BE_CREATE_GUARDED, .sa = { .mask = BE_SET_MODE, .mode = 0755 } };
	struct be_obj root = BE_OBJ_INIT, o = BE_OBJ_INIT;
	struct be_fs *fs;

	(void)state;
	if (!conf || !getenv("RNFSD_CEPH_DIR")) {
		printf("SKIP: no test cluster (run through tests/ceph/with-cluster.sh)\n");
		exit(77);
	}
	/* linked in here (the daemon loads the same code as rnfsd_ceph.so) */
	if (be_driver_register(&ceph_driver) != 0)
		return -1;
	configure(conf, 20);
	snprintf(testdir, sizeof(testdir), "be-%d", (int)getpid());
	fs = open_fs("/");
	assert_int_equal(be_root(fs, &root, NULL), 0);
	assert_int_equal(be_create(fs, &root_cred, &root, testdir, &c, &o, NULL, NULL), 0);
	be_obj_put(fs, &o);
	be_obj_put(fs, &root);
	be_fs_close(fs);
	return 0;
}

/* Handles from one instance open in another and after a "restart"; data crosses. */
static void test_two_instances_share_files(void **state)
{
	struct be_fs *a = open_fs("/"), *b = open_fs("/"), *c;
	struct be_obj dir = BE_OBJ_INIT, o = BE_OBJ_INIT;
	struct be_file *fa, *fb;
	struct be_attr attr;
	struct be_handle h, h2;
	char wbuf[8192], rbuf[8192] = { 0 };
	struct iovec wiov[2] = { { wbuf, 4096 }, { wbuf + 4096, 4096 } }, riov = { rbuf, sizeof(rbuf) };
	size_t done;
	bool eof;

	(void)state;
	for (size_t i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (char)(i * 7 + 3);
	obj_at(a, testdir, &dir);
	mkfile(a, &root_cred, &dir, "shared", &h);
	assert_int_equal(h.len, 16);

	assert_int_equal(be_file_open_handle(a, &h, BE_OPEN_WRITE, &fa), 0);
	assert_int_equal(be_write(a, &root_cred, fa, 0, 0, wiov, 2, &done, NULL, NULL), 0);
	assert_int_equal(done, sizeof(wbuf));
	assert_int_equal(be_commit(a, fa, 0, 0, NULL, &attr), 0);
	assert_int_equal(attr.size, sizeof(wbuf));

	/* the other server: same handle, same bytes */
	assert_int_equal(be_open_handle(b, &h, &o, &attr), 0);
	assert_int_equal(attr.size, sizeof(wbuf));
	assert_int_equal(be_handle(b, &o, &h2), 0);
	assert_memory_equal(&h, &h2, sizeof(h.len) + h.len);
	be_obj_put(b, &o);
	assert_int_equal(be_file_open_handle(b, &h, BE_OPEN_READ | BE_OPEN_WRITE, &fb), 0);
	assert_int_equal(be_read(b, &root_cred, fb, 0, 0, &riov, 1, &done, &eof, NULL), 0);
	assert_int_equal(done, sizeof(wbuf));
	assert_true(eof);
	assert_memory_equal(rbuf, wbuf, sizeof(wbuf));

	/* a write through b is seen through a */
	memcpy(wbuf, "written by b", 12);
	wiov[0].iov_len = 12;
	assert_int_equal(be_write(b, &root_cred, fb, BE_IO_FSYNC, 0, wiov, 1, &done, NULL, NULL), 0);
	riov.iov_len = 12;
	assert_int_equal(be_read(a, &root_cred, fa, 0, 0, &riov, 1, &done, &eof, NULL), 0);
	assert_int_equal(done, 12);
	assert_false(eof);
	assert_memory_equal(rbuf, "written by b", 12);
	be_file_put(a, fa);
	be_file_put(b, fb);

	/* a restarted server (a new mount) still knows the handle */
	be_obj_put(a, &dir);
	be_fs_close(a);
	c = open_fs("/");
	assert_int_equal(be_open_handle(c, &h, &o, &attr), 0);
	assert_int_equal(attr.type, BE_REG);
	be_obj_put(c, &o);
	be_fs_close(c);
	be_fs_close(b);
}

/* Ceph's POSIX locks: one instance's lock blocks the other; owners of one instance block each other. */
static void test_locks_across_instances(void **state)
{
	struct be_fs *a = open_fs("/"), *b = open_fs("/");
	struct be_obj dir = BE_OBJ_INIT;
	struct be_file *fa, *fb;
	struct be_handle h;
	struct be_lock_conflict holder;
	struct be_lock w = { .type = BE_LOCK_WRITE, .offset = 0, .length = 100 };
	struct be_lock other = { .type = BE_LOCK_WRITE, .offset = 200, .length = 100 };
	struct be_lock r = { .type = BE_LOCK_READ, .offset = 50, .length = 10 };
	bool conflict;

	(void)state;
	obj_at(a, testdir, &dir);
	mkfile(a, &root_cred, &dir, "locked", &h);
	be_obj_put(a, &dir);
	assert_int_equal(be_file_open_handle(a, &h, BE_OPEN_WRITE, &fa), 0);
	assert_int_equal(be_file_open_handle(b, &h, BE_OPEN_WRITE, &fb), 0);

	assert_int_equal(be_lock_set(a, fa, 1, &w), 0);
	assert_int_equal(be_lock_set(a, fa, 1, &w), 0); /* an owner's own lock never conflicts */
	assert_int_equal(be_lock_set(b, fb, 2, &w), EAGAIN);
	assert_int_equal(be_lock_set(b, fb, 2, &r), EAGAIN);
	assert_int_equal(be_lock_test(b, fb, 2, &r, &conflict, &holder), 0);
	assert_true(conflict);
	assert_int_equal(holder.lock.type, BE_LOCK_WRITE);
	assert_int_equal(holder.lock.offset, 0);
	assert_int_equal(be_lock_set(b, fb, 2, &other), 0); /* another range is free */
	assert_int_equal(be_lock_set(a, fa, 3, &other), EAGAIN); /* and now b's, also for a's owners */
	assert_int_equal(be_lock_set(a, fa, 3, &w), EAGAIN); /* another owner of the same server */

	assert_int_equal(be_lock_unset(a, fa, 1, &w), 0);
	assert_int_equal(be_lock_test(b, fb, 2, &w, &conflict, NULL), 0);
	assert_false(conflict);
	assert_int_equal(be_lock_set(b, fb, 2, &w), 0);
	be_lock_owner_release(b, fb, 2);
	assert_int_equal(be_lock_set(a, fa, 3, &other), 0);
	be_lock_owner_release(a, fa, 3);

	be_file_put(a, fa);
	be_file_put(b, fb);
	be_fs_close(a);
	be_fs_close(b);
}

/* The caller's identity is the one Ceph checks and records. */
static void test_identity(void **state)
{
	struct be_fs *fs = open_fs("/");
	struct be_create c = { .type = BE_DIR, .how = BE_CREATE_GUARDED, .sa = { .mask = BE_SET_MODE, .mode = 0755 } };
	struct be_create f = { .type = BE_REG, .how = BE_CREATE_GUARDED, .sa = { .mask = BE_SET_MODE, .mode = 0600 } };
	struct be_sattr open_up = { .mask = BE_SET_MODE, .mode = 0777 };
	struct be_obj dir = BE_OBJ_INIT, sub = BE_OBJ_INIT, o = BE_OBJ_INIT;
	struct be_attr a;
	uint32_t granted;

	(void)state;
	obj_at(fs, testdir, &dir);
	assert_int_equal(be_create(fs, &root_cred, &dir, "closed", &c, &sub, NULL, NULL), 0);
	assert_int_equal(be_create(fs, &user_cred, &sub, "mine", &f, &o, &a, NULL), EACCES);
	assert_int_equal(be_access(fs, &user_cred, &sub, BE_ACCESS_READ | BE_ACCESS_MODIFY, &granted), 0);
	assert_int_equal(granted, BE_ACCESS_READ);
	assert_int_equal(be_setattr(fs, &user_cred, &sub, &open_up, NULL, NULL, NULL), EPERM);
	assert_int_equal(be_setattr(fs, &root_cred, &sub, &open_up, NULL, NULL, NULL), 0);
	assert_int_equal(be_create(fs, &user_cred, &sub, "mine", &f, &o, &a, NULL), 0);
	assert_int_equal(a.uid, 1000);
	assert_int_equal(a.gid, 1000);
	assert_int_equal(a.mode, 0600);
	be_obj_put(fs, &o);
	/* another user may not read it */
	{
		struct be_cred other = { .uid = 1001, .gid = 1001 };
		struct be_handle h;
		struct be_file *file;
		char buf[4];
		struct iovec iov = { buf, sizeof(buf) };
		size_t done;
		bool eof;

		assert_int_equal(be_lookup(fs, &other, &sub, "mine", &o, NULL), 0);
		assert_int_equal(be_handle(fs, &o, &h), 0);
		be_obj_put(fs, &o);
		assert_int_equal(be_file_open_handle(fs, &h, BE_OPEN_READ, &file), 0);
		assert_int_equal(be_read(fs, &other, file, BE_IO_CHECK_ACCESS, 0, &iov, 1, &done, &eof, NULL), EACCES);
		assert_int_equal(be_read(fs, &user_cred, file, BE_IO_CHECK_ACCESS, 0, &iov, 1, &done, &eof, NULL), 0);
		be_file_put(fs, file);
	}
	be_obj_put(fs, &sub);
	be_obj_put(fs, &dir);
	be_fs_close(fs);
}

struct seen {
	char names[400][16];
	unsigned n, stop_at;
	uint64_t last_cookie;
};

static bool collect(void *arg, const struct be_dirent *e)
{
	struct seen *s = arg;

	if (s->n >= s->stop_at)
		return false;
	assert_true(e->cookie != 0);
	if (!strcmp(e->name, ".") || !strcmp(e->name, ".."))
		return true;
	assert_true(e->attr != NULL);
	assert_true(e->handle != NULL);
	snprintf(s->names[s->n++], sizeof(s->names[0]), "%s", e->name);
	s->last_cookie = e->cookie;
	return true;
}

static bool seen_has(const struct seen *s, const char *name)
{
	for (unsigned i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return true;
	return false;
}

/* A cookie stays valid while entries are added and removed; none is listed twice. */
static void test_readdir_cookies(void **state)
{
	struct be_fs *fs = open_fs("/"), *other = open_fs("/");
	struct be_create c = { .type = BE_DIR, .how = BE_CREATE_GUARDED, .sa = { .mask = BE_SET_MODE, .mode = 0755 } };
	struct be_obj top = BE_OBJ_INIT, dir = BE_OBJ_INIT, odir = BE_OBJ_INIT;
	static struct seen first, rest;
	uint64_t verf, verf2;
	char name[16], rel[80];
	bool eof;

	(void)state;
	obj_at(fs, testdir, &top);
	assert_int_equal(be_create(fs, &root_cred, &top, "many", &c, &dir, NULL, NULL), 0);
	for (unsigned i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "f%03u", i);
		mkfile(fs, &root_cred, &dir, name, NULL);
	}
	first.stop_at = 60;
	assert_int_equal(be_readdir(fs, &root_cred, &dir, 0, 0, BE_READDIR_ATTRS | BE_READDIR_HANDLES, collect,
				    &first, &verf, &eof), 0);
	assert_false(eof);
	assert_int_equal(first.n, 60);
	/* meanwhile, through the other server: 20 unread names go, 20 new come */
	snprintf(rel, sizeof(rel), "%s/many", testdir);
	obj_at(other, rel, &odir);
	for (unsigned i = 0, gone = 0; i < 200 && gone < 20; i++) {
		snprintf(name, sizeof(name), "f%03u", i);
		if (!seen_has(&first, name)) {
			assert_int_equal(be_remove(other, &root_cred, &odir, name), 0);
			gone++;
		}
	}
	for (unsigned i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "g%03u", i);
		mkfile(other, &root_cred, &odir, name, NULL);
	}
	/* resume on yet another (restarted) instance: the cookie is Ceph's, not ours */
	be_obj_put(other, &odir);
	be_fs_close(other);
	other = open_fs("/");
	obj_at(other, rel, &odir);
	rest.stop_at = 400;
	assert_int_equal(be_readdir(other, &root_cred, &odir, first.last_cookie, verf,
				    BE_READDIR_ATTRS | BE_READDIR_HANDLES, collect, &rest, &verf2, &eof), 0);
	assert_true(eof);
	assert_int_equal(verf2, verf);
	for (unsigned i = 0; i < rest.n; i++)
		assert_false(seen_has(&first, rest.names[i])); /* nothing twice */
	/* every surviving f-name was listed exactly once across the two calls */
	assert_in_range(first.n + rest.n, 180, 200);
	assert_int_equal(be_readdir(other, &root_cred, &odir, first.last_cookie, verf ^ 1, 0, collect, &rest,
				    &verf2, &eof), BE_EBADCOOKIE);
	be_obj_put(other, &odir);
	be_obj_put(fs, &dir);
	be_obj_put(fs, &top);
	be_fs_close(other);
	be_fs_close(fs);
}

/* Removed: ESTALE; outside a subdirectory export: ESTALE; ".." of the root is the root. */
static void test_stale_and_confinement(void **state)
{
	struct be_fs *fs = open_fs("/"), *sub;
	struct be_create c = { .type = BE_DIR, .how = BE_CREATE_GUARDED, .sa = { .mask = BE_SET_MODE, .mode = 0755 } };
	struct be_obj top = BE_OBJ_INIT, in = BE_OBJ_INIT, out = BE_OBJ_INIT, o = BE_OBJ_INIT, r = BE_OBJ_INIT;
	struct be_handle hf, hin, hout;
	struct be_attr a, ra;
	struct be_file *f;
	char path[128];

	(void)state;
	obj_at(fs, testdir, &top);
	mkfile(fs, &root_cred, &top, "doomed", &hf);
	assert_int_equal(be_file_open_handle(fs, &hf, BE_OPEN_READ, &f), 0); /* cached now */
	be_file_put(fs, f);
	assert_int_equal(be_remove(fs, &root_cred, &top, "doomed"), 0);
	assert_int_equal(be_open_handle(fs, &hf, &o, NULL), ESTALE);
	assert_int_equal(be_file_open_handle(fs, &hf, BE_OPEN_READ, &f), ESTALE);
	assert_int_equal(be_remove(fs, &root_cred, &top, "doomed"), ENOENT);

	assert_int_equal(be_create(fs, &root_cred, &top, "inside", &c, &in, NULL, NULL), 0);
	assert_int_equal(be_create(fs, &root_cred, &top, "outside", &c, &out, NULL, NULL), 0);
	assert_int_equal(be_create(fs, &root_cred, &in, "deeper", &c, &o, NULL, NULL), 0);
	assert_int_equal(be_handle(fs, &o, &hin), 0);
	be_obj_put(fs, &o);
	assert_int_equal(be_handle(fs, &out, &hout), 0);
	snprintf(path, sizeof(path), "/%s/inside", testdir);
	sub = open_fs(path);
	assert_int_equal(be_open_handle(sub, &hin, &o, NULL), 0);
	be_obj_put(sub, &o);
	assert_int_equal(be_open_handle(sub, &hout, &o, NULL), ESTALE);
	assert_int_equal(be_root(sub, &r, &ra), 0);
	assert_int_equal(be_lookup(sub, &root_cred, &r, "..", &o, &a), 0);
	assert_int_equal(a.fileid, ra.fileid);
	be_obj_put(sub, &o);
	assert_int_equal(be_lookup_path(sub, "deeper", &o, &a), 0);
	be_obj_put(sub, &o);
	assert_int_equal(be_lookup_path(sub, "../outside", &o, &a), EACCES);
	be_obj_put(sub, &r);
	be_fs_close(sub);
	be_obj_put(fs, &in);
	be_obj_put(fs, &out);
	be_obj_put(fs, &top);
	be_fs_close(fs);
}

/* A cluster nobody answers for: the open fails within mount-timeout (start-up and reload never hang). */
static void test_unreachable_cluster_bounded(void **state)
{
	char conf[256];
	struct be_fs_config cfg = { .path = "/", .export_id = 9 };
	struct be_fs *fs = NULL;
	FILE *f;
	double t0, took;
	int err;

	(void)state;
	snprintf(conf, sizeof(conf), "%s/dead.conf", getenv("RNFSD_CEPH_DIR"));
	f = fopen(conf, "w");
	assert_non_null(f);
	/* port 9 (discard): nothing listens on loopback */
	fprintf(f, "[global]\nmon_host = v2:127.0.0.1:9\nauth_client_required = cephx\n");
	fclose(f);
	configure(conf, 3);
	t0 = now();
	err = be_fs_open("ceph", &cfg, &fs);
	took = now() - t0;
	printf("unreachable cluster: open failed with %s after %.1f s (mount-timeout 3)\n", strerror(err), took);
	assert_int_not_equal(err, 0);
	assert_null(fs);
	assert_true(took < 6.0);
	configure(getenv("RNFSD_CEPH_CONF"), 20);
}

/* The OSD stops: reads of data not cached and synchronous writes fail within op-timeout, no hang. */
static void test_osd_down_bounded(void **state)
{
	struct be_fs *a = open_fs("/"), *b;
	struct be_obj dir = BE_OBJ_INIT;
	struct be_file *fa, *fb;
	struct be_handle h;
	static char buf[1 << 20];
	struct iovec iov = { buf, sizeof(buf) };
	char cmd[512];
	size_t done;
	bool eof;
	double t0, took;
	int err;

	(void)state;
	memset(buf, 'x', sizeof(buf));
	obj_at(a, testdir, &dir);
	mkfile(a, &root_cred, &dir, "osd-down", &h);
	assert_int_equal(be_file_open_handle(a, &h, BE_OPEN_WRITE, &fa), 0);
	assert_int_equal(be_write(a, &root_cred, fa, BE_IO_FSYNC, 0, &iov, 1, &done, NULL, NULL), 0);
	b = open_fs("/");
	assert_int_equal(be_file_open_handle(b, &h, BE_OPEN_READ, &fb), 0);

	snprintf(cmd, sizeof(cmd), "%s osd-stop %s", getenv("RNFSD_CEPH_SCRIPT"), getenv("RNFSD_CEPH_DIR"));
	assert_int_equal(system(cmd), 0);

	t0 = now();
	err = be_read(b, &root_cred, fb, 0, 0, &iov, 1, &done, &eof, NULL);
	took = now() - t0;
	printf("OSD down: READ of uncached data answered %s after %.1f s (op-timeout %u)\n",
	       err ? strerror(err) : "success", took, OP_TIMEOUT);
	assert_true(err == ETIMEDOUT || err == EIO);
	assert_true(took < OP_TIMEOUT * 3);

	t0 = now();
	err = be_write(a, &root_cred, fa, BE_IO_FSYNC, 0, &iov, 1, &done, NULL, NULL);
	took = now() - t0;
	printf("OSD down: FILE_SYNC WRITE answered %s after %.1f s\n", err ? strerror(err) : "success", took);
	assert_true(err == ETIMEDOUT || err == EIO);
	assert_true(took < OP_TIMEOUT * 3);
	be_file_put(a, fa);
	be_file_put(b, fb);
	be_obj_put(a, &dir);
	/* closing the instances must not hang either (their unmount gives up on the dead OSD) */
	be_fs_close(b);
	be_fs_close(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_instances_share_files),
		cmocka_unit_test(test_locks_across_instances),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_readdir_cookies),
		cmocka_unit_test(test_stale_and_confinement),
		cmocka_unit_test(test_unreachable_cluster_bounded),
		cmocka_unit_test(test_osd_down_bounded),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
