/*
 * test_nfs4_libnfs.c - NFSv4 through libnfs 4.0.0's own NFSv4 client
 * (nfs_set_version(NFS_V4)), which sends what the Linux kernel client never
 * does: SETCLIENTID/SETCLIENTID_CONFIRM with its own client string, a mount
 * that walks PUTROOTFH + LOOKUP per component, GETATTR for stat, READDIR with
 * its own attribute bitmap, OPEN + READ + CLOSE for a read, and the namespace
 * operations as single COMPOUNDs. libnfs 4.0.0's NFSv4 WRITE encoding is
 * broken, so no data is written through it (files are made on disk).
 *
 * libnfs 4.0.0 also keeps one open owner per mount and does not advance its
 * seqid after an OPEN that fails (RFC 7530 §9.1.7 wants it advanced for every
 * error but a few, NOENT and ACCESS included), so the next OPEN repeats the
 * failed one's seqid and gets its reply again, as from knfsd (§9.1.8: a
 * retransmission). Each OPEN expected to fail therefore runs last on its own
 * mount. libnfs's chmod OPENs the object, so it works only on files.
 *
 * The export is rw,insecure with the default root_squash; the daemon runs
 * with no [nfsv4] section (NFSv4 on by default), so against a daemon that
 * does not serve version 4 every mount here fails.
 *
 *  - mount over NFSv4, stat of the export root and of a file made on disk
 *    (size, mode, owner, type, link count, inode number = the server's);
 *  - readdir of a directory of 300 entries made on disk (several READDIR
 *    replies: libnfs sends cookieverf 0 each time): every name once, with
 *    its type, mode and size;
 *  - open + pread of a 1 MiB + 4097-byte file at odd offsets and across the
 *    end: bytes equal to the file's, SHA-like checksum of the whole file;
 *  - readlink of a symlink made on disk (and stat through it: the target);
 *  - mkdir, symlink, readlink, rename (within and across directories),
 *    unlink, rmdir, chmod (of a file the squashed root owns), each checked
 *    on disk; root's mkdir is 65534's (root_squash);
 *  - errors: stat/open/unlink of a missing name ENOENT, rmdir of a non-empty
 *    directory ENOTEMPTY, mkdir of an existing name EEXIST; as the squashed
 *    root: open of root's 0600 file and mkdir in root's 0755 directory
 *    EACCES; as uid 1234: mkdir in root's 0755 directory, unlink in it and
 *    chmod of root's file refused (EACCES/EPERM), and its own mkdir owned by
 *    1234.
 *  - [nfsv4] enable = no (last): the NFSv4 mount is refused while an NFSv3
 *    mount of the same export still works.
 */
#include "tests/integration/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nfsc/libnfs-raw-nfs4.h>

static struct hx_env env;

#define NDIR 300                    /* entries of the listed directory */
#define DATA_LEN (1048576 + 4097)   /* the read file: 1 MiB and an odd tail */

/* FNV-1a over a buffer: the checksum compared between disk and libnfs. */
static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static struct nfs_context *mount4(int uid, int gid)
{
	char err[512];
	struct nfs_context *nfs;

	hx_mount_version = NFS_V4;
	nfs = hx_mount(&env, env.export_dir, uid, gid, err, sizeof(err));
	hx_mount_version = NFS_V3;
	CHECK(nfs != NULL, "NFSv4 mount as %d:%d (%s)", uid, gid, nfs ? "ok" : err);
	return nfs;
}

static void test_stat(struct nfs_context *nfs)
{
	struct nfs_stat_64 st;
	struct stat ds;

	hx_section("mount and stat over NFSv4");
	if (CHECK_EQ(nfs_stat64(nfs, "/", &st), 0, "stat of the export root") &&
	    CHECK(stat(env.export_dir, &ds) == 0, "stat on disk"))
		CHECK(S_ISDIR(st.nfs_mode) && st.nfs_ino == ds.st_ino, "a directory, inode %llu (disk %llu)",
		      (unsigned long long)st.nfs_ino, (unsigned long long)ds.st_ino);
	if (CHECK_EQ(nfs_stat64(nfs, "data", &st), 0, "stat data") &&
	    CHECK(stat(hx_xpath(&env, "data"), &ds) == 0, "stat data on disk")) {
		CHECK_EQ(st.nfs_size, DATA_LEN, "size");
		CHECK(S_ISREG(st.nfs_mode) && (st.nfs_mode & 07777) == 0644, "regular, 0644 (mode %o)",
		      (unsigned)st.nfs_mode);
		CHECK(st.nfs_uid == 0 && st.nfs_gid == 0, "owner 0:0 (%llu:%llu)", (unsigned long long)st.nfs_uid,
		      (unsigned long long)st.nfs_gid);
		CHECK_EQ(st.nfs_nlink, 1, "link count");
		CHECK_EQ(st.nfs_ino, ds.st_ino, "inode number is the server's");
	}
}

