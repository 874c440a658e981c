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
 */
#include "transport/tcp_internal.h"

#include <stdlib.h>
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

void tcp_ctx_put(struct tcp_ctx *ctx)
{
	struct tcp_xprt *x = ctx->x;
	struct tcp_conn *conn = ctx->conn;

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
		munmap(x->ctx_all[i]->mem, x->ctx_all[i]->mem_len);
		free(x->ctx_all[i]);
	}
	x->n_ctx_alloc = 0;
	x->n_ctx_free = 0;
	queue_init(&x->ctx_free);
}
