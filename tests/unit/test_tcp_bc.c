/*
 * test_tcp_bc.c - calls the server makes on a TCP connection the client
 * opened (the NFSv4.1 backchannel): the real loop, workers, RPC layer and
 * TCP transport on 127.0.0.1; a "bind" call tells the test which server
 * connection to use; an rpc_clnt attached to it calls the client, which
 * drops the first copy (a retransmission with the same XID follows),
 * answers the second while a forward call is in flight on the same stream,
 * and then closes the connection with a call pending (CLOSED).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/workers.h"
#include "rpc/rpc_clnt.h"
#include "tests/unit/rpc_test_prog.h"
#include "tests/unit/tcp_test_sock.h"
#include "transport/tcp.h"

#define BPROG 0x20000095u /* the test's "bind" program */
#define CBPROG 0x40000001u
#define TIMEOUT_MS 300

static struct loop *lp;
static pthread_t loop_thread;
static struct tcp_xprt *xprt;
static uint16_t port;

/* ---- server side: bind, then calls from the loop thread ---- */

static _Atomic(struct rpc_conn *) bound;

static enum rpc_proc_status bp_bind(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	rpc_conn_get(c->conn);
	atomic_store(&bound, c->conn);
	return RPC_PROC_OK;
}

static const struct rpc_proc bprog_procs[] = {[1] = {.name = "BIND", .execute = bp_bind}};
static const struct rpc_version bprog_versions[] = {{1, 2, bprog_procs}};
static const struct rpc_program bprog = {BPROG, "bind", 1, bprog_versions};

enum { STEP_CALL, STEP_CLEANUP };
static struct loop_ev *step_ev;
static atomic_int step, call_done, call_tries;
static atomic_uint call_result;
static struct rpc_clnt clnt;
static bool attached;
static struct rpc_clnt_call cc;
static uint8_t cc_buf[256];

static void cb_done(struct rpc_clnt_call *c, enum rpc_clnt_status st)
{
	uint32_t v = 0;
	if (st == RPC_CLNT_OK && !xdr_dec_u32(&c->res, &v))
		st = RPC_CLNT_BAD_REPLY;
	atomic_store(&call_result, v);
	atomic_store(&call_tries, (int)c->tries);
	atomic_store(&call_done, 1 + (int)st);
}

static void step_cb(int fd, short what, void *arg)
{
	static const struct rpc_clnt_params p = {.timeout_ms = TIMEOUT_MS, .max_timeout_ms = TIMEOUT_MS,
						 .retries = 3};
	(void)fd;
	(void)what;
	(void)arg;
	if (atomic_load(&step) == STEP_CLEANUP) {
		rpc_clnt_detach(&clnt);
		rpc_clnt_destroy(&clnt);
		rpc_conn_put(atomic_exchange(&bound, NULL));
		attached = false;
		atomic_store(&call_done, 1);
		return;
	}
	if (!attached && (rpc_clnt_init(&clnt, lp, &p, NULL, "bc") ||
			  rpc_clnt_attach(&clnt, atomic_load(&bound)))) {
		atomic_store(&call_done, 1 + RPC_CLNT_CLOSED);
		return;
	}
	attached = true;
	rpc_clnt_call_init(&cc, cc_buf, sizeof(cc_buf), CBPROG, 1, 4, NULL);
	xdr_enc_u32(&cc.args, 0x5150);
	cc.done = cb_done;
	assert_int_equal(rpc_clnt_start(&clnt, &cc), 0);
}

static void run_step(int s)
{
	atomic_store(&call_done, 0);
	atomic_store(&step, s);
	loop_ev_trigger(step_ev);
}

static int wait_done(void)
{
	for (int i = 0; i < 500 && !atomic_load(&call_done); i++)
		usleep(10000);
	return atomic_load(&call_done) - 1;
}

/* ---- client side: blocking socket, record marking ---- */

