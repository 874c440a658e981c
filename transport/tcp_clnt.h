/*
 * tcp_clnt.h - an outgoing TCP connection for the calls the server makes to
 * a client's own RPC service (NFSv4.0 callbacks, NLM GRANTED, NSM): a
 * non-blocking connect from the loop, RFC 5531 §11 record marking
 * (tcp_record.c parses the replies), and the rpc_clnt engine (rpc/rpc_clnt.h)
 * for XIDs, timeouts and retransmission.
 *
 * Loop thread only. Connection states:
 *
 *   IDLE --a call to send--> CONNECTING --connected--> UP (pending calls sent)
 *     ^                          |                      |
 *     |   refused / timed out: retry after reconnect_delay_ms, up to
 *     |   reconnect_max times in a row; then every pending call fails
 *     |   with RPC_CLNT_CLOSED and the channel rests IDLE
 *     +---- error, EOF, oversized reply: closed; reconnect if calls pending
 *
 * After a reconnection every pending call is sent again with its XID (the
 * peer's duplicate request cache recognises it, RFC 5531 §9). Memory: one
 * allocation at tcp_clnt_new() (receive record and send buffer); none per call.
 */
#ifndef RNFSD_TCP_CLNT_H
#define RNFSD_TCP_CLNT_H

#include <sys/socket.h>

#include "rpc/rpc_clnt.h"

struct loop;

struct tcp_clnt_params {
	struct rpc_clnt_params rpc; /* timeouts and retransmissions */
	unsigned max_record;        /* the largest reply accepted (bytes) */
	unsigned send_buf;          /* bytes of calls queued while the socket is full */
	unsigned connect_timeout_ms;
	unsigned reconnect_delay_ms;
	unsigned reconnect_max;     /* failed connects in a row before giving up */
};

struct tcp_clnt;

/* A channel to addr (not connected yet: the first call connects). NULL (logged). */
struct tcp_clnt *tcp_clnt_new(struct loop *loop, const struct sockaddr *addr, socklen_t addr_len,
			      const struct tcp_clnt_params *p);
/* Close; every pending call completes with RPC_CLNT_CLOSED. Not from inside a done(). */
void tcp_clnt_free(struct tcp_clnt *t);

/* Start cc (rpc_clnt_call_init() and its arguments done, cc->done set).
 * 0, or -1 if the message overflowed its buffer or exceeds send_buf. */
int tcp_clnt_call(struct tcp_clnt *t, struct rpc_clnt_call *cc);

/* For tests and statistics. */
struct tcp_clnt_stats {
	unsigned connects;       /* connections established */
	unsigned connect_fails;  /* attempts refused or timed out */
	unsigned disconnects;    /* established connections lost */
	uint64_t unmatched;      /* replies that matched no pending call */
};
void tcp_clnt_stats(const struct tcp_clnt *t, struct tcp_clnt_stats *out);

#endif
