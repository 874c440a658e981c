/*
 * test_nfs4_proc.c - NFSv4 COMPOUNDs through the operation table
 * (nfs4_version's COMPOUND, run as the RPC layer runs it) against the local
 * backend and the pseudo file system: PUTROOTFH and a LOOKUP walk from the
 * pseudo root down to an export (fsid and mounted_on_fileid change there),
 * exports the client is not admitted to staying invisible, GETATTR, ACCESS
 * (read-only export and pseudo directories grant no modification),
 * READLINK, LOOKUPP back across the export root, READDIR of pseudo and
 * export directories (no "." or "..", cookies resume, TOOSMALL), SECINFO,
 * SECINFO_NO_NAME, name rules, SYMLINK/NOTDIR, stale and forged handles;
 * an NFSv4.1 session through the real table (EXCHANGE_ID, CREATE_SESSION,
 * SEQUENCE with a byte-identical replay, RECLAIM_COMPLETE, RETRY_UNCACHED_REP,
 * SEQ_MISORDERED, DESTROY_SESSION).
 * Needs root (open_by_handle_at); skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfs/nfs.h"
#include "nfs/v4/nfs4.h"
#include "test_nfs_harness.h"

#define ME "127.0.0.1"
#define STRANGER "127.0.0.9" /* admitted to no export */

static char top[64], exp_data[128], exp_other[128], exp_ro[128];
static struct tcall *t;

static void sh(const char *fmt, const char *arg)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg);
	assert_int_equal(system(cmd), 0);
}

static enum rpc_proc_status compound_handler(struct rpc_call *c)
{
	return tc_steps(c, &nfs4_version.procs[NFS4PROC_COMPOUND]);
}

/* NFSv4.1 COMPOUNDs before SEQUENCE is built: the real table with a SEQUENCE
 * that does nothing. */
static struct nfs4_op ops41[NFS4_OP_COUNT];

static uint32_t seq_stub(struct nfs4_ctx *x, void *args, void *res)
{
	(void)x, (void)args, (void)res;
	return NFS4_OK;
}

static enum rpc_proc_status compound41_handler(struct rpc_call *c)
{
	memcpy(ops41, nfs4_ops, sizeof(ops41));
	ops41[OP_SEQUENCE] = (struct nfs4_op){ .name = "SEQUENCE", .execute = seq_stub };
	return nfs4_compound_with(c, ops41);
}

/* ---- building a COMPOUND ---- */

static void begin(const char *client, uint32_t minor, uint32_t numops)
{
	tc_reset(t, client, 700, 0, 0);
	xdr_enc_u32(&t->req, 1); /* tag "t", padded (spelled out: gcc's bounds warning) */
	xdr_enc_u32(&t->req, (uint32_t)'t' << 24);
	xdr_enc_u32(&t->req, minor);
	xdr_enc_u32(&t->req, numops);
}

static void op(uint32_t num)
{
	xdr_enc_u32(&t->req, num);
}

static void op_name(uint32_t num, const char *name)
{
	xdr_enc_u32(&t->req, num);
	if (name[0])
		tc_put_name(t, name);
	else
		xdr_enc_u32(&t->req, 0); /* empty component4 */
}

/* LOOKUP each component of an absolute path (the pseudo walk a client makes). */
static unsigned op_walk(const char *path, bool count_only)
{
	char buf[256], *save = NULL;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save), n++)
		if (!count_only)
			op_name(OP_LOOKUP, c);
	return n;
}

static void op_getattr(uint32_t w0, uint32_t w1)
{
	op(OP_GETATTR);
	xdr_enc_u32(&t->req, 2);
	xdr_enc_u32(&t->req, w0);
	xdr_enc_u32(&t->req, w1);
}

static void op_putfh(const struct nfs_fh *fh)
{
	op(OP_PUTFH);
	tc_put_fh(t, fh);
}

static void op_readdir(uint64_t cookie, const uint8_t verf[8], uint32_t maxcount)
{
	op(OP_READDIR);
	xdr_enc_u64(&t->req, cookie);
	xdr_enc_fixed(&t->req, verf, 8);
	xdr_enc_u32(&t->req, maxcount);
	xdr_enc_u32(&t->req, maxcount);
	xdr_enc_u32(&t->req, 1);
	xdr_enc_u32(&t->req, (1u << FATTR4_TYPE) | (1u << FATTR4_FILEID));
}

/* ---- reading the reply ---- */

/* Runs the COMPOUND; returns its status; positions t->res at the first result. */
static uint32_t run_with(uint32_t *nres, enum rpc_proc_status (*handler)(struct rpc_call *))
{
	uint32_t status, len;

	assert_int_equal(tc_run(t, handler), RPC_PROC_OK);
	status = tc_u32(t);
	tc_opaque(t, &len);
	*nres = tc_u32(t);
	return status;
}

static uint32_t run(uint32_t *nres)
{
	return run_with(nres, compound_handler);
}

static void res(uint32_t want_op, uint32_t want_status)
{
	assert_int_equal(tc_u32(t), want_op);
	assert_int_equal(tc_u32(t), want_status);
}

static void res_ok(uint32_t n, uint32_t want_op)
{
	for (uint32_t i = 0; i < n; i++)
		res(want_op, NFS4_OK);
}

static void res_fh(struct nfs_fh *fh)
{
	res(OP_GETFH, NFS4_OK);
	tc_fh(t, fh);
}

