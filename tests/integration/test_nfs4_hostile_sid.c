/*
 * test_nfs4_hostile_sid.c - hostile NFSv4 clients against the real daemon
 * (issue 24 defects 1, 8, 9, 10, 11), driven with the raw client
 * nfs4raw.h. Each attack asserts the protocol's error; throughout, a
 * neighbour 4.1 client (n4_watch) and, at the end, a fresh client must be
 * answered within N4_LIVE_S (nfs4raw.h), and the daemon's descriptors and resident
 * memory must stay within a stated bound of what they were before.
 *
 *  1. Client B (4.2) uses client A's (4.1) open and lock stateids: READ,
 *     READ_PLUS, SEEK, WRITE, ALLOCATE, SETATTR(size), TEST_STATEID,
 *     FREE_STATEID, LOCK (existing lock owner and open_to_lock_owner),
 *     LOCKU, OPEN_DOWNGRADE, CLOSE: each BAD_STATEID (RFC 8881 §8.2.2), and
 *     A's data, lock and open are untouched.
 *  8. A session that negotiated ca_maxresponsesize 8 KiB asks for 64 KiB
 *     READs: REP_TOO_BIG; with sa_cachethis, a READ past
 *     ca_maxresponsesize_cached is REP_TOO_BIG_TO_CACHE and one within it is
 *     replayed from the cache, data included (RFC 8881 §2.10.6.4, §18.46.3).
 *  9. VERIFY/NVERIFY with a 1-byte mode: BADXDR (RFC 8881 §15.1.1.3).
 * 10. Session ids are not the xorshift successor of the previous one; another
 *     principal's DESTROY_SESSION, BIND_CONN_TO_SESSION and DESTROY_CLIENTID
 *     get WRONG_CRED (RFC 8881 §2.10.8.3, §15.1.6.4), the victim's session
 *     keeps working.
 * 11. SECINFO and SECINFO_NO_NAME under AUTH_NONE of a sec=sys export answer
 *     AUTH_SYS (RFC 8881 §2.6.3.1.1.5), other operations stay WRONGSEC (4.0
 *     SECINFO from the root: AUTH_NONE may not walk the pseudo directories
 *     above sys-only exports, §2.6.3.1.1.3).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#define FH_MAX 128u
#define FDS_SLACK 4        /* descriptors above the start once the attackers are gone */
#define RSS_SLACK_KB 16384 /* resident memory above the start */

static struct hx_env env;

