/*
 * test_nfs4.c - NFSv4 through the real daemon, with the raw NFSv4 client
 * of nfs4raw.h (libnfs 4.0.0's NFSv4 WRITE encoding is broken):
 *  - NFSv4 is served by default (no [nfsv4] section: NULL answers, PUTROOTFH
 *    + GETFH work); with "[nfsv4] enable = no" (checked last) version 4
 *    gets PROG_MISMATCH (3..3);
 *  - NULL answers; a COMPOUND walks from
 *    PUTROOTFH through the pseudo file system to the export (LOOKUP per
 *    component), GETFH, GETATTR (type, fileid, fsid), READDIR lists a file
 *    made on the server, LOOKUP + READLINK of a symlink; the NFSv3 (MOUNT)
 *    handle of the export is accepted by PUTFH; an operation not built
 *    (OPENATTR) answers N4ERR_NOTSUPP; an unknown minor version
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
 *    SETATTR on the read-only export are ROFS;
 *  - NFSv4.0 state and I/O: SETCLIENTID + SETCLIENTID_CONFIRM, OPEN (create)
 *    with OPEN4_RESULT_CONFIRM, OPEN_CONFIRM and its replay (the same seqid
 *    gets the same reply), WRITE UNSTABLE + COMMIT (the same verifier), READ
 *    back (and the file on the server), OLD/BAD/STALE stateids, the
 *    anonymous stateid, a replayed OPEN (same stateid, the file as current
 *    filehandle), a share deny between two clients (SHARE_DENIED for
 *    the other client's OPEN and for anonymous WRITE), BAD_SEQID, CLOSE;
 *  - NFSv4.1: EXCHANGE_ID + CREATE_SESSION, then one COMPOUND with SEQUENCE,
 *    OPEN (GUARDED4 create, WANT_NO_DELEG: OPEN_DELEGATE_NONE_EXT /
 *    WND4_NOT_WANTED), WRITE FILE_SYNC4 and READ through the current
 *    stateid, CLOSE (the invalid stateid back); TEST_STATEID of the closed
 *    one; GUARDED4 again: EXIST; SETATTR of size through a read-only open
 *    (OPENMODE) and a read-write one (truncated on the server);
 *  - NFSv4.0 byte-range locks: LOCK (new lock owner) granted, the other
 *    client's LOCK and LOCKT DENIED naming the holder, a local process's
 *    fcntl lock on the server sees the NFSv4 lock and vice versa (DENIED with
 *    clientid 0), LOCKU lets the other client in, RELEASE_LOCKOWNER;
 *  - lease expiry ([nfsv4] lease-time = 10): a client that stops renewing
 *    loses its deny reservation to another client and its stateid answers
 *    EXPIRED;
 *  - NFSv4.2 through a 4.2 session: SEEK on a sparse file (data, hole, the
 *    trailing hole's eof, NXIO), DEALLOCATE then SEEK finds the hole (and the
 *    server's lseek), ALLOCATE past the end grows the file, READ_PLUS returns
 *    a hole segment and the data, COPY of a whole file (cmp), INVAL past the
 *    source's end, CLONE NOTSUPP exactly when FICLONE fails on the host,
 *    OFFLOAD_STATUS BAD_STATEID; xattrs (RFC 8276) SETXATTR, GETXATTR,
 *    LISTXATTRS, REMOVEXATTR seen as user.* on the server's file; on the
 *    read-only export ALLOCATE, DEALLOCATE, SETXATTR and COPY are ROFS; open
 *    stateids: DEALLOCATE through a read-write open, OPENMODE through a
 *    read-only one, a stateid of no state refused;
 *  - the grace period (RFC 8881 §8.4.2, RFC 7530 §9.6.2): a 4.0 and a 4.1
 *    client open and lock a file, the daemon restarts with the same state
 *    directory and [nfsv4] grace-time = 5; in grace a new OPEN and LOCKT are
 *    GRACE, OPEN CLAIM_PREVIOUS and LOCK reclaim by both clients succeed
 *    (4.0: after SETCLIENTID/CONFIRM, with OPEN_CONFIRM), an unrecorded
 *    client's and a completed (RECLAIM_COMPLETE) client's reclaims are
 *    NO_GRACE; once grace-time is over new OPENs and LOCKT succeed and
 *    reclaims are NO_GRACE.
 */
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static struct hx_env env;
static uint32_t xid = 0x4e460000;

#define LEASE 10 /* [nfsv4] lease-time of the served daemon (its least) */

