/*
 * test_rdma_credits.c - credit grant and reply accounting (owner: rdma).
 * Includes a simulation of a client that honours every grant, checking that
 * no call ever arrives without a posted Receive and no reply without a call.
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

static void test_grant_bounds(void **state)
{
	struct rdma_credits c;
	(void)state;
	rdma_credits_init(&c, 128);
	rdma_credits_recv_posted(&c, rdma_credits_recvs_wanted(&c, 0));
	assert_int_equal(c.recvs_posted, 128);
	assert_int_equal(rdma_credits_recvs_wanted(&c, 4), 4);
	rdma_credits_recv_done(&c);
	assert_true(rdma_credits_reply_get(&c));
	assert_int_equal(rdma_credits_grant(&c, 128), 127); /* 127 posted, none owed */
	rdma_credits_recv_posted(&c, 1);
	rdma_credits_recv_done(&c);
	assert_true(rdma_credits_reply_get(&c));
	assert_int_equal(rdma_credits_grant(&c, 128), 127);
	rdma_credits_recv_posted(&c, 1);
	assert_int_equal(rdma_credits_grant(&c, 500), 128); /* configured grant */
	assert_int_equal(rdma_credits_grant(&c, 32), 32);   /* what the client asked */
	assert_int_equal(rdma_credits_grant(&c, 0), 128);   /* 0 asked: not a bound */
	/* Nothing posted, nothing owed: still never zero. */
	rdma_credits_init(&c, 64);
	assert_int_equal(rdma_credits_grant(&c, 64), 1);
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
}

/* A client with its own maximum keeps as many calls outstanding as the
 * last grant allows; the server answers at random times and re-posts
 * Receives from a pool of contexts that may be smaller than the configured
 * grant (contexts held by calls in progress are the calls owed). */
static void test_simulation(void **state)
{
	struct rdma_credits c;
	(void)state;
	srand(12345);
	for (int round = 0; round < 50; round++) {
		uint32_t grant_cfg = 1 + rand() % 200, client_max = 1 + rand() % 200;
		uint32_t pool = 1 + rand() % (grant_cfg + 8); /* receive contexts */
		uint32_t granted = 1;                   /* draft §5 / RFC 8166 §3.3.1: start with 1 */
		uint32_t in_flight = 0, outstanding = 0, free_ctx = pool;
		rdma_credits_init(&c, grant_cfg);
		uint32_t n = rdma_credits_recvs_wanted(&c, 0);
		if (n > free_ctx)
			n = free_ctx;
		free_ctx -= n;
		rdma_credits_recv_posted(&c, n);
		for (int step = 0; step < 5000; step++) {
			int what = rand() % 3;
			if (what == 0 && outstanding < granted && outstanding < client_max) {
				outstanding++; /* client sends a call */
				in_flight++;
			} else if (what == 1 && in_flight) {
				/* The call lands: a Receive must be posted. */
				assert_true(c.recvs_posted > 0);
				in_flight--;
				rdma_credits_recv_done(&c);
			} else if (what == 2 && c.calls_owed) {
				assert_true(rdma_credits_reply_get(&c));
				free_ctx++;
				/* Receives are re-posted before the grant is computed. */
				uint32_t w = rdma_credits_recvs_wanted(&c, 0);
				if (w > free_ctx)
					w = free_ctx;
				free_ctx -= w;
				rdma_credits_recv_posted(&c, w);
				granted = rdma_credits_grant(&c, client_max);
				assert_true(granted >= 1);
				assert_true(granted <= grant_cfg);
				assert_true(granted <= client_max);
				assert_true(granted <= pool);
				outstanding--;
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_clamps),
		cmocka_unit_test(test_grant_bounds),
		cmocka_unit_test(test_reply_accounting),
		cmocka_unit_test(test_simulation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
