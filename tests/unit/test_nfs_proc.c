/*
 * test_nfs_proc.c - NFSv3 and MOUNT v3 procedures end to end at the handler
 * level, on a temporary export tree: nfs_service_init with a real exports
 * table (conf parser) and key file, calls built with the test harness from
 * several client addresses and credentials.
 *
 * Needs root (open_by_handle_at, setfsuid, mknod): skips otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "nfs/nfs.h"
#include "nfs/v3/nfs3.h"
#include "backend/local/local.h"
#include "rpc/rpc_gss.h"
#include "tests/unit/test_nfs_harness.h"

/* The caller's identity moved: mapping to nfs/common/cred.c, applying it to the
 * local backend (backend/local/identity.c). The tests keep their names. */
#define nfs_identity be_cred
#define nfs_identity_map nfs_cred_map
#define nfs_identity_apply local_id_caller
#define nfs_identity_restore local_id_server

#define ME "127.0.0.1"     /* rw, no_root_squash, insecure */
#define SQUASH "127.0.0.2" /* rw, root_squash */
#define ALLSQ "127.0.0.3"  /* rw, all_squash anon 4242 */
#define SECURE "127.0.0.4" /* rw, secure */
#define STRANGER "10.9.9.9"

static char top[64], exp_rw[96], exp_ro[96];
static struct tcall *t;
static struct nfs_fh root_fh, ro_fh;

typedef enum rpc_proc_status (*handler_fn)(struct rpc_call *);

static void run_ok(handler_fn h)
{
	assert_int_equal(tc_run(t, h), RPC_PROC_OK);
}

/* The next calls come over a transport whose ports mean no privilege (RDMA). */
static bool over_rdma;

static void as(const char *addr, unsigned port, uint32_t uid, uint32_t gid)
{
	tc_reset(t, addr, port, uid, gid);
	t->conn.no_port_privilege = over_rdma;
}

static void sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

/* ---- procedure wrappers: each sets up args, runs, and decodes the common part ---- */

/* The last MNT's flavor list (the first 8). */
static uint32_t mnt_fl[8], mnt_nfl;

static uint32_t do_mnt(const char *addr, unsigned port, const char *path, struct nfs_fh *fh)
{
	uint32_t st, n;
	bool sys = false;

	as(addr, port, 0, 0);
	tc_put_name(t, path);
	run_ok(mount3_proc_mnt);
	st = tc_u32(t);
	if (st == MNT3_OK) {
		tc_fh(t, fh);
		n = tc_u32(t);
		mnt_nfl = n;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t f = tc_u32(t);
			if (i < 8)
				mnt_fl[i] = f;
			sys |= f == RPC_AUTH_SYS;
		}
		assert_true(sys);
	}
	return st;
}

static uint32_t do_getattr(const struct nfs_fh *fh, struct tc_fattr *a)
{
	uint32_t st;

	tc_put_fh(t, fh);
	run_ok(nfs3_proc_getattr);
	st = tc_u32(t);
	if (st == NFS3_OK)
		tc_fattr(t, a);
	return st;
}

static uint32_t do_lookup(const struct nfs_fh *dir, const char *name, struct nfs_fh *fh, struct tc_fattr *a)
{
	uint32_t st;

	tc_put_fh(t, dir);
	tc_put_name(t, name);
	run_ok(nfs3_proc_lookup);
	st = tc_u32(t);
	if (st == NFS3_OK) {
		tc_fh(t, fh);
		assert_true(tc_post_op_attr(t, a));
	}
	assert_true(tc_post_op_attr(t, NULL)); /* dir attributes, both arms */
	return st;
}

/* CREATE; how = UNCHECKED/GUARDED (mode) or EXCLUSIVE (verf) */
static uint32_t do_create(const struct nfs_fh *dir, const char *name, uint32_t how, int mode,
			  const char *verf, struct nfs_fh *fh, struct tc_fattr *a)
{
	uint32_t st;
	bool pre, post;

	tc_put_fh(t, dir);
	tc_put_name(t, name);
	xdr_enc_u32(&t->req, how);
	if (how == NFS3_CREATE_EXCLUSIVE)
		xdr_enc_fixed(&t->req, verf, 8);
	else
		tc_put_sattr_mode(t, mode);
	run_ok(nfs3_proc_create);
	st = tc_u32(t);
	if (st == NFS3_OK) {
		assert_true(tc_u32(t)); /* handle follows */
		tc_fh(t, fh);
		assert_true(tc_post_op_attr(t, a));
	}
	tc_skip_wcc(t, &pre, &post);
	assert_true(pre || st == NFS3ERR_STALE || st == NFS3ERR_BADHANDLE || st == NFS3ERR_ACCES);
	return st;
}

static uint32_t do_write(const struct nfs_fh *fh, uint64_t off, const void *data, uint32_t len, uint32_t stable,
			 uint32_t *count, uint32_t *committed, uint8_t verf[8])
{
	uint32_t st;

	tc_put_fh(t, fh);
	xdr_enc_u64(&t->req, off);
	xdr_enc_u32(&t->req, len);
	xdr_enc_u32(&t->req, stable);
	xdr_enc_opaque(&t->req, data, len);
	run_ok(nfs3_proc_write);
	st = tc_u32(t);
	tc_skip_wcc(t, NULL, NULL);
	if (st == NFS3_OK) {
		*count = tc_u32(t);
		*committed = tc_u32(t);
		assert_true(xdr_dec_fixed(&t->res, verf, 8));
	}
	return st;
}

static uint32_t do_read(const struct nfs_fh *fh, uint64_t off, uint32_t count, void *buf, uint32_t *n, bool *eof)
{
	uint32_t st, len;
	const uint8_t *p;

	tc_put_fh(t, fh);
	xdr_enc_u64(&t->req, off);
	xdr_enc_u32(&t->req, count);
	run_ok(nfs3_proc_read);
	st = tc_u32(t);
	tc_post_op_attr(t, NULL);
	if (st == NFS3_OK) {
		*n = tc_u32(t);
		*eof = tc_u32(t);
		p = tc_opaque(t, &len);
		assert_int_equal(len, *n);
		if (buf)
			memcpy(buf, p, len);
	}
	return st;
}

static uint32_t do_dirop(handler_fn h, const struct nfs_fh *dir, const char *name)
{
	uint32_t st;

	tc_put_fh(t, dir);
	tc_put_name(t, name);
	run_ok(h);
	st = tc_u32(t);
	tc_skip_wcc(t, NULL, NULL);
	return st;
}

static uint32_t do_mkdir(const struct nfs_fh *dir, const char *name, int mode, struct nfs_fh *fh)
{
	uint32_t st;

	tc_put_fh(t, dir);
	tc_put_name(t, name);
	tc_put_sattr_mode(t, mode);
	run_ok(nfs3_proc_mkdir);
	st = tc_u32(t);
	if (st == NFS3_OK) {
		assert_true(tc_u32(t));
		tc_fh(t, fh);
		tc_post_op_attr(t, NULL);
	}
	tc_skip_wcc(t, NULL, NULL);
	return st;
}

static uint32_t do_access(const struct nfs_fh *fh, uint32_t want, uint32_t *got)
{
	uint32_t st;

	tc_put_fh(t, fh);
	xdr_enc_u32(&t->req, want);
	run_ok(nfs3_proc_access);
	st = tc_u32(t);
	tc_post_op_attr(t, NULL);
	if (st == NFS3_OK)
		*got = tc_u32(t);
	return st;
}

/* ---- setup ---- */

static int setup(void **state)
{
	char text[1024];

	(void)state;
	if (tc_fixture_dir("nfs_proc", top, sizeof(top)) < 0)
		return -1;
	snprintf(exp_rw, sizeof(exp_rw), "%s/rw", top);
	snprintf(exp_ro, sizeof(exp_ro), "%s/ro", top);
	if (mkdir(exp_rw, 0755) < 0 || mkdir(exp_ro, 0755) < 0)
		return -1;
	snprintf(text, sizeof(text),
		 "%s " ME "(rw,no_root_squash,insecure,sec=sys:none) " SQUASH "(rw,root_squash,insecure) "
		 ALLSQ "(rw,all_squash,anonuid=4242,anongid=4242,insecure) " SECURE "(rw,no_root_squash)\n"
		 "%s " ME "(ro,no_root_squash,insecure)\n",
		 exp_rw, exp_ro);
	if (tc_fixture_start(top, text, false, &t) < 0)
		return -1;
	if (do_mnt(ME, 700, exp_rw, &root_fh) != MNT3_OK || do_mnt(ME, 700, exp_ro, &ro_fh) != MNT3_OK)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tc_fixture_stop(top, t);
	return 0;
}

/* ---- MOUNT ---- */

