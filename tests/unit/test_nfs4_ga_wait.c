/*
 * test_nfs4_ga_wait.c - the CB_GETATTR waiter table (nfs/v4/state/nfs4_ga_wait.c):
 * each life of a slot (answered, answered with an error, timed out then
 * answered late, never sent), all NFS4_GA_WAITERS taken and the next
 * refused, and a soak of thousands of random take/answer/time-out/release
 * steps against a model, after which the table is empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/state/nfs4_ga_wait.h"

static struct nfs4_ga_tab t;

static int setup(void **state)
{
	(void)state;
	memset(&t, 0, sizeof(t));
	return 0;
}

static void assert_empty(void)
{
	assert_int_equal(nfs4_ga_count(&t), 0);
	for (unsigned i = 0; i < NFS4_GA_WAITERS; i++)
		assert_false(t.w[i].used);
}

/* Answered in time: the worker reads the holder's answer and the slot is free. */
static void test_answered(void **state)
{
	struct nfs4_cb_getattr_res out;
	struct nfs4_ga_wait *w;
	bool ok = false;

	(void)state;
	w = nfs4_ga_take(&t);
	assert_non_null(w);
	assert_int_equal(nfs4_ga_count(&t), 1);
	w->res = (struct nfs4_cb_getattr_res){ .has_size = true, .size = 5 }; /* the loop thread's decode */
	assert_true(nfs4_ga_done(&t, w, 0));
	assert_true(nfs4_ga_finish(&t, w, &ok, &out));
	assert_true(ok);
	assert_true(out.has_size && out.size == 5);
	assert_empty();
	/* An error from the holder (or -1, no answer): answered, not ok. */
	w = nfs4_ga_take(&t);
	assert_true(nfs4_ga_done(&t, w, -1));
	assert_true(nfs4_ga_finish(&t, w, &ok, &out));
	assert_false(ok);
	assert_empty();
}

/* Timed out: the slot stays taken (the callback still writes into it) until done() runs. */
static void test_timeout(void **state)
{
	struct nfs4_cb_getattr_res out;
	struct nfs4_ga_wait *w;
	bool ok = true;

	(void)state;
	w = nfs4_ga_take(&t);
	assert_false(nfs4_ga_finish(&t, w, &ok, &out));
	assert_true(w->abandoned);
	assert_int_equal(nfs4_ga_count(&t), 1);
	assert_false(nfs4_ga_done(&t, w, 0)); /* nobody to wake: freed */
	assert_empty();
	/* Never sent: put frees it at once. */
	w = nfs4_ga_take(&t);
	nfs4_ga_put(&t, w);
	assert_empty();
}

/* All slots taken: the next is refused (the caller answers as for an unanswered call: recall, DELAY);
 * a timed-out slot is not free before its done(); once it is, it is taken again. */
static void test_full(void **state)
{
	struct nfs4_ga_wait *w[NFS4_GA_WAITERS];
	struct nfs4_cb_getattr_res out;
	bool ok;

	(void)state;
	for (unsigned i = 0; i < NFS4_GA_WAITERS; i++) {
		w[i] = nfs4_ga_take(&t);
		assert_non_null(w[i]);
		for (unsigned j = 0; j < i; j++)
			assert_ptr_not_equal(w[i], w[j]);
	}
	assert_int_equal(nfs4_ga_count(&t), NFS4_GA_WAITERS);
	assert_null(nfs4_ga_take(&t));
	assert_false(nfs4_ga_finish(&t, w[7], &ok, &out)); /* timed out */
	assert_null(nfs4_ga_take(&t));
	assert_false(nfs4_ga_done(&t, w[7], 0));
	assert_ptr_equal(nfs4_ga_take(&t), w[7]);
	assert_null(nfs4_ga_take(&t));
	for (unsigned i = 0; i < NFS4_GA_WAITERS; i++)
		nfs4_ga_put(&t, w[i]);
	assert_empty();
}

/* The model's view of one taken slot. */
enum slot_state { WAITING, ANSWERED, ABANDONED };

struct held {
	struct nfs4_ga_wait *w;
	enum slot_state st;
	uint64_t size; /* the answer it carries */
};

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 17, *s ^= *s << 5;
	return *s;
}

/* One step on slot h (index i of n held): what a worker or the callback would do next. true: freed. */
static bool step(struct held *h, uint32_t r)
{
	struct nfs4_cb_getattr_res out;
	bool ok;

	switch (h->st) {
	case WAITING:
		if (r % 8 == 0) {
			nfs4_ga_put(&t, h->w); /* the call was not sent */
			return true;
		}
		if (r % 2) {
			h->w->res.size = h->size;
			assert_true(nfs4_ga_done(&t, h->w, 0));
			h->st = ANSWERED;
		} else {
			assert_false(nfs4_ga_finish(&t, h->w, &ok, &out));
			h->st = ABANDONED;
		}
		return false;
	case ANSWERED:
		assert_true(nfs4_ga_finish(&t, h->w, &ok, &out));
		assert_true(ok);
		assert_int_equal(out.size, h->size);
		return true;
	case ABANDONED:
		assert_false(nfs4_ga_done(&t, h->w, -1));
		return true;
	}
	return false;
}

/* 20,000 random steps in phases that fill and drain the table: the count follows the model, a refusal comes
 * only when all slots are taken, each answer reaches its own worker, and the table ends empty. */
static void test_soak(void **state)
{
	struct held h[NFS4_GA_WAITERS];
	unsigned n = 0, refused = 0, taken = 0;
	uint32_t s = 2463534242u;

	(void)state;
	for (unsigned k = 0; k < 20000; k++) {
		uint32_t r = rnd(&s);
		bool filling = (k / 1000) % 2 == 0; /* phases: mostly asking, then mostly answering */

		if ((filling ? r % 3 != 0 : r % 5 == 0) || n == 0) { /* a worker asks */
			struct nfs4_ga_wait *w = nfs4_ga_take(&t);

			if (n == NFS4_GA_WAITERS) {
				assert_null(w);
				refused++;
				continue;
			}
			assert_non_null(w);
			h[n++] = (struct held){ w, WAITING, k };
			taken++;
		} else {
			unsigned i = (r >> 8) % n;

			if (step(&h[i], r >> 4))
				h[i] = h[--n];
		}
		assert_int_equal(nfs4_ga_count(&t), n);
	}
	while (n)
		if (step(&h[n - 1], rnd(&s)))
			n--;
	assert_empty();
	assert_true(taken > 5000);
	assert_true(refused > 0); /* it was full at times */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_answered, setup),
		cmocka_unit_test_setup(test_timeout, setup),
		cmocka_unit_test_setup(test_full, setup),
		cmocka_unit_test_setup(test_soak, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
