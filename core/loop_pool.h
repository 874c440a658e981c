/*
 * loop_pool.h - the event loops after loop 0 ([rnfsd] loops): each runs on a
 * thread of its own (every signal blocked there: loop 0 handles them). Loop 0
 * is the main thread's and not part of the pool. Main thread only.
 */
#ifndef RNFSD_CORE_LOOP_POOL_H
#define RNFSD_CORE_LOOP_POOL_H

struct loop;

#define LOOP_POOL_MAX 64 /* loops in all, loop 0 included */

/* [rnfsd] loops as asked (0: one per online CPU) to the number of loops to run, 1 .. LOOP_POOL_MAX. */
unsigned loop_pool_count(unsigned asked, long online_cpus);
/* Create n - 1 loops (not yet running). 0, or -1 (logged; nothing left). */
int loop_pool_create(unsigned n);
/* Loop i (1 .. n - 1) of the pool. */
struct loop *loop_pool_get(unsigned i);
/* Start a thread per loop. 0, or -1 (logged; those started are stopped). */
int loop_pool_run(void);
/* Break every loop and join its thread (idempotent); the loops stay allocated. */
void loop_pool_stop(void);
/* After loop_pool_stop(): loop_flush() every loop of the pool; how many messages ran. */
unsigned loop_pool_flush(void);
/* After loop_pool_stop() and once nothing uses the loops: free them. */
void loop_pool_free(void);

#endif