static void test_mount(void **state)
{
	struct nfs_fh fh;
	char path[256];
	uint32_t n;
	bool found_rw = false, found_ro = false, more;

	(void)state;
	sh("mkdir -p %s/sub/deeper", exp_rw);
	assert_int_equal(do_mnt(ME, 700, exp_rw, &fh), MNT3_OK);
	/* RFC 2623 §2.7: sec=sys:none is listed in that order (the admin's, as mountd). */
	assert_int_equal(mnt_nfl, 2);
	assert_int_equal(mnt_fl[0], RPC_AUTH_SYS);
	assert_int_equal(mnt_fl[1], RPC_AUTH_NONE);
	assert_int_equal(mount3_auth_flavor(4), 390005); /* krb5p's pseudo-flavor */
	assert_int_equal(mount3_auth_flavor(2), 390003);
	assert_memory_equal(fh.data, root_fh.data, fh.len);
	snprintf(path, sizeof(path), "%s/sub/deeper", exp_rw);
	assert_int_equal(do_mnt(ME, 700, path, &fh), MNT3_OK); /* a directory inside an export */
	assert_false(fh.len == root_fh.len && !memcmp(fh.data, root_fh.data, fh.len));
	snprintf(path, sizeof(path), "%s/sub/../../ro", exp_rw);
	assert_int_equal(do_mnt(ME, 700, path, &fh), MNT3ERR_ACCES); /* ".." out of the export */
	assert_int_equal(do_mnt(ME, 700, "/nonexistent", &fh), MNT3ERR_NOENT);
	assert_int_equal(do_mnt(STRANGER, 700, exp_rw, &fh), MNT3ERR_ACCES);
	assert_int_equal(do_mnt(SECURE, 2000, exp_rw, &fh), MNT3ERR_ACCES); /* secure: port >= 1024 */
	assert_int_equal(do_mnt(SECURE, 900, exp_rw, &fh), MNT3_OK);

	/* DUMP lists what was mounted; UMNT removes it */
	as(ME, 700, 0, 0);
	run_ok(mount3_proc_dump);
	more = tc_u32(t);
	bool dumped = false;
	while (more) {
		const uint8_t *h = tc_opaque(t, &n);
		(void)h;
		const uint8_t *d = tc_opaque(t, &n);
		dumped |= n == strlen(exp_rw) && !memcmp(d, exp_rw, n);
		more = tc_u32(t);
	}
	assert_true(dumped);
	as(ME, 700, 0, 0);
	tc_put_name(t, exp_rw);
	run_ok(mount3_proc_umnt);
	as(ME, 700, 0, 0);
	run_ok(mount3_proc_dump);
	more = tc_u32(t);
	while (more) {
		const uint8_t *h = tc_opaque(t, &n);
		char host[64] = { 0 };
		memcpy(host, h, n < 63 ? n : 63);
		const uint8_t *d = tc_opaque(t, &n);
		assert_false(!strcmp(host, ME) && n == strlen(exp_rw) && !memcmp(d, exp_rw, n));
		more = tc_u32(t);
	}

	/* EXPORT: both exports with their groups */
	as(ME, 700, 0, 0);
	run_ok(mount3_proc_export);
	while (tc_u32(t)) {
		const uint8_t *d = tc_opaque(t, &n);
		unsigned groups = 0;
		bool rw = n == strlen(exp_rw) && !memcmp(d, exp_rw, n);
		found_rw |= rw;
		found_ro |= n == strlen(exp_ro) && !memcmp(d, exp_ro, n);
		while (tc_u32(t)) {
			tc_opaque(t, &n);
			groups++;
		}
		if (rw)
			assert_int_equal(groups, 4);
	}
	assert_true(found_rw && found_ro);
}

/* ---- GETATTR / LOOKUP ---- */

static void test_getattr_lookup(void **state)
{
	struct tc_fattr a, b;
	struct nfs_fh fh, fh2;
	struct stat st;
	char name[300];

	(void)state;
	sh("echo hello > %s/hello && ln -sf /etc/passwd %s/lnk && mkdir -p %s/adir", exp_rw, exp_rw, exp_rw);
	as(ME, 700, 0, 0);
	assert_int_equal(do_getattr(&root_fh, &a), NFS3_OK);
	assert_int_equal(stat(exp_rw, &st), 0);
	assert_int_equal(a.type, NF3DIR);
	assert_int_equal(a.fileid, st.st_ino);

	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "hello", &fh, &a), NFS3_OK);
	assert_int_equal(a.type, NF3REG);
	assert_int_equal(a.size, 6);
	/* ".." of the export root is the root: never a way out */
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "..", &fh2, &b), NFS3_OK);
	assert_int_equal(fh2.len, root_fh.len);
	assert_memory_equal(fh2.data, root_fh.data, fh2.len);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, ".", &fh2, &b), NFS3_OK);
	assert_memory_equal(fh2.data, root_fh.data, fh2.len);
	/* ".." of a subdirectory is the root */
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "adir", &fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&fh, "..", &fh2, &b), NFS3_OK);
	assert_memory_equal(fh2.data, root_fh.data, fh2.len);
	/* symlinks are not followed */
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "lnk", &fh, &a), NFS3_OK);
	assert_int_equal(a.type, NF3LNK);
	/* names */
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "adir/x", &fh, &a), NFS3ERR_ACCES);
	memset(name, 'x', 256);
	name[256] = '\0';
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, name, &fh, &a), NFS3ERR_NAMETOOLONG);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "missing", &fh, &a), NFS3ERR_NOENT);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "hello", &fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&fh, "x", &fh2, &a), NFS3ERR_NOTDIR);
}

static void reload_exports(const char *text)
{
	struct export_table tbl;
	char err[256];

	assert_int_equal(exports_parse(text, "test", &tbl, err, sizeof(err)), 0);
	assert_int_equal(nfs_exports_replace(&tbl), 0);
}

static void standard_exports_text(char *text, size_t len)
{
	snprintf(text, len,
		 "%s " ME "(rw,no_root_squash,insecure,sec=sys:none) " SQUASH "(rw,root_squash,insecure) "
		 ALLSQ "(rw,all_squash,anonuid=4242,anongid=4242,insecure) " SECURE "(rw,no_root_squash)\n"
		 "%s " ME "(ro,no_root_squash,insecure)\n",
		 exp_rw, exp_ro);
}

/* Without crossmnt, a file system mounted below the export is not entered:
 * the mount point shows as the directory underneath. */
static void test_no_crossmnt(void **state)
{
	struct tc_fattr a;
	struct nfs_fh fh, fh2;
	char mnt[160], text[1024];

	(void)state;
	snprintf(mnt, sizeof(mnt), "%s/mnt", exp_rw);
	sh("mkdir -p %s && touch %s/under", mnt, mnt);
	snprintf(text, sizeof(text), "mount -t tmpfs rnfsdtest %s 2>/dev/null", mnt);
	if (system(text) != 0)
		skip(); /* cannot mount here */
	sh("touch %s/over", mnt);
	standard_exports_text(text, sizeof(text));
	reload_exports(text); /* the export's root is cloned now, with the submount present */
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "mnt", &fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&fh, "under", &fh2, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&fh, "over", &fh2, &a), NFS3ERR_NOENT);
	sh("umount %s", mnt);
}

/* ---- CREATE / WRITE / READ / COMMIT ---- */

/* A new file NAME in the root holding n bytes of big (filled with i * mul + add first). */
static void big_file(const char *name, uint8_t *big, size_t n, unsigned mul, unsigned add, struct nfs_fh *fh)
{
	uint8_t verf[8];
	struct tc_fattr a;
	uint32_t count, committed;

	for (size_t i = 0; i < n; i++)
		big[i] = (uint8_t)(i * mul + add);
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, name, NFS3_CREATE_UNCHECKED, 0640, NULL, fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_write(fh, 0, big, n, NFS3_FILE_SYNC, &count, &committed, verf), NFS3_OK);
}

/* READ by pipe (the TCP transport's payload_pipe): a large READ's data is
 * spliced into the pipe, not copied into the payload area; a small one is
 * copied; both arrive intact, with count and eof as by copy. */
static void test_read_piped(void **state)
{
	static uint8_t big[256 * 1024];
	uint8_t small[100];
	struct nfs_fh fh;
	uint32_t n;
	bool eof;

	(void)state;
	big_file("piped", big, sizeof(big), 13, 1, &fh);
	t->pipe_on = true;
	as(ME, 700, 0, 0);
	tc_put_fh(t, &fh);
	xdr_enc_u64(&t->req, 4096);
	xdr_enc_u32(&t->req, 1u << 20);
	run_ok(nfs3_proc_read);
	assert_int_equal(t->piped, 1);
	assert_true(t->c.ddp_out[0].piped);
	assert_int_equal(t->c.payload_used, 0); /* nothing was copied into the payload area */
	assert_int_equal(tc_u32(t), NFS3_OK);
	tc_post_op_attr(t, NULL);
	assert_int_equal(tc_u32(t), sizeof(big) - 4096);
	assert_true(tc_u32(t)); /* eof */
	const uint8_t *p = tc_opaque(t, &n);
	assert_int_equal(n, sizeof(big) - 4096);
	assert_memory_equal(p, big + 4096, n);
	/* under the threshold: copied, as over RDMA */
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh, 7, sizeof(small), small, &n, &eof), NFS3_OK);
	assert_int_equal(t->piped, 0);
	assert_int_equal(n, sizeof(small));
	assert_false(eof);
	assert_memory_equal(small, big + 7, sizeof(small));
	/* another caller without read permission: refused before anything is piped */
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_read(&fh, 0, 1u << 20, NULL, &n, &eof), NFS3ERR_ACCES);
	assert_int_equal(t->piped, 0);
	t->pipe_on = false;
}

/* RPCSEC_GSS krb5i/krb5p (c->gss.wrap): wrapped results are one contiguous
 * body (RFC 2203 §5.3.2.2, §5.3.2.3), so READ's data travels inline in the
 * reply buffer and a READ returns what fits there beside the checksum or wrap
 * token (RFC 1813 §3.3.6: fewer bytes than asked): with a payload area (TCP),
 * and with only a small one (RPC-over-RDMA without a Write chunk, which the
 * Linux client never offers under krb5i/krb5p): the reply buffer's own tail. */
static void test_read_gss_wrapped(void **state)
{
	static uint8_t big[256 * 1024];
	const size_t cap = 64 * 1024, small = 16 * 1024;
	struct nfs_fh fh;
	uint32_t count, n;

	(void)state;
	big_file("wrapped", big, sizeof(big), 11, 3, &fh);
	for (int only_small = 0; only_small < 2; only_small++) {
		as(ME, 700, 0, 0);
		t->c.gss.wrap = true;
		t->reply_cap = cap;
		t->payload_cap = only_small ? small : TC_PAYLOAD_MAX;
		tc_put_fh(t, &fh);
		xdr_enc_u64(&t->req, 100);
		xdr_enc_u32(&t->req, 1u << 20);
		run_ok(nfs3_proc_read); /* before: SYSERR (overflow) without a payload area */
		assert_int_equal(t->c.n_ddp_out, 0); /* inline */
		assert_true(xdr_enc_len(&t->c.res) + RPC_GSS_REPLY_SLACK <= cap); /* room for the token */
		assert_int_equal(tc_u32(t), NFS3_OK);
		tc_post_op_attr(t, NULL);
		count = tc_u32(t);
		assert_false(tc_u32(t)); /* not eof */
		const uint8_t *p = tc_opaque(t, &n);
		assert_int_equal(n, count);
		assert_true(n > small && n <= cap - RPC_GSS_REPLY_SLACK); /* more than a small payload area holds */
		assert_memory_equal(p, big + 100, n);
	}
}

