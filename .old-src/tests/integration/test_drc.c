/*
 * test_drc.c - the duplicate request cache (RFC 5531 §9: a server may use
 * the xid to detect retransmissions): the same non-idempotent call
 * (REMOVE, MKDIR, RENAME, CREATE GUARDED) sent twice with one XID on one
 * TCP connection gets the same answer twice, NFS3_OK, the second from the
 * cache rather than NOENT/EXIST; the same call under a fresh XID executes
 * again and fails as it should. Also a duplicate sent while the first is
 * still in progress. Uses the hand-written client in rawrpc.c.
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;
static uint8_t root[64];
static uint32_t root_len;

static void enc_diropargs(struct xb *b, const char *name)
{
	xb_opaque(b, root, root_len);
	xb_string(b, name);
}

static void enc_sattr_mode(struct xb *b, uint32_t mode)
{
	xb_u32(b, 1); /* set_mode3 */
	xb_u32(b, mode);
	xb_u32(b, 0); /* uid */
	xb_u32(b, 0); /* gid */
	xb_u32(b, 0); /* size */
	xb_u32(b, 0); /* atime DONT_CHANGE */
	xb_u32(b, 0); /* mtime DONT_CHANGE */
}

/* Send one call record; receive one reply; return nfsstat3 or -1. */
static int send_and_status(struct raw_conn *c, const struct xb *rec, uint32_t xid)
{
	struct raw_reply r;
	enum raw_recv_result rr;
	int st = -1;

	if (raw_send_record(c, rec->p, rec->len) != 0)
		return -1;
	rr = raw_recv_reply(c, &r, 10000);
	if (rr != RAW_RECV_OK)
		printf("# XID 0x%x: %s\n", xid, rr == RAW_RECV_TIMEOUT ? "no reply within 10 s" :
		       rr == RAW_RECV_CLOSED ? "connection closed" : "unparsable reply");
	if (rr == RAW_RECV_OK) {
		if (r.xid == xid && r.reply_stat == 0 && r.accept_stat == 0)
			st = (int)xd_u32(&r.body);
		else
			printf("# reply xid 0x%x (want 0x%x) reply_stat %u accept_stat %u\n", r.xid, xid,
			       r.reply_stat, r.accept_stat);
	}
	raw_reply_free(&r);
	return st;
}

static void dup_case(struct raw_conn *c, const char *what, uint32_t proc, const struct xb *args,
		     uint32_t xid, int fresh_expect, const char *gone_or_made, bool expect_exists)
{
	struct xb rec;
	int st1, st2, st3;

	hx_section("%s retransmitted with the same XID", what);
	xb_init(&rec);
	xb_call_header(&rec, xid, RAW_NFS_PROG, 3, proc, 0, 0);
	xb_raw(&rec, args->p, args->len);
	st1 = send_and_status(c, &rec, xid);
	CHECK_NFS(st1, NFS3_OK, "%s, XID 0x%x, first transmission", what, xid);
	st2 = send_and_status(c, &rec, xid);
	CHECK_NFS(st2, NFS3_OK, "%s, XID 0x%x, retransmission answered from the cache", what, xid);
	CHECK((access(hx_xpath(&env, "%s", gone_or_made), F_OK) == 0) == expect_exists,
	      "disk: %s %s", gone_or_made, expect_exists ? "exists" : "is gone");
	xb_free(&rec);
	xb_init(&rec);
	xb_call_header(&rec, xid + 1, RAW_NFS_PROG, 3, proc, 0, 0);
	xb_raw(&rec, args->p, args->len);
	st3 = send_and_status(c, &rec, xid + 1);
	CHECK_NFS(st3, fresh_expect, "%s, fresh XID 0x%x, executes again", what, xid + 1);
	xb_free(&rec);
}

