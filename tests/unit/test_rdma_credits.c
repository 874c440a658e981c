/*
 * test_rdma_credits.c - credit grant and reply accounting.
 * Includes a burst of 128 calls (the grant must stay at the configured value)
 * and a simulation of a client that honours every grant, checking that no
 * call ever arrives without a posted Receive and no reply without a call.
 * The ramped grant ([rdma] initial-credits): an idle connection keeps its
 * first target, one call at a time or a client using its grant raise it,
 * and the same simulation holds with the ramp.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "transport/rdma_credits.h"

static void test_init_clamps(void **state)
{
	struct rdma_credits c;
	(void)state;
	rdma_credits_init(&c, 0);
	assert_int_equal(c.max_grant, 1);
	rdma_credits_init(&c, 5000);
	assert_int_equal(c.max_grant, RDMA_CREDITS_MAX);
}

static void test_pool_size(void **state)
{
	struct rdma_credits c;
	(void)state;
	rdma_credits_init(&c, 128);
	assert_int_equal(c.bufs_total, 2 * 128 + RDMA_CREDITS_SPARE);
	assert_int_equal(c.bufs_free, c.bufs_total);
	assert_int_equal(rdma_credits_pool_size(0), 2 + RDMA_CREDITS_SPARE);
	assert_int_equal(rdma_credits_recvs_wanted(&c), 128 + RDMA_CREDITS_SPARE);
}

static void test_grant_bounds(void **state)
{
	struct rdma_credits c;
	(void)state;
	rdma_credits_init(&c, 128);
	rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
	assert_int_equal(c.recvs_posted, 128 + RDMA_CREDITS_SPARE);
	assert_int_equal(rdma_credits_recvs_wanted(&c), 0);
	rdma_credits_recv_done(&c);
	assert_int_equal(rdma_credits_recvs_wanted(&c), 1); /* re-post at once */
	assert_true(rdma_credits_reply_get(&c));
	assert_int_equal(rdma_credits_grant(&c, 500), 128); /* configured grant */
	assert_int_equal(rdma_credits_grant(&c, 32), 32);   /* what the client asked */
	assert_int_equal(rdma_credits_grant(&c, 0), 128);   /* 0 asked: not a bound */
	/* Nothing posted, nothing owed: still never zero. */
	rdma_credits_init(&c, 64);
	assert_int_equal(rdma_credits_grant(&c, 64), 1);
	/* Few Receives posted: the grant follows them (invariant 1). */
	rdma_credits_recv_posted(&c, 5);
	rdma_credits_recv_done(&c);
	rdma_credits_recv_done(&c);
	assert_true(rdma_credits_reply_get(&c));
	assert_int_equal(rdma_credits_grant(&c, 64), 4); /* 3 posted + 1 owed */
}

static void test_reply_accounting(void **state)
{
	struct rdma_credits c;
	(void)state;
	rdma_credits_init(&c, 4);
	rdma_credits_recv_posted(&c, 4);
	assert_false(rdma_credits_reply_get(&c)); /* no call: no reply */
	rdma_credits_recv_done(&c);
	rdma_credits_recv_done(&c);
	assert_int_equal(c.calls_owed, 2);
	rdma_credits_call_drop(&c); /* e.g. RDMA_DONE */
	assert_true(rdma_credits_reply_get(&c));
	assert_false(rdma_credits_reply_get(&c));
	rdma_credits_recv_flushed(&c);
	assert_int_equal(c.recvs_posted, 1);
	/* 4 posted, 2 held by calls, 1 flushed back: 16 - 4 + 1 free. */
	assert_int_equal(c.bufs_free, c.bufs_total - 4 + 1);
	rdma_credits_buf_put(&c);
	rdma_credits_buf_put(&c);
	assert_int_equal(c.bufs_free, c.bufs_total - 1);
}

/*
 * The observed failure: a burst of 128 calls, answered one by one while the
 * reply Sends complete later. Every reply must carry the configured grant,
 * because each Receive is replaced as soon as it completes (its buffer
 * stays with the call until the Send completion).
 */
