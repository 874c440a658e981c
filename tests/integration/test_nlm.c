/*
 * test_nlm.c - NLM v4 (nlm/) against the real daemon with the raw RPC client:
 * TEST/LOCK/UNLOCK/CANCEL conflict semantics between two lock owners
 * (exclusive vs shared, overlapping and disjoint ranges), a local process
 * seeing an NLM lock and an NLM lock seeing a local process's, a blocking
 * LOCK answered BLOCKED and then granted by a GRANTED call to the client's
 * lock manager (a small rpcbind + NLM server in this test) when the holder
 * unlocks (through rnfsd) or a local process releases (the retry poll), a
 * cancelled waiter never granted, FREE_ALL, a forged handle, truncated
 * arguments; SM_MON/SM_UNMON to a statd in the test and its reboot
 * notification (over TCP and, as nfs-utils' statd sends it, over UDP); NLM
 * over UDP sharing the lock table with TCP (a GRANTED for a UDP waiter, NFS
 * answered PROG_UNAVAIL there); NLM and NFSv4.0 locks on one file (NFSv4 is served here too)
 * refusing each other both ways, a blocked NLM lock granted after the NFSv4
 * LOCKU (the retry poll sees the backend release), each then taking the
 * other's range; a restart with a grace period in which only reclaims pass,
 * and the next restart holding none for the NFSv4 client that did not reclaim.
 *
 * The daemon asks the client's rpcbind for the lockd port; here the client is
 * 127.0.0.1, whose port 111 belongs to the host, so the daemon is pointed at
 * this test's own portmapper with RNFSD_TEST_NLM_RPCBIND_PORT (test only).
 */
#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define NLM_PROG 100021u
enum { P_NULL = 0, P_TEST = 1, P_LOCK = 2, P_CANCEL = 3, P_UNLOCK = 4, P_GRANTED = 5, P_FREE_ALL = 23 };
enum { GRANTED = 0, DENIED = 1, BLOCKED = 3, DENIED_GRACE = 4, STALE_FH = 7 };

static struct hx_env env;
static uint8_t fh[64];
static uint32_t fh_len;
static uint32_t next_xid = 0x4e4c0000;

/* ---- the client's side: portmapper + lock manager on one port ---- */

struct granted {
	char cookie[16];
	int32_t svid;
	uint64_t off, len;
	bool exclusive;
	bool v6; /* arrived on the lock manager's IPv6 listener */
};
static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
static struct granted cb_seen[32];
static unsigned cb_n;
struct sm_mon {
	char mon_name[64];
	uint32_t prog, vers, proc;
	uint8_t priv[16];
};
static struct sm_mon sm_seen[16];
static unsigned sm_n, sm_unmon_n;
static int cb_listen_fd = -1, cb_listen6_fd = -1;
static uint16_t cb_port;
static unsigned cb_getaddr_n; /* rpcbind v4 GETADDR calls (IPv6 clients) */

/* One call: skip the header's credential and verifier, answer GETPORT,
 * GETADDR, SM_MON/SM_UNMON, GRANTED. v6: it came over IPv6. */
static void cb_serve_call(struct raw_conn *c, const uint8_t *msg, size_t len, bool v6)
{
	struct xd d;
	struct xb r;
	uint32_t xid, prog, vers, proc, n;

	xd_init(&d, msg, len);
	xid = xd_u32(&d);
	xd_u32(&d); /* CALL */
	xd_u32(&d); /* rpcvers */
	prog = xd_u32(&d);
	vers = xd_u32(&d);
	proc = xd_u32(&d);
	xd_u32(&d);
	xd_opaque(&d, &n, 400); /* cred */
	xd_u32(&d);
	xd_opaque(&d, &n, 400); /* verf */
	xb_init(&r);
	xb_u32(&r, xid);
	xb_u32(&r, 1); /* REPLY */
	xb_u32(&r, 0); /* MSG_ACCEPTED */
	xb_u32(&r, 0); /* AUTH_NONE verifier */
	xb_u32(&r, 0);
	xb_u32(&r, 0); /* SUCCESS */
	if (prog == 100024 && (proc == 2 || proc == 3)) {
		/* XNFS §11 SM_MON / SM_UNMON: mon_id {mon_name, my_id {my_name, prog, vers, proc}} [, priv] */
		struct sm_mon m = { 0 };
		const uint8_t *mn = xd_opaque(&d, &n, 1024);

		if (mn)
			memcpy(m.mon_name, mn, n < sizeof(m.mon_name) - 1 ? n : sizeof(m.mon_name) - 1);
		xd_opaque(&d, &n, 1024);
		m.prog = xd_u32(&d);
		m.vers = xd_u32(&d);
		m.proc = xd_u32(&d);
		if (proc == 2) {
			const uint8_t *pv = d.pos + 16 <= d.len ? d.p + d.pos : NULL;

			if (pv)
				memcpy(m.priv, pv, 16);
			xb_u32(&r, 0); /* stat_succ */
		}
		xb_u32(&r, 1); /* state */
		pthread_mutex_lock(&cb_mu);
		if (proc == 2 && !d.bad && sm_n < 16)
			sm_seen[sm_n++] = m;
		if (proc == 3)
			sm_unmon_n++;
		pthread_mutex_unlock(&cb_mu);
	} else if (prog == 100000 && vers >= 3 && proc == 3) {
		/* RFC 1833 §2.2.1 GETADDR: this same port as a universal address (RFC 5665) */
		char ua[64];

		snprintf(ua, sizeof(ua), "%s.%u.%u", v6 ? "::1" : "127.0.0.1", cb_port >> 8, cb_port & 255);
		xb_string(&r, ua);
		pthread_mutex_lock(&cb_mu);
		cb_getaddr_n++;
		pthread_mutex_unlock(&cb_mu);
	} else if (prog == 100000 && proc == 3) {
		xb_u32(&r, cb_port); /* RFC 1833 §3.2 GETPORT: this same port */
	} else if (prog == NLM_PROG && proc == P_GRANTED) {
		struct granted g = { 0 };
		uint32_t cl;
		const uint8_t *ck = xd_opaque(&d, &cl, 1024);

		if (ck)
			memcpy(g.cookie, ck, cl < sizeof(g.cookie) - 1 ? cl : sizeof(g.cookie) - 1);
		g.exclusive = xd_u32(&d);
		xd_opaque(&d, &n, 1024); /* caller_name */
		xd_opaque(&d, &n, 1024); /* fh */
		xd_opaque(&d, &n, 1024); /* oh */
		g.svid = (int32_t)xd_u32(&d);
		g.off = xd_u64(&d);
		g.len = xd_u64(&d);
		g.v6 = v6;
		pthread_mutex_lock(&cb_mu);
		if (!d.bad && cb_n < 32)
			cb_seen[cb_n++] = g;
		pthread_mutex_unlock(&cb_mu);
		xb_opaque(&r, ck ? ck : (const uint8_t *)"", ck ? cl : 0);
		xb_u32(&r, GRANTED);
	}
	raw_send_record(c, r.p, r.len);
	xb_free(&r);
}