static void test_create_write_read(void **state)
{
	static uint8_t big[NFS3_MAX_IO + 4096];
	uint8_t verf[8], verf2[8], buf[64];
	struct tc_fattr a;
	struct nfs_fh fh, fh2;
	uint32_t count, committed, n;
	bool eof;

	(void)state;
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "f1", NFS3_CREATE_UNCHECKED, 0640, NULL, &fh, &a), NFS3_OK);
	assert_int_equal(a.type, NF3REG);
	assert_int_equal(a.mode, 0640);
	assert_int_equal(a.size, 0);
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "f1", NFS3_CREATE_GUARDED, 0640, NULL, &fh2, &a), NFS3ERR_EXIST);

	for (uint32_t stable = NFS3_UNSTABLE; stable <= NFS3_FILE_SYNC; stable++) {
		as(ME, 700, 0, 0);
		assert_int_equal(do_write(&fh, stable * 10, "0123456789", 10, stable, &count, &committed, verf),
				 NFS3_OK);
		assert_int_equal(count, 10);
		assert_int_equal(committed, stable); /* sync export: as asked */
	}
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh, 0, 64, buf, &n, &eof), NFS3_OK);
	assert_int_equal(n, 30);
	assert_true(eof);
	assert_memory_equal(buf, "012345678901234567890123456789", 30);
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh, 5, 5, buf, &n, &eof), NFS3_OK);
	assert_int_equal(n, 5);
	assert_false(eof);
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh, 1000, 5, buf, &n, &eof), NFS3_OK);
	assert_int_equal(n, 0);
	assert_true(eof);
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh, 0, 0, buf, &n, &eof), NFS3_OK); /* count 0 */
	assert_int_equal(n, 0);
	assert_false(eof);

	/* COMMIT answers the same write verifier */
	as(ME, 700, 0, 0);
	tc_put_fh(t, &fh);
	xdr_enc_u64(&t->req, 0);
	xdr_enc_u32(&t->req, 0);
	run_ok(nfs3_proc_commit);
	assert_int_equal(tc_u32(t), NFS3_OK);
	tc_skip_wcc(t, NULL, NULL);
	assert_true(xdr_dec_fixed(&t->res, verf2, 8));
	assert_memory_equal(verf, verf2, 8);

	/* A 1 MiB write, and a READ asking for more than rtmax gets 1 MiB */
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	as(ME, 700, 0, 0);
	assert_int_equal(do_write(&fh, 0, big, NFS3_MAX_IO, NFS3_UNSTABLE, &count, &committed, verf), NFS3_OK);
	assert_int_equal(count, NFS3_MAX_IO);
	as(ME, 700, 0, 0);
	assert_int_equal(do_write(&fh, NFS3_MAX_IO, big, 4096, NFS3_UNSTABLE, &count, &committed, verf), NFS3_OK);
	as(ME, 700, 0, 0);
	tc_put_fh(t, &fh);
	xdr_enc_u64(&t->req, 0);
	xdr_enc_u32(&t->req, 4u << 20);
	run_ok(nfs3_proc_read);
	assert_int_equal(tc_u32(t), NFS3_OK);
	tc_post_op_attr(t, NULL);
	assert_int_equal(tc_u32(t), NFS3_MAX_IO);
	assert_false(tc_u32(t)); /* not eof: 4096 more bytes */
	const uint8_t *p = tc_opaque(t, &n);
	assert_int_equal(n, NFS3_MAX_IO);
	assert_memory_equal(p, big, NFS3_MAX_IO);
	/* zero copy: the data was produced in the payload area, not the reply buffer */
	assert_int_equal(t->c.n_ddp_out, 1);
	assert_ptr_equal(t->c.ddp_out[0].data, t->payload);

	/* UNCHECKED over an existing file with size 0 truncates it */
	as(ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "f1");
	xdr_enc_u32(&t->req, NFS3_CREATE_UNCHECKED);
	xdr_enc_bool(&t->req, false);
	xdr_enc_bool(&t->req, false);
	xdr_enc_bool(&t->req, false);
	xdr_enc_bool(&t->req, true);
	xdr_enc_u64(&t->req, 0);
	xdr_enc_u32(&t->req, 0);
	xdr_enc_u32(&t->req, 0);
	run_ok(nfs3_proc_create);
	assert_int_equal(tc_u32(t), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_getattr(&fh, &a), NFS3_OK);
	assert_int_equal(a.size, 0);
}

/* RFC 8267: WRITE data and the SYMLINK path may arrive in Read chunks (ddp_in), not inline. */
static void test_ddp_read_chunks(void **state)
{
	static const char data[] = "data that came by RDMA Read";
	static const char target[] = "chunked/target";
	struct tc_fattr a;
	struct nfs_fh fh;
	char buf[64];
	uint32_t n, len;
	bool eof;
	const uint8_t *p;

	(void)state;
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "chunked", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	tc_put_fh(t, &fh);
	xdr_enc_u64(&t->req, 0);
	xdr_enc_u32(&t->req, sizeof(data));
	xdr_enc_u32(&t->req, NFS3_FILE_SYNC);
	xdr_enc_u32(&t->req, sizeof(data)); /* the opaque's length word; its bytes are in the chunk */
	t->c.ddp_in[0] = (struct rpc_ddp_in){ .position = (uint32_t)xdr_enc_len(&t->req),
					      .len = sizeof(data), .data = (const uint8_t *)data };
	t->c.n_ddp_in = 1;
	run_ok(nfs3_proc_write);
	assert_int_equal(tc_u32(t), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh, 0, sizeof(buf), buf, &n, &eof), NFS3_OK);
	assert_int_equal(n, sizeof(data));
	assert_memory_equal(buf, data, n);

	as(ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "chunklink");
	tc_put_sattr_mode(t, -1);
	xdr_enc_u32(&t->req, strlen(target));
	t->c.ddp_in[0] = (struct rpc_ddp_in){ .position = (uint32_t)xdr_enc_len(&t->req),
					      .len = (uint32_t)strlen(target), .data = (const uint8_t *)target };
	t->c.n_ddp_in = 1;
	run_ok(nfs3_proc_symlink);
	assert_int_equal(tc_u32(t), NFS3_OK);
	assert_true(tc_u32(t));
	tc_fh(t, &fh);
	as(ME, 700, 0, 0);
	tc_put_fh(t, &fh);
	run_ok(nfs3_proc_readlink);
	assert_int_equal(tc_u32(t), NFS3_OK);
	tc_post_op_attr(t, NULL);
	p = tc_opaque(t, &len);
	assert_int_equal(len, strlen(target));
	assert_memory_equal(p, target, len);
	assert_int_equal(t->c.n_ddp_out, 1); /* READLINK result left by rpc_enc_ddp */

	/* a chunk whose length disagrees with the length word: GARBAGE_ARGS */
	as(ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "badlink");
	tc_put_sattr_mode(t, -1);
	xdr_enc_u32(&t->req, 5);
	t->c.ddp_in[0] = (struct rpc_ddp_in){ .position = (uint32_t)xdr_enc_len(&t->req),
					      .len = (uint32_t)strlen(target), .data = (const uint8_t *)target };
	t->c.n_ddp_in = 1;
	assert_int_equal(tc_run(t, nfs3_proc_symlink), RPC_PROC_GARBAGE);
}

/* READ data lands in the payload area; with none, it is carved from the reply buffer. */
static void test_read_without_payload_area(void **state)
{
	struct tc_fattr a;
	struct nfs_fh fh;
	uint32_t n, len;

	(void)state;
	sh("printf 'abcdefgh' > %s/small", exp_rw);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "small", &fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	tc_put_fh(t, &fh);
	xdr_enc_u64(&t->req, 0);
	xdr_enc_u32(&t->req, 100);
	/* tc_run always installs the payload area: run by hand without one */
	struct rpc_call *c = &t->c;
	c->msg = t->reqbuf;
	c->msg_len = xdr_enc_len(&t->req);
	xdr_dec_init(&c->args, t->reqbuf, c->msg_len);
	xdr_enc_init(&c->res, t->replybuf, 2048);
	c->reply_buf = t->replybuf;
	c->reply_cap = 2048;
	assert_int_equal(nfs3_proc_read(c), RPC_PROC_OK);
	assert_int_equal(c->n_ddp_out, 1);
	assert_int_equal(c->ddp_out[0].len, 8);
	assert_memory_equal(c->ddp_out[0].data, "abcdefgh", 8);
	xdr_dec_init(&t->res, t->replybuf, xdr_enc_len(&c->res));
	assert_int_equal(tc_u32(t), NFS3_OK);
	tc_post_op_attr(t, NULL);
	n = tc_u32(t);
	assert_int_equal(n, 8);
	tc_u32(t);
	len = tc_u32(t);
	assert_int_equal(len, 8);
}

static void test_exclusive_create(void **state)
{
	struct tc_fattr a;
	struct nfs_fh fh1, fh2;

	(void)state;
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "excl", NFS3_CREATE_EXCLUSIVE, -1, "verfAAAA", &fh1, &a), NFS3_OK);
	/* a retransmission with the same verifier succeeds with the same file */
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "excl", NFS3_CREATE_EXCLUSIVE, -1, "verfAAAA", &fh2, &a), NFS3_OK);
	assert_int_equal(fh1.len, fh2.len);
	assert_memory_equal(fh1.data, fh2.data, fh1.len);
	/* another client's verifier: EXIST */
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "excl", NFS3_CREATE_EXCLUSIVE, -1, "verfBBBB", &fh2, &a), NFS3ERR_EXIST);
	/* an existing file made otherwise: EXIST */
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "f1", NFS3_CREATE_EXCLUSIVE, -1, "verfAAAA", &fh2, &a), NFS3ERR_EXIST);
}

/* ---- SETATTR ---- */

