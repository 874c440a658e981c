/*
 * rpc_clnt.c - outgoing RPC calls (see rpc_clnt.h): call header encoding,
 * reply header decoding (RFC 5531 §9), XID matching, timeouts and
 * retransmission on one loop timer per channel. Every client attached to a
 * connection runs on clnt_loop (loop 0); what a connection owned by another
 * event loop has for it (a reply, its close) is copied into a clnt_hop and
 * sent there (loop_send): callbacks are rare, so the copy is malloc'd.
 */
#include "rpc/rpc_clnt.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/log.h"
#include "core/loop.h"
#include "rpc/rpc_internal.h"

static struct log_limit lim_reply;
static struct loop *clnt_loop; /* rpc_clnt_loop_set(); NULL: every call direct */

/* A connection's news for its client, from the connection's loop to clnt_loop. */
struct clnt_hop {
	struct loop_msg m;
	struct rpc_conn *conn;  /* a reference, dropped on clnt_loop */
	struct rpc_clnt *cl;    /* the close hook's client; NULL: a REPLY message */
	size_t len;
	uint8_t msg[];          /* the REPLY message's bytes */
};

bool rpc_msg_peek(const uint8_t *msg, size_t len, uint32_t *xid, uint32_t *msg_type)
{
	struct xdr_dec d;

	xdr_dec_init(&d, msg, len);
	return xdr_dec_u32(&d, xid) && xdr_dec_u32(&d, msg_type);
}

/* RFC 5531 §9 accepted_reply: opaque_auth verf; accept_stat; then per stat. */
static enum rpc_reply_result rpc_reply_accepted(struct xdr_dec *d, struct rpc_reply_hdr *h)
{
	const uint8_t *body;

	if (!xdr_dec_u32(d, &h->verf_flavor) || !xdr_dec_u32(d, &h->verf_len))
		return RPC_REPLY_SHORT;
	/* RFC 5531 §8.2: an opaque_auth body is at most 400 bytes. */
	if (h->verf_len > RPC_AUTH_MAX_BYTES)
		return RPC_REPLY_BAD;
	h->verf_off = xdr_dec_pos(d);
	if (!(body = xdr_dec_inline(d, XDR_ALIGN(h->verf_len))) || !xdr_dec_u32(d, &h->accept_stat))
		return RPC_REPLY_SHORT;
	switch (h->accept_stat) {
	case RPC_SUCCESS:
		h->res_off = xdr_dec_pos(d);
		return RPC_REPLY_OK;
	case RPC_PROG_MISMATCH: /* struct { unsigned int low; unsigned int high; } mismatch_info */
		return xdr_dec_u32(d, &h->low) && xdr_dec_u32(d, &h->high) ? RPC_REPLY_OK
									    : RPC_REPLY_SHORT;
	case RPC_PROG_UNAVAIL:
	case RPC_PROC_UNAVAIL:
	case RPC_GARBAGE_ARGS:
	case RPC_SYSTEM_ERR:
		return RPC_REPLY_OK; /* "void" */
	default:
		return RPC_REPLY_BAD;
	}
}

/* RFC 5531 §9 rejected_reply: RPC_MISMATCH low/high, or AUTH_ERROR auth_stat. */
static enum rpc_reply_result rpc_reply_denied(struct xdr_dec *d, struct rpc_reply_hdr *h)
{
	if (!xdr_dec_u32(d, &h->reject_stat))
		return RPC_REPLY_SHORT;
	switch (h->reject_stat) {
	case RPC_RPC_MISMATCH:
		return xdr_dec_u32(d, &h->low) && xdr_dec_u32(d, &h->high) ? RPC_REPLY_OK
									    : RPC_REPLY_SHORT;
	case RPC_AUTH_ERROR:
		return xdr_dec_u32(d, &h->auth_stat) ? RPC_REPLY_OK : RPC_REPLY_SHORT;
	default:
		return RPC_REPLY_BAD;
	}
}

