/*
 * test_nfs_fh.c - nfs/fh.c: handle MAC (any changed byte, other key, bad
 * shape -> BADHANDLE), open by handle, STALE after unlink, the fh.key file
 * (created 0600, reused across "restarts", random fallback when the state
 * directory is unusable), cookie verifiers. open_by_handle_at needs root
 * (CAP_DAC_READ_SEARCH): those parts skip when not root.
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

#include "nfs/nfs_priv.h"

static char tmpdir[64];

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