static uint32_t do_setattr(const struct nfs_fh *fh, int mode, int64_t size, bool guard, uint32_t gsec,
			   uint32_t gnsec)
{
	uint32_t st;
	bool pre, post;

	tc_put_fh(t, fh);
	xdr_enc_bool(&t->req, mode >= 0);
	if (mode >= 0)
		xdr_enc_u32(&t->req, (uint32_t)mode);
	xdr_enc_bool(&t->req, false);
	xdr_enc_bool(&t->req, false);
	xdr_enc_bool(&t->req, size >= 0);
	if (size >= 0)
		xdr_enc_u64(&t->req, (uint64_t)size);
	xdr_enc_u32(&t->req, NFS3_DONT_CHANGE);
	xdr_enc_u32(&t->req, NFS3_SET_TO_CLIENT_TIME);
	xdr_enc_u32(&t->req, 1234567);
	xdr_enc_u32(&t->req, 89);
	xdr_enc_bool(&t->req, guard);
	if (guard) {
		xdr_enc_u32(&t->req, gsec);
		xdr_enc_u32(&t->req, gnsec);
	}
	run_ok(nfs3_proc_setattr);
	st = tc_u32(t);
	tc_skip_wcc(t, &pre, &post);
	assert_true(pre && post);
	return st;
}

static uint32_t do_setattr_size(const struct nfs_fh *fh, uint64_t size)
{
	uint32_t st;

	tc_put_fh(t, fh);
	xdr_enc_bool(&t->req, false);
	xdr_enc_bool(&t->req, false);
	xdr_enc_bool(&t->req, false);
	xdr_enc_bool(&t->req, true);
	xdr_enc_u64(&t->req, size);
	xdr_enc_u32(&t->req, NFS3_DONT_CHANGE);
	xdr_enc_u32(&t->req, NFS3_DONT_CHANGE);
	xdr_enc_bool(&t->req, false);
	run_ok(nfs3_proc_setattr);
	st = tc_u32(t);
	tc_skip_wcc(t, NULL, NULL);
	return st;
}

static void test_setattr(void **state)
{
	struct tc_fattr a;
	struct nfs_fh fh;

	(void)state;
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "sa", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3_OK);
	/* §3.3.2 guard: a ctime that is not the object's -> NOT_SYNC, nothing changed */
	as(ME, 700, 0, 0);
	assert_int_equal(do_setattr(&fh, 0600, 10, true, a.ctime_sec + 1, a.ctime_nsec), NFS3ERR_NOT_SYNC);
	as(ME, 700, 0, 0);
	assert_int_equal(do_getattr(&fh, &a), NFS3_OK);
	assert_int_equal(a.mode, 0644);
	as(ME, 700, 0, 0);
	assert_int_equal(do_setattr(&fh, 0600, 10, true, a.ctime_sec, a.ctime_nsec), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_getattr(&fh, &a), NFS3_OK);
	assert_int_equal(a.mode, 0600);
	assert_int_equal(a.size, 10);
	assert_int_equal(a.mtime_sec, 1234567);
	/* a non-owner without write permission cannot truncate (the kernel says so) */
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_setattr_size(&fh, 0), NFS3ERR_ACCES);
	/* nor set times explicitly (owner only) */
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_setattr(&fh, -1, -1, false, 0, 0), NFS3ERR_PERM);
	/* the owner may truncate its own file even without write permission (knfsd owner override) */
	sh("chown 1000:1000 %s/sa && chmod 0444 %s/sa", exp_rw, exp_rw);
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_setattr_size(&fh, 3), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_getattr(&fh, &a), NFS3_OK);
	assert_int_equal(a.size, 3);
}

/* ---- delegation conflicts: nfs/common's hook (NFSv4 sets it; a stand-in here) ---- */

static struct {
	enum nfs_deleg_verdict verdict; /* what the stand-in answers */
	unsigned calls;                 /* recall() and recall_at() */
	enum nfs_deleg_access acc;      /* recall()'s last */
	struct nfs_fh key;              /* recall()'s last file */
	char name[BE_NAME_MAX + 1];     /* recall_at()'s last name */
	bool removed;                   /* recall_at()'s last removed */
	enum nfs_deleg_verdict dir_verdict; /* what dir_changed() answers */
	unsigned dir_calls;             /* dir_changed() */
	struct nfs_fh dir_key;          /* dir_changed()'s last directory */
	enum nfs_dir_change dir_ch;     /* dir_changed()'s last change */
	unsigned notes;                 /* dir_note() */
	enum nfs_dir_change note_kind;  /* dir_note()'s last kind */
	char note_name[BE_NAME_MAX + 1]; /* ... and name */
	char note_new[BE_NAME_MAX + 1];  /* ... new name (RENAME) */
	bool note_replaced;              /* ... replaced */
	struct nfs_fh note_key;          /* ... directory */
} dh;

static bool dh_any(void)
{
	return true;
}

static enum nfs_deleg_verdict dh_recall(const uint8_t *fkey, uint32_t fkey_len, enum nfs_deleg_access acc)
{
	assert_true(fkey_len <= sizeof(dh.key.data));
	dh.calls++;
	dh.acc = acc;
	dh.key.len = fkey_len;
	memcpy(dh.key.data, fkey, fkey_len);
	return dh.verdict;
}

static enum nfs_deleg_verdict dh_recall_at(const struct nfs_export *exp, const struct be_cred *cr,
					   const struct be_obj *dir, const char *name, bool removed)
{
	(void)exp, (void)cr, (void)dir;
	dh.calls++;
	dh.removed = removed;
	snprintf(dh.name, sizeof(dh.name), "%s", name);
	return dh.verdict;
}

static const struct nfs_deleg_hook dh_hook = { .any = dh_any, .recall = dh_recall, .recall_at = dh_recall_at };

static enum nfs_deleg_verdict dh_dir_changed(const uint8_t *fkey, uint32_t fkey_len, enum nfs_dir_change ch)
{
	assert_true(fkey_len <= sizeof(dh.dir_key.data));
	dh.dir_calls++;
	dh.dir_ch = ch;
	dh.dir_key.len = fkey_len;
	memcpy(dh.dir_key.data, fkey, fkey_len);
	return dh.dir_verdict;
}

static void dh_dir_note(const uint8_t *fkey, uint32_t fkey_len, const struct nfs_dir_note *n)
{
	assert_true(fkey_len <= sizeof(dh.note_key.data));
	dh.note_key.len = fkey_len;
	memcpy(dh.note_key.data, fkey, fkey_len);
	dh.notes++;
	dh.note_kind = n->kind;
	dh.note_replaced = n->replaced;
	snprintf(dh.note_name, sizeof(dh.note_name), "%s", n->name);
	snprintf(dh.note_new, sizeof(dh.note_new), "%s", n->kind == NFS_DIR_RENAME ? n->newname : "");
}

static const struct nfs_deleg_hook dh_dir_hook = {
	.any = dh_any, .recall = dh_recall, .recall_at = dh_recall_at, .dir_any = dh_any, .dir_changed = dh_dir_changed,
	.dir_note = dh_dir_note,
};

/* RFC 8881 §10.4.1: NFSv3 calls that conflict with a delegation ask the hook
 * (the file's handle, what they do) and answer NFS3ERR_JUKEBOX while it says
 * wait; without a hook (NFSv4 off) nothing is delegated. */
static void test_deleg_hook(void **state)
{
	const struct nfs_deleg_hook *was;
	uint32_t count, committed, n;
	uint8_t verf[8], buf[8];
	struct tc_fattr a;
	struct nfs_fh fh;
	bool eof;

	(void)state;
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "dh", NFS3_CREATE_UNCHECKED, 0644, NULL, &fh, &a), NFS3_OK);
	assert_false(nfs_deleg_any());
	assert_int_equal(nfs_deleg_recall(fh.data, fh.len, NFS_DELEG_WRITE), NFS_DELEG_CLEAR);
	was = nfs_deleg_hook_set(&dh_hook);
	assert_null(was);
	dh.verdict = NFS_DELEG_WAIT;
	as(ME, 700, 0, 0);
	assert_int_equal(do_write(&fh, 0, "x", 1, NFS3_FILE_SYNC, &count, &committed, verf), NFS3ERR_JUKEBOX);
	assert_int_equal(dh.acc, NFS_DELEG_WRITE);
	assert_int_equal(dh.key.len, fh.len);
	assert_memory_equal(dh.key.data, fh.data, fh.len);
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh, 0, sizeof(buf), buf, &n, &eof), NFS3ERR_JUKEBOX);
	assert_int_equal(dh.acc, NFS_DELEG_READ);
	as(ME, 700, 0, 0);
	assert_int_equal(do_setattr_size(&fh, 0), NFS3ERR_JUKEBOX);
	assert_int_equal(dh.acc, NFS_DELEG_WRITE);
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_remove, &root_fh, "dh"), NFS3ERR_JUKEBOX);
	assert_string_equal(dh.name, "dh");
	assert_true(dh.removed); /* REMOVE: the layouts too (RFC 8881 §12.5.5) */
	assert_int_equal(dh.calls, 4);
	/* clear: the same calls proceed */
	dh.verdict = NFS_DELEG_CLEAR;
	as(ME, 700, 0, 0);
	assert_int_equal(do_write(&fh, 0, "x", 1, NFS3_FILE_SYNC, &count, &committed, verf), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh, 0, sizeof(buf), buf, &n, &eof), NFS3_OK);
	assert_int_equal(n, 1);
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_remove, &root_fh, "dh"), NFS3_OK);
	assert_int_equal(dh.calls, 7);
	assert_ptr_equal(nfs_deleg_hook_set(was), &dh_hook);
}

/* RFC 8881 §10.9.1, §10.4.1, §12.5.5: an NFSv3 REMOVE or RMDIR asks the hook about the directory's
 * delegations first (JUKEBOX, nothing else asked, while they are out), then about the name: a file
 * removed with its layouts (removed), a directory without (it has none); once removed, the entry is
 * told (dir_note, §20.4.3). */
