/*
 * test_tcp_xprt.c - the TCP transport end to end, in process:
 * the real loop, worker pool, RPC layer and TCP transport on 127.0.0.1 with
 * an ephemeral port, a test program (rpc_test_prog.h), and blocking client
 * sockets speaking RFC 5531 record marking. Covers pipelining and
 * out-of-order replies, back-pressure, multi-fragment and byte-by-byte
 * records, oversized records, every RPC error reply, the duplicate request
 * cache, zero-copy bulk replies, many connections, max-connections, peers
 * vanishing with calls in flight, peers that never read their replies, and
 * the graceful drain.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/workers.h"
#include "tests/unit/rpc_test_prog.h"
#include "transport/tcp.h"

#define MAX_RECORD (256u * 1024)
#define CONN_MAX_CALLS 8
#define MAX_CALLS 40
#define MAX_CONNS 64

static struct loop *lp;
static pthread_t loop_thread;
static struct tcp_xprt *xprt;
static uint16_t port;

/* ---- client side ---- */

static int tconnect(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval tv = {10, 0};
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		assert_true(w > 0);
		b += w;
		n -= (size_t)w;
	}
}

static void put_mark(uint8_t *p, uint32_t len, bool last)
{
	uint32_t be = htonl((last ? 0x80000000u : 0) | len);
	memcpy(p, &be, 4);
}

/* Append m as one record to out. */
static size_t record(uint8_t *out, const struct tmsg *m)
{
	put_mark(out, (uint32_t)m->n, true);
	memcpy(out + 4, m->b, m->n);
	return m->n + 4;
}

static void send_record(int fd, const struct tmsg *m)
{
	static uint8_t buf[sizeof(m->b) + 4];
	send_all(fd, buf, record(buf, m));
}

/* recv exactly n bytes; false on EOF, error or timeout. */
static bool recv_all(int fd, void *p, size_t n)
{
	uint8_t *b = p;
	while (n) {
		ssize_t r = recv(fd, b, n, 0);
		if (r <= 0)
			return false;
		b += r;
		n -= (size_t)r;
	}
	return true;
}

/* One reply record into buf; its length, or -1. */
static ssize_t recv_reply(int fd, uint8_t *buf, size_t cap)
{
	size_t len = 0;
	bool last = false;
	while (!last) {
		uint8_t h[4];
		if (!recv_all(fd, h, 4))
			return -1;
		uint32_t v = tget_u32(h, 0);
		last = v & 0x80000000u;
		v &= 0x7fffffffu;
		if (v > cap - len || !recv_all(fd, buf + len, v))
			return -1;
		len += v;
	}
	return (ssize_t)len;
}

/* True if the server closed fd (EOF or reset) within 5 s. */
static bool closed_by_server(int fd)
{
	uint8_t b[256];
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	for (int i = 0; i < 50; i++) {
		if (poll(&pfd, 1, 100) == 1) {
			ssize_t r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
			if (r == 0 || (r < 0 && errno == ECONNRESET))
				return true;
		}
	}
	return false;
}

/* True if nothing arrives on fd within ms. */
static bool silent_for(int fd, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	return poll(&pfd, 1, ms) == 0;
}

static void wait_conns(unsigned n)
{
	for (int i = 0; i < 500 && tcp_xprt_conns(xprt) != n; i++)
		usleep(10000);
	assert_int_equal(tcp_xprt_conns(xprt), n);
}

static uint8_t rbuf[2u << 20];

static void expect_reply_words(int fd, const uint32_t *w, size_t n)
{
	ssize_t len = recv_reply(fd, rbuf, sizeof(rbuf));
	assert_int_equal(len, (ssize_t)(n * 4));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(tget_u32(rbuf, i * 4), w[i]);
}

/* ---- tests ---- */

