/*
 * test_mount3.c - MOUNT v3 (RFC 1813 §5.2): NULL, MNT, DUMP, UMNT, UMNTALL,
 * EXPORT through libnfs's raw API on the same TCP port as NFS, MNT errors,
 * the MNT handle used with NFS GETATTR, and a plain libnfs nfs_mount() +
 * nfs_stat64() + nfs_umount() through the URL's nfsport/mountport (no
 * rpcbind).
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;

static bool dump_has(struct rpc_context *mnt, const char *dir, char *host, size_t hostlen)
{
	mountlist ml = NULL;
	struct mountbody *b, bv;

	if (HX_CALL0(mnt, rpc_mount3_dump_async, zdr_mountlist, &ml) != RPC_STATUS_SUCCESS) {
		CHECK(false, "DUMP answers: %s", hx_call_error());
		return false;
	}
	for (b = ml; b; b = bv.ml_next) {
		memcpy(&bv, b, sizeof(bv)); /* libnfs 4.0 list nodes may be misaligned */
		b = &bv;
		if (b->ml_directory && !strcmp(b->ml_directory, dir)) {
			if (host)
				snprintf(host, hostlen, "%s", b->ml_hostname ? b->ml_hostname : "");
			return true;
		}
	}
	return false;
}

static void test_mnt(struct rpc_context *mnt)
{
	mountres3 res;
	struct hx_fh fh;
	struct rpc_context *nfs;
	fattr3 attr;
	struct stat st;
	unsigned i;
	bool sys = false;
	int rc;

	hx_section("MNT (§5.2.1)");
	rc = HX_CALL(mnt, rpc_mount3_mnt_async, env.export_dir, zdr_mountres3, &res);
	if (!CHECK_EQ(rc, RPC_STATUS_SUCCESS, "MNT %s answers", env.export_dir) ||
	    !CHECK(res.fhs_status == MNT3_OK, "MNT status %s", hx_mntstat_name(res.fhs_status)))
		return;
	CHECK(res.mountres3_u.mountinfo.fhandle.fhandle3_len >= 1 &&
	      res.mountres3_u.mountinfo.fhandle.fhandle3_len <= FHSIZE3,
	      "handle length 1..64 (%u)", res.mountres3_u.mountinfo.fhandle.fhandle3_len);
	for (i = 0; i < res.mountres3_u.mountinfo.auth_flavors.auth_flavors_len; i++)
		if (res.mountres3_u.mountinfo.auth_flavors.auth_flavors_val[i] == AUTH_UNIX)
			sys = true;
	CHECK(sys, "auth_flavors lists AUTH_SYS (%u flavors)",
	      res.mountres3_u.mountinfo.auth_flavors.auth_flavors_len);
	hx_fh_set(&fh, (nfs_fh3 *)&res.mountres3_u.mountinfo.fhandle);
	nfs = hx_rpc_connect(&env, NFS_PROGRAM, NFS_V3, -1, -1);
	if (CHECK(nfs != NULL, "NFS v3 connection on the same port") &&
	    CHECK_NFS(hx3_getattr(nfs, &fh, &attr), NFS3_OK, "GETATTR on the MNT handle") &&
	    stat(env.export_dir, &st) == 0) {
		CHECK_EQ(attr.fileid, st.st_ino, "MNT handle is the export root");
		CHECK_EQ(attr.type, NF3DIR, "a directory");
	}
	hx_rpc_close(nfs);

	rc = hx_mnt(mnt, "/nonexistent/path", NULL);
	CHECK(rc == MNT3ERR_NOENT || rc == MNT3ERR_ACCES, "MNT of a path that does not exist: %s",
	      hx_mntstat_name(rc));
	rc = hx_mnt(mnt, env.dir, NULL);
	CHECK(rc == MNT3ERR_ACCES || rc == MNT3ERR_NOENT || rc == MNT3ERR_PERM,
	      "MNT of the (unexported) parent of the export: %s", hx_mntstat_name(rc));
	rc = hx_mnt(mnt, hx_path(&env, "export/../rnfsd.conf"), NULL);
	CHECK(rc != MNT3_OK && rc != -1, "MNT of export/../rnfsd.conf refused: %s", hx_mntstat_name(rc));
	rc = hx_mnt(mnt, "", NULL);
	CHECK(rc != MNT3_OK, "MNT of an empty path refused: %s", hx_mntstat_name(rc));
}

/* A dirpath longer than MNTPATHLEN (1024): GARBAGE_ARGS or MNT3ERR_NAMETOOLONG, never a crash. */
static void test_mnt_long_path(void)
{
	struct raw_conn c;
	struct raw_reply r;
	struct xb a;
	char *p = malloc(1100);
	uint32_t st;

	hx_section("MNT with a 1099-byte path");
	memset(p, 'a', 1099);
	p[0] = '/';
	p[1099] = 0;
	xb_init(&a);
	xb_string(&a, p);
	if (CHECK(raw_connect(&c, env.mount_port) == 0, "raw connection") &&
	    CHECK(raw_call(&c, 0x4d4e5401, RAW_MOUNT_PROG, 3, 1, a.p, a.len, &r) == RAW_RECV_OK,
		  "a reply arrives")) {
		st = r.reply_stat == 0 && r.accept_stat == 0 ? xd_u32(&r.body) : 0xffffffff;
		CHECK((r.reply_stat == 0 && r.accept_stat == 4) || st == MNT3ERR_NAMETOOLONG,
		      "GARBAGE_ARGS or MNT3ERR_NAMETOOLONG (reply_stat %u accept_stat %u mountstat %d)",
		      r.reply_stat, r.accept_stat, (int)st);
		raw_reply_free(&r);
	}
	raw_close(&c);
	xb_free(&a);
	free(p);
}