/* A file a client has open. */
struct n4_file {
	uint8_t fh[FH_MAX];
	uint32_t fh_len;
	struct n4_sid open;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* k's COMPOUND [SEQUENCE] PUTFH f + the operation the caller added to a: that operation's status. */
static int fh_op_send(struct n4_client *k, struct xb *a, uint32_t op, struct raw_reply *r)
{
	int st = n4_call(k, a, r);

	if (st < 0 || n4_res(r, N4_PUTFH) != 0)
		return st;
	return n4_res(r, op);
}

static void fh_op_begin(struct n4_client *k, struct xb *a, const struct n4_file *f, uint32_t op)
{
	n4_begin(k, a, 2);
	n4_xb_putfh(a, f->fh, f->fh_len);
	xb_u32(a, op);
}

/* PUTFH f + op(stateid sid, then nwords more words): op's status. */
static int sid_op(struct n4_client *k, const struct n4_file *f, uint32_t op, const struct n4_sid *sid,
		  const uint32_t *words, unsigned nwords)
{
	struct raw_reply r;
	struct xb a;
	int st;

	fh_op_begin(k, &a, f, op);
	n4_xb_sid(&a, sid);
	for (unsigned i = 0; i < nwords; i++)
		xb_u32(&a, words[i]);
	st = fh_op_send(k, &a, op, &r);
	raw_reply_free(&r);
	return st;
}

/* ---- 1. another client's stateids ---------------------------------------- */

static void b_uses_a_stateids(struct n4_client *a, struct n4_client *b, struct n4_file *f, struct n4_sid *lock)
{
	const uint32_t off_cnt[] = { 0, 0, 4096 };          /* offset (u64), count */
	const uint32_t seek[] = { 0, 0, 0 };                /* offset, NFS4_CONTENT_DATA */
	const uint32_t alloc[] = { 0, 0, 0, 1u << 20 };     /* offset, length */
	const uint32_t downgrade[] = { 0, N4_ACCESS_READ, 0 }; /* seqid, access, deny */
	struct n4_sid lk = *lock, got;
	uint32_t n = 0;

	hx_section("1: client B (4.2) with client A's open and lock stateids");
	CHECK_EQ(n4_read(b, f->fh, f->fh_len, &f->open, 0, 4096, NULL, &n), N4ERR_BAD_STATEID, "B: READ");
	CHECK_EQ(n, 0, "B read nothing of A's file");
	CHECK_EQ(sid_op(b, f, N4_READ_PLUS, &f->open, off_cnt, 3), N4ERR_BAD_STATEID, "B: READ_PLUS");
	CHECK_EQ(sid_op(b, f, N4_SEEK, &f->open, seek, 3), N4ERR_BAD_STATEID, "B: SEEK");
	CHECK_EQ(n4_write(b, f->fh, f->fh_len, &f->open, 0, "EVIL", 4), N4ERR_BAD_STATEID, "B: WRITE");
	CHECK_EQ(n4_write(b, f->fh, f->fh_len, lock, 0, "EVIL", 4), N4ERR_BAD_STATEID, "B: WRITE, A's lock stateid");
	CHECK_EQ(sid_op(b, f, N4_ALLOCATE, &f->open, alloc, 4), N4ERR_BAD_STATEID, "B: ALLOCATE");
	CHECK_EQ(n4_truncate(b, f->fh, f->fh_len, &f->open, 0), N4ERR_BAD_STATEID, "B: SETATTR(size 0)");
	CHECK_EQ(sid_op(b, f, N4_FREE_STATEID, lock, NULL, 0), N4ERR_BAD_STATEID, "B: FREE_STATEID of A's lock");
	CHECK_EQ(n4_lock_more(b, f->fh, f->fh_len, N4_WRITE_LT, 200, 10, &lk, NULL), N4ERR_BAD_STATEID,
		 "B: LOCK as A's lock owner");
	CHECK_EQ(n4_lock_new(b, f->fh, f->fh_len, N4_WRITE_LT, 300, 10, &f->open, NULL, "b-lock", &got),
		 N4ERR_BAD_STATEID, "B: LOCK, open_to_lock_owner from A's open");
	lk = *lock;
	CHECK_EQ(n4_locku(b, f->fh, f->fh_len, &lk, NULL, 0, 100), N4ERR_BAD_STATEID, "B: LOCKU of A's lock");
	CHECK_EQ(sid_op(b, f, N4_OPEN_DOWNGRADE, &f->open, downgrade, 3), N4ERR_BAD_STATEID, "B: OPEN_DOWNGRADE");
	got = f->open;
	CHECK_EQ(n4_close(b, f->fh, f->fh_len, NULL, &got), N4ERR_BAD_STATEID, "B: CLOSE of A's open");
	/* A's state is as it was: its data, its lock (a conflicting LOCK by B's own open is DENIED), its open. */
	char buf[16] = { 0 };
	CHECK_EQ(n4_read(a, f->fh, f->fh_len, &f->open, 0, 8, buf, &n), N4_OK, "A: READ with its own open");
	CHECK(n == 8 && memcmp(buf, "AAAAAAAA", 8) == 0, "A's data unchanged (%u bytes)", n);
	struct stat sb;
	CHECK(stat(hx_xpath(&env, "a-file"), &sb) == 0 && sb.st_size == 4096, "A's file still 4096 bytes on disk");
	struct n4_file bf;
	CHECK_EQ(n4_open(b, env.export_dir, "a-file", false, N4_ACCESS_BOTH, 0, "b-owner", NULL, &bf.open, bf.fh,
			 &bf.fh_len), N4_OK, "B: its own OPEN of the file");
	CHECK_EQ(n4_lock_new(b, bf.fh, bf.fh_len, N4_WRITE_LT, 0, 100, &bf.open, NULL, "b-lock", &got), N4ERR_DENIED,
		 "B: its own LOCK over A's range is DENIED (A's lock held)");
	CHECK_EQ(n4_close(b, bf.fh, bf.fh_len, NULL, &bf.open), N4_OK, "B: CLOSE of its own open");
	lk = *lock;
	CHECK_EQ(n4_locku(a, f->fh, f->fh_len, &lk, NULL, 0, 100), N4_OK, "A: LOCKU of its own lock");
	CHECK_EQ(n4_close(a, f->fh, f->fh_len, NULL, &f->open), N4_OK, "A: CLOSE of its own open");
}

/* A 4.0 COMPOUND names no session: a 4.1 client's stateids act for nobody there (the two-client fuzzer's finding). */
static void c40_uses_a_stateids(struct n4_file *f, const struct n4_sid *lock)
{
	struct n4_sid lk = *lock, got = f->open;
	struct n4_client c;
	uint32_t seqid = 1, n = 0;

	hx_section("1: client C (4.0) with client A's (4.1) open and lock stateids");
	if (!CHECK_EQ(n4_start(&c, env.port, 0, "sid-c40"), 0, "client C (4.0) set up"))
		return;
	CHECK_EQ(n4_read(&c, f->fh, f->fh_len, &f->open, 0, 4096, NULL, &n), N4ERR_BAD_STATEID, "C: READ");
	CHECK_EQ(n4_write(&c, f->fh, f->fh_len, &f->open, 0, "EVIL", 4), N4ERR_BAD_STATEID, "C: WRITE");
	CHECK_EQ(n4_truncate(&c, f->fh, f->fh_len, &f->open, 0), N4ERR_BAD_STATEID, "C: SETATTR(size 0)");
	CHECK_EQ(n4_locku(&c, f->fh, f->fh_len, &lk, &seqid, 0, 100), N4ERR_BAD_STATEID, "C: LOCKU of A's lock");
	CHECK_EQ(n4_close(&c, f->fh, f->fh_len, &seqid, &got), N4ERR_BAD_STATEID, "C: CLOSE of A's open");
	n4_client_close(&c);
}

static void test_stateid_owner(void)
{
	struct n4_client a, b;
	struct n4_file f;
	struct n4_sid lock;
	char data[4096];

	memset(data, 'A', sizeof(data));
	if (!CHECK_EQ(n4_start(&a, env.port, 1, "sid-a"), 0, "client A (4.1) set up") ||
	    !CHECK_EQ(n4_start(&b, env.port, 2, "sid-b"), 0, "client B (4.2) set up"))
		return;
	CHECK_EQ(n4_open(&a, env.export_dir, "a-file", true, N4_ACCESS_BOTH, 0, "a-owner", NULL, &f.open, f.fh,
			 &f.fh_len), N4_OK, "A: OPEN (create)");
	CHECK_EQ(n4_write(&a, f.fh, f.fh_len, &f.open, 0, data, sizeof(data)), N4_OK, "A: WRITE 4096 bytes");
	CHECK_EQ(n4_lock_new(&a, f.fh, f.fh_len, N4_WRITE_LT, 0, 100, &f.open, NULL, "a-lock", &lock), N4_OK,
		 "A: LOCK [0, 100)");
	c40_uses_a_stateids(&f, &lock);
	b_uses_a_stateids(&a, &b, &f, &lock);
	n4_client_close(&a);
	n4_client_close(&b);
}

/* ---- 8. ca_maxresponsesize counts READ data ------------------------------- */

/* READ count at 0 with sa_cachethis; *got bytes into buf. Its status. */
static int read_cached(struct n4_client *k, const struct n4_file *f, uint32_t count, void *buf, uint32_t *got)
{
	k->cache_this = 1;
	return n4_read(k, f->fh, f->fh_len, &f->open, 0, count, buf, got);
}

static void test_reply_limits(void)
{
	static char data[65536], a1[65536], a2[65536];
	struct n4_client c;
	struct n4_file f;
	uint32_t got = 0, got2 = 0, seq;

	hx_section("8: a session of ca_maxresponsesize 8 KiB (cached 4 KiB) asks for more");
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 23);
	hx_write_file(hx_xpath(&env, "big"), data, sizeof(data), 0644);
	if (n4_connect(&c, env.port, 1) != 0)
		return;
	c.max_resp = 8192;
	c.max_resp_cached = 4096;
	if (!CHECK_EQ(n4_setup(&c, "limits"), 0, "client C (4.1, 8 KiB replies) set up"))
		return;
	CHECK_EQ(n4_open(&c, env.export_dir, "big", false, N4_ACCESS_READ, 0, "c-owner", NULL, &f.open, f.fh,
			 &f.fh_len), N4_OK, "C: OPEN");
	CHECK_EQ(n4_read(&c, f.fh, f.fh_len, &f.open, 0, 65536, a1, &got), N4ERR_REP_TOO_BIG,
		 "C: READ of 64 KiB is REP_TOO_BIG");
	CHECK_EQ(got, 0, "no data came");
	CHECK_EQ(n4_read(&c, f.fh, f.fh_len, &f.open, 0, 4096, a1, &got), N4_OK, "C: READ of 4 KiB fits");
	CHECK(got == 4096 && memcmp(a1, data, 4096) == 0, "its 4096 bytes (%u)", got);
	CHECK_EQ(read_cached(&c, &f, 6000, a1, &got), N4ERR_REP_TOO_BIG_TO_CACHE,
		 "C: READ of 6000 bytes with sa_cachethis is REP_TOO_BIG_TO_CACHE");
	seq = c.slot_seq;
	CHECK_EQ(read_cached(&c, &f, 1024, a1, &got), N4_OK, "C: READ of 1 KiB with sa_cachethis");
	c.slot_seq = seq; /* the same slot and sequence again: a retransmission */
	CHECK_EQ(read_cached(&c, &f, 1024, a2, &got2), N4_OK, "C: its retransmission is answered from the cache");
	CHECK(got == 1024 && got2 == 1024 && memcmp(a1, a2, 1024) == 0 && memcmp(a1, data, 1024) == 0,
	      "the cached reply carries the same 1024 bytes (%u, %u)", got, got2);
	CHECK_EQ(n4_close(&c, f.fh, f.fh_len, NULL, &f.open), N4_OK, "C: CLOSE");
	n4_client_close(&c);
}

