/*
 * rpc_clnt.h - the client side of the RPC layer: calls the server makes
 * (NFSv4.0 callbacks, NLM GRANTED, NSM, NFSv4.1 backchannel), their replies
 * matched by XID, timeouts and retransmission.
 *
 * Pieces, from the bottom:
 *
 *   rpc_reply_decode()     pure, bounds-checked decoding of every RFC 5531 §9
 *                          reply form (accepted: SUCCESS, PROG_UNAVAIL,
 *                          PROG_MISMATCH, PROC_UNAVAIL, GARBAGE_ARGS,
 *                          SYSTEM_ERR; denied: RPC_MISMATCH, AUTH_ERROR)
 *   rpc_clnt_call_init()   encodes a call header (RFC 5531 §9) into a
 *                          caller-provided buffer; the caller then encodes the
 *                          arguments into cc->args
 *   rpc_clnt_backoff()     the retransmission schedule (pure)
 *   struct rpc_clnt        one channel to one peer: XIDs, the table of calls
 *                          waiting for a reply (hashed by XID), the timer that
 *                          retransmits and expires them, and a send function
 *                          the transport provides (transport/tcp_clnt.c: a new
 *                          TCP connection with record marking)
 *
 * Everything but the pure functions runs on the loop thread. A call object
 * (struct rpc_clnt_call) and its message buffer are the caller's memory: no
 * allocation per call. Call states:
 *
 *   rpc_clnt_call_init() --rpc_clnt_start()--> PENDING --reply with its XID-->
 *        done(OK | ACCEPT_ERR | DENIED)
 *   PENDING --timeout--> resent (same XID: RFC 5531 §9, the XID is how a
 *        server recognises a retransmission) ... after p.retries resends:
 *        done(TIMEOUT)
 *   PENDING --rpc_clnt_fail_all() (channel given up)--> done(CLOSED)
 *   PENDING --rpc_clnt_cancel()--> forgotten, done not called
 *   (with a window: start --window full--> WAITING, unsent, no timeout
 *    --an answer frees the window--> sent, PENDING)
 *
 * done() is called exactly once per started call (unless cancelled), on the
 * loop thread; the call object may be reused or freed from inside it. The
 * results decoder (cc->res) points into the transport's receive buffer and is
 * only valid during done().
 */
#ifndef RNFSD_RPC_CLNT_H
#define RNFSD_RPC_CLNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/queue.h"
#include "rpc/rpc.h"
#include "rpc/xdr.h"

struct loop;
struct loop_ev;

/* A decoded reply header (RFC 5531 §9 struct reply_body). */
struct rpc_reply_hdr {
	uint32_t xid;
	uint32_t reply_stat;  /* RPC_MSG_ACCEPTED or RPC_MSG_DENIED */
	uint32_t accept_stat; /* accepted: RPC_SUCCESS ... RPC_SYSTEM_ERR */
	uint32_t reject_stat; /* denied: RPC_RPC_MISMATCH or RPC_AUTH_ERROR */
	uint32_t auth_stat;   /* denied AUTH_ERROR */
	uint32_t low, high;   /* accepted PROG_MISMATCH, denied RPC_MISMATCH */
	uint32_t verf_flavor; /* accepted: the server's verifier */
	uint32_t verf_len;
	size_t verf_off;      /* accepted: where the verifier's body starts (RPCSEC_GSS checks it) */
	size_t res_off;       /* accepted SUCCESS: where the results start */
};

enum rpc_reply_result {
	RPC_REPLY_OK,        /* *h filled */
	RPC_REPLY_SHORT,     /* the message ends inside the header */
	RPC_REPLY_NOT_REPLY, /* msg_type is not REPLY */
	RPC_REPLY_BAD,       /* an unknown reply_stat, accept_stat or reject_stat,
	                        or a verifier over RFC 5531 §8.2's 400 bytes */
};

/*
 * Pure. Decode the reply header of msg[0 .. len). For SUCCESS, h->res_off is
 * where the procedure's results start; other accept_stat values carry
 * nothing after them but PROG_MISMATCH's low/high.
 */
enum rpc_reply_result rpc_reply_decode(const uint8_t *msg, size_t len, struct rpc_reply_hdr *h);

