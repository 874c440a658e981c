/*
 * ceph_gate.h - the accounting that keeps one Ceph export from taking every
 * worker thread: at most `max` calls of an instance inside libcephfs at once,
 * and, while the cluster is stuck (a call inside has been there longer than
 * the stuck limit, op-timeout, and no call has returned for that long), only
 * one probe call admitted at a time; any call that returns ends it. Pure
 * logic over the caller's clock: no
 * libcephfs, unit-tested in tests/unit/test_ceph_gate.c. A refused call
 * answers at once with a transient errno (NFS3ERR_JUKEBOX / NFS4ERR_DELAY).
 */
#ifndef RNFSD_BACKEND_CEPH_GATE_H
#define RNFSD_BACKEND_CEPH_GATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* The most calls one instance may have inside at once (rnfsd.conf's threads is at most 256). */
#define CEPH_GATE_SLOTS 256u
/* A call that finds the gate full waits for a slot while the oldest call inside is younger than
 * this (a busy but answering cluster), and is refused at once after (one that stopped answering). */
#define CEPH_GATE_PATIENCE_NS 1000000000ull

#define CEPH_GATE_NO_PROBE CEPH_GATE_SLOTS

enum ceph_gate_verdict {
	CEPH_GATE_IN,    /* admitted: call ceph_gate_leave(slot) when it returns */
	CEPH_GATE_FULL,  /* max calls already inside: wait (ceph_gate_full_wait) or EAGAIN */
	CEPH_GATE_STUCK, /* stuck (see above) and the probe is taken: ETIMEDOUT */
};

/* What changed at this enter or leave, for the caller to log once. */
enum ceph_gate_event {
	CEPH_GATE_SAME,
	CEPH_GATE_BECAME_STUCK,  /* the cluster stopped answering this instance */
	CEPH_GATE_ANSWERS_AGAIN, /* a call returned while stuck */
};

struct ceph_gate {
	pthread_mutex_t lock;
	pthread_cond_t freed;  /* a slot was given back */
	unsigned max;       /* 1..CEPH_GATE_SLOTS (init's 0: CEPH_GATE_SLOTS) */
	uint64_t stuck_ns;  /* 0: no stuck detection (op-timeout 0) */
	unsigned inside;
	bool stuck;         /* refusing as stuck since BECAME_STUCK */
	unsigned probe;     /* the slot of the one call admitted while stuck; CEPH_GATE_NO_PROBE: none */
	uint64_t last_done; /* when a call last returned; 0: none yet */
	uint64_t since[CEPH_GATE_SLOTS]; /* entry time of the call in each slot; 0: free */
	uint64_t refused_full, refused_stuck; /* counters, for the log */
};

void ceph_gate_init(struct ceph_gate *g, unsigned max, unsigned stuck_secs);
void ceph_gate_destroy(struct ceph_gate *g);
/* now_ns: a monotonic clock, never 0. On CEPH_GATE_IN *slot is the call's. */
enum ceph_gate_verdict ceph_gate_enter(struct ceph_gate *g, uint64_t now_ns, unsigned *slot,
				       enum ceph_gate_event *ev);
enum ceph_gate_event ceph_gate_leave(struct ceph_gate *g, unsigned slot, uint64_t now_ns);
/* After CEPH_GATE_FULL: how long (ns) the call may wait for a slot before it is refused; 0: now. */
uint64_t ceph_gate_full_wait(struct ceph_gate *g, uint64_t now_ns);
/* Sleep at most ns (CLOCK_MONOTONIC) or until a call leaves; then enter again. */
void ceph_gate_sleep(struct ceph_gate *g, uint64_t ns);
/* Calls inside now (for tests and logs). */
unsigned ceph_gate_inside(struct ceph_gate *g);

#endif
