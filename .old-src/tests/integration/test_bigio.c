/*
 * test_bigio.c - 64 MiB through libnfs's nfs_pwrite()/nfs_pread(): writes at
 * odd offsets with PRNG sizes (up to 1 MiB + 3, e.g. 1 MiB - 3 bytes at
 * offset 7), out of order; read back with other odd sizes; compared byte
 * for byte and by checksum with what was sent and with the file on disk.
 * Also a few raw UNSTABLE WRITE + COMMIT rounds at unaligned offsets.
 */
#include "tests/integration/harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BIG (64u * 1024 * 1024)

static struct hx_env env;

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* First differing offset, or -1. */
static long long first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	if (!memcmp(a, b, n))
		return -1;
	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return (long long)i;
}

static void test_highlevel(const uint8_t *data, uint8_t *back)
{
	struct nfs_context *nfs;
	struct nfsfh *fh;
	struct nfs_stat_64 st;
	char err[512];
	uint64_t seed = 0x5eed, off, len;
	unsigned writes = 0, reads = 0, bad_w = 0, bad_r = 0;
	double t0, t1;
	long long d;
	int n, fd;
	ssize_t got;

	hx_section("64 MiB with nfs_pwrite/nfs_pread at odd offsets and sizes");
	nfs = hx_mount(&env, env.export_dir, -1, -1, err, sizeof(err));
	if (!CHECK(nfs != NULL, "nfs_mount (%s)", nfs ? "" : err))
		return;
	hx_note("libnfs readmax %llu writemax %llu", (unsigned long long)nfs_get_readmax(nfs),
		(unsigned long long)nfs_get_writemax(nfs));
	if (!CHECK(nfs_open2(nfs, "/big", O_CREAT | O_RDWR | O_TRUNC, 0644, &fh) == 0, "create /big (%s)",
		   nfs_get_error(nfs)))
		goto out;

	/* Bytes [7, BIG) first, in PRNG-sized pieces; the first piece is 1 MiB - 3 at offset 7. */
	t0 = hx_now();
	for (off = 7; off < BIG; off += len) {
		len = writes == 0 ? 1024 * 1024 - 3 : 1 + hx_rand(&seed) % (1024 * 1024 + 3);
		if (off + len > BIG)
			len = BIG - off;
		n = nfs_pwrite(nfs, fh, off, len, (void *)(data + off));
		if (n != (int)len && bad_w++ < 5)
			CHECK(false, "nfs_pwrite %llu+%llu returned %d (%s)", (unsigned long long)off,
			      (unsigned long long)len, n, nfs_get_error(nfs));
		writes++;
	}
	/* Then the first 7 bytes, out of order. */
	n = nfs_pwrite(nfs, fh, 0, 7, (void *)data);
	if (n != 7)
		bad_w++;
	CHECK(nfs_fsync(nfs, fh) == 0, "nfs_fsync (COMMIT) (%s)", nfs_get_error(nfs));
	t1 = hx_now();
	CHECK_EQ(bad_w, 0, "%u nfs_pwrite calls all complete (%.1f MB/s)", writes + 1,
		 BIG / 1e6 / (t1 - t0));
	CHECK(nfs_fstat64(nfs, fh, &st) == 0 && st.nfs_size == BIG, "size over NFS is 64 MiB (%llu)",
	      (unsigned long long)st.nfs_size);

	/* The file on disk. */
	memset(back, 0, BIG);
	fd = open(hx_xpath(&env, "big"), O_RDONLY);
	got = 0;
	if (fd >= 0) {
		ssize_t r;

		while (got < BIG && (r = pread(fd, back + got, BIG - got, got)) > 0)
			got += r;
		close(fd);
	}
	CHECK_EQ(got, BIG, "disk file is 64 MiB");
	d = first_diff(back, data, BIG);
	CHECK(d < 0, "disk content equals what was written (first difference at %lld)", d);
	CHECK_EQ(fnv1a(back, BIG), fnv1a(data, BIG), "disk checksum (FNV-1a 64)");

	/* Read back with other odd sizes. */
	memset(back, 0xee, BIG);
	seed = 0xbeef;
	t0 = hx_now();
	for (off = 0; off < BIG; off += len) {
		len = 1 + hx_rand(&seed) % (1536 * 1024 + 11);
		if (off + len > BIG)
			len = BIG - off;
		n = nfs_pread(nfs, fh, off, len, back + off);
		if (n != (int)len && bad_r++ < 5)
			CHECK(false, "nfs_pread %llu+%llu returned %d (%s)", (unsigned long long)off,
			      (unsigned long long)len, n, nfs_get_error(nfs));
		reads++;
	}
	t1 = hx_now();
	CHECK_EQ(bad_r, 0, "%u nfs_pread calls all complete (%.1f MB/s)", reads, BIG / 1e6 / (t1 - t0));
	d = first_diff(back, data, BIG);
	CHECK(d < 0, "data read over NFS equals what was written (first difference at %lld)", d);
	CHECK_EQ(fnv1a(back, BIG), fnv1a(data, BIG), "read-back checksum (FNV-1a 64)");
	n = nfs_pread(nfs, fh, BIG - 5, 100, back);
	CHECK_EQ(n, 5, "a read crossing EOF returns the 5 remaining bytes");
	n = nfs_pread(nfs, fh, BIG + 4096, 100, back);
	CHECK_EQ(n, 0, "a read past EOF returns 0");
	nfs_close(nfs, fh);
out:
	hx_umount(nfs);
}

