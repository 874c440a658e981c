/*
 * test_nfs4_mod.c - the NFSv4 operations that change the namespace and
 * attributes (nfs/v4/ops/nfs4_proc_mod.c) through the real operation table
 * against the local backend: CREATE of every type (mode, owner, rdev,
 * symlink text on disk; change_info4; attrset; BADTYPE, EXIST, name rules,
 * NOTDIR, createattrs errors), REMOVE (files, directories, NOTEMPTY, NOENT),
 * RENAME (SAVEFH = source; two change_info4; XDEV across exports;
 * NOFILEHANDLE; EXIST for a directory over a file), LINK (ISDIR, XDEV),
 * SETATTR (mode, owner, group, times, size with the anonymous stateid,
 * BAD_STATEID, ISDIR, INVAL, attrsset on failure), VERIFY/NVERIFY,
 * PUTPUBFH, OPENATTR; ROFS on a read-only export and in the pseudo file
 * system; root squashed to the anonymous id on a root_squash export.
 * Needs root (open_by_handle_at); skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfs/nfs.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/recovery/nfs4_recovery.h"
#include "test_nfs_harness.h"

#define ME "127.0.0.1"

static char top[64], exp_rw[128], exp_sq[128], exp_ro[128];
static struct nfs_fh fh_rw, fh_sq, fh_ro, fh_root;
static struct tcall *t;

static void sh(const char *fmt, const char *arg)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg);
	assert_int_equal(system(cmd), 0);
}

static enum rpc_proc_status handler(struct rpc_call *c)
{
	return tc_steps(c, &nfs4_version.procs[NFS4PROC_COMPOUND]);
}

/* ---- COMPOUNDs ---- */

static void begin(uint32_t numops)
{
	tc_reset(t, ME, 700, 0, 0);
	xdr_enc_u32(&t->req, 0); /* empty tag */
	xdr_enc_u32(&t->req, 0);
	xdr_enc_u32(&t->req, numops);
}

static void op(uint32_t num)
{
	xdr_enc_u32(&t->req, num);
}

static void op_putfh(const struct nfs_fh *fh)
{
	op(OP_PUTFH);
	tc_put_fh(t, fh);
}

static void put_str(const char *s)
{
	xdr_enc_opaque(&t->req, s, (uint32_t)strlen(s));
}

/* fattr4 with the two bitmap words and these value bytes. */
static void put_fattr(uint32_t w0, uint32_t w1, const void *vals, uint32_t len)
{
	xdr_enc_u32(&t->req, 2);
	xdr_enc_u32(&t->req, w0);
	xdr_enc_u32(&t->req, w1);
	xdr_enc_opaque(&t->req, vals, len);
}

#define W1(a) (1u << ((a) - 32))

/* fattr4 setting mode alone (mode < 0: nothing). */
static void put_mode(int mode)
{
	uint8_t v[4] = { 0, 0, (uint8_t)(mode >> 8), (uint8_t)mode };

	if (mode < 0)
		put_fattr(0, 0, NULL, 0);
	else
		put_fattr(0, W1(FATTR4_MODE), v, 4);
}

/* Runs; returns the COMPOUND's status; t->res at the first result. */
static uint32_t run(void)
{
	uint32_t len;
	uint32_t status;

	assert_int_equal(tc_run(t, handler), RPC_PROC_OK);
	status = tc_u32(t);
	tc_opaque(t, &len);
	tc_u32(t); /* results */
	return status;
}

static void res(uint32_t want_op, uint32_t want_status)
{
	assert_int_equal(tc_u32(t), want_op);
	assert_int_equal(tc_u32(t), want_status);
}

/* The last change_info4 read by res_cinfo(). */
static uint64_t cinfo_before, cinfo_after;

/* change_info4 of a directory change: atomic (nfs4_dirlock.c, the local
 * backend has no other server); returns whether before != after. */
static bool res_cinfo(void)
{
	assert_int_equal(tc_u32(t), 1);
	cinfo_before = tc_u64(t);
	cinfo_after = tc_u64(t);
	return cinfo_before != cinfo_after;
}

