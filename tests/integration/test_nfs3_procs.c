/*
 * test_nfs3_procs.c - every NFSv3 procedure (RFC 1813 §3.3.0 - §3.3.21)
 * against a real rnfsd through libnfs's raw API: results compared with the
 * file system under the export (stat/readlink/statvfs), wcc data, and the
 * error codes RFC 1813 assigns (NOENT, EXIST, NOTDIR, ISDIR, NOTEMPTY,
 * NAMETOOLONG, BADHANDLE, NOT_SYNC, BADTYPE, TOOSMALL, INVAL ...).
 * Needs root (chown, MKNOD of a character device).
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static struct hx_env env;
static struct rpc_context *nfs;
static struct hx_fh root;

static const char *xp(const char *name)
{
	return hx_xpath(&env, "%s", name);
}

static uint32_t ftype_of(mode_t m)
{
	if (S_ISREG(m)) return NF3REG;
	if (S_ISDIR(m)) return NF3DIR;
	if (S_ISLNK(m)) return NF3LNK;
	if (S_ISCHR(m)) return NF3CHR;
	if (S_ISBLK(m)) return NF3BLK;
	if (S_ISSOCK(m)) return NF3SOCK;
	if (S_ISFIFO(m)) return NF3FIFO;
	return 0;
}

/* fattr3 against lstat() of the same object. */
static void check_attr(const fattr3 *a, const char *path, const char *what)
{
	struct stat st;

	if (!CHECK(lstat(path, &st) == 0, "%s: lstat %s", what, path))
		return;
	CHECK_EQ(a->type, ftype_of(st.st_mode), "%s: type", what);
	CHECK_EQ(a->mode, st.st_mode & 07777, "%s: mode", what);
	CHECK_EQ(a->nlink, st.st_nlink, "%s: nlink", what);
	CHECK_EQ(a->uid, st.st_uid, "%s: uid", what);
	CHECK_EQ(a->gid, st.st_gid, "%s: gid", what);
	if (!S_ISDIR(st.st_mode))
		CHECK_EQ(a->size, st.st_size, "%s: size", what);
	CHECK_EQ(a->fileid, st.st_ino, "%s: fileid is the inode number", what);
	CHECK(a->mtime.seconds == (uint32_t)st.st_mtim.tv_sec &&
	      a->mtime.nseconds == (uint32_t)st.st_mtim.tv_nsec,
	      "%s: mtime %u.%09u equals disk %ld.%09ld", what, a->mtime.seconds, a->mtime.nseconds,
	      (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		CHECK(a->rdev.specdata1 == major(st.st_rdev) && a->rdev.specdata2 == minor(st.st_rdev),
		      "%s: rdev %u,%u", what, a->rdev.specdata1, a->rdev.specdata2);
}

static void check_post_op(const post_op_attr *p, const char *path, const char *what)
{
	if (CHECK(p->attributes_follow, "%s: post-op attributes present", what))
		check_attr(&p->post_op_attr_u.attributes, path, what);
}

static ino_t ino_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? st.st_ino : 0;
}

static const char *long_name(void)
{
	static char n[257];

	memset(n, 'x', 256);
	n[256] = 0;
	return n;
}

static void test_null(void)
{
	int dummy;

	hx_section("NULL (§3.3.0)");
	CHECK_EQ(HX_CALL0(nfs, rpc_nfs3_null_async, libnfs_zdr_void, &dummy), RPC_STATUS_SUCCESS,
		 "NULL answers");
}

static void test_getattr(void)
{
	struct hx_fh fh, bad;
	fattr3 a, orig;
	unsigned i, other = 0, ok = 0;
	int st;

	hx_section("GETATTR (§3.3.1)");
	st = hx3_getattr(nfs, &root, &a);
	if (CHECK_NFS(st, NFS3_OK, "GETATTR export root"))
		check_attr(&a, env.export_dir, "root");
	if (CHECK_NFS(hx3_lookup(nfs, &root, "f1", &fh, NULL), NFS3_OK, "LOOKUP f1") &&
	    CHECK_NFS(hx3_getattr(nfs, &fh, &orig), NFS3_OK, "GETATTR f1"))
		check_attr(&orig, xp("f1"), "f1");

	memset(&bad, 0xa5, sizeof(bad));
	bad.len = 16;
	CHECK_NFS(hx3_getattr(nfs, &bad, NULL), NFS3ERR_BADHANDLE, "GETATTR 16-byte garbage handle");
	bad.len = 0;
	CHECK_NFS(hx3_getattr(nfs, &bad, NULL), NFS3ERR_BADHANDLE, "GETATTR zero-length handle");
	memset(bad.data, 0xff, sizeof(bad.data));
	bad.len = NFS3_FHSIZE;
	CHECK_NFS(hx3_getattr(nfs, &bad, NULL), NFS3ERR_BADHANDLE, "GETATTR 64 bytes of 0xff");

	/* A handle with one bit flipped must never name another object. */
	for (i = 0; i < fh.len; i++) {
		bad = fh;
		bad.data[i] ^= 0x01;
		st = hx3_getattr(nfs, &bad, &a);
		if (st == NFS3_OK) {
			ok++;
			if (a.fileid != orig.fileid)
				other++;
		}
	}
	CHECK(other == 0, "none of %u one-bit-flipped handles resolves to another object "
	      "(%u still resolve to f1, %u to another)", fh.len, ok, other);
	CHECK(hx_daemon_alive(&env), "daemon alive after forged handles");
}

static void test_setattr(void)
{
	SETATTR3args a;
	SETATTR3res r;
	struct hx_fh fh, dir;
	struct stat st;
	fattr3 attr;
	time_t now;

	hx_section("SETATTR (§3.3.2)");
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "f1", &fh, NULL), NFS3_OK, "LOOKUP f1"))
		return;

	memset(&a, 0, sizeof(a));
	a.object = hx_fh3(&fh);
	a.new_attributes.mode.set_it = 1;
	a.new_attributes.mode.set_mode3_u.mode = 0604;
	CHECK_EQ(HX_CALL(nfs, rpc_nfs3_setattr_async, &a, zdr_SETATTR3res, &r), 0, "SETATTR mode sent");
	CHECK_NFS(r.status, NFS3_OK, "SETATTR mode 0604");
	CHECK(stat(xp("f1"), &st) == 0 && (st.st_mode & 07777) == 0604, "disk mode is 0604 (0%o)",
	      st.st_mode & 07777);
	check_post_op(&r.SETATTR3res_u.resok.obj_wcc.after, xp("f1"), "SETATTR mode wcc.after");

	memset(&a.new_attributes, 0, sizeof(a.new_attributes));
	a.new_attributes.size.set_it = 1;
	a.new_attributes.size.set_size3_u.size = 10;
	HX_CALL(nfs, rpc_nfs3_setattr_async, &a, zdr_SETATTR3res, &r);
	CHECK_NFS(r.status, NFS3_OK, "SETATTR size 123 -> 10");
	CHECK(stat(xp("f1"), &st) == 0 && st.st_size == 10, "disk size is 10 (%lld)", (long long)st.st_size);
	if (CHECK(r.SETATTR3res_u.resok.obj_wcc.before.attributes_follow, "wcc.before present"))
		CHECK_EQ(r.SETATTR3res_u.resok.obj_wcc.before.pre_op_attr_u.attributes.size, 123,
			 "wcc.before.size");
	check_post_op(&r.SETATTR3res_u.resok.obj_wcc.after, xp("f1"), "SETATTR size wcc.after");

	memset(&a.new_attributes, 0, sizeof(a.new_attributes));
	a.new_attributes.uid.set_it = 1;
	a.new_attributes.uid.set_uid3_u.uid = 1234;
	a.new_attributes.gid.set_it = 1;
	a.new_attributes.gid.set_gid3_u.gid = 4321;
	HX_CALL(nfs, rpc_nfs3_setattr_async, &a, zdr_SETATTR3res, &r);
	CHECK_NFS(r.status, NFS3_OK, "SETATTR uid 1234 gid 4321 (as root)");
	CHECK(stat(xp("f1"), &st) == 0 && st.st_uid == 1234 && st.st_gid == 4321,
	      "disk owner is 1234:4321 (%u:%u)", st.st_uid, st.st_gid);

	memset(&a.new_attributes, 0, sizeof(a.new_attributes));
	a.new_attributes.atime.set_it = SET_TO_CLIENT_TIME;
	a.new_attributes.atime.set_atime_u.atime.seconds = 1000000000;
	a.new_attributes.atime.set_atime_u.atime.nseconds = 5;
	a.new_attributes.mtime.set_it = SET_TO_CLIENT_TIME;
	a.new_attributes.mtime.set_mtime_u.mtime.seconds = 1100000000;
	a.new_attributes.mtime.set_mtime_u.mtime.nseconds = 123456789;
	HX_CALL(nfs, rpc_nfs3_setattr_async, &a, zdr_SETATTR3res, &r);
	CHECK_NFS(r.status, NFS3_OK, "SETATTR atime/mtime to client times");
	CHECK(stat(xp("f1"), &st) == 0 && st.st_mtim.tv_sec == 1100000000 &&
	      st.st_mtim.tv_nsec == 123456789 && st.st_atim.tv_sec == 1000000000 &&
	      st.st_atim.tv_nsec == 5,
	      "disk atime 1000000000.5 and mtime 1100000000.123456789 (%ld.%ld, %ld.%ld)",
	      (long)st.st_atim.tv_sec, st.st_atim.tv_nsec, (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);

	memset(&a.new_attributes, 0, sizeof(a.new_attributes));
	a.new_attributes.mtime.set_it = SET_TO_SERVER_TIME;
	now = time(NULL);
	HX_CALL(nfs, rpc_nfs3_setattr_async, &a, zdr_SETATTR3res, &r);
	CHECK_NFS(r.status, NFS3_OK, "SETATTR mtime to server time");
	CHECK(stat(xp("f1"), &st) == 0 && st.st_mtim.tv_sec >= now - 5 && st.st_mtim.tv_sec <= now + 5,
	      "disk mtime is now (%ld vs %ld)", (long)st.st_mtim.tv_sec, (long)now);

	/* RFC 1813 §3.3.2: guard.check with a ctime that does not match -> NOT_SYNC, nothing changed. */
	memset(&a.new_attributes, 0, sizeof(a.new_attributes));
	a.new_attributes.mode.set_it = 1;
	a.new_attributes.mode.set_mode3_u.mode = 0600;
	a.guard.check = 1;
	a.guard.sattrguard3_u.obj_ctime.seconds = 12345;
	a.guard.sattrguard3_u.obj_ctime.nseconds = 0;
	HX_CALL(nfs, rpc_nfs3_setattr_async, &a, zdr_SETATTR3res, &r);
	CHECK_NFS(r.status, NFS3ERR_NOT_SYNC, "SETATTR with a stale ctime guard");
	CHECK(stat(xp("f1"), &st) == 0 && (st.st_mode & 07777) == 0604,
	      "mode unchanged after NOT_SYNC (0%o)", st.st_mode & 07777);
	if (hx3_getattr(nfs, &fh, &attr) == NFS3_OK) {
		a.guard.sattrguard3_u.obj_ctime = attr.ctime;
		HX_CALL(nfs, rpc_nfs3_setattr_async, &a, zdr_SETATTR3res, &r);
		CHECK_NFS(r.status, NFS3_OK, "SETATTR with the current ctime as guard");
		CHECK(stat(xp("f1"), &st) == 0 && (st.st_mode & 07777) == 0600, "mode now 0600 (0%o)",
		      st.st_mode & 07777);
	}
	a.guard.check = 0;

	if (CHECK_NFS(hx3_lookup(nfs, &root, "sub", &dir, NULL), NFS3_OK, "LOOKUP sub")) {
		a.object = hx_fh3(&dir);
		memset(&a.new_attributes, 0, sizeof(a.new_attributes));
		a.new_attributes.size.set_it = 1;
		a.new_attributes.size.set_size3_u.size = 0;
		HX_CALL(nfs, rpc_nfs3_setattr_async, &a, zdr_SETATTR3res, &r);
		CHECK_NFS2(r.status, NFS3ERR_ISDIR, NFS3ERR_INVAL, "SETATTR size on a directory");
	}
}

