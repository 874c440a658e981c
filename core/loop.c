/*
 * loop.c - libevent behind the loop.h interface. libevent is told to use
 * pthreads so that loop_ev_trigger() (event_active) is safe from workers.
 * Each loop has an inbox (loop_send): a FIFO of messages under its own lock,
 * drained on the loop's thread by one persistent async event.
 */
#include "core/loop.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct loop {
	struct event_base *base;
	pthread_t thread;     /* the thread inside loop_run(), while running is set */
	atomic_bool running;
	pthread_mutex_t inbox_lock;
	struct queue inbox;   /* of loop_msg, by link: sent, not yet run */
	struct event *inbox_ev; /* loop_async: run the inbox */
};

/* struct loop_ev is libevent's struct event; the cast keeps libevent out of callers. */

static void loop_inbox_cb(int fd, short what, void *arg);

struct loop *loop_new(void)
{
	static int threads_ready;
	if (!threads_ready) {
		if (evthread_use_pthreads() != 0)
			return NULL;
		threads_ready = 1;
	}
	struct event_config *cfg = event_config_new();
	if (!cfg)
		return NULL;
	struct loop *l = calloc(1, sizeof(*l));
	if (l)
		l->base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (l && l->base)
		l->inbox_ev = (struct event *)loop_async(l, loop_inbox_cb, l);
	if (l && (!l->base || !l->inbox_ev)) {
		if (l->base)
			event_base_free(l->base);
		free(l);
		return NULL;
	}
	pthread_mutex_init(&l->inbox_lock, NULL);
	queue_init(&l->inbox);
	return l;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	event_free(l->inbox_ev);
	event_base_free(l->base);
	pthread_mutex_destroy(&l->inbox_lock);
	free(l);
}

static __thread struct loop *loop_here;

bool loop_is_loop_thread(void)
{
	return loop_here != NULL;
}

struct loop *loop_current(void)
{
	return loop_here;
}

int loop_run(struct loop *l)
{
	loop_here = l;
	l->thread = pthread_self();
	atomic_store(&l->running, true);
	int r = event_base_loop(l->base, EVLOOP_NO_EXIT_ON_EMPTY) < 0 ? -1 : 0;
	atomic_store(&l->running, false);
	loop_here = NULL;
	return r;
}

/* Run what was sent, in order (batching: one wake-up, many messages); how many. */
static unsigned loop_inbox_run(struct loop *l)
{
	struct queue batch = QUEUE_INIT;
	unsigned n = 0;

	pthread_mutex_lock(&l->inbox_lock);
	queue_splice(&batch, &l->inbox);
	pthread_mutex_unlock(&l->inbox_lock);
	struct loop_msg *m;
	while ((m = queue_pop_entry(&batch, struct loop_msg, link))) {
		m->fn(m); /* may free m */
		n++;
	}
	return n;
}

/* The loop's thread. */
static void loop_inbox_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)loop_inbox_run(arg);
}

unsigned loop_flush(struct loop *l)
{
	return loop_inbox_run(l);
}

void loop_send(struct loop *l, struct loop_msg *m)
{
	pthread_mutex_lock(&l->inbox_lock);
	bool first = queue_empty(&l->inbox);
	queue_push(&l->inbox, &m->link);
	pthread_mutex_unlock(&l->inbox_lock);
	if (first)
		event_active(l->inbox_ev, 0, 0);
}

double loop_busy_seconds(struct loop *l)
{
	clockid_t cid;
	struct timespec ts;

	/* The loop's thread sleeps only in its poll: its CPU time is the time it was busy. */
	if (!l || !atomic_load(&l->running) || pthread_getcpuclockid(l->thread, &cid) != 0 ||
	    clock_gettime(cid, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void loop_break(struct loop *l)
{
	event_base_loopbreak(l->base);
}

struct loop_ev *loop_io(struct loop *l, int fd, short what, loop_cb cb, void *arg)
{
	return (struct loop_ev *)event_new(l->base, fd, what, cb, arg);
}

struct loop_ev *loop_timer(struct loop *l, bool persist, loop_cb cb, void *arg)
{
	return (struct loop_ev *)event_new(l->base, -1, persist ? EV_PERSIST : 0, cb, arg);
}

struct loop_ev *loop_signal(struct loop *l, int signo, loop_cb cb, void *arg)
{
	return (struct loop_ev *)evsignal_new(l->base, signo, cb, arg);
}

struct loop_ev *loop_async(struct loop *l, loop_cb cb, void *arg)
{
	struct event *e = event_new(l->base, -1, EV_PERSIST, cb, arg);
	if (e && event_add(e, NULL) != 0) {
		event_free(e);
		return NULL;
	}
	return (struct loop_ev *)e;
}

int loop_ev_add(struct loop_ev *e, const struct timeval *timeout)
{
	return event_add((struct event *)e, timeout);
}

int loop_ev_del(struct loop_ev *e)
{
	return event_del((struct event *)e);
}

void loop_ev_free(struct loop_ev *e)
{
	if (e)
		event_free((struct event *)e);
}

void loop_ev_trigger(struct loop_ev *e)
{
	event_active((struct event *)e, 0, 0);
}