/* A connection's fd, and +0x10000 when it came over IPv6. */
static void *cb_conn_main(void *arg)
{
	intptr_t v = (intptr_t)arg;
	struct raw_conn c = { .fd = (int)(v & 0xffff) };
	uint8_t *buf;
	size_t len;

	while (raw_recv_record(&c, &buf, &len, 30000) == RAW_RECV_OK) {
		cb_serve_call(&c, buf, len, v >> 16);
		free(buf);
	}
	close(c.fd);
	return NULL;
}

static void *cb_accept_main(void *arg)
{
	bool v6 = arg != NULL;

	for (;;) {
		int fd = accept(v6 ? cb_listen6_fd : cb_listen_fd, NULL, NULL);
		pthread_t t;

		if (fd < 0 || fd > 0xffff)
			return NULL;
		pthread_create(&t, NULL, cb_conn_main, (void *)(intptr_t)(fd | (v6 ? 0x10000 : 0)));
		pthread_detach(t);
	}
}

/* The client's portmapper + lock manager on 127.0.0.1 and, where the host
 * has it, [::1], on one port. */
static bool cb_start(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	socklen_t al = sizeof(a);
	pthread_t t;

	cb_listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (cb_listen_fd < 0 || bind(cb_listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(cb_listen_fd, 8) != 0 || getsockname(cb_listen_fd, (struct sockaddr *)&a, &al) != 0)
		return false;
	cb_port = ntohs(a.sin_port);
	a6.sin6_port = a.sin_port;
	cb_listen6_fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (cb_listen6_fd >= 0 && (bind(cb_listen6_fd, (struct sockaddr *)&a6, sizeof(a6)) != 0 ||
				   listen(cb_listen6_fd, 8) != 0)) {
		close(cb_listen6_fd);
		cb_listen6_fd = -1; /* no IPv6 here: over_ipv6() skips */
	}
	if (cb_listen6_fd >= 0 && (pthread_create(&t, NULL, cb_accept_main, (void *)1) != 0 || pthread_detach(t) != 0))
		return false;
	return pthread_create(&t, NULL, cb_accept_main, NULL) == 0 && pthread_detach(t) == 0;
}

static unsigned cb_count(void)
{
	pthread_mutex_lock(&cb_mu);
	unsigned n = cb_n;
	pthread_mutex_unlock(&cb_mu);
	return n;
}

/* Wait up to s seconds for the n-th GRANTED call. */
static bool cb_wait(unsigned n, double s, struct granted *out)
{
	double end = hx_now() + s;

	while (hx_now() < end) {
		if (cb_count() >= n) {
			pthread_mutex_lock(&cb_mu);
			*out = cb_seen[n - 1];
			pthread_mutex_unlock(&cb_mu);
			return true;
		}
		usleep(20000);
	}
	return false;
}

/* ---- NLM calls ---- */

struct lk {
	const char *host;
	int32_t svid;
	const char *oh;
};
static const struct lk A = { "clientA", 1, "1@clientA" }, B = { "clientB", 2, "2@clientB" };

static void enc_lock(struct xb *b, const struct lk *o, const uint8_t *h, uint32_t hl, uint64_t off, uint64_t len)
{
	xb_string(b, o->host);
	xb_opaque(b, h, hl);
	xb_string(b, o->oh);
	xb_u32(b, (uint32_t)o->svid);
	xb_u64(b, off);
	xb_u64(b, len);
}

/* Call proc with args; the nlm4_stats of the reply (after the echoed cookie), or -1.
 * holder: TEST's DENIED holder (exclusive, offset, length) if wanted. */
static int nlm_call(struct raw_conn *c, uint32_t proc, const struct xb *args, uint64_t holder[3])
{
	struct raw_reply r;
	uint32_t n;
	int st = -1;

	if (raw_call(c, ++next_xid, NLM_PROG, 4, proc, args->p, args->len, &r) != RAW_RECV_OK)
		return -1;
	if (r.reply_stat == 0 && r.accept_stat == 0) {
		xd_opaque(&r.body, &n, 1024);
		st = (int)xd_u32(&r.body);
		if (holder && st == DENIED) {
			holder[0] = xd_u32(&r.body);
			xd_u32(&r.body);
			xd_opaque(&r.body, &n, 1024);
			holder[1] = xd_u64(&r.body);
			holder[2] = xd_u64(&r.body);
		}
		if (r.body.bad)
			st = -1;
	} else {
		st = -100 - (int)r.accept_stat;
	}
	raw_reply_free(&r);
	return st;
}

static int nlm_test(struct raw_conn *c, const struct lk *o, bool excl, uint64_t off, uint64_t len, uint64_t h[3])
{
	struct xb b;
	int st;

	xb_init(&b);
	xb_opaque(&b, "t", 1);
	xb_u32(&b, excl);
	enc_lock(&b, o, fh, fh_len, off, len);
	st = nlm_call(c, P_TEST, &b, h);
	xb_free(&b);
	return st;
}

static int nlm_lock_r(struct raw_conn *c, const struct lk *o, bool block, bool excl, uint64_t off, uint64_t len,
		      const char *cookie, bool reclaim)
{
	struct xb b;
	int st;

	xb_init(&b);
	xb_string(&b, cookie);
	xb_u32(&b, block);
	xb_u32(&b, excl);
	enc_lock(&b, o, fh, fh_len, off, len);
	xb_u32(&b, reclaim);
	xb_u32(&b, 1); /* state */
	st = nlm_call(c, P_LOCK, &b, NULL);
	xb_free(&b);
	return st;
}

static int nlm_unlock_or_cancel(struct raw_conn *c, uint32_t proc, const struct lk *o, bool excl, uint64_t off,
				uint64_t len)
{
	struct xb b;
	int st;

	xb_init(&b);
	xb_opaque(&b, "u", 1);
	if (proc == P_CANCEL) {
		xb_u32(&b, 1); /* block */
		xb_u32(&b, excl);
	}
	enc_lock(&b, o, fh, fh_len, off, len);
	st = nlm_call(c, proc, &b, NULL);
	xb_free(&b);
	return st;
}

static int nlm_lock(struct raw_conn *c, const struct lk *o, bool block, bool excl, uint64_t off, uint64_t len,
		    const char *cookie)
{
	return nlm_lock_r(c, o, block, excl, off, len, cookie, false);
}

/* The write lock a local process would meet at [off, off+len), as F_OFD_GETLK sees it. */
static short local_getlk(uint64_t off, uint64_t len)
{
	int fd = open(hx_xpath(&env, "lockme"), O_RDWR);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)off, .l_len = (off_t)len };

	if (fd < 0 || fcntl(fd, F_OFD_GETLK, &fl) != 0)
		fl.l_type = -1;
	if (fd >= 0)
		close(fd);
	return fl.l_type;
}

