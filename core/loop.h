/*
 * loop.h - the daemon's event loop: a small private interface over libevent,
 * so the rest of the code does not depend on libevent's details. A loop is
 * run by one thread, which owns its sockets, timers and signals; from other
 * threads only loop_ev_trigger() (worker completions) and loop_send() (a
 * message run on the loop's thread) may be called. The daemon runs one loop
 * per [rnfsd] loops (core/loop_pool.h); loop 0 is the main thread's.
 */
#ifndef RNFSD_CORE_LOOP_H
#define RNFSD_CORE_LOOP_H

#include <stdbool.h>
#include <sys/time.h>

#include "core/queue.h"

struct loop;
struct loop_ev;

/* Event flags; values match libevent's so they pass through unchanged. */
enum {
	LOOP_TIMEOUT = 0x01,
	LOOP_READ = 0x02,
	LOOP_WRITE = 0x04,
	LOOP_PERSIST = 0x10, /* stays armed after firing */
};

typedef void (*loop_cb)(int fd, short what, void *arg);

struct loop *loop_new(void);
void loop_free(struct loop *l);
/* Runs until loop_break(); returns 0, or -1 on error. */
int loop_run(struct loop *l);
/* Is the calling thread inside loop_run()? (The thread that owns the RDMA
 * verbs files: the kernel refuses their writes from a thread whose
 * credentials changed since it opened them, so nothing on it may switch
 * identity: backend/local/identity.c checks.) */
bool loop_is_loop_thread(void);
/* The loop the calling thread runs (inside loop_run()), or NULL. */
struct loop *loop_current(void);
/* Any thread: CPU seconds the thread running l has used (0 when l does not run). */
double loop_busy_seconds(struct loop *l);
void loop_break(struct loop *l);

/* Create an event (not yet armed). NULL on allocation failure. */
struct loop_ev *loop_io(struct loop *l, int fd, short what, loop_cb cb, void *arg);
struct loop_ev *loop_timer(struct loop *l, bool persist, loop_cb cb, void *arg);
struct loop_ev *loop_signal(struct loop *l, int signo, loop_cb cb, void *arg);
/* An event other threads fire with loop_ev_trigger(); armed on creation. */
struct loop_ev *loop_async(struct loop *l, loop_cb cb, void *arg);

int loop_ev_add(struct loop_ev *e, const struct timeval *timeout);
int loop_ev_del(struct loop_ev *e);
void loop_ev_free(struct loop_ev *e);
void loop_ev_trigger(struct loop_ev *e);

/* A message for another loop's thread, embedded in its owner (no allocation
 * here). loop_send() may be called from any thread: fn(m) then runs on l's
 * thread, messages in the order they were sent; m must stay valid until then
 * (fn may free it). Messages still queued when l is freed are dropped:
 * loop_flush() them first. */
struct loop_msg {
	void (*fn)(struct loop_msg *m);
	struct queue_link link;
};
void loop_send(struct loop *l, struct loop_msg *m);
/* l stopped (not inside loop_run()): run what was sent to it and not yet run, on the calling
 * thread, as l's thread would have. How many ran. */
unsigned loop_flush(struct loop *l);

#endif
