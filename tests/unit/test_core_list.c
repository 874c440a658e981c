/*
 * test_core_list.c - core/list.h, the intrusive doubly linked list: an empty
 * head, insertion at the front and the back, removal from the front, the
 * middle and the back (the removed link points at itself), the walks (the
 * _safe one removing as it goes), and many removals and insertions in a
 * pseudo-random order checked against a plain array of flags.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/list.h"

struct item {
	int v;
	struct list_link link;
};

/* The values along the list, front to back, into out (at most max); how many. */
static unsigned values(const struct list_link *head, int *out, unsigned max)
{
	unsigned n = 0;

	list_foreach_entry(it, head, struct item, link) {
		assert_true(n < max);
		out[n++] = it->v;
	}
	return n;
}

/* Every link's neighbours point back at it. */
static void assert_ring(const struct list_link *head)
{
	const struct list_link *l = head;

	do {
		assert_ptr_equal(l->next->prev, l);
		assert_ptr_equal(l->prev->next, l);
		l = l->next;
	} while (l != head);
}

static void test_empty(void **state)
{
	struct list_link head = LIST_INIT(head);
	int v[1];

	(void)state;
	assert_true(list_empty(&head));
	assert_null(list_first(&head));
	assert_null(list_first_entry(&head, struct item, link));
	assert_int_equal(values(&head, v, 1), 0);
	list_init(&head);
	assert_true(list_empty(&head));
	assert_ring(&head);
}

static void test_insert_remove(void **state)
{
	struct list_link head;
	struct item it[4] = { { .v = 0 }, { .v = 1 }, { .v = 2 }, { .v = 3 } };
	int v[4];

	(void)state;
	list_init(&head);
	list_insert(&head, &it[1].link);      /* 1 */
	list_insert(&head, &it[0].link);      /* 0 1 */
	list_insert_tail(&head, &it[3].link); /* 0 1 3 */
	list_insert(&it[1].link, &it[2].link); /* 0 1 2 3 */
	assert_int_equal(values(&head, v, 4), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(v[i], i);
	assert_ring(&head);
	assert_ptr_equal(list_first_entry(&head, struct item, link), &it[0]);
	assert_ptr_equal(list_next_entry(&head, &it[2], struct item, link), &it[3]);
	assert_null(list_next_entry(&head, &it[3], struct item, link));
	/* The middle, the front, the back: each O(1), each link then its own ring. */
	list_remove(&it[2].link);
	assert_ptr_equal(it[2].link.next, &it[2].link);
	assert_ptr_equal(it[2].link.prev, &it[2].link);
	list_remove(&it[0].link);
	list_remove(&it[3].link);
	assert_int_equal(values(&head, v, 4), 1);
	assert_int_equal(v[0], 1);
	assert_ring(&head);
	list_remove(&it[1].link);
	assert_true(list_empty(&head));
	assert_ring(&head);
}

static void test_foreach_safe(void **state)
{
	struct list_link head = LIST_INIT(head);
	struct item it[8];
	unsigned seen = 0;
	int v[8];

	(void)state;
	for (int i = 0; i < 8; i++) {
		it[i].v = i;
		list_insert_tail(&head, &it[i].link);
	}
	/* Remove the odd ones while walking, then all the rest. */
	list_foreach_entry_safe(x, n, &head, struct item, link) {
		if (x->v % 2)
			list_remove(&x->link);
	}
	assert_int_equal(values(&head, v, 8), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(v[i], 2 * i);
	list_foreach_entry_safe(x, n, &head, struct item, link) {
		list_remove(&x->link);
		seen++;
	}
	assert_int_equal(seen, 4);
	assert_true(list_empty(&head));
}

/* Thousands of removals and insertions in a pseudo-random order: the list
 * always holds exactly the elements the array says, and ends empty. */
static void test_churn(void **state)
{
	enum { N = 64, ROUNDS = 20000 };
	struct list_link head = LIST_INIT(head);
	struct item it[N];
	bool on[N] = { false };
	uint32_t x = 12345;
	unsigned count = 0;

	(void)state;
	for (int i = 0; i < N; i++)
		it[i].v = i;
	for (unsigned r = 0; r < ROUNDS; r++) {
		unsigned i;

		x = x * 1103515245u + 12345u;
		i = (x >> 16) % N;
		if (on[i])
			list_remove(&it[i].link), count--;
		else if (x & 0x100)
			list_insert(&head, &it[i].link), count++;
		else
			list_insert_tail(&head, &it[i].link), count++;
		on[i] = !on[i];
		if (r % 1000 == 0) {
			unsigned n = 0;

			assert_ring(&head);
			list_foreach_entry(e, &head, struct item, link) {
				assert_true(on[e->v]);
				n++;
			}
			assert_int_equal(n, count);
		}
	}
	while (!list_empty(&head))
		list_remove(list_first(&head));
	assert_ring(&head);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_insert_remove),
		cmocka_unit_test(test_foreach_safe),
		cmocka_unit_test(test_churn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
