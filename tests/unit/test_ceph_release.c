/*
 * test_ceph_release.c - the ceph driver's release queue and thread
 * (backend/ceph/ceph_release.c) without Ceph, over a callback that records
 * what it ran and can be made to block (a release stuck inside libcephfs):
 * FIFO order (a put after the close of the same inode), a pusher returning at
 * once while the thread is stuck, the bound of the ring (a push waits at most
 * its wait, then the item is leaked and counted, later pushes give up at
 * once until the thread moves), stop draining what is queued, a stop that
 * gives up on a stuck thread (which finishes later on its own), pushes after
 * stop, and init's clamp.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>
#include <cmocka.h>

#include "backend/ceph/ceph_release.h"

#define MS 1000000ull
#define NRUN 4096

/* What the fake release function saw; it blocks on items whose ptr is BLOCK while blocked is set. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool blocked, inside;
	unsigned n;
	struct ceph_release_item seen[NRUN];
} rec = { .lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

#define BLOCK ((void *)(uintptr_t)0xb10c)

static void fake_run(void *ctx, const struct ceph_release_item *it)
{
	(void)ctx;
	pthread_mutex_lock(&rec.lock);
	if (rec.n < NRUN)
		rec.seen[rec.n++] = *it;
	if (it->ptr == BLOCK) {
		rec.inside = true;
		pthread_cond_broadcast(&rec.cv);
		while (rec.blocked)
			pthread_cond_wait(&rec.cv, &rec.lock);
		rec.inside = false;
	}
	pthread_mutex_unlock(&rec.lock);
}

static void rec_reset(bool blocked)
{
	pthread_mutex_lock(&rec.lock);
	rec.n = 0;
	rec.blocked = blocked;
	pthread_mutex_unlock(&rec.lock);
}

/* Wait until the thread is inside the blocking item. */
static void rec_wait_inside(void)
{
	pthread_mutex_lock(&rec.lock);
	while (!rec.inside)
		pthread_cond_wait(&rec.cv, &rec.lock);
	pthread_mutex_unlock(&rec.lock);
}

