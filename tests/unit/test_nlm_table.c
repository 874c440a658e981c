/*
 * test_nlm_table.c - nlm/nlm_table.c: owners (caller_name + svid + oh) and
 * their ids, range overlap, held files, waiters (a repeated blocked LOCK
 * finds its waiter), share reservations (XNFS §10.3 conflicts), a host's
 * release (FREE_ALL), and a full table answering ENOLCK, as does a host
 * past its share (max_per_host) while other hosts are served.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "nlm/nlm_table.h"
#include "nlm/nlm4_xdr.h"

static struct nlm_fh mkfh(uint8_t b)
{
	struct nlm_fh fh;
	uint8_t data[32];

	memset(data, b, sizeof(data));
	assert_true(nlm_fh_set(&fh, data, sizeof(data)));
	return fh;
}

static void test_overlap(void **state)
{
	(void)state;
	assert_true(nlm_range_overlap(0, 10, 5, 10));
	assert_false(nlm_range_overlap(0, 10, 10, 10)); /* [0,10) and [10,20) touch */
	assert_true(nlm_range_overlap(100, 0, 1000000, 1)); /* 0: to the end */
	assert_false(nlm_range_overlap(0, 100, 100, 0));
	assert_true(nlm_range_overlap(UINT64_MAX - 1, 5, UINT64_MAX - 1, 1)); /* overflow: to the end */
	assert_false(nlm_range_overlap(5, 1, 0, 5));
}

static void test_owners(void **state)
{
	struct nlm_table t;
	unsigned a, b, c, again;

	(void)state;
	assert_int_equal(nlm_table_init(&t, 2, 4, 4, 4), 0);
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 1, (const uint8_t *)"1@h1", 4, false, &a), ENOENT);
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 1, (const uint8_t *)"1@h1", 4, true, &a), 0);
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 2, (const uint8_t *)"2@h1", 4, true, &b), 0);
	assert_int_not_equal(a, b);
	assert_int_not_equal(nlm_owner_id(&t, a), nlm_owner_id(&t, b));
	assert_int_not_equal(nlm_owner_id(&t, a), 0);
	assert_int_equal(nlm_owner_by_id(&t, nlm_owner_id(&t, b)), (int)b);
	assert_int_equal(nlm_owner_by_id(&t, 5), -1);
	/* same key: same owner; table full for a third */
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 1, (const uint8_t *)"1@h1", 4, false, &again), 0);
	assert_int_equal(again, a);
	assert_int_equal(nlm_owner_get(&t, "h2", 2, 1, (const uint8_t *)"1@h2", 4, true, &c), ENOLCK);
	/* an owner without references goes at put; its slot's next id differs */
	uint64_t old = nlm_owner_id(&t, a);
	nlm_owner_put(&t, a);
	assert_int_equal(nlm_owner_by_id(&t, old), -1);
	assert_int_equal(nlm_owner_get(&t, "h2", 2, 1, (const uint8_t *)"1@h2", 4, true, &c), 0);
	assert_int_equal(c, a);
	assert_int_not_equal(nlm_owner_id(&t, c), old);
	/* limits */
	char longname[NLM_HOST_MAX + 2];
	memset(longname, 'x', sizeof(longname));
	assert_int_equal(nlm_owner_get(&t, longname, NLM_HOST_MAX + 1, 1, NULL, 0, true, &c), ENAMETOOLONG);
	nlm_table_free(&t);
}

static uint64_t count_want;

static void count(const struct nlm_fh *fh, uint64_t id, void *arg)
{
	(void)fh;
	assert_int_equal(id, count_want);
	(*(unsigned *)arg)++;
}

