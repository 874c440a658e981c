/*
 * loop_pool.c - the extra event loops of loop_pool.h. pool.loops[0] is unused
 * (loop 0 is the main thread's); threads[i] runs loops[i] while running is
 * set. Nothing here is on a hot path: created at start-up, joined at the end.
 */
#include "core/loop_pool.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "core/log.h"
#include "core/loop.h"

static struct {
	unsigned n;                           /* loops in all (1: no pool) */
	struct loop *loops[LOOP_POOL_MAX];    /* [1 .. n) */
	pthread_t threads[LOOP_POOL_MAX];
	unsigned started;                     /* threads started: [1 .. started] */
} pool = { .n = 1 };

unsigned loop_pool_count(unsigned asked, long online_cpus)
{
	unsigned n = asked ? asked : online_cpus > 0 ? (unsigned)online_cpus : 1;

	return n > LOOP_POOL_MAX ? LOOP_POOL_MAX : n;
}

int loop_pool_create(unsigned n)
{
	if (n < 1 || n > LOOP_POOL_MAX || pool.n != 1) {
		log_err("loops: bad count %u (1..%u) or already created", n, LOOP_POOL_MAX);
		return -1;
	}
	for (unsigned i = 1; i < n; i++) {
		pool.loops[i] = loop_new();
		if (!pool.loops[i]) {
			log_err("loops: cannot create event loop %u", i);
			pool.n = i;
			loop_pool_free();
			return -1;
		}
	}
	pool.n = n;
	return 0;
}

struct loop *loop_pool_get(unsigned i)
{
	return i > 0 && i < pool.n ? pool.loops[i] : NULL;
}

static void *loop_pool_main(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are loop 0's */
	if (loop_run(arg) != 0)
		log_err("loops: an event loop failed");
	return NULL;
}

int loop_pool_run(void)
{
	for (unsigned i = 1; i < pool.n; i++) {
		int rc = pthread_create(&pool.threads[i], NULL, loop_pool_main, pool.loops[i]);
		if (rc != 0) {
			log_err("loops: pthread_create: %s", strerror(rc));
			loop_pool_stop();
			return -1;
		}
		pool.started = i;
	}
	return 0;
}

void loop_pool_stop(void)
{
	for (unsigned i = 1; i <= pool.started; i++)
		loop_break(pool.loops[i]);
	for (unsigned i = 1; i <= pool.started; i++)
		pthread_join(pool.threads[i], NULL);
	pool.started = 0;
}

unsigned loop_pool_flush(void)
{
	unsigned n = 0;

	for (unsigned i = 1; i < pool.n && !pool.started; i++)
		n += loop_flush(pool.loops[i]);
	return n;
}

void loop_pool_free(void)
{
	for (unsigned i = 1; i < pool.n; i++) {
		loop_free(pool.loops[i]);
		pool.loops[i] = NULL;
	}
	pool.n = 1;
}
