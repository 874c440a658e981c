/*
 * test_tcp_clnt.c - transport/tcp_clnt.c over loopback against a small RPC
 * server in the test (a thread with blocking sockets and its own record
 * marking): a call answered after one retransmission (the server drops the
 * first copy), a call that times out after all its retransmissions, a
 * connection the server closes (reconnect, the call resent with its XID),
 * replies split into fragments and bytes, a late reply to a timed-out call,
 * and an address nobody listens on (bounded reconnection, then CLOSED).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"
#include "transport/tcp_clnt.h"
#include "tests/unit/rpc_test_msg.h"
#include "tests/unit/tcp_test_sock.h"

#define SPROG 0x20000096u

/* ---- the server ---- */

enum srv_mode {
	SRV_DROP_FIRST, /* ignore the first copy of each XID, answer arg*2 to the next */
	SRV_SILENT,     /* read, never answer */
	SRV_CLOSE_FIRST,/* close the first connection after reading a call; answer on the next */
	SRV_SPLIT,      /* answer at once, the reply as two fragments written byte by byte */
};

struct srv {
	int lfd;
	uint16_t port;
	enum srv_mode mode;
	pthread_t thread;
	/* Written by the server thread, read by the test thread: atomic (ThreadSanitizer). */
	atomic_uint calls_seen; /* call records received */
	atomic_uint accepts;
	atomic_uint bad;        /* malformed call records */
	uint32_t xids[16];      /* the server thread's only */
	atomic_bool stop;       /* set by the test thread */
};

static void srv_reply(struct srv *s, int fd, uint32_t xid, uint32_t value)
{
	struct tmsg m = {.n = 0};
	tmsg_u32(&m, 0); /* room for the record mark */
	tmsg_u32(&m, xid);
	tmsg_u32(&m, RPC_MSG_REPLY);
	tmsg_u32(&m, RPC_MSG_ACCEPTED);
	tmsg_u32(&m, RPC_AUTH_NONE);
	tmsg_u32(&m, 0);
	tmsg_u32(&m, RPC_SUCCESS);
	tmsg_u32(&m, value);
	if (s->mode != SRV_SPLIT) {
		uint32_t mark = htonl(0x80000000u | (uint32_t)(m.n - 4));
		memcpy(m.b, &mark, 4);
		if (write(fd, m.b, m.n) != (ssize_t)m.n)
			s->bad++;
		return;
	}
	/* RFC 5531 §11: fragments of 10 and 18 bytes, each byte its own write. */
	uint8_t out[64];
	size_t n = 0;
	uint32_t mark = htonl(10);
	memcpy(out, &mark, 4);
	memcpy(out + 4, m.b + 4, 10);
	mark = htonl(0x80000000u | 18);
	memcpy(out + 14, &mark, 4);
	memcpy(out + 18, m.b + 14, 18);
	n = 36;
	for (size_t i = 0; i < n; i++) {
		if (write(fd, out + i, 1) != 1)
			s->bad++;
		usleep(500);
	}
}

static bool seen_before(struct srv *s, uint32_t xid)
{
	for (unsigned i = 0; i + 1 < s->calls_seen && i < 16; i++)
		if (s->xids[i] == xid)
			return true;
	return false;
}

/* Serve one connection until the client closes it. */
static void srv_conn(struct srv *s, int fd)
{
	uint8_t buf[4096];
	ssize_t n;

	while ((n = ts_recv_record(fd, buf, sizeof(buf))) >= 0) {
		/* Checked here, asserted by the test thread (cmocka is not thread-safe). */
		if (n < 44 || tget_u32(buf, 4) != RPC_MSG_CALL || tget_u32(buf, 8) != 2 ||
		    tget_u32(buf, 12) != SPROG) {
			s->bad++;
			return;
		}
		uint32_t xid = tget_u32(buf, 0);
		uint32_t arg = tget_u32(buf, (size_t)n - 4);
		if (s->calls_seen < 16)
			s->xids[s->calls_seen] = xid;
		s->calls_seen++;
		switch (s->mode) {
		case SRV_DROP_FIRST:
			if (seen_before(s, xid))
				srv_reply(s, fd, xid, arg * 2);
			break;
		case SRV_SILENT:
			break;
		case SRV_CLOSE_FIRST:
			if (s->accepts == 1)
				return; /* closed with the call unanswered */
			srv_reply(s, fd, xid, arg * 2);
			break;
		case SRV_SPLIT:
			srv_reply(s, fd, xid, arg * 2);
			break;
		}
	}
}

