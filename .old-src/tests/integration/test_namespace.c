/*
 * test_namespace.c - rename, link, symlink and readlink through libnfs's
 * high-level API (as an application would use them), checked against the
 * file system, plus handle persistence across rename and unlink-of-one-link
 * through the raw API (an nfs_fh3 names the object, not the path: it stays
 * valid while the object exists).
 */
#include "tests/integration/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;

static bool disk_link(const char *rel, const char *want)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(hx_xpath(&env, "%s", rel), buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = 0;
	return !strcmp(buf, want);
}

static bool disk_content(const char *rel, const char *want)
{
	char buf[256];
	int fd = open(hx_xpath(&env, "%s", rel), O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == (ssize_t)strlen(want) && !memcmp(buf, want, n);
}

static void test_highlevel(struct nfs_context *nfs)
{
	struct nfs_stat_64 st;
	struct stat ds;
	char buf[PATH_MAX], *lp = NULL, longt[1001];
	int rc;

	hx_section("symlink / readlink");
	CHECK_EQ(nfs_symlink(nfs, "a/relative/target", "/sym1"), 0, "nfs_symlink /sym1 -> a/relative/target");
	CHECK(disk_link("sym1", "a/relative/target"), "disk: sym1 -> a/relative/target");
	CHECK_EQ(nfs_symlink(nfs, "/absolute/elsewhere", "/dir/sym2"), 0, "nfs_symlink /dir/sym2 -> /absolute/elsewhere");
	CHECK(disk_link("dir/sym2", "/absolute/elsewhere"), "disk: dir/sym2 -> /absolute/elsewhere");
	memset(buf, 0, sizeof(buf));
	CHECK(nfs_readlink(nfs, "/sym1", buf, sizeof(buf)) == 0 && !strcmp(buf, "a/relative/target"),
	      "nfs_readlink /sym1 (\"%s\")", buf);
	memset(longt, 't', 1000);
	longt[1000] = 0;
	longt[0] = '/';
	CHECK_EQ(nfs_symlink(nfs, longt, "/symlong"), 0, "nfs_symlink with a 1000-byte target");
	CHECK(disk_link("symlong", longt), "disk: 1000-byte target intact");
	rc = nfs_readlink2(nfs, "/symlong", &lp);
	CHECK(rc == 0 && lp && !strcmp(lp, longt), "nfs_readlink2 returns the 1000-byte target");
	free(lp);
	CHECK(nfs_lstat64(nfs, "/sym1", &st) == 0 && S_ISLNK(st.nfs_mode) &&
	      st.nfs_size == strlen("a/relative/target"), "nfs_lstat64: a symlink of size %zu",
	      strlen("a/relative/target"));
	symlink("plainfile", hx_xpath(&env, "sym3"));
	CHECK(nfs_readlink(nfs, "/sym3", buf, sizeof(buf)) == 0 && !strcmp(buf, "plainfile"),
	      "nfs_readlink of a symlink made on disk");
	CHECK(nfs_stat64(nfs, "/sym3", &st) == 0 && S_ISREG(st.nfs_mode) && st.nfs_size == 5,
	      "nfs_stat64 follows it to plainfile");
	CHECK(nfs_symlink(nfs, "x", "/sym1") == -EEXIST, "nfs_symlink over an existing name: -EEXIST");

	hx_section("link");
	CHECK_EQ(nfs_link(nfs, "/plainfile", "/dir/hard"), 0, "nfs_link /plainfile -> /dir/hard");
	{
		struct stat orig;

		CHECK(stat(hx_xpath(&env, "dir/hard"), &ds) == 0 && stat(hx_xpath(&env, "plainfile"), &orig) == 0 &&
		      ds.st_nlink == 2 && ds.st_ino == orig.st_ino, "disk: same inode, nlink 2 (%lu)",
		      (unsigned long)ds.st_nlink);
	}
	CHECK(nfs_stat64(nfs, "/plainfile", &st) == 0 && st.nfs_nlink == 2, "nfs_stat64 nlink 2");
	CHECK(nfs_link(nfs, "/plainfile", "/dir/hard") == -EEXIST, "nfs_link over an existing name: -EEXIST");
	CHECK(nfs_link(nfs, "/missing", "/dir/hard2") == -ENOENT, "nfs_link of a missing file: -ENOENT");

	hx_section("rename");
	CHECK_EQ(nfs_rename(nfs, "/plainfile", "/dir/moved"), 0, "nfs_rename /plainfile -> /dir/moved");
	CHECK(access(hx_xpath(&env, "plainfile"), F_OK) != 0 && disk_content("dir/moved", "plain"),
	      "disk: moved with its content");
	hx_write_file(hx_xpath(&env, "victim"), "victim", 6, 0644);
	CHECK_EQ(nfs_rename(nfs, "/dir/moved", "/victim"), 0, "nfs_rename over an existing file");
	CHECK(disk_content("victim", "plain") && access(hx_xpath(&env, "dir/moved"), F_OK) != 0,
	      "disk: target replaced");
	CHECK(stat(hx_xpath(&env, "dir/hard"), &ds) == 0 && ds.st_nlink == 2, "the hard link still counts 2");
	mkdir(hx_xpath(&env, "d1"), 0755);
	hx_write_file(hx_xpath(&env, "d1/inner"), "inner", 5, 0644);
	CHECK_EQ(nfs_rename(nfs, "/d1", "/dir/d2"), 0, "nfs_rename of a directory");
	CHECK(disk_content("dir/d2/inner", "inner"), "disk: directory moved with its content");
	CHECK(nfs_rename(nfs, "/nope", "/x") == -ENOENT, "nfs_rename of a missing name: -ENOENT");
	CHECK(nfs_rename(nfs, "/dir", "/dir/d2/inside") != 0, "nfs_rename of a directory into itself fails");
	CHECK(access(hx_xpath(&env, "dir/d2/inner"), F_OK) == 0, "and changes nothing");
}

/* Handles follow the object, not the name. */
static void test_handles(void)
{
	struct rpc_context *nfs;
	struct hx_fh root, fh, dir;
	RENAME3args ra;
	RENAME3res rr;
	READ3res r;
	fattr3 a;
	struct stat ds;

	hx_section("handles across rename and unlink of one link");
	if (hx_open_export(&env, env.export_dir, -1, -1, &nfs, &root) != 0)
		return;
	hx_write_file(hx_xpath(&env, "keep"), "keepme", 6, 0644);
	stat(hx_xpath(&env, "keep"), &ds);
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "keep", &fh, NULL), NFS3_OK, "LOOKUP keep") ||
	    !CHECK_NFS(hx3_lookup(nfs, &root, "dir", &dir, NULL), NFS3_OK, "LOOKUP dir"))
		goto out;
	memset(&ra, 0, sizeof(ra));
	ra.from.dir = hx_fh3(&root);
	ra.from.name = "keep";
	ra.to.dir = hx_fh3(&dir);
	ra.to.name = "kept";
	HX_CALL(nfs, rpc_nfs3_rename_async, &ra, zdr_RENAME3res, &rr);
	CHECK_NFS(rr.status, NFS3_OK, "RENAME keep -> dir/kept");
	if (CHECK_NFS(hx3_getattr(nfs, &fh, &a), NFS3_OK, "GETATTR the old handle after rename"))
		CHECK_EQ(a.fileid, ds.st_ino, "same object");
	if (CHECK_NFS(hx3_read(nfs, &fh, 0, 100, &r), NFS3_OK, "READ the old handle after rename"))
		CHECK(r.READ3res_u.resok.data.data_len == 6 &&
		      !memcmp(r.READ3res_u.resok.data.data_val, "keepme", 6), "content intact");
	link(hx_xpath(&env, "dir/kept"), hx_xpath(&env, "keep2"));
	unlink(hx_xpath(&env, "dir/kept"));
	CHECK_NFS(hx3_getattr(nfs, &fh, &a), NFS3_OK, "GETATTR after unlinking one of two links");
	CHECK_EQ(a.nlink, 1, "nlink now 1");
out:
	hx_rpc_close(nfs);
}

int main(int argc, char **argv)
{
	struct nfs_context *nfs;
	char err[512];

	hx_begin("namespace", argc, argv);
	hx_env_init(&env);
	mkdir(hx_xpath(&env, "dir"), 0755);
	hx_write_file(hx_xpath(&env, "plainfile"), "plain", 5, 0644);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	nfs = hx_mount(&env, env.export_dir, -1, -1, err, sizeof(err));
	if (CHECK(nfs != NULL, "nfs_mount (%s)", nfs ? "" : err)) {
		test_highlevel(nfs);
		hx_umount(nfs);
	}
	test_handles();
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	return hx_end();
}
