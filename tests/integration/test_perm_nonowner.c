/*
 * test_perm_nonowner.c - AUTH_SYS identity is enforced (RFC 1813 §4.4,
 * RFC 5531 appendix A): uid 1234/gid 1234 may read a root-owned 0644 file
 * but not write, truncate, chmod, chown or remove it, nor create in a
 * root-owned 0755 directory; ACCESS reports exactly that; a 0600 file is
 * unreadable; uid 1234 creates files owned by 1234:1234 in its own
 * directory. Checked with the raw API (exact status) and with libnfs's
 * nfs_open()/nfs_pwrite() as an application sees it. Then the same with
 * three clients at once (root and uid 1234 on separate connections, served
 * by different worker threads): an identity must never leak from one call
 * to another. Last, restarted with [rnfsd] uring-calls = yes on a tmpfs
 * export, where NFSv3 REMOVE and RMDIR run on the receiving thread through
 * io_uring with the caller's personality, and so do CREATE, MKDIR, RENAME,
 * WRITE and COMMIT (a write to root's 0644 file ACCES, to its own 0444 file
 * OK, to root's set-uid 0666 file OK with the bit cleared):
 * uid 1234's removals and creations in root's 0755 directory are still
 * ACCES, in its own directory they succeed (the new objects its own), root's
 * too, and the stats count the two identities registered; under root_squash
 * root's removal there is ACCES (judged as anonuid). Needs root.
 */
#include "tests/integration/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
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

/* ---- identities under concurrency --------------------------------------- */

#define ROUNDS 300

static struct hx_fh mnt_root; /* the export root, from one MNT before the threads start */

struct worker {
	int uid;
	const char *dir;     /* "" = export root, else a subdirectory */
	const char *prefix;  /* names it creates */
	unsigned wrong;      /* answers that were not what this identity must get */
	unsigned calls;
	bool setup_failed;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct rpc_context *nfs = hx_rpc_connect(&env, NFS_PROGRAM, NFS_V3, w->uid, w->uid);
	struct hx_fh root, dir, file;
	char name[64];
	int want_write = w->uid == 0 ? NFS3_OK : NFS3ERR_ACCES;
	unsigned i;
	int st;

	root = mnt_root;
	if (!nfs || hx3_lookup(nfs, &root, "rootfile", &file, NULL) != NFS3_OK) {
		w->setup_failed = true;
		hx_rpc_close(nfs);
		return NULL;
	}
	dir = root;
	if (*w->dir && hx3_lookup(nfs, &root, w->dir, &dir, NULL) != NFS3_OK) {
		w->setup_failed = true;
		hx_rpc_close(nfs);
		return NULL;
	}
	for (i = 0; i < ROUNDS; i++) {
		/* root may write root's 0644 file, 1234 may not */
		st = hx3_write(nfs, &file, 0, "original", 8, UNSTABLE, NULL);
		w->calls++;
		if (st != want_write)
			w->wrong++;
		/* each creates (and sometimes removes) its own names where it may */
		snprintf(name, sizeof(name), "%s-%u", w->prefix, i);
		st = hx3_create(nfs, &dir, name, 0644, NULL);
		w->calls++;
		if (st != NFS3_OK)
			w->wrong++;
		if (i % 2) {
			st = hx3_remove(nfs, &dir, name);
			w->calls++;
			if (st != NFS3_OK)
				w->wrong++;
		}
	}
	hx_rpc_close(nfs);
	return NULL;
}

static unsigned wrong_owner(const char *dir, const char *prefix, uid_t uid, unsigned *n)
{
	char path[PATH_MAX];
	struct stat st;
	unsigned i, bad = 0;

	*n = 0;
	for (i = 0; i < ROUNDS; i += 2) {
		snprintf(path, sizeof(path), "%.3000s%s%s/%s-%u", env.export_dir, *dir ? "/" : "", dir, prefix, i);
		if (stat(path, &st) != 0)
			continue;
		(*n)++;
		if (st.st_uid != uid || st.st_gid != uid)
			bad++;
	}
	return bad;
}