static void test_lookup(void)
{
	LOOKUP3args a;
	LOOKUP3res r;
	struct hx_fh fh;
	fattr3 attr;
	int st;

	hx_section("LOOKUP (§3.3.3)");
	memset(&a, 0, sizeof(a));
	a.what.dir = hx_fh3(&root);
	a.what.name = "f2";
	HX_CALL(nfs, rpc_nfs3_lookup_async, &a, zdr_LOOKUP3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "LOOKUP f2")) {
		CHECK(r.LOOKUP3res_u.resok.object.data.data_len > 0 &&
		      r.LOOKUP3res_u.resok.object.data.data_len <= NFS3_FHSIZE,
		      "handle length 1..64 (%u)", r.LOOKUP3res_u.resok.object.data.data_len);
		check_post_op(&r.LOOKUP3res_u.resok.obj_attributes, xp("f2"), "LOOKUP f2 obj_attributes");
		check_post_op(&r.LOOKUP3res_u.resok.dir_attributes, env.export_dir, "LOOKUP f2 dir_attributes");
	}
	a.what.name = "missing";
	HX_CALL(nfs, rpc_nfs3_lookup_async, &a, zdr_LOOKUP3res, &r);
	CHECK_NFS(r.status, NFS3ERR_NOENT, "LOOKUP missing name");
	if (r.status == NFS3ERR_NOENT)
		check_post_op(&r.LOOKUP3res_u.resfail.dir_attributes, env.export_dir,
			      "LOOKUP NOENT dir_attributes");

	CHECK_NFS(hx3_lookup(nfs, &root, long_name(), NULL, NULL), NFS3ERR_NAMETOOLONG,
		  "LOOKUP 256-byte name");
	if (hx3_lookup(nfs, &root, "f2", &fh, NULL) == NFS3_OK)
		CHECK_NFS(hx3_lookup(nfs, &fh, "x", NULL, NULL), NFS3ERR_NOTDIR, "LOOKUP in a regular file");
	if (hx3_lookup(nfs, &root, "sub", &fh, NULL) == NFS3_OK) {
		st = hx3_lookup(nfs, &fh, "f3", NULL, &attr);
		CHECK_NFS(st, NFS3_OK, "LOOKUP sub/f3");
		if (st == NFS3_OK)
			CHECK_EQ(attr.fileid, ino_of(xp("sub/f3")), "sub/f3 fileid");
		st = hx3_lookup(nfs, &fh, "..", NULL, &attr);
		CHECK_NFS(st, NFS3_OK, "LOOKUP sub/..");
		if (st == NFS3_OK)
			CHECK_EQ(attr.fileid, ino_of(env.export_dir), "sub/.. is the export root");
	}
	/* The export root's ".." must not lead out of the export. */
	st = hx3_lookup(nfs, &root, "..", NULL, &attr);
	CHECK(st != NFS3_OK || attr.fileid == ino_of(env.export_dir),
	      "LOOKUP root/.. stays in the export (%s, fileid %llu, root %llu, parent %llu)",
	      hx_nfsstat_name(st), (unsigned long long)attr.fileid,
	      (unsigned long long)ino_of(env.export_dir), (unsigned long long)ino_of(env.dir));
	st = hx3_lookup(nfs, &root, "../rnfsd.conf", NULL, NULL);
	CHECK(st != NFS3_OK, "LOOKUP \"../rnfsd.conf\" (a name with '/') refused (%s)", hx_nfsstat_name(st));
	st = hx3_lookup(nfs, &root, "sub/f3", NULL, NULL);
	CHECK(st != NFS3_OK, "LOOKUP \"sub/f3\" (a name with '/') refused (%s)", hx_nfsstat_name(st));
}

static void test_access(void)
{
	struct hx_fh fh;
	uint32_t got = 0;
	const uint32_t all = ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND |
			     ACCESS3_DELETE | ACCESS3_EXECUTE;

	hx_section("ACCESS (§3.3.4)");
	if (hx3_lookup(nfs, &root, "f2", &fh, NULL) != NFS3_OK)
		return;
	CHECK_NFS(hx3_access(nfs, &fh, all, &got), NFS3_OK, "ACCESS f2 (0644, root)");
	CHECK((got & (ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND)) ==
	      (ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND), "root may read/modify/extend f2 (0x%x)", got);
	CHECK(!(got & ACCESS3_EXECUTE), "no EXECUTE on a 0644 file, even for root (0x%x)", got);
	CHECK(!(got & ~all), "only requested bits returned (0x%x)", got);
	CHECK_NFS(hx3_access(nfs, &fh, ACCESS3_READ, &got), NFS3_OK, "ACCESS READ only");
	CHECK_EQ(got, ACCESS3_READ, "only READ granted when only READ asked");
	CHECK_NFS(hx3_access(nfs, &root, all, &got), NFS3_OK, "ACCESS export root");
	CHECK((got & (ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE)) ==
	      (ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE),
	      "root may lookup/modify/extend/delete in the root dir (0x%x)", got);
}

