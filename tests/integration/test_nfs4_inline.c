/*
 * test_nfs4_inline.c - NFSv4.1 COMPOUNDs on the receiving thread (issue 22
 * item 2; rpc/rpc_inline.h, nfs4_compound_inline_peek): a COMPOUND of only
 * NFS4_OPF_INLINE operations (SEQUENCE, PUTROOTFH, LOOKUP, GETFH, GETATTR)
 * is answered on the receiving thread, counted in rnfsctl stats' "inline
 * calls"; one with an operation that is not (READ, OPEN) goes to a worker
 * whole, before SEQUENCE runs. Both kinds interleave on one slot, so the
 * slot's sequence stays right whichever thread answered (RFC 8881
 * §2.10.6.1); every reply is checked. When the slow-call guard paused (a
 * loaded host), the counts are not asserted: no timing is. Last, uid 1234's
 * LOOKUP in root's 0700 directory: the receiving thread cannot search as the
 * caller, answers DELAY at most once and sends the retry to a worker, which
 * answers ACCESS as the kernel decides.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#define ROUNDS 20

static struct hx_env env;

/* SEQUENCE, PUTROOTFH, LOOKUP to the export, LOOKUP "data", GETFH, GETATTR(type, size): the file's
 * handle in fh; true when every result is right. */
static bool lookup_data(struct n4_client *k, uint8_t *fh, uint32_t *fh_len)
{
	uint32_t depth = n4_walk(NULL, env.export_dir) - 1, len = 0;
	struct raw_reply r;
	const uint8_t *p;
	struct xb a;
	bool ok;

	n4_begin(k, &a, 1 + depth + 3);
	n4_walk(&a, env.export_dir);
	xb_u32(&a, N4_LOOKUP);
	xb_string(&a, "data");
	xb_u32(&a, N4_GETFH);
	xb_u32(&a, N4_GETATTR);
	xb_u32(&a, 1);
	xb_u32(&a, (1u << 1) | (1u << 4)); /* type, size */
	ok = n4_call(k, &a, &r) == 0 && n4_res(&r, N4_PUTROOTFH) == 0;
	for (uint32_t i = 0; ok && i <= depth; i++)
		ok = n4_res(&r, N4_LOOKUP) == 0;
	ok = ok && n4_res(&r, N4_GETFH) == 0 && (p = xd_opaque(&r.body, &len, 128)) != NULL;
	if (ok)
		memcpy(fh, p, len), *fh_len = len;
	uint32_t words = ok && n4_res(&r, N4_GETATTR) == 0 ? xd_u32(&r.body) : 0;

	ok = ok && words >= 1 && words <= 4;
	if (ok) {
		xd_skip(&r.body, 4 * words); /* the bitmap */
		ok = xd_u32(&r.body) == 12 && xd_u32(&r.body) == 1 /* NF4REG */ && xd_u64(&r.body) == 5 &&
		     !r.body.bad;
	}
	raw_reply_free(&r);
	return ok;
}

static void test_inline_and_worker(void)
{
	struct n4_client k;
	struct n4_sid sid;
	uint8_t fh[128], ofh[128];
	uint32_t fh_len = 0, ofh_len = 0, got = 0;
	char buf[16];
	long before, after, p0, p1;
	unsigned good = 0;

	hx_section("metadata COMPOUNDs on the receiving thread, READ's on a worker, one slot");
	if (!CHECK_EQ(n4_start(&k, env.port, 1, "inline"), 0, "an NFSv4.1 client and session are set up"))
		return;
	before = hx_inline_calls(&env, &p0);
	for (int i = 0; i < ROUNDS; i++)
		good += lookup_data(&k, fh, &fh_len);
	after = hx_inline_calls(&env, &p1);
	CHECK(before >= 0 && after >= 0, "rnfsctl stats shows the inline calls");
	CHECK_EQ(good, ROUNDS, "%d LOOKUP+GETFH+GETATTR COMPOUNDs answered right", ROUNDS);
	if (p0 >= 0 && p1 == p0)
		CHECK_EQ(after - before, ROUNDS, "all %d answered on the receiving thread", ROUNDS);
	else
		printf("# the slow-call guard paused (%ld -> %ld): inline counts not checked\n", p0, p1);

	if (!CHECK_EQ(n4_open(&k, env.export_dir, "data", false, N4_ACCESS_READ, 0, "owner", NULL, &sid, ofh, &ofh_len),
		      0, "OPEN data for reading"))
		goto out;
	good = 0;
	before = hx_inline_calls(&env, &p0);
	for (int i = 0; i < ROUNDS; i++) {
		memset(buf, 0, sizeof(buf));
		good += n4_read(&k, ofh, ofh_len, &sid, 0, sizeof(buf), buf, &got) == 0 && got == 5 &&
			!memcmp(buf, "hello", 5);
		good += lookup_data(&k, fh, &fh_len); /* the same slot, the next sequence id */
	}
	after = hx_inline_calls(&env, &p1);
	CHECK_EQ(good, 2 * ROUNDS, "READ and LOOKUP COMPOUNDs interleaved on one slot: all %d answered right",
		 2 * ROUNDS);
	CHECK(ofh_len == fh_len && !memcmp(ofh, fh, fh_len), "OPEN and LOOKUP give the same handle");
	if (p0 >= 0 && p1 == p0)
		CHECK_EQ(after - before, ROUNDS, "only the %d LOOKUPs on the receiving thread, the READs on workers",
			 ROUNDS);
	CHECK_EQ(n4_close(&k, ofh, ofh_len, NULL, &sid), 0, "CLOSE");
out:
	n4_client_close(&k);
}

/* uid 1234: LOOKUP private/x, retried while DELAY (at most 3 times). */
static void test_lookup_denied(void)
{
	uint32_t depth = n4_walk(NULL, env.export_dir);
	struct n4_client k;
	int st = -1, delays = 0;

	hx_section("uid 1234's LOOKUP in root's 0700 directory: DELAY at most once, then ACCESS from a worker");
	if (!CHECK_EQ(n4_start(&k, env.port, 1, "inline-1234"), 0, "a second NFSv4.1 client"))
		return;
	k.uid = 1234, k.gid = 1234;
	for (int i = 0; i < 3; i++) {
		struct raw_reply r;
		struct xb a;

		n4_begin(&k, &a, depth + 2);
		n4_walk(&a, env.export_dir);
		xb_u32(&a, N4_LOOKUP);
		xb_string(&a, "private");
		xb_u32(&a, N4_LOOKUP);
		xb_string(&a, "x");
		st = n4_call(&k, &a, &r);
		raw_reply_free(&r);
		if (st != N4ERR_DELAY)
			break;
		delays++;
	}
	CHECK_EQ(st, N4ERR_ACCESS, "LOOKUP private/x as uid 1234");
	CHECK(delays <= 1, "at most one DELAY first (%d)", delays);
	n4_client_close(&k);
}

int main(int argc, char **argv)
{
	hx_begin("nfs4_inline", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (!CHECK_EQ(hx_write_file(hx_xpath(&env, "data"), "hello", 5, 0644), 0, "export/data written"))
		return hx_end();
	if (!CHECK(mkdir(hx_xpath(&env, "private"), 0700) == 0 &&
		   hx_write_file(hx_xpath(&env, "private/x"), "x", 1, 0644) == 0,
		   "export/private (root's, 0700) and private/x made"))
		return hx_end();
	test_inline_and_worker();
	test_lookup_denied();
	CHECK(hx_daemon_alive(&env), "daemon still running at the end");
	hx_daemon_stop(&env);
	return hx_end();
}