/* No [nfsv4] section: version 4 is served (issue 10: a default Linux mount gets 4.2). */
static void test_on_by_default(void)
{
	struct n4_client k;
	struct raw_reply r;
	struct xb a;

	hx_section("NFSv4 is on by default");
	if (hx_daemon_start(&env) != 0 || !CHECK(n4_connect(&k, env.port, 0) == 0, "connect"))
		return;
	CHECK(raw_call(&k.c, ++xid, RAW_NFS_PROG, 4, 0, NULL, 0, &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	      r.accept_stat == 0, "version 4 NULL answered");
	raw_reply_free(&r);
	n4_begin(&k, &a, 2); /* 4.0: no session needed (4.1+ would want SEQUENCE first) */
	xb_u32(&a, N4_PUTROOTFH);
	xb_u32(&a, N4_GETFH);
	CHECK_EQ(n4_call(&k, &a, &r), 0, "COMPOUND PUTROOTFH GETFH");
	CHECK_EQ(k.nres, 2, "two results");
	raw_reply_free(&r);
	n4_client_close(&k);
	hx_daemon_stop(&env);
}

/* "[nfsv4] enable = no" (the last section, so it wins): version 4 is not served. */
static void test_off_when_disabled(void)
{
	struct raw_conn c;
	struct raw_reply r;

	hx_section("[nfsv4] enable = no");
	if (!CHECK(hx_append_config(&env, "[nfsv4]\nenable = no\n") == 0, "config"))
		return;
	if (hx_daemon_start(&env) != 0 || !CHECK(raw_connect(&c, env.port) == 0, "connect"))
		return;
	CHECK(raw_call(&c, ++xid, RAW_NFS_PROG, 4, 0, NULL, 0, &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	      r.accept_stat == 2 && r.low == 3 && r.high == 3, "version 4 NULL: PROG_MISMATCH 3..3");
	raw_reply_free(&r);
	CHECK(raw_call(&c, ++xid, RAW_NFS_PROG, 3, 0, NULL, 0, &r) == RAW_RECV_OK && r.accept_stat == 0,
	      "version 3 NULL still answered");
	raw_reply_free(&r);
	raw_close(&c);
	hx_daemon_stop(&env);
}

/* PUTROOTFH, LOOKUP..., GETFH, GETATTR, READDIR on the export. */
static void test_walk(struct n4_client *c, uint8_t *fh, uint32_t *fh_len)
{
	uint32_t len, depth = n4_walk(NULL, env.export_dir) - 1, names = 0;
	struct raw_reply r;
	const uint8_t *p;
	struct xb a;
	bool found = false;

	hx_section("PUTROOTFH, LOOKUP to the export, GETFH, GETATTR, READDIR");
	n4_begin(c, &a, 1 + depth + 3);
	n4_walk(&a, env.export_dir);
	xb_u32(&a, N4_GETFH);
	xb_u32(&a, N4_GETATTR);
	xb_u32(&a, 1);
	xb_u32(&a, (1u << 1) | (1u << 20)); /* type, fileid */
	xb_u32(&a, N4_READDIR);
	xb_u64(&a, 0);
	xb_u64(&a, 0);
	xb_u32(&a, 8192);
	xb_u32(&a, 8192);
	xb_u32(&a, 0);
	CHECK_EQ(n4_call(c, &a, &r), 0, "COMPOUND status");
	CHECK_EQ(c->nres, 1 + depth + 3, "results");
	CHECK(n4_res(&r, N4_PUTROOTFH) == 0, "PUTROOTFH");
	for (uint32_t i = 0; i < depth; i++)
		CHECK(n4_res(&r, N4_LOOKUP) == 0, "LOOKUP %u", i);
	CHECK(n4_res(&r, N4_GETFH) == 0, "GETFH");
	p = xd_opaque(&r.body, fh_len, 128);
	if (p)
		memcpy(fh, p, *fh_len);
	CHECK(n4_res(&r, N4_GETATTR) == 0, "GETATTR");
	CHECK_EQ(xd_u32(&r.body), 3, "bitmap words");
	CHECK_EQ(xd_u32(&r.body), (1u << 1) | (1u << 20), "bitmap word 0");
	xd_u32(&r.body), xd_u32(&r.body);
	CHECK_EQ(xd_u32(&r.body), 12, "attrlist length");
	CHECK_EQ(xd_u32(&r.body), 2, "type NF4DIR");
	xd_u64(&r.body);
	CHECK(n4_res(&r, N4_READDIR) == 0, "READDIR");
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

static void test_handles_and_errors(struct n4_client *c, const uint8_t *fh, uint32_t fh_len)
{
	uint8_t v3fh[64];
	uint32_t v3len = 0, len;
	struct raw_reply r;
	const uint8_t *p;
	struct xb a;

	hx_section("READLINK, the NFSv3 handle, NOTSUPP, MINOR_VERS_MISMATCH, NFSv3 beside");
	n4_begin(c, &a, 3);
	xb_u32(&a, N4_PUTFH);
	xb_opaque(&a, fh, fh_len);
	xb_u32(&a, N4_LOOKUP);
	xb_string(&a, "link");
	xb_u32(&a, N4_READLINK);
	CHECK_EQ(n4_call(c, &a, &r), 0, "PUTFH LOOKUP READLINK");
	n4_res(&r, N4_PUTFH), n4_res(&r, N4_LOOKUP);
	CHECK(n4_res(&r, N4_READLINK) == 0, "READLINK");
	p = xd_opaque(&r.body, &len, 4096);
	CHECK(p && len == 5 && memcmp(p, "hello", 5) == 0, "the link's target");
	raw_reply_free(&r);

	CHECK_EQ(raw_mnt(&c->c, ++xid, env.export_dir, v3fh, &v3len), 0, "MNT");
	CHECK(v3len == fh_len && memcmp(v3fh, fh, fh_len) == 0, "NFSv3 and NFSv4 name the export's root alike");

	n4_begin(c, &a, 2);
	xb_u32(&a, N4_PUTFH);
	xb_opaque(&a, fh, fh_len);
	xb_u32(&a, N4_OPENATTR); /* OPEN is built now; named attributes never are */
	CHECK_EQ(n4_call(c, &a, &r), N4ERR_NOTSUPP, "OPENATTR: NOTSUPP");
	CHECK_EQ(c->nres, 2, "two results");
	raw_reply_free(&r);

	xb_init(&a);
	n4_hdr(&a, 9, 1);
	xb_u32(&a, N4_PUTROOTFH);
	CHECK_EQ(n4_call(c, &a, &r), N4ERR_MINOR_VERS_MISMATCH, "minor version 9");
	CHECK_EQ(c->nres, 0, "no results");
	raw_reply_free(&r);

	CHECK(raw_call(&c->c, ++xid, RAW_NFS_PROG, 3, 0, NULL, 0, &r) == RAW_RECV_OK && r.accept_stat == 0,
	      "NFSv3 NULL still served");
	raw_reply_free(&r);

	/* A truncated header: GARBAGE_ARGS; a truncated operation: BADXDR; one log line each. */
	static const uint8_t cut[6] = { 0, 0, 0, 8, 'a', 'b' };
	CHECK(raw_call(&c->c, ++xid, RAW_NFS_PROG, 4, 1, cut, sizeof(cut), &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	      r.accept_stat == 4, "truncated COMPOUND header: GARBAGE_ARGS");
	raw_reply_free(&r);
	n4_begin(c, &a, 1);
	xb_u32(&a, N4_PUTFH);
	xb_u32(&a, 200); /* a handle longer than NFS4_FHSIZE */
	CHECK_EQ(n4_call(c, &a, &r), 10036, "PUTFH with a 200-byte handle: NFS4ERR_BADXDR");
	raw_reply_free(&r);
	CHECK(hx_log_count(&env, "does not decode") >= 2, "logged");
}

/* ---- namespace and attribute operations ---- */

/* One COMPOUND on the directory fh: PUTFH, then the ops in ops (already encoded, n of them). */
static int on_dir(struct n4_client *c, const uint8_t *fh, uint32_t fh_len, const struct xb *ops, uint32_t n)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin(c, &a, 1 + n);
	xb_u32(&a, N4_PUTFH);
	xb_opaque(&a, fh, fh_len);
	xb_raw(&a, ops->p, ops->len);
	st = n4_call(c, &a, &r);
	raw_reply_free(&r);
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
	xb_u32(b, N4_CREATE);
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

static void test_mod_ops(struct n4_client *c, const uint8_t *fh, uint32_t fh_len)
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
	CHECK_EQ(ONE(c, fh, fh_len, op_create(b, 1, "nr", 0640)), N4ERR_BADTYPE, "CREATE NF4REG: BADTYPE");
	CHECK_EQ(ONE(c, fh, fh_len, op_create(b, 2, "", 0700)), N4ERR_INVAL, "CREATE of an empty name: INVAL");

	/* SETATTR mode + owner on nd; size of hello with the anonymous stateid. */
	xb_init(&v);
	xb_u32(&v, 0700);
	xb_string(&v, "1000");
	xb_init(&o);
	xb_u32(&o, N4_LOOKUP);
	xb_string(&o, "nd");
	xb_u32(&o, N4_SETATTR);
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
	xb_u32(&o, N4_SETATTR);
	xb_u32(&o, 0);
	xb_u64(&o, 0), xb_u32(&o, 0);
	fattr(&o, 0, W1(FATTR_OWNER), &v);
	CHECK_EQ(on_dir(c, fh, fh_len, &o, 1), N4ERR_BADOWNER, "SETATTR of an unknown owner: BADOWNER");
	xb_free(&o);
	xb_free(&v);

	/* RENAME nd -> nd2 (SAVEFH is the source directory), LINK hello -> hello2. */
	xb_init(&o);
	xb_u32(&o, N4_SAVEFH);
	xb_u32(&o, N4_RENAME);
	xb_string(&o, "nd");
	xb_string(&o, "nd2");
	CHECK_EQ(on_dir(c, fh, fh_len, &o, 2), 0, "RENAME");
	xb_free(&o);
	CHECK(stat(hx_xpath(&env, "nd2"), &st) == 0 && stat(hx_xpath(&env, "nd"), &st) != 0, "renamed on disk");
	CHECK_EQ(ONE(c, fh, fh_len, (xb_u32(b, N4_RENAME), xb_string(b, "nd2"), xb_string(b, "x"))),
		 N4ERR_NOFILEHANDLE, "RENAME without SAVEFH: NOFILEHANDLE");
	xb_init(&o);
	xb_u32(&o, N4_LOOKUP);
	xb_string(&o, "hello");
	xb_u32(&o, N4_SAVEFH);
	xb_u32(&o, N4_PUTFH);
	xb_opaque(&o, fh, fh_len);
	xb_u32(&o, N4_LINK);
	xb_string(&o, "hello2");
	CHECK_EQ(on_dir(c, fh, fh_len, &o, 4), 0, "LINK");
	xb_free(&o);
	CHECK(stat(hx_xpath(&env, "hello"), &st) == 0 && st.st_nlink == 2, "two links on disk");

	/* VERIFY / NVERIFY the directory's type. */
	xb_init(&v);
	xb_u32(&v, 2);
	CHECK_EQ(ONE(c, fh, fh_len, (xb_u32(b, N4_VERIFY), fattr(b, 1u << 1, 0, &v))), 0, "VERIFY type NF4DIR");
	CHECK_EQ(ONE(c, fh, fh_len, (xb_u32(b, N4_NVERIFY), fattr(b, 1u << 1, 0, &v))), N4ERR_SAME,
		 "NVERIFY type NF4DIR: SAME");
	xb_free(&v);

	/* REMOVE: a non-empty directory first. */
	hx_write_file(hx_xpath(&env, "nd2/inner"), "x", 1, 0644);
	CHECK_EQ(ONE(c, fh, fh_len, (xb_u32(b, N4_REMOVE), xb_string(b, "nd2"))), N4ERR_NOTEMPTY,
		 "REMOVE of a non-empty directory: NOTEMPTY");
	unlink(hx_xpath(&env, "nd2/inner"));
	static const char *const gone[] = { "nd2", "nl", "nf", "hello2" };
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ(ONE(c, fh, fh_len, (xb_u32(b, N4_REMOVE), xb_string(b, gone[i]))), 0, "REMOVE %s", gone[i]);
	CHECK(lstat(hx_xpath(&env, "nd2"), &st) != 0 && lstat(hx_xpath(&env, "nl"), &st) != 0, "removed on disk");

	/* The pseudo file system is read-only. */
	xb_init(&o);
	xb_u32(&o, N4_PUTROOTFH);
	op_create(&o, 2, "x", 0700);
	CHECK_EQ(on_dir(c, fh, fh_len, &o, 2), N4ERR_ROFS, "CREATE in the pseudo root: ROFS");
	xb_free(&o);
}

/* PUTROOTFH, LOOKUP to path, GETFH. */
static bool fh_of(struct n4_client *c, const char *path, uint8_t *fh, uint32_t *len)
{
	uint32_t depth = n4_walk(NULL, path) - 1;
	struct raw_reply r;
	const uint8_t *p = NULL;
	struct xb a;
	bool ok;

	n4_begin(c, &a, 2 + depth);
	n4_walk(&a, path);
	xb_u32(&a, N4_GETFH);
	ok = n4_call(c, &a, &r) == 0;
	for (uint32_t i = 0; ok && i < 1 + depth; i++)
		ok = n4_res(&r, i ? N4_LOOKUP : N4_PUTROOTFH) == 0;
	ok = ok && n4_res(&r, N4_GETFH) == 0 && (p = xd_opaque(&r.body, len, 128)) != NULL;
	if (ok)
		memcpy(fh, p, *len);
	raw_reply_free(&r);
	return ok;
}

/* ---- state and I/O ---- */

/* SETCLIENTID + SETCLIENTID_CONFIRM on c's connection: the clientid (0 on failure). */
static uint64_t client40(struct n4_client *c, const char *id)
{
	uint8_t confirm[8] = { 0 };
	struct n4_client k;

	n4_share(&k, &c->c, 0);
	memcpy(k.verifier, "verifier", 8);
	snprintf(k.cb_addr, sizeof(k.cb_addr), "127.0.0.1.3.232");
	CHECK_EQ(n4_setclientid(&k, id, confirm), 0, "SETCLIENTID %s", id);
	if (!CHECK_EQ(n4_setclientid_confirm(&k, confirm), 0, "SETCLIENTID_CONFIRM %s", id))
		return 0;
	return k.cid;
}

/* OPEN4args; create: 1 UNCHECKED4 (2 GUARDED4) with mode 0644; 3 UNCHECKED4 with mode 0644 and size 4, 4 with size 0. */
static void xb_open(struct xb *a, uint32_t seqid, uint32_t access, uint32_t deny, uint64_t cid, const char *owner,
		    int create, const char *name)
{
	struct n4_openargs o = {
		.seqid = seqid, .access = access, .deny = deny, .cid = cid, .owner = owner,
		.create = create == 0 ? N4_NOCREATE : create == 2 ? N4_GUARDED : N4_UNCHECKED,
		.with_size = create >= 3, .size = create == 3 ? 4 : 0, .name = name,
	};

	n4_xb_openargs(a, &o);
}

/* PUTFH dir, OPEN, GETFH: the status, the open's result and the file's handle. */
static int open40(struct n4_client *c, const uint8_t *dir, uint32_t dir_len, uint32_t seqid, uint32_t access,
		  uint32_t deny, uint64_t cid, const char *owner, int create, const char *name, struct n4_openres *o,
		  uint8_t *fh, uint32_t *fh_len)
{
	struct raw_reply r;
	const uint8_t *p;
	struct xb a;
	int st;

	n4_begin_fh(c, &a, 3, dir, dir_len);
	xb_open(&a, seqid, access, deny, cid, owner, create, name);
	xb_u32(&a, N4_GETFH);
	st = n4_call(c, &a, &r);
	if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_OPEN) == 0) {
		n4_xd_openres(&r.body, o);
		n4_res(&r, N4_GETFH);
		p = xd_opaque(&r.body, fh_len, 128);
		if (p)
			memcpy(fh, p, *fh_len);
	}
	raw_reply_free(&r);
	return st;
}

/* OPEN_CONFIRM or CLOSE of in with seqid: the status, the stateid back in *out (in kept for a replay). */
static int sid_op40(struct n4_client *c, uint32_t op, const uint8_t *fh, uint32_t fh_len, uint32_t seqid,
		    const struct n4_sid *in, struct n4_sid *out)
{
	*out = *in;
	if (op == N4_CLOSE)
		return n4_close(c, fh, fh_len, &seqid, out);
	return n4_open_confirm(c, fh, fh_len, &seqid, out);
}

/* WRITE (UNSTABLE4) + COMMIT of "hello nfs4" with s2: their verifiers agree. */
static void write_commit40(struct n4_client *c, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *s2)
{
	uint8_t verf_w[8] = { 0 }, verf_c[8] = { 1 };
	struct raw_reply r;
	struct xb a;

	n4_begin_fh(c, &a, 3, fh, fh_len);
	xb_u32(&a, N4_WRITE);
	n4_xb_sid(&a, s2);
	xb_u64(&a, 0);
	xb_u32(&a, 0); /* UNSTABLE4 */
	xb_opaque(&a, "hello nfs4", 10);
	xb_u32(&a, N4_COMMIT);
	xb_u64(&a, 0);
	xb_u32(&a, 0);
	CHECK_EQ(n4_call(c, &a, &r), 0, "WRITE + COMMIT");
	if (n4_res(&r, N4_PUTFH) == 0 && CHECK(n4_res(&r, N4_WRITE) == 0, "WRITE")) {
		CHECK_EQ(xd_u32(&r.body), 10, "count");
		CHECK_EQ(xd_u32(&r.body), 0, "committed UNSTABLE4");
		if (r.body.pos + 8 <= r.body.len)
			memcpy(verf_w, r.body.p + r.body.pos, 8);
		xd_skip(&r.body, 8);
		if (CHECK(n4_res(&r, N4_COMMIT) == 0, "COMMIT") && r.body.pos + 8 <= r.body.len)
			memcpy(verf_c, r.body.p + r.body.pos, 8);
		CHECK(memcmp(verf_w, verf_c, 8) == 0, "WRITE and COMMIT verifiers agree");
	}
	raw_reply_free(&r);
}

/* RFC 7530 §16.16.5: UNCHECKED4 of an existing file ignores its createattrs but a size of zero (a
 * truncation, as knfsd; pynfs OPEN2). */
static void unchecked40(struct n4_client *c, const uint8_t *root, uint32_t root_len, uint64_t ca)
{
	struct n4_openres o2;
	struct stat sb;
	uint8_t tfh[128];
	uint32_t tfh_len = 0;
	FILE *f;

	CHECK_EQ(open40(c, root, root_len, 1, 3, 0, ca, "owner-t", 1, "f40t", &o2, tfh, &tfh_len), 0,
		 "OPEN create f40t");
	f = fopen(hx_xpath(&env, "f40t"), "w");
	CHECK(f && fwrite("0123456789", 1, 10, f) == 10, "ten bytes in f40t");
	if (f)
		fclose(f);
	CHECK_EQ(open40(c, root, root_len, 2, 3, 0, ca, "owner-t", 3, "f40t", &o2, tfh, &tfh_len), 0,
		 "OPEN UNCHECKED4 size 4 of the existing f40t");
	CHECK(stat(hx_xpath(&env, "f40t"), &sb) == 0 && sb.st_size == 10, "a non-zero size is ignored");
	CHECK_EQ(open40(c, root, root_len, 3, 3, 0, ca, "owner-t", 4, "f40t", &o2, tfh, &tfh_len), 0,
		 "OPEN UNCHECKED4 size 0 of the existing f40t");
	CHECK(stat(hx_xpath(&env, "f40t"), &sb) == 0 && sb.st_size == 0, "size 0 truncates");
}

/* Share reservations between two clients (RFC 8881 §9.7). */
static void share40(struct n4_client *c, const uint8_t *root, uint32_t root_len, uint64_t ca, uint64_t cb)
{
	uint8_t fh2[128];
	uint32_t fh2_len = 0;
	struct n4_openres o, o2;
	struct n4_sid bad;

	CHECK_EQ(open40(c, root, root_len, 3, 1, 2, ca, "owner-a", 1, "deny", &o, fh2, &fh2_len), 0,
		 "client A: OPEN read, deny write");
	CHECK_EQ(o.rflags, 4, "owner-a is confirmed: no CONFIRM");
	{
		uint8_t fh3[128];
		uint32_t fh3_len = 0;
		CHECK_EQ(open40(c, root, root_len, 3, 1, 2, ca, "owner-a", 1, "deny", &o2, fh3, &fh3_len), 0,
			 "client A: the same OPEN again (seqid 3): replayed");
		CHECK(memcmp(&o2.sid, &o.sid, sizeof(o.sid)) == 0, "the replay has the same stateid");
		CHECK(fh3_len == fh2_len && memcmp(fh3, fh2, fh2_len) == 0, "and leaves the file as current filehandle");
	}
	CHECK_EQ(open40(c, root, root_len, 1, 2, 0, cb, "owner-b", 0, "deny", &o2, fh2, &fh2_len),
		 N4ERR_SHARE_DENIED, "client B: OPEN write: SHARE_DENIED");
	CHECK_EQ(open40(c, root, root_len, 2, 1, 0, cb, "owner-b", 0, "deny", &o2, fh2, &fh2_len), 0,
		 "client B: OPEN read: allowed");
	memset(&bad, 0, sizeof(bad));
	CHECK_EQ(n4_write(c, fh2, fh2_len, &bad, 0, "x", 1), N4ERR_LOCKED,
		 "anonymous WRITE against the deny: LOCKED (RFC 7530 §9.9)");
	CHECK_EQ(open40(c, root, root_len, 9, 1, 0, ca, "owner-a", 0, "deny", &o2, fh2, &fh2_len), N4ERR_BAD_SEQID,
		 "owner-a's seqid 9 after 3: BAD_SEQID");
}

static void test_state40(struct n4_client *c, const uint8_t *root, uint32_t root_len)
{
	uint8_t fh[128], fh2[128];
	uint32_t fh_len = 0, fh2_len = 0, len, eof;
	struct n4_openres o;
	struct n4_sid s2, s3, bad;
	char buf[64];
	uint64_t ca, cb;

	hx_section("NFSv4.0: SETCLIENTID, OPEN, OPEN_CONFIRM, WRITE, COMMIT, READ, stateids, share deny, CLOSE");
	ca = client40(c, "it-client-a");
	cb = client40(c, "it-client-b");
	CHECK(ca && cb && ca != cb, "two client ids");
	CHECK_EQ(open40(c, root, root_len, 1, 3, 0, ca, "owner-a", 1, "f40", &o, fh, &fh_len), 0, "OPEN create f40");
	CHECK_EQ(o.rflags, 2 | 4, "rflags CONFIRM | LOCKTYPE_POSIX");
	CHECK_EQ(o.deleg, 0, "OPEN_DELEGATE_NONE");
	CHECK_EQ(o.sid.seqid, 1, "stateid seqid 1");
	CHECK_EQ(n4_read(c, fh, fh_len, &o.sid, 0, sizeof(buf), buf, &len), N4ERR_BAD_STATEID,
		 "READ before OPEN_CONFIRM: BAD_STATEID");
	CHECK_EQ(sid_op40(c, N4_OPEN_CONFIRM, fh, fh_len, 2, &o.sid, &s2), 0, "OPEN_CONFIRM");
	CHECK_EQ(s2.seqid, 2, "confirmed stateid seqid 2");
	CHECK_EQ(sid_op40(c, N4_OPEN_CONFIRM, fh, fh_len, 2, &o.sid, &s3), 0, "OPEN_CONFIRM again: replayed");
	CHECK(memcmp(&s2, &s3, sizeof(s2)) == 0, "the replay is the same reply");

	write_commit40(c, fh, fh_len, &s2);
	CHECK_EQ(n4_read(c, fh, fh_len, &s2, 0, sizeof(buf), buf, &len), 0, "READ");
	CHECK(len == 10 && memcmp(buf, "hello nfs4", 10) == 0, "READ gives what WRITE wrote");
	/* Another user with the stateid of root's 0644 file: ACCESS (RFC 7530 §9.1.4; pynfs WRT19). */
	c->uid = 3912, c->gid = 2422;
	CHECK_EQ(n4_write(c, fh, fh_len, &s2, 0, "xx", 2), N4ERR_ACCESS, "WRITE with a stolen stateid: ACCESS");
	c->uid = 0, c->gid = 0;
	{
		char disk[32] = { 0 };
		FILE *f = fopen(hx_xpath(&env, "f40"), "r");
		size_t got = f ? fread(disk, 1, sizeof(disk), f) : 0;
		if (f)
			fclose(f);
		CHECK(got == 10 && memcmp(disk, "hello nfs4", 10) == 0, "the file on the server");
	}
	unchecked40(c, root, root_len, ca);
	bad = s2;
	bad.seqid = 1;
	CHECK_EQ(n4_read(c, fh, fh_len, &bad, 0, sizeof(buf), buf, &len), N4ERR_OLD_STATEID, "old seqid: OLD_STATEID");
	bad = s2;
	bad.other[11] ^= 0x55;
	CHECK_EQ(n4_read(c, fh, fh_len, &bad, 0, sizeof(buf), buf, &len), N4ERR_BAD_STATEID, "unknown: BAD_STATEID");
	bad = s2;
	bad.other[0] ^= 0x55;
	CHECK_EQ(n4_read(c, fh, fh_len, &bad, 0, sizeof(buf), buf, &len), N4ERR_STALE_STATEID,
		 "another boot: STALE_STATEID");
	memset(&bad, 0, sizeof(bad));
	CHECK_EQ(n4_read(c, fh, fh_len, &bad, 0, sizeof(buf), buf, &len), 0, "anonymous stateid READ");
	CHECK(len == 10, "anonymous READ's data");
	/* RFC 8881 §18.22.3: beyond the end, even beyond any off_t: no data, eof (pynfs RD5a). */
	CHECK_EQ(n4_read(c, fh, fh_len, &bad, 0x7ffffffffffffffcull, 10, buf, &len), 0, "READ at offset 2^63 - 4");
	eof = c->read_eof;
	CHECK(len == 0 && eof == 1, "no data, eof (%u bytes, eof %u)", len, eof);
	/* 4.0 OPEN of a FIFO: N4ERR_SYMLINK (4.0 has no WRONG_TYPE; as knfsd, pynfs OPEN7f). */
	CHECK(mkfifo(hx_xpath(&env, "fifo40"), 0666) == 0, "mkfifo fifo40 on disk");
	CHECK_EQ(open40(c, root, root_len, 1, 1, 0, ca, "owner-fifo", 0, "fifo40", &o, fh2, &fh2_len), 10029,
		 "OPEN of a FIFO (4.0): SYMLINK");

	share40(c, root, root_len, ca, cb);
	CHECK_EQ(sid_op40(c, N4_CLOSE, fh, fh_len, 4, &s2, &s3), 0, "CLOSE");
	CHECK_EQ(s3.seqid, 3, "CLOSE's stateid seqid + 1");
	CHECK_EQ(n4_read(c, fh, fh_len, &s2, 0, sizeof(buf), buf, &len), N4ERR_BAD_STATEID,
		 "READ after CLOSE: BAD_STATEID");
}


/* The minor version of the sessions session41_sized() makes (4.2: test_v42). */
static uint32_t sess_minor = 1;

/* A session client k on c's connection: EXCHANGE_ID + CREATE_SESSION asking
 * for these fore channel request and response sizes. */
static void session41_sized(struct n4_client *c, const char *id, uint32_t maxreq, uint32_t maxresp,
			    struct n4_client *k)
{
	uint32_t seq = 0;

	n4_share(k, &c->c, sess_minor);
	memcpy(k->verifier, "verif41!", 8);
	k->max_req = maxreq;
	k->max_resp = maxresp;
	CHECK_EQ(n4_exchange_id(k, id, &seq), 0, "EXCHANGE_ID");
	CHECK_EQ(n4_create_session(k, seq), 0, "CREATE_SESSION");
}

static void session41_as(struct n4_client *c, const char *id, struct n4_client *k)
{
	session41_sized(c, id, 1 << 20, 1 << 20, k);
}

static void session41(struct n4_client *c, struct n4_client *k)
{
	session41_as(c, "it-client-41", k);
}

/* SEQUENCE (slot 0, sequence seq) + PUTROOTFH, then LOOKUP of a name of name_len bytes or ngetattr GETATTRs. */
static uint32_t limits_compound(struct n4_client *k, uint32_t seq, uint32_t name_len, uint32_t ngetattr)
{
	char name[600];
	struct raw_reply r;
	uint32_t status;
	struct xb a;

	memset(name, 'n', sizeof(name));
	k->slot_seq = seq - 1;
	n4_begin(k, &a, 1 + (name_len ? 1 : ngetattr));
	xb_u32(&a, N4_PUTROOTFH);
	if (name_len) {
		xb_u32(&a, N4_LOOKUP);
		xb_opaque(&a, name, name_len);
	}
	for (uint32_t i = 0; !name_len && i < ngetattr; i++) {
		xb_u32(&a, N4_GETATTR);
		xb_u32(&a, 2);
		xb_u32(&a, 0xffffffffu); /* every attribute of words 0 and 1 */
		xb_u32(&a, ~(1u << 16 | 1u << 22)); /* but time_access_set, time_modify_set: write-only */
	}
	int st = n4_call(k, &a, &r);
	status = st < 0 ? UINT32_MAX : (uint32_t)st;
	raw_reply_free(&r);
	return status;
}

/* RFC 8881 §2.10.6.4 and §18.36.3: the session's size limits. */
static void test_session_limits(struct n4_client *c)
{
	struct n4_client k;

	hx_section("NFSv4.1: ca_maxrequestsize and ca_maxresponsesize of a session");
	session41_sized(c, "it-client-41-limits", 512, 400, &k);
	CHECK_EQ(limits_compound(&k, 1, 500, 0), N4ERR_REQ_TOO_BIG,
		 "a request over ca_maxrequestsize 512: REQ_TOO_BIG");
	/* Refused before the slot was taken: sequence 1 is still the next one. */
	CHECK_EQ(limits_compound(&k, 1, 0, 1), 0, "then slot 0 sequence 1 runs (the slot untouched)");
	/* 400 is kept, not raised to 1024 (pynfs CSESS26): two full GETATTRs fit 1024, not 400. */
	CHECK_EQ(limits_compound(&k, 2, 0, 2), N4ERR_REP_TOO_BIG,
		 "a reply over ca_maxresponsesize 400: REP_TOO_BIG");
	/* The same COMPOUND on a session of 1024 bytes runs: the limit was 400. */
	session41_sized(c, "it-client-41-limits2", 512, 1024, &k);
	CHECK_EQ(limits_compound(&k, 1, 0, 2), 0, "the same two GETATTRs fit ca_maxresponsesize 1024");
}

/* RECLAIM_COMPLETE, then OPEN "f41" (GUARDED4), WRITE, READ and CLOSE through the current stateid in
 * one COMPOUND: the open stateid (closed by then). */
static struct n4_sid open_write_read41(struct n4_client *k, const uint8_t *root, uint32_t root_len, uint64_t cid)
{
	static const struct n4_sid current = { .seqid = 1 };
	struct n4_openres o;
	struct raw_reply r;
	const uint8_t *p;
	uint32_t len;
	struct xb a;

	memset(&o, 0, sizeof(o));
	n4_begin(k, &a, 7);
	xb_u32(&a, N4_RECLAIM_COMPLETE);
	xb_u32(&a, 0); /* rca_one_fs FALSE */
	n4_xb_putfh(&a, root, root_len);
	xb_open(&a, 0, 3 | 0x0400, 0, cid, "owner41", 2, "f41"); /* BOTH | WANT_NO_DELEG, GUARDED4 */
	xb_u32(&a, N4_GETFH);
	xb_u32(&a, N4_WRITE);
	n4_xb_sid(&a, &current);
	xb_u64(&a, 0);
	xb_u32(&a, 2); /* FILE_SYNC4 */
	xb_opaque(&a, "four-one", 8);
	xb_u32(&a, N4_READ);
	n4_xb_sid(&a, &current);
	xb_u64(&a, 0);
	xb_u32(&a, 64);
	xb_u32(&a, N4_CLOSE);
	xb_u32(&a, 0);
	n4_xb_sid(&a, &current);
	CHECK_EQ(n4_call(k, &a, &r), 0, "SEQUENCE RECLAIM_COMPLETE PUTFH OPEN GETFH WRITE READ CLOSE");
	CHECK_EQ(k->nres, 8, "eight results");
	n4_res(&r, N4_RECLAIM_COMPLETE);
	n4_res(&r, N4_PUTFH);
	if (CHECK(n4_res(&r, N4_OPEN) == 0, "OPEN")) {
		n4_xd_openres(&r.body, &o);
		/* RFC 8881 §18.16.4: 4.1 OPEN says the server may send CB_NOTIFY_LOCK (0x20). */
		CHECK_EQ(o.rflags, 0x24, "rflags LOCKTYPE_POSIX | MAY_NOTIFY_LOCK (no CONFIRM in 4.1)");
		CHECK(o.deleg == 3 && o.why == 0, "OPEN_DELEGATE_NONE_EXT, WND4_NOT_WANTED");
	}
	n4_res(&r, N4_GETFH);
	xd_opaque(&r.body, &len, 128);
	if (CHECK(n4_res(&r, N4_WRITE) == 0, "WRITE with the current stateid")) {
		CHECK_EQ(xd_u32(&r.body), 8, "count");
		CHECK_EQ(xd_u32(&r.body), 2, "committed FILE_SYNC4");
		xd_skip(&r.body, 8);
	}
	if (CHECK(n4_res(&r, N4_READ) == 0, "READ with the current stateid")) {
		CHECK_EQ(xd_u32(&r.body), 1, "eof");
		p = xd_opaque(&r.body, &len, 64);
		CHECK(p && len == 8 && memcmp(p, "four-one", 8) == 0, "READ's data");
	}
	if (CHECK(n4_res(&r, N4_CLOSE) == 0, "CLOSE")) {
		struct n4_sid inval;
		n4_xd_sid(&r.body, &inval);
		CHECK(inval.seqid == UINT32_MAX && inval.other[0] == 0 && inval.other[11] == 0,
		      "CLOSE returns the invalid stateid");
	}
	raw_reply_free(&r);
	return o.sid;
}

static void current_sid41(struct n4_client *k, const uint8_t *root, uint32_t root_len, uint64_t cid)
{
	static const struct n4_sid current = { .seqid = 1 };
	struct raw_reply r;
	struct xb a;

	/* RFC 8881 §16.2.3.1.2: PUTFH leaves no current stateid (pynfs CSID5): OPEN, PUTFH, CLOSE(current). */
	n4_begin_fh(k, &a, 4, root, root_len);
	xb_open(&a, 0, 1, 0, cid, "owner41c", 0, "f41");
	n4_xb_putfh(&a, root, root_len);
	xb_u32(&a, N4_CLOSE);
	xb_u32(&a, 0);
	n4_xb_sid(&a, &current);
	CHECK_EQ(n4_call(k, &a, &r), N4ERR_BAD_STATEID, "OPEN PUTFH CLOSE(current stateid): BAD_STATEID");
	raw_reply_free(&r);
	/* ... while SAVEFH keeps it with the filehandle for RESTOREFH (pynfs CSID10). */
	n4_begin_fh(k, &a, 6, root, root_len);
	xb_open(&a, 0, 1, 0, cid, "owner41s", 0, "f41");
	xb_u32(&a, N4_SAVEFH);
	n4_xb_putfh(&a, root, root_len);
	xb_u32(&a, N4_RESTOREFH);
	xb_u32(&a, N4_CLOSE);
	xb_u32(&a, 0);
	n4_xb_sid(&a, &current);
	CHECK_EQ(n4_call(k, &a, &r), 0, "OPEN SAVEFH PUTFH RESTOREFH CLOSE(current stateid): OK");
	raw_reply_free(&r);
}

static void test_state41(struct n4_client *c, const uint8_t *root, uint32_t root_len)
{
	static const struct n4_sid current = { .seqid = 1 };
	struct n4_client k;
	struct raw_reply r;
	struct n4_sid closed;
	struct xb a;
	uint64_t cid;

	hx_section("NFSv4.1: SEQUENCE, OPEN, WRITE and READ through the current stateid, CLOSE, TEST_STATEID");
	session41(c, &k);
	cid = k.cid;
	/* RFC 8881 §18.51.3: no OPEN before the client's RECLAIM_COMPLETE (GRACE); then it may. */
	n4_begin_fh(&k, &a, 2, root, root_len);
	xb_open(&a, 0, 3 | 0x0400, 0, cid, "owner41", 2, "f41");
	CHECK_EQ(n4_call(&k, &a, &r), 10013, "OPEN before RECLAIM_COMPLETE: NFS4ERR_GRACE");
	raw_reply_free(&r);
	closed = open_write_read41(&k, root, root_len, cid);

	n4_begin(&k, &a, 1);
	xb_u32(&a, N4_TEST_STATEID);
	xb_u32(&a, 1);
	n4_xb_sid(&a, &closed);
	CHECK_EQ(n4_call(&k, &a, &r), 0, "TEST_STATEID");
	if (CHECK(n4_res(&r, N4_TEST_STATEID) == 0, "TEST_STATEID result")) {
		CHECK_EQ(xd_u32(&r.body), 1, "one status");
		CHECK_EQ(xd_u32(&r.body), N4ERR_BAD_STATEID, "the closed stateid: BAD_STATEID");
	}
	raw_reply_free(&r);

	n4_begin_fh(&k, &a, 2, root, root_len);
	xb_open(&a, 0, 1, 0, cid, "owner41", 2, "f41");
	CHECK_EQ(n4_call(&k, &a, &r), N4ERR_EXIST, "GUARDED4 of an existing file: EXIST");
	raw_reply_free(&r);

	/* SETATTR of size with open state: a read-only open is OPENMODE, a read-write one truncates. */
	for (int rw = 0; rw < 2; rw++) {
		n4_begin(&k, &a, 3); /* sequence 5 + rw */
		n4_xb_putfh(&a, root, root_len);
		xb_open(&a, 0, rw ? 3 : 1, 0, cid, rw ? "owner41w" : "owner41r", 0, "f41");
		xb_u32(&a, N4_SETATTR);
		n4_xb_sid(&a, &current);
		xb_u32(&a, 1);
		xb_u32(&a, 1u << 4); /* size */
		xb_u32(&a, 8);
		xb_u64(&a, 2);
		CHECK_EQ(n4_call(&k, &a, &r), rw ? 0 : N4ERR_OPENMODE,
			 rw ? "SETATTR size through a read-write open" : "SETATTR size through a read-only open: OPENMODE");
		raw_reply_free(&r);
		}
	{
		struct stat st;
		CHECK(stat(hx_xpath(&env, "f41"), &st) == 0 && st.st_size == 2, "f41 truncated to 2 bytes");
	}
	current_sid41(&k, root, root_len, cid);
}


/* LOCK4args: a new lock owner (from the open stateid in) or an existing lock stateid in. */
static void xb_lock(struct xb *a, uint32_t type, bool reclaim, uint64_t off, uint64_t len, bool new_owner,
		    uint32_t open_seqid, const struct n4_sid *in, uint32_t lock_seqid, uint64_t cid, const char *owner)
{
	struct n4_lockargs l = { .type = type, .reclaim = reclaim, .off = off, .len = len, .new_owner = new_owner,
				 .open_seqid = open_seqid, .sid = in, .lock_seqid = lock_seqid, .cid = cid,
				 .owner = owner };

	n4_xb_lockargs(a, &l);
}

/* PUTFH fh, LOCK (new lock owner from open sid, or existing lock stateid): the status; *out or the holder. */
static int lock40(struct n4_client *c, const uint8_t *fh, uint32_t fh_len, uint32_t type, uint64_t off, uint64_t len,
		  bool new_owner, uint32_t open_seqid, const struct n4_sid *in, uint32_t lock_seqid, uint64_t cid,
		  const char *owner, struct n4_sid *out, uint64_t *holder_cid, char *holder, uint32_t cap)
{
	struct raw_reply r;
	const uint8_t *p;
	uint32_t hl;
	struct xb a;
	int st;

	n4_begin_fh(c, &a, 2, fh, fh_len);
	xb_lock(&a, type, false, off, len, new_owner, open_seqid, in, lock_seqid, cid, owner);
	st = n4_call(c, &a, &r);
	n4_res(&r, N4_PUTFH);
	xd_u32(&r.body), xd_u32(&r.body); /* LOCK, status */
	if (st == 0) {
		n4_xd_sid(&r.body, out);
	} else if (st == N4ERR_DENIED && holder) {
		xd_u64(&r.body), xd_u64(&r.body), xd_u32(&r.body);
		*holder_cid = xd_u64(&r.body);
		p = xd_opaque(&r.body, &hl, 1024);
		snprintf(holder, cap, "%.*s", p ? (int)hl : 0, p ? (const char *)p : "");
	}
	raw_reply_free(&r);
	return st;
}

/* A child process holds a write lock on path's [0, 100) (fcntl) until it is killed. */
static pid_t local_lock(const char *path)
{
	int pipefd[2];
	pid_t pid;
	char ok = 0;

	if (pipe(pipefd) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100 };
		int fd = open(path, O_RDWR);
		char res = fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0;
		if (write(pipefd[1], &res, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (pid < 0 || read(pipefd[0], &ok, 1) != 1 || !ok) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		pid = -1;
	}
	close(pipefd[0]);
	close(pipefd[1]);
	return pid;
}

static void test_locks40(struct n4_client *c, const uint8_t *root, uint32_t root_len)
{
	uint8_t fh[128];
	uint32_t fh_len = 0;
	struct n4_openres oa, ob;
	struct n4_sid sa, sb, la, lb, tmp;
	struct n4_client kb;
	char holder[64] = "";
	uint64_t ca, cb, hcid = 99;
	pid_t pid;

	hx_section("NFSv4.0 byte-range locks between two clients and a local process");
	ca = client40(c, "it-lock-a");
	cb = client40(c, "it-lock-b");
	CHECK_EQ(open40(c, root, root_len, 1, 3, 0, ca, "lo-open-a", 1, "locked", &oa, fh, &fh_len), 0, "A: OPEN");
	CHECK_EQ(sid_op40(c, N4_OPEN_CONFIRM, fh, fh_len, 2, &oa.sid, &sa), 0, "A: OPEN_CONFIRM");
	CHECK_EQ(open40(c, root, root_len, 1, 3, 0, cb, "lo-open-b", 0, "locked", &ob, fh, &fh_len), 0, "B: OPEN");
	CHECK_EQ(sid_op40(c, N4_OPEN_CONFIRM, fh, fh_len, 2, &ob.sid, &sb), 0, "B: OPEN_CONFIRM");
	CHECK_EQ(lock40(c, fh, fh_len, 2, 0, 100, true, 3, &sa, 0, ca, "lock-a", &la, NULL, NULL, 0), 0,
		 "A: LOCK [0, 100) write (new lock owner)");
	CHECK_EQ(la.seqid, 1, "lock stateid seqid 1");
	CHECK_EQ(lock40(c, fh, fh_len, 2, 50, 10, true, 3, &sb, 0, cb, "lock-b", &lb, &hcid, holder, sizeof(holder)),
		 N4ERR_DENIED, "B: LOCK [50, 60): DENIED");
	CHECK(hcid == ca && strcmp(holder, "lock-a") == 0, "DENIED names A's lock owner (%s)", holder);
	n4_share(&kb, &c->c, 0);
	kb.cid = cb;
	CHECK_EQ(n4_lockt(&kb, fh, fh_len, N4_READ_LT, 99, UINT64_MAX, "lock-b"), N4ERR_DENIED,
		 "B: LOCKT read [99, EOF): DENIED");
	pid = local_lock(hx_xpath(&env, "locked"));
	CHECK(pid < 0, "a local process cannot take [0, 100) while A holds it");
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	/* A unlocks: B gets it (B's open owner seqid 3 went to the DENIED LOCK, so 4 now). */
	CHECK_EQ(n4_locku(c, fh, fh_len, &la, &(uint32_t){ 1 }, 0, 100), 0, "A: LOCKU");
	CHECK_EQ(la.seqid, 2, "LOCKU's stateid seqid 2");
	CHECK_EQ(lock40(c, fh, fh_len, 2, 50, 10, true, 4, &sb, 0, cb, "lock-b", &lb, NULL, NULL, 0), 0,
		 "B: LOCK [50, 60) after A's LOCKU");
	pid = local_lock(hx_xpath(&env, "locked"));
	CHECK(pid < 0, "a local process cannot take [0, 100) while B holds [50, 60)");
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	/* RFC 7530 §16.37.4: not while the owner holds a lock (pynfs RLOWN3); after its LOCKU, yes. */
	for (int held = 1; held >= 0; held--) {
		CHECK_EQ(n4_release_lockowner(&kb, "lock-b"), held ? N4ERR_LOCKS_HELD : 0, "B: RELEASE_LOCKOWNER %s",
			 held ? "holding [50, 60): LOCKS_HELD" : "after LOCKU");
		if (!held)
			break;
		CHECK_EQ(n4_locku(c, fh, fh_len, &lb, &(uint32_t){ 1 }, 50, 10), 0, "B: LOCKU [50, 60)");
	}
	/* Now a local process takes the range, and NFSv4 sees it. */
	pid = local_lock(hx_xpath(&env, "locked"));
	if (CHECK(pid > 0, "a local process locks [0, 100) once B released its owner")) {
		hcid = 99;
		CHECK_EQ(lock40(c, fh, fh_len, 2, 10, 1, false, 0, &la, 2, ca, "lock-a", &tmp, &hcid, holder,
				sizeof(holder)),
			 N4ERR_DENIED, "A: LOCK against the local process: DENIED");
		CHECK(hcid == 0 && holder[0] == '\0', "the holder is not an NFSv4 owner (clientid 0)");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* A client that stops renewing loses its state to another (RFC 8881 §8.3). */
static void test_lease_expiry(struct n4_client *c, const uint8_t *root, uint32_t root_len)
{
	uint8_t fh[128];
	uint32_t fh_len = 0, len;
	struct n4_openres o, o2;
	struct n4_sid s2;
	char buf[16];
	uint64_t cc, cd;

	hx_section("lease expiry ([nfsv4] lease-time = %d)", LEASE);
	cc = client40(c, "it-client-c");
	CHECK_EQ(open40(c, root, root_len, 1, 3, 3, cc, "owner-c", 1, "leased", &o, fh, &fh_len), 0,
		 "client C: OPEN deny both");
	CHECK_EQ(sid_op40(c, N4_OPEN_CONFIRM, fh, fh_len, 2, &o.sid, &s2), 0, "OPEN_CONFIRM");
	cd = client40(c, "it-client-d");
	CHECK_EQ(open40(c, root, root_len, 1, 2, 0, cd, "owner-d", 0, "leased", &o2, fh, &fh_len),
		 N4ERR_SHARE_DENIED, "client D: SHARE_DENIED while C's lease runs");
	sleep(LEASE + 2);
	/* Client D renews (and runs the expiry); C has not. */
	cd = client40(c, "it-client-d");
	CHECK_EQ(open40(c, root, root_len, 2, 2, 0, cd, "owner-d", 0, "leased", &o2, fh, &fh_len), 0,
		 "client D: OPEN write once C's lease expired");
	CHECK_EQ(n4_read(c, fh, fh_len, &s2, 0, sizeof(buf), buf, &len), N4ERR_EXPIRED,
		 "client C's stateid: EXPIRED");
}

/* ---- the grace period: reclaims after a restart ---- */

#define GRACE_TIME 5 /* [nfsv4] grace-time of the restarted daemon */

/*
 * SEQUENCE, PUTFH fh, one operation (ops): the COMPOUND's status; on NFS4_OK
 * r->body is at the operation's result body (r freed by the caller).
 */
static int seq41(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct xb *ops,
		 struct raw_reply *r)
{
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_raw(&a, ops->p, ops->len);
	st = n4_call(k, &a, r);
	if (st == 0) {
		n4_res(r, N4_PUTFH);
		xd_u32(&r->body), xd_u32(&r->body); /* the operation, its status */
	}
	return st;
}

/* The same with the reply dropped: the status only. */
#define SEQ41(k, fh, len, stmt) ({ struct xb o_; struct raw_reply r_; xb_init(&o_); \
	{ struct xb *b = &o_; stmt; } int st_ = seq41(k, fh, len, &o_, &r_); raw_reply_free(&r_); \
	xb_free(&o_); st_; })

/* OPEN4args with CLAIM_PREVIOUS (RFC 7530 §16.16.5, RFC 8881 §18.16.3): the current filehandle is the file. */
static void xb_open_prev(struct xb *a, uint32_t seqid, uint32_t access, uint64_t cid, const char *owner)
{
	struct n4_openargs o = { .seqid = seqid, .access = access, .cid = cid, .owner = owner, .previous = true };

	n4_xb_openargs(a, &o);
}

/* 4.1: SEQUENCE, PUTFH fh, the OPEN in a (freed); its status, the open in *o. */
static int open41_run(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, struct xb *a,
		      struct n4_openres *o)
{
	struct raw_reply r;
	int st = seq41(k, fh, fh_len, a, &r);

	if (st == 0)
		n4_xd_openres(&r.body, o);
	raw_reply_free(&r);
	xb_free(a);
	return st;
}

/* 4.1: OPEN by CLAIM_PREVIOUS of fh. */
static int reclaim41(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const char *owner,
		     struct n4_openres *o)
{
	struct xb a;

	xb_init(&a);
	xb_open_prev(&a, 0, 3, k->cid, owner);
	return open41_run(k, fh, fh_len, &a, o);
}

/* 4.0: PUTFH fh, OPEN by CLAIM_PREVIOUS; its status, the open in *o. */
static int reclaim40(struct n4_client *c, const uint8_t *fh, uint32_t fh_len, uint32_t seqid, uint64_t cid,
		     const char *owner, struct n4_openres *o)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(c, &a, 2, fh, fh_len);
	xb_open_prev(&a, seqid, 1, cid, owner);
	st = n4_call(c, &a, &r);
	if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_OPEN) == 0)
		n4_xd_openres(&r.body, o);
	raw_reply_free(&r);
	return st;
}

