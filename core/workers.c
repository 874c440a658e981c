/*
 * workers.c - the worker pool declared in workers.h.
 *
 * N threads take items from one FIFO (a core/queue.h queue through
 * work->link, guarded by pool.lock, signalled by pool.cond): no allocation per
 * item, the item is embedded in its owner (an rpc_call). When run() returns,
 * the item moves to its home's completion list (work->home: one per event
 * loop, [rnfsd] loops) and that loop's thread is poked through its
 * loop_async event; the loop thread takes the whole list under the lock and
 * calls done() for each item outside it (batching: one wake-up may deliver
 * many completions).
 *
 * Item lifecycle:  submitted -> queued -> running (worker) -> completed ->
 *                  done() (loop thread).  The pool never touches an item after
 *                  handing it to done().
 *
 * Invariants (pool.lock):
 *   pending = items queued + running + completed but not yet delivered.
 *   A worker exits only when `stopping` is set and the queue is empty, so
 *   workers_stop() finishes every queued item before joining.
 *   running[i] is the item worker i is inside (NULL: none), since[i] since
 *   when; exited counts the workers that returned; queued counts the items
 *   in queue; busy_ns sums the time of the items that returned.
 *
 * Shutdown in bounded time (workers_stop_within): an item may never return
 * (a backend call stuck in a cluster that stopped answering, which nothing
 * can cancel). After the wait, such workers are detached and left where
 * they are: the process exits around them rather than joining them.
 */
#include "core/workers.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/loop.h"

#define WORKERS_MAX 1024

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;       /* queue became non-empty, or stopping */
	struct queue queue;        /* submitted, not yet picked by a worker */
	struct {
		struct queue done;     /* run() returned, done() not yet called */
		struct loop_ev *wake;  /* loop_async on that home's loop: deliver completions */
	} home[WORKERS_HOMES_MAX]; /* [0]: workers_start()'s loop */
	unsigned n_homes;          /* homes set up (1 + workers_home_add() calls) */
	unsigned pending;          /* see invariants above */
	bool stopping;
	pthread_t *threads;
	unsigned nthreads;
	struct work **running;     /* per worker: the item it is inside, or NULL */
	struct timespec *since;    /* per worker: CLOCK_MONOTONIC start of that item */
	unsigned exited;           /* workers that returned (stopping) */
	unsigned queued;           /* items in queue */
	uint64_t busy_ns;          /* time workers spent inside items that returned */
	pthread_cond_t exit_cv;    /* a worker returned (CLOCK_MONOTONIC) */
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

/* Call done() for every item completed for home h; returns how many. Its loop's (or the main) thread. */
static unsigned workers_deliver(unsigned h)
{
	struct queue batch = QUEUE_INIT;

	pthread_mutex_lock(&pool.lock);
	queue_splice(&batch, &pool.home[h].done);
	pthread_mutex_unlock(&pool.lock);

	unsigned n = 0;
	struct work *w;
	while ((w = queue_pop_entry(&batch, struct work, link))) {
		w->done(w); /* may free or resubmit w */
		n++;
	}
	if (n) {
		pthread_mutex_lock(&pool.lock);
		pool.pending -= n;
		pthread_mutex_unlock(&pool.lock);
	}
	return n;
}

static void workers_wake_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	workers_deliver((unsigned)(uintptr_t)arg);
}

/* The home an item's done() runs on: an unknown index falls back to 0. (lock held) */
static unsigned workers_home_of(const struct work *w)
{
	return w->home < pool.n_homes && pool.home[w->home].wake ? w->home : 0;
}

/* Nanoseconds from since to now (CLOCK_MONOTONIC). */
static uint64_t workers_since_ns(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)((now.tv_sec - since->tv_sec) * 1000000000LL + (now.tv_nsec - since->tv_nsec));
}

