/*
 * test_tcp_hostile.c - hostile TCP clients against the real daemon (issue 8,
 * defects 1-3), scaled down through rnfsd.conf so that a handful of raw
 * sockets reproduces what hundreds would do with the defaults:
 *
 *  1. connections that pipeline 1 MiB READs and never read the replies;
 *  2. connections that trickle partial records (small ones, and large ones
 *     past the connection's own record buffer), a byte at a time;
 *  3. connections that send nothing until the connection table is full.
 *
 * While the hostile ones are active, a well-behaved client on a fresh
 * connection must be answered (NULL, GETATTR) within a generous bound
 * (a liveness check, not a speed check); the hostile connections must then
 * be closed by the daemon within their timeout plus a margin.
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define GOOD_BOUND_MS 5000 /* the well-behaved client's liveness bound */

static struct hx_env env;
static uint8_t root[64];
static uint32_t root_len;
static uint8_t big_fh[64];
static uint32_t big_fh_len;

/* The harness's rnfsd.conf plus extra lines; (re)start the daemon. */
static int start_with(const char *extra)
{
	FILE *f;

	if (env.pid > 0)
		hx_daemon_stop(&env);
	if (hx_write_config(&env) != 0 || !(f = fopen(env.conf_path, "a")))
		return -1;
	fputs(extra, f);
	fclose(f);
	return hx_daemon_start(&env);
}

/* Daemon's resident memory in KiB (VmRSS), 0 if unknown. */
static unsigned long daemon_rss_kib(void)
{
	char path[64], line[256];
	unsigned long kib = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)env.pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* True once the server closed fd (FIN or RST received), without reading from it. */
static bool server_closed(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
		return true;
	return ti.tcpi_state != TCP_ESTABLISHED;
}

/* Wait up to secs for all n fds to be closed by the server; how many were. */
static unsigned wait_closed(const int *fds, unsigned n, double secs)
{
	double end = hx_now() + secs;
	unsigned closed;

	for (;;) {
		closed = 0;
		for (unsigned i = 0; i < n; i++)
			closed += server_closed(fds[i]);
		if (closed == n || hx_now() >= end)
			return closed;
		usleep(50000);
	}
}

/* A raw connection whose fd is non-blocking (or -1). */
static int hostile_connect(int rcvbuf)
{
	struct raw_conn c;

	if (raw_connect(&c, env.port) != 0)
		return -1;
	if (rcvbuf)
		setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
	return c.fd;
}

/*
 * The well-behaved client: NULL and GETATTR of the export root on a fresh
 * connection, each answered within GOOD_BOUND_MS. Returns seconds taken or
 * -1; *why names what failed.
 */
static double good_client(const char **why)
{
	struct raw_conn c;
	struct raw_reply r;
	struct xb b;
	double t0 = hx_now();
	bool ok;

	*why = "connect";
	if (raw_connect(&c, env.port) != 0)
		return -1;
	xb_init(&b);
	xb_call_header(&b, 0x600d, RAW_NFS_PROG, 3, 0, 0, 0);
	ok = raw_send_record(&c, b.p, b.len) == 0 && raw_recv_reply(&c, &r, GOOD_BOUND_MS) == RAW_RECV_OK;
	xb_free(&b);
	*why = "NULL";
	if (!ok || r.xid != 0x600d || r.accept_stat != 0) {
		if (ok)
			raw_reply_free(&r);
		raw_close(&c);
		return -1;
	}
	raw_reply_free(&r);
	xb_init(&b);
	xb_call_header(&b, 0x600e, RAW_NFS_PROG, 3, 1, 0, 0); /* GETATTR root */
	xb_opaque(&b, root, root_len);
	ok = raw_send_record(&c, b.p, b.len) == 0 && raw_recv_reply(&c, &r, GOOD_BOUND_MS) == RAW_RECV_OK;
	xb_free(&b);
	*why = "GETATTR";
	if (ok) {
		ok = r.xid == 0x600e && r.accept_stat == 0 && xd_u32(&r.body) == 0;
		raw_reply_free(&r);
	}
	raw_close(&c);
	return ok ? hx_now() - t0 : -1;
}

static void check_good_client(const char *while_what)
{
	const char *why = "";
	double t = good_client(&why);

	if (CHECK(t >= 0, "a new client's NULL and GETATTR are answered within %d s each while %s (%s)",
		  GOOD_BOUND_MS / 1000, while_what, t >= 0 ? "ok" : why))
		hx_note("good client answered in %.3f s while %s", t, while_what);
}

