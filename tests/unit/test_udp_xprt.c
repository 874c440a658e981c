/*
 * test_udp_xprt.c - the UDP transport (transport/udp_xprt.c) in process: the
 * real loop, worker pool and RPC layer with the test program (rpc_test_prog.h)
 * served over UDP on 127.0.0.1, and plain datagram sockets as clients. Covers
 * a call and its reply datagram, programs not served (PROG_UNAVAIL), replies
 * and runts ignored, a retransmission answered from the duplicate request
 * cache, the context pool running out (reading pauses, nothing is lost) and
 * the drain.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/workers.h"
#include "tests/unit/rpc_test_prog.h"
#include "transport/udp.h"

#define N_CTX 3

static struct loop *lp;
static pthread_t loop_thread;
static struct udp_xprt *ux;
static uint16_t port;
static uint8_t rbuf[UDP_REPLY_MAX + 16];

static int uconnect(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

static void usend(int fd, const struct tmsg *m)
{
	assert_int_equal(send(fd, m->b, m->n, 0), (ssize_t)m->n);
}

/* One reply datagram within ms, its length; -1 if none. */
static ssize_t urecv(int fd, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	return recv(fd, rbuf, sizeof(rbuf), 0);
}

static void test_call_and_reply(void **state)
{
	struct tmsg m;
	int fd = uconnect();

	(void)state;
	tmsg_call(&m, 7, TPROG, 2, TPROC_NULL, NULL, 0);
	usend(fd, &m);
	assert_int_equal(urecv(fd, 5000), 24);
	const uint32_t ok[] = {7, 1, 0, 0, 0, 0}; /* RFC 5531 §9: accepted, SUCCESS */
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(tget_u32(rbuf, i * 4), ok[i]);
	tmsg_call(&m, 8, TPROG, 2, TPROC_ECHO, NULL, 0);
	tmsg_opaque(&m, "hello", 5);
	usend(fd, &m);
	assert_int_equal(urecv(fd, 5000), 24 + 4 + 8);
	assert_int_equal(tget_u32(rbuf, 0), 8);
	assert_memory_equal(rbuf + 28, "hello", 5);
	tmsg_call(&m, 9, TPROG, 7, TPROC_NULL, NULL, 0); /* a version not served */
	usend(fd, &m);
	assert_int_equal(urecv(fd, 5000), 32);
	assert_int_equal(tget_u32(rbuf, 20), 2); /* PROG_MISMATCH 2..3 */
	assert_int_equal(tget_u32(rbuf, 24), 2);
	assert_int_equal(tget_u32(rbuf, 28), 3);
	close(fd);
}

static void test_not_served(void **state)
{
	struct tmsg m;
	int fd = uconnect();

	(void)state;
	tmsg_call(&m, 20, 100003, 3, 0, NULL, 0); /* NFS: not in the program list */
	usend(fd, &m);
	assert_int_equal(urecv(fd, 5000), 24);
	assert_int_equal(tget_u32(rbuf, 0), 20);
	assert_int_equal(tget_u32(rbuf, 20), 1); /* PROG_UNAVAIL */
	tmsg_call(&m, 21, TPROG, 2, TPROC_NULL, NULL, 0);
	m.b[7] = 1; /* a REPLY: dropped, not answered */
	usend(fd, &m);
	m.n = 10; /* a runt */
	usend(fd, &m);
	assert_int_equal(urecv(fd, 300), -1);
	tmsg_call(&m, 22, TPROG, 2, TPROC_GARBAGE, NULL, 0);
	usend(fd, &m);
	assert_int_equal(urecv(fd, 5000), 24);
	assert_int_equal(tget_u32(rbuf, 20), 4); /* GARBAGE_ARGS */
	close(fd);
}

static void test_retransmission(void **state)
{
	struct tmsg m;
	uint8_t first[64];
	int fd = uconnect();
	unsigned before = tprog_count_get();

	(void)state;
	tmsg_call(&m, 30, TPROG, 2, TPROC_COUNT, NULL, 0);
	usend(fd, &m);
	ssize_t len = urecv(fd, 5000);
	assert_int_equal(len, 28);
	memcpy(first, rbuf, (size_t)len);
	usend(fd, &m); /* the client's retransmission: the DRC answers, no second execution */
	assert_int_equal(urecv(fd, 5000), len);
	assert_memory_equal(rbuf, first, (size_t)len);
	assert_int_equal(tprog_count_get(), before + 1);
	close(fd);
}