/* 4.1: OPEN by name in dir (CLAIM_NULL; create: UNCHECKED4). */
static int open41(struct n4_client *k, const uint8_t *dir, uint32_t dir_len, const char *owner,
		  int create, const char *name, struct n4_openres *o)
{
	struct xb a;

	xb_init(&a);
	xb_open(&a, 0, 3, 0, k->cid, owner, create, name);
	return open41_run(k, dir, dir_len, &a, o);
}

/*
 * Before the restart: a 4.0 client opens (creates) "graced" and read-locks
 * [100, 200), a 4.1 client opens it and write-locks [0, 100). Both are recorded (SETCLIENTID_CONFIRM,
 * CREATE_SESSION) as clients that may reclaim after it.
 */
static void grace_before(struct n4_client *c, const uint8_t *root, uint32_t root_len, uint8_t *fh, uint32_t *fh_len)
{
	struct n4_client k;
	struct n4_openres o;
	struct n4_sid s;
	uint64_t cid;

	cid = client40(c, "it-grace-40");
	CHECK_EQ(open40(c, root, root_len, 1, 1, 0, cid, "gown40", 1, "graced", &o, fh, fh_len), 0,
		 "4.0 client: OPEN (create) \"graced\"");
	CHECK_EQ(sid_op40(c, N4_OPEN_CONFIRM, fh, *fh_len, 2, &o.sid, &s), 0, "4.0 client: OPEN_CONFIRM");
	CHECK_EQ(ONE(c, fh, *fh_len, xb_lock(b, 1, false, 100, 100, true, 3, &s, 0, cid, "glock40")), 0,
		 "4.0 client: LOCK [100, 200) read");
	session41_as(c, "it-grace-41", &k);
	/* RFC 8881 §18.51.3: a new client's RECLAIM_COMPLETE before its first OPEN. */
	CHECK_EQ(SEQ41(&k, root, root_len, (xb_u32(b, N4_RECLAIM_COMPLETE), xb_u32(b, 0))), 0,
		 "4.1 client: RECLAIM_COMPLETE");
	CHECK_EQ(open41(&k, root, root_len, "gown41", 0, "graced", &o), 0, "4.1 client: OPEN \"graced\"");
	CHECK_EQ(SEQ41(&k, fh, *fh_len, xb_lock(b, 2, false, 0, 100, true, 0, &o.sid, 0, k.cid, "glock41")), 0,
		 "4.1 client: LOCK [0, 100) write");
}

