/*
 * test_nfs_fault.c - the NFSv3 procedures against the fault backend
 * (backend/fault/): an export with fs=fault is the local backend with a rule
 * in front, so each error path can be provoked on purpose.
 *
 *   - every injected errno becomes the NFS3ERR_* of RFC 1813 §2.6 (EIO, ENOSPC,
 *     EDQUOT, ESTALE, EAGAIN, EACCES, EMLINK, ...), with wcc_data that tells
 *     the truth: attributes before (where the procedure has them) and after,
 *     equal to the object on disk, which the failed call left unchanged;
 *   - short reads and partial writes are answered as such (count, eof);
 *   - a rule fires on the nth call, once or always; a slow call completes;
 *   - one client's call held inside the backend does not stall the other
 *     clients' calls, which complete through the real worker pool while it is
 *     held; then it is released and completes too. No timed assertion: the
 *     test waits for events (a stall would hang it, and meson's timeout fails it).
 *
 * Needs root (the local backend: open_by_handle_at, setfsuid): skips otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "backend/fault/fault.h"
#include "core/loop.h"
#include "core/workers.h"
#include "nfs/nfs.h"
#include "tests/unit/test_nfs_harness.h"

#define ME "127.0.0.1"
#define OTHER "127.0.0.2"

static char top[64], exp_dir[96];
static struct tcall *t;
static struct nfs_fh root_fh;
static struct be_fs *ff; /* the export's fault instance */

typedef enum rpc_proc_status (*handler_fn)(struct rpc_call *);

static void sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static void run_ok(handler_fn h)
{
	assert_int_equal(tc_run(t, h), RPC_PROC_OK);
}

static void fail_next(enum be_fault_op op, int err)
{
	struct be_fault_rule r = { .op = op, .kind = BE_FAULT_ERROR, .err = err };

	be_fault_set(ff, &r);
}

static const char *xpath(const char *name)
{
	static char buf[2][256];
	static unsigned n;
	char *b = buf[n++ % 2];

	snprintf(b, 256, "%s/%s", exp_dir, name);
	return b;
}

/* wcc_data, decoded in full */
struct wcc {
	bool pre, post;
	uint64_t pre_size;
	uint32_t pre_mtime[2], pre_ctime[2];
	struct tc_fattr a;
};

static void get_wcc(struct wcc *w)
{
	memset(w, 0, sizeof(*w));
	w->pre = tc_u32(t);
	if (w->pre) {
		w->pre_size = tc_u64(t);
		w->pre_mtime[0] = tc_u32(t);
		w->pre_mtime[1] = tc_u32(t);
		w->pre_ctime[0] = tc_u32(t);
		w->pre_ctime[1] = tc_u32(t);
	}
	w->post = tc_post_op_attr(t, &w->a);
}

/* After a failed call: the after-attributes are there and are the object's on disk; the before-
 * attributes, where given, say the same (nothing changed). */
static void check_wcc_unchanged(const struct wcc *w, const char *path, bool want_pre)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_true(w->post);
	assert_int_equal(w->a.fileid, st.st_ino);
	assert_int_equal(w->a.size, st.st_size);
	assert_int_equal(w->a.ctime_sec, (uint32_t)st.st_ctim.tv_sec);
	assert_int_equal(w->a.ctime_nsec, (uint32_t)st.st_ctim.tv_nsec);
	if (want_pre)
		assert_true(w->pre);
	if (w->pre) {
		assert_int_equal(w->pre_size, w->a.size);
		assert_int_equal(w->pre_ctime[0], w->a.ctime_sec);
		assert_int_equal(w->pre_ctime[1], w->a.ctime_nsec);
	}
}

/* A new call from ME: fh, offset, count (READ, COMMIT). */
static void put_fh_off_count(const struct nfs_fh *fh, uint64_t off, uint32_t count)
{
	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, fh);
	xdr_enc_u64(&t->req, off);
	xdr_enc_u32(&t->req, count);
}