/* ---- 9. VERIFY / NVERIFY with a cut value ---------------------------------- */

/* PUTFH f + op {mode} with len bytes of value (0x00...): op's status. */
static int verify_mode(struct n4_client *k, const struct n4_file *f, uint32_t op, uint32_t len)
{
	const uint8_t zero[4] = { 0 };
	struct raw_reply r;
	struct xb a;
	int st;

	fh_op_begin(k, &a, f, op);
	xb_u32(&a, 2);
	xb_u32(&a, 0);
	xb_u32(&a, 1u << (33 - 32)); /* mode */
	xb_opaque(&a, zero, len);
	st = fh_op_send(k, &a, op, &r);
	raw_reply_free(&r);
	return st;
}

static void test_verify_truncated(void)
{
	struct n4_client k;
	struct n4_file f;

	hx_section("9: VERIFY / NVERIFY with a 1-byte mode (a prefix of 0644's)");
	if (!CHECK_EQ(n4_start(&k, env.port, 1, "verify"), 0, "client set up"))
		return;
	CHECK_EQ(n4_open(&k, env.export_dir, "v-file", true, N4_ACCESS_READ, 0, "v-owner", NULL, &f.open, f.fh,
			 &f.fh_len), N4_OK, "OPEN (create, mode 0644)");
	CHECK_EQ(verify_mode(&k, &f, N4_VERIFY, 1), N4ERR_BADXDR, "VERIFY {mode} with 1 byte: BADXDR");
	CHECK_EQ(verify_mode(&k, &f, N4_NVERIFY, 1), N4ERR_BADXDR, "NVERIFY {mode} with 1 byte: BADXDR");
	CHECK_EQ(verify_mode(&k, &f, N4_NVERIFY, 4), N4_OK, "NVERIFY {mode 0}: not the same (OK)");
	CHECK_EQ(n4_close(&k, f.fh, f.fh_len, NULL, &f.open), N4_OK, "CLOSE");
	n4_client_close(&k);
}

