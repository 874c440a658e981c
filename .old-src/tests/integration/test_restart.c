/*
 * test_restart.c - file handles survive a daemon restart (the handle key
 * lives in the state dir): handles of the export root, a file and a
 * directory taken before SIGTERM still work after rnfsd is started again
 * with the same state dir (GETATTR, READ, LOOKUP, WRITE), both on a new
 * connection and through the libnfs context the client kept (it
 * reconnects). A WRITE verifier changes across the restart (RFC 1813
 * §3.3.7: clients must resend unstable data). With a fresh state dir the
 * old handles are refused (the key is not the same).
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
	struct nfs_context *hl;
	struct nfsfh *hfh = NULL;
	struct hx_fh root, file, dir, f2;
	WRITE3res w;
	READ3res r;
	fattr3 a;
	char verf1[8], err[512], buf[32];
	struct stat st;
	int rc;

	hx_begin("restart", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	hx_write_file(hx_xpath(&env, "file"), "persistent", 10, 0644);
	mkdir(hx_xpath(&env, "dir"), 0755);
	hx_write_file(hx_xpath(&env, "dir/f2"), "two", 3, 0644);
	if (hx_daemon_start(&env) != 0)
		return hx_end();

	hx_section("before the restart");
	if (hx_open_export(&env, env.export_dir, 0, 0, &nfs, &root) != 0)
		return hx_end();
	CHECK_NFS(hx3_lookup(nfs, &root, "file", &file, NULL), NFS3_OK, "LOOKUP file");
	CHECK_NFS(hx3_lookup(nfs, &root, "dir", &dir, NULL), NFS3_OK, "LOOKUP dir");
	CHECK_NFS(hx3_lookup(nfs, &dir, "f2", &f2, NULL), NFS3_OK, "LOOKUP dir/f2");
	if (CHECK_NFS(hx3_write(nfs, &f2, 3, "!", 1, UNSTABLE, &w), NFS3_OK, "UNSTABLE WRITE dir/f2"))
		memcpy(verf1, w.WRITE3res_u.resok.verf, 8);
	hx_rpc_close(nfs);
	hx_mount_autoreconnect = 10; /* like a real client: reconnect after the restart */
	hl = hx_mount(&env, env.export_dir, -1, -1, err, sizeof(err));
	if (CHECK(hl != NULL, "libnfs mount (%s)", hl ? "" : err)) {
		CHECK(nfs_open(hl, "/file", O_RDONLY, &hfh) == 0, "nfs_open /file (kept open)");
	}

	hx_section("SIGTERM, start again with the same state dir");
	hx_daemon_stop(&env);
	CHECK(!hx_port_open(env.port), "port closed while the daemon is down");
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	nfs = hx_rpc_connect(&env, NFS_PROGRAM, NFS_V3, 0, 0);
	if (!CHECK(nfs != NULL, "new NFS connection (no MNT)"))
		return hx_end();
	if (CHECK_NFS(hx3_getattr(nfs, &root, &a), NFS3_OK, "GETATTR old root handle"))
		CHECK(stat(env.export_dir, &st) == 0 && a.fileid == st.st_ino, "it is still the export root");
	if (CHECK_NFS(hx3_getattr(nfs, &file, &a), NFS3_OK, "GETATTR old file handle"))
		CHECK_EQ(a.size, 10, "size");
	if (CHECK_NFS(hx3_read(nfs, &file, 0, 100, &r), NFS3_OK, "READ old file handle"))
		CHECK(r.READ3res_u.resok.data.data_len == 10 &&
		      !memcmp(r.READ3res_u.resok.data.data_val, "persistent", 10), "content \"persistent\"");
	CHECK_NFS(hx3_lookup(nfs, &dir, "f2", NULL, NULL), NFS3_OK, "LOOKUP in old dir handle");
	if (CHECK_NFS(hx3_write(nfs, &f2, 4, "?", 1, FILE_SYNC, &w), NFS3_OK, "WRITE old dir/f2 handle"))
		CHECK(memcmp(verf1, w.WRITE3res_u.resok.verf, 8) != 0,
		      "write verifier differs from before the restart");
	hx_rpc_close(nfs);

	if (hl && hfh) {
		memset(buf, 0, sizeof(buf));
		rc = nfs_pread(hl, hfh, 0, sizeof(buf), buf);
		CHECK(rc == 10 && !memcmp(buf, "persistent", 10),
		      "nfs_pread on the libnfs file kept open across the restart (%d: %s)", rc,
		      rc < 0 ? nfs_get_error(hl) : "");
		nfs_close(hl, hfh);
	}
	hx_umount(hl);

	hx_section("a fresh state dir: old handles refused");
	hx_daemon_stop(&env);
	snprintf(env.state_dir, sizeof(env.state_dir), "%s/state2", env.dir);
	mkdir(env.state_dir, 0700);
	hx_write_config(&env);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	nfs = hx_rpc_connect(&env, NFS_PROGRAM, NFS_V3, 0, 0);
	if (CHECK(nfs != NULL, "NFS connection")) {
		rc = hx3_getattr(nfs, &file, NULL);
		CHECK(rc == NFS3ERR_STALE || rc == NFS3ERR_BADHANDLE,
		      "GETATTR with a handle made under another key: STALE or BADHANDLE (%s)",
		      hx_nfsstat_name(rc));
	}
	hx_rpc_close(nfs);
	hx_daemon_stop(&env);
	return hx_end();
}
