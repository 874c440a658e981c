/*
 * tcp_ctx.c - per-call contexts of the TCP transport.
 *
 * A context is a struct rpc_call with its request buffer (one record,
 * max_record bytes), reply buffer and bulk payload area, in one anonymous
 * mapping (pages are only backed once touched). Contexts are created on
 * demand up to p.max_calls and never freed before tcp_xprt_free(): after
 * warm-up a call allocates nothing. A connection may hold p.conn_max_calls
 * of them at most; when it cannot get one it stops reading (back-pressure)
 * and, if the global pool was the limit, waits in x->waiters (FIFO) for the
 * next context released.
 *
 * Fair sharing: the last x->reserve contexts of the pool only go to a
 * connection that holds none, for a complete record. Connections with calls
 * in flight (perhaps replies their peer never reads) or with a large partial
 * record stop short of it, so a new client's call always finds a context,
 * however many calls a few connections pipeline.
 *
 * Pipes: a context that carries a large READ gets a pipe (kept with it), so
 * the file's pages go to the socket by splice, by reference, as knfsd sends
 * them from the page cache. At most TCP_PIPES_MAX contexts hold one (two
 * fds each; their pages count against the user's pipe limits); the others
 * copy. A pipe left holding bytes (a reply not sent) is closed.
 */
#include "transport/tcp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "core/log.h"

static size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

static struct tcp_ctx *tcp_ctx_alloc(struct tcp_xprt *x)
{
	static struct log_limit lim;
	size_t req = page_round(x->p.max_record);
	size_t reply = page_round(x->p.reply_cap);
	size_t payload = page_round(x->p.payload_cap);
	struct tcp_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		goto err;
	ctx->mem_len = req + reply + payload;
	ctx->mem = mmap(NULL, ctx->mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ctx->mem == MAP_FAILED) {
		free(ctx);
		goto err;
	}
	ctx->x = x;
	ctx->pipe[0] = ctx->pipe[1] = -1;
	ctx->req = ctx->mem;
	ctx->reply = ctx->mem + req;
	ctx->payload = ctx->mem + req + reply;
	ctx->state = TCP_CTX_FREE;
	ctx->call.priv = ctx;
	x->ctx_all[x->n_ctx_alloc++] = ctx;
	return ctx;
err:
	log_limited(&lim, LOG_ERR, "tcp: out of memory for a call context (%u allocated)", x->n_ctx_alloc);
	return NULL;
}

/* Contexts that may still be handed out: free ones and those not allocated yet. */
static unsigned tcp_ctx_avail(const struct tcp_xprt *x)
{
	return x->n_ctx_free + (x->p.max_calls - x->n_ctx_alloc);
}

/* May conn take a context now (leaving its own limit aside)? */
static bool tcp_ctx_allowed(const struct tcp_conn *conn, bool big)
{
	const struct tcp_xprt *x = conn->x;
	unsigned avail = tcp_ctx_avail(x);

	if (avail == 0)
		return false;
	if (big || conn->n_ctx > 0)
		return avail > x->reserve;
	return true;
}

void tcp_waiter_remove(struct tcp_xprt *x, struct tcp_conn *conn)
{
	if (!conn->waiting)
		return;
	queue_remove(&x->waiters, &conn->wlink);
	conn->waiting = false;
}

static void tcp_waiter_add(struct tcp_xprt *x, struct tcp_conn *conn, bool big)
{
	conn->want_big = big;
	if (conn->waiting)
		return;
	conn->waiting = true;
	queue_push(&x->waiters, &conn->wlink);
}

/* The first waiter that may take a context now, or NULL. */
static struct tcp_conn *tcp_waiter_first(struct tcp_xprt *x)
{
	queue_foreach(l, &x->waiters) {
		struct tcp_conn *w = queue_entry(l, struct tcp_conn, wlink);
		if (tcp_ctx_allowed(w, w->want_big))
			return w;
	}
	return NULL;
}

/* Hand conn a context from the free list or a fresh one; the caller checked tcp_ctx_allowed(). */
static struct tcp_ctx *tcp_ctx_take(struct tcp_conn *conn)
{
	struct tcp_xprt *x = conn->x;
	struct tcp_ctx *ctx = queue_pop_entry(&x->ctx_free, struct tcp_ctx, link);

	if (ctx)
		x->n_ctx_free--;
	else
		ctx = tcp_ctx_alloc(x); /* avail > 0: one may still be allocated */
	if (!ctx)
		return NULL;
	ctx->conn = conn;
	ctx->state = TCP_CTX_RECV;
	conn->n_ctx++;
	tcp_conn_get(conn);
	return ctx;
}

