/*
 * test_nfs4.c - NFSv4 through the real daemon, with the raw RPC client
 * (libnfs 4.0.0 opens files with SETCLIENTID/OPEN, not built yet):
 *  - by default NFSv4 is not served: version 4 gets PROG_MISMATCH (3..3);
 *  - with "[nfsv4] enable = yes": NULL answers; a COMPOUND walks from
 *    PUTROOTFH through the pseudo file system to the export (LOOKUP per
 *    component), GETFH, GETATTR (type, fileid, fsid), READDIR lists a file
 *    made on the server, LOOKUP + READLINK of a symlink; the NFSv3 (MOUNT)
 *    handle of the export is accepted by PUTFH; an operation not built
 *    (OPEN) answers NFS4ERR_NOTSUPP; an unknown minor version
 *    MINOR_VERS_MISMATCH; NFSv3 is still served beside it; a truncated
 *    header is GARBAGE_ARGS, an operation that does not decode BADXDR,
 *    both logged;
 *  - the namespace and attribute operations (default export: rw,
 *    no_root_squash): CREATE of a directory, a symlink and a FIFO, SETATTR
 *    (mode, owner, size with the anonymous stateid), RENAME (SAVEFH = source),
 *    LINK, REMOVE (NOTEMPTY first), VERIFY/NVERIFY, each checked on disk;
 *    errors: INVAL (empty name), BADTYPE (NF4REG), NOFILEHANDLE (RENAME
 *    without SAVEFH), ROFS in the pseudo file system, BADOWNER;
 *  - then with the export rw under the default root_squash plus a read-only
 *    one: root's CREATE makes an object owned by 65534; CREATE, REMOVE and
 *    SETATTR on the read-only export are ROFS.
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;
static uint32_t xid = 0x4e460000;

enum { OP_ACCESS = 3, OP_CREATE = 6, OP_GETATTR = 9, OP_GETFH = 10, OP_LINK = 11, OP_LOOKUP = 15,
       OP_NVERIFY = 17, OP_OPEN = 18, OP_PUTFH = 22, OP_PUTROOTFH = 24, OP_READDIR = 26, OP_READLINK = 27,
       OP_REMOVE = 28, OP_RENAME = 29, OP_SAVEFH = 32, OP_SETATTR = 34, OP_VERIFY = 37 };
#define NFS4ERR_NOTSUPP 10004
#define NFS4ERR_MINOR_VERS_MISMATCH 10021

static void hdr(struct xb *a, uint32_t minor, uint32_t numops)
{
	xb_string(a, "it");
	xb_u32(a, minor);
	xb_u32(a, numops);
}

/* LOOKUP each component of path; returns how many. */
static uint32_t walk(struct xb *a, const char *path)
{
	char buf[PATH_MAX], *save = NULL;
	uint32_t n = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save), n++) {
		if (a) {
			xb_u32(a, OP_LOOKUP);
			xb_string(a, c);
		}
	}
	return n;
}

/* Send a COMPOUND; its status (or -1), r->body at the first result. */
static int compound(struct raw_conn *c, const struct xb *a, struct raw_reply *r, uint32_t *nres)
{
	uint32_t len;

	if (raw_call(c, ++xid, RAW_NFS_PROG, 4, 1, a->p, a->len, r) != RAW_RECV_OK)
		return -1;
	if (r->reply_stat != 0 || r->accept_stat != 0)
		return -1;
	int st = (int)xd_u32(&r->body);
	xd_opaque(&r->body, &len, 1024);
	*nres = xd_u32(&r->body);
	return r->body.bad ? -1 : st;
}

static bool res_ok(struct raw_reply *r, uint32_t op)
{
	uint32_t got = xd_u32(&r->body), st = xd_u32(&r->body);
	return !r->body.bad && got == op && st == 0;
}

