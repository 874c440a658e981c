/*
 * test_all_squash.c - exports(5) all_squash,anonuid=2222,anongid=2223:
 * every AUTH_SYS identity (root and uid 1234) acts as 2222:2223. Files are
 * created owned by 2222:2223; uid 1234 cannot read its own 0600 file
 * (it is not 1234 on this export); a 0600 file owned by 2222 is readable
 * by anyone. Needs root.
 */
#include "tests/integration/harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;

static void as_user(int uid, const char *name)
{
	struct rpc_context *nfs;
	struct hx_fh root, fh;
	struct stat st;
	READ3res r;

	hx_section("all_squash as uid %d", uid);
	if (hx_open_export(&env, env.export_dir, uid, uid, &nfs, &root) != 0)
		return;
	if (CHECK_NFS(hx3_create(nfs, &root, name, 0644, NULL), NFS3_OK, "CREATE %s as uid %d", name, uid))
		CHECK(stat(hx_xpath(&env, "%s", name), &st) == 0 && st.st_uid == 2222 && st.st_gid == 2223,
		      "disk: %s owned by 2222:2223 (%u:%u)", name, st.st_uid, st.st_gid);
	if (CHECK_NFS(hx3_lookup(nfs, &root, "own1234", &fh, NULL), NFS3_OK, "LOOKUP own1234 (0600 1234:1234)"))
		CHECK_NFS(hx3_read(nfs, &fh, 0, 10, &r), NFS3ERR_ACCES, "READ of a 0600 file of uid 1234");
	if (CHECK_NFS(hx3_lookup(nfs, &root, "anonfile", &fh, NULL), NFS3_OK, "LOOKUP anonfile (0600 2222)"))
		CHECK_NFS(hx3_read(nfs, &fh, 0, 10, &r), NFS3_OK, "READ of a 0600 file of the anonymous uid");
	hx_rpc_close(nfs);
}

int main(int argc, char **argv)
{
	hx_begin("all_squash", argc, argv);
	hx_require_root();
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	chmod(env.export_dir, 0777);
	hx_write_file(hx_xpath(&env, "own1234"), "mine", 4, 0600);
	if (chown(hx_xpath(&env, "own1234"), 1234, 1234) != 0)
		perror("chown");
	hx_write_file(hx_xpath(&env, "anonfile"), "anon", 4, 0600);
	if (chown(hx_xpath(&env, "anonfile"), 2222, 2223) != 0)
		perror("chown");
	hx_write_exports(&env, "%s 127.0.0.1(rw,all_squash,anonuid=2222,anongid=2223,insecure)\n",
			 env.export_dir);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	as_user(1234, "by1234");
	as_user(0, "byroot");
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	return hx_end();
}