static void test_null_and_echo(void **state)
{
	(void)state;
	struct tmsg m;
	int fd = tconnect();

	tmsg_call(&m, 1, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(fd, &m);
	const uint32_t w[] = {1, 1, 0, 0, 0, 0};
	expect_reply_words(fd, w, 6);

	tmsg_call(&m, 2, TPROG, 3, TPROC_ECHO, NULL, 0);
	tmsg_opaque(&m, "over tcp", 8);
	send_record(fd, &m);
	assert_int_equal(recv_reply(fd, rbuf, sizeof(rbuf)), 24 + 4 + 8);
	assert_int_equal(tget_u32(rbuf, 0), 2);
	assert_int_equal(tget_u32(rbuf, 20), 0);
	assert_memory_equal(rbuf + 28, "over tcp", 8);
	close(fd);
}

static void test_out_of_order(void **state)
{
	(void)state;
	static uint8_t out[4096];
	struct tmsg m;
	size_t n = 0;
	int fd = tconnect();

	tmsg_call(&m, 10, TPROG, 2, TPROC_SLOW, NULL, 0);
	tmsg_u32(&m, 400);
	n += record(out + n, &m);
	tmsg_call(&m, 11, TPROG, 2, TPROC_NULL, NULL, 0);
	n += record(out + n, &m);
	tmsg_call(&m, 12, TPROG, 2, TPROC_ECHO, NULL, 0);
	tmsg_opaque(&m, "x", 1);
	n += record(out + n, &m);
	send_all(fd, out, n); /* three pipelined calls in one segment */

	uint32_t order[3];
	for (int i = 0; i < 3; i++) {
		assert_true(recv_reply(fd, rbuf, sizeof(rbuf)) >= 24);
		order[i] = tget_u32(rbuf, 0);
	}
	/* The slow one was first in, last out. */
	assert_int_equal(order[2], 10);
	assert_true((order[0] == 11 && order[1] == 12) || (order[0] == 12 && order[1] == 11));
	close(fd);
}

/* Many more pipelined calls than a connection may have in flight. */
static void test_pipelined_backpressure(void **state)
{
	(void)state;
	enum { N = 300 };
	static uint8_t out[N * 128];
	static bool seen[N];
	struct tmsg m;
	size_t n = 0;
	int fd = tconnect();

	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 0; i < N; i++) {
		char payload[32];
		int len = snprintf(payload, sizeof(payload), "call-%u", i);
		tmsg_call(&m, 1000 + i, TPROG, 2, i % 10 == 0 ? TPROC_SLOW : TPROC_ECHO, NULL, 0);
		if (i % 10 == 0)
			tmsg_u32(&m, 5);
		else
			tmsg_opaque(&m, payload, (uint32_t)len);
		n += record(out + n, &m);
	}
	send_all(fd, out, n);
	for (uint32_t k = 0; k < N; k++) {
		ssize_t len = recv_reply(fd, rbuf, sizeof(rbuf));
		assert_true(len >= 24);
		uint32_t i = tget_u32(rbuf, 0) - 1000;
		assert_true(i < N);
		assert_false(seen[i]);
		seen[i] = true;
		assert_int_equal(tget_u32(rbuf, 20), 0);
		if (i % 10) {
			char payload[32];
			int plen = snprintf(payload, sizeof(payload), "call-%u", i);
			assert_int_equal(tget_u32(rbuf, 24), plen);
			assert_memory_equal(rbuf + 28, payload, plen);
		}
	}
	close(fd);
}

