/*
 * test_backend_lock_share.c - the locks of the owners sharing one open file
 * description (backend/local/lock_share.c, a write delegation's file):
 * conflicts only between different owners (read-read shares), an owner's
 * lock replaces and merges with its own (split, merge, upgrade, downgrade,
 * unlock of the middle), the bound (ENOLCK, table unchanged), the gaps an
 * unlock leaves, and a randomized run against a per-byte model in which the
 * kernel's description gets only what local_lock.c would do (one set of the
 * locked range, F_UNLCK of the gaps) and must always equal the union.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "backend/local/lock_share.h"

/* The one piece of owner covering off, or NULL. */
static const struct lks_ent *piece(const struct lks_table *t, uint64_t owner, uint64_t off)
{
	for (unsigned i = 0; i < t->n; i++)
		if (t->e[i].owner == owner && t->e[i].start <= off && off < t->e[i].end)
			return &t->e[i];
	return NULL;
}

static void conflicts_between_owners(void **state)
{
	struct lks_table t = { 0 };
	const struct lks_ent *c;

	(void)state;
	assert_int_equal(lks_set(&t, 1, LKS_WRITE, 0, 10), 0);
	assert_int_equal(lks_set(&t, 2, LKS_READ, 20, 30), 0);
	assert_null(lks_conflict(&t, 1, LKS_WRITE, 0, 20)); /* its own lock */
	c = lks_conflict(&t, 2, LKS_READ, 5, 6);
	assert_non_null(c);
	assert_int_equal(c->owner, 1);
	assert_int_equal(c->start, 0);
	assert_int_equal(c->end, 10);
	assert_null(lks_conflict(&t, 3, LKS_READ, 25, 26)); /* read with read */
	assert_non_null(lks_conflict(&t, 3, LKS_WRITE, 29, 40));
	assert_null(lks_conflict(&t, 3, LKS_WRITE, 10, 20)); /* touching is not overlapping */
	assert_true(lks_holds(&t, 1));
	assert_false(lks_holds(&t, 3));
}

static void split_merge_upgrade_downgrade(void **state)
{
	struct lks_table t = { 0 };

	(void)state;
	assert_int_equal(lks_set(&t, 1, LKS_READ, 0, 100), 0);
	assert_int_equal(lks_set(&t, 1, LKS_WRITE, 40, 60), 0); /* upgrade of the middle: three pieces */
	assert_int_equal(t.n, 3);
	assert_int_equal(piece(&t, 1, 50)->type, LKS_WRITE);
	assert_int_equal(piece(&t, 1, 39)->type, LKS_READ);
	assert_int_equal(piece(&t, 1, 60)->end, 100);
	assert_int_equal(lks_set(&t, 1, LKS_READ, 40, 60), 0); /* downgrade: merged back into one */
	assert_int_equal(t.n, 1);
	assert_int_equal(piece(&t, 1, 0)->end, 100);
	assert_int_equal(lks_unset(&t, 1, 10, 20), 0); /* unlock of the middle: split */
	assert_int_equal(t.n, 2);
	assert_null(piece(&t, 1, 15));
	assert_int_equal(lks_set(&t, 1, LKS_READ, 10, 20), 0); /* filled: merged */
	assert_int_equal(t.n, 1);
	assert_int_equal(lks_set(&t, 1, LKS_READ, 100, LK_RANGE_EOF), 0); /* touching, to the end */
	assert_int_equal(t.n, 1);
	assert_int_equal(piece(&t, 1, 0)->end, LK_RANGE_EOF);
	assert_int_equal(lks_unset(&t, 1, 0, LK_RANGE_EOF), 0);
	assert_int_equal(t.n, 0);
	assert_false(lks_holds(&t, 1));
}