static void test_dump_umnt(struct rpc_context *mnt)
{
	char host[256] = "";
	int dummy;

	hx_section("DUMP (§5.2.2), UMNT (§5.2.3), UMNTALL (§5.2.4)");
	CHECK(dump_has(mnt, env.export_dir, host, sizeof(host)), "DUMP lists the mounted export");
	hx_note("DUMP hostname \"%s\"", host);
	CHECK(host[0] != 0, "DUMP gives a client hostname");
	CHECK_EQ(HX_CALL(mnt, rpc_mount3_umnt_async, env.export_dir, libnfs_zdr_void, &dummy),
		 RPC_STATUS_SUCCESS, "UMNT answers");
	CHECK(!dump_has(mnt, env.export_dir, NULL, 0), "DUMP no longer lists it after UMNT");
	CHECK_EQ(HX_CALL(mnt, rpc_mount3_umnt_async, env.export_dir, libnfs_zdr_void, &dummy),
		 RPC_STATUS_SUCCESS, "UMNT of a path not mounted answers too");

	CHECK(hx_mnt(mnt, env.export_dir, NULL) == MNT3_OK, "MNT again");
	CHECK(hx_mnt(mnt, hx_path(&env, "export2"), NULL) == MNT3_OK, "MNT export2");
	CHECK(dump_has(mnt, env.export_dir, NULL, 0) && dump_has(mnt, hx_path(&env, "export2"), NULL, 0),
	      "DUMP lists both");
	CHECK_EQ(HX_CALL0(mnt, rpc_mount3_umntall_async, libnfs_zdr_void, &dummy), RPC_STATUS_SUCCESS,
		 "UMNTALL answers");
	CHECK(!dump_has(mnt, env.export_dir, NULL, 0) && !dump_has(mnt, hx_path(&env, "export2"), NULL, 0),
	      "DUMP lists neither after UMNTALL");
}

static void test_export(struct rpc_context *mnt)
{
	exports ex = NULL;
	struct exportnode *n, nv;
	struct groupnode *g, gv;
	bool found1 = false, found2 = false, group1 = false;

	hx_section("EXPORT (§5.2.5)");
	if (!CHECK_EQ(HX_CALL0(mnt, rpc_mount3_export_async, zdr_exports, &ex), RPC_STATUS_SUCCESS,
		      "EXPORT answers"))
		return;
	for (n = ex; n; n = nv.ex_next) {
		memcpy(&nv, n, sizeof(nv)); /* libnfs 4.0 list nodes may be misaligned */
		n = &nv;
		hx_note("export %s", n->ex_dir);
		if (!strcmp(n->ex_dir, env.export_dir)) {
			found1 = true;
			for (g = n->ex_groups; g; g = gv.gr_next) {
				memcpy(&gv, g, sizeof(gv));
				if (!strcmp(gv.gr_name, "127.0.0.1"))
					group1 = true;
			}
		}
		if (!strcmp(n->ex_dir, hx_path(&env, "export2")))
			found2 = true;
	}
	CHECK(found1 && found2, "EXPORT lists both exports");
	CHECK(group1, "the first export's groups list its client spec \"127.0.0.1\"");
}

static void test_libnfs_mount(void)
{
	struct nfs_context *nfs;
	struct nfs_stat_64 st;
	char err[512];

	hx_section("libnfs nfs_mount() with nfsport/mountport in the URL");
	nfs = hx_mount(&env, env.export_dir, -1, -1, err, sizeof(err));
	if (!CHECK(nfs != NULL, "nfs_mount %s (%s)", env.export_dir, nfs ? "" : err))
		return;
	if (CHECK(nfs_stat64(nfs, "/hello", &st) == 0, "nfs_stat64 /hello (%s)", nfs_get_error(nfs)))
		CHECK_EQ(st.nfs_size, 5, "size of /hello");
	CHECK(nfs_stat64(nfs, "/nothere", &st) == -ENOENT, "nfs_stat64 of a missing file is -ENOENT");
	CHECK(nfs_umount(nfs) == 0, "nfs_umount (%s)", nfs_get_error(nfs));
	nfs_destroy_context(nfs);
}

int main(int argc, char **argv)
{
	struct rpc_context *mnt;

	hx_begin("mount3", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	mkdir(hx_path(&env, "export2"), 0755);
	hx_write_exports(&env, "%s 127.0.0.1(rw,no_root_squash,insecure)\n"
			 "%s *(ro,insecure)\n", env.export_dir, hx_path(&env, "export2"));
	hx_write_file(hx_xpath(&env, "hello"), "hello", 5, 0644);
	if (hx_daemon_start(&env) != 0)
		return hx_end();

	mnt = hx_rpc_connect(&env, MOUNT_PROGRAM, MOUNT_V3, -1, -1);
	if (!CHECK(mnt != NULL, "connect MOUNT v3 (libnfs pings NULL) on port %u", env.port))
		return hx_end();
	test_mnt(mnt);
	test_mnt_long_path();
	test_dump_umnt(mnt);
	test_export(mnt);
	hx_rpc_close(mnt);
	test_libnfs_mount();
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	return hx_end();
}
