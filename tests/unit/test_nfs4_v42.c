/*
 * test_nfs4_v42.c - the NFSv4.2 operations and the xattr operations
 * (nfs/v4/ops/nfs4_proc_v42.c, nfs4_proc_copy.c, nfs4_proc_xattr.c) through the
 * real operation table (minor version 2, SEQUENCE stubbed) against the local
 * backend on a temporary directory: SEEK on a sparse file (data, holes, the
 * trailing hole with sr_eof, NXIO past the end, UNION_NOTSUPP), ALLOCATE and
 * DEALLOCATE seen with lseek(2) on the host (the size kept), READ_PLUS's hole
 * and data segments (the data the reply's one DDP item, RFC 8267 §4.1),
 * COPY's bytes and its INVAL/NOTSUPP/NOFILEHANDLE/XDEV cases, CLONE (NOTSUPP exactly when the host's file system refuses FICLONE),
 * OFFLOAD_STATUS/CANCEL, the xattr round trip (create/replace flags,
 * LISTXATTRS cookies and maxcount, NOXATTR, names, XATTR2BIG), the 4.2
 * attributes and ACCESS's xattr bits; ROFS on a read-only export, squashing
 * on a root_squash export, BAD_STATEID for a stateid of no state.
 * Needs root (open_by_handle_at); skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/fs.h>

#include <cmocka.h>

#include "nfs/nfs.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/xdr/nfs4_v42.h"
#include "test_nfs_harness.h"

#define ME "127.0.0.1"
#define MIB (1u << 20)

static char top[64], exp_rw[128], exp_sq[128], exp_ro[128], exp_b[128];
static struct nfs_fh fh_rw, fh_sq, fh_ro, fh_b, fh_root;
static struct tcall *t;
static struct nfs4_op ops42[NFS4_OP_COUNT];

static void sh(const char *fmt, const char *arg)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg);
	assert_int_equal(system(cmd), 0);
}

static uint32_t seq_stub(struct nfs4_ctx *x, void *args, void *res)
{
	(void)x, (void)args, (void)res;
	return NFS4_OK;
}

/* The real table, SEQUENCE doing nothing (sessions are test_nfs4_proc's). */
static enum rpc_proc_status handler(struct rpc_call *c)
{
	memcpy(ops42, nfs4_ops, sizeof(ops42));
	ops42[OP_SEQUENCE] = (struct nfs4_op){ .name = "SEQUENCE", .execute = seq_stub };
	return nfs4_compound_with(c, ops42);
}

/* ---- COMPOUNDs: SEQUENCE, then numops operations ---- */

static uint32_t minor = 2;

static void begin(uint32_t numops)
{
	tc_reset(t, ME, 700, 0, 0);
	xdr_enc_u32(&t->req, 0);
	xdr_enc_u32(&t->req, minor);
	xdr_enc_u32(&t->req, numops + (minor ? 1 : 0));
	if (minor)
		xdr_enc_u32(&t->req, OP_SEQUENCE);
}

static void op(uint32_t num)
{
	xdr_enc_u32(&t->req, num);
}

static void put_str(const char *s)
{
	xdr_enc_opaque(&t->req, s, (uint32_t)strlen(s));
}

static void op_putfh(const struct nfs_fh *fh)
{
	op(OP_PUTFH);
	tc_put_fh(t, fh);
}

/* PUTFH dir, LOOKUP name (name NULL: dir itself). */
static void op_file(const struct nfs_fh *dir, const char *name)
{
	op_putfh(dir);
	if (name) {
		op(OP_LOOKUP);
		put_str(name);
	}
}

/* stateid: seqid 0 and other all fill (0: anonymous, 0xff with seqid ~0: bypass). */
static void put_sid(uint32_t seqid, uint8_t fill)
{
	uint8_t o[12];

	memset(o, fill, sizeof(o));
	xdr_enc_u32(&t->req, seqid);
	xdr_enc_fixed(&t->req, o, 12);
}

static void res(uint32_t want_op, uint32_t want_status)
{
	assert_int_equal(tc_u32(t), want_op);
	assert_int_equal(tc_u32(t), want_status);
}

