/*
 * test_ceph_gate.c - the ceph driver's admission accounting
 * (backend/ceph/ceph_gate.c) without Ceph: the cap on calls inside at once,
 * slots given back, stuck detection after the limit, the log events once
 * each way, op-timeout 0 (no stuck detection) and the clamps of init.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
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
	unsigned old, young, s;

	(void)state;
	ceph_gate_init(&g, 4, 10);
	assert_int_equal(enter(&g, 100 * SEC, &old, &ev), CEPH_GATE_IN);
	assert_int_equal(enter(&g, 105 * SEC, &young, &ev), CEPH_GATE_IN);
	/* at the limit exactly: not yet stuck */
	assert_int_equal(enter(&g, 110 * SEC, &s, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_SAME);
	ceph_gate_leave(&g, s, 110 * SEC);
	/* past it: refused, the event once */
	assert_int_equal(enter(&g, 110 * SEC + 1, &s, &ev), CEPH_GATE_STUCK);
	assert_int_equal(ev, CEPH_GATE_BECAME_STUCK);
	assert_int_equal(enter(&g, 111 * SEC, &s, &ev), CEPH_GATE_STUCK);
	assert_int_equal(ev, CEPH_GATE_SAME);
	assert_int_equal(g.refused_stuck, 2);
	assert_int_equal(ceph_gate_inside(&g), 2); /* free slots, but nobody joins the stuck call */
	/* the old call returns at 116 s: the young one (entered at 105) is past the limit too */
	assert_int_equal(ceph_gate_leave(&g, old, 116 * SEC), CEPH_GATE_SAME);
	assert_int_equal(enter(&g, 116 * SEC, &s, &ev), CEPH_GATE_STUCK);
	/* it returns: answering again, once */
	assert_int_equal(ceph_gate_leave(&g, young, 117 * SEC), CEPH_GATE_ANSWERS_AGAIN);
	assert_int_equal(enter(&g, 117 * SEC, &s, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_SAME);
	assert_int_equal(ceph_gate_leave(&g, s, 117 * SEC), CEPH_GATE_SAME);
	ceph_gate_destroy(&g);
}

/* The only call inside was the stuck one: its return reports the recovery, and the next call enters. */
static void leave_reports_recovery(void **state)
{
	struct ceph_gate g;
	enum ceph_gate_event ev;
	unsigned a, s;

	(void)state;
	ceph_gate_init(&g, 2, 5);
	assert_int_equal(enter(&g, 1 * SEC, &a, &ev), CEPH_GATE_IN);
	assert_int_equal(enter(&g, 7 * SEC, &s, &ev), CEPH_GATE_STUCK);
	assert_int_equal(ev, CEPH_GATE_BECAME_STUCK);
	assert_int_equal(ceph_gate_leave(&g, a, 8 * SEC), CEPH_GATE_ANSWERS_AGAIN);
	assert_int_equal(enter(&g, 8 * SEC, &s, &ev), CEPH_GATE_IN);
	assert_int_equal(ev, CEPH_GATE_SAME);
	ceph_gate_leave(&g, s, 8 * SEC);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cap_and_slots),
		cmocka_unit_test(stuck_and_back),
		cmocka_unit_test(leave_reports_recovery),
		cmocka_unit_test(no_stuck_limit),
		cmocka_unit_test(init_clamps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
