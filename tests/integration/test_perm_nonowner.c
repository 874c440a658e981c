/*
 * test_perm_nonowner.c - AUTH_SYS identity is enforced (RFC 1813 §4.4,
 * RFC 5531 appendix A): uid 1234/gid 1234 may read a root-owned 0644 file
 * but not write, truncate, chmod, chown or remove it, nor create in a
 * root-owned 0755 directory; ACCESS reports exactly that; a 0600 file is
 * unreadable; uid 1234 creates files owned by 1234:1234 in its own
 * directory. Checked with the raw API (exact status) and with libnfs's
 * nfs_open()/nfs_pwrite() as an application sees it. Needs root.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UID 1234
#define GID 1234

static struct hx_env env;

static bool disk_is(const char *rel, const char *content, mode_t mode, uid_t uid)
{
	char buf[64];
	struct stat st;
	int fd = open(hx_xpath(&env, "%s", rel), O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	fstat(fd, &st);
	close(fd);
	return n == (ssize_t)strlen(content) && !memcmp(buf, content, n) && (st.st_mode & 07777) == mode &&
	       st.st_uid == uid;
}

static void test_raw(void)
{
	struct rpc_context *nfs;
	struct hx_fh root, fh, secret, udir, newf, gfile;
	SETATTR3args sa;
	SETATTR3res sr;
	READ3res r;
	uint32_t got = 0;
	struct stat st;

	hx_section("uid %d against root's files (raw)", UID);
	if (hx_open_export(&env, env.export_dir, UID, GID, &nfs, &root) != 0)
		return;
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "rootfile", &fh, NULL), NFS3_OK, "LOOKUP rootfile"))
		goto out;
	if (CHECK_NFS(hx3_read(nfs, &fh, 0, 100, &r), NFS3_OK, "READ root's 0644 file"))
		CHECK_EQ(r.READ3res_u.resok.count, 8, "all 8 bytes");
	CHECK_NFS(hx3_write(nfs, &fh, 0, "HACKED!!", 8, FILE_SYNC, NULL), NFS3ERR_ACCES,
		  "WRITE root's 0644 file");
	memset(&sa, 0, sizeof(sa));
	sa.object = hx_fh3(&fh);
	sa.new_attributes.size.set_it = 1;
	sa.new_attributes.size.set_size3_u.size = 0;
	HX_CALL(nfs, rpc_nfs3_setattr_async, &sa, zdr_SETATTR3res, &sr);
	CHECK_NFS2(sr.status, NFS3ERR_ACCES, NFS3ERR_PERM, "SETATTR size 0 on root's file");
	memset(&sa.new_attributes, 0, sizeof(sa.new_attributes));
	sa.new_attributes.mode.set_it = 1;
	sa.new_attributes.mode.set_mode3_u.mode = 0666;
	HX_CALL(nfs, rpc_nfs3_setattr_async, &sa, zdr_SETATTR3res, &sr);
	CHECK_NFS(sr.status, NFS3ERR_PERM, "SETATTR mode 0666 on root's file (not the owner)");
	memset(&sa.new_attributes, 0, sizeof(sa.new_attributes));
	sa.new_attributes.uid.set_it = 1;
	sa.new_attributes.uid.set_uid3_u.uid = UID;
	HX_CALL(nfs, rpc_nfs3_setattr_async, &sa, zdr_SETATTR3res, &sr);
	CHECK_NFS(sr.status, NFS3ERR_PERM, "SETATTR uid %d on root's file (chown)", UID);
	CHECK(disk_is("rootfile", "original", 0644, 0), "disk: rootfile unchanged (content, mode, owner)");

	CHECK_NFS(hx3_access(nfs, &fh, ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND, &got), NFS3_OK,
		  "ACCESS rootfile");
	CHECK_EQ(got, ACCESS3_READ, "ACCESS grants READ only");

	CHECK_NFS(hx3_remove(nfs, &root, "rootfile"), NFS3ERR_ACCES, "REMOVE rootfile from root's 0755 dir");
	CHECK_NFS(hx3_create(nfs, &root, "intruder", 0644, NULL), NFS3ERR_ACCES, "CREATE in root's 0755 dir");
	CHECK_NFS(hx3_mkdir(nfs, &root, "intruderdir", 0755, NULL), NFS3ERR_ACCES, "MKDIR in root's 0755 dir");
	CHECK(access(hx_xpath(&env, "rootfile"), F_OK) == 0 && access(hx_xpath(&env, "intruder"), F_OK) != 0 &&
	      access(hx_xpath(&env, "intruderdir"), F_OK) != 0, "disk: nothing removed or created");

	if (CHECK_NFS(hx3_lookup(nfs, &root, "secret", &secret, NULL), NFS3_OK, "LOOKUP secret (0600 root)"))
		CHECK_NFS(hx3_read(nfs, &secret, 0, 100, &r), NFS3ERR_ACCES, "READ root's 0600 file");

	if (CHECK_NFS(hx3_lookup(nfs, &root, "groupfile", &gfile, NULL), NFS3_OK, "LOOKUP groupfile"))
		CHECK_NFS(hx3_write(nfs, &gfile, 0, "grp", 3, FILE_SYNC, NULL), NFS3_OK,
			  "WRITE a 0660 root:%d file as gid %d (group access)", GID, GID);

	if (CHECK_NFS(hx3_lookup(nfs, &root, "userdir", &udir, NULL), NFS3_OK, "LOOKUP userdir") &&
	    CHECK_NFS(hx3_create(nfs, &udir, "mine", 0640, &newf), NFS3_OK, "CREATE userdir/mine as uid %d", UID)) {
		CHECK(stat(hx_xpath(&env, "userdir/mine"), &st) == 0 && st.st_uid == UID && st.st_gid == GID,
		      "disk: userdir/mine owned by %d:%d (%u:%u)", UID, GID, st.st_uid, st.st_gid);
		CHECK_NFS(hx3_write(nfs, &newf, 0, "mine", 4, FILE_SYNC, NULL), NFS3_OK, "WRITE own file");
	}
	if (CHECK_NFS(hx3_mkdir(nfs, &udir, "mysub", 0750, NULL), NFS3_OK, "MKDIR userdir/mysub"))
		CHECK(stat(hx_xpath(&env, "userdir/mysub"), &st) == 0 && st.st_uid == UID,
		      "disk: mysub owned by %d", UID);
out:
	hx_rpc_close(nfs);
}

static void test_highlevel(void)
{
	struct nfs_context *nfs;
	struct nfsfh *fh = NULL;
	char err[512];
	int rc;

	hx_section("uid %d through libnfs nfs_open()", UID);
	nfs = hx_mount(&env, env.export_dir, UID, GID, err, sizeof(err));
	if (!CHECK(nfs != NULL, "nfs_mount as uid %d (%s)", UID, nfs ? "" : err))
		return;
	rc = nfs_open(nfs, "/rootfile", O_WRONLY, &fh);
	if (rc == 0) {
		/* libnfs may check ACCESS lazily: then the write itself must fail. */
		rc = nfs_pwrite(nfs, fh, 0, 8, "HACKED!!");
		CHECK(rc < 0, "nfs_pwrite to root's 0644 file fails (%d)", rc);
		nfs_close(nfs, fh);
	} else {
		CHECK(rc == -EACCES, "nfs_open(O_WRONLY) of root's 0644 file: -EACCES (%d)", rc);
	}
	rc = nfs_open(nfs, "/rootfile", O_RDONLY, &fh);
	if (CHECK(rc == 0, "nfs_open(O_RDONLY) of root's 0644 file")) {
		char buf[16] = "";

		CHECK(nfs_pread(nfs, fh, 0, sizeof(buf), buf) == 8 && !memcmp(buf, "original", 8), "and read it");
		nfs_close(nfs, fh);
	}
	CHECK(nfs_unlink(nfs, "/rootfile") == -EACCES, "nfs_unlink of root's file: -EACCES");
	CHECK(disk_is("rootfile", "original", 0644, 0), "disk: rootfile unchanged");
	hx_umount(nfs);
}

int main(int argc, char **argv)
{
	hx_begin("perm_nonowner", argc, argv);
	hx_require_root();
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	hx_write_file(hx_xpath(&env, "rootfile"), "original", 8, 0644);
	hx_write_file(hx_xpath(&env, "secret"), "secret", 6, 0600);
	hx_write_file(hx_xpath(&env, "groupfile"), "", 0, 0660);
	if (chown(hx_xpath(&env, "groupfile"), 0, GID) != 0)
		perror("chown groupfile");
	mkdir(hx_xpath(&env, "userdir"), 0755);
	if (chown(hx_xpath(&env, "userdir"), UID, GID) != 0)
		perror("chown userdir");
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	test_raw();
	test_highlevel();
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	return hx_end();
}