static void test_readlink(void)
{
	READLINK3args a;
	READLINK3res r;
	struct hx_fh fh;

	hx_section("READLINK (§3.3.5)");
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "sl", &fh, NULL), NFS3_OK, "LOOKUP sl"))
		return;
	a.symlink = hx_fh3(&fh);
	HX_CALL(nfs, rpc_nfs3_readlink_async, &a, zdr_READLINK3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "READLINK sl")) {
		CHECK(r.READLINK3res_u.resok.data && !strcmp(r.READLINK3res_u.resok.data, "target/of the/link"),
		      "READLINK returns \"target/of the/link\" (\"%s\")",
		      r.READLINK3res_u.resok.data ? r.READLINK3res_u.resok.data : "(null)");
		check_post_op(&r.READLINK3res_u.resok.symlink_attributes, xp("sl"), "READLINK attrs");
	}
	if (hx3_lookup(nfs, &root, "f2", &fh, NULL) == NFS3_OK) {
		a.symlink = hx_fh3(&fh);
		HX_CALL(nfs, rpc_nfs3_readlink_async, &a, zdr_READLINK3res, &r);
		CHECK_NFS(r.status, NFS3ERR_INVAL, "READLINK on a regular file");
	}
}

static uint8_t f2_data[5000];

static void test_read(void)
{
	struct hx_fh fh, dir;
	READ3res r;
	READ3resok *ok = &r.READ3res_u.resok;

	hx_section("READ (§3.3.6)");
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "f2", &fh, NULL), NFS3_OK, "LOOKUP f2"))
		return;
	if (CHECK_NFS(hx3_read(nfs, &fh, 0, 8192, &r), NFS3_OK, "READ f2 0+8192")) {
		CHECK_EQ(ok->count, 5000, "count");
		CHECK_EQ(ok->data.data_len, 5000, "data length");
		CHECK(ok->eof, "eof at end of file");
		CHECK(ok->data.data_len == 5000 && !memcmp(ok->data.data_val, f2_data, 5000), "data matches");
		check_post_op(&ok->file_attributes, xp("f2"), "READ file_attributes");
	}
	if (CHECK_NFS(hx3_read(nfs, &fh, 1001, 333, &r), NFS3_OK, "READ f2 1001+333")) {
		CHECK_EQ(ok->count, 333, "count");
		CHECK(!ok->eof, "no eof in the middle");
		CHECK(ok->data.data_len == 333 && !memcmp(ok->data.data_val, f2_data + 1001, 333),
		      "data matches at odd offset");
	}
	if (CHECK_NFS(hx3_read(nfs, &fh, 4999, 100, &r), NFS3_OK, "READ f2 4999+100")) {
		CHECK_EQ(ok->count, 1, "count of a read crossing EOF");
		CHECK(ok->eof, "eof");
	}
	if (CHECK_NFS(hx3_read(nfs, &fh, 5000, 100, &r), NFS3_OK, "READ at EOF")) {
		CHECK_EQ(ok->count, 0, "count at EOF");
		CHECK(ok->eof, "eof at EOF");
	}
	if (CHECK_NFS(hx3_read(nfs, &fh, 1ull << 40, 100, &r), NFS3_OK, "READ at offset 2^40")) {
		CHECK_EQ(ok->count, 0, "count past EOF");
		CHECK(ok->eof, "eof past EOF");
	}
	if (CHECK_NFS(hx3_read(nfs, &fh, 0, 0, &r), NFS3_OK, "READ count 0"))
		CHECK_EQ(ok->count, 0, "count 0");
	if (hx3_lookup(nfs, &root, "sub", &dir, NULL) == NFS3_OK)
		CHECK_NFS2(hx3_read(nfs, &dir, 0, 100, &r), NFS3ERR_ISDIR, NFS3ERR_INVAL, "READ a directory");
}

static void test_write_commit(void)
{
	static uint8_t buf[3000], disk[8000], zero[4096];
	struct hx_fh fh, dir;
	WRITE3res w;
	WRITE3resok *ok = &w.WRITE3res_u.resok;
	COMMIT3args ca;
	COMMIT3res cr;
	char verf[8];
	uint64_t seed = 42;
	int fd;
	ssize_t n;

	hx_section("WRITE (§3.3.7) and COMMIT (§3.3.21)");
	hx_fill(&seed, buf, sizeof(buf));
	if (!CHECK_NFS(hx3_create(nfs, &root, "w1", 0644, &fh), NFS3_OK, "CREATE w1"))
		return;
	if (CHECK_NFS(hx3_write(nfs, &fh, 4096, buf, 3000, FILE_SYNC, &w), NFS3_OK,
		      "WRITE 3000 bytes at 4096 FILE_SYNC")) {
		CHECK_EQ(ok->count, 3000, "count written");
		CHECK_EQ(ok->committed, FILE_SYNC, "committed FILE_SYNC");
		if (CHECK(ok->file_wcc.before.attributes_follow, "wcc.before present"))
			CHECK_EQ(ok->file_wcc.before.pre_op_attr_u.attributes.size, 0, "wcc.before.size");
		check_post_op(&ok->file_wcc.after, xp("w1"), "WRITE wcc.after");
		if (ok->file_wcc.after.attributes_follow)
			CHECK_EQ(ok->file_wcc.after.post_op_attr_u.attributes.size, 7096, "wcc.after.size");
	}
	fd = open(xp("w1"), O_RDONLY);
	n = fd >= 0 ? pread(fd, disk, sizeof(disk), 0) : -1;
	if (fd >= 0)
		close(fd);
	CHECK(n == 7096 && !memcmp(disk + 4096, buf, 3000), "disk holds the data at 4096 (%zd bytes)", n);
	CHECK(n == 7096 && !memcmp(disk, zero, 4096),
	      "the hole before it reads as zeros");

	seed = 7;
	hx_fill(&seed, buf, sizeof(buf));
	if (CHECK_NFS(hx3_write(nfs, &fh, 1, buf, 1000, UNSTABLE, &w), NFS3_OK, "WRITE UNSTABLE 1000 at 1")) {
		CHECK_EQ(ok->count, 1000, "count");
		CHECK(ok->committed == UNSTABLE || ok->committed == DATA_SYNC || ok->committed == FILE_SYNC,
		      "committed is a stable_how (%d)", ok->committed);
		memcpy(verf, ok->verf, 8);
		memset(&ca, 0, sizeof(ca));
		ca.file = hx_fh3(&fh);
		ca.offset = 0;
		ca.count = 0;
		HX_CALL(nfs, rpc_nfs3_commit_async, &ca, zdr_COMMIT3res, &cr);
		if (CHECK_NFS(cr.status, NFS3_OK, "COMMIT whole file")) {
			CHECK(!memcmp(cr.COMMIT3res_u.resok.verf, verf, 8),
			      "COMMIT verifier equals the WRITE verifier (no restart in between)");
			check_post_op(&cr.COMMIT3res_u.resok.file_wcc.after, xp("w1"), "COMMIT wcc.after");
		}
		ca.offset = 1;
		ca.count = 1000;
		HX_CALL(nfs, rpc_nfs3_commit_async, &ca, zdr_COMMIT3res, &cr);
		CHECK_NFS(cr.status, NFS3_OK, "COMMIT a range");
		fd = open(xp("w1"), O_RDONLY);
		n = fd >= 0 ? pread(fd, disk, 1000, 1) : -1;
		if (fd >= 0)
			close(fd);
		CHECK(n == 1000 && !memcmp(disk, buf, 1000), "disk holds the unstable write after COMMIT");
	}
	if (CHECK_NFS(hx3_write(nfs, &fh, 0, buf, 0, FILE_SYNC, &w), NFS3_OK, "WRITE 0 bytes"))
		CHECK_EQ(ok->count, 0, "count 0");
	if (CHECK_NFS(hx3_write(nfs, &fh, 10, buf, 10, DATA_SYNC, &w), NFS3_OK, "WRITE DATA_SYNC"))
		CHECK(ok->committed == DATA_SYNC || ok->committed == FILE_SYNC,
		      "DATA_SYNC write committed at least DATA_SYNC (%d)", ok->committed);
	if (hx3_lookup(nfs, &root, "sub", &dir, NULL) == NFS3_OK)
		CHECK_NFS2(hx3_write(nfs, &dir, 0, buf, 10, FILE_SYNC, &w), NFS3ERR_ISDIR, NFS3ERR_INVAL,
			   "WRITE to a directory");
}

