/*
 * test_daemon_workers.c - the worker pool: every item runs once
 * on a worker thread, done() runs once on the loop thread, items run in
 * parallel, workers_stop() finishes what is queued and delivers completions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/workers.h"

#define NITEMS 2000

struct item {
	struct work w; /* first */
	unsigned runs;
	unsigned dones;
	pthread_t run_thread;
	pthread_t done_thread;
	unsigned sleep_us;
};

static struct item items[NITEMS];
static unsigned done_count; /* loop thread only */
static struct loop *lp;
static pthread_t loop_thread;
static unsigned running_now, running_max;
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t run_cond = PTHREAD_COND_INITIALIZER;
#define POOL_THREADS 4

static void item_run(struct work *w)
{
	struct item *it = (struct item *)w;
	pthread_mutex_lock(&run_lock);
	if (++running_now > running_max)
		running_max = running_now;
	pthread_cond_broadcast(&run_cond);
	pthread_mutex_unlock(&run_lock);
	it->runs++;
	it->run_thread = pthread_self();
	pthread_mutex_lock(&run_lock);
	if (it->sleep_us) {
		/* stay busy until every pool thread was busy at once, or sleep_us passed
		 * (a loaded machine may start a thread late: no fixed sleep to race) */
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += it->sleep_us / 1000000;
		until.tv_nsec += (long)(it->sleep_us % 1000000) * 1000;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (running_max < POOL_THREADS &&
		       pthread_cond_timedwait(&run_cond, &run_lock, &until) == 0)
			;
	}
	running_now--;
	pthread_mutex_unlock(&run_lock);
}

static void item_done(struct work *w)
{
	struct item *it = (struct item *)w;
	it->dones++;
	it->done_thread = pthread_self();
	__atomic_add_fetch(&done_count, 1, __ATOMIC_SEQ_CST);
}

static void *loop_main(void *arg)
{
	loop_run(arg);
	return NULL;
}

static void submit_all(unsigned n, unsigned sleep_us)
{
	memset(items, 0, sizeof(items));
	__atomic_store_n(&done_count, 0, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < n; i++) {
		items[i].w.run = item_run;
		items[i].w.done = item_done;
		items[i].sleep_us = sleep_us;
		workers_submit(&items[i].w);
	}
}

static void test_run_and_done_once(void **state)
{
	(void)state;
	lp = loop_new();
	assert_non_null(lp);
	assert_int_equal(workers_start(lp, POOL_THREADS), 0);
	assert_int_equal(pthread_create(&loop_thread, NULL, loop_main, lp), 0);

	submit_all(NITEMS, 0);
	for (int i = 0; i < 5000 && __atomic_load_n(&done_count, __ATOMIC_SEQ_CST) < NITEMS; i++)
		usleep(1000);
	assert_int_equal(__atomic_load_n(&done_count, __ATOMIC_SEQ_CST), NITEMS);
	assert_int_equal(workers_pending(), 0);
	for (unsigned i = 0; i < NITEMS; i++) {
		assert_int_equal(items[i].runs, 1);
		assert_int_equal(items[i].dones, 1);
		assert_true(pthread_equal(items[i].done_thread, loop_thread));
		assert_false(pthread_equal(items[i].run_thread, loop_thread));
		assert_false(pthread_equal(items[i].run_thread, pthread_self()));
	}
}

static void test_parallel(void **state)
{
	(void)state;
	running_max = 0;
	submit_all(8, 5000000);
	for (int i = 0; i < 5000 && __atomic_load_n(&done_count, __ATOMIC_SEQ_CST) < 8; i++)
		usleep(1000);
	assert_int_equal(__atomic_load_n(&done_count, __ATOMIC_SEQ_CST), 8);
	assert_int_equal(running_max, POOL_THREADS); /* all four threads busy at once */
}

static void test_stop_finishes_queue(void **state)
{
	(void)state;
	loop_break(lp);
	pthread_join(loop_thread, NULL);
	/* The loop is stopped: completions can only come from workers_stop(). */
	submit_all(40, 2000);
	assert_true(workers_pending() > 0);
	workers_stop();
	assert_int_equal(done_count, 40);
	for (unsigned i = 0; i < 40; i++) {
		assert_int_equal(items[i].runs, 1);
		assert_int_equal(items[i].dones, 1);
		assert_true(pthread_equal(items[i].done_thread, pthread_self()));
	}
	assert_int_equal(workers_pending(), 0);
	loop_free(lp);
}

static void test_bad_counts(void **state)
{
	(void)state;
	struct loop *l = loop_new();
	assert_int_equal(workers_start(l, 0), -1);
	assert_int_equal(workers_start(l, 100000), -1);
	/* Restartable after a stop. */
	assert_int_equal(workers_start(l, 1), 0);
	workers_stop();
	loop_free(l);
}

int main(void)
{
	log_init(true, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_and_done_once),
		cmocka_unit_test(test_parallel),
		cmocka_unit_test(test_stop_finishes_queue),
		cmocka_unit_test(test_bad_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