static uint32_t do_lookup(const struct nfs_fh *dir, const char *name, struct nfs_fh *fh)
{
	uint32_t st;

	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, dir);
	tc_put_name(t, name);
	run_ok(nfs3_proc_lookup);
	st = tc_u32(t);
	if (st == NFS3_OK) {
		tc_fh(t, fh);
		tc_post_op_attr(t, NULL);
	}
	assert_true(tc_post_op_attr(t, NULL)); /* dir_attributes, both arms */
	return st;
}

static struct nfs_fh file_fh(const char *name)
{
	struct nfs_fh fh;

	assert_int_equal(do_lookup(&root_fh, name, &fh), NFS3_OK);
	return fh;
}

/* ---- setup ---- */

static int setup(void **state)
{
	struct rnfsd_config cfg;
	struct export_table tbl;
	char text[512], err[256];
	uint32_t n;

	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "test_nfs_fault: needs root (open_by_handle_at, setfsuid); skipped\n");
		exit(77);
	}
	snprintf(top, sizeof(top), "/tmp/test_nfs_fault.XXXXXX");
	if (!mkdtemp(top))
		return -1;
	snprintf(exp_dir, sizeof(exp_dir), "%s/exp", top);
	if (mkdir(exp_dir, 0755) < 0)
		return -1;
	snprintf(text, sizeof(text), "%s " ME "(rw,no_root_squash,insecure,fs=fault) " OTHER "(rw,insecure,fs=fault)\n",
		 exp_dir);
	if (be_fault_register() != 0 || exports_parse(text, "test", &tbl, err, sizeof(err)) < 0)
		return -1;
	config_defaults(&cfg);
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s/state", top);
	if (nfs_service_init(&cfg, &tbl) < 0)
		return -1;
	ff = be_fault_find(exp_dir);
	if (!ff)
		return -1;
	t = tc_new();
	tc_reset(t, ME, 700, 0, 0);
	tc_put_name(t, exp_dir);
	if (tc_run(t, mount3_proc_mnt) != RPC_PROC_OK || tc_u32(t) != MNT3_OK)
		return -1;
	tc_fh(t, &root_fh);
	n = tc_u32(t);
	(void)n;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nfs_service_shutdown();
	tc_free(t);
	sh("rm -rf %s", top);
	return 0;
}

static int clear_rules(void **state)
{
	(void)state;
	be_fault_clear(ff);
	return 0;
}

/* ---- errors become the right NFS3ERR_*, with truthful wcc ---- */

static uint32_t do_write(const struct nfs_fh *fh, uint64_t off, const char *data, uint32_t *count, struct wcc *w)
{
	uint32_t st;

	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, fh);
	xdr_enc_u64(&t->req, off);
	xdr_enc_u32(&t->req, (uint32_t)strlen(data));
	xdr_enc_u32(&t->req, NFS3_FILE_SYNC);
	xdr_enc_opaque(&t->req, data, (uint32_t)strlen(data));
	run_ok(nfs3_proc_write);
	st = tc_u32(t);
	get_wcc(w);
	if (st == NFS3_OK) {
		*count = tc_u32(t);
		tc_u32(t);
		tc_u64(t);
	}
	return st;
}

static void test_write_errors(void **state)
{
	static const struct { int err; uint32_t st; } cases[] = {
		{ ENOSPC, NFS3ERR_NOSPC }, { EDQUOT, NFS3ERR_DQUOT }, { EIO, NFS3ERR_IO },
		{ EFBIG, NFS3ERR_FBIG }, { EAGAIN, NFS3ERR_JUKEBOX }, { EROFS, NFS3ERR_ROFS },
	};
	struct nfs_fh fh;
	struct wcc w;
	uint32_t count;

	(void)state;
	sh("printf 0123456789 > %s", xpath("w"));
	fh = file_fh("w");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fail_next(BE_FAULT_WRITE, cases[i].err);
		assert_int_equal(do_write(&fh, 10, "more", &count, &w), cases[i].st);
		check_wcc_unchanged(&w, xpath("w"), false);
		assert_int_equal(w.a.size, 10);
	}
	/* the file could not be had at all (stale, or an I/O error opening it): no attributes to give */
	fail_next(BE_FAULT_FILE_OPEN_HANDLE, ESTALE);
	assert_int_equal(do_write(&fh, 0, "x", &count, &w), NFS3ERR_STALE);
	assert_false(w.pre || w.post);
	fail_next(BE_FAULT_FILE_OPEN_HANDLE, EIO);
	assert_int_equal(do_write(&fh, 0, "x", &count, &w), NFS3ERR_IO);
	/* and with no rule left, it works */
	assert_int_equal(do_write(&fh, 10, "more", &count, &w), NFS3_OK);
	assert_int_equal(count, 4);
	assert_true(w.pre && w.post);
	assert_int_equal(w.pre_size, 10);
	assert_int_equal(w.a.size, 14);
}

