/*
 * test_tcp_loops.c - several event loops ([rnfsd] loops), in process: the
 * pure parts (round-robin, the limit shares, the loop count), loop_send()
 * (run on the target loop's thread, in order per sender; loop_flush() of a
 * loop that does not run: on the caller's thread, in order), worker
 * completions on their item's home loop (an unknown home: loop 0's), and the TCP
 * transport over three loops: accepted connections spread evenly, each
 * answered (worker completions on the connection's own loop), and the
 * drain fanned out to every loop and reported once, on loop 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/loop_pool.h"
#include "core/workers.h"
#include "tests/unit/rpc_test_prog.h"
#include "tests/unit/tcp_test_sock.h"
#include "transport/tcp.h"
#include "transport/tcp_internal.h"

#define NLOOPS 3
#define CONNS_PER_LOOP 2

static struct loop *lp;
static pthread_t loop_thread;
static struct tcp_xprt *xprt;
static uint16_t port;

/* ---- pure ---- */

static void test_round_robin(void **state)
{
	unsigned rr = 0;

	(void)state;
	for (unsigned i = 0; i < 7; i++)
		assert_int_equal(tcp_loops_next(&rr, 3), i % 3);
	rr = 5;
	assert_int_equal(tcp_loops_next(&rr, 1), 0);
	assert_int_equal(tcp_loops_next(&rr, 1), 0);
	assert_int_equal(tcp_loops_next(&rr, 0), 0);
}

static void test_shares(void **state)
{
	(void)state;
	assert_int_equal(tcp_loops_share(10, 3, 1), 4); /* ceiling: the whole never shrinks */
	assert_int_equal(tcp_loops_share(64, 4, 1), 16);
	assert_int_equal(tcp_loops_share(10, 3, 6), 6); /* at least one connection's calls */
	assert_int_equal(tcp_loops_share(1, 4, 1), 1);
	assert_int_equal(loop_pool_count(1, 8), 1);
	assert_int_equal(loop_pool_count(0, 8), 8);  /* 0: one per online CPU */
	assert_int_equal(loop_pool_count(0, -1), 1); /* unknown: one */
	assert_int_equal(loop_pool_count(500, 2), LOOP_POOL_MAX);
}

/* ---- loop_send ---- */

#define MSGS 200
struct tmsg_rec {
	struct loop_msg m;
	unsigned sender, seq;
};
static struct tmsg_rec recs[2][MSGS];
static unsigned last_seq[2];
static atomic_uint ran, wrong_thread, out_of_order;

static void rec_run(struct loop_msg *m)
{
	struct tmsg_rec *r = container_of(m, struct tmsg_rec, m);

	if (loop_current() != loop_pool_get(1))
		atomic_fetch_add(&wrong_thread, 1);
	if (r->seq != last_seq[r->sender]++)
		atomic_fetch_add(&out_of_order, 1);
	atomic_fetch_add(&ran, 1);
}

static void *sender_main(void *arg)
{
	unsigned s = (unsigned)(uintptr_t)arg;

	for (unsigned i = 0; i < MSGS; i++) {
		recs[s][i] = (struct tmsg_rec){ .m.fn = rec_run, .sender = s, .seq = i };
		loop_send(loop_pool_get(1), &recs[s][i].m);
	}
	return NULL;
}

static void test_loop_send(void **state)
{
	pthread_t t[2];

	(void)state;
	for (uintptr_t s = 0; s < 2; s++)
		assert_int_equal(pthread_create(&t[s], NULL, sender_main, (void *)s), 0);
	for (unsigned s = 0; s < 2; s++)
		pthread_join(t[s], NULL);
	for (int i = 0; i < 500 && atomic_load(&ran) < 2 * MSGS; i++)
		usleep(10000);
	assert_int_equal(atomic_load(&ran), 2 * MSGS);
	assert_int_equal(atomic_load(&wrong_thread), 0);
	assert_int_equal(atomic_load(&out_of_order), 0);
	assert_null(loop_current()); /* this thread runs no loop */
}