/* Runs; returns the COMPOUND's status; t->res after the first nskip results (all NFS4_OK). */
static uint32_t run(unsigned nskip)
{
	uint32_t len, status;

	assert_int_equal(tc_run(t, handler), RPC_PROC_OK);
	status = tc_u32(t);
	tc_opaque(t, &len);
	tc_u32(t);
	if (minor)
		res(OP_SEQUENCE, NFS4_OK);
	for (unsigned i = 0; i < nskip; i++) {
		tc_u32(t);
		assert_int_equal(tc_u32(t), NFS4_OK);
	}
	return status;
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
	assert_int_equal(run(1 + n), NFS4_OK);
	tc_u32(t);
	tc_u32(t);
	tc_fh(t, fh);
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
	if (tc_fixture_dir("nfs4_v42", top, sizeof(top)) < 0)
		return -1;
	snprintf(exp_rw, sizeof(exp_rw), "%s/rw", top);
	snprintf(exp_sq, sizeof(exp_sq), "%s/sq", top);
	snprintf(exp_ro, sizeof(exp_ro), "%s/ro", top);
	snprintf(exp_b, sizeof(exp_b), "%s/b", top);
	sh("mkdir -p %s", exp_rw);
	sh("mkdir -p %s && chmod 1777 %s", exp_sq);
	sh("mkdir -p %s", exp_ro);
	sh("mkdir -p %s", exp_b);
	snprintf(text, sizeof(text),
		 "%s " ME "(rw,no_root_squash,insecure)\n%s " ME "(rw,insecure)\n"
		 "%s " ME "(ro,no_root_squash,insecure)\n%s " ME "(rw,no_root_squash,insecure)\n",
		 exp_rw, exp_sq, exp_ro, exp_b);
	if (tc_fixture_start(top, text, true, &t) < 0)
		return -1;
	/* sparse: 4 MiB, data only in [1 MiB, 1 MiB + 4 KiB) */
	sh("cd %s && truncate -s 4M sparse && printf 'DATA' | dd of=sparse bs=4096 seek=256 conv=notrunc status=none", exp_rw);
	sh("cd %s && head -c 3000000 /dev/urandom > src && echo hello > small", exp_rw);
	sh("cd %s && truncate -s 4M sparse && echo hello > file", exp_ro);
	sh("cd %s && echo other > other", exp_b);
	sh("cd %s && echo root-owned > rootfile && chmod 644 rootfile", exp_sq);
	walk(exp_rw, &fh_rw);
	walk(exp_sq, &fh_sq);
	walk(exp_ro, &fh_ro);
	walk(exp_b, &fh_b);
	walk("/", &fh_root);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tc_fixture_stop(top, t);
	return 0;
}

/* ---- SEEK ---- */

static uint32_t seek(const struct nfs_fh *dir, const char *name, uint32_t seqid, uint8_t fill, uint64_t off,
		     uint32_t what, bool *eof, uint64_t *where)
{
	uint32_t st;

	begin(name ? 3 : 2);
	op_file(dir, name);
	op(OP_SEEK);
	put_sid(seqid, fill);
	xdr_enc_u64(&t->req, off);
	xdr_enc_u32(&t->req, what);
	st = run(name ? 2 : 1);
	res(OP_SEEK, st);
	if (st == NFS4_OK) {
		*eof = tc_u32(t);
		*where = tc_u64(t);
	}
	return st;
}

static void test_seek(void **state)
{
	bool eof = false;
	uint64_t at = 0;

	(void)state;
	assert_int_equal(seek(&fh_rw, "sparse", 0, 0, 0, NFS4_CONTENT_DATA, &eof, &at), NFS4_OK);
	assert_int_equal(at, MIB);
	assert_false(eof);
	assert_int_equal(seek(&fh_rw, "sparse", 0, 0, 4, NFS4_CONTENT_HOLE, &eof, &at), NFS4_OK);
	assert_int_equal(at, 4);
	assert_false(eof);
	assert_int_equal(seek(&fh_rw, "sparse", 0, 0, MIB, NFS4_CONTENT_HOLE, &eof, &at), NFS4_OK);
	assert_int_equal(at, MIB + 4096);
	assert_false(eof);
	/* RFC 7862 §15.11.3: no data after the offset: OK with sr_eof. */
	assert_int_equal(seek(&fh_rw, "sparse", 0, 0, 2 * MIB, NFS4_CONTENT_DATA, &eof, &at), NFS4_OK);
	assert_true(eof);
	assert_int_equal(at, 4 * MIB);
	/* the bypass stateid reads too; a read-only export may be sought in */
	assert_int_equal(seek(&fh_rw, "small", UINT32_MAX, 0xff, 0, NFS4_CONTENT_HOLE, &eof, &at), NFS4_OK);
	assert_int_equal(at, 6);
	assert_true(eof);
	assert_int_equal(seek(&fh_ro, "sparse", 0, 0, 0, NFS4_CONTENT_DATA, &eof, &at), NFS4_OK);
	assert_true(eof);
	/* past the end, other contents, a directory, a stateid of no state */
	assert_int_equal(seek(&fh_rw, "sparse", 0, 0, 4 * MIB, NFS4_CONTENT_DATA, &eof, &at), NFS4ERR_NXIO);
	assert_int_equal(seek(&fh_rw, "sparse", 0, 0, 0, 2, &eof, &at), NFS4ERR_UNION_NOTSUPP);
	assert_int_equal(seek(&fh_rw, NULL, 0, 0, 0, NFS4_CONTENT_DATA, &eof, &at), NFS4ERR_ISDIR);
	assert_int_equal(seek(&fh_rw, "sparse", 1, 7, 0, NFS4_CONTENT_DATA, &eof, &at), NFS4ERR_BAD_STATEID);
}