enum rpc_reply_result rpc_reply_decode(const uint8_t *msg, size_t len, struct rpc_reply_hdr *h)
{
	struct xdr_dec d;
	uint32_t msg_type;

	memset(h, 0, sizeof(*h));
	xdr_dec_init(&d, msg, len);
	/* RFC 5531 §9: struct rpc_msg { xid; union switch (msg_type) { REPLY: reply_body } } */
	if (!xdr_dec_u32(&d, &h->xid) || !xdr_dec_u32(&d, &msg_type))
		return RPC_REPLY_SHORT;
	if (msg_type != RPC_MSG_REPLY)
		return RPC_REPLY_NOT_REPLY;
	if (!xdr_dec_u32(&d, &h->reply_stat))
		return RPC_REPLY_SHORT;
	switch (h->reply_stat) {
	case RPC_MSG_ACCEPTED:
		return rpc_reply_accepted(&d, h);
	case RPC_MSG_DENIED:
		return rpc_reply_denied(&d, h);
	default:
		return RPC_REPLY_BAD;
	}
}

const char *rpc_clnt_status_name(enum rpc_clnt_status st)
{
	static const char *const names[] = {
		[RPC_CLNT_OK] = "ok",
		[RPC_CLNT_ACCEPT_ERR] = "accept error",
		[RPC_CLNT_DENIED] = "denied",
		[RPC_CLNT_BAD_REPLY] = "bad reply",
		[RPC_CLNT_TIMEOUT] = "timeout",
		[RPC_CLNT_CLOSED] = "closed",
	};
	return (unsigned)st < sizeof(names) / sizeof(names[0]) ? names[st] : "?";
}

unsigned rpc_clnt_backoff(const struct rpc_clnt_params *p, unsigned tries)
{
	uint64_t t = p->timeout_ms ? p->timeout_ms : 1;

	for (unsigned i = 1; i < tries && t < p->max_timeout_ms; i++)
		t *= 2;
	if (p->max_timeout_ms && t > p->max_timeout_ms)
		t = p->max_timeout_ms;
	return (unsigned)t;
}

void rpc_clnt_call_init(struct rpc_clnt_call *cc, uint8_t *buf, size_t cap, uint32_t prog,
			uint32_t vers, uint32_t proc, const struct rpc_cred *cred)
{
	struct xdr_enc *e = &cc->args;

	cc->prog = prog;
	cc->vers = vers;
	cc->proc = proc;
	cc->tries = 0;
	cc->pending = false;
	cc->seal = NULL;
	xdr_enc_init(e, buf, cap);
	/* RFC 5531 §9: xid (rpc_clnt_start), CALL, rpcvers 2, prog, vers, proc, cred, verf. */
	xdr_enc_u32(e, 0);
	xdr_enc_u32(e, RPC_MSG_CALL);
	xdr_enc_u32(e, RPC_VERSION);
	xdr_enc_u32(e, prog);
	xdr_enc_u32(e, vers);
	xdr_enc_u32(e, proc);
	if (!cred || cred->flavor != RPC_AUTH_SYS) {
		xdr_enc_u32(e, RPC_AUTH_NONE);
		xdr_enc_u32(e, 0);
	} else {
		/* RFC 5531 appendix A: stamp, machinename<255>, uid, gid, gids<16>. */
		uint32_t ng = cred->ngroups < RPC_AUTH_SYS_MAX_GIDS ? cred->ngroups : RPC_AUTH_SYS_MAX_GIDS;
		xdr_enc_u32(e, RPC_AUTH_SYS);
		xdr_enc_u32(e, 4 * (5 + ng));
		xdr_enc_u32(e, 0); /* stamp */
		xdr_enc_u32(e, 0); /* machinename: empty */
		xdr_enc_u32(e, cred->uid);
		xdr_enc_u32(e, cred->gid);
		xdr_enc_u32(e, ng);
		for (uint32_t i = 0; i < ng; i++)
			xdr_enc_u32(e, cred->groups[i]);
	}
	xdr_enc_u32(e, RPC_AUTH_NONE); /* verifier */
	xdr_enc_u32(e, 0);
}