static void test_burst_keeps_grant(void **state)
{
	struct rdma_credits c;
	uint32_t min_grant = ~0u;
	(void)state;
	rdma_credits_init(&c, 128);
	rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 128; i++) {
			assert_true(c.recvs_posted > 0); /* the call finds a Receive */
			rdma_credits_recv_done(&c);
			rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
		}
		for (int i = 0; i < 128; i++) {
			assert_true(rdma_credits_reply_get(&c));
			uint32_t g = rdma_credits_grant(&c, 128);
			if (g < min_grant)
				min_grant = g;
		}
		/* The Sends complete only now. */
		for (int i = 0; i < 128; i++) {
			rdma_credits_buf_put(&c);
			rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
		}
		assert_int_equal(c.recvs_posted, 128 + RDMA_CREDITS_SPARE);
		assert_int_equal(c.bufs_free, c.bufs_total - c.recvs_posted);
	}
	assert_int_equal(min_grant, 128);
}

/* A client with its own maximum keeps as many calls outstanding as the
 * last grant allows; the server answers at random times, reply Sends
 * complete at random later times (buffers held until then), Receives are
 * re-posted from the pool as soon as possible. No call may arrive without a
 * posted Receive, no reply without a call, the pool never over-committed. */
static void test_simulation(void **state)
{
	struct rdma_credits c;
	(void)state;
	srand(12345);
	for (int round = 0; round < 50; round++) {
		uint32_t grant_cfg = 1 + rand() % 200, client_max = 1 + rand() % 200;
		uint32_t granted = 1; /* RFC 8166 §3.3.1: start with 1 */
		uint32_t in_flight = 0, outstanding = 0, sending = 0;
		rdma_credits_init(&c, grant_cfg);
		rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
		for (int step = 0; step < 5000; step++) {
			int what = rand() % 4;
			if (what == 0 && outstanding < granted && outstanding < client_max) {
				outstanding++; /* client sends a call */
				in_flight++;
			} else if (what == 1 && in_flight) {
				/* The call lands: a Receive must be posted. */
				assert_true(c.recvs_posted > 0);
				in_flight--;
				rdma_credits_recv_done(&c);
				rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
			} else if (what == 2 && c.calls_owed) {
				assert_true(rdma_credits_reply_get(&c));
				granted = rdma_credits_grant(&c, client_max);
				assert_true(granted >= 1);
				assert_true(granted <= grant_cfg);
				assert_true(granted <= client_max);
				assert_true(granted <= c.recvs_posted + c.calls_owed || granted == 1);
				outstanding--;
				sending++;
			} else if (what == 3 && sending) {
				sending--; /* the reply's Send completed */
				rdma_credits_buf_put(&c);
				rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
			}
			/* Every buffer is posted, held by a call, or free. */
			assert_int_equal(c.recvs_posted + c.calls_owed + sending + c.bufs_free, c.bufs_total);
			assert_true(c.recvs_posted <= grant_cfg + RDMA_CREDITS_SPARE);
		}
	}
}

/* One call answered and its buffer back: what a sequential client does. */
static uint32_t one_call(struct rdma_credits *c)
{
	assert_true(c->recvs_posted > 0);
	rdma_credits_recv_done(c);
	rdma_credits_recv_posted(c, rdma_credits_recvs_wanted(c));
	assert_true(rdma_credits_reply_get(c));
	uint32_t g = rdma_credits_grant(c, 128);
	rdma_credits_buf_put(c);
	rdma_credits_recv_posted(c, rdma_credits_recvs_wanted(c));
	return g;
}

static void test_ramp_idle(void **state)
{
	struct rdma_credits c;
	(void)state;
	rdma_credits_init(&c, 128);
	rdma_credits_ramp_start(&c, RDMA_CREDITS_INITIAL);
	assert_int_equal(c.target, RDMA_CREDITS_INITIAL);
	/* Only the first target plus the spare is posted at accept. */
	assert_int_equal(rdma_credits_recvs_wanted(&c), RDMA_CREDITS_INITIAL + RDMA_CREDITS_SPARE);
	rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
	/* One NULL, then nothing: the grant and the posted Receives stay small. */
	assert_int_equal(one_call(&c), RDMA_CREDITS_INITIAL);
	assert_int_equal(c.recvs_posted, RDMA_CREDITS_INITIAL + RDMA_CREDITS_SPARE);
	assert_int_equal(c.target, RDMA_CREDITS_INITIAL);
	/* No ramp: 0, or at least max_grant. */
	rdma_credits_init(&c, 32);
	rdma_credits_ramp_start(&c, 0);
	assert_int_equal(c.target, 32);
	rdma_credits_ramp_start(&c, 64);
	assert_int_equal(c.target, 32);
	rdma_credits_init(&c, 4);
	rdma_credits_ramp_start(&c, 8);
	assert_int_equal(rdma_credits_recvs_wanted(&c), 4 + RDMA_CREDITS_SPARE);
}