static void test_multi_fragment(void **state)
{
	(void)state;
	static uint8_t out[8192];
	struct tmsg m;
	int fd = tconnect();
	char text[300];

	memset(text, 'q', sizeof(text));
	tmsg_call(&m, 20, TPROG, 2, TPROC_ECHO, NULL, 0);
	tmsg_opaque(&m, text, sizeof(text));
	/* Fragments of 1, 0, 7, 0, 100 and the rest bytes. */
	const size_t cuts[] = {1, 0, 7, 0, 100};
	size_t n = 0, pos = 0;
	for (size_t i = 0; i < 5; i++) {
		put_mark(out + n, (uint32_t)cuts[i], false);
		memcpy(out + n + 4, m.b + pos, cuts[i]);
		n += 4 + cuts[i];
		pos += cuts[i];
	}
	put_mark(out + n, (uint32_t)(m.n - pos), true);
	memcpy(out + n + 4, m.b + pos, m.n - pos);
	n += 4 + m.n - pos;

	/* Once in one write, once byte by byte. */
	send_all(fd, out, n);
	assert_int_equal(recv_reply(fd, rbuf, sizeof(rbuf)), 24 + 4 + 300);
	assert_memory_equal(rbuf + 28, text, 300);
	for (size_t i = 0; i < n; i++)
		send_all(fd, out + i, 1);
	assert_int_equal(recv_reply(fd, rbuf, sizeof(rbuf)), 24 + 4 + 300);
	assert_int_equal(tget_u32(rbuf, 0), 20);
	assert_memory_equal(rbuf + 28, text, 300);

	/* An empty record is ignored; the connection goes on. */
	uint8_t empty[4];
	put_mark(empty, 0, true);
	send_all(fd, empty, 4);
	tmsg_call(&m, 21, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(fd, &m);
	const uint32_t w[] = {21, 1, 0, 0, 0, 0};
	expect_reply_words(fd, w, 6);
	close(fd);
}

static void test_large_request(void **state)
{
	(void)state;
	static struct tmsg m;
	static uint8_t data[200000];
	int fd = tconnect();

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 7);
	m.n = 0;
	tmsg_call(&m, 30, TPROG, 2, TPROC_ECHO, NULL, 0);
	m.n = 40;
	/* Build directly: the message exceeds struct tmsg's buffer. */
	static uint8_t msg[sizeof(data) + 64];
	memcpy(msg, m.b, 40);
	uint32_t be = htonl(sizeof(data));
	memcpy(msg + 40, &be, 4);
	memcpy(msg + 44, data, sizeof(data));
	size_t len = 44 + sizeof(data);
	static uint8_t out[sizeof(msg) + 4];
	put_mark(out, (uint32_t)len, true);
	memcpy(out + 4, msg, len);
	send_all(fd, out, len + 4);
	assert_int_equal(recv_reply(fd, rbuf, sizeof(rbuf)), 24 + 4 + (ssize_t)sizeof(data));
	assert_int_equal(tget_u32(rbuf, 24), sizeof(data));
	assert_memory_equal(rbuf + 28, data, sizeof(data));
	close(fd);
}

