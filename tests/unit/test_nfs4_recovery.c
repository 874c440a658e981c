/*
 * test_nfs4_recovery.c - NFSv4 restart recovery (nfs/v4/recovery/nfs4_recovery.c)
 * and the shared grace clock (core/grace.c), with injected time: the record
 * file's parsing (torn and hostile records), no previous clients -> no
 * grace, GRACE for new state during grace, NO_GRACE for unknown clients,
 * after RECLAIM_COMPLETE and after the term, the early end when every
 * previous client completed, NLM's term keeping the server in grace, and a
 * restart through a real file in a temporary state directory; the table
 * sized from max-clients and no record (so no confirmation) when the file
 * cannot be written (issue 24 #7).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/recovery/nfs4_recovery.h"
#include "nfs/v4/compound/nfs4_stats.h"

#define A(s) (const uint8_t *)(s), (uint32_t)strlen(s)

static struct grace_clock clk;
static struct nfs4_recovery rec;

static int setup(void **state)
{
	(void)state;
	memset(&clk, 0, sizeof(clk));
	nfs4_rec_init(&rec, &clk);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nfs4_rec_release(&rec);
	return 0;
}

/* A file image: the magic and records "Aid" / "Did". */
static size_t image(uint8_t *out, const char *const *recs, unsigned n)
{
	size_t off = 8;

	memcpy(out, NFS4_REC_MAGIC, 8);
	for (unsigned i = 0; i < n; i++) {
		size_t l = strlen(recs[i]) - 1;
		out[off] = (uint8_t)recs[i][0];
		out[off + 1] = (uint8_t)(l >> 8);
		out[off + 2] = (uint8_t)l;
		memcpy(out + off + 3, recs[i] + 1, l);
		off += 3 + l;
	}
	return off;
}

static void test_parse(void **state)
{
	const char *recs[] = { "Aalpha", "Abeta", "Agamma", "Dbeta", "Aalpha" };
	uint8_t buf[256];
	size_t len = image(buf, recs, 5);

	(void)state;
	assert_int_equal(nfs4_rec_parse(&rec, buf, 7), -1); /* no magic */
	assert_int_equal(nfs4_rec_parse(&rec, buf, len), 2); /* alpha, gamma */
	nfs4_rec_release(&rec);
	nfs4_rec_init(&rec, &clk);
	/* A torn last record (crash in an append) is ignored, the rest kept. */
	assert_int_equal(nfs4_rec_parse(&rec, buf, len - 2), 2); /* alpha, gamma; beta deleted */
	nfs4_rec_release(&rec);
	nfs4_rec_init(&rec, &clk);
	assert_int_equal(nfs4_rec_parse(&rec, buf, 8 + 3 + 5 + 3 + 4 + 2), 2); /* alpha, beta; gamma torn */
	/* Hostile: a length beyond the id limit, zero, an unknown op: parsing stops there. */
	nfs4_rec_release(&rec);
	nfs4_rec_init(&rec, &clk);
	memcpy(buf, NFS4_REC_MAGIC, 8);
	buf[8] = 'A', buf[9] = 0xff, buf[10] = 0xff;
	assert_int_equal(nfs4_rec_parse(&rec, buf, 8 + 3 + 200), 0);
	buf[9] = 0, buf[10] = 0;
	assert_int_equal(nfs4_rec_parse(&rec, buf, 8 + 3), 0);
	buf[8] = 'X', buf[10] = 1;
	assert_int_equal(nfs4_rec_parse(&rec, buf, 8 + 4), 0);
}

/* No client of a previous boot: no NFSv4 grace at all; reclaims are NO_GRACE. */
static void test_no_previous_clients(void **state)
{
	(void)state;
	assert_int_equal(nfs4_rec_start(&rec, 1000, 90), 0);
	assert_false(grace_clock_active(&clk, 1000));
	assert_false(nfs4_rec_in_grace(&rec, 1000));
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_OPEN, A("new"), false, 1000), NFS4_OK);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_LOCK, A("new"), false, 1000), NFS4_OK);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_OPEN, A("new"), true, 1000), NFS4ERR_NO_GRACE);
}