static void test_setattr_errors(void **state)
{
	struct nfs_fh fh;
	struct wcc w;

	(void)state;
	sh("printf abc > %s", xpath("s"));
	fh = file_fh("s");
	fail_next(BE_FAULT_SETATTR, EDQUOT); /* a chown that would go over quota */
	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, &fh);
	xdr_enc_bool(&t->req, false);
	xdr_enc_bool(&t->req, true);
	xdr_enc_u32(&t->req, 1000); /* uid */
	xdr_enc_bool(&t->req, false);
	xdr_enc_bool(&t->req, false);
	xdr_enc_u32(&t->req, NFS3_DONT_CHANGE);
	xdr_enc_u32(&t->req, NFS3_DONT_CHANGE);
	xdr_enc_bool(&t->req, false);
	run_ok(nfs3_proc_setattr);
	assert_int_equal(tc_u32(t), NFS3ERR_DQUOT);
	get_wcc(&w);
	check_wcc_unchanged(&w, xpath("s"), true);
	assert_int_equal(w.a.uid, 0);
}

/* CREATE/MKDIR/SYMLINK/MKNOD, REMOVE/RMDIR: status and the directory's wcc_data */
static uint32_t do_dirop(handler_fn h, const char *name, struct wcc *w)
{
	uint32_t st;

	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, name);
	if (h == nfs3_proc_create) {
		xdr_enc_u32(&t->req, NFS3_CREATE_GUARDED);
		tc_put_sattr_mode(t, 0644);
	} else if (h == nfs3_proc_mkdir) {
		tc_put_sattr_mode(t, 0755);
	} else if (h == nfs3_proc_symlink) {
		tc_put_sattr_mode(t, -1);
		tc_put_name(t, "target");
	}
	run_ok(h);
	st = tc_u32(t);
	if (st == NFS3_OK && h != nfs3_proc_remove && h != nfs3_proc_rmdir) {
		struct nfs_fh fh;

		if (tc_u32(t))
			tc_fh(t, &fh);
		tc_post_op_attr(t, NULL);
	}
	get_wcc(w);
	return st;
}

