/*
 * test_nfs4_deleg_lease.c - the leases of delegated files as NFSv4 keeps
 * them (nfs/v4/ops/nfs4_deleg_watch.c), over a fake backend that records
 * its calls (no kernel):
 *  - a read delegation takes a read lease; a second one of the file reuses
 *    it; a write delegation after the file's read delegations are gone
 *    releases the read lease and takes a write one; a write lease serves a
 *    later read delegation;
 *  - a lease refused (EAGAIN) is the grant's error; a backend without
 *    leases (the ceph driver: lease_set NULL) keeps the watch alone;
 *  - a lease break (be_lease_broken(lid)) recalls the file's delegations
 *    (the broken hook with its key, changed without one); an unknown lid
 *    recalls nothing;
 *  - the sweep releases the leases of files no longer delegated, and only
 *    those; the gauge counts the leases held.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "nfs/v4/nfs4.h"

/* The fake backend: watches always succeed (wd = 10 + the file's tag);
 * leases as lease_err says, lid = the next number; what it was asked. */
static int lease_err, next_lid, leases_set, leases_unset, last_unset = -1;
static bool last_write;

static int f_watch(struct be_fs *fs, const struct be_obj *o, unsigned kind, int *wd)
{
	(void)fs, (void)kind;
	*wd = 10 + (int)o->h;
	return 0;
}

static int f_unwatch(int wd)
{
	(void)wd;
	return 0;
}

static int f_lease_set(struct be_fs *fs, struct be_file *f, bool write, int *lid)
{
	(void)fs, (void)f;
	if (lease_err)
		return lease_err;
	leases_set++;
	last_write = write;
	*lid = next_lid++;
	return 0;
}

static int f_lease_unset(int lid)
{
	leases_unset++;
	last_unset = lid;
	return 0;
}

static const struct be_ops fake_ops = { .watch = f_watch, .unwatch = f_unwatch, .lease_set = f_lease_set,
					.lease_unset = f_lease_unset };
static const struct be_ops nolease_ops = { .watch = f_watch, .unwatch = f_unwatch };

/* The delegations' answers: which files are delegated; which were recalled. */
static bool held_a, held_b;
static char recalled[16];

static bool h_held(const uint8_t *fkey, uint32_t len)
{
	(void)len;
	return fkey[0] == 'a' ? held_a : held_b;
}

static void h_changed(const uint8_t *fkey, uint32_t len)
{
	(void)len;
	strncat(recalled, (const char *)fkey, 1);
}

/* A lease break is told apart (its recall gets a deadline: nfs4_proc_deleg.c). */
static void h_broken(const uint8_t *fkey, uint32_t len)
{
	(void)len;
	strcat(recalled, "!");
	strncat(recalled, (const char *)fkey, 1);
}

static const struct nfs4_deleg_watch_hooks hooks = { .held = h_held, .changed = h_changed };
static const struct nfs4_deleg_watch_hooks hooks_broken = { .held = h_held, .changed = h_changed, .broken = h_broken };

static void test_leases(void **state)
{
	struct be_fs fs = { .ops = &fake_ops }, nol = { .ops = &nolease_ops };
	struct be_obj a = { .h = 1 }, b = { .h = 2 }, c = { .h = 3 };
	struct be_file *f = (struct be_file *)&fs; /* never looked into by NFSv4 */

	(void)state;
	nfs4_deleg_watch_hooks(&hooks);
	/* a read delegation of a, then another: one read lease */
	held_a = true;
	assert_int_equal(nfs4_deleg_watch(&fs, &a, f, (const uint8_t *)"a", 1, false), 0);
	assert_int_equal(leases_set, 1);
	assert_false(last_write);
	assert_int_equal(nfs4_deleg_watch(&fs, &a, f, (const uint8_t *)"a", 1, false), 0);
	assert_int_equal(leases_set, 1);
	assert_int_equal(nfs4_deleg_watch_leases(), 1);
	/* b refused: the error is the grant's; no lease counted */
	lease_err = EAGAIN;
	held_b = true;
	assert_int_equal(nfs4_deleg_watch(&fs, &b, f, (const uint8_t *)"b", 1, true), EAGAIN);
	assert_int_equal(nfs4_deleg_watch(&fs, &b, NULL, (const uint8_t *)"b", 1, true), EAGAIN);
	lease_err = 0;
	assert_int_equal(nfs4_deleg_watch(&fs, &b, NULL, (const uint8_t *)"b", 1, false), EAGAIN); /* no file */
	assert_int_equal(nfs4_deleg_watch_leases(), 1);
	/* no leases in the backend: the watch alone */
	assert_int_equal(nfs4_deleg_watch(&nol, &c, f, (const uint8_t *)"c", 1, true), 0);
	assert_int_equal(nfs4_deleg_watch_leases(), 1);
	/* a's lease broken: a recalled; an unknown lid: nothing */
	be_lease_broken(0);
	be_lease_broken(77);
	assert_string_equal(recalled, "a");
	nfs4_deleg_watch_hooks(&hooks_broken); /* with a broken hook: that one, not changed */
	be_lease_broken(0);
	assert_string_equal(recalled, "a!a");
	nfs4_deleg_watch_hooks(&hooks);
	/* the sweep: only a file left without delegations loses its lease */
	nfs4_deleg_watch_sweep();
	assert_int_equal(leases_unset, 0);
	held_a = false;
	nfs4_deleg_watch_sweep();
	assert_int_equal(leases_unset, 1);
	assert_int_equal(last_unset, 0);
	assert_int_equal(nfs4_deleg_watch_leases(), 0);
	/* a write delegation of a: a write lease; a later read one reuses it */
	held_a = true;
	assert_int_equal(nfs4_deleg_watch(&fs, &a, f, (const uint8_t *)"a", 1, true), 0);
	assert_int_equal(leases_set, 2);
	assert_true(last_write);
	assert_int_equal(nfs4_deleg_watch(&fs, &a, f, (const uint8_t *)"a", 1, false), 0);
	assert_int_equal(leases_set, 2);
	/* a read lease left (not yet swept) before a write delegation: released, retaken */
	held_a = false;
	nfs4_deleg_watch_sweep();
	held_a = true;
	assert_int_equal(nfs4_deleg_watch(&fs, &a, f, (const uint8_t *)"a", 1, false), 0);
	assert_int_equal(nfs4_deleg_watch(&fs, &a, f, (const uint8_t *)"a", 1, true), 0);
	assert_int_equal(leases_set, 4);
	assert_int_equal(leases_unset, 3);
	assert_true(last_write);
	assert_int_equal(nfs4_deleg_watch_leases(), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