static void *worker_main(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;

	pthread_mutex_lock(&pool.lock);
	for (;;) {
		struct work *w = queue_pop_entry(&pool.queue, struct work, link);
		if (w)
			pool.queued--;
		if (!w) {
			if (pool.stopping)
				break;
			pthread_cond_wait(&pool.cond, &pool.lock);
			continue;
		}
		pool.running[me] = w;
		clock_gettime(CLOCK_MONOTONIC, &pool.since[me]);
		pthread_mutex_unlock(&pool.lock);
		w->run(w);
		pthread_mutex_lock(&pool.lock);
		pool.busy_ns += workers_since_ns(&pool.since[me]);
		pool.running[me] = NULL;
		unsigned h = workers_home_of(w);
		bool first = queue_empty(&pool.home[h].done);
		queue_push(&pool.home[h].done, &w->link);
		if (first) {
			/* One wake-up per batch: the loop drains the whole list.
			 * The wake events live until every worker is joined. */
			pthread_mutex_unlock(&pool.lock);
			loop_ev_trigger(pool.home[h].wake);
			pthread_mutex_lock(&pool.lock);
		}
	}
	pool.exited++;
	pthread_cond_broadcast(&pool.exit_cv);
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

int workers_start(struct loop *loop, unsigned n)
{
	if (n == 0 || n > WORKERS_MAX || pool.threads) {
		log_err("workers: bad thread count %u (1..%u) or already started", n, WORKERS_MAX);
		return -1;
	}
	pool.threads = calloc(n, sizeof(*pool.threads));
	pool.running = calloc(n, sizeof(*pool.running));
	pool.since = calloc(n, sizeof(*pool.since));
	if (!pool.threads || !pool.running || !pool.since)
		goto err_alloc;
	pool.home[0].wake = loop_async(loop, workers_wake_cb, (void *)(uintptr_t)0);
	if (!pool.home[0].wake)
		goto err_async;
	if (pool.n_homes == 0)
		pool.n_homes = 1;
	pool.stopping = false;
	pool.exited = 0;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pool.exit_cv, &ca);
	pthread_condattr_destroy(&ca);
	for (pool.nthreads = 0; pool.nthreads < n; pool.nthreads++) {
		int rc = pthread_create(&pool.threads[pool.nthreads], NULL, worker_main,
					(void *)(uintptr_t)pool.nthreads);
		if (rc != 0) {
			log_err("workers: pthread_create: %s", strerror(rc));
			goto err_thread;
		}
	}
	return 0;

err_thread:
	workers_stop();
	return -1;
err_async:
err_alloc:
	free(pool.threads);
	free(pool.running);
	free(pool.since);
	pool.threads = NULL;
	pool.running = NULL;
	pool.since = NULL;
	log_err("workers: out of memory");
	return -1;
}

int workers_home_add(struct loop *l)
{
	unsigned h = pool.n_homes ? pool.n_homes : 1;

	if (h >= WORKERS_HOMES_MAX) {
		log_err("workers: more than %u event loops", WORKERS_HOMES_MAX);
		return -1;
	}
	pool.home[h].wake = loop_async(l, workers_wake_cb, (void *)(uintptr_t)h);
	if (!pool.home[h].wake) {
		log_err("workers: out of memory");
		return -1;
	}
	pool.n_homes = h + 1;
	return (int)h;
}

/* Every completion still waiting, on the calling thread (loops stopped); how many. */
static unsigned workers_deliver_all(void)
{
	unsigned n = 0;

	for (unsigned h = 0; h < pool.n_homes || h == 0; h++)
		n += workers_deliver(h);
	return n;
}

void workers_submit(struct work *w)
{
	pthread_mutex_lock(&pool.lock);
	queue_push(&pool.queue, &w->link);
	pool.queued++;
	pool.pending++;
	pthread_cond_signal(&pool.cond);
	pthread_mutex_unlock(&pool.lock);
}