/* MNT the export (its handle in root, if wanted), LOOKUP name: the file's NFSv3 handle. */
static bool get_fh_of(const char *name, uint8_t out[64], uint32_t *out_len, uint8_t root[64], uint32_t *root_len)
{
	struct raw_conn c;
	uint8_t rbuf[64];
	uint32_t rlen;
	struct xb b;
	struct raw_reply r;
	bool ok = false;

	if (raw_connect(&c, env.mount_port) != 0)
		return false;
	if (raw_mnt(&c, ++next_xid, env.export_dir, rbuf, &rlen) != 0) {
		raw_close(&c);
		return false;
	}
	raw_close(&c);
	if (root) {
		memcpy(root, rbuf, rlen);
		*root_len = rlen;
	}
	if (raw_connect(&c, env.port) != 0)
		return false;
	xb_init(&b);
	xb_opaque(&b, rbuf, rlen);
	xb_string(&b, name);
	if (raw_call(&c, ++next_xid, RAW_NFS_PROG, 3, 3 /* LOOKUP */, b.p, b.len, &r) == RAW_RECV_OK) {
		const uint8_t *p;

		if (xd_u32(&r.body) == 0 && (p = xd_opaque(&r.body, out_len, 64)) != NULL) {
			memcpy(out, p, *out_len);
			ok = true;
		}
		raw_reply_free(&r);
	}
	xb_free(&b);
	raw_close(&c);
	return ok;
}

static bool get_fh(void)
{
	return get_fh_of("lockme", fh, &fh_len, NULL, NULL);
}

static void conflicts(struct raw_conn *c)
{
	uint64_t h[3] = { 0 };

	hx_section("exclusive and shared locks of two owners");
	CHECK_EQ(nlm_lock(c, &A, false, true, 0, 100, "a1"), GRANTED, "A: exclusive [0,100) granted");
	CHECK_EQ(nlm_test(c, &B, true, 50, 10, h), DENIED, "B: TEST exclusive [50,60) denied");
	CHECK(h[0] == 1 && h[1] == 0 && h[2] == 100, "holder: exclusive [0,100) (%llu %llu %llu)",
	      (unsigned long long)h[0], (unsigned long long)h[1], (unsigned long long)h[2]);
	CHECK_EQ(nlm_test(c, &A, true, 50, 10, NULL), GRANTED, "A: TEST its own range: no conflict");
	CHECK_EQ(nlm_lock(c, &B, false, false, 50, 10, "b1"), DENIED, "B: shared [50,60) denied (non-blocking)");
	CHECK_EQ(nlm_lock(c, &B, false, false, 200, 10, "b2"), GRANTED, "B: shared [200,210) granted (disjoint)");
	CHECK_EQ(nlm_lock(c, &A, false, false, 205, 10, "a2"), GRANTED, "A: shared [205,215) over B's shared: granted");
	CHECK_EQ(nlm_lock(c, &A, false, true, 205, 1, "a3"), DENIED, "A: exclusive [205,206) over B's shared: denied");
	CHECK_EQ(local_getlk(10, 1), F_WRLCK, "a local process sees A's write lock");
	CHECK_EQ(local_getlk(500, 1), F_UNLCK, "and nothing at 500");
	CHECK_EQ(nlm_unlock_or_cancel(c, P_UNLOCK, &A, false, 205, 10), GRANTED, "A: unlock [205,215)");
	CHECK_EQ(nlm_unlock_or_cancel(c, P_UNLOCK, &B, false, 900, 0), GRANTED,
		 "B: unlock of a range it does not hold: granted");
}