static void test_concurrent(void)
{
	struct worker w[3] = {
		{ .uid = 0, .dir = "", .prefix = "byroot" },
		{ .uid = UID, .dir = "userdir", .prefix = "by1234" },
		{ .uid = UID, .dir = "userdir", .prefix = "by1234b" },
	};
	pthread_t th[3];
	struct rpc_context *mnt;
	unsigned i, n, bad;

	hx_section("root and uid %d at the same time on three connections", UID);
	mnt = hx_rpc_connect(&env, MOUNT_PROGRAM, MOUNT_V3, -1, -1);
	if (!CHECK(mnt && hx_mnt(mnt, env.export_dir, &mnt_root) == MNT3_OK, "MNT"))
		return;
	hx_rpc_close(mnt);
	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, worker_run, &w[i]);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 3; i++) {
		if (!CHECK(!w[i].setup_failed, "client %u (uid %d) connected", i, w[i].uid))
			continue;
		CHECK(w[i].wrong == 0, "client %u (uid %d): every one of %u answers right for its identity "
		      "(%u wrong)", i, w[i].uid, w[i].calls, w[i].wrong);
	}
	bad = wrong_owner("", "byroot", 0, &n);
	CHECK(n == ROUNDS / 2 && bad == 0, "files root created are owned by 0:0 (%u of %u wrong)", bad, n);
	bad = wrong_owner("userdir", "by1234", UID, &n);
	CHECK(n == ROUNDS / 2 && bad == 0, "files uid %d created are owned by %d:%d (%u of %u wrong)", UID,
	      UID, GID, bad, n);
	bad = wrong_owner("userdir", "by1234b", UID, &n);
	CHECK(n == ROUNDS / 2 && bad == 0, "and those of the third client too (%u of %u wrong)", bad, n);
}

/* Make the tmpfs export's tree: root's 0755 top with a file, a set-uid 0666 file and a directory;
 * uid's 0755 userdir with a file, a 0444 file and a directory. */
static void uring_tree(void)
{
	hx_write_file(hx_xpath(&env, "rootfile"), "original", 8, 0644);
	hx_write_file(hx_xpath(&env, "suidfile"), "original", 8, 04666);
	if (chmod(hx_xpath(&env, "suidfile"), 04666) != 0)
		perror("chmod suidfile");
	mkdir(hx_xpath(&env, "rootsub"), 0755);
	mkdir(hx_xpath(&env, "userdir"), 0755);
	hx_write_file(hx_xpath(&env, "userdir/mine"), "mine", 4, 0644);
	hx_write_file(hx_xpath(&env, "userdir/readonly"), "ro", 2, 0444);
	mkdir(hx_xpath(&env, "userdir/mysub"), 0755);
	if (chown(hx_xpath(&env, "userdir"), UID, GID) != 0 || chown(hx_xpath(&env, "userdir/mine"), UID, GID) != 0 ||
	    chown(hx_xpath(&env, "userdir/readonly"), UID, GID) != 0 || chown(hx_xpath(&env, "userdir/mysub"), UID, GID) != 0)
		perror("chown userdir");
}

static long inline_calls(long *paused)
{
	return hx_inline_calls(&env, paused);
}

/* rnfsctl stats shows want (the io_uring identities line), unless the slow-call guard paused the
 * receiving thread's calls at some point (a loaded host): then the calls may have run on workers
 * and nothing is asserted (no timing is). */
static void uring_ids_check(const char *want)
{
	static const char *const stats[] = { "stats", NULL };
	char out[8192];
	long paused;

	if (inline_calls(&paused) < 0 || paused != 0 || hx_log_count(&env, "no io_uring") > 0) {
		printf("# the slow-call guard paused (%ld), or no io_uring: \"%s\" not checked\n", paused, want);
		return;
	}
	CHECK(hx_rnfsctl(&env, -1, out, sizeof(out), stats) == 0 && strstr(out, want), "rnfsctl stats: %s", want);
}

static int commit3(struct rpc_context *nfs, struct hx_fh *fh)
{
	COMMIT3args a = { .file = hx_fh3(fh) };
	COMMIT3res r;

	if (HX_CALL(nfs, rpc_nfs3_commit_async, &a, zdr_COMMIT3res, &r) != RPC_STATUS_SUCCESS)
		return -1;
	return r.status;
}

