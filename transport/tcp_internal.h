/*
 * tcp_internal.h - the TCP transport's objects, shared by its files
 *. A map:
 *
 *   tcp_xprt.c   listeners, accept, parameters, drain and teardown
 *   tcp_conn.c   one connection: receive (record assembly), send (writev),
 *                back-pressure, the one close path
 *   tcp_ctx.c    per-call contexts: allocation, free list, waiters
 *   tcp_record.c RFC 5531 §11 record marking parser (pure)
 *   tcp_clnt.c   an outgoing connection for the calls the server makes
 *                (tcp_clnt.h; shares nothing with the accepting side)
 *   tcp_bc.c     send_call: the server's calls on an accepted connection
 *                (NFSv4.1 backchannel), through a context and the send queue
 *   tcp_tls.c    RPC-with-TLS (RFC 9289) over OpenSSL: the server's TLS
 *                context, the handshake after STARTTLS, TLS reads and writes
 *   tcp_loops.c  several event loops ([rnfsd] loops): a shard per loop,
 *                accepted connections handed round-robin, the drain fan-out
 *
 * Everything of one tcp_xprt runs on its loop's thread; there are no locks.
 * With [rnfsd] loops = N > 1 the listening xprt (loop 0) has N - 1 shards,
 * each a tcp_xprt of its own loop with no listener and its own connections,
 * contexts, waiters and timers (limits divided by N); only the hand-off of
 * an accepted socket, the drain and a back channel call cross loops, as
 * loop_msg messages (tcp_loops.c, tcp_bc.c).
 *
 * Connection states (tcp_conn.state):
 *
 *   OPEN --tcp_conn_drain()--> DRAINING --last context released--> LINGER
 *     |                            |      (tcp_conn_linger: FIN sent)  |
 *     |                            |     peer's EOF, or all sent data  |
 *     |                            |     acknowledged (linger timer)   |
 *     +--error, peer closed, oversized record: tcp_conn_close()--> CLOSED
 *
 * DRAINING and LINGER read and discard whatever the peer still sends: a
 * socket closed with unread input, or closed before the peer acknowledged
 * our last bytes, may reset the connection and destroy replies not yet
 * delivered. DRAINING still answers the calls already received.
 *
 * In CLOSED the socket is closed and the connection unlinked, but the object
 * lives until its last reference goes (tcp_conn_put, the rpc_conn's count):
 * one reference for being open, one per call context it holds, one per
 * callback running on it, and any an upper layer holds (rpc_conn_get). A
 * context whose call completes on a CLOSED connection is just released.
 *
 * Time limits (the sweep timer, tcp_conn_sweep): a record must be complete
 * record_timeout_s after its first byte, however steadily it trickles; replies
 * waiting with no byte written for send_timeout_s close the connection; an
 * OPEN connection with nothing in flight and no traffic for idle_timeout_s is
 * closed (knfsd ages out idle connections too). x->conns is kept least
 * recently active last: when max_connections is reached, the last idle one is
 * closed to admit the newcomer (p.evict_idle).
 *
 * Receive: a record is assembled in the connection's own buffer (rbuf,
 * TCP_RBUF_SIZE) and only takes a call context once it is complete, or once
 * it outgrows rbuf (a large WRITE: the bytes so far move to the context's
 * request buffer). A record that arrives whole in one read goes straight
 * from the stage to a context (rm_whole_record). A slow partial record therefore pins nothing shared
 * unless it is large, and large partial records never take the reserve.
 * While replies cannot be written (tx_blocked) the connection is not read:
 * a peer that reads nothing stops taking contexts.
 *
 * Call context states (tcp_ctx.state):
 *
 *   FREE --tcp_ctx_get()--> RECV --record complete--> CALL (rpc layer, workers)
 *     ^   (record complete,                              |
 *     |    or larger than rbuf)         send_reply(): drop, or queue
 *     +------------------tcp_ctx_put()------ SEND <------+
 *                        (reply written, or connection closed)
 *
 * Sharing the pool (tcp_ctx.c): a connection holds at most conn_max_calls;
 * the last quarter of max_calls (the reserve) only goes to a connection with
 * no context, for a complete record, so a few connections with many calls
 * in flight, unread replies or large partial records never keep a new
 * client's call waiting.
 *
 * RPC-with-TLS (RFC 9289), per connection (tcp_conn.tls), beneath the
 * record reader and writer, which stay the same:
 *
 *   OFF --AUTH_TLS probe answered STARTTLS (rpc.tls_starting: nothing more
 *    |   is read)--> its reply written: tcp_tls_start() --> HANDSHAKE
 *    |                                                        |
 *    |        SSL_do_handshake() on read/write events (loop) --+--> ON
 *    |        failure, or record-timeout: tcp_conn_close()
 *
 * In ON, reads and writes go through OpenSSL (kernel TLS beneath it when the
 * kernel offers it, else its userspace records): tcp_tls_readv() decrypts
 * straight into the stage and record buffers; tcp_tls_writev() writes the
 * send queue's bytes through the connection's one-record buffer (tls_wbuf).
 * READ payloads are not spliced from pipes on a TLS connection.
 */