static void blocking(struct raw_conn *c)
{
	struct granted g;

	hx_section("a blocking LOCK granted by a GRANTED callback when the holder unlocks");
	CHECK_EQ(nlm_lock(c, &B, true, true, 50, 10, "ckB"), BLOCKED, "B: blocking exclusive [50,60): BLOCKED");
	CHECK_EQ(nlm_lock(c, &B, true, true, 50, 10, "ckB"), BLOCKED, "B: the same LOCK repeated: still BLOCKED");
	CHECK_EQ(cb_count(), 0, "no GRANTED yet");
	double t0 = hx_now();

	CHECK_EQ(nlm_unlock_or_cancel(c, P_UNLOCK, &A, false, 0, 100), GRANTED, "A: unlock [0,100)");
	if (CHECK(cb_wait(1, 5.0, &g), "GRANTED call reached the client's lock manager within 5 s")) {
		hx_note("UNLOCK to GRANTED received (rpcbind GETPORT and a new connection included): %.1f ms",
			(hx_now() - t0) * 1000);
		CHECK(!strcmp(g.cookie, "ckB"), "its cookie is the LOCK's (%s)", g.cookie);
		CHECK(g.svid == 2 && g.off == 50 && g.len == 10 && g.exclusive,
		      "for B's exclusive [50,60) (svid %d, %llu+%llu)", g.svid, (unsigned long long)g.off,
		      (unsigned long long)g.len);
	}
	CHECK_EQ(nlm_test(c, &A, false, 55, 1, NULL), DENIED, "A: TEST at 55: B holds it now");
	CHECK_EQ(hx_log_count(&env, "GRANTED callback accepted") >= 1, 1, "daemon log: GRANTED callback accepted");

	hx_section("a cancelled waiter is never granted");
	CHECK_EQ(nlm_lock(c, &A, true, true, 50, 10, "ckA"), BLOCKED, "A: blocking exclusive [50,60): BLOCKED");
	CHECK_EQ(nlm_unlock_or_cancel(c, P_CANCEL, &A, true, 50, 10), GRANTED, "A: CANCEL it: granted");
	CHECK_EQ(nlm_unlock_or_cancel(c, P_CANCEL, &A, true, 50, 10), DENIED, "A: CANCEL again: no such waiter");
	CHECK_EQ(nlm_unlock_or_cancel(c, P_UNLOCK, &B, false, 50, 10), GRANTED, "B: unlock [50,60)");
	usleep(2500000);
	CHECK_EQ(cb_count(), 1, "no GRANTED for the cancelled waiter after 2.5 s");
	CHECK_EQ(nlm_test(c, &A, true, 50, 10, NULL), GRANTED, "[50,60) is free");

	hx_section("a local process's lock: conflict, then a GRANTED when it releases (poll)");
	int fd = open(hx_xpath(&env, "lockme"), O_RDWR);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1000, .l_len = 10 };

	CHECK(fd >= 0 && fcntl(fd, F_OFD_SETLK, &fl) == 0, "local process: write lock [1000,1010)");
	CHECK_EQ(nlm_lock(c, &A, false, false, 1005, 1, "a4"), DENIED, "A: [1005,1006) denied");
	CHECK_EQ(nlm_lock(c, &A, true, false, 1005, 1, "ckA2"), BLOCKED, "A: blocking shared [1005,1006): BLOCKED");
	if (fd >= 0)
		close(fd); /* releases the description's lock, unseen by rnfsd */
	t0 = hx_now();
	if (CHECK(cb_wait(2, 5.0, &g), "GRANTED within 5 s of the local release")) {
		hx_note("local release to GRANTED received (the retry poll): %.0f ms", (hx_now() - t0) * 1000);
		CHECK(!strcmp(g.cookie, "ckA2") && !g.exclusive, "for A's shared lock (%s)", g.cookie);
	}
}

static unsigned sm_count(bool unmon)
{
	pthread_mutex_lock(&cb_mu);
	unsigned n = unmon ? sm_unmon_n : sm_n;
	pthread_mutex_unlock(&cb_mu);
	return n;
}

static bool sm_wait(bool unmon, unsigned n)
{
	for (int i = 0; i < 100 && sm_count(unmon) < n; i++)
		usleep(20000);
	return sm_count(unmon) >= n;
}

/* statd's reboot notification: NLM procedure 16 with SM status {mon_name, state, priv}. */
static int sm_notify(bool privileged, const uint8_t priv[16])
{
	struct raw_conn rc;
	struct raw_reply r;
	struct xb b;
	int ok = -1;

	if ((privileged ? raw_connect_reserved(&rc, env.port) : raw_connect(&rc, env.port)) != 0)
		return -1;
	xb_init(&b);
	xb_string(&b, "127.0.0.1");
	xb_u32(&b, 3);
	xb_raw(&b, priv, 16);
	if (raw_call(&rc, ++next_xid, NLM_PROG, 4, 16, b.p, b.len, &r) == RAW_RECV_OK) {
		ok = r.reply_stat == 0 && r.accept_stat == 0 ? 0 : -1;
		raw_reply_free(&r);
	}
	xb_free(&b);
	raw_close(&rc);
	return ok;
}

/* The same notification in one UDP datagram; 0 if answered SUCCESS. */
static int sm_notify_udp(bool reserved, const uint8_t priv[16])
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				  .sin_port = htons(hx_udp_port(&env)) };
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { 2, 0 };
	uint8_t in[256];
	struct xb b;
	struct xd d;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc = -1;
	ssize_t n = -1;

	for (unsigned port = 1000; reserved && port > 600; port--) {
		me.sin_port = htons((uint16_t)port);
		if (bind(fd, (struct sockaddr *)&me, sizeof(me)) == 0)
			break;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	xb_init(&b);
	xb_call_header(&b, ++next_xid, NLM_PROG, 4, 16, 0, 0);
	xb_string(&b, "127.0.0.1");
	xb_u32(&b, 5);
	xb_raw(&b, priv, 16);
	if (to.sin_port && sendto(fd, b.p, b.len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)b.len)
		n = recv(fd, in, sizeof(in), 0);
	if (n >= 24) {
		xd_init(&d, in, (size_t)n);
		xd_skip(&d, 20);
		rc = xd_u32(&d) == 0 ? 0 : -1; /* accept_stat */
	}
	xb_free(&b);
	close(fd);
	return rc;
}

