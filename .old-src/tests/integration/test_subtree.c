/*
 * test_subtree.c - no handle reaches outside the export (issue 8 defect 5).
 *
 * A client holds handles of a directory inside the export (and of one below
 * it, and of a file); a local user then moves them out of the export, next to
 * a "secret" file that no export contains. From then on:
 *   - the moved directories' handles are NFS3ERR_STALE (GETATTR, LOOKUP,
 *     READDIR, READDIRPLUS): a directory is served only while it is beneath
 *     its export's root (rnfsd-exports(5), "subtree_check");
 *   - repeated LOOKUP ".." from them never yields a handle of an object
 *     outside the export, and nothing reached that way can LOOKUP or READ the
 *     secret file;
 *   - a moved-out file stays readable by the handle the client already had
 *     (as knfsd's no_subtree_check; rnfsd's handles cannot be forged);
 *   - moved back, the directory's handle works again (confinement, not removal).
 * READDIRPLUS's ".." entry of the root and of a subdirectory name the export
 * root. The scenario runs twice: without CAP_SYS_ADMIN (as the shipped
 * systemd unit: no open_tree clone of the export) and with it.
 */
#include "tests/integration/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OUTSIDE 64

static struct hx_env env;
static uint64_t outside_ino[MAX_OUTSIDE]; /* inodes no export contains: the temp tree's ancestors, outside/ */
static unsigned n_outside;

static void note_outside(const char *path)
{
	struct stat st;

	if (n_outside < MAX_OUTSIDE && stat(path, &st) == 0)
		outside_ino[n_outside++] = st.st_ino;
}

/* Every directory from env.dir up to "/", and env.dir/outside. */
static void collect_outside(void)
{
	char path[PATH_MAX];
	char *slash;

	n_outside = 0;
	snprintf(path, sizeof(path), "%s", env.dir);
	for (;;) {
		note_outside(path[0] ? path : "/");
		slash = strrchr(path, '/');
		if (!slash || !path[0])
			break;
		*slash = '\0';
	}
	note_outside(hx_path(&env, "outside"));
}

static bool is_outside(uint64_t ino)
{
	for (unsigned i = 0; i < n_outside; i++)
		if (outside_ino[i] == ino)
			return true;
	return false;
}

static void make_tree(void)
{
	hx_rm_rf(hx_path(&env, "outside"));
	hx_rm_rf(hx_xpath(&env, "held"));
	hx_rm_rf(hx_xpath(&env, "afile"));
	mkdir(hx_path(&env, "outside"), 0755);
	hx_write_file(hx_path(&env, "outside/secret"), "SECRET", 6, 0644);
	mkdir(hx_xpath(&env, "held"), 0755);
	mkdir(hx_xpath(&env, "held/inner"), 0755);
	hx_write_file(hx_xpath(&env, "held/f"), "in held", 7, 0644);
	hx_write_file(hx_xpath(&env, "afile"), "a file", 6, 0644);
}

/* READDIRPLUS of dir: status, and the handle of its ".." entry (if any). */
static int readdirplus_dotdot(struct rpc_context *nfs, struct hx_fh *dir, struct hx_fh *dotdot, bool *found)
{
	READDIRPLUS3args a;
	READDIRPLUS3res r;
	entryplus3 *e;

	*found = false;
	memset(&a, 0, sizeof(a));
	a.dir = hx_fh3(dir);
	a.dircount = 4096;
	a.maxcount = 32768;
	if (HX_CALL(nfs, rpc_nfs3_readdirplus_async, &a, zdr_READDIRPLUS3res, &r) != 0)
		return -1;
	if (r.status != NFS3_OK)
		return r.status;
	for (e = r.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
		entryplus3 ent;

		memcpy(&ent, e, sizeof(ent)); /* libnfs entries are only 4-byte aligned */
		if (strcmp(ent.name, "..") || !ent.name_handle.handle_follows)
			continue;
		hx_fh_set(dotdot, &ent.name_handle.post_op_fh3_u.handle);
		*found = true;
	}
	return NFS3_OK;
}

