/*
 * test_backend_lock_ranges.c - the ranges one lock owner holds on one file
 * (backend/local/lock_ranges.c): locks merge with overlapping and touching
 * ones, unlocks trim and split, an unlock of what is held leaves the owner
 * known empty (so local_lock.c closes its description), more pieces than
 * kept make it unknown until a whole-file unlock, ends as the kernel takes
 * them (0 and lengths past INT64_MAX reach the end of the file).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "backend/local/lock_ranges.h"

static void successive_pairs(void **state)
{
	struct lk_ranges s = { 0 };

	(void)state;
	/* issue 23's pattern: 10-byte lock, unlock, at successive offsets */
	for (uint64_t off = 0; off < 100000; off += 10) {
		lk_ranges_add(&s, off, off + 10);
		assert_false(lk_ranges_empty(&s));
		lk_ranges_sub(&s, off, off + 10);
		assert_true(lk_ranges_empty(&s));
	}
}

static void merge_and_split(void **state)
{
	struct lk_ranges s = { 0 };

	(void)state;
	lk_ranges_add(&s, 10, 20);
	lk_ranges_add(&s, 30, 40);
	assert_int_equal(s.n, 2);
	lk_ranges_add(&s, 20, 30); /* touches both: one piece */
	assert_int_equal(s.n, 1);
	assert_int_equal(s.r[0].start, 10);
	assert_int_equal(s.r[0].end, 40);
	lk_ranges_sub(&s, 15, 25); /* split */
	assert_int_equal(s.n, 2);
	assert_int_equal(s.r[0].end, 15);
	assert_int_equal(s.r[1].start, 25);
	lk_ranges_sub(&s, 0, 12);  /* trims the front */
	assert_int_equal(s.r[0].start, 12);
	lk_ranges_sub(&s, 30, LK_RANGE_EOF); /* trims the back */
	assert_int_equal(s.r[1].end, 30);
	lk_ranges_sub(&s, 100, 200); /* nothing held there */
	assert_int_equal(s.n, 2);
	lk_ranges_sub(&s, 12, 15);
	lk_ranges_sub(&s, 25, 30);
	assert_true(lk_ranges_empty(&s));
	lk_ranges_add(&s, 5, 5); /* empty: nothing */
	assert_true(lk_ranges_empty(&s));
}

static void one_unlock_covers_many(void **state)
{
	struct lk_ranges s = { 0 };

	(void)state;
	for (uint64_t i = 0; i < LK_RANGES_MAX; i++)
		lk_ranges_add(&s, i * 100, i * 100 + 10);
	assert_int_equal(s.n, LK_RANGES_MAX);
	assert_false(s.lost);
	lk_ranges_sub(&s, 50, 650); /* drops six of them */
	assert_int_equal(s.n, LK_RANGES_MAX - 6);
	lk_ranges_sub(&s, 0, 10000);
	assert_true(lk_ranges_empty(&s));
}

static void too_many_pieces(void **state)
{
	struct lk_ranges s = { 0 };

	(void)state;
	for (uint64_t i = 0; i <= LK_RANGES_MAX; i++)
		lk_ranges_add(&s, i * 100, i * 100 + 10);
	assert_true(s.lost);
	for (uint64_t i = 0; i <= LK_RANGES_MAX; i++)
		lk_ranges_sub(&s, i * 100, i * 100 + 10);
	assert_false(lk_ranges_empty(&s)); /* unknown: kept */
	lk_ranges_sub(&s, 0, LK_RANGE_EOF);
	assert_true(lk_ranges_empty(&s));
	/* a split that needs a slot more than there is */
	for (uint64_t i = 0; i < LK_RANGES_MAX; i++)
		lk_ranges_add(&s, i * 100, i * 100 + 10);
	lk_ranges_sub(&s, 3, 4);
	assert_true(s.lost);
}

static void kernel_ends(void **state)
{
	(void)state;
	assert_int_equal(lk_range_end(10, 0), LK_RANGE_EOF);
	assert_int_equal(lk_range_end(10, 5), 15);
	assert_int_equal(lk_range_end(0, (uint64_t)INT64_MAX), (uint64_t)INT64_MAX);
	assert_int_equal(lk_range_end(1, (uint64_t)INT64_MAX), LK_RANGE_EOF);
	assert_int_equal(lk_range_end(UINT64_MAX - 1, 1), LK_RANGE_EOF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(successive_pairs),
		cmocka_unit_test(merge_and_split),
		cmocka_unit_test(one_unlock_covers_many),
		cmocka_unit_test(too_many_pieces),
		cmocka_unit_test(kernel_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