/* ---- ALLOCATE, DEALLOCATE ---- */

static uint32_t alloc(uint32_t opnum, const struct nfs_fh *dir, const char *name, uint64_t off, uint64_t len)
{
	uint32_t st;

	begin(name ? 3 : 2);
	op_file(dir, name);
	op(opnum);
	put_sid(0, 0);
	xdr_enc_u64(&t->req, off);
	xdr_enc_u64(&t->req, len);
	st = run(name ? 2 : 1);
	res(opnum, st);
	return st;
}

static void test_allocate(void **state)
{
	char p[256];
	struct stat st;
	blkcnt_t blocks;
	int fd;

	(void)state;
	sh("cd %s && head -c 65536 /dev/urandom > punch", exp_rw);
	path_of(p, sizeof(p), exp_rw, "punch");
	/* RFC 7862 §15.4.3: DEALLOCATE makes a hole and keeps the size. */
	assert_int_equal(alloc(OP_DEALLOCATE, &fh_rw, "punch", 16384, 16384), NFS4_OK);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 65536);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 0, SEEK_HOLE), 16384);
	assert_int_equal(lseek(fd, 16384, SEEK_DATA), 32768);
	/* ALLOCATE gives the range blocks again (unwritten extents: lseek may still call
	 * them a hole) and grows the file past its end. */
	assert_int_equal(fstat(fd, &st), 0);
	blocks = st.st_blocks;
	assert_int_equal(alloc(OP_ALLOCATE, &fh_rw, "punch", 16384, 16384), NFS4_OK);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_blocks >= blocks + 16384 / 512);
	assert_int_equal(alloc(OP_ALLOCATE, &fh_rw, "punch", 65536, 65536), NFS4_OK);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 131072);
	close(fd);
	/* ROFS, a directory, a length of 0 (fallocate's EINVAL). */
	assert_int_equal(alloc(OP_DEALLOCATE, &fh_ro, "file", 0, 4096), NFS4ERR_ROFS);
	assert_int_equal(alloc(OP_ALLOCATE, &fh_ro, "file", 0, 4096), NFS4ERR_ROFS);
	assert_int_equal(alloc(OP_ALLOCATE, &fh_rw, NULL, 0, 4096), NFS4ERR_ISDIR);
	assert_int_equal(alloc(OP_ALLOCATE, &fh_rw, "punch", 0, 0), NFS4ERR_INVAL);
	/* root is squashed to nobody there, who may not write root's 0644 file. */
	assert_int_equal(alloc(OP_DEALLOCATE, &fh_sq, "rootfile", 0, 4096), NFS4ERR_ACCESS);
}

/* ---- READ_PLUS ---- */

struct seg {
	uint32_t type;
	uint64_t off, len;
	uint8_t first;
};

static uint32_t read_plus(const char *name, uint64_t off, uint32_t count, bool *eof, struct seg *segs, uint32_t *n)
{
	uint32_t st, len;
	const uint8_t *d;

	begin(name ? 3 : 2);
	op_file(&fh_rw, name);
	op(OP_READ_PLUS);
	put_sid(0, 0);
	xdr_enc_u64(&t->req, off);
	xdr_enc_u32(&t->req, count);
	st = run(name ? 2 : 1);
	res(OP_READ_PLUS, st);
	if (st != NFS4_OK)
		return st;
	*eof = tc_u32(t);
	*n = tc_u32(t);
	assert_true(*n <= NFS4_READ_PLUS_SEGS);
	for (uint32_t i = 0; i < *n; i++) {
		segs[i].type = tc_u32(t);
		segs[i].off = tc_u64(t);
		if (segs[i].type == NFS4_CONTENT_HOLE) {
			segs[i].len = tc_u64(t);
			continue;
		}
		d = tc_opaque(t, &len);
		segs[i].len = len;
		segs[i].first = len ? d[0] : 0;
	}
	assert_int_equal(tc_remaining(t), 0);
	return st;
}