static void test_namespace_errors(void **state)
{
	static const struct {
		handler_fn h;
		enum be_fault_op op;
		int err;
		uint32_t st;
	} cases[] = {
		{ nfs3_proc_create, BE_FAULT_CREATE, ENOSPC, NFS3ERR_NOSPC },
		{ nfs3_proc_create, BE_FAULT_CREATE, EDQUOT, NFS3ERR_DQUOT },
		{ nfs3_proc_mkdir, BE_FAULT_CREATE, EDQUOT, NFS3ERR_DQUOT },
		{ nfs3_proc_mkdir, BE_FAULT_CREATE, EMLINK, NFS3ERR_MLINK },
		{ nfs3_proc_symlink, BE_FAULT_CREATE, ENOSPC, NFS3ERR_NOSPC },
		{ nfs3_proc_create, BE_FAULT_OPEN_HANDLE, ESTALE, NFS3ERR_STALE },
		{ nfs3_proc_remove, BE_FAULT_REMOVE, EIO, NFS3ERR_IO },
		{ nfs3_proc_remove, BE_FAULT_REMOVE, EACCES, NFS3ERR_ACCES },
		{ nfs3_proc_rmdir, BE_FAULT_RMDIR, ENOTEMPTY, NFS3ERR_NOTEMPTY },
		{ nfs3_proc_rmdir, BE_FAULT_RMDIR, EBUSY, NFS3ERR_ACCES },
	};
	struct wcc w;
	struct stat st;

	(void)state;
	sh("touch %s && mkdir -p %s", xpath("victim"), xpath("dvictim"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *name = cases[i].h == nfs3_proc_remove ? "victim" :
				   cases[i].h == nfs3_proc_rmdir ? "dvictim" : "newname";

		fail_next(cases[i].op, cases[i].err);
		assert_int_equal(do_dirop(cases[i].h, name, &w), cases[i].st);
		if (cases[i].op == BE_FAULT_OPEN_HANDLE) {
			assert_false(w.pre || w.post); /* the directory itself could not be had */
		} else {
			check_wcc_unchanged(&w, exp_dir, true);
		}
		assert_int_equal(lstat(xpath("newname"), &st), -1); /* nothing was made */
		assert_int_equal(lstat(xpath("victim"), &st), 0);   /* nor removed */
		assert_int_equal(lstat(xpath("dvictim"), &st), 0);
	}
}

static void test_rename_link_errors(void **state)
{
	struct nfs_fh fh;
	struct wcc from, to;
	struct stat st;

	(void)state;
	sh("touch %s", xpath("r1"));
	fail_next(BE_FAULT_RENAME, EXDEV);
	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "r1");
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "r2");
	run_ok(nfs3_proc_rename);
	assert_int_equal(tc_u32(t), NFS3ERR_XDEV);
	get_wcc(&from);
	get_wcc(&to);
	check_wcc_unchanged(&from, exp_dir, true);
	check_wcc_unchanged(&to, exp_dir, true);
	assert_int_equal(lstat(xpath("r1"), &st), 0);

	fh = file_fh("r1");
	fail_next(BE_FAULT_LINK, EMLINK);
	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, &fh);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "r3");
	run_ok(nfs3_proc_link);
	assert_int_equal(tc_u32(t), NFS3ERR_MLINK);
	assert_true(tc_post_op_attr(t, NULL)); /* the file's attributes */
	get_wcc(&to);
	check_wcc_unchanged(&to, exp_dir, true);
	assert_int_equal(lstat(xpath("r3"), &st), -1);
}

static void test_read_errors(void **state)
{
	struct nfs_fh fh;
	struct tc_fattr a;
	uint32_t n, len;
	const uint8_t *p;

	(void)state;
	sh("printf 0123456789012345678901234567890123456789 > %s", xpath("rd"));
	fh = file_fh("rd");
	fail_next(BE_FAULT_READ, EIO);
	put_fh_off_count(&fh, 0, 16);
	run_ok(nfs3_proc_read);
	assert_int_equal(tc_u32(t), NFS3ERR_IO);
	assert_true(tc_post_op_attr(t, &a)); /* the file's attributes even so */
	assert_int_equal(a.size, 40);

	/* a short read in the middle of the file: fewer bytes, not eof (RFC 1813 §3.3.6) */
	be_fault_set(ff, &(struct be_fault_rule){ .op = BE_FAULT_READ, .kind = BE_FAULT_SHORT, .short_bytes = 5 });
	put_fh_off_count(&fh, 10, 16);
	run_ok(nfs3_proc_read);
	assert_int_equal(tc_u32(t), NFS3_OK);
	tc_post_op_attr(t, NULL);
	n = tc_u32(t);
	assert_int_equal(n, 5);
	assert_false(tc_u32(t)); /* eof */
	p = tc_opaque(t, &len);
	assert_int_equal(len, 5);
	assert_memory_equal(p, "01234", 5);

	/* the file behind the handle is gone: STALE, EAGAIN: JUKEBOX */
	fail_next(BE_FAULT_FILE_OPEN_HANDLE, ESTALE);
	put_fh_off_count(&fh, 0, 16);
	run_ok(nfs3_proc_read);
	assert_int_equal(tc_u32(t), NFS3ERR_STALE);
	assert_false(tc_post_op_attr(t, NULL));
	fail_next(BE_FAULT_READ, EAGAIN);
	put_fh_off_count(&fh, 0, 16);
	run_ok(nfs3_proc_read);
	assert_int_equal(tc_u32(t), NFS3ERR_JUKEBOX);
}

