/*
 * test_ceph_gate.c - the ceph driver's admission accounting
 * (backend/ceph/ceph_gate.c) without Ceph: the cap on calls inside at once,
 * slots given back, stuck detection after the limit (a call past it and
 * none returned for as long), one probe at a time while stuck, any return
 * ending it, the log events once each way, op-timeout 0 (no stuck detection), the clamps of init, and how
 * long a call finding the gate full may wait for a slot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <time.h>
#include <cmocka.h>

#include "backend/ceph/ceph_gate.h"

#define SEC 1000000000ull

static enum ceph_gate_verdict enter(struct ceph_gate *g, uint64_t now, unsigned *slot, enum ceph_gate_event *ev)
{
	return ceph_gate_enter(g, now, slot, ev);
}

static void cap_and_slots(void **state)
{
	struct ceph_gate g;
	enum ceph_gate_event ev;
	unsigned a, b, c;

	(void)state;
	ceph_gate_init(&g, 2, 10);
	assert_int_equal(enter(&g, 1 * SEC, &a, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_SAME);
	assert_int_equal(enter(&g, 1 * SEC, &b, &ev), CEPH_GATE_IN);
	assert_int_not_equal(a, b);
	assert_int_equal(ceph_gate_inside(&g), 2);
	assert_int_equal(enter(&g, 2 * SEC, &c, &ev), CEPH_GATE_FULL);
	assert_int_equal(ev, CEPH_GATE_SAME);
	assert_int_equal(g.refused_full, 1);
	assert_int_equal(ceph_gate_leave(&g, a, 3 * SEC), CEPH_GATE_SAME);
	assert_int_equal(ceph_gate_inside(&g), 1);
	assert_int_equal(enter(&g, 3 * SEC, &c, &ev), CEPH_GATE_IN);
	assert_int_equal(c, a); /* the freed slot is reused */
	ceph_gate_leave(&g, b, 4 * SEC);
	ceph_gate_leave(&g, c, 4 * SEC);
	ceph_gate_leave(&g, c, 4 * SEC); /* twice: no underflow */
	assert_int_equal(ceph_gate_inside(&g), 0);
	ceph_gate_destroy(&g);
}