static void walk(const char *path, struct nfs_fh *fh)
{
	char buf[256], *save = NULL;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save))
		n++;
	begin(2 + n);
	op(OP_PUTROOTFH);
	snprintf(buf, sizeof(buf), "%s", path);
	save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		op(OP_LOOKUP);
		put_str(c);
	}
	op(OP_GETFH);
	assert_int_equal(run(), NFS4_OK);
	for (unsigned i = 0; i < 1 + n; i++)
		tc_u64(t); /* op, status */
	res(OP_GETFH, NFS4_OK);
	tc_fh(t, fh);
}

/* CREATE objtype name with mode in dir: the status; on success the attrset's second word. */
static uint32_t create(const struct nfs_fh *dir, uint32_t type, const char *name, int mode, uint32_t *w1)
{
	uint32_t st, nw;

	begin(2);
	op_putfh(dir);
	op(OP_CREATE);
	xdr_enc_u32(&t->req, type);
	if (type == NF4LNK)
		put_str("some/target");
	if (type == NF4CHR || type == NF4BLK) {
		xdr_enc_u32(&t->req, 1);
		xdr_enc_u32(&t->req, 3);
	}
	put_str(name);
	put_mode(mode);
	st = run();
	res(OP_PUTFH, NFS4_OK);
	res(OP_CREATE, st);
	if (st == NFS4_OK) {
		assert_true(res_cinfo());
		nw = tc_u32(t);
		assert_true(nw <= 2);
		for (uint32_t i = 0; i < nw; i++)
			*w1 = tc_u32(t);
		if (nw < 2)
			*w1 = 0;
	}
	return st;
}

static void path_of(char *out, size_t cap, const char *dir, const char *name)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char text[1024];

	(void)state;
	if (tc_fixture_dir("nfs4_mod", top, sizeof(top)) < 0)
		return -1;
	snprintf(exp_rw, sizeof(exp_rw), "%s/rw", top);
	snprintf(exp_sq, sizeof(exp_sq), "%s/sq", top);
	snprintf(exp_ro, sizeof(exp_ro), "%s/ro", top);
	sh("mkdir -p %s", exp_rw);
	sh("mkdir -p %s && chmod 1777 %s", exp_sq);
	sh("mkdir -p %s", exp_ro);
	snprintf(text, sizeof(text), "%s " ME "(rw,no_root_squash,insecure)\n%s " ME "(rw,insecure)\n"
		 "%s " ME "(ro,no_root_squash,insecure)\n", exp_rw, exp_sq, exp_ro);
	if (tc_fixture_start(top, text, true, &t) < 0)
		return -1;
	sh("cd %s && echo hello > file && mkdir full && touch full/x", exp_rw);
	sh("cd %s && echo hello > file", exp_ro);
	walk(exp_rw, &fh_rw);
	walk(exp_sq, &fh_sq);
	walk(exp_ro, &fh_ro);
	walk("/", &fh_root);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tc_fixture_stop(top, t);
	return 0;
}

/* ---- tests ---- */

static void test_create(void **state)
{
	char p[256], link[64];
	struct stat st;
	uint32_t w1 = 0;
	ssize_t n;

	(void)state;
	assert_int_equal(create(&fh_rw, NF4DIR, "d1", 0751, &w1), NFS4_OK);
	assert_int_equal(w1, W1(FATTR4_MODE)); /* attrset: what was set */
	path_of(p, sizeof(p), exp_rw, "d1");
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0751);
	assert_int_equal(create(&fh_rw, NF4LNK, "l1", -1, &w1), NFS4_OK);
	assert_int_equal(w1, 0);
	path_of(p, sizeof(p), exp_rw, "l1");
	n = readlink(p, link, sizeof(link) - 1);
	assert_int_equal(n, 11);
	link[n] = 0;
	assert_string_equal(link, "some/target");
	assert_int_equal(create(&fh_rw, NF4FIFO, "f1", 0640, &w1), NFS4_OK);
	path_of(p, sizeof(p), exp_rw, "f1");
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(create(&fh_rw, NF4SOCK, "s1", 0600, &w1), NFS4_OK);
	path_of(p, sizeof(p), exp_rw, "s1");
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(create(&fh_rw, NF4CHR, "c1", 0600, &w1), NFS4_OK);
	path_of(p, sizeof(p), exp_rw, "c1");
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(major(st.st_rdev), 1);
	assert_int_equal(minor(st.st_rdev), 3);
	/* RFC 8881 §18.4.3: regular files come from OPEN; an existing name; name rules. */
	assert_int_equal(create(&fh_rw, NF4REG, "r1", 0600, &w1), NFS4ERR_BADTYPE);
	assert_int_equal(create(&fh_rw, NF4ATTRDIR, "r1", 0600, &w1), NFS4ERR_BADTYPE);
	assert_int_equal(create(&fh_rw, NF4DIR, "d1", 0700, &w1), NFS4ERR_EXIST);
	assert_int_equal(create(&fh_rw, NF4DIR, "", 0700, &w1), NFS4ERR_INVAL);
	assert_int_equal(create(&fh_rw, NF4DIR, "..", 0700, &w1), NFS4ERR_BADNAME);
	assert_int_equal(create(&fh_rw, NF4DIR, "a/b", 0700, &w1), NFS4ERR_BADCHAR);
	memset(link, 'n', sizeof(link));
	{
		char longname[300];
		memset(longname, 'n', 256);
		longname[256] = 0;
		assert_int_equal(create(&fh_rw, NF4DIR, longname, 0700, &w1), NFS4ERR_NAMETOOLONG);
	}
	/* ROFS: a read-only export, the pseudo file system. */
	assert_int_equal(create(&fh_ro, NF4DIR, "x", 0700, &w1), NFS4ERR_ROFS);
	assert_int_equal(create(&fh_root, NF4DIR, "x", 0700, &w1), NFS4ERR_ROFS);
	path_of(p, sizeof(p), exp_ro, "x");
	assert_int_equal(stat(p, &st), -1);
}