/* Unstable writes of odd sizes, then COMMIT: the data must be on disk after COMMIT. */
static void test_unstable(const uint8_t *data)
{
	struct rpc_context *nfs;
	struct hx_fh root, fh;
	WRITE3res w;
	COMMIT3args ca;
	COMMIT3res cr;
	uint64_t seed = 77, off = 3;
	uint8_t *disk;
	char verf[8];
	unsigned i, bad = 0, verf_changed = 0;
	uint32_t len;
	int fd;

	hx_section("UNSTABLE WRITEs + COMMIT (raw)");
	if (hx_open_export(&env, env.export_dir, -1, -1, &nfs, &root) != 0)
		return;
	if (!CHECK_NFS(hx3_create(nfs, &root, "unstable", 0644, &fh), NFS3_OK, "CREATE unstable"))
		goto out;
	for (i = 0; i < 16; i++) {
		len = 1 + hx_rand(&seed) % (256 * 1024);
		if (hx3_write(nfs, &fh, off, data + off, len, UNSTABLE, &w) != NFS3_OK ||
		    w.WRITE3res_u.resok.count != len)
			bad++;
		if (i == 0)
			memcpy(verf, w.WRITE3res_u.resok.verf, 8);
		else if (memcmp(verf, w.WRITE3res_u.resok.verf, 8))
			verf_changed++;
		off += len;
	}
	CHECK_EQ(bad, 0, "16 UNSTABLE writes of odd sizes accepted in full");
	CHECK_EQ(verf_changed, 0, "write verifier stable across writes");
	memset(&ca, 0, sizeof(ca));
	ca.file = hx_fh3(&fh);
	HX_CALL(nfs, rpc_nfs3_commit_async, &ca, zdr_COMMIT3res, &cr);
	if (CHECK_NFS(cr.status, NFS3_OK, "COMMIT"))
		CHECK(!memcmp(cr.COMMIT3res_u.resok.verf, verf, 8), "COMMIT verifier equals WRITE verifier");
	disk = malloc(off);
	fd = open(hx_xpath(&env, "unstable"), O_RDONLY);
	CHECK(disk && fd >= 0 && pread(fd, disk, off, 0) == (ssize_t)off && !memcmp(disk + 3, data + 3, off - 3),
	      "after COMMIT the disk holds all %llu bytes", (unsigned long long)(off - 3));
	if (fd >= 0)
		close(fd);
	free(disk);
out:
	hx_rpc_close(nfs);
}

int main(int argc, char **argv)
{
	uint8_t *data, *back;
	uint64_t seed = 0x64d1b;

	hx_begin("bigio", argc, argv);
	hx_env_init(&env);
	data = malloc(BIG);
	back = malloc(BIG);
	if (!data || !back)
		hx_skip("no memory for two 64 MiB buffers");
	hx_fill(&seed, data, BIG);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	test_highlevel(data, back);
	test_unstable(data);
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	free(data);
	free(back);
	return hx_end();
}
