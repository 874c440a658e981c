/*
 * test_stale.c - handles of removed objects are NFS3ERR_STALE (RFC 1813
 * §2.6): a directory after RMDIR (GETATTR, LOOKUP, READDIR, CREATE in it),
 * a file after REMOVE (GETATTR, READ, WRITE), a file removed on the server's
 * disk behind the protocol's back, and a name re-created after removal
 * (a new object: the old handle stays stale, the new one works).
 */
#include "tests/integration/harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;

int main(int argc, char **argv)
{
	struct rpc_context *nfs;
	struct hx_fh root, dir, file, file2, local, again;
	READDIR3args ra;
	READDIR3res rr;
	READ3res r;
	fattr3 a;

	hx_begin("stale", argc, argv);
	hx_env_init(&env);
	hx_write_file(hx_xpath(&env, "ondisk"), "x", 1, 0644);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (hx_open_export(&env, env.export_dir, 0, 0, &nfs, &root) != 0)
		return hx_end();

	hx_section("directory after RMDIR");
	if (CHECK_NFS(hx3_mkdir(nfs, &root, "d", 0755, &dir), NFS3_OK, "MKDIR d") &&
	    CHECK_NFS(hx3_create(nfs, &dir, "f", 0644, &file), NFS3_OK, "CREATE d/f") &&
	    CHECK_NFS(hx3_remove(nfs, &dir, "f"), NFS3_OK, "REMOVE d/f") &&
	    CHECK_NFS(hx3_rmdir(nfs, &root, "d"), NFS3_OK, "RMDIR d")) {
		CHECK_NFS(hx3_getattr(nfs, &dir, NULL), NFS3ERR_STALE, "GETATTR removed dir");
		CHECK_NFS(hx3_lookup(nfs, &dir, "f", NULL, NULL), NFS3ERR_STALE, "LOOKUP in removed dir");
		CHECK_NFS(hx3_create(nfs, &dir, "g", 0644, NULL), NFS3ERR_STALE, "CREATE in removed dir");
		memset(&ra, 0, sizeof(ra));
		ra.dir = hx_fh3(&dir);
		ra.count = 4096;
		HX_CALL(nfs, rpc_nfs3_readdir_async, &ra, zdr_READDIR3res, &rr);
		CHECK_NFS(rr.status, NFS3ERR_STALE, "READDIR removed dir");
		CHECK_NFS(hx3_getattr(nfs, &file, NULL), NFS3ERR_STALE, "GETATTR removed file d/f");
	}

	hx_section("file after REMOVE");
	if (CHECK_NFS(hx3_create(nfs, &root, "f2", 0644, &file2), NFS3_OK, "CREATE f2") &&
	    CHECK_NFS(hx3_write(nfs, &file2, 0, "hello", 5, FILE_SYNC, NULL), NFS3_OK, "WRITE f2") &&
	    CHECK_NFS(hx3_remove(nfs, &root, "f2"), NFS3_OK, "REMOVE f2")) {
		CHECK_NFS(hx3_getattr(nfs, &file2, NULL), NFS3ERR_STALE, "GETATTR removed f2");
		CHECK_NFS(hx3_read(nfs, &file2, 0, 5, &r), NFS3ERR_STALE, "READ removed f2");
		CHECK_NFS(hx3_write(nfs, &file2, 0, "again", 5, FILE_SYNC, NULL), NFS3ERR_STALE, "WRITE removed f2");
	}
	hx_section("re-created name is a new object");
	if (CHECK_NFS(hx3_create(nfs, &root, "f2", 0644, &again), NFS3_OK, "CREATE f2 again")) {
		CHECK_NFS(hx3_getattr(nfs, &file2, NULL), NFS3ERR_STALE, "the old handle is still stale");
		CHECK_NFS(hx3_getattr(nfs, &again, &a), NFS3_OK, "the new handle works");
		CHECK_EQ(a.size, 0, "and names the new, empty file");
	}

	hx_section("file removed on the server's disk");
	if (CHECK_NFS(hx3_lookup(nfs, &root, "ondisk", &local, NULL), NFS3_OK, "LOOKUP ondisk")) {
		unlink(hx_xpath(&env, "ondisk"));
		CHECK_NFS(hx3_getattr(nfs, &local, NULL), NFS3ERR_STALE, "GETATTR after a local unlink");
		CHECK_NFS(hx3_lookup(nfs, &root, "ondisk", NULL, NULL), NFS3ERR_NOENT, "LOOKUP ondisk: NOENT");
	}
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_rpc_close(nfs);
	hx_daemon_stop(&env);
	return hx_end();
}