static void overlap_with_own_earlier_lock(void **state)
{
	struct lks_table t = { 0 };

	(void)state;
	/* it_nfs4_deleg_locks' case: [0, 10), then [5, 15) by the same owner, then unlock of [0, 15). */
	assert_int_equal(lks_set(&t, 7, LKS_WRITE, 0, 10), 0);
	assert_null(lks_conflict(&t, 7, LKS_WRITE, 5, 15));
	assert_int_equal(lks_set(&t, 7, LKS_WRITE, 5, 15), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(piece(&t, 7, 0)->end, 15);
	assert_int_equal(lks_unset(&t, 7, 0, 15), 0);
	assert_int_equal(t.n, 0);
}

static void bounded(void **state)
{
	struct lks_table t = { 0 }, before;

	(void)state;
	for (unsigned i = 0; i < LKS_MAX; i++)
		assert_int_equal(lks_set(&t, 1 + i % 3, LKS_READ, 10 * i, 10 * i + 5), 0);
	assert_int_equal(t.n, LKS_MAX);
	before = t;
	assert_int_equal(lks_set(&t, 9, LKS_READ, 100000, 100001), ENOLCK);
	assert_int_equal(lks_unset(&t, 1, 1, 2), ENOLCK); /* a split past the bound */
	assert_memory_equal(&t, &before, sizeof(t));
	assert_int_equal(lks_set(&t, 1, LKS_READ, 0, 4), 0); /* within its own piece: still fits */
	assert_int_equal(lks_unset(&t, 1, 0, 5), 0);       /* a piece goes: room again */
	assert_int_equal(lks_set(&t, 9, LKS_READ, 100000, 100001), 0);
}

static void gaps_and_union(void **state)
{
	struct lks_table t = { 0 };
	struct lk_range g[LKS_MAX + 1];
	struct lks_ent u[2 * LKS_MAX];

	(void)state;
	assert_int_equal(lks_set(&t, 1, LKS_READ, 10, 30), 0);
	assert_int_equal(lks_set(&t, 2, LKS_READ, 20, 40), 0);
	assert_int_equal(lks_set(&t, 3, LKS_WRITE, 50, 60), 0);
	assert_int_equal(lks_union(&t, u), 2);
	assert_true(u[0].start == 10 && u[0].end == 40 && u[0].type == LKS_READ);
	assert_true(u[1].start == 50 && u[1].end == 60 && u[1].type == LKS_WRITE);
	/* owner 1 lets go of [10, 30): only [10, 20) is free; owner 2 keeps [20, 30) read */
	assert_int_equal(lks_unset(&t, 1, 10, 30), 0);
	assert_int_equal(lks_gaps(&t, 10, 30, g), 1);
	assert_true(g[0].start == 10 && g[0].end == 20);
	assert_int_equal(lks_gaps(&t, 0, LK_RANGE_EOF, g), 3);
	assert_true(g[1].start == 40 && g[1].end == 50 && g[2].start == 60 && g[2].end == LK_RANGE_EOF);
}

/* ---- randomized, against a per-byte model ---- */

#define R_BYTES 48u
#define R_OWNERS 4u

struct model {
	uint8_t own[R_OWNERS + 1][R_BYTES]; /* per owner (1..R_OWNERS), per byte: LKS_* */
	uint8_t kernel[R_BYTES];            /* the shared description, as local_lock.c drives it */
};

static bool model_conflict(const struct model *m, uint64_t owner, uint8_t type, unsigned s, unsigned e)
{
	for (unsigned o = 1; o <= R_OWNERS; o++)
		for (unsigned b = s; b < e && o != owner; b++)
			if (m->own[o][b] == LKS_WRITE || (m->own[o][b] && type == LKS_WRITE))
				return true;
	return false;
}

/* The table agrees with the model byte by byte, the kernel with the union, lks_union with both. */
static void model_check(const struct lks_table *t, const struct model *m)
{
	struct lks_ent u[2 * LKS_MAX];
	unsigned nu = lks_union(t, u);

	for (unsigned b = 0; b < R_BYTES; b++) {
		uint8_t all = LKS_NONE, from_union = LKS_NONE;

		for (unsigned o = 1; o <= R_OWNERS; o++) {
			const struct lks_ent *p = piece(t, o, b);

			assert_int_equal(p ? p->type : LKS_NONE, m->own[o][b]);
			all = m->own[o][b] > all ? m->own[o][b] : all;
		}
		assert_int_equal(m->kernel[b], all);
		for (unsigned i = 0; i < nu; i++)
			if (u[i].start <= b && b < u[i].end)
				from_union = u[i].type;
		assert_int_equal(from_union, all);
	}
	for (unsigned i = 0; i < t->n; i++) /* an owner's same-type pieces never touch */
		for (unsigned j = 0; j < t->n; j++)
			assert_false(i != j && t->e[i].owner == t->e[j].owner && t->e[i].type == t->e[j].type &&
				     t->e[i].end == t->e[j].start);
}

static void random_step(struct lks_table *t, struct model *m)
{
	uint64_t owner = 1 + (unsigned)rand() % R_OWNERS;
	unsigned s = (unsigned)rand() % R_BYTES, e = s + 1 + (unsigned)rand() % (R_BYTES - s);
	uint8_t type = rand() % 2 ? LKS_WRITE : LKS_READ;
	struct lk_range g[LKS_MAX + 1];

	if (rand() % 3) { /* a lock */
		const struct lks_ent *c = lks_conflict(t, owner, type, s, e);

		assert_int_equal(c != NULL, model_conflict(m, owner, type, s, e));
		if (c) {
			assert_true(c->owner != owner && c->start < e && s < c->end);
			return;
		}
		if (lks_set(t, owner, type, s, e) != 0)
			return; /* bounded: nothing changed (model_check says so) */
		for (unsigned b = s; b < e; b++)
			m->own[owner][b] = type, m->kernel[b] = type; /* one F_OFD_SETLK of [s, e) */
		return;
	}
	if (lks_unset(t, owner, s, e) != 0)
		return;
	for (unsigned b = s; b < e; b++)
		m->own[owner][b] = LKS_NONE;
	for (unsigned i = 0, n = lks_gaps(t, s, e, g); i < n; i++) /* F_UNLCK of each gap */
		for (uint64_t b = g[i].start; b < g[i].end; b++)
			m->kernel[b] = LKS_NONE;
}

static void randomized_against_bytes(void **state)
{
	(void)state;
	srand(26);
	for (unsigned run = 0; run < 200; run++) {
		struct lks_table t = { 0 };
		struct model m = { 0 };

		for (unsigned step = 0; step < 300; step++) {
			random_step(&t, &m);
			model_check(&t, &m);
		}
		for (uint64_t o = 1; o <= R_OWNERS; o++) { /* each owner goes: all released */
			struct lk_range g[LKS_MAX + 1];

			assert_int_equal(lks_unset(&t, o, 0, LK_RANGE_EOF), 0);
			for (unsigned b = 0; b < R_BYTES; b++)
				m.own[o][b] = LKS_NONE;
			for (unsigned i = 0, n = lks_gaps(&t, 0, R_BYTES, g); i < n; i++)
				for (uint64_t b = g[i].start; b < g[i].end; b++)
					m.kernel[b] = LKS_NONE;
			model_check(&t, &m);
		}
		assert_int_equal(t.n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conflicts_between_owners),
		cmocka_unit_test(split_merge_upgrade_downgrade),
		cmocka_unit_test(overlap_with_own_earlier_lock),
		cmocka_unit_test(bounded),
		cmocka_unit_test(gaps_and_union),
		cmocka_unit_test(randomized_against_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