static void test_held_and_release(void **state)
{
	struct nlm_table t;
	struct nlm_fh f1 = mkfh(1), f2 = mkfh(2);
	unsigned a, b, calls = 0;

	(void)state;
	assert_int_equal(nlm_table_init(&t, 4, 3, 4, 4), 0);
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 1, NULL, 0, true, &a), 0);
	assert_int_equal(nlm_owner_get(&t, "h2", 2, 1, NULL, 0, true, &b), 0);
	assert_int_equal(nlm_held_add(&t, a, &f1), 0);
	assert_int_equal(nlm_held_add(&t, a, &f1), 0); /* idempotent */
	assert_int_equal(nlm_held_add(&t, a, &f2), 0);
	assert_int_equal(nlm_held_add(&t, b, &f1), 0);
	assert_int_equal(nlm_held_add(&t, b, &f2), ENOLCK);
	assert_int_equal(t.owners[a].refs, 2);
	assert_true(nlm_held_del(&t, a, &f2));
	assert_false(nlm_held_del(&t, a, &f2));

	uint64_t id_a = nlm_owner_id(&t, a);
	count_want = id_a;
	assert_int_equal(nlm_host_release(&t, "h1", 2, count, &calls), 1);
	assert_int_equal(calls, 1);
	assert_int_equal(nlm_owner_by_id(&t, id_a), -1); /* gone with its last record */
	assert_true(t.owners[b].used);                   /* the other host keeps its lock */
	nlm_table_free(&t);
}

/* Issue 24 defect 2: one host (caller_name) cannot take the tables from the others. */
static void test_per_host(void **state)
{
	struct nlm_table t;
	struct nlm_fh f1 = mkfh(1), f2 = mkfh(2), f3 = mkfh(3);
	unsigned a, b, c, o, h;

	(void)state;
	assert_int_equal(nlm_table_init(&t, 8, 8, 4, 4), 0);
	t.max_per_host = 2;
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 1, NULL, 0, true, &a), 0);
	assert_int_equal(nlm_held_add(&t, a, &f1), 0);
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 2, NULL, 0, true, &b), 0);
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 3, NULL, 0, true, &c), ENOLCK); /* a third owner of h1 */
	assert_int_equal(nlm_held_add(&t, a, &f2), 0);
	assert_int_equal(nlm_held_add(&t, b, &f3), ENOLCK); /* a third file held by h1 */
	assert_int_equal(nlm_held_add(&t, a, &f1), 0);      /* one it holds: fine */
	assert_int_equal(nlm_owner_get(&t, "h2", 2, 1, NULL, 0, true, &c), 0); /* other hosts are not affected */
	assert_int_equal(nlm_held_add(&t, c, &f3), 0);
	nlm_table_counts(&t, &o, &h);
	assert_int_equal(o, 3);
	assert_int_equal(h, 3);
	assert_true(nlm_held_del(&t, a, &f2));
	assert_int_equal(nlm_held_add(&t, b, &f3), 0); /* given back: room again */
	nlm_table_free(&t);
}

static void test_waiters(void **state)
{
	struct nlm_table t;
	struct nlm_fh f1 = mkfh(1), f2 = mkfh(2);
	struct nlm_waiter w = { 0 };
	unsigned a, i1, i2, i3;
	bool is_new;

	(void)state;
	assert_int_equal(nlm_table_init(&t, 4, 4, 2, 4), 0);
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 7, NULL, 0, true, &a), 0);
	w.owner = a;
	w.fh = f1;
	w.exclusive = true;
	w.offset = 0;
	w.length = 10;
	w.seq = 1;
	assert_int_equal(nlm_waiter_add(&t, &w, &i1, &is_new), 0);
	assert_true(is_new);
	assert_int_equal(t.waiters[i1].state, NLM_W_WAITING);
	/* the same LOCK again (Linux repeats it every 30 s): the same waiter */
	assert_int_equal(nlm_waiter_add(&t, &w, &i2, &is_new), 0);
	assert_false(is_new);
	assert_int_equal(i1, i2);
	w.fh = f2;
	assert_int_equal(nlm_waiter_add(&t, &w, &i2, &is_new), 0);
	w.offset = 50;
	assert_int_equal(nlm_waiter_add(&t, &w, &i3, &is_new), ENOLCK);
	assert_int_equal(nlm_waiter_find(&t, a, &f1, 0, 10), (int)i1);
	assert_int_equal(nlm_waiter_find(&t, a, &f1, 0, 11), -1);
	assert_int_equal(nlm_waiter_next(&t, 0, NLM_W_WAITING, &f2), (int)i2);
	assert_int_equal(nlm_waiter_next(&t, i2 + 1, NLM_W_WAITING, &f2), -1);
	/* the owner lives while a waiter does */
	nlm_owner_put(&t, a);
	assert_true(t.owners[a].used);
	nlm_waiter_del(&t, i1);
	nlm_waiter_del(&t, i1); /* twice: harmless */
	assert_true(t.owners[a].used);
	nlm_waiter_del(&t, i2);
	assert_false(t.owners[a].used);
	nlm_table_free(&t);
}

