/*
 * workers.h - a fixed pool of threads that runs blocking work (file-system
 * calls) off the event loop, so one slow disk operation never stalls other
 * clients. Each item runs `run` on a worker thread, then `done` on the loop
 * thread. Items are embedded in their owner (no allocation per item).
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
};

/* Start n threads whose completions are delivered on loop. 0 on success. */
int workers_start(struct loop *loop, unsigned n);
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
/* Main thread: finish queued items, deliver their completions, join threads. */
void workers_stop(void);
/* Main thread, at shutdown: workers_stop(), but waiting at most secs seconds for the workers to
 * finish. Returns how many were still inside an item then (0: everything done as workers_stop()).
 * Those are left running (detached, never joined), logged once with what they run; the pool, the
 * queue and every item stay allocated, and the caller must free nothing they may use: it exits. */
unsigned workers_stop_within(unsigned secs);

#endif