static void test_deleg_hook_dir(void **state)
{
	const struct nfs_deleg_hook *was;
	struct tc_fattr a;
	struct nfs_fh fh;

	(void)state;
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "dhd", NFS3_CREATE_UNCHECKED, 0644, NULL, &fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_mkdir(&root_fh, "dhdir", 0755, &fh), NFS3_OK);
	was = nfs_deleg_hook_set(&dh_dir_hook);
	memset(&dh, 0, sizeof(dh));
	dh.verdict = NFS_DELEG_CLEAR;
	dh.dir_verdict = NFS_DELEG_WAIT;
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_remove, &root_fh, "dhd"), NFS3ERR_JUKEBOX);
	assert_int_equal(dh.dir_calls, 1);
	assert_int_equal(dh.dir_ch, NFS_DIR_REMOVE);
	assert_int_equal(dh.notes, 0); /* nothing removed: nothing told */
	assert_int_equal(dh.dir_key.len, root_fh.len);
	assert_memory_equal(dh.dir_key.data, root_fh.data, root_fh.len);
	assert_int_equal(dh.calls, 0); /* the name waits for the directory */
	dh.dir_verdict = NFS_DELEG_CLEAR;
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_remove, &root_fh, "dhd"), NFS3_OK);
	assert_int_equal(dh.dir_calls, 2);
	assert_int_equal(dh.calls, 1);
	assert_string_equal(dh.name, "dhd");
	assert_true(dh.removed);
	/* RFC 8881 §20.4.3: once removed, the holders granted NOTIFY4_REMOVE_ENTRY are told of it */
	assert_int_equal(dh.notes, 1);
	assert_int_equal(dh.note_kind, NFS_DIR_REMOVE);
	assert_string_equal(dh.note_name, "dhd");
	assert_memory_equal(dh.note_key.data, root_fh.data, root_fh.len);
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_rmdir, &root_fh, "dhdir"), NFS3_OK);
	assert_int_equal(dh.dir_ch, NFS_DIR_REMOVE);
	assert_int_equal(dh.notes, 2);
	assert_string_equal(dh.note_name, "dhdir");
	assert_int_equal(dh.dir_calls, 3);
	assert_int_equal(dh.calls, 2); /* a delegated directory is recalled by its name too */
	assert_string_equal(dh.name, "dhdir");
	assert_false(dh.removed);
	assert_ptr_equal(nfs_deleg_hook_set(was), &dh_dir_hook);
}

/* NFSv3 RENAME (nfs3_proc_rename) of dir/from to dir/to: the nfsstat3. */
static uint32_t do_rename(const struct nfs_fh *fd, const char *from, const struct nfs_fh *td, const char *to)
{
	bool pre, post;
	uint32_t st;

	as(ME, 700, 0, 0);
	tc_put_fh(t, fd);
	tc_put_name(t, from);
	tc_put_fh(t, td);
	tc_put_name(t, to);
	run_ok(nfs3_proc_rename);
	st = tc_u32(t);
	tc_skip_wcc(t, &pre, &post);
	tc_skip_wcc(t, &pre, &post);
	return st;
}

/* RFC 8881 §18.26.4: an NFSv3 RENAME within a directory is one RENAME change (the names, whether it
 * replaced an entry); across two, a REMOVE from the source and an ADD to the target. */
static void test_deleg_hook_rename(void **state)
{
	const struct nfs_deleg_hook *was;
	struct tc_fattr a;
	struct nfs_fh fh, sub;

	(void)state;
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "rn1", NFS3_CREATE_UNCHECKED, 0644, NULL, &fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "rn3", NFS3_CREATE_UNCHECKED, 0644, NULL, &fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_mkdir(&root_fh, "rnd", 0755, &sub), NFS3_OK);
	was = nfs_deleg_hook_set(&dh_dir_hook);
	memset(&dh, 0, sizeof(dh));
	assert_int_equal(do_rename(&root_fh, "rn1", &root_fh, "rn2"), NFS3_OK);
	assert_int_equal(dh.dir_ch, NFS_DIR_RENAME);
	assert_int_equal(dh.notes, 1);
	assert_int_equal(dh.note_kind, NFS_DIR_RENAME);
	assert_string_equal(dh.note_name, "rn1");
	assert_string_equal(dh.note_new, "rn2");
	assert_false(dh.note_replaced);
	assert_int_equal(do_rename(&root_fh, "rn2", &root_fh, "rn3"), NFS3_OK); /* over rn3 */
	assert_int_equal(dh.notes, 2);
	assert_true(dh.note_replaced);
	assert_int_equal(do_rename(&root_fh, "rn3", &root_fh, "rn3"), NFS3_OK); /* §18.26.3: nothing done */
	assert_int_equal(dh.notes, 2);                                           /* ... nothing told */
	assert_int_equal(do_rename(&root_fh, "rn3", &sub, "rn4"), NFS3_OK);
	assert_int_equal(dh.dir_ch, NFS_DIR_ADD); /* the target's, asked last */
	assert_int_equal(dh.notes, 4);            /* REMOVE rn3 from the root, then ADD rn4 to rnd */
	assert_int_equal(dh.note_kind, NFS_DIR_ADD);
	assert_string_equal(dh.note_name, "rn4");
	assert_false(dh.note_replaced);
	assert_int_equal(dh.note_key.len, sub.len);
	assert_memory_equal(dh.note_key.data, sub.data, sub.len);
	dh.dir_verdict = NFS_DELEG_WAIT; /* a delegation out: JUKEBOX, nothing renamed or told */
	assert_int_equal(do_rename(&sub, "rn4", &root_fh, "rn5"), NFS3ERR_JUKEBOX);
	assert_int_equal(dh.dir_ch, NFS_DIR_REMOVE);
	assert_int_equal(dh.notes, 4);
	assert_ptr_equal(nfs_deleg_hook_set(was), &dh_dir_hook);
}

/* ---- directory operations ---- */

/* MKDIR d1, d2 (EXIST again), CREATE d1/x (its handle into *fh) and d2/y; RMDIR and REMOVE of the
 * wrong kind or of nothing. */
static void dirops_make(struct nfs_fh *d1, struct nfs_fh *d2, struct nfs_fh *fh)
{
	struct tc_fattr a;
	struct nfs_fh fh2;

	as(ME, 700, 0, 0);
	assert_int_equal(do_mkdir(&root_fh, "d1", 0755, d1), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_mkdir(&root_fh, "d1", 0755, &fh2), NFS3ERR_EXIST);
	as(ME, 700, 0, 0);
	assert_int_equal(do_mkdir(&root_fh, "d2", 0755, d2), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(d1, "x", NFS3_CREATE_GUARDED, 0644, NULL, fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(d2, "y", NFS3_CREATE_GUARDED, 0644, NULL, &fh2, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_rmdir, &root_fh, "d1"), NFS3ERR_NOTEMPTY);
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_remove, &root_fh, "d1"), NFS3ERR_ISDIR);
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_rmdir, d1, "x"), NFS3ERR_NOTDIR);
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_remove, &root_fh, "nothere"), NFS3ERR_NOENT);
}

/* RENAME d1/x over d2/y (fh, the same file, now d2/y), RMDIR d1, RENAME to another export: XDEV. */
static void dirops_rename(const struct nfs_fh *d1, const struct nfs_fh *d2, const struct nfs_fh *fh)
{
	struct tc_fattr a;
	struct nfs_fh fh2;
	bool pre, post;

	as(ME, 700, 0, 0);
	tc_put_fh(t, d1);
	tc_put_name(t, "x");
	tc_put_fh(t, d2);
	tc_put_name(t, "y");
	run_ok(nfs3_proc_rename);
	assert_int_equal(tc_u32(t), NFS3_OK);
	tc_skip_wcc(t, &pre, &post);
	assert_true(pre && post);
	tc_skip_wcc(t, &pre, &post);
	assert_true(pre && post);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(d2, "y", &fh2, &a), NFS3_OK);
	assert_memory_equal(fh2.data, fh->data, fh->len); /* the same file, moved */
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_rmdir, &root_fh, "d1"), NFS3_OK);
	as(ME, 700, 0, 0);
	tc_put_fh(t, d2);
	tc_put_name(t, "y");
	tc_put_fh(t, &ro_fh);
	tc_put_name(t, "y");
	run_ok(nfs3_proc_rename);
	assert_int_equal(tc_u32(t), NFS3ERR_XDEV);
}

/* LINK of the file fh (nlink 2) and of the directory d2 (ISDIR). */
static void dirops_link(const struct nfs_fh *d2, const struct nfs_fh *fh)
{
	struct tc_fattr a;

	as(ME, 700, 0, 0);
	tc_put_fh(t, fh);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "hard");
	run_ok(nfs3_proc_link);
	assert_int_equal(tc_u32(t), NFS3_OK);
	assert_true(tc_post_op_attr(t, &a));
	assert_int_equal(a.nlink, 2);
	as(ME, 700, 0, 0);
	tc_put_fh(t, d2);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "dirlink");
	run_ok(nfs3_proc_link);
	assert_int_equal(tc_u32(t), NFS3ERR_ISDIR);
}

/* SYMLINK, READLINK of it and of the regular file fh (INVAL). */
static void dirops_symlink(const struct nfs_fh *fh)
{
	struct nfs_fh fh2;
	const uint8_t *p;
	uint32_t len;

	as(ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "sym");
	tc_put_sattr_mode(t, -1);
	tc_put_name(t, "../somewhere/else");
	run_ok(nfs3_proc_symlink);
	assert_int_equal(tc_u32(t), NFS3_OK);
	assert_true(tc_u32(t));
	tc_fh(t, &fh2);
	as(ME, 700, 0, 0);
	tc_put_fh(t, &fh2);
	run_ok(nfs3_proc_readlink);
	assert_int_equal(tc_u32(t), NFS3_OK);
	tc_post_op_attr(t, NULL);
	p = tc_opaque(t, &len);
	assert_int_equal(len, strlen("../somewhere/else"));
	assert_memory_equal(p, "../somewhere/else", len);
	as(ME, 700, 0, 0);
	tc_put_fh(t, fh);
	run_ok(nfs3_proc_readlink);
	assert_int_equal(tc_u32(t), NFS3ERR_INVAL); /* not a symlink */
}

/* MKNOD of a character device 1,3 named "null" in dir as uid: its status. */
static uint32_t mknod_null(const struct nfs_fh *dir, uint32_t uid)
{
	as(ME, 700, uid, uid);
	tc_put_fh(t, dir);
	tc_put_name(t, "null");
	xdr_enc_u32(&t->req, NF3CHR);
	tc_put_sattr_mode(t, 0600);
	xdr_enc_u32(&t->req, 1);
	xdr_enc_u32(&t->req, 3);
	run_ok(nfs3_proc_mknod);
	return tc_u32(t);
}