static void nsm(struct raw_conn *c)
{
	struct sm_mon a, b;
	uint8_t forged[16];

	hx_section("NSM: SM_MON to the local statd per locking host; its notification releases the host's locks");
	if (!CHECK(sm_wait(false, 2), "SM_MON for clientA and clientB (%u)", sm_count(false)))
		return;
	/* the order of the two SM_MON calls is not fixed (they may leave together on one connection) */
	pthread_mutex_lock(&cb_mu);
	a = sm_seen[0];
	b = sm_seen[1];
	pthread_mutex_unlock(&cb_mu);
	CHECK(!strcmp(a.mon_name, "127.0.0.1"), "mon_name is the client's address (%s)", a.mon_name);
	CHECK(a.prog == NLM_PROG && a.vers == 4 && a.proc == 16, "my_id: NLM v4 procedure 16 (%u/%u/%u)", a.prog,
	      a.vers, a.proc);
	CHECK_EQ(nlm_lock(c, &A, false, true, 4000, 10, "a5"), GRANTED, "A: exclusive [4000,4010)");
	CHECK_EQ(sm_count(false), 2, "A is not monitored twice");
	memcpy(forged, a.priv, 16);
	forged[8] ^= 0x55;
	CHECK_EQ(sm_notify(false, a.priv), 0, "notification from an unprivileged port answered");
	CHECK_EQ(sm_notify(true, forged), 0, "notification with a forged priv answered");
	CHECK_EQ(nlm_test(c, &B, true, 4000, 1, NULL), DENIED, "both ignored: A still holds [4000,4010)");
	/* clientB's entry went with its FREE_ALL: its notification is ignored, clientA's releases */
	CHECK_EQ(sm_notify(true, a.priv), 0, "statd's notification with the first SM_MON's priv");
	CHECK_EQ(sm_notify(true, b.priv), 0, "statd's notification with the second SM_MON's priv");
	CHECK_EQ(nlm_test(c, &B, true, 4000, 1, NULL), GRANTED, "A's locks are released");
	CHECK(sm_wait(true, 2), "SM_UNMON for clientB (FREE_ALL) and clientA (%u)", sm_count(true));

	hx_section("NSM over UDP, as nfs-utils' statd sends it (loopback, reserved port)");
	CHECK_EQ(nlm_lock(c, &A, false, true, 4000, 10, "a6"), GRANTED, "A: exclusive [4000,4010) again");
	if (!CHECK(sm_wait(false, 3), "clientA monitored again: a third SM_MON"))
		return;
	pthread_mutex_lock(&cb_mu);
	a = sm_seen[2];
	pthread_mutex_unlock(&cb_mu);
	CHECK_EQ(sm_notify_udp(false, a.priv), 0, "udp notification from an unreserved port answered");
	usleep(300000);
	CHECK_EQ(nlm_test(c, &B, true, 4000, 1, NULL), DENIED, "ignored: A still holds [4000,4010)");
	CHECK_EQ(sm_notify_udp(true, a.priv), 0, "udp notification from a reserved port answered");
	bool released = false;
	for (int i = 0; i < 50 && !released; i++) {
		released = nlm_test(c, &B, true, 4000, 1, NULL) == GRANTED;
		if (!released)
			usleep(20000);
	}
	CHECK(released, "A's locks are released (within 1 s)");
}

/* ---- NLM over UDP (transport/udp_xprt.c) ---- */

static void over_udp(struct raw_conn *tcp)
{
	struct raw_conn u;
	struct raw_reply r;
	struct granted g;
	unsigned seen = cb_count();

	hx_section("NLM over UDP: the same lock table as over TCP; a GRANTED for a UDP waiter; only NLM served");
	if (!CHECK(raw_udp_connect(&u, hx_udp_port(&env), false) == 0, "UDP socket to rnfsd's NLM port %u", hx_udp_port(&env)))
		return;
	CHECK_EQ(nlm_lock(&u, &A, false, true, 5000, 10, "u1"), GRANTED, "A over UDP: exclusive [5000,5010)");
	CHECK_EQ(nlm_test(tcp, &B, true, 5005, 1, NULL), DENIED, "B over TCP: TEST at 5005 denied");
	CHECK_EQ(local_getlk(5000, 1), F_WRLCK, "a local process sees the lock taken over UDP");
	CHECK_EQ(nlm_lock(&u, &B, true, true, 5000, 1, "ckU"), BLOCKED, "B over UDP: blocking LOCK [5000,5001): BLOCKED");
	CHECK_EQ(nlm_unlock_or_cancel(tcp, P_UNLOCK, &A, false, 5000, 10), GRANTED, "A over TCP: unlock");
	if (CHECK(cb_wait(seen + 1, 5.0, &g), "GRANTED reached the UDP waiter's lock manager within 5 s"))
		CHECK(!strcmp(g.cookie, "ckU") && g.off == 5000, "for B's lock (%s at %llu)", g.cookie,
		      (unsigned long long)g.off);
	CHECK_EQ(nlm_test(&u, &A, true, 5000, 1, NULL), DENIED, "A over UDP: TEST at 5000: B holds it");
	CHECK_EQ(nlm_unlock_or_cancel(&u, P_UNLOCK, &B, false, 5000, 1), GRANTED, "B over UDP: unlock");
	CHECK_EQ(local_getlk(5000, 10), F_UNLCK, "and the range is free for a local process");
	if (CHECK(raw_call(&u, ++next_xid, RAW_NFS_PROG, 3, 0, NULL, 0, &r) == RAW_RECV_OK, "NFS NULL over UDP answered")) {
		CHECK_EQ(r.accept_stat, 1, "PROG_UNAVAIL: NFS is not served over UDP");
		raw_reply_free(&r);
	}
	if (CHECK(raw_call(&u, ++next_xid, NLM_PROG, 3, P_NULL, NULL, 0, &r) == RAW_RECV_OK, "NLM v3 NULL answered")) {
		CHECK(r.accept_stat == 2 && r.low == 4 && r.high == 4, "PROG_MISMATCH 4..4 (%u %u..%u)", r.accept_stat,
		      r.low, r.high);
		raw_reply_free(&r);
	}
	raw_close(&u);
	CHECK(hx_daemon_alive(&env), "daemon still running");
}

/* ---- an IPv6 client (rnfsd also listens on [::1]) ---- */

static void over_ipv6(void)
{
	struct raw_conn c6;
	struct granted g;
	unsigned seen = cb_count();

	hx_section("an IPv6 client: its blocking LOCK granted by a GRANTED callback over IPv6 (rpcbind v4 GETADDR)");
	if (cb_listen6_fd < 0 || raw_connect6(&c6, env.port) != 0) {
		hx_note("no IPv6 loopback here (or rnfsd not on [::1]): skipped");
		return;
	}
	CHECK_EQ(nlm_lock(&c6, &A, false, true, 6000, 10, "v6a"), GRANTED, "A over IPv6: exclusive [6000,6010)");
	CHECK_EQ(nlm_lock(&c6, &B, true, true, 6000, 10, "v6b"), BLOCKED, "B over IPv6: blocking [6000,6010): BLOCKED");
	CHECK_EQ(nlm_unlock_or_cancel(&c6, P_UNLOCK, &A, false, 6000, 10), GRANTED, "A: unlock");
	if (CHECK(cb_wait(seen + 1, 5.0, &g), "GRANTED reached the lock manager within 5 s")) {
		CHECK(g.v6, "over IPv6 (at [::1], the address the LOCK came from)");
		CHECK(!strcmp(g.cookie, "v6b") && g.off == 6000, "for B's lock (%s at %llu)", g.cookie,
		      (unsigned long long)g.off);
	}
	pthread_mutex_lock(&cb_mu);
	unsigned getaddr = cb_getaddr_n;
	pthread_mutex_unlock(&cb_mu);
	CHECK(getaddr >= 1, "the port came from rpcbind version 4 GETADDR (%u calls)", getaddr);
	CHECK_EQ(nlm_unlock_or_cancel(&c6, P_UNLOCK, &B, false, 6000, 10), GRANTED, "B: unlock");
	raw_close(&c6);
}

