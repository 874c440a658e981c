/*
 * test_malformed.c - bad input over TCP gets the protocol's answer and
 * never takes the daemon down (RFC 5531 §9, §11):
 *  - unknown program: PROG_UNAVAIL; wrong NFS version: PROG_MISMATCH 3..4;
 *    wrong MOUNT version: PROG_MISMATCH around 3; unknown procedure:
 *    PROC_UNAVAIL; rpcvers 3: MSG_DENIED RPC_MISMATCH 2..2;
 *  - truncated or inconsistent arguments: GARBAGE_ARGS, connection kept;
 *  - bad credentials: MSG_DENIED AUTH_ERROR;
 *  - garbage, empty and REPLY-type records: no crash; oversized records
 *    (one huge fragment, or fragments adding up past the limit): the
 *    connection is closed;
 *  - record marking done right the hard way (4-byte fragments, a call
 *    dribbled byte by byte, ten calls in one write) is answered.
 * After each case a NULL call on a fresh connection must be answered.
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;
static uint8_t root[64];
static uint32_t root_len;

static bool fresh_null_ok(void)
{
	struct raw_conn c;
	struct raw_reply r;
	bool ok = false;

	if (raw_connect(&c, env.port) != 0)
		return false;
	ok = raw_call(&c, 0x4e554c4c, RAW_NFS_PROG, 3, 0, NULL, 0, &r) == RAW_RECV_OK &&
	     r.xid == 0x4e554c4c && r.reply_stat == 0 && r.accept_stat == 0;
	raw_reply_free(&r);
	raw_close(&c);
	return ok;
}

static void still_serving(const char *after)
{
	CHECK(hx_daemon_alive(&env) && fresh_null_ok(), "daemon alive and answering NULL after %s", after);
}

/* One call on a fresh connection; r filled on RAW_RECV_OK. */
static enum raw_recv_result one_call(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
				     const void *args, size_t len, struct raw_reply *r)
{
	struct raw_conn c;
	enum raw_recv_result rr;

	memset(r, 0, sizeof(*r));
	if (raw_connect(&c, env.port) != 0)
		return RAW_RECV_CLOSED;
	rr = raw_call(&c, xid, prog, vers, proc, args, len, r);
	raw_close(&c);
	return rr;
}

static void test_dispatch_errors(void)
{
	struct raw_reply r;

	hx_section("program, version, procedure");
	if (CHECK(one_call(0x100, 400123, 1, 0, NULL, 0, &r) == RAW_RECV_OK, "unknown program answered"))
		CHECK(r.reply_stat == 0 && r.accept_stat == 1, "PROG_UNAVAIL (reply_stat %u accept_stat %u)",
		      r.reply_stat, r.accept_stat);
	raw_reply_free(&r);
	/* Versions 3 and 4 are served (NFSv4 by default). */
	if (CHECK(one_call(0x101, RAW_NFS_PROG, 2, 0, NULL, 0, &r) == RAW_RECV_OK, "NFS version 2 answered"))
		CHECK(r.reply_stat == 0 && r.accept_stat == 2 && r.low == 3 && r.high == 4,
		      "PROG_MISMATCH 3..4 (accept_stat %u, %u..%u)", r.accept_stat, r.low, r.high);
	raw_reply_free(&r);
	if (CHECK(one_call(0x102, RAW_NFS_PROG, 5, 0, NULL, 0, &r) == RAW_RECV_OK, "NFS version 5 answered"))
		CHECK(r.reply_stat == 0 && r.accept_stat == 2 && r.low == 3 && r.high == 4,
		      "PROG_MISMATCH 3..4 (accept_stat %u, %u..%u)", r.accept_stat, r.low, r.high);
	raw_reply_free(&r);
	if (CHECK(one_call(0x103, RAW_MOUNT_PROG, 99, 0, NULL, 0, &r) == RAW_RECV_OK, "MOUNT version 99 answered"))
		CHECK(r.reply_stat == 0 && r.accept_stat == 2 && r.low <= 3 && r.high >= 3 && r.high < 99,
		      "PROG_MISMATCH including 3 (accept_stat %u, %u..%u)", r.accept_stat, r.low, r.high);
	raw_reply_free(&r);
	if (CHECK(one_call(0x104, RAW_NFS_PROG, 3, 22, NULL, 0, &r) == RAW_RECV_OK, "NFS procedure 22 answered"))
		CHECK(r.reply_stat == 0 && r.accept_stat == 3, "PROC_UNAVAIL (accept_stat %u)", r.accept_stat);
	raw_reply_free(&r);
	if (CHECK(one_call(0x105, RAW_NFS_PROG, 3, 0xffffffffu, NULL, 0, &r) == RAW_RECV_OK,
		  "NFS procedure 0xffffffff answered"))
		CHECK(r.reply_stat == 0 && r.accept_stat == 3, "PROC_UNAVAIL (accept_stat %u)", r.accept_stat);
	raw_reply_free(&r);
	if (CHECK(one_call(0x106, RAW_MOUNT_PROG, 3, 6, NULL, 0, &r) == RAW_RECV_OK, "MOUNT procedure 6 answered"))
		CHECK(r.reply_stat == 0 && r.accept_stat == 3, "PROC_UNAVAIL (accept_stat %u)", r.accept_stat);
	raw_reply_free(&r);
	still_serving("dispatch errors");
}