static void test_read_plus(void **state)
{
	struct seg s[NFS4_READ_PLUS_SEGS];
	uint32_t n = 0;
	bool eof = true;

	(void)state;
	/* RFC 7862 §15.10.3: a hole as a hole, the data as data, a hole after it. */
	assert_int_equal(read_plus("sparse", MIB - 65536, MIB, &eof, s, &n), NFS4_OK);
	assert_int_equal(n, 3);
	assert_false(eof);
	assert_true(s[0].type == NFS4_CONTENT_HOLE && s[0].off == MIB - 65536 && s[0].len == 65536);
	assert_true(s[1].type == NFS4_CONTENT_DATA && s[1].off == MIB && s[1].first == 'D' && s[1].len == 4096);
	assert_true(s[2].type == NFS4_CONTENT_HOLE && s[2].off == MIB + 4096 && s[2].len == MIB - 65536 - 4096);
	/* RFC 8267 §4.1: the data segment is the result's one DDP item (a Write chunk over RDMA) */
	assert_int_equal(t->c.n_ddp_out, 1);
	assert_int_equal(t->c.ddp_out[0].len, 4096);
	/* a count beyond NFS4_MAX_IO covers NFS4_MAX_IO bytes (here: all hole) */
	assert_int_equal(read_plus("sparse", 0, 2 * MIB, &eof, s, &n), NFS4_OK);
	assert_true(n == 1 && s[0].type == NFS4_CONTENT_HOLE && s[0].len == MIB && !eof);
	assert_int_equal(t->c.n_ddp_out, 0); /* holes move no bytes */
	/* the trailing hole, up to the end: rpr_eof */
	assert_int_equal(read_plus("sparse", 3 * MIB, MIB, &eof, s, &n), NFS4_OK);
	assert_true(eof);
	assert_int_equal(n, 1);
	assert_true(s[0].type == NFS4_CONTENT_HOLE && s[0].off == 3 * MIB && s[0].len == MIB);
	/* a file without holes: one data segment; past the end: nothing, eof */
	assert_int_equal(read_plus("small", 0, 100, &eof, s, &n), NFS4_OK);
	assert_true(eof);
	assert_int_equal(n, 1);
	assert_true(s[0].type == NFS4_CONTENT_DATA && s[0].len == 6 && s[0].first == 'h');
	assert_int_equal(read_plus("small", 100, 100, &eof, s, &n), NFS4_OK);
	assert_true(eof);
	assert_int_equal(n, 0);
	assert_int_equal(read_plus(NULL, 0, 100, &eof, s, &n), NFS4ERR_ISDIR);
}

/* ---- COPY, CLONE, OFFLOAD_* ---- */

/* PUTFH sdir, LOOKUP src, SAVEFH, PUTFH ddir, LOOKUP dst, COPY or CLONE. */
static uint32_t copy(uint32_t opnum, const struct nfs_fh *sdir, const char *src, const struct nfs_fh *ddir,
		     const char *dst, uint64_t soff, uint64_t doff, uint64_t count, uint32_t nsrc, uint64_t *copied,
		     uint32_t *committed)
{
	uint32_t st;

	begin(src ? 6 : 3);
	if (src) {
		op_file(sdir, src);
		op(OP_SAVEFH);
	}
	op_file(ddir, dst);
	op(opnum);
	put_sid(0, 0);
	put_sid(0, 0);
	xdr_enc_u64(&t->req, soff);
	xdr_enc_u64(&t->req, doff);
	xdr_enc_u64(&t->req, count);
	if (opnum == OP_COPY) {
		xdr_enc_u32(&t->req, 1);
		xdr_enc_u32(&t->req, 0);
		xdr_enc_u32(&t->req, nsrc);
		for (uint32_t i = 0; i < nsrc; i++)
			xdr_enc_u32(&t->req, 1), put_str("elsewhere");
	}
	st = run(src ? 5 : 2);
	res(opnum, st);
	if (st == NFS4_OK && opnum == OP_COPY) {
		assert_int_equal(tc_u32(t), 0); /* no callback id: synchronous */
		*copied = tc_u64(t);
		*committed = tc_u32(t);
		tc_u64(t);
		assert_int_equal(tc_u32(t), 1);
		assert_int_equal(tc_u32(t), 1);
	}
	return st;
}

