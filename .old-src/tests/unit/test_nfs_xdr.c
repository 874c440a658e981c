/*
 * test_nfs_xdr.c - NFSv3/MOUNT argument decoding through the real handlers:
 * each procedure gets a well-formed request (which must decode), then every
 * strict prefix of it (truncation -> GARBAGE_ARGS), out-of-range values
 * (-> GARBAGE_ARGS), and random bytes (GARBAGE_ARGS or an NFS error, never a
 * crash: run under ASan/UBSan). No export table is installed, so a request
 * that decodes stops at the handle check (BADHANDLE).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/test_nfs_harness.h"

typedef enum rpc_proc_status (*handler_fn)(struct rpc_call *);

static struct nfs_fh test_fh = { .len = 32, .data = { 1, 20 } };

static void put_diropargs(struct tcall *t, const char *name)
{
	tc_put_fh(t, &test_fh);
	tc_put_name(t, name);
}

static void put_sattr_full(struct tcall *t)
{
	xdr_enc_bool(&t->req, true);
	xdr_enc_u32(&t->req, 0644);
	xdr_enc_bool(&t->req, true);
	xdr_enc_u32(&t->req, 1000);
	xdr_enc_bool(&t->req, true);
	xdr_enc_u32(&t->req, 1000);
	xdr_enc_bool(&t->req, true);
	xdr_enc_u64(&t->req, 4096);
	xdr_enc_u32(&t->req, NFS3_SET_TO_CLIENT_TIME);
	xdr_enc_u32(&t->req, 1000);
	xdr_enc_u32(&t->req, 999999999);
	xdr_enc_u32(&t->req, NFS3_SET_TO_SERVER_TIME);
}

/* Builds a valid request for proc into t->req. */
static void build_valid(struct tcall *t, unsigned proc)
{
	static const uint8_t data[16] = "0123456789abcdef";

	switch (proc) {
	case NFS3PROC_GETATTR:
	case NFS3PROC_READLINK:
	case NFS3PROC_FSSTAT:
	case NFS3PROC_FSINFO:
	case NFS3PROC_PATHCONF:
		tc_put_fh(t, &test_fh);
		break;
	case NFS3PROC_SETATTR:
		tc_put_fh(t, &test_fh);
		put_sattr_full(t);
		xdr_enc_bool(&t->req, true);
		xdr_enc_u32(&t->req, 5);
		xdr_enc_u32(&t->req, 6);
		break;
	case NFS3PROC_LOOKUP:
	case NFS3PROC_REMOVE:
	case NFS3PROC_RMDIR:
		put_diropargs(t, "name");
		break;
	case NFS3PROC_ACCESS:
		tc_put_fh(t, &test_fh);
		xdr_enc_u32(&t->req, 0x3f);
		break;
	case NFS3PROC_READ:
	case NFS3PROC_COMMIT:
		tc_put_fh(t, &test_fh);
		xdr_enc_u64(&t->req, 0);
		xdr_enc_u32(&t->req, 4096);
		break;
	case NFS3PROC_WRITE:
		tc_put_fh(t, &test_fh);
		xdr_enc_u64(&t->req, 0);
		xdr_enc_u32(&t->req, sizeof(data));
		xdr_enc_u32(&t->req, NFS3_FILE_SYNC);
		xdr_enc_opaque(&t->req, data, sizeof(data));
		break;
	case NFS3PROC_CREATE:
		put_diropargs(t, "new");
		xdr_enc_u32(&t->req, NFS3_CREATE_GUARDED);
		put_sattr_full(t);
		break;
	case NFS3PROC_MKDIR:
		put_diropargs(t, "dir");
		put_sattr_full(t);
		break;
	case NFS3PROC_SYMLINK:
		put_diropargs(t, "link");
		put_sattr_full(t);
		tc_put_name(t, "../target");
		break;
	case NFS3PROC_MKNOD:
		put_diropargs(t, "dev");
		xdr_enc_u32(&t->req, NF3CHR);
		put_sattr_full(t);
		xdr_enc_u32(&t->req, 1);
		xdr_enc_u32(&t->req, 3);
		break;
	case NFS3PROC_RENAME:
		put_diropargs(t, "a");
		put_diropargs(t, "b");
		break;
	case NFS3PROC_LINK:
		tc_put_fh(t, &test_fh);
		put_diropargs(t, "l");
		break;
	case NFS3PROC_READDIR:
		tc_put_fh(t, &test_fh);
		xdr_enc_u64(&t->req, 0);
		xdr_enc_u64(&t->req, 0);
		xdr_enc_u32(&t->req, 4096);
		break;
	case NFS3PROC_READDIRPLUS:
		tc_put_fh(t, &test_fh);
		xdr_enc_u64(&t->req, 0);
		xdr_enc_u64(&t->req, 0);
		xdr_enc_u32(&t->req, 4096);
		xdr_enc_u32(&t->req, 8192);
		break;
	}
}