/* ---- 10. session ids and other principals ----------------------------------- */

static uint64_t xorshift_next(uint64_t r)
{
	r ^= r << 13;
	r ^= r >> 7;
	r ^= r << 17;
	return r;
}

/* The random half of a session id (bytes 8..15, least significant first, as main made them). */
static uint64_t sid_random(const uint8_t *sid)
{
	uint64_t r = 0;

	for (int k = 7; k >= 0; k--)
		r = r << 8 | sid[8 + k];
	return r;
}

/* A session-less COMPOUND of one operation: op, then sessionid or clientid, then words. Its status. */
static int lone_op(struct n4_client *k, uint32_t op, const uint8_t *sessionid, uint64_t clientid,
		   const uint32_t *words, unsigned nwords)
{
	struct raw_reply r;
	struct xb a;
	int st;

	xb_init(&a);
	n4_hdr(&a, k->minor, 1);
	xb_u32(&a, op);
	if (sessionid)
		xb_raw(&a, sessionid, 16);
	else
		xb_u64(&a, clientid);
	for (unsigned i = 0; i < nwords; i++)
		xb_u32(&a, words[i]);
	st = n4_call_raw(k, &a, &r);
	xb_free(&a);
	raw_reply_free(&r);
	return st;
}

static void test_sessions(void)
{
	const uint32_t bind_args[] = { 3, 0 }; /* CDFC4_FORE_OR_BOTH, not RDMA */
	struct n4_client s1, s2, d, e;

	hx_section("10: session ids from a CSPRNG; session and client ID maintenance by another principal");
	if (!CHECK_EQ(n4_start(&s1, env.port, 1, "sid-one"), 0, "client 1 set up") ||
	    !CHECK_EQ(n4_start(&s2, env.port, 1, "sid-two"), 0, "client 2 set up"))
		return;
	CHECK(sid_random(s2.session) != xorshift_next(sid_random(s1.session)),
	      "the next session id is not the xorshift successor of the previous one");
	n4_client_close(&s1);
	n4_client_close(&s2);
	if (n4_connect(&d, env.port, 1) != 0 || n4_connect(&e, env.port, 1) != 0)
		return;
	d.uid = d.gid = 1000; /* the victim's principal */
	if (!CHECK_EQ(n4_setup(&d, "victim"), 0, "victim (AUTH_SYS 1000:1000) set up") ||
	    !CHECK_EQ(n4_setup(&e, "attacker"), 0, "attacker (AUTH_SYS 0:0) set up"))
		return;
	CHECK_EQ(lone_op(&e, N4_DESTROY_SESSION, d.session, 0, NULL, 0), N4ERR_WRONG_CRED,
		 "attacker: DESTROY_SESSION of the victim's session");
	CHECK_EQ(lone_op(&e, N4_BIND_CONN_TO_SESSION, d.session, 0, bind_args, 2), N4ERR_WRONG_CRED,
		 "attacker: BIND_CONN_TO_SESSION to the victim's session");
	CHECK_EQ(lone_op(&e, N4_DESTROY_CLIENTID, NULL, d.cid, NULL, 0), N4ERR_WRONG_CRED,
		 "attacker: DESTROY_CLIENTID of the victim's client ID");
	CHECK_EQ(n4_sequence(&d), N4_OK, "the victim's session still works");
	CHECK_EQ(lone_op(&d, N4_DESTROY_SESSION, d.session, 0, NULL, 0), N4_OK, "the victim destroys its own session");
	CHECK_EQ(lone_op(&d, N4_DESTROY_CLIENTID, NULL, d.cid, NULL, 0), N4_OK, "... and its own client ID");
	n4_client_close(&d);
	n4_client_close(&e);
}