static void test_create_attrs(void **state)
{
	char p[256];
	struct stat st;
	uint8_t v[64];
	struct xdr_enc e;
	uint32_t status;

	(void)state;
	/* owner "1234" and owner_group "4321" with the mode. */
	xdr_enc_init(&e, v, sizeof(v));
	xdr_enc_u32(&e, 0700);
	xdr_enc_opaque(&e, "1234", 4);
	xdr_enc_opaque(&e, "4321", 4);
	begin(2);
	op_putfh(&fh_rw);
	op(OP_CREATE);
	xdr_enc_u32(&t->req, NF4DIR);
	put_str("owned");
	put_fattr(0, W1(FATTR4_MODE) | W1(FATTR4_OWNER) | W1(FATTR4_OWNER_GROUP), v, (uint32_t)xdr_enc_len(&e));
	assert_int_equal(run(), NFS4_OK);
	path_of(p, sizeof(p), exp_rw, "owned");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_uid, 1234);
	assert_int_equal(st.st_gid, 4321);
	/* createattrs' errors: a read-only attribute, an unsupported one, a bad owner. */
	static const struct { uint32_t w0, w1; const char *owner; uint32_t want; } bad[] = {
		{ 1u << FATTR4_TYPE, 0, NULL, NFS4ERR_INVAL },
		{ 1u << FATTR4_ACL, 0, NULL, NFS4ERR_ATTRNOTSUPP },
		{ 0, W1(FATTR4_OWNER), "nobody-at-all@nowhere", NFS4ERR_BADOWNER },
		{ 1u << FATTR4_SIZE, 0, NULL, NFS4ERR_INVAL }, /* a size for a directory */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		xdr_enc_init(&e, v, sizeof(v));
		if (bad[i].owner)
			xdr_enc_opaque(&e, bad[i].owner, (uint32_t)strlen(bad[i].owner));
		else
			xdr_enc_u64(&e, 0);
		begin(2);
		op_putfh(&fh_rw);
		op(OP_CREATE);
		xdr_enc_u32(&t->req, NF4DIR);
		put_str("bad");
		put_fattr(bad[i].w0, bad[i].w1, v, (uint32_t)xdr_enc_len(&e));
		status = run();
		assert_int_equal(status, bad[i].want);
	}
	path_of(p, sizeof(p), exp_rw, "bad");
	assert_int_equal(stat(p, &st), -1);
	/* CREATE in a file: NOTDIR. */
	begin(4);
	op_putfh(&fh_rw);
	op(OP_LOOKUP);
	put_str("file");
	op(OP_CREATE);
	xdr_enc_u32(&t->req, NF4DIR);
	put_str("x");
	put_mode(0700);
	op(OP_GETFH);
	assert_int_equal(run(), NFS4ERR_NOTDIR);
}