static const handler_fn nfs3_handlers[NFS3PROC_COUNT] = {
	[NFS3PROC_GETATTR] = nfs3_proc_getattr,	    [NFS3PROC_SETATTR] = nfs3_proc_setattr,
	[NFS3PROC_LOOKUP] = nfs3_proc_lookup,	    [NFS3PROC_ACCESS] = nfs3_proc_access,
	[NFS3PROC_READLINK] = nfs3_proc_readlink,   [NFS3PROC_READ] = nfs3_proc_read,
	[NFS3PROC_WRITE] = nfs3_proc_write,	    [NFS3PROC_CREATE] = nfs3_proc_create,
	[NFS3PROC_MKDIR] = nfs3_proc_mkdir,	    [NFS3PROC_SYMLINK] = nfs3_proc_symlink,
	[NFS3PROC_MKNOD] = nfs3_proc_mknod,	    [NFS3PROC_REMOVE] = nfs3_proc_remove,
	[NFS3PROC_RMDIR] = nfs3_proc_rmdir,	    [NFS3PROC_RENAME] = nfs3_proc_rename,
	[NFS3PROC_LINK] = nfs3_proc_link,	    [NFS3PROC_READDIR] = nfs3_proc_readdir,
	[NFS3PROC_READDIRPLUS] = nfs3_proc_readdirplus, [NFS3PROC_FSSTAT] = nfs3_proc_fsstat,
	[NFS3PROC_FSINFO] = nfs3_proc_fsinfo,	    [NFS3PROC_PATHCONF] = nfs3_proc_pathconf,
	[NFS3PROC_COMMIT] = nfs3_proc_commit,
};

/* Valid requests decode (the handle is then refused: BADHANDLE, a well-formed NFS error). */
static void test_valid_requests_decode(void **state)
{
	struct tcall *t = *state;

	for (unsigned p = 1; p < NFS3PROC_COUNT; p++) {
		tc_reset(t, "127.0.0.1", 700, 0, 0);
		build_valid(t, p);
		assert_int_equal(tc_run(t, nfs3_handlers[p]), RPC_PROC_OK);
		assert_int_equal(tc_u32(t), NFS3ERR_BADHANDLE);
	}
}

/* Every strict prefix of a valid request is GARBAGE_ARGS. */
static void test_truncated_requests(void **state)
{
	struct tcall *t = *state;

	for (unsigned p = 1; p < NFS3PROC_COUNT; p++) {
		size_t full;

		tc_reset(t, "127.0.0.1", 700, 0, 0);
		build_valid(t, p);
		full = xdr_enc_len(&t->req);
		for (size_t n = 0; n < full; n++) {
			tc_reset(t, "127.0.0.1", 700, 0, 0);
			build_valid(t, p);
			t->req.p = t->req.base + n;
			if (tc_run(t, nfs3_handlers[p]) != RPC_PROC_GARBAGE)
				fail_msg("proc %u: prefix of %zu/%zu bytes was accepted", p, n, full);
		}
	}
}

/* Patch the u32 at byte offset off of a valid request and expect GARBAGE_ARGS. */
static void expect_garbage_with(struct tcall *t, unsigned proc, size_t off, uint32_t v)
{
	tc_reset(t, "127.0.0.1", 700, 0, 0);
	build_valid(t, proc);
	xdr_enc_patch_u32(&t->req, off, v);
	if (tc_run(t, nfs3_handlers[proc]) != RPC_PROC_GARBAGE)
		fail_msg("proc %u: value %#x at offset %zu was accepted", proc, v, off);
}