static void *srv_main(void *arg)
{
	struct srv *s = arg;
	while (!s->stop) {
		int fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			break;
		s->accepts++;
		srv_conn(s, fd);
		close(fd);
	}
	return NULL;
}

static void srv_start(struct srv *s, enum srv_mode mode)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sin);

	memset(s, 0, sizeof(*s));
	s->mode = mode;
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->lfd >= 0);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(s->lfd, 4), 0);
	assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&sin, &sl), 0);
	s->port = ntohs(sin.sin_port);
	assert_int_equal(pthread_create(&s->thread, NULL, srv_main, s), 0);
}

static void srv_stop(struct srv *s)
{
	s->stop = true;
	shutdown(s->lfd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	close(s->lfd);
	assert_int_equal(s->bad, 0);
}

/* ---- the client side ---- */

static struct loop *loop;

struct ccall {
	struct rpc_clnt_call cc;
	uint8_t buf[256];
	bool done;
	enum rpc_clnt_status st;
	uint32_t result;
	unsigned tries;
};

static void ccall_done(struct rpc_clnt_call *cc, enum rpc_clnt_status st)
{
	struct ccall *c = container_of(cc, struct ccall, cc);
	c->done = true;
	c->st = st;
	c->tries = cc->tries;
	if (st == RPC_CLNT_OK && !xdr_dec_u32(&cc->res, &c->result))
		c->st = RPC_CLNT_BAD_REPLY;
	loop_break(loop);
}

static const struct tcp_clnt_params cparams = {
	.rpc = {.timeout_ms = 150, .max_timeout_ms = 600, .retries = 2},
	.max_record = 4096,
	.send_buf = 8192,
	.connect_timeout_ms = 1000,
	.reconnect_delay_ms = 50,
	.reconnect_max = 3,
};

static struct tcp_clnt *client_with(uint16_t port, const struct tcp_clnt_params *p)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct tcp_clnt *t = tcp_clnt_new(loop, (struct sockaddr *)&sin, sizeof(sin), p);
	assert_non_null(t);
	return t;
}

static struct tcp_clnt *client_for(uint16_t port)
{
	return client_with(port, &cparams);
}

static void guard_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	loop_break(arg);
}

/* Make one call and run the loop until it completes (10 s at most). */
static uint64_t call_and_wait(struct tcp_clnt *t, struct ccall *c, uint32_t arg)
{
	static struct loop_ev *guard;
	memset(c, 0, sizeof(*c));
	rpc_clnt_call_init(&c->cc, c->buf, sizeof(c->buf), SPROG, 1, 1, NULL);
	xdr_enc_u32(&c->cc.args, arg);
	c->cc.done = ccall_done;
	uint64_t t0 = rpc_clnt_now_ms();
	assert_int_equal(tcp_clnt_call(t, &c->cc), 0);
	if (!guard)
		guard = loop_timer(loop, false, guard_cb, loop);
	while (!c->done && rpc_clnt_now_ms() - t0 < 10000) {
		struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
		loop_ev_add(guard, &tv);
		loop_run(loop);
	}
	assert_true(c->done);
	return rpc_clnt_now_ms() - t0;
}

