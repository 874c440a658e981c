/*
 * test_rpc_defer.c - call deferral (rpc_call_defer, rpc_call_resume) through
 * rpc_call_receive() with the real worker pool and loop: parked calls hold
 * no worker (more parked calls than workers, other calls still answered),
 * are answered later from another thread with the encode step's results, keep
 * their duplicate request cache slot (a retransmission while parked is
 * dropped, one after the answer is replayed), a resume racing with the
 * execute step, and a parked call whose connection closes (cancel callback,
 * no reply, cache slot forgotten), also when it closed before the park or
 * while the call was being parked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "rpc/rpc_stats.h"
#include "tests/unit/rpc_test_prog.h"
#include "tests/unit/rpc_test_harness.h"

#define DPROG 0x20000097u
#define NWORKERS 3 /* th_setup() */
#define NPARK 6    /* more parked calls than workers */

enum { DPROC_PARK = 1, DPROC_PARK_EARLY = 2, DPROC_PARK_CLOSE = 3 };

/* The parked calls, as an upper layer (a lock manager) would keep them. */
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rpc_call *parked[16];
static unsigned n_parked, n_cancelled, n_executed;

static void park_cancel(struct rpc_call *c, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&park_lock);
	for (unsigned i = 0; i < n_parked; i++)
		if (parked[i] == c) {
			parked[i] = parked[--n_parked];
			break;
		}
	n_cancelled++;
	pthread_mutex_unlock(&park_lock);
}

struct dres {
	uint32_t value;
};

static bool dp_decode(struct rpc_call *c, void *args)
{
	return xdr_dec_u32(&c->args, args);
}

static enum rpc_proc_status dp_park(struct rpc_call *c, void *args, void *res)
{
	(void)res;
	(void)args;
	pthread_mutex_lock(&park_lock);
	n_executed++;
	rpc_call_defer(c, park_cancel, NULL);
	parked[n_parked++] = c;
	pthread_mutex_unlock(&park_lock);
	return RPC_PROC_DEFER;
}

/* Resumed by "another thread" before execute even returned. */
static enum rpc_proc_status dp_park_early(struct rpc_call *c, void *args, void *res)
{
	struct dres *r = res;
	rpc_call_defer(c, park_cancel, NULL);
	r->value = *(uint32_t *)args + 1000;
	assert_true(rpc_call_resume(c, RPC_PROC_OK));
	return RPC_PROC_DEFER;
}

/* The connection closes between the park and the end of execute (the loop
 * thread's close path racing with this worker). */
static enum rpc_proc_status dp_park_close(struct rpc_call *c, void *args, void *res)
{
	enum rpc_proc_status st = dp_park(c, args, res);
	rpc_conn_closed(c->conn);
	return st;
}

static void dp_encode(struct rpc_call *c, const void *res)
{
	xdr_enc_u32(&c->res, ((const struct dres *)res)->value);
}

static const struct rpc_proc dprog_procs[] = {
	[DPROC_PARK] = {.name = "PARK", .decode = dp_decode, .execute = dp_park, .encode = dp_encode,
			.args_size = 4, .res_size = RPC_SCRATCH_SIZE(struct dres), .cache = RPC_CACHE_DRC},
	[DPROC_PARK_EARLY] = {.name = "PARK_EARLY", .decode = dp_decode, .execute = dp_park_early,
			      .encode = dp_encode, .args_size = 4,
			      .res_size = RPC_SCRATCH_SIZE(struct dres), .cache = RPC_CACHE_NONE},
	[DPROC_PARK_CLOSE] = {.name = "PARK_CLOSE", .decode = dp_decode, .execute = dp_park_close,
			      .encode = dp_encode, .args_size = 4,
			      .res_size = RPC_SCRATCH_SIZE(struct dres), .cache = RPC_CACHE_DRC},
};
static const struct rpc_version dprog_versions[] = {{1, 4, dprog_procs}};
static const struct rpc_program dprog = {DPROG, "dprog", 1, dprog_versions};

static struct tcall tcs[NPARK], tnull;

static void dcall_start(struct tcall *t, struct rpc_conn *conn, uint32_t xid, uint32_t proc, uint32_t arg)
{
	struct tmsg m;
	tmsg_call(&m, xid, DPROG, 1, proc, NULL, 0);
	tmsg_u32(&m, arg);
	tcall_start(t, m.b, m.n);
	(void)conn;
}

static unsigned parked_count(void)
{
	pthread_mutex_lock(&park_lock);
	unsigned n = n_parked;
	pthread_mutex_unlock(&park_lock);
	return n;
}

static bool wait_parked(unsigned n)
{
	for (int i = 0; i < 500 && (parked_count() != n || workers_pending()); i++)
		usleep(10000);
	return parked_count() == n && workers_pending() == 0;
}

/* Another thread answers every parked call with value = arg * 3. */
static void *resumer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&park_lock);
	while (n_parked) {
		struct rpc_call *c = parked[--n_parked];
		((struct dres *)c->res_scratch)->value = *(uint32_t *)c->args_scratch * 3;
		assert_true(rpc_call_resume(c, RPC_PROC_OK));
	}
	pthread_mutex_unlock(&park_lock);
	return NULL;
}