static void test_oversized_record_closes(void **state)
{
	(void)state;
	struct tmsg m;
	int fd = tconnect();
	int ok = tconnect();
	uint8_t h[4];

	put_mark(h, MAX_RECORD + 1, true);
	send_all(fd, h, 4);
	assert_true(closed_by_server(fd));
	close(fd);

	/* Over the limit only across fragments. */
	fd = tconnect();
	static uint8_t frag[MAX_RECORD / 2 + 4];
	put_mark(frag, MAX_RECORD / 2, false);
	send_all(fd, frag, sizeof(frag));
	put_mark(h, MAX_RECORD / 2 + 1, true);
	send_all(fd, h, 4);
	assert_true(closed_by_server(fd));
	close(fd);

	/* Other connections are unaffected. */
	tmsg_call(&m, 40, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(ok, &m);
	const uint32_t w[] = {40, 1, 0, 0, 0, 0};
	expect_reply_words(ok, w, 6);
	close(ok);
}

static void test_rpc_errors(void **state)
{
	(void)state;
	struct tmsg m;
	uint8_t body[256];
	int fd = tconnect();

	tmsg_call(&m, 50, 100003, 3, 0, NULL, 0);
	send_record(fd, &m);
	const uint32_t prog_unavail[] = {50, 1, 0, 0, 0, 1};
	expect_reply_words(fd, prog_unavail, 6);

	tmsg_call(&m, 51, TPROG, 7, 0, NULL, 0);
	send_record(fd, &m);
	const uint32_t prog_mismatch[] = {51, 1, 0, 0, 0, 2, 2, 3};
	expect_reply_words(fd, prog_mismatch, 8);

	tmsg_call(&m, 52, TPROG, 2, 4000, NULL, 0);
	send_record(fd, &m);
	const uint32_t proc_unavail[] = {52, 1, 0, 0, 0, 3};
	expect_reply_words(fd, proc_unavail, 6);

	tmsg_call(&m, 53, TPROG, 2, TPROC_ECHO, NULL, 0);
	tmsg_u32(&m, 1000); /* opaque longer than the message */
	send_record(fd, &m);
	const uint32_t garbage[] = {53, 1, 0, 0, 0, 4};
	expect_reply_words(fd, garbage, 6);

	size_t blen = tmsg_authsys(body, "h", 0, 0, 17);
	tmsg_call(&m, 54, TPROG, 2, TPROC_NULL, body, (uint32_t)blen);
	send_record(fd, &m);
	const uint32_t badcred[] = {54, 1, 1, 1, 1};
	expect_reply_words(fd, badcred, 5);

	tmsg_call(&m, 55, TPROG, 2, TPROC_NULL, NULL, 0);
	m.b[11] = 4; /* rpcvers 4 */
	send_record(fd, &m);
	const uint32_t rpc_mismatch[] = {55, 1, 1, 0, 2, 2};
	expect_reply_words(fd, rpc_mismatch, 6);

	/* Not a call, or no header at all: no reply, the connection stays. */
	tmsg_call(&m, 56, TPROG, 2, TPROC_NULL, NULL, 0);
	m.b[7] = 1; /* REPLY */
	send_record(fd, &m);
	m.n = 6;
	send_record(fd, &m);
	assert_true(silent_for(fd, 200));
	tmsg_call(&m, 57, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(fd, &m);
	const uint32_t ok[] = {57, 1, 0, 0, 0, 0};
	expect_reply_words(fd, ok, 6);
	close(fd);
}

static void test_drc(void **state)
{
	(void)state;
	struct tmsg m;
	static uint8_t first[64];
	int fd = tconnect();
	unsigned before = tprog_count_get();

	tmsg_call(&m, 60, TPROG, 2, TPROC_COUNT, NULL, 0);
	send_record(fd, &m);
	ssize_t len = recv_reply(fd, first, sizeof(first));
	assert_int_equal(len, 28);
	send_record(fd, &m); /* retransmission */
	assert_int_equal(recv_reply(fd, rbuf, sizeof(rbuf)), len);
	assert_memory_equal(rbuf, first, (size_t)len);
	assert_int_equal(tprog_count_get(), before + 1);

	/* Retransmitted while still running: one reply only. */
	tprog_gate_set(false);
	tmsg_call(&m, 61, TPROG, 2, TPROC_BLOCK, NULL, 0);
	send_record(fd, &m);
	while (tprog_blocked_get() == 0)
		usleep(1000);
	send_record(fd, &m);
	assert_true(silent_for(fd, 200));
	tprog_gate_set(true);
	assert_int_equal(recv_reply(fd, rbuf, sizeof(rbuf)), 28);
	assert_int_equal(tget_u32(rbuf, 0), 61);
	assert_int_equal(tget_u32(rbuf, 24), before + 2);
	assert_true(silent_for(fd, 300));
	close(fd);
}

static void test_bulk_reply(void **state)
{
	(void)state;
	struct tmsg m;
	int fd = tconnect();
	const uint32_t sizes[] = {0, 1, 3, 4, 4093, 65536, (1u << 20) - 1, 1u << 20};

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t n = sizes[k];
		tmsg_call(&m, 70 + (uint32_t)k, TPROG, 2, TPROC_BULK, NULL, 0);
		tmsg_u32(&m, n);
		tmsg_u32(&m, (uint32_t)k);
		send_record(fd, &m);
		size_t padded = (n + 3) & ~3u;
		assert_int_equal(recv_reply(fd, rbuf, sizeof(rbuf)), (ssize_t)(24 + 4 + padded + 4));
		assert_int_equal(tget_u32(rbuf, 20), 0);
		assert_int_equal(tget_u32(rbuf, 24), n);
		for (uint32_t i = 0; i < n; i++)
			if (rbuf[28 + i] != tprog_pattern((uint32_t)k, i))
				fail_msg("byte %u of %u differs", i, n);
		for (size_t i = n; i < padded; i++)
			assert_int_equal(rbuf[28 + i], 0);
		assert_int_equal(tget_u32(rbuf, 28 + padded), 0xfeedface);
	}
	/* More than the payload area: SYSTEM_ERR, connection fine. */
	tmsg_call(&m, 79, TPROG, 2, TPROC_BULK, NULL, 0);
	tmsg_u32(&m, (1u << 20) + 1);
	tmsg_u32(&m, 0);
	send_record(fd, &m);
	const uint32_t syserr[] = {79, 1, 0, 0, 0, 5};
	expect_reply_words(fd, syserr, 6);
	close(fd);
}

/* Many connections at once, each with pipelined slow calls: the global
 * context pool (MAX_CALLS) is smaller than what they ask for. */
static void test_many_connections(void **state)
{
	(void)state;
	enum { NC = 40, PER = 12 };
	static int fds[NC];
	static uint8_t out[PER * 64];
	struct tmsg m;

	wait_conns(0);
	for (int c = 0; c < NC; c++)
		fds[c] = tconnect();
	for (int c = 0; c < NC; c++) {
		size_t n = 0;
		for (uint32_t i = 0; i < PER; i++) {
			tmsg_call(&m, (uint32_t)(c * 100 + i), TPROG, 2, TPROC_SLOW, NULL, 0);
			tmsg_u32(&m, 2);
			n += record(out + n, &m);
		}
		send_all(fds[c], out, n);
	}
	wait_conns(NC);
	for (int c = 0; c < NC; c++) {
		unsigned seen = 0;
		for (uint32_t i = 0; i < PER; i++) {
			assert_int_equal(recv_reply(fds[c], rbuf, sizeof(rbuf)), 28);
			uint32_t xid = tget_u32(rbuf, 0);
			assert_int_equal(xid / 100, c);
			seen |= 1u << (xid % 100);
		}
		assert_int_equal(seen, (1u << PER) - 1);
	}
	for (int c = 0; c < NC; c++)
		close(fds[c]);
	wait_conns(0);
}

static void test_max_connections(void **state)
{
	(void)state;
	static int fds[MAX_CONNS + 3];
	struct tmsg m;

	wait_conns(0);
	for (int i = 0; i < MAX_CONNS; i++)
		fds[i] = tconnect();
	wait_conns(MAX_CONNS);
	for (int i = MAX_CONNS; i < MAX_CONNS + 3; i++) {
		fds[i] = tconnect(); /* the kernel accepts; rnfsd closes at once */
		assert_true(closed_by_server(fds[i]));
		close(fds[i]);
	}
	tmsg_call(&m, 80, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(fds[MAX_CONNS - 1], &m);
	const uint32_t w[] = {80, 1, 0, 0, 0, 0};
	expect_reply_words(fds[MAX_CONNS - 1], w, 6);
	for (int i = 0; i < MAX_CONNS; i++)
		close(fds[i]);
	wait_conns(0);
}

/* The client goes away with calls in the workers and replies unsent. */
static void test_peer_vanishes(void **state)
{
	(void)state;
	static uint8_t out[64 * 64];
	struct tmsg m;

	for (int round = 0; round < 5; round++) {
		int fd = tconnect();
		size_t n = 0;
		for (uint32_t i = 0; i < 20; i++) {
			tmsg_call(&m, i, TPROG, 2, i % 2 ? TPROC_SLOW : TPROC_BULK, NULL, 0);
			tmsg_u32(&m, i % 2 ? 30 : 500000);
			tmsg_u32(&m, 1);
			n += record(out + n, &m);
		}
		send_all(fd, out, n);
		usleep(round * 10000);
		struct linger lg = {1, 0}; /* RST */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
	}
	wait_conns(0);
	/* Give the workers time to finish: their completions find closed connections. */
	for (int i = 0; i < 200 && workers_pending(); i++)
		usleep(10000);
	assert_int_equal(workers_pending(), 0);
	int fd = tconnect();
	tmsg_call(&m, 90, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(fd, &m);
	const uint32_t w[] = {90, 1, 0, 0, 0, 0};
	expect_reply_words(fd, w, 6);
	close(fd);
}

/* Garbage streams: whatever happens, the daemon survives. */
static void test_garbage_stream(void **state)
{
	(void)state;
	static uint8_t junk[100000];
	struct tmsg m;
	unsigned seed = 12345;

	for (int round = 0; round < 20; round++) {
		int fd = tconnect();
		size_t n = 1 + (size_t)(rand_r(&seed) % sizeof(junk));
		for (size_t i = 0; i < n; i++)
			junk[i] = (uint8_t)rand_r(&seed);
		if (round % 2) /* small records of junk: dropped, not fatal */
			for (size_t i = 0; i + 4 < n; i += 64)
				put_mark(junk + i, 60, true);
		send(fd, junk, n, MSG_NOSIGNAL);
		close(fd);
	}
	wait_conns(0);
	int fd = tconnect();
	tmsg_call(&m, 91, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(fd, &m);
	const uint32_t w[] = {91, 1, 0, 0, 0, 0};
	expect_reply_words(fd, w, 6);
	close(fd);
}

/* A record that stops halfway holds a call context: closed after
 * record_timeout_s (1 s here). A connection idle between records stays. */
static void test_stalled_record(void **state)
{
	(void)state;
	struct tmsg m;
	static uint8_t out[256];
	int idle = tconnect();
	int stalled = tconnect();
	int stalled_hdr = tconnect();

	tmsg_call(&m, 95, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(idle, &m);
	const uint32_t w[] = {95, 1, 0, 0, 0, 0};
	expect_reply_words(idle, w, 6);

	size_t n = record(out, &m);
	send_all(stalled, out, n - 10); /* header and part of the body */
	send_all(stalled_hdr, out, 2);   /* half a record mark */
	assert_true(closed_by_server(stalled));
	assert_true(closed_by_server(stalled_hdr));

	assert_true(silent_for(idle, 1500));
	tmsg_call(&m, 96, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(idle, &m);
	const uint32_t w2[] = {96, 1, 0, 0, 0, 0};
	expect_reply_words(idle, w2, 6);
	close(idle);
	close(stalled);
	close(stalled_hdr);
}

/* Connections that pipeline bulk replies and never read them hold no more
 * than the pool less its reserve: a new connection is still answered. */
static void test_unread_replies(void **state)
{
	(void)state;
	enum { NH = 6, PER = 40 };
	static uint8_t out[PER * 64];
	static int fds[NH];
	struct tmsg m;
	int small = 4096;

	wait_conns(0);
	for (int h = 0; h < NH; h++) {
		size_t n = 0;
		fds[h] = tconnect();
		setsockopt(fds[h], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		for (uint32_t i = 0; i < PER; i++) {
			tmsg_call(&m, (uint32_t)(h * 100 + i), TPROG, 2, TPROC_BULK, NULL, 0);
			tmsg_u32(&m, 1u << 20);
			tmsg_u32(&m, 1);
			n += record(out + n, &m);
		}
		send_all(fds[h], out, n);
	}
	usleep(300000); /* NH * CONN_MAX_CALLS > MAX_CALLS: the pool would be gone */
	int fd = tconnect();
	tmsg_call(&m, 97, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(fd, &m);
	const uint32_t w[] = {97, 1, 0, 0, 0, 0};
	expect_reply_words(fd, w, 6); /* recv times out after 10 s */
	close(fd);
	for (int h = 0; h < NH; h++) {
		struct linger lg = {1, 0};
		setsockopt(fds[h], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fds[h]);
	}
	wait_conns(0);
}

static volatile int drained;

static void drain_done(void *arg)
{
	(void)arg;
	drained = 1;
	loop_break(lp);
}

static void drain_start_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	tcp_xprt_drain(xprt, drain_done, NULL);
}

/* Last: calls in flight are answered, then connections close, then done. */
static void test_drain(void **state)
{
	(void)state;
	struct tmsg m;
	int fd = tconnect();
	int idle = tconnect();

	wait_conns(2);
	tmsg_call(&m, 100, TPROG, 2, TPROC_SLOW, NULL, 0);
	tmsg_u32(&m, 300);
	send_record(fd, &m);
	usleep(50000);
	struct loop_ev *ev = loop_timer(lp, false, drain_start_cb, NULL);
	struct timeval now = {0, 0};
	loop_ev_add(ev, &now);

	assert_true(closed_by_server(idle)); /* nothing in flight: EOF at once */
	/* Calls sent now are read and discarded, not answered. */
	tmsg_call(&m, 101, TPROG, 2, TPROC_NULL, NULL, 0);
	send_record(fd, &m);
	assert_int_equal(recv_reply(fd, rbuf, sizeof(rbuf)), 28);
	assert_int_equal(tget_u32(rbuf, 0), 100);
	assert_true(closed_by_server(fd)); /* EOF after the last reply */
	/* Done without waiting for us to close. */
	pthread_join(loop_thread, NULL);
	assert_true(drained);
	loop_ev_free(ev);
	close(idle);
	close(fd);

	/* The listener is gone. */
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_not_equal(connect(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	close(s);
}

static void *loop_main(void *arg)
{
	loop_run(arg);
	return NULL;
}

static int setup(void **state)
{
	(void)state;
	struct tcp_params p = {
		.n_listen = 1,
		.max_connections = MAX_CONNS,
		.max_record = MAX_RECORD,
		.conn_max_calls = CONN_MAX_CALLS,
		.max_calls = MAX_CALLS,
		.reply_cap = TCP_REPLY_CAP,
		.payload_cap = TCP_PAYLOAD_CAP,
		.record_timeout_s = 1,
	};
	strcpy(p.listen[0].addr, "127.0.0.1");
	p.listen[0].port = 0;

	log_init(true, getenv("RNFSD_TEST_VERBOSE") ? 1 : 0);
	lp = loop_new();
	if (!lp || rpc_init(64) != 0)
		return -1;
	rpc_register_program(&tprog);
	if (workers_start(lp, 4) != 0)
		return -1;
	xprt = tcp_xprt_start(lp, &p);
	if (!xprt)
		return -1;
	port = tcp_xprt_port(xprt);
	if (port == 0)
		return -1;
	return pthread_create(&loop_thread, NULL, loop_main, lp) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	/* test_drain stopped the loop thread. */
	workers_stop();
	tcp_xprt_free(xprt);
	loop_free(lp);
	rpc_release();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_and_echo),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_pipelined_backpressure),
		cmocka_unit_test(test_multi_fragment),
		cmocka_unit_test(test_large_request),
		cmocka_unit_test(test_oversized_record_closes),
		cmocka_unit_test(test_rpc_errors),
		cmocka_unit_test(test_drc),
		cmocka_unit_test(test_bulk_reply),
		cmocka_unit_test(test_many_connections),
		cmocka_unit_test(test_max_connections),
		cmocka_unit_test(test_peer_vanishes),
		cmocka_unit_test(test_garbage_stream),
		cmocka_unit_test(test_stalled_record),
		cmocka_unit_test(test_unread_replies),
		cmocka_unit_test(test_drain),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
