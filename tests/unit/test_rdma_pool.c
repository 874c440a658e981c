/*
 * test_rdma_pool.c - the shared bulk-buffer pool's accounting (rdma_pool.h)
 * without a device: lazy registration in chunks up to the bound, the
 * per-connection cap, the FIFO of waiters across connections (nobody
 * overtakes a call the pool cannot serve yet, a connection at its cap is
 * passed over), re-entrant releases from a grant, cancellation, a failed
 * registration, and a simulation where many more calls than slots all get
 * served without any failing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "transport/rdma_pool.h"

static unsigned regs, fail_after = ~0u;

static int reg(void *arg, struct rdma_pool_chunk *c)
{
	(void)arg;
	if (regs >= fail_after)
		return -1;
	regs++;
	c->mem = malloc(c->bytes);
	c->lkey = 0x100 + regs;
	return c->mem ? 0 : -1;
}

static void dereg(void *arg, struct rdma_pool_chunk *c)
{
	(void)arg;
	free(c->mem);
}

struct call {
	struct rdma_pool_waiter w;
	int slots[RDMA_POOL_MIN_SLOTS];
	bool got, ok;
	unsigned order;
};
static unsigned grant_order;

static void granted(struct rdma_pool_waiter *w, bool ok)
{
	struct call *c = container_of(w, struct call, w);
	c->got = true;
	c->ok = ok;
	c->order = ++grant_order;
}

static void setup_pool(struct rdma_pool *p, unsigned slots, unsigned chunk)
{
	regs = 0;
	fail_after = ~0u;
	grant_order = 0;
	assert_int_equal(rdma_pool_init(p, (size_t)slots * 4096, 4096, chunk, reg, dereg, NULL), 0);
}

/* get, or queue as a waiter; true if served at once. */
static bool call_start(struct rdma_pool *p, struct rdma_pool_user *u, struct call *c, unsigned need)
{
	memset(c, 0, sizeof(*c));
	c->w = (struct rdma_pool_waiter){ .user = u, .need = need, .out = c->slots, .granted = granted };
	enum rdma_pool_get_result r = rdma_pool_get(p, u, need, c->slots);
	assert_int_not_equal(r, RDMA_POOL_NEVER);
	if (r == RDMA_POOL_OK) {
		c->got = c->ok = true;
		return true;
	}
	rdma_pool_wait(p, &c->w);
	return false;
}

static void test_lazy_chunks(void **state)
{
	struct rdma_pool p;
	struct rdma_pool_user u;
	int s[3];
	(void)state;

	setup_pool(&p, 10, 4);
	assert_int_equal(p.max_slots, 10);
	assert_int_equal(rdma_pool_registered(&p), 0); /* nothing until needed */
	rdma_pool_user_init(&p, &u);
	assert_int_equal(u.cap, 5);
	assert_int_equal(rdma_pool_get(&p, &u, 3, s), RDMA_POOL_OK);
	assert_int_equal(regs, 1);
	assert_int_equal(rdma_pool_registered(&p), 4 * 4096);
	/* Slots are distinct, inside registered memory, with their chunk's lkey. */
	assert_true(s[0] != s[1] && s[1] != s[2] && s[0] != s[2]);
	for (int i = 0; i < 3; i++) {
		uint8_t *b = rdma_pool_buf(&p, s[i]);
		assert_int_equal(rdma_pool_lkey_for(&p, b, 4096), rdma_pool_lkey(&p, s[i]));
	}
	assert_int_equal(rdma_pool_lkey_for(&p, rdma_pool_buf(&p, s[0]) + 1, 4096 * 4), 0);
	assert_int_equal(rdma_pool_get(&p, &u, 2, s), RDMA_POOL_OK); /* grows a second chunk */
	assert_int_equal(regs, 2);
	assert_int_equal(rdma_pool_in_use(&p), 5);
	rdma_pool_fini(&p);
}