/* A partial write is answered with the count written (RFC 1813 §3.3.7), the rest left to the client. */
static void test_partial_write(void **state)
{
	struct nfs_fh fh;
	struct wcc w;
	uint32_t count;
	struct stat st;

	(void)state;
	sh(": > %s", xpath("pw"));
	fh = file_fh("pw");
	be_fault_set(ff, &(struct be_fault_rule){ .op = BE_FAULT_WRITE, .kind = BE_FAULT_SHORT, .short_bytes = 3 });
	assert_int_equal(do_write(&fh, 0, "abcdefgh", &count, &w), NFS3_OK);
	assert_int_equal(count, 3);
	assert_int_equal(w.a.size, 3);
	assert_int_equal(stat(xpath("pw"), &st), 0);
	assert_int_equal(st.st_size, 3);
}

static void test_other_procedures(void **state)
{
	struct nfs_fh fh;
	struct tc_fattr a;

	(void)state;
	/* GETATTR: a handle the backend no longer knows, or an EIO reading its attributes */
	fail_next(BE_FAULT_OPEN_HANDLE, ESTALE);
	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	run_ok(nfs3_proc_getattr);
	assert_int_equal(tc_u32(t), NFS3ERR_STALE);
	assert_int_equal(tc_remaining(t), 0);
	fail_next(BE_FAULT_OPEN_HANDLE, BE_EBADHANDLE);
	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	run_ok(nfs3_proc_getattr);
	assert_int_equal(tc_u32(t), NFS3ERR_BADHANDLE);
	/* LOOKUP: EACCES with the directory's attributes */
	fail_next(BE_FAULT_LOOKUP, EACCES);
	assert_int_equal(do_lookup(&root_fh, "anything", &fh), NFS3ERR_ACCES);
	/* ACCESS, FSSTAT, READLINK, READDIR, COMMIT: EIO with the object's attributes */
	fail_next(BE_FAULT_ACCESS, EIO);
	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	xdr_enc_u32(&t->req, 0x3f);
	run_ok(nfs3_proc_access);
	assert_int_equal(tc_u32(t), NFS3ERR_IO);
	assert_true(tc_post_op_attr(t, &a));
	assert_int_equal(a.type, NF3DIR);
	fail_next(BE_FAULT_STATFS, EIO);
	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	run_ok(nfs3_proc_fsstat);
	assert_int_equal(tc_u32(t), NFS3ERR_IO);
	assert_true(tc_post_op_attr(t, NULL));
	assert_int_equal(tc_remaining(t), 0);
	sh("ln -sf target %s", xpath("sl"));
	fh = file_fh("sl");
	fail_next(BE_FAULT_READLINK, EIO);
	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, &fh);
	run_ok(nfs3_proc_readlink);
	assert_int_equal(tc_u32(t), NFS3ERR_IO);
	assert_true(tc_post_op_attr(t, &a));
	assert_int_equal(a.type, NF3LNK);
	for (int i = 0; i < 2; i++) {
		fail_next(BE_FAULT_READDIR, i ? BE_EBADCOOKIE : EIO);
		tc_reset(t, ME, 700, 0, 0);
		tc_put_fh(t, &root_fh);
		xdr_enc_u64(&t->req, 0);
		xdr_enc_u64(&t->req, 0);
		xdr_enc_u32(&t->req, 4096);
		run_ok(nfs3_proc_readdir);
		assert_int_equal(tc_u32(t), i ? NFS3ERR_BAD_COOKIE : NFS3ERR_IO);
		assert_true(tc_post_op_attr(t, NULL));
		assert_int_equal(tc_remaining(t), 0);
	}
	sh("printf data > %s", xpath("cm"));
	fh = file_fh("cm");
	fail_next(BE_FAULT_COMMIT, EIO);
	put_fh_off_count(&fh, 0, 0);
	run_ok(nfs3_proc_commit);
	assert_int_equal(tc_u32(t), NFS3ERR_IO);
	struct wcc w;
	get_wcc(&w);
	check_wcc_unchanged(&w, xpath("cm"), false);
}

