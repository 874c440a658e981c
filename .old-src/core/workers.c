/*
 * workers.c - the worker pool declared in workers.h.
 *
 * N threads take items from one FIFO (a core/queue.h queue through
 * work->link, guarded by pool.lock, signalled by pool.cond): no allocation per
 * item, the item is embedded in its owner (an rpc_call). When run() returns,
 * the item moves to the completion list and the loop thread is poked through
 * a loop_async event; the loop thread takes the whole completion list under
 * the lock and calls done() for each item outside it (batching: one wake-up
 * may deliver many completions).
 *
 * Item lifecycle:  submitted -> queued -> running (worker) -> completed ->
 *                  done() (loop thread).  The pool never touches an item after
 *                  handing it to done().
 *
 * Invariants (pool.lock):
 *   pending = items queued + running + completed but not yet delivered.
 *   A worker exits only when `stopping` is set and the queue is empty, so
 *   workers_stop() finishes every queued item before joining.
 */
#include "core/workers.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/loop.h"

#define WORKERS_MAX 1024

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;       /* queue became non-empty, or stopping */
	struct queue queue;        /* submitted, not yet picked by a worker */
	struct queue done;         /* run() returned, done() not yet called */
	unsigned pending;          /* see invariants above */
	bool stopping;
	pthread_t *threads;
	unsigned nthreads;
	struct loop_ev *wake;      /* loop_async: deliver completions */
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

/* Call done() for every completed item; returns how many. Loop (or main) thread. */
static unsigned workers_deliver(void)
{
	struct queue batch = QUEUE_INIT;

	pthread_mutex_lock(&pool.lock);
	queue_splice(&batch, &pool.done);
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
	(void)arg;
	workers_deliver();
}

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		struct work *w = queue_pop_entry(&pool.queue, struct work, link);
		if (!w) {
			if (pool.stopping)
				break;
			pthread_cond_wait(&pool.cond, &pool.lock);
			continue;
		}
		pthread_mutex_unlock(&pool.lock);
		w->run(w);
		pthread_mutex_lock(&pool.lock);
		bool first = queue_empty(&pool.done);
		queue_push(&pool.done, &w->link);
		if (first) {
			/* One wake-up per batch: the loop drains the whole list.
			 * pool.wake lives until every worker is joined. */
			pthread_mutex_unlock(&pool.lock);
			loop_ev_trigger(pool.wake);
			pthread_mutex_lock(&pool.lock);
		}
	}
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
	if (!pool.threads)
		goto err_alloc;
	pool.wake = loop_async(loop, workers_wake_cb, NULL);
	if (!pool.wake)
		goto err_async;
	pool.stopping = false;
	for (pool.nthreads = 0; pool.nthreads < n; pool.nthreads++) {
		int rc = pthread_create(&pool.threads[pool.nthreads], NULL, worker_main, NULL);
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
	free(pool.threads);
	pool.threads = NULL;
err_alloc:
	log_err("workers: out of memory");
	return -1;
}

void workers_submit(struct work *w)
{
	pthread_mutex_lock(&pool.lock);
	queue_push(&pool.queue, &w->link);
	pool.pending++;
	pthread_cond_signal(&pool.cond);
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
		workers_deliver();
		pthread_mutex_lock(&pool.lock);
		struct work *w = queue_pop_entry(&pool.queue, struct work, link);
		pthread_mutex_unlock(&pool.lock);
		if (!w)
			break;
		w->run(w);
		pthread_mutex_lock(&pool.lock);
		queue_push(&pool.done, &w->link);
		pthread_mutex_unlock(&pool.lock);
	}

	loop_ev_free(pool.wake);
	pool.wake = NULL;
	free(pool.threads);
	pool.threads = NULL;
	pool.nthreads = 0;
	pool.stopping = false;
}
