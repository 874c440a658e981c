/*
 * test_core_workers.c - the worker pool: every item runs once
 * on a worker thread, done() runs once on the loop thread, items run in
 * parallel, workers_stop() finishes what is queued and delivers completions;
 * workers_stop_within() does the same when the workers finish in time and
 * otherwise returns after its wait with the stuck workers left running;
 * workers_usage() counts the threads and their busy time, and
 * loop_busy_seconds() the loop thread's CPU time while it runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
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

/* After test_parallel: 8 items that each waited for all four threads (up to 5 s) ran. */
static void test_usage(void **state)
{
	struct workers_usage u;
	double t0 = loop_busy_seconds(lp);

	(void)state;
	workers_usage(&u);
	assert_int_equal(u.threads, POOL_THREADS);
	assert_int_equal(u.busy, 0);
	assert_int_equal(u.queued, 0);
	assert_true(u.busy_ns > 0);
	/* The running loop's thread has used some CPU, and the clock never goes back. */
	assert_true(t0 > 0);
	assert_true(loop_busy_seconds(lp) >= t0);
	assert_true(loop_busy_seconds(NULL) == 0);
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

static void test_stop_within_in_time(void **state)
{
	(void)state;
	struct loop *l = loop_new();
	assert_int_equal(workers_start(l, 2), 0);
	submit_all(20, 1000);
	assert_int_equal(workers_stop_within(5), 0); /* all finished: as workers_stop() */
	assert_int_equal(done_count, 20);
	assert_int_equal(workers_pending(), 0);
	assert_int_equal(workers_start(l, 1), 0); /* restartable */
	workers_stop();
	loop_free(l);
}

/* An item that never returns until released: a call stuck inside a backend. */
static pthread_mutex_t stuck_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stuck_cv = PTHREAD_COND_INITIALIZER;
static bool stuck_hold = true, stuck_left;
static struct work stuck_w;

static void stuck_run(struct work *w)
{
	(void)w;
	pthread_mutex_lock(&stuck_lock);
	while (stuck_hold)
		pthread_cond_wait(&stuck_cv, &stuck_lock);
	stuck_left = true;
	pthread_mutex_unlock(&stuck_lock);
}

static void stuck_describe(const struct work *w, char *buf, size_t len)
{
	(void)w;
	snprintf(buf, len, "the stuck item");
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Last: the pool is left started (its stuck worker detached), as at the daemon's exit. */
static void test_stop_within_stuck(void **state)
{
	(void)state;
	lp = loop_new(); /* kept (the pool's wake event stays in it): not freed */
	assert_int_equal(workers_start(lp, 3), 0);
	stuck_w.run = stuck_run;
	stuck_w.done = item_done;
	stuck_w.describe = stuck_describe;
	workers_submit(&stuck_w);
	submit_all(30, 1000);
	double t = mono_s();
	assert_int_equal(workers_stop_within(1), 1);
	t = mono_s() - t;
	assert_true(t >= 0.95 && t < 3.0);
	for (unsigned i = 0; i < 30; i++)
		assert_int_equal(items[i].runs, 1); /* the free workers ran the queue */
	/* the stuck worker was not joined: it finishes later on its own, nothing freed under it */
	pthread_mutex_lock(&stuck_lock);
	stuck_hold = false;
	pthread_cond_broadcast(&stuck_cv);
	pthread_mutex_unlock(&stuck_lock);
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&stuck_lock);
		bool left = stuck_left;
		pthread_mutex_unlock(&stuck_lock);
		if (left)
			break;
		usleep(1000);
	}
	assert_true(stuck_left);
	usleep(50000); /* its completion hand-off, on the pool that stayed allocated */
}

int main(void)
{
	log_init(true, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_and_done_once),
		cmocka_unit_test(test_parallel),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_stop_finishes_queue),
		cmocka_unit_test(test_bad_counts),
		cmocka_unit_test(test_stop_within_in_time),
		cmocka_unit_test(test_stop_within_stuck),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