#ifndef RNFSD_TCP_INTERNAL_H
#define RNFSD_TCP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/uio.h>

#include "core/loop.h"
#include "core/queue.h"
#include "core/stats.h"
#include "rpc/rpc.h"
#include "transport/tcp.h"
#include "transport/tcp_record.h"

#define TCP_STAGE_SIZE (64u * 1024) /* per connection: bytes read but not parsed */
#define TCP_RBUF_SIZE (64u * 1024)  /* per connection: a record assembled before it takes a context */
#define TCP_CTX_IOV (2 + 3 * RPC_MAX_DDP_OUT) /* mark, segments around each payload, pad */
#define TCP_RX_ROUNDS 16            /* reads per readable event, for fairness */
#define TCP_BUF_IDLE_S 2            /* idle this long: stage and rbuf pages given back (sweep) */

struct loop_ev;

enum tcp_conn_state { TCP_CONN_OPEN, TCP_CONN_DRAINING, TCP_CONN_LINGER, TCP_CONN_CLOSED };
enum tcp_ctx_state { TCP_CTX_FREE, TCP_CTX_RECV, TCP_CTX_CALL, TCP_CTX_SEND };

struct tcp_ctx {
	struct rpc_call call;     /* call.priv points back here */
	struct tcp_xprt *x;
	struct tcp_conn *conn;    /* holder, while not FREE */
	enum tcp_ctx_state state;
	struct queue_link link;   /* x->ctx_free, or the connection's send queue */
	uint8_t *mem;             /* one mapping: request | reply | payload */
	size_t mem_len;
	uint8_t *req;             /* the assembled record (x->p.max_record bytes) */
	uint8_t *reply;           /* x->p.reply_cap bytes */
	uint8_t *payload;         /* x->p.payload_cap bytes */
	uint32_t mark;            /* reply record mark, big-endian */
	struct iovec iov[TCP_CTX_IOV]; /* reply bytes not yet written: iov[iov_i .. iov_n);
	                                  iov_base NULL: that many bytes wait in pipe */
	unsigned iov_n, iov_i;
	int pipe[2];              /* READ data spliced from files ([1]) to the socket ([0]),
	                             made on first use (tcp_ctx_pipe); -1: none */
	bool pipe_refused;        /* the pipe could not be made large enough: never again */
	bool starttls;            /* this reply answers an AUTH_TLS probe with STARTTLS: once it is
	                             written the connection turns to TLS (RFC 9289 §4.1) */
};