/* ---- NFSv4.0 locks on the same file (RFC 7530 §9, §16.10-16.12) ---- */

enum { READ_LT = N4_READ_LT, WRITE_LT = N4_WRITE_LT };

/* An NFSv4.0 client V (nfs4raw.h) on the NLM connection, its open and lock state on one file. */
struct v4 {
	struct n4_client k;
	uint8_t fh[64];
	struct n4_sid open_sid, lock_sid;
	uint32_t fh_len, open_seqid, lock_seqid;
	bool has_lock_owner;
};

/* SETCLIENTID + SETCLIENTID_CONFIRM, OPEN name (read-write, the file exists) + OPEN_CONFIRM. */
static bool v4_open(struct raw_conn *c, struct v4 *v, const uint8_t *root, uint32_t root_len, const char *name)
{
	struct n4_openargs oa = { .seqid = 1, .access = N4_ACCESS_BOTH, .owner = "v4-open-owner", .name = name };
	uint8_t confirm[8] = { 0 };
	struct raw_reply r;
	struct xb a;
	bool ok;

	n4_share(&v->k, c, 0);
	memcpy(v->k.verifier, "verifier", 8);
	snprintf(v->k.cb_addr, sizeof(v->k.cb_addr), "127.0.0.1.3.232");
	ok = CHECK_EQ(n4_setclientid(&v->k, "it-nlm-v4", confirm), 0, "NFSv4.0 SETCLIENTID");
	ok = ok && CHECK_EQ(n4_setclientid_confirm(&v->k, confirm), 0, "SETCLIENTID_CONFIRM");
	oa.cid = v->k.cid;
	n4_begin(&v->k, &a, 2);
	n4_xb_putfh(&a, root, root_len);
	n4_xb_openargs(&a, &oa);
	if (ok) {
		int st = n4_call(&v->k, &a, &r);

		if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_OPEN) == 0)
			n4_xd_sid(&r.body, &v->open_sid);
		raw_reply_free(&r);
		ok = CHECK_EQ(st, 0, "OPEN %s", name);
	}
	xb_free(&a);
	v->open_seqid = 2;
	ok = ok && CHECK_EQ(n4_open_confirm(&v->k, v->fh, v->fh_len, &v->open_seqid, &v->open_sid), 0,
			    "OPEN_CONFIRM (PUTFH of the NFSv3 handle)");
	v->open_seqid = 3;
	return ok;
}

/* LOCK (a new lock owner from the open stateid until one is granted): the status.
 * RFC 7530 §9.1.7: a DENIED LOCK still consumes the seqid it used. */
static int v4_lock(struct v4 *v, uint32_t type, uint64_t off, uint64_t len)
{
	int st;

	if (v->has_lock_owner)
		return n4_lock_more(&v->k, v->fh, v->fh_len, type, off, len, &v->lock_sid, &v->lock_seqid);
	st = n4_lock_new(&v->k, v->fh, v->fh_len, type, off, len, &v->open_sid, &v->open_seqid, "v4-lock-owner",
			 &v->lock_sid);
	if (st == 0) {
		v->has_lock_owner = true;
		v->lock_seqid = 1;
	}
	return st;
}

/* NLM (owner C) and NFSv4 (client V) on one file: both are the backend's
 * byte-range locks, so each refuses the other's, a blocked NLM lock is
 * granted when the NFSv4 lock goes (the retry poll), and each then takes
 * what the other had. */