uint64_t rpc_clnt_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct queue *rpc_clnt_bucket(struct rpc_clnt *cl, uint32_t xid)
{
	return &cl->pending[(xid * 2654435761u) >> 26 & (RPC_CLNT_BUCKETS - 1)];
}

static struct rpc_clnt_call *rpc_clnt_find(struct rpc_clnt *cl, uint32_t xid)
{
	queue_foreach(l, rpc_clnt_bucket(cl, xid)) {
		struct rpc_clnt_call *cc = container_of(l, struct rpc_clnt_call, link);
		if (cc->xid == xid)
			return cc;
	}
	return NULL;
}

/* Arm the timer for the earliest due call (none pending: disarm). */
static void rpc_clnt_rearm(struct rpc_clnt *cl)
{
	uint64_t due = UINT64_MAX;

	for (unsigned b = 0; b < RPC_CLNT_BUCKETS && cl->n_pending; b++) {
		queue_foreach(l, &cl->pending[b]) {
			const struct rpc_clnt_call *cc = container_of(l, struct rpc_clnt_call, link);
			if (cc->due_ms < due)
				due = cc->due_ms;
		}
	}
	if (!cl->timer)
		return;
	if (due == UINT64_MAX) {
		if (cl->timer_armed)
			loop_ev_del(cl->timer);
		cl->timer_armed = false;
		return;
	}
	if (cl->timer_armed && cl->timer_due_ms == due)
		return;
	uint64_t now = rpc_clnt_now_ms(), wait = due > now ? due - now : 0;
	struct timeval tv = {.tv_sec = (time_t)(wait / 1000), .tv_usec = (suseconds_t)(wait % 1000) * 1000};
	loop_ev_add(cl->timer, &tv);
	cl->timer_armed = true;
	cl->timer_due_ms = due;
}

static void rpc_clnt_timer_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct rpc_clnt *cl = arg;
	cl->timer_armed = false;
	rpc_clnt_tick(cl, rpc_clnt_now_ms());
}

int rpc_clnt_init(struct rpc_clnt *cl, struct loop *loop, const struct rpc_clnt_params *p,
		  rpc_clnt_send_fn send, const char *peer_name)
{
	memset(cl, 0, sizeof(*cl));
	cl->p = *p;
	cl->send = send;
	cl->peer_name = peer_name;
	for (unsigned b = 0; b < RPC_CLNT_BUCKETS; b++)
		queue_init(&cl->pending[b]);
	queue_init(&cl->waitq);
	/* Unpredictable first XID: a restarted server's calls are not taken for
	 * retransmissions of its previous life's (RFC 5531 §9 on xid). */
	if (getrandom(&cl->next_xid, sizeof(cl->next_xid), GRND_NONBLOCK) != sizeof(cl->next_xid))
		cl->next_xid = (uint32_t)rpc_clnt_now_ms() ^ (uint32_t)(uintptr_t)cl;
	if (loop && !(cl->timer = loop_timer(loop, false, rpc_clnt_timer_cb, cl))) {
		log_err("rpc: %s: cannot create the call timer", peer_name);
		return -1;
	}
	return 0;
}

void rpc_clnt_destroy(struct rpc_clnt *cl)
{
	rpc_clnt_detach(cl);
	rpc_clnt_fail_all(cl, RPC_CLNT_CLOSED);
	if (cl->timer)
		loop_ev_free(cl->timer);
	cl->timer = NULL;
}

static void rpc_clnt_unlink(struct rpc_clnt *cl, struct rpc_clnt_call *cc)
{
	queue_remove(rpc_clnt_bucket(cl, cc->xid), &cc->link);
	if (cc->waiting)
		queue_remove(&cl->waitq, &cc->wlink);
	else
		cl->in_flight--;
	cc->waiting = false;
	cc->pending = false;
	cl->n_pending--;
}