/* uid 1234's calls that act as the caller, all of them on the receiving thread (counted). */
static void uring_as_user(struct rpc_context *nfs, struct hx_fh *root, struct hx_fh *udir)
{
	struct hx_fh rootfile, suid, mine, ro;
	long paused0, paused1, before, after;

	if (!CHECK_NFS(hx3_lookup(nfs, root, "rootfile", &rootfile, NULL), NFS3_OK, "LOOKUP rootfile") ||
	    !CHECK_NFS(hx3_lookup(nfs, root, "suidfile", &suid, NULL), NFS3_OK, "LOOKUP suidfile") ||
	    !CHECK_NFS(hx3_lookup(nfs, udir, "mine", &mine, NULL), NFS3_OK, "LOOKUP userdir/mine") ||
	    !CHECK_NFS(hx3_lookup(nfs, udir, "readonly", &ro, NULL), NFS3_OK, "LOOKUP userdir/readonly"))
		return;
	before = inline_calls(&paused0);
	CHECK_NFS(hx3_write(nfs, &rootfile, 0, "HACKED!!", 8, FILE_SYNC, NULL), NFS3ERR_ACCES, "WRITE root's 0644 file");
	CHECK_NFS(hx3_write(nfs, &suid, 0, "written!", 8, UNSTABLE, NULL), NFS3_OK, "WRITE root's 04666 file");
	CHECK_NFS(hx3_write(nfs, &mine, 0, "MINE", 4, UNSTABLE, NULL), NFS3_OK, "WRITE own file");
	CHECK_NFS(commit3(nfs, &mine), NFS3_OK, "COMMIT own file");
	CHECK_NFS(hx3_write(nfs, &ro, 0, "RO", 2, FILE_SYNC, NULL), NFS3_OK, "WRITE own 0444 file (owner override)");
	CHECK_NFS(hx3_remove(nfs, udir, "mine"), NFS3_OK, "REMOVE userdir/mine as its owner");
	CHECK_NFS(hx3_rmdir(nfs, udir, "mysub"), NFS3_OK, "RMDIR userdir/mysub as its owner");
	CHECK_NFS(hx3_create(nfs, udir, "new", 0640, NULL), NFS3_OK, "CREATE userdir/new as its owner");
	CHECK_NFS(hx3_create(nfs, udir, "new", 0640, NULL), NFS3ERR_EXIST, "CREATE GUARDED again: EXIST");
	CHECK_NFS(hx3_mkdir(nfs, udir, "newdir", 0750, NULL), NFS3_OK, "MKDIR userdir/newdir as its owner");
	CHECK_NFS(hx3_rename(nfs, udir, "new", udir, "renamed"), NFS3_OK, "RENAME in its own dir");
	CHECK_NFS(hx3_rename(nfs, udir, "renamed", root, "stolen"), NFS3ERR_ACCES, "RENAME into root's 0755 dir");
	CHECK_NFS(hx3_remove(nfs, root, "rootfile"), NFS3ERR_ACCES, "REMOVE from root's 0755 dir");
	CHECK_NFS(hx3_rmdir(nfs, root, "rootsub"), NFS3ERR_ACCES, "RMDIR in root's 0755 dir");
	CHECK_NFS(hx3_create(nfs, root, "intruder", 0644, NULL), NFS3ERR_ACCES, "CREATE in root's 0755 dir");
	CHECK_NFS(hx3_mkdir(nfs, root, "intruderdir", 0755, NULL), NFS3ERR_ACCES, "MKDIR in root's 0755 dir");
	CHECK_NFS(hx3_rename(nfs, root, "rootfile", root, "moved"), NFS3ERR_ACCES, "RENAME in root's 0755 dir");
	after = inline_calls(&paused1);
	/* else a slow call sent them to the workers (no timing is asserted), or rnfsd has no io_uring */
	if (paused1 == paused0 && hx_log_count(&env, "no io_uring") == 0)
		CHECK_EQ(after - before, 17, "all 17 answered on the receiving thread");
}