static void test_off_by_default(void)
{
	struct raw_conn c;
	struct raw_reply r;

	hx_section("NFSv4 is off by default");
	if (hx_daemon_start(&env) != 0 || !CHECK(raw_connect(&c, env.port) == 0, "connect"))
		return;
	CHECK(raw_call(&c, ++xid, RAW_NFS_PROG, 4, 0, NULL, 0, &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	      r.accept_stat == 2 && r.low == 3 && r.high == 3, "version 4 NULL: PROG_MISMATCH 3..3");
	raw_reply_free(&r);
	raw_close(&c);
	hx_daemon_stop(&env);
}

/* PUTROOTFH, LOOKUP..., GETFH, GETATTR, READDIR on the export. */
static void test_walk(struct raw_conn *c, uint8_t *fh, uint32_t *fh_len)
{
	uint32_t n, len, depth = walk(NULL, env.export_dir), names = 0;
	struct raw_reply r;
	const uint8_t *p;
	struct xb a;
	bool found = false;

	hx_section("PUTROOTFH, LOOKUP to the export, GETFH, GETATTR, READDIR");
	xb_init(&a);
	hdr(&a, 0, 1 + depth + 3);
	xb_u32(&a, OP_PUTROOTFH);
	walk(&a, env.export_dir);
	xb_u32(&a, OP_GETFH);
	xb_u32(&a, OP_GETATTR);
	xb_u32(&a, 1);
	xb_u32(&a, (1u << 1) | (1u << 20)); /* type, fileid */
	xb_u32(&a, OP_READDIR);
	xb_u64(&a, 0);
	xb_u64(&a, 0);
	xb_u32(&a, 8192);
	xb_u32(&a, 8192);
	xb_u32(&a, 0);
	CHECK_EQ(compound(c, &a, &r, &n), 0, "COMPOUND status");
	xb_free(&a);
	CHECK_EQ(n, 1 + depth + 3, "results");
	CHECK(res_ok(&r, OP_PUTROOTFH), "PUTROOTFH");
	for (uint32_t i = 0; i < depth; i++)
		CHECK(res_ok(&r, OP_LOOKUP), "LOOKUP %u", i);
	CHECK(res_ok(&r, OP_GETFH), "GETFH");
	p = xd_opaque(&r.body, fh_len, 128);
	if (p)
		memcpy(fh, p, *fh_len);
	CHECK(res_ok(&r, OP_GETATTR), "GETATTR");
	CHECK_EQ(xd_u32(&r.body), 3, "bitmap words");
	CHECK_EQ(xd_u32(&r.body), (1u << 1) | (1u << 20), "bitmap word 0");
	xd_u32(&r.body), xd_u32(&r.body);
	CHECK_EQ(xd_u32(&r.body), 12, "attrlist length");
	CHECK_EQ(xd_u32(&r.body), 2, "type NF4DIR");
	xd_u64(&r.body);
	CHECK(res_ok(&r, OP_READDIR), "READDIR");
	xd_skip(&r.body, 8);
	while (xd_u32(&r.body) == 1 && !r.body.bad) {
		xd_u64(&r.body);
		p = xd_opaque(&r.body, &len, 256);
		found |= p && len == 5 && memcmp(p, "hello", 5) == 0;
		names++;
		uint32_t words = xd_u32(&r.body);
		xd_skip(&r.body, 4 * words);
		xd_opaque(&r.body, &len, 4096);
	}
	CHECK_EQ(xd_u32(&r.body), 1, "eof");
	CHECK(found && names == 2, "READDIR lists hello and link (%u entries)", names);
	raw_reply_free(&r);
}

static void test_handles_and_errors(struct raw_conn *c, const uint8_t *fh, uint32_t fh_len)
{
	uint8_t v3fh[64];
	uint32_t v3len = 0, n, len;
	struct raw_reply r;
	const uint8_t *p;
	struct xb a;

	hx_section("READLINK, the NFSv3 handle, NOTSUPP, MINOR_VERS_MISMATCH, NFSv3 beside");
	xb_init(&a);
	hdr(&a, 0, 3);
	xb_u32(&a, OP_PUTFH);
	xb_opaque(&a, fh, fh_len);
	xb_u32(&a, OP_LOOKUP);
	xb_string(&a, "link");
	xb_u32(&a, OP_READLINK);
	CHECK_EQ(compound(c, &a, &r, &n), 0, "PUTFH LOOKUP READLINK");
	xb_free(&a);
	res_ok(&r, OP_PUTFH), res_ok(&r, OP_LOOKUP);
	CHECK(res_ok(&r, OP_READLINK), "READLINK");
	p = xd_opaque(&r.body, &len, 4096);
	CHECK(p && len == 5 && memcmp(p, "hello", 5) == 0, "the link's target");
	raw_reply_free(&r);

	CHECK_EQ(raw_mnt(c, ++xid, env.export_dir, v3fh, &v3len), 0, "MNT");
	CHECK(v3len == fh_len && memcmp(v3fh, fh, fh_len) == 0, "NFSv3 and NFSv4 name the export's root alike");

	xb_init(&a);
	hdr(&a, 0, 2);
	xb_u32(&a, OP_PUTFH);
	xb_opaque(&a, fh, fh_len);
	xb_u32(&a, OP_OPEN);
	CHECK_EQ(compound(c, &a, &r, &n), NFS4ERR_NOTSUPP, "OPEN: NOTSUPP");
	CHECK_EQ(n, 2, "two results");
	raw_reply_free(&r);
	xb_free(&a);

	xb_init(&a);
	hdr(&a, 9, 1);
	xb_u32(&a, OP_PUTROOTFH);
	CHECK_EQ(compound(c, &a, &r, &n), NFS4ERR_MINOR_VERS_MISMATCH, "minor version 9");
	CHECK_EQ(n, 0, "no results");
	raw_reply_free(&r);
	xb_free(&a);

	CHECK(raw_call(c, ++xid, RAW_NFS_PROG, 3, 0, NULL, 0, &r) == RAW_RECV_OK && r.accept_stat == 0,
	      "NFSv3 NULL still served");
	raw_reply_free(&r);

	/* A truncated header: GARBAGE_ARGS; a truncated operation: BADXDR; one log line each. */
	static const uint8_t cut[6] = { 0, 0, 0, 8, 'a', 'b' };
	CHECK(raw_call(c, ++xid, RAW_NFS_PROG, 4, 1, cut, sizeof(cut), &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	      r.accept_stat == 4, "truncated COMPOUND header: GARBAGE_ARGS");
	raw_reply_free(&r);
	xb_init(&a);
	hdr(&a, 0, 1);
	xb_u32(&a, OP_PUTFH);
	xb_u32(&a, 200); /* a handle longer than NFS4_FHSIZE */
	CHECK_EQ(compound(c, &a, &r, &n), 10036, "PUTFH with a 200-byte handle: NFS4ERR_BADXDR");
	raw_reply_free(&r);
	xb_free(&a);
	CHECK(hx_log_count(&env, "does not decode") >= 2, "logged");
}

/* ---- namespace and attribute operations ---- */

#define NFS4ERR_ROFS 30
#define NFS4ERR_INVAL 22
#define NFS4ERR_NOTEMPTY 66
#define NFS4ERR_BADTYPE 10007
#define NFS4ERR_SAME 10009
#define NFS4ERR_NOFILEHANDLE 10020
#define NFS4ERR_BADOWNER 10039

/* One COMPOUND on the directory fh: PUTFH, then the ops in ops (already encoded, n of them). */
static int on_dir(struct raw_conn *c, const uint8_t *fh, uint32_t fh_len, const struct xb *ops, uint32_t n)
{
	struct raw_reply r;
	struct xb a;
	uint32_t nres;
	int st;

	xb_init(&a);
	hdr(&a, 0, 1 + n);
	xb_u32(&a, OP_PUTFH);
	xb_opaque(&a, fh, fh_len);
	xb_raw(&a, ops->p, ops->len);
	st = compound(c, &a, &r, &nres);
	raw_reply_free(&r);
	xb_free(&a);
	return st;
}

/* fattr4 with one bitmap word pair and the given values. */
static void fattr(struct xb *b, uint32_t w0, uint32_t w1, const struct xb *vals)
{
	xb_u32(b, 2);
	xb_u32(b, w0);
	xb_u32(b, w1);
	xb_opaque(b, vals ? vals->p : NULL, vals ? (uint32_t)vals->len : 0);
}

#define W1(a) (1u << ((a) - 32))
#define FATTR_MODE 33
#define FATTR_OWNER 36

static void op_create(struct xb *b, uint32_t type, const char *name, uint32_t mode)
{
	struct xb v;

	xb_init(&v);
	xb_u32(&v, mode);
	xb_u32(b, OP_CREATE);
	xb_u32(b, type);
	if (type == 5)
		xb_string(b, "hello");
	xb_string(b, name);
	fattr(b, 0, W1(FATTR_MODE), &v);
	xb_free(&v);
}

/* PUTFH fh, one operation built by fn(arg). */
#define ONE(c, fh, len, stmt) ({ struct xb o_; xb_init(&o_); { struct xb *b = &o_; stmt; } \
	int st_ = on_dir(c, fh, len, &o_, 1); xb_free(&o_); st_; })