static void stuck_and_back(void **state)
{
	struct ceph_gate g;
	enum ceph_gate_event ev;
	unsigned old, young, s, probe, n;

	(void)state;
	ceph_gate_init(&g, 4, 10);
	assert_int_equal(enter(&g, 100 * SEC, &old, &ev), CEPH_GATE_IN);
	assert_int_equal(enter(&g, 105 * SEC, &young, &ev), CEPH_GATE_IN);
	/* at the limit exactly: not yet stuck */
	assert_int_equal(enter(&g, 110 * SEC, &s, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_SAME);
	/* past it, nothing ever returned: stuck, the event once; one probe let in */
	assert_int_equal(enter(&g, 110 * SEC + 1, &probe, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_BECAME_STUCK);
	assert_int_equal(g.probe, probe);
	assert_int_equal(enter(&g, 111 * SEC, &n, &ev), CEPH_GATE_STUCK); /* full, and stuck */
	assert_int_equal(ev, CEPH_GATE_SAME);
	/* s returns: answering again, once, though the old call is still stuck */
	assert_int_equal(ceph_gate_leave(&g, s, 112 * SEC), CEPH_GATE_ANSWERS_AGAIN);
	assert_int_equal(enter(&g, 112 * SEC, &s, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_SAME);
	ceph_gate_leave(&g, s, 112 * SEC);
	/* another stuck limit without a return: stuck again; the probe is still out, so refused */
	assert_int_equal(enter(&g, 123 * SEC, &n, &ev), CEPH_GATE_STUCK);
	assert_int_equal(ev, CEPH_GATE_BECAME_STUCK);
	assert_int_equal(enter(&g, 124 * SEC, &n, &ev), CEPH_GATE_STUCK);
	assert_int_equal(g.refused_stuck, 3);
	assert_int_equal(ceph_gate_inside(&g), 3); /* a free slot, but nobody else joins the stuck calls */
	/* the probe returns: answering again */
	assert_int_equal(ceph_gate_leave(&g, probe, 125 * SEC), CEPH_GATE_ANSWERS_AGAIN);
	assert_int_equal(g.probe, CEPH_GATE_NO_PROBE);
	assert_int_equal(ceph_gate_leave(&g, old, 126 * SEC), CEPH_GATE_SAME);
	assert_int_equal(ceph_gate_leave(&g, young, 126 * SEC), CEPH_GATE_SAME);
	ceph_gate_destroy(&g);
}

/* Issue 23: one slow first call of a freshly started cluster (nothing returned yet, the call past the
 * limit) used to refuse every new call at once; now the next call goes in as the probe and its return
 * opens the gate. */
static void slow_first_call_lets_a_probe_in(void **state)
{
	struct ceph_gate g;
	enum ceph_gate_event ev;
	unsigned first, probe, s;

	(void)state;
	ceph_gate_init(&g, 4, 10);
	assert_int_equal(enter(&g, 1 * SEC, &first, &ev), CEPH_GATE_IN);
	assert_int_equal(enter(&g, 12 * SEC, &probe, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_BECAME_STUCK);
	assert_int_equal(enter(&g, 12 * SEC, &s, &ev), CEPH_GATE_STUCK); /* one probe at a time */
	assert_int_equal(ceph_gate_leave(&g, probe, 13 * SEC), CEPH_GATE_ANSWERS_AGAIN);
	assert_int_equal(enter(&g, 13 * SEC, &s, &ev), CEPH_GATE_IN); /* the slow first call is still inside */
	assert_int_equal(ev, CEPH_GATE_SAME);
	ceph_gate_leave(&g, s, 14 * SEC);
	assert_int_equal(ceph_gate_leave(&g, first, 15 * SEC), CEPH_GATE_SAME);
	ceph_gate_destroy(&g);
}

/* A call past the limit while others keep returning: the cluster answers, the gate stays open. */
static void returns_keep_it_open(void **state)
{
	struct ceph_gate g;
	enum ceph_gate_event ev;
	unsigned slow, s;

	(void)state;
	ceph_gate_init(&g, 4, 10);
	assert_int_equal(enter(&g, 1 * SEC, &slow, &ev), CEPH_GATE_IN);
	for (uint64_t t = 2; t <= 30; t += 4) {
		assert_int_equal(enter(&g, t * SEC, &s, &ev), CEPH_GATE_IN);
		assert_int_equal(ev, CEPH_GATE_SAME);
		assert_int_equal(ceph_gate_leave(&g, s, t * SEC + SEC / 2), CEPH_GATE_SAME);
	}
	assert_int_equal(g.refused_stuck, 0);
	ceph_gate_leave(&g, slow, 31 * SEC);
	ceph_gate_destroy(&g);
}

/* The stuck call was the only one inside: the probe goes in; the stuck call's return reports recovery. */
static void leave_reports_recovery(void **state)
{
	struct ceph_gate g;
	enum ceph_gate_event ev;
	unsigned a, p, s;

	(void)state;
	ceph_gate_init(&g, 3, 5);
	assert_int_equal(enter(&g, 1 * SEC, &a, &ev), CEPH_GATE_IN);
	assert_int_equal(enter(&g, 7 * SEC, &p, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_BECAME_STUCK);
	assert_int_equal(enter(&g, 7 * SEC, &s, &ev), CEPH_GATE_STUCK);
	assert_int_equal(ceph_gate_leave(&g, a, 8 * SEC), CEPH_GATE_ANSWERS_AGAIN);
	assert_int_equal(enter(&g, 8 * SEC, &s, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_SAME);
	ceph_gate_leave(&g, s, 8 * SEC);
	assert_int_equal(ceph_gate_leave(&g, p, 9 * SEC), CEPH_GATE_SAME); /* the probe: a plain return now */
	ceph_gate_destroy(&g);
}

static void no_stuck_limit(void **state)
{
	struct ceph_gate g;
	enum ceph_gate_event ev;
	unsigned a, s;

	(void)state;
	ceph_gate_init(&g, 2, 0); /* op-timeout 0: waits for ever, never stuck */
	assert_int_equal(enter(&g, 1 * SEC, &a, &ev), CEPH_GATE_IN);
	assert_int_equal(enter(&g, 100000 * SEC, &s, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_SAME);
	assert_int_equal(enter(&g, 100000 * SEC, &s, &ev), CEPH_GATE_FULL); /* the cap still holds */
	ceph_gate_destroy(&g);
}

static void init_clamps(void **state)
{
	struct ceph_gate g;
	enum ceph_gate_event ev;
	unsigned s, n = 0;

	(void)state;
	ceph_gate_init(&g, 0, 1);
	assert_int_equal(g.max, CEPH_GATE_SLOTS);
	ceph_gate_destroy(&g);
	ceph_gate_init(&g, 100000, 1);
	assert_int_equal(g.max, CEPH_GATE_SLOTS);
	while (enter(&g, 5, &s, &ev) == CEPH_GATE_IN)
		n++;
	assert_int_equal(n, CEPH_GATE_SLOTS);
	ceph_gate_destroy(&g);
	ceph_gate_init(&g, 1, 1);
	assert_int_equal(enter(&g, 0, &s, &ev), CEPH_GATE_IN); /* a clock at 0 still marks the slot taken */
	assert_int_equal(enter(&g, 0, &s, &ev), CEPH_GATE_FULL);
	ceph_gate_destroy(&g);
}

/* Full with young calls inside: wait until the oldest is CEPH_GATE_PATIENCE_NS old; then refuse at once. */
static void full_wait(void **state)
{
	struct ceph_gate g;
	enum ceph_gate_event ev;
	unsigned a, b, s;
	const uint64_t t = 50 * SEC;

	(void)state;
	ceph_gate_init(&g, 2, 10);
	assert_int_equal(ceph_gate_full_wait(&g, t), 0); /* nobody inside: nothing to wait for */
	assert_int_equal(enter(&g, t, &a, &ev), CEPH_GATE_IN);
	assert_int_equal(enter(&g, t + SEC / 4, &b, &ev), CEPH_GATE_IN);
	assert_int_equal(enter(&g, t + SEC / 2, &s, &ev), CEPH_GATE_FULL);
	assert_int_equal(ceph_gate_full_wait(&g, t + SEC / 2), CEPH_GATE_PATIENCE_NS - SEC / 2);
	assert_int_equal(ceph_gate_full_wait(&g, t + CEPH_GATE_PATIENCE_NS), 0);
	assert_int_equal(ceph_gate_full_wait(&g, t + 5 * SEC), 0);
	/* the oldest leaves: the patience counts from the next oldest */
	ceph_gate_leave(&g, a, t + SEC / 2);
	assert_int_equal(enter(&g, t + SEC / 2, &a, &ev), CEPH_GATE_IN);
	assert_int_equal(ceph_gate_full_wait(&g, t + SEC), CEPH_GATE_PATIENCE_NS - (SEC - SEC / 4));
	ceph_gate_destroy(&g);
}

/* A sleeping call wakes when a slot is given back, else after the time given. */
static void *leave_soon(void *arg)
{
	struct ceph_gate *g = arg;
	struct timespec d = { .tv_nsec = 20000000 };

	nanosleep(&d, NULL);
	ceph_gate_leave(g, 0, 1);
	return NULL;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_wakes(void **state)
{
	struct ceph_gate g;
	enum ceph_gate_event ev;
	unsigned s;
	pthread_t t;
	double t0;

	(void)state;
	ceph_gate_init(&g, 1, 0);
	assert_int_equal(enter(&g, 1, &s, &ev), CEPH_GATE_IN);
	t0 = mono();
	ceph_gate_sleep(&g, SEC / 20); /* nobody leaves: the whole 50 ms */
	assert_true(mono() - t0 >= 0.045);
	assert_int_equal(pthread_create(&t, NULL, leave_soon, &g), 0);
	t0 = mono();
	ceph_gate_sleep(&g, 10 * SEC); /* woken by the leave after 20 ms, long before 10 s */
	assert_true(mono() - t0 < 5.0);
	pthread_join(t, NULL);
	assert_int_equal(ceph_gate_inside(&g), 0);
	ceph_gate_sleep(&g, 10 * SEC); /* a free slot: returns at once */
	ceph_gate_destroy(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cap_and_slots),
		cmocka_unit_test(stuck_and_back),
		cmocka_unit_test(slow_first_call_lets_a_probe_in),
		cmocka_unit_test(returns_keep_it_open),
		cmocka_unit_test(leave_reports_recovery),
		cmocka_unit_test(no_stuck_limit),
		cmocka_unit_test(init_clamps),
		cmocka_unit_test(full_wait),
		cmocka_unit_test(sleep_wakes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