/* One send; a refused send counts as a try too (the schedule keeps its shape). */
/* A sealed call is sealed afresh for each retransmission (RPCSEC_GSS: a new seq_num and header MIC,
 * RFC 2203 §5.3.3.1). false: it cannot be; it is not sent (its wait runs on). */
static bool rpc_clnt_reseal(struct rpc_clnt_call *cc)
{
	return !cc->seal || (cc->seal(cc) == 0 && !cc->args.overflow);
}

static void rpc_clnt_transmit(struct rpc_clnt *cl, struct rpc_clnt_call *cc, uint64_t now)
{
	cc->tries++;
	cc->due_ms = now + rpc_clnt_backoff(&cl->p, cc->tries);
	if (cc->tries > 1 && !rpc_clnt_reseal(cc))
		return;
	(void)cl->send(cl, cc->args.base, xdr_enc_len(&cc->args));
}

static bool rpc_clnt_window_open(const struct rpc_clnt *cl)
{
	return !cl->window || cl->in_flight < cl->window;
}

/* Send the calls waiting for the window, as far as it goes now. */
static void rpc_clnt_pump(struct rpc_clnt *cl)
{
	struct rpc_clnt_call *cc;
	uint64_t now = 0;

	while (rpc_clnt_window_open(cl) &&
	       (cc = queue_pop_entry(&cl->waitq, struct rpc_clnt_call, wlink))) {
		if (!now)
			now = rpc_clnt_now_ms();
		cc->waiting = false;
		cl->in_flight++;
		rpc_clnt_transmit(cl, cc, now);
	}
}

void rpc_clnt_set_window(struct rpc_clnt *cl, unsigned window)
{
	cl->window = window;
	rpc_clnt_pump(cl);
	rpc_clnt_rearm(cl);
}

int rpc_clnt_start(struct rpc_clnt *cl, struct rpc_clnt_call *cc)
{
	if (cc->args.overflow || xdr_enc_len(&cc->args) < 40)
		return -1;
	/* Skip XIDs still pending after a wrap (a very long-lived call). */
	do
		cc->xid = cl->next_xid++;
	while (cc->xid == 0 || rpc_clnt_find(cl, cc->xid));
	xdr_enc_patch_u32(&cc->args, 0, cc->xid);
	if (cc->seal && (cc->seal(cc) != 0 || cc->args.overflow))
		return -1; /* RPC_GSS: the header's MIC covers the XID (RFC 2203 §5.3.1) */
	cc->tries = 0;
	cc->pending = true;
	queue_push(rpc_clnt_bucket(cl, cc->xid), &cc->link);
	cl->n_pending++;
	cc->waiting = true;
	cc->due_ms = UINT64_MAX; /* no timeout before it is sent */
	queue_push(&cl->waitq, &cc->wlink);
	rpc_clnt_pump(cl);
	rpc_clnt_rearm(cl);
	return 0;
}

void rpc_clnt_cancel(struct rpc_clnt *cl, struct rpc_clnt_call *cc)
{
	if (!cc->pending)
		return;
	rpc_clnt_unlink(cl, cc);
	rpc_clnt_pump(cl);
	rpc_clnt_rearm(cl);
}

/* The status a decoded reply header gives the caller (RFC 5531 §9). */
static enum rpc_clnt_status rpc_clnt_reply_status(const struct rpc_reply_hdr *h)
{
	if (h->reply_stat == RPC_MSG_DENIED)
		return RPC_CLNT_DENIED;
	return h->accept_stat == RPC_SUCCESS ? RPC_CLNT_OK : RPC_CLNT_ACCEPT_ERR;
}