enum tcp_tls_state { TCP_TLS_OFF, TCP_TLS_HANDSHAKE, TCP_TLS_ON };
/* Who makes a TLS connection's records (tcp_conn.tls_desc, low bits). */
enum { TCP_TLS_DESC_USER = 1, TCP_TLS_DESC_KTLS_TX = 2, TCP_TLS_DESC_KTLS_RX = 3, TCP_TLS_DESC_KTLS = 4 };
#define TCP_TLS_WBUF 16384u /* one TLS record's plaintext (RFC 8446 §5.1: 2^14) */

struct ssl_st;
struct ssl_ctx_st;

struct tcp_conn {
	struct rpc_conn rpc;      /* peer, name, ops: what the RPC and NFS layers see */
	struct stats_conn stats;  /* registered while not CLOSED */
	struct tcp_xprt *x;
	int fd;
	enum tcp_conn_state state;
	struct loop_ev *ev_read;  /* persistent; armed unless paused */
	struct loop_ev *ev_write; /* persistent; armed while a write would block */
	bool reading;
	bool writing;
	bool paused;              /* no context available: reading stopped */
	bool waiting;             /* paused on the global limit: on x->waiters */
	bool want_big;            /* waiting for a context for a record larger than rbuf */
	bool tx_blocked;          /* replies wait for the socket: reading stopped */

	/* receive */
	struct timespec rx_last;  /* last progress on input (CLOCK_MONOTONIC) */
	struct timespec rec_start; /* when the current record's first byte was read */
	struct rm_state rm;
	struct tcp_ctx *rx;       /* the context the current record goes to (else rbuf) */
	uint8_t *stage;           /* TCP_STAGE_SIZE bytes */
	uint8_t *rbuf;            /* TCP_RBUF_SIZE bytes (same mapping as stage) */
	bool bufs_dirty;          /* stage/rbuf written since the sweep last gave their pages back */
	bool rec_ready;           /* a complete record waits in rbuf for a context */
	size_t stage_off, stage_len; /* unparsed bytes: stage[stage_off .. stage_len) */
	unsigned n_ctx;           /* contexts held (RECV + CALL + SEND) */

	/* RPC-with-TLS (tcp_tls.c); OFF on a plain connection */
	enum tcp_tls_state tls;
	struct ssl_st *ssl;       /* from HANDSHAKE on; freed with the connection */
	uint8_t *tls_wbuf;        /* TCP_TLS_WBUF bytes: a record's plaintext handed to SSL_write */
	size_t tls_wlen;          /* bytes of it SSL_write still owes (it wants them again, same) */
	_Atomic uint32_t tls_desc; /* for the stats thread (tcp_tls_stats_conn): 0 plain, else
	                              TCP_TLS_DESC_* | rpc_xprtsec << 4, set once the handshake is done */

	/* send: replies in the order they completed */
	struct queue sendq;             /* of tcp_ctx, by link */
	struct timespec tx_last;        /* last send progress, or when replies began to wait */

	struct tcp_conn *prev, *next;   /* x->conns, most recently active first */
	struct queue_link wlink;        /* x->waiters */
};

struct tcp_xprt {
	struct xprt base;         /* the generic interface (rpc/xprt.h); first */
	struct loop *loop;
	struct tcp_params p;
	int lfd[CONFIG_MAX_LISTEN];
	int lfamily[CONFIG_MAX_LISTEN];
	struct loop_ev *lev[CONFIG_MAX_LISTEN];
	unsigned n_listen;
	struct loop_ev *accept_retry; /* re-arms listeners after EMFILE */
	struct loop_ev *linger_timer; /* while draining: closes LINGER conns once acknowledged */
	struct loop_ev *sweep_timer;  /* closes connections stalled in the middle of a record */

	struct tcp_conn *conns;   /* open and draining connections, most recently active first */
	struct tcp_conn *conns_tail; /* least recently active */
	unsigned n_conns;