/* The call b (freed here) alone on a new connection: true with its reply in r (the caller frees it). */
static bool call_alone(struct xb *b, struct raw_reply *r, const char *what)
{
	struct raw_conn c;
	bool ok = raw_connect(&c, env.port) == 0 && raw_send_record(&c, b->p, b->len) == 0 &&
		  CHECK(raw_recv_reply(&c, r, 5000) == RAW_RECV_OK, "%s answered", what);

	raw_close(&c);
	xb_free(b);
	return ok;
}

/* A CALL header of NFSv3 proc with RPC version rpcvers, up to the credential. */
static void xb_call_to(struct xb *b, uint32_t xid, uint32_t rpcvers, uint32_t proc)
{
	xb_init(b);
	xb_u32(b, xid);
	xb_u32(b, 0); /* CALL */
	xb_u32(b, rpcvers);
	xb_u32(b, RAW_NFS_PROG);
	xb_u32(b, 3);
	xb_u32(b, proc);
}

/* MSG_DENIED AUTH_ERROR AUTH_BADCRED expected in r (freed here). */
static void check_badcred(struct raw_reply *r)
{
	CHECK(r->reply_stat == 1 && r->reject_stat == 1 && r->auth_stat == 1,
	      "MSG_DENIED AUTH_ERROR AUTH_BADCRED (reply_stat %u reject %u auth %u)", r->reply_stat, r->reject_stat,
	      r->auth_stat);
	raw_reply_free(r);
}