static void start_with(const char *const *recs, unsigned n, unsigned grace_s)
{
	uint8_t buf[512];

	assert_int_equal(nfs4_rec_parse(&rec, buf, image(buf, recs, n)), (int)n);
	assert_int_equal(nfs4_rec_start(&rec, 1000, grace_s), grace_s);
}

static void test_grace_rules(void **state)
{
	const char *recs[] = { "Aold1", "Aold2" };

	(void)state;
	start_with(recs, 2, 90);
	assert_true(grace_clock_active(&clk, 1000));
	/* RFC 8881 §8.4.2: new state and conflicting changes wait. */
	for (int op = 0; op < NFS4_GRACE_OPS; op++)
		assert_int_equal(nfs4_rec_grace_check(&rec, op, A("old1"), false, 2000), NFS4ERR_GRACE);
	/* ... reclaims by previous clients pass, by others NO_GRACE (§8.4.2.1). */
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_OPEN, A("old1"), true, 2000), NFS4_OK);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_LOCK, A("old2"), true, 2000), NFS4_OK);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_OPEN, A("stranger"), true, 2000), NFS4ERR_NO_GRACE);
	/* A new client confirmed in grace is recorded but cannot reclaim. */
	assert_int_equal(nfs4_rec_confirm(&rec, A("stranger"), 2000), 0);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_LOCK, A("stranger"), true, 2000), NFS4ERR_NO_GRACE);
	/* LOCKT, REMOVE... have no reclaim form: GRACE, whatever the flag. */
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_LOCKT, A("old1"), true, 2000), NFS4ERR_GRACE);
	/* After its RECLAIM_COMPLETE a client's reclaims are NO_GRACE (§18.51.3), its new state still GRACE. */
	nfs4_rec_confirm(&rec, A("old1"), 2000);
	nfs4_rec_reclaim_complete(&rec, A("old1"), 3000);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_OPEN, A("old1"), true, 3000), NFS4ERR_NO_GRACE);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_OPEN, A("old1"), false, 3000), NFS4ERR_GRACE);
	/* The term elapses: reclaims NO_GRACE, new state OK, old2 (never back) dropped. */
	assert_true(nfs4_rec_in_grace(&rec, 90999));
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_LOCK, A("old2"), true, 91000), NFS4ERR_NO_GRACE);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_OPEN, A("old2"), false, 91000), NFS4_OK);
	assert_false(nfs4_rec_in_grace(&rec, 91000));
	assert_int_equal(rec.n, 2); /* old1 and stranger, confirmed in this boot */
	assert_int_equal(rec.counts[0], 2);
}

/* RFC 8881 §8.4.2: ended early when every previous client sent RECLAIM_COMPLETE. */
static void test_early_end(void **state)
{
	const char *recs[] = { "Aold1", "Aold2" };

	(void)state;
	start_with(recs, 2, 90);
	nfs4_rec_confirm(&rec, A("old1"), 2000);
	nfs4_rec_reclaim_complete(&rec, A("old1"), 2000);
	nfs4_rec_reclaim_complete(&rec, A("new"), 2000); /* not a previous client: no effect */
	assert_true(grace_clock_active(&clk, 2000));
	/* old2 destroyed instead of completing: nobody left to wait for. */
	nfs4_rec_forget(&rec, A("old2"), 2500);
	assert_false(grace_clock_active(&clk, 2500));
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_OPEN, A("x"), false, 2500), NFS4_OK);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_OPEN, A("old1"), true, 2500), NFS4ERR_NO_GRACE);
}

/* NLM's term keeps the server in grace after NFSv4's ended (core/grace.h). */
static void test_shared_clock(void **state)
{
	const char *recs[] = { "Aold1" };

	(void)state;
	grace_clock_hold(&clk, GRACE_NLM, 1000, 30);
	start_with(recs, 1, 10);
	assert_int_equal(grace_clock_left_ms(&clk, 1000), 30000);
	nfs4_rec_confirm(&rec, A("old1"), 1500);
	nfs4_rec_reclaim_complete(&rec, A("old1"), 1500);
	assert_false(grace_clock_held(&clk, GRACE_NFS4, 1500));
	assert_true(grace_clock_active(&clk, 1500));
	/* New NFSv4 state waits for NLM's reclaims; NFSv4 reclaims are over. */
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_LOCK, A("y"), false, 1500), NFS4ERR_GRACE);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_LOCK, A("old1"), true, 1500), NFS4ERR_NO_GRACE);
	assert_int_equal(nfs4_rec_grace_check(&rec, NFS4_GRACE_LOCK, A("y"), false, 31000), NFS4_OK);
	grace_clock_hold(&clk, GRACE_NLM, 1000, 0);
	assert_false(grace_clock_active(&clk, 1000));
}