static void test_inprogress(struct raw_conn *c)
{
	struct xb rec;
	struct raw_reply r;
	unsigned replies = 0, ok = 0, bad = 0;
	uint32_t xid = 0x0d0c0001;
	double deadline;

	hx_section("a duplicate sent while the first is in progress");
	hx_write_file(hx_xpath(&env, "pipe"), "x", 1, 0644);
	xb_init(&rec);
	xb_call_header(&rec, xid, RAW_NFS_PROG, 3, 12 /* REMOVE */, 0, 0);
	enc_diropargs(&rec, "pipe");
	/* Both records in one send: the second arrives before the first is answered. */
	{
		struct xb two;
		uint32_t mark = htonl(0x80000000u | (uint32_t)rec.len);

		xb_init(&two);
		xb_raw(&two, &mark, 4);
		xb_raw(&two, rec.p, rec.len);
		xb_raw(&two, &mark, 4);
		xb_raw(&two, rec.p, rec.len);
		CHECK(raw_send_bytes(c, two.p, two.len) == 0, "two copies sent back to back");
		xb_free(&two);
	}
	deadline = hx_now() + 3.0;
	while (hx_now() < deadline && replies < 2) {
		if (raw_recv_reply(c, &r, 1000) != RAW_RECV_OK)
			continue;
		replies++;
		if (r.xid == xid && r.reply_stat == 0 && r.accept_stat == 0 && xd_u32(&r.body) == NFS3_OK)
			ok++;
		else
			bad++;
		raw_reply_free(&r);
	}
	CHECK(replies >= 1, "at least one reply (%u)", replies);
	CHECK(bad == 0 && ok == replies, "every reply is NFS3_OK for XID 0x%x (%u ok, %u other)", xid, ok, bad);
	CHECK(access(hx_xpath(&env, "pipe"), F_OK) != 0, "disk: pipe is gone");
	xb_free(&rec);
}

int main(int argc, char **argv)
{
	struct raw_conn c;
	struct xb a;
	int st;

	hx_begin("drc", argc, argv);
	hx_env_init(&env);
	hx_write_file(hx_xpath(&env, "victim"), "x", 1, 0644);
	hx_write_file(hx_xpath(&env, "ren-a"), "x", 1, 0644);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (!CHECK(raw_connect(&c, env.mount_port) == 0, "raw TCP connection for MOUNT"))
		return hx_end();
	st = raw_mnt(&c, 0x0d0c0000, env.export_dir, root, &root_len);
	raw_close(&c);
	if (!CHECK(st == MNT3_OK, "MNT over the raw connection (%s)", hx_mntstat_name(st)))
		return hx_end();
	if (!CHECK(raw_connect(&c, env.port) == 0, "raw TCP connection for NFS"))
		return hx_end();

	xb_init(&a);
	enc_diropargs(&a, "victim");
	dup_case(&c, "REMOVE victim", 12, &a, 0x0d0c1000, NFS3ERR_NOENT, "victim", false);
	xb_free(&a);

	xb_init(&a);
	enc_diropargs(&a, "newdir");
	enc_sattr_mode(&a, 0755);
	dup_case(&c, "MKDIR newdir", 9, &a, 0x0d0c2000, NFS3ERR_EXIST, "newdir", true);
	xb_free(&a);

	xb_init(&a);
	enc_diropargs(&a, "ren-a");
	enc_diropargs(&a, "ren-b");
	dup_case(&c, "RENAME ren-a ren-b", 14, &a, 0x0d0c3000, NFS3ERR_NOENT, "ren-b", true);
	xb_free(&a);

	xb_init(&a);
	enc_diropargs(&a, "guarded");
	xb_u32(&a, 1); /* GUARDED */
	enc_sattr_mode(&a, 0644);
	dup_case(&c, "CREATE GUARDED guarded", 8, &a, 0x0d0c4000, NFS3ERR_EXIST, "guarded", true);
	xb_free(&a);

	test_inprogress(&c);
	raw_close(&c);
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	return hx_end();
}