static void test_rpc_mismatch_and_auth(void)
{
	struct raw_reply r;
	struct xb b;
	unsigned i;

	hx_section("RPC version and credentials");
	/* rpcvers 3 */
	xb_call_to(&b, 0x200, 3, 0);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	if (call_alone(&b, &r, "rpcvers 3")) {
		CHECK(r.xid == 0x200 && r.reply_stat == 1 && r.reject_stat == 0 && r.low == 2 && r.high == 2,
		      "MSG_DENIED RPC_MISMATCH 2..2 (reply_stat %u reject_stat %u %u..%u)", r.reply_stat,
		      r.reject_stat, r.low, r.high);
		raw_reply_free(&r);
	}

	/* Unknown credential flavor 99. */
	xb_call_to(&b, 0x201, 2, 1); /* GETATTR: needs credentials */
	xb_u32(&b, 99);
	xb_opaque(&b, "abcd", 4);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_opaque(&b, root, root_len);
	if (call_alone(&b, &r, "credential flavor 99")) {
		CHECK(r.reply_stat == 1 && r.reject_stat == 1, "MSG_DENIED AUTH_ERROR (reply_stat %u reject %u auth %u)",
		      r.reply_stat, r.reject_stat, r.auth_stat);
		raw_reply_free(&r);
	}

	/* AUTH_SYS with 17 gids (RFC 5531 appendix A allows 16). */
	xb_call_to(&b, 0x202, 2, 1);
	xb_u32(&b, 1);
	xb_u32(&b, 4 + 4 + 4 + 4 + 4 + 17 * 4);
	xb_u32(&b, 0);        /* stamp */
	xb_u32(&b, 0);        /* machine name "" */
	xb_u32(&b, 0);        /* uid */
	xb_u32(&b, 0);        /* gid */
	xb_u32(&b, 17);
	for (i = 0; i < 17; i++)
		xb_u32(&b, i);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_opaque(&b, root, root_len);
	if (call_alone(&b, &r, "AUTH_SYS with 17 gids"))
		check_badcred(&r);

	/* AUTH_SYS whose machine name length runs past the credential. */
	xb_call_to(&b, 0x203, 2, 1);
	xb_u32(&b, 1);
	xb_u32(&b, 20);
	xb_u32(&b, 0);
	xb_u32(&b, 0xfffffff0u);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_opaque(&b, root, root_len);
	if (call_alone(&b, &r, "AUTH_SYS with a bad name length"))
		check_badcred(&r);
	still_serving("bad credentials");
}

/* Calls with broken arguments on one connection: each GARBAGE_ARGS, the connection stays. */
static void test_garbage_args(void)
{
	struct raw_conn c;
	struct raw_reply r;
	struct xb a;
	uint8_t big[80];
	uint32_t xid = 0x300;
	int st;

	hx_section("truncated and inconsistent arguments");
	if (!CHECK(raw_connect(&c, env.port) == 0, "connection"))
		return;
#define GARBAGE(proc, what) do {                                                                  \
		xid++;                                                                            \
		if (CHECK(raw_call(&c, xid, RAW_NFS_PROG, 3, (proc), a.p, a.len, &r) == RAW_RECV_OK, \
			  "%s answered", what))                                                  \
			CHECK(r.xid == xid && r.reply_stat == 0 && r.accept_stat == 4,           \
			      "%s: GARBAGE_ARGS (reply_stat %u accept_stat %u)", what,         \
			      r.reply_stat, r.accept_stat);                                      \
		raw_reply_free(&r);                                                               \
		xb_free(&a);                                                                      \
		xb_init(&a);                                                                      \
	} while (0)

	xb_init(&a);
	GARBAGE(1, "GETATTR without arguments");
	xb_u32(&a, 32);
	xb_raw(&a, root, 8);
	GARBAGE(1, "GETATTR with a handle of length 32 but 8 bytes");
	xb_opaque(&a, root, root_len);
	GARBAGE(3, "LOOKUP without a name");
	xb_opaque(&a, root, root_len);
	xb_u32(&a, 0xffffffffu);
	GARBAGE(3, "LOOKUP with name length 0xffffffff");
	xb_opaque(&a, root, root_len);
	xb_u64(&a, 0);
	xb_u32(&a, 100);
	xb_u32(&a, 2);
	xb_u32(&a, 1024 * 1024);
	xb_raw(&a, "short", 5);
	GARBAGE(7, "WRITE whose data length (1 MiB) runs past the record");
	xb_opaque(&a, root, root_len);
	xb_u64(&a, 0);
	xb_u32(&a, 4);
	xb_u32(&a, 2);
	xb_u32(&a, 0xfffffffcu);
	GARBAGE(7, "WRITE with data length 0xfffffffc");
	xb_opaque(&a, root, root_len);
	xb_string(&a, "x");
	xb_u32(&a, 7); /* createmode3 out of range */
	GARBAGE(8, "CREATE with createmode3 7");

	/* A handle longer than NFS3_FHSIZE: XDR says GARBAGE_ARGS, a server may say BADHANDLE. */
	memset(big, 0x41, sizeof(big));
	xb_opaque(&a, big, 65);
	xid++;
	if (CHECK(raw_call(&c, xid, RAW_NFS_PROG, 3, 1, a.p, a.len, &r) == RAW_RECV_OK,
		  "GETATTR with a 65-byte handle answered")) {
		st = r.reply_stat == 0 && r.accept_stat == 0 ? (int)xd_u32(&r.body) : -1;
		CHECK((r.reply_stat == 0 && r.accept_stat == 4) || st == NFS3ERR_BADHANDLE,
		      "65-byte handle: GARBAGE_ARGS or NFS3ERR_BADHANDLE (accept_stat %u, %s)", r.accept_stat,
		      hx_nfsstat_name(st));
	}
	raw_reply_free(&r);
	xid++;
	if (CHECK(raw_call(&c, xid, RAW_MOUNT_PROG, 3, 1, NULL, 0, &r) == RAW_RECV_OK, "MNT without a path answered"))
		CHECK(r.reply_stat == 0 && r.accept_stat == 4, "MNT without a path: GARBAGE_ARGS (accept_stat %u)",
		      r.accept_stat);
	raw_reply_free(&r);
	xb_free(&a);
