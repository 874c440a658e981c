/*
 * test_reload.c - SIGHUP re-reads the exports file:
 *  - an export added to the file can be mounted after SIGHUP;
 *  - a broken exports file is refused on SIGHUP: the old exports stay
 *    served, the daemon keeps running;
 *  - an export removed from the file can no longer be mounted and its
 *    handles are refused;
 *  - connections open across the reloads are not dropped (a raw TCP
 *    connection and a libnfs context keep working without reconnecting).
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;

/* MNT until it succeeds (want_ok) or is refused (!want_ok): reload is asynchronous. At most 5 s. */
static int mnt_until(const char *path, bool want_ok, struct hx_fh *fh)
{
	struct rpc_context *mnt;
	double deadline = hx_now() + 5.0;
	int st = -1;

	while (hx_now() < deadline) {
		mnt = hx_rpc_connect(&env, MOUNT_PROGRAM, MOUNT_V3, -1, -1);
		st = mnt ? hx_mnt(mnt, path, fh) : -1;
		hx_rpc_close(mnt);
		if (st != -1 && (st == MNT3_OK) == want_ok)
			break;
		usleep(100000);
	}
	return st;
}

static bool raw_null_ok(struct raw_conn *c, uint32_t xid)
{
	struct raw_reply r;
	bool ok;

	ok = raw_call(c, xid, RAW_NFS_PROG, 3, 0, NULL, 0, &r) == RAW_RECV_OK && r.xid == xid &&
	     r.reply_stat == 0 && r.accept_stat == 0;
	raw_reply_free(&r);
	return ok;
}

int main(int argc, char **argv)
{
	struct raw_conn c;
	struct rpc_context *nfs;
	struct hx_fh root, b_root;
	char b_path[PATH_MAX];
	fattr3 a;
	int st;

	hx_begin("reload", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	snprintf(b_path, sizeof(b_path), "%s", hx_path(&env, "exportB"));
	mkdir(b_path, 0755);
	hx_write_file(hx_xpath(&env, "a-file"), "A", 1, 0644);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (hx_open_export(&env, env.export_dir, 0, 0, &nfs, &root) != 0)
		return hx_end();
	if (!CHECK(raw_connect(&c, env.port) == 0, "raw connection held across reloads") ||
	    !CHECK(raw_null_ok(&c, 1), "NULL on it"))
		return hx_end();
	st = mnt_until(b_path, false, NULL);
	CHECK(st != MNT3_OK && st != -1, "exportB not exported yet (%s)", hx_mntstat_name(st));

	hx_section("add an export, SIGHUP");
	hx_write_exports(&env, "%s 127.0.0.1(rw,no_root_squash,insecure)\n"
			 "%s 127.0.0.1(rw,no_root_squash,insecure)\n", env.export_dir, b_path);
	CHECK(hx_daemon_signal(&env, SIGHUP) == 0, "SIGHUP sent");
	st = mnt_until(b_path, true, &b_root);
	CHECK(st == MNT3_OK, "MNT exportB after SIGHUP (%s)", hx_mntstat_name(st));
	CHECK(hx_daemon_alive(&env), "daemon running");
	CHECK(raw_null_ok(&c, 2), "the raw connection survived the reload");
	CHECK_NFS(hx3_getattr(nfs, &root, NULL), NFS3_OK, "the libnfs connection survived (GETATTR export root)");
	if (st == MNT3_OK)
		CHECK_NFS(hx3_create(nfs, &b_root, "in-b", 0644, NULL), NFS3_OK, "CREATE in exportB");

	hx_section("a broken exports file, SIGHUP");
	hx_write_exports(&env, "%s 127.0.0.1(rw,no_such_option)\n/relative/path (((\n", env.export_dir);
	CHECK(hx_daemon_signal(&env, SIGHUP) == 0, "SIGHUP sent");
	usleep(500000);
	CHECK(hx_daemon_alive(&env), "daemon still running after a bad exports file");
	st = mnt_until(b_path, true, NULL);
	CHECK(st == MNT3_OK, "exportB still served (old table kept) (%s)", hx_mntstat_name(st));
	st = mnt_until(env.export_dir, true, NULL);
	CHECK(st == MNT3_OK, "export still served (%s)", hx_mntstat_name(st));
	CHECK(raw_null_ok(&c, 3), "the raw connection survived");
	CHECK_NFS(hx3_getattr(nfs, &root, NULL), NFS3_OK, "the libnfs connection survived");

	hx_section("remove an export, SIGHUP");
	hx_write_exports(&env, "%s 127.0.0.1(rw,no_root_squash,insecure)\n", env.export_dir);
	CHECK(hx_daemon_signal(&env, SIGHUP) == 0, "SIGHUP sent");
	st = mnt_until(b_path, false, NULL);
	CHECK(st != MNT3_OK && st != -1, "exportB no longer mountable (%s)", hx_mntstat_name(st));
	st = hx3_getattr(nfs, &b_root, &a);
	CHECK(st != NFS3_OK && st != -1, "its root handle is refused (%s)", hx_nfsstat_name(st));
	st = hx3_create(nfs, &b_root, "after-unexport", 0644, NULL);
	CHECK(st != NFS3_OK && st != -1, "CREATE through it refused (%s)", hx_nfsstat_name(st));
	CHECK(access(hx_path(&env, "exportB/after-unexport"), F_OK) != 0, "nothing created in exportB");
	CHECK_NFS(hx3_getattr(nfs, &root, NULL), NFS3_OK, "the remaining export still works");
	CHECK(raw_null_ok(&c, 4), "the raw connection survived three reloads");

	raw_close(&c);
	hx_rpc_close(nfs);
	hx_daemon_stop(&env);
	return hx_end();
}