static void test_bounds(void **state)
{
	uint8_t id[NFS4_REC_ID_MAX + 1];
	char name[16];

	(void)state;
	memset(id, 'i', sizeof(id));
	assert_int_equal(nfs4_rec_confirm(&rec, id, NFS4_REC_ID_MAX + 1, 0), -1);
	assert_int_equal(nfs4_rec_confirm(&rec, id, 0, 0), -1);
	assert_int_equal(nfs4_rec_confirm(&rec, id, NFS4_REC_ID_MAX, 0), 0);
	for (unsigned i = 1; i < NFS4_REC_MAX; i++) {
		snprintf(name, sizeof(name), "c%u", i);
		assert_int_equal(nfs4_rec_confirm(&rec, A(name), 0), 0);
	}
	assert_int_equal(nfs4_rec_confirm(&rec, A("one-too-many"), 0), -1);
	assert_int_equal(nfs4_rec_confirm(&rec, A("c5"), 0), 0); /* already there */
	nfs4_rec_forget(&rec, A("c5"), 0);
	assert_int_equal(nfs4_rec_confirm(&rec, A("one-too-many"), 0), 0);
}

/* Through the file: a client confirmed in one boot may reclaim in the next; one destroyed may not. */
static void test_restart_file(void **state)
{
	char dir[] = "/var/tmp/test_nfs4_recovery.XXXXXX", path[PATH_MAX];
	struct stat sb;

	(void)state;
	nfs4_rec_release(&rec);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(nfs4_recovery_start(dir, 90), 0); /* first boot: nothing recorded */
	nfs4_client_stable(A("kept"));
	nfs4_client_stable(A("kept"));
	nfs4_client_stable(A("destroyed"));
	nfs4_client_gone(A("destroyed"));
	nfs4_recovery_stop();
	assert_int_equal(nfs4_recovery_start(dir, 90), 90); /* second boot: "kept" */
	assert_int_equal(nfs4_grace_check(NFS4_GRACE_OPEN, A("kept"), true), NFS4_OK);
	assert_int_equal(nfs4_grace_check(NFS4_GRACE_OPEN, A("destroyed"), true), NFS4ERR_NO_GRACE);
	assert_int_equal(nfs4_grace_check(NFS4_GRACE_LOCK, A("kept"), false), NFS4ERR_GRACE);
	/* A crash in grace before "kept" came back: still recorded in the third boot. */
	nfs4_recovery_stop();
	assert_int_equal(nfs4_recovery_start(dir, 90), 90);
	nfs4_client_stable(A("kept"));
	nfs4_client_reclaimed(A("kept"));
	assert_int_equal(nfs4_grace_check(NFS4_GRACE_LOCK, A("kept"), false), NFS4_OK); /* ended early */
	snprintf(path, sizeof(path), "%s/%s", dir, NFS4_REC_FILE);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_size, 8 + 3 + 4);
	assert_int_equal(sb.st_mode & 0777, 0600);
	nfs4_recovery_stop();
	unlink(path);
	rmdir(dir);
	nfs4_rec_init(&rec, &clk);
}

/* Issue 24 #7: the table holds every client of a full client table of this boot beside as many of
 * the previous boot (the default ceiling too: 4096 + 4096), the previous boot's excess is dropped at
 * load, and a record that cannot be written is refused (the client is then not confirmed). */