#undef GARBAGE

	/* A name with a NUL inside must not be cut at the NUL ("hello\0x" is not "hello"). */
	xb_opaque(&a, root, root_len);
	xb_opaque(&a, "hello\0x", 7);
	xid++;
	if (CHECK(raw_call(&c, xid, RAW_NFS_PROG, 3, 3, a.p, a.len, &r) == RAW_RECV_OK,
		  "LOOKUP \"hello\\0x\" answered")) {
		st = r.reply_stat == 0 && r.accept_stat == 0 ? (int)xd_u32(&r.body) : -1;
		CHECK(st != NFS3_OK, "LOOKUP of a name with a NUL byte does not find \"hello\" (accept_stat %u, %s)",
		      r.accept_stat, hx_nfsstat_name(st));
	}
	raw_reply_free(&r);
	xb_free(&a);
	xb_init(&a);

	xid++;
	CHECK(raw_call(&c, xid, RAW_NFS_PROG, 3, 0, NULL, 0, &r) == RAW_RECV_OK && r.xid == xid &&
	      r.accept_stat == 0, "the same connection still answers NULL after the bad calls");
	raw_reply_free(&r);
	raw_close(&c);
	still_serving("GARBAGE_ARGS cases");
}

/* After a bad record: no reply, or the connection closed; never a crash. */
static void bad_record(const char *what, const void *rec, size_t len, bool framed)
{
	struct raw_conn c;
	struct raw_reply r;
	enum raw_recv_result rr;

	if (!CHECK(raw_connect(&c, env.port) == 0, "connection for %s", what))
		return;
	if (framed)
		raw_send_record(&c, rec, len);
	else
		raw_send_bytes(&c, rec, len);
	rr = raw_recv_reply(&c, &r, 1000);
	CHECK(rr != RAW_RECV_OK || r.reply_stat != 0 || r.accept_stat != 0,
	      "%s: no successful reply (%s)", what, rr == RAW_RECV_OK ? "a rejection" :
	      rr == RAW_RECV_CLOSED ? "connection closed" : rr == RAW_RECV_TIMEOUT ? "no reply" : "garbage back");
	raw_reply_free(&r);
	raw_close(&c);
	still_serving(what);
}

static void test_bad_records(void)
{
	uint8_t junk[64];
	uint64_t seed = 0xbad;
	struct xb b;

	hx_section("garbage records");
	hx_fill(&seed, junk, sizeof(junk));
	bad_record("a 64-byte random record", junk, sizeof(junk), true);
	bad_record("a 3-byte record", junk, 3, true);
	bad_record("an empty record", junk, 0, true);
	xb_init(&b);
	xb_u32(&b, 0x400);
	xb_u32(&b, 1); /* REPLY */
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	xb_u32(&b, 0);
	bad_record("a REPLY message sent to the server", b.p, b.len, true);
	xb_free(&b);
	bad_record("random bytes without record marking", junk, sizeof(junk), false);
}

