/*
 * test_nlm_xdr.c - nlm/nlm4_xdr.c: NLM v4 arguments decoded field by field,
 * every truncation refused, over-long strings and netobjs refused, results
 * encoded as RFC 1813 appendix II lays them out (round trip through the
 * decoders), the NSM status notification; and nlm_errno_to_stat().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "nlm/nlm4_xdr.h"
#include "nlm/nlm_internal.h"
#include "nlm/nlm_nsm.h"
#include "nlm/nlm_reboot.h"
#include "nlm/nlm_table.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* nlm4_lockargs: cookie "ck", block, exclusive, alock {"client", fh 8 bytes, oh "1@c", svid 42, 100, 0}, reclaim, state 7 */
static size_t build_lockargs(uint8_t *buf, size_t cap, uint32_t name_len)
{
	char name[2000];
	struct xdr_enc e;

	memset(name, 'x', sizeof(name));
	memcpy(name, "client", 6);

	xdr_enc_init(&e, buf, cap);
	xdr_enc_opaque(&e, "ck", 2);
	xdr_enc_bool(&e, true);
	xdr_enc_bool(&e, true);
	xdr_enc_opaque(&e, name, name_len);
	xdr_enc_opaque(&e, "\1\2\3\4\5\6\7\10", 8);
	xdr_enc_opaque(&e, "1@c", 3);
	xdr_enc_u32(&e, 42);
	xdr_enc_u64(&e, 100);
	xdr_enc_u64(&e, 0);
	xdr_enc_bool(&e, false);
	xdr_enc_u32(&e, 7);
	assert_false(e.overflow);
	return xdr_enc_len(&e);
}

static void test_lockargs(void **state)
{
	uint8_t buf[4096];
	size_t n = build_lockargs(buf, sizeof(buf), 6);
	struct nlm4_args a;
	struct xdr_dec d;

	(void)state;
	memset(&a, 0, sizeof(a));
	xdr_dec_init(&d, buf, n);
	assert_true(nlm4_dec_lockargs(&d, &a));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_int_equal(a.cookie.len, 2);
	assert_memory_equal(a.cookie.p, "ck", 2);
	assert_true(a.block);
	assert_true(a.exclusive);
	assert_int_equal(a.alock.caller_name.len, 6);
	assert_memory_equal(a.alock.caller_name.p, "client", 6);
	assert_int_equal(a.alock.fh.len, 8);
	assert_int_equal(a.alock.oh.len, 3);
	assert_int_equal(a.alock.svid, 42);
	assert_int_equal(a.alock.l_offset, 100);
	assert_int_equal(a.alock.l_len, 0);
	assert_false(a.reclaim);
	assert_int_equal(a.state, 7);

	/* every truncation is refused */
	for (size_t cut = 0; cut < n; cut++) {
		xdr_dec_init(&d, buf, cut);
		assert_false(nlm4_dec_lockargs(&d, &a));
	}
}

static void test_limits(void **state)
{
	uint8_t buf[4096];
	struct nlm4_args a;
	struct xdr_dec d;
	size_t n;

	(void)state;
	/* XNFS LM_MAXSTRLEN: 1024 accepted, 1025 refused */
	n = build_lockargs(buf, sizeof(buf), 1024);
	xdr_dec_init(&d, buf, n);
	assert_true(nlm4_dec_lockargs(&d, &a));
	n = build_lockargs(buf, sizeof(buf), 1025);
	xdr_dec_init(&d, buf, n);
	assert_false(nlm4_dec_lockargs(&d, &a));
	/* a NUL inside caller_name is refused */
	n = build_lockargs(buf, sizeof(buf), 6);
	buf[4 + 4 + 4 + 4 + 4 + 2] = '\0'; /* cookie(4+4) block exclusive, name length, 'c','l' */
	xdr_dec_init(&d, buf, n);
	assert_false(nlm4_dec_lockargs(&d, &a));
	/* a length word of 0xffffffff */
	memset(buf, 0xff, 4);
	xdr_dec_init(&d, buf, n);
	assert_false(nlm4_dec_lockargs(&d, &a));
}