/* The new object is the current filehandle: CREATE then GETATTR type. */
static void test_create_curfh(void **state)
{
	uint32_t nw;

	(void)state;
	begin(3);
	op_putfh(&fh_rw);
	op(OP_CREATE);
	xdr_enc_u32(&t->req, NF4DIR);
	put_str("cur");
	put_mode(0700);
	op(OP_GETATTR);
	xdr_enc_u32(&t->req, 1);
	xdr_enc_u32(&t->req, 1u << FATTR4_TYPE);
	assert_int_equal(run(), NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_CREATE, NFS4_OK);
	res_cinfo();
	nw = tc_u32(t);
	for (uint32_t i = 0; i < nw; i++)
		tc_u32(t);
	res(OP_GETATTR, NFS4_OK);
	assert_int_equal(tc_u32(t), 3);
	assert_int_equal(tc_u32(t), 1u << FATTR4_TYPE);
	tc_u32(t);
	tc_u32(t);
	assert_int_equal(tc_u32(t), 4);
	assert_int_equal(tc_u32(t), NF4DIR);
}

static uint32_t remove_(const struct nfs_fh *dir, const char *name)
{
	uint32_t st;

	begin(2);
	op_putfh(dir);
	op(OP_REMOVE);
	put_str(name);
	st = run();
	res(OP_PUTFH, NFS4_OK);
	res(OP_REMOVE, st);
	if (st == NFS4_OK)
		assert_true(res_cinfo());
	return st;
}

static void test_remove(void **state)
{
	char p[256];
	struct stat st;

	(void)state;
	sh("cd %s && touch gone1 && mkdir gone2", exp_rw);
	assert_int_equal(remove_(&fh_rw, "gone1"), NFS4_OK);
	uint64_t after1 = cinfo_after;
	assert_int_equal(remove_(&fh_rw, "gone2"), NFS4_OK);
	/* atomic: the next change's before is this one's after (read inside the lock) */
	assert_true(cinfo_before == after1);
	path_of(p, sizeof(p), exp_rw, "gone2");
	assert_int_equal(stat(p, &st), -1);
	assert_int_equal(remove_(&fh_rw, "gone1"), NFS4ERR_NOENT);
	assert_int_equal(remove_(&fh_rw, "full"), NFS4ERR_NOTEMPTY);
	assert_int_equal(remove_(&fh_rw, "."), NFS4ERR_BADNAME);
	assert_int_equal(remove_(&fh_ro, "file"), NFS4ERR_ROFS);
	assert_int_equal(remove_(&fh_root, "tmp"), NFS4ERR_ROFS);
}

/* RENAME from (SAVEFH) to (CURRENT). */
static uint32_t rename_(const struct nfs_fh *from, const char *old, const struct nfs_fh *to, const char *new)
{
	uint32_t st;

	begin(4);
	op_putfh(from);
	op(OP_SAVEFH);
	op_putfh(to);
	op(OP_RENAME);
	put_str(old);
	put_str(new);
	st = run();
	res(OP_PUTFH, NFS4_OK);
	res(OP_SAVEFH, NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_RENAME, st);
	if (st == NFS4_OK) {
		assert_true(res_cinfo());
		assert_true(res_cinfo());
	}
	return st;
}

static void test_rename(void **state)
{
	struct nfs_fh sub;
	char p[256];
	struct stat st;

	(void)state;
	sh("cd %s && mkdir -p rsub && touch r1 && mkdir rdir", exp_rw);
	begin(3);
	op_putfh(&fh_rw);
	op(OP_LOOKUP);
	put_str("rsub");
	op(OP_GETFH);
	assert_int_equal(run(), NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_LOOKUP, NFS4_OK);
	res(OP_GETFH, NFS4_OK);
	tc_fh(t, &sub);
	assert_int_equal(rename_(&fh_rw, "r1", &sub, "r2"), NFS4_OK);
	snprintf(p, sizeof(p), "%s/rsub/r2", exp_rw);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(rename_(&sub, "r2", &fh_rw, "r3"), NFS4_OK);
	assert_int_equal(rename_(&fh_rw, "rdir", &fh_rw, "rdir2"), NFS4_OK);
	/* §18.26.3: a directory over a file; a missing source; across exports; names. */
	assert_int_equal(rename_(&fh_rw, "rdir2", &fh_rw, "r3"), NFS4ERR_EXIST);
	assert_int_equal(rename_(&fh_rw, "nosuch", &fh_rw, "x"), NFS4ERR_NOENT);
	assert_int_equal(rename_(&fh_rw, "r3", &fh_sq, "r3"), NFS4ERR_XDEV);
	assert_int_equal(rename_(&fh_rw, "r3", &fh_rw, ""), NFS4ERR_INVAL);
	assert_int_equal(rename_(&fh_ro, "file", &fh_ro, "file2"), NFS4ERR_ROFS);
	assert_int_equal(rename_(&fh_root, "tmp", &fh_root, "tmp2"), NFS4ERR_ROFS);
	/* No saved filehandle. */
	begin(2);
	op_putfh(&fh_rw);
	op(OP_RENAME);
	put_str("r3");
	put_str("r4");
	assert_int_equal(run(), NFS4ERR_NOFILEHANDLE);
}

