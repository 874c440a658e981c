/*
 * ceph_release.c - a mount's release queue and its thread (ceph_release.h).
 *
 * Lifecycle: start (thread waits on `more`) -> push ... (workers; the
 * thread pops the oldest, runs it without the lock, signals `room`) ->
 * stop (sets `stop`; the thread runs what is left and exits, signalling
 * `idle`) -> destroy. A stop that times out detaches the thread: it
 * finishes on its own and q must never be freed under it.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "backend/ceph/ceph_release.h"

#define NS 1000000000ull

static uint64_t rel_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static struct timespec rel_deadline(uint64_t wait_ns)
{
	uint64_t end = rel_now_ns() + wait_ns;

	return (struct timespec){ .tv_sec = (time_t)(end / NS), .tv_nsec = (long)(end % NS) };
}

static void *rel_thread(void *arg)
{
	struct ceph_release_q *q = arg;
	struct ceph_release_item it;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		if (!q->count) {
			if (q->stop)
				break;
			pthread_cond_wait(&q->more, &q->lock);
			continue;
		}
		it = q->ring[q->head];
		q->head = (q->head + 1) % q->cap;
		q->count--;
		q->busy_since = rel_now_ns();
		pthread_mutex_unlock(&q->lock);
		q->run(q->ctx, &it); /* may block as long as the cluster is gone */
		pthread_mutex_lock(&q->lock);
		q->busy_since = 0;
		q->done++;
		q->starved = false;
		pthread_cond_broadcast(&q->room);
	}
	q->exited = true;
	pthread_cond_broadcast(&q->idle);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int ceph_release_start(struct ceph_release_q *q, unsigned cap, ceph_release_fn run, void *ctx)
{
	pthread_condattr_t ca;
	int rc;

	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->more, &ca);
	pthread_cond_init(&q->room, &ca);
	pthread_cond_init(&q->idle, &ca);
	pthread_condattr_destroy(&ca);
	q->cap = cap < 1 || cap > CEPH_RELEASE_SLOTS ? CEPH_RELEASE_SLOTS : cap;
	q->run = run;
	q->ctx = ctx;
	rc = pthread_create(&q->thread, NULL, rel_thread, q);
	if (rc)
		ceph_release_destroy(q);
	return rc;
}

bool ceph_release_push(struct ceph_release_q *q, enum ceph_release_kind kind, void *ptr, uint64_t wait_ns)
{
	struct timespec until = rel_deadline(wait_ns);
	bool queued = false;

	pthread_mutex_lock(&q->lock);
	while (q->count == q->cap && !q->starved && !q->stop &&
	       pthread_cond_timedwait(&q->room, &q->lock, &until) == 0)
		;
	if (q->count < q->cap && !q->stop) {
		q->ring[(q->head + q->count) % q->cap] = (struct ceph_release_item){ .kind = kind, .ptr = ptr };
		q->count++;
		queued = true;
		pthread_cond_signal(&q->more);
	} else {
		q->starved = true; /* the next pushes give up at once until the thread moves */
		q->leaked++;
	}
	pthread_mutex_unlock(&q->lock);
	return queued;
}

bool ceph_release_stop(struct ceph_release_q *q, uint64_t wait_ns)
{
	struct timespec until = rel_deadline(wait_ns);
	bool exited;

	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_signal(&q->more);
	while (!q->exited && pthread_cond_timedwait(&q->idle, &q->lock, &until) == 0)
		;
	exited = q->exited;
	pthread_mutex_unlock(&q->lock);
	if (exited)
		pthread_join(q->thread, NULL);
	else
		pthread_detach(q->thread);
	return exited;
}

void ceph_release_destroy(struct ceph_release_q *q)
{
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->more);
	pthread_cond_destroy(&q->room);
	pthread_cond_destroy(&q->idle);
}

void ceph_release_counts(struct ceph_release_q *q, unsigned *queued, uint64_t *leaked)
{
	pthread_mutex_lock(&q->lock);
	if (queued)
		*queued = q->count;
	if (leaked)
		*leaked = q->leaked;
	pthread_mutex_unlock(&q->lock);
}