bool rpc_clnt_reply(struct rpc_clnt *cl, const uint8_t *msg, size_t len)
{
	uint32_t xid, msg_type;
	struct rpc_clnt_call *cc;

	if (!rpc_msg_peek(msg, len, &xid, &msg_type) || msg_type != RPC_MSG_REPLY ||
	    !(cc = rpc_clnt_find(cl, xid))) {
		cl->replies_unmatched++;
		log_limited(&lim_reply, LOG_INFO, "rpc: %s: reply of %zu bytes matches no pending call, ignored",
			    cl->peer_name, len);
		return false;
	}
	rpc_clnt_unlink(cl, cc);
	enum rpc_clnt_status st;
	switch (rpc_reply_decode(msg, len, &cc->reply)) {
	case RPC_REPLY_OK:
		st = rpc_clnt_reply_status(&cc->reply);
		break;
	default:
		log_limited(&lim_reply, LOG_NOTICE, "rpc: %s: undecodable reply header for xid 0x%08x",
			    cl->peer_name, xid);
		st = RPC_CLNT_BAD_REPLY;
		break;
	}
	xdr_dec_init(&cc->res, msg, len);
	if (st == RPC_CLNT_OK)
		(void)xdr_dec_inline(&cc->res, cc->reply.res_off);
	rpc_clnt_pump(cl);
	rpc_clnt_rearm(cl);
	cc->done(cc, st);
	return true;
}

void rpc_clnt_tick(struct rpc_clnt *cl, uint64_t now_ms)
{
	struct queue expired = QUEUE_INIT;

	for (unsigned b = 0; b < RPC_CLNT_BUCKETS; b++) {
		queue_foreach_safe(l, n, &cl->pending[b]) {
			struct rpc_clnt_call *cc = container_of(l, struct rpc_clnt_call, link);
			if (cc->due_ms > now_ms)
				continue;
			if (cc->tries > cl->p.retries) {
				rpc_clnt_unlink(cl, cc);
				queue_push(&expired, &cc->link);
			} else {
				rpc_clnt_transmit(cl, cc, now_ms);
			}
		}
	}
	rpc_clnt_pump(cl);
	rpc_clnt_rearm(cl);
	/* done() may start new calls: call it once the table is consistent. */
	struct rpc_clnt_call *cc;
	while ((cc = queue_pop_entry(&expired, struct rpc_clnt_call, link))) {
		memset(&cc->reply, 0, sizeof(cc->reply));
		cc->done(cc, RPC_CLNT_TIMEOUT);
	}
}

void rpc_clnt_resend(struct rpc_clnt *cl)
{
	uint64_t now = rpc_clnt_now_ms();

	for (unsigned b = 0; b < RPC_CLNT_BUCKETS; b++)
		queue_foreach(l, &cl->pending[b]) {
			struct rpc_clnt_call *cc = container_of(l, struct rpc_clnt_call, link);
			if (cc->waiting)
				continue;
			/* Not a retransmission of the schedule's: keep tries, restart the wait. */
			cc->due_ms = now + rpc_clnt_backoff(&cl->p, cc->tries);
			if (rpc_clnt_reseal(cc))
				(void)cl->send(cl, cc->args.base, xdr_enc_len(&cc->args));
		}
	rpc_clnt_rearm(cl);
}

void rpc_clnt_fail_all(struct rpc_clnt *cl, enum rpc_clnt_status st)
{
	struct queue failed = QUEUE_INIT;

	for (unsigned b = 0; b < RPC_CLNT_BUCKETS; b++)
		queue_foreach_safe(l, n, &cl->pending[b]) {
			struct rpc_clnt_call *cc = container_of(l, struct rpc_clnt_call, link);
			rpc_clnt_unlink(cl, cc);
			queue_push(&failed, &cc->link);
		}
	rpc_clnt_rearm(cl);
	struct rpc_clnt_call *cc;
	while ((cc = queue_pop_entry(&failed, struct rpc_clnt_call, link))) {
		memset(&cc->reply, 0, sizeof(cc->reply));
		cc->done(cc, st);
	}
}

/* rpc_clnt's send for a client attached to a connection. */
static int rpc_clnt_conn_send(struct rpc_clnt *cl, const uint8_t *msg, size_t len)
{
	if (!cl->conn || rpc_conn_is_closed(cl->conn))
		return -1;
	return cl->conn->xprt->ops->send_call(cl->conn, msg, len);
}