static void test_readdir(struct nfs_context *nfs)
{
	static unsigned char seen[NDIR];
	struct nfsdir *dir;
	struct nfsdirent *de;
	unsigned files = 0, dots = 0, bad = 0;

	hx_section("readdir of %d entries made on disk", NDIR);
	memset(seen, 0, sizeof(seen));
	if (!CHECK_EQ(nfs_opendir(nfs, "dir", &dir), 0, "opendir dir"))
		return;
	while ((de = nfs_readdir(nfs, dir)) != NULL) {
		unsigned i;
		struct stat ds;

		if (!strcmp(de->name, ".") || !strcmp(de->name, "..")) {
			dots++;
			continue;
		}
		if (sscanf(de->name, "e%u", &i) != 1 || i >= NDIR || seen[i]++) {
			bad++;
			continue;
		}
		files++;
		/* libnfs 4.0.0 leaves inode 0 for NFSv4 entries (rnfsd sends the fileid it asked for) */
		if (stat(hx_xpath(&env, "dir/%s", de->name), &ds) != 0 || de->type != NF4REG ||
		    (de->mode & 07777) != (ds.st_mode & 07777) || de->size != (uint64_t)ds.st_size)
			bad++;
	}
	nfs_closedir(nfs, dir);
	CHECK_EQ(files, NDIR, "every entry listed once");
	CHECK_EQ(bad, 0, "no unknown, repeated or mismatched entries (type, mode, size)");
	(void)dots; /* libnfs may or may not add . and .. itself */
}

static void test_read(struct nfs_context *nfs, const uint8_t *data)
{
	static uint8_t buf[DATA_LEN + 100];
	const uint64_t offs[] = { 0, 1, 4095, 65537, 1048575, DATA_LEN - 10 };
	struct nfsfh *fh;
	uint64_t got = 0;

	hx_section("open + read over NFSv4");
	if (!CHECK_EQ(nfs_open(nfs, "data", O_RDONLY, &fh), 0, "open data O_RDONLY (%s)", nfs_get_error(nfs)))
		return;
	for (unsigned i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		int n = nfs_pread(nfs, fh, offs[i], 5000, buf);
		size_t want = offs[i] + 5000 > DATA_LEN ? DATA_LEN - offs[i] : 5000;

		CHECK(n == (int)want && memcmp(buf, data + offs[i], want) == 0, "pread 5000 at %llu: %d bytes, equal",
		      (unsigned long long)offs[i], n);
	}
	CHECK_EQ(nfs_pread(nfs, fh, DATA_LEN + 10, 100, buf), 0, "pread beyond the end: 0 bytes");
	while (got < DATA_LEN) {
		int n = nfs_pread(nfs, fh, got, 65536, buf + got);

		if (n <= 0)
			break;
		got += (unsigned)n;
	}
	CHECK_EQ(got, DATA_LEN, "the whole file read in 64 KiB reads");
	CHECK_EQ(fnv(buf, DATA_LEN), fnv(data, DATA_LEN), "checksum equals the file's on disk");
	CHECK_EQ(nfs_close(nfs, fh), 0, "close");
}

/* libnfs 4.0.0's NFSv4 readlink does not end the target with a NUL (what follows is the rest of
 * the reply: rnfsd sends the 4-byte "data" with its length, seen on the wire), so the target is
 * compared up to its length and the length is checked by lstat (a symlink's size). */
static bool readlink_is(struct nfs_context *nfs, const char *path, const char *want)
{
	struct nfs_stat_64 st;
	char *got = NULL;
	bool ok = nfs_readlink2(nfs, path, &got) == 0 && got && strncmp(got, want, strlen(want)) == 0 &&
		  nfs_lstat64(nfs, path, &st) == 0 && st.nfs_size == strlen(want);

	CHECK(ok, "readlink %s: '%s', size %zu", path, want, strlen(want));
	free(got);
	return ok;
}

static void test_links(struct nfs_context *nfs)
{
	struct nfs_stat_64 st;

	hx_section("readlink of a symlink made on disk");
	readlink_is(nfs, "lnk", "data");
	if (CHECK_EQ(nfs_lstat64(nfs, "lnk", &st), 0, "lstat lnk"))
		CHECK(S_ISLNK(st.nfs_mode), "a symlink (mode %o)", (unsigned)st.nfs_mode);
}