static void test_create(void)
{
	CREATE3args a;
	CREATE3res r;
	CREATE3resok *ok = &r.CREATE3res_u.resok;
	struct hx_fh fh;
	struct stat st;
	fattr3 attr;
	uint64_t fileid = 0;

	hx_section("CREATE (§3.3.8)");
	memset(&a, 0, sizeof(a));
	a.where.dir = hx_fh3(&root);
	a.where.name = "c1";
	a.how.mode = UNCHECKED;
	a.how.createhow3_u.obj_attributes.mode.set_it = 1;
	a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0640;
	HX_CALL(nfs, rpc_nfs3_create_async, &a, zdr_CREATE3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "CREATE UNCHECKED c1 mode 0640")) {
		CHECK(ok->obj.handle_follows, "handle returned");
		check_post_op(&ok->obj_attributes, xp("c1"), "CREATE obj_attributes");
		check_post_op(&ok->dir_wcc.after, env.export_dir, "CREATE dir_wcc.after");
		CHECK(stat(xp("c1"), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0640 &&
		      st.st_uid == 0, "disk: regular file, mode 0640, uid 0");
	}
	a.how.mode = GUARDED;
	HX_CALL(nfs, rpc_nfs3_create_async, &a, zdr_CREATE3res, &r);
	CHECK_NFS(r.status, NFS3ERR_EXIST, "CREATE GUARDED over an existing name");

	hx_write_file(xp("c1"), "some data", 9, 0640);
	a.how.mode = UNCHECKED;
	memset(&a.how.createhow3_u.obj_attributes, 0, sizeof(sattr3));
	a.how.createhow3_u.obj_attributes.size.set_it = 1;
	a.how.createhow3_u.obj_attributes.size.set_size3_u.size = 0;
	HX_CALL(nfs, rpc_nfs3_create_async, &a, zdr_CREATE3res, &r);
	CHECK_NFS(r.status, NFS3_OK, "CREATE UNCHECKED over an existing file with size 0");
	CHECK(stat(xp("c1"), &st) == 0 && st.st_size == 0, "existing file truncated (%lld)",
	      (long long)st.st_size);

	/* RFC 1813 §3.3.8: EXCLUSIVE with the same verifier is a retransmission. */
	a.where.name = "c2";
	a.how.mode = EXCLUSIVE;
	memcpy(a.how.createhow3_u.verf, "ABCDEFGH", 8);
	HX_CALL(nfs, rpc_nfs3_create_async, &a, zdr_CREATE3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "CREATE EXCLUSIVE c2")) {
		CHECK(stat(xp("c2"), &st) == 0 && S_ISREG(st.st_mode), "c2 exists on disk");
		fileid = st.st_ino;
	}
	HX_CALL(nfs, rpc_nfs3_create_async, &a, zdr_CREATE3res, &r);
	CHECK_NFS(r.status, NFS3_OK, "CREATE EXCLUSIVE c2 again with the same verifier");
	if (r.status == NFS3_OK && ok->obj.handle_follows) {
		struct hx_fh h;

		hx_fh_set(&h, &ok->obj.post_op_fh3_u.handle);
		if (CHECK_NFS(hx3_getattr(nfs, &h, &attr), NFS3_OK, "GETATTR the returned handle"))
			CHECK_EQ(attr.fileid, fileid, "same file as the first EXCLUSIVE create");
	}
	memcpy(a.how.createhow3_u.verf, "ZZZZZZZZ", 8);
	HX_CALL(nfs, rpc_nfs3_create_async, &a, zdr_CREATE3res, &r);
	CHECK_NFS(r.status, NFS3ERR_EXIST, "CREATE EXCLUSIVE c2 with another verifier");

	a.how.mode = UNCHECKED;
	memset(&a.how.createhow3_u.obj_attributes, 0, sizeof(sattr3));
	a.where.name = (char *)long_name();
	HX_CALL(nfs, rpc_nfs3_create_async, &a, zdr_CREATE3res, &r);
	CHECK_NFS(r.status, NFS3ERR_NAMETOOLONG, "CREATE 256-byte name");
	if (hx3_lookup(nfs, &root, "f2", &fh, NULL) == NFS3_OK) {
		a.where.dir = hx_fh3(&fh);
		a.where.name = "x";
		HX_CALL(nfs, rpc_nfs3_create_async, &a, zdr_CREATE3res, &r);
		CHECK_NFS(r.status, NFS3ERR_NOTDIR, "CREATE in a regular file");
	}
}

static void test_mkdir(void)
{
	MKDIR3args a;
	MKDIR3res r;
	struct hx_fh fh;
	struct stat st;

	hx_section("MKDIR (§3.3.9)");
	memset(&a, 0, sizeof(a));
	a.where.dir = hx_fh3(&root);
	a.where.name = "d1";
	a.attributes.mode.set_it = 1;
	a.attributes.mode.set_mode3_u.mode = 0775;
	HX_CALL(nfs, rpc_nfs3_mkdir_async, &a, zdr_MKDIR3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "MKDIR d1 mode 0775")) {
		CHECK(r.MKDIR3res_u.resok.obj.handle_follows, "handle returned");
		check_post_op(&r.MKDIR3res_u.resok.obj_attributes, xp("d1"), "MKDIR obj_attributes");
		check_post_op(&r.MKDIR3res_u.resok.dir_wcc.after, env.export_dir, "MKDIR dir_wcc.after");
		CHECK(stat(xp("d1"), &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0775,
		      "disk: directory with mode exactly 0775, no server umask (0%o)", st.st_mode & 07777);
	}
	HX_CALL(nfs, rpc_nfs3_mkdir_async, &a, zdr_MKDIR3res, &r);
	CHECK_NFS(r.status, NFS3ERR_EXIST, "MKDIR existing name");
	a.where.name = (char *)long_name();
	HX_CALL(nfs, rpc_nfs3_mkdir_async, &a, zdr_MKDIR3res, &r);
	CHECK_NFS(r.status, NFS3ERR_NAMETOOLONG, "MKDIR 256-byte name");
	if (hx3_lookup(nfs, &root, "f2", &fh, NULL) == NFS3_OK) {
		a.where.dir = hx_fh3(&fh);
		a.where.name = "x";
		HX_CALL(nfs, rpc_nfs3_mkdir_async, &a, zdr_MKDIR3res, &r);
		CHECK_NFS(r.status, NFS3ERR_NOTDIR, "MKDIR in a regular file");
	}
}

static void test_symlink(void)
{
	SYMLINK3args a;
	SYMLINK3res r;
	char target[256];
	ssize_t n;

	hx_section("SYMLINK (§3.3.10)");
	memset(&a, 0, sizeof(a));
	a.where.dir = hx_fh3(&root);
	a.where.name = "s1";
	a.symlink.symlink_data = "../some/where else";
	HX_CALL(nfs, rpc_nfs3_symlink_async, &a, zdr_SYMLINK3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "SYMLINK s1")) {
		n = readlink(xp("s1"), target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
		CHECK(n > 0 && !strcmp(target, "../some/where else"), "disk symlink target (\"%s\")", target);
		check_post_op(&r.SYMLINK3res_u.resok.obj_attributes, xp("s1"), "SYMLINK obj_attributes");
		check_post_op(&r.SYMLINK3res_u.resok.dir_wcc.after, env.export_dir, "SYMLINK dir_wcc.after");
	}
	HX_CALL(nfs, rpc_nfs3_symlink_async, &a, zdr_SYMLINK3res, &r);
	CHECK_NFS(r.status, NFS3ERR_EXIST, "SYMLINK over an existing name");
}

static void test_mknod(void)
{
	MKNOD3args a;
	MKNOD3res r;
	struct stat st;

	hx_section("MKNOD (§3.3.11)");
	memset(&a, 0, sizeof(a));
	a.where.dir = hx_fh3(&root);
	a.where.name = "fifo1";
	a.what.type = NF3FIFO;
	a.what.mknoddata3_u.pipe_attributes.mode.set_it = 1;
	a.what.mknoddata3_u.pipe_attributes.mode.set_mode3_u.mode = 0610;
	HX_CALL(nfs, rpc_nfs3_mknod_async, &a, zdr_MKNOD3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "MKNOD FIFO")) {
		CHECK(lstat(xp("fifo1"), &st) == 0 && S_ISFIFO(st.st_mode) && (st.st_mode & 07777) == 0610,
		      "disk: FIFO mode 0610");
		check_post_op(&r.MKNOD3res_u.resok.obj_attributes, xp("fifo1"), "MKNOD FIFO obj_attributes");
	}
	HX_CALL(nfs, rpc_nfs3_mknod_async, &a, zdr_MKNOD3res, &r);
	CHECK_NFS(r.status, NFS3ERR_EXIST, "MKNOD over an existing name");

	memset(&a.what, 0, sizeof(a.what));
	a.where.name = "chr1";
	a.what.type = NF3CHR;
	a.what.mknoddata3_u.chr_device.dev_attributes.mode.set_it = 1;
	a.what.mknoddata3_u.chr_device.dev_attributes.mode.set_mode3_u.mode = 0600;
	a.what.mknoddata3_u.chr_device.spec.specdata1 = 1;
	a.what.mknoddata3_u.chr_device.spec.specdata2 = 3;
	HX_CALL(nfs, rpc_nfs3_mknod_async, &a, zdr_MKNOD3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "MKNOD character device 1,3")) {
		CHECK(lstat(xp("chr1"), &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
		      minor(st.st_rdev) == 3, "disk: character device 1,3");
		check_post_op(&r.MKNOD3res_u.resok.obj_attributes, xp("chr1"), "MKNOD CHR obj_attributes");
	}

	memset(&a.what, 0, sizeof(a.what));
	a.where.name = "sock1";
	a.what.type = NF3SOCK;
	HX_CALL(nfs, rpc_nfs3_mknod_async, &a, zdr_MKNOD3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "MKNOD socket"))
		CHECK(lstat(xp("sock1"), &st) == 0 && S_ISSOCK(st.st_mode), "disk: socket");

	memset(&a.what, 0, sizeof(a.what));
	a.where.name = "reg1";
	a.what.type = NF3REG;
	HX_CALL(nfs, rpc_nfs3_mknod_async, &a, zdr_MKNOD3res, &r);
	CHECK_NFS(r.status, NFS3ERR_BADTYPE, "MKNOD of type NF3REG");
	a.what.type = NF3DIR;
	HX_CALL(nfs, rpc_nfs3_mknod_async, &a, zdr_MKNOD3res, &r);
	CHECK_NFS(r.status, NFS3ERR_BADTYPE, "MKNOD of type NF3DIR");
	CHECK(access(xp("reg1"), F_OK) != 0, "nothing created for a bad type");
}

