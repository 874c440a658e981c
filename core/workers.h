/*
 * workers.h - a fixed pool of threads that runs blocking work (file-system
 * calls) off the event loop, so one slow disk operation never stalls other
 * clients. Each item runs `run` on a worker thread, then `done` on its home
 * loop's thread (workers_start()'s loop unless the item names another, added
 * with workers_home_add()). Items are embedded in their owner (no
 * allocation per item).
 */
#ifndef RNFSD_CORE_WORKERS_H
#define RNFSD_CORE_WORKERS_H

#include <stddef.h>
#include <stdint.h>

#include "core/queue.h"

struct loop;

struct work {
	void (*run)(struct work *w);  /* worker thread */
	void (*done)(struct work *w); /* loop thread, after run returned */
	/* Optional (NULL: "an item"): what w is, for the log of workers_stop_within(); called on the
	 * main thread while run() is still running, so it reads only what run() does not change. */
	void (*describe)(const struct work *w, char *buf, size_t len);
	struct queue_link link;       /* queue linkage, owned by the pool */
	unsigned home;                /* where done() runs: 0 workers_start()'s loop, else a
	                                 workers_home_add() index; set by the owner before submitting */
};

#define WORKERS_HOMES_MAX 64
/* Start n threads whose completions are delivered on loop (home 0). 0 on success. */
int workers_start(struct loop *loop, unsigned n);
/* Main thread, before l runs: another loop completions may be delivered on. Its home index
 * (1 ..), or -1 (logged: WORKERS_HOMES_MAX). Homes last until workers_stop(). */
int workers_home_add(struct loop *l);
/* Any thread. Queue w; w must stay valid until its done callback ran. */
void workers_submit(struct work *w);
/* Items queued or running. */
unsigned workers_pending(void);

/* What the pool does, for the statistics. */
struct workers_usage {
	unsigned threads, busy, queued; /* threads, those inside an item now, items waiting for one */
	uint64_t busy_ns;               /* time spent inside items since start, those under way included */
};
/* Any thread. */
void workers_usage(struct workers_usage *u);
/* Main thread, every loop stopped: finish queued items, deliver their completions (all homes,
 * on the calling thread), join threads. */
void workers_stop(void);
/* Main thread, at shutdown: workers_stop(), but waiting at most secs seconds for the workers to
 * finish. Returns how many were still inside an item then (0: everything done as workers_stop()).
 * Those are left running (detached, never joined), logged once with what they run; the pool, the
 * queue and every item stay allocated, and the caller must free nothing they may use: it exits. */
unsigned workers_stop_within(unsigned secs);

#endif