static void test_oversized(void)
{
	struct raw_conn c;
	struct raw_reply r;
	enum raw_recv_result rr;
	uint8_t *chunk;
	uint32_t mark;
	double t0;
	int i;

	hx_section("oversized records");
	if (CHECK(raw_connect(&c, env.port) == 0, "connection")) {
		mark = htonl(0x80000000u | 0x7fffffffu);
		raw_send_bytes(&c, &mark, 4);
		raw_send_bytes(&c, "\0\0\0\1\0\0\0\0", 8);
		t0 = hx_now();
		rr = raw_recv_reply(&c, &r, 5000);
		CHECK(rr == RAW_RECV_CLOSED, "a 2 GiB record header: connection closed (%s after %.2f s)",
		      rr == RAW_RECV_TIMEOUT ? "still open" : rr == RAW_RECV_OK ? "a reply" : "closed",
		      hx_now() - t0);
		raw_reply_free(&r);
		raw_close(&c);
	}
	still_serving("a 2 GiB record header");

	chunk = calloc(1, 512 * 1024);
	if (chunk && CHECK(raw_connect(&c, env.port) == 0, "connection")) {
		/* Non-final fragments adding up to 4 MiB (the limit is about 1 MiB). */
		for (i = 0; i < 8; i++)
			if (raw_send_fragment(&c, chunk, 512 * 1024, false) != 0)
				break;
		rr = raw_recv_reply(&c, &r, 5000);
		CHECK(rr == RAW_RECV_CLOSED, "fragments adding up to 4 MiB: connection closed (%d of 8 sent; %s)",
		      i, rr == RAW_RECV_TIMEOUT ? "still open" : rr == RAW_RECV_OK ? "a reply" : "closed");
		raw_reply_free(&r);
		raw_close(&c);
	}
	free(chunk);
	still_serving("fragments past the record limit");
}

static void test_framing(void)
{
	struct raw_conn c;
	struct raw_reply r;
	struct xb b, all;
	unsigned i, got = 0, inorder = 0;
	size_t off;

	hx_section("record marking the hard way");
	xb_init(&b);
	xb_call_header(&b, 0x500, RAW_NFS_PROG, 3, 1, 0, 0);
	xb_opaque(&b, root, root_len);
	if (CHECK(raw_connect(&c, env.port) == 0, "connection")) {
		for (off = 0; off < b.len; off += 4)
			raw_send_fragment(&c, b.p + off, b.len - off > 4 ? 4 : b.len - off, off + 4 >= b.len);
		if (CHECK(raw_recv_reply(&c, &r, 5000) == RAW_RECV_OK, "GETATTR in 4-byte fragments answered"))
			CHECK(r.xid == 0x500 && r.accept_stat == 0 && xd_u32(&r.body) == NFS3_OK,
			      "and it is NFS3_OK");
		raw_reply_free(&r);

		xb_init(&all);
		{
			uint32_t mark = htonl(0x80000000u | (uint32_t)b.len);

			xb_raw(&all, &mark, 4);
			xb_raw(&all, b.p, b.len);
		}
		all.p[4 + 3] = 0x01; /* xid 0x501 */
		for (off = 0; off < all.len; off++) {
			raw_send_bytes(&c, all.p + off, 1);
			if (off % 8 == 0)
				usleep(2000);
		}
		if (CHECK(raw_recv_reply(&c, &r, 5000) == RAW_RECV_OK, "a call dribbled byte by byte answered"))
			CHECK(r.xid == 0x501 && r.accept_stat == 0, "with its xid");
		raw_reply_free(&r);
		xb_free(&all);

		xb_init(&all);
		for (i = 0; i < 10; i++) {
			uint32_t mark = htonl(0x80000000u | (uint32_t)b.len);

			b.p[3] = (uint8_t)(0x10 + i);
			xb_raw(&all, &mark, 4);
			xb_raw(&all, b.p, b.len);
		}
		raw_send_bytes(&c, all.p, all.len);
		for (i = 0; i < 10; i++) {
			if (raw_recv_reply(&c, &r, 5000) != RAW_RECV_OK)
				break;
			got++;
			if ((r.xid & 0xff) >= 0x10 && (r.xid & 0xff) < 0x1a && r.accept_stat == 0)
				inorder++;
			raw_reply_free(&r);
		}
		CHECK(got == 10 && inorder == 10, "ten calls in one write: ten replies (%u, %u valid)", got, inorder);
		xb_free(&all);
		raw_close(&c);
	}
	xb_free(&b);
	still_serving("fragmented calls");
}

