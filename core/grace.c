/*
 * grace.c - the shared grace clock (grace.h): one end time per protocol,
 * the grace period is the later of them.
 */
#include <time.h>

#include "core/grace.h"

struct grace_clock grace_server;

void grace_clock_hold(struct grace_clock *g, enum grace_holder h, uint64_t now_ms, unsigned seconds)
{
	atomic_store(&g->end_ms[h], seconds ? now_ms + (uint64_t)seconds * 1000u : 0);
}

void grace_clock_release(struct grace_clock *g, enum grace_holder h)
{
	atomic_store(&g->end_ms[h], 0);
}

bool grace_clock_held(const struct grace_clock *g, enum grace_holder h, uint64_t now_ms)
{
	return now_ms < atomic_load(&g->end_ms[h]);
}

bool grace_clock_active(const struct grace_clock *g, uint64_t now_ms)
{
	return grace_clock_left_ms(g, now_ms) > 0;
}

uint64_t grace_clock_left_ms(const struct grace_clock *g, uint64_t now_ms)
{
	uint64_t left = 0;

	for (unsigned h = 0; h < GRACE_HOLDERS; h++) {
		uint64_t end = atomic_load(&g->end_ms[h]);
		if (end > now_ms && end - now_ms > left)
			left = end - now_ms;
	}
	return left;
}

uint64_t grace_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