static uint32_t link_(const char *src, const struct nfs_fh *dir, const char *name)
{
	uint32_t st;

	begin(5);
	op_putfh(&fh_rw);
	op(OP_LOOKUP);
	put_str(src);
	op(OP_SAVEFH);
	op_putfh(dir);
	op(OP_LINK);
	put_str(name);
	st = run();
	res(OP_PUTFH, NFS4_OK);
	res(OP_LOOKUP, NFS4_OK);
	res(OP_SAVEFH, NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_LINK, st);
	if (st == NFS4_OK)
		assert_true(res_cinfo());
	return st;
}

static void test_link(void **state)
{
	char p[256];
	struct stat st;

	(void)state;
	sh("cd %s && touch l0 && mkdir -p ldir", exp_rw);
	assert_int_equal(link_("l0", &fh_rw, "l0b"), NFS4_OK);
	path_of(p, sizeof(p), exp_rw, "l0");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_nlink, 2);
	assert_int_equal(link_("l0", &fh_rw, "l0b"), NFS4ERR_EXIST);
	assert_int_equal(link_("ldir", &fh_rw, "ldir2"), NFS4ERR_ISDIR);
	assert_int_equal(link_("l0", &fh_sq, "l0c"), NFS4ERR_XDEV);
	assert_int_equal(link_("l0", &fh_rw, "a/b"), NFS4ERR_BADCHAR);
}

/* SETATTR on dir/name with stateid (seqid, other byte), fattr4 of w0/w1 and vals; attrsset w1 out. */
static uint32_t setattr(const struct nfs_fh *dir, const char *name, uint32_t seqid, uint8_t other, uint32_t w0,
			uint32_t w1, const void *vals, uint32_t len, uint32_t *set0, uint32_t *set1)
{
	uint8_t o[12];
	uint32_t st, nw, w[3] = { 0 };

	begin(name ? 3 : 2);
	op_putfh(dir);
	if (name) {
		op(OP_LOOKUP);
		put_str(name);
	}
	op(OP_SETATTR);
	memset(o, other, sizeof(o));
	xdr_enc_u32(&t->req, seqid);
	xdr_enc_fixed(&t->req, o, 12);
	put_fattr(w0, w1, vals, len);
	st = run();
	res(OP_PUTFH, NFS4_OK);
	if (name)
		res(OP_LOOKUP, NFS4_OK);
	res(OP_SETATTR, st);
	nw = tc_u32(t); /* §18.30.2: attrsset, on failure too */
	assert_true(nw <= 3);
	for (uint32_t i = 0; i < nw; i++)
		w[i] = tc_u32(t);
	*set0 = w[0];
	*set1 = w[1];
	assert_int_equal(tc_remaining(t), 0);
	return st;
}