/* nth call, once or always; a slow call completes */
static void test_rule_timing(void **state)
{
	struct be_fault_rule r = { .op = BE_FAULT_GETATTR, .kind = BE_FAULT_ERROR, .err = EIO, .nth = 2 };
	struct nfs_fh fh;
	uint32_t results[4];

	(void)state;
	sh("touch %s", xpath("nth"));
	fh = file_fh("nth");
	/* GETATTR reaches the backend's open_handle, not getattr: fail the 2nd open_handle */
	r.op = BE_FAULT_OPEN_HANDLE;
	be_fault_set(ff, &r);
	for (int i = 0; i < 4; i++) {
		tc_reset(t, ME, 700, 0, 0);
		tc_put_fh(t, &fh);
		run_ok(nfs3_proc_getattr);
		results[i] = tc_u32(t);
	}
	assert_int_equal(results[0], NFS3_OK);
	assert_int_equal(results[1], NFS3ERR_IO);
	assert_int_equal(results[2], NFS3_OK);
	assert_int_equal(results[3], NFS3_OK);
	r.always = true;
	r.nth = 1;
	be_fault_set(ff, &r);
	for (int i = 0; i < 3; i++) {
		tc_reset(t, ME, 700, 0, 0);
		tc_put_fh(t, &fh);
		run_ok(nfs3_proc_getattr);
		assert_int_equal(tc_u32(t), NFS3ERR_IO);
	}
	be_fault_clear(ff);
	be_fault_set(ff, &(struct be_fault_rule){ .op = BE_FAULT_OPEN_HANDLE, .kind = BE_FAULT_DELAY, .delay_ms = 20 });
	tc_reset(t, ME, 700, 0, 0);
	tc_put_fh(t, &fh);
	run_ok(nfs3_proc_getattr);
	assert_int_equal(tc_u32(t), NFS3_OK);
}

/* ---- one slow backend call never stalls other clients' calls ---- */

struct job {
	struct work w; /* first */
	struct tcall *t;
	handler_fn h;
	enum rpc_proc_status st;
	sem_t done;
};

static struct loop *lp;

static void job_run(struct work *w)
{
	struct job *j = (struct job *)w;

	j->st = tc_run(j->t, j->h);
}

static void job_done(struct work *w)
{
	sem_post(&((struct job *)w)->done);
}

static void *loop_main(void *arg)
{
	loop_run(arg);
	return NULL;
}

static void job_init(struct job *j, const char *addr, handler_fn h)
{
	memset(j, 0, sizeof(*j));
	j->t = tc_new();
	tc_reset(j->t, addr, 700, 0, 0);
	j->h = h;
	j->w.run = job_run;
	j->w.done = job_done;
	sem_init(&j->done, 0, 0);
}

static void job_free(struct job *j)
{
	sem_destroy(&j->done);
	tc_free(j->t);
}