static void rec_unblock(void)
{
	pthread_mutex_lock(&rec.lock);
	rec.blocked = false;
	pthread_cond_broadcast(&rec.cv);
	pthread_mutex_unlock(&rec.lock);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait (at most 5 s) until the thread finished n items. */
static void wait_done(struct ceph_release_q *q, uint64_t n)
{
	double t = now_s();
	uint64_t done;

	do {
		pthread_mutex_lock(&q->lock);
		done = q->done;
		pthread_mutex_unlock(&q->lock);
	} while (done < n && now_s() - t < 5.0);
	assert_true(done >= n);
}

/* A queue of cap whose thread is stuck inside its first item. */
static void start_stuck(struct ceph_release_q *q, unsigned cap)
{
	rec_reset(true);
	assert_int_equal(ceph_release_start(q, cap, fake_run, NULL), 0);
	assert_true(ceph_release_push(q, CEPH_REL_CLOSE, BLOCK, 0));
	rec_wait_inside();
}

static void fifo_order(void **state)
{
	static struct ceph_release_q q;

	(void)state;
	rec_reset(false);
	assert_int_equal(ceph_release_start(&q, 0, fake_run, NULL), 0);
	assert_int_equal(q.cap, CEPH_RELEASE_SLOTS); /* init's clamp */
	for (uintptr_t i = 1; i <= 2000; i++) {
		/* a close, then the put of the same inode */
		assert_true(ceph_release_push(&q, CEPH_REL_CLOSE, (void *)(i * 16), 2000 * MS));
		assert_true(ceph_release_push(&q, CEPH_REL_PUT, (void *)(i * 16 + 8), 2000 * MS));
	}
	assert_true(ceph_release_stop(&q, 5000 * MS)); /* drains what is queued */
	assert_int_equal(q.done, 4000);
	assert_int_equal(q.leaked, 0);
	assert_int_equal(rec.n, 4000);
	for (unsigned i = 0; i < 4000; i++) {
		assert_int_equal(rec.seen[i].kind, i % 2 ? CEPH_REL_PUT : CEPH_REL_CLOSE);
		assert_int_equal((uintptr_t)rec.seen[i].ptr, (i / 2 + 1) * 16 + (i % 2) * 8);
	}
	ceph_release_destroy(&q);
}

static void stuck_thread_bounded(void **state)
{
	static struct ceph_release_q q;
	unsigned queued;
	uint64_t leaked;
	double t;

	(void)state;
	start_stuck(&q, 4);
	t = now_s();
	/* the thread is stuck: pushers still return at once while there is room */
	for (uintptr_t i = 1; i <= 4; i++)
		assert_true(ceph_release_push(&q, CEPH_REL_PUT, (void *)i, 1000 * MS));
	assert_true(now_s() - t < 0.5);
	ceph_release_counts(&q, &queued, NULL);
	assert_int_equal(queued, 4);
	/* full: waits its 200 ms, then leaks */
	t = now_s();
	assert_false(ceph_release_push(&q, CEPH_REL_PUT, (void *)5, 200 * MS));
	t = now_s() - t;
	assert_true(t >= 0.19 && t < 1.0);
	assert_int_equal(q.leaked, 1);
	/* starved: the next ones give up at once, whatever their wait */
	t = now_s();
	assert_false(ceph_release_push(&q, CEPH_REL_PUT, (void *)6, 5000 * MS));
	assert_true(now_s() - t < 0.1);
	assert_int_equal(q.leaked, 2);
	/* the thread moves: everything queued runs in order, pushes queue again */
	rec_unblock();
	wait_done(&q, 1);
	assert_true(ceph_release_push(&q, CEPH_REL_RELEASEDIR, (void *)7, 2000 * MS));
	assert_true(ceph_release_stop(&q, 5000 * MS));
	assert_int_equal(rec.n, 6);
	assert_ptr_equal(rec.seen[0].ptr, BLOCK);
	for (unsigned i = 1; i <= 4; i++)
		assert_int_equal((uintptr_t)rec.seen[i].ptr, i);
	assert_int_equal(rec.seen[5].kind, CEPH_REL_RELEASEDIR);
	assert_int_equal(q.done, 6);
	ceph_release_counts(&q, &queued, &leaked);
	assert_int_equal(queued, 0);
	assert_int_equal(leaked, 2);
	ceph_release_destroy(&q);
}

static void *unblock_later(void *arg)
{
	(void)arg;
	nanosleep(&(struct timespec){ .tv_nsec = 100 * MS }, NULL);
	rec_unblock();
	return NULL;
}

static void room_wakes_pusher(void **state)
{
	static struct ceph_release_q q;
	pthread_t t;
	double t0;

	(void)state;
	start_stuck(&q, 1);
	assert_true(ceph_release_push(&q, CEPH_REL_PUT, (void *)1, 0));
	/* full; a busy thread that moves within the wait: the pusher gets its room */
	assert_int_equal(pthread_create(&t, NULL, unblock_later, NULL), 0);
	t0 = now_s();
	assert_true(ceph_release_push(&q, CEPH_REL_PUT, (void *)3, 2000 * MS));
	t0 = now_s() - t0;
	assert_true(t0 >= 0.09 && t0 < 1.5);
	pthread_join(t, NULL);
	assert_true(ceph_release_stop(&q, 5000 * MS));
	assert_int_equal(q.done, 3);
	assert_int_equal(q.leaked, 0);
	ceph_release_destroy(&q);
}

static void stop_gives_up_on_stuck(void **state)
{
	static struct ceph_release_q q;
	unsigned queued;
	double t;
	bool exited;

	(void)state;
	start_stuck(&q, 8);
	assert_true(ceph_release_push(&q, CEPH_REL_PUT, (void *)1, 0));
	t = now_s();
	assert_false(ceph_release_stop(&q, 300 * MS));
	t = now_s() - t;
	assert_true(t >= 0.29 && t < 2.0);
	ceph_release_counts(&q, &queued, NULL);
	assert_int_equal(queued, 1);
	/* after stop nothing more is queued */
	assert_false(ceph_release_push(&q, CEPH_REL_PUT, (void *)2, 0));
	/* the abandoned (detached) thread finishes on its own: q was kept for it */
	rec_unblock();
	t = now_s();
	do {
		pthread_mutex_lock(&q.lock);
		exited = q.exited;
		pthread_mutex_unlock(&q.lock);
	} while (!exited && now_s() - t < 5.0);
	assert_true(exited);
	assert_int_equal(q.done, 2);
	assert_int_equal(rec.n, 2);
	ceph_release_destroy(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fifo_order),
		cmocka_unit_test(stuck_thread_bounded),
		cmocka_unit_test(room_wakes_pusher),
		cmocka_unit_test(stop_gives_up_on_stuck),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