static void test_retransmit_then_reply(void **state)
{
	(void)state;
	struct srv s;
	struct ccall c;
	struct tcp_clnt_stats st;

	srv_start(&s, SRV_DROP_FIRST);
	struct tcp_clnt *t = client_for(s.port);
	uint64_t ms = call_and_wait(t, &c, 21);
	assert_int_equal(c.st, RPC_CLNT_OK);
	assert_int_equal(c.result, 42);
	assert_int_equal(c.tries, 2); /* the first copy was dropped */
	assert_true(ms >= cparams.rpc.timeout_ms);
	assert_int_equal(s.calls_seen, 2);
	assert_int_equal(s.xids[0], s.xids[1]); /* the retransmission keeps its XID */
	/* A second call on the same connection gets a new XID. */
	call_and_wait(t, &c, 5);
	assert_int_equal(c.st, RPC_CLNT_OK);
	assert_int_equal(c.result, 10);
	assert_int_not_equal(s.xids[2], s.xids[0]);
	tcp_clnt_stats(t, &st);
	assert_int_equal(st.connects, 1);
	tcp_clnt_free(t);
	srv_stop(&s);
	print_message("retransmitted call answered in %llu ms\n", (unsigned long long)ms);
}

static void test_timeout(void **state)
{
	(void)state;
	struct srv s;
	struct ccall c;

	srv_start(&s, SRV_SILENT);
	struct tcp_clnt *t = client_for(s.port);
	uint64_t ms = call_and_wait(t, &c, 1);
	assert_int_equal(c.st, RPC_CLNT_TIMEOUT);
	assert_int_equal(c.tries, 1 + cparams.rpc.retries);
	/* 150 + 300 + 600 ms of waiting. */
	assert_true(ms >= 150 + 300 + 600);
	usleep(50000);
	assert_int_equal(s.calls_seen, 1 + cparams.rpc.retries);
	tcp_clnt_free(t);
	srv_stop(&s);
}

static void test_reconnect(void **state)
{
	(void)state;
	struct srv s;
	struct ccall c;
	struct tcp_clnt_stats st;

	srv_start(&s, SRV_CLOSE_FIRST);
	struct tcp_clnt *t = client_for(s.port);
	call_and_wait(t, &c, 4);
	assert_int_equal(c.st, RPC_CLNT_OK);
	assert_int_equal(c.result, 8);
	assert_int_equal(s.accepts, 2);
	assert_int_equal(s.xids[0], s.xids[1]); /* resent on the new connection with its XID */
	tcp_clnt_stats(t, &st);
	assert_int_equal(st.connects, 2);
	assert_int_equal(st.disconnects, 1);
	tcp_clnt_free(t);
	srv_stop(&s);
}

static void test_fragmented_reply(void **state)
{
	(void)state;
	struct srv s;
	struct ccall c;

	/* The reply trickles a byte every 0.5 ms: on a loaded machine (a ThreadSanitizer build beside
	 * the VM lane) that has taken past 150 ms, so a 2 s timeout keeps it one try. */
	struct tcp_clnt_params slow = cparams;
	slow.rpc.timeout_ms = slow.rpc.max_timeout_ms = 2000;
	srv_start(&s, SRV_SPLIT);
	struct tcp_clnt *t = client_with(s.port, &slow);
	call_and_wait(t, &c, 100);
	assert_int_equal(c.st, RPC_CLNT_OK);
	assert_int_equal(c.result, 200);
	assert_int_equal(c.tries, 1);
	tcp_clnt_free(t);
	srv_stop(&s);
}

static void test_unreachable(void **state)
{
	(void)state;
	struct srv s;
	struct ccall c;
	struct tcp_clnt_stats st;

	/* A port that was just listened on and is now closed: refused. */
	srv_start(&s, SRV_SILENT);
	uint16_t port = s.port;
	srv_stop(&s);
	struct tcp_clnt *t = client_for(port);
	call_and_wait(t, &c, 1);
	assert_int_equal(c.st, RPC_CLNT_CLOSED);
	tcp_clnt_stats(t, &st);
	assert_int_equal(st.connects, 0);
	assert_int_equal(st.connect_fails, cparams.reconnect_max + 1);
	tcp_clnt_free(t);
}

static int setup(void **state)
{
	(void)state;
	log_init(true, 0);
	loop = loop_new();
	return loop ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	loop_free(loop);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retransmit_then_reply),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_reconnect),
		cmocka_unit_test(test_fragmented_reply),
		cmocka_unit_test(test_unreachable),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
