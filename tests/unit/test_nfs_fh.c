/*
 * test_nfs_fh.c - nfs/common/fh.c around the local backend's handles: the
 * envelope's MAC (any changed byte, other key, bad shape -> BADHANDLE), open
 * by handle, STALE after unlink, the fh.key file (created 0600, reused across
 * "restarts", random fallback when the state directory is unusable), cookie
 * verifiers. open_by_handle_at needs root (CAP_DAC_READ_SEARCH): those parts
 * skip when not root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "backend/local/local.h"
#include "nfs/common/nfs_common.h"
#include "nfs/v3/nfs3_const.h"

static char tmpdir[64];

/*
 * What were fh.c's own functions before the backend owned the bytes inside
 * the envelope: a handle of a name (the local backend's bytes, wrapped), its
 * check (unwrapped), opening it (through a local instance of tmpdir), and the
 * directory cookie verifier (now the local backend's).
 */
struct nfs_fh_parts {
	uint32_t export_id;
	struct be_handle bh;
};

static uint32_t nfs_fh_build(struct nfs_fh *fh, uint32_t export_id, int dirfd, const char *name, int at_flags)
{
	struct be_handle bh;
	int err = local_handle_at(dirfd, name, at_flags, &bh);

	if (err)
		return nfs_errno_to_stat(err);
	return nfs_fh_wrap(fh, export_id, &bh, NFS3_FHSIZE) ? NFS3_OK : NFS3ERR_SERVERFAULT;
}

static uint32_t nfs_fh_verify(const struct nfs_fh *fh, struct nfs_fh_parts *p)
{
	return nfs_fh_unwrap(fh, &p->export_id, &p->bh) ? NFS3_OK : NFS3ERR_BADHANDLE;
}

static uint32_t nfs_fh_open(int mount_fd, const struct nfs_fh_parts *p, int flags, int *fd, struct stat *st)
{
	struct be_fs_config cfg = { .path = tmpdir, .export_id = p->export_id };
	struct be_obj o = BE_OBJ_INIT;
	struct be_fs *fs;
	int err;

	(void)mount_fd; /* the instance has its own, of tmpdir */
	(void)flags;    /* objects are O_PATH */
	assert_int_equal(be_init(), 0);
	assert_int_equal(be_fs_open("local", &cfg, &fs), 0);
	err = be_open_handle(fs, &p->bh, &o, NULL);
	if (!err) {
		*fd = local_fd(&o); /* the caller closes it */
		assert_int_equal(fstat(*fd, st), 0);
	}
	be_end_call(fs);
	be_fs_close(fs);
	be_shutdown();
	return nfs_errno_to_stat(err);
}

static uint64_t nfs_fh_cookieverf(uint32_t export_id, const struct stat *dir)
{
	return local_cookieverf(export_id, (uint64_t)dir->st_ino);
}

