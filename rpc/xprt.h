/*
 * xprt.h - the one interface every transport (TCP, RPC-over-RDMA) offers the
 * daemon and the RPC layer, and the per-connection object they share.
 *
 * A struct xprt is one transport instance (TCP: its listeners; RDMA: its
 * RDMA-CM listeners and event channel); there may be several of each kind and
 * none is a process-wide singleton. The daemon drives every instance the same
 * way, on the loop thread unless said otherwise:
 *
 *   x = tcp_xprt_create(...) / rdma_xprt_create(...)   not yet listening
 *   x->ops->start(x)        listen and accept
 *   x->ops->drain(x, done)  graceful stop: accept no more, take no new calls,
 *                           finish the calls in flight and send their replies,
 *                           then disconnect; done(arg) once no connection is left
 *   x->ops->stop(x)         close every connection now (after drain, or when the
 *                           daemon's drain timeout expired)
 *   workers_stop()          the last completions reach send_reply, which releases
 *   x->ops->free(x)         main thread: free what is left
 *
 * Per connection, the RPC layer calls send_reply() for every call it was given,
 * and send_call() for the calls it makes to the peer (rpc/rpc_clnt.h).
 *
 * struct rpc_conn (embedded in the transport's connection object) carries
 * the peer, a reference count upper layers may hold from any thread
 * (rpc_conn_get/put; the transport's own reference is dropped when it is done
 * with the connection, and the memory goes with the last one), an upper-layer
 * slot (ulp: an NFSv4.1 session, a backchannel) and close hooks: callbacks run
 * once, on the loop thread, when the connection closes.
 */
#ifndef RNFSD_RPC_XPRT_H
#define RNFSD_RPC_XPRT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/queue.h"

struct rpc_call;
struct rpc_clnt;
struct rpc_conn;
struct xprt;

struct xprt_ops {
	const char *name; /* "tcp", "rdma" */
	/*
	 * The peer's source port carries no privilege meaning on this transport
	 * (RPC-over-RDMA: clients do not follow the reserved-port convention of
	 * TCP and UDP; the Linux client's kernel connects from the ephemeral
	 * RDMA-CM port the RDMA stack picks, even for root's mounts), so
	 * exports(5) "secure" is met by the transport itself: knfsd marks every
	 * RDMA request secure. false: the port must be below 1024.
	 */
	bool no_port_privilege;

	/* Transport-wide (loop/main thread). start: 0, or -1 (logged). */
	int (*start)(struct xprt *x);
	void (*drain)(struct xprt *x, void (*done)(void *arg), void *arg);
	void (*stop)(struct xprt *x);
	void (*free)(struct xprt *x);
	unsigned (*conns)(const struct xprt *x); /* open connections (any thread, a snapshot) */

	/* Per connection, loop thread. Send the reply in c (c->drop: send
	 * nothing) and release c's context. */
	void (*send_reply)(struct rpc_call *c);
	/* Per connection, loop thread: send a call message (the RPC layer's
	 * rpc_clnt; RFC 8167 reverse direction, the NFSv4.1 backchannel). 0: sent
	 * or queued; -1: not now (no room, connection closing), the caller's
	 * retransmission tries again. NULL: the transport sends no calls. */
	int (*send_call)(struct rpc_conn *conn, const uint8_t *msg, size_t len);
	/* Any thread: the last reference to conn went; free its memory. */
	void (*conn_release)(struct rpc_conn *conn);
	/* The thread running c's handler: the write end of c's payload pipe
	 * (rpc.h rpc_payload_pipe), empty, and its room; -1 if none can be had.
	 * NULL: the transport sends no bulk data from pipes. */
	int (*payload_pipe)(struct rpc_call *c, size_t *room);
};

struct xprt {
	const struct xprt_ops *ops;
};

/* A close hook, embedded in the upper layer's object. */
struct rpc_conn_hook {
	/* Loop thread, once, when the connection closes (conn is still valid). */
	void (*closed)(struct rpc_conn *conn, struct rpc_conn_hook *h);
	struct queue_link link;
};