/* Clients that vanish: mid-record, and before a 1 MiB READ reply is written (EPIPE/RST). */
static void test_vanishing_clients(void)
{
	struct raw_conn c;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct xb b;
	uint8_t *half;
	unsigned i;

	hx_section("clients that disappear");
	hx_write_file(hx_xpath(&env, "big1m"), NULL, 0, 0644);
	if (truncate(hx_xpath(&env, "big1m"), 1024 * 1024) != 0)
		perror("truncate");
	/* Half of a 512 KiB WRITE record, then close. */
	half = calloc(1, 256 * 1024);
	xb_init(&b);
	xb_call_header(&b, 0x600, RAW_NFS_PROG, 3, 7, 0, 0);
	xb_opaque(&b, root, root_len);
	for (i = 0; i < 5 && half; i++) {
		uint32_t mark = htonl(0x80000000u | (512u * 1024));

		if (raw_connect(&c, env.port) != 0)
			break;
		raw_send_bytes(&c, &mark, 4);
		raw_send_bytes(&c, b.p, b.len);
		raw_send_bytes(&c, half, 256 * 1024 - b.len);
		raw_close(&c);
	}
	xb_free(&b);
	free(half);
	still_serving("five clients that closed in the middle of a record");

	/* READ 1 MiB and reset the connection before the reply is written. */
	for (i = 0; i < 20; i++) {
		if (raw_connect(&c, env.port) != 0)
			break;
		xb_init(&b);
		xb_call_header(&b, 0x700 + i, RAW_NFS_PROG, 3, 3, 0, 0); /* LOOKUP big1m */
		xb_opaque(&b, root, root_len);
		xb_string(&b, "big1m");
		raw_send_record(&c, b.p, b.len);
		xb_free(&b);
		{
			struct raw_reply r;
			uint32_t n;
			const uint8_t *p;

			if (raw_recv_reply(&c, &r, 5000) == RAW_RECV_OK && xd_u32(&r.body) == NFS3_OK &&
			    (p = xd_opaque(&r.body, &n, 64)) != NULL) {
				xb_init(&b);
				xb_call_header(&b, 0x800 + i, RAW_NFS_PROG, 3, 6, 0, 0); /* READ 1 MiB */
				xb_opaque(&b, p, n);
				xb_u64(&b, 0);
				xb_u32(&b, 1024 * 1024);
				raw_send_record(&c, b.p, b.len);
				xb_free(&b);
			}
			raw_reply_free(&r);
		}
		setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		raw_close(&c); /* RST: the server's reply write fails */
	}
	usleep(200000);
	still_serving("twenty clients that reset the connection before a 1 MiB READ reply");
}

int main(int argc, char **argv)
{
	struct raw_conn c;
	int st;

	hx_begin("malformed", argc, argv);
	hx_env_init(&env);
	hx_write_file(hx_xpath(&env, "hello"), "hello", 5, 0644);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (!CHECK(raw_connect(&c, env.mount_port) == 0, "raw connection"))
		return hx_end();
	st = raw_mnt(&c, 1, env.export_dir, root, &root_len);
	raw_close(&c);
	if (!CHECK(st == MNT3_OK, "MNT (%s)", hx_mntstat_name(st)))
		return hx_end();
	test_dispatch_errors();
	test_rpc_mismatch_and_auth();
	test_garbage_args();
	test_bad_records();
	test_oversized();
	test_framing();
	test_vanishing_clients();
	CHECK(hx_daemon_alive(&env), "daemon still running at the end");
	hx_daemon_stop(&env);
	return hx_end();
}