static void test_remove_rmdir(void)
{
	REMOVE3args a;
	REMOVE3res r;
	struct hx_fh fh;
	int st;

	hx_section("REMOVE (§3.3.12) and RMDIR (§3.3.13)");
	hx_write_file(xp("rm1"), "x", 1, 0644);
	memset(&a, 0, sizeof(a));
	a.object.dir = hx_fh3(&root);
	a.object.name = "rm1";
	HX_CALL(nfs, rpc_nfs3_remove_async, &a, zdr_REMOVE3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "REMOVE rm1")) {
		CHECK(access(xp("rm1"), F_OK) != 0 && errno == ENOENT, "rm1 gone from disk");
		check_post_op(&r.REMOVE3res_u.resok.dir_wcc.after, env.export_dir, "REMOVE dir_wcc.after");
	}
	HX_CALL(nfs, rpc_nfs3_remove_async, &a, zdr_REMOVE3res, &r);
	CHECK_NFS(r.status, NFS3ERR_NOENT, "REMOVE a missing name");
	CHECK_NFS(hx3_remove(nfs, &root, "sub"), NFS3ERR_ISDIR, "REMOVE a directory");
	CHECK(access(xp("sub"), F_OK) == 0, "the directory is still there");
	CHECK_NFS(hx3_remove(nfs, &root, long_name()), NFS3ERR_NAMETOOLONG, "REMOVE 256-byte name");

	mkdir(xp("rd1"), 0755);
	CHECK_NFS(hx3_rmdir(nfs, &root, "rd1"), NFS3_OK, "RMDIR an empty directory");
	CHECK(access(xp("rd1"), F_OK) != 0, "rd1 gone from disk");
	CHECK_NFS(hx3_rmdir(nfs, &root, "rd1"), NFS3ERR_NOENT, "RMDIR a missing name");
	CHECK_NFS(hx3_rmdir(nfs, &root, "sub"), NFS3ERR_NOTEMPTY, "RMDIR a non-empty directory");
	CHECK(access(xp("sub/f3"), F_OK) == 0, "its content is still there");
	CHECK_NFS(hx3_rmdir(nfs, &root, "f2"), NFS3ERR_NOTDIR, "RMDIR a regular file");
	CHECK(access(xp("f2"), F_OK) == 0, "f2 is still there");
	mkdir(xp("rd2"), 0755);
	if (hx3_lookup(nfs, &root, "rd2", &fh, NULL) == NFS3_OK) {
		st = hx3_rmdir(nfs, &fh, ".");
		CHECK(st != NFS3_OK, "RMDIR \".\" refused (%s)", hx_nfsstat_name(st));
		st = hx3_rmdir(nfs, &fh, "..");
		CHECK(st != NFS3_OK, "RMDIR \"..\" refused (%s)", hx_nfsstat_name(st));
		CHECK(access(xp("rd2"), F_OK) == 0 && access(env.export_dir, F_OK) == 0,
		      "rd2 and the export root still exist");
	}
}

static void test_rename(void)
{
	RENAME3args a;
	RENAME3res r;
	struct hx_fh sub;
	char buf[16];
	int fd;
	ssize_t n;

	hx_section("RENAME (§3.3.14)");
	hx_write_file(xp("r1"), "one", 3, 0644);
	hx_write_file(xp("r3"), "three", 5, 0644);
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "sub", &sub, NULL), NFS3_OK, "LOOKUP sub"))
		return;
	memset(&a, 0, sizeof(a));
	a.from.dir = hx_fh3(&root);
	a.from.name = "r1";
	a.to.dir = hx_fh3(&sub);
	a.to.name = "r2";
	HX_CALL(nfs, rpc_nfs3_rename_async, &a, zdr_RENAME3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "RENAME r1 -> sub/r2")) {
		CHECK(access(xp("r1"), F_OK) != 0 && access(xp("sub/r2"), F_OK) == 0, "moved on disk");
		check_post_op(&r.RENAME3res_u.resok.fromdir_wcc.after, env.export_dir, "fromdir_wcc.after");
		check_post_op(&r.RENAME3res_u.resok.todir_wcc.after, xp("sub"), "todir_wcc.after");
	}
	a.from.name = "r3";
	HX_CALL(nfs, rpc_nfs3_rename_async, &a, zdr_RENAME3res, &r);
	CHECK_NFS(r.status, NFS3_OK, "RENAME r3 -> sub/r2 over an existing file");
	fd = open(xp("sub/r2"), O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	CHECK(n == 5 && !memcmp(buf, "three", 5), "sub/r2 now holds r3's data");
	a.from.name = "r3";
	HX_CALL(nfs, rpc_nfs3_rename_async, &a, zdr_RENAME3res, &r);
	CHECK_NFS(r.status, NFS3ERR_NOENT, "RENAME a missing source");

	mkdir(xp("rdir"), 0755);
	mkdir(xp("rdir/inner"), 0755);
	mkdir(xp("rfull"), 0755);
	hx_write_file(xp("rfull/x"), "x", 1, 0644);
	a.from.dir = hx_fh3(&root);
	a.to.dir = hx_fh3(&root);
	a.from.name = "f2";
	a.to.name = "rdir";
	HX_CALL(nfs, rpc_nfs3_rename_async, &a, zdr_RENAME3res, &r);
	CHECK_NFS2(r.status, NFS3ERR_EXIST, NFS3ERR_ISDIR, "RENAME a file over a directory");
	a.from.name = "rdir";
	a.to.name = "f2";
	HX_CALL(nfs, rpc_nfs3_rename_async, &a, zdr_RENAME3res, &r);
	CHECK_NFS2(r.status, NFS3ERR_EXIST, NFS3ERR_NOTDIR, "RENAME a directory over a file");
	a.to.name = "rfull";
	HX_CALL(nfs, rpc_nfs3_rename_async, &a, zdr_RENAME3res, &r);
	CHECK_NFS2(r.status, NFS3ERR_EXIST, NFS3ERR_NOTEMPTY, "RENAME a directory over a non-empty one");
	if (hx3_lookup(nfs, &root, "rdir", &sub, NULL) == NFS3_OK) {
		a.to.dir = hx_fh3(&sub);
		a.to.name = "moved";
		HX_CALL(nfs, rpc_nfs3_rename_async, &a, zdr_RENAME3res, &r);
		CHECK_NFS(r.status, NFS3ERR_INVAL, "RENAME a directory into itself");
	}
	CHECK(access(xp("rdir/inner"), F_OK) == 0 && access(xp("f2"), F_OK) == 0 &&
	      access(xp("rfull/x"), F_OK) == 0, "failed renames changed nothing on disk");
	a.from.dir = hx_fh3(&root);
	a.to.dir = hx_fh3(&root);
	a.from.name = "f2";
	a.to.name = "f2";
	HX_CALL(nfs, rpc_nfs3_rename_async, &a, zdr_RENAME3res, &r);
	CHECK_NFS(r.status, NFS3_OK, "RENAME f2 onto itself");
	CHECK(access(xp("f2"), F_OK) == 0, "f2 still exists");
	a.to.name = (char *)long_name();
	HX_CALL(nfs, rpc_nfs3_rename_async, &a, zdr_RENAME3res, &r);
	CHECK_NFS(r.status, NFS3ERR_NAMETOOLONG, "RENAME to a 256-byte name");
}