/* MKNOD: FIFO yes, REG is BADTYPE, a device as root yes, as a user PERM; READ of a FIFO or directory
 * is refused without opening it (a FIFO open would block). */
static void dirops_mknod(void)
{
	struct tc_fattr a;
	struct nfs_fh d, fh2;
	uint32_t st, n;
	bool eof;

	as(ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "fifo");
	xdr_enc_u32(&t->req, NF3FIFO);
	tc_put_sattr_mode(t, 0600);
	run_ok(nfs3_proc_mknod);
	assert_int_equal(tc_u32(t), NFS3_OK);
	assert_true(tc_u32(t));
	tc_fh(t, &fh2);
	assert_true(tc_post_op_attr(t, &a));
	assert_int_equal(a.type, NF3FIFO);
	as(ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	tc_put_name(t, "reg");
	xdr_enc_u32(&t->req, NF3REG);
	run_ok(nfs3_proc_mknod);
	assert_int_equal(tc_u32(t), NFS3ERR_BADTYPE);
	sh("mkdir -p %s/pub && chmod 0777 %s/pub", exp_rw, exp_rw);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "pub", &d, &a), NFS3_OK);
	assert_int_equal(mknod_null(&d, 1000), NFS3ERR_PERM);
	st = mknod_null(&d, 0);
	assert_true(st == NFS3_OK || st == NFS3ERR_PERM); /* PERM if this container forbids mknod */
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "fifo", &fh2, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh2, 0, 10, NULL, &n, &eof), NFS3ERR_INVAL);
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&root_fh, 0, 10, NULL, &n, &eof), NFS3ERR_ISDIR);
}

static void test_dirops(void **state)
{
	struct nfs_fh d1, d2, fh;

	(void)state;
	dirops_make(&d1, &d2, &fh);
	dirops_rename(&d1, &d2, &fh);
	dirops_link(&d2, &fh);
	dirops_symlink(&fh);
	dirops_mknod();
}

/* ---- handles: stale, forged, unlinked while cached ---- */

static void test_stale_and_forged(void **state)
{
	struct tc_fattr a;
	struct nfs_fh fh, bad;
	char buf[16];
	uint32_t n;
	bool eof;

	(void)state;
	sh("echo data > %s/gone", exp_rw);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "gone", &fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh, 0, 4, buf, &n, &eof), NFS3_OK); /* now in the open-file cache */
	sh("rm %s/gone", exp_rw);
	as(ME, 700, 0, 0);
	assert_int_equal(do_read(&fh, 0, 4, buf, &n, &eof), NFS3ERR_STALE);
	as(ME, 700, 0, 0);
	assert_int_equal(do_getattr(&fh, &a), NFS3ERR_STALE);
	bad = root_fh;
	bad.data[bad.len - 1] ^= 1;
	as(ME, 700, 0, 0);
	assert_int_equal(do_getattr(&bad, &a), NFS3ERR_BADHANDLE);
	bad = root_fh;
	bad.len -= 1;
	as(ME, 700, 0, 0);
	assert_int_equal(do_getattr(&bad, &a), NFS3ERR_BADHANDLE);
}

/* ---- read-only export, clients not admitted ---- */

static void test_ro_and_admission(void **state)
{
	struct tc_fattr a;
	struct nfs_fh fh;
	uint8_t verf[8];
	uint32_t count, committed, got;

	(void)state;
	sh("echo ro > %s/file", exp_ro);
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&ro_fh, "new", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3ERR_ROFS);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&ro_fh, "file", &fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_write(&fh, 0, "x", 1, NFS3_FILE_SYNC, &count, &committed, verf), NFS3ERR_ROFS);
	as(ME, 700, 0, 0);
	assert_int_equal(do_setattr(&fh, 0600, -1, false, 0, 0), NFS3ERR_ROFS);
	as(ME, 700, 0, 0);
	assert_int_equal(do_dirop(nfs3_proc_remove, &ro_fh, "file"), NFS3ERR_ROFS);
	as(ME, 700, 0, 0);
	assert_int_equal(do_access(&fh, 0x3f, &got), NFS3_OK);
	assert_int_equal(got & (ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE), 0);
	assert_true(got & ACCESS3_READ);
	/* a client outside the export's specs is refused on every call, not just at MNT */
	as(STRANGER, 700, 0, 0);
	assert_int_equal(do_getattr(&root_fh, &a), NFS3ERR_ACCES);
	as(SECURE, 2000, 0, 0);
	assert_int_equal(do_getattr(&root_fh, &a), NFS3ERR_ACCES);
	as(SECURE, 1000, 0, 0);
	assert_int_equal(do_getattr(&root_fh, &a), NFS3_OK);
}

/* exports(5) "secure" (the default): over TCP the source port decides; over
 * RPC-over-RDMA ports mean no privilege and every call is secure, as in
 * knfsd, so the Linux client's proto=rdma mount of a default export works. */
static void test_secure_over_rdma(void **state)
{
	struct rpc_conn conn;
	struct sockaddr_in *sin = (struct sockaddr_in *)&conn.peer;
	struct tc_fattr a;
	struct nfs_fh fh;

	(void)state;
	memset(&conn, 0, sizeof(conn));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(1023);
	assert_true(nfs_conn_secure(&conn));
	sin->sin_port = htons(1024);
	assert_false(nfs_conn_secure(&conn));
	conn.no_port_privilege = true; /* the RDMA transport's connection */
	assert_true(nfs_conn_secure(&conn));
	sin->sin_port = htons(40000);
	assert_true(nfs_conn_secure(&conn));
	conn.no_port_privilege = false;
	assert_false(nfs_conn_secure(&conn));
	conn.peer.ss_family = AF_UNIX; /* local */
	assert_true(nfs_conn_secure(&conn));

	/* The same client on the secure export: refused over TCP from an
	 * unprivileged port, admitted over RDMA from any port (MNT and NFS). */
	assert_int_equal(do_mnt(SECURE, 40000, exp_rw, &fh), MNT3ERR_ACCES);
	as(SECURE, 40000, 0, 0);
	assert_int_equal(do_getattr(&root_fh, &a), NFS3ERR_ACCES);
	over_rdma = true;
	assert_int_equal(do_mnt(SECURE, 40000, exp_rw, &fh), MNT3_OK);
	assert_memory_equal(fh.data, root_fh.data, fh.len);
	as(SECURE, 40000, 0, 0);
	assert_int_equal(do_getattr(&root_fh, &a), NFS3_OK);
	as(SECURE, 40000, 0, 0);
	assert_int_equal(do_lookup(&root_fh, ".", &fh, &a), NFS3_OK);
	/* the other admission rules still apply over RDMA */
	as(STRANGER, 40000, 0, 0);
	assert_int_equal(do_getattr(&root_fh, &a), NFS3ERR_ACCES);
	over_rdma = false;
	/* and UMNT the RDMA client's mount */
	as(SECURE, 900, 0, 0);
	tc_put_name(t, exp_rw);
	run_ok(mount3_proc_umnt);
}

/* ---- identity: the kernel checks permissions as the caller ---- */

static uint32_t fsuid_now(void)
{
	return (uint32_t)setfsuid((uid_t)-1);
}

static void test_identity(void **state)
{
	struct tc_fattr a;
	struct nfs_fh pub, grp, fh;
	uint32_t got;

	(void)state;
	sh("mkdir -p %s/pub %s/grp && chmod 0777 %s/pub && chown 0:5000 %s/grp && chmod 0770 %s/grp",
	   exp_rw, exp_rw, exp_rw, exp_rw, exp_rw);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "pub", &pub, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "grp", &grp, &a), NFS3_OK);

	/* a user cannot create in root's 0755 directory */
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_create(&root_fh, "u", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3ERR_ACCES);
	assert_int_equal(fsuid_now(), 0); /* identity restored after the call */
	/* ... but can in a 0777 one, and owns the result */
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_create(&pub, "u", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3_OK);
	assert_int_equal(a.uid, 1000);
	assert_int_equal(a.gid, 1000);
	/* root_squash: root becomes 65534 */
	as(SQUASH, 700, 0, 0);
	assert_int_equal(do_create(&pub, "sq", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3_OK);
	assert_int_equal(a.uid, 65534);
	assert_int_equal(a.gid, 65534);
	/* all_squash with anonuid/anongid */
	as(ALLSQ, 700, 1000, 1000);
	assert_int_equal(do_create(&pub, "all", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3_OK);
	assert_int_equal(a.uid, 4242);
	assert_int_equal(a.gid, 4242);
	/* AUTH_NONE: anonymous */
	as(ME, 700, UINT32_MAX, 0);
	assert_int_equal(do_create(&pub, "anon", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3_OK);
	assert_int_equal(a.uid, 65534);
	/* ... where sec= allows it: SQUASH has the default sec=sys */
	as(SQUASH, 700, UINT32_MAX, 0);
	assert_int_equal(do_create(&pub, "anon2", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3ERR_ACCES);
	/* supplementary groups are applied (per thread) */
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_create(&grp, "g", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3ERR_ACCES);
	as(ME, 700, 1000, 1000);
	t->c.cred.ngroups = 2;
	t->c.cred.groups[0] = 1000;
	t->c.cred.groups[1] = 5000;
	assert_int_equal(do_create(&grp, "g", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3_OK);
	assert_int_equal(fsuid_now(), 0);

	/* ACCESS: root's 0600 file: nothing for uid 1000, read+modify for root */
	sh("echo s > %s/pub/secret && chmod 0600 %s/pub/secret", exp_rw, exp_rw);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&pub, "secret", &fh, &a), NFS3_OK);
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_access(&fh, ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXECUTE, &got), NFS3_OK);
	assert_int_equal(got, 0);
	as(ME, 700, 0, 0);
	assert_int_equal(do_access(&fh, ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXECUTE, &got), NFS3_OK);
	assert_int_equal(got, ACCESS3_READ | ACCESS3_MODIFY);
	/* directories: list and search, not modify, for a user in root's 0755 directory */
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_access(&root_fh, 0x3f, &got), NFS3_OK);
	assert_int_equal(got, ACCESS3_READ | ACCESS3_LOOKUP);
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_access(&pub, 0x3f, &got), NFS3_OK);
	assert_int_equal(got, ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE);
	/* and READ by uid 1000 is refused */
	uint32_t n;
	bool eof;
	as(ME, 700, 1000, 1000);
	assert_int_equal(do_read(&fh, 0, 4, NULL, &n, &eof), NFS3ERR_ACCES);
	as(SQUASH, 700, 0, 0); /* squashed root is not root */
	assert_int_equal(do_read(&fh, 0, 4, NULL, &n, &eof), NFS3ERR_ACCES);
}