static void test_sized_from_max_clients(void **state)
{
	uint8_t img[8 + 40 * 8];
	const char *prev[40];
	char names[40][8], name[16];

	(void)state;
	assert_int_equal(rec.max, NFS4_REC_MAX);
	assert_true(NFS4_REC_MAX >= 2 * 4096);
	nfs4_rec_set_max(&rec, 16);
	assert_int_equal(rec.max, 32);
	for (unsigned i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "Ap%u", i);
		prev[i] = names[i];
	}
	/* 40 previous clients recorded by a boot with a larger table: 16 are kept. */
	assert_int_equal(nfs4_rec_parse(&rec, img, image(img, prev, 40)), 16);
	assert_int_equal(nfs4_rec_start(&rec, 0, 90), 90);
	/* 16 clients of this boot all fit beside them. */
	for (unsigned i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		assert_int_equal(nfs4_rec_confirm(&rec, A(name), 0), 0);
	}
	assert_int_equal(rec.n, 32);
	assert_int_equal(nfs4_rec_confirm(&rec, A("n16"), 0), -1);
	/* A previous client coming back uses its own record. */
	assert_int_equal(nfs4_rec_confirm(&rec, A("p3"), 0), 0);
	nfs4_rec_set_max(&rec, 0);
	assert_int_equal(rec.max, NFS4_REC_MAX);
}

static void test_unwritable_refuses(void **state)
{
	char dir[] = "/var/tmp/test_nfs4_recovery.XXXXXX", path[PATH_MAX];

	(void)state;
	nfs4_rec_release(&rec);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, NFS4_REC_FILE);
	assert_int_equal(mkdir(path, 0700), 0); /* the file's name taken by a directory: never writable */
	assert_int_equal(nfs4_recovery_start(dir, 90), 0);
	assert_int_equal(nfs4_client_stable(A("c1")), -1);
	assert_int_equal(nfs4_grace_check(NFS4_GRACE_OPEN, A("c1"), false), NFS4_OK);
	assert_int_equal(nfs4_recovery_server()->n, 0);
	/* Writable again: a confirmation within the second still fails (no rewrite per refused client),
	 * the next one a second later rewrites the file and is recorded. */
	assert_int_equal(rmdir(path), 0);
	{
		struct nfs4_recovery *r = nfs4_recovery_server();
		uint64_t t = r->retry_ms;
		assert_int_equal(nfs4_rec_confirm(r, A("c1"), t - 1), -1);
		assert_int_equal(nfs4_rec_confirm(r, A("c1"), t), 0);
		assert_int_equal(r->n, 1);
	}
	nfs4_recovery_stop();
	assert_int_equal(nfs4_recovery_start(dir, 90), 90); /* recorded: it may reclaim */
	assert_int_equal(nfs4_grace_check(NFS4_GRACE_OPEN, A("c1"), true), NFS4_OK);
	nfs4_recovery_stop();
	unlink(path);
	rmdir(dir);
	nfs4_rec_init(&rec, &clk);
}

/* nfs4_stats.c: per-operation counters (unknown numbers as ILLEGAL), gauges, the state snapshot. */
static unsigned seen;
static void count_cb(const struct stats_proc *p, void *arg)
{
	(void)arg;
	seen++;
	if (!strcmp(p->proc, "OPEN")) {
		assert_int_equal(p->calls, 2);
		assert_int_equal(p->errors, 1);
		assert_int_equal(p->latency_ns_total, 3000);
		assert_int_equal(p->vers, 4);
	} else {
		assert_string_equal(p->proc, "ILLEGAL");
		assert_int_equal(p->calls, 2);
	}
}

static void test_stats(void **state)
{
	struct nfs4_stats_snap n;

	(void)state;
	nfs4_stats_reset();
	nfs4_stats_op(OP_OPEN, NFS4_OK, 1000);
	nfs4_stats_op(OP_OPEN, NFS4ERR_GRACE, 2000);
	nfs4_stats_op(OP_ILLEGAL, NFS4ERR_OP_ILLEGAL, 10);
	nfs4_stats_op(2, NFS4ERR_OP_ILLEGAL, 10); /* no operation 2 */
	nfs4_stats_ops_foreach(count_cb, NULL);
	assert_int_equal(seen, 2);
	nfs4_stats_state(&n); /* no server served: no state */
	assert_int_equal(n.opens, 0);
	assert_int_equal(n.locks, 0);
	assert_int_equal(n.clients, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_previous_clients, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grace_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_early_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_clock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sized_from_max_clients, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable_refuses, setup, teardown),
		cmocka_unit_test(test_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