	struct tcp_ctx **ctx_all; /* every context allocated, [p.max_calls] */
	unsigned n_ctx_alloc;
	struct queue ctx_free;    /* of tcp_ctx (a stack: the warmest first) */
	unsigned n_ctx_free;
	unsigned reserve;         /* contexts kept for connections holding none */
	struct queue waiters;     /* of tcp_conn by wlink: paused for want of a context, FIFO */
	atomic_uint n_pipes;      /* contexts holding a pipe (made by workers too): TCP_PIPES_MAX */

	struct ssl_ctx_st *tls_ctx; /* [tls] certificate and key loaded; NULL: no TLS offered */

	bool draining;
	void (*drain_done)(void *arg);
	void *drain_arg;

	/* Several loops (tcp_loops.c). The listening xprt: */
	struct tcp_xprt **shards; /* [n_shards], one per loop after loop 0 */
	unsigned n_shards;
	unsigned rr;              /* the next connection's loop: 0 itself, i shards[i - 1] */
	unsigned drains_left;     /* draining: itself and the shards not yet drained */
	void (*loops_done)(void *arg); /* draining: the caller's done, once all are */
	void *loops_done_arg;
	unsigned max_connections_all, max_calls_all; /* the configured limits, before division */
	/* A shard: */
	struct tcp_xprt *parent;  /* the listening xprt; NULL: this is it */
	unsigned index;           /* its loop's number (0: the listening xprt) */
	unsigned home;            /* workers home of x->loop: its connections' rpc_conn.home */
	struct loop_msg drain_msg, drained_msg; /* loop 0 -> shard: drain; shard -> loop 0: drained */
};

/* tcp_conn.c */
void tcp_conn_new(struct tcp_xprt *x, int fd, const struct sockaddr_storage *ss, socklen_t len);
void tcp_conn_get(struct tcp_conn *conn);
void tcp_conn_put(struct tcp_conn *conn);
void tcp_conn_release(struct rpc_conn *rc);
void tcp_send_reply(struct rpc_call *c);
void tcp_conn_close(struct tcp_conn *conn, const char *why);
void tcp_conn_drain(struct tcp_conn *conn);
/* DRAINING with nothing left to send: half-close (FIN after the last reply). */
void tcp_conn_linger(struct tcp_conn *conn);
/* LINGER: close once the peer acknowledged everything we sent. */
void tcp_conn_linger_check(struct tcp_conn *conn);
/* Close conn if a record, its replies or its silence exceeded their limit (see above). */
void tcp_conn_sweep(struct tcp_conn *conn, const struct timespec *now);
/* OPEN, nothing in flight, no partial record: may be aged out or evicted. */
bool tcp_conn_idle(const struct tcp_conn *conn);
/* x->conns order: link at the head, unlink, move to the head. */
void tcp_conn_link(struct tcp_xprt *x, struct tcp_conn *conn);
void tcp_conn_unlink(struct tcp_xprt *x, struct tcp_conn *conn);
void tcp_conn_touch(struct tcp_conn *conn);
/* Start reading again (deferred to the loop: never recursive). */
void tcp_conn_resume(struct tcp_conn *conn);
/* Read events on or off as the connection's state says (staged bytes parsed
 * on the next loop turn); the write event on or off. */
void tcp_conn_rearm(struct tcp_conn *conn);
void tcp_write_arm(struct tcp_conn *conn, bool on);

/* tcp_ctx.c */
/* A context for conn, or NULL: conn is at its limit, or the pool (for big, a
 * record larger than rbuf, or a conn already holding one: the pool less the
 * reserve) is used up (conn is then queued as a waiter). */
struct tcp_ctx *tcp_ctx_get(struct tcp_conn *conn, bool big);
/* A context for a call the server sends on conn (tcp_bc.c), or NULL: never
 * from the reserve, never while conn waits for the pool, and never queueing
 * conn as a waiter (its reading is left alone). */
struct tcp_ctx *tcp_ctx_try_get(struct tcp_conn *conn);
/* Back to the free list; wakes a paused connection. A draining conn left
 * without contexts moves on to LINGER. */