/* A loop that does not run: loop_flush() runs what was sent, in order, on the caller's thread. */
static unsigned flushed[3], n_flushed;

static void flush_run(struct loop_msg *m)
{
	flushed[n_flushed++] = (unsigned)(container_of(m, struct tmsg_rec, m)->seq);
}

static void test_loop_flush(void **state)
{
	struct loop *l = loop_new();
	struct tmsg_rec r[3];

	(void)state;
	assert_non_null(l);
	for (unsigned i = 0; i < 3; i++) {
		r[i] = (struct tmsg_rec){ .m.fn = flush_run, .seq = 10 + i };
		loop_send(l, &r[i].m);
	}
	assert_int_equal(n_flushed, 0); /* nothing runs l */
	assert_int_equal(loop_flush(l), 3);
	assert_int_equal(n_flushed, 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(flushed[i], 10 + i);
	assert_int_equal(loop_flush(l), 0);
	loop_free(l);
}

/* ---- worker completions on their home loop ---- */

struct hitem {
	struct work w;
	struct loop *want;
	atomic_bool ok, done;
};

static void hitem_run(struct work *w)
{
	(void)w;
}

static void hitem_done(struct work *w)
{
	struct hitem *h = container_of(w, struct hitem, w);

	atomic_store(&h->ok, loop_current() == h->want);
	atomic_store(&h->done, true);
}

static void test_worker_homes(void **state)
{
	struct hitem it[NLOOPS + 1];

	(void)state;
	for (unsigned i = 0; i <= NLOOPS; i++) {
		it[i] = (struct hitem){ .w = { .run = hitem_run, .done = hitem_done, .home = i } };
		/* Home NLOOPS was never added: loop 0's. */
		it[i].want = i == 0 || i == NLOOPS ? lp : loop_pool_get(i);
		workers_submit(&it[i].w);
	}
	for (unsigned i = 0; i <= NLOOPS; i++) {
		for (int t = 0; t < 500 && !atomic_load(&it[i].done); t++)
			usleep(10000);
		assert_true(atomic_load(&it[i].done));
		assert_true(atomic_load(&it[i].ok));
	}
}

/* ---- TCP over NLOOPS loops ---- */

static int tconnect(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval tv = {10, 0};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* One SLOW call (a worker, then the connection's loop): its xid back in a 28-byte reply. */
static void call_slow(int fd, uint32_t xid)
{
	struct tmsg m;
	uint8_t out[4 + sizeof(m.b)], rep[64];

	tmsg_call(&m, xid, TPROG, 2, TPROC_SLOW, NULL, 0);
	tmsg_u32(&m, 5);
	uint32_t mark = htonl(0x80000000u | (uint32_t)m.n);
	memcpy(out, &mark, 4);
	memcpy(out + 4, m.b, m.n);
	assert_int_equal(send(fd, out, 4 + m.n, MSG_NOSIGNAL), (ssize_t)(4 + m.n));
	assert_true(ts_recv_all(fd, &mark, 4));
	assert_int_equal(ntohl(mark) & 0x7fffffffu, 28);
	assert_true(ts_recv_all(fd, rep, 28));
	assert_int_equal(tget_u32(rep, 0), xid);
	assert_int_equal(tget_u32(rep, 20), 0); /* SUCCESS */
}

static void test_spread(void **state)
{
	int fd[NLOOPS * CONNS_PER_LOOP];
	unsigned n = NLOOPS * CONNS_PER_LOOP;

	(void)state;
	assert_int_equal(tcp_xprt_loops(xprt), NLOOPS);
	for (unsigned i = 0; i < n; i++)
		fd[i] = tconnect();
	for (int t = 0; t < 500 && tcp_xprt_conns(xprt) != n; t++)
		usleep(10000);
	assert_int_equal(tcp_xprt_conns(xprt), n);
	for (unsigned l = 0; l < NLOOPS; l++)
		assert_int_equal(tcp_xprt_loop_conns(xprt, l), CONNS_PER_LOOP);
	for (unsigned r = 0; r < 3; r++)
		for (unsigned i = 0; i < n; i++)
			call_slow(fd[i], 1000 * r + i);
	for (unsigned i = 0; i < n; i++)
		close(fd[i]);
	for (int t = 0; t < 500 && tcp_xprt_conns(xprt) != 0; t++)
		usleep(10000);
	assert_int_equal(tcp_xprt_conns(xprt), 0);
}

static atomic_int drained;
static atomic_bool drained_on_loop0;

static void drain_done(void *arg)
{
	(void)arg;
	atomic_store(&drained_on_loop0, loop_current() == lp);
	atomic_fetch_add(&drained, 1);
	loop_break(lp);
}

static void drain_start_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	struct xprt *b = tcp_xprt_base(xprt);
	b->ops->drain(b, drain_done, NULL);
}

/* Last: idle connections on every loop see EOF; done runs once, on loop 0. */
static void test_drain(void **state)
{
	int fd[NLOOPS];
	char c;

	(void)state;
	for (unsigned i = 0; i < NLOOPS; i++)
		fd[i] = tconnect();
	for (int t = 0; t < 500 && tcp_xprt_conns(xprt) != NLOOPS; t++)
		usleep(10000);
	struct loop_ev *ev = loop_timer(lp, false, drain_start_cb, NULL);
	struct timeval now = {0, 0};
	loop_ev_add(ev, &now);
	for (unsigned i = 0; i < NLOOPS; i++) {
		assert_int_equal(recv(fd[i], &c, 1, 0), 0); /* EOF */
		close(fd[i]);
	}
	pthread_join(loop_thread, NULL);
	assert_int_equal(atomic_load(&drained), 1);
	assert_true(atomic_load(&drained_on_loop0));
	loop_ev_free(ev);
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
		.max_connections = 64,
		.max_record = 64 * 1024,
		.conn_max_calls = 4,
		.max_calls = 30,
		.reply_cap = TCP_REPLY_CAP,
		.payload_cap = TCP_PAYLOAD_CAP,
	};
	strcpy(p.listen[0].addr, "127.0.0.1");

	log_init(true, getenv("RNFSD_TEST_VERBOSE") ? 1 : 0);
	lp = loop_new();
	if (!lp || loop_pool_create(NLOOPS) != 0 || rpc_init(64) != 0)
		return -1;
	rpc_register_program(&tprog);
	xprt = tcp_xprt_create(lp, &p);
	if (!xprt)
		return -1;
	for (unsigned i = 1; i < NLOOPS; i++) {
		int home = workers_home_add(loop_pool_get(i));
		if (home != (int)i || tcp_xprt_add_loop(xprt, loop_pool_get(i), (unsigned)home) != 0)
			return -1;
	}
	/* The limits are shared: 64 connections and 30 contexts over 3 loops. */
	if (xprt->p.max_connections != 22 || xprt->shards[1]->p.max_calls != 10)
		return -1;
	if (workers_start(lp, 4) != 0 || tcp_xprt_base(xprt)->ops->start(tcp_xprt_base(xprt)) != 0)
		return -1;
	port = tcp_xprt_port(xprt);
	if (port == 0 || loop_pool_run() != 0)
		return -1;
	return pthread_create(&loop_thread, NULL, loop_main, lp) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	loop_pool_stop(); /* test_drain stopped loop 0 */
	tcp_xprt_stop(xprt);
	workers_stop();
	tcp_xprt_free(xprt);
	loop_pool_free();
	loop_free(lp);
	rpc_release();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_robin),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_loop_send),
		cmocka_unit_test(test_loop_flush),
		cmocka_unit_test(test_worker_homes),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_drain),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