/* CAP_SYS_RESOURCE in this thread's effective (or, with permitted, permitted) set */
static bool thread_cap_sys_resource(bool permitted)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	const unsigned i = CAP_TO_INDEX(CAP_SYS_RESOURCE);

	assert_int_equal(syscall(SYS_capget, &hdr, data), 0);
	return (permitted ? data[i].permitted : data[i].effective) & CAP_TO_MASK(CAP_SYS_RESOURCE);
}

static bool thread_has_sys_resource(void)
{
	return thread_cap_sys_resource(false);
}

/* A non-root caller loses CAP_SYS_RESOURCE (quotas, reserved blocks apply), root keeps it;
 * restore gives it back. Squash maps and groups are applied as configured. */
static void test_identity_apply_restore(void **state)
{
	struct nfs_identity id = { .uid = 1000, .gid = 1000, .ngroups = 1, .groups = { 5000 } };
	struct export_opts o = { .squash = EXPORT_ROOT_SQUASH, .anonuid = 65534, .anongid = 65534 };
	struct rpc_cred cred = { .flavor = RPC_AUTH_SYS, .uid = 0, .gid = 0, .ngroups = 2, .groups = { 0, 7 } };
	gid_t g[4];

	/* containers may not grant CAP_SYS_RESOURCE at all: then only the rest is checked */
	bool have = thread_cap_sys_resource(true);

	(void)state;
	if (have)
		assert_true(thread_has_sys_resource());
	else
		fprintf(stderr, "note: no CAP_SYS_RESOURCE here; its drop/restore is not exercised\n");
	assert_int_equal(nfs_identity_apply(&id), 0);
	assert_int_equal(fsuid_now(), 1000);
	assert_false(thread_has_sys_resource());
	assert_int_equal(getgroups(4, g), 1);
	assert_int_equal(g[0], 5000);
	nfs_identity_restore();
	assert_int_equal(fsuid_now(), 0);
	assert_int_equal(thread_has_sys_resource(), have);
	assert_int_equal(getgroups(4, g), 0);
	id.uid = 0;
	assert_int_equal(nfs_identity_apply(&id), 0);
	assert_int_equal(thread_has_sys_resource(), have);
	nfs_identity_restore();

	nfs_identity_map(&cred, &o, &id); /* root_squash: uid, gid and group 0 become anonymous */
	assert_int_equal(id.uid, 65534);
	assert_int_equal(id.gid, 65534);
	assert_int_equal(id.ngroups, 2);
	assert_int_equal(id.groups[0], 65534);
	assert_int_equal(id.groups[1], 7);
	o.squash = EXPORT_NO_ROOT_SQUASH;
	nfs_identity_map(&cred, &o, &id);
	assert_int_equal(id.uid, 0);
	o.squash = EXPORT_ALL_SQUASH;
	cred.uid = 1000;
	nfs_identity_map(&cred, &o, &id);
	assert_int_equal(id.uid, 65534);
	assert_int_equal(id.ngroups, 0);
	cred.flavor = RPC_AUTH_NONE;
	o.squash = EXPORT_NO_ROOT_SQUASH;
	nfs_identity_map(&cred, &o, &id);
	assert_int_equal(id.uid, 65534);
}

/* Identity is per worker thread: concurrent calls with different users never
 * see each other's credentials, and the calling thread is back to root after. */
#define ID_THREADS 4
#define ID_ITERS 40

struct id_worker {
	pthread_t tid;
	unsigned idx;
	struct nfs_fh dir;
	unsigned wrong;
};

static void *id_worker_run(void *arg)
{
	struct id_worker *w = arg;
	struct tcall *mine = tc_new();
	uint32_t uid = 2000 + w->idx;

	for (unsigned i = 0; i < ID_ITERS; i++) {
		char name[32];
		struct nfs_fh fh;
		uint32_t st;

		snprintf(name, sizeof(name), "t%u_%u", w->idx, i);
		tc_reset(mine, ME, 700, uid, uid);
		mine->c.cred.ngroups = 1;
		mine->c.cred.groups[0] = 7000 + w->idx;
		tc_put_fh(mine, &w->dir);
		tc_put_name(mine, name);
		xdr_enc_u32(&mine->req, NFS3_CREATE_GUARDED);
		tc_put_sattr_mode(mine, 0644);
		if (tc_run(mine, nfs3_proc_create) != RPC_PROC_OK)
			w->wrong++;
		st = tc_u32(mine);
		if (st != NFS3_OK) {
			w->wrong++;
			continue;
		}
		tc_u32(mine);
		tc_fh(mine, &fh);
		struct tc_fattr a;
		if (!tc_post_op_attr(mine, &a) || a.uid != uid || a.gid != uid)
			w->wrong++;
		if ((uint32_t)setfsuid((uid_t)-1) != 0)
			w->wrong++;
	}
	tc_free(mine);
	return NULL;
}

static void test_identity_threads(void **state)
{
	struct id_worker w[ID_THREADS];
	struct tc_fattr a;
	struct nfs_fh pub;

	(void)state;
	sh("mkdir -p %s/mt && chmod 0777 %s/mt", exp_rw, exp_rw);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "mt", &pub, &a), NFS3_OK);
	for (unsigned i = 0; i < ID_THREADS; i++) {
		w[i] = (struct id_worker){ .idx = i, .dir = pub };
		assert_int_equal(pthread_create(&w[i].tid, NULL, id_worker_run, &w[i]), 0);
	}
	for (unsigned i = 0; i < ID_THREADS; i++) {
		pthread_join(w[i].tid, NULL);
		assert_int_equal(w[i].wrong, 0);
	}
	assert_int_equal(fsuid_now(), 0);
	/* the process' supplementary groups were never touched by the workers (raw setgroups) */
	gid_t groups[64];
	int n = getgroups(64, groups);
	for (int i = 0; i < n; i++)
		assert_true(groups[i] < 7000 || groups[i] >= 7000 + ID_THREADS);
}

/* The open-file cache stays correct past its capacity and under concurrent use. */
static void test_fcache_many_files(void **state)
{
	struct nfs_fh fh[600];
	struct tc_fattr a;
	struct nfs_fh d;
	char name[32], buf[32];
	uint32_t n;
	bool eof;

	(void)state;
	sh("mkdir -p %s/many && cd %s/many && for i in $(seq 0 599); do echo file$i > f$i; done", exp_rw, exp_rw);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "many", &d, &a), NFS3_OK);
	for (int round = 0; round < 2; round++) {
		for (unsigned i = 0; i < 600; i++) {
			snprintf(name, sizeof(name), "f%u", i);
			if (round == 0) {
				as(ME, 700, 0, 0);
				assert_int_equal(do_lookup(&d, name, &fh[i], &a), NFS3_OK);
			}
			as(ME, 700, 0, 0);
			assert_int_equal(do_read(&fh[i], 0, sizeof(buf), buf, &n, &eof), NFS3_OK);
			snprintf(name, sizeof(name), "file%u\n", i);
			assert_int_equal(n, strlen(name));
			assert_memory_equal(buf, name, n);
		}
	}
}

/* ---- READDIR / READDIRPLUS ---- */

struct dirpage {
	uint32_t status;
	unsigned n;
	bool eof;
	uint64_t last_cookie;
	uint8_t verf[8];
	size_t reply_bytes;
};

/* One READDIR(PLUS) call; calls fn(name) for each entry. */
static struct dirpage readdir_page(const struct nfs_fh *dir, bool plus, uint64_t cookie, const uint8_t verf[8],
				   uint32_t dircount, uint32_t maxcount, void (*fn)(const char *, bool, bool))
{
	struct dirpage pg = { 0 };

	as(ME, 700, 0, 0);
	tc_put_fh(t, dir);
	xdr_enc_u64(&t->req, cookie);
	xdr_enc_fixed(&t->req, verf, 8);
	if (plus)
		xdr_enc_u32(&t->req, dircount);
	xdr_enc_u32(&t->req, maxcount);
	run_ok(plus ? nfs3_proc_readdirplus : nfs3_proc_readdir);
	pg.reply_bytes = tc_remaining(t);
	pg.status = tc_u32(t);
	assert_true(tc_post_op_attr(t, NULL));
	if (pg.status != NFS3_OK)
		return pg;
	assert_true(xdr_dec_fixed(&t->res, pg.verf, 8));
	while (tc_u32(t)) {
		char name[NAME_MAX + 1];
		uint32_t len;
		const uint8_t *p;
		bool has_attr = false, has_fh = false;

		tc_u64(t);
		p = tc_opaque(t, &len);
		assert_true(len <= NAME_MAX);
		memcpy(name, p, len);
		name[len] = '\0';
		pg.last_cookie = tc_u64(t);
		if (plus) {
			has_attr = tc_post_op_attr(t, NULL);
			has_fh = tc_u32(t);
			if (has_fh) {
				struct nfs_fh fh;
				tc_fh(t, &fh);
			}
		}
		pg.n++;
		if (fn)
			fn(name, has_attr, has_fh);
	}
	pg.eof = tc_u32(t);
	assert_int_equal(tc_remaining(t), 0);
	return pg;
}

#define NFILES 10000
static unsigned char seen[NFILES + 1000];
static unsigned dup_count, plus_missing;

static void mark_seen(const char *name, bool has_attr, bool has_fh)
{
	unsigned i;

	if (sscanf(name, "f%u", &i) == 1 && i < sizeof(seen)) {
		if (seen[i]++)
			dup_count++;
	} else if (name[0] == 'n') {
		/* added during the listing: may or may not be seen */
	}
	(void)has_attr;
	(void)has_fh;
}