void tcp_ctx_put(struct tcp_ctx *ctx);
void tcp_ctx_free_all(struct tcp_xprt *x);
/* xprt_ops.payload_pipe: the write end of c's context's pipe, empty, with
 * room for p.payload_cap bytes; -1 if none can be had (then copied). */
int tcp_ctx_pipe(struct rpc_call *c, size_t *room);
void tcp_waiter_remove(struct tcp_xprt *x, struct tcp_conn *conn);

/* tcp_bc.c */
int tcp_send_call(struct rpc_conn *rc, const uint8_t *msg, size_t len); /* xprt_ops.send_call */

/* tcp_xprt.c */
void tcp_xprt_conn_closed(struct tcp_xprt *x);
/* Admit an accepted socket on x (x's loop): max_connections, evicting the longest idle one. */
void tcp_xprt_admit(struct tcp_xprt *x, int fd, const struct sockaddr_storage *ss, socklen_t len);
/* Arm x's sweep timer for its time limits (x's loop, or before it runs). */
void tcp_xprt_sweep_start(struct tcp_xprt *x);

/* tcp_loops.c */
/* x's loop 0 accept: hand fd to the next loop round-robin (x itself included). */
void tcp_loops_accept(struct tcp_xprt *x, int fd, const struct sockaddr_storage *ss, socklen_t len);
/* Listening xprt, draining: drain every shard on its loop; done(arg) on loop 0 once all are. */
void tcp_loops_drain(struct tcp_xprt *x, void (*done)(void *arg), void *arg);
/* Main thread, loops stopped: stop / free every shard. */
void tcp_loops_stop(struct tcp_xprt *x);
void tcp_loops_free(struct tcp_xprt *x);
/* Loop 0, after x->tls_ctx was reloaded: every shard takes it on its loop. */
void tcp_loops_tls_reload(struct tcp_xprt *x);
/* Pure: the loop (0 .. n-1) the next connection goes to, advancing *rr (round-robin). */
unsigned tcp_loops_next(unsigned *rr, unsigned n);
/* Pure: each of n loops' share of a limit, its ceiling, at least min. */
unsigned tcp_loops_share(unsigned total, unsigned n, unsigned min);

/* tcp_tls.c */
/* x->tls_ctx from x->p's certificate, key and CA (none: 0, no TLS). 0, or -1 (logged). */
int tcp_tls_xprt_init(struct tcp_xprt *x);
void tcp_tls_xprt_free(struct tcp_xprt *x);
/* The STARTTLS reply was written: start the server side of the handshake
 * (driven by the read and write events; tcp_tls_handshake). Closes conn if
 * it cannot (bytes or calls after the probe, no memory). */
void tcp_tls_start(struct tcp_conn *conn);
/* One handshake step, loop thread; on success the connection is ON. */
void tcp_tls_handshake(struct tcp_conn *conn);
/* readv(2) through TLS: bytes read, 0 at the peer's close, -1 with errno (EAGAIN). */
ssize_t tcp_tls_readv(struct tcp_conn *conn, const struct iovec *iov, int n);
/* writev(2) through TLS: bytes of v[] written (at most TCP_TLS_WBUF), -1 with errno. */
ssize_t tcp_tls_writev(struct tcp_conn *conn, const struct iovec *v, int n);
/* Decrypted bytes wait in OpenSSL (the socket may have none). */
bool tcp_tls_pending(const struct tcp_conn *conn);
/* LINGER: send close_notify before the FIN (best effort). */
void tcp_tls_shutdown(struct tcp_conn *conn);
void tcp_tls_conn_free(struct tcp_conn *conn);
/* The stats document's members of a TCP connection in TLS ("xprtsec", "tls_records"; none for a
 * plain one): its stats_conn_ext_fn, on the stats thread under the registry lock. */
void tcp_tls_stats_conn(struct json_out *j, const struct stats_conn *sc);

#endif
