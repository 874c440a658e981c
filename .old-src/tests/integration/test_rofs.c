/*
 * test_rofs.c - a read-only export: every modifying procedure answers
 * NFS3ERR_ROFS (RFC 1813 §2.6) and changes nothing on disk, reading works,
 * ACCESS grants no MODIFY/EXTEND/DELETE. The exports line also checks that
 * the first matching client spec decides (192.0.2.0/24 is rw, 127.0.0.1
 * is ro). Runs as root with no_root_squash, so only "ro" can refuse.
 */
#include "tests/integration/harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;

static void test_ro(void)
{
	struct rpc_context *nfs;
	struct hx_fh root, fh, dir;
	SETATTR3args sa;
	SETATTR3res sr;
	SYMLINK3args sy;
	SYMLINK3res syr;
	MKNOD3args mk;
	MKNOD3res mkr;
	RENAME3args rn;
	RENAME3res rnr;
	LINK3args ln;
	LINK3res lnr;
	READ3res r;
	uint32_t got = 0;
	struct stat st;

	if (hx_open_export(&env, env.export_dir, 0, 0, &nfs, &root) != 0)
		return;
	hx_section("reading works");
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "file", &fh, NULL), NFS3_OK, "LOOKUP file") ||
	    !CHECK_NFS(hx3_lookup(nfs, &root, "dir", &dir, NULL), NFS3_OK, "LOOKUP dir"))
		goto out;
	if (CHECK_NFS(hx3_read(nfs, &fh, 0, 100, &r), NFS3_OK, "READ"))
		CHECK_EQ(r.READ3res_u.resok.count, 8, "8 bytes");
	CHECK_NFS(hx3_getattr(nfs, &fh, NULL), NFS3_OK, "GETATTR");

	hx_section("every change is NFS3ERR_ROFS");
	CHECK_NFS(hx3_write(nfs, &fh, 0, "CHANGED!", 8, FILE_SYNC, NULL), NFS3ERR_ROFS, "WRITE");
	memset(&sa, 0, sizeof(sa));
	sa.object = hx_fh3(&fh);
	sa.new_attributes.mode.set_it = 1;
	sa.new_attributes.mode.set_mode3_u.mode = 0600;
	HX_CALL(nfs, rpc_nfs3_setattr_async, &sa, zdr_SETATTR3res, &sr);
	CHECK_NFS(sr.status, NFS3ERR_ROFS, "SETATTR mode");
	sa.new_attributes.mode.set_it = 0;
	sa.new_attributes.size.set_it = 1;
	HX_CALL(nfs, rpc_nfs3_setattr_async, &sa, zdr_SETATTR3res, &sr);
	CHECK_NFS(sr.status, NFS3ERR_ROFS, "SETATTR size 0");
	CHECK_NFS(hx3_create(nfs, &root, "new", 0644, NULL), NFS3ERR_ROFS, "CREATE");
	CHECK_NFS(hx3_mkdir(nfs, &root, "newdir", 0755, NULL), NFS3ERR_ROFS, "MKDIR");
	memset(&sy, 0, sizeof(sy));
	sy.where.dir = hx_fh3(&root);
	sy.where.name = "newlink";
	sy.symlink.symlink_data = "file";
	HX_CALL(nfs, rpc_nfs3_symlink_async, &sy, zdr_SYMLINK3res, &syr);
	CHECK_NFS(syr.status, NFS3ERR_ROFS, "SYMLINK");
	memset(&mk, 0, sizeof(mk));
	mk.where.dir = hx_fh3(&root);
	mk.where.name = "newfifo";
	mk.what.type = NF3FIFO;
	HX_CALL(nfs, rpc_nfs3_mknod_async, &mk, zdr_MKNOD3res, &mkr);
	CHECK_NFS(mkr.status, NFS3ERR_ROFS, "MKNOD");
	CHECK_NFS(hx3_remove(nfs, &root, "file"), NFS3ERR_ROFS, "REMOVE");
	CHECK_NFS(hx3_rmdir(nfs, &root, "dir"), NFS3ERR_ROFS, "RMDIR");
	memset(&rn, 0, sizeof(rn));
	rn.from.dir = hx_fh3(&root);
	rn.from.name = "file";
	rn.to.dir = hx_fh3(&dir);
	rn.to.name = "moved";
	HX_CALL(nfs, rpc_nfs3_rename_async, &rn, zdr_RENAME3res, &rnr);
	CHECK_NFS(rnr.status, NFS3ERR_ROFS, "RENAME");
	memset(&ln, 0, sizeof(ln));
	ln.file = hx_fh3(&fh);
	ln.link.dir = hx_fh3(&root);
	ln.link.name = "hardlink";
	HX_CALL(nfs, rpc_nfs3_link_async, &ln, zdr_LINK3res, &lnr);
	CHECK_NFS(lnr.status, NFS3ERR_ROFS, "LINK");

	CHECK_NFS(hx3_access(nfs, &fh, ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND, &got), NFS3_OK,
		  "ACCESS file");
	CHECK_EQ(got, ACCESS3_READ, "ACCESS grants READ only on a read-only export");
	CHECK_NFS(hx3_access(nfs, &root, ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE,
			     &got), NFS3_OK, "ACCESS root dir");
	CHECK_EQ(got, ACCESS3_LOOKUP, "ACCESS grants LOOKUP only on the read-only root");

	hx_section("nothing changed on disk");
	{
		char buf[16] = "";
		int fd = open(hx_xpath(&env, "file"), O_RDONLY);

		CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 8 && !memcmp(buf, "readonly", 8) &&
		      fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0644, "file content and mode unchanged");
		if (fd >= 0)
			close(fd);
	}
	CHECK(access(hx_xpath(&env, "new"), F_OK) != 0 && access(hx_xpath(&env, "newdir"), F_OK) != 0 &&
	      access(hx_xpath(&env, "newlink"), F_OK) != 0 && access(hx_xpath(&env, "newfifo"), F_OK) != 0 &&
	      access(hx_xpath(&env, "hardlink"), F_OK) != 0 && access(hx_xpath(&env, "dir"), F_OK) == 0 &&
	      access(hx_xpath(&env, "dir/moved"), F_OK) != 0, "no name created, removed or moved");
out:
	hx_rpc_close(nfs);
}

int main(int argc, char **argv)
{
	hx_begin("rofs", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	hx_write_file(hx_xpath(&env, "file"), "readonly", 8, 0644);
	mkdir(hx_xpath(&env, "dir"), 0755);
	hx_write_exports(&env, "%s 192.0.2.0/24(rw,no_root_squash,insecure) 127.0.0.1(ro,no_root_squash,insecure)\n",
			 env.export_dir);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	test_ro();
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	return hx_end();
}