static bool same_bytes(const char *a, const char *b, off_t aoff, off_t boff, size_t n)
{
	static uint8_t x[1 << 16], y[1 << 16];
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
	bool same = fa >= 0 && fb >= 0;

	while (same && n) {
		size_t k = n < sizeof(x) ? n : sizeof(x);
		same = pread(fa, x, k, aoff) == (ssize_t)k && pread(fb, y, k, boff) == (ssize_t)k && !memcmp(x, y, k);
		aoff += (off_t)k, boff += (off_t)k, n -= k;
	}
	close(fa);
	close(fb);
	return same;
}

static void test_copy(void **state)
{
	char ps[256], pd[256];
	uint64_t n = 0;
	uint32_t committed = 99;
	struct stat st;

	(void)state;
	sh("cd %s && : > dst", exp_rw);
	path_of(ps, sizeof(ps), exp_rw, "src");
	path_of(pd, sizeof(pd), exp_rw, "dst");
	/* count 0: to the source's end (RFC 7862 §15.2.3); a sync export answers FILE_SYNC4. */
	assert_int_equal(copy(OP_COPY, &fh_rw, "src", &fh_rw, "dst", 0, 0, 0, 0, &n, &committed), NFS4_OK);
	assert_int_equal(n, 3000000);
	assert_int_equal(committed, 2 /* FILE_SYNC4 */);
	assert_true(same_bytes(ps, pd, 0, 0, 3000000));
	/* a range at odd offsets */
	assert_int_equal(copy(OP_COPY, &fh_rw, "src", &fh_rw, "dst", 12345, 5000001, 77777, 0, &n, &committed),
			 NFS4_OK);
	assert_int_equal(n, 77777);
	assert_int_equal(stat(pd, &st), 0);
	assert_int_equal(st.st_size, 5000001 + 77777);
	assert_true(same_bytes(ps, pd, 12345, 5000001, 77777));
	/* past the source's end, inter-server, no saved filehandle, two exports, read-only destination */
	assert_int_equal(copy(OP_COPY, &fh_rw, "src", &fh_rw, "dst", 2999999, 0, 2, 0, &n, &committed), NFS4ERR_INVAL);
	assert_int_equal(copy(OP_COPY, &fh_rw, "src", &fh_rw, "dst", 3000001, 0, 0, 0, &n, &committed), NFS4ERR_INVAL);
	assert_int_equal(copy(OP_COPY, &fh_rw, "src", &fh_rw, "dst", 0, 0, 10, 1, &n, &committed), NFS4ERR_NOTSUPP);
	assert_int_equal(copy(OP_COPY, NULL, NULL, &fh_rw, "dst", 0, 0, 10, 0, &n, &committed), NFS4ERR_NOFILEHANDLE);
	assert_int_equal(copy(OP_COPY, &fh_b, "other", &fh_rw, "dst", 0, 0, 1, 0, &n, &committed), NFS4ERR_XDEV);
	assert_int_equal(copy(OP_COPY, &fh_rw, "src", &fh_ro, "file", 0, 0, 1, 0, &n, &committed), NFS4ERR_ROFS);
	/* the same file, overlapping ranges: copy_file_range's EINVAL */
	assert_int_equal(copy(OP_COPY, &fh_rw, "src", &fh_rw, "src", 0, 10, 100, 0, &n, &committed), NFS4ERR_INVAL);
}

