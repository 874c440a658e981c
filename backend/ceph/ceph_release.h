/*
 * ceph_release.h - asynchronous releases for one Ceph mount: a bounded FIFO
 * of (kind, pointer) items and one thread that performs them (ceph_ll_close,
 * ceph_ll_put, ceph_ll_releasedir in the ceph driver). Releases cannot be
 * refused by the gate (ceph_gate.h) yet may block inside libcephfs while the
 * cluster is gone; performed here, they hold this one thread instead of NFS
 * workers, so the workers held by a hung Ceph export stay bounded by
 * max-calls. Pure queue logic over a callback: no libcephfs, unit-tested in
 * tests/unit/test_ceph_release.c.
 *
 * Invariants (q->lock):
 *   - items run in the order they were pushed, one at a time, on the one
 *     thread: a put queued after the close of the same inode runs after it;
 *   - at most q->cap items are queued (a fixed ring: no allocation per item);
 *   - a push that finds the ring full waits at most wait_ns for room, and not
 *     at all while the queue is "starved" (a push already gave up and the
 *     thread has finished nothing since): the item is then not released
 *     (leaked, counted) and the caller logs it; a leaked reference costs
 *     libcephfs memory and caps, never correctness;
 *   - the item being run is not in the ring; q->busy_since says since when
 *     (0: idle).
 */
#ifndef RNFSD_BACKEND_CEPH_RELEASE_H
#define RNFSD_BACKEND_CEPH_RELEASE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Ring size of a mount's queue: 24 bytes each. */
#define CEPH_RELEASE_SLOTS 1024u

enum ceph_release_kind {
	CEPH_REL_CLOSE,      /* ceph_ll_close(Fh *) */
	CEPH_REL_PUT,        /* ceph_ll_put(Inode *) */
	CEPH_REL_RELEASEDIR, /* ceph_ll_releasedir(dir_result *) */
	CEPH_REL_TEST,       /* tests only: the callback decides */
};

struct ceph_release_item {
	enum ceph_release_kind kind;
	void *ptr;
};

typedef void (*ceph_release_fn)(void *ctx, const struct ceph_release_item *it);

struct ceph_release_q {
	pthread_mutex_t lock;
	pthread_cond_t more;   /* an item was pushed, or stop */
	pthread_cond_t room;   /* an item was taken: room in the ring */
	pthread_cond_t idle;   /* the thread exited */
	struct ceph_release_item ring[CEPH_RELEASE_SLOTS];
	unsigned cap;          /* 1..CEPH_RELEASE_SLOTS */
	unsigned head, count;  /* oldest item, items queued */
	bool stop;             /* drain what is queued, then exit */
	bool exited;           /* the thread has returned */
	bool starved;          /* a push gave up; cleared when an item completes */
	uint64_t busy_since;   /* CLOCK_MONOTONIC ns the current item started; 0: idle */
	uint64_t done, leaked; /* counters, for logs and tests */
	ceph_release_fn run;
	void *ctx;
	pthread_t thread;
};

/* Start q's thread; cap 0 or > CEPH_RELEASE_SLOTS: CEPH_RELEASE_SLOTS. 0 or an errno. */
int ceph_release_start(struct ceph_release_q *q, unsigned cap, ceph_release_fn run, void *ctx);
/* Queue it (any thread). true: queued; false: the ring stayed full, it is not released (leaked). */
bool ceph_release_push(struct ceph_release_q *q, enum ceph_release_kind kind, void *ptr, uint64_t wait_ns);
/* Run what is queued and stop the thread, waiting at most wait_ns. true: stopped and joined (q may
 * be destroyed); false: still inside an item, the thread is detached and q must stay allocated. */
bool ceph_release_stop(struct ceph_release_q *q, uint64_t wait_ns);
/* After a true ceph_release_stop. */
void ceph_release_destroy(struct ceph_release_q *q);
/* For logs and tests: items queued (not counting the one running) and items not released so far
 * (pushes that found the ring full); either pointer may be NULL. */
void ceph_release_counts(struct ceph_release_q *q, unsigned *queued, uint64_t *leaked);

#endif