static void test_setattr(void **state)
{
	char p[256];
	struct stat st;
	uint8_t v[64];
	struct xdr_enc e;
	uint32_t s0, s1;

	(void)state;
	sh("cd %s && echo 0123456789 > sa && mkdir -p sadir", exp_rw);
	path_of(p, sizeof(p), exp_rw, "sa");
	/* mode, owner, owner_group, both times (client's), in one go. */
	xdr_enc_init(&e, v, sizeof(v));
	xdr_enc_u32(&e, 0604);
	xdr_enc_opaque(&e, "2001", 4);
	xdr_enc_opaque(&e, "root@localdomain", 16);
	xdr_enc_u32(&e, 1);
	xdr_enc_u64(&e, 1000000000);
	xdr_enc_u32(&e, 5);
	xdr_enc_u32(&e, 1);
	xdr_enc_u64(&e, 1200000000);
	xdr_enc_u32(&e, 7);
	uint32_t all1 = W1(FATTR4_MODE) | W1(FATTR4_OWNER) | W1(FATTR4_OWNER_GROUP) | W1(FATTR4_TIME_ACCESS_SET) |
			W1(FATTR4_TIME_MODIFY_SET);
	nfs4_owner_config(NFS4_IDMAP_NUMERIC, "localdomain");
	assert_int_equal(setattr(&fh_rw, "sa", 0, 0, 0, all1, v, (uint32_t)xdr_enc_len(&e), &s0, &s1), NFS4_OK);
	assert_int_equal(s0, 0);
	assert_int_equal(s1, all1);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0604);
	assert_int_equal(st.st_uid, 2001);
	assert_int_equal(st.st_gid, 0);
	assert_int_equal(st.st_atim.tv_sec, 1000000000);
	assert_int_equal(st.st_mtim.tv_sec, 1200000000);
	assert_int_equal(st.st_mtim.tv_nsec, 7);
	/* size with the anonymous stateid, and with the bypass one. */
	xdr_enc_init(&e, v, sizeof(v));
	xdr_enc_u64(&e, 4);
	assert_int_equal(setattr(&fh_rw, "sa", 0, 0, 1u << FATTR4_SIZE, 0, v, 8, &s0, &s1), NFS4_OK);
	assert_int_equal(s0, 1u << FATTR4_SIZE);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 4);
	assert_int_equal(setattr(&fh_rw, "sa", UINT32_MAX, 0xff, 1u << FATTR4_SIZE, 0, v, 8, &s0, &s1), NFS4_OK);
	/* Any other stateid names no state: this one is of no boot of this server's
	 * (open state exists now: STALE_STATEID in 4.0, RFC 7530 §9.1.4.2). */
	assert_int_equal(setattr(&fh_rw, "sa", 1, 7, 1u << FATTR4_SIZE, 0, v, 8, &s0, &s1), NFS4ERR_STALE_STATEID);
	assert_int_equal(s0, 0);
	assert_int_equal(setattr(&fh_rw, "sadir", 0, 0, 1u << FATTR4_SIZE, 0, v, 8, &s0, &s1), NFS4ERR_ISDIR);
	/* Read-only, unsupported, malformed; nothing set, attrsset empty. */
	assert_int_equal(setattr(&fh_rw, "sa", 0, 0, 1u << FATTR4_CHANGE, 0, v, 8, &s0, &s1), NFS4ERR_INVAL);
	assert_int_equal(setattr(&fh_rw, "sa", 0, 0, 1u << FATTR4_ARCHIVE, 0, v, 4, &s0, &s1), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(setattr(&fh_rw, "sa", 0, 0, 1u << FATTR4_SIZE, 0, v, 4, &s0, &s1), NFS4ERR_BADXDR);
	assert_int_equal(s0 | s1, 0);
	/* ROFS: read-only export, pseudo directory. */
	xdr_enc_init(&e, v, sizeof(v));
	xdr_enc_u32(&e, 0600);
	assert_int_equal(setattr(&fh_ro, "file", 0, 0, 0, W1(FATTR4_MODE), v, 4, &s0, &s1), NFS4ERR_ROFS);
	assert_int_equal(s1, 0);
	assert_int_equal(setattr(&fh_root, NULL, 0, 0, 0, W1(FATTR4_MODE), v, 4, &s0, &s1), NFS4ERR_ROFS);
}

/* VERIFY or NVERIFY of name in the rw export with len bytes of values (the first word type). */
static uint32_t verify_len(uint32_t opnum, const char *name, uint32_t w0, uint32_t w1, uint32_t type, uint32_t len)
{
	uint8_t v[4] = { 0, 0, 0, (uint8_t)type };

	begin(3);
	op_putfh(&fh_rw);
	op(OP_LOOKUP);
	put_str(name);
	op(opnum);
	put_fattr(w0, w1, v, len);
	return run();
}

/* VERIFY or NVERIFY of the type attribute of name in the rw export. */
static uint32_t verify(uint32_t opnum, const char *name, uint32_t w0, uint32_t w1, uint32_t type)
{
	return verify_len(opnum, name, w0, w1, type, 4);
}