static int tconnect(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {5, 0};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void send_rec(int fd, const struct tmsg *m)
{
	uint8_t out[1024];
	uint32_t mark = htonl(0x80000000u | (uint32_t)m->n);
	memcpy(out, &mark, 4);
	memcpy(out + 4, m->b, m->n);
	assert_int_equal(send(fd, out, m->n + 4, MSG_NOSIGNAL), (ssize_t)(m->n + 4));
}

/* The server's call, byte for byte: its XID. */
static uint32_t expect_call(int fd)
{
	uint8_t b[512];
	ssize_t n = ts_recv_record(fd, b, sizeof(b));
	assert_int_equal(n, 44);
	const uint32_t want[] = {0, RPC_MSG_CALL, 2, CBPROG, 1, 4, 0, 0, 0, 0, 0x5150};
	for (unsigned i = 1; i < 11; i++)
		assert_int_equal(tget_u32(b, 4 * i), want[i]);
	return tget_u32(b, 0);
}

static void test_backchannel(void **state)
{
	(void)state;
	struct tmsg m;
	uint8_t b[512];
	int fd = tconnect();

	tmsg_call(&m, 0x77, BPROG, 1, 1, NULL, 0);
	send_rec(fd, &m);
	assert_int_equal(ts_recv_record(fd, b, sizeof(b)), 24);
	assert_non_null(atomic_load(&bound));

	run_step(STEP_CALL);
	uint32_t x1 = expect_call(fd);
	uint32_t x2 = expect_call(fd); /* not answered: retransmitted */
	assert_int_equal(x1, x2);
	assert_int_equal(atomic_load(&call_done), 0);
	/* A forward call in flight on the same stream, then our reply. */
	tmsg_call(&m, 0x78, TPROG, 3, TPROC_NULL, NULL, 0);
	send_rec(fd, &m);
	m.n = 0;
	const uint32_t reply[] = {x1, RPC_MSG_REPLY, RPC_MSG_ACCEPTED, 0, 0, RPC_SUCCESS, 0xfeed};
	for (unsigned i = 0; i < 7; i++)
		tmsg_u32(&m, reply[i]);
	send_rec(fd, &m);
	/* The NULL's reply; a third copy of the call may come first if the
	 * machine is slow enough for its next timeout to pass. */
	ssize_t n;
	while ((n = ts_recv_record(fd, b, sizeof(b))) == 44 && tget_u32(b, 0) == x1)
		;
	assert_int_equal(n, 24);
	assert_int_equal(tget_u32(b, 0), 0x78);
	assert_int_equal(wait_done(), RPC_CLNT_OK);
	assert_true(atomic_load(&call_tries) >= 2);
	assert_int_equal(atomic_load(&call_result), 0xfeed);

	/* The connection closes with a call pending: CLOSED. */
	run_step(STEP_CALL);
	expect_call(fd);
	close(fd);
	assert_int_equal(wait_done(), RPC_CLNT_CLOSED);
	run_step(STEP_CLEANUP);
	wait_done();
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
		.max_connections = 8,
		.max_record = 64 * 1024,
		.conn_max_calls = 8,
		.max_calls = 16,
		.reply_cap = TCP_REPLY_CAP,
		.payload_cap = TCP_PAYLOAD_CAP,
		.record_timeout_s = 5,
	};
	strcpy(p.listen[0].addr, "127.0.0.1");
	log_init(true, 0);
	lp = loop_new();
	if (!lp || rpc_init(16) != 0)
		return -1;
	rpc_register_program(&tprog);
	rpc_register_program(&bprog);
	step_ev = loop_async(lp, step_cb, NULL);
	if (!step_ev || workers_start(lp, 2) != 0 || !(xprt = tcp_xprt_start(lp, &p)))
		return -1;
	port = tcp_xprt_port(xprt);
	return pthread_create(&loop_thread, NULL, loop_main, lp) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	loop_break(lp);
	pthread_join(loop_thread, NULL);
	workers_stop();
	tcp_xprt_free(xprt);
	loop_ev_free(step_ev);
	loop_free(lp);
	rpc_release();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backchannel),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