/* GETATTR's fattr4 (type, fileid, fsid, mounted_on_fileid when asked as below). */
struct attrs {
	uint32_t type;
	uint64_t fsid_major, fileid, mounted_on;
};

#define ATTR_W0 ((1u << FATTR4_TYPE) | (1u << FATTR4_FSID) | (1u << FATTR4_FILEID))
#define ATTR_W1 (1u << (FATTR4_MOUNTED_ON_FILEID - 32))

static void res_attrs(struct attrs *a)
{
	res(OP_GETATTR, NFS4_OK);
	assert_int_equal(tc_u32(t), 3); /* rnfsd writes all three words */
	assert_int_equal(tc_u32(t), ATTR_W0);
	assert_int_equal(tc_u32(t), ATTR_W1);
	assert_int_equal(tc_u32(t), 0);
	assert_int_equal(tc_u32(t), 4 + 16 + 8 + 8);
	a->type = tc_u32(t);
	a->fsid_major = tc_u64(t);
	tc_u64(t);
	a->fileid = tc_u64(t);
	a->mounted_on = tc_u64(t);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char text[1024];

	(void)state;
	if (tc_fixture_dir("nfs4_proc", top, sizeof(top)) < 0)
		return -1;
	snprintf(exp_data, sizeof(exp_data), "%s/srv/data", top);
	snprintf(exp_other, sizeof(exp_other), "%s/srv/other", top);
	snprintf(exp_ro, sizeof(exp_ro), "%s/ro", top);
	sh("mkdir -p %s", exp_data);
	sh("mkdir -p %s", exp_other);
	sh("mkdir -p %s", exp_ro);
	snprintf(text, sizeof(text), "%s " ME "(rw,no_root_squash,insecure,sec=sys:none)\n"
		 "%s 10.1.2.3(rw,insecure)\n%s " ME "(ro,no_root_squash,insecure)\n", exp_data, exp_other, exp_ro);
	if (tc_fixture_start(top, text, true, &t) < 0)
		return -1;
	sh("cd %s && echo hello > file && mkdir dir && ln -s target link", exp_data);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tc_fixture_stop(top, t);
	return 0;
}

/* ---- tests ---- */

static void test_walk_to_export(void **state)
{
	struct attrs root, srv, data;
	struct nfs_fh fh_root, fh_data;
	unsigned depth = op_walk(top, true), depth_data = op_walk(exp_data, true);
	uint32_t n;

	(void)state;
	/* PUTROOTFH GETFH GETATTR, LOOKUP to top, LOOKUP srv, GETATTR, LOOKUP data, GETFH, GETATTR */
	begin(ME, 0, 3 + depth + 5);
	op(OP_PUTROOTFH);
	op(OP_GETFH);
	op_getattr(ATTR_W0, ATTR_W1);
	op_walk(top, false);
	op_name(OP_LOOKUP, "srv");
	op_getattr(ATTR_W0, ATTR_W1);
	op_name(OP_LOOKUP, "data");
	op(OP_GETFH);
	op_getattr(ATTR_W0, ATTR_W1);
	assert_int_equal(run(&n), NFS4_OK);
	assert_int_equal(n, 3 + depth + 5);
	res(OP_PUTROOTFH, NFS4_OK);
	res_fh(&fh_root);
	res_attrs(&root);
	assert_int_equal(root.type, NF4DIR);
	assert_true(root.fsid_major == 0); /* the pseudo file system */
	res_ok(depth, OP_LOOKUP);
	res(OP_LOOKUP, NFS4_OK);
	res_attrs(&srv);
	char srv_path[128];
	snprintf(srv_path, sizeof(srv_path), "%s/srv", top);
	assert_true(srv.fsid_major == 0);
	assert_true(srv.fileid == nfs4_pseudo_id(srv_path));
	res(OP_LOOKUP, NFS4_OK);
	res_fh(&fh_data);
	res_attrs(&data);
	/* RFC 8881 §5.8.2.23: the export root sits on the pseudo directory's fileid. */
	assert_int_equal(data.type, NF4DIR);
	assert_true(data.fsid_major != 0);
	assert_true(data.mounted_on == nfs4_pseudo_id(exp_data));
	assert_true(data.fileid != data.mounted_on);
	assert_int_equal(tc_remaining(t), 0);
	/* Not admitted: srv/other is invisible. */
	begin(ME, 0, depth_data + 1);
	op(OP_PUTROOTFH);
	op_walk(top, false);
	op_name(OP_LOOKUP, "srv");
	op_name(OP_LOOKUP, "other");
	assert_int_equal(run(&n), NFS4ERR_NOENT);
}

/* The export's root handle, by walking to it. */
static struct nfs_fh data_fh;

static void data_root(void)
{
	uint32_t n;

	begin(ME, 0, 1 + op_walk(exp_data, true) + 1);
	op(OP_PUTROOTFH);
	op_walk(exp_data, false);
	op(OP_GETFH);
	assert_int_equal(run(&n), NFS4_OK);
	for (uint32_t i = 0; i + 1 < n; i++)
		tc_u64(t);
	res_fh(&data_fh);
}