/* In grace: new state is GRACE, reclaims by the previous run's clients succeed, by others NO_GRACE. */
static void grace_during(struct n4_client *c, const uint8_t *root, uint32_t root_len, const uint8_t *fh,
			 uint32_t fh_len, struct n4_client *k, uint64_t *cid40, struct n4_sid *open40_sid, uint32_t *seq40)
{
	struct n4_client k3;
	struct n4_openres o;
	uint8_t fh2[128];
	uint32_t fh2_len = 0, seq;

	session41_as(c, "it-grace-41", k); /* the same co_ownerid, a new clientid */
	CHECK_EQ(open41(k, root, root_len, "gnew41", 1, "gnew41", &o), N4ERR_GRACE,
		 "4.1: a new OPEN (CLAIM_NULL) in grace: GRACE");
	CHECK_EQ(reclaim41(k, fh, fh_len, "gown41", &o), 0, "4.1: OPEN CLAIM_PREVIOUS in grace");
	CHECK_EQ(o.rflags & 2, 0, "4.1: no OPEN4_RESULT_CONFIRM");
	CHECK_EQ(SEQ41(k, fh, fh_len, xb_lock(b, 2, true, 0, 100, true, 0, &o.sid, 0, k->cid, "glock41")), 0,
		 "4.1: LOCK reclaim [0, 100) in grace");
	CHECK_EQ(SEQ41(k, fh, fh_len, n4_xb_locktargs(b, N4_WRITE_LT, 200, 10, k->cid, "glockt41")), N4ERR_GRACE,
		 "4.1: LOCKT in grace: GRACE");
	session41_as(c, "it-grace-unknown", &k3);
	CHECK_EQ(reclaim41(&k3, fh, fh_len, "gown3", &o), N4ERR_NO_GRACE,
		 "a client the previous run did not know: CLAIM_PREVIOUS is NO_GRACE");

	/* Before the 4.0 client: a 4.1 client id left over in the worker must not pass its reclaims. */
	CHECK_EQ(SEQ41(k, fh, fh_len, (xb_u32(b, N4_RECLAIM_COMPLETE), xb_u32(b, 0))), 0, "4.1: RECLAIM_COMPLETE");
	CHECK_EQ(reclaim41(k, fh, fh_len, "gown41", &o), N4ERR_NO_GRACE,
		 "4.1: CLAIM_PREVIOUS after its RECLAIM_COMPLETE: NO_GRACE");
	CHECK_EQ(open41(k, root, root_len, "gnew41", 1, "gnew41", &o), N4ERR_GRACE,
		 "4.1: a new OPEN still GRACE (the 4.0 client's grace runs on)");

	*cid40 = client40(c, "it-grace-40");
	CHECK_EQ(open40(c, root, root_len, 1, 3, 0, *cid40, "gnew40", 1, "gnew40", &o, fh2, &fh2_len), N4ERR_GRACE,
		 "4.0: a new OPEN (CLAIM_NULL) in grace: GRACE");
	CHECK_EQ(reclaim40(c, fh, fh_len, 1, *cid40, "gown40", &o), 0, "4.0: OPEN CLAIM_PREVIOUS in grace");
	*open40_sid = o.sid;
	seq = 2;
	if (o.rflags & 2) /* RFC 7530 §16.16.5: a new open owner confirms */
		CHECK_EQ(sid_op40(c, N4_OPEN_CONFIRM, fh, fh_len, seq++, &o.sid, open40_sid), 0,
			 "4.0: OPEN_CONFIRM of the reclaimed open");
	CHECK_EQ(ONE(c, fh, fh_len, xb_lock(b, 1, true, 100, 100, true, seq, open40_sid, 0, *cid40, "glock40")),
		 0, "4.0: LOCK reclaim (read) [100, 200) in grace");
	CHECK_EQ(ONE(c, fh, fh_len, n4_xb_locktargs(b, N4_WRITE_LT, 200, 10, *cid40, "glockt40")), N4ERR_GRACE,
		 "4.0: LOCKT in grace: GRACE");
	*seq40 = seq + 1;
}