static void nfs4_locks(struct raw_conn *c)
{
	static const struct lk C = { "clientC", 3, "3@clientC" };
	uint8_t keep[64], root[64];
	uint32_t keep_len = fh_len, root_len = 0;
	struct v4 v = { .fh_len = 0 };
	struct granted g;
	unsigned n0;

	hx_section("NLM and NFSv4.0 locks on one file exclude each other");
	memcpy(keep, fh, fh_len);
	hx_write_file(hx_xpath(&env, "v3v4"), "0123456789", 10, 0644);
	if (!CHECK(get_fh_of("v3v4", fh, &fh_len, root, &root_len), "MNT + LOOKUP v3v4") ||
	    !(memcpy(v.fh, fh, fh_len), v.fh_len = fh_len, v4_open(c, &v, root, root_len, "v3v4")))
		goto out;
	CHECK_EQ(nlm_lock(c, &C, false, true, 0, 100, "c1"), GRANTED, "NLM C: exclusive [0,100) granted");
	CHECK_EQ(v4_lock(&v, WRITE_LT, 50, 10), N4ERR_DENIED, "NFSv4 LOCK write [50,60): DENIED");
	CHECK_EQ(n4_lockt(&v.k, v.fh, v.fh_len, WRITE_LT, 50, 10, "v4-lock-owner"), N4ERR_DENIED,
		 "NFSv4 LOCKT write [50,60): DENIED");
	CHECK_EQ(n4_lockt(&v.k, v.fh, v.fh_len, READ_LT, 99, 1, "v4-lock-owner"), N4ERR_DENIED,
		 "NFSv4 LOCKT read [99,100): DENIED");
	CHECK_EQ(v4_lock(&v, READ_LT, 200, 100), 0, "NFSv4 LOCK read [200,300) granted (disjoint)");
	CHECK_EQ(nlm_lock(c, &C, false, true, 250, 10, "c2"), DENIED, "NLM C: exclusive [250,260): DENIED");
	CHECK_EQ(nlm_test(c, &C, true, 250, 10, NULL), DENIED, "NLM C: TEST exclusive [250,260): DENIED");
	CHECK_EQ(nlm_test(c, &C, false, 250, 10, NULL), GRANTED, "NLM C: TEST shared [250,260): no conflict");
	n0 = cb_count();
	CHECK_EQ(nlm_lock(c, &C, true, true, 250, 10, "ckC"), BLOCKED, "NLM C: blocking exclusive [250,260): BLOCKED");
	CHECK_EQ(nlm_unlock_or_cancel(c, P_UNLOCK, &C, false, 0, 100), GRANTED, "NLM C: unlock [0,100)");
	usleep(1500000);
	CHECK_EQ(cb_count(), n0, "no GRANTED while the NFSv4 lock is held (1.5 s)");
	double t0 = hx_now();

	CHECK_EQ(n4_locku_type(&v.k, v.fh, v.fh_len, READ_LT, &v.lock_sid, &v.lock_seqid, 200, 100), 0,
		 "NFSv4 LOCKU [200,300)");
	if (CHECK(cb_wait(n0 + 1, 5.0, &g), "GRANTED within 5 s of the NFSv4 LOCKU")) {
		hx_note("NFSv4 LOCKU to NLM GRANTED received (the retry poll): %.0f ms", (hx_now() - t0) * 1000);
		CHECK(!strcmp(g.cookie, "ckC") && g.svid == 3 && g.off == 250 && g.len == 10 && g.exclusive,
		      "for C's exclusive [250,260) (%s)", g.cookie);
	}
	CHECK_EQ(n4_lockt(&v.k, v.fh, v.fh_len, READ_LT, 255, 1, "v4-lock-owner"), N4ERR_DENIED,
		 "NFSv4 LOCKT read [255,256): DENIED");
	CHECK_EQ(v4_lock(&v, WRITE_LT, 0, 100), 0, "NFSv4 LOCK write [0,100): what NLM had");
	CHECK_EQ(nlm_lock(c, &C, false, true, 200, 100, "c3"), GRANTED, "NLM C: exclusive [200,300): what NFSv4 had");
	CHECK_EQ(nlm_lock(c, &C, false, false, 99, 1, "c4"), DENIED, "NLM C: shared [99,100): DENIED");
	CHECK_EQ(v4_lock(&v, READ_LT, 299, 1), N4ERR_DENIED, "NFSv4 LOCK read [299,300): DENIED");
	CHECK_EQ(n4_locku_type(&v.k, v.fh, v.fh_len, WRITE_LT, &v.lock_sid, &v.lock_seqid, 0, 100), 0,
		 "NFSv4 LOCKU [0,100)");
	CHECK_EQ(nlm_unlock_or_cancel(c, P_UNLOCK, &C, false, 200, 100), GRANTED, "NLM C: unlock [200,300)");
	CHECK_EQ(n4_lockt(&v.k, v.fh, v.fh_len, WRITE_LT, 0, UINT64_MAX, "v4-lock-owner"), 0,
		 "NFSv4 LOCKT write [0,EOF): free");
out:
	memcpy(fh, keep, keep_len);
	fh_len = keep_len;
}

static void others(struct raw_conn *c)
{
	struct raw_conn rc;
	struct raw_reply r;
	struct xb b;
	uint8_t bad[32];

	hx_section("FREE_ALL, forged handles, truncated arguments");
	CHECK_EQ(nlm_lock(c, &B, false, true, 3000, 10, "b3"), GRANTED, "B: exclusive [3000,3010)");
	CHECK_EQ(nlm_test(c, &A, true, 3000, 1, NULL), DENIED, "A: TEST at 3000 denied");
	if (CHECK(raw_connect_reserved(&rc, env.port) == 0, "connection from a privileged port")) {
		xb_init(&b);
		xb_string(&b, "clientB");
		xb_u32(&b, 3);
		CHECK(raw_call(&rc, ++next_xid, NLM_PROG, 4, P_FREE_ALL, b.p, b.len, &r) == RAW_RECV_OK &&
			      r.accept_stat == 0,
		      "FREE_ALL clientB answered");
		raw_reply_free(&r);
		xb_free(&b);
		raw_close(&rc);
	}
	CHECK_EQ(nlm_test(c, &A, true, 3000, 1, NULL), GRANTED, "A: TEST at 3000: B's locks are gone");
	CHECK_EQ(local_getlk(3000, 1), F_UNLCK, "and a local process sees none");

	memcpy(bad, fh, sizeof(bad));
	bad[fh_len > 20 ? 20 : 0] ^= 0xff;
	xb_init(&b);
	xb_opaque(&b, "x", 1);
	xb_u32(&b, 0);
	xb_u32(&b, 1);
	enc_lock(&b, &A, bad, fh_len < sizeof(bad) ? fh_len : sizeof(bad), 0, 1);
	xb_u32(&b, 0);
	xb_u32(&b, 1);
	CHECK_EQ(nlm_call(c, P_LOCK, &b, NULL), STALE_FH, "LOCK with a forged handle: NLM4_STALE_FH");
	b.len -= 12; /* cut inside l_len */
	CHECK_EQ(nlm_call(c, P_LOCK, &b, NULL), -100 - 4, "truncated LOCK: GARBAGE_ARGS");
	xb_free(&b);
	xb_init(&b);
	CHECK_EQ(nlm_call(c, P_NULL, &b, NULL), -1, "NULL: an empty reply (no stat to read)");
	xb_free(&b);
}