static void test_in_export(void **state)
{
	struct attrs a;
	uint32_t n, len;
	const uint8_t *p;

	(void)state;
	data_root();
	/* LOOKUP file, GETATTR, ACCESS; then the symlink's READLINK. */
	begin(ME, 0, 8);
	op_putfh(&data_fh);
	op_name(OP_LOOKUP, "file");
	op_getattr(ATTR_W0, ATTR_W1);
	op(OP_ACCESS);
	xdr_enc_u32(&t->req, 0x3f);
	op_putfh(&data_fh);
	op_name(OP_LOOKUP, "link");
	op(OP_READLINK);
	op(OP_LOOKUPP); /* from a symlink: SYMLINK, ends the COMPOUND */
	assert_int_equal(run(&n), NFS4ERR_SYMLINK);
	assert_int_equal(n, 8);
	res(OP_PUTFH, NFS4_OK);
	res(OP_LOOKUP, NFS4_OK);
	res_attrs(&a);
	assert_int_equal(a.type, NF4REG);
	assert_true(a.mounted_on == a.fileid);
	res(OP_ACCESS, NFS4_OK);
	assert_int_equal(tc_u32(t), 0x2d); /* a file: no LOOKUP or DELETE (RFC 8881 §18.1.3; pynfs ACC2r) */
	assert_int_equal(tc_u32(t) & 0x0f, 0x0d); /* root, rw export, a file: read/modify/extend */
	res(OP_PUTFH, NFS4_OK);
	res(OP_LOOKUP, NFS4_OK);
	res(OP_READLINK, NFS4_OK);
	p = tc_opaque(t, &len);
	assert_int_equal(len, 6);
	assert_memory_equal(p, "target", 6);
	res(OP_LOOKUPP, NFS4ERR_SYMLINK);
	/* Name rules and types. */
	static const struct {
		const char *name;
		uint32_t status;
	} names[] = {
		{ "", NFS4ERR_INVAL }, { ".", NFS4ERR_BADNAME }, { "..", NFS4ERR_BADNAME },
		{ "a/b", NFS4ERR_BADCHAR }, { "missing", NFS4ERR_NOENT },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		begin(ME, 0, 2);
		op_putfh(&data_fh);
		op_name(OP_LOOKUP, names[i].name);
		assert_int_equal(run(&n), names[i].status);
	}
	begin(ME, 0, 3);
	op_putfh(&data_fh);
	op_name(OP_LOOKUP, "file");
	op_name(OP_LOOKUP, "x");
	assert_int_equal(run(&n), NFS4ERR_NOTDIR);
	begin(ME, 0, 3);
	op_putfh(&data_fh);
	op_name(OP_LOOKUP, "file");
	op(OP_READLINK);
	assert_int_equal(run(&n), NFS4ERR_INVAL);
}