/* clnt_loop: conn closed under cl. */
static void rpc_clnt_conn_lost(struct rpc_clnt *cl, struct rpc_conn *conn)
{
	if (conn->clnt == cl)
		conn->clnt = NULL;
	rpc_clnt_fail_all(cl, RPC_CLNT_CLOSED);
}

/* On another loop than clnt_loop (not on the main thread at shutdown, when the loops are stopped). */
static bool rpc_clnt_elsewhere(void)
{
	struct loop *here = loop_current();

	return clnt_loop && here && here != clnt_loop;
}

/* clnt_loop: what a connection of another loop sent over (clnt_hop_send). */
static void rpc_clnt_hop_run(struct loop_msg *m)
{
	struct clnt_hop *h = container_of(m, struct clnt_hop, m);

	if (h->cl) {
		if (h->cl->conn == h->conn) /* else detached meanwhile: nothing of it left to fail */
			rpc_clnt_conn_lost(h->cl, h->conn);
	} else if (h->conn->clnt) {
		rpc_clnt_reply(h->conn->clnt, h->msg, h->len);
	}
	rpc_conn_put(h->conn);
	free(h);
}

/* The connection's loop: copy (cl, or a REPLY message) over to clnt_loop. 0, or -1 (no memory). */
static int rpc_clnt_hop_send(struct rpc_conn *conn, struct rpc_clnt *cl, const uint8_t *msg, size_t len)
{
	struct clnt_hop *h = malloc(sizeof(*h) + len);

	if (!h) {
		log_limited(&lim_reply, LOG_WARNING, "rpc: %s: no memory to pass a back channel event on",
			    conn->peer_name);
		return -1;
	}
	h->m.fn = rpc_clnt_hop_run;
	h->conn = conn;
	h->cl = cl;
	h->len = len;
	if (len)
		memcpy(h->msg, msg, len);
	rpc_conn_get(conn);
	loop_send(clnt_loop, &h->m);
	return 0;
}

void rpc_clnt_loop_set(struct loop *l)
{
	clnt_loop = l;
}

bool rpc_clnt_conn_reply(struct rpc_conn *conn, const uint8_t *msg, size_t len)
{
	if (rpc_clnt_elsewhere())
		return rpc_clnt_hop_send(conn, NULL, msg, len) == 0;
	if (!conn->clnt)
		return false;
	rpc_clnt_reply(conn->clnt, msg, len);
	return true;
}

/* The connection's loop, its close hook: on clnt_loop, at once or through a hop. */
static void rpc_clnt_conn_closed(struct rpc_conn *conn, struct rpc_conn_hook *h)
{
	struct rpc_clnt *cl = container_of(h, struct rpc_clnt, conn_hook);

	if (rpc_clnt_elsewhere())
		(void)rpc_clnt_hop_send(conn, cl, NULL, 0); /* no memory: its calls time out */
	else
		rpc_clnt_conn_lost(cl, conn);
}

int rpc_clnt_attach(struct rpc_clnt *cl, struct rpc_conn *conn)
{
	if (!conn->xprt->ops->send_call || conn->clnt)
		return -1;
	cl->conn_hook.closed = rpc_clnt_conn_closed;
	if (!rpc_conn_hook_add(conn, &cl->conn_hook))
		return -1;
	rpc_conn_get(conn);
	/* One call at a time until the owner or the transport says more (RFC
	 * 8167 §4: no reverse-direction credits are granted before a reply;
	 * NFSv4.1: the backchannel's slot count). */
	if (!cl->window)
		cl->window = 1;
	cl->conn = conn;
	cl->send = rpc_clnt_conn_send;
	conn->clnt = cl;
	return 0;
}

void rpc_clnt_detach(struct rpc_clnt *cl)
{
	struct rpc_conn *conn = cl->conn;

	if (!conn)
		return;
	rpc_conn_hook_remove(conn, &cl->conn_hook);
	if (conn->clnt == cl)
		conn->clnt = NULL;
	cl->conn = NULL;
	rpc_conn_put(conn);
}