void workers_usage(struct workers_usage *u)
{
	pthread_mutex_lock(&pool.lock);
	*u = (struct workers_usage){ .threads = pool.nthreads, .queued = pool.queued, .busy_ns = pool.busy_ns };
	for (unsigned i = 0; pool.running && i < pool.nthreads; i++)
		if (pool.running[i]) {
			u->busy++;
			u->busy_ns += workers_since_ns(&pool.since[i]); /* the item under way, so far */
		}
	pthread_mutex_unlock(&pool.lock);
}

unsigned workers_pending(void)
{
	pthread_mutex_lock(&pool.lock);
	unsigned n = pool.pending;
	pthread_mutex_unlock(&pool.lock);
	return n;
}

void workers_stop(void)
{
	if (!pool.threads)
		return;
	pthread_mutex_lock(&pool.lock);
	pool.stopping = true;
	pthread_cond_broadcast(&pool.cond);
	pthread_mutex_unlock(&pool.lock);

	for (unsigned i = 0; i < pool.nthreads; i++)
		pthread_join(pool.threads[i], NULL);

	/* Every queued item ran; hand the remaining completions to their owners
	 * (a done() may submit again: there are no threads left, so run those
	 * items here until nothing is left). */
	for (;;) {
		workers_deliver_all();
		pthread_mutex_lock(&pool.lock);
		struct work *w = queue_pop_entry(&pool.queue, struct work, link);
		if (w)
			pool.queued--;
		pthread_mutex_unlock(&pool.lock);
		if (!w)
			break;
		w->run(w);
		pthread_mutex_lock(&pool.lock);
		queue_push(&pool.home[workers_home_of(w)].done, &w->link);
		pthread_mutex_unlock(&pool.lock);
	}

	for (unsigned h = 0; h < pool.n_homes; h++) {
		loop_ev_free(pool.home[h].wake);
		pool.home[h].wake = NULL;
	}
	pool.n_homes = 0;
	pthread_cond_destroy(&pool.exit_cv);
	free(pool.threads);
	free(pool.running);
	free(pool.since);
	pool.threads = NULL;
	pool.running = NULL;
	pool.since = NULL;
	pool.nthreads = 0;
	pool.stopping = false;
}

/* One log line: the items the workers still inside one are running, and for how long. (lock held) */
static void workers_log_stuck(unsigned secs, unsigned left)
{
	char line[1024], what[160];
	struct timespec now;
	size_t used = 0;
	unsigned shown = 0;

	clock_gettime(CLOCK_MONOTONIC, &now);
	line[0] = '\0';
	for (unsigned i = 0; i < pool.nthreads && used < sizeof(line); i++) {
		const struct work *w = pool.running[i];
		if (!w)
			continue;
		if (shown++ == 8) {
			used += (size_t)snprintf(line + used, sizeof(line) - used, ", ...");
			break;
		}
		if (w->describe)
			w->describe(w, what, sizeof(what));
		else
			snprintf(what, sizeof(what), "an item");
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s (%.1f s)", shown > 1 ? ", " : "",
					 what, (double)(now.tv_sec - pool.since[i].tv_sec) +
					 (double)(now.tv_nsec - pool.since[i].tv_nsec) / 1e9);
	}
	log_warn("workers: %u still inside a call %u s after shutdown began, left running (not joined): %s",
		 left, secs, line);
}

unsigned workers_stop_within(unsigned secs)
{
	struct timespec until;
	unsigned left;

	if (!pool.threads)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)secs;
	pthread_mutex_lock(&pool.lock);
	pool.stopping = true;
	pthread_cond_broadcast(&pool.cond);
	while (pool.exited < pool.nthreads && pthread_cond_timedwait(&pool.exit_cv, &pool.lock, &until) == 0)
		;
	left = pool.nthreads - pool.exited;
	if (left) {
		workers_log_stuck(secs, left);
		for (unsigned i = 0; i < pool.nthreads; i++)
			pthread_detach(pool.threads[i]); /* the ones that exited are reaped too */
	}
	pthread_mutex_unlock(&pool.lock);
	if (!left)
		workers_stop();
	return left;
}