/* More calls than contexts: reading pauses, the datagrams wait in the socket
 * buffer, and every call is answered once contexts come back. */
static void test_pool_exhausted(void **state)
{
	struct tmsg m;
	int fd = uconnect();
	unsigned got = 0;

	(void)state;
	tprog_gate_set(false);
	for (uint32_t i = 0; i < N_CTX + 4; i++) {
		tmsg_call(&m, 40 + i, TPROG, 2, TPROC_BLOCK, NULL, 0);
		usend(fd, &m);
	}
	for (int i = 0; i < 500 && tprog_blocked_get() < N_CTX; i++)
		usleep(10000);
	usleep(100000);
	assert_int_equal(tprog_blocked_get(), N_CTX); /* no more taken than the pool has */
	assert_int_equal(udp_xprt_base(ux)->ops->conns(udp_xprt_base(ux)), N_CTX);
	assert_int_equal(urecv(fd, 200), -1);
	tprog_gate_set(true);
	while (urecv(fd, 5000) == 28)
		if (++got == N_CTX + 4)
			break;
	assert_int_equal(got, N_CTX + 4);
	close(fd);
}

static atomic_bool drained; /* set on the loop thread, read by the test thread */

static void drain_done(void *arg)
{
	(void)arg;
	drained = true;
	loop_break(lp);
}

static void drain_start_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	udp_xprt_base(ux)->ops->drain(udp_xprt_base(ux), drain_done, NULL);
}

/* Last: the call in flight is answered, then done; later datagrams are not read. */
static void test_drain(void **state)
{
	struct tmsg m;
	int fd = uconnect();

	(void)state;
	tmsg_call(&m, 50, TPROG, 2, TPROC_SLOW, NULL, 0);
	tmsg_u32(&m, 300);
	usend(fd, &m);
	usleep(50000);
	struct loop_ev *ev = loop_timer(lp, false, drain_start_cb, NULL);
	struct timeval now = {0, 0};
	loop_ev_add(ev, &now);
	usleep(50000);
	assert_false(drained); /* waits for the call in flight */
	tmsg_call(&m, 51, TPROG, 2, TPROC_NULL, NULL, 0);
	usend(fd, &m);
	assert_int_equal(urecv(fd, 5000), 28);
	assert_int_equal(tget_u32(rbuf, 0), 50);
	pthread_join(loop_thread, NULL);
	assert_true(drained);
	assert_int_equal(urecv(fd, 300), -1); /* 51 never answered */
	loop_ev_free(ev);
	close(fd);
}

static void *loop_main(void *arg)
{
	loop_run(arg);
	return NULL;
}

static int setup(void **state)
{
	struct udp_params p = {.n_listen = 1, .port = 0, .n_ctx = N_CTX, .n_progs = 1, .progs = {TPROG}};

	(void)state;
	strcpy(p.listen[0].addr, "127.0.0.1");
	log_init(true, getenv("RNFSD_TEST_VERBOSE") ? 1 : 0);
	lp = loop_new();
	if (!lp || rpc_init(64) != 0)
		return -1;
	rpc_register_program(&tprog);
	if (workers_start(lp, 4 + N_CTX) != 0)
		return -1;
	ux = udp_xprt_create(lp, &p);
	if (!ux || udp_xprt_base(ux)->ops->start(udp_xprt_base(ux)) != 0)
		return -1;
	port = udp_xprt_port(ux);
	if (port == 0 || !udp_xprt_listens(ux, AF_INET) || udp_xprt_listens(ux, AF_INET6))
		return -1;
	return pthread_create(&loop_thread, NULL, loop_main, lp) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	udp_xprt_base(ux)->ops->stop(udp_xprt_base(ux));
	workers_stop();
	udp_xprt_base(ux)->ops->free(udp_xprt_base(ux));
	loop_free(lp);
	rpc_release();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_and_reply),
		cmocka_unit_test(test_not_served),
		cmocka_unit_test(test_retransmission),
		cmocka_unit_test(test_pool_exhausted),
		cmocka_unit_test(test_drain),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
