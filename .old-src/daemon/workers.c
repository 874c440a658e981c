/*
 * workers.c - the worker pool declared in workers.h.
 *
 * N threads take items from one FIFO (intrusive singly linked list through
 * work->next, guarded by pool.lock, signalled by pool.cond): no allocation per
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
#include "workers.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "loop.h"

#define WORKERS_MAX 1024

struct work_list {
	struct work *head;
	struct work *tail;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;       /* queue became non-empty, or stopping */
	struct work_list queue;    /* submitted, not yet picked by a worker */
	struct work_list done;     /* run() returned, done() not yet called */
	unsigned pending;          /* see invariants above */
	bool stopping;
	pthread_t *threads;
	unsigned nthreads;
	struct loop_ev *wake;      /* loop_async: deliver completions */
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void work_list_push(struct work_list *l, struct work *w)
{
	w->next = NULL;
	if (l->tail)
		l->tail->next = w;
	else
		l->head = w;
	l->tail = w;
}

static struct work *work_list_pop(struct work_list *l)
{
	struct work *w = l->head;
	if (w) {
		l->head = w->next;
		if (!l->head)
			l->tail = NULL;
		w->next = NULL;
	}
	return w;
}

/* Take the whole list (caller holds the lock). */
static struct work *work_list_take(struct work_list *l)
{
	struct work *w = l->head;
	l->head = l->tail = NULL;
	return w;
}

/* Call done() for every completed item; returns how many. Loop (or main) thread. */
static unsigned workers_deliver(void)
{
	pthread_mutex_lock(&pool.lock);
	struct work *w = work_list_take(&pool.done);
	pthread_mutex_unlock(&pool.lock);

	unsigned n = 0;
	while (w) {
		struct work *next = w->next;
		w->next = NULL;
		w->done(w); /* may free or resubmit w */
		w = next;
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
		struct work *w = work_list_pop(&pool.queue);
		if (!w) {
			if (pool.stopping)
				break;
			pthread_cond_wait(&pool.cond, &pool.lock);
			continue;
		}
		pthread_mutex_unlock(&pool.lock);
		w->run(w);
		pthread_mutex_lock(&pool.lock);
		bool first = pool.done.head == NULL;
		work_list_push(&pool.done, w);
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
	work_list_push(&pool.queue, w);
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
		struct work *w = work_list_pop(&pool.queue);
		pthread_mutex_unlock(&pool.lock);
		if (!w)
			break;
		w->run(w);
		pthread_mutex_lock(&pool.lock);
		work_list_push(&pool.done, w);
		pthread_mutex_unlock(&pool.lock);
	}

	loop_ev_free(pool.wake);
	pool.wake = NULL;
	free(pool.threads);
	pool.threads = NULL;
	pool.nthreads = 0;
	pool.stopping = false;
}