/* ---- 11. SECINFO under AUTH_NONE -------------------------------------------- */

/* The flavors of a SECINFO(_NO_NAME) result: the first, or -1. */
static int first_flavor(struct raw_reply *r, uint32_t *n)
{
	*n = xd_u32(&r->body);
	return *n ? (int)xd_u32(&r->body) : -1;
}

static void test_secinfo_auth_none(void)
{
	char parent[4096], *slash;
	const char *name = parent;
	struct raw_reply r;
	struct n4_client k, k40;
	struct n4_file root;
	struct xb a, w;
	uint32_t nw, n = 0;
	int st, flavor = -1;

	hx_section("11: SECINFO and SECINFO_NO_NAME under AUTH_NONE of a sec=sys export");
	if (!CHECK_EQ(n4_start(&k, env.port, 1, "secinfo"), 0, "4.1 client set up (AUTH_SYS)") ||
	    n4_connect(&k40, env.port, 0) != 0)
		return;
	xb_init(&w);
	nw = n4_walk(&w, env.export_dir);
	n4_begin(&k, &a, nw + 1);
	xb_raw(&a, w.p, w.len);
	xb_free(&w);
	xb_u32(&a, N4_GETFH);
	st = n4_call(&k, &a, &r);
	for (uint32_t i = 0; st == 0 && i < nw; i++)
		n4_res(&r, i ? N4_LOOKUP : N4_PUTROOTFH);
	const uint8_t *p = st == 0 && n4_res(&r, N4_GETFH) == 0 ? xd_opaque(&r.body, &root.fh_len, FH_MAX) : NULL;
	if (p)
		memcpy(root.fh, p, root.fh_len);
	raw_reply_free(&r);
	if (!CHECK(p != NULL, "the export root's handle (AUTH_SYS)"))
		return;
	/* 4.0 SECINFO of the first directory on the way to the export, from the
	 * root: AUTH_NONE can walk no further, as no export beneath takes it
	 * (RFC 8881 §2.6.3.1.1.3: a pseudo directory takes its exports' flavors). */
	k40.auth_none = true;
	snprintf(parent, sizeof(parent), "%.4000s", env.export_dir + 1);
	slash = strchr(parent, '/');
	if (slash)
		*slash = '\0';
	xb_init(&a);
	n4_hdr(&a, 0, 2);
	nw = 1;
	xb_u32(&a, N4_PUTROOTFH);
	xb_u32(&a, N4_SECINFO);
	xb_string(&a, name);
	st = n4_call(&k40, &a, &r);
	for (uint32_t i = 0; st == 0 && i < nw; i++)
		n4_res(&r, i ? N4_LOOKUP : N4_PUTROOTFH);
	if (st == 0 && n4_res(&r, N4_SECINFO) == 0)
		flavor = first_flavor(&r, &n);
	raw_reply_free(&r);
	CHECK_EQ(st, N4_OK, "AUTH_NONE: PUTROOTFH + SECINFO of /%s (4.0)", name);
	CHECK(n == 1 && flavor == 1, "it lists AUTH_SYS alone (%u flavors, first %d)", n, flavor);
	/* 4.1 SECINFO_NO_NAME of the export's root; GETATTR there stays WRONGSEC. */
	k.auth_none = true;
	n4_begin(&k, &a, 2);
	n4_xb_putfh(&a, root.fh, root.fh_len);
	xb_u32(&a, N4_SECINFO_NO_NAME);
	xb_u32(&a, 0); /* SECINFO_STYLE4_CURRENT_FH */
	flavor = -1, n = 0;
	st = fh_op_send(&k, &a, N4_SECINFO_NO_NAME, &r);
	if (st == 0)
		flavor = first_flavor(&r, &n);
	raw_reply_free(&r);
	CHECK_EQ(st, N4_OK, "AUTH_NONE: SECINFO_NO_NAME of the export's root (4.1)");
	CHECK(n == 1 && flavor == 1, "it lists AUTH_SYS alone (%u flavors, first %d)", n, flavor);
	fh_op_begin(&k, &a, &root, N4_GETATTR);
	xb_u32(&a, 1);
	xb_u32(&a, 1u << 1);
	st = fh_op_send(&k, &a, N4_GETATTR, &r);
	raw_reply_free(&r);
	CHECK_EQ(st, N4ERR_WRONGSEC, "AUTH_NONE: GETATTR there is still WRONGSEC");
	n4_client_close(&k);
	n4_client_close(&k40);
}