static int setup(void **state)
{
	static const uint8_t key[16] = "0123456789abcdef";

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_nfs_fh.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	nfs_fh_key_set(key);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static int make_file(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
	return open(tmpdir, O_RDONLY | O_DIRECTORY); /* not O_PATH: open_by_handle_at mount fd */
}

static void test_build_verify(void **state)
{
	struct nfs_fh fh;
	struct nfs_fh_parts p;
	int dfd = make_file("a");

	(void)state;
	assert_int_equal(nfs_fh_build(&fh, 0x1234, dfd, "a", 0), NFS3_OK);
	assert_true(fh.len <= NFS3_FHSIZE);
	assert_int_equal(nfs_fh_verify(&fh, &p), NFS3_OK);
	assert_int_equal(p.export_id, 0x1234);
	/* Any single changed bit anywhere: BADHANDLE */
	for (uint32_t i = 0; i < fh.len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			struct nfs_fh bad = fh;
			bad.data[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(nfs_fh_verify(&bad, &p), NFS3ERR_BADHANDLE);
		}
	}
	/* Truncated, extended, empty */
	for (uint32_t len = 0; len < fh.len; len++) {
		struct nfs_fh bad = fh;
		bad.len = len;
		assert_int_equal(nfs_fh_verify(&bad, &p), NFS3ERR_BADHANDLE);
	}
	struct nfs_fh longer = fh;
	longer.len = fh.len + 4 <= NFS3_FHSIZE ? fh.len + 4 : NFS3_FHSIZE;
	assert_int_equal(nfs_fh_verify(&longer, &p), NFS3ERR_BADHANDLE);
	close(dfd);
}

/* Relabelling a handle to another export requires a new MAC: a forger cannot. */
static void test_forgery(void **state)
{
	static const uint8_t other[16] = "fedcba9876543210";
	static const uint8_t key[16] = "0123456789abcdef";
	struct nfs_fh fh, relabel;
	struct nfs_fh_parts p;
	int dfd = make_file("b");

	(void)state;
	assert_int_equal(nfs_fh_build(&fh, 7, dfd, "b", 0), NFS3_OK);
	relabel = fh;
	relabel.data[7] = 8; /* export id 7 -> 8, MAC unchanged */
	assert_int_equal(nfs_fh_verify(&relabel, &p), NFS3ERR_BADHANDLE);
	/* A handle made under another key (another server, or a guessed key) */
	nfs_fh_key_set(other);
	assert_int_equal(nfs_fh_verify(&fh, &p), NFS3ERR_BADHANDLE);
	nfs_fh_key_set(key);
	assert_int_equal(nfs_fh_verify(&fh, &p), NFS3_OK);
	close(dfd);
}

static void test_open_and_stale(void **state)
{
	struct nfs_fh fh;
	struct nfs_fh_parts p;
	struct stat st;
	char path[128];
	int dfd, fd = -1;

	(void)state;
	if (geteuid() != 0)
		skip(); /* open_by_handle_at needs CAP_DAC_READ_SEARCH */
	dfd = make_file("c");
	assert_int_equal(nfs_fh_build(&fh, 1, dfd, "c", 0), NFS3_OK);
	assert_int_equal(nfs_fh_verify(&fh, &p), NFS3_OK);
	assert_int_equal(nfs_fh_open(dfd, &p, O_PATH, &fd, &st), NFS3_OK);
	assert_true(S_ISREG(st.st_mode));
	close(fd);
	/* unlinked while still open elsewhere: st_nlink 0 -> STALE */
	snprintf(path, sizeof(path), "%s/c", tmpdir);
	int keep = open(path, O_RDONLY);
	assert_true(keep >= 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(nfs_fh_open(dfd, &p, O_PATH, &fd, &st), NFS3ERR_STALE);
	close(keep);
	/* and once it is really gone */
	assert_int_equal(nfs_fh_open(dfd, &p, O_PATH, &fd, &st), NFS3ERR_STALE);
	close(dfd);
}

static void test_key_file(void **state)
{
	char sdir[128], kpath[160];
	struct nfs_fh fh1, fh2;
	struct nfs_fh_parts p;
	struct stat st;
	int dfd = make_file("d");

	(void)state;
	snprintf(sdir, sizeof(sdir), "%s/state", tmpdir);
	snprintf(kpath, sizeof(kpath), "%s/fh.key", sdir);
	assert_int_equal(nfs_fh_key_init(sdir), 0);
	assert_int_equal(stat(kpath, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 16);
	assert_int_equal(nfs_fh_build(&fh1, 1, dfd, "d", 0), NFS3_OK);
	/* "restart": same key file, same handle, still valid */
	assert_int_equal(nfs_fh_key_init(sdir), 0);
	assert_int_equal(nfs_fh_build(&fh2, 1, dfd, "d", 0), NFS3_OK);
	assert_int_equal(fh1.len, fh2.len);
	assert_memory_equal(fh1.data, fh2.data, fh1.len);
	assert_int_equal(nfs_fh_verify(&fh1, &p), NFS3_OK);
	/* unusable state dir: still works, with a random key (old handles invalid) */
	assert_int_equal(nfs_fh_key_init("/proc/no/such/dir"), 0);
	assert_int_equal(nfs_fh_verify(&fh1, &p), NFS3ERR_BADHANDLE);
	/* a key file of the wrong size is not used (and not overwritten) */
	FILE *f = fopen(kpath, "w");
	assert_non_null(f);
	fputs("short", f);
	fclose(f);
	assert_int_equal(nfs_fh_key_init(sdir), 0);
	assert_int_equal(stat(kpath, &st), 0);
	assert_int_equal(st.st_size, 5);
	close(dfd);
}

static void test_cookieverf(void **state)
{
	struct stat a = { .st_ino = 10 }, b = { .st_ino = 11 };

	(void)state;
	assert_int_equal(nfs_fh_cookieverf(1, &a), nfs_fh_cookieverf(1, &a));
	assert_int_not_equal(nfs_fh_cookieverf(1, &a), nfs_fh_cookieverf(1, &b));
	assert_int_not_equal(nfs_fh_cookieverf(1, &a), nfs_fh_cookieverf(2, &a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_verify),
		cmocka_unit_test(test_forgery),
		cmocka_unit_test(test_open_and_stale),
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_cookieverf),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