/* RFC 8881 §8.4.2, RFC 7530 §9.6.2: restart with the same state directory, reclaim, let grace end. */
static void test_grace(struct n4_client *c, const uint8_t *root, uint32_t root_len)
{
	uint8_t fh[128], fh2[128];
	uint32_t fh_len = 0, fh2_len = 0, seq40 = 0;
	struct n4_client k, k3;
	struct n4_openres o;
	struct n4_sid s40;
	uint64_t cid40 = 0;
	time_t t0;
	FILE *f;

	hx_section("grace period after a restart ([nfsv4] grace-time = %d): OPEN CLAIM_PREVIOUS, LOCK reclaim",
		   GRACE_TIME);
	grace_before(c, root, root_len, fh, &fh_len);
	n4_client_close(c);
	hx_daemon_stop(&env);
	f = fopen(env.conf_path, "a"); /* [nfsv4] is the last section */
	if (!CHECK(f != NULL, "config"))
		return;
	fprintf(f, "grace-time = %d\n", GRACE_TIME);
	fclose(f);
	t0 = time(NULL);
	if (hx_daemon_start(&env) != 0 || !CHECK(n4_connect(c, env.port, 0) == 0, "connect after the restart"))
		return;
	grace_during(c, root, root_len, fh, fh_len, &k, &cid40, &s40, &seq40);
	if (!CHECK(time(NULL) - t0 < GRACE_TIME, "the in-grace checks ran within the grace period"))
		return;
	sleep((unsigned)(GRACE_TIME + 1 - (time(NULL) - t0)));

	CHECK_EQ(open41(&k, root, root_len, "gnew41", 1, "gnew41", &o), 0, "after grace: 4.1 new OPEN");
	CHECK_EQ(SEQ41(&k, fh, fh_len, n4_xb_locktargs(b, N4_WRITE_LT, 200, 10, k.cid, "glockt41")), 0, "after grace: LOCKT");
	CHECK_EQ(open40(c, root, root_len, 2, 3, 0, cid40, "gnew40", 1, "gnew40", &o, fh2, &fh2_len), 0,
		 "after grace: 4.0 new OPEN");
	/* Clients of the previous run that never sent RECLAIM_COMPLETE: NO_GRACE once grace is over. */
	session41(c, &k3); /* "it-client-41", recorded by test_state41 */
	CHECK_EQ(reclaim41(&k3, fh, fh_len, "gown41b", &o), N4ERR_NO_GRACE,
		 "after grace: 4.1 OPEN CLAIM_PREVIOUS: NO_GRACE");
	CHECK_EQ(reclaim40(c, fh, fh_len, 1, cid40, "gown40b", &o), N4ERR_NO_GRACE,
		 "after grace: 4.0 OPEN CLAIM_PREVIOUS: NO_GRACE");
	CHECK_EQ(ONE(c, fh, fh_len, xb_lock(b, 1, true, 200, 10, true, seq40, &s40, 0, cid40, "glock40b")),
		 N4ERR_NO_GRACE, "after grace: 4.0 LOCK reclaim: NO_GRACE");
}