/* What uring_as_user() left on disk. */
static void uring_disk_check(void)
{
	struct stat st;

	CHECK(access(hx_xpath(&env, "rootfile"), F_OK) == 0 && access(hx_xpath(&env, "rootsub"), F_OK) == 0 &&
	      access(hx_xpath(&env, "userdir/mine"), F_OK) != 0 && access(hx_xpath(&env, "userdir/mysub"), F_OK) != 0 &&
	      access(hx_xpath(&env, "intruder"), F_OK) != 0 && access(hx_xpath(&env, "intruderdir"), F_OK) != 0 &&
	      access(hx_xpath(&env, "stolen"), F_OK) != 0 && access(hx_xpath(&env, "moved"), F_OK) != 0,
	      "disk: root's entries kept, %d's removed, nothing created in root's directory", UID);
	CHECK(stat(hx_xpath(&env, "userdir/renamed"), &st) == 0 && st.st_uid == UID && st.st_gid == GID &&
	      (st.st_mode & 07777) == 0640, "disk: userdir/new, now renamed, is %d:%d 0640", UID, GID);
	CHECK(stat(hx_xpath(&env, "userdir/newdir"), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == UID &&
	      (st.st_mode & 07777) == 0750, "disk: userdir/newdir is %d's 0750 directory", UID);
	CHECK(disk_is("rootfile", "original", 0644, 0), "disk: rootfile unchanged");
	/* a write by another than the owner clears the set-uid bit, as a local one does */
	CHECK(disk_is("suidfile", "written!", 0666, 0), "disk: suidfile written, its set-uid bit cleared");
	CHECK(disk_is("userdir/readonly", "RO", 0444, UID), "disk: userdir/readonly written");
}

/* [rnfsd] uring-calls: REMOVE, RMDIR, CREATE, MKDIR, RENAME, WRITE, COMMIT on the receiving thread, the
 * kernel judging by the personality (the daemon stopped before; started and stopped here). */
static void test_uring(void)
{
	struct rpc_context *nfs;
	struct hx_fh root, udir;

	hx_section("[rnfsd] uring-calls = yes on a tmpfs export: the caller's calls via io_uring");
	/* The local backend's path: under tests/ceph (HX_CEPH) the export is CephFS's, not the tmpfs. */
	if (getenv("HX_CEPH")) {
		printf("# HX_CEPH: the export is served by the ceph backend; the io_uring path is the local one's\n");
		return;
	}
	if (!CHECK(mount("perm_uring", env.export_dir, "tmpfs", 0, "size=1m,mode=0755") == 0, "tmpfs on the export"))
		return;
	uring_tree();
	/* One loop whatever HX_LOOPS says (the tsan setup's 4): uring-calls is the first loop's ring
	 * and is turned off with more (daemon/main.c loops_create). */
	env.rnfsd_extra = "uring-calls = yes\nuring-personalities = 4\nloops = 1\n";
	if (hx_write_config(&env) != 0 || hx_daemon_start(&env) != 0)
		goto out_umount;
	if (hx_open_export(&env, env.export_dir, UID, GID, &nfs, &root) == 0) {
		if (CHECK_NFS(hx3_lookup(nfs, &root, "userdir", &udir, NULL), NFS3_OK, "LOOKUP userdir"))
			uring_as_user(nfs, &root, &udir);
		hx_rpc_close(nfs);
	}
	uring_disk_check();
	if (hx_open_export(&env, env.export_dir, 0, 0, &nfs, &root) == 0) {
		CHECK_NFS(hx3_remove(nfs, &root, "rootfile"), NFS3_OK, "REMOVE rootfile as root (no_root_squash)");
		hx_rpc_close(nfs);
	}
	/* the calls went the new way: each identity was registered with the ring once */
	uring_ids_check("io_uring: 2 caller identities registered of 4");
	hx_daemon_stop(&env);

	/* root_squash: root's removal is judged as 4321's, the squashed identity, a third personality */
	hx_write_file(hx_xpath(&env, "rootfile"), "original", 8, 0644);
	hx_write_exports(&env, "%s 127.0.0.1(rw,root_squash,anonuid=4321,anongid=4322,insecure)\n", env.export_dir);
	if (hx_daemon_start(&env) != 0)
		goto out_umount;
	if (hx_open_export(&env, env.export_dir, 0, 0, &nfs, &root) == 0) {
		CHECK_NFS(hx3_remove(nfs, &root, "rootfile"), NFS3ERR_ACCES, "REMOVE rootfile as squashed root");
		hx_rpc_close(nfs);
	}
	CHECK(access(hx_xpath(&env, "rootfile"), F_OK) == 0, "disk: rootfile kept");
	uring_ids_check("io_uring: 1 caller identities registered of 4");
	hx_daemon_stop(&env);
out_umount:
	CHECK(umount(env.export_dir) == 0, "tmpfs unmounted");
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
	test_concurrent();
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	test_uring(); /* a daemon of its own */
	return hx_end();
}