static void test_other_args(void **state)
{
	uint8_t buf[512];
	struct xdr_enc e;
	struct xdr_dec d;
	struct nlm4_args a;
	struct nlm4_share_args s;
	struct nlm4_notify_args nt;
	struct nsm_status_args st;
	size_t n;

	(void)state;
	/* unlockargs: cookie, alock */
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_opaque(&e, "", 0);
	xdr_enc_opaque(&e, "h", 1);
	xdr_enc_opaque(&e, "fh", 2);
	xdr_enc_opaque(&e, "", 0);
	xdr_enc_u32(&e, (uint32_t)-5);
	xdr_enc_u64(&e, 1);
	xdr_enc_u64(&e, 2);
	n = xdr_enc_len(&e);
	xdr_dec_init(&d, buf, n);
	memset(&a, 0, sizeof(a));
	assert_true(nlm4_dec_unlockargs(&d, &a));
	assert_int_equal(a.alock.svid, -5);
	assert_int_equal(a.alock.l_len, 2);
	for (size_t cut = 0; cut < n; cut++) {
		xdr_dec_init(&d, buf, cut);
		assert_false(nlm4_dec_unlockargs(&d, &a));
	}

	/* shareargs: mode and access over fsa_RW refused */
	for (uint32_t mode = 0; mode < 5; mode++) {
		xdr_enc_init(&e, buf, sizeof(buf));
		xdr_enc_opaque(&e, "c", 1);
		xdr_enc_opaque(&e, "h", 1);
		xdr_enc_opaque(&e, "fh", 2);
		xdr_enc_opaque(&e, "oh", 2);
		xdr_enc_u32(&e, mode);
		xdr_enc_u32(&e, NLM4_FSA_R);
		xdr_enc_bool(&e, true);
		xdr_dec_init(&d, buf, xdr_enc_len(&e));
		assert_int_equal(nlm4_dec_shareargs(&d, &s), mode <= NLM4_FSA_RW);
	}
	assert_int_equal(s.access, NLM4_FSA_R);

	/* nlm4_notify and SM status */
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_opaque(&e, "client.example", 14);
	xdr_enc_u32(&e, 3);
	xdr_enc_fixed(&e, "0123456789abcdef", 16);
	n = xdr_enc_len(&e);
	xdr_dec_init(&d, buf, n - 16);
	assert_true(nlm4_dec_notify(&d, &nt));
	assert_int_equal(nt.state, 3);
	xdr_dec_init(&d, buf, n);
	assert_true(nsm_dec_status(&d, &st));
	assert_memory_equal(st.priv, "0123456789abcdef", 16);
	xdr_dec_init(&d, buf, n - 1);
	assert_false(nsm_dec_status(&d, &st));
}

static void test_results(void **state)
{
	uint8_t buf[512];
	struct xdr_enc e;
	struct xdr_dec d;
	struct nlm4_res r = { .cookie = { (const uint8_t *)"abc", 3 }, .stat = NLM4_DENIED,
			      .holder = { .exclusive = true, .svid = 9, .oh = { (const uint8_t *)"o", 1 },
					  .l_offset = 5, .l_len = 6 } };
	struct nlm4_res back;

	(void)state;
	xdr_enc_init(&e, buf, sizeof(buf));
	nlm4_enc_testres(&e, &r);
	/* cookie (4 + 4), stat, exclusive, svid, oh (4 + 4), offset, len */
	assert_int_equal(xdr_enc_len(&e), 8 + 4 + 4 + 4 + 8 + 8 + 8);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	memset(&back, 0, sizeof(back));
	assert_true(nlm4_dec_testres(&d, &back));
	assert_int_equal(back.stat, NLM4_DENIED);
	assert_true(back.holder.exclusive);
	assert_int_equal(back.holder.svid, 9);
	assert_int_equal(back.holder.l_len, 6);

	/* GRANTED carries no holder */
	r.stat = NLM4_GRANTED_ST;
	xdr_enc_init(&e, buf, sizeof(buf));
	nlm4_enc_testres(&e, &r);
	assert_int_equal(xdr_enc_len(&e), 12);
	/* an unknown stat is refused */
	xdr_enc_init(&e, buf, sizeof(buf));
	r.stat = 10;
	nlm4_enc_res(&e, &r);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_false(nlm4_dec_res(&d, &back));
	/* shareres: cookie, stat, sequence */
	r.stat = NLM4_GRANTED_ST;
	r.sequence = 4;
	xdr_enc_init(&e, buf, sizeof(buf));
	nlm4_enc_shareres(&e, &r);
	assert_int_equal(xdr_enc_len(&e), 16);
}