static void test_out_of_range_values(void **state)
{
	struct tcall *t = *state;
	const size_t fh = 4 + 32; /* fh length word + 32 bytes */
	const size_t dirop = fh + 4 + 4; /* + name "name"/"new"/"dir"... padded to 4 */

	expect_garbage_with(t, NFS3PROC_GETATTR, 0, NFS3_FHSIZE + 1); /* nfs_fh3 longer than 64 */
	expect_garbage_with(t, NFS3PROC_GETATTR, 0, 0xffffffff);
	expect_garbage_with(t, NFS3PROC_SETATTR, fh, 2);                 /* bool set_mode = 2 */
	expect_garbage_with(t, NFS3PROC_SETATTR, fh + 36, 3);           /* atime time_how 3 */
	expect_garbage_with(t, NFS3PROC_SETATTR, fh + 44, 1000000000);  /* nseconds >= 1e9 */
	expect_garbage_with(t, NFS3PROC_WRITE, fh + 8 + 4, 3);           /* stable_how 3 */
	expect_garbage_with(t, NFS3PROC_WRITE, fh + 8 + 4 + 4, NFS3_MAX_IO + 1); /* data > wtmax */
	expect_garbage_with(t, NFS3PROC_WRITE, fh + 8 + 4 + 4, 17);      /* more data than sent */
	expect_garbage_with(t, NFS3PROC_CREATE, dirop, 3);               /* createmode3 3 */
	expect_garbage_with(t, NFS3PROC_MKNOD, dirop, 8);                /* ftype3 8 */
	expect_garbage_with(t, NFS3PROC_SYMLINK, dirop + 52, NFS3_PATH_DECODE_MAX + 1);
	expect_garbage_with(t, NFS3PROC_LOOKUP, fh, NFS3_NAME_DECODE_MAX + 1);
}

static void test_random_bytes(void **state)
{
	struct tcall *t = *state;
	unsigned seed = 12345;

	for (unsigned p = 1; p < NFS3PROC_COUNT; p++) {
		for (int i = 0; i < 300; i++) {
			size_t n = (size_t)(rand_r(&seed) % 400);
			enum rpc_proc_status st;

			tc_reset(t, "127.0.0.1", 700, 0, 0);
			build_valid(t, p);
			/* keep a valid prefix of random length, then random bytes */
			size_t keep = (size_t)rand_r(&seed) % (xdr_enc_len(&t->req) + 1);
			t->req.p = t->req.base + keep;
			for (size_t j = 0; j < n; j++) {
				uint8_t b = (uint8_t)rand_r(&seed);
				xdr_enc_fixed(&t->req, &b, 1);
				t->req.p -= XDR_PAD(1); /* byte granularity */
			}
			st = tc_run(t, nfs3_handlers[p]);
			assert_true(st == RPC_PROC_GARBAGE || st == RPC_PROC_OK);
			if (st == RPC_PROC_OK)
				assert_int_not_equal(tc_u32(t), NFS3_OK);
		}
	}
}

static void test_mount_dirpath(void **state)
{
	struct tcall *t = *state;
	char longpath[MNT3_PATHLEN + 2];

	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	tc_reset(t, "127.0.0.1", 700, 0, 0);
	tc_put_name(t, longpath); /* 1025 bytes > MNTPATHLEN */
	assert_int_equal(tc_run(t, mount3_proc_mnt), RPC_PROC_GARBAGE);
	tc_reset(t, "127.0.0.1", 700, 0, 0);
	xdr_enc_u32(&t->req, 8); /* length without bytes */
	assert_int_equal(tc_run(t, mount3_proc_mnt), RPC_PROC_GARBAGE);
	assert_int_equal(tc_run(t, mount3_proc_umnt), RPC_PROC_GARBAGE);
	tc_reset(t, "127.0.0.1", 700, 0, 0);
	xdr_enc_opaque(&t->req, "/a\0b", 4); /* embedded NUL */
	assert_int_equal(tc_run(t, mount3_proc_mnt), RPC_PROC_GARBAGE);
	tc_reset(t, "127.0.0.1", 700, 0, 0);
	tc_put_name(t, "/nonexistent"); /* no table: NOENT */
	assert_int_equal(tc_run(t, mount3_proc_mnt), RPC_PROC_OK);
	assert_int_equal(tc_u32(t), MNT3ERR_NOENT);
}

static int setup(void **state)
{
	*state = tc_new();
	return 0;
}

static int teardown(void **state)
{
	tc_free(*state);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_requests_decode),
		cmocka_unit_test(test_truncated_requests),
		cmocka_unit_test(test_out_of_range_values),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_mount_dirpath),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