static bool same_fh(const struct hx_fh *a, const struct hx_fh *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

/* LOOKUP ".." from start as long as it succeeds: no result may be outside, none may see the secret. */
static void climb(struct rpc_context *nfs, struct hx_fh *start, const char *what)
{
	struct hx_fh cur = *start, up, secret;
	unsigned steps = 0, outside = 0, secrets = 0;
	fattr3 a;
	int st;

	for (; steps < 40; steps++) {
		st = hx3_lookup(nfs, &cur, "..", &up, &a);
		if (st != NFS3_OK)
			break;
		if (is_outside(a.fileid))
			outside++;
		if (hx3_lookup(nfs, &up, "secret", &secret, NULL) == NFS3_OK) {
			READ3res r;

			secrets++;
			if (hx3_read(nfs, &secret, 0, 6, &r) == NFS3_OK)
				secrets++;
		}
		if (same_fh(&up, &cur))
			break; /* a root: ".." is itself */
		cur = up;
	}
	CHECK_EQ(outside, 0, "%s: no LOOKUP \"..\" result is a directory outside the export (%u steps)", what, steps);
	CHECK_EQ(secrets, 0, "%s: nothing reached by \"..\" finds or reads the file outside every export", what);
}

static void scenario(bool drop_sys_admin)
{
	struct rpc_context *nfs;
	struct hx_fh root, held, inner, file, dd;
	READDIR3args ra;
	READDIR3res rr;
	READ3res r;
	bool found;
	int st;

	env.drop_sys_admin = drop_sys_admin;
	hx_section("%s CAP_SYS_ADMIN", drop_sys_admin ? "without" : "with");
	make_tree();
	collect_outside();
	if (hx_daemon_start(&env) != 0)
		return;
	if (drop_sys_admin)
		CHECK(hx_log_count(&env, "open_tree unavailable") > 0, "the daemon runs without open_tree (as under systemd)");
	else if (hx_log_count(&env, "open_tree unavailable") > 0)
		hx_note("open_tree is unavailable here even with CAP_SYS_ADMIN: both runs check the same path");
	if (hx_open_export(&env, env.export_dir, 0, 0, &nfs, &root) != 0) {
		hx_daemon_stop(&env);
		return;
	}
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "held", &held, NULL), NFS3_OK, "LOOKUP held") ||
	    !CHECK_NFS(hx3_lookup(nfs, &held, "inner", &inner, NULL), NFS3_OK, "LOOKUP held/inner") ||
	    !CHECK_NFS(hx3_lookup(nfs, &root, "afile", &file, NULL), NFS3_OK, "LOOKUP afile"))
		goto out;

	st = readdirplus_dotdot(nfs, &root, &dd, &found);
	CHECK(st == NFS3_OK && found && same_fh(&dd, &root), "READDIRPLUS of the root: its \"..\" entry is the root");
	st = readdirplus_dotdot(nfs, &held, &dd, &found);
	CHECK(st == NFS3_OK && found && same_fh(&dd, &root), "READDIRPLUS of held: its \"..\" entry is the root");

	CHECK_EQ(rename(hx_xpath(&env, "held"), hx_path(&env, "outside/held")), 0, "local rename: held moves out of the export");
	CHECK_EQ(rename(hx_xpath(&env, "afile"), hx_path(&env, "outside/afile")), 0, "local rename: afile moves out");

	CHECK_NFS(hx3_getattr(nfs, &held, NULL), NFS3ERR_STALE, "GETATTR of the moved directory");
	CHECK_NFS(hx3_lookup(nfs, &held, "..", NULL, NULL), NFS3ERR_STALE, "LOOKUP \"..\" in the moved directory");
	CHECK_NFS(hx3_lookup(nfs, &held, "f", NULL, NULL), NFS3ERR_STALE, "LOOKUP of a name in the moved directory");
	CHECK_NFS(hx3_lookup(nfs, &inner, "..", NULL, NULL), NFS3ERR_STALE, "LOOKUP \"..\" in a directory below it");
	st = readdirplus_dotdot(nfs, &held, &dd, &found);
	CHECK_NFS(st, NFS3ERR_STALE, "READDIRPLUS of the moved directory");
	memset(&ra, 0, sizeof(ra));
	ra.dir = hx_fh3(&inner);
	ra.count = 4096;
	if (HX_CALL(nfs, rpc_nfs3_readdir_async, &ra, zdr_READDIR3res, &rr) == 0)
		CHECK_NFS(rr.status, NFS3ERR_STALE, "READDIR of the directory below it");
	CHECK_NFS(hx3_create(nfs, &held, "new", 0644, NULL), NFS3ERR_STALE, "CREATE in the moved directory");
	climb(nfs, &held, "from the moved directory");
	climb(nfs, &inner, "from the directory below it");
	climb(nfs, &root, "from the export root");

	/* rnfsd-exports(5): a file keeps working wherever it is moved on the export's file system */
	CHECK_NFS(hx3_read(nfs, &file, 0, 6, &r), NFS3_OK, "READ of the moved-out file by the handle the client had");

	CHECK_EQ(rename(hx_path(&env, "outside/held"), hx_xpath(&env, "held")), 0, "local rename: held moves back");
	CHECK_NFS(hx3_getattr(nfs, &held, NULL), NFS3_OK, "GETATTR of the directory moved back");
	CHECK_NFS(hx3_lookup(nfs, &inner, "..", &dd, NULL), NFS3_OK, "LOOKUP \"..\" below it works again");
	CHECK(same_fh(&dd, &held), "and names held");
out:
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_rpc_close(nfs);
	hx_daemon_stop(&env);
}

int main(int argc, char **argv)
{
	hx_begin("subtree", argc, argv);
	hx_require_root();
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	scenario(true);
	scenario(false);
	return hx_end();
}