static void test_verify(void **state)
{
	(void)state;
	sh("cd %s && mkdir -p vdir && touch vfile", exp_rw);
	assert_int_equal(verify(OP_VERIFY, "vdir", 1u << FATTR4_TYPE, 0, NF4DIR), NFS4_OK);
	assert_int_equal(verify(OP_VERIFY, "vfile", 1u << FATTR4_TYPE, 0, NF4DIR), NFS4ERR_NOT_SAME);
	assert_int_equal(verify(OP_NVERIFY, "vdir", 1u << FATTR4_TYPE, 0, NF4DIR), NFS4ERR_SAME);
	assert_int_equal(verify(OP_NVERIFY, "vfile", 1u << FATTR4_TYPE, 0, NF4DIR), NFS4_OK);
	/* §18.31.3: unsupported -> ATTRNOTSUPP; write-only and rdattr_error -> INVAL. */
	assert_int_equal(verify(OP_VERIFY, "vdir", 1u << FATTR4_ACL, 0, 0), NFS4ERR_ATTRNOTSUPP);
	assert_int_equal(verify(OP_VERIFY, "vdir", 0, W1(FATTR4_TIME_MODIFY_SET), 0), NFS4ERR_INVAL);
	assert_int_equal(verify(OP_NVERIFY, "vdir", 1u << FATTR4_RDATTR_ERROR, 0, 0), NFS4ERR_INVAL);
	/* RFC 8881 §15.1.1.3: values that do not fill what the bitmap names, or
	 * a value cut short (a 1-3 byte mode, a prefix of the real one), do not
	 * decode: BADXDR, never SAME or NOT_SAME (issue 24 defect 9). */
	assert_int_equal(verify(OP_VERIFY, "vdir", (1u << FATTR4_TYPE) | (1u << FATTR4_SIZE), 0, NF4DIR),
			 NFS4ERR_BADXDR);
	for (uint32_t len = 0; len < 4; len++) {
		assert_int_equal(verify_len(OP_VERIFY, "vdir", 0, W1(FATTR4_MODE), 0, len), NFS4ERR_BADXDR);
		assert_int_equal(verify_len(OP_NVERIFY, "vdir", 0, W1(FATTR4_MODE), 0, len), NFS4ERR_BADXDR);
	}
}

static void test_pubfh_openattr(void **state)
{
	struct nfs_fh pub;

	(void)state;
	begin(2);
	op(OP_PUTPUBFH);
	op(OP_GETFH);
	assert_int_equal(run(), NFS4_OK);
	res(OP_PUTPUBFH, NFS4_OK);
	res(OP_GETFH, NFS4_OK);
	tc_fh(t, &pub);
	assert_int_equal(pub.len, fh_root.len);
	assert_memory_equal(pub.data, fh_root.data, pub.len);
	/* §18.17: no named attributes; the COMPOUND stops there, with or without its argument. */
	begin(2);
	op_putfh(&fh_rw);
	op(OP_OPENATTR);
	xdr_enc_u32(&t->req, 0);
	assert_int_equal(run(), NFS4ERR_NOTSUPP);
	begin(2);
	op_putfh(&fh_rw);
	op(OP_OPENATTR);
	assert_int_equal(run(), NFS4ERR_NOTSUPP);
}

/* supported_attrs names the write-only time_*_set (the Linux client sends only what is listed there). */
static void test_supported_settable(void **state)
{
	uint32_t nw, w[3] = { 0 };

	(void)state;
	begin(2);
	op_putfh(&fh_rw);
	op(OP_GETATTR);
	xdr_enc_u32(&t->req, 1);
	xdr_enc_u32(&t->req, 1u << FATTR4_SUPPORTED_ATTRS);
	assert_int_equal(run(), NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_GETATTR, NFS4_OK);
	nw = tc_u32(t);
	for (uint32_t i = 0; i < nw; i++)
		tc_u32(t);
	tc_u32(t); /* attrlist4 length */
	nw = tc_u32(t);
	assert_true(nw >= 2 && nw <= 3);
	for (uint32_t i = 0; i < nw; i++)
		w[i] = tc_u32(t);
	assert_true(w[1] & W1(FATTR4_TIME_ACCESS_SET));
	assert_true(w[1] & W1(FATTR4_TIME_MODIFY_SET));
	assert_true(w[1] & W1(FATTR4_MODE));
	assert_true(w[1] & W1(FATTR4_OWNER));
}