/* ---- the whole run ----------------------------------------------------------- */

/* Defect 1 again under the export options a new admin gets (secure, root_squash): the clients
 * connect from reserved ports (root), their files belong to the squashed root. */
static void test_default_export(void)
{
	struct n4_watch w;

	hx_section("1 again, with the default export options (secure, root_squash)");
	if (geteuid() != 0) {
		hx_note("not root: no reserved ports, the default-options run is left out");
		return;
	}
	unlink(hx_xpath(&env, "a-file"));
	/* The first run's clients are not this one's: no grace period (the records go, the config stays default). */
	unlink(hx_path(&env, "state/nfs4-clients"));
	chmod(env.export_dir, 0777); /* the squashed root creates the file */
	if (!CHECK(hx_write_exports(&env, "%s 127.0.0.1(rw)\n", env.export_dir) == 0, "exports: 127.0.0.1(rw) only") ||
	    hx_daemon_start(&env) != 0)
		return;
	n4_reserved_ports = true;
	if (CHECK_EQ(n4_watch_start(&w, env.port, "neighbour-default"), 0, "the neighbour client is set up")) {
		test_stateid_owner();
		double slowest = n4_watch_stop(&w);
		CHECK(w.failed == 0 && slowest <= N4_LIVE_S, "the neighbour was answered within %.0f s throughout "
		      "(%u calls, %u failed, slowest %.3f s)", N4_LIVE_S, w.calls, w.failed, slowest);
	}
	struct stat sb;
	CHECK(stat(hx_xpath(&env, "a-file"), &sb) == 0 && sb.st_uid == 65534,
	      "A's file was made by the squashed root (uid %u)", (unsigned)sb.st_uid);
	n4_reserved_ports = false;
	hx_daemon_stop(&env);
}