struct tcp_ctx *tcp_ctx_get(struct tcp_conn *conn, bool big)
{
	struct tcp_xprt *x = conn->x;
	struct tcp_ctx *ctx = NULL;

	conn->want_big = big;
	if (conn->n_ctx >= x->p.conn_max_calls)
		return NULL; /* woken when one of its own contexts returns */
	if (tcp_ctx_allowed(conn, big))
		ctx = tcp_ctx_take(conn);
	if (!ctx) {
		tcp_waiter_add(x, conn, big);
		return NULL;
	}
	tcp_waiter_remove(x, conn);
	return ctx;
}

struct tcp_ctx *tcp_ctx_try_get(struct tcp_conn *conn)
{
	if (conn->waiting || conn->n_ctx >= conn->x->p.conn_max_calls || !tcp_ctx_allowed(conn, true))
		return NULL;
	return tcp_ctx_take(conn);
}

static void tcp_ctx_pipe_close(struct tcp_ctx *ctx)
{
	if (ctx->pipe[0] < 0)
		return;
	close(ctx->pipe[0]);
	close(ctx->pipe[1]);
	ctx->pipe[0] = ctx->pipe[1] = -1;
	atomic_fetch_sub(&ctx->x->n_pipes, 1);
}

int tcp_ctx_pipe(struct rpc_call *c, size_t *room)
{
	struct tcp_ctx *ctx = c->priv;
	struct tcp_xprt *x = ctx->x;
	int fds[2];

	*room = 0;
	if (ctx->conn->tls != TCP_TLS_OFF)
		return -1; /* TLS records are written from memory (tcp_tls_writev) */
	if (ctx->pipe[1] < 0) {
		if (ctx->pipe_refused || atomic_fetch_add(&x->n_pipes, 1) >= TCP_PIPES_MAX) {
			if (!ctx->pipe_refused)
				atomic_fetch_sub(&x->n_pipes, 1);
			return -1;
		}
		if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
			atomic_fetch_sub(&x->n_pipes, 1);
			return -1; /* out of fds: copied, and asked again next time */
		}
		ctx->pipe[0] = fds[0];
		ctx->pipe[1] = fds[1];
		/* Room for a whole payload, else never (the pipe limits of the user) */
		if (fcntl(fds[1], F_SETPIPE_SZ, (int)x->p.payload_cap) < (int)x->p.payload_cap) {
			tcp_ctx_pipe_close(ctx);
			ctx->pipe_refused = true;
			return -1;
		}
	}
	*room = x->p.payload_cap;
	return ctx->pipe[1];
}

/* A pipe still holding bytes (its reply was not sent, or not all of it) is thrown away. */
static void tcp_ctx_pipe_check(struct tcp_ctx *ctx)
{
	int left = 0;

	if (ctx->call.payload_piped && ctx->pipe[0] >= 0 &&
	    (ioctl(ctx->pipe[0], FIONREAD, &left) < 0 || left > 0))
		tcp_ctx_pipe_close(ctx);
	ctx->call.payload_piped = 0;
}

void tcp_ctx_put(struct tcp_ctx *ctx)
{
	struct tcp_xprt *x = ctx->x;
	struct tcp_conn *conn = ctx->conn;

	tcp_ctx_pipe_check(ctx);
	ctx->state = TCP_CTX_FREE;
	ctx->conn = NULL;
	queue_push_front(&x->ctx_free, &ctx->link);
	x->n_ctx_free++;
	conn->n_ctx--;

	/* Wake whoever waits: this connection if it hit its own limit (and may
	 * take one now; else it waits for the pool from now on), else the first
	 * connection waiting for the pool that may take one now. */
	struct tcp_conn *w;
	bool own = conn->paused && !conn->waiting && conn->state == TCP_CONN_OPEN;
	if (own && tcp_ctx_allowed(conn, conn->want_big)) {
		tcp_conn_resume(conn);
	} else {
		if (own)
			tcp_waiter_add(x, conn, conn->want_big);
		if ((w = tcp_waiter_first(x))) {
			tcp_waiter_remove(x, w);
			tcp_conn_resume(w);
		}
	}
	if (conn->state == TCP_CONN_DRAINING && conn->n_ctx == 0)
		tcp_conn_linger(conn);
	tcp_conn_put(conn);
}

void tcp_ctx_free_all(struct tcp_xprt *x)
{
	for (unsigned i = 0; i < x->n_ctx_alloc; i++) {
		tcp_ctx_pipe_close(x->ctx_all[i]);
		munmap(x->ctx_all[i]->mem, x->ctx_all[i]->mem_len);
		free(x->ctx_all[i]);
	}
	x->n_ctx_alloc = 0;
	x->n_ctx_free = 0;
	queue_init(&x->ctx_free);
}