static int mnt_and_lookup(void)
{
	struct raw_conn c;
	struct raw_reply r;
	struct xb b;
	const uint8_t *p;
	int st;

	if (raw_connect(&c, env.port) != 0)
		return -1;
	st = raw_mnt(&c, 1, env.export_dir, root, &root_len);
	if (st != 0) {
		raw_close(&c);
		return -1;
	}
	xb_init(&b);
	xb_opaque(&b, root, root_len);
	xb_string(&b, "big1m");
	st = -1;
	if (raw_call(&c, 2, RAW_NFS_PROG, 3, 3, b.p, b.len, &r) == RAW_RECV_OK) { /* LOOKUP */
		if (xd_u32(&r.body) == 0 && (p = xd_opaque(&r.body, &big_fh_len, 64)) != NULL) {
			memcpy(big_fh, p, big_fh_len);
			st = 0;
		}
		raw_reply_free(&r);
	}
	xb_free(&b);
	raw_close(&c);
	return st;
}

/* ---- 1: replies never read ---------------------------------------------- */

#define READERS 3
#define READS_EACH 400

/* Queue as many pipelined READ 1 MiB calls on fd as it takes without blocking. */
static unsigned send_reads(int fd, uint32_t xid0)
{
	unsigned sent = 0;
	struct xb b;

	for (unsigned i = 0; i < READS_EACH; i++) {
		uint32_t mark;

		xb_init(&b);
		xb_u32(&b, 0);
		xb_call_header(&b, xid0 + i, RAW_NFS_PROG, 3, 6, 0, 0);
		xb_opaque(&b, big_fh, big_fh_len);
		xb_u64(&b, 0);
		xb_u32(&b, 1024 * 1024);
		mark = htonl(0x80000000u | (uint32_t)(b.len - 4));
		memcpy(b.p, &mark, 4);
		size_t len = b.len;
		ssize_t w = send(fd, b.p, len, MSG_NOSIGNAL);
		xb_free(&b);
		if (w < 0 || (size_t)w != len)
			break; /* socket full: a torn record does not matter here */
		sent++;
	}
	return sent;
}

static void test_unread_replies(void)
{
	int fds[READERS];
	unsigned long rss0, rss1;
	unsigned n = 0;

	hx_section("1: clients that pipeline 1 MiB READs and never read the replies");
	if (start_with("[tcp]\nmax-calls = 16\nconn-max-calls = 8\nsend-timeout = 3\nidle-timeout = 0\n") != 0 ||
	    !CHECK(mnt_and_lookup() == 0, "MNT and LOOKUP of a 1 MiB file"))
		return;
	rss0 = daemon_rss_kib();
	for (unsigned i = 0; i < READERS; i++) {
		fds[n] = hostile_connect(4096);
		if (fds[n] >= 0) {
			unsigned sent = send_reads(fds[n], 0x10000u * (i + 1));
			hx_note("hostile reader %u: %u READs of 1 MiB queued", i, sent);
			n++;
		}
	}
	CHECK_EQ(n, READERS, "hostile readers connected");
	usleep(1000000); /* let them take what they can */
	rss1 = daemon_rss_kib();
	hx_note("rnfsd RSS %lu KiB before, %lu KiB with %u unread readers", rss0, rss1, n);
	check_good_client("3 connections leave 1 MiB READ replies unread");
	CHECK_EQ(wait_closed(fds, n, 3 + 6), n,
		 "the readers are closed within send-timeout (3 s) + 6 s of no send progress");
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
	check_good_client("after the readers are gone");
}

/* ---- 2: partial records trickled ---------------------------------------- */

#define TRICKLERS 12       /* small records, stay in the connection's own buffer */
#define BIG_TRICKLERS 12   /* 80 KiB of a 512 KiB WRITE record, then trickled */

struct trickle {
	int fds[TRICKLERS + BIG_TRICKLERS];
	unsigned n;
	_Atomic bool stop; /* main thread -> trickle_main (ThreadSanitizer: not volatile) */
};

/* One byte on each connection every 0.4 s, well inside record-timeout: silence never lasts. */
static void *trickle_main(void *arg)
{
	struct trickle *t = arg;
	uint8_t byte = 0;

	while (!t->stop) {
		for (unsigned i = 0; i < t->n; i++)
			if (!server_closed(t->fds[i]))
				(void)send(t->fds[i], &byte, 1, MSG_NOSIGNAL);
		usleep(400000);
	}
	return NULL;
}