int main(int argc, char **argv)
{
	struct n4_watch w;
	struct n4_client fresh;
	long fds0, rss0, fds1, rss1;

	hx_begin("nfs4_hostile_sid", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (!CHECK_EQ(n4_watch_start(&w, env.port, "neighbour"), 0, "the neighbour client is set up"))
		return hx_end();
	fds0 = n4_proc_fds(env.pid);
	rss0 = n4_proc_rss_kb(env.pid);
	test_stateid_owner();
	test_reply_limits();
	test_verify_truncated();
	test_sessions();
	test_secinfo_auth_none();

	hx_section("the neighbour, a fresh client and the daemon's resources");
	double slowest = n4_watch_stop(&w);
	CHECK(w.failed == 0, "the neighbour's %u calls all answered NFS4_OK (%u failed, last %d)", w.calls, w.failed,
	      w.last_bad_status);
	CHECK(slowest <= N4_LIVE_S, "the neighbour was answered within %.0f s throughout (slowest %.3f s)", N4_LIVE_S,
	      slowest);
	double t0 = now_s();
	CHECK(n4_start(&fresh, env.port, 1, "fresh") == 0 && n4_getattr_root(&fresh) == 0 && now_s() - t0 <= N4_LIVE_S,
	      "a fresh client is set up and answered within %.0f s (%.3f s)", N4_LIVE_S, now_s() - t0);
	n4_client_close(&fresh);
	fds1 = n4_proc_fds(env.pid);
	rss1 = n4_proc_rss_kb(env.pid);
	CHECK(fds0 > 0 && fds1 <= fds0 + FDS_SLACK, "descriptors at most %d above the start (%ld -> %ld)", FDS_SLACK,
	      fds0, fds1);
	CHECK(rss0 > 0 && rss1 <= rss0 + RSS_SLACK_KB, "resident memory at most %d KiB above the start (%ld -> %ld KiB)",
	      RSS_SLACK_KB, rss0, rss1);
	CHECK(hx_daemon_alive(&env), "daemon still running at the end");
	hx_daemon_stop(&env);
	test_default_export();
	return hx_end();
}