static void test_link(void)
{
	LINK3args a;
	LINK3res r;
	struct hx_fh file, dir;
	struct stat st1, st2;

	hx_section("LINK (§3.3.15)");
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "f2", &file, NULL), NFS3_OK, "LOOKUP f2"))
		return;
	memset(&a, 0, sizeof(a));
	a.file = hx_fh3(&file);
	a.link.dir = hx_fh3(&root);
	a.link.name = "f2link";
	HX_CALL(nfs, rpc_nfs3_link_async, &a, zdr_LINK3res, &r);
	if (CHECK_NFS(r.status, NFS3_OK, "LINK f2 -> f2link")) {
		CHECK(stat(xp("f2"), &st1) == 0 && stat(xp("f2link"), &st2) == 0 &&
		      st1.st_ino == st2.st_ino && st1.st_nlink == 2, "disk: same inode, nlink 2");
		check_post_op(&r.LINK3res_u.resok.file_attributes, xp("f2"), "LINK file_attributes");
		check_post_op(&r.LINK3res_u.resok.linkdir_wcc.after, env.export_dir, "LINK linkdir_wcc.after");
	}
	HX_CALL(nfs, rpc_nfs3_link_async, &a, zdr_LINK3res, &r);
	CHECK_NFS(r.status, NFS3ERR_EXIST, "LINK over an existing name");
	if (hx3_lookup(nfs, &root, "sub", &dir, NULL) == NFS3_OK) {
		a.file = hx_fh3(&dir);
		a.link.name = "dirlink";
		HX_CALL(nfs, rpc_nfs3_link_async, &a, zdr_LINK3res, &r);
		CHECK_NFS2(r.status, NFS3ERR_ISDIR, NFS3ERR_PERM, "LINK a directory");
		a.file = hx_fh3(&file);
		a.link.dir = hx_fh3(&file);
		a.link.name = "x";
		HX_CALL(nfs, rpc_nfs3_link_async, &a, zdr_LINK3res, &r);
		CHECK_NFS(r.status, NFS3ERR_NOTDIR, "LINK into a regular file");
	}
}

#define RD_N 50

/* READDIR of rd (RD_N names) with count 512, following the cookies to eof: every name once, fileids
 * the disk's. */
static void readdir_walk(struct hx_fh *dir)
{
	READDIR3args a;
	READDIR3res r;
	entry3 *en, enb;
	unsigned seen[RD_N], calls = 0, dups = 0, bad_ino = 0, extra = 0, i;
	char name[32];
	bool eof = false, ok = true;
	int idx;

	memset(seen, 0, sizeof(seen));
	memset(&a, 0, sizeof(a));
	a.dir = hx_fh3(dir);
	a.count = 512; /* several replies for 50 entries */
	while (!eof && calls < 200) {
		calls++;
		if (HX_CALL(nfs, rpc_nfs3_readdir_async, &a, zdr_READDIR3res, &r) != 0 || r.status != NFS3_OK) {
			ok = false;
			CHECK_NFS(r.status, NFS3_OK, "READDIR cookie %llu", (unsigned long long)a.cookie);
			break;
		}
		if (calls == 1)
			check_post_op(&r.READDIR3res_u.resok.dir_attributes, xp("rd"), "READDIR dir_attributes");
		for (en = r.READDIR3res_u.resok.reply.entries; en; en = enb.nextentry) {
			/* libnfs 4.0 packs list entries at 4-byte alignment: use an aligned copy. */
			memcpy(&enb, en, sizeof(enb));
			en = &enb;
			a.cookie = en->cookie;
			if (!strcmp(en->name, ".") || !strcmp(en->name, ".."))
				continue;
			if (sscanf(en->name, "entry-%d", &idx) != 1 || idx < 0 || idx >= RD_N) {
				extra++;
				continue;
			}
			if (seen[idx]++)
				dups++;
			snprintf(name, sizeof(name), "rd/%s", en->name);
			if (en->fileid != ino_of(xp(name)))
				bad_ino++;
		}
		memcpy(a.cookieverf, r.READDIR3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
		eof = r.READDIR3res_u.resok.reply.eof;
	}
	if (ok) {
		CHECK(eof, "READDIR reached eof in %u calls of count 512", calls);
		CHECK(calls > 1, "count 512 needed more than one call (%u): cookies were used", calls);
		for (i = 0; i < RD_N && seen[i] == 1; i++)
			;
		CHECK(i == RD_N, "all %u names seen (first missing or repeated: %u)", RD_N, i);
		CHECK_EQ(dups, 0, "no name seen twice");
		CHECK_EQ(extra, 0, "no unexpected names");
		CHECK_EQ(bad_ino, 0, "fileids equal the disk inode numbers");
	}
}

/* READDIR with a cookie never issued, a forged verifier, a count too small, of a regular file. */
static void readdir_bad_args(struct hx_fh *dir)
{
	READDIR3args a;
	READDIR3res r;
	struct hx_fh file;

	/*
	 * RFC 1813 §3.3.16: a cookie the server never issued, or a cookie with a
	 * verifier that is not the server's, is NFS3ERR_BAD_COOKIE - or, for a
	 * server that does not use verifiers, an ordinary answer. Nothing else.
	 */
	memset(&a, 0, sizeof(a));
	a.dir = hx_fh3(dir);
	a.count = 4096;
	a.cookie = 0x7eadbeef12345678ull;
	HX_CALL(nfs, rpc_nfs3_readdir_async, &a, zdr_READDIR3res, &r);
	CHECK(r.status == NFS3ERR_BAD_COOKIE || (r.status == NFS3_OK && r.READDIR3res_u.resok.reply.eof),
	      "READDIR with a cookie never issued: BAD_COOKIE, or OK at eof (%s)", hx_nfsstat_name(r.status));
	a.cookie = 0;
	HX_CALL(nfs, rpc_nfs3_readdir_async, &a, zdr_READDIR3res, &r);
	if (r.status == NFS3_OK && r.READDIR3res_u.resok.reply.entries) {
		entry3 first;
		int st;

		memcpy(&first, r.READDIR3res_u.resok.reply.entries, sizeof(first));
		a.cookie = first.cookie;
		memset(a.cookieverf, 0x5a, NFS3_COOKIEVERFSIZE);
		HX_CALL(nfs, rpc_nfs3_readdir_async, &a, zdr_READDIR3res, &r);
		st = r.status;
		CHECK(st == NFS3ERR_BAD_COOKIE || st == NFS3_OK,
		      "READDIR with a valid cookie and a forged verifier: BAD_COOKIE or OK (%s)", hx_nfsstat_name(st));
	}
	memset(&a, 0, sizeof(a));
	a.dir = hx_fh3(dir);
	a.count = 16;
	/*
	 * RFC 1813 §3.3.16: TOOSMALL when not even one entry fits. A server may
	 * instead ignore the tiny count; what it must not do is answer OK with
	 * no entries and no eof, which sends clients round in circles.
	 */
	HX_CALL(nfs, rpc_nfs3_readdir_async, &a, zdr_READDIR3res, &r);
	CHECK(r.status == NFS3ERR_TOOSMALL ||
	      (r.status == NFS3_OK && (r.READDIR3res_u.resok.reply.entries || r.READDIR3res_u.resok.reply.eof)),
	      "READDIR count 16: TOOSMALL, or entries despite the count (%s, entries %s, eof %u)",
	      hx_nfsstat_name(r.status), r.status == NFS3_OK && r.READDIR3res_u.resok.reply.entries ?
	      "yes" : "no", r.status == NFS3_OK ? r.READDIR3res_u.resok.reply.eof : 0);
	if (hx3_lookup(nfs, &root, "f2", &file, NULL) == NFS3_OK) {
		a.dir = hx_fh3(&file);
		a.count = 4096;
		HX_CALL(nfs, rpc_nfs3_readdir_async, &a, zdr_READDIR3res, &r);
		CHECK_NFS(r.status, NFS3ERR_NOTDIR, "READDIR on a regular file");
	}
}

static void test_readdir(void)
{
	struct hx_fh dir;
	char name[32];
	unsigned i;

	hx_section("READDIR (§3.3.16)");
	mkdir(xp("rd"), 0755);
	for (i = 0; i < RD_N; i++) {
		snprintf(name, sizeof(name), "rd/entry-%02u", i);
		hx_write_file(xp(name), "", 0, 0644);
	}
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "rd", &dir, NULL), NFS3_OK, "LOOKUP rd"))
		return;
	readdir_walk(&dir);
	readdir_bad_args(&dir);
}

