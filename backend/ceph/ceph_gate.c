/*
 * ceph_gate.c - per-instance admission into libcephfs (ceph_gate.h).
 *
 * libcephfs bounds OSD and monitor operations (op-timeout) but not requests
 * the MDS must journal: with the OSDs down a CREATE waits until they return,
 * and nothing cancels it. Each such call holds a worker thread, so without
 * a bound a few clients retrying on one Ceph export would take them all and
 * starve every other export. The gate caps the calls inside at once (a call
 * finding it full waits for a slot only while every call inside is younger
 * than CEPH_GATE_PATIENCE_NS, so a busy cluster queues and a silent one
 * refuses). The gate is stuck while a call inside has outlived the stuck
 * limit and no call has returned for as long: the cluster stopped answering.
 * Then new calls are refused at once, but one at a time is let in as a probe
 * (a free slot permitting): the calls already inside stay where they are
 * (they cannot be cancelled), at most one new call joins them, and the first
 * call that returns, the probe or any other, ends it. One slow call on a
 * cluster that still answers (a freshly started one, a busy machine) thus
 * does not turn the export into "JUKEBOX at once"; a silent one holds at
 * most max-calls workers, as before.
 *
 *   open --(a call past the limit, none returned for as long: enter)--> stuck
 *   stuck --(any call returns: leave)--> open
 */
#include <string.h>
#include <time.h>

#include "backend/ceph/ceph_gate.h"

void ceph_gate_init(struct ceph_gate *g, unsigned max, unsigned stuck_secs)
{
	pthread_condattr_t ca;

	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->freed, &ca);
	pthread_condattr_destroy(&ca);
	g->max = max < 1 || max > CEPH_GATE_SLOTS ? CEPH_GATE_SLOTS : max;
	g->probe = CEPH_GATE_NO_PROBE;
	g->stuck_ns = (uint64_t)stuck_secs * 1000000000u;
}

void ceph_gate_destroy(struct ceph_gate *g)
{
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->freed);
}

/* Is any call inside older than the stuck limit? (lock held) */
static bool ceph_gate_past_limit(const struct ceph_gate *g, uint64_t now_ns)
{
	if (!g->stuck_ns || !g->inside)
		return false;
	for (unsigned i = 0; i < g->max; i++)
		if (g->since[i] && now_ns > g->since[i] && now_ns - g->since[i] > g->stuck_ns)
			return true;
	return false;
}

/* Stuck: a call past the limit, and none returned within the limit. (lock held) */
static bool ceph_gate_is_stuck(const struct ceph_gate *g, uint64_t now_ns)
{
	if (!ceph_gate_past_limit(g, now_ns))
		return false;
	return !g->last_done || now_ns < g->last_done || now_ns - g->last_done > g->stuck_ns;
}

/* Take a free slot for a call entering at now_ns. (lock held, inside < max) */
static unsigned ceph_gate_take(struct ceph_gate *g, uint64_t now_ns)
{
	for (unsigned i = 0; i < g->max; i++)
		if (!g->since[i]) {
			g->since[i] = now_ns ? now_ns : 1;
			g->inside++;
			return i;
		}
	return CEPH_GATE_NO_PROBE; /* not reached: inside < max */
}

enum ceph_gate_verdict ceph_gate_enter(struct ceph_gate *g, uint64_t now_ns, unsigned *slot,
				       enum ceph_gate_event *ev)
{
	enum ceph_gate_verdict v = CEPH_GATE_FULL;
	bool stuck;

	*ev = CEPH_GATE_SAME;
	pthread_mutex_lock(&g->lock);
	stuck = ceph_gate_is_stuck(g, now_ns);
	if (stuck && !g->stuck) {
		g->stuck = true;
		*ev = CEPH_GATE_BECAME_STUCK;
	}
	/* (stuck ends at a leave: g->stuck is not cleared here, so the log says it once each way) */
	if (g->inside < g->max && (!stuck || g->probe == CEPH_GATE_NO_PROBE)) {
		*slot = ceph_gate_take(g, now_ns);
		if (stuck)
			g->probe = *slot; /* the one call that may find out the cluster answers again */
		v = CEPH_GATE_IN;
	} else if (stuck) {
		v = CEPH_GATE_STUCK;
		g->refused_stuck++;
	} else {
		g->refused_full++;
	}
	pthread_mutex_unlock(&g->lock);
	return v;
}

enum ceph_gate_event ceph_gate_leave(struct ceph_gate *g, unsigned slot, uint64_t now_ns)
{
	enum ceph_gate_event ev = CEPH_GATE_SAME;

	pthread_mutex_lock(&g->lock);
	if (slot < g->max && g->since[slot]) {
		g->since[slot] = 0;
		g->inside--;
		if (slot == g->probe)
			g->probe = CEPH_GATE_NO_PROBE;
		g->last_done = now_ns ? now_ns : 1;
		pthread_cond_signal(&g->freed);
		/* A call returned: the cluster answers (the calls still inside may be the ones it cannot
		 * serve; new calls find out for themselves, and stuck comes back only after another
		 * stuck limit without a return). */
		if (g->stuck) {
			g->stuck = false;
			ev = CEPH_GATE_ANSWERS_AGAIN;
		}
	}
	pthread_mutex_unlock(&g->lock);
	return ev;
}

uint64_t ceph_gate_full_wait(struct ceph_gate *g, uint64_t now_ns)
{
	uint64_t oldest = now_ns, wait = 0;

	pthread_mutex_lock(&g->lock);
	for (unsigned i = 0; i < g->max; i++)
		if (g->since[i] && g->since[i] < oldest)
			oldest = g->since[i];
	if (g->inside && now_ns - oldest < CEPH_GATE_PATIENCE_NS)
		wait = CEPH_GATE_PATIENCE_NS - (now_ns - oldest);
	pthread_mutex_unlock(&g->lock);
	return wait;
}

void ceph_gate_sleep(struct ceph_gate *g, uint64_t ns)
{
	struct timespec until;
	uint64_t end;

	clock_gettime(CLOCK_MONOTONIC, &until);
	end = (uint64_t)until.tv_sec * 1000000000u + (uint64_t)until.tv_nsec + ns;
	until.tv_sec = (time_t)(end / 1000000000u);
	until.tv_nsec = (long)(end % 1000000000u);
	pthread_mutex_lock(&g->lock);
	if (g->inside >= g->max)
		(void)pthread_cond_timedwait(&g->freed, &g->lock, &until);
	pthread_mutex_unlock(&g->lock);
}

unsigned ceph_gate_inside(struct ceph_gate *g)
{
	unsigned n;

	pthread_mutex_lock(&g->lock);
	n = g->inside;
	pthread_mutex_unlock(&g->lock);
	return n;
}
