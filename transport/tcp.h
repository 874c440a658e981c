/*
 * tcp.h - ONC RPC over TCP (RFC 5531 §11 record marking).
 *
 * Listeners on the configured addresses; each accepted connection reads
 * records into per-call contexts (struct rpc_call plus request, reply and
 * bulk payload buffers, taken from a free list and reused), hands them to
 * rpc_call_receive(), and writes replies as they complete, in any order, with
 * writev straight from the reply and payload buffers. Everything runs on the
 * loop thread. With [tls] a certificate, a connection may switch to
 * RPC-with-TLS (RFC 9289) after an AUTH_TLS probe: TLS then sits beneath the
 * same record layer (tcp_tls.c; tcp_internal.h has the states).
 *
 * Use (main thread), directly or through the generic interface (rpc/xprt.h,
 * tcp_xprt_base(x)->ops):
 *   struct tcp_params p;  tcp_params_from_config(&p, cfg);   (adjust p)
 *   struct tcp_xprt *x = tcp_xprt_create(loop, &p);   ops->start: listen
 *   (or both at once: tcp_xprt_start(loop, &p))
 *   ... loop_run() ...   SIGTERM: tcp_xprt_drain(x, done, arg) -> done() -> loop_break()
 *   tcp_xprt_stop(x);  workers_stop();  tcp_xprt_free(x);
 */
#ifndef RNFSD_TCP_H
#define RNFSD_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>

#include "conf/config.h"

struct loop;
struct tcp_xprt;
struct xprt;

#define TCP_REPLY_CAP (256u * 1024)   /* RPC reply header + inline results per call */
#define TCP_PAYLOAD_CAP (1024u * 1024) /* bulk reply data (READ) per call */
/* Contexts holding a pipe for READ data (tcp_ctx.c): 48 of 1 MiB stay under
 * Linux's default per-user soft limit on pipe buffers (pipe-user-pages-soft,
 * 64 MiB), which a daemon without CAP_SYS_RESOURCE meets. */
#define TCP_PIPES_MAX 48u

struct tcp_params {
	struct config_listen listen[CONFIG_MAX_LISTEN];
	unsigned n_listen;
	unsigned max_connections; /* more: see evict_idle */
	size_t max_record;        /* larger records close the connection */
	unsigned conn_max_calls;  /* calls a connection may have in flight (back-pressure) */
	unsigned max_calls;       /* call contexts in all (each ~max_record + 1.25 MiB, lazily); the
	                             last quarter only goes to connections with none in flight */
	size_t reply_cap;
	size_t payload_cap;
	unsigned record_timeout_s; /* a record must be complete this long after its first byte,
	                              else the connection closes; 0: never */
	unsigned send_timeout_s;   /* replies waiting and no byte of them written for this long
	                              (the peer reads nothing) closes the connection; 0: never */
	unsigned idle_timeout_s;   /* nothing in flight and no traffic for this long closes the
	                              connection; 0: never */
	bool evict_idle;           /* at max_connections, close the least recently active idle
	                              connection to admit a newcomer (false: refuse the newcomer) */
	/* RPC-with-TLS (RFC 9289), [tls] in rnfsd.conf: PEM files; tls_cert "" offers no TLS. */
	char tls_cert[PATH_MAX];   /* certificate chain, server's first */
	char tls_key[PATH_MAX];    /* its private key */
	char tls_ca[PATH_MAX];     /* CAs client certificates are verified against; "": none asked */
};

/* Defaults from rnfsd.conf: max_calls 16*threads+64 and conn_max_calls
 * 2*threads+16 unless [tcp] max-calls / conn-max-calls say otherwise,
 * record-timeout, send-timeout, idle-timeout, evict_idle true. */
void tcp_params_from_config(struct tcp_params *p, const struct rnfsd_config *cfg);
/* Only p's [tls] files (tls_key defaults to the certificate's file). */
void tcp_params_tls_from_config(struct tcp_params *p, const struct rnfsd_config *cfg);

/* A transport instance that does not listen yet (NULL on allocation failure). */
struct tcp_xprt *tcp_xprt_create(struct loop *loop, const struct tcp_params *p);
/* Its generic interface: ops->start opens the listeners as tcp_xprt_start() does. */
struct xprt *tcp_xprt_base(struct tcp_xprt *x);

/*
 * tcp_xprt_create() and start: open every listener (SO_REUSEADDR; IPV6_V6ONLY on IPv6 ones so 0.0.0.0 and
 * :: coexist) and start accepting. NULL (logged) if a listener cannot be
 * opened, unless it is optional and the host lacks its address or address
 * family (then it is skipped with a warning); NULL too if none is left.
 */
struct tcp_xprt *tcp_xprt_start(struct loop *loop, const struct tcp_params *p);

/* Bound port of the first listener (useful with port 0); 0 if none. */
uint16_t tcp_xprt_port(const struct tcp_xprt *x);

/* True if a listener of address family af (AF_INET, AF_INET6) is open. */
bool tcp_xprt_listens(const struct tcp_xprt *x, int af);

/* Connections open now, every loop's (any thread; a snapshot). */
unsigned tcp_xprt_conns(const struct tcp_xprt *x);

/*
 * Several event loops ([rnfsd] loops, tcp_loops.c). Main thread, before the
 * loops run and before start: give x (loop 0's, the listening one) a shard
 * on loop l, whose connections complete on workers home `home`; x's limits
 * (max_connections, max_calls) are divided among its loops. 0, or -1 (logged).
 */
int tcp_xprt_add_loop(struct tcp_xprt *x, struct loop *l, unsigned home);
/* Its loops (1 + shards); connections open on loop i now (any thread; a snapshot). */
unsigned tcp_xprt_loops(const struct tcp_xprt *x);
unsigned tcp_xprt_loop_conns(const struct tcp_xprt *x, unsigned i);
/* Main thread, before serving, loops > 1: the "loops" section of the statistics (per loop:
 * TCP connections, CPU seconds). 0 or -1. */
int tcp_loops_stats_section_add(struct tcp_xprt *x);

/*
 * Graceful stop: close the listeners, stop taking calls (later input is read
 * and discarded), let calls in flight finish and their replies be written,
 * then half-close each connection and close it once the peer acknowledged
 * everything (or closed); when no connection is left call done(arg) once
 * (perhaps before returning). A peer that does not read its replies holds
 * this up: bound it with a timer, then loop_break() and tcp_xprt_free().
 */
void tcp_xprt_drain(struct tcp_xprt *x, void (*done)(void *arg), void *arg);

/* Close the listeners and every connection now (calls still with workers
 * release their contexts when they complete). */
void tcp_xprt_stop(struct tcp_xprt *x);

/* rnfsd --check-config: can cfg's [tls] files be loaded? 0 (or no TLS), or -1 (logged). */
int tcp_tls_check_config(const struct rnfsd_config *cfg);

/* Loop thread (SIGHUP): read cfg's [tls] files again for new handshakes; TLS
 * connections keep theirs. 0, or -1 (logged; the running ones are kept). */
int tcp_xprt_tls_reload(struct tcp_xprt *x, const struct rnfsd_config *cfg);

/* Main thread, before serving: the "tls" section of the statistics (RPC-with-TLS
 * handshakes, kernel or userspace records; tcp_tls.c). 0 or -1. */
int tcp_tls_stats_section_add(void);

/* Close everything and free (after workers_stop(): no call may still be in a worker). */
void tcp_xprt_free(struct tcp_xprt *x);

#endif