static void test_readdirplus(void)
{
	READDIRPLUS3args a;
	READDIRPLUS3res r;
	entryplus3 *en, enb;
	struct hx_fh dir, h;
	fattr3 attr;
	unsigned seen[RD_N], calls = 0, no_attr = 0, no_fh = 0, bad_fh = 0, bad_attr = 0, i;
	char name[32];
	bool eof = false, ok = true;
	int idx;

	hx_section("READDIRPLUS (§3.3.17)");
	if (!CHECK_NFS(hx3_lookup(nfs, &root, "rd", &dir, NULL), NFS3_OK, "LOOKUP rd"))
		return;
	memset(seen, 0, sizeof(seen));
	memset(&a, 0, sizeof(a));
	a.dir = hx_fh3(&dir);
	a.dircount = 256;
	a.maxcount = 2048;
	while (!eof && calls < 200) {
		calls++;
		if (HX_CALL(nfs, rpc_nfs3_readdirplus_async, &a, zdr_READDIRPLUS3res, &r) != 0 ||
		    r.status != NFS3_OK) {
			ok = false;
			CHECK_NFS(r.status, NFS3_OK, "READDIRPLUS cookie %llu", (unsigned long long)a.cookie);
			break;
		}
		for (en = r.READDIRPLUS3res_u.resok.reply.entries; en; en = enb.nextentry) {
			memcpy(&enb, en, sizeof(enb));
			en = &enb;
			a.cookie = en->cookie;
			if (sscanf(en->name, "entry-%d", &idx) != 1 || idx < 0 || idx >= RD_N)
				continue;
			seen[idx]++;
			snprintf(name, sizeof(name), "rd/%s", en->name);
			if (!en->name_attributes.attributes_follow)
				no_attr++;
			else if (en->name_attributes.post_op_attr_u.attributes.fileid != ino_of(xp(name)) ||
				 en->name_attributes.post_op_attr_u.attributes.type != NF3REG)
				bad_attr++;
			if (!en->name_handle.handle_follows) {
				no_fh++;
			} else {
				hx_fh_set(&h, &en->name_handle.post_op_fh3_u.handle);
				if (hx3_getattr(nfs, &h, &attr) != NFS3_OK || attr.fileid != en->fileid)
					bad_fh++;
			}
		}
		memcpy(a.cookieverf, r.READDIRPLUS3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
		eof = r.READDIRPLUS3res_u.resok.reply.eof;
	}
	if (ok) {
		CHECK(eof && calls > 1, "READDIRPLUS reached eof in %u calls (maxcount 2048)", calls);
		for (i = 0; i < RD_N && seen[i] == 1; i++)
			;
		CHECK(i == RD_N, "all %u names seen exactly once (first bad: %u)", RD_N, i);
		CHECK_EQ(no_attr, 0, "every entry has attributes");
		CHECK_EQ(bad_attr, 0, "entry attributes match the disk");
		CHECK_EQ(no_fh, 0, "every entry has a handle");
		CHECK_EQ(bad_fh, 0, "every entry handle resolves (GETATTR) to the entry's fileid");
	}
	memset(&a, 0, sizeof(a));
	a.dir = hx_fh3(&dir);
	a.dircount = 8;
	a.maxcount = 16;
	HX_CALL(nfs, rpc_nfs3_readdirplus_async, &a, zdr_READDIRPLUS3res, &r);
	CHECK(r.status == NFS3ERR_TOOSMALL ||
	      (r.status == NFS3_OK && (r.READDIRPLUS3res_u.resok.reply.entries ||
				       r.READDIRPLUS3res_u.resok.reply.eof)),
	      "READDIRPLUS maxcount 16: TOOSMALL, or entries despite the count (%s)",
	      hx_nfsstat_name(r.status));
}

static void test_fsstat(void)
{
	FSSTAT3args a = { .fsroot = hx_fh3(&root) };
	FSSTAT3res r;
	FSSTAT3resok *ok = &r.FSSTAT3res_u.resok;
	struct statvfs sv;

	hx_section("FSSTAT (§3.3.18)");
	HX_CALL(nfs, rpc_nfs3_fsstat_async, &a, zdr_FSSTAT3res, &r);
	if (!CHECK_NFS(r.status, NFS3_OK, "FSSTAT") || statvfs(env.export_dir, &sv) != 0)
		return;
	CHECK_EQ(ok->tbytes, (uint64_t)sv.f_blocks * sv.f_frsize, "tbytes = f_blocks * f_frsize");
	CHECK(ok->fbytes <= ok->tbytes && ok->abytes <= ok->fbytes, "abytes <= fbytes <= tbytes");
	CHECK(ok->fbytes > (uint64_t)sv.f_bfree * sv.f_frsize / 2 &&
	      ok->fbytes < (uint64_t)sv.f_bfree * sv.f_frsize * 2, "fbytes close to statvfs (%llu)",
	      (unsigned long long)ok->fbytes);
	/* A file system without an inode limit (CephFS: f_files counts the files
	 * in use, f_ffree is all ones) is reported as tfiles all ones, so that
	 * afiles <= ffiles <= tfiles still holds (backend/ceph/ceph_meta.c). */
	if (sv.f_ffree > sv.f_files)
		CHECK_EQ(ok->tfiles, (uint64_t)sv.f_ffree, "tfiles = f_ffree (no inode limit)");
	else
		CHECK_EQ(ok->tfiles, sv.f_files, "tfiles = f_files");
	CHECK(ok->ffiles <= ok->tfiles && ok->afiles <= ok->ffiles, "afiles <= ffiles <= tfiles");
	check_post_op(&ok->obj_attributes, env.export_dir, "FSSTAT obj_attributes");
}

static void test_fsinfo(void)
{
	FSINFO3args a = { .fsroot = hx_fh3(&root) };
	FSINFO3res r;
	FSINFO3resok *ok = &r.FSINFO3res_u.resok;
	const uint32_t props = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;
	struct hx_fh fh;
	uint8_t *buf;
	WRITE3res w;
	READ3res rr;

	hx_section("FSINFO (§3.3.19)");
	HX_CALL(nfs, rpc_nfs3_fsinfo_async, &a, zdr_FSINFO3res, &r);
	if (!CHECK_NFS(r.status, NFS3_OK, "FSINFO"))
		return;
	hx_note("rtmax %u rtpref %u rtmult %u wtmax %u wtpref %u wtmult %u dtpref %u maxfilesize %llu "
		"time_delta %u.%09u properties 0x%x", ok->rtmax, ok->rtpref, ok->rtmult, ok->wtmax, ok->wtpref,
		ok->wtmult, ok->dtpref, (unsigned long long)ok->maxfilesize, ok->time_delta.seconds,
		ok->time_delta.nseconds, ok->properties);
	CHECK(ok->rtmax >= 32768 && ok->rtmax <= 1048576, "rtmax in 32 KiB..1 MiB");
	CHECK(ok->wtmax >= 32768 && ok->wtmax <= 1048576, "wtmax in 32 KiB..1 MiB");
	CHECK(ok->rtpref > 0 && ok->rtpref <= ok->rtmax, "0 < rtpref <= rtmax");
	CHECK(ok->wtpref > 0 && ok->wtpref <= ok->wtmax, "0 < wtpref <= wtmax");
	CHECK(ok->dtpref >= 512, "dtpref >= 512");
	CHECK(ok->maxfilesize >= (1ull << 40), "maxfilesize >= 1 TiB");
	CHECK(ok->time_delta.seconds == 0 && ok->time_delta.nseconds > 0 &&
	      ok->time_delta.nseconds <= 1000000, "time_delta is at most 1 ms (ext4/tmpfs: 1 ns)");
	CHECK((ok->properties & props) == props, "properties LINK|SYMLINK|HOMOGENEOUS|CANSETTIME");
	check_post_op(&ok->obj_attributes, env.export_dir, "FSINFO obj_attributes");

	/* The advertised maxima must actually work. */
	buf = malloc(ok->wtmax > ok->rtmax ? ok->wtmax : ok->rtmax);
	if (buf && hx3_create(nfs, &root, "maxio", 0644, &fh) == NFS3_OK) {
		uint64_t seed = 99;

		hx_fill(&seed, buf, ok->wtmax);
		if (CHECK_NFS(hx3_write(nfs, &fh, 0, buf, ok->wtmax, FILE_SYNC, &w), NFS3_OK,
			      "WRITE of wtmax (%u) bytes", ok->wtmax))
			CHECK_EQ(w.WRITE3res_u.resok.count, ok->wtmax, "all wtmax bytes written");
		if (CHECK_NFS(hx3_read(nfs, &fh, 0, ok->rtmax, &rr), NFS3_OK, "READ of rtmax (%u) bytes",
			      ok->rtmax)) {
			uint32_t want = ok->rtmax < ok->wtmax ? ok->rtmax : ok->wtmax;

			CHECK_EQ(rr.READ3res_u.resok.count, want, "READ returns min(rtmax, file size)");
			CHECK(rr.READ3res_u.resok.data.data_len == want &&
			      !memcmp(rr.READ3res_u.resok.data.data_val, buf, want), "data matches");
		}
	}
	free(buf);
}

/*
 * PATHCONF through rawrpc.h: libnfs 4.0.0's rpc_nfs3_pathconf_async hands
 * its callback no decoded result.
 */
static void test_pathconf(void)
{
	struct raw_conn c;
	struct raw_reply r;
	struct xb a;
	uint32_t st, follows, linkmax, name_max, no_trunc, chown_restricted, ci, cp;
	uint64_t fileid = 0;

	hx_section("PATHCONF (§3.3.20)");
	if (!CHECK(raw_connect(&c, env.port) == 0, "raw connection for PATHCONF"))
		return;
	xb_init(&a);
	xb_opaque(&a, root.data, root.len);
	if (!CHECK(raw_call(&c, 0x50415448, RAW_NFS_PROG, 3, 20, a.p, a.len, &r) == RAW_RECV_OK &&
		   r.reply_stat == 0 && r.accept_stat == 0, "PATHCONF call accepted")) {
		xb_free(&a);
		raw_close(&c);
		return;
	}
	st = xd_u32(&r.body);
	if (CHECK_NFS(st, NFS3_OK, "PATHCONF")) {
		follows = xd_u32(&r.body);
		if (follows) {
			xd_skip(&r.body, 4 * 5 + 8 * 2 + 4 * 2 + 8); /* type..rdev, fsid */
			fileid = xd_u64(&r.body);
			xd_skip(&r.body, 8 * 3);
		}
		linkmax = xd_u32(&r.body);
		name_max = xd_u32(&r.body);
		no_trunc = xd_u32(&r.body);
		chown_restricted = xd_u32(&r.body);
		ci = xd_u32(&r.body);
		cp = xd_u32(&r.body);
		if (CHECK(!r.body.bad, "PATHCONF3resok decodes")) {
			CHECK(follows && fileid == ino_of(env.export_dir), "obj_attributes of the root");
			CHECK_EQ(name_max, pathconf(env.export_dir, _PC_NAME_MAX),
				 "name_max = pathconf(_PC_NAME_MAX)");
			CHECK(linkmax >= 1, "linkmax >= 1 (%u)", linkmax);
			CHECK(no_trunc, "no_trunc");
			CHECK(chown_restricted, "chown_restricted");
			CHECK(!ci, "not case_insensitive");
			CHECK(cp, "case_preserving");
		}
	}
	raw_reply_free(&r);
	xb_free(&a);
	raw_close(&c);
}

/* Limits and names that must never work, whatever the error chosen. */
static void test_edges(void)
{
	struct hx_fh fh;
	WRITE3res w;
	READ3res r;
	SETATTR3args sa;
	SETATTR3res sr;
	RENAME3args rn;
	RENAME3res rnr;
	struct stat st;
	int s1;

	hx_section("edges: offsets, sizes, dot names");
	if (!CHECK_NFS(hx3_create(nfs, &root, "edge", 0644, &fh), NFS3_OK, "CREATE edge"))
		return;
	s1 = hx3_write(nfs, &fh, 0xffffffffffffff00ull, "0123456789", 10, FILE_SYNC, &w);
	CHECK(s1 == NFS3ERR_FBIG || s1 == NFS3ERR_INVAL, "WRITE at offset 2^64-256: FBIG or INVAL (%s)",
	      hx_nfsstat_name(s1));
	s1 = hx3_write(nfs, &fh, 0x7ffffffffffffffcull, "0123456789", 10, FILE_SYNC, &w);
	CHECK(s1 == NFS3ERR_FBIG || s1 == NFS3ERR_INVAL, "WRITE crossing 2^63: FBIG or INVAL (%s)",
	      hx_nfsstat_name(s1));
	CHECK(stat(xp("edge"), &st) == 0 && st.st_size == 0, "edge still empty (%lld)", (long long)st.st_size);
	memset(&sa, 0, sizeof(sa));
	sa.object = hx_fh3(&fh);
	sa.new_attributes.size.set_it = 1;
	sa.new_attributes.size.set_size3_u.size = 1ull << 62;
	HX_CALL(nfs, rpc_nfs3_setattr_async, &sa, zdr_SETATTR3res, &sr);
	CHECK(sr.status == NFS3ERR_FBIG || sr.status == NFS3ERR_INVAL, "SETATTR size 2^62: FBIG or INVAL (%s)",
	      hx_nfsstat_name(sr.status));
	if (hx3_lookup(nfs, &root, "f2", &fh, NULL) == NFS3_OK &&
	    CHECK_NFS(hx3_read(nfs, &fh, 0, 8u << 20, &r), NFS3_OK, "READ of 8 MiB (more than rtmax)"))
		CHECK(r.READ3res_u.resok.count <= 1048576 && r.READ3res_u.resok.count == 5000,
		      "returns the 5000-byte file (%u)", r.READ3res_u.resok.count);

	s1 = hx3_create(nfs, &root, "..", 0644, NULL);
	CHECK(s1 != NFS3_OK && s1 != -1, "CREATE \"..\" refused (%s)", hx_nfsstat_name(s1));
	s1 = hx3_create(nfs, &root, ".", 0644, NULL);
	CHECK(s1 != NFS3_OK && s1 != -1, "CREATE \".\" refused (%s)", hx_nfsstat_name(s1));
	s1 = hx3_mkdir(nfs, &root, "..", 0755, NULL);
	CHECK(s1 != NFS3_OK && s1 != -1, "MKDIR \"..\" refused (%s)", hx_nfsstat_name(s1));
	s1 = hx3_create(nfs, &root, "", 0644, NULL);
	CHECK(s1 != NFS3_OK && s1 != -1, "CREATE \"\" (empty name) refused (%s)", hx_nfsstat_name(s1));
	s1 = hx3_remove(nfs, &root, "..");
	CHECK(s1 != NFS3_OK && s1 != -1, "REMOVE \"..\" refused (%s)", hx_nfsstat_name(s1));
	memset(&rn, 0, sizeof(rn));
	rn.from.dir = hx_fh3(&root);
	rn.from.name = "f2";
	rn.to.dir = hx_fh3(&root);
	rn.to.name = "..";
	HX_CALL(nfs, rpc_nfs3_rename_async, &rn, zdr_RENAME3res, &rnr);
	CHECK(rnr.status != NFS3_OK, "RENAME f2 to \"..\" refused (%s)", hx_nfsstat_name(rnr.status));
	rn.from.name = "..";
	rn.to.name = "escaped";
	HX_CALL(nfs, rpc_nfs3_rename_async, &rn, zdr_RENAME3res, &rnr);
	CHECK(rnr.status != NFS3_OK, "RENAME \"..\" to escaped refused (%s)", hx_nfsstat_name(rnr.status));
	CHECK(access(xp("f2"), F_OK) == 0 && access(xp("escaped"), F_OK) != 0 &&
	      access(hx_path(&env, "rnfsd.conf"), F_OK) == 0 && access(env.export_dir, F_OK) == 0,
	      "f2, the export and its parent are where they were");
}

static void populate(void)
{
	static char data123[123];
	uint64_t seed = 1;

	memset(data123, 'a', sizeof(data123));
	hx_fill(&seed, f2_data, sizeof(f2_data));
	hx_write_file(xp("f1"), data123, sizeof(data123), 0644);
	hx_write_file(xp("f2"), f2_data, sizeof(f2_data), 0644);
	mkdir(xp("sub"), 0755);
	hx_write_file(xp("sub/f3"), "three", 5, 0644);
	if (symlink("target/of the/link", xp("sl")) != 0)
		perror("symlink");
}

int main(int argc, char **argv)
{
	hx_begin("nfs3_procs", argc, argv);
	hx_require_root();
	hx_env_init(&env);
	populate();
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (hx_open_export(&env, env.export_dir, 0, 0, &nfs, &root) != 0)
		return hx_end();

	test_null();
	test_getattr();
	test_setattr();
	test_lookup();
	test_access();
	test_readlink();
	test_read();
	test_write_commit();
	test_create();
	test_mkdir();
	test_symlink();
	test_mknod();
	test_remove_rmdir();
	test_rename();
	test_link();
	test_readdir();
	test_readdirplus();
	test_fsstat();
	test_fsinfo();
	test_pathconf();
	test_edges();

	CHECK(hx_daemon_alive(&env), "daemon still running after all procedures");
	hx_rpc_close(nfs);
	hx_daemon_stop(&env);
	return hx_end();
}