/* Can the host's file system under the export reflink? */
static bool host_can_clone(void)
{
	char a[256], b[256];
	int fa, fb;
	bool ok;

	path_of(a, sizeof(a), exp_rw, "src");
	path_of(b, sizeof(b), exp_rw, "clone-probe");
	fa = open(a, O_RDONLY);
	fb = open(b, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ok = fa >= 0 && fb >= 0 && ioctl(fb, FICLONE, fa) == 0;
	close(fa);
	close(fb);
	unlink(b);
	return ok;
}

static void test_clone(void **state)
{
	char ps[256], pd[256];
	uint64_t n;
	uint32_t c, st;

	(void)state;
	sh("cd %s && : > cloned", exp_rw);
	path_of(ps, sizeof(ps), exp_rw, "src");
	path_of(pd, sizeof(pd), exp_rw, "cloned");
	st = copy(OP_CLONE, &fh_rw, "src", &fh_rw, "cloned", 0, 0, 0, 0, &n, &c);
	if (host_can_clone()) {
		assert_int_equal(st, NFS4_OK);
		assert_true(same_bytes(ps, pd, 0, 0, 3000000));
	} else {
		/* RFC 7862 §15.13.3: a file system that cannot reflink */
		assert_int_equal(st, NFS4ERR_NOTSUPP);
	}
	assert_int_equal(copy(OP_CLONE, &fh_rw, "src", &fh_ro, "file", 0, 0, 0, 0, &n, &c), NFS4ERR_ROFS);
	assert_int_equal(copy(OP_CLONE, NULL, NULL, &fh_rw, "cloned", 0, 0, 0, 0, &n, &c), NFS4ERR_NOFILEHANDLE);
	/* OFFLOAD_STATUS, OFFLOAD_CANCEL: no asynchronous copy exists (§15.8.3, §15.9.3). */
	for (uint32_t o = OP_OFFLOAD_CANCEL; o <= OP_OFFLOAD_STATUS; o++) {
		begin(2);
		op_file(&fh_rw, NULL);
		op(o);
		put_sid(1, 3);
		assert_int_equal(run(1), NFS4ERR_BAD_STATEID);
	}
	/* COPY_NOTIFY: no inter-server copy */
	begin(2);
	op_file(&fh_rw, NULL);
	op(OP_COPY_NOTIFY);
	assert_int_equal(run(1), NFS4ERR_NOTSUPP);
}

/* ---- xattrs ---- */

static uint32_t setx(const struct nfs_fh *dir, const char *name, uint32_t how, const char *key, const void *v,
		     uint32_t vlen)
{
	uint32_t st;

	begin(name ? 3 : 2);
	op_file(dir, name);
	op(OP_SETXATTR);
	xdr_enc_u32(&t->req, how);
	put_str(key);
	xdr_enc_opaque(&t->req, v, vlen);
	st = run(name ? 2 : 1);
	res(OP_SETXATTR, st);
	if (st == NFS4_OK) {
		tc_u32(t); /* change_info4 */
		tc_u64(t);
		tc_u64(t);
	}
	return st;
}

static uint32_t getx(const struct nfs_fh *dir, const char *name, uint32_t opnum, const char *key, char *out,
		     size_t cap)
{
	const uint8_t *v;
	uint32_t st, len;

	begin(name ? 3 : 2);
	op_file(dir, name);
	op(opnum);
	put_str(key);
	st = run(name ? 2 : 1);
	res(opnum, st);
	if (st == NFS4_OK && opnum == OP_GETXATTR) {
		v = tc_opaque(t, &len);
		assert_true(len < cap);
		memcpy(out, v, len);
		out[len] = 0;
	}
	return st;
}

/* LISTXATTRS: the names joined with ',' into out; *cookie in and out. */
static uint32_t listx(const struct nfs_fh *dir, const char *name, uint64_t *cookie, uint32_t maxcount, char *out,
		      bool *eof)
{
	const uint8_t *v;
	uint32_t st, n, len;

	begin(name ? 3 : 2);
	op_file(dir, name);
	op(OP_LISTXATTRS);
	xdr_enc_u64(&t->req, *cookie);
	xdr_enc_u32(&t->req, maxcount);
	st = run(name ? 2 : 1);
	res(OP_LISTXATTRS, st);
	out[0] = 0;
	if (st != NFS4_OK)
		return st;
	*cookie = tc_u64(t);
	n = tc_u32(t);
	for (uint32_t i = 0; i < n; i++) {
		v = tc_opaque(t, &len);
		strncat(out, (const char *)v, len);
		strcat(out, ",");
	}
	*eof = tc_u32(t);
	return st;
}

static void test_xattr(void **state)
{
	char p[256], v[128], l[512], big[300];
	uint8_t *huge;
	uint64_t cookie = 0;
	bool eof = false;
	ssize_t n;

	(void)state;
	sh("cd %s && echo x > xf", exp_rw);
	path_of(p, sizeof(p), exp_rw, "xf");
	/* RFC 8276 §8.4.2.3: CREATE, then CREATE again (EXIST), REPLACE of an absent one (NOXATTR). */
	assert_int_equal(setx(&fh_rw, "xf", SETXATTR4_CREATE, "color", "blue", 4), NFS4_OK);
	n = getxattr(p, "user.color", v, sizeof(v));
	assert_int_equal(n, 4); /* stored with the "user." prefix */
	assert_memory_equal(v, "blue", 4);
	assert_int_equal(setx(&fh_rw, "xf", SETXATTR4_CREATE, "color", "red", 3), NFS4ERR_EXIST);
	assert_int_equal(setx(&fh_rw, "xf", SETXATTR4_REPLACE, "shape", "x", 1), NFS4ERR_NOXATTR);
	assert_int_equal(setx(&fh_rw, "xf", SETXATTR4_REPLACE, "color", "green", 5), NFS4_OK);
	assert_int_equal(setx(&fh_rw, "xf", SETXATTR4_EITHER, "shape", "round", 5), NFS4_OK);
	assert_int_equal(getx(&fh_rw, "xf", OP_GETXATTR, "color", v, sizeof(v)), NFS4_OK);
	assert_string_equal(v, "green");
	assert_int_equal(getx(&fh_rw, "xf", OP_GETXATTR, "none", v, sizeof(v)), NFS4ERR_NOXATTR);
	/* a trusted.* xattr on the host never shows */
	assert_int_equal(setxattr(p, "trusted.hidden", "h", 1, 0), 0);
	/* LISTXATTRS: all at once; one per call with the cookie; TOOSMALL; a cookie past the list. */
	assert_int_equal(listx(&fh_rw, "xf", &cookie, 4096, l, &eof), NFS4_OK);
	assert_true(eof);
	assert_int_equal(cookie, 2);
	assert_true(!strcmp(l, "color,shape,") || !strcmp(l, "shape,color,"));
	cookie = 0;
	assert_int_equal(listx(&fh_rw, "xf", &cookie, 16 + 12, l, &eof), NFS4_OK);
	assert_false(eof);
	assert_int_equal(cookie, 1);
	assert_int_equal(listx(&fh_rw, "xf", &cookie, 16 + 12, l, &eof), NFS4_OK);
	assert_true(eof);
	assert_int_equal(cookie, 2);
	cookie = 0;
	assert_int_equal(listx(&fh_rw, "xf", &cookie, 16 + 8, l, &eof), NFS4ERR_TOOSMALL);
	cookie = 3;
	assert_int_equal(listx(&fh_rw, "xf", &cookie, 4096, l, &eof), NFS4ERR_BAD_COOKIE);
	/* REMOVEXATTR, twice */
	assert_int_equal(getx(&fh_rw, "xf", OP_REMOVEXATTR, "color", v, sizeof(v)), NFS4_OK);
	assert_int_equal(getxattr(p, "user.color", v, sizeof(v)), -1);
	assert_int_equal(getx(&fh_rw, "xf", OP_REMOVEXATTR, "color", v, sizeof(v)), NFS4ERR_NOXATTR);
	/* names: empty, too long (250 + "user." is the most), values too large */
	assert_int_equal(getx(&fh_rw, "xf", OP_GETXATTR, "", v, sizeof(v)), NFS4ERR_INVAL);
	memset(big, 'n', 251);
	big[251] = 0;
	assert_int_equal(getx(&fh_rw, "xf", OP_GETXATTR, big, v, sizeof(v)), NFS4ERR_NAMETOOLONG);
	big[250] = 0;
	assert_int_equal(setx(&fh_rw, "xf", SETXATTR4_EITHER, big, "v", 1), NFS4_OK);
	huge = calloc(1, NFS4_XATTR_SIZE_MAX + 1);
	assert_non_null(huge);
	assert_int_equal(setx(&fh_rw, "xf", SETXATTR4_EITHER, "huge", huge, NFS4_XATTR_SIZE_MAX + 1), NFS4ERR_XATTR2BIG);
	free(huge);
	/* ROFS, the pseudo file system (xattr_support false: NOTSUPP), squashed identity */
	assert_int_equal(setx(&fh_ro, "file", SETXATTR4_EITHER, "a", "b", 1), NFS4ERR_ROFS);
	assert_int_equal(getx(&fh_ro, "file", OP_REMOVEXATTR, "a", v, sizeof(v)), NFS4ERR_ROFS);
	assert_int_equal(getx(&fh_ro, "file", OP_GETXATTR, "a", v, sizeof(v)), NFS4ERR_NOXATTR);
	assert_int_equal(getx(&fh_root, NULL, OP_GETXATTR, "a", v, sizeof(v)), NFS4ERR_NOTSUPP);
	assert_int_equal(setx(&fh_sq, "rootfile", SETXATTR4_EITHER, "a", "b", 1), NFS4ERR_ACCESS);
}

/* ---- attributes and ACCESS ---- */

/* GETATTR of word 2 (attributes 64..95) and word 0's supported_attrs: the third word of each. */
static void getattr_w2(const struct nfs_fh *dir, const char *name, uint32_t w2, uint32_t *sup2, uint32_t *got2,
		       uint32_t vals[4])
{
	uint32_t nw, len;

	begin(name ? 3 : 2);
	op_file(dir, name);
	op(OP_GETATTR);
	xdr_enc_u32(&t->req, 3);
	xdr_enc_u32(&t->req, 1u << FATTR4_SUPPORTED_ATTRS);
	xdr_enc_u32(&t->req, 0);
	xdr_enc_u32(&t->req, w2);
	assert_int_equal(run(name ? 2 : 1), NFS4_OK);
	res(OP_GETATTR, NFS4_OK);
	nw = tc_u32(t);
	assert_int_equal(nw, 3);
	tc_u32(t);
	tc_u32(t);
	*got2 = tc_u32(t);
	len = tc_u32(t);
	nw = tc_u32(t); /* supported_attrs: a bitmap4 */
	*sup2 = 0;
	for (uint32_t i = 0; i < nw; i++) {
		uint32_t w = tc_u32(t);
		if (i == 2)
			*sup2 = w;
	}
	for (uint32_t i = 0; i < 4 && tc_remaining(t) >= 4; i++)
		vals[i] = tc_u32(t);
	(void)len;
}

#define W2(a) (1u << ((a) - 64))

static void test_attrs(void **state)
{
	uint32_t sup = 0, got = 0, v[4] = { 0 };
	uint32_t all = W2(FATTR4_CLONE_BLKSIZE) | W2(FATTR4_CHANGE_ATTR_TYPE) | W2(FATTR4_XATTR_SUPPORT);

	(void)state;
	getattr_w2(&fh_rw, "small", all, &sup, &got, v);
	assert_int_equal(sup & all, all);
	/* clone_blksize (the block size), change_attr_type TIME_METADATA, xattr_support true */
	assert_int_equal(got, all);
	assert_true(v[0] >= 512);
	assert_int_equal(v[1], NFS4_CHANGE_TYPE_IS_TIME_METADATA);
	assert_int_equal(v[2], 1);
	/* the pseudo root: no xattrs, no clone, change type undefined */
	getattr_w2(&fh_root, NULL, all, &sup, &got, v);
	assert_int_equal(got, W2(FATTR4_CHANGE_ATTR_TYPE) | W2(FATTR4_XATTR_SUPPORT));
	assert_int_equal(v[0], NFS4_CHANGE_TYPE_IS_UNDEFINED);
	assert_int_equal(v[1], 0);
	/* NFSv4.1 does not have them */
	minor = 1;
	getattr_w2(&fh_rw, "small", all, &sup, &got, v);
	assert_int_equal(sup & all, 0);
	assert_int_equal(got, 0);
	minor = 2;
}

static void access_(const struct nfs_fh *dir, const char *name, uint32_t want, uint32_t *sup, uint32_t *acc)
{
	begin(3);
	op_file(dir, name);
	op(OP_ACCESS);
	xdr_enc_u32(&t->req, want);
	assert_int_equal(run(2), NFS4_OK);
	res(OP_ACCESS, NFS4_OK);
	*sup = tc_u32(t);
	*acc = tc_u32(t);
}

static void test_access(void **state)
{
	uint32_t xa = ACCESS4_XAREAD | ACCESS4_XAWRITE | ACCESS4_XALIST, sup, acc;

	(void)state;
	access_(&fh_rw, "small", xa | 1, &sup, &acc);
	assert_int_equal(sup, xa | 1);
	assert_int_equal(acc, xa | 1);
	/* RFC 8276 §8.4.1: a read-only export writes no xattrs */
	access_(&fh_ro, "file", xa, &sup, &acc);
	assert_int_equal(acc, ACCESS4_XAREAD | ACCESS4_XALIST);
	/* nobody on root's 0644 file: read, no write */
	access_(&fh_sq, "rootfile", xa, &sup, &acc);
	assert_int_equal(acc, ACCESS4_XAREAD | ACCESS4_XALIST);
	/* NFSv4.1: bits it does not know */
	minor = 1;
	access_(&fh_rw, "small", xa | 1, &sup, &acc);
	assert_int_equal(sup, 1);
	minor = 2;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seek),  cmocka_unit_test(test_allocate), cmocka_unit_test(test_read_plus),
		cmocka_unit_test(test_copy),  cmocka_unit_test(test_clone),    cmocka_unit_test(test_xattr),
		cmocka_unit_test(test_attrs), cmocka_unit_test(test_access),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