/* Per-connection state visible to the RPC and upper layers; embedded in the
 * transport's connection object, which outlives every call that points to it. */
struct rpc_conn {
	struct xprt *xprt;
	const char *xprt_name; /* "tcp" or "rdma" */
	bool no_port_privilege; /* xprt->ops->no_port_privilege, set by rpc_conn_init */
	size_t reply_max;       /* transport: the largest reply buffer a call here gets (0: unknown) */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	char peer_name[64]; /* "addr:port", for log lines */

	/* Upper-layer slot (e.g. the NFSv4.1 session bound to it); the RPC layer
	 * never touches it. Use atomics or the upper layer's lock. */
	_Atomic(void *) ulp;

	/* RFC 9289 transport security: set by the transport
	 * on the loop thread before any call protected by it is read, read by
	 * handlers on any thread (the call's hand-off orders it). */
	uint8_t xprtsec;        /* enum rpc_xprtsec: what protects this connection now */
	bool tls_offer;         /* transport: the connection may switch to TLS (an AUTH_TLS
	                           probe is answered STARTTLS) */
	bool tls_starting;      /* RPC layer, loop thread: a probe was answered STARTTLS; the
	                           transport reads nothing more until that reply is written,
	                           then runs the server side of the TLS handshake */

	/* The workers' home (core/workers.h) of the event loop that owns this
	 * connection: its calls' completions run there. 0 (loop 0) unless the
	 * transport hands connections to other loops ([rnfsd] loops). */
	unsigned home;

	/* Loop 0's thread (the callback loop): the calls this server makes over
	 * this connection (rpc_clnt.h; an NFSv4.1 backchannel). Set by the upper
	 * layer that owns it; REPLY messages received here are matched against it
	 * (rpc_clnt_conn_reply(): from another loop, on loop 0). */
	struct rpc_clnt *clnt;

	/* RPC layer private (rpc_conn.c). */
	atomic_uint refs;
	pthread_mutex_t lock;      /* hooks, closed, hook_running */
	pthread_cond_t hook_done;  /* hook_running went back to NULL */
	struct queue hooks;        /* of rpc_conn_hook */
	struct rpc_conn_hook *hook_running; /* the close path runs it now, lock released */
	pthread_t hook_thread;     /* the thread running the close path */
	bool closed;
};

/* RFC 9289 transport security of a connection; exports' xprtsec= names
 * these (conf/exports.h EXPORT_XPRTSEC_*: bit 1 << mode). */
enum rpc_xprtsec {
	RPC_XPRTSEC_NONE = 0, /* plain TCP or RDMA */
	RPC_XPRTSEC_TLS = 1,  /* TLS, the client presented no certificate (RFC 9289 §5.2.1) */
	RPC_XPRTSEC_MTLS = 2, /* TLS with a client certificate verified against the CA (§5.2.2) */
};

/* Transport, before the connection is used: one reference (the transport's), no hooks. */
void rpc_conn_init(struct rpc_conn *conn, struct xprt *x);

/*
 * Transport, loop thread, in its one close path: mark conn closed and run
 * the close hooks. Idempotent. The transport then drops its reference when
 * it no longer needs the object.
 */
void rpc_conn_closed(struct rpc_conn *conn);

/* Any thread. */
void rpc_conn_get(struct rpc_conn *conn);
void rpc_conn_put(struct rpc_conn *conn);
bool rpc_conn_is_closed(struct rpc_conn *conn);

/*
 * Any thread. Add a close hook; false if conn already closed (the hook will
 * never run). Remove: true if removed before it ran; false if the close path
 * took it: it has run, and when the close path runs it on another thread now,
 * remove waits until it returned, so the caller may reuse h's memory at once.
 * Hooks therefore must not wait for anything a remover may hold.
 */
bool rpc_conn_hook_add(struct rpc_conn *conn, struct rpc_conn_hook *h);
bool rpc_conn_hook_remove(struct rpc_conn *conn, struct rpc_conn_hook *h);

#endif