static void test_minimum_and_never(void **state)
{
	struct rdma_pool p;
	struct rdma_pool_user u;
	int s[4];
	(void)state;

	setup_pool(&p, 1, 16); /* raised to the most one call needs */
	assert_int_equal(p.max_slots, RDMA_POOL_MIN_SLOTS);
	rdma_pool_user_init(&p, &u);
	assert_int_equal(u.cap, RDMA_POOL_MIN_SLOTS);
	assert_int_equal(rdma_pool_get(&p, &u, 4, s), RDMA_POOL_NEVER);
	assert_int_equal(rdma_pool_get(&p, &u, 3, s), RDMA_POOL_OK);
	rdma_pool_put(&p, &u, 3, s);
	assert_int_equal(u.held, 0);
	rdma_pool_fini(&p);
}

/* A call needing 3 waits at the head: later 1-slot calls of other
 * connections do not overtake it, and it is served first. */
static void test_fifo_no_overtaking(void **state)
{
	struct rdma_pool p;
	struct rdma_pool_user a, b, c;
	struct call ca, cb1, cb2, cc;
	(void)state;

	setup_pool(&p, 4, 4);
	rdma_pool_user_init(&p, &a);
	rdma_pool_user_init(&p, &b);
	rdma_pool_user_init(&p, &c);
	assert_true(call_start(&p, &a, &ca, 2));
	assert_true(call_start(&p, &b, &cb1, 1));
	assert_false(call_start(&p, &c, &cc, 3)); /* 1 free: waits */
	assert_false(call_start(&p, &b, &cb2, 1)); /* a slot is free, but cc is first */
	assert_int_equal(p.nwaiters, 2);
	rdma_pool_put(&p, &b, 1, cb1.slots);
	assert_false(cc.got); /* 2 free, needs 3: still nobody overtakes */
	assert_false(cb2.got);
	rdma_pool_put(&p, &a, 2, ca.slots);
	assert_true(cc.got && cc.ok);
	assert_true(cb2.got && cb2.ok);
	assert_true(cc.order < cb2.order);
	assert_int_equal(p.nwaiters, 0);
	assert_int_equal(rdma_pool_in_use(&p), 4);
	rdma_pool_fini(&p);
}

/* A connection at its cap waits; another connection is served meanwhile. */
static void test_cap_passed_over(void **state)
{
	struct rdma_pool p;
	struct rdma_pool_user a, b;
	struct call a1, a2, a3, b1;
	(void)state;

	setup_pool(&p, 8, 8);
	rdma_pool_user_init(&p, &a);
	rdma_pool_user_init(&p, &b);
	assert_int_equal(a.cap, 4);
	assert_true(call_start(&p, &a, &a1, 3));
	assert_false(call_start(&p, &a, &a2, 3)); /* 3 + 3 > cap 4 */
	assert_false(call_start(&p, &a, &a3, 1)); /* queued behind a2 */
	assert_false(call_start(&p, &b, &b1, 2)); /* queued, FIFO */
	rdma_pool_kick(&p);
	assert_true(b1.got && b1.ok); /* a is at its cap: b goes */
	assert_false(a2.got);
	assert_false(a3.got); /* a's later call keeps a's order */
	rdma_pool_put(&p, &a, 3, a1.slots);
	assert_true(a2.got && a3.got);
	assert_true(a2.order < a3.order);
	rdma_pool_fini(&p);
}

/* A grant that releases at once (a call answered synchronously) re-enters
 * the pool: every waiter is still served. */
static struct rdma_pool *reenter_pool;
static unsigned reenter_done;

static void granted_release(struct rdma_pool_waiter *w, bool ok)
{
	assert_true(ok);
	reenter_done++;
	rdma_pool_put(reenter_pool, w->user, w->need, w->out);
}

static void test_reentrant_release(void **state)
{
	struct rdma_pool p;
	struct rdma_pool_user u[6], u0;
	struct call c[6], first;
	(void)state;

	setup_pool(&p, 3, 3);
	reenter_pool = &p;
	reenter_done = 0;
	rdma_pool_user_init(&p, &u0);
	assert_true(call_start(&p, &u0, &first, 3));
	for (int i = 0; i < 6; i++) {
		rdma_pool_user_init(&p, &u[i]);
		assert_false(call_start(&p, &u[i], &c[i], 1 + i % 3));
		c[i].w.granted = granted_release;
	}
	rdma_pool_put(&p, &u0, 3, first.slots);
	assert_int_equal(reenter_done, 6);
	assert_int_equal(p.nwaiters, 0);
	assert_int_equal(rdma_pool_in_use(&p), 0);
	rdma_pool_fini(&p);
}