/* One call at a time: every RDMA_CREDITS_RAMP_CALLS calls the target steps
 * up, and the grant follows it, until max_grant. */
static void test_ramp_sequential(void **state)
{
	struct rdma_credits c;
	uint32_t last = 0, calls = 0;
	(void)state;
	rdma_credits_init(&c, 128);
	rdma_credits_ramp_start(&c, RDMA_CREDITS_INITIAL);
	rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
	while (c.target < 128 && calls < 1000) {
		uint32_t g = one_call(&c);
		calls++;
		assert_true(g >= last);     /* never falls */
		assert_true(g <= c.target); /* never above the target */
		assert_true(c.recvs_posted <= c.target + RDMA_CREDITS_SPARE);
		last = g;
	}
	/* (128 - 8) / 16 = 7.5 steps of 8 calls each. */
	assert_int_equal(calls, 8 * RDMA_CREDITS_RAMP_CALLS);
	assert_int_equal(one_call(&c), 128);
	assert_int_equal(c.recvs_posted, 128 + RDMA_CREDITS_SPARE);
}

/* A client that keeps its whole grant outstanding: the target steps up on
 * the call that brings the calls owed within the headroom. */
static void test_ramp_concurrent(void **state)
{
	struct rdma_credits c;
	(void)state;
	rdma_credits_init(&c, 64);
	rdma_credits_ramp_start(&c, 8);
	rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
	for (unsigned i = 0; i < 8 - RDMA_CREDITS_HEADROOM; i++) {
		assert_int_equal(c.target, 8);
		rdma_credits_recv_done(&c);
	}
	assert_int_equal(c.target, 8 + RDMA_CREDITS_STEP);
	/* The new target is posted for at once, and granted. */
	assert_int_equal(rdma_credits_recvs_wanted(&c), RDMA_CREDITS_STEP + (8 - RDMA_CREDITS_HEADROOM));
	assert_true(rdma_credits_short(&c));
	rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
	assert_false(rdma_credits_short(&c));
	assert_true(rdma_credits_reply_get(&c));
	assert_int_equal(rdma_credits_grant(&c, 64), 8 + RDMA_CREDITS_STEP);
}

/* test_simulation's client against a ramped grant. */
static void test_ramp_simulation(void **state)
{
	struct rdma_credits c;
	(void)state;
	srand(54321);
	for (int round = 0; round < 50; round++) {
		uint32_t grant_cfg = 1 + rand() % 200, client_max = 1 + rand() % 200, granted = 1;
		uint32_t in_flight = 0, outstanding = 0, sending = 0, top = 0;
		rdma_credits_init(&c, grant_cfg);
		rdma_credits_ramp_start(&c, (uint32_t)rand() % 20);
		rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
		for (int step = 0; step < 5000; step++) {
			int what = rand() % 4;
			if (what == 0 && outstanding < granted && outstanding < client_max) {
				outstanding++;
				in_flight++;
			} else if (what == 1 && in_flight) {
				assert_true(c.recvs_posted > 0); /* invariant 1 */
				in_flight--;
				rdma_credits_recv_done(&c);
				rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
			} else if (what == 2 && c.calls_owed) {
				assert_true(rdma_credits_reply_get(&c));
				granted = rdma_credits_grant(&c, client_max);
				assert_true(granted >= 1 && granted <= c.target && granted <= client_max);
				assert_true(granted <= c.recvs_posted + c.calls_owed || granted == 1);
				outstanding--;
				sending++;
			} else if (what == 3 && sending) {
				sending--;
				rdma_credits_buf_put(&c);
				rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c));
			}
			assert_int_equal(c.recvs_posted + c.calls_owed + sending + c.bufs_free, c.bufs_total);
			assert_true(c.recvs_posted <= c.target + RDMA_CREDITS_SPARE);
			assert_true(c.target >= top); /* never shrinks */
			top = c.target;
		}
		/* 5000 steps make well over 8 x 128 calls: the ramp got to the top. */
		assert_int_equal(c.target, c.max_grant);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_clamps),
		cmocka_unit_test(test_pool_size),
		cmocka_unit_test(test_grant_bounds),
		cmocka_unit_test(test_burst_keeps_grant),
		cmocka_unit_test(test_reply_accounting),
		cmocka_unit_test(test_simulation),
		cmocka_unit_test(test_ramp_idle),
		cmocka_unit_test(test_ramp_sequential),
		cmocka_unit_test(test_ramp_concurrent),
		cmocka_unit_test(test_ramp_simulation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