/* [nfsv4] idmap = names: GETATTR's owner is name@domain, nobody@domain for an id without a name. */
static void test_owner_names(void **state)
{
	const uint8_t *p;
	uint32_t nw, len;

	(void)state;
	sh("cd %s && touch own0 own1 && chown 0:0 own0 && chown 3999999999:3999999999 own1", exp_rw);
	nfs4_owner_config(NFS4_IDMAP_NAMES, "example.test");
	for (int i = 0; i < 2; i++) {
		begin(3);
		op_putfh(&fh_rw);
		op(OP_LOOKUP);
		put_str(i ? "own1" : "own0");
		op(OP_GETATTR);
		xdr_enc_u32(&t->req, 2);
		xdr_enc_u32(&t->req, 0);
		xdr_enc_u32(&t->req, W1(FATTR4_OWNER) | W1(FATTR4_OWNER_GROUP));
		assert_int_equal(run(), NFS4_OK);
		res(OP_PUTFH, NFS4_OK);
		res(OP_LOOKUP, NFS4_OK);
		res(OP_GETATTR, NFS4_OK);
		nw = tc_u32(t);
		for (uint32_t k = 0; k < nw; k++)
			tc_u32(t);
		tc_u32(t);
		for (int k = 0; k < 2; k++) {
			const char *want = i ? "nobody@example.test" : "root@example.test";
			p = tc_opaque(t, &len);
			assert_int_equal(len, strlen(want));
			assert_memory_equal(p, want, len);
		}
	}
	nfs4_owner_config(NFS4_IDMAP_NUMERIC, "localdomain");
}

/* root_squash (the default): root's CREATE makes an object of the anonymous id. */
static void test_squash(void **state)
{
	char p[256];
	struct stat st;
	uint32_t w1;

	(void)state;
	assert_int_equal(create(&fh_sq, NF4DIR, "squashed", 0755, &w1), NFS4_OK);
	path_of(p, sizeof(p), exp_sq, "squashed");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(st.st_gid, 65534);
}

/* RFC 8881 §8.4.2 (nfs4_recovery.h): while a client of the previous boot may
 * reclaim, REMOVE, RENAME and a size change get NFS4ERR_GRACE; after its
 * RECLAIM_COMPLETE they work again. The grace period comes from a record file
 * in a temporary state directory. */
static void test_grace(void **state)
{
	char dir[] = "/var/tmp/test_nfs4_mod_grace.XXXXXX", path[PATH_MAX];
	uint8_t v[8] = { 0, 0, 0, 0, 0, 0, 0, 3 };
	uint32_t s0, s1;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, NFS4_REC_FILE);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(NFS4_REC_MAGIC "A\0\3old", 1, 8 + 6, f);
	fclose(f);
	sh("cd %s && echo 0123456789 > graced", exp_rw);
	assert_int_equal(nfs4_recovery_start(dir, 60), 60);
	assert_int_equal(remove_(&fh_rw, "graced"), NFS4ERR_GRACE);
	assert_int_equal(rename_(&fh_rw, "graced", &fh_rw, "graced2"), NFS4ERR_GRACE);
	assert_int_equal(setattr(&fh_rw, "graced", 0, 0, 1u << FATTR4_SIZE, 0, v, 8, &s0, &s1), NFS4ERR_GRACE);
	assert_int_equal(setattr(&fh_rw, "graced", 0, 0, 0, 1u << (FATTR4_MODE - 32), v + 4, 4, &s0, &s1), NFS4_OK);
	nfs4_client_stable((const uint8_t *)"old", 3);
	nfs4_client_reclaimed((const uint8_t *)"old", 3);
	assert_int_equal(setattr(&fh_rw, "graced", 0, 0, 1u << FATTR4_SIZE, 0, v, 8, &s0, &s1), NFS4_OK);
	assert_int_equal(rename_(&fh_rw, "graced", &fh_rw, "graced2"), NFS4_OK);
	assert_int_equal(remove_(&fh_rw, "graced2"), NFS4_OK);
	nfs4_recovery_stop();
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create),   cmocka_unit_test(test_create_attrs), cmocka_unit_test(test_create_curfh),
		cmocka_unit_test(test_remove),   cmocka_unit_test(test_rename),       cmocka_unit_test(test_link),
		cmocka_unit_test(test_setattr),  cmocka_unit_test(test_verify),       cmocka_unit_test(test_pubfh_openattr),
		cmocka_unit_test(test_squash),  cmocka_unit_test(test_supported_settable),
		cmocka_unit_test(test_grace),
		cmocka_unit_test(test_owner_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