/* Pure. The XID and msg_type of a message (false: under 8 bytes). */
bool rpc_msg_peek(const uint8_t *msg, size_t len, uint32_t *xid, uint32_t *msg_type);

enum rpc_clnt_status {
	RPC_CLNT_OK,         /* MSG_ACCEPTED SUCCESS: results in cc->res */
	RPC_CLNT_ACCEPT_ERR, /* MSG_ACCEPTED with another accept_stat (cc->reply) */
	RPC_CLNT_DENIED,     /* MSG_DENIED (cc->reply.reject_stat, auth_stat or low/high) */
	RPC_CLNT_BAD_REPLY,  /* a reply with our XID whose header does not decode */
	RPC_CLNT_TIMEOUT,    /* no reply after the last retransmission */
	RPC_CLNT_CLOSED,     /* the channel was given up (connection lost for good) */
};

const char *rpc_clnt_status_name(enum rpc_clnt_status st);

/* Retransmission: the first wait is timeout_ms, each next one doubles, up to
 * max_timeout_ms; after `retries` resends without a reply the call times out. */
struct rpc_clnt_params {
	unsigned timeout_ms;
	unsigned max_timeout_ms;
	unsigned retries;
};

/* Pure. How long to wait for a reply after send number `tries` (1: the first). */
unsigned rpc_clnt_backoff(const struct rpc_clnt_params *p, unsigned tries);

struct rpc_clnt_call {
	/* Set by rpc_clnt_call_init(); the caller encodes the arguments into args. */
	struct xdr_enc args; /* the whole message: header, then arguments */
	uint32_t prog, vers, proc;
	/* Set by the caller before rpc_clnt_start(). */
	void (*done)(struct rpc_clnt_call *cc, enum rpc_clnt_status st);
	void *arg;
	/* Optional (rpc_clnt_call_init sets it NULL): finish the message once its
	 * XID is in, before the first send (RPCSEC_GSS: the header's MIC, the
	 * wrapped arguments, rpc_gss_clnt.h), and again before each
	 * retransmission (RPCSEC_GSS: a new seq_num, RFC 2203 §5.3.3.1). 0, or
	 * -1: rpc_clnt_start fails; a retransmission is not sent. */
	int (*seal)(struct rpc_clnt_call *cc);
	void *seal_arg;

	/* Valid during done(). */
	struct rpc_reply_hdr reply;
	struct xdr_dec res;  /* SUCCESS: the results (base: the reply's first byte) */
	unsigned tries;      /* sends made, retransmissions included */

	/* rpc_clnt private. */
	uint32_t xid;
	uint64_t due_ms;     /* next retransmission or expiry (rpc_clnt clock) */
	struct queue_link link;  /* the XID table */
	struct queue_link wlink; /* waiting for the window (not sent yet) */
	bool pending;
	bool waiting;
};

/*
 * Begin a call message in buf[0 .. cap): RFC 5531 §9 call header with the
 * credential cred (NULL: AUTH_NONE; else AUTH_SYS, appendix A) and an
 * AUTH_NONE verifier. The XID is filled in by rpc_clnt_start(). Arguments go
 * into cc->args next; a message that overflowed buf is refused at start.
 */
void rpc_clnt_call_init(struct rpc_clnt_call *cc, uint8_t *buf, size_t cap, uint32_t prog,
			uint32_t vers, uint32_t proc, const struct rpc_cred *cred);

#define RPC_CLNT_BUCKETS 64u

struct rpc_clnt;
/* The transport sends one whole message (it adds its own framing).
 * 0: sent or queued; -1: not now (the channel is down): the call stays
 * pending and goes out again at its next timeout or rpc_clnt_resend(). */
typedef int (*rpc_clnt_send_fn)(struct rpc_clnt *cl, const uint8_t *msg, size_t len);