/* ---- NFSv4.2 (RFC 7862) and xattrs (RFC 8276) ---- */

#define MIB (1u << 20)

static const struct n4_sid anon; /* the anonymous stateid (all zeros) */

/* SEQUENCE, PUTFH fh, then ops (n of them, encoded): the status; r->body after PUTFH's result. */
static int seq42(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct xb *ops,
		 uint32_t n, struct raw_reply *r)
{
	struct xb a;
	int st;

	n4_begin(k, &a, 1 + n);
	n4_xb_putfh(&a, fh, fh_len);
	xb_raw(&a, ops->p, ops->len);
	st = n4_call(k, &a, r);
	if (st == 0)
		n4_res(r, N4_PUTFH);
	return st;
}

/* SEEK: the status; *off and *eof on success. */
static int seek42(struct n4_client *k, const uint8_t *fh, uint32_t len, uint64_t from, uint32_t what,
		  uint64_t *off, bool *eof)
{
	struct raw_reply r;
	struct xb o;
	int st;

	xb_init(&o);
	xb_u32(&o, N4_SEEK);
	n4_xb_sid(&o, &anon);
	xb_u64(&o, from);
	xb_u32(&o, what);
	st = seq42(k, fh, len, &o, 1, &r);
	if (st == 0 && n4_res(&r, N4_SEEK) == 0) {
		*eof = xd_u32(&r.body);
		*off = xd_u64(&r.body);
	}
	raw_reply_free(&r);
	xb_free(&o);
	return st;
}