/* As the squashed root (65534 on the server), in the 0777 export root. */
static void test_namespace(struct nfs_context *nfs)
{
	char buf[256];
	struct stat ds;

	hx_section("mkdir, symlink, rename, unlink, rmdir, chmod over NFSv4");
	if (CHECK_EQ(nfs_mkdir2(nfs, "m1", 0750), 0, "mkdir m1 (%s)", nfs_get_error(nfs)))
		CHECK(stat(hx_xpath(&env, "m1"), &ds) == 0 && S_ISDIR(ds.st_mode) && (ds.st_mode & 07777) == 0750 &&
		      ds.st_uid == 65534 && ds.st_gid == 65534,
		      "on disk: a 0750 directory of 65534:65534 (root_squash) (mode %o, %u:%u)",
		      (unsigned)ds.st_mode, (unsigned)ds.st_uid, (unsigned)ds.st_gid);
	CHECK_EQ(nfs_mkdir2(nfs, "m1/sub", 0755), 0, "mkdir m1/sub");
	if (CHECK_EQ(nfs_symlink(nfs, "../data", "m1/sl"), 0, "symlink m1/sl -> ../data (%s)", nfs_get_error(nfs))) {
		ssize_t n = readlink(hx_xpath(&env, "m1/sl"), buf, sizeof(buf) - 1);

		CHECK(n == 7 && memcmp(buf, "../data", 7) == 0, "on disk: the link's target");
		readlink_is(nfs, "m1/sl", "../data");
	}
	CHECK_EQ(nfs_rename(nfs, "m1/sl", "m1/sl2"), 0, "rename within a directory (%s)", nfs_get_error(nfs));
	CHECK(lstat(hx_xpath(&env, "m1/sl2"), &ds) == 0 && lstat(hx_xpath(&env, "m1/sl"), &ds) != 0,
	      "on disk: the new name only");
	CHECK_EQ(nfs_rename(nfs, "m1/sl2", "m1/sub/sl3"), 0, "rename across directories");
	CHECK(lstat(hx_xpath(&env, "m1/sub/sl3"), &ds) == 0 && S_ISLNK(ds.st_mode), "on disk: moved");
	CHECK_EQ(nfs_chmod(nfs, "own", 0600), 0, "chmod own 0600 (its owner, 65534) (%s)", nfs_get_error(nfs));
	CHECK(stat(hx_xpath(&env, "own"), &ds) == 0 && (ds.st_mode & 07777) == 0600, "on disk: 0600");
	CHECK_EQ(nfs_rmdir(nfs, "m1/sub"), -ENOTEMPTY, "rmdir of a non-empty directory: ENOTEMPTY");
	CHECK_EQ(nfs_mkdir2(nfs, "m1/sub", 0755), -EEXIST, "mkdir of an existing name: EEXIST");
	CHECK_EQ(nfs_unlink(nfs, "m1/sub/sl3"), 0, "unlink m1/sub/sl3");
	CHECK(lstat(hx_xpath(&env, "m1/sub/sl3"), &ds) != 0 && errno == ENOENT, "on disk: gone");
	CHECK_EQ(nfs_rmdir(nfs, "m1/sub"), 0, "rmdir m1/sub");
	CHECK_EQ(nfs_rmdir(nfs, "m1"), 0, "rmdir m1");
	CHECK(stat(hx_xpath(&env, "m1"), &ds) != 0 && errno == ENOENT, "on disk: gone");
}

static struct nfs_context *mount4(int uid, int gid);

/* One OPEN that must fail, on a mount of its own (libnfs's seqid, above). */
static void open_fails(const char *path, int err, const char *what)
{
	struct nfs_context *nfs = mount4(0, 0);
	struct nfsfh *fh;

	if (nfs)
		CHECK_EQ(nfs_open(nfs, path, O_RDONLY, &fh), -err, "%s", what);
	hx_umount(nfs);
}

static void test_errors_root(struct nfs_context *nfs)
{
	struct nfs_stat_64 st;
	struct stat ds;

	hx_section("errors: missing names, the squashed root");
	CHECK_EQ(nfs_stat64(nfs, "nope", &st), -ENOENT, "stat of a missing name: ENOENT");
	CHECK_EQ(nfs_unlink(nfs, "nope"), -ENOENT, "unlink of a missing name: ENOENT");
	CHECK_EQ(nfs_rmdir(nfs, "nope"), -ENOENT, "rmdir of a missing name: ENOENT");
	CHECK_EQ(nfs_stat64(nfs, "nope/deeper", &st), -ENOENT, "stat below a missing name: ENOENT");
	CHECK_EQ(nfs_mkdir2(nfs, "rootdir/x", 0755), -EACCES, "mkdir in root's 0755 directory: EACCES");
	CHECK(stat(hx_xpath(&env, "rootdir/x"), &ds) != 0, "nothing made there");
	open_fails("nope", ENOENT, "open of a missing name: ENOENT");
	open_fails("secret", EACCES, "open of root's 0600 file as the squashed root: EACCES");
}