static void test_cancel(void **state)
{
	struct rdma_pool p;
	struct rdma_pool_user a, b;
	struct call a1, a2, b1;
	(void)state;

	setup_pool(&p, 3, 3);
	rdma_pool_user_init(&p, &a);
	rdma_pool_user_init(&p, &b);
	assert_true(call_start(&p, &a, &a1, 2));
	assert_false(call_start(&p, &a, &a2, 3));
	assert_false(call_start(&p, &b, &b1, 1));
	rdma_pool_cancel(&p, &a2.w); /* a closes */
	rdma_pool_kick(&p);
	assert_true(b1.got && b1.ok);
	assert_false(a2.got);
	rdma_pool_fini(&p);
}

/* Registration fails after the first chunk: the pool stays at what it has;
 * a call needing more than that is told so at once, and a waiter queued
 * before the failure is told so too (never left waiting). */
static void test_registration_fails(void **state)
{
	struct rdma_pool p;
	struct rdma_pool_user u, v, w;
	struct call u1, u2, v1, w1;
	int s[3];
	(void)state;

	setup_pool(&p, 8, 2);
	rdma_pool_user_init(&p, &u);
	rdma_pool_user_init(&p, &v);
	rdma_pool_user_init(&p, &w);
	assert_true(call_start(&p, &u, &u1, 2));
	assert_false(call_start(&p, &u, &u2, 3)); /* u's cap (4): no growth tried */
	assert_false(call_start(&p, &v, &v1, 3)); /* behind u2 */
	fail_after = 1;
	rdma_pool_kick(&p);                        /* v1 tries to grow: fails */
	assert_true(p.reg_failed);
	assert_true(v1.got);
	assert_false(v1.ok);
	assert_int_equal(rdma_pool_get(&p, &w, 3, s), RDMA_POOL_NEVER);
	assert_false(call_start(&p, &w, &w1, 1)); /* still served later */
	rdma_pool_put(&p, &u, 2, u1.slots);
	assert_true(u2.got);
	assert_false(u2.ok);                       /* 3 > the 2 slots there are */
	assert_true(w1.got && w1.ok);
	rdma_pool_fini(&p);
}

/* 64 connections x 4 calls of random needs on a 6-slot pool: every call is
 * served, in bounded rounds, the caps and the bound always hold. */
static void test_many_more_calls_than_slots(void **state)
{
	enum { NU = 64, NC = 4 };
	struct rdma_pool p;
	struct rdma_pool_user u[NU];
	static struct call c[NU][NC];
	unsigned served = 0;
	(void)state;

	setup_pool(&p, 6, 4);
	srand(7);
	for (int i = 0; i < NU; i++) {
		rdma_pool_user_init(&p, &u[i]);
		for (int k = 0; k < NC; k++)
			call_start(&p, &u[i], &c[i][k], 1 + (unsigned)rand() % 3);
	}
	for (int round = 0; round < 10000 && served < NU * NC; round++) {
		/* Answer every call that holds slots. */
		for (int i = 0; i < NU; i++) {
			for (int k = 0; k < NC; k++) {
				struct call *x = &c[i][k];
				if (x->got && x->ok && x->w.need != ~0u) {
					unsigned n = x->w.need;
					x->w.need = ~0u; /* answered */
					served++;
					rdma_pool_put(&p, &u[i], n, x->slots);
				}
				assert_true(u[i].held <= u[i].cap);
			}
		}
		assert_true(rdma_pool_in_use(&p) <= p.max_slots);
	}
	for (int i = 0; i < NU; i++)
		for (int k = 0; k < NC; k++)
			assert_true(c[i][k].got && c[i][k].ok);
	assert_int_equal(p.nwaiters, 0);
	assert_true(p.waits > 0);
	rdma_pool_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lazy_chunks),
		cmocka_unit_test(test_minimum_and_never),
		cmocka_unit_test(test_fifo_no_overtaking),
		cmocka_unit_test(test_cap_passed_over),
		cmocka_unit_test(test_reentrant_release),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_registration_fails),
		cmocka_unit_test(test_many_more_calls_than_slots),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