static void test_park_resume(void **state)
{
	(void)state;
	struct rpc_stats_global g0, g1;
	rpc_stats_global_get(&g0);

	for (unsigned i = 0; i < NPARK; i++)
		dcall_start(&tcs[i], &th_conn, 0x500 + i, DPROC_PARK, i + 1);
	/* All parked at once with NWORKERS threads: none holds a worker. */
	assert_true(wait_parked(NPARK));
	for (unsigned i = 0; i < NPARK; i++)
		assert_false(tcs[i].done);
	/* Workers are free for other calls meanwhile. */
	struct tmsg m;
	tmsg_call(&m, 0x600, TPROG, 3, TPROC_NULL, NULL, 0);
	assert_true(tcall_run(&tnull, m.b, m.n));
	assert_true(treply_accepted(&tnull, 0x600, RPC_SUCCESS));
	/* A retransmission of a parked call: in progress in the cache, dropped. */
	dcall_start(&tnull, &th_conn, 0x500, DPROC_PARK, 1);
	assert_true(tcall_wait(&tnull));
	assert_true(tnull.dropped);

	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, resumer, NULL), 0);
	pthread_join(t, NULL);
	for (unsigned i = 0; i < NPARK; i++) {
		assert_true(tcall_wait(&tcs[i]));
		assert_false(tcs[i].dropped);
		assert_true(treply_accepted(&tcs[i], 0x500 + i, RPC_SUCCESS));
		assert_int_equal(tcs[i].out_len, 28);
		assert_int_equal(tget_u32(tcs[i].out, 24), (i + 1) * 3);
	}
	/* After the answer a retransmission is replayed from the cache. */
	unsigned executed = n_executed;
	dcall_start(&tnull, &th_conn, 0x501, DPROC_PARK, 2);
	assert_true(tcall_wait(&tnull));
	assert_true(tnull.from_cache);
	assert_int_equal(tget_u32(tnull.out, 24), 6);
	assert_int_equal(n_executed, executed);
	rpc_stats_global_get(&g1);
	assert_int_equal(g1.drc_in_progress - g0.drc_in_progress, 1);
	assert_int_equal(g1.drc_hit - g0.drc_hit, 1);
	assert_int_equal(g1.handler_drop, g0.handler_drop);
	assert_int_equal(g1.system_err, g0.system_err);
}

static void test_resume_before_execute_returns(void **state)
{
	(void)state;
	for (unsigned i = 0; i < NPARK; i++)
		dcall_start(&tcs[i], &th_conn, 0x700 + i, DPROC_PARK_EARLY, i);
	for (unsigned i = 0; i < NPARK; i++) {
		assert_true(tcall_wait(&tcs[i]));
		assert_true(treply_accepted(&tcs[i], 0x700 + i, RPC_SUCCESS));
		assert_int_equal(tget_u32(tcs[i].out, 24), 1000 + i);
	}
}

/* Parked calls on a connection that closes: cancelled, dropped, cache slot forgotten. */
static void test_conn_closes(void **state)
{
	(void)state;
	struct rpc_stats_global g0, g1;
	rpc_stats_global_get(&g0);
	unsigned cancelled = n_cancelled, executed = n_executed;

	th_conn.closed = false;
	for (unsigned i = 0; i < 3; i++)
		dcall_start(&tcs[i], &th_conn, 0x800 + i, DPROC_PARK, i);
	assert_true(wait_parked(3));
	rpc_conn_closed(&th_conn); /* the transport's close path */
	for (unsigned i = 0; i < 3; i++) {
		assert_true(tcall_wait(&tcs[i]));
		assert_true(tcs[i].dropped);
	}
	assert_int_equal(n_cancelled - cancelled, 3);
	assert_int_equal(parked_count(), 0);
	rpc_stats_global_get(&g1);
	assert_int_equal(g1.handler_drop - g0.handler_drop, 3);

	/* Closed before the park: cancelled as soon as execute returns. */
	dcall_start(&tcs[0], &th_conn, 0x800, DPROC_PARK, 0);
	assert_true(tcall_wait(&tcs[0]));
	assert_true(tcs[0].dropped);
	assert_int_equal(n_cancelled - cancelled, 4);
	/* That retransmission ran the procedure again: the slot had been forgotten. */
	assert_int_equal(n_executed - executed, 4);
	assert_int_equal(parked_count(), 0);

	/* Closed while the call was being parked: cancelled all the same. */
	th_conn.closed = false;
	dcall_start(&tcs[1], &th_conn, 0x900, DPROC_PARK_CLOSE, 0);
	assert_true(tcall_wait(&tcs[1]));
	assert_true(tcs[1].dropped);
	assert_int_equal(n_cancelled - cancelled, 5);
	assert_int_equal(parked_count(), 0);
	th_conn.closed = false;
}

static int setup(void **state)
{
	(void)state;
	if (th_setup(16) != 0)
		return -1;
	atomic_store(&th_conn.refs, 1); /* the "transport's" reference: closing keeps it */
	return rpc_register_program(&dprog);
}

static int teardown(void **state)
{
	(void)state;
	th_teardown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_park_resume),
		cmocka_unit_test(test_resume_before_execute_returns),
		cmocka_unit_test(test_conn_closes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