static void test_granted_args(void **state)
{
	uint8_t buf[512];
	struct xdr_enc e;
	struct xdr_dec d;
	struct nlm4_args a = { .cookie = { (const uint8_t *)"k", 1 }, .exclusive = true,
			       .alock = { .caller_name = { (const uint8_t *)"srv", 3 },
					  .fh = { (const uint8_t *)"fhfh", 4 }, .oh = { (const uint8_t *)"oh", 2 },
					  .svid = 77, .l_offset = 10, .l_len = 20 } };
	struct nlm4_args b;

	(void)state;
	xdr_enc_init(&e, buf, sizeof(buf));
	nlm4_enc_testargs(&e, &a);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	memset(&b, 0, sizeof(b));
	assert_true(nlm4_dec_testargs(&d, &b));
	assert_int_equal(xdr_dec_remaining(&d), 0);
	assert_int_equal(b.alock.svid, 77);
	assert_int_equal(b.alock.l_offset, 10);
	assert_memory_equal(b.alock.fh.p, "fhfh", 4);
}

/* One XDR string holding s; the decoder's verdict and port. */
static bool uaddr(const char *s, uint16_t *port)
{
	uint8_t buf[256];
	struct xdr_enc e;
	struct xdr_dec d;

	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_opaque(&e, s, (uint32_t)strlen(s));
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	*port = 7;
	return rpcb_dec_uaddr_port(&d, port);
}

/* RFC 1833 §2.2.1 GETADDR for IPv6 GRANTED callbacks: the arguments, and the
 * universal address's port (RFC 5665 §5.2.3.4). */
static void test_rpcb_getaddr(void **state)
{
	uint8_t buf[128];
	struct xdr_enc e;
	struct xdr_dec d;
	uint16_t port;

	(void)state;
	xdr_enc_init(&e, buf, sizeof(buf));
	rpcb_enc_getaddr(&e, 100021, 4, "tcp6");
	assert_int_equal(xdr_enc_len(&e), 4 + 4 + 8 + 4 + 4); /* prog, vers, "tcp6", "", "" */
	assert_true(uaddr("::1.8.1", &port));
	assert_int_equal(port, 2049);
	assert_true(uaddr("fe80::1:2.128.0", &port));
	assert_int_equal(port, 32768);
	assert_true(uaddr("127.0.0.1.0.111", &port));
	assert_int_equal(port, 111);
	assert_true(uaddr("", &port)); /* not registered */
	assert_int_equal(port, 0);
	assert_false(uaddr("8.1", &port));      /* no host part */
	assert_false(uaddr("::1.256.1", &port));
	assert_false(uaddr("::1.1000.1", &port));
	assert_false(uaddr("::1.8.x", &port));
	assert_false(uaddr("::1..1", &port));
	assert_false(uaddr("::1.8.", &port));
	xdr_enc_init(&e, buf, sizeof(buf));
	xdr_enc_u32(&e, 40); /* a length past the end */
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_false(rpcb_dec_uaddr_port(&d, &port));
}

static void test_nsm(void **state)
{
	uint8_t buf[256];
	struct xdr_enc e;
	struct xdr_dec d;
	struct nsm_mon_args a = { .mon_name = { (const uint8_t *)"192.0.2.7", 9 },
				  .my_name = { (const uint8_t *)"127.0.0.1", 9 },
				  .my_prog = NLM_PROGRAM, .my_vers = 4, .my_proc = NLM4_NSM_NOTIFY };
	struct nsm_mon_args b;
	struct nsm_stat_res r;
	uint32_t idx, gen;
	size_t n;

	(void)state;
	nlm_nsm_priv(a.priv, 17, 3);
	assert_true(nlm_nsm_priv_parse(a.priv, &idx, &gen));
	assert_int_equal(idx, 17);
	assert_int_equal(gen, 3);
	/* XNFS §11 struct mon: mon_name, my_name (4 + 12 each), prog, vers, proc, priv[16] */
	xdr_enc_init(&e, buf, sizeof(buf));
	nsm_enc_mon(&e, &a);
	n = xdr_enc_len(&e);
	assert_int_equal(n, 16 + 16 + 12 + 16);
	xdr_dec_init(&d, buf, n);
	assert_true(nsm_dec_mon(&d, &b));
	assert_int_equal(b.my_proc, NLM4_NSM_NOTIFY);
	assert_memory_equal(b.priv, a.priv, 16);
	for (size_t cut = 0; cut < n; cut++) {
		xdr_dec_init(&d, buf, cut);
		assert_false(nsm_dec_mon(&d, &b));
	}
	/* mon_id alone (SM_UNMON): no priv */
	xdr_enc_init(&e, buf, sizeof(buf));
	nsm_enc_mon_id(&e, &a);
	assert_int_equal(xdr_enc_len(&e), n - 16);
	/* sm_stat_res: stat_succ / stat_fail, anything else refused */
	for (uint32_t st = 0; st < 3; st++) {
		xdr_enc_init(&e, buf, sizeof(buf));
		xdr_enc_u32(&e, st);
		xdr_enc_u32(&e, 5);
		xdr_dec_init(&d, buf, 8);
		assert_int_equal(nsm_dec_stat_res(&d, &r), st <= NSM_STAT_FAIL);
	}
	memcpy(a.priv, "xxxx", 4);
	assert_false(nlm_nsm_priv_parse(a.priv, &idx, &gen));
}