/* uid 1234: what it owns it may change, root's objects not. */
static void test_errors_user(struct nfs_context *nfs)
{
	struct stat ds;
	int rc;

	hx_section("uid 1234: its own directory; root's refused");
	if (CHECK_EQ(nfs_mkdir2(nfs, "u1", 0755), 0, "mkdir u1 as 1234"))
		CHECK(stat(hx_xpath(&env, "u1"), &ds) == 0 && ds.st_uid == 1234, "owned by 1234 (%u)",
		      (unsigned)ds.st_uid);
	CHECK_EQ(nfs_mkdir2(nfs, "rootdir/y", 0755), -EACCES, "mkdir in root's 0755 directory: EACCES");
	CHECK_EQ(nfs_unlink(nfs, "rootdir/f"), -EACCES, "unlink in root's 0755 directory: EACCES");
	rc = nfs_chmod(nfs, "data", 0666);
	CHECK(rc == -EPERM || rc == -EACCES, "chmod of root's file refused (%d)", rc);
	CHECK(stat(hx_xpath(&env, "data"), &ds) == 0 && (ds.st_mode & 07777) == 0644, "its mode unchanged");
	CHECK(stat(hx_xpath(&env, "rootdir/f"), &ds) == 0, "root's file still there");
	CHECK_EQ(nfs_rmdir(nfs, "u1"), 0, "rmdir u1");
}

/* [nfsv4] enable = no (the last section wins): NFSv4 refused, NFSv3 served. */
static void test_disabled(void)
{
	char err[512];
	struct nfs_context *nfs;

	hx_section("[nfsv4] enable = no: the NFSv4 mount is refused, NFSv3 still mounts");
	if (!CHECK(hx_append_config(&env, "[nfsv4]\nenable = no\n") == 0, "config"))
		return;
	if (hx_daemon_start(&env) != 0)
		return;
	hx_mount_version = NFS_V4;
	nfs = hx_mount(&env, env.export_dir, 0, 0, err, sizeof(err));
	hx_mount_version = NFS_V3;
	CHECK(nfs == NULL, "NFSv4 mount refused (%s)", nfs ? "mounted" : err);
	hx_umount(nfs);
	nfs = hx_mount(&env, env.export_dir, 0, 0, err, sizeof(err));
	CHECK(nfs != NULL, "NFSv3 mount (%s)", nfs ? "ok" : err);
	hx_umount(nfs);
	hx_daemon_stop(&env);
}

static void make_tree(uint8_t *data)
{
	uint64_t seed = 0x4e465334;

	chmod(env.export_dir, 0777);
	hx_fill(&seed, data, DATA_LEN);
	hx_write_file(hx_xpath(&env, "data"), data, DATA_LEN, 0644);
	CHECK(symlink("data", hx_xpath(&env, "lnk")) == 0, "symlink lnk");
	CHECK(mkdir(hx_xpath(&env, "dir"), 0755) == 0, "mkdir dir");
	for (unsigned i = 0; i < NDIR; i++)
		hx_write_file(hx_xpath(&env, "dir/e%u", i), "x", 1, 0644);
	hx_write_file(hx_xpath(&env, "secret"), "secret", 6, 0600);
	CHECK(mkdir(hx_xpath(&env, "rootdir"), 0755) == 0, "mkdir rootdir");
	hx_write_file(hx_xpath(&env, "rootdir/f"), "f", 1, 0644);
	hx_write_file(hx_xpath(&env, "own"), "own", 3, 0644);
	CHECK(chown(hx_xpath(&env, "own"), 65534, 65534) == 0, "chown own 65534");
}

int main(int argc, char **argv)
{
	static uint8_t data[DATA_LEN];
	struct nfs_context *nfs;

	hx_begin("nfs4_libnfs", argc, argv);
	hx_require_root();
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	make_tree(data);
	/* The default root_squash; insecure: libnfs may use an unprivileged port. */
	hx_write_exports(&env, "%s 127.0.0.1(rw,insecure)\n", env.export_dir);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	nfs = mount4(0, 0);
	if (nfs) {
		test_stat(nfs);
		test_readdir(nfs);
		test_read(nfs, data);
		test_links(nfs);
		test_namespace(nfs);
		test_errors_root(nfs);
		hx_umount(nfs);
	}
	nfs = mount4(1234, 1234);
	if (nfs) {
		test_errors_user(nfs);
		hx_umount(nfs);
	}
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	test_disabled();
	hx_env_release(&env);
	return hx_end();
}