static void test_mod_ops(struct raw_conn *c, const uint8_t *fh, uint32_t fh_len)
{
	struct stat st;
	struct xb v, o;

	hx_section("CREATE, SETATTR, RENAME, LINK, REMOVE, VERIFY, NVERIFY");
	CHECK_EQ(ONE(c, fh, fh_len, op_create(b, 2, "nd", 0751)), 0, "CREATE NF4DIR");
	CHECK(stat(hx_xpath(&env, "nd"), &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0751,
	      "a directory of mode 0751 on disk");
	CHECK_EQ(ONE(c, fh, fh_len, op_create(b, 5, "nl", 0777)), 0, "CREATE NF4LNK");
	char target[16] = { 0 };
	CHECK(readlink(hx_xpath(&env, "nl"), target, sizeof(target) - 1) == 5 && strcmp(target, "hello") == 0,
	      "the symlink on disk");
	CHECK_EQ(ONE(c, fh, fh_len, op_create(b, 7, "nf", 0640)), 0, "CREATE NF4FIFO");
	CHECK(lstat(hx_xpath(&env, "nf"), &st) == 0 && S_ISFIFO(st.st_mode), "a FIFO on disk");
	CHECK_EQ(ONE(c, fh, fh_len, op_create(b, 1, "nr", 0640)), NFS4ERR_BADTYPE, "CREATE NF4REG: BADTYPE");
	CHECK_EQ(ONE(c, fh, fh_len, op_create(b, 2, "", 0700)), NFS4ERR_INVAL, "CREATE of an empty name: INVAL");

	/* SETATTR mode + owner on nd; size of hello with the anonymous stateid. */
	xb_init(&v);
	xb_u32(&v, 0700);
	xb_string(&v, "1000");
	xb_init(&o);
	xb_u32(&o, OP_LOOKUP);
	xb_string(&o, "nd");
	xb_u32(&o, OP_SETATTR);
	xb_u32(&o, 0);
	xb_u64(&o, 0), xb_u32(&o, 0);
	fattr(&o, 0, W1(FATTR_MODE) | W1(FATTR_OWNER), &v);
	CHECK_EQ(on_dir(c, fh, fh_len, &o, 2), 0, "SETATTR mode, owner");
	xb_free(&o);
	xb_free(&v);
	CHECK(stat(hx_xpath(&env, "nd"), &st) == 0 && (st.st_mode & 07777) == 0700 && st.st_uid == 1000,
	      "mode 0700, uid 1000 on disk");
	xb_init(&v);
	xb_string(&v, "no-such-user-at-all@localdomain");
	xb_init(&o);
	xb_u32(&o, OP_SETATTR);
	xb_u32(&o, 0);
	xb_u64(&o, 0), xb_u32(&o, 0);
	fattr(&o, 0, W1(FATTR_OWNER), &v);
	CHECK_EQ(on_dir(c, fh, fh_len, &o, 1), NFS4ERR_BADOWNER, "SETATTR of an unknown owner: BADOWNER");
	xb_free(&o);
	xb_free(&v);

	/* RENAME nd -> nd2 (SAVEFH is the source directory), LINK hello -> hello2. */
	xb_init(&o);
	xb_u32(&o, OP_SAVEFH);
	xb_u32(&o, OP_RENAME);
	xb_string(&o, "nd");
	xb_string(&o, "nd2");
	CHECK_EQ(on_dir(c, fh, fh_len, &o, 2), 0, "RENAME");
	xb_free(&o);
	CHECK(stat(hx_xpath(&env, "nd2"), &st) == 0 && stat(hx_xpath(&env, "nd"), &st) != 0, "renamed on disk");
	CHECK_EQ(ONE(c, fh, fh_len, (xb_u32(b, OP_RENAME), xb_string(b, "nd2"), xb_string(b, "x"))),
		 NFS4ERR_NOFILEHANDLE, "RENAME without SAVEFH: NOFILEHANDLE");
	xb_init(&o);
	xb_u32(&o, OP_LOOKUP);
	xb_string(&o, "hello");
	xb_u32(&o, OP_SAVEFH);
	xb_u32(&o, OP_PUTFH);
	xb_opaque(&o, fh, fh_len);
	xb_u32(&o, OP_LINK);
	xb_string(&o, "hello2");
	CHECK_EQ(on_dir(c, fh, fh_len, &o, 4), 0, "LINK");
	xb_free(&o);
	CHECK(stat(hx_xpath(&env, "hello"), &st) == 0 && st.st_nlink == 2, "two links on disk");

	/* VERIFY / NVERIFY the directory's type. */
	xb_init(&v);
	xb_u32(&v, 2);
	CHECK_EQ(ONE(c, fh, fh_len, (xb_u32(b, OP_VERIFY), fattr(b, 1u << 1, 0, &v))), 0, "VERIFY type NF4DIR");
	CHECK_EQ(ONE(c, fh, fh_len, (xb_u32(b, OP_NVERIFY), fattr(b, 1u << 1, 0, &v))), NFS4ERR_SAME,
		 "NVERIFY type NF4DIR: SAME");
	xb_free(&v);

	/* REMOVE: a non-empty directory first. */
	hx_write_file(hx_xpath(&env, "nd2/inner"), "x", 1, 0644);
	CHECK_EQ(ONE(c, fh, fh_len, (xb_u32(b, OP_REMOVE), xb_string(b, "nd2"))), NFS4ERR_NOTEMPTY,
		 "REMOVE of a non-empty directory: NOTEMPTY");
	unlink(hx_xpath(&env, "nd2/inner"));
	static const char *const gone[] = { "nd2", "nl", "nf", "hello2" };
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ(ONE(c, fh, fh_len, (xb_u32(b, OP_REMOVE), xb_string(b, gone[i]))), 0, "REMOVE %s", gone[i]);
	CHECK(lstat(hx_xpath(&env, "nd2"), &st) != 0 && lstat(hx_xpath(&env, "nl"), &st) != 0, "removed on disk");

	/* The pseudo file system is read-only. */
	xb_init(&o);
	xb_u32(&o, OP_PUTROOTFH);
	op_create(&o, 2, "x", 0700);
	CHECK_EQ(on_dir(c, fh, fh_len, &o, 2), NFS4ERR_ROFS, "CREATE in the pseudo root: ROFS");
	xb_free(&o);
}

/* PUTROOTFH, LOOKUP to path, GETFH. */
static bool fh_of(struct raw_conn *c, const char *path, uint8_t *fh, uint32_t *len)
{
	uint32_t n, depth = walk(NULL, path);
	struct raw_reply r;
	const uint8_t *p = NULL;
	struct xb a;
	bool ok;

	xb_init(&a);
	hdr(&a, 0, 2 + depth);
	xb_u32(&a, OP_PUTROOTFH);
	walk(&a, path);
	xb_u32(&a, OP_GETFH);
	ok = compound(c, &a, &r, &n) == 0;
	xb_free(&a);
	for (uint32_t i = 0; ok && i < 1 + depth; i++)
		ok = res_ok(&r, i ? OP_LOOKUP : OP_PUTROOTFH);
	ok = ok && res_ok(&r, OP_GETFH) && (p = xd_opaque(&r.body, len, 128)) != NULL;
	if (ok)
		memcpy(fh, p, *len);
	raw_reply_free(&r);
	return ok;
}

/* root_squash (the default) and a read-only export. */
static void test_squash_ro(void)
{
	char ro[PATH_MAX];
	uint8_t fh[128], rofh[128];
	uint32_t len = 0, rolen = 0;
	struct raw_conn c;
	struct stat st;
	struct xb v;

	hx_section("root_squash by default; a read-only export is ROFS");
	/* Beside the export, not in it (LOOKUP does not cross into a nested export). */
	snprintf(ro, sizeof(ro), "%s/rodir", env.dir);
	CHECK(mkdir(ro, 0755) == 0 || errno == EEXIST, "mkdir rodir");
	char rofile[PATH_MAX + 8];
	snprintf(rofile, sizeof(rofile), "%s/f", ro);
	hx_write_file(rofile, "x", 1, 0644);
	chmod(env.export_dir, 01777);
	hx_write_exports(&env, "%s 127.0.0.1(rw,insecure)\n%s 127.0.0.1(ro,insecure,no_root_squash)\n",
			 env.export_dir, ro);
	if (hx_daemon_start(&env) != 0 || !CHECK(raw_connect(&c, env.port) == 0, "connect"))
		return;
	if (CHECK(fh_of(&c, env.export_dir, fh, &len) && fh_of(&c, ro, rofh, &rolen), "handles")) {
		CHECK_EQ(ONE(&c, fh, len, op_create(b, 2, "sq", 0755)), 0, "CREATE as root on root_squash");
		CHECK(stat(hx_xpath(&env, "sq"), &st) == 0 && st.st_uid == 65534, "owned by 65534 (uid %u)",
		      (unsigned)st.st_uid);
		CHECK_EQ(ONE(&c, rofh, rolen, op_create(b, 2, "x", 0755)), NFS4ERR_ROFS, "CREATE on ro: ROFS");
		CHECK_EQ(ONE(&c, rofh, rolen, (xb_u32(b, OP_REMOVE), xb_string(b, "f"))), NFS4ERR_ROFS,
			 "REMOVE on ro: ROFS");
		xb_init(&v);
		xb_u32(&v, 0700);
		CHECK_EQ(ONE(&c, rofh, rolen, (xb_u32(b, OP_SETATTR), xb_u32(b, 0), xb_u64(b, 0), xb_u32(b, 0),
						fattr(b, 0, W1(FATTR_MODE), &v))),
			 NFS4ERR_ROFS, "SETATTR on ro: ROFS");
		xb_free(&v);
		CHECK(stat(rofile, &st) == 0 && (st.st_mode & 07777) == 0644, "still there, unchanged");
	}
	raw_close(&c);
	hx_daemon_stop(&env);
}

int main(int argc, char **argv)
{
	struct raw_conn c;
	struct raw_reply r;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	FILE *f;

	hx_begin("nfs4", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	hx_write_file(hx_xpath(&env, "hello"), "hi\n", 3, 0644);
	if (symlink("hello", hx_xpath(&env, "link")) != 0)
		CHECK(false, "symlink");
	test_off_by_default();

	f = fopen(env.conf_path, "a");
	if (!CHECK(f != NULL, "config"))
		return hx_end();
	fprintf(f, "[nfsv4]\nenable = yes\n");
	fclose(f);
	if (hx_daemon_start(&env) != 0 || !CHECK(raw_connect(&c, env.port) == 0, "connect"))
		return hx_end();
	CHECK(raw_call(&c, ++xid, RAW_NFS_PROG, 4, 0, NULL, 0, &r) == RAW_RECV_OK && r.accept_stat == 0,
	      "version 4 NULL answered");
	raw_reply_free(&r);
	test_walk(&c, fh, &fh_len);
	test_handles_and_errors(&c, fh, fh_len);
	test_mod_ops(&c, fh, fh_len);
	raw_close(&c);
	hx_daemon_stop(&env);
	test_squash_ro();
	hx_env_release(&env);
	return hx_end();
}