static void test_no_stall(void **state)
{
	enum { NB = 8 };
	struct job a, b[NB];
	struct nfs_fh fh, other;
	pthread_t loop_thread;
	uint32_t n, len;
	const uint8_t *p;

	(void)state;
	sh("printf held-data > %s && printf other > %s", xpath("held"), xpath("other"));
	fh = file_fh("held");
	other = file_fh("other");
	lp = loop_new();
	assert_non_null(lp);
	assert_int_equal(workers_start(lp, 4), 0);
	assert_int_equal(pthread_create(&loop_thread, NULL, loop_main, lp), 0);

	/* A: a READ that the backend holds */
	be_fault_set(ff, &(struct be_fault_rule){ .op = BE_FAULT_READ, .kind = BE_FAULT_HOLD });
	job_init(&a, ME, nfs3_proc_read);
	tc_put_fh(a.t, &fh);
	xdr_enc_u64(&a.t->req, 0);
	xdr_enc_u32(&a.t->req, 64);
	workers_submit(&a.w);
	be_fault_wait_held(ff, 1);

	/* B: other clients' calls, on the same export, the same file, the same directory */
	for (unsigned i = 0; i < NB; i++) {
		static const handler_fn hs[] = { nfs3_proc_getattr, nfs3_proc_read, nfs3_proc_lookup,
						  nfs3_proc_write, nfs3_proc_readdir, nfs3_proc_fsstat };
		handler_fn h = hs[i % 6];

		job_init(&b[i], OTHER, h);
		if (h == nfs3_proc_lookup || h == nfs3_proc_readdir)
			tc_put_fh(b[i].t, &root_fh);
		else /* the held file itself, except for writes: A must read what it held */
			tc_put_fh(b[i].t, i % 2 && h != nfs3_proc_write ? &fh : &other);
		if (h == nfs3_proc_read) {
			xdr_enc_u64(&b[i].t->req, 0);
			xdr_enc_u32(&b[i].t->req, 64);
		} else if (h == nfs3_proc_lookup) {
			tc_put_name(b[i].t, "held");
		} else if (h == nfs3_proc_write) {
			xdr_enc_u64(&b[i].t->req, 100);
			xdr_enc_u32(&b[i].t->req, 1);
			xdr_enc_u32(&b[i].t->req, NFS3_UNSTABLE);
			xdr_enc_opaque(&b[i].t->req, "x", 1);
		} else if (h == nfs3_proc_readdir) {
			xdr_enc_u64(&b[i].t->req, 0);
			xdr_enc_u64(&b[i].t->req, 0);
			xdr_enc_u32(&b[i].t->req, 4096);
		}
		workers_submit(&b[i].w);
	}
	for (unsigned i = 0; i < NB; i++) {
		sem_wait(&b[i].done); /* a stall would block here for good */
		assert_int_equal(b[i].st, RPC_PROC_OK);
		assert_true(xdr_dec_u32(&b[i].t->res, &n));
		assert_int_equal(n, NFS3_OK);
	}
	/* ... all while A is still inside the backend */
	assert_int_equal(sem_trywait(&a.done), -1);
	assert_int_equal(errno, EAGAIN);

	be_fault_release(ff);
	sem_wait(&a.done);
	assert_int_equal(a.st, RPC_PROC_OK);
	assert_true(xdr_dec_u32(&a.t->res, &n));
	assert_int_equal(n, NFS3_OK);
	assert_true(xdr_dec_u32(&a.t->res, &n)); /* post_op_attr follows */
	assert_true(n);
	for (unsigned i = 0; i < NFS3_FATTR_BYTES / 4; i++)
		assert_true(xdr_dec_u32(&a.t->res, &n));
	assert_true(xdr_dec_u32(&a.t->res, &n));
	assert_int_equal(n, 9);
	assert_true(xdr_dec_u32(&a.t->res, &n)); /* eof */
	assert_true(xdr_dec_opaque(&a.t->res, 64, &p, &len));
	assert_memory_equal(p, "held-data", 9);

	loop_break(lp);
	pthread_join(loop_thread, NULL);
	workers_stop();
	loop_free(lp);
	job_free(&a);
	for (unsigned i = 0; i < NB; i++)
		job_free(&b[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_write_errors, clear_rules),
		cmocka_unit_test_teardown(test_setattr_errors, clear_rules),
		cmocka_unit_test_teardown(test_namespace_errors, clear_rules),
		cmocka_unit_test_teardown(test_rename_link_errors, clear_rules),
		cmocka_unit_test_teardown(test_read_errors, clear_rules),
		cmocka_unit_test_teardown(test_partial_write, clear_rules),
		cmocka_unit_test_teardown(test_other_procedures, clear_rules),
		cmocka_unit_test_teardown(test_rule_timing, clear_rules),
		cmocka_unit_test_teardown(test_no_stall, clear_rules),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