static void test_lookupp_and_access(void **state)
{
	struct nfs_fh up, srv;
	uint32_t n, depth = op_walk(exp_data, true);

	(void)state;
	data_root();
	/* LOOKUPP from the export root lands on the pseudo directory "srv". */
	begin(ME, 0, 4);
	op_putfh(&data_fh);
	op(OP_LOOKUPP);
	op(OP_GETFH);
	op(OP_ACCESS);
	xdr_enc_u32(&t->req, 0x3f);
	assert_int_equal(run(&n), NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_LOOKUPP, NFS4_OK);
	res_fh(&up);
	res(OP_ACCESS, NFS4_OK);
	assert_int_equal(tc_u32(t), 0x1f); /* a directory: no EXECUTE (RFC 8881 §18.1.3; pynfs ACC2d) */
	assert_int_equal(tc_u32(t), 0x03); /* pseudo directories: read and lookup only */
	/* The same handle as walking down to srv. */
	begin(ME, 0, 1 + depth);
	op(OP_PUTROOTFH);
	op_walk(top, false);
	op_name(OP_LOOKUP, "srv");
	op(OP_GETFH);
	assert_int_equal(run(&n), NFS4_OK);
	for (uint32_t i = 0; i + 1 < n; i++)
		tc_u64(t);
	res_fh(&srv);
	assert_int_equal(srv.len, up.len);
	assert_memory_equal(srv.data, up.data, up.len);
	begin(ME, 0, 3);
	op(OP_PUTROOTFH);
	op(OP_LOOKUPP);
	op(OP_GETFH);
	assert_int_equal(run(&n), NFS4ERR_NOENT); /* RFC 8881 §18.14.3: the root has no parent */
	/* up is a pseudo handle: PUTFH of it works, GETATTR shows fsid 0. */
	begin(ME, 0, 2);
	op_putfh(&up);
	op(OP_GETFH);
	assert_int_equal(run(&n), NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res_fh(&srv);
	assert_memory_equal(srv.data, up.data, up.len);
}

static void test_readdir(void **state)
{
	static const uint8_t zero[8];
	uint8_t verf[8];
	uint32_t n, namelen;
	const uint8_t *name;
	unsigned seen = 0, rounds = 0;
	uint64_t cookie = 0;
	bool eof = false;

	(void)state;
	data_root();
	sh("cd %s && mkdir many && cd many && for i in $(seq 1 40); do touch f$i; done", exp_data);
	/* Small maxcount: several rounds, resumed by cookie and verifier. */
	memset(verf, 0, sizeof(verf));
	while (!eof) {
		assert_true(++rounds < 50);
		begin(ME, 0, 3);
		op_putfh(&data_fh);
		op_name(OP_LOOKUP, "many");
		op_readdir(cookie, verf, 512);
		assert_int_equal(run(&n), NFS4_OK);
		res(OP_PUTFH, NFS4_OK);
		res(OP_LOOKUP, NFS4_OK);
		res(OP_READDIR, NFS4_OK);
		memcpy(verf, xdr_dec_inline(&t->res, 8), 8); /* verifier4 */
		while (tc_u32(t)) {
			cookie = tc_u64(t);
			name = tc_opaque(t, &namelen);
			assert_false(namelen <= 2 && name[0] == '.');
			uint32_t words = tc_u32(t);
			for (uint32_t w = 0; w < words; w++)
				tc_u32(t);
			uint32_t alen;
			tc_opaque(t, &alen);
			assert_int_equal(alen, 4 + 8);
			seen++;
		}
		eof = tc_u32(t);
	}
	assert_int_equal(seen, 40);
	assert_true(rounds > 1);
	/* Resumed at the last cookie with a verifier of 0 (libnfs 4.0 never echoes it): taken, as knfsd
	 * does; with another verifier: NFS4ERR_NOT_SAME (RFC 8881 §18.23.3). */
	begin(ME, 0, 3);
	op_putfh(&data_fh);
	op_name(OP_LOOKUP, "many");
	op_readdir(cookie, zero, 512);
	assert_int_equal(run(&n), NFS4_OK);
	verf[0] ^= 0x5a;
	begin(ME, 0, 3);
	op_putfh(&data_fh);
	op_name(OP_LOOKUP, "many");
	op_readdir(cookie, verf, 512);
	assert_int_equal(run(&n), NFS4ERR_NOT_SAME);
	/* The reserved cookies 1 and 2: BAD_COOKIE (RFC 8881 §18.23.3; pynfs RDDR10). */
	for (uint64_t reserved = 1; reserved <= 2; reserved++) {
		begin(ME, 0, 3);
		op_putfh(&data_fh);
		op_name(OP_LOOKUP, "many");
		op_readdir(reserved, zero, 512);
		assert_int_equal(run(&n), NFS4ERR_BAD_COOKIE);
	}
	/* maxcount too small for one entry. */
	begin(ME, 0, 2);
	op_putfh(&data_fh);
	op_readdir(0, zero, 20);
	assert_int_equal(run(&n), NFS4ERR_TOOSMALL);
	/* The pseudo directory "srv": only "data" (other is not admitted). */
	begin(ME, 0, 3);
	op_putfh(&data_fh);
	op(OP_LOOKUPP);
	op_readdir(0, zero, 4096);
	assert_int_equal(run(&n), NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_LOOKUPP, NFS4_OK);
	res(OP_READDIR, NFS4_OK);
	xdr_dec_inline(&t->res, 8);
	assert_int_equal(tc_u32(t), 1);
	assert_true(tc_u64(t) == 3);
	name = tc_opaque(t, &namelen);
	assert_int_equal(namelen, 4);
	assert_memory_equal(name, "data", 4);
	uint32_t words = tc_u32(t);
	for (uint32_t w = 0; w < words; w++)
		tc_u32(t);
	tc_opaque(t, &namelen);
	assert_int_equal(tc_u32(t), 0);
	assert_int_equal(tc_u32(t), 1); /* eof */
	/* A client admitted nowhere sees an empty root. */
	begin(STRANGER, 0, 2);
	op(OP_PUTROOTFH);
	op_readdir(0, zero, 4096);
	assert_int_equal(run(&n), NFS4_OK);
	res(OP_PUTROOTFH, NFS4_OK);
	res(OP_READDIR, NFS4_OK);
	xdr_dec_inline(&t->res, 8);
	assert_int_equal(tc_u32(t), 0);
	assert_int_equal(tc_u32(t), 1);
}

/* SECINFO and SECINFO_NO_NAME (both styles) of the export "data" and the pseudo root. */
static void secinfo_data(void)
{
	uint32_t n;

	/* SECINFO "data" from srv: the export's sec=sys:none. */
	begin(ME, 0, 4);
	op_putfh(&data_fh);
	op(OP_LOOKUPP);
	op_name(OP_SECINFO, "data");
	op(OP_GETFH); /* 4.0 keeps the current filehandle */
	assert_int_equal(run(&n), NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_LOOKUPP, NFS4_OK);
	res(OP_SECINFO, NFS4_OK);
	assert_int_equal(tc_u32(t), 2);
	assert_int_equal(tc_u32(t), RPC_AUTH_SYS);
	assert_int_equal(tc_u32(t), RPC_AUTH_NONE);
	res(OP_GETFH, NFS4_OK);
	/* SECINFO_NO_NAME (4.1) of the pseudo root: the flavors of the exports
	 * beneath it (RFC 8881 §2.6.3.1.1.3), data's sys:none and ro's sys; it
	 * consumes the current filehandle (RFC 8881 §18.45.3). */
	begin(ME, 1, 4);
	op(OP_SEQUENCE);
	op(OP_PUTROOTFH);
	op(OP_SECINFO_NO_NAME);
	xdr_enc_u32(&t->req, SECINFO_STYLE4_CURRENT_FH);
	op(OP_GETFH);
	assert_int_equal(run_with(&n, compound41_handler), NFS4ERR_NOFILEHANDLE);
	res(OP_SEQUENCE, NFS4_OK);
	res(OP_PUTROOTFH, NFS4_OK);
	res(OP_SECINFO_NO_NAME, NFS4_OK);
	assert_int_equal(tc_u32(t), 2);
	assert_int_equal(tc_u32(t), RPC_AUTH_SYS);
	assert_int_equal(tc_u32(t), RPC_AUTH_NONE);
	res(OP_GETFH, NFS4ERR_NOFILEHANDLE);
	/* SECINFO_NO_NAME of the export's parent (the pseudo "srv"): data's sys:none. */
	begin(ME, 1, 3);
	op(OP_SEQUENCE);
	op_putfh(&data_fh);
	op(OP_SECINFO_NO_NAME);
	xdr_enc_u32(&t->req, SECINFO_STYLE4_PARENT);
	assert_int_equal(run_with(&n, compound41_handler), NFS4_OK);
	res(OP_SEQUENCE, NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_SECINFO_NO_NAME, NFS4_OK);
	assert_int_equal(tc_u32(t), 2);
	/* ... and of the export itself: sys and none. */
	begin(ME, 1, 3);
	op(OP_SEQUENCE);
	op_putfh(&data_fh);
	op(OP_SECINFO_NO_NAME);
	xdr_enc_u32(&t->req, SECINFO_STYLE4_CURRENT_FH);
	assert_int_equal(run_with(&n, compound41_handler), NFS4_OK);
	res(OP_SEQUENCE, NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_SECINFO_NO_NAME, NFS4_OK);
	assert_int_equal(tc_u32(t), 2);
}

/* AUTH_NONE against the sec=sys export "ro". */
static void secinfo_none(void)
{
	uint32_t n;

	/* AUTH_NONE against the sec=sys export "ro": its files are WRONGSEC, but
	 * SECINFO and SECINFO_NO_NAME answer (RFC 8881 §2.6.3.1.1.5; issue 24 defect 11). */
	unsigned depth = op_walk(top, true), depth_ro = op_walk(exp_ro, true);
	tc_reset(t, ME, 700, UINT32_MAX, 0); /* tag "", minor 0 */
	xdr_enc_u32(&t->req, 0), xdr_enc_u32(&t->req, 0), xdr_enc_u32(&t->req, depth + 2);
	op(OP_PUTROOTFH);
	op_walk(top, false);
	op_name(OP_SECINFO, "ro");
	assert_int_equal(run(&n), NFS4_OK);
	res(OP_PUTROOTFH, NFS4_OK);
	for (unsigned i = 0; i < depth; i++)
		res(OP_LOOKUP, NFS4_OK);
	res(OP_SECINFO, NFS4_OK);
	assert_int_equal(tc_u32(t), 1);
	assert_int_equal(tc_u32(t), RPC_AUTH_SYS);
	struct nfs_fh ro_fh;
	begin(ME, 0, depth_ro + 2); /* its handle, as AUTH_SYS */
	op(OP_PUTROOTFH);
	op_walk(exp_ro, false);
	op(OP_GETFH);
	assert_int_equal(run(&n), NFS4_OK);
	for (unsigned i = 0; i <= depth_ro; i++)
		res(i ? OP_LOOKUP : OP_PUTROOTFH, NFS4_OK);
	res_fh(&ro_fh);
	for (int style = 0; style < 2; style++) {
		tc_reset(t, ME, 700, UINT32_MAX, 0); /* tag "", minor 1 */
		xdr_enc_u32(&t->req, 0), xdr_enc_u32(&t->req, 1), xdr_enc_u32(&t->req, 3);
		op(OP_SEQUENCE);
		op_putfh(&ro_fh);
		op(style ? OP_GETATTR : OP_SECINFO_NO_NAME);
		xdr_enc_u32(&t->req, style ? 0 : SECINFO_STYLE4_CURRENT_FH); /* (GETATTR: an empty bitmap) */
		assert_int_equal(run_with(&n, compound41_handler), style ? NFS4ERR_WRONGSEC : NFS4_OK);
	}
}

/* Forged, stale and foreign handles. */
static void handles_bad(void)
{
	struct nfs_fh forged;
	uint32_t n;

	/* A forged handle: BADHANDLE at PUTFH; a handle of a removed file: STALE at use. */
	forged = data_fh;
	forged.data[10] ^= 0x40;
	begin(ME, 0, 1);
	op_putfh(&forged);
	assert_int_equal(run(&n), NFS4ERR_BADHANDLE);
	struct nfs_fh gone;
	sh("cd %s && touch gone", exp_data);
	begin(ME, 0, 3);
	op_putfh(&data_fh);
	op_name(OP_LOOKUP, "gone");
	op(OP_GETFH);
	assert_int_equal(run(&n), NFS4_OK);
	res(OP_PUTFH, NFS4_OK);
	res(OP_LOOKUP, NFS4_OK);
	res_fh(&gone);
	sh("rm %s/gone", exp_data);
	begin(ME, 0, 2);
	op_putfh(&gone);
	op_getattr(ATTR_W0, 0);
	assert_int_equal(run(&n), NFS4ERR_STALE);
	/* A client admitted nowhere cannot use the export's handle. */
	begin(STRANGER, 0, 2);
	op_putfh(&data_fh);
	op_getattr(ATTR_W0, 0);
	assert_int_equal(run(&n), NFS4ERR_ACCESS);
}

static void test_secinfo_and_handles(void **state)
{
	(void)state;
	data_root();
	secinfo_data();
	secinfo_none();
	handles_bad();
}

/* EXCHANGE_ID + CREATE_SESSION through the real table; the session id. */
static void make_session(uint8_t sid[16])
{
	uint64_t clientid;
	uint32_t n, seq, len;
	const uint8_t *p;

	begin(ME, 1, 1);
	op(OP_EXCHANGE_ID);
	xdr_enc_fixed(&t->req, "verifier", 8);
	tc_put_name(t, "test-nfs4-proc-client");
	xdr_enc_u32(&t->req, 0); /* flags */
	xdr_enc_u32(&t->req, 0); /* SP4_NONE */
	xdr_enc_u32(&t->req, 0); /* no implementation id */
	assert_int_equal(run(&n), NFS4_OK);
	res(OP_EXCHANGE_ID, NFS4_OK);
	clientid = tc_u64(t);
	seq = tc_u32(t);
	tc_u32(t);
	assert_int_equal(tc_u32(t), 0); /* SP4_NONE */
	tc_u64(t);
	/* RFC 8881 §2.10.4-2.10.5: owner major id and scope are the host name
	 * (two rnfsd hosts must never look like one server to a client). */
	char host[256] = "";
	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	if (!host[0])
		strcpy(host, "rnfsd"); /* no host name: the fallback */
	p = tc_opaque(t, &len);
	assert_int_equal(len, strlen(host));
	assert_memory_equal(p, host, len);
	p = tc_opaque(t, &len);
	assert_int_equal(len, strlen(host));
	assert_memory_equal(p, host, len);
	assert_int_equal(tc_u32(t), 0);
	assert_int_equal(tc_remaining(t), 0);

	begin(ME, 1, 1);
	op(OP_CREATE_SESSION);
	xdr_enc_u64(&t->req, clientid);
	xdr_enc_u32(&t->req, seq);
	xdr_enc_u32(&t->req, 3); /* persist, back channel: not granted */
	for (int ch = 0; ch < 2; ch++) {
		const uint32_t v[] = { 0, 1 << 20, 1 << 20, 4096, 16, 8, 0 };
		for (int i = 0; i < 7; i++)
			xdr_enc_u32(&t->req, v[i]);
	}
	xdr_enc_u32(&t->req, 0x40000000); /* cb_program */
	xdr_enc_u32(&t->req, 1);
	xdr_enc_u32(&t->req, 0); /* AUTH_NONE */
	assert_int_equal(run(&n), NFS4_OK);
	res(OP_CREATE_SESSION, NFS4_OK);
	memcpy(sid, xdr_dec_inline(&t->res, 16), 16);
	assert_int_equal(tc_u32(t), seq);
	assert_int_equal(tc_u32(t), 0); /* no flags granted */
	tc_u32(t);
	assert_int_equal(tc_u32(t), 1 << 20);
}

static void op_sequence(const uint8_t sid[16], uint32_t seq, bool cachethis)
{
	op(OP_SEQUENCE);
	xdr_enc_fixed(&t->req, sid, 16);
	xdr_enc_u32(&t->req, seq);
	xdr_enc_u32(&t->req, 0);
	xdr_enc_u32(&t->req, 0);
	xdr_enc_u32(&t->req, cachethis);
}

static void test_session_flow(void **state)
{
	uint8_t sid[16], first[512];
	size_t first_len;
	uint32_t n;

	(void)state;
	make_session(sid);
	/* A new request on slot 0, then its retransmission: the same bytes. */
	begin(ME, 1, 3);
	op_sequence(sid, 1, true);
	op(OP_PUTROOTFH);
	op(OP_GETFH);
	assert_int_equal(run(&n), NFS4_OK);
	assert_int_equal(n, 3);
	first_len = (size_t)(t->res.end - t->res.base);
	assert_true(first_len < sizeof(first));
	memcpy(first, t->res.base, first_len);
	begin(ME, 1, 3);
	op_sequence(sid, 1, true);
	op(OP_PUTROOTFH);
	op(OP_GETFH);
	assert_int_equal(run(&n), NFS4_OK);
	assert_int_equal((size_t)(t->res.end - t->res.base), first_len);
	assert_memory_equal(t->res.base, first, first_len);
	/* RECLAIM_COMPLETE once; misordered; uncached retry. */
	begin(ME, 1, 2);
	op_sequence(sid, 2, false);
	op(OP_RECLAIM_COMPLETE);
	xdr_enc_u32(&t->req, 0);
	assert_int_equal(run(&n), NFS4_OK);
	begin(ME, 1, 2);
	op_sequence(sid, 3, false);
	op(OP_RECLAIM_COMPLETE);
	xdr_enc_u32(&t->req, 0);
	assert_int_equal(run(&n), NFS4ERR_COMPLETE_ALREADY);
	begin(ME, 1, 1);
	op_sequence(sid, 3, false);
	assert_int_equal(run(&n), NFS4ERR_RETRY_UNCACHED_REP);
	begin(ME, 1, 1);
	op_sequence(sid, 9, false);
	assert_int_equal(run(&n), NFS4ERR_SEQ_MISORDERED);
	/* Gone: DESTROY_SESSION alone (session-less), then the session is bad. */
	begin(ME, 1, 1);
	op(OP_DESTROY_SESSION);
	xdr_enc_fixed(&t->req, sid, 16);
	assert_int_equal(run(&n), NFS4_OK);
	begin(ME, 1, 1);
	op_sequence(sid, 4, false);
	assert_int_equal(run(&n), NFS4ERR_BADSESSION);
}

/* PUTFH data, LOOKUP file, then op with the fattr4 {bitmap words, values}. */
static uint32_t verify_file(uint32_t opnum, const uint32_t *words, uint32_t nwords, const uint32_t *vals, uint32_t nvals)
{
	uint32_t n;

	begin(ME, 0, 3);
	op_putfh(&data_fh);
	op_name(OP_LOOKUP, "file");
	op(opnum);
	xdr_enc_u32(&t->req, nwords);
	for (uint32_t i = 0; i < nwords; i++)
		xdr_enc_u32(&t->req, words[i]);
	xdr_enc_u32(&t->req, nvals * 4);
	for (uint32_t i = 0; i < nvals; i++)
		xdr_enc_u32(&t->req, vals[i]);
	return run(&n);
}

/* pynfs VF1-VF7, NVF1-NVF7: VERIFY / NVERIFY against what GETATTR says. */
static void test_verify(void **state)
{
	const uint32_t type = 1u << FATTR4_TYPE, reg = NF4REG, dir = NF4DIR;
	const uint32_t rdattr_error = 1u << FATTR4_RDATTR_ERROR, acl = 1u << FATTR4_ACL;
	uint32_t far[32] = { 0 }, n;

	(void)state;
	data_root();
	assert_int_equal(verify_file(OP_VERIFY, &type, 1, &reg, 1), NFS4_OK);
	assert_int_equal(verify_file(OP_VERIFY, &type, 1, &dir, 1), NFS4ERR_NOT_SAME);
	assert_int_equal(verify_file(OP_NVERIFY, &type, 1, &reg, 1), NFS4ERR_SAME);
	assert_int_equal(verify_file(OP_NVERIFY, &type, 1, &dir, 1), NFS4_OK);
	/* The values' length matters: a short attrlist does not decode (RFC 8881 §15.1.1.3). */
	assert_int_equal(verify_file(OP_VERIFY, &type, 1, &reg, 0), NFS4ERR_BADXDR);
	/* RFC 8881 §18.31.3: rdattr_error INVAL, unsupported attributes ATTRNOTSUPP. */
	assert_int_equal(verify_file(OP_VERIFY, &rdattr_error, 1, &reg, 1), NFS4ERR_INVAL);
	assert_int_equal(verify_file(OP_NVERIFY, &acl, 1, &reg, 1), NFS4ERR_ATTRNOTSUPP);
	far[31] = 1u << (1000 % 32);
	assert_int_equal(verify_file(OP_VERIFY, far, 32, &reg, 1), NFS4ERR_ATTRNOTSUPP);
	/* A truncated fattr4 is BADXDR. */
	begin(ME, 0, 3);
	op_putfh(&data_fh);
	op_name(OP_LOOKUP, "file");
	op(OP_VERIFY);
	xdr_enc_u32(&t->req, 1);
	xdr_enc_u32(&t->req, type);
	xdr_enc_u32(&t->req, 8);
	xdr_enc_u32(&t->req, reg);
	assert_int_equal(run(&n), NFS4ERR_BADXDR);
}

/* pynfs PUB1, RDDR7, VF5/NVF5: PUTPUBFH is PUTROOTFH; READDIR of an empty
 * directory with a maxcount below the empty reply (16 bytes) is TOOSMALL;
 * VERIFY of a write-only attribute is INVAL. */
static void test_pynfs_corners(void **state)
{
	const uint32_t access_set[2] = { 0, 1u << (48 - 32) }, zero_val = 0;
	const uint8_t zero[8] = { 0 };
	struct nfs_fh root, pub;
	uint32_t n;

	(void)state;
	data_root();
	for (uint32_t putop = OP_PUTPUBFH; putop <= OP_PUTROOTFH; putop++) {
		begin(ME, 0, 2);
		op(putop);
		op(OP_GETFH);
		assert_int_equal(run(&n), NFS4_OK);
		res(putop, NFS4_OK);
		res_fh(putop == OP_PUTPUBFH ? &pub : &root);
	}
	assert_int_equal(pub.len, root.len);
	assert_memory_equal(pub.data, root.data, root.len);
	for (uint32_t max = 0; max <= 16; max += max < 15 ? 15 : 1) {
		begin(ME, 0, 3);
		op_putfh(&data_fh);
		op_name(OP_LOOKUP, "dir");
		op_readdir(0, zero, max);
		assert_int_equal(run(&n), max < 16 ? NFS4ERR_TOOSMALL : NFS4_OK);
	}
	assert_int_equal(verify_file(OP_VERIFY, access_set, 2, &zero_val, 1), NFS4ERR_INVAL);
	assert_int_equal(verify_file(OP_NVERIFY, access_set, 2, &zero_val, 1), NFS4ERR_INVAL);
}

/* EXCHANGE_ID with flags (and a second operation after it when extra). */
static uint32_t exchange_id(const char *owner, uint32_t flags, bool extra, uint64_t *clientid, uint32_t *seq)
{
	uint32_t n, status;

	begin(ME, 1, extra ? 2 : 1);
	op(OP_EXCHANGE_ID);
	xdr_enc_fixed(&t->req, "verifier", 8);
	tc_put_name(t, owner);
	xdr_enc_u32(&t->req, flags);
	xdr_enc_u32(&t->req, 0); /* SP4_NONE */
	xdr_enc_u32(&t->req, 0);
	if (extra)
		op(OP_PUTROOTFH);
	status = run(&n);
	if (status == NFS4_OK) {
		res(OP_EXCHANGE_ID, NFS4_OK);
		*clientid = tc_u64(t);
		*seq = tc_u32(t);
	}
	return status;
}

static uint32_t create_session(uint64_t clientid, uint32_t seq, uint32_t flags, uint32_t maxreq, uint32_t maxresp,
			       bool extra)
{
	uint32_t n;

	begin(ME, 1, extra ? 2 : 1);
	op(OP_CREATE_SESSION);
	xdr_enc_u64(&t->req, clientid);
	xdr_enc_u32(&t->req, seq);
	xdr_enc_u32(&t->req, flags);
	for (int ch = 0; ch < 2; ch++) {
		const uint32_t v[] = { 0, maxreq, maxresp, 4096, 16, 8, 0 };
		for (int i = 0; i < 7; i++)
			xdr_enc_u32(&t->req, v[i]);
	}
	xdr_enc_u32(&t->req, 0x40000000);
	xdr_enc_u32(&t->req, 1);
	xdr_enc_u32(&t->req, 0);
	if (extra)
		op(OP_PUTROOTFH);
	return run(&n);
}

/* pynfs EID4, EID8, CSESS15, CSESS23, CSESS25, CSESS28, DESCID7: argument
 * and position errors of the session operations. */
static void test_session_errors(void **state)
{
	uint64_t clientid;
	uint32_t seq, n;

	(void)state;
	/* RFC 8881 §18.35.3: undefined flags, and the server's CONFIRMED_R, are INVAL. */
	assert_int_equal(exchange_id("errs", 0x4, false, &clientid, &seq), NFS4ERR_INVAL);
	assert_int_equal(exchange_id("errs", 0x80000000u, false, &clientid, &seq), NFS4ERR_INVAL);
	/* ... not alone without SEQUENCE: NOT_ONLY_OP. */
	assert_int_equal(exchange_id("errs", 0, true, &clientid, &seq), NFS4ERR_NOT_ONLY_OP);
	assert_int_equal(exchange_id("errs", 0x00010001u, false, &clientid, &seq), NFS4_OK);
	/* RFC 8881 §18.36.3: undefined csa_flags INVAL, alone, a fore channel too small for SEQUENCE. */
	assert_int_equal(create_session(clientid, seq, 0xf, 8192, 8192, false), NFS4ERR_INVAL);
	assert_int_equal(create_session(clientid, seq, 0, 8192, 8192, true), NFS4ERR_NOT_ONLY_OP);
	assert_int_equal(create_session(clientid, seq, 0, 20, 8192, false), NFS4ERR_TOOSMALL);
	assert_int_equal(create_session(clientid, seq, 0, 8192, 0, false), NFS4ERR_TOOSMALL);
	assert_int_equal(create_session(clientid, seq, 0, 8192, 8192, false), NFS4_OK);
	/* RFC 8881 §18.50.3: DESTROY_CLIENTID alone without SEQUENCE. */
	begin(ME, 1, 2);
	op(OP_DESTROY_CLIENTID);
	xdr_enc_u64(&t->req, clientid);
	op(OP_RECLAIM_COMPLETE);
	xdr_enc_u32(&t->req, 1);
	assert_int_equal(run(&n), NFS4ERR_NOT_ONLY_OP);
}

/* errno -> nfsstat4 (nfs/common/errmap.c): v3's numbers where both name the error. */
static void test_errno_map(void **state)
{
	(void)state;
	assert_int_equal(nfs_errno_to_nfsstat4(0), NFS4_OK);
	assert_int_equal(nfs_errno_to_nfsstat4(ENOENT), NFS4ERR_NOENT);
	assert_int_equal(nfs_errno_to_nfsstat4(EACCES), NFS4ERR_ACCESS);
	assert_int_equal(nfs_errno_to_nfsstat4(ESTALE), NFS4ERR_STALE);
	assert_int_equal(nfs_errno_to_nfsstat4(EAGAIN), NFS4ERR_DELAY);
	assert_int_equal(nfs_errno_to_nfsstat4(BE_EBADCOOKIE), NFS4ERR_BAD_COOKIE);
	assert_int_equal(nfs_errno_to_nfsstat4(BE_EBADHANDLE), NFS4ERR_BADHANDLE);
	assert_int_equal(nfs_errno_to_nfsstat4(ENODEV), NFS4ERR_NXIO);
	assert_int_equal(nfs_errno_to_nfsstat4(EREMOTE), NFS4ERR_SERVERFAULT);
	assert_int_equal(nfs_errno_to_nfsstat4(BE_ENOTSYNC), NFS4ERR_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_to_export),
		cmocka_unit_test(test_in_export),
		cmocka_unit_test(test_lookupp_and_access),
		cmocka_unit_test(test_session_errors),
		cmocka_unit_test(test_verify),
		cmocka_unit_test(test_pynfs_corners),
		cmocka_unit_test(test_readdir),
		cmocka_unit_test(test_secinfo_and_handles),
		cmocka_unit_test(test_session_flow),
		cmocka_unit_test(test_errno_map),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