/* A restart: every lock released at stop; then a grace period of 3 s (XNFS §10.4): only reclaims. */
static void grace(void)
{
	struct raw_conn c;
	double t0;

	hx_section("restart with grace-period = 3: only reclaims until it ends");
	hx_daemon_stop(&env);
	env.rnfsd_extra = "grace-period = 3\n";
	CHECK(hx_write_config(&env) == 0, "rnfsd.conf with grace-period = 3");
	/* nfs4_locks' NFSv4.0 client was recorded, so NFSv4 holds its term of the server's one grace
	 * period too (RFC 8881 §8.4.2; NLM's new locks wait for both): 3 s as well, not its default 90. */
	CHECK(hx_append_config(&env, "[nfsv4]\ngrace-time = 3\n") == 0, "[nfsv4] grace-time = 3");
	if (hx_daemon_start(&env) != 0 || !CHECK(raw_connect(&c, env.port) == 0, "NLM connection after the restart"))
		return;
	CHECK_EQ(hx_log_count(&env, "nfs4: grace period of 3 s for 1 client(s)"), 1,
		 "NFSv4's term: 3 s for the recorded NFSv4.0 client");
	t0 = hx_now();
	CHECK_EQ(local_getlk(0, 0), F_UNLCK, "no lock survived the stop");
	CHECK_EQ(nlm_lock(&c, &B, false, true, 6000, 10, "g1"), DENIED_GRACE, "B: a new LOCK in grace: DENIED_GRACE_PERIOD");
	CHECK_EQ(nlm_test(&c, &B, true, 6000, 10, NULL), DENIED_GRACE, "TEST in grace: DENIED_GRACE_PERIOD");
	CHECK_EQ(nlm_lock_r(&c, &A, false, true, 5000, 10, "g2", true), GRANTED, "A: reclaim of [5000,5010): granted");
	while (hx_now() - t0 < 3.5)
		usleep(50000);
	CHECK_EQ(nlm_lock(&c, &B, false, true, 5005, 1, "g3"), DENIED, "after grace: B meets A's reclaimed lock");
	CHECK_EQ(nlm_lock(&c, &B, false, true, 6000, 10, "g4"), GRANTED, "after grace: B's new LOCK granted");
	raw_close(&c);
}

/*
 * Issue 23: the NFSv4.0 client recorded before grace() never came back, and no
 * NFSv4 call came in its grace period (only NLM): the term still ends on time
 * (RFC 8881 §8.4.2) and the client's record goes with it, so the next start
 * holds no grace period for it, and a new NLM lock is granted at once
 * (grace-period = 0: NLM's own term off). Before, the record stayed and every
 * restart of an NFSv3-only server refused new locks for [nfsv4] grace-time.
 */
static void grace_ended_idle(void)
{
	unsigned held = hx_log_count(&env, "nfs4: grace period of");
	struct raw_conn c;
	double t0 = hx_now();

	hx_section("the NFSv4 term ends without NFSv4 calls: no grace period for its client at the next start");
	/* the end of grace()'s 3 s term, logged by the lease timer (no NFSv4 call comes) */
	while (hx_log_count(&env, "nfs4: grace period over") == 0 && hx_now() - t0 < 30)
		usleep(100000);
	CHECK_EQ(hx_log_count(&env, "nfs4: grace period over (grace-time elapsed); 1 client(s)"), 1,
		 "the NFSv4 term ended with no NFSv4 call: the client that did not reclaim is dropped");
	hx_daemon_stop(&env);
	env.rnfsd_extra = "grace-period = 0\n";
	CHECK(hx_write_config(&env) == 0, "rnfsd.conf with grace-period = 0");
	CHECK(hx_append_config(&env, "[nfsv4]\ngrace-time = 3\n") == 0, "[nfsv4] grace-time = 3");
	if (hx_daemon_start(&env) != 0 || !CHECK(raw_connect(&c, env.port) == 0, "NLM connection after the restart"))
		return;
	CHECK_EQ(hx_log_count(&env, "nfs4: grace period of"), held,
		 "no NFSv4 grace period for the client that did not reclaim in the last one");
	CHECK_EQ(nlm_lock(&c, &B, false, true, 7000, 10, "i1"), GRANTED, "B: a new LOCK at once: granted");
	CHECK_EQ(nlm_unlock_or_cancel(&c, P_UNLOCK, &B, false, 7000, 10), GRANTED, "B: unlock");
	raw_close(&c);
}

/* nlm = no: the program is not served (a kernel lock manager keeps it). */
static void disabled(void)
{
	struct raw_conn c;
	struct raw_reply r;

	hx_section("nlm = no");
	hx_daemon_stop(&env);
	env.rnfsd_extra = "nlm = no\n";
	CHECK(hx_write_config(&env) == 0, "rnfsd.conf with nlm = no");
	if (hx_daemon_start(&env) != 0 || !CHECK(raw_connect(&c, env.port) == 0, "connection"))
		return;
	if (CHECK(raw_call(&c, ++next_xid, NLM_PROG, 4, P_NULL, NULL, 0, &r) == RAW_RECV_OK, "NLM NULL answered")) {
		CHECK_EQ(r.accept_stat, 1, "PROG_UNAVAIL");
		raw_reply_free(&r);
	}
	raw_close(&c);
}

/* rnfsd.conf: listen on [::1] too (optional: a host without IPv6 still starts). */
static void listen_ipv6_too(void)
{
	char buf[8192], from[64], to[128];
	FILE *f = fopen(env.conf_path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	char *at;

	if (f)
		fclose(f);
	buf[n] = 0;
	snprintf(from, sizeof(from), "listen = 127.0.0.1:%u\n", env.port);
	snprintf(to, sizeof(to), "listen = 127.0.0.1:%u, [::1]:%u optional\n", env.port, env.port);
	at = strstr(buf, from);
	if (!at || !(f = fopen(env.conf_path, "w")))
		return;
	fprintf(f, "%.*s%s%s", (int)(at - buf), buf, to, at + strlen(from));
	fclose(f);
}

int main(int argc, char **argv)
{
	struct raw_conn c;
	char port[16];

	hx_begin("nlm", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	if (!CHECK(cb_start(), "the client's portmapper + lock manager listens"))
		return hx_end();
	snprintf(port, sizeof(port), "%u", cb_port);
	setenv("RNFSD_TEST_NLM_RPCBIND_PORT", port, 1);
	hx_write_file(hx_xpath(&env, "lockme"), "0123456789", 10, 0644);
	listen_ipv6_too(); /* NFSv4 is served by default too (nfs4_locks) */
	hx_write_exports(&env, "%s 127.0.0.1(rw,no_root_squash,insecure) ::1(rw,no_root_squash,insecure)\n",
			 env.export_dir);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (!CHECK(get_fh(), "MNT + LOOKUP lockme"))
		return hx_end();
	if (!CHECK(raw_connect(&c, env.port) == 0, "raw TCP connection for NLM"))
		return hx_end();
	conflicts(&c);
	blocking(&c);
	others(&c);
	nsm(&c);
	over_udp(&c);
	over_ipv6();
	nfs4_locks(&c);
	raw_close(&c);
	grace();
	grace_ended_idle();
	disabled();
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	return hx_end();
}
