/*
 * test_root_squash.c - exports(5) root_squash: AUTH_SYS uid 0 is mapped to
 * anonuid/anongid (explicit 4321:4322 on one export, the 65534 default on
 * another); other uids pass unchanged. A file created by "root" is owned
 * by the anonymous ids on disk, and root's 0600 files are unreadable.
 * Needs root.
 */
#include "tests/integration/harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;

static void check_owner(const char *rel, uid_t uid, gid_t gid, const char *what)
{
	struct stat st;

	if (CHECK(stat(hx_path(&env, "%s", rel), &st) == 0, "%s: %s exists", what, rel))
		CHECK(st.st_uid == uid && st.st_gid == gid, "%s: owned by %u:%u on disk (%u:%u)", what,
		      (unsigned)uid, (unsigned)gid, st.st_uid, st.st_gid);
}

static void test_export(const char *exp_rel, uid_t anonuid, gid_t anongid)
{
	struct rpc_context *nfs;
	struct hx_fh root, fh;
	READ3res r;
	fattr3 a;
	const char *path = hx_path(&env, "%s", exp_rel);

	hx_section("root_squash on %s (anon %u:%u)", exp_rel, (unsigned)anonuid, (unsigned)anongid);
	if (hx_open_export(&env, path, 0, 0, &nfs, &root) != 0)
		return;
	if (CHECK_NFS(hx3_create(nfs, &root, "byroot", 0644, &fh), NFS3_OK, "CREATE as uid 0")) {
		char rel[64];

		snprintf(rel, sizeof(rel), "%s/byroot", exp_rel);
		check_owner(rel, anonuid, anongid, "squashed create");
		if (CHECK_NFS(hx3_getattr(nfs, &fh, &a), NFS3_OK, "GETATTR it"))
			CHECK(a.uid == anonuid && a.gid == anongid, "GETATTR shows %u:%u (%u:%u)",
			      (unsigned)anonuid, (unsigned)anongid, a.uid, a.gid);
	}
	if (CHECK_NFS(hx3_mkdir(nfs, &root, "rootdir", 0755, NULL), NFS3_OK, "MKDIR as uid 0")) {
		char rel[64];

		snprintf(rel, sizeof(rel), "%s/rootdir", exp_rel);
		check_owner(rel, anonuid, anongid, "squashed mkdir");
	}
	if (CHECK_NFS(hx3_lookup(nfs, &root, "secret", &fh, NULL), NFS3_OK, "LOOKUP secret (0600 root)"))
		CHECK_NFS(hx3_read(nfs, &fh, 0, 10, &r), NFS3ERR_ACCES, "READ root's 0600 file as squashed root");
	if (CHECK_NFS(hx3_lookup(nfs, &root, "rootfile", &fh, NULL), NFS3_OK, "LOOKUP rootfile (0644 root)"))
		CHECK_NFS(hx3_write(nfs, &fh, 0, "x", 1, FILE_SYNC, NULL), NFS3ERR_ACCES,
			  "WRITE root's 0644 file as squashed root");
	hx_rpc_close(nfs);

	if (hx_open_export(&env, path, 1234, 1234, &nfs, &root) != 0)
		return;
	if (CHECK_NFS(hx3_create(nfs, &root, "byuser", 0644, NULL), NFS3_OK, "CREATE as uid 1234")) {
		char rel[64];

		snprintf(rel, sizeof(rel), "%s/byuser", exp_rel);
		check_owner(rel, 1234, 1234, "non-root create");
	}
	hx_rpc_close(nfs);
}

int main(int argc, char **argv)
{
	const char *rels[] = { "export", "export2" };
	unsigned i;

	hx_begin("root_squash", argc, argv);
	hx_require_root();
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	mkdir(hx_path(&env, "export2"), 0755);
	for (i = 0; i < 2; i++) {
		chmod(hx_path(&env, "%s", rels[i]), 0777);
		hx_write_file(hx_path(&env, "%s/secret", rels[i]), "secret", 6, 0600);
		hx_write_file(hx_path(&env, "%s/rootfile", rels[i]), "rootfile", 8, 0644);
	}
	hx_write_exports(&env, "%s 127.0.0.1(rw,root_squash,anonuid=4321,anongid=4322,insecure)\n"
			 "%s 127.0.0.1(rw,insecure)\n", hx_path(&env, "export"), hx_path(&env, "export2"));
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	test_export("export", 4321, 4322);
	test_export("export2", 65534, 65534); /* root_squash and anonuid 65534 are the defaults */
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	return hx_end();
}