static int alloc42_sid(struct n4_client *k, const uint8_t *fh, uint32_t len, uint32_t op,
		       const struct n4_sid *s, uint64_t off, uint64_t n)
{
	struct raw_reply r;
	struct xb o;
	int st;

	xb_init(&o);
	xb_u32(&o, op);
	n4_xb_sid(&o, s);
	xb_u64(&o, off);
	xb_u64(&o, n);
	st = seq42(k, fh, len, &o, 1, &r);
	raw_reply_free(&r);
	xb_free(&o);
	return st;
}

static int alloc42(struct n4_client *k, const uint8_t *fh, uint32_t len, uint32_t op, uint64_t off,
		   uint64_t n)
{
	return alloc42_sid(k, fh, len, op, &anon, off, n);
}

/* A file of the export: its handle. */
static bool fh_file(struct n4_client *c, const char *name, uint8_t *fh, uint32_t *len)
{
	char path[PATH_MAX + 256];

	if (snprintf(path, sizeof(path), "%s/%s", env.export_dir, name) >= (int)sizeof(path))
		return false;
	return fh_of(c, path, fh, len);
}

static void test_v42_seek_alloc(struct n4_client *c, struct n4_client *k)
{
	uint8_t fh[128], fh2[128];
	uint32_t len = 0, len2 = 0;
	uint64_t off = 0;
	bool eof = false;
	int fd;

	hx_section("NFSv4.2: SEEK on a sparse file; DEALLOCATE then SEEK finds the hole; ALLOCATE");
	fd = open(hx_xpath(&env, "sparse42"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 4 * MIB) == 0 && pwrite(fd, "DATA", 4, MIB) == 4, "sparse file");
	close(fd);
	if (!CHECK(fh_file(c, "sparse42", fh, &len), "handle of sparse42"))
		return;
	CHECK(seek42(k, fh, len, 0, 0, &off, &eof) == 0 && off == MIB && !eof, "SEEK DATA from 0: %llu",
	      (unsigned long long)off);
	CHECK(seek42(k, fh, len, MIB, 1, &off, &eof) == 0 && off == MIB + 4096, "SEEK HOLE from 1 MiB: %llu",
	      (unsigned long long)off);
	CHECK(seek42(k, fh, len, 2 * MIB, 0, &off, &eof) == 0 && eof, "SEEK DATA in the trailing hole: eof");
	CHECK_EQ(seek42(k, fh, len, 4 * MIB, 0, &off, &eof), 6 /* NXIO */, "SEEK past the end: NXIO");
	{
		static uint8_t buf[4 * MIB / 4];
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)(i * 7 + 1);
		fd = open(hx_xpath(&env, "dense42"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		for (int i = 0; i < 4; i++)
			CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf), "dense file");
		close(fd);
	}
	if (!CHECK(fh_file(c, "dense42", fh2, &len2), "handle of dense42"))
		return;
	CHECK(seek42(k, fh2, len2, 0, 1, &off, &eof) == 0 && off == 4 * MIB && eof, "dense: the hole is the end");
	CHECK_EQ(alloc42(k, fh2, len2, N4_DEALLOCATE, MIB, MIB), 0, "DEALLOCATE [1 MiB, 2 MiB)");
	CHECK(seek42(k, fh2, len2, 0, 1, &off, &eof) == 0 && off == MIB && !eof, "SEEK HOLE finds it: %llu",
	      (unsigned long long)off);
	CHECK(seek42(k, fh2, len2, MIB, 0, &off, &eof) == 0 && off == 2 * MIB, "SEEK DATA after it: %llu",
	      (unsigned long long)off);
	struct stat st;
	CHECK(stat(hx_xpath(&env, "dense42"), &st) == 0 && st.st_size == 4 * MIB, "size kept");
	fd = open(hx_xpath(&env, "dense42"), O_RDONLY);
	CHECK(lseek(fd, 0, SEEK_HOLE) == MIB, "the server's own lseek sees the hole");
	close(fd);
	CHECK_EQ(alloc42(k, fh2, len2, N4_ALLOCATE, 4 * MIB, MIB), 0, "ALLOCATE past the end");
	CHECK(stat(hx_xpath(&env, "dense42"), &st) == 0 && st.st_size == 5 * MIB, "the file grew to 5 MiB");
}

static void test_v42_read_plus(struct n4_client *c, struct n4_client *k)
{
	uint8_t fh[128];
	uint32_t len = 0, n = 0, dlen = 0;
	struct raw_reply r;
	const uint8_t *d = NULL;
	struct xb o;
	bool hole = false, data = false;

	hx_section("NFSv4.2: READ_PLUS returns the hole as a hole segment and the data");
	if (!CHECK(fh_file(c, "sparse42", fh, &len), "handle of sparse42"))
		return;
	xb_init(&o);
	xb_u32(&o, N4_READ_PLUS);
	n4_xb_sid(&o, &anon);
	xb_u64(&o, MIB - 8192);
	xb_u32(&o, 65536);
	if (CHECK_EQ(seq42(k, fh, len, &o, 1, &r), 0, "READ_PLUS") && n4_res(&r, N4_READ_PLUS) == 0) {
		xd_u32(&r.body); /* eof */
		n = xd_u32(&r.body);
		for (uint32_t i = 0; i < n && !r.body.bad; i++) {
			uint32_t type = xd_u32(&r.body);
			uint64_t off = xd_u64(&r.body);
			if (type == 1) {
				uint64_t l = xd_u64(&r.body);
				hole |= i == 0 && off == MIB - 8192 && l == 8192;
			} else {
				d = xd_opaque(&r.body, &dlen, 65536);
				data |= off == MIB && d && dlen >= 4 && !memcmp(d, "DATA", 4);
			}
		}
	}
	CHECK(hole, "a hole segment [1 MiB - 8 KiB, 1 MiB)");
	CHECK(data, "the data segment at 1 MiB holds DATA (%u segments)", n);
	raw_reply_free(&r);
	xb_free(&o);
}

/* SAVEFH (source: the PUTFH), PUTFH dst, COPY or CLONE. */
static int copy42(struct n4_client *k, const uint8_t *src, uint32_t slen, const uint8_t *dst,
		  uint32_t dlen, uint32_t op, uint64_t soff, uint64_t doff, uint64_t count, uint64_t *copied)
{
	struct raw_reply r;
	struct xb o;
	int st;

	xb_init(&o);
	xb_u32(&o, N4_SAVEFH);
	n4_xb_putfh(&o, dst, dlen);
	xb_u32(&o, op);
	n4_xb_sid(&o, &anon);
	n4_xb_sid(&o, &anon);
	xb_u64(&o, soff);
	xb_u64(&o, doff);
	xb_u64(&o, count);
	if (op == N4_COPY) {
		xb_u32(&o, 1);
		xb_u32(&o, 1);
		xb_u32(&o, 0);
	}
	st = seq42(k, src, slen, &o, 3, &r);
	if (st == 0 && op == N4_COPY && n4_res(&r, N4_SAVEFH) == 0 && n4_res(&r, N4_PUTFH) == 0 &&
	    n4_res(&r, N4_COPY) == 0) {
		CHECK_EQ(xd_u32(&r.body), 0, "COPY: no callback id (synchronous)");
		*copied = xd_u64(&r.body);
	}
	raw_reply_free(&r);
	xb_free(&o);
	return st;
}