static void mark_seen_plus(const char *name, bool has_attr, bool has_fh)
{
	unsigned i;

	mark_seen(name, has_attr, has_fh);
	if (sscanf(name, "f%u", &i) == 1 && (!has_attr || !has_fh))
		plus_missing++;
}

static void list_big(const struct nfs_fh *dir, bool plus, bool modify)
{
	uint8_t verf[8] = { 0 };
	uint64_t cookie = 0;
	unsigned pages = 0;
	struct dirpage pg;

	memset(seen, 0, sizeof(seen));
	dup_count = plus_missing = 0;
	do {
		pg = readdir_page(dir, plus, cookie, verf, 4096, plus ? 16384 : 4096,
				  plus ? mark_seen_plus : mark_seen);
		assert_int_equal(pg.status, NFS3_OK);
		/* count/maxcount honoured exactly (the reply's READDIR3res is within it) */
		assert_true(pg.reply_bytes <= (plus ? 16384u : 4096u));
		assert_true(pg.n > 0 || pg.eof);
		if (pages > 0)
			assert_memory_equal(verf, pg.verf, 8); /* constant for the directory */
		memcpy(verf, pg.verf, 8);
		cookie = pg.last_cookie;
		if (modify && pages == 2) {
			/* while listing: delete every 10th file, add 500 new ones */
			sh("cd %s/big && for i in $(seq 0 10 %u); do rm -f f$i; done && "
			   "for i in $(seq 1 500); do : > n$i; done", exp_rw, NFILES - 1);
		}
		pages++;
		assert_true(pages < 5000); /* never loops */
	} while (!pg.eof);
	assert_int_equal(dup_count, 0);
	for (unsigned i = 0; i < NFILES; i++)
		if (!modify || i % 10)
			assert_int_equal(seen[i], 1); /* every file never deleted is listed exactly once */
	if (plus)
		assert_int_equal(plus_missing, 0);
}

static void test_readdir_large(void **state)
{
	struct tc_fattr a;
	struct nfs_fh big;

	(void)state;
	sh("mkdir -p %s/big && cd %s/big && seq -f 'f%%.0f' 0 %u | xargs touch", exp_rw, exp_rw, NFILES - 1);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "big", &big, &a), NFS3_OK);
	list_big(&big, false, false);
	list_big(&big, true, false);
	list_big(&big, false, true);
	/* restore the deleted ones, then READDIRPLUS while modified */
	sh("cd %s/big && rm -f n* && seq -f 'f%%.0f' 0 %u | xargs touch", exp_rw, NFILES - 1);
	list_big(&big, true, true);
}

static void test_readdir_edges(void **state)
{
	struct tc_fattr a;
	struct nfs_fh d;
	uint8_t zero[8] = { 0 }, wrong[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct dirpage pg;

	(void)state;
	sh("mkdir -p %s/sdir && touch %s/sdir/a %s/sdir/b", exp_rw, exp_rw, exp_rw);
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&root_fh, "sdir", &d, &a), NFS3_OK);
	pg = readdir_page(&d, false, 0, zero, 0, 4096, NULL);
	assert_int_equal(pg.status, NFS3_OK);
	assert_int_equal(pg.n, 4); /* . .. a b */
	assert_true(pg.eof);
	/* TOOSMALL when not even one entry fits */
	pg = readdir_page(&d, false, 0, zero, 0, 120, NULL);
	assert_int_equal(pg.status, NFS3ERR_TOOSMALL);
	pg = readdir_page(&d, true, 0, zero, 100, 200, NULL);
	assert_int_equal(pg.status, NFS3ERR_TOOSMALL);
	/* exactly one entry fits: 4+88+8 + 4+8+4+4+8 + 4+4 = 136 */
	pg = readdir_page(&d, false, 0, zero, 0, 136, NULL);
	assert_int_equal(pg.status, NFS3_OK);
	assert_int_equal(pg.n, 1);
	assert_false(pg.eof);
	/* a cookie with a verifier that is not the directory's */
	pg = readdir_page(&d, false, pg.last_cookie, wrong, 0, 4096, NULL);
	assert_int_equal(pg.status, NFS3ERR_BAD_COOKIE);
	/* READDIR of a file */
	as(ME, 700, 0, 0);
	assert_int_equal(do_lookup(&d, "a", &d, &a), NFS3_OK);
	pg = readdir_page(&d, false, 0, zero, 0, 4096, NULL);
	assert_int_equal(pg.status, NFS3ERR_NOTDIR);
}

/* ---- FSINFO / FSSTAT / PATHCONF ---- */

static void test_fs_info(void **state)
{
	(void)state;
	as(ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	run_ok(nfs3_proc_fsinfo);
	assert_int_equal(tc_u32(t), NFS3_OK);
	assert_true(tc_post_op_attr(t, NULL));
	assert_int_equal(tc_u32(t), 1u << 20); /* rtmax */
	assert_int_equal(tc_u32(t), 1u << 20); /* rtpref */
	tc_u32(t);
	assert_int_equal(tc_u32(t), 1u << 20); /* wtmax */
	assert_int_equal(tc_u32(t), 1u << 20); /* wtpref */
	tc_u32(t);
	assert_int_equal(tc_u32(t), 64u << 10); /* dtpref */
	assert_true(tc_u64(t) > (1ull << 40));  /* maxfilesize */
	assert_int_equal(tc_u32(t), 0);         /* time_delta 0.000000001 */
	assert_int_equal(tc_u32(t), 1);
	assert_int_equal(tc_u32(t), FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME);
	assert_int_equal(tc_remaining(t), 0);

	as(ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	run_ok(nfs3_proc_fsstat);
	assert_int_equal(tc_u32(t), NFS3_OK);
	assert_true(tc_post_op_attr(t, NULL));
	uint64_t tbytes = tc_u64(t), fbytes = tc_u64(t), abytes = tc_u64(t);
	assert_true(tbytes > 0 && fbytes <= tbytes && abytes <= fbytes);
	tc_u64(t);
	tc_u64(t);
	tc_u64(t);
	tc_u32(t);
	assert_int_equal(tc_remaining(t), 0);

	as(ME, 700, 0, 0);
	tc_put_fh(t, &root_fh);
	run_ok(nfs3_proc_pathconf);
	assert_int_equal(tc_u32(t), NFS3_OK);
	assert_true(tc_post_op_attr(t, NULL));
	assert_true(tc_u32(t) > 0);            /* linkmax */
	assert_int_equal(tc_u32(t), 255);      /* name_max */
	assert_true(tc_u32(t));                /* no_trunc */
	assert_true(tc_u32(t));                /* chown_restricted */
	assert_false(tc_u32(t));               /* case_insensitive */
	assert_true(tc_u32(t));                /* case_preserving */

	/* Under krb5i/krb5p READ data stays inline (RFC 2203 §5.3.2.2, §5.3.2.3): rtmax and
	 * rtpref are what the connection's largest reply carries (whole pages), wtmax stays. */
	for (int wrap = 0; wrap < 2; wrap++) {
		as(ME, 700, 0, 0);
		t->conn.reply_max = 256u << 10; /* TCP's reply buffer */
		t->c.gss.wrap = wrap;
		tc_put_fh(t, &root_fh);
		run_ok(nfs3_proc_fsinfo);
		assert_int_equal(tc_u32(t), NFS3_OK);
		assert_true(tc_post_op_attr(t, NULL));
		uint32_t want = wrap ? (uint32_t)(((256u << 10) - 1024 - RPC_GSS_REPLY_SLACK) & ~4095u) : 1u << 20;
		assert_int_equal(tc_u32(t), want); /* rtmax: 252 KiB wrapped */
		assert_int_equal(tc_u32(t), want); /* rtpref */
		tc_u32(t);
		assert_int_equal(tc_u32(t), 1u << 20); /* wtmax */
	}
}

/* ---- export table replaced at runtime ---- */

static void test_exports_replace(void **state)
{
	struct tc_fattr a;
	struct nfs_fh fh;
	char text[1024];

	(void)state;
	snprintf(text, sizeof(text), "%s " ME "(ro,insecure)\n", exp_ro);
	reload_exports(text);
	assert_int_equal(nfs_exports_count(), 1);
	as(ME, 700, 0, 0);
	assert_int_equal(do_getattr(&root_fh, &a), NFS3ERR_STALE); /* its export is gone */
	assert_int_equal(do_mnt(ME, 700, exp_rw, &fh), MNT3ERR_NOENT);
	/* back: handles are valid again, options changed apply to the next call */
	snprintf(text, sizeof(text), "%s " ME "(ro,insecure)\n%s " ME "(ro,no_root_squash,insecure)\n",
		 exp_rw, exp_ro);
	reload_exports(text);
	as(ME, 700, 0, 0);
	assert_int_equal(do_getattr(&root_fh, &a), NFS3_OK);
	as(ME, 700, 0, 0);
	assert_int_equal(do_create(&root_fh, "nope", NFS3_CREATE_GUARDED, 0644, NULL, &fh, &a), NFS3ERR_ROFS);
	standard_exports_text(text, sizeof(text));
	reload_exports(text);
	assert_int_equal(nfs_exports_count(), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mount),
		cmocka_unit_test(test_getattr_lookup),
		cmocka_unit_test(test_no_crossmnt),
		cmocka_unit_test(test_create_write_read),
		cmocka_unit_test(test_read_piped),
		cmocka_unit_test(test_read_gss_wrapped),
		cmocka_unit_test(test_read_without_payload_area),
		cmocka_unit_test(test_ddp_read_chunks),
		cmocka_unit_test(test_exclusive_create),
		cmocka_unit_test(test_setattr),
		cmocka_unit_test(test_deleg_hook),
		cmocka_unit_test(test_deleg_hook_dir),
		cmocka_unit_test(test_deleg_hook_rename),
		cmocka_unit_test(test_dirops),
		cmocka_unit_test(test_stale_and_forged),
		cmocka_unit_test(test_ro_and_admission),
		cmocka_unit_test(test_secure_over_rdma),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_identity_threads),
		cmocka_unit_test(test_identity_apply_restore),
		cmocka_unit_test(test_fcache_many_files),
		cmocka_unit_test(test_readdir_large),
		cmocka_unit_test(test_readdir_edges),
		cmocka_unit_test(test_fs_info),
		cmocka_unit_test(test_exports_replace),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