struct rpc_clnt {
	struct rpc_clnt_params p;
	rpc_clnt_send_fn send;
	/* At most `window` calls sent and not answered (0: no limit); the rest
	 * wait, unsent and without a timeout, in start order (RFC 8167 §4:
	 * reverse-direction credits over RPC-over-RDMA). */
	unsigned window;
	unsigned in_flight;
	struct queue waitq;     /* of rpc_clnt_call by wlink */
	/* rpc_clnt_attach(): the connection the calls go out on. */
	struct rpc_conn *conn;
	struct rpc_conn_hook conn_hook;
	const char *peer_name;  /* for log lines */
	struct loop_ev *timer;  /* NULL: the owner calls rpc_clnt_tick() (tests) */
	bool timer_armed;
	uint64_t timer_due_ms;
	struct queue pending[RPC_CLNT_BUCKETS]; /* of rpc_clnt_call, by XID hash */
	unsigned n_pending;
	uint32_t next_xid;
	uint64_t replies_unmatched; /* replies whose XID is not pending */
};

/* Loop thread. loop NULL: no timer, the owner drives rpc_clnt_tick(). 0, or -1 (logged). */
int rpc_clnt_init(struct rpc_clnt *cl, struct loop *loop, const struct rpc_clnt_params *p,
		  rpc_clnt_send_fn send, const char *peer_name);
/* Detaches (rpc_clnt_detach), fails every pending call with RPC_CLNT_CLOSED,
 * frees the timer. */
void rpc_clnt_destroy(struct rpc_clnt *cl);

/* Start cc: assign its XID, send, wait for the reply. 0, or -1 if the message
 * overflowed its buffer (done is not called). */
int rpc_clnt_start(struct rpc_clnt *cl, struct rpc_clnt_call *cc);
/* Forget a pending call; its done() will not be called. */
void rpc_clnt_cancel(struct rpc_clnt *cl, struct rpc_clnt_call *cc);

/*
 * A reply message arrived: match it to a pending call by XID and complete it.
 * false if no call is waiting for that XID (a late reply to a call that
 * timed out, or a duplicate): counted and ignored.
 */
bool rpc_clnt_reply(struct rpc_clnt *cl, const uint8_t *msg, size_t len);

/*
 * The loop every rpc_clnt attached to a connection runs on (loop 0, the
 * callback loop; set once at start-up, NULL in tests: everything is direct).
 * A connection owned by another loop ([rnfsd] loops) hands what concerns its
 * client to it: REPLY messages (rpc_clnt_conn_reply) and its close hook.
 */
void rpc_clnt_loop_set(struct loop *l);
/* conn's loop: a REPLY message received on conn, for conn->clnt. false: conn has no client
 * (checked here on loop 0; from another loop the message is copied to loop 0, and dropped
 * there if the client is gone by then). */
bool rpc_clnt_conn_reply(struct rpc_conn *conn, const uint8_t *msg, size_t len);

/* Retransmit what is due and expire what has run out of tries, as of now_ms
 * (rpc_clnt_now_ms() clock). */
void rpc_clnt_tick(struct rpc_clnt *cl, uint64_t now_ms);
/* The channel is back (a new connection): send every pending call again now. */
void rpc_clnt_resend(struct rpc_clnt *cl);
/* The channel is gone for good: complete every pending call with st. */
void rpc_clnt_fail_all(struct rpc_clnt *cl, enum rpc_clnt_status st);

/* Set the window (a new credit grant); waiting calls go out if it opened. */
void rpc_clnt_set_window(struct rpc_clnt *cl, unsigned window);

/*
 * Loop thread. Make calls over an existing connection that carries incoming
 * calls (the NFSv4.1 backchannel, RFC 8167 reverse direction): cl (already
 * rpc_clnt_init()ed, its send function replaced) sends through
 * conn->xprt->ops->send_call, REPLY messages arriving on conn are matched
 * against it (conn->clnt), and when conn closes every pending call completes
 * with RPC_CLNT_CLOSED. The window starts at 1 if unset (RDMA raises it to
 * the client's reverse-direction grant). -1 if the transport cannot send
 * calls, conn already has a client, or conn is closed.
 */
int rpc_clnt_attach(struct rpc_clnt *cl, struct rpc_conn *conn);
/* Unbind from the connection (its reference dropped); pending calls stay
 * pending. rpc_clnt_destroy() detaches too. */
void rpc_clnt_detach(struct rpc_clnt *cl);

uint64_t rpc_clnt_now_ms(void);

#endif