static bool same_files(const char *a, const char *b)
{
	char cmd[4 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", a, b);
	return system(cmd) == 0;
}

static void test_v42_copy_clone(struct n4_client *c, struct n4_client *k)
{
	uint8_t s[128], d[128];
	uint32_t sl = 0, dl = 0;
	uint64_t copied = 0;
	bool can_clone;
	int st, fs, fd;

	hx_section("NFSv4.2: COPY within the server (bytes compared), CLONE where the file system can");
	hx_write_file(hx_xpath(&env, "copy-dst"), "", 0, 0644);
	if (!CHECK(fh_file(c, "dense42", s, &sl) && fh_file(c, "copy-dst", d, &dl), "handles"))
		return;
	CHECK_EQ(copy42(k, s, sl, d, dl, N4_COPY, 0, 0, 0, &copied), 0, "COPY of the whole file (count 0)");
	CHECK(copied == 5 * MIB, "5 MiB copied (%llu)", (unsigned long long)copied);
	CHECK(same_files(hx_xpath(&env, "dense42"), hx_xpath(&env, "copy-dst")), "the copy has the same bytes");
	CHECK_EQ(copy42(k, s, sl, d, dl, N4_COPY, 5 * MIB, 0, 1, &copied), N4ERR_INVAL,
		 "COPY past the source's end: INVAL");
	/* RFC 7862 §15.13.3: NOTSUPP exactly when the host's file system cannot reflink. */
	hx_write_file(hx_xpath(&env, "clone-dst"), "", 0, 0644);
	fs = open(hx_xpath(&env, "dense42"), O_RDONLY);
	fd = open(hx_xpath(&env, "clone-probe"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	can_clone = fs >= 0 && fd >= 0 && ioctl(fd, FICLONE, fs) == 0;
	close(fs);
	close(fd);
	unlink(hx_xpath(&env, "clone-probe"));
	if (!CHECK(fh_file(c, "clone-dst", d, &dl), "handle of clone-dst"))
		return;
	st = copy42(k, s, sl, d, dl, N4_CLONE, 0, 0, 0, &copied);
	if (can_clone)
		CHECK(st == 0 && same_files(hx_xpath(&env, "dense42"), hx_xpath(&env, "clone-dst")),
		      "CLONE: the same bytes (%d)", st);
	else
		CHECK_EQ(st, N4ERR_NOTSUPP, "CLONE on a file system without reflink (FICLONE refused): NOTSUPP");
	{
		struct raw_reply r;
		struct xb o;
		xb_init(&o);
		xb_u32(&o, N4_OFFLOAD_STATUS);
		n4_xb_sid(&o, &anon);
		CHECK_EQ(seq42(k, d, dl, &o, 1, &r), N4ERR_BAD_STATEID, "OFFLOAD_STATUS: no async copy: BAD_STATEID");
		raw_reply_free(&r);
		xb_free(&o);
	}
}

static int xattr42(struct n4_client *k, const uint8_t *fh, uint32_t len, uint32_t op,
		   const char *name, const char *value, char *out, size_t cap)
{
	struct raw_reply r;
	struct xb o;
	uint32_t n = 0;
	const uint8_t *p;
	int st;

	xb_init(&o);
	xb_u32(&o, op);
	if (op == N4_SETXATTR)
		xb_u32(&o, 0);
	if (op == N4_LISTXATTRS) {
		xb_u64(&o, 0);
		xb_u32(&o, 4096);
	} else {
		xb_string(&o, name);
	}
	if (op == N4_SETXATTR)
		xb_string(&o, value);
	st = seq42(k, fh, len, &o, 1, &r);
	if (out)
		out[0] = 0;
	if (st == 0 && out && op == N4_GETXATTR && n4_res(&r, op) == 0 && (p = xd_opaque(&r.body, &n, 1024)) && n < cap) {
		memcpy(out, p, n);
		out[n] = 0;
	}
	if (st == 0 && out && op == N4_LISTXATTRS && n4_res(&r, op) == 0) {
		xd_u64(&r.body);
		uint32_t cnt = xd_u32(&r.body);
		for (uint32_t i = 0; i < cnt && (p = xd_opaque(&r.body, &n, 255)); i++)
			snprintf(out + strlen(out), cap - strlen(out), "%.*s,", (int)n, (const char *)p);
	}
	raw_reply_free(&r);
	xb_free(&o);
	return st;
}

static void test_v42_xattr(struct n4_client *c, struct n4_client *k)
{
	uint8_t fh[128];
	uint32_t len = 0;
	char v[256], host[64];
	ssize_t n;

	hx_section("RFC 8276 xattrs: SETXATTR, GETXATTR, LISTXATTRS, REMOVEXATTR (user namespace, no prefix)");
	hx_write_file(hx_xpath(&env, "xa"), "x", 1, 0644);
	if (!CHECK(fh_file(c, "xa", fh, &len), "handle of xa"))
		return;
	CHECK_EQ(xattr42(k, fh, len, N4_SETXATTR, "x", "hello", NULL, 0), 0, "SETXATTR x");
	CHECK_EQ(xattr42(k, fh, len, N4_SETXATTR, "y", "world", NULL, 0), 0, "SETXATTR y");
	n = getxattr(hx_xpath(&env, "xa"), "user.x", host, sizeof(host));
	CHECK(n == 5 && !memcmp(host, "hello", 5), "user.x on the server's file");
	CHECK(xattr42(k, fh, len, N4_GETXATTR, "x", NULL, v, sizeof(v)) == 0 && !strcmp(v, "hello"),
	      "GETXATTR x: \"%s\"", v);
	CHECK(xattr42(k, fh, len, N4_LISTXATTRS, NULL, NULL, v, sizeof(v)) == 0 &&
		      (!strcmp(v, "x,y,") || !strcmp(v, "y,x,")),
	      "LISTXATTRS: \"%s\"", v);
	CHECK_EQ(xattr42(k, fh, len, N4_REMOVEXATTR, "x", NULL, NULL, 0), 0, "REMOVEXATTR x");
	CHECK_EQ(xattr42(k, fh, len, N4_GETXATTR, "x", NULL, v, sizeof(v)), N4ERR_NOXATTR, "GETXATTR x: NOXATTR");
	CHECK(getxattr(hx_xpath(&env, "xa"), "user.x", host, sizeof(host)) < 0 && errno == ENODATA,
	      "user.x gone from the server's file");
	CHECK(xattr42(k, fh, len, N4_LISTXATTRS, NULL, NULL, v, sizeof(v)) == 0 && !strcmp(v, "y,"),
	      "LISTXATTRS after the removal: \"%s\"", v);
}

/* The stateid step is WRITE's (RFC 7862 §15.4.3, §15.1.3): an open for writing may
 * DEALLOCATE, a read-only open may only read (OPENMODE), a stateid of no state is refused. */
static void test_v42_stateids(struct n4_client *c, struct n4_client *k)
{
	static const struct n4_sid bogus = { .seqid = 1, .other = { 0x55, 0x55, 0x55, 0x55, 0x55, 0x55 } };
	uint8_t dir[128], fh[128];
	uint32_t dl = 0, fl = 0;
	struct n4_openres rw, ro;
	uint64_t off = 0;
	bool eof = false;
	struct xb a;
	int st;

	hx_section("NFSv4.2: DEALLOCATE and SEEK through open stateids (OPENMODE for a read-only open)");
	if (!CHECK(fh_of(c, env.export_dir, dir, &dl) && fh_file(c, "dense42", fh, &fl), "handles"))
		return;
	CHECK_EQ(SEQ41(k, dir, dl, (xb_u32(b, N4_RECLAIM_COMPLETE), xb_u32(b, 0))), 0, "RECLAIM_COMPLETE");
	CHECK_EQ(open41(k, dir, dl, "v42-rw", 0, "dense42", &rw), 0, "OPEN read-write");
	xb_init(&a);
	xb_open(&a, 0, 1 /* READ */, 0, k->cid, "v42-ro", 0, "dense42");
	CHECK_EQ(open41_run(k, dir, dl, &a, &ro), 0, "OPEN read-only (another owner)");
	CHECK_EQ(alloc42_sid(k, fh, fl, N4_DEALLOCATE, &rw.sid, 0, 4096), 0, "DEALLOCATE with the read-write open");
	CHECK_EQ(alloc42_sid(k, fh, fl, N4_DEALLOCATE, &ro.sid, 0, 4096), N4ERR_OPENMODE,
		 "DEALLOCATE with the read-only open: OPENMODE");
	CHECK_EQ(alloc42_sid(k, fh, fl, N4_ALLOCATE, &ro.sid, 0, 4096), N4ERR_OPENMODE,
		 "ALLOCATE with the read-only open: OPENMODE");
	CHECK(seek42(k, fh, fl, 0, 1, &off, &eof) == 0 && off == 0, "SEEK HOLE from 0 finds the new hole at 0");
	st = alloc42_sid(k, fh, fl, N4_DEALLOCATE, &bogus, 0, 4096);
	CHECK(st == N4ERR_BAD_STATEID || st == N4ERR_STALE_STATEID, "a stateid of no state: %d", st);
}

static void test_v42(struct n4_client *c)
{
	struct n4_client k;

	sess_minor = 2;
	session41_as(c, "it-client-42", &k);
	test_v42_seek_alloc(c, &k);
	test_v42_read_plus(c, &k);
	test_v42_copy_clone(c, &k);
	test_v42_xattr(c, &k);
	test_v42_stateids(c, &k);
	sess_minor = 1;
}

/* root_squash (the default) and a read-only export. */
static void test_squash_ro(void)
{
	char ro[PATH_MAX];
	uint8_t fh[128], rofh[128];
	uint32_t len = 0, rolen = 0;
	struct n4_client c;
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
	if (hx_daemon_start(&env) != 0 || !CHECK(n4_connect(&c, env.port, 0) == 0, "connect"))
		return;
	if (CHECK(fh_of(&c, env.export_dir, fh, &len) && fh_of(&c, ro, rofh, &rolen), "handles")) {
		CHECK_EQ(ONE(&c, fh, len, op_create(b, 2, "sq", 0755)), 0, "CREATE as root on root_squash");
		CHECK(stat(hx_xpath(&env, "sq"), &st) == 0 && st.st_uid == 65534, "owned by 65534 (uid %u)",
		      (unsigned)st.st_uid);
		CHECK_EQ(ONE(&c, rofh, rolen, op_create(b, 2, "x", 0755)), N4ERR_ROFS, "CREATE on ro: ROFS");
		CHECK_EQ(ONE(&c, rofh, rolen, (xb_u32(b, N4_REMOVE), xb_string(b, "f"))), N4ERR_ROFS,
			 "REMOVE on ro: ROFS");
		xb_init(&v);
		xb_u32(&v, 0700);
		CHECK_EQ(ONE(&c, rofh, rolen, (xb_u32(b, N4_SETATTR), xb_u32(b, 0), xb_u64(b, 0), xb_u32(b, 0),
						fattr(b, 0, W1(FATTR_MODE), &v))),
			 N4ERR_ROFS, "SETATTR on ro: ROFS");
		xb_free(&v);
		CHECK(stat(rofile, &st) == 0 && (st.st_mode & 07777) == 0644, "still there, unchanged");
		/* NFSv4.2 (RFC 7862, RFC 8276): the data and xattr operations are ROFS there too. */
		struct n4_client k;
		uint8_t ffh[128];
		uint32_t flen = 0;
		sess_minor = 2;
		session41_as(&c, "it-client-42-ro", &k);
		if (CHECK(fh_of(&c, rofile, ffh, &flen), "handle of rodir/f")) {
			CHECK_EQ(alloc42(&k, ffh, flen, N4_DEALLOCATE, 0, 1), N4ERR_ROFS, "DEALLOCATE on ro: ROFS");
			CHECK_EQ(alloc42(&k, ffh, flen, N4_ALLOCATE, 0, 1), N4ERR_ROFS, "ALLOCATE on ro: ROFS");
			CHECK_EQ(xattr42(&k, ffh, flen, N4_SETXATTR, "x", "v", NULL, 0), N4ERR_ROFS,
				 "SETXATTR on ro: ROFS");
			CHECK_EQ(copy42(&k, ffh, flen, ffh, flen, N4_COPY, 0, 0, 1, &(uint64_t){ 0 }), N4ERR_ROFS,
				 "COPY into ro: ROFS");
		}
		sess_minor = 1;
	}
	n4_client_close(&c);
	hx_daemon_stop(&env);
}

int main(int argc, char **argv)
{
	struct n4_client c;
	struct raw_reply r;
	uint8_t fh[128];
	uint32_t fh_len = 0;

	hx_begin("nfs4", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	hx_write_file(hx_xpath(&env, "hello"), "hi\n", 3, 0644);
	if (symlink("hello", hx_xpath(&env, "link")) != 0)
		CHECK(false, "symlink");
	test_on_by_default();

	if (!CHECK(hx_append_config(&env, "[nfsv4]\nlease-time = %d\n", LEASE) == 0, "config"))
		return hx_end();
	if (hx_daemon_start(&env) != 0 || !CHECK(n4_connect(&c, env.port, 0) == 0, "connect"))
		return hx_end();
	CHECK(raw_call(&c.c, ++xid, RAW_NFS_PROG, 4, 0, NULL, 0, &r) == RAW_RECV_OK && r.accept_stat == 0,
	      "version 4 NULL answered");
	raw_reply_free(&r);
	test_walk(&c, fh, &fh_len);
	test_handles_and_errors(&c, fh, fh_len);
	test_mod_ops(&c, fh, fh_len);
	test_state40(&c, fh, fh_len);
	test_state41(&c, fh, fh_len);
	test_session_limits(&c);
	test_locks40(&c, fh, fh_len);
	test_lease_expiry(&c, fh, fh_len);
	test_v42(&c);
	test_grace(&c, fh, fh_len);
	n4_client_close(&c);
	hx_daemon_stop(&env);
	test_squash_ro();
	test_off_when_disabled();
	hx_env_release(&env);
	return hx_end();
}