/* rnfsd's restart: the hosts statd still monitors, the grace period they
 * get, and a notification carrying another run's priv is not this run's. */
static void test_reboot(void **state)
{
	char dir[] = "nlm-reboot-XXXXXX", path[256];
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0xc6336402) };
	uint8_t priv[NSM_PRIV_SIZE];
	uint32_t be, len;
	char name[NLM_HOST_MAX + 1];

	(void)state;
	/* XNFS §10.4: an explicit grace period always; the default only with reclaimers */
	assert_int_equal(nlm_reboot_grace(90, false, 0), 0);
	assert_int_equal(nlm_reboot_grace(90, false, 2), 90);
	assert_int_equal(nlm_reboot_grace(3, true, 0), 3);
	assert_int_equal(nlm_reboot_grace(0, true, 5), 0);

	assert_non_null(mkdtemp(dir));
	assert_int_equal(nlm_reboot_hosts(dir), 0); /* no sm/ at all */
	snprintf(path, sizeof(path), "%s/sm", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/sm.bak", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(nlm_reboot_hosts(dir), 0);
	snprintf(path, sizeof(path), "%s/sm/198.51.100.2", dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	snprintf(path, sizeof(path), "%s/sm/.tmp", dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	snprintf(path, sizeof(path), "%s/sm.bak/198.51.100.3", dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	assert_int_equal(nlm_reboot_hosts(dir), 2); /* one to notify, one notified and not yet answered */
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);

	/* this run's tag in priv bytes 12..15: the previous run's does not match */
	nlm_nsm_reset();
	nlm_nsm_init(0x11223344);
	nlm_nsm_monitor("clienta", 7, (const struct sockaddr *)&peer, sizeof(peer)); /* no statd: call fails */
	nlm_nsm_priv(priv, 0, 1);
	be = htonl(0x11223344);
	memcpy(priv + 12, &be, 4);
	assert_true(nlm_nsm_host_of(priv, name, &len));
	assert_int_equal(len, 7);
	assert_string_equal(name, "clienta");
	be = htonl(0x11223345);
	memcpy(priv + 12, &be, 4);
	assert_false(nlm_nsm_host_of(priv, name, &len));
	nlm_nsm_reset();
}

static void test_errno_map(void **state)
{
	(void)state;
	assert_int_equal(nlm_errno_to_stat(0), NLM4_GRANTED_ST);
	assert_int_equal(nlm_errno_to_stat(EAGAIN), NLM4_DENIED);
	assert_int_equal(nlm_errno_to_stat(ENOLCK), NLM4_DENIED_NOLOCKS);
	assert_int_equal(nlm_errno_to_stat(EDEADLK), NLM4_DEADLCK);
	assert_int_equal(nlm_errno_to_stat(EROFS), NLM4_ROFS);
	assert_int_equal(nlm_errno_to_stat(ESTALE), NLM4_STALE_FH);
	assert_int_equal(nlm_errno_to_stat(EFBIG), NLM4_FBIG);
	assert_int_equal(nlm_errno_to_stat(EIO), NLM4_FAILED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lockargs),     cmocka_unit_test(test_limits),
		cmocka_unit_test(test_other_args),   cmocka_unit_test(test_results),
		cmocka_unit_test(test_granted_args), cmocka_unit_test(test_errno_map),
		cmocka_unit_test(test_nsm),
		cmocka_unit_test(test_rpcb_getaddr),
		cmocka_unit_test(test_reboot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