static int trickler_open(bool big)
{
	static uint8_t body[80 * 1024];
	uint32_t mark = htonl(0x80000000u | (big ? 512u * 1024 : 200u));
	int fd = hostile_connect(0);
	struct xb b;

	if (fd < 0)
		return -1;
	xb_init(&b);
	xb_raw(&b, &mark, 4);
	xb_call_header(&b, 0x7000, RAW_NFS_PROG, 3, big ? 7 : 0, 0, 0);
	xb_raw(&b, body, big ? sizeof(body) : 8);
	for (size_t off = 0; off < b.len;) { /* small enough for the socket buffers */
		ssize_t w = send(fd, b.p + off, b.len - off, MSG_NOSIGNAL);
		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno != EAGAIN && errno != EINTR)
			break;
		else
			usleep(1000);
	}
	xb_free(&b);
	return fd;
}

static void test_trickled_records(void)
{
	static struct trickle t;
	pthread_t th;
	double t0;

	hx_section("2: clients that trickle partial records");
	if (start_with("[tcp]\nmax-calls = 16\nconn-max-calls = 8\nrecord-timeout = 3\nidle-timeout = 0\n") != 0 ||
	    !CHECK(mnt_and_lookup() == 0, "MNT and LOOKUP of a 1 MiB file"))
		return;
	memset(&t, 0, sizeof(t));
	for (unsigned i = 0; i < TRICKLERS + BIG_TRICKLERS; i++) {
		int fd = trickler_open(i >= TRICKLERS);
		if (fd >= 0)
			t.fds[t.n++] = fd;
	}
	CHECK_EQ(t.n, TRICKLERS + BIG_TRICKLERS, "tricklers connected");
	t0 = hx_now();
	if (!CHECK(pthread_create(&th, NULL, trickle_main, &t) == 0, "trickle thread"))
		return;
	usleep(500000);
	check_good_client("24 connections trickle partial records (more than the 16 call contexts)");
	CHECK_EQ(wait_closed(t.fds, t.n, 3 + 6 - (hx_now() - t0)), t.n,
		 "every trickler is closed within record-timeout (3 s) + 6 s of its first byte, though "
		 "never silent for 0.5 s");
	hx_note("tricklers closed after %.1f s", hx_now() - t0);
	t.stop = true;
	pthread_join(th, NULL);
	for (unsigned i = 0; i < t.n; i++)
		close(t.fds[i]);
	check_good_client("after the tricklers are gone");
}

/* ---- 3: idle connections fill the table -------------------------------- */

#define MAX_CONNS 8

static void test_idle_connections(void)
{
	int fds[MAX_CONNS];
	unsigned n = 0, closed;

	hx_section("3: idle connections fill the connection table");
	if (start_with("[rnfsd]\nmax-connections = 8\n[tcp]\nidle-timeout = 3\n") != 0)
		return;
	for (unsigned i = 0; i < MAX_CONNS; i++) {
		fds[n] = hostile_connect(0);
		if (fds[n] >= 0)
			n++;
		usleep(20000); /* accepted in this order: fds[0] is the oldest */
	}
	CHECK_EQ(n, MAX_CONNS, "idle connections opened");
	usleep(300000);
	CHECK_EQ(wait_closed(fds, n, 0), 0, "all %u idle connections are open (the table is full)", n);
	check_good_client("max-connections idle connections are open");
	closed = wait_closed(fds, n, 0);
	CHECK(closed >= 1 && server_closed(fds[0]),
	      "the oldest idle connection was closed to make room (%u closed)", closed);
	CHECK_EQ(wait_closed(fds, n, 3 + 4), n, "idle connections are closed within idle-timeout (3 s) + 4 s");
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
	check_good_client("after the idle connections were aged out");
}

int main(int argc, char **argv)
{
	hx_begin("tcp_hostile", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	hx_write_file(hx_xpath(&env, "big1m"), NULL, 0, 0644);
	if (truncate(hx_xpath(&env, "big1m"), 1024 * 1024) != 0)
		perror("truncate");
	test_unread_replies();
	test_trickled_records();
	test_idle_connections();
	CHECK(hx_daemon_alive(&env), "daemon still running at the end");
	hx_daemon_stop(&env);
	return hx_end();
}
