/*
 * rpc_conn.c - the transport-independent part of a connection's life (see
 * xprt.h): the reference count upper layers may hold from any thread, the
 * close hooks, and the one "closed" transition the transport reports.
 *
 *   rpc_conn_init() [transport: refs 1] --rpc_conn_closed() [loop]--> closed
 *      hooks run once, in the order added; the transport drops its reference
 *      when done; the last rpc_conn_put() calls xprt->ops->conn_release().
 */
#include "rpc/xprt.h"

void rpc_conn_init(struct rpc_conn *conn, struct xprt *x)
{
	conn->xprt = x;
	conn->no_port_privilege = x && x->ops && x->ops->no_port_privilege;
	conn->xprtsec = RPC_XPRTSEC_NONE; /* RFC 9289: plain until a transport says otherwise */
	conn->tls_offer = conn->tls_starting = false;
	atomic_init(&conn->ulp, NULL);
	conn->clnt = NULL;
	conn->home = 0;
	conn->reply_max = 0;
	atomic_init(&conn->refs, 1);
	pthread_mutex_init(&conn->lock, NULL);
	pthread_cond_init(&conn->hook_done, NULL);
	queue_init(&conn->hooks);
	conn->hook_running = NULL;
	conn->closed = false;
}

void rpc_conn_get(struct rpc_conn *conn)
{
	atomic_fetch_add_explicit(&conn->refs, 1, memory_order_relaxed);
}

void rpc_conn_put(struct rpc_conn *conn)
{
	if (atomic_fetch_sub_explicit(&conn->refs, 1, memory_order_acq_rel) != 1)
		return;
	pthread_mutex_destroy(&conn->lock);
	pthread_cond_destroy(&conn->hook_done);
	conn->xprt->ops->conn_release(conn);
}

bool rpc_conn_is_closed(struct rpc_conn *conn)
{
	pthread_mutex_lock(&conn->lock);
	bool closed = conn->closed;
	pthread_mutex_unlock(&conn->lock);
	return closed;
}

bool rpc_conn_hook_add(struct rpc_conn *conn, struct rpc_conn_hook *h)
{
	pthread_mutex_lock(&conn->lock);
	bool ok = !conn->closed;
	if (ok)
		queue_push(&conn->hooks, &h->link);
	pthread_mutex_unlock(&conn->lock);
	return ok;
}

bool rpc_conn_hook_remove(struct rpc_conn *conn, struct rpc_conn_hook *h)
{
	pthread_mutex_lock(&conn->lock);
	bool removed = queue_remove(&conn->hooks, &h->link);
	/* Running on another thread: its memory is in use until it returns. */
	while (!removed && conn->hook_running == h && !pthread_equal(conn->hook_thread, pthread_self()))
		pthread_cond_wait(&conn->hook_done, &conn->lock);
	pthread_mutex_unlock(&conn->lock);
	return removed;
}

void rpc_conn_closed(struct rpc_conn *conn)
{
	pthread_mutex_lock(&conn->lock);
	if (conn->closed) {
		pthread_mutex_unlock(&conn->lock);
		return;
	}
	conn->closed = true;
	conn->hook_thread = pthread_self();

	/* A hook may drop the upper layer's reference: keep conn until the end. */
	rpc_conn_get(conn);
	struct rpc_conn_hook *h;
	while ((h = queue_pop_entry(&conn->hooks, struct rpc_conn_hook, link))) {
		conn->hook_running = h; /* one at a time, each taken under the lock */
		pthread_mutex_unlock(&conn->lock);
		h->closed(conn, h);
		pthread_mutex_lock(&conn->lock);
		conn->hook_running = NULL;
		pthread_cond_broadcast(&conn->hook_done);
	}
	pthread_mutex_unlock(&conn->lock);
	rpc_conn_put(conn);
}