static void test_shares(void **state)
{
	struct nlm_table t;
	struct nlm_fh f1 = mkfh(1), f2 = mkfh(2);
	unsigned a, b;

	(void)state;
	assert_int_equal(nlm_table_init(&t, 4, 4, 4, 2), 0);
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 0, (const uint8_t *)"a", 1, true, &a), 0);
	assert_int_equal(nlm_owner_get(&t, "h2", 2, 0, (const uint8_t *)"b", 1, true, &b), 0);
	/* a reads and denies writers */
	assert_int_equal(nlm_share_add(&t, a, &f1, NLM4_FSA_W, NLM4_FSA_R), 0);
	/* b wants to write: denied; b reads, denying nothing: fine */
	assert_int_equal(nlm_share_add(&t, b, &f1, NLM4_FSA_NONE, NLM4_FSA_W), EAGAIN);
	assert_int_equal(nlm_share_add(&t, b, &f1, NLM4_FSA_NONE, NLM4_FSA_R), 0);
	/* b denies readers: conflicts with a's read access, even as an update of b's own */
	assert_int_equal(nlm_share_add(&t, b, &f1, NLM4_FSA_R, NLM4_FSA_R), EAGAIN);
	/* another file is independent, but the table is full */
	assert_int_equal(nlm_share_add(&t, b, &f2, NLM4_FSA_RW, NLM4_FSA_RW), ENOLCK);
	nlm_share_del(&t, a, &f1);
	assert_int_equal(nlm_share_add(&t, b, &f1, NLM4_FSA_NONE, NLM4_FSA_W), 0);
	assert_int_equal(nlm_host_release(&t, "h2", 2, NULL, NULL), 0);
	assert_int_equal(nlm_share_add(&t, a, &f1, NLM4_FSA_RW, NLM4_FSA_RW), 0);
	nlm_table_free(&t);
}

/* An export no longer served: every record on its files goes, whoever holds it; others stay. */
static bool fh_is_1(const struct nlm_fh *fh, void *arg)
{
	(void)arg;
	return fh->data[0] == 1;
}

static void test_fh_release(void **state)
{
	struct nlm_table t;
	struct nlm_fh f1 = mkfh(1), f2 = mkfh(2);
	unsigned a, b, calls = 0;

	(void)state;
	assert_int_equal(nlm_table_init(&t, 8, 8, 4, 4), 0);
	assert_int_equal(nlm_owner_get(&t, "h1", 2, 1, NULL, 0, true, &a), 0);
	assert_int_equal(nlm_owner_get(&t, "h2", 2, 1, NULL, 0, true, &b), 0);
	assert_int_equal(nlm_held_add(&t, a, &f1), 0);
	assert_int_equal(nlm_held_add(&t, a, &f2), 0);
	assert_int_equal(nlm_share_add(&t, b, &f1, NLM4_FSA_NONE, NLM4_FSA_R), 0);
	count_want = nlm_owner_id(&t, a);
	assert_int_equal(nlm_fh_release(&t, fh_is_1, NULL, count, &calls), 1);
	assert_int_equal(calls, 1);
	assert_true(t.owners[a].used);  /* still holds f2 */
	assert_false(t.owners[b].used); /* its share on f1 was its last record */
	assert_false(nlm_held_del(&t, a, &f1));
	assert_true(nlm_held_del(&t, a, &f2));
	nlm_table_free(&t);
}

static void test_fh(void **state)
{
	struct nlm_fh fh;
	uint8_t big[NLM_FH_MAX + 1] = { 0 };

	(void)state;
	assert_false(nlm_fh_set(&fh, big, 0));
	assert_false(nlm_fh_set(&fh, big, NLM_FH_MAX + 1));
	assert_true(nlm_fh_set(&fh, big, NLM_FH_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overlap), cmocka_unit_test(test_owners),  cmocka_unit_test(test_held_and_release),
		cmocka_unit_test(test_waiters), cmocka_unit_test(test_shares), cmocka_unit_test(test_fh),
		cmocka_unit_test(test_per_host), cmocka_unit_test(test_fh_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
